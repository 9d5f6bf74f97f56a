/* SPDX-License-Identifier: MIT */
/*
 * test_gemini.c - the gemini format (generateContent): detection against the
 * other formats' shapes, responses, contents and contents arrays (answers
 * matched by id, else by name in order), the deterministic ids of calls
 * without one (checked against an independent SHA-256), per-call problems,
 * shape errors, rendering of every outcome with "id" only where the call
 * had one, tool definitions, round trips, and the fast path (what it takes
 * gives the document path's calls; what it must leave to that path).
 *
 * JSON in this file is written with single quotes for readability;
 * tg_test_quotes() turns them into double quotes (no test text contains an
 * apostrophe).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "record.h"
#include "tg_fast_check.h"
#include "turn.h"

static json_t *load(const char *text)
{
    char *s = tg_test_quotes(text);
    json_error_t jerr;
    json_t *v = json_loads(s, JSON_DECODE_ANY, &jerr); /* new ref */
    if (v == NULL)
        fail_msg("bad test JSON: %s: %s", jerr.text, s);
    free(s);
    return v;
}

static int score(const char *text)
{
    json_t *doc = load(text); /* new ref */
    int sc = tg__format_gemini.detect(doc);
    json_decref(doc);
    return sc;
}

static const char *detected(const char *text)
{
    tg_turn *turn = tg_test_parse_ok_q(text, "auto");
    const char *f = tg_turn_format(turn); /* static */
    tg_turn_free(turn);
    return f;
}

static const char *pre(const tg_turn *turn, size_t i)
{
    return turn->calls[i]->pre_error_code;
}

static const char *id(const tg_turn *turn, size_t i)
{
    return tg_call_id(tg_turn_call(turn, i));
}

#define FC(name, args) "{'functionCall':{'name':'" name "','args':" args "}}"
#define FCID(id, name, args)                                                   \
    "{'functionCall':{'id':'" id "','name':'" name "','args':" args "}}"
#define FR(name) "{'functionResponse':{'name':'" name "','response':{}}}"
#define FRID(id, name)                                                         \
    "{'functionResponse':{'id':'" id "','name':'" name "','response':{}}}"

static void test_detect(void **state)
{
    (void)state;
    assert_int_equal(
        score("{'candidates':[{'content':{'role':'model','parts':[" FC(
            "a", "{}") "]}}]}"),
        6);
    assert_int_equal(score("{'candidates':[]}"), 6);
    assert_int_equal(score("{'candidates':5}"), 1);
    assert_int_equal(score("{'role':'model','parts':[" FC("a", "{}") "]}"), 6);
    assert_int_equal(score("{'parts':[]}"), 6);
    assert_int_equal(score("{'role':'user','parts':[]}"), 2);
    assert_int_equal(score("{'role':'model','parts':'x'}"), 1);
    assert_int_equal(score("[{'role':'user','parts':[{'text':'hi'}]},{'role':'"
                           "model','parts':[]}]"),
                     6);
    assert_int_equal(
        score("[{'role':'user','parts':[]},{'role':'model','content':'x'}]"),
        0);
    assert_int_equal(score("[]"), 0);
    /* Other formats' shapes. */
    assert_int_equal(score("{'choices':[{'message':{'role':'assistant'}}]}"),
                     0);
    assert_int_equal(score("{'role':'assistant','content':[]}"), 0);
    assert_int_equal(score("[{'role':'user','content':'x'}]"), 0);
    assert_int_equal(score("{'id':'c1','tool':'t'}"), 0);
    assert_int_equal(score("'parts'"), 0);
    assert_int_equal(score("null"), 0);
}

static void test_auto_picks_the_right_format(void **state)
{
    (void)state;
    assert_string_equal(
        detected("{'candidates':[{'content':{'role':'model','parts':[" FC(
            "a", "{}") "]}}]}"),
        "gemini");
    assert_string_equal(detected("[{'role':'user','parts':[{'text':'hi'}]},{'"
                                 "role':'model','parts':[" FC("a", "{}") "]}]"),
                        "gemini");
    assert_string_equal(detected("{'role':'model','parts':[]}"), "gemini");
    assert_string_equal(detected("[{'role':'user','content':'x'},{'role':'"
                                 "assistant','content':'y'}]"),
                        "openai-chat");
    assert_string_equal(detected("{'role':'assistant','content':[{'type':'tool_"
                                 "use','id':'t','name':'a','input':{}}]}"),
                        "anthropic");
}

