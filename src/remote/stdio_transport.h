/* SPDX-License-Identifier: MIT */
/*
 * stdio_transport.h - the stdio transport of the MCP client (stdio.c): an
 * MCP server run as a subprocess, one JSON-RPC message a line on its stdin
 * and stdout, its stderr lines handed to the session as log lines. It
 * implements transport.h; this header only makes one.
 */
#ifndef TG_REMOTE_STDIO_TRANSPORT_H
#define TG_REMOTE_STDIO_TRANSPORT_H

#include <stddef.h>
#include <uv.h>

#include "transport.h"

#define TG_RSTDIO_DEFAULT_MAX_MESSAGE (16u << 20)
#define TG_RSTDIO_DEFAULT_MAX_BACKLOG (64u << 20)
#define TG_RSTDIO_DEFAULT_MAX_LOG_LINE 4096u
#define TG_RSTDIO_DEFAULT_GRACE_MS 2000u

/* How to run the server. Strings and arrays are borrowed for the call. */
typedef struct tg__rstdio_opts {
    uv_loop_t *loop;
    /* The program and its arguments, NULL-terminated, complete (a sandbox
     * prefix included): argv[0] is executed directly (PATH is searched when
     * it has no '/'), never through a shell. */
    const char *const *argv;
    /* The environment, NULL-terminated "NAME=value" strings; NULL runs the
     * server with an empty environment. */
    const char *const *envp;
    const char *cwd;     /* NULL: toolgate's own */
    size_t max_message;  /* longest line of stdout; 0: the default */
    size_t max_backlog;  /* most bytes queued to stdin; 0: the default */
    size_t max_log_line; /* stderr lines are cut here; 0: the default */
    unsigned grace_ms;   /* SIGTERM to SIGKILL; 0: the default */
} tg__rstdio_opts;

/* Starts the server in its own process group with pipes on stdin, stdout
 * and stderr, and makes its transport (*out), which reports to cbs (copied)
 * with ud. Returns 0, or TG_EINVAL (no argv[0]), TG_ESPAWN (the program
 * could not be started: err names it and why), TG_ENOMEM; nothing is left
 * running on failure. From then on the transport.h contract holds: it ends
 * with `closed`, exactly once, after the process is reaped and every handle
 * closed - when the server exits (err TG_EIO with its status), closes its
 * stdout, writes a line over max_message (TG_ELIMIT), or after
 * tg__rtransport_close (code 0). */
int tg__rstdio_new(const tg__rstdio_opts *opts, const tg__rtransport_cbs *cbs,
                   void *ud, tg__rtransport **out, tg_error *err);

#endif
