/* SPDX-License-Identifier: MIT */
/*
 * bench_journal.c - the journal's cost (issue 5), two modes.
 *
 * Throughput (the default): durable results per second for turns of 100
 * calls run through the library's runtime (tg_runtime, an in-process no-op
 * tool registered TG_TOOL_INLINE, no policy, the SQLite journal in a
 * temporary directory), with journal.sync "normal" and "full", against the
 * limit: a plain C loop of SQLite inserts, an INSERT per row, with the
 * journal's settings (WAL, the same PRAGMA synchronous, busy timeout,
 * foreign keys, temp_store) into a file of the journal's own schema, a call
 * row and a result row per call of the same content, one transaction per
 * turn. For information: the same loop with multi-row INSERTs as the
 * journal writes its rows (64, 16, 4 or 1 rows a statement: the SQLite side
 * of what the journal does per row); the same rows into two bare tables (no
 * secondary index); the journal's own protocol done by hand in SQL (a probe
 * of the turn's ids for re-delivery, 64 to a statement, the call rows and
 * the turn's range of rowids in `running`, committed; then the results and
 * the range cut out of `running`, committed: what toolgate cannot do with
 * less), an INSERT per row; and the runtime with the journal off.
 *
 * toolgate is timed around tg_runtime_run_turn only (parsing the turn and
 * freeing it are not journal work), the loops around their SQL only (the
 * rows' text is made before the clock starts); every turn has fresh call
 * ids, so nothing is a re-delivery. The loops take turns, round by round
 * (the order flips every round), and the figures are medians over the
 * rounds; the ratio is the median of the per-round ratios.
 *
 *   bench_journal [TURNS_PER_ROUND] [--rounds N] [--dir DIR] [--sync MODE]
 *       TURNS_PER_ROUND (default 30: 3,000 results a round), 15 rounds,
 *       DIR: where the files go (default $TMPDIR or /tmp; it must be a real
 *       disk for "full" to mean anything), MODE: normal, full or both.
 *
 * The chain (issue 16): what the hash chain of the result rows costs, at the
 * journal's own interface (tg__journal_begin + tg__journal_finish of turns
 * of 100 calls, the calls and results made before the clock starts): the
 * same turns into three journals, rows without links (the option
 * `unchained`, there for this), links with SHA-256, links with
 * HMAC-SHA-256 (a key configured), journal.sync normal, interleaved round by
 * round; medians and the median of the per-round ratios. It runs after the
 * throughput figures, or alone:
 *
 *   bench_journal --chain [TURNS_PER_ROUND] [--rounds N] [--dir DIR]
 *
 * Lone and batched calls (issues 15, 16): what a call's two transactions
 * cost at the journal's interface, begun and finished one at a time, or K
 * at a time as a server with calls in flight does:
 *
 *   bench_journal --lone CALLS [--batch K] [--format F]
 *                 [--commit inline|background] [--dir DIR]
 *
 * (inline, the default here: both transactions on the call path;
 * background: the call path's appends to the committer's log, then how
 * long its thread takes to write them all.)
 *
 * History: `history --tool X --limit 20` on a big journal.
 *
 *   bench_journal --history-rows N [--dir DIR]
 *       Creates DIR/tg-history-N.db with the library (so the schema is the
 *       journal's own), fills it with N calls and results by direct SQLite
 *       inserts in big transactions (synchronous off: a fill, not the thing
 *       measured), then times tg_journal_history for several queries: the
 *       first call, then the median of 15 (each call opens the journal, as
 *       `toolgate history` does). A file of the right size from an earlier
 *       run is reused; delete it to fill again.
 */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "journal.h"
#include "record.h"
#include "toolgate.h"

#define CALLS_PER_TURN 100
#define DEFAULT_ROUNDS 15
#define MAX_ROUNDS 51

/* One call's arguments: the 7-field object of bench_pipeline. */
#define ARGS_FMT                                                               \
    "{\"path\":\"src/module_%d\",\"pattern\":\"TODO|FIXME\","                  \
    "\"max_results\":%d,\"case_sensitive\":%s,\"include\":[\"*.c\",\"*.h\"],"  \
    "\"context_lines\":2,\"mode\":\"content\"}"
#define CHECKSUM_TEXT                                                          \
    "sha256:4857dcb859344233fef0a9e07477e82d8c6a21a7d2b564b50d26df10a6777744"
#define PAYLOAD_TEXT "{\"ok\":true}"

/* ------------------------------------------------------------ helpers */

static int path_join(char *out, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(out, cap, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* Deletes a SQLite file and its -wal and -shm companions. */
static void remove_db(const char *path)
{
    char side[4300];
    unlink(path);
    /* Paths here are at most 4200 bytes (path_join's buffers). */
    snprintf(side, sizeof side, "%.4200s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%.4200s-shm", path);
    unlink(side);
}

static int exec_sql(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "sqlite: %s: %s\n", sql, msg ? msg : "?");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* Creates the journal's schema at path by opening it with the library (a
 * query does not create a missing journal, so an empty file comes first:
 * SQLite takes it for an empty database). */
static int create_journal(const char *path)
{
    /* 0600, as the library creates its journals. */
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || close(fd) != 0) {
        fprintf(stderr, "journal %s: cannot create: %s\n", path,
                strerror(errno));
        return -1;
    }
    tg_history_query q = {.limit = 1};
    tg_error err = {0};
    char *out = NULL;
    int rc = tg_journal_history(path, &q, &out, &err);
    tg_free(out);
    if (rc != 0)
        fprintf(stderr, "journal %s: %s\n", path, err.message);
    return rc;
}

static int args_text(char *buf, size_t cap, long i)
{
    return snprintf(buf, cap, ARGS_FMT, (int)(i % 97), 50 + (int)(i % 50),
                    i % 2 ? "true" : "false");
}

/* ------------------------------------------------------------ toolgate */

typedef struct tg_side {
    tg_runtime *rt;
    long next_id; /* fresh call ids across rounds */
    char *text;   /* one turn's JSON Lines, rebuilt per turn */
    size_t cap;
} tg_side;

static int noop(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    (void)args;
    (void)len;
    (void)ud;
    return tg_handler_set_json(ctx, PAYLOAD_TEXT, strlen(PAYLOAD_TEXT), NULL);
}

/* A runtime journaling to path with the given sync ("normal", "full", or
 * NULL for the journal off). Returns 1 when this library does not know
 * journal.sync (the object form of "journal"), -1 on other failures. */
