/* SPDX-License-Identifier: MIT */
/*
 * stream_openai_responses.c - the Responses API stream (stream_core.h):
 * response.output_item.added with a function_call item opens a call under
 * its output_index, response.function_call_arguments.delta adds a piece to
 * the call it names (item_id, else output_index), and
 * response.function_call_arguments.done (whose whole arguments string
 * wins over the pieces) or response.output_item.done completes it. The
 * events of several items may come in any order; a delta for an item
 * already complete is ignored and reported. response.completed completes
 * what is still open and ends the stream; response.failed and
 * response.incomplete end it too, leaving open calls to the end's rule
 * (cut unless their arguments closed).
 */
#include "stream_core.h"

#include <string.h>

static int str_is(const char *s, const char *want)
{
    return s != NULL && strcmp(s, want) == 0;
}

/* ------------------------------------------------------------ the calls */

static int build(const tg__stream_args *a, tg_call **out)
{
    const tg__pending *p = a->p;
    tg__responses_wire w = {
        .pos = p->key >= 0 ? (size_t)p->key : a->s->turn->n,
        .call_id = p->id,
        .item_id = p->item_id,
        .name = p->name,
        .set_args = tg__stream_string_args,
        .args = a,
    };
    return tg__openai_responses_call(&w, out);
}

/* The open call an event names: by item_id, else by output_index. */
static tg__pending *find(tg_stream *s, const char *item_id, long long oi)
{
    if (item_id != NULL)
        return tg__stream_find_item(s, item_id, oi);
    return oi == TG__NO_KEY ? NULL : tg__stream_find(s, oi);
}

/* Fills p from a function_call item (borrowed); `whole` at
 * output_item.done, whose item holds the whole arguments string. */
static int fill(tg__pending *p, const json_t *item, int whole)
{
    if (tg__stream_set_once(&p->item_id, tg__stream_str(item, "id")) != 0 ||
        tg__stream_set_once(&p->id, tg__stream_str(item, "call_id")) != 0 ||
        tg__stream_set_once(&p->name, tg__stream_str(item, "name")) != 0)
        return TG_ENOMEM;
    const json_t *args = json_object_get(item, "arguments"); /* borrowed */
    if (json_is_string(args)) {
        if (whole && !p->final_args)
            return tg__stream_set_final_args(p, json_string_value(args),
                                             json_string_length(args));
        if (!whole && json_string_length(args) > 0)
            return tg__stream_add_args(p, json_string_value(args),
                                       json_string_length(args));
    } else if (args != NULL && !json_is_null(args) && p->input == NULL &&
               !p->has_args)
        p->input = json_incref((json_t *)args);
    return 0;
}

/* What a Responses event of this type tells of the answer: an end, a
 * stop without one, or the model saying something (anything but the
 * response's own lifecycle). Returns the end's name or NULL. */
static const char *note_kind(tg_stream *s, const char *type)
{
    static const char *const ends[] = {"response.completed", "response.failed",
                                       "response.incomplete"};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
        if (strcmp(type, ends[i]) == 0)
            return ends[i];
    if (strcmp(type, "response.created") != 0 &&
        strcmp(type, "response.in_progress") != 0 &&
        strcmp(type, "response.queued") != 0)
        s->said = true;
    return NULL;
}

