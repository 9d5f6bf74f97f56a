/* SPDX-License-Identifier: MIT */
/*
 * json_walk.c - the traversal of a jansson value that json_out.c's dump
 * and jcs.c's canonical form share (json_walk.h): containers and literals
 * written here, strings and numbers by the style's writers, an object's
 * members in insertion order or sorted on a scratch stack shared by the
 * whole walk (no allocation for small documents).
 *
 * Key order: UTF-16 code units compared without converting the keys. UTF-8
 * byte order equals UTF-16 order except where a supplementary character
 * (4-byte UTF-8, a surrogate pair in UTF-16) meets U+E000..U+FFFF, which
 * is fixed up at the first differing byte.
 */
#include "json_walk.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate.h"

/* ------------------------------------------------------------ sorting */

void tg__jmembers_init(tg__jmembers *s)
{
    s->m = s->small;
    s->used = 0;
    s->cap = TG_JMEMBERS_SMALL;
}

void tg__jmembers_cleanup(tg__jmembers *s)
{
    if (s->m != s->small)
        free(s->m);
    tg__jmembers_init(s);
}

int tg__jmembers_reserve(tg__jmembers *s, size_t n)
{
    if (n <= s->cap - s->used)
        return 0;
    size_t cap = s->cap * 2;
    while (cap - s->used < n) {
        if (cap > SIZE_MAX / (2 * sizeof(tg__jmember)))
            return TG_ENOMEM;
        cap *= 2;
    }
    tg__jmember *m;
    if (s->m == s->small) {
        m = malloc(cap * sizeof *m);
        if (m != NULL)
            memcpy(m, s->small, s->used * sizeof *m);
    } else {
        m = realloc(s->m, cap * sizeof *m);
    }
    if (m == NULL)
        return TG_ENOMEM;
    s->m = m;
    s->cap = cap;
    return 0;
}

/* Compares two keys by UTF-16 code units. Byte order of valid UTF-8 is code
 * point order; the two differ only when one character is supplementary (lead
 * byte F0..F4, a surrogate D800..DBFF in UTF-16) and the other is in
 * U+E000..U+FFFF (lead byte EE or EF): then the supplementary one sorts
 * first. A differing byte that is a lead byte marks the start of both
 * characters, since the bytes before it are equal. */
static int key_cmp(const tg__jmember *x, const tg__jmember *y)
{
    const unsigned char *a = (const unsigned char *)x->key;
    const unsigned char *b = (const unsigned char *)y->key;
    size_t n = x->len < y->len ? x->len : y->len;
    size_t i = 0;
    while (i < n && a[i] == b[i])
        i++;
    if (i == n)
        return (x->len > y->len) - (x->len < y->len);
    unsigned ca = a[i], cb = b[i];
    if (ca >= 0xF0 && (cb == 0xEE || cb == 0xEF))
        return -1;
    if (cb >= 0xF0 && (ca == 0xEE || ca == 0xEF))
        return 1;
    return ca < cb ? -1 : 1;
}

static int key_cmp_q(const void *x, const void *y)
{
    return key_cmp(x, y);
}

void tg__jmembers_sort(tg__jmember *m, size_t n)
{
    if (n > 16) {
        qsort(m, n, sizeof *m, key_cmp_q);
        return;
    }
    /* Insertion sort: no call through a pointer for the common small case. */
    for (size_t i = 1; i < n; i++) {
        tg__jmember t = m[i];
        size_t j = i;
        while (j > 0 && key_cmp(&m[j - 1], &t) > 0) {
            m[j] = m[j - 1];
            j--;
        }
        m[j] = t;
    }
}

/* ------------------------------------------------------------ the walk */

typedef struct walk {
    tg__buf *out;
    tg__json_style st; /* a copy: one load less a use */
    tg__jmembers ms;   /* sorted styles only */
} walk;

static int walk_value(walk *w, const json_t *v, int depth);

static size_t key_len(void *it, const char *key)
{
#if JANSSON_VERSION_HEX >= 0x020e00
    (void)key;
    return json_object_iter_key_len(it);
#else
    (void)it;
    return strlen(key);
#endif
}

/* Containers are written by functions of their own, kept out of line: the
 * recursion passes through walk_value for every leaf, and a small
 * walk_value has a cheap frame (with them inlined the dump took 1.4% more
 * instructions than its own walker did, the canonical form 0.7% fewer;
 * apart, +1.0% and -1.7%: bench/RESULTS.md). */

