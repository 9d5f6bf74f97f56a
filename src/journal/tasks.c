/* SPDX-License-Identifier: MIT */
/*
 * tasks.c - durable tasks (toolgate.h, "tasks"): a call a client started
 * and comes back for by an id it was given - an MCP server's long calls -
 * kept in a `tasks` table in the journal's own file, beside the calls, so
 * that a task and its answer outlive the process that ran it. Each store
 * is a connection of its own to that file (opened like the runtime's:
 * WAL, busy timeout, the same checks of the file, recovery of calls left
 * running), used from one thread.
 *
 * A task names its call by the call's id; the journal holds the call's
 * state, so a task whose process died is seen for what it is: its row
 * names its owner (pid, start time, boot id, as the call rows do), and
 * tg_task_get hands the call's record over while the task is working, for
 * the face to settle it from (the journal's recovery gives a call left
 * running its INTERRUPTED result).
 *
 * The table is created when absent (CREATE ... IF NOT EXISTS) rather than
 * by a migration of the journal's schema: the runtime never reads it, an
 * older toolgate keeps opening the file, and the journal's migration list
 * stays the runtime's.
 *
 * Expiry: a task lives ttl_ms after its creation (NULL: for ever); reads
 * delete what expired before answering, so an expired task is as gone as
 * one that never was.
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

#define TASK_ID_MAX 128
#define LIST_DEFAULT 100
#define LIST_MAX 1000

struct tg_task_store {
    tg__journal *j;
    sqlite3 *db; /* borrowed from j */
};

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS tasks("
    " rowid INTEGER PRIMARY KEY,"
    " task_id TEXT NOT NULL UNIQUE,"
    " caller_id TEXT NOT NULL,"
    " call_id TEXT NOT NULL,"
    " status TEXT NOT NULL," /* 'working' or what the face ended it with */
    " status_message TEXT,"
    " created_at INTEGER NOT NULL," /* epoch ms */
    " updated_at INTEGER NOT NULL,"
    " ttl_ms INTEGER,"     /* NULL: no expiry */
    " expires_at INTEGER," /* created_at + ttl_ms */
    " meta TEXT,"          /* the face's JSON object */
    " answer TEXT,"        /* the face's JSON, once ended */
    " owner_pid INTEGER,"
    " owner_start INTEGER,"
    " owner_boot TEXT"
    ");"
    "CREATE INDEX IF NOT EXISTS tasks_caller ON tasks(caller_id, rowid);"
    "CREATE INDEX IF NOT EXISTS tasks_expiry ON tasks(expires_at)"
    " WHERE expires_at IS NOT NULL;";

static int db_fail(tg_task_store *ts, int rc, const char *what, tg_error *err)
{
    return tg__store_fail(ts->db, rc, "tasks", what, err);
}

static int oom(tg_error *err)
{
    return tg__error_set(err, TG_ENOMEM, "out of memory");
}

static int prepare(tg_task_store *ts, const char *sql, sqlite3_stmt **st,
                   tg_error *err)
{
    return tg__store_prepare(ts->db, "tasks", sql, st, err);
}

int tg_task_store_open(const char *journal_path, tg_task_store **out,
                       tg_error *err)
{
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "tasks: no output pointer");
    *out = NULL;
    tg_task_store *ts = calloc(1, sizeof *ts);
    if (ts == NULL)
        return oom(err);
    int rc =
        tg__store_open(journal_path != NULL ? journal_path : ":memory:", schema,
                       "tasks", &ts->j, &ts->db, err);
    if (rc != 0) {
        tg_task_store_free(ts);
        return rc;
    }
    *out = ts;
    return 0;
}

void tg_task_store_free(tg_task_store *ts)
{
    if (ts == NULL)
        return;
    tg__journal_close(ts->j);
    free(ts);
}

