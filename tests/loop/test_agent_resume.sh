#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_agent_resume.sh - durable loops: `toolgate agent` is killed with
# SIGKILL at random points and `--resume` goes on with the loop until it
# answers. The tool appends its call's unique argument to a counter file,
# so a line seen twice is a tool run twice: none may be. Every call of
# every answer is answered in the next request (the model server's
# --strict check), a call cut short is answered INTERRUPTED (execution
# started), and an idempotent tool (annotations.idempotentHint in the
# config) cut short is run again instead. Also: history --loops/--loop,
# show LOOP_ID, and what --resume refuses.
. "$(dirname "$0")/lib_agent.sh"

cat > count.sh <<'SH'
#!/bin/sh
# appends its argument to counter.txt, then works a while
echo "$1" >> counter.txt
sleep 0.15
echo "counted $1"
SH
chmod +x count.sh
cat > toolgate.json <<JSON
{"journal": ".toolgate/journal.db",
 "tools": [
  {"name": "count", "command": ["$PWD/count.sh", "{text}"],
   "input_schema": {"type": "object", "properties": {"text": {"type": "string"}},
                    "required": ["text"]}},
  {"name": "count_again", "command": ["$PWD/count.sh", "{text}"],
   "annotations": {"idempotentHint": true},
   "input_schema": {"type": "object", "properties": {"text": {"type": "string"}},
                    "required": ["text"]}}]}
JSON

