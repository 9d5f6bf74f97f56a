/* SPDX-License-Identifier: MIT */
/*
 * journal.h - the durable record of every call and result, reached through a
 * small interface so a second backend can be added without touching the
 * runtime. The SQLite backend (sqlite_journal.c) is the embedded default.
 *
 * Protocol: tg__journal_begin() commits the call rows (state "running")
 * before any of those calls starts; tg__journal_finish() commits results, each
 * in the same transaction that marks its call done, before they are rendered.
 * Both take batches so one turn costs one transaction per step (group commit).
 */
#ifndef TG_JOURNAL_JOURNAL_H
#define TG_JOURNAL_JOURNAL_H

#include <stddef.h>

#include "record.h"

typedef struct tg_journal tg_journal;

typedef struct tg_journal_ops {
    const char *name;
    int (*begin)(tg_journal *j, tg_call *const *calls, size_t n, tg_error *err);
    int (*finish)(tg_journal *j, tg_call *const *calls,
                  tg_result *const *results, size_t n, tg_error *err);
    /* Query results as a JSON array text (caller frees). */
    int (*history)(tg_journal *j, const tg_history_query *q, char **out,
                   tg_error *err);
    int (*show)(tg_journal *j, const char *call_id, char **out, tg_error *err);
    void (*close)(tg_journal *j);
} tg_journal_ops;

struct tg_journal {
    const tg_journal_ops *ops;
};

/* Opens (creating when absent, with parent directories) the SQLite journal at
 * path. Fails with TG_EJOURNAL and a message naming the file. */
int tg__journal_open_sqlite(const char *path, tg_journal **out, tg_error *err);

/* Thin dispatchers over j->ops. close(NULL) is a no-op. */
int tg__journal_begin(tg_journal *j, tg_call *const *calls, size_t n,
                      tg_error *err);
int tg__journal_finish(tg_journal *j, tg_call *const *calls,
                       tg_result *const *results, size_t n, tg_error *err);
int tg__journal_history(tg_journal *j, const tg_history_query *q, char **out,
                        tg_error *err);
int tg__journal_show(tg_journal *j, const char *call_id, char **out,
                     tg_error *err);
void tg__journal_close(tg_journal *j);

#endif