static void test_response_and_content(void **state)
{
    (void)state;
    const char *resp =
        "{'candidates':[{'content':{'role':'model','parts':[{'text':'Checking.'"
        "}," FCID(
            "fc_1", "read_file",
            "{'path':'a'}") ","
                            "{'functionCall':{'id':'fc_2','name':'now'},'"
                            "thoughtSignature':'abc'},"
                            "{'executableCode':{'language':'PYTHON','code':'1'}"
                            "}"
                            "]},'finishReason':'STOP'},{'content':{'role':'"
                            "model','parts':[" FC(
                                "ignored",
                                "{}") "]}}],"
                                      "'modelVersion':'gemini-2.5-flash'}";
    tg_turn *turn = tg_test_parse_ok_q(resp, "auto");
    assert_string_equal(tg_turn_format(turn), "gemini");
    /* Only the first candidate is read. */
    assert_int_equal(tg_turn_call_count(turn), 2);
    assert_string_equal(id(turn, 0), "fc_1");
    assert_string_equal(tg_call_tool(tg_turn_call(turn, 0)), "read_file");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 0)),
                        "{\"path\":\"a\"}");
    assert_null(tg_call_args_raw(tg_turn_call(turn, 0)));
    assert_null(tg__call_meta(turn->calls[0]));
    /* No args: a function without parameters. */
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 1)), "{}");
    assert_null(pre(turn, 1));
    tg_turn_free(turn);

    turn = tg_test_parse_ok_q(
        "{'role':'model','parts':[" FCID("x", "a", "{'n':1}") "]}", "gemini");
    assert_int_equal(tg_turn_call_count(turn), 1);
    assert_string_equal(id(turn, 0), "x");
    tg_turn_free(turn);
}

static void test_empty(void **state)
{
    (void)state;
    static const char *const none[] = {
        "{'role':'model','parts':[]}",
        "{'parts':[{'text':'Just words.'}]}",
        "{'role':'model'}",
        "{'candidates':[{'finishReason':'SAFETY'}]}",
        "{'candidates':[{'content':{'role':'model'},'finishReason':'MAX_TOKENS'"
        "}]}",
        "{'candidates':[{'content':null}]}",
        "[{'role':'user','parts':[{'text':'hi'}]}]",
        "[]",
    };
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        tg_turn *turn = tg_test_parse_ok_q(none[i], "gemini");
        assert_int_equal(tg_turn_call_count(turn), 0);
        char *out = NULL;
        tg_error err;
        assert_int_equal(tg_turn_render(turn, NULL, &out, NULL, &err), 0);
        assert_string_equal(out, "{\"role\":\"user\",\"parts\":[]}\n");
        tg_free(out);
        tg_turn_free(turn);
    }
}

/* gemini-<first 8 hex of SHA-256 of the compact dump>-<k>, computed here
 * independently of the parser. */
static void expected_id(const char *doc_text, size_t k, char *out, size_t size)
{
    json_t *doc = load(doc_text); /* new ref */
    char *compact = json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY);
    assert_non_null(compact);
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)compact, strlen(compact), md);
    snprintf(out, size, "gemini-%02x%02x%02x%02x-%zu", md[0], md[1], md[2],
             md[3], k);
    free(compact);
    json_decref(doc);
}

