/* SPDX-License-Identifier: MIT */
/*
 * sqlite_journal.c - the SQLite backend of journal.h: schema and forward
 * migrations (PRAGMA user_version), the write-ahead call rows (each with an
 * entry in the small `running` table) and the result rows (one transaction
 * per batch, which takes the entries out), recovery of calls left running by
 * a dead process, and the history/show queries.
 *
 * Calls are keyed by rowid, not by wire id: the same id comes back in many
 * turns over time. Each journal object owns one connection and is used from
 * one thread (the runtime's loop thread); several processes, each with its
 * own connection, may share one file (WAL, busy timeout, BEGIN IMMEDIATE).
 *
 * Memory of the backend itself (the object, the pointer map) comes from
 * sqlite3_malloc so the failing-allocation tests reach it too.
 *
 * The file is toolgate's alone (exec/state.c keeps tools away from it), and
 * the journal checks that it stays so: a file with a second name (a hard
 * link, through which something else could write it) is refused at open,
 * and every transaction first checks that the path still names the file
 * SQLite has open, with one name. Moved, removed or replaced, it is not
 * written to any more: results would go to a file nobody reads, or a
 * replaced one could serve forged answers.
 */
#include "checkpointer.h"
#include "committer.h"
#include "ring.h"
#include "readpin.h"
#include "walbuf.h"
#include "journal.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "buf.h"
#include "chain.h"
#include "rowvals.h"
#include "error.h"
#include "quote.h"
#include "hashmap.h"
#include "json_out.h"
#include "timeutil.h"
#include "utf8.h"

#define DEFAULT_LIMIT 20
#define MAX_LIMIT 100000
#define DEFAULT_PRUNE_EVERY_MS 10000
#define DEFAULT_PRUNE_BATCH 500
#define DAY_MS INT64_C(86400000)
/* Ids probed by one re-delivery statement (see plan_lookups). */
#define PROBE_IDS 64
/* How many sizes of multi-row INSERT there are (see row_sizes). */
#define N_ROW_SIZES 4

/* The page size of a journal this toolgate creates. Each page a transaction
 * dirties goes into the WAL whole, and SQLite checksums every byte of it:
 * a call that comes alone dirties about ten pages in its two transactions
 * (a row and an index entry or two of ~100 bytes in each), so at 4,096
 * bytes a page most of the 40 KiB written and checksummed was untouched
 * bytes, and the checksum was a third of the journal's instructions a call
 * (bench/RESULTS.md). Journals made before keep their page size: SQLite
 * cannot change it in WAL mode, and nothing depends on it. */
#ifndef TG_JOURNAL_PAGE_SIZE
#define TG_JOURNAL_PAGE_SIZE 1024
#endif
#define STR_(x) #x
#define STR(x) STR_(x)

/* Forward migrations: migrations[v] brings a journal from schema version v to
 * v + 1. Append only; never edit a shipped entry. Columns that later features
 * of the journal need (scope for re-delivery, retention) are added by new
 * entries with ALTER TABLE, which SQLite does without a rewrite. */
static const char *const migrations[] = {
    /* v1 */
    "CREATE TABLE calls("
    " rowid INTEGER PRIMARY KEY,"
    " id TEXT NOT NULL,"
    " tool TEXT NOT NULL,"
    " args TEXT,"     /* compact JSON object, NULL if malformed */
    " args_raw TEXT," /* the wire's string form, when a string */
    " checksum TEXT,"
    " caller_id TEXT,"
    " context TEXT," /* JSON object or NULL */
    " skills TEXT,"  /* JSON array or NULL */
    " format TEXT NOT NULL,"
    " idx INTEGER NOT NULL DEFAULT 0,"
    " inline_output INTEGER NOT NULL DEFAULT 1,"
    " from_artifact_tool INTEGER NOT NULL DEFAULT 0,"
    " created_at INTEGER NOT NULL," /* epoch ms */
    " started_at INTEGER NOT NULL," /* epoch ms, when the row was begun */
    " state TEXT NOT NULL,"         /* 'running' | 'done' */
    " owner_pid INTEGER,"
    " owner_start INTEGER," /* /proc/PID/stat field 22, 0 unknown */
    " owner_boot TEXT"      /* kernel boot id, NULL unknown */
    ");"
    "CREATE TABLE results("
    " call_rowid INTEGER PRIMARY KEY"
    "  REFERENCES calls(rowid) ON DELETE CASCADE,"
    " id TEXT NOT NULL,"
    " tool TEXT NOT NULL,"
    " outcome INTEGER NOT NULL," /* tg_outcome: fixed values 0..4 */
    " execution TEXT NOT NULL,"
    " payload TEXT NOT NULL,"
    " content TEXT,"
    " artifact TEXT,"
    " duration_ms REAL NOT NULL DEFAULT 0,"
    " exit_status INTEGER,"
    " completed_at INTEGER NOT NULL," /* epoch ms */
    " replayed INTEGER NOT NULL DEFAULT 0"
    ");"
    /* results' rowid is call_rowid, so each of these indexes already ends in
     * it and "ORDER BY completed_at DESC, call_rowid DESC" needs no sort. */
    "CREATE INDEX results_completed ON results(completed_at);"
    "CREATE INDEX results_tool ON results(tool, completed_at);"
    "CREATE INDEX results_outcome ON results(outcome, completed_at);"
    "CREATE INDEX calls_id ON calls(id);"
    "CREATE INDEX calls_caller ON calls(caller_id);"
    /* Recovery looks only at running rows; a partial index keeps that cheap
     * however long the history grows. */
    "CREATE INDEX calls_running ON calls(owner_pid) WHERE state = 'running';",
    /* v2: what limits.repair did to a call's arguments (TG_REPAIR_* bits;
     * the result record lists them as `repaired`). */
    "ALTER TABLE results ADD COLUMN repaired INTEGER NOT NULL DEFAULT 0;",
    /* v3: re-delivery looks a call up by id within its caller scope, oldest
     * row first; (id, caller_id) answers that, and every lookup by id alone
     * that calls_id served. */
    "CREATE INDEX IF NOT EXISTS calls_scope ON calls(id, caller_id);"
    "DROP INDEX IF EXISTS calls_id;",
    /* v4: `history --caller X` newest first. Through calls_caller it sorted
     * all of the caller's rows (9 s at 10 M rows); with the caller on the
     * result, one index walk in order answers it. */
    "ALTER TABLE results ADD COLUMN caller_id TEXT;"
    "UPDATE results SET caller_id ="
    " (SELECT caller_id FROM calls WHERE calls.rowid = results.call_rowid);"
    "CREATE INDEX results_caller ON results(caller_id, completed_at);"
    /* ... and `stats --tool X` reads its columns from the tool's index
     * alone instead of one table lookup per row (64 s at 10 M rows). */
    "DROP INDEX results_tool;"
    "CREATE INDEX results_tool ON results(tool, completed_at, outcome,"
    " replayed, duration_ms);",
    /* v5: running calls in a table of their own. A call row used to be
     * written twice, inserted `running` and updated `done` in the result's
     * transaction, which dirtied the big table's pages a second time (and a
     * partial index with them) and cost about an eighth of the journal's
     * throughput. Now it is written once, and `running` holds ranges of
     * call rowids: a batch's rows are consecutive, so a turn enters as one
     * range with its call rows and leaves with its results. The table is
     * call_rows; `calls` is a view with the columns of v1-v4 and state
     * computed, so what readers of the file saw stays true, and writes
     * through it (a fake running call in a test, an older toolgate still
     * running) land in both tables as before. state stays as v4_state,
     * empty in new rows: dropping a column rewrites the whole table.
     * calls_caller answers no query since v4. Results keep the decisions of
     * the policy, hooks and sandbox. */
    "DROP INDEX IF EXISTS calls_caller;"
    "ALTER TABLE calls RENAME TO call_rows;"
    "ALTER TABLE call_rows RENAME COLUMN state TO v4_state;"
    "CREATE TABLE running("
    " first INTEGER PRIMARY KEY," /* rowid of a range's first call */
    " last INTEGER NOT NULL"      /* and of its last; ranges never overlap */
    ");"
    "INSERT INTO running(first, last)"
    " SELECT rowid, rowid FROM call_rows WHERE v4_state = 'running';"
    "DROP INDEX IF EXISTS calls_running;"
    "ALTER TABLE results ADD COLUMN decisions TEXT;" /* JSON object or NULL */
    "CREATE VIEW calls AS SELECT c.rowid AS rowid, c.id, c.tool, c.args,"
    " c.args_raw, c.checksum, c.caller_id, c.context, c.skills, c.format,"
    " c.idx, c.inline_output, c.from_artifact_tool, c.created_at,"
    " c.started_at, CASE WHEN (SELECT u.last FROM running u"
    " WHERE u.first <= c.rowid ORDER BY u.first DESC LIMIT 1) >= c.rowid"
    " THEN 'running' ELSE 'done' END AS state,"
    " c.owner_pid, c.owner_start, c.owner_boot FROM call_rows c;"
    /* Writes through the view. Taking one rowid out of its range is the
     * journal's own three steps (running_remove) for a range of one. */
    "CREATE TRIGGER calls_insert INSTEAD OF INSERT ON calls BEGIN"
    " INSERT INTO call_rows(rowid, id, tool, args, args_raw, checksum,"
    " caller_id, context, skills, format, idx, inline_output,"
    " from_artifact_tool, created_at, started_at, v4_state, owner_pid,"
    " owner_start, owner_boot) VALUES (NEW.rowid, NEW.id, NEW.tool, NEW.args,"
    " NEW.args_raw, NEW.checksum, NEW.caller_id, NEW.context, NEW.skills,"
    " NEW.format, ifnull(NEW.idx, 0), ifnull(NEW.inline_output, 1),"
    " ifnull(NEW.from_artifact_tool, 0), NEW.created_at, NEW.started_at, '',"
    " NEW.owner_pid, NEW.owner_start, NEW.owner_boot);"
    " INSERT INTO running(first, last)"
    " SELECT last_insert_rowid(), last_insert_rowid()"
    " WHERE NEW.state IS 'running';"
    " END;"
    "CREATE TRIGGER calls_update INSTEAD OF UPDATE ON calls BEGIN"
    " UPDATE call_rows SET id = NEW.id, tool = NEW.tool, args = NEW.args,"
    " args_raw = NEW.args_raw, checksum = NEW.checksum,"
    " caller_id = NEW.caller_id, context = NEW.context, skills = NEW.skills,"
    " format = NEW.format, idx = NEW.idx, inline_output = NEW.inline_output,"
    " from_artifact_tool = NEW.from_artifact_tool,"
    " created_at = NEW.created_at, started_at = NEW.started_at,"
    " owner_pid = NEW.owner_pid, owner_start = NEW.owner_start,"
    " owner_boot = NEW.owner_boot WHERE rowid = OLD.rowid;"
    " INSERT INTO running(first, last) SELECT OLD.rowid + 1, last"
    " FROM running WHERE first = (SELECT max(first) FROM running"
    " WHERE first <= OLD.rowid) AND last > OLD.rowid"
    " AND OLD.state = 'running' AND NEW.state IS NOT 'running';"
    " UPDATE running SET last = OLD.rowid - 1 WHERE first = (SELECT"
    " max(first) FROM running WHERE first < OLD.rowid)"
    " AND last >= OLD.rowid"
    " AND OLD.state = 'running' AND NEW.state IS NOT 'running';"
    " DELETE FROM running WHERE first = OLD.rowid"
    " AND OLD.state = 'running' AND NEW.state IS NOT 'running';"
    " INSERT INTO running(first, last) SELECT OLD.rowid, OLD.rowid"
    " WHERE OLD.state = 'done' AND NEW.state IS 'running';"
    " END;"
    "CREATE TRIGGER calls_delete INSTEAD OF DELETE ON calls BEGIN"
    " DELETE FROM call_rows WHERE rowid = OLD.rowid;"
    " INSERT INTO running(first, last) SELECT OLD.rowid + 1, last"
    " FROM running WHERE first = (SELECT max(first) FROM running"
    " WHERE first <= OLD.rowid) AND last > OLD.rowid"
    " AND OLD.state = 'running';"
    " UPDATE running SET last = OLD.rowid - 1 WHERE first = (SELECT"
    " max(first) FROM running WHERE first < OLD.rowid)"
    " AND last >= OLD.rowid AND OLD.state = 'running';"
    " DELETE FROM running WHERE first = OLD.rowid AND OLD.state = 'running';"
    " END;",
    /* v6: which rows name an artifact of the spool, so retention can tell
     * when the last row naming one is pruned and release it. Partial: only
     * spooled results are in it. */
    "CREATE INDEX results_artifact ON results(json_extract(artifact, '$.id'))"
    " WHERE artifact IS NOT NULL;",
    /* v7: a call whose arguments pass limits.max_args_bytes keeps only the
     * first TG_JOURNAL_ARGS_PREFIX bytes of their text, in args_raw (args
     * NULL), and their size here; NULL when the arguments are kept whole.
     * It used to keep them whole, twice when they came as a string: 200 MB
     * in one row for a refused 100 MB argument. */
    "ALTER TABLE call_rows ADD COLUMN args_bytes INTEGER;",
    /* v8: the hash chain (chain.h). Each result row gets chain_seq (1, 2,
     * 3... in the order rows are written) and chain, its 32-byte link.
     * Rows written before this version are not chained (that would rewrite
     * the whole table under the write lock): chain_meta keeps the greatest
     * call rowid of that time, and verification counts the unchained rows
     * at or below it as older than the chain, any other as inserted.
     * chain_epochs: from which seq on the links were made with which key
     * (its id, "" for none). chain_pruned: the (seq, link) of rows that
     * retention deleted, so the chain goes on across them; the ones before
     * the oldest remaining row fold into one, the anchor. */
    "ALTER TABLE results ADD COLUMN chain_seq INTEGER;"
    "ALTER TABLE results ADD COLUMN chain BLOB;"
    "CREATE UNIQUE INDEX results_chain ON results(chain_seq)"
    " WHERE chain_seq IS NOT NULL;"
    "CREATE TABLE chain_meta(one INTEGER PRIMARY KEY CHECK (one = 1),"
    " legacy_max INTEGER NOT NULL, created_at INTEGER NOT NULL);"
    "INSERT INTO chain_meta SELECT 1, ifnull(max(rowid), 0),"
    " CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
    " FROM call_rows;"
    "CREATE TABLE chain_epochs(first_seq INTEGER PRIMARY KEY,"
    " key_id TEXT NOT NULL, started_at INTEGER NOT NULL);"
    "CREATE TABLE chain_pruned(seq INTEGER PRIMARY KEY, link BLOB NOT NULL,"
    " call_rowid INTEGER, pruned_at INTEGER NOT NULL);",
    /* v9: pins of remote tool definitions (pins.c). One row per tool of a
     * source: the accepted definition (checksum, JCS text; NULL while a new
     * tool is held and was never accepted), and a served definition waiting
     * for the user (pending_*), with the pinned tool it renames. */
    "CREATE TABLE pins("
    " source TEXT NOT NULL,"
    " tool TEXT NOT NULL,"
    " checksum TEXT,"
    " definition TEXT,"
    " first_seen INTEGER NOT NULL," /* epoch ms */
    " accepted_at INTEGER,"         /* NULL: pinned on first sight */
    " state TEXT NOT NULL,"         /* 'pinned' | 'pending' | 'held' */
    " pending_checksum TEXT,"
    " pending_definition TEXT,"
    " pending_since INTEGER,"
    " renamed_from TEXT,"
    " PRIMARY KEY (source, tool)) WITHOUT ROWID;",
    /* v10: results_outcome holds only the results that did not succeed.
     * Nearly every result is a success, and each index entry is a b-tree
     * insert in the transaction that makes the result durable, which a
     * caller waits for; `history --outcome success` reads results_completed
     * instead (most rows match, so it stops early), every other outcome the
     * smaller index (the queries say `outcome != 0` for the planner). */
    "DROP INDEX IF EXISTS results_outcome;"
    "CREATE INDEX results_outcome ON results(outcome, completed_at)"
    " WHERE outcome != 0;",
    /* v11: results_caller holds only the results that have a caller. The
     * only query that reads it is `history --caller X` (caller_id = ?,
     * which implies IS NOT NULL, so the planner still takes it), and a
     * call without a caller (`toolgate run`, the library without one) no
     * longer pays an index entry for a key nobody looks up: in a
     * transaction of one call, a b-tree insert and a page more in the WAL
     * (bench/RESULTS.md). */
    "DROP INDEX IF EXISTS results_caller;"
    "CREATE INDEX results_caller ON results(caller_id, completed_at)"
    " WHERE caller_id IS NOT NULL;",
    /* v12: the committer (committer.h). A call row it writes carries the
     * ticket its process gave the call, so that the call's result, when
     * the process died before writing it, finds the row in a replay of
     * the process's log; committer_logs says, per log, the last record
     * that is in the journal (written in the same transaction as it), so
     * a replay starts after it. */
    "ALTER TABLE call_rows ADD COLUMN ticket INTEGER;"
    "CREATE TABLE committer_logs(log TEXT PRIMARY KEY,"
    " seq INTEGER NOT NULL) WITHOUT ROWID;",
};
#define SCHEMA_VERSION ((int)(sizeof migrations / sizeof migrations[0]))

/* One begun call: the pointer the runtime holds and the row it was given. */
struct slot {
    const tg_call *key; /* NULL: empty; in a committer's map, a ticket */
    sqlite3_int64 rowid;
    unsigned gen; /* the begin() batch that added it, to undo on failure */
    /* the call row's digest (chain.h), for its result's link */
    unsigned char digest[TG_CHAIN_LEN];
    /* A call begun through the committer: its ticket (its row's rowid and
     * digest are the committer's to know); 0: rowid and digest are set. */
    uint64_t ticket;
    int finished; /* committer: its result came in the same batch */
};

/* The end of the hash chain: the last link written, and the key of the
 * current epoch. */
struct chain_head {
    sqlite3_int64 seq; /* 0: no row chained yet */
    unsigned char link[TG_CHAIN_LEN];
    char key_id[TG_CHAIN_KEY_ID];
    int epochs; /* whether chain_epochs has a row */
};

struct sqlite_journal {
    tg__journal base; /* first: the tg__journal * is this object */
    sqlite3 *db;
    tg__checkpointer *ckpt; /* its WAL checkpoints (checkpointer.c) */
    /* the read pin (readpin.c) and its connection, made before the first
     * write transaction (pin_tried); NULL without */
    sqlite3 *pin_db;
    tg__readpin *pin;
    int pin_tried;
    char *path;   /* sqlite3_malloc'd */
    bool watched; /* dev and ino are the file's (not ":memory:") */
    dev_t dev;
    ino_t ino;
    sqlite3_int64 pid, start;
    char boot[40];
    sqlite3_stmt *st_begin, *st_commit, *st_rollback;
    /* multi-row INSERTs of row_sizes[k] rows (prepared on first use) */
    sqlite3_stmt *st_calls[N_ROW_SIZES], *st_results[N_ROW_SIZES];
    sqlite3_stmt *st_maxrow;  /* the greatest call rowid */
    sqlite3_int64 next_rowid; /* take_rowid's next, when next_known */
    int next_known;
    /* `running` ranges: add one, delete one that is exactly first..last,
     * cut one's tail or head, delete those inside */
    sqlite3_stmt *st_run_add, *st_run_exact, *st_run_tail, *st_run_head,
        *st_run_del;
    /* re-delivery, prepared on first use: one call's answer, and which of
     * up to PROBE_IDS ids of one caller scope were ever journaled */
    sqlite3_stmt *st_lookup, *st_probe;
    tg__journal_options opts;
    sqlite3_int64 last_prune; /* epoch ms of the last prune step, 0 none */
    int prune_backlog;        /* the last step was full: more to delete */
    /* told of each artifact no row names any more after a prune */
    void (*release)(void *ud, const char *artifact_id);
    void *release_ud;
    struct slot *slots; /* open addressing, linear probing */
    size_t cap, count;  /* cap is 0 or a power of two */
    unsigned gen;
    /* The chain's end as of the last commit of this connection (known:
     * read or written since), the data_version it was read at (another
     * connection's commit changes it, this one's do not), and the end
     * within the open transaction (chain_open: set up by chain_sync). The
     * writer keeps it here so a row costs no SELECT; on_commit and
     * on_rollback keep it true. */
    tg__chain_key key;
    struct chain_head chain, chain_tx;
    int chain_known, chain_open;
    sqlite3_int64 chain_dv;
    sqlite3_stmt *st_data_version, *st_epoch_add;
    /* The committer (committer.h), when rows are written off the call
     * path: its log's path and name (the key of its committer_logs row),
     * the journal object of its thread (a connection of its own, and a map
     * from tickets to rows), the last ticket given, and the record being
     * made (call path). NULL com: rows are written on the call path. */
    tg__committer *com;
    int com_tried;
    sqlite3_int64 ours_at; /* when a finish last found the file ours */
    char *log_path;
    const char *log_name; /* in log_path */
    struct sqlite_journal *wsj;
    struct sqlite_journal *live_next; /* live_head's list (under live_mu) */
    uint64_t ticket;
    unsigned char *rec;
    size_t rec_cap;
    /* the committer's thread: the records of a batch read back, and the
     * tickets a batch finished that were begun in an earlier one */
    struct crec *crecs;
    uint64_t *done_tickets;
    sqlite3_stmt *st_log_seq, *st_by_ticket;
};

