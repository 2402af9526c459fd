"""End-to-end tests of xladbd, the xladb CLI and the Python client (clients/python), as real processes on 127.0.0.1.

Run by ctest (tests/CMakeLists.txt sets XLADBD, XLADB, XLADB_PY_VENV, XLADB_SOURCE_DIR, XLADB_CORPUS_DIR) on the
python of the venv where it installed xladb_client, whose stubs its build generated from proto/. Every server
listens on a free port (--listen 127.0.0.1:0; the daemon prints the port it got).
"""
import fnmatch
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
import unittest

XLADBD = os.environ["XLADBD"]
XLADB = os.environ["XLADB"]
XLADB_LOAD = os.environ.get("XLADB_LOAD", "")
SOURCE_DIR = os.environ["XLADB_SOURCE_DIR"]
CORPUS_DIR = os.environ.get("XLADB_CORPUS_DIR", "")

import grpc  # noqa: E402  (Debian's python3-grpcio)
from xladb_client import Client, reflection_pb2, reflection_pb2_grpc, xladb_pb2  # noqa: E402

SEEDS = os.path.join(SOURCE_DIR, "tests", "data", "seeds")
RUNS_DIR = os.path.join(CORPUS_DIR, "runs")
HAVE_CORPUS = os.path.isdir(RUNS_DIR)


def seed(number):
    return os.path.join(SEEDS, next(f for f in os.listdir(SEEDS) if f.startswith(number + "_")))


def make_run(folder, copies=1):
    """A dump folder with XLA's file names; `copies` > 1 adds more modules (for longer ingests)."""
    os.makedirs(folder, exist_ok=True)
    for i in range(copies):
        suffix = "" if copies == 1 else f"_{i}"
        shutil.copy(seed("000"), os.path.join(
            folder, f"module_{3 * i + 1:04d}.jit_splash_attention_kernel{suffix}.after_optimizations-buffer-assignment.txt"))
        shutil.copy(seed("002"), os.path.join(
            folder, f"module_{3 * i + 2:04d}.jit_train_step{suffix}.after_optimizations-buffer-assignment.txt"))
        shutil.copy(seed("004"), os.path.join(
            folder, f"module_{3 * i + 3:04d}.SyncTensorsGraph.{105 + i}.sm_8.0_gpu_after_optimizations-buffer-assignment.txt"))
    shutil.copy(seed("001"), os.path.join(folder, "1766453541-jit_splash_attention_kernel-00-hlo-static-bundle-profile.txt"))
    shutil.copy(seed("003"), os.path.join(folder, "module_0001.jit_splash_attention_kernel.after_optimizations.txt"))


def arrive_in_watched_folder(tmp, root, name, run_toml):
    """A CI artifact folder `name` (make_run's dumps and an xladb-run.toml holding `run_toml`), made aside and
    moved into the watched folder `root` whole, as a CI job's artifact lands."""
    staging = os.path.join(tmp, "staging", name)
    make_run(staging)
    with open(os.path.join(staging, "xladb-run.toml"), "w") as f:
        f.write(run_toml)
    shutil.move(staging, os.path.join(root, name))


