/* SPDX-License-Identifier: MIT */
/*
 * test_format_golden.c - golden files for every wire format:
 * tests/data/formats/<format>/<case>/ holds
 *   input           a model turn as a provider (or toolgate) sends it
 *   calls.expected  the parsed calls, one call record per line
 * (docs/records.md), plus "pre_error":{"code","message"} for a call that ends
 *                   without running and "checksum_in" for a checksum the call
 *                   arrived with
 *   expected        the rendered results in the same format
 * The input is parsed twice, with "auto" (which must detect <format>) and
 * with the format named; both must give calls.expected. Every fast path
 * that takes the input must agree with the document path, and the results
 * must render into every other format with every id carried unchanged and
 * survive a round trip through toolgate's call and result records.
 *
 * Results are made up deterministically, so every renderer path is covered:
 * a call with a pre-error gets that error (not_started); otherwise, by index
 * modulo 4: 0 success {"ok":INDEX}, 1 success with a string payload holding
 * a newline, quotes, a backslash and a tab, 2 error UNKNOWN_TOOL, 3 timeout
 * after 1000 ms. A case may instead list its results in a file `results`:
 * JSON Lines, line i the result record (docs/records.md: outcome, payload,
 * content, ...) of call i, with id and tool taken from the call, for the
 * outcomes and content blocks the rule above does not reach (a call with a
 * pre-error still gets that error; its line is ignored).
 *
 * Time-dependent fields (created_at, updated_at, completed_at) are compared
 * only when the expected line has them. TG_GOLDEN_UPDATE=1 rewrites the
 * expected files from the actual output (review the diff before committing).
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
#include "tg_test.h"
#include "record.h"
#include "turn.h"

static const char *const volatile_keys[] = {"created_at", "updated_at",
                                            "completed_at"};

/* out = a/b; fails the test when it does not fit. */
static void join(char *out, size_t size, const char *a, const char *b)
{
    if (snprintf(out, size, "%s/%s", a, b) >= (int)size)
        fail_msg("path too long: %s/%s", a, b);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The parsed calls as golden lines. */
static char *calls_lines(const tg_turn *turn)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    for (size_t i = 0; i < turn->n; i++) {
        const tg_call *c = turn->calls[i];
        json_t *o = tg__call_to_json(c); /* new ref */
        assert_non_null(o);
        if (c->pre_error_code != NULL)
            json_object_set_new(
                o, "pre_error",
                json_pack("{s:s, s:s}", "code", c->pre_error_code, "message",
                          c->pre_error_message ? c->pre_error_message : ""));
        if (c->checksum_in != NULL)
            json_object_set_new(o, "checksum_in", json_string(c->checksum_in));
        assert_int_equal(tg__json_dump(o, &b), 0);
        tg__buf_append(&b, "\n", 1);
        json_decref(o);
    }
    return tg__buf_take(&b);
}

static json_t *load_lines(const char *text);

/* The results of the case's `results` file, when it has one. */
static int given_results(tg_turn *turn, const char *dir)
{
    char path[4096];
    join(path, sizeof path, dir, "results");
    char *text = tg_test_read_file(path, NULL);
    if (text == NULL)
        return 0;
    json_t *lines = load_lines(text); /* new ref */
    free(text);
    if (json_array_size(lines) != turn->n)
        fail_msg("%s has %zu lines for %zu calls", path, json_array_size(lines),
                 turn->n);
    for (size_t i = 0; i < turn->n; i++) {
        const tg_call *c = turn->calls[i];
        if (c->pre_error_code != NULL) {
            tg_result *r =
                tg__result_error(c, TG_EXECUTION_NOT_STARTED, c->pre_error_code,
                                 NULL, "%s", c->pre_error_message);
            assert_int_equal(tg__turn_set_result(turn, i, r), 0);
            continue;
        }
        json_t *rec = json_deep_copy(json_array_get(lines, i)); /* new ref */
        assert_true(json_is_object(rec));
        json_object_set_new(rec, "id", json_string(turn->calls[i]->id));
        json_object_set_new(rec, "tool", json_string(turn->calls[i]->tool));
        tg_result *r = NULL;
        tg_error err;
        if (tg__result_from_json(rec, &r, &err) != 0)
            fail_msg("%s line %zu: %s", path, i + 1, err.message);
        assert_int_equal(tg__turn_set_result(turn, i, r), 0);
        json_decref(rec);
    }
    json_decref(lines);
    return 1;
}

