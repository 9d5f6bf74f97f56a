/* SPDX-License-Identifier: MIT */
/*
 * mcp.c - the Model Context Protocol wire format (docs/formats.md, "mcp";
 * JSON-RPC 2.0): reads a `tools/call` request or a batch array of them and
 * renders JSON-RPC responses whose result is a CallToolResult (written by
 * mcp_result.c, which the MCP server's answers share).
 *
 * JSON-RPC ids are strings or integers; the call record's id is the id as a
 * string ("7" for 7), and the original value is kept in call->meta as
 * {"jsonrpc_id":7} so the response carries the id with the type it came
 * with. Other extras in meta: "progress_token" (params._meta.progressToken),
 * "batch":true for members of a batch array, "notification":true for a
 * request without an id.
 *
 * Problems at the JSON-RPC level never fail the parse: each request becomes a
 * call with a pre-error (JSONRPC_INVALID_REQUEST, JSONRPC_METHOD_NOT_FOUND,
 * JSONRPC_INVALID_PARAMS) that the renderer answers with the JSON-RPC error
 * object the specification names (-32600, -32601, -32602) instead of a
 * result; so does an unknown tool (-32602 "Unknown tool: NAME"), as the MCP
 * specification asks. Calls that lack a usable id get a generated record id
 * ("mcp-notification-<i>", "mcp-invalid-<i>"): a notification is still
 * journaled but never answered; a request whose id could not be read is
 * answered without an id (the 2025-11-25 schema makes the id of an error
 * response optional and does not allow null).
 */
#include "format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json_fast.h"

#define FORMAT_NAME "mcp"

#define INVALID_REQUEST "JSONRPC_INVALID_REQUEST"
#define METHOD_NOT_FOUND "JSONRPC_METHOD_NOT_FOUND"
#define INVALID_PARAMS "JSONRPC_INVALID_PARAMS"

/* JSON-RPC 2.0 error codes (section 5.1). */
enum {
    RPC_INVALID_REQUEST = -32600,
    RPC_METHOD_NOT_FOUND = -32601,
    RPC_INVALID_PARAMS = -32602
};

static int is_request_like(const json_t *v)
{
    return json_is_object(v) && json_object_get(v, "method") != NULL;
}

/* Scores: 4 for JSON-RPC requests (an object, or a batch holding one, with
 * "jsonrpc" and "method"); 3 for an object calling tools/call without the
 * jsonrpc member, which is parsed so it can be answered with -32600. No other
 * format has "method" or "jsonrpc" members. Responses (no method) are not
 * turns and are not claimed. */
