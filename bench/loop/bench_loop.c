/* SPDX-License-Identifier: MIT */
/*
 * bench_loop.c - the agent loop's overhead per iteration and the lead time
 * of a streamed turn's first tool. A model server runs on a thread of this
 * process (libmicrohttpd on 127.0.0.1, OpenAI Chat Completions), answering
 * each of ITERS-1 requests with CALLS calls of a no-op tool `lookup {key,
 * n}` and the last with a text answer; tg_loop reaches it over HTTP as it
 * reaches any model. The overhead is the wall time of LOOPS loops (each
 * tg_loop_new, tg_loop_run, tg_loop_free) minus the time the server spent
 * building its answers (measured in its request handler) minus the time in
 * the tool (measured in the handler), per iteration. What is left holds
 * everything toolgate does (requests built, answers parsed, calls checked
 * and run, results rendered, the conversation kept) and the HTTP exchange
 * on loopback: libcurl's side and libmicrohttpd's, which the Vercel AI
 * SDK's mock model (bench/loop/peer_loop.mjs) does not have; the exchange
 * alone is measured after (the median of plain libcurl POSTs of the loop's
 * mean request size to the same server) and reported taken out too.
 *
 * The streamed measure: the server sends call 0 complete in one event, then
 * waits DELAY ms before call 1 and the end of the stream; reported per
 * repetition are how long before the stream's end the first tool started
 * and the delay from the server writing call 0's last byte to the tool's
 * start (one CLOCK_MONOTONIC, the server being a thread of this process).
 *
 * Prints one JSON line per measure:
 *   {"measure":"overhead","journal":0|1,"us_per_iteration":X,...}
 *   {"measure":"stream","reps":N,"lead_ms_median":..., ...}
 *
 * With --in-process the same scripted model is a tg_loop_model_fn (no
 * HTTP), as the SDK's mock model is: the like-for-like measure; the time
 * it spends building its answers is taken out as the server's is.
 *
 * Usage: bench_loop [--loops L] [--iters I] [--calls C] [--journal DIR]
 *                   [--stream-reps N] [--delay-ms D] [--no-floor]
 *                   [--in-process]
 * With --journal the overhead is measured with the journal on in DIR
 * (which must exist); --stream-reps N (0: none) adds the streamed measure;
 * --no-floor skips the plain POSTs of the exchange alone (its figure is then
 * 0), so that syscall and instruction counts of a run are the loop's.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "toolgate.h"
#include "toolgate_loop.h"

#define BODY_MAX 4096

/* The scripted model; the driver sets it between loops, the server thread
 * reads it during requests (the HTTP exchange orders the two). */
static struct {
    int iters, calls, stream, delay_ms;
    int next_header;         /* stream: call 1's header right after call 0 */
    atomic_int step;         /* requests answered in this loop */
    atomic_llong server_ns;  /* spent building answers */
    atomic_llong body_bytes; /* request bodies received */
    atomic_llong first_written_ns; /* stream: call 0's last byte out */
    atomic_llong end_written_ns;   /* stream: the stream's last byte out */
} model;

static atomic_llong tool_ns, tool_first_ns;
static int in_process; /* --in-process: the model is a tg_loop_model_fn */

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int lookup(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    long long t0 = now_ns();
    long long zero = 0;
    (void)args;
    (void)len;
    (void)ud;
    atomic_compare_exchange_strong(&tool_first_ns, &zero, t0);
    int rc = tg_handler_set_json(ctx, "{\"ok\":true}", 11, NULL);
    atomic_fetch_add(&tool_ns, now_ns() - t0);
    return rc;
}

/* One call of step `step` as an OpenAI tool_calls element. */
static int put_call(char *b, size_t cap, int step, int c, int streamed)
{
    return snprintf(b, cap,
                    "%s{%s\"id\":\"call_%d_%d\",\"type\":\"function\","
                    "\"function\":{\"name\":\"lookup\",\"arguments\":"
                    "\"{\\\"key\\\":\\\"k%d_%d\\\",\\\"n\\\":%d}\"}}",
                    c && !streamed ? "," : "", streamed ? "\"index\":" : "",
                    step, c, step, c, c);
}