static int tg_side_open(tg_side *s, const char *path, const char *sync)
{
    char cfgtext[4600];
    tg_error err = {0};
    memset(s, 0, sizeof *s);
    /* No policy: the default one's rules would have every call's arguments
     * decoded for it, a cost of the gate (bench_pipeline, bench_policy),
     * not of the journal. */
    if (sync != NULL)
        snprintf(cfgtext, sizeof cfgtext,
                 "{\"journal\": {\"path\": \"%s\", \"sync\": \"%s\"},"
                 " \"builtin_tools\": [], \"policy\": null}",
                 path, sync);
    else
        snprintf(cfgtext, sizeof cfgtext,
                 "{\"journal\": null, \"builtin_tools\": [],"
                 " \"policy\": null}");
    tg_config *cfg = tg_config_new();
    if (cfg == NULL)
        return -1;
    int rc = tg_config_load(cfg, cfgtext, strlen(cfgtext), NULL, &err);
    if (rc == TG_ECONFIG && sync != NULL) {
        tg_config_free(cfg);
        return 1;
    }
    if (rc != 0 || tg_runtime_new(cfg, &s->rt, &err) != 0 ||
        tg_runtime_register(s->rt, "search", "no-op", NULL, noop, NULL,
                            TG_TOOL_INLINE, &err) != 0) {
        fprintf(stderr, "toolgate: %s\n", err.message);
        tg_config_free(cfg);
        return -1;
    }
    tg_config_free(cfg);
    s->cap = (size_t)CALLS_PER_TURN * 400 + 64;
    s->text = malloc(s->cap);
    return s->text ? 0 : -1;
}

static void tg_side_close(tg_side *s)
{
    tg_runtime_free(s->rt);
    free(s->text);
    s->rt = NULL;
    s->text = NULL;
}

/* Runs `turns` turns; returns the seconds spent in tg_runtime_run_turn, or
 * -1 on failure. */
static double tg_side_round(tg_side *s, int turns)
{
    double spent = 0;
    tg_error err = {0};
    for (int t = 0; t < turns; t++) {
        size_t len = 0;
        for (int i = 0; i < CALLS_PER_TURN; i++) {
            char args[300];
            long id = s->next_id++;
            args_text(args, sizeof args, id);
            len += (size_t)snprintf(
                s->text + len, s->cap - len,
                "{\"id\":\"call_%09ld\",\"tool\":\"search\",\"args\":%s}\n", id,
                args);
        }
        tg_turn *turn = NULL;
        if (tg_turn_parse(s->text, len, "toolgate", "bench", &turn, &err) !=
            0) {
            fprintf(stderr, "toolgate: %s\n", err.message);
            return -1;
        }
        double t0 = bench_now();
        int rc = tg_runtime_run_turn(s->rt, turn, &err);
        spent += bench_now() - t0;
        int ok = rc == 0;
        for (size_t i = 0; ok && i < tg_turn_call_count(turn); i++) {
            const tg_result *r = tg_turn_result(turn, i);
            ok = r != NULL && tg_result_succeeded(r) && !tg_result_replayed(r);
        }
        tg_turn_free(turn);
        if (!ok) {
            fprintf(stderr, "toolgate: a turn failed: %s\n",
                    rc ? err.message : "a call did not succeed");
            return -1;
        }
    }
    return spent;
}

/* ------------------------------------------------------------ the limit */

/* The loops of SQLite inserts: the limit (the journal's schema, one
 * transaction per turn, one INSERT per row); for information the same with
 * multi-row INSERTs as the journal writes them (64, 16, 4 or 1 rows a
 * statement), the same rows into two bare tables, and the journal's
 * protocol done by hand (a probe of the turn's ids for re-delivery, the call
 * rows and the turn's range of rowids in `running`, in one transaction; then
 * the results, and the range cut out of `running` as the journal does it,
 * in another). */
enum { LIM_JOURNAL, LIM_MULTIROW, LIM_BARE, LIM_PROTOCOL };

/* Ids one probe statement takes, and the sizes of multi-row INSERTs, as in
 * sqlite_journal.c. */
#define PROBE_IDS 64
#define N_SIZES 4
static const int row_sizes[N_SIZES] = {64, 16, 4, 1};

/* One call's row content, made before the clock starts (toolgate's come
 * from its parsed turn, which is not timed either). */
typedef struct row_text {
    char id[32];
    char args[300];
} row_text;

typedef struct limit_side {
    sqlite3 *db;
    sqlite3_stmt *begin, *commit, *call, *result, *probe;
    sqlite3_stmt *run_add, *run_tail, *run_head, *run_del;
    sqlite3_stmt *calls[N_SIZES], *results[N_SIZES]; /* LIM_MULTIROW */
    long next_id;
    int kind;
} limit_side;

static void limit_close(limit_side *l)
{
    sqlite3_finalize(l->begin);
    sqlite3_finalize(l->commit);
    sqlite3_finalize(l->call);
    sqlite3_finalize(l->result);
    sqlite3_finalize(l->probe);
    sqlite3_finalize(l->run_add);
    sqlite3_finalize(l->run_tail);
    sqlite3_finalize(l->run_head);
    sqlite3_finalize(l->run_del);
    for (int z = 0; z < N_SIZES; z++) {
        sqlite3_finalize(l->calls[z]);
        sqlite3_finalize(l->results[z]);
    }
    sqlite3_close(l->db);
    memset(l, 0, sizeof *l);
}

/* The journal's rows as toolgate writes them (call_rows.v4_state is empty
 * since schema v5: running calls are listed in `running`); `?` marks what
 * each row binds: the call's id, arguments, checksum, index, created and
 * started time and owner pid; the result's call rowid, id, payload and
 * completion time. */
#define CALL_COLS                                                              \
    "INSERT OR ROLLBACK INTO call_rows(id, tool, args, args_raw, checksum, "   \
    "caller_id,"                                                               \
    " context, skills, format, idx, inline_output, from_artifact_tool,"        \
    " created_at, started_at, v4_state, owner_pid, owner_start, owner_boot)"   \
    " VALUES "
#define CALL_ROW                                                               \
    "(?, 'search', ?, NULL, ?, NULL, NULL, NULL, 'toolgate', ?, 1, 0, ?, ?,"   \
    " '', ?, 123456, '0f0e0d0c-0b0a-0908-0706-050403020100')"
#define CALL_BINDS 7
#define RESULT_COLS                                                            \
    "INSERT OR ROLLBACK INTO results(call_rowid, id, tool, outcome, "          \
    "execution, payload,"                                                      \
    " content, artifact, duration_ms, exit_status, completed_at, replayed,"    \
    " repaired, caller_id, decisions) VALUES "