static int detect(const json_t *doc)
{
    if (json_is_object(doc)) {
        if (!is_request_like(doc))
            return 0;
        if (json_object_get(doc, "jsonrpc") != NULL)
            return 4;
        const char *m = json_string_value(json_object_get(doc, "method"));
        return m != NULL && strcmp(m, "tools/call") == 0 ? 3 : 0;
    }
    if (json_is_array(doc)) {
        for (size_t i = 0; i < json_array_size(doc); i++) {
            const json_t *v = json_array_get(doc, i); /* borrowed */
            if (is_request_like(v) && json_object_get(v, "jsonrpc") != NULL)
                return 4;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ parsing */

static const char *kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a fractional number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

/* The length of the longest prefix of s of at most max bytes that does not
 * end inside a UTF-8 sequence, so a truncated name stays valid UTF-8 (the
 * message becomes a JSON string). */
static int utf8_prefix(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return (int)n;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return (int)n;
}

/* Adds request v (borrowed; any JSON value) at position i as a call.
 * `where` names it in messages ("request" or "batch element 3"). Returns 0
 * or TG_ENOMEM. */
static int add_request(tg_turn *turn, const json_t *v, size_t i, int batch,
                       const char *where)
{
    char idbuf[48];
    const char *id = NULL;
    const json_t *idv = json_object_get(v, "id");              /* borrowed */
    const json_t *params = json_object_get(v, "params");       /* borrowed */
    const json_t *jsonrpc = json_object_get(v, "jsonrpc");     /* borrowed */
    const json_t *method = json_object_get(v, "method");       /* borrowed */
    const json_t *name = json_object_get(params, "name");      /* borrowed */
    const json_t *args = json_object_get(params, "arguments"); /* borrowed */
    const json_t *pmeta = json_object_get(params, "_meta");    /* borrowed */
    const json_t *token =
        json_object_get(pmeta, "progressToken"); /* borrowed */
    int good_id = json_is_string(idv) || json_is_integer(idv);
    const char *m = json_string_value(method);
    int v2 = json_is_string(jsonrpc) &&
             strcmp(json_string_value(jsonrpc), "2.0") == 0;
    /* Only a well-formed request without an id is a notification; an
     * invalid one is answered (JSON-RPC 2.0, section 6 examples). */
    int notification = json_is_object(v) && idv == NULL && v2 && m != NULL;

    if (json_is_string(idv))
        id = json_string_value(idv);
    else if (json_is_integer(idv)) {
        snprintf(idbuf, sizeof idbuf, "%" JSON_INTEGER_FORMAT,
                 json_integer_value(idv));
        id = idbuf;
    } else {
        snprintf(idbuf, sizeof idbuf, "mcp-%s-%zu",
                 notification ? "notification" : "invalid", i);
        id = idbuf;
    }
    tg_call *call = tg__call_new(id, json_string_value(name), FORMAT_NAME);
    json_t *meta = json_object(); /* new ref */
    if (call == NULL || meta == NULL)
        goto oom;
    call->meta = meta; /* the call owns it from here */
    if ((good_id && json_object_set(meta, "jsonrpc_id", (json_t *)idv) != 0) ||
        (batch && json_object_set_new(meta, "batch", json_true()) != 0) ||
        (notification &&
         json_object_set_new(meta, "notification", json_true()) != 0) ||
        ((json_is_string(token) || json_is_integer(token)) &&
         json_object_set(meta, "progress_token", (json_t *)token) != 0))
        goto oom;

    int rc;
    if (json_is_object(args))
        rc = tg__call_set_args(call, (json_t *)args);
    else {
        /* Absent arguments mean none; other kinds are answered with
         * -32602 below, after tg__call_set_args has recorded them. */
        json_t *empty = json_object(); /* new ref */
        rc = empty ? tg__call_set_args(call, args ? (json_t *)args : empty)
                   : TG_ENOMEM;
        json_decref(empty);
    }
    if (rc != 0)
        goto oom;

    if (!json_is_object(v))
        rc = tg__call_set_pre_error(call, INVALID_REQUEST,
                                    "Invalid Request: the %s is %s, not a "
                                    "JSON-RPC request object",
                                    where, kind(v));
    else if (!v2)
        rc = tg__call_set_pre_error(call, INVALID_REQUEST,
                                    "Invalid Request: the %s has no "
                                    "\"jsonrpc\":\"2.0\" member",
                                    where);
    else if (m == NULL)
        rc = tg__call_set_pre_error(call, INVALID_REQUEST,
                                    "Invalid Request: the %s has no method "
                                    "(a string)",
                                    where);
    else if (idv != NULL && !good_id)
        rc = tg__call_set_pre_error(call, INVALID_REQUEST,
                                    "Invalid Request: the id of the %s is %s; "
                                    "expected a string or an integer",
                                    where, kind(idv));
    else if (strcmp(m, "tools/call") != 0)
        rc = tg__call_set_pre_error(call, METHOD_NOT_FOUND,
                                    "Method not found: %.*s (only "
                                    "tools/call requests are turns)",
                                    utf8_prefix(m, 200), m);
    else if (!json_is_object(params))
        rc = tg__call_set_pre_error(call, INVALID_PARAMS,
                                    "Invalid params: the %s has %s params; "
                                    "expected an object with name and "
                                    "arguments",
                                    where, params ? kind(params) : "no");
    else if (!json_is_string(name) || json_string_length(name) == 0)
        rc = tg__call_set_pre_error(call, INVALID_PARAMS,
                                    "Invalid params: params.name of the %s "
                                    "is %s; expected the tool name",
                                    where,
                                    name == NULL           ? "missing"
                                    : json_is_string(name) ? "empty"
                                                           : kind(name));
    else if (args != NULL && !json_is_object(args))
        rc = tg__call_set_pre_error(call, INVALID_PARAMS,
                                    "Invalid params: params.arguments of "
                                    "the %s is %s; expected an object",
                                    where, kind(args));
    if (rc != 0)
        goto oom;
    return tg__turn_add_call(turn, call);
oom:
    if (call == NULL)
        json_decref(meta);
    tg__call_free(call);
    return TG_ENOMEM;
}

static int parse(tg_turn *turn, const json_t *doc, tg_error *err)
{
    int rc = 0;
    if (!json_is_array(doc))
        rc = add_request(turn, doc, 0, 0, "request");
    else if (json_array_size(doc) == 0)
        /* JSON-RPC answers an empty batch with one Invalid Request error,
         * not with an empty array. */
        rc = add_request(turn, doc, 0, 0, "batch (empty)");
    for (size_t i = 0;
         rc == 0 && json_is_array(doc) && i < json_array_size(doc); i++) {
        char where[48];
        snprintf(where, sizeof where, "batch element %zu", i);
        rc = add_request(turn, json_array_get(doc, i), i, 1, where);
    }
    if (rc != 0)
        return tg__error_set(err, rc, "out of memory");
    return 0;
}

/* ------------------------------------------------------------ fast path */

/* The fast path reads the shape of nearly every large turn - a tools/call
 * request, or a batch of them, each with "jsonrpc":"2.0", a string or
 * integer id, and params with a name and arguments in compact form -
 * straight from the text, without building the document. Everything the
 * document path answers with a JSON-RPC error (notifications, other
 * methods, invalid requests, an empty batch), duplicate keys on the path it
 * reads and arguments with white space make it give up (FAST_BAIL); the
 * document path runs instead. */
#define FAST_BAIL TG_JCUR_BAIL
/* tg__jcur_key_is for a literal: its length is known when compiling (the
 * strlen was a visible share of reading a large turn). */
/* A JSON-RPC id or progress token as it came: a string (in buf) or an
 * integer. */
typedef struct fast_id {
    tg__buf str;
    json_int_t num;
    int kind; /* 0 none, 1 string, 2 integer */
} fast_id;

typedef struct fast_ctx {
    tg__jcur c;
    fast_id id, token;
    tg__buf name;     /* a copy: the cursor's scratch is reused */
    const char *args; /* the arguments object's text */
    size_t args_len;
} fast_ctx;

/* Reads a string or an integer (not a real) into *v, unless it was read
 * before (a duplicate key). */
static int fast_id_read(tg__jcur *c, fast_id *v)
{
    int next = tg__jcur_peek(c);
    if (v->kind != 0)
        return FAST_BAIL;
    if (next == '"') {
        v->kind = 1;
        int rc = tg__jcur_string_into(c, &v->str);
        return rc == -1 ? FAST_BAIL : rc;
    }
    if (next != '-' && (next < '0' || next > '9'))
        return FAST_BAIL;
    /* The cursor checks the number (at most 63 bytes, no overflow); only
     * its digits are read here. */
    const char *start = (const char *)c->p;
    if (tg__jcur_skip_scalar(c) != 0)
        return FAST_BAIL;
    char num[64];
    size_t n = (size_t)((const char *)c->p - start);
    if (n >= sizeof num || memchr(start, '.', n) != NULL ||
        memchr(start, 'e', n) != NULL || memchr(start, 'E', n) != NULL)
        return FAST_BAIL; /* a real: not a JSON-RPC id */
    memcpy(num, start, n);
    num[n] = '\0';
    v->num = (json_int_t)strtoll(num, NULL, 10);
    v->kind = 2;
    return 0;
}

/* A new reference to v's value. */
static json_t *fast_id_value(const fast_id *v)
{
    /* The cursor validated the string's UTF-8, as jansson would have. */
    return v->kind == 1 ? json_stringn_nocheck(v->str.data ? v->str.data : "",
                                               v->str.len)
                        : json_integer(v->num);
}

/* The value of params._meta: only progressToken is read. */
static int fast_meta(fast_ctx *fx)
{
    tg__jcur *c = &fx->c;
    const char *key;
    size_t kn;
    int first = 1, m = -1, rc = 0;
    if (tg__jcur_take(c, '{') != 0)
        return FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(c, &first, &key, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(key, kn, "progressToken"))
            rc = fast_id_read(c, &fx->token);
        else
            rc = tg__jcur_skip_any(c);
    }
    return rc != 0 ? rc : m == 0 ? 0 : FAST_BAIL;
}

static int fast_params(fast_ctx *fx)
{
    tg__jcur *c = &fx->c;
    const char *key;
    size_t kn;
    int first = 1, m = -1, rc = 0, has_name = 0, has_meta = 0;
    if (tg__jcur_take(c, '{') != 0)
        return FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(c, &first, &key, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(key, kn, "name"))
            rc = tg__jcur_string_once(c, &fx->name, &has_name);
        else if (TG_JCUR_KEY_IS(key, kn, "arguments")) {
            if (fx->args != NULL || tg__jcur_peek(c) != '{')
                return FAST_BAIL; /* not an object: -32602 */
            const char *start = (const char *)c->p;
            rc = tg__jcur_skip_any(c);
            fx->args = start;
            fx->args_len = (size_t)((const char *)c->p - start);
        } else if (TG_JCUR_KEY_IS(key, kn, "_meta")) {
            rc = has_meta ? FAST_BAIL : fast_meta(fx);
            has_meta = 1;
        } else
            rc = tg__jcur_skip_any(c);
    }
    if (rc != 0)
        return rc;
    return m == 0 && has_name && fx->name.len > 0 ? 0 : FAST_BAIL;
}

/* Reads a string member that must be `want` (else the request is not the
 * plain shape), unless *seen says the key came before. */
static int fast_string_is(tg__jcur *c, const char *want, int *seen)
{
    const char *v;
    size_t n;
    if (*seen || tg__jcur_string(c, &v, &n) != 0 || n != strlen(want) ||
        memcmp(v, want, n) != 0)
        return FAST_BAIL;
    *seen = 1;
    return 0;
}

/* One request object; batch says it is a member of a batch array. */
static int fast_request(fast_ctx *fx, tg_turn *turn, int batch)
{
    tg__jcur *c = &fx->c;
    const char *key;
    size_t kn;
    int first = 1, m = -1, rc = 0, has_jsonrpc = 0, has_method = 0;
    int has_params = 0;
    fx->id.kind = fx->token.kind = 0;
    fx->args = NULL;
    if (tg__jcur_take(c, '{') != 0)
        return FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(c, &first, &key, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(key, kn, "jsonrpc"))
            rc = fast_string_is(c, "2.0", &has_jsonrpc);
        else if (TG_JCUR_KEY_IS(key, kn, "method"))
            rc = fast_string_is(c, "tools/call", &has_method);
        else if (TG_JCUR_KEY_IS(key, kn, "id"))
            rc = fast_id_read(c, &fx->id);
        else if (TG_JCUR_KEY_IS(key, kn, "params")) {
            rc = has_params ? FAST_BAIL : fast_params(fx);
            has_params = 1;
        } else /* other formats' members (content, parts, ...) end it */
            rc = tg__jcur_skip_scalar(c);
    }
    if (rc != 0)
        return rc;
    if (m != 0 || !has_jsonrpc || !has_method || fx->id.kind == 0 ||
        !has_params)
        return FAST_BAIL;

    char idbuf[48];
    const char *id = idbuf;
    if (fx->id.kind == 1)
        id = tg__buf_cstr(&fx->id.str);
    else
        snprintf(idbuf, sizeof idbuf, "%" JSON_INTEGER_FORMAT, fx->id.num);
    tg_call *call = NULL;
    rc = tg__call_new_args_object(id, tg__buf_cstr(&fx->name), FORMAT_NAME,
                                  fx->args ? fx->args : "{}",
                                  fx->args ? fx->args_len : 2, &call);
    if (rc != 0)
        return rc == 1 ? FAST_BAIL : rc;
    /* meta as the document path writes it: jsonrpc_id, batch,
     * progress_token. */
    json_t *meta = json_object(); /* new ref */
    call->meta = meta;            /* the call owns it from here */
    if (meta == NULL ||
        json_object_set_new_nocheck(meta, "jsonrpc_id",
                                    fast_id_value(&fx->id)) != 0 ||
        (batch &&
         json_object_set_new_nocheck(meta, "batch", json_true()) != 0) ||
        (fx->token.kind != 0 &&
         json_object_set_new_nocheck(meta, "progress_token",
                                     fast_id_value(&fx->token)) != 0)) {
        tg__call_free(call);
        return TG_ENOMEM;
    }
    return tg__turn_add_call(turn, call);
}

