/* SPDX-License-Identifier: MIT */
/*
 * test_bad_strings.c - one call's bad bytes fail only that call
 * (bad_strings.c, core/bad_bytes.c): a "\u0000", an unpaired surrogate
 * (high alone, low alone, a low before a high, a high before another
 * escape) or bytes that are not UTF-8, in a key or a value of a call's
 * arguments, nested deep or not, in every format that sends arguments as an
 * object (Anthropic input, Gemini args, MCP arguments, toolgate args, as a
 * document and as JSON Lines) and in the string form (OpenAI Chat and
 * Responses arguments, toolgate args as a string; the bytes in the outer
 * string or escaped in the inner text), whole and streamed (SSE, fed whole
 * and in small chunks): the turn parses, that call alone ends
 * MALFORMED_ARGUMENTS (final: limits.repair leaves it), the other two keep
 * their arguments, in their order. The same bytes outside any call's
 * arguments (an id, a name, a type, a text block) refuse the document,
 * naming the place.
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
#include "stream.h"
#include "turn.h"

/* What a string may hold that no tool gets, as JSON text writes it. */
static const char *const bad_bits[] = {
    "x\\u0000y", "\\ud800",
    "\\udc00",   "\\udc00\\ud800",
    "a\\ud83dz", "\\ud800\\u0041",
    "caf\xff",   "\xed\xa0\x80",
    "\\u0000",   "\\udbff\\udbff\\udfff",
};
#define NBITS (sizeof bad_bits / sizeof bad_bits[0])

/* Where in an object the bits go: a value, a key, deep inside. */
static const char *const placements[] = {
    "{\"text\":\"%s\"}",
    "{\"%s\":\"v\",\"text\":\"t\"}",
    "{\"a\":{\"b\":[1,{\"c\":[\"%s\"]}]},\"text\":\"t\"}",
};
#define NPLACES (sizeof placements / sizeof placements[0])

static const char good_obj[] = "{\"text\":\"good\"}";

/* A turn in a format, three calls: %s for each call's arguments. */
typedef struct turn_shape {
    const char *format;
    const char *text;
    bool string_args; /* the arguments are a JSON string (%s a string) */
} turn_shape;

