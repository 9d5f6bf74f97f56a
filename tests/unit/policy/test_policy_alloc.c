/* SPDX-License-Identifier: MIT */
/*
 * test_policy_alloc.c - the failing-allocation loop of DESIGN.md over the
 * policy engine: a policy using every feature (globs, caller, annotations,
 * equals/one_of on nested JSON, regexes, under, max_length) is compiled
 * once counting allocations, then for N = 1, 2, ... compiled again with the
 * N-th allocation refused until a run refuses nothing; the same for
 * decisions (indexed and explained). Every run must end in TG_ENOMEM, or in
 * exactly the verdicts (rule, decision, reason) of the run that refused
 * nothing (an allocation with a fallback, such as PCRE2's JIT compile);
 * never a crash, and nothing it allocated may outlive it. The allocator
 * wrappers are those of test_schema_alloc.c (see there for how they reach
 * libc, jansson and PCRE2 in plain and sanitizer builds).
 */
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

#include "policy.h"

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

/* ---------------------------------------------------------- scenario */

static const char policy_text[] =
    "{\"default\":\"ask\",\"rules\":["
    "{\"tool\":\"shell\",\"caller\":\"guest*\",\"decision\":\"deny\","
    "\"reason\":\"no shell for guests\"},"
    "{\"tool\":\"fs_*\",\"annotations\":{\"readOnlyHint\":true},"
    "\"decision\":\"allow\"},"
    "{\"tool\":\"write_file\",\"args\":{\"path\":{\"under\":\"./out\"},"
    "\"mode\":{\"one_of\":[\"w\",{\"append\":[1,2.0]}]}},"
    "\"decision\":\"allow\"},"
    "{\"tool\":\"*_admin\",\"args\":{\"q\":{\"matches\":\"^[a-z]+\\\\d*$\","
    "\"max_length\":8},\"n\":{\"equals\":{\"a\":[null,true]}}},"
    "\"decision\":\"deny\"},"
    "{\"tool\":\"[rw]*\",\"decision\":\"ask\"}]}";

struct call {
    const char *tool, *caller, *ann, *args;
};

static const struct call calls[] = {
    {"shell", "guest1", NULL, "{}"},
    {"fs_read", NULL, "{\"readOnlyHint\":true}", "{}"},
    {"write_file", NULL, NULL, "{\"path\":\"out/a\",\"mode\":\"w\"}"},
    {"write_file", NULL, NULL,
     "{\"path\":\"out/a\",\"mode\":{\"append\":[1.0,2]}}"},
    {"db_admin", NULL, NULL, "{\"q\":\"abc12\",\"n\":{\"a\":[null,true]}}"},
    {"read_x", NULL, NULL, "{}"},
    {"zzz", NULL, NULL, "{}"},
};
#define NCALLS (sizeof calls / sizeof calls[0])

struct got {
    int rc;
    long rule;
    tg_policy_decision decision;
    char reason[256];
};

static json_t *load(const char *text)
{
    json_error_t jerr;
    return text ? json_loads(text, 0, &jerr) : NULL; /* new ref */
}

/* Decides every call (explained when `explain`); outcomes into g. */
static void decide_all(const tg_policy *p, json_t *const *ann,
                       json_t *const *args, int explain, struct got *g)
{
    for (size_t i = 0; i < NCALLS; i++) {
        tg_policy_input in = {calls[i].tool, calls[i].caller, ann[i],
                              args[i],       "/tmp",          NULL};
        tg_policy_verdict v;
        tg_error err = {0};
        tg_buf b;
        tg__buf_init(&b, 0);
        g[i].rc = tg__policy_decide(p, &in, &v, explain ? &b : NULL, &err);
        tg__buf_cleanup(&b);
        g[i].rule = g[i].rc == 0 ? v.rule : -2;
        g[i].decision = g[i].rc == 0 ? v.decision : TG_POLICY_DENY;
        snprintf(g[i].reason, sizeof g[i].reason, "%s",
                 g[i].rc == 0 ? v.reason : err.message);
    }
}

static void check_same(const struct got *a, const struct got *want,
                       const char *what, long k)
{
    for (size_t i = 0; i < NCALLS; i++)
        if (a[i].rc != want[i].rc || a[i].rule != want[i].rule ||
            a[i].decision != want[i].decision ||
            strcmp(a[i].reason, want[i].reason) != 0)
            fail_msg("%s with allocation %ld refused, call %zu: rc %d rule "
                     "%ld '%s', want rc %d rule %ld '%s'",
                     what, k, i, a[i].rc, a[i].rule, a[i].reason, want[i].rc,
                     want[i].rule, want[i].reason);
}

static void test_alloc_fail(void **state)
{
    (void)state;
    json_t *pol = load(policy_text); /* new ref */
    assert_non_null(pol);
    json_t *ann[NCALLS], *args[NCALLS]; /* new refs */
    for (size_t i = 0; i < NCALLS; i++) {
        ann[i] = load(calls[i].ann);
        args[i] = load(calls[i].args);
    }
    tg_policy *ref = NULL;
    tg_error err = {0};
    assert_int_equal(tg__policy_compile(pol, &ref, &err), 0);
    struct got want[NCALLS], got[NCALLS];
    decide_all(ref, ann, args, 0, want);
    for (size_t i = 0; i < NCALLS; i++)
        assert_int_equal(want[i].rc, 0);
    assert_int_equal(want[0].rule, 0);
    assert_int_equal(want[4].rule, 3);

    /* Compile with the k-th allocation refused. */
    long runs = 0, enomem = 0, fallback = 0;
    for (long k = 1;; k++) {
        tg_policy *p = NULL;
        memset(&err, 0, sizeof err);
        arm(k);
        int rc = tg__policy_compile(pol, &p, &err);
        A.armed = 0;
        int refused = A.refused;
        runs++;
        if (rc != 0) {
            if (rc != TG_ENOMEM || err.code != TG_ENOMEM || p != NULL)
                fail_msg("compile with allocation %ld refused: %d (%s)", k, rc,
                         err.message);
            assert_true(refused);
            A.armed = 1;
            disarm("compile", k);
            enomem++;
            continue;
        }
        decide_all(p, ann, args, 0, got);
        check_same(got, want, "compile", k);
        A.armed = 1;
        tg__policy_free(p);
        disarm("compile", k);
        if (!refused)
            break;
        fallback++;
    }
    printf("  compile: %ld runs, %ld TG_ENOMEM, %ld with a fallback\n", runs,
           enomem, fallback);
    assert_true(enomem > 10);

    /* Decide (indexed, then explained) with the k-th allocation refused:
     * TG_ENOMEM for that call, or the same verdict. */
    for (int explain = 0; explain < 2; explain++) {
        long druns = 0, denomem = 0;
        for (long k = 1;; k++) {
            arm(k);
            decide_all(ref, ann, args, explain, got);
            A.armed = 0;
            int refused = A.refused;
            druns++;
            for (size_t i = 0; i < NCALLS; i++) {
                if (got[i].rc == TG_ENOMEM) {
                    denomem++;
                    got[i] = want[i];
                }
            }
            check_same(got, want, explain ? "explained decide" : "decide", k);
            A.armed = 1;
            disarm("decide", k);
            if (!refused)
                break;
        }
        printf("  decide%s: %ld runs, %ld TG_ENOMEM\n",
               explain ? " (explained)" : "", druns, denomem);
        if (!explain)
            assert_true(denomem > 0); /* the regex match data */
    }
    tg__policy_free(ref);
    for (size_t i = 0; i < NCALLS; i++) {
        json_decref(ann[i]);
        json_decref(args[i]);
    }
    json_decref(pol);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
