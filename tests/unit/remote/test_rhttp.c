/* SPDX-License-Identifier: MIT */
/*
 * test_rhttp.c - the Streamable HTTP transport of the MCP client
 * (src/remote/http*.c) against real servers on 127.0.0.1, no mocks:
 *   - `toolgate serve --http 127.0.0.1:0` with a token: initialize under
 *     2025-06-18 and 2025-11-25 (the session id learnt and sent back),
 *     initialized, tools/list, tools/call echo answered as SSE; a 2026-07-28
 *     call with its _meta and Mcp-Method / Mcp-Name headers (a wrong name
 *     is refused by the server); a wrong token (TG_EPERM, the token in no
 *     message); close sends DELETE (the old session id then gets 404); a
 *     session the server ended closes the transport; a 2025-11-25 call that
 *     outlives the server's 5 s stream is resumed with Last-Event-ID; a
 *     dropped 2026-07-28 call of `sleep` is canceled on the server (the
 *     process goes);
 *   - `mcp-server-everything streamableHttp` (tests/interop, npm): initialize,
 *     tools/list, echo, close (skipped without the npm packages, but not
 *     under CI=true);
 *   - tests/fixtures/mcp_http_faults.py, a server that misbehaves on
 *     purpose: connection refused, 500 (a sanitized excerpt), 401, garbage,
 *     a 400 carrying the request's JSON-RPC error (delivered as its answer),
 *     the wrong Content-Type, 202 to a request, bodies and events over the
 *     message limit, a stream that ends or is cut before its response and is
 *     resumed after the server's retry time, resumptions that keep failing,
 *     streams that cannot be resumed, a 404 for the session, a server that
 *     never answers (idle limit, drop, a bounded DELETE at close), the
 *     server's GET stream (opened once the session is established, opened
 *     again with Last-Event-ID when the server ends it), max_transfers.
 * Every test ends with the loop closed: no uv handle left open.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <uv.h>

#include "http_int.h"
#include "http_transport.h"
#include "tg_json_test.h"
#include "tg_test.h"

#define MAX_SEEN 64

/* ------------------------------------------------------- the session */

/* What the transport told its session. */
typedef struct sess {
    uv_loop_t loop;
    tg__rtransport *t;
    char *msgs[MAX_SEEN];
    char *streams[MAX_SEEN]; /* the request whose stream carried it */
    size_t n_msgs;
    struct {
        char *id;
        tg_error err;
    } fails[MAX_SEEN];
    size_t n_fails;
    int closed;
    tg_error closed_err;
    /* What the session does from inside its message callback, once: drop
     * a request, send one (as a tools/list with id send_on_msg), close. */
    const char *drop_on_msg;
    const char *send_on_msg;
    int close_on_msg;
} sess;

static void on_message(void *ud, const char *json, size_t len,
                       const char *stream)
{
    sess *s = ud;
    if (s->n_msgs < MAX_SEEN) {
        s->streams[s->n_msgs] = stream != NULL ? strdup(stream) : NULL;
        s->msgs[s->n_msgs++] = strndup(json, len);
    }
    if (s->drop_on_msg != NULL) {
        tg__rtransport_drop(s->t, s->drop_on_msg);
        s->drop_on_msg = NULL;
    }
    if (s->send_on_msg != NULL) {
        char msg[128];
        snprintf(msg, sizeof msg,
                 "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/list\"}",
                 s->send_on_msg);
        tg__rsend m = {"tools/list", NULL, s->send_on_msg, "2025-11-25"};
        tg_error err;
        assert_int_equal(tg__rtransport_send(s->t, msg, strlen(msg), &m, &err),
                         0);
        s->send_on_msg = NULL;
    }
    if (s->close_on_msg) {
        s->close_on_msg = 0;
        tg__rtransport_close(s->t);
    }
}

static void on_failed(void *ud, const char *id, const tg_error *err)
{
    sess *s = ud;
    if (s->n_fails < MAX_SEEN) {
        s->fails[s->n_fails].id = strdup(id);
        s->fails[s->n_fails++].err = *err;
    }
}

static void on_closed(void *ud, const tg_error *err)
{
    sess *s = ud;
    s->closed++;
    s->closed_err = *err;
}

static const tg__rtransport_cbs cbs = {on_message, on_failed, NULL, on_closed};

/* Default options for url: a 1 MiB message limit. */
static tg__rhttp_opts opts_for(const char *url)
{
    tg__rhttp_opts o;
    memset(&o, 0, sizeof o);
    o.url = url;
    o.max_message = 1 << 20;
    return o;
}

static sess *sess_new(const tg__rhttp_opts *o)
{
    sess *s = calloc(1, sizeof *s);
    assert_non_null(s);
    assert_int_equal(uv_loop_init(&s->loop), 0);
    tg_error err;
    int rc = tg__rhttp_new(&s->loop, o, &cbs, s, &s->t, &err);
    if (rc != 0)
        fail_msg("tg__rhttp_new: %s", err.message);
    return s;
}

static void noop_timer(uv_timer_t *t)
{
    (void)t;
}

typedef int (*pred_fn)(sess *s, const void *arg);

/* Runs the loop until pred holds or ms (scaled) pass; whether it holds. */
static int run_until(sess *s, pred_fn pred, const void *arg, long ms)
{
    uv_timer_t tick;
    uv_timer_init(&s->loop, &tick);
    uv_timer_start(&tick, noop_timer, 20, 20); /* run once returns often */
    double end = tg_test_now_ms() + (double)tg_test_ms(ms);
    while (!pred(s, arg) && tg_test_now_ms() < end)
        uv_run(&s->loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&tick, NULL);
    uv_run(&s->loop, UV_RUN_NOWAIT);
    return pred(s, arg);
}

