/* SPDX-License-Identifier: MIT */
/*
 * test_submit.c - the runtime as a server drives it (include/toolgate.h, "a
 * long-lived runtime"): one-call turns made with tg_turn_new_call,
 * submitted one after another and run side by side under the shared
 * parallel limit, driven from the test's own poll loop through
 * tg_runtime_fd / tg_runtime_timeout / tg_runtime_step, each turn
 * reporting to its own callbacks; cancellation by id while others run; the
 * journal taking every call submitted before a step in one go; a runtime
 * freed with turns still running; and the refusals (a turn submitted
 * twice, run_turn while turns are submitted).
 *
 * Real subprocesses (tests/fixtures through $TG_FIXTURES) and a real
 * journal. Time: bounds are tg_test_ms() (scaled by TG_TEST_TIME_SCALE)
 * and far above what they bound; a cancel waits for its call to start.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg_test_exec.h"

typedef struct env {
    char dir[PATH_MAX]; /* first: tg_test_dir_setup makes it */
    const char *fx;
} env;

static int setup(void **state)
{
    const char *fx = getenv("TG_FIXTURES");
    if (fx == NULL) {
        fprintf(stderr, "TG_FIXTURES is not set (run under ctest)\n");
        return -1;
    }
    if (tg_test_dir_setup(state, sizeof(env), "tg_submit_") != 0)
        return -1;
    ((env *)*state)->fx = fx;
    return 0;
}

static int teardown(void **state)
{
    return tg_test_dir_teardown(state);
}

/* A runtime over e->dir with the fixtures' sleep and echo tools, `parallel`
 * calls at once, the journal at e->dir/j.db when `journal`. */
static tg_runtime *make_rt(const env *e, int parallel, int journal)
{
    char text[4 * PATH_MAX + 1024], jbuf[PATH_MAX + 32];
    if (journal)
        snprintf(jbuf, sizeof jbuf, "\"%s/.toolgate/j.db\"", e->dir);
    else
        snprintf(jbuf, sizeof jbuf, "null");
    snprintf(text, sizeof text,
             "{\"workspace\": \"%s\", \"journal\": %s, \"builtin_tools\": [],"
             " \"sandbox\": {\"mode\": \"off\"}, \"spool\": null,"
             " \"limits\": {\"parallel\": %d, \"timeout_ms\": 600000},"
             " \"tools\": ["
             "{\"name\": \"sleep\", \"command\": [\"%s/sleep_ms\", \"{ms}\"]},"
             "{\"name\": \"say\", \"command\": [\"/bin/echo\", \"{text}\"]}]}",
             e->dir, jbuf, parallel, e->fx);
    return tg_test_runtime(text, e->dir);
}

/* What one submitted turn reported. */
typedef struct seen {
    tg_turn *turn;
    int started, finished, done, status, order;
    char out[256];
    size_t out_len;
} seen;

static int done_seq;

static void on_started(void *ud, const tg_call *c)
{
    (void)c;
    ((seen *)ud)->started++;
}

static void on_output(void *ud, const tg_call *c, int stream, const char *d,
                      size_t n)
{
    (void)c;
    seen *s = ud;
    if (stream == 1 && s->out_len + n < sizeof s->out) {
        memcpy(s->out + s->out_len, d, n);
        s->out_len += n;
    }
}

static void on_finished(void *ud, const tg_call *c, const tg_result *r)
{
    seen *s = ud;
    assert_non_null(r);
    assert_string_equal(tg_call_id(c), tg_result_id(r));
    assert_int_equal(s->done, 0); /* finished comes before done */
    s->finished++;
}

static void on_done(void *ud, tg_turn *t, int status, const tg_error *err)
{
    seen *s = ud;
    (void)err;
    assert_ptr_equal(t, s->turn);
    s->done++;
    s->status = status;
    s->order = ++done_seq;
}

static const tg_turn_ops ops = {on_started, on_output, on_finished, on_done};

/* A one-call turn, submitted. */
static void submit(tg_runtime *rt, seen *s, const char *id, const char *tool,
                   const char *args)
{
    tg_error err = {0};
    memset(s, 0, sizeof *s);
    if (tg_turn_new_call("mcp", id, tool, args, strlen(args), &s->turn, &err) !=
        0)
        fail_msg("tg_turn_new_call: %s", err.message);
    if (tg_runtime_submit(rt, s->turn, &ops, s, &err) != 0)
        fail_msg("tg_runtime_submit: %s", err.message);
}

/* Drives rt from a poll loop like a server's until `until` returns true or
 * no turn is pending; fails past limit_ms. */
static void drive(tg_runtime *rt, int (*until)(void *), void *arg,
                  long limit_ms)
{
    double end = tg_test_now_ms() + (double)limit_ms;
    for (;;) {
        size_t left = tg_runtime_step(rt);
        if ((until != NULL && until(arg)) || (until == NULL && left == 0))
            return;
        if (tg_test_now_ms() > end)
            fail_msg("the runtime did not get there in %ld ms", limit_ms);
        struct pollfd p = {.fd = tg_runtime_fd(rt), .events = POLLIN};
        int t = tg_runtime_timeout(rt);
        (void)poll(&p, 1, t < 0 || t > 100 ? 100 : t);
    }
}

