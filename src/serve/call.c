/* SPDX-License-Identifier: MIT */
/*
 * call.c - tools/call: each request becomes a one-call turn with an id of
 * the server's own (the journal's key: JSON-RPC ids repeat across clients
 * and sessions), submitted to the runtime under the session's caller. While
 * it runs, its output becomes notifications/progress (bytes so far and the
 * last line, for a request with a progressToken; the progress an MCP
 * server behind the gateway reports, its numbers and message, instead of
 * the bytes) and each line the tool
 * writes to stderr a notifications/message log message at the level the
 * line starts with (info otherwise), both on the request's own stream; a
 * notifications/cancelled, or under 2026-07-28 the request's stream
 * closing, cancels it and nothing more is sent for it. Its result is
 * answered as a CallToolResult with toolgate's outcome in _meta; an
 * unknown tool is JSON-RPC -32602.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "error.h"
#include "json_out.h"
#include "server.h"
#include "tasks.h"
#include "utf8.h"
#include "zalloc.h"

#define PROGRESS_EVERY_MS 50

enum { RPC_INVALID_PARAMS = -32602, RPC_INTERNAL = -32603 };

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ------------------------------------------------------------ lists */

void srv_req_link(srv_req *r)
{
    r->id_is_int = json_is_integer(r->id);
    r->id_num = r->id_is_int ? json_integer_value(r->id) : 0;
    r->snext = r->s->reqs;
    if (r->snext != NULL)
        r->snext->sprev = r;
    r->s->reqs = r;
    r->onext = r->out->reqs;
    if (r->onext != NULL)
        r->onext->oprev = r;
    r->out->reqs = r;
}

static void unlink_req(srv_req *r)
{
    if (r->detached)
        return;
    if (r->sprev != NULL)
        r->sprev->snext = r->snext;
    else
        r->s->reqs = r->snext;
    if (r->snext != NULL)
        r->snext->sprev = r->sprev;
    if (r->oprev != NULL)
        r->oprev->onext = r->onext;
    else
        r->out->reqs = r->onext;
    if (r->onext != NULL)
        r->onext->oprev = r->oprev;
}

void srv_req_detach(srv_req *r)
{
    unlink_req(r);
    r->detached = true;
}

srv_req *srv_req_find(srv_session *s, const json_t *id)
{
    /* every call in flight is compared: integer ids (the usual ones)
     * without calls into jansson (srv_req_link keeps them) */
    if (json_is_integer(id)) {
        json_int_t v = json_integer_value(id);
        for (srv_req *r = s->reqs; r != NULL; r = r->snext)
            if (r->id_is_int && r->id_num == v)
                return r;
        return NULL;
    }
    for (srv_req *r = s->reqs; r != NULL; r = r->snext)
        if (json_equal(r->id, id))
            return r;
    return NULL;
}

void srv_req_cancel(tg__srv *srv, srv_req *r, const char *reason)
{
    if (r->listen) {
        srv_listen_end(r, false); /* the client ended it: nothing is sent */
        return;
    }
    if (r->silent)
        return;
    r->silent = true;
    (void)tg_runtime_cancel(srv->rt, r->call_id, "user", reason, NULL);
}

/* ------------------------------------------------------------ progress */

/* Starts a notification's text in b (on small, cap bytes, growing past
 * it): {"jsonrpc":"2.0","method":"METHOD","params":{ - the params' members
 * follow. False on out of memory. */
static bool note_begin(tg__buf *b, char *small, size_t cap, const char *method)
{
    tg__buf_init_with(b, small, cap, 0);
    return tg__buf_puts(b, "{\"jsonrpc\":\"2.0\",\"method\":\"") == 0 &&
           tg__buf_puts(b, method) == 0 &&
           tg__buf_puts(b, "\",\"params\":{") == 0;
}

/* Sends the notification written in b (a JSON-RPC message without its
 * newline) on the request's stream, unless it was silenced or answered. */
static void send_note_text(srv_req *r, tg__buf *b, bool ok)
{
    if (ok && !r->silent && !r->answered)
        (void)srv_send(r->srv, r->out, r->version, NULL, SRV_MSG_NOTIFICATION,
                       b->data, b->len);
    tg__buf_cleanup(b);
}

