/* SPDX-License-Identifier: MIT */
/*
 * json_out.c - writing JSON text into a tg__buf: values as jansson's
 * compact dump writes them (by the walk that jcs.c's canonical form shares,
 * json_walk.h, spelled by the writers here), strings escaped the way that
 * dump escapes them (eight bytes at a time over plain ASCII), and times.
 * Renderers, the record writer, the journal's queries and the hooks all write
 * with these, so every JSON text toolgate gives out spells strings and times
 * alike.
 *
 * Times: a duration is kept as the exact double the monotonic clock gave
 * (that is what the journal stores), and written in milliseconds rounded
 * to the microsecond, in the shortest form that reads back as the rounded
 * value (33.56, 1000.4, 7.0): never the 17 significant digits of jansson's
 * "%.17g" (33.560282000000001).
 */
#include "json_out.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "jcs.h"
#include "json_walk.h"
#include "toolgate.h"
#include "utf8.h"

typedef struct dump_ctx {
    tg__buf *out;
    int rc; /* why the buffer refused, 0 while it did not */
} dump_ctx;

static int dump_cb(const char *buffer, size_t size, void *data)
{
    dump_ctx *c = data;
    int rc = tg__buf_append(c->out, buffer, size);
    if (rc != 0) {
        c->rc = rc;
        return -1;
    }
    return 0;
}

/* jansson's compact dump of value, appended (through dump_cb). */
static int dump_jansson(const json_t *value, tg__buf *out)
{
    dump_ctx c = {out, 0};
    if (json_dump_callback(value, dump_cb, &c,
                           JSON_COMPACT | JSON_ENCODE_ANY) == 0)
        return 0;
    /* The buffer's own failures are recorded in c.rc. Otherwise jansson ran
     * out of memory (its loop check allocates) or met a value that holds
     * itself: values built through its checked constructors are always
     * encodable. */
    return c.rc != 0 ? c.rc : TG_ENOMEM;
}

/* Containers nested deeper than this go to jansson's dumper whole: only
 * it checks for a value that holds itself, which a value built by hand
 * can; toolgate's records are trees a few levels deep. */
#define DUMP_DEPTH_MAX 64
#define DUMP_DEEP 1 /* the walk: deeper than DUMP_DEPTH_MAX */

static int dump_integer(tg__buf *out, json_int_t v)
{
    return tg__json_integer(out, (long long)v);
}

static int dump_real(tg__buf *out, const json_t *v)
{
    return dump_jansson(v, out);
}

/* v as jansson's compact dump writes it: objects in their keys' order
 * (jansson keeps insertion order and dumps in it unless asked to sort),
 * strings and integers by the writers below, reals by jansson itself (its
 * "%.17g" and ".0" rules). DUMP_DEEP past the depth limit. */
static const tg__json_style dump_style = {
    .string = tg__json_string,
    .integer = dump_integer,
    .real = dump_real,
    .sorted = false,
    .max_depth = DUMP_DEPTH_MAX,
    .too_deep = DUMP_DEEP,
};

int tg__json_dump(const json_t *value, tg__buf *out)
{
    /* Written here, not by json_dump_callback: for every container that
     * checks for loops with a hash table keyed by the container's address
     * printed by snprintf (an allocation and a format a level), which made
     * most of the journal's cost of a result's small objects. */
    size_t start = out->len;
    int rc = tg__json_walk(value, out, &dump_style);
    if (rc != DUMP_DEEP)
        return rc;
    out->len = start;
    if (out->data != NULL)
        out->data[start] = '\0';
    return dump_jansson(value, out);
}

char *tg__json_dumps(const json_t *value)
{
    /* A result's objects are small: written on the stack, then copied
     * once (tg__buf_take) instead of grown by realloc from 64 bytes. */
    char small[512];
    tg__buf b;
    tg__buf_init_with(&b, small, sizeof small, 0);
    if (tg__json_dump(value, &b) != 0) {
        tg__buf_cleanup(&b);
        return NULL;
    }
    return tg__buf_take(&b);
}

/* Writes the escape of byte c (a control character, '"' or '\\') at w as
 * jansson's compact output does; returns the end. */
static char *escape_byte(char *w, unsigned char c)
{
    static const char hex[] = "0123456789ABCDEF";
    *w++ = '\\';
    switch (c) {
    case '"':
    case '\\':
        *w++ = (char)c;
        break;
    case '\b':
        *w++ = 'b';
        break;
    case '\f':
        *w++ = 'f';
        break;
    case '\n':
        *w++ = 'n';
        break;
    case '\r':
        *w++ = 'r';
        break;
    case '\t':
        *w++ = 't';
        break;
    default:
        memcpy(w, "u00", 3);
        w[3] = hex[c >> 4];
        w[4] = hex[c & 15];
        w += 5;
        break;
    }
    return w;
}

/* Length of the leading run of s[0..n) that is printable ASCII but '"' and
 * '\\', eight bytes at a time where it can (the zero-byte test of "Bit
 * Twiddling Hacks"; the lowest flagged byte of a word is always right). */
