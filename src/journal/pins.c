/* SPDX-License-Identifier: MIT */
/*
 * pins.c - the rows of the `pins` table (journal.h, "pins"; schema v9 in
 * sqlite_journal.c): the definitions of remote tools as pinned on first
 * sight or accepted by the user, and the served ones waiting for the user.
 * Each change is one short IMMEDIATE transaction on the journal's own
 * connection (same thread as the journal), so two processes accepting or
 * holding at once see each other's rows.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "journal.h"
#include "timeutil.h"

static sqlite3 *db_of(tg__journal *j, tg_error *err)
{
    sqlite3 *db = tg__journal_sqlite_db(j);
    if (db == NULL)
        tg__error_set(err, TG_EINVAL,
                      "pins: the journal is not a SQLite journal");
    return db;
}

static int db_fail(sqlite3 *db, const char *what, tg_error *err)
{
    return tg__error_set(err, TG_EJOURNAL, "pins: %s: %s", what,
                         sqlite3_errmsg(db));
}

static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
    return s != NULL ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT)
                     : sqlite3_bind_null(st, i);
}

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st,
                   tg_error *err)
{
    if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK)
        return db_fail(db, "preparing a statement", err);
    return 0;
}

/* Steps st (no rows) and finalizes it. */
static int step_done(sqlite3 *db, sqlite3_stmt *st, const char *what,
                     tg_error *err)
{
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_fail(db, what, err);
    sqlite3_finalize(st);
    return rc;
}

const char *tg__pin_state_name(tg__pin_state state)
{
    switch (state) {
    case TG_PIN_STATE_PINNED:
        return "pinned";
    case TG_PIN_STATE_PENDING:
        return "pending";
    case TG_PIN_STATE_HELD:
        return "held";
    }
    return "?";
}

static tg__pin_state state_of(const char *s)
{
    if (s != NULL && strcmp(s, "pending") == 0)
        return TG_PIN_STATE_PENDING;
    if (s != NULL && strcmp(s, "held") == 0)
        return TG_PIN_STATE_HELD;
    return TG_PIN_STATE_PINNED;
}

static char *col_dup(sqlite3_stmt *st, int col, int *nomem)
{
    const char *s = (const char *)sqlite3_column_text(st, col);
    if (s == NULL)
        return NULL;
    char *d = strdup(s);
    if (d == NULL)
        *nomem = 1;
    return d;
}

void tg__journal_pins_free(tg__pin_row *rows, size_t n)
{
    for (size_t i = 0; rows != NULL && i < n; i++) {
        free(rows[i].source);
        free(rows[i].tool);
        free(rows[i].checksum);
        free(rows[i].definition);
        free(rows[i].pending_checksum);
        free(rows[i].pending_definition);
        free(rows[i].renamed_from);
    }
    free(rows);
}

int tg__journal_pins_read(tg__journal *j, const char *source,
                          tg__pin_row **rows, size_t *n, tg_error *err)
{
    sqlite3 *db = db_of(j, err);
    sqlite3_stmt *st = NULL;
    tg__pin_row *list = NULL;
    size_t count = 0, cap = 0;
    int rc, step, nomem = 0;
    *rows = NULL;
    *n = 0;
    if (db == NULL)
        return TG_EINVAL;
    if ((rc = prepare(db,
                      "SELECT source, tool, checksum, definition, first_seen,"
                      " accepted_at, state, pending_checksum,"
                      " pending_definition, pending_since, renamed_from"
                      " FROM pins WHERE source = ?1 ORDER BY tool",
                      &st, err)) != 0)
        return rc;
    bind_text(st, 1, source);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (count == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            tg__pin_row *grown = realloc(list, ncap * sizeof *grown);
            if (grown == NULL) {
                nomem = 1;
                break;
            }
            list = grown;
            cap = ncap;
        }
        tg__pin_row *r = &list[count++];
        memset(r, 0, sizeof *r);
        r->source = col_dup(st, 0, &nomem);
        r->tool = col_dup(st, 1, &nomem);
        r->checksum = col_dup(st, 2, &nomem);
        r->definition = col_dup(st, 3, &nomem);
        r->first_seen = sqlite3_column_int64(st, 4);
        r->accepted_at = sqlite3_column_int64(st, 5);
        r->state = state_of((const char *)sqlite3_column_text(st, 6));
        r->pending_checksum = col_dup(st, 7, &nomem);
        r->pending_definition = col_dup(st, 8, &nomem);
        r->pending_since = sqlite3_column_int64(st, 9);
        r->renamed_from = col_dup(st, 10, &nomem);
        if (nomem)
            break;
    }
    if (nomem)
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
    else if (step != SQLITE_DONE)
        rc = db_fail(db, "reading pins", err);
    sqlite3_finalize(st);
    if (rc != 0) {
        tg__journal_pins_free(list, count);
        return rc;
    }
    *rows = list;
    *n = count;
    return 0;
}

