/* SPDX-License-Identifier: MIT */
/*
 * test_stream.c - streamed turns (stream.c) over the transcripts of
 * tests/data/streams/<provider>/<case>.sse (written by generate.py there):
 *
 *   - each gives the calls of <case>.calls, in the order the model wrote
 *     them - also the interleaved cases, whose calls' pieces take turns
 *     and complete in another order, and their cuts, where every call
 *     open when the input ends is reported cut;
 *   - the same calls, in the same order, down to the raw arguments and the
 *     error messages, whatever the chunking: split at every byte boundary
 *     into two chunks, in 1-byte and in 64-byte chunks; and with the fast
 *     paths off (every event read as a document);
 *   - a call tg_stream_next_call hands out is in the turn, once, and
 *     nothing about it changes afterwards;
 *   - tg_turn_parse reads the transcript the same way and names the
 *     provider's format;
 *   - a stream and the whole response it adds up to (<case>.json) give the
 *     same call records and render the same results, for every provider
 *     whose whole-document format is registered;
 *   - each call comes out of tg_stream_next_call at the very event that
 *     says it is done, not before, not after.
 *
 * Then the edges: a stream cut inside arguments, duplicate and missing ids
 * (in and out of order), index reuse, a model writing on after a call's
 * arguments closed, Responses' .done winning over the deltas, Anthropic's
 * empty input, Gemini's deterministic ids, the caps, events of another
 * provider, data that is not JSON, misuse of the API.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "record.h"
#include "stream.h"
#include "tg_test.h"
#include "turn.h"

/* ------------------------------------------------------------ allocations
 *
 * The failing-allocation loop of docs/design.md, as test_alloc_fail.c runs it
 * over whole documents: in plain glibc builds every allocation is counted
 * and can be refused (malloc and friends defined here over glibc's
 * __libc_* entry points); under ASan, which owns malloc, only jansson's
 * (json_set_alloc_funcs), and LeakSanitizer checks the rest at exit. */
#if defined(__SANITIZE_ADDRESS__)
#define TG_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TG_TEST_ASAN 1
#endif
#endif
#if !defined(TG_TEST_ASAN) && defined(__GLIBC__)
#define TG_TEST_INTERPOSE 1
#define COUNTS_ALL 1 /* every allocation is counted, the test's own too */
#else
#define COUNTS_ALL 0
#endif

static struct {
    int armed;    /* count and fail only while the operation runs */
    long fail_at; /* refuse the fail_at-th allocation; 0: never */
    long count;   /* allocation attempts while armed */
    long live;    /* allocations made while armed and not yet freed */
    int refused;  /* an allocation was refused in this run */
} A;

static int refuse(void)
{
    if (!A.armed)
        return 0;
    A.count++;
    if (A.fail_at != 0 && A.count == A.fail_at) {
        A.refused = 1;
        return 1;
    }
    return 0;
}

#ifdef TG_TEST_INTERPOSE
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

void *malloc(size_t n)
{
    if (refuse())
        return NULL;
    void *p = __libc_malloc(n);
    if (p != NULL && A.armed)
        A.live++;
    return p;
}

void *calloc(size_t n, size_t size)
{
    if (refuse())
        return NULL;
    void *p = __libc_calloc(n, size);
    if (p != NULL && A.armed)
        A.live++;
    return p;
}

void *realloc(void *old, size_t n)
{
    if (refuse())
        return NULL;
    void *p = __libc_realloc(old, n);
    if (old == NULL && p != NULL && A.armed)
        A.live++;
    return p;
}

void free(void *p)
{
    if (p != NULL && A.armed)
        A.live--;
    __libc_free(p);
}
#else
static void *json_malloc_counted(size_t n)
{
    if (refuse())
        return NULL;
    void *p = malloc(n);
    if (p != NULL && A.armed)
        A.live++;
    return p;
}

static void json_free_counted(void *p)
{
    if (p != NULL && A.armed)
        A.live--;
    free(p);
}
#endif

static const char *const providers[] = {"openai-chat", "openai-responses",
                                        "anthropic", "gemini"};
#define NPROVIDERS (sizeof providers / sizeof providers[0])

/* ------------------------------------------------------------ files */

/* Sorted case names (<case>.sse) of a provider's directory. */
static char **cases_of(const char *dir, size_t *n)
{
    char **names = tg_test_list_dir(dir, ".sse", n);
    if (names == NULL)
        fail_msg("cannot open %s", dir);
    return names;
}

/* ------------------------------------------------------------ calls as text */

/* Everything a call carries but its timestamps (and its index unless
 * with_index), as one JSON line. */
static void call_line_of(const tg_call *c, tg__buf *b, int with_index)
{
    json_t *o = tg__call_to_json(c); /* new ref */
    assert_non_null(o);
    if (!with_index)
        json_object_del(o, "index");
    json_object_del(o, "created_at");
    json_object_del(o, "updated_at");
    json_object_del(o, "completed_at");
    if (c->pre_error_code != NULL)
        json_object_set_new(
            o, "pre_error",
            json_pack("{s:s, s:s}", "code", c->pre_error_code, "message",
                      c->pre_error_message ? c->pre_error_message : ""));
    const char *raw = tg_call_args_raw(c);
    json_object_set_new(o, "args_raw", raw ? json_string(raw) : json_null());
    const char *aj = tg_call_args_json(c);
    json_object_set_new(o, "args_json", aj ? json_string(aj) : json_null());
    assert_int_equal(tg__json_dump(o, b), 0);
    tg__buf_append(b, "\n", 1);
    json_decref(o);
}

static void call_line(const tg_call *c, tg__buf *b)
{
    call_line_of(c, b, 1);
}

/* call_line_of without the index, as a string the caller frees. */
static char *call_text(const tg_call *c)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    call_line_of(c, &b, 0);
    return tg__buf_take(&b);
}

/* The calls as lines, then the turn's warnings. */
static char *turn_lines(const tg_turn *t)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    tg__buf_puts(&b, "");
    for (size_t i = 0; i < t->n; i++)
        call_line(t->calls[i], &b);
    for (size_t i = 0; i < tg_turn_warning_count(t); i++)
        tg__buf_printf(&b, "warning: %s\n", tg_turn_warning(t, i));
    return tg__buf_take(&b);
}

/* One run of a stream: the turn (or the error) and how many calls
 * next_call handed out while feeding. */
typedef struct run {
    int rc;
    tg_error err;
    tg_turn *turn;
    char *lines;  /* turn_lines of the turn, or the error */
    size_t early; /* calls handed out before finish */
} run;

static void run_free(run *r)
{
    tg_turn_free(r->turn);
    free(r->lines);
}

enum {
    RUN_QUICK = 1,   /* no snapshot of each call handed out */
    RUN_NO_EARLY = 2 /* Chat's early rule off */
};

/* Feeds text in chunks of the given sizes (cycling; nsizes 0: whole). A
 * call handed out is checked unchanged at the end - each written down as it
 * came out unless RUN_QUICK (the runs at every byte boundary, thousands per
 * transcript, check the rest). */
static run run_stream_as(const char *text, size_t len, const size_t *sizes,
                         size_t nsizes, const char *format, size_t max,
                         int flags)
{
    run r;
    memset(&r, 0, sizeof r);
    tg_stream *s = NULL;
    const tg_call *handed[4096];
    char *at_hand_out[4096]; /* each handed call as it was then */
    int quick = flags & RUN_QUICK;
    assert_int_equal(tg_stream_new(format, &s, &r.err), 0);
    if (max)
        assert_int_equal(tg_stream_set_max_event_bytes(s, max, NULL), 0);
    if (flags & RUN_NO_EARLY)
        tg__stream_no_early(s);
    size_t off = 0, k = 0;
    while (r.rc == 0 && off < len) {
        size_t n = nsizes ? sizes[k++ % nsizes] : len;
        if (n > len - off)
            n = len - off;
        r.rc = tg_stream_feed(s, text + off, n, &r.err);
        off += n;
        const tg_call *c;
        while ((c = tg_stream_next_call(s)) != NULL) {
            assert_true(r.early < sizeof handed / sizeof handed[0]);
            at_hand_out[r.early] = quick ? NULL : call_text(c);
            handed[r.early++] = c;
        }
    }
    if (r.rc == 0)
        r.rc = tg_stream_finish(s, &r.turn, &r.err);
    if (r.rc == 0) {
        assert_null(tg_stream_next_call(s));
        /* next_call handed out calls of the turn (the pointers are the
         * turn's own), each once, and none changed after: a call is handed
         * out only once its arguments cannot change. */
        assert_true(r.early <= r.turn->n);
        for (size_t i = 0; i < r.early; i++) {
            size_t at = tg_call_index(handed[i]);
            assert_true(at < r.turn->n);
            assert_ptr_equal(handed[i], r.turn->calls[at]);
            for (size_t j = 0; j < i; j++)
                assert_ptr_not_equal(handed[i], handed[j]);
            if (at_hand_out[i] != NULL) {
                char *now = call_text(handed[i]);
                assert_string_equal(now, at_hand_out[i]);
                free(now);
            }
        }
        for (size_t i = 0; i < r.turn->n; i++)
            assert_int_equal(tg_call_index(r.turn->calls[i]), i);
        r.lines = turn_lines(r.turn);
    } else {
        assert_int_equal(r.err.code, r.rc);
        assert_true(r.err.message[0] != '\0');
        tg__buf b;
        tg__buf_init(&b, 0);
        tg__buf_printf(&b, "error %s: %s\n", tg_err_name(r.rc), r.err.message);
        r.lines = tg__buf_take(&b);
    }
    for (size_t i = 0; i < r.early; i++)
        free(at_hand_out[i]);
    tg_stream_free(s);
    return r;
}

static run run_stream(const char *text, size_t len, const size_t *sizes,
                      size_t nsizes, const char *format, size_t max)
{
    return run_stream_as(text, len, sizes, nsizes, format, max, 0);
}

/* The lines of a whole feed with the fast paths off. */
static char *slow_lines(const char *text, size_t len)
{
    tg_stream *s = NULL;
    tg_turn *t = NULL;
    tg_error err;
    assert_int_equal(tg_stream_new("auto", &s, &err), 0);
    tg__stream_no_fast_paths(s);
    if (tg_stream_feed(s, text, len, &err) != 0 ||
        tg_stream_finish(s, &t, &err) != 0)
        fail_msg("slow path: %s", err.message);
    char *lines = turn_lines(t);
    tg_turn_free(t);
    tg_stream_free(s);
    return lines;
}

