/* SPDX-License-Identifier: MIT */
/*
 * stream.c - streamed model turns: the public tg_stream_* reader and its
 * core. Bytes go through the SSE reader (sse.c); each event's data is one
 * JSON object of the provider's stream, told from its shape, and goes to
 * that provider's file:
 *
 *   openai-chat       stream_openai_chat.c: chat.completion.chunk objects,
 *                     choices[0].delta.tool_calls[k] pieces joined by
 *                     their index (id, type and name arrive once,
 *                     arguments in pieces).
 *   openai-responses  stream_openai_responses.c: response.output_item.added
 *                     (a function_call item) opens a call,
 *                     response.function_call_arguments.delta adds to it.
 *   anthropic         stream_anthropic.c: content_block_start with a
 *                     tool_use block opens, content_block_delta
 *                     input_json_delta.partial_json adds.
 *   gemini            stream_gemini.c: each event a GenerateContentResponse
 *                     whose candidates[0].content.parts hold whole
 *                     functionCall objects.
 *
 * This file keeps the calls under their keys, completes them by the rule
 * of stream_core.h (calls in any order), hands them out, ignores what comes
 * for a complete call or after the end of the stream (and says so in the
 * turn's warnings), and at the end puts the turn in the order the model
 * wrote its calls. A complete call is built by the provider's own builder
 * (calls.h), the one its whole-document parser uses, so a stream and the
 * response it adds up to give the same call records.
 *
 * The arguments of one call are capped like an event's data (the reader's
 * max_data): memory follows the configuration, not the input. A call over
 * the cap ends with ARGUMENTS_TOO_LARGE; its further pieces are counted,
 * not kept. After the end of the stream the SSE reader only counts: an
 * event keeps a few bytes, so nothing that follows can fail the stream.
 */
#include "stream_core.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "format.h"

static const char *const provider_names[TG__SP_COUNT] = {
    NULL, "openai-chat", "openai-responses", "anthropic", "gemini"};

static const tg__stream_provider *const providers[TG__SP_COUNT] = {
    NULL, &tg__stream_openai_chat, &tg__stream_openai_responses,
    &tg__stream_anthropic, &tg__stream_gemini};

/* ------------------------------------------------------------ helpers */

int tg__stream_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
            return 0;
    return 1;
}

const char *tg__stream_str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static int str_is(const char *s, const char *want)
{
    return s != NULL && strcmp(s, want) == 0;
}

long long tg__stream_int(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key); /* borrowed */
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return TG__NO_KEY;
    return (long long)json_integer_value(v);
}

static int nomem(tg_error *err)
{
    return tg__error_set(err, TG_ENOMEM, "out of memory reading the stream");
}

int tg__stream_set_once(char **field, const char *str)
{
    if (*field != NULL || str == NULL || *str == '\0')
        return 0;
    return tg__strset(field, str);
}

/* ------------------------------------------------------------ calls by key
 *
 * The calls are kept sorted by (key, seq), open ones and complete ones: an
 * event finds its call by binary search however many there are and in
 * whatever order they are written, and the calls of a stream that writes
 * one call after another are found at the end, first try. */

static void pending_free(tg__pending *p)
{
    if (p == NULL)
        return;
    free(p->item_id);
    free(p->id);
    free(p->name);
    free(p->type);
    tg__buf_cleanup(&p->args);
    json_decref(p->input);
    free(p);
}