/* Deletes the tasks that expired. */
static int expire(tg_task_store *ts, tg_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(ts,
                     "DELETE FROM tasks WHERE expires_at IS NOT NULL"
                     " AND expires_at <= ?1",
                     &st, err);
    if (rc != 0)
        return rc;
    sqlite3_bind_int64(st, 1, tg__now_ms());
    int s = sqlite3_step(st);
    if (s != SQLITE_DONE)
        rc = db_fail(ts, s, "deleting expired tasks", err);
    sqlite3_finalize(st);
    return rc;
}

int tg_task_create(tg_task_store *ts, const char *task_id, const char *caller,
                   const char *call_id, int64_t ttl_ms, const char *meta_json,
                   tg_error *err)
{
    if (ts == NULL || task_id == NULL || caller == NULL || call_id == NULL ||
        *task_id == '\0' || strlen(task_id) > TASK_ID_MAX)
        return tg__error_set(err, TG_EINVAL,
                             "tasks: a task needs an id (1 to %d bytes), a "
                             "caller and a call id",
                             TASK_ID_MAX);
    if (meta_json != NULL) {
        json_t *m = json_loads(meta_json, 0, NULL); /* new ref */
        int ok = json_is_object(m);
        json_decref(m);
        if (!ok)
            return tg__error_set(err, TG_EINVAL,
                                 "tasks: meta must be a JSON object");
    }
    int64_t pid, start;
    const char *boot;
    tg__journal_owner(ts->j, &pid, &start, &boot);
    int64_t now = tg__now_ms();
    sqlite3_stmt *st = NULL;
    int rc = prepare(
        ts,
        "INSERT INTO tasks(task_id, caller_id, call_id, status, created_at,"
        " updated_at, ttl_ms, expires_at, meta, owner_pid, owner_start,"
        " owner_boot) VALUES (?1, ?2, ?3, 'working', ?4, ?4, ?5, ?6, ?7, ?8,"
        " ?9, ?10)",
        &st, err);
    if (rc != 0)
        return rc;
    int b =
        tg__store_bind_text(st, 1, task_id) |
        tg__store_bind_text(st, 2, caller) |
        tg__store_bind_text(st, 3, call_id) | sqlite3_bind_int64(st, 4, now) |
        tg__store_bind_text(st, 7, meta_json) | sqlite3_bind_int64(st, 8, pid) |
        sqlite3_bind_int64(st, 9, start) | tg__store_bind_text(st, 10, boot);
    if (ttl_ms >= 0) {
        b |= sqlite3_bind_int64(st, 5, ttl_ms);
        b |= sqlite3_bind_int64(
            st, 6, ttl_ms > INT64_MAX - now ? INT64_MAX : now + ttl_ms);
    }
    if (b != SQLITE_OK) {
        rc = db_fail(ts, b, "binding a task", err);
        goto done;
    }
    int s = sqlite3_step(st);
    if ((s & 0xff) == SQLITE_CONSTRAINT)
        rc = tg__error_set(err, TG_EEXIST, "tasks: task id '%s' is taken",
                           task_id);
    else if (s != SQLITE_DONE)
        rc = db_fail(ts, s, "recording a task", err);
done:
    sqlite3_finalize(st);
    return rc;
}

int tg_task_finish(tg_task_store *ts, const char *task_id, const char *status,
                   const char *message, const char *answer_json, tg_error *err)
{
    if (ts == NULL || task_id == NULL || status == NULL ||
        strcmp(status, "working") == 0 || *status == '\0')
        return tg__error_set(err, TG_EINVAL,
                             "tasks: a task ends with a status other than "
                             "working");
    sqlite3_stmt *st = NULL;
    int rc = prepare(ts,
                     "UPDATE tasks SET status = ?2, status_message = ?3,"
                     " answer = ?4, updated_at = ?5"
                     " WHERE task_id = ?1 AND status = 'working'",
                     &st, err);
    if (rc != 0)
        return rc;
    int b = tg__store_bind_text(st, 1, task_id) |
            tg__store_bind_text(st, 2, status) |
            tg__store_bind_text(st, 3, message) |
            tg__store_bind_text(st, 4, answer_json) |
            sqlite3_bind_int64(st, 5, tg__now_ms());
    int s = b == SQLITE_OK ? sqlite3_step(st) : b;
    if (s != SQLITE_DONE)
        rc = db_fail(ts, s, "ending a task", err);
    else if (sqlite3_changes(ts->db) == 0)
        rc = tg__error_set(err, TG_EEXIST,
                           "tasks: task '%s' is not working (ended, expired "
                           "or unknown)",
                           task_id);
    sqlite3_finalize(st);
    return rc;
}

