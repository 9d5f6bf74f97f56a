/* SPDX-License-Identifier: MIT */
/*
 * session.c - an MCP client session over one transport (session.h): the
 * negotiation, the table of outstanding requests with their deadlines, the
 * answers to the server's requests, the routing of its notifications, and
 * tools/list and tools/call on top.
 *
 * Negotiation: unless an older version is forced, the session first probes
 * with server/discover carrying 2026-07-28 in its _meta. A DiscoverResult
 * that lists 2026-07-28 makes the session stateless: every later request
 * carries version, capabilities and client info in params._meta. Any other
 * answer - a result without it, any error, or no answer within half the
 * connect deadline - falls back to initialize offering the newest
 * initialize-family version the server listed (else 2025-11-25), as the
 * 2026-07-28 stdio text asks; the server's answer names the version, then
 * notifications/initialized goes out.
 *
 * Requests carry integer ids the session allocates (1, 2, ...); a response
 * is matched by id in the outstanding list, and one with an unknown id (a
 * duplicate, a late answer after a deadline or a cancel) is logged and
 * dropped. One timer on the loop stands for the nearest deadline. Server
 * messages are read with the JSON-RPC reader (mcp/jsonrpc.h) on the token
 * tape; only small parts (params of notifications, tool definitions) are
 * turned into jansson values.
 */
#include "session.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "json_out.h"
#include "jsonrpc.h"
#include "jtape.h"
#include "toolgate.h"

typedef enum req_kind {
    REQ_DISCOVER = 1,
    REQ_INITIALIZE,
    REQ_LIST,
    REQ_CALL
} req_kind;

typedef struct list_job {
    tg__rlist_cb cb;
    void *ud;
    tg__rtool_list acc;
    size_t cap;
    size_t pages;
    char *cursor; /* the cursor of the page asked for, NULL for the first */
} list_job;

/* An outstanding request. A call keeps its key (its first request's id,
 * the caller's handle) across the retries of multi round-trip requests
 * (2026-07-28: a result asking for input, answered by sending the call
 * again under a new id); id is the request in flight, 0 while the call
 * waits for the owner's answers. */
typedef struct pending {
    struct pending *next, *prev;
    uint64_t id;
    uint64_t key;
    req_kind kind;
    uint64_t deadline; /* uv_now() ms; 0: none */
    tg__rcall_cbs cbs; /* REQ_CALL */
    void *ud;
    list_job *list;          /* REQ_LIST */
    tg__mcp_version offered; /* REQ_INITIALIZE */
    /* REQ_CALL under 2026-07-28: what a retry needs */
    json_t *params;    /* the call's params (new ref) */
    char *params_text; /* or their text, made json_t on a retry (owned) */
    json_t *responses; /* inputResponses being collected (new ref) */
    json_t *state;     /* the server's requestState (new ref) */
    int waiting;       /* elicitations not answered yet */
    int rounds;        /* results that asked for input */
    bool collecting;   /* answering an InputRequiredResult right now */
    tg_error late;     /* code != 0: end with this at the next timer */
} pending;

#define MAX_INPUT_ROUNDS 8

/* An elicitation waiting for the owner's answer: a server's
 * elicitation/create request (id_json), or an input request of a call's
 * InputRequiredResult (call_key, input_key). */
typedef struct elicit {
    struct elicit *next;
    uint64_t ticket;
    char *id_json; /* the server's request id as it wrote it, or NULL */
    uint64_t call_key;
    char *input_key; /* the key of inputRequests to answer under */
} elicit;

typedef enum state { S_NEW = 0, S_CONNECTING, S_READY, S_CLOSING } state;

struct tg__rsession {
    uv_loop_t *loop;
    tg__rsession_cbs cbs;
    void *ud;
    tg__rtransport *t;
    state st;
    bool ready_told;
    bool timer_on;
    uv_timer_t timer;
    char *client_name, *client_version;
    char *meta_text;   /* modern_meta's text without its '}' (owned) */
    unsigned meta_key; /* what meta_text was made for (meta_text_of) */
    tg__mcp_version want, version;
    tg__mcp_version offering; /* the version of the initialize sent */
    char **root_uri, **root_name;
    size_t nroots;
    unsigned connect_ms, list_ms;
    size_t max_tools, max_pages;
    bool cancel_by_drop;
    pending *reqs;
    elicit *elicits;
    uint64_t next_id, next_ticket;
    uint64_t connect_deadline;
    char *caps, *server_info, *instructions;
    /* what went wrong with the server's output, for the connect error */
    size_t bad_messages;
    char first_bad[160];
};

static void session_log(tg__rsession *s, const char *level, const char *fmt,
                        ...) TG__PRINTF(3, 4);

static void session_log(tg__rsession *s, const char *level, const char *fmt,
                        ...)
{
    if (s->cbs.log == NULL)
        return;
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof text ? (size_t)n : sizeof text - 1;
    s->cbs.log(s->ud, TG_RLOG_SESSION, level, text, len);
}

/* ------------------------------------------------------------ helpers */

static char *dup_or_null(const char *p)
{
    return p != NULL ? strdup(p) : NULL;
}