/* The position of the first call whose key is greater than key. */
static size_t upper_bound(const tg_stream *s, long long key)
{
    size_t lo = 0, hi = s->nkeyed;
    /* Most events are for the newest call, at the end. */
    if (hi > 0 && s->keyed[hi - 1]->key <= key)
        return hi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->keyed[mid]->key <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

tg__pending *tg__stream_open(tg_stream *s, long long key)
{
    if (s->nkeyed == s->capkeyed) {
        size_t cap = s->capkeyed ? s->capkeyed * 2 : 8;
        tg__pending **o = realloc(s->keyed, cap * sizeof *o);
        if (o == NULL)
            return NULL;
        s->keyed = o;
        s->capkeyed = cap;
    }
    tg__pending *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->key = key;
    p->seq = s->seq++;
    tg__buf_init(&p->args, s->max);
    size_t at = upper_bound(s, key);
    memmove(s->keyed + at + 1, s->keyed + at,
            (s->nkeyed - at) * sizeof *s->keyed);
    s->keyed[at] = p;
    s->nkeyed++;
    s->nopen++;
    return p;
}

tg__pending *tg__stream_find(tg_stream *s, long long key)
{
    size_t at = upper_bound(s, key);
    return at > 0 && s->keyed[at - 1]->key == key ? s->keyed[at - 1] : NULL;
}

tg__pending *tg__stream_find_item(tg_stream *s, const char *item_id,
                                  long long key)
{
    if (key != TG__NO_KEY) {
        for (size_t at = upper_bound(s, key);
             at > 0 && s->keyed[at - 1]->key == key; at--)
            if (str_is(s->keyed[at - 1]->item_id, item_id))
                return s->keyed[at - 1];
    }
    /* The item under another output_index, or the event named none. */
    for (size_t i = s->nkeyed; i-- > 0;)
        if (str_is(s->keyed[i]->item_id, item_id))
            return s->keyed[i];
    return NULL;
}

int tg__stream_add_args(tg__pending *p, const char *piece, size_t n)
{
    p->has_args = 1;
    p->received += n;
    if (p->args.truncated)
        return 0;
    int rc = tg__buf_append(&p->args, piece, n);
    return rc == TG_ELIMIT ? 0 : rc;
}

int tg__stream_set_final_args(tg__pending *p, const char *text, size_t n)
{
    p->args.len = 0;
    p->args.truncated = false;
    p->received = 0;
    p->final_args = 1;
    return tg__stream_add_args(p, text, n);
}

/* ------------------------------------------------------------ complete ids */

/* The turn index of the first complete call with this id, or SIZE_MAX. */
static size_t first_with_id(const tg_stream *s, const char *id)
{
    const tg__hentry *e = id != NULL ? tg__hmap_find_str(&s->ids, id) : NULL;
    return e != NULL ? e->val.idx : SIZE_MAX;
}

/* Records the id of turn call idx (the call's own bytes are the key)
 * unless a call with it completed before. Returns 0 or TG_ENOMEM. */
static int remember_id(tg_stream *s, size_t idx)
{
    tg__hentry *e;
    int rc = tg__hmap_put_str(&s->ids, s->turn->calls[idx]->id, &e);
    if (rc == 1)
        s->repeated_ids = true;
    else if (rc == 0)
        e->val.idx = idx;
    else
        return TG_ENOMEM; /* or an id of 4 GiB: its duplicates unseen */
    return 0;
}

int tg__stream_id_complete(const tg_stream *s, const char *id)
{
    return first_with_id(s, id) != SIZE_MAX;
}

static void mark_duplicate(tg_call *call)
{
    /* A message that could not be copied leaves the code: it still fails. */
    (void)tg__call_set_pre_error(call, "DUPLICATE_CALL_ID",
                                 "call id '%s' appears more than once in "
                                 "this turn",
                                 call->id);
}

/* ------------------------------------------------------------ completing */

/* Appends a complete call (ownership taken, also on failure) with its place
 * in the model's order. */
static int add_call(tg_stream *s, tg_call *call, long long key, uint64_t seq)
{
    if (s->turn->n == s->capplaced) {
        size_t cap = s->capplaced ? s->capplaced * 2 : 16;
        tg__placed *pl = realloc(s->placed, cap * sizeof *pl);
        if (pl == NULL) {
            tg__call_free(call);
            return TG_ENOMEM;
        }
        s->placed = pl;
        s->capplaced = cap;
    }
    size_t idx = s->turn->n;
    int rc = tg__turn_add_call(s->turn, call);
    if (rc != 0)
        return rc;
    s->placed[idx] = (tg__placed){call, key, seq, false};
    /* Its names held to their limits, as tg__turn_check_calls does. */
    if ((rc = tg__call_check_names(call)) != 0)
        return rc;
    return remember_id(s, idx);
}

int tg__stream_add_whole(tg_stream *s, tg_call *call)
{
    return add_call(s, call, TG__NO_KEY, s->seq++);
}

int tg__stream_args_unusable(tg_call *call, const tg__stream_args *a)
{
    const tg__pending *p = a->p;
    int rc;
    if (p->args.truncated)
        rc = tg__call_set_pre_error(call, "ARGUMENTS_TOO_LARGE",
                                    "arguments of call '%s' pass the stream's "
                                    "limit of %zu bytes (%zu bytes received)",
                                    call->id, a->s->max, p->received);
    else if (!a->complete) {
        /* Keep what arrived for diagnostics; the error is the stream's,
         * and limits.repair does not second-guess it. */
        rc = tg__call_set_args_text(call, p->args.data ? p->args.data : "",
                                    p->args.len);
        call->args_unrepairable = true;
        if (rc == 0)
            rc = tg__call_set_pre_error(
                call, "MALFORMED_ARGUMENTS",
                "the stream ended inside the arguments of call %s (%zu "
                "bytes received)%s%.200s",
                call->id, p->received,
                a->s->api_error[0] ? "; the stream carried an error: " : "",
                a->s->api_error);
    } else
        return 0;
    return rc != 0 ? rc : 1;
}

int tg__stream_string_args(tg_call *call, const void *src)
{
    const tg__stream_args *a = src;
    int rc = tg__stream_args_unusable(call, a);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (a->p->has_args)
        return tg__call_set_args_text(call, tg__buf_cstr(&a->p->args),
                                      a->p->args.len);
    return tg__args_from_string_value(call, a->p->input);
}

/* Builds the call of open p through the provider's builder; `complete`
 * is false when the input ended inside its arguments. */
static int build_call(tg_stream *s, tg__pending *p, bool complete,
                      tg_call **out)
{
    tg__stream_args a = {s, p, complete};
    *out = NULL;
    return providers[s->provider]->build(&a, out);
}

/* Appends p's call and keeps p as complete, without what only an open
 * call needs. Returns 0 or TG_ENOMEM. */
static int settle(tg_stream *s, tg__pending *p, tg_call *call)
{
    int rc = add_call(s, call, p->key, p->seq);
    if (rc != 0)
        return rc;
    p->done = call;
    tg__buf_cleanup(&p->args);
    json_decref(p->input);
    p->input = NULL;
    s->nopen--;
    if (s->last == p)
        s->last = NULL;
    return 0;
}

static int complete_as(tg_stream *s, tg__pending *p, bool complete)
{
    tg_call *call;
    if (p->done != NULL)
        return 0;
    int rc = build_call(s, p, complete, &call);
    return rc != 0 ? rc : settle(s, p, call);
}

int tg__stream_complete(tg_stream *s, tg__pending *p)
{
    return complete_as(s, p, true);
}

int tg__stream_complete_clean(tg_stream *s, tg__pending *p)
{
    tg_call *call;
    if (p->done != NULL)
        return 0;
    int rc = build_call(s, p, true, &call);
    if (rc != 0)
        return rc;
    if (call->pre_error_code != NULL) {
        tg__call_free(call);
        p->scan.state = TG__SCAN_NEVER;
        return 0;
    }
    return settle(s, p, call);
}

int tg__stream_complete_all(tg_stream *s)
{
    for (size_t i = 0; i < s->nkeyed && s->nopen > 0; i++) {
        int rc = complete_as(s, s->keyed[i], true);
        if (rc != 0)
            return rc;
    }
    return 0;
}

void tg__stream_late(tg_stream *s, tg__pending *p, const char *piece, size_t n,
                     bool other)
{
    if (!other && tg__stream_blank(piece, n))
        return; /* white space after a closed value changes nothing */
    if (p->late_pieces++ == 0) {
        s->late_calls++;
        p->late_line = s->ev_first_line;
    }
    p->late_bytes += n;
}

int tg__stream_piece(tg_stream *s, tg__pending *p, const char *piece, size_t n)
{
    if (p == NULL)
        return 0;
    if (p->done != NULL) {
        tg__stream_late(s, p, piece, n, false);
        return 0;
    }
    return tg__stream_add_args(p, piece, n);
}

void tg__stream_end(tg_stream *s, const char *what)
{
    if (s->ended)
        return;
    s->ended = true;
    s->stopped = true;
    s->end_event = what;
    s->end_line = s->ev_first_line;
    /* Enough to tell a [DONE] or a keep-alive from an event. */
    tg__sse_discard(&s->sse, 16);
}

int tg__stream_bad_event(tg_stream *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->bad, sizeof s->bad, fmt, ap);
    va_end(ap);
    return TG_EFORMAT;
}

