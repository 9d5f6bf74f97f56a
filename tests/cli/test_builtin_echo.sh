#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The echo built-in (the tool the MCP benchmark measures): off by default,
# on when builtin_tools names it; returns its text unchanged, escapes
# decoded; its schema refuses a missing text and any other property; its
# definition carries the schema and annotations; a long text is spooled like
# any text output.
source "$(dirname "$0")/lib.sh"

"$TOOLGATE" tools >defaults.json
eq "not among the embedded defaults" "$(jq -r '[.tools[].name|select(.=="echo")]|length' defaults.json)" 0

echo '{"builtin_tools":["echo"],"journal":null}' >tg.json
printf '%s\n' \
  '{"id":"c1","tool":"echo","args":{"text":"hello"}}' \
  '{"id":"c2","tool":"echo","args":{"text":"a\"b\\n\u00e9\n\ud83d\ude00"}}' \
  '{"id":"c3","tool":"echo","args":{}}' \
  '{"id":"c4","tool":"echo","args":{"text":"x","y":1}}' \
  '{"id":"c5","tool":"echo","args":{"text":42}}' \
  '{"id":"c6","tool":"echo","args":{"text":""}}' >turn.jsonl
"$TOOLGATE" run --config tg.json --to toolgate turn.jsonl >out.jsonl; rc=$?
eq "exit status" "$rc" 0
eq "outcomes" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success success error error error success "
eq "plain text" "$(jq -c 'select(.id=="c1").payload' out.jsonl)" '"hello"'
eq "escapes decoded" "$(jq -c 'select(.id=="c2").payload' out.jsonl)" '"a\"b\\né\n😀"'
eq "missing text" "$(jq -r 'select(.id=="c3").payload.error.code' out.jsonl)" INVALID_ARGUMENTS
eq "extra property" "$(jq -r 'select(.id=="c4").payload.error.details[0].keyword' out.jsonl)" additionalProperties
eq "not a string" "$(jq -r 'select(.id=="c5").payload.error.details[0].keyword' out.jsonl)" type
eq "empty text" "$(jq -c 'select(.id=="c6").payload' out.jsonl)" '""'
eq "finished" "$(jq -r 'select(.id=="c1").execution' out.jsonl)" finished

"$TOOLGATE" tools --config tg.json >tools.json
eq "listed first" "$(jq -r '.tools[0].name' tools.json)" echo
eq "schema" "$(jq -c '.tools[0].inputSchema|{required,additionalProperties,t:.properties.text.type}' tools.json)" \
  '{"required":["text"],"additionalProperties":false,"t":"string"}'
eq "annotations" "$(jq -c '.tools[0].annotations' tools.json)" \
  '{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}'

# A text past the inline limit goes to the spool like any text output.
mkdir -p spooled
echo '{"builtin_tools":["echo"],"journal":null,"spool":{"dir":"spooled","inline_max_bytes":1024}}' >sp.json
long=$(head -c 3000 /dev/zero | tr '\0' 'x')
echo "{\"id\":\"big\",\"tool\":\"echo\",\"args\":{\"text\":\"$long\"}}" >big.jsonl
"$TOOLGATE" run --config sp.json --to toolgate big.jsonl >big.out
eq "spooled: success" "$(jq -r .outcome big.out)" success
eq "spooled: artifact size" "$(jq -r .artifact.bytes big.out)" 3000
finish
