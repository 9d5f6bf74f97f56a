/* SPDX-License-Identifier: MIT */
/*
 * quote.h - how much of a caller's input an error message quotes. A message
 * that echoes what it refuses ("unknown tool '...'", "invalid 'since' time
 * '...'") must not grow with that input: a 100 MB name would make a 100 MB
 * message, journaled and sent back to the model. tg__quote gives the
 * input whole when it is short and its first TG_QUOTE_MAX bytes with its
 * size otherwise.
 */
#ifndef TG_CORE_QUOTE_H
#define TG_CORE_QUOTE_H

#include <stddef.h>

/* The most bytes of one input an error message quotes. */
#define TG_QUOTE_MAX 64

/* Storage for one quotation: the cut text, an ellipsis and the size. */
typedef struct tg__quote_buf {
    char text[TG_QUOTE_MAX + 48];
} tg__quote_buf;

/* s (NUL-terminated; NULL reads as "") as an error message may quote it:
 * s itself when it has at most TG_QUOTE_MAX bytes, else its first bytes up
 * to TG_QUOTE_MAX, cut at a UTF-8 character boundary, followed by
 * "…(N bytes)" in q. The result is borrowed: s, or q's text, valid while
 * both live. */
const char *tg__quote(tg__quote_buf *q, const char *s);
/* The same for s[0..n), which need not be NUL-terminated: always copied
 * into q (cut at a NUL byte too). */
const char *tg__quoten(tg__quote_buf *q, const char *s, size_t n);

#endif
