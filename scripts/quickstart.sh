#!/usr/bin/env bash
# The main job on the embedded default: installs what is missing, builds xladb (Release), lays out two
# example runs from the bundled real XLA dumps (tests/data/seeds), ingests them into a local SQLite file and
# answers a real query: the peak-memory trend of a module across runs, and the TPU kernels that spill.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
JOBS="${XLADB_JOBS:-$(nproc)}"
echo "== build (Release)"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DXLADB_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$JOBS"
XLADB=build/release/cli/xladb

EXAMPLES=build/examples
DB=build/xladb.db
./scripts/make-example-runs.sh "$EXAMPLES"
rm -f "$DB" "$DB-wal" "$DB-shm"

echo "== ingest"
"$XLADB" ingest "$EXAMPLES/nightly-2026-11-01" --db "$DB" --time 2026-11-01 --label branch=main
"$XLADB" ingest "$EXAMPLES/nightly-2026-11-02" --db "$DB" --time 2026-11-02 --label branch=main

echo "== peak-memory trend of jit_splash_attention_kernel"
"$XLADB" sql "SELECT run_name, date(run_time_us / 1000000, 'unixepoch') AS day, peak_bytes, total_bytes, temp_bytes
              FROM module_memory WHERE module_name = 'jit_splash_attention_kernel' ORDER BY run_time_us" --db "$DB"
echo "== TPU kernels by VMEM spill rate"
"$XLADB" sql "SELECT run_name, kernel, vmem_spills, vmem_fills, bundles, ROUND(vmem_spill_rate, 4) AS spill_rate
              FROM kernel_spills ORDER BY vmem_spill_rate DESC LIMIT 5" --db "$DB"
echo "== done: the database is $DB (open it with sqlite3, or: $XLADB sql \"…\" --db $DB)"
