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
import time
import unittest
import xml.etree.ElementTree as ET

from test_service import (CORPUS_DIR, HAVE_CORPUS, RUNS_DIR, SOURCE_DIR, XLADB, DaemonTestCase, grpc, wait_for,
                          xladb_pb2)

FIXTURE = os.path.join(SOURCE_DIR, "tests", "fixtures", "gate")
BA_SUFFIX = ".after_optimizations-buffer-assignment.txt"


def read(path):
    with open(path) as f:
        return f.read()


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def fixture_total_text(text):
    return int(re.search(r"^Total bytes used: (\d+)", text, re.M).group(1))


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
                                             "removed": 2, "ambiguous": 0, "accepted": 0, "ignored": 0,
                                             "reshaped": 0, "over_budget": 0, "within_budget": 0})
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
        # Without the ignores, added and removed modules are reported, not judged, once the regression is
        # tolerated; under the policy inconclusive or fail they decide the verdict.
        xladb("check", "head", "--baseline", "base", "--db", db, "--max-growth-bytes", "65536", check_rc=0)
        xladb("check", "head", "--baseline", "base", "--db", db, "--max-growth-bytes", "65536",
              "--on-added", "inconclusive", check_rc=3)
        xladb("check", "head", "--baseline", "base", "--db", db, "--max-growth-bytes", "65536",
              "--on-removed", "fail", check_rc=1)
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
        # Baselines: a run name that does not exist is a usage error (a mistyped baseline must not pass for
        # "inconclusive"); by label (the newest branch=main run before head), by commit prefix.
        out = xladb("check", "head", "--baseline", "nightly-0", "--db", db, "--format", "json", check_rc=2)
        self.assertEqual(out.stdout, "")
        self.assertIn("no run named 'nightly-0'", out.stderr)
        out = xladb("check", "head", "--baseline", "label:branch=main", "--db", db, "--format", "json", check_rc=1)
        self.assertEqual(json.loads(out.stdout)["baseline"], "base")
        out = xladb("check", "head", "--baseline", "commit:1111111", "--db", db, "--format", "json", check_rc=1)
        self.assertEqual(json.loads(out.stdout)["baseline"], "base")
        xladb("check", "head", "--baseline", "label:branch=nope", "--db", db, check_rc=3)
        # Usage errors: an unknown metric, an unknown run. A baseline that is the run itself compares equal.
        xladb("check", "head", "--baseline", "base", "--db", db, "--metric", "bogus", check_rc=2)
        xladb("check", "nope", "--baseline", "base", "--db", db, check_rc=2)
        out = xladb("check", "head", "--baseline", "head", "--db", db, "--format", "json", check_rc=0)
        self.assertEqual(json.loads(out.stdout)["summary"]["unchanged"],
                         len(os.listdir(os.path.join(FIXTURE, "head"))))

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
        self.assertEqual(first, "**xladb check: FAIL**: 1 regressed, 0 improved, 1 unchanged; 0 reshaped, 3 added, "
                                "2 removed (reported, not judged) against `base`")
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
        self.assertTrue(md.startswith("**xladb check: FAIL**: 5000 regressed"))
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
        resp = d.client.check_run(run_name="head", baseline="base", timeout=30)
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


CAMPAIGN = os.path.join(SOURCE_DIR, "tests", "fixtures", "campaign")


def bytes_of(shape):
    """Bytes of `f32[a,b]` / `c128[…]`, by hand: the element size times the dimensions."""
    dtype, dims = shape.rstrip("]").split("[")
    n = {"f32": 4, "c128": 16}[dtype]
    for d in filter(None, dims.split(",")):
        n *= int(d)
    return n


