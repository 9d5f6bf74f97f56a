#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/mcp: `toolgate serve` against an McpServer of the MCP TypeScript SDK
# (bench/mcp/sdk_echo_server.mjs), the same `echo {text}` tool, driven by
# the one C load client (mcp_load) in the same run: over stdio and over
# Streamable HTTP, N calls one at a time and N with K in flight, calls/s,
# p50/p99 and the server's peak RSS; then the ratios against the issue's
# goals. Before them, the pipe ping-pong limit (pingpong) on one CPU and
# across two, and the ceiling of calls/s over stdio (stdio_limit: a C
# server that only echoes lines, with no work a real server does); last,
# 1,000 HTTP sessions held at once (sessions.mjs).
#
#   bench/mcp/run.sh [TOOLGATE] [--calls N] [--inflight K] [--size BYTES]
#                    [--protocol-version V] [--rounds R]
#
# With --rounds R (default 1) the SDK and toolgate are measured R times,
# one after the other in each round, and every ratio is taken within its
# round; the ratios printed are the medians of the rounds, with their
# range: on a shared machine one round can fall into a minute of noise.
#
# TOOLGATE (default build/toolgate) is run as
#   toolgate serve --stdio --config bench/mcp/echo.json
#   toolgate serve --http 127.0.0.1:PORT --config bench/mcp/echo.json
# and again with echo-journal.json (the journal on at its defaults, in a
# fresh temporary directory). echo.json enables the built-in echo with
# "builtin_tools": ["echo"], the journal off, and the trust envelope off so
# both servers return the same text. When `toolgate serve` is not there
# (yet), toolgate is skipped with a message and the SDK and the limit are
# still measured. mcp_load and pingpong come from TOOLGATE's build
# directory (bench/). The SDK comes from tests/interop/node_modules (make
# interop-deps).
set -euo pipefail
cd "$(dirname "$0")/../.."
tg=build/toolgate
calls=20000
inflight=64
size=
version=2025-06-18
rounds=1
while [ $# -gt 0 ]; do
  case $1 in
    --calls) calls=$2; shift 2 ;;
    --inflight) inflight=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --protocol-version) version=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    -*) echo "usage: bench/mcp/run.sh [TOOLGATE] [--calls N] [--inflight K] [--size BYTES] [--protocol-version V] [--rounds R]" >&2; exit 2 ;;
    *) tg=$1; shift ;;
  esac
done
case $rounds in ''|*[!0-9]*|0) echo "bench/mcp: --rounds takes a positive integer" >&2; exit 2 ;; esac
bindir=$(dirname "$tg")/bench
load=$bindir/mcp_load
for p in "$load" "$bindir/pingpong" "$bindir/stdio_limit"; do
  [ -x "$p" ] || { echo "bench/mcp: $p is not built (cmake --build $(dirname "$tg"))" >&2; exit 1; }
done
[ -d tests/interop/node_modules/@modelcontextprotocol/sdk ] ||
  scripts/npm-deps.sh tests/interop

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
opts=(--calls "$calls" --inflight "$inflight" --protocol-version "$version" --json)
[ -n "$size" ] && opts+=(--size "$size")

# [--pin one|two] label transport command...: one mcp_load run, its JSON
# line appended to $tmp/results (a failed run is said and left out); pinned
# runs measure the sequential figure only (--inflight 1).
measure() {
  local pin=()
  if [ "$1" = --pin ]; then pin=(--pin "$2" --inflight 1); shift 2; fi
  local label=$1 transport=$2
  shift 2
  local port out
  if [ "$transport" = http ]; then
    port=$(free_port)
    local cmd=()
    for a in "$@"; do cmd+=("${a//@PORT@/$port}"); done
    out=$("$load" "${opts[@]}" "${pin[@]}" --label "$label" --http "127.0.0.1:$port/mcp" -- "${cmd[@]}") || out=
  else
    out=$("$load" "${opts[@]}" "${pin[@]}" --label "$label" -- "$@") || out=
  fi
  if [ -z "$out" ]; then
    echo "bench/mcp: $label over $transport failed (above)" >&2
    return 0
  fi
  echo "$out" | jq -c --argjson r "$round" '. + {round: $r}' >> "$tmp/results"
  echo "$out" | jq -r 'if .pin != "none" then "  \(.label) \(.transport), pinned to \(if .pin == "one" then "one CPU" else "two CPUs" end): sequential \(.seq_per_s|floor)/s p50 \(.seq_p50_us) us p99 \(.seq_p99_us) us" else "  \(.label) \(.transport) (\(.protocol), \(.size) B): sequential \(.seq_per_s|floor)/s p50 \(.seq_p50_us) us p99 \(.seq_p99_us) us; \(.inflight) in flight \(.par_per_s|floor)/s p50 \(.par_p50_us) us p99 \(.par_p99_us) us; RSS \(.rss_kib/1024*10|floor/10) MiB" end'
}

echo "== the limit: a pipe ping-pong between two processes"
pp=$("$bindir/pingpong" --round-trips 100000 --rounds 5 --json)
limit_one=$(echo "$pp" | jq .pinned_one_cpu_us)
limit_two=$(echo "$pp" | jq .across_cpus_us)
echo "  both processes pinned to one CPU: $limit_one us a round trip; pinned to two CPUs: $limit_two us (median of 5 rounds of 100,000)"

echo "== the ceiling over stdio: a C server that only echoes lines (stdio_limit)"
round=0
measure limit stdio "$bindir/stdio_limit"

