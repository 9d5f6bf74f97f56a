/* SPDX-License-Identifier: MIT */
/*
 * test_payload_text.c - the text a model reads of a command that ran and
 * did not succeed (format.c): what happened (the error's message, or the
 * deadline), then what it printed, stdout and stderr labelled when both
 * were written, in the trust envelope when the result is untrusted. Every
 * renderer for models shows the same text (openai-chat, openai-responses,
 * anthropic, gemini, mcp), whether or not the payload's JSON text was asked
 * for first; records (--to toolgate) keep the payload as it is; a result
 * journaled before results carried output (EXIT_STATUS without details)
 * renders as before.
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
#include "tg_test.h"
#include "turn.h"

/* A turn of n calls c0..c(n-1) of tool "t". */
static tg_turn *turn_of(size_t n)
{
    tg_turn *turn = tg__turn_new("toolgate");
    assert_non_null(turn);
    for (size_t i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "c%zu", i);
        tg_call *c = tg__call_new_args(id, "t", "toolgate", "{}", 2);
        assert_non_null(c);
        assert_int_equal(tg__turn_add_call(turn, c), 0);
    }
    return turn;
}

static void set_result(tg_turn *turn, size_t i, tg_result *r, bool untrusted)
{
    assert_non_null(r);
    r->untrusted = untrusted;
    assert_int_equal(tg__turn_set_result(turn, i, r), 0);
}

/* EXIT_STATUS as a command's result carries it: details with the status
 * and what was printed (stdout and stderr may be NULL: not written). */
static tg_result *exit_status(const tg_call *call, int code, const char *out,
                              const char *err)
{
    json_t *d = json_pack("{s:i}", "exit_status", code); /* new ref */
    if (out != NULL)
        json_object_set_new(d, "stdout", json_string(out));
    if (err != NULL)
        json_object_set_new(d, "stderr", json_string(err));
    tg_result *r = tg__result_error(call, TG_EXECUTION_FINISHED, "EXIT_STATUS",
                                    d, "command exited with status %d", code);
    if (r != NULL)
        r->exit_status = code;
    return r;
}

static tg_result *timeout_after(const tg_call *call, const char *out)
{
    tg_result *r = tg__result_timeout(call, 1500);
    assert_non_null(r);
    json_object_set_new(json_object_get(tg__result_payload(r), "timeout"),
                        "stdout", json_string(out));
    return r;
}

/* The text format `fmt` gives the model for result i (a new string). */
static char *rendered(const tg_turn *turn, const char *fmt, size_t i)
{
    char *out = NULL;
    size_t len = 0;
    tg_error err = {0};
    if (tg_turn_render(turn, fmt, &out, &len, &err) != 0)
        fail_msg("render %s: %s", fmt, err.message);
    json_error_t jerr;
    json_t *doc = json_loads(out, JSON_DISABLE_EOF_CHECK, &jerr); /* new ref */
    if (doc == NULL)
        fail_msg("%s output is not JSON: %s\n%s", fmt, jerr.text, out);
    const json_t *v = NULL; /* borrowed */
    if (strcmp(fmt, "openai-chat") == 0)
        v = json_object_get(json_array_get(doc, i), "content");
    else if (strcmp(fmt, "openai-responses") == 0)
        v = json_object_get(json_array_get(doc, i), "output");
    else if (strcmp(fmt, "anthropic") == 0)
        v = json_object_get(json_array_get(json_object_get(doc, "content"), i),
                            "content");
    else if (strcmp(fmt, "gemini") == 0) {
        const json_t *resp = json_object_get(
            json_object_get(json_array_get(json_object_get(doc, "parts"), i),
                            "functionResponse"),
            "response"); /* borrowed */
        v = json_object_get(resp, "error");
        if (v == NULL)
            v = json_object_get(resp, "output");
    }
    char *text = json_is_string(v) ? strdup(json_string_value(v)) : NULL;
    json_decref(doc);
    free(out);
    if (text == NULL)
        fail_msg("%s: no text for result %zu", fmt, i);
    return text;
}

