#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_validate.sh - `toolgate validate`: exit statuses, violation lines,
# --lines, --draft, --remote, --format-assert, bad schemas (docs/guide.md).
. "$(dirname "$0")/lib.sh"

cat > schema.json <<'J'
{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer","maximum":10}},
 "required":["text"],"additionalProperties":false}
J
echo '{"text":"hi","n":3}' > good.json
echo '{"text":42,"n":12,"extra":true}' > bad.json

out=$("$TOOLGATE" validate schema.json good.json); st=$?
eq "valid: exit" "$st" 0
eq "valid: silent" "$out" ""
set +e
out=$("$TOOLGATE" validate schema.json bad.json); st=$?
set -e
eq "invalid: exit" "$st" 1
eq "invalid: one line per violation" "$(printf '%s\n' "$out" | wc -l)" 3
contains "type violation" "$out" '"path":"/text","keyword":"type"'
contains "maximum violation" "$out" '"path":"/n","keyword":"maximum"'
contains "additionalProperties violation" "$out" '"keyword":"additionalProperties"'
contains "message names the value" "$(printf '%s\n' "$out" | jq -r 'select(.path=="/text").message')" "42"
# stdin, and every line is JSON
out=$("$TOOLGATE" validate schema.json - < bad.json || true)
check "violations are JSON lines" bash -c "printf '%s\n' '$out' | jq -e . >/dev/null"

# --lines: true/false per line, exit 0
printf '%s\n' '{"text":"a"}' '{"text":1}' '' 'not json' '{"text":"b","n":10}' > many.jsonl
set +e
out=$("$TOOLGATE" validate --lines schema.json < many.jsonl 2>err.txt); st=$?
set -e
eq "--lines exit" "$st" 0
eq "--lines answers" "$(echo $out)" "true false false true"
contains "--lines says which line is not JSON" "$(cat err.txt)" ":4:"

# drafts: items as an array is a tuple in draft 7, ignored keyword form in 2020-12
echo '{"items":[{"type":"string"}]}' > tuple.json
echo '[1]' > one.json
set +e
"$TOOLGATE" validate --draft 7 tuple.json one.json >/dev/null; st=$?
set -e
eq "--draft 7 tuple items" "$st" 1
echo '{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}]}' > tuple7.json
set +e
"$TOOLGATE" validate tuple7.json one.json >/dev/null; st=$?
set -e
eq "\$schema draft-07 chosen" "$st" 1

# --remote: $ref to a URL read from a directory, never fetched
mkdir remote
echo '{"type":"integer"}' > remote/int.json
echo '{"$ref":"http://example.test/schemas/int.json"}' > refs.json
echo '7' > seven.json
echo '"x"' > str.json
check "--remote resolves" "$TOOLGATE" validate --remote http://example.test/schemas/=remote refs.json seven.json
set +e
"$TOOLGATE" validate --remote http://example.test/schemas/=remote refs.json str.json >/dev/null; st=$?
eq "--remote checks" "$st" 1
"$TOOLGATE" validate refs.json seven.json 2>err.txt; st=$?
set -e
eq "unresolvable \$ref exits 2" "$st" 2
contains "unresolvable \$ref named" "$(cat err.txt)" "http://example.test/schemas/int.json"

# the metaschemas are built in: a $ref to one resolves with no --remote
# (and nothing is fetched: the tests have no network)
echo '{"type":"objekt","minLength":-1}' > badmeta.json
for meta in https://json-schema.org/draft/2020-12/schema \
    https://json-schema.org/draft/2019-09/schema \
    'http://json-schema.org/draft-07/schema#'; do
  printf '{"$ref":"%s"}\n' "$meta" > meta.json
  check "$meta built in: a schema is valid" "$TOOLGATE" validate meta.json schema.json
  set +e
  out=$("$TOOLGATE" validate meta.json badmeta.json 2>err.txt); st=$?
  set -e
  eq "$meta built in: a bad schema is invalid" "$st" 1
  contains "$meta: the bad type named" "$out" '"path":"/type"'
  contains "$meta: the bad minLength named" "$out" '"path":"/minLength","keyword":"minimum"'
  eq "$meta: nothing on stderr" "$(cat err.txt)" ""
