#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --cancel-unanswered repairs a conversation left with dangling calls: each
# call no tool message answers gets a canceled (by system) result, journaled,
# and nothing runs. Without the flag the same calls run.
source "$(dirname "$0")/lib.sh"
mkdir ws
cat >toolgate.json <<JSON
{"workspace": "ws", "journal": "j.db",
 "tools": [{"name": "touch", "command": ["touch", "{name}"]}]}
JSON
cat >conv.json <<'JSON'
[
 {"role": "user", "content": "make three files"},
 {"role": "assistant", "content": null, "tool_calls": [
   {"id": "call_a", "type": "function", "function": {"name": "touch", "arguments": "{\"name\": \"a\"}"}},
   {"id": "call_b", "type": "function", "function": {"name": "touch", "arguments": "{\"name\": \"b\"}"}},
   {"id": "call_c", "type": "function", "function": {"name": "touch", "arguments": "{\"name\": \"c\"}"}}]},
 {"role": "tool", "tool_call_id": "call_a", "content": "done"}
]
JSON
"$TOOLGATE" run --cancel-unanswered conv.json >out.json
eq "only the dangling calls answered" "$(jq -r '[.[].tool_call_id]|join(",")' out.json)" "call_b,call_c"
eq "canceled by system" "$(jq -r '[.[].content|fromjson|.canceled.by]|unique|join(",")' out.json)" "system"
check "nothing ran" bash -c '! ls ws/b ws/c 2>/dev/null'
eq "journaled, not started" "$("$TOOLGATE" history --json | jq -r '"\(.outcome)/\(.execution)"' | sort -u)" "canceled/not_started"
"$TOOLGATE" run --to anthropic --cancel-unanswered conv.json >out.json
eq "anthropic repair marks is_error" "$(jq -r '[.content[].is_error]|unique|join(",")' out.json)" "true"
"$TOOLGATE" run --no-journal conv.json >/dev/null
check "without the flag the calls run" test -f ws/b -a -f ws/c
check "the answered call does not run" test ! -f ws/a
finish
