/* SPDX-License-Identifier: MIT */
/*
 * http_stream.c - the outs of the Streamable HTTP transport: where the
 * messages about one POST go (its JSON body, or its SSE stream), and a
 * session's GET stream. Messages become events in a list; a reader (the
 * HTTP request now sending the stream, via MHD's content reader) walks
 * the list and sleeps (its connection suspended) when it has written
 * everything. Under the 2025 versions events carry ids "<stream>-<seq>"
 * and stay after they are written, so a client that lost the connection
 * resumes with GET and Last-Event-ID; otherwise they are freed as they go.
 * Memory is bounded: a client that does not read loses its connection
 * once max_stream_queue bytes wait for it, and a stream kept for a resume
 * takes only responses past max_stream_retained. A 2025-11-25 response
 * stream (its priming event told the client how long to wait before it
 * comes back) is ended cleanly after poll_ms while its response is still
 * owed: the client resumes it with GET and Last-Event-ID (SSE polling), so
 * a long call holds no connection for its whole run.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"

/* ------------------------------------------------------------ events */

/* A new event: head, body and tail bytes one after another. */
static http_event *event_new(srv_msg_kind kind, uint64_t seq, bool comment,
                             const char *head, size_t hl, const char *body,
                             size_t bl, const char *tail, size_t tl)
{
    http_event *ev = malloc(sizeof *ev + hl + bl + tl + 1);
    if (ev == NULL)
        return NULL;
    ev->next = NULL;
    ev->seq = seq;
    ev->start = 0;
    ev->kind = kind;
    ev->comment = comment;
    ev->len = hl + bl + tl;
    memcpy(ev->text, head, hl);
    memcpy(ev->text + hl, body, bl);
    memcpy(ev->text + hl + bl, tail, tl);
    ev->text[ev->len] = '\0';
    return ev;
}

/* The SSE form of a message: "id: <num>-<seq>\n" when it has an id, then
 * "data: <json>\n\n" (the JSON is compact, one line, as serve.h says). */
static http_event *event_sse(const http_stream *st, srv_msg_kind kind,
                             uint64_t seq, const char *json, size_t len)
{
    char head[64];
    int hl = 0;
    if (seq > 0)
        hl = snprintf(head, sizeof head, "id: %" PRIu64 "-%" PRIu64 "\n",
                      st->num, seq);
    hl += snprintf(head + hl, sizeof head - (size_t)hl, "data: ");
    return event_new(kind, seq, false, head, (size_t)hl, json, len, "\n\n", 2);
}

static void link_event(http_stream *st, http_event *ev)
{
    ev->start = st->total;
    st->total += ev->len;
    st->held += ev->len;
    if (st->tail != NULL)
        st->tail->next = ev;
    else
        st->head = ev;
    st->tail = ev;
    if (st->reader != NULL && st->reader->cur == NULL &&
        st->mode != MODE_JSON) {
        st->reader->cur = ev;
        st->reader->off = 0;
    }
}

static void free_events(http_stream *st)
{
    http_event *ev = st->head;
    while (ev != NULL) {
        http_event *next = ev->next;
        free(ev);
        ev = next;
    }
    st->head = st->tail = NULL;
    st->held = 0;
}

/* Bytes appended that r has not written yet. */
static uint64_t unsent(const http_stream *st, const http_req *r)
{
    uint64_t pos = r->cur != NULL ? r->cur->start + r->off : st->total;
    return st->total - pos;
}

/* ------------------------------------------------------------ the out */

static void unbusy(http_stream *st)
{
    if (st->busy) {
        st->busy = false;
        st->h->busy--;
    }
}

static int stream_send(srv_out *o, srv_msg_kind kind, const char *msg,
                       size_t len)
{
    http_stream *st = (http_stream *)o;
    srv_http *h = st->h;
    if (st->ended || (st->out.closed && !st->retain))
        return -1;
    bool response = kind == SRV_MSG_RESPONSE;
    if (!response &&
        (st->mode == MODE_JSON || (st->standalone && st->reader == NULL) ||
         st->held > h->o.max_stream_retained))
        return -1;
    uint64_t seq = st->ids ? st->seq + 1 : 0;
    http_event *ev = st->mode == MODE_SSE
                         ? event_sse(st, kind, seq, msg, len)
                         : event_new(kind, seq, false, "", 0, msg, len, "", 0);
    if (ev == NULL)
        return -1;
    st->seq = seq > 0 ? seq : st->seq;
    link_event(st, ev);
    if (response) {
        st->responses++;
        if (st->handled && st->pending > 0 && --st->pending == 0)
            unbusy(st);
    }
    http_req *r = st->reader;
    if (r == NULL)
        return 0;
    if (st->mode == MODE_SSE) {
        if (unsent(st, r) > h->o.max_stream_queue)
            http_req_kill(r); /* the client does not read: cut it off */
        else
            http_req_wake(r);
    } else if (st->mode == MODE_JSON && st->pending == 0) {
        http_req_wake(r);
    }
    return 0;
}

