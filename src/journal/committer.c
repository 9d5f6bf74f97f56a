/* SPDX-License-Identifier: MIT */
/*
 * committer.c - the journal's rows written off the call path
 * (committer.h).
 *
 * One producer (the call path) and one consumer (the thread) share the log
 * without a lock (ring.h). The thread sleeps on a condition variable when
 * the log is empty; the producer wakes it only when it says it sleeps, so
 * appends under load cost no system call. Both sides order their store
 * (a record, the sleeping flag) before their load (the flag, the log) with
 * a full fence, so one of them always sees the other: no wake-up is lost.
 */
#include "committer.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "ring.h"

/* Most records one transaction takes. */
#define BATCH_MAX 512
/* How long the thread, woken by a record after it slept, gathers more
 * before it writes (us): calls that come alone then share a transaction,
 * a call's begin and its result most often too (one row, no `running`
 * entry), instead of two transactions a call competing for the CPU with
 * the calls themselves. Drains and a full log do not wait for it. */
#define GATHER_US 1000
/* Waits between tries after a failed transaction (ms): doubling. */
#define RETRY_FIRST_MS 10
#define RETRY_MAX_MS 1000

struct tg__committer {
    tg__ring *ring;
    tg__committer_apply apply;
    void *ud;
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t wake; /* the thread waits: records, or stop */
    pthread_cond_t done; /* drains and full appends wait: progress */
    atomic_int sleeping;
    bool stop;                  /* under mu */
    int waiters;                /* drains and full appends (under mu) */
    _Atomic uint64_t appended;  /* the last seq appended (producer) */
    _Atomic uint64_t committed; /* the last seq in the journal */
    bool failing;               /* the last try failed (under mu) */
    tg_error error;             /* its error (under mu) */
    tg__crecord batch[BATCH_MAX];
};

static void wait_us(tg__committer *c, long us)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += us / 1000000;
    t.tv_nsec += (us % 1000000) * 1000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    (void)pthread_cond_timedwait(&c->wake, &c->mu, &t);
}

/* Takes up to BATCH_MAX records after the last committed one. */
static size_t take(tg__committer *c)
{
    size_t n = 0;
    uint64_t after = atomic_load(&c->committed);
    while (n < BATCH_MAX) {
        tg__crecord *r = &c->batch[n];
        if (!tg__ring_next(c->ring, after, &r->data, &r->len, &r->seq))
            break;
        after = r->seq;
        n++;
    }
    return n;
}

