/* SPDX-License-Identifier: MIT */
/*
 * mcp_load.c - the load client of bench/mcp: drives any MCP server's `echo`
 * tool (`tools/call echo {text}`) and measures it, the same way for every
 * server, so toolgate and the TypeScript SDK's McpServer are compared by one
 * client that is not the bottleneck (C, one thread, poll(2), no JSON
 * library on the hot path).
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
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "tg_test.h"

#define MAX_MESSAGE (64u << 20) /* a response or HTTP header block */
#define MAX_INFLIGHT 4096
#define HANDSHAKE_ID 1
#define FIRST_CALL_ID 1000

struct opts {
    long calls, inflight, warmup, timeout_ms, start_timeout_ms, size;
    long pid;
    int pin; /* 0 none, 1 both on one CPU, 2 on two CPUs */
    int cpu[2];
    const char *version, *label;
    int json;
    const char *http;
    char host[256], port[16], path[512];
    char **cmd; /* the server command, argv after "--", or NULL */
};

struct buf {
    char *p;
    size_t len, cap;
};

/* An HTTP response being read on a connection. */
struct http_resp {
    int status, chunked, close, sse, headers_done;
    int lenient;      /* the DELETE that ends a session: any status, no body */
    long long length; /* Content-Length, -1 when absent */
    size_t head_len;  /* bytes of the status line and headers */
    size_t pos;       /* parse position in the connection's input */
    long long chunk_left;
    int in_trailer;
    struct buf body;
};

/* One channel to the server: the stdio pipes, or one HTTP connection. */
struct chan {
    int wfd, rfd;
    struct buf out, in;
    size_t out_off;
    int busy; /* HTTP: a request is in flight on it */
    struct http_resp resp;
};

/* What the run is waiting for: the handshake's answer or a phase's calls. */
struct phase {
    long long base; /* the first call's id */
    long n, sent, done, window;
    double *t_sent, *lat;
    long long want_id; /* handshake: the id of its request, else -1 */
    int got;           /* handshake: the answer came */
    struct buf answer; /* handshake: the answer's result */
};

struct run {
    struct opts o;
    pid_t server; /* started here, or 0 */
    struct chan *chans;
    int nchan; /* stdio: 1; HTTP: inflight */
    struct addrinfo *addr;
    char session[256];
    char version[64];          /* negotiated */
    char *req_head, *req_tail; /* a tools/call body around its id */
    size_t req_head_len, req_tail_len;
    char *text;
    long long next_id;
    struct phase *ph;
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static struct run *the_run; /* for die(): kill the server on any exit */

static void stop_server(struct run *r, int quick);

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mcp_load: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (the_run)
        stop_server(the_run, 1);
    exit(1);
}

static void buf_reserve(struct buf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (p == NULL)
        die("out of memory");
    b->p = p;
    b->cap = cap;
}

