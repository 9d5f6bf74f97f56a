/* SPDX-License-Identifier: MIT */
/*
 * server.h - the server's own files (server.c, handle.c, methods.c,
 * call.c): the server, session and request structures behind serve.h and
 * the helpers they share for sending messages. Transports use serve.h.
 */
#ifndef TG_SERVE_SERVER_H
#define TG_SERVE_SERVER_H

#include <stdio.h>

#include "jsonrpc.h"
#include "result.h"
#include "serve.h"
#include "version.h"

/* The syslog levels of MCP logging, lowest first; -1: none asked. */
int srv_log_level_parse(const char *name);
const char *srv_log_level_name(int level);

typedef struct srv_req srv_req;

/* 2026-07-28 requestStates (approve.c) last this long: the bound of a
 * policy approval's retry and of a call parked on a source's question. */
#define SRV_STATE_TTL_MS (10 * 60 * 1000)
/* The hex digits naming a parked call in its requestState. */
#define SRV_PARK_LEN 32

struct tg__srv {
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
    uint64_t task_after_ms;  /* srv_options.task_after_ms, resolved */
    struct srv_tasks *tasks; /* tasks.c's, NULL until used */
    FILE *trace;
    char boot[17];               /* random hex naming this server's calls */
    unsigned char state_key[32]; /* signs 2026-07-28 requestStates */
    struct srv_park *parks;      /* calls waiting for a retry (elicit.c) */
    uint64_t nrequests;          /* server-to-client requests sent */
    uint64_t ncalls;
    tg__mcp_tools *tools; /* the tool list, built on first use */
    /* the tool list each caller may see (srv_tools_for), built on its
     * first use; callers come from the configuration and the tokens */
    struct srv_caller_tools *caller_tools;
    /* the tools' generation (tg_runtime_tools_generation) the lists above
     * were made at, and the last one announced to the clients */
    unsigned long tools_gen, announced_gen;
    bool tools_may_change; /* MCP sources serve some of the tools */
    srv_session *sessions;
    size_t live; /* requests not yet answered */
    bool stopping, closed;
    struct {
        void (*fn)(tg__srv *srv, void *ud);
        void *ud;
    } on_stopped[4];
    int non_stopped;
};

struct srv_session {
    tg__srv *srv;
    srv_session *prev, *next;
    srv_via via;
    int refs;
    bool initialized, ended;
    tg__mcp_version version;
    json_t *client_caps; /* new ref, or NULL */
    json_t *client_info; /* new ref, or NULL */
    int log_level;       /* logging/setLevel, -1 before */
    char *caller;        /* NULL: the server's */
    srv_out *notify;     /* a reference, or NULL */
    srv_req *reqs;       /* its tools/call requests in flight */
};

/* A tools/call in flight. */
struct srv_req {
    tg__srv *srv;
    srv_session *s; /* a reference */
    srv_out *out;   /* a reference */
    srv_req *snext, *sprev, *onext, *oprev;
    tg__mcp_version version;
    json_t *id;     /* the JSON-RPC id (new ref) */
    bool id_is_int; /* id is an integer: id_num (srv_req_link) */
    json_int_t id_num;
    json_t *progress_token; /* new ref, or NULL */
    int log_level;          /* what log messages it gets, -1: none */
    tg_turn *turn;
    char call_id[64];
    json_t *caps; /* the client's capabilities (new ref) or NULL */
    /* approvals (approve.c): the ask waiting for the client's user, the
     * server request that asks, and under 2026-07-28 whether the answer
     * is an InputRequiredResult, or the retry's verified answer */
    tg_ask *ask;
    json_t *ask_id; /* the elicitation/create request's id (new ref) */
    json_t *input;  /* the InputRequiredResult to send (new ref) */
    bool input_required;
    int retry_answer; /* -1: none; else a tg_approval */
    /* the retry's state names a parked call (elicit.c): its park, else "" */
    char retry_park[SRV_PARK_LEN + 1];
    /* its call's source asks the client's user (elicit.c) */
    struct srv_elicit *elicits;
    /* 2026-07-28: answered with an InputRequiredResult, the call waits
     * for the client's retry (elicit.c); NULL while attached */
    struct srv_park *park;
    /* tasks (tasks.c): the task it is, and whether it left its session's
     * and out's lists (a task outlives both) */
    struct srv_task *task;
    bool detached;
    bool listen;    /* a subscriptions/listen (listen.c), not a call */
    bool tools_sub; /* ...that asked for toolsListChanged */
    bool silent;    /* canceled by the client: nothing more is sent */
    bool answered;  /* its response was sent */
    /* progress and log lines: the line readers are made when the tool
     * first writes (most calls of an in-process tool never do) */
    uint64_t out_bytes;
    double progress_sent;
    uint64_t last_progress_ms;
    bool progress_relayed; /* a source's own progress went out: no bytes */
    struct srv_req_lines *lines;
};

