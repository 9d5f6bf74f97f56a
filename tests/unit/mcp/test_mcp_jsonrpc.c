/* SPDX-License-Identifier: MIT */
/*
 * test_mcp_jsonrpc.c - the JSON-RPC 2.0 reader and writers (src/mcp/
 * jsonrpc.c) and the protocol version table (src/mcp/version.c): malformed
 * JSON, wrong jsonrpc, missing method, ids of every wrong type, huge and
 * deeply nested texts, batches on and off, notifications, responses, and
 * the exact error response each failure is answered with.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "tg_test.h"
#include "version.h"

/* Reads text (batches as given) and returns the answer the reader's
 * verdict writes: the failure, or the invalid message's error. */
static char *answer(tg__rpc_batch *b, const char *text, bool batches)
{
    tg__rpc_limits lim = {0, 0, 0, batches};
    assert_int_equal(tg__rpc_read(b, text, strlen(text), &lim), 0);
    tg__buf out;
    tg__buf_init(&out, 0);
    if (b->fail_code != 0)
        assert_int_equal(tg__rpc_write_failure(&out, b), 0);
    else
        for (size_t i = 0; i < b->n; i++)
            if (b->msgs[i].kind == TG_RPC_INVALID)
                assert_int_equal(tg__rpc_write_invalid(&out, &b->msgs[i]), 0);
    return tg__buf_take(&out);
}

static void expect(const char *text, const char *want)
{
    tg__rpc_batch b;
    char *got = answer(&b, text, false);
    assert_string_equal(got, want);
    free(got);
    tg__rpc_batch_cleanup(&b);
}

static void test_parse_errors(void **state)
{
    (void)state;
    tg__rpc_batch b;
    static const char *const bad[] = {
        "",
        "{",
        "{\"jsonrpc\":\"2.0\",}",
        "nul",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"method\":\"b\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"method\":\"a\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
        "{} {}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *got = answer(&b, bad[i], true);
        assert_int_equal(b.fail_code, TG_RPC_PARSE_ERROR);
        assert_int_equal(b.n, 0);
        /* no id: it could not be read (no MCP schema allows null) */
        assert_true(strncmp(got,
                            "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,"
                            "\"message\":\"Parse error: ",
                            60) == 0);
        free(got);
        tg__rpc_batch_cleanup(&b);
    }
    expect("[1,", "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":"
                  "\"Parse error: ']' expected near end of file at line "
                  "1, column 3\"}}");
}

static void test_invalid_requests(void **state)
{
    (void)state;
    expect("{\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"ping\"}",
           "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32600,"
           "\"message\":\"Invalid Request: the message has no "
           "\\\"jsonrpc\\\":\\\"2.0\\\" member\"}}");
    expect("{\"id\":\"a\",\"method\":\"ping\"}",
           "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":-32600,"
           "\"message\":\"Invalid Request: the message has no "
           "\\\"jsonrpc\\\":\\\"2.0\\\" member\"}}");
    expect("{\"jsonrpc\":\"2.0\",\"id\":\"a\"}",
           "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":-32600,"
           "\"message\":\"Invalid Request: the message has no method (a "
           "string)\"}}");
    expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}",
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,"
           "\"message\":\"Invalid Request: the message has no method (a "
           "string)\"}}");
    expect("17", "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":"
                 "\"Invalid Request: the message is an integer, not a "
                 "JSON-RPC message object\"}}");
    expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":[1]}",
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,"
           "\"message\":\"Invalid Request: the params of the message are an "
           "array; expected an object\"}}");
    /* ids of wrong types: answered without an id */
    static const char *const ids[] = {"null", "1.5", "1e2",         "true",
                                      "{}",   "[1]", "\"a\\u0000\""};
    static const char *const said[] = {"null",
                                       "a fractional number",
                                       "a fractional number",
                                       "a boolean",
                                       "an object",
                                       "an array",
                                       "a string holding U+0000"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char in[128], want[256];
        snprintf(in, sizeof in,
                 "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/list\"}",
                 ids[i]);
        snprintf(want, sizeof want,
                 "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":"
                 "\"Invalid Request: the id of the message is %s; expected a "
                 "string or an integer\"}}",
                 said[i]);
        expect(in, want);
    }
    expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\\u0000b\"}",
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,"
           "\"message\":\"Invalid Request: the method of the message holds "
           "U+0000\"}}");
}

