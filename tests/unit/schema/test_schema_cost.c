/* SPDX-License-Identifier: MIT */
/*
 * test_schema_cost.c - validation has a bounded cost. Shapes that are
 * exponential without memoization (the recursive oneOf of issue 14 at 28
 * levels, anyOf/allOf/if/not over $ref chains, annotations collected
 * through shared subschemas for unevaluatedProperties, $dynamicRef and
 * $recursiveRef recursion) end in a number of steps that grows with the
 * depth, not with 2^depth, and with the verdict memoization off gives
 * where that is affordable; a reused failure is reported once. The step
 * budget ends a costly validation with TG_ELIMIT, spends across the
 * validations that share it, and the stop flag ends one with TG_ECANCELED
 * from another thread. Catastrophic regexes in pattern and
 * patternProperties end with TG_ELIMIT naming the pattern and where, never
 * as "no match". The memo table itself: growth, bounds, scope ids.
 *
 * Costs are asserted in steps (the budget's own count), which do not
 * depend on the machine; times are printed for information only.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "schema.h"

/* ------------------------------------------------------------ helpers */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static tg_schema *compile_draft(const char *text, tg_schema_draft draft)
{
    tg_schema_options opt;
    memset(&opt, 0, sizeof opt);
    opt.draft = draft;
    tg_schema *s = NULL;
    tg_error err;
    memset(&err, 0, sizeof err);
    if (tg_schema_compile(text, strlen(text), &opt, &s, &err) != 0)
        fail_msg("compile failed: %s: %.300s", err.message, text);
    return s;
}

static tg_schema *compile_ok(const char *text)
{
    return compile_draft(text, TG_SCHEMA_DRAFT_2020_12);
}

typedef struct outcome {
    int rc;          /* the verdict or a TG_E* code */
    uint64_t steps;  /* steps spent */
    size_t nviol;    /* violations, when reported */
    char first[512]; /* the first violation's message, or the error */
    double ms;
} outcome;

/* Validates instance (JSON text) with memoization `memo`, a budget of
 * `steps` (0: the default) and a report when `report`. */
static outcome run(const tg_schema *s, const char *instance, int memo,
                   uint64_t steps, int report)
{
    tg__jtape t;
    assert_int_equal(tg__jtape_parse(instance, strlen(instance),
                                     TG_JTAPE_ALLOW_NUL, &t, NULL),
                     0);
    tg__schema_budget b;
    tg__schema_budget_init(&b, steps, NULL);
    b.memo = memo;
    tg__schema_report rep;
    memset(&rep, 0, sizeof rep);
    tg_error err;
    memset(&err, 0, sizeof err);
    outcome o;
    memset(&o, 0, sizeof o);
    double t0 = now_ms();
    o.rc =
        tg__schema_validate_tape_in(s, &t, 0, report ? &rep : NULL, &b, &err);
    o.ms = now_ms() - t0;
    o.steps = b.limit - b.steps;
    o.nviol = rep.n;
    if (o.rc < 0)
        snprintf(o.first, sizeof o.first, "%s", err.message);
    else if (rep.n > 0)
        snprintf(o.first, sizeof o.first, "%s", rep.v[0].message);
    assert_true(o.rc < 0 || !b.exhausted);
    tg__schema_report_cleanup(&rep);
    tg__jtape_free(&t);
    return o;
}

/* Replaces each '@' of fmt with next (appending to b). */
static void put_with(tg__buf *b, const char *fmt, const char *next)
{
    for (const char *p = fmt; *p; p++) {
        if (*p == '@')
            tg__buf_puts(b, next);
        else
            tg__buf_append(b, p, 1);
    }
}

/* A chain of `depth` definitions a0..a{depth-1}, each `body` with '@'
 * standing for the next one's "$ref" target ("#/$defs/a{k+1}"), ending in
 * the definition a{depth} = leaf; the root is {"$ref":"#/$defs/a0"} plus
 * `extra` members (may be ""). Caller frees. */
