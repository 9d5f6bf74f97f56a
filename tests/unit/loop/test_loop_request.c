/* SPDX-License-Identifier: MIT */
/*
 * test_loop_request.c - the model clients' requests, per provider: the
 * conversation a loop starts, the request body built from it with the
 * runtime's tool definitions, a recorded answer of the provider joining
 * it, the calls of that answer run by a real runtime (the built-in echo,
 * a malformed call, an unknown tool) and their rendered results added;
 * the next request must then hold every call's answer, matched by id, in
 * the provider's own shape. Also the URLs and headers, the retry policy
 * (which failures are retried, the backoff and its jitter, Retry-After)
 * and the provider's message in an error answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "loop_int.h"

struct fixture {
    tg_config *cfg;
    tg_runtime *rt;
};

static int setup(void **state)
{
    static const char conf[] = "{\"builtin_tools\":[\"echo\"],"
                               "\"journal\":null,\"spool\":null}";
    struct fixture *f = calloc(1, sizeof *f);
    tg_error err = {0};
    assert_non_null(f);
    f->cfg = tg_config_new();
    assert_non_null(f->cfg);
    assert_int_equal(tg_config_load(f->cfg, conf, strlen(conf), NULL, &err), 0);
    assert_int_equal(tg_runtime_new(f->cfg, &f->rt, &err), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    tg_runtime_free(f->rt);
    tg_config_free(f->cfg);
    free(f);
    return 0;
}

static json_t *tools_for(tg_runtime *rt, const char *format)
{
    char *text = NULL;
    tg_error err = {0};
    assert_int_equal(tg_runtime_tools(rt, format, &text, &err), 0);
    json_t *t = json_loads(text, 0, NULL); /* new ref */
    tg_free(text);
    assert_non_null(t);
    return t;
}

/* One provider's round: start, request, a recorded answer with three
 * calls (echo, malformed arguments, an unknown tool), the calls run, the
 * results added; returns the second request (new ref). */
static json_t *round_trip(tg_runtime *rt, const tg__provider *p,
                          const char *answer_json, char **text_out)
{
    tg_error err = {0};
    json_t *conv = json_object(); /* new ref */
    assert_int_equal(p->start(conv, "be brief", "hello", &err), 0);
    json_t *tools = tools_for(rt, p->format); /* new ref */
    json_t *req = NULL;
    assert_int_equal(p->request(conv, tools, "m1", 0, &req, &err), 0);
    json_decref(req);
    json_t *resp = json_loads(answer_json, 0, NULL); /* new ref */
    assert_non_null(resp);
    json_t *list = json_object_get(conv, p->list_key); /* borrowed */
    assert_int_equal(p->answer(list, resp, text_out, &err), 0);
    tg_turn *turn = NULL;
    assert_int_equal(tg_turn_parse(answer_json, strlen(answer_json), p->format,
                                   "answer", &turn, &err),
                     0);
    assert_int_equal(tg_turn_call_count(turn), 3);
    assert_int_equal(tg_runtime_run_turn(rt, turn, &err), 0);
    char *rendered = NULL;
    size_t n;
    assert_int_equal(tg_turn_render(turn, p->format, &rendered, &n, &err), 0);
    assert_int_equal(tg__conv_add_results(list, rendered, &err), 0);
    tg_free(rendered);
    tg_turn_free(turn);
    assert_int_equal(p->request(conv, tools, "m1", 0, &req, &err), 0);
    json_decref(resp);
    json_decref(tools);
    json_decref(conv);
    return req;
}

static const char *str_at(const json_t *v, const char *key)
{
    const json_t *s = json_object_get(v, key); /* borrowed */
    return json_is_string(s) ? json_string_value(s) : "";
}

