/* SPDX-License-Identifier: MIT */
/*
 * remote_call.c - the tool source of remote tools (remote.h, source.h): a
 * call waits for its server to be ready (started or restarted now, within
 * the call's deadline), goes out as tools/call with that deadline, which
 * progress notifications may push on up to mcp.max_timeout_ms, and ends
 * with one result:
 *   - a CallToolResult: its content blocks (or, for a tool with an
 *     outputSchema, its structuredContent) go through the output path like
 *     a command's stdout (memory, or the spool past the inline limit,
 *     capped at limits.max_output_bytes), and the scheduler's shaping reads
 *     them as `"output": "mcp-content"` (or checks them against the
 *     schema); isError: true is error TOOL_FAILED with the server's text;
 *   - a JSON-RPC error: error INVALID_ARGUMENTS (-32602), UNKNOWN_TOOL
 *     (-32601) or SERVER_ERROR, with the error object in details;
 *   - the deadline: timeout (the session told the server);
 *   - the session failing or closing mid-call: error INTERRUPTED;
 *   - a cancel: canceled, the server told (notifications/cancelled).
 * Progress becomes output chunks on stream 3, one readable line each
 * (toolgate.h), its numbers as the server sent them.
 * The result's decisions.source says which server served it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "format.h"
#include "jtape.h"
#include "output.h"
#include "remote.h"
#include "text.h"
#include "timeutil.h"

enum { PHASE_WAITING, PHASE_SENT, PHASE_DONE };

typedef struct tg__rcall rcall;

/* An elicitation of the server waiting for the runtime's handler. */
typedef struct relicit {
    struct relicit *next;
    rcall *rc;
    uint64_t ticket; /* the session's */
    tg_elicit *el;   /* the runtime's, until answered or dropped */
} relicit;

struct tg__rcall {
    tg__source_call c; /* copy: call, tool, env, sink borrowed */
    tg__rsrc *src;
    tg__rsource_waiter w;
    tg__rsession *s; /* while SENT: the session it went through */
    uint64_t id;
    int phase;
    uv_timer_t timer;   /* the deadline while it waits for the server */
    int64_t max_ms;     /* how far progress may push the deadline; 0: not */
    rcall *prev, *next; /* src->calls while SENT */
    relicit *elicits;   /* waiting for the handler's answer */
};

static double elapsed_ms(const rcall *rc)
{
    return (double)(tg__mono_ns() - rc->c.start_ns) / 1e6;
}

static void on_timer_closed(uv_handle_t *h)
{
    free(h->data);
}

static const char cancel_answer[] = "{\"action\":\"cancel\"}";

/* Ends the call with r (taken; NULL: out of memory) and lets it go. An
 * elicitation still waiting is answered cancel (the server is told while
 * its session lives) and let go of. */
static void finish(rcall *rc, tg_result *r)
{
    if (rc->phase == PHASE_DONE)
        return;
    if (rc->phase == PHASE_WAITING)
        tg__rsource_unwait(rc->src->rs, &rc->w);
    if (rc->phase == PHASE_SENT) {
        if (rc->prev != NULL)
            rc->prev->next = rc->next;
        else
            rc->src->calls = rc->next;
        if (rc->next != NULL)
            rc->next->prev = rc->prev;
        rc->prev = rc->next = NULL;
    }
    while (rc->elicits != NULL) {
        relicit *e = rc->elicits;
        rc->elicits = e->next;
        tg_error ignored;
        (void)tg__rsession_elicit_reply(rc->s, e->ticket, cancel_answer,
                                        sizeof cancel_answer - 1, &ignored);
        rc->c.sink.elicit_drop(rc->c.sink.ctx, e->el, "cancel");
        free(e);
    }
    rc->phase = PHASE_DONE;
    if (r != NULL)
        r->duration_ms = elapsed_ms(rc);
    rc->c.sink.done(rc->c.sink.ctx, r);
    uv_close((uv_handle_t *)&rc->timer, on_timer_closed);
}

