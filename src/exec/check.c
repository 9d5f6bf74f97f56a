/* SPDX-License-Identifier: MIT */
/*
 * check.c - what is verified before a call may run, in this order: a problem
 * found while parsing (which limits.repair may fix first), an unknown tool,
 * arguments over the size limit, a checksum that does not match, arguments
 * that do not satisfy the tool's JSON Schema (limits.repair may unquote
 * numbers and booleans first), the variables the call's context.env would
 * set (context_env.c), the permission policy, and for command tools the argv
 * and stdin templates (whose option rule refuses a value that would become
 * an option). Each failure is a result with execution not_started; nothing
 * here stops the other calls of the turn.
 *
 * The schema check spends from limits.max_validation_steps. It starts on
 * the loop thread with a small slice of that budget, which is all real
 * arguments need; arguments that need more are checked again on the
 * thread pool (schema_work.c) with the whole budget and can be canceled
 * there, so the loop never waits long on a schema.
 */
#include <stdlib.h>
#include <string.h>

#include "context_env.h"
#include "error.h"
#include "quote.h"
#include "repair.h"
#include "remote.h"
#include "runtime.h"
#include "template.h"

#define KNOWN_LISTED 20

/* Steps of the schema check done on the loop thread before it moves to
 * the thread pool: a fraction of a millisecond, and more than the
 * arguments of real tools take (hundreds of steps). */
#define INLINE_STEPS 32768

/* A refusal; a result that could not be allocated fails the turn with
 * TG_ENOMEM instead of letting the call run. */
static tg_result *refuse(bool *oom, tg_result *r)
{
    if (r == NULL)
        *oom = true;
    return r;
}

static tg_result *unknown_tool(tg_runtime *rt, const tg_call *call)
{
    const tg__rsrc *src = tg__rsrcs_for(rt, call->tool);
    if (src != NULL) {
        /* a name of an MCP server's tools: say what the server is doing */
        tg__rsource_state st = tg__rsource_state_of(src->rs);
        const tg_error *e = tg__rsource_error(src->rs);
        if (st == TG__RS_READY)
            return tg__fail(
                call, TG_EXECUTION_NOT_STARTED, "UNKNOWN_TOOL", NULL,
                "unknown tool '%s': MCP source '%s' serves no "
                "tool '%s'",
                call->tool, src->cfg->name, call->tool + strlen(src->prefix));
        return tg__fail(
            call, TG_EXECUTION_NOT_STARTED, "SOURCE_UNAVAILABLE", NULL,
            "tool '%s' is not known: MCP source '%s' is %s%s%s", call->tool,
            src->cfg->name, tg__rsource_state_name(st),
            e->code != 0 ? ": " : "", e->code != 0 ? e->message : "");
    }
    size_t n = tg__registry_count(rt->reg);
    tg__buf names;
    tg__buf_init(&names, 0);
    int bad = 0;
    for (size_t i = 0; i < n && i < KNOWN_LISTED; i++) {
        const tg__tool *t = tg__registry_at(rt->reg, i);
        bad |= tg__buf_printf(&names, "%s%s", i ? ", " : "", t->name);
    }
    if (n > KNOWN_LISTED)
        bad |= tg__buf_printf(&names, " and %zu more", n - KNOWN_LISTED);
    tg_result *r = NULL;
    if (!bad)
        r = n ? tg__fail(call, TG_EXECUTION_NOT_STARTED, "UNKNOWN_TOOL", NULL,
                         "unknown tool '%s'; known tools: %s", call->tool,
                         tg__buf_cstr(&names))
              : tg__fail(call, TG_EXECUTION_NOT_STARTED, "UNKNOWN_TOOL", NULL,
                         "unknown tool '%s'; no tools are configured",
                         call->tool);
    tg__buf_cleanup(&names);
    return r;
}

/* INVALID_ARGUMENTS with the template error as its one detail. */
static tg_result *invalid_args(const tg_call *call, const tg_error *e,
                               const char *keyword, bool *oom)
{
    json_t *details =
        json_pack("[{s:s, s:s, s:s}]", "path", e->pointer, "keyword", keyword,
                  "message", e->message); /* new ref */
    if (details == NULL) {
        *oom = true;
        return NULL;
    }
    return refuse(oom,
                  tg__fail(call, TG_EXECUTION_NOT_STARTED, "INVALID_ARGUMENTS",
                           details, "invalid arguments for tool '%s': %s",
                           call->tool, e->message));
}

