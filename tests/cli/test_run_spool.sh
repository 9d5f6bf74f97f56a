#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Spooled results end to end: output past spool.inline_max_bytes becomes an
# artifact and the model gets a handle (id, size, lines, preview, which
# tools to call); `inline: false` forces a handle; binary output is never
# pasted; a line that never ends is fine; limits.max_output_bytes stops a
# runaway tool and keeps what it wrote; the artifact tools read, grep, tail
# and stat it in the next turn, and their own results are never spooled;
# the journal and `toolgate artifact` see the same store; spool.max_bytes
# evicts the least recently used, and an evicted id says so; a full spool
# file system gives SPOOL_FAILED and leaves nothing half-written.
source "$(dirname "$0")/lib.sh"
mkdir ws
cat >toolgate.json <<'JSON'
{"workspace": "ws", "journal": "journal.db", "builtin_tools": [], "sandbox": {"mode": "off"},
 "spool": {"dir": "spool", "inline_max_bytes": 4096},
 "limits": {"max_output_bytes": 3000000},
 "tools": [
  {"name": "lines", "command": ["seq", "1", "{n}"]},
  {"name": "binary", "command": ["head", "-c", "50000", "/dev/urandom"]},
  {"name": "tinybin", "command": ["printf", "a\\000b"]},
  {"name": "oneline", "command": ["sh", "-c", "head -c 300000 /dev/zero | tr '\\\\0' a"]},
  {"name": "flood", "command": ["yes", "flood"]}]}
JSON
mk() { printf '{"id":"%s","tool":"%s","args":%s%s}\n' "$1" "$2" "$3" "${4:+,$4}"; }
{ mk big lines '{"n":"200000"}'
  mk small lines '{"n":"3"}'
  mk forced lines '{"n":"3"}' '"inline":false'
  mk bin binary '{}'
  mk tiny tinybin '{}'
  mk one oneline '{}'
  mk runaway flood '{}'
} >calls.jsonl
"$TOOLGATE" run --to toolgate calls.jsonl >out.jsonl
r() { jq -r "select(.id==\"$1\")$2" out.jsonl; }
ID=$(r big .artifact.id)
eq "big output is an artifact" "$(grep -cE '^art_[0-9a-f]{24}$' <<<"$ID")" 1
eq "artifact bytes" "$(r big .artifact.bytes)" "$(seq 1 200000 | wc -c)"
eq "artifact lines" "$(r big .artifact.lines)" 200000
eq "artifact sha256" "$(r big .artifact.sha256)" "$(seq 1 200000 | sha256sum | cut -d' ' -f1)"
contains "the handle names the id" "$(r big .payload)" "$ID"
contains "the handle previews the last line" "$(r big .payload)" "200000"
contains "the handle says which tools to call" "$(r big .payload)" "artifact_grep"
check "the handle is short" [ "$(r big .payload | wc -c)" -lt 2000 ]
eq "small output stays inline" "$(r small .payload)" "$(printf '1\n2\n3')"
eq "small output has no artifact" "$(r small .artifact)" null
eq "inline:false forces a handle" "$(r forced .artifact.id | grep -cE '^art_[0-9a-f]{24}$')" 1
eq "binary: media type" "$(r bin .artifact.media_type)" "application/octet-stream"
contains "binary is never pasted" "$(r bin .payload)" "binary"
eq "tiny binary output: an artifact, not pasted" "$(r tiny .artifact.bytes) $(r tiny .artifact.media_type)" "3 application/octet-stream"
eq "a line that never ends: kept whole" "$(r one .artifact.bytes)" 300000
eq "runaway: OUTPUT_LIMIT" "$(r runaway .payload.error.code)" OUTPUT_LIMIT
eq "runaway: what it wrote is kept" "$(r runaway .artifact.bytes)" 3000000
check "the artifact file is the output" bash -c "seq 1 200000 | cmp -s - <(\"$TOOLGATE\" artifact read $ID --length 100000000)"
eq "journal keeps the artifact" "$("$TOOLGATE" show big | jq -r .result.artifact.id)" "$ID"
eq "artifact head" "$("$TOOLGATE" artifact head "$ID" 2)" "$(printf '1\n2')"
contains "artifact list" "$("$TOOLGATE" artifact list)" "$ID"

