/* SPDX-License-Identifier: MIT */
/*
 * runtime.h - the inside of a tg_runtime, shared by the files of the exec
 * layer above the tool sources: the runtime itself (one libuv loop, its
 * tools, journal, limits and event callbacks), the per-call job that moves
 * through queued -> running -> done, and the entry points of the scheduler,
 * the checks, asks and hooks. The tool sources (command.c, handler.c) do
 * not include it: they see the runtime through source.h.
 *
 * Threading: everything here is touched only on the loop thread (the thread
 * that calls tg_runtime_run_turn / tg_runtime_free), except the cancel queue
 * and the queue of answered asks (under `mu`).
 */
#ifndef TG_EXEC_RUNTIME_H
#define TG_EXEC_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "buf.h"
#include "config.h"
#include "hashmap.h"
#include "handler_ctx.h"
#include "journal.h"
#include "record.h"
#include "policy.h"
#include "registry.h"
#include "schema.h"
#include "spool.h"
#include "sandbox.h"
#include "shape.h"
#include "source.h"
#include "state.h"
#include "template.h"
#include "text.h"
#include "turn.h"
#include "watchdog.h"

typedef struct tg__job tg__job;
typedef struct tg__run tg__run;
typedef struct tg__approvals tg__approvals;
typedef struct tg__hook tg__hook;
typedef struct tg__schema_work tg__schema_work;
/* How a stage of hooks ends (hooks.c), handed in by the scheduler:
 * `proceed` when every before hook allowed (the tool starts; result NULL),
 * else with the job's result (taken; NULL: out of memory). */
typedef void (*tg__hooks_end_fn)(tg__job *job, bool proceed, tg_result *result);

typedef enum tg__job_state {
    TG__JOB_NEW = 0,
    TG__JOB_QUEUED,
    TG__JOB_RUNNING,
    TG__JOB_HOOK,     /* a before or after hook runs for it (hooks.c) */
    TG__JOB_CHECKING, /* its schema check runs on the pool (schema_work.c) */
    TG__JOB_ASKING,   /* waits for the answer to a policy `ask` (ask.c) */
    TG__JOB_DONE
} tg__job_state;

/* One call of a turn on its way to a result. Jobs live in their run's array;
 * a tool source reports on a running job through the sink the scheduler
 * hands it (source.h) until it is done, and may outlive the run. */
struct tg__job {
    tg__run *run;
    tg_call *call;        /* borrowed from the turn */
    const tg__tool *tool; /* borrowed from the registry */
    size_t index;         /* slot in the turn */
    tg__job_state state;
    bool holds_slot;      /* counts against the parallel limit */
    tg_result *result;    /* waiting for the group commit */
    tg__job *next_done;   /* list of results waiting for the commit */
    tg__job *prev, *next; /* queue or running list */
    tg__job *hnext;       /* next live job with the same call id */
    bool in_hash;         /* in jobs_by_id: cancellable by id */
    /* command tools: prepared by the checks, handed to the process */
    char **argv;
    char *stdin_data;
    size_t stdin_len;
    bool has_stdin;
    /* while running: the source that runs it and the state its cancel
     * takes (NULL once it reported done, or for an inline source) */
    const tg__source_ops *source;
    void *src;
    uint64_t start_ns;
    /* what the gate decided before the tool ran (the policy's verdict),
     * merged into the result's `decisions` when it completes (new ref) */
    json_t *decisions;
    /* hooks (hooks.c): the hook running for it, how far it is, and where
     * its stage of hooks ends (the scheduler's) */
    tg__hook *hook;
    int hook_stage; /* TG__HOOKS_* */
    tg__hooks_end_fn hook_end;
    /* checks: its schema check on the pool, and whether the checks after
     * the schema (tg__check_call_rest) are still to run */
    tg__schema_work *sw;
    bool defer_rest;
    /* the ask it waits for in TG__JOB_ASKING (ask.c), else NULL */
    tg_ask *ask;
};

