/* SPDX-License-Identifier: MIT */
/*
 * test_jcs.c - RFC 8785 canonicalization: the number serialization samples of
 * Appendix B, the sorting example of section 3.2.3, the reference test data
 * (values, weird, structures), string escaping, integers past 2^53, key order
 * where UTF-8 byte order and UTF-16 order disagree, depth and buffer limits,
 * and a randomized shortest-round-trip property check of the number form.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jcs.h"
#include "toolgate.h"

/* Canonical form of a JSON text, as a new string (caller frees). */
static char *canon_text(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr); /* new ref */
    if (v == NULL)
        fail_msg("bad test JSON: %s: %s", jerr.text, text);
    tg__buf b;
    tg__buf_init(&b, 0);
    int rc = tg__jcs_write(v, &b);
    json_decref(v);
    assert_int_equal(rc, 0);
    return tg__buf_take(&b);
}

static void check_canon(const char *in, const char *want)
{
    char *got = canon_text(in);
    assert_string_equal(got, want);
    free(got);
}

static double from_bits(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* ------------------------------------------------------------ numbers */

static const struct {
    uint64_t bits;
    const char *want;
} appendix_b[] = {
    /* RFC 8785 Appendix B */
    {0x0000000000000000ULL, "0"},
    {0x8000000000000000ULL, "0"}, /* minus zero */
    {0x0000000000000001ULL, "5e-324"},
    {0x8000000000000001ULL, "-5e-324"},
    {0x7fefffffffffffffULL, "1.7976931348623157e+308"},
    {0xffefffffffffffffULL, "-1.7976931348623157e+308"},
    {0x4340000000000000ULL, "9007199254740992"},
    {0xc340000000000000ULL, "-9007199254740992"},
    {0x4430000000000000ULL, "295147905179352830000"},
    {0x44b52d02c7e14af5ULL, "9.999999999999997e+22"},
    {0x44b52d02c7e14af6ULL, "1e+23"},
    {0x44b52d02c7e14af7ULL, "1.0000000000000001e+23"},
    {0x444b1ae4d6e2ef4eULL, "999999999999999700000"},
    {0x444b1ae4d6e2ef4fULL, "999999999999999900000"},
    {0x444b1ae4d6e2ef50ULL, "1e+21"},
    {0x3eb0c6f7a0b5ed8cULL, "9.999999999999997e-7"},
    {0x3eb0c6f7a0b5ed8dULL, "0.000001"},
    {0x41b3de4355555553ULL, "333333333.3333332"},
    {0x41b3de4355555554ULL, "333333333.33333325"},
    {0x41b3de4355555555ULL, "333333333.3333333"},
    {0x41b3de4355555556ULL, "333333333.3333334"},
    {0x41b3de4355555557ULL, "333333333.33333343"},
    {0xbecbf647612f3696ULL, "-0.0000033333333333333333"},
    {0x43143ff3c1cb0959ULL, "1424953923781206.2"}, /* round to even */
    /* More boundaries of the ES exponent rules (checked against node) */
    {0x4415af1d78b58c40ULL, "100000000000000000000"},
    {0x4415af1d78b58c3fULL, "99999999999999980000"},
    {0x4415af1d78b58c41ULL, "100000000000000020000"},
    {0x3eb0c6f7a0b5ed8eULL, "0.0000010000000000000002"},
};

static void test_appendix_b(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof appendix_b / sizeof appendix_b[0]; i++) {
        char buf[32];
        int n = tg__jcs_number(from_bits(appendix_b[i].bits), buf, sizeof buf);
        if (n < 0 || strcmp(buf, appendix_b[i].want) != 0)
            fail_msg("%016llx: got '%s', want '%s'",
                     (unsigned long long)appendix_b[i].bits, n < 0 ? "-" : buf,
                     appendix_b[i].want);
        assert_int_equal((size_t)n, strlen(appendix_b[i].want));

        /* The same through a jansson real inside a document. */
        json_t *v =
            json_pack("[f]", from_bits(appendix_b[i].bits)); /* new ref */
        assert_non_null(v);
        tg__buf b;
        tg__buf_init(&b, 0);
        assert_int_equal(tg__jcs_write(v, &b), 0);
        char want[64];
        snprintf(want, sizeof want, "[%s]", appendix_b[i].want);
        assert_string_equal(tg__buf_cstr(&b), want);
        tg__buf_cleanup(&b);
        json_decref(v);
    }
}