static run run_whole(const char *text, const char *format)
{
    return run_stream(text, strlen(text), NULL, 0, format, 0);
}

/* ------------------------------------------------------------ transcripts */

/* The calls against <case>.calls: id (null: a Gemini id made up), tool,
 * args (JSON-equal; null when they did not decode), pre_error code. */
static void check_expected_calls(const char *path, const tg_turn *t)
{
    char *text = tg_test_read_file(path, NULL);
    if (text == NULL)
        fail_msg("cannot read %s", path);
    size_t i = 0;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        json_error_t jerr;
        json_t *e = json_loadb(p, n, 0, &jerr); /* new ref */
        if (e == NULL)
            fail_msg("%s: bad line: %s", path, jerr.text);
        if (i >= t->n)
            fail_msg("%s: call %zu missing", path, i);
        const tg_call *c = t->calls[i];
        const char *id = json_string_value(json_object_get(e, "id"));
        if (id != NULL)
            assert_string_equal(tg_call_id(c), id);
        else
            assert_int_equal(strncmp(tg_call_id(c), "gemini-", 7), 0);
        assert_string_equal(tg_call_tool(c),
                            json_string_value(json_object_get(e, "tool")));
        const json_t *args = json_object_get(e, "args"); /* borrowed */
        if (json_is_null(args))
            assert_null(tg_call_args_json(c));
        else {
            json_t *a = json_loads(tg_call_args_json(c), 0, &jerr); /* new */
            assert_non_null(a);
            if (!json_equal(a, args))
                fail_msg("%s: call %zu args %s", path, i, tg_call_args_json(c));
            json_decref(a);
        }
        const char *pre = json_string_value(json_object_get(e, "pre_error"));
        if (pre != NULL)
            assert_string_equal(c->pre_error_code, pre);
        else if (c->pre_error_code != NULL)
            fail_msg("%s: call %zu has pre-error %s: %s", path, i,
                     c->pre_error_code, c->pre_error_message);
        json_decref(e);
        i++;
        p += n + (nl != NULL);
    }
    if (i != t->n)
        fail_msg("%s: %zu calls, expected %zu", path, t->n, i);
    free(text);
}

/* The same calls whatever the chunking. */
static void check_chunkings(const char *name, const char *text, size_t len,
                            const run *whole)
{
    for (size_t cut = 1; cut < len; cut++) {
        size_t sizes[2] = {cut, len};
        run r = run_stream_as(text, len, sizes, 2, "auto", 0, RUN_QUICK);
        if (strcmp(r.lines, whole->lines) != 0)
            fail_msg("%s split at byte %zu:\n%s\nwhole:\n%s", name, cut,
                     r.lines, whole->lines);
        run_free(&r);
    }
    static const size_t one = 1, sixty_four = 64, odd[] = {3, 1, 17, 5};
    const size_t *steps[] = {&one, &sixty_four, odd};
    const size_t nsteps[] = {1, 1, 4};
    for (size_t i = 0; i < 3; i++) {
        run r = run_stream(text, len, steps[i], nsteps[i], "auto", 0);
        if (strcmp(r.lines, whole->lines) != 0)
            fail_msg("%s in %zu-byte chunks:\n%s\nwhole:\n%s", name,
                     steps[i][0], r.lines, whole->lines);
        /* Fed in pieces, every call that closed before the end came out
         * before finish. */
        if (r.rc == 0 && steps[i] == &one)
            assert_true(r.early >= whole->early);
        run_free(&r);
    }
}

/* Results made up the way the golden tests do, so renderings compare. */
static void give_results(tg_turn *turn)
{
    for (size_t i = 0; i < turn->n; i++) {
        const tg_call *c = turn->calls[i];
        tg_result *r;
        if (c->pre_error_code != NULL)
            r = tg__result_error(c, TG_EXECUTION_NOT_STARTED, c->pre_error_code,
                                 NULL, "%s", c->pre_error_message);
        else if (i % 2 == 0)
            r = tg__result_success(c, json_pack("{s:I}", "ok", (json_int_t)i));
        else
            r = tg__result_error(c, TG_EXECUTION_STARTED, "TOOL_FAILED", NULL,
                                 "tool %s failed", c->tool);
        assert_non_null(r);
        r->completed_at = 0;
        assert_int_equal(tg__turn_set_result(turn, i, r), 0);
    }
}

static char *render(const tg_turn *turn)
{
    char *out = NULL;
    tg_error err;
    if (tg_turn_render(turn, NULL, &out, NULL, &err) != 0)
        fail_msg("render %s: %s", tg_turn_format(turn), err.message);
    return out;
}

/* A stream and the whole response it adds up to give the same records. */
static void check_whole_document(const char *provider, const char *path,
                                 run *streamed)
{
    if (tg__format_find(provider) == NULL) {
        print_message("[ skipped  ] %s: format %s not registered\n", path,
                      provider);
        return;
    }
    size_t len;
    char *doc = tg_test_read_file(path, &len);
    assert_non_null(doc);
    tg_turn *whole = NULL;
    tg_error err;
    if (tg_turn_parse(doc, len, "auto", path, &whole, &err) != 0)
        fail_msg("%s: %s", path, err.message);
    assert_string_equal(tg_turn_format(whole), provider);
    tg_turn *st = streamed->turn;
    assert_int_equal(whole->n, st->n);
    int made_up_ids = 0;
    for (size_t i = 0; i < st->n; i++) {
        tg__buf a, b;
        tg__buf_init(&a, 0);
        tg__buf_init(&b, 0);
        call_line(st->calls[i], &a);
        call_line(whole->calls[i], &b);
        /* Gemini calls without an id get one made from the turn: from the
         * document there, from the events here. The rest must agree. */
        if (strncmp(st->calls[i]->id, "gemini-", 7) == 0) {
            made_up_ids = 1;
            assert_int_equal(strncmp(whole->calls[i]->id, "gemini-", 7), 0);
            json_t *x = json_loads(tg__buf_cstr(&a), 0, NULL); /* new ref */
            json_t *y = json_loads(tg__buf_cstr(&b), 0, NULL); /* new ref */
            json_object_del(x, "id");
            json_object_del(y, "id");
            if (!json_equal(x, y))
                fail_msg("%s call %zu:\nstream %swhole  %s", path, i,
                         tg__buf_cstr(&a), tg__buf_cstr(&b));
            json_decref(x);
            json_decref(y);
        } else if (strcmp(tg__buf_cstr(&a), tg__buf_cstr(&b)) != 0)
            fail_msg("%s call %zu:\nstream %swhole  %s", path, i,
                     tg__buf_cstr(&a), tg__buf_cstr(&b));
        tg__buf_cleanup(&a);
        tg__buf_cleanup(&b);
    }
    /* Rendered back in the provider's format, the answers are the same. */
    if (!made_up_ids) {
        give_results(st);
        give_results(whole);
        char *x = render(st), *y = render(whole);
        assert_string_equal(x, y);
        tg_free(x);
        tg_free(y);
    }
    tg_turn_free(whole);
    free(doc);
}

static void run_provider(const char *provider)
{
    char root[4096], dir[4096 + 64], path[8192];
    tg_test_source_path(root, sizeof root, "tests/data/streams");
    snprintf(dir, sizeof dir, "%s/%s", root, provider);
    size_t n;
    char **cases = cases_of(dir, &n);
    static const char *const required[] = {
        "normal",         "parallel", "truncated_args", "truncated_before_call",
        "pings_comments", "crlf",     "interleaved",    "interleaved_cut"};
    for (size_t r = 0; r < sizeof required / sizeof required[0]; r++) {
        int found = 0;
        for (size_t i = 0; i < n; i++)
            found |= strcmp(cases[i], required[r]) == 0;
        if (!found)
            fail_msg("stream case %s/%s is missing", provider, required[r]);
    }
    for (size_t i = 0; i < n; i++) {
        print_message("[ stream   ] %s/%s\n", provider, cases[i]);
        snprintf(path, sizeof path, "%s/%s.sse", dir, cases[i]);
        size_t len;
        char *text = tg_test_read_file(path, &len);
        assert_non_null(text);

        run whole = run_stream(text, len, NULL, 0, "auto", 0);
        if (whole.rc != 0)
            fail_msg("%s: %s", path, whole.err.message);
        assert_string_equal(tg_turn_format(whole.turn), provider);
        for (size_t k = 0; k < whole.turn->n; k++)
            assert_string_equal(tg_call_format(whole.turn->calls[k]), provider);
        snprintf(path, sizeof path, "%s/%s.calls", dir, cases[i]);
        check_expected_calls(path, whole.turn);

        /* Every event read as a document, the same. */
        char *slow = slow_lines(text, len);
        assert_string_equal(slow, whole.lines);
        free(slow);

        /* Named explicitly, the same. */
        run named = run_stream(text, len, NULL, 0, provider, 0);
        assert_string_equal(named.lines, whole.lines);
        run_free(&named);

        /* A well-formed stream gives the same calls whether Chat calls
         * come out early or only when the stream says so; a transcript
         * read in one piece hands out as early as one read in many. */
        run late = run_stream_as(text, len, NULL, 0, "auto", 0, RUN_NO_EARLY);
        assert_string_equal(late.lines, whole.lines);
        run_free(&late);

        snprintf(path, sizeof path, "%s/%s.sse", dir, cases[i]);
        check_chunkings(path, text, len, &whole);

        /* tg_turn_parse tells a stream from a document and reads it the
         * same way. */
        tg_turn *parsed = NULL;
        tg_error err;
        for (int named_fmt = 0; named_fmt < 2; named_fmt++) {
            if (tg_turn_parse(text, len, named_fmt ? provider : "auto", path,
                              &parsed, &err) != 0)
                fail_msg("%s: tg_turn_parse: %s", path, err.message);
            assert_string_equal(tg_turn_format(parsed), provider);
            char *lines = turn_lines(parsed);
            assert_string_equal(lines, whole.lines);
            free(lines);
            tg_turn_free(parsed);
        }

        snprintf(path, sizeof path, "%s/%s.json", dir, cases[i]);
        FILE *f = fopen(path, "rb");
        if (f != NULL) {
            fclose(f);
            check_whole_document(provider, path, &whole);
        }
        run_free(&whole);
        free(text);
        free(cases[i]);
    }
    free(cases);
}

