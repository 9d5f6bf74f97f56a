/* SPDX-License-Identifier: MIT */
/*
 * session.h - an MCP client session over one transport (transport.h):
 * version negotiation (the newest of 2025-06-18, 2025-11-25 and 2026-07-28
 * that both sides speak: server/discover first, initialize for older
 * servers), tools/list with pagination, tools/call with progress,
 * deadlines and cancellation, and the server's requests and notifications
 * (ping, roots/list, elicitation, progress, log messages, list changes).
 *
 * Everything runs on one libuv loop, without threads or blocking. No
 * callback of the session is ever called from inside a session function
 * the caller called: they all come from the loop (a transport event or a
 * timer), so a callback may call the session freely.
 *
 * Lifetime: tg__rsession_new makes a session, the caller makes its
 * transport with tg__rsession_transport_cbs() and the session as ud, and
 * tg__rsession_start hands the transport over and starts the negotiation.
 * From then on the session ends with its `closed` callback, exactly once
 * (after tg__rsession_close, or when the transport ends on its own): every
 * call still outstanding has had its `done` with an error before it, and
 * the session frees itself when `closed` returns.
 */
#ifndef TG_REMOTE_SESSION_H
#define TG_REMOTE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "transport.h"
#include "version.h"

typedef struct tg__rsession tg__rsession;

#define TG_RSESSION_DEFAULT_MAX_TOOLS 10000u
#define TG_RSESSION_DEFAULT_MAX_PAGES 1000u
#define TG_RSESSION_DEFAULT_CONNECT_MS 30000u
#define TG_RSESSION_DEFAULT_LIST_MS 30000u

/* A root the server may ask for (roots/list): a file:// URI and an
 * optional name. tg__rsession_new refuses "/" (file:///) and a "." or
 * ".." segment. */
typedef struct tg__rroot {
    const char *uri;
    const char *name; /* NULL: none */
} tg__rroot;

/* Where a log line comes from. */
typedef enum tg__rlog_source {
    TG_RLOG_STDERR = 1, /* a line the server wrote to stderr */
    TG_RLOG_SERVER,     /* notifications/message: text = params.data (JSON) */
    TG_RLOG_SESSION     /* the session's own note (ignored input and why) */
} tg__rlog_source;

/* What the session tells its owner (ud: tg__rsession_new's). Every member
 * but `closed` may be NULL. */
typedef struct tg__rsession_cbs {
    /* The negotiation ended: err NULL when the session is ready (version,
     * capabilities and server info readable), else why it failed (the
     * session is then closing: `closed` follows). Called once. */
    void (*ready)(void *ud, const tg_error *err);
    /* The session ended (see Lifetime). err (borrowed): why; code 0 after a
     * tg__rsession_close that went as asked. */
    void (*closed)(void *ud, const tg_error *err);
    /* A log line; level is the RFC 5424 level name ("info") for SERVER,
     * "warning" or "info" for SESSION, NULL for STDERR. Borrowed. */
    void (*log)(void *ud, tg__rlog_source src, const char *level,
                const char *text, size_t len);
    /* notifications/tools/list_changed. */
    void (*tools_changed)(void *ud);
    /* The server asks the user for input: an elicitation/create request
     * (2025-*), or an elicitation/create among the inputRequests of a
     * call's InputRequiredResult (2026-07-28: the call is sent again with
     * the answers once every one is in). params: its params' JSON text,
     * borrowed. call: the key (tg__rsession_call's call_id) of the call it
     * is about, 0 when none is known. The rule: the call whose input it
     * is (2026-07-28); else the call whose HTTP response stream carried
     * the request; else the call named by params._meta
     * "io.modelcontextprotocol/related-request" (a request id the session
     * sent); else, when exactly one call is in flight on the session,
     * that one; else 0. Return 0 to answer later with
     * tg__rsession_elicit_reply (ticket names the question; it may be
     * called from inside this callback), anything else to decline now.
     * NULL: every elicitation is declined and the capability is not
     * declared. */
    int (*elicit)(void *ud, uint64_t ticket, uint64_t call, const char *params,
                  size_t len);
} tg__rsession_cbs;

