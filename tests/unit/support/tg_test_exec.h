/* SPDX-License-Identifier: MIT */
/*
 * tg_test_exec.h - what the runtime's unit tests (tests/unit/exec) share on
 * top of tg_test.h: a configuration and a runtime from JSON text, adding
 * calls to a turn, running it, what one call costs here and now, the
 * per-test state of tests that run the fixture programs.
 * Header-only; it needs cmocka and the exec layer's internal headers, so
 * only tests that link tg_exec include it.
 * A failure here fails the test, saying what the library said.
 */
#ifndef TG_TEST_EXEC_H
#define TG_TEST_EXEC_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "record.h"
#include "runtime.h"
#include "tg_test.h"
#include "toolgate.h"
#include "turn.h"

/* What the tests that run the fixture programs (tests/fixtures) keep per
 * test: a temporary directory and where the fixtures were built. */
typedef struct tg_test_fx_env {
    char dir[PATH_MAX]; /* first: tg_test_dir_setup makes it */
    const char *fx;     /* $TG_FIXTURES */
} tg_test_fx_env;

/* A cmocka setup: a tg_test_fx_env in *state with a fresh directory named
 * after prefix; -1 when $TG_FIXTURES is not set (outside ctest), saying so.
 * tg_test_dir_teardown undoes it. */
static inline int tg_test_fx_setup(void **state, const char *prefix)
{
    const char *fx = getenv("TG_FIXTURES");
    if (fx == NULL) {
        fprintf(stderr, "TG_FIXTURES is not set (run under ctest)\n");
        return -1;
    }
    if (tg_test_dir_setup(state, sizeof(tg_test_fx_env), prefix) != 0)
        return -1;
    ((tg_test_fx_env *)*state)->fx = fx;
    return 0;
}

/* A configuration loaded from JSON text (relative paths against dir, which
 * may be NULL); fails the test when it does not load. */
static inline tg_config *tg_test_config(const char *text, const char *dir)
{
    tg_config *cfg = tg_config_new();
    assert_non_null(cfg);
    tg_error err = {0};
    if (tg_config_load(cfg, text, strlen(text), dir, &err) != 0)
        fail_msg("config: %s\n%s", err.message, text);
    return cfg;
}

/* A runtime made from cfg, which it frees; fails the test when it cannot
 * be made. */
static inline tg_runtime *tg_test_runtime_of(tg_config *cfg)
{
    tg_runtime *rt = NULL;
    tg_error err = {0};
    if (tg_runtime_new(cfg, &rt, &err) != 0)
        fail_msg("runtime: %s", err.message);
    tg_config_free(cfg);
    return rt;
}

/* A runtime of the configuration in JSON text (see tg_test_config). */
static inline tg_runtime *tg_test_runtime(const char *text, const char *dir)
{
    return tg_test_runtime_of(tg_test_config(text, dir));
}

/* Adds a toolgate-format call `id` of `tool` with JSON arguments to t. */
static inline void tg_test_add(tg_turn *t, const char *id, const char *tool,
                               const char *args)
{
    tg_call *c = tg__call_new(id, tool, "toolgate");
    assert_non_null(c);
    assert_int_equal(tg__call_set_args_text(c, args, strlen(args)), 0);
    assert_int_equal(tg__turn_add_call(t, c), 0);
}

/* Runs turn t on rt; fails the test when the turn fails or leaves a call
 * without a result. */
static inline void tg_test_run(tg_runtime *rt, tg_turn *t)
{
    tg_error err = {0};
    if (tg_runtime_run_turn(rt, t, &err) != 0)
        fail_msg("run_turn: %s", err.message);
    for (size_t i = 0; i < tg_turn_call_count(t); i++)
        assert_non_null(tg_turn_result(t, i));
}

/* The result of call i of t; fails the test when it has none. */
static inline const tg_result *tg_test_res(const tg_turn *t, size_t i)
{
    const tg_result *r = tg_turn_result(t, i);
    assert_non_null(r);
    return r;
}

/* What a failed command printed on `stream` ("stdout" or "stderr") as its
 * result carries it (tg__result_output_part), borrowed from the result;
 * NULL when it carries nothing there. */
static inline const char *tg_test_printed(const tg_result *r,
                                          const char *stream)
{
    return json_string_value(
        json_object_get(tg__result_output_part(r), stream));
}

/* What one call of `tool` with JSON `args` costs on rt here and now, in ms
 * (rounded up): the most of three turns of it, each of which must succeed;
 * said on stderr as "<what> costs N ms here". Tests size the deadlines a
 * tool must beat from it, so a slow or busy machine gets room in
 * proportion (README, "Tests"). */
static inline long tg_test_call_cost_ms(tg_runtime *rt, const char *tool,
                                        const char *args, const char *what)
{
    double most = 0;
    for (int i = 0; i < 3; i++) {
        tg_turn *t = tg__turn_new("toolgate");
        tg_test_add(t, "cost", tool, args);
        double t0 = tg_test_now_ms();
        tg_test_run(rt, t);
        double took = tg_test_now_ms() - t0;
        const tg_result *r = tg_test_res(t, 0);
        if (tg_result_outcome(r) != TG_OUTCOME_SUCCESS)
            fail_msg("%s: %s", what, tg_result_payload_json(r));
        if (took > most)
            most = took;
        tg_turn_free(t);
    }
    fprintf(stderr, "    %s costs %.1f ms here\n", what, most);
    return (long)most + 1;
}

#endif
