#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every libFuzzer target of a TG_FUZZ build over its corpus for SECONDS
# each. New inputs that cover more are kept in a scratch corpus, not the
# repo's; a crash stops the run and leaves crash-* files to add to the corpus.
# An input running over 10 s times TG_TEST_TIME_SCALE (`make fuzz` passes
# the sanitizer stage's) is a hang (inputs take milliseconds).
set -euo pipefail
build=${1:?build dir}
seconds=${2:-60}
scale=${TG_TEST_TIME_SCALE:-1}
[[ $scale =~ ^[1-9][0-9]{0,3}$ ]] || { echo "TG_TEST_TIME_SCALE must be a whole number >= 1, not '$scale'" >&2; exit 2; }
cd "$(dirname "$0")/.."
for target in "$build"/tests/fuzz_*; do
  name=$(basename "$target")
  case "$name" in *_replay) continue ;; esac
  [ -x "$target" ] || continue
  scratch=$(mktemp -d)
  dict=()
  [ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
  echo "fuzzing $name for ${seconds}s"
  "$target" -max_total_time="$seconds" -timeout=$((10 * scale)) -rss_limit_mb=2048 \
    -artifact_prefix="tests/fuzz/" "${dict[@]}" "$scratch" "tests/fuzz/corpus/$name" \
    2>&1 | grep -E '^(#[0-9]+ +DONE|==[0-9]+==ERROR|SUMMARY|Done)' || true
  rm -rf "$scratch"
  found=$(compgen -G 'tests/fuzz/crash-*' ; compgen -G 'tests/fuzz/leak-*' ; compgen -G 'tests/fuzz/timeout-*') || true
  if [ -n "$found" ]; then
    echo "fuzz: $name found a failing input (add it to tests/fuzz/corpus/$name after the fix):" >&2
    echo "$found" >&2
    exit 1
  fi
done
