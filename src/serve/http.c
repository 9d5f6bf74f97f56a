/* SPDX-License-Identifier: MIT */
/*
 * http.c - the Streamable HTTP transport of `toolgate serve` on
 * libmicrohttpd, in one thread: the daemon runs in external-poll mode
 * with epoll, its epoll fd watched by a uv_poll_t on the server's loop,
 * MHD_run on readiness and when MHD_get_timeout says, and at once (a zero
 * timer) after a connection is resumed. Requests that wait - a JSON
 * answer for a tool's response, an SSE stream with nothing to write - are
 * suspended, and their socket is watched meanwhile so a client that
 * leaves is seen at once (MHD does not look at a suspended connection).
 *
 * What a request meets, in order: Host and Origin (403), the path (404),
 * the method (405), the bearer token (401), MCP-Protocol-Version (400),
 * Content-Type (415), Accept (406), the body's size (413); then the
 * session (Mcp-Session-Id: 404 unknown) and srv_handle. Sessions exist for
 * the 2025 versions only: a POST without the header gets a session of its
 * own for the request, kept (and its id minted) only when the body was an
 * initialize that the server answered. Slow clients are cut off by a
 * deadline for a whole request (request_timeout_ms), idle ones by MHD's
 * connection timeout, non-reading ones by the stream's queue bound
 * (http_stream.c). A 2025-11-25 SSE response that still owes its answer
 * after poll_ms is ended cleanly for the client to resume (SSE polling).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_int.h"

#define SWEEP_MS 250     /* deadlines, keep-alives and idle sessions */
#define EXPIRE_BATCH 64  /* sessions ended per sweep at most */
#define READ_BLOCK 16384 /* bytes MHD asks an SSE reader for at most */

/* A JSON-RPC error for transport failures; no id (none was read). */
#define RPC_INVALID_REQUEST -32600
#define RPC_UNSUPPORTED_VERSION -32022

static void run_mhd(srv_http *h);
static void teardown(srv_http *h);