static void give_results(tg_turn *turn, const char *dir)
{
    if (given_results(turn, dir))
        return;
    for (size_t i = 0; i < turn->n; i++) {
        const tg_call *c = turn->calls[i];
        tg_result *r;
        if (c->pre_error_code != NULL)
            r = tg__result_error(c, TG_EXECUTION_NOT_STARTED, c->pre_error_code,
                                 NULL, "%s", c->pre_error_message);
        else if (i % 4 == 0)
            r = tg__result_success(c, json_pack("{s:I}", "ok", (json_int_t)i));
        else if (i % 4 == 1) {
            char text[256];
            snprintf(text, sizeof text,
                     "output of %s #%zu:\n\"quoted\" back\\slash\ttab", c->tool,
                     i);
            r = tg__result_success(c, json_string(text));
        } else if (i % 4 == 2)
            r = tg__result_error(c, TG_EXECUTION_NOT_STARTED, "UNKNOWN_TOOL",
                                 NULL, "unknown tool '%s'", c->tool);
        else
            r = tg__result_timeout(c, 1000);
        assert_non_null(r);
        assert_int_equal(tg__turn_set_result(turn, i, r), 0);
    }
}

/* Removes the volatile keys that `expected` (an object or NULL) lacks from
 * actual, and from both when `all` is set. */
static void drop_volatile(json_t *actual, json_t *expected, int all)
{
    for (size_t k = 0; k < sizeof volatile_keys / sizeof volatile_keys[0];
         k++) {
        if (all && json_is_object(expected))
            json_object_del(expected, volatile_keys[k]);
        if (json_is_object(actual) &&
            json_object_get(expected, volatile_keys[k]) == NULL)
            json_object_del(actual, volatile_keys[k]);
    }
}

/* Same for a line that is an object or an array of objects. */
static void drop_volatile_line(json_t *actual, json_t *expected, int all)
{
    drop_volatile(actual, expected, all);
    if (json_is_array(actual))
        for (size_t j = 0; j < json_array_size(actual); j++)
            drop_volatile(json_array_get(actual, j),
                          json_array_get(expected, j), all);
}

static json_t *load_lines(const char *text)
{
    json_t *arr = json_array(); /* new ref */
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n > 0) {
            json_error_t jerr;
            json_t *v = json_loadb(p, n, JSON_DECODE_ANY, &jerr); /* new ref */
            if (v == NULL)
                fail_msg("golden line is not JSON: %s: %.*s", jerr.text, (int)n,
                         p);
            json_array_append_new(arr, v);
        }
        p += n + (nl != NULL);
    }
    return arr;
}

/* Compares JSON Lines texts line by line as JSON values. */
static void compare_lines(const char *what, const char *expected,
                          const char *actual, int ignore_volatile)
{
    json_t *e = load_lines(expected); /* new ref */
    json_t *a = load_lines(actual);   /* new ref */
    int same = json_array_size(e) == json_array_size(a);
    for (size_t i = 0; same && i < json_array_size(a); i++) {
        json_t *ai = json_array_get(a, i); /* borrowed */
        json_t *ei = json_array_get(e, i); /* borrowed */
        drop_volatile_line(ai, ei, ignore_volatile);
        same = json_equal(ai, ei);
        if (!same)
            print_error("%s: line %zu differs\n", what, i + 1);
    }
    json_decref(e);
    json_decref(a);
    if (!same)
        fail_msg("%s differs.\n--- expected\n%s--- actual\n%s", what, expected,
                 actual);
}

