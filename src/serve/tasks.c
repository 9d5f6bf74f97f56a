/* SPDX-License-Identifier: MIT */
/*
 * tasks.c - long calls as tasks. Under 2025-11-25 a tools/call carrying a
 * `task` param ({ttl?}) is answered at once with a CreateTaskResult while
 * its call runs on, and tasks/get, tasks/result (waits for the end, then
 * answers what the tools/call would have, marked with the related task),
 * tasks/list (the caller's, paginated) and tasks/cancel (kills the call)
 * follow it; its end is announced with notifications/tasks/status. Under
 * 2026-07-28 the io.modelcontextprotocol/tasks extension is server-
 * directed: a call of a request that declared the extension and still
 * runs after serve.task_after_ms (1 s unless configured) becomes a task
 * (resultType "task"), followed with tasks/get (its result inside),
 * tasks/update and tasks/cancel.
 *
 * Durable: every task is a row of the journal's file (tg_task_store),
 * written before the client hears of it and ended with its answer, so a
 * client fetches the answer after the server restarted. A task's row
 * names its call's id; a task read while working that no call of this
 * server runs is settled from the journal: its call's recorded result
 * (the journal's recovery gives a call left running by a dead process its
 * INTERRUPTED result), or, when the call never reached the journal and
 * the process that took the task is gone, an INTERRUPTED error of a call
 * that did not run. Tasks belong to the caller identity of the session
 * that made them; another caller's task is unknown. Ids are 128 bits of
 * the CSPRNG.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tasks.h"

#define EXT_TASKS "io.modelcontextprotocol/tasks"
#define RELATED_TASK "io.modelcontextprotocol/related-task"
#define DEFAULT_TTL_MS INT64_C(3600000)
#define MIN_TTL_MS INT64_C(100)
#define MAX_TTL_MS INT64_C(604800000) /* a week */
#define POLL_MS 500
#define LIST_PAGE 100

enum {
    RPC_METHOD_NOT_FOUND = -32601,
    RPC_INVALID_PARAMS = -32602,
    RPC_INTERNAL = -32603,
    MCP_MISSING_CAPABILITY = -32021
};

struct srv_task {
    srv_tasks *all;
    srv_task *prev, *next;
    srv_req *r; /* its running request */
    char id[40];
    int64_t ttl_ms;
    bool recorded;         /* in the store, the client told */
    bool cancel_requested; /* by tasks/cancel */
    uv_timer_t *timer;     /* 2026-07-28: becomes a task when it fires */
    char *question; /* the elicitation/create its call waits on, or NULL */
};

/* A tasks/result waiting for its task to end. */
typedef struct waiter {
    struct waiter *next;
    srv_session *s; /* a reference */
    srv_out *out;   /* a reference */
    json_t *id;     /* new ref */
    tg__mcp_version version;
    char task_id[129];
} waiter;

struct srv_tasks {
    tg__srv *srv;
    tg_task_store *store;
    srv_task *live;
    waiter *waiters;
    uv_timer_t *poll; /* while waiters wait on tasks run elsewhere */
};

/* How version v does tasks (none for an unknown one). */
static tg__mcp_tasks kind(tg__mcp_version v)
{
    const tg__mcp_traits *t = tg__mcp_traits_of(v);
    return t != NULL ? t->tasks : TG_MCP_TASKS_NONE;
}

static srv_tasks *tasks_of(tg__srv *srv)
{
    if (srv->tasks == NULL && (srv->tasks = calloc(1, sizeof *srv->tasks)))
        srv->tasks->srv = srv;
    return srv->tasks;
}

/* The store, opened on first use (NULL with err filled on failure). */
static tg_task_store *store_of(srv_tasks *ts, tg_error *err)
{
    if (ts->store == NULL &&
        tg_task_store_open(ts->srv->journal, &ts->store, err) != 0)
        ts->store = NULL;
    return ts->store;
}

static srv_task *find_live(srv_tasks *ts, const char *id)
{
    for (srv_task *t = ts ? ts->live : NULL; t != NULL; t = t->next)
        if (t->recorded && strcmp(t->id, id) == 0)
            return t;
    return NULL;
}

static void close_free(uv_handle_t *h)
{
    free(h);
}

static void task_free(srv_task *t)
{
    srv_tasks *ts = t->all;
    if (t->prev != NULL)
        t->prev->next = t->next;
    else
        ts->live = t->next;
    if (t->next != NULL)
        t->next->prev = t->prev;
    if (t->timer != NULL)
        uv_close((uv_handle_t *)t->timer, close_free);
    if (t->r != NULL)
        t->r->task = NULL;
    free(t->question);
    free(t);
}

/* Whether live task t waits for its user's answer: to a policy ask, or
 * to a source's question (elicit.c). */
