#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Command tools run as argv (never a shell), concurrently, under deadlines:
# three short sleeps and one of >= 60 s under a budget end as success x3 +
# timeout at the budget, the four at once, and no process is left behind.
# The sleeps and the budget are sized from what one `toolgate run` of a
# command costs here and now (measured first): sleeps 5x that (at least
# 200 ms), the budget 3x a sleep and its start (at least a scaled 1 s).
source "$(dirname "$0")/lib.sh"
mkdir ws
cat >toolgate.json <<JSON
{"workspace": "ws", "journal": null, "limits": {"kill_grace_ms": 500},
 "tools": [
  {"name": "sleep", "command": ["$TG_FIXTURES/sleep_ms", "{ms}"]},
  {"name": "echo", "command": ["/bin/echo", "{text}"]},
  {"name": "wc", "command": ["wc", "-c"], "stdin": "{text}"},
  {"name": "fail", "command": ["$TG_FIXTURES/exit_code", "{code}", "{message}"]},
  {"name": "stubborn", "command": ["$TG_FIXTURES/ignore_term", "{ms}"]},
  {"name": "selfkill", "command": ["/bin/sh", "-c", "kill -9 \$\$"]},
  {"name": "missing", "command": ["/nonexistent/program"]}
 ]}
JSON
mk() { printf '{"id":"%s","tool":"%s","args":%s}\n' "$1" "$2" "$3"; }
# What one run of one command call costs here: the most of three.
mk c0 sleep '{"ms":0}' >cost.jsonl
cost=0
for _ in 1 2 3; do
  t0=$(now_ms)
  "$TOOLGATE" run cost.jsonl >/dev/null
  took=$(($(now_ms) - t0))
  [ "$took" -gt "$cost" ] && cost=$took
done
nap=$((cost * 5 > 200 ? cost * 5 : 200))
budget=$((3 * (nap + cost)))
[ "$budget" -lt "$(tg_ms 1000)" ] && budget=$(tg_ms 1000)
# The long sleep outlasts the budget many times over even where one run
# costs seconds (a loaded machine once measured 4 s: budget 73 s).
long=$((budget * 10 > 60000 ? budget * 10 + 4 : 60004))
echo "one run costs $cost ms here: sleeps of $nap ms under a budget of $budget ms"
{ mk s1 sleep "{\"ms\":$((nap + 1))}"; mk s2 sleep "{\"ms\":$((nap + 2))}"
  mk s3 sleep "{\"ms\":$((nap + 3))}"; mk s4 sleep "{\"ms\":$long}"; } >sleeps.jsonl
t0=$(now_ms)
"$TOOLGATE" run --timeout "$budget" sleeps.jsonl >out.jsonl
elapsed=$(( $(now_ms) - t0 ))
eq "outcomes" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success success success timeout "
eq "timeout payload: the budget" "$(jq -c 'select(.id=="s4").payload.timeout.durationMs' out.jsonl)" "$budget"
contains "timeout payload: what it printed first" "$(jq -r 'select(.id=="s4").payload.timeout.stderr' out.jsonl)" "pid="
eq "timeout execution" "$(jq -r 'select(.id=="s4").execution' out.jsonl)" started
check "ended at the budget (${elapsed} ms), long before the $long ms sleep" \
  test "$elapsed" -ge "$budget" -a "$elapsed" -lt $((budget + $(tg_ms 10000)))