/* The session's settings. Strings and arrays are borrowed for
 * tg__rsession_new (it copies them). */
typedef struct tg__rsession_opts {
    uv_loop_t *loop;
    const char *client_name;    /* clientInfo.name; NULL: "toolgate" */
    const char *client_version; /* NULL: TOOLGATE_VERSION_STRING */
    /* 0 (TG_MCP_VERSION_UNKNOWN): negotiate the newest both sides speak;
     * else speak exactly this version or fail. */
    tg__mcp_version version;
    const tg__rroot *roots; /* roots/list answers with these only */
    size_t nroots;
    unsigned connect_ms; /* negotiation deadline; 0: the default */
    unsigned list_ms;    /* deadline of each tools/list page; 0: default */
    size_t max_tools;    /* 0: TG_RSESSION_DEFAULT_MAX_TOOLS */
    size_t max_pages;    /* 0: TG_RSESSION_DEFAULT_MAX_PAGES */
    /* The transport cancels a 2026-07-28 request by dropping its stream
     * (Streamable HTTP): no notifications/cancelled is sent then. */
    bool cancel_by_drop;
} tg__rsession_opts;

/* Makes a session (not started). Returns 0, TG_EINVAL (a root that is not
 * a file:// URI, or is "/"), TG_ENOMEM. Free it with tg__rsession_free
 * only when it is never started. */
int tg__rsession_new(const tg__rsession_opts *opts, const tg__rsession_cbs *cbs,
                     void *ud, tg__rsession **out, tg_error *err);
/* The callbacks a transport made for session s must be given, with s as
 * their ud (static). */
const tg__rtransport_cbs *tg__rsession_transport_cbs(void);
/* Takes transport t (made with the callbacks above and s) and starts the
 * negotiation; `ready` follows. Returns 0, or an error when the first
 * message could not be sent: the transport is then closing and `closed`
 * follows all the same. Call once. */
int tg__rsession_start(tg__rsession *s, tg__rtransport *t, tg_error *err);
/* Frees a session that was never started (NULL: no-op). */
void tg__rsession_free(tg__rsession *s);
/* Ends the session: every outstanding call ends with an error and
 * `closed` follows, from the loop. Safe to call more than once. */
void tg__rsession_close(tg__rsession *s);

/* What was negotiated (valid after `ready` without error, until `closed`
 * returns; borrowed): the version, the server's capabilities (JSON text of
 * an object), its serverInfo (JSON text; "{}" when the server sent none),
 * its instructions (NULL when none). */
tg__mcp_version tg__rsession_version(const tg__rsession *s);
const char *tg__rsession_capabilities(const tg__rsession *s);
const char *tg__rsession_server_info(const tg__rsession *s);
const char *tg__rsession_instructions(const tg__rsession *s);

/* One tool of tools/list. Strings are NUL-terminated JSON texts (the
 * schemas, annotations, the whole definition) or decoded strings (name,
 * title, description); NULL when the server left the member out. */
typedef struct tg__rtool {
    char *name;
    char *title;
    char *description;
    char *input_schema; /* an object, never NULL */
    char *output_schema;
    char *annotations;
    char *json; /* the whole definition: the server's own bytes of it,
                   verbatim (for pinning, hash its JCS form) */
} tg__rtool;

typedef struct tg__rtool_list {
    tg__rtool *tools;
    size_t n;
    size_t skipped; /* definitions dropped: no string name or no object
                       inputSchema (each logged) */
} tg__rtool_list;

/* Frees a list (NULL: no-op). */
void tg__rtool_list_free(tg__rtool_list *list);

/* The end of a tools/list: list (the caller's, free it with
 * tg__rtool_list_free) or err (borrowed) - the server's error, a deadline,
 * more than max_tools tools or max_pages pages, the session closing. */
