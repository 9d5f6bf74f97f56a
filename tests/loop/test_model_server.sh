#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The scripted model server (model_server.mjs) that the agent loop's tests
# run against, driven with curl (one stream with Node's client) on every
# endpoint, whole and streamed: what it answers parses with toolgate's own
# reader into the scripted calls
# (`toolgate run` with the echo built-in: the arguments come back as the
# payload; a made-up tool is UNKNOWN_TOOL, broken arguments
# MALFORMED_ARGUMENTS), errors come in each provider's error shape with the
# scripted headers (429 + retry-after), a cut answer stops after exactly its
# bytes, a delay delays, a request past the script's end is a 500 saying
# so; the log numbers every request and holds no key; --strict rejects a
# conversation with a dangling call as the providers do; --stdin-eof stops
# it. check_requests.mjs passes good conversations of each provider and
# fails dangling calls, results without their call, and a call the server
# sent that a later request dropped.
source "$(dirname "$0")/../cli/lib.sh"
if ! command -v node >/dev/null; then
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: node is not installed" >&2
    exit 1
  fi
  echo "SKIP: node is not installed"
  exit 77
fi
loop=$TG_SOURCE_DIR/tests/loop
echo '{"builtin_tools": ["echo"]}' >tg.json

# --- The script: one answer per endpoint and mode, then each fault.
answer='{"text": "Checking both.", "calls": [
  {"id": "call_a", "name": "echo", "arguments": {"text": "first \u00fcn\u00efcode \"q\" {x}"}},
  {"id": "call_b", "name": "echo", "arguments": {"text": "second"}},
  {"name": "ghost_tool", "arguments": {"x": 1}},
  {"id": "call_d", "name": "echo", "arguments": "{\"text\": \"unclosed"}],
  "usage": {"input": 10, "output": 5}}'
# Requests go endpoint by endpoint (chat, responses, anthropic, gemini),
# whole (turns 0-3), streamed in 9-byte chunks (4-7), streamed with the
# calls' pieces interleaved (8-10; 11: Gemini's JSON-array stream), then
# the faults from turn 12 on.
jq -n --argjson a "$answer" '{turns: ([$a, $a, $a, $a]
  + [range(4) | $a + {chunk_bytes: 9}] + [range(4) | $a + {interleave: true}] + [
  {status: 429, headers: {"retry-after": "1"}, error: "Rate limit reached"},
  {status: 429, headers: {"retry-after": "2"}, error: "Rate limit reached"},
  {status: 429, headers: {"retry-after": "3"}, error: "Number of requests exceeded"},
  {status: 429, error: "Resource has been exhausted"},
  {status: 500, error: "The server had an error"},
  {status: 529, error: "Overloaded"},
  {status: 401, error: "API key not valid"},
  ($a + {cut_after_bytes: 300}),
  ($a + {cut_after_bytes: 100}),
  {text: "All done.", delay_ms: 300},
  $a, $a])}' >script.json

# start_server LOGFILE ARGS...: starts the server, sets PID and BASE; the
# servers still running when the test ends are stopped.
SERVERS=""
trap 'for p in $SERVERS; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"' EXIT
start_server() {
  local log=$1
  shift
  rm -f listen.txt
  # <&0: the caller's stdin, not the /dev/null bash gives a background job
  node "$loop/model_server.mjs" --log "$log" "$@" <&0 >listen.txt 2>server.err &
  PID=$!
  SERVERS="$SERVERS $PID"
  wait_for "$(tg_ms 10000)" grep -q '^listening http://127.0.0.1:[0-9]*$' listen.txt ||
    { fail "the server did not say it listens: $(cat listen.txt server.err)"; finish; }
  BASE=$(sed 's/^listening //' listen.txt)
}
start_server log.jsonl --script script.json
eq "one line on stdout" "$(wc -l <listen.txt)" 1

