#!/usr/bin/env bash
# The shipped executables take their malloc from jemalloc (CMakeLists.txt, XLADB_JEMALLOC): the dynamic
# loader's own account of its symbol bindings (LD_DEBUG=bindings) must send every library's malloc, free and
# realloc to libjemalloc, none to glibc. A link order, a static libc or a dropped library that left glibc's
# malloc answering would fail here, where a timing would only drift.
# Usage: check_allocator.sh EXECUTABLE...   (each is run with --version: the bindings of its start are read)
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 EXECUTABLE..." >&2; exit 2; }
status=0
for exe in "$@"; do
  bindings="$(LD_DEBUG=bindings "$exe" --version 2>&1 >/dev/null || true)"
  for symbol in malloc free realloc; do
    lines="$(grep -F "normal symbol \`$symbol'" <<<"$bindings" || true)"
    to_jemalloc="$(grep -c 'to [^ ]*libjemalloc\.so' <<<"$lines" || true)"
    elsewhere="$(grep -v 'to [^ ]*libjemalloc\.so' <<<"$lines" || true)"
    others="$(grep -c . <<<"$elsewhere" || true)"
    if [ "$to_jemalloc" -eq 0 ] || [ "$others" -ne 0 ]; then
      echo "FAIL $(basename "$exe"): $symbol bound $to_jemalloc times to jemalloc, $others times elsewhere:" >&2
      head -3 <<<"$elsewhere" >&2
      status=1
    else
      echo "ok $(basename "$exe"): $symbol bound $to_jemalloc times, all to jemalloc"
    fi
  done
done
exit $status
