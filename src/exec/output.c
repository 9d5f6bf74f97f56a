/* SPDX-License-Identifier: MIT */
/*
 * output.c - where a tool's output goes while it runs: into memory when the
 * spool is off or the call is to an artifact tool (whose results are never
 * spooled again), else through a spool writer that keeps up to
 * spool.inline_max_bytes in memory and streams the rest to the artifact
 * store. When the tool ends, what it wrote becomes one "output or handle":
 * the output itself or, when spooled, a short handle for the model, with the
 * artifact description beside it. A success's payload is that text; a
 * command that did not succeed carries it for stdout and for stderr in its
 * payload (the error's details, the timeout object). Command tools feed it
 * from their pipes; in-process handlers hand over their buffer at the end.
 */
#include <string.h>

#include "output.h"

#include "text.h"

int tg__output_init(tg__output *o, const tg_config *cfg, tg_spool *spool,
                    const tg_call *call)
{
    memset(o, 0, sizeof *o);
    int64_t max = cfg->max_output_bytes;
    if (spool == NULL || call->from_artifact_tool) {
        tg__buf_init(&o->mem, max > 0 ? (size_t)max : 0);
        return 0;
    }
    int rc = tg__spool_writer_new(spool, (size_t)cfg->inline_max_bytes, &o->w,
                                  &o->e);
    if (rc != 0)
        return o->failed = rc;
    tg__spool_writer_set_max_bytes(o->w, max > 0 ? (uint64_t)max : 0);
    tg__spool_writer_set_force(o->w, !call->inline_output);
    return 0;
}

int tg__output_write(tg__output *o, const char *data, size_t len)
{
    if (o->failed != 0)
        return o->failed;
    int rc = o->w != NULL ? tg__spool_writer_write(o->w, data, len, &o->e)
                          : tg__buf_append(&o->mem, data, len);
    if (rc != 0 && o->w == NULL && o->mem.truncated)
        rc = TG_ELIMIT;
    o->failed = rc;
    return rc;
}

/* Bytes kept so far. */
static uint64_t output_bytes(const tg__output *o)
{
    return o->w != NULL ? tg__spool_writer_bytes(o->w) : o->mem.len;
}

void tg__output_abort(tg__output *o)
{
    if (o == NULL)
        return;
    tg__spool_writer_abort(o->w);
    o->w = NULL;
    tg__buf_cleanup(&o->mem);
}

/* Ends the output, the one place that makes its "output or handle": *text
 * (when text is not NULL) is what a model reads of it, a JSON string (new
 * ref): the output itself or, when it was spooled, the handle text;
 * *artifact the artifact description (new ref) when spooled, else NULL.
 * Returns 0 or a TG_E* code with e filled: the output is lost (the spool
 * failed, or memory ran out). */
static int output_take(tg__output *o, json_t **text, json_t **artifact,
                       tg_error *e)
{
    json_t *made = NULL; /* new ref */
    *artifact = NULL;
    if (text != NULL)
        *text = NULL;
    if (o->w == NULL) {
        /* Memory; a spool writer that could not start lost the output. Past
         * the cap what fits is kept (OUTPUT_LIMIT says so). */
        int rc = o->e.code != 0 ? o->failed : 0;
        if (rc != 0)
            *e = o->e;
        else if (text != NULL &&
                 (*text = tg__json_text(o->mem.data, o->mem.len)) == NULL)
            rc = tg__error_set(e, TG_ENOMEM, "out of memory");
        tg__buf_cleanup(&o->mem);
        return rc;
    }
    tg__spool_outcome out = {0};
    /* a writer that failed answers its error here, its file removed */
    int rc = tg__spool_writer_finish(o->w, &out, e);
    o->w = NULL;
    if (rc != 0)
        return rc;
    if (text == NULL) {
        /* only the artifact is wanted */
    } else if (!out.spooled) {
        made = tg__json_text(out.inline_data, out.inline_len);
    } else {
        char *handle = NULL;
        if (tg__spool_handle_text(out.artifact, &handle) == 0)
            made = json_string(handle);
        free(handle);
    }
    if (out.spooled)
        *artifact = json_incref(out.artifact);
    tg__spool_outcome_cleanup(&out);
    if (text != NULL && made == NULL) {
        json_decref(*artifact);
        *artifact = NULL;
        return tg__error_set(e, TG_ENOMEM, "out of memory");
    }
    if (text != NULL)
        *text = made;
    return 0;
}

