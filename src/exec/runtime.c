/* SPDX-License-Identifier: MIT */
/*
 * runtime.c - the tg_runtime handle: construction (configuration copy,
 * registry, where toolgate's own files lie (state.c), journal, the
 * environment allowlist and the sandbox's probe, loop), tool registration,
 * events, cancellation from any thread (a mutex-protected queue drained by a
 * uv_async_t on the loop), cancel-on-signal, and tg_runtime_run_turn, which
 * checks every call, journals them all in one transaction, dispatches them in
 * call order and runs the loop until each has a committed result.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "artifact_tools.h"
#include "error.h"
#include "process.h"
#include "remote.h"
#include "runtime.h"
#include "tool.h"
#include "zalloc.h"

/* Variables of the runtime's environment every subprocess inherits; a
 * command tool gets more only by naming them (its "env" and "env_pass"). */
static const char *const env_allowlist[] = {"PATH", "HOME", "LANG", "TERM",
                                            NULL};

#define DEFAULT_PARALLEL 8
#define DEFAULT_KILL_GRACE_MS 2000

static void free_env(char **env)
{
    for (size_t i = 0; env && env[i]; i++)
        free(env[i]);
    free(env);
}

/* Adds "NAME=value" of the runtime's environment to env[*k] (room
 * reserved by the caller); a variable that is not set is skipped. */
static int env_capture_one(char **env, size_t *k, const char *name)
{
    const char *v = getenv(name);
    if (v == NULL)
        return 0;
    for (size_t i = 0; i < *k; i++)
        if (strncmp(env[i], name, strlen(name)) == 0 &&
            env[i][strlen(name)] == '=')
            return 0; /* listed by two tools */
    size_t nl = strlen(name), vl = strlen(v);
    char *e = malloc(nl + vl + 2);
    if (e == NULL)
        return TG_ENOMEM;
    memcpy(e, name, nl);
    e[nl] = '=';
    memcpy(e + nl + 1, v, vl + 1);
    env[(*k)++] = e;
    return 0;
}

static char **capture_env(void)
{
    size_t n = sizeof env_allowlist / sizeof env_allowlist[0];
    char **env = calloc(n, sizeof *env);
    size_t k = 0;
    if (env == NULL)
        return NULL;
    for (size_t i = 0; env_allowlist[i]; i++) {
        if (env_capture_one(env, &k, env_allowlist[i]) != 0) {
            free_env(env);
            return NULL;
        }
    }
    return env;
}

/* The values of every name a command tool passes on ("env_pass"), taken
 * now like the allowlist: a tool sees its own names only (process.c). */
static char **capture_pass(const tg__registry *reg)
{
    size_t n = 1, k = 0;
    for (size_t i = 0; i < tg__registry_count(reg); i++) {
        const tg__tool *t = tg__registry_at(reg, i);
        n += t->env_pass ? json_array_size(t->env_pass) : 0;
    }
    char **env = calloc(n, sizeof *env);
    if (env == NULL)
        return NULL;
    for (size_t i = 0; i < tg__registry_count(reg); i++) {
        const tg__tool *t = tg__registry_at(reg, i);
        size_t j;
        json_t *name; /* borrowed */
        json_array_foreach(t->env_pass, j, name)
        {
            if (env_capture_one(env, &k, json_string_value(name)) != 0) {
                free_env(env);
                return NULL;
            }
        }
    }
    return env;
}

static void on_async(uv_async_t *h)
{
    tg_runtime *rt = h->data;
    pthread_mutex_lock(&rt->mu);
    tg__cancel_req *r = rt->req_head;
    rt->req_head = rt->req_tail = NULL;
    pthread_mutex_unlock(&rt->mu);
    while (r != NULL) {
        tg__cancel_req *next = r->next;
        tg__cancel_apply(rt, r->id, r->by, r->reason, false);
        free(r);
        r = next;
    }
    /* answers to asks and elicitations (handoff.c) come the same way */
    tg__handoffs_drain(rt);
}

static void on_check(uv_check_t *h)
{
    tg_runtime *rt = h->data;
    if (rt->done_head != NULL || rt->idle_on)
        tg__commit(rt);
}

