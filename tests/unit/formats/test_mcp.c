/* SPDX-License-Identifier: MIT */
/*
 * test_mcp.c - the mcp format: detection, JSON-RPC ids of both types kept
 * with their type, progress tokens, batches, notifications (run, never
 * answered), every JSON-RPC-level error and its code, the unknown-tool
 * error, rendering of foreign turns, tool definitions, the fast path (what
 * it takes gives the document path's calls; what it must leave to that
 * path), responses written directly matching jansson's - and every rendered
 * response checked against the MCP 2025-11-25 schema
 * (mcp/schema-2025-11-25.json of the shared test data, TG_TEST_DATA_DIR):
 * the members its definitions require, their types and constants, followed
 * through $ref, anyOf, items and properties. That is a hand check of the
 * shapes toolgate produces, not a JSON Schema validator (issue 4 brings
 * one). Without the schema the rest runs and the test reports itself
 * skipped (failed under CI=true).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "record.h"
#include "tg_fast_check.h"
#include "tg_test.h"
#include "turn.h"

/* ------------------------------------------------------------ schema check */

/* The MCP schema (new ref), or NULL, said on stderr, when the shared test
 * data is not here: the schema checks are then skipped. */
static json_t *load_schema(void)
{
    char path[4096];
    tg_test_data_path(path, sizeof path, "mcp/schema-2025-11-25.json");
    if (!tg_test_have_data(path, "the MCP schema checks"))
        return NULL;
    json_error_t jerr;
    json_t *schema = json_load_file(path, 0, &jerr); /* new ref */
    if (schema == NULL)
        fail_msg("cannot load %s: %s", path, jerr.text);
    return schema;
}

static const json_t *resolve(const json_t *root, const json_t *s)
{
    const char *ref = json_string_value(json_object_get(s, "$ref"));
    if (ref == NULL)
        return s;
    const char *name = strrchr(ref, '/');
    const json_t *defs = json_object_get(root, "$defs"); /* borrowed */
    if (defs == NULL)
        defs = json_object_get(root, "definitions");
    const json_t *d = json_object_get(defs, name ? name + 1 : ref);
    if (d == NULL)
        fail_msg("schema has no definition %s", ref);
    return resolve(root, d);
}

static int type_ok(const json_t *v, const char *t)
{
    if (strcmp(t, "object") == 0)
        return json_is_object(v);
    if (strcmp(t, "array") == 0)
        return json_is_array(v);
    if (strcmp(t, "string") == 0)
        return json_is_string(v);
    if (strcmp(t, "integer") == 0)
        return json_is_integer(v);
    if (strcmp(t, "number") == 0)
        return json_is_number(v);
    if (strcmp(t, "boolean") == 0)
        return json_is_boolean(v);
    if (strcmp(t, "null") == 0)
        return json_is_null(v);
    return 1;
}

/* Whether v satisfies the parts of schema s this check understands. */
static int conforms(const json_t *root, const json_t *s, const json_t *v)
{
    s = resolve(root, s);
    const json_t *any = json_object_get(s, "anyOf"); /* borrowed */
    if (json_is_array(any)) {
        int ok = 0;
        for (size_t i = 0; !ok && i < json_array_size(any); i++)
            ok = conforms(root, json_array_get(any, i), v);
        if (!ok)
            return 0;
    }
    const json_t *type = json_object_get(s, "type"); /* borrowed */
    if (json_is_string(type) && !type_ok(v, json_string_value(type)))
        return 0;
    if (json_is_array(type)) {
        int ok = 0;
        for (size_t i = 0; !ok && i < json_array_size(type); i++)
            ok = type_ok(v, json_string_value(json_array_get(type, i)));
        if (!ok)
            return 0;
    }
    const json_t *c = json_object_get(s, "const"); /* borrowed */
    if (c != NULL && !json_equal(c, v))
        return 0;
    if (json_is_object(v)) {
        const json_t *req = json_object_get(s, "required"); /* borrowed */
        for (size_t i = 0; i < json_array_size(req); i++)
            if (json_object_get(v, json_string_value(json_array_get(req, i))) ==
                NULL)
                return 0;
        const json_t *props = json_object_get(s, "properties"); /* borrowed */
        const char *key;
        const json_t *ps; /* borrowed */
        json_object_foreach((json_t *)props, key, ps)
        {
            const json_t *mv = json_object_get(v, key); /* borrowed */
            if (mv != NULL && !conforms(root, ps, mv))
                return 0;
        }
    }
    const json_t *items = json_object_get(s, "items"); /* borrowed */
    if (json_is_array(v) && json_is_object(items))
        for (size_t i = 0; i < json_array_size(v); i++)
            if (!conforms(root, items, json_array_get(v, i)))
                return 0;
    return 1;
}

static const json_t *def(const json_t *root, const char *name)
{
    const json_t *d = json_object_get(json_object_get(root, "$defs"), name);
    if (d == NULL)
        fail_msg("schema has no %s", name);
    return d;
}

/* Whether v conforms to the schema's definition `name`; 1 without the
 * schema (root NULL: those checks are skipped). */
