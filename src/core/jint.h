/* SPDX-License-Identifier: MIT */
/*
 * jint.h - a JSON number read as an integer the way JSON Schema counts one:
 * any number with a zero fractional part is an integer, so 100, 1e2 and
 * 100.0 are the same value. jansson keeps 1e2 as a real; every reader of an
 * integer argument or setting goes through tg__json_int so that what a
 * schema accepted as an integer is read as one.
 */
#ifndef TG_CORE_JINT_H
#define TG_CORE_JINT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* True when v (borrowed, may be NULL) is an integer, or a real with no
 * fractional part within the range of int64_t; *out is then its value. */
bool tg__json_int(const json_t *v, int64_t *out);

#endif
