/* SPDX-License-Identifier: MIT */
/*
 * checkpointer.h - WAL checkpoints of the journal off the writer's thread
 * (checkpointer.c says why and how).
 */
#ifndef TG_JOURNAL_CHECKPOINTER_H
#define TG_JOURNAL_CHECKPOINTER_H

#include <sqlite3.h>

#include "error.h"
#include "readpin.h"

typedef struct tg__checkpointer tg__checkpointer;

/* Takes over the checkpoints of db, a connection in WAL mode (borrowed; it
 * must outlive the checkpointer): its commits no longer checkpoint
 * themselves but wake a thread with a connection of its own, started on
 * the first checkpoint needed. *out is NULL for an in-memory database
 * (nothing to do). Returns 0 or TG_ENOMEM. Call from db's thread. */
int tg__checkpointer_attach(sqlite3 *db, tg__checkpointer **out);
/* How many checkpoints the thread completed (any thread). */
unsigned long tg__checkpointer_done(tg__checkpointer *c);
/* Lets the thread watch `pin` (borrowed; detach before closing it): once
 * no commit came for a while, it lets the pin's slots go (readpin.h), so
 * an idle writer holds back no other process's checkpoints. Starts the
 * thread. Returns 0, or TG_ENOMEM when the thread cannot start (then the
 * caller closes the pin). Call from db's thread. */
int tg__checkpointer_watch_pin(tg__checkpointer *c, tg__readpin *pin);
/* Gives db its automatic checkpoints back, stops the thread (waiting for a
 * checkpoint it runs) and frees c; before db is closed. NULL: no-op. */
void tg__checkpointer_detach(tg__checkpointer *c);

#endif