static char *chain(const char *body, const char *leaf, int depth,
                   const char *extra)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    tg__buf_puts(&b, "{\"$ref\":\"#/$defs/a0\"");
    tg__buf_puts(&b, extra);
    tg__buf_puts(&b, ",\"$defs\":{");
    for (int k = 0; k < depth; k++) {
        char next[32];
        snprintf(next, sizeof next, "#/$defs/a%d", k + 1);
        tg__buf_printf(&b, "\"a%d\":", k);
        put_with(&b, body, next);
        tg__buf_puts(&b, ",");
    }
    tg__buf_printf(&b, "\"a%d\":%s}}", depth, leaf);
    return tg__buf_take(&b);
}

/* The same verdict with memoization always on, lazy (the default) and
 * off, with and without a report; the report has violations exactly when
 * the instance is invalid, and a memoized report no more than the plain
 * one (a failure reused is reported once). */
static void same_verdict(const tg_schema *s, const char *instance, int want)
{
    outcome plain = run(s, instance, TG_SCHEMA_MEMO_OFF, 0, 0);
    outcome plain_r = run(s, instance, TG_SCHEMA_MEMO_OFF, 0, 1);
    static const int modes[] = {TG_SCHEMA_MEMO_ALWAYS, TG_SCHEMA_MEMO_LAZY};
    for (size_t m = 0; m < 2; m++) {
        outcome q = run(s, instance, modes[m], 0, 0);
        outcome r = run(s, instance, modes[m], 0, 1);
        if (q.rc != want || r.rc != want || plain.rc != want ||
            plain_r.rc != want)
            fail_msg("mode %d: want %d, memo %d/%d, plain %d/%d (%s) on %.200s",
                     modes[m], want, q.rc, r.rc, plain.rc, plain_r.rc, r.first,
                     instance);
        assert_true(want == 1 ? r.nviol == 0 : r.nviol > 0);
        assert_true(r.nviol <= plain_r.nviol);
        assert_true(q.steps <= plain.steps + 8);
    }
}

/* --------------------------------------------- the example of issue 14 */

static const char tree_schema[] =
    "{\"$ref\":\"#/$defs/node\",\"$defs\":{\"node\":{\"type\":\"object\","
    "\"oneOf\":["
    "{\"required\":[\"name\"],\"properties\":{\"name\":{\"type\":\"string\"},"
    "\"children\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/node\"}}}},"
    "{\"required\":[\"id\"],\"properties\":{\"id\":{\"type\":\"string\"},"
    "\"children\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/node\"}}}}"
    "]}}}";

/* A chain of nested nodes: each {"name":"n","id":"i","children":[...]}
 * (both branches of the oneOf match it, with their children), the leaf
 * `leaf`. */
static char *tree_instance(int depth, const char *node_members,
                           const char *leaf)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    for (int k = 0; k < depth; k++)
        tg__buf_printf(&b, "{%s,\"children\":[", node_members);
    tg__buf_puts(&b, leaf);
    for (int k = 0; k < depth; k++)
        tg__buf_puts(&b, "]}");
    return tg__buf_take(&b);
}

/* same_verdict over tree_instance(depth, members, leaf). */
static void tree_verdict(const tg_schema *s, int depth, const char *members,
                         const char *leaf, int want)
{
    char *inst = tree_instance(depth, members, leaf);
    same_verdict(s, inst, want);
    free(inst);
}

/* run over tree_instance(depth, members, leaf), memoization lazy. */
static outcome tree_run(const tg_schema *s, int depth, const char *members,
                        const char *leaf, int report)
{
    char *inst = tree_instance(depth, members, leaf);
    outcome o = run(s, inst, TG_SCHEMA_MEMO_LAZY, 0, report);
    free(inst);
    return o;
}

