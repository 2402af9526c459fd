#!/usr/bin/python3
"""xladb's benchmark: measures every target of the performance issue beside the Python baseline and writes
docs/PERFORMANCE.md.

Run it through scripts/bench.sh, which builds the Release binaries first:

    scripts/bench.sh                     # full size: ~45 min, ~35 GB under $TMPDIR (deleted after)
    scripts/bench.sh --size quick        # a 100-run query store instead of 1,000: minutes
    scripts/bench.sh --size smoke        # tiny inputs, well under a minute
    /usr/bin/python3 bench/run_bench.py --build-dir build/release --size smoke --no-write

What it runs, all on inputs it generates under a fresh work folder (xladb_gen) except the real run folder:
  * buffer-assignment files of each size (full: 10 MiB, 100 MiB, 1 GiB): `xladb ingest FILE --db fresh.db` end to
    end and bench/baseline.py on the same file (best of --repeat, fresh databases), xladb_parse and the
    baseline's own regex loop with its database calls discarded (parse only);
  * the real run folder (../shared/corpus/runs/21_lorrax_scan_C; skipped with a note when absent): ingest into a
    fresh database, then again unchanged (0 rows must be written: checked by counting every table); its
    buffer-assignment files alone through xladb and through the baseline;
  * PostgreSQL beside SQLite (quick and full; --postgres-ingest): the real run folder and a generated buffer
    assignment (200 MiB) into a PostgreSQL 15 of a temporary cluster and into SQLite, schemas made first;
  * a store of --store-runs runs x --store-modules modules (xladb_gen folder per run, `xladb ingest --db`), served
    by xladbd on 127.0.0.1: PeakMemoryTrend, SpillRates top 20 and DiffRuns timed from a Python grpcio client
    (warm-up calls first), a 1,000,000-row Query (full size) streamed by `xladb sql --format csv`, and
    xladb_load with uploads running.

Exit status: 0 when every step ran, whether or not its target was met (the table says which); 1 when a step
failed (a tool exited non-zero, printed what was not expected, or returned a wrong result) — then the report is
printed but not written; 2 on a usage error. Standard library only, except the gRPC latency step, which uses
Debian's python3-grpcio (scripts/install-deps.sh installs it) with stubs that protoc generates into the work
folder. Peak RSS is each process's own maximum resident set (wait4), in MiB.
"""
import argparse
import collections
import dataclasses
import datetime
import json
import math
import os
import platform
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
DEFAULT_RUN_FOLDER = os.path.join(REPO_DIR, "..", "shared", "corpus", "runs", "21_lorrax_scan_C")
MIB = 1024 * 1024

# The scenario sizes; a smaller store than this is said so in the table.
TARGET_STORE_RUNS = 1000
TARGET_STORE_MODULES = 500


@dataclasses.dataclass
class Profile:
    """The sizes of one bench run (--size)."""
    file_sizes: list          # xladb_gen --bytes values, smallest first; the largest carries the 1 GiB targets
    repeat: int               # best of this many runs for throughput figures
    store_runs: int
    store_modules: int
    store_batch: int          # runs generated (and deleted) per ingest batch
    rpc_calls: int            # timed calls per RPC after warm-up
    rpc_warmup: int
    diff_calls: int
    query_rows: int
    load_seconds: float
    load_clients: int
    upload_modules: int       # modules of the folder xladb_load keeps uploading
    catch_up_runs: int        # real-size runs xladbd catches up with (bench/catch_up.py)
    catch_up_backends: str    # on these stores
    postgres_ingest: str = ""  # generated buffer assignment ingested into PostgreSQL beside SQLite ("": no step)
    postgres_tpu_modules: int = 0  # modules of a generated TPU run folder ingested there too (0: none)


PROFILES = {
    "smoke": Profile(file_sizes=["1M", "2M"], repeat=1, store_runs=5, store_modules=10, store_batch=5,
                     rpc_calls=20, rpc_warmup=5, diff_calls=5, query_rows=10_000, load_seconds=2, load_clients=4,
                     upload_modules=3, catch_up_runs=2, catch_up_backends="sqlite"),
    # The store: 1,000 runs × 500 modules (2,000,000 files, ~30 GB of database, most of the bench's
    # time). "quick" is the same with 100 runs, for a check in minutes.
    "full": Profile(file_sizes=["10M", "100M", "1G"], repeat=3, store_runs=1000, store_modules=500, store_batch=25,
                    rpc_calls=200, rpc_warmup=20, diff_calls=20, query_rows=1_000_000, load_seconds=10,
                    load_clients=8, upload_modules=20, catch_up_runs=100, catch_up_backends="sqlite,postgresql",
                    postgres_ingest="200M", postgres_tpu_modules=500),
    "quick": Profile(file_sizes=["10M", "100M", "1G"], repeat=3, store_runs=100, store_modules=500, store_batch=10,
                     rpc_calls=200, rpc_warmup=20, diff_calls=20, query_rows=1_000_000, load_seconds=10,
                     load_clients=8, upload_modules=20, catch_up_runs=10, catch_up_backends="sqlite,postgresql",
                     postgres_ingest="200M", postgres_tpu_modules=100),
}


# A slow RPC is timed for this long instead of its planned number of calls (but at least RPC_MIN_CALLS).
RPC_WARMUP_SECONDS = 10
RPC_TIMING_SECONDS = 60
RPC_MIN_CALLS = 10


class StepError(Exception):
    """A step of the bench failed (not a missed target)."""


# --- processes ---------------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Measured:
    seconds: float            # wall time, start to exit
    rss_bytes: int            # the process's own peak resident set
    stdout: str
    stderr: str


def run_tool(cmd, *, timeout=3600, stdout_path=None, check=True):
    """Runs `cmd` to completion and returns its wall time and peak RSS (wait4 on that one child). stdout goes to
    `stdout_path` when given (and is then not returned). Raises StepError when it exits non-zero (if `check`) or
    runs past `timeout` seconds."""
    cmd = [str(c) for c in cmd]
    # Dirty pages of an earlier step (a generated input, a database since deleted) are written back first, so
    # that writeback does not land in this run's own fsyncs.
    os.sync()
    out = open(stdout_path, "wb") if stdout_path else tempfile.TemporaryFile()
    with out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            proc.kill()
        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
        stdout = ""
        if not stdout_path:
            out.seek(0)
            stdout = out.read().decode(errors="replace")
    name = os.path.basename(cmd[0])
    if name.startswith("python"):
        name = next((os.path.basename(c) for c in cmd[1:] if c.endswith(".py")), name + " -c")
    if timed_out.is_set():
        raise StepError(f"{name} ran past {timeout} s")
    if check and proc.returncode != 0:
        raise StepError(f"{name} exited {proc.returncode}: {(stderr or stdout).strip()[-600:]}")
    return Measured(seconds, usage.ru_maxrss * 1024, stdout, stderr)


def best(runs):
    """The fastest of several Measured runs, with the highest peak RSS among them (the conservative one)."""
    fastest = min(runs, key=lambda m: m.seconds)
    return dataclasses.replace(fastest, rss_bytes=max(m.rss_bytes for m in runs))


