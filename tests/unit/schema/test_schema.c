/* SPDX-License-Identifier: MIT */
/*
 * test_schema.c - the schema layer beyond conformance (test_suite.c has
 * that): the violation messages a model reads, schemas refused at compile
 * with the JSON pointer of the bad keyword, limits that end in TG_ELIMIT
 * instead of a hang or a crash (cyclic $refs, catastrophic regexes, deep
 * instances), JSON equality and code-point lengths, ECMA-262 regex
 * behaviour, strings holding U+0000 (compared by length everywhere: enum,
 * const, property names, required, lengths, patterns, formats) through
 * every entry point, the public text API (JSON Lines violations), the
 * report cap,
 * the type lookup of argument repair, and one compiled schema shared by
 * concurrent validations.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "schema.h"

/* ------------------------------------------------------------ helpers */

static tg_schema *compile_ok(const char *text, int format_assert)
{
    tg_schema_options opt;
    memset(&opt, 0, sizeof opt);
    opt.format_assert = format_assert;
    tg_schema *s = NULL;
    tg_error err;
    memset(&err, 0, sizeof err);
    int rc = tg_schema_compile(text, strlen(text), &opt, &s, &err);
    if (rc != 0)
        fail_msg("compile of %s failed: %s", text, err.message);
    return s;
}

/* Validates text through the tape entry point with a report; returns the
 * verdict, the report filled. Checks the verdict-only path and the jansson
 * path agree. */
static int check(const tg_schema *s, const char *text, tg__schema_report *rep)
{
    tg__jtape t;
    assert_int_equal(tg__jtape_parse(text, strlen(text), 0, &t, NULL), 0);
    tg_error err;
    memset(&err, 0, sizeof err);
    int quiet = tg__schema_validate_tape(s, &t, 0, NULL, &err);
    int loud = tg__schema_validate_tape(s, &t, 0, rep, &err);
    json_t *j = json_loads(text, JSON_DECODE_ANY, NULL); /* new ref */
    assert_non_null(j);
    int viaj = tg__schema_validate_json(s, j, NULL, &err);
    json_decref(j);
    tg__jtape_free(&t);
    assert_int_equal(quiet, loud);
    assert_int_equal(quiet, viaj);
    return loud;
}

static int verdict(const char *schema, const char *instance)
{
    tg_schema *s = compile_ok(schema, 0);
    tg__schema_report rep;
    memset(&rep, 0, sizeof rep);
    int v = check(s, instance, &rep);
    tg__schema_report_cleanup(&rep);
    tg_schema_free(s);
    return v;
}

static const tg__schema_violation *find(const tg__schema_report *r,
                                        const char *message)
{
    for (size_t k = 0; k < r->n; k++)
        if (strcmp(r->v[k].message, message) == 0)
            return &r->v[k];
    return NULL;
}

static void expect_violation(const tg__schema_report *r, const char *path,
                             const char *keyword, const char *message)
{
    const tg__schema_violation *v = find(r, message);
    if (v == NULL) {
        for (size_t k = 0; k < r->n; k++)
            fprintf(stderr, "  have: [%s] %s: %s\n", r->v[k].path,
                    r->v[k].keyword, r->v[k].message);
        fail_msg("no violation '%s'", message);
    }
    assert_string_equal(v->path, path);
    assert_string_equal(v->keyword, keyword);
}

/* ------------------------------------------------------------ messages */