static const tg__journal_ops sqlite_ops;

static struct sqlite_journal *sj_of(tg__journal *j)
{
    return (struct sqlite_journal *)j;
}

/* ------------------------------------------------------------ errors */

/* Fills err from the connection's last error. Call before any rollback:
 * that resets the message. */
static int db_fail(struct sqlite_journal *sj, int rc, const char *what,
                   tg_error *err)
{
    const char *path = sj->path ? sj->path : "?";
    const char *msg = sj->db ? sqlite3_errmsg(sj->db) : sqlite3_errstr(rc);
    if ((rc & 0xff) == SQLITE_FULL)
        return tg__error_set(err, TG_EJOURNAL,
                             "journal %s: disk full while %s (%s)", path, what,
                             msg);
    return tg__error_set(err, TG_EJOURNAL, "journal %s: %s: %s", path, what,
                         msg);
}

static int oom(tg_error *err)
{
    return tg__error_set(err, TG_ENOMEM, "out of memory");
}

/* A failure of the JSON text writers (json_out.h, tg__result_write). */
static int out_fail(int rc, tg_error *err)
{
    if (rc == TG_EINVAL)
        return tg__error_set(err, rc,
                             "a journaled result has no JSON form: its id or "
                             "tool is not UTF-8, or its duration is not a "
                             "number");
    return oom(err);
}

/* ------------------------------------------------------------ pointer map */

static size_t slot_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static struct slot *map_find(struct sqlite_journal *sj, const tg_call *key)
{
    if (sj->cap == 0)
        return NULL;
    size_t mask = sj->cap - 1;
    for (size_t i = slot_hash(key) & mask;; i = (i + 1) & mask) {
        if (sj->slots[i].key == key)
            return &sj->slots[i];
        if (sj->slots[i].key == NULL)
            return NULL;
    }
}

/* Needs room: see map_reserve. */
static struct slot *map_put(struct sqlite_journal *sj, const tg_call *key,
                            sqlite3_int64 rowid, unsigned gen)
{
    size_t mask = sj->cap - 1;
    size_t i = slot_hash(key) & mask;
    while (sj->slots[i].key != NULL && sj->slots[i].key != key)
        i = (i + 1) & mask;
    if (sj->slots[i].key == NULL)
        sj->count++;
    sj->slots[i] = (struct slot){.key = key, .rowid = rowid, .gen = gen};
    return &sj->slots[i];
}

/* Deletes by shifting the rest of the probe run back, so lookups never need
 * tombstones. */
static void map_del(struct sqlite_journal *sj, const tg_call *key)
{
    struct slot *s = map_find(sj, key);
    if (s == NULL)
        return;
    size_t mask = sj->cap - 1;
    size_t hole = (size_t)(s - sj->slots);
    for (size_t i = (hole + 1) & mask; sj->slots[i].key != NULL;
         i = (i + 1) & mask) {
        size_t home = slot_hash(sj->slots[i].key) & mask;
        /* Move i into the hole unless its home lies cyclically in
         * (hole, i]. */
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            sj->slots[hole] = sj->slots[i];
            hole = i;
        }
    }
    sj->slots[hole].key = NULL;
    sj->count--;
}

/* Makes room for `more` new keys at a load of at most one half, so map_put
 * cannot fail inside a transaction. */
static int map_reserve(struct sqlite_journal *sj, size_t more)
{
    if (more > SIZE_MAX / 4 - sj->count)
        return TG_ENOMEM;
    size_t need = (sj->count + more) * 2;
    if (need <= sj->cap)
        return 0;
    size_t cap = sj->cap ? sj->cap : 16;
    while (cap < need)
        cap *= 2;
    struct slot *slots = sqlite3_malloc64((sqlite3_uint64)cap * sizeof *slots);
    if (slots == NULL)
        return TG_ENOMEM;
    memset(slots, 0, cap * sizeof *slots);
    struct slot *old = sj->slots;
    size_t oldcap = sj->cap;
    sj->slots = slots;
    sj->cap = cap;
    sj->count = 0;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].key != NULL)
            *map_put(sj, old[i].key, old[i].rowid, old[i].gen) = old[i];
    sqlite3_free(old);
    return 0;
}

/* ------------------------------------------------------------ owners */

/* The start time (clock ticks after boot, field 22 of /proc/PID/stat) of pid.
 * Returns 1 with *start set when the process lives, 0 when it is gone or a
 * zombie, -1 when /proc cannot tell. */
static int proc_start(long pid, unsigned long long *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ESRCH ? 0 : -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return n == 0 || errno == ESRCH ? 0 : -1;
    buf[n] = '\0';
    /* The command name (field 2) may hold spaces and ')': skip to the last
     * ')'. Then: " S ppid pgrp ..." with the state as field 3. */
    char *p = strrchr(buf, ')');
    if (p == NULL || p[1] != ' ' || p[2] == '\0')
        return -1;
    p += 2;
    if (*p == 'Z' || *p == 'X' || *p == 'x')
        return 0; /* exited, not yet reaped: the owner is dead */
    p++;
    unsigned long long v = 0;
    for (int field = 4; field <= 22; field++) {
        char *end;
        errno = 0;
        v = strtoull(p, &end, 10);
        if (end == p || errno != 0)
            return -1;
        p = end;
    }
    *start = v;
    return 1;
}

static void read_boot_id(char out[40])
{
    out[0] = '\0';
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, 39);
    close(fd);
    if (n <= 0) {
        out[0] = '\0';
        return;
    }
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
}

/* Whether the process that began a row still runs. A pid alone is not
 * enough: pids are recycled, so the start time must match too, and after a
 * reboot (another boot id) no owner can be alive. */