/* A running call's output read as lines (call.c). */
struct srv_req_lines {
    char line[512]; /* the stdout line being read, cut at its size */
    size_t line_len;
    char last_line[256]; /* the last whole stdout line, for progress */
    char eline[4096];    /* the stderr line being read */
    size_t eline_len;
};

/* server.c */
void srv_on_rt_timer(uv_timer_t *h);
/* Runs a runtime step soon (after calls were submitted). */
void srv_kick(tg__srv *srv);
void srv_check_stopped(tg__srv *srv);
/* toolgate's own warning (tg_runtime_warning: the sandbox is not in
 * force, ...) to a session that just initialized, as a log message on its
 * own stream, when its log level lets warnings through. */
void srv_warn_session(tg__srv *srv, srv_session *s);
void srv_session_hold(srv_session *s);
const char *srv_session_caller(const srv_session *s);
/* The version named (NULL: none), TG_MCP_VERSION_UNKNOWN for others. */
tg__mcp_version srv_version_parse(const char *name);
/* n bytes of the CSPRNG as 2n lowercase hex digits and a NUL in out. */
void srv_random_hex(char *out, size_t n);
/* n bytes of the CSPRNG. */
void srv_random_bytes(unsigned char *out, size_t n);

/* Sending: msg on out (what a closed out still takes is its transport's
 * call: a stream kept for a resume takes it, others refuse), traced with
 * the version and the method a response answers. Return 0 or -1. */
int srv_send(tg__srv *srv, srv_out *out, tg__mcp_version v, const char *answers,
             srv_msg_kind kind, const char *msg, size_t len);
int srv_send_json(tg__srv *srv, srv_out *out, tg__mcp_version v,
                  const char *answers, srv_msg_kind kind, json_t *msg_take);
/* A result response; under 2026-07-28 with resultType ("complete" unless
 * set) and _meta serverInfo, as every result of that version carries. */
int srv_send_result(tg__srv *srv, srv_out *out, tg__mcp_version v,
                    const char *answers, const json_t *id, json_t *result_take);
/* A result response whose result is JSON text already (an object). */
int srv_send_result_text(tg__srv *srv, srv_out *out, tg__mcp_version v,
                         const char *answers, const json_t *id,
                         const char *result, size_t len);
int srv_send_error(tg__srv *srv, srv_out *out, tg__mcp_version v,
                   const char *answers, const json_t *id, int code,
                   const char *message, json_t *data_take);

/* methods.c: a request's method, with its params (borrowed), answered on
 * out. Returns 1 when the answer comes later (a tools/call), else 0. */
typedef struct srv_ctx {
    tg__srv *srv;
    srv_session *s;
    srv_out *out;
    tg__mcp_version version;
    const json_t *id;   /* borrowed */
    const char *method; /* borrowed */
    /* the message as read (srv_handle's), or NULL for an answer sent
     * later; its params through srv_params / srv_param_find */
    const tg__rpc_batch *rpc;
    const tg__rpc_msg *msg;
    json_t *params_json; /* srv_params' (new ref), made on first use */
    bool params_made;
    int log_level;      /* 2026-07-28: from _meta; else the session's */
    const json_t *caps; /* the client's capabilities (borrowed) or NULL */
    srv_answer *ans;
} srv_ctx;
int srv_method(srv_ctx *c);
/* c's params as a jansson object (borrowed, until srv_handle returns),
 * made on the first call; NULL when the message has none (or memory ran
 * out making it). */
