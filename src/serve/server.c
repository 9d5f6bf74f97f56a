/* SPDX-License-Identifier: MIT */
/*
 * server.c - the MCP server: one runtime driven from the face's own libuv
 * loop (the runtime's descriptor watched by a uv_poll_t, its timeout by a
 * timer, a step after every burst of submitted calls), the sessions, the
 * outs, and the way in for every incoming message (srv_handle), which
 * reads it, checks the protocol version and hands it to its method
 * (methods.c, call.c). Messages go out through srv_send, which also
 * traces them for the schema tests.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "server.h"
#include "tasks.h"
#include "hex.h"
#include "json_out.h"

/* ------------------------------------------------------------ runtime */

static void schedule_step(tg__srv *srv);

/* A runtime step (the descriptor said it has work, or its timer ran out),
 * or only its flush (calls were submitted: the loop polls the runtime's
 * descriptor anyway), then when the next one is due. */
static void step_as(tg__srv *srv, bool flush)
{
    if (flush)
        (void)tg_runtime_flush(srv->rt);
    else
        (void)tg_runtime_step(srv->rt);
    srv_tools_announce(srv); /* a source behind us re-listed its tools */
    int t = tg_runtime_timeout(srv->rt);
    if (t == 0) {
        schedule_step(srv);
    } else if (t > 0) {
        uv_timer_start(&srv->rt_timer, srv_on_rt_timer, (uint64_t)t, 0);
    } else {
        uv_timer_stop(&srv->rt_timer);
    }
    srv_check_stopped(srv);
}

static void step(tg__srv *srv)
{
    step_as(srv, false);
}

static void on_rt_poll(uv_poll_t *h, int status, int events)
{
    (void)status;
    (void)events;
    step(h->data);
}

void srv_on_rt_timer(uv_timer_t *h)
{
    step(h->data);
}

static void on_kick(uv_idle_t *h)
{
    tg__srv *srv = h->data;
    uv_idle_stop(h);
    srv->kicked = false;
    step(srv);
}

static void schedule_step(tg__srv *srv)
{
    if (!srv->kicked) {
        srv->kicked = true;
        uv_idle_start(&srv->kick, on_kick);
    }
}

void srv_kick(tg__srv *srv)
{
    schedule_step(srv);
}

bool srv_journaled(const tg__srv *srv)
{
    return srv->journal != NULL;
}

void srv_step_now(tg__srv *srv)
{
    if (!srv->kicked)
        return;
    uv_idle_stop(&srv->kick);
    srv->kicked = false;
    step_as(srv, true);
}

/* ------------------------------------------------------------ outs */

void srv_out_init(srv_out *o, const srv_out_ops *ops)
{
    memset(o, 0, sizeof *o);
    o->ops = ops;
    o->refs = 1;
}

void srv_out_ref(srv_out *o)
{
    if (o != NULL)
        o->refs++;
}

void srv_out_unref(srv_out *o)
{
    if (o != NULL && --o->refs == 0)
        o->ops->free(o);
}

void srv_out_closed(tg__srv *srv, srv_out *o)
{
    if (o == NULL || o->closed)
        return;
    o->closed = true;
    /* 2026-07-28: closing a request's stream is its cancellation. The
     * 2025 versions keep the call running for a resume. */
    for (srv_req *r = o->reqs, *next; r != NULL; r = next) {
        next = r->onext;
        if (r->version == TG_MCP_V2026_07_28)
            srv_req_cancel(srv, r, "the client closed the request's stream");
    }
}

/* ------------------------------------------------------------ sessions */

srv_session *srv_session_new(tg__srv *srv, srv_via via, const char *caller)
{
    srv_session *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->srv = srv;
    s->via = via;
    s->refs = 1;
    s->log_level = -1;
    if (caller != NULL && (s->caller = strdup(caller)) == NULL) {
        free(s);
        return NULL;
    }
    s->next = srv->sessions;
    if (srv->sessions != NULL)
        srv->sessions->prev = s;
    srv->sessions = s;
    return s;
}

void srv_session_set_notify(srv_session *s, srv_out *notify)
{
    srv_out_ref(notify);
    srv_out_unref(s->notify);
    s->notify = notify;
}

void srv_session_end(srv_session *s)
{
    if (s == NULL || s->ended)
        return;
    s->ended = true;
    for (srv_req *r = s->reqs, *next; r != NULL; r = next) {
        next = r->snext;
        srv_req_cancel(s->srv, r, "the client ended the session");
    }
    srv_session_set_notify(s, NULL);
}

