#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Arguments are checked against each tool's JSON Schema before anything
# runs: INVALID_ARGUMENTS lists every violation with its JSON pointer and the
# tool never starts; limits.repair (off by default) fixes a code fence,
# trailing commas and quoted numbers and booleans, and the result says what
# it did, but never completes arguments that were cut; a bad schema keeps
# toolgate from starting.
source "$(dirname "$0")/lib.sh"
mkdir ws
config() { # config REPAIR
  cat >toolgate.json <<JSON
{"workspace": "ws", "journal": null, "limits": {"repair": $1},
 "tools": [
  {"name": "note", "command": ["/bin/sh", "-c", "echo ran >> ran.txt; echo \"\$0 \$1\"", "{text}", "{n}"],
   "input_schema": {"type": "object", "additionalProperties": false,
     "properties": {"text": {"type": "string", "minLength": 2},
                    "n": {"type": "integer", "maximum": 10},
                    "loud": {"type": "boolean"}},
     "required": ["text", "n"]}}
 ]}
JSON
}
config false
mk() { printf '{"id":"%s","tool":"note","args":%s}\n' "$1" "$2"; }
{ mk ok '{"text":"hi","n":3}'
  mk bad '{"text":42,"n":12,"extra":true}'
  mk quoted '{"text":"hi","n":"7","loud":"true"}'
  mk fenced '"```json\n{\"text\":\"hi\",\"n\":1,}\n```"'
  mk cut '"{\"text\":\"hey\",\"n\":2,\"loud\":tr"'
  mk cut2 '"{\"n\":2,\"text\":\"hey"'
} >calls.jsonl

"$TOOLGATE" run calls.jsonl >out.jsonl
eq "outcomes without repair" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success error error error error error "
eq "codes" "$(jq -r 'if (.payload|type)=="object" then .payload.error.code else "-" end' out.jsonl | tr '\n' ' ')" "- INVALID_ARGUMENTS INVALID_ARGUMENTS MALFORMED_ARGUMENTS MALFORMED_ARGUMENTS MALFORMED_ARGUMENTS "
eq "every violation listed" "$(jq -c 'select(.id=="bad").payload.error.details | map([.path, .keyword])' out.jsonl)" \
  '[["/text","type"],["/n","maximum"],["","additionalProperties"]]'
msg=$(jq -r 'select(.id=="bad").payload.error.message' out.jsonl)
contains "message names the value" "$msg" "/text must be a string, got 42"
contains "message names the bound" "$msg" "/n must be"
contains "message names the extra property" "$msg" "'extra'"
eq "invalid calls never ran" "$(wc -l < ws/ran.txt)" 1
eq "not started" "$(jq -r 'select(.id=="bad").execution' out.jsonl)" not_started
check "no repaired field when off" bash -c "! grep -q repaired out.jsonl"

rm ws/ran.txt
config true
"$TOOLGATE" run calls.jsonl >out.jsonl
eq "outcomes with repair" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success error success success error error "
eq "quoted scalars unquoted" "$(jq -c 'select(.id=="quoted").repaired' out.jsonl)" '["coerced strings to the types the schema wants"]'
eq "quoted ran with the number" "$(jq -r 'select(.id=="quoted").payload' out.jsonl)" "hi 7"
eq "fence and commas" "$(jq -c 'select(.id=="fenced").repaired' out.jsonl)" '["stripped a Markdown code fence","dropped trailing commas"]'
eq "a cut string is not closed" "$(jq -r 'select(.id=="cut2").payload.error.code' out.jsonl)" MALFORMED_ARGUMENTS
contains "it says where it was cut" "$(jq -r 'select(.id=="cut2").payload.error.message' out.jsonl)" \
  "were cut short: they end inside a string at line 1, column 19"
eq "a cut literal is not guessed" "$(jq -r 'select(.id=="cut").payload.error.code' out.jsonl)" MALFORMED_ARGUMENTS
contains "cut inside a literal" "$(jq -r 'select(.id=="cut").payload.error.message' out.jsonl)" "inside a literal"
eq "a wrong value is not repaired" "$(jq -r 'select(.id=="bad").payload.error.code' out.jsonl)" INVALID_ARGUMENTS
eq "no repair on a valid call" "$(jq -r 'select(.id=="ok") | has("repaired")' out.jsonl)" false
eq "repaired calls ran" "$(wc -l < ws/ran.txt)" 3

# A schema that is not a schema: exit 3, naming the keyword.
cat >toolgate.json <<'JSON'
{"workspace": "ws", "journal": null,
 "tools": [{"name": "x", "command": ["/bin/true"],
            "input_schema": {"type": "object", "properties": {"a": {"minLength": -1}}}}]}
JSON
set +e
"$TOOLGATE" run calls.jsonl >/dev/null 2>err.txt; st=$?
set -e
eq "bad schema exit" "$st" 3
contains "bad schema names the member" "$(cat err.txt)" "tools[0].input_schema"
contains "bad schema names the keyword" "$(cat err.txt)" "/properties/a/minLength"
finish
