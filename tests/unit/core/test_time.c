/* SPDX-License-Identifier: MIT */
/*
 * test_time.c - timestamps: formatting and parsing of RFC 3339 (expected
 * values from node's Date.parse / toISOString), offsets, invalid dates and
 * times, leap seconds, JSON inputs in seconds, milliseconds and strings, and
 * the clocks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "tg_test.h"
#include "timeutil.h"
#include "toolgate.h"

static const struct {
    const char *text;
    int64_t ms;
} known[] = {
    {"2026-11-22T04:17:09.123Z", 1795321029123LL},
    {"1970-01-01T00:00:00.000Z", 0},
    {"2000-02-29T23:59:59.999Z", 951868799999LL},
    {"1969-12-31T23:59:59.999Z", -1},
    {"0001-01-01T00:00:00.000Z", -62135596800000LL},
    {"9999-12-31T23:59:59.999Z", 253402300799999LL},
    {"1900-03-01T00:00:00.000Z", -2203891200000LL},
    {"2024-12-31T23:59:59.000Z", 1735689599000LL},
};

static void test_format_and_parse_known(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        char out[TG_TIME_MAX];
        assert_int_equal(tg__time_format(known[i].ms, out), 24);
        assert_string_equal(out, known[i].text);
        int64_t ms = 42;
        assert_int_equal(tg__time_parse(known[i].text, &ms), 0);
        assert_int_equal(ms, known[i].ms);
    }
}

static void test_round_trip_many(void **state)
{
    (void)state;
    /* Every 7919th hour plus odd milliseconds across 1600..2400. */
    for (int64_t ms = -11676096000000LL; ms < 13569465600000LL;
         ms += 7919LL * 3600000 + 12345) {
        char out[TG_TIME_MAX];
        int64_t back = 0;
        tg__time_format(ms, out);
        assert_int_equal(tg__time_parse(out, &back), 0);
        assert_int_equal(back, ms);
    }
}

static void test_format_extremes(void **state)
{
    (void)state;
    char out[TG_TIME_MAX];
    tg__time_format(253402300800000LL, out);
    assert_string_equal(out, "+010000-01-01T00:00:00.000Z");
    tg__time_format(-62167219200001LL, out);
    assert_string_equal(out, "-000001-12-31T23:59:59.999Z");
    /* Absurd values are clamped, never overflow the buffer. */
    assert_true(tg__time_format(INT64_MAX, out) < TG_TIME_MAX);
    assert_true(tg__time_format(INT64_MIN, out) < TG_TIME_MAX);
}

static void test_parse_variants(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t ms;
    } ok[] = {
        {"2026-11-22T04:17:09Z", 1795321029000LL},
        {"2026-11-22t04:17:09z", 1795321029000LL},
        {"2026-11-22 04:17:09Z", 1795321029000LL},
        {"2026-11-22T06:17:09.123+02:00", 1795321029123LL},
        {"2026-11-22T00:47:09.123-03:30", 1795321029123LL},
        {"2026-11-22T04:17:09+00:00", 1795321029000LL},
        {"2026-11-22T04:17:09-00:00", 1795321029000LL},
        {"2026-11-22T04:17:09.1Z", 1795321029100LL},
        {"2026-11-22T04:17:09.12Z", 1795321029120LL},
        {"2026-11-22T04:17:09.123456789Z", 1795321029123LL},
        /* a leap second is clamped to :59 */
        {"2016-12-31T23:59:60Z", 1483228799000LL},
        {"2016-12-31T23:59:60.5Z", 1483228799500LL},
        {"2024-02-29T00:00:00Z", 1709164800000LL},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t ms = 0;
        if (tg__time_parse(ok[i].text, &ms) != 0)
            fail_msg("'%s' rejected", ok[i].text);
        if (ms != ok[i].ms)
            fail_msg("'%s': got %lld, want %lld", ok[i].text, (long long)ms,
                     (long long)ok[i].ms);
    }
}

