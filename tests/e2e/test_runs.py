"""End-to-end tests of a run's lifecycle (issue 12): labels and time from a watched run's xladb-run.toml,
`xladb label` and `xladb delete` through xladbd (LabelRun, DeleteRun: done by its one writer) and offline.
Expected row counts come from ingesting the same folders into fresh databases."""
import os
import sqlite3
import subprocess
import time
import unittest

from test_service import XLADB, DaemonTestCase, arrive_in_watched_folder, make_run, table_counts, wait_for

METADATA = """# written by the CI job that made the artifact
time = "2026-10-30T12:00:00Z"
[labels]
branch = "main"
commit = "1a2b3c4d5e"
"""


def xladb(*args, check_rc=0):
    out = subprocess.run([XLADB, *args], capture_output=True, text=True, timeout=300)
    if check_rc is not None and out.returncode != check_rc:
        raise AssertionError(f"xladb {' '.join(args)} exited {out.returncode}, wanted {check_rc}: {out.stderr}")
    return out


def all_table_counts(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                            "AND name NOT LIKE 'sqlite_%' "
                                            # what was done to the store, not what it holds
                                            "AND name NOT IN ('ingest_jobs', 'store_counters')")]
        return {t: con.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        con.close()


class RunLifecycleTest(DaemonTestCase):

    def test_a_watched_run_with_a_metadata_file_is_listed_with_its_labels_and_time(self):
        root = os.path.join(self.tmp, "artifacts")
        os.makedirs(root)
        d = self.start("--watch", root, "--quiet-seconds", "0.3")
        arrive_in_watched_folder(self.tmp, root, "nightly-77", METADATA)
        runs = wait_for(lambda: [r for r in d.cli_json("runs") if r["run"] == "nightly-77" and r["modules"] == 3],
                        what="the watched run to be ingested")
        self.assertEqual(runs[0]["labels"], "branch=main,commit=1a2b3c4d5e")
        self.assertEqual(runs[0]["run_time"], "2026-10-30T12:00:00Z")
        # The gate finds it by label.
        out = d.cli("check", "nightly-77", "--baseline", "label:branch=main", check=False)
        self.assertIn("no baseline", out.stdout + out.stderr)
        # A metadata file that does not parse is that file's error, with its line; the run is still ingested.
        bad = os.path.join(self.tmp, "bad-run")
        make_run(bad)
        with open(os.path.join(bad, "xladb-run.toml"), "w") as f:
            f.write('time = "2026-10-30"\n[labels]\nbranch = [1, 2]\n')
        db = os.path.join(self.tmp, "offline.db")
        out = xladb("ingest", bad, "--db", db, check_rc=1)
        self.assertIn("xladb-run.toml", out.stderr + out.stdout)
        self.assertIn("line 3", out.stderr + out.stdout)
        clean = os.path.join(self.tmp, "bad-run-clean")
        make_run(clean)
        clean_db = os.path.join(self.tmp, "clean.db")
        xladb("ingest", clean, "--db", clean_db, "--run", "bad-run")
        counts, expected = table_counts(db, "bad-run"), table_counts(clean_db, "bad-run")
        expected["files"] += 1  # the metadata file's own verdict
        self.assertEqual(counts, expected)  # every dump still ingested

    def test_a_run_deleted_offline_beside_the_daemon_is_whole_when_ingested_again(self):
        """`xladb delete --db` (another process) while xladbd writes the file, then the run again through the
        daemon: every id points at a row (was: values and instructions pointing at no shape or name, the ids
        the daemon's writer had kept), and the store holds what one ingest of the run holds."""
        run = os.path.join(self.tmp, "run-a")
        make_run(run)
        alone = os.path.join(self.tmp, "alone.db")
        xladb("ingest", run, "--db", alone)
        db = os.path.join(self.tmp, "xladb.db")
        d = self.start(db=db)
        self.assertIn("SUCCEEDED", d.cli("ingest", run, "--run", "run-a").stdout)
        xladb("delete", "run-a", "--db", db)
        self.assertIn("SUCCEEDED", d.cli("ingest", run, "--run", "run-a").stdout)
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            dangling = con.execute(
                "SELECT (SELECT COUNT(*) FROM buffer_values v WHERE v.shape_id IS NOT NULL AND NOT EXISTS "
                "(SELECT 1 FROM shapes s WHERE s.shape_id = v.shape_id)) + (SELECT COUNT(*) FROM instructions i "
                "WHERE i.op_name_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM names n WHERE n.name_id = i.op_name_id))"
                " + (SELECT COUNT(*) FROM instructions i WHERE i.shape_id IS NOT NULL AND NOT EXISTS "
                "(SELECT 1 FROM shapes s WHERE s.shape_id = i.shape_id))").fetchone()[0]
        finally:
            con.close()
        self.assertEqual(dangling, 0)
        d.stop()
        counts = all_table_counts(db)
        self.assertGreater(counts["shapes"], 0)
        self.assertEqual(counts, all_table_counts(alone))

    def test_label_and_delete_through_the_daemon_and_offline(self):
        a, b = os.path.join(self.tmp, "run-a"), os.path.join(self.tmp, "run-b")
        make_run(a)
        make_run(b)  # the same dumps under another run name: shared interned texts stay for run-a
        alone = os.path.join(self.tmp, "alone.db")
        xladb("ingest", a, "--db", alone)
        db = os.path.join(self.tmp, "xladb.db")
        xladb("ingest", a, "--db", db)
        xladb("ingest", b, "--db", db)
        d = self.start(db=db)
        out = d.cli("label", "run-b", "branch=dev", "commit=abc")
        self.assertEqual(out.stdout.strip(), "run run-b: branch=dev commit=abc")
        run = d.client.label_run(run_name="run-b", remove=["commit"], timeout=30)
        self.assertEqual([(l.key, l.value) for l in run.labels], [("branch", "dev")])
        unknown = d.cli("label", "nope", "k=v", check=False)
        self.assertEqual(unknown.returncode, 1)
        self.assertIn("nope", unknown.stderr)
        # Deleting B through the daemon leaves what ingesting A alone leaves, table by table.
        out = d.cli("delete", "run-b")
        self.assertRegex(out.stdout, r"^deleted run run-b: \d+ files, \d+ modules, \d+ rows")
        self.assertEqual(all_table_counts(db), all_table_counts(alone))
        self.assertEqual([r["run"] for r in d.cli_json("runs")], ["run-a"])
        d.stop()
        # Offline, the same.
        xladb("ingest", b, "--db", db)
        xladb("label", "run-b", "x=1", "--db", db)
        xladb("delete", "run-b", "--db", db)
        self.assertEqual(all_table_counts(db), all_table_counts(alone))
        self.assertEqual(xladb("delete", "run-b", "--db", db, check_rc=1).stderr.strip(),
                         "xladb: run 'run-b' not found")

    def test_prune_through_the_daemon_on_its_schedule_and_offline(self):
        folder = os.path.join(self.tmp, "dumps")
        make_run(folder)
        db = os.path.join(self.tmp, "xladb.db")
        for run, day, labels in (("old", "2020-01-01", []), ("release", "2020-01-02", ["--label", "keep=yes"]),
                                 ("new", str(int(time.time()) - 86400), [])):  # yesterday, in Unix seconds
            xladb("ingest", folder, "--db", db, "--run", run, "--time", day, *labels)

        def detail(run):
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            try:
                return con.execute("SELECT COUNT(*) FROM buffer_values v JOIN modules m USING (module_id) "
                                   "JOIN runs r USING (run_id) WHERE r.name = ?", (run,)).fetchone()[0]
            finally:
                con.close()

        before = {r: table_counts(db, r)["peak_sum"] for r in ("old", "release", "new")}
        # The daemon prunes at start (then daily): "old" loses its detail, the labelled and the new run keep it.
        d = self.start("--prune-detail-days", "30", "--prune-keep-label", "keep=yes", db=db)
        wait_for(lambda: detail("old") == 0, what="the scheduled prune")
        self.assertGreater(detail("release"), 0)
        self.assertGreater(detail("new"), 0)
        self.assertEqual({r: table_counts(db, r)["peak_sum"] for r in before}, before)  # module_memory unchanged
        out = d.cli("prune", "--keep-detail-days", "30")  # the labelled run goes too, now
        self.assertRegex(out.stdout, r"^pruned 1 runs older than 30 days: \d+ rows removed")
        self.assertEqual(detail("release"), 0)
        refused = d.cli("ingest", folder, "--run", "old", check=False)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("was pruned", refused.stdout + refused.stderr)
        d.stop()
        out = xladb("prune", "--keep-detail-days", "0", "--db", db)
        self.assertRegex(out.stdout, r"^pruned 1 runs older than 0 days")
        self.assertEqual(detail("new"), 0)


class JobsTest(DaemonTestCase):
    """Issue 22, item 11: a watched run says when it is done (a log line, `xladb jobs`, `xladb wait`)."""

    def test_a_watched_run_logs_its_end_and_jobs_and_wait_say_how_it_went(self):
        root = os.path.join(self.tmp, "artifacts")
        os.makedirs(root)
        d = self.start("--watch", root, "--quiet-seconds", "0.5")
        # Waiting for a run nobody has queued yet: it times out (exit 3), saying so.
        out = d.cli("wait", "never-queued", "--timeout", "1s", check=False)
        self.assertEqual(out.returncode, 3, out.stderr)
        self.assertIn("no job queued", out.stderr)
        # A wait started before the run arrives keeps waiting through the quiet period, then exits 0.
        waiting = subprocess.Popen([XLADB, "wait", "nightly-5", "--timeout", "60s", "--addr", d.addr],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        self.assertIsNone(waiting.poll(), "wait returned before the run was queued")
        arrive_in_watched_folder(self.tmp, root, "nightly-5", METADATA)
        self.assertEqual(waiting.wait(timeout=90), 0, waiting.stderr.read())
        waiting.stdout.close()
        waiting.stderr.close()
        # A run whose archive is not one (random bytes named .tar.gz): its job fails, and wait exits 1.
        with open(os.path.join(self.tmp, "broken.tar.gz"), "wb") as f:
            f.write(bytes(range(256)) * 8)
        os.rename(os.path.join(self.tmp, "broken.tar.gz"), os.path.join(root, "broken.tar.gz"))
        out = d.cli("wait", "broken", "--timeout", "60s", check=False)
        self.assertEqual(out.returncode, 1, out.stderr)
        self.assertIn("FAILED", out.stderr)
        self.assertIn("archive", out.stderr)
        # `xladb jobs` lists both, newest first, with the states the queue stores; --run and --state filter.
        jobs = d.cli_json("jobs")
        self.assertEqual([(j["run"], j["state"], j["source"]) for j in jobs],
                         [("broken", "FAILED", "watch"), ("nightly-5", "SUCCEEDED", "watch")])
        self.assertEqual([j["run"] for j in d.cli_json("jobs", "--state", "FAILED")], ["broken"])
        self.assertEqual([j["state"] for j in d.cli_json("jobs", "--run", "nightly-5")], ["SUCCEEDED"])
        self.assertTrue(jobs[1]["finished"])
        bad = d.cli("jobs", "--state", "done", check=False)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("QUEUED, RUNNING, SUCCEEDED or FAILED", bad.stderr)
        # Offline, the store's ingest_jobs give the same answer.
        self.assertEqual(subprocess.run([XLADB, "--db", d.db, "jobs", "--format", "json"], capture_output=True,
                                        text=True, check=True).stdout,
                         d.cli("jobs", "--format", "json").stdout)
        self.assertEqual(xladb("--db", d.db, "wait", "nightly-5", "--timeout", "1s").returncode, 0)
        # The daemon's log has one line per ended job. nightly-5 holds 6 files (make_run's 5 dumps, all read,
        # and xladb-run.toml, which is no dump: not_ingested) and 3 buffer assignments (3 modules).
        self.assertEqual(d.terminate(), 0)
        log = d.proc.stderr.read()
        ended = [line for line in log.splitlines() if " SUCCEEDED in " in line or " FAILED after " in line]
        self.assertEqual(len(ended), 2, log)
        self.assertRegex(ended[0], r"^xladbd info: job job-[0-9a-f]+ \(watch\) run nightly-5 SUCCEEDED in "
                                   r"\d+\.\d\d s: 6 files \(5 ingested, 1 not_ingested\), 3 modules$")
        self.assertRegex(ended[1], r"^xladbd warn: job job-[0-9a-f]+ \(watch\) run broken FAILED after "
                                   r"\d+\.\d\d s: .*archive")


if __name__ == "__main__":
    unittest.main()
