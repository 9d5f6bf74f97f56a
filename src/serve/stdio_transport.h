/* SPDX-License-Identifier: MIT */
/*
 * stdio_transport.h - the stdio transport of `toolgate serve` (stdio.c).
 */
#ifndef TG_SERVE_STDIO_H
#define TG_SERVE_STDIO_H

#include "serve.h"

typedef struct srv_stdio srv_stdio;

/* Serves in_fd and out_fd (stdin and stdout for `toolgate serve --stdio`)
 * as one MCP session of `caller` (NULL: the server's default) on srv's
 * loop; EOF on in_fd stops the server, giving running calls grace_ms
 * before they are canceled. The descriptors stay the caller's: the
 * transport works on duplicates of them, which it closes (they share the
 * file status flags: a pipe or socket is left non-blocking). NULL with err
 * filled: TG_EINVAL for a descriptor that is not open, TG_ENOMEM. Freed
 * with srv_stdio_free after the loop ended. */
srv_stdio *srv_stdio_start(tg__srv *srv, int in_fd, int out_fd,
                           const char *caller, int64_t grace_ms, tg_error *err);
void srv_stdio_free(srv_stdio *t);

#endif