static void test_non_finite(void **state)
{
    (void)state;
    char buf[32];
    assert_int_equal(
        tg__jcs_number(from_bits(0x7ff0000000000000ULL), buf, sizeof buf),
        -1); /* +Infinity */
    assert_int_equal(
        tg__jcs_number(from_bits(0xfff0000000000000ULL), buf, sizeof buf),
        -1); /* -Infinity */
    assert_int_equal(
        tg__jcs_number(from_bits(0x7fffffffffffffffULL), buf, sizeof buf),
        -1); /* NaN */
}

static void test_small_numbers(void **state)
{
    (void)state;
    static const struct {
        double d;
        const char *want;
    } cases[] = {
        {1e-7, "1e-7"},        {1.5e-7, "1.5e-7"},
        {1e21, "1e+21"},       {1e20, "100000000000000000000"},
        {0.1, "0.1"},          {-0.5, "-0.5"},
        {123.456, "123.456"},  {1.0, "1"},
        {-42.0, "-42"},        {5e-324, "5e-324"},
        {1e-6, "0.000001"},    {1.23e-18, "1.23e-18"},
        {1.5e300, "1.5e+300"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[32];
        assert_true(tg__jcs_number(cases[i].d, buf, sizeof buf) > 0);
        assert_string_equal(buf, cases[i].want);
    }
    /* A buffer too small is refused rather than overrun. */
    char tiny[4];
    assert_int_equal(tg__jcs_number(123.456, tiny, sizeof tiny), -1);
}

/* Property check over random bit patterns: the text reads back as the same
 * double, and one digit fewer never does (shortest form). */
static void test_random_round_trip(void **state)
{
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double d = from_bits(x);
        char buf[32];
        int n = tg__jcs_number(d, buf, sizeof buf);
        if (d != d || d - d != 0) {
            assert_int_equal(n, -1);
            continue;
        }
        assert_true(n > 0);
        if (strtod(buf, NULL) != d)
            fail_msg("%016llx -> %s does not round-trip", (unsigned long long)x,
                     buf);
        /* count significant digits */
        int k = 0, lead = 1;
        for (const char *p = buf; *p && *p != 'e'; p++) {
            if (*p < '0' || *p > '9')
                continue;
            if (lead && *p == '0')
                continue;
            lead = 0;
            k++;
        }
        /* trailing zeros of integers are not significant */
        if (strchr(buf, 'e') == NULL && strchr(buf, '.') == NULL)
            for (const char *p = buf + n - 1; p > buf && *p == '0'; p--)
                k--;
        if (k > 1) {
            char shorter[40];
            snprintf(shorter, sizeof shorter, "%.*e", k - 2, d);
            if (strtod(shorter, NULL) == d)
                fail_msg("%016llx -> %s is not shortest (%s)",
                         (unsigned long long)x, buf, shorter);
        }
    }
}

static void test_integers(void **state)
{
    (void)state;
    check_canon("[0,-1,42,9007199254740992,-9007199254740992]",
                "[0,-1,42,9007199254740992,-9007199254740992]");
    /* Past 2^53 an integer is written as the nearest double, as ES does. */
    check_canon("[9007199254740993]", "[9007199254740992]");
    check_canon("[9223372036854775807]", "[9223372036854776000]");
    check_canon("[-9223372036854775808]", "[-9223372036854776000]");
    check_canon("[1152921504606846976]", "[1152921504606847000]");
    /* Reals that are integral print without a fraction. */
    check_canon("[56.0,-0.0,1E2]", "[56,0,100]");
}

/* ------------------------------------------------------------ documents */

static void test_rfc_sorting_example(void **state)
{
    (void)state;
    /* RFC 8785 section 3.2.3 */
    check_canon(
        "{\"\\u20ac\":\"Euro Sign\",\"\\r\":\"Carriage Return\","
        "\"\\ufb33\":\"Hebrew Letter Dalet With Dagesh\",\"1\":\"One\","
        "\"\\ud83d\\ude00\":\"Emoji: Grinning Face\","
        "\"\\u0080\":\"Control\",\"\\u00f6\":\"Latin Small Letter O "
        "With Diaeresis\"}",
        "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\xc2\x80\":"
        "\"Control\",\"\xc3\xb6\":\"Latin Small Letter O With "
        "Diaeresis\",\"\xe2\x82\xac\":\"Euro Sign\",\"\xf0\x9f\x98\x80\":"
        "\"Emoji: Grinning Face\",\"\xef\xac\xb3\":\"Hebrew Letter Dalet "
        "With Dagesh\"}");
}

