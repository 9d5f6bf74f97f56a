/* SPDX-License-Identifier: MIT */
/*
 * bench_spawn.c - command tools: calls per second of a /bin/true command
 * tool through the runtime, sequential (--parallel 1) and with the default
 * parallelism, against the limit (a C loop of posix_spawn + waitpid) and the
 * peer (Node's child_process.spawn awaited one by one), all in this run.
 * The spawning machinery alone: sandbox.mode "off" (bench_sandbox measures
 * what bubblewrap adds). Beside each ratio, what the runtime adds to a call
 * in microseconds: its time per call minus the limit's in the same round
 * (the median over the rounds).
 * Usage: bench_spawn [CALLS] [PEER_DIR]   (PEER_DIR holds peer_spawn.mjs)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "toolgate.h"

#define ROUNDS 5

static double limit_rate(int n)
{
    double s = bench_spawn_true_seconds(n);
    return s > 0 ? n / s : -1;
}

static double toolgate_rate(int n, int parallel)
{
    char cfgtext[256];
    snprintf(cfgtext, sizeof cfgtext,
             "{\"journal\": null, \"builtin_tools\": [], \"limits\": "
             "{\"parallel\": %d}, \"sandbox\": {\"mode\": \"off\"}, "
             "\"tools\": [{\"name\": \"true\", \"command\": "
             "[\"/bin/true\"]}]}",
             parallel);
    double s = bench_true_turn_seconds(cfgtext, n, 0);
    return s > 0 ? n / s : -1;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 1000;
    const char *peer_dir = argc > 2 ? argv[2] : "bench";
    if (n <= 0)
        n = 1000;
    limit_rate(50); /* warm the page cache and the dynamic loader */
    /* Interleaved rounds, median of each: the machine's noise hits all
     * three alike. */
    double lim_s[ROUNDS], seq_s[ROUNDS], par_s[ROUNDS];
    double seq_us[ROUNDS], par_us[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        lim_s[r] = limit_rate(n);
        seq_s[r] = toolgate_rate(n, 1);
        par_s[r] = toolgate_rate(n, 8);
        seq_us[r] = 1e6 / seq_s[r] - 1e6 / lim_s[r];
        par_us[r] = 1e6 / par_s[r] - 1e6 / lim_s[r];
    }
    double limit = bench_median(lim_s, ROUNDS);
    double seq = bench_median(seq_s, ROUNDS);
    double par = bench_median(par_s, ROUNDS);
    double seq_over = bench_median(seq_us, ROUNDS);
    double par_over = bench_median(par_us, ROUNDS);
    double node = bench_peer_spawn_rate(peer_dir, n);
    printf("bench_spawn: %d calls of /bin/true, median of %d interleaved "
           "rounds\n",
           n, ROUNDS);
    printf("  limit  C posix_spawn+waitpid loop  %8.0f calls/s\n", limit);
    printf("  peer   node child_process.spawn    %8.0f calls/s\n", node);
    printf("  toolgate --parallel 1              %8.0f calls/s  = %.2fx limit "
           "(goal >= 0.90), %.2fx node, %+.1f us/call over the limit\n",
           seq, seq / limit, seq / node, seq_over);
    printf("  toolgate default parallel (8)      %8.0f calls/s  = %.2fx limit "
           "(goal >= 1.50), %.2fx node, %+.1f us/call of wall time\n",
           par, par / limit, par / node, par_over);
    return seq > 0 && par > 0 ? 0 : 1;
}
