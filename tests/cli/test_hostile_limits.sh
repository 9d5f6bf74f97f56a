#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The small holes of issue 14, item 10, each as a class:
#   - every numeric option or time that overflows is a usage error (exit 2)
#     saying so, never "out of memory" (exit 4): --since in history and
#     stats, --limit, --timeout, --parallel, artifact --offset/--length and
#     head's count; configuration numbers are configuration errors (3) and
#     take 1e3 as the integer JSON Schema says it is;
#   - input past a size limit is bad input (exit 2): an event stream line,
#     or one event's data, over 64 MiB;
#   - a call refused ARGUMENTS_TOO_LARGE leaves a journal row of its first
#     1 KiB and its size, not its arguments twice (arguments as a string and
#     as an object);
#   - ids and tool names have a limit (256 bytes) in every format (toolgate,
#     openai-chat, anthropic, mcp, a stream): a longer one ends its call
#     MALFORMED_CALL with a message quoting a bounded prefix, the others
#     run, and nothing big is journaled;
#   - an integer argument given as 1e2 is read as 100 by every built-in
#     (read_file, grep, the artifact tools), as the schema accepted it;
#   - a tool named like a built-in is refused naming its key.
source "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: the sqlite3 command is needed (scripts/deps.sh installs it)" >&2; exit 1; }
mkdir ws
seq 1 300 >ws/lines.txt
cat >toolgate.json <<'JSON'
{"workspace": "ws", "journal": "journal.db", "spool": {"dir": "spool", "inline_max_bytes": 600},
 "sandbox": {"mode": "off"}, "builtin_tools": ["read_file", "list_dir", "grep"], "policy": null}
JSON
# status DESCRIPTION WANT COMMAND...: exit status and stderr in err.txt
status() {
  local d=$1 want=$2; shift 2
  local st=0; "$@" >out.txt 2>err.txt || st=$?
  eq "$d: exit status" "$st" "$want"
  if grep -qi "out of memory" err.txt; then fail "$d: says out of memory: $(cat err.txt)"; else pass; fi
}

# ------------------------------------------------ numbers that overflow
printf '{"id":"r1","tool":"list_dir","args":{}}\n' >one.jsonl
"$TOOLGATE" run one.jsonl >/dev/null
for cmd in history stats; do
  for since in 99999999999999999999 99999999999999999999.5 1e400 -5 ''; do
    status "$cmd --since '$since'" 2 "$TOOLGATE" "$cmd" --since "$since"
  done
  status "$cmd --since 2^64" 2 "$TOOLGATE" "$cmd" --since 18446744073709551616
  contains "$cmd --since 2^64 says why" "$(cat err.txt)" "out of range"
  status "$cmd --since of 100 KB" 2 "$TOOLGATE" "$cmd" --since "$(head -c 100000 /dev/zero | tr '\0' 9)"
  [ "$(wc -c <err.txt)" -lt 400 ] && pass || fail "$cmd: a long --since is quoted whole ($(wc -c <err.txt) bytes)"
  contains "$cmd: the quote says the size" "$(cat err.txt)" "(100000 bytes)"
done
status "history --since in range" 0 "$TOOLGATE" history --since 1700000000
status "history --limit 2^64" 2 "$TOOLGATE" history --limit 18446744073709551616
status "history --limit -1" 2 "$TOOLGATE" history --limit -1
status "run --timeout 2^64" 2 "$TOOLGATE" run --timeout 18446744073709551616 one.jsonl
status "run --parallel 99999999999999999999" 2 "$TOOLGATE" run --parallel 99999999999999999999 one.jsonl
status "run --timeout 1e3 (not a whole number)" 2 "$TOOLGATE" run --timeout 1e3 one.jsonl
printf 'stored text\n' >art.txt
art=$("$TOOLGATE" artifact store art.txt | jq -r .id)
status "artifact read --offset 2^64" 2 "$TOOLGATE" artifact read "$art" --offset 18446744073709551616
status "artifact read --length 2^64" 2 "$TOOLGATE" artifact read "$art" --length 18446744073709551616
status "artifact head 2^64 lines" 2 "$TOOLGATE" artifact head "$art" 18446744073709551616
status "artifact grep --max 2^64" 2 "$TOOLGATE" artifact grep "$art" x --max 18446744073709551616
# configuration numbers: errors name the key (3); 1e4 is 10000
for v in 99999999999999999999 1e300 -1e300 1.5 '"5"'; do
  printf '{"limits": {"timeout_ms": %s}}' "$v" >c.json
  status "limits.timeout_ms $v" 3 "$TOOLGATE" tools --config c.json