/* decisions.source: which server serves the call. */
static void decide_source(rcall *rc)
{
    const tg__rsource *rs = rc->src->rs;
    tg__rsrc *src = rc->src;
    const char *info = tg__rsource_server_info(rs);
    if (src->server == NULL || strcmp(src->server_text, info) != 0) {
        /* parsed once a session, not once a call */
        json_decref(src->server);
        free(src->server_text);
        src->server = json_loads(info, 0, NULL); /* new ref */
        src->server_text = src->server != NULL ? strdup(info) : NULL;
        if (src->server_text == NULL) {
            json_decref(src->server);
            src->server = NULL;
        }
    }
    json_t *server = src->server != NULL ? json_incref(src->server)
                                         : json_object(); /* new ref */
    json_t *v = json_pack("{s:s, s:s, s:s, s:s?, s:o, s:s?}", "name",
                          src->cfg->name, "tool", rc->c.tool->remote_name,
                          "transport", tg__rsource_transport(rs), "protocol",
                          tg__rsource_protocol(rs), "server", server, "sandbox",
                          src->sandbox); /* new ref */
    (void)rc->c.sink.decide(rc->c.sink.ctx, "source", v);
}

/* ------------------------------------------------------------ results */

/* The text of the content's text blocks, joined by newlines (at most 64
 * KiB); caller frees. */
static char *content_text(const json_t *content)
{
    size_t cap = 65536, o = 0;
    char *t = malloc(cap + 1);
    if (t == NULL)
        return NULL;
    size_t i;
    json_t *b; /* borrowed */
    json_array_foreach(content, i, b)
    {
        const char *s = json_string_value(json_object_get(b, "text"));
        if (s == NULL)
            continue;
        size_t n = strlen(s);
        if (o > 0 && o < cap)
            t[o++] = '\n';
        if (n > cap - o)
            n = cap - o;
        memcpy(t + o, s, n);
        o += n;
    }
    t[o] = '\0';
    return t;
}

/* A success: text through the output path (spooled past the inline
 * limit, capped at limits.max_output_bytes). */
static tg_result *through_output(rcall *rc, const char *text, size_t len)
{
    const tg__source_env *env = rc->c.env;
    tg__output o;
    if (tg__output_init(&o, env->cfg, env->spool, rc->c.call) != 0)
        return tg__output_finish(&o, rc->c.call, NULL);
    int w = tg__output_write(&o, text, len);
    if (w == TG_ELIMIT) {
        tg__output_abort(&o);
        return tg__fail(rc->c.call, TG_EXECUTION_FINISHED, "OUTPUT_LIMIT", NULL,
                        "the tool's output exceeded %lld bytes "
                        "(limits.max_output_bytes)",
                        (long long)env->cfg->max_output_bytes);
    }
    return tg__output_finish(&o, rc->c.call, NULL);
}

/* The text span of member `name` of the object that the tape's text is
 * (top level only): 1 with *at and *len set, 0 when absent, -1 when a key
 * has escapes (the caller then asks jansson). */
static int member_span(const tg__jtape *t, const char *name, const char **at,
                       size_t *len)
{
    size_t nl = strlen(name), end = t->tok[0].a;
    const char *s = t->text;
    for (size_t i = 1; i < end;) {
        const tg__jtok *k = &t->tok[i], *v = &t->tok[i + 1];
        size_t next =
            v->kind == TG_JT_OBJECT || v->kind == TG_JT_ARRAY ? v->a : i + 2;
        if (k->flags & TG_JT_ESCAPED)
            return -1;
        if (k->b == nl && memcmp(s + k->a, name, nl) == 0) {
            /* from past the key's quote and ':' to before the next key's
             * quote and ',' (or the object's '}') */
            size_t a = (size_t)k->a + k->b + 1;
            while (s[a] == ' ' || s[a] == '\t' || s[a] == '\n' ||
                   s[a] == '\r' || s[a] == ':')
                a++;
            size_t e;
            if (next < end) {
                e = (size_t)t->tok[next].a - 1; /* the next key's quote */
            } else {
                e = t->len;
                while (e > a && s[e - 1] != '}')
                    e--;
                e--; /* the object's '}' */
            }
            while (e > a &&
                   (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n' ||
                    s[e - 1] == '\r' || s[e - 1] == ','))
                e--;
            *at = s + a;
            *len = e - a;
            return 1;
        }
        i = next;
    }
    return 0;
}

/* For a tool with an outputSchema: the server's content blocks beside its
 * structuredContent (an image, a resource link), kept on the success so a
 * gateway's MCP client gets them as the server sent them; the payload, and
 * the text other formats show a model, stay the structured value. Only
 * for an inline output, blocks that read as MCP content (tg__content_check)
 * and a result within limits.max_output_bytes; else the blocks are left
 * out. `blocks` is borrowed. Returns r. */