/* Whether the input ended after p's arguments closed as one JSON value
 * (complete: nothing else for its key followed) or inside them (cut).
 * Returns 1, 0 or TG_ENOMEM. */
static int closed_at_end(const tg_stream *s, tg__pending *p)
{
    if (p->args.truncated)
        return 1; /* over the cap either way */
    if (!p->has_args || tg__stream_blank(p->args.data, p->args.len))
        return providers[s->provider]->whole_value_completes && !p->has_args &&
               p->input != NULL;
    tg__jcur c;
    tg__jcur_init(&c, p->args.data, p->args.len);
    int plain = tg__jcur_skip(&c) == 0 && tg__jcur_end(&c) == 0;
    tg__jcur_cleanup(&c);
    if (plain)
        return 1;
    /* Not plainly valid to the cursor: jansson's word is final. */
    json_error_t jerr;
    json_t *v = json_loadb(p->args.data, p->args.len, JSON_DECODE_ANY,
                           &jerr); /* new ref */
    if (v == NULL && json_error_code(&jerr) == json_error_out_of_memory)
        return TG_ENOMEM;
    json_decref(v);
    return v != NULL;
}

/* ------------------------------------------------------------ the order */

/* The model's order: by key, calls under one key as they started, calls
 * without a key last. */
static int cmp_place(const void *a, const void *b)
{
    const tg__placed *x = a, *y = b;
    unsigned long long kx = (unsigned long long)x->key,
                       ky = (unsigned long long)y->key; /* NO_KEY: largest */
    if (kx != ky)
        return kx < ky ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Calls by id; under one id those handed out first, then by position. */
static int cmp_id(const void *a, const void *b)
{
    const tg__placed *x = a, *y = b;
    int c = strcmp(x->call->id, y->call->id);
    if (c != 0)
        return c;
    if (x->handed != y->handed)
        return x->handed ? -1 : 1;
    return x->call->index < y->call->index ? -1
                                           : x->call->index > y->call->index;
}

/* Puts the turn in the model's order, and marks repeated ids. A call
 * tg_stream_next_call handed out was checked then: of the calls sharing an
 * id, the first handed out runs. Of those never handed out, the first in
 * the turn runs unless one was handed out, and the rest are
 * DUPLICATE_CALL_ID - as a whole document's would be. */
static void put_in_order(tg_stream *s)
{
    tg__placed *pl = s->placed;
    size_t n = s->turn->n, sorted = 1;
    /* Calls written one after another complete in order: nothing moves. */
    for (size_t i = 1; i < n && sorted; i++)
        sorted = cmp_place(&pl[i - 1], &pl[i]) < 0;
    if (!sorted) {
        qsort(pl, n, sizeof *pl, cmp_place);
        for (size_t i = 0; i < n; i++) {
            s->turn->calls[i] = pl[i].call;
            pl[i].call->index = i;
        }
    }
    if (!s->repeated_ids)
        return;
    qsort(pl, n, sizeof *pl, cmp_id);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && strcmp(pl[j].call->id, pl[i].call->id) == 0)
            j++;
        /* pl[i] runs, or was handed out (and marked then if need be). */
        for (size_t k = i + 1; k < j; k++)
            if (!pl[k].handed)
                mark_duplicate(pl[k].call);
        i = j;
    }
}

