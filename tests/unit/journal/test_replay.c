/* SPDX-License-Identifier: MIT */
/*
 * test_replay.c - journal.sync and idempotent re-delivery on real journal
 * files: the synchronous setting each choice gives the connection; a call
 * re-delivered with the same id, caller scope and checksum answered from the
 * journal (replayed, no running row, journaled as a row of its own); a
 * different checksum refused with CALL_ID_CONFLICT naming both; other caller
 * scopes, MCP request ids and calls that never started left free to run; a
 * call still running in another connection refused with CALL_IN_PROGRESS;
 * batches larger than one probe statement, in several scopes, with ids
 * repeated inside the batch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "jtest.h"

static void test_sync_setting(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal *j = jt_open(f->path, NULL);
    assert_int_equal(tg__journal_sqlite_synchronous(j), 1); /* NORMAL */
    tg__journal_close(j);
    tg__journal_options full = {.sync_full = 1};
    j = jt_open(f->path, &full);
    assert_int_equal(tg__journal_sqlite_synchronous(j), 2); /* FULL */
    tg__journal_close(j);
    /* The plain opener is the default. */
    tg_error err = {0};
    assert_int_equal(tg__journal_open_sqlite(f->path, &j, &err), 0);
    assert_int_equal(tg__journal_sqlite_synchronous(j), 1);
    assert_int_equal(jt_count(f->path, "SELECT journal_mode = 'wal'"
                                       " FROM pragma_journal_mode"),
                     1);
    tg__journal_close(j);
}

static void free_calls(tg_call **calls, tg_result **replies, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tg__call_free(calls[i]);
        tg__result_free(replies[i]);
        replies[i] = NULL;
    }
}

static void test_replay_same_call(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal *j = jt_open(f->path, NULL);
    tg_call *calls[2] = {jt_call("c1", "echo", "{\"t\":1}", NULL),
                         jt_call("c2", "echo", "{\"t\":2}", "alice")};
    tg_result *replies[2] = {NULL, NULL};
    jt_turn(j, calls, 2, "first", replies);
    assert_null(replies[0]);
    assert_null(replies[1]);
    free_calls(calls, replies, 2);

    /* The same turn again, in another connection (another process would do
     * the same): nothing runs, the recorded results come back. */
    tg__journal_close(j);
    j = jt_open(f->path, NULL);
    calls[0] = jt_call("c1", "echo", "{\"t\":1}", NULL);
    calls[1] = jt_call("c2", "echo", "{ \"t\" : 2 }", "alice"); /* same JCS */
    tg_error err = {0};
    assert_int_equal(tg__journal_begin_dedup(j, calls, 2, replies, &err), 0);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE state = 'running'"),
                     0);
    for (int i = 0; i < 2; i++) {
        assert_non_null(replies[i]);
        assert_true(tg_result_replayed(replies[i]));
        assert_int_equal(tg_result_outcome(replies[i]), TG_OUTCOME_SUCCESS);
        assert_int_equal(tg_result_execution(replies[i]),
                         TG_EXECUTION_FINISHED);
        assert_string_equal(tg_result_payload_json(replies[i]), "\"first\"");
        assert_string_equal(tg_result_id(replies[i]), tg_call_id(calls[i]));
    }
    /* Journaled as rows of their own, marked replayed. */
    assert_int_equal(tg__journal_finish(j, calls, replies, 2, &err), 0);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"), 4);
    assert_int_equal(
        jt_count(f->path, "SELECT count(*) FROM results WHERE replayed = 1"),
        2);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE state != 'done'"),
                     0);
    free_calls(calls, replies, 2);

    /* A third delivery still answers from the first run. */
    calls[0] = jt_call("c1", "echo", "{\"t\":1}", NULL);
    jt_turn(j, calls, 1, "never", replies);
    assert_non_null(replies[0]);
    assert_string_equal(tg_result_payload_json(replies[0]), "\"first\"");
    free_calls(calls, replies, 1);
    tg__journal_close(j);
}

