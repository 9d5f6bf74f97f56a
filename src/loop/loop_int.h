/* SPDX-License-Identifier: MIT */
/*
 * loop_int.h - what the files of the agent loop share: the table of a model
 * API (one per provider: how a conversation starts, the request's URL,
 * headers and body, how an answer joins the conversation), the HTTP
 * exchange on libcurl's multi interface beside the runtime, the retry
 * policy, and the conversation helpers. The loop is a face: it includes
 * toolgate.h and toolgate_loop.h only, never a header of the runtime.
 */
#ifndef TG_LOOP_INT_H
#define TG_LOOP_INT_H

#include <curl/curl.h>
#include <jansson.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>

#include "toolgate.h"
#include "toolgate_loop.h"

/* ------------------------------------------------------------ providers */

/* One model API. Every function returns 0 or a negative TG_E code with err
 * filled; json_t results are new refs. */
typedef struct tg__provider {
    const char *name;     /* the --provider name: "openai", ... */
    const char *format;   /* toolgate's wire format: "openai-chat", ... */
    const char *list_key; /* the conversation's list: "messages", ... */
    const char *key_env;  /* the default environment variable of the key */
    /* Fills conv (an empty object) with the system prompt (NULL: none) and
     * the user prompt, in the provider's shape. */
    int (*start)(json_t *conv, const char *system, const char *prompt,
                 tg_error *err);
    /* The URL of a request, streamed or not (malloc'd; caller frees). */
    char *(*url)(const char *base_url, const char *model, int stream);
    /* Appends the provider's headers (content type, version, the key when
     * key is not NULL or "") to *headers. */
    int (*headers)(struct curl_slist **headers, const char *key, tg_error *err);
    /* The request body: conv (borrowed) and the tool definitions as
     * tg_runtime_tools renders them for `format` (borrowed; NULL or empty:
     * none), the model, Anthropic's max_tokens. *out is a new ref. */
    int (*request)(const json_t *conv, const json_t *tools, const char *model,
                   int max_tokens, json_t **out, tg_error *err);
    /* Appends the assistant turn of a whole response `resp` (borrowed) to
     * the conversation list `list`, and sets *text (malloc'd, "" when none)
     * to its text. TG_EFORMAT when resp has no assistant turn. */
    int (*answer)(json_t *list, const json_t *resp, char **text, tg_error *err);
    /* One event of a streamed answer (borrowed): the text it adds
     * (borrowed from ev, NULL when none); what the provider needs to
     * rebuild the assistant turn is kept in *extra (created on first use,
     * a new ref the caller releases): Gemini's parts, the Responses API's
     * final output items. */
    const char *(*stream_event)(const json_t *ev, json_t **extra);
    /* Appends the assistant turn of a streamed answer to list: its text,
     * the calls of `turn` (the stream's whole turn, in the model's order)
     * and extra as stream_event left it (may be NULL). */
    int (*stream_answer)(json_t *list, const char *text, const tg_turn *turn,
                         const json_t *extra, tg_error *err);
} tg__provider;

extern const tg__provider tg__provider_openai_chat;
extern const tg__provider tg__provider_openai_responses;
extern const tg__provider tg__provider_anthropic;
extern const tg__provider tg__provider_gemini;

/* The provider named `name` (static), or NULL. */
const tg__provider *tg__provider_find(const char *name);

/* -------------------------------------------------------- conversation */

/* Fills err (may be NULL) with code and the formatted message; returns
 * code. */
