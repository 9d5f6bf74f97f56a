/* SPDX-License-Identifier: MIT */
/*
 * test_retention.c - journal.keep_days and journal.max_rows on real journal
 * files: completed calls beyond either limit are deleted with their results,
 * in steps of at most prune_batch calls; running calls are never touched;
 * after a commit of results a step runs by itself when it is due (the
 * timer, a backlog, or max_rows exceeded by more than a batch).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "jtest.h"
#include "tg_test.h"
#include "timeutil.h"

#define DAY INT64_C(86400000)

static void add(tg__journal *j, const char *id, int64_t completed_at)
{
    tg_error err = {0};
    tg_call *c = jt_call(id, "echo", "{}", NULL);
    tg_result *r = tg__result_success(c, json_string("x"));
    assert_non_null(r);
    r->completed_at = completed_at;
    if (tg__journal_finish(j, &c, &r, 1, &err) != 0)
        fail_msg("finish: %s", err.message);
    tg__result_free(r);
    tg__call_free(c);
}

static tg_call *begin_running(tg__journal *j, const char *id)
{
    tg_error err = {0};
    tg_call *c = jt_call(id, "echo", "{}", NULL);
    assert_int_equal(tg__journal_begin(j, &c, 1, &err), 0);
    return c;
}

static size_t prune(tg__journal *j)
{
    size_t n = 0;
    tg_error err = {0};
    if (tg__journal_prune(j, &n, &err) != 0)
        fail_msg("prune: %s", err.message);
    return n;
}

static long long calls(const char *path)
{
    return jt_count(path, "SELECT count(*) FROM calls");
}

/* Calls and results stay paired: no result without its call. */
static void assert_paired(const char *path)
{
    assert_int_equal(jt_count(path, "SELECT count(*) FROM results r WHERE"
                                    " NOT EXISTS (SELECT 1 FROM calls c"
                                    " WHERE c.rowid = r.call_rowid)"),
                     0);
    assert_int_equal(jt_count(path, "SELECT count(*) FROM calls"
                                    " WHERE state = 'done'"),
                     jt_count(path, "SELECT count(*) FROM results"));
}

static void test_keep_days(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal_options o = {.keep_days = 7, .prune_every_ms = 3600000};
    /* Filled without limits (a step after the first commit would prune),
     * then opened with them. */
    tg__journal *j = jt_open(f->path, NULL);
    int64_t now = tg__now_ms();
    char id[32];
    tg_call *old_running = begin_running(j, "running-old");
    jt_exec(f->path, "UPDATE calls SET started_at = 0, created_at = 0");
    for (int i = 0; i < 30; i++) {
        snprintf(id, sizeof id, "old%d", i);
        add(j, id, now - 8 * DAY - i);
    }
    for (int i = 0; i < 5; i++) {
        snprintf(id, sizeof id, "new%d", i);
        add(j, id, now - 6 * DAY);
    }
    tg__journal_close(j);
    j = jt_open(f->path, &o);
    assert_int_equal(calls(f->path), 36);
    assert_int_equal(prune(j), 30);
    assert_int_equal(calls(f->path), 6);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE id LIKE 'old%'"),
                     0);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE state = 'running'"),
                     1);
    assert_paired(f->path);
    assert_int_equal(prune(j), 0);
    tg__call_free(old_running);
    tg__journal_close(j);
}

static void test_max_rows_in_batches(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal_options o = {
        .max_rows = 30, .prune_batch = 25, .prune_every_ms = 3600000};
    /* Fill without limits, then open with them (a step after each commit
     * would otherwise keep the table near the limit while filling). */
    tg__journal *j = jt_open(f->path, NULL);
    char id[32];
    tg_call *r1 = begin_running(j, "running-1");
    for (int i = 0; i < 100; i++) {
        snprintf(id, sizeof id, "c%03d", i);
        add(j, id, tg__now_ms());
    }
    tg__journal_close(j);
    j = jt_open(f->path, &o);
    assert_int_equal(calls(f->path), 101);
    /* Never more than one batch per step. */
    assert_int_equal(prune(j), 25);
    assert_int_equal(prune(j), 25);
    /* 101 rowids, the newest 30 kept; the running row is the oldest and
     * stays. */
    assert_int_equal(prune(j), 20);
    assert_int_equal(prune(j), 0);
    assert_int_equal(calls(f->path), 31);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE id >= 'c070' AND id < 'c100'"),
                     30);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE id = 'running-1'"),
                     1);
    assert_paired(f->path);
    tg__call_free(r1);
    tg__journal_close(j);
}

/* After commits, steps run by themselves: while max_rows is exceeded by
 * more than a batch (whatever the timer), and when the timer is due. */
static void test_automatic(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal_options o = {
        .max_rows = 10, .prune_batch = 4, .prune_every_ms = 3600000};
    tg__journal *j = jt_open(f->path, &o);
    char id[32];
    long long most = 0;
    for (int i = 0; i < 60; i++) {
        snprintf(id, sizeof id, "c%d", i);
        add(j, id, tg__now_ms());
        long long n = calls(f->path);
        if (n > most)
            most = n;
    }
    /* The first commit prunes (the timer starts due), then the margin. */
    assert_true(most <= 10 + 4 + 1);
    assert_true(calls(f->path) >= 10);
    assert_paired(f->path);
    tg__journal_close(j);

    /* keep_days by the timer: a short period, old rows go at the next
     * commit once it has passed. The period (a scaled 500 ms) outlasts the
     * two commits between steps (a few ms) with room. */
    long period = tg_test_ms(500);
    tg__journal_options t = {.keep_days = 1, .prune_every_ms = period};
    j = jt_open(f->path, &t);
    int64_t old = tg__now_ms() - 2 * DAY;
    jt_exec(f->path, "UPDATE results SET completed_at = 0");
    add(j, "fresh1", tg__now_ms());
    assert_int_equal(calls(f->path), 1);
    add(j, "stale", old);
    add(j, "fresh2", tg__now_ms()); /* within the period of the last step */
    assert_int_equal(calls(f->path), 3);
    tg_test_sleep_ms(period + 30);
    add(j, "fresh3", tg__now_ms());
    assert_int_equal(calls(f->path), 3);
    assert_int_equal(
        jt_count(f->path, "SELECT count(*) FROM calls WHERE id = 'stale'"), 0);
    tg__journal_close(j);
}

/* Without limits nothing is ever deleted. */
static void test_no_limits(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal *j = jt_open(f->path, NULL);
    add(j, "ancient", 1);
    assert_int_equal(prune(j), 0);
    assert_int_equal(calls(f->path), 1);
    tg__journal_close(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_keep_days, jt_setup, jt_teardown),
        cmocka_unit_test_setup_teardown(test_max_rows_in_batches, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_automatic, jt_setup, jt_teardown),
        cmocka_unit_test_setup_teardown(test_no_limits, jt_setup, jt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