static void test_messages(void **state)
{
    (void)state;
    tg_schema *s = compile_ok(
        "{\"type\":\"object\",\"required\":[\"path\"],"
        "\"additionalProperties\":false,\"properties\":{"
        "\"text\":{\"type\":\"string\"},"
        "\"n\":{\"type\":\"integer\",\"maximum\":10},"
        "\"items\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
        "\"minLength\":3}},"
        "\"x\":{\"oneOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]},"
        "\"mode\":{\"enum\":[\"r\",\"w\"]},"
        "\"path\":{}}}",
        0);
    tg__schema_report rep;
    memset(&rep, 0, sizeof rep);
    int v = check(s,
                  "{\"text\":42,\"n\":12,\"items\":[\"a\",\"abcd\"],"
                  "\"extra\":1,\"x\":1.5,\"mode\":\"x\"}",
                  &rep);
    assert_int_equal(v, 0);
    expect_violation(&rep, "/text", "type", "/text must be a string, got 42");
    expect_violation(&rep, "/n", "maximum", "/n must be <= 10, got 12");
    expect_violation(&rep, "/items/0", "minLength",
                     "/items/0 must be at least 3 characters long, got 1");
    expect_violation(&rep, "", "additionalProperties",
                     "property 'extra' is not allowed");
    expect_violation(&rep, "", "required", "missing required property 'path'");
    expect_violation(&rep, "/x", "oneOf",
                     "/x must match exactly one of the 2 schemas in oneOf, "
                     "matched 0");
    expect_violation(&rep, "/mode", "enum",
                     "/mode must be one of [\"r\",\"w\"], got \"x\"");
    assert_int_equal(rep.n, 7);
    char *msg = tg__schema_report_message(&rep);
    assert_non_null(strstr(msg, "/text must be a string, got 42; "));
    free(msg);
    json_t *d = tg__schema_report_details(&rep); /* new ref */
    assert_int_equal(json_array_size(d), 7);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(d, 0), "path")),
        rep.v[0].path);
    json_decref(d);
    tg__schema_report_cleanup(&rep);

    /* Nested objects: the object's path prefixes subject-less messages. */
    memset(&rep, 0, sizeof rep);
    tg_schema *t = compile_ok("{\"properties\":{\"a~/b\":{\"required\":[\"q\"],"
                              "\"type\":[\"object\",\"null\"]}}}",
                              0);
    assert_int_equal(check(t, "{\"a~/b\":{}}", &rep), 0);
    expect_violation(&rep, "/a~0~1b", "required",
                     "/a~0~1b: missing required property 'q'");
    tg__schema_report_cleanup(&rep);
    memset(&rep, 0, sizeof rep);
    assert_int_equal(check(t, "{\"a~/b\":[1]}", &rep), 0);
    expect_violation(&rep, "/a~0~1b", "type",
                     "/a~0~1b must be an object or null, got an array");
    tg__schema_report_cleanup(&rep);
    /* The root has no path: "value ..." for subject messages. */
    memset(&rep, 0, sizeof rep);
    assert_int_equal(check(t, "\"str\"", &rep), 1);
    tg__schema_report_cleanup(&rep);
    tg_schema_free(t);
    tg_schema_free(s);

    tg_schema *r = compile_ok("{\"type\":\"object\"}", 0);
    memset(&rep, 0, sizeof rep);
    assert_int_equal(check(r, "[1]", &rep), 0);
    expect_violation(&rep, "", "type", "value must be an object, got an array");
    tg__schema_report_cleanup(&rep);
    tg_schema_free(r);
}

static void test_report_cap(void **state)
{
    (void)state;
    tg_schema *s = compile_ok("{\"items\":{\"type\":\"string\"}}", 0);
    tg__schema_report rep;
    memset(&rep, 0, sizeof rep);
    rep.max = 2;
    assert_int_equal(check(s, "[1,2,3,4,5]", &rep), 0);
    assert_int_equal(rep.n, 2);
    assert_true(rep.truncated);
    char *msg = tg__schema_report_message(&rep);
    assert_non_null(strstr(msg, "; and more"));
    free(msg);
    tg__schema_report_cleanup(&rep);
    tg_schema_free(s);
}

/* ------------------------------------------------------ compile errors */

static void expect_bad(const char *schema, int code, const char *pointer)
{
    tg_schema *s = NULL;
    tg_error err;
    memset(&err, 0, sizeof err);
    int rc = tg_schema_compile(schema, strlen(schema), NULL, &s, &err);
    if (rc != code)
        fail_msg("%s: expected %s, got %s (%s)", schema, tg_err_name(code),
                 tg_err_name(rc), err.message);
    assert_null(s);
    assert_int_equal(err.code, code);
    if (pointer != NULL)
        assert_string_equal(err.pointer, pointer);
    assert_true(strlen(err.message) > 10);
}

static void test_compile_errors(void **state)
{
    (void)state;
    expect_bad("{\"type\":5}", TG_ESCHEMA, "/type");
    expect_bad("{\"type\":\"strin\"}", TG_ESCHEMA, "/type");
    expect_bad("{\"properties\":{\"a\":{\"minLength\":-1}}}", TG_ESCHEMA,
               "/properties/a/minLength");
    expect_bad("{\"required\":\"x\"}", TG_ESCHEMA, "/required");
    expect_bad("{\"pattern\":\"(\"}", TG_ESCHEMA, "/pattern");
    expect_bad("{\"patternProperties\":{\"[\":{}}}", TG_ESCHEMA,
               "/patternProperties/[");
    expect_bad("{\"items\":{\"items\":5}}", TG_ESCHEMA, "/items/items");
    expect_bad("{\"$defs\":{\"a\":{\"multipleOf\":0}}}", TG_ESCHEMA,
               "/$defs/a/multipleOf");
    expect_bad("{\"allOf\":[]}", TG_ESCHEMA, "/allOf");
    expect_bad("{\"enum\":3}", TG_ESCHEMA, "/enum");
    expect_bad("{\"$ref\":\"#/$defs/missing\"}", TG_ENOTFOUND, "/$ref");
    expect_bad("{\"$ref\":\"http://example.com/x.json\"}", TG_ENOTFOUND, NULL);
    expect_bad("{\"$schema\":\"http://example.com/my-meta\"}", TG_ESCHEMA,
               "/$schema");
    expect_bad("5", TG_ESCHEMA, "");
    /* Not JSON: line and column. */
    tg_schema *s = NULL;
    tg_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(tg_schema_compile("{\n \"type\": }", 12, NULL, &s, &err),
                     TG_EPARSE);
    assert_int_equal(err.line, 2);
    /* Schemas that look odd but are valid. */
    tg_schema_free(compile_ok("{\"minLength\":2.0,\"required\":[],"
                              "\"foo\":{\"type\":5}}",
                              0));
    tg_schema_free(compile_ok("true", 0));
}

