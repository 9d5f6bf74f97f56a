/* SPDX-License-Identifier: MIT */
/*
 * test_http.c - the Streamable HTTP transport (src/serve/http*.c) over real
 * sockets on 127.0.0.1, against the core stand-in of core_double.c: the
 * server's loop runs in a thread of its own, the test is a raw HTTP/1.1
 * client in the main thread, so every byte on the wire is the test's
 * choice (slow headers, a client that never reads, idle connections).
 * Covered: Host and Origin (403), the token (401), Accept (406),
 * Content-Type (415), body size (413), the version header (400), paths and
 * methods (404, 405), sessions (400, 404, DELETE), JSON and SSE answers and
 * their framing, the GET stream (409 for a second), a resume with
 * Last-Event-ID, SSE polling (a 2025-11-25 stream ended after poll_ms
 * and resumed), a disconnect (srv_out_closed, cancel under 2026-07-28),
 * back-pressure, 1,000 idle connections and a slowloris client while
 * another client is served. Time bounds are tg_test_ms (labelled timing).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core_double.h"
#include "http_transport.h"
#include "tg_test.h"

/* ------------------------------------------------------------ the server */

static tg__srv *srv;
static srv_http *plain;   /* no token; allows https://app.example */
static srv_http *locked;  /* token "s3cret" */
static srv_http *polling; /* SSE polling after a short poll_ms */
static int port_plain, port_locked, port_polling;
static pthread_t loop_thread;
static uv_async_t call_async;
static void (*call_fn)(void *);
static void *call_arg;
static sem_t call_done;

static void on_call(uv_async_t *a)
{
    (void)a;
    if (call_fn != NULL) {
        call_fn(call_arg);
        call_fn = NULL;
        sem_post(&call_done);
    }
}

/* Runs fn(arg) on the loop thread and waits for it. */
static void on_loop(void (*fn)(void *), void *arg)
{
    call_fn = fn;
    call_arg = arg;
    uv_async_send(&call_async);
    while (sem_wait(&call_done) != 0 && errno == EINTR)
        ;
}

static void *run_loop(void *arg)
{
    (void)arg;
    uv_run(srv_loop(srv), UV_RUN_DEFAULT);
    return NULL;
}

static int port_of(const srv_http *h)
{
    const char *url = srv_http_url(h);
    const char *colon = strrchr(url, ':');
    return colon != NULL ? (int)strtol(colon + 1, NULL, 10) : 0;
}

static int setup(void **state)
{
    (void)state;
    /* 1,000 idle connections need 2,000 descriptors in this process. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096) {
        rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    srv = dbl_srv_new();
    if (srv == NULL)
        return -1;
    static const char *const origins[] = {"https://app.example"};
    srv_http_options o = {0};
    o.origins = origins;
    o.norigins = 1;
    o.max_body = 64 << 10;
    o.request_timeout_ms = (unsigned)tg_test_ms(1500);
    o.max_stream_queue = 256 << 10;
    o.keepalive_ms = 200;
    o.quiet = true;
    tg_error err = {0};
    if (srv_http_start(srv, &o, &plain, &err) != 0) {
        fprintf(stderr, "start: %s\n", err.message);
        return -1;
    }
    srv_http_options t = {0};
    t.token = "s3cret";
    t.quiet = true;
    if (srv_http_start(srv, &t, &locked, &err) != 0)
        return -1;
    srv_http_options p = {0};
    p.poll_ms = (unsigned)tg_test_ms(200);
    p.quiet = true;
    if (srv_http_start(srv, &p, &polling, &err) != 0)
        return -1;
    port_plain = port_of(plain);
    port_locked = port_of(locked);
    port_polling = port_of(polling);
    sem_init(&call_done, 0, 0);
    uv_async_init(srv_loop(srv), &call_async, on_call);
    return pthread_create(&loop_thread, NULL, run_loop, NULL) == 0 ? 0 : -1;
}

static void stop_all(void *arg)
{
    (void)arg;
    srv_http_free(plain);
    srv_http_free(locked);
    srv_http_free(polling);
    uv_close((uv_handle_t *)&call_async, NULL);
}

static int teardown(void **state)
{
    (void)state;
    call_fn = stop_all;
    uv_async_send(&call_async);
    pthread_join(loop_thread, NULL);
    dbl_srv_free(srv);
    return 0;
}

/* ------------------------------------------------------------ a client */

typedef struct client {
    int fd;
    char raw[1 << 16]; /* bytes read, not parsed yet */
    size_t rlen;
    int status;
    char head[8192]; /* status line and headers */
    bool head_done;
    bool chunked;
    long length; /* Content-Length, -1 when none */
    size_t chunk_left;
    bool chunk_crlf; /* a chunk's CRLF is due */
    bool done;       /* the whole body is in */
    bool eof;
    char *body;
    size_t blen, bcap;
} client;

static int dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0)
            return;
        p += k;
        n -= (size_t)k;
    }
}

