/* SPDX-License-Identifier: MIT */
/*
 * mcp_load.c - the load client of bench/mcp: drives any MCP server's `echo`
 * tool (`tools/call echo {text}`) and measures it, the same way for every
 * server, so toolgate and the TypeScript SDK's McpServer are compared by one
 * client that is not the bottleneck (C, one thread, poll(2), no JSON
 * library on the hot path). Pinned over stdio (--pin) it waits for a
 * response in a read(2) that blocks, as the limit it is compared with
 * (bench/mcp/pingpong) does: a write, an alarm (setitimer) and a read a
 * sequential call.
 *
 *   mcp_load [options] -- SERVER COMMAND...          stdio: starts the
 *       command, speaks newline-delimited JSON-RPC on its stdin/stdout
 *   mcp_load [options] --http HOST:PORT/PATH [-- SERVER COMMAND...]
 *       Streamable HTTP: connects to the endpoint (starting the command
 *       first, when given, and waiting until the port accepts)
 *
 * It does the handshake (initialize + notifications/initialized, with
 * Mcp-Session-Id and MCP-Protocol-Version over HTTP; under 2026-07-28,
 * which has no initialize, server/discover and the version, capabilities
 * and client info in each request's _meta, plus the Mcp-Method / Mcp-Name
 * headers), runs WARMUP calls with K in flight, then N calls one at a time
 * and N calls with K in flight, and prints calls/s, p50 and p99 latency
 * (from writing a request to reading its response) and the server's peak
 * RSS: the sum of VmHWM over the server process and its descendants (for
 * the SDK: the node process). Over stdio the K calls are pipelined on the
 * one pipe and matched by id; over HTTP they go on K keep-alive
 * connections, one request each at a time (HTTP/1.1 on raw sockets; JSON
 * and text/event-stream responses, Content-Length or chunked bodies).
 *
 * Every response is checked: a JSON-RPC error, `isError: true`, or a result
 * without the text sent fails the run at once, saying which call and what
 * came back. Nothing waits forever: no progress for --timeout ms, a server
 * that exits or closes its stdout or a connection mid-call, or a refused
 * connection is an error exit (status 1; 2 for bad usage). A server this
 * program started is killed with its process group when it ends.
 *
 * Options: --calls N (10000)  --inflight K (64)  --warmup N (1000)
 *   --protocol-version V (2025-06-18)  --size BYTES (the text: "hello", or
 *   BYTES x's)  --timeout MS (30000)  --start-timeout MS (30000)
 *   --pid PID (the server to measure when it was not started here)
 *   --pin one|two (this program and the server it starts pinned to one
 *   CPU, or to two different ones: the placements of bench/mcp/pingpong,
 *   whose limit the sequential figure is compared with)
 *   --label NAME  --json (one machine-readable line on stdout)
 *   --tool NAME (the tool called: `echo` unless named, e.g. a gateway's
 *   `echo__echo`)
 *
 * This file holds the options, the handshake, the phases and the figures;
 * load.h says what the other files (load_chan.c, load_http.c,
 * load_server.c, load_json.c, load_util.c) do.
 */
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "load.h"

#define HANDSHAKE_ID 1
#define FIRST_CALL_ID 1000

/* Appends the tools/call of id to a free channel's output. */
static void send_call(struct run *r, struct chan *c, long long id)
{
    char num[32];
    int nl = snprintf(num, sizeof num, "%lld", id);
    if (r->o.http == NULL) {
        buf_add(&c->out, r->req_head, r->req_head_len);
        buf_add(&c->out, num, (size_t)nl);
        buf_add(&c->out, r->req_tail, r->req_tail_len);
        buf_add(&c->out, "\n", 1);
        return;
    }
    size_t len = r->req_head_len + (size_t)nl + r->req_tail_len;
    char *body = malloc(len);
    if (body == NULL)
        die("out of memory");
    memcpy(body, r->req_head, r->req_head_len);
    memcpy(body + r->req_head_len, num, (size_t)nl);
    memcpy(body + r->req_head_len + nl, r->req_tail, r->req_tail_len);
    http_request(r, c, "tools/call", r->o.tool, body, len);
    free(body);
}

/* Sends one request of the handshake (a notification when id < 0; over
 * HTTP with body NULL, the DELETE that ends the session) and waits for its
 * answer; returns the answer's result (valid until the next exchange), or
 * NULL for a notification. */
