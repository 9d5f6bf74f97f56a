/* SPDX-License-Identifier: MIT */
/*
 * test_loop_run.c - the library's agent loop (toolgate_loop.h) against a
 * real HTTP server on 127.0.0.1 (a thread of this test answering each
 * request with the next scripted answer and keeping what it received) and
 * a real runtime with the built-in echo tool: the events of two iterations
 * of parallel calls, the prompt factory deciding what the next request
 * holds, retries (503 with backoff, 429 with retry-after-ms), max
 * iterations, a stop tool, a cancel, a 401 failing with the provider's
 * message, and bad options.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "toolgate_loop.h"

#define MAX_REQ 16

/* ------------------------------------------------- the scripted server */

struct server {
    int fd, port;
    const char *const *answers; /* full HTTP answers, in order */
    size_t nanswers, repeat_last;
    char *bodies[MAX_REQ]; /* what each request carried */
    size_t nreq;
    pthread_t thread;
};

static int read_request(int c, char **body_out)
{
    char buf[65536];
    size_t len = 0;
    char *end = NULL;
    while (end == NULL && len < sizeof buf - 1) {
        ssize_t n = read(c, buf + len, sizeof buf - 1 - len);
        if (n <= 0)
            return -1;
        len += (size_t)n;
        buf[len] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    if (end == NULL)
        return -1;
    size_t want = 0;
    const char *cl = strcasestr(buf, "content-length:");
    if (cl != NULL)
        want = strtoul(cl + 15, NULL, 10);
    size_t head = (size_t)(end + 4 - buf);
    char *body = malloc(want + 1);
    if (body == NULL)
        return -1;
    size_t have = len - head < want ? len - head : want;
    memcpy(body, end + 4, have);
    while (have < want) {
        ssize_t n = read(c, body + have, want - have);
        if (n <= 0) {
            free(body);
            return -1;
        }
        have += (size_t)n;
    }
    body[want] = '\0';
    *body_out = body;
    return 0;
}

static void *serve(void *arg)
{
    struct server *s = arg;
    for (;;) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            return NULL;
        char *body = NULL;
        if (read_request(c, &body) == 0 && s->nreq < MAX_REQ) {
            size_t i = s->nreq < s->nanswers ? s->nreq : s->nanswers - 1;
            s->bodies[s->nreq++] = body;
            const char *a = s->answers[i];
            size_t off = 0, n = strlen(a);
            while (off < n) {
                ssize_t w = write(c, a + off, n - off);
                if (w <= 0)
                    break;
                off += (size_t)w;
            }
        } else {
            free(body);
        }
        close(c);
    }
}

static void server_start(struct server *s, const char *const *answers, size_t n)
{
    memset(s, 0, sizeof *s);
    s->answers = answers;
    s->nanswers = n;
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s->fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s->fd, 8), 0);
    socklen_t al = sizeof a;
    assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &al), 0);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_stop(struct server *s)
{
    shutdown(s->fd, SHUT_RDWR);
    close(s->fd);
    pthread_join(s->thread, NULL);
    for (size_t i = 0; i < s->nreq; i++)
        free(s->bodies[i]);
}

/* An HTTP answer with a JSON body (static storage per call site). */
#define OK(json)                                                               \
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: "        \
    "close\r\n\r\n" json

#define CALLS2                                                                 \
    OK("{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","       \
       "\"content\":\"looking\",\"tool_calls\":["                              \
       "{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":"          \
       "\"echo\",\"arguments\":\"{\\\"text\\\":\\\"alpha\\\"}\"}},"            \
       "{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":"          \
       "\"echo\",\"arguments\":\"{\\\"text\\\":\\\"beta\\\"}\"}}]},"           \
       "\"finish_reason\":\"tool_calls\"}]}")
#define CALLS1(id)                                                             \
    OK("{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","       \
       "\"content\":null,\"tool_calls\":["                                     \
       "{\"id\":\"" id "\",\"type\":\"function\",\"function\":{\"name\":"      \
       "\"echo\",\"arguments\":\"{\\\"text\\\":\\\"gamma\\\"}\"}}]},"          \
       "\"finish_reason\":\"tool_calls\"}]}")
#define ANSWER                                                                 \
    OK("{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","       \
       "\"content\":\"the end\"},\"finish_reason\":\"stop\"}]}")

/* ------------------------------------------------------------- fixture */

struct rec {
    int text, started, finished, iterations, retries, factory;
    int started_at_text; /* calls started when the last text came */
    long last_delay;
    int last_attempt;
    tg_loop *loop;
    int cancel_on_text;
};