/* Fills err (may be NULL) with code and a message. */
static void fail(tg_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(tg_error *err, int code, const char *fmt, ...)
{
    if (err == NULL)
        return;
    memset(err, 0, sizeof *err);
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------ versions */

static bool version_resumable(const char *v)
{
    return v != NULL &&
           (strcmp(v, "2025-06-18") == 0 || strcmp(v, "2025-11-25") == 0);
}

static bool version_priming(const char *v)
{
    return v != NULL && strcmp(v, "2025-11-25") == 0;
}

/* ------------------------------------------------------------ the loop */

static void on_mhd_timer(uv_timer_t *t)
{
    run_mhd(t->data);
}

static void on_mhd_poll(uv_poll_t *p, int status, int events)
{
    (void)status;
    (void)events;
    run_mhd(p->data);
}

void http_kick(srv_http *h)
{
    h->kicked = true;
    if (!h->torn_down && !h->in_run)
        uv_timer_start(&h->mhd_timer, on_mhd_timer, 0, 0);
}

/* Once quiescing, the server stopping and no response owed: ends the GET
 * streams and closes idle connections; the last one closed takes the
 * daemon down. */
static void drain(srv_http *h)
{
    if (h->torn_down || h->busy > 0 ||
        !(h->closing || (h->quiescing && srv_stopping(h->srv))))
        return;
    for (size_t b = 0; b < h->n_buckets; b++)
        for (http_session *hs = h->buckets[b]; hs != NULL; hs = hs->hnext)
            if (hs->notify != NULL && !hs->notify->finish) {
                hs->notify->finish = true;
                if (hs->notify->reader != NULL)
                    http_req_wake(hs->notify->reader);
            }
    for (http_conn *hc = h->conns; hc != NULL; hc = hc->next)
        if (hc->req == NULL)
            shutdown(hc->fd, SHUT_RDWR);
    if (h->conns == NULL)
        teardown(h);
}

static void run_mhd(srv_http *h)
{
    if (h->torn_down || h->in_run)
        return;
    h->in_run = true;
    h->kicked = false;
    MHD_run(h->mhd);
    h->in_run = false;
    MHD_UNSIGNED_LONG_LONG ms = 0;
    if (h->kicked) /* a connection was resumed meanwhile */
        uv_timer_start(&h->mhd_timer, on_mhd_timer, 0, 0);
    else if (MHD_get_timeout(h->mhd, &ms) == MHD_YES)
        uv_timer_start(&h->mhd_timer, on_mhd_timer, ms > 60000 ? 60000 : ms, 0);
    else
        uv_timer_stop(&h->mhd_timer);
    drain(h);
}

/* ------------------------------------------------------------ sessions */

/* The bucket of an id: its first 16 hex digits are random already. */
static size_t bucket_of(const srv_http *h, const char *id)
{
    uint64_t v = 0;
    for (int i = 0; i < 16; i++)
        v = v << 4 | (uint64_t)(id[i] <= '9' ? id[i] - '0' : id[i] - 'a' + 10);
    return (size_t)(v & (h->n_buckets - 1));
}

static http_session *session_find(srv_http *h, const char *id)
{
    if (h->n_buckets == 0 || !http_session_id_valid(id))
        return NULL;
    for (http_session *hs = h->buckets[bucket_of(h, id)]; hs != NULL;
         hs = hs->hnext)
        if (memcmp(hs->id, id, HTTP_SESSION_ID_LEN) == 0)
            return hs;
    return NULL;
}

/* Puts hs in the table, growing it to keep chains short; -1 on OOM. */
static int session_insert(srv_http *h, http_session *hs)
{
    if (h->n_sessions >= h->n_buckets) {
        size_t n = h->n_buckets ? h->n_buckets * 2 : 64;
        http_session **grown = calloc(n, sizeof *grown);
        if (grown == NULL)
            return -1;
        http_session **old = h->buckets;
        size_t old_n = h->n_buckets;
        h->buckets = grown;
        h->n_buckets = n;
        for (size_t b = 0; b < old_n; b++)
            for (http_session *e = old[b], *next; e != NULL; e = next) {
                next = e->hnext;
                size_t at = bucket_of(h, e->id);
                e->hnext = grown[at];
                grown[at] = e;
            }
        free(old);
    }
    size_t at = bucket_of(h, hs->id);
    hs->hnext = h->buckets[at];
    h->buckets[at] = hs;
    h->n_sessions++;
    return 0;
}

static void session_remove(srv_http *h, http_session *hs)
{
    for (http_session **p = &h->buckets[bucket_of(h, hs->id)]; *p != NULL;
         p = &(*p)->hnext)
        if (*p == hs) {
            *p = hs->hnext;
            h->n_sessions--;
            return;
        }
}

/* Up to max sessions into out (for ending them: that changes the table);
 * with `idle`, only those unused since before it with nothing open. */
static size_t session_collect(srv_http *h, http_session **out, size_t max,
                              bool expired, uint64_t before)
{
    size_t n = 0;
    for (size_t b = 0; b < h->n_buckets && n < max; b++)
        for (http_session *hs = h->buckets[b]; hs != NULL && n < max;
             hs = hs->hnext)
            if (!expired || (hs->streams == NULL && hs->notify == NULL &&
                             hs->last_used <= before))
                out[n++] = hs;
    return n;
}

/* A new session entry for s (taken on success) under a fresh id. */
static http_session *session_add(srv_http *h, srv_session *s)
{
    http_session *hs = calloc(1, sizeof *hs);
    if (hs == NULL)
        return NULL;
    do { /* a repeat has odds of 2^-128, but costs nothing to rule out */
        if (http_session_id_new(hs->id) != 0) {
            free(hs);
            return NULL;
        }
    } while (session_find(h, hs->id) != NULL);
    if (session_insert(h, hs) != 0) {
        free(hs);
        return NULL;
    }
    hs->s = s;
    hs->last_used = uv_now(h->loop);
    return hs;
}

/* Ends a session (DELETE, idle expiry, shutdown): the server cancels its
 * calls; its streams end, their clients' connections close. */
static void session_end(srv_http *h, http_session *hs)
{
    session_remove(h, hs);
    srv_session_end(hs->s);
    while (hs->streams != NULL) {
        http_stream *st = hs->streams;
        if (!st->gone && !(st->handled && st->pending == 0)) {
            st->gone = true;
            srv_out_closed(h->srv, &st->out);
        }
        stream_end(st);
    }
    if (hs->notify != NULL)
        stream_end(hs->notify);
    srv_session_release(hs->s);
    free(hs);
}

/* ------------------------------------------------------------ requests */

static void req_free(http_req *r)
{
    if (r->st != NULL)
        srv_out_unref(&r->st->out);
    free(r->body);
    free(r);
}

void http_req_unref(http_req *r)
{
    if (--r->refs == 0)
        req_free(r);
}

static void on_watch(uv_poll_t *p, int status, int events)
{
    (void)status;
    (void)events;
    http_conn *hc = p->data;
    uv_poll_stop(p);
    if (hc->req != NULL) {
        hc->req->peer_gone = true;
        http_req_wake(hc->req);
    }
}

void http_req_suspend(http_req *r)
{
    http_conn *hc = r->hc;
    if (r->suspended || hc == NULL)
        return;
    MHD_suspend_connection(r->conn);
    r->suspended = true;
    if (!hc->watch_init) {
        if (uv_poll_init_socket(r->h->loop, &hc->watch, hc->fd) != 0)
            return;
        hc->watch.data = hc;
        hc->watch_init = true;
    }
    uv_poll_start(&hc->watch, UV_DISCONNECT, on_watch);
}

void http_req_wake(http_req *r)
{
    if (!r->suspended)
        return;
    r->suspended = false;
    if (r->hc != NULL && r->hc->watch_init)
        uv_poll_stop(&r->hc->watch);
    MHD_resume_connection(r->conn);
    http_kick(r->h);
}

void http_req_kill(http_req *r)
{
    r->kill = true;
    if (r->hc != NULL)
        shutdown(r->hc->fd, SHUT_RDWR);
    http_req_wake(r);
}

/* ------------------------------------------------------------ responses */

static enum MHD_Result queue(http_req *r, unsigned status,
                             struct MHD_Response *resp)
{
    if (resp == NULL)
        return MHD_NO;
    if (r->h->quiescing)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result rc = MHD_queue_response(r->conn, status, resp);
    MHD_destroy_response(resp);
    r->phase = PHASE_DONE;
    return rc;
}

/* Queues a JSON body (taken; freed by MHD) with an optional session id. */
static enum MHD_Result queue_json(http_req *r, unsigned status, char *body,
                                  size_t len, const char *session_id)
{
    if (body == NULL)
        return MHD_NO;
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (resp == NULL) {
        free(body);
        return MHD_NO;
    }
    if (len > 0)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                "application/json");
    if (session_id != NULL)
        MHD_add_response_header(resp, "Mcp-Session-Id", session_id);
    return queue(r, status, resp);
}

static enum MHD_Result queue_empty(http_req *r, unsigned status)
{
    return queue(
        r, status,
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT));
}

