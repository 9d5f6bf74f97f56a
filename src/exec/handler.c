/* SPDX-License-Identifier: MIT */
/*
 * handler.c - the sources of in-process tools (source.h): a handler runs
 * inline on the loop thread (TG_TOOL_INLINE: no timer, no allocation beyond
 * the result, no slot) or on libuv's thread pool under the call's deadline.
 * The handler reports through a tg_handler_ctx (registry/handler_ctx.c);
 * what it reported becomes the call's result here.
 *
 * A pool handler that outlives its deadline or is canceled keeps running in
 * the background (C code cannot be interrupted safely): its call ends at
 * once, the handler sees tg_handler_canceled() == 1, and what it produces is
 * dropped. It owns copies of everything it reads, so the turn may be freed
 * meanwhile; tg_runtime_free waits for it (the loop runs until the work
 * returned).
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "handler_ctx.h"
#include "output.h"
#include "source.h"
#include "text.h"
#include "timeutil.h"

/* The context a handler of a call in cwd reports through. */
static void ctx_init(tg_handler_ctx *c, const tg__source_env *env,
                     const tg_call *call, const char *cwd)
{
    int64_t cap = env->cfg->max_output_bytes;
    tg__handler_ctx_init(c, call, cwd, env->cfg->workspace, env->state_paths,
                         cap > 0 ? (size_t)cap : 0);
}

/* Text output past spool.inline_max_bytes (or any, for a call with
 * `inline: false`) goes to the artifact store like a command's stdout. */
static tg_result *spooled_text(const tg__source_env *env, const tg_call *call,
                               const tg__buf *out)
{
    tg__output o;
    if (tg__output_init(&o, env->cfg, env->spool, call) != 0)
        return tg__fail(call, TG_EXECUTION_FINISHED, "SPOOL_FAILED", NULL,
                        "the tool's output could not be kept: %s", o.e.message);
    (void)tg__output_write(&o, out->data, out->len); /* errors are sticky */
    return tg__output_finish(&o, call, NULL);
}

/* The outcome of a handler that returned rc (see toolgate.h). */
static tg_result *handler_result(const tg__source_env *env, const tg_call *call,
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
    if (c->out.len > 0 && env->spool != NULL && !call->from_artifact_tool &&
        (c->out.len > (uint64_t)env->cfg->inline_max_bytes ||
         !call->inline_output))
        return spooled_text(env, call, &c->out);
    if (c->out.len > 0)
        return tg__result_success(call, tg__json_text(c->out.data, c->out.len));
    return tg__result_success(call, json_null());
}

static double elapsed_ms(uint64_t start_ns)
{
    return (double)(tg__mono_ns() - start_ns) / 1e6;
}

/* ------------------------------------------------------------ inline */

static void inline_start(const tg__source_call *c, void **state)
{
    (void)state; /* it ends before it returns: nothing to cancel */
    tg_handler_ctx ctx;
    char *cwd_owned = NULL;
    const char *cwd;
    size_t alen;
    const char *args = tg__call_args_text(c->call, &alen);
    if (args == NULL ||
        tg__call_cwd(c->env->cfg, c->call, &cwd, &cwd_owned) != 0) {
        c->sink.done(c->sink.ctx, NULL);
        return;
    }
    ctx_init(&ctx, c->env, c->call, cwd);
    int rc = c->tool->fn(&ctx, args, alen, c->tool->user_data);
    if (ctx.out.len > 0)
        c->sink.output(c->sink.ctx, 1, ctx.out.data, ctx.out.len);
    tg_result *r = handler_result(c->env, c->call, &ctx, rc);
    if (r != NULL)
        r->duration_ms = elapsed_ms(c->start_ns);
    tg__handler_ctx_cleanup(&ctx);
    free(cwd_owned);
    c->sink.done(c->sink.ctx, r);
}

static void inline_cancel(void *state, const char *by, const char *reason,
                          bool hard)
{
    /* never called: an inline call has no state (TG__SOURCE_INLINE) */
    (void)state, (void)by, (void)reason, (void)hard;
}

const tg__source_ops tg__handler_inline_source = {
    .name = "handler-inline",
    .flags = TG__SOURCE_INLINE,
    .start = inline_start,
    .cancel = inline_cancel,
};

/* ------------------------------------------------------------ thread pool */

