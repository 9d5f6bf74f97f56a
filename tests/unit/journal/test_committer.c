/* SPDX-License-Identifier: MIT */
/*
 * test_committer.c - the journal's rows written off the call path
 * (src/journal/committer.c, the committer of sqlite_journal.c), on real
 * SQLite files and real processes: rows reach the journal in order and
 * whole; a process killed with records still in its log loses none of
 * them (the next opener replays the log: results answered are there,
 * calls begun and not answered end INTERRUPTED), and replays once; the
 * inline setting makes no log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jtest.h"

/* MCP calls take no part in re-delivery: their begin goes through the
 * committer (re-delivered formats begin on the call path). */
static tg_call *mcp_call(int i)
{
    char id[32];
    snprintf(id, sizeof id, "c%d", i);
    tg_call *c = tg__call_new(id, "echo", "mcp");
    assert_non_null(c);
    assert_int_equal(tg__call_set_args_text(c, "{\"text\":\"hi\"}", 13), 0);
    return c;
}

static tg_result *ok_result(tg_call *c, int i)
{
    char text[32];
    snprintf(text, sizeof text, "answer %d", i);
    tg_result *r = tg__result_success(c, json_string(text));
    assert_non_null(r);
    r->execution = TG_EXECUTION_FINISHED;
    return r;
}

static void begin(tg__journal *j, tg_call **calls, size_t n)
{
    tg_error err = {0};
    if (tg__journal_begin(j, calls, n, &err) != 0)
        fail_msg("begin: %s", err.message);
}

static void finish(tg__journal *j, tg_call **calls, int first, size_t n)
{
    tg_error err = {0};
    tg_result *rs[64];
    assert_true(n <= 64);
    for (size_t i = 0; i < n; i++)
        rs[i] = ok_result(calls[i], first + (int)i);
    if (tg__journal_finish(j, calls, rs, n, &err) != 0)
        fail_msg("finish: %s", err.message);
    for (size_t i = 0; i < n; i++)
        tg__result_free(rs[i]);
}

/* How many committer logs lie beside the journal. */
static int logs_beside(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strstr(de->d_name, "journal.db-log-") == de->d_name)
            n++;
    closedir(d);
    return n;
}

static void check_chain(const char *path)
{
    char *out = NULL;
    tg_error err = {0};
    assert_int_equal(tg_journal_verify(path, NULL, 0, &out, &err), 0);
    if (strstr(out, "\"ok\":true") == NULL &&
        strstr(out, "\"ok\": true") == NULL)
        fail_msg("the chain does not verify: %s", out);
    free(out);
}

/* Many calls begun and finished in batches and one at a time: every row
 * is there, nothing left running, the chain holds, the log is gone. */
static void test_rows_in_order(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal *j = jt_open_default(f->path);
    enum { N = 300 };
    tg_call *calls[N];
    for (int i = 0; i < N; i++)
        calls[i] = mcp_call(i);
    for (int i = 0; i < N; i += 30) {
        begin(j, calls + i, 30);
        finish(j, calls + i, i, 10);
        for (int k = 10; k < 30; k++)
            finish(j, calls + i + k, i + k, 1);
    }
    assert_int_equal(logs_beside(f->dir), 1);
    /* a read on the call path sees every row (it waits for them) */
    char *out = NULL;
    tg_error err = {0};
    tg_history_query q = {.limit = 1000};
    assert_int_equal(tg__journal_history(j, &q, &out, &err), 0);
    json_t *rows = json_loads(out, 0, NULL);
    assert_non_null(rows);
    assert_int_equal(json_array_size(rows), N);
    json_decref(rows);
    free(out);
    tg__journal_close(j);
    for (int i = 0; i < N; i++)
        tg__call_free(calls[i]);
    assert_int_equal(logs_beside(f->dir), 0);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM call_rows"), N);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"), N);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM running"), 0);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM committer_logs"),
                     0);
    /* each result is its own call's, in order */
    assert_int_equal(jt_count(f->path,
                              "SELECT count(*) FROM results r JOIN call_rows"
                              " c ON c.rowid = r.call_rowid WHERE r.payload"
                              " != '\"answer ' || substr(c.id, 2) || '\"'"),
                     0);
    check_chain(f->path);
}

