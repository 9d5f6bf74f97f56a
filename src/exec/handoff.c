/* SPDX-License-Identifier: MIT */
/*
 * handoff.c - a question the runtime hands to someone who answers later,
 * from any thread: a policy `ask` (ask.c) or a source's elicitation
 * (elicit.c). Both have the same life, kept here once:
 *   - two holders, the runtime (from the question until its answer was
 *     taken on the loop, or until the runtime is freed) and the answerer
 *     (until it answers); each lets go under the handoff's own mutex and
 *     the last frees it, so a call that ended meanwhile, or a runtime
 *     freed, never frees a question under its answerer, and an answer
 *     that comes after either is accepted and ignored;
 *   - an answer is queued under the runtime's mutex and the loop is woken
 *     by the runtime's async handle (as tg_runtime_cancel does), and the
 *     loop takes it there (tg__handoffs_drain).
 * The handoff's mutex is its own because it must outlive the runtime's;
 * the lock order is the handoff's, then the runtime's.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "text.h"

/* The longest `detail` kept, in bytes. */
#define DETAIL_MAX 1024

/* One holder lets go; the last frees the handoff. */
static void release(tg__handoff *h)
{
    pthread_mutex_lock(&h->mu);
    bool last = --h->holders == 0;
    pthread_mutex_unlock(&h->mu);
    if (last) {
        pthread_mutex_destroy(&h->mu);
        h->ops->destroy(h);
    }
}

/* Takes h off rt->handoffs (loop thread). */
static void unlink_handoff(tg_runtime *rt, tg__handoff *h)
{
    if (h->prev != NULL)
        h->prev->next = h->next;
    else
        rt->handoffs = h->next;
    if (h->next != NULL)
        h->next->prev = h->prev;
    h->prev = h->next = NULL;
}

int tg__handoff_init(tg_runtime *rt, tg__handoff *h, const tg__handoff_ops *ops)
{
    if (pthread_mutex_init(&h->mu, NULL) != 0)
        return TG_ENOMEM;
    h->ops = ops;
    h->holders = 2;
    h->rt = rt;
    h->answered = false;
    h->next_answered = NULL;
    h->prev = NULL;
    h->next = rt->handoffs;
    if (rt->handoffs != NULL)
        rt->handoffs->prev = h;
    rt->handoffs = h;
    return 0;
}

int tg__handoff_claim(tg__handoff *h)
{
    pthread_mutex_lock(&h->mu);
    if (h->answered) {
        /* a second answer to a question still held (by the runtime) */
        pthread_mutex_unlock(&h->mu);
        return TG_EINVAL;
    }
    h->answered = true;
    return 0;
}

void tg__handoff_post(tg__handoff *h)
{
    tg_runtime *rt = h->rt;
    if (rt != NULL) {
        pthread_mutex_lock(&rt->mu);
        if (rt->answered_tail != NULL)
            rt->answered_tail->next_answered = h;
        else
            rt->answered_head = h;
        rt->answered_tail = h;
        uv_async_send(&rt->async);
        pthread_mutex_unlock(&rt->mu);
    }
    bool last = --h->holders == 0;
    pthread_mutex_unlock(&h->mu);
    if (last) {
        pthread_mutex_destroy(&h->mu);
        h->ops->destroy(h);
    }
}

void tg__handoffs_drain(tg_runtime *rt)
{
    pthread_mutex_lock(&rt->mu);
    tg__handoff *h = rt->answered_head;
    rt->answered_head = rt->answered_tail = NULL;
    pthread_mutex_unlock(&rt->mu);
    while (h != NULL) {
        tg__handoff *next = h->next_answered;
        h->next_answered = NULL;
        unlink_handoff(rt, h);
        h->ops->apply(rt, h);
        release(h);
        h = next;
    }
}

void tg__handoffs_detach(tg_runtime *rt)
{
    /* First every question still waiting is ended by its kind (a waiting
     * job canceled, a source told); that never adds or removes one, so
     * the list is walked as it is. */
    for (tg__handoff *h = rt->handoffs; h != NULL; h = h->next)
        h->ops->detach(rt, h);
    while (rt->handoffs != NULL) {
        tg__handoff *h = rt->handoffs;
        unlink_handoff(rt, h);
        pthread_mutex_lock(&h->mu);
        h->rt = NULL; /* from now on an answer does not come here */
        pthread_mutex_unlock(&h->mu);
        release(h);
    }
    /* Every answered question in the queue was on rt->handoffs, and no
     * answer can join the queue any more. */
    pthread_mutex_lock(&rt->mu);
    rt->answered_head = rt->answered_tail = NULL;
    pthread_mutex_unlock(&rt->mu);
}

char *tg__detail_copy(const char *text)
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
