/* SPDX-License-Identifier: MIT */
/*
 * stream_openai_chat.c - the Chat Completions stream (stream_core.h): each
 * event a chat.completion.chunk whose choices[0].delta.tool_calls[j] is a
 * piece of the call at tool call index k ("index", else its position j):
 * id, type and name arrive once, the arguments string in pieces. Pieces of
 * several calls may come in any order; each joins its own call.
 *
 * Nothing in this stream ends one call, so a call completes only when the
 * stream says every call is done - a finish_reason, or data: [DONE] (read
 * by the core) - or when its index is taken by a call with another id (some
 * servers number every call 0). A higher index starting proves nothing: a
 * server may go back to an earlier call.
 */
#include "stream_core.h"

#include <string.h>

/* ------------------------------------------------------------ the calls */

static int build(const tg__stream_args *a, tg_call **out)
{
    const tg__pending *p = a->p;
    tg__chat_wire w = {
        .pos = p->key >= 0 ? (size_t)p->key : a->s->turn->n,
        .id = p->id,
        .type = p->type,
        .name = p->name,
        .set_args = tg__stream_string_args,
        .args = a,
    };
    return tg__openai_chat_call(&w, out);
}

/* One tool_calls[j] piece of a delta for index k: id, type and name as
 * sent (NULL when not), the arguments piece as a string (args, n) or, when
 * a proxy sent it whole, as a value (args_value). */
static int piece(tg_stream *s, long long k, const char *id, const char *type,
                 const char *name, const char *args, size_t n,
                 const json_t *args_value)
{
    int rc;
    if (id != NULL && *id == '\0')
        id = NULL;
    tg__pending *p = tg__stream_find(s, k);
    /* An index taken by a new id: some servers number every call 0. The
     * old call is complete. */
    if (p != NULL && id != NULL && p->id != NULL && strcmp(p->id, id) != 0) {
        if ((rc = tg__stream_complete(s, p)) != 0)
            return rc;
        p = NULL;
    }
    if (p == NULL && (p = tg__stream_open(s, k)) == NULL)
        return TG_ENOMEM;
    if (tg__stream_set_once(&p->id, id) != 0 ||
        tg__stream_set_once(&p->type, type) != 0 ||
        tg__stream_set_once(&p->name, name) != 0)
        return TG_ENOMEM;
    if (args != NULL)
        return tg__stream_add_args(p, args, n);
    if (args_value != NULL && !json_is_null(args_value) && p->input == NULL &&
        !p->has_args)
        p->input = json_incref((json_t *)args_value);
    return 0;
}

/* Only the first choice is the turn (n > 1 aside). */
static int turn_choice(long long ci, size_t c)
{
    return ci == 0 || (ci == TG__NO_KEY && c == 0);
}

