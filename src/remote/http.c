/* SPDX-License-Identifier: MIT */
/*
 * http.c - the Streamable HTTP transport of the MCP client (transport.h,
 * http_transport.h): the transport object, its transfers and their life.
 *
 * Every message the session sends becomes a transfer: one POST, queued,
 * started in order while fewer than max_transfers run. Its response is read
 * by http_read.c (one JSON body, or an SSE stream of messages, each handed
 * to the session as it arrives); when it ends, this file decides what
 * follows from the status and what was read: nothing more, the request's
 * failure (request_failed), a resumption of its stream after the server's
 * retry time (a GET with Last-Event-ID, 2025 versions only), or the end of
 * the whole transport (404 on a request that bore the session's id).
 *
 * Nothing here calls libcurl's multi from inside a curl callback, nor the
 * session from inside a call the session made: send, drop and close only
 * record what to do and wake the `wake` timer, whose callback (run) starts,
 * ends and frees transfers. The same timer wakes waiting resumptions. After
 * close, or once the session ended, no callback but `closed` is made.
 */
#include "http_int.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#define MIN_RETRY_MS 10
/* How long a request's stream may stay open after its response before it
 * is ended here (the server should have ended it): long enough for the
 * end of the body to follow, so the connection is reused. */
#define LINGER_MS 1000

static const tg__rtransport_vt rhttp_vt;

/* ------------------------------------------------------------ strings */

static char *dup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

/* ---------------------------------------------------------- transfers */

static void wake_soon(rhttp *h)
{
    h->kicked = 1;
    if (!h->wake_closed)
        uv_timer_start(&h->wake, tg__rhttp_run_cb, 0, 0);
}

static void xfer_unlink(rhttp *h, xfer *x)
{
    if (x->prev != NULL)
        x->prev->next = x->next;
    else
        h->head = x->next;
    if (x->next != NULL)
        x->next->prev = x->prev;
    else
        h->tail = x->prev;
    x->prev = x->next = NULL;
}

static void xfer_link(rhttp *h, xfer *x)
{
    x->prev = h->tail;
    if (h->tail != NULL)
        h->tail->next = x;
    else
        h->head = x;
    h->tail = x;
}

static xfer *xfer_new(rhttp *h, xfer_kind kind)
{
    xfer *x = calloc(1, sizeof *x);
    if (x == NULL)
        return NULL;
    x->h = h;
    x->kind = kind;
    x->state = X_PENDING;
    x->retry_ms = -1;
    tg__buf_init(&x->in, 0);
    xfer_link(h, x);
    return x;
}

/* Ends x's transfer (when it runs) and its response's reading. */
static void xfer_stop(xfer *x)
{
    rhttp *h = x->h;
    if (x->state == X_ACTIVE) {
        tg__curl_uv_remove(&h->cu, x->easy);
        if (x->counted)
            h->active--;
        x->counted = 0;
    }
    if (x->easy != NULL)
        curl_easy_cleanup(x->easy);
    x->easy = NULL;
    curl_slist_free_all(x->hdrs);
    x->hdrs = NULL;
    tg__rhttp_read_reset(x);
    x->state = X_PENDING;
}

static void xfer_free(xfer *x)
{
    rhttp *h = x->h;
    xfer_stop(x);
    xfer_unlink(h, x);
    if (h->listen == x)
        h->listen = NULL;
    tg__buf_cleanup(&x->in);
    free(x->body);
    free(x->id);
    free(x->method);
    free(x->name);
    free(x->version);
    free(x->last_id);
    free(x);
}

/* The session hears that x's request will get no response; x is freed. */
static void xfer_fail(xfer *x, const tg_error *err)
{
    rhttp *h = x->h;
    if (x->id != NULL && !h->closing && h->cbs.request_failed != NULL)
        h->cbs.request_failed(h->ud, x->id, err);
    xfer_free(x);
}

static void xfer_fail_msg(xfer *x, int code, const char *what)
{
    tg_error e;
    tg__error_set(&e, code, "%s", what);
    xfer_fail(x, &e);
}

/* Starts x's next transfer: its POST, its stream's resumption, the GET
 * stream, or the DELETE. 0 or a TG_E* code (err filled). */
