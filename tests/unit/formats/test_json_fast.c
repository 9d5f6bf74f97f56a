/* SPDX-License-Identifier: MIT */
/*
 * test_json_fast.c - the fast JSON reader and cursor (json_fast.c): it must
 * read every plainly valid document exactly as jansson does (types, strings,
 * member order), and give up on everything jansson might reject or read
 * differently, so the callers' fallback to jansson decides.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "json_fast.h"

/* The fast reader accepted text: jansson must read the same value. */
static void same_as_jansson(const char *text, size_t len, int rejdup)
{
    json_t *fast = tg__json_fast_load(text, len, rejdup); /* new ref */
    if (fast == NULL)
        fail_msg("fast reader gave up on plain JSON: %.*s", (int)len, text);
    json_error_t jerr;
    json_t *slow = json_loadb(
        text, len, JSON_DECODE_ANY | (rejdup ? JSON_REJECT_DUPLICATES : 0),
        &jerr); /* new ref */
    assert_non_null(slow);
    char *a = json_dumps(fast, JSON_COMPACT | JSON_ENCODE_ANY);
    char *b = json_dumps(slow, JSON_COMPACT | JSON_ENCODE_ANY);
    assert_string_equal(a, b);
    assert_true(json_equal(fast, slow));
    free(a);
    free(b);
    json_decref(fast);
    json_decref(slow);
}

static void test_accepts_plain_json(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "{}",
        "[]",
        " \t\r\n{\"a\":1} \n",
        "0",
        "-0",
        "-12",
        "9223372036854775807",
        "-9223372036854775808",
        "1.5",
        "-0.0",
        "1e3",
        "1E+3",
        "2.5e-3",
        "1e-400", /* underflow: jansson reads 0; the fast reader defers */
        "333333333.33333329",
        "true",
        "false",
        "null",
        "\"\"",
        "\"plain\"",
        "\"esc \\\" \\\\ \\/ \\b \\f \\n \\r \\t\"",
        "\"\\u00e9\\u20AC\\ud83d\\ude00 \\u0001\"",
        "\"utf8 \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \x7F\"",
        "{\"b\":1,\"a\":2,\"c\":{\"z\":[1,2,{\"y\":null}],\"x\":\"s\"}}",
        "{\"k\\u00e9y\":\"v\",\"\\n\":[true,false]}",
        "[[[[[[[[[[1]]]]]]]]]]",
        "{\"path\":\"src/"
        "module_1\",\"pattern\":\"TODO|FIXME\",\"max_results\":51,"
        "\"case_sensitive\":true,\"include\":[\"*.c\",\"*.h\"],"
        "\"context_lines\":2,\"mode\":\"content\"}",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        if (strcmp(docs[i], "1e-400") == 0) {
            /* ERANGE: left to jansson. */
            assert_null(tg__json_fast_load(docs[i], strlen(docs[i]), 0));
            continue;
        }
        same_as_jansson(docs[i], strlen(docs[i]), 0);
        same_as_jansson(docs[i], strlen(docs[i]), 1);
    }
    /* Duplicate keys without rejection: the last value wins, in the first
     * key's place, as in jansson. */
    same_as_jansson("{\"a\":1,\"b\":2,\"a\":3}", 19, 0);
}

static void test_gives_up(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "   ",
        "{",
        "[1,]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{a:1}",
        "01",
        "-",
        "1.",
        ".5",
        "1e",
        "+1",
        "tru",
        "truex",
        "nul",
        "[1 2]",
        "{} {}",
        "\"\\u0000\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"\\x\"",
        "\"\\u12g4\"",
        "\"unterminated",
        "\"tab\there\"",
        "\"bad \xFF utf8\"",
        "\"overlong \xC0\xAF\"",
        "\"surrogate \xED\xA0\x80\"",
        "\"too big \xF4\x90\x80\x80\"",
        "\xEF\xBB\xBF{}",
        "99999999999999999999",
        "-99999999999999999999",
        "1e400",
        "0.0000000000000000000000000000000000000000000000000000000000000001",
        "NaN",
        "[Infinity]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *v = tg__json_fast_load(bad[i], strlen(bad[i]), 0);
        if (v != NULL)
            fail_msg("fast reader accepted '%s'", bad[i]);
    }
    /* A NUL byte anywhere. */
    assert_null(tg__json_fast_load("[1,\0 2]", 7, 0));
    assert_null(tg__json_fast_load("{}\0", 3, 0));
    assert_null(tg__json_fast_load("\"a\0b\"", 5, 0));
    /* Duplicate keys when they are rejected, also nested. */
    assert_null(tg__json_fast_load("{\"a\":1,\"a\":2}", 13, 1));
    assert_null(tg__json_fast_load("{\"x\":{\"a\":1,\"\\u0061\":2}}", 24, 1));
    assert_null(tg__json_fast_load(NULL, 0, 0));
}

