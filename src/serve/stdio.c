/* SPDX-License-Identifier: MIT */
/*
 * stdio.c - the stdio transport: newline-delimited JSON-RPC on an input
 * and an output descriptor (stdin and stdout for `toolgate serve --stdio`;
 * duplicates of them, so the caller's stay open), one session, any number
 * of requests in flight. The output carries MCP messages and nothing
 * else. A client that stops reading its responses is not let grow the
 * server's memory: past a bound of queued output the server stops reading
 * the input until the client catches up. A line longer than the message
 * limit is answered with an error and skipped. EOF on the input is a
 * clean shutdown: calls still running get the grace period to end (then
 * they are canceled), every request is answered, and the server stops.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server.h"
#include "stdio_transport.h"

#define QUEUE_MAX ((size_t)16 << 20) /* queued stdout bytes before pausing */

typedef struct stdio_tr {
    srv_out out; /* first: the session's out is this */
    tg__srv *srv;
    srv_session *s;
    int in_fd, out_fd; /* the transport's duplicates of the caller's */
    uv_stream_t *in;   /* in_fd as a stream, or NULL (a regular file) */
    uv_stream_t *o;    /* out_fd as a stream, or NULL (blocking writes) */
    union {
        uv_pipe_t pipe;
        uv_tty_t tty;
    } in_h, out_h;
    uv_fs_t fs; /* reading a regular file on stdin */
    char fbuf[65536];
    char *line; /* the line being read */
    size_t len, cap;
    bool skipping;    /* the rest of a line over the limit */
    tg__buf pend;     /* messages of this loop iteration, not written yet */
    uv_check_t check; /* writes them */
    uv_idle_t idle;   /* while they wait, the poll does not block */
    uv_shutdown_t shut;
    size_t queued; /* bytes of stdout waiting */
    bool paused, eof, dead;
    int64_t grace_ms;
} stdio_tr;

typedef struct wreq {
    uv_write_t req;
    stdio_tr *t;
    size_t len;
    char data[];
} wreq;

static void start_reading(stdio_tr *t);

static void on_written(uv_write_t *req, int status)
{
    wreq *w = (wreq *)req;
    stdio_tr *t = w->t;
    t->queued -= w->len;
    if (status < 0)
        t->dead = true; /* the client closed stdout: nothing more goes */
    free(w);
    if (t->paused && t->queued < QUEUE_MAX / 2 && !t->eof) {
        t->paused = false;
        start_reading(t);
    }
}

/* Writes what the loop iteration gathered in t->pend: one write for every
 * message answered in it (the check phase, after the poll's callbacks). */
static void flush(stdio_tr *t)
{
    /* what waits is written now: the next poll may block again */
    uv_idle_stop(&t->idle);
    if (t->pend.len == 0 || t->dead)
        return;
    size_t len = t->pend.len;
    char *data = t->pend.data;
    uv_buf_t b = uv_buf_init(data, (unsigned)len);
    if (t->queued == 0) {
        int n = uv_try_write(t->o, &b, 1);
        if (n == (int)len) {
            t->pend.len = 0;
            return;
        }
        if (n < 0 && n != UV_EAGAIN) {
            t->dead = true;
            t->pend.len = 0;
            return;
        }
        if (n > 0) {
            data += n;
            len -= (size_t)n;
        }
    }
    wreq *w = malloc(sizeof *w + len);
    if (w == NULL) {
        t->dead = true; /* the messages cannot be kept: the client lost */
        t->pend.len = 0;
        return;
    }
    memcpy(w->data, data, len);
    w->len = len;
    w->t = t;
    t->pend.len = 0;
    b = uv_buf_init(w->data, (unsigned)w->len);
    if (uv_write(&w->req, t->o, &b, 1, on_written) != 0) {
        free(w);
        t->dead = true;
        return;
    }
    t->queued += w->len;
    if (t->queued > QUEUE_MAX && t->in != NULL && !t->paused) {
        t->paused = true;
        uv_read_stop(t->in);
    }
}

static void on_check(uv_check_t *h)
{
    flush(h->data);
}

/* Keeps the loop from blocking in its poll while messages wait: they are
 * written in that iteration's check phase. */