/* Expands the command's templates into the job. */
static tg_result *prepare_command(tg_runtime *rt, tg__job *job, bool *oom)
{
    const tg__tool *tool = job->tool;
    const tg_call *call = job->call;
    tg_error e = {0};
    /* Templates read the arguments as an object: built here, on the one
     * path that needs it. */
    json_t *args = tg__call_args(call); /* borrowed */
    if (args == NULL) {
        *oom = true;
        return NULL;
    }
    const char *keyword = "required";
    int rc = tg__argv_expand(tool->argv, args, tool->option_args, &job->argv,
                             &keyword, &e);
    if (rc == TG_ENOMEM) {
        *oom = true;
        return NULL;
    }
    if (rc != 0)
        return invalid_args(call, &e, keyword, oom);
    if (job->argv == NULL || job->argv[0] == NULL) {
        tg__argv_free(job->argv);
        job->argv = NULL;
        return refuse(
            oom, tg__fail(call, TG_EXECUTION_NOT_STARTED, "TOOL_FAILED", NULL,
                          "tool '%s' has an empty command", call->tool));
    }
    if (tool->stdin_tpl == NULL || !json_is_string(tool->stdin_tpl))
        return NULL;
    /* Placeholders may repeat an argument: bound the text by a multiple of
     * the argument limit rather than by what the template could make. */
    int64_t lim =
        rt->cfg->max_args_bytes > 0 ? rt->cfg->max_args_bytes : 1 << 20;
    tg__buf in;
    tg__buf_init(&in, (size_t)lim * 4 + json_string_length(tool->stdin_tpl));
    rc = tg__stdin_expand(json_string_value(tool->stdin_tpl), args, &in, &e);
    if (rc == 0) {
        job->stdin_len = in.len;
        job->stdin_data = tg__buf_take(&in);
        job->has_stdin = true;
        if (job->stdin_data == NULL)
            *oom = true;
        return NULL;
    }
    tg__buf_cleanup(&in);
    tg__argv_free(job->argv);
    job->argv = NULL;
    if (rc == TG_ENOMEM) {
        *oom = true;
        return NULL;
    }
    if (rc == TG_ELIMIT)
        return refuse(
            oom, tg__fail(call, TG_EXECUTION_NOT_STARTED, "ARGUMENTS_TOO_LARGE",
                          NULL,
                          "the standard input of call '%s' would exceed %lld "
                          "bytes",
                          call->id, (long long)lim * 4));
    return invalid_args(call, &e, "required", oom);
}

/* limits.repair on arguments that did not parse: the text repairs
 * (repair.c) on the wire's string. When one gives an object, the call
 * takes it (the wire's string stays its args_raw) and its pre-error goes;
 * text that was cut keeps MALFORMED_ARGUMENTS, with a message saying where
 * it ends. Arguments the stream cut, or that hold bytes no tool gets, are
 * not touched. Returns 0 or TG_ENOMEM. */
static int repair_text(tg_call *call)
{
    const char *raw = tg_call_args_raw(call);
    if (raw == NULL || call->args_unrepairable)
        return 0;
    tg__buf fixed;
    unsigned done = 0;
    tg__repair_cut cut;
    tg__buf_init(&fixed, 0);
    int rc = tg__repair_args_text(raw, strlen(raw), &fixed, &done, &cut);
    if (rc == 0 && cut.inside != NULL)
        rc = tg__call_set_pre_error(
            call, "MALFORMED_ARGUMENTS",
            "arguments of call '%s' were cut short: they end inside %s at "
            "line %d, column %d, and limits.repair never completes cut "
            "arguments",
            call->id, cut.inside, cut.line, cut.column);
    else if (rc == 1) {
        char *wire = strdup(raw); /* the call's own copy goes below */
        rc = wire == NULL ? TG_ENOMEM
                          : tg__call_set_args_text(call, fixed.data, fixed.len);
        if (rc == 0)
            rc = tg__call_set_args_raw(call, wire);
        free(wire);
        if (rc == 0 && call->args_text != NULL) {
            tg__call_clear_pre_error(call);
            call->repaired |= done;
        }
    }
    tg__buf_cleanup(&fixed);
    return rc < 0 ? rc : 0;
}

