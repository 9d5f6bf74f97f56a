/* SPDX-License-Identifier: MIT */
/*
 * rsource.c - the connection of one MCP server behind toolgate (rsource.h):
 * a session over a fresh transport at each start, the tool list after each
 * negotiation and list change, the waiters released when the tools are in,
 * and a restart after a crash held back by a doubling backoff.
 */
#include "rsource.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stdio_transport.h"
#include "timeutil.h"

#define BACKOFF_FIRST_MS 250u
#define BACKOFF_MAX_MS 30000u

struct tg__rsource {
    uv_loop_t *loop;
    char *name;
    char **argv, **envp; /* owned copies, NULL-terminated; argv NULL: http */
    char *cwd;
    tg__rhttp_opts http; /* its strings owned (url, headers, token) */
    char **headers;
    tg__rroot *roots;
    size_t nroots;
    unsigned connect_ms;
    size_t max_tools, max_message;
    tg__rsource_cbs cbs;
    void *ud;

    tg__rsource_state state;
    tg__rsession *s;   /* the live session, NULL between them */
    bool session_open; /* s's `closed` has not come yet */
    bool listing;      /* a tools/list runs */
    bool relist;       /* a list change came while one ran */
    tg_error err;
    unsigned failures, starts;
    uint64_t retry_at_ns;
    uv_timer_t retry;
    bool retry_open; /* the timer handle is initialised and not closed */
    char *protocol;
    char *server_info;
    char last_err[200]; /* the server's last stderr line, for why it ended */
    tg__rsource_waiter *waiters;
};

/* ------------------------------------------------------------ copies */

static void free_strv(char **v)
{
    for (size_t i = 0; v != NULL && v[i] != NULL; i++)
        free(v[i]);
    free(v);
}

/* A deep copy of a NULL-terminated array; *out NULL for NULL. */
static int copy_strv(const char *const *v, char ***out)
{
    *out = NULL;
    if (v == NULL)
        return 0;
    size_t n = 0;
    while (v[n] != NULL)
        n++;
    char **c = calloc(n + 1, sizeof *c);
    if (c == NULL)
        return TG_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if ((c[i] = strdup(v[i])) == NULL) {
            free_strv(c);
            return TG_ENOMEM;
        }
    *out = c;
    return 0;
}

static int copy_str(const char *s, char **out)
{
    *out = NULL;
    return s == NULL || (*out = strdup(s)) != NULL ? 0 : TG_ENOMEM;
}

void tg__rsource_free(tg__rsource *rs)
{
    if (rs == NULL)
        return;
    free(rs->name);
    free_strv(rs->argv);
    free_strv(rs->envp);
    free(rs->cwd);
    free((char *)rs->http.url);
    free((char *)rs->http.bearer_token);
    if (rs->headers != NULL)
        for (size_t i = 0; i < rs->http.n_headers; i++)
            free(rs->headers[i]);
    free(rs->headers);
    for (size_t i = 0; i < rs->nroots; i++) {
        free((char *)rs->roots[i].uri);
        free((char *)rs->roots[i].name);
    }
    free(rs->roots);
    free(rs->protocol);
    free(rs->server_info);
    free(rs);
}

static int copy_http(tg__rsource *rs, const tg__rhttp_opts *h)
{
    rs->http = *h;
    rs->http.url = NULL;
    rs->http.bearer_token = NULL;
    rs->http.headers = NULL;
    size_t nh = h->n_headers;
    rs->http.n_headers = 0;
    if (copy_str(h->url, (char **)&rs->http.url) ||
        copy_str(h->bearer_token, (char **)&rs->http.bearer_token))
        return TG_ENOMEM;
    if (nh > 0) {
        if ((rs->headers = calloc(nh, sizeof *rs->headers)) == NULL)
            return TG_ENOMEM;
        for (size_t i = 0; i < nh; i++, rs->http.n_headers++)
            if ((rs->headers[i] = strdup(h->headers[i])) == NULL)
                return TG_ENOMEM;
        rs->http.headers = (const char *const *)rs->headers;
    }
    return 0;
}

