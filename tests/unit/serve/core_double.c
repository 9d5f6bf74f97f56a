/* SPDX-License-Identifier: MIT */
/*
 * core_double.c - a small stand-in for the MCP server core (server.c) that
 * implements serve.h's side of the contract, so the HTTP transport can be
 * driven over real sockets before and apart from the real core. It keeps
 * serve.h's rules - reference-counted outs and sessions, srv_out_closed
 * cancelling under 2026-07-28 only, 400 for a request on a session that
 * did not initialize - and answers a few test methods:
 *   initialize {protocolVersion}  the version (2025-06-18 by default)
 *   echo {...}                     the params, at once
 *   slow {ms, notes}               streams: `notes` notifications, one per
 *                                  ms/(notes+1), then the response
 *   wait {ms}                      does not stream: the response after ms
 *   flood {size}                   streams notifications of `size` bytes
 *                                  every millisecond until the out refuses
 *                                  one, then the response; its out and
 *                                  session are counted while they live
 *   notify {text}                  a notification on the session's notify
 *                                  out, then the response
 * A request whose params._meta names protocol version 2026-07-28 is served
 * without initialize. Counters for the tests are in core_double.h.
 * Everything runs on the loop thread; the counters are atomics.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_double.h"

atomic_int dbl_closed;         /* srv_out_closed calls */
atomic_int dbl_canceled;       /* requests cancelled by a closed out */
atomic_int dbl_refused;        /* sends that returned -1 */
atomic_int dbl_outs;           /* outs alive */
atomic_int dbl_sessions;       /* sessions alive */
atomic_int dbl_ended;          /* srv_session_end calls */
atomic_int dbl_floods;         /* flood requests started */
atomic_int dbl_flood_outs;     /* outs that carried a flood, alive */
atomic_int dbl_flood_sessions; /* sessions that carried a flood, alive */

struct tg__srv {
    uv_loop_t loop;
    int stopping;
};

struct srv_session {
    int refs;
    const char *version;
    int initialized;
    int ended;
    int flood; /* carried a flood request: counted in dbl_flood_sessions */
    srv_out *notify;
};

/* One request being worked on by a timer. */
typedef struct job {
    uv_timer_t timer;
    tg__srv *srv;
    srv_out *out;
    json_t *id; /* new ref */
    int kind;   /* 0 slow, 1 wait, 2 flood */
    int left;   /* notifications still to send (slow) */
    long size;  /* flood */
    int canceled;
    struct job *next;
} job;

static job *jobs; /* every job running */

/* The outs that carried a flood request and are alive (a few at most: the
 * transport owns the out, so the double keeps its own list). */
enum { FLOOD_OUTS = 16 };
static srv_out *flood_outs[FLOOD_OUTS];

/* ------------------------------------------------------------ outs */

void srv_out_init(srv_out *o, const srv_out_ops *ops)
{
    o->ops = ops;
    o->refs = 1;
    o->closed = false;
    o->reqs = NULL;
    atomic_fetch_add(&dbl_outs, 1);
}

void srv_out_ref(srv_out *o)
{
    o->refs++;
}

void srv_out_unref(srv_out *o)
{
    if (--o->refs == 0) {
        atomic_fetch_sub(&dbl_outs, 1);
        for (int i = 0; i < FLOOD_OUTS; i++)
            if (flood_outs[i] == o) {
                flood_outs[i] = NULL;
                atomic_fetch_sub(&dbl_flood_outs, 1);
            }
        o->ops->free(o);
    }
}

static int send_text(srv_out *o, srv_msg_kind kind, const char *text)
{
    int rc = o->ops->send(o, kind, text, strlen(text));
    if (rc != 0)
        atomic_fetch_add(&dbl_refused, 1);
    return rc;
}

static void send_json(srv_out *o, srv_msg_kind kind, json_t *msg /* taken */)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (text != NULL)
        send_text(o, kind, text);
    free(text);
}

static void respond(srv_out *o, json_t *id, json_t *result /* taken */)
{
    send_json(o, SRV_MSG_RESPONSE,
              json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result",
                        result));
}

static void respond_error(srv_out *o, json_t *id, int code, const char *m)
{
    send_json(o, SRV_MSG_RESPONSE,
              json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id",
                        id ? id : json_null(), "error", "code", code, "message",
                        m));
}

