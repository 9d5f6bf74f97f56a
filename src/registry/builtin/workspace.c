/* SPDX-License-Identifier: MIT */
/*
 * workspace.c - keeping the built-in file tools inside the workspace.
 *
 * Paths are never checked as strings alone: the string step only turns an
 * absolute path inside the workspace into a relative one; the kernel then
 * resolves it beneath a descriptor of the root (openat2 with
 * RESOLVE_BENEATH, which refuses "..", absolute symlinks and symlinks that
 * climb out, atomically with respect to concurrent renames). Where openat2
 * is missing, a component walk with O_PATH | O_NOFOLLOW does the same
 * checks one directory descriptor at a time, so a path swapped during the
 * walk still cannot lead out.
 *
 * toolgate's own files in the workspace (its journal's directory, the
 * spool, the configuration: tg__fsrun.state) are refused the same way, by
 * what a path resolves to: the device and inode numbers of what was opened
 * and of each directory above it up to the root are compared with theirs,
 * so "x/../.toolgate", an absolute path and a symlink the tool made all
 * end at the same refusal.
 */
#include "workspace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "jint.h"

#define MAX_LINKS 40 /* the kernel's own limit of symlinks in one lookup */

/* ------------------------------------------------------------ messages */

int tg__fs_fail(tg__fsrun *run, const char *code, int rc, tg_error *err,
                const char *fmt, ...)
{
    run->errcode = code;
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = rc;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return rc;
}

int tg__fs_canceled(tg__fsrun *run, tg_error *err)
{
    if (run->canceled == NULL || !run->canceled(run->cancel_ud))
        return 0;
    tg__fs_fail(run, TG__FS_CANCELED, TG_ECANCELED, err, "canceled");
    return 1;
}

int tg__fs_args(tg__fsrun *run, const char *tool, const json_t *args,
                const char *const *allowed, tg_error *err)
{
    if (!json_is_object(args))
        return tg__fs_fail(run, TG__FS_BADARGS, TG_EINVAL, err,
                           "%s: the arguments must be an object", tool);
    const char *key;
    json_t *v; /* borrowed */
    json_object_foreach((json_t *)args, key, v)
    {
        bool ok = false;
        for (size_t i = 0; allowed[i] && !ok; i++)
            ok = strcmp(key, allowed[i]) == 0;
        if (!ok)
            return tg__fs_fail(run, TG__FS_BADARGS, TG_EINVAL, err,
                               "%s: unknown argument '%.100s'", tool, key);
    }
    return 0;
}

int tg__fs_int(tg__fsrun *run, const char *tool, const json_t *args,
               const char *key, int64_t lo, int64_t hi, int64_t def,
               int64_t *out, tg_error *err)
{
    json_t *v = json_object_get(args, key); /* borrowed */
    if (v == NULL || json_is_null(v)) {
        *out = def;
        return 0;
    }
    /* 1e2 is 100 to the tool's schema, so it is 100 here too */
    int64_t n;
    if (!tg__json_int(v, &n) || n < lo || n > hi)
        return tg__fs_fail(run, TG__FS_BADARGS, TG_EINVAL, err,
                           "%s: '%s' must be an integer from %lld to %lld",
                           tool, key, (long long)lo, (long long)hi);
    *out = n;
    return 0;
}

/* --------------------------------------------------------------- UTF-8 */

/* The length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return 1;
    size_t len;
    unsigned min;
    unsigned cp;
    if ((s[0] & 0xE0) == 0xC0) {
        len = 2, min = 0x80, cp = s[0] & 0x1F;
    } else if ((s[0] & 0xF0) == 0xE0) {
        len = 3, min = 0x800, cp = s[0] & 0x0F;
    } else if ((s[0] & 0xF8) == 0xF0) {
        len = 4, min = 0x10000, cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

int tg__utf8_append(tg__buf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, run = 0;
    int rc = 0;
    while (i < n && rc == 0) {
        size_t k = utf8_seq(u + i, n - i);
        if (k) {
            i += k;
            continue;
        }
        rc = tg__buf_append(b, s + run, i - run);
        if (rc == 0)
            rc = tg__buf_puts(b, "\xEF\xBF\xBD");
        run = ++i;
    }
    if (rc == 0)
        rc = tg__buf_append(b, s + run, n - run);
    return rc;
}

/* --------------------------------------------------------------- paths */

