/* SPDX-License-Identifier: MIT */
/*
 * test_schema_alloc.c - the failing-allocation loop of docs/design.md over the
 * schema layer: for realistic schemas ($ref and $defs, $anchor,
 * $dynamicRef, patterns, formats, unevaluatedProperties/Items, a remote
 * document, a built-in metaschema), compile once counting allocations,
 * then for N = 1, 2, ... compile again with the N-th allocation refused,
 * until a run refuses nothing; the same for validation with a report (the
 * public text entry point, which parses the instance and writes JSON Lines, and
 * the jansson one). Every run must end in TG_ENOMEM, or in exactly the result
 * of the run that refused nothing (an allocation whose failure has a fallback,
 * such as PCRE2's JIT compile); never a crash, and nothing it allocated
 * may outlive it.
 *
 * src/schema allocates with malloc directly (and libc's strdup, jansson
 * and PCRE2 underneath), so jansson's json_set_alloc_funcs would see only
 * part of it: the program's own malloc and friends
 * (tests/unit/support/tg_alloc_fail.h) count and refuse them all.
 *
 * The remote documents come from the JSON Schema Test Suite's remotes/ in
 * the shared test data (TG_TEST_DATA_DIR): without it the scenario that
 * needs them is left out and the test reports itself skipped (failed under
 * CI=true).
 */
#include "tg_alloc_fail.h"

#include "internal.h"
#include "schema.h"
#include "tg_test.h"

/* ---------------------------------------------------------- scenarios */

typedef struct scenario {
    const char *name;
    const char *schema;
    int format_assert;
    const char *instances[3];
} scenario;

