/* SPDX-License-Identifier: MIT */
/*
 * test_session_stdio.c - the MCP client session (session.h) over the stdio
 * transport (stdio_transport.h) against real servers: toolgate's own
 * `toolgate serve --stdio` under each protocol version (negotiated and
 * forced), tools/list, calls that succeed and fail, progress, cancel and
 * deadline (the tool's process killed), the server dying mid-call; and the
 * faults of tests/fixtures/mcp_fault.c: garbage, silence, a flood, an
 * immediate exit, unknown and duplicate response ids, invalid tool
 * definitions, endless pagination, a program that does not exist. Each
 * ends in a clear error, `closed` exactly once, and a loop with no handle
 * left (the ASan build checks for leaks).
 */
#include "session_harness.h"

#include <signal.h>

typedef struct env {
    char dir[TG_TEST_DIR_MIN];
    char config[512];
    char home[4096];
    char path[4096];
    const char *envp[3];
    const char *argv[8];
} env;

static const char *toolgate_bin(void)
{
    const char *t = getenv("TOOLGATE");
    return t != NULL && *t != '\0' ? t : NULL;
}

static const char *fixture(const char *name)
{
    static char path[4][1024];
    static int next;
    const char *dir = getenv("TG_FIXTURES");
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", dir != NULL ? dir : ".", name);
    return p;
}

static int setup(void **state)
{
    if (tg_test_dir_setup(state, sizeof(env), "tg-rsession-") != 0)
        return -1;
    env *e = *state;
    h_env(e->home, e->path, e->envp, e->dir);
    snprintf(e->config, sizeof e->config, "%s/toolgate.json", e->dir);
    char ws[600];
    snprintf(ws, sizeof ws, "%s/ws", e->dir);
    mkdir(ws, 0700);
    FILE *f = fopen(e->config, "w");
    if (f == NULL)
        return -1;
    fprintf(f,
            "{\"workspace\": \"%s\", \"builtin_tools\": [\"echo\"],\n"
            " \"sandbox\": {\"mode\": \"off\"},\n"
            " \"tools\": [\n"
            "  {\"name\": \"fail\", \"command\": [\"%s\", \"{code}\"]},\n"
            "  {\"name\": \"pidsleep\", \"command\": [\"%s\", \"{file}\", "
            "\"{ms}\"]},\n"
            "  {\"name\": \"ticker\", \"command\": [\"/bin/sh\", \"-c\", "
            "\"for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.2; done\"]},\n"
            "  {\"name\": \"suicide\", \"command\": [\"/bin/sh\", \"-c\", "
            "\"kill -9 $PPID; sleep 5\"]},\n"
            "  {\"name\": \"guarded\", \"command\": [\"/bin/echo\", "
            "\"ran\", \"{what}\"]}\n"
            " ],\n"
            " \"policy\": {\"default\": \"allow\", \"rules\": [{\"tool\": "
            "\"guarded\", \"decision\": \"ask\", \"reason\": \"guarded "
            "needs a yes\"}]}}\n",
            ws, fixture("exit_code"), fixture("write_pid"));
    fclose(f);
    e->argv[0] = toolgate_bin();
    e->argv[1] = "serve";
    e->argv[2] = "--stdio";
    e->argv[3] = "--no-journal";
    e->argv[4] = "--config";
    e->argv[5] = e->config;
    e->argv[6] = NULL;
    return 0;
}

static int teardown(void **state)
{
    return tg_test_dir_teardown(state);
}

static void need_toolgate(void)
{
    if (toolgate_bin() == NULL)
        fail_msg("TOOLGATE (the toolgate binary) is not set: run under ctest");
}

/* The pid a write_pid tool wrote to file, once it is there. */
static long wait_pid_file(harness *h, const char *file)
{
    double end = tg_test_now_ms() + (double)tg_test_ms(10000);
    while (tg_test_now_ms() < end) {
        char *text = tg_test_read_file(file, NULL);
        if (text != NULL) {
            long pid = strtol(text, NULL, 10);
            free(text);
            return pid;
        }
        uv_run(&h->loop, UV_RUN_ONCE);
    }
    return -1;
}

/* ------------------------------------------------------------ serve */

