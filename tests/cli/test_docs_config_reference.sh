#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_docs_config_reference.sh - the reference of docs/configuration.md
# and docs/guide.md is the one printed from the table the configuration is validated against
# (src/registry/config_keys.c, tests/tools/config_reference.c): a key
# accepted but not documented, or documented but not accepted, fails here
# (and tests/unit/exec/test_config_keys.c checks that every key of the
# table is read by a loader). scripts/gen-config-reference rewrites it.
. "$(dirname "$0")/lib.sh"

gen="$TG_FIXTURES/config_reference"
"$gen" > generated.md
for name in configuration guide; do
  doc="$TG_SOURCE_DIR/docs/$name.md"
  check "docs/$name.md exists" test -f "$doc"
  sed -n '/^<!-- BEGIN config reference/,/^<!-- END config reference/p' "$doc" > documented.md
  check "docs/$name.md has the generated section" test -s documented.md
  if diff -u documented.md generated.md > diff.txt; then
    pass
  else
    fail "docs/$name.md differs from the table the code validates (run scripts/gen-config-reference):"
    cat diff.txt >&2
  fi
done
# Every key the loaders accept is in the document: each row of the table.
rows=$(grep -c '^| `' generated.md)
check "the reference has a row per key" test "$rows" -gt 50

[ "$FAILS" -eq 0 ] || exit 1
echo "ok ($CHECKS checks)"
