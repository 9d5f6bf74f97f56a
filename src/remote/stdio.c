/* SPDX-License-Identifier: MIT */
/*
 * stdio.c - the stdio transport of the MCP client (transport.h): the server
 * is a subprocess started with uv_spawn in its own process group (never
 * through a shell), messages go one a line to its stdin and come one a line
 * from its stdout, and its stderr lines go to the session's log callback.
 *
 * Memory is bounded by the options, not by the server: a stdout line over
 * max_message ends the transport with TG_ELIMIT (the partial line is never
 * held beyond the limit), stderr lines are cut at max_log_line, and sends
 * are refused with TG_ELIMIT once max_backlog bytes wait for a server that
 * does not read its stdin.
 *
 * Ending: whatever ends it (tg__rtransport_close, the server's exit, its
 * stdout closing, an oversized line, a failed write), the transport closes
 * the server's stdin, sends SIGTERM to the process group, SIGKILL after the
 * grace period, and once the leader is reaped and stdout is at EOF (or a
 * grace period after the exit, for a descendant that escaped the group and
 * holds the pipe) closes every handle; `closed` comes from the last close
 * callback, exactly once, with the first reason the transport ended.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "stdio_transport.h"

typedef struct stdio_transport {
    tg__rtransport base; /* first: the session's view */
    uv_loop_t *loop;
    uv_process_t proc;
    uv_pipe_t in, out, err;
    uv_timer_t timer; /* SIGKILL after the grace period; the drain wait */
    int pid;
    size_t max_message, max_backlog, max_log_line;
    unsigned grace_ms;
    tg__buf line;  /* the stdout line read so far */
    tg__buf eline; /* the stderr line read so far (cut at max_log_line) */
    bool eline_cut;
    size_t backlog; /* bytes written to stdin and not yet taken */
    bool in_open;
    bool out_eof;
    bool exited;
    bool closing;     /* ending: stdin closed, TERM sent, nothing delivered */
    bool finishing;   /* handles closing */
    bool spawned;     /* false: a failed constructor, no `closed` */
    bool asked;       /* the session called tg__rtransport_close */
    char note[128];   /* what came before the exit (a failed write, stdout
                         closed), told with its status */
    int open_handles; /* of the five: `closed` comes when none is left */
    tg_error why;     /* why it ended (code 0: as asked) */
    bool why_set;
    char outbuf[65536];
    char errbuf[4096];
} stdio_transport;

typedef struct write_req {
    uv_write_t req;
    stdio_transport *t;
    size_t len;
    char data[];
} write_req;

static void finish(stdio_transport *t);

/* Records the first reason the transport ended. */
static void set_why(stdio_transport *t, const tg_error *e)
{
    if (t->why_set)
        return;
    t->why = *e;
    t->why_set = true;
}

static void on_handle_closed(uv_handle_t *h)
{
    stdio_transport *t = h->data;
    if (--t->open_handles > 0)
        return;
    tg__buf_cleanup(&t->line);
    tg__buf_cleanup(&t->eline);
    if (t->spawned && t->base.cbs.closed != NULL) {
        tg_error done;
        tg__error_clear(&done);
        t->base.cbs.closed(t->base.ud, t->why_set ? &t->why : &done);
    }
    free(t);
}

static void close_handle(stdio_transport *t, uv_handle_t *h)
{
    if (uv_is_closing(h))
        return;
    h->data = t;
    uv_close(h, on_handle_closed);
}

static void kill_group(stdio_transport *t, int sig)
{
    if (t->pid > 0)
        (void)kill(-t->pid, sig);
}

static void begin_shutdown(stdio_transport *t);

static void on_timer(uv_timer_t *timer)
{
    stdio_transport *t = timer->data;
    if (!t->closing) {
        /* stdout closed a grace period ago and the server still runs */
        begin_shutdown(t);
        return;
    }
    if (t->exited) {
        /* A descendant outside the group still holds stdout: stop waiting
         * for its EOF. */
        finish(t);
        return;
    }
    kill_group(t, SIGKILL);
}

/* Starts the end: stdin closed, reading stopped, SIGTERM to the group and
 * SIGKILL after the grace period (or at once the handles' close when the
 * server has exited already). */