static void test_recursive_oneof(void **state)
{
    (void)state;
    tg_schema *s = compile_ok(tree_schema);
    /* Every node matches both branches: the leaf fails oneOf (two
     * matches), so every parent's branches fail (zero matches), level by
     * level up to the root. 1.2 KB of arguments. */
    char *both = tree_instance(28, "\"name\":\"node\",\"id\":\"n1\"",
                               "{\"name\":\"node\",\"id\":\"n1\"}");
    printf("the instance: %zu bytes\n", strlen(both));
    assert_true(strlen(both) > 1100 && strlen(both) < 1300);
    outcome q = run(s, both, TG_SCHEMA_MEMO_LAZY, 0, 0);
    outcome r = run(s, both, TG_SCHEMA_MEMO_LAZY, 0, 1);
    printf("recursive oneOf, 28 levels: %d in %llu steps, %.3f ms "
           "(with the report: %llu steps, %.3f ms)\n",
           q.rc, (unsigned long long)q.steps, q.ms, (unsigned long long)r.steps,
           r.ms);
    assert_int_equal(q.rc, 0);
    assert_int_equal(r.rc, 0);
    /* 2^28 subschema evaluations before; now a first chunk of steps and
     * then a few per level. */
    assert_true(q.steps < 4096 + 28 * 64);
    assert_true(r.steps < 4096 + 28 * 128);
    assert_int_equal(r.nviol, 1);
    assert_string_equal(r.first, "value must match exactly one of the 2 "
                                 "schemas in oneOf, matched 0");
    outcome a = run(s, both, TG_SCHEMA_MEMO_ALWAYS, 0, 0);
    assert_int_equal(a.rc, 0);
    assert_true(a.steps < 28 * 64);
    /* Without memoization the same instance spends the default budget. */
    outcome p = run(s, both, TG_SCHEMA_MEMO_OFF, 1000000, 0);
    assert_int_equal(p.rc, TG_ELIMIT);
    /* The verdicts agree with the plain evaluation where it is
     * affordable, for nodes matching both branches, one, or none. */
    for (int depth = 0; depth <= 10; depth++) {
        tree_verdict(s, depth, "\"name\":\"n\",\"id\":\"i\"",
                     "{\"name\":\"n\",\"id\":\"i\"}", 0);
        tree_verdict(s, depth, "\"name\":\"n\"", "{\"id\":\"i\"}", 1);
        tree_verdict(s, depth, "\"name\":\"n\"", "{\"id\":7}", 0);
    }
    /* Exactly one branch at every level, 28 deep: valid (the branch that
     * fails on `required` still evaluates the children first). */
    outcome v = tree_run(s, 28, "\"id\":\"i\"", "{\"name\":\"n\"}", 1);
    assert_int_equal(v.rc, 1);
    assert_true(v.steps < 4096 + 28 * 64);
    free(both);
    tg_schema_free(s);
}

/* ------------------------------------------------- other exponential shapes */

typedef struct shape {
    const char *name;
    const char *body; /* '@': the next definition */
    const char *leaf;
    const char *extra; /* root members beside the $ref */
    const char *instance;
    int want;
} shape;

static const shape shapes[] = {
    {"anyOf of two refs, every branch failing",
     "{\"anyOf\":[{\"$ref\":\"@\"},{\"$ref\":\"@\"}]}", "{\"type\":\"string\"}",
     "", "1", 0},
    {"allOf of two refs, all passing",
     "{\"allOf\":[{\"$ref\":\"@\"},"
     "{\"$ref\":\"@\"}]}",
     "{\"type\":\"integer\"}", "", "1", 1},
    {"allOf of two refs, the leaf failing (reported once)",
     "{\"allOf\":[{\"$ref\":\"@\"},{\"$ref\":\"@\"}]}", "{\"type\":\"string\"}",
     "", "1", 0},
    {"oneOf of the same ref twice",
     "{\"oneOf\":[{\"$ref\":\"@\"},"
     "{\"$ref\":\"@\",\"minimum\":0}]}",
     "{\"type\":\"integer\"}", "", "1", 0},
    {"$ref beside not/not of the same ref",
     "{\"$ref\":\"@\",\"not\":{\"not\":{\"$ref\":\"@\"}}}",
     "{\"type\":\"integer\"}", "", "1", 1},
    {"if/then/else all to the next",
     "{\"if\":{\"$ref\":\"@\"},\"then\":{"
     "\"$ref\":\"@\"},\"else\":{\"$ref\":\"@\"}}",
     "{\"type\":\"integer\"}", "", "1", 1},
    {"dependentSchemas and allOf to the next",
     "{\"dependentSchemas\":{\"a\":{\"$ref\":\"@\"}},\"allOf\":[{\"$ref\":"
     "\"@\"}]}",
     "{\"required\":[\"b\"]}", "", "{\"a\":1}", 0},
    {"unevaluatedProperties over shared annotated subschemas (valid)",
     "{\"allOf\":[{\"$ref\":\"@\"},{\"$ref\":\"@\"}]}",
     "{\"properties\":{\"x\":true}}", ",\"unevaluatedProperties\":false",
     "{\"x\":1}", 1},
    {"unevaluatedProperties over shared annotated subschemas (invalid)",
     "{\"anyOf\":[{\"$ref\":\"@\"},{\"$ref\":\"@\"}]}",
     "{\"properties\":{\"x\":true}}", ",\"unevaluatedProperties\":false",
     "{\"x\":1,\"y\":2}", 0},
    {"unevaluatedItems over shared annotated subschemas (valid)",
     "{\"anyOf\":[{\"$ref\":\"@\"},{\"$ref\":\"@\"}]}",
     "{\"prefixItems\":[true]}", ",\"unevaluatedItems\":false", "[1]", 1},
    {"unevaluatedItems over shared annotated subschemas (invalid)",
     "{\"anyOf\":[{\"$ref\":\"@\"},{\"$ref\":\"@\"}]}",
     "{\"prefixItems\":[true]}", ",\"unevaluatedItems\":false", "[1,2]", 0},
};

