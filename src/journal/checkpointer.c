/* SPDX-License-Identifier: MIT */
/*
 * checkpointer.c - the journal's WAL checkpoints on a thread of their own.
 *
 * SQLite checkpoints a WAL database from inside the commit that takes the
 * WAL past 1,000 pages: that commit copies the pages into the database
 * file and waits for fdatasync, milliseconds on an ordinary disk, and the
 * loop thread that committed serves nobody meanwhile (a server's p99 was
 * that fdatasync). Here the commit only notes the WAL's size (a WAL hook,
 * which replaces SQLite's automatic checkpoint); past CKPT_PAGES it wakes
 * a thread that runs a PASSIVE checkpoint on a connection of its own,
 * beside the writer: WAL mode lets one connection checkpoint while another
 * commits. Nothing about durability changes: a commit is exactly as durable
 * as before, and the checkpoint copies only what was committed.
 *
 * A commit asks once: while a checkpoint is asked for or running, commits
 * wake nobody (a wake-up per commit cost the writer a futex call and a
 * context switch, ~10% of a lone call's journal time). The thread's
 * connection reads the database before its first checkpoint: SQLite opens
 * a connection's WAL only with its first read, and a checkpoint on a
 * connection that has none does nothing and says SQLITE_OK (the WAL then
 * grew to its bound, every commit writing new pages of the file).
 * Once a checkpoint has copied the whole WAL, the writer's next
 * transaction starts it over from its beginning.
 *
 * The thread starts with the first checkpoint it is asked for, or when it
 * is given a read pin to watch (readpin.c), so a journal opened for a query
 * never has one. With a pin it wakes every PIN_IDLE_MS, and lets the pin's
 * slots go when no commit came since it last woke. Should it fall behind (a
 * slow disk and a fast writer), a commit that leaves more than hard_pages
 * (CKPT_HARD_BYTES of WAL) in the WAL checkpoints itself, as SQLite would
 * have: the WAL stays bounded whatever happens.
 *
 * Under a writer that never pauses that bound is reached however fast the
 * thread is: a checkpoint copies the WAL as it was when it began, so the
 * thread always trails by what was committed meanwhile, and SQLite starts
 * the WAL over only in a transaction that begins with every frame copied.
 * Only the writer can give it that moment, by copying the rest itself
 * (the thread leaves a short one) and so waiting for two fdatasync: a
 * stall of the serving thread, 3-111 ms on this project's VM whether the
 * rest is short or long (bench/RESULTS.md: the device's flush, not the
 * copy). So the bound is what sets how often the writer stalls under
 * continuous load: 64 MiB of WAL, one stall per ~60,000 calls journaled
 * 64 at a time (1 KiB pages), where 20,000 pages gave one per ~18,000.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "checkpointer.h"
#include "walbuf.h"

#define CKPT_PAGES 1000            /* SQLite's own automatic checkpoint size */
#define PIN_IDLE_MS 200            /* see tg__checkpointer_watch_pin */
#define CKPT_HARD_BYTES (64 << 20) /* the WAL's bound (see the top) */
#define CKPT_HARD_MIN 20000 /* pages: the bound for pages of 4 KiB and more */

struct tg__checkpointer {
    sqlite3 *db;  /* the writer's connection (borrowed) */
    char *path;   /* its database file */
    sqlite3 *own; /* the thread's connection */
    pthread_t thread;
    bool started; /* the thread runs */
    bool failed;  /* it could not start: commits checkpoint themselves */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool wanted;          /* a checkpoint was asked for (under mu) */
    bool stopping;        /* under mu */
    unsigned long done;   /* checkpoints that copied pages (under mu) */
    bool opened;          /* own has read the database: its WAL is open */
    atomic_bool asked;    /* asked and not ended: commits ask no more */
    tg__readpin *pin;     /* watched, or NULL (set before the thread runs) */
    atomic_ulong commits; /* commits so far (the pin's idle timer) */
    int last_pages;       /* the WAL's pages at the last commit (writer) */
    int ask_at;           /* the WAL's pages at which to ask next (writer) */
    int hard_pages;       /* the writer checkpoints itself past this */
};

/* One PASSIVE checkpoint on the thread's connection; true when it copied
 * pages into the database. */
static bool checkpoint(tg__checkpointer *c)
{
    int log = 0, copied = 0;
    /* Any read opens the connection's WAL (see the top of the file). */
    if (!c->opened)
        c->opened = sqlite3_exec(c->own, "SELECT 1 FROM sqlite_schema LIMIT 1",
                                 NULL, NULL, NULL) == SQLITE_OK;
    /* SQLITE_BUSY (another checkpoint runs, a reader holds the end of
     * the WAL) is normal: the next commit asks again. */
    int rc = sqlite3_wal_checkpoint_v2(
        c->own, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &copied);
    return rc == SQLITE_OK && copied > 0;
}

/* Waits on c->cv (c->mu held) until asked or PIN_IDLE_MS passed, then
 * lets the pin go when no commit came in that time. */
