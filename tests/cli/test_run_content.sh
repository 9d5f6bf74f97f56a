#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Structured and media results of command tools, end to end: "output":
# "mcp-content" (blocks checked and rendered in every format, the trust
# envelope around them, BAD_CONTENT naming the block, a spooled array), and
# "output_schema" (stdout parsed and checked: INVALID_OUTPUT with the
# violations, MALFORMED_OUTPUT, outputSchema and title in tools/list), with
# the journal keeping what was rendered.
source "$(dirname "$0")/lib.sh"

png=iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==
printf '[{"type":"text","text":"a red dot"},{"type":"image","data":"%s","mimeType":"image/png"}]' "$png" >dot.json
echo '[{"type":"text","text":"ok"},{"type":"image","data":"abc","mimeType":"image/png"}]' >badb64.json
echo '[{"type":"text","text":"ok"},{"type":"audio","data":"UklGRg=="}]' >nomime.json
echo '{"type":"text","text":"not an array"}' >object.json
echo '{"temp": 21.5, "unit": "C"}' >w_ok.json
echo '{"temp": "warm"}' >w_bad.json
echo 'sunny' >w_text.txt
cat >tg.json <<'JSON'
{"journal": ".tg/j.db", "builtin_tools": [], "spool": {"dir": ".tg/art", "inline_max_bytes": 4096},
 "tools": [
  {"name": "media", "command": ["/bin/cat", "--", "{file}"], "output": "mcp-content"},
  {"name": "weather", "title": "Weather", "command": ["/bin/cat", "--", "{file}"],
   "output_schema": {"type": "object", "properties": {"temp": {"type": "number"}, "unit": {"enum": ["C", "F"]}},
                     "required": ["temp"]}},
  {"name": "plain", "command": ["/bin/cat", "--", "{file}"]}
 ]}
JSON
call() { echo "{\"id\":\"$1\",\"tool\":\"$2\",\"args\":{\"file\":\"$3\"}}"; }
{ call m1 media dot.json; call m2 media badb64.json; call m3 media nomime.json; call m4 media object.json
  call w1 weather w_ok.json; call w2 weather w_bad.json; call w3 weather w_text.txt; call p1 plain dot.json; } >turn.jsonl

"$TOOLGATE" run --config tg.json --to toolgate turn.jsonl >rec.jsonl; rc=$?
eq "exit status" "$rc" 0
eq "outcomes" "$(jq -r .outcome rec.jsonl | tr '\n' ' ')" "success error error error success error error success "
eq "execution finished for all" "$(jq -r .execution rec.jsonl | sort -u)" finished
eq "content payload" "$(jq -c 'select(.id=="m1").payload.content[1].mimeType' rec.jsonl)" '"image/png"'
eq "content beside it" "$(jq -c 'select(.id=="m1")|.content==.payload.content' rec.jsonl)" true
eq "bad base64: code" "$(jq -r 'select(.id=="m2").payload.error.code' rec.jsonl)" BAD_CONTENT
contains "bad base64: names the block" "$(jq -r 'select(.id=="m2").payload.error.message' rec.jsonl)" '/1: "data" is not base64'
eq "bad base64: pointer" "$(jq -r 'select(.id=="m2").payload.error.details.path' rec.jsonl)" /1/data
eq "bad base64: stdout kept" "$(jq -r 'select(.id=="m2").payload.error.details.stdout' rec.jsonl)" "$(cat badb64.json)"
contains "missing field" "$(jq -r 'select(.id=="m3").payload.error.message' rec.jsonl)" '/1: missing "mimeType"'
contains "not an array" "$(jq -r 'select(.id=="m4").payload.error.message' rec.jsonl)" "must be a JSON array of MCP content blocks, not an object"
eq "structured payload" "$(jq -c 'select(.id=="w1").payload' rec.jsonl)" '{"temp":21.5,"unit":"C"}'
eq "invalid output" "$(jq -r 'select(.id=="w2").payload.error.code' rec.jsonl)" INVALID_OUTPUT
eq "violations" "$(jq -c 'select(.id=="w2").payload.error.details.violations|map(.path)' rec.jsonl)" '["/temp"]'
eq "malformed output" "$(jq -r 'select(.id=="w3").payload.error.code' rec.jsonl)" MALFORMED_OUTPUT
eq "text tool unchanged" "$(jq -r 'select(.id=="p1").payload' rec.jsonl)" "$(cat dot.json)"

# The check against the output_schema is recorded with the result, so the
# same call again (replayed from the journal) keeps its structuredContent.
eq "the check recorded" "$("$TOOLGATE" show --config tg.json w1 | jq -r .result.decisions.output_schema)" valid
"$TOOLGATE" run --config tg.json --to toolgate <(call w1 weather w_ok.json) >replay.jsonl
eq "the same call again: replayed" "$(jq -r .replayed replay.jsonl)" true
"$TOOLGATE" run --config tg.json --to mcp <(call w1 weather w_ok.json) >replay_mcp.json
eq "a replayed result keeps its structuredContent" "$(jq -c '.result.structuredContent' replay_mcp.json)" '{"temp":21.5,"unit":"C"}'

