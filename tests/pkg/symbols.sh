# SPDX-License-Identifier: MIT
# symbols.sh LIBRARY MAP INCLUDE_DIR GCC - the ABI's three lists agree: the
# functions the public headers declare (include/toolgate.h, toolgate_loop.h and
# toolgate_serve.h, as GCC's -aux-info lists every declaration it compiled),
# the names of the version script (src/libtoolgate.map), and the symbols
# the shared library exports (nm -D --defined-only, version nodes aside).
# A function added to a header but not to the map, one left in the map
# after it left the header, or anything else the library exports (a
# variable, an internal tg__ function) fails the test with its name.
set -euo pipefail
lib=$1 map=$2 inc=$3 gcc=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Declared: every extern function whose declaration is in a public header.
printf '#include "toolgate.h"\n#include "toolgate_loop.h"\n#include "toolgate_serve.h"\n' >"$work/all.c"
"$gcc" -I"$inc" -aux-info "$work/aux.txt" -fsyntax-only "$work/all.c"
grep -E '^/\* [^ ]*/toolgate(_loop|_serve)?\.h:[0-9]+:' "$work/aux.txt" |
  perl -ne 'if (/\*\/ extern .*?\b(\w+) \(/) { print "$1\n" }
            elsif (!/\*\/ typedef /) { print STDERR "unexpected declaration: $_"; exit 1 }' |
  LC_ALL=C sort -u >"$work/declared"

# Listed: the global names of the version script (comments stripped).
perl -0777 -ne 's{/\*.*?\*/}{}gs; while (/global:(.*?)local:/gs) { print "$_\n" for $1 =~ /(\w+)\s*;/g }' \
  "$map" | LC_ALL=C sort >"$work/listed"

# Exported: the library's defined dynamic symbols without their version.
nm -D --defined-only "$lib" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' |
  LC_ALL=C sort >"$work/exported"

status=0
compare() { # NAME_A FILE_A NAME_B FILE_B
  local only_a only_b
  only_a=$(LC_ALL=C comm -23 "$2" "$4")
  only_b=$(LC_ALL=C comm -13 "$2" "$4")
  if [ -n "$only_a" ]; then
    echo "FAIL: $1 but not $3:" $only_a >&2
    status=1
  fi
  if [ -n "$only_b" ]; then
    echo "FAIL: $3 but not $1:" $only_b >&2
    status=1
  fi
}
compare "declared in the public headers" "$work/declared" \
  "listed in $(basename "$map")" "$work/listed"
compare "listed in $(basename "$map")" "$work/listed" \
  "exported by $(basename "$lib")" "$work/exported"
if [ "$(LC_ALL=C sort "$work/listed" | uniq -d)" != "" ]; then
  echo "FAIL: listed twice in $(basename "$map"):" $(uniq -d "$work/listed") >&2
  status=1
fi
n=$(wc -l <"$work/declared")
[ "$n" -gt 100 ] || { echo "FAIL: only $n declarations found in $inc" >&2; status=1; }
node=$(nm -D --defined-only "$lib" | awk '$2 == "A" { print $3 }')
[ "$node" = "TOOLGATE_0" ] || { echo "FAIL: version nodes '$node', expected TOOLGATE_0" >&2; status=1; }
[ $status -eq 0 ] && echo "ok: $n functions declared, listed and exported (node $node)"
exit $status