/* ------------------------------------------------------------ events */

/* Which provider's stream an event belongs to, from its own shape. */
static int classify(const json_t *doc)
{
    const char *type = tg__stream_str(doc, "type");
    if (type != NULL) {
        if (strncmp(type, "response.", 9) == 0)
            return TG__SP_RESP;
        static const char *const anth[] = {"message_start",
                                           "message_delta",
                                           "message_stop",
                                           "content_block_start",
                                           "content_block_delta",
                                           "content_block_stop",
                                           "ping"};
        for (size_t i = 0; i < sizeof anth / sizeof anth[0]; i++)
            if (strcmp(type, anth[i]) == 0)
                return TG__SP_ANTH;
    }
    if (str_is(tg__stream_str(doc, "object"), "chat.completion.chunk") ||
        json_is_array(json_object_get(doc, "choices")))
        return TG__SP_CHAT;
    if (json_object_get(doc, "candidates") != NULL ||
        json_object_get(doc, "promptFeedback") != NULL ||
        json_object_get(doc, "usageMetadata") != NULL)
        return TG__SP_GEMINI;
    return TG__SP_NONE;
}

/* Whose stream an event cut short belongs to, from its type and the
 * start of its data (the members classify reads come first in every
 * provider's events). */
static int sniff(const tg__sse_event *ev)
{
    static const struct {
        const char *needle;
        int provider;
    } marks[] = {
        {"\"type\":\"response.", TG__SP_RESP},
        {"\"type\":\"message_", TG__SP_ANTH},
        {"\"type\":\"content_block_", TG__SP_ANTH},
        {"\"chat.completion.chunk\"", TG__SP_CHAT},
        {"\"candidates\"", TG__SP_GEMINI},
    };
    if (strncmp(ev->type, "response.", 9) == 0)
        return TG__SP_RESP;
    if (strncmp(ev->type, "message_", 8) == 0 ||
        strncmp(ev->type, "content_block_", 14) == 0)
        return TG__SP_ANTH;
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (memmem(ev->data, ev->data_len, marks[i].needle,
                   strlen(marks[i].needle)) != NULL)
            return marks[i].provider;
    return TG__SP_NONE;
}