static void test_openai_chat_streams(void **state)
{
    (void)state;
    run_provider("openai-chat");
}

static void test_openai_responses_streams(void **state)
{
    (void)state;
    run_provider("openai-responses");
}

static void test_anthropic_streams(void **state)
{
    (void)state;
    run_provider("anthropic");
}

static void test_gemini_streams(void **state)
{
    (void)state;
    run_provider("gemini");
}

/* ------------------------------------------------------------ timing */

/* Offset just past the blank line that ends the event holding the nth
 * occurrence of marker. */
static size_t event_end(const char *text, const char *marker, int nth)
{
    const char *p = text - 1;
    for (int i = 0; i < nth; i++) {
        p = strstr(p + 1, marker);
        if (p == NULL)
            fail_msg("marker %s #%d not found", marker, nth);
    }
    const char *end = strstr(p, "\n\n");
    assert_non_null(end);
    return (size_t)(end - text) + 2;
}

/* Feeds byte by byte; at[i] = bytes fed when the i-th call came out, and
 * (when ids is not NULL) ids[i] its id. */
static size_t appearance(const char *text, size_t len, size_t *at, size_t max,
                         char (*ids)[64])
{
    tg_stream *s = NULL;
    tg_error err;
    size_t n = 0;
    const tg_call *c;
    assert_int_equal(tg_stream_new("auto", &s, &err), 0);
    for (size_t off = 0; off < len; off++) {
        assert_int_equal(tg_stream_feed(s, text + off, 1, &err), 0);
        while ((c = tg_stream_next_call(s)) != NULL) {
            assert_true(n < max);
            if (ids != NULL)
                snprintf(ids[n], sizeof ids[n], "%s", tg_call_id(c));
            at[n++] = off + 1;
        }
    }
    tg_stream_free(s);
    return n;
}

static char *load_case(const char *provider, const char *name, size_t *len)
{
    char root[4096], path[8192];
    tg_test_source_path(root, sizeof root, "tests/data/streams");
    snprintf(path, sizeof path, "%s/%s/%s.sse", root, provider, name);
    char *text = tg_test_read_file(path, len);
    if (text == NULL)
        fail_msg("cannot read %s", path);
    return text;
}

/* The three calls of <provider>/<name>.sse come out, fed byte by byte, at
 * the end of the event holding the nth[i] occurrence of mark[i] (the same
 * mark for every call when mark[1] is NULL); with ids, as ids[i]. */
static void expect_out(const char *provider, const char *name,
                       const char *const mark[3], const int nth[3],
                       const char *const ids[3])
{
    size_t len, at[8];
    char got[8][64];
    char *t = load_case(provider, name, &len);
    assert_int_equal(appearance(t, len, at, 8, got), 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(at[i],
                         event_end(t, mark[mark[1] ? i : 0], nth ? nth[i] : 1));
        if (ids != NULL)
            assert_string_equal(got[i], ids[i]);
    }
    free(t);
}

static void test_calls_come_out_when_their_arguments_close(void **state)
{
    (void)state;
    static const int first_three[] = {1, 2, 3};
    static const char *const stops[] = {
        "\"type\":\"content_block_stop\",\"index\":1}",
        "\"type\":\"content_block_stop\",\"index\":2}",
        "\"type\":\"content_block_stop\",\"index\":3}"};
    static const char *const args_done[] = {
        "\"type\":\"response.function_call_arguments.done\"", NULL, NULL};
    static const char finish[] = "\"finish_reason\":\"tool_calls\"";
    expect_out("anthropic", "parallel", stops, NULL, NULL);
    expect_out("openai-responses", "parallel", args_done, first_three, NULL);
    /* Chat: no event ends one call; a call whose arguments closed as one
     * object comes out when the stream moves on - the next index's first
     * piece, and for the last call the finish_reason's chunk. */
    static const char *const chat_next[] = {
        "\"id\":\"call_0lV2sQ1FgTvxx4TqTUXnEs9u\"",
        "\"id\":\"call_Ym3iGc7TZS1Kc0cDqnRpY4dq\"", finish};
    expect_out("openai-chat", "parallel", chat_next, NULL, NULL);
    /* Gemini: calls are whole in their event. */
    static const char *const gem[] = {"fc-7f3a1c20", "fc-7f3a1c20",
                                      "fc-0c55a9e1"};
    expect_out("gemini", "parallel", gem, NULL, NULL);

    /* Written at once, the calls come out as each one's end arrives - the
     * last written (the shortest) first, the first written last - while the
     * turn keeps the written order (interleaved.calls). */
    static const char *const anth_stops[] = {stops[2], stops[1], stops[0]};
    static const char *const anth_ids[] = {"toolu_01K3e5NbzD6gWYEPWuUMBVzR",
                                           "toolu_01BpLSXLmFQ7KdGGzyuhFAyN",
                                           "toolu_01T1x1fJ34qAmk2tNTrN7Up6"};
    expect_out("anthropic", "interleaved", anth_stops, NULL, anth_ids);
    static const char *const resp_ids[] = {"call_h2ECw5Qo4lJmWMPYp1yUxzrP",
                                           "call_mtmzNN2KsXzY8nvuLx4IoI5c",
                                           "call_AAzqFTgf1C2rzMJJsTGdmbqc"};
    expect_out("openai-responses", "interleaved", args_done, first_three,
               resp_ids);
    /* Chat, written at once: each call when the stream moves on from the
     * piece that closed it - the last written first again. */
    static const char *const chat_moved[] = {"\"arguments\":\"ue}\"",
                                             "\"arguments\":\"ine\"", finish};
    static const char *const chat_ids[] = {"call_Ym3iGc7TZS1Kc0cDqnRpY4dq",
                                           "call_0lV2sQ1FgTvxx4TqTUXnEs9u",
                                           "call_KxS0sXcrS0ZWpGxTHqNkTbdU"};
    expect_out("openai-chat", "interleaved", chat_moved, NULL, chat_ids);
}

/* ------------------------------------------------------------ edges */

static const tg_call *only_call(run *r, size_t i)
{
    if (r->rc != 0)
        fail_msg("stream failed: %s", r->err.message);
    assert_true(i < r->turn->n);
    return r->turn->calls[i];
}

static void test_truncated_arguments_message(void **state)
{
    (void)state;
    run r = run_whole("event: message_start\n"
                      "data: {\"type\":\"message_start\",\"message\":{}}\n\n"
                      "event: content_block_start\n"
                      "data: {\"type\":\"content_block_start\",\"index\":0,"
                      "\"content_block\":{\"type\":\"tool_use\",\"id\":"
                      "\"toolu_1\",\"name\":\"grep\",\"input\":{}}}\n\n"
                      "event: content_block_delta\n"
                      "data: {\"type\":\"content_block_delta\",\"index\":0,"
                      "\"delta\":{\"type\":\"input_json_delta\","
                      "\"partial_json\":\"{\\\"pattern\\\": \\\"ab\"}}\n\n",
                      "auto");
    const tg_call *c = only_call(&r, 0);
    assert_string_equal(c->pre_error_code, "MALFORMED_ARGUMENTS");
    assert_string_equal(c->pre_error_message,
                        "the stream ended inside the arguments of call "
                        "toolu_1 (15 bytes received)");
    /* What arrived is kept for diagnostics. */
    assert_string_equal(tg_call_args_raw(c), "{\"pattern\": \"ab");
    run_free(&r);

    /* Arguments that close as a JSON value when the input ends are
     * complete: nothing else for their index followed. */
    r = run_whole("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":"
                  "[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\","
                  "\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}}]}}]}"
                  "\n\n",
                  "auto");
    c = only_call(&r, 0);
    assert_null(c->pre_error_code);
    assert_string_equal(tg_call_args_json(c), "{}");
    assert_int_equal(r.early, 0); /* but nothing said so before the end */
    run_free(&r);
    /* No arguments at all: cut, not {}. */
    r = run_whole("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":"
                  "[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\","
                  "\"function\":{\"name\":\"ls\",\"arguments\":\" \"}}]}}]}"
                  "\n\n",
                  "auto");
    assert_string_equal(only_call(&r, 0)->pre_error_code,
                        "MALFORMED_ARGUMENTS");
    run_free(&r);
}

#define CHAT_CALL(k, id, name, args)                                           \
    "data: "                                                                   \
    "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":" k      \
    "," id "\"function\":{" name "\"arguments\":\"" args                       \
    "\"}}]},\"finish_reason\":null}]}\n\n"
#define CHAT_END                                                               \
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"         \
    "\"tool_calls\"}]}\n\ndata: [DONE]\n\n"

static void test_chat_ids(void **state)
{
    (void)state;
    /* A repeated id: the second is DUPLICATE_CALL_ID, as in a document. */
    run r =
        run_whole(CHAT_CALL("0", "\"id\":\"call_a\",", "\"name\":\"ls\",", "{}")
                      CHAT_CALL("1", "\"id\":\"call_a\",", "\"name\":\"ls\",",
                                "{}") CHAT_END,
                  "auto");
    assert_int_equal(r.turn->n, 2);
    assert_null(only_call(&r, 0)->pre_error_code);
    assert_string_equal(only_call(&r, 1)->pre_error_code, "DUPLICATE_CALL_ID");
    run_free(&r);

    /* No id: the whole-document parser's made-up id and error. */
    r = run_whole(CHAT_CALL("0", "", "\"name\":\"ls\",", "{}") CHAT_END,
                  "auto");
    assert_string_equal(tg_call_id(only_call(&r, 0)), "missing-id-0");
    assert_string_equal(only_call(&r, 0)->pre_error_code, "MALFORMED_CALL");
    run_free(&r);

    /* Servers that number every call 0: a new id starts a new call. */
    r = run_whole(CHAT_CALL("0", "\"id\":\"call_a\",", "\"name\":\"ls\",",
                            "{\\\"a\\\":") CHAT_CALL("0", "", "", "1}")
                      CHAT_CALL("0", "\"id\":\"call_b\",", "\"name\":\"cat\",",
                                "{}") CHAT_END,
                  "auto");
    assert_int_equal(r.turn->n, 2);
    assert_string_equal(tg_call_id(only_call(&r, 0)), "call_a");
    assert_string_equal(tg_call_args_json(only_call(&r, 0)), "{\"a\":1}");
    assert_string_equal(tg_call_tool(only_call(&r, 1)), "cat");
    run_free(&r);

    /* No name, another type. */
    r = run_whole(CHAT_CALL("0", "\"id\":\"c1\",", "", "{}") CHAT_END, "auto");
    assert_string_equal(only_call(&r, 0)->pre_error_code, "MALFORMED_CALL");
    assert_non_null(strstr(only_call(&r, 0)->pre_error_message, "no function"));
    run_free(&r);
    r = run_whole(CHAT_CALL("0", "\"id\":\"c1\",\"type\":\"custom\",",
                            "\"name\":\"x\",", "{}") CHAT_END,
                  "auto");
    assert_non_null(strstr(only_call(&r, 0)->pre_error_message, "custom"));
    run_free(&r);

    /* Arguments that close but are not an object. */
    r = run_whole(CHAT_CALL("0", "\"id\":\"c1\",", "\"name\":\"x\",", "[1]")
                      CHAT_END,
                  "auto");
    assert_string_equal(only_call(&r, 0)->pre_error_code,
                        "MALFORMED_ARGUMENTS");
    run_free(&r);

    /* Only the first choice is the turn. */
    r = run_whole("data: {\"choices\":[{\"index\":1,\"delta\":{\"tool_calls\":"
                  "[{\"index\":0,\"id\":\"other\",\"function\":{\"name\":"
                  "\"x\",\"arguments\":\"{}\"}}]}}]}\n\n" CHAT_END,
                  "auto");
    assert_int_equal(r.turn->n, 0);
    run_free(&r);
}

