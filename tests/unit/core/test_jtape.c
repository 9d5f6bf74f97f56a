/* SPDX-License-Identifier: MIT */
/*
 * test_jtape.c - the JSON tape (jtape.c) against jansson, the authority it
 * follows: the tokens of valid documents; refusals with jansson's message,
 * line and column (syntax, duplicate keys in small and hashed objects,
 * depth, UTF-8, "\u0000", surrogate escapes, number ranges); "\u0000"
 * accepted on request (TG_JTAPE_ALLOW_NUL), and strings no tool gets and
 * duplicate keys (TG_JTAPE_BAD_STRINGS, TG_JTAPE_DUPLICATE_KEYS); the jansson
 * value built from a tape; the canonical form written from a tape, byte for
 * byte the one written from jansson's value, over the fuzz corpus and over
 * 20,000 generated documents in several spellings; the dump-form check;
 * and 20,000 mutated texts whose acceptance and errors must match jansson.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include <cmocka.h>

#include "jcs.h"
#include "jtape.h"
#include "toolgate.h"

#define FLAGS (JSON_DECODE_ANY | JSON_REJECT_DUPLICATES)

/* ------------------------------------------------------------ helpers */

/* Parses text with both parsers and checks they agree: acceptance, and for
 * refusals jansson's text, line and column; for documents the value and
 * the canonical form. Returns 1 when accepted. */
static int agree_n(const char *text, size_t len)
{
    json_error_t jerr;
    tg__jtape tape;
    tg__jtape_error terr;
    json_t *ref = json_loadb(text, len, FLAGS, &jerr); /* new ref */
    int rc = tg__jtape_parse(text, len, 0, &tape, &terr);
    if ((rc == 0) != (ref != NULL))
        fail_msg("acceptance differs for '%.*s': tape %s (%s), jansson %s "
                 "(%s)",
                 (int)len, text, rc ? "refuses" : "accepts",
                 rc ? terr.text : "", ref ? "accepts" : "refuses",
                 ref ? "" : jerr.text);
    if (rc != 0) {
        if (strcmp(terr.text, jerr.text) != 0 || terr.line != jerr.line ||
            terr.column != jerr.column)
            fail_msg("error differs for '%.*s':\n tape    %s at %d:%d\n "
                     "jansson %s at %d:%d",
                     (int)len, text, terr.text, terr.line, terr.column,
                     jerr.text, jerr.line, jerr.column);
        return 0;
    }
    json_t *built = tg__jtape_to_json(&tape, 0); /* new ref */
    assert_non_null(built);
    char *a = json_dumps(built, JSON_COMPACT | JSON_ENCODE_ANY);
    char *b = json_dumps(ref, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!json_equal(built, ref) || strcmp(a, b) != 0)
        fail_msg("values differ for '%.*s': %s vs %s", (int)len, text, a, b);
    tg__buf x, y;
    tg__buf_init(&x, 0);
    tg__buf_init(&y, 0);
    assert_int_equal(tg__jcs_write_tape(&tape, &x), 0);
    assert_int_equal(tg__jcs_write(ref, &y), 0);
    if (x.len != y.len || memcmp(x.data, y.data, x.len) != 0)
        fail_msg("JCS differs for '%.*s':\n tape %s\n DOM  %s", (int)len, text,
                 tg__buf_cstr(&x), tg__buf_cstr(&y));
    /* A text in dump form is what json_dumps writes for it. */
    if (tg__jtape_is_dump_form(&tape) &&
        (strlen(b) != len || memcmp(b, text, len) != 0))
        fail_msg("'%.*s' claimed dump form, jansson writes %s", (int)len, text,
                 b);
    tg__buf_cleanup(&x);
    tg__buf_cleanup(&y);
    free(a);
    free(b);
    json_decref(built);
    json_decref(ref);
    tg__jtape_free(&tape);
    return 1;
}

static int agree(const char *text)
{
    return agree_n(text, strlen(text));
}

/* The error the tape gives for text (which must be refused). */
static tg__jtape_error refusal(const char *text)
{
    tg__jtape tape;
    tg__jtape_error e;
    assert_int_equal(tg__jtape_parse(text, strlen(text), 0, &tape, &e),
                     TG_EPARSE);
    assert_null(tape.mem);
    return e;
}

/* ------------------------------------------------------------ tokens */