static void job_closed(uv_handle_t *h)
{
    job *j = h->data;
    json_decref(j->id);
    srv_out_unref(j->out);
    free(j);
}

static void job_finish(job *j)
{
    for (job **p = &jobs; *p != NULL; p = &(*p)->next)
        if (*p == j) {
            *p = j->next;
            break;
        }
    uv_timer_stop(&j->timer);
    uv_close((uv_handle_t *)&j->timer, job_closed);
}

void srv_out_closed(tg__srv *srv, srv_out *o)
{
    (void)srv;
    o->closed = true;
    atomic_fetch_add(&dbl_closed, 1);
    /* 2026-07-28: closing the stream cancels its requests; nothing more is
     * sent for them. The 2025 versions go on. */
    for (job *j = jobs, *next; j != NULL; j = next) {
        next = j->next;
        if (j->out == o && j->canceled) {
            atomic_fetch_add(&dbl_canceled, 1);
            job_finish(j);
        }
    }
}

/* ------------------------------------------------------------ sessions */

srv_session *srv_session_new(tg__srv *srv, srv_via via, const char *caller)
{
    (void)srv;
    (void)via;
    (void)caller;
    srv_session *s = calloc(1, sizeof *s);
    if (s != NULL) {
        s->refs = 1;
        atomic_fetch_add(&dbl_sessions, 1);
    }
    return s;
}

void srv_session_set_notify(srv_session *s, srv_out *notify)
{
    if (notify != NULL)
        srv_out_ref(notify);
    if (s->notify != NULL)
        srv_out_unref(s->notify);
    s->notify = notify;
}

void srv_session_end(srv_session *s)
{
    s->ended = 1;
    atomic_fetch_add(&dbl_ended, 1);
}

void srv_session_release(srv_session *s)
{
    if (--s->refs > 0)
        return;
    if (s->notify != NULL)
        srv_out_unref(s->notify);
    if (s->flood)
        atomic_fetch_sub(&dbl_flood_sessions, 1);
    atomic_fetch_sub(&dbl_sessions, 1);
    free(s);
}

const char *srv_session_version(const srv_session *s)
{
    return s->version;
}

int srv_session_initialized(const srv_session *s)
{
    return s->initialized;
}

/* ------------------------------------------------------------ requests */

/* Counts a flood request and marks its out and session as carrying one. */
static void flood_mark(srv_session *s, srv_out *out)
{
    atomic_fetch_add(&dbl_floods, 1);
    if (!s->flood) {
        s->flood = 1;
        atomic_fetch_add(&dbl_flood_sessions, 1);
    }
    int free_at = -1;
    for (int i = 0; i < FLOOD_OUTS; i++) {
        if (flood_outs[i] == out)
            return;
        if (flood_outs[i] == NULL && free_at < 0)
            free_at = i;
    }
    if (free_at < 0) { /* never silently untracked: a test would pass */
        fprintf(stderr, "core_double: more than %d flood outs alive\n",
                FLOOD_OUTS);
        abort();
    }
    flood_outs[free_at] = out;
    atomic_fetch_add(&dbl_flood_outs, 1);
}

static void on_job(uv_timer_t *t)
{
    job *j = t->data;
    if (j->kind == 0 && j->left > 0) {
        j->left--;
        send_json(j->out, SRV_MSG_NOTIFICATION,
                  json_pack("{s:s,s:s,s:{s:i}}", "jsonrpc", "2.0", "method",
                            "notifications/progress", "params", "left",
                            j->left));
        return;
    }
    if (j->kind == 2) {
        char *text = malloc((size_t)j->size + 64);
        if (text != NULL) {
            memcpy(text, "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"",
                   39);
            memset(text + 39, 'x', (size_t)j->size);
            memcpy(text + 39 + j->size, "\"}", 3);
            int rc = send_text(j->out, SRV_MSG_NOTIFICATION, text);
            free(text);
            if (rc == 0 && !j->out->closed)
                return;
        }
    }
    respond(j->out, j->id, json_pack("{s:b}", "done", 1));
    job_finish(j);
}

static void start_job(tg__srv *srv, srv_out *out, json_t *id, int kind, long ms,
                      int notes, long size, bool modern)
{
    job *j = calloc(1, sizeof *j);
    if (j == NULL)
        return;
    j->srv = srv;
    j->out = out;
    srv_out_ref(out);
    j->id = json_incref(id);
    j->kind = kind;
    j->left = notes;
    j->size = size;
    j->canceled = modern; /* what srv_out_closed does to it */
    j->next = jobs;
    jobs = j;
    uv_timer_init(&srv->loop, &j->timer);
    j->timer.data = j;
    long step = kind == 0 ? ms / (notes + 1) : kind == 1 ? ms : 1;
    uv_timer_start(&j->timer, on_job, (uint64_t)step, (uint64_t)step);
}

