/* SPDX-License-Identifier: MIT */
/*
 * shape.c - a successful tool's output made into what its tool declares
 * (README, "Structured and media results"): with `"output": "json"` (or an
 * `output_schema`) stdout is one JSON value, which becomes the payload; with
 * an `output_schema` that value is checked against the schema; with
 * `"output": "mcp-content"` stdout is a JSON array of MCP content blocks,
 * checked (content_check.c), and the payload is {"content": [...]}, the
 * same array being the result's `content` that renderers draw from.
 *
 * Output that does not hold to the declaration is the tool's failure, and
 * the tool ran to its end: MALFORMED_OUTPUT (not JSON), BAD_CONTENT (not
 * content blocks), INVALID_OUTPUT (against the output schema), each with
 * what the tool printed in `details.stdout`, execution `finished`.
 *
 * The schema check has the cost bound of the argument check: a slice of
 * limits.max_validation_steps on the loop thread, which real outputs never
 * use up; an output that needs more is checked on libuv's thread pool with
 * the whole budget, its call still holding its slot, and past the budget
 * it ends SCHEMA_TOO_COSTLY.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "format.h"
#include "schema.h"
#include "shape.h"
#include "text.h"

/* The steps checked on the loop thread before the pool takes over (as for
 * arguments, check.c). */
#define INLINE_STEPS 32768

/* n (may be NULL) takes r's place: r's exit status, duration and artifact
 * carried over, and to a success r's content blocks (a remote tool's,
 * beside its structured value), r freed. Returns n. */
static tg_result *replace(tg_result *r, tg_result *n)
{
    if (n != NULL) {
        n->exit_status = r->exit_status;
        n->duration_ms = r->duration_ms;
        n->artifact = r->artifact;
        r->artifact = NULL;
        if (n->outcome == TG_OUTCOME_SUCCESS && n->content == NULL) {
            n->content = r->content;
            r->content = NULL;
        }
    }
    tg__result_free(r);
    return n;
}

/* The success replacing r (taken) with `payload_take` (NULL: out of
 * memory). NULL on out of memory. */
static tg_result *success_with(const tg_call *call, tg_result *r,
                               json_t *payload_take)
{
    return replace(r, payload_take ? tg__result_success(call, payload_take)
                                   : NULL);
}

/* A failure of the output (taken: r) with `details_take` (an object, or
 * NULL for a new one) given what the tool printed (`out`, a string, or
 * NULL: r's payload) as "stdout". NULL on OOM. */
static tg_result *output_failed(const tg_call *call, tg_result *r,
                                const json_t *out, const char *code,
                                json_t *details_take, const char *message)
{
    json_t *d = details_take ? details_take : json_object(); /* new ref */
    if (out == NULL)
        out = tg__result_payload(r); /* borrowed */
    tg_result *n = NULL;
    if (d != NULL && out != NULL &&
        json_object_set(d, "stdout", (json_t *)out) == 0) {
        n = tg__fail(call, TG_EXECUTION_FINISHED, code, d, "%s", message);
        d = NULL;
    }
    json_decref(d);
    return replace(r, n);
}

/* `"output": "mcp-content"`: the blocks checked and made the payload. A
 * spooled output (past spool.inline_max_bytes) is not read back: its
 * handle, as one text block, is the content, and the artifact keeps the
 * tool's JSON whole. */
static tg_result *content_result(const tg_call *call, tg_result *r)
{
    const json_t *text = tg__result_payload(r); /* borrowed */
    json_t *blocks = NULL;                      /* new ref */
    tg_error e = {0};
    int rc;
    if (text == NULL)
        rc = TG_ENOMEM;
    else if (r->artifact != NULL)
        rc = (blocks = json_pack("[{s:s,s:O}]", "type", "text", "text",
                                 (json_t *)text)) != NULL
                 ? 0
                 : TG_ENOMEM;
    else
        rc = tg__content_parse(json_string_value(text),
                               json_string_length(text), &blocks, &e);
    if (rc == TG_EPARSE) {
        char msg[1024];
        snprintf(
            msg, sizeof msg,
            "the output of tool '%.128s' is not MCP content (its \"output\" "
            "is \"mcp-content\": a JSON array of content blocks): %s",
            call->tool, e.message);
        return output_failed(call, r, NULL, "BAD_CONTENT",
                             json_pack("{s:s}", "path", e.pointer), msg);
    }
    if (rc != 0) {
        tg__result_free(r);
        return NULL;
    }
    tg_result *n = success_with(call, r, json_pack("{s:O}", "content", blocks));
    if (n != NULL) {
        json_decref(n->content);
        n->content = json_incref(blocks);
    }
    json_decref(blocks);
    return n;
}