static tg_result *keep_blocks(rcall *rc, tg_result *r, const json_t *blocks,
                              const tg__rcall_end *end)
{
    int64_t max = rc->c.env->cfg->max_output_bytes;
    tg_error e = {0};
    if (r == NULL || r->outcome != TG_OUTCOME_SUCCESS || r->artifact != NULL ||
        r->content != NULL || json_array_size(blocks) == 0 ||
        (max > 0 && end->result_len > (uint64_t)max) ||
        tg__content_check(blocks, &e) != 0)
        return r;
    r->content = json_incref((json_t *)blocks);
    return r;
}

/* keep_blocks of the content blocks written at[0..len). */
static tg_result *keep_blocks_text(rcall *rc, tg_result *r, const char *at,
                                   size_t len, const tg__rcall_end *end)
{
    if (r == NULL || r->outcome != TG_OUTCOME_SUCCESS || r->artifact != NULL)
        return r;
    /* new ref */
    json_t *blocks = json_loadb(at, len, JSON_REJECT_DUPLICATES, NULL);
    r = keep_blocks(rc, r, blocks, end);
    json_decref(blocks);
    return r;
}

/* A success the common way, without jansson: when the result is JSON that
 * json_loadb takes as it is (no duplicate keys, no U+0000) and the member
 * that becomes the output (content, or structuredContent for a tool with
 * an outputSchema) is already written as json_dumps would write it, that
 * text goes out as it is. Returns 1 with *r set (NULL: out of memory), 0
 * when the caller must take the jansson way. */
static int from_result_text(rcall *rc, const tg__rcall_end *end, tg_result **r)
{
    tg__jtok st[256], st2[256];
    tg__jtape t, m;
    if (end->is_error || tg__jtape_parse_in(end->result, end->result_len, st,
                                            256, &t, NULL) != 0)
        return 0;
    int done = 0;
    bool schema = rc->c.tool->out_schema != NULL;
    const char *at = NULL;
    size_t len = 0;
    int found = t.tok[0].kind == TG_JT_OBJECT
                    ? member_span(&t, schema ? "structuredContent" : "content",
                                  &at, &len)
                    : -1;
    if (found == 0 && !schema) {
        *r = through_output(rc, "[]", 2);
        done = 1;
    } else if (found == 1 &&
               tg__jtape_parse_in(at, len, st2, 256, &m, NULL) == 0) {
        if ((!schema || m.tok[0].kind == TG_JT_OBJECT) &&
            tg__jtape_is_dump_form(&m)) {
            *r = through_output(rc, at, len);
            done = 1;
        }
        tg__jtape_free(&m);
        if (done && schema && member_span(&t, "content", &at, &len) == 1)
            *r = keep_blocks_text(rc, *r, at, len, end);
    }
    tg__jtape_free(&t);
    return done;
}

static tg_result *from_result(rcall *rc, const tg__rcall_end *end)
{
    const tg_call *call = rc->c.call;
    tg_result *fast;
    if (from_result_text(rc, end, &fast))
        return fast;
    json_error_t je;
    json_t *res = json_loadb(end->result, end->result_len, 0, &je); /* new */
    if (res == NULL)
        return tg__fail(call, TG_EXECUTION_FINISHED, "MALFORMED_OUTPUT", NULL,
                        "the server's result is not JSON: %s", je.text);
    tg_result *r = NULL;
    const json_t *content = json_object_get(res, "content"); /* borrowed */
    const json_t *sc = json_object_get(res, "structuredContent");
    if (end->is_error) {
        char *text = content_text(content);
        json_t *d = json_pack("{s:O?}", "content", (json_t *)content);
        r = text ? tg__fail(call, TG_EXECUTION_FINISHED, "TOOL_FAILED", d, "%s",
                            text[0] ? text : "the tool failed")
                 : NULL;
        if (text == NULL)
            json_decref(d);
        free(text);
    } else if (rc->c.tool->out_schema != NULL && !json_is_object(sc)) {
        r = tg__fail(call, TG_EXECUTION_FINISHED, "INVALID_OUTPUT", NULL,
                     "the server sent no structuredContent object, which "
                     "the tool's outputSchema requires");
    } else {
        const json_t *out = rc->c.tool->out_schema != NULL ? sc : content;
        json_t *empty = out ? NULL : json_array(); /* new ref */
        char *text =
            json_dumps(out ? out : empty, JSON_COMPACT | JSON_ENCODE_ANY);
        r = text ? through_output(rc, text, strlen(text)) : NULL;
        free(text);
        json_decref(empty);
        if (rc->c.tool->out_schema != NULL)
            r = keep_blocks(rc, r, content, end);
    }
    json_decref(res);
    return r;
}

