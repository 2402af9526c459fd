#!/usr/bin/env python3
"""The PostgreSQL side of the store, measured beside SQLite (issue 13):

  * moving a store: `xladb ingest` into SQLite, then `xladb copy` up into PostgreSQL and back down into a new
    SQLite file, for a real run folder (the corpus's 21_lorrax_scan_C, when present) and a generated buffer
    assignment;
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

        print("| input | SQLite ingest | SQLite file | copy up (PostgreSQL) | rows | rows/s | PostgreSQL size | "
              "copy down (new SQLite) |")
        print("|---|---|---|---|---|---|---|---|")
        stores = {}
        for label, path, name in inputs:
            db = os.path.join(tmp, name + ".db")
            ingest_s, _ = timed([xladb, "--db", db, "ingest", path])
            schema = "bench_" + name
            psql(uri, f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")
            scoped = f"{uri}?options=-csearch_path%3D{schema}"
            up_s, up = timed([xladb, "--format", "csv", "copy", db, scoped, "--grant-reader", "xladb_reader"])
            rows = rows_copied(up)
            size = int(psql(uri, "SELECT SUM(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                                 f"ON n.oid = c.relnamespace WHERE n.nspname = '{schema}' AND c.relkind = 'r'"))
            down_s, _ = timed([xladb, "--format", "csv", "copy", scoped, os.path.join(tmp, name + "-back.db")])
            print(f"| {label} | {ingest_s:.2f} s | {os.path.getsize(db) / 1e6:.1f} MB | {up_s:.2f} s | {rows:,} | "
                  f"{rows / up_s:,.0f} | {size / 1e6:.1f} MB | {down_s:.2f} s |")
            stores[name] = (db, f"{reader}?options=-csearch_path%3D{schema}")

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


if __name__ == "__main__":
    main()