# req NAME PATH BODY [CURL ARGS...]: NAME.out (body), NAME.hdr (headers),
# NAME.code (HTTP status), NAME.rc (curl's exit status)
req() {
  local name=$1 path=$2 body=$3
  shift 3
  set +e
  curl -sS -o "$name.out" -D "$name.hdr" -w '%{http_code}' -H 'content-type: application/json' \
    "$@" --data-binary "$body" "$BASE$path" >"$name.code" 2>"$name.curlerr"
  echo $? >"$name.rc"
  set -e
}
# calls FILE: the calls toolgate reads in FILE, run with the echo built-in:
# tool:outcome:payload-or-error-code, one line each
calls() {
  "$TOOLGATE" run --config tg.json --no-journal --to toolgate "$1" |
    jq -r '.tool + ":" + .outcome + ":" + (.payload | if type == "string" then . else .error.code end)'
}
expected='echo:success:first ünïcode "q" {x}
echo:success:second
ghost_tool:error:UNKNOWN_TOOL
echo:error:MALFORMED_ARGUMENTS'

chat='{"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]}'
chat_s='{"model": "gpt-test", "stream": true, "stream_options": {"include_usage": true}, "messages": [{"role": "user", "content": "hi"}]}'
resp='{"model": "gpt-test", "input": "hi"}'
resp_s='{"model": "gpt-test", "stream": true, "input": "hi"}'
anth='{"model": "claude-test", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}'
anth_s='{"model": "claude-test", "max_tokens": 100, "stream": true, "messages": [{"role": "user", "content": "hi"}]}'
gem='{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}'
# reads NAME URL BODY: POSTs BODY with Node's client, writes NAME.out and
# NAME.code, and NAME.reads: how many pieces the client read the body in.
cat >reads.mjs <<'JS'
import http from 'node:http';
import fs from 'node:fs';
const [name, url, body] = process.argv.slice(2);
const r = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
    const parts = [];
    res.on('data', (d) => parts.push(d));
    res.on('end', () => {
        fs.writeFileSync(`${name}.out`, Buffer.concat(parts));
        fs.writeFileSync(`${name}.code`, String(res.statusCode));
        fs.writeFileSync(`${name}.reads`, String(parts.length));
    });
});
r.end(body);
JS
for mode in whole sse interleaved; do
  [ $mode = whole ] && b=$chat || b=$chat_s
  req chat_$mode /v1/chat/completions "$b" -H 'Authorization: Bearer sk-test-SECRET-1234'
  [ $mode = whole ] && b=$resp || b=$resp_s
  req resp_$mode /v1/responses "$b"
  [ $mode = whole ] && b=$anth || b=$anth_s
  req anth_$mode /v1/messages "$b" -H 'x-api-key: sk-ant-SECRET-5678'
  case $mode in
    whole) req gem_$mode '/v1beta/models/gemini-test:generateContent' "$gem" -H 'x-goog-api-key: AIza-SECRET-9' ;;
    sse) node reads.mjs gem_$mode "$BASE/v1beta/models/gemini-test:streamGenerateContent?alt=sse&key=SECRET-Q" "$gem" ;;
    interleaved) req gem_$mode '/v1beta/models/gemini-test:streamGenerateContent' "$gem" ;;
  esac
done
for mode in whole sse interleaved; do
  for p in chat resp anth gem; do
    eq "$p $mode: HTTP 200" "$(cat ${p}_$mode.code)" 200
  done
done
eq "chat whole: a chat.completion" "$(jq -r '.object + " " + .choices[0].finish_reason' chat_whole.out)" \
  "chat.completion tool_calls"
eq "chat whole: arguments are a JSON string" "$(jq -r '.choices[0].message.tool_calls[0].function.arguments' chat_whole.out)" \
  '{"text":"first ünïcode \"q\" {x}"}'
eq "chat whole: usage as scripted" "$(jq -c .usage chat_whole.out)" '{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}'
eq "chat sse: text/event-stream" "$(grep -i '^content-type' chat_sse.hdr | tr -d '\r')" "content-type: text/event-stream"
eq "chat sse: ends with [DONE]" "$(grep '^data:' chat_sse.out | tail -1)" "data: [DONE]"
eq "chat sse: the usage asked for, in the last chunk" \
  "$(grep '^data: {' chat_sse.out | tail -1 | sed 's/^data: //' | jq -c .usage)" \
  '{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}'
