/* SPDX-License-Identifier: MIT */
/*
 * http_read.c - reading one response of the Streamable HTTP transport
 * (http_int.h), from inside libcurl's header and write callbacks: the
 * Content-Type and Mcp-Session-Id headers; then, at the first body byte,
 * what the body is. A 2xx event stream is fed to the SSE reader
 * (formats/sse.h) and each event's data handed to the session as it
 * completes, with the event id and retry time kept for a resumption; a 2xx
 * JSON body is gathered up to the message limit; an error status keeps its
 * first bytes for the failure's message and stops reading there.
 *
 * Memory is bounded by the message limit: a body or an event over it stops
 * the transfer (TG_ELIMIT in x->fail) instead of growing. Returning 0 from
 * the write callback is how a transfer is stopped from here; http.c then
 * reads x->fail or the status to say why.
 */
#include "http_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jsonrpc.h"

/* ----------------------------------------------------------- matching */

/* An error without id counts: the server could not read the request's. */
int tg__rhttp_answers(const xfer *x, const char *json, size_t len)
{
    tg__rpc_batch b;
    tg__rpc_limits lim = {0};
    lim.max_bytes = x->h->o.max_message;
    if (tg__rpc_read(&b, json, len, &lim) != 0)
        return 0;
    int yes = 0;
    if (b.n == 1 &&
        (b.msgs[0].kind == TG_RPC_RESULT || b.msgs[0].kind == TG_RPC_ERROR)) {
        const tg__rpc_id *id = &b.msgs[0].id;
        size_t n = strlen(x->id);
        if (id->kind == TG_RPC_ID_NONE)
            yes = b.msgs[0].kind == TG_RPC_ERROR;
        else if (id->json_len == n && memcmp(id->json, x->id, n) == 0)
            yes = 1;
        else if (id->kind == TG_RPC_ID_INT) {
            char *end = NULL;
            long long v = strtoll(x->id, &end, 10);
            yes = end != x->id && *end == '\0' && v == id->num;
        }
    }
    tg__rpc_batch_cleanup(&b);
    return yes;
}

void tg__rhttp_deliver(xfer *x, const char *json, size_t len)
{
    rhttp *h = x->h;
    if (x->id != NULL && !x->got_response && tg__rhttp_answers(x, json, len)) {
        x->got_response = 1;
        tg__rhttp_answered(x);
    }
    h->cbs.message(h->ud, json, len, x->id);
}

/* ------------------------------------------------------------ headers */

/* CURLOPT_HEADERFUNCTION: one header line (with its CRLF). */
static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    xfer *x = ud;
    size_t len = size * n;
    if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {
        /* A new response (after a 1xx): forget the last one's. */
        x->ctype[0] = '\0';
        x->sid[0] = '\0';
        return len;
    }
    const char *colon = memchr(p, ':', len);
    if (colon == NULL)
        return len;
    size_t nlen = (size_t)(colon - p);
    const char *v = colon + 1, *end = p + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' ||
                       end[-1] == '\t'))
        end--;
    size_t vlen = (size_t)(end - v);
    if (nlen == 12 && strncasecmp(p, "content-type", 12) == 0) {
        size_t k = vlen < sizeof x->ctype - 1 ? vlen : sizeof x->ctype - 1;
        for (size_t i = 0; i < k; i++) {
            char c = v[i];
            x->ctype[i] = c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
        }
        x->ctype[k] = '\0';
    } else if (nlen == 14 && strncasecmp(p, "mcp-session-id", 14) == 0) {
        x->sid[0] = '\0';
        if (vlen > 0 && vlen <= TG__RHTTP_SID_MAX) {
            memcpy(x->sid, v, vlen);
            x->sid[vlen] = '\0';
            if (!tg__rhttp_visible(x->sid, TG__RHTTP_SID_MAX))
                x->sid[0] = '\0'; /* unusable in a header: not taken */
        }
    }
    return len;
}

/* --------------------------------------------------------------- body */

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Whether a Content-Type names JSON (application/json, or +json). */
static int ctype_json(const char *ct)
{
    if (ct[0] == '\0' || starts(ct, "application/json"))
        return 1;
    const char *semi = strchr(ct, ';');
    size_t n = semi ? (size_t)(semi - ct) : strlen(ct);
    while (n > 0 && ct[n - 1] == ' ')
        n--;
    return n >= 5 && memcmp(ct + n - 5, "+json", 5) == 0;
}