static int fits(const json_t *root, const char *name, const json_t *v)
{
    return root == NULL || conforms(root, def(root, name), v);
}

/* One JSON-RPC response object: a JSONRPCResponse, and when it carries a
 * result, that result is a CallToolResult with toolgate's _meta. */
static void check_response(const json_t *root, const json_t *r)
{
    if (!fits(root, "JSONRPCResponse", r))
        fail_msg("not a JSONRPCResponse: %s",
                 json_dumps(r, JSON_COMPACT | JSON_ENCODE_ANY));
    const json_t *result = json_object_get(r, "result"); /* borrowed */
    if (result != NULL) {
        assert_true(fits(root, "CallToolResult", result));
        assert_true(fits(root, "JSONRPCResultResponse", r));
        assert_true(json_is_boolean(json_object_get(result, "isError")));
        const json_t *meta = json_object_get(json_object_get(result, "_meta"),
                                             "io.toolgate/result");
        assert_true(json_is_string(json_object_get(meta, "outcome")));
        assert_true(json_is_string(json_object_get(meta, "execution")));
        assert_true(json_is_string(json_object_get(meta, "callId")));
        assert_true(json_is_number(json_object_get(meta, "durationMs")));
        /* every outcome but success carries its payload convention */
        if (json_is_true(json_object_get(result, "isError")))
            assert_true(
                json_is_object(json_object_get(result, "structuredContent")));
        assert_null(json_object_get(r, "error"));
    } else {
        assert_true(fits(root, "JSONRPCErrorResponse", r));
        assert_true(fits(root, "Error", json_object_get(r, "error")));
    }
}

/* The whole rendering: nothing, one response, or a non-empty array. */
static void check_rendering(const json_t *root, const char *out)
{
    if (*out == '\0')
        return;
    json_error_t jerr;
    json_t *v = json_loads(out, JSON_DECODE_ANY, &jerr); /* new ref */
    if (v == NULL)
        fail_msg("rendering is not JSON: %s: %s", jerr.text, out);
    if (json_is_array(v)) {
        assert_true(json_array_size(v) > 0);
        for (size_t i = 0; i < json_array_size(v); i++)
            check_response(root, json_array_get(v, i));
    } else
        check_response(root, v);
    json_decref(v);
}

/* ------------------------------------------------------------ helpers */

static tg_turn *parse_ok(const char *text, const char *format)
{
    tg_turn *turn = NULL;
    tg_error err;
    int rc = tg_turn_parse(text, strlen(text), format, "in.json", &turn, &err);
    if (rc != 0)
        fail_msg("parse failed (%s): %s", tg_err_name(rc), err.message);
    return turn;
}

static int score(const char *text)
{
    json_error_t jerr;
    json_t *doc = json_loads(text, JSON_DECODE_ANY, &jerr); /* new ref */
    if (doc == NULL)
        fail_msg("bad test JSON: %s", jerr.text);
    int s = tg__format_mcp.detect(doc);
    json_decref(doc);
    return s;
}

/* Gives every call of turn a result: the call's pre-error, else a success
 * whose payload is its arguments. */
static void run_all(tg_turn *turn)
{
    for (size_t i = 0; i < turn->n; i++) {
        const tg_call *c = turn->calls[i];
        tg_result *r;
        if (c->pre_error_code != NULL)
            r = tg__result_error(c, TG_EXECUTION_NOT_STARTED, c->pre_error_code,
                                 NULL, "%s", c->pre_error_message);
        else
            r = tg__result_success(c, json_incref(tg__call_args(c)));
        assert_non_null(r);
        assert_int_equal(tg__turn_set_result(turn, i, r), 0);
    }
}

static char *render_ok(const tg_turn *turn, const char *format)
{
    char *out = NULL;
    size_t len = 0;
    tg_error err;
    int rc = tg_turn_render(turn, format, &out, &len, &err);
    if (rc != 0)
        fail_msg("render failed: %s", err.message);
    assert_int_equal(strlen(out), len);
    return out;
}

/* parse (mcp), run_all, render, schema check; returns the rendering. */
static char *roundtrip(const json_t *schema, const char *in)
{
    tg_turn *turn = parse_ok(in, "mcp");
    run_all(turn);
    char *out = render_ok(turn, NULL);
    check_rendering(schema, out);
    tg_turn_free(turn);
    return out;
}

#define CALL(id, name)                                                         \
    "{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"tools/call\","            \
    "\"params\":{\"name\":\"" name "\",\"arguments\":{\"k\":1}}}"

/* ------------------------------------------------------------ tests */