static void wait_pin(tg__checkpointer *c, unsigned long *seen)
{
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    at.tv_nsec += (long)PIN_IDLE_MS * 1000000L;
    at.tv_sec += at.tv_nsec / 1000000000L;
    at.tv_nsec %= 1000000000L;
    if (pthread_cond_timedwait(&c->cv, &c->mu, &at) == 0)
        return;
    unsigned long now = atomic_load(&c->commits);
    if (now == *seen)
        tg__readpin_idle(c->pin);
    *seen = now;
}

static void *run(void *arg)
{
    tg__checkpointer *c = arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->wanted && !c->stopping) {
            if (c->pin != NULL)
                wait_pin(c, &seen);
            else
                pthread_cond_wait(&c->cv, &c->mu);
        }
        if (c->stopping)
            break;
        c->wanted = false;
        pthread_mutex_unlock(&c->mu);
        bool copied = checkpoint(c);
        /* the commits after this one ask again while the WAL is long */
        atomic_store(&c->asked, false);
        pthread_mutex_lock(&c->mu);
        if (copied)
            c->done++;
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* Opens the thread's connection and starts it; false when either fails. */
static bool start(tg__checkpointer *c)
{
    pthread_condattr_t ca;
    /* the pin's timer runs on the monotonic clock */
    if (pthread_condattr_init(&ca) != 0)
        return false;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_destroy(&c->cv);
    int crc = pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (crc != 0 && pthread_cond_init(&c->cv, NULL) != 0)
        return false;
    if (sqlite3_open_v2(c->path, &c->own,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                        tg__walbuf_vfs()) != SQLITE_OK ||
        sqlite3_busy_timeout(c->own, 5000) != SQLITE_OK)
        goto fail;
    if (pthread_create(&c->thread, NULL, run, c) != 0)
        goto fail;
    c->started = true;
    return true;
fail:
    sqlite3_close_v2(c->own);
    c->own = NULL;
    return false;
}

/* The WAL hook: runs in the writer's thread after each commit, with the
 * number of pages now in the WAL. */
static int on_commit(void *arg, sqlite3 *db, const char *name, int pages)
{
    tg__checkpointer *c = arg;
    atomic_fetch_add_explicit(&c->commits, 1, memory_order_relaxed);
    if (pages < c->last_pages)
        c->ask_at = CKPT_PAGES; /* the WAL started over */
    c->last_pages = pages;
    if (pages < c->ask_at)
        return SQLITE_OK;
    if (!c->started && !c->failed && !start(c))
        c->failed = true;
    if (c->failed || pages > c->hard_pages) {
        (void)sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE,
                                        NULL, NULL);
        return SQLITE_OK;
    }
    if (atomic_exchange(&c->asked, true))
        return SQLITE_OK; /* asked already: the thread is on it */
    c->ask_at = pages + CKPT_PAGES;
    pthread_mutex_lock(&c->mu);
    c->wanted = true;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return SQLITE_OK;
}

/* CKPT_HARD_BYTES in db's pages (CKPT_HARD_MIN when it cannot be read). */
static int hard_pages(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int size = 0;
    if (sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        size = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (size <= 0 || CKPT_HARD_BYTES / size < CKPT_HARD_MIN)
        return CKPT_HARD_MIN;
    return CKPT_HARD_BYTES / size;
}

int tg__checkpointer_attach(sqlite3 *db, tg__checkpointer **out)
{
    *out = NULL;
    const char *path = sqlite3_db_filename(db, "main");
    if (path == NULL || path[0] == '\0')
        return 0; /* in memory: no WAL to checkpoint */
    tg__checkpointer *c = calloc(1, sizeof *c);
    if (c == NULL || (c->path = strdup(path)) == NULL) {
        free(c);
        return TG_ENOMEM;
    }
    c->db = db;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    atomic_init(&c->asked, false);
    atomic_init(&c->commits, 0);
    c->ask_at = CKPT_PAGES;
    c->hard_pages = hard_pages(db);
    sqlite3_wal_hook(db, on_commit, c);
    *out = c;
    return 0;
}

int tg__checkpointer_watch_pin(tg__checkpointer *c, tg__readpin *pin)
{
    if (c->started) {
        pthread_mutex_lock(&c->mu);
        c->pin = pin;
        pthread_cond_signal(&c->cv);
        pthread_mutex_unlock(&c->mu);
        return 0;
    }
    if (c->failed)
        return TG_ENOMEM;
    c->pin = pin;
    if (!start(c)) {
        c->pin = NULL;
        c->failed = true;
        return TG_ENOMEM;
    }
    return 0;
}

unsigned long tg__checkpointer_done(tg__checkpointer *c)
{
    pthread_mutex_lock(&c->mu);
    unsigned long n = c->done;
    pthread_mutex_unlock(&c->mu);
    return n;
}

void tg__checkpointer_detach(tg__checkpointer *c)
{
    if (c == NULL)
        return;
    /* SQLite's own automatic checkpoint again, for the writer's last
     * commits and its close */
    sqlite3_wal_autocheckpoint(c->db, CKPT_PAGES);
    if (c->started) {
        pthread_mutex_lock(&c->mu);
        c->stopping = true;
        pthread_cond_signal(&c->cv);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->thread, NULL);
        sqlite3_close_v2(c->own);
    }
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c->path);
    free(c);
}