static tg_result *from_rpc_error(rcall *rc, const tg__rcall_end *end)
{
    const char *code = end->rpc_code == -32602   ? "INVALID_ARGUMENTS"
                       : end->rpc_code == -32601 ? "UNKNOWN_TOOL"
                                                 : "SERVER_ERROR";
    json_t *obj = json_loadb(end->rpc_error, end->rpc_error_len, 0, NULL);
    json_t *d = obj ? json_pack("{s:o}", "rpc_error", obj) : NULL;
    return tg__fail(rc->c.call, TG_EXECUTION_STARTED, code, d,
                    "MCP source '%s': %s", rc->src->cfg->name,
                    end->err ? end->err->message : "a JSON-RPC error");
}

static void on_done(void *ud, const tg__rcall_end *end)
{
    rcall *rc = ud;
    tg_result *r;
    switch (end->status) {
    case TG_RCALL_RESULT:
        r = from_result(rc, end);
        break;
    case TG_RCALL_RPC_ERROR:
        r = from_rpc_error(rc, end);
        break;
    case TG_RCALL_TIMEOUT:
        r = tg__result_timeout(rc->c.call, (int64_t)elapsed_ms(rc));
        break;
    case TG_RCALL_FAILED:
    default:
        r = tg__fail(rc->c.call, TG_EXECUTION_STARTED, "INTERRUPTED", NULL,
                     "the call to MCP source '%s' was interrupted: %s",
                     rc->src->cfg->name,
                     end->err ? end->err->message : "the session ended");
        break;
    }
    finish(rc, r);
}

/* v as the shortest of %.15g and %.17g that reads back as v. */
static void number(char *out, size_t size, double v)
{
    snprintf(out, size, "%.15g", v);
    if (strtod(out, NULL) != v)
        snprintf(out, size, "%.17g", v);
}

static void on_progress(void *ud, double progress, double total,
                        const char *message)
{
    rcall *rc = ud;
    char line[600], p[32], t[32];
    number(p, sizeof p, progress);
    number(t, sizeof t, total);
    int n = snprintf(line, sizeof line, "progress %s%s%s%s%s\n", p,
                     total >= 0 ? "/" : "", total >= 0 ? t : "",
                     message ? ": " : "", message ? message : "");
    if (n > 0 && (size_t)n >= sizeof line)
        line[sizeof line - 2] = '\n'; /* cut: still one line */
    if (n > 0)
        rc->c.sink.output(rc->c.sink.ctx, 3, line,
                          (size_t)n < sizeof line ? (size_t)n
                                                  : sizeof line - 1);
    if (rc->max_ms > 0 && rc->c.budget_ms > 0) {
        /* the work goes on: a full budget from now, within the maximum */
        int64_t left = rc->max_ms - (int64_t)elapsed_ms(rc);
        int64_t ms = rc->c.budget_ms < left ? rc->c.budget_ms : left;
        if (ms > 0)
            (void)tg__rsession_extend(rc->s, rc->id, (unsigned)ms);
    }
}

/* ------------------------------------------------------------ calls */

static void send_call(rcall *rc)
{
    tg__rsession *s = tg__rsource_session(rc->src->rs);
    tg_error e = {0};
    int64_t left = 0;
    if (rc->c.budget_ms > 0) {
        left = rc->c.budget_ms - (int64_t)elapsed_ms(rc);
        if (left <= 0) {
            tg_result *r = tg__result_timeout(rc->c.call, rc->c.budget_ms);
            if (r != NULL)
                r->execution = TG_EXECUTION_NOT_STARTED;
            finish(rc, r);
            return;
        }
    }
    size_t alen = 0;
    const char *args = tg__call_args_text(rc->c.call, &alen);
    tg__rcall_args a = {
        .name = rc->c.tool->remote_name,
        .arguments = args,
        .arguments_len = alen,
        .deadline_ms = (unsigned)left,
    };
    static const tg__rcall_cbs cbs = {on_progress, on_done};
    decide_source(rc);
    int err = tg__rsession_call(s, &a, &cbs, rc, &rc->id, &e);
    if (err != 0) {
        finish(rc, tg__fail(rc->c.call, TG_EXECUTION_NOT_STARTED,
                            err == TG_ELIMIT ? "ARGUMENTS_TOO_LARGE"
                                             : "SOURCE_UNAVAILABLE",
                            NULL, "cannot call MCP source '%s': %s",
                            rc->src->cfg->name, e.message));
        return;
    }
    rc->s = s;
    rc->phase = PHASE_SENT;
    rc->prev = NULL;
    rc->next = rc->src->calls;
    if (rc->src->calls != NULL)
        rc->src->calls->prev = rc;
    rc->src->calls = rc;
}

