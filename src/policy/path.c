/* SPDX-License-Identifier: MIT */
/*
 * path.c - resolving a path for the `under` condition. A lexical check alone
 * is fooled by a symlink inside the workspace that points out of it, and
 * realpath(3) alone fails on a file that does not exist yet (write_file's
 * target). So the path is walked a component at a time as the kernel would:
 * "." dropped, ".." going to the parent of what is resolved so far, each
 * existing component lstat'ed and a symlink's target spliced in (at most 40,
 * as the kernel's ELOOP), and from the first missing component on the rest
 * is appended lexically (".." still folding it). For a path whose symlinks
 * are never followed by "..", this is exactly "realpath of the longest
 * existing ancestor, then the rest"; where a ".." follows a symlink it
 * agrees with the kernel rather than with a lexical fold, which is what the
 * tool will open.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define MAX_LINKS 40

/* Drops the last component of an absolute resolved path ("/a/b" -> "/a",
 * "/a" -> "/", "/" stays). */
static void pop(char *res, size_t *len)
{
    while (*len > 1 && res[*len - 1] != '/')
        (*len)--;
    if (*len > 1)
        (*len)--;
    res[*len] = '\0';
}

int tg__policy_resolve(const char *base, const char *path, char *out,
                       tg_error *err)
{
    /* rest: what is left to walk; symlink targets are put in front of it. */
    char rest[2 * TG__POLICY_PATH_MAX], tmp[2 * TG__POLICY_PATH_MAX];
    char link[TG__POLICY_PATH_MAX];
    size_t len = 1;
    int links = 0, n;
    size_t missing = 0; /* components appended below the first missing one */
    n = snprintf(rest, sizeof rest, "%s", path);
    if (n < 0 || (size_t)n >= sizeof rest)
        goto too_long;
    out[0] = '/';
    out[1] = '\0';
    if (path[0] != '/' && base != NULL) {
        /* base is resolved already: start from it instead of walking it. */
        len = strlen(base);
        if (len >= TG__POLICY_PATH_MAX || base[0] != '/')
            goto too_long;
        memcpy(out, base, len + 1);
    }
    const char *p = rest;
    for (;;) {
        while (*p == '/')
            p++;
        if (*p == '\0')
            break;
        size_t clen = strcspn(p, "/");
        const char *comp = p;
        p += clen;
        if (clen == 1 && comp[0] == '.')
            continue;
        if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
            pop(out, &len);
            if (missing > 0)
                missing--;
            continue;
        }
        if (len + 1 + clen >= TG__POLICY_PATH_MAX)
            goto too_long;
        size_t before = len;
        if (len > 1)
            out[len++] = '/';
        memcpy(out + len, comp, clen);
        len += clen;
        out[len] = '\0';
        if (missing > 0) {
            missing++;
            continue;
        }
        struct stat st;
        if (lstat(out, &st) != 0) {
            if (errno == ENOENT || errno == ENOTDIR) {
                missing = 1;
                continue;
            }
            return tg__error_set(err, TG_EINVAL, "cannot resolve '%s': %s", out,
                                 strerror(errno));
        }
        if (!S_ISLNK(st.st_mode))
            continue;
        if (++links > MAX_LINKS)
            return tg__error_set(
                err, TG_EINVAL, "cannot resolve '%s': too many symlinks", path);
        ssize_t ln = readlink(out, link, sizeof link - 1);
        if (ln < 0)
            return tg__error_set(err, TG_EINVAL, "cannot resolve '%s': %s", out,
                                 strerror(errno));
        if ((size_t)ln >= sizeof link - 1)
            goto too_long;
        link[ln] = '\0';
        /* The link is replaced by its target, read from the link's
         * directory (or from / for an absolute target). */
        len = before;
        out[len] = '\0';
        if (link[0] == '/') {
            len = 1;
            out[1] = '\0';
        }
        n = snprintf(tmp, sizeof tmp, "%s/%s", link, p);
        if (n < 0 || (size_t)n >= sizeof tmp)
            goto too_long;
        memcpy(rest, tmp, (size_t)n + 1);
        p = rest;
    }
    return 0;
too_long:
    return tg__error_set(err, TG_EINVAL, "cannot resolve '%.200s': too long",
                         path);
}

bool tg__path_under(const char *p, const char *root)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
        return p[0] == '/';
    return strncmp(p, root, n) == 0 && (p[n] == '\0' || p[n] == '/');
}
