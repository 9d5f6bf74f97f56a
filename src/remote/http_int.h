/* SPDX-License-Identifier: MIT */
/*
 * http_int.h - what the files of the Streamable HTTP transport share (not
 * for use outside src/remote/http*.c): the transport object, its
 * transfers, and the calls between http.c (the transfers' life),
 * http_headers.c (the request headers), http_read.c (reading a response:
 * headers, JSON body, SSE events) and http_opts.c (checking and copying
 * the options).
 */
#ifndef TG_REMOTE_HTTP_INT_H
#define TG_REMOTE_HTTP_INT_H

#include <curl/curl.h>
#include <stdint.h>
#include <uv.h>

#include "buf.h"
#include "curl_uv.h"
#include "http_transport.h"
#include "sse.h"

/* The protocol version without sessions, GET streams or resumption. */
#define TG__RHTTP_V2026 "2026-07-28"
/* The longest session id and event id kept (longer ones are not used). */
#define TG__RHTTP_SID_MAX 256
#define TG__RHTTP_EVENT_ID_MAX 1024
/* How much of an error response's body a message quotes. */
#define TG__RHTTP_EXCERPT 200
/* The most of an error status's JSON body read, to find the JSON-RPC
 * response in it. */
#define TG__RHTTP_ERROR_BODY ((size_t)64 << 10)

typedef enum xfer_kind {
    X_POST,   /* a message the session sent (and its resumptions) */
    X_LISTEN, /* the server's GET stream (2025 versions) */
    X_DELETE  /* the end of the session, at close */
} xfer_kind;

typedef enum xfer_state {
    X_PENDING, /* to start at the next run */
    X_ACTIVE,  /* in curl's multi */
    X_WAITING, /* a resumption or reopening, due at `due` */
    X_DONE     /* its transfer ended; being decided */
} xfer_state;

/* How a response is being read (decided at its first body byte). */
enum {
    TG__RHTTP_UNREAD = 0,
    TG__RHTTP_JSON,       /* a 2xx JSON body, gathered up to the limit */
    TG__RHTTP_SSE,        /* a 2xx event stream, each message handed on */
    TG__RHTTP_ERROR,      /* an error status: its first bytes kept to quote */
    TG__RHTTP_ERROR_JSON, /* an error status with a JSON body: gathered
                             (to TG__RHTTP_ERROR_BODY), it may be the
                             request's JSON-RPC error response */
    TG__RHTTP_SKIP        /* ignored to the end */
};

typedef struct rhttp rhttp;

typedef struct xfer {
    struct xfer *prev, *next;
    rhttp *h;
    xfer_kind kind;
    xfer_state state;
    CURL *easy;
    struct curl_slist *hdrs;
    /* What was sent (copies): the body, and for the headers and the
     * response's matching the request's id, method, name and version. */
    char *body;
    size_t body_len;
    char *id, *method, *name, *version;
    int counted;          /* counts in h->active */
    int sent_session;     /* the transfer bore Mcp-Session-Id */
    int resuming;         /* the next transfers are GETs with Last-Event-ID */
    int dropped;          /* the session dropped it: nothing more delivered */
    unsigned failures;    /* resumptions (or reopenings) failed in a row */
    uint64_t due;         /* X_WAITING: uv_now() when to start */
    uint64_t answered_at; /* uv_now() when the response came */
    /* Across the transfers of one stream. */
    char *last_id;    /* the last event id seen, NULL when none */
    int64_t retry_ms; /* the server's retry time, -1 when none */
    int got_response; /* the request's response was delivered */
    /* The response being read. */
    int mode;
    int opened;                      /* a 2xx event stream */
    char ctype[64];                  /* its Content-Type, lowercased */
    char sid[TG__RHTTP_SID_MAX + 1]; /* its Mcp-Session-Id, "" when none */
    tg__buf in;                      /* a JSON body or an excerpt */
    tg__sse sse;
    int sse_live;  /* sse was initialised */
    tg_error fail; /* why the reader gave up (code 0: it did not) */
} xfer;

struct rhttp {
    tg__rtransport base; /* first: the session's handle */
    tg__rtransport_cbs cbs;
    void *ud;
    uv_loop_t *loop;
    tg__rhttp_opts o; /* numbers with defaults; strings not kept here */
    char *url;
    char **headers; /* "Name: value" */
    size_t n_headers;
    char *auth;       /* "Authorization: Bearer ...", wiped at free */
    char *session_id; /* the server's Mcp-Session-Id */
    char *version;    /* the last protocol version sent */
    tg__curl_uv cu;
    uv_timer_t wake; /* runs tg__rhttp_run_cb: starts, ends, resumes */
    xfer *head, *tail;
    xfer *listen;    /* the GET stream, when one is open or waiting */
    unsigned active; /* POST transfers running */
    int listen_done; /* the server has no GET stream (or it failed) */
    int closing;     /* close asked, or the session ended */
    int delete_sent; /* the DELETE of the session was started */
    int handles_closing;
    int wake_closed;
    int kicked;            /* a run was asked for since the last one began */
    int open;              /* handles still closing */
    unsigned long resumed; /* streams resumed (GET with Last-Event-ID) */
    tg_error close_err;
};

/* http.c */
/* The wake timer's callback: starts what is due, ends what was dropped,
 * closes when asked. */
void tg__rhttp_run_cb(uv_timer_t *t);
/* x's request has its response: its transfer stops counting against
 * max_transfers, and what waits for a slot may start; a stream the server
 * keeps open after the response is ended a second later. */
void tg__rhttp_answered(xfer *x);
/* The response's headers are in (status known): takes the session id of a
 * successful POST. */
void tg__rhttp_headers_done(xfer *x, long status);
/* Frees h and what it holds (its handles are closed). */
void tg__rhttp_free(rhttp *h);

/* http_headers.c */
/* Whether s is 1..max bytes of visible ASCII (no space). */
int tg__rhttp_visible(const char *s, size_t max);
/* curl_slist_append that keeps the list on failure: 0 or TG_ENOMEM. */
int tg__rhttp_append(struct curl_slist **l, const char *line);
/* The protocol version x goes with (its own, else the last one sent);
 * NULL before any. */
const char *tg__rhttp_version(const rhttp *h, const xfer *x);
/* Whether x goes under 2026-07-28 (no sessions, no resumption). */
int tg__rhttp_modern(const rhttp *h, const xfer *x);
/* Fills x->hdrs with the headers of x's next transfer (b: scratch). 0 or
 * TG_ENOMEM. */
int tg__rhttp_build_headers(rhttp *h, xfer *x, tg__buf *b);

/* http_read.c */
/* Sets e's header and write callbacks to read x's response. */
void tg__rhttp_read_setup(xfer *x, CURL *e);
/* Forgets the response read (before the next transfer of x). */
void tg__rhttp_read_reset(xfer *x);
/* Whether message json is the response to x's request (a result or an
 * error with x's id, or an error without id). */
int tg__rhttp_answers(const xfer *x, const char *json, size_t len);
/* Hands one message of x's response to the session, noting whether it is
 * the response to x's request. */
void tg__rhttp_deliver(xfer *x, const char *json, size_t len);

/* http_opts.c */
/* Checks the options: TG_EINVAL with err filled when they are unusable. */
int tg__rhttp_check_opts(const tg__rhttp_opts *o, tg_error *err);
/* Fills the zero numbers of o with the defaults. */
void tg__rhttp_defaults(tg__rhttp_opts *o);
/* Copies the options' strings into h (url, headers, auth). */
int tg__rhttp_copy_opts(rhttp *h, const tg__rhttp_opts *o, tg_error *err);

#endif
