/* SPDX-License-Identifier: MIT */
/*
 * walbuf.c - a SQLite VFS over the default one that writes a transaction's
 * WAL frames with one pwrite instead of two per page.
 *
 * SQLite writes each frame of a commit as two writes, its 24-byte header and
 * its page: a call that arrives alone costs two transactions of 3 and 7
 * pages, 20 pwrites, and a system call costs 2-5 us on the virtual machines
 * toolgate runs on, which made most of the journal's time for such a call.
 * The frames of a transaction are contiguous in the WAL, so this VFS
 * gathers the writes to a WAL file that continue the last one in a buffer
 * and writes them as one, before anything can read them:
 *
 * - when the page of a commit frame (a header whose "database size" field
 *   is not 0) has been added: that write returns the error of the flush, so
 *   a commit that cannot be written fails as it did;
 * - in xShmBarrier of the connection's database file, which SQLite calls
 *   before it publishes new frames in the wal-index for other connections
 *   (so whatever a reader can find is in the file, whatever went before);
 * - before any other operation on the WAL file (read, sync, truncate, size,
 *   locks, file controls, close), and when a write does not continue the
 *   buffer or would pass its size.
 *
 * Nothing about durability changes: the commit's bytes reach the file (the
 * OS's page cache) before the commit returns, as before, and syncs see them.
 * The WAL file finds its database file by the name SQLite passes it (the
 * same string; sqlite3_filename_database), among the database files this
 * VFS has open; a WAL file without one is written through unbuffered.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readpin.h"
#include "walbuf.h"

#define WB_FRAME_HDR 24 /* SQLite's WAL_FRAME_HDRSIZE */
/* Most bytes gathered before a write: the unix VFS writes at most 128 KiB
 * a call (it masks a write's size with 0x1ffff, so a bigger one fails as a
 * short write, "disk full"); 29 frames of 4 KiB pages. */
#define WB_CAP (120 * 1024)

typedef struct wb_file wb_file;
struct wb_file {
    sqlite3_file base;  /* methods: wb_io */
    sqlite3_file *real; /* the default VFS's file, right after this one */
    int is_db;          /* a main database file (in the registry) */
    const char *name;   /* the name SQLite opened it with (borrowed) */
    wb_file *wal;       /* is_db: its open WAL file, or NULL */
    wb_file *db;        /* a WAL file: its database file, or NULL */
    wb_file *rnext;     /* is_db: the registry */
    /* a WAL file with a database file: the gathered writes */
    unsigned char *buf;
    size_t len;
    sqlite3_int64 off; /* where buf[0] goes */
    int commit_next;   /* the last write was a commit frame's header */
    int failed;        /* a flush in xShmBarrier failed: its code */
};

/* One registered VFS per default VFS it was asked over (a test makes a
 * faulty VFS the default: the journal's files go through it too). */
#define WB_MAX_VFS 4
static sqlite3_vfs wb_vfs[WB_MAX_VFS];
static char wb_names[WB_MAX_VFS][32];
static int wb_nvfs; /* under vfs_mu */
static pthread_mutex_t vfs_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static wb_file *reg_head; /* open main database files (under reg_mu) */

static int flush(wb_file *f)
{
    if (f->failed)
        return f->failed;
    if (f->len == 0)
        return SQLITE_OK;
    int rc = f->real->pMethods->xWrite(f->real, f->buf, (int)f->len, f->off);
    f->len = 0;
    f->commit_next = 0;
    return rc;
}

/* The gathered writes of f go out first (f a WAL file), or its error. */
static int settle(wb_file *f)
{
    return f->buf != NULL ? flush(f) : SQLITE_OK;
}

static int wb_close(sqlite3_file *file)
{
    wb_file *f = (wb_file *)file;
    int frc = settle(f);
    pthread_mutex_lock(&reg_mu);
    if (f->is_db) {
        for (wb_file **p = &reg_head; *p != NULL; p = &(*p)->rnext)
            if (*p == f) {
                *p = f->rnext;
                break;
            }
        if (f->wal != NULL)
            f->wal->db = NULL;
    } else if (f->db != NULL) {
        f->db->wal = NULL;
    }
    pthread_mutex_unlock(&reg_mu);
    int rc = f->real->pMethods->xClose(f->real);
    free(f->buf);
    f->buf = NULL;
    return frc != SQLITE_OK ? frc : rc;
}

static int wb_read(sqlite3_file *file, void *p, int amt, sqlite3_int64 off)
{
    wb_file *f = (wb_file *)file;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc
                           : f->real->pMethods->xRead(f->real, p, amt, off);
}

