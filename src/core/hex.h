/* SPDX-License-Identifier: MIT */
/*
 * hex.h - hexadecimal digits: the value of one, for the parsers that read
 * "\uXXXX" escapes (jtape.c) and "%XX" escapes (src/schema/uri.c), and
 * bytes written as lowercase hex (checksums, artifact ids, session ids).
 */
#ifndef TG_CORE_HEX_H
#define TG_CORE_HEX_H

#include <stddef.h>

/* 0-15 for '0'-'9', 'a'-'f', 'A'-'F'; -1 for anything else. */
static inline int tg__hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* in[0..n) as 2n lowercase hex digits and a NUL in out[2n + 1]. */
static inline void tg__hex_encode(const unsigned char *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

#endif
