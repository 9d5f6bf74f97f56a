/* SPDX-License-Identifier: MIT */
/*
 * test_policy_alloc.c - the failing-allocation loop of docs/design.md over the
 * policy engine: a policy using every feature (globs, caller, annotations,
 * equals/one_of on nested JSON, regexes, under, max_length) is compiled
 * once counting allocations, then for N = 1, 2, ... compiled again with the
 * N-th allocation refused until a run refuses nothing; the same for
 * decisions (indexed and explained). Every run must end in TG_ENOMEM, or in
 * exactly the verdicts (rule, decision, reason) of the run that refused
 * nothing (an allocation with a fallback, such as PCRE2's JIT compile);
 * never a crash, and nothing it allocated may outlive it. The allocator
 * is tests/unit/support/tg_alloc_fail.h.
 */
#include "tg_alloc_fail.h"

#include "policy.h"

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
    tg__policy_decision decision;
    char reason[256];
};

static json_t *load(const char *text)
{
    json_error_t jerr;
    return text ? json_loads(text, 0, &jerr) : NULL; /* new ref */
}

/* Decides every call (explained when `explain`); outcomes into g. */
static void decide_all(const tg__policy *p, json_t *const *ann,
                       json_t *const *args, int explain, struct got *g)
{
    for (size_t i = 0; i < NCALLS; i++) {
        tg__policy_input in = {calls[i].tool, calls[i].caller, ann[i],
                               args[i],       "/tmp",          NULL};
        tg__policy_verdict v;
        tg_error err = {0};
        tg__buf b;
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
    tg__policy *ref = NULL;
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
        tg__policy *p = NULL;
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