const json_t *srv_params(srv_ctx *c);
/* params.path[0]...path[n-1] of c's message read on its token tape,
 * without making the jansson params (a hot path's few members): true with
 * *out set when present. */
bool srv_param_find(const srv_ctx *c, const char *const *path, size_t n,
                    tg__rpc_value *out);
/* Answers c's request with a result (resultType and serverInfo added
 * under 2026-07-28). */
void srv_reply(srv_ctx *c, json_t *result_take);
/* The tool list (borrowed; built on first use), or NULL. */
const tg__mcp_tools *srv_tools(tg__srv *srv);
/* The tools `caller` may see: what the policy denies that caller whatever
 * the arguments is left out (borrowed; built on the caller's first use),
 * or NULL. */
const tg__mcp_tools *srv_tools_for(tg__srv *srv, const char *caller);
/* Frees the lists srv_tools_for built. */
void srv_tools_free(tg__srv *srv);
/* When the runtime's tools changed since the last announcement (an MCP
 * source behind the server re-listed its tools, one was held or
 * accepted): notifications/tools/list_changed to every 2025 session and
 * to every subscriptions/listen that asked for it. */
void srv_tools_announce(tg__srv *srv);
/* The _meta members every result of version v carries (JSON text of
 * members: serverInfo under 2026-07-28), or NULL. */
const char *srv_meta_members(tg__mcp_version v);

/* approve.c: a policy `ask` put to the client's user (elicitation, or
 * under 2026-07-28 an InputRequiredResult and the retry's answer). */
void srv_approvals_init(tg__srv *srv);
/* A response of the client (result or error) to a request of the server:
 * the answer to an elicitation. */
void srv_client_response(tg__srv *srv, srv_session *s, const json_t *id,
                         const json_t *result, bool is_error);
/* Sends the server's request `text` (JSON) to r's client: on r's own
 * stream, else its session's. 0, or -1 when neither took it. */
int srv_req_send_request(srv_req *r, const char *text);
/* The request of srv whose call has id call_id, or NULL. */
srv_req *srv_req_by_call(tg__srv *srv, const char *call_id);
/* Forgets the elicitation a request waits for (it ended): its ask is
 * answered no. */
void srv_approval_drop(srv_req *r);
/* 2026-07-28: a tools/call that carries inputResponses and requestState
 * (a retry): checks the state (made by this server for this caller, tool
 * and arguments, not expired) and takes the answer into r. Returns 0 (a
 * first try, or a retry whose state holds), or -1 after answering the
 * request with an error. */
int srv_approval_retry(srv_ctx *c, srv_req *r);
/* Sends r's InputRequiredResult as its response. */
void srv_approval_input_required(srv_req *r);
/* The requestState of r's call expiring at `expiry` (epoch ms) in
 * out[cap] (192 bytes hold it): "<expiry>.<mac>" for a policy approval
 * (park ""), "<expiry>.<park>.<mac>" for a call parked on a source's
 * question (park: SRV_PARK_LEN hex digits naming it), the MAC an
 * HMAC-SHA256 keyed by this server over the expiry, r's caller, tool and
 * canonical arguments and the park. srv_approval_retry checks it. */
void srv_state_make(const srv_req *r, const char *park, long long expiry,
                    char *out, size_t cap);
/* The wall clock in epoch milliseconds (what states expire by). */
long long srv_wall_ms(void);

/* elicit.c: a source's elicitation forwarded to the client that made the
 * call (a gateway). Sets the runtime's elicitation handler. */
void srv_elicits_init(tg__srv *srv);
/* A response of session s's client to a request of the server: true when
 * it answered a forwarded elicitation (which goes upstream now). */