static void test_ids_without_id(void **state)
{
    (void)state;
    const char *doc = "{'candidates':[{'content':{'role':'model','parts':[" FC(
        "a", "{'p':1}") ",{'text':'x'}," FCID("given", "b",
                                              "{}") ","
                                                    "{'functionCall':{'id':'','"
                                                    "name':'c'}}," FC(
                                                        "a", "{'p':1}") "]}}]}";
    tg_turn *turn = tg_test_parse_ok_q(doc, "auto");
    assert_int_equal(tg_turn_call_count(turn), 4);
    char want[64];
    expected_id(doc, 0, want, sizeof want);
    assert_string_equal(id(turn, 0), want);
    assert_string_equal(id(turn, 1), "given");
    /* An empty id is no id. k counts the content's calls. */
    expected_id(doc, 2, want, sizeof want);
    assert_string_equal(id(turn, 2), want);
    expected_id(doc, 3, want, sizeof want);
    assert_string_equal(id(turn, 3), want);
    /* Same calls, same arguments: still distinct ids, no duplicate error. */
    assert_null(pre(turn, 3));
    assert_true(json_is_true(
        json_object_get(tg__call_meta(turn->calls[0]), "id_generated")));
    assert_null(tg__call_meta(turn->calls[1]));

    /* The same document, laid out differently: the same ids. */
    char *spaced = tg_test_quotes(
        "{ 'candidates' : [ { 'content' : { 'role' : 'model' , 'parts' : "
        "[\n" FC("a", "{ 'p' : 1 }") ", {'text':'x'},\n" FCID(
            "given", "b", "{}") ",{'functionCall':{'id':'','name':'c'}}"
                                "," FC("a", "{'p':1}") " ] } } ] }");
    tg_turn *again = NULL;
    tg_error err;
    assert_int_equal(
        tg_turn_parse(spaced, strlen(spaced), "auto", NULL, &again, &err), 0);
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(id(again, i), id(turn, i));
    tg_turn_free(again);
    free(spaced);

    /* A different document (another response): different ids. */
    again = tg_test_parse_ok_q(
        "{'candidates':[{'content':{'role':'model','parts':[" FC(
            "a", "{'p':2}") "]}}]}",
        "auto");
    assert_string_not_equal(id(again, 0), id(turn, 0));
    tg_turn_free(again);
    tg_turn_free(turn);
}

static void test_per_call_problems(void **state)
{
    (void)state;
    tg_turn *turn = tg_test_parse_ok_q(
        "{'role':'model','parts':["
        "{'functionCall':{'id':'f0','args':{}}},"           /* 0 no name */
        "{'functionCall':{'id':'f1','name':'','args':{}}}," /* 1 empty name */
        "{'functionCall':{'id':'f2','name':'a','args':'{}'}}," /* 2 */
        "{'functionCall':{'id':'f3','name':'a','args':[1]}},"  /* 3 */
        "{'functionCall':{'id':'f4','name':'a','args':true}}," /* 4 */
        "{'functionCall':{'id':'f5','name':'a','args':null}}," /* 5 */
        "{'functionCall':'a'},"                                /* 6 */
        "{'functionCall':{'id':'f7','args':3}},"               /* 7 */
        "'a string part', {'text':'t'},"
        "{'functionCall':{'id':'f8','name':'ok','args':{'y':1}}}"
        "]}",
        "auto");
    assert_int_equal(tg_turn_call_count(turn), 9);
    assert_string_equal(pre(turn, 0), "MALFORMED_CALL");
    assert_non_null(strstr(turn->calls[0]->pre_error_message, "no name"));
    assert_string_equal(pre(turn, 1), "MALFORMED_CALL");
    assert_string_equal(pre(turn, 2), "MALFORMED_ARGUMENTS");
    assert_non_null(strstr(turn->calls[2]->pre_error_message, "a string"));
    assert_string_equal(pre(turn, 3), "MALFORMED_ARGUMENTS");
    assert_string_equal(pre(turn, 4), "MALFORMED_ARGUMENTS");
    assert_null(tg_call_args_json(tg_turn_call(turn, 4)));
    assert_null(pre(turn, 5));
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 5)), "{}");
    assert_string_equal(pre(turn, 6), "MALFORMED_CALL");
    assert_non_null(strstr(turn->calls[6]->pre_error_message,
                           "parts[6].functionCall is not an object"));
    assert_true(strncmp(id(turn, 6), "gemini-", 7) == 0);
    /* a malformed call outranks its malformed args */
    assert_string_equal(pre(turn, 7), "MALFORMED_CALL");
    assert_null(pre(turn, 8));
    assert_string_equal(id(turn, 8), "f8");
    tg_turn_free(turn);

    turn = tg_test_parse_ok_q(
        "{'role':'model','parts':[" FCID("d", "a", "{}") "," FCID(
            "e", "a", "{}") "," FCID("d", "a", "{}") "]}",
        "auto");
    assert_null(pre(turn, 0));
    assert_null(pre(turn, 1));
    assert_string_equal(pre(turn, 2), "DUPLICATE_CALL_ID");
    tg_turn_free(turn);
}