def database_bytes(path):
    """A SQLite database's size on disk: the main file plus a WAL not yet checkpointed."""
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def table_breakdown(db_path):
    """(table, rows, bytes with its indexes) of every table holding data, largest first; [] without dbstat."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        owner = {name: tbl for name, tbl in db.execute(
            "SELECT name, tbl_name FROM sqlite_schema WHERE type IN ('table', 'index')")}
        try:
            pages = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
        except sqlite3.OperationalError:
            return []
        size = collections.Counter()
        for name, nbytes in pages:
            size[owner.get(name, name)] += nbytes
        out = []
        for table, nbytes in size.most_common():
            if table in owner and owner[table] == table and not table.startswith("sqlite_"):
                rows = db.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
                if rows:
                    out.append((table, rows, nbytes))
        return out
    finally:
        db.close()


def remove_database(path):
    for p in (path, path + "-wal", path + "-shm"):
        if os.path.exists(p):
            os.remove(p)


def count_all_rows(db_path):
    """Rows in every table of a database (read-only), to check that a pass wrote nothing."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")]
        return sum(db.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables)
    finally:
        db.close()


INGEST_LINE = re.compile(r"^run (\S+): (\d+) files \(([^)]*)\); (\d+) rows, ([\d.]+) MB in", re.M)


@dataclasses.dataclass
class IngestSummary:
    files: int
    verdicts: dict
    rows: int
    mb: float                 # the text the CLI says it read and parsed


def parse_ingest_output(stdout):
    """Sums the `run NAME: N files (...); R rows, M MB in ...` lines of `xladb ingest --db`."""
    total = IngestSummary(0, {}, 0, 0.0)
    matches = INGEST_LINE.findall(stdout)
    if not matches:
        raise StepError(f"xladb ingest printed no summary line: {stdout.strip()[:300]}")
    for _, files, verdicts, rows, mb in matches:
        total.files += int(files)
        total.rows += int(rows)
        total.mb += float(mb)
        for part in verdicts.split(", "):
            count, _, verdict = part.partition(" ")
            total.verdicts[verdict] = total.verdicts.get(verdict, 0) + int(count)
    if total.verdicts.get("error", 0):
        raise StepError(f"xladb ingest gave {total.verdicts['error']} files an error verdict")
    return total