static const scenario scenarios[] = {
    {"file tool: $ref, $defs, pattern, enum, formats, uniqueItems",
     "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
     "\"type\":\"object\","
     "\"$defs\":{\"path\":{\"type\":\"string\",\"minLength\":1,"
     "\"pattern\":\"^[^\\\\u0000]+$\"},"
     "\"mode\":{\"enum\":[\"r\",\"w\",\"a\",\"r\\u0000+\"]}},"
     "\"properties\":{\"path\":{\"$ref\":\"#/$defs/path\"},"
     "\"mode\":{\"$ref\":\"#/$defs/mode\"},"
     "\"encoding\":{\"type\":\"string\",\"default\":\"utf-8\"},"
     "\"offset\":{\"type\":\"integer\",\"minimum\":0},"
     "\"edits\":{\"type\":\"array\",\"uniqueItems\":true,\"maxItems\":64,"
     "\"items\":{\"type\":\"object\",\"required\":[\"old\",\"new\"],"
     "\"additionalProperties\":false,\"properties\":{"
     "\"old\":{\"type\":\"string\"},\"new\":{\"type\":\"string\"}}}},"
     "\"created\":{\"type\":\"string\",\"format\":\"date-time\"},"
     "\"host\":{\"format\":\"hostname\"}},"
     "\"required\":[\"path\",\"mode\"],\"additionalProperties\":false}",
     1,
     {"{\"path\":\"\",\"mode\":\"x\",\"offset\":-1,\"edits\":["
      "{\"old\":\"a\"},{\"old\":\"a\"},{\"old\":\"b\",\"new\":\"c\",\"z\":1},"
      "{\"old\":\"d\",\"new\":\"e\"},{\"old\":\"d\",\"new\":\"e\"},"
      "{\"old\":\"f\",\"new\":\"g\"},{\"old\":\"h\",\"new\":\"i\"},"
      "{\"old\":\"j\",\"new\":\"k\"},{\"old\":\"l\",\"new\":\"m\"},"
      "{\"old\":\"n\",\"new\":\"o\"},{\"old\":\"p\",\"new\":\"q\"},"
      "{\"old\":\"r\",\"new\":\"s\"},{\"old\":\"t\",\"new\":\"u\"},"
      "{\"old\":\"v\",\"new\":\"w\"},{\"old\":\"x\",\"new\":\"y\"},"
      "{\"old\":\"z\",\"new\":\"0\"},{\"old\":\"1\",\"new\":\"2\"}],"
      "\"extra\\u00e9\\u0000\":1,\"created\":\"nope\",\"host\":\"-x\"}",
      "{\"path\":\"/etc/\\u00e9t\\u00e9 with a rather long escaped name "
      "that does not fit a small stack buffer at all, "
      "\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"
      "\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"
      "\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\","
      "\"mode\":\"r\\u0000+\",\"created\":\"2024-02-29T10:00:00Z\"}",
      "{\"path\":\"a\\u0000b\",\"mode\":\"w\"}"}},
    {"order: $anchor, unevaluatedProperties/Items, anyOf, if/then, "
     "patternProperties",
     "{\"$id\":\"https://example.com/order.json\","
     "\"$defs\":{"
     "\"addr\":{\"$anchor\":\"addr\",\"type\":\"object\",\"required\":"
     "[\"zip\"],\"properties\":{\"street\":{\"type\":\"string\"},"
     "\"zip\":{\"type\":\"string\",\"pattern\":\"^[0-9]{5}$\"}}},"
     "\"item\":{\"type\":\"object\",\"required\":[\"sku\",\"qty\"],"
     "\"properties\":{\"sku\":{\"type\":\"string\",\"pattern\":"
     "\"^[A-Z]{3}-\\\\d+$\"},\"qty\":{\"type\":\"integer\","
     "\"exclusiveMinimum\":0}},\"unevaluatedProperties\":false}},"
     "\"type\":\"object\","
     "\"allOf\":[{\"properties\":{\"id\":{\"type\":\"string\"}}}],"
     "\"properties\":{\"ship\":{\"$ref\":\"#addr\"},"
     "\"items\":{\"type\":\"array\",\"minItems\":1,"
     "\"prefixItems\":[{\"$ref\":\"#/$defs/item\"}],"
     "\"contains\":{\"$ref\":\"#/$defs/item\"},"
     "\"unevaluatedItems\":{\"$ref\":\"#/$defs/item\"}}},"
     "\"patternProperties\":{\"^x-\":{\"type\":\"string\"}},"
     "\"anyOf\":[{\"required\":[\"ship\"]},{\"required\":[\"pickup\"]}],"
     "\"if\":{\"properties\":{\"express\":{\"const\":true}},"
     "\"required\":[\"express\"]},"
     "\"then\":{\"required\":[\"phone\"],\"properties\":{\"phone\":"
     "{\"type\":\"string\"},\"express\":true}},"
     "\"else\":{\"properties\":{\"express\":true}},"
     "\"unevaluatedProperties\":false}",
     0,
     {"{\"id\":7,\"ship\":{\"zip\":\"1234\"},\"items\":[{\"sku\":\"ab-1\","
      "\"qty\":0,\"color\":\"red\"},{\"sku\":\"ABC-2\",\"qty\":1},"
      "{\"qty\":2}],\"x-a\":1,\"express\":true,\"gift\":true}",
      "{\"id\":\"o1\",\"ship\":{\"zip\":\"12345\"},\"items\":[{\"sku\":"
      "\"ABC-1\",\"qty\":1}],\"x-note\":\"hi\",\"express\":false}",
      "{\"pickup\":1,\"items\":[]}"}},
    {"tree: $dynamicRef, oneOf, contains, prefixItems, not",
     "{\"$id\":\"https://example.com/tree\",\"$dynamicAnchor\":\"node\","
     "\"type\":\"object\",\"required\":[\"name\"],"
     "\"properties\":{\"name\":{\"type\":\"string\",\"maxLength\":8},"
     "\"tags\":{\"type\":\"array\",\"prefixItems\":[{\"const\":\"root\"}],"
     "\"items\":{\"type\":\"string\"},\"contains\":{\"pattern\":\"^t\"},"
     "\"maxContains\":2,\"uniqueItems\":true},"
     "\"children\":{\"type\":\"array\",\"items\":{\"$dynamicRef\":"
     "\"#node\"}}},"
     "\"oneOf\":[{\"required\":[\"children\"]},{\"required\":[\"leaf\"]}],"
     "\"unevaluatedProperties\":{\"not\":{\"type\":\"null\"}}}",
     0,
     {"{\"name\":\"a very long name\",\"tags\":[\"x\",\"t1\",\"t2\",\"t3\","
      "\"t1\"],\"children\":[{\"name\":\"b\",\"leaf\":true,\"children\":[]},"
      "{\"children\":[{\"name\":\"c\",\"leaf\":null}]},5],\"z\":null}",
      "{\"name\":\"r\",\"tags\":[\"root\",\"t\"],\"children\":[{\"name\":"
      "\"b\",\"leaf\":1}]}",
      "[]"}},
    {"2019-09: $recursiveRef, dependentSchemas, propertyNames, minContains, "
     "multipleOf",
     "{\"$schema\":\"https://json-schema.org/draft/2019-09/schema\","
     "\"$id\":\"https://example.com/cfg\",\"$recursiveAnchor\":true,"
     "\"type\":[\"object\",\"number\"],\"multipleOf\":0.5,"
     "\"propertyNames\":{\"pattern\":\"^[a-z_]+$\",\"maxLength\":12},"
     "\"additionalProperties\":{\"$recursiveRef\":\"#\"},"
     "\"properties\":{\"list\":{\"type\":\"array\",\"contains\":"
     "{\"const\":\"x\\u0000\"},\"minContains\":2,"
     "\"items\":[{\"type\":\"string\"}],\"unevaluatedItems\":"
     "{\"type\":\"string\",\"minLength\":1}}},"
     "\"dependentSchemas\":{\"tls\":{\"required\":[\"cert\",\"key\"]}},"
     "\"dependentRequired\":{\"user\":[\"password\"]},"
     "\"maxProperties\":8}",
     0,
     {"{\"Bad-Name\":1.25,\"tls\":{\"deep\":{\"x\":0.3}},\"user\":1,"
      "\"list\":[\"x\\u0000\",\"y\",\"\",3],\"a_very_long_name_here\":1}",
      "{\"tls\":1,\"cert\":1.5,\"key\":{\"list\":[\"a\",\"x\\u0000\","
      "\"x\\u0000\"]}}",
      "{\"a\":{\"b\":{\"c\":{\"d\":\"no\"}}}}"}},
    {"draft 7: dependencies, items array, remote $refs, $ref siblings",
     "{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
     "\"definitions\":{\"n\":{\"$ref\":\"http://localhost:1234/"
     "integer.json\",\"type\":\"string\"}},"
     "\"properties\":{\"n\":{\"$ref\":\"#/definitions/n\"},"
     "\"s\":{\"$ref\":\"http://localhost:1234/draft7/subSchemas.json#/"
     "definitions/refToInteger\"},"
     "\"list\":{\"items\":[{\"type\":\"string\"},{\"enum\":[1,2]}],"
     "\"additionalItems\":false}},"
     "\"dependencies\":{\"a\":[\"b\",\"c\"],\"d\":{\"required\":[\"e\"]}}}",
     0,
     {"{\"n\":\"x\",\"s\":1.5,\"list\":[1,3,4],\"a\":1,\"d\":2}",
      "{\"n\":1,\"s\":2,\"list\":[\"a\",1],\"a\":1,\"b\":2,\"c\":3}",
      "{\"list\":[]}"}},
    {"costly shapes: a recursive oneOf past the first chunk of steps "
     "(memoized), $dynamicRef recursion (interned scopes)",
     "{\"$defs\":{\"node\":{\"type\":\"object\",\"oneOf\":["
     "{\"required\":[\"name\"],\"properties\":{\"children\":{\"items\":"
     "{\"$ref\":\"#/$defs/node\"}}}},"
     "{\"required\":[\"id\"],\"properties\":{\"children\":{\"items\":"
     "{\"$ref\":\"#/$defs/node\"}}}}]},"
     "\"tree\":{\"$id\":\"https://example.com/tree\",\"$dynamicAnchor\":"
     "\"t\",\"anyOf\":[{\"required\":[\"a\"],\"properties\":{\"kids\":{"
     "\"items\":{\"$dynamicRef\":\"#t\"}}}},{\"required\":[\"b\"],"
     "\"properties\":{\"kids\":{\"items\":{\"$dynamicRef\":\"#t\"}}}}]}},"
     "\"properties\":{\"n\":{\"$ref\":\"#/$defs/node\"},"
     "\"t\":{\"$ref\":\"https://example.com/tree\"}},"
     "\"unevaluatedProperties\":false}",
     0,
     {"{\"n\":{\"name\":1,\"id\":2,\"children\":[{\"name\":1,"
      "\"id\":2,\"children\":[{\"name\":1,\"id\":2,\"children\":[{\"name\":1,"
      "\"id\":2,\"children\":[{\"name\":1,\"id\":2,\"children\":[{\"name\":1,"
      "\"id\":2,\"children\":[{\"name\":1,\"id\":2,\"children\":[{\"name\":1,"
      "\"id\":2,\"children\":[{\"name\":1,\"id\":2,\"children\":[{\"name\":1,"
      "\"id\":2,\"children\":[{\"name\":1,\"id\":2,\"children\":[{\"name\":1,"
      "\"id\":2,\"children\":[{\"name\":1,\"id\":2}]}]}]}]}]}]}]}]}]}]}]}]},"
      "\"x\":1}",
      "{\"t\":{\"a\":1,\"b\":1,\"kids\":[{\"a\":1,\"b\":1,\"kids\":[{\"a\":1,"
      "\"b\":1,\"kids\":[{\"a\":1,\"b\":1,\"kids\":[{\"a\":1,"
      "\"b\":1,\"kids\":[{\"a\":1,\"b\":1,\"kids\":[{\"a\":1,"
      "\"b\":1,\"kids\":[{\"a\":1,\"b\":1,\"kids\":[{\"a\":1,"
      "\"b\":1,\"kids\":[{\"a\":1,\"b\":1,\"kids\":[{\"a\":1,"
      "\"b\":1,\"kids\":[{\"a\":1,\"b\":1,\"kids\":[{}]}]}]}]}]}]}]}]}]}]}]}]}"
      "}",
      "{\"n\":{\"id\":2,\"children\":[{\"name\":1}]},"
      "\"t\":{\"a\":1,\"kids\":[{\"b\":1}]}}"}},
    {"a tool that takes a schema: $ref to the built-in 2020-12 metaschema "
     "(its seven vocabulary metaschemas, $dynamicRef)",
     "{\"type\":\"object\",\"required\":[\"schema\"],\"properties\":{"
     "\"schema\":{\"$ref\":\"https://json-schema.org/draft/2020-12/"
     "schema\"}}}",
     0,
     {"{\"schema\":{\"type\":\"objekt\",\"minLength\":-1,\"properties\":"
      "{\"a\":{\"items\":{\"format\":3}}},\"$defs\":{\"x\":5}}}",
      "{\"schema\":{\"type\":\"object\",\"properties\":{\"path\":{"
      "\"type\":\"string\",\"minLength\":1}},\"required\":[\"path\"]}}",
      "{\"schema\":[]}"}},
};

