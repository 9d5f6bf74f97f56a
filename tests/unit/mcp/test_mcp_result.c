/* SPDX-License-Identifier: MIT */
/*
 * test_mcp_result.c - the MCP results built from toolgate's records
 * (src/mcp/result.c) under every protocol version, and mcp_check
 * (tests/tools/mcp_check.c) on them: every message the writers and
 * builders produce validates against its version's schema, and a broken
 * one fails with the definition and the violation named. The schema checks
 * need the shared test data (TG_TEST_DATA_DIR); without it they are
 * skipped and the test says so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record.h"
#include "result.h"
#include "tg_test.h"

static const tg__mcp_version versions[] = {
    TG_MCP_V2025_06_18, TG_MCP_V2025_11_25, TG_MCP_V2026_07_28};

/* One result of each outcome, and a success with an object payload and
 * one with content blocks. */
static size_t make_results(tg_result **r)
{
    tg_call *c = tg__call_new("c1", "echo", "mcp");
    assert_non_null(c);
    size_t n = 0;
    r[n++] = tg__result_success(c, json_string("hello"));
    r[n++] = tg__result_success(c, json_pack("{s:i}", "sum", 3));
    r[n] = tg__result_success(c, json_string("shot"));
    r[n++]->content = json_pack("[{s:s,s:s,s:s}]", "type", "image", "data",
                                "iVBORw0KGgo=", "mimeType", "image/png");
    r[n++] = tg__result_error(c, TG_EXECUTION_FINISHED, "EXIT_STATUS", NULL,
                              "command exited with status 1");
    r[n++] = tg__result_timeout(c, 1000);
    r[n++] = tg__result_canceled(c, TG_EXECUTION_STARTED, "user", "stop");
    r[n++] = tg__result_denied(c, "not allowed");
    for (size_t i = 0; i < n; i++) {
        assert_non_null(r[i]);
        r[i]->duration_ms = 12.3456 * (double)i;
    }
    tg__call_free(c);
    return n;
}

/* Appends {"version":V,"answers":A,"message":M} and a newline. */
static void line(tg__buf *out, tg__mcp_version v, const char *answers,
                 const char *msg, size_t len)
{
    tg__buf_printf(out, "{\"version\":\"%s\",", tg__mcp_version_name(v));
    if (answers != NULL)
        tg__buf_printf(out, "\"answers\":\"%s\",", answers);
    tg__buf_puts(out, "\"message\":");
    tg__buf_append(out, msg, len);
    tg__buf_puts(out, "}\n");
}

static void test_call_tool_results(void **state)
{
    (void)state;
    tg_result *r[8];
    size_t n = make_results(r);
    tg__buf out;
    tg__buf_init(&out, 0);
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < 3; k++) {
            out.len = 0;
            assert_int_equal(
                tg__mcp_call_tool_result(&out, r[i], versions[k],
                                         TG_MCP_RESULT_OUTPUT_SCHEMA, NULL),
                0);
            json_error_t jerr;
            json_t *o = json_loadb(out.data, out.len, 0, &jerr); /* new ref */
            assert_non_null(o);
            int success = r[i]->outcome == TG_OUTCOME_SUCCESS;
            assert_true(json_is_boolean(json_object_get(o, "isError")));
            assert_int_equal(json_is_true(json_object_get(o, "isError")),
                             !success);
            const json_t *meta = json_object_get(json_object_get(o, "_meta"),
                                                 "io.toolgate/result");
            assert_string_equal(
                json_string_value(json_object_get(meta, "outcome")),
                tg_outcome_name(r[i]->outcome));
            assert_string_equal(
                json_string_value(json_object_get(meta, "execution")),
                tg_execution_name(r[i]->execution));
            assert_string_equal(
                json_string_value(json_object_get(meta, "callId")), "c1");
            assert_true(json_is_number(json_object_get(meta, "durationMs")));
            const json_t *sc = json_object_get(o, "structuredContent");
            if (!success)
                assert_true(json_equal(sc, tg__result_payload(r[i])));
            else if (json_is_object(tg__result_payload(r[i])) ||
                     versions[k] == TG_MCP_V2026_07_28)
                assert_true(json_equal(sc, tg__result_payload(r[i])));
            else
                assert_null(sc);
            const char *rt =
                json_string_value(json_object_get(o, "resultType"));
            if (versions[k] == TG_MCP_V2026_07_28)
                assert_string_equal(rt, "complete");
            else
                assert_null(rt);
            json_decref(o);
        }
        /* without an output schema a success carries no structured
         * content */
        out.len = 0;
        assert_int_equal(tg__mcp_call_tool_result(&out, r[i],
                                                  TG_MCP_V2025_11_25, 0,
                                                  "\"k.example/x\":1"),
                         0);
        assert_int_equal(strstr(out.data, "structuredContent") != NULL,
                         r[i]->outcome != TG_OUTCOME_SUCCESS);
        assert_non_null(strstr(out.data, "\"_meta\":{\"k.example/x\":1,"));
        /* a tool that declares an outputSchema: no other outcome than a
         * success carries structured content (its payload convention is
         * no instance of that schema) */
        out.len = 0;
        assert_int_equal(tg__mcp_call_tool_result(&out, r[i],
                                                  TG_MCP_V2025_11_25,
                                                  TG_MCP_RESULT_DECLARED, NULL),
                         0);
        assert_null(strstr(out.data, "structuredContent"));
    }
    assert_int_equal(
        tg__mcp_call_tool_result(&out, r[0], TG_MCP_V2025_03_26, 0, NULL),
        TG_EINVAL);
    for (size_t i = 0; i < n; i++)
        tg__result_free(r[i]);
    tg__buf_cleanup(&out);
}

