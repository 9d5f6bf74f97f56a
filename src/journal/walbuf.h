/* SPDX-License-Identifier: MIT */
/*
 * walbuf.h - the SQLite VFS the journal opens its files with: the default
 * one, but a transaction's WAL frames go out in one write (walbuf.c says
 * why and how).
 */
#ifndef TG_JOURNAL_WALBUF_H
#define TG_JOURNAL_WALBUF_H

#include <sqlite3.h>

/* The name of the VFS to pass to sqlite3_open_v2 (static), registered with
 * SQLite on the first call (any thread); NULL when it could not be (then
 * open with the default VFS: the same files, unbuffered). */
const char *tg__walbuf_vfs(void);

/* The default VFS's file under `file` and the name SQLite opened it with
 * (*name: borrowed, lives as long as the file), when `file` is a file of
 * this VFS; NULL otherwise. */
sqlite3_file *tg__walbuf_real(sqlite3_file *file, const char **name);

#endif
