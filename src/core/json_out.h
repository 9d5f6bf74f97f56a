/* SPDX-License-Identifier: MIT */
/*
 * json_out.h - writing JSON text into a tg__buf the same way everywhere:
 * jansson values compact, strings escaped as jansson escapes them, and
 * durations in milliseconds to the microsecond (json_out.c says why).
 */
#ifndef TG_CORE_JSON_OUT_H
#define TG_CORE_JSON_OUT_H

#include <jansson.h>
#include <stddef.h>

#include "buf.h"

/* Appends `value` (borrowed) as compact JSON (any value, not only objects
 * and arrays), as json_dumps(JSON_COMPACT | JSON_ENCODE_ANY) writes it.
 * Returns 0, TG_ENOMEM or TG_ELIMIT. */
int tg__json_dump(const json_t *value, tg__buf *out);
/* value (borrowed) as tg__json_dump writes it, in a new NUL-terminated
 * string (the caller's, free()), or NULL when memory ran out: what
 * json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY) returns, without its
 * cost (json_out.c), and with tg__json_string's spelling of strings. */
char *tg__json_dumps(const json_t *value);

/* Appends the len bytes of s as one JSON string literal (quotes included),
 * escaped as jansson's compact output does; bytes that are not valid UTF-8
 * become U+FFFD so the output is always valid JSON. Returns 0, TG_ENOMEM
 * or TG_ELIMIT. */
int tg__json_string(tg__buf *out, const char *s, size_t len);

/* Appends the integer v in decimal, as "%" JSON_INTEGER_FORMAT writes it
 * (without snprintf: a renderer of large batches writes many). Returns 0,
 * TG_ENOMEM or TG_ELIMIT. */
int tg__json_integer(tg__buf *out, long long v);

/* Appends a duration or another time span of `ms` milliseconds as a JSON
 * number rounded to the microsecond (at most 3 decimals), in its shortest
 * form with ".0" kept on whole numbers: 41.142, 0.5, 1000.0. -0 is 0.0.
 * Returns 0, TG_EINVAL for NaN and infinities (JSON has no such number),
 * TG_ENOMEM or TG_ELIMIT. The value itself is never changed: round only
 * what is written. */
int tg__json_ms(tg__buf *out, double ms);

#endif
