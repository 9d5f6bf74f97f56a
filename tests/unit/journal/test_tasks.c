/* SPDX-License-Identifier: MIT */
/*
 * test_tasks.c - the durable task store on real journal files: a task
 * recorded, read, ended once and read again from a second connection;
 * ids taken and bad arguments refused; tasks private to their caller and
 * listed in order, page by page; expiry; a task whose owner died seen so,
 * with its call's INTERRUPTED result from the journal's recovery.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "jtest.h"

static tg_task_store *open_store(const char *path)
{
    tg_task_store *ts = NULL;
    tg_error err = {0};
    if (tg_task_store_open(path, &ts, &err) != 0)
        fail_msg("open %s: %s", path, err.message);
    return ts;
}

/* tg_task_get's object (new ref), or NULL with *rc set. */
static json_t *get(tg_task_store *ts, const char *id, const char *caller,
                   int *rc)
{
    char *text = NULL;
    *rc = tg_task_get(ts, id, caller, &text, NULL);
    json_t *v = *rc == 0 ? json_loads(text, 0, NULL) : NULL;
    tg_free(text);
    return v;
}

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static void test_lifecycle(void **state)
{
    struct jt_fixture *f = *state;
    tg_task_store *ts = open_store(f->path);
    tg_error err = {0};
    assert_int_equal(tg_task_create(ts, "t1", "alice", "call-1", 60000,
                                    "{\"tool\":\"slow\"}", &err),
                     0);
    assert_int_equal(
        tg_task_create(ts, "t1", "alice", "call-2", 60000, NULL, &err),
        TG_EEXIST);
    assert_int_equal(tg_task_create(ts, "", "alice", "c", 1, NULL, &err),
                     TG_EINVAL);
    assert_int_equal(tg_task_create(ts, "t9", "alice", "c", 1, "[1]", &err),
                     TG_EINVAL);
    int rc;
    json_t *t = get(ts, "t1", "alice", &rc);
    assert_non_null(t);
    assert_string_equal(str(t, "status"), "working");
    assert_string_equal(str(t, "callId"), "call-1");
    assert_true(json_is_true(json_object_get(t, "ownerAlive")));
    assert_true(json_is_null(json_object_get(t, "call"))); /* no row yet */
    assert_int_equal(json_integer_value(json_object_get(t, "ttlMs")), 60000);
    assert_string_equal(str(json_object_get(t, "meta"), "tool"), "slow");
    json_decref(t);

    assert_int_equal(tg_task_finish(ts, "t1", "completed", "done",
                                    "{\"result\":{\"x\":1}}", &err),
                     0);
    /* the first end wins */
    assert_int_equal(tg_task_finish(ts, "t1", "failed", NULL, NULL, &err),
                     TG_EEXIST);
    assert_int_equal(tg_task_finish(ts, "nope", "failed", NULL, NULL, &err),
                     TG_EEXIST);
    assert_int_equal(tg_task_finish(ts, "t1", "working", NULL, NULL, &err),
                     TG_EINVAL);
    tg_task_store_free(ts);

    /* another connection, later: the same */
    ts = open_store(f->path);
    t = get(ts, "t1", "alice", &rc);
    assert_non_null(t);
    assert_string_equal(str(t, "status"), "completed");
    assert_string_equal(str(t, "statusMessage"), "done");
    assert_int_equal(
        json_integer_value(json_object_get(
            json_object_get(json_object_get(t, "answer"), "result"), "x")),
        1);
    assert_false(json_is_true(json_object_get(t, "ownerAlive")));
    json_decref(t);
    /* another caller's task is unknown */
    assert_null(get(ts, "t1", "mallory", &rc));
    assert_int_equal(rc, TG_ENOTFOUND);
    tg_task_store_free(ts);
}

