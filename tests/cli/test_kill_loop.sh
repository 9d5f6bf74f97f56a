#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The journal under kill -9 (issue 5): `toolgate run` is killed at random
# points, again and again, for a fixed 60 turns (TG_KILL_TURNS), then one
# final turn runs through with every call that has printed nothing yet, so
# each call made has had a result printed; the test says how many calls,
# turns and kills that was. A fixed count, not a time budget: 60 turns
# (about 1,200 calls) take 8-10 s here on a busy machine, and fit the ctest
# timeout 3x over on a machine 15x slower. Each turn holds 10-50 calls of a
# command tool (a /bin/sh script: a plain binary starts in 1 ms, a sanitized
# fixture in 12) that logs "<call id> <toolgate pid>" before anything else,
# prints its call id and sleeps 1-3 ms. Half the turns, drawn at random, are
# killed somewhere within their expected time. After a kill the next turn
# either re-sends the same turn (the same ids: re-delivery; replayed or run
# again, both are checked) or sends the calls that printed nothing under
# fresh ids. Then:
#   - every result printed before a kill is in the journal, record for record;
#   - every accepted call (a row in the journal) has exactly one result, done
#     by its own process or INTERRUPTED/started after a later start, none is
#     left running, and recovery happened by the next start that ran through;
#   - every call that ran (a log line) was in the journal before it ran, and
#     ran once in its delivery; every success ran, a replayed result did not;
#   - no tool process outlives the toolgate that started it (within a
#     scaled 2 s, tg_ms).
# Last, a tool that leaves a child of its own behind (spawn_child) and a kill:
# the tool dies with toolgate (PR_SET_PDEATHSIG), and its child with the
# runtime's watchdog (src/exec/watchdog.c), which kills every tool group the
# moment the runtime is gone.
# The schedule is random; TG_KILL_SEED=N reproduces one (printed on failure).
source "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || {
  echo "FAIL: the sqlite3 command is needed (scripts/deps.sh installs it)" >&2
  exit 1
}
TURNS=${TG_KILL_TURNS:-60}
[[ $TURNS =~ ^[1-9][0-9]*$ ]] || { echo "FAIL: TG_KILL_TURNS must be a count from 1, not '$TURNS'" >&2; exit 1; }
SEED=${TG_KILL_SEED:-$(( ${EPOCHREALTIME/[.,]/} % 32768 ))}
RANDOM=$SEED
# The tool's script; its argv (with this test's log path) is unique to it.
MARK='echo "$1 $PPID" >>"$2"; printf %s "$1"; sleep "0.00$3"'
LOG="$WORK/marks.log"
DB="$WORK/j/journal.db"
mkdir ws out
: >"$LOG"
# The tool logs its parent's pid to a file outside the workspace: it runs
# without bubblewrap (whose PID namespace would hide that pid).
cat >toolgate.json <<JSON
{"workspace": "ws", "journal": "$DB", "sandbox": {"mode": "off"},
 "limits": {"timeout_ms": 60000, "parallel": 8, "kill_grace_ms": 200},
 "tools": [{"name": "mark", "command": ["/bin/sh", "-c", $(jq -n --arg s "$MARK" '$s'), "mark", "{id}", "$LOG", "{ms}"]},
   {"name": "family", "command": ["$TG_FIXTURES/spawn_child", "{child}", "{own}"]}]}
JSON
# Sleeping without a fork: a read that times out on a FIFO nobody writes.
mkfifo never
exec {NEVER}<>never
nap() { read -r -t "$1" -u "$NEVER" _ || true; }
report_fail() { fail "$* (TG_KILL_SEED=$SEED)"; }

# Tool processes of this test still alive (zombies have no command line).
survivors() { pgrep -f -- "^/bin/sh -c .* mark k[0-9]+g[0-9]+ $LOG " || true; }
# After toolgate died: its tools die with it (PR_SET_PDEATHSIG), allow a
# scaled 2 s.
check_no_survivors() {
  local left end=$(($(now_ms) + $(tg_ms 2000)))
  while :; do
    left=$(survivors)
    [ -z "$left" ] && { pass; return; }
    [ "$(now_ms)" -ge "$end" ] && break
    nap 0.01
  done
  report_fail "tool processes outlived toolgate pid $1: $(echo $left)"
  kill -9 $left 2>/dev/null || true
}

