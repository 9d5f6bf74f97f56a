/* SPDX-License-Identifier: MIT */
/*
 * test_spawn_pool.c - command tools spawn on libuv's thread pool while other
 * calls run. A spawn still waiting for a pool thread when its deadline
 * passes or it is canceled never runs: it ends timeout / canceled with
 * execution "not_started", and the rest of the turn is unaffected.
 *
 * Nothing here waits a fixed time: the handlers hold the pool until the
 * queued spawns have their results, and the cancel comes once the pool is
 * full; the deadline (a scaled 1 s) only has to outlast that cancel.
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

#include "tg_test.h"
#include "toolgate.h"

/* What the turn's events tell the handlers and the canceler. */
typedef struct watch {
    atomic_int hogs_started; /* handlers holding a pool thread */
    atomic_int queued_done;  /* results of "late" and "gone" */
} watch;

static void on_started(void *ud, const tg_call *call)
{
    watch *w = ud;
    if (strncmp(tg_call_id(call), "h", 1) == 0)
        atomic_fetch_add(&w->hogs_started, 1);
}

static void on_finished(void *ud, const tg_call *call, const tg_result *res)
{
    (void)res;
    watch *w = ud;
    if (strcmp(tg_call_id(call), "late") == 0 ||
        strcmp(tg_call_id(call), "gone") == 0)
        atomic_fetch_add(&w->queued_done, 1);
}

/* Waits until *v reaches n, at most a scaled 30 s; whether it did. */
static int wait_count(atomic_int *v, int n)
{
    double end = tg_test_now_ms() + (double)tg_test_ms(30000);
    while (atomic_load(v) < n)
        if (tg_test_now_ms() > end)
            return 0;
        else
            tg_test_sleep_ms(5);
    return 1;
}

/* Holds a pool thread until its call is stopped and both queued spawns
 * have their results, so the pool stays full while their deadline passes
 * and their cancel comes. */
static int hog(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    (void)args;
    (void)len;
    watch *w = ud;
    while (!tg_handler_canceled(ctx))
        tg_test_sleep_ms(5);
    wait_count(&w->queued_done, 2);
    return 0;
}

typedef struct canceler {
    tg_runtime *rt;
    watch *w;
    const char *id;
} canceler;

/* Cancels c->id once the four handlers fill the pool. */
static void *cancel_when_full(void *arg)
{
    canceler *c = arg;
    wait_count(&c->w->hogs_started, 4);
    tg_runtime_cancel(c->rt, c->id, "user", "changed my mind", NULL);
    return NULL;
}

