/* SPDX-License-Identifier: MIT */
/*
 * test_stats.c - per-tool statistics of the journal on a real file: counts
 * of calls and of each outcome, replays counted but not timed, nearest-rank
 * p50/p95 and max of duration_ms, the history filters (tool, outcome,
 * caller, since), and the public tg_journal_stats, which creates nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "jtest.h"

/* Journals one finished call of `tool` with `outcome` and `ms`. */
static void add(tg__journal *j, const char *id, const char *tool,
                const char *caller, tg_outcome outcome, double ms,
                int64_t completed_at, int replayed)
{
    tg_error err = {0};
    tg_call *c = jt_call(id, tool, "{}", caller);
    tg_result *r =
        tg__result_new(c, outcome, TG_EXECUTION_FINISHED, json_string("x"));
    assert_non_null(r);
    r->duration_ms = ms;
    r->completed_at = completed_at;
    r->replayed = replayed != 0;
    if (tg__journal_finish(j, &c, &r, 1, &err) != 0)
        fail_msg("finish: %s", err.message);
    tg__result_free(r);
    tg__call_free(c);
}

static json_t *stats(tg__journal *j, const tg_history_query *q)
{
    char *out = NULL;
    tg_error err = {0};
    if (tg__journal_stats(j, q, &out, &err) != 0)
        fail_msg("stats: %s", err.message);
    json_t *v = json_loads(out, 0, NULL); /* new ref */
    free(out);
    assert_true(json_is_array(v));
    return v;
}

