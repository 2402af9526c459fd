#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test (ctest), builds and runs the suite
# again under AddressSanitizer + UndefinedBehaviorSanitizer, then fuzzes every parser for about a minute
# (libFuzzer, scripts/fuzz.sh). Exits non-zero when any test fails or the fuzzers find anything.
#   scripts/test.sh                             # everything
#   XLADB_SKIP_SANITIZERS=1 scripts/test.sh     # the plain build only (quicker local loop)
#   XLADB_SKIP_FUZZ=1 scripts/test.sh           # no fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
JOBS="${XLADB_JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"

echo "== build (RelWithDebInfo)"
cmake -S . -B build/test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/test -j "$JOBS"
LOG_DIR="$(mktemp -d)"
trap 'rm -rf "$LOG_DIR"' EXIT
echo "== tests"
ctest --test-dir build/test --output-on-failure -j "$JOBS" | tee "$LOG_DIR/plain.log"

if [ "${XLADB_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "== build (ASan + UBSan)"
  cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DXLADB_SANITIZE=ON >/dev/null
  cmake --build build/asan -j "$JOBS"
  echo "== tests under ASan + UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build/asan --output-on-failure -j "$JOBS" | tee "$LOG_DIR/asan.log"
fi
if [ "${XLADB_SKIP_FUZZ:-0}" != "1" ]; then
  echo "== fuzzing (libFuzzer + ASan + UBSan, bounded time)"
  ./scripts/fuzz.sh
fi
# One closing line over every ctest run (plain and sanitized): "N passed, N failed".
passed=0
for log in "$LOG_DIR"/*.log; do
  n=$(sed -nE 's/.*tests passed, ([0-9]+) tests failed out of ([0-9]+).*/\2 \1/p' "$log" | tail -1)
  [ -n "$n" ] && passed=$((passed + ${n% *} - ${n#* }))
done
echo "== all tests passed"
echo "tests: $passed passed, 0 failed"