/* A transport error: status and a JSON-RPC error without an id, except
 * 401, which says nothing but the scheme. */
static enum MHD_Result queue_error(http_req *r, unsigned status,
                                   const char *message)
{
    if (status == MHD_HTTP_UNAUTHORIZED) {
        struct MHD_Response *resp = MHD_create_response_from_buffer(
            0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (resp != NULL)
            MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                    "Bearer");
        return queue(r, status, resp);
    }
    char text[256];
    int n = snprintf(text, sizeof text,
                     "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":%d,"
                     "\"message\":\"%s\"}}",
                     RPC_INVALID_REQUEST, message);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer((size_t)n, text, MHD_RESPMEM_MUST_COPY);
    if (resp != NULL) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                "application/json");
        if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
            MHD_add_response_header(
                resp, MHD_HTTP_HEADER_ALLOW,
                r->version == HTTP_V_2026_07_28 ? "POST" : "GET, POST, DELETE");
    }
    return queue(r, status, resp);
}

/* 400 for an MCP-Protocol-Version no version has: an
 * UnsupportedProtocolVersion error naming the versions spoken and the
 * value sent, with the request's id when its body has a readable one. */
static enum MHD_Result queue_bad_version(http_req *r)
{
    json_t *msg = json_object();   /* new ref */
    json_t *err = json_object();   /* new ref */
    json_t *data = json_object();  /* new ref */
    json_t *body = r->body != NULL /* new ref */
                       ? json_loadb(r->body, r->len, 0, NULL)
                       : NULL;
    json_t *id = json_is_object(body) ? json_object_get(body, "id") : NULL;
    char *text = NULL;
    if (msg != NULL && err != NULL && data != NULL) {
        json_object_set_new(msg, "jsonrpc", json_string("2.0"));
        if (json_is_string(id) || json_is_integer(id))
            json_object_set(msg, "id", id);
        json_object_set_new(err, "code", json_integer(RPC_UNSUPPORTED_VERSION));
        json_object_set_new(err, "message",
                            json_string("Unsupported protocol version"));
        json_object_set_new(data, "supported",
                            json_loads(http_versions_json(), 0, NULL));
        json_object_set_new(data, "requested", json_string(r->version_text));
        json_object_set(err, "data", data);
        json_object_set(msg, "error", err);
        text = json_dumps(msg, JSON_COMPACT);
    }
    json_decref(body);
    json_decref(data);
    json_decref(err);
    json_decref(msg);
    if (text == NULL)
        return MHD_NO;
    return queue_json(r, MHD_HTTP_BAD_REQUEST, text, strlen(text), NULL);
}

/* The headers of every SSE response. */
static void sse_headers(struct MHD_Response *resp, const char *session_id)
{
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            "text/event-stream");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    if (session_id != NULL)
        MHD_add_response_header(resp, "Mcp-Session-Id", session_id);
}

/* Queues a whole SSE body (taken; freed by MHD). */
static enum MHD_Result queue_sse_body(http_req *r, char *body, size_t len,
                                      const char *session_id)
{
    if (body == NULL)
        return MHD_NO;
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (resp == NULL) {
        free(body);
        return MHD_NO;
    }
    sse_headers(resp, session_id);
    return queue(r, MHD_HTTP_OK, resp);
}

/* Queues the SSE response that reads r's stream (attached already). */
static enum MHD_Result queue_sse(http_req *r, const char *session_id)
{
    struct MHD_Response *resp = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, READ_BLOCK, stream_read, r, stream_read_done);
    if (resp == NULL)
        return MHD_NO;
    r->refs++; /* the response's, dropped by stream_read_done */
    sse_headers(resp, session_id);
    enum MHD_Result rc = queue(r, MHD_HTTP_OK, resp);
    r->phase = PHASE_STREAM;
    r->last_write = r->opened = uv_now(r->h->loop);
    return rc;
}

/* ------------------------------------------------------------ methods */