static void progress(srv_req *r, bool force)
{
    uint64_t t = now_ms();
    if (r->progress_token == NULL || r->progress_relayed ||
        (!force && t - r->last_progress_ms < PROGRESS_EVERY_MS))
        return;
    r->last_progress_ms = t;
    if ((double)r->out_bytes <= r->progress_sent)
        return;
    r->progress_sent = (double)r->out_bytes;
    /* written as text, in jansson's order and escapes: no json_t a note */
    char small[512];
    tg__buf b;
    bool ok = note_begin(&b, small, sizeof small, "notifications/progress") &&
              tg__buf_puts(&b, "\"progressToken\":") == 0 &&
              tg__json_dump(r->progress_token, &b) == 0 &&
              tg__buf_puts(&b, ",\"progress\":") == 0 &&
              tg__json_integer(&b, (long long)r->out_bytes) == 0;
    if (ok && r->lines != NULL && r->lines->last_line[0] != '\0')
        ok = tg__buf_puts(&b, ",\"message\":") == 0 &&
             tg__json_string(&b, r->lines->last_line,
                             strlen(r->lines->last_line)) == 0;
    ok = ok && tg__buf_puts(&b, "}}") == 0;
    send_note_text(r, &b, ok);
}

/* v as JSON: an integer when it is one (2^53 at most), else a real. */
static json_t *json_num(double v)
{
    return v == floor(v) && fabs(v) <= 9007199254740992.0
               ? json_integer((json_int_t)v)
               : json_real(v);
}

/* Relays the progress a source reported (output stream 3: one line
 * "progress P[/T][: MESSAGE]\n", toolgate.h) as its own numbers and
 * message, while P increases. */
static void relay_progress(srv_req *r, const char *data, size_t len)
{
    char line[640];
    if (r->progress_token == NULL || len < 10 || len >= sizeof line ||
        memcmp(data, "progress ", 9) != 0)
        return;
    memcpy(line, data, len);
    line[len] = '\0';
    if (line[len - 1] == '\n')
        line[len - 1] = '\0';
    char *end;
    double p = strtod(line + 9, &end), t = -1;
    if (end == line + 9 || !(p > r->progress_sent) || !isfinite(p))
        return;
    if (*end == '/') {
        char *s = end + 1;
        t = strtod(s, &end);
        if (end == s || !isfinite(t))
            return;
    }
    json_t *params = json_pack("{s:O,s:o}", "progressToken", r->progress_token,
                               "progress", json_num(p)); /* new ref */
    if (params == NULL)
        return;
    if (t >= 0)
        json_object_set_new(params, "total", json_num(t));
    if (strncmp(end, ": ", 2) == 0)
        json_object_set_new(params, "message", json_string(end + 2));
    r->progress_relayed = true;
    r->progress_sent = p;
    json_t *msg =
        json_pack("{s:s,s:s,s:o}", "jsonrpc", "2.0", "method",
                  "notifications/progress", "params", params); /* new ref */
    tg__buf b;
    tg__buf_init(&b, 0);
    bool ok = msg != NULL && tg__json_dump(msg, &b) == 0;
    json_decref(msg);
    send_note_text(r, &b, ok);
}

/* The level a log line starts with ("ERROR: x", "[warn] y"), else info. */
static int line_level(const char *line)
{
    while (*line == '[' || *line == ' ')
        line++;
    char word[16];
    size_t n = 0;
    while (n + 1 < sizeof word && isalpha((unsigned char)line[n])) {
        word[n] = (char)tolower((unsigned char)line[n]);
        n++;
    }
    word[n] = '\0';
    if (n == 0 || (line[n] != ':' && line[n] != ']' && line[n] != ' '))
        return 1;
    if (strcmp(word, "warn") == 0)
        return 3;
    if (strcmp(word, "fatal") == 0)
        return 5;
    if (strcmp(word, "err") == 0)
        return 4;
    int l = srv_log_level_parse(word);
    return l >= 0 ? l : 1;
}

