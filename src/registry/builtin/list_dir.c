/* SPDX-License-Identifier: MIT */
/*
 * list_dir.c - the list_dir built-in: the entries of a directory inside the
 * workspace as a JSON array sorted by name. Entries are examined with
 * fstatat(AT_SYMLINK_NOFOLLOW) relative to the directory's descriptor, so a
 * symlink is reported as one, never followed.
 */
#include "workspace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

#define MAX_ENTRIES 100000

const char tg__list_dir_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\",\"description\":\"Directory to list, "
    "relative to the workspace (default \\\".\\\")\"}},"
    "\"additionalProperties\":false}";

typedef struct entry {
    char *name;
    const char *type;
    int64_t size;
} entry;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

static const char *type_of(mode_t m)
{
    if (S_ISREG(m))
        return "file";
    if (S_ISDIR(m))
        return "dir";
    if (S_ISLNK(m))
        return "symlink";
    return "other";
}

/* Writes the entries as JSON through jansson, names made valid UTF-8. */
static int write_json(const entry *e, size_t n, tg__buf *out)
{
    int rc = TG_ENOMEM;
    tg__buf name;
    tg__buf_init(&name, 0);
    json_t *arr = json_array(); /* new ref */
    if (arr == NULL)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        name.len = 0;
        if (tg__utf8_append(&name, e[i].name, strlen(e[i].name)) != 0)
            goto fail;
        json_t *o = json_pack("{s:s%,s:s,s:I}", "name", tg__buf_cstr(&name),
                              name.len, "type", e[i].type, "size",
                              (json_int_t)e[i].size); /* new ref */
        if (o == NULL || json_array_append_new(arr, o) != 0)
            goto fail;
    }
    char *text = json_dumps(arr, JSON_COMPACT);
    if (text == NULL)
        goto fail;
    rc = tg__buf_puts(out, text);
    free(text);
fail:
    json_decref(arr);
    tg__buf_cleanup(&name);
    return rc;
}

int tg__list_dir_run(tg__fsrun *run, const json_t *args, tg__buf *out,
                     tg_error *err)
{
    static const char *const keys[] = {"path", NULL};
    int rc, fd = -1;
    DIR *dir = NULL;
    entry *ents = NULL;
    size_t n = 0, cap = 0;
    json_t *dot = NULL; /* new ref */

    if ((rc = tg__fs_args(run, "list_dir", args, keys, err)))
        return rc;
    const json_t *path = json_object_get(args, "path"); /* borrowed */
    if (path == NULL || json_is_null(path)) {
        if ((dot = json_string(".")) == NULL)
            return tg__fs_fail(run, TG__FS_IO, TG_ENOMEM, err, "out of memory");
        path = dot;
    }
    if (!json_is_string(path)) {
        rc = tg__fs_fail(run, TG__FS_BADARGS, TG_EINVAL, err,
                         "list_dir: 'path' must be a string");
        goto fail;
    }
    const char *pname = json_string_value(path);
    if ((rc = tg__ws_open(run, path, O_RDONLY | O_DIRECTORY, &fd, err)))
        goto fail;
    if ((dir = fdopendir(fd)) == NULL) {
        rc = tg__fs_fail(run, TG__FS_IO, TG_EIO, err,
                         "cannot list '%.200s': %s", pname, strerror(errno));
        goto fail;
    }
    fd = -1; /* owned by dir now */
    for (;;) {
        errno = 0;
        struct dirent *d = readdir(dir);
        if (d == NULL) {
            if (errno != 0) {
                rc = tg__fs_fail(run, TG__FS_IO, TG_EIO, err,
                                 "cannot list '%.200s': %s", pname,
                                 strerror(errno));
                goto fail;
            }
            break;
        }
        if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* removed while listing */
        if (n == MAX_ENTRIES) {
            rc = tg__fs_fail(run, TG__FS_TOO_MANY, TG_ELIMIT, err,
                             "'%.200s' has more than %d entries; list a "
                             "subdirectory or use grep with a glob",
                             pname, MAX_ENTRIES);
            goto fail;
        }
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            entry *ne = realloc(ents, ncap * sizeof *ne);
            if (ne == NULL) {
                rc = tg__fs_fail(run, TG__FS_IO, TG_ENOMEM, err,
                                 "out of memory");
                goto fail;
            }
            ents = ne;
            cap = ncap;
        }
        ents[n].name = strdup(d->d_name);
        if (ents[n].name == NULL) {
            rc = tg__fs_fail(run, TG__FS_IO, TG_ENOMEM, err, "out of memory");
            goto fail;
        }
        ents[n].type = type_of(st.st_mode);
        ents[n].size = (int64_t)st.st_size;
        n++;
    }
    if (n > 1)
        qsort(ents, n, sizeof *ents, by_name);
    if ((rc = write_json(ents, n, out)) != 0)
        rc =
            tg__fs_fail(run, TG__FS_IO, rc, err,
                        rc == TG_ELIMIT ? "the listing exceeds the output limit"
                                        : "out of memory");
fail:
    for (size_t i = 0; i < n; i++)
        free(ents[i].name);
    free(ents);
    if (dir)
        closedir(dir);
    if (fd >= 0)
        close(fd);
    json_decref(dot);
    return rc;
}