/* The message with id `id` (JSON text) that is a response; new ref. */
static json_t *response_of(sess *s, const char *id)
{
    json_t *want = tg_test_json(id); /* new ref */
    json_t *found = NULL;
    for (size_t i = 0; i < s->n_msgs && found == NULL; i++) {
        json_t *m = json_loads(s->msgs[i], 0, NULL); /* new ref */
        if (m != NULL && json_object_get(m, "method") == NULL &&
            json_equal(json_object_get(m, "id"), want))
            found = json_incref(m);
        json_decref(m);
    }
    json_decref(want);
    return found;
}

static int has_response(sess *s, const void *id)
{
    json_t *r = response_of(s, id);
    json_decref(r);
    return r != NULL;
}

static const tg_error *failure_of(sess *s, const char *id)
{
    for (size_t i = 0; i < s->n_fails; i++)
        if (strcmp(s->fails[i].id, id) == 0)
            return &s->fails[i].err;
    return NULL;
}

static int has_failed(sess *s, const void *id)
{
    return failure_of(s, id) != NULL;
}

static int is_closed(sess *s, const void *arg)
{
    (void)arg;
    return s->closed > 0;
}

static void send_msg(sess *s, const char *json, const char *method,
                     const char *name, const char *id, const char *version)
{
    tg__rsend m = {method, name, id, version};
    tg_error err;
    int rc = tg__rtransport_send(s->t, json, strlen(json), &m, &err);
    if (rc != 0)
        fail_msg("send %s: %s", json, err.message);
}

/* Sends a request and waits for its response (fails the test without);
 * new ref. */
static json_t *request(sess *s, const char *json, const char *method,
                       const char *name, const char *id, const char *version)
{
    send_msg(s, json, method, name, id, version);
    if (!run_until(s, has_response, id, 20000)) {
        const tg_error *e = failure_of(s, id);
        fail_msg("no response to %s (%s)", json,
                 e           ? e->message
                 : s->closed ? "closed"
                             : "nothing");
    }
    return response_of(s, id);
}

/* Waits for the response to request id and checks that its text holds
 * needle. */
static void expect_answer_seen(sess *s, const char *id, const char *needle)
{
    if (!run_until(s, has_response, id, 20000))
        fail_msg("no response to request %s", id);
    json_t *r = response_of(s, id);
    char *text = json_dumps(r, 0);
    if (strstr(text, needle) == NULL)
        fail_msg("request %s: no %s in %s", id, needle, text);
    free(text);
    json_decref(r);
}

/* Sends a request and checks that its response's text holds needle. */
static void expect_answer(sess *s, const char *json, const char *method,
                          const char *name, const char *id, const char *v,
                          const char *needle)
{
    send_msg(s, json, method, name, id, v);
    expect_answer_seen(s, id, needle);
}

/* Waits for request id's failure; fails the test when it does not come. */
static const tg_error *wait_failure(sess *s, const char *id, long ms)
{
    if (!run_until(s, has_failed, id, ms))
        fail_msg("request %s did not fail (%zu messages)", id, s->n_msgs);
    return failure_of(s, id);
}

/* The fault server's initialize (id 1), answered. */
static void fixture_init(sess *s)
{
    json_t *r = request(s,
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                        "\"initialize\",\"params\":{}}",
                        "initialize", NULL, "1", NULL);
    json_decref(r);
}

/* Sends a tools/call of tool "x" with id (an integer's text) under
 * version. */
static void send_call(sess *s, const char *id, const char *version)
{
    char msg[128];
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\"}", id);
    send_msg(s, msg, "tools/call", "x", id, version);
}

/* Ends s: the transport closed if it was not, `closed` exactly once, no
 * handle left open on the loop. */
static void sess_end(sess *s)
{
    if (!s->closed)
        tg__rtransport_close(s->t);
    assert_true(run_until(s, is_closed, NULL, 10000));
    uv_run(&s->loop, UV_RUN_NOWAIT);
    assert_int_equal(s->closed, 1);
    assert_int_equal(uv_loop_close(&s->loop), 0);
    for (size_t i = 0; i < s->n_msgs; i++) {
        free(s->msgs[i]);
        free(s->streams[i]);
    }
    for (size_t i = 0; i < s->n_fails; i++)
        free(s->fails[i].id);
    free(s);
}

