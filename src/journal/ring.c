/* SPDX-License-Identifier: MIT */
/*
 * ring.c - the journal's crash-safe log of records (ring.h).
 *
 * Why: the journal's two SQLite transactions per tool call (its row before
 * the call, its result after) cost ~17 us each on the call path. Instead the
 * call path appends each record here and a committer thread writes it into
 * SQLite shortly after, then releases it. A record must survive the
 * process's death (kill -9) in between, so the log is a file mapped
 * MAP_SHARED: once the bytes are stored into the mapping they are in the
 * kernel's page cache, whatever happens to the process. Whoever opens the
 * journal next reads a dead process's file (tg__ring_open_existing,
 * tg__ring_scan) and replays what SQLite does not have yet. Not an OS
 * crash: nothing here waits for the disk, and after one the file may hold
 * stale pages, which the checksums turn into a short, clean tail.
 *
 * What the file system costs: a page of a MAP_SHARED file that the kernel
 * wrote back is write-protected again, and the next store into it faults
 * (ext4's page_mkwrite: 50-100 us a page on this project's loaded VM,
 * bench/RESULTS.md), so on a disk file system about one append in a page's
 * worth (~13 of 300 bytes) pays that once per writeback interval (~30 s).
 * On tmpfs there is no writeback and no such fault.
 *
 * The file: a header page, then the data area (capacity bytes, a multiple
 * of 8). The header holds the owner, the checksum's seed, and four 64-bit
 * atomics on two cache lines: the producer's head (the byte position where
 * the next record goes, counted from the start, never wrapped) and the
 * last sequence number appended; the consumer's tail (the position of the
 * oldest record not released) and the last sequence number released.
 * Position p lies at offset p % capacity of the data area.
 *
 * A record, at an offset that is a multiple of 8: its sequence number
 * (8 bytes), its length (4), its CRC32C (4; over the sequence number, the
 * length and the body, started from the ring's seed), then the body padded
 * with zeros to 8 bytes. Records never straddle the end of the data area:
 * when one does not fit before it, the producer writes a wrap marker (one
 * 8-byte word: bit 63 set, then the sequence number of the record that
 * follows) and puts the record at offset 0; the bytes skipped count as used
 * until the record after them is released. The producer stores the body,
 * the length and checksum, then the sequence number (a release store), and
 * then the head (release). The consumer loads the head (acquire) and reads
 * only below it. The reader of a dead process's file does not trust the
 * head (the process may have died between the record and the head, or the
 * page holding the head may be stale): it walks the records from the tail,
 * taking each one whose sequence number follows the last and whose
 * checksum holds, and stops at the first that does not: a record being
 * written when the process died still has the bytes of an older lap in its
 * first word, never the next sequence number, unless the old bytes are a
 * record body that imitates one, and that would need the ring's random
 * seed for its checksum.
 *
 * A record's total size (header and padded body) is at most half the data
 * area: then it always fits once every earlier record is released (either
 * before the end, or at offset 0 when more than half of the area lies
 * before the write position).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define RING_HAVE_SSE42 1
#endif

#include "ring.h"

#define RING_MAGIC "tgring\r\n" /* 8 bytes; \r\n catches text-mode mangling */
#define RING_VERSION 1u
#define RING_HDR_REC 16u       /* a record's header */
#define RING_WRAP (1ull << 63) /* a wrap marker's first word */
#define RING_MIN_CAPACITY 64u

/* The file's header (at offset 0, the data area at hdr_bytes). */
struct ring_hdr {
    _Atomic uint64_t magic; /* RING_MAGIC, stored last at creation */
    uint32_t version;
    uint32_t hdr_bytes; /* where the data area starts (a page) */
    uint64_t capacity;  /* the data area's bytes */
    uint32_t seed;      /* the checksums' starting value */
    uint32_t unused;
    int64_t pid, start; /* the owner */
    char boot[TG__RING_BOOT_SIZE];
    /* the producer's line */
    _Alignas(64) _Atomic uint64_t head; /* the next record's position */
    _Atomic uint64_t head_seq;          /* the last seq appended */
    /* the consumer's line */
    _Alignas(64) _Atomic uint64_t tail; /* the oldest unreleased record */
    _Atomic uint64_t tail_seq;          /* the last seq released */
};
_Static_assert(sizeof(struct ring_hdr) <= 4096, "the header fits a page");