static void test_depth(void **state)
{
    (void)state;
    char deep[2 * 600 + 1];
    for (int n = 500; n <= 600; n += 100) {
        memset(deep, '[', (size_t)n);
        memset(deep + n, ']', (size_t)n);
        json_t *v = tg__json_fast_load(deep, 2 * (size_t)n, 0);
        if (n <= 512)
            same_as_jansson(deep, 2 * (size_t)n, 0);
        else
            assert_null(v); /* deeper than its limit: jansson decides */
        json_decref(v);
    }
}

/* Long strings with escapes spread over them grow the scratch buffer. */
static void test_long_strings(void **state)
{
    (void)state;
    size_t groups = 20000, n = 0;
    char *s = malloc(groups * 11 + 3);
    s[n++] = '"';
    static const char group[] = "xyz\\u00e9\\n"; /* 11 bytes */
    for (size_t i = 0; i < groups; i++) {
        /* odd groups whole, even ones without the "xyz" */
        size_t skip = i % 2 ? 0 : 3;
        memcpy(s + n, &group[skip], 11 - skip);
        n += 11 - skip;
    }
    s[n++] = '"';
    same_as_jansson(s, n, 0);
    free(s);
}

static void test_cursor(void **state)
{
    (void)state;
    const char *text = "{ \"a\\u0062\" : [1, {\"x\": \"y\"}, \"z\"], \"c\": "
                       "\"d\\n\", \"e\": {} }";
    tg__jcur c;
    tg__jcur_init(&c, text, strlen(text));
    assert_int_equal(tg__jcur_take(&c, '{'), 0);
    int first = 1;
    const char *k, *s;
    size_t kn, n;
    assert_int_equal(tg__jcur_member(&c, &first, &k, &kn), 1);
    assert_int_equal(kn, 2);
    assert_memory_equal(k, "ab", 2);
    assert_int_equal(tg__jcur_take(&c, '['), 0);
    int efirst = 1, count = 0;
    while (tg__jcur_element(&c, &efirst) == 1) {
        assert_int_equal(tg__jcur_skip(&c), 0);
        count++;
    }
    assert_int_equal(count, 3);
    assert_int_equal(tg__jcur_member(&c, &first, &k, &kn), 1);
    assert_memory_equal(k, "c", 1);
    assert_int_equal(tg__jcur_string(&c, &s, &n), 0);
    assert_int_equal(n, 2);
    assert_memory_equal(s, "d\n", 2);
    assert_int_equal(tg__jcur_member(&c, &first, &k, &kn), 1);
    assert_int_equal(tg__jcur_skip(&c), 0);
    assert_int_equal(tg__jcur_member(&c, &first, &k, &kn), 0);
    assert_int_equal(tg__jcur_end(&c), 0);
    tg__jcur_cleanup(&c);

    /* skip validates what it skips, numbers included. */
    static const char *const bad[] = {
        "[1,]",        "{\"a\":01}", "[99999999999999999999]",
        "\"\\u0000\"", "[tru]",      "{\"a\"}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tg__jcur_init(&c, bad[i], strlen(bad[i]));
        assert_int_equal(tg__jcur_skip(&c), -1);
        tg__jcur_cleanup(&c);
    }
    tg__jcur_init(&c, "1 2", 3);
    assert_int_equal(tg__jcur_skip(&c), 0);
    assert_int_equal(tg__jcur_end(&c), -1);
    assert_int_equal(tg__jcur_peek(&c), '2');
    tg__jcur_cleanup(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts_plain_json),
        cmocka_unit_test(test_gives_up),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_long_strings),
        cmocka_unit_test(test_cursor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
