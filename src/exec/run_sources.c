/* SPDX-License-Identifier: MIT */
/*
 * run_sources.c - a submitted turn that names tools of an MCP source whose
 * tools are not known yet waits for the source before its checks.
 *
 * tg_runtime_run_turn runs the loop until such a source is ready
 * (tg__rsrcs_prepare); a submitted turn is admitted from inside the loop
 * and must not run it, so it parks instead: one waiter on each source it
 * names that is starting (a lazy source's first contact, a source added
 * with tg_runtime_add_source, a server restarting after a crash, after
 * its backoff), and its checks begin once every one of them is ready or
 * failed. The sources bound the wait (connect_ms, the backoff); a cancel
 * by id or of everything reaches the parked calls meanwhile, as it does
 * calls waiting for schema checks on the pool; a source that failed makes
 * the calls `SOURCE_UNAVAILABLE`, saying why.
 */
#include <stdlib.h>
#include <string.h>

#include "remote.h"
#include "runtime.h"

/* One source a parked run waits for. */
typedef struct tg__srcwait {
    tg__rsource_waiter w; /* first: its callback gets this */
    tg__run *run;
    tg__rsrc *src;
} tg__srcwait;

/* Whether src is already among the first n waits. */
static bool waits_for(const tg__srcwait *ws, size_t n, const tg__rsrc *src)
{
    for (size_t i = 0; i < n; i++)
        if (ws[i].src == src)
            return true;
    return false;
}

/* The source of a call whose tool is not known and whose source is still
 * to list it (starting, or failed and waiting for its backoff), or NULL. */
static tg__rsrc *pending_source(tg_runtime *rt, const tg_call *call)
{
    if (call->tool == NULL || tg__registry_find(rt->reg, call->tool) != NULL)
        return NULL;
    tg__rsrc *s = tg__rsrcs_for(rt, call->tool);
    if (s == NULL)
        return NULL;
    tg__rsource_state st = tg__rsource_state_of(s->rs);
    return st == TG__RS_STARTING || st == TG__RS_FAILED ? s : NULL;
}

/* One source of run is ready or failed; after the last, its checks
 * begin. */
static void source_done(tg__run *run)
{
    if (--run->srcwaiting > 0)
        return;
    tg_result **replies = run->replies;
    run->replies = NULL;
    free(run->srcwaits);
    run->srcwaits = NULL;
    run->in_checks = false;
    tg__run_check(run, replies);
    free(replies);
}

static void on_source(tg__rsource_waiter *w, bool ok)
{
    (void)ok; /* a failed source's calls say why in their checks */
    source_done(((tg__srcwait *)w)->run);
}

bool tg__run_wait_sources(tg__run *run, tg_result **replies)
{
    tg_runtime *rt = run->rt;
    size_t n = 0;
    for (size_t i = 0; i < run->n; i++)
        if (pending_source(rt, run->jobs[i].call) != NULL)
            n++;
    if (n == 0)
        return false;
    tg__srcwait *ws = calloc(n, sizeof *ws);
    tg_result **copy = NULL;
    if (replies != NULL && (copy = malloc(run->n * sizeof *copy)) != NULL)
        memcpy(copy, replies, run->n * sizeof *copy);
    if (ws == NULL || (replies != NULL && copy == NULL)) {
        /* no memory to wait with: the calls say the source is starting */
        free(ws);
        free(copy);
        return false;
    }
    size_t k = 0;
    for (size_t i = 0; i < run->n; i++) {
        tg__rsrc *s = pending_source(rt, run->jobs[i].call);
        if (s == NULL || waits_for(ws, k, s))
            continue;
        ws[k].w.cb = on_source;
        ws[k].run = run;
        ws[k].src = s;
        k++;
    }
    run->srcwaits = ws;
    run->nsrcwaits = k;
    run->srcwaiting = k + 1; /* one more for the linking below */
    run->replies = copy;
    /* its calls are cancellable by id, and by a cancel of everything,
     * while they wait (scheduler.c: cancel_checking) */
    run->in_checks = true;
    for (size_t i = 0; i < run->n; i++)
        tg__hash_add(rt, &run->jobs[i]);
    /* a waiter may be released at once (a source failing to start): the
     * count holds one more until every waiter is linked */
    for (size_t i = 0; i < k; i++)
        tg__rsource_wait(ws[i].src->rs, &ws[i].w);
    source_done(run);
    return true;
}

void tg__run_unwait_sources(tg__run *run)
{
    if (run->srcwaits == NULL)
        return;
    for (size_t i = 0; i < run->nsrcwaits; i++)
        tg__rsource_unwait(run->srcwaits[i].src->rs, &run->srcwaits[i].w);
    free(run->srcwaits);
    run->srcwaits = NULL;
    for (size_t i = 0; run->replies != NULL && i < run->n; i++)
        tg__result_free(run->replies[i]);
    free(run->replies);
    run->replies = NULL;
}
