/* SPDX-License-Identifier: MIT */
/*
 * test_metaschema.c - the built-in metaschemas (internal.h,
 * tg__metaschemas): a schema that $refs the metaschema of draft 2020-12,
 * 2019-09 or 7, or one of the vocabulary metaschemas, compiles through the
 * public API with no options (no remotes, nothing fetched) and tells a
 * valid schema from an invalid one; every built-in document is JSON under
 * the URL it is listed by; a custom metaschema (given as a document) that
 * builds on the vocabulary metaschemas both works as `$schema` and
 * validates schemas; a caller's own document of the same URL wins over the
 * built-in one; a metaschema that is not built in still fails with
 * TG_ENOTFOUND.
 */
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

/* Compiles text through the public entry point with no options. */
static tg_schema *compile_ok(const char *text)
{
    tg_schema *s = NULL;
    tg_error err;
    memset(&err, 0, sizeof err);
    if (tg_schema_compile(text, strlen(text), NULL, &s, &err) != 0)
        fail_msg("compile of %s failed: %s", text, err.message);
    return s;
}

/* The public verdict of instance against s (1 valid, 0 invalid); an
 * invalid one must come with violations. */
static int verdict(const tg_schema *s, const char *instance)
{
    char *lines = NULL;
    tg_error err;
    memset(&err, 0, sizeof err);
    int rc = tg_schema_validate(s, instance, strlen(instance), &lines, &err);
    if (rc < 0)
        fail_msg("validate %s: %s", instance, err.message);
    assert_true(rc == 1 ? lines == NULL : lines != NULL);
    tg_free(lines);
    return rc;
}

/* Schemas every draft's metaschema accepts, and ones it refuses. */
static const char *const good_schemas[] = {
    "true",
    "{}",
    "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\","
    "\"minLength\":1}},\"required\":[\"path\"],"
    "\"additionalProperties\":false}",
    "{\"anyOf\":[{\"type\":\"integer\",\"minimum\":0},{\"enum\":[null]}]}",
    "{\"type\":[\"string\",\"null\"],\"pattern\":\"^a\",\"format\":\"uri\"}",
};
static const char *const bad_schemas[] = {
    "{\"type\":\"objekt\"}",
    "{\"minLength\":-1}",
    "{\"required\":\"path\"}",
    "{\"properties\":{\"a\":{\"type\":5}}}",
    "{\"anyOf\":[]}",
    "{\"format\":3}",
    "5",
};

static void check_metaschema(const char *url)
{
    char text[256];
    snprintf(text, sizeof text, "{\"$ref\":\"%s\"}", url);
    tg_schema *s = compile_ok(text);
    for (size_t k = 0; k < sizeof good_schemas / sizeof good_schemas[0]; k++)
        if (verdict(s, good_schemas[k]) != 1)
            fail_msg("%s refuses %s", url, good_schemas[k]);
    for (size_t k = 0; k < sizeof bad_schemas / sizeof bad_schemas[0]; k++)
        if (verdict(s, bad_schemas[k]) != 0)
            fail_msg("%s accepts %s", url, bad_schemas[k]);
    tg_schema_free(s);
}

static void test_drafts(void **state)
{
    (void)state;
    check_metaschema("https://json-schema.org/draft/2020-12/schema");
    check_metaschema("https://json-schema.org/draft/2019-09/schema");
    check_metaschema("http://json-schema.org/draft-07/schema#");
    check_metaschema("http://json-schema.org/draft-07/schema");
    check_metaschema("https://json-schema.org/draft-07/schema#");

    /* What the drafts disagree on: items as an array is a tuple in 2019-09
     * and 7, not a schema in 2020-12; $defs is checked in 2020-12 and
     * 2019-09, definitions in all three. */
    const char *tuple = "{\"items\":[{\"type\":\"string\"}]}";
    tg_schema *s = compile_ok(
        "{\"$ref\":\"https://json-schema.org/draft/2020-12/schema\"}");
    assert_int_equal(verdict(s, tuple), 0);
    assert_int_equal(verdict(s, "{\"$defs\":{\"a\":{\"type\":1}}}"), 0);
    assert_int_equal(verdict(s, "{\"prefixItems\":[{}],\"items\":false}"), 1);
    tg_schema_free(s);
    s = compile_ok(
        "{\"$ref\":\"https://json-schema.org/draft/2019-09/schema\"}");
    assert_int_equal(verdict(s, tuple), 1);
    assert_int_equal(verdict(s, "{\"$defs\":{\"a\":{\"type\":1}}}"), 0);
    tg_schema_free(s);
    s = compile_ok("{\"$ref\":\"http://json-schema.org/draft-07/schema#\"}");
    assert_int_equal(verdict(s, tuple), 1);
    assert_int_equal(verdict(s, "{\"definitions\":{\"a\":{\"type\":1}}}"), 0);
    tg_schema_free(s);

    /* The metaschema as a tool's argument schema: a tool that takes a
     * schema, with $schema naming the draft too. */
    s = compile_ok(
        "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
        "\"type\":\"object\",\"required\":[\"schema\"],\"properties\":{"
        "\"schema\":{\"$ref\":\"https://json-schema.org/draft/2020-12/"
        "schema\"}}}");
    assert_int_equal(verdict(s, "{\"schema\":{\"type\":\"string\"}}"), 1);
    assert_int_equal(verdict(s, "{\"schema\":{\"type\":\"strin\"}}"), 0);
    tg_schema_free(s);
}

