/* SPDX-License-Identifier: MIT */
/*
 * bench_util.h - small helpers shared by the benchmarks: a monotonic clock,
 * medians, running a peer command and reading one number from its JSON line,
 * and the spawn benchmarks' limit (a posix_spawn + waitpid loop), their
 * turn of /bin/true calls through the runtime and their Node peer; for
 * bench/mcp, a count option's value and pinning to CPUs.
 */
#ifndef TG_BENCH_UTIL_H
#define TG_BENCH_UTIL_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "toolgate.h"

extern char **environ;

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of n samples (sorts them in place). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return v[n / 2];
}

/* Runs a shell command line of the benchmark's own making (never input) and
 * returns the number after "\"key\":" in its first output line, or -1. */
static inline double bench_peer_number(const char *cmdline, const char *key)
{
    FILE *p = popen(cmdline, "r");
    if (p == NULL)
        return -1;
    char line[4096] = "";
    if (fgets(line, sizeof line, p) == NULL)
        line[0] = '\0';
    int rc = pclose(p);
    if (rc != 0) {
        fprintf(stderr, "peer failed (%d): %s\n", rc, cmdline);
        return -1;
    }
    char needle[128];
    snprintf(needle, sizeof needle, "\"%s\":", key);
    const char *at = strstr(line, needle);
    return at ? strtod(at + strlen(needle), NULL) : -1;
}

/* Seconds to posix_spawn /bin/true and wait for it n times in a row, or -1
 * when a spawn fails: the limit of a command tool's call. */
static inline double bench_spawn_true_seconds(int n)
{
    char *argv[] = {"/bin/true", NULL};
    double t0 = bench_now();
    for (int i = 0; i < n; i++) {
        pid_t pid;
        if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) != 0)
            return -1;
        int st;
        waitpid(pid, &st, 0);
    }
    return bench_now() - t0;
}

struct bench_spawn_share {
    int n;
    int failed;
};

static inline void *bench_spawn_share_run(void *arg)
{
    struct bench_spawn_share *share = arg;
    share->failed = bench_spawn_true_seconds(share->n) < 0;
    return NULL;
}

/* Seconds of wall time for n spawns of /bin/true made by k threads at once
 * (each a posix_spawn + waitpid loop of its share), or -1: how spawning
 * scales with this machine's cores, the limit of calls run in parallel. */
static inline double bench_spawn_true_parallel_seconds(int n, int k)
{
    pthread_t th[64];
    struct bench_spawn_share share[64];
    if (k < 1 || k > 64)
        return -1;
    double t0 = bench_now();
    int started = 0, failed = 0;
    for (; started < k; started++) {
        share[started].n = n / k + (started < n % k);
        share[started].failed = 0;
        if (pthread_create(&th[started], NULL, bench_spawn_share_run,
                           &share[started]) != 0) {
            failed = 1;
            break;
        }
    }
    for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        failed |= share[i].failed;
    }
    return failed ? -1 : bench_now() - t0;
}

/* Seconds to run one turn of n calls of the command tool "true" through a
 * runtime of the configuration cfgtext (JSON), or -1 when anything fails
 * (said on stderr); with strict, a runtime warning (the sandbox not in
 * force) fails too. */
static inline double bench_true_turn_seconds(const char *cfgtext, int n,
                                             int strict)
{
    tg_error err = {0};
    tg_config *cfg = tg_config_new();
    tg_runtime *rt = NULL;
    tg_turn *turn = NULL;
    double dt = -1;
    size_t cap = (size_t)n * 48 + 1, len = 0;
    char *text = malloc(cap);
    if (cfg == NULL || text == NULL ||
        tg_config_load(cfg, cfgtext, strlen(cfgtext), NULL, &err) != 0 ||
        tg_runtime_new(cfg, &rt, &err) != 0)
        goto done;
    if (strict && tg_runtime_warning(rt) != NULL) {
        fprintf(stderr, "toolgate: %s\n", tg_runtime_warning(rt));
        goto done;
    }
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "{\"id\":\"c%d\",\"tool\":\"true\"}\n", i);
    if (tg_turn_parse(text, len, "toolgate", "bench", &turn, &err) != 0)
        goto done;
    double t0 = bench_now();
    if (tg_runtime_run_turn(rt, turn, &err) != 0)
        goto done;
    double spent = bench_now() - t0;
    for (int i = 0; i < n; i++)
        if (!tg_result_succeeded(tg_turn_result(turn, (size_t)i))) {
            fprintf(stderr, "call %d failed: %s\n", i,
                    tg_result_error_message(tg_turn_result(turn, (size_t)i)));
            goto done;
        }
    dt = spent;
done:
    if (err.code)
        fprintf(stderr, "toolgate: %s\n", err.message);
    tg_turn_free(turn);
    tg_runtime_free(rt);
    tg_config_free(cfg);
    free(text);
    return dt;
}

/* Calls per second of the peer: Node's child_process.spawn of /bin/true
 * awaited n times (peer_dir/peer_spawn.mjs), or -1. */
static inline double bench_peer_spawn_rate(const char *peer_dir, int n)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "node %s/peer_spawn.mjs /bin/true %d", peer_dir,
             n);
    return bench_peer_number(cmd, "per_second");
}

/* The value v of option opt as a whole number from lo to hi; anything else
 * (or no value) is said on stderr, prefixed with prog, and exits 2. */
static inline long bench_arg_long(const char *prog, const char *opt,
                                  const char *v, long lo, long hi)
{
    char *e;
    errno = 0;
    long n = v ? strtol(v, &e, 10) : 0;
    if (v == NULL || *v == '\0' || *e != '\0' || errno || n < lo || n > hi) {
        fprintf(stderr, "%s: %s wants a whole number from %ld to %ld\n", prog,
                opt, lo, hi);
        exit(2);
    }
    return n;
}

/* Pins the calling thread (and what it forks and execs afterwards) to cpu:
 * 0, or -1 with errno set. */
static inline int bench_pin_cpu(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

/* The first two CPUs this process may run on, in cpu[0] and cpu[1] (-1
 * where there is none); how many were found (0 when the affinity mask
 * cannot be read). */
static inline int bench_two_cpus(int cpu[2])
{
    cpu_set_t set;
    int found = 0;
    cpu[0] = cpu[1] = -1;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 0;
    for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
        if (CPU_ISSET(c, &set))
            cpu[found++] = c;
    return found;
}

#endif