static void body_add(client *c, const char *p, size_t n)
{
    if (c->blen + n + 1 > c->bcap) {
        c->bcap = (c->blen + n + 1) * 2;
        c->body = realloc(c->body, c->bcap);
    }
    memcpy(c->body + c->blen, p, n);
    c->blen += n;
    c->body[c->blen] = '\0';
}

/* Parses what was read: the head, then the body (de-chunked). */
static void parse(client *c)
{
    if (!c->head_done) {
        char *end = memmem(c->raw, c->rlen, "\r\n\r\n", 4);
        if (end == NULL)
            return;
        size_t hl = (size_t)(end - c->raw) + 4;
        memcpy(c->head, c->raw, hl < sizeof c->head ? hl : sizeof c->head - 1);
        c->head[hl < sizeof c->head ? hl : sizeof c->head - 1] = '\0';
        c->status = (int)strtol(c->head + 9, NULL, 10);
        c->chunked = strcasestr(c->head, "transfer-encoding: chunked") != NULL;
        const char *cl = strcasestr(c->head, "content-length:");
        c->length = cl != NULL ? strtol(cl + 15, NULL, 10) : -1;
        memmove(c->raw, c->raw + hl, c->rlen - hl);
        c->rlen -= hl;
        c->head_done = true;
        body_add(c, "", 0);
    }
    if (!c->chunked) {
        body_add(c, c->raw, c->rlen);
        c->rlen = 0;
        if (c->length >= 0 && c->blen >= (size_t)c->length)
            c->done = true;
        return;
    }
    for (;;) {
        if (c->chunk_left > 0) {
            size_t k = c->chunk_left < c->rlen ? c->chunk_left : c->rlen;
            if (k == 0)
                return;
            body_add(c, c->raw, k);
            memmove(c->raw, c->raw + k, c->rlen - k);
            c->rlen -= k;
            c->chunk_left -= k;
            if (c->chunk_left == 0)
                c->chunk_crlf = true;
            continue;
        }
        if (c->chunk_crlf) {
            if (c->rlen < 2)
                return;
            memmove(c->raw, c->raw + 2, c->rlen - 2);
            c->rlen -= 2;
            c->chunk_crlf = false;
        }
        char *eol = memmem(c->raw, c->rlen, "\r\n", 2);
        if (eol == NULL)
            return;
        size_t size = strtoul(c->raw, NULL, 16);
        size_t ll = (size_t)(eol - c->raw) + 2;
        memmove(c->raw, c->raw + ll, c->rlen - ll);
        c->rlen -= ll;
        if (size == 0) {
            c->done = true;
            return;
        }
        c->chunk_left = size;
    }
}

/* Reads once (waiting up to ms); false on timeout or end of stream. */
static bool pump(client *c, long ms)
{
    struct pollfd p = {c->fd, POLLIN, 0};
    if (poll(&p, 1, (int)ms) <= 0)
        return false;
    ssize_t n = recv(c->fd, c->raw + c->rlen, sizeof c->raw - c->rlen, 0);
    if (n <= 0) {
        c->eof = true;
        return false;
    }
    c->rlen += (size_t)n;
    parse(c);
    return true;
}