static const tg_result *only_result(const seen *s)
{
    assert_int_equal(tg_turn_call_count(s->turn), 1);
    const tg_result *r = tg_turn_result(s->turn, 0);
    assert_non_null(r);
    return r;
}

/* Turns submitted together share the parallel limit and each reports to
 * its own callbacks, exactly once. */
static void test_many_turns(void **state)
{
    env *e = *state;
    tg_runtime *rt = make_rt(e, 4, 1);
    enum { N = 12 };
    seen s[N];
    char id[32], args[64];
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "c%d", i);
        if (i % 2 == 0) {
            snprintf(args, sizeof args, "{\"ms\": %d}", 20 + i);
            submit(rt, &s[i], id, "sleep", args);
        } else {
            snprintf(args, sizeof args, "{\"text\":\"hello %d\"}", i);
            submit(rt, &s[i], id, "say", args);
        }
    }
    assert_int_equal(tg_runtime_pending(rt), N);
    drive(rt, NULL, NULL, tg_test_ms(30000));
    for (int i = 0; i < N; i++) {
        assert_int_equal(s[i].done, 1);
        assert_int_equal(s[i].status, 0);
        assert_int_equal(s[i].started, 1);
        assert_int_equal(s[i].finished, 1);
        const tg_result *r = only_result(&s[i]);
        if (tg_result_outcome(r) != TG_OUTCOME_SUCCESS)
            fail_msg("call %d: %s", i, tg_result_payload_json(r));
        if (i % 2 == 1) {
            snprintf(args, sizeof args, "hello %d\n", i);
            assert_int_equal(s[i].out_len, strlen(args));
            assert_memory_equal(s[i].out, args, s[i].out_len);
        }
        tg_turn_free(s[i].turn);
    }
    assert_int_equal(tg_runtime_pending(rt), 0);
    tg_runtime_free(rt);

    /* every call and result is in the journal */
    char path[PATH_MAX + 32], *out = NULL;
    snprintf(path, sizeof path, "%s/.toolgate/j.db", e->dir);
    tg_history_query q = {.limit = 100};
    assert_int_equal(tg_journal_history(path, &q, &out, NULL), 0);
    json_t *h = json_loads(out, 0, NULL); /* new ref */
    assert_int_equal(json_array_size(h), N);
    json_decref(h);
    tg_free(out);
}

static int started_flag(void *arg)
{
    return ((seen *)arg)->started > 0;
}

static int two_done(void *arg)
{
    seen *s = arg;
    return s[0].done && s[1].done;
}

/* Canceling one call by id ends it canceled by user; the turn beside it
 * goes on to success. */
static void test_cancel_one(void **state)
{
    env *e = *state;
    tg_runtime *rt = make_rt(e, 8, 0);
    seen s[2];
    submit(rt, &s[0], "long", "sleep", "{\"ms\": 600000}");
    submit(rt, &s[1], "short", "say", "{\"text\":\"x\"}");
    drive(rt, started_flag, &s[0], tg_test_ms(10000));
    assert_int_equal(
        tg_runtime_cancel(rt, "long", "user", "client said so", NULL), 0);
    drive(rt, two_done, s, tg_test_ms(20000));
    const tg_result *r = only_result(&s[0]);
    assert_int_equal(tg_result_outcome(r), TG_OUTCOME_CANCELED);
    assert_int_equal(tg_result_execution(r), TG_EXECUTION_STARTED);
    assert_non_null(strstr(tg_result_payload_json(r), "client said so"));
    assert_int_equal(tg_result_outcome(only_result(&s[1])), TG_OUTCOME_SUCCESS);
    tg_turn_free(s[0].turn);
    tg_turn_free(s[1].turn);
    tg_runtime_free(rt);
}

/* Freeing the runtime ends the turns still running and the ones not yet
 * admitted: each reports done, its call canceled by system. */
static void test_free_with_turns(void **state)
{
    env *e = *state;
    tg_runtime *rt = make_rt(e, 1, 1);
    seen s[3];
    submit(rt, &s[0], "a", "sleep", "{\"ms\": 600000}");
    drive(rt, started_flag, &s[0], tg_test_ms(10000));
    submit(rt, &s[1], "b", "sleep", "{\"ms\": 600000}"); /* queued */
    (void)tg_runtime_step(rt);
    submit(rt, &s[2], "c", "say", "{\"text\":\"x\"}"); /* not admitted */
    tg_runtime_free(rt);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(s[i].done, 1);
        assert_int_equal(s[i].status, 0);
        const tg_result *r = only_result(&s[i]);
        assert_int_equal(tg_result_outcome(r), TG_OUTCOME_CANCELED);
        assert_non_null(strstr(tg_result_payload_json(r), "system"));
        assert_int_equal(tg_result_execution(r),
                         i == 0 ? TG_EXECUTION_STARTED
                                : TG_EXECUTION_NOT_STARTED);
        tg_turn_free(s[i].turn);
    }
}

