/* SPDX-License-Identifier: MIT */
/*
 * utf8.h - UTF-8 validation shared by every reader of JSON text (the tape,
 * the fast reader, the string writer). Inline: it sits in their inner loops.
 */
#ifndef TG_CORE_UTF8_H
#define TG_CORE_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s[0..n) that starts with a byte
 * >= 0x80, or 0 when it is not one (RFC 3629, as jansson's utf8_check_full:
 * no overlongs, no surrogates, nothing above U+10FFFF). */
static inline size_t tg__utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

/* How many of the first `max` bytes of s[0..n) to keep so that no UTF-8
 * character is cut in two (n when n <= max): the cut backs up over the
 * continuation bytes of a character that would straddle it. */
static inline size_t tg__utf8_cut(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return n;
    size_t k = max;
    /* s[k] is the first byte left out: while it continues a character,
     * that character began in the kept part; leave it out whole. */
    while (k > 0 && max - k < 4 && ((unsigned char)s[k] & 0xC0) == 0x80)
        k--;
    return k;
}

/* Whether s[0..n) is valid UTF-8 throughout. */
static inline int tg__utf8_valid(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t seq = tg__utf8_seq(s + i, n - i);
        if (seq == 0)
            return 0;
        i += seq;
    }
    return 1;
}

#endif