static void test_openai_chat(void **state)
{
    struct fixture *f = *state;
    static const char answer[] =
        "{\"id\":\"c1\",\"object\":\"chat.completion\",\"choices\":[{"
        "\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"on "
        "it\",\"tool_calls\":["
        "{\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":"
        "\"echo\",\"arguments\":\"{\\\"text\\\":\\\"hi\\\"}\"}},"
        "{\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":"
        "\"echo\",\"arguments\":\"{bad\"}},"
        "{\"id\":\"call_c\",\"type\":\"function\",\"function\":{\"name\":"
        "\"nope\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}"
        "]}";
    char *text = NULL;
    json_t *req = round_trip(f->rt, &tg__provider_openai_chat, answer, &text);
    assert_string_equal(text, "on it");
    assert_string_equal(str_at(req, "model"), "m1");
    const json_t *msgs = json_object_get(req, "messages"); /* borrowed */
    assert_int_equal(json_array_size(msgs), 6);
    assert_string_equal(str_at(json_array_get(msgs, 0), "role"), "system");
    assert_string_equal(str_at(json_array_get(msgs, 0), "content"), "be brief");
    assert_string_equal(str_at(json_array_get(msgs, 1), "role"), "user");
    assert_string_equal(str_at(json_array_get(msgs, 2), "role"), "assistant");
    static const char *const ids[] = {"call_a", "call_b", "call_c"};
    for (int i = 0; i < 3; i++) {
        const json_t *m = json_array_get(msgs, 3 + (size_t)i); /* borrowed */
        assert_string_equal(str_at(m, "role"), "tool");
        assert_string_equal(str_at(m, "tool_call_id"), ids[i]);
    }
    assert_non_null(strstr(str_at(json_array_get(msgs, 4), "content"),
                           "MALFORMED_ARGUMENTS"));
    assert_non_null(
        strstr(str_at(json_array_get(msgs, 5), "content"), "UNKNOWN_TOOL"));
    const json_t *tool0 =
        json_array_get(json_object_get(req, "tools"), 0); /* borrowed */
    assert_string_equal(str_at(tool0, "type"), "function");
    assert_string_equal(str_at(json_object_get(tool0, "function"), "name"),
                        "echo");
    free(text);
    json_decref(req);
}

static void test_openai_responses(void **state)
{
    struct fixture *f = *state;
    static const char answer[] =
        "{\"id\":\"r1\",\"object\":\"response\",\"status\":\"completed\","
        "\"output\":[{\"type\":\"message\",\"id\":\"msg_1\",\"role\":"
        "\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"on "
        "it\"}]},"
        "{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_a\","
        "\"name\":\"echo\",\"arguments\":\"{\\\"text\\\":\\\"hi\\\"}\"},"
        "{\"type\":\"function_call\",\"id\":\"fc_2\",\"call_id\":\"call_b\","
        "\"name\":\"echo\",\"arguments\":\"{bad\"},"
        "{\"type\":\"function_call\",\"id\":\"fc_3\",\"call_id\":\"call_c\","
        "\"name\":\"nope\",\"arguments\":\"{}\"}]}";
    char *text = NULL;
    json_t *req =
        round_trip(f->rt, &tg__provider_openai_responses, answer, &text);
    assert_string_equal(text, "on it");
    assert_string_equal(str_at(req, "instructions"), "be brief");
    const json_t *input = json_object_get(req, "input"); /* borrowed */
    /* user, message, 3 function_call, 3 function_call_output */
    assert_int_equal(json_array_size(input), 8);
    assert_string_equal(str_at(json_array_get(input, 0), "role"), "user");
    static const char *const ids[] = {"call_a", "call_b", "call_c"};
    for (int i = 0; i < 3; i++) {
        const json_t *c = json_array_get(input, 2 + (size_t)i); /* borrowed */
        const json_t *o = json_array_get(input, 5 + (size_t)i); /* borrowed */
        assert_string_equal(str_at(c, "type"), "function_call");
        assert_string_equal(str_at(o, "type"), "function_call_output");
        assert_string_equal(str_at(o, "call_id"), ids[i]);
        assert_string_equal(str_at(c, "call_id"), ids[i]);
    }
    const json_t *tool0 =
        json_array_get(json_object_get(req, "tools"), 0); /* borrowed */
    assert_string_equal(str_at(tool0, "name"), "echo");
    assert_true(json_is_object(json_object_get(tool0, "parameters")));
    free(text);
    json_decref(req);
}

