/* SPDX-License-Identifier: MIT */
/*
 * test_openai_responses.c - the openai-responses format: detection scores
 * against the shapes of the other formats, the response and input-items
 * shapes, which function calls count as answered, per-call problems, shape
 * errors with their JSON pointers, rendering of every payload kind and of
 * content blocks, tool definitions, and round trips (rendered outputs answer
 * exactly the calls they came from; ids cross formats unchanged).
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
    int rc = tg_turn_parse(text, strlen(text), format, "in.json", &turn, &err);
    if (rc != 0)
        fail_msg("parse failed (%s): %s", tg_err_name(rc), err.message);
    assert_non_null(turn);
    return turn;
}

static int parse_fails(const char *text, const char *format, tg_error *err)
{
    tg_turn *turn = (tg_turn *)1;
    int rc = tg_turn_parse(text, strlen(text), format, "in.json", &turn, err);
    assert_int_not_equal(rc, 0);
    assert_null(turn);
    assert_int_equal(err->code, rc);
    return rc;
}

static int score(const tg_format *f, const char *text)
{
    json_error_t jerr;
    json_t *doc = json_loads(text, JSON_DECODE_ANY, &jerr); /* new ref */
    if (doc == NULL)
        fail_msg("bad test JSON: %s", jerr.text);
    int s = f->detect ? f->detect(doc) : 0;
    json_decref(doc);
    return s;
}

static const char *detected(const char *text)
{
    tg_turn *turn = parse_ok(text, "auto");
    const char *f = tg_turn_format(turn); /* static */
    tg_turn_free(turn);
    return f;
}

static const char *const response2 =
    "{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"completed\","
    "\"output\":["
    "{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[]},"
    "{\"type\":\"function_call\",\"id\":\"fc_a\",\"call_id\":\"call_a\","
    "\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"a\\\"}\"},"
    "{\"type\":\"message\",\"role\":\"assistant\",\"content\":[]},"
    "{\"type\":\"function_call\",\"id\":\"fc_b\",\"call_id\":\"call_b\","
    "\"name\":\"grep\",\"arguments\":\"{\\\"pattern\\\":\\\"x\\\"}\"}]}";

static void test_detect(void **state)
{
    (void)state;
    const tg_format *f = &tg__format_openai_responses;
    assert_int_equal(score(f, response2), 4);
    assert_int_equal(score(f, "{\"output\":[{\"type\":\"function_call\"}]}"),
                     3);
    assert_int_equal(score(f, "{\"output\":[]}"), 1);
    assert_int_equal(score(f, "{\"output\":[{\"role\":\"x\"}]}"), 0);
    assert_int_equal(score(f, "{\"output\":\"text\"}"), 0);
    assert_int_equal(score(f,
                           "[{\"role\":\"user\",\"content\":\"hi\"},"
                           "{\"type\":\"function_call\",\"call_id\":\"c\"}]"),
                     3);
    assert_int_equal(
        score(f, "[{\"type\":\"function_call_output\",\"call_id\":\"c\"}]"), 3);
    /* Messages only: both APIs take this shape; openai-chat claims it. */
    assert_int_equal(score(f, "[{\"role\":\"user\",\"content\":\"hi\"}]"), 0);
    assert_int_equal(score(f, "[{\"type\":\"function_call\"}, 3]"), 0);
    assert_int_equal(score(f, "[]"), 0);
    assert_int_equal(score(f, "\"output\""), 0);

    assert_string_equal(detected(response2), "openai-responses");
    assert_string_equal(
        detected("[{\"role\":\"user\",\"content\":\"hi\"},"
                 "{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":"
                 "\"t\",\"arguments\":\"{}\"}]"),
        "openai-responses");
    assert_string_equal(detected("[{\"role\":\"user\",\"content\":\"hi\"}]"),
                        "openai-chat");
}

static void test_response_calls(void **state)
{
    (void)state;
    tg_turn *turn = parse_ok(response2, "openai-responses");
    assert_int_equal(tg_turn_call_count(turn), 2);
    const tg_call *a = tg_turn_call(turn, 0), *b = tg_turn_call(turn, 1);
    assert_string_equal(tg_call_id(a), "call_a");
    assert_string_equal(tg_call_tool(a), "read_file");
    assert_string_equal(tg_call_args_json(a), "{\"path\":\"a\"}");
    assert_string_equal(tg_call_args_raw(a), "{\"path\":\"a\"}");
    assert_string_equal(json_string_value(json_object_get(a->meta, "item_id")),
                        "fc_a");
    assert_string_equal(tg_call_id(b), "call_b");
    assert_int_equal(tg_call_index(b), 1);
    assert_string_equal(tg_call_format(b), "openai-responses");
    tg_turn_free(turn);

    /* A response still in progress has output null: no calls yet. */
    turn = parse_ok("{\"object\":\"response\",\"status\":\"queued\","
                    "\"output\":null}",
                    "openai-responses");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);
}