/* A record's header in the data area. */
struct ring_rec {
    _Atomic uint64_t seq; /* or a wrap marker: RING_WRAP | next seq */
    uint32_t len;
    uint32_t crc;
};
_Static_assert(sizeof(struct ring_rec) == RING_HDR_REC, "16-byte header");

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

struct tg__ring {
    /* shared by both sides, set once */
    unsigned char *map; /* the whole file */
    size_t map_len;
    struct ring_hdr *hdr;
    unsigned char *data; /* the data area */
    uint64_t cap;        /* its bytes */
    uint32_t seed;
    bool writable; /* made by tg__ring_create */
    crc_fn crc;
    char *path; /* for tg__ring_close's remove */
    int64_t pid, start;
    char boot[TG__RING_BOOT_SIZE];
    /* the producer's own */
    _Alignas(64) uint64_t p_head; /* == hdr->head */
    uint64_t p_off;               /* p_head % cap */
    uint64_t p_seq;               /* the next seq */
    uint64_t p_tail;              /* hdr->tail when last loaded */
    /* the consumer's own */
    _Alignas(64) uint64_t c_tail; /* == hdr->tail */
    uint64_t c_released;          /* == hdr->tail_seq */
    uint64_t c_pos;               /* the position after record c_seq... */
    uint64_t c_seq;               /* ...the one tg__ring_next gave last */
};

/* ---------------------------------------------------------------- CRC32C */

#define CRC32C_POLY 0x82F63B78u /* Castagnoli, reflected */

static uint32_t crc_table[256];
static pthread_once_t crc_table_once = PTHREAD_ONCE_INIT;

