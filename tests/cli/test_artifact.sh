#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# toolgate artifact: store outputs in the spool of the configuration
# (spool.dir) and read them back with list, read, grep, head, tail and stat,
# against the same bytes read with cat, head, tail and GNU grep; strict ids
# (malformed, traversal, unknown, evicted) and bad patterns fail clearly.
source "$(dirname "$0")/lib.sh"
cat >toolgate.json <<JSON
{"workspace": ".", "spool": {"dir": "spool", "inline_max_bytes": 1024}}
JSON

# Nothing stored yet: an empty list, and no spool is created by reading.
eq "empty list" "$("$TOOLGATE" artifact list)" ""
check "readers do not create the spool" test ! -e spool

seq 1 200000 | sed 's/$/ some text/' >lines.txt
"$TOOLGATE" artifact store lines.txt >art.json
id=$(jqr art.json .id)
eq "id is art_ + sha256 prefix" "$id" "art_$(sha256sum lines.txt | cut -c1-24)"
eq "bytes" "$(jqr art.json .bytes)" "$(stat -c %s lines.txt)"
eq "lines" "$(jqr art.json .lines)" 200000
eq "media type" "$(jqr art.json .media_type)" "text/plain; charset=utf-8"
eq "sha256" "$(jqr art.json .sha256)" "$(sha256sum lines.txt | cut -d' ' -f1)"
contains "preview has the first line" "$(jqr art.json .preview)" "1 some text"
contains "preview has the last line" "$(jqr art.json .preview)" "200000 some text"
check "spool dir is private" test "$(stat -c %a spool)" = 700

# The same bytes from stdin are stored once.
"$TOOLGATE" artifact store - <lines.txt >again.json
eq "dedupe: same id" "$(jqr again.json .id)" "$id"
eq "one artifact listed" "$("$TOOLGATE" artifact list --json | wc -l)" 1
eq "one file in the shard" "$(find spool/"${id:4:2}" -type f | wc -l)" 1
eq "no temporary files" "$(find spool/tmp -type f | wc -l)" 0
contains "table lists it" "$("$TOOLGATE" artifact list)" "$id"

# read: all of it, and a range, byte for byte
check "read all equals the input" cmp <("$TOOLGATE" artifact read "$id") lines.txt
eq "read a range" "$("$TOOLGATE" artifact read "$id" --offset 11 --length 20)" \
  "$(tail -c +12 lines.txt | head -c 20)"
eq "read past the end" "$("$TOOLGATE" artifact read "$id" --offset 99999999 | wc -c)" 0

# head / tail against coreutils
check "head 25" cmp <("$TOOLGATE" artifact head "$id" 25) <(head -n 25 lines.txt)
check "head default 10" cmp <("$TOOLGATE" artifact head "$id") <(head -n 10 lines.txt)
check "tail 25" cmp <("$TOOLGATE" artifact tail "$id" 25) <(tail -n 25 lines.txt)
check "tail more than all" cmp <("$TOOLGATE" artifact tail "$id" 999999) lines.txt

# grep against GNU grep: -n with context, and -c
check "grep -n" cmp <("$TOOLGATE" artifact grep "$id" '^1999[0-9]{2} ') \
  <(grep -nE '^1999[0-9]{2} ' lines.txt)
check "grep -n -C2" cmp <("$TOOLGATE" artifact grep "$id" --context 2 '^(5|7|8|20|1500) ') \
  <(grep -nE -C2 '^(5|7|8|20|1500) ' lines.txt)
eq "grep --count" "$("$TOOLGATE" artifact grep "$id" --count '7 some')" \
  "$(grep -c '7 some' lines.txt)"
eq "grep -i" "$("$TOOLGATE" artifact grep "$id" -i --count 'SOME TEXT$')" 200000
"$TOOLGATE" artifact grep "$id" --max 3 text >max.out 2>max.err
eq "grep --max" "$(wc -l <max.out)" 3
contains "grep --max says it stopped" "$(cat max.err)" "stopped after 3"
"$TOOLGATE" artifact grep "$id" --json 'x{0}^199999 ' >g.json
eq "grep --json line" "$(jqr g.json '.matches[0].line')" 199999

