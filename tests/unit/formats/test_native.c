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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "record.h"
#include "tg_test.h"
#include "timeutil.h"
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

/* ------------------------------------------------------------ fast lines */

/* The source tree: $TG_SOURCE_DIR (set by ctest), else derived from this
 * file's path as the compiler saw it. */
/* Whether the call was made by the line reader's fast path: only it makes
 * the record and its arguments' tape in one allocation (the document path
 * sets the arguments on a record made first, so the tape has its own). */
static int took_fast(const tg_call *c)
{
    return c->args_text != NULL && c->args_tape.mem == NULL;
}

static void same_json(const json_t *a, const json_t *b)
{
    if (a == NULL || b == NULL) {
        assert_true(a == b);
        return;
    }
    assert_true(json_equal(a, b));
}

static void same_str(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        assert_true(a == b);
    else
        assert_string_equal(a, b);
}

/* Everything a call record holds, but the clock's created_at/updated_at
 * when the line did not carry them (each reading asks the clock). */
static void same_call(const tg_call *a, const tg_call *b)
{
    assert_string_equal(a->id, b->id);
    assert_string_equal(a->tool, b->tool);
    assert_true((a->args_text == NULL) == (b->args_text == NULL));
    if (a->args_text != NULL) {
        assert_int_equal(a->args_len, b->args_len);
        assert_memory_equal(a->args_text, b->args_text, a->args_len);
        assert_int_equal(a->args_tape.n, b->args_tape.n);
        for (size_t i = 0; i < a->args_tape.n; i++) {
            const tg__jtok *x = &a->args_tape.tok[i], *y = &b->args_tape.tok[i];
            assert_int_equal(x->kind, y->kind);
            assert_int_equal(x->flags, y->flags);
            assert_int_equal(x->a, y->a);
            assert_int_equal(x->b, y->b);
        }
        same_json(tg__call_args(a), tg__call_args(b));
    }
    same_str(tg_call_args_raw(a), tg_call_args_raw(b));
    assert_int_equal(tg__call_args_size(a), tg__call_args_size(b));
    same_str(a->checksum_in, b->checksum_in);
    same_str(a->caller_id, b->caller_id);
    same_json(a->context, b->context);
    same_json(a->skills, b->skills);
    same_json(tg__call_meta(a), tg__call_meta(b));
    assert_string_equal(a->format, b->format);
    assert_int_equal(a->index, b->index);
    assert_int_equal(a->completed_at, b->completed_at);
    assert_int_equal(a->inline_output, b->inline_output);
    assert_int_equal(a->from_artifact_tool, b->from_artifact_tool);
    same_str(a->pre_error_code, b->pre_error_code);
    same_str(a->pre_error_message, b->pre_error_message);
    same_str(tg_call_checksum(a), tg_call_checksum(b));
    same_str(tg_call_args_json(a), tg_call_args_json(b));
}

/* Reads text with parse_text (fast lines where they apply) and line by
 * line with the document path (each line a jansson document given to
 * parse, which reads one record as tg__call_from_json does); the calls
 * must be the same. Returns how many the fast path made. */
static size_t check_lines(const char *text, size_t len)
{
    tg_turn *fast = tg__turn_new("toolgate");
    tg_turn *doc = tg__turn_new("toolgate");
    assert_non_null(fast);
    assert_non_null(doc);
    tg_error err;
    if (tg__format_native.parse_text(fast, text, len, "t", &err) != 0)
        fail_msg("parse_text failed: %s", err.message);
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        size_t k = i;
        while (k < end &&
               (text[k] == ' ' || text[k] == '\t' || text[k] == '\r'))
            k++;
        if (k < end) {
            json_error_t jerr;
            json_t *obj = json_loadb(text + i, end - i, JSON_DECODE_ANY,
                                     &jerr); /* new ref */
            assert_non_null(obj);
            assert_true(json_is_object(obj));
            assert_int_equal(tg__format_native.parse(doc, obj, &err), 0);
            json_decref(obj);
        }
        i = end + 1;
    }
    assert_int_equal(fast->n, doc->n);
    size_t taken = 0;
    for (size_t j = 0; j < fast->n; j++) {
        same_call(fast->calls[j], doc->calls[j]);
        taken += took_fast(fast->calls[j]);
        assert_false(took_fast(doc->calls[j]));
    }
    tg_turn_free(fast);
    tg_turn_free(doc);
    return taken;
}