static void test_answered_only_by_a_later_output(void **state)
{
    (void)state;
    const char *items =
        "["
        /* 0: answered by 1 */
        "{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"t\","
        "\"arguments\":\"{}\"},"
        "{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":"
        "\"x\"},"
        /* 2: an answer to c2 before c2 was called does not answer it */
        "{\"type\":\"function_call_output\",\"call_id\":\"c2\",\"output\":"
        "\"x\"},"
        "{\"type\":\"function_call\",\"call_id\":\"c2\",\"name\":\"t\","
        "\"arguments\":\"{}\"},"
        /* 4: called twice, answered after the first only: the second runs
         * (and is marked a duplicate of nothing, being the only one) */
        "{\"type\":\"function_call\",\"call_id\":\"c3\",\"name\":\"t\","
        "\"arguments\":\"{}\"},"
        "{\"type\":\"function_call_output\",\"call_id\":\"c3\",\"output\":"
        "\"x\"},"
        "{\"type\":\"function_call\",\"call_id\":\"c3\",\"name\":\"t\","
        "\"arguments\":\"{\\\"again\\\":true}\"},"
        /* 7: answered twice */
        "{\"type\":\"function_call\",\"call_id\":\"c4\",\"name\":\"t\","
        "\"arguments\":\"{}\"},"
        "{\"type\":\"function_call_output\",\"call_id\":\"c4\",\"output\":"
        "\"x\"},"
        "{\"type\":\"function_call_output\",\"call_id\":\"c4\",\"output\":"
        "\"y\"},"
        /* 10: output without call_id answers nothing */
        "{\"type\":\"function_call\",\"call_id\":\"c5\",\"name\":\"t\","
        "\"arguments\":\"{}\"},"
        "{\"type\":\"function_call_output\",\"output\":\"z\"},"
        "{\"role\":\"user\",\"content\":\"go on\"}"
        "]";
    tg_turn *turn = parse_ok(items, "auto");
    assert_string_equal(tg_turn_format(turn), "openai-responses");
    assert_int_equal(tg_turn_call_count(turn), 3);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 0)), "c2");
    assert_string_equal(tg_call_id(tg_turn_call(turn, 1)), "c3");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 1)),
                        "{\"again\":true}");
    assert_null(tg_turn_call(turn, 1)->pre_error_code);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 2)), "c5");
    tg_turn_free(turn);
}

static void test_many_calls_and_answers(void **state)
{
    (void)state;
    /* 2000 calls, every odd one answered: the answered set is searched, not
     * scanned, and the right half remains. */
    tg_buf b;
    tg__buf_init(&b, 0);
    tg__buf_puts(&b, "[");
    for (int i = 0; i < 2000; i++)
        tg__buf_printf(&b,
                       "%s{\"type\":\"function_call\",\"call_id\":\"c%d\","
                       "\"name\":\"t\",\"arguments\":\"{}\"}",
                       i ? "," : "", i);
    for (int i = 1; i < 2000; i += 2)
        tg__buf_printf(&b,
                       ",{\"type\":\"function_call_output\",\"call_id\":"
                       "\"c%d\",\"output\":\"ok\"}",
                       i);
    tg__buf_puts(&b, "]");
    tg_turn *turn = parse_ok(tg__buf_cstr(&b), "auto");
    assert_int_equal(tg_turn_call_count(turn), 1000);
    for (size_t i = 0; i < 1000; i++) {
        char id[16];
        snprintf(id, sizeof id, "c%zu", 2 * i);
        assert_string_equal(tg_call_id(tg_turn_call(turn, i)), id);
    }
    tg_turn_free(turn);
    tg__buf_cleanup(&b);
}