bool srv_elicit_response(srv_session *s, const json_t *id, const json_t *result,
                         bool is_error);
/* Answers cancel every forwarded elicitation r waits for (r ends). */
void srv_elicits_drop(srv_req *r);
/* Whether r waits for the answer to its forwarded elicitation `id`. */
bool srv_elicits_has(const srv_req *r, const json_t *id);
/* 2026-07-28: the inputRequests of r's pending questions, for a task's
 * input_required status (new ref: an object, maybe empty). */
json_t *srv_elicits_input_requests(const srv_req *r);
/* 2026-07-28: the answers in `inputs` (an InputResponses object, borrowed)
 * to r's pending questions go upstream; answers to no pending question
 * are ignored. */
void srv_elicits_take(srv_req *r, const json_t *inputs);
/* call.c, a tools/call whose verified requestState names a parked call
 * (new->retry_park): re-attaches that call to c's request, its answers
 * (c's inputResponses) go upstream, and the request is answered with the
 * call's result when it comes (kept if it came meanwhile) or with the next
 * question. Returns 1 (answered later), 0 (answered now), or -1 when no
 * call waits under that park (answered already, expired, or never
 * made): the caller answers -32602. */
int srv_park_resume(srv_ctx *c, const srv_req *fresh);
/* call.c, in r's done callback: when r is parked, keeps its end for the
 * retry (or frees r when the server stops or the park expired) and
 * returns true; false when r is attached. */
bool srv_park_done(srv_req *r, int status, const tg_error *err);
/* elicit.c's part of r's freeing: its park, if any. */
void srv_park_free(srv_req *r);
/* The server stops: parked calls are canceled, kept results dropped. */
void srv_parks_stop(tg__srv *srv);

/* listen.c: subscriptions/listen (2026-07-28), a request answered only
 * when it ends. */
int srv_listen_start(srv_ctx *c);
/* Ends a listen: by the server (`by_server`: notifications/cancelled for
 * it and its final result are sent first) or by its client. */
void srv_listen_end(srv_req *r, bool by_server);
/* Ends every listen of the server (it stops). */
void srv_listen_end_all(tg__srv *srv);

/* call.c */
/* Puts r (s, out and id set; the id no longer changes) in its session's
 * and its out's lists. */
void srv_req_link(srv_req *r);
/* Unlinks r and lets go of what it holds (its turn, ids, references). */
void srv_req_free(srv_req *r);
/* Answers r with its call's end (status, err: the done callback's),
 * unless it was canceled by its client, then frees it. */
void srv_req_end(srv_req *r, int status, const tg_error *err);
int srv_call_start(srv_ctx *c);
/* Cancels a request's call (its client canceled: nothing more is sent). */
void srv_req_cancel(tg__srv *srv, srv_req *r, const char *reason);
/* Takes r out of its session's and out's lists (a task outlives both:
 * neither a closed stream nor an ended session cancels it, and its
 * JSON-RPC id, answered, may be used again). */
void srv_req_detach(srv_req *r);
/* The answer of a finished one-call turn under version v, status and err
 * as its done callback had them; the one place a call's answer is made,
 * for a tools/call and for a task's result alike. Returns 0 with the
 * CallToolResult appended to `result` (a JSON object, toolgate's outcome
 * in its _meta), or the JSON-RPC error code the call is answered with
 * instead - -32602 for an unknown tool, -32603 when the call failed or its
 * result cannot be rendered - with the error's message in msg[msg_size].
 * A tool that declares an outputSchema in srv's tool list gets no
 * structuredContent with an outcome other than success. */
int srv_call_answer(tg__srv *srv, tg__buf *result, const tg_turn *turn,
                    tg__mcp_version v, int status, const tg_error *err,
                    char *msg, size_t msg_size);
/* The request of session s with JSON-RPC id `id`, or NULL. */
srv_req *srv_req_find(srv_session *s, const json_t *id);

#endif