static void test_requests_and_ids(void **state)
{
    (void)state;
    tg__rpc_batch b;
    const char *in = "{ \"method\" : \"tools/call\", \"jsonrpc\":\"2\\u002e0\","
                     "\"id\":\"x\\u0041\\\"\", \"params\" : {\"name\":\"echo\","
                     "\"arguments\": { \"t\" : [ 1, {}, \"}]\" ] } , "
                     "\"_meta\":{\"progressToken\":9}} }";
    assert_int_equal(tg__rpc_read(&b, in, strlen(in), NULL), 0);
    assert_int_equal(b.n, 1);
    const tg__rpc_msg *m = &b.msgs[0];
    assert_int_equal(m->kind, TG_RPC_REQUEST);
    assert_string_equal(m->method, "tools/call");
    assert_int_equal(m->id.kind, TG_RPC_ID_STRING);
    assert_string_equal(m->id.str, "xA\"");
    assert_int_equal(m->id.str_len, 3);
    /* the id as written, escapes and all */
    assert_int_equal(m->id.json_len, strlen("\"x\\u0041\\\"\""));
    assert_memory_equal(m->id.json, "\"x\\u0041\\\"\"", m->id.json_len);
    assert_int_equal(
        m->params_len,
        strlen("{\"name\":\"echo\",\"arguments\": { \"t\" : [ 1, "
               "{}, \"}]\" ] } , \"_meta\":{\"progressToken\":9}}"));
    assert_memory_equal(m->params, "{\"name\"", 7);
    assert_int_equal(m->params[m->params_len - 1], '}');
    const char *args_path[] = {"arguments"};
    tg__rpc_value v;
    assert_int_equal(tg__rpc_params_find(&b, m, args_path, 1, &v), 1);
    assert_int_equal(v.kind, TG_JT_OBJECT);
    assert_int_equal(v.len, strlen("{ \"t\" : [ 1, {}, \"}]\" ] }"));
    assert_memory_equal(v.json, "{ \"t\" : [ 1, {}, \"}]\" ] }", v.len);
    const char *tok_path[] = {"_meta", "progressToken"};
    assert_int_equal(tg__rpc_params_find(&b, m, tok_path, 2, &v), 1);
    assert_int_equal(v.kind, TG_JT_NUMBER);
    assert_memory_equal(v.json, "9", 1);
    const char *name_path[] = {"name"};
    assert_int_equal(tg__rpc_params_find(&b, m, name_path, 1, &v), 1);
    tg__buf s;
    tg__buf_init(&s, 0);
    assert_int_equal(tg__rpc_value_string(&b, &v, &s), 0);
    assert_string_equal(tg__buf_cstr(&s), "echo");
    tg__buf_cleanup(&s);
    const char *none[] = {"arguments", "nope"};
    assert_int_equal(tg__rpc_params_find(&b, m, none, 2, &v), 0);
    json_t *params = tg__rpc_params_json(&b, m); /* new ref */
    assert_string_equal(json_string_value(json_object_get(params, "name")),
                        "echo");
    json_decref(params);

    /* the response echoes the id verbatim */
    tg__buf out;
    tg__buf_init(&out, 0);
    assert_int_equal(tg__rpc_write_result(&out, &m->id, "{}", 2), 0);
    assert_string_equal(tg__buf_cstr(&out),
                        "{\"jsonrpc\":\"2.0\",\"id\":\"x\\u0041\\\"\","
                        "\"result\":{}}");
    tg__buf_cleanup(&out);
    tg__rpc_batch_cleanup(&b);

    /* integers keep their exact value, the largest included */
    static const char *const ints[] = {"0", "-0", "9223372036854775807",
                                       "-9223372036854775808", "42"};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        char text[128];
        snprintf(text, sizeof text,
                 "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}",
                 ints[i]);
        assert_int_equal(tg__rpc_read(&b, text, strlen(text), NULL), 0);
        assert_int_equal(b.msgs[0].kind, TG_RPC_REQUEST);
        assert_int_equal(b.msgs[0].id.kind, TG_RPC_ID_INT);
        assert_null(b.msgs[0].params);
        tg__buf_init(&out, 0);
        assert_int_equal(tg__rpc_write_error(&out, &b.msgs[0].id, -32601,
                                             "Method not found", "{\"m\":1}",
                                             7),
                         0);
        char want[256];
        snprintf(want, sizeof want,
                 "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32601,"
                 "\"message\":\"Method not found\",\"data\":{\"m\":1}}}",
                 ints[i]);
        assert_string_equal(tg__buf_cstr(&out), want);
        assert_string_equal(b.msgs[0].id.str, ints[i]);
        tg__buf_cleanup(&out);
        tg__rpc_batch_cleanup(&b);
    }
    const char *big = "{\"jsonrpc\":\"2.0\",\"id\":-9223372036854775808,"
                      "\"method\":\"ping\"}";
    assert_int_equal(tg__rpc_read(&b, big, strlen(big), NULL), 0);
    assert_true(b.msgs[0].id.num == INT64_MIN);
    tg__rpc_batch_cleanup(&b);
}

