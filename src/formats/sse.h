/* SPDX-License-Identifier: MIT */
/*
 * sse.h - an incremental reader of Server-Sent Events (the WHATWG HTML
 * "event stream" interpretation): bytes go in however they were chunked,
 * events come out through a callback, each with its type, its data (the data
 * lines joined with "\n") and the last event id. Line ends may be CRLF, LF
 * or CR, split across chunks or not; comments and unknown fields are
 * skipped; a leading byte order mark is dropped.
 *
 * Two deliberate departures from the browser's reader, both because its
 * input here is a recorded transcript rather than a live connection: an
 * event still pending at the end of the input (no closing blank line) is
 * dispatched, marked at_end, instead of being discarded; and bytes are not
 * decoded, so the data is the bytes as sent (the JSON reader that consumes
 * it rejects invalid UTF-8).
 *
 * Memory is bounded: an event's data, and any line, may hold at most
 * max_data bytes (plus the field name); more fails with TG_ELIMIT. Once the
 * consumer has read the end of its stream (tg__sse_discard), what follows
 * is only counted: an event keeps a few bytes of its data, and nothing
 * fails for its length.
 */
#ifndef TG_FORMATS_SSE_H
#define TG_FORMATS_SSE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "toolgate.h"

/* The default cap of one event's data: 64 MiB. */
#define TG_SSE_DEFAULT_MAX_DATA ((size_t)64 << 20)

/* One dispatched event. Every pointer is borrowed: valid during the
 * callback only. The strings are NUL-terminated as well as counted. */
typedef struct tg__sse_event {
    const char *type; /* the event: field, "message" when there was none */
    size_t type_len;
    const char *data; /* data lines joined with "\n" */
    size_t data_len;
    const char *id; /* the last event id seen so far, "" when none */
    size_t id_len;
    uint64_t number;          /* 1-based count of dispatched events */
    uint64_t line;            /* 1-based line on which the event ended */
    uint64_t data_lines;      /* how many data lines were joined */
    uint64_t data_first_line; /* the line of the first of them */
    uint64_t data_last_line;  /* the line of the last of them */
    int at_end;  /* dispatched at the end of input, no blank line seen */
    int clipped; /* after tg__sse_discard: data past the kept bytes dropped */
} tg__sse_event;

/* Receives each event. A non-zero return (a TG_E* code, err filled) stops
 * the reader: feed and finish return it, now and on every later call. */
typedef int (*tg__sse_fn)(void *ud, const tg__sse_event *ev, tg_error *err);

typedef struct tg__sse {
    tg__buf line; /* the current line, when it spans chunks */
    tg__buf type, data, id;
    size_t max_data;
    unsigned char bom[3]; /* a possible byte order mark, held back */
    size_t bom_len;
    int started;  /* the first bytes were checked for a byte order mark */
    int cr;       /* the last byte fed was CR: a following LF belongs to it */
    int finished; /* tg__sse_finish ran */
    int failed;   /* the sticky TG_E* code of a failure, 0 while none */
    uint64_t lines, events;
    /* The reconnection time of the last valid retry field (its value all
     * ASCII digits; saturated at UINT32_MAX ms), -1 while none was seen:
     * what a live client waits before it reconnects. */
    int64_t retry_ms;
    uint64_t data_lines, data_first_line, data_last_line; /* the event's */
    size_t keep;      /* tg__sse_discard: bytes of data an event keeps */
    int discarding;   /* tg__sse_discard was called */
    int clipped;      /* the event being read lost data (discarding) */
    int line_clipped; /* the line being gathered lost bytes (discarding) */
    tg_error error;   /* the failure's report, repeated on later calls */
} tg__sse;

/* Prepares a reader whose events may each carry at most max_data bytes of
 * data (0: TG_SSE_DEFAULT_MAX_DATA). */
void tg__sse_init(tg__sse *r, size_t max_data);
/* Frees the reader's buffers. */
void tg__sse_cleanup(tg__sse *r);
/* Reads len bytes, calling fn for each event they complete. Returns 0, the
 * callback's code, TG_ELIMIT (a line or an event's data over the cap),
 * TG_ENOMEM, or TG_EINVAL after tg__sse_finish. */
int tg__sse_feed(tg__sse *r, const char *bytes, size_t len, tg__sse_fn fn,
                 void *ud, tg_error *err);
/* Ends the input: a last line without a line end is read, and an event
 * still pending is dispatched with at_end set. Returns as tg__sse_feed. */
int tg__sse_finish(tg__sse *r, tg__sse_fn fn, void *ud, tg_error *err);
/* From the next line on, the events only need counting (their consumer read
 * the end of its stream): each keeps at most keep bytes of its data (at
 * least 1; clipped set when it had more) and no line or event fails for
 * its length, so memory stays bounded by keep whatever follows. Lines,
 * events and their numbers are counted as before. May be called from the
 * callback. */
void tg__sse_discard(tg__sse *r, size_t keep);

#endif