static void crc_table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t crc_sw(uint32_t crc, const void *p, size_t n)
{
    const unsigned char *b = p;
    crc = ~crc;
    while (n-- > 0)
        crc = crc_table[(crc ^ *b++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

#ifdef RING_HAVE_SSE42
__attribute__((target("sse4.2"))) static uint32_t
crc_hw(uint32_t crc, const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t c = ~crc;
    for (; n >= 8; n -= 8, b += 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        c = _mm_crc32_u64(c, w);
    }
    uint32_t c32 = (uint32_t)c;
    while (n-- > 0)
        c32 = _mm_crc32_u8(c32, *b++);
    return ~c32;
}

static bool have_sse42(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}
#endif

static crc_fn crc_pick(int impl)
{
#ifdef RING_HAVE_SSE42
    if (impl != 1 && have_sse42())
        return crc_hw;
#endif
    (void)impl;
    pthread_once(&crc_table_once, crc_table_init);
    return crc_sw;
}

uint32_t tg__ring_crc32c(uint32_t crc, const void *p, size_t n, int impl)
{
    return crc_pick(impl)(crc, p, n);
}

/* A record's checksum over its seq, len and the body's pieces. */
static uint32_t rec_crc(const tg__ring *r, uint64_t seq, uint32_t len,
                        const struct iovec *iov, int n)
{
    uint32_t c = r->crc(r->seed, &seq, sizeof seq);
    c = r->crc(c, &len, sizeof len);
    for (int i = 0; i < n; i++)
        if (iov[i].iov_len > 0)
            c = r->crc(c, iov[i].iov_base, iov[i].iov_len);
    return c;
}

/* ------------------------------------------------------------- the ring */

static inline uint64_t pad8(uint64_t n)
{
    return (n + 7) & ~(uint64_t)7;
}

static inline struct ring_rec *rec_at(const tg__ring *r, uint64_t off)
{
    return (struct ring_rec *)(void *)(r->data + off);
}

size_t tg__ring_max_record(const tg__ring *r)
{
    return (size_t)(r->cap / 2 - RING_HDR_REC);
}

static void ring_free(tg__ring *r)
{
    if (r->map != NULL)
        munmap(r->map, r->map_len);
    free(r->path);
    free(r);
}

static tg__ring *ring_alloc(const char *path)
{
    size_t size = (sizeof(tg__ring) + 63) & ~(size_t)63;
    tg__ring *r = aligned_alloc(64, size);
    if (r == NULL)
        return NULL;
    memset(r, 0, sizeof *r);
    r->path = strdup(path);
    if (r->path == NULL) {
        free(r);
        return NULL;
    }
    return r;
}

static uint32_t random_seed(void)
{
    uint32_t s = 0;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        s = (uint32_t)ts.tv_nsec ^ (uint32_t)getpid() * 2654435761u;
    }
    return s;
}

int tg__ring_create(const char *path, size_t capacity, int64_t pid,
                    int64_t start, const char *boot, tg__ring **out,
                    tg_error *err)
{
    *out = NULL;
    if (boot == NULL)
        boot = "";
    if (capacity < RING_MIN_CAPACITY || capacity > TG__RING_MAX_CAPACITY)
        return tg__error_set(err, TG_EINVAL,
                             "ring %s: capacity %zu outside 64 bytes - 1 GiB",
                             path, capacity);
    if (strlen(boot) >= TG__RING_BOOT_SIZE)
        return tg__error_set(err, TG_EINVAL,
                             "ring %s: boot id longer than %d bytes", path,
                             TG__RING_BOOT_SIZE - 1);
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg >= 4096 && pg <= (1 << 20) ? (size_t)pg : 4096;
    size_t cap = (capacity + page - 1) / page * page;
    tg__ring *r = ring_alloc(path);
    if (r == NULL)
        return tg__error_set(err, TG_ENOMEM, "ring %s: out of memory", path);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        ring_free(r);
        return tg__error_set(err, e == EEXIST ? TG_EEXIST : TG_EJOURNAL,
                             "ring %s: cannot create: %s", path, strerror(e));
    }
    int rc = 0;
    r->map_len = page + cap;
    int e = posix_fallocate(fd, 0, (off_t)r->map_len);
    if (e != 0) {
        rc = tg__error_set(err, TG_EJOURNAL,
                           e == ENOSPC || e == EFBIG || e == EDQUOT
                               ? "ring %s: no room on disk for %zu bytes: %s"
                               : "ring %s: cannot reserve %zu bytes: %s",
                           path, r->map_len, strerror(e));
        goto fail;
    }
    void *m = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        e = errno;
        rc = tg__error_set(err, e == ENOMEM ? TG_ENOMEM : TG_EJOURNAL,
                           "ring %s: cannot map %zu bytes: %s", path,
                           r->map_len, strerror(e));
        goto fail;
    }
    close(fd);
    fd = -1;
    r->map = m;
    r->hdr = m;
    r->data = r->map + page;
    /* The header page now; the data area's pages on the consumer's
     * thread (tg__ring_prefault), so that making a ring stays cheap (a
     * store into every page of 4 MiB took 16-35 ms here, on the first
     * call of a process). */
    ((volatile unsigned char *)r->map)[0] = 0;
    r->cap = cap;
    r->seed = random_seed();
    r->writable = true;
    r->crc = crc_pick(0);
    r->pid = pid;
    r->start = start;
    snprintf(r->boot, sizeof r->boot, "%s", boot);
    r->p_seq = 1;
    struct ring_hdr *h = r->hdr;
    h->version = RING_VERSION;
    h->hdr_bytes = (uint32_t)page;
    h->capacity = cap;
    h->seed = r->seed;
    h->pid = pid;
    h->start = start;
    memcpy(h->boot, r->boot, sizeof h->boot);
    uint64_t magic;
    memcpy(&magic, RING_MAGIC, sizeof magic);
    atomic_store_explicit(&h->magic, magic, memory_order_release);
    *out = r;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    unlink(path);
    ring_free(r);
    return rc;
}

