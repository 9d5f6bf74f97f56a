#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The built-in file tools cannot leave the workspace: "..", absolute paths
# outside, a sibling directory sharing the workspace's name as a prefix
# (ws2 against ws), a symlink leading out, a hard link to a file outside and
# a NUL byte in a path are each `denied`, not_started, with a reason naming
# the path; nothing outside is read or written; paths inside still work.
source "$(dirname "$0")/lib.sh"
mkdir -p ws/sub ws2
echo "inside" >ws/sub/in.txt
echo "SECRET-OUTSIDE" >ws2/secret.txt
echo "SECRET-OUTSIDE" >outside.txt
ln -s ../ws2 ws/link_dir
ln -s "$WORK/outside.txt" ws/link_abs
ln outside.txt ws/hard.txt
W=$WORK/ws
cat >toolgate.json <<JSON
{"workspace": "ws", "journal": null,
 "builtin_tools": ["read_file", "list_dir", "grep", "write_file"],
 "policy": {"default": "allow"}}
JSON
mk() { printf '{"id":"%s","tool":"%s","args":%s}\n' "$1" "$2" "$3"; }
{ mk r_dotdot read_file '{"path":"../outside.txt"}'
  mk r_deep read_file '{"path":"sub/../../outside.txt"}'
  mk r_abs read_file '{"path":"/etc/passwd"}'
  mk r_sibling read_file "{\"path\":\"${W}2/secret.txt\"}"
  mk r_symdir read_file '{"path":"link_dir/secret.txt"}'
  mk r_symabs read_file '{"path":"link_abs"}'
  mk r_hard read_file '{"path":"hard.txt"}'
  mk l_out list_dir '{"path":".."}'
  mk l_sym list_dir '{"path":"link_dir"}'
  mk g_out grep '{"pattern":"SECRET","path":".."}'
  mk w_dotdot write_file '{"path":"../written.txt","content":"x"}'
  mk w_sibling write_file "{\"path\":\"${W}2/written.txt\",\"content\":\"x\"}"
  mk w_sym write_file '{"path":"link_dir/written.txt","content":"x"}'
  mk r_ok read_file '{"path":"sub/in.txt"}'
  mk r_ok_abs read_file "{\"path\":\"$W/sub/in.txt\"}"
  mk g_ok grep '{"pattern":"SECRET|inside","path":"."}'
  mk w_ok write_file '{"path":"sub/new.txt","content":"hello"}'
} >calls.jsonl

"$TOOLGATE" run --to toolgate calls.jsonl >out.jsonl
outcome() { jq -r "select(.id==\"$1\").outcome" out.jsonl; }
reason() { jq -r "select(.id==\"$1\").payload.denied.reason // .payload" out.jsonl; }
for id in r_dotdot r_deep r_abs r_sibling r_symdir r_symabs r_hard l_out l_sym g_out w_dotdot w_sibling w_sym; do
  eq "$id is denied" "$(outcome $id)" denied
  eq "$id never started" "$(jq -r "select(.id==\"$id\").execution" out.jsonl)" not_started
done
contains "dotdot reason names the path" "$(reason r_dotdot)" "'../outside.txt'"
contains "absolute reason names the path" "$(reason r_abs)" "'/etc/passwd' is outside the workspace"
contains "sibling prefix is outside" "$(reason r_sibling)" "ws2/secret.txt' is outside the workspace"
contains "symlink reason names the path" "$(reason r_symdir)" "'link_dir/secret.txt' leads outside"
contains "hard link reason says why" "$(reason r_hard)" "is a hard link"
for id in r_ok r_ok_abs g_ok w_ok; do eq "$id succeeds" "$(outcome $id)" success; done
case "$(cat out.jsonl)" in *SECRET-OUTSIDE*) fail "bytes from outside the workspace reached a result" ;; *) pass ;; esac
eq "nothing written outside" "$(ls "$WORK"/written.txt ws2/written.txt 2>/dev/null | wc -l)" 0
eq "write inside works" "$(cat ws/sub/new.txt)" hello
eq "grep skipped the hard link" "$(jq -r 'select(.id=="g_ok").payload' out.jsonl | grep -c hard.txt || true)" 0

# A NUL byte in a path never reaches a tool: arguments carrying one are
# malformed (the JSON is not taken), whatever the format.
cat >nul.json <<'JSON'
{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c_nul","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"sub/in.txt\\u0000../../outside.txt\"}"}}]}}]}
JSON
"$TOOLGATE" run --to toolgate nul.json >nul.jsonl
eq "NUL byte: refused before running" "$(jq -r '.outcome + " " + .execution + " " + .payload.error.code' nul.jsonl)" "error not_started MALFORMED_ARGUMENTS"
finish