#define ANTH(json) "event: x\ndata: {\"type\":\"" json "}\n\n"

/* Calls in any order: what the golden transcripts do not show. */
static void test_calls_in_any_order(void **state)
{
    (void)state;
    tg_turn *t = NULL;
    tg_error err;
    /* One id on two blocks that stop in the other order. Taken as they
     * come, the first to stop runs (it may be running already) and the
     * other is the duplicate; read whole, the first written runs, as in
     * the whole message - and never both refused. */
    static const char dup[] =
        ANTH("content_block_start\",\"index\":0,\"content_block\":{\"type\":"
             "\"tool_use\",\"id\":\"t1\",\"name\":\"a\",\"input\":{}}")
            ANTH("content_block_start\",\"index\":1,\"content_block\":{"
                 "\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"b\","
                 "\"input\":{}}") ANTH("content_block_stop\",\"index\":1")
                ANTH("content_block_stop\",\"index\":0");
    run r = run_whole(dup, "auto");
    assert_int_equal(r.early, 2);
    assert_string_equal(tg_call_tool(only_call(&r, 0)), "a");
    assert_string_equal(only_call(&r, 0)->pre_error_code, "DUPLICATE_CALL_ID");
    assert_null(only_call(&r, 1)->pre_error_code);
    run_free(&r);
    assert_int_equal(
        tg_turn_parse(dup, sizeof dup - 1, "auto", "dup.sse", &t, &err), 0);
    assert_string_equal(tg_call_tool(t->calls[0]), "a");
    assert_null(t->calls[0]->pre_error_code);
    assert_string_equal(t->calls[1]->pre_error_code, "DUPLICATE_CALL_ID");
    tg_turn_free(t);

    /* Chat pieces for an index that come after a higher index started
     * join their own call; none is made up. */
    r = run_whole(
        CHAT_CALL("0", "\"id\":\"c0\",", "\"name\":\"ls\",", "{\\\"p\\\":")
            CHAT_CALL("1", "\"id\":\"c1\",", "\"name\":\"cat\",", "{}")
                CHAT_CALL("0", "", "", "2}") CHAT_END,
        "auto");
    assert_int_equal(r.turn->n, 2);
    assert_string_equal(tg_call_id(only_call(&r, 0)), "c0");
    assert_string_equal(tg_call_args_json(only_call(&r, 0)), "{\"p\":2}");
    assert_null(only_call(&r, 0)->pre_error_code);
    assert_string_equal(tg_call_id(only_call(&r, 1)), "c1");
    run_free(&r);
}

#define RESP(json) "event: x\ndata: {\"type\":\"response." json "}\n\n"

/* A run's warnings (the turn's), each on a line. */
static const char *warnings_of(const run *r)
{
    const char *w = strstr(r->lines, "warning: ");
    return w != NULL ? w : "";
}

/* Feeds pieces one by one; out[i] = calls next_call handed out after piece
 * i. Returns the finished turn (caller frees). */
static tg_turn *feed_pieces(const char *const *pieces, size_t n, int *out)
{
    tg_stream *s = NULL;
    tg_turn *t = NULL;
    tg_error err;
    assert_int_equal(tg_stream_new("auto", &s, &err), 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(tg_stream_feed(s, pieces[i], strlen(pieces[i]), &err),
                         0);
        out[i] = 0;
        while (tg_stream_next_call(s) != NULL)
            out[i]++;
    }
    assert_int_equal(tg_stream_finish(s, &t, &err), 0);
    tg_stream_free(s);
    return t;
}

/* Chat calls come out once their arguments close and the stream moves on;
 * what comes for them after is ignored, and said. */
static void test_chat_early_and_late(void **state)
{
    (void)state;
    /* A model writing on to a call whose arguments closed, after another
     * index began: the call came out when the stream moved on, and stays
     * as it came out; the turn says what was ignored. */
    static const char *const pieces[] = {
        CHAT_CALL("0", "\"id\":\"c0\",", "\"name\":\"ls\",", "{}"),
        CHAT_CALL("1", "\"id\":\"c1\",", "\"name\":\"cat\",", "{\\\"a\\\":"),
        CHAT_CALL("0", "", "", " x"),
        CHAT_CALL("1", "", "", "1}"),
        CHAT_END,
    };
    int out[5];
    tg_turn *t = feed_pieces(pieces, 5, out);
    assert_int_equal(out[0], 0); /* the stream has not moved on yet */
    assert_int_equal(out[1], 1); /* it has: c0 */
    assert_int_equal(out[2] + out[3], 0);
    assert_int_equal(out[4], 1); /* c1 at the finish_reason */
    assert_int_equal(t->n, 2);
    assert_null(t->calls[0]->pre_error_code);
    assert_string_equal(tg_call_args_json(t->calls[0]), "{}");
    assert_string_equal(tg_call_args_json(t->calls[1]), "{\"a\":1}");
    assert_int_equal(tg_turn_warning_count(t), 1);
    assert_string_equal(tg_turn_warning(t, 0),
                        "call c0 was complete when 1 more piece for it "
                        "arrived (2 bytes of arguments, the first on line "
                        "5): ignored, the call stands as it was complete");
    assert_null(tg_turn_warning(t, 1));
    tg_turn_free(t);
    /* Read whole, the same (the rule does not depend on the chunks, nor on
     * taking the calls); with the rule off, what the whole response would
     * make of it: c0 malformed. */
    tg__buf b;
    tg__buf_init(&b, 0);
    for (size_t i = 0; i < 5; i++)
        tg__buf_puts(&b, pieces[i]);
    run r = run_whole(tg__buf_cstr(&b), "auto");
    run late = run_stream_as(b.data, b.len, NULL, 0, "auto", 0, RUN_NO_EARLY);
    assert_int_equal(r.early, 2);
    assert_non_null(strstr(warnings_of(&r), "call c0 was complete"));
    assert_string_equal(only_call(&late, 0)->pre_error_code,
                        "MALFORMED_ARGUMENTS");
    assert_string_equal(tg_call_args_raw(only_call(&late, 0)), "{} x");
    assert_string_equal(warnings_of(&late), "");
    tg_error err;
    assert_int_equal(tg_turn_parse(b.data, b.len, "auto", "t.sse", &t, &err),
                     0);
    char *lines = turn_lines(t);
    assert_string_equal(lines, r.lines);
    free(lines);
    tg_turn_free(t);
    run_free(&r);
    run_free(&late);
    tg__buf_cleanup(&b);

    /* White space after the object is dropped, silently: the call came out
     * without it (the whole response would keep it in the raw text). */
    r = run_whole(
        CHAT_CALL("0", "\"id\":\"c0\",", "\"name\":\"ls\",", "{\\\"k\\\":1}")
            CHAT_CALL("1", "\"id\":\"c1\",", "\"name\":\"x\",", "{}")
                CHAT_CALL("0", "", "", " \\n\\t") CHAT_END,
        "auto");
    assert_string_equal(tg_call_args_raw(only_call(&r, 0)), "{\"k\":1}");
    assert_string_equal(warnings_of(&r), "");
    run_free(&r);

    /* Not early: no name yet, another type, arguments that close but are
     * not valid JSON or not an object, or more than one value. Each stays
     * open and the end decides, as without the rule. */
    static const char *const not_early[] = {
        "\"id\":\"c0\",\"function\":{\"arguments\":\"{}\"}",
        "\"id\":\"c0\",\"type\":\"custom\",\"function\":{\"name\":\"x\","
        "\"arguments\":\"{}\"}",
        "\"id\":\"c0\",\"function\":{\"name\":\"x\",\"arguments\":"
        "\"{\\\"a\\\":tru}\"}",
        "\"id\":\"c0\",\"function\":{\"name\":\"x\",\"arguments\":\"[1]\"}",
        "\"id\":\"c0\",\"function\":{\"name\":\"x\",\"arguments\":\"{}{}\"}",
        "\"id\":\"c0\",\"function\":{\"name\":\"x\",\"arguments\":"
        "\"{\\\"a\\\":\\\"}\\\"\"}",
        "\"function\":{\"name\":\"x\",\"arguments\":\"{}\"}",
    };
    for (size_t i = 0; i < sizeof not_early / sizeof not_early[0]; i++) {
        char text[1024];
        /* Then events with no piece (the stream moves on), and a name for
         * the first case's call; no finish_reason, so nothing but the early
         * rule could hand a call out before the end. */
        snprintf(text, sizeof text,
                 "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":"
                 "0,%s}]}}]}\n\n"
                 "data: {\"choices\":[{\"delta\":{\"content\":\"...\"}}]}\n\n"
                 "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":"
                 "0,\"function\":{\"name\":\"late\"}}]}}]}\n\n"
                 "data: {\"choices\":[{\"delta\":{\"content\":\"...\"}}]}\n\n",
                 not_early[i]);
        r = run_whole(text, "auto");
        late =
            run_stream_as(text, strlen(text), NULL, 0, "auto", 0, RUN_NO_EARLY);
        if (strcmp(r.lines, late.lines) != 0)
            fail_msg("case %zu:\n%s\nwithout the rule:\n%s", i, r.lines,
                     late.lines);
        /* The first comes out once its name arrived and the stream moved
         * on again: with its name. */
        if (r.early != (i == 0))
            fail_msg("case %zu came out early:\n%s", i, r.lines);
        run_free(&r);
        run_free(&late);
    }

    /* After the finish_reason every call is complete: a piece for one is
     * late (it does not start a call with a made-up id). */
    r = run_whole(
        CHAT_CALL("0", "\"id\":\"c0\",", "\"name\":\"ls\",", "{\\\"a\\\":")
            CHAT_CALL(
                "0", "", "",
                "1}") "data: {\"choices\":[{\"delta\":{},\"finish_reason\":"
                      "\"tool_calls\"}]}\n\n" CHAT_CALL("0", "", "", ",2]")
                          CHAT_CALL("0", "", "\"name\":\"rm\",", ""),
        "auto");
    assert_int_equal(r.turn->n, 1);
    assert_string_equal(tg_call_args_json(only_call(&r, 0)), "{\"a\":1}");
    assert_non_null(strstr(warnings_of(&r), "call c0 was complete when 2 more "
                                            "pieces for it arrived (3 bytes"));
    run_free(&r);

    /* Servers that number every call 0: another id is another call, not a
     * late piece, whether the first came out early or not. */
    r = run_whole(CHAT_CALL("0", "\"id\":\"a\",", "\"name\":\"ls\",",
                            "{}") "data: "
                                  "{\"choices\":[{\"delta\":{\"content\":\"\"}}"
                                  "]}\n\n" CHAT_CALL("0", "\"id\":\"b\",",
                                                     "\"name\":\"ls\",", "{}")
                                      CHAT_END,
                  "auto");
    assert_int_equal(r.turn->n, 2);
    assert_int_equal(r.early, 2);
    assert_string_equal(warnings_of(&r), "");
    run_free(&r);
}