/* One tg_runtime_run_turn in progress. */
struct tg__run {
    tg_runtime *rt;
    tg_turn *turn;
    tg__job *jobs;
    size_t n;
    size_t remaining; /* jobs whose result is not committed (or dropped) */
    int failed;       /* 0, or TG_EJOURNAL / TG_ENOMEM: the turn fails */
    tg_error err;     /* what failed */
    int signals;      /* deliveries of a cancel signal during this run */
    /* schema checks on the thread pool (schema_work.c): how many run, and
     * whether the run waits for them (its unstarted calls can be canceled
     * then); once one started, later calls defer the rest of their checks */
    size_t checking;
    bool in_checks;
    bool defer_rest;
    /* a turn of tg_runtime_submit: its own jobs (owned), callbacks, and
     * its place in the runtime's list of live runs (admitted or waiting
     * for admission at the next step) */
    bool submitted;
    bool admitted;    /* journaled and checked */
    bool cancel_sent; /* its failure canceled its remaining jobs */
    tg_turn_ops ops;
    void *ud;
    tg__run *rprev, *rnext;
    /* a submitted run waiting for MCP sources to list their tools before
     * its checks (run_sources.c): one waiter per source (owned), how many
     * are still to come, and its journal replies meanwhile (owned) */
    struct tg__srcwait *srcwaits;
    size_t nsrcwaits, srcwaiting;
    tg_result **replies;
};

/* A cancel request queued from any thread; strings live after the struct. */
typedef struct tg__cancel_req {
    struct tg__cancel_req *next;
    const char *id; /* NULL: every call */
    const char *by;
    const char *reason;
} tg__cancel_req;

#define TG__MAX_SIGNALS 8
#define TG__SCRATCH 65536

struct tg_runtime {
    tg_config *cfg;
    tg__registry *reg;
    tg__policy *policy;     /* compiled cfg->policy */
    bool approve;           /* every `ask` is answered yes (--approve) */
    tg_approve_fn approver; /* asks an operator, or NULL */
    void *approver_ud;
    tg__approvals *approvals; /* what operators approved (approval.c) */
    /* asynchronous asks (ask.c): the asker; elicitations (elicit.c): the
     * handler; the questions of both not yet answered on the loop (loop
     * thread only); answers from any thread (under mu) (handoff.c) */
    tg_ask_fn ask_fn;
    void *ask_ud;
    tg_elicit_fn elicit_fn;
    void *elicit_ud;
    struct tg__handoff *handoffs;
    struct tg__handoff *answered_head, *answered_tail;
    tg__watchdog watch;   /* kills the tool groups left when it ends */
    tg__journal *journal; /* NULL when off */
    /* the loop store on the journal's connection (tg_runtime_loop_store),
     * NULL until asked for */
    tg_loop_store *loop_store;
    tg__state state; /* toolgate's own files and what keeps tools from
                        them (state.h) */
    tg_spool *spool; /* the artifact store, NULL when off */
    /* tg_runtime_tools' last text per format (tools_render.c), valid
     * while the registry's generation is tools_gen and the spool offers
     * the same ids (tools_ids, NULL: none listed) */
    struct {
        const void *fmt; /* the tg__format rendered, NULL: slot free */
        char *text;
    } tools_cache[8];
    json_t *tools_ids;
    unsigned long tools_gen;
    uv_loop_t loop;
    uv_async_t async; /* wakes the loop for cross-thread cancels */
    uv_check_t check; /* group commit after each poll phase */
    uv_idle_t idle;   /* keeps poll from blocking while results wait */
    bool idle_on;
    tg_events ev;
    void *ev_ud;
    int parallel;
    int64_t kill_grace_ms;
    /* environment handed to subprocesses: the allowlisted variables as they
     * were when the runtime was made, "NAME=value", NULL-terminated */
    char **base_env;
    /* the sandbox (sandbox.c): the values of the tools' env_pass names as
     * they were when the runtime was made ("NAME=value", NULL-terminated),
     * and how command tools run */
    char **pass_env;
    tg__sandbox sandbox;
    int devnull; /* stdin of commands without a stdin template */
    /* submitted turns (tg_runtime_submit): live runs in submission order,
     * how many, and the first not yet admitted (all after it are not) */
    tg__run *runs_head, *runs_tail;
    size_t nruns;
    tg__run *admit;
    int broken; /* 0, or the failure (TG_EJOURNAL) that stops submits */
    tg_error broken_err;
    /* cancel-on-signal */
    struct {
        int signum;
        uv_signal_t h;
    } sigs[TG__MAX_SIGNALS];
    int nsigs;
    /* cross-thread cancels */
    pthread_mutex_t mu;
    tg__cancel_req *req_head, *req_tail;
    bool accepting; /* a turn runs: requests are kept (under mu) */
    /* scheduling */
    tg__run *current;
    tg__job *queue_head, *queue_tail;
    tg__job *run_head, *run_tail;
    size_t running; /* jobs holding a parallel slot */
    bool in_dispatch;
    bool stopping; /* the journal failed: start nothing more */
    /* cancellable jobs by call id: id -> the newest job with it, which
     * chains to the others through hnext (scheduler.c) */
    tg__hmap jobs_by_id;
    /* results waiting for the group commit */
    tg__job *done_head, *done_tail;
    size_t ndone;
    tg_call **ccalls;
    tg_result **cresults;
    size_t ccap;
    /* the job array of the running turn, kept for the next one (a fresh
     * one per turn is fresh memory, every page faulted in again) */
    tg__job *jobs;
    size_t jobs_cap;
    /* the MCP servers behind it (remote.h), newest first */
    struct tg__rsrc *sources;
    /* what the tool sources see of it (source.h) */
    tg__source_env src;
    char scratch[TG__SCRATCH]; /* read buffer shared by every pipe */
};