typedef struct tg__pool {
    const tg__source_env *env;
    /* the call, borrowed from the scheduler until done */
    bool live; /* false once the call has its result (done was called) */
    const tg_call *orig;
    uint64_t start_ns;
    tg__source_sink sink;
    const tg__tool *tool;
    uv_work_t work;
    uv_timer_t timer;
    int rc;
    int64_t budget_ms;
    tg_call *call; /* private copy: the turn may be gone before we are;
                      the handler reads its arguments text */
    char *cwd;
    tg_handler_ctx ctx;
} tg__pool;

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
    tg__handler_ctx_cleanup(&p->ctx);
    tg__call_free(p->call);
    free(p->cwd);
    free(p);
}

static void on_pool_timer_close(uv_handle_t *h)
{
    pool_free(h->data);
}

/* Ends the call now with r (taken); the handler runs on to its end in the
 * background, told it is canceled, and nothing more is reported. */
static void pool_detach(tg__pool *p, tg_result *r)
{
    if (r != NULL)
        r->duration_ms = elapsed_ms(p->start_ns);
    p->live = false;
    atomic_store(&p->ctx.canceled, 1);
    uv_timer_stop(&p->timer);
    p->sink.done(p->sink.ctx, r);
}

static void on_work(uv_work_t *w)
{
    tg__pool *p = w->data;
    p->rc = p->tool->fn(&p->ctx, p->call->args_text, p->call->args_len,
                        p->tool->user_data);
}

static void on_after_work(uv_work_t *w, int status)
{
    (void)status; /* work is never canceled through libuv */
    tg__pool *p = w->data;
    if (p->live) {
        uv_timer_stop(&p->timer);
        if (p->ctx.out.len > 0)
            p->sink.output(p->sink.ctx, 1, p->ctx.out.data, p->ctx.out.len);
        tg_result *r = handler_result(p->env, p->orig, &p->ctx, p->rc);
        p->live = false;
        if (r != NULL)
            r->duration_ms = elapsed_ms(p->start_ns);
        p->sink.done(p->sink.ctx, r);
    }
    uv_close((uv_handle_t *)&p->timer, on_pool_timer_close);
}

static void on_pool_deadline(uv_timer_t *t)
{
    tg__pool *p = t->data;
    if (p->live)
        pool_detach(p, tg__result_timeout(p->orig, p->budget_ms));
}

/* The source's cancel (source.h): ends the call now (canceled, execution
 * started); the work item finishes in the background. A handler cannot be
 * stopped harder than that. */
static void pool_cancel(void *state, const char *by, const char *reason,
                        bool hard)
{
    tg__pool *p = state;
    (void)hard;
    if (p->live)
        pool_detach(
            p, tg__result_canceled(p->orig, TG_EXECUTION_STARTED, by, reason));
}

/* The source's start (source.h): the handler is queued on the pool. */
static void pool_start(const tg__source_call *c, void **state)
{
    const tg__source_env *env = c->env;
    char *cwd_owned = NULL;
    const char *cwd;
    tg__pool *p = calloc(1, sizeof *p);
    if (p == NULL || c->call->args_text == NULL ||
        tg__call_cwd(env->cfg, c->call, &cwd, &cwd_owned) != 0)
        goto fail;
    p->env = env;
    p->orig = c->call;
    p->start_ns = c->start_ns;
    p->sink = c->sink;
    p->tool = c->tool;
    p->budget_ms = c->budget_ms;
    p->call = call_clone(c->call);
    p->cwd = cwd_owned ? cwd_owned : (cwd ? strdup(cwd) : NULL);
    cwd_owned = NULL;
    if (p->call == NULL || p->call->args_text == NULL ||
        (cwd != NULL && p->cwd == NULL))
        goto fail;
    ctx_init(&p->ctx, env, p->call, p->cwd);
    p->work.data = p;
    if (uv_queue_work(env->loop, &p->work, on_work, on_after_work) != 0)
        goto fail;
    uv_timer_init(env->loop, &p->timer);
    p->timer.data = p;
    p->live = true;
    *state = p;
    if (p->budget_ms > 0) {
        uv_update_time(env->loop); /* count the budget from now */
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
    c->sink.done(c->sink.ctx, NULL);
}

const tg__source_ops tg__handler_pool_source = {
    .name = "handler",
    .flags = 0,
    .start = pool_start,
    .cancel = pool_cancel,
};
