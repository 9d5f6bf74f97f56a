/* SPDX-License-Identifier: MIT */
/*
 * test_termtext.c - text made safe for a terminal (termtext.c and the
 * public tg_terminal_text): every C0 control, DEL, every C1 control, the
 * bidirectional controls and invalid UTF-8 come out as visible escapes and
 * never raw; printable text, valid UTF-8 and backslashes pass unchanged;
 * newlines and tabs stay with TG_TERMINAL_KEEP_LINES; JSON text stays the
 * same JSON value (checked over every code point class and random
 * strings), and escaping safe text again changes nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "buf.h"
#include "termtext.h"
#include "toolgate.h"

static char *esc(const char *s, size_t n, unsigned flags)
{
    char *out = tg_terminal_text(s, n, flags);
    assert_non_null(out);
    return out;
}

static void assert_esc(const char *s, size_t n, unsigned flags,
                       const char *want)
{
    char *got = esc(s, n, flags);
    if (strcmp(got, want) != 0)
        fail_msg("escaped as '%s', want '%s'", got, want);
    tg_free(got);
}

/* No byte a terminal acts on: C0 (but newline and tab when kept), DEL, the
 * UTF-8 of C1 (C2 80-9F) and of the bidirectional controls, or invalid
 * UTF-8. */
static void assert_inert(const char *s, unsigned flags)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; p[i]; i++) {
        unsigned char c = p[i];
        if (c < 0x20 &&
            !((flags & TG_TERMINAL_KEEP_LINES) && (c == '\n' || c == '\t')))
            fail_msg("raw control byte 0x%02x at %zu in '%s'", c, i, s);
        if (c == 0x7F)
            fail_msg("raw DEL at %zu", i);
        if (c == 0xC2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9F)
            fail_msg("raw C1 control at %zu", i);
        if (c == 0xE2 && p[i + 1] == 0x80 && p[i + 2] >= 0xAA &&
            p[i + 2] <= 0xAE)
            fail_msg("raw bidirectional override at %zu", i);
        if (c == 0xE2 && p[i + 1] == 0x81 && p[i + 2] >= 0xA6 &&
            p[i + 2] <= 0xA9)
            fail_msg("raw bidirectional isolate at %zu", i);
    }
}

static void test_the_reproduction(void **state)
{
    (void)state;
    static const char id[] = "e1\x1b[31mRED\x1b]0;pwned\x07\r\nfake line";
    assert_esc(id, strlen(id), 0,
               "e1\\x1b[31mRED\\x1b]0;pwned\\x07\\r\\nfake line");
    char *got = esc(id, strlen(id), TG_TERMINAL_KEEP_LINES);
    assert_inert(got, TG_TERMINAL_KEEP_LINES);
    assert_string_equal(got, "e1\\x1b[31mRED\\x1b]0;pwned\\x07\\r\nfake line");
    tg_free(got);
}

static void test_every_control(void **state)
{
    (void)state;
    /* each C0 byte and DEL, alone and between letters */
    for (int c = 0; c < 0x80; c++) {
        if (c >= 0x20 && c < 0x7F)
            continue;
        char in[3] = {'a', (char)c, 'b'};
        char *got = esc(in, 3, 0);
        assert_inert(got, 0);
        char want[16];
        if (c == '\n')
            snprintf(want, sizeof want, "a\\nb");
        else if (c == '\r')
            snprintf(want, sizeof want, "a\\rb");
        else if (c == '\t')
            snprintf(want, sizeof want, "a\\tb");
        else
            snprintf(want, sizeof want, "a\\x%02xb", c);
        assert_string_equal(got, want);
        tg_free(got);
    }
    /* each C1 control, as UTF-8 */
    for (unsigned cp = 0x80; cp <= 0x9F; cp++) {
        char in[2] = {(char)0xC2, (char)cp};
        char *got = esc(in, 2, 0);
        char want[16];
        snprintf(want, sizeof want, "\\u%04x", cp);
        assert_string_equal(got, want);
        tg_free(got);
    }
    /* the bidirectional embeddings, overrides and isolates */
    static const unsigned bidi[] = {0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
                                    0x2066, 0x2067, 0x2068, 0x2069};
    for (size_t i = 0; i < sizeof bidi / sizeof bidi[0]; i++) {
        unsigned cp = bidi[i];
        char in[3] = {(char)(0xE0 | cp >> 12), (char)(0x80 | (cp >> 6 & 0x3F)),
                      (char)(0x80 | (cp & 0x3F))};
        char *got = esc(in, 3, 0);
        char want[16];
        snprintf(want, sizeof want, "\\u%04x", cp);
        assert_string_equal(got, want);
        tg_free(got);
    }
}