static void session_free(srv_session *s)
{
    tg__srv *srv = s->srv;
    if (s->prev != NULL)
        s->prev->next = s->next;
    else
        srv->sessions = s->next;
    if (s->next != NULL)
        s->next->prev = s->prev;
    srv_out_unref(s->notify);
    json_decref(s->client_caps);
    json_decref(s->client_info);
    free(s->caller);
    free(s);
}

void srv_session_hold(srv_session *s)
{
    s->refs++;
}

void srv_session_release(srv_session *s)
{
    if (s != NULL && --s->refs == 0)
        session_free(s);
}

const char *srv_session_version(const srv_session *s)
{
    return s->initialized ? tg__mcp_version_name(s->version) : NULL;
}

int srv_session_initialized(const srv_session *s)
{
    return s->initialized;
}

const char *srv_session_caller(const srv_session *s)
{
    return s->caller != NULL ? s->caller : s->srv->caller;
}

/* ------------------------------------------------------------ versions */

tg__mcp_version srv_version_parse(const char *name)
{
    return name != NULL ? tg__mcp_version_from_name(name, strlen(name))
                        : TG_MCP_VERSION_UNKNOWN;
}

/* ------------------------------------------------------------ sending */

/* Appends {"version","answers","message"} to the trace file. */
static void trace(tg__srv *srv, tg__mcp_version v, const char *answers,
                  const char *msg, size_t len)
{
    if (srv->trace == NULL)
        return;
    fprintf(srv->trace, "{\"version\":\"%s\"", tg__mcp_version_name(v));
    if (answers != NULL)
        fprintf(srv->trace, ",\"answers\":\"%s\"", answers);
    fprintf(srv->trace, ",\"message\":%.*s}\n", (int)len, msg);
    fflush(srv->trace);
}

int srv_send(tg__srv *srv, srv_out *out, tg__mcp_version v, const char *answers,
             srv_msg_kind kind, const char *msg, size_t len)
{
    /* A closed out is the transport's to judge: an HTTP stream kept for a
     * resume (2025 versions) still takes what its calls send. */
    if (out == NULL)
        return -1;
    int rc = out->ops->send(out, kind, msg, len);
    if (rc == 0)
        trace(srv, v, answers, msg, len);
    return rc;
}

int srv_send_json(tg__srv *srv, srv_out *out, tg__mcp_version v,
                  const char *answers, srv_msg_kind kind, json_t *msg_take)
{
    if (msg_take == NULL)
        return -1;
    char *text = json_dumps(msg_take, JSON_COMPACT);
    json_decref(msg_take);
    if (text == NULL)
        return -1;
    int rc = srv_send(srv, out, v, answers, kind, text, strlen(text));
    free(text);
    return rc;
}

int srv_send_result(tg__srv *srv, srv_out *out, tg__mcp_version v,
                    const char *answers, const json_t *id, json_t *result_take)
{
    if (result_take == NULL)
        return -1;
    if (v == TG_MCP_V2026_07_28) {
        /* every 2026-07-28 result: its type, and who answers */
        if (json_object_get(result_take, "resultType") == NULL)
            json_object_set_new(result_take, "resultType",
                                json_string("complete"));
        json_t *meta = json_object_get(result_take, "_meta"); /* borrowed */
        if (meta == NULL) {
            meta = json_object();
            json_object_set_new(result_take, "_meta", meta);
        }
        json_object_set_new(meta, "io.modelcontextprotocol/serverInfo",
                            json_pack("{s:s,s:s}", "name", "toolgate",
                                      "version", TOOLGATE_VERSION_STRING));
    }
    return srv_send_json(srv, out, v, answers, SRV_MSG_RESPONSE,
                         json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id,
                                   "result", result_take));
}

int srv_send_result_text(tg__srv *srv, srv_out *out, tg__mcp_version v,
                         const char *answers, const json_t *id,
                         const char *result, size_t len)
{
    char small[1024]; /* most results fit: no allocation */
    tg__buf b;
    tg__buf_init_with(&b, small, sizeof small, 0);
    int rc = -1;
    if (tg__buf_reserve(&b, len + 64) == 0 &&
        tg__buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":") == 0 &&
        tg__json_dump(id, &b) == 0 && tg__buf_puts(&b, ",\"result\":") == 0 &&
        tg__buf_append(&b, result, len) == 0 && tg__buf_puts(&b, "}") == 0)
        rc = srv_send(srv, out, v, answers, SRV_MSG_RESPONSE, b.data, b.len);
    tg__buf_cleanup(&b);
    return rc;
}

