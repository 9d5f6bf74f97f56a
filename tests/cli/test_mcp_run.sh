#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# MCP servers as tool sources through `toolgate run`, against real servers
# (no npm needed): toolgate's own `serve --stdio` (the echo built-in), the
# same over Streamable HTTP (`serve --http` with a token: token_env, a
# wrong token, a token_env that is not set), and the fixture server
# mcp_tools (tests/fixtures/mcp_tools.c):
# - a lazy source starts at the first call naming its prefix; its tools go
#   through the local checks (unknown tool, schema) before the server;
#   decisions.source names the server, its version and the protocol;
# - a server's isError -> error TOOL_FAILED with its text; structured
#   content checked against the outputSchema; a JSON-RPC error ->
#   INVALID_ARGUMENTS; a deadline -> timeout (started); SIGINT -> canceled
#   (started); a crash mid-call -> INTERRUPTED, and the next run restarts it;
#   a 20 MB result -> an error, memory bounded;
# - a tool with an invalid inputSchema is disabled (denied, with why); an
#   untrusted server's readOnlyHint is not believed, a trusted one's is;
#   a hidden HTML comment is stripped from a description and flagged;
# - pinning: a changed description holds the tool (denied, naming
#   `toolgate mcp accept fx__greet`) until `toolgate mcp accept`; under
#   "pin": "strict" a new tool of a known server is held too;
# - `toolgate serve --stdio` offers a source's tools (a gateway);
# - no server process is left behind.
source "$(dirname "$0")/lib.sh"
mkdir -p ws/.toolgate
FX=$TG_FIXTURES/mcp_tools
mk() { printf '{"id":"%s","tool":"%s","args":%s}\n' "$1" "$2" "$3"; }

# --- toolgate serve --stdio as a source
# its configuration in the workspace (a sandboxed server sees no other
# /tmp), its spool off (toolgate's own files there are hidden from it)
echo '{"builtin_tools":["echo"],"journal":null,"spool":null,"envelope":false}' >ws/inner.json
cat >tg.json <<JSON
{"workspace": "ws", "journal": "ws/.toolgate/j.db", "builtin_tools": [],
 "envelope": false,
 "tools": [{"name": "tg", "mcp": {"command": ["$TOOLGATE", "serve", "--stdio",
            "--config", "$WORK/ws/inner.json"]}}]}
JSON
{
  mk e1 tg__echo '{"text":"hello"}'
  mk e2 tg__nope '{}'
  mk e3 tg__echo '{"x":1}'
} >t1.jsonl
"$TOOLGATE" run --config tg.json --to toolgate t1.jsonl >o1.jsonl
eq "echo through toolgate serve" "$(jq -c 'select(.id=="e1")|[.outcome,.execution,.payload.content[0].text]' o1.jsonl)" \
  '["success","finished","hello"]'
eq "unknown remote tool" "$(jq -r 'select(.id=="e2").payload.error.code' o1.jsonl)" UNKNOWN_TOOL
contains "names the source" "$(jq -r 'select(.id=="e2").payload.error.message' o1.jsonl)" "MCP source 'tg' serves no tool 'nope'"
eq "checked locally first" "$(jq -c 'select(.id=="e3")|[.payload.error.code,.execution]' o1.jsonl)" \
  '["INVALID_ARGUMENTS","not_started"]'
"$TOOLGATE" history --config tg.json --json --tool tg__echo >h1.jsonl
eq "decisions.source" "$(jq -c 'select(.id=="e1").decisions.source|[.name,.tool,.transport,.server.name]' h1.jsonl)" \
  '["tg","echo","stdio","toolgate"]'
check "protocol recorded" test -n "$(jq -r 'select(.id=="e1").decisions.source.protocol' h1.jsonl)"
if bwrap --unshare-user --unshare-pid --unshare-net --ro-bind / / --dev /dev --proc /proc true >/dev/null 2>&1; then
  eq "the server runs in bubblewrap" "$(jq -r 'select(.id=="e1").decisions.source.sandbox' h1.jsonl)" bubblewrap
fi
"$TOOLGATE" mcp list --config tg.json --json >l1.json
eq "mcp list" "$(jq -c '.[0]|[.name,.state]+(.tools[]|select(.remote=="echo")|[.name,.state])' l1.json)" \
  '["tg","ready","tg__echo","enabled"]'

