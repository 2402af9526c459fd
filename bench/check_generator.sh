#!/usr/bin/env bash
# check_generator.sh XLADB_GEN XLADB: the generator's dumps are valid by xladb's own rules.
#
#   1. A TPU series (4 runs x 5 modules) and a GPU series (2 runs x 3 modules) ingest with every file
#      ingested, 0 unknown lines and 0 error / invariant / unknown-line issues; the runs, modules and files per
#      kind are the expected counts; runs are ordered by time as by name; jit_train_step has one point per
#      run with a peak that grows every run; one of its kernels spills more VMEM in every run.
#   2. The same flags and seed give the same bytes.
#   3. On one generated buffer-assignment file per backend, bench/baseline.py loads exactly as many
#      allocations, buffer values and live ranges as xladb stores (same input, same facts), and as many
#      values as the generator says it wrote. Skipped with a message when /usr/bin/python3 is absent.
# Exits non-zero with a FAIL line naming the first check that failed.
set -euo pipefail

GEN=$1
XLADB=$2
HERE=$(cd "$(dirname "$0")" && pwd)
PYTHON=${XLADB_PYTHON:-/usr/bin/python3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/xladb_gen_check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# One value from a one-row, one-column query.
q() {
  "$XLADB" sql "$1" --db "$2" --format csv | sed -n 2p
}

expect() {  # expect DESCRIPTION ACTUAL EXPECTED
  [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
  echo "ok: $1 = $3"
}

check_clean_ingest() {  # check_clean_ingest DB
  local db=$1
  expect "files not ingested" "$(q "SELECT COUNT(*) FROM dump_files WHERE verdict <> 'ingested'" "$db")" 0
  expect "unknown lines" "$(q "SELECT COALESCE(SUM(unknown_lines), 0) FROM dump_files" "$db")" 0
  local bad
  bad=$(q "SELECT COUNT(*) FROM ingest_issues WHERE severity IN ('error', 'invariant', 'unknown_line')" "$db")
  if [ "$bad" != 0 ]; then
    "$XLADB" sql "SELECT f.path, i.line, i.severity, i.reason FROM ingest_issues i JOIN dump_files f USING (file_id)
                  WHERE i.severity IN ('error', 'invariant', 'unknown_line') LIMIT 20" --db "$db" >&2
    fail "$bad error/invariant/unknown-line issues"
  fi
  echo "ok: 0 error/invariant/unknown-line issues"
  # Warnings are allowed (XLA's own memory-report truncation notes); show what they are.
  "$XLADB" sql "SELECT severity, COUNT(*) AS n, MIN(reason) AS example FROM ingest_issues GROUP BY 1" --db "$db"
}

# --- 1. TPU series -------------------------------------------------------------------------------------
"$GEN" runs --runs 4 --modules 5 --layers 3 --seed 7 --out "$WORK/tpu"
"$XLADB" ingest "$WORK"/tpu/* --db "$WORK/tpu.db" || fail "xladb ingest of the TPU series exited $?"
DB=$WORK/tpu.db
check_clean_ingest "$DB"
expect "runs" "$(q "SELECT COUNT(*) FROM runs" "$DB")" 4
expect "module_memory rows" "$(q "SELECT COUNT(*) FROM module_memory" "$DB")" 20
expect "distinct modules" "$(q "SELECT COUNT(DISTINCT module_name) FROM module_memory" "$DB")" 5
for kind in buffer_assignment hlo_module memory_usage_report tpu_bundle_profile; do
  expect "$kind files" "$(q "SELECT COUNT(*) FROM dump_files WHERE kind = '$kind'" "$DB")" 20
done
expect "runs in time order = name order" \
  "$(q "SELECT group_concat(name, ' ') FROM (SELECT name FROM runs ORDER BY run_time_us)" "$DB")" \
  "$(q "SELECT group_concat(name, ' ') FROM (SELECT name FROM runs ORDER BY name)" "$DB")"
expect "jit_train_step trend points" \
  "$(q "SELECT COUNT(*) || ' ' || COUNT(DISTINCT peak_bytes) FROM module_memory WHERE module_name = 'jit_train_step'" "$DB")" \
  "4 4"
expect "jit_train_step peak decreases" \
  "$(q "SELECT COUNT(*) FROM (SELECT peak_bytes - LAG(peak_bytes) OVER (ORDER BY run_time_us) AS d
        FROM module_memory WHERE module_name = 'jit_train_step') WHERE d <= 0" "$DB")" 0
expect "jit_train_step kernels whose VMEM spills grow every run" \
  "$(q "SELECT COUNT(*) FROM (SELECT kernel FROM (SELECT kernel, vmem_spills - LAG(vmem_spills) OVER
        (PARTITION BY kernel ORDER BY run_id) AS d FROM kernel_spills WHERE module_name = 'jit_train_step')
        GROUP BY kernel HAVING COUNT(*) = 4 AND SUM(d > 0) = 3)" "$DB")" 1

# --- GPU series ------------------------------------------------------------------------------------------
"$GEN" runs --runs 2 --modules 3 --layers 2 --seed 7 --backend gpu --out "$WORK/gpu"
"$XLADB" ingest "$WORK"/gpu/* --db "$WORK/gpu.db" || fail "xladb ingest of the GPU series exited $?"
check_clean_ingest "$WORK/gpu.db"
expect "GPU module_memory rows" "$(q "SELECT COUNT(*) FROM module_memory" "$WORK/gpu.db")" 6

# --- 2. determinism ---------------------------------------------------------------------------------------
"$GEN" runs --runs 4 --modules 5 --layers 3 --seed 7 --out "$WORK/tpu_again" >/dev/null
diff -r "$WORK/tpu" "$WORK/tpu_again" >/dev/null || fail "same flags and seed gave different files"
echo "ok: same seed, same bytes"

# --- 3. baseline vs xladb on single buffer-assignment files ----------------------------------------------
for backend in tpu gpu; do
  FILE=$WORK/$backend-buffer-assignment.txt
  GEN_OUT=$("$GEN" buffer-assignment --bytes 2M --backend "$backend" --seed 3 --out "$FILE")
  echo "$GEN_OUT"
  GEN_VALUES=$(sed -n 's/.*, \([0-9]*\) values$/\1/p' <<<"$GEN_OUT")
  "$XLADB" ingest "$FILE" --db "$WORK/$backend-single.db" || fail "xladb ingest of $FILE exited $?"
  check_clean_ingest "$WORK/$backend-single.db"
  XLADB_ROWS="allocations=$(q "SELECT COUNT(*) FROM allocations" "$WORK/$backend-single.db")"
  XLADB_ROWS+=" buffer_values=$(q "SELECT COUNT(*) FROM buffer_values" "$WORK/$backend-single.db")"
  XLADB_ROWS+=" live_ranges=$(q "SELECT COUNT(*) FROM live_ranges" "$WORK/$backend-single.db")"
  expect "$backend buffer values = values generated" \
    "$(q "SELECT COUNT(*) FROM buffer_values" "$WORK/$backend-single.db")" "$GEN_VALUES"
  if [ ! -x "$PYTHON" ]; then
    echo "SKIP: baseline comparison: $PYTHON not found"
    continue
  fi
  BASE_OUT=$("$PYTHON" "$HERE/baseline.py" "$FILE" --db "$WORK/$backend-baseline.db")
  echo "$BASE_OUT"
  expect "$backend baseline rows = xladb rows" "$(sed -n 's/^rows: //p' <<<"$BASE_OUT")" "$XLADB_ROWS"
done
echo "PASS"