static int owner_alive(const struct sqlite_journal *sj, sqlite3_int64 pid,
                       sqlite3_int64 start, const char *boot)
{
    if (boot != NULL && *boot != '\0' && sj->boot[0] != '\0' &&
        strcmp(boot, sj->boot) != 0)
        return 0;
    if (pid <= 0 || pid > INT_MAX)
        return 0;
    if (pid == sj->pid && start == sj->start)
        return 1;
    unsigned long long now = 0;
    int st = proc_start((long)pid, &now);
    if (st == 0)
        return 0;
    if (st == 1)
        return start == 0 || (sqlite3_int64)now == start;
    /* No /proc: the pid alone is the best evidence. */
    return kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

/* ------------------------------------------------------------ statements */

static int prepare(struct sqlite_journal *sj, const char *sql,
                   sqlite3_stmt **st, tg_error *err)
{
    int rc = sqlite3_prepare_v3(sj->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st,
                                NULL);
    if (rc != SQLITE_OK)
        return db_fail(sj, rc, "preparing a statement", err);
    return 0;
}

/* Steps a statement that returns no rows and resets it. */
static int run(struct sqlite_journal *sj, sqlite3_stmt *st, const char *what,
               tg_error *err)
{
    int rc = sqlite3_step(st);
    int ret = 0;
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        ret = db_fail(sj, rc, what, err);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return ret;
}

static int exec(struct sqlite_journal *sj, const char *sql, const char *what,
                tg_error *err)
{
    int rc = sqlite3_exec(sj->db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return db_fail(sj, rc, what, err);
    return 0;
}

/* Switches the journal to WAL. Two processes opening a new journal at the
 * same moment race on the switch, and the loser gets SQLITE_BUSY (or an
 * I/O error while the other creates the WAL index) without SQLite's busy
 * handler being asked; so the switch is retried, for as long as the busy
 * timeout would have waited. */
static int set_wal(struct sqlite_journal *sj, tg_error *err)
{
    int rc = SQLITE_OK;
    for (int attempt = 0; attempt < 250; attempt++) {
        rc =
            sqlite3_exec(sj->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
        int primary = rc & 0xff;
        if (primary != SQLITE_BUSY && primary != SQLITE_LOCKED &&
            primary != SQLITE_IOERR)
            break;
        sqlite3_sleep(20); /* 250 x 20 ms = the 5 s busy timeout */
    }
    return rc == SQLITE_OK ? 0 : db_fail(sj, rc, "configuring", err);
}

/* Ends a failed transaction. SQLite rolls back by itself on some errors
 * (full disk, out of memory); only roll back what is still open. */
static void tx_rollback(struct sqlite_journal *sj)
{
    if (sqlite3_get_autocommit(sj->db))
        return;
    if (sj->st_rollback != NULL) {
        sqlite3_step(sj->st_rollback);
        sqlite3_reset(sj->st_rollback);
    }
    if (!sqlite3_get_autocommit(sj->db))
        sqlite3_exec(sj->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Whether the path still names the file SQLite has open, with no other
 * name (see the top of the file). Costs one stat(2). */
static int still_ours(struct sqlite_journal *sj, tg_error *err)
{
    struct stat st;
    if (!sj->watched)
        return 0;
    bool gone = stat(sj->path, &st) != 0;
    if (gone || st.st_dev != sj->dev || st.st_ino != sj->ino)
        return tg__error_set(
            err, TG_EJOURNAL,
            "journal %s was moved, removed or replaced while toolgate had it "
            "open (%s); nothing more is written to it. Only a tool running "
            "outside the sandbox could do that: 'toolgate doctor' names them",
            sj->path,
            gone ? "the path names nothing now"
                 : "the path names another file now");
    if (st.st_nlink != 1)
        return tg__error_set(err, TG_EJOURNAL,
                             "journal %s got another name (%ju hard links) "
                             "while toolgate had it open: through it "
                             "something else could write the journal; "
                             "nothing more is written to it",
                             sj->path, (uintmax_t)st.st_nlink);
    return 0;
}

/* Records which file the path names as SQLite opens it, refusing one with
 * more than one name. */
static int watch_file(struct sqlite_journal *sj, tg_error *err)
{
    struct stat st;
    int moved = 0;
    if (stat(sj->path, &st) != 0)
        return tg__error_set(err, TG_EJOURNAL, "journal %s: %s", sj->path,
                             strerror(errno));
    if (st.st_nlink != 1)
        return tg__error_set(err, TG_EJOURNAL,
                             "journal %s has %ju names (hard links): through "
                             "another name something else could write it; "
                             "remove the other names",
                             sj->path, (uintmax_t)st.st_nlink);
    sj->dev = st.st_dev;
    sj->ino = st.st_ino;
    /* The file SQLite opened is the one just looked at, not one swapped in
     * between. */
    if (sqlite3_file_control(sj->db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) ==
            SQLITE_OK &&
        moved)
        return tg__error_set(err, TG_EJOURNAL,
                             "journal %s was replaced while it was being "
                             "opened",
                             sj->path);
    sj->watched = true;
    return 0;
}

/* Closes the read pin and its connection (the checkpointer watching it
 * first, when `all`). */
static void pin_stop(struct sqlite_journal *sj, int all)
{
    if (all) {
        tg__checkpointer_detach(sj->ckpt);
        sj->ckpt = NULL;
    }
    tg__readpin_close(sj->pin);
    sj->pin = NULL;
    sqlite3_close_v2(sj->pin_db);
    sj->pin_db = NULL;
}

/* Makes the read pin (readpin.c) of a journal that writes, on a connection
 * of its own that reads the file once (which maps its wal-index) and
 * nothing after. Without one (in memory, no checkpointer, or it could not
 * be made) the journal works as before: each transaction takes its read
 * slot by itself. A pin nobody lets go while the writer is idle would hold
 * back other processes' checkpoints: the checkpointer's timer watches it,
 * or there is none. */
static void pin_start(struct sqlite_journal *sj)
{
    sj->pin_tried = 1;
    if (!sj->watched || sj->ckpt == NULL || tg__walbuf_vfs() == NULL)
        return;
    if (sqlite3_open_v2(sj->path, &sj->pin_db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                        tg__walbuf_vfs()) != SQLITE_OK ||
        sqlite3_exec(sj->pin_db, "SELECT 1 FROM sqlite_schema LIMIT 1", NULL,
                     NULL, NULL) != SQLITE_OK ||
        tg__readpin_open(sj->pin_db, &sj->pin) != 0 ||
        tg__checkpointer_watch_pin(sj->ckpt, sj->pin) != 0)
        pin_stop(sj, 0);
}

/* IMMEDIATE takes the write lock up front, so two writers wait on the busy
 * timeout instead of failing on a read-to-write upgrade. */
static int tx_begin(struct sqlite_journal *sj, tg_error *err)
{
    /* What the committer was given goes in first (rowids in order, and
     * every row there for whoever reads in this transaction). */
    if (sj->com != NULL) {
        int drc = tg__committer_drain(sj->com, err);
        if (drc != 0)
            return drc;
    }
    tx_rollback(sj); /* a transaction left open by an earlier failure */
    if (!sj->pin_tried)
        pin_start(sj);
    sj->next_known = 0;
    int rc = still_ours(sj, err);
    return rc != 0 ? rc : run(sj, sj->st_begin, "starting a transaction", err);
}

static int tx_commit(struct sqlite_journal *sj, tg_error *err)
{
    return run(sj, sj->st_commit, "committing", err);
}

int tg__journal_tx_begin(tg__journal *j, tg_error *err)
{
    return tx_begin(sj_of(j), err);
}

int tg__journal_tx_commit(tg__journal *j, tg_error *err)
{
    return tx_commit(sj_of(j), err);
}

void tg__journal_tx_rollback(tg__journal *j)
{
    tx_rollback(sj_of(j));
}

/* SQLite's commit and rollback hooks keep the chain's end in memory true
 * whoever ends a transaction (tx_commit, any ROLLBACK, SQLite itself after
 * an error): on commit the end reached in the transaction becomes the
 * committed one; on rollback what the transaction chained is dropped and
 * the end is read from the file again (a commit that fails after its hook
 * rolls back too). */
static int on_commit(void *ud)
{
    struct sqlite_journal *sj = ud;
    if (sj->chain_open) {
        sj->chain = sj->chain_tx;
        sj->chain_known = 1;
    }
    sj->chain_open = 0;
    return 0;
}

static void on_rollback(void *ud)
{
    struct sqlite_journal *sj = ud;
    sj->chain_open = 0;
    sj->chain_known = 0;
}

static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
    return sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

/* JSON text of v (borrowed) for a column, NULL for NULL; *oom set when the
 * encoder ran out of memory. Free with free(). tg__json_dumps, not
 * json_dumps: jansson's loop check (an allocation and an snprintf per
 * object) was ~38k instructions a result's three small objects in a
 * lone MCP call (bench/RESULTS.md). */
static char *dump(const json_t *v, int *oom_flag)
{
    if (v == NULL)
        return NULL;
    char *s = tg__json_dumps(v);
    if (s == NULL)
        *oom_flag = 1;
    return s;
}

/* ------------------------------------------------------------ chain */

/* Reads the end of the chain from the file into *c: the greatest seq of a
 * result row or of a pruned row's record, its link, and the current
 * epoch's key id. Rare (at the first write, after another connection
 * wrote): statements are prepared for the occasion. */
static int chain_read(struct sqlite_journal *sj, struct chain_head *c,
                      tg_error *err)
{
    static const char sql[] =
        "SELECT seq, link FROM (SELECT chain_seq AS seq, chain AS link"
        " FROM results WHERE chain_seq IS NOT NULL"
        " ORDER BY chain_seq DESC LIMIT 1)"
        " UNION ALL SELECT seq, link FROM (SELECT seq, link FROM chain_pruned"
        " ORDER BY seq DESC LIMIT 1)"
        " ORDER BY seq DESC LIMIT 1";
    sqlite3_stmt *st = NULL;
    memset(c, 0, sizeof *c);
    int rc = prepare(sj, sql, &st, err), step;
    if (rc != 0)
        return rc;
    if ((step = sqlite3_step(st)) == SQLITE_ROW) {
        c->seq = sqlite3_column_int64(st, 0);
        /* A link of another size was edited outside toolgate: the chain
         * goes on from zeros, and verification names the row. */
        if (sqlite3_column_bytes(st, 1) == TG_CHAIN_LEN)
            memcpy(c->link, sqlite3_column_blob(st, 1), TG_CHAIN_LEN);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (step != SQLITE_ROW && step != SQLITE_DONE)
        return db_fail(sj, step, "reading the end of the chain", err);
    if ((rc = prepare(sj,
                      "SELECT key_id FROM chain_epochs"
                      " ORDER BY first_seq DESC LIMIT 1",
                      &st, err)) != 0)
        return rc;
    if ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(st, 0);
        c->epochs = 1;
        snprintf(c->key_id, sizeof c->key_id, "%s", id ? id : "");
    }
    sqlite3_finalize(st);
    if (step != SQLITE_ROW && step != SQLITE_DONE)
        return db_fail(sj, step, "reading the chain's key", err);
    return 0;
}

/* Sets up sj->chain_tx for the open transaction, once per transaction: the
 * end of the chain as this connection last committed it, read again only
 * when another connection committed since (PRAGMA data_version: one step,
 * no I/O); and an epoch row when this writer's key is not the current
 * epoch's. */
static int chain_sync(struct sqlite_journal *sj, tg_error *err)
{
    int rc;
    if (sj->chain_open)
        return 0;
    int step = sqlite3_step(sj->st_data_version);
    sqlite3_int64 dv = sqlite3_column_int64(sj->st_data_version, 0);
    sqlite3_reset(sj->st_data_version);
    if (step != SQLITE_ROW)
        return db_fail(sj, step, "reading the data version", err);
    if (!sj->chain_known || dv != sj->chain_dv) {
        if ((rc = chain_read(sj, &sj->chain, err)) != 0)
            return rc;
        sj->chain_dv = dv;
        sj->chain_known = 1;
    }
    sj->chain_tx = sj->chain;
    struct chain_head *c = &sj->chain_tx;
    if (!c->epochs || strcmp(c->key_id, sj->key.id) != 0) {
        int b = sqlite3_bind_int64(sj->st_epoch_add, 1, c->seq + 1);
        b |= bind_text(sj->st_epoch_add, 2, sj->key.id);
        b |= sqlite3_bind_int64(sj->st_epoch_add, 3, tg__now_ms());
        if (b != SQLITE_OK)
            return db_fail(sj, b, "binding the chain's key", err);
        if ((rc = run(sj, sj->st_epoch_add, "recording the chain's key",
                      err)) != 0)
            return rc;
        memcpy(c->key_id, sj->key.id, sizeof c->key_id);
        c->epochs = 1;
    }
    sj->chain_open = 1;
    return 0;
}

/* Chains the result row of call rowid `rowid`, just inserted by SQL (a
 * recovered call), from its columns as they are in the file: the way
 * verification reads them. */
static int chain_row_in_place(struct sqlite_journal *sj, sqlite3_int64 rowid,
                              tg_error *err)
{
    sqlite3_stmt *st = NULL, *up = NULL;
    unsigned char link[TG_CHAIN_LEN];
    int rc = chain_sync(sj, err), step;
    if (rc != 0 ||
        (rc = prepare(sj,
                      "SELECT " TG_CHAIN_RESULT_COLUMNS
                      ", " TG_CHAIN_CALL_COLUMNS " FROM results r"
                      " LEFT JOIN call_rows c ON c.rowid = r.call_rowid"
                      " WHERE r.call_rowid = ?1",
                      &st, err)) != 0 ||
        (rc = prepare(sj,
                      "UPDATE results SET chain_seq = ?2, chain = ?3"
                      " WHERE call_rowid = ?1",
                      &up, err)) != 0)
        goto done;
    sqlite3_bind_int64(st, 1, rowid);
    if ((step = sqlite3_step(st)) != SQLITE_ROW) {
        rc = db_fail(sj, step, "reading a result to chain", err);
        goto done;
    }
    struct chain_head *c = &sj->chain_tx;
    tg__chain_link_stmt(st, 0, &sj->key, c->link, c->seq + 1, link);
    int b = sqlite3_bind_int64(up, 1, rowid);
    b |= sqlite3_bind_int64(up, 2, c->seq + 1);
    b |= sqlite3_bind_blob(up, 3, link, TG_CHAIN_LEN, SQLITE_STATIC);
    if (b != SQLITE_OK) {
        rc = db_fail(sj, b, "binding a link", err);
        goto done;
    }
    if ((rc = run(sj, up, "chaining a result", err)) != 0)
        goto done;
    c->seq++;
    memcpy(c->link, link, TG_CHAIN_LEN);
done:
    sqlite3_finalize(st);
    sqlite3_finalize(up);
    return rc;
}

/* ------------------------------------------------------------ writing */

/* Rows go in with multi-row INSERTs: one statement per up to ROWS_MAX rows
 * instead of one per row saves SQLite's per-statement work (about a third
 * of a call row's cost). A batch of n rows takes the largest sizes that fit
 * (100 = 64 + 16 + 16 + 4). OR ROLLBACK: a constraint failure ends the
 * transaction, as any failure of a batch does here anyway, so SQLite keeps
 * no statement journal for them (nor for results: the writer does not
 * enforce the foreign key, whose check needed one; every result's call row
 * is written first, in the same or an earlier transaction). */
#define ROWS_MAX 64
static const int row_sizes[N_ROW_SIZES] = {ROWS_MAX, 16, 4, 1};

/* call_rows: ?1 owner_pid, ?2 owner_start, ?3 owner_boot, shared by the
 * rows; then per row its rowid (given, not allocated, so a batch's rowids
 * are known before it goes in), its committer ticket (NULL when written on
 * the call path) and the CALL_VALUES of call_vals. */
#define CALL_SHARED 3
#define CALL_VALUES 15
#define CALL_PARAMS (2 + CALL_VALUES)
/* results: per row its call's rowid, the RESULT_VALUES of result_vals,
 * chain_seq and chain. */
#define RESULT_VALUES 14
#define RESULT_PARAMS (1 + RESULT_VALUES + 2)

/* Strings bound to a statement that must live until it ran. */
struct owned {
    char *p[ROWS_MAX * 4];
    size_t n;
};

static void owned_free(struct owned *o)
{
    for (size_t i = 0; i < o->n; i++)
        free(o->p[i]);
    o->n = 0;
}

/* dump() kept in o; *oom_flag set when it ran out of memory. */
static const char *dump_owned(const json_t *v, struct owned *o, int *oom_flag)
{
    char *s = dump(v, oom_flag);
    if (s != NULL)
        o->p[o->n++] = s;
    return s;
}

/* The statement inserting `size` rows (row_sizes[k]) into call_rows
 * (results 0) or results (1), prepared on first use. */
static int rows_stmt(struct sqlite_journal *sj, int results, int k,
                     sqlite3_stmt **out, tg_error *err)
{
    sqlite3_stmt **slot = results ? &sj->st_results[k] : &sj->st_calls[k];
    tg__buf sql;
    int rc = 0;
    *out = *slot;
    if (*slot != NULL)
        return 0;
    tg__buf_init(&sql, 0);
    int b = tg__buf_puts(
        &sql,
        results
            ? "INSERT OR ROLLBACK INTO results(call_rowid, id, tool, outcome,"
              " execution, payload, content, artifact, duration_ms,"
              " exit_status, completed_at, replayed, repaired,"
              " caller_id, decisions, chain_seq, chain) VALUES "
            : "INSERT OR ROLLBACK INTO call_rows(rowid, ticket, id, tool, "
              "args, "
              "args_raw,"
              " checksum, caller_id, context, skills, format, idx,"
              " inline_output, from_artifact_tool, created_at, started_at,"
              " args_bytes, v4_state, owner_pid, owner_start,"
              " owner_boot) VALUES ");
    for (int r = 0; r < row_sizes[k]; r++) {
        int base = results ? r * RESULT_PARAMS : CALL_SHARED + r * CALL_PARAMS;
        int count = results ? RESULT_PARAMS : CALL_PARAMS;
        b |= tg__buf_puts(&sql, r ? ",(" : "(");
        for (int c = 1; c <= count; c++)
            b |= tg__buf_printf(&sql, "%s?%d", c > 1 ? "," : "", base + c);
        b |= tg__buf_puts(&sql, results ? ")" : ",'',?1,?2,?3)");
    }
    if (b != 0) {
        rc = oom(err);
        goto done;
    }
    if ((rc = prepare(sj, tg__buf_cstr(&sql), slot, err)) != 0)
        goto done;
    if (!results) {
        /* Rebound only by the rows' own parameters: never cleared. */
        b = sqlite3_bind_int64(*slot, 1, sj->pid);
        b |= sqlite3_bind_int64(*slot, 2, sj->start);
        b |= sj->boot[0] ? bind_text(*slot, 3, sj->boot)
                         : sqlite3_bind_null(*slot, 3);
        if (b != SQLITE_OK) {
            rc = db_fail(sj, b, "binding a call", err);
            sqlite3_finalize(*slot);
            *slot = NULL;
            goto done;
        }
    }
    *out = *slot;
done:
    tg__buf_cleanup(&sql);
    return rc;
}

/* Steps a statement of rows_stmt and resets it, leaving its bindings: every
 * row parameter is bound again before the next step. */
static int run_rows(struct sqlite_journal *sj, sqlite3_stmt *st,
                    const char *what, tg_error *err)
{
    int rc = sqlite3_step(st);
    int ret = 0;
    if (rc != SQLITE_DONE)
        ret = db_fail(sj, rc, what, err);
    sqlite3_reset(st);
    return ret;
}

/* The rowid the next call row takes: one more than the greatest, as SQLite
 * would allocate it, read once per transaction (the write lock keeps other
 * processes out until commit). */
static int take_rowid(struct sqlite_journal *sj, sqlite3_int64 *rowid,
                      tg_error *err)
{
    if (!sj->next_known) {
        int step = sqlite3_step(sj->st_maxrow);
        sqlite3_int64 max = sqlite3_column_int64(sj->st_maxrow, 0);
        sqlite3_reset(sj->st_maxrow);
        if (step != SQLITE_ROW)
            return db_fail(sj, step, "reading the last call", err);
        if (max == INT64_MAX)
            return tg__error_set(err, TG_EJOURNAL,
                                 "journal %s: no call rowid left", sj->path);
        sj->next_rowid = max + 1;
        sj->next_known = 1;
    }
    if (sj->next_rowid == INT64_MAX)
        return tg__error_set(err, TG_EJOURNAL, "journal %s: no call rowid left",
                             sj->path);
    *rowid = sj->next_rowid++;
    return 0;
}

/* The owner stamped on call rows: this process, or a dead one whose log is
 * replayed (committer.c). */
struct row_owner {
    sqlite3_int64 pid, start;
    const char *boot; /* NULL: unknown */
};

static struct row_owner own_owner(const struct sqlite_journal *sj)
{
    return (struct row_owner){sj->pid, sj->start,
                              sj->boot[0] ? sj->boot : NULL};
}

/* The values of call's row begun at `now`, in column order after its
 * rowid (TG_CHAIN_CALL_COLUMNS from c.id to c.args_bytes): strings made
 * here are kept in own. */
static int call_vals(struct sqlite_journal *sj, tg_call *call,
                     sqlite3_int64 now, struct owned *own, tg__rowvals *rv,
                     tg_error *err)
{
    int nomem = 0;
    const char *args = NULL, *sum = NULL;
    if (call->args_text != NULL) {
        /* The checksum is a cache that fails only for want of memory;
         * storing NULL then would lose it. */
        args = tg_call_args_json(call);
        sum = tg_call_checksum(call);
        if (args == NULL || sum == NULL)
            nomem = 1;
    }
    const char *context = dump_owned(call->context, own, &nomem);
    const char *skills = dump_owned(call->skills, own, &nomem);
    const char *raw = tg_call_args_raw(call);
    /* Arguments over the limit never run (ARGUMENTS_TOO_LARGE): the row
     * keeps the start of their text and their size, not all of it. */
    size_t size = tg__call_args_size(call);
    bool cut =
        sj->opts.max_args_bytes > 0 && size > (uint64_t)sj->opts.max_args_bytes;
    if (cut && !nomem) {
        const char *text = raw != NULL ? raw : call->args_text;
        size_t n = tg__utf8_cut(text, strlen(text), TG_JOURNAL_ARGS_PREFIX);
        char *prefix = strndup(text, n);
        if (prefix == NULL)
            nomem = 1;
        else
            own->p[own->n++] = prefix;
        raw = prefix;
        args = NULL;
    }
    if (nomem)
        return oom(err);
    rv->n = 0;
    tg__rowvals_text(rv, call->id);
    tg__rowvals_text(rv, call->tool);
    tg__rowvals_text(rv, args);
    tg__rowvals_text(rv, raw);
    tg__rowvals_text(rv, sum);
    tg__rowvals_text(rv, call->caller_id);
    tg__rowvals_text(rv, context);
    tg__rowvals_text(rv, skills);
    tg__rowvals_text(rv, call->format ? call->format : "toolgate");
    tg__rowvals_int(rv, (int64_t)call->index);
    tg__rowvals_int(rv, call->inline_output ? 1 : 0);
    tg__rowvals_int(rv, call->from_artifact_tool ? 1 : 0);
    tg__rowvals_int(rv, call->created_at ? call->created_at : now);
    tg__rowvals_int(rv, now); /* started_at */
    if (cut)
        tg__rowvals_int(rv, (int64_t)size);
    else
        tg__rowvals_null(rv);
    return 0;
}

/* Binds the call row of values rv (call_vals) as row r of a call_rows
 * statement with the given rowid, and writes the row's digest (chain.h:
 * TG_CHAIN_CALL_COLUMNS, from the values bound and the owner) to digest. */
static int bind_call_vals(struct sqlite_journal *sj, sqlite3_stmt *st, int r,
                          const tg__rowvals *rv, sqlite3_int64 rowid,
                          uint64_t ticket, const struct row_owner *owner,
                          unsigned char *digest, tg_error *err)
{
    int o = CALL_SHARED + r * CALL_PARAMS;
    int b = sqlite3_bind_int64(st, o + 1, rowid);
    b |= ticket ? sqlite3_bind_int64(st, o + 2, (sqlite3_int64)ticket)
                : sqlite3_bind_null(st, o + 2);
    b |= tg__rowvals_bind(rv, st, o + 3);
    if (b != SQLITE_OK)
        return db_fail(sj, b, "binding a call", err);
    if (sj->opts.unchained)
        return 0;
    tg__chain_hash h;
    tg__chain_digest_start(&h);
    tg__chain_int(&h, rowid);
    tg__rowvals_chain(rv, &h);
    tg__chain_int(&h, owner->pid);
    tg__chain_int(&h, owner->start);
    tg__chain_text(&h, owner->boot);
    tg__chain_end(&h, digest);
    return 0;
}

/* Inserts the call rows of values *rvs[0..k) with rowids[0..k) (from
 * take_rowid) and tickets[0..k) (NULL: none), owned by owner, and writes
 * their digests (chain.h) to digests[0..k). Must run inside a
 * transaction. */
static int
insert_call_vals(struct sqlite_journal *sj, const tg__rowvals *const *rvs,
                 const sqlite3_int64 *rowids, const uint64_t *tickets, size_t k,
                 const struct row_owner *owner,
                 unsigned char (*digests)[TG_CHAIN_LEN], tg_error *err)
{
    int rc = 0;
    for (size_t pos = 0; pos < k && rc == 0;) {
        int z = 0;
        while ((size_t)row_sizes[z] > k - pos)
            z++;
        sqlite3_stmt *st;
        if ((rc = rows_stmt(sj, 0, z, &st, err)) != 0)
            break;
        int b = sqlite3_bind_int64(st, 1, owner->pid);
        b |= sqlite3_bind_int64(st, 2, owner->start);
        b |= owner->boot ? bind_text(st, 3, owner->boot)
                         : sqlite3_bind_null(st, 3);
        if (b != SQLITE_OK)
            rc = db_fail(sj, b, "binding a call", err);
        for (int r = 0; r < row_sizes[z] && rc == 0; r++)
            rc = bind_call_vals(sj, st, r, rvs[pos + (size_t)r],
                                rowids[pos + (size_t)r],
                                tickets ? tickets[pos + (size_t)r] : 0, owner,
                                digests[pos + (size_t)r], err);
        if (rc == 0)
            rc = run_rows(sj, st, "writing calls", err);
        pos += (size_t)row_sizes[z];
    }
    return rc;
}

/* Inserts the call rows of calls[which[0..k)] with rowids[0..k) (from
 * take_rowid), started now, and writes their digests (chain.h) to
 * digests[0..k). Must run inside a transaction. */
static int insert_calls(struct sqlite_journal *sj, tg_call *const *calls,
                        const size_t *which, const sqlite3_int64 *rowids,
                        size_t k, sqlite3_int64 now,
                        unsigned char (*digests)[TG_CHAIN_LEN], tg_error *err)
{
    struct owned own = {.n = 0};
    struct row_owner owner = own_owner(sj);
    tg__rowvals rvs[ROWS_MAX];
    const tg__rowvals *ptrs[ROWS_MAX];
    int rc = 0;
    for (size_t pos = 0; pos < k && rc == 0;) {
        size_t m = k - pos < ROWS_MAX ? k - pos : ROWS_MAX;
        for (size_t r = 0; r < m && rc == 0; r++) {
            ptrs[r] = &rvs[r];
            rc = call_vals(sj, calls[which[pos + r]], now, &own, &rvs[r], err);
        }
        if (rc == 0)
            rc = insert_call_vals(sj, ptrs, rowids + pos, NULL, m, &owner,
                                  digests + pos, err);
        owned_free(&own);
        pos += m;
    }
    return rc;
}

/* The values of result r's row (call: its call) completed by `now`, in
 * column order after its call's rowid (TG_CHAIN_RESULT_COLUMNS from r.id
 * to r.decisions): strings made here are kept in own. */
static int result_vals(const tg_call *call, const tg_result *r,
                       sqlite3_int64 now, struct owned *own, tg__rowvals *rv,
                       tg_error *err)
{
    int nomem = 0;
    /* The payload's text when the result holds it already, else encoded
     * here (a NULL value means memory ran out building it). */
    const char *ptext = r->payload_json_cache;
    if (ptext == NULL) {
        const json_t *pv = tg__result_payload(r); /* borrowed */
        ptext = pv ? dump_owned(pv, own, &nomem) : NULL;
        if (ptext == NULL)
            nomem = 1;
    }
    const char *content = dump_owned(r->content, own, &nomem);
    const char *artifact = dump_owned(r->artifact, own, &nomem);
    const char *decisions = dump_owned(r->decisions, own, &nomem);
    if (nomem)
        return oom(err);
    int outcome = r->outcome;
    if (outcome < TG_OUTCOME_SUCCESS || outcome > TG_OUTCOME_DENIED)
        outcome = TG_OUTCOME_ERROR;
    rv->n = 0;
    tg__rowvals_text(rv, r->id);
    tg__rowvals_text(rv, r->tool);
    tg__rowvals_int(rv, outcome);
    tg__rowvals_text(rv, tg_execution_name(r->execution));
    tg__rowvals_text(rv, ptext);
    tg__rowvals_text(rv, content);
    tg__rowvals_text(rv, artifact);
    tg__rowvals_real(rv, r->duration_ms);
    if (r->exit_status >= 0)
        tg__rowvals_int(rv, r->exit_status);
    else
        tg__rowvals_null(rv);
    tg__rowvals_int(rv, r->completed_at ? r->completed_at : now);
    tg__rowvals_int(rv, r->replayed ? 1 : 0);
    tg__rowvals_int(rv, (int)r->repaired);
    tg__rowvals_text(rv, call->caller_id);
    tg__rowvals_text(rv, decisions);
    return 0;
}

/* Binds the result row of values rv (result_vals) of call row rowid, whose
 * digest is `digest`, as row k of a results statement, chained after
 * sj->chain_tx (chain_sync ran in this transaction), which it advances. The
 * link is made from the values bound, in the order of
 * TG_CHAIN_RESULT_COLUMNS. */
static int bind_result_vals(struct sqlite_journal *sj, sqlite3_stmt *st, int k,
                            sqlite3_int64 rowid, const tg__rowvals *rv,
                            const unsigned char *digest, tg_error *err)
{
    int o = k * RESULT_PARAMS;
    int b = sqlite3_bind_int64(st, o + 1, rowid);
    b |= tg__rowvals_bind(rv, st, o + 2);
    if (b != SQLITE_OK)
        return db_fail(sj, b, "binding a result", err);
    int last = o + 1 + RESULT_VALUES;
    if (sj->opts.unchained) {
        b = sqlite3_bind_null(st, last + 1);
        b |= sqlite3_bind_null(st, last + 2);
        return b != SQLITE_OK ? db_fail(sj, b, "binding a result", err) : 0;
    }
    struct chain_head *c = &sj->chain_tx;
    tg__chain_hash h;
    tg__chain_link_start(&h, &sj->key, c->link, c->seq + 1);
    tg__chain_int(&h, rowid);
    tg__rowvals_chain(rv, &h);
    tg__chain_call(&h, digest);
    tg__chain_end(&h, c->link);
    c->seq++;
    /* The link is copied: the next row's overwrites c->link. */
    b = sqlite3_bind_int64(st, last + 1, c->seq);
    b |= sqlite3_bind_blob(st, last + 2, c->link, TG_CHAIN_LEN,
                           SQLITE_TRANSIENT);
    if (b != SQLITE_OK)
        return db_fail(sj, b, "binding a result", err);
    return 0;
}

/* Inserts the result rows of values *rvs[0..n) of call rows rowids[0..n)
 * (row digests digests[0..n)), each chained to the one before. Must run
 * inside a transaction. */
static int insert_result_vals(struct sqlite_journal *sj,
                              const tg__rowvals *const *rvs,
                              const sqlite3_int64 *rowids,
                              const unsigned char (*digests)[TG_CHAIN_LEN],
                              size_t n, tg_error *err)
{
    int rc = sj->opts.unchained ? 0 : chain_sync(sj, err);
    for (size_t pos = 0; rc == 0 && pos < n;) {
        int z = 0;
        while ((size_t)row_sizes[z] > n - pos)
            z++;
        sqlite3_stmt *st;
        if ((rc = rows_stmt(sj, 1, z, &st, err)) != 0)
            break;
        for (int r = 0; r < row_sizes[z] && rc == 0; r++) {
            size_t i = pos + (size_t)r;
            rc =
                bind_result_vals(sj, st, r, rowids[i], rvs[i], digests[i], err);
        }
        if (rc == 0)
            rc = run_rows(sj, st, "writing results", err);
        pos += (size_t)row_sizes[z];
    }
    return rc;
}

/* Inserts results[i] for calls[i] (row rowids[i], row digest digests[i]),
 * i < n, each chained to the one before. Must run inside a transaction. */
static int insert_results(struct sqlite_journal *sj, tg_call *const *calls,
                          tg_result *const *results,
                          const sqlite3_int64 *rowids,
                          const unsigned char (*digests)[TG_CHAIN_LEN],
                          size_t n, sqlite3_int64 now, tg_error *err)
{
    struct owned own = {.n = 0};
    tg__rowvals rvs[ROWS_MAX];
    const tg__rowvals *ptrs[ROWS_MAX];
    int rc = 0;
    for (size_t pos = 0; rc == 0 && pos < n;) {
        size_t m = n - pos < ROWS_MAX ? n - pos : ROWS_MAX;
        for (size_t i = 0; i < m && rc == 0; i++) {
            ptrs[i] = &rvs[i];
            rc = result_vals(calls[pos + i], results[pos + i], now, &own,
                             &rvs[i], err);
        }
        if (rc == 0)
            rc = insert_result_vals(sj, ptrs, rowids + pos, digests + pos, m,
                                    err);
        owned_free(&own);
        pos += m;
    }
    return rc;
}

/* Binds first and last and steps st. */
static int run_range(struct sqlite_journal *sj, sqlite3_stmt *st,
                     sqlite3_int64 first, sqlite3_int64 last, const char *what,
                     tg_error *err)
{
    int b = sqlite3_bind_int64(st, 1, first);
    if (sqlite3_bind_parameter_count(st) >= 2)
        b |= sqlite3_bind_int64(st, 2, last);
    if (b != SQLITE_OK)
        return db_fail(sj, b, "binding a call", err);
    return run(sj, st, what, err);
}

/* `running` holds ranges of call rowids. A batch's rows are inserted one
 * after the other in one transaction, so their rowids are consecutive and
 * the whole batch enters as one range, and its results, sorted by rowid,
 * mostly leave as one: a statement or three per batch instead of one per
 * call. Ranges never overlap, and all calls of one range were begun by one
 * process. */
static int running_add(struct sqlite_journal *sj, sqlite3_int64 first,
                       sqlite3_int64 last, tg_error *err)
{
    return run_range(sj, sj->st_run_add, first, last, "marking calls running",
                     err);
}

/* Takes first..last, all of them running, out of `running`: the range
 * holding last keeps its part after last, the range holding first its part
 * before first, and ranges starting inside first..last go. Most often
 * first..last is a whole range (a lone call, or a batch whose calls all
 * ended together): one DELETE by the primary key takes it out, and the
 * three statements of the general case (a third of a lone call's finish)
 * run only when that deleted nothing. */
static int running_remove(struct sqlite_journal *sj, sqlite3_int64 first,
                          sqlite3_int64 last, tg_error *err)
{
    int rc;
    if ((rc = run_range(sj, sj->st_run_exact, first, last, "marking calls done",
                        err)) != 0)
        return rc;
    if (sqlite3_changes(sj->db) == 1)
        return 0;
    if ((rc = run_range(sj, sj->st_run_tail, first, last, "marking calls done",
                        err)) != 0 ||
        (rc = run_range(sj, sj->st_run_head, first, last, "marking calls done",
                        err)) != 0)
        return rc;
    return run_range(sj, sj->st_run_del, first, last, "marking calls done",
                     err);
}

/* Consecutive rowids gathered into runs for running_add/running_remove. */
struct rowid_run {
    sqlite3_int64 first, last;
    int open;
};

static int run_flush(struct sqlite_journal *sj, int add, struct rowid_run *r,
                     tg_error *err)
{
    if (!r->open)
        return 0;
    r->open = 0;
    return add ? running_add(sj, r->first, r->last, err)
               : running_remove(sj, r->first, r->last, err);
}

/* Adds rowid to the run, or flushes the run and starts another. */
static int run_push(struct sqlite_journal *sj, int add, struct rowid_run *r,
                    sqlite3_int64 rowid, tg_error *err)
{
    if (r->open && rowid == r->last + 1) {
        r->last = rowid;
        return 0;
    }
    int rc = run_flush(sj, add, r, err);
    *r = (struct rowid_run){rowid, rowid, 1};
    return rc;
}

static int by_rowid(const void *pa, const void *pb)
{
    sqlite3_int64 a = *(const sqlite3_int64 *)pa;
    sqlite3_int64 b = *(const sqlite3_int64 *)pb;
    return (a > b) - (a < b);
}

static int lookup(struct sqlite_journal *sj, const tg_call *call,
                  sqlite3_int64 now, tg_result **reply, tg_error *err);
static int dedup_eligible(const tg_call *call);
static int plan_lookups(struct sqlite_journal *sj, tg_call *const *calls,
                        size_t n, unsigned char *need, tg_error *err);

static void free_replies(tg_result **replies, size_t n)
{
    for (size_t i = 0; replies != NULL && i < n; i++) {
        tg__result_free(replies[i]);
        replies[i] = NULL;
    }
}

/* Calls of a begin batch waiting to go in (insert_calls), and the running
 * range they extend. */
struct pending {
    size_t which[ROWS_MAX];
    sqlite3_int64 rowids[ROWS_MAX];
    unsigned char digests[ROWS_MAX][TG_CHAIN_LEN];
    size_t k;
    struct rowid_run range;
};

/* Inserts the waiting rows, and with `range` their running range too
 * (a lookup must see both; rows alone when the batch goes on). */
static int pending_flush(struct sqlite_journal *sj, tg_call *const *calls,
                         struct pending *p, int range, sqlite3_int64 now,
                         tg_error *err)
{
    int rc = insert_calls(sj, calls, p->which, p->rowids, p->k, now, p->digests,
                          err);
    /* Each call of the batch is in the map once (see sj_begin_dedup). */
    for (size_t m = 0; rc == 0 && m < p->k; m++) {
        struct slot *s = map_find(sj, calls[p->which[m]]);
        if (s != NULL)
            memcpy(s->digest, p->digests[m], TG_CHAIN_LEN);
    }
    p->k = 0;
    if (rc == 0 && range)
        rc = run_flush(sj, 1, &p->range, err);
    return rc;
}

/* Begins calls[0..n) on the call path: their rows (and re-delivery
 * lookups when replies is not NULL) in one transaction. */
static int begin_inline(struct sqlite_journal *sj, tg_call *const *calls,
                        size_t n, tg_result **replies, tg_error *err)
{
    unsigned char *need = NULL; /* need[i]: calls[i] is looked up */
    struct pending *p = NULL;
    if (n == 0)
        return 0;
    if (map_reserve(sj, n) != 0)
        return oom(err);
    if ((replies != NULL && (need = sqlite3_malloc64(n)) == NULL) ||
        (p = sqlite3_malloc64(sizeof *p)) == NULL) {
        sqlite3_free(need);
        return oom(err);
    }
    memset(p, 0, sizeof *p);
    unsigned gen = ++sj->gen;
    sqlite3_int64 now = tg__now_ms();
    int rc = tx_begin(sj, err);
    if (rc != 0)
        goto fail;
    /* Under the write lock, so no other process can claim one of these
     * ids between the look and the running row. */
    if (need != NULL && (rc = plan_lookups(sj, calls, n, need, err)) != 0)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        sqlite3_int64 rowid;
        /* Beginning a call twice keeps its first row. */
        if (map_find(sj, calls[i]) != NULL)
            continue;
        /* A lookup must see every row and range of the batch so far. */
        if (need != NULL && need[i] &&
            ((rc = pending_flush(sj, calls, p, 1, now, err)) != 0 ||
             (rc = lookup(sj, calls[i], now, &replies[i], err)) != 0))
            goto fail;
        if (replies != NULL && replies[i] != NULL)
            continue;
        if ((rc = take_rowid(sj, &rowid, err)) != 0 ||
            (rc = run_push(sj, 1, &p->range, rowid, err)) != 0)
            goto fail;
        map_put(sj, calls[i], rowid, gen);
        p->which[p->k] = i;
        p->rowids[p->k++] = rowid;
        if (p->k == ROWS_MAX &&
            (rc = pending_flush(sj, calls, p, 0, now, err)) != 0)
            goto fail;
    }
    if ((rc = pending_flush(sj, calls, p, 1, now, err)) != 0 ||
        (rc = tx_commit(sj, err)) != 0)
        goto fail;
    sqlite3_free(need);
    sqlite3_free(p);
    return 0;
fail:
    tx_rollback(sj);
    sqlite3_free(need);
    sqlite3_free(p);
    free_replies(replies, n);
    for (size_t i = 0; i < n; i++) {
        struct slot *s = map_find(sj, calls[i]);
        if (s != NULL && s->gen == gen)
            map_del(sj, calls[i]);
    }
    return rc;
}

static void maybe_prune(struct sqlite_journal *sj, sqlite3_int64 now);

/* Finishes calls[0..n) on the call path, in one transaction. */
static int finish_inline(struct sqlite_journal *sj, tg_call *const *calls,
                         tg_result *const *results, size_t n, tg_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (results[i] == NULL)
            return tg__error_set(err, TG_EINVAL,
                                 "journal: call '%s' has no result to record",
                                 calls[i]->id);
    if (n == 0)
        return 0;
    /* rowids[i]: calls[i]'s row; begun: the rowids of begun calls, whose
     * running ranges shrink; fresh: the calls never begun; digests[i]:
     * calls[i]'s row digest (chain.h). */
    const size_t each =
        2 * sizeof(sqlite3_int64) + sizeof(size_t) + TG_CHAIN_LEN;
    if (n > SIZE_MAX / each)
        return oom(err);
    sqlite3_int64 *rowids = sqlite3_malloc64((sqlite3_uint64)n * each);
    if (rowids == NULL)
        return oom(err);
    sqlite3_int64 *begun = rowids + n;
    size_t *fresh = (size_t *)(begun + n);
    unsigned char(*digests)[TG_CHAIN_LEN] =
        (unsigned char(*)[TG_CHAIN_LEN])(fresh + n);
    size_t nbegun = 0, nfresh = 0;
    sqlite3_int64 now = tg__now_ms();
    struct rowid_run range = {0};
    int rc = tx_begin(sj, err);
    if (rc != 0)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        struct slot *s = map_find(sj, calls[i]);
        /* A call that was never begun (a re-delivered one's reply, a call
         * ended before the turn began) gets its row now, done at once. */
        if (s != NULL) {
            begun[nbegun++] = rowids[i] = s->rowid;
            memcpy(digests[i], s->digest, TG_CHAIN_LEN);
        } else {
            if ((rc = take_rowid(sj, &rowids[i], err)) != 0)
                goto fail;
            fresh[nfresh++] = i;
        }
    }
    /* fresh is in batch order, so its rowids line up with it. */
    for (size_t f = 0, k; f < nfresh; f += k) {
        sqlite3_int64 ids[ROWS_MAX];
        unsigned char made[ROWS_MAX][TG_CHAIN_LEN];
        k = nfresh - f < ROWS_MAX ? nfresh - f : ROWS_MAX;
        for (size_t m = 0; m < k; m++)
            ids[m] = rowids[fresh[f + m]];
        if ((rc = insert_calls(sj, calls, fresh + f, ids, k, now, made, err)) !=
            0)
            goto fail;
        for (size_t m = 0; m < k; m++)
            memcpy(digests[fresh[f + m]], made[m], TG_CHAIN_LEN);
    }
    if ((rc = insert_results(sj, calls, results, rowids,
                             (const unsigned char(*)[TG_CHAIN_LEN])digests, n,
                             now, err)) != 0)
        goto fail;
    /* Results complete in any order; sorted, their rowids form runs. A call
     * finished twice in one batch is one entry. */
    qsort(begun, nbegun, sizeof *begun, by_rowid);
    for (size_t i = 0; i < nbegun; i++)
        if ((i == 0 || begun[i] != begun[i - 1]) &&
            (rc = run_push(sj, 0, &range, begun[i], err)) != 0)
            goto fail;
    if ((rc = run_flush(sj, 0, &range, err)) != 0 ||
        (rc = tx_commit(sj, err)) != 0)
        goto fail;
    sqlite3_free(rowids);
    for (size_t i = 0; i < n; i++)
        map_del(sj, calls[i]);
    maybe_prune(sj, now);
    return 0;
fail:
    tx_rollback(sj);
    sqlite3_free(rowids);
    return rc;
}

/* ------------------------------------------------------------ committer */

/* The records the call path appends to the committer's log (committer.h):
 *   'B' ticket(8) call-values              a call begun
 *   'F' ticket(8) rowid(8) digest(32) result-values
 *                                          its result (ticket 0: the call
 *                                          row was written on the call
 *                                          path, rowid and digest say which)
 *   'X' call-values result-values          a result of a call never begun
 * integers in the machine's order (the log never leaves it), values as
 * rowvals.h writes them. */
enum { REC_BEGIN = 'B', REC_FINISH = 'F', REC_WHOLE = 'X' };

/* Most records the committer's thread hands over at once (committer.c). */
#define CRECS_MAX 512
/* The log's room: thousands of calls of ordinary size, many times what
 * the thread is behind by under load (its pages are resident). */
#define LOG_BYTES (2u << 20)

/* A record read back: its texts point into the log. */
struct crec {
    int kind;
    uint64_t ticket;
    sqlite3_int64 rowid; /* the call's row (written, or named by 'F') */
    unsigned char digest[TG_CHAIN_LEN];
    tg__rowvals call, result;
    int finished; /* 'B': its result is in the same batch */
};

/* Reads record r into e. Returns 0, or -1 when r is not a record this file
 * writes (the log of a dead process is not trusted). */
static int crec_read(const tg__crecord *r, struct crec *e)
{
    const unsigned char *p = r->data;
    size_t left = r->len, used;
    if (left < 1)
        return -1;
    memset(e, 0, offsetof(struct crec, call));
    e->call.n = e->result.n = 0;
    e->finished = 0;
    e->kind = *p++;
    left--;
    if (e->kind != REC_BEGIN && e->kind != REC_FINISH && e->kind != REC_WHOLE)
        return -1;
    if (e->kind != REC_WHOLE) {
        if (left < 8)
            return -1;
        memcpy(&e->ticket, p, 8);
        p += 8;
        left -= 8;
    }
    if (e->kind == REC_FINISH) {
        if (left < 8 + TG_CHAIN_LEN)
            return -1;
        memcpy(&e->rowid, p, 8);
        memcpy(e->digest, p + 8, TG_CHAIN_LEN);
        p += 8 + TG_CHAIN_LEN;
        left -= 8 + TG_CHAIN_LEN;
        if (e->ticket == 0 && e->rowid <= 0)
            return -1;
    } else if (e->kind == REC_BEGIN && e->ticket == 0) {
        return -1;
    }
    if (e->kind != REC_FINISH) {
        if (tg__rowvals_read(p, left, &e->call, &used) != 0 ||
            e->call.n != CALL_VALUES)
            return -1;
        p += used;
        left -= used;
    }
    if (e->kind != REC_BEGIN) {
        if (tg__rowvals_read(p, left, &e->result, &used) != 0 ||
            e->result.n != RESULT_VALUES)
            return -1;
        left -= used;
    }
    return left == 0 ? 0 : -1;
}

/* Appends a record: head[0..hlen) and the values a and b (NULL: none).
 * TG_ELIMIT when it is too large for the log (the caller writes it on the
 * call path instead). */
static int log_append(struct sqlite_journal *sj, const unsigned char *head,
                      size_t hlen, const tg__rowvals *a, const tg__rowvals *b,
                      tg_error *err)
{
    size_t need = hlen + tg__rowvals_size(a) + (b ? tg__rowvals_size(b) : 0);
    if (need > tg__committer_max_record(sj->com))
        return TG_ELIMIT;
    if (need > sj->rec_cap) {
        size_t cap = sj->rec_cap ? sj->rec_cap : 4096;
        while (cap < need)
            cap *= 2;
        unsigned char *grown = sqlite3_realloc64(sj->rec, cap);
        if (grown == NULL)
            return oom(err);
        sj->rec = grown;
        sj->rec_cap = cap;
    }
    unsigned char *p = sj->rec;
    memcpy(p, head, hlen);
    p += hlen;
    p += tg__rowvals_write(a, p);
    if (b != NULL)
        tg__rowvals_write(b, p);
    struct iovec iov = {sj->rec, need};
    return tg__committer_append(sj->com, &iov, 1, err);
}

/* The map key of a ticket (a committer's map holds no call pointers). */
static const tg_call *ticket_key(uint64_t ticket)
{
    return (const tg_call *)(uintptr_t)ticket;
}

/* Finds the row of ticket, begun by owner and still running, in the
 * journal (a replay whose 'B' record an earlier transaction wrote). */
static int row_by_ticket(struct sqlite_journal *sj,
                         const struct row_owner *owner, uint64_t ticket,
                         struct crec *e, int *found, tg_error *err)
{
    *found = 0;
    if (sj->st_by_ticket == NULL) {
        int rc = prepare(sj,
                         "SELECT " TG_CHAIN_CALL_COLUMNS " FROM running u"
                         " JOIN call_rows c ON c.rowid BETWEEN u.first AND"
                         " u.last WHERE c.ticket = ?1 AND c.owner_pid = ?2"
                         " AND c.owner_start = ?3 LIMIT 1",
                         &sj->st_by_ticket, err);
        if (rc != 0)
            return rc;
    }
    sqlite3_stmt *st = sj->st_by_ticket;
    int b = sqlite3_bind_int64(st, 1, (sqlite3_int64)ticket);
    b |= sqlite3_bind_int64(st, 2, owner->pid);
    b |= sqlite3_bind_int64(st, 3, owner->start);
    if (b != SQLITE_OK)
        return db_fail(sj, b, "binding a ticket", err);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        e->rowid = sqlite3_column_int64(st, 0);
        tg__chain_call_digest_stmt(st, 0, e->digest);
        *found = 1;
    }
    sqlite3_reset(st);
    if (step != SQLITE_ROW && step != SQLITE_DONE)
        return db_fail(sj, step, "looking up a ticket", err);
    return 0;
}

/* Writes the records e[0..n) of owner's log, inside an open transaction:
 * the call rows of 'B' and 'X' (rowids taken now), the result rows of 'F'
 * and 'X' in record order (the chain's order), `running` for the calls
 * begun and not finished, and the calls finished out of it. A 'B' enters
 * sj's map under its ticket (gen: this batch) so that a later batch's 'F'
 * finds its row; the tickets of calls finished here that an earlier batch
 * began go to sj->done_tickets[0..*ndone). In a replay (replay 1), an 'F'
 * whose ticket no record of the batch began is looked up in the journal,
 * and one found nowhere is left out. */
static int apply_records(struct sqlite_journal *sj, struct crec *e, size_t n,
                         const struct row_owner *owner, int replay,
                         unsigned gen, size_t *ndone, tg_error *err)
{
    const tg__rowvals *rv[ROWS_MAX];
    sqlite3_int64 ids[ROWS_MAX];
    uint64_t tickets[ROWS_MAX];
    unsigned char digests[ROWS_MAX][TG_CHAIN_LEN];
    struct crec *at[ROWS_MAX];
    struct rowid_run range = {0};
    size_t k = 0, m;
    int rc = 0;
    *ndone = 0;
    if (map_reserve(sj, n) != 0)
        return oom(err);
    /* Call rows, ROWS_MAX a statement. */
    for (size_t i = 0; i <= n && rc == 0; i++) {
        if (i < n && e[i].kind != REC_FINISH) {
            if ((rc = take_rowid(sj, &e[i].rowid, err)) != 0)
                break;
            at[k] = &e[i];
            rv[k] = &e[i].call;
            ids[k] = e[i].rowid;
            tickets[k++] = e[i].kind == REC_BEGIN ? e[i].ticket : 0;
        }
        if (k == ROWS_MAX || (i == n && k > 0)) {
            rc = insert_call_vals(sj, rv, ids, tickets, k, owner, digests, err);
            for (m = 0; m < k && rc == 0; m++) {
                memcpy(at[m]->digest, digests[m], TG_CHAIN_LEN);
                if (at[m]->kind == REC_BEGIN)
                    memcpy(map_put(sj, ticket_key(at[m]->ticket), at[m]->rowid,
                                   gen)
                               ->digest,
                           digests[m], TG_CHAIN_LEN);
            }
            k = 0;
        }
    }
    /* Result rows: each 'F' finds its call's row first. */
    for (size_t i = 0; i <= n && rc == 0; i++) {
        if (i < n && e[i].kind != REC_BEGIN) {
            if (e[i].kind == REC_FINISH && e[i].ticket != 0) {
                struct slot *s = map_find(sj, ticket_key(e[i].ticket));
                int found = s != NULL;
                if (s != NULL) {
                    e[i].rowid = s->rowid;
                    memcpy(e[i].digest, s->digest, TG_CHAIN_LEN);
                    s->finished = s->gen == gen;
                } else if (replay &&
                           (rc = row_by_ticket(sj, owner, e[i].ticket, &e[i],
                                               &found, err)) != 0) {
                    break;
                }
                if (!found && !replay) {
                    rc = tg__error_set(err, TG_EINTERNAL,
                                       "journal %s: a finished call's row is "
                                       "unknown (ticket %llu)",
                                       sj->path,
                                       (unsigned long long)e[i].ticket);
                    break;
                }
                if (!found)
                    continue;
                if (s == NULL || s->gen != gen)
                    sj->done_tickets[(*ndone)++] = e[i].ticket;
                else
                    e[i].finished = 1;
            } else if (e[i].kind == REC_FINISH) {
                sj->done_tickets[(*ndone)++] = 0; /* by rowid */
            }
            rv[k] = &e[i].result;
            ids[k] = e[i].rowid;
            memcpy(digests[k++], e[i].digest, TG_CHAIN_LEN);
        }
        if (k == ROWS_MAX || (i == n && k > 0)) {
            rc = insert_result_vals(
                sj, rv, ids, (const unsigned char(*)[TG_CHAIN_LEN])digests, k,
                err);
            k = 0;
        }
    }
    /* `running`: the calls begun here and not finished come in (their
     * rowids were taken in order), those finished here that were begun
     * before go out (sorted into runs). */
    for (size_t i = 0; i < n && rc == 0; i++)
        if (e[i].kind == REC_BEGIN) {
            struct slot *s = map_find(sj, ticket_key(e[i].ticket));
            if (s == NULL || !s->finished)
                rc = run_push(sj, 1, &range, e[i].rowid, err);
        }
    if (rc == 0)
        rc = run_flush(sj, 1, &range, err);
    sqlite3_int64 *out =
        sqlite3_malloc64((sqlite3_uint64)(n + 1) * sizeof *out);
    if (rc == 0 && out == NULL)
        rc = oom(err);
    size_t nout = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (e[i].kind == REC_FINISH && e[i].rowid > 0 && !e[i].finished)
            out[nout++] = e[i].rowid;
    if (rc == 0) {
        qsort(out, nout, sizeof *out, by_rowid);
        for (size_t i = 0; i < nout && rc == 0; i++)
            if (i == 0 || out[i] != out[i - 1])
                rc = run_push(sj, 0, &range, out[i], err);
        if (rc == 0)
            rc = run_flush(sj, 0, &range, err);
    }
    sqlite3_free(out);
    return rc;
}

/* Records in committer_logs that log `name` is in the journal up to seq,
 * inside an open transaction. */
static int log_seq_set(struct sqlite_journal *sj, const char *name,
                       uint64_t seq, tg_error *err)
{
    if (sj->st_log_seq == NULL) {
        int rc = prepare(sj,
                         "INSERT OR REPLACE INTO committer_logs(log, seq)"
                         " VALUES (?1, ?2)",
                         &sj->st_log_seq, err);
        if (rc != 0)
            return rc;
    }
    int b = bind_text(sj->st_log_seq, 1, name);
    b |= sqlite3_bind_int64(sj->st_log_seq, 2, (sqlite3_int64)seq);
    if (b != SQLITE_OK)
        return db_fail(sj, b, "binding a log's progress", err);
    return run(sj, sj->st_log_seq, "recording a log's progress", err);
}

/* Reads recs[0..n) into sj->crecs, writes them and the log's progress in
 * one transaction, and settles sj's map after it: the tickets of calls
 * finished leave it; on failure, those this batch began leave it too. */
static int log_seq_get(struct sqlite_journal *sj, const char *name,
                       uint64_t *seq, tg_error *err);

static int write_batch(struct sqlite_journal *sj, const tg__crecord *recs,
                       size_t n, const struct row_owner *owner, int replay,
                       const char *log_name, tg_error *err)
{
    struct crec *e = sj->crecs;
    unsigned gen = ++sj->gen;
    size_t ndone = 0;
    int rc = tx_begin(sj, err);
    if (rc == 0 && replay) {
        /* Another process may have replayed some of it meanwhile. */
        uint64_t done = 0;
        if ((rc = log_seq_get(sj, log_name, &done, err)) == 0)
            while (n > 0 && recs[0].seq <= done) {
                recs++;
                n--;
            }
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (crec_read(&recs[i], &e[i]) != 0) {
            if (replay) {
                n = i; /* a damaged tail: what came before it counts */
                break;
            }
            rc = tg__error_set(err, TG_EINTERNAL,
                               "journal %s: the committer's log holds a "
                               "record it cannot read",
                               sj->path);
        }
    if (rc == 0)
        rc = apply_records(sj, e, n, owner, replay, gen, &ndone, err);
    if (rc == 0 && n > 0)
        rc = log_seq_set(sj, log_name, recs[n - 1].seq, err);
    if (rc == 0)
        rc = tx_commit(sj, err);
    if (rc != 0)
        tx_rollback(sj);
    for (size_t i = 0; i < n; i++)
        if (e[i].kind == REC_BEGIN) {
            struct slot *s = map_find(sj, ticket_key(e[i].ticket));
            if (s != NULL && s->gen == gen &&
                (rc != 0 || s->finished || replay))
                map_del(sj, ticket_key(e[i].ticket));
        }
    for (size_t i = 0; rc == 0 && i < ndone; i++)
        if (sj->done_tickets[i] != 0)
            map_del(sj, ticket_key(sj->done_tickets[i]));
    return rc;
}

/* The committer's apply (committer.h), on its thread: ud is the journal of
 * the call path, whose wsj writes. */
static int commit_records(void *ud, const tg__crecord *recs, size_t n,
                          tg_error *err)
{
    struct sqlite_journal *sj = ud;
    struct row_owner owner = own_owner(sj);
    return write_batch(sj->wsj, recs, n, &owner, 0, sj->log_name, err);
}

/* Waits for the committer to write what the call path gave it, before sj
 * reads or writes on the call path itself. */
static int drain(struct sqlite_journal *sj, tg_error *err)
{
    return sj->com != NULL ? tg__committer_drain(sj->com, err) : 0;
}

/* drain before a read: what the committer cannot write yet stays in its
 * log (the next opener replays it), and the read shows what is in. */
static void drain_for_read(struct sqlite_journal *sj)
{
    tg_error ignored;
    tg__error_init(&ignored);
    (void)drain(sj, &ignored);
}

/* Begins calls[0..n) through the committer: each gets a ticket, a map
 * slot, and a 'B' record. A call too large for the log ends the batch
 * early: *done says how many went (the rest go on the call path). */
/* Takes the calls of calls[0..n) that batch gen put in the map out of it. */
static void forget_begun(struct sqlite_journal *sj, tg_call *const *calls,
                         size_t n, unsigned gen)
{
    for (size_t i = 0; i < n; i++) {
        struct slot *s = map_find(sj, calls[i]);
        if (s != NULL && s->gen == gen)
            map_del(sj, calls[i]);
    }
}

static int begin_logged(struct sqlite_journal *sj, tg_call *const *calls,
                        size_t n, size_t *done, tg_error *err)
{
    struct owned own = {.n = 0};
    sqlite3_int64 now = tg__now_ms();
    unsigned gen = ++sj->gen;
    /* As a transaction would: no call runs on a journal moved or replaced
     * under us. A finish checked within the last millisecond (a client
     * calling one at a time) counts. */
    int rc = now - sj->ours_at > 1 ? still_ours(sj, err) : 0;
    *done = 0;
    if (rc != 0)
        return rc;
    if (map_reserve(sj, n) != 0)
        return oom(err);
    size_t i;
    for (i = 0; i < n && rc == 0; i++) {
        if (map_find(sj, calls[i]) != NULL)
            continue; /* begun twice: its first row stays */
        tg__rowvals rv;
        unsigned char head[1 + 8];
        uint64_t ticket = sj->ticket + 1;
        head[0] = REC_BEGIN;
        memcpy(head + 1, &ticket, 8);
        if ((rc = call_vals(sj, calls[i], now, &own, &rv, err)) == 0 &&
            (rc = log_append(sj, head, sizeof head, &rv, NULL, err)) == 0) {
            sj->ticket = ticket;
            map_put(sj, calls[i], 0, gen)->ticket = ticket;
        }
        owned_free(&own);
    }
    if (rc == TG_ELIMIT) {
        *done = i - 1;
        return 0;
    }
    if (rc != 0) {
        /* The batch fails: its calls never run, and leave the map (the
         * runtime frees them; a pointer left here could name a new call).
         * The records appended stay: their rows end INTERRUPTED once this
         * process is gone, a failure as rare as its cause (the log full
         * while the thread cannot write, or no memory). */
        forget_begun(sj, calls, n, gen);
        return rc;
    }
    *done = n;
    return 0;
}

/* Finishes calls[0..n) with results[0..n) through the committer: an 'F'
 * for a call begun, an 'X' for one never begun. A record too large for the
 * log is written on the call path (after a drain, so its call's row is
 * there). */
static int finish_inline(struct sqlite_journal *sj, tg_call *const *calls,
                         tg_result *const *results, size_t n, tg_error *err);

static int finish_logged(struct sqlite_journal *sj, tg_call *const *calls,
                         tg_result *const *results, size_t n, tg_error *err)
{
    struct owned own = {.n = 0};
    sqlite3_int64 now = tg__now_ms();
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct slot *s = map_find(sj, calls[i]);
        tg__rowvals res, call;
        unsigned char head[1 + 8 + 8 + TG_CHAIN_LEN];
        size_t hlen;
        if ((rc = result_vals(calls[i], results[i], now, &own, &res, err)) != 0)
            break;
        if (s != NULL) {
            head[0] = REC_FINISH;
            memcpy(head + 1, &s->ticket, 8);
            memcpy(head + 9, &s->rowid, 8);
            memcpy(head + 17, s->digest, TG_CHAIN_LEN);
            hlen = sizeof head;
            rc = log_append(sj, head, hlen, &res, NULL, err);
        } else {
            head[0] = REC_WHOLE;
            hlen = 1;
            rc = call_vals(sj, calls[i], now, &own, &call, err);
            if (rc == 0)
                rc = log_append(sj, head, hlen, &call, &res, err);
        }
        owned_free(&own);
        if (rc == TG_ELIMIT) {
            /* On the call path: the row of a call begun through the
             * committer is known once it drained. */
            if ((rc = drain(sj, err)) != 0)
                break;
            if (s != NULL && s->ticket != 0) {
                /* The thread is idle after the drain: its map is ours to
                 * read until the next append. */
                uint64_t t = s->ticket;
                struct slot *w = map_find(sj->wsj, ticket_key(t));
                if (w == NULL) {
                    rc = tg__error_set(err, TG_EINTERNAL,
                                       "journal %s: a call's row is unknown",
                                       sj->path);
                    break;
                }
                s->rowid = w->rowid;
                memcpy(s->digest, w->digest, TG_CHAIN_LEN);
                s->ticket = 0;
                map_del(sj->wsj, ticket_key(t));
            }
            rc = finish_inline(sj, calls + i, results + i, 1, err);
            continue;
        }
        if (rc == 0)
            map_del(sj, calls[i]);
    }
    return rc;
}

static void committer_start(struct sqlite_journal *sj);

/* Whether begin may go through the committer: there is one, and no call
 * of the batch takes part in re-delivery (its lookup must see every row
 * before the call runs; such batches go on the call path). */
static int may_log(struct sqlite_journal *sj, tg_call *const *calls, size_t n,
                   tg_result **replies)
{
    if (sj->com == NULL)
        return 0;
    for (size_t i = 0; replies != NULL && i < n; i++)
        if (dedup_eligible(calls[i]))
            return 0;
    return 1;
}

static int sj_begin_dedup(tg__journal *j, tg_call *const *calls, size_t n,
                          tg_result **replies, tg_error *err)
{
    struct sqlite_journal *sj = sj_of(j);
    size_t done = 0;
    if (n == 0)
        return 0;
    committer_start(sj);
    if (may_log(sj, calls, n, replies)) {
        int rc = begin_logged(sj, calls, n, &done, err);
        if (rc != 0 || done == n)
            return rc;
    }
    /* tx_begin drains the committer first */
    unsigned gen = sj->gen;
    int rc = begin_inline(sj, calls + done, n - done,
                          replies ? replies + done : NULL, err);
    if (rc != 0 && done > 0)
        forget_begun(sj, calls, done, gen); /* the whole batch failed */
    return rc;
}

static int sj_begin(tg__journal *j, tg_call *const *calls, size_t n,
                    tg_error *err)
{
    return sj_begin_dedup(j, calls, n, NULL, err);
}

static int sj_finish(tg__journal *j, tg_call *const *calls,
                     tg_result *const *results, size_t n, tg_error *err)
{
    struct sqlite_journal *sj = sj_of(j);
    committer_start(sj);
    if (sj->com == NULL)
        return finish_inline(sj, calls, results, n, err);
    for (size_t i = 0; i < n; i++)
        if (results[i] == NULL)
            return tg__error_set(err, TG_EINVAL,
                                 "journal: call '%s' has no result to record",
                                 calls[i]->id);
    /* As a transaction on the call path would: a journal moved or
     * replaced under us takes no result, and none is shown. */
    int rc = still_ours(sj, err);
    if (rc == 0) {
        sj->ours_at = tg__now_ms();
        rc = finish_logged(sj, calls, results, n, err);
    }
    if (rc == 0)
        maybe_prune(sj, tg__now_ms());
    return rc;
}

/* ------------------------------------------------------------ committer's logs
 */

/* Records of a log gathered by tg__ring_scan (pointing into its map). */
struct gathered {
    tg__crecord *recs;
    size_t n, cap;
};

static int gather(void *ud, uint64_t seq, const void *data, size_t len)
{
    struct gathered *g = ud;
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 256;
        tg__crecord *grown =
            sqlite3_realloc64(g->recs, (sqlite3_uint64)cap * sizeof *grown);
        if (grown == NULL)
            return TG_ENOMEM;
        g->recs = grown;
        g->cap = cap;
    }
    g->recs[g->n++] = (tg__crecord){data, len, seq};
    return 0;
}

/* The last record of log `name` in the journal (0: none), read inside the
 * open transaction. */
static int log_seq_get(struct sqlite_journal *sj, const char *name,
                       uint64_t *seq, tg_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc =
        prepare(sj, "SELECT seq FROM committer_logs WHERE log = ?1", &st, err);
    if (rc != 0)
        return rc;
    *seq = 0;
    int b = bind_text(st, 1, name);
    int step = b == SQLITE_OK ? sqlite3_step(st) : b;
    if (step == SQLITE_ROW)
        *seq = (uint64_t)sqlite3_column_int64(st, 0);
    else if (step != SQLITE_DONE)
        rc = db_fail(sj, step, "reading a log's progress", err);
    sqlite3_finalize(st);
    return rc;
}

/* Writes what the log of a dead process holds past its progress, in
 * batches (each with the progress it reaches). A call it began and never
 * finished is left running under its owner, for recover(). */
static int replay_log(struct sqlite_journal *sj, tg__ring *ring,
                      const char *name, tg_error *err)
{
    struct gathered g = {0};
    int64_t pid, start;
    const char *boot;
    tg__ring_owner(ring, &pid, &start, &boot);
    struct row_owner owner = {pid, start, boot && *boot ? boot : NULL};
    uint64_t done;
    int rc = tx_begin(sj, err);
    if (rc == 0)
        rc = log_seq_get(sj, name, &done, err);
    tx_rollback(sj);
    if (rc != 0)
        return rc;
    if (tg__ring_scan(ring, done, gather, &g) != 0) {
        sqlite3_free(g.recs);
        return oom(err);
    }
    if (sj->crecs == NULL &&
        ((sj->crecs = sqlite3_malloc64(CRECS_MAX * sizeof *sj->crecs)) ==
             NULL ||
         (sj->done_tickets =
              sqlite3_malloc64(CRECS_MAX * sizeof *sj->done_tickets)) == NULL))
        rc = oom(err);
    for (size_t at = 0; rc == 0 && at < g.n; at += CRECS_MAX) {
        size_t k = g.n - at < CRECS_MAX ? g.n - at : CRECS_MAX;
        rc = write_batch(sj, g.recs + at, k, &owner, 1, name, err);
    }
    sqlite3_free(g.recs);
    return rc;
}

/* The directory of path (".": none) and its last component's start. */
static void split_path(const char *path, char *dir, size_t cap,
                       const char **base)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        snprintf(dir, cap, ".");
        *base = path;
    } else {
        snprintf(dir, cap, "%.*s", (int)(slash - path) + (slash == path), path);
        *base = slash + 1;
    }
}

