/* SPDX-License-Identifier: MIT */
/*
 * writer.c - the streaming writer of one output. Bytes are hashed (SHA-256),
 * their newlines counted (with a checkpoint every MiB for the line readers),
 * checked for text (NUL bytes or invalid UTF-8 make it binary) and the first
 * and last few KiB kept for the preview, all as they arrive. Up to the
 * inline limit they stay in memory; past it everything goes to a temporary
 * file in the spool through a few fixed buffers (written by a thread of the
 * writer once the output is big), so memory is bounded whatever the size.
 * finish() fsyncs and commits the file under its content address (store.c);
 * every failure removes the partial file.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/random.h>
#include <unistd.h>

#include "error.h"
#include "timeutil.h"
#include "utf8.h"
#include "hex.h"

#define IOBUF_BYTES ((size_t)1 << 20)    /* writes to the file are batched */
#define IOBUFS 4                         /* buffers once a thread writes */
#define THREAD_AFTER ((uint64_t)8 << 20) /* output size that starts it */
/* Bytes per write(2). Measured on ext4 (kernel 6.18): 1 MiB writes cost
 * about 0.7 s more kernel time per GiB than 128 KiB ones (larger page
 * cache folios to allocate), for no gain. */
#define WRITE_CHUNK ((size_t)128 << 10)
/* Writeback is started every this many bytes: without it the final fsync
 * writes the whole output at once (measured 1.5-3x slower end to end
 * on this project's VM). */
#define WRITEBACK_EVERY ((uint64_t)8 << 20)
#define HEAD_KEEP 4096 /* first bytes kept for the preview */
#define TAIL_KEEP 4096 /* last bytes kept for the preview */

/* Builds the preview text (handle.c). */
char *tg__spool_preview(const char *head, size_t head_len, const char *tail,
                        size_t tail_len, uint64_t total, uint64_t lines,
                        bool binary);

/* The file side of a writer. Bytes are copied into 1 MiB buffers; up to
 * THREAD_AFTER bytes the caller writes each full buffer itself; past that
 * a thread of this writer does (and starts the kernel's writeback every
 * few MiB, so the fsync at the end has little left to do), while the
 * caller goes on hashing and counting the next bytes. The caller waits
 * only when all IOBUFS buffers are queued: the disk is slower than the
 * tool, and memory stays at IOBUFS MiB. */
typedef struct sink {
    int fd;
    char *bufs[IOBUFS];
    size_t lens[IOBUFS];
    unsigned fill;   /* the buffer the caller fills */
    unsigned head;   /* the oldest queued buffer (the thread's next) */
    unsigned queued; /* full buffers waiting for the thread */
    bool threaded, stop, abandon;
    bool no_thread; /* it could not start: the caller writes */
    int err;        /* errno of the first failed write, 0 */
    uint64_t written, synced;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} sink;

struct tg__spool_writer {
    tg_spool *sp;
    size_t inline_max;
    uint64_t max_bytes; /* 0: none */
    bool force, limited, in_file, failed;
    tg_error fail; /* the sticky error once failed */

    tg__buf mem; /* the output while it fits inline */
    sink out;    /* the temporary file once in_file */
    char tmpname[64];

    EVP_MD_CTX *md;
    uint64_t total, newlines;
    uint64_t *cps; /* newlines before each MiB boundary */
    size_t ncps, cpcap;
    bool binary;
    unsigned char pend[4]; /* a UTF-8 sequence cut by the chunking */
    size_t npend;
    unsigned char last;
    size_t head_len;
    /* last: 8 KiB that are read only where written, never zeroed */
    char head[HEAD_KEEP];
    char tail[TAIL_KEEP]; /* ring: byte at offset x is tail[x % TAIL_KEEP] */
};

