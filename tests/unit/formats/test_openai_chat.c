/* SPDX-License-Identifier: MIT */
/*
 * test_openai_chat.c - the openai-chat format and the shared machinery of
 * format.c: detection, the three input shapes, per-call problems that must
 * not fail the turn, shape and syntax errors with their positions, rendering
 * of every payload kind, and JSON string escaping against jansson's own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"
#include "record.h"
#include "tg_fast_check.h"
#include "turn.h"

static int detect_score(const char *text)
{
    json_error_t jerr;
    json_t *doc = json_loads(text, JSON_DECODE_ANY, &jerr); /* new ref */
    assert_non_null(doc);
    int s = tg__format_openai_chat.detect(doc);
    json_decref(doc);
    return s;
}

static const char *const response3 =
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"model\":\"gpt-"
    "4o\","
    "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
    "\"content\":null,\"tool_calls\":["
    "{\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":"
    "\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"a\\\"}\"}},"
    "{\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":"
    "\"grep\",\"arguments\":\"{\\\"pattern\\\":\\\"x\\\",\\\"n\\\":3}\"}},"
    "{\"id\":\"call_c\",\"type\":\"function\",\"function\":{\"name\":"
    "\"list_dir\",\"arguments\":{\"path\":\".\"}}}]},"
    "\"finish_reason\":\"tool_calls\"}]}";

static void test_detect(void **state)
{
    (void)state;
    assert_int_equal(detect_score(response3), 3);
    assert_int_equal(detect_score("{\"choices\":[{\"message\":{\"role\":"
                                  "\"assistant\",\"content\":\"hi\"}}]}"),
                     2);
    assert_int_equal(detect_score("{\"choices\":[]}"), 1);
    assert_int_equal(detect_score("{\"role\":\"assistant\",\"tool_calls\":[]}"),
                     3);
    assert_int_equal(detect_score("{\"role\":\"assistant\",\"content\":\"x\"}"),
                     2);
    assert_int_equal(detect_score("{\"tool_calls\":[]}"), 1);
    assert_int_equal(detect_score("[{\"role\":\"user\",\"content\":\"x\"}]"),
                     2);
    assert_int_equal(detect_score("[]"), 1);
    assert_int_equal(detect_score("[{\"role\":\"user\"}, 3]"), 0);
    assert_int_equal(detect_score("{\"id\":\"c1\",\"tool\":\"t\"}"), 0);
    assert_int_equal(detect_score("{\"role\":\"user\"}"), 0);
    assert_int_equal(detect_score("\"text\""), 0);
    assert_int_equal(detect_score("null"), 0);
}

static void test_response(void **state)
{
    (void)state;
    tg_turn *turn = tg_test_parse_ok(response3, "auto");
    assert_string_equal(tg_turn_format(turn), "openai-chat");
    assert_int_equal(tg_turn_call_count(turn), 3);
    const tg_call *a = tg_turn_call(turn, 0);
    assert_string_equal(tg_call_id(a), "call_a");
    assert_string_equal(tg_call_tool(a), "read_file");
    assert_string_equal(tg_call_args_json(a), "{\"path\":\"a\"}");
    assert_string_equal(tg_call_args_raw(a), "{\"path\":\"a\"}");
    assert_string_equal(tg_call_format(a), "openai-chat");
    assert_null(a->pre_error_code);
    const tg_call *b = tg_turn_call(turn, 1);
    assert_int_equal(tg_call_index(b), 1);
    assert_string_equal(tg_call_args_json(b), "{\"pattern\":\"x\",\"n\":3}");
    const tg_call *c = tg_turn_call(turn, 2);
    /* An object instead of a string: accepted, no raw string kept. */
    assert_string_equal(tg_call_args_json(c), "{\"path\":\".\"}");
    assert_null(tg_call_args_raw(c));
    assert_null(tg_turn_call(turn, 3));
    assert_null(tg_turn_result(turn, 0));
    tg_turn_free(turn);

    /* The explicit name gives the same. */
    turn = tg_test_parse_ok(response3, "openai-chat");
    assert_int_equal(tg_turn_call_count(turn), 3);
    tg_turn_free(turn);
}

