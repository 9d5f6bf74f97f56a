/* SPDX-License-Identifier: MIT */
/*
 * http_opts.c - the options of the Streamable HTTP transport
 * (http_transport.h): checked before anything is made (a URL curl can
 * take, extra headers that cannot inject a line or override what the
 * transport itself sends, a token fit for a header), given their defaults,
 * and copied into the transport.
 */
#include "http_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Headers the transport sets itself: a caller's copy would contradict it. */
static const char *const reserved[] = {
    "content-type",         "accept",     "content-length",
    "transfer-encoding",    "expect",     "mcp-session-id",
    "mcp-protocol-version", "mcp-method", "mcp-name",
    "last-event-id",        NULL};

static int is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Checks "Name: value": a token name, a value of visible ASCII, space and
 * tab. Returns the name's length, 0 when malformed. */
static size_t header_name_len(const char *line)
{
    size_t n = 0;
    while (is_tchar((unsigned char)line[n]))
        n++;
    if (n == 0 || line[n] != ':')
        return 0;
    for (const char *v = line + n + 1; *v != '\0'; v++) {
        unsigned char c = (unsigned char)*v;
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return 0;
    }
    return n;
}

int tg__rhttp_check_opts(const tg__rhttp_opts *o, tg_error *err)
{
    char shown[TG__SHOWN_ID_SIZE];
    if (o == NULL || o->url == NULL)
        return tg__error_set(err, TG_EINVAL, "the MCP server's URL is missing");
    if (strncasecmp(o->url, "http://", 7) != 0 &&
        strncasecmp(o->url, "https://", 8) != 0)
        return tg__error_set(err, TG_EINVAL,
                             "the MCP server's URL %s is not http:// or "
                             "https://",
                             tg__text_show(o->url, shown, sizeof shown));
    if (!tg__rhttp_visible(o->url, 8192))
        return tg__error_set(err, TG_EINVAL,
                             "the MCP server's URL %s holds spaces or "
                             "control characters",
                             tg__text_show(o->url, shown, sizeof shown));
    for (size_t i = 0; i < o->n_headers; i++) {
        const char *line = o->headers[i];
        size_t n = line != NULL ? header_name_len(line) : 0;
        if (n == 0)
            return tg__error_set(err, TG_EINVAL,
                                 "header %zu is not \"Name: value\" of "
                                 "printable characters",
                                 i + 1);
        int clash = o->bearer_token != NULL && n == 13 &&
                    strncasecmp(line, "authorization", 13) == 0;
        for (size_t k = 0; !clash && reserved[k] != NULL; k++)
            clash = strlen(reserved[k]) == n &&
                    strncasecmp(line, reserved[k], n) == 0;
        if (clash)
            return tg__error_set(err, TG_EINVAL,
                                 "header %.*s is set by the transport itself",
                                 (int)(n < 40 ? n : 40), line);
    }
    if (o->bearer_token != NULL && !tg__rhttp_visible(o->bearer_token, 8192))
        return tg__error_set(err, TG_EINVAL,
                             "the bearer token is empty, too long, or holds "
                             "spaces or control characters");
    return 0;
}

void tg__rhttp_defaults(tg__rhttp_opts *o)
{
    if (o->max_message == 0)
        o->max_message = TG_RHTTP_DEFAULT_MAX_MESSAGE;
    if (o->connect_ms == 0)
        o->connect_ms = TG_RHTTP_DEFAULT_CONNECT_MS;
    if (o->close_ms == 0)
        o->close_ms = TG_RHTTP_DEFAULT_CLOSE_MS;
    if (o->max_transfers == 0)
        o->max_transfers = TG_RHTTP_DEFAULT_MAX_TRANSFERS;
    if (o->max_resumes == 0)
        o->max_resumes = TG_RHTTP_DEFAULT_MAX_RESUMES;
    if (o->retry_ms == 0)
        o->retry_ms = TG_RHTTP_DEFAULT_RETRY_MS;
    /* The strings live in the transport's own copies. */
    o->url = NULL;
    o->headers = NULL;
    o->bearer_token = NULL;
}

int tg__rhttp_copy_opts(rhttp *h, const tg__rhttp_opts *o, tg_error *err)
{
    h->url = strdup(o->url);
    if (h->url == NULL)
        goto fail;
    if (o->n_headers > 0) {
        h->headers = calloc(o->n_headers, sizeof *h->headers);
        if (h->headers == NULL)
            goto fail;
        for (; h->n_headers < o->n_headers; h->n_headers++) {
            h->headers[h->n_headers] = strdup(o->headers[h->n_headers]);
            if (h->headers[h->n_headers] == NULL)
                goto fail;
        }
    }
    if (o->bearer_token != NULL) {
        /* One allocation of the exact size: no copy of the token is left
         * behind in freed memory by a growing buffer. */
        static const char prefix[] = "Authorization: Bearer ";
        size_t n = strlen(o->bearer_token);
        h->auth = malloc(sizeof prefix + n);
        if (h->auth == NULL)
            goto fail;
        memcpy(h->auth, prefix, sizeof prefix - 1);
        memcpy(h->auth + sizeof prefix - 1, o->bearer_token, n + 1);
    }
    return 0;
fail:
    return tg__error_set(err, TG_ENOMEM, "out of memory");
}