class Daemon:
    """An xladbd on a free loopback port, stopped (SIGTERM, then SIGKILL) on exit."""

    def __init__(self, xladbd, db, *args, log=None):
        self.log = open(log or db + ".xladbd.log", "w")
        self.proc = subprocess.Popen([xladbd, "--db", db, "--listen", "127.0.0.1:0", *args],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        if "listening on " not in line:
            self.stop()
            raise StepError(f"xladbd did not start: {line.strip()} (log: {db}.xladbd.log)")
        self.addr = line.split("listening on ")[1].split()[0]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


# --- formatting --------------------------------------------------------------------------------------------------

def mb(n_bytes):
    return n_bytes / 1e6


def fmt_mib(n_bytes):
    return f"{n_bytes / MIB:,.0f} MiB" if n_bytes >= 100 * MIB else f"{n_bytes / MIB:,.1f} MiB"


def fmt_size_label(spec):
    """'10M' -> '10 MiB', '1G' -> '1 GiB' (xladb_gen's units are binary)."""
    return spec[:-1] + {"K": " KiB", "M": " MiB", "G": " GiB"}[spec[-1]]


def fmt_rate(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}"


def fmt_ms(x):
    return f"{x:,.1f} ms" if x >= 10 else f"{x:,.2f} ms"


def percentile(values, p):
    """Nearest-rank percentile; NaN of no values."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def verdict(parts):
    """'met' when every (name, ok) part holds, else 'not met (names)'."""
    missed = [name for name, ok in parts if not ok]
    return "met" if not missed else "not met (" + ", ".join(missed) + ")"


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# --- the report --------------------------------------------------------------------------------------------------

TARGET_HEADER = ["scenario", "input", "xladb", "baseline", "ratio", "peak RSS", "target", "met"]


class Report:
    """What the steps measured: the targets table, detail tables, notes and failures, in order."""

    def __init__(self):
        self.targets = []         # rows of TARGET_HEADER
        self.sections = []        # (title, text)
        self.notes = []
        self.failures = []

    def target(self, *row):
        assert len(row) == len(TARGET_HEADER)
        self.targets.append(list(row))

    def section(self, title, text):
        self.sections.append((title, text))

    def step(self, name, fn, *args):
        """Runs one step; a StepError (or any exception) is recorded as a failure and the bench goes on."""
        print(f"== {name}", flush=True)
        t0 = time.perf_counter()
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 (every failure is reported; the bench goes on)
            message = str(e) if isinstance(e, StepError) else f"{type(e).__name__}: {e}"
            print(f"FAILED: {name}: {message}", flush=True)
            self.failures.append(f"{name}: {message}")
            self.target(name, "", "FAILED", "", "", "", "", "step failed: " + message.replace("|", "/")[:200])
        print(f"   ({time.perf_counter() - t0:.1f} s)", flush=True)


# --- the bench ---------------------------------------------------------------------------------------------------

class Bench:
    def __init__(self, args, profile, work):
        self.args = args
        self.p = profile
        self.work = work
        self.report = Report()

    def path(self, *parts):
        return os.path.join(self.work, *parts)

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

    # -- the HTML report's pages (issue 11): render time of the biggest module page and of a 500-module run page

    def time_report(self, db, *args):
        """Best of `repeat` runs of `xladb report … --db db -o page.html`: (Measured, page bytes)."""
        out = self.path("report-page.html")
        runs = [run_tool([self.args.xladb, "report", *args, "--db", db, "-o", out]) for _ in range(self.p.repeat)]
        size = os.path.getsize(out)
        os.remove(out)
        return best(runs), size

    def module_page_timing(self, db):
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            run, module, xla_id, values = con.execute(
                "SELECT r.name, m.name, m.xla_module_id, s.value_count FROM modules m JOIN runs r USING (run_id) "
                "JOIN module_summary s USING (module_id) ORDER BY s.value_count DESC LIMIT 1").fetchone()
        finally:
            con.close()
        args = [run, "--module", module] + ([] if xla_id is None else ["--xla-id", str(xla_id)])
        measured, size = self.time_report(db, *args)
        return dict(seconds=measured.seconds, rss=measured.rss_bytes, bytes=size, values=values)

    def catching_up(self):
        """bench/catch_up.py: the daemon catching up with real-size runs on each store, queries meanwhile."""
        a, p = self.args, self.p
        if not a.run_folder or not os.path.isdir(a.run_folder):
            self.report.section("Catching up", "skipped: the corpus's run folder is absent from this machine")
            return
        out = run_tool([a.python, os.path.join(BENCH_DIR, "catch_up.py"), "--xladbd", a.xladbd,
                        "--runs", str(p.catch_up_runs), "--backends", p.catch_up_backends], timeout=4 * 3600)
        self.report.section(f"Catching up: {p.catch_up_runs} watched real-size runs", out.stdout.strip())

    def report_pages(self):
        big = getattr(self, "big_file_result", None)
        if big and big.get("page"):
            page = big["page"]
            self.report.target(
                "HTML report: module page of the largest generated module",
                f"{fmt_size_label(big['spec'])} buffer assignment ({page['values']:,} values)",
                f"{page['seconds']:.2f} s, {mb(page['bytes']):.2f} MB page", "", "", fmt_mib(page["rss"]),
                "measured (issue 11 sets no time); page ≤ 2 MiB", verdict([("size", page["bytes"] <= 2 * MIB)]))
        if hasattr(self, "store"):
            measured, size = self.time_report(self.store["db"], "nightly-0000")
            self.report.target(
                "HTML report: run page", f"a run of {self.store['modules']} modules in the {self.store_label()}",
                f"{measured.seconds:.2f} s, {mb(size):.2f} MB page", "", "", fmt_mib(measured.rss_bytes),
                "measured (issue 11 sets no time); page ≤ 2 MiB", verdict([("size", size <= 2 * MIB)]))

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

    # -- PostgreSQL beside SQLite: the same inputs into a store whose schema exists already ----------------------

    def postgres_ingest(self):
        p = self.p
        if not p.postgres_ingest:
            return
        server = self.path("postgres")
        script = os.path.join(REPO_DIR, "scripts", "postgres-test-server.sh")
        run_tool([script, "start", server], timeout=300)
        try:
            self.postgres_ingest_on(server)
            self.postgres_gate_on(server)
            self.postgres_runs_on(server)
        finally:
            run_tool([script, "stop", server], timeout=300, check=False)

    def postgres_ingest_on(self, server):
        a, p = self.args, self.p
        with open(os.path.join(server, "uri")) as f:
            uri = f.read().strip()
        empty = self.path("empty-folder")
        os.makedirs(empty, exist_ok=True)
        schemas = []

        def fresh_postgres():
            schema = f"bench{len(schemas)}"
            schemas.append(schema)
            run_tool(["/usr/lib/postgresql/15/bin/psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", uri,
                      "-c", f"CREATE SCHEMA {schema}"])
            target = f"{uri}?options=-csearch_path%3D{schema}"
            run_tool([a.xladb, "ingest", empty, "--db", target])  # the schema, not counted
            return target

        def fresh_sqlite():
            db = self.path("pg-side.db")
            remove_database(db)
            run_tool([a.xladb, "ingest", empty, "--db", db])
            return db

        inputs = []
        if a.run_folder and os.path.isdir(a.run_folder):
            inputs.append((f"real run folder {os.path.basename(os.path.normpath(a.run_folder))}", a.run_folder))
        generated = self.path(f"pg-{p.postgres_ingest}-buffer-assignment.txt")
        run_tool([a.gen, "buffer-assignment", "--bytes", p.postgres_ingest, "--seed", "1", "--out", generated])
        inputs.append((f"generated buffer assignment ({fmt_size_label(p.postgres_ingest)})", generated))
        # A TPU run's folder: beside each module's buffer assignment, memory report and HLO text, its bundle
        # profile (libtpu's utilization counters, hundreds a module), which the real GPU folder has none of.
        tpu_folder = self.path("pg-tpu-run")
        if p.postgres_tpu_modules:
            shutil.rmtree(tpu_folder, ignore_errors=True)
            run_tool([a.gen, "folder", "--modules", p.postgres_tpu_modules, "--backend", "tpu", "--seed", "1",
                      "--out", tpu_folder])
            inputs.append((f"generated TPU run folder (`xladb_gen folder --modules {p.postgres_tpu_modules}`, "
                           "utilization counters included)", tpu_folder))
        rows = []
        for label, path in inputs:
            sqlite_runs, pg_runs = [], []
            for _ in range(p.repeat):
                sqlite_runs.append(run_tool([a.xladb, "ingest", path, "--db", fresh_sqlite()]))
                pg_runs.append(run_tool([a.xladb, "ingest", path, "--db", fresh_postgres()]))
            lite, pg = best(sqlite_runs), best(pg_runs)
            stored, stored_lite = parse_ingest_output(pg_runs[-1].stdout), parse_ingest_output(sqlite_runs[-1].stdout)
            if stored.rows != stored_lite.rows:
                raise StepError(f"{label}: {stored.rows} rows into PostgreSQL, {stored_lite.rows} into SQLite")
            ratio = pg.seconds / lite.seconds
            self.report.target(
                "ingest into PostgreSQL 15 on 127.0.0.1 against SQLite (schema made before)", label,
                f"{pg.seconds:.2f} s ({stored.rows:,} rows)", f"SQLite {lite.seconds:.2f} s",
                f"{ratio:.1f}× the time", fmt_mib(pg.rss_bytes), "≤ 2× SQLite's time",
                verdict([("time", ratio <= 2)]))
            rows.append([label, f"{lite.seconds:.2f} s", f"{pg.seconds:.2f} s", f"{ratio:.1f}×", f"{stored.rows:,}"])
            if path == a.run_folder:
                rows.append(self.postgres_across_a_network(uri, path, label, fresh_postgres, lite.seconds))
        os.remove(generated)
        shutil.rmtree(tpu_folder, ignore_errors=True)
        remove_database(self.path("pg-side.db"))
        # The stores ingested here are dropped once measured: left in the cluster, autovacuum comes by a minute
        # later to read all their pages (millions of rows, inserted and never vacuumed), on the same two cores
        # as the gate and trend timings that follow.
        run_tool(["/usr/lib/postgresql/15/bin/psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", uri,
                  "-c", "DROP SCHEMA " + ", ".join(schemas) + " CASCADE"])
        self.report.section("PostgreSQL beside SQLite", markdown_table(
            ["input", "SQLite", "PostgreSQL", "PostgreSQL / SQLite", "rows"], rows)
            + f"\n\n`xladb ingest INPUT --db TARGET`, best of {p.repeat}, each into a store whose schema an ingest "
            "of an empty folder made first (a fresh SQLite file; a fresh PostgreSQL schema). PostgreSQL 15 runs in "
            "a temporary cluster on this machine (scripts/postgres-test-server.sh: fsync off, as in the tests), so "
            "its time is the statements' and the loopback's, not a disk's. Rows: as `xladb ingest` counts them, "
            "equal on both. The row through bench/latency_proxy.py holds every chunk 0.1 ms each way, a LAN's round "
            "trip: what the waits a file cost where the server is another machine (no target; measured, not "
            "gated).")

    def postgres_across_a_network(self, uri, folder, label, fresh_postgres, sqlite_seconds):
        """The real folder into PostgreSQL through bench/latency_proxy.py (0.1 ms each way): on loopback a wait
        for the server costs tens of microseconds, so the round trips a file makes hide in the row above; a
        team's shared server charges each one. A row of the "PostgreSQL beside SQLite" table."""
        a, p = self.args, self.p
        with socket.socket() as probe:  # a free port for the proxy
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server_port = re.search(r"@127\.0\.0\.1:(\d+)/", uri).group(1)
        proxy = subprocess.Popen([a.python, os.path.join(BENCH_DIR, "latency_proxy.py"), str(port), server_port,
                                  "0.0001"], stdout=subprocess.PIPE, text=True)
        try:
            if "forwarding" not in proxy.stdout.readline():
                raise StepError("bench/latency_proxy.py did not start")
            far = re.sub(r"@127\.0\.0\.1:\d+/", f"@127.0.0.1:{port}/", uri)
            script = self.path("select-1.sql")
            with open(script, "w") as f:
                f.write("SELECT 1;\n")
            ping = run_tool(["/usr/lib/postgresql/15/bin/pgbench", "-n", "-t", "500", "-f", script, far])
            rtt = float(re.search(r"latency average = ([\d.]+) ms", ping.stdout).group(1))
            runs = []
            for _ in range(p.repeat):
                target = fresh_postgres()
                runs.append(run_tool([a.xladb, "ingest", folder, "--db", target.replace(uri, far, 1)]))
            far_best = best(runs)
        finally:
            proxy.terminate()
            proxy.wait()
        return [f"{label}, through bench/latency_proxy.py: a {rtt:.2f} ms round trip (pgbench `SELECT 1`)",
                f"{sqlite_seconds:.2f} s", f"{far_best.seconds:.2f} s", f"{far_best.seconds / sqlite_seconds:.1f}×",
                f"{parse_ingest_output(runs[-1].stdout).rows:,}"]

    def postgres_gate_on(self, server):
        """The gate and the diff of two generated runs (every module reshaped between them) through xladbd on a
        SQLite store and on its copy in PostgreSQL (issue 25: each query within 2× of its SQLite figure)."""
        a, p = self.args, self.p
        schema = "gate_bench"
        db, src = self.path("gate-pair.db"), self.path("gate-pair-src")
        remove_database(db)
        names = []
        for run in (0, 99):
            d = os.path.join(src, f"nightly-{run:04d}")
            run_tool([a.gen, "folder", "--modules", p.store_modules, "--run", run, "--seed", "1", "--out", d])
            run_tool([a.xladb, "ingest", d, "--db", db], timeout=3600)
            names.append(f"nightly-{run:04d}")
        shutil.rmtree(src, ignore_errors=True)
        uri, target = self.copied_to_postgres(server, db, schema)
        _, pb, _ = load_grpc_stubs(self.path("pystubs"))
        calls = {
            "DiffRuns, 10 buffers a module (as `xladb diff`)": lambda stub: stub.DiffRuns(pb.DiffRunsRequest(
                run_a=names[0], run_b=names[1], buffer_level=True, max_buffers=10), timeout=120),
            "DiffRuns, 50 buffers a module (the API's default)": lambda stub: stub.DiffRuns(pb.DiffRunsRequest(
                run_a=names[0], run_b=names[1], buffer_level=True), timeout=120),
            "CheckRun (as `xladb check`)": lambda stub: stub.CheckRun(pb.CheckRunRequest(
                run_name=names[1], baseline=names[0]), timeout=120),
        }
        latencies, answers = self.time_on_both_backends(db, target, calls, "gate-pair", p.diff_calls,
                                                        max(1, p.rpc_warmup // 5))
        run_tool(["/usr/lib/postgresql/15/bin/psql", "-X", "-q", uri, "-c", f"DROP SCHEMA {schema} CASCADE"])
        reshaped = answers[("sqlite", "CheckRun (as `xladb check`)")].summary.reshaped
        if reshaped != p.store_modules:
            raise StepError(f"CheckRun of the two generated runs: {reshaped} reshaped modules, expected "
                            f"{p.store_modules}")
        remove_database(db)
        self.report_both_backends(
            f"two runs of {p.store_modules} modules, every one reshaped (nightly-0000 and nightly-0099)", calls,
            latencies, "The gate and the diff on PostgreSQL beside SQLite",
            f"generated by `xladb_gen folder --modules {p.store_modules} --run 0` (and `--run 99`), "
            "ingested into a SQLite file and copied into a PostgreSQL schema (`xladb copy`); xladbd on each, one "
            f"Python grpcio client, {p.diff_calls} timed calls of each RPC after warm-up ({max(1, p.rpc_warmup // 5)} "
            "calls). A two-run store, not the issue's 1,000 runs: these calls read the two runs' modules "
            "and values, whatever else the store holds.")

    def time_on_both_backends(self, db, target, calls, log_name, timed_calls, warmup_calls):
        """Each of `calls` (name -> call(stub)) through xladbd on the SQLite store `db` and on its PostgreSQL copy
        `target`: ({(backend, name): latencies in ms}, {(backend, name): first answer}). Raises StepError when a
        call's answers differ between the backends (byte for byte)."""
        a = self.args
        grpc, _, pb_grpc = load_grpc_stubs(self.path("pystubs"))
        latencies, answers = {}, {}
        spool = self.path(f"{log_name}-spool")
        os.makedirs(spool, exist_ok=True)
        for backend, store in (("sqlite", db), ("postgresql", target)):
            extra = ["--spool-dir", spool] if backend == "postgresql" else []
            with Daemon(a.xladbd, store, *extra, log=self.path(f"{log_name}-{backend}.xladbd.log")) as daemon:
                channel = grpc.insecure_channel(daemon.addr, options=[("grpc.max_receive_message_length", 1 << 30)])
                stub = pb_grpc.QueryServiceStub(channel)
                for name, call in calls.items():
                    answers[(backend, name)] = call(stub)  # the first warm-up call, kept to compare
                    for _ in range(warmup_calls - 1):
                        call(stub)
                    lat = []
                    for _ in range(timed_calls):
                        t0 = time.perf_counter()
                        call(stub)
                        lat.append((time.perf_counter() - t0) * 1e3)
                    latencies[(backend, name)] = lat
                channel.close()
        for name in calls:
            if answers[("sqlite", name)].SerializeToString() != answers[("postgresql", name)].SerializeToString():
                raise StepError(f"{name}: PostgreSQL's answer differs from SQLite's")
        return latencies, answers

    def report_both_backends(self, label, calls, latencies, section, how):
        """A target row per call (PostgreSQL's p95 within 2× of SQLite's), and a section of them all, `how` the
        store was made and the calls timed."""
        rows = []
        for name in calls:
            lite, pg = latencies[("sqlite", name)], latencies[("postgresql", name)]
            ratio = percentile(pg, 95) / percentile(lite, 95)
            self.report.target(f"{name} on PostgreSQL 15 against SQLite, gRPC on 127.0.0.1", label,
                               f"p95 {fmt_ms(percentile(pg, 95))} (p50 {fmt_ms(percentile(pg, 50))})",
                               f"SQLite p95 {fmt_ms(percentile(lite, 95))} (p50 {fmt_ms(percentile(lite, 50))})",
                               f"{ratio:.1f}×", "", "≤ 2× SQLite's p95", verdict([("p95", ratio <= 2)]))
            rows.append([name, f"{fmt_ms(percentile(lite, 50))} / {fmt_ms(percentile(lite, 95))}",
                         f"{fmt_ms(percentile(pg, 50))} / {fmt_ms(percentile(pg, 95))}", f"{ratio:.1f}×"])
        self.report.section(section, markdown_table(
            ["RPC", "SQLite p50 / p95", "PostgreSQL p50 / p95", "PostgreSQL / SQLite (p95)"], rows)
            + f"\n\n{label}: {how}")

    def copied_to_postgres(self, server, db, schema):
        """`db` copied (`xladb copy`) into a fresh schema of the bench's PostgreSQL: (server uri, store uri)."""
        with open(os.path.join(server, "uri")) as f:
            uri = f.read().strip()
        run_tool(["/usr/lib/postgresql/15/bin/psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", uri,
                  "-c", f"DROP SCHEMA IF EXISTS {schema} CASCADE", "-c", f"CREATE SCHEMA {schema}"])
        target = f"{uri}?options=-csearch_path%3D{schema}"
        run_tool([self.args.xladb, "copy", db, target], timeout=3600)
        return uri, target

    def postgres_runs_on(self, server):
        """ListRuns and PeakMemoryTrend over 100 labeled runs through xladbd on a SQLite store and on its copy in
        PostgreSQL (issue 25, fifth row: each within 2× of its SQLite figure). Small runs: these calls read the
        runs' rows and one module's series, not the modules' contents."""
        a, p = self.args, self.p
        schema = "runs_bench"
        db, src = self.path("runs-pg.db"), self.path("runs-pg-src")
        remove_database(db)
        n_runs = 100
        run_tool([a.gen, "runs", "--runs", n_runs, "--modules", 5, "--layers", 4, "--seed", "1", "--out", src])
        runs = sorted(os.listdir(src))
        run_tool([a.xladb, "ingest", *[os.path.join(src, r) for r in runs], "--db", db], timeout=3600)
        shutil.rmtree(src, ignore_errors=True)
        for i, run in enumerate(runs):  # two labels a run, as CI sets them
            run_tool([a.xladb, "label", run, "branch=main", f"commit={i:07x}", "--db", db])
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        module = con.execute("SELECT m.name FROM modules m ORDER BY m.module_id LIMIT 1").fetchone()[0]
        con.close()
        uri, target = self.copied_to_postgres(server, db, schema)
        _, pb, _ = load_grpc_stubs(self.path("pystubs"))
        calls = {
            f"ListRuns, a page of {n_runs} runs with two labels each": lambda stub: stub.ListRuns(
                pb.ListRunsRequest(page_size=n_runs), timeout=60),
            f"PeakMemoryTrend of one module over {n_runs} runs": lambda stub: stub.PeakMemoryTrend(
                pb.PeakMemoryTrendRequest(module=module), timeout=60),
        }
        latencies, answers = self.time_on_both_backends(db, target, calls, "runs-pg", p.rpc_calls, p.rpc_warmup)
        run_tool(["/usr/lib/postgresql/15/bin/psql", "-X", "-q", uri, "-c", f"DROP SCHEMA {schema} CASCADE"])
        listed = answers[("sqlite", next(iter(calls)))]
        if len(listed.runs) != n_runs or any(len(r.labels) != 2 for r in listed.runs):
            raise StepError(f"ListRuns of the {n_runs} labeled runs: {len(listed.runs)} runs, labels "
                            f"{sorted(set(len(r.labels) for r in listed.runs))}")
        remove_database(db)
        self.report_both_backends(
            f"{n_runs} runs of 5 modules, two labels each (xladb_gen runs)", calls, latencies,
            "Run lists and trends on PostgreSQL beside SQLite",
            f"generated by `xladb_gen runs --runs {n_runs} --modules 5 --layers 4`, labeled with "
            "`xladb label RUN branch=main commit=…`, ingested into a SQLite file and copied into a PostgreSQL "
            f"schema (`xladb copy`); xladbd on each, one Python grpcio client, {p.rpc_calls} timed calls of each RPC "
            f"after {p.rpc_warmup} warm-up calls. The query store's figures at 100 × 500 (above) are SQLite's; the "
            "PostgreSQL ratio is measured here, on a store small enough to copy in seconds.")

    # -- the store: built once, then queried through xladbd -------------------------------------------------------

    def build_store(self):
        """Generates runs in batches (the next batch while the current one is ingested), ingests them with
        `xladb ingest RUN... --db store.db`, deletes each batch's text after its ingest."""
        a, p = self.args, self.p
        db = self.path("store.db")
        remove_database(db)
        src = self.path("store-src")
        batches = [list(range(i, min(i + p.store_batch, p.store_runs))) for i in range(0, p.store_runs, p.store_batch)]

        def generate(batch):
            dirs, text = [], 0
            for run in batch:
                d = os.path.join(src, f"nightly-{run:04d}")
                out = run_tool([a.gen, "folder", "--modules", p.store_modules, "--run", run, "--seed", "1",
                                "--out", d])
                m = re.search(r"([\d.]+) MB in", out.stdout)
                text += float(m.group(1)) * 1e6 if m else 0
                dirs.append(d)
            return dirs, text

        ingest_seconds, text_bytes, files, rows = 0.0, 0.0, 0, 0
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(generate, batches[0])
            for i in range(len(batches)):
                dirs, text = pending.result()
                if i + 1 < len(batches):
                    pending = pool.submit(generate, batches[i + 1])
                m = run_tool([a.xladb, "ingest", *dirs, "--db", db], timeout=7200)
                s = parse_ingest_output(m.stdout)
                ingest_seconds += m.seconds
                text_bytes += text
                files += s.files
                rows += s.rows
                for d in dirs:
                    shutil.rmtree(d)
                print(f"   {batches[i][-1] + 1}/{p.store_runs} runs stored ({ingest_seconds:.0f} s of ingest)",
                      flush=True)
        self.store = dict(db=db, runs=p.store_runs, modules=p.store_modules, files=files, rows=rows,
                          text=text_bytes, ingest_seconds=ingest_seconds, db_bytes=database_bytes(db),
                          wall=time.perf_counter() - started)
        smaller = ""
        if p.store_modules < TARGET_STORE_MODULES:
            smaller = (f" The issue's store is {TARGET_STORE_RUNS:,} runs × {TARGET_STORE_MODULES} modules; this run "
                       "measures a smaller one (`--store-runs` and `--store-modules` set it).")
        elif p.store_runs < TARGET_STORE_RUNS:
            smaller = (f" The issue's store is {TARGET_STORE_RUNS:,} runs × {TARGET_STORE_MODULES} modules; at the "
                       f"rate measured here ({ingest_seconds / p.store_runs:.1f} s and "
                       f"{mb(self.store['db_bytes']) / p.store_runs:.0f} MB per run) it would take about "
                       f"{ingest_seconds / p.store_runs * TARGET_STORE_RUNS / 60:.0f} min of ingest and "
                       f"{mb(self.store['db_bytes']) / p.store_runs * TARGET_STORE_RUNS / 1000:.0f} GB, so this run "
                       "measures the smaller store (`--store-runs` sets it).")
        self.report.section("The store for the query targets", markdown_table(
            ["runs × modules", "files", "dump text", "rows", "ingest (CLI, all batches)", "per run", "database"],
            [[f"{p.store_runs:,} × {p.store_modules}", f"{files:,}", f"{mb(text_bytes):,.0f} MB", f"{rows:,}",
              f"{ingest_seconds:.1f} s", f"{ingest_seconds / p.store_runs:.2f} s",
              f"{mb(self.store['db_bytes']):,.0f} MB"]])
            + f"\n\nRuns written by `xladb_gen folder --modules {p.store_modules} --run N` (run N dated day N; module "
            f"peaks drift from run to run), ingested {p.store_batch} runs per `xladb ingest --db` call.{smaller}")

    def spill_counter_lines(self):
        """The utilization counter lines SpillRates reads (what bounds it over all runs)."""
        db = sqlite3.connect(f"file:{self.store['db']}?mode=ro", uri=True)
        try:
            return db.execute("SELECT COUNT(*) FROM kernel_counters WHERE counter IN ('VMEM_SPILL_COUNT', "
                              "'VMEM_FILL_COUNT', 'SMEM_SPILL_COUNT', 'SMEM_FILL_COUNT')").fetchone()[0]
        finally:
            db.close()

    def store_label(self):
        s = self.store
        label = f"store of {s['runs']:,} runs × {s['modules']} modules"
        if s["runs"] < TARGET_STORE_RUNS or s["modules"] < TARGET_STORE_MODULES:
            label += (f" (not the issue's {TARGET_STORE_RUNS:,} × {TARGET_STORE_MODULES}: see \"The store for the "
                      "query targets\")")
        return label

    def store_verdict(self, parts):
        v = verdict(parts)
        s = self.store
        if s["runs"] < TARGET_STORE_RUNS or s["modules"] < TARGET_STORE_MODULES:
            v += f" at {s['runs']:,} × {s['modules']}"
        return v

    def store_queries(self):
        """RPC latencies from a Python grpcio client, Query streaming through the CLI, then load with uploads."""
        if not hasattr(self, "store"):
            raise StepError("the store was not built")
        a, p = self.args, self.p
        extra = []
        if p.query_rows > 1_000_000:
            extra = ["--query-max-rows", str(p.query_rows)]
        with Daemon(a.xladbd, self.store["db"], *extra) as daemon:
            self.rpc_latencies(daemon.addr)
            self.query_streaming(daemon.addr)
            self.load_with_uploads(daemon.addr)

    def rpc_latencies(self, addr):
        p = self.p
        grpc, pb, pb_grpc = load_grpc_stubs(self.path("pystubs"))
        channel = grpc.insecure_channel(addr)
        stub = pb_grpc.QueryServiceStub(channel)
        runs, token = [], ""
        while True:  # ListRuns pages (at most 100 runs a page)
            page = stub.ListRuns(pb.ListRunsRequest(page_token=token), timeout=30)
            runs += [r.name for r in page.runs]
            token = page.next_page_token
            if not token:
                break
        runs.sort()
        if len(runs) != p.store_runs:
            raise StepError(f"ListRuns returned {len(runs)} runs, expected {p.store_runs}")
        module = "jit_train_step"

        def timed(call, calls, warmup):
            """Latencies (ms) of up to `calls` calls after up to `warmup` ones; a slow RPC stops early, after
            RPC_WARMUP_SECONDS of warm-up (at least one call) and RPC_TIMING_SECONDS of timed calls (at least
            RPC_MIN_CALLS). Returns (latencies, warm-up calls made)."""
            start, warmed = time.perf_counter(), 0
            while warmed < warmup and (warmed == 0 or time.perf_counter() - start < RPC_WARMUP_SECONDS):
                call()
                warmed += 1
            latencies, start = [], time.perf_counter()
            while len(latencies) < calls and (len(latencies) < RPC_MIN_CALLS or
                                              time.perf_counter() - start < RPC_TIMING_SECONDS):
                t0 = time.perf_counter()
                call()
                latencies.append((time.perf_counter() - t0) * 1e3)
            return latencies, warmed

        def list_runs():
            r = stub.ListRuns(pb.ListRunsRequest(page_size=100), timeout=30)
            if len(r.runs) != min(100, p.store_runs) or any(run.module_count != p.store_modules for run in r.runs):
                raise StepError(f"ListRuns returned {len(r.runs)} runs, or runs without {p.store_modules} modules")

        def trend():
            r = stub.PeakMemoryTrend(pb.PeakMemoryTrendRequest(module=module), timeout=60)
            if len(r.points) != p.store_runs:
                raise StepError(f"PeakMemoryTrend({module}) returned {len(r.points)} points, expected {p.store_runs}")

        def spills():
            r = stub.SpillRates(pb.SpillRatesRequest(limit=20), timeout=60)
            if not 0 < len(r.rates) <= 20:
                raise StepError(f"SpillRates(limit=20) returned {len(r.rates)} rates")

        def diff(max_buffers):
            # `xladb diff` asks for 10 buffer changes a module (its --buffers); 0 is the API's default, 50.
            r = stub.DiffRuns(pb.DiffRunsRequest(run_a=runs[0], run_b=runs[-1], buffer_level=True,
                                                 max_buffers=max_buffers), timeout=60)
            # Modules pair by identity (name, stage, entry signature, folder): a module whose parameter shapes
            # changed between the runs is another module, added on one side and removed on the other.
            if (r.changed + r.unchanged + r.added != p.store_modules or r.removed != r.added
                    or r.changed + r.added == 0):
                raise StepError(f"DiffRuns({runs[0]}, {runs[-1]}): {r.changed} changed + {r.unchanged} unchanged + "
                                f"{r.added} added ({r.removed} removed), expected {p.store_modules} modules with "
                                f"some changed or retraced")

        def check():
            r = stub.CheckRun(pb.CheckRunRequest(run_name=runs[-1], baseline=runs[0]), timeout=60)
            if r.verdict == pb.CheckRunResponse.VERDICT_UNSPECIFIED or len(r.modules) < p.store_modules:
                raise StepError(f"CheckRun({runs[-1]} against {runs[0]}): verdict {r.verdict}, "
                                f"{len(r.modules)} modules, expected at least {p.store_modules}")

        def changes_window():
            # `xladb changes --last 30`: every module, the CLI's default limit (100) and attribution (5).
            r = stub.ListChanges(pb.ListChangesRequest(last_n=30, limit=100), timeout=60)
            if r.runs != min(30, p.store_runs) or r.change_count < len(r.changes):
                raise StepError(f"ListChanges(last_n=30) answered {r.runs} runs, {r.change_count} changes")

        def changes_module():
            # `xladb changes MODULE`: one jit name over every run.
            r = stub.ListChanges(pb.ListChangesRequest(module=module, limit=100), timeout=60)
            if r.runs != p.store_runs or any(c.module != module for c in r.changes):
                raise StepError(f"ListChanges({module}) answered {r.runs} runs, expected {p.store_runs}")

        label = self.store_label()
        rows = []
        for name, call, calls, warmup, target, limit in (
                # Issue 25's targets (ListRuns 5 ms, DiffRuns and CheckRun 60 ms); earlier issues set 20 and 200.
                ("ListRuns, a page of 100 runs with their summaries", list_runs, p.rpc_calls, p.rpc_warmup,
                 "p95 ≤ 5 ms", 5),
                ("PeakMemoryTrend of one module over all runs", trend, p.rpc_calls, p.rpc_warmup, "p95 ≤ 10 ms", 10),
                ("SpillRates, top 20 kernels over all runs", spills, p.rpc_calls, p.rpc_warmup, "p95 ≤ 50 ms", 50),
                (f"DiffRuns of two {p.store_modules}-module runs (buffer level, as `xladb diff`: 10 buffers a "
                 "module)", lambda: diff(10), p.diff_calls, max(1, p.rpc_warmup // 5), "p95 ≤ 60 ms", 60),
                (f"DiffRuns of two {p.store_modules}-module runs (buffer level, the API's default: 50 buffers a "
                 "module)", lambda: diff(0), p.diff_calls, max(1, p.rpc_warmup // 5), "p95 ≤ 60 ms", 60),
                (f"CheckRun of two {p.store_modules}-module runs (the gate, as `xladb check`)", check,
                 p.diff_calls, max(1, p.rpc_warmup // 5), "p95 ≤ 60 ms", 60),
                ("ListChanges of every module over the last 30 runs (as `xladb changes --last 30`)",
                 changes_window, p.diff_calls, max(1, p.rpc_warmup // 5), "p95 ≤ 200 ms", 200),
                ("ListChanges of one module over all runs (as `xladb changes MODULE`)", changes_module,
                 p.rpc_calls, p.rpc_warmup, "p95 ≤ 20 ms", 20)):
            print(f"   {name.split()[0]}: up to {calls} calls", flush=True)
            lat, warmed = timed(call, calls, warmup)
            p50, p95, worst = percentile(lat, 50), percentile(lat, 95), max(lat)
            self.report.target(name + ", gRPC on 127.0.0.1", label,
                               f"p95 {fmt_ms(p95)} (p50 {fmt_ms(p50)}, max {fmt_ms(worst)}; {len(lat)} calls)",
                               "n/a", "", "", target, self.store_verdict([("p95", p95 <= limit)]))
            rows.append([name, len(lat), warmed, fmt_ms(p50), fmt_ms(p95), fmt_ms(worst)])
        channel.close()
        self.report.section("Query latencies", markdown_table(
            ["RPC", "calls", "warm-up calls", "p50", "p95", "max"], rows)
            + f"\n\nOne Python grpcio client, one call at a time, on the {self.store_label()}; module "
            f"`{module}`; DiffRuns of {runs[0]} and {runs[-1]}, CheckRun of {runs[-1]} against {runs[0]}. Times include the Python client's own overhead "
            f"(a few tenths of a millisecond per call). Each RPC gets {p.rpc_calls} timed calls ({p.diff_calls} "
            f"for DiffRuns, CheckRun and ListChanges over 30 runs) after the warm-up calls, except that a slow one stops after {RPC_WARMUP_SECONDS} s of "
            f"warm-up and {RPC_TIMING_SECONDS} s of timed calls (at least {RPC_MIN_CALLS}): the calls column says "
            "how many were timed. ListRuns reads each run's summary row. SpillRates ranks the spill summaries "
            f"computed at ingest from the store's {self.spill_counter_lines():,} spill and fill counter lines.")

    def query_streaming(self, addr):
        a, p = self.args, self.p
        n = p.query_rows
        sql = (f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {n}) "
               "SELECT x AS value_id, 'fusion.' || x AS instruction, x * 4096 AS size_bytes FROM c")
        out = self.path("query.csv")
        runs, base_runs = [], []
        for _ in range(p.repeat):
            runs.append(run_tool([a.xladb, "sql", sql, "--addr", addr, "--format", "csv"], stdout_path=out))
            lines = count_lines(out)
            if lines != n + 1:
                raise StepError(f"xladb sql --format csv wrote {lines} lines, expected {n + 1} (header + rows)")
            base_runs.append(run_tool([a.python, "-c", BASELINE_QUERY_CSV, self.store["db"], sql, out]))
            if count_lines(out) != n + 1:
                raise StepError("the sqlite3 + csv reference wrote the wrong number of lines")
        os.remove(out)
        e2e, base = best(runs), best(base_runs)
        self.report.target(
            "Query streaming a result to `xladb sql --format csv`",
            f"{n:,} rows (recursive CTE, 3 columns) through xladbd",
            f"{n / e2e.seconds:,.0f} rows/s ({e2e.seconds:.2f} s)",
            f"{n / base.seconds:,.0f} rows/s (Python sqlite3 + csv on the file, no server)",
            f"{base.seconds / e2e.seconds:.2f}×", fmt_mib(e2e.rss_bytes), "≥ 500,000 rows/s",
            verdict([("rows/s", n / e2e.seconds >= 500_000)]))

    def load_with_uploads(self, addr):
        a, p = self.args, self.p
        upload = self.path("upload-run")
        run_tool([a.gen, "folder", "--modules", p.upload_modules, "--run", p.store_runs, "--seed", "2",
                  "--out", upload])
        m = run_tool([a.load, "--addr", addr, "--clients", p.load_clients, "--seconds", p.load_seconds,
                      "--upload-dir", upload, "--upload-every-ms", 200, "--module", "jit_train_step",
                      "--format", "json"], check=False, timeout=int(p.load_seconds * 10 + 300))
        try:
            result = json.loads(m.stdout)
        except json.JSONDecodeError:
            raise StepError(f"xladb_load printed no JSON: {m.stdout.strip()[:300]} {m.stderr.strip()[:300]}")
        shutil.rmtree(upload)
        rows = [[r["rpc"], f"{r['calls']:,}", r["errors"], fmt_ms(r["p50_ms"]), fmt_ms(r["p99_ms"]),
                 f"{r['calls_per_s']:,.1f}"] for r in result["rpcs"]]
        rows.append(["all", f"{result['calls']:,}", result["errors"], "", "", f"{result['calls_per_s']:,.1f}"])
        self.report.section("Load with uploads running", markdown_table(
            ["RPC", "calls", "errors", "p50", "p99", "calls/s"], rows)
            + f"\n\n`xladb_load --clients {p.load_clients} --seconds {p.load_seconds:g} --upload-dir DIR` on the "
            f"{self.store_label()}: {p.load_clients} client threads mixing the query RPCs while one more keeps "
            f"uploading a {p.upload_modules}-module run folder (each upload a new run, 200 ms apart).")
        if result["errors"] or m.seconds <= 0:
            raise StepError(f"xladb_load: {result['errors']} calls failed: {m.stderr.strip()[:400]}")


def count_lines(path):
    with open(path, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


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

# The reference for Query streaming: the same SQL through Python's sqlite3 into csv.writer, no server.
BASELINE_QUERY_CSV = r"""
import csv, sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
cursor = db.execute(sys.argv[2])
with open(sys.argv[3], "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow([d[0] for d in cursor.description])
    writer.writerows(cursor)
"""


def load_grpc_stubs(out_dir):
    """Generates the xladb.v1 Python stubs with protoc and imports them with grpc (python3-grpcio)."""
    os.makedirs(out_dir, exist_ok=True)
    run_tool(["protoc", "-I" + os.path.join(REPO_DIR, "proto"), "--python_out=" + out_dir, "--grpc_out=" + out_dir,
              "--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin", "xladb/v1/xladb.proto"])
    sys.path.insert(0, out_dir)
    try:
        import grpc
        from xladb.v1 import xladb_pb2, xladb_pb2_grpc
    except ImportError as e:
        raise StepError(f"cannot import the gRPC client ({e}); scripts/install-deps.sh installs python3-grpcio")
    return grpc, xladb_pb2, xladb_pb2_grpc


# --- the document ------------------------------------------------------------------------------------------------

def machine_description():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.machine())
    mem = next((int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal")), 0)
    os_name = "Linux"
    if os.path.exists("/etc/os-release"):
        fields = dict(line.rstrip("\n").split("=", 1) for line in open("/etc/os-release") if "=" in line)
        os_name = fields.get("PRETTY_NAME", os_name).strip('"')
    return f"{os.cpu_count()} cores ({cpu}), {mem / MIB:.0f} GiB, {os_name}, SQLite {sqlite3.sqlite_version}"


def source_revision():
    try:
        rev = subprocess.run(["git", "-C", REPO_DIR, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO_DIR, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return rev + (" with uncommitted changes" if dirty else "") if rev else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


# docs/PERFORMANCE.md holds this run's report above this line, and the measurements of each issue's work below
# it, which a new run keeps.
HISTORY_MARKER = "<!-- Below: measurements kept across runs of scripts/bench.sh (bench/run_bench.py keeps them). -->"


def kept_history(path):
    """The part of the report at `path` from HISTORY_MARKER on ("" without one)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return ""
    at = text.find(HISTORY_MARKER)
    return "\n" + text[at:] if at >= 0 else ""


def render(bench, size_name, started, load_before, load_after, seconds):
    p = bench.p
    r = bench.report
    out = ["# Performance", "",
           f"Written by `scripts/bench.sh{'' if size_name == 'full' else ' --size ' + size_name}` "
           f"(bench/run_bench.py) on {started:%Y-%m-%d}: {machine_description()}; Release build of "
           f"{source_revision()}; {seconds / 60:.1f} min in all. The machine was shared with other work "
           f"(load average {load_before:.1f} before, {load_after:.1f} after), so times are the best of "
           f"{p.repeat} and latencies are percentiles over many calls. Ratios are xladb over the baseline "
           "(higher is better for xladb).", "",
           "## Targets", "", markdown_table(TARGET_HEADER, r.targets), ""]
    for title, text in r.sections:
        out += ["## " + title, "", text, ""]
    big = getattr(bench, "big_file_result", None)
    if big:
        out += ["## What bounds ingest (measured in this run)", ""]
        rows_s = big["rows"] / big["seconds"]
        out.append(
            f"* The {fmt_size_label(big['spec'])} file becomes {big['rows']:,} rows in xladb's tables "
            f"({big['rows'] / mb(big['bytes']):,.0f} rows per MB of text): end to end that is {rows_s:,.0f} rows/s, "
            "against the issue's calibration of SQLite on this machine class (at best about 0.5 to 0.7 million "
            "rows per second).")
        parse_seconds = mb(big["bytes"]) / big["parse_mb_s"]
        out.append(
            f"* Parsing alone takes {parse_seconds:.2f} s of the {big['seconds']:.2f} s "
            f"({parse_seconds / big['seconds'] * 100:.0f}%), on a second thread beside the writer; the rest is "
            "building rows and writing them to SQLite. Rows are written in the order of their table's key (values "
            "and live ranges by value id, the schedule by time; instructions and texts appended under a rowid with "
            "their key in a narrow index), values, live ranges and the schedule 64 rows per INSERT, and under WAL "
            "every page is written twice (to the WAL at commit, to the database at the checkpoint).")
        if big.get("tables"):
            out.append(
                f"* Where its {mb(big['db_bytes']):,.1f} MB database goes (each table with its indexes; rows):")
            out.append("")
            out.append("  | table | rows | MB | bytes per row |")
            out.append("  |---|---|---|---|")
            for table, rows, nbytes in big["tables"]:
                out.append(f"  | `{table}` | {rows:,} | {mb(nbytes):,.1f} | {nbytes / rows:,.0f} |")
            out.append("")
        out.append(
            f"* The baseline stores fewer facts (allocations, values, live ranges: "
            f"{big['base_db_bytes'] / big['bytes']:.2f}× the text as a database against xladb's "
            f"{big['db_bytes'] / big['bytes']:.2f}×), so its MB/s is an upper bound of what a simple loader does.")
        out.append("")
    out += ["## Reproduce", "", "```sh",
            "scripts/bench.sh                  # this table (full size: ~45 min, ~35 GB under $TMPDIR)",
            "scripts/bench.sh --size quick     # the same with a 100-run query store, in minutes",
            "scripts/bench.sh --size smoke     # tiny inputs, well under a minute (a ctest: bench_smoke)",
            "```", ""]
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=sorted(PROFILES), default="full", help="input sizes (default: full)")
    parser.add_argument("--build-dir", help="find xladb, xladbd, xladb_gen, xladb_parse and xladb_load in it")
    for tool in ("xladb", "xladbd", "gen", "parse", "load"):
        parser.add_argument("--" + tool, help=f"path of {tool if tool.startswith('xladb') else 'xladb_' + tool}")
    parser.add_argument("--python", default="/usr/bin/python3", help="the Python that runs the baseline")
    parser.add_argument("--baseline", default=os.path.join(BENCH_DIR, "baseline.py"))
    parser.add_argument("--run-folder", default=DEFAULT_RUN_FOLDER,
                        help="real run folder to ingest ('' to skip); default ../shared/corpus/runs/21_lorrax_scan_C")
    parser.add_argument("--store-runs", type=int, help="runs in the query store (overrides --size)")
    parser.add_argument("--store-modules", type=int, help="modules per run in the query store (overrides --size)")
    parser.add_argument("--repeat", type=int, help="best of this many runs (overrides --size)")
    parser.add_argument("--postgres-ingest", metavar="BYTES",
                        help="size of the generated buffer assignment ingested into PostgreSQL beside SQLite, with "
                             "the real run folder (overrides --size; '' skips the step)")
    parser.add_argument("--output", default=os.path.join(REPO_DIR, "docs", "PERFORMANCE.md"),
                        help="where to write the report (default docs/PERFORMANCE.md)")
    parser.add_argument("--no-write", action="store_true", help="print the report only")
    parser.add_argument("--work-dir", help="where inputs and databases go (default: a new folder under $TMPDIR)")
    parser.add_argument("--keep-work", action="store_true", help="keep the work folder")
    args = parser.parse_args()

    tools = {"xladb": "cli/xladb", "xladbd": "service/xladbd", "gen": "bench/xladb_gen",
             "parse": "bench/xladb_parse", "load": "bench/xladb_load"}
    for key, rel in tools.items():
        if getattr(args, key) is None and args.build_dir:
            setattr(args, key, os.path.join(args.build_dir, rel))
        path = getattr(args, key)
        if not path or not os.access(path, os.X_OK):
            parser.error(f"--{key} (or --build-dir): {path or 'not given'} is not an executable")
        setattr(args, key, os.path.abspath(path))
    if not os.access(args.python, os.X_OK):
        parser.error(f"--python: {args.python} is not an executable")
    if not os.path.isfile(args.baseline):
        parser.error(f"--baseline: {args.baseline} is not a file")
    profile = dataclasses.replace(PROFILES[args.size])
    if args.store_runs:
        profile.store_runs = args.store_runs
    if args.store_modules:
        profile.store_modules = args.store_modules
    if args.repeat:
        profile.repeat = args.repeat
    if args.postgres_ingest is not None:
        profile.postgres_ingest = args.postgres_ingest
    if profile.store_runs < 2:
        parser.error("--store-runs must be at least 2 (DiffRuns compares two runs)")

    work = args.work_dir or tempfile.mkdtemp(prefix="xladb_bench.", dir=os.environ.get("TMPDIR", "/tmp"))
    os.makedirs(work, exist_ok=True)
    print(f"xladb bench, size {args.size}, work folder {work}", flush=True)
    started = datetime.datetime.now()
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    bench = Bench(args, profile, work)
    try:
        r = bench.report
        r.step("buffer-assignment files by size", bench.buffer_assignment_sizes)
        r.step("real run folder", bench.real_run_folder)
        r.step("PostgreSQL beside SQLite", bench.postgres_ingest)
        r.step("build the query store", bench.build_store)
        r.step("queries through xladbd", bench.store_queries)
        r.step("report pages", bench.report_pages)
        r.step("catching up", bench.catching_up)
    finally:
        if not args.keep_work:
            shutil.rmtree(work, ignore_errors=True)
    text = render(bench, args.size, started, load_before, os.getloadavg()[0], time.perf_counter() - t0)
    print()
    print(text)
    if bench.report.failures:
        print(f"FAILED: {len(bench.report.failures)} step(s):", *bench.report.failures, sep="\n  ", file=sys.stderr)
        print("(the report above was not written)", file=sys.stderr)
        return 1
    if not args.no_write:
        history = kept_history(args.output)  # read before "w" empties the file
        with open(args.output, "w") as f:
            f.write(text + history)
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