grep '^data: {' chat_sse.out | sed 's/^data: //' |
  jq -c '.choices[0].delta.tool_calls[0]? // empty | select(.index == 0)' >chat_sse.pieces
eq "chat sse: id and name in the first delta only" \
  "$(jq -c '[.id, .function.name]' chat_sse.pieces | uniq -c | awk '{print $1 $2}' | tr '\n' ' ')" \
  '1["call_a","echo"] 4[null,null] '
eq "chat sse: the pieces make the arguments" "$(jq -j '.function.arguments' chat_sse.pieces)" \
  '{"text":"first ünïcode \"q\" {x}"}'
eq "chat interleaved: the calls' pieces take turns" \
  "$(grep '^data: {' chat_interleaved.out | sed 's/^data: //' |
    jq -r '.choices[0].delta.tool_calls[0].index // empty' | head -7 | tr '\n' ' ')" "0 1 2 3 0 1 3 "
eq "responses whole: output items" "$(jq -r '.status + ": " + ([.output[].type] | join(" "))' resp_whole.out)" \
  "completed: message function_call function_call function_call function_call"
eq "responses sse: event order" \
  "$(grep '^event:' resp_sse.out | sed 's/^event: //' | uniq | head -12 | tr '\n' ' ')" \
  "response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta response.output_text.done response.content_part.done response.output_item.done response.output_item.added response.function_call_arguments.delta response.function_call_arguments.done response.output_item.done "
eq "responses sse: ends with response.completed" "$(grep '^event:' resp_sse.out | tail -1)" "event: response.completed"
eq "responses interleaved: every call's item added first" \
  "$(grep '^event:' resp_interleaved.out | sed 's/^event: //' |
    sed -n '/response.output_item.done/,$p' | sed -n '2,6p' | uniq -c | awk '{print $1 $2}' | tr '\n' ' ')" \
  "4response.output_item.added 1response.function_call_arguments.delta "
eq "anthropic whole: stop_reason, blocks" "$(jq -r '.stop_reason + " " + ([.content[].type] | join(","))' anth_whole.out)" \
  "tool_use text,tool_use,tool_use,tool_use,tool_use"
eq "anthropic sse: events" "$(grep '^event:' anth_sse.out | sed 's/^event: //' | uniq | head -6 | tr '\n' ' ')" \
  "message_start ping content_block_start content_block_delta content_block_stop content_block_start "
eq "anthropic sse: ends with message_delta, message_stop" "$(grep '^event:' anth_sse.out | tail -2 | tr '\n' ' ')" \
  "event: message_delta event: message_stop "
eq "gemini whole: parts" "$(jq -c '[.candidates[0].content.parts[] | keys[0]]' gem_whole.out)" \
  '["text","functionCall","functionCall","functionCall","functionCall"]'
eq "gemini whole: an id only where the script has one" \
  "$(jq -r '.candidates[0].content.parts[1:] | map(.functionCall.id // "-") | join(" ")' gem_whole.out)" "call_a call_b - call_d"
# chunk_bytes 9: the body left in ~120 writes of 9 bytes, a turn of the
# server's event loop between them; a client reads it in one piece only if
# it slept through all of them (it reads ~120 pieces on an idle machine)
check "gemini sse in 9-byte chunks: read in pieces ($(cat gem_sse.reads) of $(wc -c <gem_sse.out) bytes)" \
  test "$(cat gem_sse.reads)" -gt 1
eq "gemini sse: CRLF after each data line" "$(grep -c $'^data: .*\r$' gem_sse.out)" "$(grep -c '^data: ' gem_sse.out)"
eq "gemini array: a JSON array of responses, the calls in the last" \
  "$(jq -r '(length > 1 | tostring) + " " + .[-1].candidates[0].finishReason' gem_interleaved.out)" "true STOP"