static void stream_free(srv_out *o)
{
    http_stream *st = (http_stream *)o;
    free_events(st);
    free(st);
}

static const srv_out_ops stream_ops = {stream_send, stream_free};

http_stream *stream_new(srv_http *h, http_session *hs, srv_session *own)
{
    http_stream *st = calloc(1, sizeof *st);
    if (st == NULL) {
        if (own != NULL)
            srv_session_release(own);
        return NULL;
    }
    srv_out_init(&st->out, &stream_ops);
    st->h = h;
    st->hs = hs;
    st->own = own;
    if (hs != NULL)
        st->num = ++hs->next_num;
    return st;
}

bool stream_has_non_response(const http_stream *st)
{
    for (const http_event *ev = st->head; ev != NULL; ev = ev->next)
        if (ev->kind != SRV_MSG_RESPONSE)
            return true;
    return false;
}

void stream_decide(http_stream *st, bool sse, size_t pending)
{
    srv_http *h = st->h;
    http_event *raw = st->head;
    st->head = st->tail = NULL;
    st->total = 0;
    st->held = 0;
    st->mode = sse ? MODE_SSE : MODE_JSON;
    st->handled = true;
    st->pending = pending;
    if (pending > 0) {
        st->busy = true;
        h->busy++;
    }
    if (sse && st->priming) {
        /* 2025-11-25: an id at once, so the client can resume from here,
         * and how long to wait before it does. */
        char text[96];
        int n = snprintf(text, sizeof text,
                         "id: %" PRIu64 "-0\nretry: %u\ndata: \n\n", st->num,
                         h->o.retry_ms);
        http_event *ev = event_new(SRV_MSG_NOTIFICATION, 0, true, text,
                                   (size_t)n, "", 0, "", 0);
        if (ev != NULL)
            link_event(st, ev);
    }
    while (raw != NULL) {
        http_event *next = raw->next;
        http_event *ev = NULL;
        if (sse)
            ev = event_sse(st, raw->kind, raw->seq, raw->text, raw->len);
        else if (raw->kind == SRV_MSG_RESPONSE)
            ev = raw, raw = NULL;
        if (ev != NULL) {
            ev->next = NULL;
            link_event(st, ev);
        }
        free(raw);
        raw = next;
    }
}

char *stream_json_body(http_stream *st, size_t *len)
{
    size_t n = 0, count = 0;
    for (http_event *ev = st->head; ev != NULL; ev = ev->next)
        if (ev->kind == SRV_MSG_RESPONSE) {
            n += ev->len + 1;
            count++;
        }
    bool array = st->batch || count > 1;
    char *body = malloc(n + 3);
    if (body == NULL)
        return NULL;
    size_t at = 0;
    if (array && count > 0)
        body[at++] = '[';
    for (http_event *ev = st->head; ev != NULL; ev = ev->next) {
        if (ev->kind != SRV_MSG_RESPONSE)
            continue;
        if (at > 1 || (at == 1 && !array))
            body[at++] = ',';
        memcpy(body + at, ev->text, ev->len);
        at += ev->len;
    }
    if (array && count > 0)
        body[at++] = ']';
    body[at] = '\0';
    *len = at;
    return body;
}

char *stream_sse_body(http_stream *st, size_t *len)
{
    size_t n = 0;
    for (http_event *ev = st->head; ev != NULL; ev = ev->next)
        n += ev->len;
    char *body = malloc(n + 1);
    if (body == NULL)
        return NULL;
    size_t at = 0;
    for (http_event *ev = st->head; ev != NULL; ev = ev->next) {
        memcpy(body + at, ev->text, ev->len);
        at += ev->len;
    }
    body[at] = '\0';
    *len = at;
    return body;
}

