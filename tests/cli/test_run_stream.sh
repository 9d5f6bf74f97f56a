#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Streamed turns (SSE transcripts) whose calls were written at once, their
# pieces taking turns and their arguments completing in another order:
# toolgate run answers in the order the model wrote the calls, for every
# provider, and a transcript cut while calls are open reports each of them
# cut while the complete one runs. Hostile streams: one from which nothing
# can be read exits 2 saying why (every example without its blank lines,
# only lifecycle events, an error, a bad shape) while an answer without
# calls prints none; nothing after the end of a stream runs, and what came
# after the end, or for a call already complete, is a warning on stderr.
source "$(dirname "$0")/lib.sh"
cp -r "$TG_SOURCE_DIR/examples/workspace/." . && rm -rf .toolgate
streams=$TG_SOURCE_DIR/tests/data/streams

# The ids in the order the transcript's whole response (interleaved.json)
# lists its calls.
"$TOOLGATE" run --no-journal --to toolgate "$streams/anthropic/interleaved.sse" >a.jsonl
eq "anthropic: written order" "$(jq -r .id a.jsonl | tr '\n' ' ')" \
  "toolu_01T1x1fJ34qAmk2tNTrN7Up6 toolu_01BpLSXLmFQ7KdGGzyuhFAyN toolu_01K3e5NbzD6gWYEPWuUMBVzR "
eq "anthropic: same as the whole message" "$(jq -r .id a.jsonl | tr '\n' ' ')" \
  "$(jq -r '.content[]|select(.type=="tool_use").id' "$streams/anthropic/interleaved.json" | tr '\n' ' ')"
"$TOOLGATE" run --no-journal "$streams/anthropic/interleaved.sse" >a.json
eq "anthropic: rendered in written order" "$(jq -r '[.content[].tool_use_id]|join(" ")' a.json)" \
  "toolu_01T1x1fJ34qAmk2tNTrN7Up6 toolu_01BpLSXLmFQ7KdGGzyuhFAyN toolu_01K3e5NbzD6gWYEPWuUMBVzR"

"$TOOLGATE" run --no-journal "$streams/openai-responses/interleaved.sse" >r.json
eq "responses: rendered in output order" "$(jq -r '[.[].call_id]|join(" ")' r.json)" \
  "$(jq -r '[.output[]|select(.type=="function_call").call_id]|join(" ")' "$streams/openai-responses/interleaved.json")"

"$TOOLGATE" run --no-journal "$streams/openai-chat/interleaved.sse" >c.json
eq "chat: rendered in index order" "$(jq -r '[.[].tool_call_id]|join(" ")' c.json)" \
  "$(jq -r '[.choices[0].message.tool_calls[].id]|join(" ")' "$streams/openai-chat/interleaved.json")"
eq "chat: no call made up" "$(jq length c.json)" 3

"$TOOLGATE" run --no-journal --to toolgate "$streams/openai-chat/interleaved_cut.sse" >cut.jsonl
eq "cut: two open calls cut, the closed one ran" \
  "$(jq -r .execution cut.jsonl | tr '\n' ' ')" "not_started not_started finished "
eq "cut: the open ones are MALFORMED_ARGUMENTS" \
  "$(jq -r 'select(.execution=="not_started").payload.error.code' cut.jsonl | tr '\n' ' ')" \
  "MALFORMED_ARGUMENTS MALFORMED_ARGUMENTS "
contains "cut: says where" "$(jq -r '.payload.error.message' cut.jsonl | head -1)" \
  "the stream ended inside the arguments of call"
# The README's example: two blocks written at once, the second stopping
# first, both run, answered in the written order.
"$TOOLGATE" run --no-journal --to toolgate \
  "$TG_SOURCE_DIR/examples/turns/anthropic-stream-interleaved.sse" >ex.jsonl
eq "example: written order, both ran" "$(jq -r '.tool + ":" + .outcome' ex.jsonl | tr '\n' ' ')" \
  "read_file:success list_dir:success "