static int xfer_start(rhttp *h, xfer *x, tg_error *err)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    CURL *e = x->easy = curl_easy_init();
    int rc = e != NULL ? tg__rhttp_build_headers(h, x, &b) : TG_ENOMEM;
    tg__buf_cleanup(&b);
    if (rc != 0)
        return tg__error_set(err, rc, "cannot prepare an HTTP request");
    curl_easy_setopt(e, CURLOPT_URL, h->url);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)h->o.connect_ms);
    /* The server's GET stream may rightly be silent for hours. */
    if (h->o.idle_ms > 0 && x->kind != X_LISTEN) {
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
                         (long)((h->o.idle_ms + 999) / 1000));
    }
    tg__rhttp_read_setup(x, e);
    if (x->kind == X_POST && !x->resuming) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, x->body);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                         (curl_off_t)x->body_len);
    } else if (x->kind == X_DELETE) {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)h->o.close_ms);
    } else
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    rc = tg__curl_uv_add(&h->cu, e, err);
    if (rc != 0)
        return rc;
    x->state = X_ACTIVE;
    if (x->resuming)
        h->resumed++;
    x->counted = x->kind == X_POST;
    if (x->counted)
        h->active++;
    return 0;
}

/* x waits for its next transfer: after the server's retry time (at least
 * MIN_RETRY_MS), else the configured one. */
static void xfer_wait(rhttp *h, xfer *x)
{
    xfer_stop(x);
    uint64_t wait = x->retry_ms >= 0 ? (uint64_t)x->retry_ms : h->o.retry_ms;
    if (wait < MIN_RETRY_MS)
        wait = MIN_RETRY_MS;
    x->state = X_WAITING;
    x->due = uv_now(h->loop) + wait;
    wake_soon(h);
}

/* x's stream ended before its response: resume it, or fail. `why` says
 * how it ended. */
static void resume_or_fail(rhttp *h, xfer *x, const char *why)
{
    char msg[400];
    if (x->id == NULL) {
        xfer_free(x);
        return;
    }
    if (tg__rhttp_modern(h, x) || x->last_id == NULL) {
        snprintf(msg, sizeof msg,
                 "the server's response stream ended before the response "
                 "(%s)%s",
                 why,
                 tg__rhttp_modern(h, x)
                     ? "; streams of " TG__RHTTP_V2026 " cannot be resumed"
                     : "; it gave no event id to resume from");
        xfer_fail_msg(x, TG_EIO, msg);
        return;
    }
    if (x->failures >= h->o.max_resumes) {
        snprintf(msg, sizeof msg,
                 "the server's response stream ended before the response "
                 "and %u resumptions in a row failed (%s)",
                 x->failures, why);
        xfer_fail_msg(x, TG_EIO, msg);
        return;
    }
    x->resuming = 1;
    xfer_wait(h, x);
}

/* The transport ends for good: every transfer goes, `closed` follows with
 * err (borrowed) once every handle is closed. */
static void shut(rhttp *h, const tg_error *err)
{
    if (h->closing)
        return;
    h->closing = 1;
    if (err != NULL)
        h->close_err = *err;
    wake_soon(h);
}

/* Takes the session id of a POST's successful response. */
static void take_session_id(rhttp *h, xfer *x)
{
    if (x->kind != X_POST || x->resuming || x->sid[0] == '\0' ||
        tg__rhttp_modern(h, x))
        return;
    if (h->session_id != NULL && strcmp(h->session_id, x->sid) == 0)
        return;
    char *copy = strdup(x->sid);
    if (copy == NULL)
        return;
    free(h->session_id);
    h->session_id = copy;
}

void tg__rhttp_answered(xfer *x)
{
    rhttp *h = x->h;
    if (!x->counted)
        return;
    x->counted = 0;
    h->active--;
    x->answered_at = uv_now(h->loop);
    wake_soon(h);
}

void tg__rhttp_headers_done(xfer *x, long status)
{
    if (status >= 200 && status < 300)
        take_session_id(x->h, x);
}

/* Opens the server's GET stream (2025 versions), once the session is
 * established: after its notifications/initialized was accepted. */
static void open_listen(rhttp *h, const xfer *init)
{
    if (h->listen != NULL || h->listen_done || tg__rhttp_modern(h, init))
        return;
    xfer *l = xfer_new(h, X_LISTEN);
    if (l == NULL)
        return; /* the stream is optional */
    l->version = dup_or_null(tg__rhttp_version(h, init));
    h->listen = l;
    wake_soon(h);
}