int tg__ring_appendv(tg__ring *r, const struct iovec *iov, int n, uint64_t *seq,
                     tg_error *err)
{
    if (n < 0 || !r->writable)
        return tg__error_set(err, TG_EINVAL, "ring: bad append");
    size_t max = tg__ring_max_record(r);
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        if (iov[i].iov_len > max - len)
            return tg__error_set(err, TG_EINVAL,
                                 "ring record longer than %zu bytes", max);
        len += iov[i].iov_len;
    }
    uint64_t size = RING_HDR_REC + pad8(len);
    uint64_t off = r->p_off, skip = 0;
    if (r->cap - off < size)
        skip = r->cap - off; /* wrap: the record goes to offset 0 */
    uint64_t need = skip + size;
    if (need > r->cap - (r->p_head - r->p_tail)) {
        r->p_tail = atomic_load_explicit(&r->hdr->tail, memory_order_acquire);
        if (need > r->cap - (r->p_head - r->p_tail))
            return TG__RING_FULL;
    }
    uint64_t s = r->p_seq;
    if (skip > 0) {
        atomic_store_explicit(&rec_at(r, off)->seq, RING_WRAP | s,
                              memory_order_relaxed);
        off = 0;
    }
    struct ring_rec *rec = rec_at(r, off);
    unsigned char *body = (unsigned char *)(rec + 1);
    for (int i = 0; i < n; i++)
        if (iov[i].iov_len > 0) {
            memcpy(body, iov[i].iov_base, iov[i].iov_len);
            body += iov[i].iov_len;
        }
    memset(body, 0, (size_t)(pad8(len) - len));
    rec->len = (uint32_t)len;
    /* over the copy: what the file holds, whatever the caller's buffers
     * do meanwhile, and one contiguous run for the CRC */
    struct iovec copy = {rec + 1, len};
    rec->crc = rec_crc(r, s, (uint32_t)len, &copy, 1);
    atomic_store_explicit(&rec->seq, s, memory_order_release);
    r->p_head += need;
    r->p_off = off + size == r->cap ? 0 : off + size;
    r->p_seq = s + 1;
    atomic_store_explicit(&r->hdr->head_seq, s, memory_order_relaxed);
    atomic_store_explicit(&r->hdr->head, r->p_head, memory_order_release);
    *seq = s;
    return 0;
}

/* The record at position *pos below head, past a wrap marker: 1 with *rec
 * and *pos moved to the record itself, 0 when *pos reached head. Consumer
 * side of a ring of this process (the producer's bytes are trusted). */
static int rec_below(const tg__ring *r, uint64_t *pos, uint64_t head,
                     const struct ring_rec **rec)
{
    while (*pos < head) {
        uint64_t off = *pos % r->cap;
        const struct ring_rec *x = rec_at(r, off);
        uint64_t w = atomic_load_explicit(&((struct ring_rec *)x)->seq,
                                          memory_order_relaxed);
        if (w & RING_WRAP) {
            *pos += r->cap - off;
            continue;
        }
        *rec = x;
        return 1;
    }
    return 0;
}

static inline uint64_t rec_size(const struct ring_rec *rec)
{
    return RING_HDR_REC + pad8(rec->len);
}

int tg__ring_next(tg__ring *r, uint64_t after, const void **data, size_t *len,
                  uint64_t *seq)
{
    if (!r->writable)
        return 0;
    uint64_t head = atomic_load_explicit(&r->hdr->head, memory_order_acquire);
    uint64_t pos = r->c_tail;
    if (after > r->c_released && after == r->c_seq)
        pos = r->c_pos;
    const struct ring_rec *rec;
    while (rec_below(r, &pos, head, &rec)) {
        uint64_t s = atomic_load_explicit(&((struct ring_rec *)rec)->seq,
                                          memory_order_relaxed);
        if (s <= after) {
            pos += rec_size(rec);
            continue;
        }
        *data = rec + 1;
        *len = rec->len;
        *seq = s;
        r->c_pos = pos + rec_size(rec);
        r->c_seq = s;
        return 1;
    }
    return 0;
}

