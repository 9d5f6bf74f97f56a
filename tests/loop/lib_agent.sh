# SPDX-License-Identifier: MIT
# lib_agent.sh - what the tests of `toolgate agent` share: the helpers of
# tests/cli/lib.sh (a fresh directory, checks, time bounds), the scripted
# model server tests/loop/model_server.mjs on 127.0.0.1 (its script says
# what each request is answered with, its log is every request received),
# and a configuration with the built-in echo tool. A test skips (77) where
# node is missing, unless CI is set (as test_model_server.sh).
LOOP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MODEL_SERVER=$LOOP_DIR/model_server.mjs
if ! command -v node >/dev/null; then
  [ -n "${CI:-}" ] && { echo "FAIL: node is not installed" >&2; exit 1; }
  echo "SKIP: $(basename "$0"): node is not installed"
  exit 77
fi
# shellcheck source=../cli/lib.sh
. "$LOOP_DIR/../cli/lib.sh"
command -v jq >/dev/null || { echo "FAIL: jq is not installed" >&2; exit 1; }

printf '{"builtin_tools": ["echo"], "journal": null}\n' > toolgate.json
SERVER_PID=
stop_server() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
  fi
}
trap 'stop_server; rm -rf "$WORK"' EXIT
# start_server SCRIPT_JSON: starts the model server on a free port with that
# script (text), logging to requests.jsonl; sets BASE (http://127.0.0.1:PORT)
start_server() {
  stop_server
  printf '%s\n' "$1" > script.json
  rm -f requests.jsonl server.out
  node "$MODEL_SERVER" --script script.json --port 0 --log requests.jsonl \
    > server.out 2> server.err &
  SERVER_PID=$!
  if ! wait_for "$(tg_ms 10000)" grep -q '^listening ' server.out; then
    echo "FAIL: the model server did not start: $(cat server.err)" >&2
    exit 1
  fi
  BASE=$(sed -n 's/^listening //p' server.out | head -1)
}
# base_for PROVIDER: the --base-url of a provider on the model server
base_for() {
  case $1 in
    openai|openai-responses) echo "$BASE/v1" ;;
    *) echo "$BASE" ;;
  esac
}
# agent PROVIDER ARGS...: runs toolgate agent against the server; stdout in
# out.txt, stderr in err.txt, the exit status in $STATUS
agent() {
  local p=$1
  shift
  STATUS=0
  "$TOOLGATE" agent --provider "$p" --base-url "$(base_for "$p")" \
    --model test-model "$@" > out.txt 2> err.txt || STATUS=$?
}
# request N FILTER: jq FILTER over the body of request N (0-based)
# redacted KEY: how the model server logs a key header (its length only)
redacted() { printf '<redacted len=%d>' "${#1}"; }
request() { jq -c "select(.n == $1) | .body | $2" requests.jsonl; }
# requests: how many requests the server received
requests() { wc -l < requests.jsonl | tr -d ' '; }
# results_by_id PROVIDER N: the ids the tool results of request N answer,
# in the provider's own shape, one line each in order
results_by_id() {
  case $1 in
    openai) request "$2" '.messages[] | select(.role == "tool") | .tool_call_id' ;;
    openai-responses) request "$2" '.input[] | select(.type? == "function_call_output") | .call_id' ;;
    anthropic) request "$2" '.messages[] | select(.role == "user") | .content | arrays | .[] | select(.type == "tool_result") | .tool_use_id' ;;
    gemini) request "$2" '.contents[] | select(.role == "user") | .parts[] | select(.functionResponse) | .functionResponse.id' ;;
  esac | tr -d '"'
}
# calls_by_id PROVIDER N: the ids of the calls the assistant turns carried
# in request N
calls_by_id() {
  case $1 in
    openai) request "$2" '.messages[] | select(.role == "assistant") | .tool_calls // [] | .[] | .id' ;;
    openai-responses) request "$2" '.input[] | select(.type? == "function_call") | .call_id' ;;
    anthropic) request "$2" '.messages[] | select(.role == "assistant") | .content[] | select(.type == "tool_use") | .id' ;;
    gemini) request "$2" '.contents[] | select(.role == "model") | .parts[] | select(.functionCall) | .functionCall.id' ;;
  esac | tr -d '"'
}
PROVIDERS="openai openai-responses anthropic gemini"
