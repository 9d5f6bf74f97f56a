/* SPDX-License-Identifier: MIT */
/*
 * equal.c - JSON equality of tape values, for enum, const and uniqueItems:
 * numbers by value (1 == 1.0), strings by their decoded bytes, objects
 * regardless of member order; and a hash that agrees with it, so
 * uniqueItems over a long array compares only the items whose hashes
 * collide instead of every pair.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

static unsigned kind_of(const tg__jtape *t, size_t i)
{
    unsigned k = t->tok[i].kind;
    return k == TG_JT_KEY ? TG_JT_STRING : k;
}

static int str_equal(const tg__jtape *ta, const tg__jtok *a,
                     const tg__jtape *tb, const tg__jtok *b)
{
    if (!((a->flags | b->flags) & TG_JT_ESCAPED))
        return a->b == b->b &&
               memcmp(ta->text + a->a, tb->text + b->a, a->b) == 0;
    tg__jstr_iter x, y;
    tg__jstr_iter_init(&x, ta, a);
    tg__jstr_iter_init(&y, tb, b);
    for (;;) {
        int c = tg__jstr_iter_next(&x), d = tg__jstr_iter_next(&y);
        if (c != d)
            return 0;
        if (c < 0)
            return 1;
    }
}

int tg__jequal(const tg__jtape *ta, size_t ia, const tg__jtape *tb, size_t ib)
{
    unsigned ka = kind_of(ta, ia), kb = kind_of(tb, ib);
    if (ka != kb)
        return 0;
    const tg__jtok *a = &ta->tok[ia], *b = &tb->tok[ib];
    switch (ka) {
    case TG_JT_NUMBER: {
        tg__num x, y;
        if (tg__jnum(ta, ia, &x) != 0 || tg__jnum(tb, ib, &y) != 0)
            return TG_ENOMEM;
        return tg__num_cmp(&x, &y) == 0;
    }
    case TG_JT_STRING:
        return str_equal(ta, a, tb, b);
    case TG_JT_ARRAY: {
        if (a->b != b->b)
            return 0;
        size_t i = ia + 1, j = ib + 1;
        for (uint32_t n = 0; n < a->b; n++) {
            int rc = tg__jequal(ta, i, tb, j);
            if (rc <= 0)
                return rc;
            i = tg__jskip(ta, i);
            j = tg__jskip(tb, j);
        }
        return 1;
    }
    case TG_JT_OBJECT: {
        if (a->b != b->b)
            return 0;
        for (size_t i = ia + 1; i < a->a; i = tg__jskip(ta, i + 1)) {
            size_t j = ib + 1;
            while (j < b->a && !str_equal(ta, &ta->tok[i], tb, &tb->tok[j]))
                j = tg__jskip(tb, j + 1);
            if (j >= b->a)
                return 0;
            int rc = tg__jequal(ta, i + 1, tb, j + 1);
            if (rc <= 0)
                return rc;
        }
        return 1;
    }
    default:
        return 1; /* true, false, null: the kind says it all */
    }
}

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static uint64_t str_hash(const tg__jtape *t, const tg__jtok *tok)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    if (!(tok->flags & TG_JT_ESCAPED)) {
        const unsigned char *p = (const unsigned char *)t->text + tok->a;
        for (uint32_t i = 0; i < tok->b; i++)
            h = (h ^ p[i]) * 0x100000001b3ULL;
        return h;
    }
    tg__jstr_iter it;
    tg__jstr_iter_init(&it, t, tok);
    int c;
    while ((c = tg__jstr_iter_next(&it)) >= 0)
        h = (h ^ (unsigned)c) * 0x100000001b3ULL;
    return h;
}

uint64_t tg__jhash(const tg__jtape *t, size_t i)
{
    unsigned k = kind_of(t, i);
    const tg__jtok *tok = &t->tok[i];
    switch (k) {
    case TG_JT_NUMBER: {
        tg__num x;
        if (tg__jnum(t, i, &x) != 0)
            return 7;
        if (x.is_int)
            return mix((uint64_t)x.i);
        if (x.d == tg__num_trunc(x.d) && x.d >= -9223372036854775808.0 &&
            x.d < 9223372036854775808.0)
            return mix((uint64_t)(int64_t)x.d);
        uint64_t bits;
        memcpy(&bits, &x.d, sizeof bits);
        return mix(bits);
    }
    case TG_JT_STRING:
        return mix(str_hash(t, tok) ^ 1);
    case TG_JT_ARRAY: {
        uint64_t h = 3;
        for (size_t j = i + 1; j < tok->a; j = tg__jskip(t, j))
            h = mix(h * 31 + tg__jhash(t, j));
        return h;
    }
    case TG_JT_OBJECT: {
        /* Order-independent: a sum over members. */
        uint64_t h = 5;
        for (size_t j = i + 1; j < tok->a; j = tg__jskip(t, j + 1))
            h += mix(str_hash(t, &t->tok[j]) * 131 + tg__jhash(t, j + 1));
        return mix(h);
    }
    default:
        return mix(k * 1000003ULL);
    }
}