static void test_detect(void **state)
{
    (void)state;
    assert_int_equal(score(CALL("1", "t")), 4);
    assert_int_equal(score("[" CALL("1", "t") "," CALL("2", "t") "]"), 4);
    /* a batch with one request among garbage is still a batch */
    assert_int_equal(score("[1, {\"x\":1}, " CALL("\"a\"", "t") "]"), 4);
    assert_int_equal(score("{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}"), 4);
    assert_int_equal(
        score("{\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}"), 3);
    /* responses are not turns */
    assert_int_equal(score("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"), 0);
    assert_int_equal(score("{\"method\":\"other\"}"), 0);
    assert_int_equal(score("[1,2,3]"), 0);
    assert_int_equal(score("[]"), 0);
    assert_int_equal(score("\"tools/call\""), 0);
    assert_int_equal(score("{\"role\":\"assistant\",\"tool_calls\":[]}"), 0);

    tg_turn *turn = parse_ok("[" CALL("1", "t") "]", "auto");
    assert_string_equal(tg_turn_format(turn), "mcp");
    tg_turn_free(turn);
}

static void test_ids_keep_their_type(void **state)
{
    json_t *schema = *state;
    const char *in = "[" CALL("7", "a") "," CALL("\"7x\"", "b") "," CALL(
        "-9223372036854775807", "c") "," CALL("\"\"", "d") "]";
    tg_turn *turn = parse_ok(in, "auto");
    assert_int_equal(tg_turn_call_count(turn), 4);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 0)), "7");
    assert_string_equal(tg_call_id(tg_turn_call(turn, 1)), "7x");
    assert_string_equal(tg_call_id(tg_turn_call(turn, 2)),
                        "-9223372036854775807");
    assert_string_equal(tg_call_id(tg_turn_call(turn, 3)), "");
    run_all(turn);
    char *out = render_ok(turn, NULL);
    check_rendering(schema, out);
    json_error_t jerr;
    json_t *arr = json_loads(out, 0, &jerr); /* new ref */
    assert_true(json_is_integer(json_object_get(json_array_get(arr, 0), "id")));
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(arr, 0), "id")), 7);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(arr, 1), "id")), "7x");
    assert_true(json_integer_value(json_object_get(
                    json_array_get(arr, 2), "id")) == -9223372036854775807LL);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(arr, 3), "id")), "");
    /* structuredContent: the object payload of a success */
    assert_int_equal(
        json_integer_value(json_object_get(
            json_object_get(json_object_get(json_array_get(arr, 0), "result"),
                            "structuredContent"),
            "k")),
        1);
    json_decref(arr);
    tg_free(out);
    tg_turn_free(turn);
}

static void test_progress_token_and_args(void **state)
{
    (void)state;
    tg_turn *turn =
        parse_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"t\",\"_meta\":{\"progressToken\":"
                 "\"p-1\"}}}",
                 "auto");
    const tg_call *c = tg_turn_call(turn, 0);
    assert_string_equal(
        json_string_value(json_object_get(tg__call_meta(c), "progress_token")),
        "p-1");
    assert_int_equal(
        json_integer_value(json_object_get(tg__call_meta(c), "jsonrpc_id")), 1);
    assert_null(json_object_get(tg__call_meta(c), "batch"));
    /* arguments absent: {} */
    assert_string_equal(tg_call_args_json(c), "{}");
    assert_null(c->pre_error_code);
    tg_turn_free(turn);

    /* a progress token of a type the spec does not allow is not kept */
    turn = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                    "\"params\":{\"name\":\"t\",\"_meta\":{\"progressToken\":"
                    "[1]}}}",
                    "auto");
    assert_null(json_object_get(tg__call_meta(tg_turn_call(turn, 0)),
                                "progress_token"));
    tg_turn_free(turn);
}

static void test_single_and_batch_shapes(void **state)
{
    json_t *schema = *state;
    /* a single request: one object */
    char *out = roundtrip(schema, CALL("1", "t"));
    assert_int_equal(out[0], '{');
    tg_free(out);
    /* a batch of one: an array of one */
    out = roundtrip(schema, "[" CALL("1", "t") "]");
    assert_int_equal(out[0], '[');
    tg_free(out);
    /* one notification: nothing at all */
    out = roundtrip(schema, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\","
                            "\"params\":{\"name\":\"t\"}}");
    assert_string_equal(out, "");
    tg_free(out);
    /* a batch of notifications: nothing, not [] */
    out = roundtrip(schema,
                    "[{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\","
                    "\"params\":{\"name\":\"t\"}},"
                    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}]");
    assert_string_equal(out, "");
    tg_free(out);
}

static void test_notifications_are_still_calls(void **state)
{
    (void)state;
    tg_turn *turn = parse_ok("[{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\","
                             "\"params\":{\"name\":\"log\",\"arguments\":{"
                             "\"m\":\"x\"}}}," CALL("2", "t") "]",
                             "auto");
    assert_int_equal(tg_turn_call_count(turn), 2);
    const tg_call *n = tg_turn_call(turn, 0);
    assert_string_equal(tg_call_id(n), "mcp-notification-0");
    assert_string_equal(tg_call_tool(n), "log");
    assert_null(n->pre_error_code); /* it runs */
    assert_true(
        json_is_true(json_object_get(tg__call_meta(n), "notification")));
    run_all(turn);
    char *out = render_ok(turn, NULL);
    json_error_t jerr;
    json_t *arr = json_loads(out, 0, &jerr); /* new ref */
    assert_int_equal(json_array_size(arr), 1);
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(arr, 0), "id")), 2);
    json_decref(arr);
    tg_free(out);
    /* rendered into another format, the notification is an ordinary call */
    out = render_ok(turn, "openai-chat");
    assert_non_null(strstr(out, "mcp-notification-0"));
    tg_free(out);
    tg_turn_free(turn);
}

