/* SPDX-License-Identifier: MIT */
/*
 * store.c - the spool directory and its index: opening (creating the
 * directory 0700, removing temporary files of dead writers), strict id
 * checks, the commit of a written artifact (rename under the index's write
 * lock, so concurrent writers, evictions and releases of the same id are
 * serialised even across processes), pins, release, LRU eviction, listing,
 * and opening an artifact for the readers.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "timeutil.h"

/* Temporary files older than this whose writer holds no lock are left by a
 * dead process; younger ones may be a writer between create and flock. */
#define STALE_TMP_SECONDS 60
/* Tombstones (evicted or released ids) kept so their ids keep answering
 * "evicted" rather than "unknown"; older ones are forgotten. */
#define MAX_TOMBSTONES 100000

static const char schema_sql[] = "CREATE TABLE IF NOT EXISTS artifacts("
                                 " id TEXT PRIMARY KEY,"
                                 " sha256 TEXT NOT NULL,"
                                 " bytes INTEGER NOT NULL,"
                                 " lines INTEGER NOT NULL,"
                                 " media_type TEXT NOT NULL,"
                                 " preview TEXT NOT NULL,"
                                 " checkpoints BLOB,"
                                 " created_at INTEGER NOT NULL,"
                                 " last_used INTEGER NOT NULL,"
                                 " pins INTEGER NOT NULL DEFAULT 0,"
                                 " state INTEGER NOT NULL DEFAULT 0,"
                                 " gone_at INTEGER);"
                                 "CREATE INDEX IF NOT EXISTS artifacts_lru"
                                 " ON artifacts(state, pins, last_used);";

int tg__spool_id_valid(const char *id)
{
    if (id == NULL || strncmp(id, "art_", 4) != 0)
        return 0;
    for (int i = 4; i < TG_SPOOL_ID_LEN; i++) {
        char c = id[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return 0;
    }
    return id[TG_SPOOL_ID_LEN] == '\0';
}

/* The error for an id that is not an artifact id, quoting it bounded. */
static int bad_id(const char *id, tg_error *err)
{
    char shown[TG__SHOWN_ID_SIZE];
    return tg__error_set(err, TG_EINVAL,
                         "malformed artifact id '%s': expected art_ followed "
                         "by 24 lowercase hex digits",
                         tg__text_show(id, shown, sizeof shown));
}

/* "ab/art_ab..." for a validated id. */
static void rel_path(const char *id, char out[TG_SPOOL_ID_LEN + 4])
{
    snprintf(out, TG_SPOOL_ID_LEN + 4, "%.2s/%s", id + 4, id);
}

static int db_fail(tg_spool *sp, int rc, const char *what, tg_error *err)
{
    const char *msg = sp->db ? sqlite3_errmsg(sp->db) : sqlite3_errstr(rc);
    if ((rc & 0xff) == SQLITE_FULL)
        return tg__error_set(err, TG_EIO, "spool %s: disk full while %s (%s)",
                             sp->dir, what, msg);
    return tg__error_set(err, TG_EIO, "spool %s: index failed while %s: %s",
                         sp->dir, what, msg);
}

static int sys_fail(tg_spool *sp, int errnum, const char *what, tg_error *err)
{
    return tg__error_set(err, TG_EIO, "spool %s: %s: %s", sp->dir, what,
                         strerror(errnum));
}

/* mkdir -p with mode 0700 for the directories it creates. */
static int make_dirs(const char *dir)
{
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char saved = path[i];
        path[i] = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            return -1;
        path[i] = saved;
    }
    return 0;
}

static int exec_sql(tg_spool *sp, const char *sql, tg_error *err)
{
    int rc = sqlite3_exec(sp->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : db_fail(sp, rc, sql, err);
}

static int prepare(tg_spool *sp, const char *sql, sqlite3_stmt **st,
                   tg_error *err)
{
    int rc = sqlite3_prepare_v2(sp->db, sql, -1, st, NULL);
    return rc == SQLITE_OK ? 0 : db_fail(sp, rc, "preparing a query", err);
}

/* Removes temporary files whose writer died: old enough, and no flock. */
static void clean_stale_tmp(tg_spool *sp)
{
    int fd = dup(sp->tmpfd);
    if (fd < 0)
        return;
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return;
    }
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        struct stat st;
        if (fstatat(sp->tmpfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode) || now - st.st_mtime < STALE_TMP_SECONDS)
            continue;
        int f = openat(sp->tmpfd, e->d_name,
                       O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (f < 0)
            continue;
        if (flock(f, LOCK_EX | LOCK_NB) == 0)
            unlinkat(sp->tmpfd, e->d_name, 0);
        close(f);
    }
    closedir(d);
}

