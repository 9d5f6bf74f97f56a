/* SPDX-License-Identifier: MIT */
/*
 * test_native.c - the toolgate format: JSON Lines of call records in (with
 * the right absolute line numbers in every error), one record or an array of
 * records as a single document, auto detection against openai-chat, and JSON
 * Lines of result records out that read back as the same results.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "record.h"
#include "turn.h"

static tg_turn *parse_ok(const char *text, const char *format)
{
    tg_turn *turn = NULL;
    tg_error err;
    int rc =
        tg_turn_parse(text, strlen(text), format, "calls.jsonl", &turn, &err);
    if (rc != 0)
        fail_msg("parse failed (%s): %s", tg_err_name(rc), err.message);
    return turn;
}

static int parse_fails(const char *text, const char *format, tg_error *err)
{
    tg_turn *turn = NULL;
    int rc =
        tg_turn_parse(text, strlen(text), format, "calls.jsonl", &turn, err);
    assert_int_not_equal(rc, 0);
    assert_null(turn);
    return rc;
}

static int detect_score(const char *text)
{
    json_error_t jerr;
    json_t *doc = json_loads(text, JSON_DECODE_ANY, &jerr); /* new ref */
    assert_non_null(doc);
    int s = tg__format_native.detect(doc);
    json_decref(doc);
    return s;
}

static void test_detect(void **state)
{
    (void)state;
    assert_int_equal(detect_score("{\"id\":\"a\",\"tool\":\"t\"}"), 2);
    assert_int_equal(detect_score("{\"tool\":\"t\"}"), 0);
    assert_int_equal(detect_score("[{\"id\":\"a\",\"tool\":\"t\"},{\"tool\":"
                                  "\"u\"}]"),
                     2);
    assert_int_equal(detect_score("[{\"id\":\"a\",\"tool\":\"t\"},3]"), 0);
    assert_int_equal(detect_score("[]"), 0);
    assert_int_equal(detect_score("{\"role\":\"assistant\"}"), 0);
    assert_int_equal(detect_score("7"), 0);
}

static void test_json_lines(void **state)
{
    (void)state;
    const char *text =
        "\n"
        "{\"id\":\"a\",\"tool\":\"read_file\",\"args\":{\"path\":"
        "\"x\"}}\r\n"
        "   \t\n"
        "{\"id\":\"b\",\"tool\":\"now\",\"args\":\"\"}\n"
        "{\"id\":42,\"tool\":\"grep\",\"args\":\"{\\\"p\\\":1}\","
        "\"index\":9,\"caller_id\":\"me\"}";
    tg_turn *turn = parse_ok(text, "auto");
    assert_string_equal(tg_turn_format(turn), "toolgate");
    assert_int_equal(tg_turn_call_count(turn), 3);
    const tg_call *a = tg_turn_call(turn, 0);
    assert_string_equal(tg_call_id(a), "a");
    assert_string_equal(tg_call_tool(a), "read_file");
    assert_string_equal(tg_call_args_json(a), "{\"path\":\"x\"}");
    assert_null(tg_call_args_raw(a));
    assert_string_equal(tg_call_format(a), "toolgate");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 1)), "{}");
    assert_string_equal(tg_call_args_raw(tg_turn_call(turn, 1)), "");
    const tg_call *c = tg_turn_call(turn, 2);
    assert_string_equal(tg_call_id(c), "42");
    /* The position in this turn wins over an index the record carried. */
    assert_int_equal(tg_call_index(c), 2);
    assert_string_equal(tg_call_caller_id(c), "me");
    tg_turn_free(turn);

    turn = parse_ok(text, "toolgate");
    assert_int_equal(tg_turn_call_count(turn), 3);
    tg_turn_free(turn);
}

static void test_single_documents(void **state)
{
    (void)state;
    /* A pretty-printed record is one document, not JSON Lines. */
    const char *pretty = "{\n  \"id\": \"p\",\n  \"tool\": \"t\",\n"
                         "  \"args\": {\"k\": [1, 2]}\n}\n";
    tg_turn *turn = parse_ok(pretty, "auto");
    assert_string_equal(tg_turn_format(turn), "toolgate");
    assert_int_equal(tg_turn_call_count(turn), 1);
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 0)),
                        "{\"k\":[1,2]}");
    tg_turn_free(turn);
    turn = parse_ok(pretty, "toolgate");
    assert_int_equal(tg_turn_call_count(turn), 1);
    tg_turn_free(turn);

    turn = parse_ok("[{\"id\":\"x\",\"tool\":\"t\"},{\"id\":\"y\",\"tool\":"
                    "\"u\",\"args\":{\"a\":1}}]",
                    "auto");
    assert_string_equal(tg_turn_format(turn), "toolgate");
    assert_int_equal(tg_turn_call_count(turn), 2);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 1)), "y");
    tg_turn_free(turn);

    /* An empty array read explicitly as toolgate: no calls. */
    turn = parse_ok("[]", "toolgate");
    assert_int_equal(tg_turn_call_count(turn), 0);
    char *out;
    size_t len = 5;
    tg_error err;
    assert_int_equal(tg_turn_render(turn, NULL, &out, &len, &err), 0);
    assert_string_equal(out, "");
    assert_int_equal(len, 0);
    tg_free(out);
    tg_turn_free(turn);
}

