#!/usr/bin/env bash
# Installs the Debian 12 packages xladb needs to build, test and run.
# Idempotent: does nothing (and needs no root) when everything is already there.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache clang
  libsqlite3-dev sqlite3 libsqlitecpp-dev
  libgrpc++-dev libgrpc-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc grpc-proto
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev libfmt-dev libtomlplusplus-dev
  nlohmann-json3-dev libabsl-dev libxxhash-dev libzstd-dev zlib1g-dev zstd
  libarchive-dev libarchive-tools libjemalloc-dev
  python3-grpcio python3-protobuf python3-yaml openssl cmark-gfm
  python3-venv python3-pip python3-setuptools python3-wheel python3-pandas
  libcpp-httplib-dev libssl-dev libbrotli-dev chromium python3-websocket fonts-dejavu-core
  libpq-dev postgresql-15
  prometheus
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
