/* SPDX-License-Identifier: MIT */
/*
 * bench_spool.c - the spool (issue 7), against its limits in the same run:
 *   (a) a real subprocess (a forked generator of log lines) writes MIB MiB
 *       into a pipe; the benchmark reads the pipe and feeds the spool's
 *       writer (hash, line count, text check, temporary file, fsync,
 *       content-addressed commit). The limit: the same generator piped into
 *       `cat > FILE` on the same file system (and, for information, the
 *       same followed by an fsync of FILE). Reported: MiB/s of each, the
 *       ratio (goal >= 0.8x cat), and the benchmark process's peak RSS
 *       (VmHWM, goal <= 32 MiB).
 *   (b) artifact_grep's search (count of matching lines) over the artifact
 *       written in (a) against GNU `grep -c PATTERN FILE` on the same file
 *       (goal >= 1.0x), for a rare literal and a regular expression.
 * Rounds alternate toolgate and the limit, each step starting after a
 * sync(2) (nothing dirty left by the step before); medians are reported.
 * Usage: bench_spool [--dir DIR] [--mib N] [--rounds N]
 *   DIR (default ./bench-spool.tmp) is created and removed; it must be on
 *   the disk to measure. Needs about 2 * MIB MiB free there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "bench_util.h"
#include "spool.h"
#include "tg_test.h"

#define MAX_ROUNDS 9
#define PIPE_READ (256 * 1024)
#define BLOCK (4 << 20) /* the generator's repeating block */

static const char *const patterns[] = {
    "status=503",                        /* a rare literal */
    "id=[0-9a-f]{6}ff path=/api/v2/\\w+" /* a regular expression */
};

/* The generator: log lines, MIB MiB of them, into fd. Runs in the child. */
static void generate(int fd, uint64_t bytes)
{
    char *block = malloc(BLOCK);
    if (block == NULL)
        _exit(1);
    size_t len = 0;
    unsigned x = 12345;
    for (unsigned i = 0; len < BLOCK - 200; i++) {
        x = x * 1103515245u + 12345u;
        int n = snprintf(
            block + len, BLOCK - len,
            "2026-11-22T10:%02u:%02u.%03uZ %s worker-%02u request id=%08x "
            "path=/api/v%u/items/%u status=%u bytes=%u\n",
            (i / 60000) % 60, (i / 1000) % 60, i % 1000,
            i % 997 == 0 ? "WARN" : "INFO", x % 16, x, 1 + (x >> 8) % 2,
            (x >> 4) % 100000, i % 20011 == 0 ? 503 : 200, (x >> 12) % 65536);
        len += (size_t)n;
    }
    /* whole lines only, so the block repeats cleanly */
    uint64_t left = bytes;
    while (left > 0) {
        size_t n = left < len ? (size_t)left : len;
        const char *p = block;
        while (n > 0) {
            ssize_t w = write(fd, p, n);
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                _exit(1);
            }
            p += w;
            n -= (size_t)w;
            left -= (uint64_t)w;
        }
    }
    _exit(0);
}

static pid_t start_generator(uint64_t bytes, int *read_fd)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        generate(p[1], bytes);
    }
    close(p[1]);
    *read_fd = p[0];
    return pid;
}

static double cpu_s(const struct rusage *ru)
{
    return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
           (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
}

static double self_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return cpu_s(&ru);
}

/* (a) toolgate: the generator's pipe through the spool writer. Returns
 * seconds, or -1; the artifact id in id. */
static double spool_round(const char *spool_dir, uint64_t bytes, char *id,
                          double *finish_s, double *cpu)
{
    double c0 = self_cpu_s(); /* this process and the writer's thread */
    tg_spool *sp = NULL;
    tg_error err = {0};
    double t0 = bench_now();
    if (tg__spool_open(spool_dir, 0, 0, &sp, &err) != 0) {
        fprintf(stderr, "spool: %s\n", err.message);
        return -1;
    }
    int fd;
    pid_t pid = start_generator(bytes, &fd);
    tg__spool_writer *w = NULL;
    if (pid < 0 || tg__spool_writer_new(sp, 16384, &w, &err) != 0)
        return -1;
    char *buf = malloc(PIPE_READ);
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, buf, PIPE_READ);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if ((rc = tg__spool_writer_write(w, buf, (size_t)n, &err)) != 0)
            break;
    }
    free(buf);
    close(fd);
    int st;
    waitpid(pid, &st, 0);
    tg__spool_outcome o;
    double tf = bench_now();
    if (rc != 0 || tg__spool_writer_finish(w, &o, &err) != 0) {
        fprintf(stderr, "spool write: %s\n", err.message);
        return -1;
    }
    double t = bench_now() - t0;
    *finish_s = bench_now() - tf;
    *cpu = self_cpu_s() - c0;
    snprintf(id, TG_SPOOL_ID_LEN + 1, "%s",
             json_string_value(json_object_get(o.artifact, "id")));
    if ((uint64_t)json_integer_value(json_object_get(o.artifact, "bytes")) !=
        bytes) {
        fprintf(stderr, "spool: short artifact\n");
        t = -1;
    }
    tg__spool_outcome_cleanup(&o);
    tg__spool_free(sp);
    return t;
}