static int event(tg_stream *s, const json_t *doc)
{
    const json_t *choices = json_object_get(doc, "choices"); /* borrowed */
    size_t n = json_array_size(choices);
    int rc;
    for (size_t c = 0; c < n; c++) {
        const json_t *ch = json_array_get(choices, c); /* borrowed */
        if (!turn_choice(tg__stream_int(ch, "index"), c))
            continue;
        const json_t *tcs =
            json_object_get(json_object_get(ch, "delta"), "tool_calls");
        for (size_t j = 0; j < json_array_size(tcs); j++) {
            const json_t *tc = json_array_get(tcs, j); /* borrowed */
            if (!json_is_object(tc))
                continue;
            long long k = tg__stream_int(tc, "index");
            const json_t *fn = json_object_get(tc, "function"); /* borrowed */
            const json_t *args = json_object_get(fn, "arguments"); /* b. */
            rc = piece(s, k == TG__NO_KEY ? (long long)j : k,
                       tg__stream_str(tc, "id"), tg__stream_str(tc, "type"),
                       tg__stream_str(fn, "name"), json_string_value(args),
                       json_string_length(args), args);
            if (rc != 0)
                return rc;
        }
        const json_t *fr = json_object_get(ch, "finish_reason"); /* b. */
        if (fr != NULL && !json_is_null(fr) &&
            (rc = tg__stream_complete_all(s)) != 0)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------ fast path */

#define FAST_MAX 8 /* tool call pieces one chunk may hold on the fast path */

typedef struct fast_tc {
    long long k; /* tool call index; TG__NO_KEY: a finish_reason marker */
    tg__span id, type, name, args;
} fast_tc;

/* tool_calls[j]: {index, id, type, function: {name, arguments}}. */
static int fast_tool_call(tg_stream *s, fast_tc *tc, size_t j)
{
    const char *k;
    size_t kn;
    int first = 1, m, rc = 0, seen_index = 0, seen_fn = 0, is_obj;
    memset(tc, 0, sizeof *tc);
    if (tg__jcur_take(&s->cur, '{') != 0)
        return TG__FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(&s->cur, &first, &k, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(k, kn, "index"))
            rc = tg__stream_fast_uint(s, &tc->k, &seen_index);
        else if (TG_JCUR_KEY_IS(k, kn, "id"))
            rc = tg__stream_fast_str(s, &tc->id);
        else if (TG_JCUR_KEY_IS(k, kn, "type"))
            rc = tg__stream_fast_str(s, &tc->type);
        else if (TG_JCUR_KEY_IS(k, kn, "function")) {
            rc = tg__stream_fast_object_or_null(s, &seen_fn, &is_obj);
            if (rc != 0 || !is_obj)
                continue;
            int ffirst = 1, fm;
            while (rc == 0 &&
                   (fm = tg__jcur_member(&s->cur, &ffirst, &k, &kn)) == 1) {
                if (TG_JCUR_KEY_IS(k, kn, "name"))
                    rc = tg__stream_fast_str(s, &tc->name);
                else if (TG_JCUR_KEY_IS(k, kn, "arguments")) {
                    int ch = tg__jcur_peek(&s->cur);
                    /* Arguments sent whole as an object: the document
                     * path keeps the value. */
                    rc = ch == '"' || ch == 'n'
                             ? tg__stream_fast_str(s, &tc->args)
                             : TG__FAST_BAIL;
                } else
                    rc = tg__stream_fast_skip(s);
            }
            if (rc == 0 && fm != 0)
                rc = TG__FAST_BAIL;
        } else
            rc = tg__stream_fast_skip(s);
    }
    if (rc != 0)
        return rc;
    if (m != 0)
        return TG__FAST_BAIL;
    if (!seen_index)
        tc->k = (long long)j;
    return 0;
}

/* choices[c].delta: only tool_calls matter. */
static int fast_delta(tg_stream *s, fast_tc *tcs, size_t *n)
{
    const char *k;
    size_t kn;
    int first = 1, m, rc = 0, seen = 0;
    while (rc == 0 && (m = tg__jcur_member(&s->cur, &first, &k, &kn)) == 1) {
        if (!TG_JCUR_KEY_IS(k, kn, "tool_calls")) {
            rc = tg__stream_fast_skip(s);
            continue;
        }
        if (seen++)
            return TG__FAST_BAIL;
        if (tg__jcur_peek(&s->cur) == 'n') {
            rc = tg__stream_fast_skip(s);
            continue;
        }
        if (tg__jcur_take(&s->cur, '[') != 0)
            return TG__FAST_BAIL;
        int efirst = 1, e;
        size_t j = 0;
        while (rc == 0 && (e = tg__jcur_element(&s->cur, &efirst)) == 1) {
            if (*n == FAST_MAX)
                return TG__FAST_BAIL;
            rc = fast_tool_call(s, &tcs[(*n)++], j++);
        }
        if (rc == 0 && e != 0)
            return TG__FAST_BAIL;
    }
    return rc != 0 ? rc : m == 0 ? 0 : TG__FAST_BAIL;
}

static int fast_choices(tg_stream *s, fast_tc *tcs, size_t *n)
{
    const char *k;
    size_t kn;
    int efirst = 1, e, rc = 0;
    if (tg__jcur_take(&s->cur, '[') != 0)
        return TG__FAST_BAIL;
    for (size_t c = 0; rc == 0 && (e = tg__jcur_element(&s->cur, &efirst)) == 1;
         c++) {
        int first = 1, m, seen_index = 0, seen_delta = 0, seen_fr = 0;
        int is_obj, finish = 0;
        long long ci = TG__NO_KEY;
        size_t start = *n;
        if (tg__jcur_take(&s->cur, '{') != 0)
            return TG__FAST_BAIL;
        while (rc == 0 &&
               (m = tg__jcur_member(&s->cur, &first, &k, &kn)) == 1) {
            if (TG_JCUR_KEY_IS(k, kn, "index"))
                rc = tg__stream_fast_uint(s, &ci, &seen_index);
            else if (TG_JCUR_KEY_IS(k, kn, "delta")) {
                rc = tg__stream_fast_object_or_null(s, &seen_delta, &is_obj);
                if (rc == 0 && is_obj)
                    rc = fast_delta(s, tcs, n);
            } else if (TG_JCUR_KEY_IS(k, kn, "finish_reason")) {
                if (seen_fr++)
                    return TG__FAST_BAIL;
                finish = tg__jcur_peek(&s->cur) != 'n';
                rc = tg__stream_fast_skip(s);
            } else
                rc = tg__stream_fast_skip(s);
        }
        if (rc != 0)
            return rc;
        if (m != 0)
            return TG__FAST_BAIL;
        if (!turn_choice(ci, c))
            *n = start;
        else if (finish) {
            if (*n == FAST_MAX)
                return TG__FAST_BAIL;
            memset(&tcs[*n], 0, sizeof tcs[*n]);
            tcs[(*n)++].k = TG__NO_KEY;
        }
    }
    return rc != 0 ? rc : e == 0 ? 0 : TG__FAST_BAIL;
}

static int fast(tg_stream *s)
{
    fast_tc tcs[FAST_MAX];
    size_t n = 0;
    const char *k;
    size_t kn;
    int first = 1, m, rc = 0, seen = 0;
    if (tg__jcur_take(&s->cur, '{') != 0)
        return TG__FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(&s->cur, &first, &k, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(k, kn, "choices"))
            rc = seen++ ? TG__FAST_BAIL : fast_choices(s, tcs, &n);
        /* Members by which another provider's event would be told. */
        else if (TG_JCUR_KEY_IS(k, kn, "type") ||
                 TG_JCUR_KEY_IS(k, kn, "candidates") ||
                 TG_JCUR_KEY_IS(k, kn, "promptFeedback") ||
                 TG_JCUR_KEY_IS(k, kn, "usageMetadata"))
            return TG__FAST_BAIL;
        else
            rc = tg__stream_fast_skip(s);
    }
    if (rc != 0)
        return rc;
    if (m != 0 || !seen || tg__jcur_end(&s->cur) != 0)
        return TG__FAST_BAIL;
    for (size_t i = 0; i < n; i++) {
        fast_tc *t = &tcs[i];
        if (t->k == TG__NO_KEY)
            rc = tg__stream_complete_all(s);
        else
            rc = piece(s, t->k, tg__stream_span_str(s, &t->id),
                       tg__stream_span_str(s, &t->type),
                       tg__stream_span_str(s, &t->name),
                       tg__stream_span_str(s, &t->args), t->args.len, NULL);
        if (rc != 0)
            return rc;
    }
    return 0;
}

const tg__stream_provider tg__stream_openai_chat = {
    .event = event,
    .fast = fast,
    .build = build,
    .whole_value_completes = true,
};
