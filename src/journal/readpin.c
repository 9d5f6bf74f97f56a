/* SPDX-License-Identifier: MIT */
/*
 * readpin.c - shared locks on the WAL's read slots, held between the
 * writer's transactions, so that a transaction's read lock costs no system
 * call.
 *
 * Every transaction in WAL mode starts by taking a read slot of the
 * wal-index (the -shm file; SQLite's WAL format: lock 0 is the writer's,
 * 1 the checkpointer's, 2 recovery's, 3 the read slot of "no WAL frames",
 * 4..7 the read slots with a mark, the WAL frame the reader sees up to).
 * A writer's commit moves the WAL's end past every mark, so its next
 * transaction raises a mark first: an exclusive lock on a slot, its
 * release, a shared lock, and that shared lock's release at the end; with
 * the write lock and its release, six fcntl(2) calls a transaction, each
 * 2-5 us on the virtual machines toolgate runs on: the largest part of
 * what a call that comes alone costs the journal (bench/RESULTS.md).
 *
 * SQLite's unix VFS keeps the locks of one process's connections to one
 * file together, and asks the kernel only when the process's lock changes:
 * a shared lock that another connection of the process already holds costs
 * nothing, and an exclusive one that another holds shared fails at once,
 * without a system call. So a pin, a connection that holds a shared lock
 * on slots 4..7 and runs nothing, makes the writer's transactions take the
 * best mark there is without raising one, and its shared lock, and release
 * it, in memory: two fcntl calls a transaction (the write lock) instead of
 * six. The pin is, for SQLite, a reader that reads nothing, which any
 * process may have, so nothing it does can be wrong; what it holds back is
 * only what a reader holds back, and that is what is managed here:
 *
 * - A checkpoint copies WAL frames only up to the lowest mark of a held
 *   slot, after trying to raise the marks. So when a connection of this
 *   process takes the checkpoint or recovery lock, the pin lets go first,
 *   and takes the slots again when that connection has raised the marks
 *   (it takes slot 3 to copy) or lets go of its lock; if that checkpoint
 *   then waits for every reader to leave (RESTART, TRUNCATE), the pin lets
 *   go again.
 * - SQLite starts the WAL over (writes from its start) only in a write
 *   transaction that began when every frame was copied, which reads with
 *   slot 3, and only if it gets slots 4..7 exclusively: when a connection
 *   takes slot 3 shared, the pin lets go.
 * - It takes the slots again when a write transaction ends (the write lock
 *   is let go) and no checkpoint of the process runs.
 * - Other processes: their readers and writers read as they did (they
 *   find the slots held shared, as with any reader, and share one); their
 *   checkpoints stop at this process's marks while it holds the pin, and
 *   that holds back nothing for long while it writes (its own checkpointer
 *   copies everything, raising the marks); once it stops writing,
 *   tg__readpin_idle (the checkpointer's timer) lets the slots go.
 *
 * A process that dies lets go of its locks with it (the kernel drops them).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "readpin.h"
#include "walbuf.h"

#define LOCK_CKPT 1    /* the checkpointer's lock */
#define LOCK_RECOVER 2 /* recovery's */
#define LOCK_READ0 3   /* the read slot of "no WAL frames" */
#define LOCK_READ1 4   /* the first read slot with a mark */
#define LOCK_END SQLITE_SHM_NLOCK

struct tg__readpin {
    sqlite3_file *real; /* the pin's file in the default VFS */
    char *name;         /* the database file's name */
    int held;           /* slots LOCK_READ1.. are held */
    /* locks of the checkpoint or recovery lock held by a connection of
     * this process (`ckpt_by`) */
    int ckpt;
    const void *ckpt_by;
    tg__readpin *next;
};

static pthread_mutex_t pin_mu = PTHREAD_MUTEX_INITIALIZER;
static tg__readpin *pins; /* under pin_mu */
static atomic_int npins;  /* pins != NULL: the hooks' fast path */

static int covers(int offset, int n, int lock)
{
    return offset <= lock && lock < offset + n;
}

static int covers_slots(int offset, int n)
{
    return offset + n > LOCK_READ1;
}

/* Under pin_mu. */
static void let_go(tg__readpin *p)
{
    if (!p->held)
        return;
    for (int s = LOCK_READ1; s < LOCK_END; s++)
        p->real->pMethods->xShmLock(p->real, s, 1,
                                    SQLITE_SHM_UNLOCK | SQLITE_SHM_SHARED);
    p->held = 0;
}

/* Under pin_mu. A slot held exclusively by a connection of this process
 * (one raising its mark, or starting the WAL over) makes it give up: the
 * next chance comes at the end of a write transaction. */