static void test_unknown_tool_error(void **state)
{
    (void)state;
    tg_call *c = tg__call_new("u", "nope", "mcp");
    tg_result *unknown = tg__result_error(c, TG_EXECUTION_NOT_STARTED,
                                          "UNKNOWN_TOOL", NULL, "no");
    tg_result *other =
        tg__result_error(c, TG_EXECUTION_FINISHED, "TOOL_FAILED", NULL, "no");
    assert_int_equal(tg__mcp_result_rpc_error(unknown), -32602);
    assert_int_equal(tg__mcp_result_rpc_error(other), 0);
    tg__buf out;
    tg__buf_init(&out, 0);
    tg__rpc_id id = {TG_RPC_ID_INT, NULL, 0, NULL, 0, 4};
    assert_int_equal(tg__mcp_write_result_error(&out, &id, unknown), 0);
    assert_string_equal(tg__buf_cstr(&out),
                        "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":"
                        "-32602,\"message\":\"Unknown tool: nope\"}}");
    assert_int_equal(tg__mcp_write_result_error(&out, &id, other), TG_EINVAL);
    tg__buf_cleanup(&out);
    tg__result_free(unknown);
    tg__result_free(other);
    tg__call_free(c);
}

/* n tool definitions named t<i> in reverse order, as {"tools":[...]}. */
static char *tool_defs(size_t n)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    tg__buf_puts(&b, "{\"tools\":[");
    for (size_t i = n; i-- > 0;)
        tg__buf_printf(&b,
                       "%s{\"name\":\"t%04zu\",\"description\":\"d\","
                       "\"inputSchema\":{\"type\":\"object\"}}",
                       i + 1 < n ? "," : "", i);
    tg__buf_puts(&b, "]}");
    return tg__buf_take(&b);
}