static void one_version(env *e, tg__mcp_version force, tg__mcp_version expect)
{
    harness h;
    h_init(&h);
    tg__rsession_opts o = {.version = force};
    h_connect(&h, &o, e->argv, e->envp);
    assert_int_equal(tg__rsession_version(h.s), expect);
    assert_non_null(strstr(tg__rsession_server_info(h.s), "\"toolgate\""));
    assert_non_null(strstr(tg__rsession_capabilities(h.s), "\"tools\""));

    h_list(&h);
    assert_non_null(h.list);
    const tg__rtool *echo = h_tool(&h, "echo");
    assert_non_null(echo);
    assert_non_null(echo->input_schema);
    assert_non_null(strstr(echo->json, "\"name\":\"echo\""));
    assert_non_null(h_tool(&h, "pidsleep"));

    rec_call c = {0};
    h_call_wait(&h, &c, "echo", "{\"text\":\"hello there\"}", false);
    assert_int_equal(c.status, TG_RCALL_RESULT);
    assert_false(c.is_error);
    assert_non_null(strstr(c.result, "hello there"));
    rec_cleanup(&c);

    h_finish(&h);
    assert_int_equal(h.nready, 1);
    assert_int_equal(h.nclosed, 1);
    assert_int_equal(h.closed_err.code, 0);
}

static void test_serve_versions(void **state)
{
    need_toolgate();
    env *e = *state;
    one_version(e, TG_MCP_VERSION_UNKNOWN, TG_MCP_V2026_07_28);
    one_version(e, TG_MCP_V2026_07_28, TG_MCP_V2026_07_28);
    one_version(e, TG_MCP_V2025_11_25, TG_MCP_V2025_11_25);
    one_version(e, TG_MCP_V2025_06_18, TG_MCP_V2025_06_18);
}

/* Runs body on a session to toolgate serve under each of versions[0..n),
 * then closes it: `closed` exactly once. */
static void each_version(env *e, const tg__mcp_version *versions, size_t n,
                         void (*body)(harness *h, env *e, size_t i))
{
    need_toolgate();
    for (size_t i = 0; i < n; i++) {
        harness h;
        h_init(&h);
        tg__rsession_opts o = {.version = versions[i]};
        h_connect(&h, &o, e->argv, e->envp);
        body(&h, e, i);
        h_finish(&h);
        assert_int_equal(h.nclosed, 1);
    }
}

/* A call whose deadline each progress notification moves on. */
typedef struct extending {
    rec_call c; /* first: rec_done's */
    harness *h;
    uint64_t id;
} extending;

static void extend_on_progress(void *ud, double progress, double total,
                               const char *message)
{
    extending *x = ud;
    rec_progress(&x->c, progress, total, message);
    assert_int_equal(
        tg__rsession_extend(x->h->s, x->id, (unsigned)tg_test_ms(700)), 1);
}

static void errors_and_progress(harness *h, env *e, size_t i)
{
    (void)e;
    (void)i;
    rec_call c = {0};
    h_call_wait(h, &c, "fail", "{\"code\":\"3\"}", false);
    assert_int_equal(c.status, TG_RCALL_RESULT);
    assert_true(c.is_error);
    rec_cleanup(&c);

    h_call_wait(h, &c, "no_such_tool", "{}", false);
    assert_int_equal(c.status, TG_RCALL_RPC_ERROR);
    assert_int_equal(c.rpc_code, -32602);
    assert_non_null(strstr(c.err.message, "tools/call"));
    rec_cleanup(&c);

    h_call_wait(h, &c, "ticker", "{}", true);
    assert_int_equal(c.status, TG_RCALL_RESULT);
    assert_false(c.is_error);
    assert_true(c.nprogress >= 2);
    assert_non_null(strstr(c.last_message, "tick"));
    rec_cleanup(&c);

    /* a deadline moved on by each progress notification lets a call that
     * keeps reporting outlive its first deadline (ticker: 6 lines, 0.2 s
     * apart, 1.2 s in all) */
    extending x = {.h = h};
    tg__rcall_args ta = {.name = "ticker",
                         .deadline_ms = (unsigned)tg_test_ms(700)};
    tg__rcall_cbs xc = {.progress = extend_on_progress, .done = rec_done};
    tg_error terr;
    assert_int_equal(tg__rsession_call(h->s, &ta, &xc, &x, &x.id, &terr), 0);
    assert_true(h_run_until(h, h_call_done, &x.c, 20000));
    assert_int_equal(x.c.status, TG_RCALL_RESULT);
    assert_true(x.c.nprogress >= 4);
    assert_int_equal(tg__rsession_extend(h->s, x.id, 100), 0);
    rec_cleanup(&x.c);

    /* arguments that are not an object are refused here */
    tg_error err;
    uint64_t id;
    tg__rcall_args a = {.name = "echo", .arguments = "[1]", .arguments_len = 3};
    assert_int_equal(tg__rsession_call(h->s, &a, &rec_cbs, &c, &id, &err),
                     TG_EINVAL);
}

