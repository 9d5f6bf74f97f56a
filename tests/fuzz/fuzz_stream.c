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
 * order, ids, arguments, raw arguments, errors, the turn's warnings), when
 * next_call hands out a call that is not in the turn, or twice, or one
 * that changes after it was handed out (a call must come out only once its
 * arguments cannot change, whatever order the calls are written in), when
 * an error comes without a message, when tg_turn_parse of the same bytes
 * (no cap) gives other calls than a whole reading that takes none as they
 * come, or when a turn with a result per call does not render in its own
 * format. Two more readings check the two rules about what is ignored:
 *
 *   - with Chat's early rule off, the calls are the same but where the
 *     stream wrote on after a call's arguments had closed: a call the
 *     early reading names in a warning ("call ID was complete when ...")
 *     may differ, any other only by white space after its arguments, and
 *     the outcome, the number of calls and the other warnings are the
 *     same;
 *   - when the stream read its end, the same bytes with the input appended
 *     again give the same calls: nothing after the end runs.
 *
 * The corpus holds transcripts whose calls are written at once, their
 * pieces taking turns, written on after they closed, events after the end,
 * and events without the blank lines between them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "format.h"
#include "record.h"
#include "stream.h"
#include "turn.h"

static const char *const formats[] = {"auto", "openai-chat", "openai-responses",
                                      "anthropic", "gemini"};

/* One call as a line: everything but its timestamps and index. */
static void describe_call(const tg_call *c, tg__buf *b)
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

/* The calls, then the warnings. */
static void describe(const tg_turn *t, tg__buf *b)
{
    tg__buf_printf(b, "%s %zu\n", t->format ? t->format : "-", t->n);
    for (size_t i = 0; i < t->n; i++) {
        if (tg_call_index(t->calls[i]) != i)
            abort();
        describe_call(t->calls[i], b);
    }
    if (tg_turn_warning_count(t) != t->nwarnings ||
        tg_turn_warning(t, t->nwarnings) != NULL)
        abort();
    for (size_t i = 0; i < t->nwarnings; i++)
        tg__buf_printf(b, "warning: %s\n", tg_turn_warning(t, i));
}

/* Whether two calls describe the same. */
static int same_call(const tg_call *x, const tg_call *y)
{
    tg__buf a, b;
    tg__buf_init(&a, 0);
    tg__buf_init(&b, 0);
    describe_call(x, &a);
    describe_call(y, &b);
    int same = strcmp(tg__buf_cstr(&a), tg__buf_cstr(&b)) == 0;
    tg__buf_cleanup(&a);
    tg__buf_cleanup(&b);
    return same;
}

/* Aborts unless what `say` writes of two turns is the same. */
static void expect_same(void (*say)(const tg_turn *, tg__buf *),
                        const tg_turn *x, const tg_turn *y)
{
    tg__buf a, b;
    tg__buf_init(&a, 0);
    tg__buf_init(&b, 0);
    say(x, &a);
    say(y, &b);
    if (strcmp(tg__buf_cstr(&a), tg__buf_cstr(&b)) != 0)
        abort();
    tg__buf_cleanup(&a);
    tg__buf_cleanup(&b);
}

#define MAX_HANDED 64 /* calls handed out that are checked */

enum {
    SLOW = 1,     /* the fast paths off */
    TAKE = 2,     /* take the calls next_call hands out */
    NO_EARLY = 4, /* Chat's early rule off */
};

/* Reads the stream (flags above); returns its description (caller frees)
 * and the turn; *ended says whether the stream read its end. */
static char *read_stream(const uint8_t *text, size_t len, const char *format,
                         const size_t *sizes, size_t nsizes, size_t max,
                         int flags, tg_turn **turn_out, int *ended)
{
    int take = flags & TAKE;
    tg_stream *s = NULL;
    tg_error err;
    tg__buf b;
    const tg_call *handed[MAX_HANDED];
    char *then[MAX_HANDED]; /* each as it was when handed out */
    size_t nhanded = 0, seen = 0;
    tg__buf_init(&b, 0);
    *turn_out = NULL;
    if (tg_stream_new(format, &s, &err) != 0)
        abort();
    if (tg_stream_set_max_event_bytes(s, max, NULL) != 0)
        abort();
    if (flags & SLOW)
        tg__stream_no_fast_paths(s);
    if (flags & NO_EARLY)
        tg__stream_no_early(s);
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
                tg__buf d;
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
            tg__buf d;
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
    if (ended != NULL)
        *ended = tg_stream_ended(s);
    tg_stream_free(s);
    *turn_out = turn;
    return tg__buf_take(&b);
}

/* Whether b is a, or a followed by JSON white space (NULL only as NULL). */
static int same_or_more_space(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    size_t n = strlen(a);
    return strncmp(a, b, n) == 0 && strspn(b + n, " \t\n\r") == strlen(b + n);
}

