#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_mcp_elicit_mrtr.sh - an MCP server behind toolgate asks its user for
# input (elicitation/create) while `toolgate serve --stdio` runs a call for
# a 2026-07-28 client, or for a task. The fixture server mcp_tools (its
# `elicit` tool, tests/fixtures/mcp_tools.c) is the source; raw JSON-RPC
# is the client (no SDK speaks 2026-07-28).
# - 2026-07-28: the call is parked upstream and its request answered with an
#   InputRequiredResult (the question among inputRequests, a requestState);
#   the retry with inputResponses and the state re-attaches: accept (the
#   server gets the content), decline, cancel, content that does not match
#   the requestedSchema (declined, the server never sees it), a retry
#   without the answer (asked again), a reused, a forged and a tampered
#   state (-32602), a policy approval before the question (two states in
#   turn), a retry that never comes before the call's deadline (the call
#   times out, upstream gets notifications/cancelled, the journal records
#   it; the end is kept and answers the late retry);
# - 2026-07-28 with the tasks extension: a call that became a task shows
#   input_required with the question in tasks/get's inputRequests, and
#   tasks/update's inputResponses answer it;
# - 2025-11-25, a task: the question (elicitation/create with the related
#   task) goes to the session, the task shows input_required, the answer
#   goes upstream, tasks/result gives the call's result;
# - over Streamable HTTP: the retry is another POST;
# - every message toolgate sends validates against its version's schema.
source "$(dirname "$0")/lib.sh"
source "$TG_SOURCE_DIR/tests/cli/serve_lib.sh"
mkdir -p ws/.toolgate
FX=$TG_FIXTURES/mcp_tools
# the deadline of a call that is never retried (its source's start-up and
# question take milliseconds); a task's question comes 3x after the one
# second in which a 2026-07-28 call becomes a task
SHORT_MS=$(tg_ms 3000)
cat >gw.json <<JSON
{"workspace": "ws", "journal": "ws/.toolgate/j.db", "builtin_tools": [],
 "envelope": false,
 "tools": [{"name": "fx", "mcp": {"command": ["$FX"],
   "env": {"MCP_TOOLS_CANCEL_LOG": "$WORK/ws/cancelled.jsonl"}}},
  {"name": "fx_short", "mcp": {"command": ["$FX"], "timeout_ms": $SHORT_MS,
   "env": {"MCP_TOOLS_CANCEL_LOG": "$WORK/ws/cancelled_short.jsonl"}}}],
 "policy": {"default": "allow", "rules": [
   {"tool": "fx__elicit", "args": {"who": {"equals": "guarded"}},
    "decision": "ask", "reason": "guarded needs a yes"}]}}
JSON

coproc GW { exec "$TOOLGATE" serve --stdio --config gw.json --trace trace.jsonl 2>gw.err; }
GWPID=$GW_PID
IN=${GW[1]}
OUT=${GW[0]}

M='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}'
MT='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}'
# call ID [ARGS] [TOOL]: a first try; prints its response
call() {
  local args=${2:-'{}'}
  send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"${3:-fx__elicit}\",\"arguments\":$args,$M}}"
  read_id "$1"
}
# retry ID PREVIOUS RESPONSES [ARGS] [TOOL]: the retry of the call that was
# answered PREVIOUS, with inputResponses RESPONSES; prints its response
retry() {
  local state args=${4:-'{}'}
  state=$(jq -r '.result.requestState' <<<"$2")
  send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"${5:-fx__elicit}\",\"arguments\":$args,\"requestState\":\"$state\",\"inputResponses\":$3,$M}}"
  read_id "$1"
}
# key RESPONSE: the key of the question in an InputRequiredResult
key() { jq -r '.result.inputRequests | keys[0]' <<<"$1"; }