/* The JSON-RPC error of rendering `in` (one request) with --from mcp:
 * returns the code; *msg gets a copy of the message, *has_id whether the
 * response has an id. */
static int rpc_error(const json_t *schema, const char *in, char **msg,
                     int *has_id)
{
    char *out = roundtrip(schema, in);
    json_error_t jerr;
    json_t *v = json_loads(out, 0, &jerr); /* new ref */
    if (v == NULL)
        fail_msg("not JSON: %s", out);
    const json_t *e = json_object_get(v, "error"); /* borrowed */
    if (e == NULL)
        fail_msg("no error in %s", out);
    int code = (int)json_integer_value(json_object_get(e, "code"));
    if (msg)
        *msg = strdup(json_string_value(json_object_get(e, "message")));
    if (has_id)
        *has_id = json_object_get(v, "id") != NULL;
    json_decref(v);
    tg_free(out);
    return code;
}

static void test_jsonrpc_errors(void **state)
{
    json_t *schema = *state;
    char *msg = NULL;
    int has_id = -1;
    assert_int_equal(rpc_error(schema, "17", &msg, &has_id), -32600);
    assert_false(has_id);
    assert_non_null(strstr(msg, "Invalid Request"));
    free(msg);
    assert_int_equal(rpc_error(schema,
                               "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":"
                               "\"tools/call\",\"params\":{\"name\":\"t\"}}",
                               NULL, &has_id),
                     -32600);
    assert_false(has_id);
    assert_int_equal(rpc_error(schema,
                               "{\"jsonrpc\":2,\"id\":\"x\",\"method\":"
                               "\"tools/call\",\"params\":{\"name\":\"t\"}}",
                               NULL, &has_id),
                     -32600);
    assert_true(has_id); /* the id was readable: it is echoed */
    /* an invalid request without an id is answered, not a notification */
    assert_int_equal(
        rpc_error(schema, "{\"method\":\"tools/call\"}", NULL, &has_id),
        -32600);
    assert_false(has_id);
    assert_int_equal(rpc_error(schema,
                               "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                               "\"resources/read\"}",
                               &msg, &has_id),
                     -32601);
    assert_true(has_id);
    assert_non_null(strstr(msg, "resources/read"));
    free(msg);
    assert_int_equal(rpc_error(schema,
                               "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                               "\"tools/call\",\"params\":{\"name\":\"t\","
                               "\"arguments\":null}}",
                               NULL, NULL),
                     -32602);
    /* an empty batch is one Invalid Request, not an array */
    tg_turn *turn = parse_ok("[]", "mcp");
    assert_int_equal(tg_turn_call_count(turn), 1);
    run_all(turn);
    char *out = render_ok(turn, NULL);
    check_rendering(schema, out);
    assert_int_equal(out[0], '{');
    assert_non_null(strstr(out, "-32600"));
    tg_free(out);
    tg_turn_free(turn);
    /* a long method name with multi-byte characters is cut on a character
     * boundary: the message stays valid UTF-8 */
    tg__buf in;
    tg__buf_init(&in, 0);
    tg__buf_puts(&in, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x");
    for (int i = 0; i < 150; i++)
        tg__buf_puts(&in, "\xc3\xa9");
    tg__buf_puts(&in, "\"}");
    assert_int_equal(rpc_error(schema, tg__buf_cstr(&in), &msg, NULL), -32601);
    free(msg);
    tg__buf_cleanup(&in);
}

static void test_unknown_tool(void **state)
{
    json_t *schema = *state;
    tg_turn *turn = parse_ok(CALL("\"u\"", "nope"), "auto");
    const tg_call *c = tg_turn_call(turn, 0);
    assert_int_equal(
        tg__turn_set_result(turn, 0,
                            tg__result_error(c, TG_EXECUTION_NOT_STARTED,
                                             "UNKNOWN_TOOL", NULL,
                                             "unknown tool 'nope'")),
        0);
    /* the outcome stays error/UNKNOWN_TOOL; only the rendering differs */
    assert_int_equal(tg_result_outcome(tg_turn_result(turn, 0)),
                     TG_OUTCOME_ERROR);
    char *out = render_ok(turn, NULL);
    check_rendering(schema, out);
    assert_string_equal(out, "{\"jsonrpc\":\"2.0\",\"id\":\"u\",\"error\":{"
                             "\"code\":-32602,\"message\":\"Unknown tool: "
                             "nope\"}}\n");
    tg_free(out);
    tg_turn_free(turn);
}

static void test_results(void **state)
{
    json_t *schema = *state;
    tg_turn *turn = parse_ok("[" CALL("1", "a") "," CALL("2", "b") "," CALL(
                                 "3", "c") "," CALL("4", "d") "]",
                             "auto");
    tg_result *r0 = tg__result_success(tg_turn_call(turn, 0),
                                       json_pack("[i]", 1)); /* not an object */
    r0->duration_ms = 41.6;
    tg_result *r1 =
        tg__result_success(tg_turn_call(turn, 1), json_string("hi"));
    r1->content = json_pack("[{s:s, s:s, s:s}]", "type", "image", "data",
                            "AAAA", "mimeType", "image/png");
    tg_result *r2 = tg__result_denied(tg_turn_call(turn, 2), "policy");
    tg_result *r3 =
        tg__result_error(tg_turn_call(turn, 3), TG_EXECUTION_FINISHED,
                         "TOOL_FAILED", NULL, "bad \xc3\xa9");
    assert_int_equal(tg__turn_set_result(turn, 0, r0), 0);
    assert_int_equal(tg__turn_set_result(turn, 1, r1), 0);
    assert_int_equal(tg__turn_set_result(turn, 2, r2), 0);
    assert_int_equal(tg__turn_set_result(turn, 3, r3), 0);
    char *out = render_ok(turn, NULL);
    check_rendering(schema, out);
    json_error_t jerr;
    json_t *arr = json_loads(out, 0, &jerr); /* new ref */
    const json_t *res0 = json_object_get(json_array_get(arr, 0), "result");
    assert_null(json_object_get(res0, "structuredContent"));
    assert_true(json_real_value(json_object_get(
                    json_object_get(json_object_get(res0, "_meta"),
                                    "io.toolgate/result"),
                    "durationMs")) == 41.6);
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(res0, "content"), 0), "text")),
        "[1]");
    /* content blocks pass through as they are */
    const json_t *res1 = json_object_get(json_array_get(arr, 1), "result");
    assert_true(json_equal(json_object_get(res1, "content"), r1->content));
    assert_true(json_is_false(json_object_get(res1, "isError")));
    /* every other outcome is isError true, with the payload as text */
    const json_t *res2 = json_object_get(json_array_get(arr, 2), "result");
    assert_true(json_is_true(json_object_get(res2, "isError")));
    const json_t *meta2 = json_object_get(json_object_get(res2, "_meta"),
                                          "io.toolgate/result"); /* borrowed */
    assert_string_equal(json_string_value(json_object_get(meta2, "outcome")),
                        "denied");
    assert_string_equal(json_string_value(json_object_get(meta2, "execution")),
                        "not_started");
    assert_string_equal(json_string_value(json_object_get(meta2, "callId")),
                        "3");
    /* the payload convention, as structured content */
    assert_true(json_equal(json_object_get(res2, "structuredContent"),
                           tg__result_payload(r2)));
    const json_t *res3 = json_object_get(json_array_get(arr, 3), "result");
    assert_true(json_is_true(json_object_get(res3, "isError")));
    assert_non_null(strstr(
        json_string_value(json_object_get(
            json_array_get(json_object_get(res3, "content"), 0), "text")),
        "TOOL_FAILED"));
    json_decref(arr);
    tg_free(out);
    tg_turn_free(turn);
}