static int same_str(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Whether two calls agree but for white space after the arguments (their
 * JSON text and their raw text): what a call handed out before it came
 * loses. */
static int same_but_trailing_space(const tg_call *a, const tg_call *b)
{
    char *ma =
        tg__call_meta(a) ? json_dumps(tg__call_meta(a), JSON_COMPACT) : NULL;
    char *mb =
        tg__call_meta(b) ? json_dumps(tg__call_meta(b), JSON_COMPACT) : NULL;
    int same = same_str(a->id, b->id) && same_str(a->tool, b->tool) &&
               same_str(a->format, b->format) &&
               same_or_more_space(tg_call_args_json(a), tg_call_args_json(b)) &&
               same_or_more_space(tg_call_args_raw(a), tg_call_args_raw(b)) &&
               same_str(a->pre_error_code, b->pre_error_code) &&
               same_str(a->pre_error_message, b->pre_error_message) &&
               same_str(ma, mb);
    free(ma);
    free(mb);
    return same;
}

/* Whether the early reading's warnings name call id as one that pieces
 * came for after it was complete. */
static int warned_late(const tg_turn *t, const char *raw_id)
{
    char id[TG__SHOWN_ID_SIZE]; /* as the warning shows it */
    tg__text_show(raw_id, id, sizeof id);
    for (size_t i = 0; i < t->nwarnings; i++) {
        const char *w = t->warnings[i];
        size_t n = strlen(id);
        if (strncmp(w, "call ", 5) == 0 && strncmp(w + 5, id, n) == 0 &&
            strncmp(w + 5 + n, " was complete", 13) == 0)
            return 1;
    }
    return 0;
}

/* The warnings that are not about one call (events after the end). */
static void other_warnings(const tg_turn *t, tg__buf *b)
{
    for (size_t i = 0; i < t->nwarnings; i++)
        if (strncmp(t->warnings[i], "call ", 5) != 0)
            tg__buf_printf(b, "%s\n", t->warnings[i]);
}

/* Chat's early rule: the readings with it (early) and without it (late)
 * agree but where the early one says it ignored pieces for a call. */
static void check_early_rule(const tg_turn *early, const char *early_desc,
                             const tg_turn *late, const char *late_desc)
{
    if (early == NULL || late == NULL) {
        if (early != late || strcmp(early_desc, late_desc) != 0)
            abort();
        return;
    }
    if (early->n != late->n || strcmp(early->format, late->format) != 0)
        abort();
    for (size_t i = 0; i < early->n; i++) {
        const tg_call *x = early->calls[i], *y = late->calls[i];
        /* Ids agree whatever happened (a late piece never starts a call). */
        if (strcmp(x->id, y->id) != 0)
            abort();
        if (!same_call(x, y) && !same_but_trailing_space(x, y) &&
            !warned_late(early, x->id))
            abort();
    }
    expect_same(other_warnings, early, late);
}

/* Nothing after the end runs: the stream with its own bytes appended
 * after its end gives the same calls. */
static void check_end_is_end(const uint8_t *text, size_t len,
                             const char *format, size_t max,
                             const tg_turn *turn)
{
    uint8_t *twice = malloc(len * 2 + 2);
    if (twice == NULL)
        return;
    memcpy(twice, text, len);
    /* A blank line first, so what follows starts an event of its own. */
    memcpy(twice + len, "\n\n", 2);
    memcpy(twice + len + 2, text, len);
    tg_turn *again = NULL;
    free(read_stream(twice, len * 2 + 2, format, NULL, 0, max, TAKE, &again,
                     NULL));
    free(twice);
    if (again == NULL || again->n != turn->n)
        abort();
    for (size_t i = 0; i < turn->n; i++)
        if (!same_call(turn->calls[i], again->calls[i]))
            abort();
    tg_turn_free(again);
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

    tg_turn *whole_turn, *chunked_turn, *slow_turn, *late_turn;
    int ended = 0;
    char *whole =
        read_stream(text, len, format, NULL, 0, max, TAKE, &whole_turn, &ended);
    char *chunked = read_stream(text, len, format, sizes, nsizes, max, TAKE,
                                &chunked_turn, NULL);
    char *slow = read_stream(text, len, format, NULL, 0, max, SLOW | TAKE,
                             &slow_turn, NULL);
    if (strcmp(whole, chunked) != 0 || strcmp(whole, slow) != 0)
        abort();
    if (ended && whole_turn != NULL)
        check_end_is_end(text, len, format, max, whole_turn);
    /* Neither reading takes the calls, so that of calls sharing an id the
     * first written runs in both. */
    tg_turn *early_turn = NULL;
    char *early =
        read_stream(text, len, format, NULL, 0, max, 0, &early_turn, NULL);
    char *late = read_stream(text, len, format, NULL, 0, max, NO_EARLY,
                             &late_turn, NULL);
    check_early_rule(early_turn, early, late_turn, late);
    free(late);
    tg_turn_free(late_turn);
    /* Without a cap, tg_turn_parse routes SSE text through the stream and
     * takes no call early: of calls sharing an id, the first written runs
     * (taken as they come, the first complete one does). */
    if (!capped && early_turn != NULL &&
        tg__stream_looks_like_sse((const char *)text, len)) {
        tg_turn *parsed = NULL;
        tg_error err;
        if (tg_turn_parse((const char *)text, len, format, "fuzz", &parsed,
                          &err) != 0)
            abort();
        tg__turn_mark_duplicates(early_turn);
        expect_same(describe, early_turn, parsed);
        tg_turn_free(parsed);
    }
    free(early);
    tg_turn_free(early_turn);
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