done
# and through $schema: a schema in draft 7 whose property is a draft-7 schema
printf '%s\n' '{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"s":{"$ref":"http://json-schema.org/draft-07/schema#"}}}' > meta7.json
echo '{"s":{"items":[{"type":"string"}]}}' > tuple_ok.json
echo '{"s":{"items":[{"type":"strin"}]}}' > tuple_bad.json
check "draft-07 metaschema via \$schema: valid" "$TOOLGATE" validate meta7.json tuple_ok.json
set +e
out=$("$TOOLGATE" validate meta7.json tuple_bad.json); st=$?
set -e
eq "draft-07 metaschema via \$schema: invalid" "$st" 1
contains "draft-07: the tuple named" "$out" '"path":"/s/items","keyword":"anyOf"'
# a vocabulary metaschema, and a custom metaschema (under --remote) that
# builds on the built-in ones and turns format assertion on
echo '{"$ref":"https://json-schema.org/draft/2020-12/meta/validation"}' > vocab.json
check "vocabulary metaschema built in" "$TOOLGATE" validate vocab.json schema.json
set +e
"$TOOLGATE" validate vocab.json badmeta.json >/dev/null; st=$?
set -e
eq "vocabulary metaschema checks" "$st" 1
mkdir metas
cat > metas/strict <<'J'
{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"http://example.test/metas/strict",
 "$vocabulary":{"https://json-schema.org/draft/2020-12/vocab/core":true,
  "https://json-schema.org/draft/2020-12/vocab/validation":true,
  "https://json-schema.org/draft/2020-12/vocab/format-assertion":true},
 "$dynamicAnchor":"meta",
 "allOf":[{"$ref":"https://json-schema.org/draft/2020-12/meta/core"},
  {"$ref":"https://json-schema.org/draft/2020-12/meta/validation"},
  {"$ref":"https://json-schema.org/draft/2020-12/meta/format-assertion"}]}
J
echo '{"$schema":"http://example.test/metas/strict","format":"ipv4"}' > strictip.json
echo '"999.1.1.1"' > badip.json
set +e
"$TOOLGATE" validate --remote http://example.test/metas/=metas strictip.json badip.json >/dev/null; st=$?
set -e
eq "custom metaschema with format-assertion asserts" "$st" 1
echo '"10.0.0.1"' > goodip.json
check "custom metaschema: a good address" "$TOOLGATE" validate --remote http://example.test/metas/=metas strictip.json goodip.json
echo '{"$ref":"http://example.test/metas/strict"}' > strictref.json
echo '{"format":7}' > badformat.json
set +e
out=$("$TOOLGATE" validate --remote http://example.test/metas/=metas strictref.json badformat.json); st=$?
set -e
eq "custom metaschema validates schemas through the built-in ones" "$st" 1
contains "custom metaschema: format must be a string" "$out" '"path":"/format"'

# formats: annotations by default, asserted on request
echo '{"format":"ipv4"}' > ip.json
echo '"999.1.1.1"' > badip.json
check "format is an annotation" "$TOOLGATE" validate ip.json badip.json
set +e
"$TOOLGATE" validate --format-assert ip.json badip.json >/dev/null; st=$?
set -e
eq "--format-assert" "$st" 1

# bad schemas exit 2 and say where
echo '{"type":"object","properties":{"a":{"minLength":-1}}}' > badschema.json
set +e
"$TOOLGATE" validate badschema.json good.json 2>err.txt; st=$?
set -e
eq "invalid schema exits 2" "$st" 2
contains "invalid schema names the keyword" "$(cat err.txt)" "/properties/a/minLength"
echo '{"type":' > notjson.json
set +e
"$TOOLGATE" validate notjson.json good.json 2>err.txt; st=$?
set -e
eq "schema not JSON exits 2" "$st" 2
contains "schema not JSON names the place" "$(cat err.txt)" "line 2, column 0"
# a catastrophic regex ends, with an answer (in well under a second; a
# scaled 20 s tells that from a hang)
echo '{"pattern":"^(a+)+$"}' > redos.json
printf '"%s!"\n' "$(head -c 5000 /dev/zero | tr '\0' a)" > long.json
set +e
timeout "$(tg_s 20)" "$TOOLGATE" validate redos.json long.json >/dev/null 2>&1; st=$?
set -e
check "catastrophic regex does not hang" test "$st" -ne 124

finish