/* Replays the logs beside the journal whose owners are gone: what a
 * process killed before its committer wrote it. A log that cannot be read
 * (being made by a live process right now, or not a log) is left alone. */
static int replay_logs(struct sqlite_journal *sj, tg_error *err)
{
    char dir[PATH_MAX], prefix[PATH_MAX], full[PATH_MAX];
    const char *base;
    split_path(sj->path, dir, sizeof dir, &base);
    int plen = snprintf(prefix, sizeof prefix, "%s-log-", base);
    if (plen <= 0 || (size_t)plen >= sizeof prefix)
        return 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, prefix, (size_t)plen) != 0)
            continue;
        int flen = snprintf(full, sizeof full, "%s/%s", dir, de->d_name);
        if (flen <= 0 || (size_t)flen >= sizeof full)
            continue;
        tg__ring *ring = NULL;
        tg_error ignored;
        tg__error_init(&ignored);
        int orc = tg__ring_open_existing(full, &ring, &ignored);
        if (orc != 0) {
            /* No header yet: a log being made right now, or one whose
             * maker died making it (no record in it then); its name says
             * whose. */
            long long pid, start;
            unsigned serial;
            if (orc == TG_EPARSE &&
                sscanf(de->d_name + plen, "%lld-%lld-%u", &pid, &start,
                       &serial) == 3 &&
                !owner_alive(sj, pid, start, NULL))
                (void)unlink(full);
            continue;
        }
        int64_t pid, start;
        const char *boot;
        tg__ring_owner(ring, &pid, &start, &boot);
        if (owner_alive(sj, pid, start, boot)) {
            tg__ring_close(ring, false);
            continue;
        }
        rc = replay_log(sj, ring, de->d_name, err);
        tg__ring_close(ring, false);
        if (rc != 0)
            break;
        /* Gone first, then its row: a row without a log is harmless, a
         * log without its row would be replayed again. */
        if (unlink(full) == 0) {
            char *sql = sqlite3_mprintf(
                "DELETE FROM committer_logs WHERE log = %Q", de->d_name);
            if (sql == NULL)
                rc = oom(err);
            else
                rc = exec(sj, sql, "forgetting a replayed log", err);
            sqlite3_free(sql);
        }
    }
    closedir(d);
    return rc;
}

