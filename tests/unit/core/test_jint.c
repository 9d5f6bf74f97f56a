/* SPDX-License-Identifier: MIT */
/*
 * test_jint.c - reading a JSON number as an integer the way JSON Schema
 * counts one (jint.c): 1e2, 100.0 and -0.0 are integers; 1.5, numbers
 * beyond int64_t (2^63 itself) and non-numbers are not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jint.h"

static void test_json_int(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        int ok;
        int64_t value;
    } cases[] = {
        {"100", 1, 100},
        {"1e2", 1, 100},
        {"100.0", 1, 100},
        {"-0.0", 1, 0},
        {"-5e0", 1, -5},
        {"9007199254740992.0", 1, 9007199254740992LL},
        {"1.5", 0, 0},
        {"1e-2", 0, 0},
        {"9.3e18", 0, 0},  /* beyond int64 */
        {"-9.3e18", 0, 0}, /* beyond int64 */
        {"9223372036854775808.0", 0, 0},
        {"-9223372036854775808.0", 1, INT64_MIN},
        {"1e308", 0, 0},
        {"\"5\"", 0, 0},
        {"true", 0, 0},
        {"null", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_error_t jerr;
        json_t *v = json_loads(cases[i].json, JSON_DECODE_ANY, &jerr);
        assert_non_null(v);
        int64_t out = 12345;
        bool ok = tg__json_int(v, &out);
        if (ok != (cases[i].ok != 0))
            fail_msg("%s: read as an integer: %d", cases[i].json, ok);
        if (ok)
            assert_int_equal(out, cases[i].value);
        else
            assert_int_equal(out, 12345);
        json_decref(v);
    }
    int64_t out;
    assert_false(tg__json_int(NULL, &out));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_int),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