static void test_tokens(void **state)
{
    (void)state;
    const char *text = " {\"a\": [1, -2.5e3, \"x\\ny\"], \"b\": {}, \"c\": "
                       "[true, false, null]} ";
    tg__jtape t;
    assert_int_equal(tg__jtape_parse(text, strlen(text), 0, &t, NULL), 0);
    assert_ptr_equal(t.text, text);
    assert_int_equal(t.n, 13);
    const tg__jtok *k = t.tok;
    assert_int_equal(k[0].kind, TG_JT_OBJECT);
    assert_int_equal(k[0].b, 3);  /* members */
    assert_int_equal(k[0].a, 13); /* index after it */
    assert_int_equal(k[1].kind, TG_JT_KEY);
    assert_memory_equal(text + k[1].a, "a", 1);
    assert_int_equal(k[2].kind, TG_JT_ARRAY);
    assert_int_equal(k[2].b, 3);
    assert_int_equal(k[2].a, 6);
    assert_int_equal(k[3].kind, TG_JT_NUMBER);
    assert_int_equal(k[3].flags & TG_JT_REAL, 0);
    assert_int_equal(k[4].kind, TG_JT_NUMBER);
    assert_int_equal(k[4].flags & TG_JT_REAL, TG_JT_REAL);
    assert_int_equal(k[4].b, 6);
    assert_int_equal(k[5].kind, TG_JT_STRING);
    assert_int_equal(k[5].flags, TG_JT_ESCAPED);
    assert_int_equal(k[5].b, 4); /* x\ny as written */
    assert_int_equal(k[7].kind, TG_JT_OBJECT);
    assert_int_equal(k[7].b, 0);
    assert_int_equal(k[7].a, 8);
    assert_int_equal(k[10].kind, TG_JT_TRUE);
    assert_int_equal(k[11].kind, TG_JT_FALSE);
    assert_int_equal(k[12].kind, TG_JT_NULL);

    int64_t iv;
    double dv;
    assert_int_equal(tg__jtape_number(&t, &k[3], &iv, &dv), 1);
    assert_int_equal(iv, 1);
    assert_int_equal(tg__jtape_number(&t, &k[4], &iv, &dv), 2);
    assert_true(dv == -2500.0);

    tg__buf d;
    tg__buf_init(&d, 0);
    assert_int_equal(tg__jtape_decode(&t, &k[5], &d), 0);
    assert_int_equal(d.len, 3);
    assert_memory_equal(d.data, "x\ny", 3);
    tg__buf_cleanup(&d);
    tg__jtape_free(&t);
    assert_null(t.mem);
    tg__jtape_free(NULL);

    /* Scalars are documents too. */
    assert_true(agree("42"));
    assert_true(agree(" \"s\" "));
    assert_true(agree("null"));
}

static void test_copy_and_storage(void **state)
{
    (void)state;
    char text[] = "{\"k\":[1,2,{\"z\":\"\\u00e9\"}]}";
    tg__jtape t, c;
    assert_int_equal(
        tg__jtape_parse(text, strlen(text), TG_JTAPE_COPY, &t, NULL), 0);
    assert_ptr_equal(t.text, t.mem); /* the text comes first */
    text[0] = 'X';                   /* the tape kept its own copy */
    assert_string_equal(t.text, "{\"k\":[1,2,{\"z\":\"\\u00e9\"}]}");
    assert_int_equal(tg__jtape_copy(&c, &t), 0);
    assert_string_equal(c.text, t.text);
    assert_int_equal(c.n, t.n);
    assert_memory_equal(c.tok, t.tok, t.n * sizeof *t.tok);
    tg__jtape_free(&t);
    assert_null(t.mem);

    /* Tokens in the caller's storage when they fit, else allocated. */
    tg__jtok small[5];
    const char *doc = "{\"a\":[1,2]}";
    assert_int_equal(tg__jtape_parse_in(doc, strlen(doc), small, 5, &t, NULL),
                     0);
    assert_null(t.mem);
    assert_ptr_equal(t.tok, small);
    assert_int_equal(t.n, 5);
    tg__jtape_free(&t);
    const char *big = "[1,2,3,4,5,6]";
    assert_int_equal(tg__jtape_parse_in(big, strlen(big), small, 5, &t, NULL),
                     0);
    assert_non_null(t.mem);
    assert_int_equal(t.n, 7);
    tg__jtape_free(&t);

    /* A head for the caller's record before the text and the tokens. */
    int rc;
    char *block = tg__jtape_parse_head(doc, strlen(doc), 40, &t, NULL, &rc);
    assert_non_null(block);
    assert_int_equal(rc, 0);
    assert_null(t.mem);
    assert_true(t.text >= block + 40);
    assert_string_equal(t.text, doc);
    free(block);
    assert_null(tg__jtape_parse_head("{", 1, 40, &t, NULL, &rc));
    assert_int_equal(rc, TG_EPARSE);
    tg__jtape_free(&c);
}

/* ------------------------------------------------------------ refusals */

