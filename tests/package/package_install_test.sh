#!/usr/bin/env bash
# The Debian package, as an operator meets it (issue 27 item 1): scripts/package.sh packages this build; dpkg -i
# installs it on this machine; both binaries answer --version with this build's version line; the service unit
# passes `systemd-analyze verify` without a word and keeps its hardening; the xladb user exists; xladbd runs as
# that user from the installed options file and answers the installed CLI; dpkg --purge removes it all and the
# machine is left as it was found (the user and /var/lib/xladb too, when the test made them).
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
[ -f "$deb" ] || fail "scripts/package.sh made no package"
version="$(sed -n 's/^project(xladb VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")"
case "$(basename "$deb")" in "xladb_${version}_$(dpkg --print-architecture).deb") ;; *) fail "package name $deb";; esac
depends="$(dpkg-deb -f "$deb" Depends)"
for lib in libgrpc++ libsqlite3 libpq5 adduser; do
  grep -q "$lib" <<<"$depends" || fail "Depends lacks $lib (dpkg-shlibdeps): $depends"
done

dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "dpkg -i"; }
grep -qi "warning" "$tmp/dpkg.log" && { cat "$tmp/dpkg.log" >&2; fail "dpkg -i warned"; }
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
runuser -u xladb -- /usr/bin/xladbd --db "$XLADBD_DB" --listen 127.0.0.1:0 >"$tmp/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do grep -q "listening on" "$tmp/daemon.log" && break; sleep 0.1; done
addr="$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/daemon.log" | head -1)"
[ -n "$addr" ] || { cat "$tmp/daemon.log" >&2; fail "xladbd did not start as the xladb user"; }
runs="$(/usr/bin/xladb --addr "$addr" runs --format csv)" || fail "the installed CLI could not ask the daemon"
head -1 <<<"$runs" | grep -q "^run," || fail "runs answered: $runs"
kill "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true; daemon_pid=""
[ "$(stat -c %U "$XLADBD_DB")" = xladb ] || fail "the store was not made by the xladb user"

dpkg --purge xladb >/dev/null || fail "dpkg --purge"
for path in /usr/bin/xladb /usr/bin/xladbd "$unit" /etc/default/xladbd; do
  [ ! -e "$path" ] || fail "$path is left after the purge"
done
[ -f "$XLADBD_DB" ] || fail "the purge removed the store; a package manager must not remove a database"
echo "package: $(basename "$deb") installed, verified, ran as xladb, purged"
