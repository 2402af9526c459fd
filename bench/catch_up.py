"""Catching up (issue 25's sixth row): xladbd started on a watched folder that already holds RUNS real-size runs
(hard-linked copies of the corpus's 21_lorrax_scan_C: 2,965 files, 10.6 MB each), as after a weekend of CI
runs arriving while the daemon was down, on SQLite and on PostgreSQL 15. Measured: runs per minute from the
daemon's start until every run's job has ended (counted on its own /metrics), and meanwhile the latency of a
client's queries (ListRuns, PeakMemoryTrend over every run of the name compiled fewest times a run, CheckRun
of the newest run against the oldest; a pause of --pause-ms after each round, 0 for a client that never
stops), p50 and p99.

    /usr/bin/python3 bench/catch_up.py [--build-dir build/release] [--runs 100] [--backends sqlite,postgresql]

scripts/bench.sh runs it (2 runs on SQLite at --size smoke, 10 at quick, 100 at full).

PostgreSQL runs in a temporary cluster (scripts/postgres-test-server.sh: fsync off, as in the tests), SQLite
with its normal durability. Prints a Markdown table."""
import argparse
import http.client
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from bench_report import percentile  # bench/ is this script's folder, first on sys.path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS_RUN = os.path.join(REPO, "..", "shared", "corpus", "runs", "21_lorrax_scan_C")


def make_runs(watch, count):
    """`count` hard-linked copies of the corpus run, named run-000…, each stamped a day apart (xladb-run.toml)."""
    os.makedirs(watch)
    staging = os.path.join(os.path.dirname(watch), "staging")
    for i in range(count):
        folder = os.path.join(staging, f"run-{i:03d}")
        shutil.copytree(CORPUS_RUN, folder, copy_function=os.link)
        with open(os.path.join(folder, "xladb-run.toml"), "w") as f:
            f.write(f'time = "2026-{1 + i // 28:02d}-{1 + i % 28:02d}T00:00:00Z"\n')
        os.rename(folder, os.path.join(watch, f"run-{i:03d}"))


def jobs_ended(metrics_port):
    conn = http.client.HTTPConnection("127.0.0.1", metrics_port, timeout=30)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    return sum(int(v) for v in re.findall(r'^xladb_ingest_jobs_total\{state="\w+"\} (\d+)$', text, re.MULTILINE))


class QueryLoop:
    """A client asking the daemon the usual questions, back to back, while it ingests."""

    def __init__(self, pb, stub, pause_seconds):
        self.pb, self.stub, self.pause = pb, stub, pause_seconds
        self.latencies = {"ListRuns": [], "PeakMemoryTrend": [], "CheckRun": []}
        self.errors = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run)

    def timed(self, name, call):
        start = time.perf_counter()
        try:
            answer = call()
        except Exception as e:  # a refused query is counted, and the loop goes on
            self.errors.append(f"{name}: {e}")
            return None
        self.latencies[name].append((time.perf_counter() - start) * 1e3)
        return answer

    def run(self):
        try:
            self.ask()
        except Exception as e:  # said in the table (refused) rather than lost with the thread
            self.errors.append(f"the query loop stopped: {e!r}")

    def ask(self):
        pb, stub, module = self.pb, self.stub, None
        while not self.stop.is_set():
            runs = self.timed("ListRuns", lambda: stub.ListRuns(pb.ListRunsRequest(page_size=100), timeout=60))
            names = [r.name for r in runs.runs] if runs else []
            if len(names) < 2:
                time.sleep(0.05)
                continue
            if module is None:  # the name compiled fewest times a run (JAX recompiles names), largest first
                modules = stub.ListModules(pb.ListModulesRequest(run_name=names[-1]), timeout=60).modules
                compiles = {}
                for m in modules:
                    compiles[m.name] = compiles.get(m.name, 0) + 1
                module = min(modules, key=lambda m: (compiles[m.name], -m.total_bytes)).name
            self.timed("PeakMemoryTrend", lambda: stub.PeakMemoryTrend(
                pb.PeakMemoryTrendRequest(module=module, metric=pb.TOTAL_BYTES), timeout=60))
            self.timed("CheckRun", lambda: stub.CheckRun(
                pb.CheckRunRequest(run_name=names[0], baseline=names[-1]), timeout=60))
            self.stop.wait(self.pause)