static void *run(void *arg)
{
    tg__committer *c = arg;
    long retry = RETRY_FIRST_MS;
    tg__ring_prefault(c->ring); /* off the call path (ring.h) */
    pthread_mutex_lock(&c->mu);
    for (;;) {
        size_t n = take(c);
        if (n == 0) {
            if (c->stop)
                break;
            atomic_store(&c->sleeping, 1);
            atomic_thread_fence(memory_order_seq_cst);
            n = take(c);
            if (n == 0) {
                pthread_cond_wait(&c->wake, &c->mu);
                atomic_store(&c->sleeping, 0);
                /* Woken by a record: gather (see GATHER_US). */
                if (!c->stop && c->waiters == 0)
                    wait_us(c, GATHER_US);
                continue;
            }
            atomic_store(&c->sleeping, 0);
        }
        pthread_mutex_unlock(&c->mu);
        tg_error err;
        tg__error_init(&err);
        int rc = c->apply(c->ud, c->batch, n, &err);
        if (rc == 0) {
            uint64_t last = c->batch[n - 1].seq;
            tg__ring_release(c->ring, last);
            atomic_store(&c->committed, last);
        }
        pthread_mutex_lock(&c->mu);
        if (rc == 0) {
            c->failing = false;
            retry = RETRY_FIRST_MS;
        } else {
            c->failing = true;
            c->error = err;
        }
        pthread_cond_broadcast(&c->done);
        if (rc != 0) {
            if (c->stop)
                break; /* the records stay in the log */
            wait_us(c, retry * 1000);
            retry = retry * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : retry * 2;
        }
    }
    pthread_cond_broadcast(&c->done);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

int tg__committer_start(const char *ring_path, size_t capacity, int64_t pid,
                        int64_t start, const char *boot,
                        tg__committer_apply apply, void *ud,
                        tg__committer **out, tg_error *err)
{
    *out = NULL;
    tg__committer *c = calloc(1, sizeof *c);
    if (c == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    c->apply = apply;
    c->ud = ud;
    tg__error_init(&c->error);
    int rc =
        tg__ring_create(ring_path, capacity, pid, start, boot, &c->ring, err);
    if (rc != 0) {
        free(c);
        return rc;
    }
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->wake, NULL);
    pthread_cond_init(&c->done, NULL);
    /* The thread writes while the caller's calls run: it must not take
     * the process's signals (the caller's threads may wait for them). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int prc = pthread_create(&c->thread, NULL, run, c);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (prc != 0) {
        tg__ring_close(c->ring, true);
        pthread_cond_destroy(&c->done);
        pthread_cond_destroy(&c->wake);
        pthread_mutex_destroy(&c->mu);
        free(c);
        return tg__error_set(err, TG_EJOURNAL,
                             "journal: cannot start its committer thread: %s",
                             strerror(prc));
    }
    c->started = true;
    *out = c;
    return 0;
}

size_t tg__committer_max_record(const tg__committer *c)
{
    return tg__ring_max_record(c->ring);
}

int tg__committer_append(tg__committer *c, const struct iovec *iov, int n,
                         tg_error *err)
{
    uint64_t seq;
    for (;;) {
        uint64_t seen = atomic_load(&c->committed);
        int rc = tg__ring_appendv(c->ring, iov, n, &seq, err);
        if (rc == 0)
            break;
        if (rc != TG__RING_FULL)
            return rc;
        /* Full: wait for the thread to write some (unless it did since
         * the try), or fail when it cannot. */
        pthread_mutex_lock(&c->mu);
        if (c->failing) {
            rc = tg__error_set(err, TG_EJOURNAL, "%s", c->error.message);
            pthread_mutex_unlock(&c->mu);
            return rc;
        }
        if (atomic_load(&c->committed) == seen) {
            c->waiters++;
            pthread_cond_signal(&c->wake);
            pthread_cond_wait(&c->done, &c->mu);
            c->waiters--;
        }
        pthread_mutex_unlock(&c->mu);
    }
    atomic_store(&c->appended, seq);
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load(&c->sleeping)) {
        pthread_mutex_lock(&c->mu);
        pthread_cond_signal(&c->wake);
        pthread_mutex_unlock(&c->mu);
    }
    return 0;
}

int tg__committer_busy(tg__committer *c)
{
    return c != NULL && atomic_load(&c->committed) < atomic_load(&c->appended);
}

int tg__committer_drain(tg__committer *c, tg_error *err)
{
    if (!tg__committer_busy(c))
        return 0;
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    c->waiters++;
    pthread_cond_signal(&c->wake); /* also ends a gathering wait */
    uint64_t until = atomic_load(&c->appended);
    while (atomic_load(&c->committed) < until) {
        if (c->failing) {
            rc = tg__error_set(err, TG_EJOURNAL, "%s", c->error.message);
            break;
        }
        pthread_cond_wait(&c->done, &c->mu);
    }
    c->waiters--;
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int tg__committer_stop(tg__committer *c)
{
    if (c == NULL)
        return 1;
    pthread_mutex_lock(&c->mu);
    c->stop = true;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
    int all = atomic_load(&c->committed) >= atomic_load(&c->appended);
    tg__ring_close(c->ring, all);
    pthread_cond_destroy(&c->done);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->mu);
    free(c);
    return all;
}
