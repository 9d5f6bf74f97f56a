/* SPDX-License-Identifier: MIT */
/*
 * session_harness.h - what the MCP client session tests share
 * (test_session_stdio.c, test_session_everything.c): a loop, a session
 * over the stdio transport to a real server, records of every callback,
 * running the loop until a condition holds or a scaled time bound passes,
 * and the end of a test - the session closed exactly once and the loop
 * left with no handle open. Header-only; cmocka asserts.
 */
#ifndef TG_TEST_SESSION_HARNESS_H
#define TG_TEST_SESSION_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "session.h"
#include "stdio_transport.h"
#include "tg_test.h"

/* What one tools/call reported. */
typedef struct rec_call {
    bool done;
    int ndone;
    tg__rcall_status status;
    char *result;
    bool is_error;
    long long rpc_code;
    tg_error err;
    int nprogress;
    double last_progress, last_total;
    char last_message[256];
} rec_call;

typedef struct harness {
    uv_loop_t loop;
    uv_timer_t tick;
    tg__rsession *s;
    int nready;
    bool ready_ok;
    tg_error ready_err;
    int nclosed;
    tg_error closed_err;
    int nchanged;
    int nstderr, nserver_log, nsession_log;
    size_t longest_stderr;
    char server_logs[4096];
    char session_logs[4096];
    int nlists;
    tg__rtool_list *list;
    tg_error list_err;
    int nelicit;
    uint64_t elicit_ticket;
    uint64_t elicit_call; /* the call it is about, 0: none known */
    char elicit_params[2048];
    int elicit_mode; /* 0: answer later, 1: decline now */
} harness;

static void h_ready(void *ud, const tg_error *err)
{
    harness *h = ud;
    h->nready++;
    h->ready_ok = err == NULL;
    if (err != NULL)
        h->ready_err = *err;
}

static void h_closed(void *ud, const tg_error *err)
{
    harness *h = ud;
    h->nclosed++;
    h->closed_err = *err;
    h->s = NULL; /* the session frees itself */
}

static void h_append(char *to, size_t size, const char *text, size_t len)
{
    size_t have = strlen(to);
    if (have + 2 >= size)
        return;
    size_t n = len < size - have - 2 ? len : size - have - 2;
    memcpy(to + have, text, n);
    to[have + n] = '\n';
    to[have + n + 1] = '\0';
}

static void h_log(void *ud, tg__rlog_source src, const char *level,
                  const char *text, size_t len)
{
    harness *h = ud;
    (void)level;
    if (src == TG_RLOG_STDERR) {
        h->nstderr++;
        if (len > h->longest_stderr)
            h->longest_stderr = len;
    } else if (src == TG_RLOG_SERVER) {
        h->nserver_log++;
        h_append(h->server_logs, sizeof h->server_logs, text, len);
    } else {
        h->nsession_log++;
        h_append(h->session_logs, sizeof h->session_logs, text, len);
    }
}

static void h_changed(void *ud)
{
    ((harness *)ud)->nchanged++;
}

static int h_elicit(void *ud, uint64_t ticket, uint64_t call,
                    const char *params, size_t len)
{
    harness *h = ud;
    h->nelicit++;
    h->elicit_ticket = ticket;
    h->elicit_call = call;
    snprintf(h->elicit_params, sizeof h->elicit_params, "%.*s", (int)len,
             params);
    return h->elicit_mode;
}

static void h_listed(void *ud, tg__rtool_list *list, const tg_error *err)
{
    harness *h = ud;
    h->nlists++;
    tg__rtool_list_free(h->list);
    h->list = list;
    if (err != NULL)
        h->list_err = *err;
}

static void rec_progress(void *ud, double progress, double total,
                         const char *message)
{
    rec_call *c = ud;
    assert_false(c->done);
    c->nprogress++;
    c->last_progress = progress;
    c->last_total = total;
    snprintf(c->last_message, sizeof c->last_message, "%s",
             message != NULL ? message : "");
}

static void rec_done(void *ud, const tg__rcall_end *end)
{
    rec_call *c = ud;
    c->ndone++;
    c->done = true;
    c->status = end->status;
    c->is_error = end->is_error;
    c->rpc_code = end->rpc_code;
    if (end->status == TG_RCALL_RESULT)
        c->result = strndup(end->result, end->result_len);
    else
        c->err = *end->err;
}

static const tg__rcall_cbs rec_cbs = {.progress = rec_progress,
                                      .done = rec_done};

static void h_on_tick(uv_timer_t *t)
{
    (void)t;
}

/* Prepares the loop (a tick timer keeps uv_run(ONCE) waking up). */
static void h_init(harness *h)
{
    memset(h, 0, sizeof *h);
    assert_int_equal(uv_loop_init(&h->loop), 0);
    uv_timer_init(&h->loop, &h->tick);
    uv_timer_start(&h->tick, h_on_tick, 10, 10);
}

typedef bool (*h_cond)(harness *h, void *arg);

/* Runs the loop until cond holds or ms (scaled) pass; returns cond. */
static bool h_run_until(harness *h, h_cond cond, void *arg, long ms)
{
    double end = tg_test_now_ms() + (double)tg_test_ms(ms);
    while (!cond(h, arg) && tg_test_now_ms() < end)
        uv_run(&h->loop, UV_RUN_ONCE);
    return cond(h, arg);
}

