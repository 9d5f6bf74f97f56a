/* SPDX-License-Identifier: MIT */
/*
 * test_chain.c - the journal's hash chain on real journal files: the links
 * are HMAC-SHA-256 as RFC 2104 defines it (checked against OpenSSL's
 * one-shot HMAC), rows written by the writer verify, and tg_journal_verify
 * names the first row that was changed (a payload, a call's arguments, a
 * seq), removed or inserted with raw SQL, as well as rows chained with a key
 * it was not given or without one after rows with one. Retention (in order
 * or not), recovery and two connections writing in turn keep the chain
 * whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "chain.h"
#include "jtest.h"
#include "timeutil.h"

#define DAY INT64_C(86400000)

static const unsigned char key_a[] = "the first key";
static const unsigned char key_b[] = "another key";

static void add(tg__journal *j, const char *id, const char *text,
                int64_t completed_at)
{
    tg_error err = {0};
    tg_call *c = jt_call(id, "echo", "{\"text\": \"x\"}", "carol");
    tg_result *r = tg__result_success(c, json_string(text));
    assert_non_null(r);
    if (completed_at != 0)
        r->completed_at = completed_at;
    if (tg__journal_finish(j, &c, &r, 1, &err) != 0)
        fail_msg("finish: %s", err.message);
    tg__result_free(r);
    tg__call_free(c);
}

/* A turn of n calls begun together and finished together (the begun path:
 * call digests kept between begin and finish). */
static void turn(tg__journal *j, const char *prefix, size_t n)
{
    tg_call *calls[8];
    tg_result *replies[8];
    char id[32];
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++) {
        snprintf(id, sizeof id, "%s-%zu", prefix, i);
        calls[i] = jt_call(id, "echo", "{\"text\": \"y\"}", NULL);
    }
    jt_turn(j, calls, n, "done", replies);
    for (size_t i = 0; i < n; i++)
        tg__call_free(calls[i]);
}

static tg__journal *open_key(const char *path, const unsigned char *key,
                             const tg__journal_options *base)
{
    tg__journal_options o = base ? *base : (tg__journal_options){0};
    o.hmac_key = key;
    o.hmac_key_len = key ? strlen((const char *)key) : 0;
    return jt_open(path, &o);
}

/* The verification of path as a JSON object (new ref). */
static json_t *verify(const char *path, const unsigned char *key)
{
    char *text = NULL;
    tg_error err = {0};
    if (tg_journal_verify(path, key, key ? strlen((const char *)key) : 0, &text,
                          &err) != 0)
        fail_msg("verify: %s", err.message);
    json_t *v = json_loads(text, 0, NULL);
    assert_non_null(v);
    free(text);
    return v;
}

static void assert_ok(const char *path, const unsigned char *key,
                      long long rows)
{
    json_t *v = verify(path, key);
    if (!json_is_true(json_object_get(v, "ok")))
        fail_msg("not ok: %s",
                 json_string_value(json_object_get(v, "message")));
    assert_int_equal(json_integer_value(json_object_get(v, "rows")), rows);
    json_decref(v);
}

/* Asserts the verification found `problem` at the row of call `id` (NULL:
 * not checked). */
static void assert_bad(const char *path, const unsigned char *key,
                       const char *problem, const char *id)
{
    json_t *v = verify(path, key);
    assert_true(json_is_false(json_object_get(v, "ok")));
    const char *got = json_string_value(json_object_get(v, "problem"));
    if (got == NULL || strcmp(got, problem) != 0)
        fail_msg("expected %s, got %s: %s", problem, got ? got : "(none)",
                 json_string_value(json_object_get(v, "message")));
    if (id != NULL)
        assert_string_equal(json_string_value(json_object_get(v, "id")), id);
    json_decref(v);
}

