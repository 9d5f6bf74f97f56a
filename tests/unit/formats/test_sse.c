/* SPDX-License-Identifier: MIT */
/*
 * test_sse.c - the Server-Sent Events reader (sse.c) against the WHATWG
 * event stream rules: fields, comments, the three line ends, id that
 * persists, events without data, the byte order mark, the last event of a
 * transcript without its blank line, the data cap, where each event's data
 * lines were, the discarding reader after the end of a stream, the retry
 * field's reconnection time; and that the
 * events are the same whatever the chunking (every two-chunk split, 1-byte
 * and 64-byte chunks).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "sse.h"

/* The events seen, as text: "type|id|data|at_end\n" per event, bytes
 * escaped so CR, LF and NUL show; with `positions`, then where the data
 * lines were and whether data was clipped: "|first-last/count|clipped". */
typedef struct seen {
    tg__buf log;
    int fail_at; /* make the fail_at-th event's callback fail; 0: never */
} seen;

/* The reader being run, and what the tests below ask of the callback: log
 * positions; after an event whose data is "[DONE]", discard keeping
 * discard_keep bytes (0: never). */
static struct {
    tg__sse *reader;
    int positions;
    size_t discard_keep;
} opt;

static void put_escaped(tg__buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n')
            tg__buf_puts(b, "\\n");
        else if (c == '\r')
            tg__buf_puts(b, "\\r");
        else if (c < 0x20 || c >= 0x7f || c == '|' || c == '\\')
            tg__buf_printf(b, "\\x%02x", c);
        else
            tg__buf_append(b, &s[i], 1);
    }
}

static int on_event(void *ud, const tg__sse_event *ev, tg_error *err)
{
    seen *s = ud;
    assert_int_equal(strlen(ev->type), ev->type_len);
    assert_int_equal(ev->data[ev->data_len], '\0');
    put_escaped(&s->log, ev->type, ev->type_len);
    tg__buf_puts(&s->log, "|");
    put_escaped(&s->log, ev->id, ev->id_len);
    tg__buf_puts(&s->log, "|");
    put_escaped(&s->log, ev->data, ev->data_len);
    tg__buf_printf(&s->log, "|%d", ev->at_end);
    if (opt.positions)
        tg__buf_printf(&s->log, "|%llu-%llu/%llu|%d",
                       (unsigned long long)ev->data_first_line,
                       (unsigned long long)ev->data_last_line,
                       (unsigned long long)ev->data_lines, ev->clipped);
    tg__buf_puts(&s->log, "\n");
    if (opt.discard_keep && ev->data_len == 6 &&
        memcmp(ev->data, "[DONE]", 6) == 0)
        tg__sse_discard(opt.reader, opt.discard_keep);
    if (s->fail_at != 0 && (int)ev->number == s->fail_at) {
        err->code = TG_EPARSE;
        snprintf(err->message, sizeof err->message, "refused event %d",
                 s->fail_at);
        return TG_EPARSE;
    }
    return 0;
}

/* Feeds text in the given chunk sizes (sizes cycle; 0 entries: whole),
 * finishes, and returns the log (caller frees) and the return code. */
static char *run_chunks(const char *text, size_t len, const size_t *sizes,
                        size_t nsizes, size_t max, int *rc_out, tg_error *err)
{
    tg__sse r;
    seen s = {{0}, 0};
    tg__buf_init(&s.log, 0);
    tg__sse_init(&r, max);
    opt.reader = &r;
    int rc = 0;
    size_t off = 0, k = 0;
    while (rc == 0 && off < len) {
        size_t n = nsizes ? sizes[k++ % nsizes] : len;
        if (n > len - off)
            n = len - off;
        rc = tg__sse_feed(&r, text + off, n, on_event, &s, err);
        off += n;
    }
    if (rc == 0)
        rc = tg__sse_finish(&r, on_event, &s, err);
    tg__sse_cleanup(&r);
    tg__buf_printf(&s.log, "rc=%d\n", rc);
    *rc_out = rc;
    return tg__buf_take(&s.log);
}

static char *run_whole(const char *text, int *rc)
{
    tg_error err;
    return run_chunks(text, strlen(text), NULL, 0, 0, rc, &err);
}

static void expect_events(const char *text, const char *expected)
{
    int rc;
    char *got = run_whole(text, &rc);
    assert_string_equal(got, expected);
    free(got);
}

