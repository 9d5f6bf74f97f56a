#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hostile tools (issue 14): what a tool attempts against toolgate itself,
# through every route it has. The home of such attacks: each part below
# says what it attacks; add new classes as parts of their own.
#
# Part 1, toolgate's own files: nothing a tool does may change, move,
# replace or remove the journal or the artifact store, nor read them.
# Tried with real bubblewrap, through a configured command tool and the
# built-in shell: swapping the journal's directory for a copy and forging a
# result with sqlite3, removing the directory, overwriting or truncating
# the journal, a symlink in its place, writing into artifacts/, hard links,
# /proc/*/fd, renaming a directory above a nested journal, rewriting the
# configuration file; through the built-in file tools: every path into them
# (plain, with "..", absolute, through a symlink the tool made, from a cwd
# inside). Afterwards the journal holds the true results, a re-delivery
# replays the true payload and the artifact holds the true bytes. With the
# journal off, no tool can prepare a .toolgate for a later run. What
# toolgate cannot protect is said or refused: a journal directly in the
# workspace, a spool holding it, a path through a symlink in it (exit 3),
# a journal with a second name (exit 4), a tool outside the sandbox (named
# by `toolgate doctor`; moving the journal under a running toolgate stops
# it, exit 4).
#
# Skips (exit 77, ctest's skip code) where bubblewrap cannot make
# namespaces.
source "$(dirname "$0")/lib.sh"
skip_without_bwrap 77
command -v sqlite3 >/dev/null || { echo "SKIP: $(basename "$0"): sqlite3 not installed"; exit 77; }

mk() { printf '{"id":"%s","tool":"%s","args":%s}\n' "$1" "$2" "$3"; }
# sh_call ID TOOL CMD: a shell line for the built-in shell or the command
# tool `sh` (both run bash -c in the sandbox)
sh_call() {
  if [ "$2" = shell ]; then mk "$1" shell "$(jq -cn --arg c "$3" '{command:$c}')"
  else mk "$1" sh "$(jq -cn --arg c "$3" '{c:$c}')"; fi
}
fsid() { stat -c '%d:%i' "$1"; }

# ----------------------------------------------------------------- part 1
# The default layout: the journal and the spool in the workspace's
# .toolgate; a configured command tool besides the built-in shell.
mkdir ws
cat >toolgate.json <<'JSON'
{"workspace": "ws", "spool": {"inline_max_bytes": 64},
 "tools": [{"name": "sh", "command": ["/bin/bash", "-c", "{c}"]},
           {"name": "lines", "command": ["seq", "1", "{n}"]}]}
JSON
echo hello >ws/f.txt
{ mk r1 read_file '{"path":"f.txt"}'; mk big1 lines '{"n":"3000"}'; } >seed.jsonl
"$TOOLGATE" run seed.jsonl >seed.out
eq "seeded" "$(jq -r .outcome seed.out | tr '\n' ' ')" "success success "
ART=$(jq -r 'select(.id=="big1").artifact.id' seed.out)
check "an artifact" test -n "$ART"
TRUE_SHA=$(seq 1 3000 | sha256sum | cut -d' ' -f1)
eq "artifact true" "$("$TOOLGATE" artifact read "$ART" | sha256sum | cut -d' ' -f1)" "$TRUE_SHA"
J=ws/.toolgate/journal.db
DIR_ID=$(fsid ws/.toolgate) J_ID=$(fsid $J)
check "the artifact file exists" test -n "$(find ws/.toolgate/artifacts -name "$ART")"