static void log_line(srv_req *r, const char *line, size_t len)
{
    if (r->log_level < 0 || len == 0)
        return;
    if (!tg__utf8_valid((const unsigned char *)line, len))
        return; /* not UTF-8: a log message carries text */
    /* line_level reads, past '[' and ' ', a word of at most 15 letters */
    size_t skip = 0;
    while (skip < len && (line[skip] == '[' || line[skip] == ' '))
        skip++;
    char head[17];
    size_t hn = len - skip < sizeof head - 1 ? len - skip : sizeof head - 1;
    memcpy(head, line + skip, hn);
    head[hn] = '\0';
    int lvl = line_level(head);
    if (lvl < r->log_level)
        return;
    const char *tool = tg_call_tool(tg_turn_call(r->turn, 0));
    char small[512];
    tg__buf b;
    bool ok = note_begin(&b, small, sizeof small, "notifications/message") &&
              tg__buf_puts(&b, "\"level\":\"") == 0 &&
              tg__buf_puts(&b, srv_log_level_name(lvl)) == 0 &&
              tg__buf_puts(&b, "\",\"logger\":") == 0 &&
              tg__json_string(&b, tool, strlen(tool)) == 0 &&
              tg__buf_puts(&b, ",\"data\":") == 0 &&
              tg__json_string(&b, line, len) == 0 &&
              tg__buf_puts(&b, "}}") == 0;
    send_note_text(r, &b, ok);
}

/* Feeds output to a line reader: complete lines go to `emit` (cut at the
 * buffer's size), the rest waits. */
static void lines(srv_req *r, char *buf, size_t cap, size_t *len,
                  const char *data, size_t n,
                  void (*emit)(srv_req *, const char *, size_t))
{
    for (size_t i = 0; i < n; i++) {
        if (data[i] == '\n') {
            emit(r, buf, *len);
            *len = 0;
        } else if (*len < cap) {
            buf[(*len)++] = data[i];
        }
    }
}

static void keep_last(srv_req *r, const char *line, size_t len)
{
    char *last = r->lines->last_line;
    if (len == 0)
        return;
    if (len >= sizeof r->lines->last_line)
        len = sizeof r->lines->last_line - 1;
    memcpy(last, line, len);
    last[len] = '\0';
    /* a cut in the middle of a character is no text: drop that tail */
    while (len > 0 && ((unsigned char)last[len - 1] & 0x80) &&
           !tg__utf8_valid((const unsigned char *)last, len))
        last[--len] = '\0';
}

static void on_output(void *ud, const tg_call *call, int stream,
                      const char *data, size_t len)
{
    (void)call;
    srv_req *r = ud;
    if (stream == 3) {
        relay_progress(r, data, len);
        return;
    }
    r->out_bytes += len;
    /* Lines are read only for whom they go to: stderr as log messages,
     * stdout for the progress notifications' last line. Without memory
     * for the line readers there are no log lines and no last line. */
    bool wanted = stream == 2 ? r->log_level >= 0 : r->progress_token != NULL;
    if (wanted && r->lines == NULL) {
        /* 5 KB of buffers: only their lengths need a start */
        r->lines = malloc(sizeof *r->lines);
        if (r->lines != NULL) {
            r->lines->line_len = r->lines->eline_len = 0;
            r->lines->last_line[0] = '\0';
        }
    }
    struct srv_req_lines *l = wanted ? r->lines : NULL;
    if (l != NULL && stream == 2)
        lines(r, l->eline, sizeof l->eline, &l->eline_len, data, len, log_line);
    else if (l != NULL)
        lines(r, l->line, sizeof l->line, &l->line_len, data, len, keep_last);
    progress(r, false);
}

/* ------------------------------------------------------------ result */

int srv_call_answer(tg__srv *srv, tg__buf *result, const tg_turn *turn,
                    tg__mcp_version v, int status, const tg_error *err,
                    char *msg, size_t msg_size)
{
    const tg_result *tr = status == 0 ? tg_turn_result(turn, 0) : NULL;
    int code = tr != NULL ? tg__mcp_result_rpc_error(tr) : 0;
    if (code != 0) {
        snprintf(msg, msg_size, "Unknown tool: %s", tg_result_tool(tr));
        return code;
    }
    unsigned flags = 0;
    if (tr != NULL && tg_result_structured(tr))
        flags = TG_MCP_RESULT_OUTPUT_SCHEMA;
    else if (tr != NULL && tg_result_outcome(tr) != TG_OUTCOME_SUCCESS &&
             tg__mcp_tools_declares_output(srv_tools(srv), tg_result_tool(tr)))
        flags = TG_MCP_RESULT_DECLARED;
    if (tr != NULL && tg__mcp_call_tool_result(result, tr, v, flags,
                                               srv_meta_members(v)) == 0)
        return 0;
    snprintf(msg, msg_size, "%s",
             status != 0 && err != NULL
                 ? err->message
                 : "Internal error: the result could not be rendered");
    return RPC_INTERNAL;
}