# What toolgate itself reads in each answer: the scripted calls.
for f in chat_whole chat_sse chat_interleaved resp_whole resp_sse resp_interleaved \
  anth_whole anth_sse anth_interleaved gem_whole gem_sse; do
  eq "$f: toolgate reads the scripted calls" "$(calls $f.out 2>$f.tgerr)" "$expected"
done
jq '.[-1]' gem_interleaved.out >gem_last.json
eq "gemini array's last response: toolgate reads the calls" "$(calls gem_last.json)" "$expected"
ids() { "$TOOLGATE" run --config tg.json --no-journal --to toolgate "$1" 2>/dev/null | jq -r .id | tr '\n' ' '; }
eq "chat whole: ids, the missing one made up" "$(ids chat_whole.out)" "call_a call_b call_tg0_2 call_d "
eq "responses sse: ids" "$(ids resp_sse.out)" "call_a call_b call_tg5_2 call_d "
eq "anthropic interleaved: ids" "$(ids anth_interleaved.out)" "call_a call_b toolu_tg10_2 call_d "

# --- Faults: errors in each provider's shape with the scripted headers.
req e_chat /v1/chat/completions "$chat"
req e_resp /v1/responses "$resp"
req e_anth /v1/messages "$anth"
req e_gem /v1beta/models/gemini-test:generateContent "$gem"
eq "429 chat" "$(cat e_chat.code) $(grep -i '^retry-after:' e_chat.hdr | tr -d '\r')" "429 retry-after: 1"
eq "429 chat: OpenAI's error shape" "$(jq -c .error e_chat.out)" \
  '{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}'
eq "429 responses" "$(cat e_resp.code) $(grep -i '^retry-after:' e_resp.hdr | tr -d '\r')" "429 retry-after: 2"
eq "429 anthropic: its error shape" "$(cat e_anth.code) $(jq -c . e_anth.out) $(grep -i '^retry-after:' e_anth.hdr | tr -d '\r')" \
  '429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of requests exceeded"}} retry-after: 3'
eq "429 gemini: its error shape" "$(cat e_gem.code) $(jq -c . e_gem.out)" \
  '429 {"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}'
req e500 /v1/chat/completions "$chat_s"
req e529 /v1/messages "$anth_s"
req e401 /v1beta/models/gemini-test:streamGenerateContent?alt=sse "$gem"
eq "500 on a streamed request: a JSON error" "$(cat e500.code) $(jq -r .error.type e500.out)" "500 server_error"
eq "529 anthropic overloaded" "$(cat e529.code) $(jq -r .error.type e529.out)" "529 overloaded_error"
eq "401 gemini" "$(cat e401.code) $(jq -r .error.status e401.out)" "401 UNAUTHENTICATED"

# A cut answer: exactly its first bytes, then the connection drops (curl:
# 18, a transfer closed short).
req cut_sse /v1/chat/completions "$chat_s"
eq "cut stream: curl sees the transfer cut" "$(cat cut_sse.rc)" 18
eq "cut stream: 300 bytes came" "$(wc -c <cut_sse.out)" 300
# the same stream as request 4's but for the id chatcmpl-tg19 (one more
# byte than chatcmpl-tg4)
sed 's/chatcmpl-tg19/chatcmpl-tg4/g' cut_sse.out >cut_sse.norm
eq "cut stream: they are the stream's first bytes" \
  "$(cmp -n "$(wc -c <cut_sse.norm)" cut_sse.norm chat_sse.out && echo same)" same
req cut_whole /v1/messages "$anth"
eq "cut whole answer: curl sees the transfer cut" "$(cat cut_whole.rc)" 18
eq "cut whole answer: 100 bytes came" "$(wc -c <cut_whole.out)" 100

# A delayed answer (no calls: finish_reason stop, toolgate reads none).
t0=$(now_ms)
req delayed /v1/chat/completions "$chat"
took=$(($(now_ms) - t0))
check "delay: at least 300 ms (took $took)" test "$took" -ge 300
eq "delay: an answer without calls" "$(jq -r '.choices[0].finish_reason + " " + .choices[0].message.content + " " + (.choices[0].message | has("tool_calls") | tostring)' delayed.out)" \
  "stop All done. false"