done
printf '{"limits": {"timeout_ms": 1e4, "max_args_bytes": 2.048e3}, "tools": [{"name": "t", "command": ["true"], "timeout_ms": 5e2}]}' >c.json
status "integral reals in the configuration" 0 "$TOOLGATE" tools --config c.json
# hooks.c reads hooks.timeout_ms again: 1e3 must be its 1000 ms, not the 5 s default
mkdir -p ws/hooks
printf '#!/bin/sh\ncat >/dev/null\nsleep 30\necho "{\\"decision\\":\\"allow\\"}"\n' >ws/hooks/slow
chmod +x ws/hooks/slow
jq '.hooks = {"timeout_ms": 1e3, "before": [["./hooks/slow"]]}' toolgate.json >hook.json
printf '{"id":"h1","tool":"list_dir","args":{}}\n' >h.jsonl
"$TOOLGATE" run --config hook.json --no-journal h.jsonl >h.out 2>/dev/null
contains "hooks.timeout_ms 1e3 is 1000 ms" "$(jq -r .payload.denied.reason h.out)" "timed out after 1000 ms"

# ---------------------------------------------- an event stream too big
python3 - <<'PY'
import json
chunk = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [
    {"index": 0, "id": "call_1", "type": "function", "function": {"name": "list_dir", "arguments": "{}"}}]}, "finish_reason": None}]}
ok = "data: " + json.dumps(chunk) + "\n\n"
with open("line.sse", "w") as f:   # one line of 65 MiB
    f.write(ok + ": " + "c" * (65 << 20) + "\n\n")
with open("event.sse", "w") as f:  # one event of 65 lines of 1 MiB
    f.write(ok + "".join("data: " + "d" * (1 << 20) + "\n" for _ in range(65)) + "\n")
with open("fine.sse", "w") as f:
    f.write(ok + "data: [DONE]\n\n")
PY
status "an event stream line over 64 MiB" 2 "$TOOLGATE" run --no-journal line.sse
contains "the message names the limit" "$(cat err.txt)" "limit of 67108864 bytes"
status "an event over 64 MiB" 2 "$TOOLGATE" run --no-journal event.sse
status "the same from stdin" 2 "$TOOLGATE" run --no-journal - <line.sse
status "a stream within the limits runs" 0 "$TOOLGATE" run --no-journal fine.sse
eq "its call succeeded" "$(jq -r '.[0].content' out.txt | grep -c 'lines.txt' || true)" 1
rm -f line.sse event.sse

# ------------------------------------- ARGUMENTS_TOO_LARGE in the journal
python3 - <<'PY'
import json
big = "p" * (3 << 20)
chat = {"choices": [{"message": {"role": "assistant", "tool_calls": [
    {"id": "big_string", "type": "function", "function": {"name": "read_file", "arguments": json.dumps({"path": big})}},
    {"id": "small", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"lines.txt\", \"max_lines\": 2}"}}]}}]}
open("big_chat.json", "w").write(json.dumps(chat))
anth = {"role": "assistant", "content": [{"type": "tool_use", "id": "big_object", "name": "read_file", "input": {"path": big}}]}
open("big_anthropic.json", "w").write(json.dumps(anth))
PY
rm -f journal.db*
"$TOOLGATE" run big_chat.json >out.txt 2>err.txt || fail "big args (chat): exit $?"
"$TOOLGATE" run big_anthropic.json >out2.txt 2>err.txt || fail "big args (anthropic): exit $?"
q() { sqlite3 -readonly journal.db "$1"; }
eq "both big calls refused" "$(jq -r '.[] | select(.tool_call_id=="big_string").content' out.txt | grep -c ARGUMENTS_TOO_LARGE)" 1
eq "the small call ran" "$(jq -r '.[] | select(.tool_call_id=="small").content' out.txt | grep -c '^1$')" 1
eq "rows keep no arguments over the limit" "$(q "SELECT count(*) FROM call_rows WHERE args IS NULL AND length(args_raw) <= 1024 AND args_bytes > 3000000")" 2
eq "the size is the arguments' size" "$(q "SELECT args_bytes FROM call_rows WHERE id='big_string'")" \
  "$(python3 -c 'import json; print(len(json.dumps({"path": "p" * (3 << 20)})))')"
