#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SIGINT mid-turn cancels the running calls (canceled, by user) and still
# prints every result; SIGKILL of toolgate takes its tool processes with it.
# The signals come once the calls have got where the test needs them (seen
# in the journal and the process table), never after a fixed time; what
# ends early would otherwise run 60 s.
source "$(dirname "$0")/lib.sh"
cat >toolgate.json <<JSON
{"workspace": ".", "journal": "j/j.db",
 "tools": [{"name": "sleep", "command": ["$TG_FIXTURES/sleep_ms", "{ms}"]},
           {"name": "echo", "command": ["/bin/echo", "{text}"]}]}
JSON
printf '%s\n' '{"id":"a","tool":"echo","args":{"text":"done"}}' \
  '{"id":"b","tool":"sleep","args":{"ms":60001}}' \
  '{"id":"c","tool":"sleep","args":{"ms":60002}}' >turn.jsonl
"$TOOLGATE" run turn.jsonl >out.jsonl &
pid=$!
# a's result is journaled and both sleepers run.
a_done() { [ "$(sqlite3 -readonly j/j.db "SELECT count(*) FROM results WHERE id = 'a'" 2>/dev/null)" = 1 ]; }
running() {
  pgrep -f "^$TG_FIXTURES/sleep_ms 60001" >/dev/null && pgrep -f "^$TG_FIXTURES/sleep_ms 60002" >/dev/null
}
check "a done and b, c running" wait_for "$(tg_ms 10000)" eval 'a_done && running'
kill -INT $pid
t0=$(now_ms)
wait $pid; rc=$?
elapsed=$(( $(now_ms) - t0 ))
eq "exit after SIGINT" "$rc" 0
check "ended promptly (${elapsed} ms), long before the 60 s sleeps" test "$elapsed" -lt "$(tg_ms 10000)"
eq "every result printed" "$(wc -l <out.jsonl)" 3
eq "outcomes" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success canceled canceled "
eq "canceled by user" "$(jq -r 'select(.id=="b").payload.canceled.by' out.jsonl)" user
eq "journaled as canceled" "$("$TOOLGATE" history --outcome canceled --json | wc -l)" 2
check "no sleeper left" wait_for "$(tg_ms 3000)" eval "! pgrep -f '$TG_FIXTURES/[s]leep_ms 6000' >/dev/null"

# SIGKILL of the runtime: the tool dies with it (PR_SET_PDEATHSIG).
printf '%s\n' '{"id":"k","tool":"sleep","args":{"ms":60003}}' >kill.jsonl
"$TOOLGATE" run kill.jsonl >/dev/null &
pid=$!
# the tool itself (in bubblewrap: its command line starts with it) ...
tool_runs() { pgrep -f "^$TG_FIXTURES/sleep_ms 60003" >/dev/null; }
# ... or anything with it in its command line (bubblewrap too)
sleeper() { pgrep -f "$TG_FIXTURES/[s]leep_ms 60003" >/dev/null; }
check "tool started" wait_for "$(tg_ms 10000)" tool_runs
kill -KILL $pid
wait $pid 2>/dev/null || true
check "tool died with the runtime" wait_for "$(tg_ms 3000)" eval '! sleeper'
finish
