/* SPDX-License-Identifier: MIT */
/*
 * test_source.c - the tool source interface (src/exec/source.h) driven
 * directly, without the scheduler, the way a new source's caller would:
 * a sink that records what a source reports, a real runtime for its
 * environment (its loop, sandbox off), real subprocesses and real handlers
 * on the thread pool. Each source reports its output through the sink,
 * honours its budget and a cancel, and calls done exactly once; an inline
 * source ends before start returns and leaves nothing to cancel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "source.h"
#include "tg_test.h"
#include "timeutil.h"

/* What a source reported about one call. */
typedef struct record {
    tg__buf out; /* stream 1 */
    int chunks;
    bool sandbox_decided;
    int dones;
    tg_result *result;
} record;

static void rec_output(void *ctx, int stream, const char *data, size_t len)
{
    record *r = ctx;
    if (stream == 1) {
        assert_int_equal(tg__buf_append(&r->out, data, len), 0);
        r->chunks++;
    }
}

static int rec_decide(void *ctx, const char *key, json_t *value)
{
    record *r = ctx;
    assert_non_null(value);
    if (strcmp(key, "sandbox") == 0)
        r->sandbox_decided = true;
    json_decref(value);
    return 0;
}

static void rec_done(void *ctx, tg_result *result)
{
    record *r = ctx;
    r->dones++;
    tg__result_free(r->result);
    r->result = result;
}

/* Waits for a pool handler to be told it is canceled, then returns. */
static int wait_canceled(tg_handler_ctx *ctx, const char *args, size_t len,
                         void *ud)
{
    (void)args, (void)len;
    atomic_int *returned = ud;
    double end = tg_test_now_ms() + (double)tg_test_ms(30000);
    while (!tg_handler_canceled(ctx) && tg_test_now_ms() < end)
        tg_test_sleep_ms(2);
    tg_handler_write(ctx, "dropped", 7, NULL);
    atomic_store(returned, 1);
    return 0;
}

static int say_inline(tg_handler_ctx *ctx, const char *args, size_t len,
                      void *ud)
{
    (void)args, (void)len, (void)ud;
    return tg_handler_write(ctx, "inline", 6, NULL);
}

typedef struct fixture {
    tg_runtime *rt;
    atomic_int returned; /* the pool handler returned */
} fixture;

