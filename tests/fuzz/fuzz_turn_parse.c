/* SPDX-License-Identifier: MIT */
/*
 * fuzz_turn_parse.c - libFuzzer target for the turn parsers (format.c,
 * every format's parser and fast path, json_fast.c). The input is parsed with
 * detection and with each format named; every parsed turn gets a success result
 * per call (its arguments, or null) and is rendered into every format, and the
 * output must read back as JSON. Besides crashes, leaks and undefined
 * behaviour, it aborts when an error is reported without a message, a
 * rendering is not valid JSON, or a fast path disagrees with the slow one:
 * the fast JSON reader with jansson, each format's fast path with detection
 * plus that format's document parser.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "json_fast.h"
#include "record.h"
#include "turn.h"

static const char *const renderers[] = {"openai-chat",      "toolgate",
                                        "anthropic",        "gemini",
                                        "openai-responses", "mcp"};

/* Every line of text (one line for openai-chat) must be a JSON value. */
static void check_json_lines(const char *text, size_t len)
{
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        if (nl == NULL)
            abort(); /* every rendering ends with a newline */
        size_t n = (size_t)(nl - (text + i));
        json_error_t jerr;
        json_t *v = json_loadb(text + i, n, JSON_DECODE_ANY | JSON_ALLOW_NUL,
                               &jerr); /* new ref */
        if (v == NULL)
            abort();
        json_decref(v);
        i += n + 1;
    }
}

static void run(const uint8_t *data, size_t size, const char *format)
{
    tg_turn *turn = NULL;
    tg_error err;
    int rc =
        tg_turn_parse((const char *)data, size, format, "fuzz", &turn, &err);
    if (rc != 0) {
        if (turn != NULL || err.code != rc || err.message[0] == '\0' ||
            memchr(err.message, '\0', sizeof err.message) == NULL)
            abort();
        return;
    }
    for (size_t i = 0; i < tg_turn_call_count(turn); i++) {
        const tg_call *call = tg_turn_call(turn, i);
        if (tg_call_index(call) != i)
            abort();
        /* The record and checksum of every parsed call are computable. */
        char *rec = tg_call_to_json(call);
        tg_free(rec);
        json_t *args = tg__call_args(call);                       /* borrowed */
        json_t *payload = args ? json_incref(args) : json_null(); /* new ref */
        tg_result *r = tg__result_success(call, payload);
        if (r == NULL || tg__turn_set_result(turn, i, r) != 0)
            goto done;
    }
    for (size_t k = 0; k < sizeof renderers / sizeof renderers[0]; k++) {
        char *out = NULL;
        size_t len = 0;
        if (tg_turn_render(turn, renderers[k], &out, &len, &err) != 0)
            abort(); /* every call has a result: rendering cannot fail */
        if (strlen(out) != len)
            abort();
        check_json_lines(out, len);
        tg_free(out);
    }
done:
    tg_turn_free(turn);
}

/* What the fast reader accepts, jansson accepts with the same value, down
 * to integer-versus-real and member order. */
static void check_fast_reader(const uint8_t *data, size_t size, int rejdup)
{
    json_t *fast = tg__json_fast_load((const char *)data, size, rejdup);
    if (fast == NULL)
        return;
    json_error_t jerr;
    json_t *slow =
        json_loadb((const char *)data, size,
                   JSON_DECODE_ANY | (rejdup ? JSON_REJECT_DUPLICATES : 0),
                   &jerr); /* new ref */
    if (slow == NULL || !json_equal(fast, slow))
        abort();
    char *a = json_dumps(fast, JSON_COMPACT | JSON_ENCODE_ANY);
    char *b = json_dumps(slow, JSON_COMPACT | JSON_ENCODE_ANY);
    if (a == NULL || b == NULL || strcmp(a, b) != 0)
        abort();
    free(a);
    free(b);
    json_decref(fast);
    json_decref(slow);
}

static int same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) ||
           (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static const char *const parsers[] = {
    "openai-chat",      "toolgate", "anthropic", "gemini",
    "openai-responses", "mcp",      "fenced"};
#define NPARSERS (sizeof parsers / sizeof parsers[0])

/* When format f's fast path takes an input, detection picks f for the
 * document (no other format scores as high) and f's document parser gives
 * the same calls. */
static void check_fast_path(const tg_format *f, const uint8_t *data,
                            size_t size)
{
    tg_turn *fast = tg__turn_new(f->name);
    tg_turn *slow = tg__turn_new(f->name);
    json_t *doc = NULL; /* new ref */
    if (fast == NULL || slow == NULL)
        goto done;
    int rc = f->parse_fast(fast, (const char *)data, size);
    if (rc != 1)
        goto done;
    json_error_t jerr;
    doc = json_loadb((const char *)data, size, JSON_DECODE_ANY, &jerr);
    if (doc == NULL)
        abort();
    int score = f->detect(doc);
    for (size_t k = 0; k < NPARSERS; k++) {
        const tg_format *g = tg__format_find(parsers[k]);
        if (score <= 0 || (g != f && g->detect && g->detect(doc) >= score))
            abort();
    }
    if (f->parse(slow, doc, NULL) != 0 || slow->n != fast->n)
        abort();
    for (size_t i = 0; i < fast->n; i++) {
        const tg_call *a = fast->calls[i], *b = slow->calls[i];
        if (!same_str(a->id, b->id) || !same_str(a->tool, b->tool) ||
            !same_str(tg_call_args_raw(a), tg_call_args_raw(b)) ||
            !same_str(tg_call_args_json(a), tg_call_args_json(b)) ||
            !same_str(a->pre_error_code, b->pre_error_code) ||
            !same_str(a->pre_error_message, b->pre_error_message) ||
            !same_str(a->caller_id, b->caller_id) ||
            !same_str(a->checksum_in, b->checksum_in) ||
            (tg__call_meta(a) != NULL) != (tg__call_meta(b) != NULL) ||
            (tg__call_meta(a) != NULL &&
             !json_equal(tg__call_meta(a), tg__call_meta(b))))
            abort();
    }
done:
    json_decref(doc);
    tg_turn_free(fast);
    tg_turn_free(slow);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_fast_reader(data, size, 0);
    check_fast_reader(data, size, 1);
    for (size_t k = 0; k < NPARSERS; k++) {
        const tg_format *f = tg__format_find(parsers[k]);
        if (f != NULL && f->parse_fast != NULL)
            check_fast_path(f, data, size);
    }
    run(data, size, "auto");
    for (size_t k = 0; k < NPARSERS; k++)
        run(data, size, parsers[k]);
    return 0;
}