/* The whole answer to request `step` (1-based). */
static size_t whole_answer(char *b, size_t cap, int step)
{
    size_t n = 0;
    if (step >= model.iters)
        return (size_t)snprintf(
            b, cap,
            "{\"id\":\"chatcmpl-b\",\"object\":\"chat.completion\","
            "\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,"
            "\"message\":{\"role\":\"assistant\",\"content\":\"done\"},"
            "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":10,"
            "\"completion_tokens\":5,\"total_tokens\":15}}");
    n += (size_t)snprintf(
        b + n, cap - n,
        "{\"id\":\"chatcmpl-b\",\"object\":\"chat.completion\",\"created\":0,"
        "\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":"
        "\"assistant\",\"content\":null,\"tool_calls\":[");
    for (int c = 0; c < model.calls && n < cap; c++)
        n += (size_t)put_call(b + n, cap - n, step, c, 0);
    n += (size_t)snprintf(b + n, cap - n,
                          "]},\"finish_reason\":\"tool_calls\"}],\"usage\":{"
                          "\"prompt_tokens\":10,\"completion_tokens\":5,"
                          "\"total_tokens\":15}}");
    return n < cap ? n : cap;
}

/* A streamed answer in two parts: part 0 (call 0 complete, or the whole
 * text answer) and part 1, sent DELAY ms later (call 1 and the end). */
typedef struct sse {
    char part[2][BODY_MAX];
    size_t len[2], off;
    int cur, last;
    long long due_ns; /* part 1 not before */
} sse;

static size_t sse_call(char *b, size_t cap, int step, int c)
{
    size_t n = (size_t)snprintf(b, cap,
                                "data: {\"id\":\"chatcmpl-b\",\"choices\":[{"
                                "\"index\":0,\"delta\":{\"role\":"
                                "\"assistant\",\"tool_calls\":[");
    /* the streamed element carries its index: "index":C */
    char call[512];
    int k = put_call(call, sizeof call, step, c, 1);
    char *idx = strstr(call, "\"index\":");
    if (k < 0 || idx == NULL)
        return 0;
    idx += 8;
    n += (size_t)snprintf(b + n, cap - n, "%.*s%d,%s]}}]}\n\n",
                          (int)(idx - call), call, c, idx);
    return n;
}

static void sse_build(sse *s, int step)
{
    const char *end = "data: {\"id\":\"chatcmpl-b\",\"choices\":[{\"index\":0,"
                      "\"delta\":{},\"finish_reason\":\"%s\"}]}\n\n"
                      "data: [DONE]\n\n";
    if (step >= model.iters) {
        int n = snprintf(s->part[0], BODY_MAX,
                         "data: {\"id\":\"chatcmpl-b\",\"choices\":[{"
                         "\"index\":0,\"delta\":{\"role\":\"assistant\","
                         "\"content\":\"done\"}}]}\n\n");
        n += snprintf(s->part[0] + n, BODY_MAX - (size_t)n, end, "stop");
        s->len[0] = (size_t)n;
        s->last = 0;
        return;
    }
    s->len[0] = sse_call(s->part[0], BODY_MAX, step, 0);
    size_t n = 0;
    int c = 1;
    if (model.next_header) {
        /* the stream moves on at once: call 1's id and name, its
         * arguments after the delay */
        s->len[0] += (size_t)snprintf(
            s->part[0] + s->len[0], BODY_MAX - s->len[0],
            "data: {\"id\":\"chatcmpl-b\",\"choices\":[{\"index\":0,"
            "\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":"
            "\"call_%d_1\",\"type\":\"function\",\"function\":{\"name\":"
            "\"lookup\",\"arguments\":\"\"}}]}}]}\n\n",
            step);
        n += (size_t)snprintf(
            s->part[1], BODY_MAX,
            "data: {\"id\":\"chatcmpl-b\",\"choices\":[{\"index\":0,"
            "\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{"
            "\"arguments\":\"{\\\"key\\\":\\\"k%d_1\\\",\\\"n\\\":1}\"}}]}}]}"
            "\n\n",
            step);
        c = 2;
    }
    for (; c < model.calls; c++)
        n += sse_call(s->part[1] + n, BODY_MAX - n, step, c);
    n += (size_t)snprintf(s->part[1] + n, BODY_MAX - n, end, "tool_calls");
    s->len[1] = n;
    s->last = 1;
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    sse *s = cls;
    (void)pos;
    if (s->cur > s->last)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (s->off == 0 && s->cur == 1 &&
        now_ns() < s->due_ns) { /* not yet: part 0 must go out first */
        struct timespec d = {0, 200000L};
        nanosleep(&d, NULL);
        return 0;
    }
    size_t k = s->len[s->cur] - s->off;
    if (k > max)
        k = max;
    memcpy(buf, s->part[s->cur] + s->off, k);
    s->off += k;
    if (s->off == s->len[s->cur]) {
        /* the bytes are written when this returns: stamp it last */
        if (s->cur == 0 && s->last == 1) {
            s->due_ns = now_ns();
            atomic_store(&model.first_written_ns, s->due_ns);
            s->due_ns += (long long)model.delay_ms * 1000000LL;
        }
        if (s->cur == s->last && s->last == 1)
            atomic_store(&model.end_written_ns, now_ns());
        s->cur++;
        s->off = 0;
    }
    return (ssize_t)k;
}

