#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# deb.sh [BUILD_DIR] - builds the Debian package of a build (`cpack -G DEB`,
# the CPack settings of CMakeLists.txt) and checks it without installing it
# on this machine: its contents (`dpkg-deb -c`: the binary, the library's
# SONAME link and archive, both headers, the pkg-config and CMake files, the
# three man pages), its Depends and Recommends (`dpkg-deb -I`), then, from
# the package unpacked into a temporary directory (`dpkg -x`), `toolgate
# --version` and `toolgate doctor` run, and a program built with the
# unpacked pkg-config file runs against the unpacked libtoolgate.so.0.
# Prints the package's path last.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
(cd "$build" && cpack -G DEB >cpack.log 2>&1) || { cat "$build/cpack.log" >&2; exit 1; }
version=$(sed -n 's/^project(toolgate VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
deb=$build/toolgate_${version}_$(dpkg --print-architecture).deb
[ -f "$deb" ] || { echo "deb.sh: no $deb" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./||' >"$work/contents"
for f in usr/bin/toolgate usr/lib/libtoolgate.so.$version usr/lib/libtoolgate.so.0 \
  usr/lib/libtoolgate.so usr/lib/libtoolgate.a usr/include/toolgate.h \
  usr/include/toolgate_loop.h usr/lib/pkgconfig/toolgate.pc \
  usr/lib/cmake/toolgate/toolgateConfig.cmake \
  usr/lib/cmake/toolgate/toolgateConfigVersion.cmake \
  usr/lib/cmake/toolgate/toolgateTargets.cmake \
  usr/share/man/man1/toolgate.1 usr/share/man/man5/toolgate.json.5 \
  usr/share/man/man3/libtoolgate.3; do
  grep -qxF "$f" "$work/contents" || fail "the package has no /$f"
done
depends=$(dpkg-deb -f "$deb" Depends)
for p in libjansson4 libuv1 libsqlite3-0 libssl3 libpcre2-8-0 libmicrohttpd12 libcurl4; do
  grep -qE "(^|, )$p( |,|$)" <<<"$depends" || fail "Depends lacks $p: $depends"
done
[ "$(dpkg-deb -f "$deb" Recommends)" = bubblewrap ] || fail "Recommends is not bubblewrap"
[ "$(dpkg-deb -f "$deb" Package)" = toolgate ] || fail "Package is not toolgate"

dpkg -x "$deb" "$work/root"
lib=$work/root/usr/lib
export LD_LIBRARY_PATH=$lib
"$work/root/usr/bin/toolgate" --version >"$work/version" || fail "toolgate --version"
[ "$(head -1 "$work/version")" = "toolgate $version" ] || fail "--version: $(head -1 "$work/version")"
mkdir "$work/ws"
(cd "$work/ws" && "$work/root/usr/bin/toolgate" doctor >"$work/doctor") || fail "toolgate doctor"
grep -q . "$work/doctor" || fail "toolgate doctor printed nothing"
PKG_CONFIG_PATH=$lib/pkgconfig cc "$src/tests/pkg/consumer/consumer.c" \
  $(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --cflags --libs toolgate) -o "$work/consumer"
out=$("$work/consumer") || fail "consumer: $out"
[[ $out == "consumer: $version call_1 success"* ]] || fail "consumer printed '$out'"

if [ $fails -ne 0 ]; then
  echo "deb.sh: $fails failures" >&2
  exit 1
fi
echo "Depends: $depends"
echo "Recommends: $(dpkg-deb -f "$deb" Recommends)"
echo "$(wc -l <"$work/contents") entries; toolgate --version, doctor and a pkg-config build ran from the unpacked package:"
sed 's/^/  /' "$work/version"
echo "$deb"
