#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hostile callers against real programs (issue 14, items 3 and 4), run for
# real: a call's context.env cannot take over a tool, and an argument cannot
# become an option.
#
# Environment: each attack is first shown to work when a tool's
# "context_env" allows everything ("*"): a real LD_PRELOAD library built
# here with cc whose constructor leaves a marker, BASH_ENV, an exported bash
# function, PATH leading to a fake `sort` in the workspace, PYTHONPATH with
# a sitecustomize, NODE_OPTIONS --require, PERL5OPT -M, git's
# GIT_CONFIG_PARAMETERS running a command, TAR_OPTIONS running a checkpoint
# action. The same calls to the tools as configured by default end
# `denied`, not_started, the reason naming each variable and how to allow
# it, and no marker appears.
# More loader, shell and interpreter variables (RUBYOPT, JAVA_TOOL_OPTIONS,
# GIT_*, proxies, locales that are paths...) are denied too, in any case;
# what callers need (TZ, LANG=C.UTF-8, their own names) passes; a tool's
# allow and deny widen and narrow the set.
#
# Options: sort {file} with "-odata.txt" would truncate data.txt (shown with
# a tool that allows it); by default it is INVALID_ARGUMENTS (keyword
# "option") and data.txt is intact, and so are ls -la, grep -e/-f,
# "--output=x", "-", "--" and negative numbers. Allowed forms work: "--"
# before the placeholder in the template makes the value an operand (a file
# really named "-odata.txt" is sorted), "option_args" lets a placeholder be
# an option, {*} and stdin templates are never options, and the shell
# built-in runs a command line that begins with '-' as a command. Bad
# option_args and context_env configuration exits 3 naming the key.
source "$(dirname "$0")/lib.sh"
mkdir ws m
MK=$WORK/m
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 || true)
have() { [ -n "$1" ] && command -v "$1" >/dev/null 2>&1; }