/* (a) the limit: the generator's pipe into `cat > path`; with do_fsync the
 * file is then fsynced (what the spool's commit also does). */
static double cat_round(const char *path, uint64_t bytes, int do_fsync,
                        double *cpu)
{
    double t0 = bench_now();
    int fd = -1;
    pid_t gen = start_generator(bytes, &fd);
    if (gen < 0)
        return -1;
    pid_t cat = fork();
    if (cat == 0) {
        int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (out < 0 || dup2(fd, 0) < 0 || dup2(out, 1) < 0)
            _exit(127);
        execlp("cat", "cat", (char *)NULL);
        _exit(127);
    }
    close(fd);
    int st1, st2;
    struct rusage ru;
    waitpid(gen, &st1, 0);
    wait4(cat, &st2, 0, &ru);
    *cpu = cpu_s(&ru); /* cat alone (the fsync is the kernel's, below) */
    if (!WIFEXITED(st2) || WEXITSTATUS(st2) != 0)
        return -1;
    if (do_fsync) {
        int f = open(path, O_RDONLY);
        if (f < 0 || fsync(f) != 0)
            return -1;
        close(f);
    }
    return bench_now() - t0;
}

/* (b) toolgate: count of matching lines. */
static double our_grep(tg_spool *sp, const char *id, const char *pattern,
                       long long *count)
{
    tg__spool_grep_opts o = {
        .pattern = pattern, .pattern_len = strlen(pattern), .count_only = true};
    json_t *res = NULL;
    tg_error err = {0};
    double t0 = bench_now();
    if (tg__spool_grep(sp, id, &o, &res, &err) != 0) {
        fprintf(stderr, "grep: %s\n", err.message);
        return -1;
    }
    double t = bench_now() - t0;
    *count = json_integer_value(json_object_get(res, "count"));
    json_decref(res);
    return t;
}

/* (b) GNU grep -c (extended syntax; PCRE2's \w is grep -E's \w too). */
static double gnu_grep(const char *path, const char *pattern, long long *count)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    double t0 = bench_now();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        execlp("grep", "grep", "-c", "-E", "--", pattern, path, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char out[64] = "";
    ssize_t n = read(p[0], out, sizeof out - 1);
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    double t = bench_now() - t0;
    if (n <= 0 || !WIFEXITED(st) || WEXITSTATUS(st) > 1)
        return -1;
    out[n] = '\0';
    *count = strtoll(out, NULL, 10);
    return t;
}

