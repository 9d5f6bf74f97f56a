/* SPDX-License-Identifier: MIT */
/*
 * fuzz_stream.c - libFuzzer target for streamed turns (stream.c over
 * sse.c, and the SSE route of tg_turn_parse). Byte 0 picks the format
 * (low 3 bits: auto, openai-chat, openai-responses, anthropic, gemini), the
 * number of chunk sizes that follow (bits 3-5) and a small cap (bit 6, one
 * more byte); each size byte b is a chunk of b + 1 bytes. The rest is the
 * stream, read whole, in those chunks, and whole with the fast paths off
 * (every event read as a document), each taking every call next_call
 * hands out as it comes. Besides crashes, leaks and undefined behaviour,
 * it aborts when the three readings differ (outcome, calls and their
 * order, ids, arguments, raw arguments, errors), when next_call hands out
 * a call that is not in the turn, or twice, or one that changes after it
 * was handed out (a call must come out only once its arguments cannot
 * change, whatever order the calls are written in), when an error comes
 * without a message, when tg_turn_parse of the same bytes (no cap) gives
 * other calls than a whole reading that takes none as they come, or when
 * a turn with a result per call does not render in its own format. The
 * corpus holds transcripts whose calls are written at once, their pieces
 * taking turns.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "record.h"
#include "stream.h"
#include "turn.h"

static const char *const formats[] = {"auto", "openai-chat", "openai-responses",
                                      "anthropic", "gemini"};

/* One call as a line: everything but its timestamps and index. */
static void describe_call(const tg_call *c, tg_buf *b)
{
    const char *aj = tg_call_args_json(c), *raw = tg_call_args_raw(c);
    char *meta =
        tg__call_meta(c) ? json_dumps(tg__call_meta(c), JSON_COMPACT) : NULL;
    tg__buf_printf(b, "%s|%s|%s|%s|%s|%s|%s|%s\n", c->id, c->tool, c->format,
                   aj ? aj : "(null)", raw ? raw : "(null)",
                   c->pre_error_code ? c->pre_error_code : "",
                   c->pre_error_message ? c->pre_error_message : "",
                   meta ? meta : "");
    free(meta);
}

static void describe(const tg_turn *t, tg_buf *b)
{
    tg__buf_printf(b, "%s %zu\n", t->format ? t->format : "-", t->n);
    for (size_t i = 0; i < t->n; i++) {
        if (tg_call_index(t->calls[i]) != i)
            abort();
        describe_call(t->calls[i], b);
    }
}

#define MAX_HANDED 64 /* calls handed out that are checked */

/* Reads the stream, taking the calls next_call hands out unless `take` is
 * 0; returns its description (caller frees) and the turn. */
static char *read_stream(const uint8_t *text, size_t len, const char *format,
                         const size_t *sizes, size_t nsizes, size_t max,
                         int slow, int take, tg_turn **turn_out)
{
    tg_stream *s = NULL;
    tg_error err;
    tg_buf b;
    const tg_call *handed[MAX_HANDED];
    char *then[MAX_HANDED]; /* each as it was when handed out */
    size_t nhanded = 0, seen = 0;
    tg__buf_init(&b, 0);
    *turn_out = NULL;
    if (tg_stream_new(format, &s, &err) != 0)
        abort();
    if (tg_stream_set_max_event_bytes(s, max) != 0)
        abort();
    if (slow)
        tg__stream_no_fast_paths(s);
    int rc = 0;
    size_t off = 0, k = 0;
    while (rc == 0 && off < len) {
        size_t n = nsizes ? sizes[k++ % nsizes] : len - off;
        if (n > len - off)
            n = len - off;
        rc = tg_stream_feed(s, (const char *)text + off, n, &err);
        off += n;
        const tg_call *c;
        while (take && (c = tg_stream_next_call(s)) != NULL) {
            if (nhanded < MAX_HANDED) {
                tg_buf d;
                tg__buf_init(&d, 0);
                describe_call(c, &d);
                then[nhanded] = tg__buf_take(&d);
                handed[nhanded++] = c;
            }
            seen++;
        }
    }
    tg_turn *turn = NULL;
    if (rc == 0)
        rc = tg_stream_finish(s, &turn, &err);
    if (rc != 0) {
        if (turn != NULL || err.code != rc || err.message[0] == '\0' ||
            memchr(err.message, '\0', sizeof err.message) == NULL)
            abort();
        tg__buf_printf(&b, "error %d %s\n", rc, err.message);
    } else {
        if (seen > turn->n)
            abort();
        for (size_t i = 0; i < nhanded; i++) {
            size_t at = tg_call_index(handed[i]);
            if (at >= turn->n || turn->calls[at] != handed[i])
                abort();
            for (size_t j = 0; j < i; j++)
                if (handed[j] == handed[i])
                    abort();
            tg_buf d;
            tg__buf_init(&d, 0);
            describe_call(handed[i], &d);
            if (then[i] != NULL && strcmp(tg__buf_cstr(&d), then[i]) != 0)
                abort();
            tg__buf_cleanup(&d);
        }
        describe(turn, &b);
    }
    for (size_t i = 0; i < nhanded; i++)
        free(then[i]);
    tg_stream_free(s);
    *turn_out = turn;
    return tg__buf_take(&b);
}