#define RESULT_ROW                                                             \
    "(?, ?, 'search', 0, 'finished', ?, NULL, NULL, 0.004, NULL, ?, 0, 0,"     \
    " NULL, NULL)"
#define RESULT_BINDS 4

/* Prepares `head` followed by n copies of `row`, comma-separated. */
static int prepare_rows(sqlite3 *db, const char *head, const char *row, int n,
                        sqlite3_stmt **st)
{
    size_t cap = strlen(head) + (size_t)n * (strlen(row) + 1) + 1;
    char *sql = malloc(cap);
    if (sql == NULL)
        return -1;
    size_t len = (size_t)snprintf(sql, cap, "%s", head);
    for (int i = 0; i < n; i++)
        len +=
            (size_t)snprintf(sql + len, cap - len, "%s%s", i ? "," : "", row);
    int rc = sqlite3_prepare_v2(db, sql, -1, st, NULL);
    free(sql);
    return rc == SQLITE_OK ? 0 : -1;
}

/* Opens path with the journal's settings. The journal's schema must be there
 * unless kind is LIM_BARE, which creates its own two tables. */
static int limit_open(limit_side *l, const char *path, const char *sync,
                      int kind)
{
    char pragma[64], probe_sql[1024];
    int bare = kind == LIM_BARE;
    memset(l, 0, sizeof *l);
    l->kind = kind;
    if (sqlite3_open_v2(path, &l->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                            SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        fprintf(stderr, "limit: cannot open %s\n", path);
        return -1;
    }
    snprintf(pragma, sizeof pragma, "PRAGMA synchronous = %s",
             strcmp(sync, "full") == 0 ? "FULL" : "NORMAL");
    /* The journal's settings (sqlite_journal.c, open). */
    if (exec_sql(l->db, "PRAGMA busy_timeout = 5000") != 0 ||
        exec_sql(l->db, "PRAGMA journal_mode = WAL") != 0 ||
        exec_sql(l->db, pragma) != 0 ||
        exec_sql(l->db, "PRAGMA foreign_keys = ON") != 0 ||
        exec_sql(l->db, "PRAGMA temp_store = MEMORY") != 0)
        return -1;
    if (bare &&
        exec_sql(l->db,
                 "CREATE TABLE IF NOT EXISTS call_rows(rowid INTEGER PRIMARY"
                 " KEY, id TEXT, tool TEXT, args TEXT, args_raw TEXT,"
                 " checksum TEXT, caller_id TEXT, context TEXT, skills TEXT,"
                 " format TEXT, idx INTEGER, inline_output INTEGER,"
                 " from_artifact_tool INTEGER, created_at INTEGER,"
                 " started_at INTEGER, v4_state TEXT, owner_pid INTEGER,"
                 " owner_start INTEGER, owner_boot TEXT);"
                 "CREATE TABLE IF NOT EXISTS results(call_rowid INTEGER"
                 " PRIMARY KEY REFERENCES call_rows(rowid), id TEXT, tool TEXT,"
                 " outcome INTEGER, execution TEXT, payload TEXT,"
                 " content TEXT, artifact TEXT, duration_ms REAL,"
                 " exit_status INTEGER, completed_at INTEGER,"
                 " replayed INTEGER, repaired INTEGER, caller_id TEXT,"
                 " decisions TEXT);") != 0)
        return -1;
    size_t len = (size_t)snprintf(probe_sql, sizeof probe_sql,
                                  "SELECT v.column1 FROM (VALUES ");
    for (int p = 0; p < PROBE_IDS; p++)
        len += (size_t)snprintf(probe_sql + len, sizeof probe_sql - len,
                                "%s(?%d)", p ? "," : "", p + 2);
    snprintf(probe_sql + len, sizeof probe_sql - len,
             ") v WHERE EXISTS (SELECT 1 FROM call_rows c"
             " WHERE c.id = v.column1 AND c.caller_id IS ?1)");
    int bad =
        sqlite3_prepare_v2(l->db, "BEGIN IMMEDIATE", -1, &l->begin, NULL) ||
        sqlite3_prepare_v2(l->db, "COMMIT", -1, &l->commit, NULL) ||
        prepare_rows(l->db, CALL_COLS, CALL_ROW, 1, &l->call) ||
        prepare_rows(l->db, RESULT_COLS, RESULT_ROW, 1, &l->result);
    for (int z = 0; !bad && kind == LIM_MULTIROW && z < N_SIZES; z++)
        bad = prepare_rows(l->db, CALL_COLS, CALL_ROW, row_sizes[z],
                           &l->calls[z]) ||
              prepare_rows(l->db, RESULT_COLS, RESULT_ROW, row_sizes[z],
                           &l->results[z]);
    if (!bad && kind == LIM_PROTOCOL)
        bad = sqlite3_prepare_v2(l->db,
                                 "INSERT INTO running(first, last)"
                                 " VALUES (?1, ?2)",
                                 -1, &l->run_add, NULL) ||
              sqlite3_prepare_v2(l->db,
                                 "INSERT INTO running(first, last)"
                                 " SELECT ?2 + 1, last FROM running WHERE"
                                 " first = (SELECT max(first) FROM running"
                                 " WHERE first <= ?2) AND last > ?2",
                                 -1, &l->run_tail, NULL) ||
              sqlite3_prepare_v2(l->db,
                                 "UPDATE running SET last = ?1 - 1 WHERE"
                                 " first = (SELECT max(first) FROM running"
                                 " WHERE first < ?1) AND last >= ?1",
                                 -1, &l->run_head, NULL) ||
              sqlite3_prepare_v2(l->db,
                                 "DELETE FROM running"
                                 " WHERE first BETWEEN ?1 AND ?2",
                                 -1, &l->run_del, NULL) ||
              sqlite3_prepare_v2(l->db, probe_sql, -1, &l->probe, NULL);
    if (bad) {
        fprintf(stderr, "limit: %s\n", sqlite3_errmsg(l->db));
        return -1;
    }
    return 0;
}

static int step_reset(sqlite3 *db, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        fprintf(stderr, "limit: %s\n", sqlite3_errmsg(db));
        return -1;
    }
    return 0;
}