/* INVALID_ARGUMENTS listing every violation of the report. */
static tg_result *schema_failure(const tg_call *call,
                                 const tg__schema_report *rep, bool *oom)
{
    json_t *details = tg__schema_report_details(rep); /* new ref */
    char *msg = tg__schema_report_message(rep);
    tg_result *r = NULL;
    if (details != NULL && msg != NULL)
        r = tg__fail(call, TG_EXECUTION_NOT_STARTED, "INVALID_ARGUMENTS",
                     details, "invalid arguments for tool '%s': %s", call->tool,
                     msg);
    else
        json_decref(details);
    free(msg);
    return refuse(oom, r);
}

tg_result *tg__check_schema(const tg_config *cfg, tg_call *call,
                            const tg__tool *tool, tg__schema_budget *budget,
                            bool *oom)
{
    tg_error e;
    tg__error_init(&e);
    *oom = false;
    /* The verdict comes first, from the tape and without allocating; only
     * a call that fails is validated again to collect every violation. */
    int rc = tg__schema_validate_tape_in(tool->schema, &call->args_tape, 0,
                                         NULL, budget, &e);
    if (rc == 1)
        return NULL;
    tg__schema_report rep = {0};
    if (rc == 0)
        rc = tg__schema_validate_tape_in(tool->schema, &call->args_tape, 0,
                                         &rep, budget, &e);
    tg_result *r = NULL;
    if (rc == TG_ENOMEM) {
        *oom = true;
    } else if (rc == TG_ELIMIT && budget->exhausted) {
        r = refuse(oom, tg__fail(call, TG_EXECUTION_NOT_STARTED,
                                 "SCHEMA_TOO_COSTLY", NULL,
                                 "the arguments of call '%s' are too costly to "
                                 "check against the schema of tool '%s': "
                                 "checking them needs more than %llu "
                                 "validation steps "
                                 "(limits.max_validation_steps); send smaller "
                                 "or simpler arguments",
                                 call->id, call->tool,
                                 (unsigned long long)budget->limit));
    } else if (rc == TG_ELIMIT) {
        /* a regex's match limits, or subschemas nested too deep */
        r = refuse(oom, tg__fail(call, TG_EXECUTION_NOT_STARTED,
                                 "SCHEMA_TOO_COSTLY", NULL,
                                 "the arguments of call '%s' are too costly to "
                                 "check against the schema of tool '%s': %s",
                                 call->id, call->tool, e.message));
    } else if (rc == TG_ECANCELED) {
        /* stopped by budget->stop: the caller makes the result */
    } else if (rc == 0) {
        json_t *fixed = NULL; /* new ref */
        const json_t *args = cfg->repair ? tg__call_args(call) : NULL;
        int c = args ? tg__coerce_args(tool->schema, &rep, args, &fixed) : 0;
        if (c == 1 && tg__schema_validate_json_in(tool->schema, fixed, NULL,
                                                  budget, &e) == 1) {
            if (tg__call_set_args(call, fixed) != 0)
                *oom = true;
            else
                call->repaired |= TG_REPAIR_COERCED;
        } else if (c < 0 || (args == NULL && cfg->repair)) {
            *oom = true;
        } else {
            r = schema_failure(call, &rep, oom);
        }
        json_decref(fixed);
    } else {
        r = refuse(oom,
                   tg__fail(call, TG_EXECUTION_NOT_STARTED, "INTERNAL", NULL,
                            "cannot check the arguments of call "
                            "'%s': %s",
                            call->id, e.message));
    }
    tg__schema_report_cleanup(&rep);
    return r;
}

/* The call's context.env against the variables no caller may set
 * (context_env.c) and the tool's "context_env": a variable that would load
 * code into the tool or pick the program it runs ends the call `denied`,
 * naming it. */
static tg_result *check_context_env(const tg_call *call, const tg__tool *tool,
                                    bool *oom)
{
    const json_t *env = json_object_get(call->context, "env"); /* borrowed */
    tg__buf why;
    tg__buf_init(&why, 0);
    int rc = tg__context_env_check(env, tool->ctx_env_allow, tool->ctx_env_deny,
                                   &why);
    tg_result *r = NULL;
    if (rc < 0)
        *oom = true;
    else if (rc == 1)
        r = refuse(oom, tg__result_denied(call, tg__buf_cstr(&why)));
    tg__buf_cleanup(&why);
    return r;
}

