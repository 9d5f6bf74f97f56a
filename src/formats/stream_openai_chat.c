/* SPDX-License-Identifier: MIT */
/*
 * stream_openai_chat.c - the Chat Completions stream (stream_core.h): each
 * event a chat.completion.chunk whose choices[0].delta.tool_calls[j] is a
 * piece of the call at tool call index k ("index", else its position j):
 * id, type and name arrive once, the arguments string in pieces. Pieces of
 * several calls may come in any order; each joins its own call.
 *
 * Nothing in this stream ends one call: the stream says every call is done
 * with a finish_reason or data: [DONE] (read by the core), and a call whose
 * index is taken by a call with another id is done (some servers number
 * every call 0). A higher index starting proves nothing by itself: a
 * server may go back to an earlier call. So a call also completes early,
 * the moment the stream moves on from it (a piece for another call, or an
 * event with no piece), when it has an id and a name and its arguments
 * close as exactly one JSON object - then nothing that comes for it can
 * make another valid call of it, and what comes is ignored and reported
 * (tg__stream_late). The closure is scanned once per byte, whatever how
 * often the stream moves on.
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

/* ------------------------------------------------------------ early */

static int blank_byte(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* What the scan looks for in a byte of the arguments. */
enum {
    K_QUOTE = 1,
    K_ESC = 2,   /* backslash */
    K_OPEN = 4,  /* { [ */
    K_CLOSE = 8, /* } ] */
    K_SPACE = 16,
    K_STOP = 32, /* NUL: maybe the buffer's end (its terminator) */
};

static const unsigned char kind[256] = {
    [0] = K_STOP,     ['"'] = K_QUOTE,  ['\\'] = K_ESC,   ['{'] = K_OPEN,
    ['['] = K_OPEN,   ['}'] = K_CLOSE,  [']'] = K_CLOSE,  [' '] = K_SPACE,
    ['\t'] = K_SPACE, ['\n'] = K_SPACE, ['\r'] = K_SPACE,
};

/* Reads p's arguments from where the scan stopped: whether they close as
 * exactly one object (TG__SCAN_CLOSED). Only the structure: a closed text
 * whose inside is not valid JSON fails when the call is built. The plain
 * bytes of a string are skipped by a table (the buffer ends in a NUL,
 * which stops it), and the state lives in locals while the loop runs. */
static int scan_args(tg__pending *p)
{
    tg__close_scan *sc = &p->scan;
    if (sc->at == p->args.len) /* nothing new (or nothing at all) */
        return sc->state;
    const unsigned char *b = (const unsigned char *)p->args.data + sc->at;
    const unsigned char *end =
        (const unsigned char *)p->args.data + p->args.len;
    int state = sc->state;
    size_t depth = sc->depth;
    bool in_str = sc->in_str, esc = sc->esc;
    for (; b < end && state != TG__SCAN_NEVER; b++) {
        if (esc) {
            esc = false;
            continue;
        }
        if (in_str) {
            while (!(kind[*b] & (K_QUOTE | K_ESC | K_STOP)))
                b++;
            if (b >= end)
                break;
            esc = *b == '\\';
            in_str = *b != '"';
            continue;
        }
        unsigned char k = kind[*b];
        if (state == TG__SCAN_IN) {
            in_str = k == K_QUOTE;
            depth += k == K_OPEN;
            if (k == K_CLOSE && --depth == 0)
                state = TG__SCAN_CLOSED;
        } else if (k != K_SPACE) {
            state = state == TG__SCAN_BEFORE && *b == '{' ? TG__SCAN_IN
                                                          : TG__SCAN_NEVER;
            depth = 1;
        }
    }
    sc->at = p->args.len;
    sc->state = (unsigned char)state;
    sc->depth = depth;
    sc->in_str = in_str;
    sc->esc = esc;
    return state;
}

/* Whether open call p may be handed out before the stream says it is
 * done: an id, a name, a function type, and arguments that close as one
 * object (or a proxy's object sent whole). */
static int may_go_early(const tg_stream *s, tg__pending *p)
{
    if (s->no_early || p->scan.state == TG__SCAN_NEVER || p->id == NULL ||
        p->name == NULL || (p->type != NULL && strcmp(p->type, "function")) ||
        p->args.truncated)
        return 0;
    if (!p->has_args)
        return json_is_object(p->input);
    return scan_args(p) == TG__SCAN_CLOSED;
}

/* The stream moved on from the call the last piece went to (next: the
 * call the coming piece goes to, NULL for none): that call completes if it
 * may go early. Returns 0 or TG_ENOMEM. */
static int moved_on(tg_stream *s, const tg__pending *next)
{
    tg__pending *p = s->last;
    if (p == NULL || p == next)
        return 0;
    s->last = NULL;
    return may_go_early(s, p) ? tg__stream_complete_clean(s, p) : 0;
}

/* ------------------------------------------------------------ pieces */

/* Whether a piece's name or type (NULL or "": not sent) is other than the
 * call's. */
static int differs(const char *have, const char *sent)
{
    return sent != NULL && *sent != '\0' &&
           (have == NULL || strcmp(have, sent) != 0);
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
    s->said = true;
    tg__pending *p = tg__stream_find(s, k);
    if (p != NULL && p->done != NULL) {
        /* Its own id or none: a piece for that call, which is complete
         * and stays as it is. Another id: some servers number every call
         * 0. */
        if (id == NULL || (p->id != NULL && strcmp(p->id, id) == 0)) {
            if ((rc = moved_on(s, NULL)) != 0)
                return rc;
            tg__stream_late(s, p, args, args != NULL ? n : 0,
                            differs(p->name, name) || differs(p->type, type) ||
                                (args == NULL && args_value != NULL &&
                                 !json_is_null(args_value)));
            return 0;
        }
        p = NULL;
    }
    /* An index taken by a new id while its call is open: that call is
     * complete. */
    if (p != NULL && id != NULL && p->id != NULL && strcmp(p->id, id) != 0) {
        if ((rc = tg__stream_complete(s, p)) != 0)
            return rc;
        p = NULL;
    }
    if ((rc = moved_on(s, p)) != 0)
        return rc;
    if (p == NULL && (p = tg__stream_open(s, k)) == NULL)
        return TG_ENOMEM;
    s->last = p;
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

/* Whether a delta member that carries what the model says (text, a
 * refusal, reasoning) holds some. */
static int says(const json_t *delta)
{
    static const char *const keys[] = {"content", "refusal",
                                       "reasoning_content", "reasoning"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (json_string_length(json_object_get(delta, keys[i])) > 0)
            return 1;
    return 0;
}

static int not_object_or_null(const json_t *v)
{
    return v != NULL && !json_is_object(v) && !json_is_null(v);
}

/* The pieces of choice c (borrowed, the turn's); *pieces counts them. */
static int read_choice(tg_stream *s, const json_t *ch, size_t c, size_t *pieces)
{
    int rc;
    if (!json_is_object(ch))
        return tg__stream_bad_event(s, "choices[%zu] is not an object", c);
    const json_t *delta = json_object_get(ch, "delta"); /* borrowed */
    if (not_object_or_null(delta))
        return tg__stream_bad_event(s, "choices[%zu].delta is not an object",
                                    c);
    if (says(delta))
        s->said = true;
    const json_t *tcs = json_object_get(delta, "tool_calls"); /* borrowed */
    if (tcs != NULL && !json_is_array(tcs) && !json_is_null(tcs))
        return tg__stream_bad_event(
            s, "choices[%zu].delta.tool_calls is not an array", c);
    for (size_t j = 0; j < json_array_size(tcs); j++) {
        const json_t *tc = json_array_get(tcs, j);          /* borrowed */
        const json_t *fn = json_object_get(tc, "function"); /* borrowed */
        if (!json_is_object(tc) || not_object_or_null(fn))
            return tg__stream_bad_event(
                s, "choices[%zu].delta.tool_calls[%zu]%s is not an object", c,
                j, json_is_object(tc) ? ".function" : "");
        long long k = tg__stream_int(tc, "index");
        const json_t *args = json_object_get(fn, "arguments"); /* b. */
        rc = piece(s, k == TG__NO_KEY ? (long long)j : k,
                   tg__stream_str(tc, "id"), tg__stream_str(tc, "type"),
                   tg__stream_str(fn, "name"), json_string_value(args),
                   json_string_length(args), args);
        if (rc != 0)
            return rc;
        ++*pieces;
    }
    const json_t *fr = json_object_get(ch, "finish_reason"); /* b. */
    if (fr != NULL && !json_is_null(fr)) {
        s->stopped = true;
        return tg__stream_complete_all(s);
    }
    return 0;
}

static int event(tg_stream *s, const json_t *doc)
{
    const json_t *choices = json_object_get(doc, "choices"); /* borrowed */
    size_t n = json_array_size(choices), pieces = 0;
    int rc;
    if (choices != NULL && !json_is_array(choices) && !json_is_null(choices))
        return tg__stream_bad_event(s, "choices is not an array");
    for (size_t c = 0; c < n; c++) {
        const json_t *ch = json_array_get(choices, c); /* borrowed */
        if (turn_choice(tg__stream_int(ch, "index"), c) &&
            (rc = read_choice(s, ch, c, &pieces)) != 0)
            return rc;
    }
    return pieces == 0 ? moved_on(s, NULL) : 0;
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

/* Whether the value at the cursor is a string with something in it. */
static int fast_says(const tg_stream *s)
{
    const unsigned char *p = s->cur.p;
    while (p < s->cur.end && blank_byte(*p))
        p++;
    return p + 1 < s->cur.end && p[0] == '"' && p[1] != '"';
}

/* choices[c].delta: tool_calls, and whether the model says something
 * (*said). */
static int fast_delta(tg_stream *s, fast_tc *tcs, size_t *n, int *said)
{
    const char *k;
    size_t kn;
    int first = 1, m, rc = 0, seen = 0;
    while (rc == 0 && (m = tg__jcur_member(&s->cur, &first, &k, &kn)) == 1) {
        if (!TG_JCUR_KEY_IS(k, kn, "tool_calls")) {
            if (!*said && (TG_JCUR_KEY_IS(k, kn, "content") ||
                           TG_JCUR_KEY_IS(k, kn, "refusal") ||
                           TG_JCUR_KEY_IS(k, kn, "reasoning_content") ||
                           TG_JCUR_KEY_IS(k, kn, "reasoning")))
                *said = fast_says(s);
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

static int fast_choices(tg_stream *s, fast_tc *tcs, size_t *n, int *said)
{
    const char *k;
    size_t kn;
    int efirst = 1, e, rc = 0;
    if (tg__jcur_take(&s->cur, '[') != 0)
        return TG__FAST_BAIL;
    for (size_t c = 0; rc == 0 && (e = tg__jcur_element(&s->cur, &efirst)) == 1;
         c++) {
        int first = 1, m, seen_index = 0, seen_delta = 0, seen_fr = 0;
        int is_obj, finish = 0, choice_said = 0;
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
                    rc = fast_delta(s, tcs, n, &choice_said);
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
        if (!turn_choice(ci, c)) {
            *n = start;
            continue;
        }
        *said |= choice_said;
        if (finish) {
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
    size_t n = 0, pieces = 0;
    const char *k;
    size_t kn;
    int first = 1, m, rc = 0, seen = 0, said = 0;
    if (tg__jcur_take(&s->cur, '{') != 0)
        return TG__FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(&s->cur, &first, &k, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(k, kn, "choices"))
            rc = seen++ ? TG__FAST_BAIL : fast_choices(s, tcs, &n, &said);
        /* Members by which another provider's event would be told, and an
         * error the document path keeps. */
        else if (TG_JCUR_KEY_IS(k, kn, "type") ||
                 TG_JCUR_KEY_IS(k, kn, "candidates") ||
                 TG_JCUR_KEY_IS(k, kn, "promptFeedback") ||
                 TG_JCUR_KEY_IS(k, kn, "usageMetadata") ||
                 TG_JCUR_KEY_IS(k, kn, "error"))
            return TG__FAST_BAIL;
        else
            rc = tg__stream_fast_skip(s);
    }
    if (rc != 0)
        return rc;
    if (m != 0 || !seen || tg__jcur_end(&s->cur) != 0)
        return TG__FAST_BAIL;
    if (said)
        s->said = true;
    for (size_t i = 0; i < n; i++) {
        fast_tc *t = &tcs[i];
        if (t->k == TG__NO_KEY) {
            s->stopped = true;
            rc = tg__stream_complete_all(s);
        } else {
            pieces++;
            rc = piece(s, t->k, tg__stream_span_str(s, &t->id),
                       tg__stream_span_str(s, &t->type),
                       tg__stream_span_str(s, &t->name),
                       tg__stream_span_str(s, &t->args), t->args.len, NULL);
        }
        if (rc != 0)
            return rc;
    }
    return pieces == 0 ? moved_on(s, NULL) : 0;
}

const tg__stream_provider tg__stream_openai_chat = {
    .event = event,
    .fast = fast,
    .build = build,
    .whole_value_completes = true,
};
