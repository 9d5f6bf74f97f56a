/* SPDX-License-Identifier: MIT */
/*
 * policy_check.c - tg_runtime_policy_check: which rule of the runtime's
 * policy decides a call, and why (`toolgate policy check CALL.json`). The
 * call is judged as the pipeline judges it (same tool annotations, same
 * workspace and cwd), with the rules checked one by one so the explanation
 * can say which conditions held.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "runtime.h"

int tg_runtime_policy_check(tg_runtime *rt, const tg_call *call, char **out,
                            tg_error *err)
{
    if (rt == NULL || call == NULL || out == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_runtime_policy_check needs a runtime, a "
                             "call and out");
    *out = NULL;
    const json_t *args = tg__call_args(call); /* borrowed */
    if (args == NULL)
        return tg__error_set(
            err, TG_EINVAL, "call '%s' has no arguments object to judge: %s",
            call->id,
            call->pre_error_message ? call->pre_error_message : "not decoded");
    const tg__tool *tool = tg__registry_find(rt->reg, call->tool);
    tg__policy_input in = {
        .tool = call->tool,
        .caller = call->caller_id,
        .annotations = tool ? tool->annotations : NULL,
        .args = args,
        .workspace = rt->cfg->workspace,
        .cwd = rt->cfg->cwd,
    };
    tg__buf explain;
    tg__buf_init(&explain, 0);
    tg__policy_verdict v;
    tg_error e = {0};
    int rc = tg__policy_decide(rt->policy, &in, &v, &explain, &e);
    json_t *o = NULL; /* new ref */
    if (rc == 0)
        o = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:b}", "id", call->id,
                      "tool", call->tool, "decision",
                      tg__policy_decision_name(v.decision), "rule",
                      (json_int_t)v.rule, "reason", v.reason, "explanation",
                      tg__buf_cstr(&explain), "known_tool", tool != NULL);
    else if (rc != TG_ENOMEM)
        /* The pipeline denies what it cannot judge; so does the check. */
        o = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:b}", "id", call->id,
                      "tool", call->tool, "decision", "deny", "rule",
                      (json_int_t)-1, "reason", e.message, "explanation",
                      tg__buf_cstr(&explain), "known_tool", tool != NULL);
    tg__buf_cleanup(&explain);
    if (o != NULL) {
        *out = json_dumps(o, JSON_COMPACT);
        json_decref(o);
    }
    if (*out == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    return 0;
}
