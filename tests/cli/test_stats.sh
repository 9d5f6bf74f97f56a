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
"$TOOLGATE" run turn.jsonl >run.jsonl
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
# 6 timed runs of 100, 100, 200, 200, 300, 300 ms (replays are not timed).
# Nearest rank over what the journal measured: p50 the 3rd smallest, p95
# (ceil(5.7)) and max the 6th; history prints each time as stats does. A
# sleep takes at least its time, however busy the machine.
"$TOOLGATE" history --json --tool sleep --limit 100 >sleeps.jsonl
timed=$(jq -s -c '[.[] | select(.replayed != true) | .duration_ms] | sort' sleeps.jsonl)
eq "timed sleeps" "$(jq -n "$timed | length")" 6
eq "p50 is the 3rd of $timed" "$p50" "$(jq -n "$timed[2]")"
eq "p95 is the 6th of $timed" "$p95" "$(jq -n "$timed[5]")"
eq "max is the 6th of $timed" "$max" "$(jq -n "$timed[5]")"
check "p50 ${p50} is at least the 200 ms sleep" jq -en "$p50 >= 200"
check "p95 ${p95} is at least a 300 ms sleep" jq -en "$p95 >= 300"

# Times leave toolgate in milliseconds to the microsecond, whatever the
# clock measured (the journal keeps that): in run's records, history --json,
# show and stats --json alike.
"$TOOLGATE" history --json --limit 100 >hist.jsonl
"$TOOLGATE" show s3 >show.json
times=$(grep -ohE '"(duration_ms|p50|p95|max)": ?-?[0-9][0-9.e+-]*' \
  run.jsonl hist.jsonl show.json stats.jsonl)
check "times are printed" test "$(echo "$times" | wc -l)" -ge 30
eq "times have at most 3 decimals" \
  "$(echo "$times" | grep -vE ': ?-?[0-9]+\.[0-9]{1,3}$' || true)" ""
# (show gives the newest call of an id, as history lists it first)
eq "show's time is history's" "$(jq .result.duration_ms show.json)" \
  "$(jq -s 'map(select(.id=="s3"))[0].duration_ms' hist.jsonl)"
# show is indented as jq (and jansson) lay JSON out, tokens unchanged.
eq "show layout" "$(cat show.json)" "$(jq . show.json)"

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