/* HMAC with the prepared pads is RFC 2104's, for short and long keys. */
static void test_hmac_matches_openssl(void **state)
{
    (void)state;
    unsigned char longkey[200];
    for (size_t i = 0; i < sizeof longkey; i++)
        longkey[i] = (unsigned char)(i * 7);
    const struct {
        const unsigned char *key;
        size_t len;
    } keys[] = {{key_a, sizeof key_a - 1}, {longkey, sizeof longkey}};
    for (size_t k = 0; k < 2; k++) {
        tg__chain_key ck;
        unsigned char prev[TG_CHAIN_LEN], ours[TG_CHAIN_LEN], theirs[64];
        unsigned int n = 0;
        memset(prev, 0xab, sizeof prev);
        assert_int_equal(tg__chain_key_init(&ck, keys[k].key, keys[k].len), 0);
        assert_int_equal(strlen(ck.id), TG_CHAIN_KEY_ID - 1);
        tg__chain_hash h;
        tg__chain_link_start(&h, &ck, prev, 258);
        tg__chain_text(&h, "hi");
        tg__chain_null(&h);
        tg__chain_end(&h, ours);
        /* the same bytes by hand: tag (with its NUL), prev, seq, "hi",
         * NULL */
        unsigned char msg[128];
        size_t m = 0;
        static const char tag[] = "toolgate journal chain v1";
        memcpy(msg, tag, sizeof tag);
        m += sizeof tag;
        memcpy(msg + m, prev, sizeof prev);
        m += sizeof prev;
        static const unsigned char seq[] = {1, 0, 0, 0, 0, 0, 0, 1, 2};
        memcpy(msg + m, seq, sizeof seq);
        m += sizeof seq;
        static const unsigned char hi[] = {3, 0, 0, 0,   0,   0,
                                           0, 0, 2, 'h', 'i', 0};
        memcpy(msg + m, hi, sizeof hi);
        m += sizeof hi;
        assert_non_null(HMAC(EVP_sha256(), keys[k].key, (int)keys[k].len, msg,
                             m, theirs, &n));
        assert_int_equal(n, TG_CHAIN_LEN);
        assert_memory_equal(ours, theirs, TG_CHAIN_LEN);
        tg__chain_key_cleanup(&ck);
    }
}

/* Every way a row is written (finished at once, begun then finished in
 * turns, replayed, recovered) verifies, keyed or not. */
static void test_written_rows_verify(void **state)
{
    struct jt_fixture *f = *state;
    for (int keyed = 0; keyed < 2; keyed++) {
        const unsigned char *key = keyed ? key_a : NULL;
        char path[192];
        snprintf(path, sizeof path, "%s/j%d.db", f->dir, keyed);
        tg__journal *j = open_key(path, key, NULL);
        add(j, "a", "one", 0);
        turn(j, "t1", 5);
        /* a re-delivered call: replayed from the journal */
        tg_call *again = jt_call("t1-0", "echo", "{\"text\": \"y\"}", NULL);
        tg_result *reply = NULL;
        tg_error err = {0};
        assert_int_equal(tg__journal_begin_dedup(j, &again, 1, &reply, &err),
                         0);
        assert_non_null(reply);
        assert_int_equal(tg__journal_finish(j, &again, &reply, 1, &err), 0);
        tg__result_free(reply);
        tg__call_free(again);
        tg__journal_close(j);
        /* a call left running by a dead process: recovered at open */
        jt_exec(path, "INSERT INTO calls(rowid, id, tool, format, created_at,"
                      " started_at, state, owner_pid, owner_start, owner_boot)"
                      " VALUES (100, 'dead', 'echo', 'toolgate', 1, 1,"
                      " 'running', 1, 1, 'another-boot')");
        j = open_key(path, key, NULL);
        add(j, "b", "two", 0);
        tg__journal_close(j);
        assert_ok(path, key, 9);
        json_t *v = verify(path, key);
        assert_string_equal(json_string_value(json_object_get(v, "mac")),
                            keyed ? "hmac-sha256" : "sha256");
        assert_int_equal(strlen(json_string_value(json_object_get(v, "head"))),
                         64);
        json_decref(v);
    }
}

