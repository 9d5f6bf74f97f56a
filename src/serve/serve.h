/* SPDX-License-Identifier: MIT */
/*
 * serve.h - the inside of `toolgate serve`, the MCP server face, shared by
 * its files: the server (server.c: one runtime driven from the face's own
 * libuv loop, the sessions, the requests in flight), the MCP methods
 * (methods_*.c) and the transports (stdio.c; http.c, Streamable HTTP on
 * libmicrohttpd). The face uses the runtime only through
 * include/toolgate.h, and the JSON-RPC / MCP layer (src/mcp/).
 *
 * Transports and the server meet at two things:
 *   - srv_session: one client's protocol state (negotiated version, its
 *     capabilities, log level, caller identity, the server-to-client
 *     requests it owes answers to). stdio has one for the process; HTTP
 *     one per Mcp-Session-Id under 2025-06-18 / 2025-11-25, and a
 *     short-lived one per request under 2026-07-28 (no sessions).
 *   - srv_out: where the messages about one incoming request go: its
 *     response, and the notifications (progress, log) and server requests
 *     (elicitation) that belong to it. stdio has one (stdout); HTTP one per
 *     POST (a JSON body or an SSE stream), kept after the connection drops
 *     so a client can resume it (Last-Event-ID) under the 2025 versions.
 *     Reference-counted: a request holds its out until it is answered.
 *
 * Threading: everything runs on the face's loop thread.
 */
#ifndef TG_SERVE_H
#define TG_SERVE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "toolgate.h"

typedef struct tg__srv tg__srv;
typedef struct srv_session srv_session;
typedef struct srv_out srv_out;

/* ------------------------------------------------------------ outputs */

/* What a message sent on an out is. */
typedef enum srv_msg_kind {
    SRV_MSG_RESPONSE = 0, /* the answer to a request: one per request */
    SRV_MSG_NOTIFICATION, /* progress, log message: related to the request */
    SRV_MSG_REQUEST       /* server-to-client request (elicitation/create) */
} srv_msg_kind;

typedef struct srv_out_ops {
    /* Sends one JSON-RPC message (compact JSON text, no newline; copied).
     * Returns 0, or -1 when this out cannot carry it (closed by the
     * client, or a JSON response that can carry nothing but responses):
     * the server then drops it or sends it elsewhere. */
    int (*send)(srv_out *o, srv_msg_kind kind, const char *msg, size_t len);
    /* The last reference went: frees the out. */
    void (*free)(srv_out *o);
} srv_out_ops;

/* The transport embeds this at the start of its own out. */
struct srv_out {
    const srv_out_ops *ops;
    int refs;
    bool closed; /* the client went away: srv_out_closed was called */
    /* the requests of this out still to be answered (server.c's list) */
    struct srv_req *reqs;
};

/* Initialises an out with one reference (the transport's). */
void srv_out_init(srv_out *o, const srv_out_ops *ops);
void srv_out_ref(srv_out *o);
void srv_out_unref(srv_out *o);
/* The transport lost the client of `o` (an HTTP response stream closed
 * before its last response): under 2026-07-28 that cancels its requests
 * (their calls end canceled by "user", nothing more is sent for them);
 * under the 2025 versions their calls go on and their messages stay
 * queued on the out for a resume. */
void srv_out_closed(tg__srv *srv, srv_out *o);

/* ------------------------------------------------------------ sessions */

/* Which transport a session came by. */
typedef enum srv_via { SRV_VIA_STDIO = 0, SRV_VIA_HTTP } srv_via;

/* A new session (one reference, the transport's). `notify` (may be NULL;
 * a reference is taken) carries what belongs to no request: toolgate's own
 * warnings, tools/list_changed; for HTTP the session's GET stream, set
 * later with srv_session_set_notify. `caller` (copied; NULL: the server's
 * default) is the identity its calls are made under. NULL on OOM. */
srv_session *srv_session_new(tg__srv *srv, srv_via via, const char *caller);
void srv_session_set_notify(srv_session *s, srv_out *notify);
/* Ends the session (stdin closed, HTTP DELETE, idle expiry): its calls
 * are canceled by "user" and its pending server requests dropped. The
 * session object lives on while references remain. */
void srv_session_end(srv_session *s);
void srv_session_release(srv_session *s);
/* The protocol version the session negotiated with initialize (a static
 * string), or NULL before initialize. */
