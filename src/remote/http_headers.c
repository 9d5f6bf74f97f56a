/* SPDX-License-Identifier: MIT */
/*
 * http_headers.c - the request headers of the Streamable HTTP transport
 * (http_int.h): what every transfer bears (the caller's extra headers, the
 * bearer token, the protocol version, the session id under the 2025
 * versions) and what depends on its kind: Content-Type and Accept of a
 * POST, Accept and Last-Event-ID of a GET that resumes a stream or opens
 * the server's own, and under 2026-07-28 Mcp-Method and Mcp-Name, their
 * values base64-encoded the way that version says when they are not plain
 * visible ASCII.
 */
#include "http_int.h"

#include <openssl/evp.h>
#include <string.h>

/* Whether s is fit for a header value as it is: visible ASCII, space and
 * tab, no whitespace at either end. */
static int header_plain(const char *s)
{
    size_t n = strlen(s);
    if (n > 0 &&
        (s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c >= 0x7f)
            return 0;
    }
    /* A value that looks encoded is encoded, so it reads back as itself. */
    return !(strncmp(s, "=?base64?", 9) == 0 && n >= 11 &&
             strcmp(s + n - 2, "?=") == 0);
}

int tg__rhttp_visible(const char *s, size_t max)
{
    size_t n = 0;
    for (; s[n] != '\0'; n++)
        if ((unsigned char)s[n] <= 0x20 || (unsigned char)s[n] >= 0x7f)
            return 0;
    return n > 0 && n <= max;
}

/* Appends "Name: value" to the list, the value as MCP's header encoding
 * wants it (2026-07-28): as it is when plain, else "=?base64?...?=". */
static int add_mcp_header(struct curl_slist **l, tg__buf *b, const char *name,
                          const char *value)
{
    b->len = 0;
    int rc = tg__buf_printf(b, "%s: ", name);
    if (rc == 0 && header_plain(value))
        rc = tg__buf_puts(b, value);
    else if (rc == 0) {
        size_t n = strlen(value);
        rc = tg__buf_reserve(b, 9 + (n + 2) / 3 * 4 + 3);
        if (rc == 0) {
            memcpy(b->data + b->len, "=?base64?", 9);
            b->len += 9;
            b->len +=
                (size_t)EVP_EncodeBlock((unsigned char *)b->data + b->len,
                                        (const unsigned char *)value, (int)n);
            rc = tg__buf_puts(b, "?=");
        }
    }
    return rc == 0 ? tg__rhttp_append(l, tg__buf_cstr(b)) : rc;
}

int tg__rhttp_append(struct curl_slist **l, const char *line)
{
    struct curl_slist *n = curl_slist_append(*l, line);
    if (n == NULL)
        return TG_ENOMEM;
    *l = n;
    return 0;
}

const char *tg__rhttp_version(const rhttp *h, const xfer *x)
{
    return x->version != NULL ? x->version : h->version;
}

int tg__rhttp_modern(const rhttp *h, const xfer *x)
{
    const char *v = tg__rhttp_version(h, x);
    return v != NULL && strcmp(v, TG__RHTTP_V2026) == 0;
}

/* The request headers of x's next transfer. */
int tg__rhttp_build_headers(rhttp *h, xfer *x, tg__buf *b)
{
    struct curl_slist **l = &x->hdrs;
    int rc = 0;
    const char *v = tg__rhttp_version(h, x);
    if (x->kind == X_POST && !x->resuming)
        rc = tg__rhttp_append(l, "Content-Type: application/json");
    if (rc == 0)
        rc = tg__rhttp_append(l, x->kind == X_POST && !x->resuming
                                     ? "Accept: application/json, "
                                       "text/event-stream"
                                     : "Accept: text/event-stream");
    /* No "Expect: 100-continue" round trip before a large body. */
    if (rc == 0)
        rc = tg__rhttp_append(l, "Expect:");
    for (size_t i = 0; rc == 0 && i < h->n_headers; i++)
        rc = tg__rhttp_append(l, h->headers[i]);
    if (rc == 0 && h->auth != NULL)
        rc = tg__rhttp_append(l, h->auth);
    if (rc == 0 && v != NULL) {
        b->len = 0;
        rc = tg__buf_printf(b, "MCP-Protocol-Version: %s", v);
        if (rc == 0)
            rc = tg__rhttp_append(l, tg__buf_cstr(b));
    }
    x->sent_session = 0;
    if (rc == 0 && h->session_id != NULL && !tg__rhttp_modern(h, x)) {
        b->len = 0;
        rc = tg__buf_printf(b, "Mcp-Session-Id: %s", h->session_id);
        if (rc == 0)
            rc = tg__rhttp_append(l, tg__buf_cstr(b));
        x->sent_session = 1;
    }
    if (rc == 0 && x->kind == X_POST && !x->resuming &&
        tg__rhttp_modern(h, x)) {
        if (x->method != NULL)
            rc = add_mcp_header(l, b, "Mcp-Method", x->method);
        if (rc == 0 && x->name != NULL)
            rc = add_mcp_header(l, b, "Mcp-Name", x->name);
    }
    if (rc == 0 && x->kind != X_DELETE && x->last_id != NULL &&
        (x->resuming || x->kind == X_LISTEN)) {
        b->len = 0;
        rc = tg__buf_printf(b, "Last-Event-ID: %s", x->last_id);
        if (rc == 0)
            rc = tg__rhttp_append(l, tg__buf_cstr(b));
    }
    return rc;
}
