#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make bench`: installs the peers from bench/package-lock.json (and
# tests/interop's, for bench/mcp) and runs every benchmark of bench/ with
# its peer in the same run.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
scripts/npm-deps.sh bench
scripts/npm-deps.sh tests/interop
"$build/bench/bench_pipeline" 10000 bench
"$build/bench/bench_spawn" 1000 bench
"$build/bench/bench_formats" 10 bench
"$build/bench/bench_stream" 5000
"$build/bench/bench_schema" 200000 bench
"$build/bench/bench_policy"
"$build/bench/bench_journal"
"$build/bench/bench_sandbox" 300 bench
"$build/bench/bench_spool" --mib 1024 --rounds 3
bench/mcp/run.sh "$build/toolgate"
bench/loop/run.sh "$build"
