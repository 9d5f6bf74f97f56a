/* SPDX-License-Identifier: MIT */
/*
 * source.h - the tool source interface. A tool source executes the calls
 * of one kind of tool: command tools (command.c: a subprocess in its own
 * process group, sandboxed), in-process handlers (handler.c: inline on the
 * loop thread, or on libuv's thread pool), and, next, the MCP servers
 * behind toolgate (src/remote/).
 *
 * The scheduler (scheduler.c) owns a call's lifecycle: its slot under the
 * parallel limit, its deadline budget, cancellation by id or all at once,
 * what happens to its result (shaping to the tool's declared output, the
 * after hooks, the trust envelope) and the journal commit. It hands a
 * source one started call (tg__source_call) with the callbacks the source
 * reports through (tg__source_sink). A source only executes: it starts the
 * call, streams its output chunks as they come, stops it when its deadline
 * passes or it is canceled, and ends it with exactly one result.
 *
 * Sources see the runtime only through tg__source_env and talk back only
 * through the sink: they never include runtime.h nor call the scheduler,
 * so control flows one way (scheduler -> source -> sink).
 *
 * Adding a source: fill a tg__source_ops in a file of its own and put it in
 * the table of sources.c, the one place that maps a tool to its source.
 * This header includes nothing of the exec layer, so a source that lives
 * below it (src/remote/) can implement it.
 *
 * Threading: the loop thread. A source that works on other threads (the
 * handler pool) calls the sink from the loop thread only.
 */
#ifndef TG_EXEC_SOURCE_H
#define TG_EXEC_SOURCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "record.h"
#include "spool.h"
#include "tool.h"

/* What the command source needs of the exec layer (sandbox.h, watchdog.h);
 * opaque to the others. */
typedef struct tg__sandbox tg__sandbox;
typedef struct tg__watchdog tg__watchdog;

/* What every source runs with: the runtime's shared resources, set once
 * when the runtime is made and valid until it is freed (all borrowed). */
typedef struct tg__source_env {
    uv_loop_t *loop;
    const tg_config *cfg; /* limits, workspace, cwd */
    tg_spool *spool;      /* the artifact store; NULL: off */
    /* toolgate's own files inside the workspace, which tools must not
     * reach (NULL-terminated; tg_handler_state_paths) */
    const char *const *state_paths;
    /* subprocesses */
    const tg__sandbox *sandbox;
    char **base_env; /* the allowlisted environment, "NAME=value" */
    char **pass_env; /* the values of the tools' env_pass names */
    int devnull;     /* stdin of commands without one */
    int64_t kill_grace_ms;
    const tg__watchdog *watch; /* record every tool group while it runs */
    char *scratch;             /* read buffer shared by the loop's pipes */
    size_t scratch_len;
} tg__source_env;

/* An elicitation a source raised while running a call (an MCP server
 * asks its user for input), for the sink's `elicit`. Borrowed. */
typedef struct tg__elicit_req {
    const char *source; /* the source's name */
    const char *params; /* the ElicitRequest's params, JSON text */
    size_t len;
    /* The answer, on the loop, once (unless the source dropped it first):
     * result is an ElicitResult's JSON text ({"action":"accept",
     * "content":{...}}, decline, cancel), borrowed for the call. */
    void (*answered)(void *ud, tg_elicit *el, const char *result, size_t len);
    void *ud;
} tg__elicit_req;

/* How a source reports on one call: the scheduler's callbacks and their
 * context (the call's job). */