static void begin_shutdown(stdio_transport *t)
{
    if (t->closing)
        return;
    t->closing = true;
    if (t->in_open) {
        t->in_open = false;
        close_handle(t, (uv_handle_t *)&t->in);
    }
    if (!t->out_eof)
        uv_read_stop((uv_stream_t *)&t->out);
    if (t->exited) {
        finish(t);
        return;
    }
    kill_group(t, SIGTERM);
    uv_timer_start(&t->timer, on_timer, t->grace_ms, 0);
}

/* Ends the transport with a failure (code, formatted message). */
static void fail(stdio_transport *t, int code, const char *fmt, const char *arg)
{
    tg_error e;
    tg__error_set(&e, code, fmt, arg);
    set_why(t, &e);
    begin_shutdown(t);
}

static void flush_log_line(stdio_transport *t)
{
    if (t->eline.len > 0 && t->base.cbs.log != NULL && t->spawned)
        t->base.cbs.log(t->base.ud, t->eline.data, t->eline.len);
    t->eline.len = 0;
    t->eline_cut = false;
}

/* stderr's close callback: its last line, unended, goes to the log from
 * here (finish may run inside tg__rtransport_close, which calls nothing
 * back). */
static void on_err_closed(uv_handle_t *h)
{
    flush_log_line(h->data);
    on_handle_closed(h);
}

/* Closes every handle; `closed` follows from the last close callback. */
static void finish(stdio_transport *t)
{
    if (t->finishing)
        return;
    t->closing = true;
    t->finishing = true;
    uv_timer_stop(&t->timer);
    if (t->in_open) {
        t->in_open = false;
        close_handle(t, (uv_handle_t *)&t->in);
    }
    close_handle(t, (uv_handle_t *)&t->out);
    t->err.data = t;
    uv_close((uv_handle_t *)&t->err, on_err_closed);
    close_handle(t, (uv_handle_t *)&t->timer);
    close_handle(t, (uv_handle_t *)&t->proc);
}

static void on_process_exit(uv_process_t *proc, int64_t status, int signo)
{
    stdio_transport *t = proc->data;
    t->exited = true;
    /* Nothing the server started outlives it. */
    kill_group(t, SIGKILL);
    if (!t->asked) {
        tg_error e;
        char how[64];
        if (signo != 0)
            snprintf(how, sizeof how, "was killed by signal %d", signo);
        else
            snprintf(how, sizeof how, "exited with status %lld",
                     (long long)status);
        tg__error_set(&e, TG_EIO, "the MCP server %s%s%s%s", how,
                      t->note[0] ? " (" : "", t->note, t->note[0] ? ")" : "");
        set_why(t, &e);
    }
    if (t->closing || t->out_eof) {
        finish(t);
        return;
    }
    /* Read what it wrote before exiting, for a bounded time. */
    uv_timer_stop(&t->timer);
    uv_timer_start(&t->timer, on_timer, t->grace_ms, 0);
}

static void alloc_out(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    stdio_transport *t = h->data;
    (void)hint;
    *buf = uv_buf_init(t->outbuf, sizeof t->outbuf);
}

static void alloc_err(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    stdio_transport *t = h->data;
    (void)hint;
    *buf = uv_buf_init(t->errbuf, sizeof t->errbuf);
}

/* Hands one line (without its newline) to the session; blank lines are
 * skipped, a CR before the newline is dropped. */
static void deliver(stdio_transport *t, const char *p, size_t n)
{
    if (n > 0 && p[n - 1] == '\r')
        n--;
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    if (i == n)
        return;
    t->base.cbs.message(t->base.ud, p, n, NULL);
}

static void over_limit(stdio_transport *t)
{
    char what[64];
    snprintf(what, sizeof what, "%zu", t->max_message);
    fail(t, TG_ELIMIT,
         "the MCP server wrote a message (a line of stdout) over the limit of "
         "%s bytes",
         what);
}