/* Answers the request with its call's result: a CallToolResult, the
 * JSON-RPC error of an unknown tool, or (2026-07-28, a policy ask) an
 * InputRequiredResult. */
static void answer(srv_req *r, int status, const tg_error *err)
{
    if (status == 0 && r->input_required && tg_turn_result(r->turn, 0)) {
        srv_approval_input_required(r);
        return;
    }
    char small[1024]; /* most results fit: no allocation */
    tg__buf b;
    tg__buf_init_with(&b, small, sizeof small, 0);
    char m[512];
    int code = srv_call_answer(r->srv, &b, r->turn, r->version, status, err, m,
                               sizeof m);
    if (code == 0)
        srv_send_result_text(r->srv, r->out, r->version, "tools/call", r->id,
                             b.data, b.len);
    else
        srv_send_error(r->srv, r->out, r->version, "tools/call", r->id, code, m,
                       NULL);
    tg__buf_cleanup(&b);
}

void srv_req_free(srv_req *r)
{
    srv_elicits_drop(r);
    srv_park_free(r);
    unlink_req(r);
    json_decref(r->caps);
    json_decref(r->input);
    tg_turn_free(r->turn);
    json_decref(r->id);
    json_decref(r->progress_token);
    srv_out_unref(r->out);
    srv_session_release(r->s);
    r->srv->live--;
    free(r->lines);
    free(r);
}

static void on_done(void *ud, tg_turn *turn, int status, const tg_error *err)
{
    srv_req *r = ud;
    tg__srv *srv = r->srv;
    (void)turn;
    if (r->lines != NULL && r->lines->eline_len > 0)
        log_line(r, r->lines->eline, r->lines->eline_len);
    progress(r, true);
    srv_approval_drop(r);
    if (srv_park_done(r, status, err)) {
        srv_check_stopped(srv); /* kept for the retry, or freed */
        return;
    }
    srv_req_end(r, status, err);
}

void srv_req_end(srv_req *r, int status, const tg_error *err)
{
    tg__srv *srv = r->srv;
    if (r->task != NULL && srv_task_done(r, status, err)) {
        /* the task took the answer */
    } else if (!r->silent) {
        answer(r, status, err);
        r->answered = true;
    }
    srv_req_free(r);
    srv_check_stopped(srv);
}

static const tg_turn_ops call_ops = {NULL, on_output, NULL, on_done};

/* ------------------------------------------------------------ start */

/* "mcp-BOOT-N", the journal's id of the server's n-th call (out holds 64
 * bytes: BOOT is 16 hex digits, N at most 20 digits). Without snprintf,
 * which costs a call more than the rest of its id. */
static void call_id_make(char *out, const char *boot, uint64_t n)
{
    char digits[20];
    size_t nd = 0, bl = strlen(boot);
    do {
        digits[nd++] = (char)('0' + n % 10);
        n /= 10;
    } while (n > 0);
    memcpy(out, "mcp-", 4);
    memcpy(out + 4, boot, bl);
    out[4 + bl] = '-';
    for (size_t i = 0; i < nd; i++)
        out[5 + bl + i] = digits[nd - 1 - i];
    out[5 + bl + nd] = '\0';
}