eq "delay: toolgate reads no call" "$(calls delayed.out)" ""

# A body that is not JSON: 400 in the provider's shape; an unknown path:
# 404; past the script's end: 500 "script exhausted". Each takes a number.
req badjson /v1/messages '{"model": '
eq "bad JSON: 400, Anthropic's shape" "$(cat badjson.code) $(jq -r .type+.error.type badjson.out)" "400 errorinvalid_request_error"
req nowhere /v2/embeddings "$chat"
eq "unknown path: 404 JSON" "$(cat nowhere.code) $(jq -r '.error.message' nowhere.out)" "404 no such endpoint: POST /v2/embeddings"
req exhausted /v1/responses "$resp"
eq "past the script: 500" "$(cat exhausted.code)" 500
contains "past the script: says so" "$(jq -r .error.message exhausted.out)" "script exhausted"

# --- The log: one line per request, numbered, no key in it.
kill "$PID"
wait "$PID" 2>/dev/null || true
eq "log: every request numbered in order" "$(jq -r .n log.jsonl | tr '\n' ' ')" "$(seq -s ' ' 0 24) "
eq "log: no key" "$(grep -c SECRET log.jsonl || true)" 0
eq "log: authorization redacted" "$(jq -r 'select(.n == 0).headers.authorization' log.jsonl)" "<redacted len=26>"
eq "log: x-api-key redacted" "$(jq -r 'select(.n == 2).headers["x-api-key"]' log.jsonl)" "<redacted len=18>"
eq "log: x-goog-api-key redacted" "$(jq -r 'select(.n == 3).headers["x-goog-api-key"]' log.jsonl)" "<redacted len=13>"
eq "log: a key in the query redacted" "$(jq -r 'select(.n == 7).path' log.jsonl)" \
  "/v1beta/models/gemini-test:streamGenerateContent?alt=sse&key=%3Credacted+len%3D8%3E"
eq "log: the body, parsed" "$(jq -c 'select(.n == 4).body.stream_options' log.jsonl)" '{"include_usage":true}'
eq "log: a body that is not JSON is null, its length kept" "$(jq -c 'select(.n == 22) | [.body, .raw_len]' log.jsonl)" '[null,10]'
eq "the server is gone after SIGTERM" "$(kill -0 "$PID" 2>/dev/null && echo alive || echo gone)" gone

# --- --strict: a conversation with a dangling call is a 400, as the real
# APIs answer it; --stdin-eof: the end of stdin stops the server.
echo '{"turns": [{"calls": [{"id": "call_r", "name": "echo", "arguments": {"text": "r"}}]}], "repeat_last": true}' >again.json
# The server's stdin is a FIFO this shell holds open (fd 7, which the
# server must not inherit, or its stdin would never end).
mkfifo in.fifo
exec 7<>in.fifo
start_server strict.jsonl --script again.json --strict --stdin-eof <in.fifo 7>&-
asked='{"role": "assistant", "content": null, "tool_calls": [{"id": "call_r", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":\"r\"}"}}]}'
req s0 /v1/chat/completions "$chat"
req s1 /v1/chat/completions "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, $asked, {\"role\": \"tool\", \"tool_call_id\": \"call_r\", \"content\": \"r\"}]}"
req s2 /v1/chat/completions "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, $asked, {\"role\": \"user\", \"content\": \"go on\"}]}"
req s3 /v1/messages '{"model": "m", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_x", "name": "echo", "input": {}}]}, {"role": "user", "content": "and?"}]}'
eq "strict: a well-formed first request answered" "$(cat s0.code) $(jq -r '.choices[0].message.tool_calls[0].id' s0.out)" "200 call_r"
eq "strict: a conversation with every call answered; repeat_last: the last turn again" \
  "$(cat s1.code) $(jq -r '.choices[0].message.tool_calls[0].id' s1.out)" "200 call_r"
