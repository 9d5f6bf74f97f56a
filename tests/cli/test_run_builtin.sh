#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A real OpenAI Chat Completions turn on the embedded defaults: built-in file
# tools confined to the workspace (an escape is denied), an unknown tool and malformed arguments
# each become a result, results come back in call order, and every call and
# result is in the journal.
source "$(dirname "$0")/lib.sh"
cp -r "$TG_SOURCE_DIR/examples/workspace/." . && rm -rf .toolgate
turn=$TG_SOURCE_DIR/examples/turns/openai-chat-response.json

"$TOOLGATE" run "$turn" >out.json 2>err.txt; rc=$?
eq "exit status" "$rc" 0
eq "stderr is empty off a terminal" "$(cat err.txt)" ""
eq "one tool message per call" "$(jq length out.json)" 7
eq "call order kept" "$(jq -r '[.[].tool_call_id]|join(",")' out.json)" \
  "call_list_9s2RgW3kT1,call_grep_Xb7Qe01LmZ,call_read_pL4cVb8NwE,call_escape_Zr5tY2uI9o,call_unknown_Qw3eR6tY1u,call_badargs_Lm2Kp8Qr4s,call_broken_As4dF7gH0j"
eq "role tool" "$(jq -r '[.[].role]|unique|join(",")' out.json)" "tool"
contains "list_dir lists the notes" "$(jq -r '.[0].content' out.json)" "todo.md"
contains "grep finds TODO lines" "$(jq -r '.[1].content' out.json)" "notes/todo.md:4:"
contains "read_file reads the file" "$(jq -r '.[2].content' out.json)" "Decision: tool results are journaled"
contains "escape denied" "$(jq -r '.[3].content' out.json)" '"denied"'
contains "escape denial names the path" "$(jq -r '.[3].content' out.json)" "../../../etc/passwd' leads outside the workspace"
contains "unknown tool" "$(jq -r '.[4].content' out.json)" "UNKNOWN_TOOL"
contains "schema violations" "$(jq -r '.[5].content' out.json)" "INVALID_ARGUMENTS"
contains "schema violation named" "$(jq -r '.[5].content' out.json)" "/pattern must be a string, got 42"
contains "malformed arguments" "$(jq -r '.[6].content' out.json)" "MALFORMED_ARGUMENTS"

# Native output carries outcome and execution.
"$TOOLGATE" run --to toolgate --no-journal "$turn" >out.jsonl
eq "native: seven lines" "$(wc -l <out.jsonl)" 7
eq "native: outcomes" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success success success denied error error error "
eq "native: execution" "$(jq -r .execution out.jsonl | tr '\n' ' ')" "finished finished finished not_started not_started not_started not_started "

# The journal holds every call and its result.
"$TOOLGATE" history --json --limit 50 >hist.jsonl
eq "journal rows" "$(wc -l <hist.jsonl)" 7
eq "journal keeps outcome" "$(jq -r 'select(.id=="call_unknown_Qw3eR6tY1u").outcome' hist.jsonl)" error
"$TOOLGATE" show call_read_pL4cVb8NwE >show.json
eq "show: call tool" "$(jq -r .call.tool show.json)" read_file
eq "show: call args" "$(jq -r .call.args.path show.json)" notes/meeting.txt
eq "show: checksum" "$(jq -r .call.checksum show.json | cut -c1-7)" "sha256:"
eq "show: result" "$(jq -r .result.outcome show.json)" success
"$TOOLGATE" history --tool grep >table.txt
contains "history table" "$(cat table.txt)" "call_grep_Xb7Qe01LmZ"
"$TOOLGATE" show no_such_call 2>err.txt && fail "show of an unknown id succeeds" || pass
contains "show names the id" "$(cat err.txt)" "no_such_call"
finish
