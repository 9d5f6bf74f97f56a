/* SPDX-License-Identifier: MIT */
/*
 * schema_work.c - the schema check of costly arguments, off the loop thread.
 *
 * check.c checks every call's arguments on the loop thread with a slice of
 * limits.max_validation_steps, which real arguments never use up. A call
 * whose check needs more moves here: its whole check (verdict, report,
 * limits.repair) runs again on libuv's thread pool with the whole budget,
 * while the loop goes on answering signals and cancels. A cancel sets the
 * work's stop flag, which the validator reads every few thousand steps, so
 * the call ends `canceled` (not_started) within microseconds of work, and
 * a call that spends its whole budget ends SCHEMA_TOO_COSTLY. The run
 * waits for these checks before it starts any call (tg_runtime_run_turn),
 * so the call and its arguments stay untouched by anything else meanwhile.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "runtime.h"

struct tg__schema_work {
    uv_work_t req;
    tg_runtime *rt;
    tg__job *job;
    atomic_int stop;
    tg__schema_budget budget;
    tg_result *result; /* the pool thread's refusal, or NULL */
    bool oom;
    char *by, *reason; /* the cancel that stopped it (copies) */
};

static void on_work(uv_work_t *req)
{
    tg__schema_work *w = req->data;
    w->result = tg__check_schema(w->rt->cfg, w->job->call, w->job->tool,
                                 &w->budget, &w->oom);
}

static void on_work_done(uv_work_t *req, int status)
{
    (void)status; /* work is never canceled through libuv */
    tg__schema_work *w = req->data;
    tg__job *job = w->job;
    job->sw = NULL;
    job->run->checking--;
    if (atomic_load(&w->stop)) {
        /* however far the check got, a cancel asked before the call ran */
        tg__result_free(w->result);
        tg__job_complete(
            job, tg__result_canceled(job->call, TG_EXECUTION_NOT_STARTED,
                                     w->by ? w->by : "user",
                                     w->reason ? w->reason : "canceled"));
    } else if (w->oom || w->result != NULL) {
        tg__job_complete(job, w->oom ? NULL : w->result);
    } else {
        job->state = TG__JOB_NEW;
        job->defer_rest = true;
    }
    tg__run *run = job->run;
    free(w->by);
    free(w->reason);
    free(w);
    /* A submitted run does not wait in a loop of its own: its last check
     * going back to the loop is what lets its calls start. */
    if (run->submitted && run->checking == 0 && run->in_checks)
        tg__run_checks_done(run);
}

tg_result *tg__schema_work_start(tg_runtime *rt, tg__job *job, bool *oom)
{
    tg__schema_work *w = calloc(1, sizeof *w);
    if (w == NULL) {
        *oom = true;
        return NULL;
    }
    w->rt = rt;
    w->job = job;
    w->req.data = w;
    atomic_init(&w->stop, 0);
    tg__schema_budget_init(&w->budget, (uint64_t)rt->cfg->max_validation_steps,
                           &w->stop);
    int rc = uv_queue_work(&rt->loop, &w->req, on_work, on_work_done);
    if (rc != 0) {
        free(w);
        tg_result *r =
            tg__fail(job->call, TG_EXECUTION_NOT_STARTED, "INTERNAL", NULL,
                     "cannot check the arguments of call '%s' on the thread "
                     "pool: %s",
                     job->call->id, uv_strerror(rc));
        *oom = r == NULL;
        return r;
    }
    job->sw = w;
    job->state = TG__JOB_CHECKING;
    job->run->checking++;
    job->run->defer_rest = true;
    return NULL;
}

void tg__schema_work_cancel(tg__job *job, const char *by, const char *reason)
{
    tg__schema_work *w = job->sw;
    if (w == NULL || atomic_load(&w->stop))
        return; /* the first cancel says why */
    /* Copies: the strings of a cancel request do not outlive it. A copy
     * that fails leaves the general words in place. */
    w->by = by ? strdup(by) : NULL;
    w->reason = reason ? strdup(reason) : NULL;
    atomic_store(&w->stop, 1);
}
