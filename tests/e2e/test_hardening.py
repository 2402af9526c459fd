"""Hardening (issue 10): one test per failure an adversarial test found, against real xladbd and xladb processes
on 127.0.0.1 and a Python grpcio client. docs/RELIABILITY.md lists each case with its test here.

Run by ctest like test_service.py (same environment variables). Every request loop is bounded in count and time;
every server listens on loopback.
"""
import concurrent.futures
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import tarfile
import threading
import time
import unittest

from test_service import XLADB, XLADBD, Client, DaemonTestCase, make_run, seed, wait_for, xladb_pb2

import grpc  # noqa: E402

# The daemon's peak RSS under the adversarial queries of this file must stay below this (docs/RELIABILITY.md).
# The plain build checks the bound itself (it peaks at 194–242 MiB in the upload load test). Under
# AddressSanitizer its shadow memory and its quarantine of freed blocks (256 MB by default) count in the RSS
# too: the same test peaked at 904–1,011 MiB alone and 1,041–1,092 MiB inside a parallel CI run, with today's
# build and with 9cf6669's alike (2026-11-27), so that build checks three times the bound: still far below
# what an uncapped query or upload reaches (several GiB).
RSS_BOUND_BYTES = (512 << 20) * (3 if os.environ.get("XLADB_SANITIZED") == "1" else 1)

SEED000_NAME = "module_0001.jit_splash_attention_kernel.after_optimizations-buffer-assignment.txt"


# --- raw protobuf encoding, for messages the Python protobuf library refuses to build (invalid UTF-8) ---------