/* ------------------------------------------------------------ scheduler */

/* Ends a job with `result` (ownership taken; NULL means out of memory and
 * fails the turn with TG_ENOMEM): frees its slot, queues the result for the
 * group commit, and starts the next queued job. */
void tg__job_complete(tg__job *job, tg_result *result);
/* Cancels matching live jobs (call_id NULL: all). `hard` kills at once. */
void tg__cancel_apply(tg_runtime *rt, const char *call_id, const char *by,
                      const char *reason, bool hard);
/* The group commit: journals the waiting results, stores them in their turns
 * and emits `finished`. Called from the check handle. */
void tg__commit(tg_runtime *rt);
/* Frees tg_runtime_tools' cached texts (tools_render.c); the runtime's
 * end calls it. */
void tg__tools_cache_clear(tg_runtime *rt);
/* Starts a checked job (state TG__JOB_NEW) now, or queues it behind the
 * parallel limit; a job of a failed run ends canceled instead. */
void tg__job_ready(tg_runtime *rt, tg__job *job);
/* Starts queued jobs up to the parallel limit. */
void tg__dispatch(tg_runtime *rt);
/* Starts one job now: its before hooks, or its events and its source. */
void tg__job_start(tg_runtime *rt, tg__job *job);
void tg__queue_push(tg_runtime *rt, tg__job *job);
/* Makes job cancellable by its call id (a no-op when it is already); when
 * memory runs out it stays cancellable only with the rest of its turn. */
void tg__hash_add(tg_runtime *rt, tg__job *job);
/* Releases the per-job preparation (argv, stdin). */
void tg__job_release(tg__job *job);

/* ---------------------------------------------------------------- checks */

/* Runs the pre-run checks of job->call in order (pre-error, unknown tool,
 * argument size, checksum, schema, policy, command templates). Returns NULL
 * when the call may run (job->tool and the command preparation are filled),
 * else a result with execution not_started. Sets *oom on allocation
 * failure. Two other ways to return NULL: the schema check went to the
 * thread pool (job->state TG__JOB_CHECKING: schema_work.c completes the job
 * or leaves it TG__JOB_NEW with defer_rest), or an earlier call's did and
 * job->defer_rest is set: then tg__check_call_rest finishes the checks. */