/* When p lies in the directory ws (both absolute; compared component-wise,
 * so /srv/ws2 is not in /srv/ws), the rest of p after it without leading
 * slashes; else NULL. */
static const char *inside(const char *ws, const char *p)
{
    size_t wl = strlen(ws);
    while (wl > 0 && ws[wl - 1] == '/')
        wl--;
    if (strncmp(p, ws, wl) != 0)
        return NULL;
    const char *rest = p + wl;
    if (*rest != '\0' && *rest != '/')
        return NULL;
    while (*rest == '/')
        rest++;
    return rest;
}

int tg__ws_relpath(tg__fsrun *run, const char *path, size_t len, tg__buf *rel,
                   tg_error *err)
{
    int rc;
    if (memchr(path, '\0', len) != NULL)
        return tg__fs_fail(run, TG__FS_OUTSIDE, TG_EINVAL, err,
                           "path '%s' contains a NUL byte; refused", path);
    if (len == 0)
        return tg__fs_fail(run, TG__FS_BADARGS, TG_EINVAL, err,
                           "the path must not be empty");
    if (run->workspace == NULL || run->workspace[0] != '/')
        return tg__fs_fail(run, TG__FS_IO, TG_EINTERNAL, err,
                           "the workspace is not an absolute path");
    size_t start = rel->len;
    if (path[0] == '/') {
        const char *rest = inside(run->workspace, path);
        if (rest == NULL)
            return tg__fs_fail(run, TG__FS_OUTSIDE, TG_EINVAL, err,
                               "path '%.200s' is outside the workspace %.200s",
                               path, run->workspace);
        rc = tg__buf_puts(rel, rest);
    } else {
        const char *base = run->cwd ? inside(run->workspace, run->cwd) : NULL;
        rc = 0;
        if (base && base[0] != '\0') {
            rc = tg__buf_puts(rel, base);
            if (rc == 0)
                rc = tg__buf_puts(rel, "/");
        }
        if (rc == 0)
            rc = tg__buf_append(rel, path, len);
    }
    if (rc == 0 && rel->len == start)
        rc = tg__buf_puts(rel, ".");
    if (rc)
        return tg__fs_fail(run, TG__FS_IO, rc, err, "out of memory");
    return 0;
}

