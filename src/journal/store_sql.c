/* SPDX-License-Identifier: MIT */
/*
 * store_sql.c - the statement and column helpers of the stores kept in the
 * journal's file beside the calls (store_sql.h).
 */
#include "store_sql.h"

#include "error.h"

int tg__store_fail(sqlite3 *db, int rc, const char *who, const char *what,
                   tg_error *err)
{
    return tg__error_set(err, TG_EJOURNAL, "%s: %s: %s", who, what,
                         db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

int tg__store_open(const char *path, const char *schema, const char *who,
                   tg__journal **j, sqlite3 **db, tg_error *err)
{
    int rc = tg__journal_open_sqlite(path, j, err);
    if (rc != 0)
        return rc;
    *db = tg__journal_sqlite_db(*j);
    int src = sqlite3_exec(*db, schema, NULL, NULL, NULL);
    return src == SQLITE_OK
               ? 0
               : tg__store_fail(*db, src, who, "creating the tables", err);
}

int tg__store_prepare(sqlite3 *db, const char *who, const char *sql,
                      sqlite3_stmt **st, tg_error *err)
{
    int rc = sqlite3_prepare_v2(db, sql, -1, st, NULL);
    return rc == SQLITE_OK
               ? 0
               : tg__store_fail(db, rc, who, "preparing a statement", err);
}

int tg__store_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    return s != NULL ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT)
                     : sqlite3_bind_null(st, i);
}

json_t *tg__store_col_str(sqlite3_stmt *st, int c)
{
    const unsigned char *t = sqlite3_column_text(st, c);
    return t != NULL ? json_string((const char *)t) : json_null();
}

json_t *tg__store_col_json(sqlite3_stmt *st, int c)
{
    const unsigned char *t = sqlite3_column_text(st, c);
    json_t *v =
        t != NULL ? json_loads((const char *)t, JSON_DECODE_ANY, NULL) : NULL;
    return v != NULL ? v : json_null();
}

int tg__store_dump(json_t *v, char **out, tg_error *err)
{
    *out = v != NULL ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_decref(v);
    return *out != NULL ? 0 : tg__error_set(err, TG_ENOMEM, "out of memory");
}