void tg__ring_release(tg__ring *r, uint64_t seq)
{
    if (!r->writable || seq <= r->c_released)
        return;
    uint64_t pos, last;
    if (seq == r->c_seq && r->c_seq > r->c_released) {
        pos = r->c_pos;
        last = seq;
    } else {
        uint64_t head =
            atomic_load_explicit(&r->hdr->head, memory_order_acquire);
        const struct ring_rec *rec;
        pos = r->c_tail;
        last = r->c_released;
        while (rec_below(r, &pos, head, &rec)) {
            uint64_t s = atomic_load_explicit(&((struct ring_rec *)rec)->seq,
                                              memory_order_relaxed);
            if (s > seq)
                break;
            pos += rec_size(rec);
            last = s;
        }
        if (last == r->c_released)
            return;
    }
    r->c_tail = pos;
    r->c_released = last;
    if (r->c_seq <= last) { /* the cursor was released: restart at tail */
        r->c_seq = last;
        r->c_pos = pos;
    }
    /* The tail first: should the process die between the two stores, the
     * scan of its file finds the record at the new tail above the old
     * tail_seq, and goes on from there (the other order would have it
     * find a record below tail_seq at the old tail, and stop). */
    atomic_store_explicit(&r->hdr->tail, pos, memory_order_release);
    atomic_store_explicit(&r->hdr->tail_seq, last, memory_order_release);
}

uint64_t tg__ring_pending(tg__ring *r)
{
    uint64_t done =
        atomic_load_explicit(&r->hdr->tail_seq, memory_order_acquire);
    uint64_t last =
        atomic_load_explicit(&r->hdr->head_seq, memory_order_acquire);
    return last > done ? last - done : 0;
}

void tg__ring_close(tg__ring *r, bool remove)
{
    if (r == NULL)
        return;
    if (remove)
        unlink(r->path);
    ring_free(r);
}

/* ------------------------------------------------------------- recovery */

int tg__ring_open_existing(const char *path, tg__ring **out, tg_error *err)
{
    *out = NULL;
    tg__ring *r = ring_alloc(path);
    if (r == NULL)
        return tg__error_set(err, TG_ENOMEM, "ring %s: out of memory", path);
    int rc = 0;
    /* O_NONBLOCK: a FIFO in its place must not hang the open */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        ring_free(r);
        return tg__error_set(err, e == ENOENT ? TG_ENOTFOUND : TG_EJOURNAL,
                             "ring %s: cannot open: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = tg__error_set(err, TG_EJOURNAL, "ring %s: cannot stat: %s", path,
                           strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct ring_hdr)) {
        rc = tg__error_set(err, TG_EPARSE,
                           "ring %s: not a ring file (%lld bytes)", path,
                           (long long)st.st_size);
        goto fail;
    }
    struct ring_hdr h;
    ssize_t got = pread(fd, &h, sizeof h, 0);
    if (got != (ssize_t)sizeof h) {
        rc = tg__error_set(err, TG_EJOURNAL, "ring %s: cannot read its header",
                           path);
        goto fail;
    }
    uint64_t magic;
    memcpy(&magic, RING_MAGIC, sizeof magic);
    uint64_t size = (uint64_t)st.st_size;
    if (atomic_load_explicit(&h.magic, memory_order_relaxed) != magic ||
        h.version != RING_VERSION) {
        rc = tg__error_set(err, TG_EPARSE,
                           "ring %s: not a ring file of version %u", path,
                           RING_VERSION);
        goto fail;
    }
    if (h.hdr_bytes < sizeof h || h.hdr_bytes % 8 != 0 || h.hdr_bytes > size ||
        h.capacity < RING_MIN_CAPACITY || h.capacity % 8 != 0 ||
        h.capacity > TG__RING_MAX_CAPACITY || h.capacity > size - h.hdr_bytes) {
        rc = tg__error_set(err, TG_EPARSE,
                           "ring %s: header (%u + %llu bytes) does not fit "
                           "its %llu bytes",
                           path, h.hdr_bytes, (unsigned long long)h.capacity,
                           (unsigned long long)size);
        goto fail;
    }
    r->map_len = h.hdr_bytes + h.capacity;
    void *m = mmap(NULL, r->map_len, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        int e = errno;
        rc = tg__error_set(err, e == ENOMEM ? TG_ENOMEM : TG_EJOURNAL,
                           "ring %s: cannot map %zu bytes: %s", path,
                           r->map_len, strerror(e));
        goto fail;
    }
    close(fd);
    r->map = m;
    r->hdr = m;
    r->data = r->map + h.hdr_bytes;
    r->cap = h.capacity;
    r->seed = h.seed;
    r->crc = crc_pick(0);
    r->pid = h.pid;
    r->start = h.start;
    memcpy(r->boot, h.boot, sizeof r->boot);
    r->boot[sizeof r->boot - 1] = '\0';
    *out = r;
    return 0;