static void test_notifications_and_responses(void **state)
{
    (void)state;
    tg__rpc_batch b;
    const char *n = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                    "initialized\"}";
    assert_int_equal(tg__rpc_read(&b, n, strlen(n), NULL), 0);
    assert_int_equal(b.msgs[0].kind, TG_RPC_NOTIFICATION);
    assert_int_equal(b.msgs[0].id.kind, TG_RPC_ID_NONE);
    tg__rpc_batch_cleanup(&b);

    const char *r = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"action\":"
                    "\"accept\",\"content\":{\"ok\":[true]}}}";
    assert_int_equal(tg__rpc_read(&b, r, strlen(r), NULL), 0);
    assert_int_equal(b.msgs[0].kind, TG_RPC_RESULT);
    assert_int_equal(b.msgs[0].id.num, 3);
    assert_int_equal(b.msgs[0].result_len,
                     strlen("{\"action\":\"accept\",\"content\":{\"ok\":["
                            "true]}}"));
    tg__rpc_batch_cleanup(&b);

    const char *e = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
                    "-32601,\"message\":\"no \\u00e9\"}}";
    assert_int_equal(tg__rpc_read(&b, e, strlen(e), NULL), 0);
    assert_int_equal(b.msgs[0].kind, TG_RPC_ERROR);
    assert_int_equal(b.msgs[0].error_code, -32601);
    assert_string_equal(b.msgs[0].error_message, "no \xc3\xa9");
    assert_int_equal(b.msgs[0].id.kind, TG_RPC_ID_NONE);
    tg__rpc_batch_cleanup(&b);

    expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{}}",
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,"
           "\"message\":\"Invalid Request: the message has both "
           "\\\"result\\\" and \\\"error\\\"\"}}");
    expect("{\"jsonrpc\":\"2.0\",\"result\":{}}",
           "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":"
           "\"Invalid Request: the result response in the message has no "
           "id; expected a string or an integer\"}}");
    expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1.5,"
           "\"message\":\"x\"}}",
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,"
           "\"message\":\"Invalid Request: the error response in the message "
           "needs an error object with an integer code and a string "
           "message, and a string or integer id\"}}");
}