static bool asking(const srv_task *t)
{
    return t != NULL && t->r != NULL &&
           ((t->question != NULL && t->r->ask != NULL) ||
            t->r->elicits != NULL);
}

/* ------------------------------------------------------------ shapes */

/* An epoch-ms time as ISO 8601 UTC text (new ref). */
static json_t *iso_time(json_int_t ms)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    char buf[40], out[48];
    if (gmtime_r(&secs, &tm) == NULL ||
        strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
        return json_string("1970-01-01T00:00:00Z");
    snprintf(out, sizeof out, "%s.%03dZ", buf, (int)(ms % 1000));
    return json_string(out);
}

/* The status a task shows under `v`: 2025-11-25 calls an isError result
 * failed; 2026-07-28 keeps failed for protocol errors. */
static const char *status_for(const json_t *row, tg__mcp_version v,
                              const srv_task *live)
{
    const char *st = json_string_value(json_object_get(row, "status"));
    if (st == NULL)
        return "failed";
    if (strcmp(st, "working") == 0 && live != NULL && live->cancel_requested)
        return "cancelled";
    if (strcmp(st, "working") == 0 && asking(live))
        return "input_required";
    if (kind(v) == TG_MCP_TASKS_EXTENSION && strcmp(st, "failed") == 0 &&
        json_object_get(json_object_get(row, "answer"), "result") != NULL)
        return "completed";
    return st;
}

/* The Task object of a task row (tg_task_get's) under `v` (new ref); live
 * is the task when it runs here (cancelled or waiting for input shows),
 * else NULL. */
static json_t *task_json(const json_t *row, tg__mcp_version v,
                         const srv_task *live)
{
    const json_t *ttl = json_object_get(row, "ttlMs");
    const char *msg = json_string_value(json_object_get(row, "statusMessage"));
    bool v26 = kind(v) == TG_MCP_TASKS_EXTENSION;
    json_t *t = json_pack(
        "{s:O,s:s,s:o,s:o,s:O,s:i}", "taskId", json_object_get(row, "taskId"),
        "status", status_for(row, v, live), "createdAt",
        iso_time(json_integer_value(json_object_get(row, "createdAt"))),
        "lastUpdatedAt",
        iso_time(json_integer_value(json_object_get(row, "updatedAt"))),
        v26 ? "ttlMs" : "ttl", ttl != NULL ? ttl : json_null(),
        v26 ? "pollIntervalMs" : "pollInterval", POLL_MS);
    if (t != NULL && msg != NULL)
        json_object_set_new(t, "statusMessage", json_string(msg));
    return t;
}

/* ------------------------------------------------------------ settling */

/* Ends task `id` with the answer of its finished call's turn under v
 * (srv_call_answer's, status and err as the call's done callback had
 * them), stored as {"result":CallToolResult} or {"error":{code,message}}. */
static void finish(srv_tasks *ts, const char *id, const tg_turn *turn,
                   tg__mcp_version v, int status, const tg_error *why,
                   bool cancelled)
{
    tg__buf answer, res;
    tg__buf_init(&answer, 0);
    tg__buf_init(&res, 0);
    char m[512];
    int code =
        srv_call_answer(ts->srv, &res, turn, v, status, why, m, sizeof m);
    const tg_result *tr = status == 0 ? tg_turn_result(turn, 0) : NULL;
    int rc = 0;
    if (code == 0) {
        rc = tg__buf_puts(&answer, "{\"result\":");
        if (rc == 0)
            rc = tg__buf_append(&answer, res.data, res.len);
        if (rc == 0)
            rc = tg__buf_append(&answer, "}", 1);
    } else {
        json_t *error = json_pack("{s:{s:i,s:s}}", "error", "code", code,
                                  "message", m); /* new ref */
        char *text = error != NULL ? json_dumps(error, JSON_COMPACT) : NULL;
        rc = text != NULL ? tg__buf_puts(&answer, text) : TG_ENOMEM;
        free(text);
        json_decref(error);
    }
    const char *st =
        cancelled ? "cancelled"
        : code != 0 || tr == NULL || tg_result_outcome(tr) != TG_OUTCOME_SUCCESS
            ? "failed"
            : "completed";
    char msg[128];
    snprintf(msg, sizeof msg, "the call ended: %s",
             tr != NULL ? tg_outcome_name(tg_result_outcome(tr))
                        : "protocol error");
    tg_error err = {0};
    tg_task_store *store = store_of(ts, &err);
    /* A task that expired meanwhile is gone: nothing to end. */
    if (store != NULL)
        (void)tg_task_finish(store, id, st, msg,
                             rc == 0 ? tg__buf_cstr(&answer) : NULL, &err);
    tg__buf_cleanup(&res);
    tg__buf_cleanup(&answer);
}