# --- toolgate serve --http as a Streamable HTTP source, with a token
echo "s3cret-$RANDOM" >token
"$TOOLGATE" serve --http 127.0.0.1:0 --token-file token --config ws/inner.json 2>server.err &
spid=$!
check "HTTP server up" wait_for "$(tg_ms 5000)" grep -q "serving MCP on http://" server.err
URL=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' server.err)
cat >http.json <<JSON
{"workspace": "ws", "journal": null, "builtin_tools": [], "envelope": false,
 "tools": [{"name": "web", "mcp": {"url": "$URL", "token_env": "WEB_TOKEN",
            "headers": {"X-Test": "1"}}}]}
JSON
mk h1 web__echo '{"text":"over http"}' >th.jsonl
WEB_TOKEN=$(cat token) "$TOOLGATE" run --config http.json --to toolgate th.jsonl >oh.jsonl
eq "over HTTP" "$(jq -c '[.outcome,.payload.content[0].text]' oh.jsonl)" '["success","over http"]'
WEB_TOKEN=wrong "$TOOLGATE" run --config http.json --to toolgate th.jsonl >oh2.jsonl
eq "wrong token" "$(jq -c '[.outcome,.payload.error.code]' oh2.jsonl)" '["error","SOURCE_UNAVAILABLE"]'
contains "says 401" "$(jq -r '.payload.error.message' oh2.jsonl)" "401"
rc=0
env -u WEB_TOKEN "$TOOLGATE" run --config http.json --to toolgate th.jsonl >/dev/null 2>err3.txt || rc=$?
eq "token_env not set" "$rc" 3
contains "names it" "$(cat err3.txt)" "mcp.token_env names WEB_TOKEN, which is not set"
kill "$spid"
wait "$spid" || true

# --- the fixture server
cat >fx.json <<JSON
{"workspace": "ws", "journal": "ws/.toolgate/fx.db", "builtin_tools": [],
 "envelope": false, "limits": {"timeout_ms": $(tg_ms 1000)},
 "tools": [{"name": "fx", "mcp": {"command": ["$FX"],
            "env_pass": ["MCP_TOOLS_DESC", "MCP_TOOLS_EXTRA"]}}]}
JSON
{
  mk a1 fx__greet '{"name":"bob"}'
  mk a2 fx__fail '{}'
  mk a3 fx__slow '{}'
  mk a4 fx__bad_schema '{}'
  mk a5 fx__count '{"n":3}'
  mk a6 fx__count '{"n":"x"}'
  mk a7 fx__greet '{}'
} >t2.jsonl
t0=$(now_ms)
"$TOOLGATE" run --config fx.json --to toolgate t2.jsonl >o2.jsonl
took=$(($(now_ms) - t0))
eq "success" "$(jq -c 'select(.id=="a1")|[.outcome,.payload.content[0].text]' o2.jsonl)" '["success","hello bob"]'
eq "isError" "$(jq -c 'select(.id=="a2")|[.outcome,.execution,.payload.error.code,.payload.error.message]' o2.jsonl)" \
  '["error","finished","TOOL_FAILED","it broke"]'
eq "deadline" "$(jq -c 'select(.id=="a3")|[.outcome,.execution]' o2.jsonl)" '["timeout","started"]'
check "the deadline bounds the run ($took ms)" test "$took" -lt "$(tg_ms 8000)"
eq "invalid schema: denied" "$(jq -r 'select(.id=="a4").outcome' o2.jsonl)" denied
contains "with why" "$(jq -r 'select(.id=="a4").payload.denied.reason' o2.jsonl)" "inputSchema is not a valid JSON Schema"
eq "structured content" "$(jq -c 'select(.id=="a5").payload' o2.jsonl)" '{"n":3}'
eq "against the outputSchema" "$(jq -r 'select(.id=="a6").payload.error.code' o2.jsonl)" INVALID_OUTPUT
eq "required property checked locally" "$(jq -r 'select(.id=="a7").payload.error.code' o2.jsonl)" INVALID_ARGUMENTS

