#!/usr/bin/env python3
"""The PostgreSQL side of the store, measured beside SQLite (issue 13):

  * ingest: `xladb ingest` into SQLite and straight into PostgreSQL; moving a store: `xladb copy` up into
    PostgreSQL and back down into a new SQLite file; for a real run folder (the corpus's 21_lorrax_scan_C, when
    present) and a generated buffer assignment;
  * the 100-run store (generated, --store-modules modules a run): RPC latencies from a Python grpcio client,
    of xladbd on the SQLite file and of xladbd on the same store copied into PostgreSQL;
  * one and two daemons ingesting into one PostgreSQL (generated runs, split between the daemons);
  * the read-only SQL endpoint: analyst queries through `xladb sql` on the SQLite file and on the PostgreSQL copy
    (as the read-only role), wall time of the whole command, 15 runs each after 2 warm-ups; beside them the
    databases' own shells (sqlite3, psql) running the same query, as the baseline.

PostgreSQL 15 runs in a temporary folder (scripts/postgres-test-server.sh: fsync off, as in the tests; the
SQLite side keeps its normal durability, so ingest and copy times are not a durability-for-durability
comparison). Prints Markdown tables for docs/PERFORMANCE.md.

    /usr/bin/python3 bench/postgres_bench.py --build-dir build/release [--bytes 200M]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SOURCE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CORPUS_RUN = os.path.join(SOURCE_DIR, "..", "shared", "corpus", "runs", "21_lorrax_scan_C")
PSQL = "/usr/lib/postgresql/15/bin/psql"
QUERIES = [
    ("largest modules", "SELECT module_name, total_bytes FROM module_memory ORDER BY total_bytes DESC LIMIT 10"),
    ("retraces", "SELECT * FROM retrace_groups ORDER BY compiles DESC"),
    ("value positions", "SELECT COUNT(*) FROM value_positions"),
    ("peak buffers of every module", "SELECT module_id, COUNT(*), SUM(logical_bytes) FROM peak_buffer_details "
                                     "GROUP BY module_id ORDER BY module_id"),
]


def timed(cmd, **kw):
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, **kw)
    elapsed = time.perf_counter() - start
    if out.returncode not in (0, 1) or (out.returncode == 1 and "ingest" not in cmd):
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr.decode(errors='replace')}")
    return elapsed, out


def psql(uri, sql):
    out = subprocess.run([PSQL, uri, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True)
    if out.returncode != 0:
        raise SystemExit(f"psql: {out.stderr.decode(errors='replace')}")
    return out.stdout.decode().strip()


def rows_copied(out):
    """The rows_copied column of `xladb copy --format csv`, summed."""
    lines = out.stdout.decode().strip().splitlines()[1:]
    return sum(int(line.split(",")[1]) for line in lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default=os.path.join(SOURCE_DIR, "build", "release"))
    ap.add_argument("--bytes", default="200M", help="size of the generated buffer assignment")
    ap.add_argument("--store-runs", type=int, default=100)
    ap.add_argument("--store-modules", type=int, default=50)
    ap.add_argument("--daemon-runs", type=int, default=8, help="runs ingested by one, then two daemons")
    ap.add_argument("--skip-moves", action="store_true", help="leave out the ingest and copy table")
    ap.add_argument("--skip-store", action="store_true", help="leave out the 100-run store's latencies")
    args = ap.parse_args()
    xladb = os.path.join(args.build_dir, "cli", "xladb")
    gen = os.path.join(args.build_dir, "bench", "xladb_gen")
    tmp = tempfile.mkdtemp(prefix="xladb_pgbench.")
    server = os.path.join(tmp, "pg")
    subprocess.run([os.path.join(SOURCE_DIR, "scripts", "postgres-test-server.sh"), "start", server], check=True,
                   capture_output=True)
    try:
        uri = open(os.path.join(server, "uri")).read().strip()
        reader = open(os.path.join(server, "reader_uri")).read().strip()
        inputs = []
        if os.path.isdir(CORPUS_RUN):
            inputs.append(("real run folder 21_lorrax_scan_C", CORPUS_RUN, "real"))
        big = os.path.join(tmp, "big", "module_0001.jit_big.sm_90_gpu_after_optimizations-buffer-assignment.txt")
        os.makedirs(os.path.dirname(big))
        subprocess.run([gen, "buffer-assignment", "--bytes", args.bytes, "--out", big], check=True, capture_output=True)
        inputs.append((f"generated buffer assignment ({args.bytes}B)", os.path.dirname(big), "big"))

        print("| input | SQLite ingest | ingest into PostgreSQL | SQLite file | copy up (PostgreSQL) | rows | "
              "rows/s | PostgreSQL size | copy down (new SQLite) |")
        print("|---|---|---|---|---|---|---|---|---|")
        stores = {}
        for label, path, name in ([] if args.skip_moves else inputs):
            db = os.path.join(tmp, name + ".db")
            ingest_s, _ = timed([xladb, "--db", db, "ingest", path])
            direct = "direct_" + name
            psql(uri, f"DROP SCHEMA IF EXISTS {direct} CASCADE; CREATE SCHEMA {direct}")
            direct_s, _ = timed([xladb, "--db", f"{uri}?options=-csearch_path%3D{direct}", "ingest", path])
            psql(uri, f"DROP SCHEMA {direct} CASCADE")
            schema = "bench_" + name
            psql(uri, f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")
            scoped = f"{uri}?options=-csearch_path%3D{schema}"
            up_s, up = timed([xladb, "--format", "csv", "copy", db, scoped, "--grant-reader", "xladb_reader"])
            rows = rows_copied(up)
            size = int(psql(uri, "SELECT SUM(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                                 f"ON n.oid = c.relnamespace WHERE n.nspname = '{schema}' AND c.relkind = 'r'"))
            down_s, _ = timed([xladb, "--format", "csv", "copy", scoped, os.path.join(tmp, name + "-back.db")])
            print(f"| {label} | {ingest_s:.2f} s | {direct_s:.2f} s ({rows / direct_s:,.0f} rows/s) | "
                  f"{os.path.getsize(db) / 1e6:.1f} MB | {up_s:.2f} s | {rows:,} | "
                  f"{rows / up_s:,.0f} | {size / 1e6:.1f} MB | {down_s:.2f} s |")
            stores[name] = (db, f"{reader}?options=-csearch_path%3D{schema}")

        store_and_daemons(args, xladb, gen, tmp, uri)
        if not stores:
            return
        name = "real" if "real" in stores else "big"
        db, pg = stores[name]
        print()
        print(f"`xladb sql` on the {name} store, wall time of the command (p50 / p95 of 15 runs):")
        print()
        print("| query | `xladb sql`, SQLite | `sqlite3` (baseline) | `xladb sql`, PostgreSQL (read-only role) | "
              "`psql` (baseline) |")
        print("|---|---|---|---|---|")
        for label, sql in QUERIES:
            cells = []
            for cmd in ([xladb, "--db", db, "--format", "csv", "sql", sql], ["sqlite3", "-readonly", db, sql],
                        [xladb, "--db", pg, "--format", "csv", "sql", sql], [PSQL, pg, "-X", "-q", "-c", sql]):
                times = []
                for i in range(17):
                    t, _ = timed(cmd)
                    if i >= 2:
                        times.append(t * 1000)
                times.sort()
                cells.append(f"{statistics.median(times):.1f} / {times[int(len(times) * 0.95) - 1]:.1f} ms")
            print(f"| {label} | " + " | ".join(cells) + " |")
    finally:
        subprocess.run([os.path.join(SOURCE_DIR, "scripts", "postgres-test-server.sh"), "stop", server],
                       capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


class Daemon:
    """xladbd on `db` (a file or a URI) on a free port."""

    def __init__(self, xladbd, db, spool, *args):
        self.proc = subprocess.Popen([xladbd, "--db", db, "--listen", "127.0.0.1:0", "--spool-dir", spool, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            raise SystemExit("xladbd did not start: " + line + self.proc.stderr.read())
        self.addr = line.split("listening on ")[1].split(" ")[0]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=120)


def generate_runs(gen, folder, runs, modules, first=0):
    dirs = []
    for run in range(first, first + runs):
        d = os.path.join(folder, f"nightly-{run:04d}")
        subprocess.run([gen, "folder", "--modules", str(modules), "--run", str(run), "--seed", "1", "--out", d],
                       check=True, capture_output=True)
        dirs.append(d)
    return dirs


def latency_row(label, call, calls=20, warmup=3):
    for _ in range(warmup):
        call()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return f"{statistics.median(times):.1f} / {times[int(len(times) * 0.95) - 1]:.1f} ms"


def store_and_daemons(args, xladb, gen, tmp, uri):
    """The 100-run store on both backends through xladbd, then one and two daemons ingesting."""
    sys.path.insert(0, os.path.dirname(__file__))
    import bench_support  # the grpcio stubs, generated the way the main benchmark does
    grpc, pb, pb_grpc = bench_support.load_grpc_stubs(os.path.join(tmp, "pystubs"))
    xladbd = os.path.join(os.path.dirname(os.path.dirname(xladb)), "service", "xladbd")

    if not args.skip_store:
        store_latencies(args, xladb, xladbd, gen, tmp, uri, grpc, pb, pb_grpc)
    daemon_throughput(args, xladbd, gen, tmp, uri, grpc, pb, pb_grpc)


def store_latencies(args, xladb, xladbd, gen, tmp, uri, grpc, pb, pb_grpc):
    """The store: generated runs ingested into SQLite, copied into PostgreSQL, asked through xladbd."""
    src = os.path.join(tmp, "store-src")
    db = os.path.join(tmp, "store.db")
    for i in range(0, args.store_runs, 10):
        dirs = generate_runs(gen, src, min(10, args.store_runs - i), args.store_modules, first=i)
        timed([xladb, "ingest", *dirs, "--db", db])
        for d in dirs:
            shutil.rmtree(d)
    psql(uri, "DROP SCHEMA IF EXISTS store CASCADE; CREATE SCHEMA store")
    store_uri = f"{uri}?options=-csearch_path%3Dstore"
    timed([xladb, "--format", "csv", "copy", db, store_uri])
    print()
    print(f"RPC latencies, p50 / p95 of 20 calls after 3, Python grpcio client; the store: {args.store_runs} "
          f"generated runs × {args.store_modules} modules ({os.path.getsize(db) / 1e6:,.0f} MB of SQLite):")
    print()
    print("| RPC | xladbd on SQLite | xladbd on PostgreSQL |")
    print("|---|---|---|")
    cells = {}
    for backend, target in (("sqlite", db), ("postgresql", store_uri)):
        d = Daemon(xladbd, target, os.path.join(tmp, "spool-" + backend))
        try:
            stub = pb_grpc.QueryServiceStub(grpc.insecure_channel(d.addr))
            runs = sorted(r.name for r in stub.ListRuns(pb.ListRunsRequest(page_size=1000), timeout=60).runs)
            assert len(runs) == args.store_runs, len(runs)
            calls = {
                "ListRuns (100 a page)": lambda: stub.ListRuns(pb.ListRunsRequest(page_size=100), timeout=60),
                "PeakMemoryTrend (every run)": lambda: stub.PeakMemoryTrend(
                    pb.PeakMemoryTrendRequest(module="jit_train_step"), timeout=60),
                "SpillRates (top 20)": lambda: stub.SpillRates(pb.SpillRatesRequest(limit=20), timeout=60),
                "DiffRuns (first, last, buffers)": lambda: stub.DiffRuns(
                    pb.DiffRunsRequest(run_a=runs[0], run_b=runs[-1], buffer_level=True), timeout=60),
                "CheckRun (last against first)": lambda: stub.CheckRun(
                    pb.CheckRunRequest(run_name=runs[-1], baseline=runs[0]), timeout=60),
            }
            for label, call in calls.items():
                cells.setdefault(label, []).append(latency_row(label, call))
        finally:
            d.stop()
    for label, row in cells.items():
        print(f"| {label} | " + " | ".join(row) + " |")


def daemon_throughput(args, xladbd, gen, tmp, uri, grpc, pb, pb_grpc):
    """The same runs ingested by one daemon, then split between two, each time into a fresh schema."""
    dirs = generate_runs(gen, os.path.join(tmp, "daemon-src"), args.daemon_runs, args.store_modules)
    text_mb = sum(os.path.getsize(os.path.join(d, f)) for d in dirs for f in os.listdir(d)) / 1e6
    print()
    print(f"Ingest into one PostgreSQL by xladbd: {args.daemon_runs} generated runs × {args.store_modules} modules "
          f"({text_mb:,.0f} MB of text), submitted with IngestPath at once, wall time until every job ended:")
    print()
    print("| daemons | wall | runs/min | MB/s |")
    print("|---|---|---|---|")
    modules = set()
    for count in (1, 2):
        schema = f"daemons{count}"
        psql(uri, f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")
        target = f"{uri}?options=-csearch_path%3D{schema}"
        daemons = [Daemon(xladbd, target, os.path.join(tmp, f"spool-{count}-{i}"), "--allow-root", tmp)
                   for i in range(count)]
        try:
            stubs = [pb_grpc.IngestServiceStub(grpc.insecure_channel(d.addr)) for d in daemons]
            start = time.perf_counter()
            jobs = [(stubs[i % count], stubs[i % count].IngestPath(pb.IngestPathRequest(path=d, wait=False),
                                                                   timeout=60)) for i, d in enumerate(dirs)]
            for stub, job in jobs:
                while True:
                    j = stub.GetIngestJob(pb.GetIngestJobRequest(job_id=job.job_id), timeout=60)
                    if j.state in (pb.IngestJob.SUCCEEDED, pb.IngestJob.FAILED):
                        assert j.state == pb.IngestJob.SUCCEEDED, j.message
                        break
                    time.sleep(0.05)
            wall = time.perf_counter() - start
        finally:
            for d in daemons:
                d.stop()
        modules.add(int(psql(target, "SELECT COUNT(*) FROM modules")))
        print(f"| {count} | {wall:.1f} s | {args.daemon_runs / wall * 60:.1f} | {text_mb / wall:.1f} |")
    assert len(modules) == 1 and modules != {0}, f"one and two daemons stored other modules: {modules}"


if __name__ == "__main__":
    main()
