/* SPDX-License-Identifier: MIT */
/*
 * pingpong.c - the sequential limit of an MCP server over stdio: two
 * processes pass one small message (a JSON-RPC-sized line) back and forth
 * over a pair of pipes N times, and the round trip in microseconds is what
 * no server answering one call at a time over pipes can beat. Measured with
 * both processes pinned to one CPU (each round trip is two context
 * switches on that CPU) and pinned to two different CPUs (each wake-up
 * crosses CPUs), because the two give very different figures and a
 * server's sequential calls/s must be compared with the limit under the
 * same placement (issue 15, "Performance").
 *
 * Usage: pingpong [--round-trips N] [--rounds R] [--size BYTES] [--json]
 *   N round trips (default 100000) per round, the median of R rounds
 *   (default 5), messages of BYTES bytes (default 100). The CPUs are the
 *   first two this process may run on; with only one, "across" is skipped.
 *   A child that dies or stalls ends the run with an error (status 1):
 *   nothing waits longer than 30 s.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

#define STALL_SECONDS 30

static void on_alarm(int sig)
{
    static const char msg[] = "pingpong: no progress in 30 s, giving up\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    (void)sig;
    _exit(1);
}

/* Reads exactly n bytes: 0, or -1 at EOF or on an error. */
static int read_full(int fd, char *p, size_t n)
{
    while (n > 0) {
        ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

static int write_full(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* One round: a child on cpu_b echoing what arrives, this process on cpu_a
 * sending n messages of size bytes one after another; the microseconds per
 * round trip, or -1 after saying why on stderr. */
static double round_trip_us(int cpu_a, int cpu_b, long n, size_t size)
{
    int ping[2], pong[2];
    if (pipe(ping) != 0 || pipe(pong) != 0) {
        perror("pingpong: pipe");
        return -1;
    }
    char *msg = malloc(size);
    if (msg == NULL) {
        fputs("pingpong: out of memory\n", stderr);
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        perror("pingpong: fork");
        free(msg);
        return -1;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        close(ping[1]);
        close(pong[0]);
        if (bench_pin_cpu(cpu_b) != 0)
            _exit(3);
        /* echo until the parent closes its end */
        while (read_full(ping[0], msg, size) == 0)
            if (write_full(pong[1], msg, size) != 0)
                _exit(1);
        _exit(0);
    }
    close(ping[0]);
    close(pong[1]);
    double us = -1;
    if (bench_pin_cpu(cpu_a) != 0) {
        perror("pingpong: sched_setaffinity");
        goto done;
    }
    memset(msg, 'x', size);
    msg[0] = '{';
    msg[size - 1] = '\n';
    for (long i = 0; i < 1000; i++) /* warm up: both processes running */
        if (write_full(ping[1], msg, size) || read_full(pong[0], msg, size))
            goto broken;
    double t0 = bench_now();
    for (long i = 0; i < n; i++) {
        alarm(STALL_SECONDS);
        if (write_full(ping[1], msg, size) || read_full(pong[0], msg, size))
            goto broken;
    }
    us = (bench_now() - t0) / (double)n * 1e6;
    alarm(0);
    goto done;
broken:
    fputs("pingpong: the echoing child stopped answering\n", stderr);
done:
    close(ping[1]);
    close(pong[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (us >= 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        fprintf(stderr, "pingpong: the echoing child failed (status %d)\n",
                WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        us = -1;
    }
    free(msg);
    return us;
}

/* The median of rounds rounds, or -1 when one fails. */
static double median_us(int a, int b, long n, int rounds, size_t size)
{
    double v[64];
    for (int i = 0; i < rounds; i++)
        if ((v[i] = round_trip_us(a, b, n, size)) < 0)
            return -1;
    return bench_median(v, rounds);
}

int main(int argc, char **argv)
{
    long n = 100000, rounds = 5, size = 100;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--round-trips") == 0)
            n = bench_arg_long("pingpong", argv[i], argv[i + 1], 1, 1000000000),
            i++;
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = bench_arg_long("pingpong", argv[i], argv[i + 1], 1, 64),
            i++;
        else if (strcmp(argv[i], "--size") == 0)
            size = bench_arg_long("pingpong", argv[i], argv[i + 1], 2, 65536),
            i++;
        else {
            fputs("usage: pingpong [--round-trips N] [--rounds R] "
                  "[--size BYTES] [--json]\n",
                  stderr);
            return 2;
        }
    }
    signal(SIGALRM, on_alarm);
    int cpu[2];
    int found = bench_two_cpus(cpu);
    if (found == 0) {
        perror("pingpong: sched_getaffinity");
        return 1;
    }
    double same = median_us(cpu[0], cpu[0], n, (int)rounds, (size_t)size);
    if (same < 0)
        return 1;
    double across = -1;
    if (found == 2 &&
        (across = median_us(cpu[0], cpu[1], n, (int)rounds, (size_t)size)) < 0)
        return 1;
    if (json) {
        printf("{\"round_trips\":%ld,\"size\":%ld,\"pinned_one_cpu_us\":%.2f,"
               "\"across_cpus_us\":%.2f}\n",
               n, size, same, across);
        return 0;
    }
    printf("pipe ping-pong, %ld-byte messages, %ld round trips, median of "
           "%ld rounds\n",
           size, n, rounds);
    printf("  both pinned to CPU %d      %7.2f us/round trip  (%.0f/s)\n",
           cpu[0], same, 1e6 / same);
    if (across > 0)
        printf("  pinned to CPUs %d and %d    %7.2f us/round trip  (%.0f/s)\n",
               cpu[0], cpu[1], across, 1e6 / across);
    else
        printf("  across two CPUs: skipped (this process may use one CPU)\n");
    return 0;
}