# Logical calls k = 0, 1, ... are made as turns need them; the id of call k
# is k<k>g<gen[k]>, and gen[k] grows when it must be sent afresh.
declare -a gen=() ms_of=() pending=() batch=() left=()
declare -A printed_k=() # logical call -> 1 once a result of it was printed
made=0                  # logical calls made
nprinted_k=0            # of them, with a printed result
: >attempts.tsv      # attempt pid rc start_us end_us mode ncalls nprinted
: >printed.tsv       # id pid replayed, per result printed
: >printed_lines.jsonl # the complete lines printed
attempt=0 killed=0 partial=0 same_turns=0 est_us=2000 final_rc=
t_start=${EPOCHREALTIME/[.,]/}
same=0
prev_turn=
# TURNS turns killed at random points, then the last one (final=1), never
# killed, with whatever has printed nothing yet.
final=0
while :; do
  if [ "$attempt" -ge "$TURNS" ]; then
    [ "${#pending[@]}" -eq 0 ] && break
    final=1 same=0
  fi
  attempt=$((attempt + 1))
  turn="out/turn.$attempt.jsonl"
  if [ "$same" = 1 ]; then
    cp "$prev_turn" "$turn"
    mode=same
    same_turns=$((same_turns + 1))
  else
    n=$(( 10 + RANDOM % 41 ))
    if [ "$final" = 1 ]; then
      n=${#pending[@]}
    fi
    while [ "${#pending[@]}" -lt "$n" ]; do
      gen[made]=0
      ms_of[made]=$(( 1 + RANDOM % 3 ))
      pending+=("$made")
      made=$((made + 1))
    done
    batch=("${pending[@]:0:n}")
    : >"$turn"
    for k in "${batch[@]}"; do
      id="k${k}g${gen[k]}"
      printf '{"id":"%s","tool":"mark","args":{"id":"%s","ms":%d}}\n' \
        "$id" "$id" "${ms_of[k]}" >>"$turn"
    done
    mode=fresh
    [ "$final" = 1 ] && mode=final
  fi
  ncalls=$(wc -l <"$turn")
  # Half the turns, drawn at random (and the final one), are never killed,
  # so both kinds come whatever the machine's speed; the others are killed
  # somewhere within the turn's expected time (learnt from the turns that
  # ran through): before the journal opens, while rows are begun, while
  # tools run, between commit and print, while printing (or, now and then,
  # just after it ended).
  kill_turn=$(( final == 0 && RANDOM % 2 == 0 ))
  delay_us=$(( (RANDOM * 32768 + RANDOM) % (est_us * ncalls + 20000) ))
  # Made here: a kill may land before the child opens its redirections.
  : >"out/out.$attempt"
  : >"out/err.$attempt"
  t0=${EPOCHREALTIME/[.,]/}
  "$TOOLGATE" run "$turn" >"out/out.$attempt" 2>"out/err.$attempt" &
  pid=$!
  while [ "$kill_turn" = 1 ] && [ $(( ${EPOCHREALTIME/[.,]/} - t0 )) -lt "$delay_us" ]; do
    st=
    { read -r st </proc/$pid/stat; } 2>/dev/null || true
    st=${st##*) }
    case "${st:0:1}" in Z | X | "") break ;; esac
    nap 0.003
  done
  [ "$kill_turn" = 1 ] && { kill -9 "$pid" 2>/dev/null || true; }
  rc=0
  wait "$pid" 2>/dev/null || rc=$?
  t1=${EPOCHREALTIME/[.,]/}
  [ "$final" = 1 ] && final_rc=$rc
  if [ "$rc" -eq 137 ]; then
    killed=$((killed + 1))
    check_no_survivors "$pid"
  elif [ "$rc" -ne 0 ]; then
    report_fail "turn $attempt: toolgate exited $rc: $(head -c 400 "out/err.$attempt")"
  else
    # A turn that ran through: learn how long a call takes.
    est_us=$(( (est_us + (t1 - t0) / ncalls) / 2 ))
  fi
  # What was printed: complete lines only (a kill may cut the last one).
  nprinted=0
  while IFS= read -r line; do
    if [[ $line =~ ^\{\"id\":\"(k([0-9]+)g[0-9]+)\" ]]; then
      if [ -z "${printed_k[${BASH_REMATCH[2]}]:-}" ]; then
        printed_k[${BASH_REMATCH[2]}]=1
        nprinted_k=$((nprinted_k + 1))
      fi
      nprinted=$((nprinted + 1))
      rep=0
      case $line in *'"replayed":true'*) rep=1 ;; esac
      printf '%s\t%s\t%s\n' "${BASH_REMATCH[1]}" "$pid" "$rep" >>printed.tsv
      printf '%s\n' "$line" >>printed_lines.jsonl
    else
      report_fail "turn $attempt: unexpected output line: ${line:0:200}"
    fi
  done <"out/out.$attempt"
  if [ "$rc" -eq 0 ] && [ "$nprinted" -ne "$ncalls" ]; then
    report_fail "turn $attempt ran through but printed $nprinted of $ncalls results"
  fi
  [ "$rc" -eq 137 ] && [ "$nprinted" -gt 0 ] && partial=$((partial + 1))
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$attempt" "$pid" "$rc" "$t0" "$t1" \
    "$mode" "$ncalls" "$nprinted" >>attempts.tsv
  # Next: after a kill, one time in three the same turn again (re-delivery);
  # otherwise the calls that printed nothing go first, under fresh ids.
  same=0
  if [ "$rc" -eq 137 ] && [ $((RANDOM % 3)) -eq 0 ] && [ "$attempt" -lt "$TURNS" ]; then
    same=1
    prev_turn=$turn
  fi
  left=()
  for k in "${pending[@]}"; do
    if [ -z "${printed_k[$k]:-}" ]; then left+=("$k"); fi
  done
  [ "$final" = 1 ] && break
  if [ "$same" = 0 ] && [ "$rc" -eq 137 ]; then
    while IFS= read -r line; do
      [[ $line =~ \"id\":\"k([0-9]+)g ]] || continue
      k=${BASH_REMATCH[1]}
      if [ -z "${printed_k[$k]:-}" ]; then gen[k]=$((gen[k] + 1)); fi
    done <"$turn"
  fi
  pending=("${left[@]}")
done
loop_ms=$(( (${EPOCHREALTIME/[.,]/} - t_start) / 1000 ))
[ -n "$final_rc" ] && eq "the final turn ran through" "$final_rc" 0
eq "every one of the $made calls got a printed result" "$nprinted_k" "$made"

# A later start recovers what the last killed run left: open the journal.
"$TOOLGATE" history --json --limit 100000 >history.jsonl 2>history.err ||
  report_fail "history failed: $(cat history.err)"
check_no_survivors final

# 1. Every printed result is in the journal, the whole record (a replayed
# result is the recorded one: its "replayed" mark aside; the gate's
# "decisions" are journaled, not rendered).
jq -c -S . printed_lines.jsonl >printed.jsonl 2>jq.err ||
  report_fail "printed output is not JSON lines: $(head -c 300 jq.err)"
jq -c -S 'del(.call, .replayed, .decisions)' history.jsonl | sort -u >journal_records.txt
jq -c -S 'del(.replayed)' printed.jsonl | sort -u >printed_records.txt
missing=$(comm -23 printed_records.txt journal_records.txt)
eq "printed results missing from the journal" "$(printf '%s' "$missing" | grep -c . || true)" 0
[ -n "$missing" ] && echo "first missing: $(echo "$missing" | head -n 2)" >&2
# ... and `show` answers for some of them (the newest row of that id).
for id in $(jq -r '.id' printed.jsonl | sort -u | shuf -n 5 --random-source=<(yes "$SEED")); do
  got=$("$TOOLGATE" show "$id" 2>&1 | jq -c '.result.id, .result.outcome' 2>&1 | tr '\n' ' ' || true)
  contains "show $id" "$got" "\"$id\""
done

# 2. The journal, row by row: owner pid and result of every accepted call.
sqlite3 -readonly -separator $'\t' "$DB" >rows.tsv 2>sqlite.err <<'SQL' || report_fail "sqlite3 failed: $(cat sqlite.err)"
SELECT c.id, c.owner_pid, c.state, ifnull(r.outcome, -1), ifnull(r.execution, ''),
       CASE WHEN r.outcome = 0 THEN json_extract(r.payload, '$')
            ELSE ifnull(json_extract(r.payload, '$.error.code'), '') END,
       ifnull(r.replayed, 0), ifnull(r.completed_at, 0)
FROM calls c LEFT JOIN results r ON r.call_rowid = c.rowid ORDER BY c.rowid;
SQL
eq "integrity_check" "$(sqlite3 -readonly "$DB" 'PRAGMA integrity_check')" ok
eq "history holds every result row" "$(wc -l <history.jsonl)" \
  "$(awk -F'\t' '$4 != -1' rows.tsv | wc -l)"

# One awk pass over attempts, the tools' log and the journal's rows.
verdict=$(awk -F'\t' -v OFS='\t' '
  FILENAME == ARGV[1] {            # attempt pid rc t0 t1 mode n printed
    pidrc[$2] = $3; t0[$2] = $4; t1[$2] = $5; order[++na] = $2; pos[$2] = na
    next
  }
  FILENAME == ARGV[3] {            # id pid replayed, per printed result
    printed[$1 SUBSEP $2] = $3
    next
  }
  FILENAME == ARGV[2] {            # "id pid" per run of a tool
    split($0, f, " ")
    ran[f[1] SUBSEP f[2]]++
    if (!(f[2] in pidrc)) bad("a tool ran under unknown pid " f[2] ": " f[1])
    next
  }
  {                                # id pid state outcome execution payload replayed completed_ms
    id = $1; pid = $2; key = id SUBSEP pid; rows++; haverows[pid] = 1
    if (key in row) bad("two rows for call " id " in pid " pid)
    row[key] = 1; rowrep[key] = $7
    if ($3 != "done" || $4 == -1) { bad("call " id " of pid " pid " has no result (state " $3 ")"); next }
    if (!(pid in pidrc)) { bad("row of unknown pid " pid ": " id); next }
    if ($7 == 1) {                 # replayed: returned from the journal, not run
      replayed++
      if (key in ran) bad("replayed call " id " ran in pid " pid)
      next
    }
    if ($4 == 0) {
      if ($5 != "finished" || $6 != id) bad("success of " id " in pid " pid ": execution " $5 ", payload " $6)
      if (ran[key] != 1) bad("success of " id " in pid " pid " but it ran " ran[key] + 0 " times there")
      done_rows++
    } else if ($4 == 1 && $6 == "INTERRUPTED") {
      interrupted++
      if ($5 != "started") bad("INTERRUPTED " id " has execution " $5)
      if (pidrc[pid] != 137) bad("INTERRUPTED " id " of pid " pid " that was not killed")
      # Recovered by a start after the kill, at the latest by the first
      # later turn that ran through (it opened the journal).
      c = $8 * 1000
      if (c + 2000 < t1[pid]) bad("INTERRUPTED " id " recorded before pid " pid " died")
      for (i = pos[pid] + 1; i <= na && pidrc[order[i]] != 0; i++) ;
      if (i <= na && c > t1[order[i]]) bad("INTERRUPTED " id " of pid " pid " recovered only after turn " i " ended")
    } else {
      bad("call " id " of pid " pid ": unexpected outcome " $4 " " $6)
    }
    if (pidrc[pid] == 0 && $4 != 0) bad("turn of pid " pid " ran through but " id " did not succeed")
  }
  END {
    # What a run printed is what it journaled, replayed or not.
    for (k in printed) {
      split(k, f, SUBSEP)
      if (!(k in row)) bad("printed result of " f[1] " by pid " f[2] " has no row of that pid")
      else if (rowrep[k] != printed[k]) bad("printed result of " f[1] " by pid " f[2] ": replayed " printed[k] ", journal says " rowrep[k])
    }
    for (k in ran) {
      split(k, f, SUBSEP)
      if (ran[k] > 1) bad(f[1] " ran " ran[k] " times in pid " f[2])
      if (!(k in row)) bad(f[1] " ran in pid " f[2] " without a row in the journal")
    }
    for (p in pidrc) if (pidrc[p] == 137 && !(p in haverows)) early++
    print "ok", early + 0, rows + 0, done_rows + 0, interrupted + 0, replayed + 0, length(ran) + 0, nbad + 0
    for (i = 1; i <= nbad && i <= 20; i++) print "bad", msg[i]
  }
  function bad(m) { msg[++nbad] = m }
' attempts.tsv "$LOG" printed.tsv rows.tsv)
while IFS=$'\t' read -r tag a b c d e f g; do
  case $tag in
    ok) early=$a rows=$b done_rows=$c interrupted=$d replayed=$e runs=$f nbad=$g ;;
    bad) report_fail "$a" ;;
  esac
done <<<"$verdict"
eq "journal and tool log agree" "${nbad:-?}" 0
if [ "$TURNS" -ge 50 ]; then # a short run (TG_KILL_TURNS) may not
  check "some runs were killed ($killed of $attempt)" test "$killed" -ge 10
  check "some runs ran through" test $((attempt - killed)) -ge 10
  check "some kills left INTERRUPTED calls ($interrupted)" test "${interrupted:-0}" -ge 1
fi
# A tool's own child, in the tool's process group, after kill -9 of toolgate
# and a later start (which recovers the call).
#
# What the tool started dies too: the runtime's watchdog kills every tool
# group it holds when the runtime goes, however it goes (before it existed,
# the grandchild lived on for its whole 60 s).
child_ms=$(( 60000 + SEED ))
family_pat="$TG_FIXTURES/spawn_child $child_ms 60000"
printf '{"id":"family1","tool":"family","args":{"child":%d,"own":60000}}\n' "$child_ms" >family.jsonl
"$TOOLGATE" run family.jsonl >family.out 2>family.err &
pid=$!
tool_pid= child_pid=
end=$(($(now_ms) + $(tg_ms 10000)))
while [ "$(now_ms)" -lt "$end" ]; do
  tool_pid=$(pgrep -P "$pid" -f -- "$family_pat" || true)
  [ -n "$tool_pid" ] && child_pid=$(pgrep -P "$tool_pid" || true)
  [ -n "$child_pid" ] && break
  nap 0.01
done
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
check "the family tool started a child (tool ${tool_pid:-?}, child ${child_pid:-?})" \
  test -n "$child_pid"
"$TOOLGATE" show family1 >family.show 2>&1 || true
eq "the killed family call is INTERRUPTED" \
  "$(jq -r '.result.payload.error.code' family.show 2>/dev/null)" INTERRUPTED
# Alive: the process exists and is not a zombie.
alive() {
  local st=
  { read -r st </proc/"$1"/stat; } 2>/dev/null || return 1
  st=${st##*) }
  case "${st:0:1}" in Z | X) return 1 ;; esac
}
# Gone within a scaled 3 s (it is at once, but a busy machine is slow to
# reap).
gone_within() {
  local end=$(($(now_ms) + $(tg_ms 3000)))
  while [ -n "$1" ] && alive "$1"; do
    [ "$(now_ms)" -ge "$end" ] && return 1
    nap 0.01
  done
}
if ! gone_within "$tool_pid"; then
  report_fail "the family tool $tool_pid outlived toolgate"
  kill -9 "$tool_pid" 2>/dev/null || true
else
  pass
fi
if ! gone_within "$child_pid"; then
  report_fail "the tool's child $child_pid outlived toolgate"
  kill -9 "$child_pid" 2>/dev/null || true
else
  pass
fi

echo "kill loop: $attempt turns ($((attempt > TURNS ? attempt - TURNS : 0)) final) in $loop_ms ms, $made calls, $killed killed" \
  "(${early:-?} before any row, $partial after printing), $same_turns re-sent whole;" \
  "journal: ${rows:-?} calls, ${done_rows:-?} done, ${interrupted:-?} INTERRUPTED, ${replayed:-?} replayed; ${runs:-?} tool runs (seed $SEED)"
finish