static void on_out_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    stdio_transport *t = s->data;
    if (nread == UV_EOF) {
        t->out_eof = true;
        uv_read_stop(s);
        if (t->line.len > 0 && !t->closing)
            deliver(t, t->line.data, t->line.len);
        t->line.len = 0;
        if (t->exited) {
            finish(t);
        } else if (!t->closing) {
            /* Most often the server is exiting: wait for it a grace period
             * (with its stdin closed), then stop it. */
            snprintf(t->note, sizeof t->note, "it closed its stdout");
            if (t->in_open) {
                t->in_open = false;
                close_handle(t, (uv_handle_t *)&t->in);
            }
            uv_timer_start(&t->timer, on_timer, t->grace_ms, 0);
        }
        return;
    }
    if (nread < 0) {
        fail(t, TG_EIO, "reading the MCP server's stdout failed: %s",
             uv_strerror((int)nread));
        return;
    }
    const char *p = buf->base, *end = buf->base + nread;
    while (p < end && !t->closing) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl != NULL ? nl : end) - p);
        if (t->line.len + n > t->max_message) {
            over_limit(t);
            return;
        }
        if (nl == NULL) {
            if (tg__buf_append(&t->line, p, n) != 0) {
                fail(t, TG_ENOMEM, "out of memory reading the MCP server%s",
                     "");
                return;
            }
            break;
        }
        if (t->line.len == 0) {
            deliver(t, p, n);
        } else {
            if (tg__buf_append(&t->line, p, n) != 0) {
                fail(t, TG_ENOMEM, "out of memory reading the MCP server%s",
                     "");
                return;
            }
            deliver(t, t->line.data, t->line.len);
            t->line.len = 0;
        }
        p = nl + 1;
    }
}

static void on_err_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    stdio_transport *t = s->data;
    if (nread < 0) {
        uv_read_stop(s);
        flush_log_line(t);
        return;
    }
    const char *p = buf->base, *end = buf->base + nread;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl != NULL ? nl : end) - p);
        if (!t->eline_cut) {
            size_t room = t->max_log_line - t->eline.len;
            size_t take = n < room ? n : room;
            (void)tg__buf_append(&t->eline, p, take);
            if (take < n) {
                /* Cut: say so, hand it over, skip to the newline. */
                flush_log_line(t);
                t->eline_cut = true;
            }
        }
        if (nl == NULL)
            break;
        if (t->eline_cut) {
            t->eline_cut = false;
            t->eline.len = 0;
        } else {
            if (t->eline.len > 0 && t->eline.data[t->eline.len - 1] == '\r')
                t->eline.len--;
            flush_log_line(t);
        }
        p = nl + 1;
    }
}

static void on_written(uv_write_t *req, int status)
{
    write_req *w = (write_req *)req;
    stdio_transport *t = w->t;
    t->backlog -= w->len;
    free(w);
    if (status < 0 && status != UV_ECANCELED && !t->closing) {
        /* Most often the server is exiting: its exit status says more, so
         * this is only a note to it (the server is stopped all the same). */
        snprintf(t->note, sizeof t->note, "writing to its stdin failed: %s",
                 uv_strerror(status));
        begin_shutdown(t);
    }
}

