#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checking arguments has a bounded cost and never deafens toolgate: the
# recursive oneOf of issue 14 (28 levels, 1.1 KB) gets its verdict at once;
# arguments that need more than limits.max_validation_steps end
# SCHEMA_TOO_COSTLY, as does a schema pattern that backtracks without end;
# a policy regex at its match limit denies; SIGTERM while checks run on the
# thread pool ends toolgate promptly with every call canceled and printed.
source "$(dirname "$0")/lib.sh"
mkdir ws

# --- the example: a recursive oneOf whose nodes match both branches
tree='{"$defs":{"node":{"type":"object","oneOf":[
  {"required":["name"],"properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}},
  {"required":["id"],"properties":{"id":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}]}},
  "type":"object","properties":{"root":{"$ref":"#/$defs/node"}},"required":["root"]}'
cat >toolgate.json <<JSON
{"workspace": "ws", "journal": "j.db",
 "tools": [{"name": "tree", "command": ["/bin/echo", "ran"], "input_schema": $tree}]}
JSON
node() { # node DEPTH MEMBERS LEAF
  local s=$3
  for _ in $(seq "$1"); do s="{$2,\"children\":[$s]}"; done
  printf '%s' "$s"
}
both=$(node 28 '"name":"node","id":"n1"' '{"name":"node","id":"n1"}')
one=$(node 28 '"id":"n1"' '{"name":"node"}')
check "the example is about 1.1 KB" test "${#both}" -gt 1000
{ printf '{"id":"both","tool":"tree","args":{"root":%s}}\n' "$both"
  printf '{"id":"one","tool":"tree","args":{"root":%s}}\n' "$one"
} >tree.jsonl
t0=$(now_ms)
"$TOOLGATE" run tree.jsonl >out.jsonl
took=$(( $(now_ms) - t0 ))
# It took minutes before; the verdict now takes microseconds, and the
# whole run (start, journal, two calls) well under a second.
echo "the example, whole run: ${took} ms"
check "the example is checked at once (${took} ms)" test "$took" -lt "$(tg_ms 3000)"
eq "verdicts" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "error success "
eq "both branches match every node" "$(jq -r 'select(.id=="both").payload.error.message' out.jsonl)" \
  "invalid arguments for tool 'tree': /root must match exactly one of the 2 schemas in oneOf, matched 0"

# --- a costly shape over the default budget: SCHEMA_TOO_COSTLY
python3 - <<'PY'
import json
wide = {"type": "object", "properties": {"v": {"type": "array", "items": {
    "anyOf": [{"type": "string", "minLength": k} for k in range(2000)] + [{"type": "integer"}]}}}}
json.dump(wide, open("wide.schema.json", "w"))
with open("wide.jsonl", "w") as f:
    for k in range(3):
        f.write(json.dumps({"id": "w%d" % k, "tool": "wide", "args": {"v": [0] * 150000}}) + "\n")
PY
wide_config() { # wide_config LIMITS
  cat >toolgate.json <<JSON
{"workspace": "ws", "journal": "j.db", "limits": {$1},
 "tools": [{"name": "wide", "command": ["/bin/sh", "-c", "echo ran >> ran.txt"],
            "input_schema": $(cat wide.schema.json)}]}
JSON
}
wide_config '"max_args_bytes": 4194304'
"$TOOLGATE" run wide.jsonl >out.jsonl
eq "too costly, each" "$(jq -r .payload.error.code out.jsonl | tr '\n' ' ')" "SCHEMA_TOO_COSTLY SCHEMA_TOO_COSTLY SCHEMA_TOO_COSTLY "
eq "not started" "$(jq -r .execution out.jsonl | sort -u)" not_started
contains "the message names the limit" "$(jq -r 'select(.id=="w0").payload.error.message' out.jsonl)" \
  "checking them needs more than 10000000 validation steps (limits.max_validation_steps)"
check "the tool never ran" test ! -e ws/ran.txt
eq "journaled" "$("$TOOLGATE" history --json | jq -r 'select(.payload.error.code=="SCHEMA_TOO_COSTLY") | .id' | wc -l)" 3