/* No byte of text is a control character. */
static void assert_printable(const char *text)
{
    for (const char *p = text; *p != '\0'; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
            fail_msg("control character in \"%s\"", text);
}

/* ---------------------------------------------------------- processes */

typedef struct proc {
    pid_t pid;
    char out[128]; /* its stdout and stderr, together */
    char url[256];
} proc;

static char work_dir[64];

/* Starts argv (env: NAME=value or NULL) with stdout and stderr to a file. */
static void proc_start(proc *p, const char *const *argv, const char *env,
                       const char *name)
{
    snprintf(p->out, sizeof p->out, "%s/%s.out", work_dir, name);
    p->pid = fork();
    assert_true(p->pid >= 0);
    if (p->pid == 0) {
        int fd = open(p->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            _exit(126);
        dup2(fd, 1);
        dup2(fd, 2);
        if (chdir(work_dir) != 0)
            _exit(126);
        if (env != NULL)
            putenv((char *)env);
        setpgid(0, 0);
        /* Gone with the test, even when it crashes. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
}

/* Waits until the process's output holds `pattern`; copies from there to
 * the end of its line into line (when not NULL). */
static int proc_wait_output(proc *p, const char *pattern, char *line,
                            size_t size, long ms)
{
    double end = tg_test_now_ms() + (double)tg_test_ms(ms);
    while (tg_test_now_ms() < end) {
        char *text = tg_test_read_file(p->out, NULL);
        char *at = text ? strstr(text, pattern) : NULL;
        if (at != NULL) {
            if (line != NULL) {
                size_t n = strcspn(at, "\r\n");
                snprintf(line, size, "%.*s", (int)n, at);
            }
            free(text);
            return 1;
        }
        free(text);
        if (!tg_test_alive(p->pid))
            return 0;
        tg_test_sleep_ms(20);
    }
    return 0;
}

static void proc_stop(proc *p)
{
    if (p->pid <= 0)
        return;
    kill(-p->pid, SIGTERM);
    if (!tg_test_dead_within(p->pid, tg_test_ms(5000)))
        kill(-p->pid, SIGKILL);
    waitpid(p->pid, NULL, 0);
    p->pid = 0;
}

static proc serve_p, fault_p;
static int have_serve, have_faults;

static const char serve_config[] =
    "{\"workspace\": \".\", \"journal\": \".toolgate/journal.db\",\n"
    " \"sandbox\": {\"mode\": \"off\"}, \"builtin_tools\": [\"echo\"],\n"
    " \"tools\": [\n"
    "  {\"name\": \"nap\", \"command\": [\"sleep\", \"29.7531\"]},\n"
    "  {\"name\": \"rest\", \"command\": [\"/bin/sh\", \"-c\",\n"
    "     \"sleep 5.6; echo rested\"]}],\n"
    " \"policy\": {\"default\": \"allow\"}}\n";

static int group_setup(void **state)
{
    (void)state;
    snprintf(work_dir, sizeof work_dir, "/tmp/tg_rhttp_XXXXXX");
    if (mkdtemp(work_dir) == NULL)
        return -1;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/toolgate.json", work_dir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fputs(serve_config, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/token", work_dir);
    f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fputs("s3cret-token\n", f);
    fclose(f);
    curl_global_init(CURL_GLOBAL_DEFAULT);

    const char *tg = getenv("TOOLGATE");
    if (tg != NULL && *tg != '\0') {
        const char *argv[] = {
            tg,         "serve",         "--http",       "127.0.0.1:0",
            "--config", "toolgate.json", "--token-file", "token",
            NULL};
        proc_start(&serve_p, argv, NULL, "serve");
        char line[256];
        if (proc_wait_output(&serve_p, "http://127.0.0.1:", line, sizeof line,
                             10000)) {
            snprintf(serve_p.url, sizeof serve_p.url, "%.*s",
                     (int)strcspn(line, " \t"), line);
            have_serve = 1;
        }
    }
    char script[PATH_MAX];
    tg_test_source_path(script, sizeof script,
                        "tests/fixtures/mcp_http_faults.py");
    const char *argv[] = {"python3", script, NULL};
    proc_start(&fault_p, argv, NULL, "faults");
    char line[64];
    if (proc_wait_output(&fault_p, "PORT ", line, sizeof line, 10000)) {
        snprintf(fault_p.url, sizeof fault_p.url, "http://127.0.0.1:%s",
                 line + 5);
        have_faults = 1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    proc_stop(&serve_p);
    proc_stop(&fault_p);
    tg_test_rmtree(work_dir);
    curl_global_cleanup();
    return 0;
}

static void need_serve(void)
{
    if (!have_serve)
        fail_msg("toolgate serve did not start ($TOOLGATE; see %s)",
                 serve_p.out);
}

static void need_faults(void)
{
    if (!have_faults)
        fail_msg("the fault server did not start (python3; see %s)",
                 fault_p.out);
}

/* url of a fixture scenario. */
static const char *fault_url(const char *scenario)
{
    static char url[300];
    snprintf(url, sizeof url, "%s/%s", fault_p.url, scenario);
    return url;
}

/* ----------------------------------------------------------- options */

static void test_options(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    tg__rtransport *t = NULL;
    tg_error err;
    static const char *const crlf[] = {"X-A: b\r\nX-Injected: 1"};
    static const char *const reserved[] = {"mcp-session-id: 1"};
    static const char *const auth[] = {"Authorization: Basic eA=="};
    static const char *const fine[] = {"X-Trace: abc def"};
    tg__rhttp_opts o = opts_for(NULL);
    assert_int_equal(tg__rhttp_new(&loop, &o, &cbs, NULL, &t, &err), TG_EINVAL);
    o.url = "ftp://127.0.0.1/";
    assert_int_equal(tg__rhttp_new(&loop, &o, &cbs, NULL, &t, &err), TG_EINVAL);
    o.url = "http://127.0.0.1/ x";
    assert_int_equal(tg__rhttp_new(&loop, &o, &cbs, NULL, &t, &err), TG_EINVAL);
    o.url = "http://127.0.0.1:1/mcp";
    o.headers = crlf;
    o.n_headers = 1;
    assert_int_equal(tg__rhttp_new(&loop, &o, &cbs, NULL, &t, &err), TG_EINVAL);
    o.headers = reserved;
    assert_int_equal(tg__rhttp_new(&loop, &o, &cbs, NULL, &t, &err), TG_EINVAL);
    o.headers = auth;
    o.bearer_token = "tok";
    assert_int_equal(tg__rhttp_new(&loop, &o, &cbs, NULL, &t, &err), TG_EINVAL);
    assert_null(strstr(err.message, "tok"));
    o.headers = fine;
    o.bearer_token = "bad token";
    assert_int_equal(tg__rhttp_new(&loop, &o, &cbs, NULL, &t, &err), TG_EINVAL);
    assert_null(t);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* ------------------------------------------------------------ faults */

/* A loopback port free right now: bound (never listened on), then let
 * go. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    socklen_t alen = sizeof a;
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void test_refused(void **state)
{
    (void)state;
    /* A port nobody listens on. */
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", free_port());
    tg__rhttp_opts o = opts_for(url);
    sess *s = sess_new(&o);
    send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", "ping",
             NULL, "1", NULL);
    const tg_error *e = wait_failure(s, "1", 10000);
    assert_int_equal(e->code, TG_EIO);
    assert_non_null(strstr(e->message, "failed"));
    /* The transport stays usable after a failed request. */
    send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}", "ping",
             NULL, "2", NULL);
    wait_failure(s, "2", 10000);
    sess_end(s);
}

/* One request to scenario under version; its failure is expected with
 * code and a message holding needle, printable, without the token. */
static void expect_fault_as(const char *scenario, const char *version, int code,
                            const char *needle)
{
    tg__rhttp_opts o = opts_for(fault_url(scenario));
    o.bearer_token = "fixture-secret";
    o.max_resumes = 3;
    sess *s = sess_new(&o);
    send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"method\":\"tools/list\"}",
             "tools/list", NULL, "\"r\"", version);
    const tg_error *e = wait_failure(s, "\"r\"", 20000);
    if (e->code != code || strstr(e->message, needle) == NULL)
        fail_msg("%s: got %d \"%s\", want %d with \"%s\"", scenario, e->code,
                 e->message, code, needle);
    assert_printable(e->message);
    assert_null(strstr(e->message, "fixture-secret"));
    sess_end(s);
}

