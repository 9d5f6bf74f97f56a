#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Python binding's tests (ctest python_binding): pyflakes over the
# package, its tests and examples/python, then pytest over
# bindings/python/tests with the library under test.
#
#   bindings/python/run_tests.sh LIBTOOLGATE.so [ASAN_RUNTIME]
#
# With ASAN_RUNTIME (the sanitizer build: libasan.so of the compiler), it is
# preloaded into Python, which is not built with it, and leak detection is
# off (the interpreter's own allocations at exit are not toolgate's).
# Python is Debian's /usr/bin/python3 when there (python3-pytest is its
# package), else python3 on PATH.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lib=${1:?usage: run_tests.sh LIBTOOLGATE.so [ASAN_RUNTIME]}
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
if ! "$py" -c 'import pytest, pyflakes' 2>/dev/null; then
  echo "FAIL: $py has no pytest or pyflakes (Debian: python3-pytest python3-pyflakes; scripts/deps.sh installs them)" >&2
  exit 1
fi
"$py" -m pyflakes "$here/toolgate" "$here/tests" "$here/../../examples/python"
export TOOLGATE_LIBRARY=$lib
if [ -n "${2:-}" ]; then
  export LD_PRELOAD=$2 ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
exec "$py" -m pytest -q -p no:cacheprovider --basetemp "$work/tmp" "$here/tests"