static int parse_fast(tg_turn *turn, const char *text, size_t len)
{
    fast_ctx fx;
    int rc = 0;
    memset(&fx, 0, sizeof fx);
    tg__jcur_init(&fx.c, text, len);
    tg__buf_init(&fx.id.str, 0);
    tg__buf_init(&fx.token.str, 0);
    tg__buf_init(&fx.name, 0);
    int next = tg__jcur_peek(&fx.c);
    if (next == '{')
        rc = fast_request(&fx, turn, 0);
    else if (next == '[') {
        int first = 1, e = -1;
        fx.c.p++;
        while (rc == 0 && (e = tg__jcur_element(&fx.c, &first)) == 1)
            rc = fast_request(&fx, turn, 1);
        if (rc == 0 && (e != 0 || turn->n == 0))
            rc = FAST_BAIL; /* an empty batch is answered with -32600 */
    } else
        rc = FAST_BAIL;
    if (rc == 0 && tg__jcur_end(&fx.c) != 0)
        rc = FAST_BAIL;
    tg__buf_cleanup(&fx.id.str);
    tg__buf_cleanup(&fx.token.str);
    tg__buf_cleanup(&fx.name);
    tg__jcur_cleanup(&fx.c);
    if (rc == FAST_BAIL)
        return 0;
    return rc < 0 ? rc : 1;
}

