# SPDX-License-Identifier: MIT
# serve_lib.sh - helpers of the end-to-end tests that talk to `toolgate
# serve --stdio` on a coprocess (test_serve_stdio.sh, test_serve_tasks.sh).
# Sourced after lib.sh; the test sets IN and OUT to the coprocess's stdin
# and stdout descriptors. Messages read while looking for a response are
# kept in notes.jsonl (the progress and log notifications, the server's
# requests, responses that came first) for the test to look at.
: >notes.jsonl

# send JSON: one message to the server
send() { printf '%s\n' "$1" >&"$IN"; }

# read_id ID: reads messages until the response with id ID (as JSON:
# 3, '"init"'); other messages read meanwhile are appended to notes.jsonl
# (a response found there first is taken from it). Prints the response.
read_id() {
  local line
  line=$(jq -c --argjson id "$1" 'select(has("method") | not) | select(.id == $id)' notes.jsonl | head -1)
  if [ -n "$line" ]; then
    printf '%s\n' "$line"
    return 0
  fi
  while IFS= read -r -t "$(tg_s 20)" line <&"$OUT"; do
    if [ "$(jq -c '.id' <<<"$line")" == "$1" ]; then
      printf '%s\n' "$line"
      return 0
    fi
    printf '%s\n' "$line" >>notes.jsonl
  done
  echo "no response with id $1" >&2
  return 1
}

# read_request: reads messages until a request of the server (a method and
# an id: elicitation/create, ...) and prints it; other messages read
# meanwhile are appended to notes.jsonl.
read_request() {
  local line
  while IFS= read -r -t "$(tg_s 20)" line <&"$OUT"; do
    if jq -e 'has("method") and has("id")' <<<"$line" >/dev/null; then
      printf '%s\n' "$line"
      return 0
    fi
    printf '%s\n' "$line" >>notes.jsonl
  done
  return 1
}

# read_request_or_note METHOD: reads messages until the next one whose
# method is METHOD and prints it; others are appended to notes.jsonl.
read_request_or_note() {
  local line
  while IFS= read -r -t "$(tg_s 20)" line <&"$OUT"; do
    if [ "$(jq -r '.method // empty' <<<"$line")" == "$1" ]; then
      printf '%s\n' "$line"
      return 0
    fi
    printf '%s\n' "$line" >>notes.jsonl
  done
  return 1
}