static int sj_open(const char *path, const tg__journal_options *opts,
                   int writer, struct sqlite_journal **out, tg_error *err);
static void sj_close(tg__journal *j);

/* Starts the committer of a journal that writes to a file, with its first
 * begin or finish (a journal opened to be read makes none): not with
 * synchronous FULL, whose rows must reach the disk before a result is
 * shown, nor when the options ask for rows on the call path. Without one,
 * for any reason, rows are written on the call path. */
static void live_add(struct sqlite_journal *sj);

static void committer_start(struct sqlite_journal *sj)
{
    static _Atomic unsigned serial;
    if (sj->com_tried)
        return;
    sj->com_tried = 1;
    if (!sj->watched || sj->opts.sync_full || sj->opts.commit_inline)
        return;
    unsigned n = atomic_fetch_add(&serial, 1);
    sj->log_path = sqlite3_mprintf("%s-log-%lld-%lld-%u", sj->path,
                                   (long long)sj->pid, (long long)sj->start, n);
    if (sj->log_path == NULL)
        return;
    const char *slash = strrchr(sj->log_path, '/');
    sj->log_name = slash ? slash + 1 : sj->log_path;
    tg_error e;
    tg__error_init(&e);
    if (sj_open(sj->path, &sj->opts, 1, &sj->wsj, &e) != 0)
        goto fail;
    sj->wsj->key = sj->key; /* the prepared pads (the key is not kept) */
    if ((sj->wsj->crecs =
             sqlite3_malloc64(CRECS_MAX * sizeof *sj->wsj->crecs)) == NULL ||
        (sj->wsj->done_tickets = sqlite3_malloc64(
             CRECS_MAX * sizeof *sj->wsj->done_tickets)) == NULL)
        goto fail;
    if (tg__committer_start(sj->log_path, LOG_BYTES, sj->pid, sj->start,
                            sj->boot, commit_records, sj, &sj->com, &e) != 0)
        goto fail;
    live_add(sj);
    return;
fail:
    if (sj->wsj != NULL)
        sj_close(&sj->wsj->base);
    sj->wsj = NULL;
    sqlite3_free(sj->log_path);
    sj->log_path = NULL;
    sj->log_name = NULL;
}

/* The journals of this process whose committer runs, so that opening the
 * same file again (tg_journal_show and the other readers by path, a
 * second runtime) first waits for what they were given: a process reads
 * its own writes. */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sqlite_journal *live_head;

static void live_add(struct sqlite_journal *sj)
{
    pthread_mutex_lock(&live_mu);
    sj->live_next = live_head;
    live_head = sj;
    pthread_mutex_unlock(&live_mu);
}

static void live_remove(struct sqlite_journal *sj)
{
    pthread_mutex_lock(&live_mu);
    for (struct sqlite_journal **p = &live_head; *p != NULL;
         p = &(*p)->live_next)
        if (*p == sj) {
            *p = sj->live_next;
            break;
        }
    pthread_mutex_unlock(&live_mu);
}

/* Drains the committers of this process writing the file sj opened. */
static void live_drain(const struct sqlite_journal *sj)
{
    pthread_mutex_lock(&live_mu);
    for (struct sqlite_journal *o = live_head; o != NULL; o = o->live_next)
        if (o != sj && o->dev == sj->dev && o->ino == sj->ino) {
            tg_error ignored;
            tg__error_init(&ignored);
            (void)tg__committer_drain(o->com, &ignored);
        }
    pthread_mutex_unlock(&live_mu);
}

/* Stops the committer (its records written) and forgets its log. */
static void committer_stop(struct sqlite_journal *sj)
{
    if (sj->com != NULL)
        live_remove(sj);
    if (sj->com != NULL && tg__committer_stop(sj->com) && sj->db != NULL) {
        char *sql = sqlite3_mprintf("DELETE FROM committer_logs WHERE log = %Q",
                                    sj->log_name);
        tg_error ignored;
        tg__error_init(&ignored);
        if (sql != NULL)
            (void)exec(sj, sql, "forgetting the log", &ignored);
        sqlite3_free(sql);
    }
    sj->com = NULL;
    if (sj->wsj != NULL)
        sj_close(&sj->wsj->base);
    sj->wsj = NULL;
    sqlite3_free(sj->log_path);
    sj->log_path = NULL;
}

/* ------------------------------------------------------------ recovery */

struct orphan {
    sqlite3_int64 rowid, pid;
};

/* Lists the running rows whose owner is gone (*out: sqlite3_malloc'd). */
static int find_orphans(struct sqlite_journal *sj, struct orphan **out,
                        size_t *n_out, tg_error *err)
{
    sqlite3_stmt *st = NULL;
    struct orphan *list = NULL;
    size_t n = 0, cap = 0;
    int rc = prepare(sj,
                     "SELECT c.rowid, c.owner_pid, c.owner_start,"
                     " c.owner_boot FROM running u"
                     " JOIN call_rows c ON c.rowid BETWEEN u.first AND u.last",
                     &st, err);
    if (rc != 0)
        goto fail;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        sqlite3_int64 pid = sqlite3_column_int64(st, 1);
        if (owner_alive(sj, pid, sqlite3_column_int64(st, 2),
                        (const char *)sqlite3_column_text(st, 3)))
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            struct orphan *grown =
                sqlite3_realloc64(list, (sqlite3_uint64)ncap * sizeof *list);
            if (grown == NULL) {
                rc = oom(err);
                goto fail;
            }
            list = grown;
            cap = ncap;
        }
        list[n].rowid = sqlite3_column_int64(st, 0);
        list[n].pid = pid;
        n++;
    }
    if (rc != SQLITE_DONE) {
        rc = db_fail(sj, rc, "reading running calls", err);
        goto fail;
    }
    sqlite3_finalize(st);
    *out = list;
    *n_out = n;
    return 0;