int tg__loop_fail(tg_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Starts a conversation kept as a list under `list_key` of conv, the
 * system prompt (NULL: none) a string member `system_key` beside it, the
 * user's prompt the list's first message {"role": "user", "content"}:
 * Anthropic's messages/system, OpenAI Responses' input/instructions. 0 or
 * TG_ENOMEM. */
int tg__conv_start(json_t *conv, const char *list_key, const char *system_key,
                   const char *system, const char *prompt, tg_error *err);

/* base_url without its trailing slashes, then `tail` (a malloc'd string,
 * NULL on out of memory). */
char *tg__url_join(const char *base_url, const char *tail);
/* Appends `name: value` to *headers (copied by curl); the formatted line
 * is wiped before it returns (it may carry a key). 0 or TG_ENOMEM. */
int tg__header_add(struct curl_slist **headers, const char *name,
                   const char *value, tg_error *err);
/* Concatenates the string members `key` of the objects in `array` whose
 * `type` is `type` (NULL: any) onto *text (malloc'd, may be NULL at first).
 * Skips objects with "thought": true. 0 or TG_ENOMEM. */
int tg__text_append(char **text, const json_t *array, const char *type,
                    const char *key);
/* The arguments of `call` as a JSON value for a rebuilt assistant turn:
 * the object when they decoded to one, else {} (new ref; NULL on out of
 * memory). */
json_t *tg__loop_args_value(const tg_call *call);
/* The arguments of `call` as the string a Chat Completions or Responses
 * turn carries: as the wire carried them, else the object's JSON, else
 * "{}" (borrowed from the call). */
const char *tg__loop_args_text(const tg_call *call);
/* Merges the results of one turn (JSON text in a provider's shape: an
 * array of messages, or one message) into *acc (NULL at first; a new ref
 * the caller releases): arrays are joined, and two messages become one
 * (their "content" or "parts" arrays joined: the one user message of
 * Anthropic, the one user content of Gemini, for calls that ran as turns
 * of their own). TG_EPARSE, TG_EFORMAT for other shapes, TG_ENOMEM. */
int tg__results_merge(json_t **acc, const char *json, tg_error *err);
/* Adds merged results to the conversation list: an array's items, or one
 * message. 0 or TG_ENOMEM. */
int tg__conv_add(json_t *list, json_t *acc, tg_error *err);
/* Adds the prompt factory's output (JSON text: an array of messages or
 * one message) to list. TG_EPARSE when it is not JSON, TG_EFORMAT when it
 * is neither an array nor an object. */
int tg__conv_add_results(json_t *list, const char *json, tg_error *err);
/* The provider's message in an error answer: error.message, error (a
 * string), message, else the body's first 300 bytes; in buf (size n). */
void tg__provider_error(const char *body, size_t len, char *buf, size_t n);

/* ------------------------------------------------------------- request */

/* The JSON text of the conversation's items sent so far (request.c): each
 * item serialized once, "item0,item1,...". Zeroed to start. */
typedef struct tg__reqtext {
    char *text; /* not NUL-terminated */
    size_t len, cap;
    json_t **items; /* new refs: the items kept, compared by identity */
    size_t *ends;   /* text's length after each item */
    /* 1 for an item added as text (tg__reqtext_add): in the list it is a
     * placeholder, its JSON is only its text here */
    unsigned char *lazy;
    size_t n, items_cap;
    /* The body without the list, made once (the model, the tools, the
     * system prompt do not change during a loop): frame[0..head) comes
     * before the list's items, frame[tail..) after them. */
    char *frame;
    size_t head, tail;
    const json_t *frame_tools; /* the tools it was made with (identity) */
    int frame_stream;
    /* the tool definitions' text that tools_mark stands for in the frame
     * (tg__reqtext_tools), or NULL */
    char *tools_text;
    const json_t *tools_mark;
} tg__reqtext;

/* The tool definitions for requests, from their JSON text as
 * tg_runtime_tools gives it (borrowed): *tools (a new ref) is what the
 * provider's request() takes. A list is not parsed: *tools is an array of
 * one marker string that the frame's text replaces by `text` (kept in r),
 * or an empty array for "[]"; an object (Gemini's Tool) is parsed. 0,
 * TG_ENOMEM, TG_EINTERNAL when it is not JSON. */
int tg__reqtext_tools(tg__reqtext *r, const char *text, json_t **tools,
                      tg_error *err);

/* The body of a request (prov's request(), with "stream" and Chat
 * Completions' stream_options when stream) for conv and tools (borrowed),
 * as compact JSON text in *out (malloc'd, NUL-terminated, *out_len bytes),
 * the list's items taken from r (brought up to conv's list first). The
 * rest of the body is serialized at the first request and kept while the
 * tools (by identity) and stream stay the same: conv's members other than
 * its list and the model must not change after the first request (the
 * loop sets them when it starts). 0, TG_ENOMEM, or what prov's request()
 * returns. */
int tg__reqtext_build(tg__reqtext *r, const tg__provider *prov,
                      const json_t *conv, const json_t *tools,
                      const char *model, int max_tokens, int stream, char **out,
                      size_t *out_len, tg_error *err);
/* The text of the items of `list` (borrowed: the conversation's) from
 * index `from` on, "item,item,..." (no brackets; empty when none), r
 * brought up to list first: what a request sends of them. *text is
 * borrowed from r (valid until r changes; not NUL-terminated). 0 or
 * TG_ENOMEM. */
int tg__reqtext_items(tg__reqtext *r, const json_t *list, size_t from,
                      const char **text, size_t *len);
/* Adds JSON text (borrowed; valid JSON: toolgate's rendering of results,
 * or a part of an answer read as JSON) to the conversation list `list`
 * without building it: an array's elements each as an item, anything else
 * as one item. Each item in the list is a placeholder (an empty object)
 * that only r knows the text of (kept without white space between
 * tokens): what requests and the journal send of it; the conversation
 * with the items themselves is tg__reqtext_resolved. r is brought up to
 * list first. 0, TG_ENOMEM, or TG_EINTERNAL when the text is not one
 * value (the items read before either stay added). */
int tg__reqtext_add(tg__reqtext *r, json_t *list, const char *text, size_t len,
                    tg_error *err);
/* A whole answer raw[0..len) that tg_turn_parse read as `turn`, added to
 * the conversation list without building it, when it can be (answer.c):
 * prov is Chat Completions and the turn knows where the message lies
 * (tg_turn_message_span). Then the message joins list as text
 * (tg__reqtext_add on r), *text is its content (malloc'd, "" when not a
 * string), *tokens what its usage counts (as tg__usage_update), and it
 * returns 1. 0 when the answer is to be read with jansson (nothing was
 * added), TG_ENOMEM. */
int tg__answer_fast(tg__reqtext *r, const tg__provider *prov, json_t *list,
                    const char *raw, size_t len, const tg_turn *turn,
                    char **text, long *tokens, tg_error *err);
/* conv (borrowed) with the placeholders of its list `list_key` replaced
 * by the items their text in r stands for (parsed now): a new ref,
 * sharing everything else with conv (conv itself, when it has none);
 * NULL on out of memory. For a transcript. */
json_t *tg__reqtext_resolved(const tg__reqtext *r, const json_t *conv,
                             const char *list_key);
/* Frees what r keeps and zeroes it. */
void tg__reqtext_cleanup(tg__reqtext *r);

/* ---------------------------------------------------------------- HTTP */

/* One HTTP exchange's outcome. */
typedef struct tg__http_reply {
    long status;   /* the HTTP status, 0 when none came */
    int curl_code; /* CURLcode of the transfer */
    char curl_msg[CURL_ERROR_SIZE];
    char *body; /* NUL-terminated, malloc'd (tg__http_reply_cleanup) */
    size_t len;
    long retry_after_ms; /* Retry-After / retry-after-ms, -1 when none */
    /* the providers' rate-limit headers, per kind (requests, tokens, input
     * tokens, output tokens): what remains and when it resets (ms from
     * now), -1 when not sent */
    long rl_remaining[4], rl_reset_ms[4];
    int data_failed; /* the data callback stopped the transfer */
} tg__http_reply;

/* Takes n bytes of a 2xx answer as they arrive; nonzero stops the
 * transfer. Called from inside curl: it must not call curl_multi_*. */
typedef int (*tg__http_data_fn)(void *ud, const char *data, size_t n);

/* The loop's HTTP state: a multi handle kept across requests (connections
 * are reused), the runtime stepped while a request is in flight, and the
 * cancel flag looked at every 100 ms at most. */
typedef struct tg__http {
    CURLM *multi;
    CURL *easy;
    tg_runtime *rt;        /* borrowed */
    atomic_int *cancel;    /* borrowed */
    long long deadline_ms; /* CLOCK_MONOTONIC ms the loop stops at, 0: none */
} tg__http;

/* The cancel flag's value once the deadline passed (1: tg_loop_cancel). */
#define TG__CANCEL_BUDGET 2

/* Caller-owned h: a multi and an easy handle (none without with_curl: a
 * loop with an in-process model only steps the runtime and waits). 0 or
 * TG_ENOMEM. */
int tg__http_init(tg__http *h, tg_runtime *rt, atomic_int *cancel,
                  int with_curl, tg_error *err);
void tg__http_cleanup(tg__http *h);
/* POSTs body[0..len) to url with headers (borrowed) and waits for the
 * whole answer (at most max_body bytes, else TG_ELIMIT), stepping the
 * runtime meanwhile. With on_data, the bytes of a 2xx answer go to it
 * instead (an event stream), unless its Content-Type is application/json
 * (a server that answered whole); other answers are kept in reply->body.
 * Returns 0 with *reply filled when an HTTP answer or a transport failure
 * (reply->status 0, curl_code set) came; TG_ECANCELED when the cancel flag was
 * raised (the transfer is abandoned); TG_ENOMEM. *reply is the caller's to
 * clean up in every case. */
int tg__http_post(tg__http *h, const char *url,
                  const struct curl_slist *headers, const char *body,
                  size_t len, long timeout_ms, size_t max_body,
                  tg__http_data_fn on_data, void *data_ud,
                  tg__http_reply *reply, tg_error *err);
void tg__http_reply_cleanup(tg__http_reply *r);
/* Waits ms milliseconds stepping the runtime. 0, or TG_ECANCELED as soon
 * as the cancel flag is raised. */
int tg__http_wait(tg__http *h, long ms);
/* Steps the runtime until no submitted turn is pending, waiting on its
 * descriptor; once the cancel flag is raised, every call is canceled (by
 * "user") and the turns still end with one result per call. Returns 1 when
 * it canceled, else 0. */
int tg__runtime_drain(tg__http *h);

/* ------------------------------------------------------------ streaming */

/* A streamed answer being read (stream.c). */
typedef struct tg__lsse tg__lsse;
typedef struct tg__lsse_ops {
    /* A piece of the answer's text (borrowed for the call). */
    void (*text)(void *ud, const char *text, size_t len);
    /* A call is complete: `turn` (one call, owned by the tg__lsse) is to
     * run now. 0, or a TG_E code with err filled that fails the stream. */
    int (*submit)(void *ud, tg_turn *turn, tg_error *err);
} tg__lsse_ops;

/* A reader for prov's event stream; ops copied. *out is the caller's
 * (tg__lsse_free, once every turn handed over has ended). */
int tg__lsse_new(const tg__provider *prov, const tg__lsse_ops *ops, void *ud,
                 tg__lsse **out, tg_error *err);
void tg__lsse_free(tg__lsse *x);
/* A tg__http_data_fn: the stream's bytes (ud is the tg__lsse). */
int tg__lsse_feed(void *ud, const char *data, size_t n);
/* The number of calls handed over so far. */
size_t tg__lsse_handed(const tg__lsse *x);
/* All the text so far (borrowed, valid until the next feed). */
const char *tg__lsse_text(const tg__lsse *x);
/* The tokens the stream's events reported so far. */
long tg__lsse_tokens(const tg__lsse *x);
/* What stream_event kept (borrowed, may be NULL). */
const json_t *tg__lsse_extra(const tg__lsse *x);
/* Why feeding failed (borrowed), or NULL. */
const tg_error *tg__lsse_error(const tg__lsse *x);
/* The one-call turn handed over for call `id` (borrowed), or NULL. */
tg_turn *tg__lsse_turn_for(const tg__lsse *x, const char *id);
/* Ends the stream: *out is the whole turn (the caller's, tg_turn_free),
 * its calls in the model's order; every call not handed over yet is
 * handed over now. The stream's error otherwise. */
int tg__lsse_finish(tg__lsse *x, tg_turn **out, tg_error *err);

/* --------------------------------------------------------------- usage */

/* The tokens of one answer so far (usage.c). */
typedef struct tg__usage {
    long input, output, total;
} tg__usage;

/* Takes what `obj` (a whole answer or one event of a stream, borrowed)
 * says of the tokens into u. */
void tg__usage_update(tg__usage *u, const json_t *obj);
/* The answer's tokens: its total, else input and output. */
long tg__usage_tokens(const tg__usage *u);

/* --------------------------------------------------------------- retry */

/* 1 when a request that ended so is worth sending again: HTTP 408, 429,
 * 500, 502, 503, 504, 529, or a transport failure that is not a bad URL,
 * an unknown host, a refused connection or TLS trouble; else 0. */
int tg__retry_worth(long status, int curl_code);
/* The delay before attempt `attempt` (2, 3, ...): the server's
 * retry_after_ms when it gave one (>= 0), else base_ms doubled per
 * attempt (capped at 60 s) with jitter: a value in [d/2, d] drawn from
 * `rnd`. */
long tg__retry_delay(int attempt, long base_ms, long retry_after_ms,
                     unsigned rnd);
/* Reads a Retry-After value (delta seconds or an HTTP date, against now
 * `now_s`) into milliseconds; -1 when unreadable. */
long tg__retry_after_parse(const char *value, long long now_s);
/* Reads a rate-limit header line (OpenAI's x-ratelimit-{remaining,reset}-
 * {requests,tokens}, reset a duration such as "1s", "6m0s" or "20ms";
 * Anthropic's anthropic-ratelimit-{requests,tokens,input-tokens,
 * output-tokens}-{remaining,reset}, reset an RFC 3339 time, against now
 * `now_s`) into r. 1 when it was one, else 0. */
int tg__ratelimit_header(tg__http_reply *r, const char *line, long long now_s);
/* How long the server asked to wait before a retry, in ms, -1 when it did
 * not say: Retry-After / retry-after-ms, else the rate-limit headers (the
 * latest reset of what is used up, else the soonest), else Gemini's
 * RetryInfo retryDelay in an error body. */
long tg__retry_server_ms(const tg__http_reply *r);
/* Resets the rate-limit fields of r (none sent). */
void tg__ratelimit_clear(tg__http_reply *r);

/* ------------------------------------------------------------- the loop */

/* A loop (toolgate_loop.h); loop.c runs it, journal.c records it, resume.c
 * rebuilds it from the journal. */
struct tg_loop {
    tg_runtime *rt; /* borrowed */
    const tg__provider *prov;
    char *base_url, *model, *api_key, *system, *url;
    tg_loop_options opt; /* strings point at the copies above or are NULL */
    char **stop_tools;
    tg_loop_events ev;
    void *ud;
    tg__http http;
    /* tg_loop_cancel's flag: set from any thread or a signal handler, so
     * an atomic that is lock-free (async-signal-safe), not a plain int */
    atomic_int cancel;
    char id[32];
    unsigned rnd;
    json_t *conv;  /* new ref: the provider's members of the conversation */
    json_t *tools; /* new ref: the definitions in the provider's shape */
    int started, iteration;
    long tool_calls;
    tg_loop_stop stop;
    char *answer;
    /* the turns running now: */
    size_t open_turns;
    int turn_failed, stop_tool_hit;
    int answer_came; /* the model answered this iteration's request */
    /* durability (journal.c): the runtime's loop store (borrowed: on its
     * journal connection), or NULL when the journal is off */
    tg_loop_store *store;
    int resumed; /* made by tg_loop_resume: the conversation is rebuilt */
    int pending; /* the answer of `iteration` awaits its calls' results */
    json_t *pending_answer; /* new ref: that answer's items */
    json_t *idempotent;     /* new ref: tool names run again when interrupted */
    char **skill_names;     /* the skills' names (nskills of them) */
    size_t nskills;
    long tokens;          /* the answers' tokens so far */
    long long started_ms; /* CLOCK_MONOTONIC ms of the start (or resume) */
    tg__reqtext req;      /* the conversation's text sent so far */
    /* the results step of iteration deferred_iteration, not written yet
     * (journal.c: it goes with the next step); malloc'd */
    char *deferred;
    int deferred_iteration;
};

/* The system prompt with the skills of `o` added (malloc'd, NULL when
 * there is neither), and their names in l->skill_names (skills.c).
 * TG_EINVAL for a skill without a name or text, or a name given twice. */
int tg__loop_skills(tg_loop *l, const tg_loop_options *o, char **system,
                    tg_error *err);
/* Sets l's skill names from a JSON array of strings (borrowed). */
int tg__loop_skill_names(tg_loop *l, const json_t *names, tg_error *err);

/* Records the loop's start in the runtime's journal (nothing when it is
 * off): its id, settings and prompt. 0 or a negative TG_E code. */
int tg__loop_journal_begin(tg_loop *l, const char *prompt, tg_error *err);
/* Records step `kind` of the current iteration: the conversation's items
 * from index `from` on (what the step added), and `extra` (borrowed, an
 * object whose members join the body; may be NULL). A "results" step is
 * kept and committed with the next step (or tg__loop_journal_flush,
 * tg__loop_journal_end). */
int tg__loop_journal_step(tg_loop *l, const char *kind, size_t from,
                          const json_t *extra, tg_error *err);
/* Writes the results step kept for the next step now (nothing when none
 * is kept). 0 or a negative TG_E code. */
int tg__loop_journal_flush(tg_loop *l, tg_error *err);
/* Records how the loop ended (when it has a store and stopped), with the
 * results step kept, if any. */
void tg__loop_journal_end(tg_loop *l);
/* The caller scope of iteration `iteration`'s calls: "<loop id>/<n>". */
void tg__loop_scope(const tg_loop *l, int iteration, char *buf, size_t n);
/* Submits one turn of the iteration (the calls in caller scope `scope`,
 * NULL: the iteration's); the calls start at the next flush. */
int tg__loop_submit(tg_loop *l, tg_turn *turn, const char *scope,
                    tg_error *err);
/* Waits for every submitted turn, adds the results of turns[0..n) (in the
 * model's order) to the conversation, records them, and decides whether
 * the loop stops (ncalls calls ran this iteration). */
int tg__loop_finish_calls(tg_loop *l, tg_turn *const *turns, size_t n,
                          size_t ncalls, tg_error *err);
/* The conversation conv (borrowed) as a transcript (toolgate_loop.h): its
 * members and the loop's; malloc'd JSON text, NULL on out of memory. */
char *tg__loop_transcript_json(const json_t *conv, const char *id,
                               const char *provider, const char *model,
                               int iterations, const char *stop, long tokens);
/* Runs the calls of a resumed loop's last answer, which the journal has no
 * results of: each answered from the journal when it ran (an interrupted
 * call as INTERRUPTED, unless its tool is idempotent: run again), run now
 * when it never started (resume.c). */
int tg__loop_run_pending(tg_loop *l, tg_error *err);

#endif