# untrusted: the server's hints dropped; the HTML comment stripped, flagged
"$TOOLGATE" tools --config fx.json >tools.json
eq "untrusted hints dropped" "$(jq -c '.tools[]|select(.name=="fx__rm").annotations' tools.json)" '{"title":"Remove"}'
eq "comment stripped" "$(jq -r '.tools[]|select(.name=="fx__rm").description' tools.json)" "Removes a file"
eq "disabled tool not listed" "$(jq '[.tools[]|select(.name=="fx__bad_schema")]|length' tools.json)" 0
"$TOOLGATE" mcp list --config fx.json --json >l2.json
eq "flagged" "$(jq -c '.[0].tools[]|select(.name=="fx__rm").flags[0]|[.pointer,.found[0]]' l2.json)" \
  '["/description","html-comment"]'
sed 's/"env_pass"/"trusted": true, "env_pass"/' fx.json >fxt.json
"$TOOLGATE" tools --config fxt.json >tools_t.json
eq "trusted hints kept" "$(jq -c '.tools[]|select(.name=="fx__rm").annotations.readOnlyHint' tools_t.json)" true

# the policy judges an untrusted server's rm by the MCP defaults: an
# "allow read-only" rule does not let it through; trusted, it does
"$TOOLGATE" mcp tools fx --config fx.json >raw.json
contains "raw definitions as served" "$(jq -r '.[]|select(.name=="rm").description' raw.json)" "<!--"
POL='"policy": {"default": "deny", "rules": [{"annotations": {"readOnlyHint": true}, "decision": "allow"}]},'
sed "s/\"builtin_tools\": \[\],/\"builtin_tools\": [], $POL/" fx.json >fxp.json
sed "s/\"builtin_tools\": \[\],/\"builtin_tools\": [], $POL/" fxt.json >fxpt.json
mk r0 fx__rm '{}' >t3p.jsonl
"$TOOLGATE" run --config fxp.json --to toolgate t3p.jsonl >o3p.jsonl
eq "untrusted rm is not read-only to the policy" "$(jq -r .outcome o3p.jsonl)" denied
"$TOOLGATE" run --config fxpt.json --to toolgate t3p.jsonl >o3pt.jsonl
eq "trusted rm is" "$(jq -r .outcome o3pt.jsonl)" success
mk r1 fx__rm '{}' >t3.jsonl
"$TOOLGATE" run --config fx.json --to toolgate t3.jsonl >o3.jsonl
eq "rm answered" "$(jq -r '.payload.content[0].text' o3.jsonl)" removed

# SIGINT mid-call: canceled, execution started
sed "s/\"timeout_ms\": [0-9]*/\"timeout_ms\": $(tg_ms 30000)/" fx.json >fxlong.json
mk s1 fx__slow '{}' >t4.jsonl
"$TOOLGATE" run --config fxlong.json --to toolgate t4.jsonl >o4.jsonl &
pid=$!
wait_for "$(tg_ms 10000)" grep -q . /dev/null || true
sleep 0.5
for _ in $(seq 1 50); do
  pgrep -P "$pid" >/dev/null && break
  sleep 0.1
done
sleep 0.3
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
eq "exit after SIGINT" "$rc" 0
eq "canceled" "$(jq -c '[.outcome,.execution,.payload.canceled.by]' o4.jsonl)" '["canceled","started","user"]'

# a crash mid-call: INTERRUPTED; the next run starts the server again
mk c1 fx__crash '{}' >t5.jsonl
"$TOOLGATE" run --config fx.json --to toolgate t5.jsonl >o5.jsonl
eq "crash" "$(jq -c '[.outcome,.execution,.payload.error.code]' o5.jsonl)" '["error","started","INTERRUPTED"]'
contains "why" "$(jq -r '.payload.error.message' o5.jsonl)" "status 7"

# a result over the message limit: an error, memory bounded
mk b1 fx__big '{"n":20000000}' >t6.jsonl
/usr/bin/time -f %M -o rss.txt "$TOOLGATE" run --config fxlong.json --to toolgate t6.jsonl >o6.jsonl
eq "big result" "$(jq -c '[.outcome,.payload.error.code]' o6.jsonl)" '["error","INTERRUPTED"]'
contains "over the limit" "$(jq -r '.payload.error.message' o6.jsonl)" "over the limit"
check "memory bounded ($(cat rss.txt) kB)" test "$(cat rss.txt)" -lt 200000