const char *srv_session_version(const srv_session *s);
/* 1 once initialize was answered for it. */
int srv_session_initialized(const srv_session *s);

/* ------------------------------------------------------------ messages */

/* What an HTTP request carried besides its body (NULL fields: absent). */
typedef struct srv_http_info {
    const char *protocol_version; /* MCP-Protocol-Version */
    const char *mcp_method;       /* Mcp-Method (2026-07-28) */
    const char *mcp_name;         /* Mcp-Name (2026-07-28) */
    bool has_session_header;      /* Mcp-Session-Id was sent (and known) */
} srv_http_info;

/* What the server made of one incoming body. */
typedef struct srv_answer {
    /* HTTP status for the whole body: 200 (responses follow on the out),
     * 202 (nothing to answer: notifications or responses only), or a
     * 4xx the protocol names (400, 404) - the error response, if any, was
     * sent on the out already. */
    int http_status;
    /* Responses still to come on the out after srv_handle returns. */
    size_t pending;
    /* The body holds a request that sends messages while it runs (a
     * tools/call): an HTTP transport answers it with SSE when the client
     * accepts SSE. */
    bool streams;
    /* The body was an initialize that this session answered. */
    bool initialized;
} srv_answer;

/* Reads one incoming body (one JSON-RPC message; a batch where the
 * session's version allows it) from a client of session `s` and acts on
 * it: requests are answered on `out` (now or later), notifications and
 * client responses are taken. `http` is NULL for stdio. Never fails: what
 * is wrong gets the JSON-RPC error the spec names. The calls it submits
 * start at the next srv_step_now (or the loop's next turn). */
void srv_handle(tg__srv *srv, srv_session *s, const char *body, size_t len,
                srv_out *out, const srv_http_info *http, srv_answer *ans);
/* Starts the calls submitted since the last step now (journaled together,
 * checked, started; one that ends at once - an inline tool's - is answered
 * before this returns): a transport calls it once it has handled the
 * input it read, rather than leaving it to the loop's next turn. */
void srv_step_now(tg__srv *srv);
/* Whether the runtime journals its calls: a transport that reads one
 * request at a time (HTTP) then leaves the step to the loop's next turn,
 * so the calls of the requests read together share one journal
 * transaction, and steps at once only when there is no journal. */
bool srv_journaled(const tg__srv *srv);

/* ------------------------------------------------------------ server */

typedef struct srv_options {
    const char *caller;    /* default caller id ("mcp-client" when NULL) */
    size_t max_message;    /* bytes of one message (0: 4 MiB) */
    int max_depth;         /* nesting of one message (0: 64) */
    const char *trace;     /* file to append every sent message to, JSON
                              Lines {"version","answers","message"}, or NULL
                              (tests validate them against the schemas) */
    const char *spool_dir; /* the artifacts offered as resources (borrowed,
                              must outlive the server); NULL: none */
    const char *journal;   /* the journal's file, where tasks are kept
                              (borrowed, must outlive the server); NULL:
                              tasks live in memory only */
    long task_after_ms;    /* a tools/call that may become a task does after
                              this long (0: SRV_TASK_AFTER_MS; negative: at
                              the next turn of the loop) */
} srv_options;

/* srv_options.task_after_ms's default (serve.task_after_ms). */
#define SRV_TASK_AFTER_MS 1000

/* A server over `rt` (borrowed; it must outlive the server) with its own
 * loop. NULL on failure with err filled. */
tg__srv *srv_new(tg_runtime *rt, const srv_options *opt, tg_error *err);
void srv_free(tg__srv *srv);
/* The loop transports put their handles on. */
uv_loop_t *srv_loop(tg__srv *srv);
/* Runs the loop until srv_stop and every call ended. Returns 0. */
int srv_run(tg__srv *srv);
/* Stops taking requests; running calls get until `grace_ms` to end, then
 * are canceled by "system"; every request is answered, the loop ends. */
void srv_stop(tg__srv *srv, int64_t grace_ms);
/* 1 once srv_stop was called. */
int srv_stopping(const tg__srv *srv);
/* fn(srv, ud) is called once the stopped server answered everything (the
 * transports then close their handles so the loop can end); up to four. */
void srv_on_stopped(tg__srv *srv, void (*fn)(tg__srv *srv, void *ud), void *ud);

#endif