eq "strict: a dangling call is a 400" "$(cat s2.code) $(jq -r .error.type s2.out)" "400 invalid_request_error"
contains "strict: naming the call" "$(jq -r .error.message s2.out)" '"call_r" has no role:"tool" message after it'
eq "strict: anthropic's shape" "$(cat s3.code) $(jq -r .error.type s3.out)" "400 invalid_request_error"
exec 7>&-
check "--stdin-eof: the server ends with its stdin" wait_for "$(tg_ms 10000)" bash -c "! kill -0 $PID 2>/dev/null"

# --- check_requests.mjs on the strict server's log: the dangling request
# fails it, the two before pass (with the script: the call sent in turn 0
# is in request 1).
cr() { set +e; node "$loop/check_requests.mjs" "$@" >cr.out 2>&1; echo $?; set -e; }
eq "check: a dangling call fails" "$(cr strict.jsonl openai)" 1
contains "check: says which" "$(cat cr.out)" 'request 2: messages[1]: tool call "call_r" has no role:"tool" message after it'
jq -c 'select(.n < 2)' strict.jsonl >good.jsonl
eq "check: a good conversation passes" "$(cr good.jsonl openai-chat --script again.json)" 0
contains "check: a one-line summary" "$(cat cr.out)" "check_requests: openai-chat: 2 requests, 1 tool calls in their conversations, 1 results, 2 calls sent in 2 turns carried on"
# request 1 without the call turn 0 sent (and its result): nothing dangles
# in it, but the call the server sent is gone.
jq -c 'if .n == 1 then .body.messages |= .[0:1] else . end' good.jsonl >dropped.jsonl
eq "check: a sent call dropped later fails (with the script)" "$(cr dropped.jsonl openai-chat --script again.json)" 1
contains "check: says which" "$(cat cr.out)" 'request 1: the call "call_r" (echo) the server sent in turn 0 is not in its conversation'
eq "check: without the script, the same log passes" "$(cr dropped.jsonl openai-chat)" 0
eq "check: the main log's anthropic requests, each a first message" "$(cr log.jsonl anthropic)" 0
contains "check: counted" "$(cat cr.out)" "check_requests: anthropic: 6 requests, 0 tool calls"
# with the script: they are not one conversation (each drops the calls
# answered before it)
eq "check: the main log is no conversation" "$(cr log.jsonl anthropic --script script.json)" 1
contains "check: says which" "$(cat cr.out)" 'request 6: the call "call_a" (echo) the server sent in turn 2 is not in its conversation'

