/* SPDX-License-Identifier: MIT */
/*
 * test_anthropic.c - the anthropic format (Messages API): detection against
 * the other formats' shapes, the three input shapes, per-block problems that
 * must not fail the turn, shape errors, rendering of every outcome and of
 * content blocks, tool definitions, and the round trip (the rendered results
 * answer the calls they came from).
 *
 * JSON in this file is written with single quotes for readability;
 * tg_test_quotes() turns them into double quotes (no test text contains an
 * apostrophe).
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

/* The text with ' replaced by " (a new string the caller frees). */
static int score(const char *text)
{
    char *s = tg_test_quotes(text);
    json_error_t jerr;
    json_t *doc = json_loads(s, JSON_DECODE_ANY, &jerr); /* new ref */
    if (doc == NULL)
        fail_msg("bad test JSON: %s: %s", jerr.text, s);
    free(s);
    int sc = tg__format_anthropic.detect(doc);
    json_decref(doc);
    return sc;
}

static const char *detected(const char *text)
{
    tg_turn *turn = tg_test_parse_ok_q(text, "auto");
    /* the format name is a static string: it outlives the turn */
    const char *f = tg_turn_format(turn);
    tg_turn_free(turn);
    return f;
}

static const char *pre(const tg_turn *turn, size_t i)
{
    return turn->calls[i]->pre_error_code;
}

#define TOOL_USE(id, name, input)                                              \
    "{'type':'tool_use','id':'" id "','name':'" name "','input':" input "}"

static void test_detect(void **state)
{
    (void)state;
    /* A Messages API response, with and without calls. */
    assert_int_equal(
        score("{'type':'message','role':'assistant','content':[" TOOL_USE(
            "toolu_1", "a", "{}") "]}"),
        6);
    assert_int_equal(
        score("{'type':'message','role':'assistant','content':[{'type':'text','"
              "text':'hi'}],'stop_reason':'end_turn'}"),
        6);
    /* An assistant message with tool_use, with or without a role. */
    assert_int_equal(
        score("{'role':'assistant','content':[" TOOL_USE("t", "a", "{}") "]}"),
        6);
    assert_int_equal(score("{'content':[" TOOL_USE("t", "a", "{}") "]}"), 6);
    /* Content parts alone: could be an OpenAI message; openai-chat wins. */
    assert_int_equal(
        score("{'role':'assistant','content':[{'type':'text','text':'hi'}]}"),
        1);
    assert_int_equal(
        score("{'role':'user','content':[" TOOL_USE("t", "a", "{}") "]}"), 0);
    assert_int_equal(score("{'role':'assistant','content':'hi'}"), 0);
    /* Messages arrays: tool blocks decide. */
    assert_int_equal(score("[{'role':'user','content':'x'},{'role':'assistant',"
                           "'content':[" TOOL_USE("t", "a", "{}") "]}]"),
                     6);
    assert_int_equal(score("[{'role':'user','content':[{'type':'tool_result','"
                           "tool_use_id':'t'}]}]"),
                     6);
    assert_int_equal(score("[{'role':'user','content':'x'}]"), 0);
    assert_int_equal(
        score("[{'role':'user','content':[{'type':'tool_result'}]},3]"), 0);
    assert_int_equal(score("[]"), 0);
    /* Other formats' shapes. */
    assert_int_equal(
        score("{'choices':[{'message':{'role':'assistant','tool_calls':[]}}]}"),
        0);
    assert_int_equal(
        score("{'role':'model','parts':[{'functionCall':{'name':'a'}}]}"), 0);
    assert_int_equal(score("{'id':'c1','tool':'t','args':{}}"), 0);
    assert_int_equal(score("'text'"), 0);
    assert_int_equal(score("null"), 0);
}

static void test_auto_picks_the_right_format(void **state)
{
    (void)state;
    assert_string_equal(detected("{'role':'assistant','content':[" TOOL_USE(
                            "t", "a", "{}") "]}"),
                        "anthropic");
    assert_string_equal(
        detected("[{'role':'user','content':'go'},{'role':'assistant','content'"
                 ":[" TOOL_USE("t", "a", "{}") "]}]"),
        "anthropic");
    /* Without tool blocks the shapes are ambiguous and no calls come out
     * either way; the older format keeps them. */
    assert_string_equal(
        detected(
            "{'role':'assistant','content':[{'type':'text','text':'hi'}]}"),
        "openai-chat");
    assert_string_equal(detected("[{'role':'user','content':'x'},{'role':'"
                                 "assistant','content':'y'}]"),
                        "openai-chat");
    assert_string_equal(
        detected("{'role':'assistant','content':null,'tool_calls':[]}"),
        "openai-chat");
    assert_string_equal(detected("{'role':'model','parts':[]}"), "gemini");
}