/* Settles a working task no call of this server runs, from the journal
 * (see the top of the file). `row` is tg_task_get's. Returns 1 when it
 * ended the task. */
static int settle(srv_tasks *ts, const json_t *row)
{
    const char *id = json_string_value(json_object_get(row, "taskId"));
    const char *call_id = json_string_value(json_object_get(row, "callId"));
    const json_t *rec = json_object_get(row, "call"); /* borrowed */
    bool has_result = json_is_object(json_object_get(rec, "result"));
    if (!has_result && json_is_true(json_object_get(row, "ownerAlive")))
        return 0;        /* another live server runs it */
    json_t *made = NULL; /* new ref */
    if (!has_result && json_is_object(rec)) {
        /* Its owner died after this store was opened: opening again runs
         * the journal's recovery, which ends the call INTERRUPTED. */
        tg_task_store_free(ts->store);
        ts->store = NULL;
        return -1;
    }
    if (!has_result) {
        /* The call never reached the journal: it did not run. */
        const char *tool = json_string_value(
            json_object_get(json_object_get(row, "meta"), "tool"));
        made = json_pack(
            "{s:{s:s,s:s},s:{s:s,s:s,s:s,s:s,s:{s:{s:s,s:s}}}}", "call", "id",
            call_id, "tool", tool != NULL ? tool : "?", "result", "id", call_id,
            "tool", tool != NULL ? tool : "?", "outcome", "error", "execution",
            "not_started", "payload", "error", "code", "INTERRUPTED", "message",
            "the server that took this task ended before its call started");
        rec = made;
    }
    char *text = json_dumps(rec, JSON_COMPACT);
    tg_turn *turn = NULL;
    int rc = -1;
    /* answered in the version of the request that made the task */
    const char *vname = json_string_value(
        json_object_get(json_object_get(row, "meta"), "version"));
    tg__mcp_version v = tg__mcp_version_from_name(
        vname != NULL ? vname : "", vname != NULL ? strlen(vname) : 0);
    if (text != NULL &&
        tg_turn_from_record("mcp", text, strlen(text), &turn, NULL) == 0) {
        finish(ts, id, turn, v, 0, NULL, false);
        rc = 1;
    }
    tg_turn_free(turn);
    free(text);
    json_decref(made);
    return rc;
}

/* Task `id` of `caller` as tg_task_get gives it, settled when no one runs
 * it (new ref), or NULL: unknown, expired or another caller's (*code
 * -32602) or the store failed (*code -32603, err filled). */
static json_t *load(srv_tasks *ts, const char *id, const char *caller,
                    int *code, tg_error *err)
{
    for (int round = 0; round < 3; round++) {
        tg_task_store *store = store_of(ts, err);
        char *text = NULL;
        int rc = store != NULL ? tg_task_get(store, id, caller, &text, err)
                               : TG_EJOURNAL;
        if (rc != 0) {
            *code = rc == TG_ENOTFOUND ? RPC_INVALID_PARAMS : RPC_INTERNAL;
            return NULL;
        }
        json_t *row = json_loads(text, 0, NULL); /* new ref */
        tg_free(text);
        if (row == NULL) {
            *code = RPC_INTERNAL;
            snprintf(err->message, sizeof err->message, "out of memory");
            return NULL;
        }
        const char *st = json_string_value(json_object_get(row, "status"));
        if (st == NULL || strcmp(st, "working") != 0 || find_live(ts, id) ||
            settle(ts, row) == 0)
            return row;
        json_decref(row); /* settled (or recovered): read it again */
    }
    *code = RPC_INTERNAL;
    snprintf(err->message, sizeof err->message,
             "Internal error: the task's state cannot be read");
    return NULL;
}

/* ------------------------------------------------------------ replies */

static void rpc_error(srv_ctx *c, int code, const char *message,
                      json_t *data_take)
{
    srv_send_error(c->srv, c->out, c->version, c->method, c->id, code, message,
                   data_take);
}

static void load_error(srv_ctx *c, int code, const tg_error *err,
                       const char *id)
{
    char m[600];
    if (code == RPC_INVALID_PARAMS)
        snprintf(m, sizeof m,
                 "Invalid params: no task '%.128s' (unknown, expired, or "
                 "not yours)",
                 id);
    else
        snprintf(m, sizeof m, "Internal error: %s", err->message);
    rpc_error(c, code, m, NULL);
}

/* Task `id` of c's caller (new ref), or NULL once c was answered with
 * the error. */