/* The text with every volatile key removed, as written by an update. */
static char *stable_text(const char *text)
{
    json_t *lines = load_lines(text); /* new ref */
    tg__buf b;
    tg__buf_init(&b, 0);
    for (size_t i = 0; i < json_array_size(lines); i++) {
        json_t *line = json_array_get(lines, i); /* borrowed */
        drop_volatile_line(line, NULL, 0);
        tg__json_dump(line, &b);
        tg__buf_append(&b, "\n", 1);
    }
    json_decref(lines);
    return tg__buf_take(&b);
}

static void check_golden(const char *dir, const char *file, const char *actual)
{
    char path[4096];
    join(path, sizeof path, dir, file);
    const char *update = getenv("TG_GOLDEN_UPDATE");
    if (update != NULL && strcmp(update, "1") == 0) {
        char *stable = stable_text(actual);
        write_file(path, stable);
        free(stable);
        return;
    }
    char *expected = tg_test_read_file(path, NULL);
    if (expected == NULL)
        fail_msg("missing golden file %s", path);
    compare_lines(path, expected, actual, 0);
    free(expected);
}

/* Every format, for the cross-format checks below. */
static const char *const all_formats[] = {
    "openai-chat",      "toolgate", "anthropic", "gemini",
    "openai-responses", "mcp",      "fenced"};
#define NALL (sizeof all_formats / sizeof all_formats[0])
/* How many golden inputs each format's fast path took (see below). */
static size_t fast_taken[NALL];

/* The calls' golden lines with their meta (the extras renderers read). */
static char *calls_and_meta(const tg_turn *turn)
{
    char *lines = calls_lines(turn);
    tg__buf b;
    tg__buf_init(&b, 0);
    tg__buf_append(&b, lines, strlen(lines));
    for (size_t i = 0; i < turn->n; i++) {
        if (tg__call_meta(turn->calls[i]) != NULL)
            tg__json_dump(tg__call_meta(turn->calls[i]), &b);
        else
            tg__buf_append(&b, "{}", 2);
        tg__buf_append(&b, "\n", 1);
    }
    free(lines);
    return tg__buf_take(&b);
}

/* A fast path that takes an input must agree with the document path: the
 * highest detection score is its format's, and the calls are the same. */
static void check_fast_paths(const char *path, const char *input, size_t len)
{
    for (size_t k = 0; k < NALL; k++) {
        const tg__format *f = tg__format_find(all_formats[k]);
        assert_non_null(f);
        if (f->parse_fast == NULL)
            continue;
        tg_turn *fast = tg__turn_new(f->name);
        int rc = f->parse_fast(fast, input, len);
        assert_true(rc == 0 || rc == 1);
        if (rc == 0) {
            tg_turn_free(fast);
            continue;
        }
        fast_taken[k]++;
        json_error_t jerr;
        json_t *doc = json_loadb(input, len, JSON_DECODE_ANY, &jerr);
        if (doc == NULL)
            fail_msg("%s: the %s fast path took what is not JSON", path,
                     f->name);
        int score = f->detect(doc);
        for (size_t j = 0; j < NALL; j++) {
            const tg__format *g = tg__format_find(all_formats[j]);
            if (g != f && g->detect != NULL && g->detect(doc) >= score)
                fail_msg("%s: the %s fast path took a document %s detects "
                         "as well",
                         path, f->name, g->name);
        }
        tg_turn *slow = tg__turn_new(f->name);
        tg_error err;
        if (f->parse(slow, doc, &err) != 0)
            fail_msg("%s: %s fast path took what its parser refuses: %s", path,
                     f->name, err.message);
        tg__turn_mark_duplicates(fast);
        tg__turn_mark_duplicates(slow);
        char *a = calls_and_meta(fast), *b = calls_and_meta(slow);
        compare_lines("fast path vs document path", b, a, 1);
        free(a);
        free(b);
        json_decref(doc);
        tg_turn_free(fast);
        tg_turn_free(slow);
    }
}