static void test_serve_errors_and_progress(void **state)
{
    const tg__mcp_version v[] = {TG_MCP_V2025_11_25, TG_MCP_V2026_07_28};
    each_version(*state, v, 2, errors_and_progress);
}

static void cancel_and_deadline(harness *h, env *e, size_t i)
{
    /* cancel: the tool's process dies, nothing more is reported */
    char file[600], args[800];
    snprintf(file, sizeof file, "%s/pid-cancel-%zu", e->dir, i);
    snprintf(args, sizeof args, "{\"file\":\"%s\",\"ms\":\"60000\"}", file);
    rec_call c = {0};
    uint64_t id = h_call(h, &c, "pidsleep", args, 0, true);
    long pid = wait_pid_file(h, file);
    assert_true(pid > 1);
    assert_int_equal(tg__rsession_cancel(h->s, id, "the user said stop"), 1);
    assert_int_equal(tg__rsession_cancel(h->s, id, "again"), 0);
    assert_true(tg_test_dead_within(pid, tg_test_ms(10000)));
    h_run_until(h, h_never, NULL, 300);
    assert_false(c.done);
    assert_int_equal(c.nprogress, 0);

    /* deadline: the call ends TIMEOUT, the process dies */
    snprintf(file, sizeof file, "%s/pid-deadline-%zu", e->dir, i);
    snprintf(args, sizeof args, "{\"file\":\"%s\",\"ms\":\"60000\"}", file);
    rec_call d = {0};
    h_call(h, &d, "pidsleep", args, (unsigned)tg_test_ms(1500), false);
    pid = wait_pid_file(h, file);
    assert_true(pid > 1);
    assert_true(h_run_until(h, h_call_done, &d, 10000));
    assert_int_equal(d.status, TG_RCALL_TIMEOUT);
    assert_int_equal(d.err.code, TG_ECANCELED);
    assert_true(tg_test_dead_within(pid, tg_test_ms(10000)));
    rec_cleanup(&d);

    /* the session goes on */
    rec_call ok = {0};
    h_call_wait(h, &ok, "echo", "{\"text\":\"still here\"}", false);
    assert_int_equal(ok.status, TG_RCALL_RESULT);
    rec_cleanup(&ok);
    /* the canceled call was never reported, not even by the close */
    tg__rsession_close(h->s);
    assert_true(h_run_until(h, h_is_closed, NULL, 20000));
    assert_int_equal(c.ndone, 0);
}

static void test_serve_cancel_and_deadline(void **state)
{
    const tg__mcp_version v[] = {TG_MCP_V2025_06_18, TG_MCP_V2026_07_28};
    each_version(*state, v, 2, cancel_and_deadline);
}

static bool elicited(harness *h, void *arg)
{
    return h->nelicit > *(int *)arg;
}

/* One call of the `ask` tool, the owner answering `answer` later. */
static void ask_once(harness *h, rec_call *c, const char *args,
                     const char *answer)
{
    int before = h->nelicit;
    uint64_t id = h_call(h, c, "guarded", args, 0, false);
    if (!h_run_until(h, elicited, &before, 20000))
        fail_msg("no elicitation; the call: done %d, %s", c->done,
                 c->result != NULL ? c->result : c->err.message);
    assert_non_null(strstr(h->elicit_params, "guarded"));
    /* the call it is about: its input (2026-07-28), or the only call in
     * flight (stdio) */
    assert_int_equal(h->elicit_call, id);
    tg_error err;
    assert_int_equal(tg__rsession_elicit_reply(h->s, h->elicit_ticket, answer,
                                               strlen(answer), &err),
                     0);
    assert_true(h_run_until(h, h_call_done, c, 20000));
    assert_int_equal(c->status, TG_RCALL_RESULT);
}