static void test_message_shapes(void **state)
{
    (void)state;
    const char *msg =
        "{'id':'msg_1','type':'message','role':'assistant','model':'m','"
        "content':["
        "{'type':'text','text':'Looking.'}," TOOL_USE(
            "toolu_a", "read_file",
            "{'path':'a'}") ","
                            "{'type':'server_tool_use','id':'srvtoolu_1','name'"
                            ":'web_search','input':{'query':'x'}},"
                            "{'type':'web_search_tool_result','tool_use_id':'"
                            "srvtoolu_1','content':[]},"
                            "{'type':'mcp_tool_use','id':'mcptoolu_1','name':'"
                            "x','server_name':'s','input':{}}," TOOL_USE(
                                "toolu_b", "grep",
                                "{'pattern':'x','n':3}") "],'stop_reason':'"
                                                         "tool_use'}";
    tg_turn *turn = tg_test_parse_ok_q(msg, "auto");
    assert_string_equal(tg_turn_format(turn), "anthropic");
    /* Server and MCP-connector tools run on Anthropic's side: not calls. */
    assert_int_equal(tg_turn_call_count(turn), 2);
    const tg_call *a = tg_turn_call(turn, 0);
    assert_string_equal(tg_call_id(a), "toolu_a");
    assert_string_equal(tg_call_tool(a), "read_file");
    assert_string_equal(tg_call_args_json(a), "{\"path\":\"a\"}");
    assert_null(tg_call_args_raw(a));
    assert_string_equal(tg_call_format(a), "anthropic");
    assert_int_equal(tg_call_index(tg_turn_call(turn, 1)), 1);
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 1)),
                        "{\"pattern\":\"x\",\"n\":3}");
    tg_turn_free(turn);

    /* The explicit name reads the same. */
    turn = tg_test_parse_ok_q(msg, "anthropic");
    assert_int_equal(tg_turn_call_count(turn), 2);
    tg_turn_free(turn);
}

static void test_empty_content(void **state)
{
    (void)state;
    tg_turn *turn =
        tg_test_parse_ok_q("{'role':'assistant','content':[]}", "anthropic");
    assert_int_equal(tg_turn_call_count(turn), 0);
    char *out = NULL;
    tg_error err;
    assert_int_equal(tg_turn_render(turn, NULL, &out, NULL, &err), 0);
    assert_string_equal(out, "{\"role\":\"user\",\"content\":[]}\n");
    tg_free(out);
    tg_turn_free(turn);

    turn = tg_test_parse_ok_q("{'role':'assistant','content':'Just text.'}",
                              "anthropic");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);
    turn = tg_test_parse_ok_q(
        "{'type':'message','role':'assistant','content':[{'type':'"
        "text','text':'done'}],'stop_reason':'end_turn'}",
        "auto");
    assert_string_equal(tg_turn_format(turn), "anthropic");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);
    turn = tg_test_parse_ok_q("[]", "anthropic");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);
}

static void test_per_block_problems(void **state)
{
    (void)state;
    tg_turn *turn = tg_test_parse_ok_q(
        "{'role':'assistant','content':["
        "{'type':'tool_use','name':'a','input':{}},"         /* 0 no id */
        "{'type':'tool_use','id':'','name':'a','input':{}}," /* 1 empty id */
        "{'type':'tool_use','id':'t2','input':{}},"          /* 2 no name */
        "{'type':'tool_use','id':'t3','name':7,'input':{}}," /* 3 bad name */
        "{'type':'tool_use','id':'t4','name':'a','input':'{}'}," /* 4 */
        "{'type':'tool_use','id':'t5','name':'a','input':[1]},"  /* 5 */
        "{'type':'tool_use','id':'t6','name':'a','input':5},"    /* 6 */
        "{'type':'tool_use','id':'t7','name':'a'},"              /* 7 */
        "{'type':'tool_use','id':'t8','name':'a','input':null}," /* 8 */
        "{'type':'tool_use','id':'t9','input':'x'},"             /* 9 */
        "'not a block', 5, {'no':'type'},"
        "{'type':'tool_use','id':'t10','name':'ok','input':{'y':1}}"
        "]}",
        "auto");
    assert_int_equal(tg_turn_call_count(turn), 11);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 0)), "missing-id-0");
    assert_string_equal(pre(turn, 0), "MALFORMED_CALL");
    assert_non_null(strstr(turn->calls[0]->pre_error_message, "no id"));
    assert_string_equal(tg_call_id(tg_turn_call(turn, 1)), "missing-id-1");
    assert_string_equal(pre(turn, 1), "MALFORMED_CALL");
    assert_string_equal(pre(turn, 2), "MALFORMED_CALL");
    assert_non_null(strstr(turn->calls[2]->pre_error_message, "no name"));
    assert_string_equal(pre(turn, 3), "MALFORMED_CALL");
    /* input that is not an object, even a string holding one */
    assert_string_equal(pre(turn, 4), "MALFORMED_ARGUMENTS");
    assert_non_null(strstr(turn->calls[4]->pre_error_message, "a string"));
    assert_string_equal(pre(turn, 5), "MALFORMED_ARGUMENTS");
    assert_non_null(strstr(turn->calls[5]->pre_error_message, "an array"));
    assert_string_equal(pre(turn, 6), "MALFORMED_ARGUMENTS");
    assert_null(tg_call_args_json(tg_turn_call(turn, 6)));
    /* no input, or null: a tool without parameters */
    assert_null(pre(turn, 7));
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 7)), "{}");
    assert_null(pre(turn, 8));
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 8)), "{}");
    /* a malformed call outranks its malformed input */
    assert_string_equal(pre(turn, 9), "MALFORMED_CALL");
    assert_null(pre(turn, 10));
    assert_string_equal(tg_call_id(tg_turn_call(turn, 10)), "t10");
    tg_turn_free(turn);
}

