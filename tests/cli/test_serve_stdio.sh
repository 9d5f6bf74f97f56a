#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_serve_stdio.sh - `toolgate serve --stdio` as an MCP client drives
# it, one conversation on a coprocess: initialize and version negotiation,
# tools/list, calls that succeed, fail, are refused and are unknown, many
# calls in flight at once answered by id, progress and log notifications
# of a running command, logging/setLevel, notifications/cancelled killing
# the tool's process (no response after it), a 2026-07-28 request carrying
# its version in _meta, protocol errors (batch, bad JSON, wrong id, unknown
# method, a request before initialize), the journal holding every call,
# and EOF on stdin as a clean shutdown that still answers a running call.
source "$(dirname "$0")/lib.sh"
source "$TG_SOURCE_DIR/tests/cli/serve_lib.sh"

FX=$TG_FIXTURES
mkdir -p ws
cat > toolgate.json <<EOF
{"workspace": "ws", "journal": ".toolgate/journal.db",
 "builtin_tools": ["list_dir"], "sandbox": {"mode": "off"},
 "tools": [
  {"name": "say", "input_schema": {"type": "object",
     "properties": {"text": {"type": "string"}}, "required": ["text"]},
   "command": ["/bin/echo", "{text}"]},
  {"name": "fail", "command": ["$FX/exit_code", "{code}"]},
  {"name": "guarded", "command": ["/bin/echo", "ran", "{what}"]},
  {"name": "secret", "command": ["/bin/echo", "secret"]},
  {"name": "pidsleep", "command": ["$FX/write_pid", "{file}", "{ms}"]},
  {"name": "chatty", "command": ["/bin/sh", "-c",
     "echo start; echo 'warning: careful' >&2; echo 'plain note' >&2; sleep 0.2; echo end"]}
 ],
 "policy": {"default": "allow", "rules": [{"tool": "fail", "args": {"code": {"equals": "99"}}, "decision": "deny", "reason": "99 is not allowed"},
   {"tool": "guarded", "decision": "ask", "reason": "guarded needs a yes"},
   {"tool": "secret", "caller": "mcp-client", "decision": "deny", "reason": "not for MCP clients"}]}}
EOF

coproc SRV { exec "$TOOLGATE" serve --stdio --trace trace.jsonl 2>server.err; }
SRVPID=$SRV_PID
IN=${SRV[1]}
OUT=${SRV[0]}
# read_noid: the next response without an id (a protocol error's)
read_noid() {
  local line
  while IFS= read -r -t "$(tg_s 20)" line <&"$OUT"; do
    if jq -e 'has("id") | not' <<<"$line" >/dev/null && jq -e 'has("method") | not' <<<"$line" >/dev/null; then
      printf '%s\n' "$line"
      return 0
    fi
    printf '%s\n' "$line" >>notes.jsonl
  done
  return 1
}

send '{"jsonrpc":"2.0","id":"early","method":"tools/list"}'
r=$(read_id '"early"')
eq "a request before initialize" "$(jq -c '.error.code' <<<"$r")" "-32600"

send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}'
r=$(read_id 1)
eq "negotiated version" "$(jq -r '.result.protocolVersion' <<<"$r")" "2025-06-18"
eq "server name" "$(jq -r '.result.serverInfo.name' <<<"$r")" "toolgate"
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'

send '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
r=$(read_id 2)
eq "tools listed by name" "$(jq -c '[.result.tools[].name] | (. == sort)' <<<"$r")" "true"
eq "every tool" "$(jq -c '[.result.tools[].name | select(. == "say" or . == "list_dir" or . == "chatty")]' <<<"$r")" '["chatty","list_dir","say"]'
eq "schema kept" "$(jq -c '.result.tools[] | select(.name == "say") | .inputSchema.required' <<<"$r")" '["text"]'
eq "a tool the caller may never run is not offered" "$(jq -c '[.result.tools[].name | select(. == "secret")]' <<<"$r")" '[]'
eq "one denied for some arguments is" "$(jq -c '[.result.tools[].name | select(. == "fail" or . == "guarded")]' <<<"$r")" '["fail","guarded"]'
send '{"jsonrpc":"2.0","id":"secret","method":"tools/call","params":{"name":"secret","arguments":{}}}'
r=$(read_id '"secret"')
eq "calling it anyway: denied" "$(jq -r '.result._meta["io.toolgate/result"].outcome' <<<"$r")" "denied"

