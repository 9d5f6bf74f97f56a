#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages toolgate builds and tests with (DESIGN.md),
# (python3-jsonschema only for the JSON Schema metaschemas it ships, which
# the official test suite's tests refer to; no Python runs),
# only those missing. As root it runs apt-get; otherwise it prints the exact
# command to run and fails.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libjansson-dev libuv1-dev libsqlite3-dev libpcre2-dev libssl-dev
  libcurl4-openssl-dev libmicrohttpd-dev libcmocka-dev
  jq sqlite3 procps clang-format strace bubblewrap
  python3-jsonschema
)
if [ "${1:-}" = "--bench" ]; then
  packages+=(nodejs npm)
fi
if [ "${1:-}" = "--fuzz" ]; then
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "toolgate needs these Debian packages: ${missing[*]}" >&2
  echo "run as root:  apt-get update && apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
