/* SPDX-License-Identifier: MIT */
/*
 * transport.h - how an MCP client session (src/remote/session.c) moves
 * JSON-RPC messages to and from one MCP server, whatever carries them: a
 * subprocess's stdin and stdout, one message a line (stdio.c), or Streamable
 * HTTP through libcurl's multi interface (http.c). The session sees only
 * whole messages: it never knows about lines, bodies, SSE events, session
 * ids or resumption, which are each transport's business.
 *
 * Everything here runs on the libuv loop the transport was made on; no
 * callback is ever called from inside the transport function that the
 * session called (they come from the loop), so the session may call the
 * transport from a callback.
 *
 * Lifetime: the session owns a transport from its constructor until the
 * `closed` callback, which comes exactly once (the server exited or hung up,
 * the connection failed for good, or the session called
 * tg__rtransport_close). After `closed` returns the transport frees itself:
 * the session must not touch it again.
 */
#ifndef TG_REMOTE_TRANSPORT_H
#define TG_REMOTE_TRANSPORT_H

#include <stddef.h>

#include "error.h"

typedef struct tg__rtransport tg__rtransport;

/* What a transport tells its session (ud is the session's pointer). */
typedef struct tg__rtransport_cbs {
    /* One whole JSON-RPC message from the server: a line of stdout, a JSON
     * response body, or one SSE event's data. Borrowed for the call; not
     * validated beyond its size (the session parses it). `stream`: the id
     * (as in tg__rsend) of the request whose HTTP response stream carried
     * the message, NULL when none did (stdio, the GET stream, a JSON
     * body answering a notification). Borrowed for the call. */
    void (*message)(void *ud, const char *json, size_t len, const char *stream);
    /* A request the session sent will get no response through this
     * transport: its HTTP POST failed (status 4xx/5xx other than a session's
     * end, connection refused, timeout) or its response stream ended before
     * the response and could not be resumed. `id` is the request's id as
     * the session gave it in tg__rsend; err says why (code TG_EIO,
     * TG_EPERM for 401/403, TG_ELIMIT for a message over the size limit).
     * The transport stays usable. Never called by stdio. */
    void (*request_failed)(void *ud, const char *id, const tg_error *err);
    /* One line the server wrote to stderr (stdio only; may be NULL). */
    void (*log)(void *ud, const char *line, size_t len);
    /* The transport carries nothing more: the process exited, the HTTP
     * session ended (404 on a request bearing its id), the connection failed
     * for good, or tg__rtransport_close finished. err (borrowed) says why;
     * its code is 0 after a tg__rtransport_close that went as asked. */
    void (*closed)(void *ud, const tg_error *err);
} tg__rtransport_cbs;

/* What goes with a message the session sends. The strings are borrowed for
 * the call. */
typedef struct tg__rsend {
    /* The method of a request or notification; NULL for a response to a
     * server's request. HTTP sends it as Mcp-Method under 2026-07-28. */
    const char *method;
    /* params.name of a tools/call (Mcp-Name under 2026-07-28), or NULL. */
    const char *name;
    /* A request's id as JSON text ("7"), NULL for a notification or a
     * response. HTTP keys the request's response stream by it (for
     * request_failed and tg__rtransport_drop). */
    const char *id;
    /* The protocol version in use, NULL before it is negotiated. HTTP sends
     * it as MCP-Protocol-Version. */
    const char *protocol_version;
} tg__rsend;

/* The operations of one kind of transport; each kind's constructor fills
 * its transport's `vt`. */
typedef struct tg__rtransport_vt {
    int (*send)(tg__rtransport *t, const char *json, size_t len,
                const tg__rsend *m, tg_error *err);
    void (*drop)(tg__rtransport *t, const char *id);
    void (*close)(tg__rtransport *t);
} tg__rtransport_vt;

/* The part every transport starts with (a transport's own struct embeds it
 * first). */
struct tg__rtransport {
    const tg__rtransport_vt *vt;
    tg__rtransport_cbs cbs;
    void *ud;
};

/* Sends one JSON-RPC message (json, len: its compact text, borrowed). 0 when
 * it was queued; TG_ELIMIT when it is over the transport's message limit,
 * TG_EIO when the transport is closing or closed, TG_ENOMEM; err filled. A
 * queued request that then fails is reported by request_failed (HTTP) or
 * closed. */
int tg__rtransport_send(tg__rtransport *t, const char *json, size_t len,
                        const tg__rsend *m, tg_error *err);
/* Drops the response stream of request `id` (its JSON text): under
 * 2026-07-28 closing a request's stream is its cancellation. Nothing more
 * is delivered for that request. A no-op for stdio and for unknown ids. */
void tg__rtransport_drop(tg__rtransport *t, const char *id);
/* Ends the transport: stdio closes the server's stdin, then sends SIGTERM
 * to its process group and SIGKILL after the grace period; HTTP sends
 * DELETE for its session (when it has one) and ends every transfer.
 * `closed` follows from the loop (once, even when the transport had closed
 * already but its `closed` was not delivered yet). Call it at most once. */
void tg__rtransport_close(tg__rtransport *t);

#endif
