#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_agent_failures.sh - what goes wrong in an agent loop, in each
# provider's format: a call with malformed arguments and a call of an
# unknown tool are answered as errors the model sees (the loop goes on to
# the answer); a model that never stops calling tools is stopped by
# --max-iterations (exit 1, no request more) and by --max-tool-calls; a 400
# is a clear error quoting the provider's message (exit 5, no retry).
. "$(dirname "$0")/lib_agent.sh"

BAD='{"turns": [
 {"calls": [{"id": "call_ok", "name": "echo", "arguments": {"text": "fine"}},
            {"id": "call_bad", "name": "echo", "arguments": "{\"text\": \"unterminated"},
            {"id": "call_ghost", "name": "no_such_tool", "arguments": {}}]},
 {"text": "I see the errors."}]}'
NEVER='{"turns": [{"calls": [{"id": "call_x", "name": "echo", "arguments": {"text": "again"}}]}],
 "repeat_last": true}'

for p in $PROVIDERS; do
  start_server "$BAD"
  agent "$p" "Try the tools."
  eq "$p: malformed: exit status" "$STATUS" 0
  eq "$p: malformed: the answer" "$(cat out.txt)" "I see the errors."
  eq "$p: malformed: every call answered" \
    "$(results_by_id "$p" 1 | tr '\n' ' ')" "call_ok call_bad call_ghost "
  body=$(jq -c 'select(.n == 1) | .body' requests.jsonl)
  contains "$p: malformed arguments reach the model as an error" "$body" MALFORMED_ARGUMENTS
  contains "$p: an unknown tool reaches the model as an error" "$body" UNKNOWN_TOOL
  contains "$p: the good call ran" "$body" fine

  start_server "$NEVER"
  agent "$p" --max-iterations 3 "Loop forever."
  eq "$p: max-iterations: exit status" "$STATUS" 1
  eq "$p: max-iterations: requests" "$(requests)" 3
  contains "$p: max-iterations: said why" "$(cat err.txt)" "max_iterations after 3 iterations"

  start_server "$NEVER"
  agent "$p" --max-tool-calls 2 "Loop forever."
  eq "$p: max-tool-calls: exit status" "$STATUS" 1
  eq "$p: max-tool-calls: requests" "$(requests)" 2
  contains "$p: max-tool-calls: said why" "$(cat err.txt)" "tool_budget"

  start_server '{"turns": [{"status": 400, "error": "model test-model does not exist"}]}'
  agent "$p" "Hello."
  eq "$p: 400: exit status" "$STATUS" 5
  eq "$p: 400: not retried" "$(requests)" 1
  contains "$p: 400: the provider's message" "$(cat err.txt)" "HTTP 400: model test-model does not exist"
done

echo "test_agent_failures: $CHECKS checks, $FAILS failures"
[ "$FAILS" -eq 0 ]
