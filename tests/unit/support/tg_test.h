/* SPDX-License-Identifier: MIT */
/*
 * tg_test.h - what the unit tests (and the benchmarks and fuzz targets that
 * include it) share: where the source tree's test data is, reading a whole
 * file, a temporary directory per test, a monotonic clock, whether a
 * process is still alive, writing a script. Header-only (each test is one
 * program), plain POSIX: no cmocka here, so failures are return values.
 */
#ifndef TG_TEST_H
#define TG_TEST_H

#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

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

/* nftw callback of tg_test_rmtree: removes one entry, and goes on past
 * one it cannot remove. */
static inline int tg_test_rm_entry(const char *path, const struct stat *st,
                                   int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* Removes dir and everything below it, not following links. */
static inline void tg_test_rmtree(const char *dir)
{
    nftw(dir, tg_test_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Room for the path tg_test_dir_setup makes: a test's env starts with a
 * char array of at least this many bytes. */
#define TG_TEST_DIR_MIN 64

/* cmocka setup: *state = a zeroed block of `size` bytes whose first member
 * (a char array of at least TG_TEST_DIR_MIN bytes) holds a new directory
 * /tmp/<prefix>XXXXXX. 0, or -1 with nothing made. */
static inline int tg_test_dir_setup(void **state, size_t size,
                                    const char *prefix)
{
    char *dir = calloc(1, size);
    if (dir == NULL || size < TG_TEST_DIR_MIN)
        goto fail;
    snprintf(dir, TG_TEST_DIR_MIN, "/tmp/%sXXXXXX", prefix);
    if (mkdtemp(dir) == NULL)
        goto fail;
    *state = dir;
    return 0;
fail:
    free(dir);
    return -1;
}

/* cmocka teardown of tg_test_dir_setup: removes the directory, frees. */
static inline int tg_test_dir_teardown(void **state)
{
    tg_test_rmtree(*state);
    free(*state);
    return 0;
}

/* Milliseconds on the monotonic clock. */
static inline double tg_test_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Sleeps ms milliseconds, through signals. */
static inline void tg_test_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Whether process pid runs: a process counts as gone when it no longer
 * exists or is a zombie that nobody here can reap (an orphan waiting for
 * init); pids 0 and 1 are never a test's. */
static inline int tg_test_alive(long pid)
{
    if (pid <= 1 || kill((pid_t)pid, 0) != 0)
        return 0;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p != NULL && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* Whether process pid is gone within about ms milliseconds (polled every
 * 10 ms). */
static inline int tg_test_dead_within(long pid, int ms)
{
    for (int i = 0; i < ms / 10; i++) {
        if (!tg_test_alive(pid))
            return 1;
        tg_test_sleep_ms(10);
    }
    return !tg_test_alive(pid);
}

/* Writes an executable shell script dir/name: "#!/bin/sh", then body. 0,
 * or -1. */
static inline int tg_test_write_script(const char *dir, const char *name,
                                       const char *body)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    int bad = fprintf(f, "#!/bin/sh\n%s\n", body) < 0;
    bad |= fclose(f) != 0;
    return bad || chmod(path, 0755) != 0 ? -1 : 0;
}

/* A new string: head, n copies of c, then tail (caller frees); NULL when
 * out of memory. Large arguments: tg_test_fill("{\"a\":\"", 'x', n, "\"}"). */
static inline char *tg_test_fill(const char *head, int c, size_t n,
                                 const char *tail)
{
    size_t hl = strlen(head), tl = strlen(tail);
    char *s = malloc(hl + n + tl + 1);
    if (s == NULL)
        return NULL;
    memcpy(s, head, hl);
    memset(s + hl, c, n);
    memcpy(s + hl + n, tail, tl + 1);
    return s;
}

/* A "Name:  N kB" field of /proc/self/status ("VmRSS", "VmHWM") in KiB, or
 * -1. */
static inline long tg_test_status_kib(const char *name)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t nl = strlen(name);
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, name, nl) == 0 && line[nl] == ':' &&
            sscanf(line + nl + 1, "%ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

/* Runs fn(arg) in a child process (for tests that mount a file system in
 * a namespace of their own) and returns its exit status: 0 passed, 77 the
 * machine cannot do it (skip), anything else failed; -1 when the child
 * could not be run or died by a signal. */
static inline int tg_test_in_child(int (*fn)(const char *), const char *arg)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        _exit(fn(arg));
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

#endif