/* The members in insertion order (jansson's own order). */
__attribute__((noinline)) static int walk_object(walk *w, json_t *o, int depth)
{
    tg__buf *out = w->out;
    int rc = tg__buf_append(out, "{", 1);
    int first = 1;
    for (void *it = json_object_iter(o); rc == 0 && it != NULL;
         it = json_object_iter_next(o, it)) {
        if (!first)
            rc = tg__buf_append(out, ",", 1);
        first = 0;
        const char *key = json_object_iter_key(it);
        if (rc == 0)
            rc = w->st.string(out, key, key_len(it, key));
        if (rc == 0)
            rc = tg__buf_append(out, ":", 1);
        if (rc == 0)
            rc = walk_value(w, json_object_iter_value(it), depth + 1);
    }
    return rc != 0 ? rc : tg__buf_append(out, "}", 1);
}

/* The members sorted, on the walk's scratch stack. */
__attribute__((noinline)) static int walk_sorted(walk *w, json_t *o, int depth)
{
    tg__buf *out = w->out;
    tg__jmembers *ms = &w->ms;
    size_t n = json_object_size(o), base = ms->used;
    int rc;
    if (n == 0)
        return tg__buf_append(out, "{}", 2);
    if ((rc = tg__jmembers_reserve(ms, n)) != 0)
        return rc;
    size_t got = 0;
    for (void *it = json_object_iter(o); it != NULL && got < n;
         it = json_object_iter_next(o, it)) {
        tg__jmember *m = &ms->m[base + got++];
        m->key = json_object_iter_key(it);
        m->len = key_len(it, m->key);
        m->value = json_object_iter_value(it); /* borrowed */
    }
    ms->used = base + got;
    tg__jmembers_sort(ms->m + base, got);
    rc = tg__buf_append(out, "{", 1);
    for (size_t i = 0; rc == 0 && i < got; i++) {
        /* Re-read through ms->m: nested objects may have moved the array. */
        const tg__jmember *m = &ms->m[base + i];
        json_t *value = m->value; /* borrowed */
        if (i > 0 && (rc = tg__buf_append(out, ",", 1)) != 0)
            break;
        if ((rc = w->st.string(out, m->key, m->len)) != 0 ||
            (rc = tg__buf_append(out, ":", 1)) != 0)
            break;
        rc = walk_value(w, value, depth + 1);
    }
    ms->used = base;
    return rc != 0 ? rc : tg__buf_append(out, "}", 1);
}

__attribute__((noinline)) static int walk_array(walk *w, const json_t *v,
                                                int depth)
{
    tg__buf *out = w->out;
    size_t n = json_array_size(v);
    int rc;
    if ((rc = tg__buf_append(out, "[", 1)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && (rc = tg__buf_append(out, ",", 1)) != 0)
            return rc;
        if ((rc = walk_value(w, json_array_get(v, i), depth + 1)) != 0)
            return rc;
    }
    return tg__buf_append(out, "]", 1);
}

static int walk_value(walk *w, const json_t *v, int depth)
{
    tg__buf *out = w->out;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        if (depth >= w->st.max_depth)
            return w->st.too_deep;
        /* the iterators take no const */
        return w->st.sorted ? walk_sorted(w, (json_t *)v, depth)
                            : walk_object(w, (json_t *)v, depth);
    case JSON_ARRAY:
        if (depth >= w->st.max_depth)
            return w->st.too_deep;
        return walk_array(w, v, depth);
    case JSON_STRING:
        return w->st.string(out, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return w->st.integer(out, json_integer_value(v));
    case JSON_REAL:
        return w->st.real(out, v);
    case JSON_TRUE:
        return tg__buf_append(out, "true", 4);
    case JSON_FALSE:
        return tg__buf_append(out, "false", 5);
    case JSON_NULL:
        return tg__buf_append(out, "null", 4);
    }
    return TG_EINVAL;
}

int tg__json_walk(const json_t *value, tg__buf *out,
                  const tg__json_style *style)
{
    walk w; /* not zeroed: the scratch stack's array is large */
    if (value == NULL)
        return TG_EINVAL;
    w.out = out;
    w.st = *style;
    tg__jmembers_init(&w.ms);
    int rc = walk_value(&w, value, 0);
    tg__jmembers_cleanup(&w.ms);
    return rc;
}