static void test_exponential_shapes(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const shape *sh = &shapes[k];
        /* Small: the plain evaluation is affordable and must agree. */
        for (int depth = 1; depth <= 8; depth++) {
            char *text = chain(sh->body, sh->leaf, depth, sh->extra);
            tg_schema *s = compile_ok(text);
            same_verdict(s, sh->instance, sh->want);
            tg_schema_free(s);
            free(text);
        }
        /* 40 levels: 2^40 evaluations without memoization. */
        char *text = chain(sh->body, sh->leaf, 40, sh->extra);
        tg_schema *s = compile_ok(text);
        outcome q = run(s, sh->instance, TG_SCHEMA_MEMO_LAZY, 0, 0);
        outcome r = run(s, sh->instance, TG_SCHEMA_MEMO_LAZY, 0, 1);
        printf("%s, 40 levels: %d in %llu steps (%.3f ms), reported in %llu "
               "steps, %zu violation(s)\n",
               sh->name, q.rc, (unsigned long long)q.steps, q.ms,
               (unsigned long long)r.steps, r.nviol);
        if (q.rc != sh->want || r.rc != sh->want)
            fail_msg("%s: want %d, got %d / %d (%s)", sh->name, sh->want, q.rc,
                     r.rc, r.first);
        assert_true(q.steps < 4096 + 40 * 64);
        assert_true(r.steps < 4096 + 40 * 128);
        if (sh->want == 0)
            assert_true(r.nviol >= 1 && r.nviol <= 4);
        /* (with the report: a failing allOf is cheap for the verdict) */
        outcome p = run(s, sh->instance, TG_SCHEMA_MEMO_OFF, 200000, 1);
        assert_int_equal(p.rc, TG_ELIMIT);
        tg_schema_free(s);
        free(text);
    }
}

/* -------------------------------------------------- the dynamic scope */

/* A tree of $dynamicRef recursion with two branches, and an extension of
 * it that forbids unevaluated properties through the dynamic anchor: the
 * verdict of the same subschema at the same place differs between the two
 * scopes, and memoization keeps them apart. */
static const char dyn_schema_fmt[] =
    "{\"$ref\":\"%s\",\"$defs\":{"
    "\"tree\":{\"$id\":\"https://example.com/tree\",\"$dynamicAnchor\":"
    "\"node\",\"type\":\"object\",\"anyOf\":["
    "{\"required\":[\"a\"],\"properties\":{\"a\":true,\"children\":{"
    "\"type\":\"array\",\"items\":{\"$dynamicRef\":\"#node\"}}}},"
    "{\"required\":[\"b\"],\"properties\":{\"b\":true,\"children\":{"
    "\"type\":\"array\",\"items\":{\"$dynamicRef\":\"#node\"}}}}]},"
    "\"strict\":{\"$id\":\"https://example.com/strict\",\"$dynamicAnchor\":"
    "\"node\",\"$ref\":\"tree\",\"unevaluatedProperties\":false}}}";

