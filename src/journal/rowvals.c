/* SPDX-License-Identifier: MIT */
/*
 * rowvals.c - the values of one journal row: bound, chained, and written
 * to and read from bytes (rowvals.h).
 *
 * The encoding: one byte, the count of values; then per value one type
 * byte and its data: nothing for NULL, 8 bytes for an integer (two's
 * complement) or a real (IEEE 754 bits), both little-endian; for a text
 * its length in 4 bytes, its bytes and a NUL.
 */
#include "rowvals.h"

#include <string.h>

static tg__rowval *next(tg__rowvals *rv)
{
    tg__rowval *v = &rv->v[rv->n++];
    memset(v, 0, sizeof *v);
    return v;
}

void tg__rowvals_null(tg__rowvals *rv)
{
    next(rv)->type = TG_RV_NULL;
}

void tg__rowvals_int(tg__rowvals *rv, int64_t i)
{
    tg__rowval *v = next(rv);
    v->type = TG_RV_INT;
    v->i = i;
}

void tg__rowvals_real(tg__rowvals *rv, double d)
{
    tg__rowval *v = next(rv);
    v->type = TG_RV_REAL;
    v->d = d;
}

void tg__rowvals_text(tg__rowvals *rv, const char *s)
{
    tg__rowval *v = next(rv);
    if (s == NULL)
        return; /* TG_RV_NULL is 0 */
    v->type = TG_RV_TEXT;
    v->s = s;
    v->len = strlen(s);
}

int tg__rowvals_bind(const tg__rowvals *rv, sqlite3_stmt *st, int first)
{
    int b = SQLITE_OK;
    for (int k = 0; k < rv->n; k++) {
        const tg__rowval *v = &rv->v[k];
        switch (v->type) {
        case TG_RV_INT:
            b |= sqlite3_bind_int64(st, first + k, v->i);
            break;
        case TG_RV_REAL:
            b |= sqlite3_bind_double(st, first + k, v->d);
            break;
        case TG_RV_TEXT:
            b |= sqlite3_bind_text(st, first + k, v->s, (int)v->len,
                                   SQLITE_STATIC);
            break;
        default:
            b |= sqlite3_bind_null(st, first + k);
        }
    }
    return b;
}

void tg__rowvals_chain(const tg__rowvals *rv, tg__chain_hash *h)
{
    for (int k = 0; k < rv->n; k++) {
        const tg__rowval *v = &rv->v[k];
        switch (v->type) {
        case TG_RV_INT:
            tg__chain_int(h, v->i);
            break;
        case TG_RV_REAL:
            tg__chain_real(h, v->d);
            break;
        case TG_RV_TEXT:
            tg__chain_text(h, v->s);
            break;
        default:
            tg__chain_null(h);
        }
    }
}

size_t tg__rowvals_size(const tg__rowvals *rv)
{
    size_t n = 1;
    for (int k = 0; k < rv->n; k++) {
        const tg__rowval *v = &rv->v[k];
        n += 1;
        if (v->type == TG_RV_INT || v->type == TG_RV_REAL)
            n += 8;
        else if (v->type == TG_RV_TEXT)
            n += 4 + v->len + 1;
    }
    return n;
}

static void put64(unsigned char *p, uint64_t x)
{
    for (int b = 0; b < 8; b++)
        p[b] = (unsigned char)(x >> (8 * b));
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t x = 0;
    for (int b = 0; b < 8; b++)
        x |= (uint64_t)p[b] << (8 * b);
    return x;
}

size_t tg__rowvals_write(const tg__rowvals *rv, unsigned char *out)
{
    unsigned char *p = out;
    *p++ = (unsigned char)rv->n;
    for (int k = 0; k < rv->n; k++) {
        const tg__rowval *v = &rv->v[k];
        *p++ = (unsigned char)v->type;
        if (v->type == TG_RV_INT) {
            put64(p, (uint64_t)v->i);
            p += 8;
        } else if (v->type == TG_RV_REAL) {
            uint64_t bits;
            memcpy(&bits, &v->d, sizeof bits);
            put64(p, bits);
            p += 8;
        } else if (v->type == TG_RV_TEXT) {
            uint32_t len = (uint32_t)v->len;
            for (int b = 0; b < 4; b++)
                p[b] = (unsigned char)(len >> (8 * b));
            memcpy(p + 4, v->s, v->len);
            p[4 + v->len] = '\0';
            p += 4 + v->len + 1;
        }
    }
    return (size_t)(p - out);
}

int tg__rowvals_read(const unsigned char *in, size_t len, tg__rowvals *rv,
                     size_t *used)
{
    size_t at = 0;
    if (len < 1 || in[0] > TG_ROWVALS_MAX)
        return -1;
    rv->n = 0;
    int count = in[at++];
    for (int k = 0; k < count; k++) {
        if (at >= len)
            return -1;
        int type = in[at++];
        tg__rowval *v = next(rv);
        v->type = type;
        if (type == TG_RV_NULL)
            continue;
        if (type == TG_RV_INT || type == TG_RV_REAL) {
            if (len - at < 8)
                return -1;
            uint64_t bits = get64(in + at);
            at += 8;
            if (type == TG_RV_INT)
                v->i = (int64_t)bits;
            else
                memcpy(&v->d, &bits, sizeof v->d);
            continue;
        }
        if (type != TG_RV_TEXT || len - at < 4)
            return -1;
        uint32_t n = 0;
        for (int b = 0; b < 4; b++)
            n |= (uint32_t)in[at + (size_t)b] << (8 * b);
        at += 4;
        if (len - at < (size_t)n + 1 || in[at + n] != '\0' ||
            memchr(in + at, '\0', n) != NULL)
            return -1;
        v->s = (const char *)(in + at);
        v->len = n;
        at += (size_t)n + 1;
    }
    *used = at;
    return 0;
}