static int wb_write(sqlite3_file *file, const void *p, int amt,
                    sqlite3_int64 off)
{
    wb_file *f = (wb_file *)file;
    int rc;
    if (f->buf == NULL || f->db == NULL)
        return f->real->pMethods->xWrite(f->real, p, amt, off);
    if (f->failed)
        return f->failed;
    int commit = f->commit_next;
    bool follows = f->len > 0 && off == f->off + (sqlite3_int64)f->len;
    if ((f->len > 0 && !follows) || f->len + (size_t)amt > WB_CAP) {
        if ((rc = flush(f)) != SQLITE_OK)
            return rc;
    }
    if ((size_t)amt > WB_CAP)
        return f->real->pMethods->xWrite(f->real, p, amt, off);
    if (f->len == 0)
        f->off = off;
    memcpy(f->buf + f->len, p, (size_t)amt);
    f->len += (size_t)amt;
    if (commit)
        return flush(f); /* a commit frame's page: the transaction is in */
    if (amt == WB_FRAME_HDR) {
        const unsigned char *h = p;
        /* bytes 4-7: the database's size after a commit, 0 otherwise */
        f->commit_next = (h[4] | h[5] | h[6] | h[7]) != 0;
    }
    return SQLITE_OK;
}

static int wb_truncate(sqlite3_file *file, sqlite3_int64 size)
{
    wb_file *f = (wb_file *)file;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xTruncate(f->real, size);
}

static int wb_sync(sqlite3_file *file, int flags)
{
    wb_file *f = (wb_file *)file;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xSync(f->real, flags);
}

static int wb_file_size(sqlite3_file *file, sqlite3_int64 *size)
{
    wb_file *f = (wb_file *)file;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xFileSize(f->real, size);
}

static int wb_lock(sqlite3_file *file, int lock)
{
    wb_file *f = (wb_file *)file;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xLock(f->real, lock);
}

static int wb_unlock(sqlite3_file *file, int lock)
{
    wb_file *f = (wb_file *)file;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xUnlock(f->real, lock);
}

static int wb_check_reserved(sqlite3_file *file, int *out)
{
    wb_file *f = (wb_file *)file;
    return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int wb_file_control(sqlite3_file *file, int op, void *arg)
{
    wb_file *f = (wb_file *)file;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc
                           : f->real->pMethods->xFileControl(f->real, op, arg);
}

static int wb_sector_size(sqlite3_file *file)
{
    wb_file *f = (wb_file *)file;
    return f->real->pMethods->xSectorSize(f->real);
}

static int wb_device(sqlite3_file *file)
{
    wb_file *f = (wb_file *)file;
    return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static int wb_shm_map(sqlite3_file *file, int pg, int pgsz, int extend,
                      void volatile **pp)
{
    wb_file *f = (wb_file *)file;
    return f->real->pMethods->xShmMap(f->real, pg, pgsz, extend, pp);
}

/* The read pins (readpin.c) follow the locks of the process's
 * connections. */
static int wb_shm_lock(sqlite3_file *file, int offset, int n, int flags)
{
    wb_file *f = (wb_file *)file;
    tg__readpin_before(f->name, f, offset, n, flags);
    int rc = f->real->pMethods->xShmLock(f->real, offset, n, flags);
    tg__readpin_after(f->name, f, offset, n, flags, rc);
    return rc;
}

/* SQLite calls this before it publishes frames to other connections: the
 * frames this connection wrote are in the file first. */
static void wb_shm_barrier(sqlite3_file *file)
{
    wb_file *f = (wb_file *)file;
    wb_file *wal = f->wal;
    if (wal != NULL && wal->len > 0 && !wal->failed) {
        int rc = flush(wal);
        if (rc != SQLITE_OK)
            wal->failed = rc; /* every later operation on it fails */
    }
    f->real->pMethods->xShmBarrier(f->real);
}

static int wb_shm_unmap(sqlite3_file *file, int del)
{
    wb_file *f = (wb_file *)file;
    return f->real->pMethods->xShmUnmap(f->real, del);
}

static int wb_fetch(sqlite3_file *file, sqlite3_int64 off, int amt, void **pp)
{
    wb_file *f = (wb_file *)file;
    int rc = settle(f);
    *pp = NULL; /* SQLite reads with xRead then */
    if (rc != SQLITE_OK || f->real->pMethods->iVersion < 3)
        return rc;
    return f->real->pMethods->xFetch(f->real, off, amt, pp);
}

static int wb_unfetch(sqlite3_file *file, sqlite3_int64 off, void *p)
{
    wb_file *f = (wb_file *)file;
    if (f->real->pMethods->iVersion < 3)
        return SQLITE_OK;
    return f->real->pMethods->xUnfetch(f->real, off, p);
}

static const sqlite3_io_methods wb_io = {
    3,
    wb_close,
    wb_read,
    wb_write,
    wb_truncate,
    wb_sync,
    wb_file_size,
    wb_lock,
    wb_unlock,
    wb_check_reserved,
    wb_file_control,
    wb_sector_size,
    wb_device,
    wb_shm_map,
    wb_shm_lock,
    wb_shm_barrier,
    wb_shm_unmap,
    wb_fetch,
    wb_unfetch,
};

/* The real file lies after ours, aligned for anything. */
static size_t real_offset(void)
{
    size_t a = sizeof(max_align_t);
    return (sizeof(wb_file) + a - 1) / a * a;
}

/* The VFS a wrapper forwards to. */
static sqlite3_vfs *real_of(sqlite3_vfs *v)
{
    return v->pAppData;
}

static int wb_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file,
                   int flags, int *out_flags)
{
    sqlite3_vfs *real_vfs = real_of(vfs);
    wb_file *f = (wb_file *)file;
    memset(f, 0, sizeof *f);
    f->real = (sqlite3_file *)((char *)file + real_offset());
    int rc = real_vfs->xOpen(real_vfs, name, f->real, flags, out_flags);
    if (rc != SQLITE_OK || f->real->pMethods == NULL) {
        file->pMethods = NULL; /* nothing to close */
        return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
    }
    f->name = name;
    /* Unbuffered without memory: correct, only slower. */
    if ((flags & SQLITE_OPEN_WAL) && name != NULL)
        f->buf = malloc(WB_CAP);
    pthread_mutex_lock(&reg_mu);
    if ((flags & SQLITE_OPEN_MAIN_DB) && name != NULL) {
        f->is_db = 1;
        f->rnext = reg_head;
        reg_head = f;
    } else if (f->buf != NULL) {
        const char *db = sqlite3_filename_database(name);
        for (wb_file *d = reg_head; d != NULL; d = d->rnext)
            if (d->name == db && d->wal == NULL) {
                d->wal = f;
                f->db = d;
                break;
            }
    }
    pthread_mutex_unlock(&reg_mu);
    file->pMethods = &wb_io;
    return SQLITE_OK;
}

/* Everything else is the default VFS's. */
static int wb_delete(sqlite3_vfs *v, const char *name, int sync)
{
    return real_of(v)->xDelete(real_of(v), name, sync);
}

static int wb_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
    return real_of(v)->xAccess(real_of(v), name, flags, out);
}

