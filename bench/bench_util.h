/* SPDX-License-Identifier: MIT */
/*
 * bench_util.h - small helpers shared by the benchmarks: a monotonic clock,
 * medians, running a peer command and reading one number from its JSON line.
 */
#ifndef TG_BENCH_UTIL_H
#define TG_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

#endif