static void test_contents_array(void **state)
{
    (void)state;
    /* Names in order: two responses named a answer the first two a calls;
     * ids answer their own call wherever they are. */
    tg_turn *turn = tg_test_parse_ok_q(
        "[{'role':'user','parts':[{'text':'go'}]},"
        "{'role':'model','parts':[" FC(
            "old",
            "{}") "]},"
                  "{'role':'user','parts':[" FR(
                      "old") "]},"
                             "{'role':'model','parts':[" FC("a", "{'n':0}") "," FC("b", "{'n':1}") "," FC("a", "{'n':2}") "," FC("a", "{'n':3}") "," FCID("id4", "c", "{'n':4}") "," FCID(
                                 "id5", "c",
                                 "{'n':5}") "," FCID("id6", "d",
                                                     "{'n':6}") "," FC("old",
                                                                       "{'n':"
                                                                       "7}") "]"
                                                                             "}"
                                                                             ","
                                                                             "{"
                                                                             "'"
                                                                             "r"
                                                                             "o"
                                                                             "l"
                                                                             "e"
                                                                             "'"
                                                                             ":"
                                                                             "'"
                                                                             "u"
                                                                             "s"
                                                                             "e"
                                                                             "r"
                                                                             "'"
                                                                             ","
                                                                             "'"
                                                                             "p"
                                                                             "a"
                                                                             "r"
                                                                             "t"
                                                                             "s"
                                                                             "'"
                                                                             ":"
                                                                             "[" FR("a") "," FRID("id5", "c") "," FR(
                                                                                 "zzz") "]},"
                                                                                        "{'role':'user','parts':[" FR("a") "," FR(
                                                                                            "d") "," FRID("nope",
                                                                                                          "old") ",{'text':'x'}]}]",
        "auto");
    assert_string_equal(tg_turn_format(turn), "gemini");
    /* Unanswered: b (1), the third a (3), id4 (4), old (7); id6 was
     * answered by name (a client that drops ids still answered it). */
    assert_int_equal(tg_turn_call_count(turn), 4);
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 0)), "{\"n\":1}");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 1)), "{\"n\":3}");
    assert_string_equal(id(turn, 2), "id4");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 3)), "{\"n\":7}");
    /* k stays the position among the content's calls. */
    assert_true(strlen(id(turn, 0)) > 2 &&
                strcmp(id(turn, 0) + strlen(id(turn, 0)) - 2, "-1") == 0);
    assert_true(strcmp(id(turn, 3) + strlen(id(turn, 3)) - 2, "-7") == 0);
    assert_int_equal(tg_call_index(tg_turn_call(turn, 3)), 3);
    tg_turn_free(turn);

    /* Everything answered, and no model content at all. */
    turn = tg_test_parse_ok_q(
        "[{'role':'model','parts':[" FCID("i", "a", "{}") "," FC(
            "b",
            "{}") "]},{'role':'user','parts':[" FRID("i",
                                                     "a") "," FR("b") "]}]",
        "auto");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);
    turn =
        tg_test_parse_ok_q("[{'role':'user','parts':[" FR("b") "]}]", "gemini");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);
    /* A final model text answer: nothing to run. */
    turn = tg_test_parse_ok_q(
        "[{'role':'model','parts':[" FC(
            "b",
            "{}") "]},{'role':'user','parts':[" FR("b") "]},{'role':'model','"
                                                        "parts':[{'text':'Done."
                                                        "'}]}]",
        "auto");
    assert_int_equal(tg_turn_call_count(turn), 0);
    tg_turn_free(turn);
}