static void test_message_and_no_calls(void **state)
{
    (void)state;
    tg_turn *turn = tg_test_parse_ok(
        "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"x\",\"type\":"
        "\"function\",\"function\":{\"name\":\"now\",\"arguments\":\"\"}}]}",
        NULL);
    assert_int_equal(tg_turn_call_count(turn), 1);
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 0)), "{}");
    assert_string_equal(tg_call_args_raw(tg_turn_call(turn, 0)), "");
    tg_turn_free(turn);

    /* A text answer is a turn without calls, rendered as an empty array. */
    turn =
        tg_test_parse_ok("{\"choices\":[{\"message\":{\"role\":\"assistant\","
                         "\"content\":\"done\"}}]}",
                         "auto");
    assert_int_equal(tg_turn_call_count(turn), 0);
    char *out = NULL;
    size_t len = 99;
    tg_error err;
    assert_int_equal(tg_turn_render(turn, NULL, &out, &len, &err), 0);
    assert_string_equal(out, "[]\n");
    assert_int_equal(len, 3);
    tg_free(out);
    tg_turn_free(turn);

    turn = tg_test_parse_ok("{\"role\":\"assistant\",\"content\":\"x\","
                            "\"tool_calls\":null}",
                            "auto");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);
}

static void test_messages_array(void **state)
{
    (void)state;
    const char *msgs =
        "[{\"role\":\"user\",\"content\":\"go\"},"
        "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"old\",\"function\":"
        "{\"name\":\"a\",\"arguments\":\"{}\"}}]},"
        "{\"role\":\"tool\",\"tool_call_id\":\"old\",\"content\":\"1\"},"
        "{\"role\":\"assistant\",\"tool_calls\":["
        "{\"id\":\"k1\",\"function\":{\"name\":\"a\",\"arguments\":\"{}\"}},"
        "{\"id\":\"k2\",\"function\":{\"name\":\"b\",\"arguments\":\"{}\"}},"
        "{\"id\":\"k3\",\"function\":{\"name\":\"c\",\"arguments\":\"{}\"}}]},"
        "{\"role\":\"tool\",\"tool_call_id\":\"k2\",\"content\":\"done\"},"
        "{\"role\":\"tool\",\"tool_call_id\":\"old\",\"content\":\"again\"},"
        "{\"role\":\"tool\",\"tool_call_id\":7}]";
    tg_turn *turn = tg_test_parse_ok(msgs, "auto");
    assert_string_equal(tg_turn_format(turn), "openai-chat");
    assert_int_equal(tg_turn_call_count(turn), 2);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 0)), "k1");
    assert_string_equal(tg_call_id(tg_turn_call(turn, 1)), "k3");
    assert_int_equal(tg_call_index(tg_turn_call(turn, 1)), 1);
    tg_turn_free(turn);

    /* Everything answered: nothing to run. */
    turn = tg_test_parse_ok(
        "[{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"q\","
        "\"function\":{\"name\":\"a\"}}]},{\"role\":\"tool\","
        "\"tool_call_id\":\"q\",\"content\":\"\"}]",
        "openai-chat");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);

    /* No assistant message yet, and an empty conversation. */
    turn =
        tg_test_parse_ok("[{\"role\":\"system\",\"content\":\"s\"},{\"role\":"
                         "\"user\",\"content\":\"u\"}]",
                         "auto");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);
    turn = tg_test_parse_ok("[]", "auto");
    assert_string_equal(tg_turn_format(turn), "openai-chat");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);
}

/* Seconds of this process's CPU time. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Parses a conversation of n calls, all but two (17 and n - 2) answered in
 * reverse order, checks that the two are what is left, and returns the
 * CPU seconds the parse took. */
static double parse_answered(int n)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    tg__buf_puts(&b, "[{\"role\":\"assistant\",\"tool_calls\":[");
    for (int i = 0; i < n; i++)
        tg__buf_printf(
            &b,
            "%s{\"id\":\"call_%d\",\"type\":\"function\",\"function\":"
            "{\"name\":\"t\",\"arguments\":\"{\\\"i\\\":%d}\"}}",
            i ? "," : "", i, i);
    tg__buf_puts(&b, "]}");
    for (int i = n - 1; i >= 0; i--)
        if (i != 17 && i != n - 2)
            tg__buf_printf(&b,
                           ",{\"role\":\"tool\",\"tool_call_id\":\"call_%d\","
                           "\"content\":\"ok\"}",
                           i);
    tg__buf_puts(&b, "]");
    double t0 = cpu_s();
    tg_turn *turn = tg_test_parse_ok(tg__buf_cstr(&b), "auto");
    double took = cpu_s() - t0;
    char last[32], args[32];
    snprintf(last, sizeof last, "call_%d", n - 2);
    snprintf(args, sizeof args, "{\"i\":%d}", n - 2);
    assert_int_equal(tg_turn_call_count(turn), 2);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 0)), "call_17");
    assert_string_equal(tg_call_id(tg_turn_call(turn, 1)), last);
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 1)), args);
    tg_turn_free(turn);
    tg__buf_cleanup(&b);
    return took;
}

