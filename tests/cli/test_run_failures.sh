#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A failing command keeps what it printed: a test run's failures on stdout
# with exit 1, a command that prints 5 MB then exits 2 (spooled: the handle
# in the error's details, the artifact readable by the artifact tools), a
# command stopped at its deadline after printing; each rendered for the
# model as one text (the status, then stdout and stderr, labelled) in the
# trust envelope, and kept in the journal (show, history --json). "ok_exit"
# makes other statuses success (diff, grep with no match); a bad ok_exit
# is a configuration error naming the key.
source "$(dirname "$0")/lib.sh"
mkdir ws
printf 'alpha\nbeta\ngamma\n' >ws/a.txt
printf 'alpha\nBETA\ngamma\n' >ws/b.txt
# The hang's deadline: it prints two lines at once (well under 15 ms), then
# sleeps 60 s; a scaled 1.5 s is >= 100x the first and far below the other.
hang_ms=$(tg_ms 1500)
cat >toolgate.json <<'JSON'
{"workspace": "ws", "journal": "journal.db", "builtin_tools": [], "sandbox": {"mode": "off"},
 "spool": {"dir": "spool"},
 "tools": [
  {"name": "pytest", "command": ["/bin/sh", "-c", "printf 'test_a.py::test_one PASSED\\ntest_a.py::test_two FAILED - assert 1 == 2\\n1 failed, 1 passed\\n'; echo 'warning: slow test' >&2; exit 1"]},
  {"name": "diff", "command": ["diff", "a.txt", "b.txt"], "ok_exit": [0, 1]},
  {"name": "grep", "command": ["grep", "-n", "{pattern}", "{file}"], "ok_exit": {"min": 0, "max": 1}},
  {"name": "big", "command": ["/bin/sh", "-c", "seq 1000000 1624999; echo 'boom' >&2; exit 2"]},
  {"name": "hang", "command": ["/bin/sh", "-c", "echo 'test_1 ok'; echo 'test_2 ...'; exec sleep 60"], "timeout_ms": 1500}
 ]}
JSON
jq --argjson ms "$hang_ms" '(.tools[] | select(.name == "hang")).timeout_ms = $ms' toolgate.json >scaled.json
mv scaled.json toolgate.json
mk() { printf '{"id":"%s","tool":"%s","args":%s}\n' "$1" "$2" "$3"; }
{ mk p1 pytest '{}'
  mk d1 diff '{}'
  mk g1 grep '{"pattern":"zeta","file":"a.txt"}'
  mk g2 grep '{"pattern":"beta","file":"a.txt"}'
  mk g3 grep '{"pattern":"beta","file":"missing.txt"}'
  mk b1 big '{}'
  mk h1 hang '{}'
  echo '{"id":"f1","tool":"pytest","args":{},"inline":false}'
  echo '{"id":"f2","tool":"grep","args":{"pattern":"beta","file":"missing.txt"},"inline":false}'
} >calls.jsonl
"$TOOLGATE" run --to toolgate calls.jsonl >out.jsonl
r() { jq -r "select(.id==\"$1\")$2" out.jsonl; }

# pytest-style: the failures are on stdout, the status in the result
eq "pytest: error" "$(r p1 .payload.error.code)" EXIT_STATUS
eq "pytest: exit status" "$(r p1 .exit_status) $(r p1 .payload.error.details.exit_status)" "1 1"
eq "pytest: message" "$(r p1 .payload.error.message)" "command exited with status 1"
eq "pytest: stdout kept" "$(r p1 .payload.error.details.stdout)" "test_a.py::test_one PASSED
test_a.py::test_two FAILED - assert 1 == 2
1 failed, 1 passed"
eq "pytest: stderr kept" "$(r p1 .payload.error.details.stderr)" "warning: slow test"
eq "pytest: no artifact" "$(r p1 .artifact)" null

# ok_exit: diff's 1 and grep's no match are success, with the status
eq "diff: success with status 1" "$(r d1 .outcome) $(r d1 .exit_status)" "success 1"
contains "diff: its output is the answer" "$(r d1 .payload)" "> BETA"
eq "grep no match: success with status 1" "$(r g1 .outcome) $(r g1 .exit_status) [$(r g1 .payload)]" "success 1 []"
eq "grep match: success with status 0" "$(r g2 .outcome) $(r g2 .exit_status) $(r g2 .payload)" "success 0 2:beta"
eq "grep's real failure (2) is not in ok_exit" "$(r g3 .payload.error.code) $(r g3 .exit_status)" "EXIT_STATUS 2"
contains "grep's failure: its stderr" "$(r g3 .payload.error.details.stderr)" "missing.txt"

# 5 MB on stdout then exit 2: spooled, the handle in the details
ID=$(r b1 .payload.error.details.stdout_artifact.id)
eq "big: error, status 2" "$(r b1 .payload.error.code) $(r b1 .exit_status)" "EXIT_STATUS 2"
eq "big: an artifact" "$(grep -cE '^art_[0-9a-f]{24}$' <<<"$ID")" 1
eq "big: the result names it" "$(r b1 .artifact.id)" "$ID"
eq "big: its bytes" "$(r b1 .artifact.bytes)" 5000000
contains "big: the handle names it" "$(r b1 .payload.error.details.stdout)" "[output saved as artifact $ID: 5000000 bytes, 625000 lines"
contains "big: the handle previews the last line" "$(r b1 .payload.error.details.stdout)" "1624999"
check "big: the handle is short" [ "$(r b1 .payload.error.details.stdout | wc -c)" -lt 2000 ]
eq "big: stderr inline" "$(r b1 .payload.error.details.stderr)" boom
check "big: the artifact is the output" bash -c "seq 1000000 1624999 | cmp -s - <(\"$TOOLGATE\" artifact read $ID --length 100000000)"

