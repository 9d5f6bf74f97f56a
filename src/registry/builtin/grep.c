/* SPDX-License-Identifier: MIT */
/*
 * grep.c - the grep built-in: lines matching a PCRE2 pattern in the files
 * below a path inside the workspace, as "path:LINE:text".
 *
 * The traversal is descriptor-relative (openat + fdopendir, fstatat with
 * AT_SYMLINK_NOFOLLOW, O_NOFOLLOW on every open): symlinks are never
 * followed, so neither a link nor one swapped in during the walk can take
 * it outside the workspace. A pattern is untrusted: its work per line is
 * bounded by PCRE2's match, depth and heap limits, and hitting one ends the
 * call with MATCH_LIMIT instead of hanging the worker.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "workspace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pcre2.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

#define CHUNK 65536
#define MAX_LINE (1u << 20)  /* longer lines are matched on this prefix */
#define MAX_SHOWN 512        /* bytes of a matching line in the output */
#define MAX_DEPTH 128        /* directory nesting searched */
#define MATCH_LIMIT 1000000  /* PCRE2 match() calls per line */
#define DEPTH_LIMIT 10000    /* PCRE2 backtracking depth per line */
#define HEAP_LIMIT_KIB 65536 /* PCRE2 backtracking heap per line */

const char tg__grep_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"pattern\":{\"type\":\"string\",\"description\":\"Regular expression "
    "(PCRE2, UTF-8) searched for in each line\"},"
    "\"path\":{\"type\":\"string\",\"description\":\"File or directory to "
    "search, relative to the workspace (default \\\".\\\")\"},"
    "\"glob\":{\"type\":\"string\",\"description\":\"Only files whose name "
    "matches this glob (e.g. \\\"*.c\\\"; with a '/', the path below the "
    "search directory)\"},"
    "\"max_matches\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10000,"
    "\"description\":\"Stop after this many matching lines (default 200)\"},"
    "\"ignore_case\":{\"type\":\"boolean\",\"description\":\"Match "
    "regardless of case\"}},"
    "\"required\":[\"pattern\"],\"additionalProperties\":false}";

typedef struct grepctx {
    tg__fsrun *run;
    tg_error *err;
    tg__buf *out;
    pcre2_code *re;
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    const char *glob;
    bool glob_path; /* the glob has a '/': match the path below the start */
    int64_t max_matches, matches;
    bool stopped; /* max_matches reached */
    char *chunk;
    tg__buf line;
    tg__buf path;     /* display path of the current file */
    size_t rel_start; /* where the part below the start path begins in path */
} grepctx;

static int search_line(grepctx *g, const char *s, size_t n, int64_t lineno)
{
    if (n > 0 && s[n - 1] == '\r')
        n--;
    int m = pcre2_match(g->re, (PCRE2_SPTR)s, n, 0, 0, g->md, g->mctx);
    if (m == PCRE2_ERROR_NOMATCH)
        return 0;
    if (m < 0) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(m, msg, sizeof msg);
        bool limit =
            m == PCRE2_ERROR_MATCHLIMIT || m == PCRE2_ERROR_DEPTHLIMIT ||
            m == PCRE2_ERROR_HEAPLIMIT || m == PCRE2_ERROR_JIT_STACKLIMIT;
        return tg__fs_fail(
            g->run, limit ? TG__FS_MATCH_LIMIT : TG__FS_PATTERN,
            limit ? TG_ELIMIT : TG_EINVAL, g->err,
            "grep: the pattern %s on %.200s:%lld (%s); "
            "simplify the pattern",
            limit ? "exceeded the match limit" : "failed to match",
            tg__buf_cstr(&g->path), (long long)lineno, (const char *)msg);
    }
    int rc = tg__buf_printf(g->out, "%s:%lld:", tg__buf_cstr(&g->path),
                            (long long)lineno);
    if (rc == 0) {
        size_t shown = n;
        if (shown > MAX_SHOWN) {
            shown = MAX_SHOWN;
            while (shown > 0 && ((unsigned char)s[shown] & 0xC0) == 0x80)
                shown--;
        }
        rc = tg__buf_append(g->out, s, shown);
        if (rc == 0 && shown < n)
            rc = tg__buf_puts(g->out, " [...]");
        if (rc == 0)
            rc = tg__buf_puts(g->out, "\n");
    }
    if (rc)
        return tg__fs_fail(g->run, TG__FS_IO, rc, g->err,
                           rc == TG_ELIMIT ? "grep: output limit reached"
                                           : "out of memory");
    if (++g->matches >= g->max_matches)
        g->stopped = true;
    return 0;
}

