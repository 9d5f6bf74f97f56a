# SPDX-License-Identifier: MIT
# install.sh BUILD_DIR - `cmake --install` of a build into a temporary
# DESTDIR under another prefix than the build's, then what a user of the
# installed toolgate does: (a) an out-of-tree CMake project finds it with
# find_package(toolgate) and links tests/pkg/consumer/consumer.c against
# toolgate::toolgate (the .so) and toolgate::toolgate_static; (b) the same
# program built with `pkg-config --cflags --libs toolgate` runs against the
# installed .so (LD_LIBRARY_PATH), and with `pkg-config --static` against
# the archive; (c) each man page renders without a warning, and toolgate(1)
# names every command of `toolgate --help`; the installed binary runs.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
expect='consumer: [0-9.]+ call_1 success \{"n":42\}'

prefix=/opt/toolgate-test
dest=$work/dest
root=$dest$prefix
DESTDIR=$dest cmake --install "$build" --prefix "$prefix" >"$work/install.log"
libdir=$(dirname "$(find "$root" -name libtoolgate.a)")
for f in bin/toolgate include/toolgate.h include/toolgate_loop.h \
  share/man/man1/toolgate.1 share/man/man5/toolgate.json.5 \
  share/man/man3/libtoolgate.3; do
  [ -f "$root/$f" ] || fail "not installed: $prefix/$f"
done
for f in libtoolgate.so libtoolgate.so.0 libtoolgate.a pkgconfig/toolgate.pc \
  cmake/toolgate/toolgateConfig.cmake cmake/toolgate/toolgateConfigVersion.cmake; do
  [ -e "$libdir/$f" ] || fail "not installed: $libdir/$f"
done
[ "$(readlink "$libdir/libtoolgate.so")" = libtoolgate.so.0 ] ||
  fail "libtoolgate.so does not point to libtoolgate.so.0"