static void test_anthropic(void **state)
{
    struct fixture *f = *state;
    static const char answer[] =
        "{\"id\":\"m1\",\"type\":\"message\",\"role\":\"assistant\","
        "\"content\":[{\"type\":\"text\",\"text\":\"on it\"},"
        "{\"type\":\"tool_use\",\"id\":\"toolu_a\",\"name\":\"echo\","
        "\"input\":{\"text\":\"hi\"}},"
        "{\"type\":\"tool_use\",\"id\":\"toolu_b\",\"name\":\"echo\","
        "\"input\":\"{bad\"},"
        "{\"type\":\"tool_use\",\"id\":\"toolu_c\",\"name\":\"nope\","
        "\"input\":{}}],\"stop_reason\":\"tool_use\"}";
    char *text = NULL;
    json_t *req = round_trip(f->rt, &tg__provider_anthropic, answer, &text);
    assert_string_equal(text, "on it");
    assert_string_equal(str_at(req, "system"), "be brief");
    assert_int_equal(json_integer_value(json_object_get(req, "max_tokens")),
                     4096);
    const json_t *msgs = json_object_get(req, "messages"); /* borrowed */
    assert_int_equal(json_array_size(msgs), 3);
    const json_t *asst = json_array_get(msgs, 1); /* borrowed */
    assert_string_equal(str_at(asst, "role"), "assistant");
    assert_int_equal(json_array_size(json_object_get(asst, "content")), 4);
    const json_t *res = json_array_get(msgs, 2); /* borrowed */
    assert_string_equal(str_at(res, "role"), "user");
    const json_t *blocks = json_object_get(res, "content"); /* borrowed */
    assert_int_equal(json_array_size(blocks), 3);
    static const char *const ids[] = {"toolu_a", "toolu_b", "toolu_c"};
    for (int i = 0; i < 3; i++) {
        const json_t *b = json_array_get(blocks, (size_t)i); /* borrowed */
        assert_string_equal(str_at(b, "type"), "tool_result");
        assert_string_equal(str_at(b, "tool_use_id"), ids[i]);
        assert_true(json_is_boolean(json_object_get(b, "is_error")));
        assert_int_equal(json_is_true(json_object_get(b, "is_error")), i != 0);
    }
    const json_t *tool0 =
        json_array_get(json_object_get(req, "tools"), 0); /* borrowed */
    assert_true(json_is_object(json_object_get(tool0, "input_schema")));
    free(text);
    json_decref(req);
}