static void test_foreign_turns(void **state)
{
    json_t *schema = *state;
    const char *two =
        "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"tool_calls\":["
        "{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":"
        "\"t\",\"arguments\":\"{}\"}},"
        "{\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":"
        "\"t\",\"arguments\":\"{}\"}}]}}]}";
    tg_turn *turn = parse_ok(two, "auto");
    run_all(turn);
    char *out = render_ok(turn, "mcp");
    check_rendering(schema, out);
    assert_int_equal(out[0], '[');
    assert_non_null(strstr(out, "\"id\":\"call_2\""));
    tg_free(out);
    tg_turn_free(turn);

    turn = parse_ok("{\"id\":\"n1\",\"tool\":\"t\",\"args\":{}}", "auto");
    assert_string_equal(tg_turn_format(turn), "toolgate");
    run_all(turn);
    out = render_ok(turn, "mcp");
    check_rendering(schema, out);
    assert_int_equal(out[0], '{');
    assert_non_null(strstr(out, "\"id\":\"n1\""));
    tg_free(out);
    tg_turn_free(turn);
}

static void test_render_tools(void **state)
{
    json_t *schema = *state;
    json_error_t jerr;
    json_t *tools = json_loads(
        "[{\"name\":\"read_file\",\"description\":\"Read a file\","
        "\"input_schema\":{\"type\":\"object\",\"properties\":{\"path\":"
        "{\"type\":\"string\"}}},\"annotations\":{\"readOnlyHint\":true}},"
        "{\"name\":\"now\"}]",
        0, &jerr); /* new ref */
    assert_non_null(tools);
    tg__buf out;
    tg__buf_init(&out, 0);
    tg_error err;
    assert_int_equal(tg__format_mcp.render_tools(tools, &out, &err), 0);
    assert_string_equal(
        tg__buf_cstr(&out),
        "{\"tools\":[{\"name\":\"read_file\",\"description\":\"Read a file\","
        "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"path\":"
        "{\"type\":\"string\"}}},\"annotations\":{\"readOnlyHint\":true}},"
        "{\"name\":\"now\",\"inputSchema\":{\"type\":\"object\"}}]}\n");
    json_t *v = json_loads(tg__buf_cstr(&out), 0, &jerr); /* new ref */
    assert_true(fits(schema, "ListToolsResult", v));
    json_decref(v);
    tg__buf_cleanup(&out);
    json_decref(tools);
}

