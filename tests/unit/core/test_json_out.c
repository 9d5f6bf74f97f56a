/* SPDX-License-Identifier: MIT */
/*
 * test_json_out.c - the JSON text writers of core/json_out.h: times in
 * milliseconds to the microsecond (known values; for a million random
 * durations, at most 3 decimals and a text that reads back as the value
 * rounded to the microsecond; what JSON has no number for; a full
 * buffer), and strings and values as jansson's compact dump writes them
 * (tg__json_dumps byte for byte against json_dumps on nested values, and
 * past its depth limit, where jansson's own dumper takes over: a value that
 * holds itself fails as in jansson).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "jcs.h"
#include "json_out.h"
#include "toolgate.h"

static const char *ms_text(tg__buf *b, double ms)
{
    b->len = 0;
    assert_int_equal(tg__json_ms(b, ms), 0);
    return tg__buf_cstr(b);
}

static void test_ms_known(void **state)
{
    (void)state;
    static const struct {
        double ms;
        const char *text;
    } known[] = {
        {33.560282000000001, "33.56"}, /* jansson: 33.560282000000001 */
        {41.142023, "41.142"},
        {0, "0.0"},
        {-0.0, "0.0"},
        {7, "7.0"},
        {1000.4, "1000.4"},
        {0.0004999, "0.0"},
        {0.0005, "0.001"},
        {-2.0005, "-2.001"},
        {999.9995, "1000.0"},
        {0.1, "0.1"},
        {1e-300, "0.0"},
        {1e12, "1000000000000.0"}, /* from 10^12 on, not rounded */
        {1e12 + 0.25, "1000000000000.25"},
        {1e21, "1e+21"},
        {-1e300, "-1e+300"},
    };
    tg__buf b;
    tg__buf_init(&b, 0);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        assert_string_equal(ms_text(&b, known[i].ms), known[i].text);
    /* JSON has no NaN or infinity: nothing is written. */
    b.len = 0;
    assert_int_equal(tg__json_ms(&b, NAN), TG_EINVAL);
    assert_int_equal(tg__json_ms(&b, INFINITY), TG_EINVAL);
    assert_int_equal(tg__json_ms(&b, -INFINITY), TG_EINVAL);
    assert_int_equal(b.len, 0);
    tg__buf_cleanup(&b);

    /* A buffer without room says so. */
    tg__buf small;
    tg__buf_init(&small, 4);
    assert_int_equal(tg__json_ms(&small, 41.142023), TG_ELIMIT);
    tg__buf_cleanup(&small);
}

static void test_ms_random(void **state)
{
    (void)state;
    tg__buf b;
    tg__buf_init(&b, 0);
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < 1000000; i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        /* durations from nanoseconds to days, as the clock gives them */
        uint64_t ns = rng % (UINT64_C(1) << (i % 47));
        double ms = (double)ns / 1e6;
        const char *t = ms_text(&b, ms);
        const char *dot = strchr(t, '.');
        assert_non_null(dot);
        assert_null(strchr(t, 'e'));
        size_t decimals = strlen(dot + 1);
        if (decimals < 1 || decimals > 3)
            fail_msg("%.17g printed as %s", ms, t);
        /* It reads back as the value rounded to the microsecond. */
        double want = (double)(int64_t)(ms * 1000 + 0.5) / 1000;
        if (strtod(t, NULL) != want)
            fail_msg("%.17g printed as %s, not %.17g", ms, t, want);
        /* ... in the shortest form: the general JCS writer's digits, with
         * ".0" after a whole number */
        char jcs[48];
        int n = tg__jcs_number(want, jcs, sizeof jcs - 2);
        assert_true(n > 0);
        if (strchr(jcs, '.') == NULL)
            memcpy(jcs + n, ".0", 3);
        if (strcmp(t, jcs) != 0)
            fail_msg("%.17g printed as %s, not %s", ms, t, jcs);
    }
    tg__buf_cleanup(&b);
}

static void test_string_and_dump(void **state)
{
    (void)state;
    tg__buf b;
    tg__buf_init(&b, 0);
    static const char s[] = "a\"b\\c\x01\n\xc3\xa9\xff/";
    assert_int_equal(tg__json_string(&b, s, sizeof s - 1), 0);
    assert_string_equal(tg__buf_cstr(&b),
                        "\"a\\\"b\\\\c\\u0001\\n\xc3\xa9\\uFFFD/\"");
    b.len = 0;
    json_t *v = json_pack("{s:[i,f,n],s:s}", "a", 1, 0.5, "b", "x"); /* new */
    assert_int_equal(tg__json_dump(v, &b), 0);
    assert_string_equal(tg__buf_cstr(&b), "{\"a\":[1,0.5,null],\"b\":\"x\"}");
    json_decref(v);
    tg__buf_cleanup(&b);
}

/* tg__json_dumps(v) is json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY). */
static void same_as_jansson(json_t *v)
{
    char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    char *got = tg__json_dumps(v);
    assert_non_null(want);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(want);
    free(got);
}

static void test_dumps_like_jansson(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "{}",
        "[]",
        "{\"a\":{},\"b\":[],\"c\":[{}],\"d\":[[],[[]]]}",
        "[true,false,null,0,-1,9007199254740993,-9223372036854775808]",
        "[0.5,1.0,-0.0,1e300,3.141592653589793,1e-7,123456789.125]",
        "{\"z\":1,\"a\":2,\"m\":{\"y\":[1,{\"x\":\"\\u00e9\\n\\\"\"}]}}",
        "{\"content\":[{\"type\":\"text\",\"text\":\"Echo: hi\"}],"
        "\"isError\":false,\"ctl\":\"\\u0001\\u001f\\t/\\\\\"}",
        "\"scalar\"",
        "42",
        "2.5",
        "null",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        json_error_t e;
        json_t *v = json_loads(texts[i], JSON_DECODE_ANY, &e); /* new */
        if (v == NULL)
            fail_msg("%s: %s", texts[i], e.text);
        same_as_jansson(v);
        json_decref(v);
    }
    /* Keys in insertion order after deletions and re-insertions. */
    json_t *o = json_object(); /* new */
    for (int i = 0; i < 40; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", (i * 17) % 40);
        json_object_set_new(o, k, json_integer(i));
    }
    json_object_del(o, "k3");
    json_object_set_new(o, "k3", json_string("again"));
    json_object_set_new(o, "\xc3\xa9", json_true());
    same_as_jansson(o);
    json_decref(o);
    /* Past the depth limit: jansson writes the whole value. */
    json_t *deep = json_array(); /* new */
    json_t *at = deep;
    for (int i = 0; i < 300; i++) {
        json_t *next = i % 2 ? json_array() : json_object();
        if (json_is_array(at))
            json_array_append_new(at, next);
        else
            json_object_set_new(at, "k", next);
        at = next;
    }
    json_array_append_new(at, json_integer(7));
    same_as_jansson(deep);
    /* A value that holds itself fails, as with jansson. */
    json_t *loop = json_array(); /* new */
    json_t *inner = json_array();
    json_array_append_new(loop, inner);
    json_array_append(inner, loop);
    assert_null(tg__json_dumps(loop));
    json_array_clear(inner); /* break the loop before freeing */
    json_decref(loop);
    json_decref(deep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ms_known),
        cmocka_unit_test(test_ms_random),
        cmocka_unit_test(test_string_and_dump),
        cmocka_unit_test(test_dumps_like_jansson),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