static void buf_add(struct buf *b, const void *s, size_t n)
{
    buf_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void buf_adds(struct buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

static void buf_consume(struct buf *b, size_t n)
{
    memmove(b->p, b->p + n, b->len - n);
    b->len -= n;
}

/* ---- a minimal JSON scan: the top-level members of one message ---- */

struct msg {
    int has_id, has_method, has_result, has_error;
    long long id;
    const char *result, *error; /* spans into the message */
    size_t result_len, error_len;
};

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* The end of the string starting at p (on its opening quote), or NULL. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/* The end of the JSON value starting at p, or NULL when it is not one
 * (checked as far as skipping needs: brackets, strings, scalar chars). */
static const char *skip_value(const char *p, const char *end)
{
    int depth = 0;
    do {
        p = skip_ws(p, end);
        if (p >= end)
            return NULL;
        if (*p == '"') {
            if ((p = skip_string(p, end)) == NULL)
                return NULL;
        } else if (*p == '{' || *p == '[') {
            if (++depth > 512)
                return NULL;
            p++;
        } else if (*p == '}' || *p == ']') {
            if (depth == 0)
                return NULL;
            depth--;
            p++;
        } else if (*p == ',' || *p == ':') {
            if (depth == 0)
                return NULL;
            p++;
        } else {
            const char *s = p;
            while (p < end && strchr("+-.0123456789eEtrufalsn", *p) != NULL)
                p++;
            if (p == s)
                return NULL;
        }
    } while (depth > 0);
    return p;
}

static int key_is(const char *k, const char *kend, const char *name)
{
    size_t n = strlen(name);
    return (size_t)(kend - k) == n + 2 && memcmp(k + 1, name, n) == 0;
}

/* Fills m from the JSON object s[0..n): 0, or -1 when it is not one. */
static int scan_message(const char *s, size_t n, struct msg *m)
{
    const char *p = s, *end = s + n;
    memset(m, 0, sizeof *m);
    p = skip_ws(p, end);
    if (p >= end || *p != '{')
        return -1;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}')
        return skip_ws(p + 1, end) == end ? 0 : -1;
    for (;;) {
        if (p >= end || *p != '"')
            return -1;
        const char *k = p, *kend = skip_string(p, end);
        if (kend == NULL)
            return -1;
        p = skip_ws(kend, end);
        if (p >= end || *p != ':')
            return -1;
        const char *v = skip_ws(p + 1, end), *vend = skip_value(v, end);
        if (vend == NULL)
            return -1;
        if (key_is(k, kend, "id")) {
            char *e;
            m->id = strtoll(v, &e, 10);
            m->has_id = e == vend;
            if (!m->has_id)
                m->id = -1;
        } else if (key_is(k, kend, "method")) {
            m->has_method = 1;
        } else if (key_is(k, kend, "result")) {
            m->has_result = 1;
            m->result = v;
            m->result_len = (size_t)(vend - v);
        } else if (key_is(k, kend, "error")) {
            m->has_error = 1;
            m->error = v;
            m->error_len = (size_t)(vend - v);
        }
        p = skip_ws(vend, end);
        if (p < end && *p == ',') {
            p = skip_ws(p + 1, end);
            continue;
        }
        if (p < end && *p == '}')
            return skip_ws(p + 1, end) == end ? 0 : -1;
        return -1;
    }
}

/* Whether span[0..n) holds needle. */
static int span_has(const char *span, size_t n, const char *needle)
{
    return memmem(span, n, needle, strlen(needle)) != NULL;
}

/* ---- the server process ---- */

/* --pin: the first one or two CPUs this process may use. */
static void choose_cpus(struct opts *o)
{
    int found = bench_two_cpus(o->cpu);
    if (found == 0)
        die("sched_getaffinity: %s", strerror(errno));
    if (o->pin == 2 && found < 2)
        die("--pin two: this process may run on one CPU only");
    if (o->pin == 1)
        o->cpu[1] = o->cpu[0];
    if (bench_pin_cpu(o->cpu[0]) != 0)
        die("sched_setaffinity: %s", strerror(errno));
}

static void start_server(struct run *r, int *to_server, int *from_server)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2];
    int stdio = r->o.http == NULL;
    if ((stdio && (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))) ||
        pipe2(err, O_CLOEXEC))
        die("pipe: %s", strerror(errno));
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        signal(SIGPIPE, SIG_DFL);
        if (r->o.pin && bench_pin_cpu(r->o.cpu[1]) != 0)
            _exit(126);
        if (stdio) {
            dup2(in[0], 0);
            dup2(out[1], 1);
        } else {
            int null = open("/dev/null", O_RDONLY);
            if (null >= 0)
                dup2(null, 0);
            dup2(2, 1); /* our stdout is for the figures */
        }
        execvp(r->o.cmd[0], r->o.cmd);
        int e = errno;
        ssize_t w = write(err[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    setpgid(pid, pid);
    close(err[1]);
    int e;
    ssize_t got;
    while ((got = read(err[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(err[0]);
    if (got == (ssize_t)sizeof e) {
        waitpid(pid, NULL, 0);
        die("cannot run %s: %s", r->o.cmd[0], strerror(e));
    }
    r->server = pid;
    if (stdio) {
        close(in[0]);
        close(out[1]);
        *to_server = in[1];
        *from_server = out[0];
    }
}

/* Dies when the server this program started has exited, or exits within
 * wait_ms (a server that closed its end is given that long to finish). */
static void check_server(struct run *r, long wait_ms)
{
    int st;
    double until = bench_now() + (double)wait_ms / 1000;
    pid_t w;
    while (r->server > 0 &&
           (w = waitpid(r->server, &st, WNOHANG)) != r->server) {
        if (w < 0 || bench_now() >= until)
            return;
        tg_test_sleep_ms(5);
    }
    if (r->server <= 0)
        return;
    r->server = 0;
    if (WIFEXITED(st))
        die("the server exited with status %d", WEXITSTATUS(st));
    die("the server was killed by signal %d", WTERMSIG(st));
}

/* Waits up to ms for pid; 1 when it is gone. */
static int reap_within(pid_t pid, long ms)
{
    double until = bench_now() + (double)ms / 1000;
    do {
        pid_t w = waitpid(pid, NULL, WNOHANG);
        if (w == pid || (w < 0 && errno == ECHILD))
            return 1;
        tg_test_sleep_ms(5);
    } while (bench_now() < until);
    return 0;
}

/* Ends the server started here: EOF on its stdin (stdio's clean shutdown)
 * or SIGTERM, then SIGKILL to its process group; quick skips the waiting
 * for a clean exit. */
static void stop_server(struct run *r, int quick)
{
    if (r->server <= 0)
        return;
    pid_t pid = r->server;
    r->server = 0;
    if (r->chans && r->o.http == NULL && r->chans[0].wfd >= 0) {
        close(r->chans[0].wfd);
        r->chans[0].wfd = -1;
        if (!quick && reap_within(pid, 2000))
            goto group;
    }
    kill(-pid, SIGTERM);
    if (quick || !reap_within(pid, 2000))
        kill(-pid, SIGKILL);
    reap_within(pid, 5000);
group:
    kill(-pid, SIGKILL); /* whatever it left in its group */
}

/* The sum of VmHWM (KiB) over pid and its descendants, or -1. */
static long tree_hwm_kib(long pid)
{
    long total = tg_test_pid_status_kib(pid, "VmHWM");
    if (total < 0)
        return -1;
    size_t n;
    char **names = tg_test_list_dir("/proc", NULL, &n);
    if (names == NULL)
        return total;
    long *pids = calloc(n + 1, sizeof *pids),
         *ppids = calloc(n + 1, sizeof *ppids);
    char *in = calloc(n + 1, 1);
    size_t m = 0;
    for (size_t i = 0; pids && ppids && in && i < n; i++) {
        char *e;
        long p = strtol(names[i], &e, 10);
        if (*e != '\0' || p <= 0)
            continue;
        char path[64], line[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", p);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        const char *rp =
            fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
        fclose(f);
        long pp;
        char state;
        if (rp && sscanf(rp + 1, " %c %ld", &state, &pp) == 2) {
            pids[m] = p;
            ppids[m++] = pp;
        }
    }
    /* descendants: repeat until no new process joins the tree */
    for (int changed = 1; changed && in;) {
        changed = 0;
        for (size_t i = 0; i < m; i++) {
            if (in[i])
                continue;
            int parent_in = ppids[i] == pid;
            for (size_t j = 0; !parent_in && j < m; j++)
                parent_in = in[j] && pids[j] == ppids[i];
            if (parent_in) {
                in[i] = 1;
                changed = 1;
                long k = tg_test_pid_status_kib(pids[i], "VmHWM");
                if (k > 0)
                    total += k;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(pids);
    free(ppids);
    free(in);
    return total;
}

/* ---- HTTP ---- */

static void parse_endpoint(struct opts *o)
{
    const char *s = o->http, *colon = strrchr(s, ':');
    const char *slash = colon ? strchr(colon, '/') : NULL;
    if (strncmp(s, "http://", 7) == 0)
        s += 7, colon = strrchr(s, ':'),
                slash = colon ? strchr(colon, '/') : NULL;
    if (colon == NULL || colon == s)
        die("--http wants HOST:PORT/PATH, not '%s'", o->http);
    size_t hl = (size_t)(colon - s);
    size_t pl = slash ? (size_t)(slash - colon - 1) : strlen(colon + 1);
    if (hl >= sizeof o->host || pl == 0 || pl >= sizeof o->port)
        die("--http wants HOST:PORT/PATH, not '%s'", o->http);
    memcpy(o->host, s, hl);
    o->host[hl] = '\0';
    if (o->host[0] == '[' && hl > 2 && o->host[hl - 1] == ']') {
        memmove(o->host, o->host + 1, hl - 2);
        o->host[hl - 2] = '\0';
    }
    memcpy(o->port, colon + 1, pl);
    o->port[pl] = '\0';
    snprintf(o->path, sizeof o->path, "%s", slash ? slash : "/mcp");
}

static int http_connect(struct run *r)
{
    int fd = socket(r->addr->ai_family, SOCK_STREAM | SOCK_CLOEXEC,
                    r->addr->ai_protocol);
    if (fd < 0)
        die("socket: %s", strerror(errno));
    if (connect(fd, r->addr->ai_addr, r->addr->ai_addrlen) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/* Waits until the endpoint accepts a connection (the server started here
 * listens), dying when the server exits first or start_timeout passes. */
static void wait_for_port(struct run *r)
{
    double until = bench_now() + (double)r->o.start_timeout_ms / 1000;
    for (;;) {
        int fd = http_connect(r);
        if (fd >= 0) {
            close(fd);
            return;
        }
        if (r->server <= 0)
            die("cannot connect to %s:%s: %s", r->o.host, r->o.port,
                strerror(errno));
        check_server(r, 0);
        if (bench_now() > until)
            die("the server did not listen on %s:%s within %ld ms", r->o.host,
                r->o.port, r->o.start_timeout_ms);
        tg_test_sleep_ms(20);
    }
}

/* Appends one POST (or DELETE, body NULL) of the endpoint to c->out. */
static void http_request(struct run *r, struct chan *c, const char *method,
                         const char *mcp_name, const char *body, size_t len)
{
    char head[1536];
    int n = snprintf(head, sizeof head,
                     "%s %s HTTP/1.1\r\nHost: %s:%s\r\n"
                     "Accept: application/json, text/event-stream\r\n",
                     body ? "POST" : "DELETE", r->o.path, r->o.host, r->o.port);
    if (r->session[0])
        n += snprintf(head + n, sizeof head - (size_t)n,
                      "Mcp-Session-Id: %s\r\n", r->session);
    if (r->version[0])
        n += snprintf(head + n, sizeof head - (size_t)n,
                      "MCP-Protocol-Version: %s\r\n", r->version);
    if (method && strcmp(r->o.version, "2026-07-28") >= 0)
        n += snprintf(head + n, sizeof head - (size_t)n,
                      "Mcp-Method: %s\r\n%s%s%s", method,
                      mcp_name ? "Mcp-Name: " : "", mcp_name ? mcp_name : "",
                      mcp_name ? "\r\n" : "");
    n += snprintf(
        head + n, sizeof head - (size_t)n,
        "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
        body ? len : 0);
    buf_add(&c->out, head, (size_t)n);
    if (body)
        buf_add(&c->out, body, len);
    c->busy = 1;
    struct buf keep = c->resp.body; /* reused, emptied */
    keep.len = 0;
    c->resp = (struct http_resp){.length = -1, .body = keep};
}

/* The value of header `name` in the header block h[0..n), or NULL;
 * *vlen its length. */
static const char *header_value(const char *h, size_t n, const char *name,
                                size_t *vlen)
{
    size_t nl = strlen(name);
    const char *p = memchr(h, '\n', n), *end = h + n;
    while (p && ++p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL)
            break;
        if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 &&
            p[nl] == ':') {
            const char *v = p + nl + 1, *ve = eol;
            while (v < ve && (*v == ' ' || *v == '\t'))
                v++;
            while (ve > v && (ve[-1] == '\r' || ve[-1] == ' '))
                ve--;
            *vlen = (size_t)(ve - v);
            return v;
        }
        p = eol;
    }
    return NULL;
}

/* Parses the status line and headers once they are all in c->in: 0 done,
 * 1 need more. */
static int http_head(struct run *r, struct chan *c)
{
    struct http_resp *h = &c->resp;
    const char *end = memmem(c->in.p, c->in.len, "\r\n\r\n", 4);
    if (end == NULL) {
        if (c->in.len > 65536)
            die("an HTTP response's headers are over 64 KiB");
        return 1;
    }
    h->head_len = (size_t)(end - c->in.p) + 4;
    h->pos = h->head_len;
    const char *hd = c->in.p;
    if (c->in.len < 12 || strncmp(hd, "HTTP/1.", 7) != 0)
        die("not an HTTP/1.x response: '%.40s'", hd);
    h->status = (int)strtol(hd + 9, NULL, 10);
    size_t vl;
    const char *v;
    if ((v = header_value(hd, h->head_len, "Content-Length", &vl)))
        h->length = strtoll(v, NULL, 10);
    if ((v = header_value(hd, h->head_len, "Transfer-Encoding", &vl)))
        h->chunked = vl >= 7 && strncasecmp(v + vl - 7, "chunked", 7) == 0;
    if ((v = header_value(hd, h->head_len, "Connection", &vl)))
        h->close = vl == 5 && strncasecmp(v, "close", 5) == 0;
    if ((v = header_value(hd, h->head_len, "Content-Type", &vl)))
        h->sse = vl >= 17 && strncasecmp(v, "text/event-stream", 17) == 0;
    if ((v = header_value(hd, h->head_len, "Mcp-Session-Id", &vl))) {
        if (vl >= sizeof r->session)
            die("a session id of %zu bytes", vl);
        memcpy(r->session, v, vl);
        r->session[vl] = '\0';
    }
    if (h->status == 204 || h->status == 304 || h->status / 100 == 1)
        h->length = 0;
    if (h->length < 0 && !h->chunked)
        h->close = 1; /* the body ends with the connection */
    h->headers_done = 1;
    return 0;
}

/* Moves what is complete of the body from c->in into c->resp.body: 0 when
 * the whole response is in, 1 need more. */
static int http_body(struct chan *c)
{
    struct http_resp *h = &c->resp;
    char *p = c->in.p;
    size_t len = c->in.len;
    if (!h->chunked) {
        if (h->length < 0)
            return 1; /* to EOF */
        if ((long long)(len - h->pos) < h->length)
            return 1;
        buf_add(&h->body, p + h->pos, (size_t)h->length);
        h->pos += (size_t)h->length;
        return 0;
    }
    for (;;) {
        if (h->chunk_left > 0) {
            size_t have = len - h->pos;
            size_t take =
                have < (size_t)h->chunk_left ? have : (size_t)h->chunk_left;
            buf_add(&h->body, p + h->pos, take);
            h->pos += take;
            h->chunk_left -= (long long)take;
            if (h->chunk_left > 0)
                return 1;
            h->chunk_left = -2; /* the CRLF after the data */
        }
        const char *eol = memmem(p + h->pos, len - h->pos, "\r\n", 2);
        if (eol == NULL)
            return 1;
        size_t linelen = (size_t)(eol - (p + h->pos));
        if (h->chunk_left == -2) {
            if (linelen != 0)
                die("a chunk of an HTTP response does not end with CRLF");
            h->pos += 2;
            h->chunk_left = 0;
            continue;
        }
        if (h->in_trailer) {
            h->pos += linelen + 2;
            if (linelen == 0)
                return 0;
            continue;
        }
        char *e;
        long long size = strtoll(p + h->pos, &e, 16);
        if (e == p + h->pos || size < 0 || size > (long long)MAX_MESSAGE)
            die("a bad chunk size in an HTTP response: '%.20s'", p + h->pos);
        h->pos += linelen + 2;
        if (size == 0)
            h->in_trailer = 1;
        else
            h->chunk_left = size;
        if (h->body.len > MAX_MESSAGE)
            die("an HTTP response body over %u bytes", MAX_MESSAGE);
    }
}

/* ---- messages ---- */

static void on_message(struct run *r, const char *s, size_t n)
{
    struct msg m;
    if (scan_message(s, n, &m) != 0)
        die("the server sent something that is not a JSON object: '%.*s'",
            (int)(n > 200 ? 200 : n), s);
    if (m.has_method)
        return; /* a notification or a request of the server: not ours */
    if (!m.has_id)
        die("a response without a numeric id: '%.*s'", (int)(n > 300 ? 300 : n),
            s);
    struct phase *ph = r->ph;
    if (ph->want_id >= 0) {
        if (m.id != ph->want_id)
            die("the handshake's answer has id %lld, not %lld", m.id,
                ph->want_id);
        if (m.has_error || !m.has_result)
            die("the handshake failed: %.*s", (int)(n > 400 ? 400 : n), s);
        ph->answer.len = 0;
        buf_add(&ph->answer, m.result, m.result_len);
        buf_add(&ph->answer, "", 1);
        ph->got = 1;
        return;
    }
    long long i = m.id - ph->base;
    if (i < 0 || i >= ph->n || ph->lat[i] >= 0)
        die("a response to id %lld, which is not a call in flight", m.id);
    if (m.has_error)
        die("call %lld failed: %.*s", m.id,
            (int)(m.error_len > 400 ? 400 : m.error_len), m.error);
    if (!m.has_result || span_has(m.result, m.result_len, "\"isError\":true"))
        die("call %lld failed: %.*s", m.id, (int)(n > 400 ? 400 : n), s);
    /* the text may come wrapped (toolgate's trust envelope), so only its
     * presence is checked */
    if (!span_has(m.result, m.result_len, r->text))
        die("call %lld: the result does not echo the text: %.*s", m.id,
            (int)(n > 400 ? 400 : n), s);
    ph->lat[i] = bench_now() - ph->t_sent[i];
    ph->done++;
}

/* Splits an SSE body into events and hands each data payload over. */
static void on_sse(struct run *r, const char *p, size_t n)
{
    struct buf data = {0};
    const char *end = p + n;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        size_t ll = eol ? (size_t)(eol - p) : (size_t)(end - p);
        size_t tl = ll > 0 && p[ll - 1] == '\r' ? ll - 1 : ll;
        if (tl == 0) {
            if (data.len)
                on_message(r, data.p, data.len);
            data.len = 0;
        } else if (tl >= 5 && strncmp(p, "data:", 5) == 0) {
            const char *v = p + 5;
            size_t vl = tl - 5;
            if (vl && *v == ' ')
                v++, vl--;
            if (data.len)
                buf_add(&data, "\n", 1);
            buf_add(&data, v, vl);
        }
        p += ll + (eol ? 1 : 0);
    }
    if (data.len)
        on_message(r, data.p, data.len);
    free(data.p);
}

/* A whole HTTP response is in c->resp: act on it, free the connection. */
static void http_done(struct run *r, struct chan *c)
{
    struct http_resp *h = &c->resp;
    if (h->lenient)
        ;
    else if (h->status != 200 && h->status != 202)
        die("HTTP %d from %s: %.*s", h->status, r->o.path,
            (int)(h->body.len > 400 ? 400 : h->body.len),
            h->body.p ? h->body.p : "");
    if (h->lenient)
        ;
    else if (h->sse)
        on_sse(r, h->body.p, h->body.len);
    else if (h->body.len > 0)
        on_message(r, h->body.p, h->body.len);
    buf_consume(&c->in, h->pos);
    h->body.len = 0;
    c->busy = 0;
    if (h->close) {
        close(c->rfd);
        c->rfd = c->wfd = -1;
        c->in.len = 0;
    }
}

/* Takes in what arrived on c; 0, or -1 at EOF. */
static int chan_read(struct chan *c)
{
    for (;;) {
        buf_reserve(&c->in, 65536);
        size_t room = c->in.cap - c->in.len;
        ssize_t got = read(c->rfd, c->in.p + c->in.len, room);
        if (got > 0) {
            c->in.len += (size_t)got;
            if (c->in.len > MAX_MESSAGE + 65536)
                die("a message over %u bytes", MAX_MESSAGE);
            if ((size_t)got < room)
                return 0; /* drained */
            continue;
        }
        if (got == 0)
            return -1;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        if (errno == ECONNRESET)
            return -1;
        die("read: %s", strerror(errno));
    }
}

static void chan_input(struct run *r, struct chan *c)
{
    int eof = chan_read(c) < 0;
    if (r->o.http == NULL) {
        size_t off = 0;
        for (;;) {
            char *nl = memchr(c->in.p + off, '\n', c->in.len - off);
            if (nl == NULL)
                break;
            size_t ll = (size_t)(nl - (c->in.p + off));
            if (ll > 0 && !(ll == 1 && c->in.p[off] == '\r'))
                on_message(r, c->in.p + off, ll);
            off += ll + 1;
        }
        buf_consume(&c->in, off);
        if (eof) {
            check_server(r, 1000);
            die("the server closed its stdout");
        }
        return;
    }
    while (c->busy && c->in.len > 0) {
        if (!c->resp.headers_done && http_head(r, c) != 0)
            break;
        if (http_body(c) != 0)
            break;
        http_done(r, c);
    }
    if (!eof)
        return;
    if (c->busy && c->resp.headers_done && c->resp.length < 0 &&
        !c->resp.chunked) {
        buf_add(&c->resp.body, c->in.p + c->resp.pos, c->in.len - c->resp.pos);
        c->resp.pos = c->in.len;
        http_done(r, c);
        return;
    }
    if (c->busy) {
        check_server(r, 1000);
        die("the server closed a connection with a request in flight");
    }
    close(c->rfd); /* an idle keep-alive connection the server ended */
    c->rfd = c->wfd = -1;
    c->in.len = 0;
}

static void chan_flush(struct chan *c)
{
    while (c->out_off < c->out.len) {
        ssize_t w =
            write(c->wfd, c->out.p + c->out_off, c->out.len - c->out_off);
        if (w > 0) {
            c->out_off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        int e = errno;
        check_server(the_run, 1000);
        errno = e;
        die("write to the server: %s", w < 0 ? strerror(errno) : "nothing");
    }
    c->out.len = c->out_off = 0;
}

/* One poll round over every channel; dies after timeout_ms of silence. */
static void pump(struct run *r)
{
    struct pollfd pfd[MAX_INFLIGHT];
    int map[MAX_INFLIGHT], n = 0;
    for (int i = 0; i < r->nchan; i++) {
        struct chan *c = &r->chans[i];
        if (c->rfd < 0)
            continue;
        chan_flush(c);
        int pending = c->out_off < c->out.len;
        pfd[n] = (struct pollfd){.fd = c->rfd, .events = POLLIN};
        if (pending && c->wfd == c->rfd)
            pfd[n].events |= POLLOUT;
        map[n++] = i;
        if (pending && c->wfd != c->rfd) { /* stdio: the other pipe */
            pfd[n] = (struct pollfd){.fd = c->wfd, .events = POLLOUT};
            map[n++] = i;
        }
    }
    int k = 0;
    /* Unpinned, busy-poll first: the load client must not be the
     * bottleneck, and a blocking poll costs it a sleep and a wake-up per
     * response. Pinned (--pin, the placements of pingpong, which blocks
     * in read) it blocks at once, as pingpong does. */
    for (int spin = r->o.pin != 0 ? 2000 : 0; spin < 2000; spin++) {
        k = poll(pfd, (nfds_t)n, 0);
        if (k > 0 || (k < 0 && errno != EINTR))
            break;
    }
    if (k <= 0)
        while ((k = poll(pfd, (nfds_t)n, (int)r->o.timeout_ms)) < 0 &&
               errno == EINTR)
            ;
    if (k < 0)
        die("poll: %s", strerror(errno));
    if (k == 0) {
        check_server(r, 0);
        if (r->ph->want_id >= 0)
            die("no answer to the handshake in %ld ms", r->o.timeout_ms);
        die("no response in %ld ms (%ld of %ld calls answered)",
            r->o.timeout_ms, r->ph->done, r->ph->n);
    }
    for (int i = 0; i < n; i++) {
        struct chan *c = &r->chans[map[i]];
        if (pfd[i].revents == 0)
            continue;
        if (pfd[i].fd == c->rfd &&
            (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
            chan_input(r, c);
        else if (pfd[i].fd == c->wfd &&
                 (pfd[i].revents & (POLLHUP | POLLERR))) {
            check_server(r, 0);
            die("the server closed its stdin");
        }
    }
}

static struct chan *chan_open(struct run *r, int i)
{
    struct chan *c = &r->chans[i];
    if (c->rfd < 0) {
        int fd = http_connect(r);
        if (fd < 0)
            die("cannot connect to %s:%s: %s", r->o.host, r->o.port,
                strerror(errno));
        c->rfd = c->wfd = fd;
    }
    return c;
}

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
    http_request(r, c, "tools/call", "echo", body, len);
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
          "         [--label NAME] [--json]\n"
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
                       .version = "2025-06-18"};
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
    buf_adds(&t, "\"name\":\"echo\",\"arguments\":{\"text\":\"");
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
    if (r->o.http) {
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
        int rc = getaddrinfo(r->o.host, r->o.port, &hints, &r->addr);
        if (rc != 0)
            die("%s:%s: %s", r->o.host, r->o.port, gai_strerror(rc));
    }
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
