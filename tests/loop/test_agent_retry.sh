#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_agent_retry.sh - retries of model requests in each provider's
# format: a 429 with Retry-After: 1 is sent again no sooner than a second
# later and then succeeds; 503 and 529 are retried with backoff; a budget
# of attempts ends a server that keeps failing with a clear error (exit 5);
# without Retry-After, OpenAI's x-ratelimit-* and Anthropic's
# anthropic-ratelimit-* headers say how long to wait.
# Only lower bounds on time (the Retry-After the server asked for).
. "$(dirname "$0")/lib_agent.sh"

for p in $PROVIDERS; do
  start_server '{"turns": [
    {"status": 429, "headers": {"retry-after": "1"}, "error": "rate limited"},
    {"status": 503, "error": "overloaded"},
    {"status": 529, "error": "overloaded too"},
    {"text": "finally"}]}'
  t0=$(now_ms)
  agent "$p" --max-attempts 5 "Hello."
  t1=$(now_ms)
  eq "$p: 429 then success: exit status" "$STATUS" 0
  eq "$p: 429 then success: the answer" "$(cat out.txt)" finally
  eq "$p: 429 then success: requests" "$(requests)" 4
  check "$p: Retry-After honoured ($((t1 - t0)) ms)" [ $((t1 - t0)) -ge 1000 ]
  contains "$p: the retry is reported" "$(cat err.txt)" "attempt 2 in 1000 ms after HTTP 429: rate limited"
  contains "$p: 529 is retried" "$(cat err.txt)" "attempt 4 in"

  # the providers' own rate-limit headers, when Retry-After is missing
  case $p in
    openai|openai-responses) rl='{"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1.2s"}' ;;
    anthropic) rl="{\"anthropic-ratelimit-requests-remaining\": \"0\", \"anthropic-ratelimit-requests-reset\": \"$(date -u -d @$(($(date +%s) + 5)) +%Y-%m-%dT%H:%M:%SZ)\"}" ;;
    gemini) rl='{}' ;;
  esac
  start_server "{\"turns\": [{\"status\": 429, \"headers\": $rl, \"error\": \"slow down\"}, {\"text\": \"ok\"}]}"
  t0=$(now_ms)
  agent "$p" "Hello."
  t1=$(now_ms)
  eq "$p: rate-limit headers: exit status" "$STATUS" 0
  case $p in
    openai|openai-responses)
      check "$p: x-ratelimit-reset-requests honoured ($((t1 - t0)) ms)" [ $((t1 - t0)) -ge 1200 ]
      contains "$p: the wait the headers asked for" "$(cat err.txt)" "attempt 2 in 1200 ms" ;;
    anthropic) # the reset is a time, five seconds away when the server started
      check "$p: anthropic-ratelimit-requests-reset honoured ($((t1 - t0)) ms)" [ $((t1 - t0)) -ge 900 ] ;;
  esac

  start_server '{"turns": [{"status": 500, "error": "boom"}], "repeat_last": true}'
  agent "$p" --max-attempts 2 "Hello."
  eq "$p: budget: exit status" "$STATUS" 5
  eq "$p: budget: requests" "$(requests)" 2
  contains "$p: budget: said why" "$(cat err.txt)" "gave up after 2 attempts"
  contains "$p: budget: the provider's message" "$(cat err.txt)" "HTTP 500: boom"
done

echo "test_agent_retry: $CHECKS checks, $FAILS failures"
[ "$FAILS" -eq 0 ]
