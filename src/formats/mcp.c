/* SPDX-License-Identifier: MIT */
/*
 * mcp.c - the Model Context Protocol wire format (spec/formats.md, "mcp";
 * JSON-RPC 2.0): reads a `tools/call` request or a batch array of them and
 * renders JSON-RPC responses whose result is a CallToolResult.
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

/* ------------------------------------------------------------ rendering */

static int meta_flag(const tg_call *call, const char *key)
{
    return json_is_true(json_object_get(call->meta, key));
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

/* The CallToolResult of r: content, structuredContent, isError, _meta. New
 * reference, NULL on OOM. */
static json_t *call_tool_result(const tg_result *r, tg_buf *text)
{
    json_t *content; /* new ref */
    if (json_is_array(r->content))
        content = json_incref(r->content);
    else {
        text->len = 0;
        if (tg__format_payload_text(r, text) != 0)
            return NULL;
        /* json_stringn rejects invalid UTF-8, which a tool's text may hold
         * after a lossy conversion; fall back to the escaped form. */
        json_t *s = json_stringn(tg__buf_cstr(text), text->len); /* new ref */
        if (s == NULL) {
            tg_buf esc;
            tg__buf_init(&esc, 0);
            json_t *lit = NULL; /* new ref */
            if (tg__format_json_string(&esc, tg__buf_cstr(text), text->len) ==
                0)
                lit = json_loadb(esc.data, esc.len,
                                 JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
            tg__buf_cleanup(&esc);
            s = lit;
        }
        content =
            s ? json_pack("[{s:s, s:o}]", "type", "text", "text", s) : NULL;
    }
    double ms = r->duration_ms > 0 ? r->duration_ms + 0.5 : 0;
    json_t *res =
        json_pack("{s:o, s:b, s:{s:s, s:I}}", "content", content, "isError",
                  r->outcome != TG_OUTCOME_SUCCESS, "_meta", "toolgate/outcome",
                  tg_outcome_name(r->outcome), "toolgate/durationMs",
                  (json_int_t)ms); /* new ref; takes content, also on failure */
    if (res != NULL && r->outcome == TG_OUTCOME_SUCCESS &&
        json_is_object(tg__result_payload(r)) &&
        json_object_set(res, "structuredContent", tg__result_payload(r)) != 0) {
        json_decref(res);
        return NULL;
    }
    return res;
}

/* The response to call i, or NULL with *rc set (0: no response is due). */
static json_t *response(const tg_turn *turn, size_t i, int from_mcp,
                        tg_buf *text, int *rc)
{
    const tg_call *call = turn->calls[i];
    const tg_result *r = turn->results[i];
    *rc = 0;
    if (from_mcp && meta_flag(call, "notification"))
        return NULL;
    *rc = TG_ENOMEM;
    json_t *o = json_pack("{s:s}", "jsonrpc", "2.0"); /* new ref */
    if (o == NULL)
        return NULL;
    const json_t *idv =
        json_object_get(call->meta, "jsonrpc_id"); /* borrowed */
    int bad = 0;
    if (idv != NULL)
        bad |= json_object_set(o, "id", (json_t *)idv);
    else if (!from_mcp)
        /* A call from another format answers with its id as a string. */
        bad |= json_object_set_new(o, "id", json_string(call->id));
    int code = rpc_error_code(r);
    if (code != 0) {
        const char *msg = json_string_value(json_object_get(
            json_object_get(tg__result_payload(r), "error"), "message"));
        json_t *e; /* new ref */
        if (strcmp(tg__result_code(r), "UNKNOWN_TOOL") == 0)
            /* The message the MCP specification's example uses. */
            e = json_pack("{s:i, s:s+}", "code", code, "message",
                          "Unknown tool: ", r->tool);
        else
            e = json_pack("{s:i, s:s}", "code", code, "message",
                          msg ? msg : "Invalid Request");
        bad |= json_object_set_new(o, "error", e);
    } else
        bad |= json_object_set_new(o, "result", call_tool_result(r, text));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    *rc = 0;
    return o;
}

static int render(const tg_turn *turn, tg_buf *out, tg_error *err)
{
    int from_mcp = turn->format != NULL && strcmp(turn->format, "mcp") == 0;
    int batch = 0;
    if (from_mcp) {
        for (size_t i = 0; i < turn->n && !batch; i++)
            batch = meta_flag(turn->calls[i], "batch");
    } else
        batch = turn->n != 1;
    tg_buf text;
    tg__buf_init(&text, 0);
    size_t emitted = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < turn->n; i++) {
        json_t *o = response(turn, i, from_mcp, &text, &rc); /* new ref */
        if (o == NULL)
            continue;
        if (batch)
            rc = tg__buf_append(out, emitted == 0 ? "[" : ",", 1);
        if (rc == 0)
            rc = tg__format_dump(o, out);
        json_decref(o);
        emitted++;
    }
    /* Nothing at all when every request was a notification (JSON-RPC: the
     * server returns nothing, not an empty array). */
    if (rc == 0 && emitted > 0)
        rc = tg__buf_append(out, batch ? "]\n" : "\n", batch ? 2 : 1);
    tg__buf_cleanup(&text);
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
    if (o != NULL &&
        ((json_is_object(osch) &&
          json_object_set(o, "outputSchema", (json_t *)osch) != 0) ||
         (json_is_object(ann) &&
          json_object_set(o, "annotations", (json_t *)ann) != 0))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Tool definitions: a tools/list result {"tools":[…]}. */
static int render_tools(const json_t *tools, tg_buf *out, tg_error *err)
{
    return tg__format_render_tool_list(tools, tool_def, "tools", FORMAT_NAME,
                                       out, err);
}

const tg_format tg__format_mcp = {
    .name = FORMAT_NAME,
    .detect = detect,
    .parse = parse,
    .parse_text = NULL,
    .parse_fast = NULL,
    .render = render,
    .render_tools = render_tools,
};