/* ------------------------------------------------------------ U+0000 */

/* A text as a jansson value read through the tape, which (unlike jansson,
 * even with JSON_ALLOW_NUL) takes U+0000 in keys too, as the schema layer
 * reads schema texts. */
static json_t *nul_json(const char *text)
{
    tg__jtape t;
    assert_int_equal(
        tg__jtape_parse(text, strlen(text), TG_JTAPE_ALLOW_NUL, &t, NULL), 0);
    json_t *j = tg__jtape_to_json(&t, 0); /* new ref */
    tg__jtape_free(&t);
    assert_non_null(j);
    return j;
}

/* The verdict for an instance, through every entry point, which must all
 * agree: the schema compiled from text and from a jansson value; the
 * instance validated as text (public API, JSON Lines), as a tape with and
 * without a report and as a jansson value with a report. */
static int nul_verdict(const char *schema, const char *instance,
                       int format_assert)
{
    tg_schema_options opt;
    memset(&opt, 0, sizeof opt);
    opt.format_assert = format_assert;
    tg_schema *s[2] = {NULL, NULL};
    tg_error err;
    memset(&err, 0, sizeof err);
    json_t *sj = nul_json(schema); /* new ref */
    if (tg__schema_compile(sj, &opt, &s[0], &err) != 0)
        fail_msg("compile of %s failed: %s", schema, err.message);
    json_decref(sj);
    const size_t ns = 2;
    if (tg_schema_compile(schema, strlen(schema), &opt, &s[1], &err) != 0)
        fail_msg("compile of %s from text failed: %s", schema, err.message);
    json_t *ij = nul_json(instance); /* new ref */
    tg__jtape it;
    assert_int_equal(tg__jtape_parse(instance, strlen(instance),
                                     TG_JTAPE_ALLOW_NUL, &it, NULL),
                     0);
    int v = -1;
    for (size_t k = 0; k < ns; k++) {
        char *lines = NULL;
        int a =
            tg_schema_validate(s[k], instance, strlen(instance), &lines, &err);
        int b = tg__schema_validate_tape(s[k], &it, 0, NULL, &err);
        tg__schema_report rep;
        memset(&rep, 0, sizeof rep);
        int c = tg__schema_validate_json(s[k], ij, &rep, &err);
        if (a != b || a != c || (a != 0 && a != 1))
            fail_msg("%s / %s: text %d, tape %d, jansson %d (%s)", schema,
                     instance, a, b, c, err.message);
        assert_int_equal(a == 0, lines != NULL);
        assert_int_equal(c == 0, rep.n > 0);
        if (v >= 0)
            assert_int_equal(v, a);
        v = a;
        tg_free(lines);
        tg__schema_report_cleanup(&rep);
        tg_schema_free(s[k]);
    }
    tg__jtape_free(&it);
    json_decref(ij);
    return v;
}

/* Validates through the tape with a report (the schema read as nul_json
 * reads it); returns the verdict. */
static int nul_report(const char *schema, const char *instance,
                      tg__schema_report *rep)
{
    tg_schema *s = NULL;
    tg_error err;
    json_t *sj = nul_json(schema); /* new ref */
    assert_int_equal(tg__schema_compile(sj, NULL, &s, &err), 0);
    json_decref(sj);
    tg__jtape it;
    assert_int_equal(tg__jtape_parse(instance, strlen(instance),
                                     TG_JTAPE_ALLOW_NUL, &it, NULL),
                     0);
    memset(rep, 0, sizeof *rep);
    int v = tg__schema_validate_tape(s, &it, 0, rep, &err);
    tg__jtape_free(&it);
    tg_schema_free(s);
    return v;
}

