/* SPDX-License-Identifier: MIT */
/*
 * tg_test.h - what the unit tests share: where the source tree's test data
 * is, and reading a whole file. Header-only (each test is one program).
 */
#ifndef TG_TEST_H
#define TG_TEST_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* out = the source tree's path `rel` ("tests/data/formats"): under
 * $TG_SOURCE_DIR (ctest sets it), else under the tree this header was
 * compiled from. */
static inline void tg_test_source_path(char *out, size_t size, const char *rel)
{
    const char *env = getenv("TG_SOURCE_DIR");
    if (env != NULL && *env != '\0') {
        snprintf(out, size, "%s/%s", env, rel);
        return;
    }
    const char *me = __FILE__;
    const char *tail = strstr(me, "tests/unit/support/");
    int n = tail ? (int)(tail - me) : 0;
    snprintf(out, size, "%.*s%s", n, me, rel);
}

/* The whole file, NUL-terminated (its length in *len when len is not
 * NULL); NULL when it cannot be read. The caller frees it. */
static inline char *tg_test_read_file(const char *path, size_t *len)
{
    if (len != NULL)
        *len = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *grown = realloc(buf, (cap *= 2) + 1);
            if (grown == NULL)
                free(buf);
            buf = grown;
        }
    }
    fclose(f);
    if (buf != NULL)
        buf[n] = '\0';
    if (buf != NULL && len != NULL)
        *len = n;
    return buf;
}

static inline int tg_test_cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names in dir that do not start with '.': with suffix NULL
 * every name, else only names ending in suffix, given without it. *n is
 * the count; NULL when dir cannot be read. Free each name and the array. */
static inline char **tg_test_list_dir(const char *dir, const char *suffix,
                                      size_t *n)
{
    DIR *d = opendir(dir);
    *n = 0;
    if (d == NULL)
        return NULL;
    char **names = NULL;
    size_t cnt = 0, sl = suffix ? strlen(suffix) : 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' ||
            (suffix && (l <= sl || strcmp(e->d_name + l - sl, suffix) != 0)))
            continue;
        char **grown = realloc(names, (cnt + 1) * sizeof *names);
        if (grown == NULL)
            break;
        names = grown;
        names[cnt++] = strndup(e->d_name, l - sl);
    }
    closedir(d);
    if (names != NULL)
        qsort(names, cnt, sizeof *names, tg_test_cmp_names);
    *n = cnt;
    return names != NULL ? names : calloc(1, sizeof *names);
}

#endif