static bool h_is_ready(harness *h, void *arg)
{
    (void)arg;
    return h->nready > 0;
}

static bool h_is_closed(harness *h, void *arg)
{
    (void)arg;
    return h->nclosed > 0;
}

static bool h_is_listed(harness *h, void *arg)
{
    return h->nlists > *(int *)arg;
}

static bool h_call_done(harness *h, void *arg)
{
    (void)h;
    return ((rec_call *)arg)->done;
}

static bool h_never(harness *h, void *arg)
{
    (void)h;
    (void)arg;
    return false;
}

/* Starts a session (opts' loop and callbacks set here) over the stdio
 * transport running argv with envp; returns what start returned (or the
 * transport's error). */
static int h_start(harness *h, tg__rsession_opts *opts, const char *const *argv,
                   const char *const *envp, size_t max_message, tg_error *err)
{
    opts->loop = &h->loop;
    tg__rsession_cbs cbs = {.ready = h_ready,
                            .closed = h_closed,
                            .log = h_log,
                            .tools_changed = h_changed,
                            .elicit = h_elicit};
    int rc = tg__rsession_new(opts, &cbs, h, &h->s, err);
    if (rc != 0)
        return rc;
    tg__rstdio_opts so = {.loop = &h->loop,
                          .argv = argv,
                          .envp = envp,
                          .max_message = max_message,
                          .grace_ms = (unsigned)tg_test_ms(2000)};
    tg__rtransport *t = NULL;
    rc = tg__rstdio_new(&so, tg__rsession_transport_cbs(), h->s, &t, err);
    if (rc != 0) {
        tg__rsession_free(h->s);
        h->s = NULL;
        return rc;
    }
    return tg__rsession_start(h->s, t, err);
}

/* Starts and waits for `ready`; asserts it came without error. */
static void h_connect(harness *h, tg__rsession_opts *opts,
                      const char *const *argv, const char *const *envp)
{
    tg_error err;
    assert_int_equal(h_start(h, opts, argv, envp, 0, &err), 0);
    assert_true(h_run_until(h, h_is_ready, NULL, 20000));
    if (!h->ready_ok)
        fail_msg("the session did not get ready: %s", h->ready_err.message);
}

/* Lists the tools and waits for the list (asserted to come). */
static void h_list(harness *h)
{
    tg_error err;
    int before = h->nlists;
    assert_int_equal(tg__rsession_list_tools(h->s, h_listed, h, &err), 0);
    assert_true(h_run_until(h, h_is_listed, &before, 20000));
}

static const tg__rtool *h_tool(const harness *h, const char *name)
{
    for (size_t i = 0; h->list != NULL && i < h->list->n; i++)
        if (strcmp(h->list->tools[i].name, name) == 0)
            return &h->list->tools[i];
    return NULL;
}

/* Calls tool `name` with args (JSON text); asserts it was sent. */
static uint64_t h_call(harness *h, rec_call *c, const char *name,
                       const char *args, unsigned deadline_ms, bool progress)
{
    tg_error err;
    uint64_t id = 0;
    tg__rcall_args a = {.name = name,
                        .arguments = args,
                        .arguments_len = args ? strlen(args) : 0,
                        .deadline_ms = deadline_ms};
    tg__rcall_cbs cbs = rec_cbs;
    if (!progress)
        cbs.progress = NULL;
    int rc = tg__rsession_call(h->s, &a, &cbs, c, &id, &err);
    if (rc != 0)
        fail_msg("tools/call %s not sent: %s", name, err.message);
    return id;
}

/* Calls and waits for the end. */
static void h_call_wait(harness *h, rec_call *c, const char *name,
                        const char *args, bool progress)
{
    h_call(h, c, name, args, 0, progress);
    assert_true(h_run_until(h, h_call_done, c, 30000));
}

/* The end of a test: the session closed (asked if still open), `closed`
 * came exactly once, and the loop holds no handle any more. */
static void h_finish(harness *h)
{
    if (h->s != NULL && h->nclosed == 0)
        tg__rsession_close(h->s);
    if (h->nready > 0 || h->s != NULL || h->nclosed > 0)
        assert_true(h_run_until(h, h_is_closed, NULL, 20000));
    /* nothing more comes after closed */
    h_run_until(h, h_never, NULL, 50);
    assert_true(h->nclosed <= 1);
    tg__rtool_list_free(h->list);
    h->list = NULL;
    uv_timer_stop(&h->tick);
    uv_close((uv_handle_t *)&h->tick, NULL);
    uv_run(&h->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&h->loop), 0);
}

/* The environment of a server: HOME=dir and this process's PATH, in the
 * caller's home and path (4096 bytes each) and envp (3 slots). */
static void h_env(char *home, char *path, const char **envp, const char *dir)
{
    const char *p = getenv("PATH");
    snprintf(home, 4096, "HOME=%s", dir);
    snprintf(path, 4096, "PATH=%s", p != NULL ? p : "/usr/bin:/bin");
    envp[0] = home;
    envp[1] = path;
    envp[2] = NULL;
}

static void rec_cleanup(rec_call *c)
{
    free(c->result);
    memset(c, 0, sizeof *c);
}

#endif