static json_int_t at(const json_t *rec, const char *a, const char *b)
{
    const json_t *v = json_object_get(rec, a); /* borrowed */
    if (b != NULL)
        v = json_object_get(v, b);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

static double ms(const json_t *rec, const char *key)
{
    const json_t *v = json_object_get(json_object_get(rec, "duration_ms"), key);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static void test_counts_and_percentiles(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal *j = jt_open(f->path, NULL);
    char id[32];
    int64_t t0 = 1700000000000;
    /* "alpha": 20 calls of 1..20 ms, shuffled; every fifth an error. */
    for (int i = 0; i < 20; i++) {
        int d = (i * 7) % 20 + 1;
        snprintf(id, sizeof id, "a%d", i);
        add(j, id, "alpha", i < 10 ? "u" : NULL,
            d % 5 == 0 ? TG_OUTCOME_ERROR : TG_OUTCOME_SUCCESS, d, t0 + i, 0);
    }
    /* replays are counted, not timed */
    add(j, "a0", "alpha", "u", TG_OUTCOME_SUCCESS, 1000, t0 + 50, 1);
    /* "beta": one of each other outcome */
    add(j, "b1", "beta", NULL, TG_OUTCOME_CANCELED, 2, t0 + 100, 0);
    add(j, "b2", "beta", NULL, TG_OUTCOME_TIMEOUT, 4, t0 + 101, 0);
    add(j, "b3", "beta", NULL, TG_OUTCOME_DENIED, 0, t0 + 102, 0);
    /* "gamma": replays only */
    add(j, "g1", "gamma", NULL, TG_OUTCOME_SUCCESS, 9, t0 + 200, 1);
    /* a running call has no result: not counted */
    tg_error err = {0};
    tg_call *running = jt_call("r1", "alpha", "{}", NULL);
    assert_int_equal(tg__journal_begin(j, &running, 1, &err), 0);

    json_t *s = stats(j, NULL); /* new ref */
    assert_int_equal(json_array_size(s), 3);
    const json_t *a = json_array_get(s, 0); /* borrowed */
    assert_string_equal(json_string_value(json_object_get(a, "tool")), "alpha");
    assert_int_equal(at(a, "calls", NULL), 21);
    assert_int_equal(at(a, "replayed", NULL), 1);
    assert_int_equal(at(a, "outcomes", "success"), 17);
    assert_int_equal(at(a, "outcomes", "error"), 4);
    assert_int_equal(at(a, "outcomes", "timeout"), 0);
    /* nearest rank over 1..20: p50 the 10th, p95 the 19th */
    assert_true(ms(a, "p50") == 10);
    assert_true(ms(a, "p95") == 19);
    assert_true(ms(a, "max") == 20);
    const json_t *b = json_array_get(s, 1); /* borrowed */
    assert_int_equal(at(b, "calls", NULL), 3);
    assert_int_equal(at(b, "outcomes", "canceled"), 1);
    assert_int_equal(at(b, "outcomes", "timeout"), 1);
    assert_int_equal(at(b, "outcomes", "denied"), 1);
    assert_true(ms(b, "p50") == 2); /* ceil(1.5) = 2nd of 0, 2, 4 */
    assert_true(ms(b, "p95") == 4);
    assert_true(ms(b, "max") == 4);
    const json_t *g = json_array_get(s, 2); /* borrowed */
    assert_int_equal(at(g, "calls", NULL), 1);
    assert_true(json_is_null(json_object_get(g, "duration_ms")));
    json_decref(s);

    /* filters */
    tg_history_query q = {.tool = "beta"};
    s = stats(j, &q);
    assert_int_equal(json_array_size(s), 1);
    json_decref(s);
    q = (tg_history_query){.caller = "u"};
    s = stats(j, &q);
    assert_int_equal(json_array_size(s), 1);
    assert_int_equal(at(json_array_get(s, 0), "calls", NULL), 11);
    /* (i * 7) % 20 + 1 for i < 10: 1 8 15 2 9 16 3 10 17 4 */
    assert_true(ms(json_array_get(s, 0), "max") == 17);
    assert_true(ms(json_array_get(s, 0), "p50") == 8);
    json_decref(s);
    q = (tg_history_query){.outcome = "error"};
    s = stats(j, &q);
    assert_int_equal(json_array_size(s), 1);
    assert_int_equal(at(json_array_get(s, 0), "calls", NULL), 4);
    assert_true(ms(json_array_get(s, 0), "p50") == 10);
    json_decref(s);
    q = (tg_history_query){.since = "1700000000.100"};
    s = stats(j, &q);
    assert_int_equal(json_array_size(s), 2);
    json_decref(s);

    char *out = NULL;
    q = (tg_history_query){.outcome = "meh"};
    assert_int_equal(tg__journal_stats(j, &q, &out, &err), TG_EINVAL);
    assert_null(out);
    q = (tg_history_query){.since = "yesterday"};
    assert_int_equal(tg__journal_stats(j, &q, &out, &err), TG_EINVAL);
    assert_non_null(strstr(err.message, "yesterday"));
    tg__call_free(running);
    tg__journal_close(j);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The percentiles against a sort, over shapes a selection can trip on:
 * random with duplicates, sorted, reversed, all equal, sizes 1 to 1000. */
static void test_percentiles_against_sort(void **state)
{
    struct jt_fixture *f = *state;
    static const int sizes[] = {1, 2, 3, 19, 20, 21, 100, 1000};
    tg__journal *j = jt_open(f->path, NULL);
    char tool[32], id[48];
    unsigned seed = 12345;
    int tools = 0;
    double *want[4 * 8];
    int wantn[4 * 8];
    for (int shape = 0; shape < 4; shape++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            int n = sizes[si];
            snprintf(tool, sizeof tool, "t%02d", tools);
            double *v = malloc((size_t)n * sizeof *v);
            assert_non_null(v);
            for (int i = 0; i < n; i++) {
                seed = seed * 1103515245u + 12345u;
                double d = shape == 0   ? (double)((seed >> 8) % 50) / 4
                           : shape == 1 ? i * 0.5
                           : shape == 2 ? (n - i) * 0.5
                                        : 7.25;
                v[i] = d;
                snprintf(id, sizeof id, "%s-%d", tool, i);
                add(j, id, tool, NULL, TG_OUTCOME_SUCCESS, d, 1, 0);
            }
            qsort(v, (size_t)n, sizeof *v, cmp_double);
            want[tools] = v;
            wantn[tools] = n;
            tools++;
        }
    }
    json_t *s = stats(j, NULL); /* new ref */
    assert_int_equal(json_array_size(s), tools);
    for (int t = 0; t < tools; t++) {
        const json_t *rec = json_array_get(s, (size_t)t); /* borrowed */
        int n = wantn[t];
        assert_int_equal(at(rec, "calls", NULL), n);
        assert_true(ms(rec, "p50") == want[t][(n + 1) / 2 - 1]);
        assert_true(ms(rec, "p95") == want[t][(95 * n + 99) / 100 - 1]);
        assert_true(ms(rec, "max") == want[t][n - 1]);
        free(want[t]);
    }
    json_decref(s);
    tg__journal_close(j);
}

static void test_public_api(void **state)
{
    struct jt_fixture *f = *state;
    tg_error err = {0};
    char *out = NULL;
    assert_int_equal(tg_journal_stats(f->path, NULL, &out, &err), 0);
    assert_string_equal(out, "[]");
    tg_free(out);
    struct stat sb;
    assert_int_equal(stat(f->path, &sb), -1); /* nothing created */
    tg__journal *j = jt_open(f->path, NULL);
    add(j, "x1", "echo", NULL, TG_OUTCOME_SUCCESS, 3, 1700000000000, 0);
    tg__journal_close(j);
    assert_int_equal(tg_journal_stats(f->path, NULL, &out, &err), 0);
    json_t *s = json_loads(out, 0, NULL); /* new ref */
    tg_free(out);
    assert_int_equal(json_array_size(s), 1);
    assert_true(ms(json_array_get(s, 0), "p95") == 3);
    json_decref(s);
    assert_int_equal(tg_journal_stats(f->path, NULL, NULL, &err), TG_EINVAL);
}

/* The durations of the statistics leave in milliseconds to the
 * microsecond (the journal keeps the clock's values). */
static void test_times_to_the_microsecond(void **state)
{
    struct jt_fixture *f = *state;
    tg__journal *j = jt_open(f->path, NULL);
    add(j, "d1", "delta", NULL, TG_OUTCOME_SUCCESS, 41.142023, 1, 0);
    add(j, "d2", "delta", NULL, TG_OUTCOME_SUCCESS, 151.96020899999999, 2, 0);
    add(j, "d3", "delta", NULL, TG_OUTCOME_SUCCESS, 9.3319150000000004, 3, 0);
    add(j, "e1", "\"q\"\x01", NULL, TG_OUTCOME_SUCCESS, 7, 4, 0);
    char *out = NULL;
    tg_error err = {0};
    assert_int_equal(tg__journal_stats(j, NULL, &out, &err), 0);
    assert_string_equal(
        out, "[{\"tool\":\"\\\"q\\\"\\u0001\",\"calls\":1,\"outcomes\":{"
             "\"success\":1,\"error\":0,\"canceled\":0,\"timeout\":0,"
             "\"denied\":0},\"replayed\":0,\"duration_ms\":{\"p50\":7.0,"
             "\"p95\":7.0,\"max\":7.0}},"
             "{\"tool\":\"delta\",\"calls\":3,\"outcomes\":{\"success\":3,"
             "\"error\":0,\"canceled\":0,\"timeout\":0,\"denied\":0},"
             "\"replayed\":0,\"duration_ms\":{\"p50\":41.142,\"p95\":151.96,"
             "\"max\":151.96}}]");
    free(out);
    tg__journal_close(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_counts_and_percentiles, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_times_to_the_microsecond, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_percentiles_against_sort, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_public_api, jt_setup, jt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