/* Every chunking gives the events of the whole feed. */
static void check_chunkings(const char *text, size_t len, size_t max)
{
    int rc0, rc;
    tg_error err;
    char *whole = run_chunks(text, len, NULL, 0, max, &rc0, &err);
    for (size_t cut = 0; cut <= len; cut++) {
        size_t sizes[2] = {cut, len};
        char *got = run_chunks(text, len, cut ? sizes : sizes + 1, 1 + !!cut,
                               max, &rc, &err);
        if (strcmp(got, whole) != 0)
            fail_msg("split at %zu differs:\n%s\nvs whole:\n%s", cut, got,
                     whole);
        free(got);
    }
    static const size_t steps[][3] = {
        {1, 1, 1}, {64, 64, 64}, {2, 3, 1}, {7, 1, 13}};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        char *got = run_chunks(text, len, steps[i], 3, max, &rc, &err);
        if (strcmp(got, whole) != 0)
            fail_msg("chunks %zu,%zu,%zu differ:\n%s\nvs whole:\n%s",
                     steps[i][0], steps[i][1], steps[i][2], got, whole);
        free(got);
    }
    free(whole);
}

static void test_fields(void **state)
{
    (void)state;
    expect_events("data: hello\n\n", "message||hello|0\nrc=0\n");
    /* Multi-line data is joined with LF; the event type and the space. */
    expect_events("event: add\ndata: a\ndata:b\ndata:  c\n\n",
                  "add||a\\nb\\n c|0\nrc=0\n");
    /* A field without a colon has an empty value; data then adds a line. */
    expect_events("data\ndata\n\n", "message||\\n|0\nrc=0\n");
    expect_events("data\n\n", "message|||0\nrc=0\n");
    /* Comments, retry and unknown fields change nothing. */
    expect_events(": comment\nretry: 1000\nfoo: bar\ndata: x\n: more\n\n",
                  "message||x|0\nrc=0\n");
    /* An event without data is not dispatched, and its type is forgotten. */
    expect_events("event: lonely\n\ndata: y\n\n", "message||y|0\nrc=0\n");
    /* A colon in the value stays. */
    expect_events("data: {\"a\":\"b:c\"}\n\n", "message||{\"a\":\"b:c\"}|0\n"
                                               "rc=0\n");
    /* Field names are case-sensitive. */
    expect_events("Data: no\nDATA: no\n\n", "rc=0\n");
}

static void test_ids(void **state)
{
    (void)state;
    /* The last event id persists across events until set again; an empty
     * id resets it; an id holding NUL is ignored. */
    static const char text[] = "id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n"
                               "id: 7\n\nid: x\0y\ndata: d\n\n";
    int rc;
    tg_error err;
    char *got = run_chunks(text, sizeof text - 1, NULL, 0, 0, &rc, &err);
    assert_string_equal(got, "message|1|a|0\nmessage|1|b|0\nmessage||c|0\n"
                             "message|7|d|0\nrc=0\n");
    free(got);
    check_chunkings(text, sizeof text - 1, 0);
}

/* The reconnection time: the last retry field whose value is all ASCII
 * digits, whichever event it came with; other values are ignored; a huge
 * one saturates instead of wrapping. */
static void test_retry(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t want;
    } cases[] = {
        {"data: a\n\n", -1},
        {"retry: 1000\ndata: a\n\n", 1000},
        {"retry: 250\n\nretry: x1\nretry:\nretry: -5\nretry: 1 \n", 250},
        {"id: 4-0\nretry: 0\ndata: \n\n", 0},
        {"retry: 99999999999999999999999\n", 4294967295},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tg__sse r;
        seen s = {{0}, 0};
        tg_error err;
        tg__buf_init(&s.log, 0);
        tg__sse_init(&r, 0);
        opt.reader = &r;
        const char *t = cases[i].text;
        /* Byte by byte: a value split across chunks counts the same. */
        for (size_t k = 0; t[k] != '\0'; k++)
            assert_int_equal(tg__sse_feed(&r, t + k, 1, on_event, &s, &err), 0);
        assert_int_equal(r.retry_ms, cases[i].want);
        tg__sse_cleanup(&r);
        tg__buf_cleanup(&s.log);
    }
}

