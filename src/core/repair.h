/* SPDX-License-Identifier: MIT */
/*
 * repair.h - opt-in repair of arguments (limits.repair, off by default):
 * the mechanical fixes of argument text that did not parse as an object.
 * The schema-driven coercion (a string holding a number or a boolean where
 * the schema wants one) lives with the checks in src/exec; both record what
 * they did in the result's `repaired` list.
 */
#ifndef TG_CORE_REPAIR_H
#define TG_CORE_REPAIR_H

#include <stddef.h>

#include "buf.h"

#define TG_REPAIR_FENCE 1u           /* a Markdown ``` fence was stripped */
#define TG_REPAIR_TRAILING_COMMAS 2u /* commas before } or ] were dropped */
/* Bit 4 (TG_REPAIR_CLOSED) was "closed a truncated object": no longer done
 * (cut arguments are never completed), kept so that results journaled
 * before still read back with their name. */
#define TG_REPAIR_CLOSED 4u
#define TG_REPAIR_COERCED 8u /* strings were coerced (src/exec) */

/* Where text that was cut ends: it ended before its value closed. */
typedef struct tg__repair_cut {
    const char *inside; /* static: "a string", "a key", "a number", "a
                           literal", "an object", "an array", "a Markdown
                           code fence"; NULL when the text was not cut */
    int line, column;   /* of the end (1-based; columns in characters) */
} tg__repair_cut;

/* Tries the text repairs on text[0..len) (arguments that did not parse as
 * a JSON object). Returns 1 with out (a buffer of the caller's, replaced)
 * holding text that parses as a JSON object and *done the TG_REPAIR_* bits
 * of what was done; 0 when no repair gives an object (*done 0), and then,
 * when cut is not NULL, cut->inside says whether the text was cut and
 * where (cut text is never completed); TG_ENOMEM or TG_ELIMIT from the
 * buffer. */
int tg__repair_args_text(const char *text, size_t len, tg__buf *out,
                         unsigned *done, tg__repair_cut *cut);

/* A short description of one TG_REPAIR_* bit, for the result's `repaired`
 * list ("dropped trailing commas"). Static. */
const char *tg__repair_name(unsigned bit);

#endif
