#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_serve_tasks.sh - long calls as tasks in `toolgate serve --stdio`:
# 2025-11-25's core tasks (a tools/call with a `task` param answered at
# once, tasks/get while it works, tasks/result after, notifications/tasks/
# status, tasks/list, tasks/cancel killing the tool's process, a failed
# task, ttl expiry, unknown ids) and 2026-07-28's io.modelcontextprotocol/
# tasks extension (discover, a fast call answered plainly, a slow one
# becoming a task, tasks/get with the result inside, tasks/cancel, the
# extension required; serve.task_after_ms setting when a call becomes
# one); and that tasks are durable and private: a task's
# result is still there after the server restarted, a task running when
# the server was SIGKILLed is INTERRUPTED after the restart, and another
# caller sees none of them.
source "$(dirname "$0")/lib.sh"
source "$TG_SOURCE_DIR/tests/cli/serve_lib.sh"

mkdir -p ws
cat > toolgate.json <<EOF
{"workspace": "ws", "journal": ".toolgate/journal.db", "sandbox": {"mode": "off"},
 "builtin_tools": ["echo"],
 "tools": [
  {"name": "say", "command": ["/bin/echo", "{text}"]},
  {"name": "slow", "command": ["/bin/sh", "-c",
     "echo \$\$ > \"\$0\"; sleep \"\$1\"; echo \"finished \$2\"", "{file}", "{secs}", "{text}"]},
  {"name": "fail", "command": ["$TG_FIXTURES/exit_code", "{code}"]},
  {"name": "guarded", "command": ["/bin/echo", "ran", "{what}"]}
 ],
 "policy": {"default": "allow",
            "rules": [{"tool": "guarded", "decision": "ask", "reason": "guarded needs a yes"}]}}
EOF

# A tool that sleeps well past the checks made while it works.
SECS=$(($(tg_ms 3000) / 1000))
start_server() { # start_server [serve options]: a fresh coproc
  coproc SRV { exec "$TOOLGATE" serve --stdio --trace trace.jsonl "$@" 2>>server.err; }
  SRVPID=$SRV_PID
  IN=${SRV[1]}
  OUT=${SRV[0]}
  : >notes.jsonl
}
stop_server() { # EOF: a clean shutdown
  exec {IN}>&-
  local status=0
  wait "$SRVPID" || status=$?
  eq "clean exit" "$status" "0"
}
init_2025() {
  send '{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
  r=$(read_id '"init"')
  send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
}
rpc() { # rpc ID METHOD PARAMS: sends, prints the response
  send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"$2\",\"params\":$3}"
  read_id "$1"
}
gone() { ! kill -0 "$1" 2>/dev/null; }

# ---------------------------------------------------------------- 2025-11-25
start_server
init_2025
eq "tasks capability" "$(jq -c '.result.capabilities.tasks' <<<"$r")" '{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}'
r=$(rpc 1 tools/list '{}')
eq "tools may run as tasks" "$(jq -c '[.result.tools[].execution.taskSupport] | unique' <<<"$r")" '["optional"]'

t0=$(now_ms)
r=$(rpc 2 tools/call '{"name":"slow","arguments":{"file":"'"$WORK"'/pid1","secs":"'"$SECS"'","text":"one"},"task":{"ttl":600000}}')
T1=$(jq -r '.result.task.taskId' <<<"$r")
eq "a task at once" "$(jq -r '.result.task.status' <<<"$r")" "working"
check "the CreateTaskResult came before the tool ended" test $(($(now_ms) - t0)) -lt $((SECS * 1000))
check "task ids are 128 random bits" grep -Eq '^[0-9a-f]{32}$' <<<"$T1"
eq "ttl as asked" "$(jq -c '.result.task.ttl' <<<"$r")" "600000"
check "createdAt is ISO 8601" grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$' <<<"$(jq -r '.result.task.createdAt' <<<"$r")"
r=$(rpc 3 tasks/get '{"taskId":"'"$T1"'"}')
eq "get while it works" "$(jq -r '.result.status' <<<"$r")" "working"
r=$(rpc 4 tasks/result '{"taskId":"'"$T1"'"}')
contains "result: the tool's output" "$(jq -r '.result.content[0].text' <<<"$r")" "finished one"
eq "result: not an error" "$(jq -c '.result.isError' <<<"$r")" "false"
eq "result: related task" "$(jq -r '.result._meta["io.modelcontextprotocol/related-task"].taskId' <<<"$r")" "$T1"
RESULT1=$(jq -c '.result.content' <<<"$r")
eq "status notification" "$(jq -s -c '[.[] | select(.method=="notifications/tasks/status") | .params | [.taskId == "'"$T1"'", .status]]' notes.jsonl)" '[[true,"completed"]]'
r=$(rpc 5 tasks/get '{"taskId":"'"$T1"'"}')
eq "completed" "$(jq -r '.result.status' <<<"$r")" "completed"

