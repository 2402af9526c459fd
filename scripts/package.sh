#!/usr/bin/env bash
# Builds the Debian package into build/package/: xladb_<version>_<arch>.deb (scripts/package/package.cmake says
# what it holds).
#   scripts/package.sh              # a Release build in build/release (without the tests), then the package
#   scripts/package.sh BUILD_DIR    # packages an existing build folder as it is (the test suite: build/test)
# Prints the package's path.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build/release}"
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DXLADB_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$BUILD" -j "$(nproc)" --target xladb xladbd
version="$(sed -n 's/^project(xladb VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)"
rm -f "build/package/xladb_${version}_"*.deb
(cd "$BUILD" && cpack -G DEB >/dev/null)
ls "$PWD/build/package/xladb_${version}_"*.deb