soname=$(readelf -d "$libdir/libtoolgate.so.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libtoolgate.so.0 ] || fail "SONAME '$soname'"
# nothing of the build tree leaks into what is installed
if grep -rlF "$build" "$root" --include='*.cmake' --include='*.pc'; then
  fail "installed files name the build tree"
fi

# (a) find_package(toolgate) from a project outside the tree.
if cmake -S "$src/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$root" \
  -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 &&
  cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1; then
  for kind in shared static; do
    out=$("$work/cmake/consumer_$kind" 2>&1) || fail "find_package $kind: $out"
    [[ $out =~ $expect ]] || fail "find_package $kind printed '$out'"
  done
  # the shared one runs with the installed library, the static one alone
  loaded=$(ldd "$work/cmake/consumer_shared" | awk '$1 == "libtoolgate.so.0" { print $3 }')
  [ "$loaded" = "$libdir/libtoolgate.so.0" ] ||
    fail "consumer_shared loads '$loaded', not $libdir/libtoolgate.so.0"
  if readelf -d "$work/cmake/consumer_static" | grep -q libtoolgate; then
    fail "consumer_static needs libtoolgate.so"
  fi
else
  cat "$work/cmake.log" >&2
  fail "the find_package(toolgate) project did not build"
fi
# A version the package is not compatible with is refused (0.y: same minor).
printf 'cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES C)\nfind_package(toolgate 0.2 REQUIRED)\n' \
  >"$work/CMakeLists.txt"
mkdir "$work/newer"
cp "$work/CMakeLists.txt" "$work/newer/"
if cmake -S "$work/newer" -B "$work/newer/b" -DCMAKE_PREFIX_PATH="$root" >"$work/newer.log" 2>&1; then
  fail "find_package(toolgate 0.2) accepted 0.1"
elif ! grep -q 'version: 0\.1\.0' "$work/newer.log"; then
  fail "find_package(toolgate 0.2) failed for another reason: $(cat "$work/newer.log")"
fi

# (b) pkg-config, shared then static.
export PKG_CONFIG_PATH=$libdir/pkgconfig
cflags=$(pkg-config --cflags toolgate)
libs=$(pkg-config --libs toolgate)
[ "$(pkg-config --modversion toolgate)" = "$(sed -n 's/^#define TOOLGATE_VERSION_STRING "\(.*\)"/\1/p' "$root/include/toolgate.h")" ] ||
  fail "pkg-config --modversion is not the header's version"
inc=${cflags%% *}
[ "$(realpath -m "${inc#-I}")" = "$root/include" ] || fail "pkg-config --cflags: '$cflags'"
cc -Wall -Wextra -Werror "$src/consumer/consumer.c" $cflags $libs -o "$work/pc_shared"
readelf -d "$work/pc_shared" | grep -q 'NEEDED.*\[libtoolgate.so.0\]' ||
  fail "the pkg-config build does not need libtoolgate.so.0"
out=$(LD_LIBRARY_PATH=$libdir "$work/pc_shared" 2>&1) || fail "pkg-config shared: $out"
[[ $out =~ $expect ]] || fail "pkg-config shared printed '$out'"
# The archive with the shared libraries of the modules it requires
# (Requires.private) and Libs.private: the list is complete when it links.
# (`pkg-config --static` also lists the static closure of libcurl, whose
# archives a Debian system without their -dev packages does not have.)
private=$(pkg-config --print-requires-private toolgate)
libs_private=$(pkg-config --static --libs toolgate | grep -oE -- '-l(pthread|m)\b' | tr '\n' ' ')
cc "$src/consumer/consumer.c" $cflags -L"$libdir" -l:libtoolgate.a \
  $(pkg-config --libs $private) $libs_private -o "$work/pc_static"
out=$("$work/pc_static" 2>&1) || fail "pkg-config static: $out"
[[ $out =~ $expect ]] || fail "pkg-config static printed '$out'"

# (c) the man pages render without a warning; toolgate(1) is current.
for page in "$root"/share/man/man*/*; do
  warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$warn" ] || fail "$(basename "$page"): groff: $warn"
  text=$(MANWIDTH=80 man --warnings -l "$page" 2>"$work/man.err")
  [ -s "$work/man.err" ] && fail "$(basename "$page"): man: $(cat "$work/man.err")"
  grep -q '^NAME' <<<"$text" || fail "$(basename "$page") has no NAME"
done
for cmd in $("$root/bin/toolgate" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } /^$/ { on = 0 }'); do
  grep -q "^\.B toolgate $cmd\b" "$root/share/man/man1/toolgate.1" ||
    fail "toolgate(1) has no synopsis of '$cmd'"
done
# the Python package, found by a python3 given only its directory, loads
# the installed library beside it
pyver=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
pydir=$root/lib/python$pyver/dist-packages
[ -f "$pydir/toolgate/__init__.py" ] || fail "the Python package is not in $prefix/lib/python$pyver/dist-packages"
pyout=$(cd "$work" && env -u TOOLGATE_LIBRARY PYTHONPATH="$pydir" /usr/bin/python3 -c '
import toolgate, sys
lib = toolgate._native.lib._name
t = toolgate.parse({"choices": [{"message": {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]})
print(lib, toolgate.library_version(), t.calls[0].id)' 2>&1) ||
  fail "the installed Python package: $pyout"
case $pyout in
  "$libdir/libtoolgate.so.0 0.1.0 c1"|"$libdir"/*"libtoolgate.so.0 0.1.0 c1") ;;
  *) fail "the installed Python package loaded: '$pyout' (expected $libdir/libtoolgate.so.0)" ;;
esac
first=$("$root/bin/toolgate" --version | head -1)
[ "$first" = "toolgate $(pkg-config --modversion toolgate)" ] || fail "installed toolgate --version: '$first'"

if [ $fails -ne 0 ]; then
  echo "install.sh: $fails failures" >&2
  exit 1
fi
echo "install.sh: installed under DESTDIR$prefix; find_package, pkg-config (shared and static), the man pages and the Python package checked"