static void test_duplicates(void **state)
{
    (void)state;
    tg_turn *turn = tg_test_parse_ok_q(
        "{'role':'assistant','content':[" TOOL_USE("d", "a", "{}") "," TOOL_USE(
            "e", "a", "{}") "," TOOL_USE("d", "a", "{}") "]}",
        "auto");
    assert_null(pre(turn, 0));
    assert_null(pre(turn, 1));
    assert_string_equal(pre(turn, 2), "DUPLICATE_CALL_ID");
    tg_turn_free(turn);
}

static void test_messages_array(void **state)
{
    (void)state;
    const char *conv =
        "[{'role':'user','content':'go'},"
        "{'role':'assistant','content':[" TOOL_USE(
            "t_old", "a",
            "{}") "]},"
                  "{'role':'user','content':[{'type':'tool_result','tool_use_"
                  "id':'t_old','content':'x'}]},"
                  "{'role':'assistant','content':[{'type':'text','text':'more'}"
                  "," TOOL_USE("t1", "a", "{'n':1}") "," TOOL_USE(
                      "t2", "b",
                      "{'n':2}") "," TOOL_USE("t3", "c",
                                              "{'n':3}") "]},"
                                                         "{'role':'user','"
                                                         "content':[{'type':'"
                                                         "tool_result','tool_"
                                                         "use_id':'t2','"
                                                         "content':'done','is_"
                                                         "error':false}]},"
                                                         "{'role':'user','"
                                                         "content':'a plain "
                                                         "message'},"
                                                         "{'role':'user','"
                                                         "content':[{'type':'"
                                                         "text','text':'hm'},{'"
                                                         "type':'tool_result','"
                                                         "tool_use_id':'t3','"
                                                         "is_error':true,'"
                                                         "content':[{'type':'"
                                                         "text','text':'no'}]}]"
                                                         "}]";
    tg_turn *turn = tg_test_parse_ok_q(conv, "auto");
    assert_string_equal(tg_turn_format(turn), "anthropic");
    /* Only t1 is unanswered; t_old belongs to an earlier assistant turn. */
    assert_int_equal(tg_turn_call_count(turn), 1);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 0)), "t1");
    assert_int_equal(tg_call_index(tg_turn_call(turn, 0)), 0);
    tg_turn_free(turn);

    /* No assistant message yet, or every call answered: no calls. */
    turn = tg_test_parse_ok_q(
        "[{'role':'user','content':[{'type':'tool_result','tool_"
        "use_id':'x','content':'y'}]}]",
        "auto");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);
    turn = tg_test_parse_ok_q(
        "[{'role':'assistant','content':[" TOOL_USE(
            "t1", "a", "{}") "]},{'role':'user','content':[{'type':"
                             "'tool_result','tool_use_id':'t1'}]}]",
        "auto");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);
    /* A last assistant message that is plain text. */
    turn = tg_test_parse_ok_q(
        "[{'role':'assistant','content':[" TOOL_USE(
            "t1", "a",
            "{}") "]},{'role':'user','content':[{'type':'tool_result','tool_"
                  "use_id':'t1'}]},{'role':'assistant','content':'All done.'}]",
        "auto");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);
}