sdk=(node bench/mcp/sdk_echo_server.mjs)
have_tg=
if [ ! -x "$tg" ]; then
  tg_skip="$tg is not built"
else
  cp bench/mcp/echo.json bench/mcp/echo-journal.json "$tmp/"
  probe=0
  timeout 10 "$tg" serve --stdio --config "$tmp/echo.json" </dev/null >/dev/null 2>"$tmp/probe" || probe=$?
  if [ "$probe" -ne 0 ]; then
    tg_skip="'toolgate serve' is not there yet (toolgate serve --stdio exited $probe: $(head -c 200 "$tmp/probe" | head -1))"
  else
    have_tg=1
  fi
fi
for round in $(seq "$rounds"); do
  [ "$rounds" -gt 1 ] && echo "=== round $round of $rounds"
  echo "== the TypeScript SDK's McpServer (node $(node --version))"
  measure sdk stdio "${sdk[@]}"
  measure sdk http "${sdk[@]}" --http @PORT@
  measure sdk-json http "${sdk[@]}" --http @PORT@ --json
  measure --pin one sdk stdio "${sdk[@]}"
  measure --pin two sdk stdio "${sdk[@]}"

  echo "== toolgate serve ($tg)"
  if [ -z "$have_tg" ]; then
    echo "  skipped: $tg_skip"
    continue
  fi
  measure toolgate stdio "$tg" serve --stdio --config "$tmp/echo.json"
  rm -rf "$tmp/.toolgate"
  measure toolgate-journal stdio "$tg" serve --stdio --config "$tmp/echo-journal.json"
  measure toolgate http "$tg" serve --http 127.0.0.1:@PORT@ --config "$tmp/echo.json"
  rm -rf "$tmp/.toolgate"
  measure toolgate-journal http "$tg" serve --http 127.0.0.1:@PORT@ --config "$tmp/echo-journal.json"
  measure --pin one toolgate stdio "$tg" serve --stdio --config "$tmp/echo.json"
  measure --pin two toolgate stdio "$tg" serve --stdio --config "$tmp/echo.json"
done

[ -n "$have_tg" ] || exit 0
echo "== ratios (toolgate / SDK within each round; goals from issue 15$( [ "$rounds" -gt 1 ] && echo "; the median of $rounds rounds [lowest-highest]"))"
jq -rs --argjson one "$limit_one" --argjson two "$limit_two" --arg inflight "$inflight" '
  def find(l; t; p): map(select(.label == l and .transport == t and .pin == p)) | first;
  def find(l; t): find(l; t; "none");
  def q(a; b): if a == null or b == null or b == 0 then null else a / b end;
  def x: "\(. * 100 | floor / 100)x";
  # the median of the rounds ratios, with their range when there are more
  def m(f): [.[] | f | select(. != null)] | sort
    | if length == 0 then "n/a"
      elif length == 1 then (.[0] | x)
      else "\(.[(length - 1) / 2 | floor] | x) [\(.[0] | x)-\(.[-1] | x)]" end;
  (map(select(.round == 0)) | find("limit"; "stdio")) as $ceil
  | (map(select(.round > 0)) | group_by(.round)) as $rounds
  | ["stdio", "http"][] as $t
  | ["toolgate", "toolgate-journal"][] as $l
  | [$rounds[] | {s: find("sdk"; $t), g: find($l; $t), one: find($l; $t; "one"), two: find($l; $t; "two")}
     | select(.g != null and .s != null)] as $rs
  | select($rs | length > 0)
  | "  \($l) \($t): \($inflight) in flight \($rs | m(q(.g.par_per_s; .s.par_per_s))) the SDK (goal >= \(if $t == "http" then 10 elif $l == "toolgate" then 10 else 3 end)x)"
    + "; sequential \($rs | m(q(.g.seq_per_s; .s.seq_per_s))) the SDK"
    + (if $t == "stdio" and $l == "toolgate" then ", pinned to one CPU \($rs | m(q(.one.seq_per_s; 1e6 / $one))) the ping-pong limit, to two \($rs | m(q(.two.seq_per_s; 1e6 / $two))) (goal >= 0.7x)" else "" end)
    + (if $t == "stdio" then "; \($rs | m(q(.g.par_per_s; $ceil.par_per_s))) of the ceiling (the SDK: \($rs | m(q(.s.par_per_s; $ceil.par_per_s))))" else "" end)
    + "; p99 \($rs | m(q(.s.par_p99_us; .g.par_p99_us))) lower (goal >= 10x)"
    + "; RSS \($rs | m(q(.s.rss_kib; .g.rss_kib))) smaller (goal >= 8x)"
' "$tmp/results"

echo "== 1,000 HTTP sessions at once (goal: none dropped)"
"$tg" serve --http 127.0.0.1:0 --config "$tmp/echo.json" 2>"$tmp/sessions.err" &
spid=$!
for _ in $(seq 100); do grep -q 'http://' "$tmp/sessions.err" 2>/dev/null && break; sleep 0.05; done
surl=$(grep -o 'http://[^ ]*' "$tmp/sessions.err" | head -1)
node bench/mcp/sessions.mjs "$surl" 1000 | sed 's/^/  /' || echo "  bench/mcp: sessions were dropped (above)"
echo "  server peak RSS with them: $(awk '/VmHWM/ {printf "%.1f MiB", $2 / 1024}' "/proc/$spid/status")"
kill -TERM "$spid" 2>/dev/null || true
wait "$spid" 2>/dev/null || true
