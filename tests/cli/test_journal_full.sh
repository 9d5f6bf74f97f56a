#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The journal on a full file system, end to end: `toolgate run` with its
# journal on a small tmpfs filled up so the journal cannot grow. Whether the
# call rows (a) or the results (b) are what no longer fit: exit 4, an error
# on stderr naming the journal, nothing of the failed step in the journal
# (no partial rows), no result printed that is not in the journal, and
# `PRAGMA integrity_check` ok; once there is room again, the next command
# that opens the journal gives the calls whose results were lost their
# INTERRUPTED result, so every call row has exactly one.
#
# Mounting needs root in a mount namespace of its own (unshare -m, so the
# mount never outlives the test); where that is not permitted the test says
# why and is skipped (exit 77). An I/O error (EIO) cannot be injected here
# without device-mapper or kernel fault injection; the unit test
# tests/unit/journal/test_journal.c injects one through SQLite's VFS.
if [ -z "${TG_JFULL_NS:-}" ] && unshare -m --propagation private true 2>/dev/null; then
  TG_JFULL_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || {
  echo "FAIL: the sqlite3 command is needed (scripts/deps.sh installs it)" >&2
  exit 1
}
mkdir ws small
if ! mount -t tmpfs -o size=1m tmpfs small 2>mount.err; then
  echo "SKIP: cannot mount a tmpfs ($(tr '\n' ' ' <mount.err)); the disk-full test needs root and a mount namespace" >&2
  exit 77
fi
# Without a namespace of our own the mount must go before the directory.
trap 'umount "$WORK/small" 2>/dev/null; rm -rf "$WORK"' EXIT
DB="$WORK/small/journal.db"
# Output stays inline (no artifact on the other disk): it is the journal
# that must hold it.
cat >toolgate.json <<JSON
{"workspace": "ws", "journal": "$DB", "sandbox": {"mode": "off"},
 "spool": {"inline_max_bytes": 1048576},
 "tools": [
  {"name": "echo", "command": ["/bin/echo", "{text}"]},
  {"name": "big", "command": ["/bin/sh", "-c", "head -c \"\$0\" /dev/zero | tr '\\\\0' x", "{n}"]}
 ]}
JSON
q() { sqlite3 -readonly "$DB" "$1"; }
mk() { printf '{"id":"%s","tool":"%s","args":%s}\n' "$1" "$2" "$3"; }

# Leaves `kib` KiB free on the tmpfs: a reserve of that size, the rest
# filled, the reserve deleted.
fill_but() {
  rm -f small/filler
  dd if=/dev/zero of=small/reserve bs=1k count="$1" status=none
  dd if=/dev/zero of=small/filler bs=4k status=none 2>/dev/null || true
  rm -f small/reserve
}

# A journal with one finished turn.
for k in 1 2 3; do mk "ok-$k" echo '{"text":"fine"}'; done >ok.jsonl
"$TOOLGATE" run ok.jsonl >ok.out
eq "first turn" "$(jq -r .outcome ok.out | sort -u)" success
eq "first turn journaled" "$(q "SELECT count(*) FROM results")" 3

sound() { # the checks after each failure: $1 names the case
  local err=$1.err
  contains "$1: error names the journal" "$(cat "$err")" "$DB"
  contains "$1: error says the disk is full" "$(cat "$err")" "disk full"
  eq "$1: integrity_check" "$(q 'PRAGMA integrity_check')" ok
  eq "$1: every result has its call" \
    "$(q "SELECT count(*) FROM results r LEFT JOIN call_rows c ON c.rowid = r.call_rowid WHERE c.rowid IS NULL")" 0
  eq "$1: results are whole" \
    "$(q "SELECT count(*) FROM results WHERE json_valid(payload) = 0")" 0
  # A printed result is a journaled one.
  local id
  for id in $(jq -r .id "$1.out" 2>/dev/null); do
    eq "$1: printed $id is journaled" "$(q "SELECT count(*) FROM results WHERE id = '$id'")" 1
  done
}

# (a) The call rows do not fit: nothing of the turn is there, nothing ran.
fill_but 96
big=$(head -c 60000 /dev/zero | tr '\0' a)
for k in 1 2 3 4 5; do mk "a-$k" echo "{\"text\":\"$big\"}"; done >a.jsonl
set +e
"$TOOLGATE" run a.jsonl >a.out 2>a.err
rc=$?
set -e
eq "a: exit status" "$rc" 4
sound a
eq "a: no row of the turn" "$(q "SELECT count(*) FROM call_rows WHERE id LIKE 'a-%'")" 0
eq "a: nothing printed" "$(wc -c <a.out | tr -d ' ')" 0

# (b) The call rows fit, the results do not: the calls are journaled
# (running: their tools started), no result of them is, none is printed.
fill_but 96
for k in 1 2 3; do mk "b-$k" big '{"n":150000}'; done >b.jsonl
set +e
"$TOOLGATE" run b.jsonl >b.out 2>b.err
rc=$?
set -e
eq "b: exit status" "$rc" 4
sound b
eq "b: the calls were journaled before they ran" \
  "$(q "SELECT count(*) FROM call_rows WHERE id LIKE 'b-%'")" 3
eq "b: no result of them" "$(q "SELECT count(*) FROM results WHERE id LIKE 'b-%'")" 0
eq "b: nothing printed" "$(wc -c <b.out | tr -d ' ')" 0

# Room again: the next command that opens the journal ends the lost calls,
# once; every call row has exactly one result.
rm -f small/filler
"$TOOLGATE" history --json --limit 100 >h.jsonl
eq "after: lost calls INTERRUPTED" \
  "$(jq -r 'select(.id | startswith("b-")) | "\(.payload.error.code) \(.execution)"' h.jsonl | sort -u)" \
  "INTERRUPTED started"
eq "after: every call row has its result" \
  "$(q "SELECT count(*) FROM call_rows c LEFT JOIN results r ON r.call_rowid = c.rowid WHERE r.call_rowid IS NULL")" 0
eq "after: nothing running" "$(q "SELECT count(*) FROM running")" 0
eq "after: integrity_check" "$(q 'PRAGMA integrity_check')" ok
"$TOOLGATE" run ok.jsonl >again.out
eq "after: the journal takes turns again" "$(jq -r '.replayed' again.out | sort -u)" true
finish