def catch_up(xladbd, db, extra, watch, runs, pause_seconds, pb, pb_grpc, grpc):
    daemon = subprocess.Popen([xladbd, "--db", db, *extra, "--listen", "127.0.0.1:0", "--metrics-listen",
                               "127.0.0.1:0", "--watch", watch, "--quiet-seconds", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    started = time.perf_counter()
    try:
        addr = daemon.stdout.readline().split("listening on ")[1].split(" ")[0]
        metrics_port = int(re.search(r":(\d+)/", daemon.stdout.readline()).group(1))
        channel = grpc.insecure_channel(addr, options=[("grpc.max_receive_message_length", 64 << 20)])
        queries = QueryLoop(pb, pb_grpc.QueryServiceStub(channel), pause_seconds)
        queries.thread.start()
        while jobs_ended(metrics_port) < runs:
            time.sleep(0.25)
        wall = time.perf_counter() - started
        queries.stop.set()
        queries.thread.join()
        stored = len(pb_grpc.QueryServiceStub(channel).ListRuns(pb.ListRunsRequest(page_size=1000), timeout=60).runs)
        channel.close()
        return wall, stored, queries
    finally:
        daemon.terminate()
        daemon.wait(timeout=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build", "release"))
    parser.add_argument("--xladbd", help="the daemon (default: BUILD_DIR/service/xladbd)")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--pause-ms", type=float, default=200,
                        help="the client's pause between rounds of its three queries (0: back to back)")
    args = parser.parse_args()
    if not os.path.isdir(CORPUS_RUN):
        sys.exit(f"catch_up: {CORPUS_RUN} is missing (the corpus is on development machines and in CI)")
    xladbd = args.xladbd or os.path.join(args.build_dir, "service", "xladbd")
    tmp = tempfile.mkdtemp(prefix="xladb_catchup.")
    import bench_support  # the grpcio stubs, generated the way the main benchmark does (bench/ is on sys.path)
    grpc, pb, pb_grpc = bench_support.load_grpc_stubs(os.path.join(tmp, "pystubs"))
    files = sum(len(f) for _, _, f in os.walk(CORPUS_RUN))
    rows = []
    server = None
    try:
        for backend in args.backends.split(","):
            watch = os.path.join(tmp, backend, "watch")
            make_runs(watch, args.runs)
            if backend == "sqlite":
                db, extra = os.path.join(tmp, backend, "store.db"), []
            else:
                server = os.path.join(tmp, "pg")
                subprocess.run([os.path.join(REPO, "scripts", "postgres-test-server.sh"), "start", server],
                               check=True, capture_output=True)
                uri = open(os.path.join(server, "uri")).read().strip()
                db, extra = uri, ["--spool-dir", os.path.join(tmp, backend, "spool")]
            wall, stored, q = catch_up(xladbd, db, extra, watch, args.runs, args.pause_ms / 1000, pb, pb_grpc, grpc)
            rows.append((backend, wall, stored, q))
            shutil.rmtree(os.path.join(tmp, backend), ignore_errors=True)
    finally:
        if server:
            subprocess.run([os.path.join(REPO, "scripts", "postgres-test-server.sh"), "stop", server],
                           capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"{args.runs} runs of {files:,} files each, already in the watched folder when xladbd starts; a client "
          f"asks its three questions, then pauses {args.pause_ms:.0f} ms, until every job has ended\n")
    print("| store | wall to ingest all | runs/min | files/s | runs stored | ListRuns p50 / p99 | "
          "PeakMemoryTrend p50 / p99 | CheckRun p50 / p99 | queries answered | refused |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for backend, wall, stored, q in rows:
        lat = lambda name: f"{percentile(q.latencies[name], 50):.1f} / {percentile(q.latencies[name], 99):.1f} ms"
        print(f"| {backend} | {wall:.1f} s | {args.runs / wall * 60:.1f} | {args.runs * files / wall:,.0f} | "
              f"{stored} | {lat('ListRuns')} | {lat('PeakMemoryTrend')} | {lat('CheckRun')} | "
              f"{sum(len(v) for v in q.latencies.values())} | {len(q.errors)} |")
        for error in q.errors[:3]:
            print(f"  refused: {error}")


if __name__ == "__main__":
    main()