/* 32,000 calls, all but two answered in reverse order: the answered-id
 * lookup must not be quadratic. Measured against 1,000 calls in the same
 * run, in CPU time (a busy machine does not change it), the least of three:
 * 32x the calls cost 33-64x the time here (caches), sanitized or not; a
 * quadratic lookup would cost some 700x (5e8 id comparisons against 5e5).
 * The bound, 200x, is 3x clear of both. */
static void test_messages_array_large(void **state)
{
    (void)state;
    double small = 1e9, large = 1e9;
    for (int i = 0; i < 3; i++) {
        double s = parse_answered(1000), l = parse_answered(32000);
        small = s < small ? s : small;
        large = l < large ? l : large;
    }
    fprintf(stderr,
            "    1,000 calls parsed in %.4f s of CPU, 32,000 in %.4f s "
            "(%.1fx)\n",
            small, large, large / small);
    /* 32x the calls: linear is ~32x, quadratic ~1,024x. The bound sits
     * well between: a run with both cores taken by other work measured
     * 205x (cache and page-fault costs grow with the larger input). */
    assert_true(large < 400 * small);
}

static const char *pre(const tg_turn *turn, size_t i)
{
    return turn->calls[i]->pre_error_code;
}

static void test_per_call_problems(void **state)
{
    (void)state;
    const char *text =
        "{\"role\":\"assistant\",\"tool_calls\":["
        "{\"type\":\"function\",\"function\":{\"name\":\"a\"}}," /* 0 */
        "{\"id\":\"\",\"function\":{\"name\":\"a\"}},"           /* 1 */
        "{\"id\":\"c2\",\"type\":\"custom\",\"custom\":{\"name\":\"p\"}}," /* 2
                                                                            */
        "{\"id\":\"c3\",\"type\":\"function\"},"               /* 3 */
        "{\"id\":\"c4\",\"function\":{\"arguments\":\"{}\"}}," /* 4 */
        "{\"id\":\"c5\",\"function\":{\"name\":\"a\",\"arguments\":[1]}}," /* 5
                                                                            */
        "{\"id\":\"c6\",\"function\":{\"name\":\"a\",\"arguments\":"
        "\"{\\\"x\\\":\\n tru}\"}}," /* 6 */
        "\"not an object\","         /* 7 */
        "{\"id\":\"c8\",\"function\":{\"name\":\"ok\",\"arguments\":"
        "\"{\\\"y\\\":1}\"}},"                                           /* 8 */
        "{\"id\":\"c9\",\"function\":{\"name\":7,\"arguments\":\"[\"}}," /* 9 */
        "{\"id\":\"c10\",\"type\":5,\"function\":{\"name\":\"a\"}}" /* 10 */
        "]}";
    tg_turn *turn = tg_test_parse_ok(text, "auto");
    assert_int_equal(tg_turn_call_count(turn), 11);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 0)), "missing-id-0");
    assert_string_equal(pre(turn, 0), "MALFORMED_CALL");
    assert_non_null(strstr(turn->calls[0]->pre_error_message, "no id"));
    assert_string_equal(tg_call_id(tg_turn_call(turn, 1)), "missing-id-1");
    assert_string_equal(pre(turn, 1), "MALFORMED_CALL");
    assert_string_equal(pre(turn, 2), "MALFORMED_CALL");
    assert_non_null(strstr(turn->calls[2]->pre_error_message, "'custom'"));
    assert_string_equal(pre(turn, 3), "MALFORMED_CALL");
    assert_non_null(strstr(turn->calls[3]->pre_error_message, "no function"));
    assert_string_equal(pre(turn, 4), "MALFORMED_CALL");
    assert_non_null(strstr(turn->calls[4]->pre_error_message, "function.name"));
    assert_string_equal(pre(turn, 5), "MALFORMED_ARGUMENTS");
    assert_non_null(strstr(turn->calls[5]->pre_error_message, "an array"));
    assert_string_equal(pre(turn, 6), "MALFORMED_ARGUMENTS");
    /* The parser's position inside the arguments string is reported. */
    assert_non_null(strstr(turn->calls[6]->pre_error_message, "line 2"));
    assert_null(tg_call_args_json(tg_turn_call(turn, 6)));
    assert_null(tg_call_checksum(tg_turn_call(turn, 6)));
    assert_string_equal(pre(turn, 7), "MALFORMED_CALL");
    assert_string_equal(tg_call_id(tg_turn_call(turn, 7)), "missing-id-7");
    assert_null(pre(turn, 8));
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 8)), "{\"y\":1}");
    /* A malformed call outranks its malformed arguments. */
    assert_string_equal(pre(turn, 9), "MALFORMED_CALL");
    assert_string_equal(pre(turn, 10), "MALFORMED_CALL");
    tg_turn_free(turn);
}

