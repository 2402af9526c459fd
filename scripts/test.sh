#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test (ctest), builds and runs the suite
# again under AddressSanitizer + UndefinedBehaviorSanitizer, then fuzzes every parser for about a minute
# (libFuzzer, scripts/fuzz.sh). Ends with every skipped test and why, and the line
# "tests: N passed, N failed, N skipped" (scripts/test_report.py). Exits non-zero when any test fails, a
# ctest run has no tests, or the fuzzers find anything; a failing stage skips the stages after it.
#   scripts/test.sh                             # everything
#   XLADB_SKIP_SANITIZERS=1 scripts/test.sh     # the plain build only (quicker local loop)
#   XLADB_SKIP_FUZZ=1 scripts/test.sh           # no fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
JOBS="${XLADB_JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Paths relative to the checkout in ccache's keys, so a fresh clone in another folder (CI) reuses what an
# earlier build of the same sources compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR=1

echo "== build (RelWithDebInfo)"
cmake -S . -B build/test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/test -j "$JOBS"
LOG_DIR="$(mktemp -d)"
trap 'rm -rf "$LOG_DIR"' EXIT
REPORTS=()  # one ctest JUnit file per ctest run, read by scripts/test_report.py at the end
status=0
# ctest over one build folder; its JUnit file keeps every test's whole output (the skip reasons and the e2e
# entry's Python test lines are read from it). No tests at all is a failure.
run_ctest() {
  local name="$1" dir="$2"
  REPORTS+=("$LOG_DIR/$name.xml")
  ctest --test-dir "$dir" --output-on-failure -j "$JOBS" --no-tests=error --output-junit "$LOG_DIR/$name.xml" \
    --test-output-size-passed 16777216 --test-output-size-failed 16777216
}

echo "== tests"
run_ctest plain build/test || status=1

if [ "$status" = 0 ] && [ "${XLADB_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "== build (ASan + UBSan)"
  cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DXLADB_SANITIZE=ON >/dev/null
  cmake --build build/asan -j "$JOBS"
  echo "== tests under ASan + UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest asan build/asan || status=1
fi
if [ "$status" = 0 ] && [ "${XLADB_SKIP_FUZZ:-0}" != "1" ]; then
  echo "== fuzzing (libFuzzer + ASan + UBSan, bounded time)"
  ./scripts/fuzz.sh || { echo "== fuzzing failed (see above)"; status=1; }
fi
# Every test of every ctest run (plain and sanitized), one by one: each skip named with its reason, then the
# closing line "tests: N passed, N failed, N skipped". Fails when a test failed or a run had no tests.
echo "== test report"
python3 scripts/test_report.py "${REPORTS[@]}" || status=1
exit "$status"
