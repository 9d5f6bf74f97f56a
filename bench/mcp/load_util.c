/* SPDX-License-Identifier: MIT */
/*
 * load_util.c - what every file of the MCP load client (mcp_load.c) leans
 * on: die(), the one way it fails (a message, the server it started
 * stopped, exit status 1), and the growable byte buffer its channels,
 * requests and responses are kept in.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"

struct run *the_run; /* for die(): kill the server on any exit */

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mcp_load: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (the_run)
        stop_server(the_run, 1);
    exit(1);
}

void buf_reserve(struct buf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (p == NULL)
        die("out of memory");
    b->p = p;
    b->cap = cap;
}

void buf_add(struct buf *b, const void *s, size_t n)
{
    buf_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

void buf_adds(struct buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

void buf_consume(struct buf *b, size_t n)
{
    memmove(b->p, b->p + n, b->len - n);
    b->len -= n;
}