static void on_text(void *ud, int it, const char *t, size_t n)
{
    struct rec *r = ud;
    r->text++;
    r->started_at_text = r->started;
    if (r->cancel_on_text)
        tg_loop_cancel(r->loop);
}
static void on_started(void *ud, int it, const tg_call *c)
{
    ((struct rec *)ud)->started++;
}
static void on_finished(void *ud, int it, const tg_call *c,
                        const tg_result *res)
{
    ((struct rec *)ud)->finished++;
}
static void on_iteration(void *ud, int it, size_t n)
{
    ((struct rec *)ud)->iterations++;
}
static void on_retry(void *ud, int attempt, long delay, const char *why)
{
    struct rec *r = ud;
    r->retries++;
    r->last_attempt = attempt;
    r->last_delay = delay;
}

/* A prompt factory that replaces every output by a summary. */
static int summarise(void *ud, const tg_turn *turn, const char *format,
                     char **out, tg_error *err)
{
    struct rec *r = ud;
    r->factory++;
    assert_string_equal(format, "openai-chat");
    char buf[1024];
    size_t len = 0;
    len += (size_t)snprintf(buf + len, sizeof buf - len, "[");
    for (size_t i = 0; i < tg_turn_call_count(turn); i++) {
        const tg_result *res = tg_turn_result(turn, i);
        assert_non_null(res);
        len += (size_t)snprintf(
            buf + len, sizeof buf - len,
            "%s{\"role\":\"tool\",\"tool_call_id\":\"%s\",\"content\":"
            "\"summary of %s: %s\"}",
            i ? "," : "", tg_result_id(res), tg_result_id(res),
            tg_outcome_name(tg_result_outcome(res)));
    }
    snprintf(buf + len, sizeof buf - len, "]");
    *out = strdup(buf);
    return *out != NULL ? 0 : TG_ENOMEM;
}

struct fx {
    tg_config *cfg;
    tg_runtime *rt;
};