static void test_per_call_problems(void **state)
{
    (void)state;
    tg_turn *turn =
        parse_ok("{\"id\":\"a\",\"tool\":\"t\",\"args\":\"{\\\"x\"}\n"
                 "{\"id\":\"b\",\"tool\":\"t\",\"args\":[1]}\n"
                 "{\"id\":\"a\",\"tool\":\"t\"}\n",
                 "auto");
    assert_int_equal(tg_turn_call_count(turn), 3);
    assert_string_equal(turn->calls[0]->pre_error_code, "MALFORMED_ARGUMENTS");
    assert_string_equal(turn->calls[1]->pre_error_code, "MALFORMED_ARGUMENTS");
    assert_string_equal(turn->calls[2]->pre_error_code, "DUPLICATE_CALL_ID");
    tg_turn_free(turn);
}

static void test_errors(void **state)
{
    (void)state;
    tg_error err;
    /* Line 4 (after a blank line) is not JSON. */
    assert_int_equal(parse_fails("{\"id\":\"a\",\"tool\":\"t\"}\n"
                                 "{\"id\":\"b\",\"tool\":\"t\"}\n"
                                 "\n"
                                 "{\"id\":\"c\",\"tool\":\"t\",]\n",
                                 "auto", &err),
                     TG_EPARSE);
    assert_int_equal(err.line, 4);
    assert_true(strncmp(err.message, "calls.jsonl:4:", 14) == 0);
    assert_non_null(strstr(err.message, "expected one call record"));
    assert_int_equal(err.column, 22);

    /* The same text read explicitly. */
    assert_int_equal(parse_fails("{\"id\":\"a\",\"tool\":\"t\"}\n"
                                 "garbage\n",
                                 "toolgate", &err),
                     TG_EPARSE);
    assert_int_equal(err.line, 2);

    /* Missing fields name the line and the field. */
    assert_int_equal(parse_fails("{\"id\":\"a\",\"tool\":\"t\"}\n"
                                 "{\"id\":\"b\",\"args\":{}}\n",
                                 "auto", &err),
                     TG_EPARSE);
    assert_string_equal(err.message, "calls.jsonl:2: call record: field 'tool' "
                                     "must be a string (the tool name)");
    assert_string_equal(err.pointer, "/tool");
    assert_int_equal(err.line, 2);
    assert_int_equal(parse_fails("{\"id\":\"a\",\"tool\":\"t\"}\n"
                                 "{\"tool\":\"t\"}\n",
                                 "toolgate", &err),
                     TG_EPARSE);
    assert_non_null(strstr(err.message, ":2: call record: field 'id'"));
    assert_int_equal(
        parse_fails("{\"id\":\"a\",\"tool\":\"t\"}\n[1]\n", "toolgate", &err),
        TG_EPARSE);
    assert_non_null(strstr(err.message, "must be an object"));

    /* In one document: the record's position in the array. */
    assert_int_equal(parse_fails("[{\"id\":\"a\",\"tool\":\"t\"},{\"id\":\"b\","
                                 "\"tool\":5}]",
                                 "toolgate", &err),
                     TG_EPARSE);
    assert_string_equal(err.message, "calls.jsonl: call record 1: field 'tool' "
                                     "must be a string");
    assert_string_equal(err.pointer, "/1/tool");
    assert_int_equal(parse_fails("{\"id\":\"a\",\"tool\":\"t\",\"context\":3}",
                                 "auto", &err),
                     TG_EPARSE);
    assert_non_null(strstr(err.message, "context"));
    assert_int_equal(parse_fails("\"str\"", "toolgate", &err), TG_EFORMAT);

    /* A first line that is not a call record: not JSON Lines, so the
     * whole-document error is reported. */
    assert_int_equal(parse_fails("{\"a\":1}\n{\"b\":2}\n", "auto", &err),
                     TG_EPARSE);
    assert_non_null(strstr(err.message, "calls.jsonl:2:"));
    assert_non_null(strstr(err.message, "expected JSON"));
}

