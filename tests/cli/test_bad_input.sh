#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bad input: exit 2 naming file, line, column and what was expected; bad
# configuration exits 3 naming the key; oversized arguments, checksum
# tampering and deep nesting are results or clear errors, never crashes.
source "$(dirname "$0")/lib.sh"
mkdir ws
expect_exit() { # DESCRIPTION STATUS NEEDLE COMMAND...
  local d=$1 want=$2 needle=$3; shift 3
  set +e; "$@" >out.txt 2>err.txt; local rc=$?; set -e
  eq "$d: exit" "$rc" "$want"
  contains "$d: message" "$(cat err.txt)" "$needle"
}
printf '{"choices": [ {"message": {"tool_calls": [}\n' >truncated.json
expect_exit "not JSON" 2 "truncated.json:1:" "$TOOLGATE" run --no-journal truncated.json
printf 'hello world\n' >text.txt
expect_exit "plain text" 2 "text.txt" "$TOOLGATE" run --no-journal text.txt
printf '{"weather": "sunny"}' >shape.json
expect_exit "unknown shape" 2 "expected" "$TOOLGATE" run --no-journal shape.json
: >empty.json
expect_exit "empty input" 2 "empty" "$TOOLGATE" run --no-journal empty.json
expect_exit "missing file" 2 "nope.json" "$TOOLGATE" run --no-journal nope.json
expect_exit "unknown option" 2 "--frobnicate" "$TOOLGATE" run --frobnicate x
expect_exit "bad --timeout" 2 "--timeout" "$TOOLGATE" run --timeout soon x
expect_exit "unknown command" 2 "frob" "$TOOLGATE" frob

# Deep nesting and a huge document end with an error, not a crash.
python3 -c 'print("["*100000 + "]"*100000)' >deep.json 2>/dev/null || \
  { printf '%0.s[' $(seq 100000); printf '%0.s]' $(seq 100000); } >deep.json
expect_exit "deep nesting" 2 "deep.json" "$TOOLGATE" run --no-journal deep.json

# Configuration errors name the key.
echo '{"limits": {"parallel": 0}}' >bad1.json
expect_exit "bad parallel" 3 "limits.parallel" "$TOOLGATE" run --config bad1.json shape.json
echo '{"tols": []}' >bad2.json
expect_exit "unknown key" 3 "tols" "$TOOLGATE" run --config bad2.json shape.json
echo '{"tools": [{"name": "x", "command": "rm -rf /"}]}' >bad3.json
expect_exit "command must be argv" 3 "tools[0].command" "$TOOLGATE" run --config bad3.json shape.json
echo '{"limits": {' >bad4.json
expect_exit "config syntax" 3 "bad4.json" "$TOOLGATE" run --config bad4.json shape.json

# Arguments too large, checksum mismatch, duplicate ids: results, not failures.
cat >toolgate.json <<JSON
{"workspace": "ws", "journal": null, "limits": {"max_args_bytes": 64},
 "tools": [{"name": "echo", "command": ["/bin/echo", "{text}"]}]}
JSON
big=$(head -c 200 /dev/zero | tr '\0' x)
sum=$(printf '{"args":{"text":"hi"},"tool":"echo"}' | sha256sum | cut -d' ' -f1)
printf '%s\n' "{\"id\":\"big\",\"tool\":\"echo\",\"args\":{\"text\":\"$big\"}}" \
  "{\"id\":\"ok\",\"tool\":\"echo\",\"args\":{\"text\":\"hi\"},\"checksum\":\"sha256:$sum\"}" \
  "{\"id\":\"bad\",\"tool\":\"echo\",\"args\":{\"text\":\"hi!\"},\"checksum\":\"sha256:$sum\"}" \
  '{"id":"ok","tool":"echo","args":{"text":"again"}}' >calls.jsonl
"$TOOLGATE" run calls.jsonl >out.jsonl
eq "too large" "$(jq -r 'select(.id=="big").payload.error.code' out.jsonl)" ARGUMENTS_TOO_LARGE
eq "checksum ok" "$(sed -n 2p out.jsonl | jq -r .outcome)" success
eq "checksum mismatch" "$(jq -r 'select(.id=="bad").payload.error.code' out.jsonl)" CHECKSUM_MISMATCH
eq "duplicate id" "$(sed -n 4p out.jsonl | jq -r .payload.error.code)" DUPLICATE_CALL_ID

# HMAC checksums with a key file.
printf 'secret-key\n' >key
hsum=$(printf '{"args":{"text":"hi"},"tool":"echo"}' | openssl dgst -sha256 -hmac secret-key -r 2>/dev/null | cut -d' ' -f1 || true)
if [ -n "$hsum" ]; then
  printf '%s\n' "{\"id\":\"h1\",\"tool\":\"echo\",\"args\":{\"text\":\"hi\"},\"checksum\":\"hmac-sha256:$hsum\"}" \
    "{\"id\":\"h2\",\"tool\":\"echo\",\"args\":{\"text\":\"hi\"},\"checksum\":\"sha256:$sum\"}" >hmac.jsonl
  "$TOOLGATE" run --hmac-key-file key hmac.jsonl >out.jsonl
  eq "hmac ok" "$(jq -r 'select(.id=="h1").outcome' out.jsonl)" success
  eq "plain sha256 refused under a key" "$(jq -r 'select(.id=="h2").payload.error.code' out.jsonl)" CHECKSUM_MISMATCH
fi
finish
