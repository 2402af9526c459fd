"""xladbd on a PostgreSQL store (--db postgresql://…), as real processes: the daemon, the CLI and a Python grpcio
client on 127.0.0.1, against the PostgreSQL 15 that ctest starts (XLADB_TEST_POSTGRES_DIR; each test works in
a schema of its own, dropped after). Expected numbers come from the dump text, and what the daemon stores must
equal what `xladb ingest` stores into a SQLite file from the same folder.

Without XLADB_TEST_POSTGRES_DIR every test here is skipped and says why."""
import concurrent.futures
import os
import re
import signal
import sqlite3
import subprocess
import time
import unittest
import urllib.request

import grpc
import test_service
from test_hardening import RSS_BOUND_BYTES, peak_rss
from test_service import (PSQL, XLADB, XLADBD, DaemonTestCase, make_run, read_text, total_bytes_used, wait_for,
                          xladb_pb2)

POSTGRES_DIR = os.environ.get("XLADB_TEST_POSTGRES_DIR")
GATE = os.path.join(os.environ["XLADB_SOURCE_DIR"], "tests", "fixtures", "gate")

# Rows per table of one run, the same SQL on both backends (what a crash must not change).
COUNTS = {
    "files": "SELECT COUNT(*) FROM dump_files f JOIN runs r USING (run_id) WHERE r.name = '{run}'",
    "modules": "SELECT COUNT(*) FROM modules m JOIN runs r USING (run_id) WHERE r.name = '{run}'",
    "allocations": "SELECT COUNT(*) FROM allocations a JOIN modules m USING (module_id) JOIN runs r USING (run_id) "
                   "WHERE r.name = '{run}'",
    "buffer_values": "SELECT COUNT(*) FROM buffer_values v JOIN modules m USING (module_id) "
                     "JOIN runs r USING (run_id) WHERE r.name = '{run}'",
    "instructions": "SELECT COUNT(*) FROM instructions i JOIN modules m USING (module_id) "
                    "JOIN runs r USING (run_id) WHERE r.name = '{run}'",
    "counters": "SELECT COUNT(*) FROM kernel_counters WHERE run_name = '{run}'",
    "peak_sum": "SELECT COALESCE(SUM(peak_bytes), 0) FROM module_memory WHERE run_name = '{run}'",
    "ingested": "SELECT COUNT(*) FROM dump_files f JOIN runs r USING (run_id) "
                "WHERE r.name = '{run}' AND f.verdict = 'ingested'",
}