static void on_idle(uv_idle_t *h)
{
    flush(h->data);
}

/* Writes all of data[0..len) to fd, a blocking descriptor. */
static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static int out_send(srv_out *o, srv_msg_kind kind, const char *msg, size_t len)
{
    (void)kind;
    stdio_tr *t = (stdio_tr *)o;
    if (t->dead)
        return -1;
    if (t->o == NULL) {
        /* the output is a file: plain blocking writes */
        if (write_all(t->out_fd, msg, len) != 0 ||
            write_all(t->out_fd, "\n", 1) != 0) {
            t->dead = true;
            return -1;
        }
        return 0;
    }
    if (t->pend.len == 0)
        uv_idle_start(&t->idle, on_idle);
    if (tg__buf_append(&t->pend, msg, len) != 0 ||
        tg__buf_append(&t->pend, "\n", 1) != 0)
        return -1;
    if (t->pend.len > QUEUE_MAX / 4)
        flush(t);
    return 0;
}

static void out_free(srv_out *o)
{
    (void)o; /* lives in the transport */
}

static const srv_out_ops stdio_ops = {out_send, out_free};

/* One complete line: a message. */
static void message(stdio_tr *t, const char *p, size_t n)
{
    while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == ' '))
        n--;
    if (n == 0)
        return;
    srv_answer ans;
    srv_handle(t->srv, t->s, p, n, &t->out, NULL, &ans);
}

static void feed(stdio_tr *t, const char *data, size_t n)
{
    size_t limit = t->srv->max_message;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(data + i, '\n', n - i);
        size_t take = nl ? (size_t)(nl - (data + i)) : n - i;
        if (!t->skipping && t->len + take > limit) {
            /* over the limit: answered now, the rest of it skipped */
            srv_answer ans;
            srv_handle(t->srv, t->s, data + i, limit + 1, &t->out, NULL, &ans);
            t->skipping = true;
            t->len = 0;
        }
        if (!t->skipping) {
            if (t->len + take > t->cap) {
                size_t cap = t->cap ? t->cap : 4096;
                while (cap < t->len + take)
                    cap *= 2;
                char *l = realloc(t->line, cap);
                if (l == NULL) {
                    t->skipping = true; /* no memory: the line is lost */
                } else {
                    t->line = l;
                    t->cap = cap;
                }
            }
            if (!t->skipping) {
                memcpy(t->line + t->len, data + i, take);
                t->len += take;
            }
        }
        i += take;
        if (nl != NULL) {
            i++;
            if (!t->skipping && t->len > 0)
                message(t, t->line, t->len); /* the line is complete */
            t->len = 0;
            t->skipping = false;
        }
    }
}

static void on_eof(stdio_tr *t)
{
    if (t->eof)
        return;
    t->eof = true;
    if (t->len > 0 && !t->skipping)
        message(t, t->line, t->len); /* the last line may lack its \n */
    t->len = 0;
    /* A clean shutdown: what runs gets the grace period and is answered
     * (stdout may still be read). */
    srv_stop(t->srv, t->grace_ms);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    (void)hint;
    stdio_tr *t = h->data;
    *buf = uv_buf_init(t->fbuf, sizeof t->fbuf);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    stdio_tr *t = s->data;
    if (n > 0) {
        feed(t, buf->base, (size_t)n);
        srv_step_now(t->srv);
    } else if (n < 0) {
        uv_read_stop(s);
        on_eof(t);
    }
}

static void on_fs_read(uv_fs_t *req)
{
    stdio_tr *t = req->data;
    ssize_t n = req->result;
    uv_fs_req_cleanup(req);
    if (n <= 0) {
        on_eof(t);
        return;
    }
    feed(t, t->fbuf, (size_t)n);
    if (!t->eof)
        start_reading(t);
}

static void start_reading(stdio_tr *t)
{
    if (t->in != NULL) {
        uv_read_start(t->in, on_alloc, on_read);
        return;
    }
    uv_buf_t b = uv_buf_init(t->fbuf, sizeof t->fbuf);
    t->fs.data = t;
    if (uv_fs_read(srv_loop(t->srv), &t->fs, t->in_fd, &b, 1, -1, on_fs_read) !=
        0)
        on_eof(t);
}

