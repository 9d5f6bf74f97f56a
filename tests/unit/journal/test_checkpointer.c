/* SPDX-License-Identifier: MIT */
/*
 * test_checkpointer.c - the journal's WAL checkpoints on their own thread
 * (src/journal/checkpointer.c), on a real SQLite database in WAL mode:
 * commits past SQLite's checkpoint size get their checkpoints from the
 * thread (pages reach the database file while the writer goes on), and
 * every row committed is in the database after the checkpointer is gone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpointer.h"
#include "tg_test.h"

static int setup(void **state)
{
    return tg_test_dir_setup(state, PATH_MAX, "tg_ckpt_");
}

static int teardown(void **state)
{
    return tg_test_dir_teardown(state);
}

/* The writer waits on a busy lock as the journal's connection does
 * (sqlite_journal.c sets busy_timeout 5000): the checkpointer's connection
 * may hold the WAL's write lock for a moment (SQLite takes it when a reader
 * finds the WAL-index header changing under it), and a writer without a
 * busy handler gets SQLITE_BUSY then; CI's sanitizer run saw one. */
static sqlite3 *open_wal(const char *path)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_busy_timeout(db, 5000), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "PRAGMA journal_mode = WAL;"
                                  "PRAGMA synchronous = NORMAL;"
                                  "CREATE TABLE IF NOT EXISTS t(b BLOB)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    return db;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void test_thread_checkpoints(void **state)
{
    const char *dir = *state;
    char path[PATH_MAX + 16], wal[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/j.db", dir);
    snprintf(wal, sizeof wal, "%s-wal", path);
    sqlite3 *db = open_wal(path);
    tg__checkpointer *c = NULL;
    assert_int_equal(tg__checkpointer_attach(db, &c), 0);
    assert_non_null(c);
    sqlite3_stmt *ins = NULL;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "INSERT INTO t VALUES (zeroblob(3000))",
                                        -1, &ins, NULL),
                     SQLITE_OK);
    /* 3,000 commits of a page each: three times SQLite's checkpoint size */
    enum { N = 3000 };
    for (int i = 0; i < N; i++) {
        assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    /* the thread checkpoints while the writer goes on; wait for it */
    double end = tg_test_now_ms() + (double)tg_test_ms(10000);
    while (tg__checkpointer_done(c) == 0 && tg_test_now_ms() < end)
        usleep(10000);
    assert_true(tg__checkpointer_done(c) >= 1);
    assert_true(file_size(wal) > 0);
    /* The checkpoint copied pages into the database file (done counts only
     * those that did; a connection that never read the file has no WAL
     * open, and its checkpoints copied nothing while saying SQLITE_OK).
     * The thread is first asked at 1,000 pages of WAL, and a commit here
     * writes about three (its row's page and the two above it, 3.04 on
     * average, up to 7 on a split): at least 250 of the rows' pages reach
     * the file, however late the thread runs (on a busy machine the writer
     * may finish all its commits during that first checkpoint, and no
     * commit comes after to ask again). */
    assert_true(file_size(path) >= 250L * 4096);
    tg__checkpointer_detach(c);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    /* every row is there */
    db = open_wal(path);
    sqlite3_stmt *st = NULL;
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), N);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* An in-memory database has nothing to checkpoint: no checkpointer. */
static void test_memory(void **state)
{
    (void)state;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    tg__checkpointer *c = (tg__checkpointer *)1;
    assert_int_equal(tg__checkpointer_attach(db, &c), 0);
    assert_null(c);
    tg__checkpointer_detach(NULL);
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_thread_checkpoints, setup,
                                        teardown),
        cmocka_unit_test(test_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