static void test_shape_errors(void **state)
{
    (void)state;
    tg_error err;
    assert_int_equal(tg_test_parse_fails_q("'hello'", "gemini", &err),
                     TG_EFORMAT);
    assert_non_null(strstr(
        err.message, "in.json: the document is not an object or an array"));
    assert_non_null(
        strstr(err.message, "expected a Gemini generateContent response"));
    assert_int_equal(tg_test_parse_fails_q("'hello'", "auto", &err),
                     TG_EFORMAT);
    assert_non_null(strstr(err.message, "saw a string"));
    assert_int_equal(tg_test_parse_fails_q("{'candidates':[]}", "auto", &err),
                     TG_EFORMAT);
    assert_string_equal(err.pointer, "/candidates");
    assert_int_equal(tg_test_parse_fails_q("{'candidates':[{'content':'x'}]}",
                                           "gemini", &err),
                     TG_EFORMAT);
    assert_string_equal(err.pointer, "/candidates/0/content");
    assert_int_equal(
        tg_test_parse_fails_q("{'candidates':[{'content':{'parts':{}}}]}",
                              "gemini", &err),
        TG_EFORMAT);
    assert_string_equal(err.pointer, "/candidates/0/content/parts");
    assert_int_equal(
        tg_test_parse_fails_q("{'role':'user','parts':[]}", "auto", &err),
        TG_EFORMAT);
    assert_non_null(strstr(err.message, "role 'user'"));
    assert_string_equal(err.pointer, "/role");
    assert_int_equal(
        tg_test_parse_fails_q("{'promptFeedback':{'blockReason':'SAFETY'}}",
                              "gemini", &err),
        TG_EFORMAT);
    assert_non_null(strstr(err.message, "the prompt was blocked: SAFETY"));
    assert_int_equal(
        tg_test_parse_fails_q("{'error':{'code':429,'message':'Resource "
                              "exhausted','status':'RESOURCE_EXHAUSTED'}}",
                              "gemini", &err),
        TG_EFORMAT);
    assert_non_null(
        strstr(err.message, "Gemini API error (Resource exhausted)"));
    assert_int_equal(tg_test_parse_fails_q("{'foo':1}", "gemini", &err),
                     TG_EFORMAT);
    assert_non_null(strstr(err.message, "neither candidates nor parts"));
    assert_int_equal(tg_test_parse_fails_q("[{'role':'user','parts':[]},'x']",
                                           "gemini", &err),
                     TG_EFORMAT);
    assert_string_equal(err.pointer, "/1");
    assert_int_equal(
        tg_test_parse_fails_q("[{'role':'model','parts':7}]", "gemini", &err),
        TG_EFORMAT);
    assert_string_equal(err.pointer, "/0/parts");
}

static void set_result(tg_turn *turn, size_t i, tg_result *r)
{
    assert_non_null(r);
    assert_int_equal(tg__turn_set_result(turn, i, r), 0);
}

static void test_render(void **state)
{
    (void)state;
    tg_turn *turn = tg_test_parse_ok_q(
        "{'role':'model','parts':[" FCID("f0", "a", "{}") "," FC(
            "b",
            "{}") "," FCID("f2", "c",
                           "{}") "," FCID("f3", "d",
                                          "{}") "," FCID("f4", "e",
                                                         "{}") "," FCID("f5",
                                                                        "f",
                                                                        "{}") "]}",
        "auto");
    set_result(turn, 0,
               tg__result_success(turn->calls[0], json_string("text\n")));
    tg_result *r =
        tg__result_success(turn->calls[1], json_pack("{s:[i,n]}", "v", 1));
    r->content = load("[{'type':'text','text':'see'},{'type':'image','data':'"
                      "AAAA','mimeType':'image/png'}]");
    set_result(turn, 1, r);
    set_result(turn, 2,
               tg__result_error(turn->calls[2], TG_EXECUTION_FINISHED,
                                "TOOL_FAILED", NULL, "it broke"));
    set_result(turn, 3,
               tg__result_canceled(turn->calls[3], TG_EXECUTION_STARTED, "user",
                                   "stop"));
    set_result(turn, 4, tg__result_timeout(turn->calls[4], 250));
    set_result(turn, 5, tg__result_denied(turn->calls[5], "no"));
    char *out = NULL;
    size_t len = 0;
    tg_error err;
    assert_int_equal(tg_turn_render(turn, "auto", &out, &len, &err), 0);
    assert_int_equal(strlen(out), len);
    json_t *got = load(out); /* new ref */
    json_t *want =
        load("{'role':'user','parts':["
             "{'functionResponse':{'name':'a','id':'f0','response':{'output':'"
             "text\\n'}}},"
             "{'functionResponse':{'name':'b','response':{'output':{'v':[1,"
             "null]},'content':'see\\n[image: image/png, 3 bytes; not shown: "
             "this format cannot carry images]'}}},"
             "{'functionResponse':{'name':'c','id':'f2','response':{'error':{'"
             "error':{'message':'it broke','code':'TOOL_FAILED'}}}}},"
             "{'functionResponse':{'name':'d','id':'f3','response':{'error':{'"
             "canceled':{'reason':'stop','by':'user'}}}}},"
             "{'functionResponse':{'name':'e','id':'f4','response':{'error':{'"
             "timeout':{'durationMs':250}}}}},"
             "{'functionResponse':{'name':'f','id':'f5','response':{'error':{'"
             "denied':{'tool':'f','reason':'no'}}}}}"
             "]}"); /* new ref */
    if (!json_equal(got, want))
        fail_msg("rendered:\n%s", out);
    json_decref(got);
    json_decref(want);
    tg_free(out);
    tg_turn_free(turn);
}