/* ------------------------------------------------------------ rendering */

static int meta_flag(const tg_call *call, const char *key)
{
    return json_is_true(json_object_get(tg__call_meta(call), key));
}

/* What the renderer reads of a call's meta, in one walk over its few
 * members (cheaper than a hashed lookup per key, once per response). */
typedef struct meta_view {
    const json_t *id; /* borrowed: jsonrpc_id, NULL when none */
    int notification;
} meta_view;

static void read_meta(const tg_call *call, meta_view *mv)
{
    mv->id = NULL;
    mv->notification = 0;
    for (void *it = json_object_iter(tg__call_meta(call)); it != NULL;
         it = json_object_iter_next(tg__call_meta(call), it)) {
        const char *key = json_object_iter_key(it);
        if (strcmp(key, "jsonrpc_id") == 0)
            mv->id = json_object_iter_value(it);
        else if (strcmp(key, "notification") == 0)
            mv->notification = json_is_true(json_object_iter_value(it));
    }
}

/* The JSON-RPC error code a result is answered with instead of a
 * CallToolResult, 0 for none. */
static int rpc_error_code(const tg_result *r)
{
    const char *code = tg__result_code(r);
    if (code == NULL)
        return 0;
    if (strcmp(code, INVALID_REQUEST) == 0)
        return RPC_INVALID_REQUEST;
    if (strcmp(code, METHOD_NOT_FOUND) == 0)
        return RPC_METHOD_NOT_FOUND;
    if (strcmp(code, INVALID_PARAMS) == 0 || strcmp(code, "UNKNOWN_TOOL") == 0)
        return RPC_INVALID_PARAMS;
    return 0;
}