static void test_line_ends(void **state)
{
    (void)state;
    expect_events("data: a\r\n\r\ndata: b\r\rdata: c\n\n",
                  "message||a|0\nmessage||b|0\nmessage||c|0\nrc=0\n");
    /* CR LF is one line end; LF CR is two. */
    expect_events("data: a\n\rdata: b\r\n\n",
                  "message||a|0\nmessage||b|0\nrc=0\n");
    /* CR CR LF: an empty line in between. */
    expect_events("data: a\r\r\ndata: b\n\n",
                  "message||a|0\nmessage||b|0\nrc=0\n");
    static const char mixed[] = "event: x\r\ndata: 1\rdata: 2\n\r\n"
                                ": c\r\rdata: 3\r\n\r\n";
    check_chunkings(mixed, sizeof mixed - 1, 0);
}

static void test_bom(void **state)
{
    (void)state;
    expect_events("\xEF\xBB\xBF"
                  "data: a\n\n",
                  "message||a|0\nrc=0\n");
    /* Only one, at the very start. */
    expect_events("\xEF\xBB\xBF\xEF\xBB\xBF"
                  "data: a\n\n",
                  "rc=0\n");
    expect_events("data: \xEF\xBB\xBF\n\n",
                  "message||\\xef\\xbb\\xbf|0\nrc=0\n");
    /* Bytes that start like a BOM and are not one are read as they are. */
    expect_events("\xEF\xBB"
                  "data: a\n\n"
                  "data: b\n\n",
                  "message||b|0\nrc=0\n");
    expect_events("\xEF", "rc=0\n");
    static const char bom[] = "\xEF\xBB\xBF"
                              "data: a\r\n\r\n";
    check_chunkings(bom, sizeof bom - 1, 0);
    static const char half[] = "\xEF\xBB\n"
                               "data: a\n\n";
    check_chunkings(half, sizeof half - 1, 0);
}

static void test_end_of_input(void **state)
{
    (void)state;
    /* A transcript that stops after the last line, or inside it, still
     * gives its last event, marked at_end. */
    expect_events("data: a\n\ndata: b\n", "message||a|0\nmessage||b|1\nrc=0\n");
    expect_events("data: a\n\ndata: b", "message||a|0\nmessage||b|1\nrc=0\n");
    expect_events("data: a\n\ndata: b\r", "message||a|0\nmessage||b|1\nrc=0\n");
    expect_events("event: t\ndata: b\ndata: c", "t||b\\nc|1\nrc=0\n");
    expect_events("", "rc=0\n");
    expect_events(": only a comment", "rc=0\n");
    expect_events("event: t", "rc=0\n");
}

static void test_limit(void **state)
{
    (void)state;
    int rc;
    tg_error err;
    /* 10 bytes of data fit a cap of 10, 11 do not: on one line or many. */
    static const char ok[] = "data: 12345\ndata: 678\n\n";
    char *got = run_chunks(ok, sizeof ok - 1, NULL, 0, 10, &rc, &err);
    assert_string_equal(got, "message||12345\\n678|0\nrc=0\n");
    free(got);
    static const char over[] = "data: 12345\ndata: 67890\n\n";
    got = run_chunks(over, sizeof over - 1, NULL, 0, 10, &rc, &err);
    assert_int_equal(rc, TG_ELIMIT);
    assert_int_equal(err.code, TG_ELIMIT);
    assert_non_null(strstr(err.message, "line 2"));
    assert_non_null(strstr(err.message, "limit of 10 bytes"));
    free(got);
    check_chunkings(over, sizeof over - 1, 10);
    /* A line too long to hold fails the same whole or in pieces, and
     * before it is all in memory. */
    char big[200];
    memset(big, 'x', sizeof big);
    memcpy(big, "data: ", 6);
    big[sizeof big - 1] = '\n';
    got = run_chunks(big, sizeof big, NULL, 0, 100, &rc, &err);
    assert_int_equal(rc, TG_ELIMIT);
    free(got);
    big[0] = ':'; /* a comment line is a line too */
    check_chunkings(big, sizeof big, 100);
}

