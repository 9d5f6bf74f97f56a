/* SPDX-License-Identifier: MIT */
/*
 * test_pagesize.c - the page size of the journal's file: a journal this
 * toolgate creates has small pages (sqlite_journal.c says why), and a
 * journal made with SQLite's 4 KiB pages (every toolgate before) keeps
 * them and goes on working: written, read back, its chain verified, opened
 * again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "jtest.h"
#include "toolgate.h"

static long long page_size(const char *path)
{
    return jt_count(path, "PRAGMA page_size");
}

/* n calls of one turn each, finished, through a journal opened on path. */
static void write_calls(const char *path, const char *prefix, int n)
{
    tg__journal *j = jt_open(path, NULL);
    for (int i = 0; i < n; i++) {
        char id[64];
        snprintf(id, sizeof id, "%s_%d", prefix, i);
        tg_call *c = jt_call(id, "search", "{\"q\":\"pages\"}", "agent");
        tg_result *reply = NULL;
        jt_turn(j, &c, 1, "a result", &reply);
        tg__call_free(c);
    }
    tg__journal_close(j);
}

/* The hash chain of the journal at path verifies, over `rows` rows. */
static void verify_chain(const char *path, long long rows)
{
    char *text = NULL;
    tg_error err = {0};
    if (tg_journal_verify(path, NULL, 0, &text, &err) != 0)
        fail_msg("verify: %s", err.message);
    json_t *v = json_loads(text, 0, NULL); /* new ref */
    assert_non_null(v);
    free(text);
    if (!json_is_true(json_object_get(v, "ok")))
        fail_msg("not ok: %s",
                 json_string_value(json_object_get(v, "message")));
    assert_int_equal(json_integer_value(json_object_get(v, "rows")), rows);
    json_decref(v);
}

static void new_journal_small_pages(void **state)
{
    struct jt_fixture *f = *state;
    write_calls(f->path, "new", 3);
    assert_int_equal(page_size(f->path), 1024);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"), 3);
    verify_chain(f->path, 3);
}

static void old_journal_keeps_its_pages(void **state)
{
    struct jt_fixture *f = *state;
    /* What SQLite made of a new journal before: 4 KiB pages, fixed by the
     * switch to WAL (the first write of the file's header). */
    FILE *made = fopen(f->path, "w");
    assert_non_null(made);
    fclose(made);
    jt_exec(f->path, "PRAGMA page_size = 4096; PRAGMA journal_mode = WAL");
    assert_int_equal(page_size(f->path), 4096);
    write_calls(f->path, "old", 3);
    write_calls(f->path, "again", 2);
    assert_int_equal(page_size(f->path), 4096);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"), 5);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE state = 'done'"),
                     5);
    verify_chain(f->path, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(new_journal_small_pages, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(old_journal_keeps_its_pages, jt_setup,
                                        jt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