static void test_syntax_errors(void **state)
{
    (void)state;
    static const char *bad[] = {
        "",
        " ",
        "{",
        "}",
        "[",
        "]",
        "[1,]",
        "[1 2]",
        "{\"a\"}",
        "{\"a\" 1}",
        "{\"a\":}",
        "{\"a\":1,}",
        "{,}",
        "{1:2}",
        "{\"a\":1 \"b\":2}",
        "tru",
        "truex",
        "nul",
        "falsey",
        "True",
        "-",
        "--1",
        "01",
        "-01",
        "1.",
        "1.e3",
        ".5",
        "1e",
        "1e+",
        "1ee3",
        "+1",
        "0x10",
        "1 2",
        "\"abc",
        "\"a\nb\"",
        "\"a\tb\"",
        "\"\\x\"",
        "\"\\u12\"",
        "\"\\u12G4\"",
        "\"\\",
        "[\"a\",",
        "{\"a\":[}",
        "[{]",
        "@",
        "\x7f",
        "[1]x",
        "{\"a\":1}}",
        "\"\\u00e9",
        "[\"\\uzzzz\"]",
        "{\"averyveryverylongkeyname\":1,}",
        "\"a string longer than twenty bytes",
        "\"short",
        "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22 x]",
        "\n\n  [1,\n  2,\n  x]",
        "[\r\n1\r\n,\r\n]",
        "nulll",
        "[nan]",
        "[Infinity]",
        "[-Infinity]",
        "{\"a\":1,\"b\"}",
        "\"\\u\"",
        "[\"\\ud83d\\ude00\" 1]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(agree(bad[i]));
    /* jansson's wording, checked once without it. */
    tg__jtape_error e = refusal("{\"path\":\"b.t");
    assert_string_equal(e.text, "premature end of input near '\"b.t'");
    assert_int_equal(e.line, 1);
    assert_int_equal(e.column, 12);
    e = refusal("{\"location\":");
    assert_string_equal(e.text, "unexpected token near end of file");
    assert_int_equal(e.column, 12);
    e = refusal("[1,\n  x]");
    assert_string_equal(e.text, "invalid token near 'x'");
    assert_int_equal(e.line, 2);
    assert_int_equal(e.column, 3);
    /* Raw NUL bytes: jansson's context stops at them. */
    assert_false(agree_n("[\0]", 3));
    assert_false(agree_n("\0", 1));
    assert_false(agree_n("\"a\0\"", 4));
    assert_false(agree_n("[1]\0", 4));
    assert_false(agree_n("tru\0", 4));
    /* jansson never reads a NUL byte that directly follows a number or a
     * word (its stream takes the put-back NUL for an empty buffer): such
     * texts are accepted, and later positions do not count the byte. */
    assert_true(agree_n("[1\0]", 4));
    assert_true(agree_n("{\"a\":1\0,\"b\":true\0}", 18));
    assert_true(agree_n("null\0", 5));
    assert_true(agree_n("-2.5e3\0", 7));
    assert_false(agree_n("[1\0\0]", 5));
    assert_false(agree_n("[1\0 \0]", 6));
    assert_false(agree_n("[1 \0]", 5));
    assert_false(agree_n("[1\0x]", 5));
    assert_false(agree_n("[1\0,\n 2\0,\n x]", 14));
    assert_false(agree_n("{\"a\":1\0\"b\"}", 12));
}

static void test_duplicate_keys(void **state)
{
    (void)state;
    tg__jtape_error e = refusal("{\"path\":\"d\",\"path\":\"e\"}");
    assert_string_equal(e.text, "duplicate object key near '\"path\"'");
    assert_int_equal(e.column, 18);
    assert_false(agree("{\"a\":1,\"a\":2}"));
    /* Compared after decoding escapes. */
    assert_false(agree("{\"a\":1,\"\\u0061\":2}"));
    assert_false(agree("{\"\\/\":1,\"/\":2}"));
    assert_false(agree("{\"\\ud83d\\ude00\":1,\"\xf0\x9f\x98\x80\":2}"));
    assert_true(agree("{\"a\":1,\"A\":2,\"a \":3,\"\\u0062\":4}"));
    /* Same key in different objects is fine. */
    assert_true(agree("{\"a\":{\"a\":{\"a\":1}},\"b\":{\"a\":2}}"));
    /* Objects with many members (hashed after 16): the first repeat in
     * document order is the one reported, wherever it is. */
    char buf[8192];
    for (int n = 14; n <= 40; n++)
        for (int dup = -1; dup < n; dup += 3) {
            size_t w = 0;
            w += (size_t)snprintf(buf + w, sizeof buf - w, "{");
            for (int i = 0; i < n; i++)
                w += (size_t)snprintf(buf + w, sizeof buf - w,
                                      "%s\"k%d\":{\"k%d\":%d}", i ? "," : "",
                                      i == n - 1 && dup >= 0 ? dup : i, i, i);
            w += (size_t)snprintf(buf + w, sizeof buf - w, "}");
            agree(buf);
        }
    /* A duplicate in an outer object before an error in an inner one. */
    size_t w = 0;
    w += (size_t)snprintf(buf + w, sizeof buf - w, "{");
    for (int i = 0; i < 20; i++)
        w += (size_t)snprintf(buf + w, sizeof buf - w, "\"k%d\":1,",
                              i == 19 ? 3 : i);
    snprintf(buf + w, sizeof buf - w, "\"x\":{\"a\":1,\"a\":2}}");
    e = refusal(buf);
    assert_string_equal(e.text, "duplicate object key near '\"k3\"'");
    assert_false(agree(buf));
}

static void test_depth(void **state)
{
    (void)state;
    size_t n = 2 * TG_JTAPE_MAX_DEPTH + 16;
    char *buf = malloc(n + 8);
    assert_non_null(buf);
    /* 2048 containers are fine; a value inside all of them is not. */
    for (int depth = TG_JTAPE_MAX_DEPTH - 1; depth <= TG_JTAPE_MAX_DEPTH + 1;
         depth++) {
        memset(buf, '[', (size_t)depth);
        memset(buf + depth, ']', (size_t)depth);
        assert_int_equal(agree_n(buf, 2 * (size_t)depth),
                         depth <= TG_JTAPE_MAX_DEPTH);
        memset(buf, '[', (size_t)depth);
        buf[depth] = '1';
        memset(buf + depth + 1, ']', (size_t)depth);
        assert_int_equal(agree_n(buf, 2 * (size_t)depth + 1),
                         depth < TG_JTAPE_MAX_DEPTH);
    }
    size_t k = 0;
    for (int i = 0; i < TG_JTAPE_MAX_DEPTH; i++) {
        memcpy(buf + k, "{\"a\":", 5);
        k += 5;
        if (k + 8 > n)
            break;
    }
    buf[k++] = '1';
    agree_n(buf, k);
    tg__jtape_error e = refusal("[[[");
    assert_string_equal(e.text, "']' expected near end of file");
    free(buf);
}

static void test_utf8(void **state)
{
    (void)state;
    static const char *texts[] = {
        "\"\xc3\xa9\"",                    /* é */
        "\"\xe2\x82\xac\"",                /* € */
        "\"\xf0\x9f\x98\x80\"",            /* an emoji */
        "\"\xf4\x8f\xbf\xbf\"",            /* U+10FFFF */
        "\"\xc0\xaf\"",                    /* overlong */
        "\"\xe0\x80\xaf\"",                /* overlong */
        "\"\xed\xa0\x80\"",                /* an encoded surrogate */
        "\"\xf4\x90\x80\x80\"",            /* beyond U+10FFFF */
        "\"\xf5\x80\x80\x80\"",            /* bad lead */
        "\"\x80\"",                        /* a lone continuation byte */
        "\"\xc3\"",                        /* truncated */
        "\"\xc3",                          /* truncated at the end */
        "\"\xe2\x82",                      /* truncated at the end */
        "\xc3\xa9",                        /* a character outside strings */
        "[\xff]",                          /* a bad byte outside strings */
        "[1\xff]",                         /* after a number */
        "[tru\xc3\xa9]",                   /* after a word */
        "\"\\\xc3\xa9\"",                  /* an escape of a character */
        "\"\\u12\xc3\xa9\"",               /* in a \u escape */
        "\"\\\xff\"",                      /* a bad byte after a backslash */
        "{\"\xc3\xa9\":1,\"\xc3\xa9\":2}", /* duplicate non-ASCII keys */
        "\n  \"\xc3\xa9\xc3\xa9 \xff\"",   /* columns count characters */
        "[\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
        "\xc3\xa9\xc3\xa9\xc3\xa9\", x]",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        agree(texts[i]);
    tg__jtape_error e = refusal("[\xff]");
    assert_string_equal(e.text, "unable to decode byte 0xff");
}

static void test_nul_and_surrogates(void **state)
{
    (void)state;
    tg__jtape_error e = refusal("[\"a\\u0000b\"]");
    assert_string_equal(e.text, "\\u0000 is not allowed without "
                                "JSON_ALLOW_NUL near '\"a\\u0000b\"'");
    e = refusal("{\"a\\u0000\":1}");
    assert_string_equal(e.text, "NUL byte in object key not supported near "
                                "'\"a\\u0000\"'");
    e = refusal("\"\\ud800\"");
    assert_string_equal(e.text, "invalid Unicode '\\uD800' near '\"\\ud800\"'");
    static const char *texts[] = {
        "\"\\ud83d\\ude00\"",   "\"\\uD83D\\uDE00\"",
        "\"\\ud800\"",          "\"\\udc00\"",
        "\"\\ud800\\u0041\"",   "\"\\ud800\\ud800\"",
        "\"\\ud800x\"",         "\"\\ud800\\n\"",
        "\"\\ud800\\\\udc00\"", "\"\\udbff\\udfff\"",
        "\"\\u0000\"",          "\"\\ud800\\u0000\"",
        "\"\\u0001\\u001f\"",   "{\"\\u0000\":1}",
        "[\"\\ud800 \\x\"]",    "\"\\ud800 a longer string than twenty\"",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        agree(texts[i]);
}

/* TG_JTAPE_ALLOW_NUL: "\u0000" in strings as jansson's JSON_ALLOW_NUL
 * reads it, in keys too, every other refusal unchanged; the default stays
 * jansson's (test_nul_and_surrogates). */
static void test_allow_nul(void **state)
{
    (void)state;
    const unsigned NUL = TG_JTAPE_ALLOW_NUL;
    /* Strings: the value jansson builds with JSON_ALLOW_NUL. */
    static const char *values[] = {
        "\"\\u0000\"",
        "[\"a\\u0000b\",\"\\u0000\\u0000\"]",
        "{\"k\":\"x\\u0000\\ud83d\\ude00\"}",
        "\"\\u0000 a longer string than twenty bytes\"",
    };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        const char *text = values[i];
        json_error_t jerr;
        json_t *ref = json_loadb(text, strlen(text), FLAGS | JSON_ALLOW_NUL,
                                 &jerr); /* new ref */
        assert_non_null(ref);
        tg__jtape t;
        tg__jtape_error e;
        assert_int_equal(tg__jtape_parse(text, strlen(text), 0, &t, &e),
                         TG_EPARSE);
        assert_int_equal(tg__jtape_parse(text, strlen(text), NUL, &t, &e), 0);
        json_t *built = tg__jtape_to_json(&t, 0); /* new ref */
        assert_non_null(built);
        if (!json_equal(built, ref))
            fail_msg("value differs for %s", text);
        json_decref(built);
        json_decref(ref);
        tg__jtape_free(&t);
    }
    /* Decoded bytes keep the NUL; the length says where the string ends. */
    const char *text = "[\"a\\u0000b\"]";
    tg__jtape t;
    assert_int_equal(tg__jtape_parse(text, strlen(text), NUL, &t, NULL), 0);
    assert_int_equal(t.tok[1].kind, TG_JT_STRING);
    assert_true(t.tok[1].flags & TG_JT_ESCAPED);
    tg__buf b;
    tg__buf_init(&b, 0);
    assert_int_equal(tg__jtape_decode(&t, &t.tok[1], &b), 0);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.data, "a\0b", 3);
    tg__buf_cleanup(&b);
    tg__jtape_free(&t);
    /* Keys: distinct from their prefix, duplicates still found (linear
     * search and hashed). */
    text = "{\"a\\u0000\":1,\"a\":2,\"\\u0000\":3}";
    assert_int_equal(tg__jtape_parse(text, strlen(text), NUL, &t, NULL), 0);
    json_t *o = tg__jtape_to_json(&t, 0); /* new ref */
    assert_int_equal(json_object_size(o), 3);
    assert_int_equal(json_integer_value(json_object_getn(o, "a\0", 2)), 1);
    assert_int_equal(json_integer_value(json_object_getn(o, "a", 1)), 2);
    assert_int_equal(json_integer_value(json_object_getn(o, "\0", 1)), 3);
    json_decref(o);
    tg__jtape_free(&t);
    tg__jtape_error e;
    text = "{\"a\\u0000\":1,\"a\\u0000\":2}";
    assert_int_equal(tg__jtape_parse(text, strlen(text), NUL, &t, &e),
                     TG_EPARSE);
    assert_string_equal(e.text, "duplicate object key near '\"a\\u0000\"'");
    tg__buf big;
    tg__buf_init(&big, 0);
    tg__buf_puts(&big, "{");
    for (int k = 0; k < 40; k++)
        tg__buf_printf(&big, "\"k\\u0000%d\":%d,\"k%d\":0,", k, k, k);
    tg__buf_puts(&big, "\"z\":0}");
    assert_int_equal(tg__jtape_parse(big.data, big.len, NUL, &t, NULL), 0);
    tg__jtape_free(&t);
    big.len -= 6; /* "z":0} */
    tg__buf_puts(&big, "\"k\\u000017\":1}");
    assert_int_equal(tg__jtape_parse(big.data, big.len, NUL, &t, &e),
                     TG_EPARSE);
    assert_non_null(strstr(e.text, "duplicate object key"));
    tg__buf_cleanup(&big);
    /* Every other refusal is as without the flag. */
    static const char *bad[] = {
        "[\"a\\u0000b\",]",
        "\"\\ud800\\u0000\"",
        "{\"\\u0000\":}",
        "[\"\\u0000\" 1]",
        "\"\\u0000\xff\"",
        "\"\\u000\"",
        "{\"\\u0000\":1,\"\\u0000\":2",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tg__jtape_error e1;
        json_error_t jerr;
        int r1 = tg__jtape_parse(bad[i], strlen(bad[i]), NUL, &t, &e1);
        assert_int_equal(r1, TG_EPARSE);
        json_t *ref = json_loadb(bad[i], strlen(bad[i]), FLAGS | JSON_ALLOW_NUL,
                                 &jerr); /* new ref */
        assert_null(ref);
        /* jansson refuses NUL keys even with JSON_ALLOW_NUL; elsewhere
         * the message, line and column are its own. */
        if (strstr(jerr.text, "NUL byte in object key") == NULL) {
            assert_string_equal(e1.text, jerr.text);
            assert_int_equal(e1.line, jerr.line);
            assert_int_equal(e1.column, jerr.column);
        }
    }
    /* The caller's storage, with and without the flag. */
    tg__jtok small[4];
    text = "[\"\\u0000\",1]";
    assert_int_equal(tg__jtape_parse_in(text, strlen(text), small, 4, &t, &e),
                     TG_EPARSE);
    assert_int_equal(
        tg__jtape_parse_in_flags(text, strlen(text), NUL, small, 4, &t, &e), 0);
    assert_ptr_equal(t.tok, small);
    assert_null(t.mem);
    assert_int_equal(t.n, 3);
    tg__jtape_free(&t);
    text = "[\"\\u0000\",1,2,3,4]"; /* outgrows the storage */
    assert_int_equal(
        tg__jtape_parse_in_flags(text, strlen(text), NUL, small, 4, &t, &e), 0);
    assert_non_null(t.mem);
    assert_int_equal(t.n, 6);
    tg__jtape_free(&t);
}

static void test_numbers(void **state)
{
    (void)state;
    static const char *texts[] = {
        "0",
        "-0",
        "1",
        "-1",
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775808",
        "-9223372036854775809",
        "99999999999999999999",
        "-99999999999999999999",
        "9007199254740993",
        "-9007199254740993",
        "0.1",
        "-0.0",
        "1e308",
        "1.7976931348623157e308",
        "1.8e308",
        "-1.8e308",
        "1e400",
        "1e-400",
        "4.9e-324",
        "1E2",
        "1e+2",
        "1e-2",
        "123456789012345678901234567890",
        "0.000001",
        "1e21",
        "1e-7",
        "[1,2.5,-3e-4,4E+5]",
        "1e99999999999999999999",
        "100000000000000000000000000000000000000000000000000000000000000000000"
        "00000000000000000000000000000000000000000000000000000000000000000000"
        "00000000000000000000000000000000000000000000000000000000000000000000"
        "00000000000000000000000000000000000000000000000000000000000000000000"
        "00000000000000000000000000000000000000000000000000000000.5",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        agree(texts[i]);
    tg__jtape_error e = refusal("[9223372036854775808]");
    assert_string_equal(e.text, "too big integer near '9223372036854775808'");
    e = refusal("1e400");
    assert_string_equal(e.text, "real number overflow near '1e400'");
}

static void test_dump_form(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int dump;
    } cases[] = {
        {"{\"ok\":true}", 1},
        {"{\"a\":[1,-2,\"x\"],\"b\":null}", 1},
        {"{\"ok\": true}", 0},
        {" {\"ok\":true}", 0},
        {"{\"ok\":true} ", 0},
        {"[1.5]", 0},
        {"[-0]", 0},
        {"[0]", 1},
        {"\"a\\/b\"", 0},
        {"\"a\\\"b\\\\c\\n\\t\"", 1},
        {"\"\\u001F\"", 1},
        {"\"\\u001f\"", 0},
        {"\"\\u000a\"", 0},
        {"\"\\u00e9\"", 0},
        {"\"\xc3\xa9\x7f\"", 1},
        {"{\"b\":1,\"a\":2}", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tg__jtape t;
        assert_int_equal(
            tg__jtape_parse(cases[i].text, strlen(cases[i].text), 0, &t, NULL),
            0);
        if (tg__jtape_is_dump_form(&t) != (cases[i].dump != 0))
            fail_msg("dump form of %s", cases[i].text);
        tg__jtape_free(&t);
        agree(cases[i].text);
    }
}

/* ------------------------------------------------------------ corpus */

static void test_fuzz_corpus(void **state)
{
    (void)state;
    const char *src = getenv("TG_SOURCE_DIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/fuzz_args",
             src ? src : "../..");
    DIR *d = opendir(dir);
    if (d == NULL)
        skip();
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (f == NULL)
            continue;
        char *buf = malloc(1 << 20);
        assert_non_null(buf);
        size_t n = fread(buf, 1, 1 << 20, f);
        fclose(f);
        agree_n(buf, n);
        free(buf);
        files++;
    }
    closedir(d);
    assert_true(files > 10);
}

/* ------------------------------------------------------------ random */

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static uint64_t rnd(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static unsigned pick(unsigned n)
{
    return (unsigned)(rnd() % n);
}

/* Characters chosen to exercise escapes and UTF-16 ordering: controls,
 * quotes, slash, ASCII, 2- and 3-byte characters, U+E000..U+FFFF (which
 * UTF-16 orders after surrogate pairs) and supplementary characters. */
static void rnd_string(char *out, size_t cap)
{
    static const char *const pieces[] = {
        "a",
        "b",
        "z",
        "A",
        "0",
        "_",
        " ",
        "\"",
        "\\",
        "/",
        "\n",
        "\t",
        "\x01",
        "\x1f",
        "\x7f",
        "\xc3\xa9",
        "\xe2\x82\xac",
        "\xee\x80\x80",
        "\xef\xbf\xbd",
        "\xf0\x9f\x98\x80",
        "\xf4\x8f\xbf\xbf",
        "key",
        "path",
        "p",
    };
    size_t n = pick(6), w = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = pieces[pick(sizeof pieces / sizeof pieces[0])];
        size_t l = strlen(p);
        if (w + l + 1 >= cap)
            break;
        memcpy(out + w, p, l);
        w += l;
    }
    out[w] = '\0';
}

static json_t *rnd_value(int depth)
{
    char s[64];
    unsigned kind = pick(depth > 4 ? 6 : 9);
    switch (kind) {
    case 0:
        return json_null();
    case 1:
        return json_boolean(pick(2));
    case 2: {
        static const json_int_t edge[] = {0,
                                          1,
                                          -1,
                                          9007199254740992LL,
                                          -9007199254740992LL,
                                          9007199254740993LL,
                                          INT64_MAX,
                                          INT64_MIN,
                                          1000000000000000LL};
        if (pick(3) == 0)
            return json_integer(edge[pick(sizeof edge / sizeof edge[0])]);
        return json_integer((json_int_t)(rnd() >> pick(64)) *
                            (pick(2) ? 1 : -1));
    }
    case 3: {
        double d;
        if (pick(2)) {
            uint64_t bits = rnd();
            memcpy(&d, &bits, sizeof d);
            if (d != d || d - d != 0)
                d = 1.5;
        } else
            d = (double)(int64_t)(rnd() % 2000001 - 1000000) /
                (double)(1 + pick(1000));
        return json_real(d);
    }
    case 4:
    case 5:
        rnd_string(s, sizeof s);
        return json_string(s);
    case 6:
    case 7: {
        json_t *o = json_object(); /* new ref */
        unsigned n = pick(depth < 2 ? 24 : 6);
        for (unsigned i = 0; i < n; i++) {
            rnd_string(s, sizeof s);
            json_object_set_new(o, s, rnd_value(depth + 1));
        }
        return o;
    }
    default: {
        json_t *a = json_array(); /* new ref */
        unsigned n = pick(6);
        for (unsigned i = 0; i < n; i++)
            json_array_append_new(a, rnd_value(depth + 1));
        return a;
    }
    }
}

static void test_random_documents(void **state)
{
    (void)state;
    static const size_t spellings[] = {
        JSON_COMPACT,
        JSON_INDENT(2),
        JSON_COMPACT | JSON_ENSURE_ASCII,
        JSON_INDENT(1) | JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH,
        JSON_COMPACT | JSON_ESCAPE_SLASH,
    };
    int accepted = 0;
    for (int i = 0; i < 20000; i++) {
        json_t *v = rnd_value(0); /* new ref */
        size_t flags = spellings[pick(sizeof spellings / sizeof spellings[0])];
        char *text = json_dumps(v, flags | JSON_ENCODE_ANY);
        assert_non_null(text);
        accepted += agree(text);
        free(text);
        json_decref(v);
    }
    assert_int_equal(accepted, 20000);
}

#define LENIENT (TG_JTAPE_BAD_STRINGS | TG_JTAPE_DUPLICATE_KEYS)

/* Whether s[0..n) holds a NUL or bytes that are not UTF-8 (jansson's
 * checked constructor refuses them). */
static int bad_bytes(const char *s, size_t n)
{
    json_t *t = json_stringn(s, n); /* new ref */
    int refused = t == NULL;
    json_decref(t);
    return memchr(s, 0, n) != NULL || refused;
}

/* Whether a value holds a string or key with a NUL or bytes that are not
 * UTF-8 (what a TG_JT_BAD token decodes to). */
static int holds_bad(const json_t *v)
{
    if (json_is_string(v))
        return bad_bytes(json_string_value(v), json_string_length(v));
    const char *k;
    size_t kl;
    json_t *m; /* borrowed */
    if (json_is_object(v))
        json_object_keylen_foreach((json_t *)v, k, kl, m)
        {
            if (bad_bytes(k, kl) || holds_bad(m))
                return 1;
        }
    size_t i;
    json_array_foreach((json_t *)v, i, m) if (holds_bad(m)) return 1;
    return 0;
}

/* The lenient reading of text against jansson's reading of a document
 * (JSON_DECODE_ANY, duplicates allowed): it accepts whatever jansson does,
 * to the same value and with no bad token, and what it accepts beyond has
 * a bad token that decodes to bytes no string jansson reads holds. */
static void lenient_agrees(const char *text, size_t len)
{
    json_error_t jerr;
    tg__jtape t;
    json_t *ref = json_loadb(text, len, JSON_DECODE_ANY, &jerr); /* new ref */
    int rc = tg__jtape_parse(text, len, LENIENT, &t, NULL);
    if (ref != NULL && rc != 0)
        fail_msg("lenient tape refuses '%.*s', which jansson reads", (int)len,
                 text);
    if (rc != 0) {
        json_decref(ref);
        return;
    }
    size_t nbad = 0;
    for (size_t i = 0; i < t.n; i++)
        nbad += (t.tok[i].flags & TG_JT_BAD) != 0;
    json_t *built = tg__jtape_to_json(&t, 0); /* new ref */
    assert_non_null(built);
    if (ref != NULL && (nbad != 0 || !json_equal(built, ref)))
        fail_msg("lenient tape reads '%.*s' differently", (int)len, text);
    if (ref == NULL && (nbad == 0 || !holds_bad(built)))
        fail_msg("lenient tape takes '%.*s' without a bad string", (int)len,
                 text);
    json_decref(built);
    json_decref(ref);
    tg__jtape_free(&t);
}

/* TG_JTAPE_BAD_STRINGS and TG_JTAPE_DUPLICATE_KEYS: strings holding
 * "\u0000", unpaired surrogates (high, low, reversed, before another
 * escape) or bytes that are not UTF-8 are taken, flagged and decoded to
 * their bytes; duplicate keys as jansson reads them without
 * JSON_REJECT_DUPLICATES; every other refusal stands. */
static void test_bad_strings(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *decoded; /* of the one string or key */
        size_t n;
    } bad[] = {
        {"\"a\\u0000b\"", "a\0b", 3},
        {"\"\\ud800\"", "\xED\xA0\x80", 3},
        {"\"\\udc00\"", "\xED\xB0\x80", 3},
        {"\"\\udc00\\ud800\"", "\xED\xB0\x80\xED\xA0\x80", 6},
        {"\"\\ud800\\u0041\"",
         "\xED\xA0\x80"
         "A",
         4},
        {"\"\\ud800\\ud83d\\ude00\"", "\xED\xA0\x80\xF0\x9F\x98\x80", 7},
        {"\"\\ud800\\n\"", "\xED\xA0\x80\n", 4},
        {"\"caf\xc3\"", "caf\xc3", 4},
        {"\"\xff\xfe\"", "\xff\xfe", 2},
        {"{\"k\\u0000\":1}", "k\0", 2},
        {"{\"\\udbff\":1}", "\xED\xAF\xBF", 3},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *text = bad[i].text;
        tg__jtape t;
        assert_int_equal(tg__jtape_parse(text, strlen(text), 0, &t, NULL),
                         TG_EPARSE);
        assert_int_equal(tg__jtape_parse(text, strlen(text), LENIENT, &t, NULL),
                         0);
        const tg__jtok *k = &t.tok[t.tok[0].kind == TG_JT_OBJECT ? 1 : 0];
        assert_true(k->flags & TG_JT_BAD);
        tg__buf b;
        tg__buf_init(&b, 0);
        assert_int_equal(tg__jtape_decode(&t, k, &b), 0);
        if (b.len != bad[i].n || memcmp(b.data, bad[i].decoded, b.len) != 0)
            fail_msg("'%s' decodes to %zu bytes, not the %zu expected", text,
                     b.len, bad[i].n);
        json_t *v = tg__jtape_to_json(&t, 0); /* new ref */
        assert_non_null(v);
        assert_true(holds_bad(v));
        json_decref(v);
        tg__buf_cleanup(&b);
        tg__jtape_free(&t);
        lenient_agrees(text, strlen(text));
    }
    /* Good strings beside bad ones stay good. */
    tg__jtape t;
    const char *mixed = "[\"\\ud83d\\ude00\",\"\\u0000\",\"\\u0001\"]";
    assert_int_equal(tg__jtape_parse(mixed, strlen(mixed), LENIENT, &t, NULL),
                     0);
    assert_int_equal(t.tok[1].flags & TG_JT_BAD, 0);
    assert_true(t.tok[2].flags & TG_JT_BAD);
    assert_int_equal(t.tok[3].flags & TG_JT_BAD, 0);
    tg__jtape_free(&t);
    /* Duplicate keys: jansson's value without JSON_REJECT_DUPLICATES. */
    static const char *dups[] = {
        "{\"a\":1,\"b\":2,\"a\":3}",
        "{\"a\":{\"x\":1},\"a\":[1],\"c\":null,\"a\":\"s\"}",
        "{\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,"
        "\"k7\":7,\"k8\":8,\"k9\":9,\"ka\":10,\"kb\":11,\"kc\":12,\"kd\":13,"
        "\"ke\":14,\"kf\":15,\"kg\":16,\"k0\":17,\"\\u006b1\":18}",
    };
    for (size_t i = 0; i < sizeof dups / sizeof dups[0]; i++) {
        assert_int_equal(tg__jtape_parse(dups[i], strlen(dups[i]), 0, &t, NULL),
                         TG_EPARSE);
        lenient_agrees(dups[i], strlen(dups[i]));
    }
    /* Everything else is refused as before. */
    static const char *still_bad[] = {
        "[\"\\ud800\" 1]", "\"\\x\"",    "\"a\x01\"", "\"\\u12\"",
        "[\xff]",          "\"\\\xff\"", "\"\\ud800", "{\"a\":1,}",
    };
    for (size_t i = 0; i < sizeof still_bad / sizeof still_bad[0]; i++)
        if (tg__jtape_parse(still_bad[i], strlen(still_bad[i]), LENIENT, &t,
                            NULL) != TG_EPARSE)
            fail_msg("lenient tape takes '%s'", still_bad[i]);
}

