"""What a Prometheus scrape of xladbd costs with 1,000 runs stored (issue 27: "/metrics stays cheap: it reads
counters, never runs a query per scrape"), beside a page that does query the store (GET /runs) on the same
daemon in the same run, idle and while the writer ingests.

    /usr/bin/python3 bench/metrics_scrape.py [--build-dir build/release] [--runs 1000] [--scrapes 500]

Makes RUNS run folders of the five seed dumps (hard links) in a temporary folder, ingests them with the CLI
(`xladb --db`, 100 folders a process), starts xladbd with --metrics-listen and --http on the store, and times
sequential scrapes on one keep-alive connection, as Prometheus makes them. Prints a Markdown table."""
import argparse
import http.client
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time

from bench_report import percentile  # bench/ is this script's folder, first on sys.path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = os.path.join(REPO, "tests", "data", "seeds")


def make_runs(root, count, first=0):
    seeds = sorted(os.listdir(SEEDS))
    folders = []
    for i in range(first, first + count):
        folder = os.path.join(root, f"run{i:05d}")
        os.makedirs(folder)
        for name in seeds:
            os.link(os.path.join(SEEDS, name), os.path.join(folder, name))
        folders.append(folder)
    return folders


def ingest_offline(xladb, db, folders):
    for at in range(0, len(folders), 100):
        subprocess.run([xladb, "--db", db, "ingest", *folders[at:at + 100]], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=3600)


def timed_gets(port, path, n):
    """Milliseconds of `n` sequential GETs on one keep-alive connection, and the last body's size."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    latencies, size = [], 0
    for _ in range(n):
        start = time.perf_counter()
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read()
        latencies.append((time.perf_counter() - start) * 1e3)
        if response.status != 200:
            raise RuntimeError(f"GET {path}: {response.status}")
        size = len(body)
    conn.close()
    return latencies, size


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build", "release"))
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--scrapes", type=int, default=500)
    args = parser.parse_args()
    xladb = os.path.join(args.build_dir, "cli", "xladb")
    xladbd = os.path.join(args.build_dir, "service", "xladbd")
    tmp = tempfile.mkdtemp(prefix="xladb_scrape_")
    daemon = None
    try:
        db = os.path.join(tmp, "store.db")
        started = time.perf_counter()
        ingest_offline(xladb, db, make_runs(os.path.join(tmp, "runs"), args.runs))
        ingest_seconds = time.perf_counter() - started
        with sqlite3.connect(db) as conn:
            started = time.perf_counter()
            runs, modules = conn.execute("SELECT (SELECT COUNT(*) FROM runs), (SELECT COUNT(*) FROM modules)").fetchone()
            count_ms = (time.perf_counter() - started) * 1e3
        daemon = subprocess.Popen([xladbd, "--db", db, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
                                   "--http", "127.0.0.1:0", "--allow-root", tmp],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        addr = daemon.stdout.readline().split("listening on ")[1].split(" ")[0]
        pages_port = int(re.search(r":(\d+)/", daemon.stdout.readline()).group(1))
        metrics_port = int(re.search(r":(\d+)/", daemon.stdout.readline()).group(1))
        deadline = time.time() + 60
        while time.time() < deadline:  # the daemon measures the store at start
            conn = http.client.HTTPConnection("127.0.0.1", metrics_port, timeout=10)
            conn.request("GET", "/metrics")
            if f"xladb_runs_stored {runs}\n" in conn.getresponse().read().decode():
                break
            time.sleep(0.2)
        rows = []
        scrape, scrape_bytes = timed_gets(metrics_port, "/metrics", args.scrapes)
        page, page_bytes = timed_gets(pages_port, "/runs", max(20, args.scrapes // 10))
        rows.append(("idle", scrape, scrape_bytes, page, page_bytes))

        # While the writer ingests: 200 more runs uploaded through the daemon, one CLI process.
        more = make_runs(os.path.join(tmp, "more"), 200, first=args.runs)
        uploading = threading.Thread(target=lambda: subprocess.run(
            [xladb, "--addr", addr, "ingest", *more], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        uploading.start()
        time.sleep(0.2)
        busy, busy_bytes = timed_gets(metrics_port, "/metrics", args.scrapes)
        busy_page, busy_page_bytes = timed_gets(pages_port, "/runs", max(20, args.scrapes // 10))
        still_ingesting = uploading.is_alive()
        uploading.join()
        rows.append(("while ingesting" + ("" if still_ingesting else " (the upload ended first)"), busy, busy_bytes,
                     busy_page, busy_page_bytes))

        print(f"{runs} runs, {modules} modules stored ({ingest_seconds:.1f} s to ingest offline); "
              f"the store measure's counting statement: {count_ms:.2f} ms (sqlite3, once)\n")
        print("| daemon | scrapes | scrape p50 | p95 | p99 | scrape size | GET /runs p50 (a query) | /runs p95 | ratio p50 |")
        print("|---|---|---|---|---|---|---|---|---|")
        for what, s, s_bytes, p, p_bytes in rows:
            print(f"| {what} | {len(s)} | {percentile(s, 50):.2f} ms | {percentile(s, 95):.2f} ms | "
                  f"{percentile(s, 99):.2f} ms | {s_bytes / 1024:.1f} KiB | {percentile(p, 50):.2f} ms "
                  f"({p_bytes / 1024:.0f} KiB) | {percentile(p, 95):.2f} ms | "
                  f"{percentile(p, 50) / percentile(s, 50):.0f}x |")
    finally:
        if daemon:
            daemon.terminate()
            daemon.wait(timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