eq "the small call keeps its arguments" "$(q "SELECT args IS NOT NULL AND args_bytes IS NULL FROM call_rows WHERE id='small'")" 1
[ "$(q "SELECT sum(length(args_raw)) + sum(ifnull(length(args), 0)) FROM call_rows")" -lt 4000 ] && pass || fail "the journal holds the big arguments"
"$TOOLGATE" show big_string >show.json
eq "show: args null" "$(jq -r .call.args show.json)" null
eq "show: args_bytes" "$(jq -r .call.args_bytes show.json)" "$(q "SELECT args_bytes FROM call_rows WHERE id='big_string'")"
contains "show: args_raw is the start" "$(jq -r .call.args_raw show.json)" '{"path": "ppp'

# ------------------------------------------------ ids and tool names
python3 - <<'PY'
import json
huge = "n" * (10 << 20)
long_id = "i" * 300
ok_id = "a" * 256
calls = [
    {"id": "t1", "tool": huge, "args": {}},
    {"id": long_id, "tool": "list_dir", "args": {}},
    {"id": ok_id, "tool": "list_dir", "args": {}},
    {"id": "t4", "tool": "list_dir", "args": {}},
]
open("names.jsonl", "w").write("".join(json.dumps(c) + "\n" for c in calls))
chat = {"choices": [{"message": {"role": "assistant", "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": huge, "arguments": "{}"}},
    {"id": long_id, "type": "function", "function": {"name": "list_dir", "arguments": "{}"}},
    {"id": "c3", "type": "function", "function": {"name": "list_dir", "arguments": "{}"}}]}}]}
open("names_chat.json", "w").write(json.dumps(chat))
anth = {"role": "assistant", "content": [
    {"type": "tool_use", "id": "u1", "name": huge, "input": {}},
    {"type": "tool_use", "id": "u2", "name": "list_dir", "input": {}}]}
