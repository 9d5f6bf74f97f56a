/* SPDX-License-Identifier: MIT */
/*
 * journal.c - the dispatchers of journal.h: every caller goes through these,
 * so a second backend only has to fill a tg__journal_ops.
 */
#include "journal.h"

#include "error.h"

static int no_journal(tg_error *err, const char *what)
{
    return tg__error_set(
        err, TG_EINVAL, "journal: %s without a journal that supports it", what);
}

int tg__journal_begin(tg__journal *j, tg_call *const *calls, size_t n,
                      tg_error *err)
{
    if (j == NULL || j->ops->begin == NULL)
        return no_journal(err, "begin");
    if (n == 0)
        return 0;
    return j->ops->begin(j, calls, n, err);
}

int tg__journal_begin_dedup(tg__journal *j, tg_call *const *calls, size_t n,
                            tg_result **replies, tg_error *err)
{
    for (size_t i = 0; replies != NULL && i < n; i++)
        replies[i] = NULL;
    if (j == NULL || j->ops->begin == NULL)
        return no_journal(err, "begin");
    if (n == 0)
        return 0;
    const tg__journal_ext_ops *ext = tg__journal_ext(j);
    if (ext == NULL || ext->begin_dedup == NULL || replies == NULL)
        return j->ops->begin(j, calls, n, err);
    return ext->begin_dedup(j, calls, n, replies, err);
}

int tg__journal_finish(tg__journal *j, tg_call *const *calls,
                       tg_result *const *results, size_t n, tg_error *err)
{
    if (j == NULL || j->ops->finish == NULL)
        return no_journal(err, "finish");
    if (n == 0)
        return 0;
    return j->ops->finish(j, calls, results, n, err);
}

int tg__journal_history(tg__journal *j, const tg_history_query *q, char **out,
                        tg_error *err)
{
    *out = NULL;
    if (j == NULL || j->ops->history == NULL)
        return no_journal(err, "history");
    return j->ops->history(j, q, out, err);
}

int tg__journal_show(tg__journal *j, const char *call_id, char **out,
                     tg_error *err)
{
    *out = NULL;
    if (j == NULL || j->ops->show == NULL)
        return no_journal(err, "show");
    return j->ops->show(j, call_id, out, err);
}

int tg__journal_stats(tg__journal *j, const tg_history_query *q, char **out,
                      tg_error *err)
{
    const tg__journal_ext_ops *ext = tg__journal_ext(j);
    *out = NULL;
    if (ext == NULL || ext->stats == NULL)
        return no_journal(err, "stats");
    return ext->stats(j, q, out, err);
}

int tg__journal_prune(tg__journal *j, size_t *pruned, tg_error *err)
{
    const tg__journal_ext_ops *ext = tg__journal_ext(j);
    *pruned = 0;
    if (ext == NULL || ext->prune == NULL)
        return no_journal(err, "prune");
    return ext->prune(j, pruned, err);
}

void tg__journal_close(tg__journal *j)
{
    if (j != NULL && j->ops->close != NULL)
        j->ops->close(j);
}