static void test_sticky_errors(void **state)
{
    (void)state;
    tg__sse r;
    tg_error err;
    seen s = {{0}, 2};
    tg__buf_init(&s.log, 0);
    tg__sse_init(&r, 0);
    static const char text[] = "data: 1\n\ndata: 2\n\ndata: 3\n\n";
    int rc = tg__sse_feed(&r, text, sizeof text - 1, on_event, &s, &err);
    assert_int_equal(rc, TG_EPARSE);
    assert_string_equal(err.message, "refused event 2");
    /* The third event is never read; later calls repeat the error. */
    memset(&err, 0, sizeof err);
    assert_int_equal(tg__sse_feed(&r, "data: 4\n\n", 9, on_event, &s, &err),
                     TG_EPARSE);
    assert_string_equal(err.message, "refused event 2");
    assert_int_equal(tg__sse_finish(&r, on_event, &s, NULL), TG_EPARSE);
    assert_string_equal(tg__buf_cstr(&s.log), "message||1|0\nmessage||2|0\n");
    tg__sse_cleanup(&r);
    tg__buf_cleanup(&s.log);

    /* After finish, feeding is a misuse. */
    tg__sse_init(&r, 0);
    tg__buf_init(&s.log, 0);
    s.fail_at = 0;
    assert_int_equal(tg__sse_finish(&r, on_event, &s, &err), 0);
    assert_int_equal(tg__sse_feed(&r, "x", 1, on_event, &s, &err), TG_EINVAL);
    assert_int_equal(tg__sse_finish(&r, on_event, &s, &err), TG_EINVAL);
    tg__sse_cleanup(&r);
    tg__buf_cleanup(&s.log);
}

/* Where an event's data lines were: the first, the last, how many. */
static void test_data_lines(void **state)
{
    (void)state;
    opt.positions = 1;
    expect_events("data: a\ndata: b\n\n: c\nevent: t\ndata: c\nid: 1\n"
                  "data: d\n\ndata: e",
                  "message||a\\nb|0|1-2/2|0\n"
                  "t|1|c\\nd|0|6-8/2|0\n"
                  "message|1|e|1|10-10/1|0\nrc=0\n");
    static const char text[] = "data: {\"a\":1}\r\ndata: {\"b\":2}\r\n"
                               "data: {\"c\"\r\n";
    check_chunkings(text, sizeof text - 1, 0);
    opt.positions = 0;
}

/* After tg__sse_discard the events are counted and clipped, never failing
 * for their length, the same in any chunking. */
static void test_discard(void **state)
{
    (void)state;
    char text[1024];
    int n = snprintf(text, sizeof text,
                     "data: 0123456789\n\ndata: [DONE]\n\n"
                     "data: abc\n\ndata: abcd\n\ndata: ab\ndata: cd\n\n"
                     "data:\ndata:\ndata:\n\nevent: e\ndata: %0300d\n"
                     "data: more\n\n: %0300d\ndata: last",
                     0, 0);
    opt.positions = 1;
    opt.discard_keep = 4;
    int rc;
    tg_error err;
    char *got = run_chunks(text, (size_t)n, NULL, 0, 10, &rc, &err);
    assert_string_equal(got, "message||0123456789|0|1-1/1|0\n"
                             "message||[DONE]|0|3-3/1|0\n"
                             "message||abc|0|5-5/1|0\n"
                             "message||abcd|0|7-7/1|0\n"
                             "message||ab\\nc|0|9-10/2|1\n"
                             "message||\\n\\n|0|12-14/3|0\n"
                             "e||0000|0|17-18/2|1\n"
                             "message||last|1|21-21/1|0\n"
                             "rc=0\n");
    free(got);
    /* Without it, the same input fails at the cap. */
    opt.discard_keep = 0;
    got = run_chunks(text, (size_t)n, NULL, 0, 10, &rc, &err);
    assert_int_equal(rc, TG_ELIMIT);
    free(got);
    opt.discard_keep = 4;
    check_chunkings(text, (size_t)n, 10);
    opt.discard_keep = 0;
    opt.positions = 0;
}

static void test_chunkings(void **state)
{
    (void)state;
    static const char text[] = ": hello\r\n"
                               "event: message_start\r\n"
                               "data: {\"type\":\"message_start\"}\r\n"
                               "\r\n"
                               "id: 42\n"
                               "data: line one\n"
                               "data: line two\r"
                               "data\r"
                               "\r"
                               "event: ignored\n"
                               "\n"
                               "data:x\r\n"
                               "\n"
                               "data: last without blank line";
    check_chunkings(text, sizeof text - 1, 0);
    int rc;
    char *got = run_whole(text, &rc);
    assert_string_equal(got, "message_start||{\"type\":\"message_start\"}|0\n"
                             "message|42|line one\\nline two\\n|0\n"
                             "message|42|x|0\n"
                             "message|42|last without blank line|1\n"
                             "rc=0\n");
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_line_ends),     cmocka_unit_test(test_bom),
        cmocka_unit_test(test_end_of_input),  cmocka_unit_test(test_limit),
        cmocka_unit_test(test_sticky_errors), cmocka_unit_test(test_chunkings),
        cmocka_unit_test(test_data_lines),    cmocka_unit_test(test_discard),
        cmocka_unit_test(test_retry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
