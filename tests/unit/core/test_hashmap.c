/* SPDX-License-Identifier: MIT */
/*
 * test_hashmap.c - the hash table of core/hashmap.h: FNV-1a against its
 * published values; keys as bytes (empty, with NUL bytes, one a prefix of
 * another, a pointer's bytes); put of a key already there; growth keeping
 * every entry; reserve; removal with backward shifting checked against a
 * plain array model over many random operations under hashes that collide
 * on purpose (every probe sequence long, wrapping around the end);
 * iteration visiting each entry once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "hashmap.h"
#include "toolgate.h"

static void test_fnv1a(void **state)
{
    (void)state;
    /* The FNV-1a 64 test vectors of the algorithm's authors. */
    size_t len = 99;
    assert_true(tg__hash_str("", &len) == UINT64_C(0xcbf29ce484222325));
    assert_int_equal(len, 0);
    assert_true(tg__hash_str("a", &len) == UINT64_C(0xaf63dc4c8601ec8c));
    assert_int_equal(len, 1);
    assert_true(tg__hash_str("foobar", &len) == UINT64_C(0x85944171f73967e8));
    assert_int_equal(len, 6);
    assert_true(tg__hash_bytes("foobar", 6) == UINT64_C(0x85944171f73967e8));
    uint64_t h = TG__HASH_INIT;
    for (const char *p = "foobar"; *p; p++)
        h = tg__hash_step(h, (unsigned char)*p);
    assert_true(h == UINT64_C(0x85944171f73967e8));
}

static void test_put_find(void **state)
{
    (void)state;
    tg__hmap m = {0};
    tg__hentry *e = NULL;
    assert_null(tg__hmap_find_str(&m, "x")); /* never grown */
    size_t pos = 0;
    assert_null(tg__hmap_next(&m, &pos));

    assert_int_equal(tg__hmap_put_str(&m, "read_file", &e), 0);
    assert_non_null(e);
    assert_null(e->val.ptr); /* new entries start at zero */
    e->val.idx = 7;
    assert_int_equal(tg__hmap_put_str(&m, "read_file", &e), 1);
    assert_int_equal(e->val.idx, 7);
    assert_int_equal(m.count, 1);

    /* Bytes, not C strings: "" is a key, and so are keys with NUL bytes
     * and keys that are prefixes of each other. */
    static const char nul1[] = {'a', '\0', 'b'}, nul2[] = {'a', '\0', 'c'};
    assert_int_equal(tg__hmap_put_str(&m, "", &e), 0);
    e->val.idx = 1;
    assert_int_equal(
        tg__hmap_put(&m, nul1, sizeof nul1, tg__hash_bytes(nul1, 3), &e), 0);
    e->val.idx = 2;
    assert_int_equal(
        tg__hmap_put(&m, nul2, sizeof nul2, tg__hash_bytes(nul2, 3), &e), 0);
    e->val.idx = 3;
    assert_int_equal(tg__hmap_put(&m, "read", 4, tg__hash_bytes("read", 4), &e),
                     0);
    e->val.idx = 4;
    assert_int_equal(tg__hmap_find_str(&m, "")->val.idx, 1);
    assert_int_equal(
        tg__hmap_find(&m, nul1, 3, tg__hash_bytes(nul1, 3))->val.idx, 2);
    assert_int_equal(
        tg__hmap_find(&m, nul2, 3, tg__hash_bytes(nul2, 3))->val.idx, 3);
    assert_null(tg__hmap_find(&m, nul1, 1, tg__hash_bytes(nul1, 1)));
    assert_int_equal(tg__hmap_find_str(&m, "read")->val.idx, 4);
    assert_int_equal(tg__hmap_find_str(&m, "read_file")->val.idx, 7);
    assert_null(tg__hmap_find_str(&m, "read_"));
    /* A key of the same hash but other bytes is not the key. */
    assert_null(tg__hmap_find(&m, "daer", 4, tg__hash_bytes("read", 4)));
    assert_int_equal(m.count, 5);

    /* A pointer's own bytes as the key, with a hash of the caller's. */
    int a, b;
    const int *pa = &a, *pb = &b;
    assert_int_equal(tg__hmap_put(&m, &pa, sizeof pa, (uintptr_t)pa, &e), 0);
    e->val.ptr = &a;
    const int *probe = &a;
    e = tg__hmap_find(&m, &probe, sizeof probe, (uintptr_t)probe);
    assert_non_null(e);
    assert_ptr_equal(e->val.ptr, &a);
    assert_null(tg__hmap_find(&m, &pb, sizeof pb, (uintptr_t)pb));

    tg__hmap_cleanup(&m);
    assert_null(m.slot);
    assert_int_equal(m.count, 0);
    assert_null(tg__hmap_find_str(&m, "read"));
    /* usable again */
    assert_int_equal(tg__hmap_put_str(&m, "again", &e), 0);
    assert_int_equal(m.count, 1);
    tg__hmap_cleanup(&m);
}