open("names_anthropic.json", "w").write(json.dumps(anth))
mcp = [{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": huge, "arguments": {}}},
       {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_dir", "arguments": {}}}]
open("names_mcp.json", "w").write(json.dumps(mcp))
def chunk(tc, finish=None):
    return "data: " + json.dumps({"id": "x", "object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": {"tool_calls": [tc]} if tc else {}, "finish_reason": finish}]}) + "\n\n"
sse = chunk({"index": 0, "id": "s1", "type": "function", "function": {"name": "n" * 100000, "arguments": "{}"}}) + \
      chunk({"index": 1, "id": "s2", "type": "function", "function": {"name": "list_dir", "arguments": "{}"}}) + \
      chunk(None, "tool_calls") + "data: [DONE]\n\n"
open("names.sse", "w").write(sse)
PY
rm -f journal.db*
status "names: toolgate" 0 "$TOOLGATE" run names.jsonl
eq "names: outcomes" "$(jq -r '[.outcome, ((.payload | objects | .error.code) // "-")] | join(":")' out.txt | tr '\n' ' ')" \
  "error:MALFORMED_CALL error:MALFORMED_CALL success:- success:- "
[ "$(wc -c <out.txt)" -lt 20000 ] && pass || fail "names: the results are big ($(wc -c <out.txt) bytes)"
contains "names: the message quotes a bounded prefix with the size" "$(jq -r 'select(.id=="t1").payload.error.message' out.txt)" "…($((10 << 20)) bytes)"
eq "names: the tool name is kept to 256 bytes" "$(jq -r 'select(.id=="t1").tool | length' out.txt)" 256
eq "names: a 256-byte id is fine" "$(jq -r 'select(.id|length == 256) | select(.id|startswith("a")).outcome' out.txt)" success
[ "$(stat -c %s journal.db)" -lt 1000000 ] && pass || fail "names: the journal is big ($(stat -c %s journal.db) bytes)"
eq "names: journal rows are cut" "$(sqlite3 -readonly journal.db 'SELECT max(length(tool)) FROM call_rows')" 256
for f in names_chat.json names_anthropic.json names_mcp.json names.sse; do
  status "names: $f" 0 "$TOOLGATE" run --no-journal "$f"
  # (mcp shows a failed call's code twice: in its text and in its
  # structuredContent, the payload convention)
  eq "names: $f: one MALFORMED_CALL per bad call" "$(grep -o MALFORMED_CALL out.txt | wc -l)" "$(case $f in names_chat.json|names_mcp.json) echo 2 ;; *) echo 1 ;; esac)"
  contains "names: $f: the good call ran" "$(cat out.txt)" "lines.txt"
  [ "$(wc -c <out.txt)" -lt 20000 ] && pass || fail "names: $f: the results are big ($(wc -c <out.txt) bytes)"
done
status "--caller over the limit" 2 "$TOOLGATE" run --no-journal --caller "$(head -c 300 /dev/zero | tr '\0' c)" one.jsonl
contains "--caller says the limit" "$(cat err.txt)" "limit of 256 bytes"

# ------------------------------------------- integers written as 1e2
rm -f journal.db*
cat >ints.jsonl <<'JSONL'
{"id":"r1","tool":"read_file","args":{"path":"lines.txt","max_lines":1e2}}
{"id":"r2","tool":"read_file","args":{"path":"lines.txt","offset_line":1.5e2,"max_lines":2.0}}
{"id":"r3","tool":"read_file","args":{"path":"lines.txt","max_bytes":1e1}}
{"id":"r4","tool":"read_file","args":{"path":"lines.txt","max_lines":1.5}}
{"id":"g1","tool":"grep","args":{"pattern":"^1","path":"lines.txt","max_matches":3e0}}
{"id":"big","tool":"read_file","args":{"path":"lines.txt"}}
JSONL
"$TOOLGATE" run ints.jsonl >out.txt 2>err.txt || fail "ints: exit $?"
eq "max_lines 1e2 reads 100 lines" "$(jq -j 'select(.id=="r1").payload' out.txt | wc -l)" 100
eq "offset_line 1.5e2, max_lines 2.0" "$(jq -j 'select(.id=="r2").payload' out.txt | tr '\n' ' ')" "150 151 "
eq "max_bytes 1e1" "$(jq -r 'select(.id=="r3").outcome' out.txt)" success
eq "1.5 is not an integer" "$(jq -r 'select(.id=="r4").payload.error.code' out.txt)" INVALID_ARGUMENTS
eq "grep max_matches 3e0" "$(jq -r 'select(.id=="g1").payload' out.txt | grep -c '^lines.txt:')" 3
art=$(jq -r 'select(.id=="big").artifact.id' out.txt)
[ -n "$art" ] && [ "$art" != null ] && pass || fail "the whole file was spooled"
printf '{"id":"a1","tool":"artifact_head","args":{"artifact":"%s","lines":2e0}}\n{"id":"a2","tool":"artifact_read","args":{"artifact":"%s","line":1e1,"lines":3.0}}\n{"id":"a3","tool":"artifact_grep","args":{"artifact":"%s","pattern":"^29","max_matches":2e0,"context":0.0}}\n' "$art" "$art" "$art" >arts.jsonl
"$TOOLGATE" run arts.jsonl >out.txt 2>err.txt || fail "artifact tools: exit $?"
eq "artifact_head lines 2e0" "$(jq -r 'select(.id=="a1").outcome' out.txt)" success
eq "artifact_read line 1e1, lines 3.0" "$(jq -j 'select(.id=="a2").payload.text' out.txt | tr '\n' ' ')" "10 11 12 "
eq "artifact_grep max_matches 2e0" "$(jq -r 'select(.id=="a3").payload.matches | length' out.txt)" 2

# ------------------------------------------ a name taken by a built-in
jq '.tools = [{"name": "a", "command": ["true"]}, {"name": "b", "command": ["true"]},
              {"name": "c", "command": ["true"]}, {"name": "artifact_read", "command": ["true"]}]' toolgate.json >clash.json
status "a tool named like an artifact tool" 3 "$TOOLGATE" tools --config clash.json
contains "the error names the key" "$(cat err.txt)" "tools[3].name: a tool named 'artifact_read' is already registered (a built-in tool"
status "the same at run" 3 "$TOOLGATE" run --config clash.json one.jsonl
jq '.spool = null' clash.json >clash_nospool.json
status "without the spool the name is free" 0 "$TOOLGATE" tools --config clash_nospool.json
jq '.tools = [{"name": "read_file", "command": ["true"]}]' toolgate.json >clash2.json
status "a tool named like an enabled built-in" 3 "$TOOLGATE" tools --config clash2.json
contains "that error names the key" "$(cat err.txt)" "tools[0].name 'read_file' is the name of a built-in tool"

finish