/* Whether an HTTP status is worth another try of the same GET. */
static int status_transient(long status)
{
    return status == 408 || status == 429 || status >= 500;
}

static void listen_done(rhttp *h, xfer *x, long status, CURLcode result)
{
    (void)result;
    if (x->fail.code != 0) { /* an event over the limit: not again */
        h->listen_done = 1;
        xfer_free(x);
        return;
    }
    if (x->opened) {
        x->failures = 0;
        xfer_wait(h, x); /* the server ended it: come back after retry */
        return;
    }
    if (status == 405 || (status >= 400 && !status_transient(status)) ||
        ++x->failures >= h->o.max_resumes) {
        h->listen_done = 1; /* no stream from this server; fine */
        xfer_free(x);
        return;
    }
    xfer_wait(h, x);
}

/* A transfer of x got no usable answer (why: msg): a resumption counts
 * against the bound and is tried again, a POST fails its request. */
static void attempt_failed(rhttp *h, xfer *x, const char *msg)
{
    if (x->resuming) {
        x->failures++;
        resume_or_fail(h, x, msg);
    } else
        xfer_fail_msg(x, TG_EIO, msg);
}

/* A transfer of a request (its POST or a resumption) ended. */
static void request_done(rhttp *h, xfer *x, long status, CURLcode result)
{
    char msg[400], shown[240];
    if (x->fail.code != 0) { /* the reader gave up: limit, bad body */
        tg_error e = x->fail;
        xfer_fail(x, &e);
        return;
    }
    if (status == 0) { /* no HTTP response at all */
        snprintf(msg, sizeof msg, "%s: %s",
                 x->resuming ? "resuming the response stream failed"
                             : "the HTTP request failed",
                 curl_easy_strerror(result));
        attempt_failed(h, x, msg);
        return;
    }
    if (status < 200 || status >= 300) {
        if (x->resuming && status_transient(status)) {
            x->failures++;
            snprintf(msg, sizeof msg, "HTTP %ld", status);
            resume_or_fail(h, x, msg);
            return;
        }
        if (status == 401 || status == 403) {
            snprintf(msg, sizeof msg,
                     "the server refused the request (HTTP %ld): %s", status,
                     h->auth != NULL ? "the bearer token was not accepted"
                                     : "it needs credentials");
            xfer_fail_msg(x, TG_EPERM, msg);
            return;
        }
        if (x->mode == TG__RHTTP_ERROR_JSON && result == CURLE_OK &&
            x->in.len > 0 && tg__rhttp_answers(x, x->in.data, x->in.len)) {
            /* The server answered the request, with an error: the session
             * reads it like any response. */
            tg__rhttp_deliver(x, x->in.data, x->in.len);
            xfer_free(x);
            return;
        }
        tg__text_show(tg__buf_cstr(&x->in), shown, sizeof shown);
        snprintf(msg, sizeof msg, "the server answered HTTP %ld%s%s", status,
                 x->in.len > 0 ? ": " : "", x->in.len > 0 ? shown : "");
        xfer_fail_msg(x, TG_EIO, msg);
        return;
    }
    if (x->mode == TG__RHTTP_SSE) {
        if (x->got_response) {
            xfer_free(x);
            return;
        }
        if (x->resuming && x->opened)
            x->failures = 0;
        snprintf(msg, sizeof msg, "%s",
                 result == CURLE_OK ? "the server closed it"
                                    : curl_easy_strerror(result));
        resume_or_fail(h, x, msg);
        return;
    }
    if (result != CURLE_OK) { /* a JSON body cut short */
        snprintf(msg, sizeof msg, "the response body was cut: %s",
                 curl_easy_strerror(result));
        attempt_failed(h, x, msg);
        return;
    }
    if (x->in.len > 0)
        tg__rhttp_deliver(x, x->in.data, x->in.len);
    if (h->closing) {
        xfer_free(x);
        return;
    }
    if (x->method != NULL && x->id == NULL &&
        strcmp(x->method, "notifications/initialized") == 0)
        open_listen(h, x);
    if (x->id != NULL && !x->got_response) {
        snprintf(msg, sizeof msg,
                 "the server answered HTTP %ld without a response to the "
                 "request",
                 status);
        attempt_failed(h, x, msg);
        return;
    }
    xfer_free(x);
}