static const char *exchange(struct run *r, const char *method, long long id,
                            const char *body)
{
    struct phase ph = {.want_id = id < 0 ? -2 : id};
    r->ph = &ph;
    struct chan *c = r->o.http ? chan_open(r, 0) : &r->chans[0];
    if (r->o.http) {
        http_request(r, c, method, NULL, body, body ? strlen(body) : 0);
        c->resp.lenient = body == NULL;
        while (c->busy)
            pump(r);
        if (id >= 0 && !ph.got)
            die("the HTTP response to %s held no JSON-RPC response", method);
    } else {
        buf_adds(&c->out, body);
        buf_add(&c->out, "\n", 1);
        if (id < 0)
            chan_flush(c);
        while (id >= 0 && !ph.got)
            pump(r);
        pump_done(r);
    }
    static struct buf keep;
    keep.len = 0;
    if (ph.answer.len)
        buf_add(&keep, ph.answer.p, ph.answer.len);
    free(ph.answer.p);
    r->ph = NULL;
    return id < 0 ? NULL : keep.p;
}

/* The "_meta" member every request carries under 2026-07-28, or "". */
static void meta_member(const struct run *r, char *out, size_t size)
{
    if (strcmp(r->o.version, "2026-07-28") < 0) {
        out[0] = '\0';
        return;
    }
    snprintf(out, size,
             "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"%s\","
             "\"io.modelcontextprotocol/clientCapabilities\":{},"
             "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcp_load\","
             "\"version\":\"1\"}}",
             r->o.version);
}