class CampaignTest(DaemonTestCase):
    """tests/fixtures/campaign (its README.md states the truth): five runs, each checked against the one before,
    under the default policy and each other one."""

    def ingest_campaign(self, db):
        for run in ("r1", "r2", "r3", "r4", "r5"):
            # The run's time and labels come from its xladb-run.toml; r4 arrives as r4/xla_dump/….
            xladb("ingest", "--db", db, os.path.join(CAMPAIGN, run), "--run", run, check_rc=0)

    def check(self, db, run, baseline, *flags, rc):
        out = xladb("check", run, "--baseline", baseline, "--db", db, "--format", "json", *flags, check_rc=rc)
        return json.loads(out.stdout)

    def test_totals_in_the_readme_are_the_files_sums(self):
        # The hand-computed figures the other tests use, read back from the files' allocation lines.
        self.assertEqual(3 * bytes_of("c128[21,9,8,8]"), 580608)
        self.assertEqual(3 * bytes_of("c128[21,9,4,4]"), 145152)
        for run, module, total in (("r1", "module_0005.jit_accumulate", 580608), ("r2", "module_0005.jit_accumulate",
                                                                                    145152),
                                   ("r1", "module_0006.jit_tau", 12288), ("r2", "module_0006.jit_tau", 12288),
                                   ("r1", "module_0001.jit_step", 6144), ("r3", "module_0001.jit_step", 10240),
                                   ("r1", "module_0004.jit_retrace", 576)):
            text = read(os.path.join(CAMPAIGN, run, module + BA_SUFFIX))
            sizes = [int(x) for x in re.findall(r"^allocation \d+: size (\d+)", text, re.M)]
            self.assertEqual(sum(sizes), total, (run, module))
            self.assertEqual(fixture_total_text(text), total, (run, module))

    def test_each_run_against_the_one_before_under_the_default_policy(self):
        db = os.path.join(self.tmp, "campaign.db")
        self.ingest_campaign(db)
        runs = json.loads(xladb("runs", "--db", db, "--format", "json", check_rc=0).stdout)
        self.assertEqual([r["run"] for r in runs], ["r5", "r4", "r3", "r2", "r1"])  # newest first, by file time

        # r2 against r1: a shrinking reshape, a tuple output of equal bytes, one retrace gone. Pass.
        r = self.check(db, "r2", "r1", rc=0)
        self.assertEqual(r["verdict"], "pass")
        self.assertEqual(r["summary"], {"regressed": 0, "improved": 0, "unchanged": 3, "added": 0, "removed": 1,
                                        "ambiguous": 0, "accepted": 0, "ignored": 0, "reshaped": 2,
                                        "over_budget": 0, "within_budget": 0})
        self.assertTrue(r["reason"].startswith("0 regressed, 0 improved, 3 unchanged; 2 reshaped, 0 added, "
                                               "1 removed (reported, not judged) against r1"), r["reason"])
        self.assertEqual([(m["status"], m["module"]) for m in r["modules"]],
                         [("reshaped", "jit_accumulate"), ("reshaped", "jit_tau"), ("removed", "jit_retrace"),
                          ("unchanged", "jit_retrace"), ("unchanged", "jit_retrace"), ("unchanged", "jit_step")])
        acc, tau = r["modules"][0], r["modules"][1]
        self.assertEqual((acc["matched_by"], acc["reshaped"], acc["xla_module_id"], acc["baseline_xla_module_id"]),
                         ("name", True, 5, 5))
        self.assertEqual(acc["baseline_entry_signature"], "(c128[21,9,8,8]) -> c128[21,9,8,8]")
        self.assertEqual(acc["entry_signature"], "(c128[21,9,4,4]) -> c128[21,9,4,4]")
        self.assertEqual(acc["metrics"]["total_bytes"],
                         {"baseline": 580608, "current": 145152, "delta": -435456, "regressed": False})
        # The attribution a matched pair gets: three buffers of c128[21,9,8,8] became c128[21,9,4,4].
        self.assertEqual(acc["attribution_count"], 3)
        self.assertEqual(sorted((a["change"], a["delta"]) for a in acc["attribution"]),
                         [("shrank", -145152)] * 3)
        self.assertEqual(tau["baseline_entry_signature"], "(f32[1024]) -> f32[1024]")
        self.assertEqual(tau["entry_signature"], "(f32[1024]) -> (f32[512], f32[512])")
        self.assertEqual(tau["metrics"]["total_bytes"]["delta"], 0)
        self.assertEqual([m["reshaped"] for m in r["modules"][2:]], [False] * 4)
        self.assertTrue(all("baseline_entry_signature" in m for m in r["modules"]))
        self.assertEqual(r["retraces"], [{"module": "jit_retrace", "stage": "after_optimizations", "folder": "",
                                          "baseline_compiles": 3, "current_compiles": 2, "failed": False}])
        unknown = {"baseline_max": None, "current_max": None, "baseline_sum": None, "current_sum": None}
        self.assertEqual(r["by_name"], [
            {"module": "jit_accumulate", "stage": "after_optimizations", "folder": "",
             "compiles": {"baseline": 1, "current": 1},
             "metrics": {"total_bytes": {"baseline_max": 580608, "current_max": 145152, "baseline_sum": 580608,
                                         "current_sum": 145152},
                         "live_peak_padded_bytes": unknown}},
            {"module": "jit_retrace", "stage": "after_optimizations", "folder": "",
             "compiles": {"baseline": 3, "current": 2},
             "metrics": {"total_bytes": {"baseline_max": 576, "current_max": 320, "baseline_sum": 192 + 320 + 576,
                                         "current_sum": 192 + 320},
                         "live_peak_padded_bytes": unknown}}])
        every = self.check(db, "r2", "r1", "--by-name", "all", rc=0)
        self.assertEqual([n["module"] for n in every["by_name"]],
                         ["jit_accumulate", "jit_retrace", "jit_step", "jit_tau"])
        # The table says it in words; a retrace-only change fails nothing.
        table = xladb("check", "r2", "--baseline", "r1", "--db", db, check_rc=0).stdout
        self.assertIn("signature: (c128[21,9,8,8]) -> c128[21,9,8,8] → (c128[21,9,4,4]) -> c128[21,9,4,4]", table)
        self.assertIn("jit_accumulate: 1 → 1 compile, largest total_bytes 567.0 KiB → 141.8 KiB (-75%)", table)
        self.assertIn("jit_retrace: 3 → 2 compiles, largest total_bytes 576 B → 320 B (-44%)", table)

        # r3 against r2: jit_step's temp buffer doubled (+4096 bytes at model.py:123); jit_sharded compiled twice.
        r = self.check(db, "r3", "r2", rc=1)
        self.assertEqual(r["summary"], {"regressed": 1, "improved": 0, "unchanged": 4, "added": 2, "removed": 0,
                                        "ambiguous": 0, "accepted": 0, "ignored": 0, "reshaped": 0,
                                        "over_budget": 0, "within_budget": 0})
        step = r["modules"][0]
        self.assertEqual((step["module"], step["status"]), ("jit_step", "regressed"))
        self.assertEqual(step["metrics"]["total_bytes"]["delta"], bytes_of("f32[2048]") - bytes_of("f32[1024]"))
        self.assertEqual(step["by_source"], [{"source": "model.py:123", "delta": 4096, "buffers": 1}])
        self.assertEqual(sorted((m["module"], m["xla_module_id"]) for m in r["modules"] if m["status"] == "added"),
                         [("jit_sharded", 7), ("jit_sharded", 8)])
        self.assertEqual([(n["module"], n["compiles"]) for n in r["by_name"]],
                         [("jit_sharded", {"baseline": 0, "current": 2}), ("jit_step", {"baseline": 1, "current": 1})])
        self.assertEqual(r["by_name"][0]["metrics"]["total_bytes"],
                         {"baseline_max": None, "current_max": 6144, "baseline_sum": None, "current_sum": 6144 + 4096})

        # r4 against r3: the same dump, arriving as r4/xla_dump/…: the root xla_dump folder is not part of
        # identity, so all 7 modules match as unchanged, none added or removed. Pass.
        r = self.check(db, "r4", "r3", rc=0)
        self.assertEqual({m["folder"] for m in r["modules"]}, {""})
        self.assertEqual((r["summary"]["unchanged"], r["summary"]["added"], r["summary"]["removed"],
                          r["summary"]["reshaped"], r["summary"]["ambiguous"]), (7, 0, 0, 0, 0))
        # jit_sharded's two compiles (same shapes, the sharding printed in their HLO texts differs) are two
        # identities, each matched by its own.
        replicated, split = "({replicated}) -> {replicated}", "({devices=[2]0,1}) -> {devices=[2]0,1}"
        self.assertEqual(sorted((m["xla_module_id"], m["matched_by"], m["entry_sharding"], m["baseline_entry_sharding"])
                                for m in r["modules"] if m["module"] == "jit_sharded"),
                         [(7, "identity", replicated, replicated), (8, "identity", split, split)])
        self.assertTrue(all(m["entry_sharding"] == "" for m in r["modules"] if m["module"] != "jit_sharded"))
        listed = json.loads(xladb("modules", "r4", "--db", db, "--format", "json", check_rc=0).stdout)
        self.assertEqual(sorted((m["xla_id"], m["entry_sharding"]) for m in listed if m["module"] == "jit_sharded"),
                         [(7, replicated), (8, split)])
        trend = json.loads(xladb("trend", "jit_sharded", "--db", db, "--format", "json", check_rc=0).stdout)
        self.assertEqual(sorted({(p["entry_sharding"], p["run"]) for p in trend}),
                         [(split, "r3"), (split, "r4"), (replicated, "r3"), (replicated, "r4")])
        self.assertEqual(sorted((p["run"], p["xla_id"], p["change"]) for p in trend),
                         [("r3", 7, None), ("r3", 8, None), ("r4", 7, 0), ("r4", 8, 0)])
        self.assertEqual(r["summary"]["regressed"], 0)

        # r5 against r4: only an OOM report, no module with a buffer assignment: the question stays open.
        r = self.check(db, "r5", "r4", rc=3)
        self.assertIn("run 'r5' has no module with a buffer assignment", r["reason"])

    def test_a_watched_run_and_an_upload_of_the_same_dump_check_as_equal(self):
        # r4's dump (r4/xla_dump/… beside its xladb-run.toml) dropped into a watched folder, and the same xla_dump
        # folder uploaded by `xladb ingest` through the daemon: one identity per module either way, so checking
        # the developer's upload against the CI run finds all 7 modules unchanged, none added or removed.
        root = os.path.join(self.tmp, "artifacts")
        os.makedirs(root)
        d = self.start("--watch", root, "--quiet-seconds", "0.3")
        staging = os.path.join(self.tmp, "staging", "nightly")
        shutil.copytree(os.path.join(CAMPAIGN, "r4"), staging)
        shutil.move(staging, os.path.join(root, "nightly"))
        wait_for(lambda: [r for r in d.cli_json("runs") if r["run"] == "nightly" and r["modules"] == 7],
                 what="the watched run to be ingested")
        self.assertIn("SUCCEEDED", d.cli("ingest", os.path.join(CAMPAIGN, "r4", "xla_dump"), "--run",
                                         "dev-upload").stdout)
        con = sqlite3.connect(d.db)
        self.addCleanup(con.close)

        def identities(run):
            return sorted(con.execute("SELECT m.folder, m.entry_sharding, m.identity_key FROM modules m "
                                      "JOIN runs r USING (run_id) WHERE r.name = ?", (run,)))

        self.assertEqual(identities("dev-upload"), identities("nightly"))
        self.assertEqual({folder for folder, _, _ in identities("nightly")}, {""})
        out = d.cli("check", "dev-upload", "--baseline", "nightly", "--format", "json")
        r = json.loads(out.stdout)
        self.assertEqual(r["verdict"], "pass")
        self.assertEqual((r["summary"]["unchanged"], r["summary"]["added"], r["summary"]["removed"],
                          r["summary"]["reshaped"], r["summary"]["ambiguous"]), (7, 0, 0, 0, 0))
        self.assertEqual({m["matched_by"] for m in r["modules"]}, {"identity"})  # each identity is one compile

    def test_memory_budgets_on_the_campaign(self):
        # Totals from tests/fixtures/campaign/README.md (each file's allocation sizes summed, checked by
        # test_totals_in_the_readme_are_the_files_sums): in r3 jit_step 10240, jit_accumulate 145152, jit_tau 12288,
        # jit_sharded 6144 (#7) and 4096 (#8), jit_retrace 192 (#2) and 320 (#3).
        db = os.path.join(self.tmp, "campaign.db")
        self.ingest_campaign(db)
        totals = {("jit_step", 1): 10240, ("jit_accumulate", 5): 145152, ("jit_tau", 6): 12288,
                  ("jit_sharded", 7): 6144, ("jit_sharded", 8): 4096, ("jit_retrace", 2): 192, ("jit_retrace", 3): 320}

        # Against a baseline: every module over 8 KiB fails the gate, whatever the comparison said.
        r = self.check(db, "r3", "r2", "--budget", "total_bytes=8KiB", rc=1)
        over = {(m["module"], m["xla_module_id"]) for m in r["modules"] if m["status"] == "over_budget"}
        self.assertEqual(over, {k for k, v in totals.items() if v > 8192})
        self.assertEqual(r["summary"]["over_budget"], 3)
        self.assertEqual([m["status"] for m in r["modules"]][:3], ["over_budget"] * 3)  # sorted first
        self.assertIn("fails: 3 modules over budget", r["reason"])
        step = next(m for m in r["modules"] if m["module"] == "jit_step")
        self.assertEqual(step["budget"], {"metric": "total_bytes", "max_bytes": 8192, "current": 10240,
                                          "percent": 125.0, "warn": False})
        self.assertEqual(step["metrics"]["total_bytes"]["delta"], 4096)  # the comparison's figures stay
        for m in r["modules"]:
            self.assertEqual(m["budget"]["current"], totals[(m["module"], m["xla_module_id"])])
        # r2 against r1: jit_accumulate is a reshaped pair (reported, not judged) over its budget. It counts as
        # over budget, not as a judged reshape, and jit_tau stays a reported one.
        r = self.check(db, "r2", "r1", "--budget", "total_bytes=100KiB", rc=1)
        self.assertTrue(r["reason"].startswith("1 over budget, 0 regressed, 0 improved, 3 unchanged; 1 reshaped, "
                                               "0 added, 1 removed (reported, not judged)"), r["reason"])
        table = xladb("check", "r3", "--baseline", "r2", "--db", db, "--budget", "total_bytes=8KiB", check_rc=1).stdout
        self.assertIn("budget: total_bytes 10.0 KiB of 8.0 KiB (125%): over budget", table)
        junit = ET.fromstring(xladb("check", "r3", "--baseline", "r2", "--db", db, "--budget", "total_bytes=8KiB",
                                    "--format", "junit", check_rc=1).stdout)
        failures = [c.get("name") for c in junit.iter("testcase") if c.find("failure") is not None]
        self.assertEqual(sorted(failures), ["jit_accumulate#5", "jit_step#1", "jit_tau#6"])

        # No baseline: the budgets alone decide, pass or fail, never inconclusive. 145152 of 146000 is 99.4%.
        out = xladb("check", "r3", "--db", db, "--budget", "total_bytes=146000", "--format", "json", check_rc=0)
        r = json.loads(out.stdout)
        self.assertEqual((r["verdict"], r["baseline"]), ("pass", None))
        self.assertEqual((r["summary"]["over_budget"], r["summary"]["within_budget"]), (0, 7))
        acc = r["modules"][0]
        self.assertEqual((acc["module"], acc["status"], acc["budget"]["percent"], acc["budget"]["warn"]),
                         ("jit_accumulate", "within_budget", 99.4, True))
        self.assertEqual([m["status"] for m in r["modules"]], ["within_budget"] * 7)
        md = xladb("check", "r3", "--db", db, "--budget", "total_bytes=10000", "--format", "markdown",
                   check_rc=1).stdout
        self.assertIn("**xladb check: FAIL**: 3 over budget, 4 within budget (budgets only, no baseline)", md)
        self.assertIn("- `jit_step#1` (`after_optimizations`): total_bytes 10.0 KiB of 9.8 KiB (102%): over budget", md)

        # From a config: the first budget whose pattern matches applies; warn_percent; flags come first.
        config = os.path.join(self.tmp, "budgets.toml")
        write(config, 'warn_percent = 100\n[[budget]]\npattern = "jit_s*"\nmetric = "total_bytes"\n'
                      'max_bytes = "10KiB"\n[[budget]]\npattern = "jit_tau"\nmetric = "total_bytes"\n'
                      'max_bytes = 12288\n')
        r = json.loads(xladb("check", "r3", "--db", db, "--config", config, "--format", "json", check_rc=0).stdout)
        self.assertEqual(sorted((m["module"], m["xla_module_id"], m["budget"]["percent"], m["budget"]["warn"])
                                for m in r["modules"]),
                         [("jit_sharded", 7, 60.0, False), ("jit_sharded", 8, 40.0, False),
                          ("jit_step", 1, 100.0, True), ("jit_tau", 6, 100.0, True)])
        r = json.loads(xladb("check", "r3", "--db", db, "--config", config, "--budget", "total_bytes=10000",
                             "--format", "json", check_rc=1).stdout)
        self.assertEqual(r["summary"]["over_budget"], 3)  # the flag's budget matches every module first

        # `modules --budget`: the same headroom, a column.
        listed = json.loads(xladb("modules", "r3", "--db", db, "--budget", "total_bytes=11000", "--format", "json",
                                  check_rc=0).stdout)
        self.assertEqual({(m["module"], m["xla_id"]): m["budget"] for m in listed}[("jit_step", 1)],
                         "total_bytes 10.0 KiB of 10.7 KiB (93%): near the budget")  # 10240 of 11000
        self.assertEqual({(m["module"], m["xla_id"]): m["budget"] for m in listed}[("jit_tau", 6)],
                         "total_bytes 12.0 KiB of 10.7 KiB (112%): over budget")  # 12288 of 11000

        # Bad budgets: exit 2 naming the file, line and key; a pattern that matches nothing warns, exit unchanged.
        for size, line in (('"3 parsecs"', 4), ("-5", 4), ('"1.5"', 4)):
            write(config, '[[budget]]\npattern = "jit_step"\nmetric = "total_bytes"\nmax_bytes = ' + size + "\n")
            out = xladb("check", "r3", "--db", db, "--config", config, check_rc=2)
            self.assertEqual(out.stdout, "")
            self.assertIn(f"{config}:{line}: budget[1].max_bytes: must be a size above 0", out.stderr)
        write(config, '[[budget]]\npattern = "jit_nothing*"\nmetric = "total_bytes"\nmax_bytes = "1GiB"\n')
        out = xladb("check", "r3", "--baseline", "r2", "--db", db, "--config", config, check_rc=1)  # jit_step regressed
        self.assertIn("warning: budget 'jit_nothing*' (total_bytes) matches no module of run 'r3'", out.stderr)
        out = xladb("check", "r3", "--db", db, "--budget", "total_bytes=-1KiB", check_rc=2)
        self.assertIn("--budget total_bytes=-1KiB: METRIC=SIZE", out.stderr)
        out = xladb("check", "r3", "--db", db, check_rc=2)
        self.assertIn("check needs --baseline, or budgets", out.stderr)

    def test_each_policy_on_the_campaign(self):
        db = os.path.join(self.tmp, "campaign.db")
        self.ingest_campaign(db)
        # r2 against r1: 2 reshaped, 1 removed, 0 added.
        r = self.check(db, "r2", "r1", "--on-reshaped", "judge", rc=0)
        self.assertEqual(r["summary"], {"regressed": 0, "improved": 1, "unchanged": 4, "added": 0, "removed": 1,
                                        "ambiguous": 0, "accepted": 0, "ignored": 0, "reshaped": 0,
                                        "over_budget": 0, "within_budget": 0})
        judged = {m["module"]: (m["status"], m["reshaped"]) for m in r["modules"] if m["matched_by"] == "name"}
        self.assertEqual(judged, {"jit_accumulate": ("improved", True), "jit_tau": ("unchanged", True)})
        self.assertIn("; 2 reshaped (judged); 0 added, 1 removed (reported, not judged)", r["reason"])
        for flags, rc in ((("--on-reshaped", "fail"), 1), (("--on-reshaped", "inconclusive"), 3),
                          (("--on-removed", "fail"), 1), (("--on-removed", "inconclusive"), 3),
                          (("--on-added", "fail"), 0), (("--on-added", "inconclusive"), 0),
                          (("--on-reshaped", "report"), 0)):
            r = self.check(db, "r2", "r1", *flags, rc=rc)
            self.assertEqual(r["verdict"], {0: "pass", 1: "fail", 3: "inconclusive"}[rc], flags)
        # The same from a config file; a flag wins over the config.
        config = os.path.join(self.tmp, "gate.toml")
        write(config, 'on_reshaped = "fail"\non_removed = "inconclusive"\n')
        r = self.check(db, "r2", "r1", "--config", config, rc=1)
        self.assertIn("fails: 2 modules reshaped", r["reason"])
        self.check(db, "r2", "r1", "--config", config, "--on-reshaped", "report", rc=3)
        # A config that names an unknown policy: exit 2 naming the file, line and key; stdout empty.
        write(config, '\non_added = "warn"\n')
        out = xladb("check", "r2", "--baseline", "r1", "--db", db, "--config", config, check_rc=2)
        self.assertEqual(out.stdout, "")
        self.assertIn(config + ":2: on_added: unknown policy 'warn'", out.stderr)
        # r3 against r2 (1 regressed, 2 added): the regression fails whatever the policy; tolerated, the added
        # modules decide.
        self.check(db, "r3", "r2", "--on-added", "inconclusive", rc=1)
        self.check(db, "r3", "r2", "--max-growth-bytes", "4096", rc=0)
        self.check(db, "r3", "r2", "--max-growth-bytes", "4096", "--on-added", "fail", rc=1)
        self.check(db, "r3", "r2", "--max-growth-bytes", "4096", "--on-added", "inconclusive", rc=3)
        self.check(db, "r3", "r2", "--max-growth-bytes", "4096", "--on-removed", "fail", rc=0)
        # A retrace that grows fails only when asked: jit_retrace 2 -> 3 compiles checking r1 against r2.
        self.check(db, "r1", "r2", rc=0)
        r = self.check(db, "r1", "r2", "--fail-on-retrace-growth", rc=1)
        self.assertEqual([(c["module"], c["failed"]) for c in r["retraces"]], [("jit_retrace", True)])

    def test_diff_shows_reshaped_pairs_and_the_roll_up_offline_and_online(self):
        db = os.path.join(self.tmp, "campaign.db")
        self.ingest_campaign(db)
        rows = json.loads(xladb("diff", "r1", "r2", "--db", db, "--format", "json", check_rc=0).stdout)
        # Module rows (buffer rows are indented and match buffers, also "by name").
        reshaped = {r["module"]: (r["signature_a"], r["signature_b"]) for r in rows
                    if r["matched_by"] == "name" and r["change"] == "CHANGED"}
        self.assertEqual(reshaped, {
            "jit_accumulate": ("(c128[21,9,8,8]) -> c128[21,9,8,8]", "(c128[21,9,4,4]) -> c128[21,9,4,4]"),
            "jit_tau": ("(f32[1024]) -> f32[1024]", "(f32[1024]) -> (f32[512], f32[512])")})
        out = xladb("diff", "r1", "r2", "--db", db, check_rc=0)
        self.assertIn("jit_retrace: 3 → 2 compiles", out.stderr)
        # The diff page (the gate as a page) shows the reshaped pairs with both signatures and the roll-up.
        page = os.path.join(self.tmp, "diff.html")
        xladb("report", "r2", "--baseline", "r1", "--db", db, "--output", page, check_rc=0)
        html = read(page)
        self.assertIn("Reshaped: <code>(c128[21,9,8,8]) -&gt; c128[21,9,8,8]</code> (#5) → "
                      "<code>(c128[21,9,4,4]) -&gt; c128[21,9,4,4]</code>", html)
        self.assertIn("0 regressed · 0 improved · 2 reshaped · 0 added · 1 removed", html)
        self.assertIn("jit_retrace: 3 → 2 compiles, largest total_bytes 576 B → 320 B (-44%)", html)
        d = self.start(db=db)
        for args in (("diff", "r1", "r2"), ("check", "r2", "--baseline", "r1"),
                     ("check", "r2", "--baseline", "r1", "--on-reshaped", "judge", "--by-name", "all")):
            on = d.cli(*args, "--format", "json", check=False)
            off = xladb(*args, "--db", db, "--format", "json")
            self.assertEqual((on.returncode, on.stdout, on.stderr), (off.returncode, off.stdout, off.stderr), args)
        resp = d.client.diff_runs(run_a="r1", run_b="r2", timeout=30)
        # diff rolls up peak, total, temp and padded live peak: jit_tau's temp went 4096 -> 4080 (-16 bytes).
        self.assertEqual([(n.module, n.baseline_compiles, n.current_compiles) for n in resp.by_name],
                         [("jit_accumulate", 1, 1), ("jit_retrace", 3, 2), ("jit_tau", 1, 1)])
        tau = {m.metric: (m.baseline_sum, m.current_sum) for m in resp.by_name[2].metrics}
        self.assertEqual((tau["temp_bytes"], tau["total_bytes"]), ((4096, 4080), (12288, 12288)))
        # A baseline named by a run name that does not exist: NOT_FOUND from the RPC, exit 2 from the CLI.
        with self.assertRaises(grpc.RpcError) as e:
            d.client.check_run(run_name="r2", baseline="nosuchrun", timeout=30)
        self.assertEqual(e.exception.code(), grpc.StatusCode.NOT_FOUND)
        out = d.cli("check", "r2", "--baseline", "nosuchrun", check=False)
        self.assertEqual((out.returncode, out.stdout), (2, ""))
        self.assertIn("no run named 'nosuchrun'", out.stderr)
        with self.assertRaises(grpc.RpcError) as e:
            d.client.check_run(run_name="r2", baseline="r1", on_added="judge", timeout=30)
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)

    def test_missing_data_is_inconclusive_and_other_errors_are_listed(self):
        db = os.path.join(self.tmp, "errors.db")
        xladb("ingest", "--db", db, os.path.join(CAMPAIGN, "r2"), "--run", "r2", check_rc=0)
        broken = os.path.join(self.tmp, "broken")
        shutil.copytree(os.path.join(CAMPAIGN, "r2"), broken)
        os.remove(os.path.join(broken, "xladb-run.toml"))
        binary = bytes((i * 37) % 256 for i in range(8192))
        # A before-optimizations HLO text that does not read: listed, not judged.
        with open(os.path.join(broken, "module_0001.jit_step.before_optimizations.txt"), "wb") as f:
            f.write(binary)
        xladb("ingest", "--db", db, broken, "--run", "hlo-error", "--time", "2026-11-03", check_rc=1)
        r = self.check(db, "hlo-error", "r2", rc=0)
        self.assertEqual([(f["path"], f["module"], f["xla_module_id"], f["judged"]) for f in r["error_files"]],
                         [("module_0001.jit_step.before_optimizations.txt", "jit_step", 1, False)])
        # A buffer assignment that does not read, of a module with no row: missing data, inconclusive.
        with open(os.path.join(broken, "module_0009.jit_lost.after_optimizations-buffer-assignment.txt"), "wb") as f:
            f.write(binary)
        xladb("ingest", "--db", db, broken, "--run", "ba-error", "--time", "2026-11-04", check_rc=1)
        r = self.check(db, "ba-error", "r2", rc=3)
        self.assertIn("missing data for jit_lost#9 in 'ba-error'", r["reason"])
        self.assertEqual(r["summary"]["unchanged"], 5)
        # Either run: the error counts when it is in the baseline too.
        self.check(db, "r2", "ba-error", rc=3)

    def test_bad_input_gets_a_verdict_never_a_crash(self):
        db = os.path.join(self.tmp, "bad.db")
        xladb("ingest", "--db", db, os.path.join(CAMPAIGN, "r2"), "--run", "r2", check_rc=0)
        # A run with no modules at all.
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty)
        write(os.path.join(empty, "notes.txt"), "nothing here\n")
        xladb("ingest", "--db", db, empty, "--run", "empty", "--time", "2026-11-05", check_rc=0)
        r = self.check(db, "empty", "r2", rc=3)
        self.assertIn("has no module with a buffer assignment", r["reason"])
        r = self.check(db, "r2", "empty", rc=3)
        self.assertIn("baseline 'empty' has no module with a buffer assignment", r["reason"])
        # The run against itself: every module unchanged.
        r = self.check(db, "r2", "r2", rc=0)
        self.assertEqual(r["summary"]["unchanged"], 5)
        # A name compiled 1,000 times on each side, every signature different across the runs (1,000 x 1,000
        # candidate pairs): the reshaped pairing stays fast and pairs each compile with its nearest shape.
        template = read(os.path.join(CAMPAIGN, "r2", "module_0002.jit_retrace" + BA_SUFFIX))
        for run, offset in (("many-a", 1), ("many-b", 2)):
            folder = os.path.join(self.tmp, run)
            os.makedirs(folder)
            for i in range(1000):
                n = 2 * i + offset  # odd sizes in many-a, even in many-b: no signature in common
                write(os.path.join(folder, f"module_{i + 1:04d}.jit_many{BA_SUFFIX}"),
                      template.replace("f32[16]", f"f32[{n}]"))
            xladb("ingest", "--db", db, folder, "--run", run, "--time", f"2026-12-0{offset}", check_rc=0)
        started = time.monotonic()
        r = self.check(db, "many-b", "many-a", rc=0)
        self.assertLess(time.monotonic() - started, 60)
        self.assertEqual(r["summary"]["reshaped"], 1000)
        pairs = {(m["baseline_entry_signature"], m["entry_signature"]) for m in r["modules"]}
        self.assertIn(("(f32[1]) -> f32[1]", "(f32[2]) -> f32[2]"), pairs)
        self.assertIn(("(f32[1999]) -> f32[1999]", "(f32[2000]) -> f32[2000]"), pairs)
        # 1000 -> 1000 compiles, and every file's allocation lines say 64 + 64 + 64 bytes whatever its shapes: the
        # roll-up row did not change, so it is listed only with --by-name all.
        self.assertEqual(r["by_name"], [])
        r = self.check(db, "many-b", "many-a", "--by-name", "all", rc=0)
        self.assertEqual(r["by_name"][0]["compiles"], {"baseline": 1000, "current": 1000})
        self.assertEqual(r["by_name"][0]["metrics"]["total_bytes"],
                         {"baseline_max": 192, "current_max": 192, "baseline_sum": 192000, "current_sum": 192000})


if __name__ == "__main__":
    unittest.main()