static json_t *load_for(srv_ctx *c, srv_tasks *ts, const char *id)
{
    tg_error err = {0};
    int code = 0;
    json_t *row = load(ts, id, srv_session_caller(c->s), &code, &err);
    if (row == NULL)
        load_error(c, code, &err, id);
    return row;
}

/* What a finished task's tasks/result answers: the tools/call's answer,
 * marked with its task. */
static void send_answer(srv_ctx *c, const json_t *row)
{
    const json_t *answer = json_object_get(row, "answer");
    const json_t *res = json_object_get(answer, "result");
    const json_t *error = json_object_get(answer, "error");
    if (json_is_object(res)) {
        json_t *r = json_deep_copy(res); /* new ref */
        json_t *meta = json_object_get(r, "_meta");
        if (meta == NULL) {
            meta = json_object();
            json_object_set_new(r, "_meta", meta);
        }
        json_object_set_new(
            meta, RELATED_TASK,
            json_pack("{s:O}", "taskId", json_object_get(row, "taskId")));
        srv_reply(c, r);
    } else if (json_is_object(error)) {
        srv_send_json(c->srv, c->out, c->version, c->method, SRV_MSG_RESPONSE,
                      json_pack("{s:s,s:O,s:O}", "jsonrpc", "2.0", "id", c->id,
                                "error", error));
    } else {
        rpc_error(c, RPC_INTERNAL, "Internal error: the task has no answer",
                  NULL);
    }
}

/* ------------------------------------------------------------ waiters */

/* The context of an answer sent later, outside srv_method: to request
 * `id` of session s on out, under v. */
static srv_ctx later_ctx(tg__srv *srv, srv_session *s, srv_out *out,
                         tg__mcp_version v, const json_t *id,
                         const char *method, srv_answer *ans)
{
    memset(ans, 0, sizeof *ans);
    srv_ctx c = {.srv = srv,
                 .s = s,
                 .out = out,
                 .version = v,
                 .id = id,
                 .method = method,
                 .log_level = -1,
                 .ans = ans};
    return c;
}

static void waiter_answer(srv_tasks *ts, waiter *w, const json_t *row, int code,
                          const char *why)
{
    srv_answer ans;
    srv_ctx c = later_ctx(ts->srv, w->s, w->out, w->version, w->id,
                          "tasks/result", &ans);
    if (row != NULL)
        send_answer(&c, row);
    else
        rpc_error(&c, code, why, NULL);
    srv_out_unref(w->out);
    srv_session_release(w->s);
    json_decref(w->id);
    free(w);
    ts->srv->live--;
}

static void on_poll(uv_timer_t *h);

/* Answers the waiters whose task ended (or went); keeps the poll timer
 * running while some wait on a task another server runs. */
static void check_waiters(srv_tasks *ts)
{
    tg__srv *srv = ts->srv;
    bool remote = false;
    for (waiter **pp = &ts->waiters, *w; (w = *pp) != NULL;) {
        if (find_live(ts, w->task_id) != NULL) {
            pp = &w->next;
            continue;
        }
        tg_error err = {0};
        int code = 0;
        json_t *row =
            load(ts, w->task_id, srv_session_caller(w->s), &code, &err);
        const char *st = json_string_value(json_object_get(row, "status"));
        if (row != NULL && st != NULL && strcmp(st, "working") == 0 &&
            !srv->stopping) {
            json_decref(row);
            remote = true;
            pp = &w->next;
            continue;
        }
        *pp = w->next;
        if (row != NULL && st != NULL && strcmp(st, "working") == 0)
            waiter_answer(ts, w, NULL, RPC_INTERNAL,
                          "Internal error: the server is shutting down; ask "
                          "for the task's result again");
        else if (row != NULL)
            waiter_answer(ts, w, row, 0, NULL);
        else
            waiter_answer(ts, w, NULL, code,
                          code == RPC_INVALID_PARAMS
                              ? "Invalid params: the task is gone (expired)"
                              : "Internal error: the task's state cannot be "
                                "read");
        json_decref(row);
    }
    if (remote && ts->poll == NULL &&
        (ts->poll = malloc(sizeof *ts->poll)) != NULL) {
        uv_timer_init(srv_loop(srv), ts->poll);
        ts->poll->data = ts;
        uv_timer_start(ts->poll, on_poll, POLL_MS, POLL_MS);
    } else if (!remote && ts->poll != NULL) {
        uv_close((uv_handle_t *)ts->poll, close_free);
        ts->poll = NULL;
    }
    srv_check_stopped(srv);
}

static void on_poll(uv_timer_t *h)
{
    check_waiters(h->data);
}

/* ------------------------------------------------------------ methods */

/* Whether the request's client capabilities (2026-07-28: its _meta's)
 * declare the tasks extension. */