# Each attack through both tools; each line prints what got through.
FORGE="update results set payload='\"FORGED\"'"
ATTACKS=(
  "mv .toolgate away && echo MOVED; mkdir -p .toolgate && cp away/journal.db .toolgate/ && sqlite3 .toolgate/journal.db \"$FORGE\" && echo FORGED-COPY"
  "sqlite3 .toolgate/journal.db \"$FORGE\" && echo FORGED-IN-PLACE"
  "rm -rf .toolgate 2>/dev/null; test -d .toolgate || echo REMOVED"
  "echo x > .toolgate/journal.db && echo OVERWRITTEN; : > .toolgate/journal.db-wal && echo WAL-WRITTEN"
  "truncate -s 0 .toolgate/journal.db && echo TRUNCATED; cp /dev/null .toolgate/journal.db && echo COPIED-OVER"
  "echo x > .toolgate/journal.db-journal && echo PLANTED-JOURNAL"
  "mkdir -p evil && sqlite3 evil/journal.db 'create table t(x)' && mv .toolgate old && ln -s evil .toolgate && echo SYMLINKED"
  "ln -sfn evil .toolgate/artifacts && echo LINKED-IN"
  "find .toolgate -type f | grep -q . && echo SEES-FILES; echo forged > .toolgate/artifacts/$ART && echo ART-WRITTEN"
  "for f in .toolgate/artifacts/*/*; do echo forged > \$f && echo ART-WRITTEN; done; mkdir .toolgate/artifacts/zz && echo ART-DIR"
  "ln .toolgate/journal.db hard && echo HARD-LINKED; ln .toolgate/artifacts/*/$ART hard2 && echo ART-HARD-LINKED"
  "ls -l /proc/*/fd/ 2>/dev/null | grep -e journal.db -e artifacts && echo FD-SEEN; true"
  "cat .toolgate/journal.db | grep -a -c hello && echo READ-JOURNAL; ls -A .toolgate | grep . && echo LISTED; true"
)
for tool in shell sh; do
  : >attacks.jsonl
  # "; true": each attack succeeds, its stdout (what got through) the
  # payload
  for i in "${!ATTACKS[@]}"; do sh_call "$tool-a$i" "$tool" "${ATTACKS[$i]}; true" >>attacks.jsonl; done
  # a call whose cwd is toolgate's directory
  sh_call "$tool-cwd1" "$tool" 'touch planted && echo CWD-WRITE; ls -A | grep . && echo CWD-LISTED; true' |
    jq -c '. + {context: {cwd: ".toolgate"}}' >>attacks.jsonl
  # one at a time: in the warm sandbox (the default) calls running at once
  # share a PID namespace, so one call's `ls /proc/*/fd` would list another
  # attack's own sqlite3 on its masked .toolgate/journal.db (README, the
  # warm sandbox's table), which is not toolgate's journal
  "$TOOLGATE" run --approve --parallel 1 attacks.jsonl >attacks.out 2>attacks.err
  eq "$tool: every attack ran" "$(jq -r .execution attacks.out | sort -u)" finished
  got=$(jq -r '.payload | if type == "string" then . else .error.message end' attacks.out |
    grep -o -w -E 'MOVED|FORGED-COPY|FORGED-IN-PLACE|REMOVED|OVERWRITTEN|WAL-WRITTEN|TRUNCATED|COPIED-OVER|PLANTED-JOURNAL|SYMLINKED|LINKED-IN|SEES-FILES|ART-WRITTEN|ART-DIR|HARD-LINKED|ART-HARD-LINKED|FD-SEEN|READ-JOURNAL|LISTED|CWD-WRITE|CWD-LISTED' |
    sort -u | tr '\n' ' ' || true)
  eq "$tool: nothing got through" "$got" ""
  eq "$tool: toolgate kept going" "$(cat attacks.err)" ""
done
check "no file of the tools' making in .toolgate" bash -c '! test -e ws/.toolgate/planted && ! test -e ws/.toolgate/journal.db-journal && ! test -e ws/.toolgate/artifacts/zz'

# The built-in file tools: every path into toolgate's files is denied.
mkdir ws/sub
ln -s .toolgate ws/tg_link # as a tool could make it
ABS=$(cd ws && pwd)/.toolgate/journal.db
SHARD=$(basename "$(dirname "$(find ws/.toolgate/artifacts -name "$ART")")")
{
  mk b1 write_file '{"path":".toolgate/journal.db","content":"forged"}'
  mk b2 write_file '{"path":"./sub/../.toolgate/journal.db","content":"forged"}'
  mk b3 write_file "$(jq -cn --arg p "$ABS" '{path:$p,content:"forged"}')"
  mk b4 write_file '{"path":"tg_link/journal.db","content":"forged"}'
  mk b5 write_file "{\"path\":\".toolgate/artifacts/$SHARD/$ART\",\"content\":\"forged\"}"
  mk b6 write_file '{"path":".toolgate/journal.db-journal","content":"forged"}'
  mk b7 read_file '{"path":".toolgate/journal.db"}'
  mk b8 read_file "{\"path\":\"tg_link/artifacts/$SHARD/$ART\"}"
  mk b9 list_dir '{"path":".toolgate"}'
  mk b10 list_dir '{"path":"tg_link/artifacts"}'
  mk b11 grep '{"pattern":"2999","path":".toolgate"}'
  mk b12 grep '{"pattern":"2999","path":"tg_link/"}'
  mk b13 read_file '{"path":"journal.db"}' | jq -c '. + {context: {cwd: ".toolgate"}}'
} >builtins.jsonl
"$TOOLGATE" run --approve builtins.jsonl >builtins.out
eq "built-ins: all denied" "$(jq -r .outcome builtins.out | sort | uniq -c | tr -s ' ')" " 13 denied"
contains "built-ins: the reason" "$(jq -r 'select(.id=="b2").payload.denied.reason' builtins.out)" \
  "path './sub/../.toolgate/journal.db' is toolgate's own"