static const turn_shape shapes[] = {
    {"anthropic",
     "{\"id\":\"msg\",\"type\":\"message\",\"role\":\"assistant\",\"content\":["
     "{\"type\":\"text\",\"text\":\"Three calls.\"},"
     "{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"echo\",\"input\":%s},"
     "{\"type\":\"tool_use\",\"id\":\"c2\",\"name\":\"echo\",\"input\":%s},"
     "{\"type\":\"tool_use\",\"id\":\"c3\",\"name\":\"echo\",\"input\":%s}],"
     "\"stop_reason\":\"tool_use\"}",
     false},
    {"gemini",
     "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":["
     "{\"functionCall\":{\"name\":\"echo\",\"args\":%s}},"
     "{\"functionCall\":{\"name\":\"echo\",\"args\":%s}},"
     "{\"functionCall\":{\"name\":\"echo\",\"args\":%s}}]}}]}",
     false},
    {"mcp",
     "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
     "\"name\":\"echo\",\"arguments\":%s}},"
     "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
     "\"name\":\"echo\",\"arguments\":%s}},"
     "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
     "\"name\":\"echo\",\"arguments\":%s}}]",
     false},
    {"toolgate",
     "[{\"id\":\"c1\",\"tool\":\"echo\",\"args\":%s},"
     "{\"id\":\"c2\",\"tool\":\"echo\",\"args\":%s},"
     "{\"id\":\"c3\",\"tool\":\"echo\",\"args\":%s}]",
     false},
    {"toolgate",
     "{\"id\":\"c1\",\"tool\":\"echo\",\"args\":%s}\n"
     "{\"id\":\"c2\",\"tool\":\"echo\",\"args\":%s}\n"
     "{\"id\":\"c3\",\"tool\":\"echo\",\"args\":%s}\n",
     false},
    {"toolgate",
     "{\"id\":\"c1\",\"tool\":\"echo\",\"args\":%s}\n"
     "{\"id\":\"c2\",\"tool\":\"echo\",\"args\":%s}\n"
     "{\"id\":\"c3\",\"tool\":\"echo\",\"args\":%s}\n",
     true},
    {"openai-chat",
     "{\"id\":\"x\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
     "\"finish_reason\":\"tool_calls\",\"message\":{\"role\":\"assistant\","
     "\"content\":null,\"tool_calls\":["
     "{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"echo\","
     "\"arguments\":%s}},"
     "{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"echo\","
     "\"arguments\":%s}},"
     "{\"id\":\"c3\",\"type\":\"function\",\"function\":{\"name\":\"echo\","
     "\"arguments\":%s}}]}}]}",
     true},
    {"openai-responses",
     "{\"id\":\"r\",\"object\":\"response\",\"status\":\"completed\","
     "\"output\":["
     "{\"type\":\"function_call\",\"id\":\"fc1\",\"call_id\":\"c1\","
     "\"name\":\"echo\",\"arguments\":%s},"
     "{\"type\":\"function_call\",\"id\":\"fc2\",\"call_id\":\"c2\","
     "\"name\":\"echo\",\"arguments\":%s},"
     "{\"type\":\"function_call\",\"id\":\"fc3\",\"call_id\":\"c3\","
     "\"name\":\"echo\",\"arguments\":%s}]}",
     true},
};

/* s as the inside of a JSON string: quotes and backslashes escaped (so an
 * escape in s is an escape of the inner text, not of the string). */
static void quote_into(char *out, size_t size, const char *s, bool escape)
{
    size_t n = 0;
    out[n++] = '"';
    for (; *s != '\0' && n + 3 < size; s++) {
        if (*s == '"' || (escape && *s == '\\'))
            out[n++] = '\\';
        out[n++] = *s;
    }
    out[n++] = '"';
    out[n] = '\0';
}

/* The arguments of one call as the shape writes them: an object, or the
 * JSON string of it - with the bits' escapes in the outer string (the
 * decoded string holds the bytes) or escaped for the inner text. */
static void args_text(char *out, size_t size, const char *obj, bool string,
                      bool inner)
{
    if (!string)
        snprintf(out, size, "%s", obj);
    else
        quote_into(out, size, obj, inner);
}

/* Parses text and checks the turn: three calls, call `bad` (or none: 3)
 * MALFORMED_ARGUMENTS and final, the others with their arguments. */
static void expect_one_bad(const char *text, size_t len, const char *format,
                           size_t bad, const char *label)
{
    tg_turn *turn = NULL;
    tg_error err = {0};
    if (tg_turn_parse(text, len, NULL, "t", &turn, &err) != 0)
        fail_msg("%s: refused: %s\n%.*s", label, err.message, (int)len, text);
    if (strcmp(turn->format, format) != 0 || turn->n != 3)
        fail_msg("%s: read as %s with %zu calls", label, turn->format, turn->n);
    for (size_t i = 0; i < 3; i++) {
        const tg_call *c = turn->calls[i];
        /* a document's parser drops what it checked (a stream's events
         * are checked against where arguments go) */
        if (c->bad_args_src != NULL && strstr(label, "stream") == NULL)
            fail_msg("%s: call %zu still holds the document", label, i);
        if (i != bad) {
            if (c->pre_error_code != NULL || c->args_text == NULL ||
                strstr(c->args_text, "good") == NULL)
                fail_msg("%s: good call %zu: %s", label, i,
                         c->pre_error_message ? c->pre_error_message : "?");
            continue;
        }
        if (c->pre_error_code == NULL ||
            strcmp(c->pre_error_code, "MALFORMED_ARGUMENTS") != 0 ||
            c->args_text != NULL)
            fail_msg("%s: call %zu not MALFORMED_ARGUMENTS (%s)", label, i,
                     c->pre_error_code ? c->pre_error_code : "none");
    }
    tg_turn_free(turn);
}

/* Call c2's arguments hold each bit at each place, in every shape. */
static void test_whole_documents(void **state)
{
    (void)state;
    char obj[256], a1[512], a2[512], a3[512], text[4096], label[128];
    int n = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t b = 0; b < NBITS; b++)
            for (size_t p = 0; p < NPLACES; p++)
                for (int inner = 0; inner <= (int)shapes[s].string_args;
                     inner++) {
                    snprintf(obj, sizeof obj, placements[p], bad_bits[b]);
                    args_text(a1, sizeof a1, good_obj, shapes[s].string_args,
                              false);
                    args_text(a2, sizeof a2, obj, shapes[s].string_args, inner);
                    args_text(a3, sizeof a3, good_obj, shapes[s].string_args,
                              false);
                    int len =
                        snprintf(text, sizeof text, shapes[s].text, a1, a2, a3);
                    snprintf(label, sizeof label, "%s%s, bit %zu, place %zu%s",
                             shapes[s].format,
                             shapes[s].string_args ? " (string)" : "", b, p,
                             inner ? ", escaped inside" : "");
                    expect_one_bad(text, (size_t)len, shapes[s].format, 1,
                                   label);
                    n++;
                }
    assert_true(n > 250);
}

