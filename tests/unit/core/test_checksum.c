/* SPDX-License-Identifier: MIT */
/*
 * test_checksum.c - call checksums against digests computed by other tools:
 * `printf '%s' '{"args":{"a":1},"tool":"x"}' | sha256sum` and
 * `... | openssl dgst -sha256 -hmac secret-key` (plus a 100-byte key, longer
 * than the HMAC block, via -macopt hexkey:). Also key-order independence and
 * verification of matching, mismatching and malformed checksums.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "checksum.h"
#include "toolgate.h"

/* sha256sum of {"args":{"a":1},"tool":"x"} */
#define SHA_A1_X                                                               \
    "sha256:20ff7b26c0b6d9c21dc8f5c74534c134f70bddb01d06af882818d219ebba7d30"
/* openssl dgst -sha256 -hmac secret-key of the same bytes */
#define HMAC_A1_X                                                              \
    "hmac-sha256:"                                                             \
    "37d4e69a8eec060c0671014bc6443eed1db0ff31e8d1e7fdc21488913b953196"
/* openssl dgst -sha256 -mac HMAC -macopt hexkey:6b6b... (100 x 'k') */
#define HMAC_LONGKEY_A1_X                                                      \
    "hmac-sha256:"                                                             \
    "33b3570f7ca0ce2c8f3af64c378675b382ce34ce3427fec7c239458721d45772"
/* sha256sum of {"args":{"a":{"x":true,"y":null},"b":[1,2.5,"€"]},
 * "tool":"read_file"} */
#define SHA_NESTED                                                             \
    "sha256:d0d810ce9079e490f35e78f9c1777d40dbdc103f6f524f315c49c3244d2061f1"
/* sha256sum of {"args":{},"tool":"t\"q"} */
#define SHA_QUOTED_TOOL                                                        \
    "sha256:89ed3eee3d0c885d5a346a338fd8d01090623b8062a07467204bdfeb2c6d730d"

static const unsigned char key[] = "secret-key";

static json_t *load(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, 0, &jerr); /* new ref */
    if (v == NULL)
        fail_msg("bad test JSON: %s", jerr.text);
    return v;
}

static void test_sha256_known(void **state)
{
    (void)state;
    json_t *args = load("{\"a\":1}"); /* new ref */
    char out[TG_CHECKSUM_MAX];
    assert_int_equal(tg__checksum_compute("x", args, NULL, 0, out), 0);
    assert_string_equal(out, SHA_A1_X);
    json_decref(args);
}

static void test_key_order_independent(void **state)
{
    (void)state;
    json_t *a = load("{\"b\":[1,2.50,\"\\u20ac\"],\"a\":{\"y\":null,"
                     "\"x\":true}}"); /* new ref */
    json_t *b = load("{\"a\":{\"x\":true,\"y\":null},\"b\":[1,25e-1,"
                     "\"\xe2\x82\xac\"]}"); /* new ref */
    char ca[TG_CHECKSUM_MAX], cb[TG_CHECKSUM_MAX];
    assert_int_equal(tg__checksum_compute("read_file", a, NULL, 0, ca), 0);
    assert_int_equal(tg__checksum_compute("read_file", b, NULL, 0, cb), 0);
    assert_string_equal(ca, cb);
    assert_string_equal(ca, SHA_NESTED);
    /* A different tool or different args change it. */
    assert_int_equal(tg__checksum_compute("write_file", a, NULL, 0, cb), 0);
    assert_string_not_equal(ca, cb);
    json_decref(a);
    json_decref(b);
}

static void test_tool_is_escaped(void **state)
{
    (void)state;
    json_t *args = load("{}"); /* new ref */
    char out[TG_CHECKSUM_MAX];
    assert_int_equal(tg__checksum_compute("t\"q", args, NULL, 0, out), 0);
    assert_string_equal(out, SHA_QUOTED_TOOL);
    json_decref(args);
}

static void test_hmac_known(void **state)
{
    (void)state;
    json_t *args = load("{\"a\":1}"); /* new ref */
    char out[TG_CHECKSUM_MAX];
    assert_int_equal(tg__checksum_compute("x", args, key, sizeof key - 1, out),
                     0);
    assert_string_equal(out, HMAC_A1_X);

    unsigned char longkey[100];
    memset(longkey, 'k', sizeof longkey);
    assert_int_equal(
        tg__checksum_compute("x", args, longkey, sizeof longkey, out), 0);
    assert_string_equal(out, HMAC_LONGKEY_A1_X);
    json_decref(args);
}

