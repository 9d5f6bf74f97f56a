/* SPDX-License-Identifier: MIT */
/*
 * stream.c - a streamed model answer (Server-Sent Events) as it arrives:
 * the bytes go through toolgate's incremental parser (tg_stream), and each
 * call it gives out complete is handed to the loop at once as a turn of
 * one call, so its tool runs while the model still writes; the text of
 * the events is read here too (the parser reads calls only), for the text
 * deltas and the assistant turn the conversation keeps. At the end of the
 * stream the whole turn gives the calls in the model's order; a call the
 * stream never said was complete (a cut stream) is handed over then, with
 * the error it ends with.
 */
#include <stdlib.h>
#include <string.h>

#include "loop_int.h"

#define MAX_LINE ((size_t)64 * 1024 * 1024)

struct tg__lsse {
    const tg__provider *prov;
    tg__lsse_ops ops;
    void *ud;
    tg_stream *s;
    char *line;
    size_t line_len, line_cap;
    char *text;
    size_t text_len;
    json_t *extra; /* new ref or NULL: stream_event's */
    tg__usage usage;
    tg_turn **calls; /* the one-call turns handed over, owned */
    size_t ncalls, cap;
    int failed;
    tg_error err;
};

int tg__lsse_new(const tg__provider *prov, const tg__lsse_ops *ops, void *ud,
                 tg__lsse **out, tg_error *err)
{
    tg__lsse *x = calloc(1, sizeof *x);
    if (x == NULL)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    x->prov = prov;
    x->ops = *ops;
    x->ud = ud;
    x->text = calloc(1, 1);
    int rc = x->text == NULL ? tg__loop_fail(err, TG_ENOMEM, "out of memory")
                             : tg_stream_new(prov->format, &x->s, err);
    if (rc != 0) {
        tg__lsse_free(x);
        return rc;
    }
    *out = x;
    return 0;
}

void tg__lsse_free(tg__lsse *x)
{
    if (x == NULL)
        return;
    tg_stream_free(x->s);
    for (size_t i = 0; i < x->ncalls; i++)
        tg_turn_free(x->calls[i]);
    free(x->calls);
    free(x->line);
    free(x->text);
    json_decref(x->extra);
    free(x);
}

static int fail(tg__lsse *x, int code, const char *what)
{
    if (!x->failed) {
        x->failed = 1;
        tg__loop_fail(&x->err, code, "%s", what);
    }
    return -1;
}

/* Hands call c (borrowed from the stream) over as a turn of its own. */
static int hand_over(tg__lsse *x, const tg_call *c)
{
    if (x->ncalls == x->cap) {
        size_t ncap = x->cap ? x->cap * 2 : 8;
        tg_turn **grown = realloc(x->calls, ncap * sizeof *grown);
        if (grown == NULL)
            return fail(x, TG_ENOMEM, "out of memory");
        x->calls = grown;
        x->cap = ncap;
    }
    const char *args = tg_call_args_json(c);
    if (args == NULL)
        args = tg_call_args_raw(c); /* malformed: it ends with the error */
    if (args == NULL)
        args = "";
    const char *tool = tg_call_tool(c) != NULL ? tg_call_tool(c) : "";
    const char *id = tg_call_id(c) != NULL ? tg_call_id(c) : "";
    tg_turn *t = NULL;
    tg_error e = {0};
    if (tg_turn_new_call(x->prov->format, id, tool, args, strlen(args), &t,
                         &e) != 0)
        return fail(x, e.code, e.message);
    x->calls[x->ncalls++] = t;
    if (x->ops.submit(x->ud, t, &e) != 0)
        return fail(x, e.code, e.message);
    return 0;
}

long tg__lsse_tokens(const tg__lsse *x)
{
    return tg__usage_tokens(&x->usage);
}