# pinning: a changed description holds the tool until accepted
mk p1 fx__greet '{"name":"p"}' >t7.jsonl
MCP_TOOLS_DESC=changed "$TOOLGATE" run --config fx.json --to toolgate t7.jsonl >o7.jsonl
eq "held" "$(jq -r '.outcome' o7.jsonl)" denied
contains "names mcp accept" "$(jq -r '.payload.denied.reason' o7.jsonl)" 'toolgate mcp accept fx__greet'
MCP_TOOLS_DESC=changed "$TOOLGATE" mcp list --config fx.json --json >l3.json
eq "mcp list: held, pin changed" "$(jq -c '.[0].tools[]|select(.remote=="greet")|[.state,.pin]' l3.json)" '["held","changed"]'
eq "mcp list: the others pinned" "$(jq -c '.[0].tools[]|select(.remote=="fail")|[.state,.pin]' l3.json)" '["enabled","pinned"]'
MCP_TOOLS_DESC=changed "$TOOLGATE" tools --config fx.json >tools2.json
eq "held tool not listed" "$(jq '[.tools[]|select(.name=="fx__greet")]|length' tools2.json)" 0
MCP_TOOLS_DESC=changed "$TOOLGATE" mcp accept fx__greet --dry-run --config fx.json >diff.txt
contains "diff shown" "$(cat diff.txt)" '+   "description": "Says hello changed",'
MCP_TOOLS_DESC=changed "$TOOLGATE" mcp accept fx__greet --config fx.json >acc.txt
contains "accepted" "$(cat acc.txt)" "accepted fx__greet"
mk p2 fx__greet '{"name":"q"}' >t8.jsonl
MCP_TOOLS_DESC=changed "$TOOLGATE" run --config fx.json --to toolgate t8.jsonl >o8.jsonl
eq "enabled once accepted" "$(jq -c '[.outcome,.payload.content[0].text]' o8.jsonl)" '["success","hello q"]'
mk p3 fx__greet '{"name":"r"}' >t9.jsonl
"$TOOLGATE" run --config fx.json --to toolgate t9.jsonl >o9.jsonl
eq "the old one is a change again" "$(jq -r '.outcome' o9.jsonl)" denied

# strict: a new tool of a known server is held; "on" lets it in
mk n1 fx__extra '{}' >t10.jsonl
MCP_TOOLS_EXTRA=1 MCP_TOOLS_DESC=changed "$TOOLGATE" run --config fx.json --to toolgate t10.jsonl >o10.jsonl
# it goes through to the server, which answers with a JSON-RPC error
eq "new tool under on" "$(jq -c '[.outcome,.execution,.payload.error.code]' o10.jsonl)" \
  '["error","started","INVALID_ARGUMENTS"]'
contains "the server's message" "$(jq -r '.payload.error.message' o10.jsonl)" "no tool by that name"
sed -e 's/"env_pass"/"pin": "strict", "env_pass"/' -e 's#fx.db#fxs.db#' fx.json >fxs.json
mk n2 fx__greet '{"name":"s"}' >t11.jsonl
"$TOOLGATE" run --config fxs.json --to toolgate t11.jsonl >o11.jsonl
eq "first contact under strict" "$(jq -r '.outcome' o11.jsonl)" success
mk n3 fx__extra '{}' >t12.jsonl
MCP_TOOLS_EXTRA=1 "$TOOLGATE" run --config fxs.json --to toolgate t12.jsonl >o12.jsonl
eq "new tool under strict" "$(jq -r '.outcome' o12.jsonl)" denied
contains "held new" "$(jq -r '.payload.denied.reason' o12.jsonl)" "toolgate mcp accept fx__extra"

# journal off: pins last for the runtime only (a fresh run pins again)
sed 's#"ws/.toolgate/fx.db"#null#' fx.json >fxn.json
MCP_TOOLS_DESC=other "$TOOLGATE" run --config fxn.json --to toolgate t9.jsonl >o13.jsonl
eq "journal off: first sight" "$(jq -r '.outcome' o13.jsonl)" success

# a name taken after prefixing, and tools past max_tools: disabled, saying
# why (the command tool keeps its name)
cat >clash.json <<JSON
{"workspace": "ws", "journal": null, "builtin_tools": [], "envelope": false,
 "tools": [{"name": "fx__greet", "command": ["/bin/echo", "mine"]},
           {"name": "fx", "mcp": {"command": ["$FX"], "max_tools": 3}}]}