/* Bad arguments, an unknown tool: a result each, never a failed submit. */
static void test_bad_calls(void **state)
{
    env *e = *state;
    tg_runtime *rt = make_rt(e, 2, 0);
    seen s[4];
    submit(rt, &s[0], "m1", "say", "{\"text\": ");
    submit(rt, &s[1], "m2", "say", "[1, 2]");
    submit(rt, &s[2], "m3", "nope", "{}");
    /* not in compact form: spaces and a real */
    submit(rt, &s[3], "m4", "say", "{ \"text\" : \"1.5\", \"x\": 1.5 }");
    drive(rt, NULL, NULL, tg_test_ms(10000));
    const char *want[] = {"MALFORMED_ARGUMENTS", "MALFORMED_ARGUMENTS",
                          "UNKNOWN_TOOL", NULL};
    for (int i = 0; i < 3; i++) {
        const tg_result *r = only_result(&s[i]);
        assert_int_equal(tg_result_outcome(r), TG_OUTCOME_ERROR);
        assert_string_equal(tg_result_error_code(r), want[i]);
        assert_int_equal(s[i].started, 0);
    }
    assert_int_equal(tg_result_outcome(only_result(&s[3])), TG_OUTCOME_SUCCESS);
    assert_string_equal(tg_call_args_json(tg_turn_call(s[3].turn, 0)),
                        "{\"text\":\"1.5\",\"x\":1.5}");
    assert_null(tg_call_args_raw(tg_turn_call(s[3].turn, 0)));
    for (int i = 0; i < 4; i++)
        tg_turn_free(s[i].turn);

    /* refusals */
    tg_turn *t = NULL;
    tg_error err = {0};
    assert_int_equal(
        tg_turn_new_call("no-such-format", "x", "say", "{}", 2, &t, &err),
        TG_EINVAL);
    assert_null(t);
    assert_int_equal(tg_turn_new_call("mcp", NULL, "say", "{}", 2, &t, &err),
                     TG_EINVAL);
    seen one;
    submit(rt, &one, "dup", "say", "{\"text\":\"y\"}");
    assert_int_equal(tg_runtime_submit(rt, one.turn, &ops, &one, &err),
                     TG_EINVAL);
    assert_int_equal(tg_runtime_run_turn(rt, one.turn, &err), TG_EINVAL);
    drive(rt, NULL, NULL, tg_test_ms(10000));
    assert_int_equal(one.done, 1);
    tg_turn_free(one.turn);
    tg_runtime_free(rt);
}

static int upper(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    (void)ud;
    char out[64];
    size_t n = len < sizeof out ? len : sizeof out;
    for (size_t i = 0; i < n; i++)
        out[i] =
            (char)(args[i] >= 'a' && args[i] <= 'z' ? args[i] - 32 : args[i]);
    return tg_handler_write(ctx, out, n, NULL);
}

/* tg_runtime_flush: what a submission can finish without the runtime's
 * descriptor (an inline handler's call, a refusal) is done and journaled
 * when it returns, without a step; a command tool is started and ends
 * through the steps. */
static void test_flush(void **state)
{
    env *e = *state;
    tg_runtime *rt = make_rt(e, 2, 1);
    tg_error err = {0};
    assert_int_equal(tg_runtime_register(rt, "upper", "Upper case", NULL, upper,
                                         NULL, TG_TOOL_INLINE, &err),
                     0);
    seen s[3];
    submit(rt, &s[0], "f1", "upper", "{\"a\":\"b\"}");
    submit(rt, &s[1], "f2", "nope", "{}");
    submit(rt, &s[2], "f3", "sleep", "{\"ms\": 50}");
    assert_int_equal(tg_runtime_flush(rt), 1);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(s[i].finished, 1);
        assert_int_equal(s[i].done, 1);
        assert_int_equal(s[i].status, 0);
    }
    assert_int_equal(tg_result_outcome(only_result(&s[0])), TG_OUTCOME_SUCCESS);
    assert_string_equal(s[0].out, "{\"A\":\"B\"}");
    assert_string_equal(tg_result_error_code(only_result(&s[1])),
                        "UNKNOWN_TOOL");
    assert_int_equal(s[2].started, 1);
    assert_int_equal(s[2].done, 0);
    /* durable when `finished` came: the journal has the result already */
    char path[PATH_MAX + 32], *shown = NULL;
    snprintf(path, sizeof path, "%s/.toolgate/j.db", e->dir);
    assert_int_equal(tg_journal_show(path, "f1", &shown, &err), 0);
    assert_non_null(strstr(shown, "\"success\""));
    tg_free(shown);
    assert_int_equal(tg_runtime_flush(rt), 1); /* nothing more to do */
    drive(rt, NULL, NULL, tg_test_ms(10000));
    assert_int_equal(s[2].done, 1);
    assert_int_equal(tg_result_outcome(only_result(&s[2])), TG_OUTCOME_SUCCESS);
    for (int i = 0; i < 3; i++)
        tg_turn_free(s[i].turn);
    tg_runtime_free(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_many_turns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_with_turns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flush, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
