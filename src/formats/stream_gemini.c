/* SPDX-License-Identifier: MIT */
/*
 * stream_gemini.c - the Gemini streamGenerateContent stream (?alt=sse,
 * stream_core.h): each event a GenerateContentResponse whose
 * candidates[0].content.parts hold whole functionCall objects, so a call
 * completes as it arrives, in the order the parts come. The stream has no
 * end event: its end is the end of the input.
 */
#include "stream_core.h"

#include <stdio.h>

/* The deterministic id of docs/records.md for a Gemini call without one,
 * "gemini-<h>-<k>" as gemini.c writes it (k the call's position in the
 * turn), with h the first 8 hex digits of the SHA-256 of the stream's
 * events up to this one: a stream has no single document to hash, so the
 * hash differs from that of the response it adds up to, but the same
 * transcript always gives the same ids and another turn (another
 * responseId, other text) other ones. */
static int stream_call_id(void *ud, char *out, size_t size)
{
    tg_stream *s = ud;
    SHA256_CTX st = s->hash;
    unsigned char d[SHA256_DIGEST_LENGTH];
    if (SHA256_Final(d, &st) != 1)
        return TG_ENOMEM;
    snprintf(out, size, "gemini-%02x%02x%02x%02x-%zu", d[0], d[1], d[2], d[3],
             s->turn->n);
    return 0;
}

static int event(tg_stream *s, const json_t *doc)
{
    const json_t *cands = json_object_get(doc, "candidates"); /* borrowed */
    const json_t *cand = json_array_get(cands, 0);            /* borrowed */
    const json_t *parts =
        json_object_get(json_object_get(cand, "content"), "parts"); /* b. */
    if (cands != NULL && !json_is_array(cands))
        return tg__stream_bad_event(s, "candidates is not an array");
    if (parts != NULL && !json_is_array(parts))
        return tg__stream_bad_event(s, "candidates[0].content.parts is not "
                                       "an array");
    if (json_array_size(parts) > 0)
        s->said = true;
    if (json_is_string(json_object_get(cand, "finishReason")) ||
        json_is_string(json_object_get(json_object_get(doc, "promptFeedback"),
                                       "blockReason")))
        s->stopped = true; /* the answer's end, or a refusal to answer */
    for (size_t i = 0; i < json_array_size(parts); i++) {
        const json_t *fc =
            json_object_get(json_array_get(parts, i), "functionCall");
        /* borrowed; text, thought and code parts are not calls */
        if (fc == NULL)
            continue;
        tg__gemini_wire w = {
            .part = i,
            .not_object = !json_is_object(fc),
            .id = tg__stream_str(fc, "id"),
            .name = tg__stream_str(fc, "name"),
            .make_id = stream_call_id,
            .id_ctx = s,
            .set_args = tg__args_from_object_value,
            .args = json_object_get(fc, "args"), /* borrowed */
        };
        tg_call *call;
        int rc = tg__gemini_call(&w, &call);
        if (rc == 0)
            rc = tg__stream_add_whole(s, call);
        if (rc != 0)
            return rc;
    }
    return 0;
}

const tg__stream_provider tg__stream_gemini = {
    .event = event,
    .fast = NULL,
    .build = NULL, /* its calls never stay open */
    .whole_value_completes = false,
};