/* The rendered results, appended to the contents they answer, leave no call
 * unanswered (with ids and without); across formats the ids carry over. */
static void test_round_trip(void **state)
{
    (void)state;
    const char *conv = "[{'role':'user','parts':[{'text':'go'}]},{'role':'"
                       "model','parts':[" FCID("fc_1", "a", "{'p':1}") "," FC(
                           "b", "{}") "," FC("b", "{'x':2}") "]}]";
    tg_turn *turn = tg_test_parse_ok_q(conv, "auto");
    assert_int_equal(tg_turn_call_count(turn), 3);
    for (size_t i = 0; i < 3; i++)
        set_result(
            turn, i,
            tg__result_success(turn->calls[i], json_integer((json_int_t)i)));
    char *out = NULL;
    tg_error err;
    assert_int_equal(tg_turn_render(turn, NULL, &out, NULL, &err), 0);
    /* The generated ids never reach the model. */
    assert_null(strstr(out, "gemini-"));
    assert_non_null(strstr(out, "\"id\":\"fc_1\""));

    char *c = tg_test_quotes(conv);
    size_t n = strlen(c), m = strlen(out);
    char *next = malloc(n + m + 2);
    assert_non_null(next);
    memcpy(next, c, n - 1);
    next[n - 1] = ',';
    memcpy(next + n, out, m);
    memcpy(next + n + m, "]", 2);
    tg_turn *again = NULL;
    assert_int_equal(
        tg_turn_parse(next, strlen(next), "auto", NULL, &again, &err), 0);
    assert_string_equal(tg_turn_format(again), "gemini");
    assert_int_equal(tg_turn_call_count(again), 0);
    tg_turn_free(again);
    free(next);
    free(c);
    tg_free(out);

    /* Into anthropic: the generated ids stand in for the missing ones. */
    assert_int_equal(tg_turn_render(turn, "anthropic", &out, NULL, &err), 0);
    assert_non_null(strstr(out, "\"tool_use_id\":\"fc_1\""));
    assert_non_null(strstr(out, id(turn, 1)));
    tg_free(out);

    /* Through the native record (journal form): the meta survives, so the
     * gemini renderer still leaves the made-up id out. */
    char *rec = tg_call_to_json(tg_turn_call(turn, 1));
    assert_non_null(strstr(rec, "\"id_generated\":true"));
    tg_free(rec);
    tg_turn_free(turn);

    /* Calls from another format keep their ids here. */
    turn = tg_test_parse_ok_q(
        "{'role':'assistant','tool_calls':[{'id':'call_9','type':'"
        "function','function':{'name':'x','arguments':'{}'}}]}",
        "auto");
    set_result(turn, 0, tg__result_success(turn->calls[0], json_integer(1)));
    assert_int_equal(tg_turn_render(turn, "gemini", &out, NULL, &err), 0);
    assert_string_equal(
        out, "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":"
             "\"x\",\"id\":\"call_9\",\"response\":{\"output\":1}}}]}\n");
    tg_free(out);
    tg_turn_free(turn);
}