int tg__ws_openat(int root_fd, const char *rel, int flags)
{
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (uint64_t)(flags | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    for (int attempt = 0; attempt < 8; attempt++) {
        long fd = syscall(SYS_openat2, root_fd, rel, &how, sizeof how);
        if (fd >= 0)
            return (int)fd;
        /* EAGAIN: a concurrent rename made ".." unsafe to judge; retry */
        if (errno == EAGAIN)
            continue;
        /* old kernels, and seccomp filters of some container runtimes */
        if (errno == ENOSYS || errno == EPERM)
            return tg__ws_open_walk(root_fd, rel, flags);
        return -errno;
    }
    return -EAGAIN;
}

int tg__ws_open_walk(int root_fd, const char *rel, int flags)
{
    int rc = 0, links = 0;
    int *stack = NULL; /* O_PATH descriptors of the directories walked */
    size_t depth = 0, cap = 0;
    char *target = NULL;
    tg__buf todo, next;
    tg__buf_init(&todo, 0);
    tg__buf_init(&next, 0);
    size_t pos = 0;

    target = malloc(PATH_MAX);
    if (target == NULL || tg__buf_puts(&todo, rel) != 0) {
        rc = -ENOMEM;
        goto done;
    }
    for (;;) {
        const char *p = todo.data + pos;
        while (*p == '/')
            p++;
        int cur = depth ? stack[depth - 1] : root_fd;
        if (*p == '\0') {
            /* the path ends in a directory already walked ("a/b/", "..") */
            int fd = openat(cur, ".", flags | O_CLOEXEC);
            rc = fd < 0 ? -errno : fd;
            break;
        }
        const char *end = strchrnul(p, '/');
        size_t n = (size_t)(end - p);
        const char *after = end;
        while (*after == '/')
            after++;
        bool last = *after == '\0';
        bool slash = *end == '/'; /* "name/": must be a directory */
        char name[NAME_MAX + 1];
        if (n > NAME_MAX) {
            rc = -ENAMETOOLONG;
            break;
        }
        memcpy(name, p, n);
        name[n] = '\0';
        pos = (size_t)(after - todo.data);

        if (strcmp(name, ".") == 0)
            continue;
        if (strcmp(name, "..") == 0) {
            if (depth == 0) {
                rc = -EXDEV;
                break;
            }
            close(stack[--depth]);
            continue;
        }
        int fd = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            rc = -errno;
            if (fd >= 0)
                close(fd);
            break;
        }
        if (S_ISLNK(st.st_mode)) {
            if ((last && (flags & O_NOFOLLOW)) || ++links > MAX_LINKS) {
                close(fd);
                rc = -ELOOP;
                break;
            }
            ssize_t tl = readlinkat(fd, "", target, PATH_MAX);
            close(fd);
            if (tl <= 0 || tl >= PATH_MAX) {
                rc = tl < 0 ? -errno : tl == 0 ? -ENOENT : -ENAMETOOLONG;
                break;
            }
            if (target[0] == '/') {
                rc = -EXDEV; /* as RESOLVE_BENEATH: absolute links leave */
                break;
            }
            /* continue with the link's text, then what followed it */
            next.len = 0;
            if (tg__buf_append(&next, target, (size_t)tl) != 0 ||
                (slash && tg__buf_puts(&next, "/") != 0) ||
                tg__buf_puts(&next, after) != 0) {
                rc = -ENOMEM;
                break;
            }
            tg__buf t = todo;
            todo = next;
            next = t;
            pos = 0;
            continue;
        }
        if (last && slash && !S_ISDIR(st.st_mode)) {
            close(fd);
            rc = -ENOTDIR;
            break;
        }
        if (last) {
            /* open the object itself; O_NOFOLLOW and the inode check make
             * sure it is still the one inspected above */
            int ffd = openat(cur, name, flags | O_NOFOLLOW | O_CLOEXEC);
            struct stat st2;
            if (ffd < 0) {
                rc = -errno;
            } else if (fstat(ffd, &st2) != 0 || st2.st_dev != st.st_dev ||
                       st2.st_ino != st.st_ino) {
                close(ffd);
                rc = -EAGAIN;
            } else {
                rc = ffd;
            }
            close(fd);
            break;
        }
        if (!S_ISDIR(st.st_mode)) {
            close(fd);
            rc = -ENOTDIR;
            break;
        }
        if (depth == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            int *ns = realloc(stack, ncap * sizeof *ns);
            if (ns == NULL) {
                close(fd);
                rc = -ENOMEM;
                break;
            }
            stack = ns;
            cap = ncap;
        }
        stack[depth++] = fd;
    }
done:
    while (depth > 0)
        close(stack[--depth]);
    free(stack);
    free(target);
    tg__buf_cleanup(&todo);
    tg__buf_cleanup(&next);
    return rc;
}

/* ------------------------------------------------- toolgate's own files */

/* Reads the device and inode numbers of run->state once. A path that
 * cannot be stat'ed (gone) is skipped: nothing resolves into it. More than
 * TG__FS_MAX_STATE paths (never given by the runtime) fail closed. */
static void state_read(tg__fsrun *run)
{
    if (run->ids_read)
        return;
    run->ids_read = true;
    run->nids = 0;
    for (size_t i = 0; run->state[i] != NULL; i++) {
        struct stat st;
        if (run->nids == TG__FS_MAX_STATE) {
            run->nids = TG__FS_MAX_STATE + 1;
            return;
        }
        if (stat(run->state[i], &st) == 0) {
            run->ids[run->nids].dev = st.st_dev;
            run->ids[run->nids].ino = st.st_ino;
            run->nids++;
        }
    }
}

static bool have_state(const tg__fsrun *run)
{
    return run->state != NULL && run->state[0] != NULL;
}

bool tg__ws_is_state(tg__fsrun *run, const struct stat *st)
{
    if (!have_state(run))
        return false;
    state_read(run);
    if (run->nids > TG__FS_MAX_STATE)
        return true;
    for (size_t i = 0; i < run->nids; i++)
        if (run->ids[i].dev == st->st_dev && run->ids[i].ino == st->st_ino)
            return true;
    return false;
}

