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
 * tg__journal_begin_dedup() adds idempotent re-delivery to begin, and a
 * finish may be followed by one bounded retention step (tg__journal_options).
 */
#ifndef TG_JOURNAL_JOURNAL_H
#define TG_JOURNAL_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

typedef struct tg__journal tg__journal;

/* Settings of a journal (the configuration's journal.*); all zero gives the
 * defaults. */
typedef struct tg__journal_options {
    int sync_full;     /* 1: synchronous FULL (survives power loss), else
                          NORMAL (survives any crash of the process) */
    int64_t keep_days; /* prune completed calls older than this; 0: never */
    int64_t max_rows;  /* keep the newest this many calls; 0: no limit */
    int64_t prune_every_ms; /* least time between two prune steps when
                               nothing is over the limits (0: 10 s) */
    int prune_batch;        /* most calls one prune step deletes (0: 500) */
    /* limits.max_args_bytes (0: none). A call whose arguments pass it never
     * runs (ARGUMENTS_TOO_LARGE), so its row keeps only the first
     * TG_JOURNAL_ARGS_PREFIX bytes of their text (args_raw) and their size
     * (args_bytes), not the arguments, twice over when they came as a
     * string. */
    int64_t max_args_bytes;
    /* The configured HMAC key (borrowed, read by the open call only): the
     * links of the hash chain (chain.h) are HMAC-SHA-256 with it, plain
     * SHA-256 without one (NULL). */
    const unsigned char *hmac_key;
    size_t hmac_key_len;
    /* 1: rows are written on the call path, each begin and finish a
     * transaction the caller waits for; 0 (the default): a committer
     * thread writes them from a crash-safe log (committer.h), which the
     * call path only appends to. synchronous FULL implies 1. */
    int commit_inline;
    /* bench_journal only: result rows are written without links (and call
     * rows without digests), to measure what the chain costs. Such rows
     * verify as inserted. */
    int unchained;
} tg__journal_options;

/* What the journal keeps of arguments over max_args_bytes (bytes). */
#define TG_JOURNAL_ARGS_PREFIX 1024

typedef struct tg__journal_ops {
    const char *name;
    int (*begin)(tg__journal *j, tg_call *const *calls, size_t n,
                 tg_error *err);
    int (*finish)(tg__journal *j, tg_call *const *calls,
                  tg_result *const *results, size_t n, tg_error *err);
    /* Query results as a JSON array text (caller frees). */
    int (*history)(tg__journal *j, const tg_history_query *q, char **out,
                   tg_error *err);
    int (*show)(tg__journal *j, const char *call_id, char **out, tg_error *err);
    void (*close)(tg__journal *j);
} tg__journal_ops;

/* Operations added after tg__journal_ops was fixed (test doubles fill that
 * one positionally, so it does not grow). A backend without them answers
 * NULL from tg__journal_ext: every call is begun, stats and prune fail. */
typedef struct tg__journal_ext_ops {
    /* begin with re-delivery lookups (tg__journal_begin_dedup) */
    int (*begin_dedup)(tg__journal *j, tg_call *const *calls, size_t n,
                       tg_result **replies, tg_error *err);
    /* Per-tool statistics as a JSON array text (caller frees). */
    int (*stats)(tg__journal *j, const tg_history_query *q, char **out,
                 tg_error *err);
    /* One retention step now, whatever the timer; *pruned: calls deleted. */
    int (*prune)(tg__journal *j, size_t *pruned, tg_error *err);
} tg__journal_ext_ops;

/* The extended operations of j's backend, or NULL (j NULL, or a backend
 * without them). */
const tg__journal_ext_ops *tg__journal_ext(const tg__journal *j);

struct tg__journal {
    const tg__journal_ops *ops;
};

/* Opens (creating when absent, with parent directories) the SQLite journal at
 * path. Fails with TG_EJOURNAL and a message naming the file. */