# Hand-made logs of the other providers: good, dangling, a result without
# its call.
line() { jq -cn --argjson n "$1" --arg path "$2" --argjson body "$3" '{n: $n, method: "POST", path: $path, headers: {}, body: $body, raw_len: 1}'; }
R=/v1/responses
fc='{"type": "function_call", "call_id": "call_1", "name": "echo", "arguments": "{}"}'
fo='{"type": "function_call_output", "call_id": "call_1", "output": "x"}'
line 0 $R "{\"input\": [$fc, $fo]}" >resp_good.jsonl
line 0 $R "{\"input\": [$fc]}" >resp_dangling.jsonl
line 0 $R "{\"input\": [$fo]}" >resp_orphan.jsonl
eq "check responses: good" "$(cr resp_good.jsonl openai-responses)" 0
eq "check responses: dangling" "$(cr resp_dangling.jsonl openai-responses)" 1
contains "check responses: says so" "$(cat cr.out)" 'function_call "call_1" has no function_call_output'
eq "check responses: orphan" "$(cr resp_orphan.jsonl openai-responses)" 1
contains "check responses: says so" "$(cat cr.out)" 'a function_call_output for "call_1" with no function_call before it'
# chained with previous_response_id: the calls of that response count
line 0 $R '{"input": "hi"}' >resp_chain.jsonl
line 1 $R "{\"previous_response_id\": \"resp_tg0\", \"input\": [$fo]}" >>resp_chain.jsonl
echo '{"turns": [{"calls": [{"id": "call_1", "name": "echo", "arguments": {}}]}, {"text": "ok"}]}' >chain.json
eq "check responses: chained, with the script" "$(cr resp_chain.jsonl openai-responses --script chain.json)" 0
eq "check responses: chained, without the script" "$(cr resp_chain.jsonl openai-responses)" 1
A=/v1/messages
tu='{"role": "assistant", "content": [{"type": "text", "text": "t"}, {"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {}}]}'
tr_='{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}'
u='{"role": "user", "content": "hi"}'
line 0 $A "{\"messages\": [$u, $tu, $tr_]}" >anth_good.jsonl
line 0 $A "{\"messages\": [$u, $tu, $u]}" >anth_dangling.jsonl
line 0 $A "{\"messages\": [$u, $tu, $u, {\"role\": \"assistant\", \"content\": \"k\"}, $tr_]}" >anth_late.jsonl
line 0 $A "{\"messages\": [$u, $tu, {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"t\"}, {\"type\": \"tool_result\", \"tool_use_id\": \"toolu_1\", \"content\": \"x\"}]}]}" >anth_order.jsonl
eq "check anthropic: good" "$(cr anth_good.jsonl anthropic)" 0
eq "check anthropic: a tool_result after text" "$(cr anth_order.jsonl anthropic)" 1
contains "check anthropic: says so" "$(cat cr.out)" 'messages[2]: a tool_result after other content'
eq "check anthropic: dangling" "$(cr anth_dangling.jsonl anthropic)" 1
contains "check anthropic: says so" "$(cat cr.out)" 'messages[1]: tool_use "toolu_1" has no tool_result in the next message'
eq "check anthropic: a result not in the next message" "$(cr anth_late.jsonl anthropic)" 1
contains "check anthropic: says so" "$(cat cr.out)" 'messages[4]: a tool_result for "toolu_1", which the message before it does not call'
G=/v1beta/models/g:generateContent
mc='{"role": "model", "parts": [{"functionCall": {"name": "echo", "args": {}}}, {"functionCall": {"id": "fc_2", "name": "echo", "args": {}}}]}'
fr='{"role": "user", "parts": [{"functionResponse": {"name": "echo", "response": {"output": "x"}}}, {"functionResponse": {"id": "fc_2", "name": "echo", "response": {"output": "y"}}}]}'
fr_bad='{"role": "user", "parts": [{"functionResponse": {"name": "echo", "response": {"output": "x"}}}, {"functionResponse": {"id": "fc_9", "name": "echo", "response": {"output": "y"}}}]}'
line 0 $G "{\"contents\": [$u, $mc, $fr]}" | sed 's/"content": "hi"/"parts": [{"text": "hi"}]/' >gem_good.jsonl
line 0 $G "{\"contents\": [$mc, $fr_bad]}" >gem_bad.jsonl
eq "check gemini: good (by id, and by name without one)" "$(cr gem_good.jsonl gemini)" 0
eq "check gemini: a wrong id" "$(cr gem_bad.jsonl gemini)" 1
contains "check gemini: the stray result" "$(cat cr.out)" 'contents[1]: a functionResponse for "echo" (id "fc_9") with no functionCall'
contains "check gemini: the call left" "$(cat cr.out)" 'contents[0]: functionCall "echo" (id "fc_2") has no functionResponse'

# --- Bad scripts and arguments: exit 2 saying why.
echo '{"turns": [{"status": 200}]}' >bad1.json
set +e
node "$loop/model_server.mjs" --script bad1.json >/dev/null 2>bad1.err
rc=$?
set -e
eq "a bad script: exit 2" "$rc" 2
contains "a bad script: says where" "$(cat bad1.err)" 'turns[0]: "status" must be an HTTP error status (400..599)'
set +e
node "$loop/model_server.mjs" --script script.json --port 99999 >/dev/null 2>bad2.err
rc=$?
set -e
eq "a bad port: exit 2" "$rc" 2
eq "check: an unknown provider is a usage error" "$(cr log.jsonl cohere)" 2
finish