/* Reads until the body holds `needle` (NULL: until it is complete). */
static bool wait_for(client *c, const char *needle, long ms)
{
    double end = tg_test_now_ms() + (double)tg_test_ms(ms);
    for (;;) {
        if (needle != NULL && c->body != NULL && strstr(c->body, needle))
            return true;
        if (needle == NULL && c->done)
            return true;
        double left = end - tg_test_now_ms();
        if (left <= 0 || (!pump(c, (long)left) && c->eof))
            return needle == NULL ? c->done : false;
    }
}

static void client_close(client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->body);
    free(c);
}

/* Sends a request on a new connection; the answer is read by wait_for. */
static client *request(int port, const char *method, const char *headers,
                       const char *body)
{
    client *c = calloc(1, sizeof *c);
    c->fd = dial(port);
    c->length = -1;
    char head[4096];
    int n = snprintf(head, sizeof head,
                     "%s /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s", method,
                     port, headers ? headers : "");
    if (body != NULL)
        n += snprintf(head + n, sizeof head - (size_t)n,
                      "Content-Length: %zu\r\n", strlen(body));
    n += snprintf(head + n, sizeof head - (size_t)n, "\r\n");
    send_all(c->fd, head, (size_t)n);
    if (body != NULL)
        send_all(c->fd, body, strlen(body));
    return c;
}

#define JSON_HEADERS                                                           \
    "Content-Type: application/json\r\n"                                       \
    "Accept: application/json, text/event-stream\r\n"

/* A POST with the usual headers plus `extra`; the whole answer read. */
static client *post(int port, const char *extra, const char *body)
{
    char headers[2048];
    snprintf(headers, sizeof headers, JSON_HEADERS "%s", extra ? extra : "");
    client *c = request(port, "POST", headers, body);
    wait_for(c, NULL, 5000);
    return c;
}

/* The value of a response header (copied into out), or NULL. */
static const char *header_of(const client *c, const char *name, char *out,
                             size_t size)
{
    char key[128];
    snprintf(key, sizeof key, "\r\n%s:", name);
    const char *p = strcasestr(c->head, key);
    if (p == NULL)
        return NULL;
    p += strlen(key);
    while (*p == ' ')
        p++;
    size_t n = strcspn(p, "\r\n");
    if (n >= size)
        n = size - 1;
    memcpy(out, p, n);
    out[n] = '\0';
    return out;
}

static bool eventually(atomic_int *v, int want, long ms)
{
    double end = tg_test_now_ms() + (double)tg_test_ms(ms);
    while (atomic_load(v) < want && tg_test_now_ms() < end)
        tg_test_sleep_ms(5);
    return atomic_load(v) >= want;
}

/* Waits until *v is down to `want` or below. */
static bool eventually_at_most(atomic_int *v, int want, long ms)
{
    double end = tg_test_now_ms() + (double)tg_test_ms(ms);
    while (atomic_load(v) > want && tg_test_now_ms() < end)
        tg_test_sleep_ms(5);
    return atomic_load(v) <= want;
}

static const char *ECHO_BODY =
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"echo\","
    "\"params\":{\"x\":1}}";
static const char *MODERN_ECHO =
    "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"echo\",\"params\":{\"_meta\":"
    "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}";
#define MODERN "MCP-Protocol-Version: 2026-07-28\r\n"

/* initialize under `version`; the session id into sid. */
static void initialize(const char *version, char *sid, size_t size)
{
    char body[256];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
             "\"params\":{\"protocolVersion\":\"%s\"}}",
             version);
    client *c = post(port_plain, NULL, body);
    assert_int_equal(c->status, 200);
    assert_non_null(strstr(c->body, version));
    assert_non_null(header_of(c, "Mcp-Session-Id", sid, size));
    assert_int_equal(strlen(sid), 32);
    for (const char *p = sid; *p; p++)
        assert_true(*p >= 0x21 && *p <= 0x7e);
    client_close(c);
}

/* ------------------------------------------------------------ tests */

static void expect_status(int port, const char *method, const char *headers,
                          const char *body, int status)
{
    client *c = request(port, method, headers, body);
    wait_for(c, NULL, 5000);
    if (c->status != status)
        fprintf(stderr, "%s %s -> %d, wanted %d\n%s%s\n", method,
                headers ? headers : "", c->status, status, c->head,
                c->body ? c->body : "");
    assert_int_equal(c->status, status);
    client_close(c);
}

