/* SPDX-License-Identifier: MIT */
/*
 * scheduler.c - the life of a job: queued in call order, started up to the
 * parallel limit on its tool's source (source.h), cancelled by id (a hash
 * lookup) or all at once, completed with exactly one result (what its
 * source reported, shaped to what the tool declares, reviewed by the after
 * hooks), and committed to the journal in groups: every
 * result that completes during one loop iteration is journaled in one
 * transaction by the check handle, and only then stored in its turn and
 * announced with the `finished` event.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "grow.h"
#include "runtime.h"
#include "timeutil.h"

/* ------------------------------------------------------------ lists */

static void list_append(tg__job **head, tg__job **tail, tg__job *job)
{
    job->next = NULL;
    job->prev = *tail;
    if (*tail)
        (*tail)->next = job;
    else
        *head = job;
    *tail = job;
}

static void list_remove(tg__job **head, tg__job **tail, tg__job *job)
{
    if (job->prev)
        job->prev->next = job->next;
    else
        *head = job->next;
    if (job->next)
        job->next->prev = job->prev;
    else
        *tail = job->prev;
    job->prev = job->next = NULL;
}

void tg__queue_push(tg_runtime *rt, tg__job *job)
{
    job->state = TG__JOB_QUEUED;
    list_append(&rt->queue_head, &rt->queue_tail, job);
    tg__hash_add(rt, job);
}

/* ------------------------------------------------------------ hash */

/* Cancellable jobs by call id: the table maps an id to the newest job with
 * it, which chains to the others through hnext (one id may be live in more
 * than one turn). The entry's key is always its first job's id, so it
 * never points into a turn that is gone. */
void tg__hash_add(tg_runtime *rt, tg__job *job)
{
    if (job->in_hash)
        return;
    tg__hentry *e;
    int rc = tg__hmap_put_str(&rt->jobs_by_id, job->call->id, &e);
    if (rc < 0)
        return; /* no memory: this job cannot be cancelled by id */
    job->hnext = rc == 1 ? e->val.ptr : NULL;
    e->val.ptr = job;
    e->key = job->call->id;
    job->in_hash = true;
}

static void hash_remove(tg_runtime *rt, tg__job *job)
{
    if (!job->in_hash)
        return;
    tg__hentry *e = tg__hmap_find_str(&rt->jobs_by_id, job->call->id);
    tg__job *head = e->val.ptr;
    if (head == job) {
        head = job->hnext;
    } else {
        tg__job *p = head;
        while (p->hnext != job)
            p = p->hnext;
        p->hnext = job->hnext;
    }
    if (head == NULL) {
        tg__hmap_remove(&rt->jobs_by_id, e);
    } else {
        e->val.ptr = head;
        e->key = head->call->id;
    }
    job->hnext = NULL;
    job->in_hash = false;
}

/* ------------------------------------------------------------ jobs */

/* The per-call deadline of a tool in ms; 0: none. */
static int64_t budget_ms(const tg_runtime *rt, const tg__tool *tool)
{
    if (tool != NULL && tool->timeout_ms > 0)
        return tool->timeout_ms;
    return rt->cfg->timeout_ms > 0 ? rt->cfg->timeout_ms : 0;
}

void tg__job_release(tg__job *job)
{
    tg__argv_free(job->argv);
    job->argv = NULL;
    free(job->stdin_data);
    job->stdin_data = NULL;
    json_decref(job->decisions);
    job->decisions = NULL;
}

static void on_idle(uv_idle_t *h)
{
    (void)h; /* its only job is to make the poll phase not block */
}

/* A job waiting for a hook holds a parallel slot (taking one if it had
 * none) and can be canceled by id. */
static void job_hold(tg_runtime *rt, tg__job *job)
{
    job->state = TG__JOB_HOOK;
    if (!job->holds_slot) {
        job->holds_slot = true;
        rt->running++;
        list_append(&rt->run_head, &rt->run_tail, job);
    }
    tg__hash_add(rt, job);
}

/* Gives a job's slot back without starting anything. */
static void job_unhold(tg_runtime *rt, tg__job *job)
{
    if (!job->holds_slot)
        return;
    list_remove(&rt->run_head, &rt->run_tail, job);
    rt->running--;
    job->holds_slot = false;
}

/* A stage of hooks ended (hooks.c). */
static void hooks_ended(tg__job *job, bool proceed, tg_result *result)
{
    tg_runtime *rt = job->run->rt;
    if (!proceed) {
        tg__job_complete(job, result);
        return;
    }
    /* Every before hook allowed: the tool starts now, in the slot the
     * hooks held (nothing is dispatched in between). */
    job_unhold(rt, job);
    tg__job_start(rt, job);
}

