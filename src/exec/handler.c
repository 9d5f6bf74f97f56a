/* SPDX-License-Identifier: MIT */
/*
 * handler.c - in-process tools: the tg_handler_ctx a handler reports through
 * (the public tg_handler_* functions), and the two ways a handler runs:
 * inline on the loop thread (TG_TOOL_INLINE: no timer, no allocation beyond
 * the result) or on libuv's thread pool under the call's deadline.
 *
 * A pool handler that outlives its deadline or is canceled keeps running in
 * the background (C code cannot be interrupted safely): its call ends at
 * once, the handler sees tg_handler_canceled() == 1, and what it produces is
 * dropped. It owns copies of everything it reads, so the turn may be freed
 * meanwhile; tg_runtime_free waits for it.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "runtime.h"
#include "timeutil.h"

/* ------------------------------------------------------------ public API */

int tg_handler_write(tg_handler_ctx *ctx, const char *data, size_t len)
{
    if (ctx == NULL || (data == NULL && len > 0))
        return TG_EINVAL;
    return tg__buf_append(&ctx->out, data, len);
}

static void json_text_clear(tg_handler_ctx *c)
{
    if (c->json_text != c->json_small)
        free(c->json_text);
    c->json_text = NULL;
    c->json_text_len = 0;
}

int tg_handler_set_json(tg_handler_ctx *ctx, const char *json, size_t len)
{
    if (ctx == NULL || json == NULL)
        return TG_EINVAL;
    /* The tape parser accepts what jansson does, several times faster for
     * the small documents handlers return, and with their tokens on the
     * stack. A text that is its value's compact form already is kept as
     * the payload, and no jansson value is built: rendering needs the text,
     * not the value. */
    tg_jtok small[32];
    tg_jtape tape;
    int rc = tg__jtape_parse_in(json, len, small, 32, &tape, NULL);
    if (rc != 0)
        return rc == TG_ENOMEM ? TG_ENOMEM : TG_EINVAL;
    json_t *v = NULL; /* new ref */
    char *t = NULL;
    if (tg__jtape_is_dump_form(&tape))
        t = len < sizeof ctx->json_small ? ctx->json_small : malloc(len + 1);
    if (t == NULL)
        v = tg__jtape_to_json(&tape, 0);
    tg__jtape_free(&tape);
    if (t == NULL && v == NULL)
        return TG_ENOMEM;
    json_decref(ctx->json);
    ctx->json = v;
    json_text_clear(ctx);
    if (t != NULL) {
        memcpy(t, json, len);
        t[len] = '\0';
        ctx->json_text = t;
        ctx->json_text_len = len;
    }
    return 0;
}

/* Error codes are UPPER_SNAKE; anything else becomes TOOL_FAILED so the
 * payload convention holds whatever a handler passes. */
