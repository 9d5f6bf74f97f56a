/* SPDX-License-Identifier: MIT */
/*
 * fuzz_json_scan.c - libFuzzer target for the JSON text scanners of
 * core/json_scan.h (tg__json_ws, tg__json_string_end, tg__json_value_end).
 * On any bytes they stay within the text and answer within their ranges;
 * on text jansson reads as one JSON value, the value spans the text but
 * white space, and stepping over a container's members one value at a
 * time meets its separators and finds as many members as jansson does.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_scan.h"

static int is_ws(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Any text: every answer within [i, n] (string_end: 0, or after a closing
 * quote past the opening one). */
static void any_text(const char *s, size_t n)
{
    size_t stop = n < 256 ? n : 256;
    for (size_t i = 0; i <= stop; i++) {
        size_t w = tg__json_ws(s, n, i);
        if (w < i || w > n || (w < n && is_ws(s[w])))
            abort();
        if (i == n)
            break;
        size_t v = tg__json_value_end(s, n, i);
        if (v != 0 && (v < i || v > n))
            abort();
        if (s[i] == '"') {
            size_t e = tg__json_string_end(s, n, i);
            if (e != 0 && (e < i + 2 || e > n || s[e - 1] != '"'))
                abort();
        }
    }
}

/* The members of the container s[i] opens, stepped over as the loop does
 * (answer.c): returns how many, aborts on a separator out of place. */
static size_t members(const char *s, size_t n, size_t i, int object)
{
    char close = object ? '}' : ']';
    size_t p = tg__json_ws(s, n, i + 1), count = 0;
    if (p < n && s[p] == close)
        return 0;
    for (;;) {
        if (object) {
            size_t k = s[p] == '"' ? tg__json_string_end(s, n, p) : 0;
            if (k == 0)
                abort();
            p = tg__json_ws(s, n, k);
            if (p >= n || s[p] != ':')
                abort();
            p = tg__json_ws(s, n, p + 1);
        }
        size_t e = tg__json_value_end(s, n, p);
        if (e <= p)
            abort();
        count++;
        p = tg__json_ws(s, n, e);
        if (p >= n)
            abort();
        if (s[p] == close)
            return count;
        if (s[p] != ',')
            abort();
        p = tg__json_ws(s, n, p + 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    any_text(s, size);
    json_t *v = json_loadb(
        s, size, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
        NULL);
    if (v == NULL)
        return 0;
    size_t start = tg__json_ws(s, size, 0);
    size_t end = tg__json_value_end(s, size, start);
    if (end <= start || tg__json_ws(s, size, end) != size)
        abort();
    if (json_is_string(v) && tg__json_string_end(s, size, start) != end)
        abort();
    if (json_is_array(v) && members(s, size, start, 0) != json_array_size(v))
        abort();
    if (json_is_object(v) && members(s, size, start, 1) != json_object_size(v))
        abort();
    json_decref(v);
    return 0;
}