static void expect_fault(const char *scenario, int code, const char *needle)
{
    expect_fault_as(scenario, "2025-11-25", code, needle);
}

static void test_fault_statuses(void **state)
{
    (void)state;
    need_faults();
    expect_fault("status500", TG_EIO, "HTTP 500: boom?");
    expect_fault("status401", TG_EPERM, "HTTP 401");
    expect_fault("garbage", TG_EIO, "failed");
    expect_fault("html", TG_EIO, "text/html");
    expect_fault("accepted", TG_EIO, "HTTP 202 without a response");
    expect_fault("nothing-here", TG_EIO, "HTTP 404");
    /* A JSON body that answers another request is no answer. */
    expect_fault("rpc-other", TG_EIO, "HTTP 400: {");
}

/* An error status whose JSON body is the request's JSON-RPC error: the
 * server answered, and the session reads why. */
static void test_fault_rpc_error(void **state)
{
    (void)state;
    need_faults();
    tg__rhttp_opts o = opts_for(fault_url("rpc-error"));
    sess *s = sess_new(&o);
    expect_answer(s, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\"}",
                  "tools/list", NULL, "8", "2026-07-28", "-32022");
    assert_int_equal(s->n_fails, 0);
    sess_end(s);
}

static void test_fault_limits(void **state)
{
    (void)state;
    need_faults();
    /* 64 MiB bodies and events against a 1 MiB limit: each transfer stops
     * at the limit (the ASan run checks that nothing piles up). */
    expect_fault("huge-length", TG_ELIMIT, "limit of 1048576");
    expect_fault("huge-chunks", TG_ELIMIT, "limit of 1048576");
    expect_fault("huge-event", TG_ELIMIT, "limit of 1048576");
    /* A message over the limit is not sent at all. */
    tg__rhttp_opts o = opts_for(fault_url("headers"));
    o.max_message = 16;
    sess *s = sess_new(&o);
    tg__rsend m = {"ping", NULL, "1", NULL};
    tg_error err;
    const char *big = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    assert_int_equal(tg__rtransport_send(s->t, big, strlen(big), &m, &err),
                     TG_ELIMIT);
    sess_end(s);
}

/* The headers the fixture saw, from its answer. */
static json_t *headers_seen(json_t *resp)
{
    json_t *h = json_object_get(json_object_get(resp, "result"), "headers");
    assert_non_null(h);
    return h;
}

static void test_fault_headers(void **state)
{
    (void)state;
    need_faults();
    static const char *const extra[] = {"X-Trace: abc def"};
    tg__rhttp_opts o = opts_for(fault_url("headers"));
    o.headers = extra;
    o.n_headers = 1;
    o.bearer_token = "tok-123";
    sess *s = sess_new(&o);
    json_t *r =
        request(s,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                "\"params\":{\"name\":\"echo\"}}",
                "tools/call", "echo", "1", "2026-07-28");
    json_t *h = headers_seen(r);
    assert_string_equal(json_string_value(json_object_get(h, "content-type")),
                        "application/json");
    assert_string_equal(json_string_value(json_object_get(h, "accept")),
                        "application/json, text/event-stream");
    assert_string_equal(json_string_value(json_object_get(h, "authorization")),
                        "Bearer tok-123");
    assert_string_equal(json_string_value(json_object_get(h, "x-trace")),
                        "abc def");
    assert_string_equal(
        json_string_value(json_object_get(h, "mcp-protocol-version")),
        "2026-07-28");
    assert_string_equal(json_string_value(json_object_get(h, "mcp-method")),
                        "tools/call");
    assert_string_equal(json_string_value(json_object_get(h, "mcp-name")),
                        "echo");
    json_decref(r);
    /* A name that is not plain visible ASCII goes base64-encoded. */
    r = request(s,
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                "\"params\":{\"name\":\" caf\\u00e9\"}}",
                "tools/call", " caf\xc3\xa9", "2", "2026-07-28");
    assert_string_equal(
        json_string_value(json_object_get(headers_seen(r), "mcp-name")),
        "=?base64?IGNhZsOp?=");
    json_decref(r);
    /* Under 2025 versions: no Mcp-Method or Mcp-Name. */
    r = request(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}",
                "tools/list", NULL, "3", "2025-11-25");
    assert_null(json_object_get(headers_seen(r), "mcp-method"));
    json_decref(r);
    sess_end(s);
}