typedef void (*tg__rlist_cb)(void *ud, tg__rtool_list *list,
                             const tg_error *err);

/* Lists the server's tools, page after page (following nextCursor). Returns
 * 0 (cb follows, once) or an error (no callback): the session is not ready
 * or is closing, TG_ENOMEM. */
int tg__rsession_list_tools(tg__rsession *s, tg__rlist_cb cb, void *ud,
                            tg_error *err);

/* How a tools/call ended. */
typedef enum tg__rcall_status {
    TG_RCALL_RESULT = 0, /* result: the CallToolResult's JSON text */
    TG_RCALL_RPC_ERROR,  /* the server answered with a JSON-RPC error */
    TG_RCALL_TIMEOUT,    /* the deadline passed (the server was told) */
    TG_RCALL_FAILED      /* the transport failed, the session closed, or
                            the response was not a CallToolResult */
} tg__rcall_status;

typedef struct tg__rcall_end {
    tg__rcall_status status;
    const char *result; /* RESULT: the result's JSON text (an object; not
                           NUL-terminated) */
    size_t result_len;
    bool is_error;         /* RESULT: its isError is true */
    long long rpc_code;    /* RPC_ERROR: the error's code */
    const char *rpc_error; /* RPC_ERROR: the error object's JSON text */
    size_t rpc_error_len;
    const tg_error *err; /* every status but RESULT: what happened (the
                            server's message for RPC_ERROR) */
} tg__rcall_end;

/* What a call reports (ud: the call's). Borrowed arguments. */
typedef struct tg__rcall_cbs {
    /* notifications/progress for the call: total < 0 and message NULL when
     * absent. May be NULL (no progress token is then sent). */
    void (*progress)(void *ud, double progress, double total,
                     const char *message);
    /* The end of the call, exactly once - unless tg__rsession_cancel
     * returned 1 for it before. */
    void (*done)(void *ud, const tg__rcall_end *end);
} tg__rcall_cbs;

typedef struct tg__rcall_args {
    const char *name;
    const char *arguments; /* JSON text of an object; NULL: none */
    size_t arguments_len;
    unsigned deadline_ms; /* 0: none */
} tg__rcall_args;

/* Calls a tool. Returns 0 with *call_id set (the id of its first request,
 * the key of tg__rsession_cancel and tg__rsession_extend; a retry after an
 * InputRequiredResult goes under a new id), or an error and
 * no callback: the session is not ready or closing (TG_EIO), the
 * arguments are not a JSON object (TG_EINVAL), the message is over the
 * transport's limit (TG_ELIMIT), TG_ENOMEM. */
int tg__rsession_call(tg__rsession *s, const tg__rcall_args *args,
                      const tg__rcall_cbs *cbs, void *ud, uint64_t *call_id,
                      tg_error *err);
/* Cancels call `call_id`: the server is told (notifications/cancelled with
 * the request id and reason; under 2026-07-28 with cancel_by_drop, its
 * stream is dropped instead), and from now on nothing more is reported
 * for that call - no progress, no done: the caller, who is told here,
 * ends the call itself. Returns 1 when the call was outstanding, 0 when it
 * had ended already (its done has come or is being called) or is unknown. */
int tg__rsession_cancel(tg__rsession *s, uint64_t call_id, const char *reason);
/* Moves call `call_id`'s deadline to deadline_ms from now (0: none), e.g.
 * when progress shows the work goes on. 1 when the call is outstanding,
 * else 0. */
int tg__rsession_extend(tg__rsession *s, uint64_t call_id,
                        unsigned deadline_ms);

/* Answers the elicitation `ticket` (from the elicit callback) with result,
 * the JSON text of an ElicitResult ({"action":"accept","content":{...}},
 * decline, cancel). 0, TG_ENOTFOUND when the ticket is unknown (answered
 * or the session ended), TG_EINVAL when result is not a JSON object. */
int tg__rsession_elicit_reply(tg__rsession *s, uint64_t ticket,
                              const char *result, size_t len, tg_error *err);

#endif