# --- limits.max_validation_steps is checked and named
for bad in 0 999 '"many"' 1.5; do
  wide_config "\"max_validation_steps\": $bad"
  set +e; err=$("$TOOLGATE" run wide.jsonl 2>&1 >/dev/null); rc=$?; set -e
  eq "bad max_validation_steps $bad: exit" "$rc" 3
  contains "bad max_validation_steps $bad: message" "$err" \
    "limits.max_validation_steps must be an integer from 1000 to 9007199254740991"
done

# --- SIGTERM while the checks run on the thread pool (each would take
# seconds under a huge budget): ends promptly, every call canceled
rm -f j.db*
wide_config '"max_args_bytes": 4194304, "max_validation_steps": 1000000000000'
"$TOOLGATE" run wide.jsonl >out.jsonl &
pid=$!
# The checks have moved to the thread pool once libuv's pool threads exist
# (nothing else in this run starts a thread: the tool never runs).
tasks() { find "/proc/$pid/task" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
on_pool() { [ "$(tasks)" -gt 1 ]; }
check "checking on the thread pool" wait_for "$(tg_ms 30000)" on_pool
sleep 0.3
check "still checking" kill -0 $pid
t0=$(now_ms)
kill -TERM $pid
set +e; wait $pid; rc=$?; set -e
took=$(( $(now_ms) - t0 ))
eq "exit after SIGTERM" "$rc" 0
# What it waits for after the signal: a stop flag read every few thousand
# steps (microseconds), then the journal's commit; bound with a wide margin.
echo "from SIGTERM to exit: ${took} ms"
check "ended promptly after SIGTERM (${took} ms)" test "$took" -lt "$(tg_ms 2000)"
eq "every call printed" "$(wc -l <out.jsonl)" 3
eq "every call canceled" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "canceled canceled canceled "
eq "canceled by user" "$(jq -r .payload.canceled.by out.jsonl | sort -u)" user
eq "why" "$(jq -r .payload.canceled.reason out.jsonl | sort -u)" "interrupted by SIGTERM"
eq "not started" "$(jq -r .execution out.jsonl | sort -u)" not_started
eq "journaled as canceled" "$("$TOOLGATE" history --outcome canceled --json | wc -l)" 3
check "the tool never ran" test ! -e ws/ran.txt

# --- regexes: a schema pattern and a policy condition that backtrack
aaa=$(printf 'a%.0s' $(seq 60))
cat >toolgate.json <<JSON
{"workspace": "ws", "journal": null,
 "policy": {"default": "allow", "rules": [
   {"tool": "say", "args": {"text": {"matches": "^(a|aa)+$"}}, "decision": "deny", "reason": "no a's"}]},
 "tools": [{"name": "word", "command": ["/bin/echo", "{w}"],
            "input_schema": {"properties": {"w": {"type": "string", "pattern": "^(a+)+$"}}}},
           {"name": "say", "command": ["/bin/echo", "{text}"]}]}
JSON
{ printf '{"id":"rx1","tool":"word","args":{"w":"%sb"}}\n' "$aaa"
  printf '{"id":"rx2","tool":"word","args":{"w":"%s"}}\n' "$aaa"
  printf '{"id":"rx3","tool":"word","args":{"w":"aab"}}\n'
  printf '{"id":"rx4","tool":"say","args":{"text":"%s!"}}\n' "$aaa"
} >rx.jsonl
"$TOOLGATE" run rx.jsonl >out.jsonl
eq "regex outcomes" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "error success error denied "
eq "regex codes" "$(jq -r 'if (.payload|type)=="object" then .payload.error.code // "-" else "-" end' out.jsonl | tr '\n' ' ')" \
  "SCHEMA_TOO_COSTLY - INVALID_ARGUMENTS - "
contains "the pattern and where" "$(jq -r 'select(.id=="rx1").payload.error.message' out.jsonl)" \
  "the pattern '^(a+)+\$' hit the regex match limit on the value at '/w'"
contains "the policy could not judge" "$(jq -r 'select(.id=="rx4").payload.denied.reason' out.jsonl)" \
  "the policy could not judge this call: regex /^(a|aa)+\$/ hit its match limit"
finish