/* A stream that ends (cleanly, or cut mid-chunk) after its priming event
 * and a notification is resumed with GET and Last-Event-ID after the
 * server's retry time (200 ms; the configured default is 5 s, so a
 * resumption within 4 s honoured the server's), and the response comes on
 * the resumed stream. */
static void test_fault_resume(void **state)
{
    (void)state;
    need_faults();
    const char *scenarios[] = {"resume", "resume-cut"};
    for (size_t i = 0; i < 2; i++) {
        tg__rhttp_opts o = opts_for(fault_url(scenarios[i]));
        o.retry_ms = 5000;
        sess *s = sess_new(&o);
        double t0 = tg_test_now_ms();
        json_t *r = request(
            s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\"}",
            "tools/call", "x", "4", "2025-11-25");
        double took = tg_test_now_ms() - t0;
        json_t *res = json_object_get(r, "result");
        assert_string_equal(
            json_string_value(json_object_get(res, "lastEventId")), "e2");
        assert_int_equal(json_integer_value(json_object_get(res, "gets")), 1);
        assert_true(took >= 200);
        assert_true(took < (double)tg_test_ms(4000));
        /* The notification came first, the priming event not at all; it
         * came on the request's stream, and the session is told so. */
        assert_int_equal(s->n_msgs, 2);
        assert_non_null(strstr(s->msgs[0], "notifications/message"));
        assert_non_null(s->streams[0]);
        assert_string_equal(s->streams[0], "4");
        assert_int_equal(s->n_fails, 0);
        json_decref(r);
        sess_end(s);
    }
}

static void test_fault_no_resume(void **state)
{
    (void)state;
    need_faults();
    /* Resumptions that keep failing (503): bounded (max_resumes 3). */
    expect_fault("resume-fail", TG_EIO, "3 resumptions in a row failed");
    /* No event id to resume from. */
    expect_fault_as("no-id", "2025-06-18", TG_EIO, "no event id");
    /* 2026-07-28 streams are never resumed. */
    expect_fault_as("resume", "2026-07-28", TG_EIO, "cannot be resumed");
}

static void test_fault_session_404(void **state)
{
    (void)state;
    need_faults();
    tg__rhttp_opts o = opts_for(fault_url("session"));
    sess *s = sess_new(&o);
    fixture_init(s);
    assert_string_equal(((rhttp *)s->t)->session_id, "fixture-1");
    send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
             "tools/list", NULL, "2", "2025-11-25");
    assert_true(run_until(s, is_closed, NULL, 10000));
    assert_int_equal(s->closed_err.code, TG_EIO);
    assert_non_null(strstr(s->closed_err.message, "404"));
    assert_int_equal(s->n_fails, 0); /* closed says it all */
    sess_end(s);
}

/* A server that never answers: the idle limit fails the request; a drop
 * ends it without a word; close ends what runs and bounds the DELETE. */
static void test_fault_hang(void **state)
{
    (void)state;
    need_faults();
    tg__rhttp_opts o = opts_for(fault_url("hang"));
    o.idle_ms = 1000;
    o.close_ms = 300;
    sess *s = sess_new(&o);
    fixture_init(s);
    send_call(s, "2", "2025-11-25");
    const tg_error *e = wait_failure(s, "2", 8000);
    assert_int_equal(e->code, TG_EIO);
    sess_end(s);

    o.idle_ms = 0;
    s = sess_new(&o);
    fixture_init(s);
    send_call(s, "3", "2025-11-25");
    send_call(s, "4", "2025-11-25");
    run_until(s, is_closed, NULL, 300); /* both reach the server */
    tg__rtransport_drop(s->t, "3");
    tg__rtransport_drop(s->t, "99"); /* unknown: nothing */
    run_until(s, is_closed, NULL, 300);
    assert_int_equal(s->n_fails, 0);
    /* close: request 4 ends unreported, the DELETE hangs and is cut. */
    double t0 = tg_test_now_ms();
    tg__rtransport_close(s->t);
    assert_true(run_until(s, is_closed, NULL, 5000));
    assert_true(tg_test_now_ms() - t0 < (double)tg_test_ms(3000));
    assert_int_equal(s->closed_err.code, 0);
    assert_int_equal(s->n_fails, 0);
    sess_end(s);
}

static int two_notes(sess *s, const void *arg)
{
    (void)arg;
    return s->n_msgs >= 3; /* the initialize response, two notifications */
}

/* Once the session is established (initialized accepted) the transport
 * opens the server's GET stream, with the session id; when the server ends
 * it, it comes back after the retry time with Last-Event-ID. */
static void test_fault_listen(void **state)
{
    (void)state;
    need_faults();
    tg__rhttp_opts o = opts_for(fault_url("listen"));
    sess *s = sess_new(&o);
    fixture_init(s);
    send_msg(s,
             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
             "notifications/initialized", NULL, NULL, "2025-11-25");
    assert_true(run_until(s, two_notes, NULL, 10000));
    json_t *first = tg_test_json(s->msgs[1]);  /* new ref */
    json_t *second = tg_test_json(s->msgs[2]); /* new ref */
    json_t *d1 = json_object_get(json_object_get(first, "params"), "data");
    json_t *d2 = json_object_get(json_object_get(second, "params"), "data");
    assert_true(json_is_null(json_object_get(d1, "lastEventId")));
    assert_int_equal(json_integer_value(json_object_get(d1, "gets")), 1);
    assert_string_equal(json_string_value(json_object_get(d2, "lastEventId")),
                        "g1");
    assert_int_equal(json_integer_value(json_object_get(d2, "gets")), 2);
    json_decref(first);
    json_decref(second);
    assert_int_equal(s->n_fails, 0);
    sess_end(s);
}