send '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"say","arguments":{"text":"hello"}}}'
r=$(read_id 3)
eq "success is not an error" "$(jq -c '.result.isError' <<<"$r")" "false"
contains "the tool's output" "$(jq -r '.result.content[0].text' <<<"$r")" "hello"
eq "outcome in _meta" "$(jq -r '.result._meta["io.toolgate/result"].outcome' <<<"$r")" "success"

send '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fail","arguments":{"code":"3"}}}'
r=$(read_id 4)
eq "exit 3 is an error result" "$(jq -c '.result.isError' <<<"$r")" "true"
contains "the error says the status" "$(jq -r '.result.content[0].text' <<<"$r")" "exited with status 3"

send '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fail","arguments":{"code":"99"}}}'
r=$(read_id 5)
eq "denied by the policy" "$(jq -r '.result._meta["io.toolgate/result"].outcome' <<<"$r")" "denied"
contains "the reason" "$(jq -r '.result.content[0].text' <<<"$r")" "99 is not allowed"

send '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"send_email","arguments":{}}}'
r=$(read_id 6)
eq "unknown tool" "$(jq -c '.error.code' <<<"$r")" "-32602"

send '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"say","arguments":{"text":7}}}'
r=$(read_id 7)
contains "bad arguments" "$(jq -r '.result.content[0].text' <<<"$r")" "INVALID_ARGUMENTS"

# many in flight: sent together, each answered by its id
for i in $(seq 10 29); do
  send "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"say\",\"arguments\":{\"text\":\"n$i\"}}}"
done
for i in $(seq 10 29); do
  r=$(read_id "$i")
  contains "call $i answered with its own output" "$(jq -r '.result.content[0].text' <<<"$r")" "n$i"
done

# progress and log lines while a command runs
: >notes.jsonl
send '{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"chatty","_meta":{"progressToken":"tok"}}}'
r=$(read_id 40)
contains "chatty's output" "$(jq -r '.result.content[0].text' <<<"$r")" "end"
eq "progress notifications" "$(jq -s -c '[.[] | select(.method=="notifications/progress") | .params.progressToken] | unique' notes.jsonl)" '["tok"]'
eq "progress increases" "$(jq -s -c '[.[] | select(.method=="notifications/progress") | .params.progress] | (. == (sort | unique))' notes.jsonl)" "true"
eq "log levels of the lines" "$(jq -s -c '[.[] | select(.method=="notifications/message") | .params.level]' notes.jsonl)" '["warning","info"]'

send '{"jsonrpc":"2.0","id":41,"method":"logging/setLevel","params":{"level":"warning"}}'
r=$(read_id 41)
eq "setLevel answers {}" "$(jq -c '.result' <<<"$r")" "{}"
: >notes.jsonl
send '{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"chatty"}}'
read_id 42 >/dev/null
eq "only warning and above now" "$(jq -s -c '[.[] | select(.method=="notifications/message") | .params.level]' notes.jsonl)" '["warning"]'

# notifications/cancelled kills the tool's process group; no response
send '{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"pidsleep","arguments":{"file":"'"$WORK"'/pid","ms":"600000"}}}'
check "the tool started" wait_for "$(tg_ms 10000)" test -s "$WORK/pid"
pid=$(cat "$WORK/pid")
send '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":50,"reason":"user pressed stop"}}'
check "the tool's process is gone" wait_for "$(tg_ms 10000)" bash -c "! kill -0 $pid 2>/dev/null"
send '{"jsonrpc":"2.0","id":51,"method":"ping"}'
: >notes.jsonl
r=$(read_id 51)
eq "ping" "$(jq -c '.result' <<<"$r")" "{}"
eq "nothing was sent for the canceled request" "$(grep -c '"id":50' notes.jsonl || true)" "0"


