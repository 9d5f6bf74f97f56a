#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Idempotent re-delivery end to end: the same turn run twice answers the
# second time from the journal ("replayed": true) and the tool that appends
# to a file ran once; the same id with other arguments is CALL_ID_CONFLICT;
# another --caller runs again; MCP request ids are never replayed.
source "$(dirname "$0")/lib.sh"
mkdir ws
# The tool appends to a file outside the workspace: no bubblewrap for it.
cat >toolgate.json <<JSON
{"workspace": "ws", "journal": "j/journal.db", "sandbox": {"mode": "off"},
 "tools": [
  {"name": "append", "command": ["/bin/sh", "-c", "echo \"\$1\" >>\"\$0\"; echo appended \"\$1\"", "$WORK/ran.log", "{text}"]}
 ]}
JSON
mk() { printf '{"id":"%s","tool":"%s","args":%s}\n' "$1" "$2" "$3"; }
{ mk a1 append '{"text":"one"}'; mk a2 append '{"text":"two"}'; } >turn.jsonl

"$TOOLGATE" run turn.jsonl >first.jsonl
eq "first run outcomes" "$(jq -r .outcome first.jsonl | tr '\n' ' ')" "success success "
eq "first run not replayed" "$(jq -r '.replayed // false' first.jsonl | tr '\n' ' ')" "false false "
"$TOOLGATE" run turn.jsonl >second.jsonl
eq "second run replayed" "$(jq -r '.replayed // false' second.jsonl | tr '\n' ' ')" "true true "
eq "same payloads" "$(jq -c .payload second.jsonl)" "$(jq -c .payload first.jsonl)"
eq "each tool ran once" "$(sort ran.log | tr '\n' ' ')" "one two "
eq "journal rows" "$(sqlite3 j/journal.db "SELECT count(*), sum(r.replayed) FROM results r")" "4|2"
eq "no running rows left" "$(sqlite3 j/journal.db "SELECT count(*) FROM calls WHERE state='running'")" 0
# The same calls in another wire format (white space in the arguments
# string does not change the checksum) are the same delivery.
cat >chat.json <<'JSON'
{"role":"assistant","content":null,"tool_calls":[
 {"id":"a1","type":"function","function":{"name":"append","arguments":"{ \"text\" : \"one\" }"}}]}
JSON
"$TOOLGATE" run chat.json >chat.out
contains "openai-chat delivery replayed" "$(cat chat.out)" "appended one"
eq "still ran once" "$(wc -l <ran.log | tr -d ' ')" 2

# Same id, other arguments: refused, not run.
mk a1 append '{"text":"changed"}' >conflict.jsonl
"$TOOLGATE" run conflict.jsonl >conflict.out
eq "conflict code" "$(jq -r .payload.error.code conflict.out)" CALL_ID_CONFLICT
eq "conflict not started" "$(jq -r .execution conflict.out)" not_started
sum1=$(sqlite3 j/journal.db "SELECT checksum FROM calls WHERE id='a1' ORDER BY rowid LIMIT 1")
contains "conflict names the recorded checksum" "$(jq -r .payload.error.message conflict.out)" "$sum1"
contains "conflict names the new checksum" "$(jq -r .payload.error.message conflict.out)" "sha256:"
check "changed did not run" bash -c '! grep -q changed ran.log'

# Another caller scope runs again, once; then it is replayed too.
"$TOOLGATE" run --caller bob turn.jsonl >bob.jsonl
eq "bob's run is not replayed" "$(jq -r '.replayed // false' bob.jsonl | tr '\n' ' ')" "false false "
"$TOOLGATE" run --caller bob turn.jsonl >bob2.jsonl
eq "bob's second run replayed" "$(jq -r '.replayed // false' bob2.jsonl | tr '\n' ' ')" "true true "
eq "ran for bob once" "$(wc -l <ran.log | tr -d ' ')" 4

# The journal's history shows the replays.
"$TOOLGATE" history --json --limit 100 >hist.jsonl
eq "history marks replays" "$(jq -r 'select(.replayed == true) | .id' hist.jsonl | wc -l | tr -d ' ')" 5

# Repairing a conversation after a crash: a call that ran (its result is in
# the journal) gets that result, only the one that never ran is canceled.
cat >conv.json <<'JSON'
[{"role":"user","content":"hi"},
 {"role":"assistant","content":null,"tool_calls":[
  {"id":"a2","type":"function","function":{"name":"append","arguments":"{\"text\":\"two\"}"}},
  {"id":"z9","type":"function","function":{"name":"append","arguments":"{\"text\":\"never\"}"}}]}]
JSON
"$TOOLGATE" run --cancel-unanswered conv.json >conv.out
contains "ran call answered from the journal" "$(jq -r '.[0].content' conv.out)" "appended two"
contains "unanswered call canceled" "$(jq -r '.[1].content' conv.out)" '"canceled"'
check "nothing ran" bash -c '! grep -q never ran.log'

# MCP request ids belong to their connection: never replayed.
echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"append","arguments":{"text":"mcp"}}}' >req.json
"$TOOLGATE" run req.json >/dev/null
"$TOOLGATE" run req.json >mcp.out
check "mcp answer has no replay mark" bash -c '! grep -q replayed mcp.out'
eq "mcp ran twice" "$(grep -c mcp ran.log)" 2

# --no-journal: nothing to replay from, the tool runs.
"$TOOLGATE" run --no-journal turn.jsonl >nj.jsonl
eq "without a journal it runs" "$(wc -l <ran.log | tr -d ' ')" 8
finish