/* The re-delivery probe of the protocol: no id of the turn may be there. */
static int limit_probe(limit_side *l, const row_text *rows, int n)
{
    for (int first = 0; first < n; first += PROBE_IDS) {
        sqlite3_bind_null(l->probe, 1);
        for (int p = 0; p < PROBE_IDS; p++) {
            if (first + p < n)
                sqlite3_bind_text(l->probe, p + 2, rows[first + p].id, -1,
                                  SQLITE_STATIC);
            else
                sqlite3_bind_null(l->probe, p + 2);
        }
        int found = sqlite3_step(l->probe);
        sqlite3_reset(l->probe);
        if (found != SQLITE_DONE) {
            fprintf(stderr, "limit: probe: %s\n",
                    found == SQLITE_ROW ? "an id came back"
                                        : sqlite3_errmsg(l->db));
            return -1;
        }
    }
    return 0;
}

/* Inserts the call rows of rows[0..n) (the turn's calls from index i0) in
 * statements of `size` rows; rowids[] receives their keys. */
static int limit_calls(limit_side *l, sqlite3_stmt *st, int size,
                       const row_text *rows, int i0, sqlite3_int64 *rowids)
{
    sqlite3_int64 pid = (sqlite3_int64)getpid();
    for (int r = 0; r < size; r++) {
        sqlite3_int64 now = (sqlite3_int64)(bench_now() * 1000);
        int o = r * CALL_BINDS;
        sqlite3_bind_text(st, o + 1, rows[r].id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, o + 2, rows[r].args, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, o + 3, CHECKSUM_TEXT, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, o + 4, i0 + r);
        sqlite3_bind_int64(st, o + 5, now);
        sqlite3_bind_int64(st, o + 6, now);
        sqlite3_bind_int64(st, o + 7, pid);
    }
    if (step_reset(l->db, st) != 0)
        return -1;
    /* A statement's rows take consecutive rowids. */
    sqlite3_int64 last = sqlite3_last_insert_rowid(l->db);
    for (int r = 0; r < size; r++)
        rowids[r] = last - size + 1 + r;
    return 0;
}

static int limit_results(limit_side *l, sqlite3_stmt *st, int size,
                         const row_text *rows, const sqlite3_int64 *rowids)
{
    for (int r = 0; r < size; r++) {
        sqlite3_int64 now = (sqlite3_int64)(bench_now() * 1000);
        int o = r * RESULT_BINDS;
        sqlite3_bind_int64(st, o + 1, rowids[r]);
        sqlite3_bind_text(st, o + 2, rows[r].id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, o + 3, PAYLOAD_TEXT, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, o + 4, now);
    }
    return step_reset(l->db, st);
}

/* The statement size for the next rows of a turn with `left` to go. */
static int limit_size(const limit_side *l, int left, sqlite3_stmt **call,
                      sqlite3_stmt **result)
{
    int z = 0;
    if (l->kind != LIM_MULTIROW) {
        *call = l->call;
        *result = l->result;
        return 1;
    }
    while (row_sizes[z] > left)
        z++;
    *call = l->calls[z];
    *result = l->results[z];
    return row_sizes[z];
}

/* `turns` turns of CALLS_PER_TURN call+result pairs: one transaction each,
 * or for LIM_PROTOCOL two (calls, then results). The rows' content is made
 * before the clock starts. Returns seconds, or -1. */
static double limit_round(limit_side *l, int turns)
{
    size_t total = (size_t)turns * CALLS_PER_TURN;
    row_text *all = malloc(total * sizeof *all);
    if (all == NULL)
        return -1;
    for (size_t k = 0; k < total; k++) {
        long n = l->next_id++;
        snprintf(all[k].id, sizeof all[k].id, "call_%09ld", n);
        args_text(all[k].args, sizeof all[k].args, n);
    }
    double spent = -1;
    double t0 = bench_now();
    int proto = l->kind == LIM_PROTOCOL;
    for (int t = 0; t < turns; t++) {
        const row_text *rows = all + (size_t)t * CALLS_PER_TURN;
        sqlite3_int64 rowids[CALLS_PER_TURN];
        sqlite3_stmt *call, *result;
        if (step_reset(l->db, l->begin) != 0 ||
            (proto && limit_probe(l, rows, CALLS_PER_TURN) != 0))
            goto done;
        for (int i = 0, k; i < CALLS_PER_TURN; i += k) {
            k = limit_size(l, CALLS_PER_TURN - i, &call, &result);
            if (limit_calls(l, call, k, rows + i, i, rowids + i) != 0)
                goto done;
        }
        sqlite3_int64 first = rowids[0], last = rowids[CALLS_PER_TURN - 1];
        if (proto) {
            sqlite3_bind_int64(l->run_add, 1, first);
            sqlite3_bind_int64(l->run_add, 2, last);
            if (step_reset(l->db, l->run_add) != 0 ||
                step_reset(l->db, l->commit) != 0 ||
                step_reset(l->db, l->begin) != 0)
                goto done;
        }
        for (int i = 0, k; i < CALLS_PER_TURN; i += k) {
            k = limit_size(l, CALLS_PER_TURN - i, &call, &result);
            if (limit_results(l, result, k, rows + i, rowids + i) != 0)
                goto done;
        }
        if (proto) {
            sqlite3_bind_int64(l->run_tail, 1, first);
            sqlite3_bind_int64(l->run_tail, 2, last);
            sqlite3_bind_int64(l->run_head, 1, first);
            sqlite3_bind_int64(l->run_del, 1, first);
            sqlite3_bind_int64(l->run_del, 2, last);
            if (step_reset(l->db, l->run_tail) != 0 ||
                step_reset(l->db, l->run_head) != 0 ||
                step_reset(l->db, l->run_del) != 0)
                goto done;
        }
        if (step_reset(l->db, l->commit) != 0)
            goto done;
    }
    spent = bench_now() - t0;
done:
    free(all);
    return spent;
}

/* ------------------------------------------------------------ throughput */

/* The loops each round runs, in this order (reversed every other round). */
enum { S_TG, S_LIMIT, S_MULTI, S_BARE, S_PROTO, S_OFF, N_SIDES };

typedef struct figures {
    double rate[N_SIDES][MAX_ROUNDS]; /* results/s */
    double ratio[MAX_ROUNDS];         /* toolgate / the limit, per round */
    double ratio_multi[MAX_ROUNDS];   /* toolgate / the multi-row loop */
} figures;

/* Measures one sync mode; returns 0, 1 when the mode is not available,
 * -1 on failure. Results per second go into f. */
