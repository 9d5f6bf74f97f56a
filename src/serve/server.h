/* SPDX-License-Identifier: MIT */
/*
 * server.h - the server's own files (server.c, handle.c, methods.c,
 * call.c): the server, session and request structures behind serve.h and
 * the helpers they share for sending messages. Transports use serve.h.
 */
#ifndef TG_SERVE_SERVER_H
#define TG_SERVE_SERVER_H

#include <stdio.h>

#include "serve.h"

/* The protocol versions served (their names: srv_version_name). */
typedef enum srv_version {
    SRV_V2025_06 = 0,
    SRV_V2025_11 = 1,
    SRV_V2026 = 2
} srv_version;

/* The newest version a client gets with initialize, and the newest. */
#define SRV_V_INIT_LATEST SRV_V2025_11

/* The syslog levels of MCP logging, lowest first; -1: none asked. */
int srv_log_level_parse(const char *name);
const char *srv_log_level_name(int level);

typedef struct srv_req srv_req;

struct tg_srv {
    tg_runtime *rt;
    uv_loop_t loop;
    uv_poll_t rt_poll;   /* the runtime's descriptor */
    uv_timer_t rt_timer; /* the runtime's next timer */
    uv_idle_t kick;      /* a step after this loop iteration */
    bool kicked;
    uv_timer_t grace; /* shutdown: cancels what still runs */
    char *caller;     /* the default caller id */
    size_t max_message;
    int max_depth;
    const char *spool_dir;   /* borrowed from the config; NULL: no spool */
    const char *journal;     /* borrowed from the config; NULL: none */
    struct srv_tasks *tasks; /* tasks.c's, NULL until used */
    FILE *trace;
    char boot[17]; /* random hex naming this server's calls */
    uint64_t ncalls;
    json_t *tools; /* the MCP tool definitions, built on first use */
    srv_session *sessions;
    size_t live; /* requests not yet answered */
    bool stopping, closed;
    struct {
        void (*fn)(tg_srv *srv, void *ud);
        void *ud;
    } on_stopped[4];
    int non_stopped;
};

struct srv_session {
    tg_srv *srv;
    srv_session *prev, *next;
    srv_via via;
    int refs;
    bool initialized, ended;
    srv_version version;
    json_t *client_caps; /* new ref, or NULL */
    json_t *client_info; /* new ref, or NULL */
    int log_level;       /* logging/setLevel, -1 before */
    char *caller;        /* NULL: the server's */
    srv_out *notify;     /* a reference, or NULL */
    srv_req *reqs;       /* its tools/call requests in flight */
};

/* A tools/call in flight. */
struct srv_req {
    tg_srv *srv;
    srv_session *s; /* a reference */
    srv_out *out;   /* a reference */
    srv_req *snext, *sprev, *onext, *oprev;
    srv_version version;
    json_t *id;             /* the JSON-RPC id (new ref) */
    json_t *progress_token; /* new ref, or NULL */
    int log_level;          /* what log messages it gets, -1: none */
    tg_turn *turn;
    char call_id[64];
    struct srv_task *task; /* tasks.c: the task it is, or NULL */
    bool detached;         /* a task's: out of its session's and out's lists */
    bool silent;           /* canceled by the client: nothing more is sent */
    bool answered;         /* its response was sent */
    /* progress and log lines */
    uint64_t out_bytes;
    double progress_sent;
    uint64_t last_progress_ms;
    char line[512]; /* the stdout line being read, cut at its size */
    size_t line_len;
    char last_line[256];
    char eline[4096]; /* the stderr line being read */
    size_t eline_len;
};

/* server.c */
void srv_on_rt_timer(uv_timer_t *h);
/* Runs a runtime step soon (after calls were submitted). */
void srv_kick(tg_srv *srv);
void srv_check_stopped(tg_srv *srv);
void srv_session_hold(srv_session *s);
const char *srv_session_caller(const srv_session *s);
const char *srv_version_name(srv_version v);
/* The version named, or -1. */
int srv_version_parse(const char *name);
/* n bytes of the CSPRNG as 2n lowercase hex digits and a NUL in out. */
void srv_random_hex(char *out, size_t n);

/* Sending: msg on out (nothing when out is closed), traced with the
 * version and the method a response answers. Return 0 or -1. */
int srv_send(tg_srv *srv, srv_out *out, srv_version v, const char *answers,
             srv_msg_kind kind, const char *msg, size_t len);
int srv_send_json(tg_srv *srv, srv_out *out, srv_version v, const char *answers,
                  srv_msg_kind kind, json_t *msg_take);
/* A result response (resultType "complete" added under 2026-07-28). */
int srv_send_result(tg_srv *srv, srv_out *out, srv_version v,
                    const char *answers, const json_t *id, json_t *result_take);
int srv_send_error(tg_srv *srv, srv_out *out, srv_version v,
                   const char *answers, const json_t *id, int code,
                   const char *message, json_t *data_take);

/* methods.c: a request's method, with its params (borrowed), answered on
 * out. Returns 1 when the answer comes later (a tools/call), else 0. */
typedef struct srv_ctx {
    tg_srv *srv;
    srv_session *s;
    srv_out *out;
    srv_version version;
    const json_t *id;     /* borrowed */
    const char *method;   /* borrowed */
    const json_t *params; /* borrowed; may be NULL */
    int log_level;        /* 2026-07-28: from _meta; else the session's */
    srv_answer *ans;
} srv_ctx;
int srv_method(srv_ctx *c);
/* Answers c's request with a result (resultType and serverInfo added
 * under 2026-07-28). */
void srv_reply(srv_ctx *c, json_t *result_take);
/* The tools in MCP shape (borrowed; built on first use), or NULL. */
const json_t *srv_tools(tg_srv *srv);

/* call.c */
int srv_call_start(srv_ctx *c);
/* Cancels a request's call (its client canceled: nothing more is sent). */
void srv_req_cancel(tg_srv *srv, srv_req *r, const char *reason);
/* Takes r out of its session's and out's lists (a task outlives both:
 * neither a closed stream nor an ended session cancels it, and its
 * JSON-RPC id, answered, may be used again). */
void srv_req_detach(srv_req *r);
/* The answer of a finished one-call turn: its CallToolResult with
 * toolgate's outcome in _meta (new ref), or its JSON-RPC error in *error
 * (new ref); NULL and no error when it cannot be rendered. */
json_t *srv_call_answer(const tg_turn *turn, const char *call_id,
                        json_t **error);
/* The request of session s with JSON-RPC id `id`, or NULL. */
srv_req *srv_req_find(srv_session *s, const json_t *id);

#endif
