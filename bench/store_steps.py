"""The benchmark's store steps (a mixin of run_bench.Bench): a store of many runs built once, then queried
through xladbd (latencies, streaming, load with uploads), its report pages, and the catch-up of watched runs."""
import json
import os
import re
import shutil
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor

from bench_support import (BENCH_DIR, Daemon, MIB, StepError, best, count_lines, database_bytes, load_grpc_stubs,
    parse_ingest_output, remove_database, run_tool)
from bench_report import fmt_mib, fmt_ms, fmt_size_label, markdown_table, mb, percentile, verdict


# The query store (the full size builds it; quick builds 100 runs of it).
TARGET_STORE_RUNS = 1000
TARGET_STORE_MODULES = 500

# A slow RPC is timed for this long instead of its planned number of calls (but at least RPC_MIN_CALLS).
RPC_WARMUP_SECONDS = 10
RPC_TIMING_SECONDS = 60
RPC_MIN_CALLS = 10


class StoreSteps:
    """The query store through xladbd, the report pages and the catch-up. A mixin of run_bench.Bench: reads
    self.args, self.p and self.path(), and writes self.report."""

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
