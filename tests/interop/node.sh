#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# node.sh SCRIPT [ARGS...] - runs an interop script of tests/interop with
# Node.js once the pinned npm packages are there (make interop-deps). When
# they are not: a skip (77, ctest's skip code here) for a developer, a
# failure under CI (CI=true), where `make test` installs them first.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -d "$here/node_modules/@modelcontextprotocol/sdk" ] || ! command -v node >/dev/null; then
  msg="the interop npm packages are not installed (run: make interop-deps)"
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: $msg" >&2
    exit 1
  fi
  echo "SKIP: $msg"
  exit 77
fi
exec node "$@"
