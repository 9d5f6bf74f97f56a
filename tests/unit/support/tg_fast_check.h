/* SPDX-License-Identifier: MIT */
/*
 * tg_fast_check.h - for the format tests (include after cmocka.h): parsing
 * a turn that must parse or must fail, JSON written with single quotes, and
 * a format's fast path held to its document path on one input.
 * Header-only.
 */
#ifndef TG_FAST_CHECK_H
#define TG_FAST_CHECK_H

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "record.h"
#include "turn.h"

/* text with every ' turned into " (test JSON is written with single
 * quotes for readability); the caller frees it. */
static inline char *tg_test_quotes(const char *text)
{
    char *s = strdup(text);
    assert_non_null(s);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    return s;
}

/* The turn text parses to, in `format`; fails the test otherwise. */
static inline tg_turn *tg_test_parse_ok(const char *text, const char *format)
{
    tg_turn *turn = NULL;
    tg_error err;
    int rc = tg_turn_parse(text, strlen(text), format, "in.json", &turn, &err);
    if (rc != 0)
        fail_msg("parse failed (%s): %s\n%s", tg_err_name(rc), err.message,
                 text);
    assert_non_null(turn);
    return turn;
}

/* The error code of a parse that must fail (err filled, no turn). */
static inline int tg_test_parse_fails(const char *text, const char *format,
                                      tg_error *err)
{
    tg_turn *turn = (tg_turn *)1;
    int rc = tg_turn_parse(text, strlen(text), format, "in.json", &turn, err);
    assert_int_not_equal(rc, 0);
    assert_null(turn);
    assert_int_equal(err->code, rc);
    return rc;
}

/* The same two on single-quoted JSON (tg_test_quotes). */
static inline tg_turn *tg_test_parse_ok_q(const char *text, const char *format)
{
    char *s = tg_test_quotes(text);
    tg_turn *turn = tg_test_parse_ok(s, format);
    free(s);
    return turn;
}

static inline int tg_test_parse_fails_q(const char *text, const char *format,
                                        tg_error *err)
{
    char *s = tg_test_quotes(text);
    int rc = tg_test_parse_fails(s, format, err);
    free(s);
    return rc;
}

static inline int tg_test_same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) ||
           (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Runs f's fast path on text. When it takes the text (1), detection must
 * score f above every other format for the document, and f's document
 * parser must give the same calls: ids, tools, arguments (text, wire
 * string, checksum), pre-errors, meta (json_equal: an integer JSON-RPC id
 * stays an integer), indexes. Returns the fast path's answer (0 or 1); the
 * fast path's turn goes to *out when out is not NULL (the caller frees it). */
static inline int tg_test_fast_vs_doc(const tg__format *f, const char *text,
                                      tg_turn **out)
{
    static const char *const names[] = {"openai-chat",      "toolgate",
                                        "anthropic",        "gemini",
                                        "openai-responses", "mcp"};
    tg_turn *fast = tg__turn_new(f->name);
    assert_non_null(fast);
    int rc = f->parse_fast(fast, text, strlen(text));
    assert_true(rc == 0 || rc == 1);
    if (rc == 1) {
        json_error_t jerr;
        json_t *doc = json_loads(text, JSON_DECODE_ANY, &jerr); /* new ref */
        if (doc == NULL)
            fail_msg("the %s fast path took what is not JSON: %s", f->name,
                     text);
        int score = f->detect(doc);
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            const tg__format *g = tg__format_find(names[k]);
            if (g != f && g->detect != NULL && g->detect(doc) >= score)
                fail_msg("%s detects as well as %s: %s", g->name, f->name,
                         text);
        }
        tg_turn *slow = tg__turn_new(f->name);
        tg_error err;
        if (f->parse(slow, doc, &err) != 0)
            fail_msg("the %s fast path took what its parser refuses: %s",
                     f->name, err.message);
        assert_int_equal(fast->n, slow->n);
        for (size_t i = 0; i < fast->n; i++) {
            const tg_call *a = fast->calls[i], *b = slow->calls[i];
            assert_string_equal(a->id, b->id);
            assert_string_equal(a->tool, b->tool);
            assert_true(
                tg_test_same_str(tg_call_args_json(a), tg_call_args_json(b)));
            assert_true(
                tg_test_same_str(tg_call_args_raw(a), tg_call_args_raw(b)));
            assert_true(tg_test_same_str(a->pre_error_code, b->pre_error_code));
            assert_true(
                tg_test_same_str(a->pre_error_message, b->pre_error_message));
            assert_int_equal(tg__call_meta(a) != NULL,
                             tg__call_meta(b) != NULL);
            assert_true(tg__call_meta(a) == NULL ||
                        json_equal(tg__call_meta(a), tg__call_meta(b)));
            assert_int_equal(a->index, i);
            assert_true(
                tg_test_same_str(tg_call_checksum(a), tg_call_checksum(b)));
        }
        tg_turn_free(slow);
        json_decref(doc);
    }
    if (out != NULL)
        *out = fast;
    else
        tg_turn_free(fast);
    return rc;
}

#endif
