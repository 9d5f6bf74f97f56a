#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every public header (include/*.h) stands alone: a C file that includes
# only it (twice: its guard holds) compiles with -std=c11 -pedantic -Wall
# -Wextra -Werror, and so does a C++ file with -std=c++11 and -std=c++17;
# where the header declares a function named below, both call it and the
# object's reference to it is the plain C name (the extern "C" guard: C++
# would otherwise ask for a mangled one). Two controls show that the
# commands do fail: a header that breaks -pedantic, and C++ without the
# guard. Usage: header_standalone.sh INCLUDE_DIR; the compilers come from
# TG_CC and TG_CXX (ctest sets them). Without a C++ compiler: skipped (77),
# failed under CI=true.
set -u
inc=${1:?usage: header_standalone.sh INCLUDE_DIR}
cc=${TG_CC:-cc}
cxx=${TG_CXX:-}
if [ -z "$cxx" ] || ! command -v "$cxx" >/dev/null; then
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: no C++ compiler (TG_CXX='$cxx')" >&2
    exit 1
  fi
  echo "SKIP: no C++ compiler (TG_CXX='$cxx')"
  exit 77
fi
for t in nm; do
  command -v $t >/dev/null || { echo "FAIL: $t is not installed" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
cflags=(-std=c11 -pedantic -Wall -Wextra -Werror)

# A trivial call of a function of each header (C and C++ alike).
call_of() {
  case "$1" in
  toolgate.h) echo "tg_strerror(0)" ;;
  toolgate_loop.h) echo "tg_loop_stop_name(0)" ;;
  *) echo "" ;;
  esac
}

# compile LANG FILE FLAGS...: 0 when it compiled, the diagnostics on failure.
compile() {
  local lang=$1 src=$2
  shift 2
  local comp=$cc
  [ "$lang" = c++ ] && comp=$cxx
  "$comp" "$@" -I"$inc" -x "$lang" -c "$src" -o "$work/out.o" 2>"$work/diag"
}

# check NAME LANG FLAGS...: compiles a file including header NAME, and
# checks the symbol it calls.
check() {
  local h=$1 lang=$2
  shift 2
  local call src=$work/t.$lang
  call=$(call_of "$h")
  {
    printf '#include "%s"\n#include "%s"\n' "$h" "$h"
    if [ -n "$call" ]; then
      printf 'int main(void)\n{\n    return %s == 0;\n}\n' "$call"
    else
      printf 'int main(void)\n{\n    return 0;\n}\n'
    fi
  } >"$src"
  if ! compile "$lang" "$src" "$@"; then
    echo "FAIL: $h as $lang $*:" >&2
    cat "$work/diag" >&2
    fails=$((fails + 1))
    return
  fi
  if [ -n "$call" ]; then
    local fn=${call%%(*}
    if ! nm -u "$work/out.o" | awk '{print $NF}' | grep -qx "$fn"; then
      echo "FAIL: $h as $lang $*: $fn is not referenced by its C name:" >&2
      nm -u "$work/out.o" >&2
      fails=$((fails + 1))
      return
    fi
  fi
  echo "ok: $h as $lang $*"
}

headers=("$inc"/*.h)
[ -e "${headers[0]}" ] || { echo "FAIL: no header in $inc" >&2; exit 1; }
for path in "${headers[@]}"; do
  h=$(basename "$path")
  check "$h" c "${cflags[@]}"
  check "$h" c++ -std=c++11 -pedantic -Wall -Wextra -Werror
  check "$h" c++ -std=c++17 -pedantic -Wall -Wextra -Werror
done

# The controls: the same commands reject what they must.
mkdir -p "$work/bad"
printf 'struct tg_bad { int n; int v[]; };\nstruct tg_bad2 { struct tg_bad b; int x; };\n' \
  >"$work/bad/bad.h"
printf '#include "bad.h"\nint main(void) { return 0; }\n' >"$work/bad.c"
if "$cc" "${cflags[@]}" -I"$work/bad" -c "$work/bad.c" -o "$work/bad.o" 2>/dev/null; then
  echo "FAIL: the C command accepted a header that breaks -pedantic" >&2
  fails=$((fails + 1))
fi
printf 'const char *tg_strerror(int code);\nint main() { return tg_strerror(0) == 0; }\n' \
  >"$work/noguard.cpp"
"$cxx" -std=c++17 -c "$work/noguard.cpp" -o "$work/noguard.o"
if nm -u "$work/noguard.o" | awk '{print $NF}' | grep -qx tg_strerror; then
  echo "FAIL: without extern \"C\" the symbol check still passed" >&2
  fails=$((fails + 1))
fi

if [ "$fails" -ne 0 ]; then
  echo "$fails check(s) failed" >&2
  exit 1
fi
echo "every public header stands alone (${#headers[@]} headers)"