static void test_render_tools(void **state)
{
    (void)state;
    json_t *tools =
        load("[{'name':'read_file','description':'Read a "
             "file.','input_schema':{'type':'object','properties':{'path':{'"
             "type':'string'}}},'annotations':{'readOnlyHint':true}},"
             "{'name':'now','description':7}]"); /* new ref */
    tg__buf b;
    tg__buf_init(&b, 0);
    tg_error err;
    assert_int_equal(tg__format_gemini.render_tools(tools, &b, &err), 0);
    json_t *got = load(tg__buf_cstr(&b)); /* new ref */
    json_t *want = load(
        "{'functionDeclarations':[{'name':'read_file','description':'Read a "
        "file.','parametersJsonSchema':{'type':'object','properties':{'path':{'"
        "type':'string'}}}},"
        "{'name':'now','parametersJsonSchema':{'type':'object'}}]}"); /* new ref
                                                                       */
    if (!json_equal(got, want))
        fail_msg("rendered:\n%s", tg__buf_cstr(&b));
    json_decref(got);
    json_decref(want);
    json_decref(tools);

    b.len = 0;
    tools = json_array();
    assert_int_equal(tg__format_gemini.render_tools(tools, &b, &err), 0);
    assert_string_equal(tg__buf_cstr(&b), "{\"functionDeclarations\":[]}\n");
    json_decref(tools);
    tools = load("[{'name':3}]");
    assert_int_equal(tg__format_gemini.render_tools(tools, &b, &err),
                     TG_EINVAL);
    json_decref(tools);
    assert_int_equal(tg__format_gemini.render_tools(NULL, &b, &err), TG_EINVAL);
    tg__buf_cleanup(&b);
}

/* ------------------------------------------------------------ fast path */

/* Runs the fast path on text (single quotes as elsewhere): 1 when it took
 * the text, 0 when it stepped aside. A text it takes must give exactly the
 * calls the document path gives: ids (generated ones too), tools,
 * arguments, meta. */
static int fast_takes(const char *text)
{
    char *s = tg_test_quotes(text);
    int rc = tg_test_fast_vs_doc(&tg__format_gemini, s, NULL);
    free(s);
    return rc;
}

/* The fast path reads plain generateContent responses and steps aside for
 * everything else; the answers are always those of the document path. */