# inline: false gives each stream written to a handle, as it would a success
eq "inline:false: both streams spooled" "$(r f1 '.payload.error.details | [.stdout_artifact.bytes, .stderr_artifact.bytes] | join(" ")')" "89 19"
contains "inline:false: the handle" "$(r f1 .payload.error.details.stdout)" "[output saved as artifact"
eq "inline:false: the result names stdout's" "$(r f1 .artifact.id)" "$(r f1 .payload.error.details.stdout_artifact.id)"
eq "inline:false: an empty stdout is left out" "$(r f2 '.payload.error.details | has("stdout")') $(r f2 .artifact.id)" "false $(r f2 .payload.error.details.stderr_artifact.id)"

# stopped at its deadline: what it printed says where it hung
eq "hang: timeout" "$(r h1 .outcome)" timeout
eq "hang: the budget" "$(r h1 .payload.timeout.durationMs)" "$hang_ms"
eq "hang: what it printed" "$(r h1 .payload.timeout.stdout)" "test_1 ok
test_2 ..."

# The model reads one text each, in the trust envelope.
"$TOOLGATE" run --no-journal --to openai-chat calls.jsonl >chat.json
c() { jq -r --arg id "$1" '.[] | select(.tool_call_id==$id).content' chat.json; }
body() { sed '1d;$d'; }
eq "rendered: pytest" "$(c p1 | body)" "command exited with status 1
[stdout]
test_a.py::test_one PASSED
test_a.py::test_two FAILED - assert 1 == 2
1 failed, 1 passed
[stderr]
warning: slow test"
contains "rendered: in the envelope" "$(c p1 | head -1)" '<tool_output_'
contains "rendered: big's handle" "$(c b1)" "command exited with status 2
[stdout]
[output saved as artifact $ID"
contains "rendered: big's stderr last" "$(c b1 | body | tail -2)" "[stderr]
boom"
eq "rendered: the timeout" "$(c h1 | body)" "timed out after $hang_ms ms and was stopped
test_1 ok
test_2 ..."
contains "rendered: the timeout in the envelope" "$(c h1 | head -1)" 'tool="hang" call_id="h1"'
eq "rendered: grep with no match" "$(c g1 | body)" ""

# The journal keeps it: show and history --json.
contains "show: stdout" "$("$TOOLGATE" show p1 | jq -r .result.payload.error.details.stdout)" "FAILED - assert 1 == 2"
eq "show: the timeout's output" "$("$TOOLGATE" show h1 | jq -r .result.payload.timeout.stdout | head -1)" "test_1 ok"
eq "history --json: stderr" "$("$TOOLGATE" history --json --tool pytest | jq -r 'select(.id=="p1").payload.error.details.stderr')" "warning: slow test"
eq "history --json: the artifact" "$("$TOOLGATE" history --json --tool big | jq -r .payload.error.details.stdout_artifact.id)" "$ID"

# The next turn reads the failed call's output through the artifact tools.
mk t1 artifact_tail "{\"artifact\":\"$ID\",\"lines\":2}" >tail.jsonl
"$TOOLGATE" run --to toolgate tail.jsonl >out.jsonl
eq "artifact_tail of a failed call" "$(r t1 .payload.text)" "1624998
1624999"

# The README's example: examples/toolgate.json's check (make check fails
# with the open items on stdout and make's error on stderr) and same (cmp's
# status 1 is in its ok_exit).
mkdir ex && cp -r "$TG_SOURCE_DIR/examples/workspace" "$TG_SOURCE_DIR/examples/toolgate.json" ex/
rm -rf ex/workspace/.toolgate
(cd ex/workspace && "$TOOLGATE" run --no-journal --config ../toolgate.json --to toolgate \
  "$TG_SOURCE_DIR/examples/turns/toolgate-check.jsonl") >ex.jsonl
x() { jq -r "select(.id==\"$1\")$2" ex.jsonl; }
eq "example check: make's status" "$(x call_check_1 .payload.error.code) $(x call_check_1 .exit_status)" "EXIT_STATUS 2"
eq "example check: the open items" "$(x call_check_1 .payload.error.details.stdout)" "checking notes/todo.md
4:- [ ] TODO: render results for Anthropic and Gemini
5:- [ ] TODO: spool large outputs to the artifact store"
contains "example check: make's error" "$(x call_check_1 .payload.error.details.stderr)" "check] Error 1"
eq "example same: cmp's 1 is success" "$(x call_same_2 .outcome) $(x call_same_2 .exit_status)" "success 1"
contains "example same: its answer" "$(x call_same_2 .payload)" "differ: byte 1, line 1"

# A bad ok_exit is a configuration error naming the key.
bad() {
  jq --argjson v "$1" '.tools[1].ok_exit = $v' toolgate.json >bad.json
  set +e; "$TOOLGATE" run --config bad.json calls.jsonl >/dev/null 2>err.txt; rc=$?; set -e
  eq "ok_exit $1: exit 3" "$rc" 3
  contains "ok_exit $1: names the key" "$(cat err.txt)" "$2"
}
bad '"0-1"' 'tools[1].ok_exit must be a list of exit statuses such as [0, 1] or a range such as {"min": 0, "max": 1}'
bad '[0, 300]' 'tools[1].ok_exit[1] must be an exit status, an integer from 0 to 255'
bad '{"min": 1}' 'tools[1].ok_exit range needs both "min" and "max"'
bad '{"min": 2, "max": 1}' 'tools[1].ok_exit.min (2) must not be greater than max (1)'
finish