int tg__journal_open_sqlite(const char *path, tg__journal **out, tg_error *err);
/* The same with settings (opts NULL: the defaults). */
int tg__journal_open_sqlite_opts(const char *path,
                                 const tg__journal_options *opts,
                                 tg__journal **out, tg_error *err);
/* The connection's PRAGMA synchronous (1 NORMAL, 2 FULL), or a negative
 * code: lets tests see the setting took. */
int tg__journal_sqlite_synchronous(tg__journal *j);

/* The SQLite connection of a journal opened by tg__journal_open_sqlite
 * (borrowed, valid until close), NULL for another backend: for the
 * tables kept beside the calls (tasks.c). Same thread as the journal. */
struct sqlite3 *tg__journal_sqlite_db(tg__journal *j);
/* A write transaction on a SQLite journal's connection for the tables kept
 * beside the calls (loops.c), begun as the journal begins its own: a
 * transaction left open by a failure rolled back, the path checked to
 * still name the journal's file (TG_EJOURNAL otherwise), BEGIN IMMEDIATE.
 * Same thread as the journal; never while the journal has a transaction
 * open (none stays open between its calls). */
int tg__journal_tx_begin(tg__journal *j, tg_error *err);
int tg__journal_tx_commit(tg__journal *j, tg_error *err);
/* Rolls back what is still open (nothing when SQLite did already). */
void tg__journal_tx_rollback(tg__journal *j);
/* Writes j's rows on the call path from now on (journal.commit "inline"),
 * its committer, if any, stopped after writing what it held (before any
 * call is begun through it: calls in flight keep their tickets): for the loop
 * store, whose steps and the calls of an iteration share the connection's
 * transactions (a committer between them cost the loop a handoff and a
 * transaction an iteration: bench/RESULTS.md). */
void tg__journal_commit_inline(tg__journal *j);
/* The loop store (toolgate.h, "loops") on the connection of journal j
 * (a SQLite journal, borrowed: it must outlive the store), its tables
 * created when absent: the runtime's own, so a loop's steps and its calls
 * are written by one connection and neither re-reads what the other
 * wrote. *out is the caller's (tg_loop_store_free, which leaves j open).
 * TG_EINVAL when j is not a SQLite journal. */
int tg__loop_store_attach(tg__journal *j, tg_loop_store **out, tg_error *err);
/* The identity a SQLite journal writes as the owner of what it begins
 * (this process: pid, start time, kernel boot id; boot borrowed, valid
 * until close), and whether the owner a row names still runs (pids are
 * recycled, so the start time must match; no owner outlives a reboot). */
void tg__journal_owner(tg__journal *j, int64_t *pid, int64_t *start,
                       const char **boot);
int tg__journal_owner_alive(tg__journal *j, int64_t pid, int64_t start,
                            const char *boot);

/* Thin dispatchers over j->ops. close(NULL) is a no-op. */
int tg__journal_begin(tg__journal *j, tg_call *const *calls, size_t n,
                      tg_error *err);
/* Idempotent re-delivery: like tg__journal_begin, but first looks each call
 * up, inside the same write transaction (so two processes cannot both claim
 * one id). A call whose id and caller scope (caller_id, NULL = none) match a
 * journaled call that started (execution started or finished; the oldest
 * such row answers) gets no running row and a reply instead: the recorded
 * result marked replayed when the checksums match, else an error
 * CALL_ID_CONFLICT (not_started) naming both checksums; one still running gets
 * an error CALL_IN_PROGRESS. Calls of format "mcp" (request ids are scoped to
 * their connection), calls with a parse error and calls without a checksum are
 * never looked up. replies[i] is NULL for a call that should run; on
 * failure every slot is NULL. The caller owns the replies and journals them
 * with tg__journal_finish like any result. */
int tg__journal_begin_dedup(tg__journal *j, tg_call *const *calls, size_t n,
                            tg_result **replies, tg_error *err);
int tg__journal_finish(tg__journal *j, tg_call *const *calls,
                       tg_result *const *results, size_t n, tg_error *err);
int tg__journal_history(tg__journal *j, const tg_history_query *q, char **out,
                        tg_error *err);