static void test_vocabularies(void **state)
{
    (void)state;
    static const struct {
        const char *url, *good, *bad;
    } v[] = {
        {"https://json-schema.org/draft/2020-12/meta/core",
         "{\"$id\":\"https://example.com/x\",\"$anchor\":\"a\"}",
         "{\"$anchor\":\"1 bad\"}"},
        {"https://json-schema.org/draft/2020-12/meta/applicator",
         "{\"allOf\":[{}]}", "{\"allOf\":[]}"},
        {"https://json-schema.org/draft/2020-12/meta/unevaluated",
         "{\"unevaluatedProperties\":false}", "{\"unevaluatedItems\":\"no\"}"},
        {"https://json-schema.org/draft/2020-12/meta/validation",
         "{\"maxLength\":3}", "{\"maxLength\":-3}"},
        {"https://json-schema.org/draft/2020-12/meta/meta-data",
         "{\"title\":\"t\",\"deprecated\":true}", "{\"title\":7}"},
        {"https://json-schema.org/draft/2020-12/meta/format-annotation",
         "{\"format\":\"date\"}", "{\"format\":[]}"},
        {"https://json-schema.org/draft/2020-12/meta/format-assertion",
         "{\"format\":\"date\"}", "{\"format\":[]}"},
        {"https://json-schema.org/draft/2020-12/meta/content",
         "{\"contentMediaType\":\"application/json\"}",
         "{\"contentEncoding\":64}"},
        {"https://json-schema.org/draft/2019-09/meta/core",
         "{\"$recursiveAnchor\":true}", "{\"$recursiveAnchor\":\"yes\"}"},
        {"https://json-schema.org/draft/2019-09/meta/applicator",
         "{\"items\":[{}]}", "{\"items\":7}"},
        {"https://json-schema.org/draft/2019-09/meta/validation",
         "{\"minContains\":0}", "{\"minContains\":-1}"},
        {"https://json-schema.org/draft/2019-09/meta/meta-data",
         "{\"readOnly\":true}", "{\"readOnly\":1}"},
        {"https://json-schema.org/draft/2019-09/meta/format",
         "{\"format\":\"uri\"}", "{\"format\":1}"},
        {"https://json-schema.org/draft/2019-09/meta/content",
         "{\"contentEncoding\":\"base64\"}", "{\"contentMediaType\":1}"},
    };
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        char text[256];
        snprintf(text, sizeof text, "{\"$ref\":\"%s\"}", v[k].url);
        tg_schema *s = compile_ok(text);
        if (verdict(s, v[k].good) != 1 || verdict(s, v[k].bad) != 0)
            fail_msg("%s: %s should pass and %s fail", v[k].url, v[k].good,
                     v[k].bad);
        tg_schema_free(s);
    }
}

/* Every built-in document parses, is an object, and has the $id of the URL
 * it is listed by (draft 7's with its empty fragment). */
static void test_table(void **state)
{
    (void)state;
    assert_true(tg__nmetaschemas >= 17);
    for (size_t k = 0; k < tg__nmetaschemas; k++) {
        const tg__metaschema *m = &tg__metaschemas[k];
        assert_int_equal(strlen(m->text), m->len);
        json_error_t jerr;
        json_t *doc = json_loadb(m->text, m->len, 0, &jerr); /* new ref */
        if (doc == NULL)
            fail_msg("%s: %s", m->url, jerr.text);
        const char *id = json_string_value(json_object_get(doc, "$id"));
        assert_non_null(id);
        size_t n = strlen(id);
        if (n > 0 && id[n - 1] == '#')
            n--;
        /* The https alias of draft 7 carries the http $id. */
        const char *url = m->url;
        if (strcmp(url, "https://json-schema.org/draft-07/schema") == 0)
            url = "http://json-schema.org/draft-07/schema";
        if (strlen(url) != n || memcmp(url, id, n) != 0)
            fail_msg("listed as %s, $id %s", m->url, id);
        json_decref(doc);
    }
}

/* A custom metaschema that builds on the vocabulary metaschemas: as
 * $schema it turns the format-assertion vocabulary on; as a $ref target it
 * validates schemas through the built-in core and format-assertion
 * metaschemas. It is given as a document (as a caller's bundle, or a file
 * under --remote); what it refers to is built in. */
