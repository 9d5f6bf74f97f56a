/* SPDX-License-Identifier: MIT */
/*
 * test_loops.c - the loop store on real journal files: a loop begun,
 * stepped and read back from a second connection, in order; ids, steps
 * and bad arguments refused; a loop whose process still runs not taken
 * over, one whose process died taken over, one that ended (answered) not,
 * one that failed or was canceled taken over again; the list, newest
 * first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "jtest.h"

static tg_loop_store *open_store(const char *path)
{
    tg_loop_store *ls = NULL;
    tg_error err = {0};
    if (tg_loop_store_open(path, &ls, &err) != 0)
        fail_msg("open %s: %s", path, err.message);
    return ls;
}

/* tg_loop_store_get's object (new ref), or NULL with *rc set. */
static json_t *get(tg_loop_store *ls, const char *id, int *rc)
{
    char *text = NULL;
    *rc = tg_loop_store_get(ls, id, &text, NULL);
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
    tg_loop_store *ls = open_store(f->path);
    tg_error err = {0};
    assert_int_equal(
        tg_loop_store_begin(ls, "loop_a", "{\"prompt\":\"hi\"}", &err), 0);
    assert_int_equal(tg_loop_store_begin(ls, "loop_a", "{}", &err), TG_EEXIST);
    assert_int_equal(tg_loop_store_begin(ls, "", "{}", &err), TG_EINVAL);
    assert_int_equal(tg_loop_store_begin(ls, "loop_b", "[1]", &err), TG_EINVAL);
    assert_int_equal(tg_loop_store_begin(ls, "loop_b", NULL, &err), TG_EINVAL);
    assert_int_equal(
        tg_loop_store_step(ls, "loop_a", 1, "answer", "{\"items\":[1]}", &err),
        0);
    assert_int_equal(
        tg_loop_store_step(ls, "loop_a", 1, "answer", "{\"items\":[2]}", &err),
        TG_EEXIST);
    assert_int_equal(
        tg_loop_store_step(ls, "loop_a", 1, "results", "{\"items\":[3]}", &err),
        0);
    assert_int_equal(tg_loop_store_step(ls, "loop_a", 0, "answer", "{}", &err),
                     TG_EINVAL);
    assert_int_equal(
        tg_loop_store_step(ls, "loop_a", 2, "answer", "{not json", &err),
        TG_EINVAL);
    assert_int_equal(
        tg_loop_store_step(ls, "loop_none", 1, "answer", "{}", &err),
        TG_ENOTFOUND);
    /* a second connection reads it all, in order */
    tg_loop_store *ls2 = open_store(f->path);
    int rc;
    json_t *l = get(ls2, "loop_a", &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(str(l, "status"), "running");
    assert_true(json_is_true(json_object_get(l, "owner_alive")));
    assert_int_equal(json_integer_value(json_object_get(l, "iterations")), 1);
    assert_string_equal(str(json_object_get(l, "meta"), "prompt"), "hi");
    const json_t *steps = json_object_get(l, "steps");
    assert_int_equal(json_array_size(steps), 2);
    assert_string_equal(str(json_array_get(steps, 0), "kind"), "answer");
    assert_string_equal(str(json_array_get(steps, 1), "kind"), "results");
    assert_int_equal(
        json_integer_value(json_array_get(
            json_object_get(json_object_get(json_array_get(steps, 1), "body"),
                            "items"),
            0)),
        3);
    json_decref(l);
    assert_null(get(ls2, "loop_none", &rc));
    assert_int_equal(rc, TG_ENOTFOUND);
    /* its process (this one) runs: not taken over */
    assert_int_equal(tg_loop_store_adopt(ls2, "loop_a", &err), TG_EEXIST);
    assert_non_null(strstr(err.message, "is running in process"));
    assert_int_equal(tg_loop_store_adopt(ls2, "loop_none", &err), TG_ENOTFOUND);
    /* ended answered: final */
    assert_int_equal(tg_loop_store_end(ls, "loop_a", "answered", "done", &err),
                     0);
    assert_int_equal(tg_loop_store_end(ls, "loop_a", "running", NULL, &err),
                     TG_EINVAL);
    assert_int_equal(tg_loop_store_adopt(ls2, "loop_a", &err), TG_EEXIST);
    assert_non_null(strstr(err.message, "ended (answered)"));
    l = get(ls2, "loop_a", &rc);
    assert_string_equal(str(l, "answer"), "done");
    assert_false(json_is_true(json_object_get(l, "owner_alive")));
    json_decref(l);
    /* failed and canceled loops are taken over again */
    for (int i = 0; i < 2; i++) {
        const char *id = i == 0 ? "loop_f" : "loop_c";
        assert_int_equal(tg_loop_store_begin(ls, id, "{}", &err), 0);
        assert_int_equal(tg_loop_store_end(ls, id,
                                           i == 0 ? "failed" : "canceled", NULL,
                                           &err),
                         0);
        assert_int_equal(tg_loop_store_adopt(ls2, id, &err), 0);
        l = get(ls2, id, &rc);
        assert_string_equal(str(l, "status"), "running");
        json_decref(l);
    }
    /* the list, newest first */
    char *text = NULL;
    assert_int_equal(tg_loop_store_list(ls2, 2, &text, &err), 0);
    json_t *list = json_loads(text, 0, NULL);
    tg_free(text);
    assert_int_equal(json_array_size(list), 2);
    assert_string_equal(str(json_array_get(list, 0), "loop_id"), "loop_c");
    assert_null(json_object_get(json_array_get(list, 0), "steps"));
    json_decref(list);
    tg_loop_store_free(ls2);
    tg_loop_store_free(ls);
}

/* Several steps in one transaction: all of them, in order, or none. */
static void test_steps_at_once(void **state)
{
    struct jt_fixture *f = *state;
    tg_loop_store *ls = open_store(f->path);
    tg_error err = {0};
    assert_int_equal(tg_loop_store_begin(ls, "loop_s", "{}", &err), 0);
    tg_loop_step_rec two[] = {{1, "answer", "{\"items\":[1]}"},
                              {1, "results", "{\"items\":[2]}"}};
    assert_int_equal(tg_loop_store_steps(ls, "loop_s", two, 2, &err), 0);
    /* the second exists already: the first is not kept either */
    tg_loop_step_rec clash[] = {{2, "answer", "{\"items\":[3]}"},
                                {1, "results", "{\"items\":[4]}"}};
    assert_int_equal(tg_loop_store_steps(ls, "loop_s", clash, 2, &err),
                     TG_EEXIST);
    tg_loop_step_rec bad[] = {{2, "answer", "{}"}, {0, "results", "{}"}};
    assert_int_equal(tg_loop_store_steps(ls, "loop_s", bad, 2, &err),
                     TG_EINVAL);
    assert_int_equal(tg_loop_store_steps(ls, "loop_s", NULL, 0, &err), 0);
    assert_int_equal(tg_loop_store_steps(ls, "loop_none", two, 1, &err),
                     TG_ENOTFOUND);
    int rc;
    json_t *l = get(ls, "loop_s", &rc);
    assert_int_equal(rc, 0);
    const json_t *steps = json_object_get(l, "steps");
    assert_int_equal(json_array_size(steps), 2);
    assert_string_equal(str(json_array_get(steps, 0), "kind"), "answer");
    assert_string_equal(str(json_array_get(steps, 1), "kind"), "results");
    assert_int_equal(json_integer_value(json_object_get(l, "iterations")), 1);
    json_decref(l);
    /* and the store goes on after the rollback */
    assert_int_equal(tg_loop_store_steps(ls, "loop_s", clash, 1, &err), 0);
    tg_loop_store_free(ls);
}

static void test_dead_owner(void **state)
{
    struct jt_fixture *f = *state;
    tg_loop_store *ls = open_store(f->path);
    tg_error err = {0};
    assert_int_equal(tg_loop_store_begin(ls, "loop_d", "{}", &err), 0);
    tg_loop_store_free(ls);
    /* its process "died" (another boot): taken over, running again */
    jt_exec(f->path, "UPDATE loops SET owner_boot = 'another-boot';");
    ls = open_store(f->path);
    int rc;
    json_t *l = get(ls, "loop_d", &rc);
    assert_false(json_is_true(json_object_get(l, "owner_alive")));
    json_decref(l);
    assert_int_equal(tg_loop_store_adopt(ls, "loop_d", &err), 0);
    l = get(ls, "loop_d", &rc);
    assert_true(json_is_true(json_object_get(l, "owner_alive")));
    json_decref(l);
    tg_loop_store_free(ls);
    assert_int_equal(tg_loop_store_open(NULL, &ls, &err), TG_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lifecycle, jt_setup, jt_teardown),
        cmocka_unit_test_setup_teardown(test_steps_at_once, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_dead_owner, jt_setup, jt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