static void test_conflict(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal *j = jt_open(f->path, NULL);
    tg_call *c = jt_call("c1", "echo", "{\"t\":1}", "u");
    tg_result *reply = NULL;
    jt_turn(j, &c, 1, "ran", &reply);
    char first[TG_CHECKSUM_MAX];
    snprintf(first, sizeof first, "%s", tg_call_checksum(c));
    tg__call_free(c);

    c = jt_call("c1", "echo", "{\"t\":2}", "u");
    jt_turn(j, &c, 1, "never", &reply);
    assert_non_null(reply);
    assert_false(tg_result_replayed(reply));
    assert_int_equal(tg_result_outcome(reply), TG_OUTCOME_ERROR);
    assert_int_equal(tg_result_execution(reply), TG_EXECUTION_NOT_STARTED);
    assert_string_equal(tg_result_error_code(reply), "CALL_ID_CONFLICT");
    const char *msg = tg_result_error_message(reply);
    assert_non_null(strstr(msg, first));
    assert_non_null(strstr(msg, tg_call_checksum(c)));
    assert_non_null(strstr(tg_result_payload_json(reply), first));
    tg__result_free(reply);
    reply = NULL;
    tg__call_free(c);

    /* The refusal did not claim the id: the original still answers. */
    c = jt_call("c1", "echo", "{\"t\":1}", "u");
    jt_turn(j, &c, 1, "never", &reply);
    assert_non_null(reply);
    assert_true(tg_result_replayed(reply));
    assert_string_equal(tg_result_payload_json(reply), "\"ran\"");
    tg__result_free(reply);
    tg__call_free(c);
    tg__journal_close(j);
}

/* Other scopes run: another caller, no caller, MCP request ids. */
static void test_scopes(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal *j = jt_open(f->path, NULL);
    tg_call *c = jt_call("c1", "echo", "{}", "alice");
    tg_result *reply = NULL;
    jt_turn(j, &c, 1, "alice's", &reply);
    tg__call_free(c);

    c = jt_call("c1", "echo", "{}", "bob");
    jt_turn(j, &c, 1, "bob's", &reply);
    assert_null(reply);
    tg__call_free(c);
    c = jt_call("c1", "echo", "{}", NULL);
    jt_turn(j, &c, 1, "nobody's", &reply);
    assert_null(reply);
    tg__call_free(c);
    c = jt_call("c1", "echo", "{}", NULL);
    jt_turn(j, &c, 1, "again", &reply);
    assert_non_null(reply);
    assert_string_equal(tg_result_payload_json(reply), "\"nobody's\"");
    tg__result_free(reply);
    reply = NULL;
    tg__call_free(c);

    for (int k = 0; k < 2; k++) {
        c = tg__call_new("1", "echo", "mcp");
        assert_int_equal(tg__call_set_args_text(c, "{}", 2), 0);
        jt_turn(j, &c, 1, "mcp", &reply);
        assert_null(reply);
        tg__call_free(c);
    }
    assert_int_equal(
        jt_count(f->path, "SELECT count(*) FROM calls WHERE id = '1'"), 2);
    tg__journal_close(j);
}

/* A call that never started left nothing to protect: its id runs again.
 * Calls that cannot run (malformed arguments) are not looked up. */
static void test_not_started_is_free(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal *j = jt_open(f->path, NULL);
    tg_error err = {0};
    tg_call *c = jt_call("c1", "nope", "{}", NULL);
    tg_result *r = tg__result_error(c, TG_EXECUTION_NOT_STARTED, "UNKNOWN_TOOL",
                                    NULL, "unknown tool");
    tg_result *reply = NULL;
    assert_int_equal(tg__journal_begin_dedup(j, &c, 1, &reply, &err), 0);
    assert_null(reply);
    assert_int_equal(tg__journal_finish(j, &c, &r, 1, &err), 0);
    tg__result_free(r);
    tg__call_free(c);
    c = jt_call("c1", "nope", "{}", NULL);
    jt_turn(j, &c, 1, "ran now", &reply);
    assert_null(reply);
    tg__call_free(c);

    c = jt_call("c9", "echo", "{broken", NULL);
    jt_turn(j, &c, 1, "x", &reply);
    assert_null(reply);
    tg__call_free(c);
    c = jt_call("c9", "echo", "{broken", NULL);
    jt_turn(j, &c, 1, "x", &reply);
    assert_null(reply);
    tg__call_free(c);
    tg__journal_close(j);
}