static void render_back(tg_turn *turn)
{
    for (size_t i = 0; i < turn->n; i++) {
        const tg_call *call = turn->calls[i];
        tg_result *r = call->pre_error_code
                           ? tg__result_error(call, TG_EXECUTION_NOT_STARTED,
                                              call->pre_error_code, NULL, "%s",
                                              call->pre_error_message)
                           : tg__result_success(call, json_string("done"));
        if (r == NULL || tg__turn_set_result(turn, i, r) != 0)
            return;
    }
    if (tg__format_find(turn->format) == NULL)
        return; /* that format is not in this build's table */
    char *out = NULL;
    tg_error err;
    if (tg_turn_render(turn, NULL, &out, NULL, &err) != 0)
        abort();
    tg_free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *format = formats[(data[0] & 7) % 5];
    size_t nsizes = (data[0] >> 3) & 7, sizes[7], max = 0, at = 1;
    int capped = (data[0] & 64) != 0;
    if (size < 1 + nsizes + (size_t)capped)
        return 0;
    for (size_t i = 0; i < nsizes; i++)
        sizes[i] = (size_t)data[at++] + 1;
    if (capped)
        max = (size_t)data[at++] + 1;
    const uint8_t *text = data + at;
    size_t len = size - at;

    tg_turn *whole_turn, *chunked_turn, *slow_turn;
    char *whole =
        read_stream(text, len, format, NULL, 0, max, 0, 1, &whole_turn);
    char *chunked =
        read_stream(text, len, format, sizes, nsizes, max, 0, 1, &chunked_turn);
    char *slow = read_stream(text, len, format, NULL, 0, max, 1, 1, &slow_turn);
    if (strcmp(whole, chunked) != 0 || strcmp(whole, slow) != 0)
        abort();
    /* Without a cap, tg_turn_parse routes SSE text through the stream and
     * takes no call early: of calls sharing an id, the first written runs
     * (taken as they come, the first complete one does). */
    if (!capped && whole_turn != NULL &&
        tg__stream_looks_like_sse((const char *)text, len)) {
        tg_turn_free(whole_turn);
        free(read_stream(text, len, format, NULL, 0, max, 0, 0, &whole_turn));
        tg_turn *parsed = NULL;
        tg_error err;
        if (tg_turn_parse((const char *)text, len, format, "fuzz", &parsed,
                          &err) != 0)
            abort();
        tg__turn_mark_duplicates(whole_turn);
        tg_buf a, b;
        tg__buf_init(&a, 0);
        tg__buf_init(&b, 0);
        describe(whole_turn, &a);
        describe(parsed, &b);
        if (strcmp(tg__buf_cstr(&a), tg__buf_cstr(&b)) != 0)
            abort();
        tg__buf_cleanup(&a);
        tg__buf_cleanup(&b);
        tg_turn_free(parsed);
    }
    if (whole_turn != NULL)
        render_back(whole_turn);
    free(whole);
    free(chunked);
    free(slow);
    tg_turn_free(whole_turn);
    tg_turn_free(chunked_turn);
    tg_turn_free(slow_turn);
    return 0;
}