/* The verdict as it goes into the result's `decisions`: {"decision",
 * "rule" (index, or null for the default), "reason", "approved_by", and
 * "detail" (what an asynchronous answer said, tg_ask_answer)}. */
static int record_verdict(tg__job *job, const char *key,
                          const tg__policy_verdict *v, const char *approved_by,
                          const char *detail)
{
    static const char *const names[] = {"allow", "deny", "ask"};
    json_t *p = json_pack(
        "{s:s, s:o, s:s, s:s*}", "decision",
        names[v->decision <= TG_POLICY_ASK ? v->decision : TG_POLICY_DENY],
        "rule", v->rule >= 0 ? json_integer(v->rule) : json_null(), "reason",
        v->reason ? v->reason : "", "approved_by", approved_by); /* new ref */
    if (p == NULL)
        return TG_ENOMEM;
    if (detail != NULL &&
        json_object_set_new(p, "detail",
                            tg__json_text(detail, strlen(detail))) != 0) {
        json_decref(p);
        return TG_ENOMEM;
    }
    if (job->decisions == NULL && (job->decisions = json_object()) == NULL) {
        json_decref(p);
        return TG_ENOMEM;
    }
    return json_object_set_new(job->decisions, key, p) == 0 ? 0 : TG_ENOMEM;
}

/* The denial of an `ask` that was not approved: why, and how to grant it. */
static tg_result *ask_denied(tg_runtime *rt, const tg_call *call,
                             const char *reason, bool prompt, bool *oom)
{
    tg__buf why;
    tg__buf_init(&why, 0);
    tg_result *r = NULL;
    if (tg__buf_printf(&why,
                       !prompt ? "approval needed (%s) for these arguments "
                                 "and none was given before the turn began"
                       : rt->approver != NULL
                           ? "approval needed (%s) and the operator said no"
                           : "approval needed (%s) and there is no operator "
                             "to ask; run with --approve to answer yes, or "
                             "add a policy rule that allows it",
                       reason) == 0)
        r = tg__result_denied(call, tg__buf_cstr(&why));
    tg__buf_cleanup(&why);
    return refuse(oom, r);
}

/* The permission policy (src/policy): allow runs on, deny ends `denied`
 * with the rule's reason, ask runs only when approved (--approve, an
 * earlier approval of the same arguments or of the tool, or an operator:
 * asynchronously through the runtime's asker (ask.c: the job then waits in
 * TG__JOB_ASKING and NULL is returned), else through its approver now) and
 * is denied otherwise, saying how to grant it. A call the policy cannot
 * judge (an unresolvable path, a regex limit) is denied, never let through.
 * The verdict is kept for the result's `decisions` under `key`. `prompt`:
 * the operator may be asked now (not for arguments a hook rewrote while
 * other tools run: those need an approval given before, or --approve). */
static tg_result *check_policy(tg_runtime *rt, tg__job *job, const char *key,
                               bool prompt, bool *oom)
{
    tg_call *call = job->call;
    tg__policy_input in = {
        .tool = call->tool,
        .caller = call->caller_id,
        .annotations = job->tool->annotations,
        /* built only when some rule looks at arguments */
        .args = tg__policy_reads_args(rt->policy) ? tg__call_args(call) : NULL,
        .workspace = rt->cfg->workspace,
        .cwd = rt->cfg->cwd,
    };
    tg__policy_verdict v;
    tg_error e = {0};
    if (in.args == NULL && tg__policy_reads_args(rt->policy)) {
        *oom = true; /* the arguments decoded before: only memory fails */
        return NULL;
    }
    int rc = tg__policy_decide(rt->policy, &in, &v, NULL, &e);
    if (rc == TG_ENOMEM) {
        *oom = true;
        return NULL;
    }
    tg_result *r = NULL;
    if (rc != 0) {
        tg__buf why;
        tg__buf_init(&why, 0);
        if (tg__buf_printf(&why, "the policy could not judge this call: %s",
                           e.message) == 0)
            r = tg__result_denied(call, tg__buf_cstr(&why));
        tg__buf_cleanup(&why);
        return refuse(oom, r);
    }
    const char *approved_by = NULL;
    /* An asker set is asked instead of the approver, later. */
    bool later = prompt && rt->ask_fn != NULL;
    if (v.decision == TG_POLICY_ASK) {
        rc = tg__approval_ask(rt, call, v.reason, prompt && !later,
                              &approved_by);
        if (rc < 0) {
            *oom = true;
            return NULL;
        }
    }
    /* A call no rule spoke about, let through by an "allow" default, has
     * nothing worth keeping. */
    bool noteworthy = v.rule >= 0 || v.decision != TG_POLICY_ALLOW;
    if (noteworthy && record_verdict(job, key, &v, approved_by, NULL) != 0) {
        *oom = true;
        return NULL;
    }
    if (v.decision == TG_POLICY_ALLOW || approved_by != NULL)
        return NULL;
    if (v.decision == TG_POLICY_DENY)
        return refuse(oom, tg__result_denied(call, v.reason));
    if (later) {
        if (tg__ask_start(rt, job, &v) != 0)
            *oom = true;
        return NULL;
    }
    return ask_denied(rt, call, v.reason, prompt, oom);
}

