/* SPDX-License-Identifier: MIT */
/*
 * bench_formats.c - parse + render throughput (MB/s of input) of a ~10 MB
 * model turn in every wire format, against Node's JSON.parse +
 * JSON.stringify of the same document in the same run (peer_formats.mjs).
 * A third argument names one format to measure alone (for profiling).
 * Every call gets a success result with a short text payload before the
 * render, as after a real run. Usage: bench_formats [MB] [PEER_DIR] [FORMAT]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "record.h"
#include "toolgate.h"
#include "turn.h"

#define ROUNDS 5
#define ARGS                                                                   \
    "{\"path\":\"src/module_%d\",\"pattern\":\"TODO|FIXME\",\"max_results\":"  \
    "%d,\"case_sensitive\":true,\"include\":[\"*.c\",\"*.h\"],\"context_"      \
    "lines\":2,\"mode\":\"content\"}"

typedef struct shape {
    const char *format, *file, *head, *sep, *tail;
    const char *call; /* printf: id, args-object-or-escaped-string, i, i */
    int escaped;      /* the arguments are a JSON string */
} shape;

static const shape shapes[] = {
    {"openai-chat", "openai-chat.json",
     "{\"id\":\"chatcmpl-b\",\"object\":\"chat.completion\",\"choices\":[{"
     "\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,"
     "\"tool_calls\":[",
     ",", "]},\"finish_reason\":\"tool_calls\"}]}",
     "{\"id\":\"call_%08d\",\"type\":\"function\",\"function\":{\"name\":"
     "\"search\",\"arguments\":\"%s\"}}",
     1},
    {"openai-responses", "openai-responses.json",
     "{\"id\":\"resp_b\",\"object\":\"response\",\"status\":\"completed\","
     "\"output\":[",
     ",", "]}",
     "{\"type\":\"function_call\",\"id\":\"fc_%08d\",\"call_id\":\"call_%08d\","
     "\"name\":\"search\",\"arguments\":\"%s\"}",
     1},
    {"anthropic", "anthropic.json",
     "{\"id\":\"msg_b\",\"type\":\"message\",\"role\":\"assistant\","
     "\"stop_reason\":\"tool_use\",\"content\":[",
     ",", "]}",
     "{\"type\":\"tool_use\",\"id\":\"toolu_%08d\",\"name\":\"search\","
     "\"input\":%s}",
     0},
    {"gemini", "gemini.json",
     "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[", ",",
     "]},\"finishReason\":\"STOP\"}]}",
     "{\"functionCall\":{\"id\":\"g_%08d\",\"name\":\"search\",\"args\":%s}}",
     0},
    {"mcp", "mcp.json", "[", ",", "]",
     "{\"jsonrpc\":\"2.0\",\"id\":\"r%08d\",\"method\":\"tools/call\","
     "\"params\":{\"name\":\"search\",\"arguments\":%s}}",
     0},
    {"toolgate", "toolgate.jsonl", "", "\n", "\n",
     "{\"id\":\"c%08d\",\"tool\":\"search\",\"args\":%s}", 0},
};

/* A document of about `target` bytes in the given shape. */
static char *make_doc(const shape *s, size_t target, size_t *len_out)
{
    size_t cap = target + 4096, len = 0;
    char *t = malloc(cap);
    if (t == NULL)
        return NULL;
    len += (size_t)snprintf(t, cap, "%s", s->head);
    for (int i = 0; len + 1024 < target; i++) {
        char args[512], esc[1024];
        snprintf(args, sizeof args, ARGS, i % 97, 50 + i % 50);
        const char *a = args;
        if (s->escaped) { /* as a JSON string's body */
            size_t k = 0;
            for (const char *p = args; *p; p++) {
                if (*p == '"')
                    esc[k++] = '\\';
                esc[k++] = *p;
            }
            esc[k] = '\0';
            a = esc;
        }
        if (i)
            len += (size_t)snprintf(t + len, cap - len, "%s", s->sep);
        if (strcmp(s->format, "openai-responses") == 0)
            len += (size_t)snprintf(t + len, cap - len, s->call, i, i, a);
        else
            len += (size_t)snprintf(t + len, cap - len, s->call, i, a);
    }
    len += (size_t)snprintf(t + len, cap - len, "%s", s->tail);
    *len_out = len;
    return t;
}