int srv_send_error(tg__srv *srv, srv_out *out, tg__mcp_version v,
                   const char *answers, const json_t *id, int code,
                   const char *message, json_t *data_take)
{
    json_t *err = json_pack("{s:i,s:s}", "code", code, "message", message);
    if (err != NULL && data_take != NULL)
        json_object_set_new(err, "data", data_take);
    else
        json_decref(data_take);
    json_t *msg = json_pack("{s:s,s:o}", "jsonrpc", "2.0", "error", err);
    /* An id that could not be read is left out: no MCP schema allows
     * null there (JSON-RPC's answer), and the TypeScript SDK's client
     * drops a message with one. */
    if (msg != NULL && id != NULL)
        json_object_set(msg, "id", (json_t *)id);
    return srv_send_json(srv, out, v, answers, SRV_MSG_RESPONSE, msg);
}

/* ------------------------------------------------------------ the server */

tg__srv *srv_new(tg_runtime *rt, const srv_options *opt, tg_error *err)
{
    tg__srv *srv = calloc(1, sizeof *srv);
    if (srv == NULL) {
        if (err != NULL) {
            err->code = TG_ENOMEM;
            snprintf(err->message, sizeof err->message, "out of memory");
        }
        return NULL;
    }
    srv->rt = rt;
    srv->caller = strdup(opt && opt->caller ? opt->caller : "mcp-client");
    srv->max_message =
        opt && opt->max_message ? opt->max_message : (size_t)4 << 20;
    srv->max_depth = opt && opt->max_depth > 0 ? opt->max_depth : 64;
    srv->spool_dir = opt ? opt->spool_dir : NULL;
    srv->journal = opt ? opt->journal : NULL;
    srv->task_after_ms = !opt || opt->task_after_ms == 0 ? SRV_TASK_AFTER_MS
                         : opt->task_after_ms < 0
                             ? 0
                             : (uint64_t)opt->task_after_ms;
    /* the tools as they are now are what clients are told at first */
    srv->tools_gen = srv->announced_gen = tg_runtime_tools_generation(rt);
    char *sources = NULL;
    if (tg_runtime_sources(rt, &sources, NULL) == 0) {
        json_t *list = json_loads(sources, 0, NULL); /* new ref */
        srv->tools_may_change = json_array_size(list) > 0;
        json_decref(list);
    }
    tg_free(sources);
    int rc = uv_loop_init(&srv->loop);
    if (srv->caller == NULL || rc != 0) {
        free(srv->caller);
        free(srv);
        if (err != NULL) {
            err->code = TG_EINTERNAL;
            snprintf(err->message, sizeof err->message,
                     "cannot make the server's loop");
        }
        return NULL;
    }
    if (opt != NULL && opt->trace != NULL &&
        (srv->trace = fopen(opt->trace, "a")) == NULL) {
        if (err != NULL) {
            err->code = TG_EIO;
            snprintf(err->message, sizeof err->message, "cannot open %s: %s",
                     opt->trace, strerror(errno));
        }
        uv_loop_close(&srv->loop);
        free(srv->caller);
        free(srv);
        return NULL;
    }
    srv->loop.data = srv;
    uv_poll_init(&srv->loop, &srv->rt_poll, tg_runtime_fd(rt));
    srv->rt_poll.data = srv;
    uv_poll_start(&srv->rt_poll, UV_READABLE, on_rt_poll);
    uv_timer_init(&srv->loop, &srv->rt_timer);
    srv->rt_timer.data = srv;
    uv_idle_init(&srv->loop, &srv->kick);
    srv->kick.data = srv;
    uv_timer_init(&srv->loop, &srv->grace);
    srv->grace.data = srv;
    srv_random_hex(srv->boot, 8);
    srv_approvals_init(srv);
    /* The runtime's loop may have handles already (an eager MCP server's
     * pipes): a first step puts them in its poll, whose fd we watch. */
    schedule_step(srv);
    return srv;
}

uv_loop_t *srv_loop(tg__srv *srv)
{
    return &srv->loop;
}