static size_t ascii_run(const unsigned char *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101ULL;
    size_t i = 0;
    while (n - i >= 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
        uint64_t hit = (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) |
                        ((bs - ones) & ~bs) | w) &
                       0x8080808080808080ULL;
        if (hit != 0) {
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            i += (size_t)__builtin_ctzll(hit) >> 3;
#endif
            break;
        }
        i += 8;
    }
    while (i < n && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\')
        i++;
    return i;
}

int tg__json_string(tg__buf *out, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    int rc;
    /* Short strings reserve their worst case (6 bytes out per byte in, for
     * \u00XX and \uFFFD) once and are written without further checks. */
    size_t worst = 6 * len + 2;
    if (len <= 4096 && worst <= out->limit - out->len) {
        if ((rc = tg__buf_reserve(out, worst)) != 0)
            return rc;
        char *w = out->data + out->len;
        *w++ = '"';
        while (i < len) {
            size_t k = ascii_run(s + i, len - i);
            memcpy(w, s + i, k);
            w += k;
            i += k;
            if (i >= len)
                break;
            if (s[i] >= 0x80) {
                size_t seq = tg__utf8_seq(s + i, len - i);
                if (seq > 0) {
                    memcpy(w, s + i, seq);
                    w += seq;
                    i += seq;
                } else {
                    memcpy(w, "\\uFFFD", 6);
                    w += 6;
                    i++;
                }
            } else
                w = escape_byte(w, s[i++]);
        }
        *w++ = '"';
        *w = '\0';
        out->len = (size_t)(w - out->data);
        return 0;
    }
    /* Long strings, or a limit too close for the worst case: run by run. */
    if ((rc = tg__buf_append(out, "\"", 1)) != 0)
        return rc;
    while (i < len) {
        size_t k = ascii_run(s + i, len - i);
        if (k > 0 && (rc = tg__buf_append(out, s + i, k)) != 0)
            return rc;
        i += k;
        if (i >= len)
            break;
        char esc[8];
        size_t n;
        if (s[i] >= 0x80) {
            size_t seq = tg__utf8_seq(s + i, len - i);
            if (seq > 0) {
                if ((rc = tg__buf_append(out, s + i, seq)) != 0)
                    return rc;
                i += seq;
                continue;
            }
            memcpy(esc, "\\uFFFD", 6);
            n = 6;
            i++;
        } else
            n = (size_t)(escape_byte(esc, s[i++]) - esc);
        if ((rc = tg__buf_append(out, esc, n)) != 0)
            return rc;
    }
    return tg__buf_append(out, "\"", 1);
}

/* Below this many milliseconds (10^12, 31 years) a value rounded to the
 * microsecond has at most 15 significant digits, and every decimal of 15
 * digits reads back as itself: the shortest form is exactly the rounded
 * value's digits. Larger values are written in their shortest form. */
#define MS_ROUNDED_BELOW 1e12

int tg__json_integer(tg__buf *out, long long v)
{
    char num[24], *w = num + sizeof num;
    /* Negated as unsigned: the most negative value has no positive twin. */
    unsigned long long u =
        v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        *--w = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        *--w = '-';
    return tg__buf_append(out, w, (size_t)(num + sizeof num - w));
}

int tg__json_ms(tg__buf *out, double ms)
{
    char num[48];
    if (!isfinite(ms))
        return TG_EINVAL;
    if (ms > -MS_ROUNDED_BELOW && ms < MS_ROUNDED_BELOW) {
        /* half away from zero; |us| < 10^15 fits an int64_t exactly */
        double us = ms * 1000;
        int64_t k = (int64_t)(us + (us < 0 ? -0.5 : 0.5));
        /* The shortest form is k's digits with the point three places in
         * (see MS_ROUNDED_BELOW), written here without the general
         * writer: the integer part, then the thousandths without their
         * trailing zeros (".0" when none are left). */
        uint64_t u = k < 0 ? (uint64_t)-k : (uint64_t)k;
        char *end = num + sizeof num, *w = end;
        unsigned frac = (unsigned)(u % 1000);
        if (frac == 0)
            *--w = '0';
        else {
            int digits = 3;
            while (frac % 10 == 0) {
                frac /= 10;
                digits--;
            }
            while (digits-- > 0) {
                *--w = (char)('0' + frac % 10);
                frac /= 10;
            }
        }
        *--w = '.';
        u /= 1000;
        do
            *--w = (char)('0' + u % 10);
        while ((u /= 10) > 0);
        if (k < 0)
            *--w = '-';
        return tg__buf_append(out, w, (size_t)(end - w));
    }
    if (ms == 0)
        ms = 0; /* -0 too */
    int n = tg__jcs_number(ms, num, sizeof num - 2);
    if (n < 0)
        return TG_EINVAL;
    /* A whole number keeps its ".0", as jansson writes reals: readers that
     * tell integers from reals (jansson) still read a real. */
    if (memchr(num, '.', (size_t)n) == NULL &&
        memchr(num, 'e', (size_t)n) == NULL) {
        memcpy(num + n, ".0", 2);
        n += 2;
    }
    return tg__buf_append(out, num, (size_t)n);
}