/* ------------------------------------------------------------ model */

#define NKEYS 200
static char keys[NKEYS][16];

static void make_keys(void)
{
    for (int i = 0; i < NKEYS; i++)
        snprintf(keys[i], sizeof keys[i], "call_%d", i);
}

/* Hashes that collide on purpose: `bits` significant bits, so keys share
 * home slots and probe runs are long and wrap around the array's end. */
static uint64_t weak_hash(int k, int bits)
{
    uint64_t h = tg__hash_bytes(keys[k], strlen(keys[k]));
    return bits >= 64 ? h : h & ((UINT64_C(1) << bits) - 1);
}

/* Checks m against the model: present[k] is the value of key k + 1, or 0. */
static void check_model(const tg__hmap *m, const size_t *present, int bits)
{
    size_t n = 0;
    for (int k = 0; k < NKEYS; k++) {
        tg__hentry *e =
            tg__hmap_find(m, keys[k], strlen(keys[k]), weak_hash(k, bits));
        if (present[k] == 0) {
            assert_null(e);
            continue;
        }
        n++;
        assert_non_null(e);
        assert_int_equal(e->val.idx, present[k] - 1);
        assert_ptr_equal(e->key, keys[k]);
    }
    assert_int_equal(m->count, n);
    /* Iteration: each entry once. */
    size_t pos = 0, seen = 0;
    unsigned char mark[NKEYS] = {0};
    tg__hentry *e;
    while ((e = tg__hmap_next(m, &pos)) != NULL) {
        int k = (int)(((const char *)e->key - &keys[0][0]) / 16);
        assert_true(k >= 0 && k < NKEYS);
        assert_int_equal(mark[k], 0);
        mark[k] = 1;
        seen++;
    }
    assert_int_equal(seen, n);
    /* At most half full. */
    assert_true(m->slot == NULL || m->count * 2 <= m->mask + 1);
}

static void test_random_against_model(void **state)
{
    (void)state;
    make_keys();
    static const int hash_bits[] = {64, 3, 0};
    uint64_t rng = 88172645463325252ULL;
    for (size_t hb = 0; hb < sizeof hash_bits / sizeof *hash_bits; hb++) {
        int bits = hash_bits[hb];
        tg__hmap m = {0};
        size_t present[NKEYS] = {0};
        for (int step = 0; step < 20000; step++) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            int k = (int)(rng % NKEYS);
            uint64_t h = weak_hash(k, bits);
            tg__hentry *e = NULL;
            /* Removals a little rarer than insertions: the table fills
             * and empties through several sizes. */
            if ((rng >> 20) % 5 < 3) {
                int rc = tg__hmap_put(&m, keys[k], strlen(keys[k]), h, &e);
                assert_int_equal(rc, present[k] ? 1 : 0);
                if (rc == 0) {
                    e->val.idx = (size_t)step;
                    present[k] = (size_t)step + 1;
                }
            } else {
                e = tg__hmap_find(&m, keys[k], strlen(keys[k]), h);
                assert_true((e != NULL) == (present[k] != 0));
                if (e != NULL) {
                    tg__hmap_remove(&m, e);
                    present[k] = 0;
                }
            }
            if (step % 97 == 0)
                check_model(&m, present, bits);
        }
        check_model(&m, present, bits);
        /* Empty it completely: nothing is left behind. */
        for (int k = 0; k < NKEYS; k++) {
            tg__hentry *e =
                tg__hmap_find(&m, keys[k], strlen(keys[k]), weak_hash(k, bits));
            if (e != NULL)
                tg__hmap_remove(&m, e);
            present[k] = 0;
        }
        check_model(&m, present, bits);
        for (size_t i = 0; i <= m.mask; i++)
            assert_null(m.slot[i].key);
        tg__hmap_cleanup(&m);
    }
}

