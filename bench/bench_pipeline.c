/* SPDX-License-Identifier: MIT */
/*
 * bench_pipeline.c - pipeline overhead per call: parse an OpenAI Chat
 * Completions response of N calls (a typical 7-field argument object each),
 * check each call (checksum), run an in-process no-op tool, render the tool
 * messages, and free the turn and the rendered text (the peer's time
 * includes its garbage collection, so ours includes freeing). Journal off
 * and on; the time of each stage is printed too. The peer is the Vercel AI
 * SDK doing its per-call work on the same document (peer_pipeline.mjs).
 * toolgate (journal off) and the peer are measured in turns, three times
 * each, and compared pair by pair: the figure reported is the median of
 * the three ratios.
 *
 * Usage: bench_pipeline [CALLS] [PEER_DIR] [only-off]
 * ("only-off" measures toolgate with the journal off and nothing else, for
 * profiling.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "toolgate.h"

/* The tool's input schema: what the peer's zod schema checks, so both sides
 * validate every call's arguments (an object of exactly these types). */
#define SEARCH_SCHEMA                                                          \
    "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"     \
    "\"pattern\":{\"type\":\"string\"},\"max_results\":{\"type\":\"integer\"}" \
    ","                                                                        \
    "\"case_sensitive\":{\"type\":\"boolean\"},\"include\":{\"type\":"         \
    "\"array\",\"items\":{\"type\":\"string\"}},\"context_lines\":{\"type\":"  \
    "\"integer\"},\"mode\":{\"enum\":[\"content\",\"files\",\"count\"]}},"     \
    "\"required\":[\"path\",\"pattern\",\"max_results\",\"case_sensitive\","   \
    "\"include\",\"context_lines\",\"mode\"]}"

#define ROUNDS 7
#define ALTERNATIONS 3

static int noop(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    (void)args;
    (void)len;
    (void)ud;
    return tg_handler_set_json(ctx, "{\"ok\":true}", 11, NULL);
}

/* The response document: n tool calls of a grep-like tool. */
static char *make_turn(int n, size_t *len_out)
{
    size_t cap = (size_t)n * 400 + 512, len = 0;
    char *t = malloc(cap);
    if (t == NULL)
        return NULL;
    len += (size_t)snprintf(
        t + len, cap - len,
        "{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion\",\"model\":"
        "\"gpt-4o\",\"choices\":[{\"index\":0,\"message\":{\"role\":"
        "\"assistant\",\"content\":null,\"tool_calls\":[");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(
            t + len, cap - len,
            "%s{\"id\":\"call_%08d\",\"type\":\"function\",\"function\":{"
            "\"name\":\"search\",\"arguments\":\"{\\\"path\\\":\\\"src/"
            "module_%d\\\",\\\"pattern\\\":\\\"TODO|FIXME\\\",\\\"max_"
            "results\\\":%d,\\\"case_sensitive\\\":%s,\\\"include\\\":[\\\"*."
            "c\\\",\\\"*.h\\\"],\\\"context_lines\\\":2,\\\"mode\\\":\\\""
            "content\\\"}\"}}",
            i ? "," : "", i, i % 97, 50 + i % 50, i % 2 ? "true" : "false");
    len += (size_t)snprintf(t + len, cap - len,
                            "]},\"finish_reason\":\"tool_calls\"}]}");
    *len_out = len;
    return t;
}

/* Per-call medians of each stage, filled by run() when asked. */
typedef struct stages {
    double parse, checksum, run, render, free;
} stages;