r=$(call 1)
eq "2026-07-28: input required" "$(jq -r '.result.resultType' <<<"$r")" input_required
k=$(key "$r")
eq "the question" "$(jq -r --arg k "$k" '.result.inputRequests[$k].method' <<<"$r")" elicitation/create
eq "the server's message" "$(jq -r --arg k "$k" '.result.inputRequests[$k].params.message' <<<"$r")" "Who are you?"
eq "the server's schema" "$(jq -c --arg k "$k" '.result.inputRequests[$k].params.requestedSchema.required' <<<"$r")" '["name"]'
first=$r
r2=$(retry 2 "$r" "{\"$k\":{\"action\":\"accept\",\"content\":{\"name\":\"Ada\",\"age\":36}}}")
eq "accepted: the server got the content" "$(jq -r '.result.content[0].text' <<<"$r2")" \
  'action=accept content={"name":"Ada","age":36}'
eq "...a complete result" "$(jq -r '.result.resultType' <<<"$r2")" complete

r=$(retry 3 "$first" "{\"$k\":{\"action\":\"accept\",\"content\":{\"name\":\"Eve\"}}}")
eq "a reused state: -32602" "$(jq -c '.error.code' <<<"$r")" -32602

r=$(call 4)
k=$(key "$r")
r=$(retry 5 "$r" "{\"$k\":{\"action\":\"decline\"}}")
eq "declined" "$(jq -r '.result.content[0].text' <<<"$r")" 'action=decline content=none'

r=$(call 6)
k=$(key "$r")
r=$(retry 7 "$r" "{\"$k\":{\"action\":\"cancel\"}}")
eq "canceled" "$(jq -r '.result.content[0].text' <<<"$r")" 'action=cancel content=none'

r=$(call 8)
k=$(key "$r")
r=$(retry 9 "$r" "{\"$k\":{\"action\":\"accept\",\"content\":{\"age\":-1}}}")
eq "content against the schema: declined" "$(jq -r '.result.content[0].text' <<<"$r")" 'action=decline content=none'

# a retry without the answer: the question is asked again, under a new
# state; the old one is spent
r=$(call 10)
k=$(key "$r")
again=$(retry 11 "$r" '{}')
eq "no answer: asked again" "$(jq -r '.result.resultType' <<<"$again")" input_required
eq "...the same question" "$(key "$again")" "$k"
check "...under a new state" test "$(jq -r '.result.requestState' <<<"$again")" != "$(jq -r '.result.requestState' <<<"$r")"
r=$(retry 12 "$again" "{\"$k\":{\"action\":\"accept\",\"content\":{\"name\":\"Bo\"}}}")
eq "...then answered" "$(jq -r '.result.content[0].text' <<<"$r")" 'action=accept content={"name":"Bo"}'

# forged states: another tool's arguments, a changed MAC, a made-up name
r=$(call 13)
k=$(key "$r")
f=$(retry 14 "$r" "{\"$k\":{\"action\":\"decline\"}}" '{"who":"else"}')
eq "a state for other arguments: -32602" "$(jq -c '.error.code' <<<"$f")" -32602
st=$(jq -r '.result.requestState' <<<"$r")
bad="${st%?}$([ "${st: -1}" = 0 ] && echo 1 || echo 0)"
send "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"tools/call\",\"params\":{\"name\":\"fx__elicit\",\"arguments\":{},\"requestState\":\"$bad\",\"inputResponses\":{},$M}}"
eq "a tampered state: -32602" "$(jq -c '.error.code' <<<"$(read_id 15)")" -32602
made="${st%%.*}.$(printf '%032d' 0).${st##*.}"
send "{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"tools/call\",\"params\":{\"name\":\"fx__elicit\",\"arguments\":{},\"requestState\":\"$made\",\"inputResponses\":{},$M}}"
eq "a made-up park: -32602" "$(jq -c '.error.code' <<<"$(read_id 16)")" -32602
r=$(retry 17 "$r" "{\"$k\":{\"action\":\"decline\"}}")
eq "...the real state still works" "$(jq -r '.result.content[0].text' <<<"$r")" 'action=decline content=none'

