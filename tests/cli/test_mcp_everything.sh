#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# @modelcontextprotocol/server-everything (pinned in tests/interop) as a
# tool source of `toolgate run`: a plain result, an image block passed
# through, structured content checked against its outputSchema (the
# payload), the roots it asks for (the workspace), and a long-running
# operation: its progress notifications are output lines on stderr
# (--verbose), they keep the call alive past its deadline up to
# mcp.max_timeout_ms, and without max_timeout_ms the deadline ends it
# (timeout, execution started). The operation runs 3x the deadline, with a
# progress notification every third of a deadline.
# Skips (77) without the npm packages, fails under CI=true.
source "$(dirname "$0")/lib.sh"
BIN=$(npm_bin mcp-server-everything) || exit $?
mkdir -p ws
deadline=$(tg_ms 1000)
secs=$((3 * TG_TEST_TIME_SCALE))
steps=$((9 * TG_TEST_TIME_SCALE))
cfg() {
  cat <<JSON
{"workspace": "ws", "journal": null, "envelope": false, "builtin_tools": [],
 "tools": [{"name": "ev", "mcp": {"command": ["$BIN"], "timeout_ms": $deadline $1}}]}
JSON
}
cfg ", \"max_timeout_ms\": $(tg_ms 60000)" >ext.json
cfg "" >plain.json
mk() { printf '{"id":"%s","tool":"ev__%s","args":%s}\n' "$1" "$2" "$3"; }
{
  mk v1 get-sum '{"a":2,"b":3}'
  mk v2 get-tiny-image '{}'
  mk v3 get-structured-content '{"location":"Chicago"}'
  mk v4 trigger-long-running-operation "{\"duration\":$secs,\"steps\":$steps}"
  mk v5 get-roots-list '{}'
} >t1.jsonl
"$TOOLGATE" run --config ext.json --to toolgate --verbose t1.jsonl >o1.jsonl 2>e1.txt
p() { jq -r "select(.id==\"$1\")|$2" o1.jsonl; }
eq "sum" "$(p v1 .payload.content[0].text)" "The sum of 2 and 3 is 5."
eq "image passed through" "$(p v2 '.payload.content[1]|[.type,.mimeType]|join(" ")')" "image image/png"
eq "structured, schema-checked" "$(p v3 '.payload|has("temperature")')" true
eq "progress keeps it alive" "$(p v4 .outcome)" success
contains "progress lines" "$(cat e1.txt)" "[v4 stderr] progress 1/$steps"
contains "roots: the workspace" "$(p v5 .payload.content[0].text)" "file://$WORK/ws"
mk w1 trigger-long-running-operation "{\"duration\":$secs,\"steps\":$steps}" >t2.jsonl
"$TOOLGATE" run --config plain.json --to toolgate t2.jsonl >o2.jsonl
eq "without max_timeout_ms: the deadline" "$(jq -c '[.outcome,.execution]' o2.jsonl)" '["timeout","started"]'
sleep 0.2
eq "no server left" "$(in_dir "$WORK/ws")" 0
finish