static void test_nul(void **state)
{
    (void)state;
    static const struct {
        const char *schema, *instance;
        int fmt, valid;
    } cases[] = {
        /* enum, const, uniqueItems: by length, not up to the NUL */
        {"{\"enum\":[\"a\\u0000b\"]}", "\"a\\u0000b\"", 0, 1},
        {"{\"enum\":[\"a\\u0000b\"]}", "\"a\"", 0, 0},
        {"{\"enum\":[\"a\\u0000b\"]}", "\"a\\u0000c\"", 0, 0},
        {"{\"enum\":[\"a\\u0000b\"]}", "\"a\\u0000b\\u0000\"", 0, 0},
        {"{\"enum\":[\"a\"]}", "\"a\\u0000\"", 0, 0},
        {"{\"enum\":[{\"k\\u0000\":1}]}", "{\"k\\u0000\":1.0}", 0, 1},
        {"{\"enum\":[{\"k\\u0000\":1}]}", "{\"k\":1}", 0, 0},
        {"{\"const\":\"\\u0000\"}", "\"\\u0000\"", 0, 1},
        {"{\"const\":\"\\u0000\"}", "\"\"", 0, 0},
        {"{\"const\":\"\\u0000\"}", "\"\\u0000\\u0000\"", 0, 0},
        {"{\"const\":[\"x\\u0000\"]}", "[\"x\\u0000\"]", 0, 1},
        {"{\"const\":[\"x\\u0000\"]}", "[\"x\"]", 0, 0},
        {"{\"uniqueItems\":true}", "[\"a\\u0000\",\"a\"]", 0, 1},
        {"{\"uniqueItems\":true}", "[\"a\\u0000\",\"a\\u0000\"]", 0, 0},
        /* property names: the instance's, and the schema's */
        {"{\"properties\":{\"a\":{\"type\":\"string\"}},"
         "\"additionalProperties\":false}",
         "{\"a\\u0000\":\"x\"}", 0, 0},
        {"{\"properties\":{\"a\":{\"type\":\"string\"}},"
         "\"additionalProperties\":false}",
         "{\"a\":\"x\"}", 0, 1},
        {"{\"properties\":{\"a\\u0000\":{\"type\":\"integer\"}}}",
         "{\"a\\u0000\":\"x\"}", 0, 0},
        {"{\"properties\":{\"a\\u0000\":{\"type\":\"integer\"}}}",
         "{\"a\":\"x\",\"a\\u0000\":1}", 0, 1},
        {"{\"properties\":{\"a\\u0000\":{\"type\":\"integer\"},"
         "\"a\":{\"type\":\"string\"}}}",
         "{\"a\":\"x\",\"a\\u0000\":1}", 0, 1},
        {"{\"required\":[\"a\\u0000b\"]}", "{\"a\\u0000b\":1}", 0, 1},
        {"{\"required\":[\"a\\u0000b\"]}", "{\"a\":1}", 0, 0},
        {"{\"required\":[\"a\\u0000b\"]}", "{\"a\\u0000c\":1}", 0, 0},
        {"{\"required\":[\"a\\u0000b\",\"a\"]}", "{\"a\":1}", 0, 0},
        {"{\"dependentRequired\":{\"a\":[\"b\\u0000\"]}}",
         "{\"a\":1,\"b\\u0000\":2}", 0, 1},
        {"{\"dependentRequired\":{\"a\":[\"b\\u0000\"]}}", "{\"a\":1,\"b\":2}",
         0, 0},
        {"{\"dependentSchemas\":{\"a\\u0000\":{\"required\":[\"z\"]}}}",
         "{\"a\":1}", 0, 1},
        {"{\"dependentSchemas\":{\"a\\u0000\":{\"required\":[\"z\"]}}}",
         "{\"a\\u0000\":1}", 0, 0},
        {"{\"propertyNames\":{\"maxLength\":2}}", "{\"a\\u0000\":1}", 0, 1},
        {"{\"propertyNames\":{\"maxLength\":2}}", "{\"a\\u0000b\":1}", 0, 0},
        {"{\"propertyNames\":{\"const\":\"a\\u0000\"}}", "{\"a\\u0000\":1}", 0,
         1},
        {"{\"propertyNames\":{\"const\":\"a\\u0000\"}}", "{\"a\":1}", 0, 0},
        {"{\"propertyNames\":{\"pattern\":\"^a\\u0000b$\"}}",
         "{\"a\\u0000b\":1}", 0, 1},
        {"{\"propertyNames\":{\"pattern\":\"^a\\u0000b$\"}}", "{\"ab\":1}", 0,
         0},
        {"{\"patternProperties\":{\"^x\\u0000\":{\"type\":\"integer\"}}}",
         "{\"x\\u0000y\":\"s\"}", 0, 0},
        {"{\"patternProperties\":{\"^x\\u0000\":{\"type\":\"integer\"}}}",
         "{\"xy\":\"s\"}", 0, 1},
        /* lengths in code points, U+0000 one of them */
        {"{\"maxLength\":1}", "\"\\u0000\"", 0, 1},
        {"{\"maxLength\":1}", "\"\\u0000\\u0000\"", 0, 0},
        {"{\"maxLength\":2}", "\"\\u0000\\u00e9\"", 0, 1},
        {"{\"minLength\":3}", "\"a\\u0000b\"", 0, 1},
        {"{\"minLength\":3}", "\"a\\u0000\"", 0, 0},
        /* patterns: the whole string is matched, the NUL in the pattern
         * (a JSON escape, or a regex \u escape) is a character */
        {"{\"pattern\":\"^a\\u0000b$\"}", "\"a\\u0000b\"", 0, 1},
        {"{\"pattern\":\"^a\\u0000b$\"}", "\"ab\"", 0, 0},
        {"{\"pattern\":\"^a\\\\u0000b$\"}", "\"a\\u0000b\"", 0, 1},
        {"{\"pattern\":\"^[^\\\\u0000]*$\"}", "\"abc\"", 0, 1},
        {"{\"pattern\":\"^[^\\\\u0000]*$\"}", "\"a\\u0000\"", 0, 0},
        {"{\"pattern\":\"b$\"}", "\"a\\u0000b\"", 0, 1},
        {"{\"pattern\":\"^a$\"}", "\"a\\u0000\"", 0, 0},
        /* formats read the whole string */
        {"{\"format\":\"ipv4\"}", "\"1.2.3.4\\u0000\"", 1, 0},
        {"{\"format\":\"ipv4\"}", "\"1.2.3.4\"", 1, 1},
        {"{\"format\":\"date\"}", "\"2020-01-01\\u0000\"", 1, 0},
        {"{\"format\":\"hostname\"}", "\"a\\u0000.com\"", 1, 0},
        {"{\"format\":\"email\"}", "\"a\\u0000@x.com\"", 1, 0},
        {"{\"format\":\"email\"}", "\"\\\"a\\u0000\\\"@x.com\"", 1, 0},
        {"{\"format\":\"email\"}", "\"\\\"a b\\\"@x.com\"", 1, 1},
        {"{\"format\":\"uri\"}", "\"http://x.org/\\u0000\"", 1, 0},
        {"{\"format\":\"uri-template\"}", "\"{\\u0000a}\"", 1, 0},
        {"{\"format\":\"uuid\"}",
         "\"2eb8aa08-aa98-11ea-b4aa-73b441d1638\\u0000\"", 1, 0},
        {"{\"format\":\"json-pointer\"}", "\"/a\\u0000\"", 1, 1},
        /* a format name holding U+0000 is no known format */
        {"{\"format\":\"date\\u0000x\"}", "\"nope\"", 1, 1},
        /* a $ref's %00 is U+0000 in the pointer */
        {"{\"$defs\":{\"a\\u0000\":{\"type\":\"integer\"},"
         "\"a\":{\"type\":\"string\"}},\"$ref\":\"#/$defs/a%00\"}",
         "1", 0, 1},
        {"{\"$defs\":{\"a\\u0000\":{\"type\":\"integer\"},"
         "\"a\":{\"type\":\"string\"}},\"$ref\":\"#/$defs/a%00\"}",
         "\"x\"", 0, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int v = nul_verdict(cases[k].schema, cases[k].instance, cases[k].fmt);
        if (v != cases[k].valid)
            fail_msg("%s / %s: expected %s", cases[k].schema, cases[k].instance,
                     cases[k].valid ? "valid" : "invalid");
    }

    /* Names that cannot hold U+0000 are refused where they are written. */
    expect_bad("{\"type\":\"string\\u0000\"}", TG_ESCHEMA, "/type");
    expect_bad("{\"type\":[\"null\",\"string\\u0000\"]}", TG_ESCHEMA, "/type");
    expect_bad("{\"$ref\":\"#\\u0000\"}", TG_ESCHEMA, "/$ref");
    expect_bad("{\"properties\":{\"a\":{\"$anchor\":\"x\\u0000\"}}}",
               TG_ESCHEMA, "/properties/a/$anchor");
    expect_bad("{\"$id\":\"http://x.org/\\u0000\"}", TG_ESCHEMA, "/$id");
    expect_bad("{\"$dynamicAnchor\":\"x\\u0000\"}", TG_ESCHEMA,
               "/$dynamicAnchor");
    expect_bad("{\"$schema\":\"https://json-schema.org/draft/2020-12/"
               "schema\\u0000\"}",
               TG_ESCHEMA, "/$schema");
    /* A pointer with a %00 the document does not have finds nothing, and
     * an array index does not stop at it. */
    expect_bad("{\"$defs\":{\"a\":{}},\"$ref\":\"#/$defs/a%00\"}", TG_ENOTFOUND,
               "/$ref");
    expect_bad("{\"allOf\":[{}],\"$ref\":\"#/allOf/0%00\"}", TG_ENOTFOUND,
               "/$ref");

    /* Messages and paths show U+0000 as \u0000 (they are C strings). */
    tg__schema_report rep;
    assert_int_equal(nul_report("{\"required\":[\"a\\u0000b\"],"
                                "\"additionalProperties\":{\"type\":"
                                "\"string\"},\"properties\":{\"p\\u0000\":"
                                "false},\"dependentRequired\":{\"q\":["
                                "\"r\\u0000\"]}}",
                                "{\"k\\u0000\":5,\"p\\u0000\":1,\"q\":1}",
                                &rep),
                     0);
    expect_violation(&rep, "", "required",
                     "missing required property 'a\\u0000b'");
    expect_violation(&rep, "/k\\u0000", "type",
                     "/k\\u0000 must be a string, got 5");
    expect_violation(&rep, "/p\\u0000", "false",
                     "/p\\u0000 is not allowed here");
    expect_violation(&rep, "", "dependentRequired",
                     "property 'r\\u0000' is required when 'q' is present");
    tg__schema_report_cleanup(&rep);
    assert_int_equal(nul_report("{\"additionalProperties\":false}",
                                "{\"x\\u0000y\":1}", &rep),
                     0);
    expect_violation(&rep, "", "additionalProperties",
                     "property 'x\\u0000y' is not allowed");
    tg__schema_report_cleanup(&rep);
    assert_int_equal(
        nul_report("{\"enum\":[\"a\\u0000\"]}", "\"b\\u0000\"", &rep), 0);
    expect_violation(&rep, "", "enum",
                     "value must be one of [\"a\\u0000\"], got "
                     "\"b\\u0000\"");
    tg__schema_report_cleanup(&rep);
    assert_int_equal(nul_report("{\"pattern\":\"^a\\u0000$\"}", "\"b\"", &rep),
                     0);
    expect_violation(&rep, "", "pattern",
                     "value must match the pattern ^a\\u0000$, got \"b\"");
    tg__schema_report_cleanup(&rep);
}

/* ------------------------------------------------------------- limits */

static void test_limits(void **state)
{
    (void)state;
    tg_error err;
    const char *cyc[] = {
        "{\"$ref\":\"#\"}",
        "{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/"
        "b\"},\"b\":{\"allOf\":[{\"$ref\":"
        "\"#/$defs/a\"}]}},\"$ref\":\"#/$defs/a\"}",
    };
    for (size_t k = 0; k < 2; k++) {
        tg_schema *s = compile_ok(cyc[k], 0);
        memset(&err, 0, sizeof err);
        assert_int_equal(tg_schema_validate(s, "{}", 2, NULL, &err), TG_ELIMIT);
        assert_int_equal(err.code, TG_ELIMIT);
        tg_schema_free(s);
    }
    /* A recursive schema over a deep instance is fine. */
    tg_schema *tree =
        compile_ok("{\"type\":\"array\",\"items\":{\"$ref\":\"#\"}}", 0);
    size_t depth = 2000;
    char *deep = malloc(2 * depth + 1);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    deep[2 * depth] = '\0';
    memset(&err, 0, sizeof err);
    assert_int_equal(tg_schema_validate(tree, deep, 2 * depth, NULL, &err), 1);
    free(deep);
    tg_schema_free(tree);
    /* Catastrophic backtracking ends, never with a match. */
    tg_schema *re = compile_ok("{\"pattern\":\"^(a|aa)+$\"}", 0);
    char inst[80];
    memset(inst, 'a', sizeof inst);
    inst[0] = '"';
    memcpy(inst + 60, "!\"", 3);
    memset(&err, 0, sizeof err);
    int rc = tg_schema_validate(re, inst, strlen(inst), NULL, &err);
    assert_true(rc == TG_ELIMIT || rc == 0);
    tg_schema_free(re);
    /* A huge enum and a long uniqueItems array stay fast. */
    tg__buf b;
    tg__buf_init(&b, 0);
    tg__buf_puts(&b, "{\"uniqueItems\":true,\"items\":{\"enum\":[");
    for (int k = 0; k < 5000; k++)
        tg__buf_printf(&b, "%s%d", k ? "," : "", k);
    tg__buf_puts(&b, "]}}");
    tg_schema *big = compile_ok(tg__buf_cstr(&b), 0);
    tg__buf_cleanup(&b);
    tg__buf_init(&b, 0);
    tg__buf_puts(&b, "[");
    for (int k = 0; k < 20000; k++)
        tg__buf_printf(&b, "%s%d", k ? "," : "",
                       k % 5000 + (k >= 5000 ? 0 : 0));
    tg__buf_puts(&b, "]");
    memset(&err, 0, sizeof err);
    assert_int_equal(tg_schema_validate(big, b.data, b.len, NULL, &err), 0);
    tg__buf_cleanup(&b);
    tg_schema_free(big);
}

/* ------------------------------------------------------------ values */

static void test_values(void **state)
{
    (void)state;
    assert_int_equal(verdict("{\"enum\":[1.0]}", "1"), 1);
    assert_int_equal(verdict("{\"const\":{\"a\":[1,2]}}", "{\"a\":[1.0,2]}"),
                     1);
    assert_int_equal(
        verdict("{\"const\":{\"a\":1,\"b\":2}}", "{\"b\":2,\"a\":1}"), 1);
    assert_int_equal(verdict("{\"uniqueItems\":true}", "[1,1.0]"), 0);
    assert_int_equal(verdict("{\"uniqueItems\":true}",
                             "[{\"a\":1,\"b\":2},{\"b\":2,\"a\":1}]"),
                     0);
    assert_int_equal(verdict("{\"uniqueItems\":true}", "[\"a\",\"\\u0061b\"]"),
                     1);
    assert_int_equal(verdict("{\"type\":\"integer\"}", "1.0"), 1);
    assert_int_equal(verdict("{\"type\":\"integer\"}", "1e2"), 1);
    assert_int_equal(verdict("{\"type\":\"integer\"}", "1.5"), 0);
    assert_int_equal(verdict("{\"multipleOf\":0.01}", "19.99"), 1);
    assert_int_equal(verdict("{\"multipleOf\":0.0001}", "0.0075"), 1);
    assert_int_equal(verdict("{\"multipleOf\":0.0001}", "0.00751"), 0);
    assert_int_equal(
        verdict("{\"maximum\":9007199254740993}", "9007199254740992.0"), 1);
    assert_int_equal(verdict("{\"exclusiveMaximum\":9223372036854775807}",
                             "9223372036854775807"),
                     0);
    /* Lengths in code points, escapes decoded. */
    assert_int_equal(verdict("{\"maxLength\":2}", "\"\\ud83d\\udca9\\u00e9\""),
                     1);
    assert_int_equal(verdict("{\"minLength\":3}", "\"\xc3\xa9\xc3\xa9\""), 0);
    /* Keys with escapes are found by their decoded name. */
    assert_int_equal(
        verdict("{\"properties\":{\"\xc3\xa9\":{\"type\":\"string\"}}}",
                "{\"\\u00e9\":1}"),
        0);
    assert_int_equal(verdict("{\"required\":[\"a/b\"]}", "{\"a\\/b\":1}"), 1);
}

static void test_regex(void **state)
{
    (void)state;
    /* \d and \w are ASCII in ECMA-262, \s is Unicode. */
    assert_int_equal(verdict("{\"pattern\":\"^\\\\d$\"}", "\"\xd9\xa3\""), 0);
    assert_int_equal(verdict("{\"pattern\":\"^\\\\w$\"}", "\"\xc3\xa9\""), 0);
    assert_int_equal(verdict("{\"pattern\":\"^\\\\s$\"}", "\"\\u00a0\""), 1);
    assert_int_equal(verdict("{\"pattern\":\"^\\\\S$\"}", "\"\\u2003\""), 0);
    /* $ does not match before a final newline; . not across lines. */
    assert_int_equal(verdict("{\"pattern\":\"^abc$\"}", "\"abc\\n\""), 0);
    assert_int_equal(verdict("{\"pattern\":\"^a.c$\"}", "\"a\\u2028c\""), 0);
    /* Unanchored, Unicode properties, \u escapes. */
    assert_int_equal(verdict("{\"pattern\":\"b\"}", "\"abc\""), 1);
    assert_int_equal(
        verdict("{\"pattern\":\"^\\\\p{Letter}+$\"}", "\"\xc3\xa9t\xc3\xa9\""),
        1);
    assert_int_equal(verdict("{\"pattern\":\"^\\\\u00e9$\"}", "\"\xc3\xa9\""),
                     1);
    assert_int_equal(verdict("{\"pattern\":\"^[]$\"}", "\"\""), 0);
    assert_int_equal(
        verdict("{\"patternProperties\":{\"^x-\":{\"type\":\"integer\"}},"
                "\"additionalProperties\":false}",
                "{\"x-a\":1,\"x-b\":2}"),
        1);
    assert_int_equal(
        verdict("{\"patternProperties\":{\"^x-\":{\"type\":\"integer\"}},"
                "\"additionalProperties\":false}",
                "{\"x-a\":1,\"y\":2}"),
        0);
}

static void test_formats(void **state)
{
    (void)state;
    const char *sch = "{\"format\":\"email\"}";
    tg_schema *ann = compile_ok(sch, 0), *as = compile_ok(sch, 1);
    tg_error err;
    assert_int_equal(tg_schema_validate(ann, "\"nope\"", 6, NULL, &err), 1);
    assert_int_equal(tg_schema_validate(as, "\"nope\"", 6, NULL, &err), 0);
    assert_int_equal(tg_schema_validate(as, "\"a@b.co\"", 8, NULL, &err), 1);
    tg_schema_free(ann);
    tg_schema_free(as);
    static const struct {
        const char *fmt, *ok, *bad;
    } f[] = {
        {"date-time", "\"2024-02-29T10:00:00.5+01:00\"",
         "\"2023-02-29T10:00:00Z\""},
        {"date", "\"2000-02-29\"", "\"1900-02-29\""},
        {"time", "\"23:59:60Z\"", "\"22:59:60Z\""},
        {"hostname", "\"example.com\"", "\"-bad.com\""},
        {"ipv4", "\"192.168.0.1\"", "\"192.168.0.01\""},
        {"ipv6", "\"::ffff:1.2.3.4\"", "\"1::2::3\""},
        {"uri", "\"https://x.org/a?b#c\"", "\"//x.org/a\""},
        {"uri-reference", "\"../a/b?c#d\"", "\"a b\""},
        {"uuid", "\"2eb8aa08-aa98-11ea-b4aa-73b441d16380\"",
         "\"2eb8aa08aa98\""},
        {"regex", "\"^a+$\"", "\"(\""},
        {"json-pointer", "\"/a~1b\"", "\"a\""},
        {"duration", "\"P1Y2M\"", "\"P1Y2D\""},
    };
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
        char schema[80];
        snprintf(schema, sizeof schema, "{\"format\":\"%s\"}", f[k].fmt);
        tg_schema *s = compile_ok(schema, 1);
        memset(&err, 0, sizeof err);
        if (tg_schema_validate(s, f[k].ok, strlen(f[k].ok), NULL, &err) != 1)
            fail_msg("%s should accept %s", f[k].fmt, f[k].ok);
        if (tg_schema_validate(s, f[k].bad, strlen(f[k].bad), NULL, &err) != 0)
            fail_msg("%s should refuse %s", f[k].fmt, f[k].bad);
        tg_schema_free(s);
    }
}

