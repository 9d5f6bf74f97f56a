/* SPDX-License-Identifier: MIT */
/*
 * fuzz_remote_message.c - libFuzzer target for everything the MCP client
 * session (src/remote/session.c) reads from a server. Byte 0 chooses the
 * version the session asks for (bits 0-1: negotiate, 2025-06-18,
 * 2025-11-25, 2026-07-28), how elicitations are answered (bits 2-3:
 * declined by the callback, accepted from inside it, never answered) and
 * whether the messages come as if on the first call's HTTP response
 * stream once it is sent (bit 4);
 * the rest is the server's output, one message a line, delivered through a
 * transport double (the stdio framing is the real transport's business).
 * Once the session is ready the driver lists the tools and starts two
 * calls, and cancels one halfway through the input; at the end it closes
 * the session. Besides crashes, leaks and undefined behaviour it aborts
 * when the session breaks its contract: a call ended twice, or ended after
 * its cancel, or not ended by the close; a list answered twice or never;
 * `ready` twice; `closed` other than once; a handle left on the loop.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "session.h"

typedef struct double_transport {
    tg__rtransport base;
    uv_timer_t timer;
    bool closing;
} double_transport;

typedef struct driver {
    tg__rsession *s;
    int nready, nclosed, nlists;
    bool listed, called;
    int ndone[2];
    bool canceled[2];
    uint64_t call_id[2];
    int elicit_mode;
} driver;

static void on_timer_closed(uv_handle_t *h)
{
    free(h->data);
}

static void deliver_closed(uv_timer_t *timer)
{
    double_transport *t = timer->data;
    tg_error done = {0};
    t->base.cbs.closed(t->base.ud, &done);
    uv_close((uv_handle_t *)&t->timer, on_timer_closed);
}

static int t_send(tg__rtransport *base, const char *json, size_t len,
                  const tg__rsend *m, tg_error *err)
{
    double_transport *t = (double_transport *)base;
    /* what goes with it (transport.h): requests name their method and id,
     * a tools/call its tool, and every request that carries a version in
     * its _meta names the same one */
    if (m->id != NULL && m->method == NULL)
        abort();
    if (m->method != NULL && strcmp(m->method, "tools/call") == 0 &&
        m->name == NULL)
        abort();
    if (m->method != NULL && strcmp(m->method, "initialize") != 0 &&
        memmem(json, len, "io.modelcontextprotocol/protocolVersion", 39) &&
        (m->protocol_version == NULL ||
         strcmp(m->protocol_version, "2026-07-28") != 0))
        abort();
    if (t->closing) {
        err->code = TG_EIO;
        return TG_EIO;
    }
    /* what the session sends is one compact line of JSON */
    if (len == 0 || json[0] != '{' || memchr(json, '\n', len) != NULL)
        abort();
    return 0;
}

static void t_close(tg__rtransport *base)
{
    double_transport *t = (double_transport *)base;
    if (t->closing)
        abort(); /* at most once */
    t->closing = true;
    uv_timer_start(&t->timer, deliver_closed, 0, 0);
}

static const tg__rtransport_vt double_vt = {
    .send = t_send, .drop = NULL, .close = t_close};

static void on_ready(void *ud, const tg_error *err)
{
    (void)err;
    ((driver *)ud)->nready++;
}

static void on_closed(void *ud, const tg_error *err)
{
    (void)err;
    ((driver *)ud)->nclosed++;
}

static int on_elicit(void *ud, uint64_t ticket, uint64_t call,
                     const char *params, size_t len)
{
    driver *d = ud;
    (void)params;
    (void)len;
    /* the call it is about is one the session was asked to make */
    if (call != 0 &&
        (!d->called || (call != d->call_id[0] && call != d->call_id[1])))
        abort();
    if (d->elicit_mode == 0)
        return 1; /* decline now */
    if (d->elicit_mode == 2)
        return 0; /* never answered: the close must still end the call */
    tg_error err;
    const char accept[] = "{\"action\":\"accept\",\"content\":{}}";
    if (tg__rsession_elicit_reply(d->s, ticket, accept, sizeof accept - 1,
                                  &err) != 0)
        abort();
    return 0;
}

