#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# limits.repair never completes cut arguments: realistic calls (write_file
# with multi-line content, nested objects, numbers, escapes, Unicode) cut at
# every character, sent whole (toolgate JSON Lines and an OpenAI Chat
# response) and streamed (OpenAI Chat and Anthropic SSE cut after every
# event and inside it), all end MALFORMED_ARGUMENTS without running, saying
# they were cut; the whole calls still run. A stream that ends inside
# arguments a repair could read (a trailing comma) stays the stream's cut.
source "$(dirname "$0")/lib.sh"
mkdir ws
cat >toolgate.json <<'JSON'
{"workspace": "ws", "journal": null, "limits": {"repair": true},
 "builtin_tools": ["write_file"],
 "policy": {"default": "allow"},
 "tools": [
  {"name": "calc", "command": ["/bin/sh", "-c", "echo \"$0\" >> ran.txt", "{name}"],
   "input_schema": {"type": "object",
     "properties": {"x": {"type": "number"}, "flag": {"type": "boolean"},
                    "name": {"type": "string"},
                    "y": {"type": "object", "properties": {"z": {"type": "array", "items": {"type": "integer"}}}}},
     "required": ["x", "y", "flag", "name"]}}
 ]}
JSON

# The arguments of the calls, as the model wrote them, and cut at every
# character (never inside a UTF-8 sequence: the documents carrying them
# must stay valid UTF-8; repair's unit test cuts bytes too).
python3 - <<'PY'
import json
write = json.dumps({"path": "a.md", "content":
    "# Title\n\nA \"quoted\" line,\ta tab, caf\u00e9 \u20ac \U0001F600 and C:\\tmp\n"
    "```sh\necho hi\n```\n"}, ensure_ascii=False)
calc = ('{"x": 12.5e1, "y": {"z": [1, -2, 300]}, "flag": true, '
        '"name": "caf\\u00e9 \\ud83d\\ude00 \u20ac"}')
calls = [("write_file", "w", write), ("calc", "c", calc)]
with open("whole.jsonl", "w") as f, open("chat.json", "w") as g:
    tool_calls = []
    for tool, tag, args in calls:
        # (not from 0: empty arguments stand for {}, not a cut)
        for n in range(1, len(args) + 1):
            cid = "%s-%03d" % (tag, n) if n < len(args) else tag + "-whole"
            f.write(json.dumps({"id": cid, "tool": tool, "args": args[:n]},
                               ensure_ascii=False) + "\n")
            tool_calls.append({"id": cid, "type": "function",
                               "function": {"name": tool, "arguments": args[:n]}})
    json.dump({"id": "chatcmpl-cut", "object": "chat.completion",
               "choices": [{"index": 0, "finish_reason": "tool_calls",
                            "message": {"role": "assistant", "content": None,
                                        "tool_calls": tool_calls}}]},
              g, ensure_ascii=False)

# Streams of one call, its arguments in pieces of 9 characters, cut after
# every event and in the middle of every event of the arguments.
def ev(obj, name=None):
    s = ("event: %s\n" % name if name else "") + "data: " + json.dumps(obj, ensure_ascii=False) + "\n\n"
    return s
def pieces(s):
    return [s[i:i + 9] for i in range(0, len(s), 9)]
def chat(tool, cid, args):
    head = [ev({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {
        "role": "assistant", "tool_calls": [{"index": 0, "id": cid, "type": "function",
        "function": {"name": tool, "arguments": ""}}]}}]})]
    body = [ev({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {
        "tool_calls": [{"index": 0, "function": {"arguments": p}}]}}]}) for p in pieces(args)]
    tail = [ev({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {},
        "finish_reason": "tool_calls"}]}), "data: [DONE]\n\n"]
    return head, body, tail