int tg__spool_open(const char *dir, uint64_t max_bytes, unsigned flags,
                   tg_spool **out, tg_error *err)
{
    *out = NULL;
    if (dir == NULL || *dir == '\0')
        return tg__error_set(err, TG_EINVAL, "the spool needs a directory");
    tg_spool *sp = calloc(1, sizeof *sp);
    if (sp == NULL || (sp->dir = strdup(dir)) == NULL) {
        free(sp);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    sp->dirfd = sp->tmpfd = -1;
    sp->max_bytes = max_bytes;
    pthread_mutex_init(&sp->mu, NULL);
    int rc = 0;
    if (!(flags & TG__SPOOL_NO_CREATE) && make_dirs(dir) != 0) {
        rc = sys_fail(sp, errno, "cannot create the directory", err);
        goto fail;
    }
    sp->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sp->dirfd < 0) {
        if (errno == ENOENT && (flags & TG__SPOOL_NO_CREATE)) {
            *out = sp; /* an empty spool: every id is unknown */
            return 0;
        }
        rc = sys_fail(sp, errno, "cannot open the directory", err);
        goto fail;
    }
    if (mkdirat(sp->dirfd, "tmp", 0700) != 0 && errno != EEXIST) {
        rc = sys_fail(sp, errno, "cannot create tmp/", err);
        goto fail;
    }
    sp->tmpfd = openat(sp->dirfd, "tmp",
                       O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (sp->tmpfd < 0) {
        rc = sys_fail(sp, errno, "cannot open tmp/", err);
        goto fail;
    }
    char path[4200];
    if ((size_t)snprintf(path, sizeof path, "%s/index.db", dir) >=
        sizeof path) {
        rc = tg__error_set(err, TG_EINVAL, "spool %s: path too long", dir);
        goto fail;
    }
    /* Created here, private: SQLite gives its -wal and -shm files the
     * database file's permissions. */
    int dbfd = openat(sp->dirfd, "index.db",
                      O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (dbfd < 0) {
        rc = sys_fail(sp, errno, "cannot open index.db", err);
        goto fail;
    }
    close(dbfd);
    int src = sqlite3_open_v2(
        path, &sp->db,
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (src != SQLITE_OK) {
        rc = db_fail(sp, src, "opening index.db", err);
        goto fail;
    }
    sqlite3_busy_timeout(sp->db, 10000);
    if ((rc = exec_sql(sp, "PRAGMA journal_mode=WAL", err)) ||
        (rc = exec_sql(sp, "PRAGMA synchronous=NORMAL", err)) ||
        (rc = exec_sql(sp, schema_sql, err)))
        goto fail;
    clean_stale_tmp(sp);
    if (max_bytes > 0 && (rc = tg__spool_evict(sp, NULL, NULL, err)) != 0)
        goto fail;
    *out = sp;
    return 0;
fail:
    tg__spool_free(sp);
    return rc;
}

void tg__spool_free(tg_spool *sp)
{
    if (sp == NULL)
        return;
    if (sp->db)
        sqlite3_close(sp->db);
    if (sp->tmpfd >= 0)
        close(sp->tmpfd);
    if (sp->dirfd >= 0)
        close(sp->dirfd);
    pthread_mutex_destroy(&sp->mu);
    free(sp->dir);
    free(sp);
}

void tg__spool_meta_cleanup(spool_meta *m)
{
    free(m->preview);
    free(m->cps);
    memset(m, 0, sizeof *m);
}

static char *col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return strdup(t ? (const char *)t : "");
}

/* Reads id's row into m. Returns 1 found, 0 not, or a TG_E* code. Called
 * with sp->mu held. */
static int load_meta(tg_spool *sp, const char *id, spool_meta *m, tg_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(sp,
                     "SELECT sha256, bytes, lines, media_type, preview,"
                     " checkpoints, created_at, last_used, pins, state"
                     " FROM artifacts WHERE id = ?1",
                     &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int s = sqlite3_step(st);
    if (s == SQLITE_DONE) {
        rc = 0;
        goto done;
    }
    if (s != SQLITE_ROW) {
        rc = db_fail(sp, s, "reading the index", err);
        goto done;
    }
    memset(m, 0, sizeof *m);
    snprintf(m->id, sizeof m->id, "%s", id);
    const unsigned char *sha = sqlite3_column_text(st, 0);
    snprintf(m->sha256, sizeof m->sha256, "%s", sha ? (const char *)sha : "");
    m->bytes = (uint64_t)sqlite3_column_int64(st, 1);
    m->lines = (uint64_t)sqlite3_column_int64(st, 2);
    const unsigned char *mt = sqlite3_column_text(st, 3);
    m->binary = mt && strcmp((const char *)mt, SPOOL_MEDIA_BINARY) == 0;
    m->preview = col_dup(st, 4);
    int cpb = sqlite3_column_bytes(st, 5);
    if (cpb > 0) {
        m->ncps = (size_t)cpb / sizeof(uint64_t);
        m->cps = malloc((size_t)cpb);
        if (m->cps)
            memcpy(m->cps, sqlite3_column_blob(st, 5),
                   m->ncps * sizeof(uint64_t));
    }
    m->created_at = sqlite3_column_int64(st, 6);
    m->last_used = sqlite3_column_int64(st, 7);
    m->pins = sqlite3_column_int64(st, 8);
    m->state = sqlite3_column_int(st, 9);
    if (m->preview == NULL || (cpb > 0 && m->cps == NULL)) {
        tg__spool_meta_cleanup(m);
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto done;
    }
    rc = 1;
done:
    sqlite3_finalize(st);
    return rc;
}

tg__spool_state tg__spool_state_of(tg_spool *sp, const char *id)
{
    if (!tg__spool_id_valid(id) || sp->db == NULL)
        return TG_SPOOL_UNKNOWN;
    spool_meta m;
    pthread_mutex_lock(&sp->mu);
    int found = load_meta(sp, id, &m, NULL);
    pthread_mutex_unlock(&sp->mu);
    if (found != 1)
        return TG_SPOOL_UNKNOWN;
    int state = m.state;
    tg__spool_meta_cleanup(&m);
    return state == 1   ? TG_SPOOL_EVICTED
           : state == 2 ? TG_SPOOL_RELEASED
                        : TG_SPOOL_STORED;
}

static int gone(tg_spool *sp, const char *id, int state, tg_error *err)
{
    if (state == 2)
        return tg__error_set(err, TG_ENOTFOUND,
                             "artifact %s was removed from the spool with "
                             "its journal rows; its content is no longer "
                             "available",
                             id);
    return tg__error_set(err, TG_ENOTFOUND,
                         "artifact %s was evicted from the spool (least "
                         "recently used, over spool.max_bytes); its content "
                         "is no longer available",
                         id);
}

/* Marks `id` gone (1 evicted, 2 released). Called with sp->mu held, inside
 * a transaction or on its own. */
static int mark_gone(tg_spool *sp, const char *id, int state, tg_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(sp,
                     "UPDATE artifacts SET state = ?2, pins = 0,"
                     " gone_at = ?3, checkpoints = NULL WHERE id = ?1",
                     &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, state);
    sqlite3_bind_int64(st, 3, tg__now_ms());
    int s = sqlite3_step(st);
    sqlite3_finalize(st);
    return s == SQLITE_DONE ? 0 : db_fail(sp, s, "updating the index", err);
}

int tg__spool_open_artifact(tg_spool *sp, const char *id, spool_meta *m,
                            tg_error *err)
{
    memset(m, 0, sizeof *m);
    if (!tg__spool_id_valid(id))
        return bad_id(id, err);
    if (sp->db == NULL)
        return tg__error_set(err, TG_ENOTFOUND,
                             "unknown artifact %s: the spool %s does not "
                             "exist",
                             id, sp->dir);
    pthread_mutex_lock(&sp->mu);
    int rc = load_meta(sp, id, m, err);
    if (rc == 0)
        rc = tg__error_set(err, TG_ENOTFOUND,
                           "unknown artifact %s: no such artifact in the "
                           "spool %s",
                           id, sp->dir);
    if (rc < 0)
        goto fail;
    if (m->state != 0) {
        rc = gone(sp, id, m->state, err);
        goto fail;
    }
    char rel[TG_SPOOL_ID_LEN + 4];
    rel_path(id, rel);
    int fd = openat(sp->dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT) {
            /* the index outlived the file (a crash mid-eviction, or someone
             * deleted it): it is gone, and the index now says so */
            mark_gone(sp, id, 1, NULL);
            rc = gone(sp, id, 1, err);
        } else {
            rc = sys_fail(sp, e, "cannot open an artifact", err);
        }
        goto fail;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (uint64_t)st.st_size != m->bytes) {
        close(fd);
        rc = tg__error_set(err, TG_EIO,
                           "artifact %s is damaged: its file has %lld bytes, "
                           "the index says %llu",
                           id, (long long)st.st_size,
                           (unsigned long long)m->bytes);
        goto fail;
    }
    if (st.st_nlink != 1) {
        /* Through another name something else could change its bytes
         * (the sandbox keeps tools away from the spool: exec/state.c). */
        close(fd);
        rc = tg__error_set(err, TG_EIO,
                           "artifact %s has %ju names (hard links): its "
                           "bytes may have been changed through another; "
                           "refused",
                           id, (uintmax_t)st.st_nlink);
        goto fail;
    }
    /* Reads count as use for LRU; failing to record it is harmless. */
    sqlite3_stmt *up = NULL;
    if (prepare(sp, "UPDATE artifacts SET last_used = ?2 WHERE id = ?1", &up,
                NULL) == 0) {
        sqlite3_bind_text(up, 1, id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(up, 2, tg__now_ms());
        sqlite3_step(up);
        sqlite3_finalize(up);
    }
    pthread_mutex_unlock(&sp->mu);
    return fd;
fail:
    pthread_mutex_unlock(&sp->mu);
    tg__spool_meta_cleanup(m);
    return rc;
}

/* Opens (creating when missing) the shard directory of id. */
static int shard_dir(tg_spool *sp, const char *id, tg_error *err)
{
    char shard[3] = {id[4], id[5], '\0'};
    if (mkdirat(sp->dirfd, shard, 0700) == 0) {
        /* a new directory entry in the spool: make it durable too */
        fsync(sp->dirfd);
    } else if (errno != EEXIST) {
        return sys_fail(sp, errno, "cannot create a shard directory", err);
    }
    int fd = openat(sp->dirfd, shard,
                    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return sys_fail(sp, errno, "cannot open a shard directory", err);
    return fd;
}

int tg__spool_commit(tg_spool *sp, const spool_meta *m, const char *tmpname,
                     tg_error *err)
{
    int rc, shard = -1;
    bool in_tx = false;
    sqlite3_stmt *st = NULL;
    spool_meta old;
    memset(&old, 0, sizeof old);
    pthread_mutex_lock(&sp->mu);
    if ((rc = exec_sql(sp, "BEGIN IMMEDIATE", err)) != 0)
        goto fail;
    in_tx = true;
    int found = load_meta(sp, m->id, &old, err);
    if (found < 0) {
        rc = found;
        goto fail;
    }
    if (found && strcmp(old.sha256, m->sha256) != 0) {
        rc = tg__error_set(err, TG_EIO,
                           "spool %s: two outputs share the id %s (different "
                           "SHA-256); the new one is not stored",
                           sp->dir, m->id);
        goto fail;
    }
    if ((shard = shard_dir(sp, m->id, err)) < 0) {
        rc = shard;
        goto fail;
    }
    /* Every writer of the spool holds the index's write lock here, so the
     * check and the rename cannot interleave with another commit, eviction
     * or release of the same id, in this process or another. */
    struct stat sst;
    bool have = found && old.state == 0 &&
                fstatat(shard, m->id, &sst, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISREG(sst.st_mode) && (uint64_t)sst.st_size == m->bytes;
    if (have) {
        unlinkat(sp->tmpfd, tmpname, 0); /* same output stored once */
    } else if (renameat(sp->tmpfd, tmpname, shard, m->id) != 0) {
        rc = sys_fail(sp, errno, "cannot move an artifact into place", err);
        goto fail;
    }
    if (fsync(shard) != 0) {
        rc = sys_fail(sp, errno, "cannot sync a shard directory", err);
        goto fail;
    }
    if ((rc = prepare(
             sp,
             "INSERT INTO artifacts(id, sha256, bytes, lines, media_type,"
             " preview, checkpoints, created_at, last_used, pins, state)"
             " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, 0, 0)"
             " ON CONFLICT(id) DO UPDATE SET"
             " pins = CASE WHEN state = 0 THEN pins ELSE 0 END,"
             " created_at = CASE WHEN state = 0 THEN created_at"
             "  ELSE excluded.created_at END,"
             " last_used = excluded.last_used, state = 0, gone_at = NULL,"
             " bytes = excluded.bytes, lines = excluded.lines,"
             " media_type = excluded.media_type, preview = excluded.preview,"
             " checkpoints = excluded.checkpoints",
             &st, err)) != 0)
        goto fail;
    sqlite3_bind_text(st, 1, m->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, m->sha256, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)m->bytes);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)m->lines);
    sqlite3_bind_text(st, 5, m->binary ? SPOOL_MEDIA_BINARY : SPOOL_MEDIA_TEXT,
                      -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, m->preview ? m->preview : "", -1, SQLITE_STATIC);
    if (m->ncps > 0)
        sqlite3_bind_blob(st, 7, m->cps, (int)(m->ncps * sizeof(uint64_t)),
                          SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 7);
    sqlite3_bind_int64(st, 8, tg__now_ms());
    int s = sqlite3_step(st);
    if (s != SQLITE_DONE) {
        rc = db_fail(sp, s, "recording an artifact", err);
        goto fail;
    }
    if ((rc = exec_sql(sp, "COMMIT", err)) != 0)
        goto fail;
    in_tx = false;
    rc = 0;
fail:
    sqlite3_finalize(st);
    if (in_tx)
        sqlite3_exec(sp->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&sp->mu);
    if (shard >= 0)
        close(shard);
    tg__spool_meta_cleanup(&old);
    return rc;
}

int tg__spool_pin(tg_spool *sp, const char *id, tg_error *err)
{
    if (!tg__spool_id_valid(id))
        return bad_id(id, err);
    if (sp->db == NULL)
        return tg__error_set(err, TG_ENOTFOUND, "unknown artifact %s", id);
    sqlite3_stmt *st = NULL;
    pthread_mutex_lock(&sp->mu);
    int rc = prepare(sp,
                     "UPDATE artifacts SET pins = pins + 1"
                     " WHERE id = ?1 AND state = 0",
                     &st, err);
    if (rc == 0) {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        int s = sqlite3_step(st);
        if (s != SQLITE_DONE)
            rc = db_fail(sp, s, "pinning an artifact", err);
        else if (sqlite3_changes(sp->db) == 0)
            rc = tg__error_set(err, TG_ENOTFOUND,
                               "artifact %s is not stored in the spool", id);
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&sp->mu);
    return rc;
}

int tg__spool_release(tg_spool *sp, const char *id, tg_error *err)
{
    if (!tg__spool_id_valid(id))
        return bad_id(id, err);
    if (sp->db == NULL)
        return tg__error_set(err, TG_ENOTFOUND, "unknown artifact %s", id);
    spool_meta m;
    memset(&m, 0, sizeof m);
    bool in_tx = false;
    pthread_mutex_lock(&sp->mu);
    int rc = exec_sql(sp, "BEGIN IMMEDIATE", err);
    if (rc)
        goto done;
    in_tx = true;
    int found = load_meta(sp, id, &m, err);
    if (found <= 0 || m.state != 0) {
        rc = found < 0 ? found
                       : tg__error_set(err, TG_ENOTFOUND,
                                       "artifact %s is not stored in the "
                                       "spool",
                                       id);
        goto done;
    }
    if (m.pins > 1) {
        sqlite3_stmt *st = NULL;
        if ((rc = prepare(sp,
                          "UPDATE artifacts SET pins = pins - 1 WHERE id = ?1",
                          &st, err)) != 0)
            goto done;
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        int s = sqlite3_step(st);
        sqlite3_finalize(st);
        if (s != SQLITE_DONE) {
            rc = db_fail(sp, s, "unpinning an artifact", err);
            goto done;
        }
    } else {
        char rel[TG_SPOOL_ID_LEN + 4];
        rel_path(id, rel);
        if (unlinkat(sp->dirfd, rel, 0) != 0 && errno != ENOENT) {
            rc = sys_fail(sp, errno, "cannot remove an artifact", err);
            goto done;
        }
        if ((rc = mark_gone(sp, id, 2, err)) != 0)
            goto done;
    }
    rc = exec_sql(sp, "COMMIT", err);
    in_tx = rc != 0;
done:
    if (in_tx)
        sqlite3_exec(sp->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&sp->mu);
    tg__spool_meta_cleanup(&m);
    return rc;
}

static int64_t stored_bytes(tg_spool *sp, tg_error *err, int *rc)
{
    sqlite3_stmt *st = NULL;
    int64_t total = 0;
    if ((*rc = prepare(sp,
                       "SELECT coalesce(sum(bytes), 0) FROM artifacts"
                       " WHERE state = 0",
                       &st, err)) != 0)
        return 0;
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW)
        total = sqlite3_column_int64(st, 0);
    else
        *rc = db_fail(sp, s, "summing the spool", err);
    sqlite3_finalize(st);
    return total;
}

int tg__spool_evict(tg_spool *sp, const char *keep, size_t *evicted,
                    tg_error *err)
{
    if (evicted)
        *evicted = 0;
    if (sp->max_bytes == 0 || sp->db == NULL)
        return 0;
    char(*victims)[TG_SPOOL_ID_LEN + 1] = NULL;
    size_t nv = 0, cap = 0;
    bool in_tx = false;
    sqlite3_stmt *st = NULL;
    pthread_mutex_lock(&sp->mu);
    int rc = exec_sql(sp, "BEGIN IMMEDIATE", err);
    if (rc)
        goto done;
    in_tx = true;
    int64_t total = stored_bytes(sp, err, &rc);
    if (rc || (uint64_t)total <= sp->max_bytes)
        goto commit;
    /* The candidates first, then the removals: no writes while the
     * SELECT is being stepped. */
    if ((rc = prepare(sp,
                      "SELECT id, bytes FROM artifacts WHERE state = 0 AND"
                      " pins = 0 AND id != ?1"
                      " ORDER BY last_used, created_at, id",
                      &st, err)) != 0)
        goto done;
    sqlite3_bind_text(st, 1, keep ? keep : "", -1, SQLITE_STATIC);
    int s;
    while ((uint64_t)total > sp->max_bytes &&
           (s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(st, 0);
        if (!tg__spool_id_valid(id))
            continue;
        if (nv == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            void *grown = realloc(victims, ncap * sizeof *victims);
            if (grown == NULL) {
                rc = tg__error_set(err, TG_ENOMEM, "out of memory");
                goto done;
            }
            victims = grown;
            cap = ncap;
        }
        memcpy(victims[nv++], id, TG_SPOOL_ID_LEN + 1);
        total -= sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    st = NULL;
    for (size_t i = 0; i < nv; i++) {
        char rel[TG_SPOOL_ID_LEN + 4];
        rel_path(victims[i], rel);
        if (unlinkat(sp->dirfd, rel, 0) != 0 && errno != ENOENT) {
            rc = sys_fail(sp, errno, "cannot remove an evicted artifact", err);
            goto done;
        }
        if ((rc = mark_gone(sp, victims[i], 1, err)) != 0)
            goto done;
    }
    if (nv > 0) {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "DELETE FROM artifacts WHERE id IN (SELECT id FROM artifacts"
                 " WHERE state != 0 ORDER BY gone_at DESC LIMIT -1 OFFSET %d)",
                 MAX_TOMBSTONES);
        if ((rc = exec_sql(sp, sql, err)) != 0)
            goto done;
    }
    if (evicted)
        *evicted = nv;
commit:
    if (rc == 0) {
        rc = exec_sql(sp, "COMMIT", err);
        in_tx = rc != 0;
    }
done:
    sqlite3_finalize(st);
    if (in_tx)
        sqlite3_exec(sp->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&sp->mu);
    free(victims);
    return rc;
}

static json_t *time_json(int64_t ms) /* new ref */
{
    char t[TG_TIME_MAX];
    tg__time_format(ms, t);
    return json_string(t);
}

json_t *tg__spool_meta_json(const spool_meta *m, bool with_times)
{
    json_t *o =
        json_pack("{s:s, s:I, s:I, s:s, s:s, s:s}", "id", m->id, "bytes",
                  (json_int_t)m->bytes, "lines", (json_int_t)m->lines, "sha256",
                  m->sha256, "media_type",
                  m->binary ? SPOOL_MEDIA_BINARY : SPOOL_MEDIA_TEXT, "preview",
                  m->preview ? m->preview : ""); /* new ref */
    if (o != NULL && with_times &&
        (json_object_set_new(o, "created_at", time_json(m->created_at)) ||
         json_object_set_new(o, "last_used_at", time_json(m->last_used)) ||
         json_object_set_new(o, "pins", json_integer(m->pins)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int tg__spool_list(tg_spool *sp, json_t **out, tg_error *err)
{
    json_t *arr = json_array(); /* new ref */
    *out = NULL;
    if (arr == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    if (sp->db == NULL) {
        *out = arr;
        return 0;
    }
    static const char *const states[] = {"stored", "evicted", "released"};
    sqlite3_stmt *st = NULL;
    pthread_mutex_lock(&sp->mu);
    int rc = prepare(sp,
                     "SELECT id, bytes, lines, sha256, media_type, created_at,"
                     " last_used, pins, state FROM artifacts"
                     " ORDER BY created_at DESC, id",
                     &st, err);
    int s = SQLITE_DONE;
    while (rc == 0 && (s = sqlite3_step(st)) == SQLITE_ROW) {
        int state = sqlite3_column_int(st, 8);
        json_t *row = json_pack(
            "{s:s, s:I, s:I, s:s, s:s, s:o, s:o, s:I, s:s}", "id",
            (const char *)sqlite3_column_text(st, 0), "bytes",
            (json_int_t)sqlite3_column_int64(st, 1), "lines",
            (json_int_t)sqlite3_column_int64(st, 2), "sha256",
            (const char *)sqlite3_column_text(st, 3), "media_type",
            (const char *)sqlite3_column_text(st, 4), "created_at",
            time_json(sqlite3_column_int64(st, 5)), "last_used_at",
            time_json(sqlite3_column_int64(st, 6)), "pins",
            (json_int_t)sqlite3_column_int64(st, 7), "state",
            states[state >= 0 && state <= 2 ? state : 1]); /* new ref */
        if (row == NULL || json_array_append_new(arr, row) != 0)
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    if (rc == 0 && s != SQLITE_DONE)
        rc = db_fail(sp, s, "listing artifacts", err);
    sqlite3_finalize(st);
    pthread_mutex_unlock(&sp->mu);
    if (rc) {
        json_decref(arr);
        return rc;
    }
    *out = arr;
    return 0;
}

int tg__spool_stat(tg_spool *sp, const char *id, json_t **out, tg_error *err)
{
    spool_meta m;
    *out = NULL;
    int fd = tg__spool_open_artifact(sp, id, &m, err);
    if (fd < 0)
        return fd;
    close(fd);
    json_t *o = tg__spool_meta_json(&m, true); /* new ref */
    tg__spool_meta_cleanup(&m);
    if (o == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    *out = o;
    return 0;
}
