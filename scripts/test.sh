#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test (ctest), then builds and runs the
# suite again under AddressSanitizer + UndefinedBehaviorSanitizer. Exits non-zero when any test fails.
#   scripts/test.sh            # everything
#   XLADB_SKIP_SANITIZERS=1 scripts/test.sh   # the plain build only (quicker local loop)
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
JOBS="${XLADB_JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"

echo "== build (RelWithDebInfo)"
cmake -S . -B build/test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/test -j "$JOBS"
echo "== tests"
ctest --test-dir build/test --output-on-failure -j "$JOBS"

if [ "${XLADB_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "== build (ASan + UBSan)"
  cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DXLADB_SANITIZE=ON >/dev/null
  cmake --build build/asan -j "$JOBS"
  echo "== tests under ASan + UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build/asan --output-on-failure -j "$JOBS"
fi
echo "== all tests passed"
