#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hooks end to end: before hooks allow, deny (denied), cancel (canceled by
# policy) and rewrite the arguments (re-validated against the schema); a
# hook that crashes, times out or answers nonsense denies and says which
# hook and why; after hooks redact a payload, and a failing after hook
# withholds it (HOOK_FAILED); a bad hooks section stops toolgate (exit 3,
# naming the key). The hook deadline a working hook must beat is sized from
# what one run through a hook costs here and now (measured first).
source "$(dirname "$0")/lib.sh"
mkdir -p ws/hooks
hook() { printf '#!/bin/sh\n%s\n' "$2" >"ws/hooks/$1"; chmod +x "ws/hooks/$1"; }
hook judge 'in=$(cat)
case "$in" in
  *"\"text\":\"rm -rf"*) echo "{\"decision\":\"deny\",\"reason\":\"no deleting\"}" ;;
  *"\"text\":\"stop"*) echo "{\"decision\":\"cancel\",\"reason\":\"not now\"}" ;;
  *"\"text\":\"shout"*) echo "{\"decision\":\"allow\",\"args\":{\"text\":\"SHOUT\"}}" ;;
  *"\"text\":\"number"*) echo "{\"decision\":\"allow\",\"args\":{\"text\":7}}" ;;
  *) echo "{\"decision\":\"allow\",\"reason\":\"fine\"}" ;;
esac'
hook redact 'if grep -q CANARY; then echo "{\"payload\":\"[redacted]\"}"; fi'
hook crash 'kill -KILL $$'
hook slow 'sleep 90'
hook prose 'echo "looks good to me"'
hook broken 'cat >&2; echo "redactor is down" >&2; exit 4'
cat >toolgate.json <<'JSON'
{"workspace": "ws", "journal": null, "builtin_tools": [],
 "tools": [{"name": "echo", "command": ["/bin/echo", "-n", "{text}"],
            "input_schema": {"type": "object", "properties": {"text": {"type": "string"}},
                             "required": ["text"]}}],
 "hooks": {"before": [["./hooks/judge"]], "after": [["./hooks/redact"]]}}
JSON
mk() { printf '{"id":"%s","tool":"echo","args":{"text":"%s"}}\n' "$1" "$2"; }
{ mk ok "hello"
  mk del "rm -rf /"
  mk halt "stop it"
  mk loud "shout please"
  mk num "number please"
  mk leak "the CANARY is 1234"
} >calls.jsonl

"$TOOLGATE" run calls.jsonl >out.jsonl
eq "outcomes" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "success denied canceled success denied success "
eq "allowed call ran" "$(jq -r 'select(.id=="ok").payload' out.jsonl)" "hello"
eq "deny carries the hook's reason" "$(jq -r 'select(.id=="del").payload.denied.reason' out.jsonl)" "no deleting"
eq "cancel is by policy" "$(jq -r 'select(.id=="halt").payload.canceled | .by + ": " + .reason' out.jsonl)" "policy: not now"
eq "vetoed calls never started" "$(jq -r 'select(.id=="del" or .id=="halt").execution' out.jsonl | sort -u)" not_started
eq "rewritten arguments are what ran" "$(jq -r 'select(.id=="loud").payload' out.jsonl)" "SHOUT"
contains "a rewrite the schema refuses denies" "$(jq -r 'select(.id=="num").payload.denied.reason' out.jsonl)" "before hook './hooks/judge' rewrote the arguments"
eq "after hook redacts" "$(jq -r 'select(.id=="leak").payload' out.jsonl)" "[redacted]"
check "the canary is not shown" bash -c '! grep -q 1234 out.jsonl'

# Rewritten arguments face the policy again: a deny refuses them, and an
# approval given for the model's arguments does not cover them.
hook sneak 'in=$(cat)
case "$in" in
  *"\"text\":\"plain"*) echo "{\"decision\":\"allow\",\"args\":{\"text\":\"secret stuff\"}}" ;;
  *"\"text\":\"polite"*) echo "{\"decision\":\"allow\",\"args\":{\"text\":\"please confirm\"}}" ;;
  *) echo "{\"decision\":\"allow\"}" ;;
