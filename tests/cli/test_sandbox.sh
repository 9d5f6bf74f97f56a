#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sandbox end to end (issue 6, "Bad input and attacks"): arguments of a
# command tool arrive as literal argv elements whatever shell syntax they
# hold; inside `shell` a write outside the workspace fails, a connection to
# a listener on 127.0.0.1 fails (and works for a tool with "network": true),
# a canary secret in toolgate's environment reads as nothing, a fork bomb
# ends at the process limit while the turn completes, and a tool that
# daemonizes is killed with its call; every command-tool result records its
# sandbox in the journal. With sandbox.mode "off" or without a working
# bubblewrap the rlimits and the environment scrubbing still hold, the
# latter said once on stderr; `toolgate doctor` reports what is in force.
# Skips, saying why, where bubblewrap cannot make namespaces.
# Runs in the sandbox mode TG_SANDBOX_TEST_MODE names ("cold" unless
# told; test_sandbox_warm.sh runs it "warm"): every attack holds in both.
# The deadline every call here must beat is sized from what one sandboxed
# call costs here and now (measured first): 10x that, at least a scaled
# 3 s; what must end at it would otherwise run 90 s; waits for processes to
# go are scaled bounds.
source "$(dirname "$0")/lib.sh"
skip_without_bwrap 0
MODE=${TG_SANDBOX_TEST_MODE:-cold}
# The sleeps the attacks leave behind end with this run's tag (its PID, 7
# digits): pgrep finds this run's processes and never another's (a second
# checkout's tests, a CI run beside them).
T=$(printf '%07d' $$)
# the decision a call in bubblewrap records in this mode
[ "$MODE" = warm ] && BW=bubblewrap-warm || BW=bubblewrap
echo "sandbox mode: $MODE"
mkdir ws
# One sandboxed call, no journal: the most of three runs.
printf '{"workspace": "ws", "journal": null, "builtin_tools": ["shell"], "sandbox": {"mode": "%s"}}\n' "$MODE" >cost.json
printf '{"id":"c0","tool":"shell","args":{"command":"true"}}\n' >cost.jsonl
cost=0
for _ in 1 2 3; do
  t0=$(now_ms)
  "$TOOLGATE" run --approve --config cost.json cost.jsonl >/dev/null
  took=$(($(now_ms) - t0))
  [ "$took" -gt "$cost" ] && cost=$took
done
budget=$((10 * cost > $(tg_ms 3000) ? 10 * cost : $(tg_ms 3000)))
echo "one sandboxed call costs $cost ms here: deadline $budget ms"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
CONNECT='exec 3<>/dev/tcp/127.0.0.1/$0 && echo connected'
cat >toolgate.json <<JSON
{"workspace": "ws", "journal": "j.db", "builtin_tools": ["shell"],
 "limits": {"timeout_ms": $budget, "kill_grace_ms": 300},
 "sandbox": {"mode": "$MODE", "rlimits": {"nproc": 64}},
 "tools": [
  {"name": "argv", "command": ["/usr/bin/printf", "[%s]\\\\n", "{a}", "{b}", "{c}", "{d}"], "option_args": ["d"]},
  {"name": "net", "command": ["/bin/bash", "-c", $(jq -n --arg s "$CONNECT" '$s'), "{port}"], "network": true},
  {"name": "daemon", "command": ["/bin/bash", "-c", "setsid sleep 91.7$T </dev/null >/dev/null 2>&1 & sleep 91.8$T"]},
  {"name": "leaver", "command": ["/bin/bash", "-c", "setsid sleep 91.9$T </dev/null >/dev/null 2>&1 & echo left"]}
 ]}
JSON
mk() { printf '{"id":"%s","tool":"%s","args":%s}\n' "$1" "$2" "$3"; }
sh_call() { mk "$1" shell "$(jq -cn --arg c "$2" '{command:$c}')"; }