static enum MHD_Result post_final(srv_http *h, http_req *r)
{
    if (r->over > 0)
        return queue_error(r, MHD_HTTP_CONTENT_TOO_LARGE,
                           "Request body too large");
    if (r->version == HTTP_V_UNKNOWN)
        return queue_bad_version(r);
    bool modern = r->version == HTTP_V_2026_07_28;
    http_session *hs = NULL;
    srv_session *own = NULL;
    if (r->session_id != NULL && !modern) {
        hs = session_find(h, r->session_id);
        if (hs == NULL)
            return queue_error(r, MHD_HTTP_NOT_FOUND, "Session not found");
        hs->last_used = uv_now(h->loop);
    } else {
        if (!modern && h->n_sessions >= h->o.max_sessions)
            return queue_error(r, MHD_HTTP_SERVICE_UNAVAILABLE,
                               "Too many sessions");
        own = srv_session_new(h->srv, SRV_VIA_HTTP, h->caller);
        if (own == NULL)
            return queue_error(r, MHD_HTTP_SERVICE_UNAVAILABLE,
                               "Out of memory");
    }
    srv_session *s = hs != NULL ? hs->s : own;
    http_stream *st = stream_new(h, hs, own);
    if (st == NULL)
        return queue_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "Out of memory");
    if (hs != NULL) {
        const char *v = srv_session_version(s);
        st->ids = st->retain = version_resumable(v);
        st->priming = version_priming(v);
        st->next = hs->streams;
        hs->streams = st;
    }
    size_t i = 0;
    while (i < r->len && (r->body[i] == ' ' || r->body[i] == '\t' ||
                          r->body[i] == '\r' || r->body[i] == '\n'))
        i++;
    st->batch = i < r->len && r->body[i] == '[';

    srv_http_info info = {r->version_text, r->mcp_method, r->mcp_name,
                          hs != NULL};
    srv_answer ans = {0};
    srv_handle(h->srv, s, r->body != NULL ? r->body : "", r->len, &st->out,
               &info, &ans);
    /* Without a journal its calls start now: what ends at once (an inline
     * tool's call) is answered before the response is queued, and waits
     * no more. With one, the step waits for the loop's next turn, so the
     * requests read together share a journal transaction. */
    if (!srv_journaled(h->srv)) {
        size_t answered = st->responses;
        srv_step_now(h->srv);
        answered = st->responses - answered;
        ans.pending = ans.pending > answered ? ans.pending - answered : 0;
    }

    const char *minted = NULL;
    if (ans.initialized && hs == NULL && own != NULL && !st->ended) {
        hs = session_add(h, own);
        if (hs != NULL) {
            st->own = NULL; /* the session table has it now */
            st->hs = hs;
            st->num = ++hs->next_num;
            st->next = hs->streams;
            hs->streams = st;
            minted = hs->id;
        }
    }
    if (ans.http_status == MHD_HTTP_ACCEPTED) {
        stream_decide(st, false, 0);
        stream_end(st);
        return queue_empty(r, MHD_HTTP_ACCEPTED);
    }
    bool sse = ans.http_status == MHD_HTTP_OK &&
               (ans.streams || stream_has_non_response(st));
    stream_decide(st, sse, ans.pending);
    if (!sse)
        st->retain = false; /* a JSON answer has no event ids */
    if (sse && ans.pending == 0 && !st->ended) {
        /* All in: the events as one body, written with the headers. */
        size_t len = 0;
        char *body = stream_sse_body(st, &len);
        stream_end(st);
        return queue_sse_body(r, body, len, minted);
    }
    if (sse) {
        stream_attach(st, r, false, 0);
        return queue_sse(r, minted);
    }
    if (ans.pending == 0) {
        size_t len = 0;
        char *body = stream_json_body(st, &len);
        stream_end(st);
        unsigned status =
            ans.http_status != 0 ? (unsigned)ans.http_status : MHD_HTTP_OK;
        return queue_json(r, status, body, len, minted);
    }
    stream_attach(st, r, false, 0);
    r->phase = PHASE_WAIT;
    r->wait_status = ans.http_status != 0 ? ans.http_status : MHD_HTTP_OK;
    http_req_suspend(r);
    return MHD_YES;
}

/* A JSON answer's responses are all in (or its client left). */
static enum MHD_Result wait_final(http_req *r)
{
    http_stream *st = r->st;
    if (r->kill || r->peer_gone || st == NULL || st->ended)
        return MHD_NO; /* closes; on_completed reports the stream */
    if (st->pending > 0) {
        http_req_suspend(r);
        return MHD_YES;
    }
    size_t len = 0;
    char *body = stream_json_body(st, &len);
    stream_detach(st, r, true);
    return queue_json(r, (unsigned)r->wait_status, body, len, NULL);
}

static enum MHD_Result get_final(srv_http *h, http_req *r)
{
    if (r->version == HTTP_V_2026_07_28)
        return queue_error(r, MHD_HTTP_METHOD_NOT_ALLOWED,
                           "No GET stream in this protocol version");
    if (r->session_id == NULL)
        return r->version == HTTP_V_NONE
                   ? queue_error(r, MHD_HTTP_METHOD_NOT_ALLOWED,
                                 "GET needs a session")
                   : queue_error(r, MHD_HTTP_BAD_REQUEST,
                                 "Mcp-Session-Id header is required");
    http_session *hs = session_find(h, r->session_id);
    if (hs == NULL)
        return queue_error(r, MHD_HTTP_NOT_FOUND, "Session not found");
    hs->last_used = uv_now(h->loop);
    uint64_t num, seq;
    if (http_event_id_parse(r->last_event_id, &num, &seq)) {
        /* A resume: only the stream the id names, never another's. */
        for (http_stream *st = hs->streams; st != NULL; st = st->next)
            if (st->num == num && st->retain && st->mode == MODE_SSE) {
                stream_attach(st, r, true, seq);
                return queue_sse(r, NULL);
            }
    }
    if (hs->notify != NULL)
        return queue_error(r, MHD_HTTP_CONFLICT,
                           "This session has a GET stream already");
    http_stream *st = stream_new(h, hs, NULL);
    if (st == NULL)
        return queue_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "Out of memory");
    const char *v = srv_session_version(hs->s);
    st->standalone = true;
    st->ids = version_resumable(v);
    st->priming = version_priming(v);
    hs->notify = st;
    stream_decide(st, true, 0);
    stream_attach(st, r, false, 0);
    srv_session_set_notify(hs->s, &st->out);
    return queue_sse(r, NULL);
}