static int stdio_send(tg__rtransport *base, const char *json, size_t len,
                      const tg__rsend *m, tg_error *err)
{
    stdio_transport *t = (stdio_transport *)base;
    (void)m;
    if (t->closing || !t->in_open)
        return tg__error_set(err, TG_EIO,
                             "the MCP server's stdio transport is closed");
    if (len > t->max_message)
        return tg__error_set(err, TG_ELIMIT,
                             "a message of %zu bytes is over the stdio "
                             "transport's limit of %zu bytes",
                             len, t->max_message);
    if (memchr(json, '\n', len) != NULL)
        return tg__error_set(err, TG_EINVAL,
                             "a message for the stdio transport holds a "
                             "newline");
    if (t->backlog + len + 1 > t->max_backlog)
        return tg__error_set(err, TG_ELIMIT,
                             "the MCP server is not reading its stdin: %zu "
                             "bytes wait already (limit %zu)",
                             t->backlog, t->max_backlog);
    write_req *w = malloc(sizeof *w + len + 1);
    if (w == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    memcpy(w->data, json, len);
    w->data[len] = '\n';
    w->len = len + 1;
    w->t = t;
    uv_buf_t b = uv_buf_init(w->data, (unsigned)(len + 1));
    int rc = uv_write(&w->req, (uv_stream_t *)&t->in, &b, 1, on_written);
    if (rc < 0) {
        free(w);
        return tg__error_set(err, TG_EIO,
                             "writing to the MCP server's stdin failed: %s",
                             uv_strerror(rc));
    }
    t->backlog += w->len;
    return 0;
}

static void stdio_close(tg__rtransport *base)
{
    stdio_transport *t = (stdio_transport *)base;
    t->asked = true;
    begin_shutdown(t);
}

static const tg__rtransport_vt stdio_vt = {
    .send = stdio_send,
    .drop = NULL, /* stdio cancels with notifications/cancelled only */
    .close = stdio_close,
};

int tg__rstdio_new(const tg__rstdio_opts *o, const tg__rtransport_cbs *cbs,
                   void *ud, tg__rtransport **out, tg_error *err)
{
    *out = NULL;
    if (o->argv == NULL || o->argv[0] == NULL || o->argv[0][0] == '\0')
        return tg__error_set(err, TG_EINVAL,
                             "an MCP server needs a command (argv[0])");
    stdio_transport *t = calloc(1, sizeof *t);
    if (t == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    t->base.vt = &stdio_vt;
    t->base.cbs = *cbs;
    t->base.ud = ud;
    t->loop = o->loop;
    t->max_message =
        o->max_message ? o->max_message : TG_RSTDIO_DEFAULT_MAX_MESSAGE;
    t->max_backlog =
        o->max_backlog ? o->max_backlog : TG_RSTDIO_DEFAULT_MAX_BACKLOG;
    t->max_log_line =
        o->max_log_line ? o->max_log_line : TG_RSTDIO_DEFAULT_MAX_LOG_LINE;
    t->grace_ms = o->grace_ms ? o->grace_ms : TG_RSTDIO_DEFAULT_GRACE_MS;
    tg__buf_init(&t->line, 0);
    tg__buf_init(&t->eline, 0);

    /* A server that stops reading must not kill toolgate with SIGPIPE:
     * writes then fail with EPIPE, which ends the transport. Only the
     * default disposition is changed; a host's own handler stays. */
    struct sigaction sa;
    if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) {
        sa.sa_handler = SIG_IGN;
        (void)sigaction(SIGPIPE, &sa, NULL);
    }

    uv_pipe_init(t->loop, &t->in, 0);
    uv_pipe_init(t->loop, &t->out, 0);
    uv_pipe_init(t->loop, &t->err, 0);
    uv_timer_init(t->loop, &t->timer);
    t->in.data = t->out.data = t->err.data = t->timer.data = t;
    t->proc.data = t;
    t->open_handles = 5; /* in, out, err, timer, proc */

    static char *const no_env[] = {NULL};
    uv_stdio_container_t stdio[3];
    stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
    stdio[0].data.stream = (uv_stream_t *)&t->in;
    stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    stdio[1].data.stream = (uv_stream_t *)&t->out;
    stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    stdio[2].data.stream = (uv_stream_t *)&t->err;
    uv_process_options_t po;
    memset(&po, 0, sizeof po);
    po.exit_cb = on_process_exit;
    po.file = o->argv[0];
    po.args = (char **)o->argv;
    po.env = o->envp != NULL ? (char **)o->envp : (char **)no_env;
    po.cwd = o->cwd;
    po.flags = UV_PROCESS_DETACHED; /* its own process group (setsid) */
    po.stdio_count = 3;
    po.stdio = stdio;
    int rc = uv_spawn(t->loop, &t->proc, &po);
    if (rc < 0) {
        char shown[TG__SHOWN_ID_SIZE];
        tg__error_set(err, TG_ESPAWN, "cannot start the MCP server '%s': %s",
                      tg__text_show(o->argv[0], shown, sizeof shown),
                      uv_strerror(rc));
        /* The handles are on the loop: they are closed, and t freed, from
         * the loop, with no `closed` (spawned stays false). */
        t->finishing = t->closing = true;
        close_handle(t, (uv_handle_t *)&t->in);
        close_handle(t, (uv_handle_t *)&t->out);
        close_handle(t, (uv_handle_t *)&t->err);
        close_handle(t, (uv_handle_t *)&t->timer);
        close_handle(t, (uv_handle_t *)&t->proc);
        return TG_ESPAWN;
    }
    t->spawned = true;
    t->pid = t->proc.pid;
    t->in_open = true;
    uv_read_start((uv_stream_t *)&t->out, alloc_out, on_out_read);
    uv_read_start((uv_stream_t *)&t->err, alloc_err, on_err_read);
    *out = &t->base;
    return 0;
}
