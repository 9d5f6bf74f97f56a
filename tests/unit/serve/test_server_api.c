/* SPDX-License-Identifier: MIT */
/*
 * test_server_api.c - the server's public API (include/toolgate_serve.h)
 * as a C program uses it, on a real runtime with an in-process tool:
 * stdio on a socket pair the test writes and reads (initialize, tools/call
 * answered with the C tool's result, EOF stops the server, the caller's
 * descriptors stay open), HTTP on an ephemeral port (the port and URL
 * readable, a client served), and every way to stop it: tg_server_stop
 * from another thread, from a signal handler, before the run, and a stop
 * signal (tg_server_stop_on_signal, whose disposition is back after the
 * run). The misuses are errors, not crashes: a second run or listen, a
 * run with nothing to serve, a bad descriptor, port or token file, an
 * address in use, a signal that cannot be caught. Time bounds are
 * tg_test_ms (labelled timing).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "tg_test.h"
#include "toolgate.h"
#include "toolgate_serve.h"

/* ------------------------------------------------------------ fixtures */

/* The tool: {"n": N} -> {"twice": 2N}. */
static int twice(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    (void)ud;
    (void)len;
    const char *p = strstr(args, "\"n\":");
    char out[64];
    int w = snprintf(out, sizeof out, "{\"twice\":%ld}",
                     p != NULL ? 2 * strtol(p + 4, NULL, 10) : -1);
    return tg_handler_set_json(ctx, out, (size_t)w, NULL);
}

typedef struct env {
    tg_config *cfg;
    tg_runtime *rt;
    tg_server *srv;
} env;

/* A runtime serving `twice` alone, no journal, no spool; a server over it
 * with `opts`. */
static void env_make(env *e, const tg_server_options *opts)
{
    static const char config[] =
        "{\"builtin_tools\":[],\"journal\":null,\"spool\":null}";
    tg_error err = {0};
    memset(e, 0, sizeof *e);
    e->cfg = tg_config_new();
    assert_non_null(e->cfg);
    assert_int_equal(tg_config_load(e->cfg, config, strlen(config), NULL, &err),
                     0);
    assert_int_equal(tg_runtime_new(e->cfg, &e->rt, &err), 0);
    assert_int_equal(
        tg_runtime_register(e->rt, "twice", "Doubles n",
                            "{\"type\":\"object\",\"properties\":{\"n\":{"
                            "\"type\":\"integer\"}},\"required\":[\"n\"]}",
                            twice, NULL, TG_TOOL_INLINE, &err),
        0);
    assert_int_equal(tg_server_new(e->rt, opts, &e->srv, &err), 0);
}

static void env_free(env *e)
{
    tg_server_free(e->srv);
    tg_runtime_free(e->rt);
    tg_config_free(e->cfg);
}

/* A thread running the server. */
typedef struct runner {
    pthread_t th;
    tg_server *srv;
    int in_fd, out_fd; /* -1: tg_server_run (HTTP) */
    int rc;
    volatile int done;
} runner;

static void *run_main(void *arg)
{
    runner *r = arg;
    tg_error err = {0};
    r->rc = r->in_fd >= 0
                ? tg_server_run_stdio(r->srv, r->in_fd, r->out_fd, &err)
                : tg_server_run(r->srv, &err);
    r->done = 1;
    return NULL;
}

static void run_start(runner *r, tg_server *srv, int in_fd, int out_fd)
{
    memset(r, 0, sizeof *r);
    r->srv = srv;
    r->in_fd = in_fd;
    r->out_fd = out_fd;
    r->rc = 1;
    assert_int_equal(pthread_create(&r->th, NULL, run_main, r), 0);
}

/* Joins the runner once it is done, within tg_test_ms(limit_ms); fails
 * the test when it is not (the run did not return). */
static void run_join(runner *r, long limit_ms)
{
    double until = tg_test_now_ms() + (double)tg_test_ms(limit_ms);
    while (!r->done && tg_test_now_ms() < until)
        tg_test_sleep_ms(10);
    if (!r->done)
        fail_msg("the server's run did not return within %ld ms",
                 tg_test_ms(limit_ms));
    pthread_join(r->th, NULL);
}

/* Reads from fd into buf until it holds `want`, or the deadline; 1 when
 * it does. */
static int read_until(int fd, char *buf, size_t size, size_t *len,
                      const char *want, long limit_ms)
{
    double until = tg_test_now_ms() + (double)tg_test_ms(limit_ms);
    while (strstr(buf, want) == NULL) {
        double left = until - tg_test_now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || *len + 1 >= size || poll(&p, 1, (int)left) <= 0)
            return 0;
        ssize_t n = read(fd, buf + *len, size - 1 - *len);
        if (n <= 0)
            return 0;
        *len += (size_t)n;
        buf[*len] = '\0';
    }
    return 1;
}