static bool declares_ext(const srv_ctx *c)
{
    return json_object_get(json_object_get(c->caps, "extensions"), EXT_TASKS) !=
           NULL;
}

void srv_tasks_capabilities(const srv_ctx *c, json_t *caps)
{
    if (kind(c->version) == TG_MCP_TASKS_CORE) {
        json_object_set_new(caps, "tasks",
                            json_pack("{s:{},s:{},s:{s:{s:{}}}}", "list",
                                      "cancel", "requests", "tools", "call"));
    } else if (kind(c->version) == TG_MCP_TASKS_EXTENSION && declares_ext(c)) {
        json_t *ext = json_object_get(caps, "extensions"); /* borrowed */
        if (ext == NULL) {
            ext = json_object();
            json_object_set_new(caps, "extensions", ext);
        }
        json_object_set_new(ext, EXT_TASKS, json_object());
    }
}

static void m_get(srv_ctx *c, srv_tasks *ts, const char *id)
{
    json_t *row = load_for(c, ts, id);
    if (row == NULL)
        return;
    srv_task *live = find_live(ts, id);
    json_t *t = task_json(row, c->version, live);
    if (kind(c->version) == TG_MCP_TASKS_EXTENSION) {
        /* DetailedTask: the answer inside once it ended. */
        const char *st = json_string_value(json_object_get(t, "status"));
        const json_t *answer = json_object_get(row, "answer");
        if (strcmp(st, "completed") == 0 &&
            json_object_get(answer, "result") != NULL)
            json_object_set(t, "result", json_object_get(answer, "result"));
        else if (strcmp(st, "failed") == 0 &&
                 json_object_get(answer, "error") != NULL)
            json_object_set(t, "error", json_object_get(answer, "error"));
        else if (strcmp(st, "input_required") == 0)
            /* a source's questions, answered by tasks/update */
            json_object_set_new(t, "inputRequests",
                                srv_elicits_input_requests(live->r));
    }
    json_decref(row);
    srv_reply(c, t);
}

static void m_result(srv_ctx *c, srv_tasks *ts, const char *id)
{
    json_t *row = load_for(c, ts, id);
    if (row == NULL)
        return;
    const char *st = json_string_value(json_object_get(row, "status"));
    if (strcmp(st, "working") != 0) {
        send_answer(c, row);
        json_decref(row);
        return;
    }
    json_decref(row);
    waiter *w = calloc(1, sizeof *w);
    if (w == NULL) {
        rpc_error(c, RPC_INTERNAL, "Internal error: out of memory", NULL);
        return;
    }
    snprintf(w->task_id, sizeof w->task_id, "%s", id);
    w->s = c->s;
    srv_session_hold(c->s);
    w->out = c->out;
    srv_out_ref(c->out);
    w->id = json_incref((json_t *)c->id);
    w->version = c->version;
    w->next = ts->waiters;
    ts->waiters = w;
    c->srv->live++;
    c->ans->pending++;
    srv_task *live = find_live(ts, id);
    if (asking(live)) /* the question goes with the wait (2025-11-25) */
        (void)srv_send(c->srv, c->out, c->version, NULL, SRV_MSG_REQUEST,
                       live->question, strlen(live->question));
    check_waiters(ts);
}

static void m_list(srv_ctx *c, srv_tasks *ts)
{
    const char *cursor =
        json_string_value(json_object_get(srv_params(c), "cursor"));
    if (json_object_get(srv_params(c), "cursor") != NULL && cursor == NULL) {
        rpc_error(c, RPC_INVALID_PARAMS,
                  "Invalid params: the cursor must be a string", NULL);
        return;
    }
    tg_error err = {0};
    tg_task_store *store = store_of(ts, &err);
    char *text = NULL;
    int rc = store != NULL ? tg_task_list(store, srv_session_caller(c->s),
                                          cursor, LIST_PAGE + 1, &text, &err)
                           : TG_EJOURNAL;
    if (rc != 0) {
        load_error(c, rc == TG_ENOTFOUND ? RPC_INVALID_PARAMS : RPC_INTERNAL,
                   &err, cursor != NULL ? cursor : "");
        return;
    }
    json_t *rows = json_loads(text, 0, NULL), *tasks = json_array();
    tg_free(text);
    size_t i, n = json_array_size(rows);
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (i == LIST_PAGE)
            break;
        const char *id = json_string_value(json_object_get(row, "taskId"));
        const char *st = json_string_value(json_object_get(row, "status"));
        json_t *fresh = NULL; /* new ref: settled again when need be */
        int code = 0;
        if (st != NULL && strcmp(st, "working") == 0 &&
            find_live(ts, id) == NULL)
            fresh = load(ts, id, srv_session_caller(c->s), &code, &err);
        srv_task *live = find_live(ts, id);
        json_array_append_new(
            tasks, task_json(fresh != NULL ? fresh : row, c->version, live));
        json_decref(fresh);
    }
    json_t *r = json_pack("{s:o}", "tasks", tasks);
    if (n > LIST_PAGE)
        json_object_set(
            r, "nextCursor",
            json_object_get(json_array_get(rows, LIST_PAGE - 1), "taskId"));
    json_decref(rows);
    srv_reply(c, r);
}