# six iterations of two calls each (unique arguments), then the answer
turns=""
for i in 1 2 3 4 5 6; do
  turns="$turns{\"text\": \"step $i\", \"chunk_bytes\": 40, \"calls\": [
    {\"id\": \"c${i}a\", \"name\": \"count\", \"arguments\": {\"text\": \"i${i}a\"}},
    {\"id\": \"c${i}b\", \"name\": \"count\", \"arguments\": {\"text\": \"i${i}b\"}}]},"
done
SCRIPT="{\"by_conversation\": true, \"turns\": [$turns {\"text\": \"All counted.\"}]}"

# start_strict: the model server answering by conversation, --strict
start_strict() {
  stop_server
  printf '%s\n' "$1" > script.json
  rm -f requests.jsonl server.out
  node "$MODEL_SERVER" --script script.json --port 0 --log requests.jsonl --strict \
    > server.out 2> server.err &
  SERVER_PID=$!
  wait_for "$(tg_ms 10000)" grep -q '^listening ' server.out ||
    { echo "FAIL: the model server did not start" >&2; exit 1; }
  BASE=$(sed -n 's/^listening //p' server.out | head -1)
}

# the newest loop's id, or nothing
newest_loop() { "$TOOLGATE" history --loops --json --limit 1 2>/dev/null | jq -r '.loop_id // empty'; }
loop_status() { "$TOOLGATE" history --loops --json --limit 1 | jq -r .status; }

for mode in "openai" "anthropic --stream" "gemini" "openai-responses --stream"; do
  set -- $mode
  p=$1
  extra=${2:-}
  rm -rf .toolgate counter.txt
  start_strict "$SCRIPT"
  # the first run, killed after a random delay; then resumes, each killed
  # again, until a run ends on its own
  "$TOOLGATE" agent --provider "$p" --base-url "$(base_for "$p")" --model m \
    $extra "Count." > out.txt 2> err.txt &
  pid=$!
  kills=0
  for round in 1 2 3 4 5 6 7 8; do
    sleep "0.$((RANDOM % 6 + 1))$((RANDOM % 10))"
    if kill -0 "$pid" 2>/dev/null; then
      kill -9 "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      kills=$((kills + 1))
    else
      wait "$pid" 2>/dev/null || true
      break
    fi
    LOOP=$(newest_loop)
    if [ -z "$LOOP" ]; then # killed before the loop was recorded: start again
      "$TOOLGATE" agent --provider "$p" --base-url "$(base_for "$p")" --model m \
        $extra "Count." > out.txt 2> err.txt &
    else
      "$TOOLGATE" agent --resume "$LOOP" > out.txt 2> err.txt &
    fi
    pid=$!
  done
  STATUS=0
  wait "$pid" || STATUS=$?
  LOOP=$(newest_loop)
  if [ "$(loop_status)" != answered ]; then # the last resume, not killed
    STATUS=0
    "$TOOLGATE" agent --resume "$LOOP" > out.txt 2> err.txt || STATUS=$?
  fi
  [ "$STATUS" -eq 0 ] || echo "  $p$extra: the last run said: $(cat err.txt)" >&2
  eq "$p$extra: killed some times ($kills), then answered" "$STATUS" 0
  eq "$p$extra: the answer" "$(cat out.txt)" "All counted."
  eq "$p$extra: the loop answered" "$(loop_status)" answered
  dups=$(sort counter.txt | uniq -d | tr '\n' ' ')
  eq "$p$extra: no tool ran twice" "$dups" ""
  if grep -q '"status":400' requests.jsonl 2>/dev/null || grep -q 'conversation' server.err; then
    fail "$p$extra: the model server found a call without its result: $(cat server.err)"
  else
    pass
  fi
  # every call the model made was answered: ran once, or INTERRUPTED
  "$TOOLGATE" history --loop "$LOOP" --json > loop.json
  eq "$p$extra: seven iterations" "$(jq .iterations loop.json)" 7
  ran=$(sort -u counter.txt | wc -l | tr -d ' ')
  interrupted=$(jq '[.calls[][] | select((.payload | objects | .error | objects | .code) == "INTERRUPTED")] | length' loop.json)
  answered=$(jq '[.calls[][] | select(.replayed != true)] | length' loop.json)
  # each call journaled once (a streamed answer killed before its last
  # call came is made again from the calls that came: the rest never do)
  eq "$p$extra: no call journaled twice" \
    "$(jq -r '.calls[][] | select(.replayed != true) | .call.caller_id + " " + .id' loop.json | sort | uniq -d)" ""
  if [ -n "$extra" ]; then min=$((12 - kills)); else min=12; fi
  if [ "$answered" -le 12 ] && [ "$answered" -ge "$min" ]; then pass; else
    fail "$p$extra: $answered calls journaled"
  fi
  # a call that started may have been killed before it wrote its line
  if [ "$ran" -le "$answered" ] && [ "$ran" -ge $((answered - interrupted)) ]; then pass; else
    fail "$p$extra: $ran calls ran, $interrupted interrupted"
  fi
  echo "  $p$extra: $kills kills, $ran ran, $interrupted interrupted"
done

# an interrupted call: its result is INTERRUPTED (started) and the model
# sees it; an idempotent tool's call is run again instead
ONE='{"by_conversation": true, "turns": [
 {"calls": [{"id": "k1", "name": "count", "arguments": {"text": "slow1"}},
            {"id": "k2", "name": "count_again", "arguments": {"text": "slow2"}}]},
 {"text": "ok"}]}'
cat > count.sh <<'SH'
#!/bin/sh
echo "$1" >> counter.txt
sleep 30
SH
rm -rf .toolgate counter.txt
start_strict "$ONE"
"$TOOLGATE" agent --provider openai --base-url "$BASE/v1" --model m "Go." > out.txt 2> err.txt &
pid=$!
counted() { [ "$(cat counter.txt 2>/dev/null | wc -l)" -ge "$1" ]; }
wait_for "$(tg_ms 10000)" counted 2 ||
  fail "the two calls did not start"
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
LOOP=$(newest_loop)
eq "cut short: shown so" "$("$TOOLGATE" history --loops | grep -cE "$LOOP +cut short")" 1
cat > count.sh <<'SH'
#!/bin/sh
echo "$1" >> counter.txt
echo "counted $1"
SH
STATUS=0
"$TOOLGATE" agent --resume "$LOOP" > out.txt 2> err.txt || STATUS=$?
eq "resumed: exit status" "$STATUS" 0
eq "resumed: the answer" "$(cat out.txt)" ok
eq "the plain tool ran once, the idempotent one twice" "$(sort counter.txt | tr '\n' ' ')" "slow1 slow2 slow2 "
body=$(jq -c "select(.n == $(($(requests) - 1))) | .body" requests.jsonl)
contains "the model sees INTERRUPTED" "$body" INTERRUPTED
contains "the idempotent call's new output" "$body" "counted slow2"
"$TOOLGATE" history --loop "$LOOP" > loop.txt
contains "history --loop: the rerun" "$(cat loop.txt)" "run again: idempotent"
contains "history --loop: INTERRUPTED" "$(cat loop.txt)" INTERRUPTED
"$TOOLGATE" show "$LOOP" > show.json
eq "show: the transcript's stop" "$(jq -r .stop show.json)" answered
eq "show: the transcript's tool results" \
  "$(jq -r '[.messages[] | select(.role == "tool") | .tool_call_id] | join(" ")' show.json)" "k1 k2"

