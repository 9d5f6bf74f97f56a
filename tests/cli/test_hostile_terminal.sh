#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Nothing a caller or a tool sent reaches the terminal raw (issue 14, item
# 9). Call ids, tool names, hook reasons, a tool's output, paths, config
# keys and environment variable names carry ESC sequences (colour, clear
# screen, window title), BEL, CR + LF with a fake line, DEL, C1 controls
# (U+009B is CSI to some terminals), bidirectional overrides and invalid
# UTF-8, and go through every place toolgate prints for a person: history,
# stats, show, the live progress block and --verbose on a real
# pseudo-terminal, the approval prompt, doctor, artifact list/grep/head on
# a terminal, and the error messages on stderr. In each, no byte a terminal
# acts on comes out (termcheck.py inert), and the escaped form (\x1b[31m)
# shows what was sent. JSON output (history --json, show, run's results)
# stays the same JSON value, with DEL, C1 and the bidirectional controls
# as \u escapes; artifact read and grep into a pipe stay byte for byte.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 is needed for a pseudo-terminal"; exit 77; }
TC="python3 $TG_SOURCE_DIR/tests/cli/termcheck.py"
PTY="python3 $TG_SOURCE_DIR/tests/cli/pty_answer.py"
inert() { # DESCRIPTION FILE [--pty] [--lines]
  local d=$1 f=$2; shift 2
  local why; if why=$($TC inert "$f" "$@"); then pass; else fail "$d: $why"; fi
}
has() { # DESCRIPTION FILE NEEDLE: the file holds the needle (fixed string)
  if grep -qF -- "$3" "$2"; then pass; else fail "$1: '$3' not in $(head -c 600 "$2")"; fi
}

mkdir ws hooks
cat >hooks/deny <<'SH'
#!/bin/sh
cat >/dev/null
printf '{"decision":"deny","reason":"no\\u001b]0;pwned\\u0007\\r\\nfake\\u009b2J\\u202eevil"}\n'
SH
chmod +x hooks/deny
cat >toolgate.json <<'JSON'
{"workspace": "ws", "journal": "journal.db", "spool": {"dir": "spool", "inline_max_bytes": 64},
 "sandbox": {"mode": "off"}, "builtin_tools": ["list_dir"], "policy": null,
 "tools": [
  {"name": "say", "command": ["printf", "%s", "{text}"], "option_args": ["text"]},
  {"name": "nap", "command": ["sleep", "0.3"]},
  {"name": "guarded", "command": ["true"]}],
 "hooks": {"before": [{"command": ["./hooks/deny"]}]}}
JSON
# the hook only for "guarded": a second configuration without it for the rest
jq 'del(.hooks)' toolgate.json >nohook.json
cp -r hooks ws/

# The issue's id, a tool name with a clear-screen, and output with all of it.
ID=$'e1\e[31mRED\e]0;pwned\a\r\nfake line\xc2\x9b2J\xe2\x80\xaeabc\x7f'
python3 - "$ID" >calls.jsonl <<'PY'
import json, sys
hid = sys.argv[1].encode("utf-8", "surrogateescape").decode("utf-8")
out = "plain\n\x1b[2Jcleared\rover\x07bell\x7f\u009b\u202eright\ttab\n"
calls = [
    {"id": hid, "tool": "say", "args": {"text": out}},
    {"id": "e2", "tool": "list_dir\x1b[2J", "args": {}},
    {"id": "e3\x1b[31m", "tool": "nap", "args": {}},
    {"id": "e4", "tool": "say", "args": {"text": "x" * 200 + "\x1b]0;spooled\x07\n" + "y" * 100}},
]
for c in calls:
    print(json.dumps(c))
PY

# ------------------------------------------------------- run on a terminal
$TC pty screen.bin out.jsonl "$TOOLGATE" run --config nohook.json --verbose calls.jsonl || fail "run on a pty exited $?"
inert "run --verbose on a terminal: the live block and the output" screen.bin --pty --lines
has "the id is shown escaped" screen.bin '\x1b[31mRED\x1b]0;pwned\x07\r\nfake line\u009b2J\u202eabc\x7f'
has "the output is shown escaped" screen.bin '\x1b[2Jcleared\rover\x07bell\x7f\u009b\u202eright'
has "each output line carries its call's tag" screen.bin '[e1\x1b[31mRED'
grep -q "running nap" screen.bin && pass || fail "the live block was drawn"
eq "every call got its result" "$(jq -s length out.jsonl)" 4
# the results on stdout are JSON, the same values
eq "run's JSON keeps the id" "$(jq -r 'select(.tool=="say" and (.id|startswith("e1"))).id' out.jsonl | od -An -tx1 | tr -d ' \n')" \
  "$(printf '%s\n' "$ID" | od -An -tx1 | tr -d ' \n')"