static void test_dynamic_scope(void **state)
{
    (void)state;
    char text[2048];
    snprintf(text, sizeof text, dyn_schema_fmt, "https://example.com/tree");
    tg_schema *tree = compile_ok(text);
    snprintf(text, sizeof text, dyn_schema_fmt, "https://example.com/strict");
    tg_schema *strict = compile_ok(text);
    assert_true(tree->dynamic && strict->dynamic);
    const char *ab = "\"a\":1,\"b\":2";
    for (int depth = 0; depth <= 8; depth++) {
        /* valid in both; an extra member deep down: valid under tree
         * only; a bad leaf: invalid in both (both branches fail every
         * level: exponential without memoization) */
        tree_verdict(tree, depth, ab, "{\"a\":1}", 1);
        tree_verdict(strict, depth, ab, "{\"a\":1}", 1);
        tree_verdict(tree, depth, ab, "{\"a\":1,\"x\":3}", 1);
        tree_verdict(strict, depth, ab, "{\"a\":1,\"x\":3}", 0);
        tree_verdict(tree, depth, ab, "{}", 0);
        tree_verdict(strict, depth, ab, "{}", 0);
    }
    outcome t = tree_run(tree, 30, ab, "{}", 1);
    outcome u = tree_run(strict, 30, ab, "{}", 1);
    outcome w = tree_run(strict, 30, ab, "{\"a\":1,\"x\":3}", 1);
    printf("$dynamicRef tree, 30 levels: %d in %llu steps; strict: %d in "
           "%llu steps; strict, extra member: %d in %llu steps\n",
           t.rc, (unsigned long long)t.steps, u.rc, (unsigned long long)u.steps,
           w.rc, (unsigned long long)w.steps);
    assert_int_equal(t.rc, 0);
    assert_int_equal(u.rc, 0);
    assert_int_equal(w.rc, 0);
    assert_true(t.steps < 4096 + 30 * 128);
    assert_true(u.steps < 4096 + 30 * 256);
    tg_schema_free(tree);
    tg_schema_free(strict);
}

/* 2019-09's $recursiveRef: the same recursion through a recursive
 * anchor. */
static void test_recursive_ref(void **state)
{
    (void)state;
    const char *text =
        "{\"$id\":\"https://example.com/r\",\"$recursiveAnchor\":true,"
        "\"type\":\"object\",\"anyOf\":["
        "{\"required\":[\"a\"],\"properties\":{\"children\":{\"items\":"
        "{\"$recursiveRef\":\"#\"}}}},"
        "{\"required\":[\"b\"],\"properties\":{\"children\":{\"items\":"
        "{\"$recursiveRef\":\"#\"}}}}]}";
    tg_schema *s = compile_draft(text, TG_SCHEMA_DRAFT_2019_09);
    assert_true(s->dynamic);
    for (int depth = 0; depth <= 8; depth++) {
        tree_verdict(s, depth, "\"a\":1,\"b\":2", "{\"b\":1}", 1);
        tree_verdict(s, depth, "\"a\":1,\"b\":2", "{}", 0);
    }
    outcome o = tree_run(s, 30, "\"a\":1,\"b\":2", "{}", 0);
    assert_int_equal(o.rc, 0);
    assert_true(o.steps < 4096 + 30 * 128);
    tg_schema_free(s);
}

/* ------------------------------------------------------------ budget */

/* Polynomial but costly: every element of an array of integers against an
 * anyOf of `branches` schemas that fail before one that passes. */
static tg_schema *wide_schema(int branches)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    tg__buf_puts(&b, "{\"type\":\"array\",\"items\":{\"anyOf\":[");
    for (int k = 0; k < branches; k++)
        tg__buf_printf(&b, "{\"type\":\"string\",\"minLength\":%d},", k);
    tg__buf_puts(&b, "{\"type\":\"integer\"}]}}");
    tg_schema *s = compile_ok(tg__buf_cstr(&b));
    tg__buf_cleanup(&b);
    return s;
}