static void queued_spawns_never_run(void **state)
{
    (void)state;
    char cfgtext[512], want[64];
    long budget = tg_test_ms(1000);
    snprintf(cfgtext, sizeof cfgtext,
             "{\"journal\": null, \"builtin_tools\": [], \"limits\": "
             "{\"parallel\": 8, \"timeout_ms\": %ld}, \"tools\": [{\"name\": "
             "\"sleep\", \"command\": [\"/bin/sleep\", \"{s}\"]}]}",
             budget);
    const char *turn_text =
        "{\"id\":\"h1\",\"tool\":\"hog\"}\n{\"id\":\"h2\",\"tool\":\"hog\"}\n"
        "{\"id\":\"h3\",\"tool\":\"hog\"}\n{\"id\":\"h4\",\"tool\":\"hog\"}\n"
        "{\"id\":\"late\",\"tool\":\"sleep\",\"args\":{\"s\":\"5\"}}\n"
        "{\"id\":\"gone\",\"tool\":\"sleep\",\"args\":{\"s\":\"5\"}}\n";
    tg_error err = {0};
    tg_config *cfg = tg_config_new();
    tg_runtime *rt = NULL;
    tg_turn *turn = NULL;
    assert_non_null(cfg);
    assert_int_equal(tg_config_load(cfg, cfgtext, strlen(cfgtext), NULL, &err),
                     0);
    assert_int_equal(tg_runtime_new(cfg, &rt, &err), 0);
    watch w = {0, 0};
    static const tg_events events = {NULL, on_started, NULL, on_finished};
    tg_runtime_set_events(rt, &events, &w);
    assert_int_equal(tg_runtime_register(rt, "hog", "holds a pool thread", NULL,
                                         hog, &w, 0, &err),
                     0);
    assert_int_equal(tg_turn_parse(turn_text, strlen(turn_text), "toolgate",
                                   "test", &turn, &err),
                     0);
    canceler c = {rt, &w, "gone"};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, cancel_when_full, &c), 0);
    assert_int_equal(tg_runtime_run_turn(rt, turn, &err), 0);
    pthread_join(th, NULL);

    for (size_t i = 0; i < 4; i++) {
        const tg_result *r = tg_turn_result(turn, i);
        assert_non_null(r);
        assert_int_equal(tg_result_outcome(r), TG_OUTCOME_TIMEOUT);
        assert_int_equal(tg_result_execution(r), TG_EXECUTION_STARTED);
    }
    const tg_result *late = tg_turn_result(turn, 4);
    assert_int_equal(tg_result_outcome(late), TG_OUTCOME_TIMEOUT);
    assert_int_equal(tg_result_execution(late), TG_EXECUTION_NOT_STARTED);
    snprintf(want, sizeof want, "{\"timeout\":{\"durationMs\":%ld}}", budget);
    assert_string_equal(tg_result_payload_json(late), want);
    const tg_result *gone = tg_turn_result(turn, 5);
    assert_int_equal(tg_result_outcome(gone), TG_OUTCOME_CANCELED);
    assert_int_equal(tg_result_execution(gone), TG_EXECUTION_NOT_STARTED);
    assert_non_null(strstr(tg_result_payload_json(gone), "changed my mind"));

    tg_turn_free(turn);
    tg_runtime_free(rt);
    tg_config_free(cfg);
}

/* With the pool free, many spawns overlap and all succeed. */
static void parallel_spawns_succeed(void **state)
{
    (void)state;
    const char *cfgtext = "{\"journal\": null, \"builtin_tools\": [], "
                          "\"tools\": [{\"name\": \"echo\", \"command\": "
                          "[\"/bin/echo\", \"{t}\"]}]}";
    char text[64 * 64];
    size_t len = 0;
    for (int i = 0; i < 64; i++)
        len += (size_t)snprintf(
            text + len, sizeof text - len,
            "{\"id\":\"e%d\",\"tool\":\"echo\",\"args\":{\"t\":\"n%d\"}}\n", i,
            i);
    tg_error err = {0};
    tg_config *cfg = tg_config_new();
    tg_runtime *rt = NULL;
    tg_turn *turn = NULL;
    assert_int_equal(tg_config_load(cfg, cfgtext, strlen(cfgtext), NULL, &err),
                     0);
    assert_int_equal(tg_runtime_new(cfg, &rt, &err), 0);
    assert_int_equal(tg_turn_parse(text, len, "toolgate", "t", &turn, &err), 0);
    assert_int_equal(tg_runtime_run_turn(rt, turn, &err), 0);
    for (int i = 0; i < 64; i++) {
        char want[32];
        snprintf(want, sizeof want, "\"n%d\\n\"", i);
        const tg_result *r = tg_turn_result(turn, (size_t)i);
        assert_int_equal(tg_result_outcome(r), TG_OUTCOME_SUCCESS);
        assert_string_equal(tg_result_payload_json(r), want);
    }
    tg_turn_free(turn);
    tg_runtime_free(rt);
    tg_config_free(cfg);
}

int main(void)
{
    /* The test relies on libuv's default pool of four threads. */
    setenv("UV_THREADPOOL_SIZE", "4", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queued_spawns_never_run),
        cmocka_unit_test(parallel_spawns_succeed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