/* The renderer writes the responses straight into the output, byte for
 * byte as jansson's compact dump of the equivalent objects would: {"jsonrpc",
 * "id", then "error" {"code","message"} or "result" {"content","isError",
 * "_meta","structuredContent"?}}. Building those objects and dumping them
 * cost more than the parse of a large batch. */

/* Appends a value the call's meta holds (borrowed) as compact JSON; the
 * JSON-RPC id's kinds, strings and integers, without a dump. */
static int put_value(tg__buf *out, const json_t *v)
{
    if (json_is_string(v))
        return tg__json_string(out, json_string_value(v),
                               json_string_length(v));
    if (json_is_integer(v))
        return tg__json_integer(out, json_integer_value(v));
    return tg__json_dump(v, out);
}

/* The JSON-RPC error object of a result answered with `code`. */
static int put_rpc_error(tg__buf *out, const tg_result *r, int code,
                         tg__buf *scratch)
{
    char head[64];
    int n = snprintf(head, sizeof head,
                     ",\"error\":{\"code\":%d,\"message\":", code);
    int rc = tg__buf_append(out, head, (size_t)n);
    if (rc != 0)
        return rc;
    if (strcmp(tg__result_code(r), "UNKNOWN_TOOL") == 0) {
        /* The message the MCP specification's example uses. */
        scratch->len = 0;
        if ((rc = tg__buf_puts(scratch, "Unknown tool: ")) != 0 ||
            (rc = tg__buf_puts(scratch, r->tool)) != 0 ||
            (rc = tg__json_string(out, tg__buf_cstr(scratch), scratch->len)) !=
                0)
            return rc;
    } else {
        const char *msg = json_string_value(json_object_get(
            json_object_get(tg__result_payload(r), "error"), "message"));
        if (msg == NULL)
            msg = "Invalid Request";
        if ((rc = tg__json_string(out, msg, strlen(msg))) != 0)
            return rc;
    }
    return tg__buf_append(out, "}", 1);
}