# a policy approval first, then the source's question: two states in turn
r=$(call 18 '{"who":"guarded"}')
eq "approval: input required" "$(jq -r '.result.inputRequests | keys[0]' <<<"$r")" toolgate_approval
r=$(retry 19 "$r" '{"toolgate_approval":{"action":"accept","content":{}}}' '{"who":"guarded"}')
k=$(key "$r")
check "...then the source's question" test "$k" != toolgate_approval
r=$(retry 20 "$r" "{\"$k\":{\"action\":\"accept\",\"content\":{\"name\":\"Cy\"}},\"toolgate_approval\":{\"action\":\"decline\"}}" '{"who":"guarded"}')
eq "...answered: the call ran once, approved" "$(jq -r '.result.content[0].text' <<<"$r")" 'action=accept content={"name":"Cy"}'

# the retry never comes before the call's deadline: the call times out
# (upstream gets notifications/cancelled), and the late retry gets its end
r=$(call 21 '{}' fx_short__elicit)
eq "short: input required" "$(jq -r '.result.resultType' <<<"$r")" input_required
k=$(key "$r")
for _ in $(seq 1 $((200 * TG_TEST_TIME_SCALE))); do
  [ -s ws/cancelled_short.jsonl ] && break
  sleep 0.1
done
eq "no retry: the server got notifications/cancelled" "$(jq -r '.method' ws/cancelled_short.jsonl 2>/dev/null | head -1)" notifications/cancelled
r=$(retry 22 "$r" "{\"$k\":{\"action\":\"accept\",\"content\":{\"name\":\"late\"}}}" '{}' fx_short__elicit)
eq "the late retry gets the call's end" "$(jq -r '.result._meta["io.toolgate/result"].outcome' <<<"$r")" timeout

# 2026-07-28 with the tasks extension: a call that asks after it became a
# task (after one second; it asks after three)
send "{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"tools/call\",\"params\":{\"name\":\"fx__elicit\",\"arguments\":{\"delay_ms\":$(tg_ms 3000)},$MT}}"
r=$(read_id 30)
eq "a task" "$(jq -r '.result.resultType' <<<"$r")" task
tid=$(jq -r '.result.taskId' <<<"$r")
for i in $(seq 1 $((200 * TG_TEST_TIME_SCALE))); do
  send "{\"jsonrpc\":\"2.0\",\"id\":$((1000 + i)),\"method\":\"tasks/get\",\"params\":{\"taskId\":\"$tid\",$MT}}"
  g=$(read_id $((1000 + i)))
  [ "$(jq -r '.result.status' <<<"$g")" != working ] && break
  sleep 0.1
done
eq "the task: input_required" "$(jq -r '.result.status' <<<"$g")" input_required
k=$(jq -r '.result.inputRequests | keys[0]' <<<"$g")
eq "...the question in inputRequests" "$(jq -r --arg k "$k" '.result.inputRequests[$k].params.message' <<<"$g")" "Who are you?"
send "{\"jsonrpc\":\"2.0\",\"id\":31,\"method\":\"tasks/update\",\"params\":{\"taskId\":\"$tid\",\"inputResponses\":{\"$k\":{\"action\":\"accept\",\"content\":{\"name\":\"Di\"}}},$MT}}"
eq "tasks/update acknowledged" "$(jq -c '.result | del(._meta)' <<<"$(read_id 31)")" '{"resultType":"complete"}'
for i in $(seq 1 $((200 * TG_TEST_TIME_SCALE))); do
  send "{\"jsonrpc\":\"2.0\",\"id\":$((5000 + i)),\"method\":\"tasks/get\",\"params\":{\"taskId\":\"$tid\",$MT}}"
  g=$(read_id $((5000 + i)))
  [ "$(jq -r '.result.status' <<<"$g")" = completed ] && break
  sleep 0.1
done
eq "the task completed with the answer" "$(jq -r '.result.result.content[0].text' <<<"$g")" 'action=accept content={"name":"Di"}'