void tg__job_complete(tg__job *job, tg_result *result)
{
    tg__run *run = job->run;
    tg_runtime *rt = run->rt;
    if (tg__hooks_after_wanted(rt, job, result)) {
        /* hooks.c reviews the tool's result, and the job completes again
         * with what they made of it */
        job_hold(rt, job);
        tg__hooks_after(rt, job, result, hooks_ended);
        return;
    }
    if (job->state == TG__JOB_QUEUED)
        list_remove(&rt->queue_head, &rt->queue_tail, job);
    else if ((job->state == TG__JOB_RUNNING || job->state == TG__JOB_HOOK) &&
             job->holds_slot) {
        list_remove(&rt->run_head, &rt->run_tail, job);
        rt->running--;
        job->holds_slot = false;
    }
    hash_remove(rt, job);
    if (job->decisions != NULL && result != NULL) {
        /* the checks' verdicts beside what the source recorded */
        if (result->decisions == NULL)
            result->decisions = json_incref(job->decisions);
        else
            json_object_update_missing(result->decisions, job->decisions);
    }
    /* What a tool produced is shown to models as data, in the trust
     * envelope (a timeout too, when it carries what the command printed);
     * toolgate's own refusals and verdicts are not. */
    if (result != NULL && rt->cfg->envelope &&
        result->execution != TG_EXECUTION_NOT_STARTED &&
        (result->outcome == TG_OUTCOME_SUCCESS ||
         result->outcome == TG_OUTCOME_ERROR ||
         tg__result_output_part(result) != NULL))
        result->untrusted = true;
    tg__job_release(job);
    job->state = TG__JOB_DONE;
    if (result == NULL && run->failed == 0) {
        run->failed = TG_ENOMEM;
        tg__error_set(&run->err, TG_ENOMEM,
                      "out of memory while running call '%s'", job->call->id);
    }
    job->result = result;
    job->next_done = NULL;
    if (rt->done_tail)
        rt->done_tail->next_done = job;
    else
        rt->done_head = job;
    rt->done_tail = job;
    rt->ndone++;
    if (!rt->idle_on) {
        /* Keep the poll phase from blocking until the commit has run. */
        uv_idle_start(&rt->idle, on_idle);
        rt->idle_on = true;
    }
    tg__dispatch(rt);
}

/* ------------------------------------------------------------ sink */

/* What a job's source reports goes through these (source.h). */

static void job_output(void *ctx, int stream, const char *data, size_t len)
{
    const tg__job *job = ctx;
    tg_runtime *rt = job->run->rt;
    if (len == 0)
        return;
    if (rt->ev.output != NULL)
        rt->ev.output(rt->ev_ud, job->call, stream, data, len);
    if (job->run->ops.output != NULL)
        job->run->ops.output(job->run->ud, job->call, stream, data, len);
}

static int job_decide(void *ctx, const char *key, json_t *value)
{
    tg__job *job = ctx;
    if (value == NULL)
        return TG_ENOMEM;
    if (job->decisions == NULL && (job->decisions = json_object()) == NULL) {
        json_decref(value);
        return TG_ENOMEM;
    }
    return json_object_set_new(job->decisions, key, value) == 0 ? 0 : TG_ENOMEM;
}

static void job_shaped(void *ctx, tg_result *r)
{
    tg__job_complete(ctx, r);
}

static void job_done(void *ctx, tg_result *r)
{
    tg__job *job = ctx;
    job->src = NULL; /* nothing left to cancel */
    /* a success becomes what the tool's "output" declares (shape.c) */
    tg__shape(&job->run->rt->src, job->call, job->tool, r, job_shaped, job);
}

/* Runs job on its source, which reports through the sink above. */
static void source_start(tg_runtime *rt, tg__job *job)
{
    tg__source_call c = {
        .env = &rt->src,
        .call = job->call,
        .tool = job->tool,
        .budget_ms = budget_ms(rt, job->tool),
        .start_ns = job->start_ns,
        .alone = rt->running <= 1,
        .argv = job->argv,
        .stdin_text = &job->stdin_data,
        .stdin_len = job->stdin_len,
        .has_stdin = job->has_stdin,
        .sink = {job_output, job_decide, job_done, job, tg__elicit_raise,
                 tg__elicit_drop},
    };
    job->src = NULL;
    job->source->start(&c, &job->src);
}