/* Keeps the message of the first error event the provider streamed (an
 * overloaded server, say): it tells why a stream ended early. The shapes:
 * {"error":{"message"}} (Chat Completions, Gemini, Anthropic's
 * {"type":"error","error":{...}}), {"type":"error","message"} and
 * response.failed's response.error (Responses). */
static void note_api_error(tg_stream *s, const json_t *doc)
{
    if (s->api_error[0] != '\0')
        return;
    const char *type = tg__stream_str(doc, "type");
    const char *msg = tg__stream_str(json_object_get(doc, "error"), "message");
    if (msg == NULL && str_is(type, "error"))
        msg = tg__stream_str(doc, "message");
    if (msg == NULL && str_is(type, "response.failed"))
        msg = tg__stream_str(
            json_object_get(json_object_get(doc, "response"), "error"),
            "message");
    if (msg != NULL)
        snprintf(s->api_error, sizeof s->api_error, "%s",
                 *msg ? msg : "(no message)");
}

/* A fast path's reading of the event: 0 when it was read, TG__FAST_BAIL
 * when the document path must read it, or TG_ENOMEM. */
static int fast_event(tg_stream *s, const tg__sse_event *ev)
{
    const tg__stream_provider *pr = providers[s->provider];
    if (s->slow || pr == NULL || pr->fast == NULL)
        return TG__FAST_BAIL;
    /* The cursor keeps its scratch buffer across events. */
    s->cur.p = (const unsigned char *)ev->data;
    s->cur.end = s->cur.p + ev->data_len;
    s->cur.depth = 0;
    s->arena.len = 0;
    return pr->fast(s);
}

/* Whether the JSON reader's failure on an event's data (jerr) is the input
 * ending inside it: the data is the start of a JSON text - the reader ran
 * out of bytes, stopped at the very last one, or the data ends inside a
 * UTF-8 sequence. Data holding one whole value and more is not. */
static int cut_short(const tg__sse_event *ev, const json_error_t *jerr)
{
    enum json_error_code code = json_error_code(jerr);
    if (code == json_error_premature_end_of_input)
        return 1;
    if (code == json_error_end_of_input_expected)
        return 0;
    if (jerr->position >= 0 && (size_t)jerr->position >= ev->data_len)
        return 1;
    if (code != json_error_invalid_utf8)
        return 0;
    /* A lead byte among the last three whose sequence needs more. */
    const unsigned char *d = (const unsigned char *)ev->data;
    for (size_t back = 1; back <= 3 && back <= ev->data_len; back++) {
        unsigned char c = d[ev->data_len - back];
        if (c < 0x80)
            return 0;
        if (c >= 0xC0) {
            size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
            return need > back;
        }
    }
    return 0;
}

/* The error for an event whose data is not one JSON object (doc, new ref
 * or NULL, consumed), unless it is the input's last event cut short: then
 * the stream was cut, not garbled, and what came before still counts
 * (when nothing came before, what the cut event began with still tells
 * whose it is). */
static int not_an_object(tg_stream *s, const tg__sse_event *ev, json_t *doc,
                         const json_error_t *jerr, tg_error *err)
{
    int is_json = doc != NULL;
    json_decref(doc);
    if (!is_json && ev->at_end && cut_short(ev, jerr)) {
        int kind;
        if (s->provider == TG__SP_NONE && (kind = sniff(ev)) != TG__SP_NONE) {
            s->provider = kind;
            s->turn->format = provider_names[kind];
        }
        /* The model was in the middle of saying something. */
        s->said = s->provider != TG__SP_NONE;
        return 0;
    }
    if (is_json)
        return tg__error_at(err, TG_EPARSE, (long)ev->line, 0,
                            "event %llu (ending on line %llu) of the stream: "
                            "its data is JSON but not an object; expected "
                            "one JSON object per event",
                            (unsigned long long)ev->number,
                            (unsigned long long)ev->line);
    /* The line of the input the reader stopped on, when the event's data
     * lines are consecutive (else the line the event ended on). */
    unsigned long long line = ev->line;
    if (jerr->line >= 1 && (uint64_t)jerr->line <= ev->data_lines &&
        ev->data_last_line - ev->data_first_line + 1 == ev->data_lines)
        line = ev->data_first_line + (uint64_t)jerr->line - 1;
    int joined = ev->data_lines > 1 &&
                 json_error_code(jerr) == json_error_end_of_input_expected;
    return tg__error_at(
        err, TG_EPARSE, (long)line, jerr->column,
        "event %llu (ending on line %llu) of the stream: its data is not "
        "JSON: %s on line %llu, column %d; expected one JSON object per "
        "event%s",
        (unsigned long long)ev->number, (unsigned long long)ev->line,
        jerr->text, line, jerr->column,
        joined ? "; its data lines were read as one event because no blank "
                 "line separates them (each event ends with a blank line)"
               : "");
}