static void test_shape_errors(void **state)
{
    (void)state;
    tg_error err;
    /* A string where a message belongs. */
    assert_int_equal(tg_test_parse_fails_q("'hello'", "anthropic", &err),
                     TG_EFORMAT);
    assert_non_null(strstr(
        err.message, "in.json: the document is not an object or an array"));
    assert_non_null(strstr(err.message, "expected an Anthropic Messages API"));
    assert_string_equal(err.pointer, "");
    assert_int_equal(tg_test_parse_fails_q("'hello'", "auto", &err),
                     TG_EFORMAT);
    assert_non_null(strstr(err.message, "saw a string"));
    assert_int_equal(tg_test_parse_fails_q("42", "anthropic", &err),
                     TG_EFORMAT);

    assert_int_equal(tg_test_parse_fails_q("{'role':'user','content':[]}",
                                           "anthropic", &err),
                     TG_EFORMAT);
    assert_non_null(strstr(err.message, "role 'user'"));
    assert_string_equal(err.pointer, "/role");
    assert_int_equal(
        tg_test_parse_fails_q("{'type':'error','error':{'type':'overloaded_"
                              "error','message':'Overloaded'}}",
                              "anthropic", &err),
        TG_EFORMAT);
    assert_non_null(strstr(
        err.message, "Anthropic API error (overloaded_error: Overloaded)"));
    assert_int_equal(tg_test_parse_fails_q("{'type':'completion','content':[]}",
                                           "anthropic", &err),
                     TG_EFORMAT);
    assert_string_equal(err.pointer, "/type");
    assert_int_equal(
        tg_test_parse_fails_q("{'role':'assistant'}", "anthropic", &err),
        TG_EFORMAT);
    assert_non_null(strstr(err.message, "without content"));
    assert_int_equal(tg_test_parse_fails_q("{'role':'assistant','content':{}}",
                                           "anthropic", &err),
                     TG_EFORMAT);
    assert_string_equal(err.pointer, "/content");
    assert_int_equal(tg_test_parse_fails_q("[{'role':'user','content':'x'},7]",
                                           "anthropic", &err),
                     TG_EFORMAT);
    assert_string_equal(err.pointer, "/1");
    assert_non_null(strstr(err.message, "messages[1] is not a message"));
    assert_int_equal(tg_test_parse_fails_q("[{'role':'assistant','content':5}]",
                                           "anthropic", &err),
                     TG_EFORMAT);
    assert_string_equal(err.pointer, "/0/content");
}

static void set_result(tg_turn *turn, size_t i, tg_result *r)
{
    assert_non_null(r);
    assert_int_equal(tg__turn_set_result(turn, i, r), 0);
}

static json_t *load(const char *text)
{
    char *s = tg_test_quotes(text);
    json_error_t jerr;
    json_t *v = json_loads(s, 0, &jerr); /* new ref */
    if (v == NULL)
        fail_msg("bad test JSON: %s: %s", jerr.text, s);
    free(s);
    return v;
}

static void test_render_outcomes(void **state)
{
    (void)state;
    tg_turn *turn = tg_test_parse_ok_q(
        "{'role':'assistant','content':[" TOOL_USE("t0", "a", "{}") "," TOOL_USE(
            "t1", "b",
            "{}") "," TOOL_USE("t2", "c",
                               "{}") "," TOOL_USE("t3", "d",
                                                  "{}") "," TOOL_USE("t4", "e",
                                                                     "{}") "," TOOL_USE("t5",
                                                                                        "f",
                                                                                        "{}") "]}",
        "auto");
    set_result(
        turn, 0,
        tg__result_success(turn->calls[0], json_string("plain \"text\"\n")));
    set_result(
        turn, 1,
        tg__result_success(turn->calls[1], json_pack("{s:[i,n]}", "v", 1)));
    set_result(turn, 2,
               tg__result_error(turn->calls[2], TG_EXECUTION_FINISHED,
                                "TOOL_FAILED", NULL, "it broke"));
    set_result(turn, 3,
               tg__result_canceled(turn->calls[3], TG_EXECUTION_STARTED,
                                   "system", "shutting down"));
    set_result(turn, 4, tg__result_timeout(turn->calls[4], 250));
    set_result(turn, 5, tg__result_denied(turn->calls[5], "policy says no"));
    char *out = NULL;
    size_t len = 0;
    tg_error err;
    assert_int_equal(tg_turn_render(turn, "auto", &out, &len, &err), 0);
    assert_int_equal(strlen(out), len);
    json_t *got = load(out); /* new ref */
    json_t *want = load(
        "{'role':'user','content':["
        "{'type':'tool_result','tool_use_id':'t0','content':'plain "
        "\\'text\\'\\n','is_error':false},"
        "{'type':'tool_result','tool_use_id':'t1','content':'{\\'v\\':[1,null]}"
        "','is_error':false},"
        "{'type':'tool_result','tool_use_id':'t2','content':'{\\'error\\':{\\'"
        "message\\':\\'it "
        "broke\\',\\'code\\':\\'TOOL_FAILED\\'}}','is_error':true},"
        "{'type':'tool_result','tool_use_id':'t3','content':'{\\'canceled\\':{"
        "\\'reason\\':\\'shutting "
        "down\\',\\'by\\':\\'system\\'}}','is_error':true},"
        "{'type':'tool_result','tool_use_id':'t4','content':'{\\'timeout\\':{"
        "\\'durationMs\\':250}}','is_error':true},"
        "{'type':'tool_result','tool_use_id':'t5','content':'{\\'denied\\':{\\'"
        "tool\\':\\'f\\',\\'reason\\':\\'policy says no\\'}}','is_error':true}"
        "]}"); /* new ref */
    if (!json_equal(got, want))
        fail_msg("rendered:\n%s", out);
    json_decref(got);
    json_decref(want);
    tg_free(out);
    tg_turn_free(turn);
}