static void test_duplicates(void **state)
{
    (void)state;
    tg_turn *turn =
        tg_test_parse_ok("{\"role\":\"assistant\",\"tool_calls\":["
                         "{\"id\":\"d\",\"function\":{\"name\":\"a\"}},"
                         "{\"id\":\"e\",\"function\":{\"name\":\"a\"}},"
                         "{\"id\":\"d\",\"function\":{\"name\":\"a\"}},"
                         "{\"id\":\"d\",\"function\":{\"name\":\"a\"}}]}",
                         "auto");
    assert_null(pre(turn, 0));
    assert_null(pre(turn, 1));
    assert_string_equal(pre(turn, 2), "DUPLICATE_CALL_ID");
    assert_string_equal(pre(turn, 3), "DUPLICATE_CALL_ID");
    tg_turn_free(turn);
}

static void test_shape_errors(void **state)
{
    (void)state;
    tg_error err;
    assert_int_equal(
        tg_test_parse_fails("{\"id\":\"x\",\"object\":\"list\",\"model\":"
                            "\"m\"}",
                            "auto", &err),
        TG_EFORMAT);
    assert_non_null(strstr(err.message, "in.json: not a supported turn: saw an "
                                        "object with keys id, object, model"));
    assert_non_null(strstr(err.message, "expected an OpenAI Chat Completions"));

    assert_int_equal(tg_test_parse_fails("[1,2]", "auto", &err), TG_EFORMAT);
    assert_non_null(strstr(err.message, "saw an array of 2 elements, the first "
                                        "a number"));
    assert_int_equal(tg_test_parse_fails("\"hello\"", NULL, &err), TG_EFORMAT);
    assert_non_null(strstr(err.message, "saw a string"));

    assert_int_equal(tg_test_parse_fails("{\"choices\":[]}", "auto", &err),
                     TG_EFORMAT);
    assert_non_null(strstr(err.message, "in.json: a response without choices"));
    assert_string_equal(err.pointer, "/choices");
    assert_int_equal(
        tg_test_parse_fails("{\"choices\":[{\"finish_reason\":\"stop\"}]}",
                            "openai-chat", &err),
        TG_EFORMAT);
    assert_string_equal(err.pointer, "/choices/0/message");
    assert_int_equal(
        tg_test_parse_fails("{\"role\":\"user\",\"content\":\"x\"}",
                            "openai-chat", &err),
        TG_EFORMAT);
    assert_non_null(strstr(err.message, "role 'user'"));
    assert_int_equal(tg_test_parse_fails("{\"id\":\"c1\",\"tool\":\"t\"}",
                                         "openai-chat", &err),
                     TG_EFORMAT);
    assert_int_equal(
        tg_test_parse_fails("{\"role\":\"assistant\",\"tool_calls\":{}}",
                            "auto", &err),
        TG_EFORMAT);
    assert_string_equal(err.pointer, "/tool_calls");
    assert_int_equal(
        tg_test_parse_fails("[{\"role\":\"user\"},5]", "openai-chat", &err),
        TG_EFORMAT);
    assert_string_equal(err.pointer, "/1");
    /* Explicitly named, an array of objects without roles is no
     * conversation. */
    assert_int_equal(tg_test_parse_fails("[{\"id\":\"a\",\"tool\":\"t\"}]",
                                         "openai-chat", &err),
                     TG_EFORMAT);
    assert_string_equal(err.pointer, "/0");
    assert_int_equal(
        tg_test_parse_fails("[{\"role\":\"assistant\"},{\"role\":5}]",
                            "openai-chat", &err),
        TG_EFORMAT);
    assert_int_equal(tg_test_parse_fails("{}", "nope", &err), TG_EFORMAT);
    assert_non_null(strstr(err.message, "unknown input format 'nope'"));
}

