/* SPDX-License-Identifier: MIT */
/*
 * json_fast.c - a fast reader for JSON that is plainly valid: a builder of
 * the same jansson values json_loadb returns, and a cursor that walks a
 * document without building it (json_fast.h).
 *
 * Why: jansson's lexer reads one character at a time through a stream
 * abstraction and manages about 50-80 MB/s; a turn of 10,000 calls spent
 * most of its parse time there (about 5 us per call for the document and
 * 2 us per arguments string, against a budget of about 1 us per call for
 * the whole pipeline). This code scans runs of plain bytes at once and
 * builds values with jansson's own constructors.
 *
 * It never decides that input is bad. On anything unusual - a syntax error,
 * "\u0000", a number strtoll/strtod flag with ERANGE or longer than 63
 * characters, nesting deeper than 512, a duplicate key when duplicates are
 * rejected, a locale whose decimal point is not ".", out of memory - it
 * gives up and the caller asks jansson, whose answer and error position are
 * authoritative. What it accepts, json_loadb(JSON_DECODE_ANY) accepts with
 * equal values: same types (integer or real), same strings, same member
 * order. The fuzz targets check that equivalence on every input.
 */
#include "json_fast.h"
#include "utf8.h"

#include <errno.h>
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate.h"

#define MAX_DEPTH 512

void tg__jcur_init(tg__jcur *c, const char *text, size_t len)
{
    memset(c, 0, sizeof *c);
    c->p = (const unsigned char *)text;
    c->end = text ? c->p + len : c->p; /* no arithmetic on NULL */
}

void tg__jcur_cleanup(tg__jcur *c)
{
    free(c->scratch);
    c->scratch = NULL;
    c->scratch_len = c->scratch_cap = 0;
}