fail:
    close(fd);
    ring_free(r);
    return rc;
}

void tg__ring_owner(const tg__ring *r, int64_t *pid, int64_t *start,
                    const char **boot)
{
    if (pid != NULL)
        *pid = r->pid;
    if (start != NULL)
        *start = r->start;
    if (boot != NULL)
        *boot = r->boot;
}

int tg__ring_scan(const tg__ring *r, uint64_t after,
                  int (*fn)(void *ud, uint64_t seq, const void *data,
                            size_t len),
                  void *ud)
{
    /* Everything below comes from the file: r->cap (a multiple of 8, at
     * least RING_MIN_CAPACITY) and the mapping's bounds are all that is
     * trusted. */
    const struct ring_hdr *h = r->hdr;
    uint64_t cap = r->cap, max = tg__ring_max_record(r);
    uint64_t released = atomic_load_explicit(&((struct ring_hdr *)h)->tail_seq,
                                             memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&((struct ring_hdr *)h)->tail,
                                         memory_order_relaxed);
    uint64_t off = tail % cap;
    if (off % 8 != 0 || released >= RING_WRAP)
        return 0;
    uint64_t expect = 0; /* the next seq once the first record is known */
    uint64_t walked = 0; /* bytes walked: at most one data area */
    while (walked < cap) {
        const struct ring_rec *x = rec_at(r, off);
        uint64_t w = atomic_load_explicit(&((struct ring_rec *)x)->seq,
                                          memory_order_acquire);
        uint64_t s = w & ~RING_WRAP;
        if (expect != 0 ? s != expect : s <= released)
            return 0;
        if (w & RING_WRAP) {
            if (off == 0) /* a record always fits at offset 0 */
                return 0;
            walked += cap - off;
            off = 0;
            expect = s;
            continue;
        }
        if (cap - off < RING_HDR_REC)
            return 0;
        uint32_t len = x->len;
        if (len > max || RING_HDR_REC + pad8(len) > cap - off)
            return 0;
        uint64_t size = RING_HDR_REC + pad8(len);
        if (walked + size > cap)
            return 0;
        struct iovec body = {(void *)(x + 1), len};
        if (rec_crc(r, s, len, &body, 1) != x->crc)
            return 0;
        if (s > after) {
            int rc = fn(ud, s, x + 1, len);
            if (rc != 0)
                return rc;
        }
        walked += size;
        off += size;
        if (off == cap)
            off = 0;
        expect = s + 1;
    }
    return 0;
}

/* Older headers than Linux 5.14's lack it; older kernels answer EINVAL. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void tg__ring_prefault(tg__ring *r)
{
    if (r == NULL || !r->writable)
        return;
    /* The kernel faults every page in writable as a store would, without
     * storing: no race with the producer's appends meanwhile. Best
     * effort: without it, the first lap's stores fault one page at a
     * time. */
    (void)madvise(r->map, r->map_len, MADV_POPULATE_WRITE);
}