static void on_signal(uv_signal_t *h, int signum)
{
    tg_runtime *rt = h->data;
    tg__run *run = rt->current;
    char name[32], reason[64];
    if (run == NULL)
        return;
    run->signals++;
    snprintf(reason, sizeof reason, "interrupted by %s",
             tg__signal_name(signum, name));
    /* The second delivery does not wait for the grace period. */
    tg__cancel_apply(rt, NULL, "user", reason, run->signals > 1);
}

/* Retention pruned the last journal row naming an artifact: the spool
 * lets it go (it answers "released" from then on). */
static void release_artifact(void *ud, const char *artifact_id)
{
    tg_runtime *rt = ud;
    (void)tg__spool_release(rt->spool, artifact_id, NULL);
}

int tg_runtime_new(const tg_config *cfg, tg_runtime **out, tg_error *err)
{
    int rc;
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_runtime_new: out is NULL");
    *out = NULL;
    if (cfg == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_runtime_new: no config");
    tg_runtime *rt = calloc(1, sizeof *rt);
    if (rt == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    rt->devnull = -1;
    if (pthread_mutex_init(&rt->mu, NULL) != 0) {
        free(rt);
        return tg__error_set(err, TG_ENOMEM, "cannot create a mutex");
    }
    rt->cfg = tg__config_copy(cfg);
    rt->reg = tg__registry_new();
    rt->base_env = capture_env();
    if (rt->cfg == NULL || rt->reg == NULL || rt->base_env == NULL) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto fail;
    }
    rt->parallel = cfg->parallel > 0 ? cfg->parallel : DEFAULT_PARALLEL;
    rt->kill_grace_ms =
        cfg->kill_grace_ms >= 0 ? cfg->kill_grace_ms : DEFAULT_KILL_GRACE_MS;
    if ((rc = tg__registry_load(rt->reg, rt->cfg, err)) != 0 ||
        (rc = tg__policy_compile(rt->cfg->policy, &rt->policy, err)) != 0 ||
        (rc = tg__watchdog_start(&rt->watch, err)) != 0)
        goto fail;
    /* Before the journal opens: it must not follow a link a tool made. */
    if ((rc = tg__state_init(&rt->state, rt->cfg, err)) != 0)
        goto fail;
    tg__journal_options jopts = {
        .sync_full = rt->cfg->journal_sync_full,
        .commit_inline = rt->cfg->journal_commit_inline,
        .keep_days = rt->cfg->journal_keep_days,
        .max_rows = rt->cfg->journal_max_rows,
        .max_args_bytes = rt->cfg->max_args_bytes,
        /* the result rows' chain is keyed with the checksums' key */
        .hmac_key = rt->cfg->hmac_key,
        .hmac_key_len = rt->cfg->hmac_key_len,
    };
    if (rt->cfg->journal != NULL &&
        (rc = tg__journal_open_sqlite_opts(rt->cfg->journal, &jopts,
                                           &rt->journal, err)) != 0) {
        if (err != NULL)
            err->code = TG_EJOURNAL;
        rc = TG_EJOURNAL;
        goto fail;
    }
    /* The artifact store, and the tools that read it. */
    if (rt->cfg->spool_dir != NULL &&
        ((rc = tg__spool_open(rt->cfg->spool_dir,
                              (uint64_t)rt->cfg->spool_max_bytes, 0, &rt->spool,
                              err)) != 0 ||
         (rc = tg__artifact_tools_add(rt->reg, rt->cfg, rt->spool, err)) != 0))
        goto fail;
    if (rt->spool != NULL && rt->journal != NULL)
        tg__journal_on_release(rt->journal, release_artifact, rt);
    rt->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (rt->devnull < 0) {
        rc = tg__error_set(err, TG_EIO, "cannot open /dev/null: %s",
                           strerror(errno));
        goto fail;
    }
    /* The sandbox last: its probe runs bubblewrap as calls will. */
    if ((rt->pass_env = capture_pass(rt->reg)) == NULL) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = tg__sandbox_init(&rt->sandbox, rt->cfg, rt->reg, &rt->state,
                               rt->base_env, err)) != 0)
        goto fail;
    if ((rc = uv_loop_init(&rt->loop)) != 0) {
        rc = tg__error_set(err, TG_EINTERNAL,
                           "cannot create the event loop: %s", uv_strerror(rc));
        goto fail;
    }
    rt->loop.data = rt;
    /* Handles on a fresh loop cannot fail to initialise except for lack of
     * descriptors (the async handle's eventfd). */
    if ((rc = uv_async_init(&rt->loop, &rt->async, on_async)) != 0) {
        uv_loop_close(&rt->loop);
        rc = tg__error_set(err, TG_EINTERNAL,
                           "cannot create the event loop: %s", uv_strerror(rc));
        goto fail;
    }
    rt->async.data = rt;
    uv_check_init(&rt->loop, &rt->check);
    rt->check.data = rt;
    uv_check_start(&rt->check, on_check);
    uv_idle_init(&rt->loop, &rt->idle);
    rt->idle.data = rt;
    /* Only the cancel queue's wake-up keeps the loop alive between turns. */
    uv_unref((uv_handle_t *)&rt->check);
    rt->src = (tg__source_env){
        .loop = &rt->loop,
        .cfg = rt->cfg,
        .spool = rt->spool,
        .state_paths = (const char *const *)rt->state.refuse,
        .sandbox = &rt->sandbox,
        .base_env = rt->base_env,
        .pass_env = rt->pass_env,
        .devnull = rt->devnull,
        .kill_grace_ms = rt->kill_grace_ms,
        .watch = &rt->watch,
        .scratch = rt->scratch,
        .scratch_len = sizeof rt->scratch,
    };
    /* The MCP servers last: a failure now frees the whole runtime. */
    if ((rc = tg__rsrcs_init(rt, err)) != 0) {
        tg_runtime_free(rt);
        return rc;
    }
    *out = rt;
    return 0;
