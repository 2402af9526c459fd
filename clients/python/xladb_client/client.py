"""Client: one method per RPC of xladb.v1, named after it in snake_case, over one gRPC channel.

The methods are made from the services' descriptors in the generated xladb_pb2 (QueryService.ListRuns is
`list_runs`, IngestService.WatchIngestJob is `watch_ingest_job`), so a new RPC in the proto is a new method
with no code here. Each takes the request's fields as keyword arguments and returns the response message:

    client.list_runs(labels={"branch": "main"}, page_size=10)   -> ListRunsResponse
    client.peak_memory_trend(module="jit_step", metric="TOTAL_BYTES")   (enums by name or number)
    client.query(sql="SELECT …")   -> an iterator of QueryResponse (server-streaming RPCs give iterators)

A field of Label messages also takes a dict ({"branch": "main"}); other message fields take the message or a
dict of its fields. Two keyword arguments are the call's, not the request's: `timeout` (seconds; default the
client's `timeout`) and `metadata` (extra gRPC metadata pairs). `upload(folder, …)` replaces the generic
client-streaming Upload (xladb_client/upload.py); `upload_chunks(chunks)` sends UploadChunk messages as they are.

Errors: a refused or failed call raises grpc.RpcError as gRPC raises it, with .code() (a grpc.StatusCode such
as NOT_FOUND, PERMISSION_DENIED, INVALID_ARGUMENT) and .details() (the server's message); a streamed answer
raises it while it is iterated. A keyword that is not a field of the request raises ValueError (protobuf's).

Thread safety: a Client may be shared between threads; it holds only its gRPC channel, which is thread-safe,
and read-only settings. Close it (close(), or use it as a context manager) to release the channel.
"""
import re

import grpc

from ._proto import health_pb2, health_pb2_grpc, xladb_pb2, xladb_pb2_grpc
from .upload import IdleWatchdog, upload_folder

# The server's largest message (service/query_service.h kMaxMessageBytes): a large query row or trend.
MAX_MESSAGE_BYTES = 64 << 20

STUB_CLASSES = {"QueryService": xladb_pb2_grpc.QueryServiceStub, "IngestService": xladb_pb2_grpc.IngestServiceStub}