static void test_checks(void **state)
{
    (void)state;
    const char *modern_h = JSON_HEADERS MODERN;
    expect_status(port_plain, "POST", modern_h, MODERN_ECHO, 200);
    /* DNS rebinding: a foreign Origin or Host. */
    expect_status(port_plain, "POST",
                  JSON_HEADERS MODERN "Origin: http://evil.example.com\r\n",
                  MODERN_ECHO, 403);
    expect_status(port_plain, "POST",
                  JSON_HEADERS MODERN "Origin: http://localhost.evil.com\r\n",
                  MODERN_ECHO, 403);
    expect_status(port_plain, "POST",
                  JSON_HEADERS MODERN "Origin: http://localhost:5173\r\n",
                  MODERN_ECHO, 200);
    expect_status(port_plain, "POST",
                  JSON_HEADERS MODERN "Origin: https://app.example\r\n",
                  MODERN_ECHO, 200);
    {
        client *c = calloc(1, sizeof *c);
        c->fd = dial(port_plain);
        c->length = -1;
        char text[1024];
        int n = snprintf(
            text, sizeof text,
            "POST /mcp HTTP/1.1\r\nHost: evil.example.com\r\n" JSON_HEADERS
                MODERN "Content-Length: %zu\r\n\r\n%s",
            strlen(MODERN_ECHO), MODERN_ECHO);
        send_all(c->fd, text, (size_t)n);
        wait_for(c, NULL, 5000);
        assert_int_equal(c->status, 403);
        client_close(c);
    }
    /* Media types, size, path, method, version. */
    expect_status(port_plain, "POST",
                  "Content-Type: text/plain\r\nAccept: application/json, "
                  "text/event-stream\r\n" MODERN,
                  MODERN_ECHO, 415);
    expect_status(port_plain, "POST",
                  "Content-Type: application/json\r\nAccept: "
                  "application/json\r\n" MODERN,
                  MODERN_ECHO, 406);
    expect_status(port_plain, "POST",
                  JSON_HEADERS MODERN "Content-Length: 99999999\r\n", NULL,
                  413);
    {
        /* A chunked body past the cap: 413 at its end. */
        client *c =
            request(port_plain, "POST",
                    JSON_HEADERS MODERN "Transfer-Encoding: chunked\r\n", NULL);
        char chunk[8192 + 16];
        int hl = snprintf(chunk, sizeof chunk, "2000\r\n");
        memset(chunk + hl, ' ', 8192);
        memcpy(chunk + hl + 8192, "\r\n", 2);
        for (int i = 0; i < 12; i++) /* 96 KiB > 64 KiB */
            send_all(c->fd, chunk, (size_t)hl + 8192 + 2);
        send_all(c->fd, "0\r\n\r\n", 5);
        wait_for(c, NULL, 5000);
        assert_int_equal(c->status, 413);
        client_close(c);
    }
    expect_status(port_plain, "PUT", JSON_HEADERS MODERN, MODERN_ECHO, 405);
    expect_status(port_plain, "GET", "Accept: text/event-stream\r\n" MODERN,
                  NULL, 405);
    {
        client *c = post(port_plain, "MCP-Protocol-Version: v999.0.0\r\n",
                         "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"x\"}");
        assert_int_equal(c->status, 400);
        assert_non_null(strstr(c->body, "\"id\":\"q\""));
        assert_non_null(strstr(c->body, "-32022"));
        assert_non_null(strstr(c->body, "\"requested\":\"v999.0.0\""));
        client_close(c);
    }
    {
        /* Another path. */
        client *c = calloc(1, sizeof *c);
        c->fd = dial(port_plain);
        c->length = -1;
        const char *t = "GET /other HTTP/1.1\r\nHost: localhost\r\n\r\n";
        send_all(c->fd, t, strlen(t));
        wait_for(c, NULL, 5000);
        assert_int_equal(c->status, 404);
        client_close(c);
    }
    /* The token: required, compared whole, nothing said about it. */
    expect_status(port_locked, "POST", JSON_HEADERS MODERN, MODERN_ECHO, 401);
    expect_status(port_locked, "POST",
                  JSON_HEADERS MODERN "Authorization: Bearer s3cre\r\n",
                  MODERN_ECHO, 401);
    expect_status(port_locked, "POST",
                  JSON_HEADERS MODERN "Authorization: Bearer s3cret!\r\n",
                  MODERN_ECHO, 401);
    expect_status(port_locked, "POST",
                  JSON_HEADERS MODERN "Authorization: bearer s3cret\r\n",
                  MODERN_ECHO, 200);
    client *c = post(port_locked, MODERN, MODERN_ECHO);
    char v[64];
    assert_non_null(header_of(c, "WWW-Authenticate", v, sizeof v));
    assert_string_equal(v, "Bearer");
    assert_int_equal(c->blen, 0);
    client_close(c);
}

