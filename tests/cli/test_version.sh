#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# toolgate --version / version --json: toolgate's version (the same as the
# project's and the header's) and the versions of the libraries the binary
# runs with, each compared with what that very library file (the one the
# dynamic loader resolves for the binary, from ldd) answers to its own
# version function, called here through Python's ctypes.
source "$(dirname "$0")/lib.sh"

"$TOOLGATE" --version >text.txt
"$TOOLGATE" version --json >v.json
project=$(sed -n 's/^project(toolgate VERSION \([0-9.]*\).*/\1/p' "$TG_SOURCE_DIR/CMakeLists.txt")
header=$(sed -n 's/^#define TOOLGATE_VERSION_STRING "\(.*\)"/\1/p' "$TG_SOURCE_DIR/include/toolgate.h")
eq "first line" "$(head -1 text.txt)" "toolgate $project"
eq "header's version" "$header" "$project"
eq "json toolgate" "$(jq -r .toolgate v.json)" "$project"
eq "names" "$(jq -r 'keys_unsorted | join(" ")' v.json)" \
  "toolgate jansson libuv sqlite openssl pcre2 libcurl libmicrohttpd"
eq "text lines are the json's" "$(tail -n +2 text.txt)" \
  "$(jq -r 'to_entries[1:][] | "  \(.key) \(.value)"' v.json)"

# What each library file loaded for the binary says of itself.
libpath() { ldd "$TOOLGATE" | awk -v n="$1" 'index($1, n) == 1 { print $3; exit }'; }
python3 - "$(libpath libjansson.so)" "$(libpath libuv.so)" "$(libpath libsqlite3.so)" \
  "$(libpath libcrypto.so)" "$(libpath libpcre2-8.so)" "$(libpath libcurl.so)" \
  "$(libpath libmicrohttpd.so)" >loaded.json <<'PY'
import ctypes, json, sys
jansson, uv, sqlite, crypto, pcre2, curl, mhd = (ctypes.CDLL(p) for p in sys.argv[1:])
def text(fn, *args):
    fn.restype = ctypes.c_char_p
    return fn(*args).decode()
buf = ctypes.create_string_buffer(64)
pcre2.pcre2_config_8(ctypes.c_uint32(11), buf)  # PCRE2_CONFIG_VERSION
class CurlInfo(ctypes.Structure):  # curl_version_info_data's first fields
    _fields_ = [("age", ctypes.c_int), ("version", ctypes.c_char_p)]
curl.curl_version_info.restype = ctypes.POINTER(CurlInfo)
print(json.dumps({
    "jansson": text(jansson.jansson_version_str),
    "libuv": text(uv.uv_version_string),
    "sqlite": text(sqlite.sqlite3_libversion),
    "openssl": text(crypto.OpenSSL_version, 6),  # OPENSSL_VERSION_STRING
    "pcre2": buf.value.decode().split(" ")[0],
    "libcurl": curl.curl_version_info(0).contents.version.decode(),
    "libmicrohttpd": text(mhd.MHD_get_version),
}))
PY
for name in jansson libuv sqlite openssl pcre2 libcurl libmicrohttpd; do
  got=$(jq -r ".$name" v.json)
  eq "$name as loaded" "$got" "$(jq -r ".$name" loaded.json)"
  check "$name looks like a version ($got)" grep -qE '^[0-9]+\.[0-9]+' <<<"$got"
done

# Usage: an unknown option is refused (2), --help prints the usage.
set +e
"$TOOLGATE" version --nope >/dev/null 2>err.txt
eq "unknown option exit" "$?" 2
set -e
contains "unknown option message" "$(cat err.txt)" "'--nope'"
contains "help" "$("$TOOLGATE" version --help)" "usage: toolgate version"
finish