/* write(2) until done; 0 or an errno value. */
static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = write(fd, p, n < WRITE_CHUNK ? n : WRITE_CHUNK);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static void *sink_thread(void *arg)
{
    sink *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->queued == 0 && !s->stop && !s->abandon)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->abandon || (s->queued == 0 && s->stop))
            break;
        unsigned i = s->head;
        pthread_mutex_unlock(&s->mu);
        /* the caller does not touch a queued buffer: no lock needed */
        int e = write_all(s->fd, s->bufs[i], s->lens[i]);
        if (e == 0) {
            s->written += s->lens[i];
            if (s->written - s->synced >= WRITEBACK_EVERY) {
                sync_file_range(s->fd, (off64_t)s->synced,
                                (off64_t)(s->written - s->synced),
                                SYNC_FILE_RANGE_WRITE);
                s->synced = s->written;
            }
        }
        pthread_mutex_lock(&s->mu);
        if (e != 0) {
            s->err = e;
            s->queued = 0; /* nothing more is written */
            pthread_cond_broadcast(&s->cv);
            break;
        }
        s->head = (s->head + 1) % IOBUFS;
        s->queued--;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Starts the thread. When it cannot start (no memory for its buffers,
 * no thread to be had), the caller goes on writing the buffers itself:
 * slower, never a failed output. */
static void sink_start(sink *s)
{
    for (int i = 1; i < IOBUFS; i++)
        if ((s->bufs[i] = malloc(IOBUF_BYTES)) == NULL)
            goto fail;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (pthread_create(&s->th, NULL, sink_thread, s) != 0) {
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        goto fail;
    }
    s->threaded = true;
    return;
fail:
    for (int i = 1; i < IOBUFS; i++) {
        free(s->bufs[i]);
        s->bufs[i] = NULL;
    }
    s->no_thread = true;
}

/* Stops the thread: after the queued buffers are written (abandon: at
 * once). Returns the errno of a failed write, or 0. */
static int sink_join(sink *s, bool abandon)
{
    if (!s->threaded)
        return s->err;
    pthread_mutex_lock(&s->mu);
    s->stop = true;
    s->abandon = abandon;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->th, NULL);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    s->threaded = false;
    return s->err;
}

/* Hands the buffer being filled over (to the thread, or writes it). */
static int sink_flush(sink *s)
{
    size_t n = s->lens[s->fill];
    if (n == 0)
        return s->err;
    if (!s->threaded) {
        int e = write_all(s->fd, s->bufs[s->fill], n);
        if (e != 0)
            return s->err = e;
        s->written += n;
        s->lens[s->fill] = 0;
        if (s->written >= THREAD_AFTER && !s->no_thread)
            sink_start(s);
        return 0;
    }
    pthread_mutex_lock(&s->mu);
    if (s->err == 0) {
        s->queued++;
        pthread_cond_broadcast(&s->cv);
        s->fill = (s->fill + 1) % IOBUFS;
        while (s->queued == IOBUFS && s->err == 0)
            pthread_cond_wait(&s->cv, &s->mu);
    }
    int e = s->err;
    pthread_mutex_unlock(&s->mu);
    s->lens[s->fill] = 0;
    return e;
}

/* Copies n bytes in; 0 or an errno value. */
static int sink_put(sink *s, const char *p, size_t n)
{
    while (n > 0) {
        size_t room = IOBUF_BYTES - s->lens[s->fill];
        size_t k = n < room ? n : room;
        memcpy(s->bufs[s->fill] + s->lens[s->fill], p, k);
        s->lens[s->fill] += k;
        p += k;
        n -= k;
        if (s->lens[s->fill] == IOBUF_BYTES) {
            int e = sink_flush(s);
            if (e != 0)
                return e;
        }
    }
    return 0;
}

/* Everything written, the thread gone; 0 or an errno value. */
static int sink_drain(sink *s)
{
    int e = sink_flush(s);
    int j = sink_join(s, e != 0);
    return e ? e : j;
}

static void sink_free(sink *s)
{
    sink_join(s, true);
    for (int i = 0; i < IOBUFS; i++) {
        free(s->bufs[i]);
        s->bufs[i] = NULL;
    }
}