void srv_handle(tg__srv *srv, srv_session *s, const char *body, size_t len,
                srv_out *out, const srv_http_info *http, srv_answer *ans)
{
    (void)http;
    memset(ans, 0, sizeof *ans);
    ans->http_status = 200;
    json_t *msg = json_loadb(body, len, 0, NULL); /* new ref */
    if (!json_is_object(msg)) {
        respond_error(out, NULL, -32700, "Parse error");
        ans->http_status = 400;
        json_decref(msg);
        return;
    }
    json_t *id = json_object_get(msg, "id"); /* borrowed */
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *params = json_object_get(msg, "params"); /* borrowed */
    const char *meta_version = json_string_value(
        json_object_get(json_object_get(params, "_meta"),
                        "io.modelcontextprotocol/protocolVersion"));
    bool modern =
        meta_version != NULL && strcmp(meta_version, "2026-07-28") == 0;
    if (method == NULL || id == NULL) {
        ans->http_status = 202; /* a notification or a response */
        json_decref(msg);
        return;
    }
    if (strcmp(method, "initialize") == 0 && !modern) {
        const char *v =
            json_string_value(json_object_get(params, "protocolVersion"));
        s->version = v != NULL && strcmp(v, "2025-11-25") == 0 ? "2025-11-25"
                                                               : "2025-06-18";
        s->initialized = 1;
        respond(out, id, json_pack("{s:s}", "protocolVersion", s->version));
        ans->initialized = true;
    } else if (!modern && !s->initialized) {
        respond_error(out, id, -32600, "Bad Request: Server not initialized");
        ans->http_status = 400;
    } else if (strcmp(method, "echo") == 0) {
        respond(out, id, json_incref(params ? params : json_null()));
    } else if (strcmp(method, "slow") == 0 || strcmp(method, "wait") == 0 ||
               strcmp(method, "flood") == 0) {
        int kind = method[0] == 's' ? 0 : method[0] == 'w' ? 1 : 2;
        if (kind == 2)
            flood_mark(s, out);
        long ms = (long)json_integer_value(json_object_get(params, "ms"));
        int notes = (int)json_integer_value(json_object_get(params, "notes"));
        long size = (long)json_integer_value(json_object_get(params, "size"));
        start_job(srv, out, id, kind, ms > 0 ? ms : 1, notes, size, modern);
        ans->pending = 1;
        ans->streams = kind != 1;
    } else if (strcmp(method, "notify") == 0) {
        if (s->notify != NULL)
            send_json(s->notify, SRV_MSG_NOTIFICATION,
                      json_pack("{s:s,s:s,s:O}", "jsonrpc", "2.0", "method",
                                "notifications/message", "params", params));
        respond(out, id, json_pack("{s:b}", "sent", s->notify != NULL));
    } else {
        respond_error(out, id, -32601, "Method not found");
        ans->http_status = modern ? 404 : 200;
    }
    json_decref(msg);
}

/* ------------------------------------------------------------ server */

bool srv_journaled(const tg__srv *srv)
{
    (void)srv;
    return false;
}

void srv_step_now(tg__srv *srv)
{
    (void)srv; /* the double's jobs run on their own timers */
}

tg__srv *dbl_srv_new(void)
{
    tg__srv *srv = calloc(1, sizeof *srv);
    if (srv != NULL && uv_loop_init(&srv->loop) != 0) {
        free(srv);
        return NULL;
    }
    return srv;
}

void dbl_srv_free(tg__srv *srv)
{
    for (job *j = jobs, *next; j != NULL; j = next) {
        next = j->next;
        job_finish(j);
    }
    uv_run(&srv->loop, UV_RUN_NOWAIT);
    uv_loop_close(&srv->loop);
    free(srv);
}

void dbl_srv_stop(tg__srv *srv)
{
    srv->stopping = 1;
}

uv_loop_t *srv_loop(tg__srv *srv)
{
    return &srv->loop;
}

int srv_stopping(const tg__srv *srv)
{
    return srv->stopping;
}