# cancel: the tool's process is killed
r=$(rpc 10 tools/call '{"name":"slow","arguments":{"file":"'"$WORK"'/pid2","secs":"600","text":"two"},"task":{}}')
T2=$(jq -r '.result.task.taskId' <<<"$r")
check "the tool started" wait_for "$(tg_ms 10000)" test -s "$WORK/pid2"
pid=$(cat "$WORK/pid2")
r=$(rpc 11 tasks/cancel '{"taskId":"'"$T2"'"}')
eq "cancel answers the task" "$(jq -r '.result.status' <<<"$r")" "cancelled"
check "the tool's process is gone" wait_for "$(tg_ms 10000)" gone "$pid"
r=$(rpc 12 tasks/result '{"taskId":"'"$T2"'"}')
eq "a cancelled call's result" "$(jq -c '[.result.isError, .result._meta["io.toolgate/result"].outcome]' <<<"$r")" '[true,"canceled"]'
r=$(rpc 13 tasks/get '{"taskId":"'"$T2"'"}')
eq "cancelled" "$(jq -r '.result.status' <<<"$r")" "cancelled"
r=$(rpc 14 tasks/cancel '{"taskId":"'"$T2"'"}')
eq "cancel of an ended task" "$(jq -c '.error.code' <<<"$r")" "-32602"

# an isError result is a failed task
r=$(rpc 20 tools/call '{"name":"fail","arguments":{"code":"3"},"task":{}}')
T3=$(jq -r '.result.task.taskId' <<<"$r")
r=$(rpc 21 tasks/result '{"taskId":"'"$T3"'"}')
contains "failed call's text" "$(jq -r '.result.content[0].text' <<<"$r")" "exited with status 3"
r=$(rpc 22 tasks/get '{"taskId":"'"$T3"'"}')
eq "failed" "$(jq -r '.result.status' <<<"$r")" "failed"

# ttl: gone once it passed
r=$(rpc 30 tools/call '{"name":"say","arguments":{"text":"brief"},"task":{"ttl":300}}')
T4=$(jq -r '.result.task.taskId' <<<"$r")
sleep 0.5
r=$(rpc 31 tasks/get '{"taskId":"'"$T4"'"}')
eq "expired" "$(jq -c '.error.code' <<<"$r")" "-32602"

r=$(rpc 32 tasks/get '{"taskId":"0123456789abcdef0123456789abcdef"}')
eq "unknown task" "$(jq -c '.error.code' <<<"$r")" "-32602"
r=$(rpc 33 tasks/get '{}')
eq "no task id" "$(jq -c '.error.code' <<<"$r")" "-32602"
r=$(rpc 34 tools/call '{"name":"nope","arguments":{},"task":{}}')
eq "unknown tool: no task" "$(jq -c '.error.code' <<<"$r")" "-32602"

r=$(rpc 40 tasks/list '{}')
eq "list: the caller's tasks in order" "$(jq -c '[.result.tasks[].taskId]' <<<"$r")" "[\"$T1\",\"$T2\",\"$T3\"]"
eq "list: their states" "$(jq -c '[.result.tasks[].status]' <<<"$r")" '["completed","cancelled","failed"]'
r=$(rpc 41 tasks/list '{"cursor":"bogus"}')
eq "bad cursor" "$(jq -c '.error.code' <<<"$r")" "-32602"
stop_server

