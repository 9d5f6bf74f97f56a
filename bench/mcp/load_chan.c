/* SPDX-License-Identifier: MIT */
/*
 * load_chan.c - how the MCP load client (mcp_load.c) moves messages: the
 * channels to the server (the stdio pipes, or K keep-alive HTTP
 * connections), writing what they hold, reading what arrives, cutting it
 * into messages (lines over stdio; HTTP responses, JSON or SSE events),
 * checking each against what the run waits for (the handshake's answer, or
 * a call of the phase and its latency), and the round that drives them
 * all and dies after --timeout of silence: a poll round, or pinned over
 * stdio a read(2) that blocks, as bench/mcp/pingpong (the limit the
 * pinned figures are compared with) does.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "bench_util.h"
#include "load.h"

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

/* Stdio: hands each complete line of c->in over, then dies at EOF. */
static void chan_lines(struct run *r, struct chan *c, int eof)
{
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
}

static void chan_input(struct run *r, struct chan *c)
{
    int eof = chan_read(c) < 0;
    if (r->o.http == NULL) {
        chan_lines(r, c, eof);
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

void chan_flush(struct chan *c)
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

/* No progress for timeout_ms: says what was waited for, and dies. */
static void timed_out(struct run *r)
{
    check_server(r, 0);
    if (r->ph->want_id >= 0)
        die("no answer to the handshake in %ld ms", r->o.timeout_ms);
    die("no response in %ld ms (%ld of %ld calls answered)", r->o.timeout_ms,
        r->ph->done, r->ph->n);
}

static volatile sig_atomic_t alarmed;

static void on_alarm(int sig)
{
    (void)sig;
    alarmed = 1;
}

/* Pinned over stdio with all of the output written: one read(2) on the
 * server's stdout, which blocks (that pipe is left blocking), with the
 * timeout an interval timer armed before it, as pingpong arms alarm(2)
 * before each round trip: a write, an alarm and a read a call, the
 * limit's own system calls. 1 when it read; 0 when output is left (the
 * poll round then waits for both). */
static int pump_blocking(struct run *r)
{
    static int handler;
    struct chan *c = &r->chans[0];
    chan_flush(c);
    if (c->out_off < c->out.len)
        return 0;
    if (!handler) {
        /* no SA_RESTART: the alarm ends the read with EINTR */
        struct sigaction sa = {.sa_handler = on_alarm};
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGALRM, &sa, NULL) != 0)
            die("sigaction: %s", strerror(errno));
        handler = 1;
    }
    struct itimerval it = {
        .it_value = {.tv_sec = r->o.timeout_ms / 1000,
                     .tv_usec = (r->o.timeout_ms % 1000) * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
    buf_reserve(&c->in, 65536);
    ssize_t got;
    while ((got = read(c->rfd, c->in.p + c->in.len, c->in.cap - c->in.len)) <
               0 &&
           errno == EINTR)
        if (alarmed)
            timed_out(r);
    if (got < 0)
        die("read: %s", strerror(errno));
    c->in.len += (size_t)got;
    if (c->in.len > MAX_MESSAGE + 65536)
        die("a message over %u bytes", MAX_MESSAGE);
    chan_lines(r, c, got == 0);
    return 1;
}

void pump_done(struct run *r)
{
    static const struct itimerval off;
    if (r->o.pin != 0 && r->o.http == NULL)
        setitimer(ITIMER_REAL, &off, NULL);
}

/* One poll round over every channel; dies after timeout_ms of silence. */
void pump(struct run *r)
{
    if (r->o.pin != 0 && r->o.http == NULL && pump_blocking(r))
        return;
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
     * response. Pinned (--pin, the placements of pingpong), with output
     * left to write, it blocks at once. */
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
    if (k == 0)
        timed_out(r);
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

struct chan *chan_open(struct run *r, int i)
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