/* Results made from their payload's text render byte for byte as those
 * made from the value, with and without content blocks. */
static void test_render_payload_text(void **state)
{
    (void)state;
    static const char *const texts[] = {"{\"n\":[1,2],\"s\":\"\xc3\xa9\\n\"}",
                                        "\"a \\\"quoted\\\" text\"", "[]", "42",
                                        "null"};
    for (int blocks = 0; blocks < 2; blocks++)
        for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
            const char *doc = "{'content':[" TOOL_USE(
                "t0", "a", "{}") "," TOOL_USE("t1", "b", "{}") "]}";
            tg_turn *t1 = tg_test_parse_ok_q(doc, "auto"),
                    *t2 = tg_test_parse_ok_q(doc, "auto");
            for (size_t i = 0; i < 2; i++) {
                json_error_t jerr;
                tg_result *r1 = tg__result_success_text(t1->calls[i], texts[k],
                                                        strlen(texts[k]));
                tg_result *r2 = tg__result_success(
                    t2->calls[i], json_loads(texts[k], JSON_DECODE_ANY, &jerr));
                assert_non_null(r1);
                assert_non_null(r2);
                if (blocks) {
                    r1->content = json_pack("[{s:s, s:s}]", "type", "text",
                                            "text", "block");
                    r2->content = json_incref(r1->content);
                }
                set_result(t1, i, r1);
                set_result(t2, i, r2);
            }
            char *o1 = NULL, *o2 = NULL;
            size_t n1 = 0, n2 = 0;
            tg_error err;
            assert_int_equal(tg_turn_render(t1, "auto", &o1, &n1, &err), 0);
            assert_int_equal(tg_turn_render(t2, "auto", &o2, &n2, &err), 0);
            assert_string_equal(o1, o2);
            if (!blocks && k == 0)
                assert_non_null(strstr(o1, "\"content\":\"{\\\"n\\\":[1,2],"));
            tg_free(o1);
            tg_free(o2);
            tg_turn_free(t1);
            tg_turn_free(t2);
        }
}

static void test_render_content_blocks(void **state)
{
    (void)state;
    tg_turn *turn = tg_test_parse_ok_q(
        "{'role':'assistant','content':[" TOOL_USE(
            "t0", "a", "{}") "," TOOL_USE("t1", "b",
                                          "{}") "," TOOL_USE("t2", "c",
                                                             "{}") "]}",
        "auto");
    tg_result *r = tg__result_success(turn->calls[0], json_string("fallback"));
    /* Only empty text blocks: the payload's text is sent instead. */
    r->content = load("[{'type':'text','text':''}]");
    set_result(turn, 0, r);
    r = tg__result_success(turn->calls[1], json_string("x"));
    /* An image without data, and one of a type the API refuses, are
     * described; MCP annotations and _meta do not leak. */
    r->content =
        load("[{'type':'image','mimeType':'image/png'},"
             "{'type':'image','data':'AAAA','mimeType':'image/bmp'},"
             "{'type':'image','data':'AAAA','mimeType':'image/"
             "webp','_meta':{'k':1}},"
             "{'type':'text','text':'caption','annotations':{'priority':1}}]");
    set_result(turn, 1, r);
    r = tg__result_timeout(turn->calls[2], 5);
    r->content = load("[]");
    set_result(turn, 2, r);
    char *out = NULL;
    tg_error err;
    assert_int_equal(tg_turn_render(turn, "anthropic", &out, NULL, &err), 0);
    json_t *got = load(out); /* new ref */
    json_t *want = load("{'role':'user','content':["
                        "{'type':'tool_result','tool_use_id':'t0','content':'"
                        "fallback','is_error':false},"
                        "{'type':'tool_result','tool_use_id':'t1','content':["
                        "{'type':'text','text':'[image: image/png]'},"
                        "{'type':'text','text':'[image: image/bmp, 3 bytes; "
                        "not shown: this format cannot carry images]'},"
                        "{'type':'image','source':{'type':'base64','media_type'"
                        ":'image/webp','data':'AAAA'}},"
                        "{'type':'text','text':'caption'}],'is_error':false},"
                        "{'type':'tool_result','tool_use_id':'t2','content':'{"
                        "\\'timeout\\':{\\'durationMs\\':5}}','is_error':true}"
                        "]}"); /* new ref */
    if (!json_equal(got, want))
        fail_msg("rendered:\n%s", out);
    json_decref(got);
    json_decref(want);
    tg_free(out);
    tg_turn_free(turn);
}

