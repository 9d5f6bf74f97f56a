/* SPDX-License-Identifier: MIT */
/*
 * read.c - the readers of an artifact: a byte range, a line range (found
 * through the checkpoints the writer took every MiB, so reading line
 * 9,000,000 scans about a MiB, not the file), head, and tail (read
 * backwards from the end in blocks). Every answer is capped in bytes.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

#define BLOCK (64 * 1024) /* scanning block of the line readers */

void tg__spool_text_cleanup(tg__spool_text *t)
{
    tg__buf_cleanup(&t->text);
    memset(t, 0, sizeof *t);
}

static void text_init(tg__spool_text *t, const spool_meta *m)
{
    memset(t, 0, sizeof *t);
    tg__buf_init(&t->text, 0);
    t->total_bytes = m->bytes;
    t->total_lines = m->lines;
    t->binary = m->binary;
}

static int read_fail(const spool_meta *m, int e, tg_error *err)
{
    return tg__error_set(err, TG_EIO, "cannot read artifact %s: %s", m->id,
                         strerror(e));
}

/* Opens artifact id for a reader: out zeroed, then set up from its
 * metadata (in m). The descriptor, or a negative TG_E* code. */
static int reader_open(tg_spool *sp, const char *id, spool_meta *m,
                       tg__spool_text *out, tg_error *err)
{
    memset(out, 0, sizeof *out);
    int fd = tg__spool_open_artifact(sp, id, m, err);
    if (fd >= 0)
        text_init(out, m);
    return fd;
}

/* Ends a reader of reader_open: closes fd, frees m, and empties out when
 * rc says it failed. Returns rc. */
static int reader_close(int fd, spool_meta *m, tg__spool_text *out, int rc)
{
    close(fd);
    tg__spool_meta_cleanup(m);
    if (rc)
        tg__spool_text_cleanup(out);
    return rc;
}

int tg__spool_read_bytes(tg_spool *sp, const char *id, uint64_t offset,
                         size_t length, size_t cap, tg__spool_text *out,
                         tg_error *err)
{
    spool_meta m;
    int fd = reader_open(sp, id, &m, out, err);
    if (fd < 0)
        return fd;
    out->offset = offset;
    int rc = 0;
    if (offset >= m.bytes || length == 0)
        goto done;
    size_t n = length < cap ? length : cap;
    if (n > m.bytes - offset)
        n = (size_t)(m.bytes - offset);
    else if (length > cap)
        out->truncated = true;
    if ((rc = tg__buf_reserve(&out->text, n)) != 0) {
        rc = tg__error_set(err, rc, "out of memory");
        goto done;
    }
    ssize_t r = tg__spool_pread_full(fd, out->text.data, n, offset);
    if (r < 0) {
        rc = read_fail(&m, (int)-r, err);
        goto done;
    }
    out->text.len = (size_t)r;
    out->text.data[r] = '\0';
done:
    return reader_close(fd, &m, out, rc);
}

/* The byte offset where 1-based line `line` starts (m->bytes when the file
 * has fewer lines). */
static int line_start(int fd, const spool_meta *m, uint64_t line, uint64_t *at,
                      tg_error *err)
{
    *at = 0;
    if (line <= 1)
        return 0;
    if (line > m->lines) {
        *at = m->bytes;
        return 0;
    }
    uint64_t need = line - 1; /* newlines before the line */
    /* The last checkpoint with fewer newlines than needed: the line
     * starts after it. */
    size_t lo = 0, hi = m->ncps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->cps[mid] < need)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t pos = lo > 0 ? (uint64_t)lo << SPOOL_CP_SHIFT : 0;
    uint64_t seen = lo > 0 ? m->cps[lo - 1] : 0;
    char *buf = malloc(BLOCK);
    if (buf == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    int rc = 0;
    while (pos < m->bytes) {
        ssize_t r = tg__spool_pread_full(fd, buf, BLOCK, pos);
        if (r <= 0) {
            rc = read_fail(m, r < 0 ? (int)-r : EIO, err);
            goto done;
        }
        uint64_t here = tg__spool_count_nl(buf, (size_t)r);
        if (seen + here < need) {
            seen += here;
            pos += (uint64_t)r;
            continue;
        }
        const char *p = buf, *end = buf + r;
        for (;;) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            /* the count said it is in this block */
            if (++seen == need) {
                *at = pos + (uint64_t)(nl - buf) + 1;
                goto done;
            }
            p = nl + 1;
        }
    }
    *at = m->bytes;
done:
    free(buf);
    return rc;
}

/* Reads lines from byte `start` (a line start): `count` of them, at most
 * `cap` bytes. */