static enum MHD_Result serve(void *cls, struct MHD_Connection *conn,
                             const char *url, const char *method,
                             const char *version, const char *upload,
                             size_t *upload_size, void **state)
{
    static int marker;
    (void)cls;
    (void)url;
    (void)method;
    (void)version;
    (void)upload;
    if (*state == NULL) {
        *state = &marker;
        return MHD_YES;
    }
    if (*upload_size > 0) { /* the request body: counted and dropped */
        atomic_fetch_add(&model.body_bytes, (long long)*upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    long long t0 = now_ns();
    int step = atomic_fetch_add(&model.step, 1) + 1;
    struct MHD_Response *resp;
    if (model.stream) {
        sse *s = calloc(1, sizeof *s);
        if (s == NULL)
            return MHD_NO;
        sse_build(s, step);
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, BODY_MAX,
                                                 sse_read, s, free);
        if (resp != NULL)
            MHD_add_response_header(resp, "Content-Type", "text/event-stream");
    } else {
        char body[BODY_MAX];
        size_t n = whole_answer(body, sizeof body, step);
        resp = MHD_create_response_from_buffer(n, body, MHD_RESPMEM_MUST_COPY);
        if (resp != NULL)
            MHD_add_response_header(resp, "Content-Type", "application/json");
    }
    if (resp == NULL)
        return MHD_NO;
    enum MHD_Result rc = MHD_queue_response(conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    atomic_fetch_add(&model.server_ns, now_ns() - t0);
    return rc;
}

/* The same scripted model in-process (tg_loop_options.model_fn): the
 * answer built as the server builds it, counted as model time. */
static int inproc_model(void *ud, const char *request, size_t len,
                        char **answer, size_t *answer_len, tg_error *err)
{
    long long t0 = now_ns();
    (void)ud;
    (void)request;
    (void)err;
    atomic_fetch_add(&model.body_bytes, (long long)len);
    int step = atomic_fetch_add(&model.step, 1) + 1;
    char *b = malloc(BODY_MAX);
    if (b == NULL)
        return TG_ENOMEM;
    *answer_len = whole_answer(b, BODY_MAX, step);
    *answer = b;
    atomic_fetch_add(&model.server_ns, now_ns() - t0);
    return 0;
}

/* One loop against the server; 0 when it answered after model.iters. */
static int one_loop(tg_runtime *rt, const char *base, tg_error *err)
{
    tg_loop_options o = {0};
    o.provider = "openai";
    o.base_url = base;
    o.model = "m";
    o.max_iterations = model.iters + 1;
    o.stream = model.stream;
    if (in_process && !model.stream)
        o.model_fn = inproc_model;
    tg_loop *l = NULL;
    atomic_store(&model.step, 0);
    int rc = tg_loop_new(rt, &o, NULL, NULL, &l, err);
    if (rc == 0)
        rc = tg_loop_run(l, "go", err);
    if (rc == 0 && (tg_loop_stop_reason(l) != TG_LOOP_ANSWERED ||
                    tg_loop_iteration(l) != model.iters ||
                    strcmp(tg_loop_answer(l), "done") != 0)) {
        fprintf(stderr, "bench_loop: the loop stopped %s after %d\n",
                tg_loop_stop_name(tg_loop_stop_reason(l)),
                tg_loop_iteration(l));
        rc = -1;
    }
    tg_loop_free(l);
    return rc;
}

static long peak_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmHWM: %ld", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return size * n;
}

/* The HTTP exchange alone: n POSTs of `len` bytes on one libcurl handle
 * (one connection, as the loop's) to the same server, answered the same;
 * the median of microseconds per request, the server's time taken out (the
 * median: stalls of the exchange are left in the loop's figure); -1 on
 * failure. */
static double http_floor(const char *base, int n, size_t len)
{
    char url[128];
    char *body = malloc(len + 1);
    CURL *e = curl_easy_init();
    struct curl_slist *h =
        curl_slist_append(NULL, "Content-Type: application/json");
    double *v = calloc((size_t)n, sizeof *v), us = -1;
    if (body == NULL || e == NULL || h == NULL || v == NULL)
        goto done;
    memset(body, ' ', len);
    body[0] = '{';
    body[len > 1 ? len - 1 : 0] = '}';
    snprintf(url, sizeof url, "%s/chat/completions", base);
    atomic_store(&model.server_ns, 0);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
    for (int i = 0; i < n; i++) {
        if (i % model.iters == 0)
            atomic_store(&model.step, 0);
        long long s0 = atomic_load(&model.server_ns), t0 = now_ns();
        if (curl_easy_perform(e) != CURLE_OK)
            goto done;
        long long dt = now_ns() - t0;
        dt -= atomic_load(&model.server_ns) - s0;
        v[i] = (double)dt / 1e3;
    }
    us = bench_median(v, n);
done:
    curl_slist_free_all(h);
    if (e != NULL)
        curl_easy_cleanup(e);
    free(body);
    free(v);
    return us;
}

static int overhead(tg_runtime *rt, const char *base, int loops, int journal,
                    int no_floor, tg_error *err)
{
    model.stream = 0;
    for (int i = 0; i < 5; i++) /* warm up */
        if (one_loop(rt, base, err) != 0)
            return -1;
    atomic_store(&model.server_ns, 0);
    atomic_store(&model.body_bytes, 0);
    atomic_store(&tool_ns, 0);
    long long t0 = now_ns();
    for (int i = 0; i < loops; i++)
        if (one_loop(rt, base, err) != 0)
            return -1;
    long long wall = now_ns() - t0;
    long long srv = atomic_load(&model.server_ns);
    long long tool = atomic_load(&tool_ns);
    int n = loops * model.iters;
    double per = (double)(wall - srv - tool) / 1e3 / n;
    size_t mean = (size_t)(atomic_load(&model.body_bytes) / n);
    double floor = no_floor || in_process ? 0 : http_floor(base, n, mean);
    if (floor < 0)
        return -1;
    printf("{\"measure\":\"overhead\",\"journal\":%d,\"in_process\":%d,"
           "\"loops\":%d,"
           "\"iterations\":%d,\"calls\":%d,\"us_per_iteration\":%.2f,"
           "\"wall_us_per_iteration\":%.2f,\"server_us\":%.0f,"
           "\"tool_us\":%.0f,\"http_us_per_request\":%.2f,"
           "\"mean_request_bytes\":%zu,\"us_per_iteration_no_http\":%.2f,"
           "\"peak_rss_kb\":%ld}\n",
           journal, in_process, loops, model.iters, model.calls, per,
           (double)wall / 1e3 / (loops * model.iters), (double)srv / 1e3,
           (double)tool / 1e3, floor, mean, per - floor, peak_rss_kb());
    return 0;
}

static int stream_lead(tg_runtime *rt, const char *base, int reps,
                       tg_error *err)
{
    double *lead = calloc((size_t)reps, sizeof *lead);
    double *lag = calloc((size_t)reps, sizeof *lag);
    int iters = model.iters, rc = -1;
    if (lead == NULL || lag == NULL)
        goto done;
    model.stream = 1;
    model.iters = 2; /* one streamed turn of calls, then the answer */
    for (int r = -1; r < reps; r++) { /* round -1 warms up */
        atomic_store(&tool_first_ns, 0);
        if (one_loop(rt, base, err) != 0)
            goto done;
        long long tool = atomic_load(&tool_first_ns);
        long long first = atomic_load(&model.first_written_ns);
        long long end = atomic_load(&model.end_written_ns);
        if (r >= 0) {
            lag[r] = (double)(tool - first) / 1e6;
            lead[r] = (double)(end - tool) / 1e6;
        }
    }
    double lag95, lead95;
    qsort(lag, (size_t)reps, sizeof *lag, bench_cmp_double);
    qsort(lead, (size_t)reps, sizeof *lead, bench_cmp_double);
    lag95 = lag[(reps * 95) / 100 < reps ? (reps * 95) / 100 : reps - 1];
    lead95 = lead[(reps * 5) / 100];
    printf("{\"measure\":\"stream\",\"variant\":\"%s\",\"reps\":%d,"
           "\"delay_ms\":%d,"
           "\"lead_ms_median\":%.3f,\"lead_ms_p5\":%.3f,"
           "\"lag_ms_median\":%.3f,\"lag_ms_p95\":%.3f,\"lag_ms_max\":%.3f}\n",
           model.next_header ? "next-call-header" : "call-alone", reps,
           model.delay_ms, lead[reps / 2], lead95, lag[reps / 2], lag95,
           lag[reps - 1]);
    rc = 0;
done:
    model.iters = iters;
    model.stream = 0;
    free(lead);
    free(lag);
    return rc;
}

int main(int argc, char **argv)
{
    int loops = 200, reps = 0, no_floor = 0;
    const char *journal = NULL;
    model.iters = 20;
    model.calls = 2;
    model.delay_ms = 30;
    for (int i = 1; i < argc; i += 2) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--loops") == 0)
            loops = (int)bench_arg_long("bench_loop", o, v, 1, 1000000);
        else if (strcmp(o, "--iters") == 0)
            model.iters = (int)bench_arg_long("bench_loop", o, v, 2, 1000);
        else if (strcmp(o, "--calls") == 0)
            model.calls = (int)bench_arg_long("bench_loop", o, v, 2, 8);
        else if (strcmp(o, "--journal") == 0 && v != NULL)
            journal = v;
        else if (strcmp(o, "--in-process") == 0) {
            in_process = 1; /* a flag: no value */
            i--;
        } else if (strcmp(o, "--no-floor") == 0) {
            no_floor = 1; /* a flag: no value */
            i--;
        } else if (strcmp(o, "--stream-reps") == 0)
            reps = (int)bench_arg_long("bench_loop", o, v, 0, 100000);
        else if (strcmp(o, "--delay-ms") == 0)
            model.delay_ms = (int)bench_arg_long("bench_loop", o, v, 0, 999);
        else {
            fprintf(stderr, "usage: bench_loop [--loops L] [--iters 2..1000] "
                            "[--calls 2..8] [--journal DIR] [--stream-reps N] "
                            "[--delay-ms 0..999] [--no-floor] "
                            "[--in-process]\n");
            return 2;
        }
    }
    char cfgtext[1024], base[64];
    tg_error err = {0};
    tg_config *cfg = tg_config_new();
    tg_runtime *rt = NULL;
    struct MHD_Daemon *d = NULL;
    int rc = 1;
    snprintf(cfgtext, sizeof cfgtext,
             "{\"journal\": %s%s%s, \"builtin_tools\": []}",
             journal ? "\"" : "", journal ? journal : "null",
             journal ? "/j.db\"" : "");
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0,
        NULL, NULL, serve, NULL, MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_END);
    const union MHD_DaemonInfo *di =
        d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    if (di == NULL) {
        fprintf(stderr, "bench_loop: cannot start the model server\n");
        goto done;
    }
    snprintf(base, sizeof base, "http://127.0.0.1:%u/v1", (unsigned)di->port);
    if (cfg == NULL ||
        tg_config_load(cfg, cfgtext, strlen(cfgtext), NULL, &err) != 0 ||
        tg_runtime_new(cfg, &rt, &err) != 0 ||
        tg_runtime_register(
            rt, "lookup", "no-op",
            "{\"type\":\"object\",\"properties\":{\"key\":{\"type\":"
            "\"string\"},\"n\":{\"type\":\"integer\"}},\"required\":"
            "[\"key\",\"n\"]}",
            lookup, NULL, TG_TOOL_INLINE, &err) != 0)
        goto done;
    if (overhead(rt, base, loops, journal != NULL, no_floor, &err) != 0)
        goto done;
    for (int v = 0; reps > 0 && v < 2; v++) {
        model.next_header = v;
        if (stream_lead(rt, base, reps, &err) != 0)
            goto done;
    }
    rc = 0;
done:
    if (rc != 0 && err.message[0])
        fprintf(stderr, "bench_loop: %s\n", err.message);
    tg_runtime_free(rt);
    tg_config_free(cfg);
    if (d != NULL)
        MHD_stop_daemon(d);
    return rc;
}
