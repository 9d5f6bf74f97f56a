#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/mcp-client: toolgate as an MCP client against the TypeScript SDK's
# Client, the same server (@modelcontextprotocol/server-everything over
# stdio, pinned in tests/interop), the same `echo` call, in one run:
# client_load calls it through the whole gate (schema, policy, the journal
# on at its defaults in a fresh directory: ev__echo), sdk_client.mjs calls
# it directly; N calls one at a time, then N with K in flight; then the
# ratios against issue 16's goals (>= 0.9x the SDK's calls/s, <= +10% at
# p50).
#
#   bench/mcp-client/run.sh [BUILD_DIR] [--calls N] [--inflight K] [--warmup W]
#
# Both clients first make W calls (default 5000) that are not timed: the
# server is Node, and until its JIT has compiled the request path (a few
# thousand calls) its own time per call falls by half, which would count
# against whichever client runs first.
#
# Like for like: the SDK starts the server as a plain child process, so the
# ratios compare against toolgate starting it the same way (the source's
# "sandbox": false). toolgate's default runs the server in its sandbox
# (bubblewrap + the seccomp filter, which every system call of node then
# pays); that figure is printed beside it, with its own ratio, so the
# sandbox's cost stays in view.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build
calls=2000
inflight=16
warmup=5000
while [ $# -gt 0 ]; do
  case $1 in
    --calls) calls=$2; shift 2 ;;
    --inflight) inflight=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    -*) echo "usage: bench/mcp-client/run.sh [BUILD_DIR] [--calls N] [--inflight K] [--warmup W]" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
load=$build/bench/client_load
[ -x "$load" ] || { echo "bench/mcp-client: $load is not built (cmake --build $build)" >&2; exit 1; }
[ -d tests/interop/node_modules/@modelcontextprotocol/server-everything ] ||
  scripts/npm-deps.sh tests/interop
server=$(readlink -f tests/interop/node_modules/.bin/mcp-server-everything)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/toolgate.json" <<JSON
{"workspace": "$tmp", "journal": "$tmp/.toolgate/journal.db", "builtin_tools": [],
 "tools": [{"name": "ev", "mcp": {"command": ["$server"], "sandbox": false}}]}
JSON
cat >"$tmp/sandboxed.json" <<JSON
{"workspace": "$tmp", "journal": "$tmp/.toolgate/journal-sb.db", "builtin_tools": [],
 "tools": [{"name": "ev", "mcp": {"command": ["$server"]}}]}
JSON
opts=(--calls "$calls" --inflight "$inflight" --warmup "$warmup")
echo "== server-everything's echo over stdio, $calls calls one at a time, then $inflight in flight"
tg=$(cd "$tmp" && "$OLDPWD/$load" --config "$tmp/toolgate.json" --tool ev__echo --args '{"message":"hi"}' "${opts[@]}")
sdk=$(node bench/mcp-client/sdk_client.mjs --tool echo --args '{"message":"hi"}' "${opts[@]}" -- "$server")
sb=$(cd "$tmp" && "$OLDPWD/$load" --config "$tmp/sandboxed.json" --tool ev__echo --args '{"message":"hi"}' "${opts[@]}" | jq -c '.label = "toolgate, server sandboxed"')
for r in "$tg" "$sdk" "$sb"; do
  echo "$r" | jq -r '"  \(.label): sequential \(.seq_per_s|floor)/s p50 \(.seq_p50_us) us p99 \(.seq_p99_us) us; \(.inflight) in flight \(.par_per_s|floor)/s p50 \(.par_p50_us) us p99 \(.par_p99_us) us"'
done
echo "== ratios (toolgate / SDK, the server unsandboxed on both sides; goals from issue 16)"
jq -rn --argjson g "$tg" --argjson s "$sdk" '
  def r(a; b): "\(a / b * 100 | floor / 100)x";
  "  sequential \(r($g.seq_per_s; $s.seq_per_s)) the SDK'"'"'s calls/s (goal >= 0.9x), p50 \((($g.seq_p50_us / $s.seq_p50_us - 1) * 100) | floor)% (goal <= +10%)",
  "  \($g.inflight) in flight \(r($g.par_per_s; $s.par_per_s)) the SDK'"'"'s calls/s, p50 \((($g.par_p50_us / $s.par_p50_us - 1) * 100) | floor)%"'
jq -rn --argjson g "$sb" --argjson s "$sdk" '
  def r(a; b): "\(a / b * 100 | floor / 100)x";
  "  the server in toolgate'"'"'s sandbox (its default): sequential \(r($g.seq_per_s; $s.seq_per_s)), p50 \((($g.seq_p50_us / $s.seq_p50_us - 1) * 100) | floor)%; \($g.inflight) in flight \(r($g.par_per_s; $s.par_per_s))"'

# The gateway's own cost: toolgate serve with an MCP source that is
# toolgate serve (the built-in echo), against that server alone, the same
# load client (bench/mcp's mcp_load), one call at a time.
mcp_load=$build/bench/mcp_load
tgbin=$build/toolgate
if [ -x "$mcp_load" ] && [ -x "$tgbin" ]; then
  echo "== the gateway: toolgate serve in front of toolgate serve (echo), against it alone"
  cp bench/mcp/echo.json "$tmp/echo.json"
  cat >"$tmp/gateway.json" <<JSON
{"journal": null, "envelope": false, "policy": null, "builtin_tools": [],
 "tools": [{"name": "echo", "mcp": {"command": ["$(readlink -f "$tgbin")", "serve", "--stdio",
   "--config", "$tmp/echo.json"], "sandbox": false}}]}
JSON
  alone=$("$mcp_load" --calls "$calls" --inflight "$inflight" --json --label alone -- "$tgbin" serve --stdio --config "$tmp/echo.json")
  gw=$("$mcp_load" --calls "$calls" --inflight "$inflight" --json --label gateway --tool echo__echo -- "$tgbin" serve --stdio --config "$tmp/gateway.json")
  for r in "$alone" "$gw"; do
    echo "$r" | jq -r '"  \(.label): sequential \(.seq_per_s|floor)/s p50 \(.seq_p50_us) us p99 \(.seq_p99_us) us; \(.inflight) in flight \(.par_per_s|floor)/s p50 \(.par_p50_us) us"'
  done
  jq -rn --argjson a "$alone" --argjson g "$gw" '"  the gateway adds \(($g.seq_p50_us - $a.seq_p50_us) * 10 | floor / 10) us at p50 one call at a time (goal <= 50 us)"'
fi