static void test_sessions(void **state)
{
    (void)state;
    int sessions = atomic_load(&dbl_sessions);
    char sid[64], h[256];
    initialize("2025-06-18", sid, sizeof sid);
    snprintf(h, sizeof h,
             "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-06-18\r\n", sid);
    client *c = post(port_plain, h, ECHO_BODY);
    assert_int_equal(c->status, 200);
    assert_non_null(strstr(c->body, "\"result\":{\"x\":1}"));
    char ct[64];
    assert_string_equal(header_of(c, "Content-Type", ct, sizeof ct),
                        "application/json");
    client_close(c);
    /* Without the session: the core's 400 (not initialized). */
    c = post(port_plain, "MCP-Protocol-Version: 2025-06-18\r\n", ECHO_BODY);
    assert_int_equal(c->status, 400);
    client_close(c);
    /* A notification: 202, no body. */
    c = post(port_plain, h, "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}");
    assert_int_equal(c->status, 202);
    assert_int_equal(c->blen, 0);
    client_close(c);
    /* Unknown ids: 404. */
    c = post(port_plain, "Mcp-Session-Id: 00000000000000000000000000000000\r\n",
             ECHO_BODY);
    assert_int_equal(c->status, 404);
    client_close(c);
    /* DELETE ends it; then 404. */
    int ended = atomic_load(&dbl_ended);
    expect_status(port_plain, "DELETE", h, NULL, 200);
    assert_int_equal(atomic_load(&dbl_ended), ended + 1);
    c = post(port_plain, h, ECHO_BODY);
    assert_int_equal(c->status, 404);
    client_close(c);
    /* 2026-07-28: no session minted, the request's own released. */
    c = post(port_plain, MODERN, MODERN_ECHO);
    assert_int_equal(c->status, 200);
    assert_null(header_of(c, "Mcp-Session-Id", ct, sizeof ct));
    client_close(c);
    assert_true(eventually(&dbl_sessions, sessions, 1000));
    assert_int_equal(atomic_load(&dbl_sessions), sessions);
}

static void test_sse_framing(void **state)
{
    (void)state;
    char sid[64], h[256];
    initialize("2025-11-25", sid, sizeof sid);
    snprintf(h, sizeof h,
             "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n", sid);
    client *c =
        post(port_plain, h,
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"slow\",\"params\":{"
             "\"ms\":90,\"notes\":2}}");
    assert_int_equal(c->status, 200);
    char v[64];
    assert_string_equal(header_of(c, "Content-Type", v, sizeof v),
                        "text/event-stream");
    assert_string_equal(header_of(c, "X-Accel-Buffering", v, sizeof v), "no");
    assert_true(c->done);
    /* The initialize answer was stream 1; this POST is stream 2. */
    const char *want =
        "id: 2-0\nretry: 1000\ndata: \n\n"
        "id: 2-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
        "progress\",\"params\":{\"left\":1}}\n\n"
        "id: 2-2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
        "progress\",\"params\":{\"left\":0}}\n\n"
        "id: 2-3\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"done\":"
        "true}}\n\n";
    assert_string_equal(c->body, want);
    client_close(c);
    /* 2026-07-28: no ids, no priming. */
    c = post(port_plain, MODERN,
             "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"slow\",\"params\":{"
             "\"ms\":20,\"notes\":1,\"_meta\":{\"io.modelcontextprotocol/"
             "protocolVersion\":\"2026-07-28\"}}}");
    assert_int_equal(c->status, 200);
    assert_non_null(strstr(c->body, "data: {"));
    assert_null(strstr(c->body, "id: "));
    assert_null(strstr(c->body, "retry:"));
    client_close(c);
}