/* An output schema check on the pool. */
typedef struct shape_work {
    uv_work_t req;
    const tg__tool *tool;
    const tg_call *call;
    void (*done)(void *ctx, tg_result *r);
    void *ctx;
    tg_result *r;    /* the success, its payload the value checked */
    json_t *value;   /* borrowed from r */
    json_t *printed; /* the text it was parsed from (new ref) */
    tg__schema_budget budget;
    tg__schema_report rep;
    tg_error e;
    int rc;
} shape_work;

/* The result of checking r's value (rc from the validator, rep its
 * violations when rc == 0; printed: the tool's text). Takes r. */
static tg_result *verdict(const tg_call *call, tg_result *r,
                          const json_t *printed, int rc,
                          const tg__schema_report *rep,
                          const tg__schema_budget *b, const tg_error *e)
{
    if (rc == 1) {
        /* recorded with the result, so a replay of it is structured too */
        if (r->decisions == NULL)
            r->decisions = json_object();
        if (r->decisions == NULL ||
            json_object_set_new(r->decisions, "output_schema",
                                json_string("valid")) != 0) {
            tg__result_free(r);
            return NULL;
        }
        return r;
    }
    if (rc == TG_ENOMEM) {
        tg__result_free(r);
        return NULL;
    }
    char msg[1200];
    json_t *details = NULL; /* new ref */
    const char *code = "INVALID_OUTPUT";
    if (rc == 0) {
        char *v = tg__schema_report_message(rep);
        details =
            json_pack("{s:o}", "violations", tg__schema_report_details(rep));
        snprintf(
            msg, sizeof msg,
            "the output of tool '%.128s' does not match its output_schema: "
            "%s",
            call->tool, v ? v : "(no message)");
        free(v);
        if (details == NULL) {
            tg__result_free(r);
            return NULL;
        }
    } else if (rc == TG_ELIMIT) {
        code = "SCHEMA_TOO_COSTLY";
        if (b->exhausted)
            snprintf(
                msg, sizeof msg,
                "the output of tool '%.128s' is too costly to check against "
                "its output_schema: checking it needs more than %llu "
                "validation steps (limits.max_validation_steps)",
                call->tool, (unsigned long long)b->limit);
        else
            snprintf(
                msg, sizeof msg,
                "the output of tool '%.128s' is too costly to check against "
                "its output_schema: %s",
                call->tool, e->message);
    } else {
        code = "INTERNAL";
        snprintf(msg, sizeof msg,
                 "cannot check the output of tool '%.128s' against its "
                 "output_schema: %s",
                 call->tool, e->message);
    }
    return output_failed(call, r, printed, code, details, msg);
}

/* Verdict first (nothing allocated for plain schemas), then the report of
 * an output that fails, from the same budget. */
static int validate(const tg_schema *s, const json_t *value,
                    tg__schema_report *rep, tg__schema_budget *b, tg_error *e)
{
    int rc = tg__schema_validate_json_in(s, value, NULL, b, e);
    if (rc == 0)
        rc = tg__schema_validate_json_in(s, value, rep, b, e);
    return rc;
}

static void on_work(uv_work_t *req)
{
    shape_work *w = req->data;
    w->rc = validate(w->tool->out_schema, w->value, &w->rep, &w->budget, &w->e);
}

static void on_work_done(uv_work_t *req, int status)
{
    (void)status; /* work is never canceled through libuv */
    shape_work *w = req->data;
    tg_result *r =
        verdict(w->call, w->r, w->printed, w->rc, &w->rep, &w->budget, &w->e);
    void (*done)(void *, tg_result *) = w->done;
    void *ctx = w->ctx;
    tg__schema_report_cleanup(&w->rep);
    json_decref(w->printed);
    free(w);
    done(ctx, r);
}

/* Starts the whole check of r's value on the pool; 0, or a libuv code
 * (nothing started). */