/* ------------------------------------------------------------ reading */

#define TASK_COLUMNS                                                           \
    "task_id, call_id, caller_id, status, status_message, created_at,"         \
    " updated_at, ttl_ms, meta, answer, owner_pid, owner_start, owner_boot,"   \
    " rowid"
enum {
    T_ID,
    T_CALL,
    T_CALLER,
    T_STATUS,
    T_MESSAGE,
    T_CREATED,
    T_UPDATED,
    T_TTL,
    T_META,
    T_ANSWER,
    T_PID,
    T_START,
    T_BOOT
};

/* The task of the current row as the object tg_task_get describes, without
 * "call" (new ref; NULL on out of memory). */
static json_t *row_task(tg_task_store *ts, sqlite3_stmt *st)
{
    const char *status = (const char *)sqlite3_column_text(st, T_STATUS);
    bool working = status != NULL && strcmp(status, "working") == 0;
    json_t *t = json_object();
    if (t == NULL)
        return NULL;
    int bad = json_object_set_new(t, "taskId", tg__store_col_str(st, T_ID));
    bad |= json_object_set_new(t, "callId", tg__store_col_str(st, T_CALL));
    bad |= json_object_set_new(t, "caller", tg__store_col_str(st, T_CALLER));
    bad |= json_object_set_new(t, "status", tg__store_col_str(st, T_STATUS));
    bad |= json_object_set_new(t, "statusMessage",
                               tg__store_col_str(st, T_MESSAGE));
    bad |= json_object_set_new(
        t, "createdAt", json_integer(sqlite3_column_int64(st, T_CREATED)));
    bad |= json_object_set_new(
        t, "updatedAt", json_integer(sqlite3_column_int64(st, T_UPDATED)));
    bad |= json_object_set_new(
        t, "ttlMs",
        sqlite3_column_type(st, T_TTL) == SQLITE_NULL
            ? json_null()
            : json_integer(sqlite3_column_int64(st, T_TTL)));
    bad |= json_object_set_new(t, "meta", tg__store_col_json(st, T_META));
    bad |= json_object_set_new(t, "answer", tg__store_col_json(st, T_ANSWER));
    bad |= json_object_set_new(
        t, "ownerAlive",
        json_boolean(working &&
                     tg__journal_owner_alive(
                         ts->j, sqlite3_column_int64(st, T_PID),
                         sqlite3_column_int64(st, T_START),
                         (const char *)sqlite3_column_text(st, T_BOOT))));
    if (bad) {
        json_decref(t);
        return NULL;
    }
    return t;
}

