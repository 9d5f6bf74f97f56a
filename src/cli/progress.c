/* SPDX-License-Identifier: MIT */
/*
 * progress.c - the terminal status block of progress.h. It is redrawn on
 * events rather than on a timer: the runtime delivers an event whenever a
 * call starts, produces output or ends, which is when the block changes.
 *
 * Ids, tool names and the calls' output are what callers and tools sent:
 * every one is made safe for the terminal (cli_put_field, cli_put_safe), so
 * none can clear the screen, move the cursor over the block, set the
 * window title or fake a line. With --verbose each line of a call's output
 * is shown with its call's tag and its control characters escaped (tabs
 * kept), on a terminal or not: stderr is for a person, and the raw bytes
 * are in the result and the spool.
 */
#include "progress.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct slot {
    const tg_call *call; /* borrowed: valid until its finished event */
    double started;
    size_t bytes;
} slot;

struct progress {
    FILE *out;
    bool live, verbose;
    slot *slots; /* running calls */
    size_t n, cap;
    size_t drawn; /* lines of the block on screen */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

progress *progress_new(FILE *out, bool live, bool verbose, size_t calls)
{
    progress *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->out = out;
    p->live = live;
    p->verbose = verbose;
    p->cap = calls ? calls : 1;
    p->slots = calloc(p->cap, sizeof *p->slots);
    if (p->slots == NULL) {
        free(p);
        return NULL;
    }
    return p;
}

void progress_free(progress *p)
{
    if (p == NULL)
        return;
    free(p->slots);
    free(p);
}

void progress_clear(progress *p)
{
    if (p == NULL || !p->live || p->drawn == 0)
        return;
    fprintf(p->out, "\033[%zuA\033[J", p->drawn);
    p->drawn = 0;
    fflush(p->out);
}

static void draw(progress *p)
{
    if (!p->live)
        return;
    progress_clear(p);
    double t = now_s();
    size_t shown = p->n > 20 ? 20 : p->n;
    for (size_t i = 0; i < shown; i++) {
        const slot *s = &p->slots[i];
        fputs("\033[2K  running ", p->out);
        cli_put_cell(p->out, tg_call_tool(s->call), 20);
        fputc(' ', p->out);
        cli_put_cell(p->out, tg_call_id(s->call), 28);
        fprintf(p->out, " %6.1fs %10zu B\n", t - s->started, s->bytes);
    }
    p->drawn = shown;
    if (p->n > shown) {
        fprintf(p->out, "\033[2K  ... and %zu more\n", p->n - shown);
        p->drawn++;
    }
    fflush(p->out);
}

static slot *find(progress *p, const tg_call *call)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->slots[i].call == call)
            return &p->slots[i];
    return NULL;
}

static void on_started(void *ud, const tg_call *call)
{
    progress *p = ud;
    if (p->n == p->cap) {
        slot *grown = realloc(p->slots, p->cap * 2 * sizeof *grown);
        if (grown == NULL)
            return; /* the display is best effort; the run goes on */
        p->slots = grown;
        p->cap *= 2;
    }
    p->slots[p->n++] = (slot){call, now_s(), 0};
    draw(p);
}

static void on_output(void *ud, const tg_call *call, int stream,
                      const char *data, size_t len)
{
    progress *p = ud;
    slot *s = find(p, call);
    if (s != NULL)
        s->bytes += len;
    if (p->verbose) {
        progress_clear(p);
        /* One tagged line per line of output: a tool cannot print a line
         * that looks like toolgate's own. */
        size_t at = 0;
        do {
            const char *nl = memchr(data + at, '\n', len - at);
            size_t end = nl ? (size_t)(nl - data) : len;
            fputc('[', p->out);
            cli_put_field(p->out, tg_call_id(call), 0);
            fputs(stream == 1 ? " stdout] " : " stderr] ", p->out);
            cli_put_safe(p->out, data + at, end - at, TG_TERMINAL_KEEP_LINES);
            fputc('\n', p->out);
            at = nl ? end + 1 : len;
        } while (at < len);
    }
    draw(p);
}

static void on_finished(void *ud, const tg_call *call, const tg_result *r)
{
    progress *p = ud;
    slot *s = find(p, call);
    if (s != NULL) {
        size_t i = (size_t)(s - p->slots);
        memmove(&p->slots[i], &p->slots[i + 1],
                (p->n - i - 1) * sizeof *p->slots);
        p->n--;
    }
    if (p->verbose) {
        progress_clear(p);
        fputc('[', p->out);
        cli_put_field(p->out, tg_call_id(call), 0);
        fputs("] ", p->out);
        cli_put_field(p->out, tg_call_tool(call), 0);
        fprintf(p->out, " %s in %.1f ms\n",
                tg_outcome_name(tg_result_outcome(r)),
                tg_result_duration_ms(r));
    }
    draw(p);
}

const tg_events progress_events = {
    .accepted = NULL,
    .started = on_started,
    .output = on_output,
    .finished = on_finished,
};