esac'
jq '.hooks = {"before": [["./hooks/sneak"]]} | .policy = {"default": "allow", "rules": [
  {"tool": "echo", "args": {"text": {"matches": "secret"}}, "decision": "deny", "reason": "no secrets"},
  {"tool": "echo", "args": {"text": {"matches": "confirm"}}, "decision": "ask"}]}' toolgate.json >sneak.json
{ mk p1 "plain"; mk p2 "polite"; } >sneak.jsonl
"$TOOLGATE" run --config sneak.json sneak.jsonl >out.jsonl
eq "rewrites judged again" "$(jq -r .outcome out.jsonl | tr '\n' ' ')" "denied denied "
contains "a rewrite into denied arguments names the policy's reason" "$(jq -r 'select(.id=="p1").payload.denied.reason' out.jsonl)" "policy does not allow: no secrets"
contains "a rewrite into asked-about arguments needs its own approval" "$(jq -r 'select(.id=="p2").payload.denied.reason' out.jsonl)" "none was given before the turn began"
"$TOOLGATE" run --config sneak.json --approve <(mk p2 "polite") >out.jsonl
eq "--approve covers a rewrite" "$(jq -r .payload out.jsonl)" "please confirm"

# Hooks that fail deny, and say which hook and what happened; a short
# deadline on `sleep 90` ends it long before: 5x what one run through a
# hook costs here (the most of three), at least a scaled 300 ms.
jq '.hooks = {"before": [["./hooks/judge"]]}' toolgate.json >cost.json
cost=0
for _ in 1 2 3; do
  t0=$(now_ms)
  "$TOOLGATE" run --config cost.json <(mk one "hello") >/dev/null
  took=$(($(now_ms) - t0))
  [ "$took" -gt "$cost" ] && cost=$took
done
hook_ms=$((5 * cost > $(tg_ms 300) ? 5 * cost : $(tg_ms 300)))
echo "one run through a hook costs $cost ms here: hook deadline $hook_ms ms"
for h in crash slow prose; do
  jq --arg h "./hooks/$h" --argjson ms "$hook_ms" '.hooks = {"timeout_ms": $ms, "before": [[$h]]}' toolgate.json >"$h.json"
  t0=$(now_ms)
  "$TOOLGATE" run --config "$h.json" <(mk one "hello") >out.jsonl
  took=$(($(now_ms) - t0))
  eq "$h: denied" "$(jq -r .outcome out.jsonl)" denied
  contains "$h: names the hook" "$(jq -r .payload.denied.reason out.jsonl)" "before hook './hooks/$h'"
  [ "$took" -lt $((hook_ms + $(tg_ms 10000))) ] && pass || fail "$h: took $took ms"
done
contains "prose: says how" "$(jq -r .payload.denied.reason out.jsonl)" "not JSON"
"$TOOLGATE" run --config slow.json <(mk one "hello") >out.jsonl
contains "slow: timed out" "$(jq -r .payload.denied.reason out.jsonl)" "timed out after $hook_ms ms"
"$TOOLGATE" run --config crash.json <(mk one "hello") >out.jsonl
contains "crash: killed by a signal" "$(jq -r .payload.denied.reason out.jsonl)" "killed by signal 9 (SIGKILL)"

# A failing after hook withholds the result: an error naming the hook.
jq '.hooks = {"after": [["./hooks/broken"]]}' toolgate.json >broken.json
"$TOOLGATE" run --config broken.json <(mk leak "the CANARY is 1234") >out.jsonl
eq "broken after hook: error" "$(jq -r .outcome out.jsonl)" error
eq "broken after hook: code" "$(jq -r .payload.error.code out.jsonl)" HOOK_FAILED
contains "broken after hook: names it" "$(jq -r .payload.error.message out.jsonl)" "after hook './hooks/broken' exited with status 4; the tool's result is withheld"
eq "broken after hook: the tool did run" "$(jq -r .execution out.jsonl)" finished
check "broken after hook: no canary" bash -c '! grep -q 1234 out.jsonl'

# A bad hooks section: exit 3 naming the key.
jq '.hooks.before = [{"command": ["./hooks/judge"], "timeout_ms": -1}]' toolgate.json >bad.json
set +e
"$TOOLGATE" run --config bad.json calls.jsonl >/dev/null 2>err.txt; st=$?
set -e
eq "bad hooks exit" "$st" 3
contains "bad hooks names the key" "$(cat err.txt)" "hooks.before[0].timeout_ms"
finish