# Command injection: every attempt is one literal argv element (printf
# reads no options after its format, so "option_args" lets {d} begin with
# '-'; tests/cli/test_hostile_inject.sh has the option rule itself).
inj_a='; rm -rf ws; touch pwned'
inj_b='$(touch pwned2) `touch pwned3`'
inj_c=$'first line\ntouch pwned4'
inj_d='--option=$(id)'
mk a1 argv "$(jq -cn --arg a "$inj_a" --arg b "$inj_b" --arg c "$inj_c" --arg d "$inj_d" '{a:$a,b:$b,c:$c,d:$d}')" >argv.jsonl
"$TOOLGATE" run argv.jsonl >out.jsonl
eq "argv literal" "$(jq -r .payload out.jsonl)" "[$inj_a]
[$inj_b]
[$inj_c]
[$inj_d]"
check "nothing of the injection ran" bash -c '! ls ws/pwned* pwned* >/dev/null 2>&1'
check "workspace still there" test -d ws

# Inside shell: writes outside fail, the network is gone, secrets are not
# there; the workspace is writable.
"${TG_PYTHON3:-python3}" -m http.server "$PORT" --bind 127.0.0.1 >/dev/null 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
listening() { (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null; }
check "the test's server listens" wait_for "$(tg_ms 10000)" listening
OUTSIDE=/var/tmp/tg_sandbox_test_$$
{
  sh_call w1 "echo x > $OUTSIDE && echo wrote-outside; echo x > $WORK/beside && echo wrote-beside-host; touch /etc/tg_pwned 2>/dev/null || echo etc-refused; echo in > inside && echo wrote-inside"
  sh_call n1 "exec 3<>/dev/tcp/127.0.0.1/$PORT && echo connected"
  mk n2 net "{\"port\":\"$PORT\"}"
  sh_call s1 'echo "key=[$MY_API_KEY] token=[$MY_SECRET_TOKEN]"; env | grep -c -i -e key -e token -e secret -e password || true'
  sh_call j1 'echo junk >> ../j.db 2>/dev/null && echo journal-written; echo done'
} >inside.jsonl
MY_API_KEY=canary MY_SECRET_TOKEN=canary2 "$TOOLGATE" run --approve inside.jsonl >out.jsonl 2>err.txt
eq "no warning with bubblewrap working" "$(cat err.txt)" ""
eq "write outside refused" "$(jq -r 'select(.id=="w1").payload' out.jsonl)" "wrote-beside-host
etc-refused
wrote-inside"
check "nothing outside the workspace" bash -c "! test -e $OUTSIDE && ! test -e $WORK/beside && ! test -e /etc/tg_pwned"
check "inside the workspace" test -e ws/inside
eq "no connection to 127.0.0.1" "$(jq -r 'select(.id=="n1").outcome' out.jsonl)" error
contains "refused" "$(jq -r 'select(.id=="n1").payload.error.details.stderr' out.jsonl)" "Connection refused"
eq "network: true connects" "$(jq -r 'select(.id=="n2").payload' out.jsonl)" connected
eq "canary secrets not there" "$(jq -r 'select(.id=="s1").payload' out.jsonl)" "key=[] token=[]
0"
eq "decisions recorded" "$("$TOOLGATE" history --json | jq -r '.decisions.sandbox' | sort | uniq -c | tr -s ' ')" " 6 $BW"

# A tool that daemonizes dies with its call: at the deadline, or when it
# leaves its daemon behind and exits.
{ mk d1 daemon '{}'; mk d2 leaver '{}'; } >daemon.jsonl
t0=$(now_ms)
"$TOOLGATE" run daemon.jsonl >out.jsonl
elapsed=$(( $(now_ms) - t0 ))
eq "daemon outcomes" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "timeout success "
check "ended at the deadline (${elapsed} ms), long before the 90 s sleep" \
  test "$elapsed" -ge "$budget" -a "$elapsed" -lt $((budget + $(tg_ms 10000)))
check "no daemon left" wait_for "$(tg_ms 3000)" eval "! pgrep -f 'sleep 91\.[789]$T' >/dev/null"

# A fork bomb ends at the process limit; the turn completes.
{ sh_call fb "b(){ b|b& }; b 2>/dev/null; sleep 92.1$T"; sh_call after 'echo still here'; } >bomb.jsonl
# The bomb's processes: its shells all carry its command line (they fork,
# never exec), whatever else runs on the machine.
bomb_procs() { pgrep -c -f "sleep 92\\.1$T" || true; }
# bomb COMMAND...: runs the bomb turn with COMMAND (toolgate, maybe under
# setpriv) while counting the bomb's processes every 0.1 s until it is
# over; prints the most there were.
bomb() {
  local mon
  rm -f bomb.over
  ( max=0; until [ -e bomb.over ]; do n=$(bomb_procs); [ "$n" -gt "$max" ] && max=$n; echo "$max" >max.txt; sleep 0.1; done ) &
  mon=$!
  "$@" run --approve bomb.jsonl >out.jsonl || true
  : >bomb.over
  wait $mon
  cat max.txt
}
bomb_gone() { ! pgrep -f "sleep 92\\.1$T" >/dev/null; }
grown=$(bomb "$TOOLGATE")
eq "bomb: timeout, then the next call" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "timeout success "
# as root the floor of the PID namespace's pid_max is 300
check "bomb held to the limit ($grown processes)" test "$grown" -lt 420
check "bomb gone" wait_for "$(tg_ms 5000)" bomb_gone
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  # As another user the limit is RLIMIT_NPROC counted in the call's user
  # namespace.
  mkdir nobody && cp toolgate.json bomb.jsonl nobody/ && mkdir nobody/ws
  jq '.journal = null' toolgate.json >nobody/toolgate.json
  chown -R 65534:65534 nobody
  chmod o+x "$WORK" # the test's directory is root's 0700
  (cd nobody && grown=$(bomb setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent "$TOOLGATE") &&
    echo "$grown" >grown.txt)
  eq "bomb as nobody: timeout, then the next call" "$(jq -r .outcome nobody/out.jsonl | tr '\n' ' ')" "timeout success "
  check "bomb as nobody held to 64 ($(cat nobody/grown.txt) processes)" test "$(cat nobody/grown.txt)" -lt 150
  check "bomb as nobody gone" wait_for "$(tg_ms 5000)" bomb_gone
fi

# sandbox.mode "off": no bubblewrap, no warning, rlimits and scrubbing hold.
jq '.sandbox.mode = "off" | .journal = null' toolgate.json >off.json
sh_call o1 "echo \"key=[\$MY_API_KEY]\"; ulimit -n; ulimit -c; touch $WORK/off_marker && echo no-bubblewrap" >off.jsonl
MY_API_KEY=canary "$TOOLGATE" run --approve --config off.json off.jsonl >out.jsonl 2>err.txt
eq "mode off: quiet" "$(cat err.txt)" ""
eq "mode off: scrubbed and limited, no bubblewrap" "$(jq -r .payload out.jsonl)" "key=[]
1024
0
no-bubblewrap"
check "mode off: the host's files are the tool's" test -e off_marker
# Without a working bubblewrap (auto): said once, loudly; the rest holds.
jq '.sandbox.bwrap = "/nonexistent/bwrap" | .sandbox.mode = "auto" | .journal = "j2.db"' toolgate.json >nobw.json
{ sh_call x1 'echo "key=[$MY_API_KEY]"; ulimit -n'; sh_call x2 'echo two'; sh_call x3 'echo three'; } >nobw.jsonl
MY_API_KEY=canary "$TOOLGATE" run --approve --config nobw.json nobw.jsonl >out.jsonl 2>err.txt
eq "said once" "$(grep -c 'the sandbox is NOT in force' err.txt)" 1
contains "says why" "$(cat err.txt)" "/nonexistent/bwrap"
eq "still scrubbed and limited" "$(jq -r 'select(.id=="x1").payload' out.jsonl)" "key=[]
1024"
eq "every call ran" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success success success "
eq "decisions say rlimits" "$("$TOOLGATE" history --config nobw.json --json | jq -r '.decisions.sandbox' | sort -u)" rlimits
# sandbox.mode "bubblewrap" where it cannot run: exit 3, naming the key.
jq '.sandbox = {"mode": "bubblewrap", "bwrap": "/bin/false"}' toolgate.json >req.json
"$TOOLGATE" run --config req.json off.jsonl >/dev/null 2>err.txt && fail "mode bubblewrap ran without it" || eq "required: exit" "$?" 3
contains "required: names the key" "$(cat err.txt)" 'sandbox.mode is "bubblewrap"'
echo '{"sandbox": {"rlimits": {"nproc": "many"}}}' >bad.json
"$TOOLGATE" run --config bad.json off.jsonl >/dev/null 2>err.txt && fail "bad rlimit accepted" || eq "bad rlimit: exit" "$?" 3
contains "bad rlimit: names the key" "$(cat err.txt)" "sandbox.rlimits.nproc"

# doctor: what is in force, as text and JSON, exit 0.
MY_API_KEY=canary "$TOOLGATE" doctor >doctor.txt; rc=$?
eq "doctor exit" "$rc" 0
contains "doctor: bubblewrap" "$(cat doctor.txt)" "): working"
contains "doctor: withheld" "$(cat doctor.txt)" "MY_API_KEY"
check "doctor: no secret value" bash -c "! grep -q canary doctor.txt"
MY_API_KEY=canary "$TOOLGATE" doctor --json >doctor.json
eq "doctor --json" "$(jq -r '[.sandbox.in_force, .sandbox.network_isolated, .sandbox.pid_namespace, .environment.allowlist[0], .workspace.state] | join(" ")' doctor.json)" \
  "$BW true true PATH writable"
eq "doctor --json: tools" "$(jq -r '.tools | map(.name + ":" + .sandbox + ":" + (.network|tostring)) | join(" ")' doctor.json)" \
  "argv:$BW:false net:$BW:true daemon:$BW:false leaver:$BW:false shell:$BW:false"
"$TOOLGATE" doctor --config nobw.json >doctor.txt
contains "doctor without bubblewrap" "$(cat doctor.txt)" "NOT IN USE"
# A program that lives under /tmp (a build tree, this test's own directory)
# outside the workspace still runs: the private /tmp hides everything else.
mkdir -p tmpbin && cp /bin/echo tmpbin/myecho && echo "host-tmp-secret" >tmpbin/beside.txt
jq --arg p "$WORK/tmpbin/myecho" '.tools = [{"name": "mine", "command": [$p, "ran"]},
  {"name": "peek", "command": ["/bin/cat", "'"$WORK"'/tmpbin/beside.txt"]}]' toolgate.json >tmpbin.json
{ mk t1 mine '{}'; mk t2 peek '{}'; } >tmpbin.jsonl
"$TOOLGATE" run --config tmpbin.json --to toolgate tmpbin.jsonl >out.jsonl
eq "a program under /tmp runs in the sandbox" "$(jq -r 'select(.id=="t1").payload' out.jsonl)" "ran"
eq "what lies beside it stays hidden" "$(jq -r 'select(.id=="t2").outcome' out.jsonl)" error
if [ "$MODE" != warm ]; then finish; exit 0; fi