int tg_task_get(tg_task_store *ts, const char *task_id, const char *caller,
                char **out, tg_error *err)
{
    sqlite3_stmt *st = NULL;
    json_t *t = NULL; /* new ref */
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "tasks: no output pointer");
    *out = NULL;
    if (ts == NULL || task_id == NULL || caller == NULL)
        return tg__error_set(err, TG_EINVAL, "tasks: no task id or caller");
    int rc = expire(ts, err);
    if (rc != 0 || (rc = prepare(ts,
                                 "SELECT " TASK_COLUMNS " FROM tasks"
                                 " WHERE task_id = ?1 AND caller_id = ?2",
                                 &st, err)) != 0)
        goto done;
    int b = tg__store_bind_text(st, 1, task_id) |
            tg__store_bind_text(st, 2, caller);
    int s = b == SQLITE_OK ? sqlite3_step(st) : b;
    if (s == SQLITE_DONE) {
        /* Another caller's task is as unknown as one that never was. */
        rc = tg__error_set(err, TG_ENOTFOUND, "no task '%s'", task_id);
        goto done;
    }
    if (s != SQLITE_ROW) {
        rc = db_fail(ts, s, "reading a task", err);
        goto done;
    }
    if ((t = row_task(ts, st)) == NULL) {
        rc = oom(err);
        goto done;
    }
    json_t *call = json_null(); /* new ref */
    const char *status = (const char *)sqlite3_column_text(st, T_STATUS);
    if (status != NULL && strcmp(status, "working") == 0) {
        /* The call's record, for a task whose process may have died. */
        char *rec = NULL;
        tg_error e2 = {0};
        int src = tg__journal_show(
            ts->j, (const char *)sqlite3_column_text(st, T_CALL), &rec, &e2);
        if (src == 0) {
            json_decref(call);
            call = json_loads(rec, 0, NULL);
            if (call == NULL)
                call = json_null();
        } else if (src != TG_ENOTFOUND) {
            tg_free(rec);
            rc = tg__error_set(err, src, "%s", e2.message);
            goto done;
        }
        tg_free(rec);
    }
    if (json_object_set_new(t, "call", call) != 0) {
        rc = oom(err);
        goto done;
    }
    rc = tg__store_dump(t, out, err);
    t = NULL;
done:
    sqlite3_finalize(st);
    json_decref(t);
    return rc;
}

int tg_task_list(tg_task_store *ts, const char *caller, const char *after,
                 size_t limit, char **out, tg_error *err)
{
    sqlite3_stmt *st = NULL;
    json_t *list = NULL; /* new ref */
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "tasks: no output pointer");
    *out = NULL;
    if (ts == NULL || caller == NULL)
        return tg__error_set(err, TG_EINVAL, "tasks: no caller");
    if (limit == 0)
        limit = LIST_DEFAULT;
    if (limit > LIST_MAX)
        limit = LIST_MAX;
    int rc = expire(ts, err);
    if (rc != 0)
        goto done;
    sqlite3_int64 from = 0;
    if (after != NULL) {
        if ((rc = prepare(ts,
                          "SELECT rowid FROM tasks WHERE task_id = ?1"
                          " AND caller_id = ?2",
                          &st, err)) != 0)
            goto done;
        int b = tg__store_bind_text(st, 1, after) |
                tg__store_bind_text(st, 2, caller);
        int s = b == SQLITE_OK ? sqlite3_step(st) : b;
        if (s == SQLITE_DONE) {
            rc = tg__error_set(err, TG_ENOTFOUND, "no task '%s' to list after",
                               after);
            goto done;
        }
        if (s != SQLITE_ROW) {
            rc = db_fail(ts, s, "reading a task", err);
            goto done;
        }
        from = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        st = NULL;
    }
    if ((rc = prepare(ts,
                      "SELECT " TASK_COLUMNS " FROM tasks"
                      " WHERE caller_id = ?1 AND rowid > ?2"
                      " ORDER BY rowid LIMIT ?3",
                      &st, err)) != 0)
        goto done;
    int b = tg__store_bind_text(st, 1, caller) |
            sqlite3_bind_int64(st, 2, from) |
            sqlite3_bind_int64(st, 3, (sqlite3_int64)limit);
    if (b != SQLITE_OK) {
        rc = db_fail(ts, b, "binding a query", err);
        goto done;
    }
    if ((list = json_array()) == NULL) {
        rc = oom(err);
        goto done;
    }
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *t = row_task(ts, st);
        if (t == NULL || json_array_append_new(list, t) != 0) {
            rc = oom(err);
            goto done;
        }
    }
    if (s != SQLITE_DONE) {
        rc = db_fail(ts, s, "listing tasks", err);
        goto done;
    }
    rc = tg__store_dump(list, out, err);
    list = NULL;
done:
    sqlite3_finalize(st);
    json_decref(list);
    return rc;
}