fail:
    sqlite3_finalize(st);
    sqlite3_free(list);
    return rc;
}

/* Gives every call left running by a dead process its INTERRUPTED result,
 * once: the rows are read again inside the write transaction, so two
 * processes recovering at the same time do not both write. */
static int recover(struct sqlite_journal *sj, tg_error *err)
{
    struct orphan *list = NULL;
    size_t n = 0;
    sqlite3_stmt *ins = NULL;
    int rc = find_orphans(sj, &list, &n, err);
    if (rc != 0 || n == 0)
        goto done; /* the common case takes no write lock */
    sqlite3_free(list);
    list = NULL;
    if ((rc = prepare(sj,
                      "INSERT INTO results(call_rowid, id, tool, outcome,"
                      " execution, payload, duration_ms, completed_at,"
                      " caller_id)"
                      " SELECT rowid, id, tool, ?2, 'started', ?3, 0, ?4,"
                      " caller_id FROM call_rows WHERE rowid = ?1",
                      &ins, err)) != 0)
        goto done;
    if ((rc = tx_begin(sj, err)) != 0)
        goto done;
    if ((rc = find_orphans(sj, &list, &n, err)) != 0)
        goto fail;
    if (!sj->key.keyed && n > 0) {
        /* A chain made with a key is not continued without one (that
         * would read as a downgrade, see chain_verify.c): the calls wait
         * for an opener that has the key, the runtime's. */
        struct chain_head head;
        if ((rc = chain_read(sj, &head, err)) != 0)
            goto fail;
        if (head.key_id[0] != '\0') {
            tx_rollback(sj);
            goto done;
        }
    }
    sqlite3_int64 now = tg__now_ms();
    for (size_t i = 0; i < n; i++) {
        char payload[256];
        /* No caller text goes in, so plain formatting is valid JSON. */
        snprintf(payload, sizeof payload,
                 "{\"error\":{\"message\":\"the process running this call "
                 "died before it ended (pid %lld)\",\"code\":\"INTERRUPTED\"}}",
                 (long long)list[i].pid);
        int b = sqlite3_bind_int64(ins, 1, list[i].rowid);
        b |= sqlite3_bind_int(ins, 2, TG_OUTCOME_ERROR);
        b |= sqlite3_bind_text(ins, 3, payload, -1, SQLITE_TRANSIENT);
        b |= sqlite3_bind_int64(ins, 4, now);
        if (b != SQLITE_OK) {
            rc = db_fail(sj, b, "binding a recovered result", err);
            goto fail;
        }
        if ((rc = run(sj, ins, "recording an interrupted call", err)) != 0 ||
            (!sj->opts.unchained &&
             (rc = chain_row_in_place(sj, list[i].rowid, err)) != 0) ||
            (rc = running_remove(sj, list[i].rowid, list[i].rowid, err)) != 0)
            goto fail;
    }
    rc = tx_commit(sj, err);
    if (rc != 0)
        goto fail;
    goto done;
fail:
    tx_rollback(sj);
done:
    sqlite3_finalize(ins);
    sqlite3_free(list);
    return rc;
}

/* ------------------------------------------------------------ reading */

/* The columns every query selects, in this order. */
#define ROW_COLUMNS                                                            \
    "c.rowid, c.id, c.tool, c.args, c.args_raw, c.checksum, c.caller_id,"      \
    " c.context, c.skills, c.format, c.idx, c.inline_output,"                  \
    " c.from_artifact_tool, c.created_at, c.started_at,"                       \
    " r.call_rowid, r.id, r.tool, r.outcome, r.execution, r.payload,"          \
    " r.content, r.artifact, r.duration_ms, r.exit_status, r.completed_at,"    \
    " r.replayed, r.repaired, r.decisions, c.args_bytes"
enum {
    C_ROWID,
    C_ID,
    C_TOOL,
    C_ARGS,
    C_ARGS_RAW,
    C_CHECKSUM,
    C_CALLER,
    C_CONTEXT,
    C_SKILLS,
    C_FORMAT,
    C_IDX,
    C_INLINE,
    C_FROM_ART,
    C_CREATED,
    C_STARTED,
    R_ROWID,
    R_ID,
    R_TOOL,
    R_OUTCOME,
    R_EXECUTION,
    R_PAYLOAD,
    R_CONTENT,
    R_ARTIFACT,
    R_DURATION,
    R_EXIT,
    R_COMPLETED,
    R_REPLAYED,
    R_REPAIRED,
    R_DECISIONS,
    C_ARGS_BYTES
};

static const char *col_text(sqlite3_stmt *st, int col)
{
    return (const char *)sqlite3_column_text(st, col);
}

/* Decodes a JSON column; *out is NULL for SQL NULL. */
static int col_json(struct sqlite_journal *sj, sqlite3_stmt *st, int col,
                    json_t **out, tg_error *err)
{
    *out = NULL;
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return 0;
    const char *text = col_text(st, col);
    if (text == NULL)
        return db_fail(sj, SQLITE_NOMEM, "reading a row", err);
    json_error_t jerr;
    *out = json_loads(text, JSON_DECODE_ANY, &jerr); /* new ref */
    if (*out != NULL)
        return 0;
    if (json_error_code(&jerr) == json_error_out_of_memory)
        return oom(err);
    return tg__error_set(err, TG_EJOURNAL,
                         "journal %s: row %lld: column '%s' is not JSON: %s",
                         sj->path, (long long)sqlite3_column_int64(st, C_ROWID),
                         sqlite3_column_name(st, col), jerr.text);
}

static tg_execution execution_from(const char *name)
{
    if (name != NULL && strcmp(name, "started") == 0)
        return TG_EXECUTION_STARTED;
    if (name != NULL && strcmp(name, "finished") == 0)
        return TG_EXECUTION_FINISHED;
    return TG_EXECUTION_NOT_STARTED;
}

/* The call record of the current row (tg__call_to_json's shape). */
static int row_call(struct sqlite_journal *sj, sqlite3_stmt *st, json_t **out,
                    tg_error *err)
{
    *out = NULL;
    json_t *args = NULL, *context = NULL, *skills = NULL; /* new refs */
    tg_call *call = NULL;
    int rc;
    if ((rc = col_json(sj, st, C_ARGS, &args, err)) != 0 ||
        (rc = col_json(sj, st, C_CONTEXT, &context, err)) != 0 ||
        (rc = col_json(sj, st, C_SKILLS, &skills, err)) != 0)
        goto fail;
    /* The format column stays valid until the statement steps again, longer
     * than this call record lives. */
    const char *format = col_text(st, C_FORMAT);
    call = tg__call_new(col_text(st, C_ID), col_text(st, C_TOOL), format);
    if (call == NULL ||
        (json_is_object(args) && tg__call_set_args(call, args) != 0) ||
        tg__call_set_args_raw(call, col_text(st, C_ARGS_RAW)) != 0 ||
        tg__strset(&call->caller_id, col_text(st, C_CALLER)) != 0) {
        rc = oom(err);
        goto fail;
    }
    if (json_is_object(context)) {
        call->context = context;
        context = NULL;
    }
    if (json_is_array(skills)) {
        call->skills = skills;
        skills = NULL;
    }
    /* The stored checksum is the one computed when the call ran (perhaps
     * with a key this process lacks): seed the cache with it. */
    const char *sum = col_text(st, C_CHECKSUM);
    if (sum != NULL && strlen(sum) < sizeof call->checksum)
        memcpy(call->checksum, sum, strlen(sum) + 1);
    call->index = (size_t)sqlite3_column_int64(st, C_IDX);
    call->inline_output = sqlite3_column_int(st, C_INLINE) != 0;
    call->from_artifact_tool = sqlite3_column_int(st, C_FROM_ART) != 0;
    call->created_at = sqlite3_column_int64(st, C_CREATED);
    if (sqlite3_column_type(st, R_ROWID) != SQLITE_NULL) {
        call->completed_at = sqlite3_column_int64(st, R_COMPLETED);
        call->updated_at = call->completed_at;
    } else {
        call->completed_at = 0;
        call->updated_at = sqlite3_column_int64(st, C_STARTED);
    }
    *out = tg__call_to_json(call);
    /* arguments kept only in part: args_raw is their start, this their
     * size (v7) */
    if (*out != NULL && sqlite3_column_type(st, C_ARGS_BYTES) != SQLITE_NULL &&
        json_object_set_new(
            *out, "args_bytes",
            json_integer(sqlite3_column_int64(st, C_ARGS_BYTES))) != 0) {
        json_decref(*out);
        *out = NULL;
    }
    if (*out == NULL)
        rc = oom(err);
fail:
    tg__call_free(call);
    json_decref(args);
    json_decref(context);
    json_decref(skills);
    return rc;
}

/* The result of the current row as a record object (*out: the caller's). */
static int row_result_rec(struct sqlite_journal *sj, sqlite3_stmt *st,
                          tg_result **out, tg_error *err)
{
    *out = NULL;
    json_t *payload = NULL, *content = NULL, *artifact = NULL; /* new refs */
    json_t *decisions = NULL;                                  /* new ref */
    tg_result *r = NULL;
    int rc;
    if ((rc = col_json(sj, st, R_PAYLOAD, &payload, err)) != 0 ||
        (rc = col_json(sj, st, R_CONTENT, &content, err)) != 0 ||
        (rc = col_json(sj, st, R_ARTIFACT, &artifact, err)) != 0 ||
        (rc = col_json(sj, st, R_DECISIONS, &decisions, err)) != 0)
        goto fail;
    if (payload == NULL && (payload = json_null()) == NULL) {
        rc = oom(err);
        goto fail;
    }
    int outcome = sqlite3_column_int(st, R_OUTCOME);
    /* Values written by a newer toolgate read as error (docs/records.md). */
    if (outcome < TG_OUTCOME_SUCCESS || outcome > TG_OUTCOME_DENIED)
        outcome = TG_OUTCOME_ERROR;
    const char *id = col_text(st, R_ID), *tool = col_text(st, R_TOOL);
    tg_call probe = {.id = (char *)(id ? id : ""),
                     .tool = (char *)(tool ? tool : "")};
    r = tg__result_new(&probe, (tg_outcome)outcome,
                       execution_from(col_text(st, R_EXECUTION)), payload);
    payload = NULL; /* taken, also on failure */
    if (r == NULL) {
        rc = oom(err);
        goto fail;
    }
    if (json_is_array(content)) {
        r->content = content;
        content = NULL;
    }
    if (json_is_object(artifact)) {
        r->artifact = artifact;
        artifact = NULL;
    }
    if (json_is_object(decisions)) {
        r->decisions = decisions;
        decisions = NULL;
    }
    r->duration_ms = sqlite3_column_double(st, R_DURATION);
    r->exit_status = sqlite3_column_type(st, R_EXIT) == SQLITE_NULL
                         ? -1
                         : sqlite3_column_int(st, R_EXIT);
    r->completed_at = sqlite3_column_int64(st, R_COMPLETED);
    r->replayed = sqlite3_column_int(st, R_REPLAYED) != 0;
    r->repaired = (unsigned)sqlite3_column_int(st, R_REPAIRED);
    *out = r;
    r = NULL;
fail:
    tg__result_free(r);
    json_decref(payload);
    json_decref(content);
    json_decref(artifact);
    json_decref(decisions);
    return rc;
}

/* Appends the result record of the current row (tg__result_write's text,
 * with the gate's decisions), with "call": call when call is not NULL. */
static int row_result(struct sqlite_journal *sj, sqlite3_stmt *st,
                      const json_t *call, tg__buf *out, tg_error *err)
{
    tg_result *r = NULL;
    int rc = row_result_rec(sj, st, &r, err);
    if (rc != 0)
        return rc;
    rc = tg__result_write(r, TG__RECORD_DECISIONS, call, out);
    tg__result_free(r);
    return rc == 0 ? 0 : out_fail(rc, err);
}

/* ------------------------------------------------------------ re-delivery */

/* Whether a call takes part in re-delivery: MCP request ids belong to their
 * connection (a new connection reuses 1, 2, ...), and a call that cannot run
 * (a parse error, no checksum) ends the same way whatever the journal holds. */
static int dedup_eligible(const tg_call *call)
{
    if (call->format != NULL && strcmp(call->format, "mcp") == 0)
        return 0;
    if (call->pre_error_code != NULL || call->args_text == NULL)
        return 0;
    return 1;
}

/* Whether call row c is in a `running` range: the range with the greatest
 * first at or below it, one probe. */
#define RUNNING_SQL                                                            \
    "ifnull((SELECT u.last FROM running u WHERE u.first <= c.rowid"            \
    " ORDER BY u.first DESC LIMIT 1) >= c.rowid, 0)"

/* The columns of ROW_COLUMNS and then these. */
enum { L_RUNNING = C_ARGS_BYTES + 1, L_OWNER };

/* See tg__journal_begin_dedup. Runs inside begin's write transaction. The
 * oldest matching row answers: later rows of the same id are replays of it
 * (carrying the same result, so one still answers once retention deleted
 * the original) or refusals (never started, so never matched). A call that
 * never started left no side effect to protect, so its id is free again (a
 * call refused because a tool was missing runs once the tool is
 * configured). */
static int lookup(struct sqlite_journal *sj, const tg_call *call,
                  sqlite3_int64 now, tg_result **reply, tg_error *err)
{
    int rc = 0;
    *reply = NULL;
    if (!dedup_eligible(call))
        return 0;
    const char *sum = tg_call_checksum(call);
    if (sum == NULL)
        return oom(err);
    if (sj->st_lookup == NULL &&
        (rc = prepare(sj,
                      "SELECT " ROW_COLUMNS ", " RUNNING_SQL ", c.owner_pid"
                      " FROM call_rows c"
                      " LEFT JOIN results r ON r.call_rowid = c.rowid"
                      " WHERE c.id = ?1 AND c.caller_id IS ?2"
                      " AND c.format != 'mcp'"
                      " AND (" RUNNING_SQL " OR"
                      " r.execution != 'not_started')"
                      " ORDER BY c.rowid LIMIT 1",
                      &sj->st_lookup, err)) != 0)
        return rc;
    sqlite3_stmt *st = sj->st_lookup;
    int b = bind_text(st, 1, call->id);
    b |= call->caller_id ? bind_text(st, 2, call->caller_id)
                         : sqlite3_bind_null(st, 2);
    if (b != SQLITE_OK) {
        rc = db_fail(sj, b, "binding a lookup", err);
        goto done;
    }
    int step = sqlite3_step(st);
    if (step == SQLITE_DONE)
        goto done;
    if (step != SQLITE_ROW) {
        rc = db_fail(sj, step, "looking up a re-delivered call", err);
        goto done;
    }
    const char *had = col_text(st, C_CHECKSUM);
    if (had == NULL && sqlite3_column_type(st, C_CHECKSUM) != SQLITE_NULL) {
        rc = db_fail(sj, SQLITE_NOMEM, "looking up a re-delivered call", err);
        goto done;
    }
    const char *scope = call->caller_id ? call->caller_id : "(none)";
    if (had == NULL || strcmp(had, sum) != 0) {
        json_t *details = json_pack("{s:s?,s:s}", "recorded_checksum", had,
                                    "checksum", sum); /* new ref */
        if (details == NULL) {
            rc = oom(err);
            goto done;
        }
        *reply = tg__result_error(
            call, TG_EXECUTION_NOT_STARTED, "CALL_ID_CONFLICT", details,
            "call id '%s' (caller %s) was already used with other arguments: "
            "recorded checksum %s, this call's checksum %s; not run",
            call->id, scope, had ? had : "(none)", sum);
    } else if (sqlite3_column_int(st, L_RUNNING) != 0) {
        *reply = tg__result_error(
            call, TG_EXECUTION_NOT_STARTED, "CALL_IN_PROGRESS", NULL,
            "call '%s' (caller %s) is already running (process %lld); a "
            "re-delivered call is not run twice",
            call->id, scope, (long long)sqlite3_column_int64(st, L_OWNER));
    } else {
        if ((rc = row_result_rec(sj, st, reply, err)) != 0)
            goto done;
        (*reply)->replayed = true;
        (*reply)->completed_at = now;
    }
    if (*reply == NULL)
        rc = oom(err);
done:
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc;
}

/* Calls of one begin batch, sorted by wire id and caller scope to find
 * the ids a batch holds twice. */
struct batch_entry {
    const tg_call *call;
    size_t i;
};

static int same_scope(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int by_id_scope(const void *pa, const void *pb)
{
    const struct batch_entry *a = pa, *b = pb;
    int c = strcmp(a->call->id, b->call->id);
    if (c == 0 && !same_scope(a->call->caller_id, b->call->caller_id)) {
        if (a->call->caller_id == NULL || b->call->caller_id == NULL)
            c = a->call->caller_id == NULL ? -1 : 1;
        else
            c = strcmp(a->call->caller_id, b->call->caller_id);
    }
    if (c == 0)
        c = a->i < b->i ? -1 : a->i > b->i;
    return c;
}

/* Marks need[i] for each call of scope `caller` in `chunk` (indexes into
 * calls, k <= PROBE_IDS) whose id has a row of that scope: one statement
 * for the chunk, an index probe per id. */
static int probe(struct sqlite_journal *sj, tg_call *const *calls,
                 const size_t *chunk, size_t k, const char *caller,
                 unsigned char *need, tg_error *err)
{
    int rc = 0;
    if (sj->st_probe == NULL) {
        /* VALUES rows, each probed through calls_scope (id, caller_id),
         * covering: no table row is read. Unused slots are bound NULL,
         * which equals nothing. */
        char sql[64 + PROBE_IDS * 8 + 160];
        size_t len = 0;
        len += (size_t)snprintf(sql + len, sizeof sql - len,
                                "SELECT v.column1 FROM (VALUES ");
        for (int p = 0; p < PROBE_IDS; p++)
            len += (size_t)snprintf(sql + len, sizeof sql - len, "%s(?%d)",
                                    p ? "," : "", p + 2);
        snprintf(sql + len, sizeof sql - len,
                 ") v WHERE EXISTS (SELECT 1 FROM call_rows c"
                 " WHERE c.id = v.column1 AND c.caller_id IS ?1)");
        if ((rc = prepare(sj, sql, &sj->st_probe, err)) != 0)
            return rc;
    }
    sqlite3_stmt *st = sj->st_probe;
    int b = caller ? bind_text(st, 1, caller) : sqlite3_bind_null(st, 1);
    for (size_t p = 0; p < PROBE_IDS; p++)
        b |= p < k ? bind_text(st, (int)p + 2, calls[chunk[p]]->id)
                   : sqlite3_bind_null(st, (int)p + 2);
    if (b != SQLITE_OK) {
        rc = db_fail(sj, b, "binding a lookup", err);
        goto done;
    }
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *id = col_text(st, 0);
        if (id == NULL) {
            step = SQLITE_NOMEM;
            break;
        }
        for (size_t p = 0; p < k; p++)
            if (strcmp(calls[chunk[p]]->id, id) == 0)
                need[chunk[p]] |= 1;
    }
    if (step != SQLITE_DONE)
        rc = db_fail(sj, step, "looking up re-delivered calls", err);
done:
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc;
}

/* Decides which calls of a begin batch need lookup(): those whose id and
 * scope the journal holds (a statement per PROBE_IDS calls of one scope
 * instead of a lookup per call: fresh ids, the common case, cost one index
 * probe each), and those whose id and scope an earlier call of the same
 * batch has, which will find that call's running row, as they did when
 * every call was looked up just before its row went in. Runs inside
 * begin's transaction. */