static void test_gemini(void **state)
{
    struct fixture *f = *state;
    static const char answer[] =
        "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":["
        "{\"text\":\"thinking\",\"thought\":true},{\"text\":\"on it\"},"
        "{\"functionCall\":{\"id\":\"g_a\",\"name\":\"echo\",\"args\":{"
        "\"text\":\"hi\"}}},"
        "{\"functionCall\":{\"id\":\"g_b\",\"name\":\"echo\",\"args\":"
        "\"{bad\"}},"
        "{\"functionCall\":{\"id\":\"g_c\",\"name\":\"nope\",\"args\":{}}}"
        "]},\"finishReason\":\"STOP\"}]}";
    char *text = NULL;
    json_t *req = round_trip(f->rt, &tg__provider_gemini, answer, &text);
    assert_string_equal(text, "on it"); /* the thought is not the answer */
    assert_null(json_object_get(req, "model")); /* it is in the URL */
    const json_t *si = json_object_get(req, "systemInstruction");
    assert_string_equal(
        str_at(json_array_get(json_object_get(si, "parts"), 0), "text"),
        "be brief");
    const json_t *contents = json_object_get(req, "contents"); /* borrowed */
    assert_int_equal(json_array_size(contents), 3);
    assert_string_equal(str_at(json_array_get(contents, 1), "role"), "model");
    const json_t *res = json_array_get(contents, 2); /* borrowed */
    assert_string_equal(str_at(res, "role"), "user");
    const json_t *parts = json_object_get(res, "parts"); /* borrowed */
    assert_int_equal(json_array_size(parts), 3);
    static const char *const names[] = {"echo", "echo", "nope"};
    static const char *const ids[] = {"g_a", "g_b", "g_c"};
    for (int i = 0; i < 3; i++) {
        const json_t *fr = json_object_get(json_array_get(parts, (size_t)i),
                                           "functionResponse"); /* borrowed */
        assert_string_equal(str_at(fr, "name"), names[i]);
        assert_string_equal(str_at(fr, "id"), ids[i]);
        assert_true(json_is_object(json_object_get(fr, "response")));
    }
    const json_t *tools = json_object_get(req, "tools"); /* borrowed */
    assert_int_equal(json_array_size(tools), 1);
    assert_true(json_is_array(
        json_object_get(json_array_get(tools, 0), "functionDeclarations")));
    free(text);
    json_decref(req);
}

static void test_urls_and_headers(void **state)
{
    char *u = tg__provider_openai_chat.url("http://h:1/v1/", "m", 0);
    assert_string_equal(u, "http://h:1/v1/chat/completions");
    free(u);
    u = tg__provider_openai_responses.url("http://h:1/v1", "m", 0);
    assert_string_equal(u, "http://h:1/v1/responses");
    free(u);
    u = tg__provider_anthropic.url("https://api.anthropic.com", "m", 0);
    assert_string_equal(u, "https://api.anthropic.com/v1/messages");
    free(u);
    u = tg__provider_gemini.url("http://h//", "gemini-2.5-flash", 0);
    assert_string_equal(
        u, "http://h/v1beta/models/gemini-2.5-flash:generateContent");
    free(u);
    assert_ptr_equal(tg__provider_find("anthropic"), &tg__provider_anthropic);
    assert_null(tg__provider_find("openai-chat"));

    struct {
        const tg__provider *p;
        const char *expect;
    } cases[] = {
        {&tg__provider_openai_chat, "Authorization: Bearer K1"},
        {&tg__provider_openai_responses, "Authorization: Bearer K1"},
        {&tg__provider_anthropic, "x-api-key: K1"},
        {&tg__provider_gemini, "x-goog-api-key: K1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct curl_slist *h = NULL;
        assert_int_equal(cases[i].p->headers(&h, "K1", NULL), 0);
        int found = 0, version = 0;
        for (struct curl_slist *s = h; s != NULL; s = s->next) {
            found += strcmp(s->data, cases[i].expect) == 0;
            version += strcmp(s->data, "anthropic-version: 2023-06-01") == 0;
        }
        assert_int_equal(found, 1);
        assert_int_equal(version, cases[i].p == &tg__provider_anthropic);
        curl_slist_free_all(h);
        /* no key: no key header at all */
        h = NULL;
        assert_int_equal(cases[i].p->headers(&h, NULL, NULL), 0);
        for (struct curl_slist *s = h; s != NULL; s = s->next)
            assert_null(strstr(s->data, "K1"));
        curl_slist_free_all(h);
    }
}

static void test_retry_policy(void **state)
{
    static const long again[] = {408, 429, 500, 502, 503, 504, 529};
    for (size_t i = 0; i < sizeof again / sizeof again[0]; i++)
        assert_int_equal(tg__retry_worth(again[i], CURLE_OK), 1);
    static const long never[] = {400, 401, 403, 404, 413, 422, 501};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        assert_int_equal(tg__retry_worth(never[i], CURLE_OK), 0);
    assert_int_equal(tg__retry_worth(0, CURLE_RECV_ERROR), 1);
    assert_int_equal(tg__retry_worth(0, CURLE_GOT_NOTHING), 1);
    assert_int_equal(tg__retry_worth(0, CURLE_PARTIAL_FILE), 1);
    assert_int_equal(tg__retry_worth(0, CURLE_OPERATION_TIMEDOUT), 1);
    assert_int_equal(tg__retry_worth(0, CURLE_COULDNT_CONNECT), 0);
    assert_int_equal(tg__retry_worth(0, CURLE_URL_MALFORMAT), 0);

    /* Retry-After wins as given. */
    assert_int_equal(tg__retry_delay(2, 500, 1000, 12345u), 1000);
    assert_int_equal(tg__retry_delay(5, 500, 0, 7u), 0);
    /* Backoff: attempt 2 in [250, 500], 3 in [500, 1000], 4 in [1000,
     * 2000], capped at 60 s; every jitter value stays in its band. */
    for (unsigned r = 0; r < 5000; r += 7) {
        long d2 = tg__retry_delay(2, 500, -1, r);
        long d3 = tg__retry_delay(3, 500, -1, r);
        long d4 = tg__retry_delay(4, 500, -1, r);
        long d30 = tg__retry_delay(30, 500, -1, r);
        assert_true(d2 >= 250 && d2 <= 500);
        assert_true(d3 >= 500 && d3 <= 1000);
        assert_true(d4 >= 1000 && d4 <= 2000);
        assert_true(d30 >= 30000 && d30 <= 60000);
    }
    assert_int_not_equal(tg__retry_delay(3, 500, -1, 1),
                         tg__retry_delay(3, 500, -1, 400));

    assert_int_equal(tg__retry_after_parse(" 2\r\n", 0), 2000);
    assert_int_equal(tg__retry_after_parse("0.5", 0), 500);
    assert_int_equal(tg__retry_after_parse("soon", 0), -1);
    assert_int_equal(tg__retry_after_parse("-3", 0), -1);
    /* An HTTP date 30 s after "now". */
    assert_int_equal(
        tg__retry_after_parse("Wed, 21 Oct 2015 07:28:30 GMT", 1445412480LL),
        30000);
}

/* The providers' rate-limit headers and Gemini's RetryInfo say when to
 * come back when Retry-After does not. */
static void test_ratelimit_headers(void **state)
{
    (void)state;
    tg__http_reply r = {.retry_after_ms = -1, .status = 429};
    tg__ratelimit_clear(&r);
    assert_int_equal(tg__retry_server_ms(&r), -1);
    /* OpenAI: Go durations; the used-up kind decides */
    assert_int_equal(
        tg__ratelimit_header(&r, "x-ratelimit-reset-requests: 1s\r\n", 0), 1);
    assert_int_equal(
        tg__ratelimit_header(&r, "x-ratelimit-reset-tokens: 6m0.5s\r\n", 0), 1);
    assert_int_equal(tg__retry_server_ms(&r), 1000); /* the soonest */
    assert_int_equal(
        tg__ratelimit_header(&r, "X-RateLimit-Remaining-Tokens: 0\r\n", 0), 1);
    assert_int_equal(tg__retry_server_ms(&r), 360500);
    assert_int_equal(tg__ratelimit_header(&r, "x-request-id: 7\r\n", 0), 0);
    tg__ratelimit_clear(&r);
    assert_int_equal(
        tg__ratelimit_header(&r, "x-ratelimit-reset-requests: 20ms\r\n", 0), 1);
    assert_int_equal(tg__retry_server_ms(&r), 20);
    tg__ratelimit_clear(&r);
    assert_int_equal(
        tg__ratelimit_header(&r, "x-ratelimit-reset-requests: soon\r\n", 0), 1);
    assert_int_equal(tg__retry_server_ms(&r), -1);
    /* Anthropic: RFC 3339 times against now */
    tg__ratelimit_clear(&r);
    long long now = 1764315000LL; /* 2025-11-28T07:30:00Z */
    assert_int_equal(tg__ratelimit_header(&r,
                                          "anthropic-ratelimit-output-tokens-"
                                          "reset: 2025-11-28T07:30:12Z\r\n",
                                          now),
                     1);
    assert_int_equal(
        tg__ratelimit_header(
            &r, "anthropic-ratelimit-output-tokens-remaining: 0", now),
        1);
    assert_int_equal(tg__retry_server_ms(&r), 12000);
    assert_int_equal(tg__ratelimit_header(&r,
                                          "anthropic-ratelimit-requests-reset: "
                                          "2025-11-28T08:30:02.5+01:00",
                                          now),
                     1);
    assert_int_equal(r.rl_reset_ms[0], 2500);
    /* Retry-After wins */
    r.retry_after_ms = 3000;
    assert_int_equal(tg__retry_server_ms(&r), 3000);
    /* Gemini: RetryInfo in the body of a 429 */
    tg__http_reply g = {.retry_after_ms = -1, .status = 429};
    tg__ratelimit_clear(&g);
    char body[] = "{\"error\":{\"code\":429,\"details\":[{\"@type\":"
                  "\"type.googleapis.com/google.rpc.RetryInfo\","
                  "\"retryDelay\":\"38s\"}]}}";
    g.body = body;
    g.len = sizeof body - 1;
    assert_int_equal(tg__retry_server_ms(&g), 38000);
    g.status = 500; /* only a rate limit's */
    assert_int_equal(tg__retry_server_ms(&g), -1);
}

static void test_provider_error(void **state)
{
    char buf[128];
    static const char openai[] =
        "{\"error\":{\"message\":\"Invalid model\",\"type\":\"x\"}}";
    tg__provider_error(openai, strlen(openai), buf, sizeof buf);
    assert_string_equal(buf, "Invalid model");
    static const char anth[] =
        "{\"type\":\"error\",\"error\":{\"type\":"
        "\"overloaded_error\",\"message\":\"Over\\nloaded\"}}";
    tg__provider_error(anth, strlen(anth), buf, sizeof buf);
    assert_string_equal(buf, "Over loaded"); /* one line on a terminal */
    static const char plain[] = "upstream \x1b[31mdown";
    tg__provider_error(plain, strlen(plain), buf, sizeof buf);
    assert_string_equal(buf, "upstream  [31mdown");
    tg__provider_error("", 0, buf, sizeof buf);
    assert_string_equal(buf, "(empty body)");
}

static void test_results_shapes(void **state)
{
    tg_error err = {0};
    json_t *list = json_array(); /* new ref */
    assert_int_equal(tg__conv_add_results(list, "[{\"a\":1},{\"b\":2}]", &err),
                     0);
    assert_int_equal(tg__conv_add_results(list, "{\"c\":3}", &err), 0);
    assert_int_equal(json_array_size(list), 3);
    assert_int_equal(tg__conv_add_results(list, "\"text\"", &err), TG_EFORMAT);
    assert_int_equal(tg__conv_add_results(list, "{oops", &err), TG_EPARSE);
    assert_int_equal(json_array_size(list), 3);
    json_decref(list);
}

/* Items added as text (tg__reqtext_add): an array's elements or one
 * value, each a placeholder in the list; a request and the journal's
 * items send their text without white space; the resolved conversation
 * holds them as JSON, the rest shared; items added as JSON around them
 * keep their places. */
static void test_text_items(void **state)
{
    (void)state;
    tg_error err = {0};
    tg__reqtext r = {0};
    json_t *conv = json_object(); /* new ref */
    assert_int_equal(tg__provider_openai_chat.start(conv, NULL, "go", &err), 0);
    json_t *list = json_object_get(conv, "messages"); /* borrowed */
    static const char arr[] = " [ {\"a\" : [1, \"x y\\\" ]\" ]}, 2 ,\"s\"] \n";
    assert_int_equal(tg__reqtext_add(&r, list, arr, strlen(arr), &err), 0);
    assert_int_equal(json_array_size(list), 4);
    assert_int_equal(json_array_append_new(list, json_pack("{s:i}", "b", 3)),
                     0);
    static const char one[] = "{\"c\":{\"d\":[]}, \"e\":null}";
    assert_int_equal(tg__reqtext_add(&r, list, one, strlen(one), &err), 0);
    assert_int_equal(tg__reqtext_add(&r, list, "[]", 2, &err), 0);
    assert_int_equal(json_array_size(list), 6);
    const char *items;
    size_t n;
    assert_int_equal(tg__reqtext_items(&r, list, 1, &items, &n), 0);
    static const char want[] =
        "{\"a\":[1,\"x y\\\" ]\"]},2,\"s\",{\"b\":3},{\"c\":{\"d\":[]},"
        "\"e\":null}";
    assert_int_equal(n, strlen(want));
    assert_memory_equal(items, want, n);
    char *body = NULL;
    size_t blen;
    assert_int_equal(tg__reqtext_build(&r, &tg__provider_openai_chat, conv,
                                       NULL, "m", 0, 0, &body, &blen, &err),
                     0);
    assert_non_null(strstr(body, want));
    json_t *sent = json_loadb(body, blen, 0, NULL); /* new ref */
    free(body);
    json_t *res = tg__reqtext_resolved(&r, conv, "messages"); /* new ref */
    assert_non_null(res);
    assert_ptr_not_equal(res, conv);
    assert_true(json_equal(json_object_get(res, "messages"),
                           json_object_get(sent, "messages")));
    assert_ptr_equal(json_array_get(json_object_get(res, "messages"), 0),
                     json_array_get(list, 0));
    assert_ptr_equal(json_array_get(json_object_get(res, "messages"), 4),
                     json_array_get(list, 4));
    assert_true(json_is_object(json_array_get(list, 1))); /* placeholder */
    assert_int_equal(json_object_size(json_array_get(list, 1)), 0);
    json_decref(res);
    json_decref(sent);
    /* not one value */
    assert_int_equal(tg__reqtext_add(&r, list, "[1,2", 4, &err), TG_EINTERNAL);
    assert_int_equal(tg__reqtext_add(&r, list, "{} {}", 5, &err), TG_EINTERNAL);
    tg__reqtext_cleanup(&r);
    /* nothing added as text: the conversation itself */
    res = tg__reqtext_resolved(&r, conv, "messages");
    assert_ptr_equal(res, conv);
    json_decref(res);
    json_decref(conv);
}

/* A Chat Completions answer read once: the message joins the list as its
 * text, its content and usage read from the text as jansson would; other
 * answers are left to jansson (0, nothing added). */
static void test_answer_fast(void **state)
{
    (void)state;
    tg_error err = {0};
    static const char msg[] =
        "{\"role\":\"assistant\",\"content\":\"first\",\"content\":"
        "\"caf\\u00e9 \\\"ok\\\"\",\"tool_calls\":[{\"id\":\"a\","
        "\"type\":\"function\",\"function\":{\"name\":\"t\","
        "\"arguments\":\"{}\"}}]}";
    char raw[1024];
    snprintf(raw, sizeof raw,
             "{\"id\":\"c\",\"usage\":{\"total_tokens\":99},\"choices\":"
             "[{\"message\":%s}],\"usage\":{\"prompt_tokens\":7,"
             "\"completion_tokens\":5,\"completion_tokens\":6,"
             "\"total_tokens\":1.5}}",
             msg);
    tg_turn *turn = NULL;
    assert_int_equal(
        tg_turn_parse(raw, strlen(raw), "openai-chat", "a", &turn, &err), 0);
    json_t *list = json_array(); /* new ref */
    tg__reqtext r = {0};
    char *text = NULL;
    long tokens = -1;
    assert_int_equal(tg__answer_fast(&r, &tg__provider_openai_chat, list, raw,
                                     strlen(raw), turn, &text, &tokens, &err),
                     1);
    assert_string_equal(text, "caf\xC3\xA9 \"ok\"");
    assert_int_equal(tokens, 13); /* the last usage: 7 + 6 */
    free(text);
    /* the same as jansson reads it */
    json_t *resp = json_loads(raw, 0, NULL); /* new ref */
    json_t *want = json_array();             /* new ref */
    char *slow = NULL;
    assert_int_equal(tg__provider_openai_chat.answer(want, resp, &slow, &err),
                     0);
    assert_string_equal(slow, "caf\xC3\xA9 \"ok\"");
    free(slow);
    tg__usage u = {0};
    tg__usage_update(&u, resp);
    assert_int_equal(tg__usage_tokens(&u), 13);
    json_t *conv = json_pack("{s:O}", "messages", list);      /* new ref */
    json_t *res = tg__reqtext_resolved(&r, conv, "messages"); /* new ref */
    assert_true(json_equal(json_object_get(res, "messages"), want));
    json_decref(res);
    json_decref(conv);
    json_decref(want);
    json_decref(resp);
    tg_turn_free(turn);
    /* another provider, and an answer read by the document path */
    static const char plain[] = "{\"choices\":[{\"message\":{\"role\":"
                                "\"assistant\",\"content\":\"hi\"}}]}";
    assert_int_equal(
        tg_turn_parse(raw, strlen(raw), "openai-chat", "a", &turn, &err), 0);
    assert_int_equal(tg__answer_fast(&r, &tg__provider_anthropic, list, raw,
                                     strlen(raw), turn, &text, &tokens, &err),
                     0);
    tg_turn_free(turn);
    assert_int_equal(
        tg_turn_parse(plain, strlen(plain), "openai-chat", "a", &turn, &err),
        0);
    assert_int_equal(tg__answer_fast(&r, &tg__provider_openai_chat, list, plain,
                                     strlen(plain), turn, &text, &tokens, &err),
                     0);
    tg_turn_free(turn);
    assert_int_equal(json_array_size(list), 1);
    tg__reqtext_cleanup(&r);
    json_decref(list);
}

/* A streamed Anthropic answer keeps its thinking: thinking blocks (text
 * and signature from their deltas) and redacted_thinking blocks go back
 * first in the assistant turn, as the API wants for a tool use. */
static void test_anthropic_stream_thinking(void **state)
{
    (void)state;
    static const char *const events[] = {
        "{\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}",
        "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
        "{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
        "\"thinking_delta\",\"thinking\":\"Let me \"}}",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
        "\"thinking_delta\",\"thinking\":\"think.\"}}",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
        "\"signature_delta\",\"signature\":\"sig==\"}}",
        "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":"
        "{\"type\":\"redacted_thinking\",\"data\":\"opaque\"}}",
        "{\"type\":\"content_block_start\",\"index\":2,\"content_block\":"
        "{\"type\":\"text\",\"text\":\"\"}}",
        "{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":"
        "\"text_delta\",\"text\":\"Hi\"}}",
    };
    const tg__provider *p = &tg__provider_anthropic;
    json_t *extra = NULL;
    const char *text = NULL;
    for (size_t i = 0; i < sizeof events / sizeof *events; i++) {
        json_t *ev = json_loads(events[i], 0, NULL);
        assert_non_null(ev);
        const char *t = p->stream_event(ev, &extra);
        if (t != NULL)
            text = strcmp(t, "Hi") == 0 ? "Hi" : "?";
        json_decref(ev);
    }
    assert_string_equal(text, "Hi");
    tg_turn *turn = NULL;
    tg_error err = {0};
    assert_int_equal(tg_turn_new_call("anthropic", "toolu_1", "echo",
                                      "{\"text\":\"x\"}", 12, &turn, &err),
                     0);
    json_t *list = json_array();
    assert_int_equal(p->stream_answer(list, "Hi", turn, extra, &err), 0);
    char *got = json_dumps(json_array_get(list, 0), JSON_COMPACT);
    assert_string_equal(
        got, "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\","
             "\"thinking\":\"Let me think.\",\"signature\":\"sig==\"},"
             "{\"type\":\"redacted_thinking\",\"data\":\"opaque\"},"
             "{\"type\":\"text\",\"text\":\"Hi\"},{\"type\":\"tool_use\","
             "\"id\":\"toolu_1\",\"name\":\"echo\",\"input\":{\"text\":"
             "\"x\"}}]}");
    free(got);
    json_decref(list);
    json_decref(extra);
    tg_turn_free(turn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_openai_chat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_openai_responses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_anthropic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gemini, setup, teardown),
        cmocka_unit_test(test_anthropic_stream_thinking),
        cmocka_unit_test(test_ratelimit_headers),
        cmocka_unit_test(test_urls_and_headers),
        cmocka_unit_test(test_retry_policy),
        cmocka_unit_test(test_provider_error),
        cmocka_unit_test(test_results_shapes),
        cmocka_unit_test(test_text_items),
        cmocka_unit_test(test_answer_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
