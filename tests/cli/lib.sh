# SPDX-License-Identifier: MIT
# lib.sh - helpers for the end-to-end tests of the toolgate binary. Each test
# sources it, works in a fresh temporary directory, and fails loudly.
#
# Time bounds (README, "Tests"): a test whose verdict involves time writes
# every deadline, wait and elapsed-time limit as $(tg_ms N), derives N from
# what it measured first or keeps N >= 3x what the work takes, and is
# labelled `timing` in tests/CMakeLists.txt. The work it times (a tool's
# sleep) stays unscaled.
set -euo pipefail
: "${TOOLGATE:?set TOOLGATE to the toolgate binary}"
: "${TG_FIXTURES:?set TG_FIXTURES to the build tests dir}"
# The factor every time bound is multiplied by: ctest sets it from the CMake
# cache variable (1, or 3 in the sanitizer build).
TG_TEST_TIME_SCALE=${TG_TEST_TIME_SCALE:-1}
if ! [[ $TG_TEST_TIME_SCALE =~ ^[1-9][0-9]{0,3}$ ]] || [ "$TG_TEST_TIME_SCALE" -gt 1000 ]; then
  echo "FAIL: TG_TEST_TIME_SCALE must be a whole number from 1 to 1000, not '$TG_TEST_TIME_SCALE'" >&2
  exit 2
fi
TG_SOURCE_DIR=${TG_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# python3 is the interpreter CMake found (TG_PYTHON3 from ctest, /usr/bin's
# first), not whatever PATH finds first: a version manager's shim there
# (pyenv's) starts a few processes per call, 0.1 s on a quiet machine and
# seconds on a loaded one, and some tests start Python dozens of times. A
# function: start a background server with "${TG_PYTHON3:-python3}" so that
# $! is the server itself.
if [ -n "${TG_PYTHON3:-}" ] && [ -x "$TG_PYTHON3" ]; then
  python3() { "$TG_PYTHON3" "$@"; }
fi
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
# Milliseconds since the epoch (bash's own clock: no process).
now_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }
# tg_ms N: the time bound N ms times TG_TEST_TIME_SCALE.
tg_ms() { echo $(($1 * TG_TEST_TIME_SCALE)); }
# tg_s N: the same in seconds (for timeout(1), read -t).
tg_s() { echo $(($1 * TG_TEST_TIME_SCALE)); }
# wait_for MS COMMAND...: polls COMMAND every 20 ms until it succeeds (0)
# or MS ms have passed (1); callers pass a scaled bound, $(tg_ms N).
wait_for() {
  local end=$(($(now_ms) + $1))
  shift
  until "$@"; do
    [ "$(now_ms)" -ge "$end" ] && return 1
    sleep 0.02
  done
}
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
# npm_bin NAME: the path of an npm peer's program pinned in tests/interop
# (node_modules/.bin/NAME); without it (or without node) a skip (77), or a
# failure under CI=true, as tests/interop/node.sh does.
npm_bin() {
  local bin=$TG_SOURCE_DIR/tests/interop/node_modules/.bin/$1
  if [ ! -x "$bin" ] || ! command -v node >/dev/null; then
    if [ "${CI:-}" = "true" ]; then
      echo "FAIL: the interop npm packages are not installed" >&2
      exit 1
    fi
    echo "SKIP: the interop npm packages are not installed (run: make interop-deps)" >&2
    exit 77
  fi
  echo "$bin"
}
# in_dir DIR: how many processes run with DIR as their working directory
# (the servers a test started there; other tests' are elsewhere)
in_dir() {
  local n=0 p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/cwd" 2>/dev/null)" = "$1" ] && n=$((n + 1))
  done
  echo "$n"
}
finish() {
  if [ "$FAILS" -ne 0 ]; then
    echo "$(basename "$0"): $FAILS of $((CHECKS + FAILS)) checks failed" >&2
    exit 1
  fi
  echo "$(basename "$0"): $CHECKS checks passed"
}
