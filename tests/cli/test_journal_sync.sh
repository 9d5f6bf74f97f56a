#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# journal.sync: "normal" commits without syncing the WAL (only the checkpoint
# when the journal closes syncs), "full" syncs the WAL at every commit: one
# for the running rows of the turn, one per group of results. Counted with
# strace on the real binary; the object form and the string form both load.
source "$(dirname "$0")/lib.sh"
mkdir ws
mk() { printf '{"id":"%s","tool":"%s","args":%s}\n' "$1" "$2" "$3"; }
for i in 1 2 3 4 5 6; do mk "c$i" echo '{"text":"x"}'; done >turn.jsonl
conf() {
  printf '{"workspace": "ws", "journal": %s, "tools": [{"name": "echo", "command": ["/bin/echo", "{text}"]}]}\n' "$1" >toolgate.json
}
syncs() { grep -cE '^[0-9]+ +f(data)?sync\(' "$1" || true; }

conf '"j/string.db"'
"$TOOLGATE" run turn.jsonl >out.jsonl
eq "string form still works" "$(jq -r .outcome out.jsonl | sort -u)" success
check "string form journal" test -s j/string.db
conf '{"path": "j/default.db"}'
"$TOOLGATE" run turn.jsonl >/dev/null
check "object form journal" test -s j/default.db
conf '{"path": "j/bad.db", "sync": "sometimes"}'
"$TOOLGATE" run turn.jsonl >/dev/null 2>err.txt && fail "bad sync accepted" || eq "bad sync exit" "$?" 3
contains "bad sync message" "$(cat err.txt)" 'journal.sync must be "normal" or "full"'

# scripts/deps.sh installs strace; a machine that forbids ptrace (some
# container sandboxes) cannot count fsyncs, and says so loudly.
if ! strace -o /dev/null true 2>/dev/null; then
  echo "SKIP: strace cannot trace here (missing or ptrace forbidden); fsyncs not counted" >&2
  finish
  exit 0
fi
# LeakSanitizer cannot run under ptrace.
export ASAN_OPTIONS=detect_leaks=0
for mode in normal full; do
  conf "{\"path\": \"j/$mode.db\", \"sync\": \"$mode\"}"
  "$TOOLGATE" run turn.jsonl >/dev/null # create the journal first
  sed 's/"c/"d/' turn.jsonl >turn2.jsonl # new ids: they run
  strace -f -e trace=fsync,fdatasync -o "st.$mode" "$TOOLGATE" run turn2.jsonl >"out.$mode"
  eq "$mode: outcomes" "$(jq -r .outcome "out.$mode" | sort -u)" success
  eq "$mode: ran, not replayed" "$(jq -r '.replayed // false' "out.$mode" | sort -u)" false
done
n_normal=$(syncs st.normal)
n_full=$(syncs st.full)
# normal: the WAL header when the WAL starts over (file and directory) and
# the checkpoint at close (WAL and database file), never per commit.
check "normal never syncs per commit (${n_normal} <= 4)" test "$n_normal" -le 4
# full: at least the turn's begin and one commit of results on top.
check "full syncs every commit (${n_full} >= ${n_normal} + 2)" test "$n_full" -ge $((n_normal + 2))
finish
