/* SPDX-License-Identifier: MIT */
/*
 * bench_formats.c - parse + render throughput (MB/s of input) of a ~10 MB
 * model turn in every wire format, against Node's JSON.parse +
 * JSON.stringify of the same document in the same run (peer_formats.mjs).
 * A third argument names one format to measure alone (for profiling).
 *
 * The allocator: Node keeps its heap between rounds, while glibc gives
 * freed memory back to the kernel as soon as the top of the heap holds more
 * than its trim threshold (at most 64 MB, reached only after large blocks
 * came and went) and takes it back page fault by page fault in the next
 * round: about 50 MB per 10 MB turn here. Like any long-running process
 * that parses large turns, this one keeps freed memory
 * (M_TRIM_THRESHOLD, M_MMAP_THRESHOLD); TG_BENCH_DEFAULT_MALLOC=1 measures
 * with glibc's defaults instead (bench/RESULTS.md has both).
 * Every call gets a success result with a short text payload before the
 * render, as after a real run. Usage: bench_formats [MB] [PEER_DIR] [FORMAT]
 */
#include <malloc.h>
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

#define ALTERNATIONS 3

int main(int argc, char **argv)
{
    double mb = argc > 1 ? strtod(argv[1], NULL) : 10;
    const char *peer_dir = argc > 2 ? argv[2] : "bench";
    const char *only = argc > 3 ? argv[3] : NULL;
    const char *dflt = getenv("TG_BENCH_DEFAULT_MALLOC");
    int tuned = dflt == NULL || strcmp(dflt, "1") != 0;
    if (tuned && (mallopt(M_TRIM_THRESHOLD, 256 << 20) != 1 ||
                  mallopt(M_MMAP_THRESHOLD, 32 << 20) != 1))
        return 1;
    char dir[] = "/tmp/tg-bench-formats-XXXXXX";
    if (mb <= 0 || mkdtemp(dir) == NULL)
        return 1;
    int failed = 0;
    printf("bench_formats: parse + render of a %.0f MB turn, MB/s of input; "
           "toolgate median of %d rounds, node median of 5, %d "
           "alternations; malloc %s\n",
           mb, ROUNDS, ALTERNATIONS,
           tuned ? "keeps freed memory (TG_BENCH_DEFAULT_MALLOC=1: defaults)"
                 : "defaults");
    printf("  %-18s %9s %9s %7s %12s  %s\n", "format", "toolgate", "node",
           "ratio", "parse share", "per alternation");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (only != NULL && strcmp(only, shapes[i].format) != 0)
            continue;
        size_t len;
        char *doc = make_doc(&shapes[i], (size_t)(mb * 1e6), &len);
        char path[512], cmd[1024];
        snprintf(path, sizeof path, "%s/%s", dir, shapes[i].file);
        snprintf(cmd, sizeof cmd, "node %s/peer_formats.mjs %s", peer_dir,
                 path);
        FILE *f = fopen(path, "w");
        int ok = doc != NULL && f != NULL && fwrite(doc, 1, len, f) == len;
        if (f != NULL && fclose(f) != 0)
            ok = 0;
        double ours[ALTERNATIONS], node[ALTERNATIONS], ratio[ALTERNATIONS];
        double share = 0;
        /* Node and toolgate take turns, so a busy spell of the machine
         * weighs on both; the ratio is the median of the turns' ratios. */
        for (int a = 0; ok && a < ALTERNATIONS; a++) {
            node[a] = bench_peer_number(cmd, "mb_per_s");
            ours[a] = measure(&shapes[i], doc, len, &share);
            ok = node[a] > 0 && ours[a] > 0;
            ratio[a] = ok ? ours[a] / node[a] : 0;
        }
        free(doc);
        unlink(path);
        if (!ok) {
            printf("  %-18s failed\n", shapes[i].format);
            failed = 1;
            continue;
        }
        char per[128];
        size_t pl = 0;
        for (int a = 0; a < ALTERNATIONS; a++)
            pl += (size_t)snprintf(per + pl, sizeof per - pl, "%s%.2fx",
                                   a ? " " : "", ratio[a]);
        double r = bench_median(ratio, ALTERNATIONS);
        printf("  %-18s %9.1f %9.1f %6.2fx %11.0f%%  %s (goal >= 1.0)\n",
               shapes[i].format, bench_median(ours, ALTERNATIONS),
               bench_median(node, ALTERNATIONS), r, 100 * share, per);
    }
    rmdir(dir);
    return failed;
}
