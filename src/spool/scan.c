/* SPDX-License-Identifier: MIT */
/*
 * scan.c - byte scanners on the spool's hot paths: counting newlines (every
 * byte of every spooled output goes through it, and grep uses it for line
 * numbers), the ASCII fast path of binary detection, and keeping text that
 * is cut or shown to a model valid UTF-8.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "utf8.h"

uint64_t tg__spool_count_nl(const char *p, size_t n)
{
    uint64_t count = 0;
    size_t i = 0;
#if defined(__SSE2__)
    /* 16 bytes per compare; the per-lane counters are folded into the
     * total every 255 rounds, before an 8-bit lane can wrap. */
    const __m128i nl = _mm_set1_epi8('\n');
    while (n - i >= 16) {
        size_t rounds = (n - i) / 16;
        if (rounds > 255)
            rounds = 255;
        __m128i acc = _mm_setzero_si128();
        for (size_t r = 0; r < rounds; r++, i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
        }
        __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
        count += (uint64_t)_mm_cvtsi128_si32(sums) +
                 (uint64_t)_mm_cvtsi128_si32(_mm_srli_si128(sums, 8));
    }
#endif
    for (; i < n; i++)
        count += p[i] == '\n';
    return count;
}

size_t tg__spool_ascii_prefix(const unsigned char *p, size_t n)
{
    size_t i = 0;
    /* Eight bytes at a time: stop at the word holding a byte >= 0x80 or a
     * NUL (the has-zero-byte trick), then find it bytewise. */
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    while (n - i >= 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (((w | ((w - ones) & ~w)) & highs) != 0)
            break;
        i += 8;
    }
    while (i < n && p[i] != 0 && p[i] < 0x80)
        i++;
    return i;
}

int tg__spool_append_sanitized(tg__buf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        while (run < n && u[run] < 0x80 && u[run] != 0)
            run++;
        int rc = tg__buf_append(b, s + i, run - i);
        if (rc)
            return rc;
        i = run;
        if (i >= n)
            break;
        /* NUL too: many JSON readers refuse "\u0000" */
        size_t seq = u[i] ? tg__utf8_seq(u + i, n - i) : 0;
        if (seq > 0) {
            if ((rc = tg__buf_append(b, s + i, seq)) != 0)
                return rc;
            i += seq;
        } else {
            if ((rc = tg__buf_append(b, "\xef\xbf\xbd", 3)) != 0)
                return rc;
            i++;
        }
    }
    return 0;
}

size_t tg__spool_utf8_cut(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    /* Step back over at most three continuation bytes to the lead byte of
     * the last sequence; cut before it when it is incomplete. */
    size_t i = n, back = 0;
    while (i > 0 && back < 4 && (u[i - 1] & 0xC0) == 0x80) {
        i--;
        back++;
    }
    if (i == 0)
        return n; /* only continuation bytes: not text, leave it */
    unsigned char lead = u[i - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (lead < 0x80)
        return n;
    return back + 1 < need ? i - 1 : n;
}

ssize_t tg__spool_pread_full(int fd, void *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}