# Every format renders the blocks its way, in the trust envelope.
"$TOOLGATE" run --config tg.json --no-journal --to mcp <(call m1 media dot.json; call w1 weather w_ok.json) | jq -c ".[]" >mcp.jsonl
eq "mcp: blocks passed through" "$(jq -c 'select(.id=="m1").result.content[1:3]|map(.type)' mcp.jsonl)" '["text","image"]'
contains "mcp: envelope opens" "$(jq -r 'select(.id=="m1").result.content[0].text' mcp.jsonl)" '<tool_output_'
contains "mcp: envelope closes" "$(jq -r 'select(.id=="m1").result.content[3].text' mcp.jsonl)" '</tool_output_'
eq "mcp: no structuredContent for blocks" "$(jq -c 'select(.id=="m1").result.structuredContent' mcp.jsonl)" null
eq "mcp: structuredContent for the schema's tool" "$(jq -c 'select(.id=="w1").result.structuredContent' mcp.jsonl)" '{"temp":21.5,"unit":"C"}'
"$TOOLGATE" run --config tg.json --no-journal --to anthropic <(call m1 media dot.json) >an.json
eq "anthropic: image block" "$(jq -c '.content[0].content[2].source|{type,media_type}' an.json)" '{"type":"base64","media_type":"image/png"}'
"$TOOLGATE" run --config tg.json --no-journal --to openai-responses <(call m1 media dot.json) >rs.json
eq "responses: input_image" "$(jq -r '.[0].output[2].image_url' rs.json)" "data:image/png;base64,$png"
"$TOOLGATE" run --config tg.json --no-journal --to openai-chat <(call m1 media dot.json) >ch.json
contains "chat: placeholder" "$(jq -r '.[0].content' ch.json)" "[image: image/png, 70 bytes; not shown: this format cannot carry images]"
contains "chat: text kept" "$(jq -r '.[0].content' ch.json)" "a red dot"
"$TOOLGATE" run --config tg.json --no-journal --to gemini <(call m1 media dot.json) >gm.json
contains "gemini: placeholder" "$(jq -r '.parts[0].functionResponse.response.output' gm.json)" "not shown: this format cannot carry images"

# The journal keeps the blocks: show gives them back.
"$TOOLGATE" show --config tg.json m1 >show.json
eq "journal keeps the content" "$(jq -c '.result.content|map(.type)' show.json)" '["text","image"]'

# Past the inline limit the array is spooled whole; the result is its handle as one text block.
{ printf '[{"type":"text","text":"'; head -c 6000 /dev/zero | tr '\0' 'x'; printf '"}]'; } >big.json
"$TOOLGATE" run --config tg.json --no-journal --to toolgate <(call b1 media big.json) >big.out
eq "spooled: success" "$(jq -r .outcome big.out)" success
eq "spooled: one text block" "$(jq -r '.content|length' big.out)" 1
contains "spooled: the handle" "$(jq -r '.content[0].text' big.out)" "[output saved as artifact art_"
eq "spooled: artifact" "$(jq -r .artifact.bytes big.out)" "$(wc -c <big.json)"

# Definitions carry title and outputSchema.
"$TOOLGATE" tools --config tg.json --to mcp >tools.json
eq "title" "$(jq -r '.tools[]|select(.name=="weather").title' tools.json)" Weather
eq "outputSchema" "$(jq -c '.tools[]|select(.name=="weather").outputSchema.required' tools.json)" '["temp"]'

# Configuration errors name the key.
bad() {
  echo "{\"tools\":[{\"name\":\"t\",\"command\":[\"x\"],$1}]}" >bad.json
  "$TOOLGATE" tools --config bad.json >/dev/null 2>err.txt && fail "accepted: $1" || eq "exit 3: $1" "$?" 3
  contains "message: $1" "$(cat err.txt)" "$2"
}
bad '"output":"xml"' 'tools[0].output must be "text"'
bad '"output":"mcp-content","output_schema":{"type":"object"}' 'tools[0].output must be "json" (or left out) when the tool has an output_schema'
bad '"output_schema":{"type":"array"}' 'tools[0].output_schema must be a JSON Schema object whose "type" is "object"'
bad '"output_schema":{"type":"object","required":3}' 'tools[0].output_schema is not a valid JSON Schema at /required'
bad '"title":["x"]' 'tools[0].title must be a string'
# An output costly to check goes to the thread pool with the whole budget
# (limits.max_validation_steps), and past it ends SCHEMA_TOO_COSTLY.
jq -n '{a: [range(20000)]}' >many.json
jq -n '{a: ([range(20000)] + [null])}' >many_bad.json
for steps in 10000000 40000; do
  jq -n --argjson s "$steps" '{journal: null, builtin_tools: [], spool: {dir: ".tg/art", inline_max_bytes: 1000000},
    limits: {max_validation_steps: $s},
    tools: [{name: "w", command: ["/bin/cat", "--", "{file}"],
             output_schema: {type: "object", properties: {a: {type: "array",
               items: {anyOf: [{type: "string"}, {type: "number"}]}}}}}]}' >costly$steps.json
  "$TOOLGATE" run --config costly$steps.json --to toolgate <(call ok w many.json; call bad w many_bad.json) >costly$steps.out
done
eq "costly: valid" "$(jq -r 'select(.id=="ok").outcome' costly10000000.out)" success
eq "costly: invalid" "$(jq -r 'select(.id=="bad").payload.error.details.violations[0].path' costly10000000.out)" /a/20000
eq "costly: over the budget" "$(jq -r .payload.error.code costly40000.out | sort -u)" SCHEMA_TOO_COSTLY
finish