/* Removing entries whose probe runs wrap around the end of the array:
 * every key homes in the last slot, so the run is last, 0, 1, ... */
static void test_remove_wraps(void **state)
{
    (void)state;
    make_keys();
    tg__hmap m = {0};
    assert_int_equal(tg__hmap_reserve(&m, 8), 0);
    size_t last = m.mask;
    tg__hentry *e;
    for (int k = 0; k < 6; k++) {
        assert_int_equal(tg__hmap_put(&m, keys[k], strlen(keys[k]), last, &e),
                         0);
        e->val.idx = (size_t)k;
    }
    assert_ptr_equal(m.slot[last].key, keys[0]);
    assert_ptr_equal(m.slot[0].key, keys[1]);
    /* Remove from the middle of the run, then its head. */
    tg__hmap_remove(&m, tg__hmap_find(&m, keys[2], strlen(keys[2]), last));
    tg__hmap_remove(&m, tg__hmap_find(&m, keys[0], strlen(keys[0]), last));
    for (int k = 0; k < 6; k++) {
        e = tg__hmap_find(&m, keys[k], strlen(keys[k]), last);
        if (k == 0 || k == 2) {
            assert_null(e);
        } else {
            assert_non_null(e);
            assert_int_equal(e->val.idx, (size_t)k);
        }
    }
    /* The run closed up: it starts at its home again, no holes. */
    assert_non_null(m.slot[last].key);
    for (size_t i = 0; i < 3; i++)
        assert_non_null(m.slot[i].key);
    assert_null(m.slot[3].key);
    tg__hmap_cleanup(&m);
}

static void test_reserve(void **state)
{
    (void)state;
    make_keys();
    tg__hmap m = {0};
    assert_int_equal(tg__hmap_reserve(&m, 0), 0);
    assert_int_equal(tg__hmap_reserve(&m, NKEYS), 0);
    tg__hentry *slots = m.slot;
    size_t mask = m.mask;
    tg__hentry *e;
    for (int k = 0; k < NKEYS; k++)
        assert_int_equal(tg__hmap_put_str(&m, keys[k], &e), 0);
    /* no growth: the entries went into the reserved array */
    assert_ptr_equal(m.slot, slots);
    assert_int_equal(m.mask, mask);
    /* reserving less than there is changes nothing */
    assert_int_equal(tg__hmap_reserve(&m, 3), 0);
    assert_ptr_equal(m.slot, slots);
    assert_int_equal(tg__hmap_reserve(&m, SIZE_MAX / 2), TG_ENOMEM);
    assert_ptr_equal(m.slot, slots);
    /* A key of 4 GiB cannot be a key; finding it is simply a miss. */
    assert_int_equal(tg__hmap_put(&m, "x", (size_t)UINT32_MAX + 1, 0, &e),
                     TG_ELIMIT);
    assert_null(tg__hmap_find(&m, "x", (size_t)UINT32_MAX + 1, 0));
    assert_int_equal(m.count, NKEYS);
    tg__hmap_cleanup(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fnv1a),
        cmocka_unit_test(test_put_find),
        cmocka_unit_test(test_random_against_model),
        cmocka_unit_test(test_remove_wraps),
        cmocka_unit_test(test_reserve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
