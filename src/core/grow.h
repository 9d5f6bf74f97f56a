/* SPDX-License-Identifier: MIT */
/*
 * grow.h - growing arrays kept side by side under one capacity: the
 * capacity doubled from a first size until it holds what is needed, and
 * every array reallocated to it (the runtime's buffers of results to
 * commit, src/exec/scheduler.c; the agent loop's request text and its
 * kept items, src/loop/request.c). Header only: a face (src/loop) uses it
 * without linking a layer below the public API.
 */
#ifndef TG_CORE_GROW_H
#define TG_CORE_GROW_H

#include <stdlib.h>
#include <string.h>

/* Makes the n arrays at arrays[0..n) hold at least `need` elements: each
 * arrays[i] is the address of an array pointer (T **, passed as void *) of
 * elements of sizes[i] bytes, reallocated together to a capacity doubled
 * from *cap (from `first` when 0) and written back, then *cap set. Returns
 * 0, or -1 when out of memory (the arrays still valid, some maybe larger,
 * *cap unchanged). */
static inline int tg__grow(size_t need, size_t first, size_t *cap, size_t n,
                           void *const arrays[], const size_t sizes[])
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : first;
    while (c < need)
        c *= 2;
    for (size_t i = 0; i < n; i++) {
        void *old, *grown;
        memcpy(&old, arrays[i], sizeof old);
        grown = realloc(old, c * sizes[i]);
        if (grown == NULL)
            return -1;
        memcpy(arrays[i], &grown, sizeof grown);
    }
    *cap = c;
    return 0;
}

#endif