/* A tool the policy asks about: toolgate serve asks the client with
 * elicitation/create (2025-11-25) or an InputRequiredResult (2026-07-28,
 * answered by sending the call again); the owner's answer decides. */
static void elicitation(harness *h, env *e, size_t i)
{
    (void)e;
    (void)i;
    rec_call c = {0};
    /* (an approval holds for the same arguments: each call has its
     * own) */
    ask_once(h, &c, "{\"what\":\"the thing\"}",
             "{\"action\":\"accept\",\"content\":{}}");
    assert_false(c.is_error);
    assert_non_null(strstr(c.result, "ran the thing"));
    rec_cleanup(&c);
    ask_once(h, &c, "{\"what\":\"another thing\"}", "{\"action\":\"decline\"}");
    assert_true(c.is_error);
    assert_non_null(strstr(c.result, "denied"));
    rec_cleanup(&c);
    /* declined at once by the callback */
    h->elicit_mode = 1;
    h_call_wait(h, &c, "guarded", "{\"what\":\"a third thing\"}", false);
    assert_int_equal(c.status, TG_RCALL_RESULT);
    assert_true(c.is_error);
    rec_cleanup(&c);
}

static void test_serve_elicitation(void **state)
{
    const tg__mcp_version v[] = {TG_MCP_V2025_11_25, TG_MCP_V2026_07_28};
    each_version(*state, v, 2, elicitation);
}

static void test_serve_dies_mid_call(void **state)
{
    need_toolgate();
    env *e = *state;
    harness h;
    h_init(&h);
    tg__rsession_opts o = {0};
    h_connect(&h, &o, e->argv, e->envp);
    char file[600], args[800];
    snprintf(file, sizeof file, "%s/pid-dies", e->dir);
    snprintf(args, sizeof args, "{\"file\":\"%s\",\"ms\":\"60000\"}", file);
    rec_call slow = {0}, dying = {0};
    h_call(&h, &slow, "pidsleep", args, 0, false);
    assert_true(wait_pid_file(&h, file) > 1);
    h_call(&h, &dying, "suicide", "{}", 0, false);
    assert_true(h_run_until(&h, h_is_closed, NULL, 20000));
    assert_int_equal(h.nclosed, 1);
    assert_int_equal(h.closed_err.code, TG_EIO);
    if (strstr(h.closed_err.message, "signal 9") == NULL)
        fail_msg("closed: %s", h.closed_err.message);
    assert_int_equal(slow.ndone, 1);
    assert_int_equal(slow.status, TG_RCALL_FAILED);
    assert_non_null(strstr(slow.err.message, "signal 9"));
    assert_int_equal(dying.ndone, 1);
    assert_int_equal(dying.status, TG_RCALL_FAILED);
    /* no more calls on an ended session */
    h_finish(&h);
}

/* ------------------------------------------------------------ faults */

/* Starts mcp_fault MODE; expects `ready` with an error holding `want`. */
static harness *fault(const char *mode, const char *want, size_t max_message,
                      unsigned connect_ms)
{
    harness *h = malloc(sizeof *h);
    assert_non_null(h);
    h_init(h);
    const char *argv[] = {fixture("mcp_fault"), mode, NULL};
    tg__rsession_opts o = {.connect_ms = connect_ms};
    tg_error err;
    assert_int_equal(h_start(h, &o, argv, NULL, max_message, &err), 0);
    assert_true(h_run_until(h, h_is_ready, NULL, 20000));
    if (want == NULL) {
        if (!h->ready_ok)
            fail_msg("mcp_fault %s: %s", mode, h->ready_err.message);
        return h;
    }
    assert_false(h->ready_ok);
    if (strstr(h->ready_err.message, want) == NULL)
        fail_msg("mcp_fault %s: '%s' lacks '%s'", mode, h->ready_err.message,
                 want);
    assert_true(h_run_until(h, h_is_closed, NULL, 20000));
    return h;
}

static void end_fault(harness *h)
{
    h_finish(h);
    assert_int_equal(h->nclosed, 1);
    free(h);
}