static void test_limits(void **state)
{
    (void)state;
    tg__rpc_batch b;
    /* over max_bytes: refused before parsing */
    tg__buf big;
    tg__buf_init(&big, 0);
    tg__buf_puts(&big, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\","
                       "\"params\":{\"s\":\"");
    for (int i = 0; i < 5000; i++)
        tg__buf_puts(&big, "xxxxxxxxxx");
    tg__buf_puts(&big, "\"}}");
    tg__rpc_limits lim = {1000, 0, 0, false};
    assert_int_equal(tg__rpc_read(&b, big.data, big.len, &lim), 0);
    assert_int_equal(b.fail_code, TG_RPC_INVALID_REQUEST);
    assert_non_null(strstr(b.fail_message, "over the limit of 1000 bytes"));
    tg__rpc_batch_cleanup(&b);
    /* within the limit: read (the tokens outgrow the inline storage too) */
    lim.max_bytes = 0;
    assert_int_equal(tg__rpc_read(&b, big.data, big.len, &lim), 0);
    assert_int_equal(b.msgs[0].kind, TG_RPC_REQUEST);
    tg__rpc_batch_cleanup(&b);
    tg__buf_cleanup(&big);

    /* nesting: at the limit read, past it refused; past the parser's own
     * limit the same answer */
    static const unsigned depths[] = {10, 11, 3000};
    for (size_t k = 0; k < 3; k++) {
        tg__buf t;
        tg__buf_init(&t, 0);
        tg__buf_puts(&t, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\","
                         "\"params\":{\"x\":");
        for (unsigned i = 0; i < depths[k] - 2; i++)
            tg__buf_puts(&t, "[");
        for (unsigned i = 0; i < depths[k] - 2; i++)
            tg__buf_puts(&t, "]");
        tg__buf_puts(&t, "}}");
        tg__rpc_limits dl = {0, 10, 0, false};
        char *got = answer(&b, t.data, false);
        tg__rpc_batch_cleanup(&b);
        free(got);
        assert_int_equal(tg__rpc_read(&b, t.data, t.len, &dl), 0);
        if (k == 0) {
            assert_int_equal(b.fail_code, 0);
            assert_int_equal(b.msgs[0].kind, TG_RPC_REQUEST);
        } else {
            assert_int_equal(b.fail_code, TG_RPC_INVALID_REQUEST);
            assert_string_equal(b.fail_message,
                                "Invalid Request: the message is nested more "
                                "than 10 deep");
        }
        tg__rpc_batch_cleanup(&b);
        tg__buf_cleanup(&t);
    }
}

static void test_batches(void **state)
{
    (void)state;
    const char *batch = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},"
                        "{\"jsonrpc\":\"2.0\",\"method\":\"n\"},5,"
                        "{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"result\":[]}]";
    /* off: the whole text is answered once */
    expect(batch, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,"
                  "\"message\":\"Invalid Request: batches are not supported "
                  "by this protocol version (a batch of 4 messages)\"}}");
    tg__rpc_batch b;
    char *got = answer(&b, batch, true);
    assert_true(b.is_batch);
    assert_int_equal(b.n, 4);
    assert_int_equal(b.msgs[0].kind, TG_RPC_REQUEST);
    assert_string_equal(b.msgs[0].method, "a");
    assert_int_equal(b.msgs[1].kind, TG_RPC_NOTIFICATION);
    assert_string_equal(b.msgs[1].method, "n");
    assert_int_equal(b.msgs[2].kind, TG_RPC_INVALID);
    assert_int_equal(b.msgs[3].kind, TG_RPC_RESULT);
    assert_memory_equal(b.msgs[3].result, "[]", 2);
    assert_string_equal(got, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,"
                             "\"message\":\"Invalid Request: the batch "
                             "element 2 is an integer, not a JSON-RPC message "
                             "object\"}}");
    free(got);
    tg__rpc_batch_cleanup(&b);
    got = answer(&b, "[]", true);
    assert_string_equal(got, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,"
                             "\"message\":\"Invalid Request: the batch is "
                             "empty\"}}");
    free(got);
    tg__rpc_batch_cleanup(&b);
    tg__rpc_limits lim = {0, 0, 2, true};
    assert_int_equal(tg__rpc_read(&b, batch, strlen(batch), &lim), 0);
    assert_int_equal(b.fail_code, TG_RPC_INVALID_REQUEST);
    assert_non_null(strstr(b.fail_message, "over the limit of 2"));
    tg__rpc_batch_cleanup(&b);
}

static void test_writers(void **state)
{
    (void)state;
    tg__buf out;
    tg__buf_init(&out, 0);
    tg__rpc_id id = {TG_RPC_ID_INT, NULL, 0, NULL, 0, -5};
    assert_int_equal(tg__rpc_write_request(&out, &id, "elicitation/create",
                                           "{\"message\":\"ok?\"}", 17),
                     0);
    assert_string_equal(tg__buf_cstr(&out),
                        "{\"jsonrpc\":\"2.0\",\"id\":-5,\"method\":"
                        "\"elicitation/create\",\"params\":{\"message\":"
                        "\"ok?\"}}");
    out.len = 0;
    tg__rpc_id sid = {TG_RPC_ID_STRING, NULL, 0, "q\"", 2, 0};
    assert_int_equal(tg__rpc_write_result_open(&out, &sid), 0);
    tg__buf_puts(&out, "{\"resultType\":\"complete\"}");
    assert_int_equal(tg__rpc_write_close(&out), 0);
    assert_string_equal(tg__buf_cstr(&out),
                        "{\"jsonrpc\":\"2.0\",\"id\":\"q\\\"\",\"result\":{"
                        "\"resultType\":\"complete\"}}");
    out.len = 0;
    assert_int_equal(
        tg__rpc_write_notification(&out, "notifications/progress",
                                   "{\"progressToken\":1,\"progress\":2}", 32),
        0);
    assert_string_equal(tg__buf_cstr(&out),
                        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                        "progress\",\"params\":{\"progressToken\":1,"
                        "\"progress\":2}}");
    out.len = 0;
    assert_int_equal(tg__rpc_write_notification(&out, "x", NULL, 0), 0);
    assert_string_equal(tg__buf_cstr(&out),
                        "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}");
    tg__buf_cleanup(&out);
}