typedef struct ctx {
    char remotes[1024];
    tg_schema_remote remote;
    tg_schema_options opt;
} ctx;

/* Whether the suite's remotes/ is here (main looks, once). */
static int have_remotes;

/* The options of scenario sc; 0 when it needs remote documents that are
 * not here (the caller leaves it out), else 1. */
static int options_for(ctx *c, const scenario *sc)
{
    if (!have_remotes && strstr(sc->schema, "http://localhost:1234/") != NULL)
        return 0;
    tg_test_data_path(c->remotes, sizeof c->remotes,
                      "json-schema-test-suite/remotes");
    c->remote.prefix = "http://localhost:1234/";
    c->remote.dir = c->remotes;
    memset(&c->opt, 0, sizeof c->opt);
    c->opt.format_assert = sc->format_assert;
    c->opt.remotes = &c->remote;
    c->opt.nremotes = 1;
    return 1;
}

/* The instance as a jansson value, read through the tape: jansson itself
 * refuses U+0000 in keys. */
static json_t *inst_json(const char *text)
{
    tg__jtape t;
    assert_int_equal(
        tg__jtape_parse(text, strlen(text), TG_JTAPE_ALLOW_NUL, &t, NULL), 0);
    json_t *j = tg__jtape_to_json(&t, 0); /* new ref */
    tg__jtape_free(&t);
    assert_non_null(j);
    return j;
}

