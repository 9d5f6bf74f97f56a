/* SPDX-License-Identifier: MIT */
/*
 * http_transport.h - making the Streamable HTTP transport of an MCP client
 * session (transport.h; http.c): each message the session sends is one
 * POST to the server's endpoint, answered with one JSON message, 202, or an
 * SSE stream of messages; the transport keeps the server's Mcp-Session-Id,
 * resumes a request's stream that broke before its response (GET with
 * Last-Event-ID), opens the server's own GET stream under the versions
 * that have one, and ends the session with DELETE on close. A request
 * refused with an error status whose JSON body is the request's JSON-RPC
 * error response (2026-07-28's 400 with -32020 or -32022, 404 with -32601)
 * gets that response as a message, not request_failed: the session reads
 * the server's reason like any error. All of it runs
 * on the libuv loop through libcurl's multi interface: no thread, no
 * blocking call.
 */
#ifndef TG_REMOTE_HTTP_TRANSPORT_H
#define TG_REMOTE_HTTP_TRANSPORT_H

#include <stddef.h>
#include <uv.h>

#include "transport.h"

/* The default limit of one message (a JSON body, an SSE event's data), of a
 * request's body too: 16 MiB. */
#define TG_RHTTP_DEFAULT_MAX_MESSAGE ((size_t)16 << 20)
#define TG_RHTTP_DEFAULT_CONNECT_MS 10000u
#define TG_RHTTP_DEFAULT_CLOSE_MS 2000u
#define TG_RHTTP_DEFAULT_MAX_TRANSFERS 16u
#define TG_RHTTP_DEFAULT_MAX_RESUMES 5u
#define TG_RHTTP_DEFAULT_RETRY_MS 1000u

/* What the transport is made with. Strings are copied by tg__rhttp_new;
 * zero numbers take the defaults above. */
typedef struct tg__rhttp_opts {
    /* The endpoint, http:// or https:// (e.g. "http://127.0.0.1:8765/mcp"). */
    const char *url;
    /* Extra request headers, each "Name: value" (visible ASCII, no CR or
     * LF). Headers the transport sets itself (Content-Type, Accept,
     * Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name,
     * Last-Event-ID; Authorization when bearer_token is set) are refused. */
    const char *const *headers;
    size_t n_headers;
    /* Sent as "Authorization: Bearer <token>" when not NULL; it never
     * appears in an error message or a log. */
    const char *bearer_token;
    /* The largest message in either direction (bytes). */
    size_t max_message;
    /* A connection must be up within connect_ms. */
    unsigned connect_ms;
    /* A transfer that receives nothing for idle_ms ends (request_failed,
     * TG_EIO; the server's GET stream is exempt); curl checks it in whole
     * seconds, rounded up. 0: no idle limit (a long tool call may be
     * silent; the session's deadline bounds it and drops the request). */
    unsigned idle_ms;
    /* How long the DELETE of the session may take at close. */
    unsigned close_ms;
    /* Transfers running at once (the server's GET stream not counted); more
     * wait, in order. */
    unsigned max_transfers;
    /* Resumptions of one stream that may fail in a row (connection refused,
     * a 5xx, a stream that is not one) before its request fails. A resumed
     * stream that opens resets the count; one that ends without the
     * response is resumed again after the server's retry time. */
    unsigned max_resumes;
    /* The wait before a resumption when the server named none (SSE retry
     * field). */
    unsigned retry_ms;
} tg__rhttp_opts;

/* Makes a Streamable HTTP transport on loop, reporting to cbs with ud (the
 * session's; cbs.log is never called). *out is the transport, owned by the
 * session until its `closed` callback (transport.h). Nothing is sent until
 * the first tg__rtransport_send. Returns 0, TG_EINVAL (no URL, a URL that
 * is not http(s), a malformed or reserved header), TG_ENOMEM or TG_EIO,
 * with err filled and nothing made. */
int tg__rhttp_new(uv_loop_t *loop, const tg__rhttp_opts *o,
                  const tg__rtransport_cbs *cbs, void *ud, tg__rtransport **out,
                  tg_error *err);

#endif