static int event(tg_stream *s, const json_t *doc)
{
    const char *type = tg__stream_str(doc, "type");
    const char *item_id = tg__stream_str(doc, "item_id");
    long long oi = tg__stream_int(doc, "output_index");
    const json_t *item = json_object_get(doc, "item"); /* borrowed */
    tg__pending *p;
    int rc;
    if (type == NULL || strncmp(type, "response.", 9) != 0)
        return 0; /* an error event, say */
    const char *end = note_kind(s, type);
    if (end != NULL) {
        tg__stream_end(s, end);
        return strcmp(end, "response.completed") == 0
                   ? tg__stream_complete_all(s)
                   : 0;
    }
    if (str_is(type, "response.output_item.added")) {
        if (!str_is(tg__stream_str(item, "type"), "function_call"))
            return 0;
        if ((p = tg__stream_open(s, oi)) == NULL)
            return TG_ENOMEM;
        return fill(p, item, 0);
    }
    if (str_is(type, "response.function_call_arguments.delta")) {
        const json_t *d = json_object_get(doc, "delta"); /* borrowed */
        if (!json_is_string(d))
            return tg__stream_bad_event(s, "an arguments delta that is not a "
                                           "string");
        return tg__stream_piece(s, find(s, item_id, oi), json_string_value(d),
                                json_string_length(d));
    }
    if (str_is(type, "response.function_call_arguments.done")) {
        const json_t *a = json_object_get(doc, "arguments"); /* borrowed */
        if ((p = find(s, item_id, oi)) == NULL || p->done != NULL)
            return 0;
        rc = json_is_string(a)
                 ? tg__stream_set_final_args(p, json_string_value(a),
                                             json_string_length(a))
                 : 0;
        return rc != 0 ? rc : tg__stream_complete(s, p);
    }
    if (str_is(type, "response.output_item.done")) {
        if (!str_is(tg__stream_str(item, "type"), "function_call"))
            return 0;
        p = find(s, tg__stream_str(item, "id"), oi);
        if (p != NULL && p->done != NULL)
            return 0; /* its arguments' .done completed it */
        if (p == NULL) {
            /* Complete already under another entry, else never announced
             * and whole here. */
            if (tg__stream_id_complete(s, tg__stream_str(item, "call_id")))
                return 0;
            if ((p = tg__stream_open(s, oi)) == NULL)
                return TG_ENOMEM;
        }
        rc = fill(p, item, 1);
        return rc != 0 ? rc : tg__stream_complete(s, p);
    }
    return 0;
}

/* ------------------------------------------------------------ fast path */

/* A Responses event other than the four that open and complete calls: an
 * arguments delta, or one of the many that carry text, reasoning or
 * progress and no call. */
static int fast(tg_stream *s)
{
    tg__span type = {0}, item_id = {0}, delta = {0};
    long long oi = TG__NO_KEY;
    const char *k;
    size_t kn;
    int first = 1, m, rc = 0, seen_oi = 0;
    if (tg__jcur_take(&s->cur, '{') != 0)
        return TG__FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(&s->cur, &first, &k, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(k, kn, "type"))
            rc = tg__stream_fast_str(s, &type);
        else if (TG_JCUR_KEY_IS(k, kn, "item_id"))
            rc = tg__stream_fast_str(s, &item_id);
        else if (TG_JCUR_KEY_IS(k, kn, "output_index"))
            rc = tg__stream_fast_uint(s, &oi, &seen_oi);
        else if (TG_JCUR_KEY_IS(k, kn, "delta")) {
            /* Not a string: the document path ignores it too. */
            if (delta.seen)
                rc = TG__FAST_BAIL;
            else if (tg__jcur_peek(&s->cur) == '"')
                rc = tg__stream_fast_str(s, &delta);
            else {
                delta.seen = 1;
                rc = tg__stream_fast_skip(s);
            }
        } else
            rc = tg__stream_fast_skip(s);
    }
    if (rc != 0)
        return rc;
    const char *t = tg__stream_span_str(s, &type);
    if (m != 0 || tg__jcur_end(&s->cur) != 0 || t == NULL ||
        strncmp(t, "response.", 9) != 0 ||
        strcmp(t, "response.output_item.added") == 0 ||
        strcmp(t, "response.output_item.done") == 0 ||
        strcmp(t, "response.function_call_arguments.done") == 0)
        return TG__FAST_BAIL;
    int is_delta = strcmp(t, "response.function_call_arguments.delta") == 0;
    /* An end, or a delta that is not a string: the document path. */
    if ((is_delta && !delta.set) || note_kind(s, t) != NULL)
        return TG__FAST_BAIL;
    if (!is_delta)
        return 0;
    return tg__stream_piece(s, find(s, tg__stream_span_str(s, &item_id), oi),
                            tg__stream_span_str(s, &delta), delta.len);
}

const tg__stream_provider tg__stream_openai_responses = {
    .event = event,
    .fast = fast,
    .build = build,
    .whole_value_completes = true,
};