/* The mcp format answers a batch (an array) of JSON-RPC responses for a
 * turn that came as several calls: the text of result i's content (a new
 * string), and whether it is an error. */
static char *mcp_text(const tg_turn *turn, size_t i, bool *is_error)
{
    char *out = NULL;
    size_t len = 0;
    tg_error err = {0};
    if (tg_turn_render(turn, "mcp", &out, &len, &err) != 0)
        fail_msg("render mcp: %s", err.message);
    json_error_t jerr;
    json_t *doc = json_loads(out, 0, &jerr); /* new ref */
    if (doc == NULL)
        fail_msg("mcp output is not JSON: %s\n%s", jerr.text, out);
    const json_t *res =
        json_object_get(json_array_get(doc, i), "result"); /* borrowed */
    *is_error = json_is_true(json_object_get(res, "isError"));
    const char *t = json_string_value(json_object_get(
        json_array_get(json_object_get(res, "content"), 0), "text"));
    char *text = t ? strdup(t) : NULL;
    json_decref(doc);
    free(out);
    if (text == NULL)
        fail_msg("mcp: no text for result %zu", i);
    return text;
}

static const char *const model_formats[] = {"openai-chat", "openai-responses",
                                            "anthropic", "gemini"};

/* The envelope's body: the text between the opening line and the closing
 * tag (a new string), or NULL when text is not enveloped. The final
 * newline of the output (the envelope adds none after it) is left out. */
static char *envelope_body(const char *text)
{
    if (strncmp(text, "<tool_output_", 13) != 0)
        return NULL;
    const char *start = strchr(text, '\n');
    const char *end = strstr(text, "</tool_output_");
    assert_non_null(start);
    assert_non_null(end);
    start++;
    size_t n = end > start ? (size_t)(end - start) : 0;
    if (n > 0 && start[n - 1] == '\n')
        n--;
    return strndup(start, n);
}

/* text without its final newline, in place */
static char *chomp(char *text)
{
    size_t n = strlen(text);
    if (n > 0 && text[n - 1] == '\n')
        text[n - 1] = '\0';
    return text;
}

/* Result i reads `want` (without a final newline) in every format for
 * models, in the envelope or bare. */
static void expect_text(const tg_turn *turn, size_t i, bool enveloped,
                        const char *want)
{
    for (size_t f = 0; f < sizeof model_formats / sizeof model_formats[0];
         f++) {
        char *got = rendered(turn, model_formats[f], i);
        char *body = envelope_body(got);
        if (enveloped != (body != NULL) ||
            strcmp(enveloped ? body : chomp(got), want) != 0)
            fail_msg("%s result %zu:\n%s\nexpected%s:\n%s", model_formats[f], i,
                     got, enveloped ? " in the envelope" : "", want);
        free(body);
        free(got);
    }
    bool is_error = false;
    char *got = mcp_text(turn, i, &is_error);
    char *body = envelope_body(got);
    if (enveloped != (body != NULL) ||
        strcmp(enveloped ? body : chomp(got), want) != 0)
        fail_msg("mcp result %zu:\n%s\nexpected:\n%s", i, got, want);
    assert_true(is_error);
    free(body);
    free(got);
}

