/* SPDX-License-Identifier: MIT */
/*
 * test_repair.c - the text repairs of limits.repair (repair.c): what each
 * fixes, what they combine to fix, and what they must leave alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

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
        {"```json\n{\"a\":1}\n```", "\n{\"a\":1}\n", TG_REPAIR_FENCE},
        {"Here you go:\n```\n{\"a\":1}\n```\nDone.", "\n{\"a\":1}\n",
         TG_REPAIR_FENCE},
        {"{\"a\":[1,2,],}", "{\"a\":[1,2]}", TG_REPAIR_TRAILING_COMMAS},
        {"{\"s\":\"a,}\",}", "{\"s\":\"a,}\"}", TG_REPAIR_TRAILING_COMMAS},
        {"{\"a\":1,\"b\":\"hel", "{\"a\":1,\"b\":\"hel\"}", TG_REPAIR_CLOSED},
        {"{\"a\":{\"b\":[1,2", "{\"a\":{\"b\":[1,2]}}", TG_REPAIR_CLOSED},
        {"{\"a\":", "{\"a\":null}", TG_REPAIR_CLOSED},
        {"{\"a\":1,", "{\"a\":1}", TG_REPAIR_CLOSED},
        {"{\"a\":1,\"b\"", "{\"a\":1,\"b\":null}", TG_REPAIR_CLOSED},
        {"{\"a\":1,\"bc", "{\"a\":1,\"bc\":null}", TG_REPAIR_CLOSED},
        {"{\"p\":\"C:\\\\", "{\"p\":\"C:\\\\\"}", TG_REPAIR_CLOSED},
        {"{\"p\":\"C:\\", "{\"p\":\"C:\"}", TG_REPAIR_CLOSED},
        {"```json\n{\"a\":[1,],\"b\":\"x", "\n{\"a\":[1],\"b\":\"x\"}",
         TG_REPAIR_FENCE | TG_REPAIR_TRAILING_COMMAS | TG_REPAIR_CLOSED},
        /* left alone */
        {"{\"a\":1.", NULL, 0},
        {"{\"a\":tru", NULL, 0},
        {"[1,2", NULL, 0},
        {"hello", NULL, 0},
        {"{\"a\":1}}", NULL, 0},
        {"{'a':1}", NULL, 0},
        {"", NULL, 0},
        {"```\nnot json\n```", NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tg_buf out;
        unsigned done = 99;
        tg__buf_init(&out, 0);
        int rc =
            tg__repair_args_text(cases[i].in, strlen(cases[i].in), &out, &done);
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

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(tg__repair_name(TG_REPAIR_TRAILING_COMMAS),
                        "dropped trailing commas");
    assert_non_null(strstr(tg__repair_name(TG_REPAIR_FENCE), "fence"));
    assert_non_null(strstr(tg__repair_name(TG_REPAIR_CLOSED), "truncated"));
    assert_non_null(strstr(tg__repair_name(TG_REPAIR_COERCED), "coerced"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repairs),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
