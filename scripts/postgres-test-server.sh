#!/usr/bin/env bash
# A real PostgreSQL 15 for tests: its own cluster in a temporary folder, run as an unprivileged user, listening
# on a free loopback port only, stopped and removed at the end.
#   scripts/postgres-test-server.sh start DIR   # initdb + pg_ctl start in DIR/cluster; prints the owner's URI,
#                                               # and writes it to DIR/uri (and the read-only role's to
#                                               # DIR/reader_uri)
#   scripts/postgres-test-server.sh stop DIR    # pg_ctl stop -m fast; removes DIR/cluster
# The database `xladb` belongs to the role `xladb`; the role `xladb_reader` may only connect (a store grants
# it SELECT). Authentication is `trust` on 127.0.0.1 and the socket in DIR: the cluster lives only as long as
# the tests. As root, initdb and pg_ctl run as the `postgres` user the Debian package creates (initdb refuses
# root); otherwise as the calling user.
set -euo pipefail

PG_BIN="${XLADB_PG_BIN:-/usr/lib/postgresql/15/bin}"
cmd="${1:-}"
dir="${2:-}"
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 2
fi
if [ ! -x "$PG_BIN/initdb" ]; then
  echo "PostgreSQL 15 is not installed ($PG_BIN/initdb missing): run scripts/install-deps.sh" >&2
  exit 1
fi
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
  start)
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    # The cluster's owner must reach the folder: every folder above it must be traversable.
    if [ "$(id -u)" = 0 ]; then
      p="$dir"
      while [ "$p" != "/" ]; do chmod o+x "$p" 2>/dev/null || true; p="$(dirname "$p")"; done
      chown postgres "$dir"
    fi
    # A cluster left by a test run that was killed before its stop: stop it if it still runs, and start afresh.
    if [ -e "$dir/cluster" ]; then
      echo "postgres-test-server: removing $dir/cluster, left by an earlier run that did not stop it" >&2
      as_owner "$PG_BIN/pg_ctl" -D "$dir/cluster" -m immediate -w stop >/dev/null 2>&1 || true
      rm -rf "$dir/cluster"
    fi
    as_owner "$PG_BIN/initdb" -D "$dir/cluster" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    # A free port: ask the kernel for one, then let the server take it (retry if someone else did meanwhile).
    for attempt in 1 2 3 4 5; do
      port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
      if as_owner "$PG_BIN/pg_ctl" -D "$dir/cluster" -l "$dir/server.log" -w -t 60 \
           -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100" start >/dev/null; then
        break
      fi
      [ "$attempt" = 5 ] && { cat "$dir/server.log" >&2; exit 1; }
    done
    "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres <<SQL
CREATE ROLE xladb LOGIN;
CREATE ROLE xladb_reader LOGIN;
CREATE DATABASE xladb OWNER xladb;
SQL
    echo "$port" >"$dir/port"
    echo "postgresql://xladb@127.0.0.1:$port/xladb" >"$dir/uri"
    echo "postgresql://xladb_reader@127.0.0.1:$port/xladb" >"$dir/reader_uri"
    cat "$dir/uri"
    ;;
  stop)
    if [ -d "$dir/cluster" ]; then
      as_owner "$PG_BIN/pg_ctl" -D "$dir/cluster" -m fast -w stop >/dev/null 2>&1 || true
      rm -rf "$dir/cluster"
    fi
    ;;
  *)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