/* Searches one open regular file, line by line. */
static int search_fd(grepctx *g, int fd)
{
    int rc = 0;
    int64_t lineno = 1;
    bool overlong = false;
    g->line.len = 0;
    for (;;) {
        ssize_t n = read(fd, g->chunk, CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* a file that fails mid-read is searched as far as read */
        /* binary: skip the file; a NUL found later ends it where it is */
        if (memchr(g->chunk, '\0', (size_t)n) != NULL)
            return 0;
        const char *p = g->chunk;
        size_t left = (size_t)n;
        while (left > 0 && !g->stopped) {
            const char *nl = memchr(p, '\n', left);
            size_t seg = nl ? (size_t)(nl - p) : left;
            if (!overlong) {
                size_t room = MAX_LINE - g->line.len;
                size_t take = seg < room ? seg : room;
                if (tg__buf_append(&g->line, p, take) != 0)
                    return tg__fs_fail(g->run, TG__FS_IO, TG_ENOMEM, g->err,
                                       "out of memory");
                overlong = take < seg;
            }
            if (nl) {
                rc = search_line(g, g->line.data ? g->line.data : "",
                                 g->line.len, lineno);
                if (rc)
                    return rc;
                g->line.len = 0;
                overlong = false;
                lineno++;
                seg++;
            }
            p += seg;
            left -= seg;
        }
        if (g->stopped)
            return 0;
    }
    if (g->line.len > 0)
        rc = search_line(g, g->line.data, g->line.len, lineno);
    return rc;
}

static bool glob_matches(grepctx *g, const char *name)
{
    if (g->glob == NULL)
        return true;
    if (g->glob_path)
        return fnmatch(g->glob, tg__buf_cstr(&g->path) + g->rel_start,
                       FNM_PATHNAME) == 0;
    return fnmatch(g->glob, name, 0) == 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir, sorted, so output is the same from run to run. */
static int read_names(DIR *dir, char ***names_out, size_t *n_out)
{
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *d;
    while ((d = readdir(dir)) != NULL) {
        if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            char **nn = realloc(names, ncap * sizeof *nn);
            if (nn == NULL)
                goto fail;
            names = nn;
            cap = ncap;
        }
        if ((names[n] = strdup(d->d_name)) == NULL)
            goto fail;
        n++;
    }
    if (n > 1)
        qsort(names, n, sizeof *names, by_name);
    *names_out = names;
    *n_out = n;
    return 0;
fail:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return TG_ENOMEM;
}

/* Searches the directory open at dfd (taken), whose display path is in
 * g->path. */
static int search_dir(grepctx *g, int dfd, int depth)
{
    int rc = 0;
    char **names = NULL;
    size_t n = 0;
    DIR *dir = fdopendir(dfd);
    if (dir == NULL) {
        close(dfd);
        return 0; /* unreadable directories are skipped, as grep -r does */
    }
    if (read_names(dir, &names, &n) != 0) {
        rc = tg__fs_fail(g->run, TG__FS_IO, TG_ENOMEM, g->err, "out of memory");
        goto fail;
    }
    size_t base = g->path.len;
    for (size_t i = 0; i < n && !g->stopped; i++) {
        if (tg__fs_canceled(g->run, g->err)) {
            rc = TG_ECANCELED;
            goto fail;
        }
        struct stat st;
        if (fstatat(dirfd(dir), names[i], &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        bool is_dir = S_ISDIR(st.st_mode);
        if (!is_dir && (!S_ISREG(st.st_mode) || st.st_nlink > 1))
            continue; /* symlinks are never followed, devices never read,
                         hard links (perhaps leading out) never searched */
        if (is_dir &&
            (strcmp(names[i], ".git") == 0 ||
             strcmp(names[i], ".toolgate") == 0 || depth >= MAX_DEPTH))
            continue;
        if (tg__ws_is_state(g->run, &st))
            continue; /* toolgate's own, whatever its name */
        g->path.len = base;
        if ((base > 0 && g->path.data[base - 1] != '/' &&
             tg__buf_puts(&g->path, "/") != 0) ||
            tg__buf_puts(&g->path, names[i]) != 0) {
            rc = tg__fs_fail(g->run, TG__FS_IO, TG_ENOMEM, g->err,
                             "out of memory");
            goto fail;
        }
        if (!is_dir && !glob_matches(g, names[i]))
            continue;
        int fd = openat(dirfd(dir), names[i],
                        (is_dir ? O_RDONLY | O_DIRECTORY
                                : O_RDONLY | O_NONBLOCK | O_NOCTTY) |
                            O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (is_dir) {
            rc = search_dir(g, fd, depth + 1);
        } else {
            struct stat fst;
            /* the entry may have been replaced since fstatat */
            if (fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode) &&
                fst.st_nlink == 1)
                rc = search_fd(g, fd);
            close(fd);
        }
        if (rc)
            goto fail;
    }
    g->path.len = base;
    if (g->path.data)
        g->path.data[base] = '\0';
fail:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(dir);
    return rc;
}

static int compile(grepctx *g, const json_t *pattern, bool icase)
{
    int code;
    PCRE2_SIZE off;
    uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
    if (icase)
        opts |= PCRE2_CASELESS;
    g->re = pcre2_compile((PCRE2_SPTR)json_string_value(pattern),
                          json_string_length(pattern), opts, &code, &off, NULL);
    if (g->re == NULL) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(code, msg, sizeof msg);
        return tg__fs_fail(g->run, TG__FS_PATTERN, TG_EINVAL, g->err,
                           "grep: invalid pattern at offset %zu: %s",
                           (size_t)off, (const char *)msg);
    }
    /* JIT when the platform has it; the limits apply to it as well */
    pcre2_jit_compile(g->re, PCRE2_JIT_COMPLETE);
    g->md = pcre2_match_data_create_from_pattern(g->re, NULL);
    g->mctx = pcre2_match_context_create(NULL);
    if (g->md == NULL || g->mctx == NULL)
        return tg__fs_fail(g->run, TG__FS_IO, TG_ENOMEM, g->err,
                           "out of memory");
    pcre2_set_match_limit(g->mctx, MATCH_LIMIT);
    pcre2_set_depth_limit(g->mctx, DEPTH_LIMIT);
    pcre2_set_heap_limit(g->mctx, HEAP_LIMIT_KIB);
    return 0;
}

int tg__grep_run(tg__fsrun *run, const json_t *args, tg__buf *out,
                 tg_error *err)
{
    static const char *const keys[] = {"pattern",     "path",        "glob",
                                       "max_matches", "ignore_case", NULL};
    int rc, fd = -1;
    grepctx g = {.run = run, .err = err, .out = out};
    tg__buf_init(&g.line, 0);
    tg__buf_init(&g.path, 0);
    json_t *dot = NULL; /* new ref */

    if ((rc = tg__fs_args(run, "grep", args, keys, err)) ||
        (rc = tg__fs_int(run, "grep", args, "max_matches", 1, 10000, 200,
                         &g.max_matches, err)))
        return rc;
    const json_t *pattern = json_object_get(args, "pattern");   /* borrowed */
    const json_t *path = json_object_get(args, "path");         /* borrowed */
    const json_t *glob = json_object_get(args, "glob");         /* borrowed */
    const json_t *icase = json_object_get(args, "ignore_case"); /* borrowed */
    if (!json_is_string(pattern))
        return tg__fs_fail(run, TG__FS_BADARGS, TG_EINVAL, err,
                           "grep needs 'pattern', a string");
    if (path != NULL && !json_is_null(path) && !json_is_string(path))
        return tg__fs_fail(run, TG__FS_BADARGS, TG_EINVAL, err,
                           "grep: 'path' must be a string");
    if (glob != NULL && !json_is_null(glob) &&
        !(json_is_string(glob) &&
          strlen(json_string_value(glob)) == json_string_length(glob)))
        return tg__fs_fail(run, TG__FS_BADARGS, TG_EINVAL, err,
                           "grep: 'glob' must be a string without NUL bytes");
    if (icase != NULL && !json_is_null(icase) && !json_is_boolean(icase))
        return tg__fs_fail(run, TG__FS_BADARGS, TG_EINVAL, err,
                           "grep: 'ignore_case' must be true or false");
    if (path == NULL || json_is_null(path)) {
        if ((dot = json_string(".")) == NULL)
            return tg__fs_fail(run, TG__FS_IO, TG_ENOMEM, err, "out of memory");
        path = dot;
    }
    g.glob = json_string_value(glob);
    g.glob_path = g.glob && strchr(g.glob, '/') != NULL;

    if ((rc = compile(&g, pattern, json_is_true(icase))))
        goto fail;
    if ((g.chunk = malloc(CHUNK)) == NULL) {
        rc = tg__fs_fail(run, TG__FS_IO, TG_ENOMEM, err, "out of memory");
        goto fail;
    }
    /* the start itself may be reached through symlinks inside the
     * workspace; below it, none are followed */
    if ((rc = tg__ws_open(run, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, &fd,
                          err)))
        goto fail;
    /* display paths begin with the path as given ("." shows no prefix), so
     * they can be handed back to read_file as they are */
    const char *shown = json_string_value(path);
    size_t slen = strlen(shown);
    while (slen > 1 && shown[slen - 1] == '/')
        slen--;
    bool dot_start = slen == 1 && shown[0] == '.';
    if (!dot_start && tg__buf_append(&g.path, shown, slen) != 0) {
        rc = tg__fs_fail(run, TG__FS_IO, TG_ENOMEM, err, "out of memory");
        goto fail;
    }
    g.rel_start = dot_start ? 0 : slen + (shown[slen - 1] == '/' ? 0 : 1);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = tg__fs_fail(run, TG__FS_IO, TG_EIO, err, "cannot stat '%.200s'",
                         shown);
        goto fail;
    }
    if (S_ISDIR(st.st_mode)) {
        int dfd = fd;
        fd = -1;
        rc = search_dir(&g, dfd, 0);
    } else if (S_ISREG(st.st_mode)) {
        rc = search_fd(&g, fd);
    } else {
        rc = tg__fs_fail(run, TG__FS_NOTFILE, TG_EINVAL, err,
                         "'%.200s' is neither a file nor a directory", shown);
    }
    if (rc == 0 && g.stopped &&
        tg__buf_printf(out, "[grep: stopped after %lld matches]\n",
                       (long long)g.max_matches) != 0)
        rc = tg__fs_fail(run, TG__FS_IO, TG_ENOMEM, err, "out of memory");
fail:
    if (fd >= 0)
        close(fd);
    free(g.chunk);
    tg__buf_cleanup(&g.line);
    tg__buf_cleanup(&g.path);
    pcre2_match_context_free(g.mctx);
    pcre2_match_data_free(g.md);
    pcre2_code_free(g.re);
    json_decref(dot);
    return rc;
}
