#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A policy `ask` on a terminal: the operator sees the tool, the caller, the
# rule's reason and the arguments, and answers y / n / a (always for this
# tool). Garbage is asked again, end of input is a no, control characters in
# arguments are not sent to the terminal raw, and the verdict is in the
# journal with the result.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 is needed for a pseudo-terminal"; exit 77; }
PTY="python3 $TG_SOURCE_DIR/tests/cli/pty_answer.py"
mkdir ws
cat >toolgate.json <<'JSON'
{"workspace": "ws", "journal": "journal.db", "builtin_tools": [],
 "tools": [{"name": "echo", "command": ["/bin/echo", "{text}"]}],
 "policy": {"default": "allow", "rules": [
  {"tool": "echo", "args": {"text": {"matches": "^rm"}}, "decision": "ask", "reason": "removing needs a person"}]}}
JSON
mk() { printf '{"id":"%s","tool":"echo","caller_id":"alice","args":{"text":"%s"}}\n' "$1" "$2"; }
{ mk a1 "rm one"; mk a2 "rm two\\u001b[2J"; mk a3 "hello"; mk a4 "rm one"; } >calls.jsonl

# y for a1, garbage then n for a2; a4 has a1's arguments: not asked again
screen=$($PTY calls.jsonl out.jsonl "this session:" "y,maybe,n" "$TOOLGATE" run calls.jsonl) || fail "run on a terminal: $screen"
eq "outcomes" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success denied success success "
contains "the prompt names the tool" "$screen" "approval needed for tool 'echo'"
contains "the prompt names the caller" "$screen" "caller alice"
contains "the prompt gives the rule's reason" "$screen" "removing needs a person"
contains "the prompt shows the arguments" "$screen" '{"text":"rm one"}'
contains "garbage is asked again" "$screen" "please answer y, n or a"
eq "asked three times (y, garbage, n), not about a3 or a4" "$(grep -o 'this session:' <<<"$screen" | wc -l)" 3
case "$screen" in *$'\e[2J'*) fail "an escape sequence from the arguments reached the terminal" ;; *) pass ;; esac
contains "a no is denied, saying the operator said no" "$(jq -r 'select(.id=="a2").payload.denied.reason' out.jsonl)" "operator said no"
eq "the verdict is journaled" "$("$TOOLGATE" show a1 | jq -r .result.decisions.policy.approved_by)" "operator"

# a: always for the tool, this session
screen=$($PTY calls.jsonl out.jsonl "this session:" "a" "$TOOLGATE" run --no-journal calls.jsonl) || fail "always: $screen"
eq "always: everything runs" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success success success success "
eq "always: asked once" "$(grep -o 'this session:' <<<"$screen" | wc -l)" 1

# end of input on the terminal is a no
screen=$($PTY calls.jsonl out.jsonl "this session:" "-" "$TOOLGATE" run --no-journal calls.jsonl) || fail "eof: $screen"
eq "eof: every ask denied" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "denied denied success denied "

# --approve asks nobody
screen=$($PTY calls.jsonl out.jsonl "this session:" "-" "$TOOLGATE" run --no-journal --approve calls.jsonl) || fail "--approve: $screen"
eq "--approve: all run" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success success success success "
eq "--approve: no prompt" "$(grep -c 'this session:' <<<"$screen" || true)" 0

# The embedded defaults: read-only tools run, write_file and shell are asked
# about (denied without a terminal, run with --approve).
mkdir defaults && cd defaults && echo "notes" >notes.txt
{ printf '{"id":"r","tool":"read_file","args":{"path":"notes.txt"}}\n'
  printf '{"id":"w","tool":"write_file","args":{"path":"new.txt","content":"x"}}\n'
  printf '{"id":"s","tool":"shell","args":{"command":"echo hi"}}\n'; } >calls.jsonl
"$TOOLGATE" run --no-journal calls.jsonl >out.jsonl </dev/null 2>err.txt
eq "defaults: read runs, write and shell need approval" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success denied denied "
contains "defaults: the reason says why and how" "$(jq -r 'select(.id=="w").payload.denied.reason' out.jsonl)" "write_file changes files in the workspace"
eq "defaults: nothing written" "$(ls new.txt 2>/dev/null | wc -l)" 0
"$TOOLGATE" run --no-journal --approve calls.jsonl >out.jsonl </dev/null 2>err.txt
eq "defaults --approve: all run" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success success success "
eq "defaults --approve: the file is written" "$(cat new.txt)" x
cd ..
finish