eq "grep over the workspace passes them by" \
  "$(mk g1 grep '{"pattern":"^2999$"}' | "$TOOLGATE" run - | jq -c '[.outcome, .payload]')" '["success",null]'

# Afterwards: the same files, the true results, the true replay, the true
# artifact.
eq "journal's directory is the same" "$(fsid ws/.toolgate)" "$DIR_ID"
eq "journal is the same file" "$(fsid $J)" "$J_ID"
eq "journal intact" "$(sqlite3 $J 'pragma integrity_check')" ok
eq "no forged row" "$(sqlite3 $J "select count(*) from results where payload like '%FORGED%'")" 0
eq "show: the true result" "$("$TOOLGATE" show r1 | jq -r .result.payload)" "hello"
"$TOOLGATE" run seed.jsonl >replay.out
eq "replayed" "$(jq -r .replayed replay.out | tr '\n' ' ')" "true true "
eq "replay: the true payload" "$(jq -r 'select(.id=="r1").payload' replay.out)" "hello"
eq "artifact: the true bytes" "$("$TOOLGATE" artifact read "$ART" | sha256sum | cut -d' ' -f1)" "$TRUE_SHA"
mk ar1 artifact_tail "{\"artifact\":\"$ART\",\"lines\":1}" >art.jsonl
eq "artifact tool: the true tail" "$("$TOOLGATE" run art.jsonl | jq -r .payload.text)" "3000"
rm ws/tg_link

# Nested state and the configuration in the workspace: the directories above
# the journal cannot be renamed, the configuration cannot be rewritten.
mkdir -p nest/ws/state
cat >nest/ws/toolgate.json <<'JSON'
{"workspace": ".", "journal": "state/tg/journal.db", "spool": {"dir": "state/art"},
 "tools": [{"name": "sh", "command": ["/bin/bash", "-c", "{c}"]}]}
JSON
cp nest/ws/toolgate.json cfg.orig
echo "user data" >nest/ws/state/notes.txt
(
  cd nest/ws
  { mk r1 read_file '{"path":"state/notes.txt"}'
    sh_call n1 sh 'mv state state2 && echo MOVED-UP; mv state/tg state/tg2 && echo MOVED; echo more >> state/notes.txt && echo USER-WRITE'
    sh_call n2 shell 'echo "{\"sandbox\":{\"mode\":\"off\"}}" > toolgate.json && echo CONFIG-WRITTEN; mv toolgate.json x && echo CONFIG-MOVED; rm -f toolgate.json && test ! -e toolgate.json && echo CONFIG-REMOVED; true'
    mk n3 write_file '{"path":"toolgate.json","content":"{}"}'
    mk n4 read_file '{"path":"state/tg/journal.db"}'
  } >nest.jsonl
  "$TOOLGATE" run --approve nest.jsonl >../../nest.out
)
eq "nested: outcomes" "$(jq -r .outcome nest.out | tr '\n' ' ')" "success success success denied denied "
eq "nested: what got through" "$(jq -r 'select(.id=="n1" or .id=="n2").payload' nest.out | grep -o -E '[A-Z-]{4,}' | tr '\n' ' ' || true)" "USER-WRITE "
check "nested: configuration unchanged" cmp -s cfg.orig nest/ws/toolgate.json
check "nested: journal in place" test -f nest/ws/state/tg/journal.db
eq "nested: the user's file was the tool's" "$(cat nest/ws/state/notes.txt)" "user data
more"