static double run(const char *text, size_t len, const char *journal, int n,
                  stages *st)
{
    char cfgtext[512];
    snprintf(cfgtext, sizeof cfgtext,
             "{\"journal\": %s%s%s, \"builtin_tools\": [], \"limits\": "
             "{\"parallel\": 8}}",
             journal ? "\"" : "", journal ? journal : "null",
             journal ? "\"" : "");
    tg_error err = {0};
    tg_config *cfg = tg_config_new();
    tg_runtime *rt = NULL;
    double samples[ROUNDS], best = -1;
    double sp[ROUNDS], sc[ROUNDS], sr[ROUNDS], sd[ROUNDS], sf[ROUNDS];
    if (cfg == NULL ||
        tg_config_load(cfg, cfgtext, strlen(cfgtext), NULL, &err) != 0 ||
        tg_runtime_new(cfg, &rt, &err) != 0 ||
        tg_runtime_register(rt, "search", "no-op", SEARCH_SCHEMA, noop, NULL,
                            TG_TOOL_INLINE, &err) != 0)
        goto done;
    for (int r = -1; r < ROUNDS; r++) { /* round -1 warms up */
        tg_turn *turn = NULL;
        char *out = NULL;
        size_t out_len = 0;
        double t0 = bench_now();
        if (tg_turn_parse(text, len, "auto", "bench", &turn, &err) != 0)
            goto done;
        double t1 = bench_now();
        for (size_t i = 0; i < tg_turn_call_count(turn); i++)
            if (tg_call_checksum(tg_turn_call(turn, i)) == NULL) {
                fprintf(stderr, "no checksum for call %zu\n", i);
                tg_turn_free(turn);
                goto done;
            }
        double t2 = bench_now();
        if (tg_runtime_run_turn(rt, turn, &err) != 0) {
            tg_turn_free(turn);
            goto done;
        }
        double t3 = bench_now();
        if (tg_turn_render(turn, NULL, &out, &out_len, &err) != 0) {
            tg_turn_free(turn);
            goto done;
        }
        double t4 = bench_now();
        int ok = tg_turn_call_count(turn) == (size_t)n &&
                 tg_result_succeeded(tg_turn_result(turn, (size_t)n - 1));
        /* Freeing is part of the work: the peer's time includes its
         * garbage collection, and malloc's bookkeeping (consolidation of
         * freed chunks) is paid here or in the next round. */
        tg_free(out);
        tg_turn_free(turn);
        double t5 = bench_now();
        if (!ok) {
            fprintf(stderr, "the turn did not succeed\n");
            goto done;
        }
        if (r >= 0) {
            samples[r] = t5 - t0;
            sp[r] = t1 - t0;
            sc[r] = t2 - t1;
            sr[r] = t3 - t2;
            sd[r] = t4 - t3;
            sf[r] = t5 - t4;
        }
    }
    best = bench_median(samples, ROUNDS) * 1e6 / n;
    if (st != NULL) {
        st->parse = bench_median(sp, ROUNDS) * 1e6 / n;
        st->checksum = bench_median(sc, ROUNDS) * 1e6 / n;
        st->run = bench_median(sr, ROUNDS) * 1e6 / n;
        st->render = bench_median(sd, ROUNDS) * 1e6 / n;
        st->free = bench_median(sf, ROUNDS) * 1e6 / n;
    }
done:
    if (err.code)
        fprintf(stderr, "toolgate: %s\n", err.message);
    tg_runtime_free(rt);
    tg_config_free(cfg);
    return best;
}

/* Runs the peer once; both of its figures from its one JSON line. */
static int peer_numbers(const char *cmdline, double *schema, double *plain)
{
    FILE *p = popen(cmdline, "r");
    if (p == NULL)
        return -1;
    char line[4096] = "";
    if (fgets(line, sizeof line, p) == NULL)
        line[0] = '\0';
    if (pclose(p) != 0) {
        fprintf(stderr, "peer failed: %s\n", cmdline);
        return -1;
    }
    const char *a = strstr(line, "\"us_per_call_schema\":");
    const char *b = strstr(line, "\"us_per_call_noschema\":");
    if (a == NULL || b == NULL)
        return -1;
    *schema = strtod(a + strlen("\"us_per_call_schema\":"), NULL);
    *plain = strtod(b + strlen("\"us_per_call_noschema\":"), NULL);
    return *schema > 0 && *plain > 0 ? 0 : -1;
}