/* ---------------------------------------------------------- public API */

static void test_public_text(void **state)
{
    (void)state;
    tg_schema *s = compile_ok("{\"properties\":{\"a\":{\"type\":\"string\"},"
                              "\"b\":{\"minimum\":0}}}",
                              0);
    tg_error err;
    char *lines = (char *)1;
    assert_int_equal(tg_schema_validate(s, "{\"a\":\"x\"}", 9, &lines, &err),
                     1);
    assert_null(lines);
    const char *bad = "{\"a\":1,\"b\":-1}";
    assert_int_equal(tg_schema_validate(s, bad, strlen(bad), &lines, &err), 0);
    assert_non_null(lines);
    assert_string_equal(lines,
                        "{\"path\":\"/a\",\"keyword\":\"type\",\"message\":"
                        "\"/a must be a string, got 1\"}\n"
                        "{\"path\":\"/b\",\"keyword\":\"minimum\",\"message\":"
                        "\"/b must be >= 0, got -1\"}\n");
    tg_free(lines);
    memset(&err, 0, sizeof err);
    assert_int_equal(tg_schema_validate(s, "{\"a\":", 5, &lines, &err),
                     TG_EPARSE);
    assert_null(lines);
    assert_int_equal(err.code, TG_EPARSE);
    /* A large instance (past the stack token buffer). */
    tg__buf b;
    tg__buf_init(&b, 0);
    tg__buf_puts(&b, "{\"a\":\"x\",\"c\":[");
    for (int k = 0; k < 1000; k++)
        tg__buf_printf(&b, "%s%d", k ? "," : "", k);
    tg__buf_puts(&b, "]}");
    assert_int_equal(tg_schema_validate(s, b.data, b.len, NULL, &err), 1);
    tg__buf_cleanup(&b);
    tg_schema_free(s);
    tg_schema_free(NULL);
}

