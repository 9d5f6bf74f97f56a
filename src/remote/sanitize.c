/* SPDX-License-Identifier: MIT */
/*
 * sanitize.c - finds and strips what a tool definition may not hide
 * (sanitize.h): a pass over each string's code points, then one over the
 * result for HTML comments (so a zero-width character inside "<!--" does
 * not hide the comment), and a walk of the definition that rebuilds the
 * members it cleans and records a JSON pointer per string that held
 * something.
 */
#include "sanitize.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "utf8.h"

/* The kind of code point cp (TG_SANITIZE_* bit), 0 when it is kept. A
 * presentation selector (U+FE0E, U+FE0F) answers VARIATION; the caller
 * keeps one after an ordinary character. */
static unsigned classify(uint32_t cp)
{
    if ((cp < 0x20 && cp != '\t' && cp != '\n') || cp == 0x7f ||
        (cp >= 0x80 && cp <= 0x9f))
        return TG_SANITIZE_CONTROL;
    if ((cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2060 && cp <= 0x2064) ||
        cp == 0xfeff || cp == 0xad || cp == 0x180e || cp == 0x61c)
        return TG_SANITIZE_INVISIBLE;
    if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
        return TG_SANITIZE_BIDI;
    if (cp >= 0xe0000 && cp <= 0xe007f)
        return TG_SANITIZE_TAG;
    if ((cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef))
        return TG_SANITIZE_VARIATION;
    return 0;
}

/* The code point of the valid sequence s[0..len). */
static uint32_t decode(const unsigned char *s, size_t len)
{
    if (len == 1)
        return s[0];
    uint32_t cp = s[0] & (0xff >> (len + 1));
    for (size_t i = 1; i < len; i++)
        cp = cp << 6 | (s[i] & 0x3f);
    return cp;
}

/* Appends s[0..len) without its HTML comments to b. */
static int strip_comments(const char *s, size_t len, tg__buf *b,
                          unsigned *found)
{
    size_t i = 0;
    int rc = 0;
    while (i < len && rc == 0) {
        const char *open = NULL;
        for (size_t k = i; k + 4 <= len; k++)
            if (memcmp(s + k, "<!--", 4) == 0) {
                open = s + k;
                break;
            }
        if (open == NULL)
            return tg__buf_append(b, s + i, len - i);
        *found |= TG_SANITIZE_HTML_COMMENT;
        rc = tg__buf_append(b, s + i, (size_t)(open - (s + i)));
        size_t k = (size_t)(open - s) + 4;
        while (k + 3 <= len && memcmp(s + k, "-->", 3) != 0)
            k++;
        i = k + 3 <= len ? k + 3 : len;
    }
    return rc;
}

int tg__sanitize_text(const char *s, size_t len, char **out, size_t *out_len,
                      unsigned *found)
{
    tg__buf plain, b;
    const unsigned char *u = (const unsigned char *)s;
    int rc = 0, after_char = 0;
    *out = NULL;
    *found = 0;
    tg__buf_init(&plain, 0);
    tg__buf_init(&b, 0);
    for (size_t i = 0; i < len && rc == 0;) {
        size_t n = u[i] < 0x80 ? 1 : tg__utf8_seq(u + i, len - i);
        if (n == 0) {
            /* Not UTF-8 (jansson's strings always are): kept as it is. */
            rc = tg__buf_append(&plain, s + i, 1);
            after_char = 1;
            i++;
            continue;
        }
        uint32_t cp = decode(u + i, n);
        unsigned kind = classify(cp);
        int keep = kind == 0 || (kind == TG_SANITIZE_VARIATION &&
                                 (cp == 0xfe0e || cp == 0xfe0f) && after_char);
        if (keep) {
            rc = tg__buf_append(&plain, s + i, n);
            after_char = kind == 0;
        } else {
            *found |= kind;
            /* A selector after a stripped one is not after a character. */
            after_char = 0;
        }
        i += n;
    }
    if (rc == 0)
        rc = strip_comments(tg__buf_cstr(&plain), plain.len, &b, found);
    tg__buf_cleanup(&plain);
    if (rc == 0) {
        *out_len = b.len;
        tg__buf_cstr(&b);
        if ((*out = tg__buf_take(&b)) == NULL)
            rc = TG_ENOMEM;
    }
    tg__buf_cleanup(&b);
    if (rc != 0)
        *found = 0;
    return rc == 0 ? 0 : TG_ENOMEM;
}

struct walk {
    tg__sanitize_flag *flags;
    size_t n, cap;
    tg__buf ptr; /* the pointer of the value being walked */
};

static int add_flag(struct walk *w, unsigned found, int stripped, int is_key)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 8;
        tg__sanitize_flag *grown = realloc(w->flags, cap * sizeof *grown);
        if (grown == NULL)
            return TG_ENOMEM;
        w->flags = grown;
        w->cap = cap;
    }
    char *p = strdup(tg__buf_cstr(&w->ptr));
    if (p == NULL)
        return TG_ENOMEM;
    w->flags[w->n++] = (tg__sanitize_flag){p, found, stripped, is_key};
    return 0;
}

static void pop(struct walk *w, size_t len)
{
    w->ptr.len = len;
    if (w->ptr.data != NULL)
        w->ptr.data[len] = '\0';
}