static void test_tools_pages(void **state)
{
    (void)state;
    char *defs = tool_defs(250);
    tg__mcp_tools *tools = NULL;
    tg_error err;
    assert_int_equal(tg__mcp_tools_new(defs, strlen(defs), &tools, &err), 0);
    assert_int_equal(tg__mcp_tools_count(tools), 250);
    tg__buf out;
    tg__buf_init(&out, 0);
    /* default page: every tool, sorted, no cursor */
    assert_int_equal(tg__mcp_tools_page(&out, tools, TG_MCP_V2025_11_25, NULL,
                                        0, NULL, NULL),
                     0);
    json_t *o = json_loads(tg__buf_cstr(&out), 0, NULL); /* new ref */
    assert_int_equal(json_array_size(json_object_get(o, "tools")), 250);
    assert_null(json_object_get(o, "nextCursor"));
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(o, "tools"), 0), "name")),
        "t0000");
    json_decref(o);
    /* pages of 100: 100, 100, 50, in order, the cursor carrying on */
    tg__mcp_page_opts opts = {100, 60000, false, NULL};
    char cursor[600] = "";
    size_t seen = 0;
    for (int page = 0; page < 3; page++) {
        out.len = 0;
        assert_int_equal(tg__mcp_tools_page(&out, tools, TG_MCP_V2026_07_28,
                                            page ? cursor : NULL,
                                            strlen(cursor), &opts, NULL),
                         0);
        o = json_loads(tg__buf_cstr(&out), 0, NULL);
        const json_t *list = json_object_get(o, "tools");
        assert_int_equal(json_array_size(list), page < 2 ? 100 : 50);
        for (size_t i = 0; i < json_array_size(list); i++) {
            char want[8];
            snprintf(want, sizeof want, "t%04zu", seen++);
            assert_string_equal(json_string_value(json_object_get(
                                    json_array_get(list, i), "name")),
                                want);
        }
        assert_int_equal(json_integer_value(json_object_get(o, "ttlMs")),
                         60000);
        assert_string_equal(json_string_value(json_object_get(o, "cacheScope")),
                            "private");
        assert_string_equal(json_string_value(json_object_get(o, "resultType")),
                            "complete");
        const char *next = json_string_value(json_object_get(o, "nextCursor"));
        if (page < 2) {
            assert_non_null(next);
            snprintf(cursor, sizeof cursor, "%s", next);
        } else
            assert_null(next);
        json_decref(o);
    }
    assert_int_equal(seen, 250);
    /* a cursor this server did not make */
    assert_int_equal(tg__mcp_tools_page(&out, tools, TG_MCP_V2026_07_28,
                                        "bogus", 5, &opts, NULL),
                     TG_EINVAL);
    assert_int_equal(tg__mcp_tools_page(&out, tools, TG_MCP_V2026_07_28,
                                        "t1.zz", 5, &opts, NULL),
                     TG_EINVAL);
    tg__mcp_tools_free(tools);
    free(defs);
    /* lookups by name */
    const char *some = "[{\"name\":\"b\",\"execution\":{\"taskSupport\":"
                       "\"forbidden\"}},{\"name\":\"a\"},{\"name\":\"c\"}]";
    assert_int_equal(tg__mcp_tools_new(some, strlen(some), &tools, &err), 0);
    assert_true(tg__mcp_tools_has(tools, "a"));
    assert_true(tg__mcp_tools_has(tools, "b"));
    assert_true(tg__mcp_tools_has(tools, "c"));
    assert_false(tg__mcp_tools_has(tools, "ab"));
    assert_false(tg__mcp_tools_has(tools, ""));
    assert_false(tg__mcp_tools_has(tools, "d"));
    assert_false(tg__mcp_tools_has(tools, NULL));
    assert_false(tg__mcp_tools_has(NULL, "a"));
    /* which of them declare an outputSchema */
    const char *outs = "[{\"name\":\"a\",\"outputSchema\":{\"type\":"
                       "\"object\"}},{\"name\":\"b\"}]";
    tg__mcp_tools *with_out = NULL;
    assert_int_equal(tg__mcp_tools_new(outs, strlen(outs), &with_out, &err), 0);
    assert_true(tg__mcp_tools_declares_output(with_out, "a"));
    assert_false(tg__mcp_tools_declares_output(with_out, "b"));
    assert_false(tg__mcp_tools_declares_output(with_out, "c"));
    assert_false(tg__mcp_tools_declares_output(with_out, NULL));
    assert_false(tg__mcp_tools_declares_output(NULL, "a"));
    assert_false(tg__mcp_tools_declares_output(tools, "b"));
    tg__mcp_tools_free(with_out);
    /* execution.taskSupport: under 2025-11-25 only, a definition's own
     * execution kept */
    tg__mcp_page_opts tasks = {0, 0, false, "optional"};
    for (size_t k = 0; k < 3; k++) {
        out.len = 0;
        assert_int_equal(
            tg__mcp_tools_page(&out, tools, versions[k], NULL, 0, &tasks, NULL),
            0);
        o = json_loads(tg__buf_cstr(&out), JSON_REJECT_DUPLICATES, NULL);
        assert_non_null(o);
        const json_t *list = json_object_get(o, "tools");
        const char *want =
            versions[k] == TG_MCP_V2025_11_25 ? "optional" : NULL;
        for (size_t i = 0; i < 3; i++) {
            const char *got = json_string_value(json_object_get(
                json_object_get(json_array_get(list, i), "execution"),
                "taskSupport"));
            if (i == 1)
                assert_string_equal(got, "forbidden");
            else if (want != NULL)
                assert_string_equal(got, want);
            else
                assert_null(got);
        }
        json_decref(o);
    }
    tg__mcp_tools_free(tools);
    /* bad definitions */
    assert_int_equal(tg__mcp_tools_new("{\"x\":1}", 7, &tools, &err),
                     TG_EPARSE);
    const char *dup = "[{\"name\":\"a\"},{\"name\":\"a\"}]";
    assert_int_equal(tg__mcp_tools_new(dup, strlen(dup), &tools, &err),
                     TG_EPARSE);
    assert_non_null(strstr(err.message, "two tools are named 'a'"));
    tg__buf_cleanup(&out);
}

