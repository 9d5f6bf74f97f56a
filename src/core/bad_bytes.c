/* SPDX-License-Identifier: MIT */
/*
 * bad_bytes.c - finding and describing the bytes no tool gets, of bad_bytes.h:
 * in one string, and in the keys and strings of a jansson value, with the
 * JSON pointer of the first.
 */
#include "bad_bytes.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate.h"
#include "utf8.h"

#define MAX_DEPTH 4096 /* deeper than any parsed value (jtape.h: 2048) */

/* The code point of the three bytes an unpaired surrogate decodes to (ED
 * A0..BF 80..BF), or 0 when s[0..n) does not start with them. */
static long surrogate_at(const unsigned char *s, size_t n)
{
    if (n < 3 || s[0] != 0xED || s[1] < 0xA0 || s[1] > 0xBF || s[2] < 0x80 ||
        s[2] > 0xBF)
        return 0;
    return 0xD000 | (long)(s[1] & 0x3F) << 6 | (long)(s[2] & 0x3F);
}

/* Length of the bad sequence at s[0..n) (0 when it is good), described in
 * what when not NULL. */
static size_t bad_at(const unsigned char *s, size_t n, char *what)
{
    if (s[0] == 0) {
        if (what != NULL)
            snprintf(what, TG_BAD_WHAT_MAX, "U+0000 (NUL)");
        return 1;
    }
    if (s[0] < 0x80 || tg__utf8_seq(s, n) > 0)
        return 0;
    long cp = surrogate_at(s, n);
    if (what != NULL && cp != 0)
        snprintf(what, TG_BAD_WHAT_MAX, "an unpaired surrogate \\u%04lX", cp);
    else if (what != NULL)
        snprintf(what, TG_BAD_WHAT_MAX, "the byte 0x%02X, which is not UTF-8",
                 s[0]);
    return cp != 0 ? 3 : 1;
}

int tg__bad_bytes(const char *str, size_t n, size_t *at, char *what)
{
    const unsigned char *s = (const unsigned char *)str;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != 0 && s[i] < 0x80)
            continue;
        size_t k = bad_at(s + i, n - i, what);
        if (k > 0) {
            if (at != NULL)
                *at = i;
            return 1;
        }
        i += tg__utf8_seq(s + i, n - i) - 1;
    }
    return 0;
}

int tg__bad_bytes_replace(const char *str, size_t n, tg__buf *out)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, good = 0; /* s[good..i) is still to be copied */
    int rc = 0;
    while (i < n && rc == 0) {
        size_t k = s[i] != 0 && s[i] < 0x80 ? 0 : bad_at(s + i, n - i, NULL);
        if (k == 0) {
            i += s[i] < 0x80 ? 1 : tg__utf8_seq(s + i, n - i);
            continue;
        }
        rc = tg__buf_append(out, s + good, i - good);
        if (rc == 0)
            rc = tg__buf_append(out, "\xEF\xBF\xBD", 3);
        i += k;
        good = i;
    }
    return rc != 0 ? rc : tg__buf_append(out, s + good, n - good);
}

/* Whether the key k[0..n) holds bytes no tool gets: its run of ASCII but
 * NUL is skipped first, eight bytes at a time (the zero-byte test of "Bit
 * Twiddling Hacks" and the high bits). */
static int bad_key(const char *k, size_t n)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = ones << 7;
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        uint64_t w;
        memcpy(&w, k + i, 8);
        if ((((w - ones) & ~w) | w) & highs)
            break;
    }
    while (i < n && (signed char)k[i] > 0)
        i++;
    return i < n && tg__bad_bytes(k + i, n - i, NULL, NULL);
}

/* Whether s[0..n) is not UTF-8 (U+0000 is). */
static int not_utf8(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < 0x80)
            continue;
        size_t k = tg__utf8_seq(s + i, n - i);
        if (k == 0)
            return 1;
        i += k - 1;
    }
    return 0;
}

/* Whether v holds bytes no tool gets in a key (keys), or a string value
 * that is not UTF-8 (!keys), at any depth. */