static int read_forward(int fd, const spool_meta *m, uint64_t start,
                        uint64_t count, size_t cap, tg__spool_text *out,
                        tg_error *err)
{
    char *buf = malloc(BLOCK);
    if (buf == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    int rc = 0;
    uint64_t pos = start, lines = 0;
    out->offset = start;
    while (pos < m->bytes && lines < count) {
        ssize_t r = tg__spool_pread_full(fd, buf, BLOCK, pos);
        if (r <= 0) {
            rc = read_fail(m, r < 0 ? (int)-r : EIO, err);
            goto done;
        }
        size_t take = (size_t)r;
        const char *p = buf, *end = buf + r;
        while (lines < count) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (nl == NULL)
                break;
            lines++;
            p = nl + 1;
            if (lines == count)
                take = (size_t)(p - buf);
        }
        if (out->text.len + take > cap) {
            take = cap - out->text.len;
            out->truncated = true;
        }
        if ((rc = tg__buf_append(&out->text, buf, take)) != 0) {
            rc = tg__error_set(err, rc, "out of memory");
            goto done;
        }
        pos += take;
        if (out->truncated)
            break;
    }
    if (out->text.len > 0) {
        uint64_t nl = tg__spool_count_nl(out->text.data, out->text.len);
        bool ends = out->text.data[out->text.len - 1] == '\n';
        out->last_line = out->first_line + nl - (ends ? 1 : 0);
    }
done:
    free(buf);
    return rc;
}

int tg__spool_read_lines(tg_spool *sp, const char *id, uint64_t first,
                         uint64_t count, size_t cap, tg__spool_text *out,
                         tg_error *err)
{
    spool_meta m;
    if (first == 0) {
        memset(out, 0, sizeof *out);
        return tg__error_set(err, TG_EINVAL, "lines are numbered from 1");
    }
    int fd = reader_open(sp, id, &m, out, err);
    if (fd < 0)
        return fd;
    out->first_line = first;
    uint64_t start;
    int rc = line_start(fd, &m, first, &start, err);
    if (rc == 0 && count > 0)
        rc = read_forward(fd, &m, start, count, cap, out, err);
    else
        out->offset = start;
    return reader_close(fd, &m, out, rc);
}

int tg__spool_head(tg_spool *sp, const char *id, uint64_t n, size_t cap,
                   tg__spool_text *out, tg_error *err)
{
    return tg__spool_read_lines(sp, id, 1, n, cap, out, err);
}

int tg__spool_tail(tg_spool *sp, const char *id, uint64_t n, size_t cap,
                   tg__spool_text *out, tg_error *err)
{
    spool_meta m;
    int fd = reader_open(sp, id, &m, out, err);
    if (fd < 0)
        return fd;
    int rc = 0;
    char *buf = NULL;
    if (m.bytes == 0 || n == 0) {
        out->offset = m.bytes;
        goto done;
    }
    buf = malloc(BLOCK);
    if (buf == NULL) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto done;
    }
    char lastc = 0;
    ssize_t r = tg__spool_pread_full(fd, &lastc, 1, m.bytes - 1);
    if (r != 1) {
        rc = read_fail(&m, r < 0 ? (int)-r : EIO, err);
        goto done;
    }
    /* The final newline ends the last line; it does not start one. */
    uint64_t end = m.bytes - (lastc == '\n');
    uint64_t pos = end, found = 0, start = 0;
    bool done_scan = false;
    while (pos > 0 && !done_scan) {
        size_t n_read = pos < BLOCK ? (size_t)pos : BLOCK;
        uint64_t from = pos - n_read;
        r = tg__spool_pread_full(fd, buf, n_read, from);
        if (r != (ssize_t)n_read) {
            rc = read_fail(&m, r < 0 ? (int)-r : EIO, err);
            goto done;
        }
        size_t stop = n_read;
        const char *nl;
        while ((nl = memrchr(buf, '\n', stop)) != NULL) {
            uint64_t at = from + (uint64_t)(nl - buf);
            if (m.bytes - at > cap)
                break; /* past the cap: handled below */
            stop = (size_t)(nl - buf);
            if (++found == n) {
                start = at + 1;
                done_scan = true;
                break;
            }
        }
        if (!done_scan && m.bytes - from > cap) {
            start = m.bytes - cap;
            out->truncated = true;
            done_scan = true;
        }
        pos = from;
    }
    /* found newlines lie in [start, end): that many lines plus one */
    out->first_line = m.lines - found;
    if (found == n)
        out->first_line = m.lines - n + 1;
    out->last_line = m.lines;
    out->offset = start;
    size_t len = (size_t)(m.bytes - start);
    if ((rc = tg__buf_reserve(&out->text, len)) != 0) {
        rc = tg__error_set(err, rc, "out of memory");
        goto done;
    }
    r = tg__spool_pread_full(fd, out->text.data, len, start);
    if (r != (ssize_t)len) {
        rc = read_fail(&m, r < 0 ? (int)-r : EIO, err);
        goto done;
    }
    out->text.len = len;
    out->text.data[len] = '\0';
done:
    free(buf);
    return reader_close(fd, &m, out, rc);
}
