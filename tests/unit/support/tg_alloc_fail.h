/* SPDX-License-Identifier: MIT */
/*
 * tg_alloc_fail.h - the allocator of the failing-allocation tests
 * (docs/design.md): include it first in exactly one file of a test program. It
 * defines malloc, calloc, realloc, free, strdup and strndup for the whole
 * program, so the library, jansson, PCRE2 and libc are all counted and can be
 * refused. They forward to the next definition: glibc's __libc_* entry
 * points in a plain build, AddressSanitizer's allocator (found with
 * dlsym(RTLD_NEXT)) in a sanitizer build, where LeakSanitizer then still
 * checks every block at exit. While armed, the wrappers count attempts,
 * refuse the chosen one, and keep the set of blocks allocated so a run's
 * leftovers are caught at that run, not only at exit. The tests build with
 * -fno-builtin (tests/CMakeLists.txt) so no call is elided.
 */
#ifndef TG_ALLOC_FAIL_H
#define TG_ALLOC_FAIL_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#if defined(__SANITIZE_ADDRESS__)
#define TG_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TG_TEST_ASAN 1
#endif
#endif

/* ---------------------------------------------------------- allocator */

#define LIVE_SLOTS (1u << 16) /* open addressing; far above a run's need */

/* The allocator's bookkeeping; the test is single-threaded. */
static struct {
    int armed;    /* count, refuse and track only while an operation runs */
    long fail_at; /* refuse the fail_at-th attempt; 0: never */
    long count;   /* attempts while armed */
    int refused;  /* an attempt was refused in this run */
    long live;    /* blocks allocated while armed, not yet freed */
    int overflow; /* the live set ran out of slots */
    void *slot[LIVE_SLOTS];
} A;

static size_t slot_of(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (size_t)h & (LIVE_SLOTS - 1);
}

static void live_add(void *p)
{
    if (A.live + 1 >= (long)(LIVE_SLOTS / 2)) {
        A.overflow = 1;
        return;
    }
    size_t i = slot_of(p);
    while (A.slot[i] != NULL)
        i = (i + 1) & (LIVE_SLOTS - 1);
    A.slot[i] = p;
    A.live++;
}

/* Removes p when it is in the set (backward-shift deletion); 1 if it was. */
static int live_del(const void *p)
{
    size_t i = slot_of(p);
    while (A.slot[i] != NULL && A.slot[i] != p)
        i = (i + 1) & (LIVE_SLOTS - 1);
    if (A.slot[i] == NULL)
        return 0;
    A.slot[i] = NULL;
    A.live--;
    for (size_t j = (i + 1) & (LIVE_SLOTS - 1); A.slot[j] != NULL;
         j = (j + 1) & (LIVE_SLOTS - 1)) {
        size_t home = slot_of(A.slot[j]);
        /* Move it back when its home is not in (i, j]. */
        if ((j > i && (home <= i || home > j)) ||
            (j < i && (home <= i && home > j))) {
            A.slot[i] = A.slot[j];
            A.slot[j] = NULL;
            i = j;
        }
    }
    return 1;
}

static int refuse(void)
{
    if (!A.armed)
        return 0;
    A.count++;
    if (A.fail_at != 0 && A.count == A.fail_at) {
        A.refused = 1;
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

#ifdef TG_TEST_ASAN
/* The sanitizer's allocator, looked up on first use. dlsym may allocate
 * itself: those requests are served from a static arena meanwhile. */
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int resolving;
static _Alignas(16) unsigned char boot[1 << 16];
static size_t boot_used;

/* Bytes from p to the arena's end; 0 when p is not in the arena. */
static size_t boot_left(const void *p)
{
    const unsigned char *c = p;
    return c >= boot && c < boot + sizeof boot
               ? (size_t)(boot + sizeof boot - c)
               : 0;
}

static void *boot_alloc(size_t n)
{
    size_t need = (n + 15) & ~(size_t)15;
    if (need > sizeof boot - boot_used)
        return NULL;
    void *p = boot + boot_used;
    boot_used += need;
    return p; /* static storage: zeroed */
}

static int resolve(void)
{
    if (real_free != NULL)
        return 1;
    if (resolving)
        return 0;
    resolving = 1;
    real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    resolving = 0;
    return real_free != NULL;
}

#define REAL_MALLOC(n) real_malloc(n)
#define REAL_CALLOC(n, s) real_calloc(n, s)
#define REAL_REALLOC(p, n) real_realloc(p, n)
#define REAL_FREE(p) real_free(p)
#else
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static size_t boot_left(const void *p)
{
    (void)p;
    return 0;
}
static void *boot_alloc(size_t n)
{
    (void)n;
    return NULL;
}
static int resolve(void)
{
    return 1;
}

#define REAL_MALLOC(n) __libc_malloc(n)
#define REAL_CALLOC(n, s) __libc_calloc(n, s)
#define REAL_REALLOC(p, n) __libc_realloc(p, n)
#define REAL_FREE(p) __libc_free(p)
#endif

void *malloc(size_t n)
{
    if (!resolve())
        return boot_alloc(n);
    if (refuse())
        return NULL;
    void *p = REAL_MALLOC(n);
    if (p != NULL && A.armed)
        live_add(p);
    return p;
}

void *calloc(size_t n, size_t size)
{
    if (!resolve())
        return boot_alloc(n * size);
    if (refuse())
        return NULL;
    void *p = REAL_CALLOC(n, size);
    if (p != NULL && A.armed)
        live_add(p);
    return p;
}

void *realloc(void *old, size_t n)
{
    size_t left = old != NULL ? boot_left(old) : 0;
    if (left > 0) {
        /* Its size is unknown: copy what the arena can hold. */
        void *p = malloc(n);
        if (p != NULL)
            memcpy(p, old, n < left ? n : left);
        return p;
    }
    if (!resolve())
        return boot_alloc(n);
    if (refuse())
        return NULL; /* the old block stays as it was */
    int tracked = old != NULL && A.armed && live_del(old);
    void *p = REAL_REALLOC(old, n);
    if (p == NULL && tracked)
        live_add(old);
    /* A block from before the run stays its owner's. */
    else if (p != NULL && A.armed && (old == NULL || tracked))
        live_add(p);
    return p;
}

void free(void *p)
{
    if (p == NULL || boot_left(p) > 0)
        return;
    if (A.armed)
        live_del(p);
    if (resolve())
        REAL_FREE(p);
}

/* Defined here so that their allocations are counted too: a sanitizer's
 * own strdup would allocate behind malloc's back. */
char *strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

char *strndup(const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    char *p = malloc(n + 1);
    if (p != NULL) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static void arm(long fail_at)
{
    A.fail_at = fail_at;
    A.count = 0;
    A.refused = 0;
    A.overflow = 0;
    A.armed = 1;
}

/* Ends a run; fails the test when it left blocks behind. */
static void disarm(const char *what, long k)
{
    A.armed = 0;
    assert_false(A.overflow);
    if (A.live != 0)
        fail_msg("%s with allocation %ld refused: %ld block(s) left", what, k,
                 A.live);
}

#endif