static int tx_begin(sqlite3 *db, tg_error *err)
{
    return sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK
               ? 0
               : db_fail(db, "starting a transaction", err);
}

static int tx_end(sqlite3 *db, int rc, tg_error *err)
{
    if (rc == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = db_fail(db, "committing", err);
    if (!sqlite3_get_autocommit(db))
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* Runs one statement that writes a pin: ?1 source, ?2 tool, ?3 checksum,
 * ?4 definition, ?5 now, ?6 renamed_from; *changes: rows it changed. */
static int write_pin(tg__journal *j, const char *sql, const char *source,
                     const char *tool, const char *checksum,
                     const char *definition, const char *renamed_from,
                     int *changes, tg_error *err)
{
    sqlite3 *db = db_of(j, err);
    sqlite3_stmt *st = NULL;
    int rc;
    if (db == NULL)
        return TG_EINVAL;
    if (source == NULL || tool == NULL || checksum == NULL ||
        definition == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "pins: a definition needs a "
                             "source, a tool, a checksum "
                             "and its text");
    if ((rc = prepare(db, sql, &st, err)) != 0)
        return rc;
    bind_text(st, 1, source);
    bind_text(st, 2, tool);
    bind_text(st, 3, checksum);
    bind_text(st, 4, definition);
    sqlite3_bind_int64(st, 5, tg__now_ms());
    if (sqlite3_bind_parameter_count(st) >= 6)
        bind_text(st, 6, renamed_from);
    rc = step_done(db, st, "recording a pin", err);
    *changes = rc == 0 ? sqlite3_changes(db) : 0;
    return rc;
}

int tg__journal_pin_first_seen(tg__journal *j, const char *source,
                               const char *tool, const char *checksum,
                               const char *definition, tg_error *err)
{
    int changes = 0;
    int rc = write_pin(j,
                       "INSERT INTO pins(source, tool, checksum, definition,"
                       " first_seen, state) VALUES (?1, ?2, ?3, ?4, ?5,"
                       " 'pinned') ON CONFLICT DO NOTHING",
                       source, tool, checksum, definition, NULL, &changes, err);
    if (rc == 0 && changes == 0)
        rc = tg__error_set(err, TG_EEXIST,
                           "pins: '%s' of source '%s' is pinned already", tool,
                           source);
    return rc;
}

int tg__journal_pin_hold(tg__journal *j, const char *source, const char *tool,
                         const char *checksum, const char *definition,
                         const char *renamed_from, tg_error *err)
{
    int changes = 0;
    /* A pinned tool keeps its accepted definition and waits (pending); a
     * tool without one is held. The first pending_since stays while the
     * definition waiting changes. */
    return write_pin(j,
                     "INSERT INTO pins(source, tool, first_seen, state,"
                     " pending_checksum, pending_definition, pending_since,"
                     " renamed_from) VALUES (?1, ?2, ?5, 'held', ?3, ?4, ?5,"
                     " ?6) ON CONFLICT(source, tool) DO UPDATE SET"
                     " state = CASE WHEN checksum IS NULL THEN 'held'"
                     " ELSE 'pending' END,"
                     " pending_checksum = excluded.pending_checksum,"
                     " pending_definition = excluded.pending_definition,"
                     " pending_since = ifnull(pending_since, ?5),"
                     " renamed_from = excluded.renamed_from",
                     source, tool, checksum, definition, renamed_from, &changes,
                     err);
}

int tg__journal_pin_accept(tg__journal *j, const char *source, const char *tool,
                           const char *checksum, tg_error *err)
{
    sqlite3 *db = db_of(j, err);
    sqlite3_stmt *st = NULL;
    char *waiting = NULL, *renamed_from = NULL;
    int rc, step, nomem = 0;
    if (db == NULL)
        return TG_EINVAL;
    if ((rc = tx_begin(db, err)) != 0)
        return rc;
    if ((rc = prepare(db,
                      "SELECT pending_checksum, renamed_from FROM pins"
                      " WHERE source = ?1 AND tool = ?2",
                      &st, err)) != 0)
        goto done;
    bind_text(st, 1, source);
    bind_text(st, 2, tool);
    step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        waiting = col_dup(st, 0, &nomem);
        renamed_from = col_dup(st, 1, &nomem);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (step != SQLITE_ROW && step != SQLITE_DONE) {
        rc = db_fail(db, "reading a pin", err);
        goto done;
    }
    if (nomem) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto done;
    }
    if (waiting == NULL) {
        rc = tg__error_set(err, TG_ENOTFOUND,
                           "no definition of '%s' of source '%s' waits to be "
                           "accepted",
                           tool, source);
        goto done;
    }
    if (checksum != NULL && strcmp(checksum, waiting) != 0) {
        rc = tg__error_set(err, TG_EEXIST,
                           "the definition of '%s' of source '%s' waiting "
                           "now (%s) is not the one shown (%s): look at it "
                           "again",
                           tool, source, waiting, checksum);
        goto done;
    }
    if ((rc = prepare(db,
                      "UPDATE pins SET checksum = pending_checksum,"
                      " definition = pending_definition, accepted_at = ?3,"
                      " state = 'pinned', pending_checksum = NULL,"
                      " pending_definition = NULL, pending_since = NULL,"
                      " renamed_from = NULL WHERE source = ?1 AND tool = ?2",
                      &st, err)) != 0)
        goto done;
    bind_text(st, 1, source);
    bind_text(st, 2, tool);
    sqlite3_bind_int64(st, 3, tg__now_ms());
    if ((rc = step_done(db, st, "accepting a pin", err)) != 0)
        goto done;
    /* A rename: the old name's definition lives on under the new one. */
    if (renamed_from != NULL && strcmp(renamed_from, tool) != 0) {
        if ((rc =
                 prepare(db, "DELETE FROM pins WHERE source = ?1 AND tool = ?2",
                         &st, err)) != 0)
            goto done;
        bind_text(st, 1, source);
        bind_text(st, 2, renamed_from);
        rc = step_done(db, st, "retiring a renamed pin", err);
    }
done:
    free(waiting);
    free(renamed_from);
    return tx_end(db, rc, err);
}

int tg__journal_pin_forget(tg__journal *j, const char *source, const char *tool,
                           tg_error *err)
{
    sqlite3 *db = db_of(j, err);
    sqlite3_stmt *st = NULL;
    int rc;
    if (db == NULL)
        return TG_EINVAL;
    if ((rc = prepare(db, "DELETE FROM pins WHERE source = ?1 AND tool = ?2",
                      &st, err)) != 0)
        return rc;
    bind_text(st, 1, source);
    bind_text(st, 2, tool);
    if ((rc = step_done(db, st, "forgetting a pin", err)) != 0)
        return rc;
    if (sqlite3_changes(db) == 0)
        return tg__error_set(err, TG_ENOTFOUND, "no pin of '%s' of source '%s'",
                             tool, source);
    return 0;
}