static void test_rfc_values_example(void **state)
{
    (void)state;
    /* RFC 8785 section 3.2.2 / testdata values.json */
    check_canon(
        "{\"numbers\":[333333333.33333329,1E30,4.50,2e-3,"
        "0.000000000000000000000000001],"
        "\"string\":\"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\"
        "\\\"\\/\",\"literals\":[null,true,false]}",
        "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,"
        "1e+30,4.5,0.002,1e-27],\"string\":\"\xe2\x82\xac$\\u000f\\nA'B"
        "\\\"\\\\\\\\\\\"/\"}");
}

static void test_weird_example(void **state)
{
    (void)state;
    /* testdata weird.json of the reference implementation */
    check_canon(
        "{\"\\u20ac\":\"Euro Sign\",\"1\":\"One\",\"\\u0080\":"
        "\"Control\\u007f\",\"\\ud83d\\ude02\":\"Smiley\",\"\\u00f6\":"
        "\"Latin Small Letter O With Diaeresis\",\"\\ufb33\":\"Hebrew "
        "Letter Dalet With Dagesh\",\"</script>\":\"Browser "
        "Challenge\"}",
        "{\"1\":\"One\",\"</script>\":\"Browser Challenge\",\"\xc2\x80\":"
        "\"Control\x7f\",\"\xc3\xb6\":\"Latin Small Letter O With "
        "Diaeresis\",\"\xe2\x82\xac\":\"Euro Sign\",\"\xf0\x9f\x98\x82\":"
        "\"Smiley\",\"\xef\xac\xb3\":\"Hebrew Letter Dalet With "
        "Dagesh\"}");
}

static void test_structures_example(void **state)
{
    (void)state;
    /* testdata structures.json of the reference implementation */
    check_canon(
        "{\"1\":{\"f\":{\"f\":\"hi\",\"F\":5},\"\\n\":56.0},\"10\":{},"
        "\"\":\"empty\",\"a\":{},\"111\":[{}],\"A\":{}}",
        "{\"\":\"empty\",\"1\":{\"\\n\":56,\"f\":{\"F\":5,\"f\":\"hi\"}},"
        "\"10\":{},\"111\":[{}],\"A\":{},\"a\":{}}");
}

static void test_utf16_order(void **state)
{
    (void)state;
    /* UTF-16: U+D7FF < U+1F600 (D83D DE00) < U+E000 < U+FB33 < U+FFFF;
     * UTF-8 byte order would put U+1F600 last. Also a prefix sorts first. */
    check_canon("{\"\\uffff\":5,\"\\ufb33\":4,\"\\ue000\":3,"
                "\"\\ud83d\\ude00\":2,\"\\ud7ff\":1,\"\\ud83d\\ude00x\":6,"
                "\"\\ud800\\udc00\":7}",
                "{\"\xed\x9f\xbf\":1,\"\xf0\x90\x80\x80\":7,"
                "\"\xf0\x9f\x98\x80\":2,\"\xf0\x9f\x98\x80x\":6,"
                "\"\xee\x80\x80\":3,\"\xef\xac\xb3\":4,\"\xef\xbf\xbf\":5}");
    /* The same keys inserted in the opposite order (the comparator is then
     * asked the other way round). */
    check_canon("{\"\\ud800\\udc00\":7,\"\\ud83d\\ude00x\":6,\"\\ud7ff\":1,"
                "\"\\ud83d\\ude00\":2,\"\\ue000\":3,\"\\ufb33\":4,"
                "\"\\uffff\":5}",
                "{\"\xed\x9f\xbf\":1,\"\xf0\x90\x80\x80\":7,"
                "\"\xf0\x9f\x98\x80\":2,\"\xf0\x9f\x98\x80x\":6,"
                "\"\xee\x80\x80\":3,\"\xef\xac\xb3\":4,\"\xef\xbf\xbf\":5}");
    /* Same lead byte, differing later bytes: plain byte order. */
    check_canon("{\"\\u00f7\":2,\"\\u00f6\":1,\"b\":0,\"a\":0}",
                "{\"a\":0,\"b\":0,\"\xc3\xb6\":1,\"\xc3\xb7\":2}");
}