/* Appends the response to call i; *emitted is set when there is one (a
 * notification of an MCP turn is never answered). */
static int put_response(tg__buf *out, const tg_turn *turn, size_t i,
                        int from_mcp, int batch, size_t *emitted, tg__buf *text,
                        tg__buf *scratch)
{
    static const char open[] = "{\"jsonrpc\":\"2.0\"";
    static const char id_key[] = ",\"id\":";
    const tg_call *call = turn->calls[i];
    const tg_result *r = turn->results[i];
    meta_view mv;
    read_meta(call, &mv);
    if (from_mcp && mv.notification)
        return 0;
    int rc = 0;
    if (batch)
        rc = tg__buf_append(out, *emitted == 0 ? "[" : ",", 1);
    (*emitted)++;
    if (rc != 0 || (rc = tg__buf_append(out, open, sizeof open - 1)) != 0)
        return rc;
    if (mv.id != NULL || !from_mcp) {
        /* A call from another format answers with its id as a string. */
        if ((rc = tg__buf_append(out, id_key, sizeof id_key - 1)) != 0 ||
            (rc = mv.id != NULL
                      ? put_value(out, mv.id)
                      : tg__json_string(out, call->id, strlen(call->id))) != 0)
            return rc;
    }
    int code = rpc_error_code(r);
    if (code != 0)
        rc = put_rpc_error(out, r, code, scratch);
    else if ((rc = tg__buf_puts(out, ",\"result\":")) == 0)
        rc = tg__format_mcp_call_tool_result(out, r, TG_MCP_CTR_STRUCTURED,
                                             NULL, text, scratch);
    return rc != 0 ? rc : tg__buf_append(out, "}", 1);
}

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* Rendering a large batch waits on memory: each response reads a call, its
 * meta object, the id's member and value, the result and its payload, all
 * long out of the cache, each found through the one before. Loading them
 * for the responses a few steps ahead, one level per step, overlaps those
 * waits (a prefetch of a pointer that is NULL or stale is harmless). */
