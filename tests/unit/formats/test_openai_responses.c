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
#include "tg_fast_check.h"
#include "turn.h"

static int score(const tg__format *f, const char *text)
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
    tg_turn *turn = tg_test_parse_ok(text, "auto");
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
    const tg__format *f = &tg__format_openai_responses;
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
    tg_turn *turn = tg_test_parse_ok(response2, "openai-responses");
    assert_int_equal(tg_turn_call_count(turn), 2);
    const tg_call *a = tg_turn_call(turn, 0), *b = tg_turn_call(turn, 1);
    assert_string_equal(tg_call_id(a), "call_a");
    assert_string_equal(tg_call_tool(a), "read_file");
    assert_string_equal(tg_call_args_json(a), "{\"path\":\"a\"}");
    assert_string_equal(tg_call_args_raw(a), "{\"path\":\"a\"}");
    assert_string_equal(
        json_string_value(json_object_get(tg__call_meta(a), "item_id")),
        "fc_a");
    assert_string_equal(tg_call_id(b), "call_b");
    assert_int_equal(tg_call_index(b), 1);
    assert_string_equal(tg_call_format(b), "openai-responses");
    tg_turn_free(turn);

    /* A response still in progress has output null: no calls yet. */
    turn = tg_test_parse_ok("{\"object\":\"response\",\"status\":\"queued\","
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
    tg_turn *turn = tg_test_parse_ok(items, "auto");
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
    tg__buf b;
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
    tg_turn *turn = tg_test_parse_ok(tg__buf_cstr(&b), "auto");
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
    assert_int_equal(
        tg_test_parse_fails("{\"object\":\"response\",\"output\":{}}",
                            "openai-responses", &err),
        TG_EFORMAT);
    assert_string_equal(err.pointer, "/output");
    assert_non_null(strstr(err.message, "in.json"));
    assert_non_null(strstr(err.message, "output is not an array"));

    assert_int_equal(tg_test_parse_fails("{\"object\":\"response\",\"output\":"
                                         "[{\"type\":\"message\"},7]}",
                                         "auto", &err),
                     TG_EFORMAT);
    assert_string_equal(err.pointer, "/output/1");

    assert_int_equal(tg_test_parse_fails("[{\"type\":\"function_call\"},\"x\"]",
                                         "openai-responses", &err),
                     TG_EFORMAT);
    assert_string_equal(err.pointer, "/1");
    assert_non_null(strstr(err.message, "input item 1"));

    assert_int_equal(
        tg_test_parse_fails("{\"choices\":[]}", "openai-responses", &err),
        TG_EFORMAT);
    assert_non_null(strstr(err.message, "expected an OpenAI Responses API"));
    assert_int_equal(tg_test_parse_fails("12", "openai-responses", &err),
                     TG_EFORMAT);
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
    tg_turn *turn = tg_test_parse_ok(doc, "auto");
    assert_int_equal(tg_turn_call_count(turn), 4);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 0)), "missing-call-id-0");
    assert_string_equal(tg_turn_call(turn, 0)->pre_error_code,
                        "MALFORMED_CALL");
    assert_null(tg__call_meta(tg_turn_call(turn, 0))); /* no item id to keep */
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
    tg_turn *turn = tg_test_parse_ok(response2, "auto");
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
    /* content blocks are an array of input items: text as input_text,
     * the image as input_image with a data URL */
    char *items = json_dumps(json_object_get(o1, "output"), JSON_COMPACT);
    assert_string_equal(
        items, "[{\"type\":\"input_text\",\"text\":\"see the picture\"},"
               "{\"type\":\"input_image\",\"detail\":\"auto\",\"image_url\":"
               "\"data:image/png;base64,AAAA\"}]");
    free(items);
    assert_int_equal(json_object_size(o1), 3);
    json_decref(arr);
    tg_free(out);
    tg_turn_free(turn);

    /* a turn without calls renders an empty array */
    turn = tg_test_parse_ok("{\"object\":\"response\",\"output\":[]}", "auto");
    out = render_ok(turn, NULL);
    assert_string_equal(out, "[]\n");
    tg_free(out);
    tg_turn_free(turn);
}

/* The rendered outputs, appended to the items the calls came from, answer
 * exactly those calls: the ids went out unchanged. */
/* Results made from their payload's text render as those made from the
 * value: the text itself for JSON, the decoded string for a string, and the
 * content blocks' description when there are blocks. */