static enum MHD_Result delete_final(srv_http *h, http_req *r)
{
    if (r->version == HTTP_V_2026_07_28)
        return queue_error(r, MHD_HTTP_METHOD_NOT_ALLOWED,
                           "No sessions in this protocol version");
    if (r->session_id == NULL)
        return queue_error(r, MHD_HTTP_BAD_REQUEST,
                           "Mcp-Session-Id header is required");
    http_session *hs = session_find(h, r->session_id);
    if (hs == NULL)
        return queue_error(r, MHD_HTTP_NOT_FOUND, "Session not found");
    session_end(h, hs);
    return queue_empty(r, MHD_HTTP_OK);
}

/* ------------------------------------------------------------ MHD calls */

static const char *header(struct MHD_Connection *c, const char *name)
{
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* The checks on a request's headers; queues the refusal and returns
 * MHD_NO-or-YES through *rc when one fails, else returns false. */
static bool refuse(srv_http *h, http_req *r, const char *url,
                   const char *method, enum MHD_Result *rc)
{
    struct MHD_Connection *c = r->conn;
    const char *host = header(c, MHD_HTTP_HEADER_HOST);
    const char *origin = header(c, "Origin");
    r->version_text = header(c, "MCP-Protocol-Version");
    r->version = http_version_of(r->version_text);
    r->session_id = header(c, "Mcp-Session-Id");
    r->last_event_id = header(c, "Last-Event-ID");
    r->mcp_method = header(c, "Mcp-Method");
    r->mcp_name = header(c, "Mcp-Name");
    if (h->loopback && host != NULL && !http_host_loopback(host)) {
        *rc = queue_error(r, MHD_HTTP_FORBIDDEN, "Host not allowed");
        return true;
    }
    if (origin != NULL &&
        !http_origin_allowed(origin, (const char *const *)h->origins,
                             h->n_origins)) {
        *rc = queue_error(r, MHD_HTTP_FORBIDDEN, "Origin not allowed");
        return true;
    }
    if (strcmp(url, h->endpoint) != 0) {
        *rc = queue_error(r, MHD_HTTP_NOT_FOUND, "Not found");
        return true;
    }
    if (strcmp(method, MHD_HTTP_METHOD_POST) == 0)
        r->method = REQ_POST;
    else if (strcmp(method, MHD_HTTP_METHOD_GET) == 0)
        r->method = REQ_GET;
    else if (strcmp(method, MHD_HTTP_METHOD_DELETE) == 0)
        r->method = REQ_DELETE;
    else {
        *rc = queue_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, "Method not allowed");
        return true;
    }
    if (h->has_token &&
        !http_bearer_ok(header(c, MHD_HTTP_HEADER_AUTHORIZATION),
                        h->token_digest)) {
        *rc = queue_error(r, MHD_HTTP_UNAUTHORIZED, NULL);
        return true;
    }
    if (r->version == HTTP_V_UNKNOWN && r->method != REQ_POST) {
        *rc = queue_error(r, MHD_HTTP_BAD_REQUEST,
                          "Unsupported MCP-Protocol-Version");
        return true;
    }
    bool json, sse;
    http_accept_parse(header(c, MHD_HTTP_HEADER_ACCEPT), &json, &sse);
    if (r->method == REQ_POST) {
        if (!http_content_type_json(header(c, MHD_HTTP_HEADER_CONTENT_TYPE))) {
            *rc = queue_error(r, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
                              "Content-Type must be application/json");
            return true;
        }
        if (!json || !sse) {
            *rc = queue_error(r, MHD_HTTP_NOT_ACCEPTABLE,
                              "Accept must list application/json and "
                              "text/event-stream");
            return true;
        }
        const char *cl = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl != NULL) {
            char *end = NULL;
            errno = 0;
            unsigned long long n = strtoull(cl, &end, 10);
            if (errno == 0 && end != cl && n > h->o.max_body) {
                *rc = queue_error(r, MHD_HTTP_CONTENT_TOO_LARGE,
                                  "Request body too large");
                return true;
            }
        }
    } else if (r->method == REQ_GET && !sse) {
        *rc = queue_error(r, MHD_HTTP_NOT_ACCEPTABLE,
                          "Accept must list text/event-stream");
        return true;
    }
    return false;
}