static void test_versions(void **state)
{
    (void)state;
    assert_int_equal(tg__mcp_version_from_name("2025-06-18", 10),
                     TG_MCP_V2025_06_18);
    assert_int_equal(tg__mcp_version_from_name("2026-07-28", 10),
                     TG_MCP_V2026_07_28);
    assert_int_equal(tg__mcp_version_from_name("2026-07-2", 9),
                     TG_MCP_VERSION_UNKNOWN);
    assert_int_equal(tg__mcp_version_from_name("2024-11-05", 10),
                     TG_MCP_VERSION_UNKNOWN);
    assert_true(tg__mcp_version_header_ok("2025-03-26", 10));
    assert_false(tg__mcp_version_spoken(TG_MCP_V2025_03_26));
    assert_false(tg__mcp_version_header_ok("2024-11-05", 10));
    assert_string_equal(tg__mcp_version_name(TG_MCP_V2025_11_25), "2025-11-25");
    assert_null(tg__mcp_version_name(TG_MCP_VERSION_UNKNOWN));
    /* negotiation: a spoken initialize version is answered with itself */
    assert_int_equal(tg__mcp_negotiate_initialize("2025-06-18", 10),
                     TG_MCP_V2025_06_18);
    assert_int_equal(tg__mcp_negotiate_initialize("2025-11-25", 10),
                     TG_MCP_V2025_11_25);
    assert_int_equal(tg__mcp_negotiate_initialize("2025-03-26", 10),
                     TG_MCP_V2025_11_25);
    assert_int_equal(tg__mcp_negotiate_initialize("2026-07-28", 10),
                     TG_MCP_V2025_11_25);
    assert_int_equal(tg__mcp_negotiate_initialize("1999-01-01", 10),
                     TG_MCP_V2025_11_25);
    assert_int_equal(tg__mcp_negotiate_initialize(NULL, 0), TG_MCP_V2025_11_25);
    const tg__mcp_traits *t = tg__mcp_traits_of(TG_MCP_V2026_07_28);
    assert_false(t->initialize);
    assert_false(t->ping);
    assert_false(t->set_level);
    assert_true(t->result_type);
    assert_true(t->discover);
    assert_int_equal(t->err_unsupported_protocol_version, -32022);
    assert_int_equal(t->err_header_mismatch, -32020);
    assert_int_equal(t->err_missing_client_capability, -32021);
    assert_int_equal(t->err_resource_not_found, -32602);
    assert_int_equal(t->tasks, TG_MCP_TASKS_EXTENSION);
    assert_int_equal(t->input, TG_MCP_INPUT_REQUIRED_RESULT);
    t = tg__mcp_traits_of(TG_MCP_V2025_11_25);
    assert_true(t->initialize && t->sessions && t->ping && t->get_stream);
    assert_false(t->batches);
    assert_int_equal(t->tasks, TG_MCP_TASKS_CORE);
    assert_int_equal(t->err_resource_not_found, -32002);
    assert_false(tg__mcp_traits_of(TG_MCP_V2025_06_18)->error_id_optional);
    assert_true(tg__mcp_traits_of(TG_MCP_V2025_03_26)->batches);
    assert_string_equal(tg__mcp_supported_json(),
                        "[\"2025-06-18\",\"2025-11-25\",\"2026-07-28\"]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_invalid_requests),
        cmocka_unit_test(test_requests_and_ids),
        cmocka_unit_test(test_notifications_and_responses),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_batches),
        cmocka_unit_test(test_writers),
        cmocka_unit_test(test_versions),
    };
    return tg_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
