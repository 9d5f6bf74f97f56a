/* SPDX-License-Identifier: MIT */
/*
 * test_schema_work.c - costly schema checks in the runtime: arguments whose
 * check outgrows the loop thread's slice are checked on the thread pool,
 * where a cancel by id or of every call (from another thread) stops them at
 * once: the call ends `canceled`, not_started, and the rest of the turn
 * runs; calls waiting for them are canceled too when everything is; checks
 * past limits.max_validation_steps end SCHEMA_TOO_COSTLY; and the operator
 * is still asked about the calls in call order when one call's check went
 * to the pool. Real thread pool, real handlers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tg_test_exec.h"

/* ------------------------------------------------------------ harness */

static atomic_int ran;

static int handler(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    (void)args;
    (void)len;
    (void)ud;
    atomic_fetch_add(&ran, 1);
    return tg_handler_set_json(ctx, "\"ok\"", 4, NULL);
}

/* The schema of `wide`: every element of "v" tries `branches` failing
 * subschemas before one that passes. */
static char *wide_schema(int branches)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    tg__buf_puts(&b, "{\"type\":\"object\",\"properties\":{\"v\":{\"type\":"
                     "\"array\",\"items\":{\"anyOf\":[");
    for (int k = 0; k < branches; k++)
        tg__buf_printf(&b, "{\"type\":\"string\",\"minLength\":%d},", k);
    tg__buf_puts(&b, "{\"type\":\"integer\"}]}}}}");
    return tg__buf_take(&b);
}

static char *wide_args(int n)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    tg__buf_puts(&b, "{\"v\":[");
    for (int k = 0; k < n; k++)
        tg__buf_puts(&b, k ? ",0" : "0");
    tg__buf_puts(&b, "]}");
    return tg__buf_take(&b);
}

/* A runtime with `limits` and `policy` (JSON members, may be empty), the
 * in-process tools "wide" (a costly schema) and "cheap". */
static tg_runtime *make_rt(const char *limits, const char *policy)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"workspace\": \".\", \"journal\": null, \"builtin_tools\": [],"
             " \"spool\": null, \"limits\": {%s}%s%s}",
             limits, policy[0] ? ", \"policy\": " : "", policy);
    tg_runtime *rt = tg_test_runtime(text, NULL);
    char *schema = wide_schema(2000);
    tg_error err = {0};
    assert_int_equal(tg_runtime_register(rt, "wide", "costly to check", schema,
                                         handler, NULL, 0, &err),
                     0);
    assert_int_equal(tg_runtime_register(rt, "cheap", "cheap to check",
                                         "{\"type\":\"object\"}", handler, NULL,
                                         TG_TOOL_INLINE, &err),
                     0);
    free(schema);
    return rt;
}

static void expect_canceled(const tg_turn *t, size_t i, const char *reason)
{
    const tg_result *r = tg_test_res(t, i);
    if (tg_result_outcome(r) != TG_OUTCOME_CANCELED)
        fail_msg("call %zu: outcome %d (%s), expected canceled", i,
                 (int)tg_result_outcome(r),
                 tg_result_error_message(r) ? tg_result_error_message(r) : "");
    assert_int_equal(tg_result_execution(r), TG_EXECUTION_NOT_STARTED);
    const char *text = tg_result_payload_json(r);
    assert_non_null(text);
    if (strstr(text, reason) == NULL)
        fail_msg("call %zu: %s, without '%s'", i, text, reason);
}

/* Cancels, from its own thread, `ids` (NULL entries: every call) one after
 * the other, each `after_ms` after the turn's calls were accepted. */
typedef struct canceller {
    tg_runtime *rt;
    const char *ids[3];
    int n;
    int after_ms;
    pthread_t th;
    int started;
} canceller;

static void *cancel_main(void *arg)
{
    canceller *c = arg;
    for (int k = 0; k < c->n; k++) {
        usleep((useconds_t)c->after_ms * 1000);
        assert_int_equal(tg_runtime_cancel(c->rt, c->ids[k], "user",
                                           "stopped by the test", NULL),
                         0);
    }
    return NULL;
}

static void on_accepted(void *ud, const tg_call *call)
{
    canceller *c = ud;
    (void)call;
    if (c->started++ == 0)
        assert_int_equal(pthread_create(&c->th, NULL, cancel_main, c), 0);
}

/* ------------------------------------------------------------ tests */

/* Two costly checks on the pool, a cheap call between them: each costly
 * one is canceled by id from another thread while it is being checked (it
 * would take seconds), the cheap one runs. */
