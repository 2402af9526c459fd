"""End-to-end tests of the memory gate (`xladb check`, the CheckRun RPC), module identity across runs and
retraces, with real xladb and xladbd processes and a Python grpcio client.

The hand-made fixture (tests/fixtures/gate/base, head) has known truth, read here from its files:
  jit_step      its preallocated-temp value mul.2 (model.py:123) grows from f32[1024] to f32[17408]: +65536 bytes
  jit_old_name  renamed jit_new_name in head (same shapes): removed + added
  jit_added     only in head;  jit_removed  only in base
  jit_twice     compiled once in base, twice in head (a retrace with f32[48]): unchanged + added, 1 -> 2 compiles
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

from test_service import (CORPUS_DIR, HAVE_CORPUS, RUNS_DIR, SOURCE_DIR, XLADB, DaemonTestCase, xladb_pb2)

FIXTURE = os.path.join(SOURCE_DIR, "tests", "fixtures", "gate")
BA_SUFFIX = ".after_optimizations-buffer-assignment.txt"


def read(path):
    with open(path) as f:
        return f.read()


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def fixture_total(run, module_file):
    """`Total bytes used` of a fixture dump, from its text."""
    text = read(os.path.join(FIXTURE, run, module_file))
    return int(re.search(r"^Total bytes used: (\d+)", text, re.M).group(1))


def xladb(*args, check_rc=None):
    out = subprocess.run([XLADB, *args], capture_output=True, text=True, timeout=300)
    if check_rc is not None and out.returncode != check_rc:
        raise AssertionError(f"xladb {' '.join(args)} exited {out.returncode}, wanted {check_rc}: {out.stderr}")
    return out


class GateTest(DaemonTestCase):

    def ingest_fixture(self, db):
        xladb("ingest", "--db", db, os.path.join(FIXTURE, "base"), "--run", "base", "--time", "2026-11-01",
              "--label", "branch=main", "--label", "commit=1111111aaaa", check_rc=0)
        xladb("ingest", "--db", db, os.path.join(FIXTURE, "head"), "--run", "head", "--time", "2026-11-02",
              "--label", "commit=2222222bbbb", check_rc=0)

    def test_fixture_verdict_json_attribution_and_retraces(self):
        db = os.path.join(self.tmp, "gate.db")
        self.ingest_fixture(db)
        out = xladb("check", "head", "--baseline", "base", "--db", db, "--format", "json", check_rc=1)
        report = json.loads(out.stdout)
        self.assertEqual(report["verdict"], "fail")
        self.assertEqual(report["run"], "head")
        self.assertEqual(report["baseline"], "base")
        self.assertEqual(report["metrics"], ["total_bytes", "live_peak_padded_bytes"])
        self.assertEqual(report["summary"], {"regressed": 1, "improved": 0, "unchanged": 1, "added": 3,
                                             "removed": 2, "ambiguous": 0, "accepted": 0, "ignored": 0})
        by_status = {}
        for m in report["modules"]:
            by_status.setdefault(m["status"], []).append((m["module"], m["xla_module_id"], m["baseline_xla_module_id"]))
        self.assertEqual(sorted(by_status["added"]), [("jit_added", 3, None), ("jit_new_name", 2, None),
                                                      ("jit_twice", 6, None)])
        self.assertEqual(sorted(by_status["removed"]), [("jit_old_name", None, 2), ("jit_removed", None, 4)])
        self.assertEqual(by_status["unchanged"], [("jit_twice", 5, 5)])
        step = report["modules"][0]
        self.assertEqual((step["module"], step["status"], step["matched_by"]), ("jit_step", "regressed", "identity"))
        base_total = fixture_total("base", "module_0001.jit_step" + BA_SUFFIX)
        head_total = fixture_total("head", "module_0001.jit_step" + BA_SUFFIX)
        self.assertEqual(head_total - base_total, 65536)
        self.assertEqual(step["metrics"]["total_bytes"],
                         {"baseline": base_total, "current": head_total, "delta": 65536, "regressed": True})
        self.assertEqual(step["entry_signature"], "(f32[256]) -> f32[256]")
        self.assertEqual(len(step["attribution"]), 1)
        grew = step["attribution"][0]
        self.assertEqual((grew["change"], grew["buffer"], grew["baseline_buffer"], grew["matched_by"]),
                         ("grew", "mul.2", "mul.2", "name"))
        self.assertEqual((grew["baseline_bytes"], grew["current_bytes"], grew["delta"]), (4096, 69632, 65536))
        self.assertEqual(grew["source"], "model.py:123")
        self.assertEqual(step["by_source"], [{"source": "model.py:123", "delta": 65536, "buffers": 1}])
        self.assertEqual(report["retraces"], [{"module": "jit_twice", "stage": "after_optimizations", "folder": "",
                                               "baseline_compiles": 1, "current_compiles": 2, "failed": False}])
        # The retrace fails the gate only when asked; `retraces` lists the name.
        out = xladb("check", "head", "--baseline", "base", "--db", db, "--format", "json",
                    "--fail-on-retrace-growth", check_rc=1)
        self.assertTrue(json.loads(out.stdout)["retraces"][0]["failed"])
        rows = json.loads(xladb("retraces", "head", "--db", db, "--format", "json", check_rc=0).stdout)
        self.assertEqual([(r["module"], r["compiles"], r["signatures"]) for r in rows], [("jit_twice", 2, 2)])

    def test_tolerances_ignores_accepted_regressions_and_inconclusive(self):
        db = os.path.join(self.tmp, "gate.db")
        self.ingest_fixture(db)
        ignore_unmatched = ["--ignore", "jit_old_name", "--ignore", "jit_new_name", "--ignore", "jit_added",
                            "--ignore", "jit_removed", "--ignore", "jit_twice"]
        # Only the regression left: fail; tolerated growth: pass.
        xladb("check", "head", "--baseline", "base", "--db", db, *ignore_unmatched, check_rc=1)
        xladb("check", "head", "--baseline", "base", "--db", db, *ignore_unmatched, "--max-growth-bytes", "65536",
              check_rc=0)
        xladb("check", "head", "--baseline", "base", "--db", db, *ignore_unmatched, "--max-growth-percent", "2000",
              check_rc=0)
        # Both tolerances must be passed for a regression.
        xladb("check", "head", "--baseline", "base", "--db", db, *ignore_unmatched, "--max-growth-percent", "10",
              "--max-growth-bytes", "100000", check_rc=0)
        # Without the ignores, added and removed modules make it inconclusive once the regression is tolerated.
        xladb("check", "head", "--baseline", "base", "--db", db, "--max-growth-bytes", "65536", check_rc=3)
        # An accepted regression with its reason, from a config file.
        config = os.path.join(self.tmp, "gate.toml")
        write(config, 'ignore = ["jit_old_name", "jit_new_name", "jit_added", "jit_removed", "jit_twice"]\n'
                      '[[accept]]\npattern = "jit_step"\nmetric = "total_bytes"\nup_to_bytes = 71680\n'
                      'reason = "PR 42: bigger multiply buffer, reviewed"\n')
        out = xladb("check", "head", "--baseline", "base", "--db", db, "--config", config, "--format", "json",
                    check_rc=0)
        step = json.loads(out.stdout)["modules"][0]
        self.assertEqual((step["status"], step["accepted_reason"]), ("accepted", "PR 42: bigger multiply buffer, reviewed"))
        # Accepted only up to the accepted size.
        write(config, read(config).replace("71680", "71679"))
        xladb("check", "head", "--baseline", "base", "--db", db, "--config", config, check_rc=1)
        # A config with an unknown key: exit 2 naming the key and its line.
        write(config, 'max_growth_bytes = 0\n\n[[module]]\npattern = "x"\nmax_growth_byte = 5\n')
        out = xladb("check", "head", "--baseline", "base", "--db", db, "--config", config, check_rc=2)
        self.assertIn("module[1].max_growth_byte", out.stderr)
        self.assertIn(":5:", out.stderr)
        self.assertEqual(out.stdout, "")
        # Baselines: missing (inconclusive), by label (the newest branch=main run before head), by commit prefix.
        out = xladb("check", "head", "--baseline", "nightly-0", "--db", db, "--format", "json", check_rc=3)
        self.assertEqual(json.loads(out.stdout)["verdict"], "inconclusive")
        self.assertIn("nightly-0", json.loads(out.stdout)["reason"])
        out = xladb("check", "head", "--baseline", "label:branch=main", "--db", db, "--format", "json", check_rc=1)
        self.assertEqual(json.loads(out.stdout)["baseline"], "base")
        out = xladb("check", "head", "--baseline", "commit:1111111", "--db", db, "--format", "json", check_rc=1)
        self.assertEqual(json.loads(out.stdout)["baseline"], "base")
        xladb("check", "head", "--baseline", "label:branch=nope", "--db", db, check_rc=3)
        # Usage errors: an unknown metric, an unknown run, a baseline that is the run itself.
        xladb("check", "head", "--baseline", "base", "--db", db, "--metric", "bogus", check_rc=2)
        xladb("check", "nope", "--baseline", "base", "--db", db, check_rc=2)
        xladb("check", "head", "--baseline", "head", "--db", db, check_rc=2)

    def test_runs_from_different_backends_are_inconclusive(self):
        # Seed 000 is a TPU module, seed 004 a CUDA one (sm_8.0 stage): no backend in common, nothing to compare.
        seeds = os.path.join(SOURCE_DIR, "tests", "data", "seeds")
        seed = {n: os.path.join(seeds, f) for f in os.listdir(seeds) for n in ("000", "004") if f.startswith(n + "_")}
        tpu, gpu = os.path.join(self.tmp, "tpu"), os.path.join(self.tmp, "gpu")
        os.makedirs(tpu)
        os.makedirs(gpu)
        shutil.copy(seed["000"], os.path.join(tpu, "module_0001.jit_step" + BA_SUFFIX))
        shutil.copy(seed["004"], os.path.join(gpu, "module_0001.jit_step.sm_8.0_gpu_after_optimizations"
                                                   "-buffer-assignment.txt"))
        db = os.path.join(self.tmp, "mixed.db")
        xladb("ingest", "--db", db, tpu, "--run", "tpu", "--time", "2026-11-01", check_rc=0)
        xladb("ingest", "--db", db, gpu, "--run", "gpu", "--time", "2026-11-02", check_rc=0)
        out = xladb("check", "gpu", "--baseline", "tpu", "--db", db, "--format", "json", check_rc=3)
        report = json.loads(out.stdout)
        self.assertEqual(report["verdict"], "inconclusive")
        self.assertIn("backends (tpu in 'tpu', cuda in 'gpu')", report["reason"])

    def test_markdown_and_junit(self):
        db = os.path.join(self.tmp, "gate.db")
        self.ingest_fixture(db)
        md = xladb("check", "head", "--baseline", "base", "--db", db, "--format", "markdown", check_rc=1).stdout
        first = md.splitlines()[0]
        self.assertEqual(first, "**xladb check: FAIL**: 1 module regressed, 0 improved, 1 unchanged, 3 added, "
                                "2 removed against `base`")
        self.assertIn("- +64.0 KiB from `model.py:123` (1 buffer)", md)
        self.assertIn("<details><summary><code>jit_step#1</code>", md)
        self.assertEqual(md.count("<details>"), md.count("</details>"))
        junit = xladb("check", "head", "--baseline", "base", "--db", db, "--format", "junit", check_rc=1).stdout
        root = ET.fromstring(junit)
        suite = root.find("testsuite")
        self.assertEqual(int(suite.get("tests")), 7)
        self.assertEqual(int(suite.get("failures")), 1)
        self.assertEqual(int(suite.get("skipped")), 5)
        failed = [c for c in suite.findall("testcase") if c.find("failure") is not None]
        self.assertEqual([c.get("name") for c in failed], ["jit_step#1"])
        self.assertIn("model.py:123", failed[0].find("failure").text)
        # --output writes the report to a file (e.g. $GITHUB_STEP_SUMMARY), the verdict still on stderr.
        summary = os.path.join(self.tmp, "summary.md")
        out = xladb("check", "head", "--baseline", "base", "--db", db, "--format", "markdown", "--output", summary,
                    check_rc=1)
        self.assertEqual(out.stdout, "")
        self.assertEqual(read(summary), md)
        self.assertIn("FAIL", out.stderr)

    def test_markdown_stays_under_1_mib_on_5000_regressed_modules(self):
        base, head = os.path.join(self.tmp, "big-base"), os.path.join(self.tmp, "big-head")
        template = read(os.path.join(FIXTURE, "base", "module_0001.jit_step" + BA_SUFFIX))
        grown = read(os.path.join(FIXTURE, "head", "module_0001.jit_step" + BA_SUFFIX))
        for folder, text in ((base, template), (head, grown)):
            os.makedirs(folder)
            for i in range(5000):
                write(os.path.join(folder, f"module_{i:04d}.jit_model_{i:04d}_with_a_long_name{BA_SUFFIX}"), text)
        db = os.path.join(self.tmp, "big.db")
        xladb("ingest", "--db", db, base, "--run", "big-base", "--time", "2026-11-01", check_rc=0)
        xladb("ingest", "--db", db, head, "--run", "big-head", "--time", "2026-11-02", check_rc=0)
        md = xladb("check", "big-head", "--baseline", "big-base", "--db", db, "--format", "markdown",
                   check_rc=1).stdout
        self.assertLess(len(md.encode()), 1 << 20)
        self.assertTrue(md.startswith("**xladb check: FAIL**: 5000 modules regressed"))
        self.assertIn("Truncated to stay under", md)
        self.assertEqual(md.count("<details>"), md.count("</details>"))
        report = json.loads(xladb("check", "big-head", "--baseline", "big-base", "--db", db, "--format", "json",
                                  check_rc=1).stdout)
        self.assertEqual(report["summary"]["regressed"], 5000)

    def test_check_run_rpc_equals_the_offline_answer(self):
        db = os.path.join(self.tmp, "xladb.db")
        self.ingest_fixture(db)
        d = self.start(db=db)
        offline = xladb("check", "head", "--baseline", "base", "--db", db, "--format", "json", check_rc=1).stdout
        online = d.cli("check", "head", "--baseline", "base", "--format", "json", check=False)
        self.assertEqual(online.returncode, 1)
        self.assertEqual(online.stdout, offline)
        # The Python client gets the same verdict and numbers.
        resp = d.query.CheckRun(xladb_pb2.CheckRunRequest(run_name="head", baseline="base"), timeout=30)
        self.assertEqual(resp.verdict, xladb_pb2.CheckRunResponse.FAIL)
        self.assertEqual(resp.summary.regressed, 1)
        self.assertEqual(resp.modules[0].module, "jit_step")
        self.assertEqual(resp.modules[0].metrics[0].delta, 65536)
        # Every query command works offline and online alike.
        for args in (("runs",), ("modules", "head"), ("trend", "jit_twice"), ("diff", "base", "head"),
                     ("top", "head", "jit_step"), ("retraces", "head")):
            on = d.cli(*args, "--format", "json", check=False)
            off = xladb(*args, "--db", db, "--format", "json")
            self.assertEqual((on.returncode, on.stdout), (off.returncode, off.stdout), args)
        # An unknown module: stdout empty, exit 1, from trend and top alike, offline and online.
        for args in (("trend", "jit_nope"), ("top", "head", "jit_nope")):
            on = d.cli(*args, check=False)
            off = xladb(*args, "--db", db)
            for out in (on, off):
                self.assertEqual((out.returncode, out.stdout), (1, ""), args)
                self.assertIn("jit_nope", out.stderr)

    @unittest.skipUnless(HAVE_CORPUS, "shared corpus not present")
    def test_corpus_runs_and_a_copy_match_module_by_module(self):
        db = os.path.join(self.tmp, "corpus.db")
        a, b = "21_lorrax_scan_C", "22_lorrax_scan_cached_C"
        xladb("ingest", "--db", db, os.path.join(RUNS_DIR, a), "--run", a, "--time", "2026-07-01", check_rc=0)
        xladb("ingest", "--db", db, os.path.join(RUNS_DIR, b), "--run", b, "--time", "2026-07-02", check_rc=0)
        copy = os.path.join(self.tmp, "copy")
        shutil.copytree(os.path.join(RUNS_DIR, a), copy)
        xladb("ingest", "--db", db, copy, "--run", "copy-of-a", "--time", "2026-07-03", check_rc=0)
        for run, baseline in ((b, a), ("copy-of-a", a), ("copy-of-a", b)):
            report = json.loads(xladb("check", run, "--baseline", baseline, "--db", db, "--format", "json",
                                      check_rc=0).stdout)
            self.assertEqual(report["verdict"], "pass", (run, baseline))
            self.assertEqual(report["summary"]["unchanged"], 493, (run, baseline))
            self.assertEqual({m["status"] for m in report["modules"]}, {"unchanged"})
        # No module whose buffer assignment is byte-identical to a same-named one of the baseline is changed:
        # the diff lists none of them (the three jit__multi_slice recompiles differ in their HLO only).
        con = sqlite3.connect(db)
        self.addCleanup(con.close)
        pairs = con.execute(
            "SELECT COUNT(*), SUM(same_program) FROM module_matches WHERE run_name_a = ? AND run_name_b = ?",
            (a, b)).fetchone()
        self.assertEqual(pairs[0], 493)
        diff = json.loads(xladb("diff", a, b, "--db", db, "--format", "json", check_rc=0).stdout)
        changed = {r["module"] for r in diff if r["change"] == "CHANGED"}
        self.assertEqual(changed, {"jit__multi_slice"})  # in the dump root: xla_dump/ is not a module folder
        self.assertTrue(all(r["delta"] in (0, None) for r in diff if r["change"] == "CHANGED"))

    @unittest.skipUnless(HAVE_CORPUS, "shared corpus not present")
    def test_a_run_ingested_as_its_folder_and_as_its_xla_dump_has_one_identity(self):
        # Issue 22 item 1: `xladb ingest DIR` (DIR holding xla_dump/) and `xladb ingest DIR/xla_dump` store the
        # same modules under the same identities, so one checks against the other as unchanged.
        db = os.path.join(self.tmp, "arrivals.db")
        run_dir = os.path.join(RUNS_DIR, "21_lorrax_scan_C")
        xladb("ingest", "--db", db, run_dir, "--run", "as-dir", "--time", "2026-07-01", check_rc=0)
        xladb("ingest", "--db", db, os.path.join(run_dir, "xla_dump"), "--run", "as-xla-dump", "--time",
              "2026-07-02", check_rc=0)
        con = sqlite3.connect(db)
        self.addCleanup(con.close)

        def identities(run):
            return {row for row in con.execute(
                "SELECT m.folder, m.identity_key FROM modules m JOIN runs r USING (run_id) WHERE r.name = ?",
                (run,))}

        as_dir, as_xla_dump = identities("as-dir"), identities("as-xla-dump")
        self.assertGreater(len(as_dir), 400)
        self.assertEqual(as_dir, as_xla_dump)
        self.assertEqual({folder for folder, _ in as_dir}, {""})
        xladb("check", "as-xla-dump", "--baseline", "as-dir", "--db", db, check_rc=0)
        xladb("check", "as-dir", "--baseline", "as-xla-dump", "--db", db, check_rc=0)


if __name__ == "__main__":
    unittest.main()