/* The input or output as a libuv stream (pipe, socket or terminal), or
 * NULL for a regular file. The stream owns fd once it is made (closing the
 * handle closes it). */
static uv_stream_t *open_stream(uv_loop_t *loop, int fd, void *h, void *data)
{
    uv_handle_type ty = uv_guess_handle(fd);
    int rc = -1;
    if (ty == UV_NAMED_PIPE || ty == UV_TCP) {
        if ((rc = uv_pipe_init(loop, h, 0)) == 0)
            rc = uv_pipe_open(h, fd);
    } else if (ty == UV_TTY) {
        rc = uv_tty_init(loop, h, fd, 0);
    }
    if (rc != 0)
        return NULL;
    ((uv_handle_t *)h)->data = data;
    return h;
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    (void)status;
    if (!uv_is_closing((uv_handle_t *)req->handle))
        uv_close((uv_handle_t *)req->handle, NULL);
}

static void on_stopped(tg__srv *srv, void *ud)
{
    (void)srv;
    stdio_tr *t = ud;
    if (t->in != NULL && !uv_is_closing((uv_handle_t *)t->in))
        uv_close((uv_handle_t *)t->in, NULL);
    flush(t);
    /* stdout closes once what is queued was written */
    if (t->o != NULL && !uv_is_closing((uv_handle_t *)t->o) &&
        (t->queued == 0 || t->dead ||
         uv_shutdown(&t->shut, t->o, on_shutdown) != 0))
        uv_close((uv_handle_t *)t->o, NULL);
    if (!uv_is_closing((uv_handle_t *)&t->check))
        uv_close((uv_handle_t *)&t->check, NULL);
    if (!uv_is_closing((uv_handle_t *)&t->idle))
        uv_close((uv_handle_t *)&t->idle, NULL);
}

srv_stdio *srv_stdio_start(tg__srv *srv, int in_fd, int out_fd,
                           const char *caller, int64_t grace_ms, tg_error *err)
{
    int in = fcntl(in_fd, F_DUPFD_CLOEXEC, 3);
    int out = in < 0 ? -1 : fcntl(out_fd, F_DUPFD_CLOEXEC, 3);
    if (in < 0 || out < 0) {
        if (err != NULL) {
            err->code = TG_EINVAL;
            snprintf(err->message, sizeof err->message,
                     "cannot serve descriptors %d and %d: %s", in_fd, out_fd,
                     strerror(errno));
        }
        if (in >= 0)
            close(in);
        return NULL;
    }
    stdio_tr *t = calloc(1, sizeof *t);
    if (t == NULL ||
        (t->s = srv_session_new(srv, SRV_VIA_STDIO, caller)) == NULL) {
        free(t);
        close(in);
        close(out);
        if (err != NULL) {
            err->code = TG_ENOMEM;
            snprintf(err->message, sizeof err->message, "out of memory");
        }
        return NULL;
    }
    srv_out_init(&t->out, &stdio_ops);
    t->srv = srv;
    t->grace_ms = grace_ms;
    t->in_fd = in;
    t->out_fd = out;
    srv_session_set_notify(t->s, &t->out);
    t->in = open_stream(srv_loop(srv), in, &t->in_h, t);
    t->o = open_stream(srv_loop(srv), out, &t->out_h, t);
    tg__buf_init(&t->pend, 0);
    uv_check_init(srv_loop(srv), &t->check);
    t->check.data = t;
    uv_check_start(&t->check, on_check);
    uv_unref((uv_handle_t *)&t->check);
    uv_idle_init(srv_loop(srv), &t->idle);
    t->idle.data = t;
    srv_on_stopped(srv, on_stopped, t);
    start_reading(t);
    return (srv_stdio *)t;
}

void srv_stdio_free(srv_stdio *st)
{
    stdio_tr *t = (stdio_tr *)st;
    if (t == NULL)
        return;
    srv_session_release(t->s);
    /* a stream's descriptor was closed with its handle */
    if (t->in == NULL)
        close(t->in_fd);
    if (t->o == NULL)
        close(t->out_fd);
    tg__buf_cleanup(&t->pend);
    free(t->line);
    free(t);
}