# 2025-11-25, a task (a session of its own)
send '{"jsonrpc":"2.0","id":40,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}'
r=$(read_id 40)
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
send '{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"fx__elicit","arguments":{},"task":{"ttl":60000}}}'
r=$(read_id 41)
tid=$(jq -r '.result.task.taskId' <<<"$r")
q=$(read_request)
eq "2025-11-25 task: the question" "$(jq -r '.method' <<<"$q")" elicitation/create
eq "...names its task" "$(jq -r '.params._meta["io.modelcontextprotocol/related-task"].taskId' <<<"$q")" "$tid"
send "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"$tid\"}}"
eq "...the task: input_required" "$(jq -r '.result.status' <<<"$(read_id 42)")" input_required
send "$(jq -c '{jsonrpc: "2.0", id: .id, result: {action: "accept", content: {name: "Flo"}}}' <<<"$q")"
send "{\"jsonrpc\":\"2.0\",\"id\":43,\"method\":\"tasks/result\",\"params\":{\"taskId\":\"$tid\"}}"
eq "...tasks/result: the answer reached the server" "$(jq -r '.result.content[0].text' <<<"$(read_id 43)")" 'action=accept content={"name":"Flo"}'

exec {IN}>&-
wait "$GWPID" || true

# over Streamable HTTP: the request's stream ends with its
# InputRequiredResult, the call stays parked, the retry (another POST)
# re-attaches
if command -v curl >/dev/null; then
  "$TOOLGATE" serve --http 127.0.0.1:0 --config gw.json --trace trace_http.jsonl 2>http.err &
  HPID=$!
  check "http: the URL is printed" wait_for "$(tg_ms 5000)" grep -q "serving MCP on http://" http.err
  URL=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' http.err)
  H=(-s -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'
     -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: fx__elicit')
  # post BODY: the response to the request in BODY (SSE or JSON)
  post() { curl "${H[@]}" --max-time "$(tg_s 20)" "$URL" -d "$1" | sed -n -e 's/^data: //' -e '/^{/p' | jq -c 'select(has("id"))'; }
  r=$(post "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"fx__elicit\",\"arguments\":{},$M}}")
  eq "http: input required" "$(jq -r '.result.resultType' <<<"$r")" input_required
  k=$(key "$r")
  st=$(jq -r '.result.requestState' <<<"$r")
  sleep 0.3
  r=$(post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"fx__elicit\",\"arguments\":{},\"requestState\":\"$st\",\"inputResponses\":{\"$k\":{\"action\":\"accept\",\"content\":{\"name\":\"Hy\"}}},$M}}")
  eq "http: the retry re-attached" "$(jq -r '.result.content[0].text' <<<"$r")" 'action=accept content={"name":"Hy"}'
  kill -TERM "$HPID"
  wait "$HPID" || true
  jq -c 'select(.message | has("id") or has("method"))' trace_http.jsonl >>trace.jsonl
fi

# the journal
"$TOOLGATE" history --config gw.json --json --limit 100 >h.jsonl
eq "journal: the timed-out call" "$(jq -r 'select(.tool == "fx_short__elicit") | .outcome' h.jsonl)" timeout
eq "...its question answered cancel" "$(jq -r 'select(.tool == "fx_short__elicit") | .decisions.elicitation[0].action' h.jsonl)" cancel
eq "journal: the approved call asked once" "$(jq -c 'select(.call.args.who == "guarded" and .decisions.elicitation != null) | [.decisions.elicitation[].action]' h.jsonl)" '["accept"]'
eq "journal: no values in the decisions" "$(jq -c '.decisions.elicitation' h.jsonl | grep -c -e Ada -e '"Cy"' || true)" 0

jq -c 'select(.message | has("id") or has("method"))' trace.jsonl >trace.valid.jsonl
check "the messages validate ($(wc -l <trace.valid.jsonl) of them)" "$TG_FIXTURES/mcp_check" trace.valid.jsonl
sleep 0.2
eq "no server left" "$(in_dir "$WORK/ws")" 0
finish