int tg__spool_writer_new(tg_spool *sp, size_t inline_max,
                         tg__spool_writer **out, tg_error *err)
{
    *out = NULL;
    if (sp == NULL || sp->dirfd < 0)
        return tg__error_set(err, TG_EINVAL,
                             "the spool is not open for writing");
    tg__spool_writer *w = malloc(sizeof *w);
    if (w == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    memset(w, 0, offsetof(tg__spool_writer, head)); /* a writer a call */
    w->sp = sp;
    w->inline_max = inline_max;
    w->out.fd = -1;
    tg__buf_init(&w->mem, 0);
    w->md = EVP_MD_CTX_new();
    if (w->md == NULL || EVP_DigestInit_ex(w->md, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(w->md);
        free(w);
        return tg__error_set(err, TG_ENOMEM, "cannot start SHA-256");
    }
    *out = w;
    return 0;
}

void tg__spool_writer_set_max_bytes(tg__spool_writer *w, uint64_t max_bytes)
{
    w->max_bytes = max_bytes;
}

void tg__spool_writer_set_force(tg__spool_writer *w, bool force)
{
    w->force = force;
}

uint64_t tg__spool_writer_bytes(const tg__spool_writer *w)
{
    return w->total;
}

/* Closes and removes the temporary file (the thread stopped first). */
static void drop_file(tg__spool_writer *w)
{
    sink_free(&w->out);
    if (w->out.fd >= 0) {
        close(w->out.fd);
        w->out.fd = -1;
        unlinkat(w->sp->tmpfd, w->tmpname, 0);
    }
}

static void release(tg__spool_writer *w)
{
    drop_file(w);
    tg__buf_cleanup(&w->mem);
    free(w->cps);
    w->cps = NULL;
    EVP_MD_CTX_free(w->md);
    w->md = NULL;
}

/* Makes the writer fail for good: the partial file goes at once. */
static int fail(tg__spool_writer *w, int code, tg_error *err, const char *fmt,
                const char *what, int errnum)
{
    w->failed = true;
    tg__error_set(&w->fail, code, fmt, w->sp->dir, what,
                  errnum ? strerror(errnum) : "out of memory",
                  (unsigned long long)w->total);
    drop_file(w);
    tg__buf_cleanup(&w->mem);
    if (err)
        *err = w->fail;
    return code;
}

#define IO_FMT                                                                 \
    "spool %s: %s: %s (after %llu bytes of output; the partial artifact was "  \
    "removed)"

static int to_file(tg__spool_writer *w, const char *p, size_t n, tg_error *err)
{
    int e = sink_put(&w->out, p, n);
    if (e != 0)
        return fail(w, e == ENOMEM ? TG_ENOMEM : TG_EIO, err, IO_FMT,
                    "cannot write an artifact", e);
    return 0;
}

/* Creates the temporary file and moves the in-memory bytes into it. */
static int open_file(tg__spool_writer *w, tg_error *err)
{
    unsigned char rnd[8];
    if (getrandom(rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd) {
        uint64_t x = tg__mono_ns() ^ (uint64_t)(uintptr_t)w;
        memcpy(rnd, &x, sizeof rnd);
    }
    snprintf(w->tmpname, sizeof w->tmpname,
             "w-%ld-%02x%02x%02x%02x%02x%02x%02x%02x", (long)getpid(), rnd[0],
             rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
    w->out.bufs[0] = malloc(IOBUF_BYTES);
    if (w->out.bufs[0] == NULL)
        return fail(w, TG_ENOMEM, err, IO_FMT, "cannot spool", 0);
    w->out.fd =
        openat(w->sp->tmpfd, w->tmpname,
               O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (w->out.fd < 0)
        return fail(w, TG_EIO, err, IO_FMT, "cannot create an artifact", errno);
    /* The lock tells tg__spool_open this file's writer is alive. */
    flock(w->out.fd, LOCK_EX | LOCK_NB);
    w->in_file = true;
    int rc = w->mem.len ? to_file(w, w->mem.data, w->mem.len, err) : 0;
    tg__buf_cleanup(&w->mem);
    return rc;
}

/* Checks p[0..n) for text, continuing a sequence the previous chunk cut. */
static void check_text(tg__spool_writer *w, const unsigned char *p, size_t n)
{
    size_t i = 0;
    if (w->npend > 0) {
        unsigned char seq[8];
        memcpy(seq, w->pend, w->npend);
        size_t have = w->npend;
        while (have < 4 && i < n)
            seq[have++] = p[i++];
        size_t len = tg__utf8_seq(seq, have);
        if (len == 0) {
            /* still short (a tiny chunk) or invalid */
            unsigned char lead = seq[0];
            size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
            if (have < need && i == n) {
                memcpy(w->pend, seq, have);
                w->npend = have;
                return;
            }
            w->binary = true;
            return;
        }
        /* consumed len - npend bytes of this chunk */
        i = len - w->npend;
        w->npend = 0;
    }
    while (i < n) {
        i += tg__spool_ascii_prefix(p + i, n - i);
        if (i >= n)
            break;
        if (p[i] == 0) {
            w->binary = true;
            return;
        }
        size_t len = tg__utf8_seq(p + i, n - i);
        if (len == 0) {
            unsigned char lead = p[i];
            size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
            if (lead >= 0xC2 && lead <= 0xF4 && n - i < need) {
                memcpy(w->pend, p + i, n - i);
                w->npend = n - i;
                return;
            }
            w->binary = true;
            return;
        }
        i += len;
    }
}

/* Hashes, counts and samples p[0..n), the bytes at offset w->total. */
static int analyze(tg__spool_writer *w, const char *p, size_t n, tg_error *err)
{
    if (EVP_DigestUpdate(w->md, p, n) != 1)
        return fail(w, TG_EINTERNAL, err, IO_FMT, "SHA-256 failed", EIO);
    size_t i = 0;
    while (i < n) {
        uint64_t pos = w->total + i;
        uint64_t next = (pos / SPOOL_CP_BYTES + 1) * SPOOL_CP_BYTES;
        size_t seg = n - i < next - pos ? n - i : (size_t)(next - pos);
        w->newlines += tg__spool_count_nl(p + i, seg);
        i += seg;
        if ((w->total + i) % SPOOL_CP_BYTES == 0) {
            if (w->ncps == w->cpcap) {
                size_t ncap = w->cpcap ? w->cpcap * 2 : 64;
                uint64_t *grown = realloc(w->cps, ncap * sizeof *grown);
                if (grown == NULL)
                    return fail(w, TG_ENOMEM, err, IO_FMT, "cannot spool", 0);
                w->cps = grown;
                w->cpcap = ncap;
            }
            w->cps[w->ncps++] = w->newlines;
        }
    }
    if (!w->binary)
        check_text(w, (const unsigned char *)p, n);
    if (w->head_len < HEAD_KEEP) {
        size_t k = HEAD_KEEP - w->head_len < n ? HEAD_KEEP - w->head_len : n;
        memcpy(w->head + w->head_len, p, k);
        w->head_len += k;
    }
    /* the last TAIL_KEEP bytes into the ring, in at most two copies */
    const char *src = n > TAIL_KEEP ? p + n - TAIL_KEEP : p;
    size_t m = n > TAIL_KEEP ? TAIL_KEEP : n;
    uint64_t at = w->total + (uint64_t)(src - p);
    size_t start = (size_t)(at % TAIL_KEEP);
    size_t first = TAIL_KEEP - start < m ? TAIL_KEEP - start : m;
    memcpy(w->tail + start, src, first);
    memcpy(w->tail, src + first, m - first);
    if (n > 0)
        w->last = (unsigned char)p[n - 1];
    w->total += n;
    return 0;
}

int tg__spool_writer_write(tg__spool_writer *w, const void *data, size_t len,
                           tg_error *err)
{
    if (w->failed) {
        if (err)
            *err = w->fail;
        return w->fail.code;
    }
    if (w->limited)
        return tg__error_set(err, TG_ELIMIT,
                             "output limit of %llu bytes reached",
                             (unsigned long long)w->max_bytes);
    int over = 0;
    if (w->max_bytes > 0 && len > w->max_bytes - w->total) {
        len = (size_t)(w->max_bytes - w->total);
        over = 1;
    }
    const char *p = data;
    int rc;
    if (len > 0) {
        if (!w->in_file && w->mem.len + len > w->inline_max &&
            (rc = open_file(w, err)) != 0)
            return rc;
        if ((rc = analyze(w, p, len, err)) != 0)
            return rc;
        if (w->in_file) {
            if ((rc = to_file(w, p, len, err)) != 0)
                return rc;
        } else if (tg__buf_append(&w->mem, p, len) != 0) {
            return fail(w, TG_ENOMEM, err, IO_FMT, "cannot spool", 0);
        }
    }
    if (over) {
        w->limited = true;
        return tg__error_set(err, TG_ELIMIT,
                             "output limit of %llu bytes reached",
                             (unsigned long long)w->max_bytes);
    }
    return 0;
}

void tg__spool_outcome_cleanup(tg__spool_outcome *o)
{
    free(o->inline_data);
    json_decref(o->artifact);
    memset(o, 0, sizeof *o);
}

void tg__spool_writer_abort(tg__spool_writer *w)
{
    if (w == NULL)
        return;
    release(w);
    free(w);
}

/* The tail ring as contiguous bytes in out[TAIL_KEEP]; returns the count. */
static size_t tail_bytes(const tg__spool_writer *w, char *out)
{
    size_t m = w->total < TAIL_KEEP ? (size_t)w->total : TAIL_KEEP;
    uint64_t from = w->total - m;
    size_t start = (size_t)(from % TAIL_KEEP);
    size_t first = TAIL_KEEP - start < m ? TAIL_KEEP - start : m;
    memcpy(out, w->tail + start, first);
    memcpy(out + first, w->tail, m - first);
    return m;
}

static int commit(tg__spool_writer *w, tg__spool_outcome *o, tg_error *err)
{
    int rc;
    if (!w->in_file && (rc = open_file(w, err)) != 0)
        return rc;
    int e = sink_drain(&w->out);
    if (e != 0)
        return fail(w, e == ENOMEM ? TG_ENOMEM : TG_EIO, err, IO_FMT,
                    "cannot write an artifact", e);
    if (fsync(w->out.fd) != 0)
        return fail(w, TG_EIO, err, IO_FMT, "cannot sync an artifact", errno);
    if (w->npend > 0)
        w->binary = true; /* the output ended inside a UTF-8 sequence */
    unsigned char digest[32];
    unsigned int dlen = 0;
    if (EVP_DigestFinal_ex(w->md, digest, &dlen) != 1 || dlen != 32)
        return fail(w, TG_EINTERNAL, err, IO_FMT, "SHA-256 failed", EIO);
    spool_meta m;
    memset(&m, 0, sizeof m);
    tg__hex_encode(digest, 32, m.sha256);
    snprintf(m.id, sizeof m.id, "art_%.24s", m.sha256);
    m.bytes = w->total;
    m.lines = w->newlines + (w->total > 0 && w->last != '\n');
    m.binary = w->binary;
    m.cps = w->cps;
    m.ncps = w->ncps;
    char tail[TAIL_KEEP];
    size_t tl = tail_bytes(w, tail);
    m.preview = tg__spool_preview(w->head, w->head_len, tail, tl, w->total,
                                  m.lines, m.binary);
    if (m.preview == NULL)
        return fail(w, TG_ENOMEM, err, IO_FMT, "cannot spool", 0);
    /* The file is complete and durable; the name is taken under the
     * index's lock. From here the fd is only for the lock. */
    rc = tg__spool_commit(w->sp, &m, w->tmpname, err);
    close(w->out.fd);
    w->out.fd = -1;
    if (rc != 0) {
        unlinkat(w->sp->tmpfd, w->tmpname, 0);
        free(m.preview);
        return rc;
    }
    /* Eviction makes room for the next outputs; this one stays. Its
     * failure does not undo a committed artifact. */
    tg__spool_evict(w->sp, m.id, NULL, NULL);
    o->spooled = true;
    o->artifact = tg__spool_meta_json(&m, false);
    free(m.preview);
    if (o->artifact == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    return 0;
}

int tg__spool_writer_finish(tg__spool_writer *w, tg__spool_outcome *o,
                            tg_error *err)
{
    memset(o, 0, sizeof *o);
    int rc = 0;
    if (w->failed) {
        if (err)
            *err = w->fail;
        rc = w->fail.code;
        goto done;
    }
    o->limited = w->limited;
    o->bytes = w->total;
    if (w->npend > 0)
        w->binary = true; /* the output ended inside a UTF-8 sequence */
    /* binary output is never pasted into a prompt, however small */
    if (!w->in_file && !w->force && !w->binary) {
        o->inline_len = w->mem.len;
        o->inline_data = w->mem.len ? tg__buf_take(&w->mem) : strdup("");
        if (o->inline_data == NULL)
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto done;
    }
    rc = commit(w, o, err);
done:
    if (rc != 0) {
        tg__spool_outcome_cleanup(o);
    }
    release(w);
    free(w);
    return rc;
}
