"""End-to-end tests of issue 22 items 7, 9 and 10 with the real xladb and xladbd: which peak (`top --at`, both
peaks named in `top` and `trend`, trend's default metric), names resolved out loud (`--xla-id`, the note on
stderr), `modules --sort/--limit/--stage/--all`, and `top` on a module without memory figures. Every command
runs offline (--db) and through xladbd, and both must print the same stdout, stderr and exit code.

Fixtures, with their truth read here from their files (or, where a README table says so, counted by hand):
  tests/fixtures/peaks      jit_peaks: XLA's printed peak list sums to 24608 at time 4; the padded live peak is
                            40976 at time 4 (README table); ags.3{1} f32[4096] (16384 bytes) is printed as 16
  tests/fixtures/gate/head  jit_twice compiled twice: module_0005 (f32[16]) and module_0006 (f32[48])
"""
import json
import os
import re
import shutil
import unittest

from test_gate import xladb
from test_service import SOURCE_DIR, DaemonTestCase

FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures")
PEAKS = os.path.join(FIXTURES, "peaks")
PEAKS_FILE = os.path.join(PEAKS, "module_0009.jit_peaks.after_optimizations-buffer-assignment.txt")
GATE_HEAD = os.path.join(FIXTURES, "gate", "head")
TWICE = "module_{:04d}.jit_twice.after_optimizations-buffer-assignment.txt"


def read(path):
    with open(path) as f:
        return f.read()


def total_bytes_used(path):
    return int(re.search(r"^Total bytes used: (\d+)", read(path), re.M).group(1))


def printed_peak(path):
    """(time, [(buffer, bytes)]) of the `Live ranges at T (peak):` list."""
    text = read(path)
    time = int(re.search(r"Live ranges at (\d+) \(peak\):", text).group(1))
    rows = re.findall(r"^    (\S+): (\d+) bytes", text.split("(peak):")[1], re.M)
    return time, [(name, int(size)) for name, size in rows]