fail:
    tg__watchdog_stop(&rt->watch);
    tg__journal_close(rt->journal);
    tg__spool_free(rt->spool);
    tg__tools_cache_clear(rt);
    tg__policy_free(rt->policy);
    tg__registry_free(rt->reg);
    tg_config_free(rt->cfg);
    free_env(rt->base_env);
    free_env(rt->pass_env);
    tg__sandbox_cleanup(&rt->sandbox);
    tg__state_cleanup(&rt->state);
    if (rt->devnull >= 0)
        close(rt->devnull);
    pthread_mutex_destroy(&rt->mu);
    free(rt);
    return rc;
}

static void on_handle_closed(uv_handle_t *h)
{
    (void)h;
}

/* SIGPIPE from writing a tool's stdin after it exited must not kill the
 * host: it is blocked on the loop thread while the loop runs (the write then
 * fails with EPIPE) and any such pending signal is discarded afterwards. */
static void sigpipe_block(sigset_t *old)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &s, old);
}

static void sigpipe_restore(const sigset_t *old)
{
    if (sigismember(old, SIGPIPE))
        return; /* the host blocks it itself: what is pending is its own */
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGPIPE);
    struct timespec zero = {0, 0};
    while (sigtimedwait(&s, NULL, &zero) > 0)
        ;
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

static void admit_pending(tg_runtime *rt);

/* Ends every submitted turn before the runtime goes: the calls not yet
 * admitted end canceled without running, the others are canceled, and the
 * loop runs until each turn reported `done`. */
static void end_submitted(tg_runtime *rt)
{
    static const char why[] = "the runtime is shutting down";
    if (rt->nruns == 0)
        return;
    for (tg__run *r = rt->admit; r != NULL; r = r->rnext)
        (void)tg_turn_cancel_all(r->turn, "system", why, NULL);
    tg__cancel_apply(rt, NULL, "system", why, false);
    while (rt->nruns > 0) {
        admit_pending(rt);
        if (rt->nruns > 0)
            uv_run(&rt->loop, UV_RUN_ONCE);
    }
}

const char *tg_runtime_journal(const tg_runtime *rt)
{
    return rt != NULL && rt->journal != NULL ? rt->cfg->journal : NULL;
}

int tg_runtime_loop_store(tg_runtime *rt, tg_loop_store **out, tg_error *err)
{
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "no output pointer");
    *out = NULL;
    if (rt == NULL || rt->journal == NULL)
        return 0;
    if (rt->loop_store == NULL) {
        int rc = tg__loop_store_attach(rt->journal, &rt->loop_store, err);
        if (rc != 0)
            return rc;
    }
    *out = rt->loop_store;
    return 0;
}

const char *tg_runtime_spool_dir(const tg_runtime *rt)
{
    return rt != NULL && rt->spool != NULL ? rt->cfg->spool_dir : NULL;
}

int64_t tg_runtime_serve_task_after_ms(const tg_runtime *rt)
{
    return rt != NULL ? rt->cfg->serve_task_after_ms : 1000;
}