static void test_cancel_by_id(void **state)
{
    (void)state;
    atomic_store(&ran, 0);
    tg_runtime *rt = make_rt("\"max_validation_steps\": 1000000000000", "");
    canceller c = {.rt = rt, .ids = {"w0", "w2"}, .n = 2, .after_ms = 100};
    tg_events ev = {.accepted = on_accepted};
    tg_runtime_set_events(rt, &ev, &c);
    tg_turn *t = tg__turn_new("toolgate");
    char *args = wide_args(200000); /* some 1.2 billion steps each */
    tg_test_add(t, "w0", "wide", args);
    tg_test_add(t, "c1", "cheap", "{}");
    tg_test_add(t, "w2", "wide", args);
    double t0 = tg_test_now_ms();
    tg_test_run(rt, t);
    double ms = tg_test_now_ms() - t0;
    pthread_join(c.th, NULL);
    printf("two costly checks canceled in %.0f ms\n", ms);
    expect_canceled(t, 0, "stopped by the test");
    assert_int_equal(tg_result_outcome(tg_test_res(t, 1)), TG_OUTCOME_SUCCESS);
    expect_canceled(t, 2, "stopped by the test");
    assert_int_equal(atomic_load(&ran), 1);
    /* The cancels come 100 ms apart; the checks would take seconds each:
     * 3x the cancels' own time and more. */
    assert_true(ms < (double)tg_test_ms(2000));
    free(args);
    tg_turn_free(t);
    tg_runtime_free(rt);
}

/* Canceling every call while a costly check runs: the calls checked and
 * waiting for it end canceled too, and none runs. */
static void test_cancel_all(void **state)
{
    (void)state;
    atomic_store(&ran, 0);
    tg_runtime *rt = make_rt("\"max_validation_steps\": 1000000000000", "");
    canceller c = {.rt = rt, .ids = {NULL}, .n = 1, .after_ms = 100};
    tg_events ev = {.accepted = on_accepted};
    tg_runtime_set_events(rt, &ev, &c);
    tg_turn *t = tg__turn_new("toolgate");
    char *args = wide_args(200000);
    tg_test_add(t, "c0", "cheap", "{}");
    tg_test_add(t, "w1", "wide", args);
    tg_test_add(t, "c2", "cheap", "{}");
    tg_test_run(rt, t);
    pthread_join(c.th, NULL);
    for (size_t i = 0; i < 3; i++)
        expect_canceled(t, i, "stopped by the test");
    assert_int_equal(atomic_load(&ran), 0);
    free(args);
    tg_turn_free(t);
    tg_runtime_free(rt);
}

/* The default budget: SCHEMA_TOO_COSTLY, not started; the cheap call
 * runs. A budget that suffices: the costly call runs too. */
static void test_budget(void **state)
{
    (void)state;
    atomic_store(&ran, 0);
    tg_runtime *rt = make_rt("", "");
    tg_turn *t = tg__turn_new("toolgate");
    char *args = wide_args(20000); /* some 120 million steps */
    tg_test_add(t, "w0", "wide", args);
    tg_test_add(t, "c1", "cheap", "{}");
    tg_test_run(rt, t);
    const tg_result *r = tg_test_res(t, 0);
    assert_int_equal(tg_result_outcome(r), TG_OUTCOME_ERROR);
    assert_string_equal(tg_result_error_code(r), "SCHEMA_TOO_COSTLY");
    assert_int_equal(tg_result_execution(r), TG_EXECUTION_NOT_STARTED);
    assert_non_null(
        strstr(tg_result_error_message(r), "limits.max_validation_steps"));
    assert_int_equal(tg_result_outcome(tg_test_res(t, 1)), TG_OUTCOME_SUCCESS);
    assert_int_equal(atomic_load(&ran), 1);
    tg_turn_free(t);
    tg_runtime_free(rt);
    /* enough for 2,000 elements (some 12 million steps) */
    rt = make_rt("\"max_validation_steps\": 100000000", "");
    t = tg__turn_new("toolgate");
    free(args);
    args = wide_args(2000);
    tg_test_add(t, "w0", "wide", args);
    tg_test_run(rt, t);
    assert_int_equal(tg_result_outcome(tg_test_res(t, 0)), TG_OUTCOME_SUCCESS);
    assert_int_equal(atomic_load(&ran), 2);
    free(args);
    tg_turn_free(t);
    tg_runtime_free(rt);
}

/* Every call is `ask`: the operator is asked in call order although the
 * second call's check finished on the pool after the third's. */
typedef struct asked {
    char order[64];
} asked;

static tg_approval approver(void *ud, const tg_call *call, const char *reason)
{
    asked *a = ud;
    (void)reason;
    size_t n = strlen(a->order);
    snprintf(a->order + n, sizeof a->order - n, "%s%s", n ? " " : "",
             tg_call_id(call));
    return TG_APPROVAL_YES;
}

static void test_ask_in_order(void **state)
{
    (void)state;
    atomic_store(&ran, 0);
    tg_runtime *rt = make_rt("\"max_validation_steps\": 100000000",
                             "{\"default\": \"ask\", \"rules\": []}");
    asked a = {""};
    tg_runtime_set_approver(rt, approver, &a);
    tg_turn *t = tg__turn_new("toolgate");
    char *args = wide_args(2000);
    tg_test_add(t, "a", "cheap", "{}");
    tg_test_add(t, "b", "wide", args);
    tg_test_add(t, "c", "cheap", "{\"x\":1}");
    tg_test_run(rt, t);
    assert_string_equal(a.order, "a b c");
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(tg_result_outcome(tg_test_res(t, i)),
                         TG_OUTCOME_SUCCESS);
    assert_int_equal(atomic_load(&ran), 3);
    free(args);
    tg_turn_free(t);
    tg_runtime_free(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cancel_by_id),
        cmocka_unit_test(test_cancel_all),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_ask_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