class PeaksTest(DaemonTestCase):

    def setUp(self):
        super().setUp()
        self.db = os.path.join(self.tmp, "xladb.db")
        # A later run compiles head's f32[48] jit_twice as module_0007: following head's #6 by its identity
        # finds it there, filtering by the number 6 would not.
        later = os.path.join(self.tmp, "later")
        os.makedirs(later)
        shutil.copy(os.path.join(GATE_HEAD, TWICE.format(6)), os.path.join(later, TWICE.format(7)))
        # A run with a module that has only HLO text (no buffer assignment, no memory report).
        texts = os.path.join(self.tmp, "texts")
        shutil.copytree(GATE_HEAD, texts)
        shutil.copy(os.path.join(FIXTURES, "hlo_module", "short_parsable_2022.txt"),
                    os.path.join(texts, "module_0042.jit_text_only.before_optimizations.txt"))
        for folder, run, day in ((PEAKS, "peaks", "2026-11-01"), (GATE_HEAD, "head", "2026-11-02"),
                                 (later, "later", "2026-11-03"), (texts, "texts", "2026-11-04")):
            xladb("ingest", "--db", self.db, folder, "--run", run, "--time", day, check_rc=0)
        self.daemon = self.start(db=self.db)

    def both(self, *args, rc=0):
        """The command offline and through xladbd: the same exit code, stdout and stderr; the offline result."""
        off = xladb(*args, "--db", self.db)
        on = self.daemon.cli(*args, check=False)
        self.assertEqual((on.returncode, on.stdout, on.stderr), (off.returncode, off.stdout, off.stderr), args)
        self.assertEqual(off.returncode, rc, f"{args}: {off.stderr}")
        return off

    def test_top_names_both_peaks_and_lists_xla_or_padded(self):
        peak_time, peak_list = printed_peak(PEAKS_FILE)
        xla_peak = sum(size for _, size in peak_list)
        self.assertEqual((peak_time, xla_peak), (4, 24608))
        out = self.both("top", "peaks", "jit_peaks", "--format", "json")
        self.assertIn(f"XLA's printed peak {xla_peak} bytes at time {peak_time}; "
                      "padded live peak 40976 bytes at time 4", out.stderr)
        self.assertIn("buffers: XLA's printed peak list at time 4", out.stderr)
        rows = json.loads(out.stdout)
        self.assertEqual(sorted((r["buffer"], r["logical_bytes"]) for r in rows), sorted(peak_list))
        # The two peaks differ by more than 10%: said, with the buffer XLA counted at pointer size.
        self.assertIn("XLA's printed peak (24.0 KiB at time 4) is 40% below the padded live peak (40.0 KiB at time 4); "
                      "XLA counted ags.3{1} (f32[4096]{0}, 16.0 KiB) as 16 bytes", out.stderr)
        # --at padded: the five slices live at time 4 (README table), largest first, with their lifetimes.
        out = self.both("top", "peaks", "jit_peaks", "--at", "padded", "--format", "json")
        self.assertIn("buffers: live at the padded live peak (from live ranges, one per allocation slice) at time 4",
                      out.stderr)
        rows = [(r["buffer"], r["size_bytes"], r["live"]) for r in json.loads(out.stdout)]
        self.assertEqual(rows, [("agd.5{}", 16384, "4-5"), ("ags.3{1}", 16384, "2-4"), ("cmul.4{}", 4096, "3-4"),
                                ("p.0{}", 4096, "0-5"), ("ags.3{}", 16, "2-4")])
        self.assertEqual(sum(size for _, size, _ in rows), 40976)
        self.assertNotIn("fft.1{}", [r[0] for r in rows])  # live 1-3: gone by time 4
        self.both("top", "peaks", "jit_peaks", "--at", "both", rc=2)

    def test_trend_defaults_to_the_padded_peak_and_shows_xlas_beside_it(self):
        out = self.both("trend", "jit_peaks", "--format", "csv")
        header = out.stdout.splitlines()[0].split(",")
        self.assertEqual(header[6:9], ["live_peak_padded_bytes", "change", "peak_bytes"])
        row = json.loads(self.both("trend", "jit_peaks", "--format", "json").stdout)[0]
        self.assertEqual((row["live_peak_padded_bytes"], row["peak_bytes"]), (40976, 24608))
        out = self.both("trend", "jit_peaks", "--metric", "peak", "--format", "csv")
        self.assertEqual(out.stdout.splitlines()[0].split(",")[6:9], ["peak_bytes", "change", "live_peak_padded_bytes"])
        # No live ranges (and no peak list) in the gate fixture: the default falls back and says so.
        out = self.both("trend", "jit_twice", "--format", "json")
        self.assertIn("jit_twice: no compile has live ranges, so no padded live peak: showing total_bytes instead",
                      out.stderr)
        self.assertIn("total_bytes", json.loads(out.stdout)[0])

    def test_trend_follows_one_compile_of_a_named_run(self):
        totals = {i: total_bytes_used(os.path.join(GATE_HEAD, TWICE.format(i))) for i in (5, 6)}
        self.assertGreater(totals[6], totals[5])
        # --xla-id picks in one run: without --run it is a usage error.
        out = self.both("trend", "jit_twice", "--xla-id", "6", rc=2)
        self.assertIn("name the run with --run RUN", out.stderr)
        for args in (("--xla-id", "6"), ()):
            out = self.both("trend", "jit_twice", "--run", "head", *args, "--format", "json")
            points = [(p["run"], p["xla_id"], p["total_bytes"]) for p in json.loads(out.stdout)]
            self.assertEqual(points, [("head", 6, totals[6]), ("later", 7, totals[6]), ("texts", 6, totals[6])], args)
        self.assertNotIn("compiles in run", xladb("trend", "jit_twice", "--run", "head", "--xla-id", "6",
                                                  "--db", self.db).stderr)
        self.assertIn("jit_twice: 2 compiles in run head; showing #6, the largest by total_bytes; choose with --xla-id",
                      out.stderr)
        # Without --run every compile is its own series, and the note says how to follow one.
        out = self.both("trend", "jit_twice", "--metric", "total")
        self.assertIn("jit_twice: 2 compiles in run head; showing every compile's series; follow one with --run head "
                      "--xla-id", out.stderr)

    def test_top_and_report_resolve_a_name_out_loud(self):
        note = "jit_twice: 2 compiles in run head; showing #6, the largest by total_bytes; choose with --xla-id"
        out = self.both("top", "head", "jit_twice")
        self.assertIn(note, out.stderr)
        self.assertIn("module jit_twice (stage after_optimizations, xla id 6)", out.stderr)
        out = self.both("top", "head", "jit_twice", "--xla-id", "5")
        self.assertNotIn("compiles in run", out.stderr)
        self.assertIn("module jit_twice (stage after_optimizations, xla id 5)", out.stderr)
        self.both("top", "head", "jit_twice", "--xla-id", "9", rc=1)
        for where in ("off", "on"):
            page = os.path.join(self.tmp, f"{where}.html")
            args = ("report", "head", "--module", "jit_twice", "-o", page)
            out = xladb(*args, "--db", self.db) if where == "off" else self.daemon.cli(*args, check=False)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn(note, out.stderr)
            self.assertIn(note, read(page))
        self.assertEqual(read(os.path.join(self.tmp, "off.html")), read(os.path.join(self.tmp, "on.html")))

    def test_modules_largest_first_with_memory_figures_only_unless_all(self):
        names = ("jit_step", "jit_new_name", "jit_added") + tuple(f"jit_twice#{i}" for i in (5, 6))
        files = {"jit_step": "module_0001.jit_step", "jit_new_name": "module_0002.jit_new_name",
                 "jit_added": "module_0003.jit_added", "jit_twice#5": "module_0005.jit_twice",
                 "jit_twice#6": "module_0006.jit_twice"}
        totals = {n: total_bytes_used(os.path.join(GATE_HEAD, files[n] + ".after_optimizations-buffer-assignment.txt"))
                  for n in names}
        by_total = sorted(totals.values(), reverse=True)
        rows = json.loads(self.both("modules", "texts", "--format", "json").stdout)
        self.assertEqual([r["total_bytes"] for r in rows], by_total)
        self.assertNotIn("jit_text_only", [r["module"] for r in rows])
        rows = json.loads(self.both("modules", "texts", "--limit", "2", "--format", "json").stdout)
        self.assertEqual([r["total_bytes"] for r in rows], by_total[:2])
        rows = json.loads(self.both("modules", "texts", "--all", "--format", "json").stdout)
        self.assertEqual(len(rows), len(names) + 1)
        self.assertEqual(rows[-1]["module"], "jit_text_only")  # no total: last
        rows = json.loads(self.both("modules", "texts", "--all", "--stage", "before_optimizations",
                                    "--format", "json").stdout)
        self.assertEqual([r["module"] for r in rows], ["jit_text_only"])
        rows = json.loads(self.both("modules", "texts", "--sort", "name", "--format", "json").stdout)
        self.assertEqual([r["module"] for r in rows], sorted(n.split("#")[0] for n in names))
        out = self.both("modules", "texts", "--sort", "bogus", rc=2)
        self.assertIn("--sort must be name, peak, total, temp", out.stderr)

    def test_top_on_a_module_without_memory_says_what_is_missing(self):
        out = self.both("top", "texts", "jit_text_only")
        self.assertIn("module jit_text_only (stage before_optimizations, xla id 42): no buffer assignment or memory "
                      "report is stored for it (only its HLO text), so it has no peak and no buffers", out.stderr)
        self.assertNotIn("-1", out.stderr + out.stdout)


if __name__ == "__main__":
    unittest.main()
