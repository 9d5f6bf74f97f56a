/* SPDX-License-Identifier: MIT */
/*
 * stream.h - the streamed-turn reader behind the public tg_stream_* API
 * (stream.c, with one file per provider: stream_core.h), and the two hooks
 * tg_turn_parse uses to read a whole SSE transcript through it.
 */
#ifndef TG_FORMATS_STREAM_H
#define TG_FORMATS_STREAM_H

#include <stddef.h>

#include "toolgate.h"
#include "turn.h"

/* Whether text looks like an event stream: its first non-blank line starts
 * with "data:", "event:" or ":" (no JSON document does). */
int tg__stream_looks_like_sse(const char *text, size_t len);

/* Reads a whole transcript in `format` ("auto", NULL, or a provider's
 * format name) into a new turn, as tg_stream_new + feed + finish would.
 * Errors are tg_stream_feed's and tg_stream_finish's. */
int tg__stream_parse_text(const char *text, size_t len, const char *format,
                          tg_turn **out, tg_error *err);

/* Turns the stream's fast paths off: every event is read as a document.
 * For tests, which check that both ways give the same calls. */
void tg__stream_no_fast_paths(tg_stream *s);

/* Turns Chat's early rule off: a Chat call completes only when the stream
 * says so (finish_reason, [DONE], its index taken) or at the end. For
 * tests, which check that the early rule gives the same calls but where
 * the stream wrote on after a call had closed. */
void tg__stream_no_early(tg_stream *s);

#endif
