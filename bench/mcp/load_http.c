/* SPDX-License-Identifier: MIT */
/*
 * load_http.c - the HTTP side of the MCP load client (mcp_load.c), on raw
 * sockets: the --http endpoint, connecting (and waiting until a server
 * started here listens), writing a POST or the session's DELETE with the
 * MCP headers, and reading a response: its status line and headers, then
 * its body by Content-Length or in chunks (or to EOF, left to load_chan.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_util.h"
#include "load.h"
#include "tg_test.h"

void parse_endpoint(struct opts *o)
{
    const char *s = o->http, *colon = strrchr(s, ':');
    const char *slash = colon ? strchr(colon, '/') : NULL;
    if (strncmp(s, "http://", 7) == 0)
        s += 7, colon = strrchr(s, ':'),
                slash = colon ? strchr(colon, '/') : NULL;
    if (colon == NULL || colon == s)
        die("--http wants HOST:PORT/PATH, not '%s'", o->http);
    size_t hl = (size_t)(colon - s);
    size_t pl = slash ? (size_t)(slash - colon - 1) : strlen(colon + 1);
    if (hl >= sizeof o->host || pl == 0 || pl >= sizeof o->port)
        die("--http wants HOST:PORT/PATH, not '%s'", o->http);
    memcpy(o->host, s, hl);
    o->host[hl] = '\0';
    if (o->host[0] == '[' && hl > 2 && o->host[hl - 1] == ']') {
        memmove(o->host, o->host + 1, hl - 2);
        o->host[hl - 2] = '\0';
    }
    memcpy(o->port, colon + 1, pl);
    o->port[pl] = '\0';
    snprintf(o->path, sizeof o->path, "%s", slash ? slash : "/mcp");
}

void http_resolve(struct run *r)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
    int rc = getaddrinfo(r->o.host, r->o.port, &hints, &r->addr);
    if (rc != 0)
        die("%s:%s: %s", r->o.host, r->o.port, gai_strerror(rc));
}

int http_connect(struct run *r)
{
    int fd = socket(r->addr->ai_family, SOCK_STREAM | SOCK_CLOEXEC,
                    r->addr->ai_protocol);
    if (fd < 0)
        die("socket: %s", strerror(errno));
    if (connect(fd, r->addr->ai_addr, r->addr->ai_addrlen) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/* Waits until the endpoint accepts a connection (the server started here
 * listens), dying when the server exits first or start_timeout passes. */
void wait_for_port(struct run *r)
{
    double until = bench_now() + (double)r->o.start_timeout_ms / 1000;
    for (;;) {
        int fd = http_connect(r);
        if (fd >= 0) {
            close(fd);
            return;
        }
        if (r->server <= 0)
            die("cannot connect to %s:%s: %s", r->o.host, r->o.port,
                strerror(errno));
        check_server(r, 0);
        if (bench_now() > until)
            die("the server did not listen on %s:%s within %ld ms", r->o.host,
                r->o.port, r->o.start_timeout_ms);
        tg_test_sleep_ms(20);
    }
}

/* Appends one POST (or DELETE, body NULL) of the endpoint to c->out. */
void http_request(struct run *r, struct chan *c, const char *method,
                  const char *mcp_name, const char *body, size_t len)
{
    char head[1536];
    int n = snprintf(head, sizeof head,
                     "%s %s HTTP/1.1\r\nHost: %s:%s\r\n"
                     "Accept: application/json, text/event-stream\r\n",
                     body ? "POST" : "DELETE", r->o.path, r->o.host, r->o.port);
    if (r->session[0])
        n += snprintf(head + n, sizeof head - (size_t)n,
                      "Mcp-Session-Id: %s\r\n", r->session);
    if (r->version[0])
        n += snprintf(head + n, sizeof head - (size_t)n,
                      "MCP-Protocol-Version: %s\r\n", r->version);
    if (method && strcmp(r->o.version, "2026-07-28") >= 0)
        n += snprintf(head + n, sizeof head - (size_t)n,
                      "Mcp-Method: %s\r\n%s%s%s", method,
                      mcp_name ? "Mcp-Name: " : "", mcp_name ? mcp_name : "",
                      mcp_name ? "\r\n" : "");
    n += snprintf(
        head + n, sizeof head - (size_t)n,
        "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
        body ? len : 0);
    buf_add(&c->out, head, (size_t)n);
    if (body)
        buf_add(&c->out, body, len);
    c->busy = 1;
    struct buf keep = c->resp.body; /* reused, emptied */
    keep.len = 0;
    c->resp = (struct http_resp){.length = -1, .body = keep};
}

/* The value of header `name` in the header block h[0..n), or NULL;
 * *vlen its length. */
