#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Streamed turns (SSE transcripts) whose calls were written at once, their
# pieces taking turns and their arguments completing in another order:
# toolgate run answers in the order the model wrote the calls, for every
# provider, and a transcript cut while calls are open reports each of them
# cut while the complete one runs.
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
finish