typedef struct tg__source_sink {
    /* A chunk of the call's output as it arrives (data borrowed for the
     * call only): stream 1 the tool's output (stdout, a handler's text),
     * 2 what it logs (stderr), 3 progress it reports (one line
     * "progress P[/T][: MESSAGE]\n", toolgate.h). Becomes the `output`
     * events. */
    void (*output)(void *ctx, int stream, const char *data, size_t len);
    /* Records how the source runs the call under `key` of the result's
     * decisions ("sandbox": how a command is confined). value taken (NULL
     * is out of memory). Returns 0 or TG_ENOMEM. Before done only. */
    int (*decide)(void *ctx, const char *key, json_t *value);
    /* The call ended with `result` (taken; NULL: out of memory, which
     * fails the turn). Exactly once per started call, possibly from inside
     * start. Afterwards the source touches neither ctx nor anything the
     * tg__source_call lent it, and its state is never canceled. */
    void (*done)(void *ctx, tg_result *result);
    void *ctx;
    /* Puts an elicitation to the runtime's handler (tg_runtime_set_elicit;
     * elicit.c) and records it in the call's decisions.elicitation.
     * Returns 0 with *out set: the answer comes through req->answered,
     * unless the source lets go first with elicit_drop (it must, before
     * done, for each one not answered). Else the source declines it
     * itself (recorded so): TG_ENOTFOUND when no handler is set, TG_EINVAL
     * when the request is malformed (no requestedSchema object in a form,
     * one that does not compile), TG_ENOMEM. Before done only. */
    int (*elicit)(void *ctx, const tg__elicit_req *req, tg_elicit **out);
    /* The source lets go of an elicitation that was not answered (its
     * call ends); `action` is what the source answered the server
     * ("cancel"), for the decisions. */
    void (*elicit_drop)(void *ctx, tg_elicit *el, const char *action);
} tg__source_sink;

/* One call handed to a source. The struct itself is the caller's (copy
 * what is kept); what it points to is borrowed as said. */
typedef struct tg__source_call {
    const tg__source_env *env;
    const tg_call *call;  /* borrowed until done */
    const tg__tool *tool; /* borrowed: lives as long as the runtime */
    /* The deadline, counted from start; 0: none. When it passes the
     * source stops the call and ends it with tg__result_timeout(call,
     * budget_ms) (execution not_started if nothing ran yet). */
    int64_t budget_ms;
    uint64_t start_ns; /* when it started (tg__mono_ns): its duration_ms */
    /* No other call holds a slot: a short blocking step on the loop
     * thread stalls nobody. */
    bool alone;
    /* A command tool's call as the checks prepared it (template.c): argv
     * (NULL-terminated, borrowed until done) and, when has_stdin, the
     * stdin text of stdin_len bytes at *stdin_text, which the source may
     * take (it sets *stdin_text to NULL and frees it; what it leaves the
     * scheduler frees). stdin_text is read only when has_stdin. */
    char *const *argv;
    char **stdin_text;
    size_t stdin_len;
    bool has_stdin;
    tg__source_sink sink;
} tg__source_call;

/* start runs the call to its end on the loop thread (done is called before
 * it returns): the call takes no parallel slot and cannot be canceled. */
#define TG__SOURCE_INLINE 1u

typedef struct tg__source_ops {
    const char *name; /* "command", "handler", "handler-inline", ... */
    unsigned flags;   /* TG__SOURCE_* */
    /* Starts c. Sets *state (the handle cancel takes) before anything can
     * end the call, or leaves it NULL when there is nothing to cancel;
     * then reports through c->sink and ends with exactly one done. A call
     * that cannot start ends at once with a result whose execution is
     * not_started (NULL on out of memory). */
    void (*start)(const tg__source_call *c, void **state);
    /* Asks the running call behind state to stop: it ends `canceled` by
     * `by` for `reason`; `hard`: at once, without a grace period. The call
     * still ends through done, now or later; a source may finish work in
     * the background after done as long as it reports nothing more. */
    void (*cancel)(void *state, const char *by, const char *reason, bool hard);
} tg__source_ops;

/* The source that runs tool's calls (sources.c: the one table from a
 * tool's kind to its source). Never NULL for a registered tool. */
const tg__source_ops *tg__source_of(const tg__tool *tool);

#endif