if LC_ALL=C grep -q $'\x7f\|\xc2\x9b\|\xe2\x80\xae' out.jsonl; then fail "run's JSON holds DEL, C1 or a bidirectional control raw"; else pass; fi
has "run's JSON writes DEL as \\u007f" out.jsonl '\u007f'

# without --verbose, the live block alone (no journal: nothing replayed)
$TC pty screen2.bin out2.jsonl "$TOOLGATE" run --config nohook.json --no-journal calls.jsonl || fail "run without --verbose"
inert "the live block on a terminal" screen2.bin --pty
has "the live block shows the id escaped" screen2.bin 'e3\x1b[31m'

# --verbose into a file: the same escaping (stderr is for a person)
"$TOOLGATE" run --config nohook.json --no-journal --verbose calls.jsonl >/dev/null 2>verbose.txt
inert "--verbose into a file" verbose.txt --lines
has "--verbose into a file escapes the output" verbose.txt '\x1b[2Jcleared'

# ------------------------------------------------ history, stats, show
"$TOOLGATE" history --config nohook.json >history.txt
inert "history" history.txt
has "history shows the id escaped" history.txt '\x1b[31mRED\x1b]0;pwned\x07\r\nfake line'
has "history shows the tool escaped" history.txt 'list_dir\x1b[2J'
eq "history: one row per result, no fake line" "$(wc -l <history.txt)" 5
"$TOOLGATE" stats --config nohook.json >stats.txt
inert "stats" stats.txt
has "stats shows the tool escaped" stats.txt 'list_dir\x1b[2J'
"$TOOLGATE" show --config nohook.json e2 >show.txt
inert "show" show.txt --lines
eq "show is JSON with the tool as it was" "$(jq -r .call.tool show.txt)" $'list_dir\e[2J'
"$TOOLGATE" show --config nohook.json "$ID" >show1.txt
inert "show of the hostile id" show1.txt --lines
eq "show's JSON gives the id back" "$(jq -r .call.id show1.txt)" "$ID"
"$TOOLGATE" history --config nohook.json --json >history.json
inert "history --json" history.json
eq "history --json keeps the values" "$(jq -r 'select(.id=="e2").tool' history.json)" $'list_dir\e[2J'
"$TOOLGATE" stats --config nohook.json --json >stats.json
inert "stats --json" stats.json

# a hook's reason, kept in the result
printf '{"id":"h1\\u001b[5m","tool":"guarded","args":{}}\n' >guarded.jsonl
"$TOOLGATE" run guarded.jsonl >guarded.out 2>guarded.err
inert "run's results with a hook's reason" guarded.out
inert "stderr of that run" guarded.err
eq "the hook denied" "$(jq -r .outcome guarded.out)" denied
"$TOOLGATE" show $'h1\e[5m' >show_h.txt
inert "show with a hook's reason" show_h.txt --lines
contains "the reason is kept as the hook wrote it" "$(jq -r .result.payload.denied.reason show_h.txt)" $'\e]0;pwned\a'

# ------------------------------------------------------ errors on stderr
check_err() { # DESCRIPTION EXPECTED_STATUS COMMAND...
  local d=$1 want=$2; shift 2
  local st=0; "$@" >/dev/null 2>err.txt || st=$?
  eq "$d: exit status" "$st" "$want"
  inert "$d: stderr" err.txt
  [ -s err.txt ] && pass || fail "$d: nothing said"
}
check_err "show of an unknown hostile id" 2 "$TOOLGATE" show --config nohook.json $'nope\e[2J\r\nfake'
has "the unknown id is quoted escaped" err.txt 'nope\x1b[2J\r\nfake'
check_err "a hostile option" 2 "$TOOLGATE" history $'--tool\e[31m=x'
check_err "a hostile --outcome" 2 "$TOOLGATE" history --outcome $'ok\e]0;t\a'
check_err "a hostile --since" 2 "$TOOLGATE" history --config nohook.json --since $'\e[2J\x9b'
has "invalid UTF-8 is shown as \\x" err.txt '\x9b'
printf '{"\\u001b[2J": 1, "x\\u009b": 2}' >weird.json
check_err "a turn of unknown shape quoting its keys" 2 "$TOOLGATE" run --no-journal weird.json
printf '{"id": "a", "tool": "x", "args": {\x1b[31m}}' >broken.json
check_err "unreadable JSON quoting the text near the error" 2 "$TOOLGATE" run --no-journal broken.json
printf '{"limits": {"\\u001b]0;pwned\\u0007": 1}}' >badkey.json
check_err "a hostile configuration key" 3 "$TOOLGATE" tools --config badkey.json
has "the key is quoted escaped" err.txt '\x1b]0;pwned\x07'
check_err "a hostile --caller over the limit" 2 "$TOOLGATE" run --no-journal --caller "$(printf '\e[2J%.0s' {1..100})" calls.jsonl

