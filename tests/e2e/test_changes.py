"""End-to-end tests of `xladb changes` and the ListChanges RPC: the change points of a run history.

The hand-made history (tests/fixtures/history, its README.md states the truth) has a growth at h3 from a named
source line, a shrink at h5, a reshape at h6, a retrace alone at h4 that is not a memory change, a module in one
run only, and a run of another branch between h2 and h3. The expected figures are read from the fixture's files
(allocation lines), never from the store.
"""
import json
import os
import re
import unittest

from test_service import CORPUS_DIR, HAVE_CORPUS, RUNS_DIR, SOURCE_DIR, DaemonTestCase, xladb_pb2
from test_gate import xladb

HISTORY = os.path.join(SOURCE_DIR, "tests", "fixtures", "history")
RUN_ORDER = ("h1", "h2", "dev1", "h3", "h4", "h5", "h6")
BA_SUFFIX = ".after_optimizations-buffer-assignment.txt"
STEP, ACCUMULATE = "module_0001.jit_step", "module_0004.jit_accumulate"


def allocation_sizes(run, stem):
    with open(os.path.join(HISTORY, run, stem + BA_SUFFIX)) as f:
        text = f.read()
    return text, [int(x) for x in re.findall(r"^allocation \d+: size (\d+)", text, re.M)]


def total(run, stem):
    """The file's `Total bytes used`, checked against the sum of its allocation lines."""
    text, sizes = allocation_sizes(run, stem)
    printed = int(re.search(r"^Total bytes used: (\d+)", text, re.M).group(1))
    assert printed == sum(sizes), (run, stem, printed, sizes)
    return printed


def temp_bytes(run, stem):
    return allocation_sizes(run, stem)[1][2]  # allocation 2 is tmp.2


def point(c):
    return (c["run"], c["previous_run"], c["level"], c["module"], c["metric"], c["before"], c["after"], c["delta"])


