/* SPDX-License-Identifier: MIT */
/*
 * jcs.h - RFC 8785 JSON Canonicalization Scheme: object members sorted by
 * their UTF-16 code units, no insignificant white space, strings escaped as
 * ECMAScript's JSON.stringify does, numbers in ECMAScript's shortest
 * round-trip form. The input of every checksum.
 */
#ifndef TG_CORE_JCS_H
#define TG_CORE_JCS_H

#include <jansson.h>

#include "buf.h"
#include "jtape.h"

/* Appends the canonical form of `value` (borrowed) to out. Fails with
 * TG_EINVAL for values JCS cannot represent (NaN, infinities, integers beyond
 * 2^53 that do not round-trip through a double are written as the double),
 * TG_ENOMEM or TG_ELIMIT from the buffer. */
int tg__jcs_write(const json_t *value, tg__buf *out);

/* Appends the canonical form of the tape's document, byte for byte what
 * tg__jcs_write gives for the jansson value of the same text (jansson's
 * integers and reals are the tape's integer and real tokens; escapes are
 * decoded and written again canonically). Returns 0, TG_ENOMEM or
 * TG_ELIMIT. */
int tg__jcs_write_tape(const tg__jtape *tape, tg__buf *out);

/* Appends `len` bytes of UTF-8 text `s` as a canonical JSON string (quoted,
 * escaped as JSON.stringify does). Lets callers canonicalize a string they
 * hold as C text without building a json_t. The bytes are not validated:
 * pass valid UTF-8. Returns 0, TG_ENOMEM or TG_ELIMIT. */
int tg__jcs_write_string(const char *s, size_t len, tg__buf *out);

/* Formats a double as ECMAScript's Number.prototype.toString does (shortest
 * round-trip digits, exponent rules of ES2019 7.1.12.1) into buf (at least
 * 32 bytes). Returns the length, or -1 for NaN/infinities. */
int tg__jcs_number(double d, char *buf, size_t size);

#endif