/* Anthropic and Responses: a piece for a call after its end is ignored and
 * said, the call unchanged. */
static void test_late_pieces(void **state)
{
    (void)state;
    run r = run_whole(
        ANTH("content_block_start\",\"index\":0,\"content_block\":{\"type\":"
             "\"tool_use\",\"id\":\"t1\",\"name\":\"a\",\"input\":{}}")
            ANTH("content_block_delta\",\"index\":0,\"delta\":{\"type\":"
                 "\"input_json_delta\",\"partial_json\":\"{}\"}")
                ANTH("content_block_stop\",\"index\":0")
                    ANTH("content_block_delta\",\"index\":0,\"delta\":{"
                         "\"type\":\"input_json_delta\",\"partial_json\":"
                         "\"{\\\"x\\\":1}\"}") ANTH("message_stop\""),
        "auto");
    assert_int_equal(r.turn->n, 1);
    assert_string_equal(tg_call_args_json(only_call(&r, 0)), "{}");
    assert_string_equal(warnings_of(&r),
                        "warning: call t1 was complete when 1 more piece for "
                        "it arrived (7 bytes of arguments, the first on line "
                        "11): ignored, the call stands as it was complete\n");
    run_free(&r);

    r = run_whole(
        RESP("output_item.added\",\"output_index\":0,\"item\":{\"type\":"
             "\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_1\","
             "\"name\":\"ls\",\"arguments\":\"\"}")
            RESP("function_call_arguments.done\",\"item_id\":\"fc_1\","
                 "\"output_index\":0,\"arguments\":\"{}\"")
                RESP("function_call_arguments.delta\",\"item_id\":\"fc_1\","
                     "\"output_index\":0,\"delta\":\"oops\"")
                    RESP("completed\",\"response\":{}"),
        "auto");
    assert_int_equal(r.turn->n, 1);
    assert_string_equal(tg_call_args_json(only_call(&r, 0)), "{}");
    assert_non_null(strstr(warnings_of(&r), "call call_1 was complete when 1 "
                                            "more piece for it arrived (4 "
                                            "bytes"));
    run_free(&r);

    /* An id a terminal must not see raw is shown printable, and bounded. */
    char id[300];
    snprintf(id, sizeof id, "\\u001b[31m%0250d", 0);
    char text[2048];
    snprintf(text, sizeof text,
             ANTH("content_block_start\",\"index\":0,\"content_block\":{"
                  "\"type\":\"tool_use\",\"id\":\"%s\",\"name\":\"a\","
                  "\"input\":{}}") ANTH("content_block_stop\",\"index\":0")
                 ANTH("content_block_delta\",\"index\":0,\"delta\":{\"type\":"
                      "\"input_json_delta\",\"partial_json\":\"x\"}"),
             id);
    r = run_whole(text, "auto");
    const char *w = warnings_of(&r);
    assert_int_equal(strncmp(w, "warning: call ?[31m0000", 23), 0);
    assert_non_null(strstr(w, "000... was complete"));
    run_free(&r);
}

/* The end of the stream is the end: what follows is counted, ignored and
 * said, whatever it is. */
static void test_end_of_stream(void **state)
{
    (void)state;
    /* Chat: a call after [DONE] does not run. */
    static const char chat[] =
        CHAT_CALL("0", "\"id\":\"c0\",", "\"name\":\"ls\",", "{}")
            CHAT_END CHAT_CALL("1", "\"id\":\"evil\",", "\"name\":\"rm\",",
                               "{}") CHAT_END "data: not json\n\n";
    run r = run_whole(chat, "auto");
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.turn->n, 1);
    assert_string_equal(tg_call_id(only_call(&r, 0)), "c0");
    assert_string_equal(warnings_of(&r),
                        "warning: 3 events after the end of the stream (data: "
                        "[DONE] on line 5) were ignored, the first on line "
                        "7\n");
    /* The same whatever the chunking; and what the API says as it goes. */
    check_chunkings("chat after [DONE]", chat, sizeof chat - 1, &r);
    run_free(&r);
    tg_stream *s = NULL;
    tg_error err;
    assert_int_equal(tg_stream_new("auto", &s, &err), 0);
    size_t done = strstr(chat, "[DONE]") - chat + 8;
    assert_int_equal(tg_stream_feed(s, chat, done - 1, &err), 0);
    assert_false(tg_stream_ended(s));
    assert_int_equal(tg_stream_feed(s, chat + done - 1, 1, &err), 0);
    assert_true(tg_stream_ended(s));
    assert_int_equal(tg_stream_ignored_events(s), 0);
    assert_int_equal(
        tg_stream_feed(s, chat + done, sizeof chat - 1 - done, &err), 0);
    assert_int_equal(tg_stream_ignored_events(s), 3);
    tg_stream_free(s);
    assert_false(tg_stream_ended(NULL));
    assert_int_equal(tg_stream_ignored_events(NULL), 0);

    /* Anthropic: a block after message_stop; Responses: an item after
     * response.completed (and .failed, .incomplete). */
    r = run_whole(
        ANTH("content_block_start\",\"index\":0,\"content_block\":{\"type\":"
             "\"tool_use\",\"id\":\"t1\",\"name\":\"a\",\"input\":{}}")
            ANTH("message_stop\"")
                ANTH("content_block_start\",\"index\":1,\"content_block\":{"
                     "\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"rm\","
                     "\"input\":{}}") ANTH("content_block_stop\",\"index\":1"),
        "auto");
    assert_int_equal(r.turn->n, 1);
    assert_non_null(strstr(warnings_of(&r), "2 events after the end of the "
                                            "stream (message_stop on line 5)"));
    run_free(&r);
    static const char *const ends[] = {"completed", "failed", "incomplete"};
    for (size_t i = 0; i < 3; i++) {
        char text[1024], what[64];
        snprintf(text, sizeof text,
                 RESP("output_item.done\",\"output_index\":0,\"item\":{"
                      "\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":"
                      "\"call_1\",\"name\":\"ls\",\"arguments\":\"{}\"}")
                     RESP("%s\",\"response\":{}")
                         RESP("output_item.done\",\"output_index\":1,"
                              "\"item\":{\"type\":\"function_call\",\"id\":"
                              "\"fc_2\",\"call_id\":\"call_2\",\"name\":"
                              "\"rm\",\"arguments\":\"{}\"}"),
                 ends[i]);
        r = run_whole(text, "auto");
        assert_int_equal(r.turn->n, 1);
        snprintf(what, sizeof what, "(response.%s on line 5)", ends[i]);
        assert_non_null(strstr(warnings_of(&r), what));
        run_free(&r);
    }
    /* A [DONE] after another provider's end, keep-alives and comments:
     * nothing to say. */
    r = run_whole(
        ANTH("message_delta\",\"delta\":{\"stop_reason\":"
             "\"end_turn\"}")
            ANTH("message_stop\"") "data: [DONE]\n\n: bye\n\ndata: \n\n",
        "auto");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.lines, "");
    run_free(&r);
    /* Events after the end cannot fail the stream: over the cap, not JSON,
     * another provider's. */
    tg__buf b;
    tg__buf_init(&b, 0);
    tg__buf_puts(&b, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},"
                     "\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
                     "data: {\"type\":\"message_start\"}\n\ndata: ");
    for (int i = 0; i < 300; i++)
        tg__buf_puts(&b, "x");
    tg__buf_puts(&b, "\n\n");
    r = run_stream(b.data, b.len, NULL, 0, "auto", 100);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.turn->n, 0);
    assert_non_null(strstr(warnings_of(&r), "2 events after the end"));
    run_free(&r);
    tg__buf_cleanup(&b);
    /* Gemini's stream has no end event: the end of the input is its end. */
    r = run_whole("data: {\"candidates\":[{\"content\":{\"parts\":[{"
                  "\"functionCall\":{\"name\":\"ls\",\"args\":{}}}]},"
                  "\"finishReason\":\"STOP\"}]}\n\n"
                  "data: {\"candidates\":[{\"content\":{\"parts\":[{"
                  "\"functionCall\":{\"name\":\"cat\",\"args\":{}}}]}}]}\n\n",
                  "auto");
    assert_int_equal(r.turn->n, 2);
    run_free(&r);
}

/* A stream from which nothing can be read is an error, not a turn without
 * calls; an answer without calls is a turn without calls. */