static char *int_array(int n)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    tg__buf_puts(&b, "[");
    for (int k = 0; k < n; k++)
        tg__buf_printf(&b, "%s%d", k ? "," : "", k);
    tg__buf_puts(&b, "]");
    return tg__buf_take(&b);
}

static void test_budget(void **state)
{
    (void)state;
    tg_schema *s = wide_schema(100);
    char *inst = int_array(1000);
    /* every element fails 100 branches and passes the last one: three
     * steps per branch (the subschema and its two keywords) */
    outcome full = run(s, inst, TG_SCHEMA_MEMO_LAZY, 0, 0);
    assert_int_equal(full.rc, 1);
    assert_true(full.steps > 1000 * 100 * 3 && full.steps < 1000 * 100 * 4);
    outcome cut = run(s, inst, TG_SCHEMA_MEMO_LAZY, 50000, 0);
    assert_int_equal(cut.rc, TG_ELIMIT);
    assert_non_null(strstr(cut.first, "more than 50000 steps"));
    assert_int_equal(cut.steps, 50000);
    /* Validations share a budget: the verdict and then the report. */
    tg__jtape t;
    assert_int_equal(tg__jtape_parse(inst, strlen(inst), 0, &t, NULL), 0);
    tg__schema_budget b;
    tg__schema_budget_init(&b, full.steps + full.steps / 2, NULL);
    tg_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(tg__schema_validate_tape_in(s, &t, 0, NULL, &b, &err), 1);
    assert_int_equal(b.steps, full.steps / 2);
    tg__schema_report rep;
    memset(&rep, 0, sizeof rep);
    assert_int_equal(tg__schema_validate_tape_in(s, &t, 0, &rep, &b, &err),
                     TG_ELIMIT);
    assert_true(b.exhausted);
    assert_int_equal(b.steps, 0);
    tg__schema_report_cleanup(&rep);
    tg__jtape_free(&t);
    /* The default budget is the one of the public entry point. */
    tg__schema_budget_init(&b, 0, NULL);
    assert_true(b.steps == TG_SCHEMA_DEFAULT_STEPS);
    tg_schema *big = wide_schema(2000);
    char *many = int_array(20000);
    memset(&err, 0, sizeof err);
    assert_int_equal(tg_schema_validate(big, many, strlen(many), NULL, &err),
                     TG_ELIMIT);
    assert_non_null(strstr(err.message, "steps"));
    free(many);
    tg_schema_free(big);
    free(inst);
    tg_schema_free(s);
}

typedef struct stopper {
    atomic_int *flag;
    useconds_t after_us;
} stopper;

static void *stop_later(void *arg)
{
    stopper *st = arg;
    usleep(st->after_us);
    atomic_store(st->flag, 1);
    return NULL;
}

static void test_stop(void **state)
{
    (void)state;
    tg_schema *s = wide_schema(2000);
    char *inst = int_array(100000); /* some 600 million steps */
    tg__jtape t;
    assert_int_equal(tg__jtape_parse(inst, strlen(inst), 0, &t, NULL), 0);
    atomic_int stop;
    atomic_init(&stop, 1);
    tg__schema_budget b;
    tg_error err;
    /* Stopped before it starts: it ends at the first chunk. */
    tg__schema_budget_init(&b, UINT64_C(1) << 40, &stop);
    memset(&err, 0, sizeof err);
    assert_int_equal(tg__schema_validate_tape_in(s, &t, 0, NULL, &b, &err),
                     TG_ECANCELED);
    assert_int_equal(err.code, TG_ECANCELED);
    assert_true(b.limit - b.steps <= 4096 + 2048);
    assert_false(b.exhausted);
    /* Stopped from another thread while it runs. */
    atomic_store(&stop, 0);
    tg__schema_budget_init(&b, UINT64_C(1) << 40, &stop);
    stopper st = {&stop, 20000};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stop_later, &st), 0);
    double t0 = now_ms();
    memset(&err, 0, sizeof err);
    int rc = tg__schema_validate_tape_in(s, &t, 0, NULL, &b, &err);
    double ms = now_ms() - t0;
    pthread_join(th, NULL);
    printf("stopped after %.1f ms and %llu steps\n", ms,
           (unsigned long long)(b.limit - b.steps));
    assert_int_equal(rc, TG_ECANCELED);
    assert_true(b.limit - b.steps < UINT64_C(400000000));
    tg__jtape_free(&t);
    free(inst);
    tg_schema_free(s);
}

