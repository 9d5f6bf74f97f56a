/* SPDX-License-Identifier: MIT */
/*
 * progress.c - the terminal status block of progress.h. It is redrawn on
 * events rather than on a timer: the runtime delivers an event whenever a
 * call starts, produces output or ends, which is when the block changes.
 */
#include "progress.h"

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
        fprintf(p->out, "\033[2K  running %-20s %-28s %6.1fs %10zu B\n",
                tg_call_tool(s->call), tg_call_id(s->call), t - s->started,
                s->bytes);
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
        fprintf(p->out, "[%s %s] ", tg_call_id(call),
                stream == 2 ? "stderr" : "stdout");
        fwrite(data, 1, len, p->out);
        if (len == 0 || data[len - 1] != '\n')
            fputc('\n', p->out);
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
        fprintf(p->out, "[%s] %s %s in %.1f ms\n", tg_call_id(call),
                tg_call_tool(call), tg_outcome_name(tg_result_outcome(r)),
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
