/* SPDX-License-Identifier: MIT */
/*
 * jtest.h - helpers shared by the journal's test files: a fresh temporary
 * directory per test, calls and results, raw SQL on the journal file.
 * Functions are static inline so each test file takes only what it uses.
 */
#ifndef TG_TEST_JTEST_H
#define TG_TEST_JTEST_H

#include <ftw.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "journal.h"
#include "record.h"

struct jt_fixture {
    char dir[64];
    char path[128];
};

static inline int jt_rm_entry(const char *p, const struct stat *sb, int type,
                              struct FTW *ftw)
{
    (void)sb;
    (void)type;
    (void)ftw;
    return remove(p);
}

static inline int jt_setup(void **state)
{
    struct jt_fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/tg-journal-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/journal.db", f->dir);
    *state = f;
    return 0;
}

static inline int jt_teardown(void **state)
{
    struct jt_fixture *f = *state;
    nftw(f->dir, jt_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static inline tg_call *jt_call(const char *id, const char *tool,
                               const char *args, const char *caller)
{
    tg_call *c = tg__call_new(id, tool, "openai-chat");
    assert_non_null(c);
    assert_int_equal(tg__call_set_args_text(c, args, strlen(args)), 0);
    assert_int_equal(tg__strset(&c->caller_id, caller), 0);
    return c;
}

/* Opens the journal at path writing its rows on the call path (commit
 * "inline"), so that what a test reads from the file after a begin or a
 * finish is there: the committer's thread (the default) has its own tests,
 * test_committer.c, and runs under every test of the runtime. */
static inline tg__journal *jt_open(const char *path,
                                   const tg__journal_options *opts)
{
    tg__journal *j = NULL;
    tg_error err = {0};
    tg__journal_options o = {0};
    if (opts != NULL)
        o = *opts;
    o.commit_inline = 1;
    if (tg__journal_open_sqlite_opts(path, &o, &j, &err) != 0)
        fail_msg("open %s: %s", path, err.message);
    return j;
}

/* Opens the journal at path with the default settings (rows written by
 * the committer's thread). */
static inline tg__journal *jt_open_default(const char *path)
{
    tg__journal *j = NULL;
    tg_error err = {0};
    if (tg__journal_open_sqlite_opts(path, NULL, &j, &err) != 0)
        fail_msg("open %s: %s", path, err.message);
    return j;
}

/* Begins (with re-delivery lookups), ends every call that should run with
 * a success whose payload is `text`, finishes everything. replies[i] is
 * set for calls that did not run; the caller frees them. */
static inline void jt_turn(tg__journal *j, tg_call **calls, size_t n,
                           const char *text, tg_result **replies)
{
    tg_error err = {0};
    tg_result *results[64];
    assert_true(n <= 64);
    if (tg__journal_begin_dedup(j, calls, n, replies, &err) != 0)
        fail_msg("begin: %s", err.message);
    for (size_t i = 0; i < n; i++) {
        if (replies[i] != NULL) {
            results[i] = replies[i];
            continue;
        }
        results[i] = tg__result_success(calls[i], json_string(text));
        assert_non_null(results[i]);
        results[i]->execution = TG_EXECUTION_FINISHED;
    }
    if (tg__journal_finish(j, calls, results, n, &err) != 0)
        fail_msg("finish: %s", err.message);
    for (size_t i = 0; i < n; i++)
        if (replies[i] == NULL)
            tg__result_free(results[i]);
}

/* The first row's n columns of `sql` (counts, one per column) into out[],
 * on a connection of its own: one open and one schema parse for several
 * checks. */
static inline void jt_counts(const char *path, const char *sql, long long *out,
                             int n)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL),
                     SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    assert_int_equal(sqlite3_column_count(st), n);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    for (int i = 0; i < n; i++)
        out[i] = sqlite3_column_int64(st, i);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static inline long long jt_count(const char *path, const char *sql)
{
    long long n = 0;
    jt_counts(path, sql, &n, 1);
    return n;
}

static inline void jt_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL),
                     SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

#endif
