"""Uploading a dump folder (IngestService.Upload), framed as the CLI frames it (cli/ingest_command.cc).

The stream is an UploadHeader, then every file under the folder as FileChunks of at most CHUNK_BYTES, then an
UploadTrailer counting the files and content bytes sent. An upload is all or nothing on the server: a stream
that ends without its trailer stores nothing. So a local file that cannot be read (or a progress callback that
raises) ends the stream there, without a trailer, and its exception is raised once the server has refused the
upload.

Bounded by inactivity, not total time, as the CLI is: IdleWatchdog cancels the call when no chunk was taken by
gRPC (and no job update arrived) for its number of seconds, and raises TimeoutError.

Thread safety: gRPC takes the chunks, and so calls `progress`, on a thread of its own; each upload has its
own generator and watchdog, so several uploads may run at once over one channel.
"""
import os
import threading
import time

import grpc

from ._proto import xladb_pb2

CHUNK_BYTES = 4 << 20  # as the CLI's upload buffer


class IdleWatchdog:
    """Cancels `call` (anything with cancel()) when touch() was not called for `seconds` (None: never).
    Used as a context manager; leaving it after it fired raises TimeoutError("<message> for N s")."""

    def __init__(self, call, seconds, message):
        self.call, self.seconds, self.message = call, seconds, message
        self.fired = False
        self._last = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="xladb_client-watchdog", daemon=True)

    def __enter__(self):
        if self.seconds is not None:
            self._thread.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        if self.fired:
            raise TimeoutError(f"{self.message} for {self.seconds:g} s") from exc
        return False

    def touch(self):
        self._last = time.monotonic()

    def iterate(self, stream):
        """The messages of `stream`, touching the watchdog on each."""
        for message in stream:
            self.touch()
            yield message

    def _run(self):
        while not self._stop.wait(min(1.0, self.seconds / 4)):
            if time.monotonic() - self._last > self.seconds:
                self.fired = True
                self.call.cancel()
                return


def list_files(folder):
    """[(path relative to folder as bytes, '/'-separated; its full path; its size)] of every regular file under
    folder, sorted by relative path. Symlinked folders are not entered."""
    root = os.fsencode(folder)
    if not os.path.isdir(root):
        raise NotADirectoryError(f"{folder}: not a folder")
    found = []
    for parent, dirs, names in os.walk(root, onerror=_raise):
        dirs.sort()
        for name in names:
            path = os.path.join(parent, name)
            if os.path.isfile(path):
                rel = os.path.relpath(path, root).replace(os.sep.encode(), b"/")
                found.append((rel, path, os.stat(path).st_size))
    found.sort()
    return found


def _raise(error):
    raise error


def _as_text(raw):
    """A proto string for bytes that may not be UTF-8 (U+FFFD in their place), for messages only."""
    return raw.decode("utf-8", "replace")


class _ChunkStream:
    """The UploadChunk messages of one upload, counting what gRPC has taken; keeps the first local error."""

    def __init__(self, header, files, progress, touch):
        self.header, self.files, self.progress, self.touch = header, files, progress, touch
        self.bytes_total = sum(size for _, _, size in files)
        self.bytes_sent = self.files_sent = 0
        self.error = None

    def _report(self):
        self.touch()
        if self.progress is not None:
            self.progress(self.bytes_sent, self.bytes_total, self.files_sent, len(self.files))

    def __iter__(self):
        try:
            yield xladb_pb2.UploadChunk(header=self.header)
            self._report()
            for rel, path, _ in self.files:
                yield from self._file_chunks(rel, path)
            yield xladb_pb2.UploadChunk(trailer=xladb_pb2.UploadTrailer(files=self.files_sent, bytes=self.bytes_sent))
        except Exception as e:  # noqa: BLE001  the stream ends without its trailer: nothing is stored
            self.error = e

    def _file_chunks(self, rel, path):
        try:
            name = {"path": rel.decode("utf-8")}
        except UnicodeDecodeError:
            name = {"raw_path": rel}  # file names are bytes: stored as they are
        with open(path, "rb") as f:
            mtime_us = os.fstat(f.fileno()).st_mtime_ns // 1000
            data = f.read(CHUNK_BYTES)
            while True:
                self.touch()  # reading here is not the server's silence
                following = f.read(CHUNK_BYTES) if len(data) == CHUNK_BYTES else b""
                yield xladb_pb2.UploadChunk(file=xladb_pb2.FileChunk(data=data, mtime_us=mtime_us, **name))
                self.bytes_sent += len(data)
                if not following:  # an empty file is one empty chunk
                    self.files_sent += 1
                    self._report()
                    return
                self._report()
                data = following


def upload_folder(upload_call, folder, run_name, *, labels, run_time_us, append, progress, metadata, idle_timeout,
                  addr):
    """Streams folder through `upload_call` (the Upload multi-callable) with header.wait false; returns the
    IngestJob the server answers (queued or running). See the module docstring for errors."""
    files = list_files(folder)
    header = xladb_pb2.UploadHeader(
        run_name=run_name, labels=[xladb_pb2.Label(key=k, value=v) for k, v in dict(labels or {}).items()],
        run_time_us=run_time_us, append=append, wait=False,
        # The folder as one spelling of it, so a second upload of the same folder is the same source.
        source=_as_text(os.path.realpath(os.fsencode(folder))))
    watchdog = IdleWatchdog(None, idle_timeout, f"xladbd at {addr} accepted no upload bytes")
    stream = _ChunkStream(header, files, progress, watchdog.touch)
    future = upload_call.future(iter(stream), metadata=metadata)
    watchdog.call = future
    try:
        with watchdog:
            job = future.result()
    except grpc.RpcError:
        if stream.error is not None:
            raise stream.error from None
        raise
    if stream.error is not None:  # the server should have refused a stream without its trailer
        raise stream.error
    return job