/* No rules and "allow": nothing to judge (and no arguments object to
 * build for it). */
static bool policy_judges(const tg_runtime *rt)
{
    return rt->policy != NULL &&
           (tg__policy_rule_count(rt->policy) > 0 ||
            tg__policy_default(rt->policy) != TG_POLICY_ALLOW);
}

tg_result *tg__check_call(tg_runtime *rt, tg__job *job, bool *oom)
{
    tg_call *call = job->call;
    *oom = false;
    if (call->pre_error_code != NULL && rt->cfg->repair &&
        strcmp(call->pre_error_code, "MALFORMED_ARGUMENTS") == 0 &&
        repair_text(call) != 0) {
        *oom = true;
        return NULL;
    }
    if (call->pre_error_code != NULL)
        return refuse(oom,
                      tg__fail(call, TG_EXECUTION_NOT_STARTED,
                               call->pre_error_code, NULL, "%s",
                               call->pre_error_message ? call->pre_error_message
                                                       : call->pre_error_code));
    if (call->pre_cancel_by != NULL)
        return refuse(oom, tg__result_canceled(call, TG_EXECUTION_NOT_STARTED,
                                               call->pre_cancel_by,
                                               call->pre_cancel_reason));
    if (call->args_text == NULL)
        return refuse(oom,
                      tg__fail(call, TG_EXECUTION_NOT_STARTED,
                               "MALFORMED_ARGUMENTS", NULL,
                               "arguments of call '%s' are missing", call->id));
    const tg__tool *tool = tg__registry_find(rt->reg, call->tool);
    if (tool == NULL)
        return refuse(oom, unknown_tool(rt, call));
    if (tool->state != TG_TOOL_ENABLED)
        /* a remote tool held by its pin or disabled (remote_tools.c) */
        return refuse(oom, tg__result_denied(call, tool->off_reason));
    job->tool = tool;
    /* its result is never spooled again, nor offered to the artifact tools */
    if (rt->spool != NULL && tg__spool_is_tool(call->tool))
        call->from_artifact_tool = true;
    int64_t max = rt->cfg->max_args_bytes;
    if (max > 0) {
        size_t size = tg__call_args_size(call);
        if (size > (uint64_t)max)
            return refuse(
                oom, tg__fail(call, TG_EXECUTION_NOT_STARTED,
                              "ARGUMENTS_TOO_LARGE", NULL,
                              "arguments of call '%s' are %zu bytes, more than "
                              "the limit of %lld bytes (limits.max_args_bytes)",
                              call->id, size, (long long)max));
    }
    if (call->checksum_in != NULL) {
        int ok = tg__checksum_verify_tape(call->checksum_in, call->tool,
                                          &call->args_tape, call->hmac_key,
                                          call->hmac_key_len);
        if (ok < 0)
            return refuse(
                oom,
                tg__fail(call, TG_EXECUTION_NOT_STARTED, "INTERNAL", NULL,
                         "cannot verify the checksum of call '%s'", call->id));
        if (ok == 0) {
            const char *have = tg_call_checksum(call);
            tg__quote_buf q; /* what arrived is the caller's, of any length */
            return refuse(
                oom, tg__fail(call, TG_EXECUTION_NOT_STARTED,
                              "CHECKSUM_MISMATCH", NULL,
                              "checksum of call '%s' does not match its tool "
                              "and arguments: it arrived with %s, they hash "
                              "to %s",
                              call->id, tg__quote(&q, call->checksum_in),
                              have ? have : "(unknown)"));
        }
    }
    if (tool->schema != NULL) {
        int64_t steps = rt->cfg->max_validation_steps;
        tg__schema_budget b;
        tg__schema_budget_init(&b,
                               (uint64_t)(steps > 0 && steps < INLINE_STEPS
                                              ? steps
                                              : INLINE_STEPS),
                               NULL);
        tg_result *r = tg__check_schema(rt->cfg, call, tool, &b, oom);
        if (b.exhausted && !*oom && steps > INLINE_STEPS) {
            tg__result_free(r);
            return tg__schema_work_start(rt, job, oom);
        }
        if (r != NULL || *oom)
            return r;
    }
    /* Once a call's schema check went to the thread pool, the calls after
     * it finish their checks after it does, so an operator is asked in
     * call order (tg_runtime_run_turn). */
    if (job->run->defer_rest) {
        job->defer_rest = true;
        return NULL;
    }
    return tg__check_call_rest(rt, job, oom);
}

