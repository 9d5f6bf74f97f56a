/* SPDX-License-Identifier: MIT */
/*
 * bench_policy.c - policy decisions per second (issue 6, `bench/policy`)
 * with 1,000 rules of tool globs and argument conditions, against the goal
 * of >= 1,000,000 decisions/s. The rules: 700 exact tool names with an
 * argument condition each (equals, one_of, max_length, matches), 290 globs
 * with a literal prefix ("ns12_g*", "ns12_read*", "ns12_[rw]*x") with an
 * argument condition, 10 globs with a leading "*" ("*_admin3") and a caller
 * condition. The calls: 4,096 prepared inputs (arguments already parsed:
 * the pipeline decides after validation), a quarter matching an exact
 * rule, a quarter failing an exact rule's condition and falling through to
 * the default, a quarter matching a glob rule, a quarter of unknown tools
 * ending in the default. Two more lines show the index's edges: 1,000
 * "*_opN" globs (no literal prefix; indexed by the literal suffix) and
 * 1,000 "*_opN*" globs (nothing literal at either end: every rule is tested
 * for every call, the unindexable worst case). One thread; the median of 5
 * rounds. There is no peer: no other tool-call gateway's policy engine was
 * found to measure against, so the figures are compared with the goal only.
 * Usage: bench_policy [N]
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "policy.h"

#define ROUNDS 5
#define NCALLS 4096
#define GOAL 1000000.0

static json_t *make_policy(void)
{
    json_t *rules = json_array(); /* new ref */
    char tool[64], re[64];
    for (int i = 0; i < 700; i++) {
        snprintf(tool, sizeof tool, "ns%d_op%d", i % 29, i);
        json_t *cond; /* new ref */
        switch (i % 4) {
        case 0:
            cond = json_pack("{s:{s:s}}", "mode", "equals", "rw");
            break;
        case 1:
            cond = json_pack("{s:{s:[i,i,i]}}", "level", "one_of", 1, 2, 3);
            break;
        case 2:
            cond = json_pack("{s:{s:i}}", "name", "max_length", 16);
            break;
        default:
            snprintf(re, sizeof re, "^/srv/data%d/", i % 7);
            cond = json_pack("{s:{s:s}}", "path", "matches", re);
        }
        json_array_append_new(rules, json_pack("{s:s,s:o,s:s}", "tool", tool,
                                               "args", cond, "decision",
                                               i % 3 ? "allow" : "deny"));
    }
    static const char *const globs[] = {"ns%d_g*", "ns%d_read*", "ns%d_[rw]*x"};
    for (int i = 0; i < 290; i++) {
        snprintf(tool, sizeof tool, globs[i % 3], i % 97);
        json_array_append_new(rules,
                              json_pack("{s:s,s:{s:{s:i}},s:s}", "tool", tool,
                                        "args", "name", "max_length", 8 + i % 8,
                                        "decision", i % 2 ? "allow" : "ask"));
    }
    for (int i = 0; i < 10; i++) {
        snprintf(tool, sizeof tool, "*_admin%d", i);
        json_array_append_new(rules,
                              json_pack("{s:s,s:s,s:s}", "tool", tool, "caller",
                                        "guest", "decision", "deny"));
    }
    return json_pack("{s:s,s:o}", "default", "deny", "rules", rules);
}

/* 1,000 globs with no literal prefix: "*_opN" (indexed by the literal
 * suffix) or, when `unindexable`, "*_opN*" (no literal prefix or suffix:
 * every rule a candidate for every call, one fnmatch(3) each). */
static json_t *make_glob_policy(int unindexable)
{
    json_t *rules = json_array(); /* new ref */
    char tool[64];
    for (int i = 0; i < 1000; i++) {
        snprintf(tool, sizeof tool, unindexable ? "*_op%d*" : "*_op%d", i);
        json_array_append_new(
            rules, json_pack("{s:s,s:{s:{s:i}},s:s}", "tool", tool, "args",
                             "name", "max_length", 16, "decision", "allow"));
    }
    return json_pack("{s:s,s:o}", "default", "deny", "rules", rules);
}

struct call {
    char tool[64];
    json_t *args; /* new ref */
};

