/* SPDX-License-Identifier: MIT */
/*
 * timeutil.h - wall-clock timestamps (RFC 3339 UTC with milliseconds) and the
 * monotonic clock that measures durations.
 */
#ifndef TG_CORE_TIMEUTIL_H
#define TG_CORE_TIMEUTIL_H

#include <jansson.h>
#include <stdint.h>

#define TG_TIME_MAX 32 /* "2026-11-22T04:17:09.123Z" + NUL fits */

/* Milliseconds since the Unix epoch, from the real-time clock. */
int64_t tg__now_ms(void);
/* Nanoseconds from the monotonic clock (durations only). */
uint64_t tg__mono_ns(void);
/* Formats epoch milliseconds as "YYYY-MM-DDTHH:MM:SS.mmmZ". Returns the length.
 */
int tg__time_format(int64_t ms, char out[TG_TIME_MAX]);
/* Parses an RFC 3339 date-time ("2026-11-22T04:17:09Z", fractional seconds
 * and numeric offsets accepted) into epoch milliseconds. Returns 0 or
 * TG_EINVAL. */
int tg__time_parse(const char *s, int64_t *ms);
/* Reads a timestamp given as an RFC 3339 string, Unix seconds, or Unix
 * milliseconds (a number above 1e11 is taken as milliseconds) from a JSON
 * value (borrowed). Returns 0 or TG_EINVAL. */
int tg__time_from_json(const json_t *v, int64_t *ms);

#endif
