# SPDX-License-Identifier: MIT
# lib.sh - helpers for the end-to-end tests of the toolgate binary. Each test
# sources it, works in a fresh temporary directory, and fails loudly.
set -euo pipefail
: "${TOOLGATE:?set TOOLGATE to the toolgate binary}"
: "${TG_FIXTURES:?set TG_FIXTURES to the build tests dir}"
TG_SOURCE_DIR=${TG_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
FAILS=0
CHECKS=0

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
pass() { CHECKS=$((CHECKS + 1)); }
# check DESCRIPTION COMMAND...: the command must succeed
check() { local d=$1; shift; if "$@"; then pass; else fail "$d"; fi; }
# eq DESCRIPTION ACTUAL EXPECTED
eq() { if [ "$2" == "$3" ]; then pass; else fail "$1: got '$2', expected '$3'"; fi; }
# contains DESCRIPTION HAYSTACK NEEDLE
contains() { case "$2" in *"$3"*) pass ;; *) fail "$1: '$3' not in '$2'" ;; esac; }
# jqr FILE FILTER: raw jq output
jqr() { jq -r "$2" "$1"; }
now_ms() { date +%s%3N; }
# skip_without_bwrap STATUS: unless bubblewrap can make the namespaces the
# sandbox uses here, says why and exits with STATUS (77: ctest's skip code
# where the test sets SKIP_RETURN_CODE)
skip_without_bwrap() {
  bwrap --unshare-user --unshare-pid --unshare-net --ro-bind / / --dev /dev \
    --proc /proc true >/dev/null 2>&1 && return 0
  echo "SKIP: $(basename "$0"): bubblewrap cannot make user, PID and network namespaces here" \
    "($(command -v bwrap || echo 'bwrap not installed'))"
  exit "$1"
}
finish() {
  if [ "$FAILS" -ne 0 ]; then
    echo "$(basename "$0"): $FAILS of $((CHECKS + FAILS)) checks failed" >&2
    exit 1
  fi
  echo "$(basename "$0"): $CHECKS checks passed"
}
