/* SPDX-License-Identifier: MIT */
/*
 * jcs.c - RFC 8785 JSON Canonicalization Scheme over jansson values, the input
 * of every call checksum, so it sits on the hot path of every call. It writes
 * straight into a tg__buf: jansson values through the walk json_out.c's dump
 * shares (json_walk.h), spelled by the string and number writers here, with
 * object members sorted by UTF-16 code units on the walk's scratch stack (no
 * allocation for small documents).
 *
 * Numbers: jansson integers with |v| <= 2^53 are written as integers; larger
 * ones are converted to the nearest double and written as that double, which
 * is what ECMAScript (and so every other JCS implementation) would see.
 *
 * The same writer runs over a JSON tape (jtape.h), the form in which calls
 * keep their arguments: one traversal of the tokens, keys and strings
 * decoded only when they have escapes, numbers read as jansson would read
 * them, so the bytes equal those of the jansson value of the same text.
 */
#include "jcs.h"

#include <float.h>
#include <math.h> /* isfinite only: the core does not link libm */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_walk.h"
#include "toolgate.h"

/* Containers nested deeper than this fail with TG_ELIMIT (the top one is at
 * depth 0). */
#define JCS_MAX_DEPTH 4096
#define JCS_MAX_SAFE_INT 9007199254740992LL /* 2^53 */

typedef tg__jmember member;

/* State of one tg__jcs_write_tape call. Members of every open object live
 * on the stack-like array of `ms` (json_walk.h). */
typedef struct jcs_ctx {
    tg__buf *out;
    tg__jmembers ms;
    const tg__jtape *tape;
    tg__buf keys; /* decoded escaped keys of the open objects */
    tg__buf str;  /* the decoded string being written */
} jcs_ctx;

/* ------------------------------------------------------------ output */

/* Appends n bytes; the check for room is inline, growing is tg__buf_append's
 * (which also keeps its cut-at-the-limit semantics). */
static inline int put(tg__buf *b, const char *p, size_t n)
{
    if (n < b->cap - b->len && n <= b->limit - b->len) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
        return 0;
    }
    return tg__buf_append(b, p, n);
}

static inline int putc1(tg__buf *b, char c)
{
    if (b->cap - b->len > 1 && b->len < b->limit) {
        b->data[b->len++] = c;
        b->data[b->len] = '\0';
        return 0;
    }
    return tg__buf_append(b, &c, 1);
}

/* ------------------------------------------------------------ strings */

/* Strings up to this many bytes reserve their worst case (6 bytes out per
 * byte in) and are written without per-byte checks. */
#define JCS_DIRECT_MAX 4096

/* 1 for bytes JSON.stringify escapes: control characters, '"' and '\'. */
static const unsigned char needs_escape[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x00 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x10 */
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x20 '"' */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x30 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x40 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, /* 0x50 '\\' */
};

/* Length of the leading run of p[0..n) that is copied unescaped. Eight bytes
 * at a time: a word with no byte below 0x20, no '"' and no '\' is skipped
 * whole (the zero-byte test of "Bit Twiddling Hacks"); a hit, possibly a
 * false one, falls through to the exact per-byte loop. */
static size_t plain_prefix(const unsigned char *p, size_t n)
{
    const uint64_t ones = 0x0101010101010101ULL;
    const uint64_t highs = 0x8080808080808080ULL;
    size_t i = 0;
    while (n - i >= 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        uint64_t q = w ^ (ones * '"');
        uint64_t bs = w ^ (ones * '\\');
        uint64_t hit =
            ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((bs - ones) & ~bs);
        if (hit & highs)
            break;
        i += 8;
    }
    while (i < n && !needs_escape[p[i]])
        i++;
    return i;
}

/* Writes the escape of byte c (one needs_escape says yes to) at w; returns
 * the end. */
