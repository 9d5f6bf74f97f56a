#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `toolgate journal verify` end to end: real calls through `toolgate run`
# verify OK; then the journal is edited with the sqlite3 CLI the way
# someone covering their tracks would (a payload changed, a call's
# arguments changed, a row deleted, a row inserted, two rows reordered) and
# each time verify exits 1 naming the first bad row and what happened to
# it. A journal chained with an HMAC key needs that key.
source "$(dirname "$0")/lib.sh"
mkdir ws
cat >toolgate.json <<'JSON'
{"workspace": "ws", "journal": "j/journal.db", "sandbox": {"mode": "off"},
 "tools": [{"name": "echo", "command": ["/bin/echo", "{text}"]}]}
JSON
mk() { printf '{"id":"%s","tool":"echo","args":{"text":"%s"}}\n' "$1" "$2"; }
for t in 1 2 3; do
  for k in 1 2; do mk "t$t-$k" "turn $t call $k"; done >"turn$t.jsonl"
  "$TOOLGATE" run "turn$t.jsonl" >/dev/null
done
q() { sqlite3 "$1" "$2"; }

out=$("$TOOLGATE" journal verify)
contains "verify OK" "$out" ": OK, 6 result rows chained (seq 1 to 6), sha256"
"$TOOLGATE" journal verify --json >ok.json
eq "json ok" "$(jq -r .ok ok.json)" true
eq "json rows" "$(jq -r .rows ok.json)" 6
eq "head is the last row's link" "$(jq -r .head ok.json)" \
  "$(q j/journal.db "SELECT lower(hex(chain)) FROM results ORDER BY chain_seq DESC LIMIT 1")"
eq "--journal names the file" "$(cd / && "$TOOLGATE" journal verify --journal "$WORK/j/journal.db" --json | jq -r .rows)" 6

# tamper NAME SQL PROBLEM ID: on a copy of the journal, runs SQL, then
# verify must exit 1 and name PROBLEM at the call with id ID.
tamper() {
  local name=$1 sql=$2 problem=$3 id=$4 status=0
  cp j/journal.db "$name.db"
  q "$name.db" "$sql"
  "$TOOLGATE" journal verify --journal "$name.db" >"$name.out" || status=$?
  eq "$name: exit status" "$status" 1
  contains "$name: names the row" "$(cat "$name.out")" "FAILED: row $problem: call id '$id'"
  "$TOOLGATE" journal verify --journal "$name.db" --json >"$name.json" || true
  eq "$name: json problem" "$(jq -r .problem "$name.json")" "$problem"
  eq "$name: json id" "$(jq -r .id "$name.json")" "$id"
}
# The WAL holds the rows until a checkpoint: fold it in before copying.
q j/journal.db "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
tamper payload "UPDATE results SET payload = '\"nothing to see\"' WHERE id = 't2-1'" changed t2-1
tamper args "UPDATE call_rows SET args = '{\"text\":\"other\"}' WHERE id = 't1-2'" changed t1-2
tamper outcome "UPDATE results SET outcome = 1 WHERE id = 't3-1'" changed t3-1
# Rows are chained in the order results were written, which within a turn
# is the order calls finished: the rows at seq N are looked up.
at() { q j/journal.db "SELECT id FROM results WHERE chain_seq = $1"; }
tamper delete "PRAGMA foreign_keys = ON; DELETE FROM calls WHERE id = '$(at 3)'" removed "$(at 4)"
tamper insert "INSERT INTO calls(rowid, id, tool, args, format, created_at, started_at, state)
  VALUES (99, 'forged', 'echo', '{}', 'toolgate', 1, 1, 'done');
  INSERT INTO results(call_rowid, id, tool, outcome, execution, payload, completed_at)
  VALUES (99, 'forged', 'echo', 0, 'finished', '\"ok\"', 1)" inserted forged
tamper copy "INSERT INTO calls(rowid, id, tool, args, format, created_at, started_at, state)
  VALUES (98, 'copy', 'echo', '{}', 'toolgate', 1, 1, 'done');
  INSERT INTO results(call_rowid, id, tool, outcome, execution, payload, completed_at, chain_seq, chain)
  SELECT 98, 'copy', 'echo', 0, 'finished', '\"ok\"', 1, max(chain_seq) + 1,
  (SELECT chain FROM results WHERE chain_seq = 6) FROM results" inserted copy
tamper reorder "UPDATE results SET chain_seq = -chain_seq WHERE chain_seq IN (2, 4);
  UPDATE results SET chain_seq = CASE chain_seq WHEN -2 THEN 4 ELSE 2 END WHERE chain_seq IN (-2, -4)" changed "$(at 4)"
tamper seqs "DELETE FROM results WHERE chain_seq = 4; UPDATE results SET chain_seq = 1 - chain_seq WHERE chain_seq > 4;
  UPDATE results SET chain_seq = -chain_seq WHERE chain_seq < 0" changed "$(at 5)"

# The untouched journal still verifies, and later runs chain on.
"$TOOLGATE" run turn1.jsonl >/dev/null
eq "after a replay" "$("$TOOLGATE" journal verify --json | jq -r .rows)" 8

# With an HMAC key: a fresh journal chained with it needs it.
printf 'a secret key\n' >key
printf 'another key\n' >key2
mkdir keyed && cd keyed
sed 's#"j/journal.db"#"kj/journal.db"#; s#"ws"#"../ws"#' ../toolgate.json >toolgate.json
"$TOOLGATE" run --hmac-key-file ../key ../turn1.jsonl >/dev/null
ran_keyed=$(q kj/journal.db "SELECT key_id FROM chain_epochs ORDER BY first_seq DESC LIMIT 1")
check "the run chained with the key" test -n "$ran_keyed"
out=$("$TOOLGATE" journal verify --hmac-key-file ../key)
contains "keyed verify OK" "$out" "OK, 2 result rows chained (seq 1 to 2), hmac-sha256 key id $ran_keyed"
status=0; "$TOOLGATE" journal verify >nokey.out || status=$?
eq "without the key: exit 1" "$status" 1
contains "without the key: says so" "$(cat nokey.out)" "row unverifiable"
status=0; "$TOOLGATE" journal verify --hmac-key-file ../key2 >otherkey.out || status=$?
eq "another key: exit 1" "$status" 1
contains "another key: says so" "$(cat otherkey.out)" "another HMAC key"
cd "$WORK"

# No journal: a usage error, and nothing is created.
status=0; "$TOOLGATE" journal verify --journal "$WORK/none/j.db" 2>err.txt || status=$?
eq "missing journal exit" "$status" 2
contains "missing journal says so" "$(cat err.txt)" "no journal at"
check "nothing created" test ! -e "$WORK/none"
status=0; "$TOOLGATE" journal 2>err.txt || status=$?
eq "journal without verify" "$status" 2
finish