static int all_answered(sess *s, const void *arg)
{
    return s->n_msgs + s->n_fails >= *(const size_t *)arg;
}

/* A stream the server keeps open after its response holds no slot: with
 * one transfer at a time, three such requests are all answered; and the
 * transport ends such streams itself, a second after their response. */
static int no_transfer(sess *s, const void *arg)
{
    (void)arg;
    return ((rhttp *)s->t)->head == NULL;
}

static void test_fault_linger(void **state)
{
    (void)state;
    need_faults();
    tg__rhttp_opts o = opts_for(fault_url("linger"));
    o.max_transfers = 1;
    sess *s = sess_new(&o);
    for (int i = 1; i <= 3; i++) {
        char id[8];
        snprintf(id, sizeof id, "%d", i);
        send_call(s, id, "2025-11-25");
    }
    for (int i = 1; i <= 3; i++) {
        char id[8];
        snprintf(id, sizeof id, "%d", i);
        expect_answer_seen(s, id, "lingering");
    }
    assert_true(run_until(s, no_transfer, NULL, 5000));
    sess_end(s);
}

/* max_transfers bounds the POSTs in flight; the others wait their turn. */
static void test_fault_concurrency(void **state)
{
    (void)state;
    need_faults();
    tg__rhttp_opts o = opts_for(fault_url("concurrent"));
    o.max_transfers = 2;
    sess *s = sess_new(&o);
    const size_t n = 5;
    for (size_t i = 0; i < n; i++) {
        char msg[128], id[24];
        snprintf(id, sizeof id, "%zu", i + 1);
        snprintf(msg, sizeof msg,
                 "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/list\"}",
                 id);
        send_msg(s, msg, "tools/list", NULL, id, "2025-11-25");
    }
    assert_true(run_until(s, all_answered, &n, 20000));
    assert_int_equal(s->n_fails, 0);
    for (size_t i = 0; i < n; i++) {
        json_t *m = tg_test_json(s->msgs[i]); /* new ref */
        json_int_t most = json_integer_value(
            json_object_get(json_object_get(m, "result"), "most"));
        assert_true(most >= 1 && most <= 2);
        json_decref(m);
    }
    sess_end(s);
}

static int never(sess *s, const void *arg)
{
    (void)s;
    (void)arg;
    return 0;
}

/* The session may call the transport from inside its callbacks: a drop
 * there ends the stream being read (nothing more comes for it, not even
 * its resumption), a send starts another request, a close ends it all
 * (`closed` once, nothing after). */
static void test_fault_reentrant(void **state)
{
    (void)state;
    need_faults();
    tg__rhttp_opts o = opts_for(fault_url("resume"));
    sess *s = sess_new(&o);
    s->drop_on_msg = "4";
    send_call(s, "4", "2025-11-25");
    run_until(s, never, NULL, 800); /* past the 200 ms retry */
    assert_int_equal(s->n_msgs, 1);
    assert_int_equal(s->n_fails, 0);
    sess_end(s);

    o = opts_for(fault_url("headers"));
    s = sess_new(&o);
    s->send_on_msg = "2";
    json_t *r =
        request(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
                "tools/list", NULL, "1", "2025-11-25");
    json_decref(r);
    expect_answer_seen(s, "2", "headers");
    s->close_on_msg = 1;
    send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}",
             "tools/list", NULL, "3", "2025-11-25");
    send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}",
             "tools/list", NULL, "5", "2025-11-25");
    assert_true(run_until(s, is_closed, NULL, 10000));
    assert_int_equal(s->closed_err.code, 0);
    assert_int_equal(s->n_fails, 0);
    assert_int_equal(s->n_msgs, 3); /* 1, 2, then one of 3 and 5 */
    sess_end(s);
}

/* -------------------------------------------------------- toolgate serve */

static const char init_fmt[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"%s\",\"capabilities\":%s,\"clientInfo\":{"
    "\"name\":\"test_rhttp\",\"version\":\"1\"}}}";

static tg__rhttp_opts serve_opts(void)
{
    tg__rhttp_opts o = opts_for(serve_p.url);
    o.bearer_token = "s3cret-token";
    return o;
}

/* initialize + initialized under version v; returns the session. */
/* A session established with initialize + initialized under version v,
 * over a transport made with o; the session id was learnt. */
static sess *legacy_session(const tg__rhttp_opts *o, const char *v,
                            const char *caps)
{
    sess *s = sess_new(o);
    char init[512];
    snprintf(init, sizeof init, init_fmt, v, caps);
    json_t *r = request(s, init, "initialize", NULL, "1", NULL);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(r, "result"), "protocolVersion")),
                        v);
    json_decref(r);
    assert_non_null(((rhttp *)s->t)->session_id);
    send_msg(s,
             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
             "notifications/initialized", NULL, NULL, v);
    return s;
}

static sess *serve_session(const char *v)
{
    tg__rhttp_opts o = serve_opts();
    return legacy_session(&o, v, "{}");
}

/* A request with the session id sid, outside the transport: its status. */
static long raw_status(const char *method, const char *sid, const char *v)
{
    CURL *e = curl_easy_init();
    struct curl_slist *l = NULL;
    char line[400];
    snprintf(line, sizeof line, "Mcp-Session-Id: %s", sid);
    l = curl_slist_append(l, line);
    snprintf(line, sizeof line, "MCP-Protocol-Version: %s", v);
    l = curl_slist_append(l, line);
    l = curl_slist_append(l, "Authorization: Bearer s3cret-token");
    l = curl_slist_append(l, "Content-Type: application/json");
    l = curl_slist_append(l, "Accept: application/json, text/event-stream");
    curl_easy_setopt(e, CURLOPT_URL, serve_p.url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, l);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, tg_test_ms(10000));
    if (strcmp(method, "DELETE") == 0)
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
    else
        curl_easy_setopt(e, CURLOPT_POSTFIELDS,
                         "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/"
                         "list\"}");
    FILE *sink = fopen("/dev/null", "w");
    curl_easy_setopt(e, CURLOPT_WRITEDATA, sink);
    long status = 0;
    if (curl_easy_perform(e) == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    fclose(sink);
    curl_slist_free_all(l);
    curl_easy_cleanup(e);
    return status;
}

