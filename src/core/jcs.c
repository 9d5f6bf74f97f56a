/* SPDX-License-Identifier: MIT */
/*
 * jcs.c - RFC 8785 JSON Canonicalization Scheme over jansson values, the input
 * of every call checksum, so it sits on the hot path of every call. It writes
 * straight into a tg__buf, sorts object members on a scratch array shared by
 * the whole traversal (no allocation for small documents), and compares keys
 * by UTF-16 code units without converting them: UTF-8 byte order equals
 * UTF-16 order except where a supplementary character (4-byte UTF-8,
 * a surrogate pair in UTF-16) meets U+E000..U+FFFF, which is fixed up at the
 * first differing byte.
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

#include "toolgate.h"

#define JCS_MAX_DEPTH 4096
#define JCS_SMALL_MEMBERS 32
#define JCS_MAX_SAFE_INT 9007199254740992LL /* 2^53 */

typedef struct member {
    const char *key;
    size_t len;
    json_t *value; /* borrowed */
    /* tapes: the value's token, and where an escaped key was decoded to */
    size_t vidx;
    size_t koff;
    bool decoded;
} member;

/* State of one tg__jcs_write call. Members of every open object live on one
 * stack-like array (`m`), addressed by index because it may be reallocated
 * while outer objects still use their slice of it. */
typedef struct jcs_ctx {
    tg__buf *out;
    member *m;
    size_t used, cap;
    member small[JCS_SMALL_MEMBERS];
    /* tapes only */
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

int tg__jcs_write_string(const char *s, size_t len, tg__buf *out)
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

static int write_integer(json_int_t v, tg__buf *out)
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

/* ------------------------------------------------------------ objects */

/* Compares two keys by UTF-16 code units. Byte order of valid UTF-8 is code
 * point order; the two differ only when one character is supplementary (lead
 * byte F0..F4, a surrogate D800..DBFF in UTF-16) and the other is in
 * U+E000..U+FFFF (lead byte EE or EF): then the supplementary one sorts
 * first. A differing byte that is a lead byte marks the start of both
 * characters, since the bytes before it are equal. */
static int key_cmp(const member *x, const member *y)
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

static void sort_members(member *m, size_t n)
{
    if (n > 16) {
        qsort(m, n, sizeof *m, key_cmp_q);
        return;
    }
    /* Insertion sort: no call through a pointer for the common small case. */
    for (size_t i = 1; i < n; i++) {
        member t = m[i];
        size_t j = i;
        while (j > 0 && key_cmp(&m[j - 1], &t) > 0) {
            m[j] = m[j - 1];
            j--;
        }
        m[j] = t;
    }
}

/* Makes room for n more members on the scratch stack. */
static int reserve_members(jcs_ctx *c, size_t n)
{
    if (n <= c->cap - c->used)
        return 0;
    size_t cap = c->cap * 2;
    while (cap - c->used < n) {
        if (cap > SIZE_MAX / (2 * sizeof(member)))
            return TG_ENOMEM;
        cap *= 2;
    }
    member *m;
    if (c->m == c->small) {
        m = malloc(cap * sizeof *m);
        if (m != NULL)
            memcpy(m, c->small, c->used * sizeof *m);
    } else {
        m = realloc(c->m, cap * sizeof *m);
    }
    if (m == NULL)
        return TG_ENOMEM;
    c->m = m;
    c->cap = cap;
    return 0;
}

static int write_value(jcs_ctx *c, const json_t *v, int depth);

static int write_object(jcs_ctx *c, const json_t *obj, int depth)
{
    tg__buf *out = c->out;
    size_t n = json_object_size(obj);
    size_t base = c->used;
    int rc;
    if (n == 0)
        return put(out, "{}", 2);
    if ((rc = reserve_members(c, n)) != 0)
        return rc;
    size_t got = 0;
    for (void *it = json_object_iter((json_t *)obj); it != NULL && got < n;
         it = json_object_iter_next((json_t *)obj, it)) {
        member *m = &c->m[base + got++];
        m->key = json_object_iter_key(it);
#if JANSSON_VERSION_HEX >= 0x020e00
        m->len = json_object_iter_key_len(it);
#else
        m->len = strlen(m->key);
#endif
        m->value = json_object_iter_value(it); /* borrowed */
    }
    c->used = base + got;
    sort_members(c->m + base, got);
    rc = putc1(out, '{');
    for (size_t i = 0; rc == 0 && i < got; i++) {
        /* Re-read through c->m: nested objects may have moved the array. */
        const member *m = &c->m[base + i];
        json_t *value = m->value; /* borrowed */
        if (i > 0 && (rc = putc1(out, ',')) != 0)
            break;
        if ((rc = tg__jcs_write_string(m->key, m->len, out)) != 0 ||
            (rc = putc1(out, ':')) != 0)
            break;
        rc = write_value(c, value, depth + 1);
    }
    c->used = base;
    return rc != 0 ? rc : putc1(out, '}');
}

static int write_value(jcs_ctx *c, const json_t *v, int depth)
{
    tg__buf *out = c->out;
    int rc;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        if (depth > JCS_MAX_DEPTH)
            return TG_ELIMIT;
        return write_object(c, v, depth);
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        if (depth > JCS_MAX_DEPTH)
            return TG_ELIMIT;
        if ((rc = putc1(out, '[')) != 0)
            return rc;
        for (size_t i = 0; i < n; i++) {
            if (i > 0 && (rc = putc1(out, ',')) != 0)
                return rc;
            if ((rc = write_value(c, json_array_get(v, i), depth + 1)) != 0)
                return rc;
        }
        return putc1(out, ']');
    }
    case JSON_STRING:
        return tg__jcs_write_string(json_string_value(v), json_string_length(v),
                                    out);
    case JSON_INTEGER:
        return write_integer(json_integer_value(v), out);
    case JSON_REAL: {
        char num[40];
        int n = tg__jcs_number(json_real_value(v), num, sizeof num);
        return n < 0 ? TG_EINVAL : put(out, num, (size_t)n);
    }
    case JSON_TRUE:
        return put(out, "true", 4);
    case JSON_FALSE:
        return put(out, "false", 5);
    case JSON_NULL:
        return put(out, "null", 4);
    }
    return TG_EINVAL;
}