int tg__rsource_new(const tg__rsource_opts *o, const tg__rsource_cbs *cbs,
                    void *ud, tg__rsource **out, tg_error *err)
{
    *out = NULL;
    if ((o->argv == NULL || o->argv[0] == NULL) &&
        (o->http == NULL || o->http->url == NULL))
        return tg__error_set(err, TG_EINVAL,
                             "MCP source '%s' has neither a command nor a URL",
                             o->name ? o->name : "");
    tg__rsource *rs = calloc(1, sizeof *rs);
    if (rs == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    rs->loop = o->loop;
    rs->cbs = *cbs;
    rs->ud = ud;
    rs->connect_ms = o->connect_ms;
    rs->max_tools = o->max_tools;
    rs->max_message = o->max_message;
    int rc = copy_str(o->name ? o->name : "", &rs->name);
    if (rc == 0 && o->argv != NULL && o->argv[0] != NULL)
        rc = copy_strv(o->argv, &rs->argv) || copy_strv(o->envp, &rs->envp) ||
                     copy_str(o->cwd, &rs->cwd)
                 ? TG_ENOMEM
                 : 0;
    else if (rc == 0)
        rc = copy_http(rs, o->http);
    if (rc == 0 && o->nroots > 0) {
        if ((rs->roots = calloc(o->nroots, sizeof *rs->roots)) == NULL)
            rc = TG_ENOMEM;
        for (size_t i = 0; rc == 0 && i < o->nroots; i++, rs->nroots++)
            if (copy_str(o->roots[i].uri, (char **)&rs->roots[i].uri) ||
                copy_str(o->roots[i].name, (char **)&rs->roots[i].name))
                rc = TG_ENOMEM;
    }
    if (rc != 0) {
        tg__rsource_free(rs);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    *out = rs;
    return 0;
}

/* ------------------------------------------------------------ state */

tg__rsource_state tg__rsource_state_of(const tg__rsource *rs)
{
    return rs->state;
}

const char *tg__rsource_state_name(tg__rsource_state st)
{
    switch (st) {
    case TG__RS_IDLE:
        return "idle";
    case TG__RS_STARTING:
        return "starting";
    case TG__RS_READY:
        return "ready";
    case TG__RS_FAILED:
        return "failed";
    case TG__RS_CLOSED:
    default:
        return "closed";
    }
}

const tg_error *tg__rsource_error(const tg__rsource *rs)
{
    return &rs->err;
}

tg__rsession *tg__rsource_session(const tg__rsource *rs)
{
    return rs->state == TG__RS_READY ? rs->s : NULL;
}

const char *tg__rsource_protocol(const tg__rsource *rs)
{
    return rs->protocol;
}

const char *tg__rsource_server_info(const tg__rsource *rs)
{
    return rs->server_info ? rs->server_info : "{}";
}

const char *tg__rsource_transport(const tg__rsource *rs)
{
    return rs->argv != NULL ? "stdio" : "http";
}

bool tg__rsource_listing(const tg__rsource *rs)
{
    return rs->listing;
}

unsigned tg__rsource_starts(const tg__rsource *rs)
{
    return rs->starts;
}

bool tg__rsource_closed(const tg__rsource *rs)
{
    return !rs->session_open && !rs->retry_open;
}

/* Calls every waiter with ok (each unlinked first: a waiter may wait
 * again from its callback). */
static void release_waiters(tg__rsource *rs, bool ok)
{
    tg__rsource_waiter *w = rs->waiters;
    rs->waiters = NULL;
    while (w != NULL) {
        tg__rsource_waiter *next = w->next;
        w->linked = false;
        w->prev = w->next = NULL;
        w->cb(w, ok);
        w = next;
    }
}

static void set_state(tg__rsource *rs, tg__rsource_state st)
{
    rs->state = st;
    if (rs->cbs.state != NULL)
        rs->cbs.state(rs->ud);
    if (st == TG__RS_READY)
        release_waiters(rs, true);
    else if (st == TG__RS_FAILED || st == TG__RS_CLOSED)
        release_waiters(rs, false);
}

/* The source failed with e: the session (if any) is closed and the next
 * start waits for the backoff. */
static void fail(tg__rsource *rs, const tg_error *e)
{
    if (rs->state == TG__RS_CLOSED || rs->state == TG__RS_FAILED)
        return;
    rs->err = *e;
    if (rs->err.code == 0)
        rs->err.code = TG_EIO;
    if (rs->last_err[0] != '\0') {
        /* what the server said last is usually why it ended */
        size_t n = strlen(rs->err.message);
        snprintf(rs->err.message + n, sizeof rs->err.message - n,
                 " (its last stderr line: %s)", rs->last_err);
        rs->last_err[0] = '\0';
    }
    unsigned ms = BACKOFF_FIRST_MS;
    for (unsigned i = 0; i < rs->failures && ms < BACKOFF_MAX_MS; i++)
        ms *= 2;
    if (ms > BACKOFF_MAX_MS)
        ms = BACKOFF_MAX_MS;
    rs->failures++;
    rs->retry_at_ns = tg__mono_ns() + (uint64_t)ms * 1000000u;
    if (rs->s != NULL && rs->session_open)
        tg__rsession_close(rs->s);
    set_state(rs, TG__RS_FAILED);
}

/* ------------------------------------------------------------ session */

static void start_list(tg__rsource *rs);

static void on_list(void *ud, tg__rtool_list *list, const tg_error *err)
{
    tg__rsource *rs = ud;
    rs->listing = false;
    if (rs->state == TG__RS_CLOSED || rs->state == TG__RS_FAILED) {
        tg__rtool_list_free(list);
        return;
    }
    if (list == NULL) {
        tg_error e = *err;
        fail(rs, &e);
        return;
    }
    if (rs->cbs.listed != NULL)
        rs->cbs.listed(rs->ud, list);
    else
        tg__rtool_list_free(list);
    if (rs->relist) {
        rs->relist = false;
        start_list(rs);
        return;
    }
    if (rs->state == TG__RS_STARTING) {
        rs->failures = 0;
        set_state(rs, TG__RS_READY);
    }
}

static void start_list(tg__rsource *rs)
{
    tg_error e = {0};
    if (rs->listing) {
        rs->relist = true;
        return;
    }
    rs->listing = true;
    if (tg__rsession_list_tools(rs->s, on_list, rs, &e) != 0) {
        rs->listing = false;
        fail(rs, &e);
    }
}

static void on_ready(void *ud, const tg_error *err)
{
    tg__rsource *rs = ud;
    if (err != NULL) {
        tg_error e = *err;
        fail(rs, &e);
        return;
    }
    free(rs->protocol);
    free(rs->server_info);
    const char *v = tg__mcp_version_name(tg__rsession_version(rs->s));
    rs->protocol = v ? strdup(v) : NULL;
    rs->server_info = strdup(tg__rsession_server_info(rs->s));
    start_list(rs);
}

static void on_closed(void *ud, const tg_error *err)
{
    tg__rsource *rs = ud;
    rs->session_open = false;
    rs->s = NULL;
    rs->listing = rs->relist = false;
    if (rs->state == TG__RS_STARTING || rs->state == TG__RS_READY) {
        tg_error e = {0};
        if (err != NULL && err->code != 0)
            e = *err;
        else
            tg__error_set(&e, TG_EIO, "the MCP server '%s' went away",
                          rs->name);
        fail(rs, &e);
    }
}

static void on_log(void *ud, tg__rlog_source src, const char *level,
                   const char *text, size_t len)
{
    (void)level;
    tg__rsource *rs = ud;
    if (src == TG_RLOG_STDERR && len > 0) {
        size_t n = len < sizeof rs->last_err ? len : sizeof rs->last_err - 1;
        for (size_t i = 0; i < n; i++) /* printable ASCII only */
            rs->last_err[i] = text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?';
        rs->last_err[n] = '\0';
    }
    if (rs->cbs.log != NULL)
        rs->cbs.log(rs->ud, text, len);
}

static void on_tools_changed(void *ud)
{
    tg__rsource *rs = ud;
    if (rs->state == TG__RS_READY || rs->state == TG__RS_STARTING)
        start_list(rs);
}

/* An elicitation goes to the owner with the call it is about; one that
 * no call is known for is declined, with a log line saying so. */
static int on_elicit(void *ud, uint64_t ticket, uint64_t call,
                     const char *params, size_t len)
{
    tg__rsource *rs = ud;
    if (call == 0) {
        static const char why[] =
            "declined an elicitation/create that belongs to no call toolgate "
            "knows (not on a call's HTTP stream, no related request in its "
            "_meta, and not exactly one call in flight)";
        on_log(rs, TG_RLOG_SESSION, "warning", why, sizeof why - 1);
        return -1;
    }
    if (rs->cbs.elicit == NULL || rs->s == NULL)
        return -1;
    return rs->cbs.elicit(rs->ud, rs->s, ticket, call, params, len);
}

static const tg__rsession_cbs session_cbs = {
    .ready = on_ready,
    .closed = on_closed,
    .log = on_log,
    .tools_changed = on_tools_changed,
    .elicit = on_elicit,
};

/* Makes a session and its transport and starts the negotiation. */
static void start_now(tg__rsource *rs)
{
    tg_error e = {0};
    tg__rsession_opts so = {
        .loop = rs->loop,
        .roots = rs->roots,
        .nroots = rs->nroots,
        .connect_ms = rs->connect_ms,
        .max_tools = rs->max_tools,
    };
    tg__rsession *s = NULL;
    tg__rtransport *t = NULL;
    rs->starts++;
    rs->state = TG__RS_STARTING;
    if (tg__rsession_new(&so, &session_cbs, rs, &s, &e) != 0)
        goto fail;
    int rc;
    if (rs->argv != NULL) {
        tg__rstdio_opts o = {
            .loop = rs->loop,
            .argv = (const char *const *)rs->argv,
            .envp = (const char *const *)rs->envp,
            .cwd = rs->cwd,
            .max_message = rs->max_message,
        };
        rc = tg__rstdio_new(&o, tg__rsession_transport_cbs(), s, &t, &e);
    } else {
        rc = tg__rhttp_new(rs->loop, &rs->http, tg__rsession_transport_cbs(), s,
                           &t, &e);
    }
    if (rc != 0) {
        tg__rsession_free(s);
        goto fail;
    }
    rs->s = s;
    rs->session_open = true;
    /* a failure here still ends through `closed` (session.h) */
    (void)tg__rsession_start(s, t, &e);
    if (rs->cbs.state != NULL)
        rs->cbs.state(rs->ud);
    return;
fail:
    rs->state = TG__RS_STARTING; /* so that fail() records it */
    fail(rs, &e);
}

static void on_retry(uv_timer_t *h)
{
    tg__rsource *rs = h->data;
    if (rs->state == TG__RS_FAILED)
        start_now(rs);
}

void tg__rsource_start(tg__rsource *rs)
{
    if (rs->state == TG__RS_IDLE) {
        start_now(rs);
        return;
    }
    if (rs->state != TG__RS_FAILED || rs->session_open)
        return; /* a failed session still closing: wait for it */
    uint64_t now = tg__mono_ns();
    if (now >= rs->retry_at_ns) {
        start_now(rs);
        return;
    }
    if (!rs->retry_open) {
        uv_timer_init(rs->loop, &rs->retry);
        rs->retry.data = rs;
        rs->retry_open = true;
    }
    if (!uv_is_active((uv_handle_t *)&rs->retry))
        uv_timer_start(&rs->retry, on_retry,
                       (rs->retry_at_ns - now) / 1000000u + 1, 0);
}

static void on_retry_closed(uv_handle_t *h)
{
    tg__rsource *rs = h->data;
    rs->retry_open = false;
}

void tg__rsource_close(tg__rsource *rs)
{
    if (rs->state == TG__RS_CLOSED)
        return;
    set_state(rs, TG__RS_CLOSED);
    if (rs->s != NULL && rs->session_open)
        tg__rsession_close(rs->s);
    if (rs->retry_open && !uv_is_closing((uv_handle_t *)&rs->retry))
        uv_close((uv_handle_t *)&rs->retry, on_retry_closed);
}

/* ------------------------------------------------------------ waiters */

void tg__rsource_wait(tg__rsource *rs, tg__rsource_waiter *w)
{
    w->prev = NULL;
    w->next = rs->waiters;
    if (rs->waiters != NULL)
        rs->waiters->prev = w;
    rs->waiters = w;
    w->linked = true;
    tg__rsource_start(rs);
}

void tg__rsource_unwait(tg__rsource *rs, tg__rsource_waiter *w)
{
    if (!w->linked)
        return;
    if (w->prev != NULL)
        w->prev->next = w->next;
    else
        rs->waiters = w->next;
    if (w->next != NULL)
        w->next->prev = w->prev;
    w->prev = w->next = NULL;
    w->linked = false;
}
