#!/usr/bin/env bash
# Fuzzes every input-facing piece of ingest/ (the seven format parsers, the format detector, the file-name
# parser, the HLO instruction scanner) with libFuzzer under ASan + UBSan, each for a bounded time.
#
#   scripts/fuzz.sh                       # every target, FUZZ_SECONDS each (default 6: a minute for the 10)
#   FUZZ_SECONDS=300 scripts/fuzz.sh sniff dump_name   # chosen targets, longer
#   FUZZ_CORPUS_DIR=/tmp/xladb-corpus FUZZ_SECONDS=600 scripts/fuzz.sh   # keep the grown corpus between runs
#
# Builds the targets in build/fuzz (clang, -DXLADB_FUZZ=ON, RelWithDebInfo). Each target starts from a
# corpus made at run time in a temporary folder from the project's own test files (tests/fixtures/**,
# tests/data/seeds, and the saved regressions in tests/fuzz/regressions/<target>/); nothing generated is kept
# in the tree. Fails (exit 1) when any target finds a crash, a leak, a UBSan report, a contract violation
# or a slow input (over FUZZ_TIMEOUT seconds, default 10); the input is saved under build/fuzz/artifacts/ and
# the way to keep it as a regression is printed. Prints the executions each target ran.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH="${FUZZ_SECONDS:-6}"
TIMEOUT="${FUZZ_TIMEOUT:-10}"
BUILD="${XLADB_FUZZ_BUILD_DIR:-build/fuzz}"  # overridable for a developer's own build folder
JOBS="${XLADB_JOBS:-$(nproc)}"

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (apt-get install clang); libFuzzer comes with Debian's clang" >&2
  exit 1
fi

echo "== build fuzz targets (clang, ASan + UBSan + libFuzzer) in $BUILD"
CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DXLADB_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target xladb_fuzzers

# One target per entry point (kTargets in tests/fuzz/fuzz_entry_points.cc), as built.
mapfile -t ALL_TARGETS < <(find "$BUILD/tests/fuzz" -maxdepth 1 -name '*_fuzzer' -type f -printf '%f\n' |
                           sed 's/_fuzzer$//' | sort)
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL_TARGETS[@]}")
for target in "${TARGETS[@]}"; do
  if [ ! -x "$BUILD/tests/fuzz/${target}_fuzzer" ]; then
    echo "fuzz.sh: no fuzz target '$target' (built: ${ALL_TARGETS[*]})" >&2
    exit 2
  fi
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/xladb_fuzz.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
ARTIFACTS="$BUILD/artifacts"
mkdir -p "$ARTIFACTS"

FIX=tests/fixtures
SEEDS=tests/data/seeds

# Copies files into the corpus folder $1 (names made unique by a counter; missing globs are skipped).
copy_seeds() {
  local dir="$1"; shift
  local f
  for f in "$@"; do
    [ -f "$f" ] || continue
    cp "$f" "$dir/seed_$((++SEED_NO))_$(basename "$f")"
  done
}

