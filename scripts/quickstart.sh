#!/usr/bin/env bash
# The main job on the embedded default: installs what is missing, builds xladb and xladbd (Release), starts
# the daemon on a local SQLite file watching a folder of example runs (real XLA dumps bundled in
# tests/data/seeds, laid out as two CI artifact folders), waits until they are ingested, and answers real
# questions through the CLI: the runs, the peak-memory trend of a module, the TPU kernels that spill, and the
# memory gate between the two runs (its Markdown, as a CI job would post it; exit 1 = a regression found),
# and the change points of the history (`xladb changes`: which modules changed memory, when, and why).
# Ends by writing the HTML report of the gate (build/report/gate.html, with the run and module pages beside
# it) and printing its path; xladbd also serves the same pages live (--http, printed as "pages on …").
#   XLADB_KEEP_RUNNING=1 scripts/quickstart.sh   # leave xladbd running afterwards
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
JOBS="${XLADB_JOBS:-$(nproc)}"
echo "== build (Release)"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DXLADB_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$JOBS"
XLADB=build/release/cli/xladb
XLADBD=build/release/service/xladbd

WATCH=build/examples/watch
DB=build/xladb.db
rm -rf "$WATCH" && mkdir -p "$WATCH"
rm -f "$DB" "$DB-wal" "$DB-shm"

echo "== start xladbd on $DB, watching $WATCH"
LOG=build/xladbd.log
"$XLADBD" --db "$DB" --listen 127.0.0.1:0 --http 127.0.0.1:0 --watch "$WATCH" --quiet-seconds 1 \
  >build/xladbd.out 2>"$LOG" &
DAEMON=$!
stop_daemon() { kill -TERM "$DAEMON" 2>/dev/null && wait "$DAEMON" 2>/dev/null || true; }
if [ "${XLADB_KEEP_RUNNING:-0}" != "1" ]; then trap stop_daemon EXIT; fi
for _ in $(seq 100); do grep -q "pages on" build/xladbd.out 2>/dev/null && break; sleep 0.1; done
export XLADB_ADDR="$(sed -nE 's/.*listening on ([^ ]+).*/\1/p' build/xladbd.out)"
PAGES="$(sed -nE 's/.*pages on ([^ ]+).*/\1/p' build/xladbd.out)"
echo "xladbd is listening on $XLADB_ADDR; its pages are on $PAGES"

echo "== two CI artifact folders arrive in the watched folder"
STAGING=build/examples/staging
./scripts/make-example-runs.sh "$STAGING"
touch -d 2026-11-01T06:00:00Z "$STAGING"/nightly-2026-11-01/*   # the runs' own times order the trend
touch -d 2026-11-02T06:00:00Z "$STAGING"/nightly-2026-11-02/*
mv "$STAGING"/nightly-2026-11-01 "$STAGING"/nightly-2026-11-02 "$WATCH"/
for _ in $(seq 300); do
  [ "$("$XLADB" runs --format csv 2>/dev/null | wc -l)" -ge 3 ] && \
    [ "$("$XLADB" modules nightly-2026-11-01 --format csv 2>/dev/null | grep -c jit_step)" -ge 1 ] && \
    [ "$("$XLADB" modules nightly-2026-11-02 --format csv 2>/dev/null | grep -c jit_step)" -ge 1 ] && break
  sleep 0.2
done

echo "== xladb runs"
"$XLADB" runs
echo "== xladb trend jit_splash_attention_kernel"
"$XLADB" trend jit_splash_attention_kernel
echo "== xladb spills --limit 5"
"$XLADB" spills --limit 5
echo "== xladb top nightly-2026-11-02 jit_train_step -n 5"
"$XLADB" top nightly-2026-11-02 jit_train_step -n 5
echo "== xladb retraces nightly-2026-11-02"
"$XLADB" retraces nightly-2026-11-02 --min 2 || true
echo "== xladb check nightly-2026-11-02 --baseline nightly-2026-11-01 --format markdown"
set +e
"$XLADB" check nightly-2026-11-02 --baseline nightly-2026-11-01 --format markdown
GATE_RC=$?
set -e
echo "(exit $GATE_RC: 0 pass, 1 regression, 2 usage, 3 inconclusive, 4 failure)"
[ "$GATE_RC" -eq 1 ] || { echo "quickstart: the gate should have found the example regression" >&2; exit 1; }
echo "== xladb report: the gate as a page, the run, and the module that grew (self-contained HTML files)"
REPORT=build/report
mkdir -p "$REPORT"
"$XLADB" report nightly-2026-11-02 --baseline nightly-2026-11-01 -o "$REPORT/gate.html" >/dev/null
"$XLADB" report nightly-2026-11-02 -o "$REPORT/run.html" >/dev/null
"$XLADB" report nightly-2026-11-02 --module jit_mlp -o "$REPORT/jit_mlp.html" >/dev/null
grep -q 'data-verdict="fail"' "$REPORT/gate.html" || { echo "quickstart: the gate page lacks its verdict" >&2; exit 1; }
echo "== xladb changes: every module's memory changes over the runs, since when, and the lines behind them"
"$XLADB" changes --attribute 3
"$XLADB" changes --format csv | grep -q ',identity,jit_step,' || \
  { echo "quickstart: changes should list jit_step's growth" >&2; exit 1; }
"$XLADB" report --home -o "$REPORT/index.html" >/dev/null
echo "The front page (latest run, its verdict, recent changes, the largest modules over time):"
echo "  live: ${PAGES%/}/   file: $(cd "$REPORT" && pwd)/index.html"
echo "Prometheus metrics of the daemon (jobs, files by verdict, RPC latency, store size): ${PAGES%/}/metrics"
/usr/bin/python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
  "${PAGES%/}/metrics" | grep -E '^xladb_(ingest_jobs_total|ingest_files_total\{verdict="(ingested|error)"\}|runs_stored)' \
  | sed 's/^/  /' || true
echo "== done. The database is $DB (open it with sqlite3). xladbd log: $LOG"
echo "The report: $(cd "$REPORT" && pwd)/gate.html (open it in a browser; it needs no network)"
if [ "${XLADB_KEEP_RUNNING:-0}" = "1" ]; then
  echo "xladbd keeps running (pid $DAEMON) on $XLADB_ADDR, pages on $PAGES; stop it with: kill $DAEMON"
fi