static char *escape_byte(char *w, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    *w++ = '\\';
    switch (c) {
    case '\b':
        *w++ = 'b';
        break;
    case '\t':
        *w++ = 't';
        break;
    case '\n':
        *w++ = 'n';
        break;
    case '\f':
        *w++ = 'f';
        break;
    case '\r':
        *w++ = 'r';
        break;
    case '"':
    case '\\':
        *w++ = (char)c;
        break;
    default:
        *w++ = 'u';
        *w++ = '0';
        *w++ = '0';
        *w++ = hex[c >> 4];
        *w++ = hex[c & 0xf];
        break;
    }
    return w;
}

/* tg__jcs_write_string, in the order of a style's string writer. */
static int jcs_string(tg__buf *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t worst = 6 * len + 2;
    size_t i = 0;
    int rc;
    if (len <= JCS_DIRECT_MAX && worst <= out->limit - out->len) {
        /* Within the limit, so reserving can only fail for memory. */
        if (worst >= out->cap - out->len &&
            (rc = tg__buf_reserve(out, worst)) != 0)
            return rc;
        char *w = out->data + out->len;
        *w++ = '"';
        while (i < len) {
            size_t k = plain_prefix(p + i, len - i);
            memcpy(w, p + i, k);
            w += k;
            i += k;
            if (i < len)
                w = escape_byte(w, p[i++]);
        }
        *w++ = '"';
        *w = '\0';
        out->len = (size_t)(w - out->data);
        return 0;
    }
    /* Long strings, or a limit too close for the worst case: run by run. */
    if ((rc = putc1(out, '"')) != 0)
        return rc;
    while (i < len) {
        size_t k = plain_prefix(p + i, len - i);
        if (k > 0 && (rc = put(out, s + i, k)) != 0)
            return rc;
        i += k;
        if (i < len) {
            char esc[8];
            char *end = escape_byte(esc, p[i++]);
            if ((rc = put(out, esc, (size_t)(end - esc))) != 0)
                return rc;
        }
    }
    return putc1(out, '"');
}

int tg__jcs_write_string(const char *s, size_t len, tg__buf *out)
{
    return jcs_string(out, s, len);
}

/* ------------------------------------------------------------ numbers */

/* Writes |v| in decimal backwards ending at end; returns the start. */
static char *utoa_rev(uint64_t v, char *end)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return end;
}

/* Renders d with `prec` digits after the point in %e form into tmp and
 * reports whether that text reads back as exactly d (same locale both ways). */
static bool render_round_trips(double d, int prec, char tmp[40])
{
    int n = snprintf(tmp, 40, "%.*e", prec, d);
    if (n <= 0 || n >= 40)
        return false;
    return strtod(tmp, NULL) == d;
}

/* Exact powers of ten (every one up to 1e22 is a double). */
static const double pow10_exact[16] = {1e0,  1e1,  1e2,  1e3, 1e4,  1e5,
                                       1e6,  1e7,  1e8,  1e9, 1e10, 1e11,
                                       1e12, 1e13, 1e14, 1e15};

/* Fast path of shortest_digits for values with a short decimal form (0.1,
 * 3.14159, 12.75): the smallest k <= 15 for which m = round(d * 10^k) reads
 * back as d, tested exactly as m / 10^k in double arithmetic (both operands
 * exact, the quotient correctly rounded, so it equals strtod of "m e-k").
 * With d * 10^k below 2^50 the product is off by at most 1/8 from the true
 * value, so a k-digit decimal that round-trips is always the one found, and
 * at most one can: two would be 10^-k apart, more than d's ulp. Fewer
 * fractional digits at the same magnitude is fewer significant digits, so
 * the first k is the shortest form. Returns the digit count, or 0 when the
 * fast path does not apply and printf must decide. */
static int short_decimal(double d, char dig[24], int *exp10)
{
    for (int k = 1; k < 16; k++) {
        double p = d * pow10_exact[k];
        if (p >= 1125899906842624.0) /* 2^50 */
            return 0;
        uint64_t m = (uint64_t)(p + 0.5);
        if (m == 0 || (double)m / pow10_exact[k] != d)
            continue;
        char tmp[24];
        char *end = tmp + sizeof tmp;
        char *s = utoa_rev(m, end);
        int nd = (int)(end - s);
        *exp10 = nd - k - 1;
        while (nd > 1 && s[nd - 1] == '0')
            nd--;
        memcpy(dig, s, (size_t)nd);
        return nd;
    }
    return 0;
}