# What toolgate cannot protect, it refuses to run with (exit 3, naming
# the file), or says.
mkdir -p bad/ws
printf '{"id":"x","tool":"read_file","args":{"path":"f"}}\n' >bad/t.jsonl
badrun() { echo "$1" >bad/toolgate.json; "$TOOLGATE" run --config bad/toolgate.json bad/t.jsonl >/dev/null 2>bad/err; echo "$?"; }
eq "journal directly in the workspace: exit" "$(badrun '{"workspace": "ws", "journal": "ws/j.db"}')" 3
contains "journal directly in the workspace: says so" "$(cat bad/err)" "lies directly in the workspace"
eq "spool holding the workspace: exit" "$(badrun '{"workspace": "ws", "spool": {"dir": "."}}')" 3
contains "spool holding the workspace: says so" "$(cat bad/err)" "spool.dir"
# With the journal and the spool off, .toolgate is made and hidden all the
# same: no tool can prepare one, a database in it, for a later run.
mkdir -p plant/ws
printf '{"workspace": "ws", "spool": null, "tools": [{"name": "sh", "command": ["/bin/bash", "-c", "{c}"]}]}\n' >plant/toolgate.json
sh_call p1 sh 'mkdir -p .toolgate/x && echo MADE; mkdir evil && sqlite3 evil/journal.db "create table t(x)" && { rm -rf .toolgate; ln -sfn evil .toolgate; } 2>/dev/null; test -L .toolgate && echo PLANTED; true' >plant/t.jsonl
"$TOOLGATE" run --config plant/toolgate.json --no-journal plant/t.jsonl >plant/out
eq "plant: nothing prepared" "$(jq -r .payload plant/out)" ""
check "plant: .toolgate is toolgate's, empty" bash -c 'test -d plant/ws/.toolgate && ! test -L plant/ws/.toolgate && test -z "$(ls -A plant/ws/.toolgate)"'
# A link in its place (made by a tool outside the sandbox, or before) is
# refused, not followed.
rmdir plant/ws/.toolgate && ln -s evil plant/ws/.toolgate
"$TOOLGATE" run --config plant/toolgate.json plant/t.jsonl >/dev/null 2>plant/err && fail "ran through a planted link" ||
  eq "plant: exit" "$?" 3
contains "plant: names the link" "$(cat plant/err)" "through the symbolic link $(cd plant/ws && pwd -P)/.toolgate inside the workspace"
# A journal with a second name is refused.
ln $J hardlink.db
"$TOOLGATE" run seed.jsonl >/dev/null 2>err.txt && fail "ran with a hard-linked journal" || eq "hard link: exit" "$?" 4
contains "hard link: says so" "$(cat err.txt)" "has 2 names (hard links)"
rm hardlink.db

# Tools outside the sandbox: named by the doctor; one that swaps the
# journal's directory under a running toolgate stops it (nothing printed,
# nothing written to a file nobody reads).
jq '.tools += [{"name": "raw", "command": ["/bin/bash", "-c", "{c}"], "sandbox": false}]' toolgate.json >unsafe.json
DOC=$("$TOOLGATE" doctor --config unsafe.json)
contains "doctor: names the unsandboxed tool" "$DOC" "raw (none): outside the sandbox, each could change, move or remove the journal and the spool"
contains "doctor: what is hidden" "$DOC" "hidden from sandboxed tools: $(cd ws && pwd)/.toolgate"
eq "doctor --json: exposed" "$("$TOOLGATE" doctor --config unsafe.json --json | jq -c '[.toolgate_files.exposed_to[].name]')" '["raw"]'
jq '.sandbox = {"mode": "off"}' toolgate.json >off.json
contains "doctor: mode off exposes shell" "$("$TOOLGATE" doctor --config off.json)" "shell (rlimits): outside the sandbox"
mk u1 raw '{"c":"mv .toolgate away && mkdir .toolgate && cp away/journal.db .toolgate/ && echo SWAPPED"}' >unsafe.jsonl
"$TOOLGATE" run --config unsafe.json unsafe.jsonl >unsafe.out 2>err.txt && fail "kept writing to a moved journal" ||
  eq "moved under a running toolgate: exit" "$?" 4
contains "moved: says so" "$(cat err.txt)" "was moved, removed or replaced while toolgate had it open"
eq "moved: nothing printed" "$(cat unsafe.out)" ""
finish