# ------------------------------------- 2025-11-25: a task's call is asked
# A policy `ask` of a call that runs as a task: the task shows
# input_required, the question (elicitation/create naming the task) goes to
# the session and with every tasks/result, and the answer runs the call or
# denies it.
start_server
send '{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}'
r=$(read_id '"init"')
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
r=$(rpc 70 tools/call '{"name":"guarded","arguments":{"what":"yes"},"task":{}}')
T6=$(jq -r '.result.task.taskId' <<<"$r")
eq "asked: a task at once" "$(jq -r '.result.task.status' <<<"$r")" "working"
q=$(read_request)
eq "the question" "$(jq -r '.method' <<<"$q")" "elicitation/create"
eq "it names its task" "$(jq -r '.params._meta["io.modelcontextprotocol/related-task"].taskId' <<<"$q")" "$T6"
contains "it names the tool" "$(jq -r '.params.message' <<<"$q")" "guarded"
r=$(rpc 71 tasks/get '{"taskId":"'"$T6"'"}')
eq "input_required while it waits" "$(jq -r '.result.status' <<<"$r")" "input_required"
eq "status notification: input_required" "$(jq -s -c '[.[] | select(.method=="notifications/tasks/status") | .params | select(.taskId == "'"$T6"'") | .status]' notes.jsonl)" '["input_required"]'
send "{\"jsonrpc\":\"2.0\",\"id\":$(jq -c .id <<<"$q"),\"result\":{\"action\":\"accept\",\"content\":{}}}"
r=$(rpc 72 tasks/result '{"taskId":"'"$T6"'"}')
contains "accepted: it ran" "$(jq -r '.result.content[0].text' <<<"$r")" "ran yes"
eq "accepted: success" "$(jq -r '.result._meta["io.toolgate/result"].outcome' <<<"$r")" "success"
# the question comes with a tasks/result that waits; declined: denied
r=$(rpc 73 tools/call '{"name":"guarded","arguments":{"what":"no"},"task":{}}')
T7=$(jq -r '.result.task.taskId' <<<"$r")
q=$(read_request)
send '{"jsonrpc":"2.0","id":74,"method":"tasks/result","params":{"taskId":"'"$T7"'"}}'
q2=$(read_request)
eq "asked again with the wait" "$(jq -c .id <<<"$q2")" "$(jq -c .id <<<"$q")"
send "{\"jsonrpc\":\"2.0\",\"id\":$(jq -c .id <<<"$q"),\"result\":{\"action\":\"decline\"}}"
r=$(read_id 74)
eq "declined: denied" "$(jq -r '.result._meta["io.toolgate/result"].outcome' <<<"$r")" "denied"
contains "who said no" "$(jq -r '.result.content[0].text' <<<"$r")" "declined"
r=$(rpc 75 tasks/get '{"taskId":"'"$T7"'"}')
eq "a denied task failed" "$(jq -r '.result.status' <<<"$r")" "failed"
stop_server
# a client that cannot ask its user: denied, saying why
start_server
init_2025
r=$(rpc 76 tools/call '{"name":"guarded","arguments":{"what":"x"},"task":{}}')
T8=$(jq -r '.result.task.taskId' <<<"$r")
r=$(rpc 77 tasks/result '{"taskId":"'"$T8"'"}')
eq "no elicitation: denied" "$(jq -r '.result._meta["io.toolgate/result"].outcome' <<<"$r")" "denied"
contains "no elicitation: why" "$(jq -r '.result.content[0].text' <<<"$r")" "elicitation"
stop_server

# ------------------------------------------------------ restart: still there
start_server
init_2025
r=$(rpc 50 tasks/result '{"taskId":"'"$T1"'"}')
eq "the result after a restart" "$(jq -c '.result.content' <<<"$r")" "$RESULT1"
r=$(rpc 51 tasks/get '{"taskId":"'"$T2"'"}')
eq "a cancelled task after a restart" "$(jq -r '.result.status' <<<"$r")" "cancelled"

# a task running when the server dies
r=$(rpc 52 tools/call '{"name":"slow","arguments":{"file":"'"$WORK"'/pid3","secs":"600","text":"three"},"task":{}}')
T5=$(jq -r '.result.task.taskId' <<<"$r")
check "the tool started" wait_for "$(tg_ms 10000)" test -s "$WORK/pid3"
kill -KILL "$SRVPID"
wait "$SRVPID" 2>/dev/null || true
pkill -KILL -g "$(ps -o pgid= "$(cat "$WORK/pid3")" | tr -d ' ')" 2>/dev/null || true