static int plan_lookups(struct sqlite_journal *sj, tg_call *const *calls,
                        size_t n, unsigned char *need, tg_error *err)
{
    struct batch_entry *sorted = NULL;
    size_t chunk[PROBE_IDS];
    int rc = 0;
    memset(need, 0, n);
    if (n > 1) {
        if (n > SIZE_MAX / sizeof *sorted ||
            (sorted = sqlite3_malloc64((sqlite3_uint64)n * sizeof *sorted)) ==
                NULL)
            return oom(err);
        for (size_t i = 0; i < n; i++)
            sorted[i] = (struct batch_entry){calls[i], i};
        qsort(sorted, n, sizeof *sorted, by_id_scope);
        for (size_t i = 1; i < n; i++)
            if (strcmp(sorted[i].call->id, sorted[i - 1].call->id) == 0 &&
                same_scope(sorted[i].call->caller_id,
                           sorted[i - 1].call->caller_id) &&
                dedup_eligible(sorted[i].call))
                need[sorted[i].i] = 1;
        sqlite3_free(sorted);
    }
    /* need[i] bit 1: settled (probed, or no probe needed). */
    for (size_t i = 0; i < n; i++)
        if (need[i] || !dedup_eligible(calls[i]) ||
            map_find(sj, calls[i]) != NULL)
            need[i] |= 2;
    for (size_t first = 0; first < n; first++) {
        if (need[first] & 2)
            continue;
        const char *caller = calls[first]->caller_id;
        size_t k = 0;
        for (size_t i = first; i < n && k < PROBE_IDS; i++)
            if (!(need[i] & 2) && same_scope(calls[i]->caller_id, caller)) {
                chunk[k++] = i;
                need[i] |= 2;
            }
        if ((rc = probe(sj, calls, chunk, k, caller, need, err)) != 0)
            return rc;
    }
    for (size_t i = 0; i < n; i++)
        need[i] &= 1;
    return 0;
}

/* Reads --since: RFC 3339, or Unix seconds/milliseconds as digits. Anything
 * else, a number too large for any timestamp included, is the caller's
 * mistake (TG_EINVAL), never a failure of the journal. */
static int parse_since(const char *since, int64_t *ms, tg_error *err)
{
    json_t *v = NULL; /* new ref */
    const char *s = since;
    const char *why = "";
    while (*s == ' ')
        s++;
    if (*s >= '0' && *s <= '9') {
        char *end = NULL;
        errno = 0;
        long long n = strtoll(s, &end, 10);
        if (*end == '\0' && errno == ERANGE) {
            why = ": out of range";
        } else if (*end == '\0') {
            v = json_integer(n);
        } else if (*end == '.') {
            errno = 0;
            double d = strtod(s, &end);
            if (*end == '\0' && errno == ERANGE)
                why = ": out of range";
            else if (*end == '\0')
                v = json_real(d);
            else
                v = json_string_nocheck(since);
        } else {
            v = json_string_nocheck(since);
        }
    } else {
        v = json_string_nocheck(since);
    }
    int rc = TG_EINVAL;
    if (v == NULL && *why == '\0')
        return oom(err);
    if (v != NULL)
        rc = tg__time_from_json(v, ms);
    json_decref(v);
    if (rc != 0) {
        tg__quote_buf q;
        return tg__error_set(err, TG_EINVAL,
                             "invalid 'since' time '%s'%s: expected RFC 3339 "
                             "(2026-01-02T03:04:05Z) or Unix seconds or "
                             "milliseconds",
                             tg__quote(&q, since), why);
    }
    return 0;
}

/* The text of a query's answer: *out takes b's bytes (the caller's). */
static int text_out(tg__buf *b, char **out, tg_error *err)
{
    *out = tg__buf_take(b);
    return *out ? 0 : oom(err);
}

/* The filter on an outcome: with the partial index's own term when the
 * outcome is not success, so the planner may use results_outcome (v10). */
static const char *outcome_sql(const char *name)
{
    return strcmp(name, "success") == 0
               ? " AND r.outcome = ?2"
               : " AND r.outcome = ?2 AND r.outcome != 0";
}

static int sj_history(tg__journal *j, const tg_history_query *q, char **out,
                      tg_error *err)
{
    struct sqlite_journal *sj = sj_of(j);
    drain_for_read(sj);
    static const tg_history_query none = {0};
    sqlite3_stmt *st = NULL;
    tg__buf sql, text;
    int rc = 0, outcome = -1;
    int64_t since = 0;
    *out = NULL;
    tg__buf_init(&sql, 4096);
    tg__buf_init(&text, 0);
    if (q == NULL)
        q = &none;
    if (q->limit < 0)
        return tg__error_set(
            err, TG_EINVAL, "history limit must be positive, got %d", q->limit);
    int limit = q->limit == 0 ? DEFAULT_LIMIT : q->limit;
    if (limit > MAX_LIMIT)
        limit = MAX_LIMIT;
    if (q->outcome != NULL) {
        outcome = (int)tg_outcome_from_name(q->outcome);
        if (strcmp(tg_outcome_name(outcome), q->outcome) != 0)
            return tg__error_set(err, TG_EINVAL,
                                 "unknown outcome '%s': expected success, "
                                 "error, canceled, timeout or denied",
                                 q->outcome);
    }
    if (q->since != NULL && (rc = parse_since(q->since, &since, err)) != 0)
        return rc;

    /* Only the filters given go into the SQL, so each query can use its
     * index (a catch-all "? IS NULL OR" form would scan). */
    int b = tg__buf_puts(&sql, "SELECT " ROW_COLUMNS " FROM results r"
                               " JOIN call_rows c ON c.rowid = r.call_rowid"
                               " WHERE 1");
    if (q->tool != NULL)
        b |= tg__buf_puts(&sql, " AND r.tool = ?1");
    if (q->outcome != NULL)
        b |= tg__buf_puts(&sql, outcome_sql(q->outcome));
    if (q->caller != NULL)
        b |= tg__buf_puts(&sql, " AND r.caller_id = ?3");
    if (q->since != NULL)
        b |= tg__buf_puts(&sql, " AND r.completed_at >= ?4");
    b |= tg__buf_puts(&sql, " ORDER BY r.completed_at DESC, r.call_rowid DESC"
                            " LIMIT ?5");
    if (b != 0) {
        rc = oom(err);
        goto fail;
    }
    if ((rc = prepare(sj, tg__buf_cstr(&sql), &st, err)) != 0)
        goto fail;
    b = SQLITE_OK;
    if (q->tool != NULL)
        b |= bind_text(st, 1, q->tool);
    if (q->outcome != NULL)
        b |= sqlite3_bind_int(st, 2, outcome);
    if (q->caller != NULL)
        b |= bind_text(st, 3, q->caller);
    if (q->since != NULL)
        b |= sqlite3_bind_int64(st, 4, since);
    b |= sqlite3_bind_int(st, 5, limit);
    if (b != SQLITE_OK) {
        rc = db_fail(sj, b, "binding the query", err);
        goto fail;
    }
    /* A JSON array of result records, each with its call. */
    if (tg__buf_append(&text, "[", 1) != 0) {
        rc = oom(err);
        goto fail;
    }
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *call = NULL; /* new ref */
        if ((rc = row_call(sj, st, &call, err)) == 0 &&
            (text.len > 1 && tg__buf_append(&text, ",", 1) != 0))
            rc = oom(err);
        if (rc == 0)
            rc = row_result(sj, st, call, &text, err);
        json_decref(call);
        if (rc != 0)
            goto fail;
    }
    if (step != SQLITE_DONE) {
        rc = db_fail(sj, step, "reading the history", err);
        goto fail;
    }
    rc = tg__buf_append(&text, "]", 1) == 0 ? text_out(&text, out, err)
                                            : oom(err);
fail:
    sqlite3_finalize(st);
    tg__buf_cleanup(&text);
    tg__buf_cleanup(&sql);
    return rc;
}

static int sj_show(tg__journal *j, const char *call_id, char **out,
                   tg_error *err)
{
    struct sqlite_journal *sj = sj_of(j);
    drain_for_read(sj);
    sqlite3_stmt *st = NULL;
    json_t *call = NULL; /* new ref */
    tg__buf text;
    int rc;
    *out = NULL;
    if (call_id == NULL)
        return tg__error_set(err, TG_EINVAL, "show: no call id given");
    tg__buf_init(&text, 0);
    /* The same wire id recurs across turns: the newest row answers. */
    if ((rc = prepare(sj,
                      "SELECT " ROW_COLUMNS " FROM call_rows c"
                      " LEFT JOIN results r ON r.call_rowid = c.rowid"
                      " WHERE c.id = ?1 ORDER BY c.rowid DESC LIMIT 1",
                      &st, err)) != 0)
        goto fail;
    int b = bind_text(st, 1, call_id);
    if (b != SQLITE_OK) {
        rc = db_fail(sj, b, "binding the query", err);
        goto fail;
    }
    int step = sqlite3_step(st);
    if (step == SQLITE_DONE) {
        rc = tg__error_set(err, TG_ENOTFOUND,
                           "no call with id '%s' in journal %s", call_id,
                           sj->path);
        goto fail;
    }
    if (step != SQLITE_ROW) {
        rc = db_fail(sj, step, "reading a call", err);
        goto fail;
    }
    if ((rc = row_call(sj, st, &call, err)) != 0)
        goto fail;
    /* {"call":…,"result":…}, the result null while the call has none */
    if ((rc = tg__buf_puts(&text, "{\"call\":")) != 0 ||
        (rc = tg__json_dump(call, &text)) != 0 ||
        (rc = tg__buf_puts(&text, ",\"result\":")) != 0) {
        rc = out_fail(rc, err);
        goto fail;
    }
    if (sqlite3_column_type(st, R_ROWID) == SQLITE_NULL)
        rc = tg__buf_puts(&text, "null") != 0 ? oom(err) : 0;
    else
        rc = row_result(sj, st, NULL, &text, err);
    if (rc == 0)
        rc = tg__buf_append(&text, "}", 1) == 0 ? text_out(&text, out, err)
                                                : oom(err);
fail:
    sqlite3_finalize(st);
    json_decref(call);
    tg__buf_cleanup(&text);
    return rc;
}

/* ------------------------------------------------------------ stats */

/* Reads q's outcome and since filters (-1 / 0 when absent). */
static int query_filters(const tg_history_query *q, int *outcome,
                         int64_t *since, tg_error *err)
{
    *outcome = -1;
    *since = 0;
    if (q->outcome != NULL) {
        *outcome = (int)tg_outcome_from_name(q->outcome);
        if (strcmp(tg_outcome_name(*outcome), q->outcome) != 0)
            return tg__error_set(err, TG_EINVAL,
                                 "unknown outcome '%s': expected success, "
                                 "error, canceled, timeout or denied",
                                 q->outcome);
    }
    if (q->since != NULL)
        return parse_since(q->since, since, err);
    return 0;
}

/* " FROM results r WHERE ..." with only the filters given
 * (parameters ?1 tool, ?2 outcome, ?3 caller, ?4 since). */
static int filter_sql(tg__buf *sql, const tg_history_query *q)
{
    int b = tg__buf_puts(sql, " FROM results r WHERE 1");
    if (q->tool != NULL)
        b |= tg__buf_puts(sql, " AND r.tool = ?1");
    if (q->outcome != NULL)
        b |= tg__buf_puts(sql, outcome_sql(q->outcome));
    if (q->caller != NULL)
        b |= tg__buf_puts(sql, " AND r.caller_id = ?3");
    if (q->since != NULL)
        b |= tg__buf_puts(sql, " AND r.completed_at >= ?4");
    return b;
}

static int filter_bind(sqlite3_stmt *st, const tg_history_query *q, int outcome,
                       int64_t since)
{
    int b = SQLITE_OK;
    if (q->tool != NULL)
        b |= bind_text(st, 1, q->tool);
    if (q->outcome != NULL)
        b |= sqlite3_bind_int(st, 2, outcome);
    if (q->caller != NULL)
        b |= bind_text(st, 3, q->caller);
    if (q->since != NULL)
        b |= sqlite3_bind_int64(st, 4, since);
    return b;
}

/* Prepares "SELECT <cols> <filters> <tail>" with q's filters bound. */
static int stats_stmt(struct sqlite_journal *sj, const char *cols,
                      const tg_history_query *q, const char *tail, int outcome,
                      int64_t since, sqlite3_stmt **st, tg_error *err)
{
    tg__buf sql;
    int rc;
    *st = NULL;
    tg__buf_init(&sql, 4096);
    int b = tg__buf_puts(&sql, "SELECT ");
    b |= tg__buf_puts(&sql, cols);
    b |= filter_sql(&sql, q);
    b |= tg__buf_puts(&sql, tail);
    if (b != 0) {
        rc = oom(err);
        goto done;
    }
    if ((rc = prepare(sj, tg__buf_cstr(&sql), st, err)) != 0)
        goto done;
    if ((b = filter_bind(*st, q, outcome, since)) != SQLITE_OK)
        rc = db_fail(sj, b, "binding the query", err);
done:
    tg__buf_cleanup(&sql);
    if (rc != 0) {
        sqlite3_finalize(*st);
        *st = NULL;
    }
    return rc;
}

/* One tool's figures while the results stream by. */
struct tool_stat {
    char *tool; /* sqlite3_malloc'd */
    sqlite3_int64 calls, outcomes[5], replayed;
    double *ms; /* durations of the calls that ran (sqlite3_malloc'd) */
    size_t n, cap;
    double max;
};

static void free_stats(struct tool_stat *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sqlite3_free(t[i].tool);
        sqlite3_free(t[i].ms);
    }
    sqlite3_free(t);
}

static int by_tool(const void *a, const void *b)
{
    return strcmp(((const struct tool_stat *)a)->tool,
                  ((const struct tool_stat *)b)->tool);
}

/* The k-th smallest of v[0..n) (k < n), reordering v: Hoare's selection,
 * linear on average, with a median-of-three pivot so sorted input is no
 * worst case. */
static double select_kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        double a = v[lo], b = v[mid], c = v[hi];
        double pivot = a < b ? (b < c ? b : (a < c ? c : a))
                             : (a < c ? a : (b < c ? c : b));
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

/* The entry of `tool` in *list, added when new. tools maps each entry's
 * name (its own copy) to its index. NULL on out of memory. */
static struct tool_stat *stat_of(struct tool_stat **list, size_t *n,
                                 size_t *cap, tg__hmap *tools, const char *tool)
{
    size_t len;
    uint64_t h = tg__hash_str(tool, &len);
    tg__hentry *e = tg__hmap_find(tools, tool, len, h);
    if (e != NULL)
        return &(*list)[e->val.idx];
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        struct tool_stat *grown =
            sqlite3_realloc64(*list, (sqlite3_uint64)ncap * sizeof **list);
        if (grown == NULL)
            return NULL;
        *list = grown;
        *cap = ncap;
    }
    struct tool_stat *t = &(*list)[*n];
    memset(t, 0, sizeof *t);
    if ((t->tool = sqlite3_mprintf("%s", tool)) == NULL)
        return NULL;
    if (tg__hmap_put(tools, t->tool, len, h, &e) < 0) {
        sqlite3_free(t->tool);
        return NULL;
    }
    e->val.idx = (*n)++;
    return t;
}

static int add_ms(struct tool_stat *t, double ms)
{
    if (t->n == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 64;
        double *grown =
            sqlite3_realloc64(t->ms, (sqlite3_uint64)ncap * sizeof *grown);
        if (grown == NULL)
            return TG_ENOMEM;
        t->ms = grown;
        t->cap = ncap;
    }
    if (t->n == 0 || ms > t->max)
        t->max = ms;
    t->ms[t->n++] = ms;
    return 0;
}

/* Appends the statistics object of one tool: {"tool", "calls", "outcomes":
 * {"success", "error", "canceled", "timeout", "denied"}, "replayed",
 * "duration_ms": {"p50", "p95", "max"} or null}, times to the microsecond. */
static int stat_write(struct tool_stat *t, tg__buf *out)
{
    static const char *const names[] = {"success", "error", "canceled",
                                        "timeout", "denied"};
    int rc = tg__buf_puts(out, "{\"tool\":");
    if (rc == 0)
        rc = tg__json_string(out, t->tool, strlen(t->tool));
    if (rc == 0)
        rc = tg__buf_printf(out, ",\"calls\":%lld,\"outcomes\":{",
                            (long long)t->calls);
    for (size_t i = 0; rc == 0 && i < 5; i++)
        rc = tg__buf_printf(out, "%s\"%s\":%lld", i ? "," : "", names[i],
                            (long long)t->outcomes[i]);
    if (rc == 0)
        rc = tg__buf_printf(out, "},\"replayed\":%lld,\"duration_ms\":",
                            (long long)t->replayed);
    if (rc != 0 || t->n == 0)
        return rc != 0 ? rc : tg__buf_puts(out, "null}");
    /* Nearest rank: the ceil(p * n)-th smallest value. */
    size_t k50 = (t->n + 1) / 2 - 1, k95 = (95 * t->n + 99) / 100 - 1;
    double p50 = select_kth(t->ms, t->n, k50);
    double p95 = select_kth(t->ms, t->n, k95);
    if ((rc = tg__buf_puts(out, "{\"p50\":")) != 0 ||
        (rc = tg__json_ms(out, p50)) != 0 ||
        (rc = tg__buf_puts(out, ",\"p95\":")) != 0 ||
        (rc = tg__json_ms(out, p95)) != 0 ||
        (rc = tg__buf_puts(out, ",\"max\":")) != 0 ||
        (rc = tg__json_ms(out, t->max)) != 0)
        return rc;
    return tg__buf_puts(out, "}}");
}

/* Per tool: the calls, each outcome, the replays, and the nearest-rank
 * p50/p95 and the max of duration_ms over the calls that ran here (replays
 * answered from the journal are counted, not timed). One pass over the
 * matching results in storage order, no sort: the percentiles come from a
 * selection over each tool's durations, held in memory (8 bytes per timed
 * result read). */
static int sj_stats(tg__journal *j, const tg_history_query *q, char **out,
                    tg_error *err)
{
    struct sqlite_journal *sj = sj_of(j);
    drain_for_read(sj);
    static const tg_history_query none = {0};
    sqlite3_stmt *st = NULL;
    tg__hmap tools = {0}; /* tool name -> index in stats */
    tg__buf text;
    struct tool_stat *stats = NULL;
    size_t n = 0, cap = 0;
    int rc, outcome, step;
    int64_t since;
    *out = NULL;
    if (q == NULL)
        q = &none;
    if ((rc = query_filters(q, &outcome, &since, err)) != 0)
        return rc;
    tg__buf_init(&text, 0);
    if ((rc = stats_stmt(sj, "r.tool, r.outcome, r.replayed, r.duration_ms", q,
                         "", outcome, since, &st, err)) != 0)
        goto fail;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *tool = col_text(st, 0);
        struct tool_stat *t =
            tool ? stat_of(&stats, &n, &cap, &tools, tool) : NULL;
        if (t == NULL) {
            rc = oom(err);
            goto fail;
        }
        int oc = sqlite3_column_int(st, 1);
        /* Values of a newer toolgate count as error (docs/records.md). */
        t->outcomes[oc >= 0 && oc <= 4 ? oc : 1]++;
        t->calls++;
        if (sqlite3_column_int(st, 2) != 0)
            t->replayed++;
        else if (add_ms(t, sqlite3_column_double(st, 3)) != 0) {
            rc = oom(err);
            goto fail;
        }
    }
    if (step != SQLITE_DONE) {
        rc = db_fail(sj, step, "reading the statistics", err);
        goto fail;
    }
    if (n > 1)
        qsort(stats, n, sizeof *stats, by_tool);
    rc = tg__buf_append(&text, "[", 1);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if ((i == 0 || (rc = tg__buf_append(&text, ",", 1)) == 0))
            rc = stat_write(&stats[i], &text);
    if (rc == 0)
        rc = tg__buf_append(&text, "]", 1);
    rc = rc == 0 ? text_out(&text, out, err) : out_fail(rc, err);
fail:
    sqlite3_finalize(st);
    free_stats(stats, n);
    tg__hmap_cleanup(&tools);
    tg__buf_cleanup(&text);
    return rc;
}

/* ------------------------------------------------------------ retention */

/* The artifact ids named by the results of the calls `victims` selects
 * (?1 bound to arg, ?2 to batch), appended to *ids (a JSON array). */
static int collect_artifacts(struct sqlite_journal *sj, const char *victims,
                             sqlite3_int64 arg, int batch, json_t *ids,
                             tg_error *err)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT json_extract(artifact, '$.id') FROM results"
             " WHERE artifact IS NOT NULL AND call_rowid IN (%s)",
             victims);
    sqlite3_stmt *st = NULL;
    int rc = prepare(sj, sql, &st, err);
    if (rc != 0)
        return rc;
    sqlite3_bind_int64(st, 1, arg);
    sqlite3_bind_int(st, 2, batch);
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(st, 0);
        if (id != NULL && json_array_append_new(ids, json_string(id)) != 0) {
            sqlite3_finalize(st);
            return oom(err);
        }
    }
    sqlite3_finalize(st);
    return s == SQLITE_DONE ? 0 : db_fail(sj, s, "listing artifacts", err);
}

/* After a prune committed: each collected artifact that no row names any
 * more is released (the spool removes it). Failures only leave the
 * artifact to the spool's own eviction. */
static void release_artifacts(struct sqlite_journal *sj, const json_t *ids)
{
    sqlite3_stmt *st = NULL;
    if (sj->release == NULL || json_array_size(ids) == 0 ||
        prepare(sj,
                "SELECT 1 FROM results WHERE artifact IS NOT NULL AND"
                " json_extract(artifact, '$.id') = ?1 LIMIT 1",
                &st, NULL) != 0)
        return;
    size_t i;
    const json_t *v; /* borrowed */
    json_array_foreach(ids, i, v)
    {
        const char *id = json_string_value(v);
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_DONE)
            sj->release(sj->release_ud, id);
    }
    sqlite3_finalize(st);
}