static int measure(const char *dir, const char *sync, int turns, int rounds,
                   figures *f)
{
    static const char *const names[N_SIDES] = {"tg",   "limit", "multi",
                                               "bare", "proto", NULL};
    static const int kinds[N_SIDES] = {-1,       LIM_JOURNAL,  LIM_MULTIROW,
                                       LIM_BARE, LIM_PROTOCOL, -1};
    char path[N_SIDES][4200];
    tg_side tg = {0}, off = {0};
    limit_side lim[N_SIDES];
    int ret = -1;
    memset(lim, 0, sizeof lim);
    for (int k = 0; k < N_SIDES; k++) {
        char name[64];
        path[k][0] = '\0';
        if (names[k] == NULL)
            continue;
        snprintf(name, sizeof name, "%s-%s.db", names[k], sync);
        if (path_join(path[k], sizeof path[k], dir, name) != 0)
            return -1;
        remove_db(path[k]);
    }
    int rc = tg_side_open(&tg, path[S_TG], sync);
    if (rc != 0) {
        ret = rc;
        goto done;
    }
    if (tg_side_open(&off, NULL, NULL) != 0)
        goto done;
    for (int k = S_LIMIT; k <= S_PROTO; k++)
        if ((kinds[k] != LIM_BARE && create_journal(path[k]) != 0) ||
            limit_open(&lim[k], path[k], sync, kinds[k]) != 0)
            goto done;
    double results = (double)turns * CALLS_PER_TURN;
    /* Round -1 warms every loop up and is not counted. */
    for (int r = -1; r < rounds; r++) {
        double spent[N_SIDES];
        for (int j = 0; j < N_SIDES; j++) {
            int k = r % 2 == 0 ? j : N_SIDES - 1 - j;
            spent[k] = k == S_TG    ? tg_side_round(&tg, turns)
                       : k == S_OFF ? tg_side_round(&off, turns)
                                    : limit_round(&lim[k], turns);
            if (spent[k] <= 0)
                goto done;
        }
        if (r < 0)
            continue;
        for (int k = 0; k < N_SIDES; k++)
            f->rate[k][r] = results / spent[k];
        f->ratio[r] = f->rate[S_TG][r] / f->rate[S_LIMIT][r];
        f->ratio_multi[r] = f->rate[S_TG][r] / f->rate[S_MULTI][r];
    }
    ret = 0;
done:
    tg_side_close(&tg);
    tg_side_close(&off);
    for (int k = 0; k < N_SIDES; k++) {
        limit_close(&lim[k]);
        if (path[k][0] != '\0')
            remove_db(path[k]);
    }
    return ret;
}

static double median_of(const double *v, int n)
{
    double tmp[MAX_ROUNDS];
    memcpy(tmp, v, (size_t)n * sizeof *v);
    return bench_median(tmp, n);
}

static int throughput(const char *dir, int turns, int rounds, const char *mode)
{
    const char *modes[2] = {"normal", "full"};
    int failed = 0;
    printf("bench_journal: durable results/s, turns of %d calls (in-process "
           "no-op tool, TG_TOOL_INLINE), %d turns a round, median of %d "
           "interleaved rounds, files in %s\n",
           CALLS_PER_TURN, turns, rounds, dir);
    for (int m = 0; m < 2; m++) {
        if (strcmp(mode, "both") != 0 && strcmp(mode, modes[m]) != 0)
            continue;
        figures f;
        memset(&f, 0, sizeof f);
        int rc = measure(dir, modes[m], turns, rounds, &f);
        if (rc == 1) {
            printf("  sync %-6s  not measured: this library has no "
                   "journal.sync option\n",
                   modes[m]);
            continue;
        }
        if (rc != 0) {
            fprintf(stderr, "sync %s: a measurement failed\n", modes[m]);
            failed = 1;
            continue;
        }
        double med[N_SIDES];
        for (int k = 0; k < N_SIDES; k++)
            med[k] = median_of(f.rate[k], rounds);
        printf("  sync %s\n", modes[m]);
        printf("    limit  SQLite loop, journal schema, 1 tx/turn      %9.0f "
               "results/s  (an INSERT per row)\n",
               med[S_LIMIT]);
        printf("    info   the same, multi-row INSERTs as the journal's %8.0f "
               "results/s  (64/16/4/1 rows a statement)\n",
               med[S_MULTI]);
        printf("    info   SQLite loop, 2 bare tables, 1 tx/turn       %9.0f "
               "results/s\n",
               med[S_BARE]);
        printf("    info   SQLite loop, toolgate's protocol, 2 tx/turn %9.0f "
               "results/s  (id probe + calls + running range; then results -"
               " running range; an INSERT per row)\n",
               med[S_PROTO]);
        printf("    toolgate run_turn, journal on                   %9.0f "
               "results/s  = %.2fx limit (goal >= 0.80",
               med[S_TG], median_of(f.ratio, rounds));
        if (m == 0)
            printf(", and >= 20000/s");
        printf("; per round:");
        for (int r = 0; r < rounds; r++)
            printf(" %.2f", f.ratio[r]);
        printf(")\n");
        printf("           = %.2fx the multi-row loop\n",
               median_of(f.ratio_multi, rounds));
        printf("    info   toolgate run_turn, journal off            %9.0f "
               "results/s\n",
               med[S_OFF]);
    }
    return failed;
}

/* ------------------------------------------------------------ the chain */

enum { C_OFF, C_SHA, C_HMAC, N_CHAIN };

/* One round of `turns` turns into j: returns the seconds spent in begin and
 * finish, or -1. */
static double chain_round(tg__journal *j, int turns, long *next_id)
{
    tg_call *calls[CALLS_PER_TURN];
    tg_result *results[CALLS_PER_TURN];
    tg_error err = {0};
    double spent = 0;
    for (int t = 0; t < turns; t++) {
        int ok = 1;
        for (int i = 0; i < CALLS_PER_TURN; i++) {
            char id[32], args[300];
            long n = (*next_id)++;
            snprintf(id, sizeof id, "call_%09ld", n);
            args_text(args, sizeof args, n);
            calls[i] = tg__call_new(id, "search", "toolgate");
            results[i] = NULL;
            if (calls[i] == NULL ||
                tg__call_set_args_text(calls[i], args, strlen(args)) != 0 ||
                (results[i] = tg__result_success(
                     calls[i], json_string("{\"ok\":true}"))) == NULL)
                ok = 0;
        }
        if (ok) {
            double t0 = bench_now();
            ok = tg__journal_begin(j, calls, CALLS_PER_TURN, &err) == 0 &&
                 tg__journal_finish(j, calls, results, CALLS_PER_TURN, &err) ==
                     0;
            spent += bench_now() - t0;
            if (!ok)
                fprintf(stderr, "journal: %s\n", err.message);
        }
        for (int i = 0; i < CALLS_PER_TURN; i++) {
            tg__result_free(results[i]);
            tg__call_free(calls[i]);
        }
        if (!ok)
            return -1;
    }
    return spent;
}

