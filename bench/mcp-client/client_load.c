/* SPDX-License-Identifier: MIT */
/*
 * client_load.c - toolgate as an MCP client, measured: N calls of one tool
 * of an MCP server behind the runtime (a source of the configuration),
 * first one at a time, then K in flight, each through the whole gate (the
 * arguments checked against the tool's schema, the policy, the journal as
 * the configuration has it), the server started and its tools listed before
 * the clock starts. Prints calls/s and p50/p99 of each phase as one JSON
 * line; bench/mcp-client/run.sh holds it against the TypeScript SDK's
 * Client calling the same server directly (sdk_client.mjs).
 *
 *   client_load --config FILE --tool NAME [--args JSON] [--calls N]
 *               [--inflight K] [--warmup N] [--label NAME]
 *
 * Every call must succeed: anything else ends the run with its text.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "toolgate.h"

#define MAX_INFLIGHT 1024

struct slot {
    tg_turn *turn;
    double t0;
    long index; /* in the phase, -1: free */
};

struct phase {
    long n, sent, done;
    double *lat; /* microseconds, by index */
};

static struct phase *the_phase;
static const char *tool_name;

static void fail_now(const char *what, const char *msg)
{
    fprintf(stderr, "client_load: %s: %s\n", what, msg);
    exit(1);
}

static void on_done(void *ud, tg_turn *turn, int status, const tg_error *err)
{
    struct slot *s = ud;
    const tg_result *r = status == 0 ? tg_turn_result(turn, 0) : NULL;
    if (r == NULL)
        fail_now("a call failed", err != NULL ? err->message : "no result");
    if (tg_result_outcome(r) != TG_OUTCOME_SUCCESS)
        fail_now(tool_name, tg_result_payload_json(r));
    the_phase->lat[s->index] = (bench_now() - s->t0) * 1e6;
    the_phase->done++;
    tg_turn_free(turn);
    s->turn = NULL;
    s->index = -1;
}

static const tg_turn_ops ops = {NULL, NULL, NULL, on_done};

/* Runs n calls with at most k in flight; returns the seconds it took. */
static double run_phase(tg_runtime *rt, const char *args, long n, long k,
                        double *lat, struct slot *slots, long *next_id)
{
    struct phase ph = {.n = n, .lat = lat};
    the_phase = &ph;
    for (long i = 0; i < k; i++)
        slots[i].index = -1;
    long pid = (long)getpid(); /* once: not a system call a call */
    double t0 = bench_now();
    while (ph.done < n) {
        for (long i = 0; i < k && ph.sent < n; i++) {
            struct slot *s = &slots[i];
            if (s->index >= 0)
                continue;
            char id[64];
            snprintf(id, sizeof id, "bench-%ld-%ld", pid, ++*next_id);
            tg_error err = {0};
            if (tg_turn_new_call("mcp", id, tool_name, args, strlen(args),
                                 &s->turn, &err) != 0)
                fail_now("tg_turn_new_call", err.message);
            s->index = ph.sent++;
            s->t0 = bench_now();
            if (tg_runtime_submit(rt, s->turn, &ops, s, &err) != 0)
                fail_now("tg_runtime_submit", err.message);
        }
        long before = ph.done;
        tg_runtime_flush(rt); /* the calls just submitted, at once */
        if (ph.done > before)
            continue;
        /* Wait on the runtime's descriptor, then step: a step before the
         * poll would only ask the descriptor what poll asks (an
         * epoll_wait a call for nothing; toolgate.h, tg_runtime_flush). */
        struct pollfd p = {.fd = tg_runtime_fd(rt), .events = POLLIN};
        int t = tg_runtime_timeout(rt);
        (void)poll(&p, 1, t < 0 || t > 1000 ? 1000 : t);
        tg_runtime_step(rt);
    }
    the_phase = NULL;
    return bench_now() - t0;
}

static void figures(const char *key, long n, double secs, double *lat)
{
    qsort(lat, (size_t)n, sizeof *lat, bench_cmp_double);
    printf("\"%s_per_s\":%.1f,\"%s_p50_us\":%.1f,\"%s_p99_us\":%.1f", key,
           (double)n / secs, key, lat[n / 2], key, lat[(n * 99) / 100]);
}

static void usage(void)
{
    fputs("usage: client_load --config FILE --tool NAME [--args JSON]\n"
          "         [--calls N] [--inflight K] [--warmup N] [--label NAME]\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    const char *config = NULL, *args = "{}", *label = "toolgate";
    long calls = 2000, inflight = 16, warmup = 200;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL)
            usage();
        if (strcmp(a, "--config") == 0)
            config = v;
        else if (strcmp(a, "--tool") == 0)
            tool_name = v;
        else if (strcmp(a, "--args") == 0)
            args = v;
        else if (strcmp(a, "--label") == 0)
            label = v;
        else if (strcmp(a, "--calls") == 0)
            calls = bench_arg_long("client_load", a, v, 1, 10000000);
        else if (strcmp(a, "--inflight") == 0)
            inflight = bench_arg_long("client_load", a, v, 1, MAX_INFLIGHT);
        else if (strcmp(a, "--warmup") == 0)
            warmup = bench_arg_long("client_load", a, v, 0, 10000000);
        else
            usage();
        i++;
    }
    if (config == NULL || tool_name == NULL)
        usage();
    signal(SIGPIPE, SIG_IGN); /* the runtime's contract for steps */
    tg_error err = {0};
    tg_config *cfg = tg_config_new();
    tg_runtime *rt = NULL;
    if (cfg == NULL || tg_config_load_file(cfg, config, &err) != 0 ||
        tg_runtime_new(cfg, &rt, &err) != 0)
        fail_now(config, err.message);
    /* the server started and its tools listed before the clock starts */
    if (tg_runtime_sources_wait(rt, 60000, &err) != 0)
        fail_now("tg_runtime_sources_wait", err.message);
    static struct slot slots[MAX_INFLIGHT];
    double *lat =
        malloc((size_t)(calls > warmup ? calls : warmup + 1) * sizeof *lat);
    if (lat == NULL)
        fail_now("memory", "out of memory");
    long next_id = 0;
    if (warmup > 0)
        run_phase(rt, args, warmup, inflight, lat, slots, &next_id);
    double seq = run_phase(rt, args, calls, 1, lat, slots, &next_id);
    printf("{\"label\":\"%s\",\"calls\":%ld,\"inflight\":%ld,", label, calls,
           inflight);
    figures("seq", calls, seq, lat);
    double par = run_phase(rt, args, calls, inflight, lat, slots, &next_id);
    putchar(',');
    figures("par", calls, par, lat);
    puts("}");
    free(lat);
    tg_runtime_free(rt);
    tg_config_free(cfg);
    return 0;
}