static void m_cancel(srv_ctx *c, srv_tasks *ts, const char *id)
{
    json_t *row = load_for(c, ts, id);
    if (row == NULL)
        return;
    const char *st = json_string_value(json_object_get(row, "status"));
    srv_task *live = find_live(ts, id);
    bool v26 = kind(c->version) == TG_MCP_TASKS_EXTENSION;
    if (v26 &&
        (strcmp(st, "working") != 0 || (live && live->cancel_requested))) {
        /* The extension's cancel is idempotent: a task that ended, or is
         * being cancelled, is acknowledged as any other. */
        json_decref(row);
        srv_reply(c, json_object());
        return;
    }
    if (strcmp(st, "working") != 0 || (live && live->cancel_requested)) {
        char m[200];
        snprintf(m, sizeof m,
                 "Invalid params: the task is %s already: it cannot be "
                 "cancelled",
                 status_for(row, c->version, live));
        json_decref(row);
        rpc_error(c, RPC_INVALID_PARAMS, m, NULL);
        return;
    }
    if (live == NULL) {
        json_decref(row);
        rpc_error(c, RPC_INTERNAL,
                  "Internal error: the task runs in another toolgate server "
                  "process; cancel it there",
                  NULL);
        return;
    }
    live->cancel_requested = true;
    (void)tg_runtime_cancel(c->srv->rt, live->r->call_id, "user",
                            "the client cancelled the task", NULL);
    srv_kick(c->srv);
    if (v26)
        srv_reply(c, json_object());
    else
        srv_reply(c, task_json(row, c->version, live));
    json_decref(row);
}

int srv_tasks_method(srv_ctx *c)
{
    const char *m = c->method;
    if (strncmp(m, "tasks/", 6) != 0 || kind(c->version) == TG_MCP_TASKS_NONE)
        return 0;
    bool v26 = kind(c->version) == TG_MCP_TASKS_EXTENSION;
    m += 6;
    if (v26 ? strcmp(m, "get") != 0 && strcmp(m, "update") != 0 &&
                  strcmp(m, "cancel") != 0
            : strcmp(m, "get") != 0 && strcmp(m, "result") != 0 &&
                  strcmp(m, "list") != 0 && strcmp(m, "cancel") != 0)
        return 0;
    if (v26 && !declares_ext(c)) {
        rpc_error(c, MCP_MISSING_CAPABILITY,
                  "Missing required client capability: the "
                  "io.modelcontextprotocol/tasks extension",
                  json_pack("{s:{s:{s:{}}}}", "requiredCapabilities",
                            "extensions", EXT_TASKS));
        c->ans->http_status = 400;
        return 1;
    }
    srv_tasks *ts = tasks_of(c->srv);
    if (ts == NULL) {
        rpc_error(c, RPC_INTERNAL, "Internal error: out of memory", NULL);
        return 1;
    }
    if (strcmp(m, "list") == 0) {
        m_list(c, ts);
        return 1;
    }
    const char *id =
        json_string_value(json_object_get(srv_params(c), "taskId"));
    if (id == NULL || *id == '\0' || strlen(id) > 128) {
        rpc_error(c, RPC_INVALID_PARAMS,
                  "Invalid params: params.taskId (a string) is missing", NULL);
        return 1;
    }
    if (strcmp(m, "get") == 0) {
        m_get(c, ts, id);
    } else if (strcmp(m, "result") == 0) {
        m_result(c, ts, id);
    } else if (strcmp(m, "cancel") == 0) {
        m_cancel(c, ts, id);
    } else {
        /* tasks/update: the answers to a source's questions go upstream;
         * answers to no pending question are ignored; acknowledged once
         * the task is known. */
        const json_t *inputs = json_object_get(srv_params(c), "inputResponses");
        if (inputs != NULL && !json_is_object(inputs)) {
            rpc_error(c, RPC_INVALID_PARAMS,
                      "Invalid params: inputResponses must be an object", NULL);
            return 1;
        }
        json_t *row = load_for(c, ts, id);
        srv_task *live = row != NULL ? find_live(ts, id) : NULL;
        if (live != NULL && live->r != NULL && inputs != NULL)
            srv_elicits_take(live->r, inputs);
        if (row != NULL)
            srv_reply(c, json_object());
        json_decref(row);
    }
    return 1;
}

