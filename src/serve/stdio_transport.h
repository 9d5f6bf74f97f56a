/* SPDX-License-Identifier: MIT */
/*
 * stdio_transport.h - the stdio transport of `toolgate serve` (stdio.c).
 */
#ifndef TG_SERVE_STDIO_H
#define TG_SERVE_STDIO_H

#include "serve.h"

typedef struct srv_stdio srv_stdio;

/* Serves the process's stdin and stdout as one MCP session of `caller`
 * (NULL: the server's default) on srv's loop; EOF on stdin stops the
 * server, giving running calls grace_ms before they are canceled. NULL on
 * out of memory (err filled). Freed with srv_stdio_free after the loop
 * ended. */
srv_stdio *srv_stdio_start(tg__srv *srv, const char *caller, int64_t grace_ms,
                           tg_error *err);
void srv_stdio_free(srv_stdio *t);

#endif