static void on_closed(uv_handle_t *h)
{
    (void)h;
}

void srv_check_stopped(tg__srv *srv)
{
    if (!srv->stopping || srv->closed || tg_runtime_pending(srv->rt) > 0 ||
        srv->live > 0)
        return;
    srv->closed = true;
    uv_close((uv_handle_t *)&srv->rt_poll, on_closed);
    uv_close((uv_handle_t *)&srv->rt_timer, on_closed);
    uv_close((uv_handle_t *)&srv->kick, on_closed);
    uv_close((uv_handle_t *)&srv->grace, on_closed);
    for (int i = 0; i < srv->non_stopped; i++)
        srv->on_stopped[i].fn(srv, srv->on_stopped[i].ud);
}

static void on_grace(uv_timer_t *h)
{
    tg__srv *srv = h->data;
    (void)tg_runtime_cancel(srv->rt, NULL, "system",
                            "the server is shutting down", NULL);
}

void srv_stop(tg__srv *srv, int64_t grace_ms)
{
    if (srv->stopping)
        return;
    srv->stopping = true;
    srv_listen_end_all(srv);
    srv_parks_stop(srv);
    if (tg_runtime_pending(srv->rt) > 0)
        uv_timer_start(&srv->grace, on_grace,
                       (uint64_t)(grace_ms > 0 ? grace_ms : 0), 0);
    srv_check_stopped(srv);
}

int srv_stopping(const tg__srv *srv)
{
    return srv->stopping;
}

int srv_run(tg__srv *srv)
{
    uv_run(&srv->loop, UV_RUN_DEFAULT);
    return 0;
}

void srv_free(tg__srv *srv)
{
    if (srv == NULL)
        return;
    srv_tasks_free(srv); /* its handles close on the run below */
    if (!srv->closed) {
        srv->stopping = true;
        srv->closed = true;
        uv_close((uv_handle_t *)&srv->rt_poll, on_closed);
        uv_close((uv_handle_t *)&srv->rt_timer, on_closed);
        uv_close((uv_handle_t *)&srv->kick, on_closed);
        uv_close((uv_handle_t *)&srv->grace, on_closed);
    }
    uv_run(&srv->loop, UV_RUN_DEFAULT);
    (void)uv_loop_close(&srv->loop);
    while (srv->sessions != NULL) {
        srv_session *s = srv->sessions;
        srv->sessions = s->next;
        s->prev = s->next = NULL;
        srv_out_unref(s->notify);
        json_decref(s->client_caps);
        json_decref(s->client_info);
        free(s->caller);
        free(s);
    }
    srv_tools_free(srv);
    if (srv->trace != NULL)
        fclose(srv->trace);
    free(srv->caller);
    free(srv);
}

void srv_on_stopped(tg__srv *srv, void (*fn)(tg__srv *srv, void *ud), void *ud)
{
    if (srv->non_stopped < 4) {
        srv->on_stopped[srv->non_stopped].fn = fn;
        srv->on_stopped[srv->non_stopped].ud = ud;
        srv->non_stopped++;
    }
}

void srv_random_bytes(unsigned char *out, size_t n)
{
    /* The kernel's CSPRNG, not OpenSSL's: RAND_bytes would set up
     * OpenSSL's DRBG and providers at start (about 2 MiB of libcrypto
     * paged in), which a server that never signs anything does not need. */
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(out + got, n - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            abort(); /* no randomness: no id or key can be trusted */
        got += (size_t)r;
    }
}

void srv_random_hex(char *out, size_t n)
{
    unsigned char b[64];
    if (n > sizeof b)
        n = sizeof b;
    srv_random_bytes(b, n);
    tg__hex_encode(b, n, out);
}

void srv_warn_session(tg__srv *srv, srv_session *s)
{
    const char *w = tg_runtime_warning(srv->rt);
    int level = s->log_level >= 0 ? s->log_level : 1; /* info by default */
    if (w == NULL || level > 3 /* warning */ || s->notify == NULL)
        return;
    srv_send_json(srv, s->notify, s->version, NULL, SRV_MSG_NOTIFICATION,
                  json_pack("{s:s,s:s,s:{s:s,s:s,s:s}}", "jsonrpc", "2.0",
                            "method", "notifications/message", "params",
                            "level", "warning", "logger", "toolgate", "data",
                            w));
}