def read_text(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def total_bytes_used(dump_text):
    """`Total bytes used: N` of a buffer-assignment dump."""
    return int(re.search(r"^Total bytes used: (\d+)", dump_text, re.MULTILINE).group(1))


def peak_list_bytes(dump_text):
    """The peak of a buffer-assignment dump, from its text: the sum of the sizes listed under
    `Live ranges at N (peak):` (`name: 4194304 bytes (cumulative: ...)` on TPU, `name: 4194304 bytes` on GPU)."""
    total = 0
    for line in dump_text.split("(peak):\n", 1)[1].splitlines():
        if not line.startswith("    "):
            break
        total += int(re.search(r": (\d+) bytes", line).group(1))
    return total


def corpus_buffer_assignments(run):
    """{module name: [(xla id, total bytes, peak bytes)]} of a corpus run, read from its buffer-assignment dumps
    (named `module_NNNN.<module>.sm_8.0_gpu_after_optimizations-buffer-assignment.txt`), ids ascending."""
    modules = {}
    for folder, _, files in os.walk(os.path.join(RUNS_DIR, run)):
        for name in files:
            if not name.endswith("-buffer-assignment.txt"):
                continue
            parts = re.fullmatch(r"module_(\d{4})\.(.+)\.sm_8\.0_gpu_after_optimizations-buffer-assignment\.txt", name)
            assert parts, name
            text = read_text(os.path.join(folder, name))
            modules.setdefault(parts.group(2), []).append(
                (int(parts.group(1)), total_bytes_used(text), peak_list_bytes(text)))
    for points in modules.values():
        points.sort()
    return modules


class Daemon:
    """An xladbd process on a free port."""

    def __init__(self, db, *args):
        self.db = db
        self.proc = subprocess.Popen([XLADBD, "--db", db, "--listen", "127.0.0.1:0", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.kill()
            raise RuntimeError("xladbd did not start: " + line + self.proc.stderr.read())
        self.addr = line.split("listening on ")[1].split(" ")[0]
        self.client = Client(self.addr)  # with no token; a test that needs one makes its own Client
        self.channel = self.client.channel

    def cli(self, *args, check=True):
        out = subprocess.run([XLADB, *args, "--addr", self.addr], capture_output=True, text=True, timeout=120)
        if check and out.returncode != 0:
            raise AssertionError(f"xladb {' '.join(args)} exited {out.returncode}: {out.stderr}")
        return out

    def cli_json(self, *args):
        return json.loads(self.cli(*args, "--format", "json").stdout)

    def terminate(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=60)

    def stop(self):
        self.client.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc.stdout.close()
        self.proc.stderr.close()


def wait_for(predicate, timeout=60.0, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


PSQL = "/usr/lib/postgresql/15/bin/psql"


def store_counts(db):
    """Row counts of every table of the store (SQLite file or PostgreSQL URI), and the labels as text."""
    if db.startswith("postgresql://"):
        def q(sql):
            out = subprocess.run([PSQL, db, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
                                 capture_output=True, text=True, timeout=60)
            if out.returncode != 0:
                raise AssertionError(f"psql: {out.stderr}")
            return out.stdout.strip()
        tables = q("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
                   "AND table_type = 'BASE TABLE' ORDER BY 1").split()
        counts = {t: int(q(f'SELECT COUNT(*) FROM "{t}"')) for t in tables}
        counts["labels:"] = q("SELECT string_agg(key || '=' || value, ',' ORDER BY key) FROM run_labels")
        return counts
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                            "AND name NOT LIKE 'sqlite_%' ORDER BY 1")]
        counts = {t: con.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
        counts["labels:"] = con.execute("SELECT group_concat(key || '=' || value) FROM "
                                        "(SELECT key, value FROM run_labels ORDER BY key)").fetchone()[0]
        return counts
    finally:
        con.close()


def table_counts(db, run):
    """Row counts per table for one run, read straight from the store: a SQLite file, or a PostgreSQL URI (psql)."""
    if db.startswith("postgresql://"):
        def q(sql):
            # psql substitutes :'run' (quoted) in what it reads, not in -c.
            out = subprocess.run([PSQL, db, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-v", f"run={run}"],
                                 input=sql.replace("?", ":'run'"), capture_output=True, text=True, timeout=60)
            if out.returncode != 0:
                raise AssertionError(f"psql: {out.stderr}")
            value = out.stdout.strip()
            return int(value) if value else None
        close = lambda: None
    else:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        q = lambda sql: con.execute(sql, (run,)).fetchone()[0]
        close = con.close
    counts = {
        "modules": q("SELECT COUNT(*) FROM modules m JOIN runs r USING(run_id) WHERE r.name = ?"),
        "allocations": q("SELECT COUNT(*) FROM allocations a JOIN modules m USING(module_id) "
                         "JOIN runs r USING(run_id) WHERE r.name = ?"),
        "buffer_values": q("SELECT COUNT(*) FROM buffer_values v JOIN modules m USING(module_id) "
                           "JOIN runs r USING(run_id) WHERE r.name = ?"),
        "instructions": q("SELECT COUNT(*) FROM instructions i JOIN modules m USING(module_id) "
                          "JOIN runs r USING(run_id) WHERE r.name = ?"),
        "counters": q("SELECT COUNT(*) FROM kernel_counters WHERE run_name = ?"),
        "files": q("SELECT COUNT(*) FROM dump_files f JOIN runs r USING(run_id) WHERE r.name = ?"),
        "peak_sum": q("SELECT SUM(peak_bytes) FROM module_memory WHERE run_name = ?"),
    }
    close()
    return counts


class DaemonTestCase(unittest.TestCase):
    """A fresh temporary folder per test, and the daemons it started, stopped (and resumed if stopped) after."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="xladb_e2e_")
        self.daemons = []

    def tearDown(self):
        for d in self.daemons:
            try:
                os.kill(d.proc.pid, signal.SIGCONT)  # a test may have left it SIGSTOPped
            except ProcessLookupError:
                pass
            d.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def start(self, *args, db=None):
        d = Daemon(db or os.path.join(self.tmp, "xladb.db"), *args)
        self.daemons.append(d)
        return d

    def start_with_token(self, token, *args):
        """A daemon whose --token-file holds `token`; returns it and the file."""
        token_file = os.path.join(self.tmp, "token")
        with open(token_file, "w") as f:
            f.write(token + "\n")
        return self.start("--token-file", token_file, *args), token_file


class ServiceTest(DaemonTestCase):

    def test_watched_run_folder_is_ingested_and_listed(self):
        root = os.path.join(self.tmp, "artifacts")
        os.makedirs(root)
        d = self.start("--watch", root, "--quiet-seconds", "0.3")
        staging = os.path.join(self.tmp, "staging", "ci-run-17")
        make_run(staging)
        shutil.move(staging, os.path.join(root, "ci-run-17"))
        runs = wait_for(lambda: [r for r in d.cli_json("runs") if r["run"] == "ci-run-17" and r["modules"] == 3],
                        what="the watched run to be ingested")
        self.assertEqual(runs[0]["files"], 5)
        modules = d.cli_json("modules", "ci-run-17")
        self.assertEqual(sorted(m["module"] for m in modules if m["peak_bytes"] is not None),
                         ["SyncTensorsGraph.105", "jit_splash_attention_kernel", "jit_train_step"])
        # A file arriving later in the same run is added to it.
        shutil.copy(seed("000"), os.path.join(root, "ci-run-17",
                                              "module_0099.late_module.after_optimizations-buffer-assignment.txt"))
        wait_for(lambda: [r for r in d.cli_json("runs") if r["run"] == "ci-run-17" and r["modules"] == 4],
                 what="the late file to be added to the run")

    def test_daemon_catches_up_on_start(self):
        root = os.path.join(self.tmp, "artifacts")
        make_run(os.path.join(root, "arrived-while-down"))
        d = self.start("--watch", root, "--quiet-seconds", "0.3")
        wait_for(lambda: any(r["run"] == "arrived-while-down" for r in d.cli_json("runs")), what="catch-up")

    @unittest.skipUnless(HAVE_CORPUS, "shared corpus not present")
    def test_trend_over_two_corpus_runs_matches_the_dump_files(self):
        runs = ("21_lorrax_scan_C", "22_lorrax_scan_cached_C")  # oldest first
        d = self.start("--allow-root", RUNS_DIR)
        for day, run in zip(("2026-07-01", "2026-07-02"), runs):
            out = d.cli("ingest", os.path.join(RUNS_DIR, run), "--server-path", "--time", day)
            self.assertIn("SUCCEEDED", out.stdout)
        dumps = {run: corpus_buffer_assignments(run) for run in runs}
        # The largest module compiled once in each run (the two runs compile the same programs; modules that
        # are compiled several times per run give several points per run and are checked below).
        once = [name for name in dumps[runs[0]] if all(len(dumps[run].get(name, [])) == 1 for run in runs)]
        module = min(once, key=lambda name: (-max(dumps[run][name][0][2] for run in runs), name))
        trend = d.cli_json("trend", module)
        self.assertEqual([(p["run"], p["peak_bytes"]) for p in trend],
                         [(run, dumps[run][module][0][2]) for run in runs])
        self.assertGreater(trend[0]["peak_bytes"], 0)
        # A pattern over modules compiled several times: every (run, module, xla id) point (grouped by identity,
        # so compared as a set), and every point of the newer run changed by 0 against its twin.
        pattern_trend = d.cli_json("trend", "jit__compute_P*", "--metric", "total")
        expected = [(run, xla_id, total) for run in runs for name in sorted(dumps[run])
                    if fnmatch.fnmatchcase(name, "jit__compute_P*") for xla_id, total, _ in dumps[run][name]]
        self.assertEqual(sorted((p["run"], p["xla_id"], p["total_bytes"]) for p in pattern_trend), sorted(expected))
        self.assertEqual({p["change"] for p in pattern_trend if p["run"] == runs[1]}, {0})
        self.assertGreater(len(expected), 2)

    def test_upload_and_ingest_path_store_the_same_rows(self):
        folder = os.path.join(self.tmp, "dumps", "nightly")
        make_run(folder)
        d = self.start("--allow-root", os.path.join(self.tmp, "dumps"))
        up = d.cli("ingest", folder, "--run", "via-upload", "--label", "branch=main")
        self.assertIn("SUCCEEDED", up.stdout)
        ip = d.cli("ingest", folder, "--run", "via-path", "--server-path")
        self.assertIn("SUCCEEDED", ip.stdout)
        self.assertEqual(table_counts(d.db, "via-upload"), table_counts(d.db, "via-path"))
        self.assertEqual(table_counts(d.db, "via-upload")["allocations"], 8 + 14 + 26)
        self.assertEqual(table_counts(d.db, "via-upload")["peak_sum"],
                         sum(peak_list_bytes(read_text(seed(n))) for n in ("000", "002", "004")))
        runs = {r["run"]: r for r in d.cli_json("runs", "--label", "branch=main")}
        self.assertEqual(list(runs), ["via-upload"])
        # The same upload again adds nothing.
        again = d.cli("ingest", folder, "--run", "via-upload")
        self.assertIn("5 unchanged", again.stdout)

    def test_oom_reports_through_the_daemon_and_offline_and_top_on_an_oom_only_module(self):
        # tests/fixtures/oom_run holds one report (module_0042.jit_train_step.oom.txt): the BFC stats before it
        # print `Limit: 15739125760`, then `Out of memory while trying to allocate 1073741824 bytes.`, the stats
        # (`total allocation: 4.75GiB`) and three buffers: 1.00GiB f32[16384,16384] custom-call at model.py:88,
        # 512.00MiB bf16[16384,16384] entry parameter, 384.0KiB (f32[256,128,3], s32[]) fusion at say "hi".py:7.
        d = self.start()
        d.cli("ingest", os.path.join(SOURCE_DIR, "tests", "fixtures", "oom_run"), "--run", "oom")
        rows = d.cli_json("oom", "oom")
        self.assertEqual([(r["report"], r["module"], r["xla_id"], r["failed_allocation_bytes"], r["limit_bytes"],
                           r["total_allocation_bytes"]) for r in rows],
                         [("module_0042.jit_train_step.oom.txt", "jit_train_step.oom", 42, 1073741824, 15739125760,
                           int(4.75 * 2**30))] * 3)
        self.assertEqual([(r["buffer"], r["size_bytes"], r["size"], r["shape"], r["op"], r["source"]) for r in rows],
                         [(1, 2**30, "1.00GiB", "f32[16384,16384]", "custom-call", "/home/user/model.py:88"),
                          (2, 512 * 2**20, "512.00MiB", "bf16[16384,16384]", "parameter", ""),
                          (3, 384 * 2**10, "384.0KiB", "(f32[256,128,3], s32[])", "fusion",
                           '/home/user/say "hi".py:7')])
        # Offline on the same file: the same answer, byte for byte.
        offline = subprocess.run([XLADB, "--db", d.db, "oom", "oom", "--format", "json"], capture_output=True,
                                 text=True, check=True)
        self.assertEqual(offline.stdout, d.cli("oom", "oom", "--format", "json").stdout)
        # The RPC itself: one report, its stats as printed plus the two read around it.
        answer = d.client.oom_reports(run_name="oom")
        self.assertEqual(len(answer.reports), 1)
        self.assertEqual(len(answer.reports[0].stats), 9)
        # `top` on the OOM-only module answers from its report: no -1 placeholders.
        for where in (["--addr", d.addr], ["--db", d.db]):
            top = subprocess.run([XLADB, *where, "top", "oom", "jit_train_step.oom", "--format", "json"],
                                 capture_output=True, text=True, check=True)
            self.assertEqual([r["size_bytes"] for r in json.loads(top.stdout)], [2**30, 512 * 2**20, 384 * 2**10])
            self.assertNotIn("-1", top.stderr)
            self.assertIn("OOM report", top.stderr)
        # `modules` marks the module; an unknown run is an error, a run without reports an empty list.
        self.assertEqual([(m["module"], m["oom_report"]) for m in d.cli_json("modules", "oom")],
                         [("jit_train_step.oom", "yes")])
        self.assertEqual(d.cli("oom", "nosuchrun", check=False).returncode, 1)
        make_run(os.path.join(self.tmp, "plain"))
        d.cli("ingest", os.path.join(self.tmp, "plain"), "--run", "plain")
        self.assertEqual(d.cli_json("oom", "plain"), [])
        self.assertEqual({m["oom_report"] for m in d.cli_json("modules", "plain")}, {""})

    def test_python_client_lists_runs_and_streams_a_query(self):
        folder = os.path.join(self.tmp, "dumps", "py-run")
        make_run(folder)
        d = self.start("--allow-root", os.path.join(self.tmp, "dumps"))
        job = d.client.ingest_path(path=folder, wait=True, timeout=60)
        self.assertEqual(job.state, xladb_pb2.IngestJob.SUCCEEDED)
        self.assertEqual(job.files_by_verdict["ingested"], 5)
        runs = d.client.list_runs(timeout=10)
        self.assertEqual([r.name for r in runs.runs], ["py-run"])
        self.assertEqual(runs.runs[0].module_count, 3)
        responses = list(d.client.query(sql="SELECT module_name, total_bytes FROM module_memory ORDER BY module_name",
                                        timeout=10))
        self.assertEqual([c.name for c in responses[0].columns], ["module_name", "total_bytes"])
        rows = [(r.values[0].text_value, r.values[1].int_value) for m in responses for r in m.rows]
        self.assertIn(("jit_splash_attention_kernel", 18629632), rows)
        self.assertEqual(len(rows), 3)
        top = d.client.top_buffers(run_name="py-run", module="jit_splash_attention_kernel", timeout=10)
        self.assertEqual(len(top.buffers), 11)
        self.assertEqual(top.buffers[0].logical_bytes, 4194304)

    def test_reflection_lists_services_and_health_is_serving(self):
        d = self.start()
        stub = reflection_pb2_grpc.ServerReflectionStub(d.channel)
        answers = list(stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]),
                                                 timeout=10))
        names = {s.name for s in answers[0].list_services_response.service}
        self.assertTrue({"xladb.v1.QueryService", "xladb.v1.IngestService", "grpc.health.v1.Health"} <= names, names)
        self.assertEqual(d.client.health(timeout=10), "SERVING")

    def test_ingest_path_outside_the_allowed_roots_is_refused(self):
        allowed = os.path.join(self.tmp, "allowed")
        outside = os.path.join(self.tmp, "outside")
        make_run(outside)
        os.makedirs(allowed)
        os.symlink(outside, os.path.join(allowed, "escape"))
        d = self.start("--allow-root", allowed)
        for path in (outside, os.path.join(allowed, "..", "outside"), os.path.join(allowed, "escape")):
            with self.assertRaises(grpc.RpcError) as err:
                d.client.ingest_path(path=path, wait=True, timeout=10)
            self.assertEqual(err.exception.code(), grpc.StatusCode.PERMISSION_DENIED, path)
        out = d.cli("ingest", outside, "--server-path", check=False)
        self.assertEqual(out.returncode, 1)
        self.assertIn("is not under an allowed root", out.stderr)
        self.assertNotIn("token", out.stderr)  # the hint about tokens is for token refusals only
        self.assertEqual(d.cli_json("runs"), [])

    def test_query_refuses_writes_and_leaves_the_database_unchanged(self):
        folder = os.path.join(self.tmp, "dumps", "r")
        make_run(folder)
        d = self.start()
        d.cli("ingest", folder)
        before = table_counts(d.db, "r")
        for sql in ("DELETE FROM runs", "DROP TABLE runs", "ATTACH DATABASE '/tmp/x.db' AS x",
                    "PRAGMA journal_mode = DELETE", "SELECT load_extension('x')", "UPDATE runs SET name = 'y'"):
            with self.assertRaises(grpc.RpcError) as err:
                list(d.client.query(sql=sql, timeout=10))
            self.assertIn(err.exception.code(), (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.INVALID_ARGUMENT),
                          sql)
        self.assertEqual(table_counts(d.db, "r"), before)

    def test_token_is_required_when_configured(self):
        d, token_file = self.start_with_token("s3cret-token")
        with self.assertRaises(grpc.RpcError) as err:
            d.client.list_runs(timeout=10)
        self.assertEqual(err.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
        with self.assertRaises(grpc.RpcError) as err:
            d.client.list_runs(timeout=10, metadata=[("authorization", "Bearer wrong-token!")])
        self.assertEqual(err.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
        ok = d.client.list_runs(timeout=10, metadata=[("authorization", "Bearer s3cret-token")])
        self.assertEqual(len(ok.runs), 0)
        self.assertEqual(d.cli("runs", "--token-file", token_file).returncode, 0)

    def test_roles_the_read_token_may_read_and_only_the_admin_token_may_write(self):
        # --token-file is the read token, --admin-token-file the only one that may change the store.
        for name, token in (("read", "reader-token"), ("admin", "admin-token")):
            with open(os.path.join(self.tmp, name), "w") as f:
                f.write(token + "\n")
        root = os.path.join(self.tmp, "root")
        make_run(os.path.join(root, "r1"))
        d = self.start("--token-file", os.path.join(self.tmp, "read"),
                       "--admin-token-file", os.path.join(self.tmp, "admin"), "--allow-root", root)
        reader = [("authorization", "Bearer reader-token")]
        admin = [("authorization", "bearer admin-token")]  # the scheme in any case
        with open(seed("000"), "rb") as f:
            seed_bytes = f.read()

        def upload_chunks(run):
            yield xladb_pb2.UploadChunk(header=xladb_pb2.UploadHeader(run_name=run, wait=True))
            yield xladb_pb2.UploadChunk(file=xladb_pb2.FileChunk(path="a.txt", data=seed_bytes))
            yield xladb_pb2.UploadChunk(trailer=xladb_pb2.UploadTrailer(files=1, bytes=len(seed_bytes)))

        writes = {
            "IngestPath": lambda md: d.client.ingest_path(path=os.path.join(root, "r1"), run_name="by-path",
                                                          wait=True, timeout=60, metadata=md),
            "Upload": lambda md: d.client.upload_chunks(upload_chunks("by-upload"), timeout=60, metadata=md),
            "LabelRun": lambda md: d.client.label_run(run_name="by-path", set={"k": "v"}, timeout=30, metadata=md),
            "PruneDetail": lambda md: d.client.prune_detail(keep_detail_days=0, timeout=60, metadata=md),
            "DeleteRun": lambda md: d.client.delete_run(run_name="by-upload", timeout=30, metadata=md),
        }
        # In this order each write has something to change: the two ingests make the runs that the label,
        # the prune and the delete then change.
        for rpc, call in writes.items():
            with self.subTest(rpc=rpc):
                before = store_counts(d.db)
                for md in (reader, [], [("authorization", "Bearer wrong")]):
                    with self.assertRaises(grpc.RpcError) as err:
                        call(md)
                    self.assertEqual(err.exception.code(), grpc.StatusCode.PERMISSION_DENIED, (rpc, md))
                    if md == reader:
                        self.assertIn("admin token", err.exception.details())
                self.assertEqual(store_counts(d.db), before, f"{rpc} with the read token changed the store")
                call(admin)
                self.assertNotEqual(store_counts(d.db), before, f"{rpc} with the admin token changed nothing")
        self.assertEqual([r.name for r in d.client.list_runs(timeout=10, metadata=reader).runs], ["by-path"])
        # Every read answers the read token and the admin token, and nobody else.
        reads = {
            "ListRuns": lambda md: d.client.list_runs(timeout=10, metadata=md),
            "GetRun": lambda md: d.client.get_run(run_name="by-path", timeout=10, metadata=md),
            "Query": lambda md: list(d.client.query(sql="SELECT count(*) FROM runs", timeout=10, metadata=md)),
        }
        for rpc, call in reads.items():
            with self.subTest(rpc=rpc):
                call(reader)
                call(admin)
                with self.assertRaises(grpc.RpcError) as err:
                    call([])
                self.assertEqual(err.exception.code(), grpc.StatusCode.PERMISSION_DENIED, rpc)
        # The CLI with the read token: reads answer, a write is refused with the reason.
        self.assertEqual(d.cli("runs", "--token-file", os.path.join(self.tmp, "read")).returncode, 0)
        refused = d.cli("delete", "by-path", "--token-file", os.path.join(self.tmp, "read"), check=False)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("admin token", refused.stderr)
        self.assertEqual(d.cli("delete", "by-path", "--token-file", os.path.join(self.tmp, "admin")).returncode, 0)

    def test_one_token_alone_keeps_every_right(self):
        folder = os.path.join(self.tmp, "dumps", "r1")
        make_run(folder)
        d, token_file = self.start_with_token("only-token")
        self.assertEqual(d.cli("ingest", folder, "--token-file", token_file).returncode, 0)
        self.assertEqual(d.cli("label", "r1", "k=v", "--token-file", token_file).returncode, 0)
        self.assertEqual(d.cli("delete", "r1", "--token-file", token_file).returncode, 0)
        self.assertEqual(d.cli_json("runs", "--token-file", token_file), [])

    @unittest.skipUnless(XLADB_LOAD, "xladb_load not built")
    def test_concurrent_queries_during_uploads_see_no_errors(self):
        folder = os.path.join(self.tmp, "dumps", "load-base")
        make_run(folder)
        upload = os.path.join(self.tmp, "dumps", "uploaded")
        make_run(upload, copies=20)
        d = self.start()
        d.cli("ingest", folder)
        out = subprocess.run([XLADB_LOAD, "--addr", d.addr, "--clients", "8", "--seconds", "3",
                              "--max-requests", "20000", "--upload-dir", upload, "--upload-every-ms", "50",
                              "--format", "json"], capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        report = json.loads(out.stdout)
        self.assertEqual(report["errors"], 0)
        self.assertNotIn("locked", out.stderr)
        rpcs = {r["rpc"]: r for r in report["rpcs"]}
        self.assertGreater(rpcs["Upload"]["calls"], 0, "the writer was busy during the load")
        for rpc in ("ListRuns", "PeakMemoryTrend", "SpillRates", "TopBuffers", "DiffRuns", "Query"):
            self.assertGreater(rpcs[rpc]["calls"], 10, rpc)
        # Every upload that answered was stored whole.
        runs = [r for r in d.cli_json("runs") if r["run"].startswith("load-upload-")]
        self.assertEqual(len(runs), rpcs["Upload"]["calls"])
        self.assertTrue(all(r["modules"] == 60 for r in runs), runs)

    def test_upload_limits_and_unsafe_paths_are_refused(self):
        folder = os.path.join(self.tmp, "dumps", "r")
        make_run(folder)
        spool = os.path.join(self.tmp, "spool")
        d = self.start("--max-upload-files", "3", "--max-upload-bytes", "100000", "--spool-dir", spool)
        out = d.cli("ingest", folder, check=False)
        self.assertEqual(out.returncode, 1)
        self.assertIn("more than 3 files", out.stderr)

        def upload(files):
            yield xladb_pb2.UploadChunk(header=xladb_pb2.UploadHeader(run_name="evil", wait=True))
            for path, data in files:
                yield xladb_pb2.UploadChunk(file=xladb_pb2.FileChunk(path=path, data=data))

        cases = [
            ([("a.txt", b"x" * 60000), ("b.txt", b"y" * 60000)], grpc.StatusCode.RESOURCE_EXHAUSTED),
            ([("../escape.txt", b"BufferAssignment:\n")], grpc.StatusCode.INVALID_ARGUMENT),
            ([("/etc/passwd", b"x")], grpc.StatusCode.INVALID_ARGUMENT),
            ([("a/./b.txt", b"x")], grpc.StatusCode.INVALID_ARGUMENT),
        ]
        for files, code in cases:
            with self.assertRaises(grpc.RpcError) as err:
                d.client.upload_chunks(upload(files), timeout=30)
            self.assertEqual(err.exception.code(), code, files[0][0])
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "escape.txt")))
        self.assertEqual(os.listdir(spool), [], "refused uploads leave nothing staged")
        self.assertEqual(d.cli_json("runs"), [])

    def test_tls_when_a_certificate_is_given(self):
        cert, key = os.path.join(self.tmp, "cert.pem"), os.path.join(self.tmp, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                        "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                       check=True, capture_output=True)
        folder = os.path.join(self.tmp, "dumps", "tls-run")
        make_run(folder)
        d = self.start("--tls-cert", cert, "--tls-key", key)
        ok = d.cli("ingest", folder, "--tls-ca", cert)
        self.assertIn("SUCCEEDED", ok.stdout)
        with Client(d.addr, tls_ca=cert) as client:
            self.assertEqual([r.name for r in client.list_runs(timeout=10).runs], ["tls-run"])
        plain = d.cli("runs", check=False)  # a plaintext client cannot talk to a TLS server
        self.assertEqual(plain.returncode, 1)
        with self.assertRaises(grpc.RpcError) as err:
            d.client.list_runs(timeout=10)
        self.assertEqual(err.exception.code(), grpc.StatusCode.UNAVAILABLE)

    def test_sigterm_during_ingest_loses_nothing_and_a_restart_finishes_the_run(self):
        folder = os.path.join(self.tmp, "dumps", "big-run")
        make_run(folder, copies=150)
        clean_db = os.path.join(self.tmp, "clean.db")
        subprocess.run([XLADB, "ingest", folder, "--db", clean_db], check=True, capture_output=True)
        expected = table_counts(clean_db, "big-run")

        db = os.path.join(self.tmp, "xladb.db")
        d = self.start("--allow-root", os.path.join(self.tmp, "dumps"), db=db)
        job = d.client.ingest_path(path=folder, wait=False, timeout=10)
        wait_for(lambda: d.client.get_ingest_job(job_id=job.job_id, timeout=10)
                 .files_done >= 5, what="the ingest to start")
        self.assertEqual(d.terminate(), 0, "xladbd exits 0 on SIGTERM")
        partial = table_counts(db, "big-run")
        self.assertLess(partial["files"], expected["files"], "SIGTERM should land mid-ingest")
        con = sqlite3.connect(db)
        self.assertEqual(con.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        self.assertEqual(con.execute("SELECT state FROM ingest_jobs WHERE job_id = ?", (job.job_id,)).fetchone()[0],
                         "QUEUED")
        con.close()

        d2 = self.start("--allow-root", os.path.join(self.tmp, "dumps"), db=db)
        wait_for(lambda: table_counts(db, "big-run")["files"] == expected["files"], what="the resumed job")
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        wait_for(lambda: con.execute("SELECT state FROM ingest_jobs WHERE job_id = ?",
                                     (job.job_id,)).fetchone()[0] == "SUCCEEDED", what="the job to finish")
        con.close()
        self.assertEqual(table_counts(db, "big-run"), expected)
        self.assertEqual(d2.cli_json("runs")[0]["files"], expected["files"])


if __name__ == "__main__":
    unittest.main()


class VersionTest(unittest.TestCase):
    """`xladb --version` and `xladbd --version`: the project's version, the commit built and the schema version,
    each checked against its own source: CMakeLists.txt, git, and the user_version of a store the CLI makes."""

    LINE = re.compile(r"^(xladbd?) (\S+) \(commit (\S+), schema version (\d+)\)\n$")

    def version_of(self, binary):
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        match = self.LINE.match(out.stdout)
        self.assertIsNotNone(match, f"unexpected --version output: {out.stdout!r}")
        return match.groups()

    def test_both_binaries_name_the_version_commit_and_schema(self):
        with open(os.path.join(SOURCE_DIR, "CMakeLists.txt"), encoding="utf-8") as f:
            project_version = re.search(r"project\(xladb VERSION (\S+)", f.read()).group(1)
        # Outside a git checkout (a source tarball), or without git, the build says so rather than guessing.
        commit = "unknown"
        if shutil.which("git"):
            git = subprocess.run(["git", "-C", SOURCE_DIR, "rev-parse", "--short=12", "HEAD"],
                                 capture_output=True, text=True)
            if git.returncode == 0:
                commit = git.stdout.strip()
        with tempfile.TemporaryDirectory() as tmp:
            db = os.path.join(tmp, "v.db")
            run = os.path.join(tmp, "r")
            make_run(run)
            made = subprocess.run([XLADB, "--db", db, "ingest", run], capture_output=True, text=True, timeout=120)
            self.assertEqual(made.returncode, 0, made.stderr)
            with sqlite3.connect(db) as conn:
                stored_schema = conn.execute("PRAGMA user_version").fetchone()[0]
        for binary, program in ((XLADB, "xladb"), (XLADBD, "xladbd")):
            with self.subTest(program=program):
                name, version, built_commit, schema = self.version_of(binary)
                self.assertEqual(name, program)
                self.assertEqual(version, project_version)
                self.assertEqual(built_commit, commit,
                                 "the binary was built from another commit: rebuild (CMake configures again "
                                 "when HEAD moves)")
                self.assertEqual(int(schema), stored_schema)