static void handshake(struct run *r)
{
    char body[1024], meta[512];
    meta_member(r, meta, sizeof meta);
    if (meta[0]) {
        /* no initialize: ask what the server speaks */
        snprintf(
            body, sizeof body,
            "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"server/discover\","
            "\"params\":{%s}}",
            HANDSHAKE_ID, meta);
        snprintf(r->version, sizeof r->version, "%s", r->o.version);
        const char *res = exchange(r, "server/discover", HANDSHAKE_ID, body);
        char want[96];
        snprintf(want, sizeof want, "\"%s\"", r->o.version);
        if (strstr(res, want) == NULL)
            die("the server does not offer protocol version %s: %.300s",
                r->o.version, res);
        return;
    }
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"initialize\","
             "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
             "\"clientInfo\":{\"name\":\"mcp_load\",\"version\":\"1\"}}}",
             HANDSHAKE_ID, r->o.version);
    const char *res = exchange(r, "initialize", HANDSHAKE_ID, body);
    const char *pv = strstr(res, "\"protocolVersion\"");
    const char *q = pv ? strchr(pv + 17, '"') : NULL;
    const char *qe = q ? strchr(q + 1, '"') : NULL;
    if (qe == NULL || (size_t)(qe - q - 1) >= sizeof r->version)
        die("the initialize result has no protocolVersion: %.300s", res);
    snprintf(r->version, sizeof r->version, "%.*s", (int)(qe - q - 1), q + 1);
    if (strcmp(r->version, r->o.version) != 0)
        die("asked for protocol version %s, the server chose %s", r->o.version,
            r->version);
    if (r->o.http && r->session[0] == '\0')
        fprintf(stderr, "mcp_load: the server gave no Mcp-Session-Id\n");
    exchange(r, "notifications/initialized", -1,
             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

/* Runs n calls with up to k in flight; the seconds it took. lat (n
 * entries) gets each call's latency. */
static double run_phase(struct run *r, long n, long k, double *lat)
{
    struct phase ph = {.base = r->next_id, .n = n, .want_id = -1, .lat = lat};
    ph.t_sent = malloc((size_t)n * sizeof *ph.t_sent);
    if (ph.t_sent == NULL)
        die("out of memory");
    for (long i = 0; i < n; i++)
        lat[i] = -1;
    r->ph = &ph;
    r->next_id += n;
    double t0 = bench_now();
    while (ph.done < n) {
        if (r->o.http == NULL) {
            while (ph.sent < n && ph.sent - ph.done < k) {
                ph.t_sent[ph.sent] = bench_now();
                send_call(r, &r->chans[0], ph.base + ph.sent);
                ph.sent++;
            }
        } else {
            for (int i = 0; i < k && i < r->nchan && ph.sent < n; i++) {
                if (r->chans[i].busy)
                    continue;
                struct chan *c = chan_open(r, i);
                ph.t_sent[ph.sent] = bench_now();
                send_call(r, c, ph.base + ph.sent);
                ph.sent++;
                chan_flush(c);
            }
        }
        pump(r);
    }
    double dt = bench_now() - t0;
    pump_done(r);
    free(ph.t_sent);
    r->ph = NULL;
    return dt;
}

struct figures {
    double per_s, p50_us, p99_us;
};

static struct figures summarize(long n, double secs, double *lat)
{
    qsort(lat, (size_t)n, sizeof *lat, bench_cmp_double);
    long i99 = (n * 99 + 99) / 100 - 1;
    struct figures f = {n / secs, lat[n / 2] * 1e6,
                        lat[i99 < 0 ? 0 : i99] * 1e6};
    return f;
}

static void usage(void)
{
    fputs("usage: mcp_load [--calls N] [--inflight K] [--warmup N]\n"
          "         [--protocol-version V] [--size BYTES] [--timeout MS]\n"
          "         [--start-timeout MS] [--pid PID] [--pin one|two]\n"
          "         [--label NAME] [--tool NAME] [--json]\n"
          "         (-- SERVER COMMAND... | --http HOST:PORT/PATH "
          "[-- SERVER COMMAND...])\n",
          stderr);
    exit(2);
}

static void parse_args(struct opts *o, int argc, char **argv)
{
    *o = (struct opts){.calls = 10000,
                       .inflight = 64,
                       .warmup = 1000,
                       .timeout_ms = 30000,
                       .start_timeout_ms = 30000,
                       .size = -1,
                       .version = "2025-06-18",
                       .tool = "echo"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--") == 0) {
            if (i + 1 >= argc)
                usage();
            o->cmd = argv + i + 1;
            break;
        } else if (strcmp(a, "--json") == 0) {
            o->json = 1;
            continue;
        } else if (v == NULL) {
            usage();
        } else if (strcmp(a, "--calls") == 0) {
            o->calls = bench_arg_long("mcp_load", a, v, 1, 100000000);
        } else if (strcmp(a, "--inflight") == 0) {
            o->inflight = bench_arg_long("mcp_load", a, v, 1, MAX_INFLIGHT / 2);
        } else if (strcmp(a, "--warmup") == 0) {
            o->warmup = bench_arg_long("mcp_load", a, v, 0, 100000000);
        } else if (strcmp(a, "--size") == 0) {
            o->size = bench_arg_long("mcp_load", a, v, 1, 16 << 20);
        } else if (strcmp(a, "--timeout") == 0) {
            o->timeout_ms = bench_arg_long("mcp_load", a, v, 1, 3600000);
        } else if (strcmp(a, "--start-timeout") == 0) {
            o->start_timeout_ms = bench_arg_long("mcp_load", a, v, 1, 3600000);
        } else if (strcmp(a, "--pid") == 0) {
            o->pid = bench_arg_long("mcp_load", a, v, 1, 1L << 30);
        } else if (strcmp(a, "--protocol-version") == 0) {
            o->version = v;
        } else if (strcmp(a, "--pin") == 0) {
            o->pin = strcmp(v, "one") == 0 ? 1 : strcmp(v, "two") == 0 ? 2 : -1;
            if (o->pin < 0)
                usage();
        } else if (strcmp(a, "--label") == 0) {
            o->label = v;
        } else if (strcmp(a, "--tool") == 0) {
            o->tool = v;
        } else if (strcmp(a, "--http") == 0) {
            o->http = v;
        } else {
            usage();
        }
        i++;
    }
    if (o->http == NULL && o->cmd == NULL)
        usage();
    if (strlen(o->version) >= 40 || strpbrk(o->version, "\"\\\r\n") != NULL) {
        fprintf(stderr, "mcp_load: a bad --protocol-version\n");
        exit(2);
    }
    if (o->http)
        parse_endpoint(o);
}

static void build_call(struct run *r)
{
    size_t n = r->o.size > 0 ? (size_t)r->o.size : 5;
    r->text = malloc(n + 1);
    if (r->text == NULL)
        die("out of memory");
    if (r->o.size > 0)
        memset(r->text, 'x', n);
    else
        memcpy(r->text, "hello", 5);
    r->text[n] = '\0';
    char meta[512];
    meta_member(r, meta, sizeof meta);
    r->req_head = "{\"jsonrpc\":\"2.0\",\"id\":";
    r->req_head_len = strlen(r->req_head);
    struct buf t = {0};
    buf_adds(&t, ",\"method\":\"tools/call\",\"params\":{");
    if (meta[0]) {
        buf_adds(&t, meta);
        buf_adds(&t, ",");
    }
    buf_adds(&t, "\"name\":\"");
    buf_adds(&t, r->o.tool);
    buf_adds(&t, "\",\"arguments\":{\"text\":\"");
    buf_add(&t, r->text, n);
    buf_adds(&t, "\"}}}");
    r->req_tail = t.p;
    r->req_tail_len = t.len;
}

