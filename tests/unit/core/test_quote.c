/* SPDX-License-Identifier: MIT */
/*
 * test_quote.c - what an error message quotes of a caller's input
 * (quote.c): short input whole, long input as its first 64 bytes, never a
 * UTF-8 character cut in two, with its size.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "quote.h"
#include "utf8.h"

static void test_short_is_whole(void **state)
{
    (void)state;
    tg__quote_buf q;
    const char *s = "read_file";
    assert_ptr_equal(tg__quote(&q, s), s);
    char exact[TG_QUOTE_MAX + 1];
    memset(exact, 'x', TG_QUOTE_MAX);
    exact[TG_QUOTE_MAX] = '\0';
    assert_ptr_equal(tg__quote(&q, exact), exact);
    assert_string_equal(tg__quote(&q, NULL), "");
    assert_string_equal(tg__quoten(&q, "abc", 3), "abc");
}

static void test_long_is_cut_with_its_size(void **state)
{
    (void)state;
    size_t n = 100u << 20; /* the 100 MB name of the issue */
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, 'n', n);
    big[n] = '\0';
    tg__quote_buf q;
    const char *got = tg__quote(&q, big);
    char want[128];
    snprintf(want, sizeof want, "%.*s\xE2\x80\xA6(%zu bytes)", TG_QUOTE_MAX,
             big, n);
    assert_string_equal(got, want);
    assert_true(strlen(got) < sizeof q.text);
    free(big);
}

static void test_never_cuts_a_character(void **state)
{
    (void)state;
    /* 'é' is two bytes, '日' three, an emoji four: at every offset of the
     * cut the kept part is valid UTF-8 and as long as it can be */
    static const char *const chars[] = {"\xC3\xA9", "\xE6\x97\xA5",
                                        "\xF0\x9F\x98\x80"};
    for (size_t c = 0; c < 3; c++) {
        size_t cl = strlen(chars[c]);
        for (size_t lead = 0; lead < 4; lead++) {
            char s[200];
            size_t n = 0;
            for (; n < lead; n++)
                s[n] = 'a';
            while (n + cl < sizeof s - 1) {
                memcpy(s + n, chars[c], cl);
                n += cl;
            }
            s[n] = '\0';
            size_t keep = tg__utf8_cut(s, n, TG_QUOTE_MAX);
            assert_true(keep <= TG_QUOTE_MAX);
            assert_true(keep > TG_QUOTE_MAX - cl);
            for (size_t i = lead; i < keep;) {
                size_t l = tg__utf8_seq((const unsigned char *)s + i, keep - i);
                assert_int_equal(l, cl);
                i += l;
            }
            tg__quote_buf q;
            const char *got = tg__quote(&q, s);
            assert_memory_equal(got, s, keep);
            assert_memory_equal(got + keep, "\xE2\x80\xA6(", 4);
        }
    }
    /* a NUL inside counted input ends what is shown */
    tg__quote_buf q;
    assert_string_equal(tg__quoten(&q, "ab\0cd", 5), "ab\xE2\x80\xA6(5 bytes)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_is_whole),
        cmocka_unit_test(test_long_is_cut_with_its_size),
        cmocka_unit_test(test_never_cuts_a_character),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