static void test_syntax_errors(void **state)
{
    (void)state;
    tg_error err;
    assert_int_equal(tg_test_parse_fails("{\"choices\": [\n  {\"message\": \n",
                                         "auto", &err),
                     TG_EPARSE);
    assert_true(strncmp(err.message, "in.json:3:", 10) == 0);
    assert_non_null(strstr(err.message, "; expected JSON"));
    assert_int_equal(err.line, 3);
    assert_true(err.column >= 0);

    assert_int_equal(tg_test_parse_fails("{\"a\":1} x", "openai-chat", &err),
                     TG_EPARSE);
    assert_int_equal(err.line, 1);
    assert_int_equal(tg_test_parse_fails("", "auto", &err), TG_EPARSE);
    assert_string_equal(err.message, "in.json: empty input; expected a model "
                                     "turn");
    assert_int_equal(tg_test_parse_fails(" \n\t\r\n", "openai-chat", &err),
                     TG_EPARSE);
    assert_non_null(strstr(err.message, "empty input"));

    /* Nesting far beyond any real turn fails cleanly. */
    char deep[6001];
    memset(deep, '[', 6000);
    deep[6000] = '\0';
    assert_int_equal(tg_test_parse_fails(deep, "auto", &err), TG_EPARSE);
    assert_non_null(strstr(err.message, "depth"));

    /* A NUL byte inside the document. */
    tg_turn *turn = NULL;
    assert_int_equal(
        tg_turn_parse("{\"role\"\0:1}", 11, "auto", NULL, &turn, &err),
        TG_EPARSE);
    assert_true(strncmp(err.message, "-:1:", 4) == 0);

    /* A byte order mark is skipped. */
    turn = tg_test_parse_ok(
        "\xEF\xBB\xBF{\"role\":\"assistant\",\"tool_calls\":[]}", "auto");
    tg_turn_free(turn);

    assert_int_equal(tg_turn_parse(NULL, 3, "auto", NULL, &turn, &err),
                     TG_EINVAL);
    assert_int_equal(tg_turn_parse("{}", 2, "auto", NULL, NULL, &err),
                     TG_EINVAL);
}

static void set_results(tg_turn *turn, json_t **payloads, tg_outcome *outcomes)
{
    for (size_t i = 0; i < turn->n; i++) {
        tg_result *r = tg__result_new(turn->calls[i], outcomes[i],
                                      TG_EXECUTION_FINISHED, payloads[i]);
        assert_non_null(r);
        assert_int_equal(tg__turn_set_result(turn, i, r), 0);
    }
}

static void test_render(void **state)
{
    (void)state;
    tg_turn *turn = tg_test_parse_ok(response3, "auto");
    tg_error err;
    char *out = NULL;
    size_t len;
    /* Every call needs a result. */
    assert_int_equal(tg_turn_render(turn, NULL, &out, &len, &err), TG_EINVAL);
    assert_non_null(strstr(err.message, "call 0 (id 'call_a') has no result"));
    assert_null(out);

    json_t *payloads[3] = {
        json_string("line1\nline2 \"q\" \xC3\xA9\x01"),
        json_pack("{s:[i,i], s:s, s:n}", "a", 1, 2, "b", "x/y", "c"),
        json_pack("{s:{s:s, s:s}}", "error", "message", "boom", "code",
                  "TOOL_FAILED"),
    };
    tg_outcome outcomes[3] = {TG_OUTCOME_SUCCESS, TG_OUTCOME_SUCCESS,
                              TG_OUTCOME_ERROR};
    set_results(turn, payloads, outcomes);
    assert_int_equal(tg_turn_render(turn, NULL, &out, &len, &err), 0);
    assert_string_equal(
        out, "[{\"role\":\"tool\",\"tool_call_id\":\"call_a\",\"content\":"
             "\"line1\\nline2 \\\"q\\\" \xC3\xA9\\u0001\"},"
             "{\"role\":\"tool\",\"tool_call_id\":\"call_b\",\"content\":"
             "\"{\\\"a\\\":[1,2],\\\"b\\\":\\\"x/y\\\",\\\"c\\\":null}\"},"
             "{\"role\":\"tool\",\"tool_call_id\":\"call_c\",\"content\":"
             "\"{\\\"error\\\":{\\\"message\\\":\\\"boom\\\",\\\"code\\\":"
             "\\\"TOOL_FAILED\\\"}}\"}]\n");
    assert_int_equal(len, strlen(out));

    /* The output is the JSON the model API takes. */
    json_error_t jerr;
    json_t *doc = json_loads(out, 0, &jerr); /* new ref */
    assert_non_null(doc);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(doc, 0), "content")),
        "line1\nline2 \"q\" \xC3\xA9\x01");
    json_decref(doc);
    tg_free(out);

    /* The same turn renders as toolgate JSON Lines. */
    assert_int_equal(tg_turn_render(turn, "toolgate", &out, &len, &err), 0);
    assert_int_equal(out[len - 1], '\n');
    assert_non_null(strstr(out, "\"id\":\"call_c\",\"tool\":\"list_dir\","
                                "\"outcome\":\"error\""));
    tg_free(out);
    assert_int_equal(tg_turn_render(turn, "gemini-ultra", &out, &len, &err),
                     TG_EFORMAT);
    assert_int_equal(tg_turn_render(NULL, NULL, &out, &len, &err), TG_EINVAL);
    tg_turn_free(turn);
}