/* curl_uv's `done`: one transfer ended. */
static void on_done(void *ud, CURL *easy, CURLcode result)
{
    rhttp *h = ud;
    xfer *x = NULL;
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    tg__curl_uv_remove(&h->cu, easy);
    x->state = X_DONE;
    if (x->counted)
        h->active--;
    x->counted = 0;
    wake_soon(h); /* a slot is free: start what waits */
    if (x->mode == 0)
        tg__rhttp_headers_done(x, status);
    if (x->dropped || h->closing) {
        xfer_free(x);
        return;
    }
    if (status == 404 && x->sent_session) {
        tg_error e;
        tg__error_set(&e, TG_EIO,
                      "the server ended the MCP session (HTTP 404 for its "
                      "session id)");
        xfer_free(x);
        shut(h, &e);
        return;
    }
    if (x->kind == X_DELETE)
        xfer_free(x);
    else if (x->kind == X_LISTEN)
        listen_done(h, x, status, result);
    else
        request_done(h, x, status, result);
}

/* ------------------------------------------------------------- closing */

static void finish(rhttp *h)
{
    if (--h->open > 0)
        return;
    tg_error e = h->close_err;
    tg__rtransport_cbs cbs = h->cbs;
    void *ud = h->ud;
    tg__rhttp_free(h);
    if (cbs.closed != NULL)
        cbs.closed(ud, &e);
}

static void cu_closed(void *ud)
{
    finish(ud);
}

static void wake_closed(uv_handle_t *hd)
{
    finish(hd->data);
}

/* One step of closing: transfers go (the DELETE of the session first, when
 * there is one to end), then the handles. */
static void close_step(rhttp *h)
{
    for (xfer *x = h->head, *next; x != NULL; x = next) {
        next = x->next;
        if (x->kind != X_DELETE)
            xfer_free(x);
    }
    if (!h->delete_sent && h->session_id != NULL && h->close_err.code == 0) {
        h->delete_sent = 1;
        xfer *d = xfer_new(h, X_DELETE);
        tg_error e;
        if (d != NULL && xfer_start(h, d, &e) == 0)
            return; /* on_done wakes us */
        if (d != NULL)
            xfer_free(d);
    }
    if (h->head != NULL || h->handles_closing)
        return;
    h->handles_closing = 1;
    h->open = 2;
    uv_timer_stop(&h->wake);
    h->wake_closed = 1;
    uv_close((uv_handle_t *)&h->wake, wake_closed);
    tg__curl_uv_close(&h->cu, cu_closed);
}

/* -------------------------------------------------------------- the run */

void tg__rhttp_run_cb(uv_timer_t *t)
{
    rhttp *h = t->data;
    if (h->closing) {
        close_step(h);
        return;
    }
    uint64_t now = uv_now(h->loop), next_due = UINT64_MAX;
    h->kicked = 0;
    for (xfer *x = h->head, *next; x != NULL && !h->closing; x = next) {
        next = x->next;
        if (x->dropped) {
            xfer_free(x);
            continue;
        }
        if (x->state == X_ACTIVE && x->got_response) {
            /* Answered, but the server keeps the stream open. */
            uint64_t due = x->answered_at + LINGER_MS;
            if (due <= now)
                xfer_free(x);
            else if (due < next_due)
                next_due = due;
            continue;
        }
        if (x->state == X_WAITING) {
            if (x->due > now) {
                if (x->due < next_due)
                    next_due = x->due;
                continue;
            }
            x->state = X_PENDING;
        }
        if (x->state != X_PENDING ||
            (x->kind == X_POST && h->active >= h->o.max_transfers))
            continue;
        tg_error e;
        if (xfer_start(h, x, &e) != 0) {
            if (x->kind == X_LISTEN)
                h->listen_done = 1;
            xfer_fail(x, &e); /* next is still linked: fail only marks */
        }
    }
    /* A wake asked for meanwhile (a send from a failure's callback) wins
     * over the next due time. */
    if (h->closing || h->kicked)
        wake_soon(h);
    else if (next_due != UINT64_MAX)
        uv_timer_start(&h->wake, tg__rhttp_run_cb, next_due - now, 0);
}

