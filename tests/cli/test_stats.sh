#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# toolgate stats: per tool, the journaled calls, each outcome, replays and
# p50/p95/max duration, as a table or JSON Lines, with history's filters.
source "$(dirname "$0")/lib.sh"
mkdir ws
cat >toolgate.json <<JSON
{"workspace": "ws", "journal": "j/journal.db",
 "tools": [
  {"name": "sleep", "command": ["$TG_FIXTURES/sleep_ms", "{ms}"]},
  {"name": "fail", "command": ["$TG_FIXTURES/exit_code", "{code}", "{message}"]}
 ]}
JSON
mk() { printf '{"id":"%s","tool":"%s","args":%s}\n' "$1" "$2" "$3"; }
{ mk s1 sleep '{"ms":100}'; mk s2 sleep '{"ms":200}'; mk s3 sleep '{"ms":300}'
  mk f1 fail '{"code":1,"message":"no"}'; mk u1 nope '{}'; } >turn.jsonl
"$TOOLGATE" run turn.jsonl >/dev/null
"$TOOLGATE" run turn.jsonl >/dev/null # replays of s1..s3 and f1
"$TOOLGATE" run --caller bob turn.jsonl >/dev/null

"$TOOLGATE" stats --json >stats.jsonl
eq "tools" "$(jq -r .tool stats.jsonl | tr '\n' ' ')" "fail nope sleep "
eq "sleep calls" "$(jq -r 'select(.tool=="sleep").calls' stats.jsonl)" 9
eq "sleep replays" "$(jq -r 'select(.tool=="sleep").replayed' stats.jsonl)" 3
eq "sleep successes" "$(jq -r 'select(.tool=="sleep").outcomes.success' stats.jsonl)" 9
eq "fail errors" "$(jq -r 'select(.tool=="fail").outcomes.error' stats.jsonl)" 3
# The unknown tool never started: not replayed, it ran (and failed) 3 times.
eq "unknown tool errors" "$(jq -r 'select(.tool=="nope") | "\(.outcomes.error) \(.replayed)"' stats.jsonl)" "3 0"
p50=$(jq -r 'select(.tool=="sleep").duration_ms.p50' stats.jsonl)
p95=$(jq -r 'select(.tool=="sleep").duration_ms.p95' stats.jsonl)
max=$(jq -r 'select(.tool=="sleep").duration_ms.max' stats.jsonl)
# The percentiles are those of the journaled durations: nearest rank over
# the 6 timed runs (replays are not timed), whatever the machine's speed.
"$TOOLGATE" history --json --tool sleep --limit 100 >sleeps.jsonl
want=$(jq -s -c '[.[] | select(.replayed != true) | .duration_ms] | sort
  | length as $n | {n: $n, p50: .[($n + 1) / 2 - 1 | floor],
    p95: .[(95 * $n + 99) / 100 - 1 | floor], max: .[-1]}' sleeps.jsonl)
eq "timed sleep runs" "$(jq -r .n <<<"$want")" 6
check "p50 ${p50}, p95 ${p95}, max ${max} are the journal's ($want)" \
  jq -en --argjson w "$want" "$p50 == \$w.p50 and $p95 == \$w.p95 and $max == \$w.max"
# 100, 100, 200, 200, 300, 300 ms of sleep: two runs at most are shorter
# than 200 ms, one at least lasts 300 (a busy machine only adds).
check "p50 ${p50} >= 200" jq -en "$p50 >= 200"
check "p95 ${p95} >= 300" jq -en "$p95 >= 300"

"$TOOLGATE" stats --json --caller bob >bob.jsonl
eq "bob's sleep calls" "$(jq -r 'select(.tool=="sleep").calls' bob.jsonl)" 3
eq "bob's replays" "$(jq -r 'select(.tool=="sleep").replayed' bob.jsonl)" 0
"$TOOLGATE" stats --json --tool fail --outcome error >f.jsonl
eq "tool and outcome filters" "$(jq -c '[.tool, .calls]' f.jsonl)" '["fail",3]'
"$TOOLGATE" stats --json --since "$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)" >later.jsonl
eq "since in the future" "$(wc -c <later.jsonl | tr -d ' ')" 0

"$TOOLGATE" stats >table.txt
contains "table header" "$(head -1 table.txt)" "TOOL"
contains "table header durations" "$(head -1 table.txt)" "P95 ms"
contains "table row" "$(grep '^sleep ' table.txt)" " 9 "

"$TOOLGATE" stats --outcome meh 2>err.txt && fail "bad outcome accepted" || eq "bad outcome exit" "$?" 2
"$TOOLGATE" stats --since never 2>err.txt && fail "bad since accepted" || eq "bad since exit" "$?" 2
contains "bad since message" "$(cat err.txt)" "never"
"$TOOLGATE" stats --bogus 2>/dev/null && fail "bad option accepted" || eq "bad option exit" "$?" 2
echo '{"workspace": "ws", "journal": null}' >off.json
"$TOOLGATE" stats --config off.json 2>/dev/null && fail "journal off accepted" || eq "journal off exit" "$?" 3
"$TOOLGATE" stats --help >help.txt
contains "help" "$(cat help.txt)" "usage: toolgate stats"
finish
