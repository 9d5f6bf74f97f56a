/* SPDX-License-Identifier: MIT */
/*
 * embed.c - the server's public API (include/toolgate_serve.h): a tg__srv
 * (serve.h) with its transports, run once, and a stop that any thread or
 * a signal handler may ask for. The stop is a uv_async_t on the server's
 * loop, open (but not keeping the loop alive) from tg_server_new until
 * tg_server_free, so uv_async_send always has a live handle; on the loop
 * it does what SIGTERM did in `toolgate serve`: HTTP stops accepting, the
 * server stops with the grace period.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_transport.h"
#include "serve.h"
#include "stdio_transport.h"
#include "toolgate_serve.h"

#define MAX_SIGNALS 4
#define DEFAULT_GRACE_MS 5000

struct tg_server {
    tg__srv *srv;
    srv_http *http;         /* NULL until tg_server_listen_http */
    srv_http_options ho;    /* HTTP options but the address (strings are
                               borrowed from opts below) */
    tg_server_options opts; /* strings copied: owned */
    char **origins;         /* opts.allow_origins, owned */
    int64_t grace_ms;
    uv_async_t stop;
    uv_signal_t sigs[MAX_SIGNALS];
    int nsigs;
    int sigs_closed;
    int ran;
};

static int fail(tg_error *err, int code, const char *msg)
{
    if (err != NULL) {
        err->code = code;
        snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return code;
}

/* On the loop: the stop asked for by tg_server_stop or a signal. */
static void stop_now(tg_server *s)
{
    if (s->http != NULL)
        srv_http_stop_accepting(s->http);
    srv_stop(s->srv, s->grace_ms);
}

static void on_stop(uv_async_t *h)
{
    stop_now(h->data);
}

static void on_signal(uv_signal_t *h, int signum)
{
    (void)signum;
    stop_now(h->data);
}

static void close_signals(tg_server *s)
{
    if (s->sigs_closed)
        return;
    s->sigs_closed = 1;
    for (int i = 0; i < s->nsigs; i++)
        uv_close((uv_handle_t *)&s->sigs[i], NULL);
}

/* The server answered everything: the transports close their handles so
 * the loop can end, and the signals get their dispositions back. */
static void on_stopped(tg__srv *srv, void *ud)
{
    tg_server *s = ud;
    (void)srv;
    close_signals(s);
    if (s->http != NULL)
        srv_http_close(s->http);
}

static void free_options(tg_server *s)
{
    free((char *)s->opts.caller);
    free((char *)s->opts.trace);
    free((char *)s->opts.http_endpoint);
    if (s->opts.http_token != NULL) {
        /* a secret: not left in freed memory */
        memset((char *)s->opts.http_token, 0, strlen(s->opts.http_token));
        free((char *)s->opts.http_token);
    }
    free((char *)s->opts.http_token_file);
    for (size_t i = 0; s->origins != NULL && i < s->opts.nallow_origins; i++)
        free(s->origins[i]);
    free(s->origins);
}

/* Copies the strings of `o` into s->opts; 0 or -1 (out of memory). */
static int copy_options(tg_server *s, const tg_server_options *o)
{
    s->opts = *o;
    s->opts.caller = s->opts.trace = s->opts.http_endpoint = NULL;
    s->opts.http_token = s->opts.http_token_file = NULL;
    s->opts.allow_origins = NULL;
    s->opts.nallow_origins = 0;
    const char *const src[5] = {o->caller, o->trace, o->http_endpoint,
                                o->http_token, o->http_token_file};
    const char **dst[5] = {&s->opts.caller, &s->opts.trace,
                           &s->opts.http_endpoint, &s->opts.http_token,
                           &s->opts.http_token_file};
    for (int i = 0; i < 5; i++)
        if (src[i] != NULL && (*dst[i] = strdup(src[i])) == NULL)
            return -1;
    if (o->nallow_origins > 0) {
        s->origins = calloc(o->nallow_origins, sizeof *s->origins);
        if (s->origins == NULL)
            return -1;
        for (size_t i = 0; i < o->nallow_origins; i++) {
            if ((s->origins[i] = strdup(o->allow_origins[i])) == NULL)
                return -1;
            s->opts.nallow_origins++;
        }
        s->opts.allow_origins = (const char *const *)s->origins;
    }
    return 0;
}

int tg_server_new(tg_runtime *rt, const tg_server_options *opts,
                  tg_server **out, tg_error *err)
{
    static const tg_server_options none = {0};
    if (out == NULL)
        return fail(err, TG_EINVAL, "no place for the server");
    *out = NULL;
    if (rt == NULL)
        return fail(err, TG_EINVAL, "no runtime to serve");
    if (opts == NULL)
        opts = &none;
    if (opts->nallow_origins > 0 && opts->allow_origins == NULL)
        return fail(err, TG_EINVAL, "allow_origins is NULL");
    if (opts->nallow_origins > 1024)
        return fail(err, TG_EINVAL, "at most 1024 allowed origins");
    for (size_t i = 0; i < opts->nallow_origins; i++)
        if (opts->allow_origins[i] == NULL)
            return fail(err, TG_EINVAL, "an allowed origin is NULL");
    tg_server *s = calloc(1, sizeof *s);
    if (s == NULL || copy_options(s, opts) != 0) {
        if (s != NULL)
            free_options(s);
        free(s);
        return fail(err, TG_ENOMEM, "out of memory");
    }
    s->grace_ms = opts->grace_ms == 0  ? DEFAULT_GRACE_MS
                  : opts->grace_ms < 0 ? 0
                                       : opts->grace_ms;
    int64_t task_after = tg_runtime_serve_task_after_ms(rt);
    srv_options so = {.caller = s->opts.caller,
                      .max_message = s->opts.max_message,
                      .trace = s->opts.trace,
                      .spool_dir = tg_runtime_spool_dir(rt),
                      .journal = tg_runtime_journal(rt),
                      /* 0 configured is "at once", -1 here (0: default) */
                      .task_after_ms = task_after > 0 ? (long)task_after : -1};
    if ((s->srv = srv_new(rt, &so, err)) == NULL) {
        int rc = err != NULL && err->code != 0 ? err->code : TG_EINTERNAL;
        free_options(s);
        free(s);
        return rc;
    }
    if (uv_async_init(srv_loop(s->srv), &s->stop, on_stop) != 0) {
        srv_free(s->srv);
        free_options(s);
        free(s);
        return fail(err, TG_EINTERNAL, "cannot make the server's stop");
    }
    s->stop.data = s;
    uv_unref((uv_handle_t *)&s->stop);
    srv_on_stopped(s->srv, on_stopped, s);
    s->ho = (srv_http_options){
        .endpoint = s->opts.http_endpoint,
        .token = s->opts.http_token,
        .token_file = s->opts.http_token_file,
        .origins = s->opts.allow_origins,
        .norigins = (int)s->opts.nallow_origins,
        .caller = s->opts.caller,
        .quiet = true,
    };
    *out = s;
    return 0;
}

int tg_server_listen_http(tg_server *srv, const char *host, int port,
                          tg_error *err)
{
    if (srv == NULL)
        return fail(err, TG_EINVAL, "no server");
    if (srv->http != NULL || srv->ran)
        return fail(err, TG_EINVAL,
                    srv->ran ? "the server ran already"
                             : "the server listens already");
    srv_http_options o = srv->ho;
    o.host = host;
    o.port = port;
    return srv_http_start(srv->srv, &o, &srv->http, err);
}

int tg_server_port(const tg_server *srv)
{
    return srv != NULL && srv->http != NULL ? srv_http_port(srv->http) : 0;
}

const char *tg_server_url(const tg_server *srv)
{
    return srv != NULL && srv->http != NULL ? srv_http_url(srv->http) : NULL;
}

int tg_server_run(tg_server *srv, tg_error *err)
{
    if (srv == NULL || srv->ran || srv->http == NULL)
        return fail(err, TG_EINVAL,
                    srv == NULL ? "no server"
                    : srv->ran  ? "the server ran already"
                                : "the server does not listen "
                                  "(tg_server_listen_http)");
    srv->ran = 1;
    return srv_run(srv->srv);
}

int tg_server_run_stdio(tg_server *srv, int in_fd, int out_fd, tg_error *err)
{
    if (srv == NULL || srv->ran)
        return fail(err, TG_EINVAL,
                    srv == NULL ? "no server" : "the server ran already");
    srv_stdio *t = srv_stdio_start(srv->srv, in_fd, out_fd, srv->opts.caller,
                                   srv->grace_ms, err);
    if (t == NULL)
        return err != NULL && err->code != 0 ? err->code : TG_ENOMEM;
    srv->ran = 1;
    int rc = srv_run(srv->srv);
    srv_stdio_free(t);
    return rc;
}

void tg_server_stop(tg_server *srv)
{
    if (srv != NULL)
        uv_async_send(&srv->stop);
}

int tg_server_stop_on_signal(tg_server *srv, int signum, tg_error *err)
{
    if (srv == NULL || signum <= 0 || signum >= NSIG || signum == SIGKILL ||
        signum == SIGSTOP) {
        if (err != NULL) {
            err->code = TG_EINVAL;
            snprintf(err->message, sizeof err->message,
                     "cannot catch signal %d", signum);
        }
        return TG_EINVAL;
    }
    if (srv->ran || srv->sigs_closed)
        return fail(err, TG_EINVAL, "the server ran already");
    for (int i = 0; i < srv->nsigs; i++)
        if (srv->sigs[i].signum == signum)
            return 0;
    if (srv->nsigs == MAX_SIGNALS)
        return fail(err, TG_ELIMIT, "at most 4 stop signals");
    uv_signal_t *h = &srv->sigs[srv->nsigs];
    int rc = uv_signal_init(srv_loop(srv->srv), h);
    if (rc == 0 && (rc = uv_signal_start(h, on_signal, signum)) != 0)
        uv_close((uv_handle_t *)h, NULL); /* closed with the loop's run */
    if (rc != 0) {
        if (err != NULL) {
            err->code = TG_EINTERNAL;
            snprintf(err->message, sizeof err->message,
                     "cannot watch signal %d: %s", signum, uv_strerror(rc));
        }
        return TG_EINTERNAL;
    }
    h->data = srv;
    uv_unref((uv_handle_t *)h); /* the server's work keeps the loop alive */
    srv->nsigs++;
    return 0;
}

void tg_server_free(tg_server *srv)
{
    if (srv == NULL)
        return;
    close_signals(srv);
    uv_close((uv_handle_t *)&srv->stop, NULL);
    /* after a run the transport only frees; before one it closes its
     * handles, which srv_free's last turn of the loop completes */
    srv_http_free(srv->http);
    srv_free(srv->srv);
    free_options(srv);
    free(srv);
}
