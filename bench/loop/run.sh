#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/loop: the agent loop's overhead per iteration, toolgate's tg_loop
# (bench_loop: the scripted model in-process, a tg_loop_model_fn, for the
# like-for-like ratio; and a model server, a thread of the driver, reached
# over HTTP on 127.0.0.1) against the Vercel AI SDK's generateText with its
# mock model (peer_loop.mjs: in-process, no HTTP), the same scripted turns (ITERS-1 answers of
# CALLS calls of a no-op tool, then a text answer) and no-op tools, in the
# same run; each side's peak RSS; then the lead time of a streamed turn's
# first tool. Model time and tool time are measured on each side and taken
# out; see bench/RESULTS.md (Issue 17) for what is counted.
#
#   bench/loop/run.sh [BUILD] [--loops L] [--iters I] [--calls C]
#                     [--stream-reps N] [--rounds R]
#
# With --rounds R (default 3) the SDK and toolgate are measured R times,
# one after the other in each round, and every ratio is taken within its
# round; the ratios printed are the medians of the rounds with their range.
# BUILD (default build) holds bench/bench_loop; the SDK comes from
# bench/node_modules (scripts/npm-deps.sh bench, as `make bench` does).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build
loops=200
iters=20
calls=2
reps=51
rounds=3
while [ $# -gt 0 ]; do
  case $1 in
    --loops) loops=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --stream-reps) reps=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    -*) echo "usage: bench/loop/run.sh [BUILD] [--loops L] [--iters I] [--calls C] [--stream-reps N] [--rounds R]" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
for v in "$loops" "$iters" "$calls" "$reps" "$rounds"; do
  case $v in ''|*[!0-9]*|0) echo "bench/loop: counts are positive integers" >&2; exit 2 ;; esac
done
drv=$build/bench/bench_loop
[ -x "$drv" ] || { echo "bench/loop: $drv is not built (cmake --build $build)" >&2; exit 1; }
scripts/npm-deps.sh bench >/dev/null

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== $loops loops of $iters iterations ($calls calls each but the last), $rounds round(s); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  [ "$rounds" -gt 1 ] && echo "=== round $round of $rounds"
  out=$(node bench/loop/peer_loop.mjs "$loops" "$iters" "$calls")
  echo "$out" | jq -c --argjson r "$round" '. + {round: $r, side: "sdk"}' >> "$tmp/results"
  echo "$out" | jq -r '"  the AI SDK generateText (node '"$(node --version)"'): \(.us_per_iteration * 100 | floor / 100) us/iteration, peak RSS \(.peak_rss_kb / 1024 * 10 | floor / 10) MiB"'
  r=0
  [ "$round" = "$rounds" ] && r=$reps
  "$drv" --loops "$loops" --iters "$iters" --calls "$calls" --stream-reps "$r" > "$tmp/off"
  mkdir -p "$tmp/j$round"
  "$drv" --loops "$loops" --iters "$iters" --calls "$calls" --journal "$tmp/j$round" > "$tmp/on"
  "$drv" --loops "$loops" --iters "$iters" --calls "$calls" --in-process > "$tmp/ipoff"
  mkdir -p "$tmp/i$round"
  "$drv" --loops "$loops" --iters "$iters" --calls "$calls" --in-process --journal "$tmp/i$round" > "$tmp/ipon"
  jq -c --argjson r "$round" '. + {round: $r, side: "toolgate"}' "$tmp/off" "$tmp/on" "$tmp/ipoff" "$tmp/ipon" >> "$tmp/results"
  jq -r 'select(.measure == "overhead" and .in_process == 0) | "  toolgate tg_loop over HTTP, journal \(if .journal == 1 then "on " else "off" end): \(.us_per_iteration) us/iteration (\(.us_per_iteration_no_http) without the HTTP exchange, \(.http_us_per_request) us a request of \(.mean_request_bytes) B alone; wall \(.wall_us_per_iteration), the server \(.server_us / 1000 | floor) ms, the tool \(.tool_us / 1000 | floor) ms in all), peak RSS \(.peak_rss_kb / 1024 * 10 | floor / 10) MiB"' "$tmp/off" "$tmp/on"
  jq -r 'select(.measure == "overhead" and .in_process == 1) | "  toolgate tg_loop in-process model, journal \(if .journal == 1 then "on " else "off" end): \(.us_per_iteration) us/iteration (wall \(.wall_us_per_iteration), the model \(.server_us / 1000 | floor) ms, the tool \(.tool_us / 1000 | floor) ms in all), peak RSS \(.peak_rss_kb / 1024 * 10 | floor / 10) MiB"' "$tmp/ipoff" "$tmp/ipon"
done

echo "== ratios (the SDK / toolgate within each round; goals from issue 17$( [ "$rounds" -gt 1 ] && echo "; the median of $rounds rounds [lowest-highest]"))"
jq -rs '
  def q(a; b): if a == null or b == null or b == 0 then null else a / b end;
  def x: "\(. * 100 | floor / 100)x";
  def m(f): [.[] | f | select(. != null)] | sort
    | if length == 0 then "n/a"
      elif length == 1 then (.[0] | x)
      else "\(.[(length - 1) / 2 | floor] | x) [\(.[0] | x)-\(.[-1] | x)]" end;
  (group_by(.round) | map({s: (map(select(.side == "sdk")) | first),
     off: (map(select(.measure == "overhead" and .journal == 0 and .in_process == 0)) | first),
     on: (map(select(.measure == "overhead" and .journal == 1 and .in_process == 0)) | first),
     ipoff: (map(select(.measure == "overhead" and .journal == 0 and .in_process == 1)) | first),
     ipon: (map(select(.measure == "overhead" and .journal == 1 and .in_process == 1)) | first)})) as $rs
  | "  like for like, both models in-process: overhead per iteration, journal off: \($rs | m(q(.s.us_per_iteration; .ipoff.us_per_iteration))) lower than the SDK (goal >= 20x); journal on: \($rs | m(q(.s.us_per_iteration; .ipon.us_per_iteration)))",
    "  toolgate over HTTP (a thread of the driver on 127.0.0.1) against the SDK in-process: journal off: \($rs | m(q(.s.us_per_iteration; .off.us_per_iteration))); journal on: \($rs | m(q(.s.us_per_iteration; .on.us_per_iteration)))",
    "  the same without the HTTP exchange (toolgate only: the SDK'"'"'s mock has none), journal off: \($rs | m(q(.s.us_per_iteration; .off.us_per_iteration_no_http))); journal on: \($rs | m(q(.s.us_per_iteration; .on.us_per_iteration_no_http)))",
    "  peak RSS: the SDK \($rs | m(q(.s.peak_rss_kb; .off.peak_rss_kb))) toolgate'"'"'s (goal >= 10x); journal on \($rs | m(q(.s.peak_rss_kb; .on.peak_rss_kb)))"
' "$tmp/results"
if [ "$reps" -gt 0 ]; then
  echo "== a streamed turn (Chat Completions SSE): call 0 complete, the rest after a delay; $reps repetitions"
  jq -r 'select(.measure == "stream") | "  \(.variant) (\(if .variant == "call-alone" then "nothing more until the delay ends" else "call 1'"'"'s id and name right after call 0, as models write them" end)): the first tool started \(.lead_ms_median) ms before the stream'"'"'s end (median; p5 \(.lead_ms_p5)), \(.lag_ms_median) ms after call 0'"'"'s last byte was written (median; p95 \(.lag_ms_p95), max \(.lag_ms_max); goal <= 1 ms), delay \(.delay_ms) ms"' "$tmp/off"
fi