int tg__ws_dir_in_state(tg__fsrun *run, int root_fd, int dirfd)
{
    if (!have_state(run))
        return 0;
    struct stat root, st, prev = {0};
    if (fstat(root_fd, &root) != 0)
        return -errno;
    int cur = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cur < 0)
        return -errno;
    int rc = -ELOOP;
    /* Tools cannot move toolgate's directories (the sandbox pins them), so
     * what lies beneath one stays beneath it while this climbs. */
    for (int depth = 0; depth < PATH_MAX / 2; depth++) {
        if (fstat(cur, &st) != 0) {
            rc = -errno;
            break;
        }
        if (tg__ws_is_state(run, &st)) {
            rc = 1;
            break;
        }
        if (st.st_dev == root.st_dev && st.st_ino == root.st_ino) {
            rc = 0;
            break;
        }
        if (depth > 0 && st.st_dev == prev.st_dev && st.st_ino == prev.st_ino) {
            rc = -EXDEV; /* the file system's root: not beneath the root */
            break;
        }
        prev = st;
        int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (up < 0) {
            rc = -errno;
            break;
        }
        close(cur);
        cur = up;
    }
    close(cur);
    return rc;
}

/* Whether the non-directory st, which rel resolved to beneath root_fd,
 * lies in toolgate's own directories: the directory holding it is found by
 * resolving rel's last component again as the kernel did (a final symlink
 * followed), and must still hold st. 1, 0, or -errno (-EAGAIN: it changed
 * meanwhile). */
