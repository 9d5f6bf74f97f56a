/* SPDX-License-Identifier: MIT */
/*
 * core_double.h - the test stand-in for the MCP server core
 * (core_double.c): the serve.h functions a transport calls, plus a server
 * made and stopped by the test and counters the test reads from its own
 * thread while the loop runs in another.
 */
#ifndef TG_TEST_CORE_DOUBLE_H
#define TG_TEST_CORE_DOUBLE_H

#include <stdatomic.h>

#include "serve.h"

extern atomic_int dbl_closed;   /* srv_out_closed calls */
extern atomic_int dbl_canceled; /* requests cancelled by a closed out */
extern atomic_int dbl_refused;  /* sends the transport refused (-1) */
extern atomic_int dbl_outs;     /* outs alive */
extern atomic_int dbl_sessions; /* sessions alive */
extern atomic_int dbl_ended;    /* srv_session_end calls */
/* flood requests: how many were started, and the outs and sessions that
 * carried one still alive (counted apart from the others, so a test can
 * tell that nothing of its flood is left while outs of earlier tests,
 * whose clients just left, are still going away) */
extern atomic_int dbl_floods;
extern atomic_int dbl_flood_outs;
extern atomic_int dbl_flood_sessions;

/* A server with its own loop (not running); NULL on failure. */
tg__srv *dbl_srv_new(void);
/* Ends the jobs left and frees the server; its loop must have no handles
 * left but the jobs'. */
void dbl_srv_free(tg__srv *srv);
/* srv_stopping answers 1 from now on. */
void dbl_srv_stop(tg__srv *srv);

#endif
