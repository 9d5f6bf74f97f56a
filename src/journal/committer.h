/* SPDX-License-Identifier: MIT */
/*
 * committer.h - the journal's rows written off the call path.
 *
 * The call path appends each journal record (a call begun, a call
 * finished) to a crash-safe log of this process (ring.h: a file beside the
 * journal mapped MAP_SHARED, which the kernel keeps when the process dies)
 * and goes on; a thread of the committer takes the records in order and
 * hands them in batches to an apply function, which writes them into
 * SQLite in one transaction together with the sequence number of the last
 * one, and then releases them from the log. Whoever opens the journal
 * after the process died replays what its log holds past that number
 * (sqlite_journal.c), so a record is in the journal exactly once.
 */
#ifndef TG_JOURNAL_COMMITTER_H
#define TG_JOURNAL_COMMITTER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "toolgate.h"

typedef struct tg__committer tg__committer;

/* One record handed to apply: its bytes (in the log, valid during the
 * call) and sequence number. */
typedef struct tg__crecord {
    const void *data;
    size_t len;
    uint64_t seq;
} tg__crecord;

/* Writes records recs[0..n) into the journal in one transaction that also
 * records recs[n - 1].seq as done. Runs on the committer's thread. Returns
 * 0, or fills err and returns non-zero when nothing was written (the
 * committer tries again later). */
typedef int (*tg__committer_apply)(void *ud, const tg__crecord *recs, size_t n,
                                   tg_error *err);

/* Creates the log at ring_path (it must not exist) with room for capacity
 * bytes, owned by (pid, start, boot), and starts the thread. *out: owned
 * by the caller (tg__committer_stop). */
int tg__committer_start(const char *ring_path, size_t capacity, int64_t pid,
                        int64_t start, const char *boot,
                        tg__committer_apply apply, void *ud,
                        tg__committer **out, tg_error *err);

/* Appends one record made of iov[0..n) and wakes the thread. Waits while
 * the log is full. Fails (TG_EJOURNAL, the thread's last error) when the
 * log is full and the thread cannot write, or TG_EINVAL when the record
 * can never fit (tg__committer_max_record): the caller then writes it
 * itself after tg__committer_drain. Call path thread only. */
int tg__committer_append(tg__committer *c, const struct iovec *iov, int n,
                         tg_error *err);

/* The largest record the log takes. */
size_t tg__committer_max_record(const tg__committer *c);

/* Waits until every record appended so far is in the journal. Returns 0,
 * or the thread's error when it could not write them (they stay in the
 * log, for the thread's next try or for the next opener). Any thread
 * (another journal object of the process opening the same file drains
 * it: sqlite_journal.c). */
int tg__committer_drain(tg__committer *c, tg_error *err);

/* Whether records are waiting (appended, not yet in the journal). */
int tg__committer_busy(tg__committer *c);

/* Drains, stops the thread and, when every record is in the journal,
 * removes the log (returns 1); else keeps it for the next opener (0).
 * NULL is a no-op returning 1. */
int tg__committer_stop(tg__committer *c);

#endif