static void test_shape_errors(void **state)
{
    (void)state;
    tg_error err;
    assert_int_equal(parse_fails("{\"object\":\"response\",\"output\":{}}",
                                 "openai-responses", &err),
                     TG_EFORMAT);
    assert_string_equal(err.pointer, "/output");
    assert_non_null(strstr(err.message, "in.json"));
    assert_non_null(strstr(err.message, "output is not an array"));

    assert_int_equal(parse_fails("{\"object\":\"response\",\"output\":"
                                 "[{\"type\":\"message\"},7]}",
                                 "auto", &err),
                     TG_EFORMAT);
    assert_string_equal(err.pointer, "/output/1");

    assert_int_equal(parse_fails("[{\"type\":\"function_call\"},\"x\"]",
                                 "openai-responses", &err),
                     TG_EFORMAT);
    assert_string_equal(err.pointer, "/1");
    assert_non_null(strstr(err.message, "input item 1"));

    assert_int_equal(parse_fails("{\"choices\":[]}", "openai-responses", &err),
                     TG_EFORMAT);
    assert_non_null(strstr(err.message, "expected an OpenAI Responses API"));
    assert_int_equal(parse_fails("12", "openai-responses", &err), TG_EFORMAT);
}

static void test_malformed_calls_do_not_fail_the_turn(void **state)
{
    (void)state;
    const char *doc =
        "{\"object\":\"response\",\"output\":["
        "{\"type\":\"function_call\",\"call_id\":\"\",\"name\":\"t\"},"
        "{\"type\":\"function_call\",\"call_id\":7,\"name\":\"t\"},"
        "{\"type\":\"function_call\",\"call_id\":\"ok\",\"name\":\"t\","
        "\"arguments\":\"{\\\"a\\\":1,\\\"a\\\":2}\"},"
        "{\"type\":\"function_call\",\"call_id\":\"ok2\",\"name\":\"t\","
        "\"arguments\":\"  \"}"
        "]}";
    tg_turn *turn = parse_ok(doc, "auto");
    assert_int_equal(tg_turn_call_count(turn), 4);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 0)), "missing-call-id-0");
    assert_string_equal(tg_turn_call(turn, 0)->pre_error_code,
                        "MALFORMED_CALL");
    assert_null(tg_turn_call(turn, 0)->meta); /* no item id to keep */
    assert_string_equal(tg_call_id(tg_turn_call(turn, 1)), "missing-call-id-1");
    /* duplicate keys in the arguments string are malformed arguments */
    assert_string_equal(tg_turn_call(turn, 2)->pre_error_code,
                        "MALFORMED_ARGUMENTS");
    /* a blank string stands for {} */
    assert_null(tg_turn_call(turn, 3)->pre_error_code);
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 3)), "{}");
    tg_turn_free(turn);
}