static void test_render_payload_text(void **state)
{
    (void)state;
    static const char *const texts[] = {"{\"n\":[1,2],\"s\":\"\xc3\xa9\\n\"}",
                                        "\"a \\\"quoted\\\" text\"", "[]", "42",
                                        "null"};
    for (int blocks = 0; blocks < 2; blocks++)
        for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
            tg_turn *t1 = tg_test_parse_ok(response2, "auto");
            tg_turn *t2 = tg_test_parse_ok(response2, "auto");
            for (size_t i = 0; i < 2; i++) {
                const tg_call *c1 = tg_turn_call(t1, i);
                const tg_call *c2 = tg_turn_call(t2, i);
                json_error_t jerr;
                tg_result *r1 =
                    tg__result_success_text(c1, texts[k], strlen(texts[k]));
                tg_result *r2 = tg__result_success(
                    c2, json_loads(texts[k], JSON_DECODE_ANY, &jerr));
                assert_non_null(r1);
                assert_non_null(r2);
                if (blocks) {
                    r1->content = json_pack("[{s:s, s:s}]", "type", "text",
                                            "text", "block");
                    r2->content = json_incref(r1->content);
                }
                give(t1, i, r1);
                give(t2, i, r2);
            }
            char *o1 = render_ok(t1, NULL), *o2 = render_ok(t2, NULL);
            assert_string_equal(o1, o2);
            if (!blocks && k == 1)
                assert_non_null(strstr(o1, "\"output\":\"a \\\"quoted\\\" "
                                           "text\""));
            tg_free(o1);
            tg_free(o2);
            tg_turn_free(t1);
            tg_turn_free(t2);
        }
}

