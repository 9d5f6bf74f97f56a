/* SPDX-License-Identifier: MIT */
/*
 * toolgate_serve.h - the MCP server of toolgate: a runtime's tools offered
 * to Model Context Protocol clients (2025-06-18, 2025-11-25, 2026-07-28)
 * over stdio (newline-delimited JSON-RPC on two descriptors) or Streamable
 * HTTP (one endpoint, default /mcp). Every tools/call goes through the
 * whole gate (schema, policy, sandbox, deadline, spool, journal); the
 * server adds tools/list (what the caller may run), progress and log
 * notifications, cancellation, approvals asked of the client's user
 * (elicitation), tasks, and the spooled artifacts as resources. It is what
 * `toolgate serve` runs; a C program serves its own tools the same way:
 * register them on a runtime (tg_runtime_register), make a server over it,
 * run it.
 *
 * The server drives the runtime from its own event loop, on the thread
 * that calls tg_server_run or tg_server_run_stdio; in-process tools run
 * there (TG_TOOL_INLINE) or on the runtime's workers. One thread at a time
 * per server, except tg_server_stop. While a server runs, no other thread
 * uses its runtime but with tg_runtime_cancel.
 */
#ifndef TOOLGATE_SERVE_H
#define TOOLGATE_SERVE_H

#include <stddef.h>

#include "toolgate.h"
#pragma GCC visibility push(default)

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_server tg_server;

/* Options of tg_server_new. Strings are copied by tg_server_new; zeroes
 * give the defaults. */
typedef struct tg_server_options {
    /* The caller id the clients' calls are made under (the policy's
     * `caller`, the journal's); NULL: "mcp-client". */
    const char *caller;
    /* Once the server is stopped (tg_server_stop, a stop signal, EOF on
     * stdio) the calls still running get this long to end before they are
     * canceled (by "system"); 0: 5000 ms; negative: none, canceled at
     * once. */
    long grace_ms;
    /* A file every message the server sends is appended to, as JSON Lines
     * {"version", "answers", "message"}; NULL: none. */
    const char *trace;
    /* Bytes of one incoming message; 0: 4 MiB. */
    size_t max_message;
    /* Streamable HTTP (tg_server_listen_http). The one path served; NULL:
     * "/mcp". */
    const char *http_endpoint;
    /* When set, every HTTP request needs "Authorization: Bearer TOKEN". */
    const char *http_token;
    /* The token's file (its first line), read by tg_server_listen_http
     * when http_token is NULL. */
    const char *http_token_file;
    /* Origin header values allowed besides the loopback ones (DNS
     * rebinding protection), nallow_origins of them. */
    const char *const *allow_origins;
    size_t nallow_origins;
} tg_server_options;

/* A new server over `rt` (borrowed: it must outlive the server). What the
 * clients are offered is rt's tools as they are at each tools/list; the
 * artifacts of rt's spool are offered as resources, and tasks are kept in
 * rt's journal (in memory when the journal is off); a call becomes a task
 * after rt's serve.task_after_ms (tg_runtime_serve_task_after_ms). A
 * runtime with MCP sources (a gateway) offers their tools once they are
 * listed: tg_runtime_sources_wait first to offer them from the first
 * tools/list.
 * `opts` may be NULL (the defaults). TG_EINVAL for a bad option, TG_EIO
 * when the trace file cannot be opened, TG_ENOMEM. *out is the caller's
 * (tg_server_free). */
int tg_server_new(tg_runtime *rt, const tg_server_options *opts,
                  tg_server **out, tg_error *err);

/* Starts listening for Streamable HTTP on http://HOST:PORT/ENDPOINT;
 * clients are served once the server runs (tg_server_run). `host`: an
 * address ("127.0.0.1", "::1") or a name such as "localhost"; NULL:
 * "127.0.0.1". `port` 0: an ephemeral port (tg_server_port says which).
 * Every request is checked first: Host and Origin, the bearer token when
 * one is set (tg_server_options), sizes and timeouts. At most once per
 * server, before it runs. Returns 0; TG_EINVAL (a bad host, port, token
 * file or endpoint; called twice or after the server ran), TG_EEXIST (the
 * address is in use), TG_EIO (it cannot be bound), TG_ENOMEM, with err
 * filled. */
int tg_server_listen_http(tg_server *srv, const char *host, int port,
                          tg_error *err);
/* The TCP port the server listens on (the one the system chose for port
 * 0), or 0 when it does not listen. */
int tg_server_port(const tg_server *srv);
/* The URL clients connect to ("http://127.0.0.1:PORT/mcp"; borrowed,
 * valid until tg_server_free), or NULL when the server does not listen. */
const char *tg_server_url(const tg_server *srv);

/* Serves its HTTP clients (tg_server_listen_http) until the server is
 * stopped: blocks, and returns once every request was answered and the
 * connections closed. A server runs once. Returns 0; TG_EINVAL when it
 * does not listen or ran already (err filled). */
int tg_server_run(tg_server *srv, tg_error *err);
/* Serves one MCP client over in_fd (read) and out_fd (written: MCP
 * messages and nothing else), newline-delimited JSON-RPC, along with its
 * HTTP clients if it listens, until EOF on in_fd or the server is
 * stopped: blocks, and returns once every request was answered. EOF on
 * in_fd stops the server (as tg_server_stop). The descriptors stay the
 * caller's (the server works on duplicates, closed before it returns); a
 * pipe or socket is left in non-blocking mode. A server runs once.
 * Returns 0; TG_EINVAL for a descriptor that is not open, or when the
 * server ran already; TG_ENOMEM (err filled). */
int tg_server_run_stdio(tg_server *srv, int in_fd, int out_fd, tg_error *err);

/* Stops the server gracefully: it takes no new connection or request,
 * the calls still running get grace_ms (tg_server_options) to end before
 * they are canceled, every request is answered, then tg_server_run (or
 * _run_stdio) returns. Before the server runs, it makes the run return at
 * once. Idempotent. Callable from any thread, and async-signal-safe (a
 * signal handler may call it), from tg_server_new until tg_server_free. */
void tg_server_stop(tg_server *srv);
/* From now until the server's run returns, signal `signum` stops the
 * server as tg_server_stop does (SIGTERM and SIGINT for a daemon; a signal
 * that comes before the run stops it when it starts). It is caught through
 * libuv (a handler shared with every libuv loop of the process), and gets
 * its default disposition back once the run returned. Before the run; up
 * to four. TG_EINVAL for a signal that cannot be caught or a server that
 * ran, TG_ELIMIT past four, TG_EINTERNAL. */
int tg_server_stop_on_signal(tg_server *srv, int signum, tg_error *err);

/* Frees the server: not while it runs (stop it, and let the run return).
 * The runtime is the caller's still. NULL is a no-op. */
void tg_server_free(tg_server *srv);

#ifdef __cplusplus
}
#endif
#pragma GCC visibility pop
#endif /* TOOLGATE_SERVE_H */