int main(int argc, char **argv)
{
    const char *dir = "bench-spool.tmp";
    long long mib = 1024;
    int rounds = 3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--mib") == 0 && i + 1 < argc)
            mib = strtoll(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = (int)strtol(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_spool [--dir DIR] [--mib N] "
                            "[--rounds N]\n");
            return 2;
        }
    }
    if (mib < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "bench_spool: bad --mib or --rounds\n");
        return 2;
    }
    uint64_t bytes = (uint64_t)mib << 20;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        perror(dir);
        return 1;
    }
    char spool_dir[4096], cat_path[4096];
    snprintf(spool_dir, sizeof spool_dir, "%s/spool", dir);
    snprintf(cat_path, sizeof cat_path, "%s/cat.out", dir);
    printf("bench_spool: %lld MiB of log lines from a forked generator "
           "through a pipe, %d alternations, medians; dir %s\n",
           mib, rounds, dir);

    double ts[MAX_ROUNDS], tc[MAX_ROUNDS], tf[MAX_ROUNDS], fin[MAX_ROUNDS];
    double cs[MAX_ROUNDS], cc[MAX_ROUNDS], cf[MAX_ROUNDS];
    char id[TG_SPOOL_ID_LEN + 1] = "";
    for (int r = 0; r < rounds; r++) {
        /* a fresh spool each time, so no round is a dedupe */
        tg_test_rmtree(spool_dir);
        /* Each step starts with nothing dirty in the page cache: cat
         * without fsync leaves a GiB for the kernel to write back, which
         * would otherwise land in the next step's time. */
        sync();
        ts[r] = spool_round(spool_dir, bytes, id, &fin[r], &cs[r]);
        sync();
        tc[r] = cat_round(cat_path, bytes, 0, &cc[r]);
        sync();
        unlink(cat_path);
        sync();
        tf[r] = cat_round(cat_path, bytes, 1, &cf[r]);
        unlink(cat_path);
        sync();
        if (ts[r] < 0 || tc[r] < 0 || tf[r] < 0) {
            fprintf(stderr, "bench_spool: a round failed\n");
            return 1;
        }
        printf("  round %d: spool %.2f s (finish: fsync + commit %.2f s; "
               "%.2f s CPU), cat %.2f s (%.2f s CPU), cat+fsync %.2f s (%.2f s "
               "CPU)\n",
               r + 1, ts[r], fin[r], cs[r], tc[r], cc[r], tf[r], cf[r]);
    }
    long hwm = tg_test_status_kib("VmHWM");
    double ms = bench_median(ts, rounds), mc = bench_median(tc, rounds),
           mf = bench_median(tf, rounds);
    double mb = (double)bytes / (1 << 20);
    printf("  limit  cat > file                 %8.0f MiB/s\n", mb / mc);
    printf("  limit  cat > file + fsync         %8.0f MiB/s\n", mb / mf);
    printf("  toolgate spool writer (fsync)     %8.0f MiB/s  = %.2fx cat "
           "(goal >= 0.80), %.2fx cat+fsync\n",
           mb / ms, mc / ms, mf / ms);
    printf("  peak RSS of this process (VmHWM)  %8.1f MiB (goal <= 32)\n",
           (double)hwm / 1024);
    double mcs = bench_median(cs, rounds), mcc = bench_median(cc, rounds);
    printf("  CPU per GiB: spool %.2f s (hash, count, copy, write), cat "
           "%.2f s\n",
           mcs * 1024 / mb, mcc * 1024 / mb);

    /* (b) grep over the last artifact */
    tg_spool *sp = NULL;
    tg_error err = {0};
    if (tg__spool_open(spool_dir, 0, 0, &sp, &err) != 0) {
        fprintf(stderr, "spool: %s\n", err.message);
        return 1;
    }
    char art_path[4200];
    snprintf(art_path, sizeof art_path, "%s/%.2s/%s", spool_dir, id + 4, id);
    printf("bench_spool: grep -c over the %lld MiB artifact %s, "
           "LC_ALL=%s LANG=%s\n",
           mib, id, getenv("LC_ALL") ? getenv("LC_ALL") : "(unset)",
           getenv("LANG") ? getenv("LANG") : "(unset)");
    int status = 0;
    for (size_t k = 0; k < sizeof patterns / sizeof patterns[0]; k++) {
        double tg[MAX_ROUNDS], gg[MAX_ROUNDS];
        long long c1 = -1, c2 = -2;
        for (int r = 0; r < rounds; r++) {
            tg[r] = our_grep(sp, id, patterns[k], &c1);
            gg[r] = gnu_grep(art_path, patterns[k], &c2);
            if (tg[r] < 0 || gg[r] < 0 || c1 != c2) {
                fprintf(stderr,
                        "bench_spool: grep failed or counts differ (%lld vs "
                        "%lld)\n",
                        c1, c2);
                status = 1;
                break;
            }
        }
        if (status)
            break;
        double mt = bench_median(tg, rounds), mg = bench_median(gg, rounds);
        printf("  '%s' (%lld lines)\n", patterns[k], c1);
        printf("    GNU grep -c              %8.0f MiB/s (%.3f s)\n", mb / mg,
               mg);
        printf("    toolgate artifact_grep   %8.0f MiB/s (%.3f s)  = %.2fx "
               "grep (goal >= 1.0)\n",
               mb / mt, mt, mg / mt);
    }
    tg__spool_free(sp);
    tg_test_rmtree(dir);
    return status;
}
