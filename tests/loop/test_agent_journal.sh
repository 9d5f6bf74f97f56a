#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_agent_journal.sh - toolgate agent with the journal on: a model that
# numbers its calls afresh in every answer (call_0 each time, with other
# arguments) gets every call run, since each iteration's calls are kept in
# a caller scope of their own ("<loop id>/<iteration>"), and the journal
# holds them under it.
. "$(dirname "$0")/lib_agent.sh"

printf '{"builtin_tools": ["echo"], "journal": ".toolgate/journal.db"}\n' > toolgate.json
SCRIPT='{"turns": [
 {"calls": [{"id": "call_0", "name": "echo", "arguments": {"text": "alpha"}}]},
 {"calls": [{"id": "call_0", "name": "echo", "arguments": {"text": "beta"}}]},
 {"calls": [{"id": "call_0", "name": "echo", "arguments": {"text": "alpha"}}]},
 {"text": "done"}]}'

for p in $PROVIDERS; do
  rm -rf .toolgate
  start_server "$SCRIPT"
  agent "$p" --transcript transcript.json "Echo."
  eq "$p: exit status" "$STATUS" 0
  eq "$p: four requests" "$(requests)" 4
  contains "$p: the second call_0 ran (beta)" "$(request 2 .)" beta
  if grep -q CALL_ID_CONFLICT requests.jsonl; then
    fail "$p: a reused call id was refused"
  else
    pass
  fi
  LOOP=$(jqr transcript.json .loop_id)
  "$TOOLGATE" history --json --limit 100 > history.jsonl
  eq "$p: three journaled calls" "$(wc -l < history.jsonl | tr -d ' ')" 3
  eq "$p: none replayed" "$(jq -s '[.[] | select(.replayed == true)] | length' history.jsonl)" 0
  eq "$p: the callers are the iterations" \
    "$(jq -r '.call.caller_id' history.jsonl | sort | tr '\n' ' ')" \
    "$LOOP/1 $LOOP/2 $LOOP/3 "
done

echo "test_agent_journal: $CHECKS checks, $FAILS failures"
[ "$FAILS" -eq 0 ]