/* Keeps up to max_body bytes of the body; counts what goes past it. */
static bool body_append(srv_http *h, http_req *r, const char *data, size_t n)
{
    if (r->over > 0 || n > h->o.max_body - r->len) {
        r->over += n;
        /* Answer 413 at the end, but do not read a flood for ever. */
        return r->over <= h->o.max_body;
    }
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 1024;
        while (cap < r->len + n + 1)
            cap *= 2;
        char *grown = realloc(r->body, cap);
        if (grown == NULL)
            return false;
        r->body = grown;
        r->cap = cap;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    r->body[r->len] = '\0';
    return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    srv_http *h = cls;
    http_req *r = *con_cls;
    if (r == NULL) {
        /* The headers are in. */
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        r = calloc(1, sizeof *r);
        if (r == NULL)
            return MHD_NO;
        r->h = h;
        r->conn = c;
        r->refs = 1; /* MHD's, dropped by on_completed */
        r->hc = ci != NULL ? ci->socket_context : NULL;
        if (r->hc != NULL)
            r->hc->req = r;
        *con_cls = r;
        enum MHD_Result rc;
        if (refuse(h, r, url, method, &rc))
            return rc;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (r->phase != PHASE_BODY)
            return MHD_NO;
        bool ok = body_append(h, r, upload, *upload_size);
        *upload_size = 0;
        return ok ? MHD_YES : MHD_NO;
    }
    switch (r->phase) {
    case PHASE_BODY:
        if (r->hc != NULL)
            r->hc->deadline = 0; /* all in: no slow-client deadline */
        if (r->method == REQ_POST)
            return post_final(h, r);
        if (r->method == REQ_GET)
            return get_final(h, r);
        return delete_final(h, r);
    case PHASE_WAIT:
        return wait_final(r);
    default:
        return MHD_NO;
    }
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)c;
    srv_http *h = cls;
    http_req *r = *con_cls;
    if (r == NULL)
        return;
    *con_cls = NULL;
    http_conn *hc = r->hc;
    if (hc != NULL) {
        if (hc->req == r)
            hc->req = NULL;
        if (hc->watch_init)
            uv_poll_stop(&hc->watch);
        /* The next request on the connection has as long as this one. */
        hc->deadline = uv_now(h->loop) + h->o.request_timeout_ms;
        if (h->quiescing)
            shutdown(hc->fd, SHUT_RDWR);
    }
    r->suspended = false;
    r->hc = NULL;
    if (r->st != NULL)
        stream_detach(r->st, r,
                      toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && r->eos);
    http_req_unref(r);
}

static void conn_closed(uv_handle_t *handle)
{
    free(handle->data);
}

static void on_connection(void *cls, struct MHD_Connection *c,
                          void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    srv_http *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        http_conn *hc = calloc(1, sizeof *hc);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (hc == NULL || ci == NULL) {
            free(hc);
            *socket_context = NULL;
            return;
        }
        hc->h = h;
        hc->conn = c;
        hc->fd = ci->connect_fd;
        hc->deadline = uv_now(h->loop) + h->o.request_timeout_ms;
        hc->next = h->conns;
        if (h->conns != NULL)
            h->conns->prev = hc;
        h->conns = hc;
        *socket_context = hc;
        return;
    }
    http_conn *hc = *socket_context;
    if (hc == NULL)
        return;
    *socket_context = NULL;
    if (hc->prev != NULL)
        hc->prev->next = hc->next;
    else
        h->conns = hc->next;
    if (hc->next != NULL)
        hc->next->prev = hc->prev;
    if (hc->req != NULL)
        hc->req->hc = NULL;
    if (hc->watch_init)
        uv_close((uv_handle_t *)&hc->watch, conn_closed); /* fd still open */
    else
        free(hc);
}

/* ------------------------------------------------------------ sweeping */

static void on_sweep(uv_timer_t *t)
{
    srv_http *h = t->data;
    uint64_t now = uv_now(h->loop);
    for (http_conn *hc = h->conns; hc != NULL; hc = hc->next) {
        if (hc->deadline != 0 && now >= hc->deadline) {
            hc->deadline = 0;
            shutdown(hc->fd, SHUT_RDWR); /* too slow: MHD sees it close */
        }
        http_req *r = hc->req;
        if (r != NULL && r->phase == PHASE_STREAM && r->st != NULL &&
            now >= h->o.keepalive_ms)
            stream_keepalive(r->st, now - h->o.keepalive_ms);
        if (r != NULL && r->phase == PHASE_STREAM && now >= h->o.poll_ms)
            stream_poll_end(r, now - h->o.poll_ms + 1);
    }
    http_session *expired[EXPIRE_BATCH];
    uint64_t idle = (uint64_t)h->o.session_idle_s * 1000;
    size_t n = now >= idle
                   ? session_collect(h, expired, EXPIRE_BATCH, true, now - idle)
                   : 0;
    for (size_t i = 0; i < n; i++)
        session_end(h, expired[i]);
    if (h->closing && now >= h->close_by) {
        teardown(h); /* the last responses had their time */
        return;
    }
    run_mhd(h);
}

/* ------------------------------------------------------------ start, stop */

static void on_handle_closed(uv_handle_t *handle)
{
    srv_http *h = handle->data;
    if (--h->handles == 0 && h->freed) {
        for (size_t i = 0; i < h->n_origins; i++)
            free(h->origins[i]);
        free(h->origins);
        free(h->endpoint);
        free(h->caller);
        free(h->buckets);
        free(h);
    }
}

/* Stops the daemon: sessions end, suspended connections are woken and
 * closed, the loop handles close. */