static void make_calls(struct call *c)
{
    for (int k = 0; k < NCALLS; k++) {
        int i = (k * 7919) % 700;
        switch (k % 4) {
        case 0: /* an exact rule whose condition holds */
        case 1: /* ... or fails: the search goes on to the globs */
            snprintf(c[k].tool, sizeof c[k].tool, "ns%d_op%d", i % 29, i);
            c[k].args =
                json_pack("{s:s,s:i,s:s,s:s}", "mode", k % 4 ? "ro" : "rw",
                          "level", k % 4 ? 9 : 2, "name",
                          k % 4 ? "a-name-that-is-far-too-long" : "short",
                          "path", k % 4 ? "/etc/passwd" : "/srv/data0/x");
            if (k % 4 == 0 && i % 4 == 3) {
                char p[64];
                snprintf(p, sizeof p, "/srv/data%d/f", i % 7);
                json_object_set_new(c[k].args, "path", json_string(p));
            }
            break;
        case 2: /* a glob rule */
            snprintf(c[k].tool, sizeof c[k].tool, "ns%d_read_file", k % 97);
            c[k].args = json_pack("{s:s}", "name", "notes");
            break;
        default: /* no rule: the default */
            snprintf(c[k].tool, sizeof c[k].tool, "unknown_tool_%d", k);
            c[k].args = json_pack("{s:s}", "name", "x");
        }
    }
}

/* Median decisions/s of policy p over the prepared calls; by_rule: how
 * many decisions of the last round a rule made. -1 on error. */
static double measure(const tg__policy *p, const struct call *calls, long n,
                      long *by_rule)
{
    double samples[ROUNDS];
    tg_error err = {0};
    for (int r = -1; r < ROUNDS; r++) {
        long hits = 0;
        double t0 = bench_now();
        for (long i = 0; i < n; i++) {
            const struct call *c = &calls[i & (NCALLS - 1)];
            tg__policy_input in = {c->tool, "agent", NULL,
                                   c->args, "/srv",  NULL};
            tg__policy_verdict v;
            if (tg__policy_decide(p, &in, &v, NULL, &err) != 0) {
                fprintf(stderr, "bench_policy: %s\n", err.message);
                return -1;
            }
            hits += v.rule >= 0;
        }
        double dt = bench_now() - t0;
        if (r >= 0)
            samples[r] = (double)n / dt;
        *by_rule = hits;
    }
    return bench_median(samples, ROUNDS);
}

static tg__policy *compile(json_t *pol)
{
    tg__policy *p = NULL;
    tg_error err = {0};
    if (pol == NULL || tg__policy_compile(pol, &p, &err) != 0) {
        fprintf(stderr, "bench_policy: %s\n", err.message);
        exit(1);
    }
    json_decref(pol);
    return p;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 4000000;
    if (n <= 0)
        n = 4000000;
    tg__policy *p = compile(make_policy());
    tg__policy *suffix = compile(make_glob_policy(0));
    tg__policy *worst = compile(make_glob_policy(1));
    static struct call calls[NCALLS];
    make_calls(calls);
    long by_rule = 0, other = 0;
    double rate = measure(p, calls, n, &by_rule);
    double suffix_rate = measure(suffix, calls, n, &other);
    double worst_rate = measure(worst, calls, n / 50 + 1, &other);
    if (rate < 0 || suffix_rate < 0 || worst_rate < 0)
        return 1;
    printf("bench_policy: %zu rules (700 exact tools, 290 prefix globs, 10 "
           "\"*_adminN\" globs; each with a condition), %d distinct "
           "calls, %ld decisions per round, median of %d rounds, one "
           "thread\n",
           tg__policy_rule_count(p), NCALLS, n, ROUNDS);
    printf("  decided by a rule: %.0f%%, by the default: %.0f%%\n",
           100.0 * (double)by_rule / (double)n,
           100.0 * (double)(n - by_rule) / (double)n);
    printf("  %.0f decisions/s (%.0f ns each): %.2fx the goal of "
           "1,000,000/s\n",
           rate, 1e9 / rate, rate / GOAL);
    printf("  1,000 rules \"*_opN\" (indexed by literal suffix): %.0f "
           "decisions/s (%.2fx the goal)\n",
           suffix_rate, suffix_rate / GOAL);
    printf("  unindexable worst case, 1,000 rules \"*_opN*\" (every rule a "
           "candidate for every call): %.0f decisions/s (%.2fx the goal)\n",
           worst_rate, worst_rate / GOAL);
    printf("  peer: none (no comparable policy engine to run); compared with "
           "the goal only\n");
    for (int k = 0; k < NCALLS; k++)
        json_decref(calls[k].args);
    tg__policy_free(p);
    tg__policy_free(suffix);
    tg__policy_free(worst);
    return 0;
}