static int in_tree(const json_t *v, bool keys)
{
    if (json_is_string(v))
        return !keys && not_utf8(json_string_value(v), json_string_length(v));
    /* The iterator, not json_object_keylen_foreach: that one looks every
     * key up again to step to the next. */
    if (json_is_object(v)) {
        json_t *o = (json_t *)v;
        for (void *it = json_object_iter(o); it != NULL;
             it = json_object_iter_next(o, it)) {
            const json_t *m = json_object_iter_value(it); /* borrowed */
            if ((keys && bad_key(json_object_iter_key(it),
                                 json_object_iter_key_len(it))) ||
                ((!keys || json_is_object(m) || json_is_array(m)) &&
                 in_tree(m, keys)))
                return 1;
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            const json_t *m = json_array_get(v, i); /* borrowed */
            if ((!keys || json_is_object(m) || json_is_array(m)) &&
                in_tree(m, keys))
                return 1;
        }
    }
    return 0;
}

int tg__bad_bytes_in_keys(const json_t *v)
{
    return in_tree(v, true);
}

int tg__bad_bytes_unwritable(const json_t *v)
{
    return in_tree(v, false);
}

/* ------------------------------------------------------------ the walk */

typedef struct walk {
    tg__bad_pass pass;
    void *ctx;
    tg__jseg *path;
    size_t depth, cap;
    char *what;
    bool found_key; /* the bad bytes are in the last key of path */
} walk;

static int push(walk *w, const char *key, size_t klen, size_t index)
{
    if (w->depth == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        tg__jseg *p = realloc(w->path, cap * sizeof *p);
        if (p == NULL)
            return TG_ENOMEM;
        w->path = p;
        w->cap = cap;
    }
    w->path[w->depth++] = (tg__jseg){key, klen, index};
    return 0;
}

/* 1 when a bad string or key is in v (w->path then leads to it), 0 when
 * not, TG_ENOMEM. */
static int visit(walk *w, const json_t *v)
{
    if (w->pass != NULL && w->pass(v, w->path, w->depth, w->ctx))
        return 0;
    if (json_is_string(v))
        return tg__bad_bytes(json_string_value(v), json_string_length(v), NULL,
                             w->what);
    if (w->depth >= MAX_DEPTH)
        return 0;
    int rc = 0;
    if (json_is_object(v)) {
        const char *key;
        size_t klen;
        json_t *m; /* borrowed */
        json_object_keylen_foreach((json_t *)v, key, klen, m)
        {
            if ((rc = push(w, key, klen, 0)) != 0)
                return rc;
            if (tg__bad_bytes(key, klen, NULL, w->what)) {
                w->found_key = true;
                return 1;
            }
            if ((rc = visit(w, m)) != 0)
                return rc;
            w->depth--;
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            if ((rc = push(w, NULL, 0, i)) != 0 ||
                (rc = visit(w, json_array_get(v, i))) != 0)
                return rc;
            w->depth--;
        }
    }
    return 0;
}

/* Appends s[0..n) to a JSON pointer's token: '~' and '/' escaped as RFC
 * 6901 says, and bytes no tool gets shown as \u escapes. */
static int put_token(tg__buf *out, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0;) {
        size_t k = s[i] >= 0x80 ? tg__utf8_seq(s + i, n - i) : 1;
        long cp = k == 0 ? surrogate_at(s + i, n - i) : 0;
        if (s[i] == '~' || s[i] == '/')
            rc = tg__buf_puts(out, s[i] == '~' ? "~0" : "~1");
        else if (s[i] < 0x20)
            rc = tg__buf_printf(out, "\\u%04X", s[i]);
        else if (cp != 0)
            rc = tg__buf_printf(out, "\\u%04lX", cp);
        else if (k == 0)
            rc = tg__buf_printf(out, "\\x%02X", s[i]);
        else
            rc = tg__buf_append(out, s + i, k);
        i += cp != 0 ? 3 : k == 0 ? 1 : k;
    }
    return rc;
}

int tg__bad_bytes_find(const json_t *v, tg__bad_pass pass, void *ctx,
                       tg__buf *where, char *what)
{
    walk w = {pass, ctx, NULL, 0, 0, what, false};
    if (where != NULL)
        where->len = 0;
    int rc = visit(&w, v);
    if (rc == 1 && where != NULL) {
        int e = tg__buf_puts(where, w.found_key ? "the key at " : "the string");
        if (e == 0 && !w.found_key && w.depth > 0)
            e = tg__buf_puts(where, " at ");
        for (size_t i = 0; i < w.depth && e == 0; i++) {
            e = tg__buf_puts(where, "/");
            if (e == 0 && w.path[i].key != NULL)
                e = put_token(where, w.path[i].key, w.path[i].klen);
            else if (e == 0)
                e = tg__buf_printf(where, "%zu", w.path[i].index);
        }
        if (e != 0)
            rc = e;
    }
    free(w.path);
    return rc;
}
