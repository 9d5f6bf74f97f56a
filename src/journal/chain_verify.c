/* SPDX-License-Identifier: MIT */
/*
 * chain_verify.c - tg_journal_verify: walks the journal's hash chain
 * (chain.h) in seq order, recomputes each result row's link from its
 * columns and its call row's, and names the first row that was changed,
 * removed or inserted since toolgate wrote it.
 *
 * What it can tell, and how:
 * - changed: a row's link does not match its content and the link before
 *   it (its columns, its call row's, its seq or its link were edited);
 * - removed: a seq is missing (no row and no record of retention pruning
 *   it), or the chain does not start at seq 1 or at the anchor retention
 *   left;
 * - inserted: a result row without a link whose call is newer than the
 *   chain (rows written before the chain existed are counted apart), a row
 *   with a seq that is already taken, or a row that fails its check and
 *   carries another row's link (a copy);
 * - unverifiable: rows chained with an HMAC key that was not given, or
 *   with another key (the epochs record each key's id, never the key), and
 *   rows chained without the key after rows chained with it (a downgrade:
 *   without the key anyone could have rewritten them).
 * Without a key the chain stops edits by anyone who does not recompute it;
 * with one, by anyone who does not hold the key. Either way the newest rows
 * can be cut off the end, as retention cuts the oldest: compare the row
 * count and head link printed with ones recorded elsewhere to tell.
 */
#include <jansson.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "chain.h"
#include "error.h"
#include "hex.h"
#include "journal.h"

struct epoch {
    sqlite3_int64 first;
    char key_id[TG_CHAIN_KEY_ID];
};

struct walk {
    sqlite3 *db;
    const tg__chain_key *key;
    struct epoch *epochs;
    size_t n_epochs;
    sqlite3_int64 legacy_max, legacy, rows, pruned, first_seq, last_seq;
    unsigned char prev[TG_CHAIN_LEN];
    json_t *problem; /* new ref: the first bad row, NULL while none */
};

static int db_fail(sqlite3 *db, const char *what, tg_error *err)
{
    return tg__error_set(err, TG_EJOURNAL, "journal: %s: %s", what,
                         sqlite3_errmsg(db));
}

/* Records the first problem; later ones are ignored. */
static int problem(struct walk *w, const char *kind, sqlite3_int64 seq,
                   sqlite3_int64 rowid, const char *id, const char *tool,
                   const char *message)
{
    if (w->problem != NULL)
        return 0;
    w->problem = json_pack(
        "{s:b,s:s,s:I,s:I,s:s?,s:s?,s:s,s:I}", "ok", 0, "problem", kind, "seq",
        (json_int_t)seq, "call_rowid", (json_int_t)rowid, "id", id, "tool",
        tool, "message", message, "rows_verified", (json_int_t)w->rows);
    return w->problem == NULL ? TG_ENOMEM : 0;
}