/* What a provider's reading of an event returned, as the stream's error. */
static int event_result(tg_stream *s, const tg__sse_event *ev, int rc,
                        tg_error *err)
{
    if (rc == TG_ENOMEM)
        return nomem(err);
    if (rc == TG_EFORMAT)
        return tg__error_at(err, TG_EFORMAT, (long)ev->line, 0,
                            "event %llu (ending on line %llu) of the %s "
                            "stream: %s",
                            (unsigned long long)ev->number,
                            (unsigned long long)ev->line,
                            provider_names[s->provider], s->bad);
    return rc;
}

static int is_done_marker(const tg__sse_event *ev)
{
    return !ev->clipped && ev->data_len == 6 &&
           memcmp(ev->data, "[DONE]", 6) == 0;
}

/* An event after the end of the stream: counted, never read. A keep-alive
 * or a second [DONE] (some proxies add one after another provider's end)
 * says nothing more. */
static void after_end(tg_stream *s, const tg__sse_event *ev)
{
    if (is_done_marker(ev) ||
        (!ev->clipped && tg__stream_blank(ev->data, ev->data_len)))
        return;
    if (s->ignored_events++ == 0)
        s->ignored_line = ev->data_first_line;
}

static int on_event(void *ud, const tg__sse_event *ev, tg_error *err)
{
    tg_stream *s = ud;
    s->ev_first_line = ev->data_first_line;
    if (s->ended) {
        after_end(s, ev);
        return 0;
    }
    if (s->provider == TG__SP_NONE || s->provider == TG__SP_GEMINI) {
        SHA256_Update(&s->hash, ev->data, ev->data_len);
        SHA256_Update(&s->hash, "\n\n", 2);
    }
    if (tg__stream_blank(ev->data, ev->data_len))
        return 0; /* a keep-alive */
    int rc, kind;
    if (is_done_marker(ev)) {
        /* The OpenAI end, which proxies send after any provider's stream:
         * every call is complete, and nothing after it counts. */
        if (s->provider != TG__SP_NONE &&
            (rc = tg__stream_complete_all(s)) != 0)
            return nomem(err);
        tg__stream_end(s, "data: [DONE]");
        return 0;
    }
    if ((rc = fast_event(s, ev)) != TG__FAST_BAIL)
        return event_result(s, ev, rc, err);
    json_error_t jerr;
    bool bad; /* strings with bytes no tool gets: only in arguments */
    json_t *doc =
        tg__format_load(ev->data, ev->data_len, &jerr, &bad); /* new ref */
    if (doc == NULL && tg__format_json_oom(&jerr))
        return nomem(err);
    if (bad && (rc = tg__format_stream_bad_strings(
                    doc, (unsigned long long)ev->number,
                    (unsigned long long)ev->line, err)) != 0) {
        json_decref(doc);
        return rc;
    }
    if (!json_is_object(doc))
        return not_an_object(s, ev, doc, &jerr, err);
    note_api_error(s, doc);
    kind = classify(doc);
    if (s->provider == TG__SP_NONE) {
        if (kind == TG__SP_NONE) {
            json_decref(doc); /* not telling yet (an error event, say) */
            return 0;
        }
        s->provider = kind;
        s->turn->format = provider_names[kind];
    } else if (kind != TG__SP_NONE && kind != s->provider) {
        json_decref(doc);
        return tg__error_at(err, TG_EFORMAT, (long)ev->line, 0,
                            "event %llu (ending on line %llu) of the stream "
                            "is in the %s stream format, but the stream is %s "
                            "(%s)",
                            (unsigned long long)ev->number,
                            (unsigned long long)ev->line, provider_names[kind],
                            provider_names[s->provider],
                            s->fixed ? "as named" : "by its first events");
    }
    rc = providers[s->provider]->event(s, doc);
    json_decref(doc);
    return event_result(s, ev, rc, err);
}