void tg_runtime_free(tg_runtime *rt)
{
    if (rt == NULL)
        return;
    /* First: no answer to an ask or an elicitation may wake the loop once
     * it closes. */
    tg__handoffs_detach(rt);
    sigset_t old;
    sigpipe_block(&old);
    end_submitted(rt);
    tg__rsrcs_close(rt); /* their servers' process groups end */
    uv_close((uv_handle_t *)&rt->async, on_handle_closed);
    uv_close((uv_handle_t *)&rt->check, on_handle_closed);
    uv_close((uv_handle_t *)&rt->idle, on_handle_closed);
    for (int i = 0; i < rt->nsigs; i++)
        uv_close((uv_handle_t *)&rt->sigs[i].h, on_handle_closed);
    /* Waits for closing handles and for handlers still running on the
     * thread pool after their deadline. */
    uv_run(&rt->loop, UV_RUN_DEFAULT);
    uv_loop_close(&rt->loop);
    sigpipe_restore(&old);
    tg__rsrcs_free(rt);
    tg__cancel_req *r = rt->req_head;
    while (r != NULL) {
        tg__cancel_req *next = r->next;
        free(r);
        r = next;
    }
    tg__watchdog_stop(&rt->watch);
    tg_loop_store_free(rt->loop_store); /* before the journal it writes */
    tg__journal_close(rt->journal);
    tg__spool_free(rt->spool);
    tg__tools_cache_clear(rt);
    tg__policy_free(rt->policy);
    tg__approvals_free(rt->approvals);
    tg__registry_free(rt->reg);
    tg_config_free(rt->cfg);
    free_env(rt->base_env);
    free_env(rt->pass_env);
    tg__sandbox_cleanup(&rt->sandbox);
    tg__state_cleanup(&rt->state);
    if (rt->devnull >= 0)
        close(rt->devnull);
    pthread_mutex_destroy(&rt->mu);
    tg__hmap_cleanup(&rt->jobs_by_id);
    free(rt->ccalls);
    free(rt->cresults);
    free(rt->jobs);
    free(rt);
}

void tg_runtime_set_approve(tg_runtime *rt, int approve)
{
    if (rt != NULL)
        rt->approve = approve != 0;
}

int tg_runtime_register(tg_runtime *rt, const char *name,
                        const char *description, const char *schema_json,
                        tg_handler_fn fn, void *user_data, unsigned flags,
                        tg_error *err)
{
    if (rt == NULL || name == NULL || fn == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_runtime_register needs a runtime, a name "
                             "and a handler");
    tg__tool *tool = NULL;
    int rc = tg__tool_new_handler(name, description, schema_json, fn, user_data,
                                  flags, &tool, err);
    if (rc != 0)
        return rc;
    return tg__registry_add(rt->reg, tool, err);
}

void tg_runtime_set_events(tg_runtime *rt, const tg_events *events, void *ud)
{
    if (rt == NULL)
        return;
    if (events != NULL)
        rt->ev = *events;
    else
        memset(&rt->ev, 0, sizeof rt->ev);
    rt->ev_ud = ud;
}

