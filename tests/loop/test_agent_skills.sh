#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_agent_skills.sh - `toolgate agent --skill NAME=FILE`: each skill goes
# into the system prompt after --system, under its name, in each
# provider's shape; every call of the loop carries the skills' names in
# its journaled record, and keeps them across --resume; bad --skill
# arguments are usage errors.
. "$(dirname "$0")/lib_agent.sh"

printf '{"builtin_tools": ["echo"], "journal": ".toolgate/journal.db"}\n' > toolgate.json
printf 'Always cite the file.\n' > cite.md
printf 'Answer in French.\n' > french.md
SCRIPT='{"turns": [{"calls": [{"id": "call_1", "name": "echo", "arguments": {"text": "x"}}]}, {"text": "Fini."}]}'

system_of() {
  case $1 in
    openai) request 0 '.messages[0].content' ;;
    openai-responses) request 0 '.instructions' ;;
    anthropic) request 0 '.system' ;;
    gemini) request 0 '.systemInstruction.parts[0].text' ;;
  esac
}

for p in $PROVIDERS; do
  rm -rf .toolgate
  start_server "$SCRIPT"
  agent "$p" --system "Be brief." --skill cite=cite.md --skill french=french.md "Go."
  eq "$p: exit status" "$STATUS" 0
  eq "$p: the system prompt holds the skills" "$(system_of "$p")" \
    '"Be brief.\n\n## Skill: cite\n\nAlways cite the file.\n\n\n## Skill: french\n\nAnswer in French.\n"'
  eq "$p: the call records the skills" \
    "$("$TOOLGATE" history --json | jq -c .call.skills)" '["cite","french"]'
done

# a resumed loop keeps its skills (and refuses new ones): a loop whose
# second request failed (400) is resumed against a server that answers it
rm -rf .toolgate
start_server '{"by_conversation": true, "turns": [{"calls": [{"id": "c1", "name": "echo", "arguments": {"text": "x"}}]}, {"status": 400, "error": "no"}]}'
agent openai --skill cite=cite.md "Go."
eq "the second request failed" "$STATUS" 5
LOOP=$("$TOOLGATE" history --loops --json --limit 1 | jq -r .loop_id)
eq "the loop failed" "$("$TOOLGATE" history --loops --json --limit 1 | jq -r .status)" failed
start_server '{"by_conversation": true, "turns": [{"text": "unused"},
  {"calls": [{"id": "c2", "name": "echo", "arguments": {"text": "y"}}]}, {"text": "ok"}]}'
STATUS=0
"$TOOLGATE" agent --resume "$LOOP" --skill french=french.md > out.txt 2> err.txt || STATUS=$?
eq "new skills on --resume: usage error" "$STATUS" 2
contains "new skills on --resume: said why" "$(cat err.txt)" "keeps the skills"
STATUS=0
"$TOOLGATE" agent --resume "$LOOP" --base-url "$BASE/v1" > out.txt 2> err.txt || STATUS=$?
eq "resumed: the answer" "$STATUS $(cat out.txt)" "0 ok"
eq "resumed: the new call records the loop's skills" \
  "$("$TOOLGATE" history --json | jq -c 'select(.id == "c2") | .call.skills')" '["cite"]'
eq "resumed: the system prompt kept" "$(request 0 '.messages[0].content')" '"## Skill: cite\n\nAlways cite the file.\n"'

# bad arguments
for bad in "noequals" "=cite.md" "name=" "x=missing-file.md"; do
  start_server "$SCRIPT"
  agent openai --skill "$bad" "Go."
  eq "--skill '$bad': usage error" "$STATUS" 2
  eq "--skill '$bad': no request" "$(requests)" 0
done
agent openai --skill a=cite.md --skill a=french.md "Go."
eq "a name given twice: usage error" "$STATUS" 2
contains "a name given twice: said so" "$(cat err.txt)" "given twice"

echo "test_agent_skills: $CHECKS checks, $FAILS failures"
[ "$FAILS" -eq 0 ]
