#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# journal.max_rows and journal.keep_days end to end: after a turn's results
# are committed, completed calls beyond the limits are deleted with their
# results; a call still running (its owner alive) is never deleted.
source "$(dirname "$0")/lib.sh"
mkdir ws
conf() {
  printf '{"workspace": "ws", "journal": {"path": "j/journal.db"%s}, "tools": [{"name": "echo", "command": ["/bin/echo", "{text}"]}]}\n' "$1" >toolgate.json
}
mk() { printf '{"id":"%s","tool":"%s","args":%s}\n' "$1" "$2" "$3"; }
turn() { for k in 1 2 3; do mk "t$1-$k" echo '{"text":"x"}'; done >"turn$1.jsonl"; "$TOOLGATE" run "turn$1.jsonl" >/dev/null; }
q() { sqlite3 j/journal.db "$1"; }

conf ''
turn 0
# A call running in a live process (this shell), older than everything.
q "INSERT INTO calls(rowid, id, tool, format, created_at, started_at, state, owner_pid, owner_start)
   VALUES (-1, 'live', 'echo', 'toolgate', 0, 0, 'running', $$, 0)"

conf ', "max_rows": 5'
for i in 1 2 3 4 5 6; do turn "$i"; done
n=$(q "SELECT count(*) FROM calls WHERE state = 'done'")
# Pruned at the first commit of each run: at most the limit plus the rest
# of that run's turn.
check "done calls ${n} within max_rows + one turn" test "$n" -le 8 -a "$n" -ge 5
eq "results follow their calls" "$(q "SELECT count(*) FROM results")" "$n"
eq "newest kept" "$(q "SELECT count(*) FROM calls WHERE id LIKE 't6-%'")" 3
eq "oldest gone" "$(q "SELECT count(*) FROM calls WHERE id LIKE 't1-%'")" 0
eq "running call kept" "$(q "SELECT state FROM calls WHERE id = 'live'")" running
eq "history has the newest" "$("$TOOLGATE" history --json --limit 1 | jq -r .id | cut -d- -f1)" t6

conf ', "keep_days": 2'
q "UPDATE results SET completed_at = completed_at - 3 * 86400000 WHERE id LIKE 't6-%'"
turn 7
eq "older than keep_days gone" "$(q "SELECT count(*) FROM calls WHERE id LIKE 't6-%'")" 0
eq "this turn kept" "$(q "SELECT count(*) FROM calls WHERE id LIKE 't7-%'")" 3
eq "running call still kept" "$(q "SELECT count(*) FROM calls WHERE id = 'live'")" 1
eq "integrity" "$(q "PRAGMA integrity_check")" ok

# The artifacts of pruned rows are released from the spool; those that a
# kept row names stay, and a released id says so.
rm -rf j spool
printf '{"workspace": "ws", "journal": {"path": "j/journal.db", "max_rows": 2}, "spool": {"dir": "spool", "inline_max_bytes": 100}, "sandbox": {"mode": "off"}, "tools": [{"name": "lines", "command": ["seq", "{n}"]}]}\n' >toolgate.json
for n in 1001 1002 1003 1004; do mk "s$n" lines "{\"n\":\"$n\"}" | "$TOOLGATE" run --to toolgate >"s$n.out"; done
first=$(jq -r .artifact.id s1001.out)
last=$(jq -r .artifact.id s1004.out)
eq "the pruned row's artifact is released" "$("$TOOLGATE" artifact list --json | jq -r --arg id "$first" 'select(.id==$id) | .state')" released
eq "a kept row's artifact stays" "$("$TOOLGATE" artifact list --json | jq -r --arg id "$last" 'select(.id==$id) | .state')" stored
"$TOOLGATE" artifact head "$first" 1 >/dev/null 2>err.txt && fail "a released artifact was read" || pass
contains "a released artifact says so" "$(cat err.txt)" "$first"
eq "integrity after releasing" "$(q "PRAGMA integrity_check")" ok

conf ', "max_rows": -1'
"$TOOLGATE" run turn7.jsonl >/dev/null 2>err.txt && fail "negative max_rows accepted" || eq "bad max_rows exit" "$?" 3
contains "bad max_rows message" "$(cat err.txt)" "journal.max_rows"
finish
