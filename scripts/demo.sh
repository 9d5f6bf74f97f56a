#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make demo`: runs a real OpenAI Chat Completions turn through toolgate on
# the embedded defaults (no config file) in the demo workspace, then shows the
# journal it wrote.
set -euo pipefail
bin=$(realpath "$1")
cd "$(dirname "$0")/../examples/workspace"
turn=../turns/openai-chat-response.json
echo "\$ toolgate run $turn   # in examples/workspace, embedded defaults"
"$bin" run "$turn" | { command -v jq >/dev/null && jq . || cat; }
echo
echo "\$ toolgate history --limit 6"
"$bin" history --limit 6