static void teardown(srv_http *h)
{
    if (h->torn_down)
        return;
    if (h->mhd != NULL) {
        /* Collected first: ending one moves the table's entries. */
        http_session **all = calloc(h->n_sessions + 1, sizeof *all);
        size_t n =
            all != NULL ? session_collect(h, all, h->n_sessions, false, 0) : 0;
        for (size_t i = 0; i < n; i++)
            session_end(h, all[i]);
        free(all);
        for (http_conn *hc = h->conns; hc != NULL; hc = hc->next)
            if (hc->req != NULL)
                http_req_kill(hc->req);
        h->in_run = true;
        MHD_run(h->mhd); /* the woken connections close */
        MHD_stop_daemon(h->mhd);
        h->in_run = false;
        h->mhd = NULL;
    }
    if (h->listen_fd >= 0) {
        close(h->listen_fd);
        h->listen_fd = -1;
    }
    h->torn_down = true;
    uv_close((uv_handle_t *)&h->mhd_poll, on_handle_closed);
    uv_close((uv_handle_t *)&h->mhd_timer, on_handle_closed);
    uv_close((uv_handle_t *)&h->sweep, on_handle_closed);
}

/* Binds and listens on host:port; fills h->loopback and h->url. */
static int bind_listen(srv_http *h, const char *host, int port, tg_error *err)
{
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(host, service, &hints, &res);
    if (gai != 0) {
        fail(err, TG_EINVAL, "cannot resolve '%s': %s", host,
             gai_strerror(gai));
        return TG_EINVAL;
    }
    int fd = -1, last = 0;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            last = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (ai->ai_family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
            listen(fd, SOMAXCONN) != 0) {
            last = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        fail(err, last == EADDRINUSE ? TG_EEXIST : TG_EIO,
             "cannot listen on %s:%d: %s", host, port, strerror(last));
        return last == EADDRINUSE ? TG_EEXIST : TG_EIO;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char addr[INET6_ADDRSTRLEN] = "";
    unsigned bound_port = 0;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &s6->sin6_addr, addr, sizeof addr);
        bound_port = ntohs(s6->sin6_port);
        h->loopback = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
        snprintf(h->url, sizeof h->url, "http://[%s]:%u%s", addr, bound_port,
                 h->endpoint);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &s4->sin_addr, addr, sizeof addr);
        bound_port = ntohs(s4->sin_port);
        h->loopback = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
        snprintf(h->url, sizeof h->url, "http://%s:%u%s", addr, bound_port,
                 h->endpoint);
    }
    h->listen_fd = fd;
    h->port = (int)bound_port;
    return 0;
}

/* Fills the defaults of every zero option. The process's open files
 * limit is raised towards its hard limit so the connection limit, not the
 * descriptors, decides (a soft limit of 1024 is common). */
static void defaults(srv_http_options *o)
{
    struct rlimit rl;
    unsigned files = 4096;
    rlim_t want = (o->max_connections ? o->max_connections : 4096) + 64;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < 4096 + 64)
        files = rl.rlim_cur > 128 ? (unsigned)rl.rlim_cur - 64 : 64;
    if (o->max_body == 0)
        o->max_body = 4u << 20;
    if (o->max_header == 0)
        o->max_header = 16u << 10;
    if (o->max_connections == 0 || o->max_connections > files)
        o->max_connections = files;
    if (o->idle_timeout_s == 0)
        o->idle_timeout_s = 60;
    if (o->request_timeout_ms == 0)
        o->request_timeout_ms = 30000;
    if (o->max_stream_queue == 0)
        o->max_stream_queue = 1u << 20;
    if (o->max_stream_retained == 0)
        o->max_stream_retained = 8u << 20;
    if (o->max_sessions == 0)
        o->max_sessions = 10000;
    if (o->session_idle_s == 0)
        o->session_idle_s = 3600;
    if (o->keepalive_ms == 0)
        o->keepalive_ms = 15000;
    if (o->retry_ms == 0)
        o->retry_ms = 1000;
    if (o->poll_ms == 0)
        o->poll_ms = 5000;
}

/* The token: the first line of path, without its line end. */
static char *read_token(const char *path, tg_error *err)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fail(err, TG_EINVAL, "token file %s: %s", path, strerror(errno));
        return NULL;
    }
    char line[4096];
    char *got = fgets(line, sizeof line, f);
    fclose(f);
    size_t n = got != NULL ? strcspn(line, "\r\n") : 0;
    while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
        n--;
    char *token = n > 0 ? strndup(line, n) : NULL;
    OPENSSL_cleanse(line, sizeof line);
    if (n == 0)
        fail(err, TG_EINVAL, "token file %s: no token on its first line", path);
    else if (token == NULL)
        fail(err, TG_ENOMEM, "out of memory");
    return token;
}

static void free_token(char *token)
{
    if (token != NULL) {
        OPENSSL_cleanse(token, strlen(token));
        free(token);
    }
}