/* The call ids a rendering answers, in order, read back with each format's
 * own field (an MCP id of any JSON type as its string form); a Gemini
 * response without an id (the call's id was generated) gives "#NAME". */
static json_t *answered_ids(const char *format, const char *out)
{
    json_t *lines = load_lines(out); /* new ref */
    json_t *ids = json_array();      /* new ref */
    json_t *items = json_array();    /* new ref */
    for (size_t i = 0; i < json_array_size(lines); i++) {
        json_t *line = json_array_get(lines, i); /* borrowed */
        if (json_is_array(line))
            json_array_extend(items, line);
        else
            json_array_append(items, line);
    }
    for (size_t i = 0; i < json_array_size(items); i++) {
        json_t *it = json_array_get(items, i); /* borrowed */
        json_t *id = NULL;                     /* borrowed */
        if (strcmp(format, "openai-chat") == 0)
            id = json_object_get(it, "tool_call_id");
        else if (strcmp(format, "openai-responses") == 0)
            id = json_object_get(it, "call_id");
        else if (strcmp(format, "toolgate") == 0)
            id = json_object_get(it, "id");
        else if (strcmp(format, "mcp") == 0) {
            id = json_object_get(it, "id");
            if (json_is_integer(id)) {
                char num[32];
                snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT,
                         json_integer_value(id));
                json_array_append_new(ids, json_string(num));
                continue;
            }
        } else {
            json_t *blocks = json_object_get(
                it, strcmp(format, "anthropic") == 0 ? "content" : "parts");
            for (size_t j = 0; j < json_array_size(blocks); j++) {
                json_t *b = json_array_get(blocks, j); /* borrowed */
                json_t *fr = json_object_get(b, "functionResponse");
                json_t *bid = json_object_get(
                    fr ? fr : b, fr ? "id" : "tool_use_id"); /* borrowed */
                if (bid == NULL && fr != NULL) {
                    char name[512];
                    snprintf(name, sizeof name, "#%s",
                             json_string_value(json_object_get(fr, "name")));
                    json_array_append_new(ids, json_string(name));
                } else
                    json_array_append(ids, bid);
            }
            continue;
        }
        if (id != NULL)
            json_array_append(ids, id);
    }
    json_decref(items);
    json_decref(lines);
    return ids;
}

/* The ids a rendering into `format` must answer: every call's, in order,
 * except MCP notifications and requests whose id could not be read (MCP
 * answers neither with an id); Gemini leaves out ids it generated. */
static json_t *expected_ids(const tg_turn *turn, const char *format)
{
    json_t *ids = json_array(); /* new ref */
    for (size_t i = 0; i < turn->n; i++) {
        const tg_call *c = turn->calls[i];
        const json_t *meta = tg__call_meta(c); /* borrowed */
        if (strcmp(format, "mcp") == 0 &&
            (json_is_true(json_object_get(meta, "notification")) ||
             (strcmp(turn->format, "mcp") == 0 &&
              json_object_get(meta, "jsonrpc_id") == NULL)))
            continue;
        if (strcmp(format, "gemini") == 0 &&
            json_is_true(json_object_get(meta, "id_generated"))) {
            char name[512];
            snprintf(name, sizeof name, "#%s", c->tool);
            json_array_append_new(ids, json_string(name));
            continue;
        }
        json_array_append_new(ids, json_string(c->id));
    }
    return ids;
}

/* Cross-format: the results of a turn in any format render into every
 * other, carrying every id unchanged. And records survive toolgate's own
 * format: the calls written as call records read back as the same calls,
 * and the results written as result records read back into results that
 * render exactly as the originals do. */