/* The result of a call whose output could not be kept: error SPOOL_FAILED
 * saying why, whatever the tool did. */
static tg_result *lost(const tg_call *call, const tg_error *e)
{
    return tg__fail(call, TG_EXECUTION_STARTED, "SPOOL_FAILED", NULL,
                    "the tool's output could not be kept: %s", e->message);
}

tg_result *tg__output_finish(tg__output *o, const tg_call *call,
                             tg_result *failed)
{
    json_t *text = NULL, *artifact = NULL; /* new refs */
    tg_error e = {0};
    /* a cancel (or a failure of the tool's start) shows no output: what
     * was written is kept, and named when it was spooled */
    if (output_take(o, failed ? NULL : &text, &artifact, &e) != 0) {
        tg__result_free(failed);
        return lost(call, &e);
    }
    if (failed != NULL) {
        failed->artifact = artifact;
        return failed;
    }
    tg_result *r = tg__result_success(call, text);
    if (r != NULL)
        r->artifact = artifact;
    else
        json_decref(artifact);
    return r;
}

/* Puts one stream's output or handle into part as `name` (when the tool
 * wrote to it) and its artifact as "<name>_artifact". Returns 0 or a TG_E*
 * code with e filled. *first_artifact gets the first artifact attached
 * (borrowed from part). */
static int attach_stream(json_t *part, const char *name, tg__output *o,
                         json_t **first_artifact, tg_error *e)
{
    json_t *text = NULL, *artifact = NULL; /* new refs */
    if (output_bytes(o) == 0 && o->e.code == 0) {
        /* nothing written there: no member, not even the handle of an
         * empty artifact that `inline: false` would commit */
        tg__output_abort(o);
        return 0;
    }
    int rc = output_take(o, &text, &artifact, e);
    if (rc != 0)
        return rc;
    if (json_string_length(text) == 0) {
        json_decref(text); /* it wrote nothing there: no member */
    } else if (json_object_set_new(part, name, text) != 0) {
        rc = TG_ENOMEM;
    } else if (artifact != NULL) {
        char key[32];
        snprintf(key, sizeof key, "%s_artifact", name);
        if (json_object_set(part, key, artifact) != 0)
            rc = TG_ENOMEM;
        else if (*first_artifact == NULL)
            *first_artifact = artifact;
    }
    json_decref(artifact);
    return rc != 0 ? tg__error_set(e, rc, "out of memory") : 0;
}

tg_result *tg__output_attach(tg__output *out, tg__output *err,
                             const tg_call *call, tg_result *failed)
{
    json_t *part = NULL; /* borrowed: where the output goes */
    if (failed != NULL && failed->outcome == TG_OUTCOME_TIMEOUT) {
        part = json_object_get(tg__result_payload(failed), "timeout");
    } else if (failed != NULL) {
        json_t *e =
            json_object_get(tg__result_payload(failed), "error"); /* borrowed */
        part = json_object_get(e, "details");
        if (part == NULL && json_is_object(e) &&
            json_object_set_new(e, "details", json_object()) == 0)
            part = json_object_get(e, "details");
    }
    json_t *first = NULL; /* borrowed */
    tg_error e = {0};
    int rc = json_is_object(part) ? 0 : TG_ENOMEM;
    if (rc == 0)
        rc = attach_stream(part, "stdout", out, &first, &e);
    if (rc == 0 && err != NULL)
        rc = attach_stream(part, "stderr", err, &first, &e);
    tg__output_abort(out);
    tg__output_abort(err);
    if (failed == NULL)
        return NULL; /* out of memory already */
    if (rc == TG_ENOMEM && !json_is_object(part)) {
        tg__result_free(failed);
        return NULL;
    }
    if (rc != 0) {
        tg__result_free(failed);
        return lost(call, &e);
    }
    failed->artifact = json_incref(first);
    return failed;
}