class ChangesTest(DaemonTestCase):

    def setUp(self):
        super().setUp()
        self.db = os.path.join(self.tmp, "history.db")
        for run in RUN_ORDER:
            xladb("ingest", "--db", self.db, os.path.join(HISTORY, run), "--run", run, check_rc=0)

    def changes(self, *args, rc=0):
        out = xladb("changes", "--db", self.db, "--format", "json", *args, check_rc=rc)
        return json.loads(out.stdout) if rc == 0 else out

    def expected_main(self):
        """The README's three change points, from the files."""
        acc = (total("h5", ACCUMULATE), total("h6", ACCUMULATE))
        shrink = (total("h4", STEP), total("h5", STEP))
        growth = (total("h2", STEP), total("h3", STEP))
        return [("h6", "h5", "name", "jit_accumulate", "total_bytes", *acc, acc[1] - acc[0]),
                ("h5", "h4", "identity", "jit_step", "total_bytes", *shrink, shrink[1] - shrink[0]),
                ("h3", "h2", "identity", "jit_step", "total_bytes", *growth, growth[1] - growth[0])]

    def test_the_readme_figures_are_the_files(self):
        self.assertEqual([total(r, STEP) for r in RUN_ORDER], [6144, 6144, 18432, 10240, 10240, 4096, 4096])
        self.assertEqual([total(r, ACCUMULATE) for r in ("h1", "h5", "h6")], [12288, 12288, 24576])
        self.assertEqual(total("h4", "module_0002.jit_retrace"), 576)
        self.assertEqual(total("h4", "module_0003.jit_retrace"), 192)
        self.assertEqual(total("h1", "module_0005.jit_once"), 96)

    def test_the_change_points_of_the_main_branch_with_their_source_lines(self):
        r = self.changes("--label", "branch=main", "--attribute", "all")
        self.assertEqual([point(c) for c in r["changes"]], self.expected_main())
        self.assertEqual((r["change_count"], r["runs"], r["first_run"], r["last_run"]), (3, 6, "h1", "h6"))
        self.assertEqual(r["metrics"], ["total_bytes", "live_peak_padded_bytes"])
        self.assertEqual(r["notes"], [])
        acc, shrink, growth = r["changes"]
        # The growth at h3: tmp.2 at model.py:123, f32[1024] -> f32[2048].
        grew = temp_bytes("h3", STEP) - temp_bytes("h2", STEP)
        self.assertEqual(growth["by_source"], [{"source": "model.py:123", "delta": grew, "buffers": 1}])
        self.assertEqual([(a["change"], a["buffer"], a["delta"], a["source"]) for a in growth["attribution"]],
                         [("grew", "tmp.2", grew, "model.py:123")])
        self.assertEqual((growth["xla_module_id"], growth["previous_xla_module_id"], growth["attribution_scope"]),
                         (1, 1, "values"))
        shrank = temp_bytes("h5", STEP) - temp_bytes("h4", STEP)
        self.assertEqual([(a["change"], a["delta"], a["source"]) for a in shrink["attribution"]],
                         [("shrank", shrank, "model.py:123")])
        # The reshape at h6: another identity, so only the jit name's largest compile shows it; its three
        # buffers each doubled, and the signatures say why.
        self.assertEqual((acc["previous_entry_signature"], acc["entry_signature"]),
                         ("(f32[1024]) -> f32[1024]", "(f32[2048]) -> f32[2048]"))
        self.assertEqual(sorted((a["buffer"], a["change"], a["delta"]) for a in acc["attribution"]),
                         [("out.1", "grew", 4096), ("p.0", "grew", 4096), ("tmp.2", "grew", 4096)])
        self.assertEqual(acc["by_source"], [{"source": "", "delta": 8192, "buffers": 2},
                                            {"source": "model.py:200", "delta": 4096, "buffers": 1}])

    def test_a_retrace_alone_is_not_a_memory_change(self):
        # jit_retrace is compiled a second time, smaller, from h4: no change point at either level.
        r = self.changes("jit_retrace", "--label", "branch=main")
        self.assertEqual((r["changes"], r["change_count"]), ([], 0))
        modules = json.loads(xladb("modules", "h4", "--db", self.db, "--format", "json", check_rc=0).stdout)
        self.assertEqual(sorted(m["total_bytes"] for m in modules if m["module"] == "jit_retrace"), [192, 576])

    def test_one_module_is_listed_oldest_run_first(self):
        r = self.changes("jit_step", "--label", "branch=main")
        self.assertEqual([point(c) for c in r["changes"]], [self.expected_main()[2], self.expected_main()[1]])
        table = xladb("changes", "jit_step", "--label", "branch=main", "--db", self.db, check_rc=0).stdout
        self.assertTrue(table.startswith("xladb changes: 2 changes of jit_step in 6 runs (h1 … h6)\n"), table)
        self.assertIn("total_bytes: 6.0 KiB → 10.0 KiB (+4.0 KiB, +67%) since h2", table)
        self.assertIn("grew tmp.2{} +4.0 KiB at model.py:123", table)

    def test_labels_choose_the_history(self):
        # Every run: dev1 (another branch) comes between h2 and h3 and is jit_step's previous run at h3.
        r = self.changes()
        step = [(c["run"], c["previous_run"], c["delta"]) for c in r["changes"] if c["module"] == "jit_step"]
        self.assertEqual(step, [("dev1", "h2", total("dev1", STEP) - total("h2", STEP)),
                                ("h3", "dev1", total("h3", STEP) - total("dev1", STEP)),
                                ("h5", "h4", total("h5", STEP) - total("h4", STEP))])
        self.assertEqual(r["runs"], 7)
        self.assertEqual(len(self.changes("--label", "branch=main", "--label", "campaign=history")["changes"]), 3)

    def test_the_window_limits_where_changes_are_reported_not_what_they_compare_with(self):
        r = self.changes("--label", "branch=main", "--since", "h4")
        self.assertEqual([point(c) for c in r["changes"]], self.expected_main()[:2])
        self.assertEqual((r["runs"], r["first_run"], r["last_run"]), (2, "h5", "h6"))
        r = self.changes("--label", "branch=main", "--last", "1")
        self.assertEqual([point(c) for c in r["changes"]], self.expected_main()[:1])  # h5 lies before the window
        r = self.changes("--label", "branch=main", "--last", "4")
        self.assertEqual([point(c) for c in r["changes"]], self.expected_main())
        out = self.changes("--since", "h4", "--last", "2", rc=2)
        self.assertEqual(out.stdout, "")

    def test_a_module_absent_from_the_run_before_the_window_is_compared_with_its_last_run(self):
        # h7 compiles jit_once again (last seen in h1) with a temp twice as large. With --last 1 the window is h7
        # and the run before it, h6, lacks jit_once: its previous run is looked up, and it is h1.
        with open(os.path.join(HISTORY, "h1", "module_0005.jit_once" + BA_SUFFIX)) as f:
            text = f.read()
        grown = (text.replace("allocation 2: size 32,", "allocation 2: size 64,")
                 .replace("<2 tmp.2 @0> (size=32,offset=0): f32[8]{0}", "<2 tmp.2 @0> (size=64,offset=0): f32[16]{0}")
                 .replace("Total bytes used: 96 (96B)", "Total bytes used: 128 (128B)")
                 .replace("%tmp.2 = f32[8]{0} multiply(f32[8]{0} %x, f32[8]{0} %y)",
                          "%tmp.2 = f32[16]{0} multiply(f32[16]{0} %x, f32[16]{0} %y)"))
        self.assertEqual(grown.count("f32[16]"), 4)
        h7 = os.path.join(self.tmp, "h7")
        os.makedirs(h7)
        with open(os.path.join(h7, "module_0005.jit_once" + BA_SUFFIX), "w") as f:
            f.write(grown)
        xladb("ingest", "--db", self.db, h7, "--run", "h7", "--time", "2026-11-07T06:00:00Z", "--label", "branch=main",
              check_rc=0)
        before = total("h1", "module_0005.jit_once")
        after = sum(int(x) for x in re.findall(r"^allocation \d+: size (\d+)", grown, re.M))
        for window in (("--last", "1"), ("--since", "h6")):
            r = self.changes("--label", "branch=main", *window)
            self.assertEqual([point(c) for c in r["changes"]],
                             [("h7", "h1", "identity", "jit_once", "total_bytes", before, after, after - before)], window)
            self.assertEqual(r["changes"][0]["by_source"], [{"source": "model.py:250", "delta": 32, "buffers": 1}])

    def test_thresholds_in_bytes_and_percent(self):
        self.assertEqual([point(c) for c in self.changes("--label", "branch=main", "--min-bytes", "5KiB")["changes"]],
                         self.expected_main()[:2])
        # +100%, -60%, +67%: only the reshape reaches 70%.
        self.assertEqual([point(c) for c in self.changes("--label", "branch=main", "--min-percent", "70")["changes"]],
                         self.expected_main()[:1])
        self.assertEqual(self.changes("--label", "branch=main", "--limit", "1")["change_count"], 3)
        self.assertEqual(len(self.changes("--label", "branch=main", "--limit", "1")["changes"]), 1)
        table = xladb("changes", "--db", self.db, "--label", "branch=main", "--limit", "1", check_rc=0).stdout
        self.assertTrue(table.endswith("\n2 smaller change points not listed (--limit 0 lists all)\n"), table)
        table = xladb("changes", "jit_step", "--db", self.db, "--label", "branch=main", "--limit", "1",
                      check_rc=0).stdout
        self.assertIn("h3  jit_step#1", table)
        self.assertTrue(table.endswith("\n1 later change point not listed (--limit 0 lists all)\n"), table)

    def test_first_above_says_since_when(self):
        r = self.changes("--label", "branch=main", "--first-above", "8KiB", "--attribute", "none")
        self.assertEqual(r["first_above"], [
            {"module": "jit_accumulate", "stage": "after_optimizations", "folder": "", "metric": "total_bytes",
             "bytes": 8192, "first_run": "h1", "first_value": total("h1", ACCUMULATE), "since_run": "h1",
             "since_value": total("h1", ACCUMULATE), "latest_run": "h6", "latest_value": total("h6", ACCUMULATE)},
            {"module": "jit_step", "stage": "after_optimizations", "folder": "", "metric": "total_bytes",
             "bytes": 8192, "first_run": "h3", "first_value": total("h3", STEP), "since_run": None,
             "since_value": None, "latest_run": "h6", "latest_value": total("h6", STEP)}])
        r = self.changes("--label", "branch=main", "--first-above", "20000")
        self.assertEqual([(a["module"], a["first_run"], a["since_run"]) for a in r["first_above"]],
                         [("jit_accumulate", "h6", "h6")])
        r = self.changes("--label", "branch=main", "--first-above", "1GiB")
        self.assertEqual(r["first_above"], [])
        self.assertEqual(r["notes"], ["no jit name exceeded 1073741824 bytes in the runs considered"])

    def test_how_many_are_explained(self):
        r = self.changes("--label", "branch=main", "--attribute", "1")
        self.assertEqual([("attribution_scope" in c, len(c["attribution"])) for c in r["changes"]],
                         [(True, 3), (False, 0), (False, 0)])
        r = self.changes("--label", "branch=main", "--attribute", "none")
        self.assertFalse(any("attribution_scope" in c for c in r["changes"]))
        r = self.changes("--label", "branch=main", "--attribution", "1")
        self.assertEqual([(len(c["attribution"]), c["attribution_count"]) for c in r["changes"]],
                         [(1, 3), (1, 1), (1, 1)])
        self.changes("--attribute", "lots", rc=2)

    def test_short_histories_answer_with_a_note_and_exit_0(self):
        cases = [
            (("--label", "branch=nosuch"), "no run carries the labels branch=nosuch"),
            (("--label", "branch=dev"), "one run ('dev1'): no earlier run to compare with"),
            (("jit_once",), "module 'jit_once' is in one run only ('h1'): nothing to compare"),
            (("--since", "h6"), "no run after 'h6'"),
        ]
        for args, note in cases:
            out = xladb("changes", "--db", self.db, *args, check_rc=0)
            self.assertIn(note, out.stderr, args)
            self.assertEqual(json.loads(xladb("changes", "--db", self.db, "--format", "json", *args,
                                              check_rc=0).stdout)["notes"], [note], args)

    def test_runs_with_equal_times_are_said_and_ordered_as_stored(self):
        xladb("ingest", "--db", self.db, os.path.join(HISTORY, "h6"), "--run", "h6-again", check_rc=0)
        r = self.changes("--label", "branch=main")
        self.assertIn("runs 'h6' and 'h6-again' have the same run time: ordered as they were stored", r["notes"])
        self.assertEqual([point(c) for c in r["changes"]], self.expected_main())  # the same dump: no change

    def test_bad_requests_are_usage_errors_and_unknown_modules_exit_1(self):
        out = self.changes("no_such_module", rc=1)
        self.assertIn("module 'no_such_module' not found in any run", out.stderr)
        self.assertEqual(out.stdout, "")
        for args in (("--since", "nosuch"), ("--min-bytes", "12XB"), ("--first-above", "-1GiB"),
                     ("--metric", "bogus"), ("--format", "junit"), ("jit_[",), ("--last", "4294967296"),
                     ("--limit", "4294967296"), ("--min-percent", "nan")):
            out = self.changes(*args, rc=2)
            self.assertEqual(out.stdout, "", args)
            self.assertNotEqual(out.stderr, "", args)

    def test_markdown_is_a_nightly_summary(self):
        out = xladb("changes", "--db", self.db, "--label", "branch=main", "--since", "h4", "--format", "markdown",
                    check_rc=0).stdout
        self.assertTrue(out.startswith("**xladb changes: 2 changes since `h4` (`h5` … `h6`)**\n"), out)
        self.assertIn("| `h6` | `jit_accumulate` (jit name) | `after_optimizations` | total_bytes | "
                      "12.0 KiB → 24.0 KiB (+12.0 KiB, +100%) | `h5` |", out)
        self.assertIn("signature `(f32[1024]) -> f32[1024]` → `(f32[2048]) -> f32[2048]`", out)
        self.assertIn("- +4.0 KiB from `model.py:200` (1 buffer)", out)
        self.assertEqual(out.count("<details>"), 2)
        path = os.path.join(self.tmp, "summary.md")
        xladb("changes", "--db", self.db, "--label", "branch=main", "--since", "h4", "--format", "markdown",
              "--output", path, check_rc=0)
        with open(path) as f:
            self.assertEqual(f.read(), out)

    def test_offline_and_grpc_answers_are_equal(self):
        d = self.start(db=self.db)
        for args in ((), ("--label", "branch=main", "--first-above", "8KiB"), ("jit_step",),
                     ("--last", "2", "--format", "markdown"), ("--since", "h2", "--format", "csv")):
            fmt = () if "--format" in args else ("--format", "json")
            offline = xladb("changes", "--db", self.db, *fmt, *args, check_rc=0).stdout
            online = d.cli("changes", *fmt, *args).stdout
            self.assertEqual(online, offline, args)
        # And the Python client gets the same change points.
        answer = d.client.list_changes(labels={"branch": "main"}, attribute=-1, timeout=60)
        self.assertEqual([(c.run_name, c.previous_run_name, c.module, c.before, c.after, c.delta)
                          for c in answer.changes],
                         [(p[0], p[1], p[3], p[5], p[6], p[7]) for p in self.expected_main()])
        self.assertEqual(answer.changes[0].level, xladb_pb2.ChangePoint.NAME)
        self.assertEqual([b.source for b in answer.changes[2].by_source], ["model.py:123"])


