/* SPDX-License-Identifier: MIT */
/*
 * num.c - numbers as JSON Schema compares them: exactly, across integers
 * and reals (1 == 1.0, and 2^63-1 against a double without rounding), and
 * multipleOf on the decimal text as written, so 0.0075 is a multiple of
 * 0.0001 although their doubles say otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int tg__jnum(const tg__jtape *t, size_t i, tg__num *out)
{
    int64_t iv = 0;
    double dv = 0;
    int rc = tg__jtape_number(t, &t->tok[i], &iv, &dv);
    if (rc < 0)
        return TG_ENOMEM;
    out->is_int = rc == 1;
    out->i = iv;
    out->d = rc == 1 ? (double)iv : dv;
    return 0;
}

double tg__num_trunc(double d)
{
    /* Past 2^52 every double is an integer (and NaN stays NaN). */
    if (d != d || d >= 4503599627370496.0 || d <= -4503599627370496.0)
        return d;
    return (double)(int64_t)d;
}

/* i against d, exactly. */
static int cmp_int_double(int64_t i, double d)
{
    if (d >= 9223372036854775808.0)
        return -1;
    if (d < -9223372036854775808.0)
        return 1;
    double t = tg__num_trunc(d);
    int64_t ti = (int64_t)t;
    if (i != ti)
        return i < ti ? -1 : 1;
    double f = d - t;
    return f > 0 ? -1 : f < 0 ? 1 : 0;
}

int tg__num_cmp(const tg__num *a, const tg__num *b)
{
    if (a->is_int && b->is_int)
        return a->i < b->i ? -1 : a->i > b->i;
    if (!a->is_int && !b->is_int)
        return a->d < b->d ? -1 : a->d > b->d;
    if (a->is_int)
        return cmp_int_double(a->i, b->d);
    return -cmp_int_double(b->i, a->d);
}

void tg__num_format(double d, char *out, size_t cap)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(out, cap, "%.*g", p, d);
        if (strtod(out, NULL) == d)
            return;
    }
}

typedef unsigned __int128 u128;

/* A decimal text as mantissa * 10^exp, the mantissa without trailing
 * zeros. 0 when it does not fit 36 digits (or is not a number). */
static int decimal(const char *s, size_t n, u128 *mant, long *exp)
{
    size_t i = 0;
    u128 m = 0;
    int digits = 0;
    long e = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        i++;
    int seen_dot = 0;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '.') {
            seen_dot = 1;
            continue;
        }
        if (c < '0' || c > '9')
            break;
        if (m == 0 && c == '0') {
            if (seen_dot)
                e--;
            continue;
        }
        if (++digits > 36)
            return 0;
        m = m * 10 + (unsigned)(c - '0');
        if (seen_dot)
            e--;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        char buf[24];
        size_t k = n - i - 1;
        if (k == 0 || k >= sizeof buf)
            return 0;
        memcpy(buf, s + i + 1, k);
        buf[k] = '\0';
        char *end;
        long x = strtol(buf, &end, 10);
        if (*end != '\0' || x > 100000 || x < -100000)
            return 0;
        e += x;
    } else if (i != n) {
        return 0;
    }
    while (m != 0 && m % 10 == 0) {
        m /= 10;
        e++;
    }
    *mant = m;
    *exp = e;
    return 1;
}

int tg__num_multiple(const char *x, size_t xlen, const char *m, size_t mlen)
{
    u128 X, M;
    long ex, em;
    if (decimal(x, xlen, &X, &ex) && decimal(m, mlen, &M, &em) && M != 0) {
        if (X == 0)
            return 1;
        /* X has no trailing zeros: it cannot be a multiple of M * 10^k
         * for k > 0. */
        if (ex < em)
            return 0;
        u128 r = X % M;
        for (long k = ex - em; k > 0 && r != 0; k--)
            r = (r * 10) % M;
        return r == 0;
    }
    /* Past 36 significant digits: through doubles. */
    char xb[64], mb[64];
    if (xlen >= sizeof xb || mlen >= sizeof mb)
        return 0;
    memcpy(xb, x, xlen);
    xb[xlen] = '\0';
    memcpy(mb, m, mlen);
    mb[mlen] = '\0';
    double q = strtod(xb, NULL) / strtod(mb, NULL);
    if (!isfinite(q))
        return 0;
    double r = q - tg__num_trunc(q + (q < 0 ? -0.5 : 0.5));
    double aq = q < 0 ? -q : q;
    return (r < 0 ? -r : r) <= 1e-9 * (aq > 1.0 ? aq : 1.0);
}