/* Each kind of edit is named at the first bad row. */
static void test_tampering(void **state)
{
    struct jt_fixture *f = *state;
    static const struct {
        const char *sql, *problem, *id;
    } edits[] = {
        /* a payload */
        {"UPDATE results SET payload = '\"forged\"' WHERE id = 't-2'",
         "changed", "t-2"},
        /* the arguments of a call (its row, not its result's) */
        {"UPDATE call_rows SET args = '{\"text\":\"z\"}' WHERE id = 't-3'",
         "changed", "t-3"},
        /* a timestamp */
        {"UPDATE results SET completed_at = completed_at + 1"
         " WHERE id = 't-4'",
         "changed", "t-4"},
        /* a row removed: the one after the gap is named */
        {"DELETE FROM results WHERE id = 't-2';"
         "DELETE FROM call_rows WHERE id = 't-2'",
         "removed", "t-3"},
        /* the first row removed */
        {"DELETE FROM results WHERE id = 't-0';"
         "DELETE FROM call_rows WHERE id = 't-0'",
         "removed", "t-1"},
        /* a row inserted with no link */
        {"INSERT INTO calls(rowid, id, tool, format, created_at, started_at,"
         " state) VALUES (50, 'forged', 'echo', 'toolgate', 1, 1, 'done');"
         "INSERT INTO results(call_rowid, id, tool, outcome, execution,"
         " payload, completed_at) VALUES (50, 'forged', 'echo', 0,"
         " 'finished', '\"x\"', 1)",
         "inserted", "forged"},
        /* a row inserted with a copied link and the next seq */
        {"INSERT INTO calls(rowid, id, tool, format, created_at, started_at,"
         " state) VALUES (51, 'forged2', 'echo', 'toolgate', 1, 1, 'done');"
         "INSERT INTO results(call_rowid, id, tool, outcome, execution,"
         " payload, completed_at, chain_seq, chain) SELECT 51, 'forged2',"
         " 'echo', 0, 'finished', '\"x\"', 1, max(chain_seq) + 1,"
         " (SELECT chain FROM results WHERE id = 't-5') FROM results",
         "inserted", "forged2"},
        /* the same with a made-up link */
        {"INSERT INTO calls(rowid, id, tool, format, created_at, started_at,"
         " state) VALUES (52, 'forged3', 'echo', 'toolgate', 1, 1, 'done');"
         "INSERT INTO results(call_rowid, id, tool, outcome, execution,"
         " payload, completed_at, chain_seq, chain) SELECT 52, 'forged3',"
         " 'echo', 0, 'finished', '\"x\"', 1, max(chain_seq) + 1,"
         " randomblob(32) FROM results",
         "changed", "forged3"},
        /* two rows swapped in the order of the chain */
        {"UPDATE results SET chain_seq = -chain_seq WHERE id IN ('t-1',"
         " 't-3');"
         "UPDATE results SET chain_seq = CASE id WHEN 't-1' THEN 4 ELSE 2 END"
         " WHERE id IN ('t-1', 't-3')",
         "changed", "t-3"},
        /* a link replaced */
        {"UPDATE results SET chain = zeroblob(32) WHERE id = 't-1'", "changed",
         "t-1"},
        /* a seq taken out of the chain: its row becomes an inserted one */
        {"UPDATE results SET chain_seq = NULL WHERE id = 't-5'", "inserted",
         "t-5"},
    };
    for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
        for (int keyed = 0; keyed < 2; keyed++) {
            const unsigned char *key = keyed ? key_a : NULL;
            char path[192];
            snprintf(path, sizeof path, "%s/e%zu-%d.db", f->dir, e, keyed);
            tg__journal *j = open_key(path, key, NULL);
            turn(j, "t", 6); /* seq 1..6: t-0..t-5 */
            tg__journal_close(j);
            assert_ok(path, key, 6);
            jt_exec(path, edits[e].sql);
            assert_bad(path, key, edits[e].problem, edits[e].id);
        }
    }
}