@unittest.skipUnless(HAVE_CORPUS, "the corpus (../shared/corpus) is not here")
class CorpusCampaignChangesTest(DaemonTestCase):
    """Corpus runs 21 and 22 are one program compiled twice (the second from the cache), and run 21's own
    xla_dump folder is the same dump arriving another way: neither is a memory change."""

    def test_the_same_program_three_times_has_no_change_point(self):
        db = os.path.join(self.tmp, "campaign.db")
        for run, path, time in (("r21", "21_lorrax_scan_C", "2026-07-01"),
                                ("r22", "22_lorrax_scan_cached_C", "2026-07-02"),
                                ("r21x", os.path.join("21_lorrax_scan_C", "xla_dump"), "2026-07-03")):
            xladb("ingest", "--db", db, os.path.join(RUNS_DIR, path), "--run", run, "--time", time, check_rc=0)
        r = json.loads(xladb("changes", "--db", db, "--format", "json", check_rc=0).stdout)
        self.assertEqual((r["changes"], r["change_count"], r["runs"], r["notes"]), ([], 0, 3, []))
        # The same question with every metric compared: still none.
        r = json.loads(xladb("changes", "--db", db, "--format", "json", "--metric", "peak_bytes", "--metric",
                             "temp_bytes", "--metric", "color0_total_bytes", check_rc=0).stdout)
        self.assertEqual(r["change_count"], 0)


if __name__ == "__main__":
    unittest.main()