/* Median MB/s of parse + results + render + free over ROUNDS; *parse_share
 * gets the median share of that time spent parsing. */
static double measure(const shape *s, const char *text, size_t len,
                      double *parse_share)
{
    double samples[ROUNDS], shares[ROUNDS];
    for (int r = -1; r < ROUNDS; r++) {
        tg_error err = {0};
        tg_turn *turn = NULL;
        char *out = NULL;
        size_t out_len;
        double t0 = bench_now();
        if (tg_turn_parse(text, len, s->format, "bench", &turn, &err) != 0) {
            fprintf(stderr, "%s: %s\n", s->format, err.message);
            return -1;
        }
        double t1 = bench_now();
        for (size_t i = 0; i < turn->n; i++)
            tg__turn_set_result(
                turn, i,
                tg__result_success(turn->calls[i], json_string("42 matches")));
        if (tg_turn_render(turn, NULL, &out, &out_len, &err) != 0) {
            fprintf(stderr, "%s: %s\n", s->format, err.message);
            tg_turn_free(turn);
            return -1;
        }
        tg_free(out);
        tg_turn_free(turn);
        if (r >= 0) {
            samples[r] = bench_now() - t0;
            shares[r] = (t1 - t0) / samples[r];
        }
    }
    *parse_share = bench_median(shares, ROUNDS);
    return (double)len / 1e6 / bench_median(samples, ROUNDS);
}

int main(int argc, char **argv)
{
    double mb = argc > 1 ? strtod(argv[1], NULL) : 10;
    const char *peer_dir = argc > 2 ? argv[2] : "bench";
    char dir[] = "/tmp/tg-bench-formats-XXXXXX";
    if (mb <= 0 || mkdtemp(dir) == NULL)
        return 1;
    size_t n = sizeof shapes / sizeof shapes[0];
    double ours[sizeof shapes / sizeof shapes[0]];
    double share[sizeof shapes / sizeof shapes[0]];
    int added[sizeof shapes / sizeof shapes[0]] = {0}; /* given to node */
    char cmd[4096];
    size_t cl =
        (size_t)snprintf(cmd, sizeof cmd, "node %s/peer_formats.mjs", peer_dir);
    int failed = 0;
    const char *only = argc > 3 ? argv[3] : NULL;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        ours[i] = share[i] = 0;
        if (only != NULL && strcmp(only, shapes[i].format) != 0)
            continue;
        char *doc = make_doc(&shapes[i], (size_t)(mb * 1e6), &len);
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, shapes[i].file);
        FILE *f = fopen(path, "w");
        if (doc == NULL || f == NULL || fwrite(doc, 1, len, f) != len) {
            failed = 1;
            if (f)
                fclose(f);
            free(doc);
            continue;
        }
        fclose(f);
        ours[i] = measure(&shapes[i], doc, len, &share[i]);
        failed |= ours[i] <= 0;
        free(doc);
        cl += (size_t)snprintf(cmd + cl, sizeof cmd - cl, " %s", path);
        added[i] = 1;
    }
    printf("bench_formats: parse + render of a %.0f MB turn, MB/s of input, "
           "median of %d rounds\n",
           mb, ROUNDS);
    printf("  %-18s %10s %10s %8s %20s\n", "format", "toolgate", "node",
           "ratio", "parse share");
    FILE *p = popen(cmd, "r");
    char line[1024];
    for (size_t i = 0; i < n; i++) {
        double node = -1;
        if (added[i] && p && fgets(line, sizeof line, p)) {
            const char *at = strstr(line, "\"mb_per_s\":");
            node = at ? strtod(at + 11, NULL) : -1;
        }
        printf("  %-18s %10.1f %10.1f %7.2fx (goal >= 1.0) %5.0f%%\n",
               shapes[i].format, ours[i], node, ours[i] / node, 100 * share[i]);
    }
    if (p)
        pclose(p);
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, shapes[i].file);
        unlink(path);
    }
    rmdir(dir);
    return failed;
}