/* Keys: rows chained with a key need it; another key or none cannot vouch
 * for them; adding a key to an unkeyed journal is fine, dropping it after
 * is a downgrade. */
static void test_keys(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal *j = open_key(f->path, NULL, NULL);
    add(j, "plain", "x", 0);
    tg__journal_close(j);
    j = open_key(f->path, key_a, NULL);
    add(j, "keyed", "x", 0);
    tg__journal_close(j);
    assert_ok(f->path, key_a, 2);
    /* the report says what the newest rows were chained with */
    json_t *v = verify(f->path, key_a);
    assert_string_equal(json_string_value(json_object_get(v, "mac")),
                        "hmac-sha256");
    assert_int_equal(strlen(json_string_value(json_object_get(v, "key_id"))),
                     16);
    json_decref(v);
    assert_bad(f->path, NULL, "unverifiable", "keyed");
    assert_bad(f->path, key_b, "unverifiable", "keyed");
    /* the same content chained with another key is no match either */
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM chain_epochs"), 2);
    j = open_key(f->path, NULL, NULL);
    add(j, "downgraded", "x", 0);
    tg__journal_close(j);
    assert_bad(f->path, key_a, "unverifiable", "downgraded");

    /* An unkeyed journal checked with a key is still reported unkeyed. */
    char plain[192];
    snprintf(plain, sizeof plain, "%s/plain.db", f->dir);
    j = open_key(plain, NULL, NULL);
    add(j, "p", "x", 0);
    tg__journal_close(j);
    v = verify(plain, key_a);
    assert_true(json_is_true(json_object_get(v, "ok")));
    assert_string_equal(json_string_value(json_object_get(v, "mac")), "sha256");
    assert_string_equal(json_string_value(json_object_get(v, "key_id")), "");
    json_decref(v);

    /* An opener without the key leaves a keyed journal's dead calls for
     * one with the key (recovering them would be a downgrade). */
    char path[192];
    snprintf(path, sizeof path, "%s/recover.db", f->dir);
    j = open_key(path, key_a, NULL);
    add(j, "first", "x", 0);
    tg__journal_close(j);
    jt_exec(path, "INSERT INTO calls(rowid, id, tool, format, created_at,"
                  " started_at, state, owner_pid, owner_start, owner_boot)"
                  " VALUES (100, 'dead', 'echo', 'toolgate', 1, 1,"
                  " 'running', 1, 1, 'another-boot')");
    j = open_key(path, NULL, NULL);
    tg__journal_close(j);
    assert_int_equal(
        jt_count(path, "SELECT count(*) FROM calls WHERE state = 'running'"),
        1);
    j = open_key(path, key_a, NULL);
    tg__journal_close(j);
    assert_int_equal(
        jt_count(path, "SELECT count(*) FROM calls WHERE state = 'running'"),
        0);
    assert_ok(path, key_a, 2);
}

/* Retention deletes rows and leaves their (seq, link): the chain goes on
 * across them, whether the oldest rows go (max_rows) or rows in the middle
 * (keep_days, a stale row written after fresh ones). Deleting a row by hand
 * is still found. */