static int chain_cost(const char *dir, int turns, int rounds)
{
    static const char *names[N_CHAIN] = {"chain-off", "chain-sha256",
                                         "chain-hmac"};
    static const unsigned char key[] = "a bench key of 32 bytes, or so..";
    char path[N_CHAIN][4200];
    tg__journal *j[N_CHAIN] = {NULL, NULL, NULL};
    double rate[N_CHAIN][MAX_ROUNDS], ratio[2][MAX_ROUNDS], cost[2][MAX_ROUNDS];
    long next_id = 0;
    int ret = 1;
    tg_error err = {0};
    for (int k = 0; k < N_CHAIN; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s.db", names[k]);
        if (path_join(path[k], sizeof path[k], dir, name) != 0)
            return 1;
        remove_db(path[k]);
        tg__journal_options o = {.unchained = k == C_OFF};
        if (k == C_HMAC) {
            o.hmac_key = key;
            o.hmac_key_len = sizeof key - 1;
        }
        if (tg__journal_open_sqlite_opts(path[k], &o, &j[k], &err) != 0) {
            fprintf(stderr, "journal: %s\n", err.message);
            goto done;
        }
    }
    double results = (double)turns * CALLS_PER_TURN;
    for (int r = -1; r < rounds; r++) {
        double spent[N_CHAIN];
        for (int i = 0; i < N_CHAIN; i++) {
            int k = r % 2 == 0 ? i : N_CHAIN - 1 - i;
            if ((spent[k] = chain_round(j[k], turns, &next_id)) <= 0)
                goto done;
        }
        if (r < 0)
            continue;
        for (int k = 0; k < N_CHAIN; k++)
            rate[k][r] = results / spent[k];
        for (int m = 0; m < 2; m++) {
            ratio[m][r] = rate[C_SHA + m][r] / rate[C_OFF][r];
            /* microseconds a result costs more than without links */
            cost[m][r] = (spent[C_SHA + m] - spent[C_OFF]) / results * 1e6;
        }
    }
    printf("  chain (issue 16): journal begin + finish, turns of %d calls, "
           "sync normal, %d turns a round, median of %d interleaved rounds\n",
           CALLS_PER_TURN, turns, rounds);
    printf("    rows without links                          %9.0f "
           "results/s\n",
           median_of(rate[C_OFF], rounds));
    printf("    links, SHA-256                              %9.0f "
           "results/s  = %.3fx without\n",
           median_of(rate[C_SHA], rounds), median_of(ratio[0], rounds));
    printf("    links, HMAC-SHA-256                         %9.0f "
           "results/s  = %.3fx without\n",
           median_of(rate[C_HMAC], rounds), median_of(ratio[1], rounds));
    printf("    per result: %.2f us (SHA-256), %.2f us (HMAC) more than "
           "without (median of the per-round differences)\n",
           median_of(cost[0], rounds), median_of(cost[1], rounds));
    ret = 0;
done:
    for (int k = 0; k < N_CHAIN; k++) {
        tg__journal_close(j[k]);
        remove_db(path[k]);
    }
    return ret;
}

/* ------------------------------------------------------------ history */

static long long count_rows(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    long long n = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db,
                           "SELECT (SELECT count(*) FROM call_rows),"
                           " (SELECT count(*) FROM results)",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_int64(st, 0) == sqlite3_column_int64(st, 1))
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* A mix of the bits of i (splitmix64), so tool, outcome and caller of a
 * row are independent of each other. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* The tools of the big journal: 20 common ones, and "rare" for one call in
 * 100,000. */
static const char *fill_tool(long i, uint64_t h, char buf[16])
{
    if (i % 100000 == 99999)
        return "rare";
    snprintf(buf, 16, "tool_%02d", (int)(h % 20));
    return buf;
}

