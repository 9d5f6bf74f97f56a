/* SPDX-License-Identifier: MIT */
/*
 * rowvals.h - the values of one journal row, in the order of its columns.
 *
 * A call row's or a result row's values are worked out once from the call
 * and its result (sqlite_journal.c), then used three ways: bound to the
 * row's INSERT, fed to the hash chain (chain.h: the same values in the same
 * order, so the link is made of exactly what was stored), and written as
 * bytes into the committer's crash-safe log (committer.c), from which they
 * are read back on the committer's thread or, after the process died, by
 * whoever replays its log.
 *
 * Text values are borrowed: the strings must outlive the row's use.
 */
#ifndef TG_JOURNAL_ROWVALS_H
#define TG_JOURNAL_ROWVALS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "chain.h"

enum { TG_RV_NULL, TG_RV_INT, TG_RV_REAL, TG_RV_TEXT };

typedef struct tg__rowval {
    int type;      /* TG_RV_* */
    int64_t i;     /* TG_RV_INT */
    double d;      /* TG_RV_REAL */
    const char *s; /* TG_RV_TEXT: NUL-terminated, borrowed */
    size_t len;    /* TG_RV_TEXT: strlen(s) */
} tg__rowval;

/* More than the widest row (a call row's 15 values). */
#define TG_ROWVALS_MAX 16

typedef struct tg__rowvals {
    int n;
    tg__rowval v[TG_ROWVALS_MAX];
} tg__rowvals;

/* Appends one value (the caller keeps n below TG_ROWVALS_MAX). text NULL
 * appends SQL NULL. */
void tg__rowvals_null(tg__rowvals *rv);
void tg__rowvals_int(tg__rowvals *rv, int64_t i);
void tg__rowvals_real(tg__rowvals *rv, double d);
void tg__rowvals_text(tg__rowvals *rv, const char *s);

/* Binds rv's values to st's parameters first, first + 1, ... (texts
 * SQLITE_STATIC: they must live until st is reset). Returns SQLite's
 * result code. */
int tg__rowvals_bind(const tg__rowvals *rv, sqlite3_stmt *st, int first);

/* Feeds rv's values, in order, to h. */
void tg__rowvals_chain(const tg__rowvals *rv, tg__chain_hash *h);

/* Bytes tg__rowvals_write takes for rv. */
size_t tg__rowvals_size(const tg__rowvals *rv);
/* Writes rv to out (tg__rowvals_size(rv) bytes): a self-describing,
 * little-endian encoding whose texts keep their terminating NUL, so that
 * tg__rowvals_read can point into it. Returns the bytes written. */
size_t tg__rowvals_write(const tg__rowvals *rv, unsigned char *out);
/* Reads values written by tg__rowvals_write from in[0..len) into rv, its
 * texts pointing into in. *used: the bytes read. Returns 0, or -1 when the
 * bytes are not such an encoding (too short, an unknown type, a text
 * without its NUL or with a NUL inside, too many values): in is not
 * trusted (a log left by a dead process). */
int tg__rowvals_read(const unsigned char *in, size_t len, tg__rowvals *rv,
                     size_t *used);

#endif