static void test_random_mutations(void **state)
{
    (void)state;
    static const char bytes[] = {
        '"',  '\\',   '{',        '}',        '[',        ']',
        ':',  ',',    ' ',        '\n',       '0',        '-',
        'e',  '.',    'u',        'a',        't',        'n',
        '\0', '\x01', (char)0x80, (char)0xc3, (char)0xed, (char)0xff};
    int refused = 0;
    for (int i = 0; i < 20000; i++) {
        json_t *v = rnd_value(1); /* new ref */
        char *text = json_dumps(v, (pick(2) ? JSON_COMPACT : JSON_INDENT(1)) |
                                       JSON_ENCODE_ANY |
                                       (pick(2) ? JSON_ENSURE_ASCII : 0));
        json_decref(v);
        assert_non_null(text);
        size_t len = strlen(text);
        char *m = malloc(len + 8);
        assert_non_null(m);
        memcpy(m, text, len);
        unsigned edits = 1 + pick(3);
        for (unsigned k = 0; k < edits && len > 0; k++) {
            size_t at = pick((unsigned)len);
            switch (pick(3)) {
            case 0: /* replace */
                m[at] = bytes[pick(sizeof bytes)];
                break;
            case 1: /* delete */
                memmove(m + at, m + at + 1, len - at - 1);
                len--;
                break;
            default: /* insert */
                memmove(m + at + 1, m + at, len - at);
                m[at] = bytes[pick(sizeof bytes)];
                len++;
                break;
            }
        }
        refused += !agree_n(m, len);
        lenient_agrees(m, len);
        free(m);
        free(text);
    }
    assert_true(refused > 10000);
}