static void test_serve_legacy(void **state)
{
    (void)state;
    need_serve();
    const char *versions[] = {"2025-06-18", "2025-11-25"};
    for (size_t i = 0; i < 2; i++) {
        const char *v = versions[i];
        sess *s = serve_session(v);
        /* Without the session id the server would answer 400. */
        expect_answer(
            s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
            "tools/list", NULL, "2", v, "\"name\": \"echo\"");
        /* tools/call is answered as an SSE stream. */
        expect_answer(s,
                      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":"
                      "\"hello over http\"}}}",
                      "tools/call", "echo", "3", v, "hello over http");
        assert_int_equal(s->n_fails, 0);
        /* close sends DELETE: the old session id is unknown afterwards. */
        char *sid = strdup(((rhttp *)s->t)->session_id);
        assert_int_equal(raw_status("POST", sid, v), 200);
        sess_end(s);
        assert_int_equal(raw_status("POST", sid, v), 404);
        free(sid);
    }
}

/* The server ends the session (a DELETE from elsewhere): the next request
 * gets 404 for it, and the transport closes, saying so. */
static void test_serve_session_end(void **state)
{
    (void)state;
    need_serve();
    sess *s = serve_session("2025-11-25");
    assert_int_equal(
        raw_status("DELETE", ((rhttp *)s->t)->session_id, "2025-11-25"), 200);
    send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
             "tools/list", NULL, "2", "2025-11-25");
    assert_true(run_until(s, is_closed, NULL, 10000));
    assert_int_equal(s->closed_err.code, TG_EIO);
    assert_non_null(strstr(s->closed_err.message, "ended the MCP session"));
    sess_end(s);
}

static const char modern_call_fmt[] =
    "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\",\"params\":{"
    "\"name\":\"%s\",\"arguments\":%s,\"_meta\":{"
    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";

static void test_serve_modern(void **state)
{
    (void)state;
    need_serve();
    tg__rhttp_opts o = serve_opts();
    sess *s = sess_new(&o);
    char msg[600];
    snprintf(msg, sizeof msg, modern_call_fmt, "\"m1\"", "echo",
             "{\"text\":\"stateless\"}");
    json_t *r = request(s, msg, "tools/call", "echo", "\"m1\"", "2026-07-28");
    char *text = json_dumps(r, 0);
    assert_non_null(strstr(text, "\"resultType\": \"complete\""));
    assert_non_null(strstr(text, "stateless"));
    free(text);
    json_decref(r);
    assert_null(((rhttp *)s->t)->session_id); /* none minted, none taken */
    /* The server checks Mcp-Name against the body (HeaderMismatch). */
    snprintf(msg, sizeof msg, modern_call_fmt, "\"m2\"", "echo",
             "{\"text\":\"x\"}");
    send_msg(s, msg, "tools/call", "not-echo", "\"m2\"", "2026-07-28");
    /* Its 400 carries the JSON-RPC error: that is the response. */
    expect_answer_seen(s, "\"m2\"", "-32020");
    assert_int_equal(s->n_fails, 0);
    sess_end(s);
}

static void test_serve_wrong_token(void **state)
{
    (void)state;
    need_serve();
    tg__rhttp_opts o = serve_opts();
    o.bearer_token = "not-the-token";
    sess *s = sess_new(&o);
    char init[512];
    snprintf(init, sizeof init, init_fmt, "2025-11-25", "{}");
    send_msg(s, init, "initialize", NULL, "1", NULL);
    const tg_error *e = wait_failure(s, "1", 10000);
    assert_int_equal(e->code, TG_EPERM);
    assert_null(strstr(e->message, "not-the-token"));
    assert_null(strstr(e->message, "s3cret"));
    sess_end(s);
}