static void give(tg_turn *turn, size_t i, tg_result *r)
{
    assert_non_null(r);
    assert_int_equal(tg__turn_set_result(turn, i, r), 0);
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

static void test_render(void **state)
{
    (void)state;
    tg_turn *turn = parse_ok(response2, "auto");
    const tg_call *a = tg_turn_call(turn, 0), *b = tg_turn_call(turn, 1);
    tg_result *ra = tg__result_success(a, json_pack("{s:[i,i]}", "n", 1, 2));
    give(turn, 0, ra);
    tg_result *rb = tg__result_success(b, json_string("see the picture"));
    rb->content = json_pack("[{s:s, s:s}, {s:s, s:s, s:s}]", "type", "text",
                            "text", "see the picture", "type", "image", "data",
                            "AAAA", "mimeType", "image/png");
    give(turn, 1, rb);
    char *out = render_ok(turn, NULL);
    json_error_t jerr;
    json_t *arr = json_loads(out, 0, &jerr); /* new ref */
    assert_non_null(arr);
    assert_int_equal(json_array_size(arr), 2);
    json_t *o0 = json_array_get(arr, 0); /* borrowed */
    assert_string_equal(json_string_value(json_object_get(o0, "type")),
                        "function_call_output");
    assert_string_equal(json_string_value(json_object_get(o0, "call_id")),
                        "call_a");
    assert_string_equal(json_string_value(json_object_get(o0, "output")),
                        "{\"n\":[1,2]}");
    json_t *o1 = json_array_get(arr, 1); /* borrowed */
    /* the image cannot be carried in a string: it is described */
    assert_string_equal(json_string_value(json_object_get(o1, "output")),
                        "see the picture\n[image: image/png, 3 bytes]");
    assert_int_equal(json_object_size(o1), 3);
    json_decref(arr);
    tg_free(out);
    tg_turn_free(turn);

    /* a turn without calls renders an empty array */
    turn = parse_ok("{\"object\":\"response\",\"output\":[]}", "auto");
    out = render_ok(turn, NULL);
    assert_string_equal(out, "[]\n");
    tg_free(out);
    tg_turn_free(turn);
}

/* The rendered outputs, appended to the items the calls came from, answer
 * exactly those calls: the ids went out unchanged. */
static void test_round_trip_answers_every_call(void **state)
{
    (void)state;
    const char *items =
        "[{\"role\":\"user\",\"content\":\"go\"},"
        "{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":"
        "\"call_\\u00e9\\\"q\",\"name\":\"t\",\"arguments\":\"{}\"},"
        "{\"type\":\"function_call\",\"id\":\"fc_2\",\"call_id\":\"call_2\","
        "\"name\":\"t\",\"arguments\":\"{}\"}]";
    tg_turn *turn = parse_ok(items, "auto");
    assert_int_equal(tg_turn_call_count(turn), 2);
    for (size_t i = 0; i < 2; i++)
        give(turn, i,
             tg__result_error(tg_turn_call(turn, i), TG_EXECUTION_FINISHED,
                              "TOOL_FAILED", NULL, "no"));
    char *out = render_ok(turn, NULL);
    json_error_t jerr;
    json_t *all = json_loads(items, 0, &jerr);   /* new ref */
    json_t *outputs = json_loads(out, 0, &jerr); /* new ref */
    assert_non_null(all);
    assert_non_null(outputs);
    json_array_extend(all, outputs);
    char *joined = json_dumps(all, JSON_COMPACT);
    tg_turn *again = parse_ok(joined, "auto");
    assert_string_equal(tg_turn_format(again), "openai-responses");
    assert_int_equal(tg_turn_call_count(again), 0);
    free(joined);
    json_decref(all);
    json_decref(outputs);
    tg_turn_free(again);

    /* into openai-chat and back: the same ids answer the same calls */
    char *chat = render_ok(turn, "openai-chat");
    json_t *msgs = json_loads(chat, 0, &jerr); /* new ref */
    assert_non_null(msgs);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(msgs, 0), "tool_call_id")),
                        "call_\xc3\xa9\"q");
    json_decref(msgs);
    tg_free(chat);
    tg_free(out);
    tg_turn_free(turn);
}

static void test_other_formats_render_here(void **state)
{
    (void)state;
    tg_turn *turn = parse_ok(
        "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"tool_calls\":["
        "{\"id\":\"call_x\",\"type\":\"function\",\"function\":{\"name\":"
        "\"t\",\"arguments\":\"{}\"}}]}}]}",
        "auto");
    give(turn, 0, tg__result_timeout(tg_turn_call(turn, 0), 5));
    char *out = render_ok(turn, "openai-responses");
    assert_string_equal(out, "[{\"type\":\"function_call_output\",\"call_id\":"
                             "\"call_x\",\"output\":\"{\\\"timeout\\\":{"
                             "\\\"durationMs\\\":5}}\"}]\n");
    tg_free(out);
    tg_turn_free(turn);
}

static void test_render_tools(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *tools = json_loads(
        "[{\"name\":\"read_file\",\"description\":\"Read a file\","
        "\"input_schema\":{\"type\":\"object\",\"properties\":{\"path\":"
        "{\"type\":\"string\"}}},\"annotations\":{\"readOnlyHint\":true}},"
        "{\"name\":\"now\"}]",
        0, &jerr); /* new ref */
    assert_non_null(tools);
    tg_buf out;
    tg__buf_init(&out, 0);
    tg_error err;
    assert_int_equal(
        tg__format_openai_responses.render_tools(tools, &out, &err), 0);
    assert_string_equal(
        tg__buf_cstr(&out),
        "[{\"type\":\"function\",\"name\":\"read_file\",\"description\":"
        "\"Read a file\",\"parameters\":{\"type\":\"object\",\"properties\":"
        "{\"path\":{\"type\":\"string\"}}}},"
        "{\"type\":\"function\",\"name\":\"now\",\"parameters\":{\"type\":"
        "\"object\"}}]\n");
    tg__buf_cleanup(&out);
    json_decref(tools);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_response_calls),
        cmocka_unit_test(test_answered_only_by_a_later_output),
        cmocka_unit_test(test_many_calls_and_answers),
        cmocka_unit_test(test_shape_errors),
        cmocka_unit_test(test_malformed_calls_do_not_fail_the_turn),
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_round_trip_answers_every_call),
        cmocka_unit_test(test_other_formats_render_here),
        cmocka_unit_test(test_render_tools),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
