/* SPDX-License-Identifier: MIT */
/*
 * bench_pipeline.c - pipeline overhead per call: parse an OpenAI Chat
 * Completions response of N calls (a typical 7-field argument object each),
 * check each call (checksum), run an in-process no-op tool, render the tool
 * messages. Journal off and on. The peer, in the same run, is the Vercel AI
 * SDK doing its per-call work on the same document (peer_pipeline.mjs).
 * Usage: bench_pipeline [CALLS] [PEER_DIR]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "toolgate.h"

#define ROUNDS 7

static int noop(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    (void)args;
    (void)len;
    (void)ud;
    return tg_handler_set_json(ctx, "{\"ok\":true}", 11);
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

static double run(const char *text, size_t len, const char *journal, int n)
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
    if (cfg == NULL ||
        tg_config_load(cfg, cfgtext, strlen(cfgtext), NULL, &err) != 0 ||
        tg_runtime_new(cfg, &rt, &err) != 0 ||
        tg_runtime_register(rt, "search", "no-op", NULL, noop, NULL,
                            TG_TOOL_INLINE, &err) != 0)
        goto done;
    for (int r = -1; r < ROUNDS; r++) { /* round -1 warms up */
        tg_turn *turn = NULL;
        char *out = NULL;
        size_t out_len = 0;
        double t0 = bench_now();
        if (tg_turn_parse(text, len, "auto", "bench", &turn, &err) != 0)
            goto done;
        for (size_t i = 0; i < tg_turn_call_count(turn); i++)
            if (tg_call_checksum(tg_turn_call(turn, i)) == NULL) {
                fprintf(stderr, "no checksum for call %zu\n", i);
                tg_turn_free(turn);
                goto done;
            }
        if (tg_runtime_run_turn(rt, turn, &err) != 0 ||
            tg_turn_render(turn, NULL, &out, &out_len, &err) != 0) {
            tg_turn_free(turn);
            goto done;
        }
        double dt = bench_now() - t0;
        int ok = tg_turn_call_count(turn) == (size_t)n &&
                 tg_result_succeeded(tg_turn_result(turn, (size_t)n - 1));
        tg_free(out);
        tg_turn_free(turn);
        if (!ok) {
            fprintf(stderr, "the turn did not succeed\n");
            goto done;
        }
        if (r >= 0)
            samples[r] = dt;
    }
    best = bench_median(samples, ROUNDS) * 1e6 / n;
done:
    if (err.code)
        fprintf(stderr, "toolgate: %s\n", err.message);
    tg_runtime_free(rt);
    tg_config_free(cfg);
    return best;
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

    double off = run(text, len, NULL, n);
    double on = run(text, len, journal, n);
    snprintf(cmd, sizeof cmd, "node %s/peer_pipeline.mjs %s %d", peer_dir,
             turn_path, ROUNDS);
    double sdk = bench_peer_number(cmd, "us_per_call_schema");
    double sdk_noschema = bench_peer_number(cmd, "us_per_call_noschema");

    printf("bench_pipeline: %d calls, parse -> checksum -> no-op tool -> "
           "render, median of %d rounds\n",
           n, ROUNDS);
    printf("  peer  ai-sdk safeParseJSON(schema)+execute  %6.2f us/call\n",
           sdk);
    printf("  peer  ai-sdk safeParseJSON (no schema)      %6.2f us/call\n",
           sdk_noschema);
    printf("  toolgate, journal off                      %6.2f us/call  = "
           "%.2fx the SDK's calls/s (goal >= 2.0)\n",
           off, sdk / off);
    printf("  toolgate, journal on                       %6.2f us/call  = "
           "%.2fx the SDK's calls/s\n",
           on, sdk / on);
    unlink(turn_path);
    unlink(journal);
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", journal);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", journal);
    unlink(wal);
    rmdir(dir);
    free(text);
    return off > 0 && on > 0 ? 0 : 1;
}
