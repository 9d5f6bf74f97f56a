/* SPDX-License-Identifier: MIT */
/*
 * bad_strings.c - model turns in which a call's arguments hold bytes no tool
 * gets: U+0000, an unpaired surrogate, bytes that are not UTF-8 (see
 * core/bad_bytes.h). jansson refuses the whole document for one such
 * string, and every call of the turn would go unanswered. Instead the text
 * is read again with the tape (TG_JTAPE_BAD_STRINGS), the formats parse it
 * as usual, the argument setters end each call whose arguments hold such a
 * string MALFORMED_ARGUMENTS (record.c, keeping that value in the call's
 * bad_args_src), and the document is refused after all, naming the place,
 * only when such a string is anywhere else: an id, a tool name, a type, a
 * role - text the parser reads as C strings, where U+0000 would cut it
 * short. Streamed events are checked against where each provider's events
 * carry arguments, since their calls take their arguments later.
 */
#include "format.h"

#include <stdlib.h>
#include <string.h>

#include "bad_bytes.h"
#include "error.h"
#include "json_fast.h"
#include "jtape.h"

json_t *tg__format_load(const char *text, size_t len, json_error_t *jerr,
                        bool *bad)
{
    *bad = false;
    json_t *doc = tg__json_fast_load(text, len, 0); /* new ref */
    if (doc != NULL)
        return doc;
    doc = json_loadb(text, len, JSON_DECODE_ANY, jerr);
    if (doc != NULL || tg__format_json_oom(jerr))
        return doc;
    /* Refused: read it again, taking bad strings. When it still does not
     * parse, jansson's error stands. */
    tg__jtape tape;
    int rc = tg__jtape_parse(
        text, len, TG_JTAPE_BAD_STRINGS | TG_JTAPE_DUPLICATE_KEYS, &tape, NULL);
    if (rc == TG_ENOMEM) {
        jerr->text[0] = '\0'; /* tg__format_json_oom */
        return NULL;
    }
    if (rc != 0)
        return NULL;
    for (size_t i = 0; i < tape.n && !*bad; i++)
        *bad = (tape.tok[i].flags & TG_JT_BAD) != 0;
    if (*bad && (doc = tg__jtape_to_json(&tape, 0)) == NULL)
        jerr->text[0] = '\0';
    tg__jtape_free(&tape);
    if (doc == NULL)
        *bad = false;
    return doc;
}

int tg__format_bad_strings_error(tg_error *err, const char *prefix,
                                 const char *where, const char *what)
{
    return tg__error_set(err, TG_EPARSE,
                         "%s%s%s holds %s, outside any call's arguments; only "
                         "a call's arguments may hold bytes no tool gets "
                         "(that call alone then fails)",
                         prefix ? prefix : "", prefix ? ": " : "", where, what);
}

/* ------------------------------------------------------- whole documents */

static int cmp_ptr(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    return x < y ? -1 : x > y;
}

typedef struct arg_values {
    const json_t **v; /* sorted */
    size_t n;
} arg_values;

/* Passes over the arguments values of calls that held bad strings. */
static int in_arguments(const json_t *node, const tg__jseg *path, size_t depth,
                        void *ctx)
{
    const arg_values *a = ctx;
    (void)path;
    (void)depth;
    return a->n > 0 &&
           bsearch(&node, a->v, a->n, sizeof *a->v, cmp_ptr) != NULL;
}

int tg__format_bad_strings_placed(const json_t *doc, tg_turn *turn, size_t from,
                                  tg__buf *where, char *what)
{
    arg_values a = {NULL, 0};
    int rc = 0;
    if (turn->n > from &&
        (a.v = malloc((turn->n - from) * sizeof *a.v)) == NULL)
        rc = TG_ENOMEM;
    for (size_t i = from; i < turn->n; i++) {
        tg_call *call = turn->calls[i];
        if (a.v != NULL && call->bad_args_src != NULL)
            a.v[a.n++] = call->bad_args_src;
    }
    if (rc == 0) {
        if (a.n > 1)
            qsort(a.v, a.n, sizeof *a.v, cmp_ptr);
        rc = tg__bad_bytes_find(doc, in_arguments, &a, where, what);
    }
    free(a.v);
    /* The check was what they were kept for. */
    for (size_t i = from; i < turn->n; i++) {
        json_decref(turn->calls[i]->bad_args_src);
        turn->calls[i]->bad_args_src = NULL;
    }
    return rc;
}

/* ------------------------------------------------------- streamed events */

/* Where the providers' events carry arguments, as their readers
 * (stream_<provider>.c) take them: "*" is any array index; `whole`: the
 * value there and everything in it, else only a string there. */
static const struct {
    const char *path;
    bool whole;
} stream_args[] = {
    /* Chat Completions: a piece, or a proxy's object */
    {"/choices/*/delta/tool_calls/*/function/arguments", true},
    /* Responses: a piece, the whole string at .done, the item's */
    {"/delta", false},
    {"/arguments", false},
    {"/item/arguments", true},
    /* Anthropic: a piece, the input a block starts with */
    {"/delta/partial_json", false},
    {"/content_block/input", true},
    /* Gemini: the arguments of a call, whole in its event */
    {"/candidates/*/content/parts/*/functionCall/args", true},
};

/* Whether path[0..depth) is the pattern p. */
static bool path_is(const char *p, const tg__jseg *path, size_t depth)
{
    size_t d = 0;
    while (*p == '/' && d < depth) {
        p++;
        size_t n = strcspn(p, "/");
        if (n == 1 && p[0] == '*') {
            if (path[d].key != NULL)
                return false;
        } else if (path[d].key == NULL || path[d].klen != n ||
                   memcmp(path[d].key, p, n) != 0)
            return false;
        p += n;
        d++;
    }
    return *p == '\0' && d == depth;
}

static int at_stream_arguments(const json_t *node, const tg__jseg *path,
                               size_t depth, void *ctx)
{
    (void)ctx;
    for (size_t i = 0; i < sizeof stream_args / sizeof stream_args[0]; i++)
        if ((stream_args[i].whole || json_is_string(node)) &&
            path_is(stream_args[i].path, path, depth))
            return 1;
    return 0;
}

int tg__format_stream_bad_strings(const json_t *event,
                                  unsigned long long number,
                                  unsigned long long line, tg_error *err)
{
    char what[TG_BAD_WHAT_MAX];
    tg__buf where;
    tg__buf_init(&where, 0);
    int rc = tg__bad_bytes_find(event, at_stream_arguments, NULL, &where, what);
    if (rc == 1)
        rc = tg__error_at(err, TG_EPARSE, (long)line, 0,
                          "event %llu (ending on line %llu) of the stream: %s "
                          "holds %s, outside the arguments of any call; only "
                          "a call's arguments may hold bytes no tool gets "
                          "(that call alone then fails)",
                          number, line, tg__buf_cstr(&where), what);
    else if (rc != 0)
        rc = tg__error_set(err, TG_ENOMEM, "out of memory reading the stream");
    tg__buf_cleanup(&where);
    return rc;
}