/* ------------------------------------------------------------ elicitation */

/* The handler's answer (on the loop): to the server. */
static void on_elicit_answered(void *ud, tg_elicit *el, const char *result,
                               size_t len)
{
    (void)el;
    relicit *e = ud;
    rcall *rc = e->rc;
    relicit **pp = &rc->elicits;
    while (*pp != NULL && *pp != e)
        pp = &(*pp)->next;
    if (*pp != NULL)
        *pp = e->next;
    tg_error ignored;
    (void)tg__rsession_elicit_reply(rc->s, e->ticket, result, len, &ignored);
    free(e);
}

int tg__rcall_elicit(void *ud, tg__rsession *s, uint64_t ticket, uint64_t call,
                     const char *params, size_t len)
{
    tg__rsrc *src = ud;
    rcall *rc = src->calls;
    while (rc != NULL && !(rc->s == s && rc->id == call))
        rc = rc->next;
    if (rc == NULL)
        return -1;
    relicit *e = calloc(1, sizeof *e);
    if (e == NULL)
        return -1;
    e->rc = rc;
    e->ticket = ticket;
    tg__elicit_req req = {.source = src->cfg->name,
                          .params = params,
                          .len = len,
                          .answered = on_elicit_answered,
                          .ud = e};
    /* linked first: nothing answers before raise returns, but the list
     * is what finish walks */
    e->next = rc->elicits;
    rc->elicits = e;
    if (rc->c.sink.elicit(rc->c.sink.ctx, &req, &e->el) != 0) {
        rc->elicits = e->next;
        free(e);
        return -1;
    }
    return 0;
}

static void on_ready(tg__rsource_waiter *w, bool ok)
{
    rcall *rc = (rcall *)((char *)w - offsetof(rcall, w));
    uv_timer_stop(&rc->timer);
    if (ok) {
        send_call(rc);
        return;
    }
    const tg_error *e = tg__rsource_error(rc->src->rs);
    finish(rc,
           tg__fail(rc->c.call, TG_EXECUTION_NOT_STARTED, "SOURCE_UNAVAILABLE",
                    NULL, "MCP source '%s' is not available: %s",
                    rc->src->cfg->name,
                    e->code != 0 ? e->message : "it was closed"));
}

static void on_wait_deadline(uv_timer_t *h)
{
    rcall *rc = h->data;
    tg_result *r = tg__result_timeout(rc->c.call, rc->c.budget_ms);
    if (r != NULL)
        r->execution = TG_EXECUTION_NOT_STARTED;
    finish(rc, r);
}

static void remote_start(const tg__source_call *c, void **state)
{
    rcall *rc = calloc(1, sizeof *rc);
    if (rc == NULL) {
        c->sink.done(c->sink.ctx, NULL);
        return;
    }
    rc->c = *c;
    rc->src = c->tool->remote;
    rc->w.cb = on_ready;
    rc->max_ms = rc->src->cfg->max_timeout_ms;
    uv_timer_init(c->env->loop, &rc->timer);
    rc->timer.data = rc;
    *state = rc;
    if (rc->src->removed ||
        tg__rsource_state_of(rc->src->rs) == TG__RS_CLOSED) {
        finish(rc, tg__fail(c->call, TG_EXECUTION_NOT_STARTED,
                            "SOURCE_UNAVAILABLE", NULL,
                            "MCP source '%s' was removed", rc->src->cfg->name));
        return;
    }
    if (tg__rsource_session(rc->src->rs) != NULL) {
        send_call(rc);
        return;
    }
    if (c->budget_ms > 0)
        uv_timer_start(&rc->timer, on_wait_deadline, (uint64_t)c->budget_ms, 0);
    tg__rsource_wait(rc->src->rs, &rc->w); /* may end it at once */
}

static void remote_cancel(void *state, const char *by, const char *reason,
                          bool hard)
{
    (void)hard;
    rcall *rc = state;
    if (rc->phase == PHASE_WAITING) {
        finish(rc, tg__result_canceled(rc->c.call, TG_EXECUTION_NOT_STARTED, by,
                                       reason));
    } else if (rc->phase == PHASE_SENT &&
               tg__rsession_cancel(rc->s, rc->id,
                                   reason ? reason : "canceled") == 1) {
        finish(rc, tg__result_canceled(rc->c.call, TG_EXECUTION_STARTED, by,
                                       reason));
    }
}

const tg__source_ops tg__remote_source = {
    .name = "remote",
    .flags = 0,
    .start = remote_start,
    .cancel = remote_cancel,
};