static void test_nothing_read(void **state)
{
    (void)state;
    static const char *const answers[] = {
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
        "\"content\":\"Hello\"}}]}\n\ndata: {\"choices\":[{\"index\":0,"
        "\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
        /* cut, but it had begun to answer */
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}"
        "\n\n",
        /* stopped without a word (a length limit of 0, say) */
        "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n",
        ANTH("message_start\",\"message\":{}")
            ANTH("content_block_start\",\"index\":0,\"content_block\":{"
                 "\"type\":\"text\",\"text\":\"\"}")
                ANTH("content_block_delta\",\"index\":0,\"delta\":{\"type\":"
                     "\"text_delta\",\"text\":\"Hi\"}"),
        RESP("created\",\"response\":{}")
            RESP("output_text.delta\",\"output_index\":0,\"delta\":\"Hi\"")
                RESP("completed\",\"response\":{}"),
        "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}]},"
        "\"finishReason\":\"STOP\"}]}\n\n",
        "data: {\"promptFeedback\":{\"blockReason\":\"SAFETY\"}}\n\n",
        /* the first event cut: what it began with tells whose it is */
        "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"I'll",
    };
    for (size_t i = 0; i < sizeof answers / sizeof answers[0]; i++) {
        run r = run_whole(answers[i], "auto");
        if (r.rc != 0)
            fail_msg("answer %zu: %s", i, r.err.message);
        assert_int_equal(r.turn->n, 0);
        run_free(&r);
    }

    static const struct {
        const char *text, *format, *says;
    } bad[] = {
        /* only the response's lifecycle, then nothing */
        {RESP("created\",\"response\":{}") RESP("in_progress\",\"response\":"
                                                "{}"),
         "auto",
         "the openai-responses stream has no tool call, no text and "
         "no stop (2 events, none of them the model's output)"},
        /* only a role, then nothing */
        {"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":"
         "\"\"}}]}\n\n",
         "auto", "the openai-chat stream has no tool call"},
        /* named, but nothing of that provider's kind */
        {"data: {\"hello\":1}\n\n", "anthropic",
         "the anthropic stream has no tool call"},
        {": only a comment\n\n", "gemini", "(0 events"},
        {ANTH("message_start\",\"message\":{}") ANTH("ping\""), "auto",
         "the anthropic stream has no tool call"},
        /* an error instead of an answer */
        {ANTH("message_start\",\"message\":{}")
             ANTH("error\",\"error\":{\"type\":\"overloaded_error\","
                  "\"message\":\"Overloaded\"}"),
         "auto",
         "the anthropic stream carried an error and no tool call: "
         "Overloaded"},
        {RESP("created\",\"response\":{}")
             RESP("failed\",\"response\":{\"error\":{\"message\":\"boom\"}}"),
         "auto", "carried an error and no tool call: boom"},
        /* the wrong shape for the provider */
        {"data: {\"object\":\"chat.completion.chunk\",\"choices\":{}}\n\n",
         "auto",
         "event 1 (ending on line 2) of the openai-chat stream: "
         "choices is not an array"},
        {"data: {\"choices\":[{\"delta\":{\"tool_calls\":{\"index\":0}}}]}\n\n",
         "auto", "choices[0].delta.tool_calls is not an array"},
        {"data: {\"choices\":[{\"delta\":{\"tool_calls\":[\"x\"]}}]}\n\n",
         "auto", "choices[0].delta.tool_calls[0] is not an object"},
        {"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":1}]}}"
         "]}\n\n",
         "auto", "choices[0].delta.tool_calls[0].function is not an object"},
        {"data: {\"choices\":[{\"delta\":[]}]}\n\n", "auto",
         "choices[0].delta is not an object"},
        {"data: {\"choices\":[1]}\n\n", "auto", "choices[0] is not an object"},
        {ANTH("content_block_start\",\"index\":0,\"content_block\":{\"type\":"
              "\"tool_use\",\"id\":\"t\",\"name\":\"a\",\"input\":{}}")
             ANTH("content_block_delta\",\"index\":0,\"delta\":{\"type\":"
                  "\"input_json_delta\",\"partial_json\":{}}"),
         "auto", "partial_json is not a string"},
        {ANTH("content_block_delta\",\"index\":0,\"delta\":\"x\""), "auto",
         "content_block_delta without a delta object"},
        {ANTH("content_block_start\",\"index\":0"), "auto",
         "without a content_block object"},
        {RESP("function_call_arguments.delta\",\"output_index\":0,\"delta\":"
              "7"),
         "auto", "an arguments delta that is not a string"},
        {"data: {\"candidates\":{}}\n\n", "auto", "candidates is not an array"},
        {"data: {\"candidates\":[{\"content\":{\"parts\":{}}}]}\n\n", "auto",
         "parts is not an array"},
        /* JSON, but not an object, even at the very end */
        {"data: {\"choices\":[]}\n\ndata: 42", "auto",
         "its data is JSON but not an object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run r = run_whole(bad[i].text, bad[i].format);
        if (r.rc == 0)
            fail_msg("bad %zu read as a turn of %zu calls", i, r.turn->n);
        if (strstr(r.err.message, bad[i].says) == NULL)
            fail_msg("bad %zu: %s", i, r.err.message);
        /* Fast paths or documents, in pieces or whole: the same. */
        if (strcmp(bad[i].format, "auto") == 0)
            check_chunkings("bad stream", bad[i].text, strlen(bad[i].text), &r);
        tg_stream *s = NULL;
        tg_turn *t = NULL;
        tg_error err;
        assert_int_equal(tg_stream_new(bad[i].format, &s, &err), 0);
        tg__stream_no_fast_paths(s);
        int rc = tg_stream_feed(s, bad[i].text, strlen(bad[i].text), &err);
        if (rc == 0)
            rc = tg_stream_finish(s, &t, &err);
        assert_int_equal(rc, r.rc);
        assert_string_equal(err.message, r.err.message);
        tg_stream_free(s);
        run_free(&r);
    }
}

/* The events of a transcript written without the blank lines between them
 * are one event: its data is not JSON, and the message says why and where. */
static void test_missing_blank_lines(void **state)
{
    (void)state;
    static const char *const examples[] = {
        "openai-chat-stream.sse", "openai-responses-stream.sse",
        "anthropic-stream.sse", "anthropic-stream-interleaved.sse",
        "gemini-stream.sse"};
    for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++) {
        char root[4096], path[8192];
        tg_test_source_path(root, sizeof root, "examples/turns");
        snprintf(path, sizeof path, "%s/%s", root, examples[i]);
        size_t len;
        char *text = tg_test_read_file(path, &len);
        assert_non_null(text);
        /* What grep '^data:' keeps. */
        tg__buf b;
        tg__buf_init(&b, 0);
        for (const char *p = text; *p;) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
            if (strncmp(p, "data:", 5) == 0)
                tg__buf_append(&b, p, n);
            p += n;
        }
        run r = run_stream(b.data, b.len, NULL, 0, "auto", 0);
        if (r.rc != TG_EPARSE)
            fail_msg("%s without blank lines: %s", examples[i], r.lines);
        assert_non_null(strstr(r.err.message, "event 1 (ending on line "));
        assert_non_null(strstr(r.err.message, "its data is not JSON: end of "
                                              "file expected"));
        assert_non_null(strstr(r.err.message, "on line 2, column 1"));
        assert_non_null(strstr(r.err.message, "no blank line separates them"));
        assert_int_equal(r.err.line, 2);
        /* Through tg_turn_parse too. */
        tg_turn *t = NULL;
        tg_error err;
        assert_int_equal(
            tg_turn_parse(b.data, b.len, "auto", "x.sse", &t, &err), TG_EPARSE);
        assert_int_equal(strncmp(err.message, "x.sse: event 1", 14), 0);
        run_free(&r);
        tg__buf_cleanup(&b);
        free(text);
    }
    /* Another field between the data lines: the event's last line is
     * named. */
    run r = run_whole("data: {\"choices\":[]}\nevent: x\ndata: {\"choices\":"
                      "[]}\n\n",
                      "auto");
    assert_int_equal(r.rc, TG_EPARSE);
    assert_int_equal(r.err.line, 4);
    run_free(&r);
    /* The last event cut inside a token or a UTF-8 sequence is a cut. */
    static const char *const cuts[] = {"tru",     "-",      "1.",
                                       "\"\\u12", "\"\xc3", "\"\xe2\x82"};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        char text[256];
        snprintf(text, sizeof text,
                 "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n"
                 "data: {\"a\":[%s",
                 cuts[i]);
        r = run_whole(text, "auto");
        if (r.rc != 0)
            fail_msg("cut %zu: %s", i, r.err.message);
        run_free(&r);
    }
}

static void test_responses_details(void **state)
{
    (void)state;
    /* .done's arguments are the whole string, whatever the deltas said;
     * the item id is kept in meta; output_item.done adds no second call. */
    run r = run_whole(
        RESP("created\",\"response\":{}")
            RESP("output_item.added\",\"output_index\":0,\"item\":{\"type\":"
                 "\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_1\","
                 "\"name\":\"ls\",\"arguments\":\"\"}")
                RESP("function_call_arguments.delta\",\"item_id\":\"fc_1\","
                     "\"output_index\":0,\"delta\":\"{\\\"a\\\":\"")
                    RESP("function_call_arguments.done\",\"item_id\":\"fc_1\","
                         "\"output_index\":0,\"arguments\":\"{\\\"a\\\":2}\"")
                        RESP("output_item.done\",\"output_index\":0,\"item\":"
                             "{\"type\":\"function_call\",\"id\":\"fc_1\","
                             "\"call_id\":\"call_1\",\"name\":\"ls\","
                             "\"arguments\":\"{\\\"a\\\":2}\"}")
        /* An item never announced is whole at output_item.done. */
        RESP("output_item.done\",\"output_index\":1,\"item\":{\"type\":"
             "\"function_call\",\"id\":\"fc_2\",\"call_id\":\"call_2\","
             "\"name\":\"cat\",\"arguments\":\"{}\"}")
        /* A function_call without call_id. */
        RESP("output_item.added\",\"output_index\":2,\"item\":{\"type\":"
             "\"function_call\",\"id\":\"fc_3\",\"name\":\"x\"}")
            RESP("output_item.done\",\"output_index\":2,\"item\":{\"type\":"
                 "\"function_call\",\"id\":\"fc_3\",\"name\":\"x\","
                 "\"arguments\":\"{}\"}"),
        "auto");
    assert_int_equal(r.turn->n, 3);
    const tg_call *c = only_call(&r, 0);
    assert_string_equal(tg_call_id(c), "call_1");
    assert_string_equal(tg_call_args_json(c), "{\"a\":2}");
    assert_string_equal(
        json_string_value(json_object_get(tg__call_meta(c), "item_id")),
        "fc_1");
    assert_string_equal(tg_call_id(only_call(&r, 1)), "call_2");
    assert_string_equal(tg_call_id(only_call(&r, 2)), "missing-call-id-2");
    assert_string_equal(only_call(&r, 2)->pre_error_code, "MALFORMED_CALL");
    run_free(&r);
}