static void test_render_odd_strings(void **state)
{
    (void)state;
    tg_turn *turn =
        tg_test_parse_ok("{\"role\":\"assistant\",\"tool_calls\":["
                         "{\"id\":\"i\\u0007\\\"d\",\"function\":{\"name\":"
                         "\"a\"}},"
                         "{\"id\":\"j\",\"function\":{\"name\":\"a\"}}]}",
                         "auto");
    /* Payload strings not built through jansson's checks: a NUL byte and
     * bytes that are not UTF-8 must still give valid JSON. */
    json_t *payloads[2] = {
        json_stringn_nocheck("a\0b\xFF\xC3(\xED\xA0\x80z", 10),
        json_stringn_nocheck("\xF0\x9F\x98\x80\xF4\x90\x80\x80", 8),
    };
    tg_outcome outcomes[2] = {TG_OUTCOME_SUCCESS, TG_OUTCOME_SUCCESS};
    set_results(turn, payloads, outcomes);
    char *out;
    size_t len;
    tg_error err;
    assert_int_equal(tg_turn_render(turn, "openai-chat", &out, &len, &err), 0);
    assert_string_equal(
        out,
        "[{\"role\":\"tool\",\"tool_call_id\":\"i\\u0007\\\"d\",\"content\":"
        "\"a\\u0000b\\uFFFD\\uFFFD(\\uFFFD\\uFFFD\\uFFFDz\"},"
        "{\"role\":\"tool\",\"tool_call_id\":\"j\",\"content\":"
        "\"\xF0\x9F\x98\x80\\uFFFD\\uFFFD\\uFFFD\\uFFFD\"}]\n");
    json_error_t jerr;
    json_t *doc = json_loads(out, JSON_ALLOW_NUL, &jerr); /* new ref */
    assert_non_null(doc);
    json_decref(doc);
    tg_free(out);
    tg_turn_free(turn);
}

/* tg__json_string must agree byte for byte with jansson's compact
 * encoding for every valid string. */
static void test_json_string_matches_jansson(void **state)
{
    (void)state;
    unsigned int seed = 12345;
    static const char *const pieces[] = {"a",
                                         "\"",
                                         "\\",
                                         "/",
                                         "\n",
                                         "\r",
                                         "\t",
                                         "\b",
                                         "\f",
                                         "\x01",
                                         "\x1f",
                                         "\x7f",
                                         " ",
                                         "\xC3\xA9",
                                         "\xE2\x9C\x93",
                                         "\xF0\x9F\x98\x80",
                                         "\xE2\x80\xA8",
                                         "\xEF\xBF\xBF",
                                         "z9"};
    for (int round = 0; round < 2000; round++) {
        char s[256];
        size_t n = 0;
        int parts = (int)(rand_r(&seed) % 20);
        for (int p = 0; p < parts; p++) {
            const char *piece =
                pieces[rand_r(&seed) % (sizeof pieces / sizeof pieces[0])];
            size_t pl = strlen(piece);
            memcpy(s + n, piece, pl);
            n += pl;
        }
        json_t *js = json_stringn(s, n); /* new ref */
        assert_non_null(js);
        char *want = json_dumps(js, JSON_COMPACT | JSON_ENCODE_ANY);
        tg__buf b;
        tg__buf_init(&b, 0);
        assert_int_equal(tg__json_string(&b, s, n), 0);
        assert_string_equal(tg__buf_cstr(&b), want);
        tg__buf_cleanup(&b);
        free(want);
        json_decref(js);
    }
    /* The buffer's cap is honoured. */
    tg__buf small;
    tg__buf_init(&small, 4);
    assert_int_equal(tg__json_string(&small, "abcdef", 6), TG_ELIMIT);
    tg__buf_cleanup(&small);
}

static void test_payload_text(void **state)
{
    (void)state;
    tg_call *call = tg__call_new("i", "t", "openai-chat");
    tg_result *r = tg__result_success(call, json_string("plain \"text\""));
    tg__buf b;
    tg__buf_init(&b, 0);
    assert_int_equal(tg__format_payload_text(r, &b), 0);
    assert_string_equal(tg__buf_cstr(&b), "plain \"text\"");
    tg__result_free(r);
    b.len = 0;
    r = tg__result_success(call, json_real(2.5));
    assert_int_equal(tg__format_payload_text(r, &b), 0);
    assert_string_equal(tg__buf_cstr(&b), "2.5");
    tg__result_free(r);
    b.len = 0;
    r = tg__result_denied(call, "policy says no");
    assert_int_equal(tg__format_payload_text(r, &b), 0);
    assert_string_equal(tg__buf_cstr(&b),
                        "{\"denied\":{\"tool\":\"t\",\"reason\":\"policy says "
                        "no\"}}");
    tg__result_free(r);
    tg__buf_cleanup(&b);
    tg__call_free(call);
    assert_ptr_equal(tg__format_find("openai-chat"), &tg__format_openai_chat);
    assert_ptr_equal(tg__format_find("toolgate"), &tg__format_native);
    assert_null(tg__format_find("auto"));
    assert_null(tg__format_find(NULL));
}