/* Retention deleted the original: a replay of it still answers. */
static void test_replay_after_prune(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal_options o = {.max_rows = 1, .prune_every_ms = 3600000};
    tg__journal *j = jt_open(f->path, NULL);
    tg_call *c = jt_call("c1", "echo", "{}", "u");
    tg_result *reply = NULL;
    jt_turn(j, &c, 1, "original", &reply);
    jt_turn(j, &c, 1, "never", &reply);
    assert_non_null(reply);
    tg__result_free(reply);
    reply = NULL;
    tg__journal_close(j);
    j = jt_open(f->path, &o);
    size_t pruned = 0;
    tg_error err = {0};
    assert_int_equal(tg__journal_prune(j, &pruned, &err), 0);
    assert_int_equal(pruned, 1);
    assert_int_equal(jt_count(f->path, "SELECT replayed FROM results"), 1);
    jt_turn(j, &c, 1, "never", &reply);
    assert_non_null(reply);
    assert_true(tg_result_replayed(reply));
    assert_string_equal(tg_result_payload_json(reply), "\"original\"");
    tg__result_free(reply);
    tg__call_free(c);
    tg__journal_close(j);
}

/* Another connection still runs the call: not run twice. */
static void test_in_progress(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal *j1 = jt_open(f->path, NULL), *j2 = jt_open(f->path, NULL);
    tg_error err = {0};
    tg_call *c1 = jt_call("c1", "echo", "{}", NULL);
    tg_call *c2 = jt_call("c1", "echo", "{}", NULL);
    tg_result *reply = NULL;
    assert_int_equal(tg__journal_begin_dedup(j1, &c1, 1, &reply, &err), 0);
    assert_null(reply);
    assert_int_equal(tg__journal_begin_dedup(j2, &c2, 1, &reply, &err), 0);
    assert_non_null(reply);
    assert_string_equal(tg_result_error_code(reply), "CALL_IN_PROGRESS");
    assert_int_equal(tg_result_execution(reply), TG_EXECUTION_NOT_STARTED);
    tg__result_free(reply);
    tg_result *r = tg__result_success(c1, json_string("done"));
    assert_int_equal(tg__journal_finish(j1, &c1, &r, 1, &err), 0);
    tg__result_free(r);
    assert_int_equal(tg__journal_begin_dedup(j2, &c2, 1, &reply, &err), 0);
    assert_non_null(reply);
    assert_true(tg_result_replayed(reply));
    tg__result_free(reply);
    tg__call_free(c1);
    tg__call_free(c2);
    tg__journal_close(j1);
    tg__journal_close(j2);
}

/* A batch is probed in statements of up to 64 ids of one caller scope;
 * only ids the journal holds get a full lookup. Across chunk and scope
 * boundaries exactly the re-delivered calls are answered, and a call whose
 * id and scope an earlier call of the same batch has meets that call's
 * running row, as when each call was looked up just before its row. */
static void test_batch(void **state)
{
    struct jt_fixture *f = *state;
    enum { N = 210 }; /* 70 a scope: more than one probe statement */
    tg__journal *j = jt_open(f->path, NULL);
    tg_error err = {0};
    tg_call *calls[N];
    tg_result *replies[N], *results[N];
    char id[32];
    static const char *const callers[] = {NULL, "a", "b"};
    /* First turn: ids 0, 7, 14, ... of each scope, each with decisions. */
    size_t n = 0;
    for (int i = 0; i < N; i += 7) {
        snprintf(id, sizeof id, "id%d", i);
        calls[n] = jt_call(id, "echo", "{}", callers[i % 3]);
        n++;
    }
    assert_int_equal(tg__journal_begin_dedup(j, calls, n, replies, &err), 0);
    for (size_t i = 0; i < n; i++) {
        assert_null(replies[i]);
        results[i] = tg__result_success(calls[i], json_string("first"));
        results[i]->execution = TG_EXECUTION_FINISHED;
        results[i]->decisions =
            json_pack("{s:{s:s}}", "policy", "decision", "allow"); /* new ref */
    }
    assert_int_equal(tg__journal_finish(j, calls, results, n, &err), 0);
    for (size_t i = 0; i < n; i++) {
        tg__call_free(calls[i]);
        tg__result_free(results[i]);
    }

    /* Second turn: N calls in three scopes, every one of the same ids as
     * before, plus in-batch duplicates at the end. */
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "id%d", i < N - 4 ? i : 1);
        calls[i] = jt_call(id, "echo", i == N - 2 ? "{\"x\":1}" : "{}",
                           callers[(i < N - 4 ? i : 1) % 3]);
    }
    assert_int_equal(tg__journal_begin_dedup(j, calls, N, replies, &err), 0);
    for (int i = 0; i < N - 4; i++) {
        if (i % 7 != 0) {
            assert_null(replies[i]);
            continue;
        }
        assert_non_null(replies[i]);
        assert_true(tg_result_replayed(replies[i]));
        assert_string_equal(tg_result_payload_json(replies[i]), "\"first\"");
        /* The recorded result as it was, decisions included. */
        assert_string_equal(
            json_string_value(json_object_get(
                json_object_get(replies[i]->decisions, "policy"), "decision")),
            "allow");
    }
    /* id1 of scope "a" ran at i = 1; its repeats meet that running row. */
    assert_null(replies[1]);
    assert_string_equal(tg_result_error_code(replies[N - 4]),
                        "CALL_IN_PROGRESS");
    assert_string_equal(tg_result_error_code(replies[N - 3]),
                        "CALL_IN_PROGRESS");
    assert_string_equal(tg_result_error_code(replies[N - 2]),
                        "CALL_ID_CONFLICT");
    assert_string_equal(tg_result_error_code(replies[N - 1]),
                        "CALL_IN_PROGRESS");
    long long ran = 0;
    for (int i = 0; i < N; i++)
        ran += replies[i] == NULL;
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE state = 'running'"),
                     ran);
    /* Calls that ran are consecutive rows between the replies' gaps: a
     * range of `running` each. */
    assert_true(jt_count(f->path, "SELECT count(*) FROM running") < ran);
    for (int i = 0; i < N; i++) {
        results[i] = replies[i]
                         ? replies[i]
                         : tg__result_success(calls[i], json_string("second"));
        replies[i] = NULL;
    }
    assert_int_equal(tg__journal_finish(j, calls, results, N, &err), 0);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM running"), 0);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE state = 'running'"),
                     0);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"),
                     (N + 6) / 7 + N);
    for (int i = 0; i < N; i++) {
        tg__call_free(calls[i]);
        tg__result_free(results[i]);
    }
    tg__journal_close(j);
}