static tg_schema *compile_plain(const ctx *c, const scenario *sc)
{
    tg_schema *s = NULL;
    tg_error err;
    memset(&err, 0, sizeof err);
    if (tg_schema_compile(sc->schema, strlen(sc->schema), &c->opt, &s, &err) !=
        0)
        fail_msg("%s: compile failed: %s", sc->name, err.message);
    return s;
}

/* What validation says, for comparing runs: the verdict and the JSON Lines
 * of the public entry point, and the jansson entry point's report as one
 * message. */
typedef struct outcome {
    int rc;
    char *lines;
    int jrc;
    char *jmsg;
} outcome;

static void outcome_free(outcome *o)
{
    free(o->lines);
    free(o->jmsg);
    memset(o, 0, sizeof *o);
}

static int same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) ||
           (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int same_outcome(const outcome *a, const outcome *b)
{
    return a->rc == b->rc && a->jrc == b->jrc && same_str(a->lines, b->lines) &&
           same_str(a->jmsg, b->jmsg);
}

/* The public entry point over the instance text, then the jansson one over
 * its value. Only the validations run armed when `armed` is set. */
static void validate(const tg_schema *s, const char *inst, const json_t *ij,
                     outcome *o, long fail_at, int armed)
{
    tg_error err;
    memset(&err, 0, sizeof err);
    memset(o, 0, sizeof *o);
    if (armed)
        arm(fail_at);
    o->rc = tg_schema_validate(s, inst, strlen(inst), &o->lines, &err);
    if (o->rc == TG_ENOMEM && err.code != TG_ENOMEM)
        o->rc = -1000; /* an error code without its tg_error */
    tg__schema_report rep;
    memset(&rep, 0, sizeof rep);
    o->jrc = tg__schema_validate_json(s, ij, &rep, &err);
    if (o->jrc == TG_ENOMEM && err.code != TG_ENOMEM)
        o->jrc = -1000;
    if (o->jrc >= 0)
        o->jmsg = tg__schema_report_message(&rep);
    /* Messages were asked for only of an invalid instance. */
    if (o->jrc == 0 && o->jmsg == NULL)
        o->jrc = TG_ENOMEM;
    tg__schema_report_cleanup(&rep);
    if (armed) {
        /* The outcome's strings are compared after the run: take them out
         * of the live set (they are freed by outcome_free). */
        if (o->lines != NULL)
            live_del(o->lines);
        if (o->jmsg != NULL)
            live_del(o->jmsg);
        A.armed = 0;
    }
}

/* ------------------------------------------------------------- tests */

static void test_compile_fail(void **state)
{
    (void)state;
    for (size_t q = 0; q < sizeof scenarios / sizeof scenarios[0]; q++) {
        const scenario *sc = &scenarios[q];
        ctx c;
        if (!options_for(&c, sc))
            continue;
        /* The reference: compiled with nothing refused, and what it says
         * of each instance. */
        tg_schema *ref = compile_plain(&c, sc);
        json_t *ij[3]; /* new refs */
        outcome want[3];
        for (int i = 0; i < 3; i++) {
            ij[i] = inst_json(sc->instances[i]);
            validate(ref, sc->instances[i], ij[i], &want[i], 0, 0);
        }
        tg_schema_free(ref);
        long runs = 0, enomem = 0, fallback = 0;
        for (long k = 1;; k++) {
            tg_schema *s = NULL;
            tg_error err;
            memset(&err, 0, sizeof err);
            arm(k);
            int rc = tg_schema_compile(sc->schema, strlen(sc->schema), &c.opt,
                                       &s, &err);
            A.armed = 0;
            int refused = A.refused;
            runs++;
            if (rc != 0) {
                if (rc != TG_ENOMEM || err.code != TG_ENOMEM || s != NULL)
                    fail_msg("%s: compile with allocation %ld refused: %s "
                             "(%s)",
                             sc->name, k, tg_err_name(rc), err.message);
                assert_true(refused);
                A.armed = 1;
                disarm("compile", k);
                enomem++;
                continue;
            }
            /* Compiled: the schema must be the reference's. */
            for (int i = 0; i < 3; i++) {
                outcome got;
                validate(s, sc->instances[i], ij[i], &got, 0, 0);
                if (!same_outcome(&got, &want[i]))
                    fail_msg("%s: compiled with allocation %ld refused, "
                             "instance %d: %d/%d, want %d/%d\n got  %s\n "
                             "want %s",
                             sc->name, k, i, got.rc, got.jrc, want[i].rc,
                             want[i].jrc, got.jmsg ? got.jmsg : "-",
                             want[i].jmsg ? want[i].jmsg : "-");
                outcome_free(&got);
            }
            A.armed = 1;
            tg_schema_free(s);
            disarm("compile", k);
            if (!refused)
                break;
            fallback++;
        }
        printf("  compile, %s: %ld runs, %ld TG_ENOMEM, %ld with a "
               "fallback\n",
               sc->name, runs, enomem, fallback);
        assert_true(enomem > 0);
        for (int i = 0; i < 3; i++) {
            outcome_free(&want[i]);
            json_decref(ij[i]);
        }
    }
}

static void test_validate_fail(void **state)
{
    (void)state;
    for (size_t q = 0; q < sizeof scenarios / sizeof scenarios[0]; q++) {
        const scenario *sc = &scenarios[q];
        ctx c;
        if (!options_for(&c, sc))
            continue;
        tg_schema *s = compile_plain(&c, sc);
        for (int i = 0; i < 3; i++) {
            const char *inst = sc->instances[i];
            json_t *ij = inst_json(inst); /* new ref */
            outcome want;
            validate(s, inst, ij, &want, 0, 0);
            assert_true(want.rc == 0 || want.rc == 1);
            assert_int_equal(want.rc, want.jrc);
            long runs = 0, enomem = 0;
            for (long k = 1;; k++) {
                outcome got;
                validate(s, inst, ij, &got, k, 1);
                int refused = A.refused;
                runs++;
                if (!refused) {
                    if (!same_outcome(&got, &want))
                        fail_msg("%s, instance %d: %d/%d without a refusal",
                                 sc->name, i, got.rc, got.jrc);
                    outcome_free(&got);
                    A.armed = 1;
                    disarm("validate", k);
                    break;
                }
                /* One refusal, in one of the two entry points: that one
                 * says TG_ENOMEM (with no lines) or has what it should
                 * have; the other is untouched. */
                int text_ok =
                    (got.rc == TG_ENOMEM && got.lines == NULL) ||
                    (got.rc == want.rc && same_str(got.lines, want.lines));
                int json_ok =
                    got.jrc == TG_ENOMEM ||
                    (got.jrc == want.jrc && same_str(got.jmsg, want.jmsg));
                if (!text_ok || !json_ok) {
                    fprintf(stderr,
                            "%s, instance %d, allocation %ld refused: text "
                            "%d (want %d or TG_ENOMEM), jansson %d (want %d "
                            "or TG_ENOMEM)\n got lines:\n%s\n want lines:\n"
                            "%s\n got message: %s\n want message: %s\n",
                            sc->name, i, k, got.rc, want.rc, got.jrc, want.jrc,
                            got.lines ? got.lines : "-",
                            want.lines ? want.lines : "-",
                            got.jmsg ? got.jmsg : "-",
                            want.jmsg ? want.jmsg : "-");
                    fail();
                }
                enomem += got.rc == TG_ENOMEM || got.jrc == TG_ENOMEM;
                outcome_free(&got);
                A.armed = 1;
                disarm("validate", k);
            }
            printf("  validate, %s, instance %d (%s): %ld runs, %ld "
                   "TG_ENOMEM\n",
                   sc->name, i, want.rc ? "valid" : "invalid", runs, enomem);
            outcome_free(&want);
            json_decref(ij);
        }
        tg_schema_free(s);
    }
}

/* The wrappers themselves: a refused allocation is NULL with errno set,
 * the set of blocks follows malloc, realloc and free. */
static void test_wrappers(void **state)
{
    (void)state;
    arm(2);
    void *a = malloc(8);
    errno = 0;
    void *b = malloc(8);
    int e = errno;
    void *c = calloc(2, 8);
    c = realloc(c, 4096);
    char *d = strdup("abc");
    A.armed = 0;
    assert_non_null(a);
    assert_null(b);
    assert_int_equal(e, ENOMEM);
    assert_non_null(c);
    assert_string_equal(d, "abc");
    assert_int_equal(A.live, 3);
    A.armed = 1;
    free(a);
    free(c);
    A.armed = 0;
    assert_int_equal(A.live, 1);
    A.armed = 1;
    free(d);
    disarm("wrappers", 2);
}

int main(void)
{
    char remotes[1024];
    tg_test_data_path(remotes, sizeof remotes,
                      "json-schema-test-suite/remotes");
    have_remotes =
        tg_test_have_data(remotes, "the scenario with remote $refs, left out");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrappers),
        cmocka_unit_test(test_compile_fail),
        cmocka_unit_test(test_validate_fail),
    };
    return tg_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