# --- Malformed streams are errors, not empty successes.
turns=$TG_SOURCE_DIR/examples/turns
for ex in "$turns"/*.sse; do
  base=$(basename "$ex")
  set +e
  grep '^data:' "$ex" | "$TOOLGATE" run --no-journal - >out.json 2>err.txt
  rc=$?
  set -e
  eq "$base without blank lines: exit 2" "$rc" 2
  eq "$base without blank lines: nothing on stdout" "$(cat out.json)" ""
  contains "$base without blank lines: says where" "$(cat err.txt)" \
    "<stdin>: event 1 (ending on line "
  contains "$base without blank lines: says what" "$(cat err.txt)" \
    "its data is not JSON: end of file expected near '{' on line 2, column 1"
  contains "$base without blank lines: says why" "$(cat err.txt)" \
    "no blank line separates them"
done

# Answers without calls: no calls, exit 0, nothing on stderr.
cat >text.sse <<'SSE'
data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello."},"finish_reason":null}]}

data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: [DONE]

SSE
"$TOOLGATE" run --no-journal text.sse >out.json 2>err.txt
eq "text answer: no calls" "$(cat out.json)" "[]"
eq "text answer: nothing on stderr" "$(cat err.txt)" ""
cat >text-anth.sse <<'SSE'
event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[]}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi."}}

event: message_stop
data: {"type":"message_stop"}

SSE
"$TOOLGATE" run --no-journal --to toolgate text-anth.sse >out.jsonl 2>err.txt
eq "anthropic text answer: no calls" "$(cat out.jsonl)" ""
eq "anthropic text answer: nothing on stderr" "$(cat err.txt)" ""

# Streams that are no answer: exit 2, saying why.
bad() { # DESCRIPTION FORMAT NEEDLE PRINTF-FORMAT (the stream)
  local rc
  # shellcheck disable=SC2059
  printf "$4" >in.sse
  set +e
  "$TOOLGATE" run --no-journal --from "$2" - <in.sse >out.json 2>err.txt
  rc=$?
  set -e
  eq "$1: exit 2" "$rc" 2
  eq "$1: nothing on stdout" "$(cat out.json)" ""
  contains "$1: says why" "$(cat err.txt)" "$3"
}
bad "only lifecycle events" auto \
  "the openai-responses stream has no tool call, no text and no stop (2 events" \
  'event: response.created\ndata: {"type":"response.created","response":{}}\n\nevent: response.in_progress\ndata: {"type":"response.in_progress","response":{}}\n\n'
bad "an error instead of an answer" auto \
  "the anthropic stream carried an error and no tool call: Overloaded" \
  'event: message_start\ndata: {"type":"message_start","message":{}}\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
bad "unknown events, provider named" openai-chat \
  "the openai-chat stream has no tool call" \
  'data: {"kind":"unknown"}\n\ndata: {"kind":"unknown"}\n\n'
bad "unknown events, auto" auto "the stream has no event of a known provider" \
  'data: {"kind":"unknown"}\n\n'
bad "tool_calls not an array" auto \
  "event 1 (ending on line 2) of the openai-chat stream: choices[0].delta.tool_calls is not an array" \
  'data: {"choices":[{"delta":{"tool_calls":{"index":0}}}]}\n\n'
bad "data that is JSON but no object" auto "event 2 (ending on line 4)" \
  'data: {"choices":[{"delta":{"content":"x"}}]}\n\ndata: [1,2]\n\n'
bad "two events run together" auto "near '{' on line 4, column 1" \
  'data: {"choices":[{"delta":{"content":"x"}}]}\n\ndata: {"choices":[]}\ndata: {"choices":[]}\n\n'
bad "a cut stream that said nothing" anthropic \
  "the anthropic stream has no tool call, no text and no stop (1 event" \
  'event: message_start\ndata: {"type":"message_start","message":{}}\n\n'

# --- Nothing after the end of a stream runs.
# Each example with a call of its own provider after its end: the same
# calls run, and stderr says what was ignored.
after_end() { # EXAMPLE END-NAME EVENTS-TO-APPEND
  local base
  base=$(basename "$1")
  "$TOOLGATE" run --no-journal --to toolgate "$1" >before.jsonl
  { cat "$1"; printf '%s' "$3"; } >after.sse
  "$TOOLGATE" run --no-journal --to toolgate after.sse >after.jsonl 2>err.txt
  eq "$base + events after the end: the same calls ran" \
    "$(jq -r '.id + ":" + .outcome' after.jsonl | tr '\n' ' ')" \
    "$(jq -r '.id + ":" + .outcome' before.jsonl | tr '\n' ' ')"
  check "$base + events after the end: the evil call did not run" \
    bash -c '! grep -q evil after.jsonl'
  contains "$base + events after the end: warned" "$(cat err.txt)" \
    "toolgate: after.sse: warning: "
  contains "$base + events after the end: names the end" "$(cat err.txt)" \
    "after the end of the stream ($2 on line"
}
chat_evil='data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":7,"id":"call_evil","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"evil.txt\",\"content\":\"x\"}"}}]},"finish_reason":"tool_calls"}]}

'
anth_evil='event: content_block_start
data: {"type":"content_block_start","index":9,"content_block":{"type":"tool_use","id":"toolu_evil","name":"write_file","input":{"path":"evil.txt","content":"x"}}}

event: content_block_stop
data: {"type":"content_block_stop","index":9}

'
resp_evil='event: response.output_item.done
data: {"type":"response.output_item.done","output_index":9,"item":{"type":"function_call","id":"fc_evil","call_id":"call_evil","name":"write_file","arguments":"{\"path\":\"evil.txt\",\"content\":\"x\"}"}}

'
after_end "$turns/openai-chat-stream.sse" "data: [DONE]" "$chat_evil"
after_end "$turns/anthropic-stream.sse" "message_stop" "$anth_evil"
after_end "$turns/anthropic-stream-interleaved.sse" "message_stop" "$anth_evil"
after_end "$turns/openai-responses-stream.sse" "response.completed" "$resp_evil"
# A proxy's [DONE] after another provider's end says nothing more.
{ cat "$turns/anthropic-stream.sse"; printf 'data: [DONE]\n\n'; } >done.sse
"$TOOLGATE" run --no-journal --to toolgate done.sse >out.jsonl 2>err.txt
eq "[DONE] after message_stop: no warning" "$(cat err.txt)" ""
check "nothing wrote evil.txt" test ! -e evil.txt

# --- A call that came out is frozen: bytes for it that come later are
# ignored, and said.
cat >writes-on.sse <<'SSE'
data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_ls","type":"function","function":{"name":"list_dir","arguments":"{\"path\":\"notes\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_read","type":"function","function":{"name":"read_file","arguments":"{\"path\":"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":", \"more\": 1}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"README.txt\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

SSE
"$TOOLGATE" run --no-journal --to toolgate writes-on.sse >out.jsonl 2>err.txt
eq "writes on: both calls ran as they came out" \
  "$(jq -r '.id + ":" + .outcome' out.jsonl | tr '\n' ' ')" \
  "call_ls:success call_read:success "
eq "writes on: the warning" "$(cat err.txt)" \
  "toolgate: writes-on.sse: warning: call call_ls was complete when 1 more piece for it arrived (12 bytes of arguments, the first on line 5): ignored, the call stands as it was complete"
# The README's examples.
(cd "$WORK" && "$TOOLGATE" run --no-journal --to toolgate \
  "$turns/openai-chat-stream-writes-on.sse" >ex.jsonl 2>err.txt)
eq "example writes on: both ran" "$(jq -r '.tool + ":" + .outcome' ex.jsonl | tr '\n' ' ')" \
  "list_dir:success read_file:success "
contains "example writes on: warned" "$(cat err.txt)" \
  "warning: call call_ls_Q8vN2hTk4R was complete when 1 more piece for it arrived (13 bytes of arguments, the first on line 11)"
"$TOOLGATE" run --no-journal --to toolgate "$turns/openai-chat-stream-after-done.sse" >ex.jsonl 2>err.txt
eq "example after [DONE]: the write did not run" "$(jq -r .tool ex.jsonl | tr '\n' ' ')" \
  "list_dir grep read_file "
contains "example after [DONE]: warned" "$(cat err.txt)" \
  "warning: 2 events after the end of the stream (data: [DONE] on line 65) were ignored, the first on line 67"
# policy check reads the turn the same way, and says so too.
"$TOOLGATE" policy check writes-on.sse >/dev/null 2>err.txt
contains "policy check: the warning" "$(cat err.txt)" "warning: call call_ls was complete"

finish
