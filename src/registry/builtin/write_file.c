/* SPDX-License-Identifier: MIT */
/*
 * write_file.c - the built-in write_file tool: content written atomically to
 * a file beneath the workspace. The parent directory is opened beneath the
 * workspace root like every built-in path (openat2 RESOLVE_BENEATH), the
 * content goes to a temporary file in it, which is synced and renamed over
 * the target, and the directory is synced: a reader sees the old file or
 * the new one, never half of it, and a crash leaves one of the two. The
 * rename replaces a symlink or a hard link at the target instead of writing
 * through it, so neither can lead a write outside the workspace.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "workspace.h"

const char tg__write_file_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\",\"description\":\"File to write, relative "
    "to the workspace; its directory must exist\"},"
    "\"content\":{\"type\":\"string\",\"description\":\"The whole new content "
    "of the file\"}},"
    "\"required\":[\"path\",\"content\"],\"additionalProperties\":false}";

/* Writes all of buf to fd; 0 or an errno value. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Creates a temporary file in dirfd: its name in tmp, descriptor returned,
 * or -errno. The name starts with '.' and ends in random hex. */
static int make_temp(int dirfd, char *tmp, size_t size)
{
    for (int attempt = 0; attempt < 16; attempt++) {
        unsigned char r[8];
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
            return -EIO;
        snprintf(tmp, size, ".toolgate-write-%02x%02x%02x%02x%02x%02x%02x%02x",
                 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
        int fd =
            openat(dirfd, tmp,
                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST)
            return fd >= 0 ? fd : -errno;
    }
    return -EEXIST;
}

int tg__write_file_run(tg__fsrun *run, const json_t *args, tg__buf *out,
                       tg_error *err)
{
    static const char *const allowed[] = {"path", "content", NULL};
    int rc = tg__fs_args(run, "write_file", args, allowed, err);
    if (rc != 0)
        return rc;
    const json_t *path = json_object_get(args, "path");       /* borrowed */
    const json_t *content = json_object_get(args, "content"); /* borrowed */
    if (!json_is_string(path) || !json_is_string(content))
        return tg__fs_fail(run, TG__FS_BADARGS, TG_EINVAL, err,
                           "write_file needs 'path' and 'content' strings");
    const char *p = json_string_value(path);
    tg__buf rel;
    tg__buf_init(&rel, 0);
    int root = -1, dirfd = -1, fd = -1;
    char tmp[64] = "";
    if ((rc = tg__ws_relpath(run, p, json_string_length(path), &rel, err)))
        goto done;
    /* The directory part and the file name. */
    char *r = (char *)tg__buf_cstr(&rel);
    char *slash = strrchr(r, '/');
    const char *name = slash ? slash + 1 : r;
    if (slash != NULL)
        *slash = '\0';
    const char *dir = slash != NULL && r[0] != '\0' ? r : ".";
    if (name[0] == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        rc = tg__fs_fail(run, TG__FS_BADARGS, TG_EINVAL, err,
                         "'%.200s' does not name a file", p);
        goto done;
    }
    root = open(run->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) {
        rc = tg__fs_fail(run, TG__FS_IO, TG_EIO, err,
                         "cannot open the workspace %.200s: %s", run->workspace,
                         strerror(errno));
        goto done;
    }
    dirfd = tg__ws_openat(root, dir, O_RDONLY | O_DIRECTORY);
    if (dirfd < 0) {
        rc = tg__ws_open_error(run, -dirfd, p, err);
        dirfd = -1;
        goto done;
    }
    /* Nothing is written into toolgate's own directories, and its own files
     * (the configuration) are not replaced. */
    struct stat st;
    int in = tg__ws_dir_in_state(run, root, dirfd);
    if (in == 0 && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        tg__ws_is_state(run, &st))
        in = 1;
    if (in != 0) {
        rc = tg__ws_state_error(run, in < 0 ? -in : 0, p, err);
        goto done;
    }
    /* A directory at the target stays: rename would fail anyway, but the
     * message is clearer from here. Keep an existing file's mode. */
    mode_t mode = 0644;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISDIR(st.st_mode)) {
            rc = tg__fs_fail(run, TG__FS_ISDIR, TG_EINVAL, err,
                             "'%.200s' is a directory", p);
            goto done;
        }
        if (S_ISREG(st.st_mode))
            mode = st.st_mode & 07777;
    }
    if ((fd = make_temp(dirfd, tmp, sizeof tmp)) < 0) {
        rc = tg__ws_open_error(run, -fd, p, err);
        fd = -1;
        tmp[0] = '\0';
        goto done;
    }
    int e =
        write_all(fd, json_string_value(content), json_string_length(content));
    if (e == 0 && fchmod(fd, mode) != 0)
        e = errno;
    if (e == 0 && fsync(fd) != 0)
        e = errno;
    if (close(fd) != 0 && e == 0)
        e = errno;
    fd = -1;
    if (e == 0 && renameat(dirfd, tmp, dirfd, name) != 0)
        e = errno;
    if (e != 0) {
        rc = tg__fs_fail(run, TG__FS_IO, TG_EIO, err,
                         "cannot write '%.200s': %s", p, strerror(e));
        goto done;
    }
    tmp[0] = '\0';      /* renamed: nothing to remove */
    (void)fsync(dirfd); /* the rename itself durable, where supported */
    /* {"path","bytes"}: the path as given, made valid UTF-8 for JSON. */
    tg__buf shown;
    tg__buf_init(&shown, 0);
    rc = tg__utf8_append(&shown, p, strlen(p));
    json_t *o = rc == 0 ? json_pack("{s:s%, s:I}", "path", tg__buf_cstr(&shown),
                                    shown.len, "bytes",
                                    (json_int_t)json_string_length(content))
                        : NULL; /* new ref */
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    rc = text ? tg__buf_puts(out, text) : TG_ENOMEM;
    free(text);
    json_decref(o);
    tg__buf_cleanup(&shown);
    if (rc != 0)
        rc = tg__error_set(err, rc, "out of memory");
done:
    if (fd >= 0)
        close(fd);
    if (tmp[0] != '\0' && dirfd >= 0)
        unlinkat(dirfd, tmp, 0);
    if (dirfd >= 0)
        close(dirfd);
    if (root >= 0)
        close(root);
    tg__buf_cleanup(&rel);
    return rc;
}