void tg__job_start(tg_runtime *rt, tg__job *job)
{
    if (job->hook_stage == TG__HOOKS_NONE) {
        /* before hooks first; they start the job again when they allow */
        job->hook_stage = TG__HOOKS_TOOL;
        if (tg__hooks_have(rt, TG__HOOKS_BEFORE)) {
            job_hold(rt, job);
            tg__hooks_before(rt, job, hooks_ended);
            return;
        }
    }
    job->state = TG__JOB_RUNNING;
    if (rt->ev.started)
        rt->ev.started(rt->ev_ud, job->call);
    if (job->run->ops.started)
        job->run->ops.started(job->run->ud, job->call);
    job->start_ns = tg__mono_ns();
    job->source = tg__source_of(job->tool);
    if (!(job->source->flags & TG__SOURCE_INLINE)) {
        /* Inline calls run to their end now, without a slot. */
        job->holds_slot = true;
        rt->running++;
        list_append(&rt->run_head, &rt->run_tail, job);
        tg__hash_add(rt, job);
    }
    source_start(rt, job);
}

void tg__job_ready(tg_runtime *rt, tg__job *job)
{
    tg__run *run = job->run;
    if (run->failed) {
        tg__job_complete(job, tg__result_canceled(job->call,
                                                  TG_EXECUTION_NOT_STARTED,
                                                  "system", "the turn failed"));
        return;
    }
    bool inline_fn = (tg__source_of(job->tool)->flags & TG__SOURCE_INLINE) != 0;
    /* Inline sources take no slot and run now; the others start in call
     * order while slots are free. */
    if (inline_fn ||
        (rt->queue_head == NULL && rt->running < (size_t)rt->parallel))
        tg__job_start(rt, job);
    else
        tg__queue_push(rt, job);
}

void tg__dispatch(tg_runtime *rt)
{
    if (rt->in_dispatch)
        return; /* the outer loop below picks up the freed slot */
    rt->in_dispatch = true;
    while (!rt->stopping && rt->queue_head != NULL &&
           rt->running < (size_t)rt->parallel) {
        tg__job *job = rt->queue_head;
        list_remove(&rt->queue_head, &rt->queue_tail, job);
        tg__job_start(rt, job);
    }
    rt->in_dispatch = false;
}

/* ------------------------------------------------------------ cancel */

static void cancel_job(tg_runtime *rt, tg__job *job, const char *by,
                       const char *reason, bool hard)
{
    switch (job->state) {
    case TG__JOB_NEW: /* checked, waiting for other calls' schema checks */
    case TG__JOB_QUEUED:
        tg__job_complete(job, tg__result_canceled(job->call,
                                                  TG_EXECUTION_NOT_STARTED, by,
                                                  reason));
        break;
    case TG__JOB_RUNNING:
        /* NULL: its result is being shaped; it ends on its own */
        if (job->src != NULL)
            job->source->cancel(job->src, by, reason, hard);
        break;
    case TG__JOB_HOOK:
        tg__hooks_cancel(job, by, reason);
        break;
    case TG__JOB_CHECKING:
        tg__schema_work_cancel(job, by, reason);
        break;
    case TG__JOB_ASKING:
        tg__ask_cancel(job, by, reason);
        break;
    default:
        break;
    }
}

/* The jobs of run that wait for its schema checks (nothing when it does
 * not wait). */
static void cancel_checking(tg_runtime *rt, tg__run *run, const char *by,
                            const char *reason, bool hard)
{
    for (size_t k = 0; run != NULL && run->in_checks && k < run->n; k++)
        if (run->jobs[k].state == TG__JOB_NEW ||
            run->jobs[k].state == TG__JOB_CHECKING)
            cancel_job(rt, &run->jobs[k], by, reason, hard);
}

void tg__cancel_apply(tg_runtime *rt, const char *call_id, const char *by,
                      const char *reason, bool hard)
{
    if (by == NULL)
        by = "user";
    if (reason == NULL)
        reason = "canceled";
    if (call_id != NULL) {
        tg__hentry *e = tg__hmap_find_str(&rt->jobs_by_id, call_id);
        tg__job *j = e ? e->val.ptr : NULL;
        while (j != NULL) {
            /* cancel_job may unlink j: step first */
            tg__job *next = j->hnext;
            cancel_job(rt, j, by, reason, hard);
            j = next;
        }
        return;
    }
    /* Queued calls first, and with dispatching held, so that no slot freed
     * meanwhile starts one of them. */
    bool held = rt->in_dispatch;
    rt->in_dispatch = true;
    while (rt->queue_head != NULL)
        cancel_job(rt, rt->queue_head, by, reason, hard);
    rt->in_dispatch = held;
    tg__job *j = rt->run_head;
    while (j != NULL) {
        tg__job *next = j->next;
        cancel_job(rt, j, by, reason, hard);
        j = next;
    }
    /* Calls waiting for the answer to an ask are neither queued nor
     * running (ask.c). */
    tg__asks_cancel_all(rt, by, reason);
    /* While a run waits for schema checks on the pool, its calls are
     * neither queued nor running yet. */
    cancel_checking(rt, rt->current, by, reason, hard);
    for (tg__run *r = rt->runs_head; r != NULL && r != rt->admit;) {
        tg__run *next = r->rnext; /* canceling may end r */
        cancel_checking(rt, r, by, reason, hard);
        r = next;
    }
}