int srv_call_start(srv_ctx *c)
{
    tg__srv *srv = c->srv;
    /* name, arguments and progress token from the token tape: a call
     * needs no jansson params */
    static const char *const name_path[] = {"name"},
                             *const args_path[] = {"arguments"},
                             *const token_path[] = {"_meta", "progressToken"};
    tg__rpc_value nv, av = {0}, tv;
    char name_small[128];
    tg__buf nb;
    tg__buf_init_with(&nb, name_small, sizeof name_small, 0);
    bool has_name = srv_param_find(c, name_path, 1, &nv) &&
                    nv.kind == TG_JT_STRING &&
                    tg__rpc_value_string(c->rpc, &nv, &nb) == 0;
    const char *name = has_name ? tg__buf_cstr(&nb) : NULL;
    bool has_args = srv_param_find(c, args_path, 1, &av);
    if (name == NULL || (has_args && av.kind != TG_JT_OBJECT)) {
        tg__buf_cleanup(&nb);
        srv_send_error(srv, c->out, c->version, c->method, c->id,
                       RPC_INVALID_PARAMS,
                       name == NULL ? "Invalid params: params.name (the tool) "
                                      "is missing"
                                    : "Invalid params: params.arguments must "
                                      "be an object",
                       NULL);
        return 0;
    }
    if (srv->stopping) {
        tg__buf_cleanup(&nb);
        srv_send_error(srv, c->out, c->version, c->method, c->id, RPC_INTERNAL,
                       "the server is shutting down", NULL);
        return 0;
    }
    if (srv_req_find(c->s, c->id) != NULL) {
        tg__buf_cleanup(&nb);
        srv_send_error(srv, c->out, c->version, c->method, c->id, -32600,
                       "Invalid Request: a request with this id is still "
                       "running",
                       NULL);
        return 0;
    }
    srv_req *r = tg__zalloc(sizeof *r);
    if (r == NULL)
        goto oom;
    r->srv = srv;
    r->version = c->version;
    r->retry_answer = -1;
    r->caps = json_incref((json_t *)c->caps);
    if (c->version == TG_MCP_V2026_07_28 && srv_approval_retry(c, r) != 0) {
        tg__buf_cleanup(&nb);
        json_decref(r->caps);
        free(r);
        return 0; /* refused: the error was sent */
    }
    if (r->retry_park[0] != '\0') {
        /* the retry of a call parked on a source's question (elicit.c) */
        tg__buf_cleanup(&nb);
        int rc = srv_park_resume(c, r);
        json_decref(r->caps);
        free(r);
        if (rc < 0)
            srv_send_error(srv, c->out, c->version, c->method, c->id,
                           RPC_INVALID_PARAMS,
                           "Invalid params: requestState names no call "
                           "waiting for input (it was answered already, or "
                           "its wait ended)",
                           NULL);
        if (rc == 1)
            c->ans->streams = true;
        return rc == 1;
    }
    r->log_level = c->log_level;
    if (r->log_level < 0 && c->version != TG_MCP_V2026_07_28)
        r->log_level = 1; /* info until the client sets a level */
    call_id_make(r->call_id, srv->boot, ++srv->ncalls);
    tg_error err;
    tg__error_init(&err);
    if (tg_turn_new_call("mcp", r->call_id, name, av.json, av.len, &r->turn,
                         &err) != 0 ||
        tg_turn_set_caller(r->turn, srv_session_caller(c->s), &err) != 0)
        goto oom;
    r->id = json_incref((json_t *)c->id);
    if (srv_param_find(c, token_path, 2, &tv) &&
        (tv.kind == TG_JT_STRING ||
         (tv.kind == TG_JT_NUMBER &&
          !(c->rpc->tape.tok[tv.tok].flags & TG_JT_REAL))))
        r->progress_token = tg__rpc_value_json(c->rpc, &tv); /* new ref */
    tg__buf_cleanup(&nb); /* name is no more */
    r->s = c->s;
    srv_session_hold(c->s);
    r->out = c->out;
    srv_out_ref(c->out);
    srv_req_link(r);
    srv->live++;
    if (tg_runtime_submit(srv->rt, r->turn, &call_ops, r, &err) != 0) {
        srv_send_error(srv, c->out, c->version, c->method, c->id, RPC_INTERNAL,
                       err.message, NULL);
        srv_req_free(r);
        return 0;
    }
    srv_kick(srv);
    if (srv_task_start(c, r))
        return 0; /* answered: a CreateTaskResult */
    c->ans->streams = true;
    return 1;
oom:
    tg__buf_cleanup(&nb);
    if (r != NULL) {
        tg_turn_free(r->turn);
        json_decref(r->caps);
    }
    free(r);
    srv_send_error(srv, c->out, c->version, c->method, c->id, RPC_INTERNAL,
                   "Internal error: out of memory", NULL);
    return 0;
}
