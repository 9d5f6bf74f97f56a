/* SPDX-License-Identifier: MIT */
/*
 * ask.c - a policy `ask` put to a person asynchronously (tg_runtime_set_ask):
 * an MCP client's user, a chat, a web page, anyone who answers later and
 * from another thread. The synchronous approver (approval.c) is called
 * while the turn's calls are checked and may block; an asker is handed a
 * tg_ask and returns at once, and the call waits in TG__JOB_ASKING, holding
 * no parallel slot, while the other calls run. tg_ask_answer queues the
 * answer to the loop (under the runtime's mutex, woken by its async handle,
 * as tg_runtime_cancel does); the loop keeps the answer like the approver's
 * (bound to the checksum, or the tool for ALWAYS), finishes the checks and
 * starts or queues the call, or ends it denied.
 *
 * Who frees an ask, and how its answer reaches the loop: handoff.c (an
 * ask is one kind of handoff; an elicitation is the other).
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "runtime.h"

struct tg_ask {
    tg__handoff h;      /* first: the runtime's and the asker's holds */
    tg_approval answer; /* under h.mu, set by the answer */
    char *detail;       /* the answer's, valid UTF-8, or NULL */
    char *call_id;      /* tg_ask_call_id */
    /* loop thread only */
    tg__job *job; /* the waiting job, NULL once it ended */
    tg__policy_verdict verdict;
};

static void ask_destroy(tg__handoff *h)
{
    tg_ask *ask = (tg_ask *)h;
    free(ask->detail);
    free(ask->call_id);
    free(ask);
}

static void ask_apply(tg_runtime *rt, tg__handoff *h);
static void ask_detach(tg_runtime *rt, tg__handoff *h);

static const tg__handoff_ops ask_ops = {ask_apply, ask_detach, ask_destroy};

void tg_runtime_set_ask(tg_runtime *rt, tg_ask_fn fn, void *ud)
{
    if (rt == NULL)
        return;
    rt->ask_fn = fn;
    rt->ask_ud = ud;
}

int tg__ask_start(tg_runtime *rt, tg__job *job, const tg__policy_verdict *v)
{
    tg_ask *ask = calloc(1, sizeof *ask);
    if (ask == NULL)
        return TG_ENOMEM;
    if ((ask->call_id = strdup(job->call->id)) == NULL ||
        tg__handoff_init(rt, &ask->h, &ask_ops) != 0) {
        free(ask->call_id);
        free(ask);
        return TG_ENOMEM;
    }
    ask->job = job;
    ask->verdict = *v;
    job->ask = ask;
    job->state = TG__JOB_ASKING;
    tg__hash_add(rt, job);
    /* Last: the asker may answer before it returns. */
    rt->ask_fn(rt->ask_ud, ask, job->call, v->reason);
    return 0;
}

void tg__ask_cancel(tg__job *job, const char *by, const char *reason)
{
    tg_ask *ask = job->ask;
    if (ask == NULL)
        return;
    /* The ask stays on rt->asks until its answer comes, or the runtime
     * lets go of it. */
    ask->job = NULL;
    job->ask = NULL;
    tg__job_complete(job, tg__result_canceled(
                              job->call, TG_EXECUTION_NOT_STARTED, by, reason));
}

void tg__asks_cancel_all(tg_runtime *rt, const char *by, const char *reason)
{
    /* Canceling completes the job, which may let another start, but never
     * adds or removes a handoff: step through the list as it is. */
    for (tg__handoff *h = rt->handoffs; h != NULL; h = h->next)
        if (h->ops == &ask_ops && ((tg_ask *)h)->job != NULL)
            tg__ask_cancel(((tg_ask *)h)->job, by, reason);
}

/* The answer to an ask, taken on the loop: the waiting job goes on or
 * ends. */
static void ask_apply(tg_runtime *rt, tg__handoff *h)
{
    tg_ask *ask = (tg_ask *)h;
    tg__job *job = ask->job;
    if (job == NULL)
        return;
    ask->job = NULL;
    job->ask = NULL;
    bool oom = false;
    tg_result *r = tg__check_answered(rt, job, &ask->verdict, ask->answer,
                                      ask->detail, &oom);
    if (r != NULL || oom) {
        tg__job_complete(job, r);
        return;
    }
    job->state = TG__JOB_NEW;
    tg__job_ready(rt, job);
}

static void ask_detach(tg_runtime *rt, tg__handoff *h)
{
    (void)rt;
    tg_ask *ask = (tg_ask *)h;
    if (ask->job != NULL)
        tg__ask_cancel(ask->job, "system", "the runtime is being freed");
}

int tg_ask_answer(tg_ask *ask, tg_approval answer, const char *detail,
                  tg_error *err)
{
    if (ask == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_ask_answer needs an ask");
    if (answer != TG_APPROVAL_NO && answer != TG_APPROVAL_YES &&
        answer != TG_APPROVAL_ALWAYS)
        return tg__error_set(err, TG_EINVAL,
                             "%d is not an answer (TG_APPROVAL_NO, _YES or "
                             "_ALWAYS)",
                             (int)answer);
    char *copy = NULL;
    if (detail != NULL && (copy = tg__detail_copy(detail)) == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    if (tg__handoff_claim(&ask->h) != 0) {
        free(copy);
        return tg__error_set(err, TG_EINVAL, "the ask was answered already");
    }
    ask->answer = answer;
    ask->detail = copy;
    tg__handoff_post(&ask->h);
    return 0;
}

const char *tg_ask_call_id(const tg_ask *ask)
{
    return ask != NULL ? ask->call_id : NULL;
}