void tg__journal_on_release(tg__journal *j,
                            void (*fn)(void *ud, const char *artifact_id),
                            void *ud)
{
    struct sqlite_journal *sj = sj_of(j);
    if (sj == NULL || j->ops != &sqlite_ops)
        return;
    sj->release = fn;
    sj->release_ud = ud;
}

/* Deletes the calls `victims` selects (?1 bound to arg, ?2 to batch) and
 * adds how many to *pruned, then their results: the writer's connection
 * does not enforce the foreign key (tg__journal_open_sqlite), so its ON
 * DELETE CASCADE is done here. First the (seq, link) of each chained one
 * goes to chain_pruned, so the chain goes on across the gap: victims must
 * select the same rows three times (an ORDER BY without ties, over results,
 * which are deleted last). */
static int prune_run(struct sqlite_journal *sj, const char *victims,
                     sqlite3_int64 arg, int batch, sqlite3_int64 now,
                     size_t *pruned, tg_error *err)
{
    char sql[512];
    sqlite3_stmt *st = NULL;
    int rc = 0, b;
    static const char *const passes[] = {
        "INSERT OR REPLACE INTO chain_pruned(seq, link, call_rowid,"
        " pruned_at) SELECT chain_seq, chain, call_rowid, ?3 FROM results"
        " WHERE chain_seq IS NOT NULL AND call_rowid IN (%s)",
        "DELETE FROM call_rows WHERE rowid IN (%s)",
        "DELETE FROM results WHERE call_rowid IN (%s)"};
    for (int pass = 0; pass < 3 && rc == 0; pass++) {
        snprintf(sql, sizeof sql, passes[pass], victims);
        if ((rc = prepare(sj, sql, &st, err)) != 0)
            return rc;
        b = sqlite3_bind_int64(st, 1, arg);
        b |= sqlite3_bind_int(st, 2, batch);
        if (pass == 0)
            b |= sqlite3_bind_int64(st, 3, now);
        if (b != SQLITE_OK)
            rc = db_fail(sj, b, "binding a prune", err);
        else if ((rc = run(sj, st, "pruning old calls", err)) == 0 && pass == 1)
            *pruned += (size_t)sqlite3_changes(sj->db);
        sqlite3_finalize(st);
        st = NULL;
    }
    return rc;
}

/* The records of pruned rows before the oldest chained row that remains
 * fold into the last of them: the anchor the chain starts from. */
static int prune_fold(struct sqlite_journal *sj, tg_error *err)
{
    return exec(sj,
                "DELETE FROM chain_pruned WHERE seq < (SELECT max(seq)"
                " FROM chain_pruned WHERE seq < ifnull((SELECT"
                " min(chain_seq) FROM results WHERE chain_seq IS NOT NULL),"
                " 9223372036854775807))",
                "folding pruned rows", err);
}

/* One bounded transaction of retention: completed calls older than
 * keep_days, then completed calls beyond the newest max_rows (by rowid:
 * rowids grow with every call, so every row at or below max(rowid) -
 * max_rows has at least max_rows newer ones). Running rows are never
 * touched: both rules go through results, which running rows lack. */
static int prune_step(struct sqlite_journal *sj, sqlite3_int64 now,
                      size_t *pruned, tg_error *err)
{
    int batch =
        sj->opts.prune_batch > 0 ? sj->opts.prune_batch : DEFAULT_PRUNE_BATCH;
    sqlite3_stmt *st = NULL;
    int rc;
    *pruned = 0;
    sj->last_prune = now;
    sj->prune_backlog = 0;
    if (sj->opts.keep_days <= 0 && sj->opts.max_rows <= 0)
        return 0;
    /* The tie-break makes each select the same rows twice (prune_run);
     * results_completed ends in call_rowid, so it costs no sort. */
    static const char by_age[] = "SELECT call_rowid FROM results"
                                 " WHERE completed_at < ?1"
                                 " ORDER BY completed_at, call_rowid LIMIT ?2";
    static const char by_count[] = "SELECT call_rowid FROM results"
                                   " WHERE call_rowid <= ?1"
                                   " ORDER BY call_rowid LIMIT ?2";
    json_t *ids = json_array(); /* new ref: artifacts of pruned rows */
    if (ids == NULL)
        return oom(err);
    if ((rc = tx_begin(sj, err)) != 0) {
        json_decref(ids);
        return rc;
    }
    if (sj->opts.keep_days > 0 &&
        ((sj->release != NULL &&
          (rc = collect_artifacts(sj, by_age, now - sj->opts.keep_days * DAY_MS,
                                  batch, ids, err)) != 0) ||
         (rc = prune_run(sj, by_age, now - sj->opts.keep_days * DAY_MS, batch,
                         now, pruned, err)) != 0))
        goto fail;
    if (sj->opts.max_rows > 0 && *pruned < (size_t)batch) {
        if ((rc = prepare(sj, "SELECT max(rowid) FROM call_rows", &st, err)) !=
            0)
            goto fail;
        if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
            rc = db_fail(sj, rc, "counting calls", err);
            goto fail;
        }
        sqlite3_int64 cutoff = sqlite3_column_int64(st, 0) - sj->opts.max_rows;
        sqlite3_finalize(st);
        st = NULL;
        rc = 0;
        if (cutoff > 0 && sj->release != NULL &&
            (rc = collect_artifacts(sj, by_count, cutoff, batch - (int)*pruned,
                                    ids, err)) != 0)
            goto fail;
        if (cutoff > 0 &&
            (rc = prune_run(sj, by_count, cutoff, batch - (int)*pruned, now,
                            pruned, err)) != 0)
            goto fail;
    }
    if ((*pruned > 0 && (rc = prune_fold(sj, err)) != 0) ||
        (rc = tx_commit(sj, err)) != 0)
        goto fail;
    sj->prune_backlog = *pruned >= (size_t)batch;
    release_artifacts(sj, ids);
    json_decref(ids);
    return 0;
fail:
    sqlite3_finalize(st);
    tx_rollback(sj);
    json_decref(ids);
    *pruned = 0;
    return rc;
}

/* Retention "in the background" of a single-threaded runtime: after a
 * commit of results, one small step at most, and only when it is due (every
 * prune_every_ms, at once while a backlog remains or while max_rows is
 * exceeded by more than one batch). A step that fails costs nothing but the
 * step: the results are committed already, and it is tried again later. */
static void maybe_prune(struct sqlite_journal *sj, sqlite3_int64 now)
{
    if (sj->opts.keep_days <= 0 && sj->opts.max_rows <= 0)
        return;
    int64_t every = sj->opts.prune_every_ms > 0 ? sj->opts.prune_every_ms
                                                : DEFAULT_PRUNE_EVERY_MS;
    int due = sj->prune_backlog || now - sj->last_prune >= every;
    if (!due && sj->opts.max_rows > 0) {
        sqlite3_stmt *st = NULL;
        int batch = sj->opts.prune_batch > 0 ? sj->opts.prune_batch
                                             : DEFAULT_PRUNE_BATCH;
        /* Two O(log n) lookups, not a count(*) over the table. */
        if (prepare(sj,
                    "SELECT (SELECT max(rowid) FROM call_rows) -"
                    " (SELECT min(rowid) FROM call_rows) + 1",
                    &st, NULL) == 0 &&
            sqlite3_step(st) == SQLITE_ROW &&
            sqlite3_column_int64(st, 0) > sj->opts.max_rows + batch)
            due = 1;
        sqlite3_finalize(st);
    }
    if (due) {
        size_t pruned;
        (void)prune_step(sj, now, &pruned, NULL);
    }
}

static int sj_prune(tg__journal *j, size_t *pruned, tg_error *err)
{
    return prune_step(sj_of(j), tg__now_ms(), pruned, err);
}

void tg__journal_commit_inline(tg__journal *j)
{
    if (j == NULL || j->ops != &sqlite_ops)
        return;
    struct sqlite_journal *sj = sj_of(j);
    sj->opts.commit_inline = 1;
    committer_stop(sj); /* writes what it holds first */
}

sqlite3 *tg__journal_sqlite_db(tg__journal *j)
{
    if (j == NULL || j->ops != &sqlite_ops)
        return NULL;
    drain_for_read(sj_of(j));
    return sj_of(j)->db;
}

void tg__journal_owner(tg__journal *j, int64_t *pid, int64_t *start,
                       const char **boot)
{
    struct sqlite_journal *sj = sj_of(j);
    *pid = sj->pid;
    *start = sj->start;
    *boot = sj->boot;
}

int tg__journal_owner_alive(tg__journal *j, int64_t pid, int64_t start,
                            const char *boot)
{
    return owner_alive(sj_of(j), pid, start, boot);
}

int tg__journal_sqlite_synchronous(tg__journal *j)
{
    struct sqlite_journal *sj = sj_of(j);
    sqlite3_stmt *st = NULL;
    int v = TG_EJOURNAL;
    if (sj == NULL || sj->db == NULL)
        return TG_EINVAL;
    if (sqlite3_prepare_v2(sj->db, "PRAGMA synchronous", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* ------------------------------------------------------------ open/close */

static void sj_close(tg__journal *j)
{
    struct sqlite_journal *sj = sj_of(j);
    if (sj == NULL)
        return;
    committer_stop(sj); /* first: it writes what it holds */
    if (sj->db != NULL)
        tx_rollback(sj);
    sqlite3_finalize(sj->st_begin);
    sqlite3_finalize(sj->st_commit);
    sqlite3_finalize(sj->st_rollback);
    for (int k = 0; k < N_ROW_SIZES; k++) {
        sqlite3_finalize(sj->st_calls[k]);
        sqlite3_finalize(sj->st_results[k]);
    }
    sqlite3_finalize(sj->st_maxrow);
    sqlite3_finalize(sj->st_run_add);
    sqlite3_finalize(sj->st_run_exact);
    sqlite3_finalize(sj->st_run_tail);
    sqlite3_finalize(sj->st_run_head);
    sqlite3_finalize(sj->st_run_del);
    sqlite3_finalize(sj->st_probe);
    sqlite3_finalize(sj->st_lookup);
    sqlite3_finalize(sj->st_data_version);
    sqlite3_finalize(sj->st_epoch_add);
    sqlite3_finalize(sj->st_log_seq);
    sqlite3_finalize(sj->st_by_ticket);
    sqlite3_free(sj->rec);
    sqlite3_free(sj->crecs);
    sqlite3_free(sj->done_tickets);
    pin_stop(sj, 1); /* before the writer's connection: it may be last */
    sqlite3_close_v2(sj->db);
    tg__chain_key_cleanup(&sj->key);
    sqlite3_free(sj->slots);
    sqlite3_free(sj->path);
    sqlite3_free(sj);
}

static const tg__journal_ops sqlite_ops = {
    .name = "sqlite",
    .begin = sj_begin,
    .finish = sj_finish,
    .history = sj_history,
    .show = sj_show,
    .close = sj_close,
};

static const tg__journal_ext_ops sqlite_ext = {
    .begin_dedup = sj_begin_dedup,
    .stats = sj_stats,
    .prune = sj_prune,
};

const tg__journal_ext_ops *tg__journal_ext(const tg__journal *j)
{
    return j != NULL && j->ops == &sqlite_ops ? &sqlite_ext : NULL;
}

/* mkdir -p of the directory holding path. Directories it creates are private
 * (0700): the journal holds every argument a model sent. */
static int make_parents(const char *path, tg_error *err)
{
    char dir[PATH_MAX];
    size_t len = strlen(path);
    if (len >= sizeof dir)
        return tg__error_set(err, TG_EJOURNAL, "journal %s: path too long",
                             path);
    memcpy(dir, path, len + 1);
    char *slash = strrchr(dir, '/');
    if (slash == NULL || slash == dir)
        return 0;
    *slash = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (p[-1] != '/' && mkdir(dir, 0700) != 0) {
            int e = errno;
            struct stat sb;
            if (e != EEXIST)
                return tg__error_set(err, TG_EJOURNAL,
                                     "journal %s: cannot create directory "
                                     "'%s': %s",
                                     path, dir, strerror(e));
            if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
                return tg__error_set(err, TG_EJOURNAL,
                                     "journal %s: '%s' is not a directory",
                                     path, dir);
        }
        *p = saved;
        if (saved == '\0')
            return 0;
    }
}

/* Creates the file with mode 0600 before SQLite does (which would use 0644);
 * the -wal and -shm files take the same mode. */
static int precreate(const char *path, tg_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    if (errno == EEXIST)
        return 0;
    return tg__error_set(err, TG_EJOURNAL, "journal %s: cannot create: %s",
                         path, strerror(errno));
}

static int read_version(struct sqlite_journal *sj, int *version, tg_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(sj, "PRAGMA user_version", &st, err);
    if (rc != 0)
        return rc;
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW)
        *version = sqlite3_column_int(st, 0);
    else
        rc = db_fail(sj, step, "reading the schema version", err);
    sqlite3_finalize(st);
    return rc;
}

static int migrate(struct sqlite_journal *sj, tg_error *err)
{
    int version = 0, rc;
    if ((rc = read_version(sj, &version, err)) != 0)
        return rc;
    if (version == SCHEMA_VERSION)
        return 0;
    if ((rc = exec(sj, "BEGIN IMMEDIATE", "starting a migration", err)) != 0)
        return rc;
    /* Read again under the write lock: another process may have migrated
     * between the first look and now. */
    if ((rc = read_version(sj, &version, err)) != 0)
        goto fail;
    if (version > SCHEMA_VERSION) {
        rc = tg__error_set(err, TG_EJOURNAL,
                           "journal %s: schema version %d is newer than this "
                           "toolgate understands (%d); upgrade toolgate",
                           sj->path, version, SCHEMA_VERSION);
        goto fail;
    }
    if (version < 0) {
        rc = tg__error_set(err, TG_EJOURNAL,
                           "journal %s: invalid schema version %d", sj->path,
                           version);
        goto fail;
    }
    for (int v = version; v < SCHEMA_VERSION; v++)
        if ((rc = exec(sj, migrations[v], "migrating the schema", err)) != 0)
            goto fail;
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", SCHEMA_VERSION);
    if ((rc = exec(sj, sql, "migrating the schema", err)) != 0 ||
        (rc = exec(sj, "COMMIT", "committing the migration", err)) != 0)
        goto fail;
    return 0;
fail:
    tx_rollback(sj);
    return rc;
}

int tg__journal_open_sqlite(const char *path, tg__journal **out, tg_error *err)
{
    return tg__journal_open_sqlite_opts(path, NULL, out, err);
}

/* Opens the journal at path: for the call path (writer 0: logs of dead
 * processes replayed, their calls recovered), or for a committer's thread
 * (writer 1). */
static int sj_open(const char *path, const tg__journal_options *opts,
                   int writer, struct sqlite_journal **out, tg_error *err)
{
    struct sqlite_journal *sj = NULL;
    int rc;
    *out = NULL;
    if (path == NULL || *path == '\0')
        return tg__error_set(err, TG_EINVAL, "journal: empty path");
    if ((sj = sqlite3_malloc64(sizeof *sj)) == NULL)
        return oom(err);
    memset(sj, 0, sizeof *sj);
    sj->base.ops = &sqlite_ops;
    if (opts != NULL)
        sj->opts = *opts;
    /* The key is kept only as its prepared pads (chain.h). */
    sj->opts.hmac_key = NULL;
    sj->opts.hmac_key_len = 0;
    if (tg__chain_key_init(&sj->key, opts ? opts->hmac_key : NULL,
                           opts ? opts->hmac_key_len : 0) != 0) {
        rc = tg__error_set(err, TG_EINTERNAL, "journal: SHA-256 failed");
        goto fail;
    }
    if ((sj->path = sqlite3_mprintf("%s", path)) == NULL) {
        rc = oom(err);
        goto fail;
    }
    int memory = strcmp(path, ":memory:") == 0;
    if (!memory && ((rc = make_parents(path, err)) != 0 ||
                    (rc = precreate(path, err)) != 0))
        goto fail;

    sj->pid = (sqlite3_int64)getpid();
    unsigned long long start = 0;
    if (proc_start((long)sj->pid, &start) == 1)
        sj->start = (sqlite3_int64)start;
    read_boot_id(sj->boot);

    /* walbuf.c: a transaction's WAL frames in one write */
    int orc = sqlite3_open_v2(path, &sj->db,
                              SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                  SQLITE_OPEN_NOMUTEX,
                              tg__walbuf_vfs());
    if (orc != SQLITE_OK) {
        rc = db_fail(sj, orc, "cannot open", err);
        goto fail;
    }
    if (!memory && (rc = watch_file(sj, err)) != 0)
        goto fail;
    sqlite3_commit_hook(sj->db, on_commit, sj);
    sqlite3_rollback_hook(sj->db, on_rollback, sj);
    /* The busy timeout first: switching to WAL itself may wait on another
     * process opening the same file. The page size takes effect only in a
     * file that has none yet (a new journal): before the switch to WAL,
     * which writes the file's header. */
    /* foreign_keys OFF: the writer inserts every call row before its
     * result and deletes results with their calls itself (prune_run), so
     * the check of each result against call_rows (a b-tree probe and a
     * statement journal a result, bench/RESULTS.md) verified what this
     * file already guarantees; the key stays declared for other writers. */
    if ((rc = exec(sj, "PRAGMA busy_timeout = 5000", "configuring", err)) !=
            0 ||
        (rc = exec(sj, "PRAGMA page_size = " STR(TG_JOURNAL_PAGE_SIZE),
                   "configuring", err)) != 0 ||
        (rc = set_wal(sj, err)) != 0 ||
        (rc = exec(sj,
                   sj->opts.sync_full ? "PRAGMA synchronous = FULL"
                                      : "PRAGMA synchronous = NORMAL",
                   "configuring", err)) != 0 ||
        (rc = exec(sj, "PRAGMA foreign_keys = OFF", "configuring", err)) != 0 ||
        (rc = exec(sj, "PRAGMA temp_store = MEMORY", "configuring", err)) != 0)
        goto fail;
    if ((rc = migrate(sj, err)) != 0)
        goto fail;
    if ((rc = prepare(sj, "BEGIN IMMEDIATE", &sj->st_begin, err)) != 0 ||
        (rc = prepare(sj, "COMMIT", &sj->st_commit, err)) != 0 ||
        (rc = prepare(sj, "ROLLBACK", &sj->st_rollback, err)) != 0 ||
        (rc = prepare(sj, "SELECT max(rowid) FROM call_rows", &sj->st_maxrow,
                      err)) != 0 ||
        (rc = prepare(sj, "INSERT INTO running(first, last) VALUES (?1, ?2)",
                      &sj->st_run_add, err)) != 0 ||
        (rc = prepare(sj, "DELETE FROM running WHERE first = ?1 AND last = ?2",
                      &sj->st_run_exact, err)) != 0 ||
        /* The range holding ?2 is found with one probe: the greatest
         * first at or below it (ranges do not overlap). */
        (rc = prepare(sj,
                      "INSERT INTO running(first, last)"
                      " SELECT ?2 + 1, last FROM running WHERE first ="
                      " (SELECT max(first) FROM running WHERE first <= ?2)"
                      " AND last > ?2",
                      &sj->st_run_tail, err)) != 0 ||
        (rc = prepare(sj,
                      "UPDATE running SET last = ?1 - 1 WHERE first ="
                      " (SELECT max(first) FROM running WHERE first < ?1)"
                      " AND last >= ?1",
                      &sj->st_run_head, err)) != 0 ||
        (rc = prepare(sj, "DELETE FROM running WHERE first BETWEEN ?1 AND ?2",
                      &sj->st_run_del, err)) != 0 ||
        (rc = prepare(sj, "PRAGMA data_version", &sj->st_data_version, err)) !=
            0 ||
        (rc = prepare(sj,
                      "INSERT OR REPLACE INTO chain_epochs(first_seq, key_id,"
                      " started_at) VALUES (?1, ?2, ?3)",
                      &sj->st_epoch_add, err)) != 0)
        goto fail;
    if (!writer && sj->watched)
        live_drain(sj); /* a process reads its own writes */
    if (!writer &&
        ((rc = replay_logs(sj, err)) != 0 || (rc = recover(sj, err)) != 0))
        goto fail;
    if (!memory && tg__checkpointer_attach(sj->db, &sj->ckpt) != 0) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory opening the journal");
        goto fail;
    }
    *out = sj;
    return 0;
fail:
    sj_close(&sj->base);
    return rc;
}

int tg__journal_open_sqlite_opts(const char *path,
                                 const tg__journal_options *opts,
                                 tg__journal **out, tg_error *err)
{
    struct sqlite_journal *sj = NULL;
    *out = NULL;
    int rc = sj_open(path, opts, 0, &sj, err);
    if (rc != 0)
        return rc;
    *out = &sj->base;
    return 0;
}