/* *out: a clean copy of v (new ref). */
static int clean_value(struct walk *w, const json_t *v, json_t **out)
{
    int rc = 0;
    *out = NULL;
    if (json_is_string(v)) {
        char *text;
        size_t len;
        unsigned found;
        if (tg__sanitize_text(json_string_value(v), json_string_length(v),
                              &text, &len, &found) != 0)
            return TG_ENOMEM;
        if (found != 0 && add_flag(w, found, 1, 0) != 0) {
            free(text);
            return TG_ENOMEM;
        }
        *out = json_stringn_nocheck(text, len);
        free(text);
        return *out ? 0 : TG_ENOMEM;
    }
    if (json_is_object(v)) {
        json_t *o = json_object(); /* new ref */
        const char *k;
        size_t klen;
        json_t *m; /* borrowed */
        if (o == NULL)
            return TG_ENOMEM;
        json_object_keylen_foreach((json_t *)v, k, klen, m)
        {
            size_t mark = w->ptr.len;
            json_t *c = NULL; /* new ref */
            char *text = NULL;
            size_t tlen;
            unsigned found;
            if ((rc = tg__buf_put_pointer_token(&w->ptr, k, klen)) != 0 ||
                (rc = tg__sanitize_text(k, klen, &text, &tlen, &found)) != 0)
                break;
            free(text);
            if ((found != 0 && (rc = add_flag(w, found, 0, 1)) != 0) ||
                (rc = clean_value(w, m, &c)) != 0 ||
                (rc = json_object_setn_new_nocheck(o, k, klen, c)) != 0) {
                rc = TG_ENOMEM;
                break;
            }
            pop(w, mark);
        }
        if (rc != 0) {
            json_decref(o);
            return TG_ENOMEM;
        }
        *out = o;
        return 0;
    }
    if (json_is_array(v)) {
        json_t *a = json_array(); /* new ref */
        size_t i;
        json_t *m; /* borrowed */
        if (a == NULL)
            return TG_ENOMEM;
        json_array_foreach(v, i, m)
        {
            size_t mark = w->ptr.len;
            json_t *c = NULL; /* new ref */
            if (tg__buf_printf(&w->ptr, "/%zu", i) != 0 ||
                clean_value(w, m, &c) != 0 ||
                json_array_append_new(a, c) != 0) {
                json_decref(a);
                return TG_ENOMEM;
            }
            pop(w, mark);
        }
        *out = a;
        return 0;
    }
    *out = json_incref((json_t *)v);
    return 0;
}

void tg__sanitize_flags_free(tg__sanitize_flag *flags, size_t n)
{
    for (size_t i = 0; flags != NULL && i < n; i++)
        free(flags[i].pointer);
    free(flags);
}

int tg__sanitize_tool(const json_t *tool, json_t **clean,
                      tg__sanitize_flag **flags, size_t *n_flags, tg_error *err)
{
    static const char *const cleaned[] = {"title", "description", "inputSchema",
                                          "outputSchema", "annotations"};
    struct walk w = {0};
    json_t *copy = NULL; /* new ref */
    int rc = 0;
    *clean = NULL;
    *flags = NULL;
    *n_flags = 0;
    if (!json_is_object(tool))
        return tg__error_set(err, TG_EINVAL,
                             "a tool definition must be an "
                             "object");
    tg__buf_init(&w.ptr, 0);
    if ((copy = json_copy((json_t *)tool)) == NULL) {
        rc = TG_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < sizeof cleaned / sizeof cleaned[0]; i++) {
        json_t *v = json_object_get(tool, cleaned[i]); /* borrowed */
        json_t *c = NULL;                              /* new ref */
        if (v == NULL)
            continue;
        pop(&w, 0);
        if ((rc = tg__buf_put_pointer_token(&w.ptr, cleaned[i],
                                            strlen(cleaned[i]))) != 0 ||
            (rc = clean_value(&w, v, &c)) != 0 ||
            (rc = json_object_set_new(copy, cleaned[i], c)) != 0) {
            rc = TG_ENOMEM;
            goto done;
        }
    }
    *clean = copy;
    copy = NULL;
    *flags = w.flags;
    *n_flags = w.n;
    w.flags = NULL;
done:
    json_decref(copy);
    tg__sanitize_flags_free(w.flags, w.n);
    tg__buf_cleanup(&w.ptr);
    return rc == 0 ? 0 : tg__error_set(err, TG_ENOMEM, "out of memory");
}

const char *tg__sanitize_kind_name(unsigned bit)
{
    switch (bit) {
    case TG_SANITIZE_CONTROL:
        return "control";
    case TG_SANITIZE_INVISIBLE:
        return "invisible";
    case TG_SANITIZE_BIDI:
        return "bidi";
    case TG_SANITIZE_TAG:
        return "tag";
    case TG_SANITIZE_VARIATION:
        return "variation-selector";
    case TG_SANITIZE_HTML_COMMENT:
        return "html-comment";
    }
    return "?";
}

json_t *tg__sanitize_flags_json(const tg__sanitize_flag *flags, size_t n)
{
    json_t *a = json_array(); /* new ref */
    for (size_t i = 0; a != NULL && i < n; i++) {
        json_t *kinds = json_array(); /* new ref */
        for (unsigned bit = 1; kinds != NULL && bit <= TG_SANITIZE_HTML_COMMENT;
             bit <<= 1)
            if ((flags[i].found & bit) &&
                json_array_append_new(
                    kinds, json_string(tg__sanitize_kind_name(bit))) != 0) {
                json_decref(kinds);
                kinds = NULL;
            }
        json_t *o =
            kinds ? json_pack("{s:s,s:o,s:b,s:b}", "pointer", flags[i].pointer,
                              "found", kinds, "stripped", flags[i].stripped,
                              "key", flags[i].is_key)
                  : NULL; /* new ref */
        if (o == NULL || json_array_append_new(a, o) != 0) {
            json_decref(a);
            a = NULL;
        }
    }
    return a;
}