# ------------------------------------------------------------ doctor
mkdir $'ws\e[31mred'
printf '{"workspace": "ws\\u001b[31mred", "journal": "j\\u0007.db", "sandbox": {"mode": "off"}, "policy": null}' >doc.json
env $'MY_KEY\e[2J=1' "$TOOLGATE" doctor --config doc.json >doctor.txt 2>doctor.err || fail "doctor exited $?"
inert "doctor" doctor.txt --lines
inert "doctor's stderr" doctor.err
has "doctor shows the workspace escaped" doctor.txt 'ws\x1b[31mred'
has "doctor shows a withheld variable's name escaped" doctor.txt 'MY_KEY\x1b[2J'
env $'MY_KEY\e[2J=1' "$TOOLGATE" doctor --json --config doc.json >doctor.json
inert "doctor --json" doctor.json
eq "doctor --json keeps the values" "$(jq -r .workspace.path doctor.json)" "$PWD/"$'ws\e[31mred'

# ---------------------------------------------- the approval prompt
cat >ask.json <<'JSON'
{"workspace": "ws", "journal": null, "sandbox": {"mode": "off"}, "builtin_tools": [],
 "tools": [{"name": "say", "command": ["printf", "%s", "{text}"], "option_args": ["text"]}],
 "policy": {"default": "ask"}}
JSON
printf '{"id":"q1\\u001b[2J","tool":"say","caller_id":"c\\u009b1","args":{"text":"\\u001b]0;pwned\\u0007\\u202eevil"}}\n' >ask.jsonl
$PTY ask.jsonl ask.out "this session:" "n" "$TOOLGATE" run --config ask.json ask.jsonl >prompt.bin || fail "the prompt run exited $?"
inert "the approval prompt" prompt.bin --pty
eq "the answer was no" "$(jq -r .outcome ask.out)" denied
has "the prompt shows the id escaped" prompt.bin 'q1\x1b[2J'
has "the prompt shows the caller escaped" prompt.bin 'c\u009b1'

# ------------------------------------------------- artifacts on a terminal
"$TOOLGATE" artifact list --config nohook.json >alist.txt
inert "artifact list" alist.txt
art=$(jq -r 'select(.id=="e4").artifact.id' out.jsonl)
[ -n "$art" ] && [ "$art" != null ] && pass || fail "e4 was spooled"
$TC pty agrep.bin - "$TOOLGATE" artifact grep --config nohook.json "$art" 'spooled' || fail "grep on a pty"
inert "artifact grep's answer on a terminal" agrep.bin --pty --lines
has "grep on a terminal escapes" agrep.bin '\x1b]0;spooled\x07'
$TC pty ahead.bin - "$TOOLGATE" artifact head --config nohook.json "$art" || fail "head on a pty"
inert "artifact head on a terminal" ahead.bin --pty --lines
has "head on a terminal escapes" ahead.bin '\x1b]0;spooled\x07'
"$TOOLGATE" artifact grep --config nohook.json "$art" spooled >agrep.pipe
grep -q $'\e]0;spooled\a' agrep.pipe && pass || fail "grep into a pipe is byte for byte"
"$TOOLGATE" artifact read --config nohook.json "$art" >aread.pipe
eq "artifact read is the raw bytes" "$(head -c 20 aread.pipe)" "$(printf 'x%.0s' {1..20})"
grep -q $'\e]0;spooled\a' aread.pipe && pass || fail "artifact read keeps the escape"

finish