tg_result *tg__check_call(tg_runtime *rt, tg__job *job, bool *oom);
/* The checks after the schema (policy, command templates, a handler), as
 * tg__check_call returns. */
tg_result *tg__check_call_rest(tg_runtime *rt, tg__job *job, bool *oom);
/* The schema check of call's arguments within budget (any thread: it
 * touches only the call, which must not be used elsewhere meanwhile).
 * Returns NULL when they are valid (or limits.repair made them so: the call
 * then holds the repaired arguments), else INVALID_ARGUMENTS or
 * SCHEMA_TOO_COSTLY (not_started), also when budget ran out
 * (budget->exhausted). NULL too when budget->stop stopped it: the caller
 * looks at its flag. Sets *oom on allocation failure. */
tg_result *tg__check_schema(const tg_config *cfg, tg_call *call,
                            const tg__tool *tool, tg__schema_budget *budget,
                            bool *oom);

/* schema_work.c: the schema check of job on the thread pool with the whole
 * of limits.max_validation_steps, for arguments the loop thread's slice did
 * not finish. Sets job->state TG__JOB_CHECKING and returns NULL; the job
 * ends with its refusal or `canceled`, or goes back to TG__JOB_NEW with
 * defer_rest. A result (or *oom) when the work cannot be queued. */
tg_result *tg__schema_work_start(tg_runtime *rt, tg__job *job, bool *oom);
/* Stops the schema check of a TG__JOB_CHECKING job: it ends `canceled`
 * (not_started, by and reason copied) as soon as the pool thread sees it. */
void tg__schema_work_cancel(tg__job *job, const char *by, const char *reason);

/* An `ask` of the policy about call: approved by --approve, by an earlier
 * approval of the same tool and arguments or of the tool for the session,
 * or (when `prompt`) by the runtime's approver now. Returns 1 with
 * *approved_by (a static text) when it may run, 0 when not, TG_ENOMEM. */
int tg__approval_ask(tg_runtime *rt, const tg_call *call, const char *reason,
                     bool prompt, const char **approved_by);
/* Keeps an operator's YES (bound to call's checksum) or ALWAYS (the tool)
 * for the rest of the runtime's life; NO keeps nothing. Returns 0 with
 * *approved_by (a static text for the decisions; NULL for NO), or
 * TG_ENOMEM. */
int tg__approval_keep(tg_runtime *rt, const tg_call *call, tg_approval answer,
                      const char **approved_by);
void tg__approvals_free(tg__approvals *a);

/* ------------------------------------------------------------ handoffs */
/* handoff.c: a question handed to someone who answers later from any
 * thread - an ask (ask.c), an elicitation (elicit.c). Each kind embeds a
 * tg__handoff first and says what its answer, its detach and its end do. */
typedef struct tg__handoff tg__handoff;
typedef struct tg__handoff_ops {
    /* Loop thread: the answer was taken (the runtime still holds h). */
    void (*apply)(tg_runtime *rt, tg__handoff *h);
    /* Loop thread: the runtime is being freed and h is not answered on
     * the loop yet: end what waits for it (the runtime lets go next). */
    void (*detach)(tg_runtime *rt, tg__handoff *h);
    /* The last holder let go (any thread): free h. */
    void (*destroy)(tg__handoff *h);
} tg__handoff_ops;
struct tg__handoff {
    const tg__handoff_ops *ops;
    pthread_mutex_t mu;
    int holders;                /* the runtime and the answerer, under mu */
    tg_runtime *rt;             /* NULL once the runtime let go (under mu) */
    bool answered;              /* under mu */
    tg__handoff *prev, *next;   /* rt->handoffs (loop thread) */
    tg__handoff *next_answered; /* rt->answered_head, under rt->mu */
};
/* Links h (its kind's fields set by the caller) into rt->handoffs with
 * both holders. Loop thread. 0 or TG_ENOMEM (h untouched otherwise). */