static const char *header_value(const char *h, size_t n, const char *name,
                                size_t *vlen)
{
    size_t nl = strlen(name);
    const char *p = memchr(h, '\n', n), *end = h + n;
    while (p && ++p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL)
            break;
        if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 &&
            p[nl] == ':') {
            const char *v = p + nl + 1, *ve = eol;
            while (v < ve && (*v == ' ' || *v == '\t'))
                v++;
            while (ve > v && (ve[-1] == '\r' || ve[-1] == ' '))
                ve--;
            *vlen = (size_t)(ve - v);
            return v;
        }
        p = eol;
    }
    return NULL;
}

/* Parses the status line and headers once they are all in c->in: 0 done,
 * 1 need more. */
int http_head(struct run *r, struct chan *c)
{
    struct http_resp *h = &c->resp;
    const char *end = memmem(c->in.p, c->in.len, "\r\n\r\n", 4);
    if (end == NULL) {
        if (c->in.len > 65536)
            die("an HTTP response's headers are over 64 KiB");
        return 1;
    }
    h->head_len = (size_t)(end - c->in.p) + 4;
    h->pos = h->head_len;
    const char *hd = c->in.p;
    if (c->in.len < 12 || strncmp(hd, "HTTP/1.", 7) != 0)
        die("not an HTTP/1.x response: '%.40s'", hd);
    h->status = (int)strtol(hd + 9, NULL, 10);
    size_t vl;
    const char *v;
    if ((v = header_value(hd, h->head_len, "Content-Length", &vl)))
        h->length = strtoll(v, NULL, 10);
    if ((v = header_value(hd, h->head_len, "Transfer-Encoding", &vl)))
        h->chunked = vl >= 7 && strncasecmp(v + vl - 7, "chunked", 7) == 0;
    if ((v = header_value(hd, h->head_len, "Connection", &vl)))
        h->close = vl == 5 && strncasecmp(v, "close", 5) == 0;
    if ((v = header_value(hd, h->head_len, "Content-Type", &vl)))
        h->sse = vl >= 17 && strncasecmp(v, "text/event-stream", 17) == 0;
    if ((v = header_value(hd, h->head_len, "Mcp-Session-Id", &vl))) {
        if (vl >= sizeof r->session)
            die("a session id of %zu bytes", vl);
        memcpy(r->session, v, vl);
        r->session[vl] = '\0';
    }
    if (h->status == 204 || h->status == 304 || h->status / 100 == 1)
        h->length = 0;
    if (h->length < 0 && !h->chunked)
        h->close = 1; /* the body ends with the connection */
    h->headers_done = 1;
    return 0;
}

/* Moves what is complete of the body from c->in into c->resp.body: 0 when
 * the whole response is in, 1 need more. */
int http_body(struct chan *c)
{
    struct http_resp *h = &c->resp;
    char *p = c->in.p;
    size_t len = c->in.len;
    if (!h->chunked) {
        if (h->length < 0)
            return 1; /* to EOF */
        if ((long long)(len - h->pos) < h->length)
            return 1;
        buf_add(&h->body, p + h->pos, (size_t)h->length);
        h->pos += (size_t)h->length;
        return 0;
    }
    for (;;) {
        if (h->chunk_left > 0) {
            size_t have = len - h->pos;
            size_t take =
                have < (size_t)h->chunk_left ? have : (size_t)h->chunk_left;
            buf_add(&h->body, p + h->pos, take);
            h->pos += take;
            h->chunk_left -= (long long)take;
            if (h->chunk_left > 0)
                return 1;
            h->chunk_left = -2; /* the CRLF after the data */
        }
        const char *eol = memmem(p + h->pos, len - h->pos, "\r\n", 2);
        if (eol == NULL)
            return 1;
        size_t linelen = (size_t)(eol - (p + h->pos));
        if (h->chunk_left == -2) {
            if (linelen != 0)
                die("a chunk of an HTTP response does not end with CRLF");
            h->pos += 2;
            h->chunk_left = 0;
            continue;
        }
        if (h->in_trailer) {
            h->pos += linelen + 2;
            if (linelen == 0)
                return 0;
            continue;
        }
        char *e;
        long long size = strtoll(p + h->pos, &e, 16);
        if (e == p + h->pos || size < 0 || size > (long long)MAX_MESSAGE)
            die("a bad chunk size in an HTTP response: '%.20s'", p + h->pos);
        h->pos += linelen + 2;
        if (size == 0)
            h->in_trailer = 1;
        else
            h->chunk_left = size;
        if (h->body.len > MAX_MESSAGE)
            die("an HTTP response body over %u bytes", MAX_MESSAGE);
    }
}
