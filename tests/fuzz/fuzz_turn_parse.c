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
 *
 * Bytes no tool gets - "\u0000", unpaired surrogates, bytes that are not
 * UTF-8; core/bad_bytes.h - fail only the call whose arguments hold them:
 * it aborts when a call that may run holds them in its arguments, id or
 * tool, when a call that held them did not fail for good, and when
 * making those strings good (each such escape or byte replaced by "A")
 * changes anything but the failing calls: a turn read with them reads
 * again with the same number of calls, the same ids and tools, and the
 * same arguments and errors for every other call.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bad_bytes.h"
#include "format.h"
#include "json_fast.h"
#include "record.h"
#include "turn.h"
#include "utf8.h"

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

static int same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) ||
           (a != NULL && b != NULL && strcmp(a, b) == 0);
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
        /* Nothing a tool would get holds bytes no tool gets. */
        if ((call->args_text != NULL &&
             tg__bad_bytes(call->args_text, call->args_len, NULL, NULL)) ||
            tg__bad_bytes(call->id, strlen(call->id), NULL, NULL) ||
            tg__bad_bytes(call->tool, strlen(call->tool), NULL, NULL))
            abort();
        /* What held them fails, whatever else the parser says of it. */
        if (call->bad_args_src != NULL &&
            (call->pre_error_code == NULL || call->args_text != NULL ||
             !call->args_unrepairable))
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

static const char *const parsers[] = {
    "openai-chat",      "toolgate", "anthropic", "gemini",
    "openai-responses", "mcp",      "fenced"};
#define NPARSERS (sizeof parsers / sizeof parsers[0])

/* When format f's fast path takes an input, detection picks f for the
 * document (no other format scores as high) and f's document parser gives
 * the same calls. */
static void check_fast_path(const tg__format *f, const uint8_t *data,
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
        const tg__format *g = tg__format_find(parsers[k]);
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

/* data with every "\u0000", unpaired surrogate escape and byte that is
 * not UTF-8 replaced by "A" (in or out of strings: a byte outside one makes
 * jansson refuse both). Returns NULL when there was none. */
static char *made_good(const uint8_t *data, size_t size)
{
    char *out = malloc(size + 1);
    int changed = 0;
    if (out == NULL)
        return NULL;
    memcpy(out, data, size);
    out[size] = '\0';
    for (size_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)out[i];
        if (c >= 0x80) {
            size_t k = 0;
            if (tg__bad_bytes(out + i, size - i, &k, NULL) && k == 0) {
                out[i] = 'A';
                changed = 1;
            } else
                i += tg__utf8_seq((const unsigned char *)out + i, size - i) - 1;
            continue;
        }
        if (c != '\\' || i + 1 >= size)
            continue;
        if (out[i + 1] != 'u' || i + 6 > size) {
            i++; /* the escaped byte, a backslash maybe */
            continue;
        }
        char hex[5] = {out[i + 2], out[i + 3], out[i + 4], out[i + 5], 0};
        char *end;
        long v = strtol(hex, &end, 16);
        if (*end != '\0' || hex[0] == '-' || hex[0] == '+' || hex[0] == ' ')
            continue;
        int paired = 0;
        if (v >= 0xD800 && v <= 0xDBFF && i + 12 <= size &&
            out[i + 6] == '\\' && out[i + 7] == 'u') {
            char lo[5] = {out[i + 8], out[i + 9], out[i + 10], out[i + 11], 0};
            long w = strtol(lo, &end, 16);
            paired = *end == '\0' && w >= 0xDC00 && w <= 0xDFFF;
        }
        if (paired) {
            i += 11;
        } else if (v == 0 || (v >= 0xD800 && v <= 0xDFFF)) {
            memcpy(out + i + 2, "0041", 4);
            changed = 1;
            i += 5;
        } else
            i += 5;
    }
    if (!changed) {
        free(out);
        return NULL;
    }
    return out;
}

/* A turn read with bad strings against the same text made good. */
static void check_made_good(const uint8_t *data, size_t size)
{
    char *good = made_good(data, size);
    if (good == NULL)
        return;
    tg_turn *a = NULL, *b = NULL;
    tg_error err;
    if (tg_turn_parse((const char *)data, size, "auto", "fuzz", &a, &err) !=
            0 ||
        tg_turn_parse(good, size, "auto", "fuzz", &b, &err) != 0)
        goto done;
    if (a->n != b->n || strcmp(a->format, b->format) != 0)
        abort();
    for (size_t i = 0; i < a->n; i++) {
        const tg_call *x = a->calls[i], *y = b->calls[i];
        const json_t *meta = tg__call_meta(x); /* borrowed */
        if (!json_is_true(json_object_get(meta, "id_generated")) &&
            strcmp(x->id, y->id) != 0)
            abort();
        if (strcmp(x->tool, y->tool) != 0)
            abort();
        if (x->args_unrepairable)
            continue; /* it held them */
        if (!same_str(x->pre_error_code, y->pre_error_code) ||
            !same_str(tg_call_args_json(x), tg_call_args_json(y)))
            abort();
    }
done:
    tg_turn_free(a);
    tg_turn_free(b);
    free(good);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_fast_reader(data, size, 0);
    check_fast_reader(data, size, 1);
    for (size_t k = 0; k < NPARSERS; k++) {
        const tg__format *f = tg__format_find(parsers[k]);
        if (f != NULL && f->parse_fast != NULL)
            check_fast_path(f, data, size);
    }
    run(data, size, "auto");
    for (size_t k = 0; k < NPARSERS; k++)
        run(data, size, parsers[k]);
    check_made_good(data, size);
    return 0;
}