/* A compact JSON text of v (new string), NULL on out of memory. */
static char *dump(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static json_t *implementation_json(const tg__rsession *s)
{
    return json_pack("{s:s, s:s}", "name", s->client_name, "version",
                     s->client_version); /* new ref */
}

/* The client capabilities declared under version v (new ref). */
static json_t *client_caps_json(const tg__rsession *s, tg__mcp_version v)
{
    json_t *caps = json_object(); /* new ref */
    if (caps == NULL)
        return NULL;
    if (s->nroots > 0) {
        json_t *roots = v == TG_MCP_V2026_07_28
                            ? json_object()
                            : json_pack("{s:b}", "listChanged", 0);
        json_object_set_new(caps, "roots", roots);
    }
    if (s->cbs.elicit != NULL) {
        json_t *el = v == TG_MCP_V2025_06_18 ? json_object()
                                             : json_pack("{s:{}}", "form");
        json_object_set_new(caps, "elicitation", el);
    }
    return caps;
}

/* The request _meta of 2026-07-28 (new ref). */
static json_t *modern_meta(const tg__rsession *s)
{
    return json_pack(
        "{s:s, s:o, s:o}", "io.modelcontextprotocol/protocolVersion",
        tg__mcp_version_name(TG_MCP_V2026_07_28),
        "io.modelcontextprotocol/clientCapabilities",
        client_caps_json(s, TG_MCP_V2026_07_28),
        "io.modelcontextprotocol/clientInfo", implementation_json(s));
}

static bool modern(const tg__rsession *s)
{
    return s->version == TG_MCP_V2026_07_28;
}

/* modern_meta(s) as text without its closing '}', kept while what it
 * depends on (roots, an elicit callback) stays; NULL on out of memory.
 * Borrowed from s. */
static const char *meta_text_of(tg__rsession *s)
{
    unsigned key =
        1u | (s->nroots > 0 ? 2u : 0u) | (s->cbs.elicit != NULL ? 4u : 0u);
    if (s->meta_text != NULL && s->meta_key == key)
        return s->meta_text;
    free(s->meta_text);
    json_t *m = modern_meta(s); /* new ref */
    s->meta_text = m != NULL ? dump(m) : NULL;
    json_decref(m);
    if (s->meta_text == NULL)
        return NULL;
    s->meta_text[strlen(s->meta_text) - 1] = '\0';
    s->meta_key = key;
    return s->meta_text;
}

/* ------------------------------------------------------------ requests */

static void free_pending(pending *p)
{
    json_decref(p->params);
    free(p->params_text);
    json_decref(p->responses);
    json_decref(p->state);
    free(p);
}

/* The request in flight with id `id` (never one waiting, id 0). */
static pending *find_pending(tg__rsession *s, uint64_t id)
{
    for (pending *p = s->reqs; p != NULL && id != 0; p = p->next)
        if (p->id == id)
            return p;
    return NULL;
}

/* The call with key `key`, in flight or waiting. */
static pending *find_call(tg__rsession *s, uint64_t key)
{
    for (pending *p = s->reqs; p != NULL; p = p->next)
        if (p->kind == REQ_CALL && p->key == key)
            return p;
    return NULL;
}

static void link_pending(tg__rsession *s, pending *p)
{
    p->prev = NULL;
    p->next = s->reqs;
    if (s->reqs != NULL)
        s->reqs->prev = p;
    s->reqs = p;
}

static void unlink_pending(tg__rsession *s, pending *p)
{
    if (p->prev != NULL)
        p->prev->next = p->next;
    else
        s->reqs = p->next;
    if (p->next != NULL)
        p->next->prev = p->prev;
    p->next = p->prev = NULL;
}

static void on_timer(uv_timer_t *timer);

/* Arms the timer for the nearest deadline. */
static void rearm(tg__rsession *s)
{
    if (!s->timer_on)
        return;
    uint64_t nearest = 0;
    for (pending *p = s->reqs; p != NULL; p = p->next)
        if (p->deadline != 0 && (nearest == 0 || p->deadline < nearest))
            nearest = p->deadline;
    if (nearest == 0) {
        uv_timer_stop(&s->timer);
        return;
    }
    uint64_t now = uv_now(s->loop);
    uv_timer_start(&s->timer, on_timer, nearest > now ? nearest - now : 0, 0);
}

static uint64_t deadline_in(tg__rsession *s, unsigned ms)
{
    return ms == 0 ? 0 : uv_now(s->loop) + ms;
}

/* Sends one message; m's fields as transport.h says. */
static int send_text(tg__rsession *s, tg__buf *msg, const char *method,
                     const char *name, const char *id, tg_error *err)
{
    /* The version the message speaks: the negotiated one; for the
     * server/discover probe the 2026-07-28 its _meta names (HTTP sends it
     * as MCP-Protocol-Version, which must match); none before initialize
     * is answered. */
    tg__mcp_version v = s->version;
    if (v == TG_MCP_VERSION_UNKNOWN && method != NULL &&
        strcmp(method, "server/discover") == 0)
        v = TG_MCP_V2026_07_28;
    /* initialize speaks the version it offers: not the probe's 2026-07-28
     * (HTTP would then keep no Mcp-Session-Id from its answer) */
    if (v == TG_MCP_VERSION_UNKNOWN && method != NULL &&
        strcmp(method, "initialize") == 0)
        v = s->offering;
    tg__rsend m = {.method = method,
                   .name = name,
                   .id = id,
                   .protocol_version = v != TG_MCP_VERSION_UNKNOWN
                                           ? tg__mcp_version_name(v)
                                           : NULL};
    return tg__rtransport_send(s->t, msg->data, msg->len, &m, err);
}

/* Sends request p (its id set) with the params text ptext[0..plen) and
 * records it (the caller still owns p on failure); `name` is the tool a
 * tools/call names, for the transport's log. Returns 0 or an error. */
static int send_params_text(tg__rsession *s, const char *method,
                            const char *name, const char *ptext, size_t plen,
                            pending *p, tg_error *err)
{
    char small[1024]; /* most requests fit: no allocation */
    tg__buf msg;
    tg__buf_init_with(&msg, small, sizeof small, 0);
    char idtext[24];
    snprintf(idtext, sizeof idtext, "%llu", (unsigned long long)p->id);
    tg__rpc_id id = {.kind = TG_RPC_ID_INT, .num = (long long)p->id};
    int rc = tg__rpc_write_request(&msg, &id, method, ptext, plen);
    if (rc != 0)
        tg__error_set(err, rc, "out of memory");
    else if ((rc = send_text(s, &msg, method, name, idtext, err)) == 0) {
        link_pending(s, p);
        rearm(s);
    }
    tg__buf_cleanup(&msg);
    return rc;
}

/* Sends request `method` with params (stolen; NULL: {}), under a new id,
 * and records it as p (filled by the caller but for id; the caller still
 * owns p on failure). Under 2026-07-28 params gets the request _meta (progress:
 * a progressToken equal to the id). Returns 0 or an error. */
static int send_request(tg__rsession *s, const char *method, json_t *params,
                        pending *p, bool progress, tg_error *err)
{
    int rc = TG_ENOMEM;
    char *ptext = NULL;
    p->id = ++s->next_id;
    if (params == NULL && (params = json_object()) == NULL)
        goto fail;
    if (modern(s) || progress || p->kind == REQ_DISCOVER) {
        json_t *meta = modern(s) || p->kind == REQ_DISCOVER
                           ? modern_meta(s)
                           : json_object(); /* new ref */
        if (meta == NULL)
            goto fail;
        if (progress)
            json_object_set_new(meta, "progressToken",
                                json_integer((json_int_t)p->id));
        json_object_set_new(params, "_meta", meta);
    }
    if ((ptext = dump(params)) == NULL)
        goto fail;
    const char *name = NULL;
    json_t *jn = json_object_get(params, "name"); /* borrowed */
    if (p->kind == REQ_CALL && json_is_string(jn))
        name = json_string_value(jn);
    rc = send_params_text(s, method, name, ptext, strlen(ptext), p, err);
    goto done;
fail:
    tg__error_set(err, rc, "out of memory");
done:
    free(ptext);
    json_decref(params);
    return rc;
}

/* Tells the server that request p is abandoned. */
static void send_cancel(tg__rsession *s, const pending *p, const char *reason)
{
    char idtext[24];
    snprintf(idtext, sizeof idtext, "%llu", (unsigned long long)p->id);
    if (modern(s))
        tg__rtransport_drop(s->t, idtext);
    if (modern(s) && s->cancel_by_drop)
        return;
    json_t *params = json_pack("{s:I, s:s}", "requestId", (json_int_t)p->id,
                               "reason", reason != NULL ? reason : "");
    char *ptext = params != NULL ? dump(params) : NULL;
    json_decref(params);
    tg__buf msg;
    tg__buf_init(&msg, 0);
    tg_error e;
    if (ptext != NULL &&
        tg__rpc_write_notification(&msg, "notifications/cancelled", ptext,
                                   strlen(ptext)) == 0 &&
        send_text(s, &msg, "notifications/cancelled", NULL, NULL, &e) != 0)
        session_log(s, "warning", "could not send notifications/cancelled: %s",
                    e.message);
    free(ptext);
    tg__buf_cleanup(&msg);
}

/* ------------------------------------------------------------ ending */

static void free_tools(tg__rtool *tools, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tg__rtool *t = &tools[i];
        free(t->name);
        free(t->title);
        free(t->description);
        free(t->input_schema);
        free(t->output_schema);
        free(t->annotations);
        free(t->json);
    }
    free(tools);
}

static void list_job_free(list_job *job)
{
    if (job == NULL)
        return;
    free(job->cursor);
    free_tools(job->acc.tools, job->acc.n);
    free(job);
}

static void tell_ready(tg__rsession *s, const tg_error *err)
{
    if (s->ready_told)
        return;
    s->ready_told = true;
    if (s->cbs.ready != NULL)
        s->cbs.ready(s->ud, err);
}

/* Ends request p (unlinked already) with err: its owner is told. */
static void end_pending(tg__rsession *s, pending *p, tg__rcall_status status,
                        const tg_error *err)
{
    switch (p->kind) {
    case REQ_CALL:
        if (p->cbs.done != NULL) {
            tg__rcall_end end = {.status = status, .err = err};
            p->cbs.done(p->ud, &end);
        }
        break;
    case REQ_LIST:
        p->list->cb(p->list->ud, NULL, err);
        list_job_free(p->list);
        break;
    default:
        break;
    }
    free_pending(p);
}

/* The negotiation failed: the owner is told, the session closes. */
static void connect_failed(tg__rsession *s, const tg_error *err)
{
    tell_ready(s, err);
    tg__rsession_close(s);
}

static void free_session(tg__rsession *s)
{
    for (size_t i = 0; i < s->nroots; i++) {
        free(s->root_uri[i]);
        free(s->root_name[i]);
    }
    free(s->root_uri);
    free(s->root_name);
    while (s->elicits != NULL) {
        elicit *e = s->elicits;
        s->elicits = e->next;
        free(e->id_json);
        free(e->input_key);
        free(e);
    }
    free(s->meta_text);
    free(s->client_name);
    free(s->client_version);
    free(s->caps);
    free(s->server_info);
    free(s->instructions);
    free(s);
}

static void on_timer_closed(uv_handle_t *h)
{
    free_session(h->data);
}