def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number, payload):
    """A length-delimited field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def raw_file_chunk(path_bytes, data):
    """An UploadChunk whose FileChunk.path (a proto string) holds `path_bytes` as they are."""
    return _field(2, _field(1, path_bytes) + _field(2, data))


def chunk_bytes(message):
    return message.SerializeToString()


def raw_upload(channel, chunks, timeout=30):
    call = channel.stream_unary("/xladb.v1.IngestService/Upload", request_serializer=lambda b: b,
                                response_deserializer=xladb_pb2.IngestJob.FromString)
    return call(iter(chunks), timeout=timeout)


def upload_messages(run_name, files, trailer=True, **header):
    """UploadChunk messages for (path, data) files, with a trailer that counts them."""
    yield xladb_pb2.UploadChunk(header=xladb_pb2.UploadHeader(run_name=run_name, wait=True, **header))
    for path, data in files:
        key = "raw_path" if isinstance(path, bytes) else "path"
        yield xladb_pb2.UploadChunk(file=xladb_pb2.FileChunk(data=data, **{key: path}))
    if trailer:
        yield xladb_pb2.UploadChunk(trailer=xladb_pb2.UploadTrailer(
            files=len(files), bytes=sum(len(d) for _, d in files)))


def peak_rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def sql_rows(db, sql, args=()):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def seed_with_allocation_zero_twice():
    with open(seed("000"), "rb") as f:
        text = f.read()
    at = text.index(b"\nallocation 0:")
    end = text.index(b"\n", at + 1)
    return text[:end + 1] + text[at + 1:end + 1] + text[end + 1:]


class HardeningTest(DaemonTestCase):
    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    # 1. Uploads silently lost files --------------------------------------------------------------------------

    def test_1_a_file_name_that_is_not_utf8_is_uploaded_with_the_rest(self):
        root = self.path("d").encode()
        os.makedirs(os.path.join(root, b"a"))
        make_run(self.path("d", "b"), copies=5)  # 15 buffer assignments and 2 other files
        shutil.copy(seed("000"), os.path.join(root, b"a", b"\xff.txt"))
        sent = sum(len(files) for _, _, files in os.walk(root))
        self.assertEqual(sent, 18)
        d = self.start()
        out = d.cli("ingest", self.path("d"), "--run", "r")
        self.assertIn("SUCCEEDED", out.stdout)
        self.assertIn(f"{sent} files of {sent} received", out.stdout)
        paths = [p for (p,) in sql_rows(d.db, "SELECT CAST(path AS BLOB) FROM dump_files f JOIN runs r USING (run_id) "
                                              "WHERE r.name = 'r'")]
        self.assertEqual(len(paths), sent)
        self.assertIn(b"a/\xff.txt", paths)  # stored byte for byte
        # A tar holding such a member name.
        tar_path = self.path("r2.tar")
        with tarfile.open(tar_path, "w", format=tarfile.PAX_FORMAT, encoding="utf-8", errors="surrogateescape") as t:
            t.add(os.path.join(root, b"a", b"\xff.txt").decode("utf-8", "surrogateescape"),
                  arcname=b"\xff.txt".decode("utf-8", "surrogateescape"))
            t.add(self.path("d", "b"), arcname="b")
        out = d.cli("ingest", tar_path, "--run", "r2")
        self.assertIn("SUCCEEDED", out.stdout)
        (count,) = sql_rows(d.db, "SELECT COUNT(*) FROM dump_files f JOIN runs r USING (run_id) WHERE r.name = 'r2'")[0]
        self.assertEqual(count, 18)

    def test_1_a_chunk_the_server_cannot_read_fails_the_whole_upload(self):
        spool = self.path("spool")
        d = self.start("--spool-dir", spool)
        with open(seed("000"), "rb") as f:
            data = f.read()
        chunks = [chunk_bytes(xladb_pb2.UploadChunk(header=xladb_pb2.UploadHeader(run_name="r", wait=True))),
                  chunk_bytes(xladb_pb2.UploadChunk(file=xladb_pb2.FileChunk(path="b/" + SEED000_NAME, data=data))),
                  raw_file_chunk(b"a/\xff.txt", data),  # a proto string that is not UTF-8: unreadable
                  chunk_bytes(xladb_pb2.UploadChunk(file=xladb_pb2.FileChunk(path="c/x.txt", data=data))),
                  chunk_bytes(xladb_pb2.UploadChunk(trailer=xladb_pb2.UploadTrailer(files=3, bytes=3 * len(data))))]
        with self.assertRaises(grpc.RpcError) as err:
            raw_upload(d.channel, chunks)
        self.assertEqual(err.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("without its UploadTrailer", err.exception.details())
        self.assertIn("b/" + SEED000_NAME, err.exception.details())  # the last file that arrived
        self.assertEqual(list(d.client.list_runs(timeout=10).runs), [])
        wait_for(lambda: os.listdir(spool) == [], timeout=10, what="the refused upload's staging to go")
        # The same file name sent as raw_path bytes is stored.
        job = d.client.upload_chunks(upload_messages("r", [(b"a/\xff.txt", data)]), timeout=30)
        self.assertEqual(job.state, xladb_pb2.IngestJob.SUCCEEDED)
        self.assertEqual(job.files_received, 1)
        self.assertEqual(job.files_by_verdict["ingested"], 1)
        # A trailer that disagrees with what arrived is refused too.
        with self.assertRaises(grpc.RpcError) as err:
            msgs = list(upload_messages("r3", [("x.txt", data)], trailer=False))
            msgs.append(xladb_pb2.UploadChunk(trailer=xladb_pb2.UploadTrailer(files=2, bytes=len(data))))
            d.client.upload_chunks(iter(msgs), timeout=30)
        self.assertEqual(err.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("client sent 2 files", err.exception.details())

    # 2. Text that isn't UTF-8 broke reads ----------------------------------------------------------------------

    def test_2_query_sends_bytes_that_are_not_utf8_as_bytes(self):
        d = self.start()
        out = d.cli("sql", "SELECT 1 AS a, x'ff' AS b UNION ALL SELECT 2, 'ok'", "--format", "csv")
        self.assertEqual(out.stdout.splitlines(), ["a,b", "1,\\xff", "2,ok"])
        out = d.cli("sql", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 2000) "
                           "SELECT x, CAST(x'ff41' AS TEXT) AS t FROM c", "--format", "csv")
        lines = out.stdout.splitlines()
        self.assertEqual(len(lines), 2001)
        self.assertEqual(lines[-1], "2000,\\xffA")
        rows = [r for m in d.client.query(sql="SELECT x'ff', CAST(x'ff41' AS TEXT), 'é'", timeout=10) for r in m.rows]
        self.assertEqual(rows[0].values[0].bytes_value, b"\xff")
        self.assertEqual(rows[0].values[1].text_bytes_value, b"\xffA")  # TEXT, told apart from a BLOB
        self.assertEqual(rows[0].values[2].text_value, "é")

    def test_2_a_watched_folder_whose_name_is_not_utf8_does_not_break_listing(self):
        root = self.path("artifacts").encode()
        os.makedirs(root)
        staging = self.path("staging", "x")
        make_run(staging)
        shutil.move(staging, os.path.join(root, b"poison\xffrun"))
        db = self.path("x.db")
        d = self.start("--watch", self.path("artifacts"), "--quiet-seconds", "0.3", db=db)
        runs = wait_for(lambda: d.client.list_runs(timeout=10).runs, what="the run")
        self.assertEqual(runs[0].name, "poison\ufffdrun")
        self.assertEqual(sql_rows(db, "SELECT CAST(name AS BLOB) FROM runs"), [(b"poison\xffrun",)])
        self.assertIn("poison\ufffdrun", d.cli("runs").stdout)
        d.stop()
        self.daemons.remove(d)
        d = self.start(db=db)  # and after a restart
        self.assertEqual([r.name for r in d.client.list_runs(timeout=10).runs],
                         ["poison\ufffdrun"])
        # The name as sent is not the name stored (that is queryable through SQL): a clean NOT_FOUND, no crash.
        with self.assertRaises(grpc.RpcError) as err:
            d.client.list_modules(run_name="poison\ufffdrun", timeout=10)
        self.assertEqual(err.exception.code(), grpc.StatusCode.NOT_FOUND)

    def test_2_the_cli_does_not_hang_on_a_stream_it_cannot_read(self):
        # A fake QueryService that sends rows whose text is not UTF-8, and never ends its stream properly.
        column = _field(1, _field(1, b"t"))
        bad_row = _field(2, _field(1, _field(3, b"\xff")))

        def query(request, context):
            yield column + bad_row
            for _ in range(5000):
                if not context.is_active():
                    return
                yield bad_row

        handler = grpc.method_handlers_generic_handler("xladb.v1.QueryService", {
            "Query": grpc.unary_stream_rpc_method_handler(query, request_deserializer=lambda b: b,
                                                          response_serializer=lambda b: b)})
        server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=2))
        server.add_generic_rpc_handlers((handler,))
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        try:
            t0 = time.time()
            out = subprocess.run([XLADB, "sql", "SELECT 1", "--addr", f"127.0.0.1:{port}"], capture_output=True,
                                 text=True, timeout=60)
            self.assertEqual(out.returncode, 1, out.stderr)
            self.assertIn("cut short", out.stderr)
            self.assertLess(time.time() - t0, 30)
        finally:
            server.stop(0)

    # 3. A second daemon shared a busy port ---------------------------------------------------------------------

    def test_3_a_busy_port_is_exit_1_address_in_use(self):
        d = self.start()
        out = subprocess.run([XLADBD, "--db", self.path("other.db"), "--listen", d.addr], capture_output=True,
                             text=True, timeout=60)
        self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
        # One clear line, without gRPC's error dump before it.
        self.assertEqual(out.stderr.splitlines(), [f"xladbd: cannot listen on {d.addr}: address in use"])
        self.assertNotIn("listening", out.stdout)

    # 4. Query memory had no cap --------------------------------------------------------------------------------

    def test_4_queries_are_bounded_per_value_per_message_and_in_temp_storage(self):
        d = self.start("--query-max-temp-bytes", str(16 << 20))
        with self.assertRaises(grpc.RpcError) as err:
            list(d.client.query(sql="SELECT hex(zeroblob(499000000))", timeout=30))
        self.assertEqual(err.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertIn("value", err.exception.details())

        def big_value(_):
            try:
                list(d.client.query(sql="SELECT length(hex(zeroblob(300000000)))", timeout=60))
                return grpc.StatusCode.OK
            except grpc.RpcError as e:
                return e.code()
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            codes = list(pool.map(big_value, range(4)))
        self.assertEqual(codes, [grpc.StatusCode.RESOURCE_EXHAUSTED] * 4)

        # 20 MB of results reach a client with gRPC's default 4 MiB receive limit: messages are cut by bytes.
        with Client(d.addr, options=[("grpc.max_receive_message_length", 4 << 20)]) as small_messages:
            messages = list(small_messages.query(
                sql="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 20000) "
                    "SELECT x, randomblob(1000) FROM c", timeout=60))
        rows = [r for m in messages for r in m.rows]
        self.assertEqual(len(rows), 20000)
        self.assertTrue(all(len(r.values[1].bytes_value) == 1000 for r in rows))
        self.assertTrue(messages[-1].last)
        self.assertLess(max(m.ByteSize() for m in messages), (1 << 20) + 64 * 1024)
        # A row is bounded too: SQLite builds a whole row at once, so wide rows of big values are refused.
        with self.assertRaises(grpc.RpcError) as err:
            list(d.client.query(sql="SELECT " + ", ".join(["randomblob(1000000)"] * 5), timeout=30))
        self.assertEqual(err.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertIn("per-row", err.exception.details())
        with self.assertRaises(grpc.RpcError) as err:
            list(d.client.query(sql="SELECT " + ", ".join(["1"] * 100), timeout=30))
        self.assertEqual(err.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("too many columns", err.exception.details())
        out = d.cli("sql", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 20000) "
                           "SELECT x, hex(randomblob(1000)) FROM c", "--format", "csv")
        self.assertEqual(len(out.stdout.splitlines()), 20001)

        # A sort that spills more than the temp-storage cap stops with a clear error.
        with self.assertRaises(grpc.RpcError) as err:
            list(d.client.query(
                sql="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 400000) "
                    "SELECT x, randomblob(200) AS b FROM c ORDER BY b", timeout=60))
        self.assertEqual(err.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertIn("temp", err.exception.details())
        self.assertLess(peak_rss(d.proc.pid), RSS_BOUND_BYTES)

    # 5. Archive expansion had no bound -------------------------------------------------------------------------

    def test_5_an_archive_bomb_is_refused_early_naming_the_cap(self):
        allowed = self.path("allowed")
        os.makedirs(allowed)
        bomb = os.path.join(allowed, "bomb.tar.zst")
        out_file = open(bomb, "wb")
        zstd = subprocess.Popen(["zstd", "-1", "-q", "-c"], stdin=subprocess.PIPE, stdout=out_file)

        class Zeros:
            def __init__(self, n):
                self.left = n

            def read(self, size=-1):
                size = self.left if size < 0 else min(size, self.left)
                self.left -= size
                return bytes(size)

        with tarfile.open(fileobj=zstd.stdin, mode="w|") as t:
            t.add(seed("000"), arcname=SEED000_NAME)
            info = tarfile.TarInfo("zeros.txt")
            info.size = 4 << 30
            t.addfile(info, Zeros(info.size))
        zstd.stdin.close()
        self.assertEqual(zstd.wait(), 0)
        out_file.close()
        self.assertLess(os.path.getsize(bomb), 1 << 20)
        spool = self.path("spool")
        d = self.start("--allow-root", allowed, "--spool-dir", spool)
        t0 = time.time()
        out = d.cli("ingest", bomb, "--server-path", "--run", "bomb", check=False)
        self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
        self.assertIn("ratio", out.stderr)
        self.assertLess(time.time() - t0, 120)
        # What came before the bomb is stored; nothing is left spooled.
        self.assertEqual(sql_rows(d.db, "SELECT COUNT(*) FROM allocations")[0][0], 8)
        self.assertEqual([n for n in os.listdir(spool) if not n.startswith(".")], [])
        # The client refuses to upload it too, before sending anything.
        out = d.cli("ingest", bomb, "--run", "bomb-upload", check=False)
        self.assertEqual(out.returncode, 1)
        self.assertIn("nothing of", out.stderr)
        self.assertEqual(sql_rows(d.db, "SELECT COUNT(*) FROM runs WHERE name = 'bomb-upload'")[0][0], 0)

    # 6. Upload staging leaked ----------------------------------------------------------------------------------

    def test_6_a_path_part_over_255_bytes_is_invalid_and_leaves_nothing_staged(self):
        spool = self.path("spool")
        d = self.start("--spool-dir", spool)
        with self.assertRaises(grpc.RpcError) as err:
            d.client.upload_chunks(upload_messages("r", [("a" * 300 + "/x.txt", b"x")]), timeout=30)
        self.assertEqual(err.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("255", err.exception.details())
        # A first file with no name at all is checked like any other (it once slipped past the check).
        with self.assertRaises(grpc.RpcError) as err:
            d.client.upload_chunks(upload_messages("r", [("", b"x")]), timeout=30)
        self.assertEqual(err.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("is empty", err.exception.details())
        self.assertEqual(os.listdir(spool), [])
        self.assertIsNone(d.proc.poll(), "the daemon is still running")

    def test_6_staging_is_removed_after_a_failed_job_and_after_sigkill(self):
        spool = self.path("spool")
        db = self.path("x.db")
        d = self.start("--spool-dir", spool, db=db)
        first, second = self.path("u1", "run"), self.path("u2", "run")
        make_run(first)
        os.makedirs(second)
        shutil.copy(seed("002"), os.path.join(second, SEED000_NAME))
        self.assertIn("SUCCEEDED", d.cli("ingest", first, "--run", "shared").stdout)
        out = d.cli("ingest", second, "--run", "shared", check=False)  # other content, no --append: FAILED
        self.assertEqual(out.returncode, 1)
        self.assertIn("FAILED", out.stdout)
        self.assertIn("--append", out.stderr)
        self.assertEqual(os.listdir(spool), [])

        # SIGKILL in the middle of an upload: the next start removes what was staged.
        started = threading.Event()

        def slow_upload():
            yield xladb_pb2.UploadChunk(header=xladb_pb2.UploadHeader(run_name="killed", wait=True))
            for i in range(200):
                yield xladb_pb2.UploadChunk(file=xladb_pb2.FileChunk(path=f"f{i}.txt", data=b"x" * 100000))
                if i == 5:
                    started.set()
                time.sleep(0.05)

        result = {}

        def run():
            try:
                d.client.upload_chunks(slow_upload(), timeout=60)
            except grpc.RpcError as e:
                result["code"] = e.code()

        t = threading.Thread(target=run)
        t.start()
        self.assertTrue(started.wait(30))
        wait_for(lambda: any(n.startswith("upload-") for n in os.listdir(spool)), timeout=30,
                 what="the upload to be staged")
        d.proc.kill()
        d.proc.wait()
        t.join(60)
        self.assertEqual(result.get("code"), grpc.StatusCode.UNAVAILABLE)
        self.daemons.remove(d)
        d.client.close()
        d = self.start("--spool-dir", spool, db=db)
        self.assertEqual(os.listdir(spool), [])
        self.assertEqual([r.name for r in d.client.list_runs(timeout=10).runs], ["shared"])

    # 7. One file failed a whole job ----------------------------------------------------------------------------

    def test_7_one_bad_file_fails_alone_and_multi_host_modules_are_distinct(self):
        run = self.path("run")
        os.makedirs(os.path.join(run, "bad"))
        with open(os.path.join(run, "bad", SEED000_NAME), "wb") as f:
            f.write(seed_with_allocation_zero_twice())
        for host in ("host0", "host1"):
            os.makedirs(os.path.join(run, host))
            shutil.copy(seed("000"), os.path.join(run, host, SEED000_NAME))
        make_run(os.path.join(run, "z-after"))  # sorted after the bad file: still ingested
        d = self.start()
        out = d.cli("ingest", run, check=False)
        self.assertEqual(out.returncode, 1)  # a file with an error verdict
        self.assertIn("SUCCEEDED", out.stdout)
        self.assertIn("UNIQUE constraint failed: allocations", out.stderr)
        self.assertIn("1 error", out.stdout)
        modules = d.cli_json("modules", "run", "--name", "jit_splash_attention_kernel")
        with_memory = sorted((m["folder"], m["total_bytes"]) for m in modules if m["total_bytes"] is not None)
        self.assertEqual(with_memory, [("host0", 18629632), ("host1", 18629632), ("z-after", 18629632)])
        # Each host's module can be asked for; the answer says which module it is.
        top = d.cli("top", "run", "jit_splash_attention_kernel", "--folder", "host1", "-n", "2", "--format", "csv")
        self.assertEqual(len(top.stdout.splitlines()), 3)
        self.assertIn("xla id 1, folder host1", top.stderr)

    # 8. The path check was made at request time only -----------------------------------------------------------

    def test_8_a_symlink_swapped_in_while_the_job_waits_is_refused(self):
        allowed = self.path("allowed")
        outside = self.path("outside")
        make_run(outside)
        os.makedirs(allowed)
        for attempt, copies in enumerate((200, 600, 1500)):
            db = self.path(f"x{attempt}.db")
            d = self.start("--allow-root", allowed, db=db)
            slow = os.path.join(allowed, f"slow{attempt}")
            make_run(slow, copies=copies)
            target = os.path.join(allowed, f"small{attempt}")
            make_run(target)
            first = d.client.ingest_path(path=slow, timeout=30)
            second = d.client.ingest_path(path=target, run_name="swapped", timeout=30)
            shutil.rmtree(target)
            os.symlink(outside, target)
            state = d.client.get_ingest_job(job_id=second.job_id, timeout=10).state
            if state != xladb_pb2.IngestJob.QUEUED:  # the swap came too late to test anything: retry, slower
                continue
            job = wait_for(lambda: (lambda j: j if j.state in (xladb_pb2.IngestJob.SUCCEEDED,
                                                               xladb_pb2.IngestJob.FAILED) else None)(
                d.client.get_ingest_job(job_id=second.job_id, timeout=10)),
                timeout=300, what="the swapped job to end")
            self.assertEqual(job.state, xladb_pb2.IngestJob.FAILED)
            self.assertIn("outside the allowed root", job.message)
            self.assertNotIn(outside, job.message)
            self.assertEqual(sql_rows(db, "SELECT COUNT(*) FROM runs WHERE name = 'swapped'")[0][0], 0)
            self.assertTrue(first.job_id)
            return
        self.fail("the first job always finished before the swap: could not test the use-time check")

    # 9. The error told files outside the roots apart -----------------------------------------------------------

    def test_9_outside_the_roots_and_missing_are_one_answer(self):
        allowed = self.path("allowed")
        os.makedirs(allowed)
        d = self.start("--allow-root", allowed)
        answers = []
        for path in ("/etc/shadow", "/root/nonexistent-xladb-test", "/etc"):
            with self.assertRaises(grpc.RpcError) as err:
                d.client.ingest_path(path=path, wait=True, timeout=10)
            answers.append((err.exception.code(), err.exception.details().replace(path, "PATH")))
            self.assertNotIn("resolved", err.exception.details())
        self.assertEqual(len(set(answers)), 1, answers)
        self.assertEqual(answers[0][0], grpc.StatusCode.PERMISSION_DENIED)
        # Beneath the root, a missing path may say so: the caller may read there.
        with self.assertRaises(grpc.RpcError) as err:
            d.client.ingest_path(path=os.path.join(allowed, "nope"), wait=True, timeout=10)
        self.assertEqual(err.exception.code(), grpc.StatusCode.NOT_FOUND)

    # 10. An open listen address started without protection ----------------------------------------------------

    def test_10_a_listen_address_that_is_not_loopback_needs_tls_and_a_token(self):
        out = subprocess.run([XLADBD, "--db", self.path("x.db"), "--listen", "0.0.0.0:0"], capture_output=True,
                             text=True, timeout=60)
        self.assertEqual(out.returncode, 2)
        self.assertIn("--insecure-listen", out.stderr)
        proc = subprocess.Popen([XLADBD, "--db", self.path("y.db"), "--listen", "0.0.0.0:0", "--insecure-listen"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            self.assertIn("listening on", proc.stdout.readline())
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=60)
        self.assertIn("warn", err)
        self.assertIn("anyone who can reach it", err)
        help_text = subprocess.run([XLADBD, "--help"], capture_output=True, text=True, timeout=30).stdout
        for default in ("127.0.0.1:50051", "30000", "1048576"):
            self.assertIn(default, help_text)

    # 11. The CLI had no deadline -------------------------------------------------------------------------------

    def test_11_a_server_that_does_not_answer_ends_the_cli_with_a_message(self):
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # accepts connections (the kernel does) and never answers
        addr = f"127.0.0.1:{silent.getsockname()[1]}"
        try:
            t0 = time.time()
            out = subprocess.run([XLADB, "runs", "--addr", addr, "--timeout", "2"], capture_output=True, text=True,
                                 timeout=60)
            self.assertEqual(out.returncode, 1)
            self.assertIn(f"xladbd at {addr} did not answer in 2 s", out.stderr)
            self.assertLess(time.time() - t0, 20)
        finally:
            silent.close()
        d = self.start()
        os.kill(d.proc.pid, signal.SIGSTOP)  # a daemon that is there but stuck
        try:
            out = subprocess.run([XLADB, "sql", "SELECT 1", "--addr", d.addr, "--timeout", "2"], capture_output=True,
                                 text=True, timeout=60)
            self.assertEqual(out.returncode, 1)
            self.assertIn("did not answer in 2 s", out.stderr)
        finally:
            os.kill(d.proc.pid, signal.SIGCONT)

    # 12. Runs merged silently ----------------------------------------------------------------------------------

    def test_12_default_dump_folder_names_take_their_parents_name(self):
        for job in ("job-1", "job-2"):
            make_run(self.path(job, "xla_dump"))
        d = self.start()
        for job in ("job-1", "job-2"):
            self.assertIn(f"run {job}:", d.cli("ingest", self.path(job, "xla_dump")).stdout)
        runs = {r["run"]: r["modules"] for r in d.cli_json("runs")}
        self.assertEqual(runs, {"job-1": 3, "job-2": 3})

    def test_12_another_source_or_other_content_needs_append(self):
        allowed = self.path("allowed")
        make_run(os.path.join(allowed, "a"))
        os.makedirs(os.path.join(allowed, "b"))
        shutil.copy(seed("000"), os.path.join(allowed, "b", "module_0077.jit_other.after_optimizations-buffer-assignment.txt"))
        d = self.start("--allow-root", allowed)
        d.cli("ingest", os.path.join(allowed, "a"), "--server-path", "--run", "nightly")
        out = d.cli("ingest", os.path.join(allowed, "b"), "--server-path", "--run", "nightly", check=False)
        self.assertEqual(out.returncode, 1)
        self.assertIn(os.path.join(allowed, "a"), out.stderr)  # names the run's source
        self.assertIn("--append", out.stderr)
        self.assertEqual(d.cli_json("runs")[0]["modules"], 3)
        d.cli("ingest", os.path.join(allowed, "b"), "--server-path", "--run", "nightly", "--append")
        self.assertEqual(d.cli_json("runs")[0]["modules"], 4)
        # Uploads: the same content again is a retry (unchanged); other content needs --append.
        self.assertIn("SUCCEEDED", d.cli("ingest", os.path.join(allowed, "a"), "--run", "up").stdout)
        again = d.cli("ingest", os.path.join(allowed, "a"), "--run", "up")
        self.assertIn("5 unchanged", again.stdout)
        other = d.cli("ingest", os.path.join(allowed, "b"), "--run", "up", check=False)
        self.assertEqual(other.returncode, 1)
        self.assertIn("--append", other.stderr)

    def test_12_run_names_are_validated(self):
        make_run(self.path("r"))
        d = self.start()
        for name in ("a\x01b", " ", "x" * 201):
            out = d.cli("ingest", self.path("r"), "--run", name, check=False)
            self.assertEqual(out.returncode, 2, name)
            with self.assertRaises(grpc.RpcError) as err:
                d.client.upload_chunks(upload_messages(name, [("x.txt", b"x")]), timeout=30)
            self.assertEqual(err.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, name)
        self.assertEqual(d.cli_json("runs"), [])

    # Smaller items ---------------------------------------------------------------------------------------------

    def test_sql_comments_read_only_pragmas_and_malformed_requests(self):
        d = self.start()
        self.assertEqual(d.cli("sql", "SELECT 1 AS one; -- a comment", "--format", "csv").stdout.splitlines(),
                         ["one", "1"])
        names = d.cli("sql", "SELECT name FROM pragma_table_info('runs') ORDER BY cid", "--format", "csv").stdout
        self.assertEqual(names.splitlines()[:3], ["name", "run_id", "name"])
        for call, request in ((d.client.list_runs, dict(page_size=-1)),
                              (d.client.list_runs, dict(page_size=5000)),
                              (d.client.top_buffers, dict(run_name="r", module="m", n=-5)),
                              (d.client.spill_rates, dict(limit=-1)),
                              (d.client.peak_memory_trend, dict(module="m", last_n=-1)),
                              (d.client.get_run, dict())):
            with self.assertRaises(grpc.RpcError) as err:
                call(**request, timeout=10)
            self.assertEqual(err.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, (call.__name__, request))
        with self.assertRaises(grpc.RpcError) as err:
            list(d.client.query(sql="SELECT 1", max_rows=-1, timeout=10))
        self.assertEqual(err.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        for args in (("runs", "--limit", "-1"), ("sql", "SELECT 1", "--max-rows", "-3"), ("top", "r", "m", "-n", "0")):
            self.assertEqual(d.cli(*args, check=False).returncode, 2, args)

    # The load test: adversarial queries while uploads run ------------------------------------------------------

    def test_adversarial_queries_during_uploads_keep_rss_bounded_and_lose_no_upload(self):
        folder = self.path("up")
        make_run(folder, copies=4)  # 12 buffer assignments and 2 other files
        expected_files = len(os.listdir(folder))
        d = self.start("--query-max-temp-bytes", str(32 << 20))
        stop = time.time() + 20
        adversarial = [
            "SELECT hex(zeroblob(499000000))",
            "SELECT length(hex(zeroblob(300000000)))",
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 400000) "
            "SELECT x, randomblob(200) AS b FROM c ORDER BY b",
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5000) SELECT x, randomblob(1000) FROM c",
            "SELECT group_concat(hex(randomblob(1000))) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
            "SELECT x + 1 FROM c LIMIT 100000) SELECT x FROM c)",
        ]
        codes = {}
        lock = threading.Lock()

        def attacker(i):
            n = 0
            while time.time() < stop and n < 200:
                sql = adversarial[(i + n) % len(adversarial)]
                try:
                    for _ in d.client.query(sql=sql, timeout=60):
                        pass
                    code = grpc.StatusCode.OK
                except grpc.RpcError as e:
                    code = e.code()
                with lock:
                    codes[code] = codes.get(code, 0) + 1
                n += 1

        rss = []

        def sampler():
            while time.time() < stop + 1:
                try:
                    with open(f"/proc/{d.proc.pid}/status") as f:
                        rss.extend(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))
                except OSError:
                    return
                time.sleep(0.1)

        threads = [threading.Thread(target=attacker, args=(i,)) for i in range(6)] + [threading.Thread(target=sampler)]
        for t in threads:
            t.start()
        acknowledged = []
        k = 0
        while time.time() < stop and k < 30:
            out = d.cli("ingest", folder, "--run", f"load-{k}", check=False)
            if out.returncode == 0:
                acknowledged.append(f"load-{k}")
            k += 1
        for t in threads:
            t.join(120)
        self.assertGreater(len(acknowledged), 0, "no upload finished during the load")
        self.assertEqual(set(codes) - {grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED}, set(), codes)
        self.assertGreater(codes.get(grpc.StatusCode.RESOURCE_EXHAUSTED, 0), 0)
        for run in acknowledged:
            files, modules = sql_rows(
                d.db, "SELECT (SELECT COUNT(*) FROM dump_files f WHERE f.run_id = r.run_id AND verdict != 'error'), "
                      "(SELECT COUNT(*) FROM module_memory m WHERE m.run_id = r.run_id) FROM runs r WHERE name = ?",
                (run,))[0]
            self.assertEqual((files, modules), (expected_files, 12), run)
        peak = max(rss + [peak_rss(d.proc.pid)])
        print(f"\nload test: {len(acknowledged)} uploads stored whole, queries {dict((c.name, n) for c, n in codes.items())}, "
              f"daemon peak RSS {peak / 2**20:.0f} MiB (bound {RSS_BOUND_BYTES >> 20} MiB)")
        self.assertLess(peak, RSS_BOUND_BYTES)


if __name__ == "__main__":
    unittest.main()
