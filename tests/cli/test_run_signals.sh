#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SIGINT mid-turn cancels the running calls (canceled, by user) and still
# prints every result; SIGKILL of toolgate takes its tool processes with it.
source "$(dirname "$0")/lib.sh"
cat >toolgate.json <<JSON
{"workspace": ".", "journal": "j/j.db",
 "tools": [{"name": "sleep", "command": ["$TG_FIXTURES/sleep_ms", "{ms}"]},
           {"name": "echo", "command": ["/bin/echo", "{text}"]}]}
JSON
printf '%s\n' '{"id":"a","tool":"echo","args":{"text":"done"}}' \
  '{"id":"b","tool":"sleep","args":{"ms":30001}}' \
  '{"id":"c","tool":"sleep","args":{"ms":30002}}' >turn.jsonl
"$TOOLGATE" run turn.jsonl >out.jsonl &
pid=$!
sleep 0.7
kill -INT $pid
t0=$(now_ms)
wait $pid; rc=$?
eq "exit after SIGINT" "$rc" 0
check "ended promptly ($(( $(now_ms) - t0 )) ms)" test $(( $(now_ms) - t0 )) -lt 3000
eq "every result printed" "$(wc -l <out.jsonl)" 3
eq "outcomes" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success canceled canceled "
eq "canceled by user" "$(jq -r 'select(.id=="b").payload.canceled.by' out.jsonl)" user
eq "journaled as canceled" "$("$TOOLGATE" history --outcome canceled --json | wc -l)" 2
check "no sleeper left" bash -c "! pgrep -f '$TG_FIXTURES/[s]leep_ms 3000' >/dev/null"

# SIGKILL of the runtime: the tool dies with it (PR_SET_PDEATHSIG).
printf '%s\n' '{"id":"k","tool":"sleep","args":{"ms":30003}}' >kill.jsonl
"$TOOLGATE" run kill.jsonl >/dev/null &
pid=$!
for _ in $(seq 50); do pgrep -f "$TG_FIXTURES/sleep_ms 30003" >/dev/null && break; sleep 0.05; done
check "tool started" pgrep -f "$TG_FIXTURES/sleep_ms 30003"
kill -KILL $pid
wait $pid 2>/dev/null || true
gone=no
for _ in $(seq 40); do pgrep -f "$TG_FIXTURES/sleep_ms 30003" >/dev/null || { gone=yes; break; }; sleep 0.05; done
eq "tool died with the runtime" "$gone" yes
finish