JSON
"$TOOLGATE" mcp list --config clash.json --json >clash.out
eq "clash: ready" "$(jq -c '.[0]|[.state,.error]' clash.out)" '["ready",null]'
contains "collision" "$(jq -r '.[0].tools[]|select(.remote=="greet").reason' clash.out)" "its name 'fx__greet' is taken by another tool"
eq "past max_tools" "$(jq -r '.[0].tools[]|select(.remote=="rm").state' clash.out)" disabled
contains "says the cap" "$(jq -r '.[0].tools[]|select(.remote=="rm").reason' clash.out)" "more than mcp.max_tools (3)"
eq "within it" "$(jq -r '.[0].tools[]|select(.remote=="fail").state' clash.out)" enabled
mk k1 fx__greet '{}' >tk.jsonl
"$TOOLGATE" run --config clash.json --to toolgate tk.jsonl >ok.jsonl
eq "the command tool keeps its name" "$(jq -r '.payload' ok.jsonl)" mine

# config errors
cat >bad.json <<JSON
{"tools": [{"name": "x", "mcp": {"command": ["$FX"], "roots": ["/"]}}]}
JSON
rc=0
"$TOOLGATE" tools --config bad.json >/dev/null 2>err.txt || rc=$?
eq "root / refused" "$rc" 3
contains "says why" "$(cat err.txt)" "tools[0].mcp.roots"
echo '{"tools": [{"name": "x", "mcp": {"url": "ftp://x"}}]}' >bad2.json
rc=0
"$TOOLGATE" tools --config bad2.json >/dev/null 2>err2.txt || rc=$?
eq "url refused" "$rc" 3
contains "url" "$(cat err2.txt)" "tools[0].mcp.url must be an http:// or https:// URL"

# toolgate serve as a gateway: the sources' tools offered (not the
# disabled one), a call through it served by the fixture
cat >gw.json <<JSON
{"workspace": "ws", "journal": null, "builtin_tools": [], "envelope": false,
 "tools": [{"name": "fx", "mcp": {"command": ["$FX"]}}]}
JSON
printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fx__greet","arguments":{"name":"gw"}}}' |
  timeout "$(tg_s 20)" "$TOOLGATE" serve --stdio --config gw.json >gw.out
eq "gateway lists fx__greet" "$(jq 'select(.id==2)|.result.tools|map(.name)|index("fx__greet") != null' gw.out)" true
eq "gateway hides the disabled tool" "$(jq 'select(.id==2)|.result.tools|map(select(.name=="fx__bad_schema"))|length' gw.out)" 0
eq "call through the gateway" "$(jq -r 'select(.id==3)|.result.content[0].text' gw.out)" "hello gw"
eq "the gateway says its list may change" "$(jq -c 'select(.id==1)|.result.capabilities.tools.listChanged' gw.out)" true

# A source's list changes while the gateway serves (the fixture's grow lists
# one more tool and says so): the gateway re-lists it, tells its client
# (notifications/tools/list_changed) and then lists the new tool.
source "$TG_SOURCE_DIR/tests/cli/serve_lib.sh"
coproc GW { exec "$TOOLGATE" serve --stdio --config gw.json 2>gw2.err; }
GWPID=$GW_PID
IN=${GW[1]}
OUT=${GW[0]}
send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
r=$(read_id 1)
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
send '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
r=$(read_id 2)
eq "before: no fx__grown" "$(jq -c '[.result.tools[].name | select(. == "fx__grown")]' <<<"$r")" '[]'
send '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fx__grow","arguments":{}}}'
r=$(read_id 3)
eq "grow answered" "$(jq -r '.result.content[0].text' <<<"$r")" "grown"
changed() { # the gateway's notifications/tools/list_changed, read or to come
  jq -e 'select(.method == "notifications/tools/list_changed")' notes.jsonl >/dev/null ||
    read_request_or_note notifications/tools/list_changed >/dev/null
}
check "the client is told the list changed" changed
send '{"jsonrpc":"2.0","id":4,"method":"tools/list"}'
r=$(read_id 4)
eq "after: fx__grown listed" "$(jq -c '[.result.tools[].name | select(. == "fx__grown")]' <<<"$r")" '["fx__grown"]'
send '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fx__grown","arguments":{}}}'
r=$(read_id 5)
eq "the new tool answers" "$(jq -r '.result.content[0].text' <<<"$r")" "I am new"
exec {IN}>&-
wait "$GWPID" || true

# no server left running
sleep 0.2
eq "no server left" "$(in_dir "$WORK/ws")" 0
finish