/* Decides how to read x's body, at its first byte. */
static void decide(xfer *x)
{
    rhttp *h = x->h;
    long status = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    tg__rhttp_headers_done(x, status);
    if (status < 200 || status >= 300) {
        /* A request's POST refused with a JSON body may carry the
         * request's JSON-RPC error (2026-07-28 says why in one: -32020,
         * -32022 with the versions served, -32601 with 404). */
        x->mode = x->kind == X_POST && !x->resuming && x->id != NULL &&
                          x->ctype[0] != '\0' && ctype_json(x->ctype)
                      ? TG__RHTTP_ERROR_JSON
                      : TG__RHTTP_ERROR;
        return;
    }
    if (x->kind == X_DELETE) {
        x->mode = TG__RHTTP_SKIP;
        return;
    }
    if (starts(x->ctype, "text/event-stream")) {
        x->mode = TG__RHTTP_SSE;
        x->opened = 1;
        tg__sse_init(&x->sse, h->o.max_message);
        x->sse_live = 1;
        /* The stream's last event id goes on from the stream it resumes,
         * as a browser's EventSource keeps it across reconnections. */
        if (x->last_id != NULL && tg__buf_puts(&x->sse.id, x->last_id) != 0) {
            tg__error_set(&x->fail, TG_ENOMEM, "out of memory");
            x->mode = TG__RHTTP_SKIP;
        }
        return;
    }
    if (x->kind == X_LISTEN || x->resuming) {
        x->mode = TG__RHTTP_SKIP; /* a GET that is no stream: not opened */
        return;
    }
    if (!ctype_json(x->ctype)) {
        char shown[72];
        tg__error_set(&x->fail, TG_EIO,
                      "the server answered with Content-Type %s, neither "
                      "JSON nor an event stream",
                      tg__text_show(x->ctype, shown, sizeof shown));
        x->mode = TG__RHTTP_SKIP;
        return;
    }
    curl_off_t cl = -1;
    curl_easy_getinfo(x->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
    if (cl > 0 && (uint64_t)cl > h->o.max_message) {
        tg__error_set(&x->fail, TG_ELIMIT,
                      "the server's response of %lld bytes passes the "
                      "message limit of %zu bytes",
                      (long long)cl, h->o.max_message);
        x->mode = TG__RHTTP_SKIP;
        return;
    }
    x->mode = TG__RHTTP_JSON;
}

/* The SSE reader's callback: one event of x's stream. */
static int on_event(void *ud, const tg__sse_event *ev, tg_error *err)
{
    (void)err;
    xfer *x = ud;
    if (x->last_id == NULL || strcmp(x->last_id, ev->id) != 0) {
        free(x->last_id);
        x->last_id = NULL;
        /* An id unfit for a header cannot be sent back: no resumption. */
        if (ev->id_len > 0 && ev->id_len <= TG__RHTTP_EVENT_ID_MAX &&
            strspn(ev->id,
                   " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNO"
                   "PQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~") ==
                ev->id_len)
            x->last_id = strdup(ev->id);
    }
    if (ev->data_len == 0 || ev->type_len != 7 ||
        memcmp(ev->type, "message", 7) != 0)
        return 0; /* a priming event, or not an MCP message */
    tg__rhttp_deliver(x, ev->data, ev->data_len);
    return x->dropped || x->h->closing ? TG_ECANCELED : 0;
}

/* CURLOPT_WRITEFUNCTION: body bytes. Returning less than given stops the
 * transfer. */
static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    xfer *x = ud;
    rhttp *h = x->h;
    size_t len = size * n;
    if (x->dropped || h->closing)
        return 0;
    if (x->mode == TG__RHTTP_UNREAD)
        decide(x);
    if (x->fail.code != 0)
        return 0;
    switch (x->mode) {
    case TG__RHTTP_ERROR:
    case TG__RHTTP_ERROR_JSON: {
        size_t cap = x->mode == TG__RHTTP_ERROR ? TG__RHTTP_EXCERPT
                                                : TG__RHTTP_ERROR_BODY;
        size_t room = cap - x->in.len;
        if (tg__buf_append(&x->in, p, len < room ? len : room) != 0 ||
            len >= room)
            return 0; /* enough to quote: stop there */
        return len;
    }
    case TG__RHTTP_JSON:
        if (len > h->o.max_message - x->in.len) {
            tg__error_set(&x->fail, TG_ELIMIT,
                          "the server's response passes the message limit "
                          "of %zu bytes",
                          h->o.max_message);
            return 0;
        }
        if (tg__buf_append(&x->in, p, len) != 0) {
            tg__error_set(&x->fail, TG_ENOMEM, "out of memory");
            return 0;
        }
        return len;
    case TG__RHTTP_SSE: {
        tg_error e;
        int rc = tg__sse_feed(&x->sse, p, len, on_event, x, &e);
        if (x->sse.retry_ms >= 0)
            x->retry_ms = x->sse.retry_ms;
        if (rc == 0)
            return len;
        if (rc == TG_ELIMIT)
            tg__error_set(&x->fail, TG_ELIMIT,
                          "an event of the server's stream passes the "
                          "message limit of %zu bytes",
                          h->o.max_message);
        else if (rc != TG_ECANCELED)
            x->fail = e;
        return 0;
    }
    default:
        return len;
    }
}

void tg__rhttp_read_setup(xfer *x, CURL *e)
{
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
}

void tg__rhttp_read_reset(xfer *x)
{
    x->mode = TG__RHTTP_UNREAD;
    x->opened = 0;
    x->ctype[0] = '\0';
    x->sid[0] = '\0';
    tg__buf_cleanup(&x->in);
    if (x->sse_live)
        tg__sse_cleanup(&x->sse);
    x->sse_live = 0;
    tg__error_clear(&x->fail);
}