int tg_runtime_cancel(tg_runtime *rt, const char *call_id, const char *by,
                      const char *reason, tg_error *err)
{
    if (rt == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_runtime_cancel needs a runtime");
    if (by == NULL)
        by = "user";
    if (reason == NULL)
        reason = "canceled";
    size_t il = call_id ? strlen(call_id) + 1 : 0, bl = strlen(by) + 1,
           rl = strlen(reason) + 1;
    tg__cancel_req *r = malloc(sizeof *r + il + bl + rl);
    if (r == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    char *s = (char *)(r + 1);
    r->next = NULL;
    r->id = NULL;
    if (call_id != NULL) {
        memcpy(s, call_id, il);
        r->id = s;
        s += il;
    }
    memcpy(s, by, bl);
    r->by = s;
    s += bl;
    memcpy(s, reason, rl);
    r->reason = s;
    pthread_mutex_lock(&rt->mu);
    if (!rt->accepting) {
        /* No turn runs: there is nothing to cancel, and a request kept
         * until the next turn would cancel calls it never meant. */
        pthread_mutex_unlock(&rt->mu);
        free(r);
        return 0;
    }
    if (rt->req_tail)
        rt->req_tail->next = r;
    else
        rt->req_head = r;
    rt->req_tail = r;
    uv_async_send(&rt->async);
    pthread_mutex_unlock(&rt->mu);
    return 0;
}

int tg_runtime_cancel_on_signal(tg_runtime *rt, int signum, tg_error *err)
{
    if (rt == NULL || signum <= 0 || signum >= NSIG || signum == SIGKILL ||
        signum == SIGSTOP)
        return tg__error_set(err, TG_EINVAL, "cannot catch signal %d", signum);
    for (int i = 0; i < rt->nsigs; i++)
        if (rt->sigs[i].signum == signum)
            return 0;
    if (rt->nsigs == TG__MAX_SIGNALS)
        return tg__error_set(err, TG_ELIMIT, "at most %d cancel signals",
                             TG__MAX_SIGNALS);
    int rc = uv_signal_init(&rt->loop, &rt->sigs[rt->nsigs].h);
    if (rc != 0)
        return tg__error_set(err, TG_EINTERNAL, "cannot watch signal %d: %s",
                             signum, uv_strerror(rc));
    rt->sigs[rt->nsigs].h.data = rt;
    rt->sigs[rt->nsigs].signum = signum;
    rt->nsigs++;
    return 0;
}

/* Commits the running rows of calls[0..n) in one transaction. A
 * re-delivered call gets no running row but replies[i]: its recorded
 * result (replayed) or a refusal, with which it ends without running; it
 * is journaled at the commit like every result, as a row of its own. */
static int journal_begin(tg_runtime *rt, tg_call **calls, size_t n,
                         tg_result **replies, tg_error *err)
{
    tg_error e = {0};
    if (tg__journal_begin_dedup(rt->journal, calls, n, replies, &e) != 0) {
        if (err != NULL) {
            *err = e;
            err->code = TG_EJOURNAL;
        }
        return TG_EJOURNAL;
    }
    return 0;
}

/* journal_begin for the calls of one run. */
static int journal_begin_run(tg_runtime *rt, tg__run *run, tg_result **replies,
                             tg_error *err)
{
    tg_call **calls = malloc(run->n * sizeof *calls);
    if (calls == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    for (size_t i = 0; i < run->n; i++)
        calls[i] = run->jobs[i].call;
    int rc = journal_begin(rt, calls, run->n, replies, err);
    free(calls);
    return rc;
}

/* Checks job; a refusal completes it at once. Returns true when it may run.
 * Every call of a turn is checked before any starts, so an operator asked
 * about one (a policy `ask`) holds up no running tool. */
static bool check(tg_runtime *rt, tg__run *run, tg__job *job)
{
    bool oom = false;
    if (run->failed) {
        tg__job_complete(job, tg__result_canceled(job->call,
                                                  TG_EXECUTION_NOT_STARTED,
                                                  "system", "the turn failed"));
        return false;
    }
    tg_result *r = tg__check_call(rt, job, &oom);
    if (r != NULL || oom) {
        tg__job_complete(job, r);
        return false;
    }
    return true;
}

/* The checks that deferred the rest of theirs until every schema check of
 * the run on the pool had ended, in call order. */
static void finish_deferred(tg_runtime *rt, tg__run *run)
{
    run->in_checks = false;
    for (size_t i = 0; i < run->n; i++) {
        tg__job *job = &run->jobs[i];
        if (job->state != TG__JOB_NEW || !job->defer_rest)
            continue;
        job->defer_rest = false;
        bool oom = false;
        tg_result *r =
            run->failed
                ? tg__result_canceled(job->call, TG_EXECUTION_NOT_STARTED,
                                      "system", "the turn failed")
                : tg__check_call_rest(rt, job, &oom);
        if (r != NULL || oom)
            tg__job_complete(job, r);
    }
}

/* Starts (or queues) every checked job of the run, in call order. */
static void ready_all(tg_runtime *rt, tg__run *run)
{
    for (size_t i = 0; i < run->n; i++)
        if (run->jobs[i].state == TG__JOB_NEW)
            tg__job_ready(rt, &run->jobs[i]);
}

/* The run waits for schema checks on the pool: its unstarted calls join the
 * cancel table, so cancels by id reach them meanwhile. */
static void wait_checks(tg_runtime *rt, tg__run *run)
{
    run->in_checks = true;
    for (size_t i = 0; i < run->n; i++)
        if (run->jobs[i].state == TG__JOB_NEW ||
            run->jobs[i].state == TG__JOB_CHECKING)
            tg__hash_add(rt, &run->jobs[i]);
}

/* Some calls' schema checks went to the thread pool: waits for them with
 * the loop running, so signals and cancels are answered meanwhile, then
 * finishes the checks of the calls that deferred the rest of theirs. */
static void finish_checks(tg_runtime *rt, tg__run *run)
{
    wait_checks(rt, run);
    bool cancel_sent = false;
    while (run->checking > 0) {
        if (run->failed && !cancel_sent) {
            cancel_sent = true;
            tg__cancel_apply(rt, NULL, "system", "the turn failed", false);
        }
        uv_run(&rt->loop, UV_RUN_ONCE);
    }
    finish_deferred(rt, run);
}

void tg__run_checks_done(tg__run *run)
{
    finish_deferred(run->rt, run);
    ready_all(run->rt, run);
}

/* Gives the run one job per call of the turn that has no result yet, the
 * HMAC key of the runtime set on each. */
static void fill_jobs(tg_runtime *rt, tg__run *run)
{
    tg_turn *turn = run->turn;
    const unsigned char *key = rt->cfg->hmac_key;
    size_t keylen = key ? rt->cfg->hmac_key_len : 0;
    memset(run->jobs, 0, run->n * sizeof *run->jobs);
    for (size_t i = 0, k = 0; i < turn->n; i++) {
        if (turn->results[i] != NULL)
            continue;
        tg_call *call = turn->calls[i];
        if (call->hmac_key != key || call->hmac_key_len != keylen) {
            call->hmac_key = key;
            call->hmac_key_len = keylen;
            call->checksum[0] = '\0'; /* computed with another key */
            /* Computed now, while the key lives: the turn may outlive
             * the runtime that owns it. */
            if (key != NULL)
                (void)tg_call_checksum(call);
        }
        run->jobs[k].run = run;
        run->jobs[k].call = call;
        run->jobs[k].index = i;
        k++;
    }
}

/* How many calls of the turn have no result yet. */
static size_t unanswered(const tg_turn *turn)
{
    size_t n = 0;
    for (size_t i = 0; i < turn->n; i++)
        if (turn->results[i] == NULL)
            n++;
    return n;
}

/* Checks every job of a journaled run (replies[i], when not NULL, ends job
 * i with its recorded result instead). */
static void check_all(tg_runtime *rt, tg__run *run, tg_result **replies)
{
    for (size_t i = 0; i < run->n; i++) {
        if (run->jobs[i].state != TG__JOB_NEW) {
            /* canceled while its run waited for a source */
            if (replies != NULL)
                tg__result_free(replies[i]);
        } else if (replies != NULL && replies[i] != NULL)
            tg__job_complete(&run->jobs[i], replies[i]);
        else
            (void)check(rt, run, &run->jobs[i]);
    }
}

int tg_runtime_run_turn(tg_runtime *rt, tg_turn *turn, tg_error *err)
{
    if (rt == NULL || turn == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_runtime_run_turn needs a runtime and a turn");
    if (rt->current != NULL)
        return tg__error_set(err, TG_EINVAL,
                             "a turn is already running on this runtime");
    if (rt->nruns > 0)
        return tg__error_set(err, TG_EINVAL,
                             "submitted turns are running on this runtime");
    tg__run run;
    memset(&run, 0, sizeof run);
    run.rt = rt;
    run.turn = turn;
    run.n = unanswered(turn);
    if (run.n == 0)
        return 0;
    if (run.n > rt->jobs_cap && run.n <= SIZE_MAX / sizeof(tg__job)) {
        tg__job *j = malloc(run.n * sizeof *j);
        if (j != NULL) {
            free(rt->jobs);
            rt->jobs = j;
            rt->jobs_cap = run.n;
        }
    }
    run.jobs = run.n <= rt->jobs_cap ? rt->jobs : NULL;
    if (run.jobs == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    fill_jobs(rt, &run);
    if (rt->ev.accepted)
        for (size_t i = 0; i < run.n; i++)
            rt->ev.accepted(rt->ev_ud, run.jobs[i].call);
    tg_result **replies = NULL;
    if (rt->journal != NULL) {
        if ((replies = calloc(run.n, sizeof *replies)) == NULL)
            return tg__error_set(err, TG_ENOMEM, "out of memory");
        int rc = journal_begin_run(rt, &run, replies, err);
        if (rc != 0) {
            free(replies);
            return rc;
        }
    }

    rt->current = &run;
    rt->stopping = false;
    run.remaining = run.n;
    pthread_mutex_lock(&rt->mu);
    rt->accepting = true;
    pthread_mutex_unlock(&rt->mu);
    sigset_t old;
    sigpipe_block(&old);
    for (int i = 0; i < rt->nsigs; i++)
        uv_signal_start(&rt->sigs[i].h, on_signal, rt->sigs[i].signum);

    /* Calls to the tools of an MCP server not started yet (lazy) wait for
     * its tools, so that they are checked like any other. */
    if (rt->sources != NULL)
        tg__rsrcs_prepare(rt, turn->calls, turn->n, rt->cfg->timeout_ms);
    check_all(rt, &run, replies);
    free(replies);
    if (run.defer_rest)
        finish_checks(rt, &run);
    ready_all(rt, &run);
    bool cancel_sent = false;
    while (run.remaining > 0) {
        if (run.failed && !cancel_sent) {
            /* Out of memory or the journal failed: end the rest now. */
            cancel_sent = true;
            rt->stopping = true;
            tg__cancel_apply(rt, NULL, "system", "the turn failed", false);
        }
        uv_run(&rt->loop, UV_RUN_ONCE);
    }

    for (int i = 0; i < rt->nsigs; i++)
        uv_signal_stop(&rt->sigs[i].h);
    pthread_mutex_lock(&rt->mu);
    rt->accepting = false;
    tg__cancel_req *r = rt->req_head;
    rt->req_head = rt->req_tail = NULL;
    pthread_mutex_unlock(&rt->mu);
    while (r != NULL) {
        tg__cancel_req *next = r->next;
        free(r);
        r = next;
    }
    sigpipe_restore(&old);
    rt->current = NULL;
    rt->stopping = false;
    for (size_t i = 0; i < run.n; i++)
        tg__job_release(&run.jobs[i]);
    if (run.failed) {
        if (err != NULL)
            *err = run.err;
        return run.failed;
    }
    return 0;
}

/* ------------------------------------------------------ submitted turns */

static void accepting_set(tg_runtime *rt, bool on)
{
    pthread_mutex_lock(&rt->mu);
    rt->accepting = on;
    pthread_mutex_unlock(&rt->mu);
}

int tg_runtime_submit(tg_runtime *rt, tg_turn *turn, const tg_turn_ops *ops,
                      void *ud, tg_error *err)
{
    if (rt == NULL || turn == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_runtime_submit needs a runtime and a turn");
    if (rt->current != NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_runtime_run_turn is running on this runtime");
    if (rt->broken != 0) {
        if (err != NULL)
            *err = rt->broken_err;
        return rt->broken;
    }
    for (tg__run *r = rt->runs_head; r != NULL; r = r->rnext)
        if (r->turn == turn)
            return tg__error_set(err, TG_EINVAL,
                                 "this turn is submitted already");
    tg__run *run = tg__zalloc(sizeof *run);
    if (run == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    run->rt = rt;
    run->turn = turn;
    run->submitted = true;
    run->n = unanswered(turn);
    if (ops != NULL)
        run->ops = *ops;
    run->ud = ud;
    if (run->n > 0 &&
        (run->jobs = tg__zalloc_n(run->n, sizeof *run->jobs)) == NULL) {
        free(run);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    if (run->n > 0)
        fill_jobs(rt, run);
    run->remaining = run->n;
    run->rprev = rt->runs_tail;
    if (rt->runs_tail != NULL)
        rt->runs_tail->rnext = run;
    else
        rt->runs_head = run;
    rt->runs_tail = run;
    if (rt->admit == NULL)
        rt->admit = run;
    if (rt->nruns++ == 0)
        accepting_set(rt, true);
    return 0;
}

void tg__run_end(tg__run *run)
{
    tg_runtime *rt = run->rt;
    if (run->rprev != NULL)
        run->rprev->rnext = run->rnext;
    else
        rt->runs_head = run->rnext;
    if (run->rnext != NULL)
        run->rnext->rprev = run->rprev;
    else
        rt->runs_tail = run->rprev;
    if (rt->admit == run)
        rt->admit = run->rnext;
    if (--rt->nruns == 0)
        accepting_set(rt, false);
    tg__run_unwait_sources(run);
    for (size_t i = 0; i < run->n; i++)
        tg__job_release(&run->jobs[i]);
    if (run->ops.done != NULL)
        run->ops.done(run->ud, run->turn, run->failed,
                      run->failed ? &run->err : NULL);
    free(run->jobs);
    free(run);
}

/* Starts a journaled run: accepted, checked, started or queued, or waiting
 * for its schema checks on the pool, or first for the MCP sources whose
 * tools it names to list them (run_sources.c). */
static void run_begin(tg_runtime *rt, tg__run *run, tg_result **replies)
{
    /* A lazy MCP server this turn names is started, not waited for (this
     * runs on the loop): its calls are unknown until it is ready. */
    run->admitted = true;
    if (rt->sources != NULL) {
        tg__rsrcs_prepare(rt, run->turn->calls, run->turn->n, -1);
        if (tg__run_wait_sources(run, replies))
            return; /* tg__run_check goes on (run_sources.c) */
    }
    tg__run_check(run, replies);
}

void tg__run_check(tg__run *run, tg_result **replies)
{
    check_all(run->rt, run, replies);
    if (run->defer_rest && run->checking > 0)
        wait_checks(run->rt, run); /* tg__run_checks_done goes on */
    else
        tg__run_checks_done(run);
}

/* Admits every run submitted since the last step: one journal transaction
 * for all their calls, then each run's checks. A run without calls ends at
 * once; when the journal fails every run admitted with it fails. */
static void admit_pending(tg_runtime *rt)
{
    tg__run *first = rt->admit;
    if (first == NULL)
        return;
    size_t total = 0;
    for (tg__run *r = first; r != NULL; r = r->rnext)
        total += r->n;
    tg__run *last = rt->runs_tail;
    rt->admit = NULL; /* runs submitted from a callback wait for the next */
    tg_call **calls = NULL;
    tg_result **replies = NULL;
    tg_error e;
    tg__error_init(&e);
    int rc = 0;
    if (rt->journal != NULL && total > 0) {
        calls = malloc(total * sizeof *calls);
        replies = calloc(total, sizeof *replies);
        if (calls == NULL || replies == NULL)
            rc = tg__error_set(&e, TG_ENOMEM, "out of memory");
    }
    for (tg__run *r = first; rc == 0; r = r->rnext) {
        if (rt->ev.accepted)
            for (size_t i = 0; i < r->n; i++)
                rt->ev.accepted(rt->ev_ud, r->jobs[i].call);
        if (r == last)
            break;
    }
    if (rc == 0 && calls != NULL) {
        size_t k = 0;
        for (tg__run *r = first;; r = r->rnext) {
            for (size_t i = 0; i < r->n; i++)
                calls[k++] = r->jobs[i].call;
            if (r == last)
                break;
        }
        rc = journal_begin(rt, calls, total, replies, &e);
    }
    size_t off = 0;
    for (tg__run *r = first, *next;; r = next) {
        bool at_last = r == last;
        next = r->rnext;
        size_t n = r->n;
        if (rc != 0) {
            r->failed = rc;
            r->err = e;
            r->remaining = 0;
            tg__run_end(r);
        } else if (n == 0) {
            tg__run_end(r);
        } else {
            run_begin(rt, r, replies ? replies + off : NULL);
        }
        off += n;
        if (at_last)
            break;
    }
    free(calls);
    free(replies);
}

size_t tg_runtime_pending(const tg_runtime *rt)
{
    return rt != NULL ? rt->nruns : 0;
}

int tg_runtime_fd(const tg_runtime *rt)
{
    return rt != NULL ? uv_backend_fd(&rt->loop) : -1;
}

int tg_runtime_timeout(const tg_runtime *rt)
{
    if (rt == NULL)
        return -1;
    if (rt->admit != NULL)
        return 0;
    return uv_backend_timeout(&rt->loop);
}

size_t tg_runtime_step(tg_runtime *rt)
{
    if (rt == NULL)
        return 0;
    /* No signal mask work here (three system calls a step): a caller that
     * serves ignores or blocks SIGPIPE itself, as the contract says. */
    admit_pending(rt);
    uv_run(&rt->loop, UV_RUN_NOWAIT);
    return rt->nruns;
}

size_t tg_runtime_flush(tg_runtime *rt)
{
    if (rt == NULL)
        return 0;
    admit_pending(rt);
    if (rt->done_head != NULL)
        tg__commit(rt);
    return rt->nruns;
}