/* The checker itself rejects what it should, so a pass above means
 * something. */
static void test_schema_check_rejects(void **state)
{
    json_t *schema = *state;
    if (schema == NULL)
        skip();
    const char *bad[] = {
        "{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}",
        "{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"error\":{\"code\":1,\"message\":"
        "\"x\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":\"x\",\"message\":"
        "\"x\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_error_t jerr;
        json_t *v = json_loads(bad[i], 0, &jerr); /* new ref */
        assert_false(conforms(schema, def(schema, "JSONRPCResponse"), v));
        json_decref(v);
    }
    json_error_t jerr;
    json_t *v = json_loads("{\"content\":[{\"type\":\"text\"}]}", 0,
                           &jerr); /* new ref */
    assert_false(conforms(schema, def(schema, "CallToolResult"), v));
    json_decref(v);
}

/* Every golden rendering of the mcp format conforms too. */
static void test_golden_renderings_conform(void **state)
{
    json_t *schema = *state;
    char dir[4096];
    const char *src = getenv("TG_SOURCE_DIR");
    if (src != NULL && *src != '\0')
        snprintf(dir, sizeof dir, "%s/tests/data/formats/mcp", src);
    else {
        const char *me = __FILE__;
        const char *tail = strstr(me, "tests/unit/formats/");
        int n = tail ? (int)(tail - me) : 0;
        snprintf(dir, sizeof dir, "%.*stests/data/formats/mcp", n, me);
    }
    DIR *d = opendir(dir);
    if (d == NULL)
        fail_msg("cannot open %s", dir);
    struct dirent *e;
    size_t checked = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096 + 300];
        snprintf(path, sizeof path, "%s/%s/expected", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (f == NULL)
            fail_msg("cannot read %s", path);
        tg__buf b;
        tg__buf_init(&b, 0);
        char chunk[4096];
        size_t got;
        while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
            tg__buf_append(&b, chunk, got);
        fclose(f);
        check_rendering(schema, tg__buf_cstr(&b));
        tg__buf_cleanup(&b);
        checked++;
    }
    closedir(d);
    assert_true(checked >= 10);
}

/* ------------------------------------------------------------ fast path */

/* Runs the fast path on text: 1 when it took the text, 0 when it stepped
 * aside. A text it takes must give exactly the calls the document path
 * gives: ids, tools, arguments, meta (the JSON-RPC id with its type). */
static int fast_takes(const char *text)
{
    return tg_test_fast_vs_doc(&tg__format_mcp, text, NULL);
}

#define TC(params)                                                             \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","                 \
    "\"params\":" params "}"

/* The fast path reads plain tools/call requests and batches of them and
 * steps aside for everything else; the answers are always those of the
 * document path. */