/* Shortest round-trip digits of d > 0 (ES2019 7.1.12.1 step 5: k as small as
 * possible, then the s closest to d, ties to even as glibc's printf rounds)
 * into dig; returns k and sets *exp10 to the decimal exponent of dig[0].
 * The correctly rounded p-digit decimal round-trips whenever any p-digit
 * decimal does, so the first p that round-trips gives the answer. For normal
 * doubles 15 significant digits always identify a shorter decimal uniquely
 * (DBL_DIG), so when 15 digits round-trip the shortest form is those digits
 * without trailing zeros and 1..14 digits need not be tried; subnormals have
 * fewer bits of precision and take the full search. */
static int shortest_digits(double d, char dig[24], int *exp10)
{
    char tmp[40];
    int p;
    if (d >= DBL_MIN && (p = short_decimal(d, dig, exp10)) > 0)
        return p;
    if (d >= DBL_MIN) {
        if (!render_round_trips(d, 14, tmp) && !render_round_trips(d, 15, tmp))
            render_round_trips(d, 16, tmp); /* 17 digits always do */
    } else {
        for (p = 0; p < 16 && !render_round_trips(d, p, tmp); p++)
            ;
        if (p == 16)
            render_round_trips(d, 16, tmp);
    }
    /* The radix character depends on the locale; skip whatever it is. */
    int k = 0;
    int i = 0;
    for (; tmp[i] != '\0' && tmp[i] != 'e'; i++)
        if (tmp[i] >= '0' && tmp[i] <= '9' && k < 23)
            dig[k++] = tmp[i];
    if (tmp[i] != 'e')
        return -1;
    *exp10 = (int)strtol(tmp + i + 1, NULL, 10);
    while (k > 1 && dig[k - 1] == '0')
        k--;
    return k;
}

int tg__jcs_number(double d, char *buf, size_t size)
{
    char out[40];
    char *w = out;
    if (!isfinite(d))
        return -1;
    if (d == 0) {
        out[0] = '0'; /* also -0: ES writes "0" */
        w = out + 1;
    } else if (d <= (double)JCS_MAX_SAFE_INT &&
               d >= -(double)JCS_MAX_SAFE_INT && d == (double)(int64_t)d) {
        /* Integral values up to 2^53 print exactly as integers, the same
         * digits the general path would produce, without printf. */
        char tmp[24];
        char *end = tmp + sizeof tmp;
        int64_t iv = (int64_t)d;
        char *s = utoa_rev((uint64_t)(iv < 0 ? -iv : iv), end);
        if (d < 0)
            *w++ = '-';
        memcpy(w, s, (size_t)(end - s));
        w += end - s;
    } else {
        char dig[24];
        int e10;
        if (d < 0) {
            *w++ = '-';
            d = -d;
        }
        int k = shortest_digits(d, dig, &e10);
        if (k <= 0)
            return -1;
        int n = e10 + 1; /* d = 0.dig * 10^n */
        if (k <= n && n <= 21) {
            memcpy(w, dig, (size_t)k);
            w += k;
            memset(w, '0', (size_t)(n - k));
            w += n - k;
        } else if (0 < n && n <= 21) {
            memcpy(w, dig, (size_t)n);
            w += n;
            *w++ = '.';
            memcpy(w, dig + n, (size_t)(k - n));
            w += k - n;
        } else if (-6 < n && n <= 0) {
            *w++ = '0';
            *w++ = '.';
            memset(w, '0', (size_t)-n);
            w += -n;
            memcpy(w, dig, (size_t)k);
            w += k;
        } else {
            *w++ = dig[0];
            if (k > 1) {
                *w++ = '.';
                memcpy(w, dig + 1, (size_t)(k - 1));
                w += k - 1;
            }
            *w++ = 'e';
            *w++ = n - 1 < 0 ? '-' : '+';
            char tmp[8];
            char *end = tmp + sizeof tmp;
            char *s = utoa_rev((uint64_t)abs(n - 1), end);
            memcpy(w, s, (size_t)(end - s));
            w += end - s;
        }
    }
    size_t len = (size_t)(w - out);
    if (buf == NULL || len >= size)
        return -1;
    memcpy(buf, out, len);
    buf[len] = '\0';
    return (int)len;
}