static void test_round_trip_answers_every_call(void **state)
{
    (void)state;
    const char *items =
        "[{\"role\":\"user\",\"content\":\"go\"},"
        "{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":"
        "\"call_\\u00e9\\\"q\",\"name\":\"t\",\"arguments\":\"{}\"},"
        "{\"type\":\"function_call\",\"id\":\"fc_2\",\"call_id\":\"call_2\","
        "\"name\":\"t\",\"arguments\":\"{}\"}]";
    tg_turn *turn = tg_test_parse_ok(items, "auto");
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
    tg_turn *again = tg_test_parse_ok(joined, "auto");
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
    tg_turn *turn = tg_test_parse_ok(
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
    tg__buf out;
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

static int fast_takes(const char *text)
{
    tg_turn *t = tg__turn_new("openai-responses");
    assert_non_null(t);
    int rc = tg__format_openai_responses.parse_fast(t, text, strlen(text));
    tg_turn_free(t);
    return rc;
}

/* Takes text on the fast path and checks it read the same calls as the
 * document path; returns the fast path's turn. */
static tg_turn *fast_same(const char *text)
{
    tg_turn *fast = NULL;
    if (tg_test_fast_vs_doc(&tg__format_openai_responses, text, &fast) != 1)
        fail_msg("fast path refused %s", text);
    return fast;
}

#define FC(call_id, name, args)                                                \
    "{\"type\":\"function_call\",\"id\":\"fc_" call_id                         \
    "\",\"call_id\":\"" call_id "\",\"name\":\"" name                          \
    "\",\"arguments\":\"" args "\"}"

/* The fast path reads plain response objects and steps aside for
 * everything else; the answers are always those of the document path. */
static void test_fast_path(void **state)
{
    (void)state;
    tg_turn *turn = fast_same(response2);
    assert_int_equal(tg_turn_call_count(turn), 2);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 1)), "call_b");
    assert_string_equal(json_string_value(json_object_get(
                            tg__call_meta(tg_turn_call(turn, 1)), "item_id")),
                        "fc_b");
    tg_turn_free(turn);

    /* Settings echoed back, white space, items of other types with
     * members of every kind, escapes, malformed and blank arguments, an
     * item without an id, no "object" marker. */
    turn = fast_same(
        "{ \"id\" : \"resp_2\", \"created_at\": 1741476542, \"temperature\": "
        "1.0, \"error\": null, \"reasoning\": {\"effort\": null},\n"
        "  \"tools\": [{\"type\": \"function\", \"name\": \"t\"}], "
        "\"output\": [\n"
        "{\"type\":\"web_search_call\",\"id\":\"ws_1\",\"action\":{\"type\":"
        "\"search\",\"sources\":[1,2.5,true]},\"status\":\"completed\"},\n"
        " " FC("a", "t", "{\\\"x\\\":1}") " ,\n" FC("b", "u", "{bad") "," FC(
            "c", "v", " ") ","
                           "{\"\\u0063all_id\":\"c_\\u00e9\",\"name\":"
                           "\"w\",\"arguments\":\"{\\\"k\\\":\\\"\\\\"
                           "ud83d\\\\ude00\\\"}\",\"type\":"
                           "\"function_call\",\"status\":null}],"
                           "\"usage\":{\"input_tokens\":1,\"details\":{}},"
                           "\"metadata\":{}}\n");
    assert_int_equal(tg_turn_call_count(turn), 4);
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 0)), "{\"x\":1}");
    assert_string_equal(tg_turn_call(turn, 1)->pre_error_code,
                        "MALFORMED_ARGUMENTS");
    assert_string_equal(tg_call_args_raw(tg_turn_call(turn, 1)), "{bad");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 2)), "{}");
    assert_string_equal(tg_call_id(tg_turn_call(turn, 3)), "c_\xc3\xa9");
    assert_null(tg__call_meta(tg_turn_call(turn, 3)));
    tg_turn_free(turn);

    /* An empty output, and one without function calls. */
    turn = fast_same("{\"output\":[]}");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);
    turn = fast_same("{\"object\":\"response\",\"output\":[{\"type\":"
                     "\"message\",\"role\":\"assistant\",\"content\":[{"
                     "\"type\":\"output_text\",\"text\":\"hi\"}]}]}");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);

    static const char *const bails[] = {
        /* duplicate keys on the path read */
        "{\"output\":[" FC("a", "t", "{}") "],\"output\":[" FC("b", "t",
                                                               "{}") "]}",
        "{\"output\":[{\"type\":\"function_call\",\"call_id\":\"a\","
        "\"call_id\":\"b\",\"name\":\"t\",\"arguments\":\"{}\"}]}",
        "{\"output\":[{\"type\":\"message\",\"type\":\"function_call\","
        "\"call_id\":\"a\",\"name\":\"t\",\"arguments\":\"{}\"}]}",
        /* per-call problems, left to the document path */
        "{\"output\":[{\"type\":\"function_call\",\"name\":\"t\","
        "\"arguments\":\"{}\"}]}",
        "{\"output\":[{\"type\":\"function_call\",\"call_id\":\"\",\"name\":"
        "\"t\",\"arguments\":\"{}\"}]}",
        "{\"output\":[{\"type\":\"function_call\",\"call_id\":7,\"name\":"
        "\"t\",\"arguments\":\"{}\"}]}",
        "{\"output\":[{\"type\":\"function_call\",\"call_id\":\"a\","
        "\"arguments\":\"{}\"}]}",
        "{\"output\":[{\"type\":\"function_call\",\"call_id\":\"a\",\"name\":"
        "\"\",\"arguments\":\"{}\"}]}",
        "{\"output\":[{\"type\":\"function_call\",\"call_id\":\"a\",\"name\":"
        "\"t\",\"arguments\":{}}]}",
        "{\"output\":[{\"type\":\"function_call\",\"call_id\":\"a\",\"name\":"
        "\"t\"}]}",
        "{\"output\":[{\"type\":\"function_call\",\"call_id\":\"a\",\"name\":"
        "\"t\",\"arguments\":null}]}",
        /* items the shape does not hold */
        "{\"output\":[{\"role\":\"assistant\"}]}",
        "{\"output\":[{\"type\":7}]}",
        "{\"output\":[7]}",
        "{\"output\":null}",
        "{\"output\":{}}",
        "{\"object\":\"response\"}",
        "[" FC("a", "t", "{}") "]",
        /* members other formats' detection reads, unknown containers */
        "{\"output\":[],\"method\":\"tools/call\",\"jsonrpc\":\"2.0\"}",
        "{\"output\":[],\"tool\":\"t\",\"id\":\"x\"}",
        "{\"output\":[],\"candidates\":1}",
        "{\"role\":\"assistant\",\"output\":[]}",
        "{\"output\":[],\"content\":[{\"type\":\"tool_use\"}]}",
        "{\"choices\":[],\"output\":[]}",
        "{\"extra\":{},\"output\":[]}",
        /* not plain JSON */
        "{\"output\":[]} x",
        "{\"output\":[]",
        "{\"output\":[],\"n\":99999999999999999999}",
        "{\"output\":[" FC("a\\u0000", "t", "{}") "]}",
    };
    for (size_t i = 0; i < sizeof bails / sizeof bails[0]; i++)
        if (fast_takes(bails[i]) != 0)
            fail_msg("fast path took %s", bails[i]);

    /* jansson keeps the last of duplicate keys; so does the parse. */
    turn = tg_test_parse_ok(bails[0], "auto");
    assert_int_equal(tg_turn_call_count(turn), 1);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 0)), "b");
    tg_turn_free(turn);
    turn = tg_test_parse_ok(bails[2], "auto");
    assert_string_equal(tg_call_id(tg_turn_call(turn, 0)), "a");
    tg_turn_free(turn);
    turn = tg_test_parse_ok(bails[3], "auto");
    assert_string_equal(tg_turn_call(turn, 0)->pre_error_code,
                        "MALFORMED_CALL");
    tg_turn_free(turn);
    assert_string_equal(detected(bails[18]), "mcp");
    tg_error err;
    assert_int_equal(tg_test_parse_fails(bails[13], "auto", &err), TG_EFORMAT);
    assert_int_equal(tg_test_parse_fails(bails[25], "auto", &err), TG_EPARSE);
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
        cmocka_unit_test(test_render_payload_text),
        cmocka_unit_test(test_round_trip_answers_every_call),
        cmocka_unit_test(test_other_formats_render_here),
        cmocka_unit_test(test_render_tools),
        cmocka_unit_test(test_fast_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