static void test_fast_lines_golden(void **state)
{
    (void)state;
    static const char *const cases[] = {"basic", "string_args",
                                        "with_checksum_and_context"};
    char dir[4096], path[4200];
    tg_test_source_path(dir, sizeof dir, "tests/data/formats/toolgate");
    size_t taken = 0, inputs = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = 0;
        snprintf(path, sizeof path, "%s/%s/input", dir, cases[i]);
        char *text = tg_test_read_file(path, &len);
        if (text == NULL)
            fail_msg("missing %s", path);
        taken += check_lines(text, len);
        inputs++;
        free(text);
    }
    assert_int_equal(inputs, 3);
    /* basic: 3, string_args: 1 (the object string; "" and the bad string
     * take the general path, the absent args the fast one) */
    assert_true(taken >= 4);
}

static void test_fast_lines_crafted(void **state)
{
    (void)state;
    /* Lines the fast path takes. */
    static const char *const fast[] = {
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":{\"k\":1}}",
        "  {\"tool\":\"t\" , \"args\" : {\"k\":[1,true,null,\"x\"]},"
        "\"id\":\"b\"}  \r",
        "{\"id\":\"c\",\"tool\":\"\",\"args\":{}}",
        "{\"id\":\"d\",\"tool\":\"t\"}",
        "{\"id\":\"\\u00e9\\n\\\"\",\"tool\":\"t\\/x\",\"args\":{\"a\":"
        "\"\\u001F\\\"\\\\\"}}",
        "{\"id\":\"e\",\"tool\":\"t\",\"args\":\"{\\\"p\\\": 1}\"}",
        "{\"id\":\"f\",\"tool\":\"t\",\"args\":{\"x\":{\"y\":{\"z\":[]}}}}",
        "{\"id\":\"g\",\"tool\":\"t\",\"args\":{\"n\":-12,\"u\":\"\xc3\xa9\"}}",
        "{\"\\u0069d\":\"h\",\"tool\":\"t\",\"args\":{}}",
    };
    /* Lines it leaves to the document path: the same calls either way. */
    static const char *const slow[] = {
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":{\"k\":1.5}}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":{\"k\": 1}}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":{\"k\":\"\\/\"}}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":{\"k\":\"\\u0041\"}}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":{\"k\":\"\\u001f\"}}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":{\"k\":1,\"k\":2}}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":{\"k\":-0}}",
        "{\"id\":\"a\",\"id\":\"b\",\"tool\":\"t\"}",
        "{\"id\":\"a\",\"tool\":\"t\",\"tool\":\"u\"}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":{},\"args\":{\"k\":1}}",
        "{\"id\":7,\"tool\":\"t\"}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":null}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":[1]}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":3}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":\"\"}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":\"[1]\"}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":\"{\\\"x\"}",
        "{\"id\":\"a\",\"tool\":\"t\",\"arguments\":{\"k\":1}}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":{},\"caller_id\":\"me\"}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":{},\"index\":5}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":{},\"inline\":false}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":{},\"created_at\":1767323045}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":{},\"meta\":{\"x\":1}}",
        "{\"id\":\"a\",\"tool\":\"t\",\"args\":{\"k\":1},\"args_raw\":\"{}\"}",
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof fast / sizeof fast[0]; i++) {
        if (check_lines(fast[i], strlen(fast[i])) != 1)
            fail_msg("the fast path did not take: %s", fast[i]);
        total += strlen(fast[i]) + 1;
    }
    for (size_t i = 0; i < sizeof slow / sizeof slow[0]; i++) {
        if (check_lines(slow[i], strlen(slow[i])) != 0)
            fail_msg("the fast path took: %s", slow[i]);
        total += strlen(slow[i]) + 1;
    }
    /* All of them as one text, fast and slow lines mixed, blank lines in
     * between: the same calls, indexes in order. */
    tg__buf all;
    tg__buf_init(&all, 0);
    for (size_t i = 0; i < sizeof slow / sizeof slow[0]; i++) {
        tg__buf_puts(&all, slow[i]);
        tg__buf_puts(&all, "\n\t \n");
        if (i < sizeof fast / sizeof fast[0]) {
            tg__buf_puts(&all, fast[i]);
            tg__buf_puts(&all, "\n");
        }
    }
    assert_int_equal(check_lines(all.data, all.len),
                     sizeof fast / sizeof fast[0]);
    assert_true(all.len >= total);
    tg__buf_cleanup(&all);

    /* Lines neither reading takes: the error names the line as before. */
    tg_error err;
    assert_int_equal(parse_fails("{\"id\":\"a\",\"tool\":\"t\"}\n"
                                 "{\"id\":\"\",\"tool\":\"t\"}\n",
                                 "toolgate", &err),
                     TG_EPARSE);
    assert_string_equal(err.message, "calls.jsonl:2: call record: field 'id' "
                                     "must be a non-empty string");
    assert_int_equal(parse_fails("{\"id\":\"a\",\"tool\":\"t\"}\n"
                                 "{\"id\":\"b\",\"tool\":\"t\",\"args\":{}}x\n",
                                 "toolgate", &err),
                     TG_EPARSE);
    assert_int_equal(err.line, 2);
    assert_int_equal(parse_fails("{\"id\":\"a\",\"tool\":\"t\"}\n"
                                 "{\"id\":\"b\\u0000\",\"tool\":\"t\"}\n",
                                 "toolgate", &err),
                     TG_EPARSE);
    assert_int_equal(err.line, 2);
    assert_int_equal(parse_fails("{\"id\":\"a\",\"tool\":\"t\"}\n"
                                 "{\"id\":\"b\",\"tool\":\"t\",\"args\":{\"n\":"
                                 "123456789012345678901}}\n",
                                 "toolgate", &err),
                     TG_EPARSE);
    assert_int_equal(err.line, 2);
    assert_non_null(strstr(err.message, "too big integer"));
    /* Arguments nested deeper than jansson reads. */
    tg__buf deep;
    tg__buf_init(&deep, 0);
    tg__buf_puts(&deep, "{\"id\":\"a\",\"tool\":\"t\"}\n"
                        "{\"id\":\"b\",\"tool\":\"t\",\"args\":");
    for (int i = 0; i < 3000; i++)
        tg__buf_puts(&deep, "{\"k\":");
    tg__buf_puts(&deep, "1");
    for (int i = 0; i < 3000; i++)
        tg__buf_puts(&deep, "}");
    tg__buf_puts(&deep, "}\n");
    assert_int_equal(parse_fails(deep.data, "toolgate", &err), TG_EPARSE);
    assert_int_equal(err.line, 2);
    tg__buf_cleanup(&deep);
}

/* ------------------------------------------------------------ direct render
 */

/* A duration_ms no test result has: where the reference writes it, the
 * expected text of the duration goes. */
#define DURATION_MARK 987654321987LL

/* The reference rendering: each result's record built as a jansson object
 * (docs/records.md's members in order) and dumped by jansson, one a line, with
 * the duration written as want_ms[i] (jansson would print 17 digits).
 * TG_ENOMEM where jansson refuses the record. */
static int render_jansson(const tg_turn *turn, const char *const *want_ms,
                          tg__buf *out)
{
    for (size_t i = 0; i < turn->n; i++) {
        const tg_result *r = turn->results[i];
        char when[TG_TIME_MAX];
        tg__time_format(r->completed_at, when);
        json_t *o = json_pack(
            "{s:s, s:s, s:s, s:s, s:O, s:O, s:O, s:I, s:o, s:s}", "id", r->id,
            "tool", r->tool, "outcome", tg_outcome_name(r->outcome),
            "execution", tg_execution_name(r->execution), "payload",
            tg__result_payload(r), "content",
            r->content ? r->content : json_null(), "artifact",
            r->artifact ? r->artifact : json_null(), "duration_ms",
            (json_int_t)DURATION_MARK, "exit_status",
            r->exit_status >= 0 ? json_integer(r->exit_status) : json_null(),
            "completed_at", when); /* new ref */
        if (o == NULL)
            return TG_ENOMEM;
        if (r->replayed)
            json_object_set_new(o, "replayed", json_true());
        char *text = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        if (text == NULL)
            return TG_ENOMEM;
        char *mark = strstr(text, "\"duration_ms\":987654321987,");
        assert_non_null(mark);
        mark += strlen("\"duration_ms\":");
        tg__buf_append(out, text, (size_t)(mark - text));
        tg__buf_puts(out, want_ms[i]);
        tg__buf_puts(out, mark + strlen("987654321987"));
        tg__buf_append(out, "\n", 1);
        free(text);
    }
    return 0;
}

static tg_call *add_call(tg_turn *turn, const char *id, const char *tool)
{
    tg_call *c = tg__call_new(id, tool, "toolgate");
    assert_non_null(c);
    assert_int_equal(tg__turn_add_call(turn, c), 0);
    return c;
}

static void set(tg_turn *turn, tg_result *r)
{
    assert_non_null(r);
    assert_int_equal(tg__turn_set_result(turn, turn->n - 1, r), 0);
}

static void test_render_direct(void **state)
{
    (void)state;
    static const char *const ids[] = {"call_1", "",
                                      "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
                                      "q\"b\\s/\x01\x1f", "tab\there\nnl"};
    /* Durations in milliseconds to the microsecond, in their shortest form
     * with ".0" on whole numbers; beyond 10^12 ms, not rounded. */
    static const struct {
        double ms;
        const char *text;
    } durations[] = {{0, "0.0"},
                     {1, "1.0"},
                     {12.5, "12.5"},
                     {-3, "-3.0"},
                     {33.560282000000001, "33.56"},
                     {41.142023, "41.142"},
                     {151.96020899999999, "151.96"},
                     {9.3319150000000004, "9.332"},
                     {0.0005, "0.001"},
                     {0.00049, "0.0"},
                     {999.9996, "1000.0"},
                     {-0.0, "0.0"},
                     {0.1, "0.1"},
                     {2.5e-7, "0.0"},
                     {123456.789, "123456.789"},
                     {86400000.0004, "86400000.0"},
                     {999999999999.9991, "999999999999.999"},
                     {1e15, "1000000000000000.0"},
                     {9007199254740991.0, "9007199254740991.0"},
                     {1e16, "10000000000000000.0"},
                     {4.0e17, "400000000000000000.0"},
                     {1e21, "1e+21"},
                     {1e300, "1e+300"},
                     {-1e-300, "0.0"},
                     {3.0, "3.0"}};
    const char *want_ms[64];
    tg_turn *turn = tg__turn_new("toolgate");
    assert_non_null(turn);
    size_t n = 0;
    for (size_t k = 0; k < 60; k++) {
        const char *id = ids[k % 5];
        tg_call *c = add_call(turn, id, k % 3 ? "read_file" : "t\xc3\xa9");
        tg_result *r = NULL;
        switch (k % 10) {
        case 0:
            r = tg__result_success(
                c, json_pack("{s:[i,f,s,b,n]}", "a", 1, 0.5, "x\ny", 1));
            break;
        case 1:
            r = tg__result_success(c, json_string("42 matches \"q\" \\ \x7f"));
            break;
        case 2: {
            static const char text[] =
                "{\"lines\":[\"a\",\"\\u0001\"],\"n\":3}";
            r = tg__result_success_text(c, text, sizeof text - 1);
            break;
        }
        case 3:
            r = tg__result_error(c, TG_EXECUTION_FINISHED, "EXIT_STATUS",
                                 json_pack("[{s:s}]", "path", "/x"),
                                 "exit status %zu", k);
            break;
        case 4:
            r = tg__result_canceled(c, TG_EXECUTION_STARTED, "user",
                                    "interrupted");
            break;
        case 5:
            r = tg__result_timeout(c, (int64_t)k * 1000);
            break;
        case 6:
            r = tg__result_denied(c, "policy says no");
            break;
        case 7:
            r = tg__result_success(c, json_integer((json_int_t)k));
            break;
        case 8:
            r = tg__result_success_text(c, "\"text \\\" payload\"", 18);
            break;
        default:
            r = tg__result_success(c, json_null());
            break;
        }
        assert_non_null(r);
        size_t d = k % (sizeof durations / sizeof *durations);
        r->duration_ms = durations[d].ms;
        want_ms[k] = durations[d].text;
        r->exit_status = k % 4 == 0 ? -1 : (int)(k % 4) * 60;
        r->replayed = k % 7 == 0;
        r->completed_at = k % 11 == 0 ? 0 : 1767323045000 + (int64_t)k * 7;
        if (k % 6 == 0)
            r->content = json_pack("[{s:s, s:s}]", "type", "text", "text",
                                   "hello \xe2\x82\xac");
        if (k % 8 == 1)
            r->artifact =
                json_pack("{s:s, s:I, s:s}", "id", "art_1", "bytes",
                          (json_int_t)123456, "media_type", "text/plain");
        if (k % 9 == 0)
            assert_non_null(tg_result_payload_json(r)); /* a cached text */
        set(turn, r);
        n++;
    }
    assert_int_equal(turn->n, n);
    tg__buf a, b;
    tg_error err;
    tg__buf_init(&a, 0);
    tg__buf_init(&b, 0);
    assert_int_equal(tg__format_native.render(turn, &a, &err), 0);
    assert_int_equal(render_jansson(turn, want_ms, &b), 0);
    assert_string_equal(a.data, b.data);
    assert_non_null(strstr(a.data, "\"replayed\":true"));
    assert_non_null(strstr(a.data, "\"duration_ms\":33.56,\"exit_status\""));
    assert_non_null(strstr(a.data, "e+300,\"exit_status\""));
    /* The result keeps the clock's value: only the text is rounded. */
    assert_true(turn->results[4]->duration_ms == 33.560282000000001);

    /* What has no JSON form is refused: an id that is not UTF-8, a
     * duration that is not a number. */
    tg__buf limited;
    tg__buf_init(&limited, 64);
    assert_int_not_equal(tg__format_native.render(turn, &limited, &err), 0);
    tg__buf_cleanup(&limited);
    tg_call *bad = add_call(turn, "x\xff", "t");
    set(turn, tg__result_success(bad, json_true()));
    assert_int_equal(tg__format_native.render(turn, &a, &err), TG_EINVAL);
    turn->results[turn->n - 1]->id[1] = 'y';
    turn->results[turn->n - 1]->duration_ms = NAN;
    assert_int_equal(tg__format_native.render(turn, &a, &err), TG_EINVAL);
    turn->results[turn->n - 1]->duration_ms = INFINITY;
    assert_int_equal(tg__format_native.render(turn, &a, &err), TG_EINVAL);
    turn->results[turn->n - 1]->duration_ms = 4.25;
    want_ms[turn->n - 1] = "4.25";
    a.len = b.len = 0;
    assert_int_equal(tg__format_native.render(turn, &a, &err), 0);
    assert_int_equal(render_jansson(turn, want_ms, &b), 0);
    assert_string_equal(a.data, b.data);
    tg__buf_cleanup(&a);
    tg__buf_cleanup(&b);
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
        cmocka_unit_test(test_fast_lines_golden),
        cmocka_unit_test(test_fast_lines_crafted),
        cmocka_unit_test(test_render_direct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