/* ---------------------------------------------------------- operations */

static int rhttp_send(tg__rtransport *t, const char *json, size_t len,
                      const tg__rsend *m, tg_error *err)
{
    static const tg__rsend none = {NULL, NULL, NULL, NULL};
    rhttp *h = (rhttp *)t;
    if (m == NULL)
        m = &none; /* a message with nothing to say about it */
    if (h->closing)
        return tg__error_set(err, TG_EIO, "the HTTP transport is closed");
    if (len > h->o.max_message)
        return tg__error_set(err, TG_ELIMIT,
                             "a message of %zu bytes passes the limit of %zu",
                             len, h->o.max_message);
    if (m->protocol_version != NULL &&
        !tg__rhttp_visible(m->protocol_version, 64))
        return tg__error_set(err, TG_EINVAL,
                             "the protocol version is not a header value");
    xfer *x = xfer_new(h, X_POST);
    if (x == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    x->body = malloc(len + 1);
    x->id = dup_or_null(m->id);
    x->method = dup_or_null(m->method);
    x->name = dup_or_null(m->name);
    x->version = dup_or_null(m->protocol_version);
    if (x->body == NULL || (m->id && !x->id) || (m->method && !x->method) ||
        (m->name && !x->name) || (m->protocol_version && !x->version)) {
        xfer_free(x);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    memcpy(x->body, json, len);
    x->body[len] = '\0';
    x->body_len = len;
    if (x->version != NULL &&
        (h->version == NULL || strcmp(h->version, x->version) != 0)) {
        char *v = strdup(x->version);
        if (v != NULL) {
            free(h->version);
            h->version = v;
        }
    }
    wake_soon(h);
    return 0;
}

static void rhttp_drop(tg__rtransport *t, const char *id)
{
    rhttp *h = (rhttp *)t;
    for (xfer *x = h->head; x != NULL; x = x->next)
        if (x->id != NULL && strcmp(x->id, id) == 0 && !x->dropped) {
            x->dropped = 1;
            wake_soon(h);
        }
}

static void rhttp_close(tg__rtransport *t)
{
    rhttp *h = (rhttp *)t;
    if (h->closing)
        return; /* ending already: `closed` comes once */
    tg_error none;
    tg__error_clear(&none);
    shut(h, &none);
}

static const tg__rtransport_vt rhttp_vt = {rhttp_send, rhttp_drop, rhttp_close};

/* --------------------------------------------------------------- making */

void tg__rhttp_free(rhttp *h)
{
    if (h == NULL)
        return;
    for (size_t i = 0; i < h->n_headers; i++)
        free(h->headers[i]);
    free(h->headers);
    if (h->auth != NULL) {
        OPENSSL_cleanse(h->auth, strlen(h->auth));
        free(h->auth);
    }
    free(h->url);
    free(h->session_id);
    free(h->version);
    free(h);
    curl_global_cleanup();
}

int tg__rhttp_new(uv_loop_t *loop, const tg__rhttp_opts *o,
                  const tg__rtransport_cbs *cbs, void *ud, tg__rtransport **out,
                  tg_error *err)
{
    *out = NULL;
    int rc = tg__rhttp_check_opts(o, err);
    if (rc != 0)
        return rc;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return tg__error_set(err, TG_EIO, "libcurl cannot start");
    rhttp *h = calloc(1, sizeof *h);
    if (h == NULL) {
        curl_global_cleanup();
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    h->base.vt = &rhttp_vt;
    h->base.cbs = *cbs;
    h->base.ud = ud;
    h->cbs = *cbs;
    h->ud = ud;
    h->loop = loop;
    h->o = *o;
    tg__rhttp_defaults(&h->o);
    rc = tg__rhttp_copy_opts(h, o, err);
    /* The multi handle first: it is what may fail (out of memory), and
     * then no uv handle is open yet. */
    if (rc == 0)
        rc = tg__curl_uv_init(&h->cu, loop, on_done, h, err);
    if (rc != 0) {
        tg__rhttp_free(h);
        return rc;
    }
    /* libuv's uv_timer_init cannot fail: it only fills the handle. */
    uv_timer_init(loop, &h->wake);
    h->wake.data = h;
    *out = &h->base;
    return 0;
}