# a policy ask goes to the client's user as elicitation/create
send '{"jsonrpc":"2.0","id":55,"method":"tools/call","params":{"name":"guarded","arguments":{"what":"once"}}}'
q=$(read_request)
eq "elicitation asked" "$(jq -r '.method' <<<"$q")" "elicitation/create"
contains "it names the tool" "$(jq -r '.params.message' <<<"$q")" "guarded"
send "{\"jsonrpc\":\"2.0\",\"id\":$(jq -c .id <<<"$q"),\"result\":{\"action\":\"accept\",\"content\":{}}}"
r=$(read_id 55)
contains "accepted: it ran" "$(jq -r '.result.content[0].text' <<<"$r")" "ran once"
send '{"jsonrpc":"2.0","id":56,"method":"tools/call","params":{"name":"guarded","arguments":{"what":"twice"}}}'
q=$(read_request)
send "{\"jsonrpc\":\"2.0\",\"id\":$(jq -c .id <<<"$q"),\"result\":{\"action\":\"decline\"}}"
r=$(read_id 56)
eq "declined: denied" "$(jq -r '.result._meta["io.toolgate/result"].outcome' <<<"$r")" "denied"
contains "who said no" "$(jq -r '.result.content[0].text' <<<"$r")" "declined"
send '{"jsonrpc":"2.0","id":57,"method":"tools/call","params":{"name":"guarded","arguments":{"what":"once"}}}'
r=$(read_id 57)
contains "the same arguments are not asked again" "$(jq -r '.result.content[0].text' <<<"$r")" "ran once"

# 2026-07-28: the version in _meta, no initialize needed
META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
send '{"jsonrpc":"2.0","id":60,"method":"server/discover","params":{'"$META"'}}'
r=$(read_id 60)
eq "discover" "$(jq -c '.result.supportedVersions' <<<"$r")" '["2026-07-28","2025-11-25","2025-06-18"]'
eq "resultType" "$(jq -r '.result.resultType' <<<"$r")" "complete"
send '{"jsonrpc":"2.0","id":61,"method":"tools/call","params":{"name":"say","arguments":{"text":"modern"},'"$META"'}}'
r=$(read_id 61)
eq "2026 call" "$(jq -r '.result.resultType' <<<"$r")" "complete"
send '{"jsonrpc":"2.0","id":62,"method":"ping","params":{'"$META"'}}'
r=$(read_id 62)
eq "no ping in 2026-07-28" "$(jq -c '.error.code' <<<"$r")" "-32601"
send '{"jsonrpc":"2.0","id":63,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}'
r=$(read_id 63)
eq "unsupported version" "$(jq -c '[.error.code, .error.data.requested]' <<<"$r")" '[-32022,"1900-01-01"]'

# 2026-07-28: an ask is an InputRequiredResult, answered by a retry
EMETA='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}'
send '{"jsonrpc":"2.0","id":64,"method":"tools/call","params":{"name":"guarded","arguments":{"what":"modern"},'"$EMETA"'}}'
r=$(read_id 64)
eq "input required" "$(jq -r '.result.resultType' <<<"$r")" "input_required"
eq "asks by elicitation" "$(jq -r '.result.inputRequests.toolgate_approval.method' <<<"$r")" "elicitation/create"
state=$(jq -r '.result.requestState' <<<"$r")
send '{"jsonrpc":"2.0","id":65,"method":"tools/call","params":{"name":"guarded","arguments":{"what":"modern"},"requestState":"'"$state"'","inputResponses":{"toolgate_approval":{"action":"accept","content":{}}},'"$EMETA"'}}'
r=$(read_id 65)
contains "the retry ran" "$(jq -r '.result.content[0].text' <<<"$r")" "ran modern"
send '{"jsonrpc":"2.0","id":66,"method":"tools/call","params":{"name":"guarded","arguments":{"what":"other"},"requestState":"'"$state"'","inputResponses":{"toolgate_approval":{"action":"accept","content":{}}},'"$EMETA"'}}'
r=$(read_id 66)
eq "a state for other arguments is refused" "$(jq -c '.error.code' <<<"$r")" "-32602"
send '{"jsonrpc":"2.0","id":164,"method":"tools/call","params":{"name":"guarded","arguments":{"what":"tamper"},'"$EMETA"'}}'
r=$(read_id 164)
state=$(jq -r '.result.requestState' <<<"$r")
send '{"jsonrpc":"2.0","id":165,"method":"tools/call","params":{"name":"guarded","arguments":{"what":"tamper"},"requestState":"'"$state"'-TAMPERED","inputResponses":{"toolgate_approval":{"action":"accept","content":{}}},'"$EMETA"'}}'
r=$(read_id 165)
eq "a state with bytes after its MAC is refused" "$(jq -c '.error.code' <<<"$r")" "-32602"
send '{"jsonrpc":"2.0","id":166,"method":"tools/call","params":{"name":"guarded","arguments":{"what":"tamper"},"inputResponses":{"toolgate_approval":{"action":"accept","content":{}}},'"$EMETA"'}}'
r=$(read_id 166)
eq "an answer without a state is asked again" "$(jq -r '.result.resultType' <<<"$r")" "input_required"
send '{"jsonrpc":"2.0","id":167,"method":"tools/call","params":{"name":"guarded","arguments":{"what":"tamper"},"inputResponses":null,'"$EMETA"'}}'
r=$(read_id 167)
eq "inputResponses that are no object" "$(jq -c '.error.code' <<<"$r")" "-32602"
send '{"jsonrpc":"2.0","id":67,"method":"tools/call","params":{"name":"guarded","arguments":{"what":"nocap"},'"$META"'}}'
r=$(read_id 67)
eq "no elicitation capability: denied" "$(jq -r '.result._meta["io.toolgate/result"].outcome' <<<"$r")" "denied"