static void test_fast_path(void **state)
{
    (void)state;
    const char *batch = "[" CALL("7", "a") "," CALL("\"7x\"", "b") "," CALL(
        "-9223372036854775807",
        "c") "," CALL("-0",
                      "d") "," CALL("\"\"",
                                    "e") ","
                                         "{\"params\":{\"x\":[{}],"
                                         "\"arguments\":{\"s\":"
                                         "\"\\\"q\\\"\\n\","
                                         "\"n\":[null,true]},\"name\":\"f\",\"_"
                                         "meta\":{\"progressToken\":-5,"
                                         "\"o\":{\"p\":[1]}}},\"method\":"
                                         "\"tools/call\",\"id\":\"r\\u00e9\","
                                         "\"jsonrpc\":\"2.0\",\"note\":\"x\"},"
                                         "{\"jsonrpc\":\"2.0\",\"id\":9,"
                                         "\"method\":\"tools/"
                                         "call\",\"params\":{"
                                         "\"name\":\"g\",\"_meta\":{"
                                         "\"progressToken\":\"tok\"}}}]";
    assert_int_equal(fast_takes(batch), 1);
    tg_turn *turn = parse_ok(batch, "auto");
    assert_int_equal(tg_turn_call_count(turn), 7);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 3)), "0");
    assert_string_equal(tg_call_id(tg_turn_call(turn, 5)), "r\xc3\xa9");
    const tg_call *c = tg_turn_call(turn, 5);
    assert_int_equal(
        json_integer_value(json_object_get(tg__call_meta(c), "progress_token")),
        -5);
    assert_true(json_is_true(json_object_get(tg__call_meta(c), "batch")));
    assert_string_equal(tg_call_args_json(c),
                        "{\"s\":\"\\\"q\\\"\\n\",\"n\":[null,true]}");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 6)), "{}");
    tg_turn_free(turn);
    assert_int_equal(fast_takes(" " CALL("\"one\"", "t") "\n"), 1);
    turn = parse_ok(CALL("\"one\"", "t"), "auto");
    assert_null(json_object_get(tg__call_meta(tg_turn_call(turn, 0)), "batch"));
    tg_turn_free(turn);

    static const char *const bails[] = {
        /* duplicate keys on the path read */
        "{\"jsonrpc\":\"2.0\",\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
        "\"tools/call\",\"params\":{\"name\":\"t\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"tools/call\","
        "\"params\":{\"name\":\"t\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"method\":"
        "\"tools/call\",\"params\":{\"name\":\"t\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
        "\"name\":\"t\"},\"params\":{\"name\":\"u\"}}",
        TC("{\"name\":\"t\",\"name\":\"u\"}"),
        TC("{\"name\":\"t\",\"arguments\":{},\"arguments\":{}}"),
        TC("{\"name\":\"t\",\"_meta\":{},\"_meta\":{}}"),
        TC("{\"name\":\"t\",\"_meta\":{\"progressToken\":1,\"progressToken\":"
           "2}}"),
        /* JSON-RPC errors and notifications, left to the document path */
        "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"t\"}}",
        "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
        "\"name\":\"t\"}}",
        "{\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"tools/call\",\"params\":"
        "{\"name\":\"t\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"tools/call\","
        "\"params\":{\"name\":\"t\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1e2,\"method\":\"tools/call\","
        "\"params\":{\"name\":\"t\"}}",
        TC("{\"arguments\":{}}"),
        TC("{\"name\":\"\"}"),
        TC("{\"name\":7}"),
        TC("{\"name\":\"t\",\"arguments\":[]}"),
        TC("{\"name\":\"t\",\"arguments\":null}"),
        TC("{\"name\":\"t\",\"arguments\":\"{}\"}"),
        TC("[]"),
        TC("{\"name\":\"t\",\"_meta\":{\"progressToken\":1.5}}"),
        TC("{\"name\":\"t\",\"_meta\":5}"),
        "[]",
        "[" CALL("1", "t") ",5]",
        "[" CALL("1", "t") ",{\"jsonrpc\":\"2.0\",\"method\":\"n\"}]",
        /* arguments not in compact form */
        TC("{\"name\":\"t\",\"arguments\":{ \"k\":1}}"),
        TC("{\"name\":\"t\",\"arguments\":{\"k\":1.0}}"),
        /* other formats' members */
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
        "\"name\":\"t\"},\"parts\":[]}",
        "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
        "{\"name\":\"t\"},\"content\":[]}]",
        /* not plain JSON */
        CALL("1", "t") " x",
        "[" CALL("1", "t"),
        TC("{\"name\":\"t\\u0000\"}"),
        "{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"method\":"
        "\"tools/call\",\"params\":{\"name\":\"t\"}}",
    };
    for (size_t i = 0; i < sizeof bails / sizeof bails[0]; i++)
        if (fast_takes(bails[i]) != 0)
            fail_msg("fast path took %s", bails[i]);

    /* jansson keeps the last of duplicate keys; so does the parse. */
    turn = parse_ok(bails[1], "auto");
    assert_string_equal(tg_call_id(tg_turn_call(turn, 0)), "2");
    tg_turn_free(turn);
    turn = parse_ok(bails[8], "auto");
    assert_true(json_is_true(
        json_object_get(tg__call_meta(turn->calls[0]), "notification")));
    tg_turn_free(turn);
}

/* The renderer writes responses directly; they are byte for byte what
 * jansson writes for the same objects (built here as the renderer once
 * built them), for every kind of id, outcome, payload and duration. */