static void test_fault_garbage(void **state)
{
    (void)state;
    harness *h = fault("garbage", "did not answer initialize", 0,
                       (unsigned)tg_test_ms(1500));
    assert_non_null(strstr(h->ready_err.message, "it wrote"));
    assert_true(h->nsession_log >= 3);
    /* stderr lines reach the log, cut at the transport's line limit */
    assert_true(h->nstderr >= 2);
    assert_int_equal(h->longest_stderr, TG_RSTDIO_DEFAULT_MAX_LOG_LINE);
    end_fault(h);
}

static void test_fault_silent(void **state)
{
    (void)state;
    double t0 = tg_test_now_ms();
    harness *h = fault("silent", "did not answer initialize within", 0,
                       (unsigned)tg_test_ms(1000));
    /* the deadline holds: not much later than asked */
    assert_true(tg_test_now_ms() - t0 < (double)tg_test_ms(1000) * 3 + 2000);
    end_fault(h);
}

static void test_fault_flood(void **state)
{
    (void)state;
    harness *h = fault("flood", "over the limit of 1048576 bytes", 1u << 20,
                       (unsigned)tg_test_ms(10000));
    assert_int_equal(h->closed_err.code, TG_ELIMIT);
    end_fault(h);
}

static void test_fault_exit(void **state)
{
    (void)state;
    harness *h =
        fault("exit", "exited with status 3", 0, (unsigned)tg_test_ms(10000));
    assert_int_equal(h->closed_err.code, TG_EIO);
    end_fault(h);
}

static bool session_log_has(harness *h, void *arg)
{
    return strstr(h->session_logs, arg) != NULL;
}

static void test_fault_legacy(void **state)
{
    (void)state;
    harness *h = fault("legacy", NULL, 0, (unsigned)tg_test_ms(10000));
    /* discover refused: fell back to initialize */
    assert_int_equal(tg__rsession_version(h->s), TG_MCP_V2025_06_18);
    /* the unknown and the duplicate id were logged and dropped */
    assert_non_null(strstr(h->session_logs, "unknown id (1002)"));
    if (!h_run_until(h, session_log_has, "unknown id (2)", 5000))
        fail_msg("session logs: %s", h->session_logs);
    h_list(h);
    assert_non_null(h->list);
    assert_int_equal(h->list->n, 1);
    assert_int_equal(h->list->skipped, 2);
    assert_string_equal(h->list->tools[0].name, "boom");
    assert_null(h->list->tools[0].title);
    /* it exits on tools/call: the call ends, the session with it */
    rec_call c = {0};
    h_call(h, &c, "boom", NULL, 0, false);
    assert_true(h_run_until(h, h_is_closed, NULL, 20000));
    assert_int_equal(c.ndone, 1);
    assert_int_equal(c.status, TG_RCALL_FAILED);
    assert_non_null(strstr(c.err.message, "exited with status 5"));
    end_fault(h);
}

static void test_fault_pages(void **state)
{
    (void)state;
    /* too many tools */
    harness *h = malloc(sizeof *h);
    assert_non_null(h);
    h_init(h);
    const char *argv[] = {fixture("mcp_fault"), "pages", NULL};
    tg__rsession_opts o = {.max_tools = 250};
    tg_error err;
    assert_int_equal(h_start(h, &o, argv, NULL, 0, &err), 0);
    assert_true(h_run_until(h, h_is_ready, NULL, 20000));
    assert_true(h->ready_ok);
    h_list(h);
    assert_null(h->list);
    assert_int_equal(h->list_err.code, TG_ELIMIT);
    assert_non_null(strstr(h->list_err.message, "more than 250 tools"));
    end_fault(h);

    /* too many pages */
    h = malloc(sizeof *h);
    assert_non_null(h);
    h_init(h);
    tg__rsession_opts p = {.max_pages = 3};
    assert_int_equal(h_start(h, &p, argv, NULL, 0, &err), 0);
    assert_true(h_run_until(h, h_is_ready, NULL, 20000));
    h_list(h);
    assert_null(h->list);
    assert_int_equal(h->list_err.code, TG_ELIMIT);
    assert_non_null(strstr(h->list_err.message, "past 3 pages"));
    end_fault(h);

    /* the default cap: 10,000 tools */
    h = malloc(sizeof *h);
    assert_non_null(h);
    h_init(h);
    tg__rsession_opts q = {0};
    assert_int_equal(h_start(h, &q, argv, NULL, 0, &err), 0);
    assert_true(h_run_until(h, h_is_ready, NULL, 20000));
    h_list(h);
    assert_null(h->list);
    assert_int_equal(h->list_err.code, TG_ELIMIT);
    assert_non_null(strstr(h->list_err.message, "more than 10000 tools"));
    end_fault(h);
}

