#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_docs_guide_sql.sh - the sqlite3 queries of docs/guide.md ("Reading
# the journal with sqlite3") run against a real journal: one made by
# `toolgate run` on the example turns, `toolgate serve` and an agent loop
# against the scripted model server (tests/loop/model_server.mjs). Each
# query must succeed and print rows, and where the guide shows a header
# line, the columns must be those the guide shows: a change of the
# journal's schema that breaks the guide fails here.
. "$(dirname "$0")/../loop/lib_agent.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: the sqlite3 command is needed (scripts/deps.sh installs it)" >&2; exit 1; }

GUIDE="$TG_SOURCE_DIR/docs/guide.md"
cp -r "$TG_SOURCE_DIR/examples" ex
cd ex/workspace
CFG=../toolgate.json
"$TOOLGATE" run --config $CFG ../turns/openai-chat-response.json > /dev/null
"$TOOLGATE" run --config $CFG --to anthropic ../turns/openai-chat-commands.json > /dev/null
"$TOOLGATE" run --config $CFG --strict ../turns/openai-chat-response.json > /dev/null || true
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"notes/todo.md"}}}' |
  "$TOOLGATE" serve --stdio --config $CFG > /dev/null
start_server '{"turns": [{"calls": [{"id": "call_1", "name": "grep", "arguments": {"pattern": "TODO", "path": "notes"}}]}, {"text": "done"}]}'
STATUS=0
"$TOOLGATE" agent --config $CFG --provider openai --base-url "$BASE/v1" --model m --quiet "TODOs?" > /dev/null || STATUS=$?
eq "the agent loop answered" "$STATUS" 0
stop_server
J=.toolgate/journal.db
check "the journal exists" test -f "$J"
LOOP=$(sqlite3 "$J" "SELECT loop_id FROM loops LIMIT 1")

# The queries: each console line "$ sqlite3 ..." of the section, with its
# continuation lines (indented), then the guide's first output line.
python3 - "$GUIDE" > queries.txt <<'PY'
import sys
text = open(sys.argv[1], encoding='utf-8').read()
start = text.index('## Reading the journal with sqlite3')
end = text.index('\n## ', start + 5)
lines = text[start:end].split('\n')
i = 0
while i < len(lines):
    l = lines[i]
    if l.startswith('$ sqlite3'):
        cmd = [l[2:]]
        i += 1
        while i < len(lines) and lines[i].startswith((' ', '\t')):
            cmd.append(lines[i].strip())
            i += 1
        first = lines[i] if i < len(lines) and not lines[i].startswith(('$', '```')) else ''
        print(' '.join(cmd).replace('\t', ' '))
        print(first)
    else:
        i += 1
PY
n=0
while IFS= read -r cmd && IFS= read -r first; do
  n=$((n + 1))
  # the guide's loop id is the one of its own run
  cmd=$(printf '%s' "$cmd" | sed -E "s/loop_[0-9a-f]{16}/$LOOP/g")
  if out=$(J=$J bash -c "$cmd" 2>&1); then pass; else fail "query $n failed: $cmd: $out"; continue; fi
  case $cmd in *".backup"*) continue ;; esac
  check "query $n prints rows: $cmd" test -n "$out"
  case $cmd in
    *-header*) eq "query $n: the columns the guide shows" \
                 "$(printf '%s\n' "$out" | head -1 | tr -s ' ' | sed 's/ $//')" \
                 "$(printf '%s\n' "$first" | tr -s ' ' | sed 's/ $//')" ;;
  esac
done < queries.txt
check "the guide's queries were found" test "$n" -ge 8

[ "$FAILS" -eq 0 ] || exit 1
echo "ok ($CHECKS checks)"
