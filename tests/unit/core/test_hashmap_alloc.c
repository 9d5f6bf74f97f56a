/* SPDX-License-Identifier: MIT */
/*
 * test_hashmap_alloc.c - the failing-allocation loop of docs/design.md over the
 * hash table: a table is filled with 500 keys (growing from empty through
 * six sizes), a third of them removed and others added again, once
 * counting allocations, then for N = 1, 2, ... again with the N-th
 * allocation refused, until a run refuses nothing. The put that meets the
 * refusal must return TG_ENOMEM and leave the table exactly as it was:
 * every key put before still found with its value, the refused key
 * absent, the count unchanged; and nothing may be left allocated after
 * cleanup. The allocator is tests/unit/support/tg_alloc_fail.h.
 */
#include "tg_alloc_fail.h"

#include "hashmap.h"
#include "toolgate.h"

#define NKEYS 500
static char keys[NKEYS][16];

/* The scenario; returns 0 when it ran to its end, TG_ENOMEM when an
 * allocation was refused (after checking the table). */
static int scenario(void)
{
    tg__hmap m = {0};
    unsigned char in[NKEYS] = {0};
    int rc = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        for (int k = 0; k < NKEYS; k++) {
            if (pass == 1 && k % 3 != 0)
                continue;
            tg__hentry *e = NULL;
            if (pass == 1 && in[k]) {
                /* second pass: remove every third key... */
                e = tg__hmap_find_str(&m, keys[k]);
                assert_non_null(e);
                tg__hmap_remove(&m, e);
                in[k] = 0;
                continue;
            }
            rc = tg__hmap_put_str(&m, keys[k], &e);
            if (rc != 0)
                break;
            e->val.idx = (size_t)k * 3;
            in[k] = 1;
        }
    }
    if (rc != 0) {
        assert_int_equal(rc, TG_ENOMEM);
        size_t n = 0;
        for (int k = 0; k < NKEYS; k++) {
            tg__hentry *e = tg__hmap_find_str(&m, keys[k]);
            if (!in[k]) {
                assert_null(e);
                continue;
            }
            n++;
            assert_non_null(e);
            assert_int_equal(e->val.idx, (size_t)k * 3);
        }
        assert_int_equal(m.count, n);
    }
    tg__hmap_cleanup(&m);
    return rc;
}

static void test_alloc_fail(void **state)
{
    (void)state;
    for (int k = 0; k < NKEYS; k++)
        snprintf(keys[k], sizeof keys[k], "id_%d", k);
    arm(0);
    assert_int_equal(scenario(), 0);
    long total = A.count;
    disarm("counting run", 0);
    assert_true(total > 1);
    long n;
    for (n = 1;; n++) {
        arm(n);
        int rc = scenario();
        int refused = A.refused;
        disarm("scenario", n);
        if (!refused) {
            assert_int_equal(rc, 0);
            break;
        }
        assert_int_equal(rc, TG_ENOMEM);
    }
    assert_int_equal(n, total + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