static int file_in_state(tg__fsrun *run, int root_fd, const char *rel,
                         const struct stat *st)
{
    tg__buf cur, next;
    tg__buf_init(&cur, 0);
    tg__buf_init(&next, 0);
    char *target = malloc(PATH_MAX);
    int rc = target == NULL || tg__buf_puts(&cur, rel) != 0 ? -ENOMEM : 0;
    bool again = rc == 0; /* a final symlink was replaced by its text */
    for (int links = 0; again; links++) {
        again = false;
        if (links > MAX_LINKS) {
            rc = -ELOOP;
            break;
        }
        char *c = cur.data;
        size_t len = cur.len;
        while (len > 1 && c[len - 1] == '/')
            c[--len] = '\0';
        char *slash = strrchr(c, '/');
        const char *name = slash ? slash + 1 : c;
        if (slash != NULL)
            *slash = '\0';
        const char *dir = slash == NULL ? "." : c[0] ? c : "/";
        if (name[0] == '\0' || strcmp(name, ".") == 0 ||
            strcmp(name, "..") == 0) {
            rc = -EAGAIN; /* a directory after all */
            break;
        }
        int dfd = tg__ws_openat(root_fd, dir, O_PATH | O_DIRECTORY);
        struct stat lst;
        if (dfd < 0) {
            rc = dfd;
            break;
        }
        if (fstatat(dfd, name, &lst, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = -errno;
        } else if (S_ISLNK(lst.st_mode)) {
            ssize_t n = readlinkat(dfd, name, target, PATH_MAX - 1);
            if (n <= 0) {
                rc = n < 0 ? -errno : -ENOENT;
            } else {
                target[n] = '\0';
                /* the link's text, read from the link's directory */
                next.len = 0;
                if (target[0] == '/')
                    rc = -EXDEV; /* as RESOLVE_BENEATH: absolute links leave */
                else if ((slash != NULL && (tg__buf_puts(&next, dir) != 0 ||
                                            tg__buf_puts(&next, "/") != 0)) ||
                         tg__buf_puts(&next, target) != 0)
                    rc = -ENOMEM;
                else {
                    tg__buf t = cur;
                    cur = next;
                    next = t;
                    again = true;
                }
            }
        } else if (lst.st_dev != st->st_dev || lst.st_ino != st->st_ino) {
            rc = -EAGAIN;
        } else {
            rc = tg__ws_dir_in_state(run, root_fd, dfd);
        }
        close(dfd);
    }
    free(target);
    tg__buf_cleanup(&cur);
    tg__buf_cleanup(&next);
    return rc;
}

/* Whether what rel resolved to (fd, st) is or lies in toolgate's own
 * files. */
static int resolved_in_state(tg__fsrun *run, int root_fd, const char *rel,
                             int fd, const struct stat *st)
{
    if (!have_state(run))
        return 0;
    if (tg__ws_is_state(run, st))
        return 1;
    return S_ISDIR(st->st_mode) ? tg__ws_dir_in_state(run, root_fd, fd)
                                : file_in_state(run, root_fd, rel, st);
}

int tg__ws_state_error(tg__fsrun *run, int e, const char *p, tg_error *err)
{
    if (e == 0)
        return tg__fs_fail(run, TG__FS_STATE, TG_EINVAL, err,
                           "path '%.200s' is toolgate's own (its journal, "
                           "artifacts or configuration); refused",
                           p);
    return tg__fs_fail(run, TG__FS_STATE, TG_EINVAL, err,
                       "path '%.200s' could not be checked against "
                       "toolgate's own files (%s); refused",
                       p, strerror(e));
}

/* The tool error for a failed open of user path p. */
int tg__ws_open_error(tg__fsrun *run, int e, const char *p, tg_error *err)
{
    switch (e) {
    case EXDEV:
        return tg__fs_fail(run, TG__FS_OUTSIDE, TG_EINVAL, err,
                           "path '%.200s' leads outside the workspace; refused",
                           p);
    case ELOOP:
        return tg__fs_fail(run, TG__FS_LOOP, TG_EINVAL, err,
                           "path '%.200s': too many levels of symbolic links",
                           p);
    case ENOENT:
        return tg__fs_fail(run, TG__FS_NOTFOUND, TG_ENOTFOUND, err,
                           "no such file or directory: '%.200s'", p);
    case ENOTDIR:
        return tg__fs_fail(run, TG__FS_NOTDIR, TG_ENOTFOUND, err,
                           "not a directory: '%.200s'", p);
    case EISDIR:
        return tg__fs_fail(run, TG__FS_ISDIR, TG_EINVAL, err,
                           "'%.200s' is a directory", p);
    case EACCES:
    case EPERM:
        return tg__fs_fail(run, TG__FS_ACCESS, TG_EIO, err,
                           "permission denied: '%.200s'", p);
    default:
        return tg__fs_fail(run, TG__FS_IO, TG_EIO, err,
                           "cannot open '%.200s': %s", p, strerror(e));
    }
}

int tg__ws_open(tg__fsrun *run, const json_t *path, int flags, int *fd_out,
                tg_error *err)
{
    int rc;
    tg__buf rel;
    tg__buf_init(&rel, 0);
    *fd_out = -1;
    const char *p = json_string_value(path);
    if (p == NULL)
        return tg__fs_fail(run, TG__FS_BADARGS, TG_EINVAL, err,
                           "'path' must be a string");
    if ((rc = tg__ws_relpath(run, p, json_string_length(path), &rel, err)))
        goto fail;
    int root = open(run->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) {
        rc = tg__fs_fail(run, TG__FS_IO, TG_EIO, err,
                         "cannot open the workspace %.200s: %s", run->workspace,
                         strerror(errno));
        goto fail;
    }
    int fd = tg__ws_openat(root, tg__buf_cstr(&rel), flags);
    struct stat st;
    int in = 0;
    if (fd >= 0 && fstat(fd, &st) != 0) {
        rc = tg__ws_open_error(run, errno, p, err);
    } else if (fd >= 0 && S_ISREG(st.st_mode) && st.st_nlink > 1) {
        /* A second name of a file may be anywhere on the file system: the
         * path resolving beneath the root proves nothing about the file. */
        rc = tg__fs_fail(run, TG__FS_OUTSIDE, TG_EINVAL, err,
                         "path '%.200s' is a hard link (%ju names): it may "
                         "lead outside the workspace; refused",
                         p, (uintmax_t)st.st_nlink);
    } else if (fd >= 0 && (in = resolved_in_state(run, root, tg__buf_cstr(&rel),
                                                  fd, &st)) != 0) {
        rc = tg__ws_state_error(run, in < 0 ? -in : 0, p, err);
    } else if (fd >= 0) {
        *fd_out = fd;
        fd = -1;
    } else {
        rc = tg__ws_open_error(run, -fd, p, err);
    }
    if (fd >= 0)
        close(fd);
    close(root);
fail:
    tg__buf_cleanup(&rel);
    return rc;
}