/* A NULL tg_error is allowed everywhere. */
static void test_null_error(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "{\"id\":\"a\",\"tool\":5}",
        "[{\"id\":\"a\",\"tool\":\"t\"},{\"tool\":\"t\"}]",
        "{\"id\":\"a\",\"tool\":\"t\"}\n{\"id\":\"b\"}\n",
        "{\"id\":\"a\",\"tool\":\"t\"}\nnope\n",
        "{\"choices\":[]}",
        "{\"x\":1}",
        "[1",
    };
    static const char *const formats[] = {"auto", "toolgate", "openai-chat",
                                          "nope"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
            tg_turn *turn = NULL;
            if (tg_turn_parse(bad[i], strlen(bad[i]), formats[f], NULL, &turn,
                              NULL) == 0) {
                tg_turn_free(turn);
                fail_msg("'%s' parsed as %s", bad[i], formats[f]);
            }
            assert_null(turn);
        }
    tg_turn *turn = parse_ok("{\"id\":\"a\",\"tool\":\"t\"}", "auto");
    char *out = NULL;
    assert_int_equal(tg_turn_render(turn, NULL, &out, NULL, NULL), TG_EINVAL);
    assert_int_equal(tg_turn_render(turn, "nope", &out, NULL, NULL),
                     TG_EFORMAT);
    tg_turn_free(turn);
}

static void test_render(void **state)
{
    (void)state;
    tg_turn *turn = parse_ok("{\"id\":\"a\",\"tool\":\"t\"}\n"
                             "{\"id\":\"b\",\"tool\":\"u\"}\n"
                             "{\"id\":\"c\",\"tool\":\"v\"}\n",
                             NULL);
    tg_result *r0 = tg__result_success(turn->calls[0],
                                       json_pack("{s:[s]}", "lines", "x\ny"));
    r0->duration_ms = 12.5;
    r0->exit_status = 0;
    assert_int_equal(tg__turn_set_result(turn, 0, r0), 0);
    assert_int_equal(
        tg__turn_set_result(turn, 1,
                            tg__result_canceled(turn->calls[1],
                                                TG_EXECUTION_STARTED, "user",
                                                "interrupted")),
        0);
    char *out = NULL;
    size_t len;
    tg_error err;
    /* Call 2 has no result yet. */
    assert_int_equal(tg_turn_render(turn, NULL, &out, &len, &err), TG_EINVAL);
    assert_non_null(strstr(err.message, "call 2 (id 'c')"));
    assert_int_equal(tg__turn_set_result(turn, 2,
                                         tg__result_error(turn->calls[2],
                                                          TG_EXECUTION_FINISHED,
                                                          "EXIT_STATUS", NULL,
                                                          "exit status %d", 3)),
                     0);
    assert_int_equal(tg_turn_render(turn, NULL, &out, &len, &err), 0);
    assert_int_equal(len, strlen(out));
    assert_int_equal(out[len - 1], '\n');

    /* Three lines, in call order, each a result record that reads back. */
    const char *p = out;
    static const char *const ids[] = {"a", "b", "c"};
    static const tg_outcome outcomes[] = {
        TG_OUTCOME_SUCCESS, TG_OUTCOME_CANCELED, TG_OUTCOME_ERROR};
    for (int i = 0; i < 3; i++) {
        const char *nl = strchr(p, '\n');
        assert_non_null(nl);
        assert_null(memchr(p, '\n', (size_t)(nl - p) - 1));
        json_error_t jerr;
        json_t *o = json_loadb(p, (size_t)(nl - p), 0, &jerr); /* new ref */
        assert_non_null(o);
        tg_result *back = NULL;
        assert_int_equal(tg__result_from_json(o, &back, &err), 0);
        assert_string_equal(tg_result_id(back), ids[i]);
        assert_int_equal(tg_result_outcome(back), outcomes[i]);
        assert_true(json_equal(tg__result_payload(back),
                               tg__result_payload(turn->results[i])));
        assert_int_equal(back->execution, turn->results[i]->execution);
        tg__result_free(back);
        json_decref(o);
        p = nl + 1;
    }
    assert_string_equal(p, "");
    assert_non_null(strstr(out, "\"duration_ms\":12.5,\"exit_status\":0"));
    tg_free(out);

    /* And as openai-chat tool messages. */
    assert_int_equal(tg_turn_render(turn, "openai-chat", &out, &len, &err), 0);
    assert_true(strncmp(out,
                        "[{\"role\":\"tool\",\"tool_call_id\":\"a\","
                        "\"content\":\"{\\\"lines\\\":[\\\"x\\\\ny\\\"]}\"}",
                        60) == 0);
    tg_free(out);
    tg_turn_free(turn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_json_lines),
        cmocka_unit_test(test_single_documents),
        cmocka_unit_test(test_per_call_problems),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_null_error),
        cmocka_unit_test(test_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