static void test_retention(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal *j = open_key(f->path, key_a, NULL);
    int64_t now = tg__now_ms();
    char id[32];
    for (int i = 0; i < 10; i++) {
        snprintf(id, sizeof id, "c%d", i);
        add(j, id, "x", now);
    }
    add(j, "stale", "x", now - 3 * DAY);
    add(j, "fresh", "x", now);
    tg__journal_close(j);
    tg__journal_options o = {
        .max_rows = 5, .prune_batch = 3, .prune_every_ms = 3600000};
    j = open_key(f->path, key_a, &o);
    size_t n = 0, total = 0;
    tg_error err = {0};
    do {
        assert_int_equal(tg__journal_prune(j, &n, &err), 0);
        total += n;
    } while (n > 0);
    assert_int_equal(total, 7);
    tg__journal_close(j);
    /* the anchor alone is left of the pruned rows' records */
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM chain_pruned"), 1);
    assert_ok(f->path, key_a, 5);
    tg__journal_options days = {.keep_days = 1, .prune_every_ms = 3600000};
    j = open_key(f->path, key_a, &days);
    assert_int_equal(tg__journal_prune(j, &n, &err), 0);
    assert_int_equal(n, 1); /* the stale row, between c9 and fresh */
    add(j, "after", "x", now);
    tg__journal_close(j);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM chain_pruned"), 2);
    json_t *v = verify(f->path, key_a);
    assert_true(json_is_true(json_object_get(v, "ok")));
    assert_int_equal(json_integer_value(json_object_get(v, "rows")), 5);
    assert_int_equal(json_integer_value(json_object_get(v, "pruned")), 2);
    json_decref(v);
    /* a record of a pruned row forged for a row removed by hand would
     * pass: a gap without one does not */
    jt_exec(f->path, "DELETE FROM results WHERE id = 'c8'");
    assert_bad(f->path, key_a, "removed", "c9");
}

/* Two connections writing in turn: each sees the other's rows (data
 * version) and chains after them. */
static void test_two_writers(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal *a = open_key(f->path, key_a, NULL);
    tg__journal *b = open_key(f->path, key_a, NULL);
    char id[32];
    for (int i = 0; i < 6; i++) {
        snprintf(id, sizeof id, "w%d", i);
        add(i % 3 == 0 ? b : a, id, "x", 0);
    }
    turn(a, "ta", 3);
    turn(b, "tb", 2);
    tg__journal_close(a);
    tg__journal_close(b);
    assert_ok(f->path, key_a, 11);
}

/* A failed transaction leaves no trace in the chain: the next row chains
 * after the last committed one. */
static void test_failed_batch(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal *j = open_key(f->path, NULL, NULL);
    add(j, "one", "x", 0);
    /* the same call finished twice in one batch: the second row breaks
     * the primary key and the whole batch rolls back */
    tg_call *c = jt_call("dup", "echo", "{}", NULL);
    tg_error err = {0};
    assert_int_equal(tg__journal_begin(j, &c, 1, &err), 0);
    tg_result *r = tg__result_success(c, json_string("x"));
    tg_call *calls[2] = {c, c};
    tg_result *results[2] = {r, r};
    assert_int_not_equal(tg__journal_finish(j, calls, results, 2, &err), 0);
    assert_int_equal(tg__journal_finish(j, &c, &r, 1, &err), 0);
    add(j, "two", "x", 0);
    tg__journal_close(j);
    tg__result_free(r);
    tg__call_free(c);
    assert_ok(f->path, NULL, 3);
}

static void test_no_journal(void **state)
{
    struct jt_fixture *f = *state;
    char *out = NULL;
    tg_error err = {0};
    char path[192];
    snprintf(path, sizeof path, "%s/absent.db", f->dir);
    assert_int_equal(tg_journal_verify(path, NULL, 0, &out, &err),
                     TG_ENOTFOUND);
    assert_null(out);
    assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hmac_matches_openssl),
        cmocka_unit_test_setup_teardown(test_written_rows_verify, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_tampering, jt_setup, jt_teardown),
        cmocka_unit_test_setup_teardown(test_keys, jt_setup, jt_teardown),
        cmocka_unit_test_setup_teardown(test_retention, jt_setup, jt_teardown),
        cmocka_unit_test_setup_teardown(test_two_writers, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_failed_batch, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_no_journal, jt_setup, jt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
