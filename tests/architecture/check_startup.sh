#!/usr/bin/env bash
# What the xladb command maps and sets up as it starts (docs/PERFORMANCE.md, "Page faults, libpq loaded on
# demand"):
#   * libpq is not among the libraries the loader maps (store/postgres/libpq_functions.h loads it when a
#     PostgreSQL store is opened), and where libpq cannot be loaded at all — hidden by a bind mount in a mount
#     namespace of its own, which needs root and unshare — a SQLite store is still ingested and read, and a
#     PostgreSQL URI is refused with words that say what to install;
#   * jemalloc runs with the options the command defines (cli/allocator_options.cc): thp "always".
# Usage: check_startup.sh XLADB DUMP_FOLDER   (exit 77, a skip, where libpq cannot be hidden)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 XLADB DUMP_FOLDER" >&2; exit 2; }
xladb="$1"; dumps="$2"
fail() { echo "FAIL: $*" >&2; exit 1; }

if readelf -d "$xladb" | grep -q 'NEEDED.*libpq'; then fail "$xladb links libpq: $(readelf -d "$xladb" | grep libpq)"; fi
echo "ok: libpq is not linked"

stats="$(MALLOC_CONF=stats_print:true "$xladb" --version 2>&1 >/dev/null || true)"
grep -q 'opt.thp: "always"' <<<"$stats" || fail "jemalloc's opt.thp is not \"always\": $(grep 'opt.thp' <<<"$stats")"
echo "ok: jemalloc asks for transparent huge pages"

libpq="$(ldconfig -p | awk '/libpq\.so\.5 \(libc6,x86-64\)/ {print $NF; exit}')"
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null || [ -z "$libpq" ]; then
  echo "SKIP: hiding libpq needs root, unshare and an installed libpq.so.5"
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# In a mount namespace of its own, libpq.so.5 reads as an empty file: dlopen cannot load it.
unshare --mount -- bash -euo pipefail -c '
  mount --bind /dev/null "$1"
  "$2" ingest "$3" --db "$4/store.db" >"$4/ingest.out" 2>&1
  "$2" runs --db "$4/store.db" >"$4/runs.out" 2>&1
  if "$2" runs --db "postgresql://xladb@127.0.0.1:1/none" >"$4/pg.out" 2>&1; then echo "exit 0" >>"$4/pg.out"; fi
' _ "$libpq" "$xladb" "$dumps" "$tmp" || fail "without libpq, the SQLite store failed: $(cat "$tmp"/*.out)"
grep -q "1 ingested" "$tmp/ingest.out" || fail "without libpq, the ingest said: $(cat "$tmp/ingest.out")"
grep -q "$(basename "$dumps")" "$tmp/runs.out" || fail "without libpq, the runs: $(cat "$tmp/runs.out")"
echo "ok: without libpq a SQLite store is ingested and read"
grep -q "install libpq5" "$tmp/pg.out" && ! grep -q "exit 0" "$tmp/pg.out" \
  || fail "without libpq, a PostgreSQL URI said: $(cat "$tmp/pg.out")"
echo "ok: without libpq a PostgreSQL URI is refused: $(cat "$tmp/pg.out")"