static void test_types_at(void **state)
{
    (void)state;
    tg_schema *s = compile_ok(
        "{\"$defs\":{\"n\":{\"type\":[\"integer\",\"null\"]}},"
        "\"properties\":{\"count\":{\"$ref\":\"#/$defs/n\"},"
        "\"flag\":{\"type\":\"boolean\"},"
        "\"list\":{\"type\":\"array\",\"items\":{\"type\":\"number\"}},"
        "\"o\":{\"properties\":{\"x~y\":{\"type\":\"string\"}}}}}",
        0);
    assert_int_equal(tg__schema_types_at(s, "/count"),
                     TG_SCHEMA_T_INTEGER | TG_SCHEMA_T_NULL);
    assert_int_equal(tg__schema_types_at(s, "/flag"), TG_SCHEMA_T_BOOLEAN);
    assert_int_equal(tg__schema_types_at(s, "/list"), TG_SCHEMA_T_ARRAY);
    assert_int_equal(tg__schema_types_at(s, "/list/3"), TG_SCHEMA_T_NUMBER);
    assert_int_equal(tg__schema_types_at(s, "/o/x~0y"), TG_SCHEMA_T_STRING);
    assert_int_equal(tg__schema_types_at(s, "/nope"), 0);
    assert_int_equal(tg__schema_types_at(s, ""), 0);
    tg_schema_free(s);
}