# Writes the seed corpus of target $1 into folder $2.
make_corpus() {
  local target="$1" dir="$2" f
  SEED_NO=0
  case "$target" in
    buffer_assignment_parser)
      copy_seeds "$dir" "$FIX"/buffer_assignment/*.txt "$FIX"/sniff/buffer_assignment_*.txt \
        "$SEEDS"/000_*.txt "$SEEDS"/002_*.txt "$SEEDS"/004_*.txt ;;
    live_range_parser)
      copy_seeds "$dir" "$FIX"/buffer_assignment/*live-range.txt "$FIX"/sniff/live_range_*.txt
      # The live-range tails of the buffer-assignment seeds, from their `HloLiveRange` line on.
      for f in "$SEEDS"/000_*.txt "$SEEDS"/002_*.txt "$SEEDS"/004_*.txt "$FIX"/buffer_assignment/*-buffer-assignment.txt; do
        if grep -q '^HloLiveRange' "$f"; then
          sed -n '/^HloLiveRange/,$p' "$f" >"$dir/tail_$((++SEED_NO))_$(basename "$f")"
        fi
      done ;;
    hlo_module_parser)
      copy_seeds "$dir" "$FIX"/hlo_module/*.txt "$FIX"/sniff/hlo_module_*.txt "$SEEDS"/003_*.txt ;;
    memory_report_parser)
      copy_seeds "$dir" "$FIX"/memory_report/*.txt "$FIX"/sniff/memory_usage_report_*.txt ;;
    tpu_bundle_profile_parser)
      copy_seeds "$dir" "$FIX"/tpu_utilization/bundle_profile.txt "$FIX"/sniff/tpu_bundle_profile.txt "$SEEDS"/001_*.txt ;;
    tpu_per_bundle_utilization_parser)
      copy_seeds "$dir" "$FIX"/tpu_utilization/per_bundle_utilization.txt "$FIX"/sniff/tpu_per_bundle_utilization.txt ;;
    oom_report_parser)
      copy_seeds "$dir" "$FIX"/oom_report/*.txt "$FIX"/sniff/oom_report_*.txt ;;
    sniff)
      # Input = file name, '\n', head of the content (fuzz_entry_points.h).
      for f in "$FIX"/*/* "$SEEDS"/*; do
        [ -f "$f" ] || continue
        { printf '%s\n' "$(basename "$f")"; head -c 65536 "$f"; } >"$dir/seed_$((++SEED_NO))"
      done ;;
    dump_name)
      # Names of the project's test files, and every quoted name in the name parser's and sniffer's tests.
      for f in "$FIX"/*/* "$SEEDS"/*; do printf '%s' "$(basename "$f")" >"$dir/seed_$((++SEED_NO))"; done
      grep -ho '"[^" ]*[._-][^" ]*"' tests/ingest/dump_name_test.cc tests/ingest/sniff_test.cc tests/store/test_dirs.h |
        tr -d '"' | sort -u | while IFS= read -r name; do
          printf '%s' "$name" >"$dir/name_$((++SEED_NO))"
        done ;;
    hlo_instruction_text)
      # Instruction lines of the HLO fixtures, and the text of `from instruction:` lines of buffer assignments.
      grep -h ' = ' "$FIX"/hlo_module/*.txt "$SEEDS"/003_*.txt | head -n 400 >"$WORK/lines.txt" || true
      grep -ho 'from instruction: .*' "$SEEDS"/*.txt "$FIX"/buffer_assignment/*.txt |
        sed 's/^from instruction: //' | head -n 200 >>"$WORK/lines.txt" || true
      split -l 1 -a 4 "$WORK/lines.txt" "$dir/line_" ;;
    *)
      # A target without its own seeds here starts from every fixture and seed file.
      copy_seeds "$dir" "$FIX"/*/* "$SEEDS"/* ;;
  esac
  copy_seeds "$dir" tests/fuzz/regressions/"$target"/*
}

failed=()
printf '%-36s %12s %10s %8s\n' target executions exec/s corpus
for target in "${TARGETS[@]}"; do
  corpus="${FUZZ_CORPUS_DIR:-$WORK/corpus}/$target"
  mkdir -p "$corpus"
  make_corpus "$target" "$corpus"
  log="$WORK/$target.log"
  status=0
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$BUILD/tests/fuzz/${target}_fuzzer" "$corpus" -max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT" \
    -rss_limit_mb=2048 -dict=tests/fuzz/fuzz.dict -print_final_stats=1 -artifact_prefix="$ARTIFACTS/${target}-" \
    >"$log" 2>&1 || status=$?
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
  units="$(find "$corpus" -type f | wc -l)"
  printf '%-36s %12s %10s %8s\n' "$target" "${execs:-?}" "${rate:-?}" "$units"
  if [ "$status" -ne 0 ]; then
    failed+=("$target")
    echo "---- $target FAILED (exit $status); end of its log:"
    tail -n 60 "$log"
    artifact="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)"
    if [ -n "$artifact" ]; then
      echo "---- input saved as $artifact; once fixed, keep it as a regression:"
      echo "     cp $artifact tests/fuzz/regressions/$target/"
    fi
  fi
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "== fuzzing FAILED: ${failed[*]}"
  exit 1
fi
echo "== fuzzing passed: ${#TARGETS[@]} targets, ${SECONDS_EACH}s each"
