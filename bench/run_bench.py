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
import dataclasses
import datetime
import os
import shutil
import sys
import tempfile
import time

from bench_support import BENCH_DIR, REPO_DIR
from bench_report import Report, kept_history, render
from ingest_steps import IngestSteps
from postgres_steps import PostgresSteps
from store_steps import StoreSteps


DEFAULT_RUN_FOLDER = os.path.join(REPO_DIR, "..", "shared", "corpus", "runs", "21_lorrax_scan_C")


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
                    rpc_calls=200, rpc_warmup=20, diff_calls=40, query_rows=1_000_000, load_seconds=10,
                    load_clients=8, upload_modules=20, catch_up_runs=100, catch_up_backends="sqlite,postgresql",
                    postgres_ingest="200M", postgres_tpu_modules=500),
    "quick": Profile(file_sizes=["10M", "100M", "1G"], repeat=3, store_runs=100, store_modules=500, store_batch=10,
                     rpc_calls=200, rpc_warmup=20, diff_calls=40, query_rows=1_000_000, load_seconds=10,
                     load_clients=8, upload_modules=20, catch_up_runs=10, catch_up_backends="sqlite,postgresql",
                     postgres_ingest="200M", postgres_tpu_modules=100),
}


class Bench(IngestSteps, PostgresSteps, StoreSteps):
    """One run of the benchmark: the steps of bench/ingest_steps.py, bench/postgres_steps.py and
    bench/store_steps.py over one work folder, with the command line (args), the sizes (p, a Profile) and the
    report (bench/bench_report.py) they fill."""

    def __init__(self, args, profile, work):
        self.args = args
        self.p = profile
        self.work = work
        self.report = Report()

    def path(self, *parts):
        return os.path.join(self.work, *parts)


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