/* ------------------------------------------------------- concurrency */

typedef struct job {
    const tg_schema *s;
    int bad;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    for (int k = 0; k < 2000; k++) {
        char inst[64];
        int n = snprintf(inst, sizeof inst, "{\"id\":\"ab-%d\",\"n\":%d}", k,
                         k % 7);
        tg_error err;
        int want = k % 7 <= 5;
        if (tg_schema_validate(j->s, inst, (size_t)n, NULL, &err) != want)
            j->bad++;
    }
    return NULL;
}

static void test_concurrent(void **state)
{
    (void)state;
    tg_schema *s =
        compile_ok("{\"properties\":{\"id\":{\"pattern\":\"^[a-z]+-[0-9]+$\"},"
                   "\"n\":{\"maximum\":5}},\"required\":[\"id\"]}",
                   0);
    pthread_t th[4];
    job jobs[4];
    for (int k = 0; k < 4; k++) {
        jobs[k].s = s;
        jobs[k].bad = 0;
        assert_int_equal(pthread_create(&th[k], NULL, worker, &jobs[k]), 0);
    }
    for (int k = 0; k < 4; k++) {
        pthread_join(th[k], NULL);
        assert_int_equal(jobs[k].bad, 0);
    }
    tg_schema_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_report_cap),
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_nul),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_regex),
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_public_text),
        cmocka_unit_test(test_types_at),
        cmocka_unit_test(test_concurrent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