int tg__handoff_init(tg_runtime *rt, tg__handoff *h,
                     const tg__handoff_ops *ops);
/* The answerer's first step, any thread: 0 with h->mu held (store the
 * answer, then tg__handoff_post), or TG_EINVAL when h was answered. */
int tg__handoff_claim(tg__handoff *h);
/* After a claim: queues h to the loop (unless the runtime let go), the
 * answerer lets go, h->mu is released. h may be freed on return. */
void tg__handoff_post(tg__handoff *h);
/* Takes the queued answers (loop thread; the async handle calls it):
 * each handoff's apply, then the runtime lets go of it. */
void tg__handoffs_drain(tg_runtime *rt);
/* Before the runtime is freed: every handoff's detach, then the runtime
 * lets go of all; an answer after this is accepted and ignored. */
void tg__handoffs_detach(tg_runtime *rt);
/* The `detail` of an answer (an ask's, an elicitation's) as kept: a copy
 * of at most 1,024 bytes of text, cut before a UTF-8 sequence it would
 * split, invalid UTF-8 replaced (caller frees); NULL on out of memory. */
char *tg__detail_copy(const char *text);

/* ---------------------------------------------------------------- asks */
/* ask.c: a policy `ask` put to rt->ask_fn, answered later from any thread
 * (tg_ask_answer). A tg_ask is held by the runtime until its answer was
 * taken on the loop (or the runtime is freed) and by the asker until it
 * answers; whichever lets go last frees it. */

/* Puts the ask about job's call to rt->ask_fn: the job becomes
 * TG__JOB_ASKING, holds no slot, and is cancellable by id and with
 * everything (tg__asks_cancel_all). `v` is the policy's verdict (copied).
 * Returns 0, or TG_ENOMEM (the job is untouched). */
int tg__ask_start(tg_runtime *rt, tg__job *job, const tg__policy_verdict *v);
/* Ends a TG__JOB_ASKING job `canceled` (not_started, by and reason); its ask
 * stays the asker's to answer. */
void tg__ask_cancel(tg__job *job, const char *by, const char *reason);
/* tg__ask_cancel on every job waiting for an answer. */
void tg__asks_cancel_all(tg_runtime *rt, const char *by, const char *reason);
/* (An answer taken on the loop: a job still waiting goes on through
 * tg__check_answered and tg__job_ready, or ends with its refusal; when the
 * runtime is freed a job still waiting ends `canceled` by "system".) */

/* ------------------------------------------------------------ elicitations */
/* elicit.c: the sink's `elicit` and `elicit_drop` (source.h) for a job
 * (ctx): an elicitation a source raised, put to rt->elicit_fn and
 * recorded in the job's decisions.elicitation. */
int tg__elicit_raise(void *ctx, const tg__elicit_req *req, tg_elicit **out);
void tg__elicit_drop(void *ctx, tg_elicit *el, const char *action);

/* check.c: a job's ask was answered (ask.c): the answer is kept
 * (tg__approval_keep) and recorded in decisions.policy with `detail`
 * (may be NULL), and on YES or ALWAYS the checks after the policy run.
 * NULL when the call may run, else its refusal (denied on NO); sets *oom
 * on allocation failure. */
tg_result *tg__check_answered(tg_runtime *rt, tg__job *job,
                              const tg__policy_verdict *v, tg_approval answer,
                              const char *detail, bool *oom);

/* ------------------------------------------------------------ hooks */
/* hooks.c: the before and after hooks of cfg->hooks (docs/configuration.md).
 * Each hook is a subprocess of its own (own process group, the watchdog, its
 * own deadline) run on the thread pool, one hook at a time per job, so the loop
 * never waits for one. Before hooks run when a checked job would start
 * (tg__job_start) and may allow, deny, cancel or rewrite the arguments;
 * after hooks run on the result of a tool that ran (success or error) and
 * may replace its payload. Every decision goes into the job's decisions
 * under "hooks". The scheduler owns the job meanwhile: it makes the job
 * TG__JOB_HOOK holding a slot (cancelable, tg__hooks_cancel) before a stage
 * starts, and a stage ends through the tg__hooks_end_fn it handed in. */

