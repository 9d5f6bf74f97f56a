#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One call's bad bytes fail only that call: a turn of three calls whose
# second holds "\u0000", an unpaired surrogate or a byte that is not UTF-8
# in its arguments (a value, a key, deep inside) runs the other two and
# answers all three in order, the second MALFORMED_ARGUMENTS, in every
# format (Anthropic, Gemini, MCP, toolgate, OpenAI Chat and Responses with
# the bytes in the arguments string), whole and streamed; limits.repair
# leaves it alone; the journal keeps it and reads back. The same bytes in
# an id or a name refuse the turn (exit 2), naming the place.
source "$(dirname "$0")/lib.sh"
mkdir ws
cat >toolgate.json <<'JSON'
{"workspace": "ws", "limits": {"repair": true}, "policy": {"default": "allow"},
 "tools": [{"name": "echo", "command": ["/bin/sh", "-c", "echo \"$0\" >> ran.txt; echo \"$0\"", "{text}"],
            "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}}}]}
JSON

python3 - <<'PY'
import json
# The second call's arguments: the bytes in a value, a key, deep inside.
bad = {
    "nul": '{"text":"x\\u0000y"}',
    "high": '{"text":"\\ud800"}',
    "low-key": '{"\\udc00":"v","text":"t"}',
    "reversed-deep": '{"a":{"b":[1,{"c":["\\udc00\\ud800"]}]},"text":"t"}',
    "raw-byte": '{"text":"caf\xff"}',
}
good = ['{"text":"one"}', '{"text":"three"}']
def s(obj):  # the arguments string, the bytes in the outer string
    return '"' + obj.replace('"', '\\"') + '"'
shapes = {
    "anthropic": ('{"id":"msg","type":"message","role":"assistant","content":['
        '{"type":"tool_use","id":"c1","name":"echo","input":%s},'
        '{"type":"tool_use","id":"c2","name":"echo","input":%s},'
        '{"type":"tool_use","id":"c3","name":"echo","input":%s}],"stop_reason":"tool_use"}', False),
    "gemini": ('{"candidates":[{"content":{"role":"model","parts":['
        '{"functionCall":{"id":"c1","name":"echo","args":%s}},'
        '{"functionCall":{"id":"c2","name":"echo","args":%s}},'
        '{"functionCall":{"id":"c3","name":"echo","args":%s}}]}}]}', False),
    "mcp": ('[{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"echo","arguments":%s}},'
        '{"jsonrpc":"2.0","id":"c2","method":"tools/call","params":{"name":"echo","arguments":%s}},'
        '{"jsonrpc":"2.0","id":"c3","method":"tools/call","params":{"name":"echo","arguments":%s}}]', False),
    "toolgate": ('{"id":"c1","tool":"echo","args":%s}\n{"id":"c2","tool":"echo","args":%s}\n'
        '{"id":"c3","tool":"echo","args":%s}\n', False),
    "openai-chat": ('{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"tool_calls",'
        '"message":{"role":"assistant","content":null,"tool_calls":['
        '{"id":"c1","type":"function","function":{"name":"echo","arguments":%s}},'
        '{"id":"c2","type":"function","function":{"name":"echo","arguments":%s}},'
        '{"id":"c3","type":"function","function":{"name":"echo","arguments":%s}}]}}]}', True),
    "openai-responses": ('{"id":"r","object":"response","status":"completed","output":['
        '{"type":"function_call","id":"fc1","call_id":"c1","name":"echo","arguments":%s},'
        '{"type":"function_call","id":"fc2","call_id":"c2","name":"echo","arguments":%s},'
        '{"type":"function_call","id":"fc3","call_id":"c3","name":"echo","arguments":%s}]}', True),
}
def ev(obj, name=None):
    return ("event: %s\n" % name if name else "") + "data: " + obj + "\n\n"
def stream(kind, args):
    if kind == "anthropic":
        out = ev('{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[]}}', "message_start")
        for i, a in enumerate(args):
            out += ev('{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":"c%d","name":"echo","input":{}}}' % (i, i + 1), "content_block_start")
            for piece in (a[:1], a[1:]):
                out += ev('{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}' % (i, s(piece)), "content_block_delta")
            out += ev('{"type":"content_block_stop","index":%d}' % i, "content_block_stop")
        return out + ev('{"type":"message_stop"}', "message_stop")
    if kind == "anthropic-input":
        out = ev('{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[]}}', "message_start")
        for i, a in enumerate(args):
            out += ev('{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":"c%d","name":"echo","input":%s}}' % (i, i + 1, a), "content_block_start")
            out += ev('{"type":"content_block_stop","index":%d}' % i, "content_block_stop")
        return out + ev('{"type":"message_stop"}', "message_stop")
    if kind == "openai-chat":
        out = ""
        for i, a in enumerate(args):
            out += ev('{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":"c%d","type":"function","function":{"name":"echo","arguments":""}}]}}]}' % (i, i + 1))
            for piece in (a[:1], a[1:]):
                out += ev('{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}}]}' % (i, s(piece)))
        return out + ev('{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}') + "data: [DONE]\n\n"
    if kind == "openai-responses":
        out = ""
        for i, a in enumerate(args):
            out += ev('{"type":"response.output_item.added","output_index":%d,"item":{"type":"function_call","id":"fc%d","call_id":"c%d","name":"echo","arguments":""}}' % (i, i + 1, i + 1), "response.output_item.added")
            out += ev('{"type":"response.function_call_arguments.delta","output_index":%d,"item_id":"fc%d","delta":%s}' % (i, i + 1, s(a)), "response.function_call_arguments.delta")
            out += ev('{"type":"response.function_call_arguments.done","output_index":%d,"item_id":"fc%d","arguments":%s}' % (i, i + 1, s(a)), "response.function_call_arguments.done")
        return out
    out = ""  # gemini
    for i, a in enumerate(args):
        out += ev('{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"c%d","name":"echo","args":%s}}]}}]}' % (i + 1, a))
    return out
with open("cases.txt", "w") as list_:
    for fmt, (text, string) in shapes.items():
        for name, b in bad.items():
            args = [good[0], b, good[1]]
            fill = [s(a) if string else a for a in args]
            fn = "whole-%s-%s.in" % (fmt, name)
            open(fn, "w", encoding="utf-8", errors="surrogateescape").write(text % tuple(fill))
            list_.write(fn + "\n")
    for kind in ("anthropic", "anthropic-input", "openai-chat", "openai-responses", "gemini"):
        for name, b in bad.items():
            fn = "stream-%s-%s.sse" % (kind, name)
            open(fn, "w", encoding="utf-8", errors="surrogateescape").write(stream(kind, [good[0], b, good[1]]))
            list_.write(fn + "\n")
PY
# (python wrote \xff as U+00FF; make it the byte)
for f in *raw-byte*; do sed -i 's/\xc3\xbf/\xff/g' "$f"; done
check "the raw byte is a byte" grep -q $'\xff' whole-anthropic-raw-byte.in

n=0
while read -r f; do
  "$TOOLGATE" run --no-journal --to toolgate "$f" >out.jsonl 2>err.txt ||
    { fail "$f: exit $? $(cat err.txt)"; continue; }
  n=$((n + 1))
  eq "$f: three results in order" "$(jq -r .id out.jsonl | tr '\n' ' ')" "c1 c2 c3 "
  eq "$f: the others ran" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success error success "
  eq "$f: the second is MALFORMED_ARGUMENTS, not started, not repaired" \
    "$(jq -r 'select(.id=="c2") | .payload.error.code + " " + .execution + " " + (.repaired|tostring)' out.jsonl)" \
    "MALFORMED_ARGUMENTS not_started null"
  contains "$f: says what" "$(jq -r 'select(.id=="c2").payload.error.message' out.jsonl)" "no tool gets such bytes"
  eq "$f: the tool ran twice" "$(sort ws/ran.txt | tr '\n' ' ')" "one three "
  rm -f ws/ran.txt
done <cases.txt
check "every case ran" test "$n" -eq 55

# The provider's own rendering keeps the order too; the journal takes the
# calls and reads them back.
"$TOOLGATE" run whole-anthropic-nul.in >out.json
eq "anthropic rendering: three answers in order" \
  "$(jq -r '[.content[] | .tool_use_id + ":" + (.is_error|tostring)] | join(" ")' out.json)" \
  "c1:false c2:true c3:false"
"$TOOLGATE" run whole-openai-chat-high.in >out.json
eq "chat rendering: three answers in order" "$(jq -r '[.[].tool_call_id] | join(" ")' out.json)" "c1 c2 c3"
contains "chat rendering: the error" "$(jq -r '.[1].content' out.json)" "unpaired surrogate"
rm -f ws/ran.txt

check "history reads" "$TOOLGATE" history --limit 5
eq "history lists the bad call" \
  "$("$TOOLGATE" history --json --limit 200 | jq -r 'select(.id=="c2") | .outcome' | sort -u)" error

# Outside any call's arguments: the turn is refused, naming the place.
printf '%s' '{"type":"message","role":"assistant","content":[{"type":"tool_use","id":"c\u0000","name":"echo","input":{}},{"type":"tool_use","id":"c2","name":"echo","input":{"text":"a"}}]}' >id.json
set +e
"$TOOLGATE" run id.json >out.txt 2>err.txt; st=$?
set -e
eq "bad id: exit 2" "$st" 2
contains "bad id: where" "$(cat err.txt)" "the string at /content/0/id holds U+0000 (NUL), outside any call's arguments"
printf '%s\n' '{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"ec\ud800ho","args":{}}}]}}]}' >name.json
set +e
"$TOOLGATE" run name.json >out.txt 2>err.txt; st=$?
set -e
eq "bad name: exit 2" "$st" 2
contains "bad name: where" "$(cat err.txt)" "/candidates/0/content/parts/0/functionCall/name holds an unpaired surrogate"
check "nothing ran" test ! -e ws/ran.txt
finish