/* ------------------------------------------------------------ strings */

static void test_string_iterator(void **state)
{
    (void)state;
    const char *text = "\"a\\u00e9\\ud83d\\ude00\\n\\/\\\"z\"";
    tg__jtape t;
    assert_int_equal(tg__jtape_parse(text, strlen(text), 0, &t, NULL), 0);
    tg__jstr_iter it;
    tg__jstr_iter_init(&it, &t, &t.tok[0]);
    char out[32];
    size_t n = 0;
    int c;
    while ((c = tg__jstr_iter_next(&it)) >= 0)
        out[n++] = (char)c;
    const char want[] = "a\xc3\xa9\xf0\x9f\x98\x80\n/\"z";
    assert_int_equal(n, sizeof want - 1);
    assert_memory_equal(out, want, n);
    tg__jtape_free(&t);
}

/* The stack-first buffer the checksum and JCS writers use: stays in the
 * caller's storage while it fits, moves to the heap with its contents. */
static void test_buf_storage(void **state)
{
    (void)state;
    char small[8];
    tg__buf b;
    tg__buf_init_with(&b, small, sizeof small, 0);
    assert_int_equal(tg__buf_append(&b, "abc", 3), 0);
    assert_ptr_equal(b.data, small);
    assert_int_equal(tg__buf_append(&b, "defghijk", 8), 0);
    assert_true(b.data != small);
    assert_string_equal(b.data, "abcdefghijk");
    char *taken = tg__buf_take(&b);
    assert_string_equal(taken, "abcdefghijk");
    free(taken);
    tg__buf_init_with(&b, small, sizeof small, 0);
    assert_int_equal(tg__buf_append(&b, "xy", 2), 0);
    taken = tg__buf_take(&b); /* a copy: the storage is the caller's */
    assert_true(taken != small);
    assert_string_equal(taken, "xy");
    free(taken);
    tg__buf_cleanup(&b);
    tg__buf_init_with(&b, small, sizeof small, 0);
    tg__buf_cleanup(&b); /* never frees the storage */
    /* A limit still holds. */
    tg__buf_init_with(&b, small, sizeof small, 4);
    assert_int_equal(tg__buf_append(&b, "123456", 6), TG_ELIMIT);
    assert_true(b.truncated);
    assert_string_equal(b.data, "1234");
    tg__buf_cleanup(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_copy_and_storage),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_nul_and_surrogates),
        cmocka_unit_test(test_allow_nul),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_dump_form),
        cmocka_unit_test(test_fuzz_corpus),
        cmocka_unit_test(test_random_documents),
        cmocka_unit_test(test_bad_strings),
        cmocka_unit_test(test_random_mutations),
        cmocka_unit_test(test_string_iterator),
        cmocka_unit_test(test_buf_storage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