# ------------------------------------------------------------ the attacks
# A real shared library whose constructor appends its name to $TG_MARK.
cat >evil.c <<'C'
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void)
{
    const char *m = getenv("TG_MARK");
    int fd = m ? open(m, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
    if (fd >= 0) {
        (void)!write(fd, "preload\n", 8);
        close(fd);
    }
}
C
${CC:-cc} -shared -fPIC -o ws/evil.so evil.c
check "the library loads and marks outside toolgate" \
  env LD_PRELOAD="$WORK/ws/evil.so" TG_MARK="$MK/direct" /usr/bin/true
check "direct marker" test -s "$MK/direct"
rm -f "$MK/direct"

printf 'touch %s/bash_env\n' "$MK" >ws/rc.sh
mkdir ws/bin
printf '#!/bin/sh\ntouch %s/fake_sort\n' "$MK" >ws/bin/sort
chmod +x ws/bin/sort
mkdir ws/py
printf 'open("%s/python", "a").close()\n' "$MK" >ws/py/sitecustomize.py
printf 'require("fs").writeFileSync("%s/node", "x")\n' "$MK" >ws/evil.js
mkdir ws/pl
printf 'open(my $f, ">>", "%s/perl"); 1;\n' "$MK" >ws/pl/evil.pm
printf '#!/bin/sh\ntouch %s/tar\n' "$MK" >ws/tar_action.sh
chmod +x ws/tar_action.sh
git -C ws init -q

# Each attack tool twice: as configured by default, and "_open" with
# "context_env": {"allow": ["*"]} to show the attack is real. Unsandboxed:
# the issue's case, code running on the host.
tool() { # NAME COMMAND-JSON
  printf '{"name": "%s", "command": %s, "sandbox": false},\n' "$1" "$2"
  printf '{"name": "%s_open", "command": %s, "sandbox": false, "context_env": {"allow": ["*"]}},\n' "$1" "$2"
}
{
  printf '{"workspace": "ws", "journal": "j.db", "builtin_tools": ["shell"],\n'
  # a deadline far above the work (a tool starts in well under a second)
  printf ' "limits": {"timeout_ms": %d}, "tools": [\n' "$(tg_ms 20000)"
  tool preload '["/usr/bin/true"]'
  printf '{"name": "preload_sbx", "command": ["/usr/bin/true"]},\n'
  tool bashenv '["/bin/bash", "-c", "true"]'
  tool bashfunc '["/bin/bash", "-c", "ls >/dev/null"]'
  tool sorter '["sort", "--", "{file}"]'
  tool python "[\"$PY\", \"-c\", \"pass\"]"
  tool node '["node", "-e", "0"]'
  tool perl '["perl", "-e", "1"]'
  tool git '["git", "status", "--porcelain"]'
  tool tar '["tar", "-cf", "/dev/null", "--", "{path}"]'
  printf '{"name": "envs", "command": ["/usr/bin/env"], "sandbox": false},\n'
  printf '{"name": "envs_some", "command": ["/usr/bin/env"], "sandbox": false,\n'
  printf '  "context_env": {"allow": ["PYTHONUNBUFFERED", "GIT_AUTHOR_*"], "deny": ["SECRETLESS_*"]}},\n'
  printf '{"name": "envs_none", "command": ["/usr/bin/env"], "sandbox": false, "context_env": {"deny": ["*"]}},\n'
  printf '{"name": "true", "command": ["/usr/bin/true"]}\n'
  printf ']}\n'
} >toolgate.json
# call ID TOOL ARGS ENV-JSON
call() { printf '{"id":"%s","tool":"%s","args":%s,"context":{"env":%s}}\n' "$@"; }
ENVJ() { jq -cn "$@"; }

attacks() { # SUFFIX: "" or "_open"
  local s=$1
  call "preload$s" "preload$s" '{}' "$(ENVJ --arg p "$WORK/ws/evil.so" --arg m "$MK/preload" '{LD_PRELOAD:$p, TG_MARK:$m}')"
  call "bashenv$s" "bashenv$s" '{}' "$(ENVJ --arg p "$WORK/ws/rc.sh" '{BASH_ENV:$p}')"
  call "bashfunc$s" "bashfunc$s" '{}' "$(ENVJ --arg f "() { touch $MK/bash_func; }" '{"BASH_FUNC_ls%%":$f}')"
  call "path$s" "sorter$s" '{"file":"rc.sh"}' "$(ENVJ --arg p "$WORK/ws/bin:/usr/bin:/bin" '{PATH:$p}')"
  if [ -n "$PY" ]; then
    call "python$s" "python$s" '{}' "$(ENVJ --arg p "$WORK/ws/py" '{PYTHONPATH:$p}')"
  fi
  if have node; then
    call "node$s" "node$s" '{}' "$(ENVJ --arg p "--require $WORK/ws/evil.js" '{NODE_OPTIONS:$p}')"
  fi
  if have perl; then
    call "perl$s" "perl$s" '{}' "$(ENVJ --arg p "-I$WORK/ws/pl -Mevil" '{PERL5OPT:$p}')"
  fi
  if have git; then
    # (GIT_CONFIG_COUNT/KEY_0/VALUE_0 would do it too, but KEY_0 looks like
    # a secret's name and never reaches a tool that did not name it)
    call "git$s" "git$s" '{}' "$(ENVJ --arg c "'core.fsmonitor'='touch $MK/git #'" \
      '{GIT_CONFIG_PARAMETERS:$c}')"
  fi
  if have tar; then
    call "tar$s" "tar$s" '{"path":"rc.sh"}' "$(ENVJ --arg a "--checkpoint=1 --checkpoint-action=exec=$WORK/ws/tar_action.sh" '{TAR_OPTIONS:$a}')"
  fi
}
MARKS=(preload bash_env bash_func fake_sort)
[ -n "$PY" ] && MARKS+=(python)
have node && MARKS+=(node)
have perl && MARKS+=(perl)
have git && MARKS+=(git)
have tar && MARKS+=(tar)

# 1. The attacks are real: with everything allowed, each one's code runs
# (an exported bash function excepted: no tool can allow such a name).
attacks _open >open.jsonl
"$TOOLGATE" run open.jsonl >open_out.jsonl
for mark in "${MARKS[@]}"; do
  [ "$mark" = bash_func ] && continue
  check "allowed, the $mark attack runs its code" test -e "$MK/$mark"
done
eq "the function name is refused even with allow *" \
  "$(jq -r 'select(.id=="bashfunc_open").outcome' open_out.jsonl)" denied
check "no function ran" test ! -e "$MK/bash_func"
rm -f "$MK"/*

# 2. By default every one of them is denied and nothing runs.
attacks "" >attack.jsonl
call preload_sbx preload_sbx '{}' "$(ENVJ --arg p "$WORK/ws/evil.so" --arg m "$WORK/ws/sbx_mark" '{LD_PRELOAD:$p, TG_MARK:$m}')" >>attack.jsonl
"$TOOLGATE" run attack.jsonl >out.jsonl
n=$(wc -l <attack.jsonl)
eq "every attack denied" "$(jq -r 'select(.outcome=="denied" and .execution=="not_started") | .id' out.jsonl | wc -l)" "$n"
for mark in "${MARKS[@]}"; do
  check "denied, the $mark attack left no marker" test ! -e "$MK/$mark"
done
check "sandboxed tool: no marker either" test ! -e ws/sbx_mark
reason() { jq -r "select(.id==\"$1\").payload.denied.reason" out.jsonl; }
contains "reason names LD_PRELOAD" "$(reason preload)" "context.env may not set LD_PRELOAD (the dynamic loader"
contains "reason says how to allow" "$(reason preload)" '"context_env": {"allow": ["LD_PRELOAD"]}'
contains "TG_MARK itself is fine" "$(reason preload)" "LD_PRELOAD ("
case "$(reason preload)" in
  *TG_MARK*) fail "TG_MARK named though it is allowed" ;;
  *) pass ;;
esac
contains "BASH_ENV named" "$(reason bashenv)" "BASH_ENV (a shell reads it"
contains "function name refused" "$(reason bashfunc)" "BASH_FUNC_ls?? (not a plain variable name"
contains "PATH named" "$(reason path)" "PATH (it chooses which program a command name runs)"
[ -n "$PY" ] && contains "PYTHONPATH named" "$(reason python)" "PYTHONPATH (an interpreter reads it"
have node && contains "NODE_OPTIONS named" "$(reason node)" "NODE_OPTIONS ("
have perl && contains "PERL5OPT named" "$(reason perl)" "PERL5OPT ("
if have git; then
  contains "GIT_CONFIG_PARAMETERS named" "$(reason git)" "GIT_CONFIG_PARAMETERS (git reads it"
fi
have tar && contains "TAR_OPTIONS named" "$(reason tar)" "TAR_OPTIONS (a program takes extra options from it)"
eq "kept in the journal as denied" \
  "$("$TOOLGATE" history --json --tool preload | jq -r .outcome | head -1)" denied

# 3. More of the class, in any case, on a tool that would not even use them;
# and the shell built-in with BASH_ENV.
VARS=(LD_LIBRARY_PATH LD_AUDIT ld_preload GLIBC_TUNABLES GCONV_PATH ENV SHELLOPTS
  BASHOPTS PS4 IFS CDPATH GLOBIGNORE HOME TMPDIR XDG_CONFIG_HOME PYTHONSTARTUP
  PYTHONHOME pythonpath NODE_PATH PERL5LIB PERLLIB RUBYOPT RUBYLIB
  JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS CLASSPATH GIT_DIR
  GIT_SSH_COMMAND GIT_EXEC_PATH GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 git_dir http_proxy HTTPS_PROXY OPENSSL_CONF
  SSL_CERT_FILE EDITOR PAGER SHELL KUBECONFIG MAKEFLAGS CC RUSTC_WRAPPER
  npm_config_script_shell DYLD_INSERT_LIBRARIES)
{
  i=0
  for v in "${VARS[@]}"; do
    call "v$i" true '{}' "$(ENVJ --arg k "$v" '{($k): "/ws/x"}')"
    i=$((i + 1))
  done
  call l1 true '{}' '{"LANG":"./evil"}'
  call l2 true '{}' '{"LC_ALL":"/ws/locale"}'
  call l3 true '{}' '{"TZ":"../../ws/zone"}'
  call l4 true '{}' '{"TZ":":/ws/zone"}'
  call s1 shell '{"command":"true"}' "$(ENVJ --arg p "$WORK/ws/rc.sh" '{BASH_ENV:$p}')"
  call f1 true '{}' '{"MY_VAR":"() { :; }; touch pwned"}'
} >more.jsonl
"$TOOLGATE" run --approve more.jsonl >more_out.jsonl
i=0
for v in "${VARS[@]}"; do
  eq "$v denied" "$(jq -r "select(.id==\"v$i\") | .outcome + \" \" + (.payload.denied.reason | contains(\"may not set $v (\") | tostring)" more_out.jsonl)" "denied true"
  i=$((i + 1))
done
for id in l1 l2 l3 l4 s1 f1; do
  eq "$id denied" "$(jq -r "select(.id==\"$id\").outcome" more_out.jsonl)" denied
done
check "the shell's BASH_ENV never ran" test ! -e "$MK/bash_env"

# 4. What callers need passes; a tool's allow widens, its deny narrows.
{
  call p1 envs '{}' '{"TZ":"Europe/Paris","LANG":"C.UTF-8","LC_ALL":"C","TERM":"dumb","NO_COLOR":"1","RUST_LOG":"debug","NODE_ENV":"production","MY_APP_MODE":"x"}'
  call p2 envs_some '{}' '{"PYTHONUNBUFFERED":"1","GIT_AUTHOR_NAME":"Ann","git_author_email":"a@b"}'
  call p3 envs_some '{}' '{"PYTHONPATH":"/ws"}'
  call p4 envs_some '{}' '{"GIT_DIR":"/ws/.x"}'
  call p5 envs_some '{}' '{"SECRETLESS_MODE":"1"}'
  call p6 envs_none '{}' '{"TERM":"dumb"}'
  call p7 envs_none '{}' '{}'
} >pass.jsonl
"$TOOLGATE" run pass.jsonl >pass_out.jsonl
out=$(jq -r 'select(.id=="p1").payload' pass_out.jsonl)
for kv in TZ=Europe/Paris LANG=C.UTF-8 LC_ALL=C TERM=dumb NO_COLOR=1 RUST_LOG=debug NODE_ENV=production MY_APP_MODE=x; do
  contains "passes: $kv" "$out" "$kv"
done
out=$(jq -r 'select(.id=="p2").payload' pass_out.jsonl)
contains "allowed: PYTHONUNBUFFERED" "$out" "PYTHONUNBUFFERED=1"
contains "allowed: GIT_AUTHOR_NAME" "$out" "GIT_AUTHOR_NAME=Ann"
contains "allowed, any case: git_author_email" "$out" "git_author_email=a@b"
eq "allow names only what it names: PYTHONPATH" "$(jq -r 'select(.id=="p3").outcome' pass_out.jsonl)" denied
eq "allow GIT_AUTHOR_* is not GIT_DIR" "$(jq -r 'select(.id=="p4").outcome' pass_out.jsonl)" denied
contains "deny narrows" "$(jq -r 'select(.id=="p5").payload.denied.reason' pass_out.jsonl)" \
  "SECRETLESS_MODE (this tool's context_env.deny refuses it)"
eq "deny * refuses even TERM" "$(jq -r 'select(.id=="p6").outcome' pass_out.jsonl)" denied
eq "deny * with no context.env runs" "$(jq -r 'select(.id=="p7").outcome' pass_out.jsonl)" success

# ------------------------------------------------------------- options
printf 'keep me\n' >ws/data.txt
printf 'keep me too\n' >ws/victim.txt
printf 'b\na\n' >ws/-odata.txt
printf 'one\ntwo\nthree\n' >ws/notes.txt
printf 'x\n' >ws/-la
touch ws/.hidden
cat >toolgate.json <<'JSON'
{"workspace": "ws", "journal": null, "builtin_tools": ["shell"], "tools": [
 {"name": "sort", "command": ["/usr/bin/sort", "{file}"]},
 {"name": "sort_open", "command": ["/usr/bin/sort", "{file}"], "option_args": ["file"]},
 {"name": "sort_dd", "command": ["/usr/bin/sort", "--", "{file}"]},
 {"name": "ls", "command": ["ls", "{path}"]},
 {"name": "ls_dd", "command": ["ls", "--", "{path}"]},
 {"name": "ls_flags", "command": ["ls", "{flags?}", "--", "{path}"], "option_args": ["flags"]},
 {"name": "grep", "command": ["grep", "{pattern}", "notes.txt"]},
 {"name": "grep_dd", "command": ["grep", "-n", "--", "{pattern}", "notes.txt"]},
 {"name": "cat", "command": ["cat", "{path}"]},
 {"name": "head", "command": ["head", "-n", "{n}", "--", "notes.txt"]},
 {"name": "head_neg", "command": ["head", "-n", "{n}", "--", "notes.txt"], "option_args": ["n"]},
 {"name": "all", "command": ["/usr/bin/printf", "%s", "{*}"]},
 {"name": "stdin", "command": ["cat"], "stdin": "{text}"}
]}
JSON
opt() { printf '{"id":"%s","tool":"%s","args":%s}\n' "$@"; }
# The attack is real: where the tool allows {file} to be an option, sort -o
# writes over the file.
opt real sort_open '{"file":"-ovictim.txt"}' >real.jsonl
"$TOOLGATE" run real.jsonl >real_out.jsonl
eq "allowed, sort -o truncates" "$(wc -c <ws/victim.txt | tr -d ' ')" 0
{
  opt o1 sort '{"file":"-odata.txt"}'
  opt o2 sort '{"file":"--output=x"}'
  opt o3 ls '{"path":"-la"}'
  opt o4 grep '{"pattern":"-e."}'
  opt o5 grep '{"pattern":"-f/etc/passwd"}'
  opt o6 cat '{"path":"-"}'
  opt o7 cat '{"path":"--"}'
  opt o8 head '{"n":-1}'
  opt o9 head '{"n":"-1"}'
  opt o10 sort '{"file":"--help"}'
  opt o11 ls_flags '{"path":"x","flags":"-la"}'
  opt o12 ls_flags '{"path":"-la","flags":"--all"}'
} >opt.jsonl
"$TOOLGATE" run opt.jsonl >opt_out.jsonl
kw() { jq -r "select(.id==\"$1\") | .payload.error.code + \" \" + .payload.error.details[0].keyword + \" \" + .payload.error.details[0].path + \" \" + .execution" opt_out.jsonl; }
eq "sort -odata.txt refused" "$(kw o1)" "INVALID_ARGUMENTS option /file not_started"
eq "data.txt intact" "$(cat ws/data.txt)" "keep me"
eq "--output=x refused" "$(kw o2)" "INVALID_ARGUMENTS option /file not_started"
check "x not created" test ! -e ws/x
eq "ls -la refused" "$(kw o3)" "INVALID_ARGUMENTS option /path not_started"
eq "grep -e refused" "$(kw o4)" "INVALID_ARGUMENTS option /pattern not_started"
eq "grep -f refused" "$(kw o5)" "INVALID_ARGUMENTS option /pattern not_started"
eq "a value exactly - refused" "$(kw o6)" "INVALID_ARGUMENTS option /path not_started"
eq "a value exactly -- refused" "$(kw o7)" "INVALID_ARGUMENTS option /path not_started"
eq "a negative number refused" "$(kw o8)" "INVALID_ARGUMENTS option /n not_started"
eq "a negative number as text refused" "$(kw o9)" "INVALID_ARGUMENTS option /n not_started"
eq "--help refused" "$(kw o10)" "INVALID_ARGUMENTS option /file not_started"
msg=$(jq -r 'select(.id=="o1").payload.error.message' opt_out.jsonl)
contains "the message says why" "$msg" "argument 'file' begins with '-', so '/usr/bin/sort' would read it as an option; refused"
contains "the message says how to allow" "$msg" 'put "--" before {file}, or its "option_args" can list "file"'
eq "option_args: flags may be an option" "$(jq -r 'select(.id=="o11").outcome' opt_out.jsonl)" error
contains "ls -la ran on x (no such file)" "$(jq -r 'select(.id=="o11").payload.error.details.stderr' opt_out.jsonl)" "cannot access 'x'"
eq "after --, path -la is the file -la" "$(jq -r 'select(.id=="o12").payload' opt_out.jsonl)" "-la"

# The allowed forms.
{
  opt a1 sort_dd '{"file":"-odata.txt"}'
  opt a2 ls_dd '{"path":"-la"}'
  opt a3 grep_dd '{"pattern":"-e"}'
  opt a4 grep_dd '{"pattern":"t"}'
  opt a5 head_neg '{"n":-1}'
  opt a6 ls_flags '{"flags":"-a","path":"."}'
  opt a7 all '{"a":"-x","b":"--"}'
  opt a8 stdin '{"text":"-odata.txt"}'
  opt a9 sort '{"file":"./-odata.txt"}'
  opt a10 shell '{"command":"--version"}'
  opt a11 ls_flags '{"path":"notes.txt"}'
} >allowed.jsonl
"$TOOLGATE" run --approve allowed.jsonl >allowed_out.jsonl
pl() { jq -r "select(.id==\"$1\").payload" allowed_out.jsonl; }
eq "sort -- -odata.txt sorts the file named so" "$(pl a1)" "a
b"
eq "data.txt still intact" "$(cat ws/data.txt)" "keep me"
eq "ls -- -la names the file" "$(pl a2)" "-la"
eq "grep -- -e finds nothing, runs" "$(jq -r 'select(.id=="a3") | .outcome + " " + (.exit_status|tostring)' allowed_out.jsonl)" "error 1"
eq "grep -- t" "$(pl a4)" "2:two
3:three"
eq "head -n -1 with option_args" "$(pl a5)" "one
two"
contains "ls -a with option_args" "$(pl a6)" ".hidden"
eq "{*} is an object, never an option" "$(pl a7)" '{"a":"-x","b":"--"}'
eq "stdin is no command line" "$(pl a8)" "-odata.txt"
eq "./-odata.txt is a file" "$(pl a9)" "a
b"
eq "shell runs --version as a command, not bash's option" \
  "$(jq -r 'select(.id=="a10") | .outcome + " " + (.exit_status|tostring)' allowed_out.jsonl)" "error 127"
check "not bash's version" bash -c "! jq -c 'select(.id==\"a10\").payload' allowed_out.jsonl | grep -q 'GNU bash'"
contains "optional flags absent" "$(pl a11)" "notes.txt"

# ---------------------------------------------------- configuration errors
bad_config() { # DESCRIPTION TOOL-JSON EXPECTED
  printf '{"workspace": "ws", "journal": null, "tools": [%s]}\n' "$2" >bad.json
  local rc=0
  "$TOOLGATE" tools --config bad.json >/dev/null 2>err.txt || rc=$?
  eq "$1: exit 3" "$rc" 3
  contains "$1: names the key" "$(cat err.txt)" "$3"
}
bad_config "option_args not a placeholder" \
  '{"name": "t", "command": ["ls", "{path}"], "option_args": ["pth"]}' \
  "tools[0].option_args[0]: 'pth' is not a placeholder of the command"
bad_config "option_args not an array" \
  '{"name": "t", "command": ["ls", "{path}"], "option_args": "path"}' \
  "tools[0].option_args must be an array"
bad_config "context_env unknown key" \
  '{"name": "t", "command": ["env"], "context_env": {"allowed": ["A"]}}' \
  "tools[0].context_env: unknown key 'allowed'"
bad_config "context_env bad pattern" \
  '{"name": "t", "command": ["env"], "context_env": {"deny": ["A", "B?"]}}' \
  "tools[0].context_env.deny[1] must be a variable name or a pattern"
bad_config "context_env not an object" \
  '{"name": "t", "command": ["env"], "context_env": ["A"]}' \
  "tools[0].context_env must be an object"
finish