/* A result over the message limit ends the transport with TG_ELIMIT and the
 * call with it, in bounded memory. */
static void test_fault_big_result(void **state)
{
    (void)state;
    harness *h = malloc(sizeof *h);
    assert_non_null(h);
    h_init(h);
    const char *argv[] = {fixture("mcp_fault"), "big", NULL};
    tg__rsession_opts o = {0};
    tg_error err;
    assert_int_equal(h_start(h, &o, argv, NULL, 1u << 20, &err), 0);
    assert_true(h_run_until(h, h_is_ready, NULL, 20000));
    assert_true(h->ready_ok);
    rec_call c = {0};
    h_call(h, &c, "boom", "{}", 0, false);
    assert_true(h_run_until(h, h_is_closed, NULL, 20000));
    assert_int_equal(c.ndone, 1);
    assert_int_equal(c.status, TG_RCALL_FAILED);
    assert_int_equal(c.err.code, TG_ELIMIT);
    assert_non_null(strstr(c.err.message, "over the limit"));
    assert_int_equal(h->closed_err.code, TG_ELIMIT);
    end_fault(h);
}

static void test_fault_no_program(void **state)
{
    (void)state;
    harness h;
    h_init(&h);
    const char *argv[] = {"/nonexistent/mcp-server", NULL};
    tg__rsession_opts o = {0};
    tg_error err;
    assert_int_equal(h_start(&h, &o, argv, NULL, 0, &err), TG_ESPAWN);
    assert_non_null(strstr(err.message, "/nonexistent/mcp-server"));
    h_finish(&h);
    assert_int_equal(h.nclosed, 0);
}

static void test_roots_refused(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    tg__rsession_cbs cbs = {.closed = h_closed};
    tg__rsession *s = NULL;
    tg_error err;
    const tg__rroot slash[] = {{.uri = "file:///"}};
    tg__rsession_opts o = {.loop = &loop, .roots = slash, .nroots = 1};
    assert_int_equal(tg__rsession_new(&o, &cbs, NULL, &s, &err), TG_EINVAL);
    assert_non_null(strstr(err.message, "whole file system"));
    const tg__rroot dots[] = {{.uri = "file:///tmp/../"}};
    o.roots = dots;
    assert_int_equal(tg__rsession_new(&o, &cbs, NULL, &s, &err), TG_EINVAL);
    const tg__rroot dot[] = {{.uri = "file:///tmp/./x"}};
    o.roots = dot;
    assert_int_equal(tg__rsession_new(&o, &cbs, NULL, &s, &err), TG_EINVAL);
    const tg__rroot web[] = {{.uri = "https://example.com/"}};
    o.roots = web;
    assert_int_equal(tg__rsession_new(&o, &cbs, NULL, &s, &err), TG_EINVAL);
    const tg__rroot ok[] = {{.uri = "file:///tmp/project..x/.y", .name = "p"}};
    o.roots = ok;
    assert_int_equal(tg__rsession_new(&o, &cbs, NULL, &s, &err), 0);
    tg__rsession_free(s);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_serve_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_serve_errors_and_progress, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_serve_cancel_and_deadline, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_serve_elicitation, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_serve_dies_mid_call, setup,
                                        teardown),
        cmocka_unit_test(test_fault_garbage),
        cmocka_unit_test(test_fault_silent),
        cmocka_unit_test(test_fault_flood),
        cmocka_unit_test(test_fault_exit),
        cmocka_unit_test(test_fault_legacy),
        cmocka_unit_test(test_fault_pages),
        cmocka_unit_test(test_fault_big_result),
        cmocka_unit_test(test_fault_no_program),
        cmocka_unit_test(test_roots_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