static void test_anthropic_details(void **state)
{
    (void)state;
    /* No deltas (or only empty ones): the start's input; the object is
     * kept as an object (no raw string), as from a whole message. */
    run r = run_whole(
        ANTH("message_start\",\"message\":{}")
            ANTH("content_block_start\",\"index\":0,\"content_block\":{"
                 "\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"now\","
                 "\"input\":{}}")
                ANTH("content_block_delta\",\"index\":0,\"delta\":{\"type\":"
                     "\"input_json_delta\",\"partial_json\":\"\"}")
                    ANTH("content_block_stop\",\"index\":0")
                        ANTH("content_block_start\",\"index\":1,"
                             "\"content_block\":{\"type\":\"tool_use\","
                             "\"id\":\"t2\",\"name\":\"x\",\"input\":{\"k\":"
                             "1}}") ANTH("content_block_stop\",\"index\":1")
        /* Spaces in the pieces do not reach the arguments text. */
        ANTH("content_block_start\",\"index\":2,\"content_block\":{\"type\":"
             "\"tool_use\",\"id\":\"t3\",\"name\":\"x\",\"input\":{}}")
            ANTH("content_block_delta\",\"index\":2,\"delta\":{\"type\":"
                 "\"input_json_delta\",\"partial_json\":\"{\\\"a\\\": \"}")
                ANTH("content_block_delta\",\"index\":2,\"delta\":{\"type\":"
                     "\"input_json_delta\",\"partial_json\":\" [1, 2]}\"}")
                    ANTH("content_block_stop\",\"index\":2")
        /* Pieces that close into bad JSON. */
        ANTH("content_block_start\",\"index\":3,\"content_block\":{\"type\":"
             "\"tool_use\",\"id\":\"t4\",\"name\":\"x\",\"input\":{}}")
            ANTH("content_block_delta\",\"index\":3,\"delta\":{\"type\":"
                 "\"input_json_delta\",\"partial_json\":\"{\\\"a\\\"\"}")
                ANTH("content_block_stop\",\"index\":3")
        /* A block left open is closed by message_stop. */
        ANTH("content_block_start\",\"index\":4,\"content_block\":{\"type\":"
             "\"tool_use\",\"id\":\"t5\",\"name\":\"x\",\"input\":{}}")
            ANTH("content_block_delta\",\"index\":4,\"delta\":{\"type\":"
                 "\"input_json_delta\",\"partial_json\":\"{}\"}")
                ANTH("message_stop\""),
        "auto");
    assert_int_equal(r.turn->n, 5);
    assert_string_equal(tg_call_args_json(only_call(&r, 0)), "{}");
    assert_null(tg_call_args_raw(only_call(&r, 0)));
    assert_string_equal(tg_call_args_json(only_call(&r, 1)), "{\"k\":1}");
    assert_string_equal(tg_call_args_json(only_call(&r, 2)), "{\"a\":[1,2]}");
    assert_null(tg_call_args_raw(only_call(&r, 2)));
    assert_string_equal(only_call(&r, 3)->pre_error_code,
                        "MALFORMED_ARGUMENTS");
    assert_null(only_call(&r, 4)->pre_error_code);
    run_free(&r);
}

static void test_gemini_ids(void **state)
{
    (void)state;
    static const char a[] =
        "data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":"
        "{\"name\":\"ls\",\"args\":{}}},{\"functionCall\":{\"name\":\"ls\"}}"
        "],\"role\":\"model\"}}],\"responseId\":\"A\"}\r\n\r\n";
    static const char b[] =
        "data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":"
        "{\"name\":\"ls\",\"args\":{}}},{\"functionCall\":{\"name\":\"ls\"}}"
        "],\"role\":\"model\"}}],\"responseId\":\"B\"}\r\n\r\n";
    run ra = run_whole(a, "auto"), ra2 = run_whole(a, "gemini");
    run rb = run_whole(b, "auto");
    const char *id0 = tg_call_id(only_call(&ra, 0));
    assert_int_equal(strlen(id0), strlen("gemini-12345678-0"));
    assert_int_equal(strncmp(id0, "gemini-", 7), 0);
    assert_string_equal(id0 + 15, "-0");
    assert_string_equal(tg_call_id(only_call(&ra, 1)) + 15, "-1");
    /* Deterministic, and another turn gets other ids. */
    assert_string_equal(id0, tg_call_id(only_call(&ra2, 0)));
    assert_string_not_equal(id0, tg_call_id(only_call(&rb, 0)));
    /* args absent: {}; args not an object: MALFORMED_ARGUMENTS. */
    assert_string_equal(tg_call_args_json(only_call(&ra, 1)), "{}");
    run_free(&ra);
    run_free(&ra2);
    run_free(&rb);
    run r = run_whole("data: {\"candidates\":[{\"content\":{\"parts\":[{"
                      "\"functionCall\":{\"name\":\"ls\",\"args\":[1]}}]}}]}"
                      "\n\n",
                      "auto");
    assert_string_equal(only_call(&r, 0)->pre_error_code,
                        "MALFORMED_ARGUMENTS");
    run_free(&r);
}

static void test_limits(void **state)
{
    (void)state;
    /* An event over the cap ends the stream with TG_ELIMIT. */
    char big[400];
    snprintf(big, sizeof big, "data: {\"choices\":[],\"pad\":\"%0200d\"}\n\n",
             0);
    run r = run_stream(big, strlen(big), NULL, 0, "auto", 100);
    assert_int_equal(r.rc, TG_ELIMIT);
    assert_non_null(strstr(r.err.message, "limit of 100 bytes"));
    run_free(&r);

    /* Arguments over the cap, in small pieces: that call alone fails. */
    tg__buf b;
    tg__buf_init(&b, 0);
    tg__buf_puts(&b, CHAT_CALL("0", "\"id\":\"c1\",", "\"name\":\"x\",",
                               "{\\\"k\\\":\\\""));
    for (int i = 0; i < 20; i++)
        tg__buf_puts(&b, CHAT_CALL("0", "", "", "0123456789"));
    tg__buf_puts(&b, CHAT_CALL("0", "", "", "\\\"}"));
    tg__buf_puts(&b, CHAT_CALL("1", "\"id\":\"c2\",", "\"name\":\"y\",", "{}"));
    tg__buf_puts(&b, CHAT_END);
    r = run_stream(b.data, b.len, NULL, 0, "auto", 160);
    assert_int_equal(r.rc, 0);
    assert_string_equal(only_call(&r, 0)->pre_error_code,
                        "ARGUMENTS_TOO_LARGE");
    assert_non_null(
        strstr(only_call(&r, 0)->pre_error_message, "(208 bytes received)"));
    assert_null(only_call(&r, 1)->pre_error_code);
    run_free(&r);
    /* The cap is fixed once bytes were fed. */
    tg_stream *s = NULL;
    assert_int_equal(tg_stream_new("auto", &s, NULL), 0);
    assert_int_equal(tg_stream_feed(s, ":", 1, NULL), 0);
    tg_error err = {0};
    assert_int_equal(tg_stream_set_max_event_bytes(s, 10, &err), TG_EINVAL);
    assert_string_equal(err.message,
                        "the event size cap is set before the first feed");
    tg_stream_free(s);
    tg__buf_cleanup(&b);
}

static void test_errors(void **state)
{
    (void)state;
    tg_stream *s = (tg_stream *)1;
    tg_error err;
    assert_int_equal(tg_stream_new("toolgate", &s, &err), TG_EFORMAT);
    assert_null(s);
    assert_non_null(strstr(err.message, "toolgate"));

    /* Data that is not JSON, inside the stream: TG_EPARSE naming the event
     * and its line, and the stream stays failed. */
    assert_int_equal(tg_stream_new("auto", &s, &err), 0);
    static const char bad[] = "data: {\"choices\":[]}\n\ndata: {nope\n\n";
    assert_int_equal(tg_stream_feed(s, bad, sizeof bad - 1, &err), TG_EPARSE);
    assert_non_null(strstr(err.message, "event 2 (ending on line 4)"));
    assert_non_null(strstr(err.message, "on line 3, column"));
    assert_int_equal(err.line, 3); /* the data's line */
    memset(&err, 0, sizeof err);
    assert_int_equal(tg_stream_feed(s, "\n", 1, &err), TG_EPARSE);
    assert_non_null(strstr(err.message, "event 2"));
    tg_turn *t = (tg_turn *)1;
    assert_int_equal(tg_stream_finish(s, &t, &err), TG_EPARSE);
    assert_null(t);
    tg_stream_free(s);

    /* ... but at the very end it is a cut, not an error. */
    run r = run_whole("data: {\"choices\":[]}\n\ndata: {\"choi", "auto");
    assert_int_equal(r.rc, 0);
    run_free(&r);

    /* Events of another provider than the one named. */
    r = run_whole("data: {\"type\":\"message_start\",\"message\":{}}\n\n",
                  "openai-chat");
    assert_int_equal(r.rc, TG_EFORMAT);
    assert_non_null(strstr(r.err.message, "anthropic"));
    run_free(&r);
    /* ... or than the first events told. */
    r = run_whole("data: {\"choices\":[]}\n\ndata: {\"type\":\"response."
                  "created\"}\n\n",
                  "auto");
    assert_int_equal(r.rc, TG_EFORMAT);
    run_free(&r);

    /* Nothing that tells the provider. */
    r = run_whole(": hi\n\ndata: {\"type\":\"error\"}\n\n", "auto");
    assert_int_equal(r.rc, TG_EFORMAT);
    assert_non_null(strstr(r.err.message, "1 event)"));
    run_free(&r);
    /* An error the provider streamed is named. */
    r = run_whole("event: error\ndata: {\"type\":\"error\",\"error\":{"
                  "\"type\":\"overloaded_error\",\"message\":"
                  "\"Overloaded\"}}\n\n",
                  "auto");
    assert_int_equal(r.rc, TG_EFORMAT);
    assert_non_null(strstr(r.err.message, "it carried an error: Overloaded"));
    run_free(&r);
    r = run_whole(ANTH("content_block_start\",\"index\":0,\"content_block\":"
                       "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":"
                       "\"x\",\"input\":{}}")
                      ANTH("error\",\"error\":{\"type\":\"overloaded_error\","
                           "\"message\":\"Overloaded\"}"),
                  "auto");
    assert_string_equal(only_call(&r, 0)->pre_error_message,
                        "the stream ended inside the arguments of call t1 (0 "
                        "bytes received); the stream carried an error: "
                        "Overloaded");
    run_free(&r);
    /* Named, an empty stream is not an answer either. */
    r = run_whole(": hi\n\n", "anthropic");
    assert_int_equal(r.rc, TG_EFORMAT);
    assert_non_null(strstr(r.err.message, "the anthropic stream has no tool "
                                          "call, no text and no stop (0 "
                                          "events"));
    run_free(&r);

    /* Misuse. */
    assert_int_equal(tg_stream_new("auto", &s, NULL), 0);
    assert_null(tg_stream_format(s));
    assert_int_equal(tg_stream_feed(s, "data: [DONE]\n\n", 14, NULL), 0);
    assert_int_equal(tg_stream_finish(s, &t, &err), TG_EFORMAT);
    assert_int_equal(tg_stream_finish(s, &t, &err), TG_EINVAL);
    assert_int_equal(tg_stream_feed(s, "x", 1, &err), TG_EINVAL);
    tg_stream_free(s);
    tg_stream_free(NULL);
    assert_null(tg_stream_next_call(NULL));
}