# The four ran at once: each started (its end less its duration, as the
# results record them) before the first one ended.
overlap=$(jq -s '
  def end_ms: .completed_at | capture("^(?<s>.*)\\.(?<f>[0-9]{3})Z$")
    | ((.s + "Z") | fromdateiso8601) * 1000 + (.f | tonumber);
  map({end: end_ms, start: (end_ms - .duration_ms)})
  | (map(.start) | max) < (map(.end) | min)' out.jsonl)
eq "the four ran at once" "$overlap" true
check "no sleep fixture left" bash -c "! pgrep -f '$TG_FIXTURES/[s]leep_ms ($((nap + 1))|$((nap + 2))|$((nap + 3))|$long)' >/dev/null"

# Arguments are argv elements, never shell text.
inj='hi; touch pwned $(touch pwned2) `touch pwned3`'
mk e1 echo "$(jq -cn --arg t "$inj" '{text:$t}')" >echo.jsonl
"$TOOLGATE" run echo.jsonl >out.jsonl
eq "injection stays literal" "$(jq -r .payload out.jsonl)" "$inj"
check "nothing was executed" bash -c '! ls ws/pwned* pwned* 2>/dev/null'
mk w1 wc '{"text":"twelve bytes"}' >wc.jsonl
"$TOOLGATE" run wc.jsonl >out.jsonl
eq "stdin template" "$(jq -r .payload out.jsonl | tr -d ' \n')" 12

# Failures are results: exit status with what it printed, signals, missing program.
{ mk f1 fail '{"code":3,"message":"disk on fire"}'; mk k1 selfkill '{}'; mk m1 missing '{}'; mk u1 nope '{}'; } >fail.jsonl
"$TOOLGATE" run fail.jsonl >out.jsonl; rc=$?
eq "run exits 0 whatever the outcomes" "$rc" 0
eq "exit status code" "$(jq -r 'select(.id=="f1").payload.error.code' out.jsonl)" EXIT_STATUS
eq "exit status value" "$(jq -r 'select(.id=="f1").exit_status' out.jsonl)" 3
eq "status in message" "$(jq -r 'select(.id=="f1").payload.error.message' out.jsonl)" "command exited with status 3"
eq "stderr in details" "$(jq -c 'select(.id=="f1").payload.error.details' out.jsonl)" '{"exit_status":3,"stderr":"disk on fire"}'
eq "killed by signal" "$(jq -r 'select(.id=="k1").payload.error.code' out.jsonl)" KILLED_BY_SIGNAL
eq "missing program" "$(jq -r 'select(.id=="m1").payload.error.code' out.jsonl)" TOOL_FAILED
eq "unknown tool" "$(jq -r 'select(.id=="u1").payload.error.code' out.jsonl)" UNKNOWN_TOOL
"$TOOLGATE" run --strict fail.jsonl >/dev/null && fail "--strict exits 0 on failures" || eq "--strict exit" "$?" 1

# A tool that ignores SIGTERM is killed after the grace period (500 ms):
# it sleeps 60 s, the deadline finds it ignoring TERM (3x a run's cost, at
# least a scaled 300 ms).
stub_budget=$((3 * cost > $(tg_ms 300) ? 3 * cost : $(tg_ms 300)))
mk t1 stubborn '{"ms":60017}' >stub.jsonl
t0=$(now_ms)
"$TOOLGATE" run --timeout "$stub_budget" stub.jsonl >out.jsonl
elapsed=$(( $(now_ms) - t0 ))
eq "stubborn outcome" "$(jq -r .outcome out.jsonl)" timeout
check "stubborn ends after the grace (${elapsed} ms), long before its 60 s" \
  test "$elapsed" -ge $((stub_budget + 500)) -a "$elapsed" -lt $((stub_budget + 500 + $(tg_ms 10000)))
check "stubborn process gone" bash -c "! pgrep -f '$TG_FIXTURES/[i]gnore_term 60017' >/dev/null"

# --parallel 1 serialises.
{ mk p1 sleep '{"ms":200}'; mk p2 sleep '{"ms":200}'; mk p3 sleep '{"ms":200}'; } >par.jsonl
t0=$(now_ms)
"$TOOLGATE" run --parallel 1 par.jsonl >/dev/null
elapsed=$(( $(now_ms) - t0 ))
check "parallel 1 takes >= 600 ms (${elapsed})" test "$elapsed" -ge 600
finish
