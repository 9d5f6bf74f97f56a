/* SPDX-License-Identifier: MIT */
/*
 * rsource.h - one MCP server behind toolgate as a tool source's connection
 * (rsource.c): it makes the server's transport (a subprocess over stdio, or
 * Streamable HTTP), runs the MCP client session over it (session.h), lists
 * the server's tools once the session is ready and again on
 * notifications/tools/list_changed, and restarts a server that crashed or
 * hung up when it is next asked to start, after a backoff that doubles with
 * each failure in a row (250 ms up to 30 s).
 *
 * It knows nothing of tools, calls or the registry: its owner (the exec
 * layer's remote_sources.c) turns each tool list into registry entries and
 * sends calls through tg__rsource_session once the source is ready; calls
 * that arrive earlier wait with tg__rsource_wait.
 *
 * Threading: the loop thread only. Callbacks come from the loop, never from
 * inside an rsource function.
 */
#ifndef TG_REMOTE_RSOURCE_H
#define TG_REMOTE_RSOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "error.h"
#include "http_transport.h"
#include "session.h"

typedef struct tg__rsource tg__rsource;

typedef enum tg__rsource_state {
    TG__RS_IDLE = 0, /* never started (lazy) */
    TG__RS_STARTING, /* the transport and the negotiation, then tools/list */
    TG__RS_READY,    /* the tools are listed: calls go through */
    TG__RS_FAILED,   /* the last start failed or the server went away;
                        tg__rsource_error says why; a start restarts it */
    TG__RS_CLOSED    /* tg__rsource_close: nothing more */
} tg__rsource_state;

/* How to reach the server. Strings and arrays are borrowed for
 * tg__rsource_new, which copies them. */
typedef struct tg__rsource_opts {
    uv_loop_t *loop;
    const char *name; /* the source's name, in error messages */
    /* stdio: the program and its arguments (NULL-terminated), its
     * environment ("NAME=value", NULL-terminated; NULL: empty), its cwd */
    const char *const *argv;
    const char *const *envp;
    const char *cwd;
    /* Streamable HTTP (argv NULL): the transport's options (copied) */
    const tg__rhttp_opts *http;
    const tg__rroot *roots; /* what roots/list answers */
    size_t nroots;
    unsigned connect_ms; /* the negotiation's deadline; 0: the default */
    size_t max_tools;    /* 0: TG_RSESSION_DEFAULT_MAX_TOOLS */
    size_t max_message;  /* stdio's longest line; 0: the default */
} tg__rsource_opts;

/* What the source tells its owner (ud). */
typedef struct tg__rsource_cbs {
    /* The server's tools, after each (re)connection and each
     * notifications/tools/list_changed: list is taken (the owner frees it
     * with tg__rtool_list_free). Comes before the state becomes READY. */
    void (*listed)(void *ud, tg__rtool_list *list);
    /* The state changed (tg__rsource_state_of says to what). */
    void (*state)(void *ud);
    /* A line the server logged (stderr, notifications/message) or the
     * session noted; may be NULL. */
    void (*log)(void *ud, const char *text, size_t len);
    /* The server asks its user for input while running call `call` of
     * session s (session.h's `elicit`, which says how the call is found;
     * never 0 here: an elicitation related to no call is declined with a
     * log line first). Return 0 to answer later with
     * tg__rsession_elicit_reply, else it is declined. NULL: declined. */
    int (*elicit)(void *ud, tg__rsession *s, uint64_t ticket, uint64_t call,
                  const char *params, size_t len);
} tg__rsource_cbs;

/* Makes a source (IDLE: nothing runs yet). Returns 0, TG_EINVAL (neither
 * argv nor http, or a root the session refuses), TG_ENOMEM; err filled. */
int tg__rsource_new(const tg__rsource_opts *opts, const tg__rsource_cbs *cbs,
                    void *ud, tg__rsource **out, tg_error *err);
/* Starts the source when it is IDLE, or FAILED and its backoff has passed
 * (before then a timer starts it when it does). A no-op when it is
 * STARTING, READY or CLOSED. */
void tg__rsource_start(tg__rsource *rs);
/* Closes the session (the stdio server's process group is ended); the
 * state becomes CLOSED and stays so. Waiters end with ok false. The source
 * is freed with tg__rsource_free once the loop has run the close
 * (tg__rsource_closed). */
void tg__rsource_close(tg__rsource *rs);
/* True when nothing of the source is left on the loop (after close). */
bool tg__rsource_closed(const tg__rsource *rs);
/* Frees a source that is closed (tg__rsource_closed) or was never started
 * (NULL: no-op). */
void tg__rsource_free(tg__rsource *rs);

tg__rsource_state tg__rsource_state_of(const tg__rsource *rs);
/* "idle", "starting", "ready", "failed", "closed". */
const char *tg__rsource_state_name(tg__rsource_state st);
/* Why it failed last (code 0 when it never did); borrowed. */
const tg_error *tg__rsource_error(const tg__rsource *rs);
/* The session while READY, else NULL (borrowed until the state changes). */
tg__rsession *tg__rsource_session(const tg__rsource *rs);
/* What the last ready session negotiated (borrowed, valid until the next
 * start): the protocol version ("2025-06-18"; NULL before the first
 * ready) and the serverInfo's JSON text ("{}" when none). */
const char *tg__rsource_protocol(const tg__rsource *rs);
const char *tg__rsource_server_info(const tg__rsource *rs);
/* "stdio" or "http". */
const char *tg__rsource_transport(const tg__rsource *rs);
/* True while a tools/list runs (a list change is being read). */
bool tg__rsource_listing(const tg__rsource *rs);
/* How many times the server was started. */
unsigned tg__rsource_starts(const tg__rsource *rs);

/* A call waiting for the source to be ready: `cb` comes once, with ok
 * true when it is READY, false when it failed or closed (the owner reads
 * tg__rsource_error). The struct is the caller's; it stays linked until
 * cb or tg__rsource_unwait. */
typedef struct tg__rsource_waiter {
    void (*cb)(struct tg__rsource_waiter *w, bool ok);
    struct tg__rsource_waiter *prev, *next;
    bool linked;
} tg__rsource_waiter;

/* Links w (cb set) and starts the source (tg__rsource_start). */
void tg__rsource_wait(tg__rsource *rs, tg__rsource_waiter *w);
/* Unlinks w without calling it (a no-op when it is not linked). */
void tg__rsource_unwait(tg__rsource *rs, tg__rsource_waiter *w);

#endif
