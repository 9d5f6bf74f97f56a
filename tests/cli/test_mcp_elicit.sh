#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_mcp_elicit.sh - an MCP server behind toolgate asks its user for
# input (elicitation/create) while it runs a call: `toolgate serve --stdio`
# as a gateway in front of the fixture server mcp_tools (its `elicit`
# tool, tests/fixtures/mcp_tools.c) forwards the question to the client
# that made the call and the client's answer back upstream:
# - accept with content (checked against the requestedSchema: content that
#   does not match is declined and never reaches the server), decline,
#   cancel;
# - a client without the elicitation capability: declined (a 2026-07-28
#   client, and tasks: test_mcp_elicit_mrtr.sh);
# - the client cancels its call while the question waits: the server is
#   answered cancel, the client's late answer is ignored;
# - two calls in flight on one stdio session: the question belongs to no
#   single call and is declined;
# - `toolgate run` (no one to ask): declined;
# - each call's journal row records decisions.elicitation (source, mode,
#   action, who answered, the names of the fields) but not the values.
source "$(dirname "$0")/lib.sh"
source "$TG_SOURCE_DIR/tests/cli/serve_lib.sh"
mkdir -p ws/.toolgate
FX=$TG_FIXTURES/mcp_tools
cat >gw.json <<JSON
{"workspace": "ws", "journal": "ws/.toolgate/j.db", "builtin_tools": [],
 "envelope": false,
 "tools": [{"name": "fx", "mcp": {"command": ["$FX"]}}]}
JSON

coproc GW { exec "$TOOLGATE" serve --stdio --config gw.json 2>gw.err; }
GWPID=$GW_PID
IN=${GW[1]}
OUT=${GW[0]}
send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}'
r=$(read_id 1)
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'

# call ID, then the question it raises: prints the elicitation/create
ask() {
  send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"fx__elicit\",\"arguments\":{}}}"
  read_request
}
# answer REQUEST RESULT: the client's response to the server's request
answer() {
  send "$(jq -c --argjson r "$2" '{jsonrpc: "2.0", id: .id, result: $r}' <<<"$1")"
}

q=$(ask 3)
eq "forwarded as elicitation/create" "$(jq -r '.method' <<<"$q")" elicitation/create
eq "the server's message" "$(jq -r '.params.message' <<<"$q")" "Who are you?"
eq "the server's schema" "$(jq -c '.params.requestedSchema.required' <<<"$q")" '["name"]'
eq "form mode (2025-11-25)" "$(jq -r '.params.mode' <<<"$q")" form
answer "$q" '{"action":"accept","content":{"name":"Ada","age":36}}'
r=$(read_id 3)
eq "accepted: the server got the content" "$(jq -r '.result.content[0].text' <<<"$r")" \
  'action=accept content={"name":"Ada","age":36}'

q=$(ask 4)
answer "$q" '{"action":"decline"}'
r=$(read_id 4)
eq "declined" "$(jq -r '.result.content[0].text' <<<"$r")" 'action=decline content=none'

q=$(ask 5)
answer "$q" '{"action":"accept","content":{"age":-1}}'
r=$(read_id 5)
eq "content against the schema: declined" "$(jq -r '.result.content[0].text' <<<"$r")" 'action=decline content=none'

q=$(ask 6)
answer "$q" '{"action":"cancel"}'
r=$(read_id 6)
eq "canceled" "$(jq -r '.result.content[0].text' <<<"$r")" 'action=cancel content=none'

# the client cancels its call while the question waits
q=$(ask 7)
send '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"changed my mind"}}'
sleep 0.3
answer "$q" '{"action":"accept","content":{"name":"late"}}'
# two calls in flight on the stdio session: the question belongs to no
# single call (the gateway's call to slow is the other one)
send '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"fx__slow","arguments":{}}}'
sleep 0.3
send '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"fx__elicit","arguments":{}}}'
r=$(read_id 9)
eq "two calls in flight: declined" "$(jq -r '.result.content[0].text' <<<"$r")" 'action=decline content=none'
eq "...without asking the client" "$(jq -s '[.[] | select(.method == "elicitation/create")] | length' notes.jsonl)" 0
send '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}'
send '{"jsonrpc":"2.0","id":10,"method":"ping"}'
r=$(read_id 10)
exec {IN}>&-
wait "$GWPID" || true

# a client without the elicitation capability
printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fx__elicit","arguments":{}}}' |
  timeout "$(tg_s 20)" "$TOOLGATE" serve --stdio --config gw.json >nocap.out
eq "no capability: declined" "$(jq -r 'select(.id==2)|.result.content[0].text' nocap.out)" 'action=decline content=none'
eq "...and not asked" "$(jq -s '[.[] | select(.method == "elicitation/create")] | length' nocap.out)" 0

# toolgate run: nobody to ask
printf '{"id":"r1","tool":"fx__elicit","args":{}}\n' >t.jsonl
"$TOOLGATE" run --config gw.json --to toolgate t.jsonl >run.jsonl
eq "run: declined" "$(jq -r '.payload.content[0].text' run.jsonl)" 'action=decline content=none'

# the journal
"$TOOLGATE" history --config gw.json --json --tool fx__elicit >h.jsonl
eq "journal: accepted" "$(jq -c 'select(.payload.content[0].text | startswith("action=accept")) | .decisions.elicitation' h.jsonl)" \
  '[{"source":"fx","mode":"form","action":"accept","detail":"accepted by the MCP client'"'"'s user","fields":["name","age"]}]'
# (the question that belonged to no single call was declined before any
# call could record it)
eq "journal: one for each call it was about" "$(jq -s 'map(.decisions.elicitation | length) | add' h.jsonl)" 7
eq "journal: the actions" "$(jq -s -c 'map(.decisions.elicitation[0].action // "none") | sort' h.jsonl)" \
  '["accept","cancel","cancel","decline","decline","decline","decline","none"]'
contains "journal: content against the schema" "$(jq -r '.decisions.elicitation[0].detail' h.jsonl)" \
  "does not match the requestedSchema"
contains "journal: no capability" "$(jq -r '.decisions.elicitation[0].detail' h.jsonl)" "declared no elicitation capability"
contains "journal: run" "$(jq -r '.decisions.elicitation[0].detail' h.jsonl)" "no elicitation handler"
contains "journal: the client canceled" "$(jq -r '.decisions.elicitation[0].detail' h.jsonl)" "the call ended before"
eq "journal: no values in the decisions" "$(jq -c '.decisions.elicitation' h.jsonl | grep -c -e Ada -e late || true)" 0

sleep 0.2
eq "no server left" "$(in_dir "$WORK/ws")" 0
finish
