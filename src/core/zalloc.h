/* SPDX-License-Identifier: MIT */
/*
 * zalloc.h - zeroed allocation for the records made and freed on every
 * call (a call's request, run, record and result). glibc's calloc (before
 * 2.41; Debian 12 has 2.36) never takes a block from the per-thread cache
 * that free fills, so each calloc of a call went through the arena's slow
 * path and the cache overflowed into it on free: malloc + memset takes
 * the block back from the cache (about 800 instructions a call of
 * `toolgate serve`, bench/RESULTS.md).
 */
#ifndef TG_CORE_ZALLOC_H
#define TG_CORE_ZALLOC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* n zeroed bytes from malloc (the caller frees them), NULL when out of
 * memory. */
static inline void *tg__zalloc(size_t n)
{
    void *p = malloc(n);
    if (p != NULL) {
        /* GCC would fold malloc + memset back into calloc: hide p. */
        __asm__ volatile("" : "+r"(p));
        memset(p, 0, n);
    }
    return p;
}

/* n zeroed elements of size bytes, as calloc: NULL also when n * size
 * overflows. */
static inline void *tg__zalloc_n(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total))
        return NULL;
    return tg__zalloc(total);
}

#endif
