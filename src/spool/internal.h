/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the files of the spool share: the spool struct, one
 * artifact's index row, opening an artifact for reading, and the byte
 * scanners (newline counting, UTF-8 checks) the writer and readers use.
 */
#ifndef TG_SPOOL_INTERNAL_H
#define TG_SPOOL_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spool.h"

/* A checkpoint every MiB: the newline count before that offset. */
#define SPOOL_CP_SHIFT 20
#define SPOOL_CP_BYTES ((uint64_t)1 << SPOOL_CP_SHIFT)

#define SPOOL_MEDIA_TEXT "text/plain; charset=utf-8"
#define SPOOL_MEDIA_BINARY "application/octet-stream"

struct tg_spool {
    char *dir;
    int dirfd;   /* the spool directory; -1 when missing (NO_CREATE) */
    int tmpfd;   /* dir/tmp */
    sqlite3 *db; /* NULL when the directory is missing */
    uint64_t max_bytes;
    pthread_mutex_t mu; /* guards db */
};

/* One artifact's row of the index. */
typedef struct spool_meta {
    char id[TG_SPOOL_ID_LEN + 1];
    char sha256[65];
    uint64_t bytes, lines;
    bool binary;
    int state;
    int64_t pins;
    int64_t created_at, last_used; /* epoch ms */
    char *preview;                 /* malloc'd */
    uint64_t *cps;                 /* newline counts at each MiB (malloc'd) */
    size_t ncps;
} spool_meta;

void tg__spool_meta_cleanup(spool_meta *m);

/* Looks `id` up (validated first), checks it is stored, opens its file
 * (O_NOFOLLOW, a regular file of the indexed size) and marks it used.
 * Returns the fd, or a negative TG_E* code with err saying whether the id
 * is malformed, unknown, evicted or released. m is filled on success and
 * must be cleaned up by the caller. */
int tg__spool_open_artifact(tg_spool *sp, const char *id, spool_meta *m,
                            tg_error *err);

/* Records a committed artifact (under the lock, in one transaction with the
 * rename): called by the writer. `tmpname` is its file in tmp/. */
int tg__spool_commit(tg_spool *sp, const spool_meta *m, const char *tmpname,
                     tg_error *err);

/* Builds the docs/records.md artifact object from a row (new ref, NULL: OOM).
 */
json_t *tg__spool_meta_json(const spool_meta *m, bool with_times);

/* Newlines in p[0..n). */
uint64_t tg__spool_count_nl(const char *p, size_t n);
/* Index of the first byte at or after 0 that is not ASCII or is NUL, or n
 * when every byte is printable-or-control ASCII other than NUL. */
size_t tg__spool_ascii_prefix(const unsigned char *p, size_t n);

/* Appends s[0..n) to b as valid UTF-8 without NUL: invalid bytes and NUL
 * become U+FFFD. */
int tg__spool_append_sanitized(tg__buf *b, const char *s, size_t n);
/* Length of the longest prefix of s[0..n) that does not end inside a UTF-8
 * sequence (so cutting there keeps the text valid). */
size_t tg__spool_utf8_cut(const char *s, size_t n);

/* pread until n bytes or end of file; returns bytes read or -errno. */
ssize_t tg__spool_pread_full(int fd, void *buf, size_t n, uint64_t off);

#endif
