/* SPDX-License-Identifier: MIT */
/*
 * test_readpin.c - the read pin (src/journal/readpin.c) on real SQLite
 * connections in WAL mode through the journal's VFS, and through the
 * journal: while the pin holds the read slots, a checkpoint of the process
 * still copies every frame (PASSIVE) and empties the WAL (TRUNCATE), the
 * writer still starts the WAL over once everything was copied, another
 * process still reads every committed row, and the journal lets the slots
 * go once it stops writing. What another process sees of the slots is
 * asked of the kernel (F_GETLK from a child: a process never conflicts
 * with its own locks).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jtest.h"
#include "readpin.h"
#include "tg_test.h"
#include "walbuf.h"

#define SHM_LOCKS 120 /* offset of the wal-index's locks in the -shm file */

static sqlite3 *open_vfs(const char *path)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db,
                                     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                     tg__walbuf_vfs()),
                     SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    return db;
}

static void exec_ok(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
}

/* PRAGMA wal_checkpoint(mode) on db: *log frames in the WAL, *copied of
 * them in the database; returns the busy flag. */
static int checkpoint(sqlite3 *db, const char *mode, int *log, int *copied)
{
    char sql[64];
    sqlite3_stmt *st = NULL;
    snprintf(sql, sizeof sql, "PRAGMA wal_checkpoint(%s)", mode);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int busy = sqlite3_column_int(st, 0);
    *log = sqlite3_column_int(st, 1);
    *copied = sqlite3_column_int(st, 2);
    sqlite3_finalize(st);
    return busy;
}

/* Whether another process finds read slot 1 (lock 4) held: a child asks
 * the kernel for an exclusive lock's conflicts on the -shm file. */
static int slot_held_elsewhere(const char *path)
{
    char shm[PATH_MAX + 8];
    snprintf(shm, sizeof shm, "%s-shm", path);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(shm, O_RDWR | O_CLOEXEC);
        if (fd < 0)
            _exit(2);
        struct flock fl = {.l_type = F_WRLCK,
                           .l_whence = SEEK_SET,
                           .l_start = SHM_LOCKS + 4,
                           .l_len = 1};
        if (fcntl(fd, F_GETLK, &fl) != 0)
            _exit(2);
        _exit(fl.l_type == F_UNLCK ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_not_equal(WEXITSTATUS(status), 2);
    return WEXITSTATUS(status);
}

/* Another process's count of t's rows (its own connection, the default
 * VFS), or -1. */
static long long count_elsewhere(const char *path)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        long long n = -1;
        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) ==
                SQLITE_OK &&
            sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, NULL) ==
                SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
        if (write(fds[1], &n, sizeof n) != (ssize_t)sizeof n)
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    long long n = -2;
    assert_int_equal(read(fds[0], &n, sizeof n), (ssize_t)sizeof n);
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return n;
}

static void insert_rows(sqlite3 *db, int n)
{
    for (int i = 0; i < n; i++)
        exec_ok(db, "INSERT INTO t VALUES (zeroblob(500))");
}

static int setup(void **state)
{
    return tg_test_dir_setup(state, PATH_MAX, "tg_readpin_");
}

static int teardown(void **state)
{
    return tg_test_dir_teardown(state);
}

static void test_checkpoints_and_restart_while_pinned(void **state)
{
    const char *dir = *state;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/p.db", dir);
    sqlite3 *w = open_vfs(path);
    exec_ok(w, "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;"
               "CREATE TABLE t(b BLOB)");
    sqlite3 *pin_db = open_vfs(path), *ck = open_vfs(path);
    exec_ok(pin_db, "SELECT 1 FROM sqlite_schema LIMIT 1");
    tg__readpin *pin = NULL;
    assert_int_equal(tg__readpin_open(pin_db, &pin), 0);
    assert_true(tg__readpin_held(pin));
    assert_int_equal(slot_held_elsewhere(path), 1);

    insert_rows(w, 200);
    assert_true(tg__readpin_held(pin)); /* taken again after each write */
    assert_int_equal(count_elsewhere(path), 200);
    /* A checkpoint of this process copies everything though the slots
     * were held (the pin let go while it raised the marks). */
    int log = 0, copied = 0;
    assert_int_equal(checkpoint(ck, "PASSIVE", &log, &copied), 0);
    assert_true(log >= 200);
    assert_int_equal(copied, log);
    int before = log;
    /* The next write starts the WAL over from its beginning. */
    insert_rows(w, 1);
    assert_true(tg__readpin_held(pin));
    assert_int_equal(checkpoint(ck, "PASSIVE", &log, &copied), 0);
    assert_true(log < before);
    assert_true(log <= 4);
    /* TRUNCATE waits for the readers to leave: the pin leaves. */
    insert_rows(w, 50);
    assert_int_equal(checkpoint(ck, "TRUNCATE", &log, &copied), 0);
    assert_int_equal(log, 0);
    insert_rows(w, 1);
    assert_true(tg__readpin_held(pin));
    assert_int_equal(count_elsewhere(path), 252);

    tg__readpin_idle(pin);
    assert_false(tg__readpin_held(pin));
    assert_int_equal(slot_held_elsewhere(path), 0);
    insert_rows(w, 1); /* a write takes them again */
    assert_true(tg__readpin_held(pin));
    tg__readpin_close(pin);
    assert_int_equal(slot_held_elsewhere(path), 0);
    sqlite3_close(pin_db);
    sqlite3_close(ck);
    sqlite3_close(w);
}

/* Through the journal: its writes hold the slots, and it lets them go
 * once no call came for a while. */
static void test_journal_pins_then_idles(void **state)
{
    const char *dir = *state;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/j.db", dir);
    tg__journal *j = jt_open(path, NULL);
    assert_int_equal(slot_held_elsewhere(path), 0); /* no write yet */
    /* Calls one at a time until another process sees the slots held (at
     * once, unless the machine stalls longer than the idle timer). */
    int calls = 0, held = 0;
    while (!held && calls < 50) {
        char id[32];
        snprintf(id, sizeof id, "c%d", calls++);
        tg_call *c = jt_call(id, "search", "{\"q\":1}", "agent");
        tg_result *reply = NULL;
        jt_turn(j, &c, 1, "r", &reply);
        tg__call_free(c);
        held = slot_held_elsewhere(path);
    }
    assert_int_equal(held, 1);
    assert_int_equal(jt_count(path, "SELECT count(*) FROM results"), calls);
    /* Idle: within a few of the checkpointer's 200 ms ticks. */
    double end = tg_test_now_ms() + (double)tg_test_ms(10000);
    while (held && tg_test_now_ms() < end) {
        usleep(50000);
        held = slot_held_elsewhere(path);
    }
    assert_int_equal(held, 0);
    tg__journal_close(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_checkpoints_and_restart_while_pinned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_journal_pins_then_idles, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
