/* SPDX-License-Identifier: MIT */
/*
 * ring.h - a per-process, crash-safe log of journal records: a file beside
 * the journal mapped MAP_SHARED, one producer thread appending (the call
 * path), one consumer thread reading and releasing (the committer), lock-free
 * between them; after the process's death, whoever opens the journal next
 * reads the records the dead process left (ring.c says how and why).
 */
#ifndef TG_JOURNAL_RING_H
#define TG_JOURNAL_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "error.h"

typedef struct tg__ring tg__ring;

/* tg__ring_appendv's answer when there is no room now (the consumer has not
 * released enough): the caller waits and retries. Positive, so it is no
 * TG_E* code (toolgate.h has no TG_EAGAIN); err is left untouched. */
#define TG__RING_FULL 1

/* The bounds of tg__ring_create's capacity: at least 64 bytes (one page
 * after rounding), at most 1 GiB. */
#define TG__RING_MAX_CAPACITY ((size_t)1 << 30)
/* The room tg__ring_owner's boot id has (39 bytes and a NUL). */
#define TG__RING_BOOT_SIZE 40

/* Creates the ring file `path` (O_CREAT|O_EXCL|O_CLOEXEC, mode 0600: it
 * fails with TG_EEXIST when the path exists) with a data area of `capacity`
 * bytes rounded up to whole pages, after a header page. The whole file is
 * reserved with posix_fallocate, so no store into the mapping can fault for
 * want of disk (ENOSPC or EFBIG: TG_EJOURNAL, "no room on disk ..."). The
 * header is stamped with the owner: pid, start (its start time in clock
 * ticks) and boot (the boot id, at most 39 bytes; NULL for none). The file
 * is mapped MAP_SHARED read-write (the data area's pages are faulted in
 * by tg__ring_prefault, on the consumer's thread: touching every page here
 * took 16-35 ms for 4 MiB on this project's loaded VM, ext4, on the first
 * call of a process), and its descriptor closed. Returns 0 with
 * *out (the caller's: tg__ring_close), or TG_EINVAL (a capacity beyond the
 * bounds above, a boot id too long), TG_EEXIST, TG_EJOURNAL, TG_ENOMEM; on
 * failure no file is left behind. Any thread. */
int tg__ring_create(const char *path, size_t capacity, int64_t pid,
                    int64_t start, const char *boot, tg__ring **out,
                    tg_error *err);

/* Appends one record made of the n pieces iov[0..n) (gathered: the caller
 * need not copy them together first; a piece of length 0 may have a NULL
 * base); *seq gets its sequence number (1, 2, ... in append order, never
 * reused). Returns 0; TG__RING_FULL when there is no room now; TG_EINVAL
 * when the record can never fit (longer than tg__ring_max_record, or n < 0).
 * No system call, no allocation. Once it returns the record is visible to
 * the consumer thread and, being in the kernel's page cache, survives the
 * process's death (not the machine's: see ring.c). Producer thread only
 * (one thread at a time); not on a ring from tg__ring_open_existing. */
int tg__ring_appendv(tg__ring *r, const struct iovec *iov, int n, uint64_t *seq,
                     tg_error *err);

/* The longest record tg__ring_appendv ever takes: half the data area, less
 * a record's 16-byte header (a record that long always fits once every
 * earlier one is released, wherever the write position is). */
size_t tg__ring_max_record(const tg__ring *r);

/* Consumer side: the first record with a sequence number above `after`
 * (0: the oldest not released), in append order. Returns 1 with *data,
 * *len and *seq set (data points into the mapping and stays valid until
 * the record is released), 0 when there is none yet. Reading the record
 * just after the one read last costs no search. Consumer thread only (one
 * thread at a time); safe against the producer's concurrent appends. Not on
 * a ring from tg__ring_open_existing (returns 0). */
int tg__ring_next(tg__ring *r, uint64_t after, const void **data, size_t *len,
                  uint64_t *seq);

/* Releases every record up to and including seq (clamped to the last one
 * appended): appends may reuse their room, and tg__ring_scan no longer
 * shows them. Consumer thread only. No-op on a ring from
 * tg__ring_open_existing. */
void tg__ring_release(tg__ring *r, uint64_t seq);

/* How many records were appended and not yet released (drains, tests). Any
 * thread; a moment's snapshot while the producer or consumer runs. */
uint64_t tg__ring_pending(tg__ring *r);

/* Faults the data area's pages in, writable, ahead of the appends (a
 * store into a file page that was never stored into costs the file system
 * a page_mkwrite, 50-120 us on ext4): for the consumer's thread, right
 * after tg__ring_create, while the producer may already append. A no-op on
 * a kernel older than 5.14 or a read-only ring. */
void tg__ring_prefault(tg__ring *r);

/* Unmaps r and frees it; with `remove` true, also unlinks its file (the
 * mapping of another process is unaffected). NULL is a no-op. */
void tg__ring_close(tg__ring *r, bool remove);

/* Recovery: opens the existing ring file `path` read-only (another
 * process's, maybe dead mid-append, maybe truncated or garbage: untrusted
 * input) and checks its header: magic, version, a header size and data
 * area that lie within the file. Returns 0 with *out (the caller's:
 * tg__ring_close), TG_ENOTFOUND (no such file), TG_EPARSE (not a ring file
 * of this version, or cut short), TG_EJOURNAL (it cannot be read),
 * TG_ENOMEM. Any thread. */
int tg__ring_open_existing(const char *path, tg__ring **out, tg_error *err);

/* The owner stamped at creation: *pid, *start, and *boot (owned by r, ""
 * when none); any of them may be NULL. */
void tg__ring_owner(const tg__ring *r, int64_t *pid, int64_t *start,
                    const char **boot);

/* Calls fn(ud, seq, data, len) for each complete, intact record not yet
 * released with seq > after, oldest first (data points into the mapping,
 * valid while r is open). Stops at the first record that is torn, fails
 * its checksum or breaks the sequence (a process killed mid-append leaves
 * such a tail; after an OS crash some pages may be stale), and after at
 * most one data area's worth of bytes. Returns 0, or fn's first non-zero
 * return (which stops the scan). For a ring from tg__ring_open_existing,
 * or one that nobody appends to meanwhile. */
int tg__ring_scan(const tg__ring *r, uint64_t after,
                  int (*fn)(void *ud, uint64_t seq, const void *data,
                            size_t len),
                  void *ud);

/* CRC32C (Castagnoli) of n bytes at p continued from crc (0 to start): the
 * ring's checksum, exposed for its tests. impl: 0 the fastest this CPU has,
 * 1 the table, 2 the SSE4.2 instruction (the table when the CPU lacks it). */
uint32_t tg__ring_crc32c(uint32_t crc, const void *p, size_t n, int impl);

#endif