static int fast_takes(const char *text)
{
    tg_turn *t = tg__turn_new("openai-chat");
    assert_non_null(t);
    int rc = tg__format_openai_chat.parse_fast(t, text, strlen(text));
    tg_turn_free(t);
    return rc;
}

#define TC(id, name, args)                                                     \
    "{\"id\":\"" id "\",\"type\":\"function\",\"function\":{\"name\":\"" name  \
    "\",\"arguments\":\"" args "\"}}"

/* The fast path reads plain responses and steps aside for everything else;
 * the answers are always those of the document path. */
static void test_fast_path(void **state)
{
    (void)state;
    const char *plain =
        "{\"id\":\"r\",\"choices\":[{\"index\":0,\"message\":{\"role\":"
        "\"assistant\",\"content\":null,\"tool_calls\":[" TC(
            "a", "t", "{\\\"x\\\":1}") ",{\"function\":{\"arguments\":\"{bad\","
                                       "\"name\":\"u\"},\"id\":\"b\","
                                       "\"extra\":[1,{}]}]}},{\"message\":5}],"
                                       "\"usage\":{\"n\":[1.5,null,"
                                       "\"\\u00e9\"]}}";
    assert_int_equal(fast_takes(plain), 1);
    tg_turn *turn = tg_test_parse_ok(plain, "auto");
    assert_int_equal(tg_turn_call_count(turn), 2);
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 0)), "{\"x\":1}");
    assert_string_equal(tg_call_args_raw(tg_turn_call(turn, 0)), "{\"x\":1}");
    assert_string_equal(pre(turn, 1), "MALFORMED_ARGUMENTS");
    assert_string_equal(tg_call_args_raw(tg_turn_call(turn, 1)), "{bad");
    tg_turn_free(turn);
    /* An escaped key and an empty tool_calls array. */
    assert_int_equal(fast_takes("{\"\\u0063hoices\":[{\"message\":{"
                                "\"tool_calls\":[]}}]}"),
                     1);

    static const char *const bails[] = {
        /* duplicate keys on the path read */
        "{\"choices\":[{\"message\":{\"tool_calls\":[" TC(
            "a", "t", "{}") "]}}],\"choices\":[{\"message\":{\"tool_calls\":"
                            "[" TC("b", "t", "{}") "]}}]}",
        "{\"choices\":[{\"message\":{\"tool_calls\":[{\"id\":\"a\",\"id\":"
        "\"b\","
        "\"function\":{\"name\":\"t\",\"arguments\":\"{}\"}}]}}]}",
        "{\"choices\":[{\"message\":{\"tool_calls\":[],\"tool_calls\":[]}}]}",
        "{\"choices\":[{\"message\":{\"tool_calls\":[]},\"message\":{}}]}",
        /* per-call problems, left to the document path */
        "{\"choices\":[{\"message\":{\"tool_calls\":[{\"id\":\"a\",\"type\":"
        "\"custom\",\"function\":{\"name\":\"t\",\"arguments\":\"{}\"}}]}}]}",
        "{\"choices\":[{\"message\":{\"tool_calls\":[{\"function\":{\"name\":"
        "\"t\",\"arguments\":\"{}\"}}]}}]}",
        "{\"choices\":[{\"message\":{\"tool_calls\":[{\"id\":\"a\","
        "\"function\":"
        "{\"name\":\"t\",\"arguments\":{}}}]}}]}",
        "{\"choices\":[{\"message\":{\"tool_calls\":[{\"id\":\"a\","
        "\"function\":"
        "{\"name\":\"t\"}}]}}]}",
        "{\"choices\":[{\"message\":{\"tool_calls\":[7]}}]}",
        /* other shapes */
        "{\"choices\":[5,{\"message\":{\"tool_calls\":[]}}]}",
        "{\"choices\":[{\"message\":{\"tool_calls\":null}}]}",
        "{\"choices\":[{\"message\":{\"content\":\"hi\"}}]}",
        "{\"choices\":[]}",
        "[{\"role\":\"assistant\",\"tool_calls\":[]}]",
        "{\"role\":\"assistant\",\"tool_calls\":[]}",
        /* not plain JSON */
        "{\"choices\":[{\"message\":{\"tool_calls\":[]}}]} x",
        "{\"choices\":[{\"message\":{\"tool_calls\":[]}}],\"usage\":"
        "99999999999999999999}",
        "{\"choices\":[{\"message\":{\"tool_calls\":[]}}],\"x\":\"\\u0000\"}",
        "{\"choices\":[{\"message\":{\"tool_calls\":[]}}]",
    };
    for (size_t i = 0; i < sizeof bails / sizeof bails[0]; i++)
        if (fast_takes(bails[i]) != 0)
            fail_msg("fast path took %s", bails[i]);

    /* jansson keeps the last of duplicate keys; so does the parse. */
    turn = tg_test_parse_ok(bails[0], "auto");
    assert_int_equal(tg_turn_call_count(turn), 1);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 0)), "b");
    tg_turn_free(turn);
    turn = tg_test_parse_ok(bails[1], "auto");
    assert_string_equal(tg_call_id(tg_turn_call(turn, 0)), "b");
    tg_turn_free(turn);
    tg_error err;
    assert_int_equal(tg_test_parse_fails(bails[9], "auto", &err), TG_EFORMAT);
    assert_int_equal(tg_test_parse_fails(bails[15], "auto", &err), TG_EPARSE);
    assert_int_equal(tg_test_parse_fails(bails[16], "auto", &err), TG_EPARSE);
    assert_non_null(strstr(err.message, "too big integer"));
    assert_int_equal(tg_test_parse_fails(bails[17], "auto", &err), TG_EPARSE);
    assert_int_equal(tg_test_parse_fails(bails[18], "auto", &err), TG_EPARSE);
}