int tg__journal_show(tg__journal *j, const char *call_id, char **out,
                     tg_error *err);
int tg__journal_stats(tg__journal *j, const tg_history_query *q, char **out,
                      tg_error *err);
int tg__journal_prune(tg__journal *j, size_t *pruned, tg_error *err);
void tg__journal_close(tg__journal *j);

/* SQLite journal: fn(ud, id) is called for each artifact id that no
 * journaled result names any more after retention pruned rows (the runtime
 * releases it from the spool). Other backends ignore it. */
void tg__journal_on_release(tg__journal *j,
                            void (*fn)(void *ud, const char *artifact_id),
                            void *ud);

/* ------------------------------------------------------------ pins */

/* Pins of remote tool definitions (pins.c; the SQLite backend only, other
 * backends fail with TG_EINVAL): for each tool of a source (an MCP server
 * behind toolgate) the definition the user accepted - or that was pinned
 * on first sight - and a served one waiting for the user. What a
 * definition is and how a served set is judged against the pins is
 * src/remote/pin.h's business; these only keep the rows. */
typedef enum tg__pin_state {
    TG_PIN_STATE_PINNED,  /* the accepted definition is in force */
    TG_PIN_STATE_PENDING, /* a changed definition waits for the user; the
                             accepted one stays */
    TG_PIN_STATE_HELD     /* a tool never accepted (new under strict
                             pinning, or a rename) waits for the user */
} tg__pin_state;

/* One row; strings owned by the array (tg__journal_pins_free). */
typedef struct tg__pin_row {
    char *source, *tool;
    char *checksum;      /* of the accepted definition; NULL when HELD */
    char *definition;    /* its JCS text; NULL when HELD */
    int64_t first_seen;  /* epoch ms */
    int64_t accepted_at; /* epoch ms; 0: pinned on first sight */
    tg__pin_state state;
    char *pending_checksum, *pending_definition; /* PENDING, HELD */
    int64_t pending_since;                       /* epoch ms, 0 none */
    char *renamed_from; /* the pinned tool this one renames, or NULL */
} tg__pin_row;

/* The pins of `source`, sorted by tool; *rows is the caller's. */
int tg__journal_pins_read(tg__journal *j, const char *source,
                          tg__pin_row **rows, size_t *n, tg_error *err);
void tg__journal_pins_free(tg__pin_row *rows, size_t n);
/* Records the first sight of a tool: pinned, never accepted by a user.
 * TG_EEXIST (nothing changed) when the source already has a row for it. */
int tg__journal_pin_first_seen(tg__journal *j, const char *source,
                               const char *tool, const char *checksum,
                               const char *definition, tg_error *err);
/* Records a served definition the user must accept: on a pinned tool it
 * becomes PENDING (the accepted definition stays); a tool without a row is
 * added HELD. renamed_from names the pinned tool whose definition this is
 * (a rename), or NULL. A newer served definition replaces a waiting one;
 * pending_since keeps the first. */
int tg__journal_pin_hold(tg__journal *j, const char *source, const char *tool,
                         const char *checksum, const char *definition,
                         const char *renamed_from, tg_error *err);
/* Accepts what waits for `tool` (what `toolgate mcp accept` calls after
 * showing the diff): its definition becomes the pinned one, accepted now;
 * for a rename, the old name's row goes. `checksum` is the definition the
 * user was shown (NULL: whatever waits); when another waits now,
 * TG_EEXIST and nothing changes, so a definition nobody saw is never
 * accepted. TG_ENOTFOUND when nothing waits for that tool. */
int tg__journal_pin_accept(tg__journal *j, const char *source, const char *tool,
                           const char *checksum, tg_error *err);
/* Forgets a tool's pin (a tool the server no longer serves, once the user
 * says so). TG_ENOTFOUND when there is none. */
int tg__journal_pin_forget(tg__journal *j, const char *source, const char *tool,
                           tg_error *err);
const char *tg__pin_state_name(tg__pin_state state);

#endif
