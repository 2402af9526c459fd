#!/usr/bin/env bash
# The Debian package, as an operator meets it (issue 27 item 1): scripts/package.sh packages this build; dpkg -i
# installs it on this machine; both binaries answer --version with this build's version line; the service unit
# passes `systemd-analyze verify` without a word and keeps its hardening; the xladb user exists; xladbd runs as
# that user from the installed options file and answers the installed CLI. Then the upgrade: the same build
# packaged as an older version is installed first, with an edited options file and a store of the previous
# schema (tests/fixtures/store/schema_v6.sql, one run) in /var/lib/xladb; the package installed over it keeps
# the edit and the store, and the daemon started as the unit starts it migrates the store and still lists the
# run. dpkg --purge removes the package and the machine is left as it was found (the user and /var/lib/xladb
# too, when the test made them).
#   tests/package/package_install_test.sh BUILD_DIR
# Exit 77 (a skip, with the reason) where it cannot install: not root, no dpkg, or an xladb package already
# installed that is not this test's to remove.
set -euo pipefail
BUILD="$(cd "$1" && pwd)"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "installing a package needs root"
command -v dpkg >/dev/null || skip "no dpkg on this machine"
if dpkg -s xladb >/dev/null 2>&1; then skip "an xladb package is already installed here; not touching it"; fi

had_user=0; getent passwd xladb >/dev/null && had_user=1
had_state=0; [ -e /var/lib/xladb ] && had_state=1
tmp="$(mktemp -d)"
daemon_pid=""
cleanup() {
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null || true
  dpkg --purge xladb >/dev/null 2>&1 || true
  if [ "$had_user" = 0 ] && getent passwd xladb >/dev/null; then deluser --system xladb >/dev/null 2>&1 || true; fi
  if [ "$had_user" = 0 ] && getent group xladb >/dev/null; then delgroup --system xladb >/dev/null 2>&1 || true; fi
  if [ "$had_state" = 0 ]; then rm -rf /var/lib/xladb; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

deb="$("$ROOT/scripts/package.sh" "$BUILD" | tail -1)"
# The same build as an older version, to install first and upgrade from.
(cd "$BUILD" && cpack -G DEB -D CPACK_PACKAGE_VERSION=0.0.1 -D CPACK_OUTPUT_FILE_PREFIX="$tmp/old" >/dev/null 2>&1) \
  || fail "cpack of the older version"
old_deb="$(ls "$tmp"/old/xladb_0.0.1_*.deb)"
[ -f "$deb" ] || fail "scripts/package.sh made no package"
version="$(sed -n 's/^project(xladb VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")"
case "$(basename "$deb")" in "xladb_${version}_$(dpkg --print-architecture).deb") ;; *) fail "package name $deb";; esac
depends="$(dpkg-deb -f "$deb" Depends)"
needed=(libgrpc++ libsqlite3 libpq5 adduser)  # libpq5 by name (loaded when a store is opened: package.cmake)
# jemalloc only where this build links it (the XLADB_JEMALLOC option, on unless configured off).
grep -q '^XLADB_JEMALLOC:BOOL=ON$' "$BUILD/CMakeCache.txt" && needed+=(libjemalloc2)
for lib in "${needed[@]}"; do
  grep -q "$lib" <<<"$depends" || fail "Depends lacks $lib: $depends"
done

dpkg -i "$old_deb" >"$tmp/dpkg-old.log" 2>&1 || { cat "$tmp/dpkg-old.log" >&2; fail "dpkg -i (older version)"; }
grep -qi "warning" "$tmp/dpkg-old.log" && { cat "$tmp/dpkg-old.log" >&2; fail "dpkg -i warned"; }
# What an operator leaves before upgrading: an edited options file, and a store of the previous schema.
echo "# edited by the operator" >>/etc/default/xladbd
db=/var/lib/xladb/xladb.db
(cat "$ROOT/tests/fixtures/store/schema_v6.sql"
 echo "PRAGMA user_version = 6;"
 echo "INSERT INTO runs(run_id, name, source_path, run_time_us, run_time_source, created_at_us, updated_at_us)"
 echo "  VALUES (1, 'run-before-upgrade', '/dumps/r', 1700000000000000, 'flag', 1700000000000000, 1700000000000000);"
) | runuser -u xladb -- sqlite3 "$db" || fail "making a version-6 store"

dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "dpkg -i (the upgrade)"; }
grep -qi "warning" "$tmp/dpkg.log" && { cat "$tmp/dpkg.log" >&2; fail "dpkg -i warned"; }
[ "$(dpkg-query -W -f '${Version}' xladb)" = "$version" ] || fail "the upgrade did not install $version"
grep -qx "# edited by the operator" /etc/default/xladbd || fail "the upgrade lost the operator's edit of /etc/default/xladbd"
[ "$(sqlite3 "$db" 'PRAGMA user_version')" = 6 ] || fail "the upgrade touched the store before the daemon ran"
for program in xladb xladbd; do
  built="$("$BUILD/$([ $program = xladb ] && echo cli || echo service)/$program" --version)"
  installed="$("/usr/bin/$program" --version)"
  [ "$installed" = "$built" ] || fail "/usr/bin/$program --version: '$installed', the build says '$built'"
done

unit=/usr/lib/systemd/system/xladbd.service
[ -f "$unit" ] || fail "no $unit"
if command -v systemd-analyze >/dev/null; then
  # verify exits 0 even for lines it ignores: any word from it is a failure.
  words="$(systemd-analyze verify "$unit" 2>&1)" || fail "systemd-analyze verify: $words"
  [ -z "$words" ] || fail "systemd-analyze verify: $words"
else
  fail "systemd-analyze is missing (Debian's systemd package)"
fi
for directive in "User=xladb" "StateDirectory=xladb" "ProtectSystem=strict" "NoNewPrivileges=yes" "PrivateTmp=yes" \
                 "EnvironmentFile=-/etc/default/xladbd"; do
  grep -qx "$directive" "$unit" || fail "the unit lacks $directive"
done
grep -qx "/etc/default/xladbd" /var/lib/dpkg/info/xladb.conffiles || fail "/etc/default/xladbd is not a conffile"
getent passwd xladb >/dev/null || fail "no xladb user"
[ "$(stat -c %U /var/lib/xladb)" = xladb ] || fail "/var/lib/xladb is not the xladb user's"

# The daemon as the unit starts it: the xladb user, the options file's store, on a free loopback port.
set -a; . /etc/default/xladbd; set +a
[ "$XLADBD_DB" = /var/lib/xladb/xladb.db ] || fail "XLADBD_DB is $XLADBD_DB"
runuser -u xladb -- /usr/bin/xladbd --db "$XLADBD_DB" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
  >"$tmp/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do grep -q "listening on" "$tmp/daemon.log" && break; sleep 0.1; done
addr="$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/daemon.log" | head -1)"
[ -n "$addr" ] || { cat "$tmp/daemon.log" >&2; fail "xladbd did not start as the xladb user"; }
runs="$(/usr/bin/xladb --addr "$addr" runs --format csv)" || fail "the installed CLI could not ask the daemon"
head -1 <<<"$runs" | grep -q "^run," || fail "runs answered: $runs"
grep -q "^run-before-upgrade," <<<"$runs" || fail "the run stored before the upgrade is not listed: $runs"
# Its metrics: the store it measures holds the one run (it measures at start, on its own thread).
metrics_url="$(sed -n 's/.*metrics on \(http:[^ ]*\).*/\1/p' "$tmp/daemon.log" | head -1)"
[ -n "$metrics_url" ] || fail "xladbd printed no metrics address"
for _ in $(seq 100); do
  scrape="$(/usr/bin/python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' \
            "$metrics_url" 2>/dev/null)" || true
  grep -qx "xladb_runs_stored 1" <<<"$scrape" && break
  sleep 0.1
done
grep -qx "xladb_runs_stored 1" <<<"$scrape" || fail "/metrics of the installed daemon: $scrape"
grep -q '^xladb_build_info{version="'"$version"'"' <<<"$scrape" || fail "/metrics names another version: $scrape"
kill "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true; daemon_pid=""
[ "$(stat -c %U "$XLADBD_DB")" = xladb ] || fail "the store is not the xladb user's"
schema="$(sed -n 's/.*schema version \([0-9]*\).*/\1/p' <<<"$(/usr/bin/xladbd --version)")"
[ "$(sqlite3 "$db" 'PRAGMA user_version')" = "$schema" ] || fail "the daemon did not migrate the store to $schema"

dpkg --purge xladb >/dev/null || fail "dpkg --purge"
for path in /usr/bin/xladb /usr/bin/xladbd "$unit" /etc/default/xladbd; do
  [ ! -e "$path" ] || fail "$path is left after the purge"
done
[ -f "$XLADBD_DB" ] || fail "the purge removed the store; a package manager must not remove a database"
echo "package: $(basename "$deb") installed over $(basename "$old_deb"), verified, migrated a version-6 store, ran as xladb, purged"
