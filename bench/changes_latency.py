"""ListChanges latencies on an existing store, as bench/run_bench.py asks them, beside the gate run over every
consecutive pair of the same window (what a user would script without `changes`).

    build/test/tests/py-venv/bin/python bench/changes_latency.py STORE.db build/release/service/xladbd

Any python with xladb_client installed (clients/python; the test build's venv has it) will do: the stubs are
the client's. Starts its own xladbd on 127.0.0.1."""
import subprocess
import sys
import time

import grpc
from xladb_client import xladb_pb2 as pb, xladb_pb2_grpc as rpc

db, xladbd = sys.argv[1], sys.argv[2]
proc = subprocess.Popen([xladbd, "--db", db, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
addr = proc.stdout.readline().split("listening on ")[1].split(" ")[0]
ch = grpc.insecure_channel(addr, options=[("grpc.max_receive_message_length", 256 << 20)])
q = rpc.QueryServiceStub(ch)

def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]

def timed(call, n, warm):
    for _ in range(warm): call()
    lat = []
    for _ in range(n):
        t0 = time.perf_counter(); call(); lat.append((time.perf_counter() - t0) * 1e3)
    return lat

runs = []
tok = ""
while True:
    page = q.ListRuns(pb.ListRunsRequest(page_token=tok, page_size=1000), timeout=60)
    runs += [(r.run_time_us, r.name) for r in page.runs]
    tok = page.next_page_token
    if not tok: break
runs.sort()
print(f"store: {len(runs)} runs")
r = q.ListChanges(pb.ListChangesRequest(last_n=30, limit=100), timeout=120)
print(f"last 30: runs {r.runs}, change_count {r.change_count}, listed {len(r.changes)}, explained {sum(1 for c in r.changes if c.attribution_scope)}")
r2 = q.ListChanges(pb.ListChangesRequest(module="jit_train_step", limit=100), timeout=120)
print(f"jit_train_step: runs {r2.runs}, change_count {r2.change_count}")
for name, call, n, warm in (
        ("ListChanges last_n=30 limit=100 (changes --last 30)", lambda: q.ListChanges(pb.ListChangesRequest(last_n=30, limit=100), timeout=120), 20, 4),
        ("ListChanges last_n=30, every change point (limit 0)", lambda: q.ListChanges(pb.ListChangesRequest(last_n=30), timeout=120), 10, 2),
        ("ListChanges module=jit_train_step limit=100 (changes jit_train_step)", lambda: q.ListChanges(pb.ListChangesRequest(module="jit_train_step", limit=100), timeout=120), 200, 20),
        ("ListChanges module=jit_train_step, no attribution", lambda: q.ListChanges(pb.ListChangesRequest(module="jit_train_step", limit=100, no_attribution=True), timeout=120), 200, 20)):
    lat = timed(call, n, warm)
    print(f"{name}: p50 {pct(lat,50):.1f} ms, p95 {pct(lat,95):.1f} ms, max {max(lat):.1f} ms ({n} calls)")
# The baseline: the gate over each consecutive pair of the last 31 runs.
window = [name for _, name in runs[-31:]]
def gate_pairs():
    for a, b in zip(window, window[1:]):
        q.CheckRun(pb.CheckRunRequest(run_name=b, baseline=a), timeout=120)
lat = timed(gate_pairs, 3, 1)
print(f"baseline: CheckRun over the 30 consecutive pairs of the same window: p50 {pct(lat,50):.1f} ms, max {max(lat):.1f} ms (3 rounds)")
ch.close(); proc.terminate(); proc.wait()