static void test_custom(void **state)
{
    (void)state;
    json_t *docs =
        json_pack(/* new ref */
                  "{s:{s:s,s:s,s:{s:b,s:b,s:b,s:b},s:s,s:[{s:s},{s:s},{s:s},{s:"
                  "s}]}}",
                  "https://example.com/meta", "$schema",
                  "https://json-schema.org/draft/2020-12/schema", "$id",
                  "https://example.com/meta", "$vocabulary",
                  "https://json-schema.org/draft/2020-12/vocab/core", 1,
                  "https://json-schema.org/draft/2020-12/vocab/applicator", 1,
                  "https://json-schema.org/draft/2020-12/vocab/validation", 1,
                  "https://json-schema.org/draft/2020-12/vocab/"
                  "format-assertion",
                  1, "$dynamicAnchor", "meta", "allOf", "$ref",
                  "https://json-schema.org/draft/2020-12/meta/core", "$ref",
                  "https://json-schema.org/draft/2020-12/meta/applicator",
                  "$ref",
                  "https://json-schema.org/draft/2020-12/meta/validation",
                  "$ref",
                  "https://json-schema.org/draft/2020-12/meta/"
                  "format-assertion");
    assert_non_null(docs);
    tg_error err;
    memset(&err, 0, sizeof err);

    json_t *sch = json_pack("{s:s,s:s}", "$schema", /* new ref */
                            "https://example.com/meta", "format", "ipv4");
    tg_schema *s = NULL;
    assert_int_equal(tg__schema_compile_docs(sch, NULL, docs, &s, &err), 0);
    tg__schema_report rep;
    memset(&rep, 0, sizeof rep);
    json_t *ip = json_string("1.2.3.4");      /* new ref */
    json_t *notip = json_string("1.2.3.999"); /* new ref */
    assert_int_equal(tg__schema_validate_json(s, ip, &rep, &err), 1);
    assert_int_equal(tg__schema_validate_json(s, notip, &rep, &err), 0);
    tg__schema_report_cleanup(&rep);
    tg_schema_free(s);
    json_decref(sch);

    sch = json_pack("{s:s}", "$ref", "https://example.com/meta");
    assert_int_equal(tg__schema_compile_docs(sch, NULL, docs, &s, &err), 0);
    json_t *good = json_pack("{s:s,s:i}", "format", "ipv4", /* new ref */
                             "minLength", 1);
    json_t *bad = json_pack("{s:i}", "format", 4); /* new ref */
    memset(&rep, 0, sizeof rep);
    assert_int_equal(tg__schema_validate_json(s, good, &rep, &err), 1);
    assert_int_equal(tg__schema_validate_json(s, bad, &rep, &err), 0);
    assert_true(rep.n > 0);
    assert_string_equal(rep.v[0].path, "/format");
    tg__schema_report_cleanup(&rep);
    tg_schema_free(s);
    json_decref(sch);
    json_decref(good);
    json_decref(bad);
    json_decref(ip);
    json_decref(notip);
    json_decref(docs);
}

/* The caller's documents come first: a document under the 2020-12
 * metaschema's URL replaces the built-in one. */
static void test_caller_first(void **state)
{
    (void)state;
    json_t *docs = json_pack("{s:{s:s}}", /* new ref */
                             "https://json-schema.org/draft/2020-12/schema",
                             "type", "string");
    json_t *sch = json_pack(/* new ref */
                            "{s:s}", "$ref",
                            "https://json-schema.org/draft/2020-12/schema");
    tg_schema *s = NULL;
    tg_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(tg__schema_compile_docs(sch, NULL, docs, &s, &err), 0);
    json_t *str = json_string("x"); /* new ref */
    json_t *obj = json_object();    /* new ref */
    assert_int_equal(tg__schema_validate_json(s, str, NULL, &err), 1);
    assert_int_equal(tg__schema_validate_json(s, obj, NULL, &err), 0);
    tg_schema_free(s);
    json_decref(str);
    json_decref(obj);
    json_decref(sch);
    json_decref(docs);
}

/* What is not built in is still not found, and nothing is fetched. */
static void test_not_built_in(void **state)
{
    (void)state;
    static const char *const refs[] = {
        "{\"$ref\":\"https://json-schema.org/draft/2019-09/hyper-schema\"}",
        "{\"$ref\":\"https://json-schema.org/draft/2020-12/meta/nope\"}",
        "{\"$ref\":\"http://json-schema.org/draft-04/schema#\"}",
        "{\"$ref\":\"https://json-schema.org/draft/2020-12/schema/\"}",
    };
    for (size_t k = 0; k < sizeof refs / sizeof refs[0]; k++) {
        tg_schema *s = NULL;
        tg_error err;
        memset(&err, 0, sizeof err);
        int rc = tg_schema_compile(refs[k], strlen(refs[k]), NULL, &s, &err);
        if (rc != TG_ENOTFOUND)
            fail_msg("%s: %s (%s)", refs[k], tg_err_name(rc), err.message);
        assert_null(s);
        assert_string_equal(err.pointer, "/$ref");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drafts),
        cmocka_unit_test(test_vocabularies),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_custom),
        cmocka_unit_test(test_caller_first),
        cmocka_unit_test(test_not_built_in),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