static int setup(void **state)
{
    static const char conf[] = "{\"builtin_tools\":[\"echo\"],"
                               "\"journal\":null,\"spool\":null}";
    struct fx *f = calloc(1, sizeof *f);
    tg_error err = {0};
    f->cfg = tg_config_new();
    assert_int_equal(tg_config_load(f->cfg, conf, strlen(conf), NULL, &err), 0);
    assert_int_equal(tg_runtime_new(f->cfg, &f->rt, &err), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    tg_runtime_free(f->rt);
    tg_config_free(f->cfg);
    free(f);
    return 0;
}

static const tg_loop_events events = {
    .text = on_text,
    .call_started = on_started,
    .call_finished = on_finished,
    .iteration_done = on_iteration,
    .retry = on_retry,
};

static tg_loop *new_loop(struct fx *f, const struct server *s, struct rec *r,
                         tg_loop_options *o, const tg_loop_events *ev)
{
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", s->port);
    o->provider = "openai";
    o->base_url = url;
    o->model = "m";
    o->retry_base_ms = o->retry_base_ms ? o->retry_base_ms : 10;
    tg_loop *l = NULL;
    tg_error err = {0};
    assert_int_equal(tg_loop_new(f->rt, o, ev, r, &l, &err), 0);
    r->loop = l;
    return l;
}

/* ---------------------------------------------------------------- tests */

static void test_two_iterations(void **state)
{
    struct fx *f = *state;
    static const char *const answers[] = {CALLS2, CALLS1("c3"), ANSWER};
    struct server s;
    server_start(&s, answers, 3);
    struct rec r = {0};
    tg_loop_options o = {.system = "sys"};
    tg_loop *l = new_loop(f, &s, &r, &o, &events);
    tg_error err = {0};
    assert_int_equal(tg_loop_run(l, "go", &err), 0);
    assert_int_equal(tg_loop_stop_reason(l), TG_LOOP_ANSWERED);
    assert_string_equal(tg_loop_answer(l), "the end");
    assert_int_equal(tg_loop_iteration(l), 3);
    assert_int_equal(tg_loop_tool_calls(l), 3);
    assert_int_equal(r.started, 3);
    assert_int_equal(r.finished, 3);
    assert_int_equal(r.iterations, 3);
    assert_int_equal(r.text, 2); /* "looking", "the end" */
    assert_int_equal((int)s.nreq, 3);
    /* the second request: both results, by id, after the assistant turn */
    assert_non_null(strstr(s.bodies[1], "\"tool_call_id\":\"c1\""));
    assert_non_null(strstr(s.bodies[1], "\"tool_call_id\":\"c2\""));
    assert_non_null(strstr(s.bodies[1], "alpha"));
    assert_non_null(strstr(s.bodies[2], "\"tool_call_id\":\"c3\""));
    assert_non_null(strstr(s.bodies[0], "\"role\":\"system\""));
    assert_non_null(strstr(s.bodies[0], "\"tools\":"));
    char *t = tg_loop_transcript(l);
    assert_non_null(strstr(t, "\"stop\":\"answered\""));
    assert_non_null(strstr(t, tg_loop_id(l)));
    assert_null(strstr(t, "\"tools\""));
    tg_free(t);
    assert_int_equal(strncmp(tg_loop_id(l), "loop_", 5), 0);
    assert_int_equal(strlen(tg_loop_id(l)), 21);
    tg_loop_free(l);
    server_stop(&s);
}

static void test_prompt_factory(void **state)
{
    struct fx *f = *state;
    static const char *const answers[] = {CALLS2, ANSWER};
    struct server s;
    server_start(&s, answers, 2);
    struct rec r = {0};
    tg_loop_options o = {0};
    tg_loop_events ev = events;
    ev.results = summarise;
    tg_loop *l = new_loop(f, &s, &r, &o, &ev);
    tg_error err = {0};
    assert_int_equal(tg_loop_run(l, "go", &err), 0);
    assert_int_equal(r.factory, 1);
    assert_non_null(strstr(s.bodies[1], "summary of c1: success"));
    assert_non_null(strstr(s.bodies[1], "summary of c2: success"));
    /* the outputs themselves (in their trust envelope) are not sent */
    assert_null(strstr(s.bodies[1], "tool_output_"));
    tg_loop_free(l);
    server_stop(&s);
}

static void test_retries(void **state)
{
    struct fx *f = *state;
    static const char *const answers[] = {
        "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 38\r\n"
        "Connection: close\r\n\r\n{\"error\":{\"message\":\"overloaded\"}}   ",
        "HTTP/1.1 429 Too Many Requests\r\nretry-after-ms: 30\r\n"
        "Content-Length: 2\r\nConnection: close\r\n\r\n{}",
        ANSWER};
    struct server s;
    server_start(&s, answers, 3);
    struct rec r = {0};
    tg_loop_options o = {0};
    tg_loop *l = new_loop(f, &s, &r, &o, &events);
    tg_error err = {0};
    assert_int_equal(tg_loop_run(l, "go", &err), 0);
    assert_int_equal(tg_loop_stop_reason(l), TG_LOOP_ANSWERED);
    assert_int_equal(r.retries, 2);
    assert_int_equal(r.last_attempt, 3);
    assert_int_equal(r.last_delay, 30); /* what the server asked for */
    assert_int_equal((int)s.nreq, 3);
    tg_loop_free(l);
    server_stop(&s);

    /* a budget of two attempts ends a server that keeps failing */
    static const char *const down[] = {
        "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n"
        "Connection: close\r\n\r\nboom"};
    server_start(&s, down, 1);
    memset(&r, 0, sizeof r);
    tg_loop_options o2 = {.max_attempts = 2};
    l = new_loop(f, &s, &r, &o2, &events);
    assert_int_equal(tg_loop_run(l, "go", &err), TG_EIO);
    assert_int_equal(tg_loop_stop_reason(l), TG_LOOP_FAILED);
    assert_non_null(strstr(err.message, "gave up after 2 attempts"));
    assert_non_null(strstr(err.message, "HTTP 500: boom"));
    assert_int_equal((int)s.nreq, 2);
    tg_loop_free(l);
    server_stop(&s);
}

static void test_client_error(void **state)
{
    struct fx *f = *state;
    static const char *const answers[] = {
        "HTTP/1.1 401 Unauthorized\r\nContent-Length: 44\r\n"
        "Connection: close\r\n\r\n{\"error\":{\"message\":\"invalid "
        "x-api-key\"}}"
        "   "};
    struct server s;
    server_start(&s, answers, 1);
    struct rec r = {0};
    tg_loop_options o = {.api_key = "sk-secret"};
    tg_loop *l = new_loop(f, &s, &r, &o, &events);
    tg_error err = {0};
    assert_int_equal(tg_loop_run(l, "go", &err), TG_EINVAL);
    assert_non_null(strstr(err.message, "HTTP 401: invalid x-api-key"));
    assert_null(strstr(err.message, "sk-secret"));
    assert_int_equal(r.retries, 0);
    assert_int_equal((int)s.nreq, 1);
    char *t = tg_loop_transcript(l);
    assert_null(strstr(t, "sk-secret"));
    tg_free(t);
    tg_loop_free(l);
    server_stop(&s);
}

static void test_limits(void **state)
{
    struct fx *f = *state;
    static const char *const forever[] = {CALLS1("cx")};
    struct server s;
    server_start(&s, forever, 1);
    struct rec r = {0};
    tg_loop_options o = {.max_iterations = 2};
    tg_loop *l = new_loop(f, &s, &r, &o, &events);
    tg_error err = {0};
    assert_int_equal(tg_loop_start(l, "go", &err), 0);
    assert_int_equal(tg_loop_step(l, &err), 1);
    assert_int_equal(tg_loop_step(l, &err), 0);
    assert_int_equal(tg_loop_stop_reason(l), TG_LOOP_MAX_ITERATIONS);
    assert_int_equal(tg_loop_step(l, &err), 0); /* stays stopped */
    assert_int_equal((int)s.nreq, 2);
    tg_loop_free(l);

    static const char *const stop[] = {"echo"};
    memset(&r, 0, sizeof r);
    tg_loop_options o2 = {.stop_tools = stop, .nstop_tools = 1};
    l = new_loop(f, &s, &r, &o2, &events);
    assert_int_equal(tg_loop_run(l, "go", &err), 0);
    assert_int_equal(tg_loop_stop_reason(l), TG_LOOP_STOP_TOOL);
    assert_int_equal(tg_loop_iteration(l), 1);
    tg_loop_free(l);

    memset(&r, 0, sizeof r);
    r.cancel_on_text = 1;
    tg_loop_options o3 = {0};
    static const char *const talk[] = {CALLS2};
    server_stop(&s);
    server_start(&s, talk, 1);
    l = new_loop(f, &s, &r, &o3, &events);
    assert_int_equal(tg_loop_run(l, "go", &err), 0);
    assert_int_equal(tg_loop_stop_reason(l), TG_LOOP_CANCELED);
    /* the calls of the turn still got their results */
    assert_int_equal(r.finished, 2);
    assert_int_equal(r.iterations, 1);
    char *t = tg_loop_transcript(l);
    assert_non_null(strstr(t, "\"tool_call_id\":\"c2\""));
    assert_non_null(strstr(t, "\"stop\":\"canceled\""));
    tg_free(t);
    tg_loop_free(l);
    server_stop(&s);
}

#define SSE_HEAD                                                               \
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: "       \
    "close\r\n\r\n"

static void test_streamed(void **state)
{
    struct fx *f = *state;
    /* Anthropic: a tool_use block complete, then text: the tool has
     * started before the text after it arrives. */
    static const char *const answers[] = {
        SSE_HEAD
        "event: message_start\ndata: {\"type\":\"message_start\","
        "\"message\":{\"id\":\"m\",\"role\":\"assistant\",\"content\":[]}}"
        "\n\n"
        "event: content_block_start\ndata: {\"type\":\"content_block_start\","
        "\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":"
        "\"tu_1\",\"name\":\"echo\",\"input\":{}}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
        "\"index\":0,\"delta\":{\"type\":\"input_json_delta\","
        "\"partial_json\":\"{\\\"text\\\":\\\"early\\\"}\"}}\n\n"
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\","
        "\"index\":0}\n\n"
        "event: content_block_start\ndata: {\"type\":\"content_block_start\","
        "\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}"
        "\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
        "\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":"
        "\"still writing\"}}\n\n"
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\","
        "\"index\":1}\n\n"
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":"
        "{\"stop_reason\":\"tool_use\"}}\n\n"
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        SSE_HEAD
        "event: message_start\ndata: {\"type\":\"message_start\","
        "\"message\":{\"id\":\"m\",\"role\":\"assistant\",\"content\":[]}}"
        "\n\n"
        "event: content_block_start\ndata: {\"type\":\"content_block_start\","
        "\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}"
        "\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
        "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"all \"}}"
        "\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
        "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"done\"}}"
        "\n\n"
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":"
        "{\"stop_reason\":\"end_turn\"}}\n\n"
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"};
    struct server s;
    server_start(&s, answers, 2);
    struct rec r = {0};
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", s.port);
    tg_loop_options o = {
        .provider = "anthropic", .base_url = url, .model = "m", .stream = 1};
    tg_loop *l = NULL;
    tg_error err = {0};
    assert_int_equal(tg_loop_new(f->rt, &o, &events, &r, &l, &err), 0);
    assert_int_equal(tg_loop_start(l, "go", &err), 0);
    assert_int_equal(tg_loop_step(l, &err), 1);
    assert_int_equal(r.text, 1);
    assert_int_equal(r.started_at_text, 1); /* the tool ran first */
    assert_int_equal(tg_loop_step(l, &err), 0);
    assert_int_equal(tg_loop_stop_reason(l), TG_LOOP_ANSWERED);
    assert_string_equal(tg_loop_answer(l), "all done");
    assert_int_equal(r.text, 3); /* two deltas */
    assert_non_null(strstr(s.bodies[0], "\"stream\":true"));
    assert_non_null(strstr(s.bodies[1], "\"tool_use_id\":\"tu_1\""));
    assert_non_null(strstr(s.bodies[1], "\"tool_use\""));
    assert_non_null(strstr(s.bodies[1], "still writing"));
    tg_loop_free(l);
    server_stop(&s);
}

static void test_stream_cut(void **state)
{
    struct fx *f = *state;
    /* Chat Completions: call c1 complete, c2 cut inside its arguments. */
    static const char *const answers[] = {
        SSE_HEAD
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
        "\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{"
        "\"name\":\"echo\",\"arguments\":\"{\\\"text\\\":\\\"one\\\"}"
        "\"}}]}}]}\n\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
        "\"index\":1,\"id\":\"c2\",\"type\":\"function\",\"function\":{"
        "\"name\":\"echo\",\"arguments\":\"{\\\"text\\\":\\\"tw\"}}]}}]}"
        "\n\n",
        SSE_HEAD "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":"
                 "\"fine\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"};
    struct server s;
    server_start(&s, answers, 2);
    struct rec r = {0};
    tg_loop_options o = {.stream = 1};
    tg_loop *l = new_loop(f, &s, &r, &o, &events);
    tg_error err = {0};
    assert_int_equal(tg_loop_run(l, "go", &err), 0);
    assert_int_equal(tg_loop_stop_reason(l), TG_LOOP_ANSWERED);
    assert_int_equal(r.finished, 2);
    /* both calls answered in the next request, the cut one as an error */
    assert_non_null(strstr(s.bodies[1], "\"tool_call_id\":\"c1\""));
    assert_non_null(strstr(s.bodies[1], "\"tool_call_id\":\"c2\""));
    assert_non_null(strstr(s.bodies[1], "MALFORMED_ARGUMENTS"));
    assert_string_equal(tg_loop_answer(l), "fine");
    tg_loop_free(l);
    server_stop(&s);
}

/* A server that answers a streamed request whole (application/json). */
static void test_stream_answered_whole(void **state)
{
    struct fx *f = *state;
    static const char *const answers[] = {CALLS2, ANSWER};
    struct server s;
    server_start(&s, answers, 2);
    struct rec r = {0};
    tg_loop_options o = {.stream = 1};
    tg_loop *l = new_loop(f, &s, &r, &o, &events);
    tg_error err = {0};
    assert_int_equal(tg_loop_run(l, "go", &err), 0);
    assert_int_equal(tg_loop_stop_reason(l), TG_LOOP_ANSWERED);
    assert_string_equal(tg_loop_answer(l), "the end");
    assert_int_equal(r.finished, 2);
    assert_non_null(strstr(s.bodies[0], "\"stream\":true"));
    assert_non_null(strstr(s.bodies[1], "\"tool_call_id\":\"c2\""));
    tg_loop_free(l);
    server_stop(&s);
}

static void test_bad_options(void **state)
{
    struct fx *f = *state;
    tg_loop *l = NULL;
    tg_error err = {0};
    tg_loop_options o = {
        .provider = "palm", .base_url = "http://x", .model = "m"};
    assert_int_equal(tg_loop_new(f->rt, &o, NULL, NULL, &l, &err), TG_EINVAL);
    assert_non_null(strstr(err.message, "unknown provider 'palm'"));
    assert_null(l);
    o.provider = "gemini";
    o.model = NULL;
    assert_int_equal(tg_loop_new(f->rt, &o, NULL, NULL, &l, &err), TG_EINVAL);
    o.model = "m";
    o.max_iterations = -1;
    assert_int_equal(tg_loop_new(f->rt, &o, NULL, NULL, &l, &err), TG_EINVAL);
    o.max_iterations = 0;
    assert_int_equal(tg_loop_new(f->rt, &o, NULL, NULL, &l, &err), 0);
    assert_int_equal(tg_loop_step(l, &err), TG_EINVAL); /* not started */
    assert_int_equal(tg_loop_start(l, "a", &err), 0);
    assert_int_equal(tg_loop_start(l, "b", &err), TG_EINVAL);
    tg_loop_free(l);
    tg_loop_free(NULL);
    assert_string_equal(tg_loop_stop_name(TG_LOOP_TOOL_BUDGET), "tool_budget");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_two_iterations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prompt_factory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streamed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_cut, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_answered_whole, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
