/* SPDX-License-Identifier: MIT */
/*
 * http.h - the Streamable HTTP transport of `toolgate serve` (http.c), as
 * the command line starts and stops it. One endpoint (default /mcp) on
 * libmicrohttpd, driven from the server's own libuv loop (srv_loop): POST
 * carries one JSON-RPC message and is answered with JSON or an SSE stream,
 * GET opens a session's server-to-client stream or resumes a POST stream
 * (Last-Event-ID), DELETE ends a session. Every request is checked first:
 * Host and Origin (DNS rebinding), the bearer token when one is set,
 * Accept, Content-Type, MCP-Protocol-Version; sizes, connections and idle
 * time are bounded. Everything runs on the loop thread.
 */
#ifndef TG_SERVE_HTTP_H
#define TG_SERVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "serve.h"

typedef struct srv_http srv_http;

/* How to serve. Zero fields take the defaults in brackets. */
typedef struct srv_http_options {
    const char *host;     /* address to bind: an IPv4 or IPv6 literal or
                             "localhost" [127.0.0.1] */
    int port;             /* 0: an ephemeral port (see srv_http_url) */
    const char *endpoint; /* the one path served ["/mcp"] */
    const char *token;    /* when set, every request needs
                             Authorization: Bearer <token> */
    const char *const *allow_origins; /* Origin values allowed besides the
                                         loopback ones, n_allow_origins */
    size_t n_allow_origins;
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
    bool quiet;                  /* do not print the URL on stderr */
} srv_http_options;

/* Starts serving for `srv` on its loop: binds, listens, and prints
 * "toolgate: serving MCP on http://HOST:PORT/ENDPOINT" on stderr (unless
 * quiet). The options are copied. Returns the transport, or NULL with err
 * filled (the address cannot be bound, bad options, no memory). */
srv_http *srv_http_start(tg_srv *srv, const srv_http_options *o, tg_error *err);
/* The URL served ("http://127.0.0.1:PORT/mcp"; borrowed, valid until
 * srv_http_free), with the actual port when port 0 was asked for. */
const char *srv_http_url(const srv_http *h);
/* The first step of a graceful shutdown: stops accepting connections (the
 * listening socket is closed), closes idle keep-alive connections, and
 * answers every later request on an open one with Connection: close.
 * Requests in flight go on; once srv_stopping(srv) and none is left, the
 * transport closes its streams and connections and its handles leave the
 * loop by themselves. Idempotent. */
void srv_http_quiesce(srv_http *h);
/* Closes whatever is still open (streams whose requests are unanswered are
 * reported with srv_out_closed), stops the daemon and closes the
 * transport's loop handles; the memory goes when their close callbacks
 * have run, so the loop must run once more (srv_run or srv_free does).
 * NULL is a no-op. */
void srv_http_free(srv_http *h);

#endif