# The next turn reads it through the artifact tools.
{ mk t1 artifact_tail "{\"artifact\":\"$ID\",\"lines\":2}"
  mk t2 artifact_grep "{\"artifact\":\"$ID\",\"pattern\":\"^19999[0-9]\$\"}"
  mk t3 artifact_read "{\"artifact\":\"$ID\",\"line\":100,\"lines\":2}"
  mk t4 artifact_stat "{\"artifact\":\"$ID\"}"
  mk t5 artifact_read '{"artifact":"../../etc/passwd"}'
  mk t6 artifact_read '{"artifact":"art_000000000000000000000000"}'
  mk t7 artifact_grep "{\"artifact\":\"$ID\",\"pattern\":\"(unclosed\"}"
  mk t8 artifact_read "{\"artifact\":\"$ID\",\"offset\":0,\"length\":100000}"
} >tools.jsonl
"$TOOLGATE" run --to toolgate tools.jsonl >out.jsonl
eq "tail" "$(r t1 .payload.text)" "$(printf '199999\n200000')"
eq "grep count" "$(r t2 .payload.count)" 10
eq "read lines" "$(r t3 .payload.text)" "$(printf '100\n101')"
eq "stat lines" "$(r t4 .payload.lines)" 200000
eq "malformed id" "$(r t5 .payload.error.code)" INVALID_ARTIFACT_ID
eq "unknown id" "$(r t6 .payload.error.code)" ARTIFACT_NOT_FOUND
eq "invalid pattern" "$(r t7 .payload.error.code)" INVALID_PATTERN
eq "artifact tool results are never spooled" "$(r t8 .artifact)" null
eq "tool definitions offer the id" "$("$TOOLGATE" tools | jq -r --arg id "$ID" '[.tools[] | select(.name=="artifact_read") | .inputSchema.properties.artifact.enum[] | select(.==$id)] | length')" 1

# spool.max_bytes: the least recently used goes, and says so.
jq '.spool.max_bytes = 2000000 | .spool.dir = "spool2"' toolgate.json >small.json
mk e1 lines '{"n":"150000"}' >evict1.jsonl
"$TOOLGATE" run --config small.json --to toolgate evict1.jsonl >out.jsonl
E1=$(r e1 .artifact.id)
for n in 150001 150002; do
  sleep 0.01 # the index keeps milliseconds: one artifact per tick
  mk "e$n" "lines" "{\"n\":\"$n\"}" | "$TOOLGATE" run --config small.json --to toolgate >/dev/null
done
mk x artifact_stat "{\"artifact\":\"$E1\"}" >evict3.jsonl
"$TOOLGATE" run --config small.json --to toolgate evict3.jsonl >out.jsonl
eq "an evicted artifact says so" "$(r x .payload.error.code)" ARTIFACT_EVICTED

# A full spool file system: the call says so, nothing is left half-written.
if [ "$(id -u)" = 0 ] && mkdir full && mount -t tmpfs -o size=1m tmpfs full 2>/dev/null; then
  trap 'umount "$WORK/full" 2>/dev/null; rm -rf "$WORK"' EXIT
  jq '.spool.dir = "full/spool"' toolgate.json >full.json
  mk f1 lines '{"n":"400000"}' >full.jsonl
  "$TOOLGATE" run --config full.json --to toolgate full.jsonl >out.jsonl; rc=$?
  eq "spool full: the turn still completes" "$rc" 0
  eq "spool full: SPOOL_FAILED" "$(r f1 .payload.error.code)" SPOOL_FAILED
  contains "spool full: says why" "$(r f1 .payload.error.message)" "No space left"
  eq "spool full: no partial artifact" "$(find full/spool -name 'art_*' | wc -l)" 0
  eq "spool full: no temporary file left" "$(find full/spool/tmp -type f 2>/dev/null | wc -l)" 0
else
  echo "note: not root or no tmpfs mount here; the full-spool case is covered by unit_test_spool"
fi
finish
