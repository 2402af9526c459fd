#!/usr/bin/env bash
# The benchmark: builds the Release binaries into build/release (no tests) and runs bench/run_bench.py, which
# measures every target of the performance issue beside the Python baseline, prints the tables and writes
# docs/PERFORMANCE.md.
#   scripts/bench.sh                   # full size: ~45 min, ~35 GB under $TMPDIR (deleted afterwards)
#   scripts/bench.sh --size quick      # the same with a 100-run query store: minutes
#   scripts/bench.sh --size smoke      # tiny inputs, well under a minute
#   scripts/bench.sh --size smoke --no-write    # leave docs/PERFORMANCE.md alone
# Other options go to run_bench.py (/usr/bin/python3 bench/run_bench.py --help). Exits non-zero when a step
# fails (a missed target is reported in the table, not as a failure).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh >/dev/null
JOBS="${XLADB_JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"

echo "== build (Release) into build/release"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DXLADB_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$JOBS" --target xladb xladbd xladb_gen xladb_parse xladb_load
exec /usr/bin/python3 bench/run_bench.py --build-dir build/release "$@"