def snake_case(name):
    """An RPC's method name: ListRuns -> list_runs, OomReports -> oom_reports."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def rpc_methods():
    """{snake_case name: (service name, method descriptor)} of every RPC of xladb.v1, from the proto."""
    return {snake_case(m.name): (service.name, m)
            for service in xladb_pb2.DESCRIPTOR.services_by_name.values() for m in service.methods}


def _request_fields(descriptor, fields):
    """The keyword arguments of a request, with {key: value} dicts turned into Label lists."""
    out = dict(fields)
    for name, value in fields.items():
        field = descriptor.fields_by_name.get(name)
        if (isinstance(value, dict) and field is not None and field.label == field.LABEL_REPEATED
                and field.message_type is not None and field.message_type.full_name == "xladb.v1.Label"):
            out[name] = [xladb_pb2.Label(key=k, value=v) for k, v in value.items()]
    return out


def _make_rpc_method(service, method):
    request_class = getattr(xladb_pb2, method.input_type.name)

    if method.client_streaming:
        def call(self, requests, timeout=None, metadata=()):
            return self._stub(service, method.name)(requests, timeout=self._deadline(timeout),
                                                    metadata=self._metadata(metadata))
        signature = f"requests: iterator of {method.input_type.name}"
    else:
        def call(self, timeout=None, metadata=(), **fields):
            request = request_class(**_request_fields(method.input_type, fields))
            return self._stub(service, method.name)(request, timeout=self._deadline(timeout),
                                                    metadata=self._metadata(metadata))
        signature = f"**fields of {method.input_type.name}"
    answer = f"an iterator of {method.output_type.name}" if method.server_streaming else method.output_type.name
    call.__name__ = call.__qualname__ = snake_case(method.name)
    call.__doc__ = (f"{service}.{method.name}({signature}, timeout=None, metadata=()) -> {answer}. "
                    "See proto/xladb/v1/xladb.proto and docs/api.md.")
    return call


class Client:
    """A connection to xladbd at `addr` (host:port).

    token: sent as `authorization: Bearer <token>` on every call (xladbd --token-file / --admin-token-file);
      token_file reads it from a file as the CLI's --token-file does (the first line, trailing spaces removed).
    tls_ca: a PEM file of the CA that signed the server's certificate (xladbd --tls-cert); then TLS is used.
    timeout: the default deadline of a call, in seconds (None = none). upload() and wait_for_job() are bounded by
      inactivity instead.
    options: gRPC channel arguments, [(name, value)]; they replace the client's own (a receive limit of
      MAX_MESSAGE_BYTES, the server's largest message).
    """

    def __init__(self, addr="127.0.0.1:50051", token=None, *, token_file=None, tls_ca=None, timeout=60.0,
                 options=()):
        if token_file is not None:
            with open(token_file, encoding="utf-8") as f:
                token = f.readline().rstrip("\r\n ")
        self.addr = addr
        self.timeout = timeout
        self._auth = (("authorization", "Bearer " + token),) if token else ()
        options = list({"grpc.max_receive_message_length": MAX_MESSAGE_BYTES, **dict(options)}.items())
        if tls_ca is not None:
            with open(tls_ca, "rb") as f:
                credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
            self.channel = grpc.secure_channel(addr, credentials, options=options)
        else:
            self.channel = grpc.insecure_channel(addr, options=options)
        self._stubs = {name: stub(self.channel) for name, stub in STUB_CLASSES.items()}

    def close(self):
        self.channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"xladb_client.Client({self.addr!r})"

    def _stub(self, service, method):
        return getattr(self._stubs[service], method)

    def _deadline(self, timeout):
        return self.timeout if timeout is None else timeout

    def _metadata(self, metadata):
        return self._auth + tuple(metadata)

    def health(self, service="", timeout=None):
        """grpc.health.v1 Check: the serving status by name ("SERVING", "NOT_SERVING", …). Needs no token."""
        answer = health_pb2_grpc.HealthStub(self.channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=self._deadline(timeout))
        return health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)

    def upload_chunks(self, chunks, timeout=None, metadata=()):
        """IngestService.Upload as it is: sends the UploadChunk messages of `chunks` (header, file chunks, trailer);
        returns the IngestJob the server answers."""
        return self._stub("IngestService", "Upload")(iter(chunks), timeout=timeout, metadata=self._metadata(metadata))

    def upload(self, folder, run_name, *, labels=None, run_time_us=0, append=False, wait=True, progress=None,
               idle_timeout=None):
        """Uploads every file of `folder` as run `run_name` and returns its IngestJob (the final one with wait).

        As `xladb ingest FOLDER --run NAME` does: each file under the folder (paths relative to it, `/`-separated;
        names that are not UTF-8 go as raw bytes) in chunks of 4 MiB, then a trailer counting files and bytes.
        Files are sent as they are (the server reads .gz/.zst as its folder walk does).
        labels: {key: value}; run_time_us: when the run happened (0 = from a time label, else the newest file's
          mtime); append: add to a run that came from another source.
        wait: follow the job (WatchIngestJob) until it SUCCEEDED or FAILED, and return its last state; else
          return the job as queued.
        progress: called as progress(bytes_sent, bytes_total, files_sent, files_total) once before the first
          chunk and after every chunk gRPC takes, from gRPC's sending thread; an exception it raises stops the
          upload and is raised here.
        idle_timeout: seconds without an accepted chunk or a job update before the upload is abandoned with
          TimeoutError (default: the client's timeout). No bound on the total time.
        A file that cannot be read raises its OSError, and nothing of the upload is stored (no trailer is sent);
        a refusal raises grpc.RpcError.
        """
        idle = self.timeout if idle_timeout is None else idle_timeout
        job = upload_folder(self._stub("IngestService", "Upload"), folder, run_name, labels=labels,
                            run_time_us=run_time_us, append=append, progress=progress, metadata=self._auth,
                            idle_timeout=idle, addr=self.addr)
        return self.wait_for_job(job, idle_timeout=idle) if wait else job

    def wait_for_job(self, job, idle_timeout=None):
        """Follows an IngestJob (or a job id) with WatchIngestJob until it ends; returns its last state.
        Raises TimeoutError when the job reports nothing for idle_timeout seconds (default: the client's timeout;
        the server reports at least every 2 s, so a bound below 10 s is raised to 10 s)."""
        if isinstance(job, xladb_pb2.IngestJob):
            if job.state in (xladb_pb2.IngestJob.SUCCEEDED, xladb_pb2.IngestJob.FAILED):
                return job
            job_id = job.job_id
        else:
            job_id = job
        idle = max(10.0, self.timeout if idle_timeout is None else idle_timeout)
        stream = self._stub("IngestService", "WatchIngestJob")(
            xladb_pb2.GetIngestJobRequest(job_id=job_id), metadata=self._auth)
        last = job if isinstance(job, xladb_pb2.IngestJob) else None
        with IdleWatchdog(stream, idle, f"the ingest job {job_id} at {self.addr} reported nothing") as watchdog:
            for update in watchdog.iterate(stream):
                last = update
        return last


for _name, (_service, _method) in rpc_methods().items():
    if _name not in Client.__dict__:
        setattr(Client, _name, _make_rpc_method(_service, _method))