static void test_parse_invalid(void **state)
{
    (void)state;
    static const char *bad[] = {
        "2026-02-30T00:00:00Z",      /* no such day */
        "9999-12-31T23:59:01-23:59", /* UTC instant in year 10000 */
        "0000-01-01T00:00:00+00:01", /* UTC instant before year 0 */
        "2025-02-29T00:00:00Z",      /* not a leap year */
        "1900-02-29T00:00:00Z",      /* century, not a leap year */
        "2026-04-31T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-00-01T00:00:00Z",
        "2026-01-00T00:00:00Z",
        "2026-01-01T25:00:00Z",
        "2026-01-01T24:00:00Z",
        "2026-01-01T23:60:00Z",
        "2026-01-01T23:59:61Z",
        "2026-01-01T00:00:00",       /* no offset */
        "2026-01-01T00:00:00+0100",  /* offset without colon */
        "2026-01-01T00:00:00+24:00", /* offset hour */
        "2026-01-01T00:00:00+01:60",
        "2026-01-01T00:00:00.Z", /* empty fraction */
        "2026-01-01T00:00:00Zx", /* trailing garbage */
        "2026-01-01X00:00:00Z",
        "2026-1-01T00:00:00Z",
        "26-01-01T00:00:00Z",
        "2026-01-01",
        "",
        "now",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t ms = 7;
        if (tg__time_parse(bad[i], &ms) != TG_EINVAL)
            fail_msg("'%s' accepted", bad[i]);
        assert_int_equal(ms, 7); /* untouched on failure */
    }
    int64_t ms;
    assert_int_equal(tg__time_parse(NULL, &ms), TG_EINVAL);
}

static int64_t from_json_text(const char *text, int *rc)
{
    json_error_t jerr;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr); /* new ref */
    int64_t ms = -999;
    if (v == NULL)
        fail_msg("bad test JSON %s", text);
    *rc = tg__time_from_json(v, &ms);
    json_decref(v);
    return ms;
}

static void test_from_json(void **state)
{
    (void)state;
    int rc;
    /* Seconds below 1e11, milliseconds from 1e11 on. */
    assert_int_equal(from_json_text("1700000000", &rc), 1700000000000LL);
    assert_int_equal(rc, 0);
    assert_int_equal(from_json_text("1700000000000", &rc), 1700000000000LL);
    assert_int_equal(rc, 0);
    assert_int_equal(from_json_text("99999999999", &rc), 99999999999000LL);
    assert_int_equal(from_json_text("100000000000", &rc), 100000000000LL);
    assert_int_equal(from_json_text("0", &rc), 0);
    assert_int_equal(from_json_text("-86400", &rc), -86400000LL);
    assert_int_equal(rc, 0);
    /* Reals: fractional seconds kept to the millisecond, rounded. */
    assert_int_equal(from_json_text("1700000000.123", &rc), 1700000000123LL);
    assert_int_equal(rc, 0);
    assert_int_equal(from_json_text("1.001", &rc), 1001);
    assert_int_equal(from_json_text("1700000000000.0", &rc), 1700000000000LL);
    assert_int_equal(from_json_text("1700000000000.6", &rc), 1700000000001LL);
    /* Strings. */
    assert_int_equal(from_json_text("\"2026-11-22T04:17:09.123Z\"", &rc),
                     1795321029123LL);
    assert_int_equal(rc, 0);
    /* Everything else, and out of range numbers. */
    static const char *bad[] = {"\"2026-02-30T00:00:00Z\"",
                                "\"yesterday\"",
                                "true",
                                "null",
                                "[]",
                                "{}",
                                "1e300",
                                "-1e300",
                                "9223372036854775807",
                                "-9223372036854775807"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        from_json_text(bad[i], &rc);
        if (rc != TG_EINVAL)
            fail_msg("%s accepted", bad[i]);
    }
    int64_t ms;
    assert_int_equal(tg__time_from_json(NULL, &ms), TG_EINVAL);
}

static void test_clocks(void **state)
{
    (void)state;
    /* Bounds: a preempted reader is late, never early (scaled). */
    int64_t slack = tg_test_ms(2000);
    int64_t now = tg__now_ms();
    int64_t sys = (int64_t)time(NULL) * 1000;
    assert_true(now >= sys - slack && now <= sys + slack);
    uint64_t a = tg__mono_ns();
    struct timespec ts = {0, 2000000}; /* 2 ms */
    nanosleep(&ts, NULL);
    uint64_t b = tg__mono_ns();
    assert_true(b - a >= 2000000);
    assert_true(b - a < (uint64_t)tg_test_ms(5000) * 1000000ULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_and_parse_known),
        cmocka_unit_test(test_round_trip_many),
        cmocka_unit_test(test_format_extremes),
        cmocka_unit_test(test_parse_variants),
        cmocka_unit_test(test_parse_invalid),
        cmocka_unit_test(test_from_json),
        cmocka_unit_test(test_clocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
