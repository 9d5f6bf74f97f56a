/* SPDX-License-Identifier: MIT */
/*
 * read_file.c - the read_file built-in: the text of a file inside the
 * workspace, optionally a window of lines, capped in bytes. A file with a
 * NUL byte is binary and refused rather than pasted into a prompt.
 */
#include "workspace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

#define CHUNK 65536
#define DEFAULT_MAX_BYTES 262144
#define MAX_MAX_BYTES 16777216

const char tg__read_file_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\",\"description\":\"File to read, relative to "
    "the workspace (or absolute inside it)\"},"
    "\"offset_line\":{\"type\":\"integer\",\"minimum\":1,\"description\":"
    "\"First line to return (1-based; default 1)\"},"
    "\"max_lines\":{\"type\":\"integer\",\"minimum\":1,\"description\":"
    "\"Most lines to return (default: all)\"},"
    "\"max_bytes\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":16777216,"
    "\"description\":\"Most bytes to return (default 262144)\"}},"
    "\"required\":[\"path\"],\"additionalProperties\":false}";

/* The length of s[0..len) without a UTF-8 sequence left incomplete at its
 * end by a cut. */
static size_t utf8_cut(const char *s, size_t len)
{
    size_t i = len, cont = 0;
    while (i > 0 && cont < 3 && ((unsigned char)s[i - 1] & 0xC0) == 0x80) {
        i--;
        cont++;
    }
    if (i == 0)
        return len; /* no lead byte: not UTF-8, nothing to protect */
    unsigned char lead = (unsigned char)s[i - 1];
    size_t need = (lead & 0xE0) == 0xC0   ? 2
                  : (lead & 0xF0) == 0xE0 ? 3
                  : (lead & 0xF8) == 0xF0 ? 4
                                          : 1;
    return cont + 1 < need ? i - 1 : len;
}

typedef struct window {
    int64_t offset, max_lines, max_bytes;
    int64_t line;  /* line number of the next byte */
    int64_t taken; /* whole lines written */
    size_t start;  /* out->len when the run began */
    bool done;     /* the window is complete */
    bool cut;      /* max_bytes ended the window */
} window;

/* Feeds n bytes of the file through the window into out. */
static int feed(window *w, const char *p, size_t n, tg__buf *out)
{
    while (n > 0 && !w->done) {
        const char *nl = memchr(p, '\n', n);
        size_t seg = nl ? (size_t)(nl - p) + 1 : n;
        if (w->line >= w->offset) {
            size_t used = out->len - w->start;
            size_t room = (size_t)w->max_bytes - used;
            if (seg > room) {
                /* fill to the cap; the caller trims to a line end */
                if (tg__buf_append(out, p, room) != 0)
                    return TG_ENOMEM;
                w->cut = true;
                w->done = true;
                return 0;
            }
            if (tg__buf_append(out, p, seg) != 0)
                return TG_ENOMEM;
        }
        if (nl) {
            if (w->line >= w->offset)
                w->taken++;
            w->line++;
            if (w->max_lines && w->taken >= w->max_lines)
                w->done = true;
        }
        p += seg;
        n -= seg;
    }
    return 0;
}