int tg__jcs_write(const json_t *value, tg__buf *out)
{
    jcs_ctx c;
    if (value == NULL)
        return TG_EINVAL;
    c.out = out;
    c.m = c.small;
    c.used = 0;
    c.cap = JCS_SMALL_MEMBERS;
    int rc = write_value(&c, value, 1);
    if (c.m != c.small)
        free(c.m);
    return rc;
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
    return tg__jcs_write_string(s, n, out);
}

static int write_tvalue(jcs_ctx *c, size_t i, size_t *next);

static int write_tobject(jcs_ctx *c, size_t i, size_t *next)
{
    const tg__jtape *t = c->tape;
    const tg__jtok *obj = &t->tok[i];
    tg__buf *out = c->out;
    size_t n = obj->b, base = c->used, kbase = c->keys.len;
    int rc;
    *next = obj->a;
    if (n == 0)
        return put(out, "{}", 2);
    if ((rc = reserve_members(c, n)) != 0)
        return rc;
    size_t j = i + 1;
    for (size_t k = 0; k < n; k++) {
        const tg__jtok *key = &t->tok[j];
        member *m = &c->m[base + k];
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
        if (c->m[base + k].decoded)
            c->m[base + k].key = c->keys.data + c->m[base + k].koff;
    c->used = base + n;
    sort_members(c->m + base, n);
    rc = putc1(out, '{');
    for (size_t k = 0; rc == 0 && k < n; k++) {
        /* Re-read through c->m and re-resolve decoded keys: nested objects
         * may have moved both arrays. */
        const member *m = &c->m[base + k];
        size_t vidx = m->vidx, after;
        if (k > 0 && (rc = putc1(out, ',')) != 0)
            break;
        if ((rc = m->decoded ? tg__jcs_write_string(c->keys.data + m->koff,
                                                    m->len, out)
                             : write_plain(out, m->key, m->len)) != 0 ||
            (rc = putc1(out, ':')) != 0)
            break;
        rc = write_tvalue(c, vidx, &after);
    }
    c->used = base;
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
        return tg__jcs_write_string(c->str.data, c->str.len, out);
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
            return write_integer((json_int_t)iv, out);
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
    c.m = c.small;
    c.used = 0;
    c.cap = JCS_SMALL_MEMBERS;
    c.tape = tape;
    tg__buf_init_with(&c.keys, kstore, sizeof kstore, 0);
    tg__buf_init_with(&c.str, sstore, sizeof sstore, 0);
    int rc = write_tvalue(&c, 0, &next);
    if (c.m != c.small)
        free(c.m);
    tg__buf_cleanup(&c.keys);
    tg__buf_cleanup(&c.str);
    return rc;
}