static void print_stages(const stages *st)
{
    printf("    stages (medians): parse %.2f, checksum %.2f, run %.2f, "
           "render %.2f, free %.2f us/call\n",
           st->parse, st->checksum, st->run, st->render, st->free);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 10000;
    const char *peer_dir = argc > 2 ? argv[2] : "bench";
    if (n <= 0)
        n = 10000;
    size_t len;
    char *text = make_turn(n, &len);
    char dir[] = "/tmp/tg-bench-XXXXXX";
    if (text == NULL || mkdtemp(dir) == NULL)
        return 1;
    char turn_path[512], journal[512], cmd[1400];
    snprintf(turn_path, sizeof turn_path, "%s/turn.json", dir);
    snprintf(journal, sizeof journal, "%s/journal.db", dir);
    FILE *f = fopen(turn_path, "w");
    if (f == NULL || fwrite(text, 1, len, f) != len || fclose(f) != 0)
        return 1;

    stages st_off[ALTERNATIONS] = {{0}}, st_on = {0};
    double off[ALTERNATIONS], sdk[ALTERNATIONS], sdk_nos[ALTERNATIONS];
    double ratio[ALTERNATIONS];
    if (argc > 3 && strcmp(argv[3], "only-off") == 0) {
        off[0] = run(text, len, NULL, n, &st_off[0]);
        printf("toolgate, journal off: %.2f us/call\n", off[0]);
        print_stages(&st_off[0]);
        unlink(turn_path);
        rmdir(dir);
        free(text);
        return off[0] > 0 ? 0 : 1;
    }
    /* toolgate and the peer take turns, so that a machine whose speed
     * drifts (shared cores, a noisy neighbour) slows both alike: each
     * ratio compares measurements taken one right after the other. */
    snprintf(cmd, sizeof cmd, "node %s/peer_pipeline.mjs %s %d", peer_dir,
             turn_path, ROUNDS);
    int bad = 0;
    for (int a = 0; a < ALTERNATIONS; a++) {
        off[a] = run(text, len, NULL, n, &st_off[a]);
        if (peer_numbers(cmd, &sdk[a], &sdk_nos[a]) != 0 || off[a] <= 0) {
            bad = 1;
            break;
        }
        ratio[a] = sdk[a] / off[a];
    }
    double on = bad ? -1 : run(text, len, journal, n, &st_on);
    if (bad || on <= 0) {
        fprintf(stderr, "a measurement failed\n");
        return 1;
    }
    /* The stages shown are those of the alternation with the median time. */
    int mid = 0;
    double offs[ALTERNATIONS];
    memcpy(offs, off, sizeof offs);
    double off_med = bench_median(offs, ALTERNATIONS);
    for (int a = 0; a < ALTERNATIONS; a++)
        if (off[a] == off_med)
            mid = a;
    double sdk_med = bench_median(sdk, ALTERNATIONS);
    double nos_med = bench_median(sdk_nos, ALTERNATIONS);
    double ratios[ALTERNATIONS];
    memcpy(ratios, ratio, sizeof ratios);
    double ratio_med = bench_median(ratios, ALTERNATIONS);

    printf("bench_pipeline: %d calls, parse -> checksum -> no-op tool -> "
           "render -> free, median of %d rounds, %d alternations with the "
           "peer\n",
           n, ROUNDS, ALTERNATIONS);
    printf("  peer  ai-sdk safeParseJSON(schema)+execute  %6.2f us/call\n",
           sdk_med);
    printf("  peer  ai-sdk safeParseJSON (no schema)      %6.2f us/call\n",
           nos_med);
    printf("  toolgate, journal off                      %6.2f us/call  = "
           "%.2fx the SDK's calls/s (goal >= 2.0; per alternation:",
           off_med, ratio_med);
    for (int a = 0; a < ALTERNATIONS; a++)
        printf(" %.2fx", ratio[a]);
    printf(")\n");
    print_stages(&st_off[mid]);
    printf("  toolgate, journal on                       %6.2f us/call  = "
           "%.2fx the SDK's calls/s\n",
           on, sdk_med / on);
    print_stages(&st_on);
    unlink(turn_path);
    unlink(journal);
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", journal);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", journal);
    unlink(wal);
    rmdir(dir);
    free(text);
    return 0;
}