/* Runs mcp_check over text; returns its exit status, its output in *log
 * (caller frees). -1 when it cannot run. */
static int run_check(const char *text, char **log)
{
    const char *fx = getenv("TG_FIXTURES");
    if (fx == NULL)
        fail_msg("TG_FIXTURES is not set (run under ctest)");
    char dir[] = "/tmp/tg_mcp_check_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char in[128], outp[128], cmd[1024];
    snprintf(in, sizeof in, "%s/in.jsonl", dir);
    snprintf(outp, sizeof outp, "%s/out.txt", dir);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s/mcp_check' '%s' > '%s' 2>&1", fx, in, outp);
    int st = system(cmd);
    *log = tg_test_read_file(outp, NULL);
    unlink(in);
    unlink(outp);
    rmdir(dir);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define PROGRESS "{\"progressToken\":\"p\",\"progress\":10}"
#define LOG "{\"level\":\"info\",\"data\":\"a line\"}"

static int have_schemas(void)
{
    char path[4096];
    for (size_t k = 0; k < 3; k++) {
        char rel[64];
        snprintf(rel, sizeof rel, "mcp/schema-%s.json",
                 tg__mcp_version_name(versions[k]));
        tg_test_data_path(path, sizeof path, rel);
        if (!tg_test_have_data(path, "the MCP schema checks"))
            return 0;
    }
    return 1;
}

static void test_messages_conform(void **state)
{
    (void)state;
    if (!have_schemas())
        return;
    tg_result *r[8];
    size_t n = make_results(r);
    tg__buf lines, msg, body;
    tg__buf_init(&lines, 0);
    tg__buf_init(&msg, 0);
    tg__buf_init(&body, 0);
    char *defs = tool_defs(3);
    tg__mcp_tools *tools = NULL;
    tg_error err;
    assert_int_equal(tg__mcp_tools_new(defs, strlen(defs), &tools, &err), 0);
    tg__rpc_id id = {TG_RPC_ID_STRING, NULL, 0, "r-1", 3, 0};
    for (size_t k = 0; k < 3; k++) {
        tg__mcp_version v = versions[k];
        for (size_t i = 0; i < n; i++)
            for (unsigned flags = 0; flags < 2; flags++) {
                msg.len = 0;
                assert_int_equal(tg__rpc_write_result_open(&msg, &id), 0);
                assert_int_equal(
                    tg__mcp_call_tool_result(&msg, r[i], v, flags, NULL), 0);
                assert_int_equal(tg__rpc_write_close(&msg), 0);
                line(&lines, v, "tools/call", msg.data, msg.len);
            }
        tg__mcp_page_opts opts = {2, 0, true, "optional"};
        msg.len = 0;
        body.len = 0;
        assert_int_equal(
            tg__mcp_tools_page(&body, tools, v, NULL, 0, &opts, NULL), 0);
        assert_int_equal(tg__rpc_write_result(&msg, &id, body.data, body.len),
                         0);
        line(&lines, v, "tools/list", msg.data, msg.len);
        /* error responses: with an id, and (where the version allows it)
         * without one */
        msg.len = 0;
        assert_int_equal(
            tg__rpc_write_error(&msg, &id, -32602, "Unknown tool: x", NULL, 0),
            0);
        line(&lines, v, NULL, msg.data, msg.len);
        if (tg__mcp_traits_of(v)->error_id_optional) {
            tg__rpc_batch b;
            assert_int_equal(tg__rpc_read(&b, "{", 1, NULL), 0);
            msg.len = 0;
            assert_int_equal(tg__rpc_write_failure(&msg, &b), 0);
            tg__rpc_batch_cleanup(&b);
            line(&lines, v, NULL, msg.data, msg.len);
        }
        if (tg__mcp_traits_of(v)->err_unsupported_protocol_version != 0) {
            msg.len = 0;
            body.len = 0;
            tg__buf_printf(&body,
                           "{\"requested\":\"1999-01-01\","
                           "\"supported\":%s}",
                           tg__mcp_supported_json());
            assert_int_equal(
                tg__rpc_write_error(
                    &msg, &id,
                    tg__mcp_traits_of(v)->err_unsupported_protocol_version,
                    "Unsupported protocol version", body.data, body.len),
                0);
            line(&lines, v, NULL, msg.data, msg.len);
        }
        /* notifications the server sends */
        msg.len = 0;
        assert_int_equal(tg__rpc_write_notification(&msg,
                                                    "notifications/progress",
                                                    PROGRESS, strlen(PROGRESS)),
                         0);
        line(&lines, v, NULL, msg.data, msg.len);
        msg.len = 0;
        assert_int_equal(tg__rpc_write_notification(
                             &msg, "notifications/message", LOG, strlen(LOG)),
                         0);
        line(&lines, v, NULL, msg.data, msg.len);
        msg.len = 0;
        assert_int_equal(tg__rpc_write_notification(
                             &msg, "notifications/tools/list_changed", NULL, 0),
                         0);
        line(&lines, v, NULL, msg.data, msg.len);
    }
    char *log = NULL;
    int st = run_check(tg__buf_cstr(&lines), &log);
    if (st != 0)
        fail_msg("mcp_check exit %d:\n%s", st, log ? log : "");
    free(log);

    /* broken: a 2025-11-25 CallToolResult is no 2026-07-28 one (no
     * resultType), a list page without ttlMs neither; an error response
     * without an id is no 2025-06-18 one */
    lines.len = 0;
    msg.len = 0;
    tg__rpc_write_result_open(&msg, &id);
    tg__mcp_call_tool_result(&msg, r[0], TG_MCP_V2025_11_25, 0, NULL);
    tg__rpc_write_close(&msg);
    line(&lines, TG_MCP_V2026_07_28, "tools/call", msg.data, msg.len);
    msg.len = 0;
    body.len = 0;
    tg__mcp_tools_page(&body, tools, TG_MCP_V2025_11_25, NULL, 0, NULL, NULL);
    tg__rpc_write_result(&msg, &id, body.data, body.len);
    line(&lines, TG_MCP_V2026_07_28, "tools/list", msg.data, msg.len);
    msg.len = 0;
    tg__rpc_write_error(&msg, NULL, -32700, "Parse error", NULL, 0);
    line(&lines, TG_MCP_V2025_06_18, NULL, msg.data, msg.len);
    st = run_check(tg__buf_cstr(&lines), &log);
    assert_int_equal(st, 1);
    assert_non_null(log);
    assert_non_null(strstr(log, "line 1: CallToolResult (2026-07-28)"));
    assert_non_null(strstr(log, "resultType"));
    assert_non_null(strstr(log, "line 2: ListToolsResult (2026-07-28)"));
    assert_non_null(strstr(log, "line 3: JSONRPCError (2025-06-18)"));
    assert_non_null(strstr(log, "5 failure(s) in 3 message(s)"));
    free(log);

    tg__mcp_tools_free(tools);
    free(defs);
    for (size_t i = 0; i < n; i++)
        tg__result_free(r[i]);
    tg__buf_cleanup(&lines);
    tg__buf_cleanup(&msg);
    tg__buf_cleanup(&body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_call_tool_results),
        cmocka_unit_test(test_unknown_tool_error),
        cmocka_unit_test(test_tools_pages),
        cmocka_unit_test(test_messages_conform),
    };
    return tg_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
