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
 * Who frees an ask: it has two holders, the runtime (from the ask until its
 * answer was taken on the loop, or until the runtime is freed) and the
 * asker (until it answers). Each lets go under the ask's own mutex and the
 * last frees it, so a call canceled while it waits, or a runtime freed,
 * never frees an ask under its asker, and an answer that comes after either
 * is accepted and ignored. The ask's mutex is its own because it must
 * outlive the runtime's; the lock order is the ask's, then the runtime's.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "runtime.h"

/* The longest `detail` kept, in bytes. */
#define DETAIL_MAX 1024

struct tg_ask {
    pthread_mutex_t mu;
    int holders;    /* the runtime and the asker, under mu */
    tg_runtime *rt; /* NULL once the runtime let go (under mu) */
    bool answered;  /* under mu */
    tg_approval answer;
    char *detail;  /* the answer's, valid UTF-8, or NULL */
    char *call_id; /* tg_ask_call_id */
    /* loop thread only */
    tg__job *job; /* the waiting job, NULL once it ended */
    tg_policy_verdict verdict;
    tg_ask *prev, *next;   /* rt->asks: not answered on the loop yet */
    tg_ask *next_answered; /* rt->answered_head, under the runtime's mu */
};

static void ask_free(tg_ask *ask)
{
    pthread_mutex_destroy(&ask->mu);
    free(ask->detail);
    free(ask->call_id);
    free(ask);
}

/* One holder lets go; the last frees the ask. */
static void ask_release(tg_ask *ask)
{
    pthread_mutex_lock(&ask->mu);
    bool last = --ask->holders == 0;
    pthread_mutex_unlock(&ask->mu);
    if (last)
        ask_free(ask);
}

/* Takes ask off rt->asks (loop thread). */
static void unlink_ask(tg_runtime *rt, tg_ask *ask)
{
    if (ask->prev != NULL)
        ask->prev->next = ask->next;
    else
        rt->asks = ask->next;
    if (ask->next != NULL)
        ask->next->prev = ask->prev;
    ask->prev = ask->next = NULL;
}

void tg_runtime_set_ask(tg_runtime *rt, tg_ask_fn fn, void *ud)
{
    if (rt == NULL)
        return;
    rt->ask_fn = fn;
    rt->ask_ud = ud;
}

int tg__ask_start(tg_runtime *rt, tg__job *job, const tg_policy_verdict *v)
{
    tg_ask *ask = calloc(1, sizeof *ask);
    if (ask == NULL)
        return TG_ENOMEM;
    if ((ask->call_id = strdup(job->call->id)) == NULL ||
        pthread_mutex_init(&ask->mu, NULL) != 0) {
        free(ask->call_id);
        free(ask);
        return TG_ENOMEM;
    }
    ask->holders = 2;
    ask->rt = rt;
    ask->job = job;
    ask->verdict = *v;
    ask->next = rt->asks;
    if (rt->asks != NULL)
        rt->asks->prev = ask;
    rt->asks = ask;
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
     * adds or removes an ask: step through the list as it is. */
    for (tg_ask *a = rt->asks; a != NULL; a = a->next)
        if (a->job != NULL)
            tg__ask_cancel(a->job, by, reason);
}

/* The answer to ask, taken on the loop: the waiting job goes on or ends. */
static void apply(tg_runtime *rt, tg_ask *ask)
{
    tg__job *job = ask->job;
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

void tg__asks_drain(tg_runtime *rt)
{
    pthread_mutex_lock(&rt->mu);
    tg_ask *a = rt->answered_head;
    rt->answered_head = rt->answered_tail = NULL;
    pthread_mutex_unlock(&rt->mu);
    while (a != NULL) {
        tg_ask *next = a->next_answered;
        a->next_answered = NULL;
        unlink_ask(rt, a);
        if (a->job != NULL)
            apply(rt, a);
        ask_release(a);
        a = next;
    }
}

void tg__asks_detach(tg_runtime *rt)
{
    tg__asks_cancel_all(rt, "system", "the runtime is being freed");
    while (rt->asks != NULL) {
        tg_ask *a = rt->asks;
        unlink_ask(rt, a);
        pthread_mutex_lock(&a->mu);
        a->rt = NULL; /* from now on an answer does not come here */
        pthread_mutex_unlock(&a->mu);
        ask_release(a);
    }
    /* Every answered ask in the queue was on rt->asks, and no answer can
     * join the queue any more. */
    pthread_mutex_lock(&rt->mu);
    rt->answered_head = rt->answered_tail = NULL;
    pthread_mutex_unlock(&rt->mu);
}

/* A copy of at most DETAIL_MAX bytes of text, cut before a UTF-8
 * sequence it would split, invalid UTF-8 replaced; NULL on out of memory. */
static char *copy_detail(const char *text)
{
    size_t len = strlen(text);
    if (len > DETAIL_MAX) {
        len = DETAIL_MAX;
        while (len > 0 && ((unsigned char)text[len] & 0xC0) == 0x80)
            len--;
    }
    json_t *j = tg__json_text(text, len); /* new ref */
    char *copy = j != NULL ? strdup(json_string_value(j)) : NULL;
    json_decref(j);
    return copy;
}

int tg_ask_answer(tg_ask *ask, tg_approval answer, const char *detail)
{
    if (ask == NULL || (answer != TG_APPROVAL_NO && answer != TG_APPROVAL_YES &&
                        answer != TG_APPROVAL_ALWAYS))
        return TG_EINVAL;
    char *copy = NULL;
    if (detail != NULL && (copy = copy_detail(detail)) == NULL)
        return TG_ENOMEM;
    pthread_mutex_lock(&ask->mu);
    if (ask->answered) {
        /* a second answer to an ask that is still held (by the runtime) */
        pthread_mutex_unlock(&ask->mu);
        free(copy);
        return TG_EINVAL;
    }
    ask->answered = true;
    ask->answer = answer;
    ask->detail = copy;
    tg_runtime *rt = ask->rt;
    if (rt != NULL) {
        pthread_mutex_lock(&rt->mu);
        if (rt->answered_tail != NULL)
            rt->answered_tail->next_answered = ask;
        else
            rt->answered_head = ask;
        rt->answered_tail = ask;
        uv_async_send(&rt->async);
        pthread_mutex_unlock(&rt->mu);
    }
    bool last = --ask->holders == 0;
    pthread_mutex_unlock(&ask->mu);
    if (last)
        ask_free(ask);
    return 0;
}

const char *tg_ask_call_id(const tg_ask *ask)
{
    return ask != NULL ? ask->call_id : NULL;
}