int main(int argc, char **argv)
{
    static struct run run;
    struct run *r = &run;
    parse_args(&r->o, argc, argv);
    signal(SIGPIPE, SIG_IGN);
    the_run = r;
    build_call(r);
    if (r->o.pin)
        choose_cpus(&r->o);

    long k = r->o.inflight;
    r->nchan = r->o.http ? (int)k : 1;
    r->chans = calloc((size_t)r->nchan, sizeof *r->chans);
    if (r->chans == NULL)
        die("out of memory");
    for (int i = 0; i < r->nchan; i++)
        r->chans[i].rfd = r->chans[i].wfd = -1;
    if (r->o.http)
        http_resolve(r);
    if (r->o.cmd) {
        start_server(r, &r->chans[0].wfd, &r->chans[0].rfd);
        if (r->o.http)
            wait_for_port(r);
        else
            fcntl(r->chans[0].wfd, F_SETFL,
                  fcntl(r->chans[0].wfd, F_GETFL) | O_NONBLOCK);
    }
    long pid = r->o.pid ? r->o.pid : (long)r->server;

    handshake(r);
    r->next_id = FIRST_CALL_ID;
    long nmax = r->o.calls > r->o.warmup ? r->o.calls : r->o.warmup;
    double *lat = malloc((size_t)(nmax ? nmax : 1) * sizeof *lat);
    if (lat == NULL)
        die("out of memory");
    if (r->o.warmup > 0)
        run_phase(r, r->o.warmup, k, lat);
    double t_seq = run_phase(r, r->o.calls, 1, lat);
    struct figures seq = summarize(r->o.calls, t_seq, lat);
    double t_par = run_phase(r, r->o.calls, k, lat);
    struct figures par = summarize(r->o.calls, t_par, lat);
    long rss = pid > 0 ? tree_hwm_kib(pid) : -1;
    if (r->o.http && r->session[0] && strcmp(r->o.version, "2026-07-28") < 0)
        exchange(r, NULL, -1, NULL); /* DELETE: end the session */
    stop_server(r, 0);

    static const char *const pin_names[] = {"none", "one", "two"};
    const char *transport = r->o.http ? "http" : "stdio";
    const char *label = r->o.label ? r->o.label
                        : r->o.cmd ? r->o.cmd[0]
                                   : r->o.http;
    if (r->o.json) {
        printf("{\"label\":\"%s\",\"transport\":\"%s\",\"protocol\":\"%s\","
               "\"size\":%zu,\"calls\":%ld,\"inflight\":%ld,"
               "\"seq_per_s\":%.1f,\"seq_p50_us\":%.1f,\"seq_p99_us\":%.1f,"
               "\"par_per_s\":%.1f,\"par_p50_us\":%.1f,\"par_p99_us\":%.1f,"
               "\"rss_kib\":%ld,\"pin\":\"%s\"}\n",
               label, transport, r->version, strlen(r->text), r->o.calls, k,
               seq.per_s, seq.p50_us, seq.p99_us, par.per_s, par.p50_us,
               par.p99_us, rss, pin_names[r->o.pin]);
    } else {
        printf("%s over %s, protocol %s, text of %zu B, %ld calls each%s\n",
               label, transport, r->version, strlen(r->text), r->o.calls,
               r->o.pin == 1   ? ", client and server pinned to one CPU"
               : r->o.pin == 2 ? ", client and server pinned to two CPUs"
                               : "");
        printf(
            "  sequential      %9.0f calls/s   p50 %8.1f us   p99 %8.1f us\n",
            seq.per_s, seq.p50_us, seq.p99_us);
        printf(
            "  %4ld in flight  %9.0f calls/s   p50 %8.1f us   p99 %8.1f us\n",
            k, par.per_s, par.p50_us, par.p99_us);
        if (rss >= 0)
            printf("  server peak RSS (VmHWM, pid %ld and its children) "
                   "%.1f MiB\n",
                   pid, rss / 1024.0);
        else
            printf("  server peak RSS: unknown (no --pid)\n");
    }
    for (int i = 0; i < r->nchan; i++) {
        free(r->chans[i].in.p);
        free(r->chans[i].out.p);
        free(r->chans[i].resp.body.p);
        if (r->o.http && r->chans[i].rfd >= 0)
            close(r->chans[i].rfd);
    }
    free(r->chans);
    free(lat);
    free(r->text);
    free(r->req_tail);
    if (r->addr)
        freeaddrinfo(r->addr);
    return 0;
}