static void skip_ws(tg__jcur *c)
{
    while (c->p < c->end &&
           (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t'))
        c->p++;
}

int tg__jcur_peek(tg__jcur *c)
{
    skip_ws(c);
    return c->p < c->end ? *c->p : -1;
}

int tg__jcur_take(tg__jcur *c, int ch)
{
    if (tg__jcur_peek(c) != ch)
        return -1;
    c->p++;
    return 0;
}

int tg__jcur_end(tg__jcur *c)
{
    skip_ws(c);
    return c->p == c->end ? 0 : -1;
}

static long hex4(const unsigned char *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int ch = p[i], d;
        if (ch >= '0' && ch <= '9')
            d = ch - '0';
        else if (ch >= 'a' && ch <= 'f')
            d = ch - 'a' + 10;
        else if (ch >= 'A' && ch <= 'F')
            d = ch - 'A' + 10;
        else
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Plain bytes of a string: printable ASCII but the quote and the backslash,
 * and valid UTF-8 sequences. Returns the end of the run, NULL when a byte
 * makes the string invalid (a control character or bad UTF-8). */
static const unsigned char *plain_run(const unsigned char *p,
                                      const unsigned char *end)
{
    /* Eight bytes at a time while they are all printable ASCII but '"' and
     * '\\' (the zero-byte test of "Bit Twiddling Hacks" for each kind). */
    const uint64_t ones = 0x0101010101010101ULL;
    const uint64_t highs = 0x8080808080808080ULL;
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
        uint64_t hit = ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) |
                       ((bs - ones) & ~bs) | w;
        if (hit & highs)
            break;
        p += 8;
    }
    while (p < end) {
        unsigned char ch = *p;
        if (ch == '"' || ch == '\\')
            return p;
        if (ch < 0x20)
            return NULL;
        if (ch < 0x80) {
            p++;
            continue;
        }
        size_t k = tg__utf8_seq(p, (size_t)(end - p));
        if (k == 0)
            return NULL;
        p += k;
    }
    return p;
}

static size_t utf8_put(long cp, unsigned char u[4])
{
    if (cp < 0x80) {
        u[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        u[0] = (unsigned char)(0xC0 | (cp >> 6));
        u[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        u[0] = (unsigned char)(0xE0 | (cp >> 12));
        u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    u[0] = (unsigned char)(0xF0 | (cp >> 18));
    u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    u[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Makes room for n more bytes of scratch. */
static inline int room(tg__jcur *c, size_t n)
{
    if (c->scratch_cap - c->scratch_len >= n)
        return 0;
    size_t cap = c->scratch_cap ? c->scratch_cap : 256;
    while (cap - c->scratch_len < n)
        cap *= 2;
    char *grown = realloc(c->scratch, cap);
    if (grown == NULL)
        return -1;
    c->scratch = grown;
    c->scratch_cap = cap;
    return 0;
}

/* Decodes the escape at p (a backslash) into scratch, which has room for
 * 4 bytes; returns the byte after it, NULL when it is not one jansson
 * surely accepts. */
static const unsigned char *escape(tg__jcur *c, const unsigned char *p)
{
    char *w = c->scratch + c->scratch_len;
    if (c->end - p < 2)
        return NULL;
    switch (p[1]) {
    case '"':
    case '\\':
    case '/':
        *w = (char)p[1];
        break;
    case 'b':
        *w = '\b';
        break;
    case 'f':
        *w = '\f';
        break;
    case 'n':
        *w = '\n';
        break;
    case 'r':
        *w = '\r';
        break;
    case 't':
        *w = '\t';
        break;
    case 'u': {
        if (c->end - p < 6)
            return NULL;
        long cp = hex4(p + 2);
        if (cp <= 0 ||
            (cp >= 0xDC00 && cp <= 0xDFFF)) /* bad, \u0000, lone low */
            return NULL;
        p += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (c->end - p < 6 || p[0] != '\\' || p[1] != 'u')
                return NULL;
            long lo = hex4(p + 2);
            if (lo < 0xDC00 || lo > 0xDFFF)
                return NULL;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
        }
        c->scratch_len += utf8_put(cp, (unsigned char *)w);
        return p;
    }
    default:
        return NULL;
    }
    c->scratch_len++;
    return p + 2;
}

/* Bit 7 of each byte of the result is set when that byte of w is not a
 * plain string byte (below 0x20, '"', '\\' or 0x80 and above). Bytes above
 * the first such byte may be flagged falsely (borrows of the zero-byte test
 * of "Bit Twiddling Hacks"); the lowest flagged byte is always right. */
static inline uint64_t stops8(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ULL;
    uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
    return (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((bs - ones) & ~bs) |
            w) &
           0x8080808080808080ULL;
}

/* Reads a string whose opening quote has been consumed. */
static int string_body(tg__jcur *c, const char **s, size_t *n)
{
    const unsigned char *start = c->p, *p = plain_run(c->p, c->end);
    const unsigned char *end = c->end;
    if (p == NULL || p >= end)
        return -1;
    if (*p == '"') {
        *s = (const char *)start;
        *n = (size_t)(p - start);
        c->p = p + 1;
        return 0;
    }
    /* Escapes: decode into scratch. Runs between escapes are short in
     * practice (JSON inside a JSON string escapes every quote), so plain
     * bytes are copied eight at a time with an unconditional store and the
     * write position advanced only past the plain ones; the common escapes
     * are decoded in line. */
    c->scratch_len = 0;
    if (room(c, (size_t)(p - start) + 16) != 0)
        return -1;
    memcpy(c->scratch, start, (size_t)(p - start));
    char *w = c->scratch + (p - start);
    for (;;) {
        /* room for 8 stored bytes and one escape's 4 */
        char *wend = c->scratch + c->scratch_cap - 12;
        if (w > wend) {
            c->scratch_len = (size_t)(w - c->scratch);
            if (room(c, 16) != 0)
                return -1;
            w = c->scratch + c->scratch_len;
            continue;
        }
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (end - p >= 8) {
            uint64_t v;
            memcpy(&v, p, 8);
            memcpy(w, &v, 8);
            uint64_t hit = stops8(v);
            if (hit == 0) {
                p += 8;
                w += 8;
                continue;
            }
            size_t k = (size_t)__builtin_ctzll(hit) >> 3;
            p += k;
            w += k;
        } else
#endif
        {
            while (p < end && w <= wend && *p >= 0x20 && *p < 0x80 &&
                   *p != '"' && *p != '\\')
                *w++ = (char)*p++;
            if (p >= end)
                return -1;
            if (w > wend)
                continue; /* out of room: grow */
        }
        unsigned char ch = *p;
        if (ch == '"')
            break;
        if (ch == '\\') {
            if (end - p >= 2 && (p[1] == '"' || p[1] == '\\' || p[1] == '/')) {
                *w++ = (char)p[1];
                p += 2;
                continue;
            }
            c->scratch_len = (size_t)(w - c->scratch);
            if ((p = escape(c, p)) == NULL)
                return -1;
            w = c->scratch + c->scratch_len;
        } else if (ch >= 0x80) {
            size_t k = tg__utf8_seq(p, (size_t)(end - p));
            if (k == 0)
                return -1;
            memcpy(w, p, k);
            w += k;
            p += k;
        } else
            return -1; /* a control character */
    }
    c->scratch_len = (size_t)(w - c->scratch);
    *s = c->scratch;
    *n = c->scratch_len;
    c->p = p + 1;
    return 0;
}

int tg__jcur_string(tg__jcur *c, const char **s, size_t *n)
{
    if (tg__jcur_take(c, '"') != 0)
        return -1;
    return string_body(c, s, n);
}

int tg__jcur_string_into(tg__jcur *c, tg__buf *b)
{
    const char *s;
    size_t n;
    if (tg__jcur_string(c, &s, &n) != 0)
        return -1;
    if (s != c->scratch || b->external || n + 1 > c->scratch_cap ||
        n > b->limit) {
        b->len = 0;
        return tg__buf_append(b, s, n) == 0 ? 0 : TG_ENOMEM;
    }
    /* The decoded string is the scratch's whole contents: give the scratch
     * to b and take b's bytes as the next scratch. */
    char *old = b->data;
    size_t old_cap = b->cap;
    b->data = c->scratch;
    b->cap = c->scratch_cap;
    b->len = n;
    b->data[n] = '\0';
    b->truncated = false;
    c->scratch = old;
    c->scratch_cap = old ? old_cap : 0;
    c->scratch_len = 0;
    return 0;
}

static int is_digit(const unsigned char *p, const unsigned char *end)
{
    return p < end && *p >= '0' && *p <= '9';
}

/* Reads a number at the cursor. Returns 1 for an integer (*iv), 2 for a
 * real (*dv), -1 when it is not one jansson surely reads the same way. */
static int number(tg__jcur *c, json_int_t *iv, double *dv)
{
    const unsigned char *start = c->p, *p = c->p, *end = c->end;
    int real = 0;
    if (p < end && *p == '-')
        p++;
    if (!is_digit(p, end))
        return -1;
    if (*p == '0') {
        if (is_digit(++p, end))
            return -1; /* leading zero */
    } else
        while (is_digit(p, end))
            p++;
    if (p < end && *p == '.') {
        real = 1;
        if (!is_digit(++p, end))
            return -1;
        while (is_digit(p, end))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        real = 1;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (!is_digit(p, end))
            return -1;
        while (is_digit(p, end))
            p++;
    }
    char buf[64];
    size_t n = (size_t)(p - start);
    if (n >= sizeof buf)
        return -1;
    memcpy(buf, start, n);
    buf[n] = '\0';
    c->p = p;
    errno = 0;
    if (!real) {
        long long v = strtoll(buf, NULL, 10);
        if (errno == ERANGE)
            return -1;
        *iv = (json_int_t)v;
        return 1;
    }
    /* jansson adapts the text to the locale's decimal point; only the
     * common "." case is handled here. */
    const struct lconv *lc = localeconv();
    if (lc == NULL || lc->decimal_point == NULL ||
        strcmp(lc->decimal_point, ".") != 0)
        return -1;
    *dv = strtod(buf, NULL);
    return errno == ERANGE ? -1 : 2;
}

static int literal(tg__jcur *c, const char *word, size_t n)
{
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
        return -1;
    c->p += n;
    return 0;
}

int tg__jcur_member(tg__jcur *c, int *first, const char **key, size_t *klen)
{
    int ch = tg__jcur_peek(c);
    if (ch == '}') {
        c->p++;
        return 0;
    }
    if (!*first) {
        if (ch != ',')
            return -1;
        c->p++;
    }
    *first = 0;
    if (tg__jcur_string(c, key, klen) != 0 || tg__jcur_take(c, ':') != 0)
        return -1;
    skip_ws(c);
    return 1;
}

int tg__jcur_element(tg__jcur *c, int *first)
{
    int ch = tg__jcur_peek(c);
    if (ch == ']') {
        c->p++;
        return 0;
    }
    if (!*first) {
        if (ch != ',')
            return -1;
        c->p++;
        skip_ws(c);
    }
    *first = 0;
    return 1;
}

int tg__jcur_skip(tg__jcur *c)
{
    const char *s;
    size_t n;
    json_int_t iv;
    double dv;
    int first = 1, rc;
    switch (tg__jcur_peek(c)) {
    case '{':
    case '[': {
        int open = *c->p++;
        if (c->depth >= MAX_DEPTH)
            return -1;
        c->depth++;
        if (open == '{')
            while ((rc = tg__jcur_member(c, &first, &s, &n)) == 1 &&
                   tg__jcur_skip(c) == 0)
                ;
        else
            while ((rc = tg__jcur_element(c, &first)) == 1 &&
                   tg__jcur_skip(c) == 0)
                ;
        c->depth--;
        return rc == 0 ? 0 : -1;
    }
    case '"':
        c->p++;
        return string_body(c, &s, &n);
    case 't':
        return literal(c, "true", 4);
    case 'f':
        return literal(c, "false", 5);
    case 'n':
        return literal(c, "null", 4);
    case -1:
        return -1;
    default:
        return number(c, &iv, &dv) < 0 ? -1 : 0;
    }
}

/* ------------------------------------------------------------ builder */

static json_t *value(tg__jcur *c, int rejdup);

static json_t *array(tg__jcur *c, int rejdup)
{
    json_t *a = json_array(); /* new ref */
    int first = 1, rc;
    if (a == NULL)
        return NULL;
    while ((rc = tg__jcur_element(c, &first)) == 1) {
        json_t *v = value(c, rejdup); /* new ref */
        if (v == NULL || json_array_append_new(a, v) != 0)
            break;
    }
    if (rc != 0) {
        json_decref(a);
        return NULL;
    }
    return a;
}

static json_t *object(tg__jcur *c, int rejdup)
{
    json_t *o = json_object(); /* new ref */
    char *key_copy = NULL;
    const char *key;
    size_t klen;
    int first = 1, rc;
    if (o == NULL)
        return NULL;
    while ((rc = tg__jcur_member(c, &first, &key, &klen)) == 1) {
        if (key == c->scratch) {
            /* The value may reuse scratch: keep an escaped key aside. */
            if ((key_copy = malloc(klen + 1)) == NULL)
                break;
            memcpy(key_copy, key, klen);
            key = key_copy;
        }
        json_t *v = value(c, rejdup); /* new ref */
        size_t before = json_object_size(o);
        if (v == NULL || json_object_setn_new_nocheck(o, key, klen, v) != 0 ||
            (rejdup && json_object_size(o) == before)) {
            rc = -1;
            break;
        }
        free(key_copy);
        key_copy = NULL;
    }
    free(key_copy);
    if (rc != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *value(tg__jcur *c, int rejdup)
{
    const char *s;
    size_t n;
    json_int_t iv;
    double dv;
    switch (tg__jcur_peek(c)) {
    case '{':
    case '[': {
        int open = *c->p++;
        if (c->depth >= MAX_DEPTH)
            return NULL;
        c->depth++;
        json_t *v = open == '{' ? object(c, rejdup) : array(c, rejdup);
        c->depth--;
        return v;
    }
    case '"':
        c->p++;
        return string_body(c, &s, &n) == 0 ? json_stringn_nocheck(s, n) : NULL;
    case 't':
        return literal(c, "true", 4) == 0 ? json_true() : NULL;
    case 'f':
        return literal(c, "false", 5) == 0 ? json_false() : NULL;
    case 'n':
        return literal(c, "null", 4) == 0 ? json_null() : NULL;
    case -1:
        return NULL;
    default:
        switch (number(c, &iv, &dv)) {
        case 1:
            return json_integer(iv);
        case 2:
            return json_real(dv);
        default:
            return NULL;
        }
    }
}

json_t *tg__json_fast_load(const char *text, size_t len, int reject_duplicates)
{
    tg__jcur c;
    tg__jcur_init(&c, text, len);
    json_t *v = value(&c, reject_duplicates); /* new ref */
    if (v != NULL && tg__jcur_end(&c) != 0) {
        json_decref(v);
        v = NULL;
    }
    tg__jcur_cleanup(&c);
    return v;
}

int tg__jcur_key_is(const char *k, size_t kn, const char *want)
{
    return kn == strlen(want) && memcmp(k, want, kn) == 0;
}

int tg__jcur_string_once(tg__jcur *c, tg__buf *b, int *seen)
{
    if (*seen)
        return TG_JCUR_BAIL;
    int rc = tg__jcur_string_into(c, b);
    if (rc == -1)
        return TG_JCUR_BAIL;
    *seen = 1;
    return rc;
}

int tg__jcur_skip_scalar(tg__jcur *c)
{
    int next = tg__jcur_peek(c);
    if (next == '{' || next == '[')
        return TG_JCUR_BAIL;
    return tg__jcur_skip(c) == 0 ? 0 : TG_JCUR_BAIL;
}

int tg__jcur_skip_any(tg__jcur *c)
{
    return tg__jcur_skip(c) == 0 ? 0 : TG_JCUR_BAIL;
}

int tg__jcur_str_read(tg__jcur *c, tg__jcur_str *f)
{
    if (f->seen || tg__jcur_string(c, &f->s, &f->n) != 0)
        return TG_JCUR_BAIL;
    f->seen = 1;
    if (f->s != c->scratch)
        return 0;
    f->copy.len = 0;
    if (tg__buf_append(&f->copy, f->s, f->n) != 0)
        return TG_ENOMEM;
    f->s = f->copy.data;
    return 0;
}

int tg__jcur_first_element_member(tg__jcur *c, const char *key,
                                  int (*read)(tg__jcur *c, void *ctx),
                                  void *ctx)
{
    const char *k;
    size_t kn;
    int first = 1, e = -1, rc = 0, seen = 0;
    size_t index = 0;
    if (tg__jcur_take(c, '[') != 0)
        return TG_JCUR_BAIL;
    while (rc == 0 && (e = tg__jcur_element(c, &first)) == 1) {
        if (index++ > 0) {
            rc = tg__jcur_skip_any(c); /* only checked */
            continue;
        }
        int mfirst = 1, m = -1;
        if (tg__jcur_take(c, '{') != 0)
            return TG_JCUR_BAIL;
        while (rc == 0 && (m = tg__jcur_member(c, &mfirst, &k, &kn)) == 1) {
            if (tg__jcur_key_is(k, kn, key)) {
                rc = seen ? TG_JCUR_BAIL : read(c, ctx);
                seen = 1;
            } else
                rc = tg__jcur_skip_any(c);
        }
        if (rc == 0 && m != 0)
            rc = TG_JCUR_BAIL;
    }
    if (rc != 0)
        return rc;
    return e == 0 && seen ? 0 : TG_JCUR_BAIL;
}
