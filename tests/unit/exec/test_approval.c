/* SPDX-License-Identifier: MIT */
/*
 * test_approval.c - a policy `ask` answered through the runtime's approver:
 * yes runs the call, no denies it, always covers the tool for the session,
 * an approval is bound to the call's checksum (the same arguments are not
 * asked again, changed ones are), --approve needs no approver, and the
 * verdict is recorded in the result's `decisions`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg_test_exec.h"
#include "toolgate.h"

typedef struct asker {
    tg_approval answer;
    int asked;
    char last_tool[64];
    char last_reason[256];
} asker;

static tg_approval ask(void *ud, const tg_call *call, const char *reason)
{
    asker *a = ud;
    a->asked++;
    snprintf(a->last_tool, sizeof a->last_tool, "%s", tg_call_tool(call));
    snprintf(a->last_reason, sizeof a->last_reason, "%s", reason);
    return a->answer;
}

static int echo(tg_handler_ctx *ctx, const char *args_json, size_t len,
                void *ud)
{
    (void)ud;
    return tg_handler_write(ctx, args_json, len, NULL);
}

/* A runtime whose policy asks about `danger` and allows the rest. */
static tg_runtime *make_rt(void)
{
    static const char cfg_text[] =
        "{\"journal\":null,\"builtin_tools\":[],"
        "\"policy\":{\"default\":\"allow\",\"rules\":["
        "{\"tool\":\"danger\",\"decision\":\"ask\","
        "\"reason\":\"danger needs a person\"}]}}";
    tg_runtime *rt = tg_test_runtime(cfg_text, NULL);
    tg_error err = {0};
    assert_int_equal(tg_runtime_register(rt, "danger", "d", NULL, echo, NULL,
                                         TG_TOOL_INLINE, &err),
                     0);
    assert_int_equal(tg_runtime_register(rt, "safe", "s", NULL, echo, NULL,
                                         TG_TOOL_INLINE, &err),
                     0);
    return rt;
}

/* Runs one toolgate-format call and returns its outcome; *decisions gets
 * the result's decisions as JSON text (caller frees) when asked for. */
static tg_outcome run_one(tg_runtime *rt, const char *tool, const char *args,
                          char **decisions)
{
    char text[512];
    snprintf(text, sizeof text, "{\"id\":\"c1\",\"tool\":\"%s\",\"args\":%s}\n",
             tool, args);
    tg_turn *turn = NULL;
    tg_error err = {0};
    assert_int_equal(
        tg_turn_parse(text, strlen(text), "toolgate", NULL, &turn, &err), 0);
    assert_int_equal(tg_runtime_run_turn(rt, turn, &err), 0);
    const tg_result *r = tg_turn_result(turn, 0);
    assert_non_null(r);
    tg_outcome o = tg_result_outcome(r);
    if (decisions != NULL) {
        char *rec = tg_result_to_json(r);
        json_t *j = json_loads(rec, 0, NULL); /* new ref */
        tg_free(rec);
        json_t *d = json_object_get(j, "decisions"); /* borrowed */
        *decisions = d ? json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        json_decref(j);
    }
    tg_turn_free(turn);
    return o;
}

static void test_no_approver_denies(void **state)
{
    (void)state;
    tg_runtime *rt = make_rt();
    assert_int_equal(run_one(rt, "danger", "{}", NULL), TG_OUTCOME_DENIED);
    assert_int_equal(run_one(rt, "safe", "{}", NULL), TG_OUTCOME_SUCCESS);
    tg_runtime_free(rt);
}

static void test_yes_is_bound_to_checksum(void **state)
{
    (void)state;
    tg_runtime *rt = make_rt();
    asker a = {.answer = TG_APPROVAL_YES};
    tg_runtime_set_approver(rt, ask, &a);
    char *d = NULL;
    assert_int_equal(run_one(rt, "danger", "{\"x\":1}", &d),
                     TG_OUTCOME_SUCCESS);
    assert_int_equal(a.asked, 1);
    assert_string_equal(a.last_tool, "danger");
    assert_string_equal(a.last_reason, "danger needs a person");
    assert_non_null(d);
    assert_string_equal(d, "{\"policy\":{\"approved_by\":\"operator\","
                           "\"decision\":\"ask\",\"reason\":\"danger needs a "
                           "person\",\"rule\":0}}");
    free(d);
    /* same arguments: not asked again, even when the operator would now
     * say no */
    a.answer = TG_APPROVAL_NO;
    assert_int_equal(run_one(rt, "danger", "{\"x\":1}", NULL),
                     TG_OUTCOME_SUCCESS);
    assert_int_equal(a.asked, 1);
    /* changed arguments: a new approval, and this one is no */
    assert_int_equal(run_one(rt, "danger", "{\"x\":2}", &d), TG_OUTCOME_DENIED);
    assert_int_equal(a.asked, 2);
    assert_null(strstr(d, "approved_by"));
    assert_non_null(strstr(d, "\"decision\":\"ask\""));
    free(d);
    /* the other tool is never asked about */
    assert_int_equal(run_one(rt, "safe", "{}", NULL), TG_OUTCOME_SUCCESS);
    assert_int_equal(a.asked, 2);
    tg_runtime_free(rt);
}

static void test_always_covers_the_tool(void **state)
{
    (void)state;
    tg_runtime *rt = make_rt();
    asker a = {.answer = TG_APPROVAL_ALWAYS};
    tg_runtime_set_approver(rt, ask, &a);
    assert_int_equal(run_one(rt, "danger", "{\"x\":1}", NULL),
                     TG_OUTCOME_SUCCESS);
    a.answer = TG_APPROVAL_NO;
    assert_int_equal(run_one(rt, "danger", "{\"x\":2}", NULL),
                     TG_OUTCOME_SUCCESS);
    assert_int_equal(run_one(rt, "danger", "{\"y\":\"z\"}", NULL),
                     TG_OUTCOME_SUCCESS);
    assert_int_equal(a.asked, 1);
    tg_runtime_free(rt);
    /* a new runtime is a new session: asked again */
    rt = make_rt();
    tg_runtime_set_approver(rt, ask, &a);
    assert_int_equal(run_one(rt, "danger", "{\"x\":2}", NULL),
                     TG_OUTCOME_DENIED);
    assert_int_equal(a.asked, 2);
    tg_runtime_free(rt);
}

static void test_flag_needs_no_approver(void **state)
{
    (void)state;
    tg_runtime *rt = make_rt();
    asker a = {.answer = TG_APPROVAL_NO};
    tg_runtime_set_approver(rt, ask, &a);
    tg_runtime_set_approve(rt, 1);
    char *d = NULL;
    assert_int_equal(run_one(rt, "danger", "{}", &d), TG_OUTCOME_SUCCESS);
    assert_int_equal(a.asked, 0);
    assert_non_null(strstr(d, "\"approved_by\":\"--approve\""));
    free(d);
    tg_runtime_free(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_approver_denies),
        cmocka_unit_test(test_yes_is_bound_to_checksum),
        cmocka_unit_test(test_always_covers_the_tool),
        cmocka_unit_test(test_flag_needs_no_approver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