/* The message names what and where, and the error is final. */
static void test_message_and_final(void **state)
{
    (void)state;
    static const char text[] =
        "{\"id\":\"msg\",\"type\":\"message\",\"role\":\"assistant\","
        "\"content\":[{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"echo\","
        "\"input\":{\"text\":\"good\"}},{\"type\":\"tool_use\",\"id\":\"c2\","
        "\"name\":\"echo\",\"input\":{\"path\":\"a\",\"files\":[{\"name\":"
        "\"b\",\"content\":\"x\\ud800\"}]}},{\"type\":\"tool_use\",\"id\":"
        "\"c3\",\"name\":\"echo\",\"input\":{\"text\":\"good\"}}]}";
    tg_turn *turn = NULL;
    tg_error err = {0};
    assert_int_equal(
        tg_turn_parse(text, sizeof text - 1, NULL, "t", &turn, &err), 0);
    const tg_call *c = turn->calls[1];
    assert_string_equal(c->pre_error_message,
                        "arguments of call 'c2' hold an unpaired surrogate "
                        "\\uD800 in the string at /files/0/content; no tool "
                        "gets such bytes");
    assert_true(c->args_unrepairable);
    tg_turn_free(turn);

    static const char chat[] =
        "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
        "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":"
        "{\"name\":\"echo\",\"arguments\":\"{\\\"text\\\":\\\"ab\\u0000\\\"}\""
        "}}]}}]}";
    assert_int_equal(
        tg_turn_parse(chat, sizeof chat - 1, NULL, "t", &turn, &err), 0);
    c = turn->calls[0];
    assert_string_equal(c->pre_error_message,
                        "arguments of call 'c1' hold U+0000 (NUL) at byte 11 "
                        "of the arguments string; no tool gets such bytes");
    assert_true(c->args_unrepairable);
    /* the raw string is text: U+FFFD where the bytes were */
    assert_string_equal(tg_call_args_raw(c), "{\"text\":\"ab\xEF\xBF\xBD\"}");
    tg_turn_free(turn);
}

/* Bytes no tool gets outside any call's arguments refuse the document. */
static void test_outside_arguments(void **state)
{
    (void)state;
    static const struct {
        const char *text, *where;
    } cases[] = {
        {"{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":"
         "\"tool_use\",\"id\":\"c1\",\"name\":\"echo\",\"input\":{}},{\"type\":"
         "\"tool_use\",\"id\":\"c\\u0000\",\"name\":\"echo\",\"input\":{}}]}",
         "the string at /content/1/id holds U+0000 (NUL)"},
        {"{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":"
         "\"tool_use\",\"id\":\"c1\",\"name\":\"ec\\udc00ho\",\"input\":{}}]}",
         "the string at /content/0/name holds an unpaired surrogate \\uDC00"},
        {"{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":"
         "\"text\",\"text\":\"cut \\ud83d\"},{\"type\":\"tool_use\",\"id\":"
         "\"c1\",\"name\":\"echo\",\"input\":{}}]}",
         "the string at /content/0/text"},
        {"{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":"
         "\"tool_use\\u0000x\",\"id\":\"c1\",\"name\":\"echo\",\"input\":{}}]}",
         "the string at /content/0/type"},
        {"{\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{"
         "\"name\":\"echo\",\"args\":{}, \"x\\ud800\":1}}]}}]}",
         "the key at /candidates/0/content/parts/0/functionCall/x\\uD800"},
        {"{\"jsonrpc\":\"2.0\",\"id\":\"r\\u0000\",\"method\":\"tools/call\","
         "\"params\":{\"name\":\"echo\",\"arguments\":{}}}",
         "the string at /id"},
        {"{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
         "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{"
         "\"name\":\"echo\\u0000\",\"arguments\":\"{}\"}}]}}]}",
         "the string at /choices/0/message/tool_calls/0/function/name"},
        {"{\"id\":\"c1\",\"tool\":\"echo\",\"args\":{}}\n"
         "{\"id\":\"c2\",\"tool\":\"ec\xffho\",\"args\":{}}\n",
         "the string at /tool holds the byte 0xFF"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tg_turn *turn = NULL;
        tg_error err = {0};
        int rc = tg_turn_parse(cases[i].text, strlen(cases[i].text), NULL, "t",
                               &turn, &err);
        if (rc == 0)
            fail_msg("case %zu: read", i);
        if (strstr(err.message, cases[i].where) == NULL ||
            strstr(err.message, "outside any call's arguments") == NULL)
            fail_msg("case %zu: message '%s' lacks '%s'", i, err.message,
                     cases[i].where);
    }
}

/* ------------------------------------------------------------ streams */

typedef struct sse {
    char *text;
    size_t len, cap;
} sse;

static void put(sse *s, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(s->text + s->len, s->cap - s->len, fmt, ap);
        va_end(ap);
        assert_true(n >= 0);
        if ((size_t)n < s->cap - s->len) {
            s->len += (size_t)n;
            return;
        }
        s->cap = (s->cap + (size_t)n) * 2;
        s->text = realloc(s->text, s->cap);
        assert_non_null(s->text);
    }
}

