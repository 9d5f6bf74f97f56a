#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The permission policy decides before anything runs: a deny is `denied`
# with the rule's reason, an `ask` without an operator is denied saying how
# to approve, --approve lets it run, `under` keeps paths in their place,
# annotations default as MCP says, and a bad policy keeps toolgate from
# starting (exit 3, naming the key).
source "$(dirname "$0")/lib.sh"
mkdir -p ws/out
cat >toolgate.json <<'JSON'
{"workspace": "ws", "journal": null, "builtin_tools": [],
 "tools": [
  {"name": "echo", "command": ["/bin/echo", "{text}"], "annotations": {"readOnlyHint": true, "destructiveHint": false}},
  {"name": "save", "command": ["/bin/sh", "-c", "echo saved >> saved.txt; echo \"$0\"", "{path}"]},
  {"name": "nuke", "command": ["/bin/sh", "-c", "echo boom >> nuked.txt"]}
 ],
 "policy": {"default": "deny", "rules": [
  {"tool": "echo", "args": {"text": {"matches": "rm -rf"}}, "decision": "ask"},
  {"annotations": {"readOnlyHint": true}, "decision": "allow"},
  {"tool": "save", "args": {"path": {"under": "out"}}, "decision": "allow"},
  {"tool": "nuke", "decision": "deny", "reason": "nothing gets nuked"}
 ]}}
JSON
mk() { printf '{"id":"%s","tool":"%s","args":%s}\n' "$1" "$2" "$3"; }
{ mk e1 echo '{"text":"hello"}'
  mk e2 echo '{"text":"please rm -rf /"}'
  mk s1 save '{"path":"out/a.txt"}'
  mk s2 save '{"path":"../outside.txt"}'
  mk s3 save '{"path":"out/../../x"}'
  mk n1 nuke '{}'
} >calls.jsonl

"$TOOLGATE" run calls.jsonl >out.jsonl
eq "outcomes" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success denied success denied denied denied "
eq "read-only tool allowed by its annotation" "$(jq -r 'select(.id=="e1").payload' out.jsonl)" "hello"
contains "ask without an operator says how" "$(jq -r 'select(.id=="e2").payload.denied.reason' out.jsonl)" "--approve"
eq "deny payload names the tool" "$(jq -r 'select(.id=="n1").payload.denied.tool' out.jsonl)" nuke
eq "deny carries the rule's reason" "$(jq -r 'select(.id=="n1").payload.denied.reason' out.jsonl)" "nothing gets nuked"
contains "default deny names the default" "$(jq -r 'select(.id=="s2").payload.denied.reason' out.jsonl)" "default"
eq "denied calls never started" "$(jq -r 'select(.outcome=="denied").execution' out.jsonl | sort -u)" not_started
check "nuke never ran" test ! -e ws/nuked.txt
eq "save ran once (only under out/)" "$(wc -l < ws/saved.txt)" 1

"$TOOLGATE" run --approve calls.jsonl >out.jsonl
eq "--approve answers ask" "$(jq -r 'select(.id=="e2").outcome' out.jsonl)" success
eq "--approve does not override deny" "$(jq -r 'select(.id=="n1").outcome' out.jsonl)" denied

# A symlink inside the workspace that leads out is not "under" it.
ln -s /tmp ws/out/escape
mk s4 save '{"path":"out/escape/x"}' >link.jsonl
"$TOOLGATE" run link.jsonl >out.jsonl
eq "symlink out of the workspace denied" "$(jq -r .outcome out.jsonl)" denied

# policy check: which rule decides, and why, without running anything.
"$TOOLGATE" policy check calls.jsonl >check.jsonl
eq "check: one line per call" "$(wc -l < check.jsonl)" 6
eq "check: decisions" "$(jq -r .decision check.jsonl | tr '\n' ' ')" "allow ask allow deny deny deny "
eq "check: deciding rules" "$(jq -r .rule check.jsonl | tr '\n' ' ')" "1 0 2 -1 -1 3 "
contains "check: explanation walks the rules" "$(jq -r 'select(.id=="s2").explanation' check.jsonl)" "under"
check "check ran nothing" test ! -e ws/nuked.txt
eq "check: no save ran (two lines, from the two runs)" "$(wc -l < ws/saved.txt)" 2

# A bad policy: exit 3 naming the key.
jq '.policy.rules[0].args.text = {"under": 5}' toolgate.json >bad.json
set +e
"$TOOLGATE" run --config bad.json calls.jsonl >/dev/null 2>err.txt; st=$?
set -e
eq "bad policy exit" "$st" 3
contains "bad policy names the key" "$(cat err.txt)" "policy.rules[0].args.text.under"
finish