static int load_epochs(struct walk *w, tg_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = 0, step;
    if (sqlite3_prepare_v2(w->db,
                           "SELECT first_seq, key_id FROM chain_epochs"
                           " ORDER BY first_seq",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(w->db, "reading the chain's keys", err);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        struct epoch *grown =
            realloc(w->epochs, (w->n_epochs + 1) * sizeof *grown);
        if (grown == NULL) {
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
            break;
        }
        w->epochs = grown;
        const char *id = (const char *)sqlite3_column_text(st, 1);
        grown[w->n_epochs].first = sqlite3_column_int64(st, 0);
        snprintf(grown[w->n_epochs].key_id, TG_CHAIN_KEY_ID, "%s",
                 id ? id : "");
        w->n_epochs++;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = db_fail(w->db, "reading the chain's keys", err);
    sqlite3_finalize(st);
    return rc;
}

/* The key id rows at seq were chained with ("" before any epoch), and
 * whether an epoch with a key came before that one. */
static const char *epoch_of(const struct walk *w, sqlite3_int64 seq,
                            int *keyed_before)
{
    const char *id = "";
    *keyed_before = 0;
    for (size_t i = 0; i < w->n_epochs && w->epochs[i].first <= seq; i++) {
        if (id[0] != '\0')
            *keyed_before = 1;
        id = w->epochs[i].key_id;
    }
    return id;
}

/* Rows without a link: written before the chain existed (their call is
 * at or below chain_meta's legacy_max), or inserted since. */
static int check_unchained(struct walk *w, tg_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = 0, step;
    if (sqlite3_prepare_v2(w->db, "SELECT legacy_max FROM chain_meta", -1, &st,
                           NULL) != SQLITE_OK)
        return db_fail(w->db, "reading the chain's start", err);
    if (sqlite3_step(st) == SQLITE_ROW)
        w->legacy_max = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(w->db,
                           "SELECT call_rowid, id, tool FROM results"
                           " WHERE chain_seq IS NULL ORDER BY call_rowid",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(w->db, "reading unchained rows", err);
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        sqlite3_int64 rowid = sqlite3_column_int64(st, 0);
        if (rowid <= w->legacy_max) {
            w->legacy++;
            continue;
        }
        char msg[160];
        snprintf(msg, sizeof msg,
                 "result of call rowid %lld has no chain link: inserted "
                 "outside toolgate",
                 (long long)rowid);
        rc = problem(w, "inserted", 0, rowid,
                     (const char *)sqlite3_column_text(st, 1),
                     (const char *)sqlite3_column_text(st, 2), msg);
        if (rc != 0)
            rc = tg__error_set(err, rc, "out of memory");
        break;
    }
    sqlite3_finalize(st);
    return rc;
}

/* The call rowid of another result row whose link is link[0..len), 0 when
 * none: a row that fails its check because it was copied from another and
 * inserted is named inserted, not changed. One scan, on a failure only. */
static sqlite3_int64 copy_of(struct walk *w, const void *link, int len,
                             sqlite3_int64 rowid)
{
    sqlite3_stmt *st = NULL;
    sqlite3_int64 other = 0;
    if (len != TG_CHAIN_LEN ||
        sqlite3_prepare_v2(w->db,
                           "SELECT call_rowid FROM results WHERE chain = ?1"
                           " AND call_rowid != ?2 LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_blob(st, 1, link, len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, rowid);
    if (sqlite3_step(st) == SQLITE_ROW)
        other = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return other;
}

/* Checks one result row (the statement of walk_chain) at seq == expected.
 * Returns 0 (a problem may have been recorded) or a TG_E code. */
static int check_row(struct walk *w, sqlite3_stmt *st, sqlite3_int64 seq)
{
    sqlite3_int64 rowid = sqlite3_column_int64(st, 2);
    const char *id = (const char *)sqlite3_column_text(st, 3);
    const char *tool = (const char *)sqlite3_column_text(st, 4);
    char msg[320];
    int keyed_before;
    const char *key_id = epoch_of(w, seq, &keyed_before);
    if (key_id[0] != '\0' && !w->key->keyed) {
        snprintf(msg, sizeof msg,
                 "rows from seq %lld on were chained with an HMAC key (id %s):"
                 " give it to verify them (--hmac-key-file)",
                 (long long)seq, key_id);
        return problem(w, "unverifiable", seq, rowid, id, tool, msg);
    }
    if (key_id[0] != '\0' && strcmp(key_id, w->key->id) != 0) {
        snprintf(msg, sizeof msg,
                 "rows from seq %lld on were chained with another HMAC key "
                 "(id %s, the key given has id %s)",
                 (long long)seq, key_id, w->key->id);
        return problem(w, "unverifiable", seq, rowid, id, tool, msg);
    }
    if (key_id[0] == '\0' && keyed_before) {
        snprintf(msg, sizeof msg,
                 "rows from seq %lld on are chained without the HMAC key, "
                 "after rows chained with it: anyone could have rewritten "
                 "them",
                 (long long)seq);
        return problem(w, "unverifiable", seq, rowid, id, tool, msg);
    }
    unsigned char link[TG_CHAIN_LEN];
    /* Rows of an epoch without a key were chained with plain SHA-256. */
    tg__chain_link_stmt(st, 2, key_id[0] != '\0' ? w->key : NULL, w->prev, seq,
                        link);
    const void *stored = sqlite3_column_blob(st, 1);
    if (sqlite3_column_bytes(st, 1) != TG_CHAIN_LEN ||
        CRYPTO_memcmp(stored, link, TG_CHAIN_LEN) != 0) {
        sqlite3_int64 copied =
            copy_of(w, stored, sqlite3_column_bytes(st, 1), rowid);
        if (copied != 0) {
            snprintf(msg, sizeof msg,
                     "result of call rowid %lld (seq %lld) carries the link "
                     "of the result of call rowid %lld: inserted outside "
                     "toolgate, a copy",
                     (long long)rowid, (long long)seq, (long long)copied);
            return problem(w, "inserted", seq, rowid, id, tool, msg);
        }
        snprintf(msg, sizeof msg,
                 "result of call rowid %lld (seq %lld) does not match its "
                 "chain link: changed since it was written (its columns, "
                 "its call's, its seq or its link), or not written by "
                 "toolgate",
                 (long long)rowid, (long long)seq);
        return problem(w, "changed", seq, rowid, id, tool, msg);
    }
    memcpy(w->prev, link, TG_CHAIN_LEN);
    w->rows++;
    return 0;
}

/* Merges the result rows and the records of pruned rows in seq order. */
static int walk_chain(struct walk *w, tg_error *err)
{
    sqlite3_stmt *rs = NULL, *ps = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(
            w->db,
            "SELECT r.chain_seq, r.chain, " TG_CHAIN_RESULT_COLUMNS
            ", " TG_CHAIN_CALL_COLUMNS " FROM results r"
            " LEFT JOIN call_rows c ON c.rowid = r.call_rowid"
            " WHERE r.chain_seq IS NOT NULL ORDER BY r.chain_seq",
            -1, &rs, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(w->db,
                           "SELECT seq, link, call_rowid FROM chain_pruned"
                           " ORDER BY seq",
                           -1, &ps, NULL) != SQLITE_OK) {
        rc = db_fail(w->db, "reading the chain", err);
        goto done;
    }
    int r_step = sqlite3_step(rs), p_step = sqlite3_step(ps);
    sqlite3_int64 expected = 1, last_rowid = 0;
    int started = 0;
    char msg[320];
    while (rc == 0 && w->problem == NULL &&
           (r_step == SQLITE_ROW || p_step == SQLITE_ROW)) {
        sqlite3_int64 rseq =
            r_step == SQLITE_ROW ? sqlite3_column_int64(rs, 0) : INT64_MAX;
        sqlite3_int64 pseq =
            p_step == SQLITE_ROW ? sqlite3_column_int64(ps, 0) : INT64_MAX;
        int pruned = pseq <= rseq;
        sqlite3_int64 seq = pruned ? pseq : rseq;
        sqlite3_int64 rowid =
            pruned ? sqlite3_column_int64(ps, 2) : sqlite3_column_int64(rs, 2);
        if (!started && pruned) {
            /* The anchor: rows before it were pruned by retention. */
            expected = seq;
        }
        started = 1;
        if (seq < expected || (pruned && pseq == rseq)) {
            snprintf(msg, sizeof msg,
                     "result of call rowid %lld has seq %lld, which another "
                     "row already has: inserted outside toolgate",
                     (long long)sqlite3_column_int64(rs, 2), (long long)rseq);
            rc = problem(w, "inserted", rseq, sqlite3_column_int64(rs, 2),
                         (const char *)sqlite3_column_text(rs, 3),
                         (const char *)sqlite3_column_text(rs, 4), msg);
            break;
        }
        if (seq > expected) {
            if (last_rowid != 0)
                snprintf(msg, sizeof msg,
                         "seq %lld to %lld missing, between the results of "
                         "call rowids %lld and %lld: removed",
                         (long long)expected, (long long)seq - 1,
                         (long long)last_rowid, (long long)rowid);
            else
                snprintf(msg, sizeof msg,
                         "seq %lld to %lld missing, before the result of "
                         "call rowid %lld: removed (retention leaves a "
                         "record of what it prunes)",
                         (long long)expected, (long long)seq - 1,
                         (long long)rowid);
            rc = problem(
                w, "removed", expected, rowid,
                pruned ? NULL : (const char *)sqlite3_column_text(rs, 3),
                pruned ? NULL : (const char *)sqlite3_column_text(rs, 4), msg);
            break;
        }
        if (pruned) {
            if (sqlite3_column_bytes(ps, 1) != TG_CHAIN_LEN) {
                snprintf(msg, sizeof msg,
                         "the record of pruned seq %lld has a link of %d "
                         "bytes: changed",
                         (long long)seq, sqlite3_column_bytes(ps, 1));
                rc = problem(w, "changed", seq, rowid, NULL, NULL, msg);
                break;
            }
            memcpy(w->prev, sqlite3_column_blob(ps, 1), TG_CHAIN_LEN);
            w->pruned++;
            p_step = sqlite3_step(ps);
        } else {
            if ((rc = check_row(w, rs, seq)) != 0)
                break;
            if (w->rows == 1 && w->first_seq == 0)
                w->first_seq = seq;
            w->last_seq = seq;
            r_step = sqlite3_step(rs);
        }
        last_rowid = rowid;
        expected = seq + 1;
    }
    if (rc == 0 && w->problem == NULL &&
        ((r_step != SQLITE_ROW && r_step != SQLITE_DONE) ||
         (p_step != SQLITE_ROW && p_step != SQLITE_DONE)))
        rc = db_fail(w->db, "reading the chain", err);
    else if (rc != 0 && rc == TG_ENOMEM)
        rc = tg__error_set(err, rc, "out of memory");
done:
    sqlite3_finalize(rs);
    sqlite3_finalize(ps);
    return rc;
}

static int report_ok(struct walk *w, const char *path, char **out,
                     tg_error *err)
{
    char head[2 * TG_CHAIN_LEN + 1];
    int keyed_before;
    /* What the newest rows were chained with, whatever key was given. */
    const char *key_id = epoch_of(w, w->last_seq, &keyed_before);
    tg__hex_encode(w->prev, TG_CHAIN_LEN, head);
    json_t *o =
        json_pack("{s:b,s:s,s:I,s:I,s:I,s:s,s:s,s:s,s:I,s:I}", "ok", 1,
                  "journal", path, "rows", (json_int_t)w->rows, "first_seq",
                  (json_int_t)w->first_seq, "last_seq", (json_int_t)w->last_seq,
                  "head", head, "mac", key_id[0] ? "hmac-sha256" : "sha256",
                  "key_id", key_id, "pruned", (json_int_t)w->pruned,
                  "before_chain", (json_int_t)w->legacy); /* new ref */
    if (o == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    *out = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return *out ? 0 : tg__error_set(err, TG_ENOMEM, "out of memory");
}

int tg_journal_verify(const char *journal_path, const unsigned char *hmac_key,
                      size_t hmac_key_len, char **out, tg_error *err)
{
    struct walk w;
    tg__chain_key key;
    tg__journal *j = NULL;
    struct stat sb;
    int rc;
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "verify: no output pointer");
    *out = NULL;
    if (journal_path == NULL || *journal_path == '\0')
        return tg__error_set(err, TG_EINVAL, "journal: no journal path given");
    /* Verifying creates nothing. */
    if (stat(journal_path, &sb) != 0)
        return tg__error_set(err, TG_ENOTFOUND, "no journal at %s",
                             journal_path);
    memset(&w, 0, sizeof w);
    if (tg__chain_key_init(&key, hmac_key, hmac_key_len) != 0)
        return tg__error_set(err, TG_EINTERNAL, "journal: SHA-256 failed");
    w.key = &key;
    /* Opening migrates an older journal and recovers calls left running,
     * chaining what it writes with this key, as the runtime would. */
    tg__journal_options opts = {.hmac_key = hmac_key,
                                .hmac_key_len = hmac_key_len};
    if ((rc = tg__journal_open_sqlite_opts(journal_path, &opts, &j, err)) != 0)
        goto done;
    w.db = tg__journal_sqlite_db(j);
    /* One snapshot for every read, whatever another process writes. */
    if (sqlite3_exec(w.db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        rc = db_fail(w.db, "starting to read", err);
        goto done;
    }
    if ((rc = load_epochs(&w, err)) != 0 ||
        (rc = check_unchained(&w, err)) != 0 ||
        (w.problem == NULL && (rc = walk_chain(&w, err)) != 0))
        goto done;
    if (w.problem != NULL) {
        if (json_object_set_new(w.problem, "journal",
                                json_string(journal_path)) != 0 ||
            (*out = json_dumps(w.problem, JSON_COMPACT)) == NULL)
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
    } else {
        rc = report_ok(&w, journal_path, out, err);
    }
done:
    if (w.db != NULL)
        sqlite3_exec(w.db, "COMMIT", NULL, NULL, NULL);
    json_decref(w.problem);
    free(w.epochs);
    tg__chain_key_cleanup(&key);
    tg__journal_close(j);
    return rc;
}
