#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `toolgate serve --http` end to end, with the real server core and the
# curl binary as the client: the URL printed for port 0, initialize and
# its Mcp-Session-Id, 202 for a notification, a tools/call answered as an
# SSE stream (priming event, ids, progress and log notifications, then the
# result), a stateless 2026-07-28 call (no session minted), a client that
# leaves mid-call and resumes with Last-Event-ID, DNS-rebinding
# and token refusals, DELETE then 404, and a clean exit on SIGTERM.
source "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || { echo "SKIP: no curl binary"; exit 77; }

mkdir -p ws
cat > toolgate.json <<'JSON'
{"workspace": "ws", "journal": ".toolgate/journal.db", "sandbox": {"mode": "off"},
 "tools": [
  {"name": "say", "input_schema": {"type": "object",
     "properties": {"text": {"type": "string"}}, "required": ["text"]},
   "command": ["/bin/echo", "{text}"]},
  {"name": "chatty", "command": ["/bin/sh", "-c",
     "echo start; echo 'warning: careful' >&2; sleep 0.2; echo end"]},
  {"name": "nap", "command": ["/bin/sh", "-c", "sleep 1; echo rested"]}
 ], "policy": {"default": "allow"}}
JSON
printf 's3cret\n' > token

"$TOOLGATE" serve --http 127.0.0.1:0 --token-file token 2>server.err &
SRVPID=$!
url() { grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' server.err; }
check "the URL is printed" wait_for "$(tg_ms 5000)" grep -q "serving MCP on http://" server.err
URL=$(url)
H=(-s -H 'Content-Type: application/json'
   -H 'Accept: application/json, text/event-stream' -H 'Authorization: Bearer s3cret')

curl "${H[@]}" -D init.h -o init.json "$URL" -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
eq "initialize" "$(jq -r '.result.protocolVersion' init.json)" "2025-11-25"
SID=$(tr -d '\r' < init.h | awk 'tolower($1)=="mcp-session-id:" {print $2}')
check "a 128-bit session id ($SID)" grep -qE '^[0-9a-f]{32}$' <<<"$SID"
S=(-H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25')

code=$(curl "${H[@]}" "${S[@]}" -o /dev/null -w '%{http_code}' "$URL" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}')
eq "notification" "$code" "202"

curl "${H[@]}" "${S[@]}" -D call.h -o call.sse "$URL" -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chatty","arguments":{},"_meta":{"progressToken":"p"}}}'
contains "SSE answer" "$(cat call.h)" "text/event-stream"
eq "priming event first" "$(head -3 call.sse | tr '\n' '|')" "id: 3-0|retry: 1000|data: |"
contains "progress" "$(cat call.sse)" '"method":"notifications/progress"'
contains "log message" "$(cat call.sse)" '"warning: careful"'
r=$(grep '^data: {"jsonrpc":"2.0","id":2' call.sse | cut -c7-)
contains "the result last" "$(jq -r '.result.content[0].text' <<<"$r")" "end"

curl "${H[@]}" -D modern.h -o modern.sse -H 'MCP-Protocol-Version: 2026-07-28' \
  -H 'Mcp-Method: tools/call' -H 'Mcp-Name: say' "$URL" \
  -d '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"say","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
contains "stateless call" "$(cat modern.sse)" '"resultType":"complete"'
check "no session minted" bash -c "! grep -qi mcp-session-id modern.h"

# A client that leaves mid-call resumes with GET and Last-Event-ID: the
# call went on and its result waited on the stream (2025-11-25).
curl "${H[@]}" "${S[@]}" --max-time 0.3 -o drop.sse "$URL" -d '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nap","arguments":{}}}' || true
eq "left after the priming event" "$(head -1 drop.sse)" "id: 4-0"
curl "${H[@]}" "${S[@]}" --max-time $(( $(tg_ms 10000) / 1000 )) -o resume.sse \
  -X GET -H 'Last-Event-ID: 4-0' "$URL"
r=$(grep '^data: {"jsonrpc":"2.0","id":5' resume.sse | cut -c7-)
contains "the result on the resumed stream" "$(jq -r '.result.content[0].text' <<<"$r")" "rested"

code=$(curl "${H[@]}" -H 'Origin: http://evil.example.com' -o /dev/null -w '%{http_code}' "$URL" -d '{}')
eq "foreign Origin" "$code" "403"
code=$(curl -s -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -o /dev/null -w '%{http_code}' "$URL" -d '{}')
eq "no token" "$code" "401"

code=$(curl "${H[@]}" "${S[@]}" -X DELETE -o /dev/null -w '%{http_code}' "$URL")
eq "DELETE" "$code" "200"
code=$(curl "${H[@]}" "${S[@]}" -o /dev/null -w '%{http_code}' "$URL" -d '{"jsonrpc":"2.0","id":4,"method":"tools/list"}')
eq "ended session" "$code" "404"

kill -TERM "$SRVPID"
status=0
wait "$SRVPID" || status=$?
eq "clean exit on SIGTERM" "$status" "0"
finish