static void test_what_passes(void **state)
{
    (void)state;
    /* printable ASCII, backslashes, accents, CJK, emoji, U+00A0 (after the
     * C1 range), U+2029 and U+206A (around the bidirectional ranges) */
    static const char ok[] = "path C:\\dir \"q\" caf\xC3\xA9 \xE6\x97\xA5 "
                             "\xF0\x9F\x98\x80 \xC2\xA0 \xE2\x80\xA9 "
                             "\xE2\x81\xAA ~";
    assert_esc(ok, strlen(ok), 0, ok);
    assert_int_equal(tg__term_plain_prefix(ok, strlen(ok), 0), strlen(ok));
    /* escaping safe text again changes nothing */
    static const char hostile[] = "a\x1b[2J\xC2\x9B\xE2\x80\xAE\xFF\r\n";
    char *once = esc(hostile, sizeof hostile - 1, 0);
    char *twice = esc(once, strlen(once), 0);
    assert_string_equal(once, twice);
    tg_free(once);
    tg_free(twice);
    /* NUL bytes inside the counted text are shown, not a cut */
    assert_esc("a\0b", 3, 0, "a\\x00b");
    assert_esc(NULL, 0, 0, "");
    assert_esc("", 0, 0, "");
}

static void test_invalid_utf8(void **state)
{
    (void)state;
    /* a lone continuation, a cut sequence, an overlong form, a surrogate,
     * beyond U+10FFFF, and a raw 0x9B (CSI in 8-bit terminals) */
    assert_esc("\x80", 1, 0, "\\x80");
    assert_esc("a\xE6\x97", 3, 0, "a\\xe6\\x97");
    assert_esc("\xC0\xAF", 2, 0, "\\xc0\\xaf");
    assert_esc("\xED\xA0\x80", 3, 0, "\\xed\\xa0\\x80");
    assert_esc("\xF4\x90\x80\x80", 4, 0, "\\xf4\\x90\\x80\\x80");
    assert_esc("\x9B"
               "2J",
               3, 0, "\\x9b2J");
    assert_esc("\xFF", 1, TG_TERMINAL_JSON, "\\ufffd");
}

/* A string of n bytes drawn from the classes that matter. */
static size_t random_text(char *out, size_t cap, unsigned *seed)
{
    static const char *const pieces[] = {"a",
                                         "\\",
                                         "\"",
                                         "\x1b",
                                         "\x07",
                                         "\r",
                                         "\n",
                                         "\t",
                                         "\x7f",
                                         "\xC2\x9B",
                                         "\xC2\x85",
                                         "\xC3\xA9",
                                         "\xE2\x80\xAE",
                                         "\xE2\x81\xA6",
                                         "\xE6\x97\xA5",
                                         "\xF0\x9F\x98\x80"};
    size_t n = 0;
    for (int k = 0; k < 40; k++) {
        *seed = *seed * 1103515245u + 12345u;
        const char *p =
            pieces[(*seed >> 16) % (sizeof pieces / sizeof *pieces)];
        size_t l = strlen(p);
        if (n + l >= cap)
            break;
        memcpy(out + n, p, l);
        n += l;
    }
    out[n] = '\0';
    return n;
}

static void test_json_stays_the_same_value(void **state)
{
    (void)state;
    unsigned seed = 7;
    for (int round = 0; round < 500; round++) {
        char text[256];
        size_t n = random_text(text, sizeof text, &seed);
        json_t *v = json_pack("{s:s%, s:[s%]}", "k", text, n, "a", text, n);
        assert_non_null(v);
        int flags = round % 2 ? JSON_INDENT(2) : JSON_COMPACT;
        char *dump = json_dumps(v, (size_t)flags);
        char *safe = esc(dump, strlen(dump), TG_TERMINAL_JSON);
        assert_inert(safe, TG_TERMINAL_KEEP_LINES);
        json_error_t jerr;
        json_t *back = json_loads(safe, 0, &jerr);
        if (back == NULL || !json_equal(back, v))
            fail_msg("not the same JSON value: %s -> %s (%s)", dump, safe,
                     back ? "differs" : jerr.text);
        json_decref(back);
        free(dump);
        tg_free(safe);
        json_decref(v);
        /* and as plain text: inert, newlines escaped */
        char *plain = esc(text, n, 0);
        assert_inert(plain, 0);
        tg_free(plain);
    }
}

static void test_buffer_limit(void **state)
{
    (void)state;
    tg__buf b;
    tg__buf_init(&b, 8);
    assert_int_equal(tg__term_escape(&b, "\x1b\x1b\x1b", 3, 0), TG_ELIMIT);
    tg__buf_cleanup(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_reproduction),
        cmocka_unit_test(test_every_control),
        cmocka_unit_test(test_what_passes),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_json_stays_the_same_value),
        cmocka_unit_test(test_buffer_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