static void on_closed(void *ud, const tg_error *terr)
{
    tg__rsession *s = ud;
    s->st = S_CLOSING;
    s->t = NULL;
    tg_error e;
    if (terr->code != 0)
        tg__error_set(&e, terr->code, "the MCP server's connection ended: %s",
                      terr->message);
    else
        tg__error_set(&e, TG_EIO, "the MCP session was closed");
    if (!s->ready_told) {
        tg_error c;
        tg__error_set(&c, e.code,
                      "the MCP session ended before it was ready: %s%s%s",
                      terr->code != 0 ? terr->message : "it was closed",
                      s->bad_messages > 0 ? "; the server wrote " : "",
                      s->bad_messages > 0 ? s->first_bad : "");
        tell_ready(s, &c);
    }
    while (s->reqs != NULL) {
        pending *p = s->reqs;
        unlink_pending(s, p);
        end_pending(s, p, TG_RCALL_FAILED, &e);
    }
    s->cbs.closed(s->ud, terr);
    if (s->timer_on) {
        uv_timer_stop(&s->timer);
        s->timer.data = s;
        uv_close((uv_handle_t *)&s->timer, on_timer_closed);
    } else {
        free_session(s);
    }
}

/* ------------------------------------------------------------ negotiation */

static int send_initialize(tg__rsession *s, tg__mcp_version v, tg_error *err);

static void ready_with(tg__rsession *s, tg__mcp_version v, json_t *result,
                       json_t *server_info)
{
    s->version = v;
    json_t *caps = json_object_get(result, "capabilities"); /* borrowed */
    json_t *ins = json_object_get(result, "instructions");  /* borrowed */
    s->caps = json_is_object(caps) ? dump(caps) : strdup("{}");
    s->server_info =
        json_is_object(server_info) ? dump(server_info) : strdup("{}");
    s->instructions =
        json_is_string(ins) ? strdup(json_string_value(ins)) : NULL;
    if (s->caps == NULL || s->server_info == NULL) {
        tg_error e;
        tg__error_set(&e, TG_ENOMEM, "out of memory");
        connect_failed(s, &e);
        return;
    }
    s->st = S_READY;
    tell_ready(s, NULL);
}

/* The newest initialize-family version in the JSON array `supported` that
 * the session may speak, or TG_MCP_VERSION_LATEST_INITIALIZE. */
static tg__mcp_version pick_initialize(const tg__rsession *s,
                                       const json_t *supported)
{
    tg__mcp_version best = TG_MCP_VERSION_UNKNOWN;
    size_t i;
    json_t *v;
    json_array_foreach(supported, i, v)
    {
        if (!json_is_string(v))
            continue;
        tg__mcp_version x = tg__mcp_version_from_name(json_string_value(v),
                                                      json_string_length(v));
        const tg__mcp_traits *tr = tg__mcp_traits_of(x);
        if (tr != NULL && tr->spoken && tr->initialize && x > best &&
            (s->want == TG_MCP_VERSION_UNKNOWN || x == s->want))
            best = x;
    }
    return best != TG_MCP_VERSION_UNKNOWN ? best
                                          : TG_MCP_VERSION_LATEST_INITIALIZE;
}

static void fall_back(tg__rsession *s, const json_t *supported, const char *why)
{
    tg_error e;
    if (s->want == TG_MCP_V2026_07_28) {
        tg__error_set(&e, TG_EIO,
                      "the MCP server does not speak 2026-07-28: %s", why);
        connect_failed(s, &e);
        return;
    }
    session_log(s, "info", "server/discover: %s; trying initialize", why);
    if (send_initialize(s, pick_initialize(s, supported), &e) != 0)
        connect_failed(s, &e);
}

static void on_discover(tg__rsession *s, json_t *result)
{
    json_t *sv = json_object_get(result, "supportedVersions"); /* borrowed */
    size_t i;
    json_t *v;
    json_array_foreach(sv, i, v)
    {
        if (json_is_string(v) &&
            tg__mcp_version_from_name(json_string_value(v),
                                      json_string_length(v)) ==
                TG_MCP_V2026_07_28) {
            json_t *info = json_object_get(
                json_object_get(result, "_meta"),
                "io.modelcontextprotocol/serverInfo"); /* borrowed */
            ready_with(s, TG_MCP_V2026_07_28, result, info);
            return;
        }
    }
    fall_back(s, sv, "its supportedVersions do not list 2026-07-28");
}

static void on_initialize(tg__rsession *s, const pending *p, json_t *result)
{
    tg_error e;
    json_t *pv = json_object_get(result, "protocolVersion"); /* borrowed */
    tg__mcp_version v = json_is_string(pv)
                            ? tg__mcp_version_from_name(json_string_value(pv),
                                                        json_string_length(pv))
                            : TG_MCP_VERSION_UNKNOWN;
    const tg__mcp_traits *tr = tg__mcp_traits_of(v);
    char shown[TG__SHOWN_ID_SIZE];
    if (tr == NULL || !tr->spoken || !tr->initialize) {
        tg__error_set(&e, TG_EIO,
                      "the MCP server answered initialize with protocol "
                      "version '%s', which toolgate does not speak",
                      json_is_string(pv) ? tg__text_show(json_string_value(pv),
                                                         shown, sizeof shown)
                                         : "(none)");
        connect_failed(s, &e);
        return;
    }
    if (s->want != TG_MCP_VERSION_UNKNOWN && v != s->want) {
        tg__error_set(&e, TG_EIO,
                      "the MCP server answered initialize with %s, not the "
                      "%s asked for",
                      tr->name, tg__mcp_version_name(s->want));
        connect_failed(s, &e);
        return;
    }
    (void)p;
    s->version = v;
    tg__buf msg;
    tg__buf_init(&msg, 0);
    if (tg__rpc_write_notification(&msg, "notifications/initialized", NULL,
                                   0) != 0 ||
        send_text(s, &msg, "notifications/initialized", NULL, NULL, &e) != 0) {
        tg__buf_cleanup(&msg);
        if (e.code == 0)
            tg__error_set(&e, TG_ENOMEM, "out of memory");
        connect_failed(s, &e);
        return;
    }
    tg__buf_cleanup(&msg);
    ready_with(s, v, result, json_object_get(result, "serverInfo"));
}

