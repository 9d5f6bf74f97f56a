#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every libFuzzer target of a TG_FUZZ build over its corpus for SECONDS
# each, FUZZ_JOBS targets at a time (default: the number of CPUs; a target
# is one single-threaded process, so the pass takes SECONDS x targets /
# FUZZ_JOBS and each target gets the same time as alone). New inputs that
# cover more are kept in a scratch corpus, not the repo's; a crash fails
# the run and leaves crash-* files to add to the corpus. An input running
# over 10 s times TG_TEST_TIME_SCALE (`make fuzz` passes the sanitizer
# stage's) is a hang (inputs take milliseconds).
set -euo pipefail
build=${1:?build dir}
seconds=${2:-60}
scale=${TG_TEST_TIME_SCALE:-1}
jobs=${FUZZ_JOBS:-$(nproc)}
[[ $scale =~ ^[1-9][0-9]{0,3}$ ]] || { echo "TG_TEST_TIME_SCALE must be a whole number >= 1, not '$scale'" >&2; exit 2; }
[[ $jobs =~ ^[1-9][0-9]{0,2}$ ]] || { echo "FUZZ_JOBS must be a whole number >= 1, not '$jobs'" >&2; exit 2; }
cd "$(dirname "$0")/.."
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# One target over its corpus; its summary lines go to $logs/NAME.
fuzz_one() {
  local target=$1 name scratch
  name=$(basename "$target")
  scratch=$(mktemp -d)
  local dict=()
  [ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
  "$target" -max_total_time="$seconds" -timeout=$((10 * scale)) -rss_limit_mb=2048 \
    -artifact_prefix="tests/fuzz/$name-" "${dict[@]}" "$scratch" "tests/fuzz/corpus/$name" \
    2>&1 | grep -E '^(#[0-9]+ +DONE|==[0-9]+==ERROR|SUMMARY|Done)' >"$logs/$name" || true
  rm -rf "$scratch"
}

targets=()
for target in "$build"/tests/fuzz_*; do
  case "$(basename "$target")" in *_replay) continue ;; esac
  [ -x "$target" ] && targets+=("$target")
done
echo "fuzzing ${#targets[@]} targets for ${seconds}s each, $jobs at a time"
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait
failed=0
for target in "${targets[@]}"; do
  name=$(basename "$target")
  echo "fuzzed $name: $(tr '\n' ' ' <"$logs/$name")"
  found=$(compgen -G "tests/fuzz/$name-crash-*" ; compgen -G "tests/fuzz/$name-leak-*" ; compgen -G "tests/fuzz/$name-timeout-*") || true
  if [ -n "$found" ]; then
    echo "fuzz: $name found a failing input (add it to tests/fuzz/corpus/$name after the fix):" >&2
    echo "$found" >&2
    failed=1
  fi
done
exit "$failed"