/* A provider's stream of three calls, c2's arguments `bad` (an object; in
 * two string pieces where the provider sends pieces, split after the brace
 * so that no escape is cut). Object-form streams may send them whole
 * (Anthropic's block start, Gemini). */
static void make_stream(sse *s, const char *provider, const char *bad,
                        bool inner)
{
    s->len = 0;
    const char *objs[3] = {good_obj, bad, good_obj};
    char q[512];
    if (strcmp(provider, "anthropic-input") == 0 ||
        strcmp(provider, "anthropic") == 0) {
        bool whole = strcmp(provider, "anthropic-input") == 0;
        put(s, "event: message_start\ndata: {\"type\":\"message_start\","
               "\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":"
               "\"assistant\",\"content\":[]}}\n\n");
        for (int i = 0; i < 3; i++) {
            put(s,
                "event: content_block_start\ndata: {\"type\":"
                "\"content_block_start\",\"index\":%d,\"content_block\":{"
                "\"type\":\"tool_use\",\"id\":\"c%d\",\"name\":\"echo\","
                "\"input\":%s}}\n\n",
                i, i + 1, whole ? objs[i] : "{}");
            if (!whole) {
                char a[256], b[256];
                snprintf(a, sizeof a, "%.1s", objs[i]);
                snprintf(b, sizeof b, "%s", objs[i] + 1);
                for (int k = 0; k < 2; k++) {
                    quote_into(q, sizeof q, k ? b : a, inner);
                    put(s,
                        "event: content_block_delta\ndata: {\"type\":"
                        "\"content_block_delta\",\"index\":%d,\"delta\":{"
                        "\"type\":\"input_json_delta\",\"partial_json\":%s}}"
                        "\n\n",
                        i, q);
                }
            }
            put(s,
                "event: content_block_stop\ndata: {\"type\":"
                "\"content_block_stop\",\"index\":%d}\n\n",
                i);
        }
        put(s, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    } else if (strcmp(provider, "openai-chat") == 0) {
        for (int i = 0; i < 3; i++) {
            quote_into(q, sizeof q, objs[i], inner);
            put(s,
                "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{"
                "\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%d,\"id\":"
                "\"c%d\",\"type\":\"function\",\"function\":{\"name\":"
                "\"echo\",\"arguments\":%s}}]}}]}\n\n",
                i, i + 1, q);
        }
        put(s, "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{"
               "\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}"
               "\n\ndata: [DONE]\n\n");
    } else if (strcmp(provider, "openai-responses") == 0) {
        for (int i = 0; i < 3; i++) {
            quote_into(q, sizeof q, objs[i], inner);
            put(s,
                "event: response.output_item.added\ndata: {\"type\":"
                "\"response.output_item.added\",\"output_index\":%d,\"item\":"
                "{\"type\":\"function_call\",\"id\":\"fc%d\",\"call_id\":"
                "\"c%d\",\"name\":\"echo\",\"arguments\":\"\"}}\n\n"
                "event: response.function_call_arguments.delta\ndata: {"
                "\"type\":\"response.function_call_arguments.delta\","
                "\"output_index\":%d,\"item_id\":\"fc%d\",\"delta\":%s}\n\n"
                "event: response.function_call_arguments.done\ndata: {"
                "\"type\":\"response.function_call_arguments.done\","
                "\"output_index\":%d,\"item_id\":\"fc%d\",\"arguments\":%s}"
                "\n\n",
                i, i + 1, i + 1, i, i + 1, q, i, i + 1, q);
        }
    } else { /* gemini */
        for (int i = 0; i < 3; i++)
            put(s,
                "data: {\"candidates\":[{\"content\":{\"role\":\"model\","
                "\"parts\":[{\"functionCall\":{\"id\":\"c%d\",\"name\":"
                "\"echo\",\"args\":%s}}]}}]}\n\n",
                i + 1, objs[i]);
    }
}

static const char *stream_format(const char *provider)
{
    return strncmp(provider, "anthropic", 9) == 0 ? "anthropic" : provider;
}

/* The same through tg_stream, fed in chunks of `chunk` bytes. */
static void expect_one_bad_chunked(const sse *s, size_t chunk,
                                   const char *label)
{
    tg_stream *st = NULL;
    tg_error err = {0};
    tg_turn *turn = NULL;
    assert_int_equal(tg_stream_new(NULL, &st, &err), 0);
    for (size_t i = 0; i < s->len; i += chunk) {
        size_t n = s->len - i < chunk ? s->len - i : chunk;
        if (tg_stream_feed(st, s->text + i, n, &err) != 0)
            fail_msg("%s: feed: %s", label, err.message);
    }
    if (tg_stream_finish(st, &turn, &err) != 0)
        fail_msg("%s: finish: %s", label, err.message);
    assert_int_equal(turn->n, 3);
    assert_non_null(turn->calls[0]->args_text);
    assert_string_equal(turn->calls[1]->pre_error_code, "MALFORMED_ARGUMENTS");
    assert_non_null(turn->calls[2]->args_text);
    tg_turn_free(turn);
    tg_stream_free(st);
}

static void test_streams(void **state)
{
    (void)state;
    static const char *const providers[] = {"anthropic", "anthropic-input",
                                            "openai-chat", "openai-responses",
                                            "gemini"};
    sse s = {NULL, 0, 0};
    char obj[256], label[128];
    int n = 0;
    for (size_t v = 0; v < sizeof providers / sizeof providers[0]; v++) {
        bool pieces = strcmp(providers[v], "anthropic") == 0 ||
                      strncmp(providers[v], "openai", 6) == 0;
        for (size_t b = 0; b < NBITS; b++)
            for (size_t p = 0; p < NPLACES; p++)
                for (int inner = 0; inner <= (int)pieces; inner++) {
                    snprintf(obj, sizeof obj, placements[p], bad_bits[b]);
                    make_stream(&s, providers[v], obj, inner);
                    snprintf(label, sizeof label,
                             "%s stream, bit %zu, "
                             "place %zu%s",
                             providers[v], b, p,
                             inner ? ", escaped inside" : "");
                    expect_one_bad(s.text, s.len, stream_format(providers[v]),
                                   1, label);
                    if (p == 0)
                        expect_one_bad_chunked(&s, 7, label);
                    n++;
                }
    }
    assert_true(n > 150);
    /* Outside the arguments: the stream is refused, naming the event. */
    static const char *const outside[] = {
        "event: content_block_start\ndata: {\"type\":\"content_block_start\","
        "\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":"
        "\"c\\u0000\",\"name\":\"echo\",\"input\":{}}}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":"
        "0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":"
        "\"function\",\"function\":{\"name\":\"ec\\ud800ho\",\"arguments\":"
        "\"{}\"}}]}}]}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
        "\"index\":0,\"delta\":{\"type\":\"input_json_delta\\u0000\","
        "\"partial_json\":\"{}\"}}\n\n",
        "data: {\"candidates\":[{\"content\":{\"role\":\"mo\\udc00del\","
        "\"parts\":[]}}]}\n\n",
    };
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
        tg_turn *turn = NULL;
        tg_error err = {0};
        if (tg_turn_parse(outside[i], strlen(outside[i]), NULL, "t", &turn,
                          &err) == 0)
            fail_msg("outside %zu: read", i);
        if (strstr(err.message, "event 1 (ending on line") == NULL ||
            strstr(err.message, "outside the arguments of any call") == NULL)
            fail_msg("outside %zu: %s", i, err.message);
    }
    free(s.text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_documents),
        cmocka_unit_test(test_message_and_final),
        cmocka_unit_test(test_outside_arguments),
        cmocka_unit_test(test_streams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