/* Each re-delivery statement probes an index, whatever the history holds:
 * the batch probe reads calls_scope alone, the full lookup starts there. */
static void test_lookup_uses_index(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal_close(jt_open(f->path, NULL));
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM sqlite_schema"
                                       " WHERE name = 'calls_scope'"),
                     1);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM sqlite_schema"
                                       " WHERE name = 'calls_id'"),
                     0);
    static const struct {
        const char *sql, *want;
    } plans[] = {
        {"SELECT v.column1 FROM (VALUES (?2),(?3)) v WHERE EXISTS"
         " (SELECT 1 FROM call_rows c WHERE c.id = v.column1"
         " AND c.caller_id IS ?1)",
         "COVERING INDEX calls_scope (id=? AND caller_id=?)"},
        {"SELECT c.rowid FROM call_rows c"
         " LEFT JOIN results r ON r.call_rowid = c.rowid"
         " WHERE c.id = ?1 AND c.caller_id IS ?2 AND c.format != 'mcp'"
         " AND (ifnull((SELECT u.last FROM running u WHERE u.first <= c.rowid"
         " ORDER BY u.first DESC LIMIT 1) >= c.rowid, 0)"
         " OR r.execution != 'not_started')"
         " ORDER BY c.rowid LIMIT 1",
         "calls_scope (id=? AND caller_id=?)"},
        /* ... and whether a row runs is one probe of `running`. */
        {"SELECT (SELECT u.last FROM running u WHERE u.first <= ?1"
         " ORDER BY u.first DESC LIMIT 1)",
         "SEARCH u USING INTEGER PRIMARY KEY (rowid<?)"},
    };
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        char sql[1024];
        sqlite3_stmt *st = NULL;
        snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN %s", plans[p].sql);
        assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
        int used = 0;
        while (sqlite3_step(st) == SQLITE_ROW)
            used |= strstr((const char *)sqlite3_column_text(st, 3),
                           plans[p].want) != NULL;
        sqlite3_finalize(st);
        if (!used)
            fail_msg("plan of %s does not use %s", plans[p].sql, plans[p].want);
    }
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sync_setting, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_replay_same_call, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_conflict, jt_setup, jt_teardown),
        cmocka_unit_test_setup_teardown(test_scopes, jt_setup, jt_teardown),
        cmocka_unit_test_setup_teardown(test_not_started_is_free, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_in_progress, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_replay_after_prune, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_batch, jt_setup, jt_teardown),
        cmocka_unit_test_setup_teardown(test_lookup_uses_index, jt_setup,
                                        jt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