/* The pid of the process whose command line holds arg, or 0. */
static long find_process(const char *arg)
{
    DIR *d = opendir("/proc");
    struct dirent *ent;
    long found = 0;
    while (d != NULL && found == 0 && (ent = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(ent->d_name, &end, 10);
        if (*end != '\0' || pid <= 1)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
        size_t n = 0;
        char *cmd = tg_test_read_file(path, &n);
        for (size_t k = 0; cmd != NULL && k < n; k += strlen(cmd + k) + 1)
            if (strcmp(cmd + k, arg) == 0 && tg_test_alive(pid))
                found = pid;
        free(cmd);
    }
    if (d != NULL)
        closedir(d);
    return found;
}

static int nap_running(sess *s, const void *arg)
{
    (void)s;
    (void)arg;
    return find_process("29.7531") != 0;
}

/* Under 2026-07-28 dropping a request closes its stream, which cancels the
 * call on the server: its process group is killed at once. */
static void test_serve_drop_cancels(void **state)
{
    (void)state;
    need_serve();
    tg__rhttp_opts o = serve_opts();
    sess *s = sess_new(&o);
    char msg[600];
    snprintf(msg, sizeof msg, modern_call_fmt, "41", "nap", "{}");
    send_msg(s, msg, "tools/call", "nap", "41", "2026-07-28");
    assert_true(run_until(s, nap_running, NULL, 10000));
    long pid = find_process("29.7531");
    tg__rtransport_drop(s->t, "41");
    run_until(s, is_closed, NULL, 200);
    assert_true(tg_test_dead_within(pid, tg_test_ms(5000)));
    assert_int_equal(s->n_msgs, 0);
    assert_int_equal(s->n_fails, 0);
    sess_end(s);
}

/* toolgate serve ends a 2025-11-25 call's stream after 5 s; the call goes
 * on and its result comes on the stream resumed with Last-Event-ID. */
static void test_serve_resume(void **state)
{
    (void)state;
    need_serve();
    sess *s = serve_session("2025-11-25");
    expect_answer(s,
                  "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
                  "\"params\":{\"name\":\"rest\",\"arguments\":{}}}",
                  "tools/call", "rest", "5", "2025-11-25", "rested");
    assert_true(((rhttp *)s->t)->resumed >= 1);
    assert_int_equal(s->n_fails, 0);
    sess_end(s);
}

/* ------------------------------------------------- server-everything */

static int asked_sampling(sess *s, const void *arg)
{
    (void)arg;
    return s->n_msgs > 0 &&
           strstr(s->msgs[s->n_msgs - 1], "sampling/createMessage") != NULL;
}

static void test_everything(void **state)
{
    (void)state;
    char bin[PATH_MAX];
    tg_test_source_path(
        bin, sizeof bin,
        "tests/interop/node_modules/.bin/mcp-server-everything");
    if (access(bin, X_OK) != 0) {
        /* The program then exits 77 (skipped) when all else passed, or
         * fails under CI=true (tg_test_exit). */
        fprintf(stderr, "%s: %s is missing (run: make interop-deps)\n",
                tg_test_in_ci() ? "FAIL (CI=true)" : "SKIP", bin);
        (*tg_test_data_missing())++;
        skip();
    }
    /* It takes its port from $PORT. */
    int port = free_port();
    static char env[32];
    snprintf(env, sizeof env, "PORT=%d", port);
    proc p = {0};
    const char *argv[] = {bin, "streamableHttp", NULL};
    proc_start(&p, argv, env, "everything");
    if (!proc_wait_output(&p, "listening on port", NULL, 0, 30000)) {
        proc_stop(&p);
        fail_msg("server-everything did not start (see %s)", p.out);
    }
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", port);
    tg__rhttp_opts o = opts_for(url);
    sess *s = legacy_session(&o, "2025-11-25", "{\"sampling\":{}}");
    expect_answer(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
                  "tools/list", NULL, "2", "2025-11-25", "\"name\": \"echo\"");
    expect_answer(s,
                  "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
                  "\"params\":{\"name\":\"echo\",\"arguments\":{\"message\":"
                  "\"hi everything\"}}}",
                  "tools/call", "echo", "3", "2025-11-25",
                  "Echo: hi everything");
    /* A long operation reports progress on the call's stream first. */
    size_t before = s->n_msgs;
    expect_answer(s,
                  "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
                  "\"params\":{\"name\":\"trigger-long-running-operation\","
                  "\"arguments\":{\"duration\":1,\"steps\":3},"
                  "\"_meta\":{\"progressToken\":\"p4\"}}}",
                  "tools/call", "trigger-long-running-operation", "4",
                  "2025-11-25", "completed");
    size_t progress = 0;
    for (size_t i = before; i < s->n_msgs; i++)
        progress += strstr(s->msgs[i], "notifications/progress") != NULL;
    assert_true(progress >= 1);
    /* The server asks the client (sampling/createMessage) on the call's
     * stream; the answer is a POST of its own; then the call ends. */
    send_msg(s,
             "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"trigger-sampling-request\","
             "\"arguments\":{\"prompt\":\"hello\"}}}",
             "tools/call", "trigger-sampling-request", "5", "2025-11-25");
    assert_true(run_until(s, asked_sampling, NULL, 20000));
    json_t *ask = tg_test_json(s->msgs[s->n_msgs - 1]); /* new ref */
    char *ask_id = json_dumps(json_object_get(ask, "id"), JSON_ENCODE_ANY);
    char reply[512];
    snprintf(reply, sizeof reply,
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"role\":"
             "\"assistant\",\"content\":{\"type\":\"text\",\"text\":"
             "\"sampled by test_rhttp\"},\"model\":\"none\"}}",
             ask_id);
    free(ask_id);
    json_decref(ask);
    send_msg(s, reply, NULL, NULL, NULL, "2025-11-25");
    expect_answer_seen(s, "5", "sampled by test_rhttp");
    assert_int_equal(s->n_fails, 0);
    sess_end(s);
    proc_stop(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_fault_statuses),
        cmocka_unit_test(test_fault_rpc_error),
        cmocka_unit_test(test_fault_limits),
        cmocka_unit_test(test_fault_headers),
        cmocka_unit_test(test_fault_resume),
        cmocka_unit_test(test_fault_no_resume),
        cmocka_unit_test(test_fault_session_404),
        cmocka_unit_test(test_fault_hang),
        cmocka_unit_test(test_fault_listen),
        cmocka_unit_test(test_fault_concurrency),
        cmocka_unit_test(test_fault_linger),
        cmocka_unit_test(test_fault_reentrant),
        cmocka_unit_test(test_serve_legacy),
        cmocka_unit_test(test_serve_session_end),
        cmocka_unit_test(test_serve_modern),
        cmocka_unit_test(test_serve_wrong_token),
        cmocka_unit_test(test_serve_drop_cancels),
        cmocka_unit_test(test_serve_resume),
        cmocka_unit_test(test_everything),
    };
    return tg_test_exit(
        cmocka_run_group_tests(tests, group_setup, group_teardown));
}
