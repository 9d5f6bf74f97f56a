/* SPDX-License-Identifier: MIT */
/*
 * http_int.h - the inside of the Streamable HTTP transport, shared by
 * http.c (the daemon on the loop, requests, sessions) and http_stream.c
 * (the outs: a POST's JSON body or SSE stream, a session's GET stream,
 * their events kept for a resume). Loop thread only.
 *
 * Lifetimes: an http_conn is one TCP connection (MHD's socket context),
 * freed when it closed and its watch handle closed; an http_req is one
 * HTTP request (MHD's con_cls), reference-counted by MHD's request and by
 * the SSE response that reads from it; an http_stream is an srv_out,
 * reference-counted as serve.h says, the transport holding one reference
 * until it ends the stream (stream_end); an http_session is one
 * Mcp-Session-Id, owned by the session table.
 */
#ifndef TG_SERVE_HTTP_INT_H
#define TG_SERVE_HTTP_INT_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "http_transport.h"
#include "http_check.h"

typedef struct http_conn http_conn;
typedef struct http_req http_req;
typedef struct http_stream http_stream;
typedef struct http_session http_session;
typedef struct http_event http_event;

struct srv_http {
    tg__srv *srv;
    uv_loop_t *loop;
    struct MHD_Daemon *mhd;
    int listen_fd;        /* -1 once closed */
    uv_poll_t mhd_poll;   /* MHD's epoll fd */
    uv_timer_t mhd_timer; /* MHD_get_timeout, and "run soon" */
    uv_timer_t sweep;     /* deadlines, keep-alives, idle sessions */
    int handles;          /* loop handles not closed yet */
    bool in_run;          /* inside MHD_run */
    bool kicked;          /* a connection was resumed: MHD_run again */
    bool quiescing;       /* srv_http_quiesce was called */
    bool torn_down;       /* the daemon is stopped, handles closing */
    bool freed;           /* srv_http_free was called */
    bool closing;         /* srv_http_close was called */
    uint64_t close_by;    /* uv_now when closing stops waiting */
    bool loopback;        /* bound to a loopback address */

    /* options, copied */
    char *endpoint;
    char *caller;
    bool has_token;
    unsigned char token_digest[32];
    char **origins;
    size_t n_origins;
    srv_http_options o; /* numbers only; strings above */
    char url[128];
    int port; /* the one bound */

    http_session **buckets; /* sessions by id: chained, a power of two */
    size_t n_buckets;
    size_t n_sessions;
    http_conn *conns; /* every open connection */
    size_t busy;      /* streams with responses still to come */
};

struct http_conn {
    srv_http *h;
    struct MHD_Connection *conn;
    int fd;
    http_conn *prev, *next;
    uint64_t deadline; /* uv_now by which the request must be in; 0: none */
    http_req *req;     /* the request it carries now, or NULL */
    uv_poll_t watch;   /* sees the client leave while the request sleeps */
    bool watch_init;
};

typedef enum req_method { REQ_POST = 1, REQ_GET, REQ_DELETE } req_method;
typedef enum req_phase {
    PHASE_BODY = 0, /* headers in, body arriving */
    PHASE_WAIT,     /* a JSON answer waits for its responses (suspended) */
    PHASE_STREAM,   /* an SSE response is queued and reads the stream */
    PHASE_DONE      /* a response is queued */
} req_phase;

struct http_req {
    srv_http *h;
    http_conn *hc;
    struct MHD_Connection *conn;
    int refs;
    req_method method;
    req_phase phase;
    bool suspended;
    bool peer_gone;  /* the watch saw the client leave */
    bool kill;       /* close the connection (bound passed, stream ended) */
    bool eos;        /* the reader returned the end of the stream */
    bool poll_end;   /* end the stream when written up to now (poll_ms) */
    int wait_status; /* the status of a JSON answer that waits */

    /* headers (MHD's strings, valid while the request lives) */
    http_version version;
    const char *version_text;
    const char *session_id;
    const char *last_event_id;
    const char *mcp_method;
    const char *mcp_name;

    /* body */
    char *body;
    size_t len, cap;
    size_t over; /* bytes past max_body, discarded */

    /* the stream it answers with or reads, a reference held */
    http_stream *st;
    http_event *cur; /* next event to write; NULL: at the end */
    size_t off;      /* bytes of cur written */
    uint64_t last_write;
    uint64_t opened; /* uv_now when its SSE response was queued */
};

struct http_event {
    http_event *next;
    uint64_t seq;   /* its id's sequence number; 0: none */
    uint64_t start; /* bytes of the stream before it */
    srv_msg_kind kind;
    bool comment; /* a keep-alive or priming event, not a message */
    size_t len;
    char text[]; /* the bytes to write (SSE-framed in SSE mode), len + NUL */
};