void tg__run_cancel(tg__run *run, const char *by, const char *reason)
{
    tg_runtime *rt = run->rt;
    bool held = rt->in_dispatch;
    rt->in_dispatch = true; /* no freed slot starts one of its queued jobs */
    for (size_t k = 0; k < run->n; k++)
        if (run->jobs[k].state != TG__JOB_DONE)
            cancel_job(rt, &run->jobs[k], by, reason, false);
    rt->in_dispatch = held;
}

/* ------------------------------------------------------------ commit */

static int commit_reserve(tg_runtime *rt, size_t n)
{
    void *const arrays[] = {&rt->ccalls, &rt->cresults};
    const size_t sizes[] = {sizeof *rt->ccalls, sizeof *rt->cresults};
    return tg__grow(n, 64, &rt->ccap, 2, arrays, sizes) != 0 ? TG_ENOMEM : 0;
}

/* The journal failed: nothing more starts, and the run loop cancels the
 * rest (tg_runtime_run_turn). */
static void journal_failed(tg_runtime *rt, tg__run *run, const tg_error *e)
{
    run->failed = e->code == TG_ENOMEM ? TG_ENOMEM : TG_EJOURNAL;
    run->err = *e;
    run->err.code = run->failed;
    rt->stopping = true;
    if (run->submitted && rt->broken == 0) {
        /* A serving runtime whose journal failed takes no more turns:
         * nothing it ran could be made durable. */
        rt->broken = run->failed;
        rt->broken_err = run->err;
    }
}

/* Submitted runs that failed (the journal, out of memory) end their other
 * jobs now; the last to end reports `done`. Once the journal failed, every
 * live run fails with it. */
static void end_failed_runs(tg_runtime *rt)
{
    for (tg__run *r = rt->runs_head; r != NULL && r != rt->admit;) {
        tg__run *next = r->rnext;
        if (rt->broken != 0 && r->failed == 0) {
            r->failed = rt->broken;
            r->err = rt->broken_err;
        }
        if (r->failed != 0 && !r->cancel_sent) {
            r->cancel_sent = true;
            if (r->remaining == 0)
                tg__run_end(r);
            else
                tg__run_cancel(r, "system", "the turn failed");
        }
        r = next;
    }
}

void tg__commit(tg_runtime *rt)
{
    while (rt->done_head != NULL) {
        tg__job *head = rt->done_head;
        size_t n = rt->ndone, k = 0;
        rt->done_head = rt->done_tail = NULL;
        rt->ndone = 0;
        bool durable = true;
        tg_error e;
        tg__error_init(&e);
        if (rt->journal != NULL) {
            if (commit_reserve(rt, n) != 0) {
                tg__error_set(&e, TG_ENOMEM,
                              "out of memory committing "
                              "results to the journal");
                durable = false;
            } else {
                for (tg__job *j = head; j; j = j->next_done) {
                    if (j->result == NULL || j->run->failed)
                        continue;
                    j->call->completed_at = j->call->updated_at =
                        j->result->completed_at;
                    rt->ccalls[k] = j->call;
                    rt->cresults[k] = j->result;
                    k++;
                }
                if (k > 0 && tg__journal_finish(rt->journal, rt->ccalls,
                                                rt->cresults, k, &e) != 0)
                    durable = false;
            }
        }
        for (tg__job *j = head, *next; j; j = next) {
            next = j->next_done;
            j->next_done = NULL;
            tg__run *run = j->run;
            if (!durable && run->failed == 0)
                journal_failed(rt, run, &e);
            tg_result *r = j->result;
            j->result = NULL;
            run->remaining--;
            /* A result that is not durable is never shown (docs/design.md). */
            if (r == NULL || run->failed) {
                tg__result_free(r);
                if (run->submitted && run->remaining == 0 && run->cancel_sent)
                    tg__run_end(run);
                continue;
            }
            if (rt->journal == NULL)
                j->call->completed_at = j->call->updated_at = r->completed_at;
            tg__turn_set_result(run->turn, j->index, r);
            if (rt->ev.finished)
                rt->ev.finished(rt->ev_ud, j->call, r);
            if (run->ops.finished)
                run->ops.finished(run->ud, j->call, r);
            if (run->submitted && run->remaining == 0)
                tg__run_end(run);
        }
        end_failed_runs(rt);
    }
    if (rt->idle_on) {
        uv_idle_stop(&rt->idle);
        rt->idle_on = false;
    }
}