static void test_resume(void **state)
{
    (void)state;
    char sid[64], h[256];
    initialize("2025-11-25", sid, sizeof sid);
    snprintf(h, sizeof h,
             JSON_HEADERS
             "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n",
             sid);
    int closed = atomic_load(&dbl_closed);
    client *c = request(port_plain, "POST", h,
                        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"slow\","
                        "\"params\":{\"ms\":1200,\"notes\":2}}");
    assert_true(wait_for(c, "\"left\":1", 3000));
    assert_null(strstr(c->body, "\"left\":0"));
    client_close(c); /* gone before its response */
    assert_true(eventually(&dbl_closed, closed + 1, 2000));
    /* Resume after the first notification: the rest, then the end. */
    char g[512];
    snprintf(g, sizeof g,
             "Accept: text/event-stream\r\nMcp-Session-Id: %s\r\n"
             "MCP-Protocol-Version: 2025-11-25\r\nLast-Event-ID: 2-1\r\n",
             sid);
    c = request(port_plain, "GET", g, NULL);
    assert_true(wait_for(c, NULL, 5000));
    assert_int_equal(c->status, 200);
    assert_null(strstr(c->body, "\"left\":1"));
    assert_non_null(strstr(c->body, "id: 2-2\ndata: "));
    assert_non_null(strstr(c->body, "\"id\":4,\"result\""));
    client_close(c);
    /* Delivered: the stream is gone; a GET naming it opens the session's
     * own stream instead, never another stream's events. */
    c = request(port_plain, "GET", g, NULL);
    if (!wait_for(c, "retry:", 3000))
        fprintf(stderr, "%d\n%s\n%s\n", c->status, c->head, c->body);
    assert_true(wait_for(c, "retry:", 3000));
    assert_null(strstr(c->body, "\"id\":4"));
    client_close(c);
}

/* SSE polling (2025-11-25): a response stream that still owes its
 * response after poll_ms ends cleanly (the chunked body is complete, the
 * call goes on), and so does each GET that resumes it, until one brings
 * the response. poll_ms is 200 ms scaled, the sweep that ends streams
 * runs every 250 ms: a stream ends within 450 ms scaled, the response
 * comes after 2 s scaled, more than 3x later. */
static void test_sse_polling(void **state)
{
    (void)state;
    client *c = post(port_polling, NULL,
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                     "\"initialize\",\"params\":{\"protocolVersion\":"
                     "\"2025-11-25\"}}");
    char sid[64], h[256], g[512];
    assert_non_null(header_of(c, "Mcp-Session-Id", sid, sizeof sid));
    client_close(c);
    snprintf(h, sizeof h,
             "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n", sid);
    int closed = atomic_load(&dbl_closed);
    double poll = tg_test_ms(200), t0 = tg_test_now_ms();
    char body[160];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"slow\","
             "\"params\":{\"ms\":%ld,\"notes\":0}}",
             (long)(10 * poll));
    char headers[512];
    snprintf(headers, sizeof headers, JSON_HEADERS "%s", h);
    c = request(port_polling, "POST", headers, body);
    assert_true(wait_for(c, NULL, (long)(8 * poll)));
    double took = tg_test_now_ms() - t0;
    assert_true(c->done); /* ended cleanly: the last chunk came */
    assert_true(took >= poll);
    assert_string_equal(c->body, "id: 2-0\nretry: 1000\ndata: \n\n");
    client_close(c);
    assert_true(eventually(&dbl_closed, closed + 1, 2000));
    snprintf(g, sizeof g,
             "Accept: text/event-stream\r\n%sLast-Event-ID: 2-0\r\n", h);
    bool answered = false;
    for (int i = 0; i < 20 && !answered; i++) {
        c = request(port_polling, "GET", g, NULL);
        assert_true(wait_for(c, NULL, (long)(8 * poll)));
        assert_int_equal(c->status, 200);
        assert_true(c->done);
        answered = strstr(c->body, "\"id\":2,\"result\"") != NULL;
        client_close(c);
    }
    assert_true(answered);
}