/* One line of the event stream: the text of a data line. */
static void read_line(tg__lsse *x, char *line, size_t len)
{
    if (len > 0 && line[len - 1] == '\r')
        line[--len] = '\0';
    if (len < 5 || strncmp(line, "data:", 5) != 0)
        return;
    const char *data = line + 5;
    if (*data == ' ')
        data++;
    json_t *ev = json_loads(data, 0, NULL); /* new ref */
    if (ev == NULL)
        return; /* [DONE], or an event the parser judges */
    tg__usage_update(&x->usage, ev);
    const char *t = x->prov->stream_event(ev, &x->extra);
    size_t n = t != NULL ? strlen(t) : 0;
    if (n > 0) {
        char *grown = realloc(x->text, x->text_len + n + 1);
        if (grown == NULL) {
            json_decref(ev);
            fail(x, TG_ENOMEM, "out of memory");
            return;
        }
        memcpy(grown + x->text_len, t, n + 1);
        x->text = grown;
        x->text_len += n;
        if (x->ops.text != NULL)
            x->ops.text(x->ud, t, n);
    }
    json_decref(ev);
}

int tg__lsse_feed(void *ud, const char *data, size_t n)
{
    tg__lsse *x = ud;
    if (x->failed)
        return -1;
    tg_error e = {0};
    if (tg_stream_feed(x->s, data, n, &e) != 0)
        return fail(x, e.code, e.message);
    const tg_call *c;
    while ((c = tg_stream_next_call(x->s)) != NULL)
        if (hand_over(x, c) != 0)
            return -1;
    for (size_t i = 0; i < n; i++) {
        if (data[i] == '\n') {
            if (x->line == NULL && (x->line = malloc(1)) == NULL)
                return fail(x, TG_ENOMEM, "out of memory");
            x->line[x->line_len] = '\0';
            read_line(x, x->line, x->line_len);
            x->line_len = 0;
            continue;
        }
        if (x->line_len + 2 > x->line_cap) {
            if (x->line_cap >= MAX_LINE)
                return fail(x, TG_ELIMIT, "an event line passed 64 MiB");
            size_t ncap = x->line_cap ? x->line_cap * 2 : 4096;
            char *grown = realloc(x->line, ncap);
            if (grown == NULL)
                return fail(x, TG_ENOMEM, "out of memory");
            x->line = grown;
            x->line_cap = ncap;
        }
        x->line[x->line_len++] = data[i];
    }
    return x->failed ? -1 : 0;
}

size_t tg__lsse_handed(const tg__lsse *x)
{
    return x->ncalls;
}

const char *tg__lsse_text(const tg__lsse *x)
{
    return x->text;
}

const json_t *tg__lsse_extra(const tg__lsse *x)
{
    return x->extra;
}

const tg_error *tg__lsse_error(const tg__lsse *x)
{
    return x->failed ? &x->err : NULL;
}

tg_turn *tg__lsse_turn_for(const tg__lsse *x, const char *id)
{
    for (size_t i = 0; i < x->ncalls; i++)
        if (strcmp(tg_call_id(tg_turn_call(x->calls[i], 0)), id) == 0)
            return x->calls[i];
    return NULL;
}

int tg__lsse_finish(tg__lsse *x, tg_turn **out, tg_error *err)
{
    *out = NULL;
    if (x->failed) {
        if (err != NULL)
            *err = x->err;
        return x->err.code;
    }
    if (x->line_len > 0) { /* a last line without its newline */
        x->line[x->line_len] = '\0';
        read_line(x, x->line, x->line_len);
        x->line_len = 0;
    }
    tg_turn *whole = NULL;
    int rc = tg_stream_finish(x->s, &whole, err);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < tg_turn_call_count(whole); i++) {
        const tg_call *c = tg_turn_call(whole, i);
        if (tg__lsse_turn_for(x, tg_call_id(c)) == NULL &&
            hand_over(x, c) != 0) {
            tg_turn_free(whole);
            if (err != NULL)
                *err = x->err;
            return x->err.code;
        }
    }
    *out = whole;
    return 0;
}