/* ------------------------------------------------------------ public API */

static int provider_from_name(const char *format)
{
    if (format == NULL || strcmp(format, "auto") == 0)
        return TG__SP_NONE;
    for (int p = 1; p < TG__SP_COUNT; p++)
        if (strcmp(format, provider_names[p]) == 0)
            return p;
    return -1;
}

int tg_stream_new(const char *format, tg_stream **out, tg_error *err)
{
    tg__error_clear(err);
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_stream_new: no out");
    *out = NULL;
    int p = provider_from_name(format);
    if (p < 0)
        return tg__error_set(err, TG_EFORMAT,
                             "format '%s' has no streamed form; expected "
                             "auto, openai-chat, openai-responses, anthropic "
                             "or gemini",
                             format);
    tg_stream *s = calloc(1, sizeof *s);
    if (s == NULL || (s->turn = tg__turn_new(provider_names[p])) == NULL) {
        free(s);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    s->provider = p;
    s->fixed = p != TG__SP_NONE;
    s->max = TG_SSE_DEFAULT_MAX_DATA;
    tg__sse_init(&s->sse, s->max);
    SHA256_Init(&s->hash);
    tg__jcur_init(&s->cur, NULL, 0);
    tg__buf_init(&s->arena, 0);
    *out = s;
    return 0;
}

int tg_stream_set_max_event_bytes(tg_stream *s, size_t max_bytes, tg_error *err)
{
    if (s == NULL)
        return tg__error_set(err, TG_EINVAL, "no stream");
    if (s->fed)
        return tg__error_set(err, TG_EINVAL,
                             "the event size cap is set before the first feed");
    s->max = max_bytes ? max_bytes : TG_SSE_DEFAULT_MAX_DATA;
    s->sse.max_data = s->max;
    return 0;
}

void tg__stream_no_fast_paths(tg_stream *s)
{
    s->slow = 1;
}

void tg__stream_no_early(tg_stream *s)
{
    s->no_early = 1;
}

int tg_stream_feed(tg_stream *s, const char *bytes, size_t len, tg_error *err)
{
    if (s == NULL || (bytes == NULL && len > 0))
        return tg__error_set(err, TG_EINVAL, "tg_stream_feed: no stream");
    if (s->finished)
        return tg__error_set(err, TG_EINVAL, "the stream was finished");
    s->fed = 1;
    return tg__sse_feed(&s->sse, bytes, len, on_event, s, err);
}

const tg_call *tg_stream_next_call(tg_stream *s)
{
    if (s == NULL || s->turn == NULL || s->next >= s->turn->n)
        return NULL;
    size_t i = s->next++;
    tg_call *call = s->turn->calls[i];
    /* A call with this id was handed out before (it completed first): that
     * one may be running, this one must not. */
    if (s->repeated_ids && first_with_id(s, call->id) != i)
        mark_duplicate(call);
    s->placed[i].handed = true;
    return call;
}

int tg_stream_ended(const tg_stream *s)
{
    return s != NULL && s->ended;
}

size_t tg_stream_ignored_events(const tg_stream *s)
{
    return s != NULL ? (size_t)s->ignored_events : 0;
}

const char *tg_stream_format(const tg_stream *s)
{
    return s ? provider_names[s->provider] : NULL;
}

/* A stream that gave no call must be an answer: the model said something
 * (text, a block, a call's piece, an event cut short) or the stream reached
 * a stop or its end - and carried no error. Else nothing could be read
 * from it, and it is not an answer without tool calls either: data that is
 * not the provider's events, only lifecycle or unknown events, a stream cut
 * before the model said anything, a failed response. Returns 0 or
 * TG_EFORMAT. */
static int check_answer(const tg_stream *s, tg_error *err)
{
    if (s->turn->n > 0)
        return 0;
    if (s->api_error[0] != '\0')
        return tg__error_set(err, TG_EFORMAT,
                             "the %s stream carried an error and no tool "
                             "call: %s",
                             provider_names[s->provider], s->api_error);
    if (s->said || s->stopped)
        return 0;
    unsigned long long n = s->sse.events;
    return tg__error_set(err, TG_EFORMAT,
                         "the %s stream has no tool call, no text and no "
                         "stop (%llu event%s, none of them the model's "
                         "output): it was cut before the model said "
                         "anything, or it is not a model's stream",
                         provider_names[s->provider], n, n == 1 ? "" : "s");
}

/* The turn's warnings: pieces that came for complete calls, by call in the
 * model's order (the keys'), and events after the end. Returns 0 or
 * TG_ENOMEM. */
static int add_warnings(tg_stream *s)
{
    int rc = 0;
    for (size_t i = 0; i < s->nkeyed && s->late_calls > 0 && rc == 0; i++) {
        const tg__pending *p = s->keyed[i];
        char id[TG__SHOWN_ID_SIZE];
        if (p->late_pieces == 0 || p->done == NULL)
            continue;
        rc = tg__turn_add_warning(
            s->turn,
            "call %s was complete when %zu more piece%s for it arrived (%zu "
            "byte%s of arguments, the first on line %llu): ignored, the call "
            "stands as it was complete",
            tg__text_show(p->done->id, id, sizeof id), p->late_pieces,
            p->late_pieces == 1 ? "" : "s", p->late_bytes,
            p->late_bytes == 1 ? "" : "s", (unsigned long long)p->late_line);
    }
    if (rc == 0 && s->ignored_events > 0)
        rc = tg__turn_add_warning(
            s->turn,
            "%llu event%s after the end of the stream (%s on line %llu) %s "
            "ignored, the first on line %llu",
            (unsigned long long)s->ignored_events,
            s->ignored_events == 1 ? "" : "s", s->end_event,
            (unsigned long long)s->end_line,
            s->ignored_events == 1 ? "was" : "were",
            (unsigned long long)s->ignored_line);
    return rc;
}

int tg_stream_finish(tg_stream *s, tg_turn **out, tg_error *err)
{
    if (s == NULL || out == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_stream_finish: no stream");
    *out = NULL;
    if (s->finished)
        return tg__error_set(err, TG_EINVAL, "the stream was finished");
    s->finished = 1;
    int rc = tg__sse_finish(&s->sse, on_event, s, err);
    if (rc != 0)
        return rc;
    if (s->provider == TG__SP_NONE)
        return tg__error_set(
            err, TG_EFORMAT,
            "the stream has no event of a known provider "
            "(%llu event%s%s%.200s); expected the SSE "
            "stream of OpenAI Chat Completions, the OpenAI "
            "Responses API, Anthropic Messages or Gemini",
            (unsigned long long)s->sse.events, s->sse.events == 1 ? "" : "s",
            s->api_error[0] ? "; it carried an error: " : "", s->api_error);
    /* What is still open had no end: the input ended after it, complete
     * when its arguments closed, or inside them. */
    for (size_t i = 0; i < s->nkeyed && s->nopen > 0; i++) {
        if (s->keyed[i]->done != NULL)
            continue;
        int closed = closed_at_end(s, s->keyed[i]);
        if (closed < 0 || (rc = complete_as(s, s->keyed[i], closed == 1)) != 0)
            return nomem(err);
    }
    if ((rc = check_answer(s, err)) != 0)
        return rc;
    put_in_order(s);
    if (add_warnings(s) != 0)
        return nomem(err);
    *out = s->turn;
    s->turn = NULL;
    return 0;
}

void tg_stream_free(tg_stream *s)
{
    if (s == NULL)
        return;
    tg__sse_cleanup(&s->sse);
    tg__jcur_cleanup(&s->cur);
    tg__buf_cleanup(&s->arena);
    for (size_t i = 0; i < s->nkeyed; i++)
        pending_free(s->keyed[i]);
    free(s->keyed);
    free(s->placed);
    tg__hmap_cleanup(&s->ids);
    tg_turn_free(s->turn);
    free(s);
}

/* ------------------------------------------------------------ whole text */

int tg__stream_looks_like_sse(const char *text, size_t len)
{
    /* Decided by the first line that is not blank, read no further: a whole
     * JSON document is usually one long line. */
    size_t line = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '\n' || c == '\r') {
            line = i + 1;
            continue;
        }
        if (c == ' ' || c == '\t')
            continue;
        const char *l = text + line;
        size_t n = len - line;
        return (n >= 5 && memcmp(l, "data:", 5) == 0) ||
               (n >= 6 && memcmp(l, "event:", 6) == 0) || l[0] == ':';
    }
    return 0;
}

int tg__stream_parse_text(const char *text, size_t len, const char *format,
                          tg_turn **out, tg_error *err)
{
    tg_stream *s = NULL;
    *out = NULL;
    int rc = tg_stream_new(format, &s, err);
    if (rc == 0)
        rc = tg_stream_feed(s, text, len, err);
    if (rc == 0)
        rc = tg_stream_finish(s, out, err);
    tg_stream_free(s);
    return rc;
}
