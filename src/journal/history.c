/* SPDX-License-Identifier: MIT */
/*
 * history.c - the journal queries of the public API (tg_journal_history,
 * tg_journal_show, tg_journal_stats): open the journal at a path, query,
 * close. Opening runs
 * recovery like any other command that opens the journal.
 *
 * A journal that does not exist is not created by a query: asking about
 * history should not leave a .toolgate directory behind. The query then runs
 * against an empty in-memory journal, so it is validated the same way and
 * answers "[]" or "not found".
 */
#include "journal.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"

static int open_for_query(const char *path, tg__journal **j, tg_error *err)
{
    struct stat sb;
    *j = NULL;
    if (path == NULL || *path == '\0')
        return tg__error_set(err, TG_EINVAL, "journal: no journal path given");
    if (stat(path, &sb) != 0 && errno == ENOENT)
        return tg__journal_open_sqlite(":memory:", j, err);
    return tg__journal_open_sqlite(path, j, err);
}

int tg_journal_history(const char *journal_path, const tg_history_query *q,
                       char **out, tg_error *err)
{
    tg__journal *j = NULL;
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "history: no output pointer");
    *out = NULL;
    int rc = open_for_query(journal_path, &j, err);
    if (rc == 0)
        rc = tg__journal_history(j, q, out, err);
    tg__journal_close(j);
    return rc;
}

int tg_journal_show(const char *journal_path, const char *call_id, char **out,
                    tg_error *err)
{
    tg__journal *j = NULL;
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "show: no output pointer");
    *out = NULL;
    int rc = open_for_query(journal_path, &j, err);
    if (rc == 0)
        rc = tg__journal_show(j, call_id, out, err);
    /* The in-memory stand-in must not be named in the answer. */
    if (rc == TG_ENOTFOUND)
        tg__error_set(err, TG_ENOTFOUND, "no call with id '%s' in journal %s",
                      call_id, journal_path);
    tg__journal_close(j);
    return rc;
}

int tg_journal_stats(const char *journal_path, const tg_history_query *q,
                     char **out, tg_error *err)
{
    tg__journal *j = NULL;
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "stats: no output pointer");
    *out = NULL;
    int rc = open_for_query(journal_path, &j, err);
    if (rc == 0)
        rc = tg__journal_stats(j, q, out, err);
    tg__journal_close(j);
    return rc;
}