/* ------------------------------------------------------------ the calls */

/* Records task t in the store and answers its request with the
 * CreateTaskResult. Returns 0, or -1 (the request goes on as a plain
 * call). */
static int record(srv_task *t, srv_ctx *c)
{
    srv_tasks *ts = t->all;
    srv_req *r = t->r;
    const char *tool = tg_call_tool(tg_turn_call(r->turn, 0));
    json_t *meta = json_pack("{s:s,s:s}", "tool", tool ? tool : "?", "version",
                             tg__mcp_version_name(c->version));
    char *meta_text = meta != NULL ? json_dumps(meta, JSON_COMPACT) : NULL;
    json_decref(meta);
    tg_error err = {0};
    tg_task_store *store = store_of(ts, &err);
    const char *caller = srv_session_caller(r->s);
    char *row_text = NULL;
    int rc = store != NULL && meta_text != NULL
                 ? tg_task_create(store, t->id, caller, r->call_id, t->ttl_ms,
                                  meta_text, &err)
                 : -1;
    free(meta_text);
    /* Read back: the CreateTaskResult says what tasks/get will. */
    if (rc == 0)
        rc = tg_task_get(store, t->id, caller, &row_text, &err);
    json_t *row = rc == 0 ? json_loads(row_text, 0, NULL) : NULL;
    tg_free(row_text);
    if (row == NULL) {
        fprintf(stderr,
                "toolgate serve: a task could not be recorded (%s); "
                "the call is answered when it ends\n",
                err.message);
        return -1;
    }
    t->recorded = true;
    json_t *task = task_json(row, c->version, t); /* new ref */
    json_decref(row);
    json_t *res = task;
    if (kind(c->version) == TG_MCP_TASKS_EXTENSION)
        json_object_set_new(task, "resultType", json_string("task"));
    else
        res = json_pack("{s:o}", "task", task);
    srv_reply(c, res);
    /* The client has its answer: nothing more goes on the request's
     * stream, and the task outlives the stream and the session. */
    r->answered = true;
    r->log_level = -1;
    json_decref(r->progress_token);
    r->progress_token = NULL;
    srv_req_detach(r);
    return 0;
}

static void on_task_after(uv_timer_t *h)
{
    srv_task *t = h->data;
    srv_req *r = t->r;
    uv_close((uv_handle_t *)t->timer, close_free);
    t->timer = NULL;
    srv_answer ans;
    srv_ctx c =
        later_ctx(r->srv, r->s, r->out, r->version, r->id, "tools/call", &ans);
    /* (a request answered meanwhile, with an InputRequiredResult, goes on
     * as a plain call: elicit.c) */
    if (r->silent || r->answered || r->out->closed || record(t, &c) != 0)
        task_free(t); /* answered as a plain call */
}

int srv_task_start(srv_ctx *c, srv_req *r)
{
    static const char *const task_path[] = {"task"};
    tg__rpc_value tv;
    tg__mcp_tasks k = kind(c->version);
    /* params.task is looked for only where the version has tasks */
    const json_t *want =
        k != TG_MCP_TASKS_NONE && srv_param_find(c, task_path, 1, &tv)
            ? json_object_get(srv_params(c), "task")
            : NULL; /* borrowed */
    bool now = k == TG_MCP_TASKS_CORE && json_is_object(want);
    bool later = k == TG_MCP_TASKS_EXTENSION && declares_ext(c);
    srv_tasks *ts;
    if ((!now && !later) ||
        !tg__mcp_tools_has(srv_tools(c->srv),
                           tg_call_tool(tg_turn_call(r->turn, 0))) ||
        (ts = tasks_of(c->srv)) == NULL)
        return 0;
    srv_task *t = calloc(1, sizeof *t);
    if (t == NULL)
        return 0;
    t->all = ts;
    t->r = r;
    t->ttl_ms = DEFAULT_TTL_MS;
    const json_t *ttl = json_object_get(want, "ttl");
    if (json_is_integer(ttl)) {
        json_int_t v = json_integer_value(ttl);
        t->ttl_ms = v < MIN_TTL_MS   ? MIN_TTL_MS
                    : v > MAX_TTL_MS ? MAX_TTL_MS
                                     : v;
    }
    srv_random_hex(t->id, 16);
    t->next = ts->live;
    if (t->next != NULL)
        t->next->prev = t;
    ts->live = t;
    r->task = t;
    if (now) {
        if (record(t, c) != 0) {
            task_free(t);
            return 0;
        }
        return 1;
    }
    if ((t->timer = malloc(sizeof *t->timer)) == NULL) {
        task_free(t);
        return 0;
    }
    uv_timer_init(srv_loop(c->srv), t->timer);
    t->timer->data = t;
    uv_timer_start(t->timer, on_task_after, c->srv->task_after_ms, 0);
    return 0;
}