/* A child process journals while the parent holds the journal's write
 * lock (its committer can write nothing), and is killed: all it gave its
 * log is replayed by the next opener, once. Calls begun before the lock
 * (their rows written) and finished after it find their rows by ticket. */
static void test_killed_with_records_in_its_log(void **state)
{
    struct jt_fixture *f = *state;
    int go[2], ready[2];
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(ready), 0);
    /* the schema first, so the lock below does not stop the child's open */
    tg__journal_close(jt_open_default(f->path));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(go[1]);
        close(ready[0]);
        tg__journal *j = jt_open_default(f->path);
        tg_call *calls[20];
        for (int i = 0; i < 20; i++)
            calls[i] = mcp_call(i);
        begin(j, calls, 10);
        char *out = NULL;
        tg_error err = {0};
        tg_history_query q = {.limit = 5};
        /* waits until the committer wrote the ten rows */
        if (tg__journal_history(j, &q, &out, &err) != 0)
            _exit(3);
        free(out);
        char c = 'r';
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
            _exit(4);
        /* the parent holds the write lock now */
        finish(j, calls, 0, 5);   /* by ticket, rows written before */
        begin(j, calls + 10, 10); /* rows only in the log */
        finish(j, calls + 10, 10, 2);
        if (write(ready[1], &c, 1) != 1)
            _exit(5);
        raise(SIGKILL);
        _exit(6);
    }
    close(go[0]);
    close(ready[1]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    sqlite3 *lock = NULL;
    assert_int_equal(sqlite3_open(f->path, &lock), SQLITE_OK);
    sqlite3_busy_timeout(lock, 5000);
    assert_int_equal(sqlite3_exec(lock, "BEGIN IMMEDIATE", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(write(go[1], "g", 1), 1);
    assert_int_equal(read(ready[0], &c, 1), 1);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_int_equal(sqlite3_exec(lock, "ROLLBACK", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(lock);
    assert_int_equal(logs_beside(f->dir), 1);
    /* before any replay: ten rows, all running, no results */
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM call_rows"), 10);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"), 0);

    tg__journal_close(jt_open_default(f->path)); /* replays, recovers */
    assert_int_equal(logs_beside(f->dir), 0);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM call_rows"), 20);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"), 20);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM running"), 0);
    /* answered: calls 0-4 and 10-11, each with its own answer */
    assert_int_equal(jt_count(f->path,
                              "SELECT count(*) FROM results r JOIN call_rows"
                              " c ON c.rowid = r.call_rowid WHERE r.payload"
                              " = '\"answer ' || substr(c.id, 2) || '\"'"),
                     7);
    assert_int_equal(jt_count(f->path,
                              "SELECT count(*) FROM results WHERE payload"
                              " LIKE '%INTERRUPTED%'"),
                     13);
    check_chain(f->path);
    /* opened again: nothing more */
    tg__journal_close(jt_open_default(f->path));
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"), 20);
}

/* commit "inline": no log, rows there when finish returns. */
static void test_inline(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal_options o = {.commit_inline = 1};
    tg__journal *j = jt_open(f->path, &o);
    tg_call *c = mcp_call(1);
    begin(j, &c, 1);
    assert_int_equal(logs_beside(f->dir), 0);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM call_rows"), 1);
    finish(j, &c, 1, 1);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"), 1);
    tg__journal_close(j);
    tg__call_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rows_in_order, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_killed_with_records_in_its_log,
                                        jt_setup, jt_teardown),
        cmocka_unit_test_setup_teardown(test_inline, jt_setup, jt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
