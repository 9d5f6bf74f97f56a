/* SPDX-License-Identifier: MIT */
/*
 * stream_anthropic.c - the Anthropic Messages stream (stream_core.h):
 * content_block_start with a tool_use block opens a call under the block's
 * index, content_block_delta with an input_json_delta adds its
 * partial_json piece to the block it names, and content_block_stop for
 * that index (or message_stop, for every block) completes it. The deltas
 * of several blocks may come in any order; one for a block already
 * stopped is ignored and reported. message_stop ends the stream.
 */
#include "stream_core.h"

#include <string.h>

static int str_is(const char *s, const char *want)
{
    return s != NULL && strcmp(s, want) == 0;
}

/* ------------------------------------------------------------ the calls */

/* The joined partial_json pieces stand for the block's input object, which
 * a whole message carries as an object: so the call gets the object (no
 * raw string), as the message's parser would give it. No pieces: the
 * start's input. */
static int anth_args(tg_call *call, const void *src)
{
    const tg__stream_args *a = src;
    tg__pending *p = a->p;
    int rc = tg__stream_args_unusable(call, a);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (tg__stream_blank(p->args.data, p->args.len))
        return tg__args_from_object_value(call, p->input);
    json_t *obj = tg__json_fast_load(p->args.data, p->args.len, 1); /* new */
    if (obj == NULL) {
        json_error_t jerr;
        obj = json_loadb(p->args.data, p->args.len, JSON_REJECT_DUPLICATES,
                         &jerr);
        if (obj == NULL && json_error_code(&jerr) == json_error_out_of_memory)
            return TG_ENOMEM;
    }
    if (json_is_object(obj))
        rc = tg__call_set_args(call, obj);
    else /* the text setter owns the message for what does not decode */
        rc = tg__call_set_args_text(call, p->args.data, p->args.len);
    json_decref(obj);
    return rc;
}

static int build(const tg__stream_args *a, tg_call **out)
{
    const tg__pending *p = a->p;
    tg__anthropic_wire w = {
        .pos = p->key >= 0 ? (size_t)p->key : a->s->turn->n,
        .id = p->id,
        .name = p->name,
        .set_args = anth_args,
        .args = a,
    };
    return tg__anthropic_call(&w, out);
}

static int event(tg_stream *s, const json_t *doc)
{
    const char *type = tg__stream_str(doc, "type");
    long long index = tg__stream_int(doc, "index");
    tg__pending *p;
    if (str_is(type, "content_block_start")) {
        const json_t *cb = json_object_get(doc, "content_block"); /* b. */
        if (!json_is_object(cb))
            return tg__stream_bad_event(s, "content_block_start without a "
                                           "content_block object");
        s->said = true;
        if (!str_is(tg__stream_str(cb, "type"), "tool_use"))
            return 0;
        if ((p = tg__stream_open(s, index)) == NULL)
            return TG_ENOMEM;
        if (tg__stream_set_once(&p->id, tg__stream_str(cb, "id")) != 0 ||
            tg__stream_set_once(&p->name, tg__stream_str(cb, "name")) != 0)
            return TG_ENOMEM;
        const json_t *input = json_object_get(cb, "input"); /* borrowed */
        if (input != NULL)
            p->input = json_incref((json_t *)input);
        return 0;
    }
    if (str_is(type, "content_block_delta")) {
        const json_t *d = json_object_get(doc, "delta");       /* borrowed */
        const json_t *pj = json_object_get(d, "partial_json"); /* borrowed */
        if (!json_is_object(d))
            return tg__stream_bad_event(s, "content_block_delta without a "
                                           "delta object");
        s->said = true;
        if (!str_is(tg__stream_str(d, "type"), "input_json_delta"))
            return 0;
        if (!json_is_string(pj))
            return tg__stream_bad_event(s, "an input_json_delta whose "
                                           "partial_json is not a string");
        /* A block that is not a tool_use (a server tool's) has no call. */
        return tg__stream_piece(s, tg__stream_find(s, index),
                                json_string_value(pj), json_string_length(pj));
    }
    if (str_is(type, "content_block_stop")) {
        p = tg__stream_find(s, index);
        return p == NULL ? 0 : tg__stream_complete(s, p);
    }
    if (str_is(type, "message_delta")) {
        const json_t *sr =
            json_object_get(json_object_get(doc, "delta"), "stop_reason");
        if (sr != NULL && !json_is_null(sr)) /* borrowed */
            s->stopped = true;
        return 0;
    }
    if (str_is(type, "message_stop")) {
        tg__stream_end(s, "message_stop");
        return tg__stream_complete_all(s);
    }
    return 0;
}

/* ------------------------------------------------------------ fast path */

/* content_block_delta; every other event gives up. */
static int fast(tg_stream *s)
{
    tg__span type = {0}, dtype = {0}, pj = {0};
    long long index = TG__NO_KEY;
    const char *k;
    size_t kn;
    int first = 1, m, rc = 0, seen_index = 0, seen_delta = 0, is_obj = 0;
    if (tg__jcur_take(&s->cur, '{') != 0)
        return TG__FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(&s->cur, &first, &k, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(k, kn, "type"))
            rc = tg__stream_fast_str(s, &type);
        else if (TG_JCUR_KEY_IS(k, kn, "index"))
            rc = tg__stream_fast_uint(s, &index, &seen_index);
        else if (TG_JCUR_KEY_IS(k, kn, "delta")) {
            rc = tg__stream_fast_object_or_null(s, &seen_delta, &is_obj);
            if (rc != 0 || !is_obj)
                continue;
            int dfirst = 1, dm;
            while (rc == 0 &&
                   (dm = tg__jcur_member(&s->cur, &dfirst, &k, &kn)) == 1) {
                if (TG_JCUR_KEY_IS(k, kn, "type"))
                    rc = tg__stream_fast_str(s, &dtype);
                else if (TG_JCUR_KEY_IS(k, kn, "partial_json"))
                    rc = tg__stream_fast_str(s, &pj);
                else
                    rc = tg__stream_fast_skip(s);
            }
            if (rc == 0 && dm != 0)
                rc = TG__FAST_BAIL;
        } else
            rc = tg__stream_fast_skip(s);
    }
    if (rc != 0)
        return rc;
    int args = tg__stream_span_is(s, &dtype, "input_json_delta");
    /* A delta that is not an object, or a partial_json that is not a
     * string: the document path says so. */
    if (m != 0 || tg__jcur_end(&s->cur) != 0 ||
        !tg__stream_span_is(s, &type, "content_block_delta") || !seen_delta ||
        !is_obj || (args && !pj.set))
        return TG__FAST_BAIL;
    s->said = true;
    if (!args)
        return 0;
    return tg__stream_piece(s, tg__stream_find(s, index),
                            tg__stream_span_str(s, &pj), pj.len);
}

const tg__stream_provider tg__stream_anthropic = {
    .event = event,
    .fast = fast,
    .build = build,
    .whole_value_completes = false,
};
