/* SPDX-License-Identifier: MIT */
/*
 * bench_stream.c - incremental parsing of streamed (SSE) turns: bytes/s of
 * the tg_stream API fed in 64-byte chunks against the same stream fed whole,
 * for OpenAI Chat Completions chunks and Anthropic Messages events with
 * CALLS tool calls whose arguments arrive in small pieces. Goal: chunked
 * within 2x of whole. Usage: bench_stream [CALLS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "buf.h"
#include "toolgate.h"

#define ROUNDS 5
#define PIECE 12 /* bytes of arguments per delta, as models stream them */

static const char args_fmt[] =
    "{\"path\":\"src/module_%d\",\"pattern\":\"TODO|FIXME\",\"max_results\":"
    "%d,\"case_sensitive\":true,\"include\":[\"*.c\",\"*.h\"],"
    "\"context_lines\":2,\"mode\":\"content\"}";

/* Appends s[0..n) escaped as the body of a JSON string. */
static void put_escaped(tg__buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\')
            tg__buf_append(b, "\\", 1);
        tg__buf_append(b, s + i, 1);
    }
}

static void openai_chat(tg__buf *b, int calls)
{
    for (int i = 0; i < calls; i++) {
        char args[512];
        int n = snprintf(args, sizeof args, args_fmt, i % 97, 50 + i % 50);
        tg__buf_printf(b,
                       "data: {\"id\":\"chatcmpl-b\",\"object\":\"chat."
                       "completion.chunk\",\"choices\":[{\"index\":0,\"delta\":"
                       "{\"tool_calls\":[{\"index\":%d,\"id\":\"call_%08d\","
                       "\"type\":\"function\",\"function\":{\"name\":"
                       "\"search\",\"arguments\":\"\"}}]}}]}\n\n",
                       i, i);
        for (int off = 0; off < n; off += PIECE) {
            tg__buf_printf(b,
                           "data: {\"id\":\"chatcmpl-b\",\"object\":\"chat."
                           "completion.chunk\",\"choices\":[{\"index\":0,"
                           "\"delta\":{\"tool_calls\":[{\"index\":%d,"
                           "\"function\":{\"arguments\":\"",
                           i);
            put_escaped(b, args + off,
                        (size_t)(n - off < PIECE ? n - off : PIECE));
            tg__buf_puts(b, "\"}}]}}]}\n\n");
        }
    }
    tg__buf_puts(b, "data: {\"id\":\"chatcmpl-b\",\"object\":\"chat.completion."
                    "chunk\",\"choices\":[{\"index\":0,\"delta\":{},"
                    "\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n");
}

static void anthropic(tg__buf *b, int calls)
{
    tg__buf_puts(b, "event: message_start\ndata: {\"type\":\"message_start\","
                    "\"message\":{\"id\":\"msg_b\",\"type\":\"message\","
                    "\"role\":\"assistant\",\"content\":[]}}\n\n");
    for (int i = 0; i < calls; i++) {
        char args[512];
        int n = snprintf(args, sizeof args, args_fmt, i % 97, 50 + i % 50);
        tg__buf_printf(b,
                       "event: content_block_start\ndata: {\"type\":\"content_"
                       "block_start\",\"index\":%d,\"content_block\":{\"type\":"
                       "\"tool_use\",\"id\":\"toolu_%08d\",\"name\":\"search\","
                       "\"input\":{}}}\n\n",
                       i, i);
        for (int off = 0; off < n; off += PIECE) {
            tg__buf_printf(b,
                           "event: content_block_delta\ndata: {\"type\":"
                           "\"content_block_delta\",\"index\":%d,\"delta\":{"
                           "\"type\":\"input_json_delta\",\"partial_json\":\"",
                           i);
            put_escaped(b, args + off,
                        (size_t)(n - off < PIECE ? n - off : PIECE));
            tg__buf_puts(b, "\"}}\n\n");
        }
        tg__buf_printf(b,
                       "event: content_block_stop\ndata: {\"type\":\"content_"
                       "block_stop\",\"index\":%d}\n\n",
                       i);
    }
    tg__buf_puts(b,
                 "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
}

/* Seconds to assemble the stream fed in `chunk`-byte pieces; -1 on error. */
static double feed(const char *t, size_t n, size_t chunk, int calls)
{
    tg_stream *s = NULL;
    tg_turn *turn = NULL;
    tg_error err = {0};
    double t0 = bench_now();
    int seen = 0;
    if (tg_stream_new("auto", &s, &err) != 0)
        goto fail;
    for (size_t off = 0; off < n; off += chunk) {
        size_t k = n - off < chunk ? n - off : chunk;
        if (tg_stream_feed(s, t + off, k, &err) != 0)
            goto fail;
        while (tg_stream_next_call(s) != NULL)
            seen++;
    }
    if (tg_stream_finish(s, &turn, &err) != 0)
        goto fail;
    double dt = bench_now() - t0;
    int ok = seen == calls && tg_turn_call_count(turn) == (size_t)calls;
    tg_turn_free(turn);
    tg_stream_free(s);
    return ok ? dt : -1;
fail:
    fprintf(stderr, "stream: %s\n", err.message);
    tg_stream_free(s);
    return -1;
}

int main(int argc, char **argv)
{
    int calls = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 5000;
    if (calls <= 0)
        calls = 5000;
    static const struct {
        const char *name;
        void (*make)(tg__buf *, int);
    } kinds[] = {{"openai-chat", openai_chat}, {"anthropic", anthropic}};
    int failed = 0;
    printf("bench_stream: %d streamed calls, MB/s of SSE, median of %d "
           "rounds\n",
           calls, ROUNDS);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        tg__buf b;
        tg__buf_init(&b, 0);
        kinds[k].make(&b, calls);
        double whole[ROUNDS], chunked[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            whole[r] = feed(b.data, b.len, b.len, calls);
            chunked[r] = feed(b.data, b.len, 64, calls);
            failed |= whole[r] < 0 || chunked[r] < 0;
        }
        double w = (double)b.len / 1e6 / bench_median(whole, ROUNDS);
        double c = (double)b.len / 1e6 / bench_median(chunked, ROUNDS);
        printf("  %-12s %6.1f MB  whole %7.1f MB/s  64-byte chunks %7.1f "
               "MB/s  = %.2fx whole (goal >= 0.5)\n",
               kinds[k].name, (double)b.len / 1e6, w, c, c / w);
        tg__buf_cleanup(&b);
    }
    return failed;
}
