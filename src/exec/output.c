/* SPDX-License-Identifier: MIT */
/*
 * output.c - where a tool's output goes while it runs: into memory when the
 * spool is off or the call is to an artifact tool (whose results are never
 * spooled again), else through a spool writer that keeps up to
 * spool.inline_max_bytes in memory and streams the rest to the artifact
 * store. When the tool ends, its result carries the output inline or, when
 * spooled, a short handle for the model (the payload) and the artifact
 * description (result->artifact). Command tools feed it from their stdout
 * pipe; in-process handlers hand over their buffer at the end.
 */
#include <string.h>

#include "error.h"
#include "runtime.h"

int tg__output_init(tg__output *o, tg_runtime *rt, const tg_call *call)
{
    memset(o, 0, sizeof *o);
    int64_t max = rt->cfg->max_output_bytes;
    if (rt->spool == NULL || call->from_artifact_tool) {
        tg__buf_init(&o->mem, max > 0 ? (size_t)max : 0);
        return 0;
    }
    int rc = tg__spool_writer_new(rt->spool, (size_t)rt->cfg->inline_max_bytes,
                                  &o->w, &o->e);
    if (rc != 0)
        return rc;
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

void tg__output_abort(tg__output *o)
{
    tg__spool_writer_abort(o->w);
    o->w = NULL;
    tg__buf_cleanup(&o->mem);
}

/* The spooled output as the model sees it: the handle text as the payload
 * (a JSON string), the description in result->artifact. */
static tg_result *handle_result(const tg_call *call, json_t *artifact)
{
    char *text = NULL;
    if (tg__spool_handle_text(artifact, &text) != 0)
        return NULL;
    tg_result *r = tg__result_success(call, json_string(text));
    free(text);
    if (r != NULL)
        r->artifact = json_incref(artifact);
    return r;
}

tg_result *tg__output_finish(tg__output *o, const tg_call *call,
                             tg_result *failed)
{
    if (o->w == NULL) {
        tg_result *r =
            failed ? failed
                   : tg__result_success(call,
                                        tg__json_text(o->mem.data, o->mem.len));
        tg__buf_cleanup(&o->mem);
        return r;
    }
    tg_spool_outcome out = {0};
    tg_error e = {0};
    /* a writer that failed answers its error here, its file removed */
    int rc = tg__spool_writer_finish(o->w, &out, &e);
    o->w = NULL;
    tg_result *r;
    if (rc != 0) {
        /* The output is lost (spool full, I/O error): the result says so,
         * whatever the tool did. */
        tg__result_free(failed);
        r = tg__fail(call, TG_EXECUTION_STARTED, "SPOOL_FAILED", NULL,
                     "the tool's output could not be kept: %s", e.message);
    } else if (failed != NULL) {
        /* an error, timeout or cancel: what was written is kept and named */
        r = failed;
        if (out.spooled)
            r->artifact = json_incref(out.artifact);
    } else if (out.spooled) {
        r = handle_result(call, out.artifact);
    } else {
        r = tg__result_success(call,
                               tg__json_text(out.inline_data, out.inline_len));
    }
    tg__spool_outcome_cleanup(&out);
    return r;
}
