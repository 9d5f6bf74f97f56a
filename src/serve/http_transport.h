/* SPDX-License-Identifier: MIT */
/*
 * http_transport.h - the Streamable HTTP transport of `toolgate serve`
 * (http.c), as the command line starts and stops it. One endpoint (default
 * /mcp) on libmicrohttpd, driven from the server's own libuv loop (srv_loop):
 * POST carries one JSON-RPC message and is answered with JSON or an SSE stream,
 * GET opens a session's server-to-client stream or resumes a POST stream
 * (Last-Event-ID), DELETE ends a session. Every request is checked first:
 * Host and Origin (DNS rebinding), the bearer token when one is set,
 * Accept, Content-Type, MCP-Protocol-Version; sizes, connections and idle
 * time are bounded. Everything runs on the loop thread.
 */
#ifndef TG_SERVE_HTTP_TRANSPORT_H
#define TG_SERVE_HTTP_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve.h"

typedef struct srv_http srv_http;

/* How to serve. Zero fields take the defaults in brackets. */
typedef struct srv_http_options {
    const char *host;           /* an address ("::1" for IPv6) or a name
                                   such as "localhost" [127.0.0.1] */
    int port;                   /* 0: an ephemeral one [0] */
    const char *endpoint;       /* the one path served ["/mcp"] */
    const char *token;          /* when set, every request needs
                                   Authorization: Bearer <token> */
    const char *token_file;     /* the token's file (its first line), when no
                                   token is given */
    const char *const *origins; /* Origin values allowed besides the
                                   loopback ones, norigins of them */
    int norigins;
    const char *caller;          /* the caller id of the sessions' calls (NULL:
                                    the server's default) */
    int64_t grace_ms;            /* unused: the server's srv_stop has it */
    size_t max_body;             /* bytes of a POST body, 413 past [4 MiB] */
    size_t max_header;           /* bytes of the request line and headers,
                                    431 past [16 KiB] */
    unsigned max_connections;    /* open at once [4096, less when the open
                                    files limit is lower] */
    unsigned max_per_ip;         /* open at once from one address [no limit] */
    unsigned idle_timeout_s;     /* a connection with no traffic that long is
                                    closed (not while it waits for a tool)
                                    [60] */
    unsigned request_timeout_ms; /* a request's headers and body must all
                                    arrive within this (slow clients)
                                    [30000] */
    size_t max_stream_queue;     /* bytes queued for a client that is not
                                    reading before its connection is
                                    closed [1 MiB] */
    size_t max_stream_retained;  /* bytes of one stream kept for a resume;
                                    past it only responses are kept
                                    [8 MiB] */
    unsigned max_sessions;       /* sessions at once, 503 past [10000] */
    unsigned session_idle_s;     /* a session nobody used that long is ended
                                    [3600] */
    unsigned keepalive_ms;       /* a comment on an SSE stream silent that
                                    long [15000] */
    unsigned retry_ms;           /* the retry: of a stream's priming event
                                    (2025-11-25) [1000] */
    unsigned poll_ms;            /* a 2025-11-25 response stream (a POST's,
                                    or its resume) still owing its response
                                    is ended cleanly after it has been open
                                    this long; the client comes back with
                                    GET and Last-Event-ID after retry_ms
                                    (SSE polling) [5000] */
    bool quiet;                  /* do not print the URL on stderr */
} srv_http_options;

/* Starts serving for `srv` on its loop: binds, listens, and prints
 * "toolgate: serving MCP on http://HOST:PORT/ENDPOINT" on stderr (unless
 * quiet). The options are copied. Returns 0 with *out the transport, or
 * TG_EINVAL (a bad option: address, port, token file, endpoint),
 * TG_EEXIST (the address is in use) or another TG_E code (it cannot be
 * bound, no memory) with err filled. */
int srv_http_start(tg__srv *srv, const srv_http_options *o, srv_http **out,
                   tg_error *err);
/* The URL served ("http://127.0.0.1:PORT/mcp"; borrowed, valid until
 * srv_http_free), with the actual port when port 0 was asked for. */
const char *srv_http_url(const srv_http *h);
/* The port bound (the actual one when port 0 was asked for). */
int srv_http_port(const srv_http *h);
/* The first step of a graceful shutdown (SIGTERM): stops accepting
 * connections (the listening socket is closed) and closes idle keep-alive
 * connections; later requests on open ones get Connection: close.
 * Requests in flight go on. Idempotent. */
void srv_http_stop_accepting(srv_http *h);
/* Once the server answered everything (srv_on_stopped): ends the GET
 * streams, lets the last responses be written (up to 2 s), then closes the
 * connections, stops the daemon and closes the transport's loop handles,
 * so the loop can end. Streams whose requests are unanswered are reported
 * with srv_out_closed. Idempotent. */
void srv_http_close(srv_http *h);
/* Frees the transport. After srv_http_close and the loop's end it touches
 * nothing else (it may come after srv_free); without srv_http_close it
 * closes first, and the loop must run once more for the handles. NULL is
 * a no-op. */
void srv_http_free(srv_http *h);

#endif
