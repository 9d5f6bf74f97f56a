/* SPDX-License-Identifier: MIT */
/*
 * bench_spawn.c - command tools: calls per second of a /bin/true command
 * tool through the runtime, sequential (--parallel 1) and with the default
 * parallelism, against the limit (a C loop of posix_spawn + waitpid) and the
 * peer (Node's child_process.spawn awaited one by one), all in this run.
 * The spawning machinery alone: sandbox.mode "off" (bench_sandbox measures
 * what bubblewrap adds).
 * Usage: bench_spawn [CALLS] [PEER_DIR]   (PEER_DIR holds peer_spawn.mjs)
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bench_util.h"
#include "toolgate.h"

#define ROUNDS 5

extern char **environ;

static double limit_rate(int n)
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
    return n / (bench_now() - t0);
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
    tg_error err = {0};
    tg_config *cfg = tg_config_new();
    tg_runtime *rt = NULL;
    tg_turn *turn = NULL;
    double rate = -1;
    size_t cap = (size_t)n * 48 + 1, len = 0;
    char *text = malloc(cap);
    if (cfg == NULL || text == NULL ||
        tg_config_load(cfg, cfgtext, strlen(cfgtext), NULL, &err) != 0 ||
        tg_runtime_new(cfg, &rt, &err) != 0)
        goto done;
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "{\"id\":\"c%d\",\"tool\":\"true\"}\n", i);
    if (tg_turn_parse(text, len, "toolgate", "bench", &turn, &err) != 0)
        goto done;
    double t0 = bench_now();
    if (tg_runtime_run_turn(rt, turn, &err) != 0)
        goto done;
    double dt = bench_now() - t0;
    for (int i = 0; i < n; i++)
        if (!tg_result_succeeded(tg_turn_result(turn, (size_t)i))) {
            fprintf(stderr, "call %d failed: %s\n", i,
                    tg_result_error_message(tg_turn_result(turn, (size_t)i)));
            goto done;
        }
    rate = n / dt;
done:
    if (err.code)
        fprintf(stderr, "toolgate: %s\n", err.message);
    tg_turn_free(turn);
    tg_runtime_free(rt);
    tg_config_free(cfg);
    free(text);
    return rate;
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
    for (int r = 0; r < ROUNDS; r++) {
        lim_s[r] = limit_rate(n);
        seq_s[r] = toolgate_rate(n, 1);
        par_s[r] = toolgate_rate(n, 8);
    }
    double limit = bench_median(lim_s, ROUNDS);
    double seq = bench_median(seq_s, ROUNDS);
    double par = bench_median(par_s, ROUNDS);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "node %s/peer_spawn.mjs /bin/true %d", peer_dir,
             n);
    double node = bench_peer_number(cmd, "per_second");
    printf("bench_spawn: %d calls of /bin/true, median of %d interleaved "
           "rounds\n",
           n, ROUNDS);
    printf("  limit  C posix_spawn+waitpid loop  %8.0f calls/s\n", limit);
    printf("  peer   node child_process.spawn    %8.0f calls/s\n", node);
    printf("  toolgate --parallel 1              %8.0f calls/s  = %.2fx limit "
           "(goal >= 0.90), %.2fx node\n",
           seq, seq / limit, seq / node);
    printf("  toolgate default parallel (8)      %8.0f calls/s  = %.2fx limit "
           "(goal >= 1.50), %.2fx node\n",
           par, par / limit, par / node);
    return seq > 0 && par > 0 ? 0 : 1;
}