/* tg_turn_message_span: where choices[0].message lies in the text given
 * (a byte order mark and white space included), known on the fast path
 * only. */
static void test_message_span(void **state)
{
    (void)state;
    static const char msg[] =
        "{ \"role\":\"assistant\", \"content\":null,\n \"tool_calls\":"
        "[" TC("a", "t", "{}") "] }";
    static const char head[] = "\xEF\xBB\xBF {\"id\":\"r\",\"choices\":[{"
                               "\"index\":0,\"message\": ";
    static const char tail[] = "},{\"message\":{}}],\"usage\":{}}";
    char text[1024];
    snprintf(text, sizeof text, "%s%s%s", head, msg, tail);
    tg_turn *turn = NULL;
    tg_error err = {0};
    assert_int_equal(
        tg_turn_parse(text, strlen(text), "openai-chat", "t", &turn, &err), 0);
    size_t off = 0, len = 0;
    assert_int_equal(tg_turn_message_span(turn, &off, &len), 1);
    assert_int_equal(off, strlen(head));
    assert_int_equal(len, strlen(msg));
    assert_memory_equal(text + off, msg, len);
    tg_turn_free(turn);
    /* auto-detected the same */
    assert_int_equal(tg_turn_parse(text, strlen(text), NULL, "t", &turn, &err),
                     0);
    assert_int_equal(tg_turn_message_span(turn, &off, &len), 1);
    assert_int_equal(off, strlen(head));
    tg_turn_free(turn);
    /* the document path (a message without tool_calls), another format,
     * a streamed turn: not known */
    static const char *const unknown[] = {
        "{\"choices\":[{\"message\":{\"role\":\"assistant\","
        "\"content\":\"hi\"}}]}",
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\","
        "\"id\":\"a\",\"name\":\"t\",\"input\":{}}]}",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
        "\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"t\","
        "\"arguments\":\"{}\"}}]}}]}\n\ndata: [DONE]\n\n",
    };
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        turn = NULL;
        assert_int_equal(tg_turn_parse(unknown[i], strlen(unknown[i]), NULL,
                                       "t", &turn, &err),
                         0);
        off = len = 7;
        assert_int_equal(tg_turn_message_span(turn, &off, &len), 0);
        assert_int_equal(off, 7);
        tg_turn_free(turn);
    }
    assert_int_equal(tg_turn_message_span(NULL, &off, &len), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_message_span),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_response),
        cmocka_unit_test(test_message_and_no_calls),
        cmocka_unit_test(test_messages_array),
        cmocka_unit_test(test_messages_array_large),
        cmocka_unit_test(test_per_call_problems),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_shape_errors),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_render_odd_strings),
        cmocka_unit_test(test_json_string_matches_jansson),
        cmocka_unit_test(test_payload_text),
        cmocka_unit_test(test_fast_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