static int start_work(const tg__source_env *env, const tg_call *call,
                      const tg__tool *tool, tg_result *r, json_t *value,
                      json_t *printed, void (*done)(void *, tg_result *),
                      void *ctx)
{
    shape_work *w = calloc(1, sizeof *w);
    if (w == NULL)
        return UV_ENOMEM;
    w->call = call;
    w->tool = tool;
    w->done = done;
    w->ctx = ctx;
    w->r = r;
    w->value = value;
    w->printed = json_incref(printed);
    w->req.data = w;
    tg__schema_budget_init(&w->budget, (uint64_t)env->cfg->max_validation_steps,
                           NULL);
    int rc = uv_queue_work(env->loop, &w->req, on_work, on_work_done);
    if (rc != 0) {
        json_decref(w->printed);
        free(w);
        return rc;
    }
    return 0;
}

/* `"output": "json"` (and `output_schema`): stdout parsed as one JSON
 * value, then checked. Returns the result, or NULL with *started when the
 * check went to the pool (which calls done). */
static tg_result *json_result(const tg__source_env *env, const tg_call *call,
                              const tg__tool *tool, tg_result *r,
                              void (*done)(void *, tg_result *), void *ctx,
                              bool *started)
{
    const json_t *text = tg__result_payload(r); /* borrowed */
    char msg[1024];
    if (text == NULL) {
        tg__result_free(r);
        return NULL;
    }
    if (r->artifact != NULL) {
        /* Past the inline limit the output is an artifact and its handle;
         * a structured result must be there whole, for the schema. */
        if (tool->out_schema == NULL)
            return r;
        snprintf(msg, sizeof msg,
                 "the output of tool '%.128s' is over spool.inline_max_bytes "
                 "(%lld bytes), so it cannot be its structured result; it is "
                 "kept as an artifact",
                 call->tool, (long long)env->cfg->inline_max_bytes);
        return output_failed(call, r, NULL, "INVALID_OUTPUT", NULL, msg);
    }
    json_error_t jerr;
    json_t *value =
        json_loadb(json_string_value(text), json_string_length(text),
                   JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr); /* new */
    if (value == NULL) {
        if (json_error_code(&jerr) == json_error_out_of_memory) {
            tg__result_free(r);
            return NULL;
        }
        snprintf(
            msg, sizeof msg,
            "the output of tool '%.128s' is not JSON (its output is declared "
            "JSON): %s at line %d, column %d",
            call->tool, jerr.text, jerr.line, jerr.column);
        return output_failed(call, r, NULL, "MALFORMED_OUTPUT", NULL, msg);
    }
    json_t *printed = json_incref((json_t *)text); /* new ref */
    r = success_with(call, r, value);
    if (r == NULL || tool->out_schema == NULL) {
        json_decref(printed);
        return r;
    }
    int64_t steps = env->cfg->max_validation_steps;
    tg__schema_budget b;
    tg__schema_report rep = {0};
    tg_error e = {0};
    tg__schema_budget_init(
        &b,
        (uint64_t)(steps > 0 && steps < INLINE_STEPS ? steps : INLINE_STEPS),
        NULL);
    json_t *v = tg__result_payload(r); /* borrowed */
    int rc = validate(tool->out_schema, v, &rep, &b, &e);
    if (rc == TG_ELIMIT && b.exhausted && steps > INLINE_STEPS &&
        start_work(env, call, tool, r, v, printed, done, ctx) == 0) {
        tg__schema_report_cleanup(&rep);
        json_decref(printed);
        *started = true;
        return NULL;
    }
    r = verdict(call, r, printed, rc, &rep, &b, &e);
    tg__schema_report_cleanup(&rep);
    json_decref(printed);
    return r;
}

void tg__shape(const tg__source_env *env, const tg_call *call,
               const tg__tool *tool, tg_result *r,
               void (*done)(void *ctx, tg_result *r), void *ctx)
{
    bool started = false;
    if (r != NULL && r->outcome == TG_OUTCOME_SUCCESS) {
        if (tool->output == TG_TOOL_OUTPUT_CONTENT)
            r = content_result(call, r);
        else if (tool->output == TG_TOOL_OUTPUT_JSON)
            r = json_result(env, call, tool, r, done, ctx, &started);
    }
    if (!started)
        done(ctx, r);
}
