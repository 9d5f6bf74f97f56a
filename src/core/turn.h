/* SPDX-License-Identifier: MIT */
/*
 * turn.h - a model turn: the calls parsed from one document, in call order,
 * and one result slot per call. Formats fill it, the runtime completes it,
 * renderers read it.
 */
#ifndef TG_CORE_TURN_H
#define TG_CORE_TURN_H

#include <jansson.h>

#include "record.h"

struct tg_turn {
    const char *format;  /* static name of the format it was parsed from */
    tg_call **calls;     /* owned */
    tg_result **results; /* owned; results[i] is NULL until call i ends */
    size_t n, cap;
    json_t *source;  /* the parsed document (new ref) or NULL; renderers
                        of formats that answer in context may read it */
    char **warnings; /* owned: what reading it ignored (tg_turn_warning) */
    size_t nwarnings;
    /* where the model's message lies in the text parsed (msg_len 0: not
     * known): tg_turn_message_span */
    size_t msg_off, msg_len;
};

/* A new empty turn of `format` (static string). NULL on OOM. */
tg_turn *tg__turn_new(const char *format);
/* Appends a call (ownership taken, also on failure); sets its index.
 * Returns 0 or TG_ENOMEM. */
int tg__turn_add_call(tg_turn *turn, tg_call *call_take);
/* Stores the result of call i (ownership taken, also on failure); replaces an
 * earlier one. Returns 0 or TG_EINVAL when i is out of range. */
int tg__turn_set_result(tg_turn *turn, size_t i, tg_result *result_take);
/* Appends a warning (formatted, copied) about what reading the turn
 * ignored. Returns 0 or TG_ENOMEM. */
int tg__turn_add_warning(tg_turn *turn, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Marks every call that appears earlier in the turn with the same id with a
 * DUPLICATE_CALL_ID pre-error (every duplicate after the first). */
void tg__turn_mark_duplicates(tg_turn *turn);
/* What every parsed turn goes through: each call's id, tool name and
 * caller id held to their limits (tg__call_check_names), then
 * tg__turn_mark_duplicates. */
void tg__turn_check_calls(tg_turn *turn);

#endif
