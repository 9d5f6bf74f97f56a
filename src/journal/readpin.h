/* SPDX-License-Identifier: MIT */
/*
 * readpin.h - shared locks on the WAL's read slots, held in the writer's
 * process between its transactions, so that each transaction's read lock
 * costs no system call (readpin.c says why and what keeps it safe).
 */
#ifndef TG_JOURNAL_READPIN_H
#define TG_JOURNAL_READPIN_H

#include <sqlite3.h>

typedef struct tg__readpin tg__readpin;

/* Starts holding the read slots of the database `pin` has open (a
 * connection of the journal's VFS, walbuf.c, that has read the database,
 * so its shared memory is mapped, and that runs no statement from now
 * on). Returns 0 with *out set (free with tg__readpin_close, before
 * closing pin), or TG_ENOMEM / TG_EINVAL (not the journal's VFS) with
 * *out NULL: the journal then works without, as before. */
int tg__readpin_open(sqlite3 *pin, tg__readpin **out);

/* Lets the slots go until the next write transaction of the process ends
 * (the writer is idle: other processes' checkpoints are no longer held
 * back by this one). Any thread. */
void tg__readpin_idle(tg__readpin *p);

/* Whether the slots are held now (tests, the checkpointer's idle timer). */
int tg__readpin_held(tg__readpin *p);

/* Lets the slots go and forgets p. NULL is a no-op. */
void tg__readpin_close(tg__readpin *p);

/* Called by the VFS (walbuf.c) around every xShmLock of a database file
 * named `name` (the file's name as SQLite opened it) other than a pin's:
 * `file` identifies the connection, offset/n/flags are xShmLock's, rc its
 * result (after only). */
void tg__readpin_before(const char *name, const void *file, int offset, int n,
                        int flags);
void tg__readpin_after(const char *name, const void *file, int offset, int n,
                       int flags, int rc);

#endif