# Warm only: the calls of one runtime share a sandbox, so what one call
# leaves and what it can do to the helper (PID 1 of the sandbox, holding
# the socket to the runtime) matter. One call at a time here.
jq '.limits.parallel = 1 | .journal = null' toolgate.json >seq.json
{
  sh_call l1 'echo x >/tmp/left_by_l1; echo y >"$TMPDIR/mine"; mkdir -p /tmp/d/e && echo z >/tmp/d/e/f; echo w >/dev/shm/shm_l1; mkdir /tmp/ro && echo r >/tmp/ro/f && chmod 500 /tmp/ro; echo b >"${PWD%/*}/beside_ws" 2>/dev/null; echo "$TMPDIR"'
  sh_call l2 'ls -A /tmp /dev/shm "${PWD%/*}" | grep -v -x "${TMPDIR#/tmp/}" | grep -c -e left_by_l1 -e "^d$" -e "^ro$" -e shm_l1 -e beside_ws -e tg-call || true'
  sh_call l3 'chmod 555 /tmp /dev/shm'
  sh_call l4 'echo x >/tmp/l4 && echo y >/dev/shm/l4 && echo writable'
  sh_call l5 'ls -A /tmp /dev/shm | grep -c -x l4 || true'
  sh_call a1 'kill -KILL 1; kill -STOP 1; kill -TERM 1; sleep 0.2; grep -q "^State:.[SR]" /proc/1/status && echo helper-alive'
  sh_call a2 'python3 -c "import ctypes,os,sys
l = ctypes.CDLL(None, use_errno=True)
for pid in (1, os.getppid()):
    r = l.ptrace(16, pid, 0, 0)
    print(pid == 1 and \"helper\" or \"reaper\", r, os.strerror(ctypes.get_errno()))"'
  sh_call a3 'cat /proc/1/environ >/dev/null 2>&1 && echo helper-environ-read; { readlink /proc/1/fd/* /proc/$PPID/fd/*; for f in /proc/$$/fd/*; do readlink "$f"; done; } 2>/dev/null | grep -c socket || true'
  sh_call a4 'echo after the attacks'
} >seq.jsonl
"$TOOLGATE" run --approve --config seq.json seq.jsonl >out.jsonl
contains "warm: a call gets its own TMPDIR" "$(jq -r 'select(.id=="l1").payload' out.jsonl)" "/tmp/tg-call-"
eq "warm: the next call finds nothing of it in /tmp or /dev/shm" "$(jq -r 'select(.id=="l2").payload' out.jsonl)" "0"
eq "warm: /tmp and /dev/shm made read-only by a call are writable again" "$(jq -r 'select(.id=="l4").payload' out.jsonl)" "writable"
eq "warm: and what that call left there is gone too" "$(jq -r 'select(.id=="l5").payload' out.jsonl)" "0"
eq "warm: the helper ignores a call's signals" "$(jq -r 'select(.id=="a1").payload' out.jsonl)" "helper-alive"
eq "warm: no ptrace of the helper or the reaper" "$(jq -r 'select(.id=="a2").payload' out.jsonl)" "helper -1 Operation not permitted
reaper -1 Operation not permitted"
eq "warm: no descriptor of the helper or the reaper, no socket" "$(jq -r 'select(.id=="a3").payload' out.jsonl)" "0"
eq "warm: every call ran" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success success success success success success success success success "

# Two calls of one profile at once share the sandbox's PID namespace (the
# victim runs until the attacker is done, within the deadline). Where
# Landlock can scope (Linux 6.12+), each call is a domain of its own: the
# attacker sees the victim in /proc but can neither ptrace it, read its
# maps or environment, write its memory, signal it, nor connect to its
# abstract socket; within itself a call keeps all of these.
jq '.limits.parallel = 2 | .journal = null' toolgate.json >pair.json
{
  sh_call v "python3 -c \"import os,socket,time
s = socket.socket(socket.AF_UNIX); s.bind(b'\\0tg-victim-$T'); s.listen()
open('victim.pid', 'w').write(str(os.getpid()))
while not os.path.exists('attack.done'): time.sleep(0.02)\"; echo victim-done"
  sh_call p "until [ -s victim.pid ]; do sleep 0.05; done; python3 -c \"import ctypes,os,socket,sys
l = ctypes.CDLL(None, use_errno=True)
p = int(open('victim.pid').read())
def tried(what, f):
    try:
        f(); print(what, 'reached')
    except OSError as e:
        print(what, e.strerror)
r = l.ptrace(16, p, 0, 0)
print('ptrace', r, os.strerror(ctypes.get_errno()))
tried('maps', lambda: open('/proc/%d/maps' % p).read())
tried('environ', lambda: open('/proc/%d/environ' % p, 'rb').read())
tried('mem', lambda: open('/proc/%d/mem' % p, 'r+b'))
tried('signal', lambda: os.kill(p, 0))
tried('socket', lambda: socket.socket(socket.AF_UNIX).connect(b'\\0tg-victim-$T'))
tried('own', lambda: open('/proc/self/maps').read())\"; touch attack.done"
} >pair.jsonl
"$TOOLGATE" run --approve --config pair.json pair.jsonl >out.jsonl
rm -f victim.pid attack.done
if [ "$("$TOOLGATE" doctor --json | jq -r .sandbox.warm_calls_scoped)" = true ]; then
  eq "warm: a call cannot reach another running beside it" "$(jq -r 'select(.id=="p").payload' out.jsonl)" "ptrace -1 Operation not permitted
maps Permission denied
environ Permission denied
mem Permission denied
signal Operation not permitted
socket Operation not permitted
own reached"
  eq "warm: the other call ran untouched" "$(jq -r 'select(.id=="v").payload' out.jsonl)" "victim-done"
else
  echo "skip: Landlock cannot scope calls here (toolgate doctor: warm calls NOT SCOPED)"
fi

# A workspace that is /tmp itself is the host's /tmp seen through its bind:
# the warm sandbox empties nothing of it. Run where /tmp is a tmpfs of a
# mount namespace of its own (the test's files bound back into it), when
# one can be made here.
if unshare -rm true 2>/dev/null && [ -d /mnt ]; then
  cat >"$WORK/tmpws.sh" <<'SH'
set -e
mount --rbind /tmp /mnt
mount -t tmpfs none /tmp
for d in "$WORK" "$(dirname "$TOOLGATE")"; do
  case $d in /tmp/*) mkdir -p "$d" && mount --rbind "/mnt${d#/tmp}" "$d" ;; esac
done
echo precious >/tmp/keep && mkdir /tmp/sub && echo p >/tmp/sub/keep2
cd /tmp
printf '{"workspace": "/tmp", "journal": null, "builtin_tools": ["shell"], "sandbox": {"mode": "warm"}, "limits": {"parallel": 1}}\n' >cfg.json
{ printf '{"id":"w1","tool":"shell","args":{"command":"echo x >/tmp/made_by_w1"}}\n'
  printf '{"id":"w2","tool":"shell","args":{"command":"true"}}\n'; } | "$TOOLGATE" run --approve --config cfg.json - >/dev/null
cat /tmp/keep /tmp/sub/keep2 /tmp/made_by_w1
SH
  eq "warm, workspace /tmp: its files stay" "$(WORK=$WORK TOOLGATE=$TOOLGATE unshare -rm bash "$WORK/tmpws.sh" 2>&1 | tr '\n' ' ')" "precious p x "
else
  echo "skip: no mount namespace of its own here (unshare -rm)"
fi

# The helper killed from outside under a running call: that call ends
# INTERRUPTED (it had started); the next call gets a new sandbox.
{ sh_call k1 "echo started; sleep 93.1$T"; sh_call k2 'echo after the restart'; } >kill.jsonl
"$TOOLGATE" run --approve --config seq.json kill.jsonl >out.jsonl &
TGPID=$!
helper_pid() { local b; b=$(pgrep -P "$TGPID" -x bwrap | head -1) && [ -n "$b" ] && pgrep -P "$b" -x tg-sandboxd | head -1; }
sleeping() { pgrep -f "sleep 93\\.1$T" >/dev/null; }
check "the call runs" wait_for "$(tg_ms 10000)" sleeping
H=$(helper_pid)
check "found the helper ($H)" test -n "$H"
kill -KILL "$H"
wait $TGPID
eq "killed helper: INTERRUPTED, then a new sandbox" "$(jq -r '[.outcome, (if .outcome == "success" then (.payload | rtrimstr("\n")) else .payload.error.code end)] | join(":")' out.jsonl | tr '\n' ' ')" "error:INTERRUPTED success:after the restart "
check "the call's processes went with it" wait_for "$(tg_ms 3000)" eval "! sleeping"
finish