static int wb_full_pathname(sqlite3_vfs *v, const char *name, int n, char *out)
{
    return real_of(v)->xFullPathname(real_of(v), name, n, out);
}

static void *wb_dlopen(sqlite3_vfs *v, const char *name)
{
    return real_of(v)->xDlOpen(real_of(v), name);
}

static void wb_dlerror(sqlite3_vfs *v, int n, char *out)
{
    real_of(v)->xDlError(real_of(v), n, out);
}

static void (*wb_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
    return real_of(v)->xDlSym(real_of(v), h, sym);
}

static void wb_dlclose(sqlite3_vfs *v, void *h)
{
    real_of(v)->xDlClose(real_of(v), h);
}

static int wb_randomness(sqlite3_vfs *v, int n, char *out)
{
    return real_of(v)->xRandomness(real_of(v), n, out);
}

static int wb_sleep(sqlite3_vfs *v, int us)
{
    return real_of(v)->xSleep(real_of(v), us);
}

static int wb_current_time(sqlite3_vfs *v, double *out)
{
    return real_of(v)->xCurrentTime(real_of(v), out);
}

static int wb_last_error(sqlite3_vfs *v, int n, char *out)
{
    return real_of(v)->xGetLastError(real_of(v), n, out);
}

static int wb_current_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
    return real_of(v)->xCurrentTimeInt64(real_of(v), out);
}

/* Registers a wrapper over real in slot k; false when SQLite refuses. */
static bool wb_register(int k, sqlite3_vfs *real)
{
    snprintf(wb_names[k], sizeof wb_names[k], "toolgate-walbuf-%d", k);
    wb_vfs[k] = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)(real_offset() + (size_t)real->szOsFile),
        .mxPathname = real->mxPathname,
        .zName = wb_names[k],
        .pAppData = real,
        .xOpen = wb_open,
        .xDelete = wb_delete,
        .xAccess = wb_access,
        .xFullPathname = wb_full_pathname,
        .xDlOpen = wb_dlopen,
        .xDlError = wb_dlerror,
        .xDlSym = wb_dlsym,
        .xDlClose = wb_dlclose,
        .xRandomness = wb_randomness,
        .xSleep = wb_sleep,
        .xCurrentTime = wb_current_time,
        .xGetLastError = wb_last_error,
        .xCurrentTimeInt64 = wb_current_time64,
    };
    return sqlite3_vfs_register(&wb_vfs[k], 0) == SQLITE_OK;
}

sqlite3_file *tg__walbuf_real(sqlite3_file *file, const char **name)
{
    if (file == NULL || file->pMethods != &wb_io)
        return NULL;
    wb_file *f = (wb_file *)file;
    *name = f->name;
    return f->real;
}

const char *tg__walbuf_vfs(void)
{
    const char *name = NULL;
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    /* Version 2 or later (every unix VFS is): the wrapper forwards
     * xCurrentTimeInt64. */
    if (real == NULL || real->iVersion < 2)
        return NULL;
    pthread_mutex_lock(&vfs_mu);
    for (int k = 0; k < wb_nvfs && name == NULL; k++)
        if (wb_vfs[k].pAppData == real)
            name = wb_names[k];
    if (name == NULL && wb_nvfs < WB_MAX_VFS && wb_register(wb_nvfs, real))
        name = wb_names[wb_nvfs++];
    pthread_mutex_unlock(&vfs_mu);
    return name;
}