# 2026-07-28: subscriptions/listen is acknowledged at once and stays open
# (the server ends it at shutdown, below)
send '{"jsonrpc":"2.0","id":68,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":true},'"$META"'}}'
ack=$(read_request_or_note "notifications/subscriptions/acknowledged")
eq "listen acknowledged with its id" "$(jq -c '.params._meta["io.modelcontextprotocol/subscriptionId"]' <<<"$ack")" "68"
eq "only what is honoured" "$(jq -c '.params.notifications' <<<"$ack")" '{"toolsListChanged":true}'
send '{"jsonrpc":"2.0","id":69,"method":"subscriptions/listen","params":{'"$META"'}}'
read_request_or_note "notifications/subscriptions/acknowledged" >/dev/null
send '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":69}}'

# protocol errors
send '[{"jsonrpc":"2.0","id":70,"method":"ping"}]'
r=$(read_noid)
eq "batch refused" "$(jq -c '.error.code' <<<"$r")" "-32600"
send '{"jsonrpc":"2.0","id":71,"method":"nope/nope"}'
r=$(read_id 71)
eq "unknown method" "$(jq -c '.error.code' <<<"$r")" "-32601"
send '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}'
r=$(read_noid)
eq "id of a wrong type" "$(jq -c '.error.code' <<<"$r")" "-32600"
send '{"jsonrpc":"2.0","id":72,"method":'
r=$(read_noid)
eq "not JSON" "$(jq -c '.error.code' <<<"$r")" "-32700"
deep=$(printf '[%.0s' $(seq 200))
send "{\"jsonrpc\":\"2.0\",\"id\":73,\"method\":\"ping\",\"params\":{\"x\":$deep}}"
r=$(read_noid)
eq "nested too deep" "$(jq -c '.error.code' <<<"$r")" "-32700"

# EOF with a call running: it is still answered (after it ends)
send '{"jsonrpc":"2.0","id":80,"method":"tools/call","params":{"name":"chatty"}}'
exec {IN}>&-
r=$(read_id 80)
contains "answered after EOF" "$(jq -r '.result.content[0].text' <<<"$r")" "end"
r=$(read_id 68)
eq "the server ended the open listen with its result" "$(jq -c '.result._meta["io.modelcontextprotocol/subscriptionId"]' <<<"$r")" "68"
eq "the canceled listen got no result" "$(jq -s -c '[.[] | select(.id == 69)] | length' notes.jsonl)" "0"
status=0
wait "$SRVPID" || status=$?
eq "clean exit" "$status" "0"

# every message sent validates against its version's schema (errors that
# answer a message whose id could not be read have no id, which no MCP
# schema allows for 2025-06-18; they are left out)
jq -c 'select(.message | has("id") or has("method"))' trace.jsonl >trace.valid.jsonl
check "the messages validate ($(wc -l <trace.valid.jsonl) of them)" "$TG_FIXTURES/mcp_check" trace.valid.jsonl

n=$("$TOOLGATE" history --json --limit 100 | jq -s 'length')
check "every call is journaled ($n)" test "$n" -ge 30

finish