start_server
init_2025
r=$(rpc 60 tasks/get '{"taskId":"'"$T5"'"}')
eq "interrupted: failed" "$(jq -r '.result.status' <<<"$r")" "failed"
r=$(rpc 61 tasks/result '{"taskId":"'"$T5"'"}')
contains "interrupted: the journal's word" "$(jq -r '.result.content[0].text' <<<"$r")" "INTERRUPTED"
eq "interrupted: an error" "$(jq -c '.result.isError' <<<"$r")" "true"

# ---------------------------------------------------------------- 2026-07-28
EXT='"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}'
META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'"$EXT"'}'
PLAIN='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
r=$(rpc 70 server/discover "{$META}")
eq "discover names the extension" "$(jq -c '.result.capabilities.extensions' <<<"$r")" '{"io.modelcontextprotocol/tasks":{}}'
r=$(rpc 71 server/discover "{$PLAIN}")
eq "not to a client without it" "$(jq -c '.result.capabilities.extensions' <<<"$r")" "null"
# (the in-process echo: no process to start, so "fast" holds under any load
# against the default 1 s before a call becomes a task)
r=$(rpc 72 tools/call '{"name":"echo","arguments":{"text":"quick"},'"$META"'}')
eq "a fast call is answered plainly" "$(jq -r '.result.resultType' <<<"$r")" "complete"
r=$(rpc 73 tools/call '{"name":"slow","arguments":{"file":"'"$WORK"'/pid4","secs":"'"$SECS"'","text":"four"},'"$META"'}')
eq "a slow call becomes a task" "$(jq -r '.result.resultType' <<<"$r")" "task"
T6=$(jq -r '.result.taskId' <<<"$r")
eq "2026 shape" "$(jq -c '[.result.status, (.result.ttlMs|type), (.result.pollIntervalMs|type), (.result._meta["io.modelcontextprotocol/serverInfo"].name)]' <<<"$r")" '["working","number","number","toolgate"]'
r=$(rpc 74 tasks/get '{"taskId":"'"$T6"'",'"$META"'}')
eq "2026 get while it works" "$(jq -c '[.result.resultType, .result.status]' <<<"$r")" '["complete","working"]'
done_2026() {
  r=$(rpc "\"g$RANDOM\"" tasks/get '{"taskId":"'"$1"'",'"$META"'}')
  [ "$(jq -r '.result.status' <<<"$r")" == "$2" ]
}
check "2026 task completes" wait_for "$(tg_ms 20000)" done_2026 "$T6" completed
contains "2026 result inside" "$(jq -r '.result.result.content[0].text' <<<"$r")" "finished four"
r=$(rpc 75 tasks/get '{"taskId":"'"$T6"'",'"$PLAIN"'}')
eq "the extension is required" "$(jq -c '[.error.code, .error.data.requiredCapabilities.extensions]' <<<"$r")" '[-32021,{"io.modelcontextprotocol/tasks":{}}]'
r=$(rpc 76 tasks/list "{$META}")
eq "no tasks/list in the extension" "$(jq -c '.error.code' <<<"$r")" "-32601"
r=$(rpc 77 tasks/get '{"taskId":"ffffffffffffffffffffffffffffffff",'"$META"'}')
eq "2026 unknown task" "$(jq -c '.error.code' <<<"$r")" "-32602"
r=$(rpc 78 tools/call '{"name":"slow","arguments":{"file":"'"$WORK"'/pid5","secs":"600","text":"five"},'"$META"'}')
T7=$(jq -r '.result.taskId' <<<"$r")
pid=$(cat "$WORK/pid5")
r=$(rpc 79 tasks/cancel '{"taskId":"'"$T7"'",'"$META"'}')
eq "2026 cancel: an empty ack" "$(jq -c '.result | del(._meta)' <<<"$r")" '{"resultType":"complete"}'
check "2026: the tool's process is gone" wait_for "$(tg_ms 10000)" gone "$pid"
check "2026 task cancelled" wait_for "$(tg_ms 10000)" done_2026 "$T7" cancelled
r=$(rpc 81 tasks/cancel '{"taskId":"'"$T7"'",'"$META"'}')
eq "2026 cancel of an ended task: the same ack" "$(jq -c '.result | del(._meta)' <<<"$r")" '{"resultType":"complete"}'
r=$(rpc 80 tasks/update '{"taskId":"'"$T6"'","inputResponses":{},'"$META"'}')
eq "2026 update: an ack" "$(jq -r '.result.resultType' <<<"$r")" "complete"
stop_server

