#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_serve_resources.sh - spooled output as MCP resources: a result that
# went to the spool links its artifact (resource_link to
# toolgate://artifacts/<id>), resources/list lists the caller's artifacts
# and resources/read returns one, and another caller neither sees nor
# reads them. Three servers over one journal and spool, each fed its
# requests on stdin (EOF answers them all and stops it).
source "$(dirname "$0")/lib.sh"

mkdir -p ws
cat > toolgate.json <<'JSON'
{"workspace": "ws", "sandbox": {"mode": "off"},
 "tools": [{"name": "numbers", "command": ["seq", "1", "100000"]}]}
JSON
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
serve() { # CALLER REQUEST...: the responses, one per line
  local caller=$1
  shift
  printf '%s\n' "$INIT" "$@" | "$TOOLGATE" serve --stdio --caller "$caller" --trace trace.jsonl
}

out=$(serve alice '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"numbers"}}')
link=$(jq -c 'select(.id == 2) | .result.content[] | select(.type == "resource_link")' <<<"$out")
uri=$(jq -r '.uri' <<<"$link")
contains "a spooled result links its artifact" "$uri" "toolgate://artifacts/art_"
eq "its size" "$(jq -r '.size' <<<"$link")" "588895"

out=$(serve alice '{"jsonrpc":"2.0","id":3,"method":"resources/list"}' \
  '{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"'"$uri"'"}}')
eq "the caller's artifacts are listed" "$(jq -c 'select(.id == 3) | [.result.resources[].uri]' <<<"$out")" "[\"$uri\"]"
eq "and read" "$(jq -r 'select(.id == 4) | .result.contents[0].text | rtrimstr("\n") | split("\n") | last' <<<"$out")" "100000"

out=$(serve bob '{"jsonrpc":"2.0","id":3,"method":"resources/list"}' \
  '{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"'"$uri"'"}}')
eq "another caller sees none" "$(jq -c 'select(.id == 3) | .result.resources' <<<"$out")" "[]"
eq "and reads none" "$(jq -c 'select(.id == 4) | .error.code' <<<"$out")" "-32002"

check "every message validates" "$TG_FIXTURES/mcp_check" trace.jsonl
finish