static void test_cancel_2026(void **state)
{
    (void)state;
    int closed = atomic_load(&dbl_closed),
        canceled = atomic_load(&dbl_canceled);
    char headers[512];
    snprintf(headers, sizeof headers, JSON_HEADERS MODERN);
    client *c = request(port_plain, "POST", headers,
                        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"slow\","
                        "\"params\":{\"ms\":60000,\"notes\":3,\"_meta\":{"
                        "\"io.modelcontextprotocol/protocolVersion\":"
                        "\"2026-07-28\"}}}");
    assert_true(wait_for(c, "", 2000) || c->head_done);
    double t0 = tg_test_now_ms();
    client_close(c);
    /* Seen while the stream sleeps (the socket is watched): well before
     * the first notification (15 s) would have shown the loss. */
    assert_true(eventually(&dbl_canceled, canceled + 1, 2000));
    assert_true(atomic_load(&dbl_closed) >= closed + 1);
    assert_true(tg_test_now_ms() - t0 < tg_test_ms(2000));
}

static void test_json_wait(void **state)
{
    (void)state;
    char sid[64], h[256];
    initialize("2025-06-18", sid, sizeof sid);
    snprintf(h, sizeof h, "Mcp-Session-Id: %s\r\n", sid);
    client *c = post(port_plain, h,
                     "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"wait\","
                     "\"params\":{\"ms\":150}}");
    assert_int_equal(c->status, 200);
    assert_string_equal(c->body,
                        "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"done\":"
                        "true}}");
    client_close(c);
}

static void test_get_stream(void **state)
{
    (void)state;
    char sid[64], h[256], g[256];
    initialize("2025-11-25", sid, sizeof sid);
    snprintf(h, sizeof h, "Mcp-Session-Id: %s\r\n", sid);
    snprintf(g, sizeof g, "Accept: text/event-stream\r\nMcp-Session-Id: %s\r\n",
             sid);
    client *get = request(port_plain, "GET", g, NULL);
    assert_true(wait_for(get, "retry: 1000", 3000));
    assert_int_equal(get->status, 200);
    client *c = post(port_plain, h,
                     "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"notify\","
                     "\"params\":{\"text\":\"hello\"}}");
    assert_non_null(strstr(c->body, "\"sent\":true"));
    client_close(c);
    assert_true(wait_for(get, "\"text\":\"hello\"", 3000));
    assert_non_null(strstr(get->body, "id: 2-1\ndata: "));
    /* One GET stream per session. */
    expect_status(port_plain, "GET", g, NULL, 409);
    /* Keep-alive comments on a silent stream. */
    size_t before = get->blen;
    assert_true(wait_for(get, ":\n\n", 3000));
    assert_true(get->blen > before);
    client_close(get);
}

static void test_never_reads(void **state)
{
    (void)state;
    /* No flood of an earlier test is still going away. */
    assert_true(eventually_at_most(&dbl_flood_outs, 0, 2000));
    assert_true(eventually_at_most(&dbl_flood_sessions, 0, 2000));
    int closed = atomic_load(&dbl_closed);
    int floods = atomic_load(&dbl_floods);
    int outs = atomic_load(&dbl_outs);
    /* Shrink the client's receive buffer so the queue bound is reached
     * quickly: the server cannot write, its queue grows to the bound. */
    client *c = calloc(1, sizeof *c);
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int small = 4096;
    setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port_plain);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(c->fd, (struct sockaddr *)&a, sizeof a), 0);
    const char *body = "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"flood\","
                       "\"params\":{\"size\":65536,\"_meta\":{"
                       "\"io.modelcontextprotocol/protocolVersion\":"
                       "\"2026-07-28\"}}}";
    char text[1024];
    int n =
        snprintf(text, sizeof text,
                 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" JSON_HEADERS MODERN
                 "Content-Length: %zu\r\n\r\n%s",
                 strlen(body), body);
    send_all(c->fd, text, (size_t)n);
    /* Never read. The server cuts it off and reports the out closed. */
    assert_true(eventually(&dbl_closed, closed + 1, 5000));
    assert_int_equal(atomic_load(&dbl_floods), floods + 1);
    /* Others are served meanwhile. */
    client *o = post(port_plain, MODERN, MODERN_ECHO);
    assert_int_equal(o->status, 200);
    client_close(o);
    client_close(c);
    /* Nothing is left of it: its out (and the events queued on it) and
     * its per-request session are freed. They are counted apart from the
     * other outs: one of the test before (a GET stream whose client closed
     * as that test ended) may go away only after `outs` was read, so the
     * count of all outs ends at or below `outs`, not always at it. */
    assert_true(eventually_at_most(&dbl_flood_outs, 0, 2000));
    assert_true(eventually_at_most(&dbl_flood_sessions, 0, 2000));
    assert_true(atomic_load(&dbl_outs) <= outs);
}

