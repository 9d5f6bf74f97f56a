#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages toolgate builds and tests with (docs/design.md),
# (python3-jsonschema only for the JSON Schema metaschemas it ships, which
# the build embeds in the validator, src/schema/metaschemas.cmake;
# python3-pytest for the Python binding's tests and python3-pyflakes to
# check it, bindings/python; groff-base and man-db: the install test renders
# the man pages),
# only those missing. As root it runs apt-get; otherwise it prints the exact
# command to run and fails.
#
# Node.js and npm (the interop tests' and the benchmarks' peers) are looked
# for as commands, not as packages: Debian's `nodejs` and `npm` are
# installed only when `node` or `npm` is not on PATH, because a Node from
# elsewhere (NodeSource's `nodejs` bundles npm and conflicts with Debian's
# `npm`) serves as well. Node >= 18 is needed (Debian 12 has 18).
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libjansson-dev libuv1-dev libsqlite3-dev libpcre2-dev libssl-dev
  libcurl4-openssl-dev libmicrohttpd-dev libcmocka-dev
  jq sqlite3 procps clang-format strace bubblewrap
  python3-jsonschema python3-pytest python3-pyflakes
  groff-base man-db
)
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
if [ "${1:-}" = "--fuzz" ]; then
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

node_ok() {
  command -v node >/dev/null && command -v npm >/dev/null ||
    { echo "toolgate's tests need 'node' and 'npm' on PATH" >&2; return 1; }
  node -e 'process.exit(+process.versions.node.split(".")[0] >= 18 ? 0 : 1)' ||
    { echo "toolgate's tests need Node.js >= 18; 'node' is $(node --version)" >&2; return 1; }
}
if [ ${#missing[@]} -eq 0 ]; then
  node_ok
  exit
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "toolgate needs these Debian packages: ${missing[*]}" >&2
  echo "run as root:  apt-get update && apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
node_ok