static void test_render_matches_jansson(void **state)
{
    (void)state;
    tg_turn *turn = parse_ok(
        "[" CALL("0", "a") "," CALL("\"s\\u2028\\u0001\"", "b") "," CALL(
            "-9223372036854775807",
            "c") "," CALL("4",
                          "d") "," CALL("5",
                                        "e") "," CALL("6",
                                                      "f") "," CALL("7",
                                                                    "g") "]",
        "mcp");
    static const char bad_utf8[] =
        "bad \xff\xfe \xe2\x82 ok \xe2\x82\xac \0 nul";
    static const double durations[] = {0, 12.4, 12.5, -3, 1e12, 0.49, 7};
    tg_result *r[7];
    r[0] = tg__result_success(turn->calls[0], json_pack("{s:[i,n]}", "o", 1));
    r[1] = tg__result_success(
        turn->calls[1], json_stringn_nocheck(bad_utf8, sizeof bad_utf8 - 1));
    r[2] = tg__result_success_text(turn->calls[2], "{\"t\":\"\\u0001\"}", 15);
    r[3] = tg__result_error(turn->calls[3], TG_EXECUTION_NOT_STARTED,
                            "UNKNOWN_TOOL", NULL, "no");
    r[4] = tg__result_error(turn->calls[4], TG_EXECUTION_NOT_STARTED,
                            "JSONRPC_INVALID_PARAMS", NULL, "bad \"p\"");
    r[5] = tg__result_timeout(turn->calls[5], 1000);
    r[6] = tg__result_success_text(turn->calls[6], "\"text\"", 6);
    r[6]->content = json_pack("[{s:s,s:s}]", "type", "text", "text", "blk");
    for (size_t i = 0; i < 7; i++) {
        assert_non_null(r[i]);
        r[i]->duration_ms = durations[i];
        assert_int_equal(tg__turn_set_result(turn, i, r[i]), 0);
    }
    char *out = render_ok(turn, NULL);

    /* The same responses through jansson. */
    tg__buf want;
    tg__buf_init(&want, 0);
    tg__buf_append(&want, "[", 1);
    for (size_t i = 0; i < 7; i++) {
        const tg_result *res = turn->results[i];
        json_t *o = json_pack("{s:s,s:O}", "jsonrpc", "2.0", "id",
                              json_object_get(tg__call_meta(turn->calls[i]),
                                              "jsonrpc_id")); /* new ref */
        if (i == 3)
            json_object_set_new(o, "error",
                                json_pack("{s:i,s:s}", "code", -32602,
                                          "message", "Unknown tool: d"));
        else if (i == 4)
            json_object_set_new(
                o, "error",
                json_pack("{s:i,s:s}", "code", -32602, "message", "bad \"p\""));
        else {
            json_t *content; /* new ref */
            if (res->content != NULL)
                content = json_incref(res->content);
            else {
                tg__buf text;
                tg__buf_init(&text, 0);
                assert_int_equal(tg__format_payload_text(res, &text), 0);
                /* jansson refuses the bad bytes: the escaped form, read
                 * back, has U+FFFD for each */
                tg__buf esc;
                tg__buf_init(&esc, 0);
                tg__json_string(&esc, tg__buf_cstr(&text), text.len);
                json_t *s = json_loadb(esc.data, esc.len,
                                       JSON_DECODE_ANY | JSON_ALLOW_NUL,
                                       NULL); /* new ref */
                assert_non_null(s);
                content = json_pack("[{s:s,s:o}]", "type", "text", "text", s);
                tg__buf_cleanup(&esc);
                tg__buf_cleanup(&text);
            }
            const json_t *p = tg__result_payload(res); /* borrowed */
            json_t *result = json_pack("{s:o}", "content", content);
            /* structured content: a success's object payload, every other
             * outcome's payload convention */
            if (res->outcome != TG_OUTCOME_SUCCESS || json_is_object(p))
                json_object_set(result, "structuredContent", (json_t *)p);
            /* durationMs is written by tg__json_ms (to the microsecond),
             * which jansson has no form for: a marker stands in for it */
            json_object_set_new(
                result, "isError",
                json_boolean(res->outcome != TG_OUTCOME_SUCCESS));
            json_object_set_new(
                result, "_meta",
                json_pack("{s:{s:s,s:s,s:s,s:s}}", "io.toolgate/result",
                          "outcome", tg_outcome_name(res->outcome), "execution",
                          tg_execution_name(res->execution), "durationMs",
                          "@DURATION@", "callId", res->id));
            json_object_set_new(o, "result", result);
        }
        if (i > 0)
            tg__buf_append(&want, ",", 1);
        tg__buf one;
        tg__buf_init(&one, 0);
        assert_int_equal(tg__json_dump(o, &one), 0);
        const char *mark = strstr(tg__buf_cstr(&one), "\"@DURATION@\"");
        if (mark == NULL)
            tg__buf_append(&want, one.data, one.len);
        else {
            tg__buf_append(&want, one.data, (size_t)(mark - one.data));
            assert_int_equal(
                tg__json_ms(&want, res->duration_ms > 0 ? res->duration_ms : 0),
                0);
            tg__buf_puts(&want, mark + strlen("\"@DURATION@\""));
        }
        tg__buf_cleanup(&one);
        json_decref(o);
    }
    tg__buf_append(&want, "]\n", 2);
    assert_string_equal(out, tg__buf_cstr(&want));
    /* the bad bytes became U+FFFD itself, the NUL its escape */
    assert_non_null(strstr(out, "bad \xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd"));
    assert_non_null(strstr(out, "\\u0000 nul"));
    tg__buf_cleanup(&want);
    tg_free(out);
    tg_turn_free(turn);
}

static int setup(void **state)
{
    *state = load_schema();
    return 0;
}

static int teardown(void **state)
{
    json_decref(*state);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_ids_keep_their_type),
        cmocka_unit_test(test_progress_token_and_args),
        cmocka_unit_test(test_single_and_batch_shapes),
        cmocka_unit_test(test_notifications_are_still_calls),
        cmocka_unit_test(test_jsonrpc_errors),
        cmocka_unit_test(test_unknown_tool),
        cmocka_unit_test(test_results),
        cmocka_unit_test(test_foreign_turns),
        cmocka_unit_test(test_render_tools),
        cmocka_unit_test(test_schema_check_rejects),
        cmocka_unit_test(test_golden_renderings_conform),
        cmocka_unit_test(test_fast_path),
        cmocka_unit_test(test_render_matches_jansson),
    };
    return tg_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