start_server
r=$(rpc 90 tasks/get '{"taskId":"'"$T6"'",'"$META"'}')
eq "2026 task after a restart" "$(jq -c '[.result.status, (.result.result.content[0].text | contains("finished four"))]' <<<"$r")" '["completed",true]'
stop_server

# ------------------------------------------------------ serve.task_after_ms
# Set low (50 ms), a call of D1 = 300 ms becomes a task; set high (H =
# 6 s), a call of D2 = 1.5 s is answered plainly. Each is the other way
# round under the default 1 s (on this machine's scale 1), and each holds
# with a margin of 4x or more at any TG_TEST_TIME_SCALE (D1, D2 and H grow
# with it; 50 ms only gets further below D1).
secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
D1_MS=$(tg_ms 300) D2_MS=$(tg_ms 1500) H_MS=$(tg_ms 6000)
jq '.serve = {"task_after_ms": 50}' toolgate.json > low.json
jq --argjson h "$H_MS" '.serve = {"task_after_ms": $h}' toolgate.json > high.json
start_server --config low.json
r=$(rpc 82 tools/call '{"name":"slow","arguments":{"file":"'"$WORK"'/pid6","secs":"'"$(secs "$D1_MS")"'","text":"six"},'"$META"'}')
eq "task_after_ms 50: a call of $D1_MS ms becomes a task" "$(jq -r '.result.resultType' <<<"$r")" "task"
T8=$(jq -r '.result.taskId' <<<"$r")
check "and completes" wait_for "$(tg_ms 20000)" done_2026 "$T8" completed
contains "with its result inside" "$(jq -r '.result.result.content[0].text' <<<"$r")" "finished six"
stop_server
start_server --config high.json
r=$(rpc 83 tools/call '{"name":"slow","arguments":{"file":"'"$WORK"'/pid7","secs":"'"$(secs "$D2_MS")"'","text":"seven"},'"$META"'}')
eq "task_after_ms $H_MS: a call of $D2_MS ms is answered plainly" "$(jq -r '.result.resultType' <<<"$r")" "complete"
contains "with its result" "$(jq -r '.result.content[0].text' <<<"$r")" "finished seven"
stop_server
echo '{"serve": {"task_after_ms": 3600001}}' > bad.json
out=$("$TOOLGATE" serve --stdio --config bad.json </dev/null 2>&1) && status=0 || status=$?
eq "an out-of-range task_after_ms: exit 3" "$status" "3"
contains "saying which key" "$out" "serve.task_after_ms must be an integer from 0 to 3600000, got 3600001"

# ------------------------------------------------------------ another caller
start_server --caller intruder
init_2025
r=$(rpc 100 tasks/get '{"taskId":"'"$T1"'"}')
eq "another caller's task is unknown" "$(jq -c '.error.code' <<<"$r")" "-32602"
r=$(rpc 101 tasks/result '{"taskId":"'"$T1"'"}')
eq "and its result too" "$(jq -c '.error.code' <<<"$r")" "-32602"
r=$(rpc 102 tasks/list '{}')
eq "another caller lists none" "$(jq -c '.result.tasks' <<<"$r")" "[]"
r=$(rpc 103 tasks/cancel '{"taskId":"'"$T6"'"}')
eq "nor cancels one" "$(jq -c '.error.code' <<<"$r")" "-32602"
stop_server

# 2025-06-18 has no tasks
start_server
send '{"jsonrpc":"2.0","id":"i6","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
r=$(read_id '"i6"')
eq "no tasks capability in 2025-06-18" "$(jq -c '.result.capabilities.tasks' <<<"$r")" "null"
r=$(rpc 110 tasks/get '{"taskId":"'"$T1"'"}')
eq "no tasks methods in 2025-06-18" "$(jq -c '.error.code' <<<"$r")" "-32601"
r=$(rpc 111 tools/call '{"name":"say","arguments":{"text":"x"},"task":{}}')
eq "task param ignored in 2025-06-18" "$(jq -c '.result.content[0].text' <<<"$r" | grep -c x)" "1"
stop_server

# every message the servers sent validates against its version's schema
check "the messages validate ($(wc -l <trace.jsonl) of them)" "$TG_FIXTURES/mcp_check" trace.jsonl

finish