int tg__read_file_run(tg__fsrun *run, const json_t *args, tg__buf *out,
                      tg_error *err)
{
    static const char *const keys[] = {"path", "offset_line", "max_lines",
                                       "max_bytes", NULL};
    int rc, fd = -1;
    char *chunk = NULL;
    window w = {.line = 1, .start = out->len};
    bool ends_nl = true; /* the last byte read was a newline (or none read) */

    if ((rc = tg__fs_args(run, "read_file", args, keys, err)) ||
        (rc = tg__fs_int(run, "read_file", args, "offset_line", 1, INT64_MAX, 1,
                         &w.offset, err)) ||
        (rc = tg__fs_int(run, "read_file", args, "max_lines", 1, INT64_MAX, 0,
                         &w.max_lines, err)) ||
        (rc = tg__fs_int(run, "read_file", args, "max_bytes", 1, MAX_MAX_BYTES,
                         DEFAULT_MAX_BYTES, &w.max_bytes, err)))
        return rc;
    const json_t *path = json_object_get(args, "path"); /* borrowed */
    if (!json_is_string(path))
        return tg__fs_fail(run, TG__FS_BADARGS, TG_EINVAL, err,
                           "read_file needs 'path', a string");
    const char *name = json_string_value(path);

    /* O_NONBLOCK: opening a FIFO must not hang the worker */
    rc = tg__ws_open(run, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, &fd, err);
    if (rc)
        return rc;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = tg__fs_fail(run, TG__FS_IO, TG_EIO, err,
                         "cannot stat '%.200s': %s", name, strerror(errno));
        goto fail;
    }
    if (S_ISDIR(st.st_mode)) {
        rc = tg__fs_fail(run, TG__FS_ISDIR, TG_EINVAL, err,
                         "'%.200s' is a directory (list_dir lists it)", name);
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = tg__fs_fail(run, TG__FS_NOTFILE, TG_EINVAL, err,
                         "'%.200s' is not a regular file", name);
        goto fail;
    }
    if ((chunk = malloc(CHUNK)) == NULL) {
        rc = tg__fs_fail(run, TG__FS_IO, TG_ENOMEM, err, "out of memory");
        goto fail;
    }
    bool eof = false;
    while (!w.done) {
        if (tg__fs_canceled(run, err)) {
            rc = TG_ECANCELED;
            goto fail;
        }
        ssize_t n = read(fd, chunk, CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = tg__fs_fail(run, TG__FS_IO, TG_EIO, err,
                             "cannot read '%.200s': %s", name, strerror(errno));
            goto fail;
        }
        if (n == 0) {
            eof = true;
            break;
        }
        if (memchr(chunk, '\0', (size_t)n) != NULL) {
            rc = tg__fs_fail(run, TG__FS_BINARY, TG_EINVAL, err,
                             "'%.200s' is a binary file (it holds NUL bytes); "
                             "read_file returns text only",
                             name);
            goto fail;
        }
        ends_nl = chunk[n - 1] == '\n';
        if ((rc = feed(&w, chunk, (size_t)n, out)) != 0) {
            rc = tg__fs_fail(run, TG__FS_IO, rc, err, "out of memory");
            goto fail;
        }
    }
    if (eof) {
        int64_t lines = w.line - 1 + (ends_nl ? 0 : 1);
        if (w.offset > lines && !(lines == 0 && w.offset == 1)) {
            rc = tg__fs_fail(run, TG__FS_OFFSET, TG_EINVAL, err,
                             "offset_line %lld is past the end of '%.200s' "
                             "(%lld lines)",
                             (long long)w.offset, name, (long long)lines);
            goto fail;
        }
    }
    if (w.cut) {
        /* end on a whole line when at least one fitted, so the next call
         * can start exactly at the line after it */
        size_t got = out->len - w.start;
        const char *base = out->data + w.start;
        size_t keep = got;
        while (keep > 0 && base[keep - 1] != '\n')
            keep--;
        int64_t next;
        if (keep > 0) {
            next = w.offset + w.taken;
            out->len = w.start + keep;
        } else {
            out->len = w.start + utf8_cut(base, got);
            next = w.offset + w.taken + 1;
        }
        out->data[out->len] = '\0';
        if (keep == 0)
            rc = tg__buf_printf(out,
                                "\n[read_file: line %lld is longer than "
                                "max_bytes (%lld) and was cut; the next line "
                                "is offset_line=%lld]\n",
                                (long long)(w.offset + w.taken),
                                (long long)w.max_bytes, (long long)next);
        else
            rc = tg__buf_printf(out,
                                "[read_file: stopped at max_bytes (%lld); "
                                "continue with offset_line=%lld]\n",
                                (long long)w.max_bytes, (long long)next);
        if (rc) {
            rc = tg__fs_fail(run, TG__FS_IO, rc, err, "out of memory");
            goto fail;
        }
    }
fail:
    free(chunk);
    if (fd >= 0)
        close(fd);
    return rc;
}