static int write_integer(tg__buf *out, json_int_t v)
{
    if (v > JCS_MAX_SAFE_INT || v < -JCS_MAX_SAFE_INT) {
        /* Beyond 2^53 a JSON number means the nearest double in ES. */
        char num[40];
        int n = tg__jcs_number((double)v, num, sizeof num);
        return n < 0 ? TG_EINVAL : put(out, num, (size_t)n);
    }
    char tmp[24];
    char *end = tmp + sizeof tmp;
    char *s = utoa_rev((uint64_t)(v < 0 ? -v : v), end);
    if (v < 0)
        *--s = '-';
    return put(out, s, (size_t)(end - s));
}

/* ------------------------------------------------------------ values */

static int write_real(tg__buf *out, const json_t *v)
{
    char num[40];
    int n = tg__jcs_number(json_real_value(v), num, sizeof num);
    return n < 0 ? TG_EINVAL : put(out, num, (size_t)n);
}

static const tg__json_style jcs_style = {
    .string = jcs_string,
    .integer = write_integer,
    .real = write_real,
    .sorted = true,
    .max_depth = JCS_MAX_DEPTH,
    .too_deep = TG_ELIMIT,
};

int tg__jcs_write(const json_t *value, tg__buf *out)
{
    return tg__json_walk(value, out, &jcs_style);
}

/* ------------------------------------------------------------ tapes */

/* Writes a string of the tape that has no escapes. Its bytes are then
 * exactly its value, and none needs escaping in JCS: the text holds no
 * control character, quote or backslash unescaped (the parser refused
 * them), and JSON.stringify escapes nothing else in valid UTF-8. */
static int write_plain(tg__buf *out, const char *s, size_t n)
{
    if (n + 2 < out->cap - out->len && n + 2 <= out->limit - out->len) {
        char *w = out->data + out->len;
        w[0] = '"';
        memcpy(w + 1, s, n);
        w[n + 1] = '"';
        w[n + 2] = '\0';
        out->len += n + 2;
        return 0;
    }
    return jcs_string(out, s, n);
}

static int write_tvalue(jcs_ctx *c, size_t i, size_t *next);

static int write_tobject(jcs_ctx *c, size_t i, size_t *next)
{
    const tg__jtape *t = c->tape;
    const tg__jtok *obj = &t->tok[i];
    tg__buf *out = c->out;
    size_t n = obj->b, base = c->ms.used, kbase = c->keys.len;
    int rc;
    *next = obj->a;
    if (n == 0)
        return put(out, "{}", 2);
    if ((rc = tg__jmembers_reserve(&c->ms, n)) != 0)
        return rc;
    size_t j = i + 1;
    for (size_t k = 0; k < n; k++) {
        const tg__jtok *key = &t->tok[j];
        member *m = &c->ms.m[base + k];
        m->vidx = j + 1;
        m->decoded = (key->flags & TG_JT_ESCAPED) != 0;
        if (m->decoded) {
            m->koff = c->keys.len;
            if ((rc = tg__jtape_decode(t, key, &c->keys)) != 0)
                return rc;
            m->len = c->keys.len - m->koff;
        } else {
            m->key = t->text + key->a;
            m->len = key->b;
        }
        const tg__jtok *v = &t->tok[j + 1];
        j = v->kind == TG_JT_OBJECT || v->kind == TG_JT_ARRAY ? v->a : j + 2;
    }
    /* Decoded keys are addressed by offset while the buffer may grow; it
     * does not grow while sorting. */
    for (size_t k = 0; k < n; k++)
        if (c->ms.m[base + k].decoded)
            c->ms.m[base + k].key = c->keys.data + c->ms.m[base + k].koff;
    c->ms.used = base + n;
    tg__jmembers_sort(c->ms.m + base, n);
    rc = putc1(out, '{');
    for (size_t k = 0; rc == 0 && k < n; k++) {
        /* Re-read through c->ms.m and re-resolve decoded keys: nested objects
         * may have moved both arrays. */
        const member *m = &c->ms.m[base + k];
        size_t vidx = m->vidx, after;
        if (k > 0 && (rc = putc1(out, ',')) != 0)
            break;
        if ((rc = m->decoded ? jcs_string(out, c->keys.data + m->koff, m->len)
                             : write_plain(out, m->key, m->len)) != 0 ||
            (rc = putc1(out, ':')) != 0)
            break;
        rc = write_tvalue(c, vidx, &after);
    }
    c->ms.used = base;
    c->keys.len = kbase;
    return rc != 0 ? rc : putc1(out, '}');
}

