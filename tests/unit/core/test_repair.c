/* SPDX-License-Identifier: MIT */
/*
 * test_repair.c - the text repairs of limits.repair (repair.c): what each
 * fixes, what they combine to fix, what they must leave alone, and that
 * text cut anywhere - inside a string, a key, a number, a literal, an
 * escape, a UTF-8 sequence, an array, an object or a fence - is reported as
 * cut and never completed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "jtape.h"
#include "repair.h"
#include "toolgate.h"

typedef struct repair_case {
    const char *in;
    const char *out; /* NULL: not repairable */
    unsigned done;
} repair_case;

static void test_repairs(void **state)
{
    (void)state;
    static const repair_case cases[] = {
        {"```json\n{\"a\":1}\n```", "{\"a\":1}", TG_REPAIR_FENCE},
        {"  ```JSON\n{\"a\":1}\n```  ", "{\"a\":1}", TG_REPAIR_FENCE},
        {"```{\"a\":1}```", "{\"a\":1}", TG_REPAIR_FENCE},
        {"Here you go:\n```\n{\"a\":1}\n```\nDone.", "{\"a\":1}",
         TG_REPAIR_FENCE},
        /* a fence inside the fenced JSON's strings is content */
        {"```json\n{\"content\":\"# T\\n```c\\nint x;\\n```\\n\"}\n```",
         "{\"content\":\"# T\\n```c\\nint x;\\n```\\n\"}", TG_REPAIR_FENCE},
        {"{\"a\":[1,2,],}", "{\"a\":[1,2]}", TG_REPAIR_TRAILING_COMMAS},
        {"{\"s\":\"a,}\",}", "{\"s\":\"a,}\"}", TG_REPAIR_TRAILING_COMMAS},
        {" {\"a\":{\"b\":[{},],},} \n", "{\"a\":{\"b\":[{}]}}",
         TG_REPAIR_TRAILING_COMMAS},
        {"```json\n{\"a\":[1,],\"b\":\"x\",}\n```", "{\"a\":[1],\"b\":\"x\"}",
         TG_REPAIR_FENCE | TG_REPAIR_TRAILING_COMMAS},
        /* left alone: not repairable */
        {"{\"a\":1}}", NULL, 0},
        {"{\"a\":1} x", NULL, 0},
        {"{'a':1}", NULL, 0},
        {"{a:1}", NULL, 0},
        {"", NULL, 0},
        {"hello", NULL, 0},
        {"```\nnot json\n```", NULL, 0},
        {"```json\n{\"a\":1} trailing\n```", NULL, 0},
        {"{\"a\":1]", NULL, 0},
        {"[1,2,]", NULL, 0}, /* an array is not arguments */
        /* text that starts as JSON is not fenced: a fence in it is in a
         * string (this is a prefix of {"x":"```{}"}) */
        {"{\"x\":\"```{}", NULL, 0},
        {"\"say ```{\"a\":1}```", NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tg__buf out;
        unsigned done = 99;
        tg__buf_init(&out, 0);
        int rc = tg__repair_args_text(cases[i].in, strlen(cases[i].in), &out,
                                      &done, NULL);
        if (cases[i].out == NULL) {
            if (rc != 0 || done != 0)
                fail_msg("repaired '%s' into '%s'", cases[i].in,
                         tg__buf_cstr(&out));
        } else {
            if (rc != 1)
                fail_msg("did not repair '%s'", cases[i].in);
            assert_string_equal(tg__buf_cstr(&out), cases[i].out);
            assert_int_equal(done, cases[i].done);
        }
        tg__buf_cleanup(&out);
    }
}

typedef struct cut_case {
    const char *in;
    const char *inside;
    int line, column;
} cut_case;

/* Cut text: never completed, reported with what was open and where. */
static void test_cut_reported(void **state)
{
    (void)state;
    static const cut_case cases[] = {
        {"{\"a\": 12", "a number", 1, 9},
        {"{\"a\": -", "a number", 1, 8},
        {"{\"a\": 1.5e", "a number", 1, 11},
        {"{\"a\": \"1", "a string", 1, 9},
        {"{\"a\": tr", "a literal", 1, 9},
        {"{\"a\": nul", "a literal", 1, 10},
        {"{\"a\": 12 ", "an object", 1, 10},
        {"{\"a\":", "an object", 1, 6},
        {"{\"a\":1,", "an object", 1, 8},
        {"{\"a\":1,\"b\"", "an object", 1, 11},
        {"{\"a\":1,\"bc", "a key", 1, 11},
        {"{\"a\":{\"b\":[1,2", "a number", 1, 15},
        {"{\"a\":{\"b\":[1,2,", "an array", 1, 16},
        {"{\"p\":\"C:\\\\", "a string", 1, 11},
        {"{\"p\":\"C:\\", "a string", 1, 10},
        {"{\"p\":\"\\u00", "a string", 1, 11},
        {"{\"c\":\"line 1\nline 2\n  li", "a string", 3, 5},
        {"{\"e\":\"caf\xc3", "a string", 1, 11}, /* half a character */
        {"{\"e\":\"caf\xc3\xa9", "a string", 1, 11},
        {"[1,", "an array", 1, 4},
        {"```json\n{\"a\":1,\"b\":\"x", "a string", 2, 14},
        {"```json\n{\"a\":1}", "a Markdown code fence", 2, 8},
        {"```json\n{\"a\":1}\n", "a Markdown code fence", 3, 1},
        {"```json\n{\"a\":1}\n``", "a Markdown code fence", 3, 3},
        {"```json\n{\"a\":[1,],\"b\":\"x", "a string", 2, 17},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tg__buf out;
        unsigned done = 99;
        tg__repair_cut cut;
        tg__buf_init(&out, 0);
        int rc = tg__repair_args_text(cases[i].in, strlen(cases[i].in), &out,
                                      &done, &cut);
        if (rc != 0 || done != 0)
            fail_msg("repaired cut '%s' into '%s'", cases[i].in,
                     tg__buf_cstr(&out));
        if (cut.inside == NULL || strcmp(cut.inside, cases[i].inside) != 0 ||
            cut.line != cases[i].line || cut.column != cases[i].column)
            fail_msg("'%s': cut inside %s at %d:%d, expected %s at %d:%d",
                     cases[i].in, cut.inside ? cut.inside : "(not cut)",
                     cut.line, cut.column, cases[i].inside, cases[i].line,
                     cases[i].column);
        tg__buf_cleanup(&out);
    }
    /* Not cut: nothing reported. */
    tg__buf out;
    unsigned done;
    tg__repair_cut cut;
    tg__buf_init(&out, 0);
    assert_int_equal(tg__repair_args_text("{'a':1}", 7, &out, &done, &cut), 0);
    assert_null(cut.inside);
    assert_int_equal(tg__repair_args_text("{\"a\":1,}", 8, &out, &done, &cut),
                     1);
    assert_null(cut.inside);
    tg__buf_cleanup(&out);
}

/* Realistic calls, cut at every byte: no prefix is ever repaired into
 * arguments, every prefix past the opening brace is reported as cut, and
 * the whole text still repairs (or, being valid, needs nothing). */
static void test_every_cut_point(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        unsigned whole; /* what the whole text needs; 0: it is valid */
    } calls[] = {
        {"{\"path\": \"src/main.c\", \"content\": \"#include <stdio.h>\\n\\n"
         "int main(void)\\n{\\n    printf(\\\"h\\\\u00e9llo, %s\\\\n\\\", "
         "\\\"w\\\");\\n    return 0;\\n}\\n\"}",
         0},
        {"{\n  \"query\": {\"filter\": {\"age\": [18, 65.5, -1e3], "
         "\"active\": true, \"tags\": null}},\n  \"limit\": 1234567,\n  "
         "\"name\": \"J\\u00fcrgen \\ud83d\\ude00 \xe2\x82\xac\",\n}",
         TG_REPAIR_TRAILING_COMMAS},
        {"```json\n{\"cmd\": [\"ls\", \"-la\",], \"cwd\": \"C:\\\\tmp\\\\\", "
         "\"env\": {\"A\": \"\\\"q\\\"\"}}\n```",
         TG_REPAIR_FENCE | TG_REPAIR_TRAILING_COMMAS},
        {"Sure:\n```\n{\"text\": \"a ```fence``` inside\", \"n\": 0}\n```\n"
         "That is all.",
         TG_REPAIR_FENCE},
    };
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
        const char *t = calls[c].text;
        size_t len = strlen(t);
        const char *brace = strchr(t, '{');
        tg__buf out;
        unsigned done;
        tg__repair_cut cut;
        tg__buf_init(&out, 0);
        /* The whole text. */
        int rc = tg__repair_args_text(t, len, &out, &done, &cut);
        if (calls[c].whole == 0) {
            tg__jtape tape;
            assert_int_equal(tg__jtape_parse(t, len, 0, &tape, NULL), 0);
            tg__jtape_free(&tape);
            assert_int_equal(rc, 0);
        } else {
            assert_int_equal(rc, 1);
            assert_int_equal(done, calls[c].whole);
        }
        /* Every proper prefix that ends before the value (and its fence)
         * closed. */
        const char *end = strrchr(t, '}') + 1;
        if (calls[c].whole & TG_REPAIR_FENCE)
            end = strstr(end, "```") + 3;
        for (size_t n = 0; t + n < end; n++) {
            rc = tg__repair_args_text(t, n, &out, &done, &cut);
            if (rc != 0 || done != 0)
                fail_msg("call %zu cut at %zu: repaired '%.*s' into '%s'", c, n,
                         (int)n, t, tg__buf_cstr(&out));
            if (t + n > brace && cut.inside == NULL)
                fail_msg("call %zu cut at %zu ('%.*s'): not reported as cut", c,
                         n, (int)n, t);
        }
        tg__buf_cleanup(&out);
    }
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(tg__repair_name(TG_REPAIR_TRAILING_COMMAS),
                        "dropped trailing commas");
    assert_non_null(strstr(tg__repair_name(TG_REPAIR_FENCE), "fence"));
    /* still named: results journaled before it was withdrawn carry it */
    assert_non_null(strstr(tg__repair_name(TG_REPAIR_CLOSED), "truncated"));
    assert_non_null(strstr(tg__repair_name(TG_REPAIR_COERCED), "coerced"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repairs),
        cmocka_unit_test(test_cut_reported),
        cmocka_unit_test(test_every_cut_point),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
