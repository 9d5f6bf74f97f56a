/* SPDX-License-Identifier: MIT */
/*
 * record_turn.c - tg_turn_from_record: a turn of one call and its result
 * made again from their journal record, so that a result journaled long
 * ago (or by a process that died) renders in any wire format exactly as
 * the live one did - an MCP task's answer fetched after a restart.
 */
#include <string.h>

#include "error.h"
#include "format.h"
#include "turn.h"

int tg_turn_from_record(const char *format, const char *record, size_t len,
                        tg_turn **out, tg_error *err)
{
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_turn_from_record: out is NULL");
    *out = NULL;
    const tg__format *fmt = format != NULL ? tg__format_find(format) : NULL;
    if (fmt == NULL)
        return tg__error_set(err, TG_EINVAL, "unknown format '%s'",
                             format != NULL ? format : "(null)");
    if (record == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_turn_from_record: no record");
    json_error_t jerr;
    json_t *doc =
        json_loadb(record, len, JSON_REJECT_DUPLICATES, &jerr); /* new ref */
    if (doc == NULL)
        return tg__error_at(err, TG_EPARSE, jerr.line, jerr.column,
                            "record: %s", jerr.text);
    const json_t *cj = json_object_get(doc, "call");   /* borrowed */
    const json_t *rj = json_object_get(doc, "result"); /* borrowed */
    tg_call *call = NULL;
    tg_result *res = NULL;
    tg_turn *turn = NULL;
    int rc;
    if (!json_is_object(cj)) {
        rc = tg__error_set(err, TG_EPARSE,
                           "record: \"call\" must be a call record (object)");
        goto fail;
    }
    if ((rc = tg__call_from_json(cj, fmt->name, &call, err)) != 0)
        goto fail;
    if (rj != NULL && !json_is_null(rj) &&
        (rc = tg__result_from_json(rj, &res, err)) != 0)
        goto fail;
    if ((turn = tg__turn_new(fmt->name)) == NULL) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto fail;
    }
    rc = tg__turn_add_call(turn, call);
    call = NULL;
    if (rc == 0 && res != NULL) {
        rc = tg__turn_set_result(turn, 0, res);
        res = NULL;
    }
    if (rc != 0) {
        tg__error_set(err, rc, "out of memory");
        goto fail;
    }
    json_decref(doc);
    *out = turn;
    return 0;
fail:
    json_decref(doc);
    tg__call_free(call);
    tg__result_free(res);
    tg_turn_free(turn);
    return rc;
}