int srv_task_done(srv_req *r, int status, const tg_error *err)
{
    srv_task *t = r->task;
    if (!t->recorded) {
        task_free(t); /* ended before it became a task */
        return 0;
    }
    srv_tasks *ts = t->all;
    char id[sizeof t->id];
    memcpy(id, t->id, sizeof id);
    finish(ts, id, r->turn, r->version, status, err, t->cancel_requested);
    bool v2025 = kind(r->version) == TG_MCP_TASKS_CORE;
    task_free(t);
    if (v2025 && !r->s->ended && r->s->notify != NULL) {
        /* notifications/tasks/status: the whole Task, as it ended */
        tg_error e2 = {0};
        int code = 0;
        json_t *row = load(ts, id, srv_session_caller(r->s), &code, &e2);
        if (row != NULL)
            srv_send_json(r->srv, r->s->notify, r->version, NULL,
                          SRV_MSG_NOTIFICATION,
                          json_pack("{s:s,s:s,s:o}", "jsonrpc", "2.0", "method",
                                    "notifications/tasks/status", "params",
                                    task_json(row, r->version, NULL)));
        json_decref(row);
    }
    check_waiters(ts);
    return 1;
}

srv_req *srv_task_req_by_call(tg__srv *srv, const char *call_id)
{
    for (srv_task *t = srv->tasks ? srv->tasks->live : NULL; t != NULL;
         t = t->next)
        if (t->recorded && t->r != NULL && strcmp(t->r->call_id, call_id) == 0)
            return t->r;
    return NULL;
}

srv_req *srv_task_req_by_ask(tg__srv *srv, const json_t *ask_id)
{
    for (srv_task *t = srv->tasks ? srv->tasks->live : NULL; t != NULL;
         t = t->next)
        if (asking(t) &&
            ((t->r->ask_id != NULL && json_equal(t->r->ask_id, ask_id)) ||
             srv_elicits_has(t->r, ask_id)))
            return t->r;
    return NULL;
}

/* notifications/tasks/status of live task t to the session that made it
 * (2025-11-25; a MAY of the specification, sent when the status changes
 * while the task runs). */
static void send_status(srv_task *t)
{
    srv_req *r = t->r;
    if (r->s->ended || r->s->notify == NULL)
        return;
    tg_error err = {0};
    int code = 0;
    json_t *row = load(t->all, t->id, srv_session_caller(r->s), &code, &err);
    if (row != NULL)
        srv_send_json(r->srv, r->s->notify, r->version, NULL,
                      SRV_MSG_NOTIFICATION,
                      json_pack("{s:s,s:s,s:o}", "jsonrpc", "2.0", "method",
                                "notifications/tasks/status", "params",
                                task_json(row, r->version, t)));
    json_decref(row);
}

const char *srv_task_id(const srv_req *r)
{
    return r->task != NULL ? r->task->id : "";
}

int srv_task_ask(srv_req *r, const char *msg_text)
{
    srv_task *t = r->task;
    if (t == NULL || !t->recorded || kind(r->version) != TG_MCP_TASKS_CORE)
        return -1;
    free(t->question);
    if ((t->question = strdup(msg_text)) == NULL)
        return -1;
    srv_tasks *ts = t->all;
    /* The session that made the task hears the question on its own
     * stream (stdio; HTTP's GET stream when open); a tasks/result that
     * waits for the task carries it too, as one made later will. */
    if (!r->s->ended && r->s->notify != NULL)
        (void)srv_send(r->srv, r->s->notify, r->version, NULL, SRV_MSG_REQUEST,
                       msg_text, strlen(msg_text));
    for (waiter *w = ts->waiters; w != NULL; w = w->next)
        if (strcmp(w->task_id, t->id) == 0 && w->out != r->s->notify)
            (void)srv_send(r->srv, w->out, w->version, NULL, SRV_MSG_REQUEST,
                           msg_text, strlen(msg_text));
    send_status(t);
    return 0;
}

void srv_tasks_free(tg__srv *srv)
{
    srv_tasks *ts = srv->tasks;
    if (ts == NULL)
        return;
    while (ts->live != NULL)
        task_free(ts->live);
    while (ts->waiters != NULL) {
        waiter *w = ts->waiters;
        ts->waiters = w->next;
        srv_out_unref(w->out);
        srv_session_release(w->s);
        json_decref(w->id);
        free(w);
    }
    if (ts->poll != NULL)
        uv_close((uv_handle_t *)ts->poll, close_free);
    tg_task_store_free(ts->store);
    free(ts);
    srv->tasks = NULL;
}