def anthropic(tool, cid, args):
    head = [ev({"type": "message_start", "message": {"id": "msg_1", "type": "message",
        "role": "assistant", "content": []}}, "message_start"),
        ev({"type": "content_block_start", "index": 0, "content_block": {
        "type": "tool_use", "id": cid, "name": tool, "input": {}}}, "content_block_start")]
    body = [ev({"type": "content_block_delta", "index": 0, "delta": {
        "type": "input_json_delta", "partial_json": p}}, "content_block_delta") for p in pieces(args)]
    tail = [ev({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            ev({"type": "message_stop"}, "message_stop")]
    return head, body, tail
n = 0
for kind, make in (("chat", chat), ("anthropic", anthropic)):
    for tool, tag, args in calls:
        head, body, tail = make(tool, tag + "-stream", args)
        with open("stream-%s-%s-whole.sse" % (kind, tag), "w") as f:
            f.write("".join(head + body + tail))
        # (not after the last piece: arguments that close as a JSON value
        # when the input ends are complete, as the README says)
        for k in range(len(body)):
            done = "".join(head + body[:k])
            with open("cut-%s-%s-%02d-after.sse" % (kind, tag, k), "w") as f:
                f.write(done)
            half = body[k][:len(body[k]) // 2]
            with open("cut-%s-%s-%02d-inside.sse" % (kind, tag, k), "w") as f:
                f.write(done + half)
# A stream cut after arguments that only lack a repairable trailing comma
# fix: the stream's cut wins.
head, body, tail = chat("calc", "c-comma", '{"x": 1, "y": {"z": []}, "flag": true, "name": "n",}')
with open("comma-cut.sse", "w") as f:
    f.write("".join(head + body))
with open("comma-whole.sse", "w") as f:
    f.write("".join(head + body + tail))
PY

# Whole documents: one result per call, only the whole ones ran.
for input in whole.jsonl chat.json; do
  "$TOOLGATE" run --to toolgate "$input" >out.jsonl
  total=$(jq -s length out.jsonl)
  eq "$input: one result per call" "$total" "$(grep -c . whole.jsonl)"
  eq "$input: only the whole calls succeed" \
    "$(jq -r 'select(.outcome=="success").id' out.jsonl | tr '\n' ' ')" "w-whole c-whole "
  eq "$input: every cut call is MALFORMED_ARGUMENTS, not started" \
    "$(jq -r 'select(.id|endswith("whole")|not) | .payload.error.code + " " + .execution' out.jsonl | sort -u)" \
    "MALFORMED_ARGUMENTS not_started"
  eq "$input: no cut call was repaired" "$(jq -r 'select(.repaired) | .id' out.jsonl)" ""
  eq "$input: every cut call says it was cut" \
    "$(jq -r 'select(.id|endswith("whole")|not) | .payload.error.message
              | test("were cut short: they end inside")' out.jsonl | sort -u)" true
  contains "$input: inside a number" "$(jq -r 'select(.id=="c-007").payload.error.message' out.jsonl)" \
    "inside a number at line 1, column 8"
  contains "$input: inside the content string" \
    "$(jq -r 'select(.id=="w-060").payload.error.message' out.jsonl)" "inside a string"
  eq "$input: the whole calc ran once" "$(cat ws/ran.txt)" "café 😀 €"
  eq "$input: write_file wrote the whole content only" "$(head -1 ws/a.md)" "# Title"
  eq "$input: content intact" "$(tail -2 ws/a.md | head -1)" "echo hi"
  rm -f ws/ran.txt ws/a.md
done

# Streams: the whole ones run; every cut one ends the stream's cut, not run.
for f in stream-*-whole.sse; do
  "$TOOLGATE" run --to toolgate "$f" >out.jsonl
  eq "$f: runs" "$(jq -r .outcome out.jsonl)" success
done
rm -f ws/ran.txt ws/a.md
cuts=0
for f in cut-*.sse; do
  "$TOOLGATE" run --to toolgate "$f" >out.jsonl
  cuts=$((cuts + 1))
  r=$(jq -r '.outcome + " " + .payload.error.code + " " + .execution' out.jsonl)
  eq "$f: cut" "$r" "error MALFORMED_ARGUMENTS not_started"
  contains "$f: the stream's word" "$(jq -r .payload.error.message out.jsonl)" \
    "the stream ended inside the arguments of call"
done
check "streams cut at many points" test "$cuts" -gt 40
eq "no cut stream ran calc" "$(cat ws/ran.txt 2>/dev/null)" ""
eq "no cut stream wrote a file" "$(find ws -type f -not -path '*/.toolgate/*')" ""

"$TOOLGATE" run --to toolgate comma-whole.sse >out.jsonl
eq "trailing comma, stream complete: repaired" "$(jq -c .repaired out.jsonl)" '["dropped trailing commas"]'
"$TOOLGATE" run --to toolgate comma-cut.sse >out.jsonl
eq "trailing comma, stream cut: the cut wins" \
  "$(jq -r '.payload.error.code + " " + (.repaired|tostring)' out.jsonl)" "MALFORMED_ARGUMENTS null"
contains "trailing comma, stream cut: says so" "$(jq -r .payload.error.message out.jsonl)" \
  "the stream ended inside the arguments"
finish