static int send_initialize(tg__rsession *s, tg__mcp_version v, tg_error *err)
{
    pending *p = calloc(1, sizeof *p);
    json_t *params =
        json_pack("{s:s, s:o, s:o}", "protocolVersion", tg__mcp_version_name(v),
                  "capabilities", client_caps_json(s, v), "clientInfo",
                  implementation_json(s)); /* new ref */
    if (p == NULL || params == NULL) {
        free_pending(p);
        json_decref(params);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    p->kind = REQ_INITIALIZE;
    p->offered = v;
    s->offering = v;
    p->deadline = s->connect_deadline;
    int rc = send_request(s, "initialize", params, p, false, err);
    if (rc != 0)
        free_pending(p);
    return rc;
}

static int send_discover(tg__rsession *s, tg_error *err)
{
    pending *p = calloc(1, sizeof *p);
    if (p == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    p->kind = REQ_DISCOVER;
    /* A legacy server may ignore the probe: it gets half the time, unless
     * nothing older may follow. */
    unsigned ms =
        s->want == TG_MCP_V2026_07_28 ? s->connect_ms : s->connect_ms / 2;
    p->deadline = deadline_in(s, ms > 0 ? ms : 1);
    int rc = send_request(s, "server/discover", NULL, p, false, err);
    if (rc != 0)
        free_pending(p);
    return rc;
}

/* ------------------------------------------------------------ tools/list */

static int send_list_page(tg__rsession *s, list_job *job, tg_error *err);

/* Copies one tool definition (the value v of the batch) into the job; 0, 1
 * when it was skipped, TG_ENOMEM. */
static int take_tool(tg__rsession *s, list_job *job, const tg__rpc_batch *b,
                     const tg__rpc_value *v)
{
    json_t *tool = tg__rpc_value_json(b, v); /* new ref */
    if (tool == NULL)
        return TG_ENOMEM;
    json_t *name = json_object_get(tool, "name");        /* borrowed */
    json_t *in = json_object_get(tool, "inputSchema");   /* borrowed */
    json_t *title = json_object_get(tool, "title");      /* borrowed */
    json_t *desc = json_object_get(tool, "description"); /* borrowed */
    json_t *out = json_object_get(tool, "outputSchema"); /* borrowed */
    json_t *ann = json_object_get(tool, "annotations");  /* borrowed */
    if (!json_is_string(name) || json_string_length(name) == 0 ||
        strlen(json_string_value(name)) != json_string_length(name) ||
        !json_is_object(in)) {
        char shown[TG__SHOWN_ID_SIZE];
        session_log(
            s, "warning",
            "tools/list: a tool definition without a name or an "
            "inputSchema object was dropped (name: %s)",
            json_is_string(name)
                ? tg__text_show(json_string_value(name), shown, sizeof shown)
                : "none");
        json_decref(tool);
        job->acc.skipped++;
        return 1;
    }
    if (job->acc.n == job->cap) {
        size_t cap = job->cap ? job->cap * 2 : 32;
        tg__rtool *grown = realloc(job->acc.tools, cap * sizeof *grown);
        if (grown == NULL) {
            json_decref(tool);
            return TG_ENOMEM;
        }
        job->acc.tools = grown;
        job->cap = cap;
    }
    tg__rtool *t = &job->acc.tools[job->acc.n];
    memset(t, 0, sizeof *t);
    job->acc.n++; /* counted now: list_job_free frees what was set */
    t->name = strdup(json_string_value(name));
    t->input_schema = dump(in);
    t->json = strndup(v->json, v->len);
    int rc = t->name && t->input_schema && t->json ? 0 : TG_ENOMEM;
    if (json_is_string(title) && !(t->title = strdup(json_string_value(title))))
        rc = TG_ENOMEM;
    if (json_is_string(desc) &&
        !(t->description = strdup(json_string_value(desc))))
        rc = TG_ENOMEM;
    if (out != NULL && !(t->output_schema = dump(out)))
        rc = TG_ENOMEM;
    if (ann != NULL && !(t->annotations = dump(ann)))
        rc = TG_ENOMEM;
    json_decref(tool);
    return rc;
}

/* A page of tools/list arrived (p unlinked): takes its tools, asks for the
 * next page or ends the job. */
static void on_list_page(tg__rsession *s, pending *p, const tg__rpc_batch *b,
                         const tg__rpc_value *result)
{
    list_job *job = p->list;
    tg_error e;
    tg__error_clear(&e);
    const char *tools_path[] = {"tools"}, *cursor_path[] = {"nextCursor"};
    tg__rpc_value tools, cur, v;
    if (result->kind != TG_JT_OBJECT ||
        !tg__rpc_value_find(b, result, tools_path, 1, &tools) ||
        tools.kind != TG_JT_ARRAY) {
        tg__error_set(&e, TG_EIO,
                      "the MCP server's tools/list result has no tools array");
        goto fail;
    }
    size_t c = 0;
    while (tg__rpc_array_next(b, &tools, &c, &v)) {
        if (job->acc.n >= s->max_tools) {
            tg__error_set(&e, TG_ELIMIT,
                          "the MCP server lists more than %zu tools (the "
                          "limit)",
                          s->max_tools);
            goto fail;
        }
        if (v.kind != TG_JT_OBJECT) {
            session_log(s, "warning",
                        "tools/list: a tool that is not an object was "
                        "dropped");
            job->acc.skipped++;
            continue;
        }
        int rc = take_tool(s, job, b, &v);
        if (rc < 0) {
            tg__error_set(&e, rc, "out of memory reading tools/list");
            goto fail;
        }
    }
    job->pages++;
    if (tg__rpc_value_find(b, result, cursor_path, 1, &cur) &&
        cur.kind == TG_JT_STRING) {
        tg__buf cb;
        tg__buf_init(&cb, 0);
        if (tg__rpc_value_string(b, &cur, &cb) != 0) {
            tg__buf_cleanup(&cb);
            tg__error_set(&e, TG_ENOMEM, "out of memory reading tools/list");
            goto fail;
        }
        const char *next = tg__buf_cstr(&cb);
        if (job->pages >= s->max_pages) {
            tg__error_set(&e, TG_ELIMIT,
                          "the MCP server's tools/list goes on past %zu pages "
                          "(the limit)",
                          s->max_pages);
        } else if (job->cursor != NULL && strcmp(job->cursor, next) == 0) {
            tg__error_set(&e, TG_EIO,
                          "the MCP server's tools/list gave the same "
                          "nextCursor twice");
        } else {
            free(job->cursor);
            job->cursor = tg__buf_take(&cb);
            if (job->cursor == NULL)
                tg__error_set(&e, TG_ENOMEM, "out of memory");
        }
        tg__buf_cleanup(&cb);
        if (e.code != 0)
            goto fail;
        free_pending(p);
        if (send_list_page(s, job, &e) != 0) {
            job->cb(job->ud, NULL, &e);
            list_job_free(job);
        }
        return;
    }
    tg__rtool_list *list = malloc(sizeof *list);
    if (list == NULL) {
        tg__error_set(&e, TG_ENOMEM, "out of memory");
        goto fail;
    }
    *list = job->acc;
    memset(&job->acc, 0, sizeof job->acc);
    free_pending(p);
    job->cb(job->ud, list, NULL);
    list_job_free(job);
    return;
fail:
    end_pending(s, p, TG_RCALL_FAILED, &e);
}

static int send_list_page(tg__rsession *s, list_job *job, tg_error *err)
{
    pending *p = calloc(1, sizeof *p);
    json_t *params = job->cursor != NULL
                         ? json_pack("{s:s}", "cursor", job->cursor)
                         : json_object(); /* new ref */
    if (p == NULL || params == NULL) {
        free_pending(p);
        json_decref(params);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    p->kind = REQ_LIST;
    p->list = job;
    p->deadline = deadline_in(s, s->list_ms);
    int rc = send_request(s, "tools/list", params, p, false, err);
    if (rc != 0)
        free_pending(p); /* the job stays the caller's */
    return rc;
}

int tg__rsession_list_tools(tg__rsession *s, tg__rlist_cb cb, void *ud,
                            tg_error *err)
{
    if (s->st != S_READY)
        return tg__error_set(err, TG_EIO, "the MCP session is not ready");
    list_job *job = calloc(1, sizeof *job);
    if (job == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    job->cb = cb;
    job->ud = ud;
    int rc = send_list_page(s, job, err);
    if (rc != 0)
        list_job_free(job);
    return rc;
}

void tg__rtool_list_free(tg__rtool_list *list)
{
    if (list == NULL)
        return;
    free_tools(list->tools, list->n);
    free(list);
}

/* ------------------------------------------------------------ tools/call */

/* Whether args[0..len) is a JSON object that json_loadb takes with
 * JSON_REJECT_DUPLICATES and json_dumps writes back as it is. */
static bool args_as_dumped(const char *args, size_t len)
{
    tg__jtok st[128];
    tg__jtape t;
    if (tg__jtape_parse_in(args, len, st, 128, &t, NULL) != 0)
        return false;
    bool ok = t.tok[0].kind == TG_JT_OBJECT && tg__jtape_is_dump_form(&t);
    tg__jtape_free(&t);
    return ok;
}

/* tools/call the common way: when the arguments' text is what jansson
 * would write, the params are written as text around it (in the order
 * and form send_request writes them), without a json_t. p is filled but
 * for its id; the caller still owns it on failure. Returns 0, 1 when the
 * caller must take the jansson way, or an error. */
static int call_as_text(tg__rsession *s, const tg__rcall_args *a, pending *p,
                        bool progress, tg_error *err)
{
    if (a->arguments != NULL && !args_as_dumped(a->arguments, a->arguments_len))
        return 1;
    const char *meta = modern(s) ? meta_text_of(s) : NULL;
    char small[1024];
    tg__buf b;
    tg__buf_init_with(&b, small, sizeof small, 0);
    int rc = tg__buf_puts(&b, "{\"name\":");
    if (rc == 0)
        rc = tg__json_string(&b, a->name, strlen(a->name));
    if (rc == 0 && a->arguments != NULL &&
        (rc = tg__buf_puts(&b, ",\"arguments\":")) == 0)
        rc = tg__buf_append(&b, a->arguments, a->arguments_len);
    size_t call_len = b.len; /* the params of a retry, but for '}' */
    if (rc == 0 && modern(s) && meta == NULL)
        rc = TG_ENOMEM;
    if (rc == 0 && modern(s)) {
        if ((p->params_text = malloc(call_len + 2)) == NULL)
            rc = TG_ENOMEM;
        else {
            memcpy(p->params_text, b.data, call_len);
            memcpy(p->params_text + call_len, "}", 2);
        }
    }
    p->id = ++s->next_id;
    if (rc == 0 && (modern(s) || progress)) {
        rc = tg__buf_puts(&b, ",\"_meta\":");
        if (rc == 0)
            rc = tg__buf_puts(&b, meta != NULL ? meta : "{");
        if (rc == 0 && progress) {
            rc = tg__buf_puts(&b, meta != NULL ? ",\"progressToken\":"
                                               : "\"progressToken\":");
            if (rc == 0)
                rc = tg__json_integer(&b, (long long)p->id);
        }
        if (rc == 0)
            rc = tg__buf_puts(&b, "}");
    }
    if (rc == 0)
        rc = tg__buf_puts(&b, "}");
    if (rc != 0)
        tg__error_set(err, rc, "out of memory");
    else
        rc = send_params_text(s, "tools/call", a->name, b.data, b.len, p, err);
    tg__buf_cleanup(&b);
    return rc;
}

/* The params a retry of call p sends again (borrowed), made from their
 * text the first time; NULL on out of memory. */
static json_t *call_params(pending *p)
{
    if (p->params == NULL && p->params_text != NULL)
        p->params = json_loads(p->params_text, 0, NULL); /* new ref */
    return p->params;
}

int tg__rsession_call(tg__rsession *s, const tg__rcall_args *a,
                      const tg__rcall_cbs *cbs, void *ud, uint64_t *call_id,
                      tg_error *err)
{
    if (s->st != S_READY)
        return tg__error_set(err, TG_EIO, "the MCP session is not ready");
    pending *fast = calloc(1, sizeof *fast);
    if (fast == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    fast->kind = REQ_CALL;
    fast->cbs = *cbs;
    fast->ud = ud;
    fast->deadline = deadline_in(s, a->deadline_ms);
    int frc = call_as_text(s, a, fast, cbs->progress != NULL, err);
    if (frc == 0) {
        *call_id = fast->key = fast->id;
        return 0;
    }
    free_pending(fast);
    if (frc != 1)
        return frc;
    json_t *args = NULL; /* new ref */
    if (a->arguments != NULL) {
        json_error_t je;
        args = json_loadb(a->arguments, a->arguments_len,
                          JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(args)) {
            json_decref(args);
            return tg__error_set(err, TG_EINVAL,
                                 "the arguments of an MCP tools/call must be "
                                 "a JSON object");
        }
    }
    json_t *params = json_pack("{s:s}", "name", a->name); /* new ref */
    pending *p = calloc(1, sizeof *p);
    if (params == NULL || p == NULL) {
        json_decref(args);
        json_decref(params);
        free(p);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    if (args != NULL)
        json_object_set_new(params, "arguments", args);
    p->kind = REQ_CALL;
    p->cbs = *cbs;
    p->ud = ud;
    p->deadline = deadline_in(s, a->deadline_ms);
    if (modern(s))
        p->params = json_incref(params); /* for a retry with inputs */
    int rc =
        send_request(s, "tools/call", params, p, cbs->progress != NULL, err);
    if (rc != 0) {
        free_pending(p);
        return rc;
    }
    *call_id = p->key = p->id;
    return 0;
}

int tg__rsession_cancel(tg__rsession *s, uint64_t call_id, const char *reason)
{
    pending *p = find_call(s, call_id);
    if (p == NULL)
        return 0;
    unlink_pending(s, p);
    if (s->t != NULL && s->st != S_CLOSING && p->id != 0)
        send_cancel(s, p, reason);
    free_pending(p);
    rearm(s);
    return 1;
}

int tg__rsession_extend(tg__rsession *s, uint64_t call_id, unsigned deadline_ms)
{
    pending *p = find_call(s, call_id);
    if (p == NULL)
        return 0;
    p->deadline = deadline_in(s, deadline_ms);
    rearm(s);
    return 1;
}

/* A request's deadline passed (p unlinked). */
static void expire(tg__rsession *s, pending *p)
{
    tg_error e;
    switch (p->kind) {
    case REQ_DISCOVER:
        free_pending(p);
        fall_back(s, NULL, "no answer in time");
        return;
    case REQ_INITIALIZE:
        tg__error_set(
            &e, TG_EIO,
            "the MCP server did not answer initialize within %u ms%s%s",
            s->connect_ms, s->bad_messages > 0 ? "; it wrote " : "",
            s->bad_messages > 0 ? s->first_bad : "");
        free_pending(p);
        connect_failed(s, &e);
        return;
    case REQ_LIST:
        tg__error_set(&e, TG_EIO,
                      "the MCP server did not answer tools/list within %u ms",
                      s->list_ms);
        end_pending(s, p, TG_RCALL_FAILED, &e);
        return;
    case REQ_CALL:
        if (p->late.code != 0) {
            e = p->late;
            end_pending(s, p, TG_RCALL_FAILED, &e);
            return;
        }
        tg__error_set(&e, TG_ECANCELED,
                      "the MCP server did not answer the tools/call within "
                      "its deadline");
        if (p->id != 0)
            send_cancel(s, p, "timeout");
        end_pending(s, p, TG_RCALL_TIMEOUT, &e);
        return;
    }
}

static void on_timer(uv_timer_t *timer)
{
    tg__rsession *s = timer->data;
    for (;;) {
        if (s->st == S_CLOSING)
            return;
        uint64_t now = uv_now(s->loop);
        pending *due = NULL;
        for (pending *p = s->reqs; p != NULL && due == NULL; p = p->next)
            if (p->deadline != 0 && p->deadline <= now)
                due = p;
        if (due == NULL)
            break;
        unlink_pending(s, due);
        expire(s, due);
    }
    rearm(s);
}

/* ------------------------------------------------------------ responses */

/* The text of a bad message, shown, for the connect error. */
static void note_bad(tg__rsession *s, const char *json, size_t len,
                     const char *why)
{
    s->bad_messages++;
    char text[64];
    size_t n = len < sizeof text - 1 ? len : sizeof text - 1;
    memcpy(text, json, n);
    text[n] = '\0';
    char shown[64];
    tg__text_show(text, shown, sizeof shown);
    if (s->bad_messages == 1)
        snprintf(s->first_bad, sizeof s->first_bad, "%s: '%s'", why, shown);
    session_log(s, "warning", "ignored a message from the MCP server (%s): %s",
                why, shown);
}

/* ------------------------------------------------------------ input */

static const char declined[] = "{\"action\":\"decline\"}";

static json_t *roots_json(const tg__rsession *s);

/* Sends call p (waiting, linked) again under a new id with the answers
 * collected and the server's requestState. On failure the call ends at
 * the next timer (this may run inside tg__rsession_elicit_reply). */
static void retry_call(tg__rsession *s, pending *p)
{
    tg_error e;
    json_t *params = json_copy(call_params(p)); /* new ref */
    if (params == NULL ||
        json_object_set(params, "inputResponses", p->responses) != 0 ||
        (p->state != NULL &&
         json_object_set(params, "requestState", p->state) != 0)) {
        json_decref(params);
        tg__error_set(&p->late, TG_ENOMEM, "out of memory");
        p->deadline = uv_now(s->loop);
        rearm(s);
        return;
    }
    json_decref(p->responses);
    p->responses = NULL;
    unlink_pending(s, p);
    if (send_request(s, "tools/call", params, p, p->cbs.progress != NULL, &e) !=
        0) {
        p->late = e;
        p->id = 0;
        link_pending(s, p);
        p->deadline = uv_now(s->loop);
    }
    rearm(s);
}

/* Fails call p (unlinked) for an InputRequiredResult it cannot answer. */
static void input_failed(tg__rsession *s, pending *p, const char *why,
                         const char *what)
{
    tg_error e;
    char shown[TG__SHOWN_ID_SIZE];
    tg__error_set(&e, TG_EIO, "the MCP server asked for input: %s%s", why,
                  what != NULL ? tg__text_show(what, shown, sizeof shown) : "");
    end_pending(s, p, TG_RCALL_FAILED, &e);
}

/* A call's result asked for input (2026-07-28, resultType input_required;
 * p unlinked): roots/list is answered with the configured roots,
 * elicitation/create by the owner's elicit callback (declined without
 * one), and once every answer is in, the call goes again. */
static void on_input_required(tg__rsession *s, pending *p,
                              const tg__rpc_batch *b,
                              const tg__rpc_value *result)
{
    if (++p->rounds > MAX_INPUT_ROUNDS) {
        input_failed(s, p, "more than 8 rounds for one call", NULL);
        return;
    }
    json_t *r = tg__rpc_value_json(b, result);              /* new ref */
    json_t *requests = json_object_get(r, "inputRequests"); /* borrowed */
    json_t *rstate = json_object_get(r, "requestState");    /* borrowed */
    if (r == NULL || call_params(p) == NULL ||
        (requests != NULL && !json_is_object(requests)) ||
        (requests == NULL && rstate == NULL)) {
        json_decref(r);
        input_failed(s, p, "the InputRequiredResult is malformed", NULL);
        return;
    }
    json_decref(p->state);
    p->state = json_incref(rstate);
    json_decref(p->responses);
    p->responses = json_object();
    p->id = 0;
    link_pending(s, p);
    p->collecting = true;
    const char *key;
    json_t *req;
    json_object_foreach(requests, key, req)
    {
        const char *method =
            json_string_value(json_object_get(req, "method")); /* borrowed */
        json_t *answer = NULL;                                 /* new ref */
        if (method != NULL && strcmp(method, "roots/list") == 0) {
            answer = roots_json(s);
        } else if (method != NULL &&
                   strcmp(method, "elicitation/create") == 0 &&
                   s->cbs.elicit != NULL) {
            elicit *e = calloc(1, sizeof *e);
            char *params = dump(json_object_get(req, "params"));
            if (e == NULL || params == NULL ||
                (e->input_key = strdup(key)) == NULL) {
                free(e);
                free(params);
                p->collecting = false;
                unlink_pending(s, p);
                json_decref(r);
                input_failed(s, p, "out of memory", NULL);
                return;
            }
            e->ticket = ++s->next_ticket;
            e->call_key = p->key;
            e->next = s->elicits;
            s->elicits = e;
            p->waiting++;
            uint64_t ticket = e->ticket, key_of_call = p->key;
            int rc = s->cbs.elicit(s->ud, ticket, key_of_call, params,
                                   strlen(params));
            free(params);
            /* the callback may have canceled the call or closed the
             * session */
            if (s->st == S_CLOSING || find_call(s, key_of_call) != p) {
                json_decref(r);
                return;
            }
            if (rc != 0) {
                tg_error ignored;
                (void)tg__rsession_elicit_reply(s, ticket, declined,
                                                sizeof declined - 1, &ignored);
            }
            continue;
        } else if (method != NULL &&
                   strcmp(method, "elicitation/create") == 0) {
            answer = json_pack("{s:s}", "action", "decline");
        } else {
            p->collecting = false;
            unlink_pending(s, p);
            input_failed(s, p, "toolgate does not answer ",
                         method != NULL ? method : "(no method)");
            json_decref(r); /* after: method is borrowed from it */
            return;
        }
        if (answer == NULL || json_object_set_new(p->responses, key, answer)) {
            p->collecting = false;
            unlink_pending(s, p);
            json_decref(r);
            input_failed(s, p, "out of memory", NULL);
            return;
        }
    }
    json_decref(r);
    p->collecting = false;
    if (p->waiting == 0)
        retry_call(s, p);
    else
        rearm(s);
}

static void on_result(tg__rsession *s, pending *p, const tg__rpc_batch *b,
                      const tg__rpc_msg *m)
{
    tg_error e;
    tg__rpc_value result;
    if (!tg__rpc_result_value(b, m, &result) || result.kind != TG_JT_OBJECT) {
        tg__error_set(&e, TG_EIO, "the MCP server's result is not an object");
        if (p->kind == REQ_DISCOVER) {
            free_pending(p);
            fall_back(s, NULL, "its result is not an object");
        } else if (p->kind == REQ_INITIALIZE) {
            free_pending(p);
            connect_failed(s, &e);
        } else {
            end_pending(s, p, TG_RCALL_FAILED, &e);
        }
        return;
    }
    /* resultType: absent means complete; a call's input_required is
     * answered and the call sent again; anything else is refused. */
    const char *rt_path[] = {"resultType"};
    tg__rpc_value rt;
    if (modern(s) && p->kind == REQ_CALL &&
        tg__rpc_value_find(b, &result, rt_path, 1, &rt) &&
        rt.kind == TG_JT_STRING && rt.len == 16 &&
        memcmp(rt.json, "\"input_required\"", 16) == 0) {
        on_input_required(s, p, b, &result);
        return;
    }
    if (modern(s) && tg__rpc_value_find(b, &result, rt_path, 1, &rt) &&
        !(rt.kind == TG_JT_STRING && rt.len == 10 &&
          memcmp(rt.json, "\"complete\"", 10) == 0)) {
        char shown[TG__SHOWN_ID_SIZE];
        char text[64];
        size_t n = rt.len < sizeof text - 1 ? rt.len : sizeof text - 1;
        memcpy(text, rt.json, n);
        text[n] = '\0';
        tg__error_set(&e, TG_EIO,
                      "the MCP server's result has resultType %s, which this "
                      "client does not handle",
                      tg__text_show(text, shown, sizeof shown));
        if (p->kind == REQ_LIST || p->kind == REQ_CALL) {
            end_pending(s, p, TG_RCALL_FAILED, &e);
            return;
        }
    }
    switch (p->kind) {
    case REQ_DISCOVER:
    case REQ_INITIALIZE: {
        json_t *r = tg__rpc_value_json(b, &result); /* new ref */
        if (r == NULL) {
            free_pending(p);
            tg__error_set(&e, TG_ENOMEM, "out of memory");
            connect_failed(s, &e);
            return;
        }
        if (p->kind == REQ_DISCOVER)
            on_discover(s, r);
        else
            on_initialize(s, p, r);
        json_decref(r);
        free_pending(p);
        return;
    }
    case REQ_LIST:
        on_list_page(s, p, b, &result);
        return;
    case REQ_CALL: {
        const char *ie_path[] = {"isError"};
        tg__rpc_value ie;
        tg__rcall_end end = {.status = TG_RCALL_RESULT,
                             .result = result.json,
                             .result_len = result.len};
        end.is_error = tg__rpc_value_find(b, &result, ie_path, 1, &ie) &&
                       ie.kind == TG_JT_TRUE;
        if (p->cbs.done != NULL)
            p->cbs.done(p->ud, &end);
        free_pending(p);
        return;
    }
    }
}

static void on_error(tg__rsession *s, pending *p, const tg__rpc_batch *b,
                     const tg__rpc_msg *m)
{
    tg_error e;
    char shown[200];
    tg__text_show(m->error_message != NULL ? m->error_message : "", shown,
                  sizeof shown);
    static const char *const names[] = {NULL, "server/discover", "initialize",
                                        "tools/list", "tools/call"};
    tg__error_set(&e, TG_EIO, "the MCP server answered %s with error %lld: %s",
                  names[p->kind], m->error_code, shown);
    switch (p->kind) {
    case REQ_DISCOVER: {
        /* UnsupportedProtocolVersion names what the server speaks. */
        json_t *supported = NULL; /* new ref */
        if (m->result != NULL) {
            json_t *err = json_loadb(m->result, m->result_len, 0, NULL);
            supported = json_incref(
                json_object_get(json_object_get(err, "data"), "supported"));
            json_decref(err);
        }
        free_pending(p);
        fall_back(s, supported, e.message);
        json_decref(supported);
        return;
    }
    case REQ_INITIALIZE:
        free_pending(p);
        connect_failed(s, &e);
        return;
    case REQ_LIST:
        end_pending(s, p, TG_RCALL_RPC_ERROR, &e);
        return;
    case REQ_CALL:
        if (p->cbs.done != NULL) {
            tg__rcall_end end = {.status = TG_RCALL_RPC_ERROR,
                                 .rpc_code = m->error_code,
                                 .rpc_error = m->result,
                                 .rpc_error_len = m->result_len,
                                 .err = &e};
            p->cbs.done(p->ud, &end);
        }
        free_pending(p);
        return;
    }
    (void)b;
}

/* ------------------------------------------------------------ server's */

static void respond(tg__rsession *s, const tg__rpc_id *id, const char *result,
                    long long code, const char *message)
{
    tg__buf msg;
    tg__buf_init(&msg, 0);
    int rc = result != NULL
                 ? tg__rpc_write_result(&msg, id, result, strlen(result))
                 : tg__rpc_write_error(&msg, id, code, message, NULL, 0);
    tg_error e;
    if (rc != 0 || send_text(s, &msg, NULL, NULL, NULL, &e) != 0)
        session_log(s, "warning", "could not answer the MCP server's request");
    tg__buf_cleanup(&msg);
}

/* A ListRootsResult of the configured roots (new ref), NULL on out of
 * memory. */
static json_t *roots_json(const tg__rsession *s)
{
    json_t *roots = json_array(); /* new ref */
    for (size_t i = 0; roots != NULL && i < s->nroots; i++) {
        json_t *r = json_pack("{s:s}", "uri", s->root_uri[i]);
        if (r != NULL && s->root_name[i] != NULL)
            json_object_set_new(r, "name", json_string(s->root_name[i]));
        json_array_append_new(roots, r);
    }
    return json_pack("{s:o}", "roots", roots);
}

static void answer_roots(tg__rsession *s, const tg__rpc_id *id)
{
    json_t *result = roots_json(s); /* new ref */
    char *text = result != NULL ? dump(result) : NULL;
    json_decref(result);
    if (text != NULL)
        respond(s, id, text, 0, NULL);
    else
        respond(s, id, NULL, TG_RPC_INTERNAL_ERROR, "out of memory");
    free(text);
}

/* The call (its key) that a server's elicitation/create is about, 0 when
 * none is known (the rule of session.h's `elicit`). stream: the request
 * whose HTTP response stream carried it, or NULL. */
static uint64_t elicit_call(tg__rsession *s, const tg__rpc_batch *b,
                            const tg__rpc_msg *m, const char *stream)
{
    pending *p = NULL;
    if (stream != NULL) {
        char *end = NULL;
        unsigned long long n = strtoull(stream, &end, 10);
        if (end != stream && *end == '\0')
            p = find_pending(s, n);
    }
    const char *rel_path[] = {"_meta",
                              "io.modelcontextprotocol/related-request"};
    tg__rpc_value rel;
    if (p == NULL && tg__rpc_params_find(b, m, rel_path, 2, &rel) &&
        rel.kind == TG_JT_NUMBER) {
        char text[24];
        size_t n = rel.len < sizeof text - 1 ? rel.len : sizeof text - 1;
        memcpy(text, rel.json, n);
        text[n] = '\0';
        char *end = NULL;
        unsigned long long id = strtoull(text, &end, 10);
        if (end != text && *end == '\0')
            p = find_pending(s, id);
    }
    if (p == NULL) {
        /* the only call in flight */
        for (pending *q = s->reqs; q != NULL; q = q->next) {
            if (q->kind != REQ_CALL || q->id == 0)
                continue;
            if (p != NULL)
                return 0;
            p = q;
        }
    }
    return p != NULL && p->kind == REQ_CALL ? p->key : 0;
}

static void answer_elicit(tg__rsession *s, const tg__rpc_batch *b,
                          const tg__rpc_msg *m, const char *stream)
{
    if (s->cbs.elicit == NULL) {
        respond(s, &m->id, declined, 0, NULL);
        return;
    }
    uint64_t call = elicit_call(s, b, m, stream);
    elicit *e = calloc(1, sizeof *e);
    if (e == NULL ||
        (e->id_json = strndup(m->id.json, m->id.json_len)) == NULL) {
        free(e);
        respond(s, &m->id, NULL, TG_RPC_INTERNAL_ERROR, "out of memory");
        return;
    }
    e->ticket = ++s->next_ticket;
    e->next = s->elicits;
    s->elicits = e;
    const char *params = m->params != NULL ? m->params : "{}";
    size_t len = m->params != NULL ? m->params_len : 2;
    uint64_t ticket = e->ticket; /* e is gone once answered */
    if (s->cbs.elicit(s->ud, ticket, call, params, len) != 0) {
        tg_error ignored;
        (void)tg__rsession_elicit_reply(s, ticket, declined,
                                        sizeof declined - 1, &ignored);
    }
}

int tg__rsession_elicit_reply(tg__rsession *s, uint64_t ticket,
                              const char *result, size_t len, tg_error *err)
{
    elicit **pp = &s->elicits;
    while (*pp != NULL && (*pp)->ticket != ticket)
        pp = &(*pp)->next;
    if (*pp == NULL)
        return tg__error_set(err, TG_ENOTFOUND,
                             "no elicitation %llu is waiting",
                             (unsigned long long)ticket);
    json_t *r = json_loadb(result, len, JSON_REJECT_DUPLICATES, NULL);
    bool ok = json_is_object(r);
    char *text = ok ? dump(r) : NULL;
    json_decref(r);
    if (!ok)
        return tg__error_set(err, TG_EINVAL,
                             "an elicitation's answer must be a JSON object");
    elicit *e = *pp;
    *pp = e->next;
    if (e->id_json != NULL) {
        tg__rpc_id id = {.kind = e->id_json[0] == '"' ? TG_RPC_ID_STRING
                                                      : TG_RPC_ID_INT,
                         .json = e->id_json,
                         .json_len = strlen(e->id_json)};
        if (s->t != NULL && s->st != S_CLOSING)
            respond(s, &id, text != NULL ? text : declined, 0, NULL);
    } else {
        /* an input of a call's InputRequiredResult (the call may have
         * ended meanwhile: the answer is then dropped) */
        pending *p = find_call(s, e->call_key);
        if (p != NULL && p->id == 0 && p->responses != NULL) {
            json_t *answer = json_loads(text != NULL ? text : declined, 0,
                                        NULL); /* new ref */
            if (answer == NULL ||
                json_object_set_new(p->responses, e->input_key, answer)) {
                tg__error_set(&p->late, TG_ENOMEM, "out of memory");
                p->deadline = uv_now(s->loop);
                rearm(s);
            } else if (--p->waiting == 0 && !p->collecting &&
                       s->st != S_CLOSING) {
                retry_call(s, p);
            }
        }
    }
    free(text);
    free(e->id_json);
    free(e->input_key);
    free(e);
    return 0;
}

static void on_request(tg__rsession *s, const tg__rpc_batch *b,
                       const tg__rpc_msg *m, const char *stream)
{
    if (strcmp(m->method, "ping") == 0)
        respond(s, &m->id, "{}", 0, NULL);
    else if (strcmp(m->method, "roots/list") == 0)
        answer_roots(s, &m->id);
    else if (strcmp(m->method, "elicitation/create") == 0)
        answer_elicit(s, b, m, stream);
    else
        respond(s, &m->id, NULL, TG_RPC_METHOD_NOT_FOUND, "Method not found");
}

static double number_or(const json_t *v, double dflt)
{
    return json_is_number(v) ? json_number_value(v) : dflt;
}

static void on_notification(tg__rsession *s, const tg__rpc_batch *b,
                            const tg__rpc_msg *m)
{
    if (strcmp(m->method, "notifications/tools/list_changed") == 0) {
        if (s->cbs.tools_changed != NULL)
            s->cbs.tools_changed(s->ud);
        return;
    }
    bool progress = strcmp(m->method, "notifications/progress") == 0;
    bool message = strcmp(m->method, "notifications/message") == 0;
    if (!progress && !message)
        return; /* cancelled (from the server), resources, prompts, ... */
    json_t *params = tg__rpc_params_json(b, m); /* new ref */
    if (params == NULL)
        return;
    if (progress) {
        json_t *tok = json_object_get(params, "progressToken"); /* borrowed */
        pending *p = json_is_integer(tok) && json_integer_value(tok) > 0
                         ? find_pending(s, (uint64_t)json_integer_value(tok))
                         : NULL;
        json_t *pr = json_object_get(params, "progress"); /* borrowed */
        json_t *msg = json_object_get(params, "message"); /* borrowed */
        if (p == NULL || p->kind != REQ_CALL || p->cbs.progress == NULL ||
            !json_is_number(pr))
            session_log(s, "info",
                        "ignored a progress notification for no call in "
                        "progress");
        else
            p->cbs.progress(p->ud, json_number_value(pr),
                            number_or(json_object_get(params, "total"), -1),
                            json_is_string(msg) ? json_string_value(msg)
                                                : NULL);
    } else if (s->cbs.log != NULL) {
        json_t *level = json_object_get(params, "level"); /* borrowed */
        char *data = dump(json_object_get(params, "data"));
        if (data != NULL)
            s->cbs.log(s->ud, TG_RLOG_SERVER,
                       json_is_string(level) ? json_string_value(level)
                                             : "info",
                       data, strlen(data));
        free(data);
    }
    json_decref(params);
}

static void on_message(void *ud, const char *json, size_t len,
                       const char *stream)
{
    tg__rsession *s = ud;
    if (s->st == S_CLOSING)
        return;
    /* The transport bounds the size; a tool's schema may nest deeper than
     * a request toolgate serves would (jansson's own limit holds). */
    tg__rpc_limits lim = {.max_bytes = len + 1,
                          .max_depth = TG_JTAPE_MAX_DEPTH,
                          .batches = false};
    tg__rpc_batch b;
    if (tg__rpc_read(&b, json, len, &lim) != 0) {
        session_log(s, "warning",
                    "out of memory reading a message of the MCP server");
        tg__rpc_batch_cleanup(&b);
        return;
    }
    if (b.n == 0) {
        note_bad(s, json, len, b.fail_message);
    } else {
        const tg__rpc_msg *m = &b.msgs[0];
        switch (m->kind) {
        case TG_RPC_INVALID:
            /* not answered: it may be a malformed response, and answering
             * one could start an endless exchange of errors */
            note_bad(s, json, len, m->fail_message);
            break;
        case TG_RPC_REQUEST:
            on_request(s, &b, m, stream);
            break;
        case TG_RPC_NOTIFICATION:
            on_notification(s, &b, m);
            break;
        case TG_RPC_RESULT:
        case TG_RPC_ERROR: {
            pending *p = m->id.kind == TG_RPC_ID_INT && m->id.num > 0
                             ? find_pending(s, (uint64_t)m->id.num)
                             : NULL;
            if (p == NULL) {
                char shown[TG__SHOWN_ID_SIZE];
                session_log(
                    s, "warning",
                    "ignored a response with an unknown id (%s) from "
                    "the MCP server",
                    m->id.kind == TG_RPC_ID_NONE
                        ? "none"
                        : tg__text_show(m->id.str, shown, sizeof shown));
                break;
            }
            unlink_pending(s, p);
            if (m->kind == TG_RPC_RESULT)
                on_result(s, p, &b, m);
            else
                on_error(s, p, &b, m);
            rearm(s);
            break;
        }
        }
    }
    tg__rpc_batch_cleanup(&b);
}

static void on_request_failed(void *ud, const char *id, const tg_error *err)
{
    tg__rsession *s = ud;
    char *end = NULL;
    unsigned long long n = strtoull(id, &end, 10);
    pending *p = end != id && *end == '\0' ? find_pending(s, n) : NULL;
    if (p == NULL || s->st == S_CLOSING)
        return;
    unlink_pending(s, p);
    tg_error e;
    tg__error_set(&e, err->code, "%s", err->message);
    switch (p->kind) {
    case REQ_DISCOVER:
        free_pending(p);
        fall_back(s, NULL, e.message);
        break;
    case REQ_INITIALIZE:
        free_pending(p);
        connect_failed(s, &e);
        break;
    default:
        end_pending(s, p, TG_RCALL_FAILED, &e);
        break;
    }
    rearm(s);
}

static void on_stderr(void *ud, const char *line, size_t len)
{
    tg__rsession *s = ud;
    if (s->cbs.log != NULL)
        s->cbs.log(s->ud, TG_RLOG_STDERR, NULL, line, len);
}

static const tg__rtransport_cbs transport_cbs = {
    .message = on_message,
    .request_failed = on_request_failed,
    .log = on_stderr,
    .closed = on_closed,
};

const tg__rtransport_cbs *tg__rsession_transport_cbs(void)
{
    return &transport_cbs;
}

/* ------------------------------------------------------------ lifetime */

int tg__rsession_new(const tg__rsession_opts *o, const tg__rsession_cbs *cbs,
                     void *ud, tg__rsession **out, tg_error *err)
{
    *out = NULL;
    for (size_t i = 0; i < o->nroots; i++) {
        const char *uri = o->roots[i].uri;
        char shown[TG__SHOWN_ID_SIZE];
        if (uri == NULL || strncmp(uri, "file:///", 8) != 0)
            return tg__error_set(
                err, TG_EINVAL, "an MCP root must be a file:// URI, not '%s'",
                tg__text_show(uri ? uri : "", shown, sizeof shown));
        if (uri[8 + strspn(uri + 8, "/")] == '\0')
            return tg__error_set(err, TG_EINVAL,
                                 "the MCP root '%s' is the whole file system",
                                 tg__text_show(uri, shown, sizeof shown));
        /* a root is what it says: no "." or ".." segment leads elsewhere */
        for (const char *seg = uri + 7; seg != NULL;
             seg = strchr(seg + 1, '/')) {
            size_t n = strcspn(seg + 1, "/");
            if ((n == 1 || n == 2) && strncmp(seg + 1, "..", n) == 0)
                return tg__error_set(err, TG_EINVAL,
                                     "the MCP root '%s' has a '.' or '..' "
                                     "segment",
                                     tg__text_show(uri, shown, sizeof shown));
        }
    }
    tg__rsession *s = calloc(1, sizeof *s);
    if (s == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    s->loop = o->loop;
    s->cbs = *cbs;
    s->ud = ud;
    s->want = o->version;
    s->connect_ms =
        o->connect_ms ? o->connect_ms : TG_RSESSION_DEFAULT_CONNECT_MS;
    s->list_ms = o->list_ms ? o->list_ms : TG_RSESSION_DEFAULT_LIST_MS;
    s->max_tools = o->max_tools ? o->max_tools : TG_RSESSION_DEFAULT_MAX_TOOLS;
    s->max_pages = o->max_pages ? o->max_pages : TG_RSESSION_DEFAULT_MAX_PAGES;
    s->cancel_by_drop = o->cancel_by_drop;
    s->client_name = strdup(o->client_name ? o->client_name : "toolgate");
    s->client_version =
        strdup(o->client_version ? o->client_version : TOOLGATE_VERSION_STRING);
    s->nroots = o->nroots;
    s->root_uri = calloc(o->nroots + 1, sizeof *s->root_uri);
    s->root_name = calloc(o->nroots + 1, sizeof *s->root_name);
    bool ok =
        s->client_name && s->client_version && s->root_uri && s->root_name;
    for (size_t i = 0; ok && i < o->nroots; i++) {
        s->root_uri[i] = strdup(o->roots[i].uri);
        s->root_name[i] = dup_or_null(o->roots[i].name);
        ok = s->root_uri[i] != NULL &&
             (o->roots[i].name == NULL || s->root_name[i] != NULL);
    }
    if (!ok) {
        if (s->root_uri == NULL || s->root_name == NULL)
            s->nroots = 0;
        free_session(s);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    *out = s;
    return 0;
}

int tg__rsession_start(tg__rsession *s, tg__rtransport *t, tg_error *err)
{
    s->t = t;
    s->st = S_CONNECTING;
    uv_timer_init(s->loop, &s->timer);
    s->timer.data = s;
    s->timer_on = true;
    s->connect_deadline = deadline_in(s, s->connect_ms);
    int rc = s->want == TG_MCP_VERSION_UNKNOWN || s->want == TG_MCP_V2026_07_28
                 ? send_discover(s, err)
                 : send_initialize(s, s->want, err);
    if (rc != 0) {
        s->ready_told = true; /* the caller is told here */
        tg__rsession_close(s);
    }
    return rc;
}

void tg__rsession_free(tg__rsession *s)
{
    if (s != NULL)
        free_session(s);
}

void tg__rsession_close(tg__rsession *s)
{
    if (s->st == S_CLOSING)
        return;
    s->st = S_CLOSING;
    if (s->timer_on)
        uv_timer_stop(&s->timer);
    if (s->t != NULL)
        tg__rtransport_close(s->t);
}

tg__mcp_version tg__rsession_version(const tg__rsession *s)
{
    return s->version;
}

const char *tg__rsession_capabilities(const tg__rsession *s)
{
    return s->caps;
}

const char *tg__rsession_server_info(const tg__rsession *s)
{
    return s->server_info;
}

const char *tg__rsession_instructions(const tg__rsession *s)
{
    return s->instructions;
}