/* ------------------------------------------------------------ readers */

void stream_attach(http_stream *st, http_req *r, bool resume, uint64_t after)
{
    http_req *old = st->reader;
    if (old != NULL && old != r) {
        /* A newer connection resumes the stream: the older one is stale. */
        st->reader = NULL;
        old->cur = NULL;
        http_req_kill(old);
    }
    if (r->st != st) {
        srv_out_ref(&st->out);
        r->st = st;
    }
    st->reader = r;
    r->off = 0;
    r->cur = st->head;
    if (resume) {
        /* A resume: from the first message after the client's id. */
        while (r->cur != NULL && (r->cur->comment || r->cur->seq <= after))
            r->cur = r->cur->next;
    }
}

void stream_detach(http_stream *st, http_req *r, bool delivered)
{
    if (st->reader != r)
        return;
    st->reader = NULL;
    r->cur = NULL;
    if (st->ended)
        return;
    if (delivered || st->standalone) {
        stream_end(st);
        return;
    }
    bool complete = st->handled && st->pending == 0;
    if (!complete && !st->gone) {
        st->gone = true;
        srv_out_closed(st->h->srv, &st->out);
    }
    /* Kept for a resume under the 2025 versions, while its session lives. */
    if (!st->retain || st->hs == NULL || st->ended)
        stream_end(st);
}

void stream_end(http_stream *st)
{
    if (st->ended)
        return;
    st->ended = true;
    unbusy(st);
    http_session *hs = st->hs;
    if (hs != NULL) {
        if (hs->notify == st) {
            hs->notify = NULL;
            srv_session_set_notify(hs->s, NULL);
        } else {
            for (http_stream **p = &hs->streams; *p != NULL; p = &(*p)->next)
                if (*p == st) {
                    *p = st->next;
                    break;
                }
        }
        hs->last_used = uv_now(st->h->loop);
        st->hs = NULL;
    }
    http_req *r = st->reader;
    if (r != NULL) {
        st->reader = NULL;
        r->cur = NULL;
        http_req_kill(r);
    }
    free_events(st);
    if (st->own != NULL) {
        srv_session_release(st->own);
        st->own = NULL;
    }
    srv_out_unref(&st->out);
}

void stream_keepalive(http_stream *st, uint64_t before)
{
    http_req *r = st->reader;
    if (st->ended || st->mode != MODE_SSE || r == NULL || !r->suspended ||
        r->last_write >= before)
        return;
    http_event *ev =
        event_new(SRV_MSG_NOTIFICATION, 0, true, ":\n\n", 3, "", 0, "", 0);
    if (ev == NULL)
        return;
    link_event(st, ev);
    http_req_wake(r);
}

void stream_poll_end(http_req *r, uint64_t before)
{
    http_stream *st = r->st;
    if (r->poll_end || r->opened >= before || st == NULL || st->ended ||
        st->reader != r || st->standalone || !st->priming || !st->retain ||
        st->hs == NULL || !st->handled || st->pending == 0)
        return;
    r->poll_end = true;
    http_req_wake(r);
}

ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    http_req *r = cls;
    http_stream *st = r->st;
    if (r->kill || r->peer_gone || st == NULL || st->ended || st->reader != r)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    size_t n = 0;
    while (n < max && r->cur != NULL) {
        http_event *ev = r->cur;
        size_t k = ev->len - r->off;
        if (k > max - n)
            k = max - n;
        memcpy(buf + n, ev->text + r->off, k);
        n += k;
        r->off += k;
        if (r->off < ev->len)
            break;
        r->cur = ev->next;
        r->off = 0;
        if (!st->retain && ev == st->head) {
            st->head = ev->next;
            if (st->tail == ev)
                st->tail = NULL;
            st->held -= ev->len;
            free(ev);
        }
    }
    if (n > 0) {
        r->last_write = uv_now(r->h->loop);
        return (ssize_t)n;
    }
    if ((!st->standalone && st->handled && st->pending == 0) || st->finish) {
        r->eos = true;
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    if (r->poll_end) /* a clean end, not eos: the stream stays resumable */
        return MHD_CONTENT_READER_END_OF_STREAM;
    http_req_suspend(r);
    return 0;
}

void stream_read_done(void *cls)
{
    http_req_unref(cls);
}