# stat
"$TOOLGATE" artifact stat "$id" >stat.json
eq "stat bytes" "$(jqr stat.json .bytes)" "$(stat -c %s lines.txt)"
eq "stat lines" "$(jqr stat.json .lines)" 200000

# bad input: every case exits 2 with a message naming the problem
expect_fail() { # DESCRIPTION NEEDLE COMMAND...
  local d=$1 needle=$2; shift 2
  set +e; "$@" >out.txt 2>err.txt; local rc=$?; set -e
  eq "$d: exit status" "$rc" 2
  contains "$d: message" "$(cat err.txt)" "$needle"
  eq "$d: no output" "$(wc -c <out.txt)" 0
}
expect_fail "malformed id" "malformed artifact id" "$TOOLGATE" artifact head art_XYZ
expect_fail "traversal" "malformed artifact id" "$TOOLGATE" artifact read 'art_../../etc/passwd'
expect_fail "upper case" "malformed artifact id" "$TOOLGATE" artifact read "${id^^}"
expect_fail "unknown id" "unknown artifact" "$TOOLGATE" artifact tail art_0123456789abcdef01234567
expect_fail "invalid pattern" "invalid pattern at offset 3" "$TOOLGATE" artifact grep "$id" 'ab('
expect_fail "unknown subcommand" "unknown subcommand" "$TOOLGATE" artifact frobnicate
expect_fail "missing pattern" "an artifact id and a pattern" "$TOOLGATE" artifact grep "$id"

# a catastrophic pattern ends quickly with a clear error (the match limit
# ends it in well under a second; a scaled 20 s tells that from a hang)
{ echo start; head -c 30000 /dev/zero | tr '\0' a; echo b; } >evil.txt
"$TOOLGATE" artifact store evil.txt >evil.json
start=$(now_ms)
expect_fail "catastrophic pattern" "too expensive on line 2" \
  "$TOOLGATE" artifact grep "$(jqr evil.json .id)" '(a+)+$'
took=$(($(now_ms) - start))
check "catastrophic pattern took $took ms" test "$took" -lt "$(tg_ms 20000)"

# binary output: detected, never previewed, read back byte for byte
head -c 100000 /dev/urandom >bin.dat
"$TOOLGATE" artifact store bin.dat >bin.json
eq "binary media type" "$(jqr bin.json .media_type)" "application/octet-stream"
eq "binary preview" "$(jqr bin.json .preview)" "binary, 100000 bytes"
check "binary read back" cmp <("$TOOLGATE" artifact read "$(jqr bin.json .id)") bin.dat

# an artifact whose file is gone answers "evicted", never other bytes
bid=$(jqr bin.json .id)
rm "spool/${bid:4:2}/$bid"
expect_fail "evicted id" "evicted" "$TOOLGATE" artifact read "$bid"
eq "listed as evicted" "$("$TOOLGATE" artifact list --json | jq -r "select(.id==\"$bid\").state")" evicted

# an empty output and one without a final newline
: >empty.txt
"$TOOLGATE" artifact store empty.txt >e.json
eq "empty: lines" "$(jqr e.json .lines)" 0
eq "empty: head" "$("$TOOLGATE" artifact head "$(jqr e.json .id)" | wc -c)" 0
printf 'a\nb\nlast' >nonl.txt
nid=$("$TOOLGATE" artifact store nonl.txt | jq -r .id)
eq "no final newline: tail 1" "$("$TOOLGATE" artifact tail "$nid" 1)" last
eq "no final newline: grep" "$("$TOOLGATE" artifact grep "$nid" 'st$')" "3:last"

# --config names the spool; the help and the main usage list the command
mkdir other
printf '{"spool": {"dir": "%s/other/sp"}}' "$PWD" >other.json
"$TOOLGATE" artifact store --config other.json nonl.txt >/dev/null
check "--config spool" test -d other/sp/"${nid:4:2}"
contains "help" "$("$TOOLGATE" artifact --help)" "artifact grep ID PATTERN"
contains "main usage" "$("$TOOLGATE" --help)" "artifact"
finish