/* ------------------------------------------------------------ regexes */

static void expect_regex_limit(const char *schema, const char *instance,
                               const char *pattern, const char *where)
{
    tg_schema *s = compile_ok(schema);
    for (int report = 0; report < 2; report++) {
        outcome o = run(s, instance, TG_SCHEMA_MEMO_LAZY, 0, report);
        if (o.rc != TG_ELIMIT)
            fail_msg("%s on %.60s: %d, not TG_ELIMIT (%s)", pattern, instance,
                     o.rc, o.first);
        assert_non_null(strstr(o.first, pattern));
        assert_non_null(strstr(o.first, "regex match limit"));
        assert_non_null(strstr(o.first, where));
    }
    tg_error err;
    memset(&err, 0, sizeof err);
    char *lines = NULL;
    assert_int_equal(
        tg_schema_validate(s, instance, strlen(instance), &lines, &err),
        TG_ELIMIT);
    assert_null(lines);
    tg_schema_free(s);
}

static void test_regex_limits(void **state)
{
    (void)state;
    char as[128], inst[256];
    memset(as, 'a', 60);
    as[60] = '\0';
    /* ^(a+)+$ against "aaaa...b": the classic */
    snprintf(inst, sizeof inst, "\"%sb\"", as);
    expect_regex_limit("{\"pattern\":\"^(a+)+$\"}", inst, "^(a+)+$",
                       "the whole value");
    expect_regex_limit("{\"pattern\":\"^(a|aa)+$\"}", inst, "^(a|aa)+$",
                       "the whole value");
    expect_regex_limit("{\"pattern\":\"^(a|a)*$\"}", inst, "^(a|a)*$",
                       "the whole value");
    snprintf(inst, sizeof inst, "{\"x\":[\"%sb\"]}", as);
    expect_regex_limit("{\"properties\":{\"x\":{\"items\":{\"pattern\":"
                       "\"^(a+)+$\"}}}}",
                       inst, "^(a+)+$", "the value at '/x/0'");
    /* in a member name, through patternProperties */
    snprintf(inst, sizeof inst, "{\"%sb\":1}", as);
    expect_regex_limit("{\"patternProperties\":{\"^(a+)+$\":true}}", inst,
                       "^(a+)+$", "regex match limit");
    /* A pattern that simply does not match is a violation, not a limit;
     * one that backtracks a little is a verdict. */
    tg_schema *s = compile_ok("{\"pattern\":\"^(a+)+$\"}");
    outcome o = run(s, "\"aaaaaaaaab\"", TG_SCHEMA_MEMO_LAZY, 0, 1);
    assert_int_equal(o.rc, 0);
    assert_int_equal(o.nviol, 1);
    o = run(s, "\"aaaaaaaaaa\"", TG_SCHEMA_MEMO_LAZY, 0, 1);
    assert_int_equal(o.rc, 1);
    tg_schema_free(s);
}

/* ------------------------------------------------------ the memo table */