static void test_idle_connections(void **state)
{
    (void)state;
    enum { IDLE = 1000 };
    static int fds[IDLE];
    for (int i = 0; i < IDLE; i++) {
        fds[i] = dial(port_plain);
        assert_true(fds[i] >= 0);
    }
    /* A client is served at once all the same. */
    double t0 = tg_test_now_ms();
    client *c = post(port_plain, MODERN, MODERN_ECHO);
    assert_int_equal(c->status, 200);
    assert_true(tg_test_now_ms() - t0 < tg_test_ms(1000));
    client_close(c);
    /* The idle ones are closed by the request deadline (1.5 s). */
    struct pollfd p = {fds[IDLE - 1], POLLIN, 0};
    assert_int_equal(poll(&p, 1, (int)tg_test_ms(6000)), 1);
    char b;
    assert_int_equal(recv(fds[IDLE - 1], &b, 1, 0), 0);
    for (int i = 0; i < IDLE; i++)
        close(fds[i]);
}

static void test_slowloris(void **state)
{
    (void)state;
    int fd = dial(port_plain);
    const char *head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    send_all(fd, head, strlen(head));
    double t0 = tg_test_now_ms();
    bool closed = false;
    /* A header byte every 100 ms: never idle, never done. */
    for (int i = 0; i < 200 && !closed; i++) {
        if (send(fd, "X", 1, MSG_NOSIGNAL) != 1)
            closed = true;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 100) == 1) {
            char b[256];
            if (recv(fd, b, sizeof b, 0) <= 0)
                closed = true;
        }
        if (i == 3) {
            client *c = post(port_plain, MODERN, MODERN_ECHO);
            assert_int_equal(c->status, 200);
            client_close(c);
        }
    }
    assert_true(closed);
    /* Cut at the request deadline (1.5 s), not left to trickle. */
    assert_true(tg_test_now_ms() - t0 < tg_test_ms(6000));
    close(fd);
}

static void quiesce(void *arg)
{
    (void)arg;
    srv_http_stop_accepting(plain);
    dbl_srv_stop(srv);
}

static void test_quiesce(void **state)
{
    (void)state;
    char sid[64], g[256];
    initialize("2025-11-25", sid, sizeof sid);
    snprintf(g, sizeof g, "Accept: text/event-stream\r\nMcp-Session-Id: %s\r\n",
             sid);
    client *get = request(port_plain, "GET", g, NULL);
    assert_true(wait_for(get, "retry: 1000", 3000));
    on_loop(quiesce, NULL);
    /* No new connection; the open GET stream is ended, not cut. */
    int fd = dial(port_plain);
    assert_true(fd < 0);
    assert_true(wait_for(get, NULL, 3000));
    assert_true(get->done);
    client_close(get);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checks),
        cmocka_unit_test(test_sessions),
        cmocka_unit_test(test_sse_framing),
        cmocka_unit_test(test_resume),
        cmocka_unit_test(test_sse_polling),
        cmocka_unit_test(test_cancel_2026),
        cmocka_unit_test(test_json_wait),
        cmocka_unit_test(test_get_stream),
        cmocka_unit_test(test_never_reads),
        cmocka_unit_test(test_idle_connections),
        cmocka_unit_test(test_slowloris),
        cmocka_unit_test(test_quiesce),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