static int write_tvalue(jcs_ctx *c, size_t i, size_t *next)
{
    const tg__jtape *t = c->tape;
    const tg__jtok *k = &t->tok[i];
    tg__buf *out = c->out;
    int rc;
    switch (k->kind) {
    case TG_JT_OBJECT:
        return write_tobject(c, i, next);
    case TG_JT_ARRAY: {
        size_t j = i + 1;
        *next = k->a;
        if ((rc = putc1(out, '[')) != 0)
            return rc;
        for (uint32_t e = 0; e < k->b; e++) {
            if (e > 0 && (rc = putc1(out, ',')) != 0)
                return rc;
            if ((rc = write_tvalue(c, j, &j)) != 0)
                return rc;
        }
        return putc1(out, ']');
    }
    case TG_JT_STRING:
        *next = i + 1;
        if (!(k->flags & TG_JT_ESCAPED))
            return write_plain(out, t->text + k->a, k->b);
        c->str.len = 0;
        if ((rc = tg__jtape_decode(t, k, &c->str)) != 0)
            return rc;
        return jcs_string(out, c->str.data, c->str.len);
    case TG_JT_NUMBER: {
        int64_t iv;
        double dv;
        char num[40];
        *next = i + 1;
        /* An integer of at most 15 digits (below 2^53) is written as it
         * was read: JSON allows no leading zeros or '+', so only "-0"
         * (written "0") differs from its canonical form. */
        if (!(k->flags & TG_JT_REAL) && k->b <= 15 &&
            !(k->b == 2 && t->text[k->a] == '-' && t->text[k->a + 1] == '0'))
            return put(out, t->text + k->a, k->b);
        switch (tg__jtape_number(t, k, &iv, &dv)) {
        case 1:
            return write_integer(out, (json_int_t)iv);
        case 2: {
            int n = tg__jcs_number(dv, num, sizeof num);
            return n < 0 ? TG_EINVAL : put(out, num, (size_t)n);
        }
        default:
            return TG_ENOMEM;
        }
    }
    case TG_JT_TRUE:
        *next = i + 1;
        return put(out, "true", 4);
    case TG_JT_FALSE:
        *next = i + 1;
        return put(out, "false", 5);
    case TG_JT_NULL:
        *next = i + 1;
        return put(out, "null", 4);
    }
    return TG_EINVAL;
}

int tg__jcs_write_tape(const tg__jtape *tape, tg__buf *out)
{
    jcs_ctx c;
    char kstore[256], sstore[256];
    size_t next;
    if (tape == NULL || tape->n == 0)
        return TG_EINVAL;
    c.out = out;
    tg__jmembers_init(&c.ms);
    c.tape = tape;
    tg__buf_init_with(&c.keys, kstore, sizeof kstore, 0);
    tg__buf_init_with(&c.str, sstore, sizeof sstore, 0);
    int rc = write_tvalue(&c, 0, &next);
    tg__jmembers_cleanup(&c.ms);
    tg__buf_cleanup(&c.keys);
    tg__buf_cleanup(&c.str);
    return rc;
}