typedef enum stream_mode {
    MODE_OPEN = 0, /* srv_handle runs: not decided yet */
    MODE_JSON,     /* the responses become one JSON body */
    MODE_SSE       /* every message is an SSE event */
} stream_mode;

struct http_stream {
    srv_out out; /* first: what the server sees */
    srv_http *h;
    http_session *hs;  /* its session while it is in hs->streams */
    srv_session *own;  /* a per-request session released at the end */
    http_stream *next; /* in hs->streams */
    uint64_t num;      /* its number in the session (event ids) */
    stream_mode mode;
    bool ids;         /* events carry ids "num-seq" (2025 versions) */
    bool priming;     /* a priming event and retry (2025-11-25) */
    bool retain;      /* events are kept after they are written (resume) */
    bool standalone;  /* a session's GET stream */
    bool handled;     /* srv_handle returned: pending counts down */
    bool busy;        /* counted in h->busy */
    bool finish;      /* end the (GET) stream once written */
    bool ended;       /* the transport is done with it */
    bool gone;        /* srv_out_closed was called for it */
    size_t pending;   /* responses still to come */
    size_t responses; /* responses queued, in every mode */
    bool batch;       /* the body was a batch: a JSON array answers it */
    http_event *head, *tail;
    uint64_t seq;     /* the last event id's sequence number */
    uint64_t total;   /* bytes of every event appended */
    size_t held;      /* bytes of the events still held */
    http_req *reader; /* the request sending it now, or NULL */
};

struct http_session {
    char id[HTTP_SESSION_ID_LEN + 1];
    http_session *hnext; /* in its bucket */
    srv_session *s;
    http_stream *streams; /* POST streams not ended */
    http_stream *notify;  /* the GET stream while open */
    uint64_t next_num;
    uint64_t last_used;
};

/* ---- http.c, for http_stream.c */

/* MHD_run soon (a zero timer), for a connection just resumed. */
void http_kick(srv_http *h);
/* Suspends r's connection (MHD_suspend_connection) and watches its socket
 * for the client leaving meanwhile. */
void http_req_suspend(http_req *r);
/* Resumes r's connection if it sleeps, and kicks. */
void http_req_wake(http_req *r);
/* Closes r's connection as soon as possible (shutdown of the socket; the
 * stream's reader ends with an error). */
void http_req_kill(http_req *r);
void http_req_unref(http_req *r);

/* ---- http_stream.c */

/* A new stream (one reference, the transport's) for session hs (may be
 * NULL) and the per-request session `own` (taken; may be NULL). NULL on
 * OOM. */
http_stream *stream_new(srv_http *h, http_session *hs, srv_session *own);
/* Decides the mode after srv_handle: SSE when `sse`, else JSON (what came
 * meanwhile is framed accordingly); pending counts down from then. */
void stream_decide(http_stream *st, bool sse, size_t pending);
/* Whether something other than a response was sent on it so far. */
bool stream_has_non_response(const http_stream *st);
/* The JSON body of a JSON-mode stream (malloc'd, *len its length; NULL on
 * OOM; "" when it holds no response). */
char *stream_json_body(http_stream *st, size_t *len);
/* Every event of a decided SSE stream as one text (caller frees; NULL on
 * out of memory), for a stream whose answers are all in already: sent as
 * one body, in one write with the headers. */
char *stream_sse_body(http_stream *st, size_t *len);
/* Attaches r as the stream's reader: from the start, or for a resume from
 * the first message after sequence number `after`. A previous reader is
 * detached (its connection closed). Takes a stream reference for r. */
void stream_attach(http_stream *st, http_req *r, bool resume, uint64_t after);
/* Detaches r (its request ended): `delivered` when it wrote the end of
 * the stream. A stream whose client left before its last response is
 * reported (srv_out_closed) and, when resumable, kept; else it ends. */
void stream_detach(http_stream *st, http_req *r, bool delivered);
/* The transport is done with st: off its session, events freed, its
 * per-request session released, the transport's reference dropped. A
 * reader still attached is closed. */
void stream_end(http_stream *st);
/* Appends a keep-alive comment when the stream's reader sleeps and was
 * silent since `before` (uv_now). */
void stream_keepalive(http_stream *st, uint64_t before);
/* SSE polling (2025-11-25): when r reads a resumable response stream that
 * still owes a response and was queued before `before` (uv_now), r ends
 * the stream cleanly once it has written what is queued; the stream is
 * kept for the client's GET with Last-Event-ID, as after a drop. */
void stream_poll_end(http_req *r, uint64_t before);
/* MHD's content reader over r's stream. */
ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max);
/* MHD's content reader free callback: drops the response's reference. */
void stream_read_done(void *cls);

#endif