/* The rendered results, appended to the conversation they answer, leave no
 * call unanswered: ids travel unchanged. Also through another format. */
static void test_round_trip(void **state)
{
    (void)state;
    const char *conv =
        "[{'role':'user','content':'go'},{'role':'assistant','content':"
        "[" TOOL_USE("toolu_01X", "a", "{'p':1}") "," TOOL_USE("toolu_01Y", "b",
                                                               "{}") "]}]";
    tg_turn *turn = tg_test_parse_ok_q(conv, "auto");
    assert_int_equal(tg_turn_call_count(turn), 2);
    set_result(turn, 0, tg__result_success(turn->calls[0], json_string("ok")));
    set_result(turn, 1, tg__result_timeout(turn->calls[1], 9));
    char *out = NULL;
    tg_error err;
    assert_int_equal(tg_turn_render(turn, NULL, &out, NULL, &err), 0);

    char *c = tg_test_quotes(conv);
    size_t n = strlen(c);
    size_t m = strlen(out);
    char *next = malloc(n + m + 2);
    assert_non_null(next);
    memcpy(next, c, n - 1); /* without the closing bracket */
    next[n - 1] = ',';
    memcpy(next + n, out, m);
    memcpy(next + n + m, "]", 2);
    tg_turn *again = NULL;
    assert_int_equal(
        tg_turn_parse(next, strlen(next), "auto", NULL, &again, &err), 0);
    assert_string_equal(tg_turn_format(again), "anthropic");
    assert_int_equal(tg_turn_call_count(again), 0);
    tg_turn_free(again);
    free(next);
    free(c);
    tg_free(out);

    /* Into openai-chat and back out of the journal's record: same ids. */
    assert_int_equal(tg_turn_render(turn, "openai-chat", &out, NULL, &err), 0);
    assert_non_null(strstr(out, "\"tool_call_id\":\"toolu_01X\""));
    assert_non_null(strstr(out, "\"tool_call_id\":\"toolu_01Y\""));
    tg_free(out);
    tg_turn_free(turn);

    /* Calls read from another format render here with their ids. */
    turn = tg_test_parse_ok_q(
        "{'role':'assistant','tool_calls':[{'id':'call_9','type':'"
        "function','function':{'name':'x','arguments':'{}'}}]}",
        "auto");
    set_result(turn, 0, tg__result_success(turn->calls[0], json_integer(1)));
    assert_int_equal(tg_turn_render(turn, "anthropic", &out, NULL, &err), 0);
    assert_string_equal(
        out, "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_"
             "use_id\":\"call_9\",\"content\":\"1\",\"is_error\":false}]}\n");
    tg_free(out);
    tg_turn_free(turn);
}

static void test_render_tools(void **state)
{
    (void)state;
    json_t *tools = load(
        "[{'name':'read_file','description':'Read a "
        "file.','input_schema':{'type':'object','properties':{'path':{'type':'"
        "string'}},'required':['path']},'annotations':{'readOnlyHint':true}},"
        "{'name':'now'}]"); /* new ref */
    tg__buf b;
    tg__buf_init(&b, 0);
    tg_error err;
    assert_int_equal(tg__format_anthropic.render_tools(tools, &b, &err), 0);
    json_t *got = load(tg__buf_cstr(&b)); /* new ref */
    json_t *want =
        load("[{'name':'read_file','description':'Read a "
             "file.','input_schema':{'type':'object','properties':{'path':{'"
             "type':'string'}},'required':['path']}},"
             "{'name':'now','input_schema':{'type':'object'}}]"); /* new ref */
    if (!json_equal(got, want))
        fail_msg("rendered:\n%s", tg__buf_cstr(&b));
    assert_int_equal(b.data[b.len - 1], '\n');
    json_decref(got);
    json_decref(want);
    json_decref(tools);

    tools = load("[{'description':'no name'}]");
    assert_int_equal(tg__format_anthropic.render_tools(tools, &b, &err),
                     TG_EINVAL);
    assert_non_null(strstr(err.message, "tool definition 0 has no name"));
    json_decref(tools);
    tools = json_object();
    assert_int_equal(tg__format_anthropic.render_tools(tools, &b, &err),
                     TG_EINVAL);
    json_decref(tools);
    tg__buf_cleanup(&b);
}