static int fill(const char *path, long rows)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *call = NULL, *result = NULL;
    int ret = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
        exec_sql(db, "PRAGMA synchronous = OFF") != 0 ||
        exec_sql(db, "PRAGMA cache_size = -1048576") != 0 ||
        sqlite3_prepare_v2(
            db,
            "INSERT INTO call_rows(rowid, id, tool, args, checksum,"
            " caller_id, format, idx, inline_output, from_artifact_tool,"
            " created_at, started_at, v4_state, owner_pid, owner_start,"
            " owner_boot) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'openai-chat', ?7,"
            " 1, 0, ?8, ?8, '', 4242, 123456,"
            " '0f0e0d0c-0b0a-0908-0706-050403020100')",
            -1, &call, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(
            db,
            "INSERT INTO results(call_rowid, id, tool, outcome, execution,"
            " payload, duration_ms, exit_status, completed_at, caller_id)"
            " VALUES (?1, ?2, ?3, ?4, 'finished', ?5, ?6, NULL, ?7, ?8)",
            -1, &result, NULL) != SQLITE_OK) {
        fprintf(stderr, "fill: %s\n", db ? sqlite3_errmsg(db) : "no memory");
        goto done;
    }
    static const char *const callers[] = {"agent-1", "agent-2", "agent-3",
                                          "agent-4"};
    /* One call a millisecond, ending about now. */
    sqlite3_int64 base = (sqlite3_int64)time(NULL) * 1000 - rows;
    double t0 = bench_now();
    for (long i = 0; i < rows; i++) {
        if (i % 250000 == 0 && exec_sql(db, "BEGIN") != 0)
            goto done;
        char id[32], args[300], tb[16];
        uint64_t h = mix((uint64_t)i);
        const char *tool = fill_tool(i, h, tb);
        snprintf(id, sizeof id, "call_%09ld", i);
        args_text(args, sizeof args, i);
        /* One call in 10 ends in error; none is denied. */
        int outcome =
            (h >> 8) % 10 == 3 ? TG_OUTCOME_ERROR : TG_OUTCOME_SUCCESS;
        const char *payload =
            outcome == TG_OUTCOME_SUCCESS
                ? "{\"matches\":3,\"files\":[\"src/a.c\",\"src/b.c\"]}"
                : "{\"error\":{\"message\":\"exit status 2\","
                  "\"code\":\"EXIT_STATUS\"}}";
        sqlite3_bind_int64(call, 1, i + 1);
        sqlite3_bind_text(call, 2, id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(call, 3, tool, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(call, 4, args, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(call, 5, CHECKSUM_TEXT, -1, SQLITE_STATIC);
        sqlite3_bind_text(call, 6, callers[(h >> 16) % 4], -1, SQLITE_STATIC);
        sqlite3_bind_int(call, 7, (int)(i % 8));
        sqlite3_bind_int64(call, 8, base + i);
        if (step_reset(db, call) != 0)
            goto done;
        sqlite3_bind_int64(result, 1, i + 1);
        sqlite3_bind_text(result, 2, id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(result, 3, tool, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(result, 4, outcome);
        sqlite3_bind_text(result, 5, payload, -1, SQLITE_STATIC);
        sqlite3_bind_double(result, 6, 1.0 + (double)(i % 997));
        sqlite3_bind_int64(result, 7, base + i + 1);
        sqlite3_bind_text(result, 8, callers[(h >> 16) % 4], -1, SQLITE_STATIC);
        if (step_reset(db, result) != 0)
            goto done;
        if ((i + 1) % 250000 == 0 || i + 1 == rows) {
            if (exec_sql(db, "COMMIT") != 0)
                goto done;
            if ((i + 1) % 1000000 == 0 || i + 1 == rows) {
                fprintf(stderr, "  filled %ld rows, %.0f s\n", i + 1,
                        bench_now() - t0);
            }
        }
    }
    if (exec_sql(db, "PRAGMA wal_checkpoint(TRUNCATE)") != 0)
        goto done;
    ret = 0;
done:
    sqlite3_finalize(call);
    sqlite3_finalize(result);
    sqlite3_close(db);
    return ret;
}

static int history_query(const char *path, const char *label,
                         const tg_history_query *q)
{
    enum { RUNS = 15 };
    double t[RUNS], first = 0;
    size_t count = 0;
    for (int r = -1; r < RUNS; r++) {
        char *out = NULL;
        tg_error err = {0};
        double t0 = bench_now();
        int rc = tg_journal_history(path, q, &out, &err);
        double dt = bench_now() - t0;
        if (rc != 0) {
            fprintf(stderr, "%s: %s\n", label, err.message);
            return -1;
        }
        if (r < 0) {
            first = dt;
            /* Results in the array: count the records' "call" members. */
            for (const char *p = out; (p = strstr(p, "\"call\":")) != NULL; p++)
                count++;
        } else {
            t[r] = dt;
        }
        tg_free(out);
    }
    printf("  %-50s %3zu rows  first %7.2f ms, median %7.2f ms\n", label, count,
           first * 1e3, bench_median(t, RUNS) * 1e3);
    return 0;
}

static int history(const char *dir, long rows)
{
    char path[4200], name[64];
    struct stat sb;
    snprintf(name, sizeof name, "tg-history-%ld.db", rows);
    if (path_join(path, sizeof path, dir, name) != 0)
        return 1;
    double fill_s = -1;
    if (stat(path, &sb) == 0 && count_rows(path) == rows) {
        printf("bench_journal: reusing %s (%ld rows)\n", path, rows);
    } else {
        remove_db(path);
        if (create_journal(path) != 0)
            return 1;
        double t0 = bench_now();
        if (fill(path, rows) != 0)
            return 1;
        fill_s = bench_now() - t0;
    }
    if (stat(path, &sb) != 0)
        return 1;
    printf("bench_journal: history on %ld calls and results (%s, %.2f GB", rows,
           path, (double)sb.st_size / 1e9);
    if (fill_s >= 0)
        printf(", filled in %.0f s = %.0f rows/s", fill_s, rows / fill_s);
    printf("); each query opens the journal (as `toolgate history` does), "
           "first call and median of 15\n");
    static const struct {
        const char *label;
        tg_history_query q;
    } queries[] = {
        {"--tool tool_07 --limit 20 (1/20 of rows)",
         {.tool = "tool_07", .limit = 20}},
        {"--tool rare --limit 20 (1 row in 100,000)",
         {.tool = "rare", .limit = 20}},
        {"--tool absent --limit 20 (no row)", {.tool = "absent", .limit = 20}},
        {"--limit 20 (no filter)", {.limit = 20}},
        {"--tool tool_07 --outcome error --limit 20",
         {.tool = "tool_07", .outcome = "error", .limit = 20}},
        {"--tool tool_07 --outcome denied --limit 20 (none)",
         {.tool = "tool_07", .outcome = "denied", .limit = 20}},
        {"--outcome error --limit 20", {.outcome = "error", .limit = 20}},
        {"--caller agent-2 --limit 20", {.caller = "agent-2", .limit = 20}},
        {"--tool tool_07 --caller agent-2 --limit 20",
         {.tool = "tool_07", .caller = "agent-2", .limit = 20}},
        {"--tool rare --since 0 --limit 20",
         {.tool = "rare", .since = "0", .limit = 20}},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++)
        if (history_query(path, queries[i].label, &queries[i].q) != 0)
            failed = 1;
    return failed;
}

/* ------------------------------------------------------------ lone calls */

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Calls that come alone, as a client calling one at a time sends them:
 * each is begun (its running row committed) and finished (its result
 * committed) by itself, two transactions a call. Prints the p50 and p99
 * of the pair, of begin and of finish, the writer thread's CPU time a
 * call, and the WAL's size at the end (a WAL that checkpoints stays
 * small). With `batch` > 1, `batch` calls are begun in one transaction and
 * finished in another, as a server with that many calls in flight does
 * (`format` names the calls' format: "mcp" for a server's), and the times
 * are a batch's divided by its calls. */
static int lone(const char *dir, long n, long batch, const char *format,
                int background)
{
    char path[4200], wal[4300];
    tg__journal *j = NULL;
    tg_error err = {0};
    if (batch < 1 || batch > 1000 || n < batch)
        return 1;
    if (path_join(path, sizeof path, dir, "lone.db") != 0)
        return 1;
    remove_db(path);
    snprintf(wal, sizeof wal, "%.4200s-wal", path);
    /* inline: the two transactions on the call path, as before the
     * committer; background (the default of the configuration): the call
     * path's appends, and how long the thread takes to write it all */
    tg__journal_options o = {.commit_inline = !background};
    if (tg__journal_open_sqlite_opts(path, &o, &j, &err) != 0) {
        fprintf(stderr, "journal: %s\n", err.message);
        return 1;
    }
    long rounds = n / batch;
    double start = bench_now();
    double *lat = malloc((size_t)rounds * 3 * sizeof *lat);
    tg_call **calls = calloc((size_t)batch, sizeof *calls);
    tg_result **res = calloc((size_t)batch, sizeof *res);
    if (lat == NULL || calls == NULL || res == NULL) {
        free(lat);
        free(calls);
        free(res);
        tg__journal_close(j);
        return 1;
    }
    double *lb = lat + rounds, *lf = lat + 2 * rounds, cpu = 0;
    int ret = 1;
    for (long r = 0; r < rounds; r++) {
        for (long k = 0; k < batch; k++) {
            char id[32], args[300];
            long i = r * batch + k;
            snprintf(id, sizeof id, "lone_%09ld", i);
            args_text(args, sizeof args, i);
            calls[k] = tg__call_new(id, "search", format);
            if (calls[k] == NULL ||
                tg__call_set_args_text(calls[k], args, strlen(args)) != 0 ||
                (res[k] = tg__result_success(
                     calls[k], json_string(PAYLOAD_TEXT))) == NULL)
                goto done;
        }
        double c0 = thread_cpu(), t0 = bench_now();
        int ok = tg__journal_begin(j, calls, (size_t)batch, &err) == 0;
        double t1 = bench_now();
        ok = ok && tg__journal_finish(j, calls, res, (size_t)batch, &err) == 0;
        double t2 = bench_now();
        cpu += thread_cpu() - c0;
        lat[r] = (t2 - t0) * 1e6 / (double)batch;
        lb[r] = (t1 - t0) * 1e6 / (double)batch;
        lf[r] = (t2 - t1) * 1e6 / (double)batch;
        for (long k = 0; k < batch; k++) {
            tg__result_free(res[k]);
            tg__call_free(calls[k]);
            res[k] = NULL;
            calls[k] = NULL;
        }
        if (!ok) {
            fprintf(stderr, "journal: %s\n", err.message);
            goto done;
        }
    }
    /* Every row in SQLite: what the close waits for (the committer's
     * drain; nothing for inline). */
    double loop_end = bench_now();
    tg__journal_close(j);
    j = NULL;
    double all_in = bench_now();
    struct stat st;
    long long walsz = stat(wal, &st) == 0 ? (long long)st.st_size : 0;
    qsort(lat, (size_t)rounds, sizeof *lat, by_double);
    qsort(lb, (size_t)rounds, sizeof *lb, by_double);
    qsort(lf, (size_t)rounds, sizeof *lf, by_double);
    if (batch == 1)
        printf("  lone calls: %ld calls, each begun then finished by itself, "
               "sync normal, commit %s\n",
               n, background ? "background" : "inline");
    else
        printf("  batched calls: %ld calls, %ld begun together and "
               "finished together, format %s, sync normal, commit %s; times "
               "a call\n",
               rounds * batch, batch, format,
               background ? "background" : "inline");
    printf("    begin + finish  p50 %7.1f us  p99 %7.1f us  (%.0f calls/s at "
           "p50)\n",
           lat[rounds / 2], lat[rounds * 99 / 100], 1e6 / lat[rounds / 2]);
    printf("    begin           p50 %7.1f us  p99 %7.1f us\n", lb[rounds / 2],
           lb[rounds * 99 / 100]);
    printf("    finish          p50 %7.1f us  p99 %7.1f us\n", lf[rounds / 2],
           lf[rounds * 99 / 100]);
    printf("    call path CPU   %7.1f us a call; WAL at the end %lld KiB\n",
           cpu / (double)(rounds * batch) * 1e6, walsz / 1024);
    printf("    all rows in SQLite %.1f ms after the last finish; %.0f "
           "calls/s from the first begin to that\n",
           (all_in - loop_end) * 1e3,
           (double)(rounds * batch) / (all_in - start));
    ret = 0;
done:
    for (long k = 0; k < batch; k++) {
        tg__result_free(res[k]);
        tg__call_free(calls[k]);
    }
    free(res);
    free(calls);
    free(lat);
    tg__journal_close(j);
    remove_db(path);
    return ret;
}

/* ------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    const char *dir = getenv("TMPDIR");
    const char *mode = "both";
    long history_rows = 0, lone_calls = 0, batch = 1;
    const char *format = "toolgate";
    int background = 0;
    int turns = 30, rounds = DEFAULT_ROUNDS, chain_only = 0;
    /* Lines as they come, also into a file: the history mode runs long. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (dir == NULL || *dir == '\0')
        dir = "/tmp";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "--sync") == 0 && i + 1 < argc) {
            mode = argv[++i];
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = (int)strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--chain") == 0) {
            chain_only = 1;
        } else if (strcmp(argv[i], "--lone") == 0 && i + 1 < argc) {
            lone_calls = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
            batch = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--commit") == 0 && i + 1 < argc) {
            background = strcmp(argv[++i], "background") == 0;
        } else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
            format = argv[++i];
        } else if (strcmp(argv[i], "--history-rows") == 0 && i + 1 < argc) {
            history_rows = strtol(argv[++i], NULL, 10);
        } else if (argv[i][0] >= '1' && argv[i][0] <= '9') {
            turns = (int)strtol(argv[i], NULL, 10);
        } else {
            fprintf(
                stderr,
                "usage: bench_journal [TURNS_PER_ROUND] [--rounds N] "
                "[--dir DIR] [--sync normal|full|both]\n"
                "       bench_journal --chain [TURNS_PER_ROUND] [--rounds N] "
                "[--dir DIR]\n"
                "       bench_journal --lone CALLS [--batch K] [--format F] "
                "[--commit inline|background] [--dir DIR]\n"
                "       bench_journal --history-rows N [--dir DIR]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || turns < 1 ||
        (strcmp(mode, "both") && strcmp(mode, "normal") &&
         strcmp(mode, "full"))) {
        fprintf(stderr, "bench_journal: bad rounds, turns or --sync\n");
        return 2;
    }
    if (history_rows > 0)
        return history(dir, history_rows);
    char work[4200];
    if (path_join(work, sizeof work, dir, "tg-bench-journal-XXXXXX") != 0 ||
        mkdtemp(work) == NULL) {
        fprintf(stderr, "bench_journal: cannot make a directory in %s: %s\n",
                dir, strerror(errno));
        return 1;
    }
    if (lone_calls > 0) {
        int rc = lone(work, lone_calls, batch, format, background);
        rmdir(work);
        return rc;
    }
    int failed = chain_only ? 0 : throughput(work, turns, rounds, mode);
    failed |= chain_cost(work, turns, rounds);
    rmdir(work);
    return failed;
}