static void test_turn_parse_routing(void **state)
{
    (void)state;
    assert_true(tg__stream_looks_like_sse("\n\r\n  \ndata: x", 13));
    assert_true(tg__stream_looks_like_sse("event: a\n", 9));
    assert_true(tg__stream_looks_like_sse(": c", 3));
    assert_false(tg__stream_looks_like_sse("{\"data:\":1}", 11));
    assert_false(tg__stream_looks_like_sse(" data: x", 8));
    assert_false(tg__stream_looks_like_sse("", 0));

    /* Errors of a stream name the input. */
    tg_turn *t = NULL;
    tg_error err;
    static const char bad[] = "data: {\"choices\":[]}\n\ndata: nope\n\n";
    assert_int_equal(
        tg_turn_parse(bad, sizeof bad - 1, "auto", "in.sse", &t, &err),
        TG_EPARSE);
    assert_int_equal(strncmp(err.message, "in.sse: event 2", 15), 0);
    assert_int_equal(
        tg_turn_parse(bad, sizeof bad - 1, "toolgate", "in.sse", &t, &err),
        TG_EFORMAT);
    /* A byte order mark before the stream. */
    static const char bom[] = "\xEF\xBB\xBF"
                              "data: {\"choices\":[{\"delta\":{},"
                              "\"finish_reason\":\"stop\"}]}\n\n";
    assert_int_equal(
        tg_turn_parse(bom, sizeof bom - 1, "auto", "in.sse", &t, &err), 0);
    assert_string_equal(tg_turn_format(t), "openai-chat");
    tg_turn_free(t);
}

/* ------------------------------------------------------------ failing
 * allocations */

/* Reads text in 7-byte chunks, takes every call as it comes out, finishes,
 * gives each call a result and renders them; *desc (when the stream was
 * read) describes the calls. Returns 0 or the first error. */
static int stream_operation(const char *text, size_t len, char **desc)
{
    tg_stream *s = NULL;
    tg_turn *turn = NULL;
    tg_error err;
    char *out = NULL;
    int rc = tg_stream_new("auto", &s, &err);
    for (size_t off = 0; rc == 0 && off < len; off += 7) {
        rc = tg_stream_feed(s, text + off, len - off < 7 ? len - off : 7, &err);
        while (tg_stream_next_call(s) != NULL)
            ;
    }
    if (rc == 0)
        rc = tg_stream_finish(s, &turn, &err);
    tg_stream_free(s);
    if (rc != 0)
        return rc;
    tg__buf b;
    tg__buf_init(&b, 0);
    for (size_t i = 0; i < turn->n && rc == 0; i++) {
        const tg_call *c = turn->calls[i];
        const char *aj = tg_call_args_json(c);
        rc = tg__buf_printf(&b, "%s|%s|%s|%s|%s\n", c->id, c->tool,
                            aj ? aj : "-",
                            c->pre_error_code ? c->pre_error_code : "",
                            c->pre_error_message ? c->pre_error_message : "");
        if (rc != 0)
            break;
        tg_result *r = tg__result_success(c, json_string("ok"));
        rc = r == NULL ? TG_ENOMEM : tg__turn_set_result(turn, i, r);
    }
    if (rc == 0)
        rc = tg_turn_render(turn, NULL, &out, NULL, &err);
    tg_free(out);
    tg_turn_free(turn);
    if (rc == 0 && (*desc = tg__buf_take(&b)) == NULL)
        rc = TG_ENOMEM;
    tg__buf_cleanup(&b);
    return rc;
}

/* A run that completed despite a refused allocation may differ from the
 * clean one only where an allocation failure looks like bad input: jansson
 * reports some out-of-memory conditions as syntax errors (a call becomes
 * MALFORMED_ARGUMENTS), and a pre-error whose message could not be copied
 * keeps its code with an empty message. */
static void check_degraded(const char *clean, const char *got, long n)
{
    const char *c = clean, *g = got;
    while (*c && *g) {
        const char *ce = strchr(c, '\n'), *ge = strchr(g, '\n');
        assert_non_null(ce);
        assert_non_null(ge);
        size_t cl = (size_t)(ce - c), gl = (size_t)(ge - g);
        int same = cl == gl && memcmp(c, g, cl) == 0;
        /* id|tool| must agree; then a malformed-arguments error or an empty
         * message is what a refused allocation may leave. */
        const char *gid = memchr(g, '|', gl);
        size_t head = gid ? (size_t)(gid - g) : gl;
        if (!same && !(head <= cl && memcmp(c, g, head) == 0 &&
                       (strstr(g, "|MALFORMED_ARGUMENTS|") < ge ||
                        (ge > g && ge[-1] == '|'))))
            fail_msg("allocation %ld: call differs:\n%.*s\nclean:\n%.*s", n,
                     (int)gl, g, (int)cl, c);
        c = ce + 1;
        g = ge + 1;
    }
    if (*c || *g)
        fail_msg("allocation %ld: other calls:\n%s\nclean:\n%s", n, got, clean);
}

static void failing_loop(const char *provider, const char *name)
{
    size_t len;
    char *text = load_case(provider, name, &len);
#ifndef TG_TEST_INTERPOSE
    json_set_alloc_funcs(json_malloc_counted, json_free_counted);
#endif
    char *clean = NULL;
    assert_int_equal(stream_operation(text, len, &clean), 0);
    A.count = A.live = 0;
    A.fail_at = 0;
    A.armed = 1;
    char *again = NULL;
    int rc = stream_operation(text, len, &again);
    A.armed = 0;
    assert_int_equal(rc, 0);
    free(again);
    long total = A.count, enomem = 0, completed = 0, eparse = 0;
    /* The description handed back is the one allocation left. */
    assert_int_equal(A.live, COUNTS_ALL);
    for (long n = 1; n <= total; n++) {
        A.count = A.live = 0;
        A.refused = 0;
        A.fail_at = n;
        A.armed = 1;
        char *got = NULL;
        rc = stream_operation(text, len, &got);
        A.armed = 0;
        if (A.live != (got != NULL ? COUNTS_ALL : 0))
            fail_msg("%s/%s: refusing allocation %ld of %ld leaks %ld (rc %s)",
                     provider, name, n, total, A.live, tg_err_name(rc));
        assert_true(A.refused);
        if (rc == 0) {
            check_degraded(clean, got, n);
            completed++;
        } else if (rc == TG_ENOMEM)
            enomem++;
        else if (rc == TG_EPARSE)
            eparse++; /* jansson's lexer calls some failures syntax errors */
        else
            fail_msg("%s/%s: refusing allocation %ld gave %s", provider, name,
                     n, tg_err_name(rc));
        free(got);
    }
    print_message("[ alloc    ] %s/%s: %ld allocations; refused one at a "
                  "time: %ld ENOMEM, %ld EPARSE, %ld completed\n",
                  provider, name, total, enomem, eparse, completed);
    assert_true(enomem > 0);
#ifndef TG_TEST_INTERPOSE
    json_set_alloc_funcs(malloc, free);
#endif
    free(clean);
    free(text);
}

static void test_failing_allocations(void **state)
{
    (void)state;
    failing_loop("anthropic", "truncated_args");
    /* Under ASan only jansson's allocations can be refused: one stream
     * covers them; with every allocation counted, each provider, and calls
     * written at once (completing out of order, cut while open). */
    if (COUNTS_ALL) {
        failing_loop("openai-chat", "truncated_args");
        failing_loop("openai-responses", "normal");
        failing_loop("gemini", "parallel");
        failing_loop("anthropic", "interleaved");
        failing_loop("openai-chat", "interleaved_cut");
    }
}

int main(void)
{
    (void)providers;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_openai_chat_streams),
        cmocka_unit_test(test_openai_responses_streams),
        cmocka_unit_test(test_anthropic_streams),
        cmocka_unit_test(test_gemini_streams),
        cmocka_unit_test(test_calls_come_out_when_their_arguments_close),
        cmocka_unit_test(test_truncated_arguments_message),
        cmocka_unit_test(test_chat_ids),
        cmocka_unit_test(test_calls_in_any_order),
        cmocka_unit_test(test_chat_early_and_late),
        cmocka_unit_test(test_late_pieces),
        cmocka_unit_test(test_end_of_stream),
        cmocka_unit_test(test_nothing_read),
        cmocka_unit_test(test_missing_blank_lines),
        cmocka_unit_test(test_responses_details),
        cmocka_unit_test(test_anthropic_details),
        cmocka_unit_test(test_gemini_ids),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_turn_parse_routing),
        cmocka_unit_test(test_failing_allocations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