static void take(tg__readpin *p)
{
    if (p->held || p->ckpt > 0)
        return;
    for (int s = LOCK_READ1; s < LOCK_END; s++)
        if (p->real->pMethods->xShmLock(p->real, s, 1,
                                        SQLITE_SHM_LOCK | SQLITE_SHM_SHARED) !=
            SQLITE_OK) {
            while (--s >= LOCK_READ1)
                p->real->pMethods->xShmLock(
                    p->real, s, 1, SQLITE_SHM_UNLOCK | SQLITE_SHM_SHARED);
            return;
        }
    p->held = 1;
}

int tg__readpin_open(sqlite3 *pin, tg__readpin **out)
{
    sqlite3_file *top = NULL;
    const char *name = NULL;
    *out = NULL;
    if (sqlite3_file_control(pin, "main", SQLITE_FCNTL_FILE_POINTER, &top) !=
            SQLITE_OK ||
        top == NULL)
        return TG_EINVAL;
    sqlite3_file *real = tg__walbuf_real(top, &name);
    if (real == NULL || name == NULL || real->pMethods == NULL ||
        real->pMethods->iVersion < 2)
        return TG_EINVAL;
    tg__readpin *p = calloc(1, sizeof *p);
    if (p == NULL || (p->name = strdup(name)) == NULL) {
        free(p);
        return TG_ENOMEM;
    }
    p->real = real;
    pthread_mutex_lock(&pin_mu);
    take(p);
    p->next = pins;
    pins = p;
    atomic_store(&npins, 1);
    pthread_mutex_unlock(&pin_mu);
    *out = p;
    return 0;
}

void tg__readpin_idle(tg__readpin *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&pin_mu);
    let_go(p);
    pthread_mutex_unlock(&pin_mu);
}

int tg__readpin_held(tg__readpin *p)
{
    if (p == NULL)
        return 0;
    pthread_mutex_lock(&pin_mu);
    int held = p->held;
    pthread_mutex_unlock(&pin_mu);
    return held;
}

void tg__readpin_close(tg__readpin *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&pin_mu);
    let_go(p);
    for (tg__readpin **q = &pins; *q != NULL; q = &(*q)->next)
        if (*q == p) {
            *q = p->next;
            break;
        }
    atomic_store(&npins, pins != NULL);
    pthread_mutex_unlock(&pin_mu);
    free(p->name);
    free(p);
}

void tg__readpin_before(const char *name, const void *file, int offset, int n,
                        int flags)
{
    if (!atomic_load_explicit(&npins, memory_order_relaxed) || name == NULL)
        return;
    int lock = (flags & SQLITE_SHM_LOCK) != 0;
    int excl = (flags & SQLITE_SHM_EXCLUSIVE) != 0;
    if (!lock)
        return;
    pthread_mutex_lock(&pin_mu);
    for (tg__readpin *p = pins; p != NULL; p = p->next) {
        if (!p->held || strcmp(p->name, name) != 0)
            continue;
        if ((excl && (covers(offset, n, LOCK_CKPT) ||
                      covers(offset, n, LOCK_RECOVER))) ||
            (!excl && offset == LOCK_READ0) ||
            (excl && p->ckpt > 0 && p->ckpt_by == file &&
             covers_slots(offset, n)))
            let_go(p);
    }
    pthread_mutex_unlock(&pin_mu);
}

void tg__readpin_after(const char *name, const void *file, int offset, int n,
                       int flags, int rc)
{
    if (!atomic_load_explicit(&npins, memory_order_relaxed) || name == NULL)
        return;
    int lock = (flags & SQLITE_SHM_LOCK) != 0;
    int excl = (flags & SQLITE_SHM_EXCLUSIVE) != 0;
    int ckpt_lock =
        covers(offset, n, LOCK_CKPT) || covers(offset, n, LOCK_RECOVER);
    /* The cheap cases first: a shared lock or its release touches no
     * pin. */
    if (!excl)
        return;
    pthread_mutex_lock(&pin_mu);
    for (tg__readpin *p = pins; p != NULL; p = p->next) {
        if (strcmp(p->name, name) != 0)
            continue;
        if (lock && ckpt_lock && rc == SQLITE_OK) {
            if (p->ckpt == 0 || p->ckpt_by == file) {
                p->ckpt++;
                p->ckpt_by = file;
            }
        } else if (!lock && ckpt_lock && p->ckpt > 0 && p->ckpt_by == file) {
            if (--p->ckpt == 0) {
                p->ckpt_by = NULL;
                take(p);
            }
        } else if (lock && offset == LOCK_READ0 && rc == SQLITE_OK &&
                   p->ckpt > 0 && p->ckpt_by == file) {
            /* the checkpoint raised the marks and copies now */
            int ckpt = p->ckpt;
            p->ckpt = 0;
            take(p);
            p->ckpt = ckpt;
        } else if (!lock && offset == 0 && p->ckpt == 0) {
            take(p); /* a write transaction ended */
        }
    }
    pthread_mutex_unlock(&pin_mu);
}