static int setup(void **state)
{
    static const char cfgtext[] =
        "{\"journal\": null, \"spool\": null, \"builtin_tools\": [],"
        " \"sandbox\": {\"mode\": \"off\"}, \"limits\": {\"kill_grace_ms\":"
        " 60000}, \"tools\": ["
        "{\"name\": \"say\", \"command\": [\"printf\", \"%s\", \"hello\"]},"
        "{\"name\": \"nap\", \"command\": [\"sleep\", \"30\"]},"
        "{\"name\": \"stubborn\", \"command\": [\"sh\", \"-c\","
        " \"trap '' TERM; echo ready; exec sleep 30\"]}]}";
    fixture *f = calloc(1, sizeof *f);
    tg_config *cfg = tg_config_new();
    tg_error err = {0};
    assert_non_null(f);
    assert_non_null(cfg);
    assert_int_equal(
        tg_config_load(cfg, cfgtext, sizeof cfgtext - 1, NULL, &err), 0);
    assert_int_equal(tg_runtime_new(cfg, &f->rt, &err), 0);
    tg_config_free(cfg);
    assert_int_equal(tg_runtime_register(f->rt, "wait", NULL, NULL,
                                         wait_canceled, &f->returned, 0, &err),
                     0);
    assert_int_equal(tg_runtime_register(f->rt, "quick", NULL, NULL, say_inline,
                                         NULL, TG_TOOL_INLINE, &err),
                     0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tg_runtime_free(f->rt);
    free(f);
    return 0;
}

/* Starts a call of `tool` on its source with budget_ms; *src is the state
 * for cancel. The call and the record live in the caller. */
static const tg__source_ops *start(fixture *f, tg_call *call, record *r,
                                   int64_t budget_ms, char **argv, void **src)
{
    const tg__tool *tool = tg__registry_find(f->rt->reg, tg_call_tool(call));
    assert_non_null(tool);
    const tg__source_ops *ops = tg__source_of(tool);
    tg__buf_init(&r->out, 0);
    tg__source_call c = {
        .env = &f->rt->src,
        .call = call,
        .tool = tool,
        .budget_ms = budget_ms,
        .start_ns = tg__mono_ns(),
        .alone = true,
        .argv = argv,
        .stdin_text = NULL, /* read only with has_stdin */
        .sink = {rec_output, rec_decide, rec_done, r},
    };
    *src = NULL;
    ops->start(&c, src);
    return ops;
}

/* Runs the loop until the call is done, at most a scaled 30 s. */
static void run_until_done(fixture *f, record *r)
{
    double end = tg_test_now_ms() + (double)tg_test_ms(30000);
    while (r->dones == 0 && tg_test_now_ms() < end)
        uv_run(&f->rt->loop, UV_RUN_ONCE);
    assert_int_equal(r->dones, 1);
}

static tg_call *new_call(const char *id, const char *tool)
{
    tg_call *call = tg__call_new_args(id, tool, "native", "{}", 2);
    assert_non_null(call);
    return call;
}

static void record_cleanup(record *r)
{
    tg__buf_cleanup(&r->out);
    tg__result_free(r->result);
}

static void test_command_reports_output_then_done(void **state)
{
    fixture *f = *state;
    tg_call *call = new_call("c1", "say");
    char *argv[] = {"printf", "%s", "hello", NULL};
    record r = {0};
    void *src;
    const tg__source_ops *ops = start(f, call, &r, 0, argv, &src);
    assert_string_equal(ops->name, "command");
    assert_non_null(src); /* cancelable while it runs */
    run_until_done(f, &r);
    assert_true(r.sandbox_decided);
    assert_true(r.chunks >= 1);
    assert_int_equal(r.out.len, 5);
    assert_memory_equal(r.out.data, "hello", 5);
    assert_int_equal(tg_result_outcome(r.result), TG_OUTCOME_SUCCESS);
    assert_int_equal(tg_result_exit_status(r.result), 0);
    assert_string_equal(tg_result_payload_json(r.result), "\"hello\"");
    /* nothing more is reported once done */
    for (int i = 0; i < 3; i++)
        uv_run(&f->rt->loop, UV_RUN_NOWAIT);
    assert_int_equal(r.dones, 1);
    record_cleanup(&r);
    tg__call_free(call);
}

static void test_command_hard_cancel(void **state)
{
    fixture *f = *state;
    tg_call *call = new_call("c2", "stubborn");
    char *argv[] = {"sh", "-c", "trap '' TERM; echo ready; exec sleep 30",
                    NULL};
    record r = {0};
    void *src;
    const tg__source_ops *ops = start(f, call, &r, 0, argv, &src);
    assert_non_null(src);
    /* "ready": TERM is ignored from now on */
    double end = tg_test_now_ms() + (double)tg_test_ms(30000);
    while (r.chunks == 0 && tg_test_now_ms() < end)
        uv_run(&f->rt->loop, UV_RUN_ONCE);
    assert_int_equal(r.chunks, 1);
    double t0 = tg_test_now_ms();
    /* It ignores TERM: only a hard cancel (KILL now, not after the 60 s
     * grace period) ends it within the bound. */
    ops->cancel(src, "tester", "enough", true);
    run_until_done(f, &r);
    assert_true(tg_test_now_ms() - t0 < (double)tg_test_ms(4000));
    assert_int_equal(tg_result_outcome(r.result), TG_OUTCOME_CANCELED);
    assert_int_equal(tg_result_execution(r.result), TG_EXECUTION_STARTED);
    assert_non_null(strstr(tg_result_payload_json(r.result), "tester"));
    record_cleanup(&r);
    tg__call_free(call);
}

static void test_command_budget(void **state)
{
    fixture *f = *state;
    tg_call *call = new_call("c3", "nap");
    char *argv[] = {"sleep", "30", NULL};
    record r = {0};
    void *src;
    start(f, call, &r, 50, argv, &src);
    run_until_done(f, &r);
    /* sleep dies of the TERM at once: no grace period is used up */
    assert_int_equal(tg_result_outcome(r.result), TG_OUTCOME_TIMEOUT);
    record_cleanup(&r);
    tg__call_free(call);
}

static void test_pool_cancel_ends_at_once(void **state)
{
    fixture *f = *state;
    tg_call *call = new_call("p1", "wait");
    record r = {0};
    void *src;
    const tg__source_ops *ops = start(f, call, &r, 0, NULL, &src);
    assert_string_equal(ops->name, "handler");
    assert_false(ops->flags & TG__SOURCE_INLINE);
    assert_non_null(src);
    assert_int_equal(r.dones, 0);
    ops->cancel(src, "tester", "enough", false);
    /* the call ends now; the handler finishes in the background */
    assert_int_equal(r.dones, 1);
    assert_int_equal(tg_result_outcome(r.result), TG_OUTCOME_CANCELED);
    assert_int_equal(tg_result_execution(r.result), TG_EXECUTION_STARTED);
    double end = tg_test_now_ms() + (double)tg_test_ms(30000);
    while (!atomic_load(&f->returned) && tg_test_now_ms() < end)
        uv_run(&f->rt->loop, UV_RUN_ONCE);
    assert_true(atomic_load(&f->returned));
    for (int i = 0; i < 3; i++)
        uv_run(&f->rt->loop, UV_RUN_NOWAIT);
    /* what it wrote after the cancel is dropped */
    assert_int_equal(r.dones, 1);
    assert_int_equal(r.chunks, 0);
    record_cleanup(&r);
    tg__call_free(call);
}

static void test_inline_ends_before_start_returns(void **state)
{
    fixture *f = *state;
    tg_call *call = new_call("i1", "quick");
    record r = {0};
    void *src;
    const tg__source_ops *ops = start(f, call, &r, 0, NULL, &src);
    assert_true(ops->flags & TG__SOURCE_INLINE);
    assert_null(src);
    assert_int_equal(r.dones, 1);
    assert_int_equal(r.chunks, 1);
    assert_int_equal(tg_result_outcome(r.result), TG_OUTCOME_SUCCESS);
    assert_string_equal(tg_result_payload_json(r.result), "\"inline\"");
    record_cleanup(&r);
    tg__call_free(call);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_command_reports_output_then_done,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_command_hard_cancel, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_command_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool_cancel_ends_at_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_inline_ends_before_start_returns,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
