#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Command tools run as argv (never a shell), concurrently, under deadlines:
# three 0.8 s sleeps and one 5 s sleep under a 1 s budget end in well under
# 2.5 s with success x3 + timeout, and no process is left behind.
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
{ mk s1 sleep '{"ms":801}'; mk s2 sleep '{"ms":802}'; mk s3 sleep '{"ms":803}'; mk s4 sleep '{"ms":5004}'; } >sleeps.jsonl
t0=$(now_ms)
"$TOOLGATE" run --timeout 1000 sleeps.jsonl >out.jsonl
elapsed=$(( $(now_ms) - t0 ))
eq "outcomes" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success success success timeout "
eq "timeout payload: the budget" "$(jq -c 'select(.id=="s4").payload.timeout.durationMs' out.jsonl)" 1000
contains "timeout payload: what it printed first" "$(jq -r 'select(.id=="s4").payload.timeout.stderr' out.jsonl)" "pid="
eq "timeout execution" "$(jq -r 'select(.id=="s4").execution' out.jsonl)" started
check "wall time ${elapsed} ms < 2500 ms" test "$elapsed" -lt 2500
check "no sleep fixture left" bash -c "! pgrep -f '$TG_FIXTURES/[s]leep_ms (80[123]|5004)' >/dev/null"

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

# A tool that ignores SIGTERM is killed after the grace period.
mk t1 stubborn '{"ms":20017}' >stub.jsonl
t0=$(now_ms)
"$TOOLGATE" run --timeout 300 stub.jsonl >out.jsonl
elapsed=$(( $(now_ms) - t0 ))
eq "stubborn outcome" "$(jq -r .outcome out.jsonl)" timeout
check "stubborn ends after grace (${elapsed} ms < 3000)" test "$elapsed" -lt 3000
check "stubborn process gone" bash -c "! pgrep -f '$TG_FIXTURES/[i]gnore_term 20017' >/dev/null"

# --parallel 1 serialises.
{ mk p1 sleep '{"ms":200}'; mk p2 sleep '{"ms":200}'; mk p3 sleep '{"ms":200}'; } >par.jsonl
t0=$(now_ms)
"$TOOLGATE" run --parallel 1 par.jsonl >/dev/null
elapsed=$(( $(now_ms) - t0 ))
check "parallel 1 takes >= 600 ms (${elapsed})" test "$elapsed" -ge 600
finish