/* The checks after the policy: a command tool's templates, or that a
 * handler is there. */
static tg_result *check_after_policy(tg_runtime *rt, tg__job *job, bool *oom)
{
    if (job->tool->kind == TG_TOOL_KIND_COMMAND)
        return prepare_command(rt, job, oom);
    if (job->tool->kind == TG_TOOL_KIND_REMOTE)
        return NULL; /* its server has it */
    if (job->tool->fn == NULL)
        return refuse(
            oom, tg__fail(job->call, TG_EXECUTION_NOT_STARTED, "INTERNAL", NULL,
                          "tool '%s' has no handler", job->call->tool));
    return NULL;
}

tg_result *tg__check_call_rest(tg_runtime *rt, tg__job *job, bool *oom)
{
    tg_call *call = job->call;
    const tg__tool *tool = job->tool;
    *oom = false;
    if (call->context != NULL) {
        tg_result *r = check_context_env(call, tool, oom);
        if (r != NULL || *oom)
            return r;
    }
    if (policy_judges(rt)) {
        tg_result *r = check_policy(rt, job, "policy", true, oom);
        if (r != NULL || *oom || job->state == TG__JOB_ASKING)
            return r;
    }
    return check_after_policy(rt, job, oom);
}

tg_result *tg__check_answered(tg_runtime *rt, tg__job *job,
                              const tg__policy_verdict *v, tg_approval answer,
                              const char *detail, bool *oom)
{
    const tg_call *call = job->call;
    const char *approved_by = NULL;
    *oom = false;
    if (tg__approval_keep(rt, call, answer, &approved_by) != 0 ||
        record_verdict(job, "policy", v, approved_by, detail) != 0) {
        *oom = true;
        return NULL;
    }
    if (approved_by != NULL)
        return check_after_policy(rt, job, oom);
    tg__buf why;
    tg__buf_init(&why, 0);
    tg_result *r = NULL;
    if ((detail != NULL
             ? tg__buf_printf(&why,
                              "approval needed (%s) and the answer was no: %s",
                              v->reason, detail)
             : tg__buf_printf(&why,
                              "approval needed (%s) and the operator said no",
                              v->reason)) == 0)
        r = tg__result_denied(call, tg__buf_cstr(&why));
    tg__buf_cleanup(&why);
    return refuse(oom, r);
}

/* For hooks.c: a rewrite of the arguments by a before hook prepares the
 * command again. */
tg_result *tg__check_prepare_command(tg_runtime *rt, tg__job *job, bool *oom)
{
    *oom = false;
    return prepare_command(rt, job, oom);
}

/* For hooks.c: arguments a before hook rewrote are judged by the policy
 * again (an approval is bound to the arguments it saw); the verdict goes
 * into decisions.policy_after_rewrite. */
tg_result *tg__check_policy_again(tg_runtime *rt, tg__job *job, bool *oom)
{
    *oom = false;
    return policy_judges(rt)
               ? check_policy(rt, job, "policy_after_rewrite", false, oom)
               : NULL;
}