static void check_cross_format(const char *path, const tg_turn *turn,
                               const char *rendered)
{
    tg_error err;
    for (size_t k = 0; k < NALL; k++) {
        if (!tg_format_renders(all_formats[k]))
            continue;
        char *other = NULL;
        assert_int_equal(
            tg_turn_render(turn, all_formats[k], &other, NULL, &err), 0);
        json_t *got = answered_ids(all_formats[k], other); /* new ref */
        json_t *want = expected_ids(turn, all_formats[k]); /* new ref */
        if (!json_equal(got, want)) {
            char *g = json_dumps(got, JSON_COMPACT);
            char *w = json_dumps(want, JSON_COMPACT);
            fail_msg("%s rendered as %s answers %s, expected %s", path,
                     all_formats[k], g, w);
        }
        json_decref(got);
        json_decref(want);
        tg_free(other);
    }
    if (rendered == NULL)
        return; /* an input-only format */

    tg__buf calls;
    tg__buf_init(&calls, 0);
    for (size_t i = 0; i < turn->n; i++) {
        char *rec = tg_call_to_json(turn->calls[i]);
        tg__buf_append(&calls, rec, strlen(rec));
        tg__buf_append(&calls, "\n", 1);
        tg_free(rec);
    }
    tg_turn *again = NULL;
    if (turn->n > 0) {
        if (tg_turn_parse(calls.data, calls.len, "toolgate", path, &again,
                          &err) != 0)
            fail_msg("%s: call records do not read back: %s", path,
                     err.message);
        assert_int_equal(again->n, turn->n);
        for (size_t i = 0; i < turn->n; i++) {
            const tg_call *a = turn->calls[i], *b = again->calls[i];
            assert_string_equal(a->id, b->id);
            assert_string_equal(a->tool, b->tool);
            if (a->pre_error_code == NULL) {
                /* Same value and checksum; the spelling may differ. */
                assert_true(json_equal(tg__call_args(a), tg__call_args(b)));
                assert_string_equal(tg_call_checksum(a), tg_call_checksum(b));
            }
        }
        tg_turn_free(again);
    }
    tg__buf_cleanup(&calls);

    /* The same calls with results read back from result records. */
    char *records = NULL;
    assert_int_equal(tg_turn_render(turn, "toolgate", &records, NULL, &err), 0);
    json_t *lines = load_lines(records); /* new ref */
    assert_int_equal(json_array_size(lines), turn->n);
    tg_turn *copy = tg__turn_new(turn->format);
    for (size_t i = 0; i < turn->n; i++) {
        tg_call *c = tg__call_new(turn->calls[i]->id, turn->calls[i]->tool,
                                  turn->calls[i]->format);
        assert_int_equal(tg__call_copy_args(c, turn->calls[i]), 0);
        if (tg__call_meta(turn->calls[i]) != NULL)
            c->meta = json_deep_copy(tg__call_meta(turn->calls[i]));
        assert_int_equal(tg__turn_add_call(copy, c), 0);
        tg_result *r = NULL;
        if (tg__result_from_json(json_array_get(lines, i), &r, &err) != 0)
            fail_msg("%s: result record %zu does not read back: %s", path, i,
                     err.message);
        assert_int_equal(tg__turn_set_result(copy, i, r), 0);
    }
    char *again_out = NULL;
    assert_int_equal(tg_turn_render(copy, NULL, &again_out, NULL, &err), 0);
    if (strcmp(again_out, rendered) != 0)
        fail_msg("%s: results read back from records render differently:\n"
                 "%s\nvs\n%s",
                 path, again_out, rendered);
    tg_free(again_out);
    tg_turn_free(copy);
    json_decref(lines);
    tg_free(records);
}

