/* SPDX-License-Identifier: MIT */
/*
 * load.h - what the files of the MCP load client (bench/mcp/mcp_load, see
 * mcp_load.c for what it does and its options) share: the options, the
 * byte buffer, a channel to the server and the HTTP response read on it,
 * the phase being waited for, the run that holds them all, and the calls
 * between mcp_load.c (options, handshake, phases, figures, main),
 * load_chan.c (messages, channels, the poll loop), load_http.c (the HTTP
 * side), load_server.c (the server process), load_json.c (the scan of one
 * message) and load_util.c (die and the buffers).
 *
 * The client is one thread and every failure ends it: functions here that
 * fail call die(), which stops a server started here and exits with
 * status 1, so none returns an error to handle.
 */
#ifndef TG_BENCH_MCP_LOAD_H
#define TG_BENCH_MCP_LOAD_H

#include <stddef.h>
#include <sys/types.h>

#define MAX_MESSAGE (64u << 20) /* a response or HTTP header block */
#define MAX_INFLIGHT 4096

struct addrinfo;

struct opts {
    long calls, inflight, warmup, timeout_ms, start_timeout_ms, size;
    long pid;
    int pin; /* 0 none, 1 both on one CPU, 2 on two CPUs */
    int cpu[2];
    const char *version, *label;
    const char *tool; /* the tool called: "echo" unless --tool */
    int json;
    const char *http;
    char host[256], port[16], path[512];
    char **cmd; /* the server command, argv after "--", or NULL */
};

struct buf {
    char *p;
    size_t len, cap;
};

/* An HTTP response being read on a connection. */
struct http_resp {
    int status, chunked, close, sse, headers_done;
    int lenient;      /* the DELETE that ends a session: any status, no body */
    long long length; /* Content-Length, -1 when absent */
    size_t head_len;  /* bytes of the status line and headers */
    size_t pos;       /* parse position in the connection's input */
    long long chunk_left;
    int in_trailer;
    struct buf body;
};

/* One channel to the server: the stdio pipes, or one HTTP connection. */
struct chan {
    int wfd, rfd;
    struct buf out, in;
    size_t out_off;
    int busy; /* HTTP: a request is in flight on it */
    struct http_resp resp;
};

/* What the run is waiting for: the handshake's answer or a phase's calls. */
struct phase {
    long long base; /* the first call's id */
    long n, sent, done, window;
    double *t_sent, *lat;
    long long want_id; /* handshake: the id of its request, else -1 */
    int got;           /* handshake: the answer came */
    struct buf answer; /* handshake: the answer's result */
};

struct run {
    struct opts o;
    pid_t server; /* started here, or 0 */
    struct chan *chans;
    int nchan; /* stdio: 1; HTTP: inflight */
    struct addrinfo *addr;
    char session[256];
    char version[64];          /* negotiated */
    char *req_head, *req_tail; /* a tools/call body around its id */
    size_t req_head_len, req_tail_len;
    char *text;
    long long next_id;
    struct phase *ph;
};

/* The top-level members of one JSON-RPC message, as scan_message finds
 * them. */
struct msg {
    int has_id, has_method, has_result, has_error;
    long long id;
    const char *result, *error; /* spans into the message */
    size_t result_len, error_len;
};

/* ---- load_util.c ---- */

/* The run die() stops the server of (set by main), or NULL. */
extern struct run *the_run;

/* Prints "mcp_load: " and the message to stderr, stops the server of
 * the_run started here (at once, with its process group) and exits with
 * status 1. */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grows b so that more bytes fit after its len (dies when out of
 * memory). b owns b->p: free it when done. */
void buf_reserve(struct buf *b, size_t more);

/* Appends s[0..n) to b. */
void buf_add(struct buf *b, const void *s, size_t n);

/* Appends the string s (without its NUL) to b. */
void buf_adds(struct buf *b, const char *s);

/* Drops the first n (<= b->len) bytes of b. */
void buf_consume(struct buf *b, size_t n);