# a streamed answer killed while the model still writes, after its first
# call started: the answer is made again from the journaled call (its text
# is lost), which is answered INTERRUPTED; the second call never came
SLOW='{"by_conversation": true, "turns": [
 {"text": "Counting slowly, with a long preamble.", "chunk_bytes": 24, "chunk_delay_ms": 40,
  "calls": [{"id": "s1", "name": "count", "arguments": {"text": "mid1"}},
            {"id": "s2", "name": "count", "arguments": {"text": "mid2 with longer arguments to stream"}}]},
 {"text": "ok"}]}'
cat > count.sh <<'SH'
#!/bin/sh
echo "$1" >> counter.txt
sleep 30
SH
for p in openai anthropic; do
  rm -rf .toolgate counter.txt
  start_strict "$SLOW"
  "$TOOLGATE" agent --provider "$p" --base-url "$(base_for "$p")" --model m --stream \
    "Go." > out.txt 2> err.txt &
  pid=$!
  wait_for "$(tg_ms 10000)" counted 1 || fail "$p: the first call did not start"
  kill -9 "$pid"; wait "$pid" 2>/dev/null || true
  LOOP=$(newest_loop)
  eq "$p: mid-stream: no answer recorded" "$("$TOOLGATE" history --loop "$LOOP" --json | jq '.steps | length')" 0
  STATUS=0
  "$TOOLGATE" agent --resume "$LOOP" > out.txt 2> err.txt || STATUS=$?
  eq "$p: mid-stream: resumed" "$STATUS" 0
  eq "$p: mid-stream: the answer" "$(cat out.txt)" ok
  eq "$p: mid-stream: the first call ran once, the second never" "$(cat counter.txt)" mid1
  contains "$p: mid-stream: the model sees s1 INTERRUPTED" \
    "$(jq -c "select(.n == $(($(requests) - 1))) | .body" requests.jsonl)" INTERRUPTED
  contains "$p: mid-stream: history says how the answer was made" \
    "$("$TOOLGATE" history --loop "$LOOP")" "made again from its journaled calls"
done

# what --resume does with an ended loop (its answer again: the process that
# ended it may have died before printing it), and refuses: an unknown
# loop, a prompt beside it, the journal off
nreq=$(requests)
STATUS=0
"$TOOLGATE" agent --resume "$LOOP" > out.txt 2> err.txt || STATUS=$?
eq "an answered loop: its answer again" "$STATUS $(cat out.txt)" "0 ok"
contains "an answered loop: said so" "$(cat err.txt)" "had ended (answered)"
eq "an answered loop: no request more" "$(requests)" "$nreq"
STATUS=0
"$TOOLGATE" agent --resume loop_0000000000000000 > out.txt 2> err.txt || STATUS=$?
eq "an unknown loop: usage error" "$STATUS" 2
contains "an unknown loop: why" "$(cat err.txt)" "no loop 'loop_0000000000000000'"
STATUS=0
"$TOOLGATE" agent --resume "$LOOP" "Prompt." > out.txt 2> err.txt || STATUS=$?
eq "a prompt beside --resume: usage error" "$STATUS" 2
STATUS=0
"$TOOLGATE" agent --no-journal --resume "$LOOP" > out.txt 2> err.txt || STATUS=$?
eq "--no-journal: usage error" "$STATUS" 2
contains "--no-journal: why" "$(cat err.txt)" "journal is off"

echo "test_agent_resume: $CHECKS checks, $FAILS failures"
[ "$FAILS" -eq 0 ]
