#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_agent_loop.sh - toolgate agent against the scripted model server in
# each provider's wire format: two iterations of two parallel echo calls,
# then an answer. Every call of every assistant turn is answered in the
# next request, matched by id, in the provider's shape; the tools and the
# system prompt go out in the provider's shape; the answer is on stdout;
# the transcript holds the conversation and no key.
. "$(dirname "$0")/lib_agent.sh"

SCRIPT='{"turns": [
 {"text": "first", "calls": [{"id": "call_1", "name": "echo", "arguments": {"text": "one"}},
                             {"id": "call_2", "name": "echo", "arguments": {"text": "two"}}]},
 {"calls": [{"id": "call_3", "name": "echo", "arguments": {"text": "three"}},
            {"id": "call_4", "name": "echo", "arguments": {"text": "four"}}]},
 {"text": "All done: one two three four."}]}'

for p in $PROVIDERS; do
  start_server "$SCRIPT"
  KEY_VAR=TG_TEST_KEY_$RANDOM
  export "$KEY_VAR=sk-test-secret-$p"
  agent "$p" --api-key-env "$KEY_VAR" --system "Be brief." \
    --transcript transcript.json "Say the numbers."
  eq "$p: exit status" "$STATUS" 0
  eq "$p: the answer on stdout" "$(cat out.txt)" "All done: one two three four."
  eq "$p: three requests" "$(requests)" 3
  eq "$p: request 1 answers the first turn's calls" \
    "$(results_by_id "$p" 1 | tr '\n' ' ')" "call_1 call_2 "
  eq "$p: request 2 answers every call so far, in order" \
    "$(results_by_id "$p" 2 | tr '\n' ' ')" "call_1 call_2 call_3 call_4 "
  eq "$p: the calls answered are the calls made" \
    "$(calls_by_id "$p" 2 | tr '\n' ' ')" "call_1 call_2 call_3 call_4 "
  contains "$p: the echo output reached the model" \
    "$(jq -c 'select(.n == 2) | .body' requests.jsonl)" 'four'
  case $p in
    openai)
      eq "$p: path" "$(jq -r 'select(.n == 0) | .path' requests.jsonl)" /v1/chat/completions
      eq "$p: system first" "$(request 0 '.messages[0]')" '{"role":"system","content":"Be brief."}'
      eq "$p: model" "$(request 0 '.model')" '"test-model"'
      eq "$p: tool shape" "$(request 0 '.tools[] | select(.function.name == "echo") | .type')" '"function"'
      eq "$p: key header" "$(jq -r 'select(.n == 0) | .headers.authorization' requests.jsonl)" "$(redacted "Bearer sk-test-secret-$p")" ;;
    openai-responses)
      eq "$p: path" "$(jq -r 'select(.n == 0) | .path' requests.jsonl)" /v1/responses
      eq "$p: instructions" "$(request 0 '.instructions')" '"Be brief."'
      eq "$p: tool shape" "$(request 0 '.tools[] | select(.name == "echo") | .type')" '"function"'
      eq "$p: key header" "$(jq -r 'select(.n == 0) | .headers.authorization' requests.jsonl)" "$(redacted "Bearer sk-test-secret-$p")" ;;
    anthropic)
      eq "$p: path" "$(jq -r 'select(.n == 0) | .path' requests.jsonl)" /v1/messages
      eq "$p: system" "$(request 0 '.system')" '"Be brief."'
      eq "$p: max_tokens" "$(request 0 '.max_tokens | type')" '"number"'
      eq "$p: tool shape" "$(request 0 '.tools[] | select(.name == "echo") | .input_schema.type')" '"object"'
      eq "$p: version header" "$(jq -r 'select(.n == 0) | .headers["anthropic-version"]' requests.jsonl)" 2023-06-01
      eq "$p: key header" "$(jq -r 'select(.n == 0) | .headers["x-api-key"]' requests.jsonl)" "$(redacted "sk-test-secret-$p")"
      # the two results of one turn are one user message
      eq "$p: one user message per turn of results" \
        "$(request 2 '[.messages[] | select(.role == "user")] | length')" 3 ;;
    gemini)
      eq "$p: path" "$(jq -r 'select(.n == 0) | .path' requests.jsonl)" /v1beta/models/test-model:generateContent
      eq "$p: system" "$(request 0 '.systemInstruction.parts[0].text')" '"Be brief."'
      eq "$p: tool shape" "$(request 0 '.tools[0].functionDeclarations[] | select(.name == "echo") | .name')" '"echo"'
      eq "$p: key header" "$(jq -r 'select(.n == 0) | .headers["x-goog-api-key"]' requests.jsonl)" "$(redacted "sk-test-secret-$p")" ;;
  esac
  eq "$p: transcript stop" "$(jqr transcript.json .stop)" answered
  eq "$p: transcript iterations" "$(jqr transcript.json .iterations)" 3
  eq "$p: transcript provider" "$(jqr transcript.json .provider)" "$p"
  if grep -q "sk-test-secret" transcript.json err.txt out.txt; then
    fail "$p: the API key was written out"
  else
    pass
  fi
  contains "$p: progress on stderr" "$(cat err.txt)" "iteration 2: 2 calls"
  unset "$KEY_VAR"
done

echo "test_agent_loop: $CHECKS checks, $FAILS failures"
[ "$FAILS" -eq 0 ]