static void prefetch_ahead(const tg_turn *turn, size_t i)
{
    if (i + 12 < turn->n) {
        PREFETCH(turn->calls[i + 12]);
        PREFETCH(turn->results[i + 12]);
    }
    if (i + 8 < turn->n) {
        PREFETCH(turn->calls[i + 8]->meta);
        PREFETCH(turn->results[i + 8]->payload_dom);
    }
    if (i + 4 < turn->n) {
        PREFETCH(json_object_iter(tg__call_meta(turn->calls[i + 4])));
        PREFETCH(json_string_value(turn->results[i + 4]->payload_dom));
    }
    if (i + 2 < turn->n) {
        void *it = json_object_iter(tg__call_meta(turn->calls[i + 2]));
        if (it != NULL)
            PREFETCH(json_object_iter_value(it));
    }
}

static int render(const tg_turn *turn, tg__buf *out, tg_error *err)
{
    int from_mcp = turn->format != NULL && strcmp(turn->format, "mcp") == 0;
    int batch = 0;
    if (from_mcp) {
        for (size_t i = 0; i < turn->n && !batch; i++)
            batch = meta_flag(turn->calls[i], "batch");
    } else
        batch = turn->n != 1;
    tg__buf text, scratch; /* payload texts and messages, reused */
    tg__buf_init(&text, 0);
    tg__buf_init(&scratch, 0);
    size_t emitted = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < turn->n; i++) {
        prefetch_ahead(turn, i);
        rc = put_response(out, turn, i, from_mcp, batch, &emitted, &text,
                          &scratch);
    }
    /* Nothing at all when every request was a notification (JSON-RPC: the
     * server returns nothing, not an empty array). */
    if (rc == 0 && emitted > 0)
        rc = tg__buf_append(out, batch ? "]\n" : "\n", batch ? 2 : 1);
    tg__buf_cleanup(&text);
    tg__buf_cleanup(&scratch);
    if (rc != 0)
        return tg__error_set(err, rc, "cannot render %s results: %s",
                             FORMAT_NAME, tg_strerror(rc));
    return 0;
}

/* A tools/list result: {"tools":[{"name","description","inputSchema",
 * "outputSchema"?,"annotations"?}]}. */
static json_t *tool_def(const json_t *t)
{
    json_t *o = tg__format_tool_object(t, NULL, "inputSchema"); /* new ref */
    const json_t *osch = json_object_get(t, "output_schema");   /* borrowed */
    const json_t *ann = json_object_get(t, "annotations");      /* borrowed */
    const json_t *title = json_object_get(t, "title");          /* borrowed */
    if (o != NULL &&
        ((json_is_string(title) &&
          json_object_set(o, "title", (json_t *)title) != 0) ||
         (json_is_object(osch) &&
          json_object_set(o, "outputSchema", (json_t *)osch) != 0) ||
         (json_is_object(ann) &&
          json_object_set(o, "annotations", (json_t *)ann) != 0))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Tool definitions: a tools/list result {"tools":[…]}. */
static int render_tools(const json_t *tools, tg__buf *out, tg_error *err)
{
    return tg__format_render_tool_list(tools, tool_def, "tools", FORMAT_NAME,
                                       out, err);
}

const tg__format tg__format_mcp = {
    .name = FORMAT_NAME,
    .detect = detect,
    .parse = parse,
    .parse_text = NULL,
    .parse_fast = parse_fast,
    .render = render,
    .render_tools = render_tools,
};