static void run_case(const char *format, const char *dir)
{
    char path[4096];
    size_t len;
    join(path, sizeof path, dir, "input");
    char *input = tg_test_read_file(path, &len);
    if (input == NULL)
        fail_msg("cannot read %s", path);

    tg_error err;
    tg_turn *auto_turn = NULL, *turn = NULL;
    const tg__format *fmt = tg__format_find(format);
    assert_non_null(fmt);
    int rc;
    /* Formats without detection (fenced) are read only when named. */
    if (fmt->detect != NULL) {
        rc = tg_turn_parse(input, len, "auto", path, &auto_turn, &err);
        if (rc != 0)
            fail_msg("%s: auto parse failed: %s", path, err.message);
        assert_string_equal(tg_turn_format(auto_turn), format);
    }
    rc = tg_turn_parse(input, len, format, path, &turn, &err);
    if (rc != 0)
        fail_msg("%s: %s parse failed: %s", path, format, err.message);
    assert_string_equal(tg_turn_format(turn), format);

    check_fast_paths(path, input, len);

    char *auto_calls = auto_turn ? calls_lines(auto_turn) : NULL;
    char *calls = calls_lines(turn);
    /* Only the created_at timestamps may differ between the two parses. */
    if (auto_calls != NULL)
        compare_lines("auto vs explicit", calls, auto_calls, 1);
    check_golden(dir, "calls.expected", calls);
    for (size_t i = 0; i < tg_turn_call_count(turn); i++)
        assert_string_equal(tg_call_format(tg_turn_call(turn, i)), format);

    give_results(turn, dir);
    char *out = NULL;
    size_t out_len = 0;
    rc = tg_turn_render(turn, NULL, &out, &out_len, &err);
    if (fmt->render == NULL) {
        /* Input-only formats refuse to render and say what to do. */
        assert_int_equal(rc, TG_EFORMAT);
        assert_null(out);
        assert_non_null(strstr(err.message, "is an input format"));
    } else {
        if (rc != 0)
            fail_msg("%s: render failed: %s", path, err.message);
        assert_int_equal(strlen(out), out_len);
        if (out_len > 0)
            assert_int_equal(out[out_len - 1], '\n');
        check_golden(dir, "expected", out);
    }
    check_cross_format(path, turn, fmt->render ? out : NULL);

    tg_free(out);
    free(auto_calls);
    free(calls);
    tg_turn_free(turn);
    tg_turn_free(auto_turn);
    free(input);
}

/* Sorted names of the subdirectories of dir; count in *n. */
static char **subdirs(const char *dir, size_t *n)
{
    char **names = tg_test_list_dir(dir, NULL, n);
    if (names == NULL)
        fail_msg("cannot open %s", dir);
    return names;
}

static void run_format(const char *format, const char *const *required,
                       size_t nrequired)
{
    char root[4096], dir[4096];
    tg_test_source_path(root, sizeof root, "tests/data/formats");
    join(dir, sizeof dir, root, format);
    size_t n;
    char **cases = subdirs(dir, &n);
    for (size_t r = 0; r < nrequired; r++) {
        int found = 0;
        for (size_t i = 0; i < n; i++)
            found |= strcmp(cases[i], required[r]) == 0;
        if (!found)
            fail_msg("golden case %s/%s is missing", format, required[r]);
    }
    for (size_t i = 0; i < n; i++) {
        char casedir[4096];
        join(casedir, sizeof casedir, dir, cases[i]);
        print_message("[ golden   ] %s/%s\n", format, cases[i]);
        run_case(format, casedir);
        free(cases[i]);
    }
    free(cases);
}

static void test_openai_chat_golden(void **state)
{
    (void)state;
    static const char *const cases[] = {"response",
                                        "message",
                                        "messages_array_partially_answered",
                                        "string_and_object_args",
                                        "empty_string_args",
                                        "malformed_args",
                                        "no_tool_calls",
                                        "duplicate_ids",
                                        "mcp_content"};
    run_format("openai-chat", cases, sizeof cases / sizeof cases[0]);
}

static void test_toolgate_golden(void **state)
{
    (void)state;
    static const char *const cases[] = {"basic", "string_args",
                                        "with_checksum_and_context"};
    run_format("toolgate", cases, sizeof cases / sizeof cases[0]);
}

static void test_anthropic_golden(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "response",       "message",        "messages_array_partially_answered",
        "error_outcomes", "content_blocks", "duplicate_ids",
        "mcp_content"};
    run_format("anthropic", cases, sizeof cases / sizeof cases[0]);
}

