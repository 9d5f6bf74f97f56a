/* SPDX-License-Identifier: MIT */
/*
 * store_sql.h - what the stores kept in the journal's file beside the
 * calls (tasks.c, loops.c) share: preparing and binding statements, and
 * reading a row's columns as JSON values. Each store is a connection of
 * its own to the file, opened like the runtime's journal.
 */
#ifndef TG_STORE_SQL_H
#define TG_STORE_SQL_H

#include <jansson.h>
#include <sqlite3.h>

#include "journal.h"
#include "toolgate.h"

/* Opens the journal at path as a connection of a store (*j, the caller's
 * to close with tg__journal_close even on failure; *db borrowed from it)
 * and creates the store's tables (`schema`: CREATE ... IF NOT EXISTS).
 * 0, or TG_EJOURNAL naming who. */
int tg__store_open(const char *path, const char *schema, const char *who,
                   tg__journal **j, sqlite3 **db, tg_error *err);
/* Fills err with TG_EJOURNAL: "<who>: <what>: <SQLite's message>" (db's
 * message, else rc's text when db is NULL). Returns TG_EJOURNAL. */
int tg__store_fail(sqlite3 *db, int rc, const char *who, const char *what,
                   tg_error *err);
/* Prepares sql on db into *st (the caller finalizes). 0, or TG_EJOURNAL
 * naming who. */
int tg__store_prepare(sqlite3 *db, const char *who, const char *sql,
                      sqlite3_stmt **st, tg_error *err);
/* Binds text s (copied), or NULL when s is NULL; SQLite's code. */
int tg__store_bind_text(sqlite3_stmt *st, int i, const char *s);
/* Column c of the current row as a JSON string, or null (new ref; NULL on
 * out of memory). */
json_t *tg__store_col_str(sqlite3_stmt *st, int c);
/* Column c as the JSON value its text holds, or null when it holds none
 * (new ref; NULL on out of memory). */
json_t *tg__store_col_json(sqlite3_stmt *st, int c);
/* Serializes v (taken: released here) compactly into *out (the caller's,
 * tg_free). 0, or TG_ENOMEM. */
int tg__store_dump(json_t *v, char **out, tg_error *err);

#endif
