#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_agent_budget.sh - the loop's budgets in each provider's format:
# a token budget ends a model that never stops calling tools once the
# tokens its answers report reach it (the last answer's calls still run
# and are answered), whole and streamed; a wall-clock budget ends a loop
# stuck in a slow tool (the call ends canceled by "system" and is in the
# transcript) and one waiting for a slow model. Upper bounds on time are
# scaled and far from what the budgets ask for.
. "$(dirname "$0")/lib_agent.sh"

cat > toolgate.json <<'JSON'
{"builtin_tools": ["echo"], "journal": null,
 "tools": [{"name": "nap", "command": ["sleep", "{seconds}"],
            "input_schema": {"type": "object", "properties": {"seconds": {"type": "string"}},
                             "required": ["seconds"]}}]}
JSON
NEVER='{"turns": [{"calls": [{"name": "echo", "arguments": {"text": "again"}}],
                   "usage": {"input": 100, "output": 50}}], "repeat_last": true}'

for p in $PROVIDERS; do
  for stream in "" --stream; do
    start_server "$NEVER"
    agent "$p" $stream --max-total-tokens 400 --transcript t.json "Loop forever."
    eq "$p$stream: token budget: exit status" "$STATUS" 1
    eq "$p$stream: token budget: three answers (450 tokens)" "$(requests)" 3
    contains "$p$stream: token budget: said why" "$(cat err.txt)" "token_budget after 3 iterations, 3 tool calls and 450 tokens"
    eq "$p$stream: token budget: the transcript's tokens" "$(jq .tokens t.json)" 450
    eq "$p$stream: token budget: the transcript's stop" "$(jq -r .stop t.json)" token_budget
    case $p in # the last answer's call is answered in the transcript
      openai) eq "$p$stream: token budget: every call answered" "$(jq '[.messages[] | select(.role == "tool")] | length' t.json)" 3 ;;
      anthropic) eq "$p$stream: token budget: every call answered" "$(jq '[.messages[] | select(.role == "user") | .content | arrays | .[] | select(.type == "tool_result")] | length' t.json)" 3 ;;
    esac
  done

  start_server '{"turns": [{"calls": [{"id": "call_nap", "name": "nap", "arguments": {"seconds": "30"}}]}, {"text": "never"}]}'
  t0=$(now_ms)
  agent "$p" --max-time 1500 --transcript t.json "Sleep."
  t1=$(now_ms)
  eq "$p: time budget, slow tool: exit status" "$STATUS" 1
  contains "$p: time budget, slow tool: said why" "$(cat err.txt)" "time_budget"
  check "$p: time budget, slow tool: ended long before the tool ($((t1 - t0)) ms)" [ $((t1 - t0)) -lt "$(tg_ms 15000)" ]
  check "$p: time budget, slow tool: not before the budget ($((t1 - t0)) ms)" [ $((t1 - t0)) -ge 1500 ]
  eq "$p: time budget, slow tool: one request" "$(requests)" 1
  contains "$p: time budget, slow tool: the call ended canceled" "$(cat err.txt)" "call_nap nap: canceled"
  contains "$p: time budget, slow tool: its result is in the transcript" "$(cat t.json)" "time budget ran out"

  start_server '{"turns": [{"text": "late", "delay_ms": 30000}]}'
  t0=$(now_ms)
  agent "$p" --max-time 1000 "Think long."
  t1=$(now_ms)
  eq "$p: time budget, slow model: exit status" "$STATUS" 1
  contains "$p: time budget, slow model: said why" "$(cat err.txt)" "time_budget"
  check "$p: time budget, slow model: ended long before the answer ($((t1 - t0)) ms)" [ $((t1 - t0)) -lt "$(tg_ms 15000)" ]
done

echo "test_agent_budget: $CHECKS checks, $FAILS failures"
[ "$FAILS" -eq 0 ]