static void test_escapes(void **state)
{
    (void)state;
    /* Every control character; '/', DEL, U+2028/2029 stay raw. */
    char in[32];
    for (int i = 0; i < 32; i++)
        in[i] = (char)i;
    json_t *v = json_pack("[s#,s]", in, (int)sizeof in,
                          "/\x7f\xe2\x80\xa8\xe2\x80\xa9\"\\"); /* new ref */
    assert_non_null(v);
    tg__buf b;
    tg__buf_init(&b, 0);
    assert_int_equal(tg__jcs_write(v, &b), 0);
    assert_string_equal(
        tg__buf_cstr(&b),
        "[\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n"
        "\\u000b\\f\\r\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015"
        "\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e"
        "\\u001f\",\"/\x7f\xe2\x80\xa8\xe2\x80\xa9\\\"\\\\\"]");
    tg__buf_cleanup(&b);
    json_decref(v);

    /* The string writer on its own. */
    tg__buf_init(&b, 0);
    assert_int_equal(tg__jcs_write_string("a\"b\n", 4, &b), 0);
    assert_string_equal(tg__buf_cstr(&b), "\"a\\\"b\\n\"");
    tg__buf_cleanup(&b);
}

static void test_key_with_nul(void **state)
{
    (void)state;
    json_t *o = json_object(); /* new ref */
    assert_int_equal(json_object_setn_new(o, "a\0b", 3, json_integer(2)), 0);
    assert_int_equal(json_object_set_new(o, "a", json_integer(1)), 0);
    tg__buf b;
    tg__buf_init(&b, 0);
    assert_int_equal(tg__jcs_write(o, &b), 0);
    assert_string_equal(tg__buf_cstr(&b), "{\"a\":1,\"a\\u0000b\":2}");
    tg__buf_cleanup(&b);
    json_decref(o);
}

/* Many members (heap scratch, qsort) with nested objects that push the
 * scratch array past its first allocation while outer objects use it. */
static void test_large_objects(void **state)
{
    (void)state;
    json_t *o = json_object(); /* new ref */
    for (int i = 99; i >= 0; i--) {
        char k[16];
        snprintf(k, sizeof k, "k%03d", i);
        json_t *inner = json_object(); /* new ref */
        for (int j = 0; j < 50; j++) {
            char ik[16];
            snprintf(ik, sizeof ik, "i%02d", 49 - j);
            json_object_set_new(inner, ik, json_integer(j));
        }
        json_object_set_new(o, k, inner);
    }
    tg__buf b;
    tg__buf_init(&b, 0);
    assert_int_equal(tg__jcs_write(o, &b), 0);
    /* Expected text built independently. */
    tg__buf want;
    tg__buf_init(&want, 0);
    tg__buf_puts(&want, "{");
    for (int i = 0; i < 100; i++) {
        tg__buf_printf(&want, "%s\"k%03d\":{", i ? "," : "", i);
        for (int j = 0; j < 50; j++)
            tg__buf_printf(&want, "%s\"i%02d\":%d", j ? "," : "", j, 49 - j);
        tg__buf_puts(&want, "}");
    }
    tg__buf_puts(&want, "}");
    assert_string_equal(tg__buf_cstr(&b), tg__buf_cstr(&want));
    tg__buf_cleanup(&b);
    tg__buf_cleanup(&want);
    json_decref(o);
}

static json_t *nested_arrays(int depth)
{
    json_t *v = json_integer(1); /* new ref */
    for (int i = 0; i < depth; i++) {
        json_t *a = json_array(); /* new ref */
        json_array_append_new(a, v);
        v = a;
    }
    return v;
}

static void test_depth_limit(void **state)
{
    (void)state;
    tg__buf b;
    json_t *ok = nested_arrays(4096); /* new ref */
    tg__buf_init(&b, 0);
    assert_int_equal(tg__jcs_write(ok, &b), 0);
    assert_int_equal(b.len, 4096 * 2 + 1);
    tg__buf_cleanup(&b);
    json_decref(ok);

    json_t *deep = nested_arrays(4097); /* new ref */
    tg__buf_init(&b, 0);
    assert_int_equal(tg__jcs_write(deep, &b), TG_ELIMIT);
    tg__buf_cleanup(&b);
    json_decref(deep);
}

