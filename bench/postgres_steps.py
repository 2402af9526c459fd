"""The benchmark's PostgreSQL steps (a mixin of run_bench.Bench): the same inputs and calls on a
PostgreSQL 15 of a temporary cluster and on SQLite, side by side."""
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import time

from bench_support import (BENCH_DIR, Daemon, REPO_DIR, StepError, best, load_grpc_stubs, parse_ingest_output,
    remove_database, run_tool)
from bench_report import fmt_mib, fmt_ms, fmt_size_label, markdown_table, percentile, verdict


class PostgresSteps:
    """PostgreSQL 15 beside SQLite: ingest, the gate and the diff, run lists and trends. A mixin of
    run_bench.Bench: reads self.args, self.p and self.path(), and writes self.report."""

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
            f"Python grpcio client, {p.diff_calls} timed calls of each RPC on each backend after warm-up "
            f"({max(1, p.rpc_warmup // 5)} calls), alternating between the two daemons. A two-run store, not the "
            "issue's 1,000 runs: these calls read the two runs' modules and values, whatever else the store holds.")

    def time_on_both_backends(self, db, target, calls, log_name, timed_calls, warmup_calls):
        """Each of `calls` (name -> call(stub)) through xladbd on the SQLite store `db` and on its PostgreSQL copy
        `target`: ({(backend, name): latencies in ms}, {(backend, name): first answer}). Both daemons run at once
        and the timed calls alternate between them (SQLite first on even calls, PostgreSQL first on odd ones), so
        that a busy moment of the machine falls on both backends alike: the headline is their ratio. Raises
        StepError when a call's answers differ between the backends (byte for byte)."""
        a = self.args
        grpc, _, pb_grpc = load_grpc_stubs(self.path("pystubs"))
        latencies, answers = {}, {}
        spool = self.path(f"{log_name}-spool")
        os.makedirs(spool, exist_ok=True)
        backends = ("sqlite", "postgresql")
        with Daemon(a.xladbd, db, log=self.path(f"{log_name}-sqlite.xladbd.log")) as lite, \
                Daemon(a.xladbd, target, "--spool-dir", spool,
                       log=self.path(f"{log_name}-postgresql.xladbd.log")) as pg:
            channels = {b: grpc.insecure_channel(d.addr, options=[("grpc.max_receive_message_length", 1 << 30)])
                        for b, d in zip(backends, (lite, pg))}
            stubs = {b: pb_grpc.QueryServiceStub(c) for b, c in channels.items()}
            for name, call in calls.items():
                for backend in backends:
                    answers[(backend, name)] = call(stubs[backend])  # the first warm-up call, kept to compare
                    for _ in range(warmup_calls - 1):
                        call(stubs[backend])
                    latencies[(backend, name)] = []
                for i in range(timed_calls):
                    for backend in (backends if i % 2 == 0 else backends[::-1]):
                        t0 = time.perf_counter()
                        call(stubs[backend])
                        latencies[(backend, name)].append((time.perf_counter() - t0) * 1e3)
            for c in channels.values():
                c.close()
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
            f"on each backend after {p.rpc_warmup} warm-up calls, alternating between the two daemons. The query "
            "store's figures at 100 × 500 (above) are SQLite's; the PostgreSQL ratio is measured here, on a store "
            "small enough to copy in seconds.")