static void test_fast_path(void **state)
{
    (void)state;
    const char *plain =
        "{'candidates':[{'content':{'role':'model','parts':[{'text':'hi'},"
        "{'functionCall':{'id':'a','name':'t','args':{'x':[1,{'y':null}],"
        "'s':'caf\xc3\xa9 \\\\n'}},'thoughtSignature':'Cp'},7,"
        "{'functionCall':{'name':'u','id':'b'}},"
        "{'functionCall':{'id':'c','name':'v','args':null,'extra':[{}]}}]},"
        "'finishReason':'STOP','safetyRatings':[{'p':1.5}]},"
        "{'content':{'parts':[{'functionCall':{}}]}}],"
        "'usageMetadata':{'totalTokenCount':3},'modelVersion':'m'}";
    assert_int_equal(fast_takes(plain), 1);
    tg_turn *turn = tg_test_parse_ok_q(plain, "auto");
    assert_string_equal(tg_turn_format(turn), "gemini");
    assert_int_equal(tg_turn_call_count(turn), 3);
    assert_string_equal(id(turn, 0), "a");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 0)),
                        "{\"x\":[1,{\"y\":null}],\"s\":\"caf\xc3\xa9 \\\\n\"}");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 1)), "{}");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 2)), "{}");
    tg_turn_free(turn);

    /* Calls without an id: the document's hash, as the document path. */
    const char *no_ids =
        "{'candidates':[{'content':{'parts':[" FC("a", "{'p':1}") "," FCID(
            "", "b", "{}") "," FCID("given", "c", "{}") "]}}]}";
    assert_int_equal(fast_takes(no_ids), 1);
    turn = tg_test_parse_ok_q(no_ids, "auto");
    char want[64];
    expected_id(no_ids, 0, want, sizeof want);
    assert_string_equal(id(turn, 0), want);
    expected_id(no_ids, 1, want, sizeof want);
    assert_string_equal(id(turn, 1), want);
    assert_string_equal(id(turn, 2), "given");
    assert_true(json_is_true(
        json_object_get(tg__call_meta(turn->calls[1]), "id_generated")));
    assert_null(tg__call_meta(turn->calls[2]));
    tg_turn_free(turn);
    /* An escaped key, no calls at all, and other parts only. */
    assert_int_equal(fast_takes("{'\\u0063andidates':[{'content':{'parts':["
                                "]}}]}"),
                     1);
    assert_int_equal(fast_takes("{'candidates':[{'content':{'parts':[{'text':"
                                "'no calls'}]}}]}"),
                     1);

    static const char *const bails[] = {
        /* duplicate keys on the path read */
        "{'candidates':[{'content':{'parts':[]}}],'candidates':[]}",
        "{'candidates':[{'content':{'parts':[]},'content':{'parts':[]}}]}",
        "{'candidates':[{'content':{'parts':[],'parts':[]}}]}",
        "{'candidates':[{'content':{'parts':[{'functionCall':{'name':'t'},"
        "'functionCall':{'name':'u'}}]}}]}",
        "{'candidates':[{'content':{'parts':[{'functionCall':{'id':'a','id':"
        "'b','name':'t'}}]}}]}",
        "{'candidates':[{'content':{'parts':[{'functionCall':{'name':'t',"
        "'name':'u'}}]}}]}",
        "{'candidates':[{'content':{'parts':[{'functionCall':{'name':'t',"
        "'args':{},'args':{}}}]}}]}",
        /* per-call problems, left to the document path */
        "{'candidates':[{'content':{'parts':[{'functionCall':{'id':'a'}}]}}]}",
        "{'candidates':[{'content':{'parts':[{'functionCall':{'name':''}}]}}]}",
        "{'candidates':[{'content':{'parts':[{'functionCall':{'name':7}}]}}]}",
        "{'candidates':[{'content':{'parts':[{'functionCall':{'name':'t','id':"
        "5}}]}}]}",
        "{'candidates':[{'content':{'parts':[{'functionCall':{'name':'t',"
        "'args':[1]}}]}}]}",
        "{'candidates':[{'content':{'parts':[{'functionCall':{'name':'t',"
        "'args':'{}'}}]}}]}",
        "{'candidates':[{'content':{'parts':[{'functionCall':null}]}}]}",
        "{'candidates':[{'content':{'parts':[{'functionCall':[]}]}}]}",
        /* arguments not in compact form */
        "{'candidates':[{'content':{'parts':[{'functionCall':{'name':'t',"
        "'args':{ 'x':1}}}]}}]}",
        "{'candidates':[{'content':{'parts':[{'functionCall':{'name':'t',"
        "'args':{'x':1.5}}}]}}]}",
        "{'candidates':[{'content':{'parts':[{'functionCall':{'name':'t',"
        "'args':{'x':'\\u00e9'}}}]}}]}",
        /* other shapes */
        "{'candidates':[]}",
        "{'candidates':{}}",
        "{'candidates':[5]}",
        "{'candidates':[{'finishReason':'SAFETY'}]}",
        "{'candidates':[{'content':null}]}",
        "{'candidates':[{'content':{'role':'model'}}]}",
        "{'candidates':[{'content':{'parts':null}}]}",
        "{'role':'model','parts':[]}",
        "[{'role':'model','parts':[]}]",
        "{'candidates':[{'content':{'parts':[]}}],'choices':[]}",
        "{'candidates':[{'content':{'parts':[]}}],'content':[]}",
        /* not plain JSON */
        "{'candidates':[{'content':{'parts':[]}}]} x",
        "{'candidates':[{'content':{'parts':[]}}]",
        "{'candidates':[{'content':{'parts':[]}}],'x':'\\u0000'}",
        "{'candidates':[{'content':{'parts':[]}}],'n':99999999999999999999}",
    };
    for (size_t i = 0; i < sizeof bails / sizeof bails[0]; i++)
        if (fast_takes(bails[i]) != 0)
            fail_msg("fast path took %s", bails[i]);

    /* jansson keeps the last of duplicate keys; so does the parse. */
    turn = tg_test_parse_ok_q(bails[5], "auto");
    assert_string_equal(turn->calls[0]->tool, "u");
    tg_turn_free(turn);
    turn = tg_test_parse_ok_q(bails[15], "auto");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 0)), "{\"x\":1}");
    tg_turn_free(turn);
    turn = tg_test_parse_ok_q(bails[7], "auto");
    assert_string_equal(pre(turn, 0), "MALFORMED_CALL");
    tg_turn_free(turn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_auto_picks_the_right_format),
        cmocka_unit_test(test_response_and_content),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_ids_without_id),
        cmocka_unit_test(test_per_call_problems),
        cmocka_unit_test(test_contents_array),
        cmocka_unit_test(test_shape_errors),
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_render_tools),
        cmocka_unit_test(test_fast_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