static void test_gemini_golden(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "response",       "content", "messages_array_partially_answered",
        "error_outcomes", "no_id",   "duplicate_ids",
        "mcp_content"};
    run_format("gemini", cases, sizeof cases / sizeof cases[0]);
}

static void test_openai_responses_golden(void **state)
{
    (void)state;
    static const char *const cases[] = {"response",
                                        "items",
                                        "items_partially_answered",
                                        "malformed_calls",
                                        "no_function_calls",
                                        "error_outcomes",
                                        "duplicate_ids",
                                        "mcp_content"};
    run_format("openai-responses", cases, sizeof cases / sizeof cases[0]);
}

static void test_mcp_golden(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "request",           "numeric_id",        "batch",
        "error_outcomes",    "notification",      "batch_with_notifications",
        "all_notifications", "invalid_requests",  "method_not_found",
        "unknown_tool",      "no_jsonrpc_member", "mcp_content"};
    run_format("mcp", cases, sizeof cases / sizeof cases[0]);
}

static void test_fenced_golden(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "bash_and_python", "tool_call",      "unclosed", "tildes_and_indent",
        "json_string",     "message_object", "no_fences"};
    run_format("fenced", cases, sizeof cases / sizeof cases[0]);
}

/* Detection across formats: the input of every golden case of every format
 * directory is detected as that directory's format, so adding a format whose
 * shapes overlap another's fails here. */
static void test_every_input_detected_as_its_format(void **state)
{
    (void)state;
    char root[4096];
    tg_test_source_path(root, sizeof root, "tests/data/formats");
    size_t nformats;
    char **formats = subdirs(root, &nformats);
    for (size_t f = 0; f < nformats; f++) {
        char fdir[4096];
        join(fdir, sizeof fdir, root, formats[f]);
        /* Formats read only when named (fenced) have no detection. */
        const tg__format *fmt = tg__format_find(formats[f]);
        if (fmt != NULL && fmt->detect == NULL) {
            free(formats[f]);
            continue;
        }
        size_t ncases;
        char **cases = subdirs(fdir, &ncases);
        for (size_t i = 0; i < ncases; i++) {
            char cdir[4096], path[4096];
            size_t len;
            join(cdir, sizeof cdir, fdir, cases[i]);
            join(path, sizeof path, cdir, "input");
            char *input = tg_test_read_file(path, &len);
            if (input == NULL)
                fail_msg("cannot read %s", path);
            tg_turn *turn = NULL;
            tg_error err;
            if (tg_turn_parse(input, len, "auto", path, &turn, &err) != 0)
                fail_msg("%s: auto parse failed: %s", path, err.message);
            if (strcmp(tg_turn_format(turn), formats[f]) != 0)
                fail_msg("%s: detected as %s, expected %s", path,
                         tg_turn_format(turn), formats[f]);
            tg_turn_free(turn);
            free(input);
            free(cases[i]);
        }
        free(cases);
        free(formats[f]);
    }
    free(formats);
}

/* Runs last: every fast path read at least one golden input, so the
 * agreement check above covered it. */
static void test_every_fast_path_exercised(void **state)
{
    (void)state;
    for (size_t k = 0; k < NALL; k++) {
        const tg__format *f = tg__format_find(all_formats[k]);
        if (f->parse_fast != NULL && fast_taken[k] == 0)
            fail_msg("no golden input takes the %s fast path", f->name);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_openai_chat_golden),
        cmocka_unit_test(test_toolgate_golden),
        cmocka_unit_test(test_anthropic_golden),
        cmocka_unit_test(test_gemini_golden),
        cmocka_unit_test(test_openai_responses_golden),
        cmocka_unit_test(test_mcp_golden),
        cmocka_unit_test(test_fenced_golden),
        cmocka_unit_test(test_every_input_detected_as_its_format),
        cmocka_unit_test(test_every_fast_path_exercised),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