static void test_buffer_limit(void **state)
{
    (void)state;
    json_t *v = json_pack("{s:s}", "key", "a long enough value"); /* new ref */
    tg__buf b;
    tg__buf_init(&b, 10);
    assert_int_equal(tg__jcs_write(v, &b), TG_ELIMIT);
    assert_true(b.len <= 10);
    tg__buf_cleanup(&b);
    assert_int_equal(tg__jcs_write(NULL, &b), TG_EINVAL);
    json_decref(v);

    /* A limit below the worst case of escaping but above the real output:
     * the string still fits exactly. */
    v = json_string("abcdefghij"); /* new ref */
    tg__buf_init(&b, 12);
    assert_int_equal(tg__jcs_write(v, &b), 0);
    assert_string_equal(tg__buf_cstr(&b), "\"abcdefghij\"");
    tg__buf_cleanup(&b);
    tg__buf_init(&b, 11);
    assert_int_equal(tg__jcs_write(v, &b), TG_ELIMIT);
    tg__buf_cleanup(&b);
    json_decref(v);
}

/* Strings longer than the direct-write threshold go run by run; escapes at
 * word boundaries and inside words, multi-byte characters across them. */
static void test_long_strings(void **state)
{
    (void)state;
    tg__buf in, want, b;
    tg__buf_init(&in, 0);
    tg__buf_init(&want, 0);
    tg__buf_puts(&want, "\"");
    for (int i = 0; i < 3000; i++) {
        switch (i % 7) {
        case 0:
            tg__buf_puts(&in, "\xc3\xb6");
            tg__buf_puts(&want, "\xc3\xb6");
            break;
        case 3:
            tg__buf_puts(&in, "\n");
            tg__buf_puts(&want, "\\n");
            break;
        case 5:
            tg__buf_puts(&in, "\x1f\"");
            tg__buf_puts(&want, "\\u001f\\\"");
            break;
        default:
            tg__buf_puts(&in, "abcdefgh");
            tg__buf_puts(&want, "abcdefgh");
        }
    }
    tg__buf_puts(&want, "\"");
    assert_true(in.len > 4096);
    tg__buf_init(&b, 0);
    assert_int_equal(tg__jcs_write_string(in.data, in.len, &b), 0);
    assert_int_equal(b.len, want.len);
    assert_memory_equal(b.data, want.data, want.len);
    /* The same bytes through the direct path, in pieces under the threshold. */
    tg__buf_cleanup(&b);
    for (size_t off = 0; off < in.len; off += 1000) {
        size_t n = in.len - off < 1000 ? in.len - off : 1000;
        tg__buf piece, ref;
        tg__buf_init(&piece, 0);
        tg__buf_init(&ref, 0);
        json_t *v = json_stringn(in.data + off, n); /* new ref */
        if (v == NULL)
            continue; /* cut inside a UTF-8 character */
        assert_int_equal(tg__jcs_write(v, &piece), 0);
        /* reference: the chunked path, forced by a tight limit */
        tg__buf_cleanup(&ref);
        tg__buf_init(&ref, piece.len);
        assert_int_equal(tg__jcs_write(v, &ref), 0);
        assert_string_equal(piece.data, ref.data);
        json_decref(v);
        tg__buf_cleanup(&piece);
        tg__buf_cleanup(&ref);
    }
    tg__buf_cleanup(&in);
    tg__buf_cleanup(&want);
}

static void test_scalars(void **state)
{
    (void)state;
    check_canon("null", "null");
    check_canon("true", "true");
    check_canon("false", "false");
    check_canon("\"x\"", "\"x\"");
    check_canon("[]", "[]");
    check_canon("{}", "{}");
    check_canon(" [ 1 , { \"b\" : [ ] , \"a\" : { } } ] ",
                "[1,{\"a\":{},\"b\":[]}]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_appendix_b),
        cmocka_unit_test(test_non_finite),
        cmocka_unit_test(test_small_numbers),
        cmocka_unit_test(test_random_round_trip),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_rfc_sorting_example),
        cmocka_unit_test(test_rfc_values_example),
        cmocka_unit_test(test_weird_example),
        cmocka_unit_test(test_structures_example),
        cmocka_unit_test(test_utf16_order),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_key_with_nul),
        cmocka_unit_test(test_large_objects),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_buffer_limit),
        cmocka_unit_test(test_long_strings),
        cmocka_unit_test(test_scalars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
