/* SPDX-License-Identifier: MIT */
/*
 * tg_test.h - what the unit tests (and the benchmarks and fuzz targets that
 * include it) share: where the source tree's test data is, where the shared
 * test data is (and skipping, in ctest's terms, when it is absent), reading
 * a whole file, a temporary directory per test, a monotonic clock, the time
 * scale every time bound is multiplied by, whether a process is still
 * alive, writing a script. Header-only (each test is one program), plain
 * POSIX: no cmocka here, so failures are return values.
 *
 * Time bounds (README, "Tests"): a test whose verdict involves time writes
 * every deadline, wait and elapsed-time limit as tg_test_ms(N), derives N
 * from what it measured first or keeps N >= 3x what the work takes, and is
 * labelled `timing` in tests/CMakeLists.txt.
 */
#ifndef TG_TEST_H
#define TG_TEST_H

#include <dirent.h>
#include <errno.h>
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

/* The length of the source tree's prefix ("/work/toolgate/") of this
 * header's path as compiled, __FILE__. */
static inline int tg_test_tree_len(void)
{
    const char *tail = strstr(__FILE__, "tests/unit/support/");
    return tail ? (int)(tail - __FILE__) : 0;
}

/* out = the source tree's path `rel` ("tests/data/formats"): under
 * $TG_SOURCE_DIR (ctest sets it), else under the tree this header was
 * compiled from. */
static inline void tg_test_source_path(char *out, size_t size, const char *rel)
{
    const char *env = getenv("TG_SOURCE_DIR");
    if (env != NULL && *env != '\0')
        snprintf(out, size, "%s/%s", env, rel);
    else
        snprintf(out, size, "%.*s%s", tg_test_tree_len(), __FILE__, rel);
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

/* ctest's skip status: tests/CMakeLists.txt gives every test
 * SKIP_RETURN_CODE 77, and a test exits with it when something it needs is
 * not on this machine (saying what). */
#define TG_TEST_SKIP 77

/* Whether CI=true (or 1) is in the environment: CI runs must not skip for
 * want of data. */
static inline int tg_test_in_ci(void)
{
    const char *ci = getenv("CI");
    return ci != NULL && (strcmp(ci, "true") == 0 || strcmp(ci, "1") == 0);
}

/* The count of shared-data items found missing by tg_test_have_data in this
 * program (one program per test, so one count). */
static inline int *tg_test_data_missing(void)
{
    static int missing;
    return &missing;
}

/* out = `rel` ("mcp/schema-2025-11-25.json") under the shared test data:
 * $TG_TEST_DATA_DIR (ctest sets it from the CMake cache variable of that
 * name, default ../shared/data beside the source tree), else
 * ../shared/data beside the tree this header was compiled from. */
static inline void tg_test_data_path(char *out, size_t size, const char *rel)
{
    const char *env = getenv("TG_TEST_DATA_DIR");
    if (env != NULL && *env != '\0') {
        snprintf(out, size, "%s/%s", env, rel);
        return;
    }
    snprintf(out, size, "%.*s../shared/data/%s", tg_test_tree_len(), __FILE__,
             rel);
}

/* Whether `path` (made by tg_test_data_path), the data that `what` needs,
 * exists. When it does not, says so on stderr, naming TG_TEST_DATA_DIR, and
 * counts it for tg_test_exit: the caller skips what needs it. */
static inline int tg_test_have_data(const char *path, const char *what)
{
    struct stat st;
    if (stat(path, &st) == 0)
        return 1;
    int e = errno;
    fprintf(stderr,
            "%s: %s: cannot open %s: %s; point TG_TEST_DATA_DIR at the "
            "shared test data (README, \"Tests\")\n",
            tg_test_in_ci() ? "FAIL (CI=true, data missing)" : "SKIP", what,
            path, strerror(e));
    (*tg_test_data_missing())++;
    return 0;
}

/* main's exit status, given how many tests failed: 1 when any failed, or
 * when shared data was missing under CI=true; TG_TEST_SKIP when it was
 * missing elsewhere (ctest then reports the test skipped, with the reason
 * printed above); else 0. */
static inline int tg_test_exit(int failed)
{
    if (failed != 0)
        return 1;
    if (*tg_test_data_missing() == 0)
        return 0;
    return tg_test_in_ci() ? 1 : TG_TEST_SKIP;
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

/* The factor every time bound of a test is multiplied by: the whole number
 * in $TG_TEST_TIME_SCALE (ctest sets it from the CMake cache variable of
 * that name: 1, or 3 in the sanitizer build), 1 when unset. Anything else
 * than a whole number from 1 to 1000 ends the program, saying so. */
static inline long tg_test_time_scale(void)
{
    const char *s = getenv("TG_TEST_TIME_SCALE");
    if (s == NULL || *s == '\0')
        return 1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < 1 || v > 1000) {
        fprintf(stderr,
                "TG_TEST_TIME_SCALE must be a whole number from 1 to 1000, "
                "not '%s'\n",
                s);
        exit(2);
    }
    return v;
}

/* A time bound of ms milliseconds (a deadline, a wait, a limit on elapsed
 * time) times tg_test_time_scale(). The work a test times (a tool's sleep)
 * stays unscaled; only the room given to it grows. */
static inline long tg_test_ms(long ms)
{
    return ms * tg_test_time_scale();
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

/* Whether process pid is gone within ms milliseconds on the monotonic
 * clock (polled every 10 ms); callers pass a scaled bound, tg_test_ms(N). */
static inline int tg_test_dead_within(long pid, long ms)
{
    double end = tg_test_now_ms() + (double)ms;
    while (tg_test_alive(pid)) {
        if (tg_test_now_ms() >= end)
            return 0;
        tg_test_sleep_ms(10);
    }
    return 1;
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

/* A "Name:  N kB" field of /proc/PID/status ("VmRSS", "VmHWM") in KiB, or
 * -1 (no such process, or a process without memory: a zombie). */
static inline long tg_test_pid_status_kib(long pid, const char *name)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
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

/* The same field of this process's /proc/self/status. */
static inline long tg_test_status_kib(const char *name)
{
    return tg_test_pid_status_kib((long)getpid(), name);
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