static void test_list_and_expiry(void **state)
{
    struct jt_fixture *f = *state;
    tg_task_store *ts = open_store(f->path);
    const char *ids[] = {"a1", "b1", "a2", "a3"};
    const char *callers[] = {"alice", "bob", "alice", "alice"};
    for (int i = 0; i < 4; i++)
        assert_int_equal(
            tg_task_create(ts, ids[i], callers[i], "c", -1, NULL, NULL), 0);
    char *text = NULL;
    assert_int_equal(tg_task_list(ts, "alice", NULL, 2, &text, NULL), 0);
    json_t *page = json_loads(text, 0, NULL);
    tg_free(text);
    assert_int_equal(json_array_size(page), 2);
    assert_string_equal(str(json_array_get(page, 0), "taskId"), "a1");
    assert_string_equal(str(json_array_get(page, 1), "taskId"), "a2");
    assert_true(
        json_is_null(json_object_get(json_array_get(page, 0), "ttlMs")));
    json_decref(page);
    assert_int_equal(tg_task_list(ts, "alice", "a2", 2, &text, NULL), 0);
    page = json_loads(text, 0, NULL);
    tg_free(text);
    assert_int_equal(json_array_size(page), 1);
    assert_string_equal(str(json_array_get(page, 0), "taskId"), "a3");
    json_decref(page);
    /* a cursor of another caller is no cursor */
    assert_int_equal(tg_task_list(ts, "alice", "b1", 2, &text, NULL),
                     TG_ENOTFOUND);
    assert_null(text);

    /* ttl: gone once it passed */
    assert_int_equal(tg_task_create(ts, "brief", "alice", "c", 1, NULL, NULL),
                     0);
    usleep(20000);
    int rc;
    assert_null(get(ts, "brief", "alice", &rc));
    assert_int_equal(rc, TG_ENOTFOUND);
    assert_int_equal(
        jt_count(f->path, "SELECT count(*) FROM tasks WHERE task_id='brief'"),
        0);
    tg_task_store_free(ts);
}

static void test_dead_owner(void **state)
{
    struct jt_fixture *f = *state;
    /* A call begun and left running, and a task on it. */
    tg__journal *j = jt_open(f->path, NULL);
    tg_call *call = jt_call("mcp-x-1", "slow", "{}", "alice");
    tg_error err = {0};
    assert_int_equal(tg__journal_begin(j, &call, 1, &err), 0);
    tg_task_store *ts = open_store(f->path);
    assert_int_equal(
        tg_task_create(ts, "t1", "alice", "mcp-x-1", -1, NULL, &err), 0);
    assert_int_equal(
        tg_task_create(ts, "t2", "alice", "never-begun", -1, NULL, &err), 0);
    int rc;
    json_t *t = get(ts, "t1", "alice", &rc);
    assert_true(json_is_true(json_object_get(t, "ownerAlive")));
    assert_true(json_is_null(
        json_object_get(json_object_get(t, "call"), "result"))); /* running */
    json_decref(t);
    tg_task_store_free(ts);
    tg__journal_close(j);
    tg__call_free(call);

    /* Their process "died" (another boot): a new store sees it so, and the
     * journal's recovery gave the call its INTERRUPTED result. */
    jt_exec(f->path, "UPDATE calls SET owner_boot = 'another-boot';"
                     "UPDATE tasks SET owner_boot = 'another-boot';");
    ts = open_store(f->path);
    t = get(ts, "t1", "alice", &rc);
    assert_false(json_is_true(json_object_get(t, "ownerAlive")));
    const json_t *res = json_object_get(json_object_get(t, "call"), "result");
    assert_string_equal(str(res, "outcome"), "error");
    assert_string_equal(
        str(json_object_get(json_object_get(res, "payload"), "error"), "code"),
        "INTERRUPTED");
    json_decref(t);
    t = get(ts, "t2", "alice", &rc);
    assert_false(json_is_true(json_object_get(t, "ownerAlive")));
    assert_true(json_is_null(json_object_get(t, "call")));
    json_decref(t);
    tg_task_store_free(ts);
}

static void test_in_memory(void **state)
{
    (void)state;
    tg_task_store *ts = open_store(NULL);
    assert_int_equal(tg_task_create(ts, "m", "c", "x", -1, NULL, NULL), 0);
    int rc;
    json_t *t = get(ts, "m", "c", &rc);
    assert_non_null(t);
    json_decref(t);
    tg_task_store_free(ts);
    tg_task_store_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lifecycle, jt_setup, jt_teardown),
        cmocka_unit_test_setup_teardown(test_list_and_expiry, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_dead_owner, jt_setup, jt_teardown),
        cmocka_unit_test(test_in_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
