/* SPDX-License-Identifier: MIT */
/*
 * loops.c - durable agent loops (toolgate.h, "loops"): a loop's start and
 * every step of it kept in two tables of the journal's file, `loops` and
 * `loop_steps`, beside the calls the loop ran (which the journal keeps
 * under the caller scope "<loop id>/<iteration>"), so that a loop outlives
 * the process that ran it: `toolgate agent --resume` rebuilds the
 * conversation from the steps and answers the calls of an iteration that
 * was cut short from the journal.
 *
 * Like the tasks table (tasks.c), the tables are created when absent rather
 * than by a migration of the journal's schema: the runtime never reads
 * them. A loop row names its owner (pid, start time, boot id, as call rows
 * do), so a resume can tell a loop whose process died from one still
 * running. Every write is one transaction (several steps at once too:
 * tg_loop_store_steps), committed when the function returns, with the
 * journal's synchronous setting.
 */
#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "journal.h"
#include "store_sql.h"
#include "timeutil.h"

#define LOOP_ID_MAX 128
#define LIST_DEFAULT 20
#define LIST_MAX 1000

struct tg_loop_store {
    tg__journal *j; /* owned when opened by tg_loop_store_open */
    sqlite3 *db;    /* borrowed from j */
    int owns_journal;
    /* a step's two statements, prepared at the first step and kept */
    sqlite3_stmt *st_touch, *st_step;
};

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS loops("
    " rowid INTEGER PRIMARY KEY,"
    " loop_id TEXT NOT NULL UNIQUE,"
    " status TEXT NOT NULL," /* 'running' or the stop reason */
    " answer TEXT,"
    " created_at INTEGER NOT NULL," /* epoch ms */
    " updated_at INTEGER NOT NULL,"
    " iterations INTEGER NOT NULL DEFAULT 0,"
    " meta TEXT NOT NULL," /* the loop's JSON object */
    " owner_pid INTEGER,"
    " owner_start INTEGER,"
    " owner_boot TEXT"
    ");"
    "CREATE TABLE IF NOT EXISTS loop_steps("
    " rowid INTEGER PRIMARY KEY,"
    " loop_rowid INTEGER NOT NULL REFERENCES loops(rowid),"
    " iteration INTEGER NOT NULL,"
    " kind TEXT NOT NULL,"
    " at INTEGER NOT NULL,"
    " body TEXT NOT NULL,"
    " UNIQUE(loop_rowid, iteration, kind)"
    ");";

static int db_fail(tg_loop_store *ls, int rc, const char *what, tg_error *err)
{
    return tg__store_fail(ls->db, rc, "loops", what, err);
}

static int prepare(tg_loop_store *ls, const char *sql, sqlite3_stmt **st,
                   tg_error *err)
{
    return tg__store_prepare(ls->db, "loops", sql, st, err);
}

#define LOOP_COLUMNS                                                           \
    "loop_id, status, answer, created_at, updated_at, iterations, meta,"       \
    " owner_pid, owner_start, owner_boot, rowid"
enum {
    L_ID,
    L_STATUS,
    L_ANSWER,
    L_CREATED,
    L_UPDATED,
    L_ITERATIONS,
    L_META,
    L_PID,
    L_START,
    L_BOOT,
    L_ROWID
};

/* Finds loop `loop_id`: *st (the caller finalizes, also on failure) is on
 * its row, columns LOOP_COLUMNS. TG_ENOTFOUND for no such loop. */
static int find_loop(tg_loop_store *ls, const char *loop_id, sqlite3_stmt **st,
                     tg_error *err)
{
    int rc = prepare(
        ls, "SELECT " LOOP_COLUMNS " FROM loops WHERE loop_id = ?1", st, err);
    if (rc != 0)
        return rc;
    int b = tg__store_bind_text(*st, 1, loop_id);
    int s = b == SQLITE_OK ? sqlite3_step(*st) : b;
    if (s == SQLITE_DONE)
        return tg__error_set(err, TG_ENOTFOUND, "no loop '%s' in the journal",
                             loop_id);
    return s == SQLITE_ROW ? 0 : db_fail(ls, s, "reading a loop", err);
}

static int bad_json(const char *text, int object)
{
    json_t *v = text != NULL ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    int bad = v == NULL || (object && !json_is_object(v));
    json_decref(v);
    return bad;
}

static int bad_id(const char *loop_id)
{
    return loop_id == NULL || *loop_id == '\0' || strlen(loop_id) > LOOP_ID_MAX;
}

int tg_loop_store_open(const char *journal_path, tg_loop_store **out,
                       tg_error *err)
{
    if (out == NULL || journal_path == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "loops: no journal (a loop is kept in the "
                             "journal's file)");
    *out = NULL;
    tg_loop_store *ls = calloc(1, sizeof *ls);
    if (ls == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    ls->owns_journal = 1;
    int rc =
        tg__store_open(journal_path, schema, "loops", &ls->j, &ls->db, err);
    if (rc != 0) {
        tg_loop_store_free(ls);
        return rc;
    }
    *out = ls;
    return 0;
}

int tg__loop_store_attach(tg__journal *j, tg_loop_store **out, tg_error *err)
{
    *out = NULL;
    sqlite3 *db = tg__journal_sqlite_db(j);
    if (db == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "loops: the journal is not a SQLite journal");
    tg__journal_commit_inline(j);
    int src = sqlite3_exec(db, schema, NULL, NULL, NULL);
    if (src != SQLITE_OK)
        return tg__store_fail(db, src, "loops", "creating the tables", err);
    tg_loop_store *ls = calloc(1, sizeof *ls);
    if (ls == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    ls->j = j;
    ls->db = db;
    *out = ls;
    return 0;
}

void tg_loop_store_free(tg_loop_store *ls)
{
    if (ls == NULL)
        return;
    sqlite3_finalize(ls->st_touch);
    sqlite3_finalize(ls->st_step);
    if (ls->owns_journal)
        tg__journal_close(ls->j);
    free(ls);
}

/* *st prepared once for the store's life (kept: SQLite prepares it again
 * by itself when the schema changes), reset for a new use. */
static int kept(tg_loop_store *ls, const char *sql, sqlite3_stmt **st,
                tg_error *err)
{
    if (*st != NULL) {
        sqlite3_reset(*st);
        sqlite3_clear_bindings(*st);
        return 0;
    }
    int rc = sqlite3_prepare_v3(ls->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st,
                                NULL);
    return rc == SQLITE_OK ? 0 : db_fail(ls, rc, "preparing a statement", err);
}

/* Runs a statement that changes rows; 0, or TG_EJOURNAL saying what. */
static int run(tg_loop_store *ls, sqlite3_stmt *st, int bound, const char *what,
               tg_error *err)
{
    int s = bound == SQLITE_OK ? sqlite3_step(st) : bound;
    return s == SQLITE_DONE ? 0 : db_fail(ls, s, what, err);
}

int tg_loop_store_begin(tg_loop_store *ls, const char *loop_id,
                        const char *meta_json, tg_error *err)
{
    if (ls == NULL || bad_id(loop_id) || bad_json(meta_json, 1))
        return tg__error_set(err, TG_EINVAL,
                             "loops: a loop needs an id (1 to %d bytes) and "
                             "a JSON object",
                             LOOP_ID_MAX);
    int64_t pid, start;
    const char *boot;
    tg__journal_owner(ls->j, &pid, &start, &boot);
    sqlite3_stmt *st = NULL;
    int rc = prepare(ls,
                     "INSERT INTO loops(loop_id, status, created_at,"
                     " updated_at, meta, owner_pid, owner_start, owner_boot)"
                     " VALUES (?1, 'running', ?2, ?2, ?3, ?4, ?5, ?6)",
                     &st, err);
    if (rc != 0)
        return rc;
    int b = tg__store_bind_text(st, 1, loop_id) |
            sqlite3_bind_int64(st, 2, tg__now_ms()) |
            tg__store_bind_text(st, 3, meta_json) |
            sqlite3_bind_int64(st, 4, pid) | sqlite3_bind_int64(st, 5, start) |
            tg__store_bind_text(st, 6, boot);
    int s = b == SQLITE_OK ? sqlite3_step(st) : b;
    if ((s & 0xff) == SQLITE_CONSTRAINT)
        rc = tg__error_set(err, TG_EEXIST, "loops: loop id '%s' is taken",
                           loop_id);
    else if (s != SQLITE_DONE)
        rc = db_fail(ls, s, "recording a loop", err);
    sqlite3_finalize(st);
    return rc;
}

int tg_loop_store_adopt(tg_loop_store *ls, const char *loop_id, tg_error *err)
{
    if (ls == NULL || bad_id(loop_id))
        return tg__error_set(err, TG_EINVAL, "loops: no loop id");
    sqlite3_stmt *st = NULL;
    int rc = find_loop(ls, loop_id, &st, err);
    if (rc != 0)
        goto done;
    const char *status = (const char *)sqlite3_column_text(st, L_STATUS);
    if (status == NULL ||
        (strcmp(status, "running") != 0 && strcmp(status, "failed") != 0 &&
         strcmp(status, "canceled") != 0)) {
        rc = tg__error_set(err, TG_EEXIST,
                           "loop '%s' ended (%s); only a loop that was cut "
                           "short, failed or was canceled is resumed",
                           loop_id, status ? status : "?");
        goto done;
    }
    int64_t opid = sqlite3_column_int64(st, L_PID);
    if (strcmp(status, "running") == 0 &&
        tg__journal_owner_alive(
            ls->j, opid, sqlite3_column_int64(st, L_START),
            (const char *)sqlite3_column_text(st, L_BOOT))) {
        rc = tg__error_set(err, TG_EEXIST,
                           "loop '%s' is running in process %lld", loop_id,
                           (long long)opid);
        goto done;
    }
    sqlite3_finalize(st);
    st = NULL;
    int64_t pid, start;
    const char *boot;
    tg__journal_owner(ls->j, &pid, &start, &boot);
    if ((rc = prepare(ls,
                      "UPDATE loops SET status = 'running', owner_pid = ?2,"
                      " owner_start = ?3, owner_boot = ?4, updated_at = ?5"
                      " WHERE loop_id = ?1",
                      &st, err)) != 0)
        goto done;
    int b = tg__store_bind_text(st, 1, loop_id) |
            sqlite3_bind_int64(st, 2, pid) | sqlite3_bind_int64(st, 3, start) |
            tg__store_bind_text(st, 4, boot) |
            sqlite3_bind_int64(st, 5, tg__now_ms());
    rc = run(ls, st, b, "taking a loop over", err);
done:
    sqlite3_finalize(st);
    return rc;
}

/* Writes one step in the open transaction: the loop touched (its
 * iteration count), the step inserted. */
static int write_step(tg_loop_store *ls, const char *loop_id, int64_t now,
                      const tg_loop_step_rec *step, tg_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc;
    if ((rc = kept(ls,
                   "UPDATE loops SET updated_at = ?2,"
                   " iterations = max(iterations, ?3) WHERE loop_id = ?1",
                   &ls->st_touch, err)) != 0)
        return rc;
    st = ls->st_touch;
    int b = tg__store_bind_text(st, 1, loop_id) |
            sqlite3_bind_int64(st, 2, now) |
            sqlite3_bind_int(st, 3, step->iteration);
    if ((rc = run(ls, st, b, "recording a step", err)) != 0)
        goto done;
    if (sqlite3_changes(ls->db) == 0) {
        rc = tg__error_set(err, TG_ENOTFOUND, "no loop '%s' in the journal",
                           loop_id);
        goto done;
    }
    sqlite3_reset(st);
    if ((rc = kept(ls,
                   "INSERT INTO loop_steps(loop_rowid, iteration, kind, at,"
                   " body) SELECT rowid, ?2, ?3, ?4, ?5 FROM loops"
                   " WHERE loop_id = ?1",
                   &ls->st_step, err)) != 0)
        return rc;
    st = ls->st_step;
    b = tg__store_bind_text(st, 1, loop_id) |
        sqlite3_bind_int(st, 2, step->iteration) |
        tg__store_bind_text(st, 3, step->kind) |
        sqlite3_bind_int64(st, 4, now) |
        tg__store_bind_text(st, 5, step->body_json);
    int s = b == SQLITE_OK ? sqlite3_step(st) : b;
    if ((s & 0xff) == SQLITE_CONSTRAINT)
        rc = tg__error_set(err, TG_EEXIST,
                           "loops: loop '%s' has its %s of iteration %d",
                           loop_id, step->kind, step->iteration);
    else if (s != SQLITE_DONE)
        rc = db_fail(ls, s, "recording a step", err);
done:
    sqlite3_reset(st);
    return rc;
}

int tg_loop_store_steps(tg_loop_store *ls, const char *loop_id,
                        const tg_loop_step_rec *steps, size_t n, tg_error *err)
{
    if (ls == NULL || bad_id(loop_id) || (n > 0 && steps == NULL))
        return tg__error_set(err, TG_EINVAL, "loops: steps need a loop id");
    for (size_t i = 0; i < n; i++)
        if (steps[i].iteration < 1 || steps[i].kind == NULL ||
            *steps[i].kind == '\0' || bad_json(steps[i].body_json, 0))
            return tg__error_set(err, TG_EINVAL,
                                 "loops: a step needs a loop id, an "
                                 "iteration >= 1, a kind and a JSON body");
    if (n == 0)
        return 0;
    /* The journal's own begin: the file checked to be the journal's still,
     * and nothing a failure left open carried into this step. */
    int rc = tg__journal_tx_begin(ls->j, err);
    if (rc != 0)
        return rc;
    int64_t now = tg__now_ms();
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = write_step(ls, loop_id, now, &steps[i], err);
    if (rc == 0)
        rc = tg__journal_tx_commit(ls->j, err);
    if (rc != 0)
        tg__journal_tx_rollback(ls->j);
    return rc;
}

int tg_loop_store_step(tg_loop_store *ls, const char *loop_id, int iteration,
                       const char *kind, const char *body_json, tg_error *err)
{
    tg_loop_step_rec step = {iteration, kind, body_json};
    return tg_loop_store_steps(ls, loop_id, &step, 1, err);
}

int tg_loop_store_end(tg_loop_store *ls, const char *loop_id,
                      const char *status, const char *answer, tg_error *err)
{
    if (ls == NULL || bad_id(loop_id) || status == NULL || *status == '\0' ||
        strcmp(status, "running") == 0)
        return tg__error_set(err, TG_EINVAL,
                             "loops: a loop ends with a status other than "
                             "running");
    sqlite3_stmt *st = NULL;
    int rc = prepare(ls,
                     "UPDATE loops SET status = ?2, answer = ?3,"
                     " updated_at = ?4 WHERE loop_id = ?1",
                     &st, err);
    if (rc != 0)
        return rc;
    int b = tg__store_bind_text(st, 1, loop_id) |
            tg__store_bind_text(st, 2, status) |
            tg__store_bind_text(st, 3, answer) |
            sqlite3_bind_int64(st, 4, tg__now_ms());
    rc = run(ls, st, b, "ending a loop", err);
    if (rc == 0 && sqlite3_changes(ls->db) == 0)
        rc = tg__error_set(err, TG_ENOTFOUND, "no loop '%s' in the journal",
                           loop_id);
    sqlite3_finalize(st);
    return rc;
}

/* ------------------------------------------------------------ reading */

/* The loop of the current row, without "steps" (new ref; NULL on out of
 * memory). */
static json_t *row_loop(tg_loop_store *ls, sqlite3_stmt *st)
{
    const char *status = (const char *)sqlite3_column_text(st, L_STATUS);
    bool running = status != NULL && strcmp(status, "running") == 0;
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    int bad = json_object_set_new(o, "loop_id", tg__store_col_str(st, L_ID));
    bad |= json_object_set_new(o, "status", tg__store_col_str(st, L_STATUS));
    bad |= json_object_set_new(o, "answer", tg__store_col_str(st, L_ANSWER));
    bad |= json_object_set_new(
        o, "created_at", json_integer(sqlite3_column_int64(st, L_CREATED)));
    bad |= json_object_set_new(
        o, "updated_at", json_integer(sqlite3_column_int64(st, L_UPDATED)));
    bad |= json_object_set_new(
        o, "iterations", json_integer(sqlite3_column_int64(st, L_ITERATIONS)));
    bad |= json_object_set_new(o, "meta", tg__store_col_json(st, L_META));
    bad |= json_object_set_new(
        o, "owner_alive",
        json_boolean(running &&
                     tg__journal_owner_alive(
                         ls->j, sqlite3_column_int64(st, L_PID),
                         sqlite3_column_int64(st, L_START),
                         (const char *)sqlite3_column_text(st, L_BOOT))));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The steps of the loop at rowid `rowid`, in the order recorded (new ref in
 * *out). */
static int read_steps(tg_loop_store *ls, sqlite3_int64 rowid, json_t **out,
                      tg_error *err)
{
    sqlite3_stmt *st = NULL;
    json_t *steps = json_array(); /* new ref */
    int rc = steps != NULL ? prepare(ls,
                                     "SELECT iteration, kind, at, body FROM"
                                     " loop_steps WHERE loop_rowid = ?1"
                                     " ORDER BY rowid",
                                     &st, err)
                           : tg__error_set(err, TG_ENOMEM, "out of memory");
    if (rc != 0)
        goto done;
    sqlite3_bind_int64(st, 1, rowid);
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *step =
            json_pack("{s:I,s:o,s:I,s:o}", "iteration",
                      (json_int_t)sqlite3_column_int64(st, 0), "kind",
                      tg__store_col_str(st, 1), "at",
                      (json_int_t)sqlite3_column_int64(st, 2), "body",
                      tg__store_col_json(st, 3)); /* new ref */
        if (step == NULL || json_array_append_new(steps, step) != 0) {
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
            goto done;
        }
    }
    if (s != SQLITE_DONE)
        rc = db_fail(ls, s, "reading a loop's steps", err);
done:
    sqlite3_finalize(st);
    if (rc == 0)
        *out = steps;
    else
        json_decref(steps);
    return rc;
}

int tg_loop_store_get(tg_loop_store *ls, const char *loop_id, char **out,
                      tg_error *err)
{
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "loops: no output pointer");
    *out = NULL;
    if (ls == NULL || bad_id(loop_id))
        return tg__error_set(err, TG_EINVAL, "loops: no loop id");
    sqlite3_stmt *st = NULL;
    json_t *o = NULL, *steps = NULL; /* new refs */
    int rc = find_loop(ls, loop_id, &st, err);
    if (rc != 0)
        goto done;
    if ((o = row_loop(ls, st)) == NULL) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = read_steps(ls, sqlite3_column_int64(st, L_ROWID), &steps, err)) !=
        0)
        goto done;
    if (json_object_set_new(o, "steps", steps) != 0) {
        steps = NULL;
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto done;
    }
    rc = tg__store_dump(o, out, err);
    o = NULL;
done:
    sqlite3_finalize(st);
    json_decref(o);
    return rc;
}

int tg_loop_store_list(tg_loop_store *ls, size_t limit, char **out,
                       tg_error *err)
{
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "loops: no output pointer");
    *out = NULL;
    if (ls == NULL)
        return tg__error_set(err, TG_EINVAL, "loops: no store");
    if (limit == 0)
        limit = LIST_DEFAULT;
    if (limit > LIST_MAX)
        limit = LIST_MAX;
    sqlite3_stmt *st = NULL;
    json_t *list = json_array(); /* new ref */
    int rc = list != NULL ? prepare(ls,
                                    "SELECT " LOOP_COLUMNS " FROM loops"
                                    " ORDER BY rowid DESC LIMIT ?1",
                                    &st, err)
                          : tg__error_set(err, TG_ENOMEM, "out of memory");
    if (rc != 0)
        goto done;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)limit);
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *o = row_loop(ls, st);
        if (o == NULL || json_array_append_new(list, o) != 0) {
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
            goto done;
        }
    }
    if (s != SQLITE_DONE) {
        rc = db_fail(ls, s, "listing loops", err);
        goto done;
    }
    rc = tg__store_dump(list, out, err);
    list = NULL;
done:
    sqlite3_finalize(st);
    json_decref(list);
    return rc;
}