class PostgresStore:
    """Each test in a schema of its own on the test server (dropped after); daemons start on it unless the test
    names a SQLite file, with a spool folder in the test's temporary folder unless it gives one."""

    def setUp(self):
        if not POSTGRES_DIR:
            self.skipTest("XLADB_TEST_POSTGRES_DIR is not set: ctest's postgres_server fixture starts PostgreSQL")
        super().setUp()
        with open(os.path.join(POSTGRES_DIR, "uri")) as fh:
            self.server_uri = fh.read().strip()
        self.schema = f"e2e_{self._testMethodName[5:40]}_{os.getpid()}"
        self.psql("-c", f"DROP SCHEMA IF EXISTS {self.schema} CASCADE; CREATE SCHEMA {self.schema}")
        self.uri = f"{self.server_uri}?options=-csearch_path%3D{self.schema}"

    def tearDown(self):
        super().tearDown()
        if POSTGRES_DIR:
            self.psql("-c", f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")

    def psql(self, *args, target=None):
        out = subprocess.run([PSQL, target or self.server_uri, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", *args],
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout.strip()

    def start(self, *args, db=None):
        if db is None:
            db = self.uri
            if "--spool-dir" not in args:
                args = ("--spool-dir", os.path.join(self.tmp, "spool"), *args)
        return super().start(*args, db=db)


class ServiceTestOnPostgres(PostgresStore, test_service.ServiceTest):
    """Every end-to-end service test again, with xladbd on a PostgreSQL store: the same expectations."""

    # Reads the SQLite file's integrity and job table directly; PostgresDaemonTest's
    # test_a_daemon_killed_mid_ingest_finishes_the_run_on_restart is its PostgreSQL counterpart (SIGKILL).
    test_sigterm_during_ingest_loses_nothing_and_a_restart_finishes_the_run = None


class PostgresDaemonTest(PostgresStore, DaemonTestCase):

    def pg_counts(self, run):
        return {k: int(self.psql("-c", sql.format(run=run), target=self.uri) or 0) for k, sql in COUNTS.items()}

    def test_the_daemon_ingests_gates_and_answers_on_postgresql(self):
        d = self.start("--http", "127.0.0.1:0")
        for run in ("base", "head"):
            out = d.cli("ingest", os.path.join(GATE, run), "--run", "gate_" + run, "--time", f"2026-01-0{8 if run == 'base' else 9}")
            self.assertIn("SUCCEEDED", out.stdout)
        # jit_step's `Total bytes used:` line in each dump, through the Python client.
        expected = [total_bytes_used(read_text(os.path.join(GATE, run, "module_0001.jit_step.after_optimizations-"
                                                                         "buffer-assignment.txt"))) for run in ("base", "head")]
        self.assertEqual(expected, [6144, 71680])
        trend = d.client.peak_memory_trend(module="jit_step", metric=xladb_pb2.TOTAL_BYTES, timeout=30)
        self.assertEqual([p.value for p in trend.points], expected)
        # The two upload jobs, as ingest_jobs records them on PostgreSQL; wait sees them done.
        jobs = d.cli_json("jobs")
        self.assertEqual([(j["run"], j["state"], j["source"]) for j in jobs],
                         [("gate_head", "SUCCEEDED", "upload"), ("gate_base", "SUCCEEDED", "upload")])
        self.assertEqual([j["run"] for j in d.cli_json("jobs", "--run", "gate_base", "--state", "SUCCEEDED")],
                         ["gate_base"])
        self.assertEqual(d.cli("wait", "gate_head", "--timeout", "5s").returncode, 0)
        # The gate fails on the growth and names the module, exit code 1.
        gate = d.cli("check", "gate_head", "--baseline", "gate_base", check=False)
        self.assertEqual(gate.returncode, 1, gate.stdout + gate.stderr)
        self.assertIn("jit_step", gate.stdout)
        # Read-only SQL through gRPC: rows come back, writes and server files are refused.
        rows = list(d.client.query(sql="SELECT module_name, total_bytes FROM module_memory "
                                       "WHERE module_name = 'jit_step' ORDER BY total_bytes", timeout=30))
        self.assertEqual([v.values[1].int_value for r in rows for v in r.rows], expected)
        for refused in ("DELETE FROM runs", "SELECT pg_read_file('/etc/passwd')", "SELECT set_config('a.b', '1', false)"):
            out = d.cli("sql", refused, check=False)
            self.assertNotEqual(out.returncode, 0, refused)
            self.assertIn("refused", out.stderr, refused)
        self.assertEqual(self.psql("-c", "SELECT COUNT(*) FROM runs", target=self.uri), "2")
        # Labels and delete, then the pages: the daemon serves what PostgreSQL holds.
        d.cli("label", "gate_base", "branch=main")
        self.assertEqual([r["run"] for r in d.cli_json("runs", "--label", "branch=main")], ["gate_base"])
        d.cli("delete", "gate_head")
        self.assertEqual([r["run"] for r in d.cli_json("runs")], ["gate_base"])
        self.assertEqual(self.psql("-c", "SELECT COUNT(*) FROM modules m JOIN runs r USING (run_id) "
                                         "WHERE r.name = 'gate_head'", target=self.uri), "0")
        port = re.search(r"pages on http://127\.0\.0\.1:(\d+)/", d.proc.stdout.readline()).group(1)
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30).read().decode()
        self.assertIn("gate_base", page)

    def test_metrics_measure_the_postgresql_store(self):
        from test_metrics import measured_since, served_ports
        d = self.start("--metrics-listen", "127.0.0.1:0")
        port = served_ports(d, "metrics")["metrics"]
        for run in ("base", "head"):
            d.cli("ingest", os.path.join(GATE, run), "--run", "gate_" + run)
        since = time.time()
        # The size is the whole database's, which the tests running beside this one (schemas of their own in
        # the same database) grow and shrink between the daemon's measure and this read: a measure that does
        # not match is compared again with the next one (the daemon measures every 15 s), five times at most.
        for attempt in range(5):
            families = wait_for(lambda: measured_since(port, since), what="a measure of the store after the ingests")
            database = int(self.psql("-c", "SELECT pg_database_size(current_database())", target=self.uri))
            if abs(families["xladb_database_size_bytes"].value() - database) < 0.2 * database:
                break
            since = families["xladb_store_measured_timestamp_seconds"].value()
        self.assertLess(abs(families["xladb_database_size_bytes"].value() - database), 0.2 * database)
        self.assertEqual(families["xladb_runs_stored"].value(), 2)
        self.assertEqual(families["xladb_modules_stored"].value(),
                         int(self.psql("-c", "SELECT COUNT(*) FROM modules", target=self.uri)))
        self.assertEqual(families["xladb_ingest_jobs_total"].value(state="succeeded"), 2)

    def test_the_sql_endpoint_reads_as_the_reader_role(self):
        with open(os.path.join(POSTGRES_DIR, "reader_uri")) as fh:
            reader_uri = f"{fh.read().strip()}?options=-csearch_path%3D{self.schema}"
        spool = os.path.join(self.tmp, "spool")

        def refused_start(sql_db):
            out = subprocess.run([XLADBD, "--db", self.uri, "--spool-dir", spool, "--listen", "127.0.0.1:0",
                                  "--sql-db", sql_db], capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
            return out.stderr

        # The store's owner, or a reader that may write, is refused before the daemon serves.
        self.assertIn("logs in as the store's owner", refused_start(self.uri))
        d = self.start()  # creates the schema
        d.cli("ingest", os.path.join(GATE, "base"), "--run", "gate_base")
        d.stop()
        self.daemons.remove(d)
        self.psql("-c", f"GRANT INSERT ON {self.schema}.runs TO xladb_reader")
        self.assertIn("may change the store", refused_start(reader_uri))
        self.psql("-c", f"REVOKE INSERT ON {self.schema}.runs FROM xladb_reader")

        d = self.start("--sql-db", reader_uri)
        rows = list(d.client.query(sql="SELECT current_user, COUNT(*) FROM runs GROUP BY current_user", timeout=30))
        self.assertEqual([(v.values[0].text_value, v.values[1].int_value) for r in rows for v in r.rows],
                         [("xladb_reader", 1)])
        # The other questions still go through the daemon's own connection.
        self.assertEqual([r["run"] for r in d.cli_json("runs")], ["gate_base"])
        out = d.cli("sql", "DELETE FROM runs", check=False)
        self.assertNotEqual(out.returncode, 0)
        self.assertEqual(self.psql("-c", "SELECT COUNT(*) FROM runs", target=self.uri), "1")

    def test_values_over_the_caps_are_refused_by_postgresql_before_they_reach_the_daemon(self):
        # libpq receives a row whole before the daemon can look at it, so PostgreSQL itself must refuse a value
        # over the cap: four at once, the daemon's peak memory stays bounded and every slot is free after.
        d = self.start()

        def big_value(_):
            try:
                list(d.client.query(sql="SELECT repeat('x', 400000000)", timeout=120))
                return grpc.StatusCode.OK, ""
            except grpc.RpcError as e:
                return e.code(), e.details()
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(big_value, range(4)))
        # The daemon's default per-value cap, 1 MiB (xladbd --help).
        self.assertEqual(answers, [(grpc.StatusCode.RESOURCE_EXHAUSTED, "a value of 400000000 bytes is over the "
                                    "per-value limit of 1048576 bytes")] * 4)
        self.assertLess(peak_rss(d.proc.pid), RSS_BOUND_BYTES)
        # The four slots are free at once: a fifth query right after is answered.
        rows = list(d.client.query(sql="SELECT length(repeat('x', 400000000))", timeout=60))
        self.assertEqual([v.values[0].int_value for r in rows for v in r.rows], [400000000])

    def test_an_upload_another_daemon_staged_stays_queued_for_it(self):
        d = self.start()  # creates the schema
        d.stop()
        self.daemons.remove(d)
        # Left unfinished by daemons that stopped: one staged on another machine (its folder is not here),
        # queued first; one staged in this daemon's own spool folder and lost with it.
        jobs = (("job-other", "/srv/another-daemon/spool/upload-1", 1),
                ("job-mine", os.path.join(self.tmp, "spool", "upload-lost"), 2))
        for job, path, created in jobs:
            self.psql("-c", "INSERT INTO ingest_jobs(job_id, source, path, run_name, labels, state, created_at_us) "
                            f"VALUES ('{job}', 'upload', '{path}', '{job}', '{{}}', 'QUEUED', {created})",
                      target=self.uri)
        state = lambda job: self.psql("-c", f"SELECT state FROM ingest_jobs WHERE job_id = '{job}'", target=self.uri)
        self.start()
        # The queue runs jobs in order: once this daemon's own job has ended, the other daemon's was passed over.
        wait_for(lambda: state("job-mine") == "FAILED", what="this daemon's lost upload to fail")
        self.assertEqual(state("job-other"), "QUEUED")

    def test_a_daemon_killed_mid_ingest_finishes_the_run_on_restart(self):
        dumps = os.path.join(self.tmp, "dumps")
        folder = os.path.join(dumps, "big-run")
        make_run(folder, copies=150)
        clean_db = os.path.join(self.tmp, "clean.db")
        subprocess.run([XLADB, "ingest", folder, "--db", clean_db], check=True, capture_output=True)
        con = sqlite3.connect(clean_db)
        expected = {k: con.execute(sql.format(run="big-run")).fetchone()[0] or 0 for k, sql in COUNTS.items()}
        con.close()
        self.assertEqual(expected["ingested"], 452, "150 copies of three seeds, one profile and one HLO text")

        d = self.start("--allow-root", dumps)
        job = d.client.ingest_path(path=folder, wait=False, timeout=10)
        wait_for(lambda: d.client.get_ingest_job(job_id=job.job_id, timeout=10)
                 .files_done >= 20, what="the ingest to start")
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait(timeout=30)
        partial = self.pg_counts("big-run")
        self.assertLess(partial["files"], expected["files"], "the kill should land mid-ingest")
        self.assertIn(self.psql("-c", f"SELECT state FROM ingest_jobs WHERE job_id = '{job.job_id}'", target=self.uri),
                      ("QUEUED", "RUNNING"))

        self.start("--allow-root", dumps)
        wait_for(lambda: self.psql("-c", f"SELECT state FROM ingest_jobs WHERE job_id = '{job.job_id}'",
                                   target=self.uri) == "SUCCEEDED", timeout=300, what="the resumed job")
        self.assertEqual(self.pg_counts("big-run"), expected)

    def clean_counts(self, folder, run):
        """What `xladb ingest` stores for `folder` as `run` in a fresh SQLite file."""
        db = os.path.join(self.tmp, run + ".db")
        subprocess.run([XLADB, "ingest", folder, "--db", db, "--run", run], check=True, capture_output=True)
        con = sqlite3.connect(db)
        counts = {k: con.execute(sql.format(run=run)).fetchone()[0] or 0 for k, sql in COUNTS.items()}
        con.close()
        return counts

    def wait_job(self, d, job_id):
        return wait_for(lambda: (lambda j: j if j.state in (xladb_pb2.IngestJob.SUCCEEDED, xladb_pb2.IngestJob.FAILED)
                                 else None)(d.client.get_ingest_job(job_id=job_id, timeout=10)),
                        timeout=300, what=f"job {job_id}")

    def test_two_daemons_share_one_database(self):
        dumps = os.path.join(self.tmp, "dumps")
        for name in ("run-a", "run-b", "run-c"):
            make_run(os.path.join(dumps, name), copies=40)
        expected = {name: self.clean_counts(os.path.join(dumps, name), name) for name in ("run-a", "run-b")}
        expected_same = self.clean_counts(os.path.join(dumps, "run-c"), "same")
        d1 = self.start("--spool-dir", os.path.join(self.tmp, "spool1"), "--allow-root", dumps, db=self.uri)
        d2 = self.start("--spool-dir", os.path.join(self.tmp, "spool2"), "--allow-root", dumps, db=self.uri)

        # Different runs at once (they share every shape and source path): each whole, no text stored twice.
        a = d1.client.ingest_path(path=os.path.join(dumps, "run-a"), wait=False, timeout=10)
        b = d2.client.ingest_path(path=os.path.join(dumps, "run-b"), wait=False, timeout=10)
        for d, job in ((d1, a), (d2, b)):
            done = self.wait_job(d, job.job_id)
            self.assertEqual(done.state, xladb_pb2.IngestJob.SUCCEEDED, done.message)
        for name in ("run-a", "run-b"):
            self.assertEqual(self.pg_counts(name), expected[name], name)
        for table, column in (("shapes", "text"), ("source_files", "path"), ("long_texts", "hash")):
            self.assertEqual(self.psql("-c", f"SELECT COUNT(*) - COUNT(DISTINCT {column}) FROM {table}", target=self.uri),
                             "0", f"{table} holds a text twice")

        # The same run from both at once: every file stored once, whichever daemon came first.
        request = dict(path=os.path.join(dumps, "run-c"), run_name="same", wait=False)
        jobs = [(d, d.client.ingest_path(**request, timeout=10)) for d in (d1, d2)]
        done = [self.wait_job(d, job.job_id) for d, job in jobs]
        for job in done:
            self.assertEqual(job.state, xladb_pb2.IngestJob.SUCCEEDED, job.message)
            self.assertEqual(list(job.errors), [])
        self.assertEqual(self.pg_counts("same"), expected_same)
        stored = sum(job.files_by_verdict["ingested"] + job.files_by_verdict["not_ingested"] for job in done)
        self.assertEqual(stored, expected_same["files"], "each file is stored by exactly one daemon")

        # Either daemon answers for the whole store.
        self.assertEqual(d1.cli("runs", "--format", "csv").stdout, d2.cli("runs", "--format", "csv").stdout)
        self.assertEqual(sorted(r["run"] for r in d2.cli_json("runs")), ["run-a", "run-b", "same"])


if __name__ == "__main__":
    unittest.main()