/* A TCP connection to 127.0.0.1:port, or -1. */
static int connect_port(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static int write_all(int fd, const char *s)
{
    size_t len = strlen(s);
    while (len > 0) {
        ssize_t n = write(fd, s, len);
        if (n <= 0)
            return -1;
        s += n;
        len -= (size_t)n;
    }
    return 0;
}

static const char init_msg[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{"
    "\"name\":\"t\",\"version\":\"1\"}}}";

/* POSTs initialize to 127.0.0.1:port/mcp with the `extra` header lines
 * (each ending in \r\n); 1 when a 200 with the server's info came back. */
static int http_initialize(int port, const char *extra)
{
    char req[1024], buf[8192] = "";
    size_t len = 0;
    snprintf(req, sizeof req,
             "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s"
             "Content-Type: application/json\r\n"
             "Accept: application/json, text/event-stream\r\n"
             "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
             port, extra, strlen(init_msg), init_msg);
    int fd = connect_port(port);
    int got = fd >= 0 && write_all(fd, req) == 0 &&
              read_until(fd, buf, sizeof buf, &len, "\"serverInfo\"", 10000) &&
              strstr(buf, "HTTP/1.1 200") != NULL;
    if (fd >= 0)
        close(fd);
    return got;
}

/* ------------------------------------------------------------ tests */

static void test_stdio_socketpair(void **state)
{
    (void)state;
    env e;
    env_make(&e, NULL);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    runner r;
    run_start(&r, e.srv, sv[1], sv[1]);
    char buf[16384] = "";
    size_t len = 0;
    assert_int_equal(write_all(sv[0], init_msg), 0);
    assert_int_equal(
        write_all(sv[0], "\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                         "initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,"
                         "\"method\":\"tools/call\",\"params\":{\"name\":"
                         "\"twice\",\"arguments\":{\"n\":21}}}\n"),
        0);
    assert_true(read_until(sv[0], buf, sizeof buf, &len, "\"id\":2", 10000));
    assert_non_null(strstr(buf, "\"protocolVersion\":\"2025-06-18\""));
    assert_non_null(strstr(buf, "{\\\"twice\\\":42}"));
    /* EOF on the input stops the server; the run returns */
    assert_int_equal(shutdown(sv[0], SHUT_WR), 0);
    run_join(&r, 10000);
    assert_int_equal(r.rc, 0);
    /* the caller's descriptor is open still: the server used its own */
    assert_int_not_equal(fcntl(sv[1], F_GETFD), -1);
    tg_error err = {0};
    assert_int_equal(tg_server_run_stdio(e.srv, sv[1], sv[1], &err), TG_EINVAL);
    assert_non_null(strstr(err.message, "ran already"));
    close(sv[0]);
    close(sv[1]);
    env_free(&e);
}

static void test_http_stop_from_thread(void **state)
{
    (void)state;
    env e;
    env_make(&e, NULL);
    tg_error err = {0};
    assert_int_equal(tg_server_port(e.srv), 0);
    assert_null(tg_server_url(e.srv));
    assert_int_equal(tg_server_listen_http(e.srv, NULL, 0, &err), 0);
    int port = tg_server_port(e.srv);
    assert_true(port > 0 && port < 65536);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", port);
    assert_string_equal(tg_server_url(e.srv), url);
    assert_int_equal(tg_server_listen_http(e.srv, NULL, 0, &err), TG_EINVAL);
    runner r;
    run_start(&r, e.srv, -1, -1);
    /* a client is served: initialize over HTTP */
    assert_true(http_initialize(port, ""));
    /* stopped from this thread, not the one running it */
    tg_server_stop(e.srv);
    tg_server_stop(e.srv); /* idempotent */
    run_join(&r, 10000);
    assert_int_equal(r.rc, 0);
    assert_int_equal(connect_port(port), -1); /* no longer listening */
    assert_int_equal(tg_server_run(e.srv, &err), TG_EINVAL);
    env_free(&e);
}

static tg_server *volatile sig_srv;

static void on_usr1(int signum)
{
    (void)signum;
    tg_server_stop(sig_srv);
}

static void test_stop_from_signal_handler(void **state)
{
    (void)state;
    env e;
    env_make(&e, NULL);
    tg_error err = {0};
    assert_int_equal(tg_server_listen_http(e.srv, "127.0.0.1", 0, &err), 0);
    sig_srv = e.srv;
    struct sigaction sa = {0}, old;
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    runner r;
    run_start(&r, e.srv, -1, -1);
    tg_test_sleep_ms(20); /* most likely running by now; either way works */
    assert_int_equal(raise(SIGUSR1), 0);
    run_join(&r, 10000);
    assert_int_equal(r.rc, 0);
    sigaction(SIGUSR1, &old, NULL);
    sig_srv = NULL;
    env_free(&e);
}

static void test_stop_before_run(void **state)
{
    (void)state;
    env e;
    env_make(&e, NULL);
    tg_error err = {0};
    assert_int_equal(tg_server_listen_http(e.srv, NULL, 0, &err), 0);
    tg_server_stop(e.srv);
    runner r;
    run_start(&r, e.srv, -1, -1);
    run_join(&r, 10000);
    assert_int_equal(r.rc, 0);
    env_free(&e);
}

static void test_stop_on_signal(void **state)
{
    (void)state;
    env e;
    env_make(&e, NULL);
    tg_error err = {0};
    assert_int_equal(tg_server_stop_on_signal(e.srv, SIGKILL, &err), TG_EINVAL);
    assert_int_equal(tg_server_stop_on_signal(e.srv, 0, &err), TG_EINVAL);
    assert_int_equal(tg_server_stop_on_signal(e.srv, SIGUSR2, &err), 0);
    assert_int_equal(tg_server_stop_on_signal(e.srv, SIGUSR2, &err), 0);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    runner r;
    run_start(&r, e.srv, sv[1], sv[1]);
    /* served: initialize answered, so the loop runs */
    char buf[8192] = "";
    size_t len = 0;
    assert_int_equal(write_all(sv[0], init_msg), 0);
    assert_int_equal(write_all(sv[0], "\n"), 0);
    assert_true(read_until(sv[0], buf, sizeof buf, &len, "\"id\":1", 10000));
    assert_int_equal(kill(getpid(), SIGUSR2), 0);
    run_join(&r, 10000);
    assert_int_equal(r.rc, 0);
    /* the signal's default disposition is back */
    struct sigaction now;
    assert_int_equal(sigaction(SIGUSR2, NULL, &now), 0);
    assert_ptr_equal(now.sa_handler, SIG_DFL);
    assert_int_equal(tg_server_stop_on_signal(e.srv, SIGUSR2, &err), TG_EINVAL);
    close(sv[0]);
    close(sv[1]);
    env_free(&e);
}

static void test_misuse(void **state)
{
    (void)state;
    tg_error err = {0};
    tg_server *none = NULL;
    env e;
    env_make(&e, NULL);
    assert_int_equal(tg_server_new(NULL, NULL, &none, &err), TG_EINVAL);
    assert_null(none);
    assert_int_equal(tg_server_new(e.rt, NULL, NULL, &err), TG_EINVAL);
    tg_server_options bad = {.nallow_origins = 2};
    assert_int_equal(tg_server_new(e.rt, &bad, &none, &err), TG_EINVAL);
    assert_null(none);
    /* nothing to serve, a descriptor that is not open, a bad port */
    assert_int_equal(tg_server_run(e.srv, &err), TG_EINVAL);
    assert_non_null(strstr(err.message, "does not listen"));
    assert_int_equal(tg_server_run_stdio(e.srv, -1, 1, &err), TG_EINVAL);
    assert_int_equal(tg_server_listen_http(e.srv, NULL, 70000, &err),
                     TG_EINVAL);
    assert_int_equal(tg_server_listen_http(e.srv, NULL, -1, &err), TG_EINVAL);
    /* a port in use */
    assert_int_equal(tg_server_listen_http(e.srv, NULL, 0, &err), 0);
    env other;
    env_make(&other, NULL);
    assert_int_equal(
        tg_server_listen_http(other.srv, NULL, tg_server_port(e.srv), &err),
        TG_EEXIST);
    assert_int_equal(tg_server_port(other.srv), 0);
    env_free(&other);
    /* a token file that is not there */
    tg_server_options tf = {.http_token_file = "/nonexistent/token"};
    env_make(&other, &tf);
    assert_int_equal(tg_server_listen_http(other.srv, NULL, 0, &err),
                     TG_EINVAL);
    assert_non_null(strstr(err.message, "/nonexistent/token"));
    env_free(&other);
    /* a trace file that cannot be opened */
    tg_server_options tr = {.trace = "/nonexistent/trace.jsonl"};
    assert_int_equal(tg_server_new(e.rt, &tr, &none, &err), TG_EIO);
    assert_null(none);
    /* freed listening, never run */
    env_free(&e);
    tg_server_free(NULL);
    tg_server_stop(NULL);
}

/* The options are copied: the caller's strings may go at once. */
static void test_options_copied(void **state)
{
    (void)state;
    char token[] = "s3cret", origin[] = "https://app.example";
    const char *origins[] = {origin};
    tg_server_options o = {.http_token = token,
                           .allow_origins = origins,
                           .nallow_origins = 1,
                           .caller = "embedder",
                           .grace_ms = -1};
    env e;
    env_make(&e, &o);
    memset(token, 'x', sizeof token - 1);
    memset(origin, 'x', sizeof origin - 1);
    tg_error err = {0};
    assert_int_equal(tg_server_listen_http(e.srv, NULL, 0, &err), 0);
    int port = tg_server_port(e.srv);
    runner r;
    run_start(&r, e.srv, -1, -1);
    /* the origin and the token are the server's copies */
    assert_true(http_initialize(port, "Origin: https://app.example\r\n"
                                      "Authorization: Bearer s3cret\r\n"));
    assert_false(http_initialize(port, "Authorization: Bearer xxxxxx\r\n"));
    tg_server_stop(e.srv);
    run_join(&r, 10000);
    env_free(&e);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stdio_socketpair),
        cmocka_unit_test(test_http_stop_from_thread),
        cmocka_unit_test(test_stop_from_signal_handler),
        cmocka_unit_test(test_stop_before_run),
        cmocka_unit_test(test_stop_on_signal),
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_options_copied),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