int srv_http_start(tg__srv *srv, const srv_http_options *opt, srv_http **out,
                   tg_error *err)
{
    *out = NULL;
    const char *host = opt->host != NULL ? opt->host : "127.0.0.1";
    int rc = TG_ENOMEM;
    char *token = NULL;
    srv_http *h = calloc(1, sizeof *h);
    if (h == NULL)
        goto oom;
    h->srv = srv;
    h->loop = srv_loop(srv);
    h->listen_fd = -1;
    h->o = *opt;
    h->o.host = h->o.endpoint = h->o.token = h->o.token_file = NULL;
    h->o.origins = NULL;
    h->o.caller = NULL;
    defaults(&h->o);
    rc = TG_EINVAL;
    if (opt->port < 0 || opt->port > 65535 || host[0] == '\0') {
        fail(err, rc, "cannot listen on '%.64s' port %d", host, opt->port);
        goto fail;
    }
    const char *endpoint = opt->endpoint != NULL ? opt->endpoint : "/mcp";
    if (endpoint[0] != '/' || strlen(endpoint) > 64) {
        fail(err, rc,
             "the HTTP endpoint must be a path starting with '/' (at most 64 "
             "bytes)");
        goto fail;
    }
    if (opt->token_file != NULL && opt->token == NULL &&
        (token = read_token(opt->token_file, err)) == NULL) {
        rc = err != NULL && err->code == TG_ENOMEM ? TG_ENOMEM : TG_EINVAL;
        goto fail;
    }
    const char *tok = opt->token != NULL ? opt->token : token;
    if (tok != NULL) {
        if (tok[0] == '\0') {
            fail(err, rc, "the bearer token is empty");
            goto fail;
        }
        h->has_token = true;
        http_token_digest(tok, strlen(tok), h->token_digest);
    }
    h->endpoint = strdup(endpoint);
    if (h->endpoint == NULL ||
        (opt->caller != NULL && (h->caller = strdup(opt->caller)) == NULL))
        goto oom;
    if (opt->norigins > 0) {
        h->origins = calloc((size_t)opt->norigins, sizeof *h->origins);
        if (h->origins == NULL)
            goto oom;
        for (int i = 0; i < opt->norigins; i++) {
            h->origins[i] = strdup(opt->origins[i]);
            if (h->origins[i] == NULL)
                goto oom;
            h->n_origins++;
        }
    }
    if ((rc = bind_listen(h, host, opt->port, err)) != 0)
        goto fail;
    size_t pool =
        h->o.max_header * 2 > (32u << 10) ? h->o.max_header * 2 : (32u << 10);
    h->mhd = MHD_start_daemon(
        MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, on_request, h,
        MHD_OPTION_LISTEN_SOCKET, h->listen_fd, MHD_OPTION_CONNECTION_LIMIT,
        h->o.max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        h->o.max_per_ip, MHD_OPTION_CONNECTION_TIMEOUT, h->o.idle_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, h, MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
        MHD_OPTION_END);
    rc = TG_EINTERNAL;
    if (h->mhd == NULL) {
        fail(err, rc, "cannot start the HTTP server (libmicrohttpd)");
        goto fail;
    }
    const union MHD_DaemonInfo *di =
        MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
    if (di == NULL || uv_poll_init(h->loop, &h->mhd_poll, di->epoll_fd) != 0) {
        fail(err, rc, "cannot watch the HTTP server");
        MHD_stop_daemon(h->mhd);
        goto fail;
    }
    uv_timer_init(h->loop, &h->mhd_timer);
    uv_timer_init(h->loop, &h->sweep);
    h->mhd_poll.data = h->mhd_timer.data = h->sweep.data = h;
    h->handles = 3;
    uv_poll_start(&h->mhd_poll, UV_READABLE, on_mhd_poll);
    uv_timer_start(&h->sweep, on_sweep, SWEEP_MS, SWEEP_MS);
    uv_unref((uv_handle_t *)&h->sweep);
    http_kick(h);
    if (!opt->quiet)
        fprintf(stderr, "toolgate: serving MCP on %s\n", h->url);
    free_token(token);
    *out = h;
    return 0;
oom:
    rc = TG_ENOMEM;
    fail(err, rc, "out of memory");
fail:
    free_token(token);
    if (h != NULL) {
        if (h->listen_fd >= 0)
            close(h->listen_fd);
        for (size_t i = 0; i < h->n_origins; i++)
            free(h->origins[i]);
        free(h->origins);
        free(h->endpoint);
        free(h->caller);
        free(h);
    }
    return rc;
}

const char *srv_http_url(const srv_http *h)
{
    return h->url;
}

int srv_http_port(const srv_http *h)
{
    return h->port;
}

void srv_http_stop_accepting(srv_http *h)
{
    if (h == NULL || h->quiescing || h->torn_down)
        return;
    h->quiescing = true;
    MHD_socket fd = MHD_quiesce_daemon(h->mhd);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
    h->listen_fd = -1;
    for (http_conn *hc = h->conns; hc != NULL; hc = hc->next)
        if (hc->req == NULL)
            shutdown(hc->fd, SHUT_RDWR);
    http_kick(h);
}

void srv_http_close(srv_http *h)
{
    if (h == NULL || h->closing || h->torn_down)
        return;
    srv_http_stop_accepting(h);
    h->closing = true;
    h->close_by = uv_now(h->loop) + 2000;
    uv_ref((uv_handle_t *)&h->sweep);
    drain(h);
}

void srv_http_free(srv_http *h)
{
    if (h == NULL)
        return;
    h->freed = true;
    if (h->torn_down && h->handles == 0) {
        h->handles = 1; /* closed already (drained): free now */
        on_handle_closed((uv_handle_t *)&h->sweep);
        return;
    }
    teardown(h);
}