static bool upper_snake(const char *s)
{
    if (s == NULL || *s < 'A' || *s > 'Z')
        return false;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

int tg_handler_fail(tg_handler_ctx *ctx, const char *code, const char *message)
{
    if (ctx == NULL)
        return TG_EINVAL;
    ctx->failed = true;
    const char *c = upper_snake(code) && strlen(code) < sizeof ctx->fail_code
                        ? code
                        : "TOOL_FAILED";
    memcpy(ctx->fail_code, c, strlen(c) + 1);
    return tg__strset(&ctx->fail_message, message);
}

int tg_handler_deny(tg_handler_ctx *ctx, const char *reason)
{
    if (ctx == NULL)
        return TG_EINVAL;
    ctx->denied = true;
    return tg__strset(&ctx->fail_message, reason);
}

int tg_handler_canceled(const tg_handler_ctx *ctx)
{
    return ctx != NULL &&
           atomic_load_explicit(&((tg_handler_ctx *)ctx)->canceled,
                                memory_order_relaxed) != 0;
}

const tg_call *tg_handler_call(const tg_handler_ctx *ctx)
{
    return ctx ? ctx->call : NULL;
}

const char *tg_handler_cwd(const tg_handler_ctx *ctx)
{
    return ctx ? ctx->cwd : NULL;
}

const char *tg_handler_workspace(const tg_handler_ctx *ctx)
{
    return ctx ? ctx->workspace : NULL;
}

const char *const *tg_handler_state_paths(const tg_handler_ctx *ctx)
{
    static const char *const none[] = {NULL};
    return ctx && ctx->state ? ctx->state : none;
}

/* ------------------------------------------------------------ shared */

static void ctx_init(tg_handler_ctx *c, const tg_runtime *rt,
                     const tg_call *call, const char *cwd)
{
    int64_t cap = rt->cfg->max_output_bytes;
    c->call = call;
    c->cwd = cwd;
    c->workspace = rt->cfg->workspace;
    c->state = (const char *const *)rt->state.refuse;
    tg__buf_init(&c->out, cap > 0 ? (size_t)cap : 0);
    c->json = NULL;
    c->json_text = NULL;
    c->json_text_len = 0;
    c->failed = false;
    c->denied = false;
    c->fail_code[0] = '\0';
    c->fail_message = NULL;
    atomic_init(&c->canceled, 0);
}

static void ctx_cleanup(tg_handler_ctx *c)
{
    tg__buf_cleanup(&c->out);
    json_decref(c->json);
    c->json = NULL;
    json_text_clear(c);
    free(c->fail_message);
    c->fail_message = NULL;
}

/* The outcome of a handler that returned rc (see toolgate.h). */
/* Text output past spool.inline_max_bytes (or any, for a call with
 * `inline: false`) goes to the artifact store like a command's stdout. */
static tg_result *spooled_text(tg_runtime *rt, const tg_call *call,
                               const tg_buf *out)
{
    tg__output o;
    if (tg__output_init(&o, rt, call) != 0)
        return tg__fail(call, TG_EXECUTION_FINISHED, "SPOOL_FAILED", NULL,
                        "the tool's output could not be kept: %s", o.e.message);
    (void)tg__output_write(&o, out->data, out->len); /* errors are sticky */
    return tg__output_finish(&o, call, NULL);
}

static tg_result *handler_result(tg_runtime *rt, const tg_call *call,
                                 tg_handler_ctx *c, int rc)
{
    if (c->denied)
        return tg__result_denied(call, c->fail_message ? c->fail_message
                                                       : "the tool refused");
    if (c->failed)
        return tg__fail(call, TG_EXECUTION_FINISHED, c->fail_code, NULL, "%s",
                        c->fail_message ? c->fail_message : "the tool failed");
    if (rc != 0)
        return tg__fail(call, TG_EXECUTION_FINISHED, "TOOL_FAILED", NULL,
                        "handler returned %d", rc);
    if (c->out.truncated)
        return tg__fail(call, TG_EXECUTION_FINISHED, "OUTPUT_LIMIT", NULL,
                        "the tool's output exceeded %zu bytes "
                        "(limits.max_output_bytes)",
                        c->out.limit);
    if (c->json_text != NULL)
        return tg__result_success_text(call, c->json_text, c->json_text_len);
    if (c->json != NULL) {
        json_t *j = c->json; /* new ref, moved into the result */
        c->json = NULL;
        return tg__result_success(call, j);
    }
    if (c->out.len > 0 && rt->spool != NULL && !call->from_artifact_tool &&
        (c->out.len > (uint64_t)rt->cfg->inline_max_bytes ||
         !call->inline_output))
        return spooled_text(rt, call, &c->out);
    if (c->out.len > 0)
        return tg__result_success(call, tg__json_text(c->out.data, c->out.len));
    return tg__result_success(call, json_null());
}

static double elapsed_ms(uint64_t start_ns)
{
    return (double)(tg__mono_ns() - start_ns) / 1e6;
}

/* ------------------------------------------------------------ inline */

void tg__handler_run_inline(tg_runtime *rt, tg__job *job)
{
    tg_handler_ctx ctx;
    char *cwd_owned = NULL;
    const char *cwd;
    size_t alen;
    const char *args = tg__call_args_text(job->call, &alen);
    if (args == NULL || tg__call_cwd(rt, job->call, &cwd, &cwd_owned) != 0) {
        tg__job_complete(job, NULL);
        return;
    }
    ctx_init(&ctx, rt, job->call, cwd);
    int rc = job->tool->fn(&ctx, args, alen, job->tool->user_data);
    if (ctx.out.len > 0)
        tg__emit_output(rt, job, 1, ctx.out.data, ctx.out.len);
    tg_result *r = handler_result(rt, job->call, &ctx, rc);
    if (r != NULL)
        r->duration_ms = elapsed_ms(job->start_ns);
    ctx_cleanup(&ctx);
    free(cwd_owned);
    tg__job_complete(job, r);
}

/* ------------------------------------------------------------ thread pool */

struct tg__pool {
    tg_runtime *rt;
    tg__job *job; /* NULL once the call has its result */
    const tg_tool *tool;
    uv_work_t work;
    uv_timer_t timer;
    int rc;
    int64_t budget_ms;
    tg_call *call; /* private copy: the turn may be gone before we are;
                      the handler reads its arguments text */
    char *cwd;
    tg_handler_ctx ctx;
};

/* A copy of what a handler can read through the public call getters. */
static tg_call *call_clone(const tg_call *c)
{
    tg_call *n = tg__call_new(c->id, c->tool, c->format);
    if (n == NULL)
        return NULL;
    n->index = c->index;
    n->created_at = c->created_at;
    n->updated_at = c->updated_at;
    n->inline_output = c->inline_output;
    n->from_artifact_tool = c->from_artifact_tool;
    n->hmac_key = c->hmac_key;
    n->hmac_key_len = c->hmac_key_len;
    if (tg__call_copy_args(n, c) != 0 ||
        tg__strset(&n->caller_id, c->caller_id) != 0 ||
        tg__strset(&n->checksum_in, c->checksum_in) != 0)
        goto fail;
    /* After the arguments: setting them clears the checksum. */
    memcpy(n->checksum, c->checksum, sizeof n->checksum);
    if (c->context && (n->context = json_deep_copy(c->context)) == NULL)
        goto fail;
    if (c->skills && (n->skills = json_deep_copy(c->skills)) == NULL)
        goto fail;
    return n;
fail:
    tg__call_free(n);
    return NULL;
}

static void pool_free(tg__pool *p)
{
    tg_runtime *rt = p->rt;
    ctx_cleanup(&p->ctx);
    tg__call_free(p->call);
    free(p->cwd);
    free(p);
    rt->open_pools--;
}

static void on_pool_timer_close(uv_handle_t *h)
{
    pool_free(h->data);
}

static void pool_detach(tg__pool *p, tg_result *r)
{
    tg__job *job = p->job;
    if (r != NULL)
        r->duration_ms = elapsed_ms(job->start_ns);
    p->job = NULL;
    job->pool = NULL;
    atomic_store(&p->ctx.canceled, 1);
    uv_timer_stop(&p->timer);
    tg__job_complete(job, r);
}

static void on_work(uv_work_t *w)
{
    tg__pool *p = w->data;
    p->rc = p->tool->fn(&p->ctx, p->call->args_text, p->call->args_len,
                        p->tool->user_data);
}

static void on_after_work(uv_work_t *w, int status)
{
    tg__pool *p = w->data;
    p->rt->pending_work--;
    if (p->job != NULL) {
        tg__job *job = p->job;
        uv_timer_stop(&p->timer);
        if (p->ctx.out.len > 0)
            tg__emit_output(p->rt, job, 1, p->ctx.out.data, p->ctx.out.len);
        tg_result *r = handler_result(p->rt, job->call, &p->ctx, p->rc);
        p->job = NULL;
        job->pool = NULL;
        if (r != NULL)
            r->duration_ms = elapsed_ms(job->start_ns);
        tg__job_complete(job, r);
    }
    uv_close((uv_handle_t *)&p->timer, on_pool_timer_close);
}

static void on_pool_deadline(uv_timer_t *t)
{
    tg__pool *p = t->data;
    if (p->job != NULL)
        pool_detach(p, tg__result_timeout(p->job->call, p->budget_ms));
}

void tg__handler_cancel(tg__pool *p, const char *by, const char *reason)
{
    if (p->job != NULL)
        pool_detach(p, tg__result_canceled(p->job->call, TG_EXECUTION_STARTED,
                                           by, reason));
}

void tg__handler_start_pool(tg_runtime *rt, tg__job *job)
{
    char *cwd_owned = NULL;
    const char *cwd;
    tg__pool *p = calloc(1, sizeof *p);
    if (p == NULL || job->call->args_text == NULL ||
        tg__call_cwd(rt, job->call, &cwd, &cwd_owned) != 0)
        goto fail;
    p->rt = rt;
    p->tool = job->tool;
    p->budget_ms = tg__budget_ms(rt, job->tool);
    p->call = call_clone(job->call);
    p->cwd = cwd_owned ? cwd_owned : (cwd ? strdup(cwd) : NULL);
    cwd_owned = NULL;
    if (p->call == NULL || p->call->args_text == NULL ||
        (cwd != NULL && p->cwd == NULL))
        goto fail;
    ctx_init(&p->ctx, rt, p->call, p->cwd);
    p->work.data = p;
    if (uv_queue_work(&rt->loop, &p->work, on_work, on_after_work) != 0)
        goto fail;
    rt->pending_work++;
    rt->open_pools++;
    uv_timer_init(&rt->loop, &p->timer);
    p->timer.data = p;
    p->job = job;
    job->pool = p;
    if (p->budget_ms > 0) {
        uv_update_time(&rt->loop); /* count the budget from now, see arm() */
        uv_timer_start(&p->timer, on_pool_deadline, (uint64_t)p->budget_ms, 0);
    }
    return;
fail:
    free(cwd_owned);
    if (p != NULL) {
        tg__call_free(p->call);
        free(p->cwd);
        free(p);
    }
    tg__job_complete(job, NULL);
}