static void on_list(void *ud, tg__rtool_list *list, const tg_error *err)
{
    driver *d = ud;
    d->nlists++;
    if ((list == NULL) == (err == NULL))
        abort();
    for (size_t i = 0; list != NULL && i < list->n; i++)
        if (list->tools[i].name == NULL ||
            list->tools[i].input_schema == NULL || list->tools[i].json == NULL)
            abort();
    tg__rtool_list_free(list);
}

static void on_progress(void *ud, double progress, double total,
                        const char *message)
{
    int *done = ud;
    (void)progress;
    (void)total;
    (void)message;
    if (*done != 0)
        abort();
}

static void on_done(void *ud, const tg__rcall_end *end)
{
    int *done = ud;
    if (end->status == TG_RCALL_RESULT &&
        (end->result == NULL || end->result[0] != '{'))
        abort();
    if (end->status != TG_RCALL_RESULT && end->err == NULL)
        abort();
    ++*done;
}

static void start_work(driver *d)
{
    tg_error err;
    if (tg__rsession_list_tools(d->s, on_list, d, &err) == 0)
        d->listed = true;
    tg__rcall_cbs cbs = {.progress = on_progress, .done = on_done};
    for (int i = 0; i < 2; i++) {
        tg__rcall_args a = {.name = i ? "slow" : "echo",
                            .arguments = "{\"text\":\"x\"}",
                            .arguments_len = 12};
        if (tg__rsession_call(d->s, &a, &cbs, &d->ndone[i], &d->call_id[i],
                              &err) != 0)
            abort();
    }
    d->called = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    static const tg__mcp_version versions[] = {
        TG_MCP_VERSION_UNKNOWN, TG_MCP_V2025_06_18, TG_MCP_V2025_11_25,
        TG_MCP_V2026_07_28};
    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0)
        return 0;
    driver d;
    memset(&d, 0, sizeof d);
    d.elicit_mode = (data[0] >> 2) & 3;
    const tg__rroot roots[] = {{.uri = "file:///work/project", .name = "p"}};
    tg__rsession_opts o = {.loop = &loop,
                           .version = versions[data[0] & 3],
                           .roots = roots,
                           .nroots = 1,
                           .max_tools = 50,
                           .max_pages = 4};
    tg__rsession_cbs cbs = {
        .ready = on_ready, .closed = on_closed, .elicit = on_elicit};
    tg_error err;
    if (tg__rsession_new(&o, &cbs, &d, &d.s, &err) != 0)
        abort();
    double_transport *t = calloc(1, sizeof *t);
    if (t == NULL)
        abort();
    t->base.vt = &double_vt;
    t->base.cbs = *tg__rsession_transport_cbs();
    t->base.ud = d.s;
    uv_timer_init(&loop, &t->timer);
    t->timer.data = t;
    if (tg__rsession_start(d.s, &t->base, &err) != 0)
        abort();

    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    const char *half = p + (end - p) / 2;
    bool cancel_done = false;
    while (p < end && d.nclosed == 0) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl != NULL ? nl : end) - p);
        char stream[24];
        if (d.called && (data[0] & 16))
            snprintf(stream, sizeof stream, "%llu",
                     (unsigned long long)d.call_id[0]);
        if (n > 0)
            t->base.cbs.message(t->base.ud, p, n,
                                d.called && (data[0] & 16) ? stream : NULL);
        p += n + (nl != NULL);
        if (d.nready > 0 && !d.called && d.nclosed == 0 &&
            tg__rsession_version(d.s) != TG_MCP_VERSION_UNKNOWN &&
            tg__rsession_capabilities(d.s) != NULL)
            start_work(&d);
        if (d.called && !cancel_done && p >= half && d.nclosed == 0) {
            cancel_done = true;
            d.canceled[1] = tg__rsession_cancel(d.s, d.call_id[1], "fuzz");
            if (d.canceled[1] && tg__rsession_cancel(d.s, d.call_id[1], "x"))
                abort();
        }
        uv_run(&loop, UV_RUN_NOWAIT);
    }
    if (d.nclosed == 0)
        tg__rsession_close(d.s);
    uv_run(&loop, UV_RUN_DEFAULT);
    if (d.nclosed != 1 || d.nready > 1)
        abort();
    if (d.listed && d.nlists != 1)
        abort();
    for (int i = 0; d.called && i < 2; i++)
        if (d.ndone[i] != (d.canceled[i] ? 0 : 1))
            abort();
    if (uv_loop_close(&loop) != 0)
        abort();
    return 0;
}