/* ---- load_json.c ---- */

/* Fills m from the JSON object s[0..n): 0, or -1 when it is not one. The
 * spans m->result and m->error point into s. */
int scan_message(const char *s, size_t n, struct msg *m);

/* Whether span[0..n) holds the string needle. */
int span_has(const char *span, size_t n, const char *needle);

/* ---- load_server.c ---- */

/* --pin: picks the CPUs of o->pin (o->cpu[0] for this process, o->cpu[1]
 * for the server, the same CPU for "one") and pins this process to
 * o->cpu[0]; dies when that cannot be done. */
void choose_cpus(struct opts *o);

/* Starts r->o.cmd in a process group of its own (pinned to r->o.cpu[1]
 * under --pin) and sets r->server; dies when it cannot run. Over stdio
 * *to_server and *from_server get our ends of its stdin and stdout
 * (owned by the caller); over HTTP they are left alone and its stdout goes
 * to our stderr. */
void start_server(struct run *r, int *to_server, int *from_server);

/* Dies when the server this program started has exited, or exits within
 * wait_ms; returns when there is none or it still runs. */
void check_server(struct run *r, long wait_ms);

/* Ends the server started here, if any, and sets r->server to 0: EOF on
 * its stdin (stdio's clean shutdown) or SIGTERM, then SIGKILL to its
 * process group; quick skips the waiting for a clean exit. */
void stop_server(struct run *r, int quick);

/* The sum of VmHWM (KiB) over pid and its descendants, or -1 when pid's
 * cannot be read. */
long tree_hwm_kib(long pid);

/* ---- load_http.c ---- */

/* Splits o->http ([http://]HOST:PORT[/PATH], HOST possibly in brackets)
 * into o->host, o->port and o->path ("/mcp" when absent); dies on a bad
 * one. */
void parse_endpoint(struct opts *o);

/* Resolves r->o.host and r->o.port into r->addr (freed by the caller with
 * freeaddrinfo); dies when they do not resolve. */
void http_resolve(struct run *r);

/* A new non-blocking TCP connection to r->addr (the caller closes it), or
 * -1 with errno when the connect fails. */
int http_connect(struct run *r);

/* Waits until the endpoint accepts a connection (the server started here
 * listens), dying when the server exits first or start_timeout passes. */
void wait_for_port(struct run *r);

/* Appends one POST of body[0..len) (or, body NULL, the DELETE that ends
 * the session) to c->out, with the session and protocol headers (and
 * Mcp-Method / Mcp-Name under 2026-07-28), marks c busy and resets
 * c->resp for its response. */
void http_request(struct run *r, struct chan *c, const char *method,
                  const char *mcp_name, const char *body, size_t len);

/* Parses the status line and headers of c->resp once they are all in
 * c->in (taking the Mcp-Session-Id into r->session): 0 done, 1 need
 * more; dies on a response that is not HTTP/1.x. */
int http_head(struct run *r, struct chan *c);

/* Moves what is complete of the body from c->in into c->resp.body
 * (Content-Length or chunked): 0 when the whole response is in, 1 need
 * more (a body that ends with the connection always needs more). */
int http_body(struct chan *c);

/* ---- load_chan.c ---- */

/* Writes what c->out holds until it is all written or the channel would
 * block; dies when the server's end is gone. */
void chan_flush(struct chan *c);

/* One round over every channel of r: flushes output, reads input and
 * hands each complete message to r->ph (dying on a bad one); dies after
 * timeout_ms of silence or when the server goes away. Unpinned a poll
 * round (busy-polling first); pinned over stdio, once the output is all
 * written, a read(2) that blocks with an interval timer for the timeout,
 * as bench/mcp/pingpong waits. */
void pump(struct run *r);

/* After the last pump of an exchange or phase: disarms the timer a
 * blocking pump left armed. */
void pump_done(struct run *r);

/* Channel i of r, over HTTP connected first when it is not (dies when the
 * connect fails). */
struct chan *chan_open(struct run *r, int i);

#endif