/* How far a job is through its hooks. */
enum {
    TG__HOOKS_NONE = 0, /* before hooks not run yet */
    TG__HOOKS_BEFORE,   /* before hooks running */
    TG__HOOKS_TOOL,     /* passed them: the tool runs */
    TG__HOOKS_AFTER,    /* after hooks running over its result */
    TG__HOOKS_DONE      /* its result is final */
};

/* Whether the configuration has hooks of a stage (TG__HOOKS_BEFORE or
 * TG__HOOKS_AFTER). Cheap: a NULL check when there are none. */
bool tg__hooks_have(const tg_runtime *rt, int stage);
/* Runs the before hooks of a checked job (tg__job_start calls it). The
 * stage ends with end(job, false, r) (denied, canceled by policy, or NULL
 * on out of memory) or, when every hook allowed, end(job, true, NULL) with
 * hook_stage TG__HOOKS_TOOL and possibly rewritten arguments. */
void tg__hooks_before(tg_runtime *rt, tg__job *job, tg__hooks_end_fn end);
/* Whether the after hooks review `result` (tg__job_complete asks). */
bool tg__hooks_after_wanted(const tg_runtime *rt, const tg__job *job,
                            const tg_result *result);
/* Runs the after hooks over result (taken); the stage ends with end(job,
 * false, final result) (hook_stage TG__HOOKS_DONE). */
void tg__hooks_after(tg_runtime *rt, tg__job *job, tg_result *result,
                     tg__hooks_end_fn end);
/* Ends the stage of a job whose hook is running with `canceled` (execution
 * not_started before the tool, as its result had it after); the hook is
 * killed in the background. */
void tg__hooks_cancel(tg__job *job, const char *by, const char *reason);

/* check.c: the command preparation (argv and stdin templates) of a command
 * tool's job again, after a hook rewrote its arguments; job->argv and the
 * stdin text must be free. NULL when it may run, else a refusal. */
tg_result *tg__check_prepare_command(tg_runtime *rt, tg__job *job, bool *oom);
/* check.c: the policy again, for arguments a hook rewrote (an approval is
 * bound to the arguments it saw; nobody is asked now). NULL when it may
 * run, else a refusal; the verdict goes to decisions.policy_after_rewrite. */
tg_result *tg__check_policy_again(tg_runtime *rt, tg__job *job, bool *oom);

/* coerce.c (limits.repair): from the `type` violations of report, a copy
 * of args (borrowed) with each quoted number or boolean the schema wants
 * unquoted. Returns 1 with *out the copy (new ref), 0 when nothing could
 * be coerced, or TG_ENOMEM. */
int tg__coerce_args(const tg_schema *schema, const tg__schema_report *report,
                    const json_t *args, json_t **out);

/* runtime.c, for the scheduler: a submitted run's last result was
 * committed, or it failed: reports `done` and frees it. */
void tg__run_end(tg__run *run);
/* schema_work.c: the last schema check of a submitted run ended: finishes
 * the checks that waited for it and readies its jobs. */
void tg__run_checks_done(tg__run *run);
/* runtime.c: the checks of a journaled run (replies[i], when not NULL,
 * ends job i with its recorded result; jobs ended meanwhile are skipped,
 * their replies freed), then its jobs start, queue or wait. */
void tg__run_check(tg__run *run, tg_result **replies);
/* run_sources.c: when calls of the submitted run name tools of MCP sources
 * still starting, parks the run until every one is ready or failed
 * (replies copied) and returns true; tg__run_check follows. False: nothing
 * to wait for (or no memory to wait with). */
bool tg__run_wait_sources(tg__run *run, tg_result **replies);
/* run_sources.c: a parked run that ends lets go of its sources. */
void tg__run_unwait_sources(tg__run *run);
/* Cancels every live job of one run (scheduler.c). */
void tg__run_cancel(tg__run *run, const char *by, const char *reason);

#endif