/* The fast path's answer for text (after tg_test_quotes()): 1 taken, 0 refused.
 */
static int fast_takes(const char *text)
{
    char *s = tg_test_quotes(text);
    tg_turn *t = tg__turn_new("anthropic");
    assert_non_null(t);
    int rc = tg__format_anthropic.parse_fast(t, s, strlen(s));
    tg_turn_free(t);
    free(s);
    return rc;
}

/* Takes text (after tg_test_quotes()) on the fast path and checks it read the
 * same calls as the document path; returns the fast path's turn. */
static tg_turn *fast_same(const char *text)
{
    char *s = tg_test_quotes(text);
    tg_turn *fast = NULL;
    if (tg_test_fast_vs_doc(&tg__format_anthropic, s, &fast) != 1)
        fail_msg("fast path refused %s", s);
    for (size_t i = 0; i < fast->n; i++)
        assert_null(tg__call_meta(fast->calls[i]));
    free(s);
    return fast;
}

/* The fast path reads Messages API responses whose inputs are compact (as
 * the API sends them) and steps aside for everything else; the answers are
 * always those of the document path. */
static void test_fast_path(void **state)
{
    (void)state;
    tg_turn *turn = fast_same(
        "{'id':'msg_1','type':'message','role':'assistant','"
        "model':'m',"
        "'content':[{'type':'thinking','thinking':'hm','"
        "signature':'s'},"
        "{'type':'text','text':'I will "
        "\\u0041sk.','citations':null},"
        "" TOOL_USE("toolu_1", "read_file",
                    "{'path':'a \\'b\\' \\\\ "
                    "}{][','n':[1,-2,{'x':null}]}") ","
                                                    "{'input':{'k':'v'},'"
                                                    "name':'web_search','"
                                                    "id':'srv_1','type':"
                                                    "'server_tool_use'},"
                                                    "{'type':'web_search_"
                                                    "tool_result','tool_"
                                                    "use_id':'srv_1','"
                                                    "content':[]},"
                                                    "{'id':'toolu_2','"
                                                    "name':'now','type':'"
                                                    "tool_use'},"
                                                    "{'type':'tool_use','"
                                                    "id':'toolu_\\u00e9',"
                                                    "'name':'t','input':"
                                                    "null},"
                                                    "{'type':'tool_use','"
                                                    "id':'toolu_3','name'"
                                                    ":'big','input':{'s':"
                                                    "'caf"
                                                    "\xc3\xa9','e':{}}}],"
                                                    "'stop_reason':'tool_"
                                                    "use','stop_sequence'"
                                                    ":null,'usage':{"
                                                    "'input_tokens':1,'"
                                                    "server_tool_use':{'"
                                                    "web_search_requests'"
                                                    ":1}},"
                                                    "'container':null}");
    assert_int_equal(tg_turn_call_count(turn), 4);
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 0)),
                        "{\"path\":\"a \\\"b\\\" \\\\ }{][\",\"n\":[1,-2,{"
                        "\"x\":null}]}");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 1)), "{}");
    assert_string_equal(tg_call_id(tg_turn_call(turn, 2)), "toolu_\xc3\xa9");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 2)), "{}");
    assert_null(tg_call_args_raw(tg_turn_call(turn, 3)));
    tg_turn_free(turn);

    /* Without type or role; a message without calls that says it stopped;
     * white space between the members the fast path reads. */
    turn = fast_same("{'content':[" TOOL_USE("t", "a", "{'x':1}") "]}");
    assert_int_equal(tg_turn_call_count(turn), 1);
    tg_turn_free(turn);
    turn =
        fast_same(" {\n 'type' : 'message', 'content' : [ {'type': "
                  "'text', 'text': 'done'} ], 'stop_reason': 'end_turn' }\n");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);

    static const char *const bails[] = {
        /* inputs not in compact form */
        "{'content':[" TOOL_USE("t", "a", "{ 'x':1}") "]}",
        "{'content':[" TOOL_USE("t", "a", "{'x':1.5}") "]}",
        "{'content':[" TOOL_USE("t", "a", "{'x':'\\u00e9'}") "]}",
        "{'content':[" TOOL_USE("t", "a", "{'x':1,'x':2}") "]}",
        /* not valid inside the input, or not closed */
        "{'content':[" TOOL_USE("t", "a", "{'x':01}") "]}",
        "{'content':[" TOOL_USE("t", "a", "{'x':'\\u0000'}") "]}",
        "{'content':[" TOOL_USE("t", "a", "{'x':[}") "]}",
        "{'content':[" TOOL_USE("t", "a", "{'x':'}") "]}",
        "{'content':[{'type':'text','input':{'x':01}}],'type':'message',"
        "'stop_reason':null}",
        "{'content':[{'type':'tool_use','id':'t','name':'a','input':{'x':"
        "99999999999999999999}}]}",
        /* duplicate keys on the path read */
        "{'content':[],'content':[" TOOL_USE("t", "a", "{}") "]}",
        "{'content':[{'type':'text','type':'tool_use','id':'t','name':'a',"
        "'input':{}}]}",
        "{'content':[{'type':'tool_use','id':'t','id':'u','name':'a',"
        "'input':{}}]}",
        "{'content':[{'type':'tool_use','id':'t','name':'a','input':{},"
        "'input':{}}]}",
        "{'type':'message','type':'message','content':[" TOOL_USE("t", "a",
                                                                  "{}") "]}",
        /* per-call problems, left to the document path */
        "{'content':[{'type':'tool_use','name':'a','input':{}}]}",
        "{'content':[{'type':'tool_use','id':'','name':'a','input':{}}]}",
        "{'content':[{'type':'tool_use','id':'t','input':{}}]}",
        "{'content':[{'type':'tool_use','id':'t','name':'','input':{}}]}",
        "{'content':[{'type':'tool_use','id':'t','name':'a','input':'{}'}]}",
        "{'content':[{'type':'tool_use','id':'t','name':'a','input':[]}]}",
        "{'content':[{'type':'tool_use','id':7,'name':'a','input':{}}]}",
        /* shapes detection does not give it, or parse refuses */
        "{'role':'assistant','content':[{'type':'text','text':'hi'}]}",
        "{'type':'message','content':[{'type':'text','text':'hi'}]}",
        "{'role':'user','content':[" TOOL_USE("t", "a", "{}") "]}",
        "{'type':'error','content':[" TOOL_USE("t", "a", "{}") "]}",
        "{'type':'message','role':'assistant','content':'hi',"
        "'stop_reason':'end_turn'}",
        "{'content':[7," TOOL_USE("t", "a", "{}") "]}",
        "{'content':null}",
        "[{'role':'assistant','content':[" TOOL_USE("t", "a", "{}") "]}]",
        /* members of other formats, unknown containers */
        "{'content':[" TOOL_USE("t", "a", "{}") "],'parts':[]}",
        "{'candidates':1,'content':[" TOOL_USE("t", "a", "{}") "]}",
        "{'content':[" TOOL_USE("t", "a", "{}") "],'method':'tools/call'}",
        "{'content':[" TOOL_USE("t", "a", "{}") "],'extra':{}}",
        /* not plain JSON */
        "{'content':[" TOOL_USE("t", "a", "{}") "]} x",
        "{'content':[" TOOL_USE("t", "a", "{}") "]",
        "{'content':[" TOOL_USE("t", "a", "{}") "],'n':1e999}",
    };
    for (size_t i = 0; i < sizeof bails / sizeof bails[0]; i++)
        if (fast_takes(bails[i]) != 0)
            fail_msg("fast path took %s", bails[i]);

    /* What the document path makes of some of them. */
    turn = tg_test_parse_ok_q(bails[0], "auto");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 0)), "{\"x\":1}");
    tg_turn_free(turn);
    turn = tg_test_parse_ok_q(bails[3], "auto");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 0)), "{\"x\":2}");
    tg_turn_free(turn);
    turn = tg_test_parse_ok_q(bails[11], "auto");
    assert_int_equal(tg_turn_call_count(turn), 1);
    tg_turn_free(turn);
    turn = tg_test_parse_ok_q(bails[15], "auto");
    assert_string_equal(pre(turn, 0), "MALFORMED_CALL");
    tg_turn_free(turn);
    turn = tg_test_parse_ok_q(bails[19], "auto");
    assert_string_equal(pre(turn, 0), "MALFORMED_ARGUMENTS");
    tg_turn_free(turn);
    assert_string_equal(detected(bails[22]), "openai-chat");
    tg_error err;
    assert_int_equal(tg_test_parse_fails_q(bails[4], "auto", &err), TG_EPARSE);
    assert_int_equal(tg_test_parse_fails_q(bails[25], "auto", &err),
                     TG_EFORMAT);
    assert_int_equal(tg_test_parse_fails_q(bails[35], "auto", &err), TG_EPARSE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_auto_picks_the_right_format),
        cmocka_unit_test(test_message_shapes),
        cmocka_unit_test(test_empty_content),
        cmocka_unit_test(test_per_block_problems),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_messages_array),
        cmocka_unit_test(test_shape_errors),
        cmocka_unit_test(test_render_outcomes),
        cmocka_unit_test(test_render_payload_text),
        cmocka_unit_test(test_render_content_blocks),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_render_tools),
        cmocka_unit_test(test_fast_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