static void test_memo_table(void **state)
{
    (void)state;
    tg__node nodes[3];
    memset(nodes, 0, sizeof nodes);
    tg__memo m;
    m.slot = NULL;
    m.sslot = NULL;
    int fresh = 0;
    /* Many entries: the inline table grows to the heap; each is found
     * again with its state. */
    for (uint32_t k = 0; k < 5000; k++) {
        tg__memo_ent *e = tg__memo_get(&m, &nodes[k % 3], k, k % 7, &fresh);
        assert_non_null(e);
        assert_int_equal(fresh, 1);
        assert_int_equal(e->state, TG__MEMO_BUSY);
        e->state = k % 2 ? TG__MEMO_VALID : TG__MEMO_INVALID;
    }
    for (uint32_t k = 0; k < 5000; k++) {
        tg__memo_ent *e = tg__memo_get(&m, &nodes[k % 3], k, k % 7, &fresh);
        assert_int_equal(fresh, 0);
        assert_int_equal(e->state, k % 2 ? TG__MEMO_VALID : TG__MEMO_INVALID);
    }
    /* annotations kept and read back */
    tg__memo_ent *e = tg__memo_get(&m, &nodes[0], 1u << 30, 0, &fresh);
    uint64_t words[3] = {1, 2, UINT64_MAX};
    tg__memo_keep_bits(&m, e, words, 3);
    assert_int_not_equal(e->bits, TG__MEMO_NO_BITS);
    assert_memory_equal(m.words + e->bits, words, sizeof words);
    /* Past TG__MEMO_MAX entries nothing more is remembered. */
    for (uint32_t k = 5001; m.n < TG__MEMO_MAX; k++)
        assert_non_null(tg__memo_get(&m, &nodes[1], k, 1u << 20, &fresh));
    assert_null(tg__memo_get(&m, &nodes[2], 7, 1u << 21, &fresh));
    /* ... but what is there is still found */
    assert_non_null(tg__memo_get(&m, &nodes[0], 0, 0, &fresh));
    tg__memo_cleanup(&m);
    /* Scope ids: equal chains, equal ids; other chains, other ids. */
    m.slot = NULL;
    m.sslot = NULL;
    uint32_t a = tg__memo_scope_id(&m, 0, &nodes[0]);
    uint32_t ab = tg__memo_scope_id(&m, a, &nodes[1]);
    uint32_t b = tg__memo_scope_id(&m, 0, &nodes[1]);
    uint32_t ba = tg__memo_scope_id(&m, b, &nodes[0]);
    assert_true(a != 0 && ab != 0 && b != 0 && ba != 0);
    assert_true(a != b && ab != ba && a != ab);
    assert_int_equal(tg__memo_scope_id(&m, 0, &nodes[0]), a);
    assert_int_equal(tg__memo_scope_id(&m, a, &nodes[1]), ab);
    assert_int_equal(tg__memo_scope_id(&m, TG__MEMO_NO_SCOPE, &nodes[1]),
                     TG__MEMO_NO_SCOPE);
    /* Past the bound chains get no id (and are not memoized). */
    uint32_t up = ab;
    for (uint32_t k = 0; k < TG__MEMO_MAX_SCOPES + 10; k++)
        up = tg__memo_scope_id(&m, up, &nodes[k % 3]);
    assert_int_equal(up, TG__MEMO_NO_SCOPE);
    assert_int_equal(tg__memo_scope_id(&m, a, &nodes[1]), ab);
    tg__memo_cleanup(&m);
}

/* What the compiler marks: nodes with more than one way in, and those
 * from which a scope-reading reference is reachable. */
static void test_memo_plan(void **state)
{
    (void)state;
    tg_schema *flat = compile_ok(
        "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"},"
        "\"b\":{\"items\":{\"type\":\"integer\"}}}}");
    for (size_t k = 0; k < flat->nnodes; k++) {
        assert_false(flat->nodes[k]->memo);
        assert_false(flat->nodes[k]->dynamic);
    }
    assert_false(flat->dynamic);
    tg_schema_free(flat);
    tg_schema *tree = compile_ok(tree_schema);
    size_t memo = 0;
    for (size_t k = 0; k < tree->nnodes; k++)
        memo += tree->nodes[k]->memo;
    assert_int_equal(memo, 1); /* #/$defs/node */
    assert_false(tree->dynamic);
    tg_schema_free(tree);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recursive_oneof),
        cmocka_unit_test(test_exponential_shapes),
        cmocka_unit_test(test_dynamic_scope),
        cmocka_unit_test(test_recursive_ref),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_stop),
        cmocka_unit_test(test_regex_limits),
        cmocka_unit_test(test_memo_table),
        cmocka_unit_test(test_memo_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