static void test_verify(void **state)
{
    (void)state;
    json_t *args = load("{\"a\":1}");  /* new ref */
    json_t *other = load("{\"a\":2}"); /* new ref */

    assert_int_equal(tg__checksum_verify(SHA_A1_X, "x", args, NULL, 0), 1);
    assert_int_equal(tg__checksum_verify(SHA_A1_X, "x", other, NULL, 0), 0);
    assert_int_equal(tg__checksum_verify(SHA_A1_X, "y", args, NULL, 0), 0);
    /* Upper-case hex is the same digest. */
    char upper[TG_CHECKSUM_MAX];
    memcpy(upper, SHA_A1_X, sizeof SHA_A1_X);
    for (char *p = upper + 7; *p; p++)
        if (*p >= 'a' && *p <= 'f')
            *p = (char)(*p - 'a' + 'A');
    assert_int_equal(tg__checksum_verify(upper, "x", args, NULL, 0), 1);

    assert_int_equal(
        tg__checksum_verify(HMAC_A1_X, "x", args, key, sizeof key - 1), 1);
    assert_int_equal(
        tg__checksum_verify(HMAC_A1_X, "x", other, key, sizeof key - 1), 0);
    assert_int_equal(tg__checksum_verify(HMAC_A1_X, "x", args,
                                         (const unsigned char *)"other", 5),
                     0);
    /* The kind follows the configuration: with a key a plain hash (which
     * anyone can compute) does not verify, and without one an HMAC cannot. */
    assert_int_equal(
        tg__checksum_verify(SHA_A1_X, "x", args, key, sizeof key - 1), 0);
    assert_int_equal(tg__checksum_verify(HMAC_A1_X, "x", args, NULL, 0), 0);

    /* Garbage: unknown prefix, bad or short or long hex, nothing. */
    static const char *bad[] = {
        "md5:20ff7b26c0b6d9c21dc8f5c74534c134f70bddb01d06af882818d219ebba7d30",
        "sha256:"
        "20ff7b26c0b6d9c21dc8f5c74534c134f70bddb01d06af882818d219ebba7d3g",
        "sha256:"
        "20ff7b26c0b6d9c21dc8f5c74534c134f70bddb01d06af882818d219ebba7d3",
        "sha256:"
        "20ff7b26c0b6d9c21dc8f5c74534c134f70bddb01d06af882818d219ebba7d300",
        "sha256:",
        "sha256",
        "",
        "SHA256:"
        "20ff7b26c0b6d9c21dc8f5c74534c134f70bddb01d06af882818d219ebba7d30",
        "sha256:20:"
        "f7b26c0b6d9c21dc8f5c74534c134f70bddb01d06af882818d219ebba7d30",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (tg__checksum_verify(bad[i], "x", args, NULL, 0) != 0)
            fail_msg("'%s' verified", bad[i]);
    assert_int_equal(tg__checksum_verify(NULL, "x", args, NULL, 0), 0);
    json_decref(args);
    json_decref(other);
}

/* The same digests from a JSON tape (the form calls keep arguments in),
 * whatever the spelling of the text. */
static void test_tape_matches(void **state)
{
    (void)state;
    static const struct {
        const char *tool, *text, *want;
    } cases[] = {
        {"x", "{\"a\":1}", SHA_A1_X},
        {"x", " { \"a\" : 1 } ", SHA_A1_X},
        {"x", "{\"a\":1.0e0}", SHA_A1_X}, /* a real, but 1 in JCS */
        {"read_file",
         "{\"b\":[1,2.50,\"\\u20ac\"],\"a\":{\"y\":null,\"x\":true}}",
         SHA_NESTED},
        {"t\"q", "{}", SHA_QUOTED_TOOL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tg__jtape t;
        char a[TG_CHECKSUM_MAX], b[TG_CHECKSUM_MAX];
        assert_int_equal(
            tg__jtape_parse(cases[i].text, strlen(cases[i].text), 0, &t, NULL),
            0);
        json_t *v = load(cases[i].text); /* new ref */
        assert_int_equal(
            tg__checksum_compute_tape(cases[i].tool, &t, NULL, 0, a), 0);
        assert_int_equal(tg__checksum_compute(cases[i].tool, v, NULL, 0, b), 0);
        assert_string_equal(a, b);
        if (cases[i].want != NULL)
            assert_string_equal(a, cases[i].want);
        assert_int_equal(
            tg__checksum_verify_tape(a, cases[i].tool, &t, NULL, 0), 1);
        assert_int_equal(tg__checksum_compute_tape(cases[i].tool, &t, key,
                                                   sizeof key - 1, a),
                         0);
        assert_int_equal(
            tg__checksum_compute(cases[i].tool, v, key, sizeof key - 1, b), 0);
        assert_string_equal(a, b);
        assert_int_equal(
            tg__checksum_verify_tape(a, cases[i].tool, &t, key, sizeof key - 1),
            1);
        assert_int_equal(
            tg__checksum_verify_tape(a, "other", &t, key, sizeof key - 1), 0);
        json_decref(v);
        tg__jtape_free(&t);
    }
    char out[TG_CHECKSUM_MAX];
    assert_int_equal(tg__checksum_compute_tape("x", NULL, NULL, 0, out),
                     TG_EINVAL);
    assert_int_equal(tg__checksum_verify_tape(SHA_A1_X, "x", NULL, NULL, 0),
                     TG_EINVAL);
}

static void test_bad_input(void **state)
{
    (void)state;
    char out[TG_CHECKSUM_MAX];
    assert_int_equal(tg__checksum_compute("x", NULL, NULL, 0, out), TG_EINVAL);
    assert_string_equal(out, "");
    json_t *args = load("{}"); /* new ref */
    assert_int_equal(tg__checksum_compute(NULL, args, NULL, 0, out), TG_EINVAL);
    json_decref(args);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_known),
        cmocka_unit_test(test_key_order_independent),
        cmocka_unit_test(test_tool_is_escaped),
        cmocka_unit_test(test_hmac_known),
        cmocka_unit_test(test_verify),
        cmocka_unit_test(test_tape_matches),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
