#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_agent_stream.sh - toolgate agent --stream against the scripted model
# server in each provider's streamed format: two iterations of two
# parallel calls then an answer, every call answered by id in the next
# request (each tool started from the stream, the results joined in the
# model's order: one user message for Anthropic, one user content for
# Gemini); a stream cut inside the second call's arguments answers that
# call as an error and the loop goes on.
. "$(dirname "$0")/lib_agent.sh"

SCRIPT='{"turns": [
 {"text": "first", "calls": [{"id": "call_1", "name": "echo", "arguments": {"text": "one"}},
                             {"id": "call_2", "name": "echo", "arguments": {"text": "two"}}]},
 {"calls": [{"id": "call_3", "name": "echo", "arguments": {"text": "three"}},
            {"id": "call_4", "name": "echo", "arguments": {"text": "four"}}]},
 {"text": "All done."}]}'

for p in $PROVIDERS; do
  start_server "$SCRIPT"
  agent "$p" --stream --progress --transcript transcript.json "Say the numbers."
  eq "$p: exit status" "$STATUS" 0
  # the live view: each iteration's heading, the model's text as it came,
  # the calls' lines after it
  contains "$p: live view: iteration 1's heading" "$(cat err.txt)" "--- iteration 1"
  eq "$p: live view: the streamed text under its iteration" \
    "$(sed -n '/^--- iteration 1$/,/^--- iteration 2$/p' err.txt | grep -c '^first$')" 1
  contains "$p: live view: iteration 3's text" "$(cat err.txt)" "$(printf -- '--- iteration 3\nAll done.')"
  eq "$p: the answer" "$(sed 's/ *$//' out.txt)" "All done."
  eq "$p: three requests" "$(requests)" 3
  if [ "$p" != gemini ]; then
    eq "$p: asked for a stream" "$(request 0 '.stream')" true
  else
    contains "$p: the streaming endpoint" \
      "$(jq -r 'select(.n == 0) | .path' requests.jsonl)" ":streamGenerateContent"
  fi
  eq "$p: every call answered, in order" \
    "$(results_by_id "$p" 2 | tr '\n' ' ')" "call_1 call_2 call_3 call_4 "
  eq "$p: the calls answered are the calls made" \
    "$(calls_by_id "$p" 2 | tr '\n' ' ')" "call_1 call_2 call_3 call_4 "
  case $p in
    anthropic)
      eq "$p: one user message per turn of results" \
        "$(request 2 '[.messages[] | select(.role == "user")] | length')" 3 ;;
    gemini)
      eq "$p: one user content per turn of results" \
        "$(request 2 '[.contents[] | select(.role == "user")] | length')" 3 ;;
  esac
  eq "$p: transcript stop" "$(jqr transcript.json .stop)" answered
done

# A stream cut inside the last call's arguments: the server's own stream of
# the turn is read first (node's fetch) to find where the first piece of
# call_b's arguments holding "beta-" starts; the cut falls 4 bytes after
# it. The call cut short is answered with an error (its arguments cut:
# MALFORMED_ARGUMENTS; none of them arrived: the schema's
# INVALID_ARGUMENTS). Gemini sends a turn's calls whole in one event: the
# event cut short is dropped, so no call was made, and a stream dropped
# before any call ran is sent again (the model then answers).
CALLS='"calls": [{"id": "call_a", "name": "echo", "arguments": {"text": "alpha"}},
                 {"id": "call_b", "name": "echo", "arguments": {"text": "beta-beta-beta-beta"}}]'
for p in $PROVIDERS; do
  case $p in
    openai) path=/v1/chat/completions ;;
    openai-responses) path=/v1/responses ;;
    anthropic) path=/v1/messages ;;
    gemini) path="/v1beta/models/test-model:streamGenerateContent?alt=sse" ;;
  esac
  start_server "{\"turns\": [{$CALLS}]}"
  full=$(node -e 'fetch(process.argv[1], {method: "POST",
      headers: {"content-type": "application/json"}, body: "{\"stream\": true}"})
    .then((r) => r.text()).then((t) => process.stdout.write(t))' "$BASE$path")
  prefix=${full%%beta-*}
  if [ "$prefix" == "$full" ]; then
    fail "$p: the server's stream holds no call_b arguments"
    continue
  fi
  cut=$(($(printf '%s' "$prefix" | wc -c) + 4))
  start_server "{\"turns\": [{$CALLS, \"cut_after_bytes\": $cut},
    {\"text\": \"I saw the cut.\"}]}"
  agent "$p" --stream "Cut me."
  eq "$p: cut: exit status" "$STATUS" 0
  eq "$p: cut: the answer" "$(sed 's/ *$//' out.txt)" "I saw the cut."
  if [ "$p" == gemini ]; then
    eq "$p: cut: no call was made, the request sent again" \
      "$(results_by_id "$p" 1 | tr '\n' ' ')" ""
    eq "$p: cut: the same conversation again" \
      "$(jq -c 'select(.n == 1) | .body.contents' requests.jsonl)" \
      "$(jq -c 'select(.n == 0) | .body.contents' requests.jsonl)"
    continue
  fi
  eq "$p: cut: both calls answered" "$(results_by_id "$p" 1 | tr '\n' ' ')" "call_a call_b "
  check "$p: cut: the cut call is an error the model sees" \
    grep -qE 'call_b.*(MALFORMED_ARGUMENTS|INVALID_ARGUMENTS)' \
    <(jq -c 'select(.n == 1) | .body' requests.jsonl)
done

echo "test_agent_stream: $CHECKS checks, $FAILS failures"
[ "$FAILS" -eq 0 ]
