"""The benchmark's ingest steps (a mixin of run_bench.Bench): generated buffer assignments of each size
end to end, parse only and per MB; the real run folder, again unchanged, and its buffer assignments alone."""
import json
import os
import re
import shutil

from bench_support import (MIB, StepError, best, count_all_rows, database_bytes, parse_ingest_output,
    remove_database, run_tool, table_breakdown)
from bench_report import fmt_mib, fmt_size_label, markdown_table, mb, verdict


class IngestSteps:
    """Buffer-assignment files of each size and the real run folder, beside bench/baseline.py. A mixin of
    run_bench.Bench: reads self.args, self.p and self.path(), and writes self.report."""

    # -- buffer-assignment files of each size: end to end, baseline, parse only, per-MB flatness ---------------

    def buffer_assignment_sizes(self):
        p = self.p
        results = []
        for spec in p.file_sizes:
            results.append(self.one_buffer_assignment(spec))
            print(f"   {fmt_size_label(spec)}: xladb {results[-1]['mb_s']:.1f} MB/s, "
                  f"baseline {results[-1]['base_mb_s']:.1f} MB/s, parse {results[-1]['parse_mb_s']:.1f} MB/s",
                  flush=True)
        big = results[-1]
        label = f"{fmt_size_label(big['spec'])} generated buffer assignment ({big['values']:,} values)"
        ratio = big["mb_s"] / big["base_mb_s"]
        self.report.target(
            "buffer assignment, end to end into the database", label,
            f"{big['mb_s']:.1f} MB/s ({big['seconds']:.2f} s)",
            f"{big['base_mb_s']:.1f} MB/s ({big['base_seconds']:.2f} s)", f"{ratio:.2f}×", fmt_mib(big["rss"]),
            "≥ 100 MB/s, ≥ 10× baseline, peak RSS ≤ 256 MiB",
            verdict([("MB/s", big["mb_s"] >= 100), ("×baseline", ratio >= 10), ("RSS", big["rss"] <= 256 * MIB)]))
        self.report.target(
            "the same, parse only (records discarded)", label,
            f"{big['parse_mb_s']:.1f} MB/s", f"{big['base_parse_mb_s']:.1f} MB/s (regexes, no database)",
            f"{big['parse_mb_s'] / big['base_parse_mb_s']:.2f}×", fmt_mib(big["parse_rss"]), "≥ 400 MB/s",
            verdict([("MB/s", big["parse_mb_s"] >= 400)]))
        per_mb = [r["seconds"] * 1e3 / mb(r["bytes"]) for r in results]
        mean = sum(per_mb) / len(per_mb)
        spread = max(abs(x / mean - 1) for x in per_mb)
        base_per_mb = [r["base_seconds"] * 1e3 / mb(r["bytes"]) for r in results]
        self.report.target(
            "ingest time per MB across sizes", ", ".join(fmt_size_label(r["spec"]) for r in results),
            ", ".join(f"{x:.1f}" for x in per_mb) + f" ms/MB (±{spread * 100:.0f}% of their mean)",
            ", ".join(f"{x:.1f}" for x in base_per_mb) + " ms/MB", "", "", "flat within ±20%",
            verdict([("flat", spread <= 0.20)]))
        self.report.target(
            "database size after ingest, generated buffer assignment", label,
            f"{mb(big['db_bytes']):,.1f} MB = {big['db_bytes'] / big['bytes']:.2f}× the text",
            f"{mb(big['base_db_bytes']):,.1f} MB = {big['base_db_bytes'] / big['bytes']:.2f}× (stores less)",
            "", "", "≤ 0.6× the text", verdict([("size", big["db_bytes"] / big["bytes"] <= 0.6)]))
        self.report.section("Buffer assignments by size", markdown_table(
            ["input", "values", "rows", "xladb", "MB/s", "ms/MB", "peak RSS", "database / text",
             "baseline", "baseline MB/s", "baseline RSS", "baseline database / text", "ratio", "parse only",
             "baseline parse only"],
            [[fmt_size_label(r["spec"]) + f" ({mb(r['bytes']):,.1f} MB)", f"{r['values']:,}", f"{r['rows']:,}",
              f"{r['seconds']:.2f} s", f"{r['mb_s']:.1f}", f"{r['seconds'] * 1e3 / mb(r['bytes']):.1f}",
              fmt_mib(r["rss"]), f"{r['db_bytes'] / r['bytes']:.2f}", f"{r['base_seconds']:.2f} s",
              f"{r['base_mb_s']:.1f}", fmt_mib(r["base_rss"]), f"{r['base_db_bytes'] / r['bytes']:.2f}",
              f"{r['mb_s'] / r['base_mb_s']:.2f}×", f"{r['parse_mb_s']:.1f} MB/s", f"{r['base_parse_mb_s']:.1f} MB/s"]
             for r in results]) + "\n\n"
            f"xladb: `xladb ingest FILE --db fresh.db`, wall time of the process (best of {p.repeat}, a fresh "
            "database each time; peak RSS is the highest of those runs). Baseline: `bench/baseline.py FILE --db "
            "fresh.db` (allocations, values and live ranges only; xladb also stores the file's instructions, "
            "schedule, peak list and metadata). Parse only: `xladb_parse FILE` and the baseline's `load()` with "
            "its database calls discarded, each timed inside the process.")
        self.big_file_result = big

    def one_buffer_assignment(self, spec):
        a, p = self.args, self.p
        path = self.path(f"ba-{spec}-buffer-assignment.txt")
        gen = run_tool([a.gen, "buffer-assignment", "--bytes", spec, "--seed", "1", "--out", path])
        m = re.search(r"(\d+) values", gen.stdout)
        values = int(m.group(1)) if m else 0
        size = os.path.getsize(path)
        db = self.path(f"ba-{spec}.db")
        base_db = self.path(f"ba-{spec}-baseline.db")
        runs, base_runs, parse_runs, base_parse = [], [], [], []
        for _ in range(p.repeat):
            remove_database(db)
            runs.append(run_tool([a.xladb, "ingest", path, "--db", db]))
            summary = parse_ingest_output(runs[-1].stdout)
            if summary.verdicts.get("ingested") != 1:
                raise StepError(f"xladb did not ingest {path}: {summary.verdicts}")
            remove_database(base_db)
            base_runs.append(run_tool([a.python, a.baseline, path, "--db", base_db]))
            parse_runs.append(run_tool([a.parse, path]))
            base_parse.append(run_tool([a.python, "-c", BASELINE_PARSE_ONLY, a.baseline, path]))
        xladb_rows = count_all_rows(db)
        tables = table_breakdown(db)
        page = self.module_page_timing(db) if spec == p.file_sizes[-1] else None
        parse_m = [re.search(r"([\d.]+) MB, (\d+) records in ([\d.]+) s", m.stdout) for m in parse_runs]
        if not all(parse_m) or int(parse_m[0].group(2)) == 0:
            raise StepError(f"xladb_parse output unexpected: {parse_runs[0].stdout.strip()}")
        parse_seconds = min(float(m.group(3)) for m in parse_m)
        base_parse_seconds = min(json.loads(m.stdout)["seconds"] for m in base_parse)
        e2e, base = best(runs), best(base_runs)
        result = dict(
            spec=spec, bytes=size, values=values, rows=xladb_rows,
            seconds=e2e.seconds, mb_s=mb(size) / e2e.seconds, rss=e2e.rss_bytes, db_bytes=database_bytes(db),
            base_seconds=base.seconds, base_mb_s=mb(size) / base.seconds, base_rss=base.rss_bytes,
            base_db_bytes=database_bytes(base_db),
            parse_mb_s=mb(size) / parse_seconds, parse_rss=max(m.rss_bytes for m in parse_runs),
            base_parse_mb_s=mb(size) / base_parse_seconds, tables=tables, page=page)
        os.remove(path)
        remove_database(db)
        remove_database(base_db)
        return result

    # -- the real run folder ---------------------------------------------------------------------------------------

    def real_run_folder(self):
        a, p = self.args, self.p
        folder = os.path.normpath(a.run_folder) if a.run_folder else ""
        name = os.path.basename(folder) or "(none)"
        if not folder or not os.path.isdir(folder):
            note = (f"skipped: {folder} is absent (the shared corpus is not on this machine)" if folder
                    else "skipped: --run-folder ''")
            for scenario, target in (("real run folder", "≤ 2 s"),
                                     ("the same folder again, unchanged", "≤ 0.3 s, 0 rows written"),
                                     ("database size after ingest, real run folder", "≤ 0.6× the text")):
                self.report.target(scenario, name, "", "", "", "", target, note)
            return
        files = [os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs]
        on_disk = sum(os.path.getsize(f) for f in files)
        db = self.path("run-folder.db")
        first = self.fresh_ingests(folder, db)
        summary = parse_ingest_output(first[-1].stdout)
        rows_stored = count_all_rows(db)
        again = [run_tool([a.xladb, "ingest", folder, "--db", db]) for _ in range(p.repeat)]
        again_summary = parse_ingest_output(again[-1].stdout)
        rows_after = count_all_rows(db)
        db_bytes = database_bytes(db)
        # The baseline reads only the buffer-assignment files (its one format) of the folder.
        ba_files = sorted(f for f in files if f.endswith("-buffer-assignment.txt"))
        ba_bytes = sum(os.path.getsize(f) for f in ba_files)
        base_db = self.path("run-folder-baseline.db")
        base_runs = []
        for _ in range(p.repeat):
            remove_database(base_db)
            base_runs.append(run_tool([a.python, a.baseline, *ba_files, "--db", base_db]))
        e2e, unchanged, base = best(first), best(again), best(base_runs)
        self.small_real_files(folder, name, ba_files, ba_bytes, e2e, base, base_runs, len(files))
        text_bytes = summary.mb * 1e6
        label = f"{name}: {len(files):,} files, {mb(on_disk):.1f} MB ({summary.mb:.1f} MB parsed)"
        self.report.target(
            "real run folder", label,
            f"{e2e.seconds:.2f} s ({len(files) / e2e.seconds:,.0f} files/s, {rows_stored:,} rows)",
            f"{base.seconds:.2f} s for its {len(ba_files)} buffer-assignment files only ({mb(ba_bytes):.1f} MB)",
            "", fmt_mib(e2e.rss_bytes), "≤ 2 s", verdict([("time", e2e.seconds <= 2)]))
        written = rows_after - rows_stored
        self.report.target(
            "the same folder again, unchanged", label,
            f"{unchanged.seconds:.2f} s, {again_summary.rows} rows reported, {written} rows added",
            "n/a (reloads everything)", "", fmt_mib(unchanged.rss_bytes), "≤ 0.3 s, 0 rows written",
            verdict([("time", unchanged.seconds <= 0.3), ("rows", again_summary.rows == 0 and written == 0)]))
        self.report.target(
            "database size after ingest, real run folder", label,
            f"{mb(db_bytes):.1f} MB = {db_bytes / text_bytes:.2f}× the {summary.mb:.1f} MB parsed",
            "", "", "", "≤ 0.6× the text", verdict([("size", db_bytes / text_bytes <= 0.6)]))
        self.report.section("Ingesting a real run folder", markdown_table(
            ["run folder", "files", "verdicts", "bytes on disk", "bytes parsed", "wall", "files/s", "MB/s parsed",
             "peak RSS", "rows", "database"],
            [[name, f"{len(files):,}", ", ".join(f"{n} {v}" for v, n in summary.verdicts.items()),
              f"{mb(on_disk):.1f} MB", f"{summary.mb:.1f} MB", f"{e2e.seconds:.2f} s",
              f"{len(files) / e2e.seconds:,.0f}", f"{summary.mb / e2e.seconds:.1f}", fmt_mib(e2e.rss_bytes),
              f"{rows_stored:,}", f"{mb(db_bytes):.2f} MB"],
             [name + " again (unchanged)", f"{len(files):,}",
              ", ".join(f"{n} {v}" for v, n in again_summary.verdicts.items()), f"{mb(on_disk):.1f} MB", "0",
              f"{unchanged.seconds:.2f} s", f"{len(files) / unchanged.seconds:,.0f}", "n/a",
              fmt_mib(unchanged.rss_bytes), f"{written} added", "unchanged"],
             [f"baseline: its {len(ba_files)} buffer-assignment files", f"{len(ba_files):,}", "", "",
              f"{mb(ba_bytes):.1f} MB", f"{base.seconds:.2f} s", f"{len(ba_files) / base.seconds:,.0f}",
              f"{mb(ba_bytes) / base.seconds:.1f}", fmt_mib(base.rss_bytes), "",
              f"{mb(database_bytes(base_db)):.2f} MB"]])
            + f"\n\n`xladb ingest FOLDER --db fresh.db`, best of {p.repeat}; then the same command again on the "
            "filled database (rows counted in every table before and after). Rows: all rows of all tables.")
        remove_database(db)
        remove_database(base_db)

    def fresh_ingests(self, path, db):
        """`xladb ingest PATH --db DB` --repeat times, into a fresh database each time (the last one is kept)."""
        runs = []
        for _ in range(self.p.repeat):
            remove_database(db)
            runs.append(run_tool([self.args.xladb, "ingest", path, "--db", db]))
        return runs

    def small_real_files(self, folder, name, ba_files, ba_bytes, e2e, base, base_runs, folder_files):
        """The real folder's buffer-assignment files alone, through xladb (every fact it keeps) and the baseline,
        each timed as a whole process; the baseline also prints its own time inside the process (no interpreter
        start), the figure the issue's table set its targets against."""
        ba_folder = self.path("run-folder-buffer-assignments")
        for f in ba_files:
            dest = os.path.join(ba_folder, os.path.relpath(f, folder))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(f, dest)
        ba_db = self.path("run-folder-buffer-assignments.db")
        ba_runs = self.fresh_ingests(ba_folder, ba_db)
        ba_summary = parse_ingest_output(ba_runs[-1].stdout)
        if ba_summary.verdicts.get("ingested") != len(ba_files):
            raise StepError(f"xladb ingested {ba_summary.verdicts} of the {len(ba_files)} buffer assignments")
        ba_rows = count_all_rows(ba_db)
        ba = best(ba_runs)
        inside = []
        for m in base_runs:
            found = re.search(r"^baseline: [\d.]+ MB in ([\d.]+) s", m.stdout, re.M)
            if not found:
                raise StepError(f"the baseline printed no total line: {m.stdout.strip()[-300:]}")
            inside.append(float(found.group(1)))
        inside = min(inside)
        self.report.target(
            "small real files on SQLite: the buffer assignments of a real run",
            f"{name}: its {len(ba_files)} buffer-assignment files ({mb(ba_bytes):.1f} MB)",
            f"{ba.seconds:.3f} s ({ba_rows:,} rows)",
            f"{base.seconds:.3f} s as a process, {inside:.3f} s inside it",
            f"{base.seconds / ba.seconds:.2f}× ({inside / ba.seconds:.2f}× inside)", fmt_mib(ba.rss_bytes),
            "≥ 1× the loader inside its process (aim 2×)", verdict([("time", ba.seconds <= inside)]))
        self.report.target(
            "the whole real folder against the loader on its buffer assignments",
            f"{name}: {folder_files:,} files against {len(ba_files)}",
            f"{e2e.seconds:.3f} s", f"{base.seconds:.3f} s as a process, {inside:.3f} s inside it",
            f"{e2e.seconds / base.seconds:.1f}× the time ({e2e.seconds / inside:.1f}× inside)", "",
            "≤ 3× the loader's time inside its process", verdict([("time", e2e.seconds <= 3 * inside)]))
        remove_database(ba_db)
        shutil.rmtree(ba_folder, ignore_errors=True)


# The baseline's parse-only figure: its own load() with a database whose calls do nothing.
BASELINE_PARSE_ONLY = r"""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[1])))
import baseline

class DiscardingDatabase:
    lastrowid = 1
    def execute(self, *args):
        return self
    def executemany(self, *args):
        pass

t0 = time.perf_counter()
counts = baseline.load(DiscardingDatabase(), sys.argv[2])
print(json.dumps({"seconds": time.perf_counter() - t0, "rows": sum(counts)}))
"""