static void test_failed_command_text(void **state)
{
    (void)state;
    for (int untrusted = 0; untrusted <= 1; untrusted++) {
        tg_turn *turn = turn_of(5);
        set_result(turn, 0,
                   exit_status(turn->calls[0], 1,
                               "t.py::a PASSED\nt.py::b FAILED\n", "warn\n"),
                   untrusted);
        set_result(turn, 1, exit_status(turn->calls[1], 2, "only out", NULL),
                   untrusted);
        set_result(turn, 2, exit_status(turn->calls[2], 3, NULL, "only err\n"),
                   untrusted);
        set_result(turn, 3, exit_status(turn->calls[3], 4, NULL, NULL),
                   untrusted);
        set_result(turn, 4, timeout_after(turn->calls[4], "test_1 ok\n"),
                   untrusted);
        expect_text(turn, 0, untrusted,
                    "command exited with status 1\n[stdout]\nt.py::a "
                    "PASSED\nt.py::b FAILED\n[stderr]\nwarn");
        /* one stream: no label; a stream without a final newline gets
         * one before the next line only */
        expect_text(turn, 1, untrusted,
                    "command exited with status 2\nonly out");
        expect_text(turn, 2, untrusted,
                    "command exited with status 3\nonly err");
        expect_text(turn, 3, untrusted, "command exited with status 4");
        expect_text(turn, 4, untrusted,
                    "timed out after 1500 ms and was stopped\ntest_1 ok");
        /* the same once the payload's JSON text was asked for (it is
         * cached, and renderers prefer a known text) */
        for (size_t i = 0; i < 5; i++)
            assert_non_null(tg_result_payload_json(turn->results[i]));
        expect_text(turn, 0, untrusted,
                    "command exited with status 1\n[stdout]\nt.py::a "
                    "PASSED\nt.py::b FAILED\n[stderr]\nwarn");
        expect_text(turn, 4, untrusted,
                    "timed out after 1500 ms and was stopped\ntest_1 ok");
        tg_turn_free(turn);
    }
}

/* Records keep the payload: the details, not the text. */
static void test_records_keep_payload(void **state)
{
    (void)state;
    tg_turn *turn = turn_of(1);
    set_result(turn, 0, exit_status(turn->calls[0], 1, "out\n", "err\n"), true);
    char *out = NULL;
    size_t len = 0;
    tg_error err = {0};
    assert_int_equal(tg_turn_render(turn, "toolgate", &out, &len, &err), 0);
    json_t *rec = json_loads(out, 0, NULL); /* new ref */
    assert_non_null(rec);
    json_t *d = json_object_get(
        json_object_get(json_object_get(rec, "payload"), "error"),
        "details"); /* borrowed */
    assert_string_equal(json_string_value(json_object_get(d, "stdout")),
                        "out\n");
    assert_string_equal(json_string_value(json_object_get(d, "stderr")),
                        "err\n");
    assert_int_equal(json_integer_value(json_object_get(d, "exit_status")), 1);
    assert_int_equal(json_integer_value(json_object_get(rec, "exit_status")),
                     1);
    json_decref(rec);
    free(out);
    tg_turn_free(turn);
}

/* What is not a command's output keeps its JSON text: an EXIT_STATUS
 * journaled before results carried output, another error with details, a
 * timeout that printed nothing. */
static void test_other_payloads_unchanged(void **state)
{
    (void)state;
    tg_turn *turn = turn_of(3);
    set_result(turn, 0,
               tg__result_error(turn->calls[0], TG_EXECUTION_FINISHED,
                                "EXIT_STATUS", NULL,
                                "command exited with status 3: disk on fire"),
               false);
    set_result(
        turn, 1,
        tg__result_error(turn->calls[1], TG_EXECUTION_FINISHED, "TOOL_FAILED",
                         json_pack("{s:s}", "stdout", "not shown"), "it broke"),
        false);
    set_result(turn, 2, tg__result_timeout(turn->calls[2], 250), false);
    char *t0 = rendered(turn, "openai-chat", 0);
    assert_string_equal(t0, "{\"error\":{\"message\":\"command exited with "
                            "status 3: disk on fire\",\"code\":"
                            "\"EXIT_STATUS\"}}");
    char *t1 = rendered(turn, "openai-chat", 1);
    assert_string_equal(t1, "{\"error\":{\"message\":\"it broke\",\"code\":"
                            "\"TOOL_FAILED\",\"details\":{\"stdout\":\"not "
                            "shown\"}}}");
    char *t2 = rendered(turn, "openai-chat", 2);
    assert_string_equal(t2, "{\"timeout\":{\"durationMs\":250}}");
    assert_null(tg__result_output_part(turn->results[0]));
    assert_null(tg__result_output_part(turn->results[1]));
    assert_null(tg__result_output_part(turn->results[2]));
    free(t0);
    free(t1);
    free(t2);
    tg_turn_free(turn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failed_command_text),
        cmocka_unit_test(test_records_keep_payload),
        cmocka_unit_test(test_other_payloads_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
