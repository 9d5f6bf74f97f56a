/* SPDX-License-Identifier: MIT */
/*
 * toolgate_loop.h - the agent loop of toolgate: a model API client and a
 * runtime turned into a loop. Each iteration sends the conversation (system
 * prompt, user prompt, every assistant turn and its tool results) and the
 * runtime's tool definitions to the model, runs the calls of its answer
 * through the runtime (every call answered: errors, denials, unknown tools
 * and malformed arguments become results the model sees), and adds the
 * results to the conversation, until the model answers without calling a
 * tool or a limit stops it.
 *
 * The loop is a face over the runtime: it uses only toolgate.h, so a C
 * program can build the same. Model APIs: OpenAI Chat Completions (and
 * every server that speaks it), OpenAI Responses, Anthropic Messages,
 * Gemini generateContent, over libcurl. Requests that fail with 429, 500,
 * 502, 503, 529 or a dropped connection are retried with exponential
 * backoff and jitter (Retry-After honoured) within a budget of attempts and
 * time; another 4xx fails with the provider's message.
 *
 * Threads: a loop is used by one thread at a time (it drives its runtime,
 * which is then that runtime's loop thread: toolgate.h, "Threads"); its
 * events run on that thread. tg_loop_cancel may be called from any thread
 * and from a signal handler. Functions that can fail return 0 or a
 * negative TG_E code and fill the caller's tg_error (may be NULL).
 */
#ifndef TOOLGATE_LOOP_H
#define TOOLGATE_LOOP_H

#include "toolgate.h"
#pragma GCC visibility push(default)

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_loop tg_loop;

/* A skill: a prompt module (its text) the model gets in the system prompt
 * under its name. */
typedef struct tg_loop_skill {
    const char *name;
    const char *text;
} tg_loop_skill;

/* An in-process model (tg_loop_options.model_fn): a custom provider, a
 * local model linked into the program, a test's scripted model. Called on
 * the loop's thread, once per request, with the request's body: the JSON
 * text the loop would POST in the wire format of tg_loop_options.provider
 * (request[0..len), NUL-terminated; with "stream": true when the loop
 * streams). Sets *answer (malloc'd, the loop frees it) and *answer_len to
 * the provider's answer: a whole response as the API answers it (JSON),
 * or, streamed, the Server-Sent Events of a streamed answer (each call
 * starts once its event is read; a whole JSON answer is read as such too).
 * Returns 0, or a negative TG_E code with err filled: the request fails
 * for good (no retry) and so does the loop (TG_LOOP_FAILED; a journaled
 * loop can be resumed). */
typedef int (*tg_loop_model_fn)(void *ud, const char *request, size_t len,
                                char **answer, size_t *answer_len,
                                tg_error *err);

/* Options of tg_loop_new. Strings are copied by tg_loop_new; zeroes give
 * the defaults. */
typedef struct tg_loop_options {
    /* "openai" (Chat Completions: BASE/chat/completions), "openai-responses"
     * (BASE/responses), "anthropic" (BASE/v1/messages) or "gemini"
     * (BASE/v1beta/models/MODEL:generateContent). */
    const char *provider;
    /* e.g. "http://127.0.0.1:8080/v1" for openai; NULL with model_fn */
    const char *base_url;
    const char *model;
    /* The API key: sent in the provider's header (Authorization: Bearer,
     * x-api-key, x-goog-api-key), never logged, journaled or written to the
     * transcript. NULL or "": no key is sent (a local server). */
    const char *api_key;
    const char *system;            /* system prompt, NULL: none */
    int max_iterations;            /* model requests; 0: 20 */
    long max_tool_calls;           /* calls over the whole loop; 0: no limit */
    const char *const *stop_tools; /* a success of one of these stops */
    size_t nstop_tools;
    int max_tokens;          /* Anthropic's max_tokens; 0: 4096 */
    long request_timeout_ms; /* one HTTP request; 0: 600,000 */
    int max_attempts;        /* per request, retries included; 0: 5 */
    long retry_budget_ms;    /* time spent waiting to retry; 0: 120,000 */
    long retry_base_ms;      /* first backoff; 0: 500 (then doubled) */
    /* 1: ask for a streamed answer (Server-Sent Events): each tool starts
     * the moment its call is complete, while the model still writes, and
     * the text event gets the text as it comes. 0: whole answers. */
    int stream;
    /* Wall-clock budget of the loop from tg_loop_start (or a resume), in
     * ms; 0: none. When it runs out mid-iteration the request in flight is
     * abandoned and running calls end canceled (by "system"), each still
     * answered in the conversation. */
    long max_time_ms;
    /* Token budget: the tokens the model's answers report (input and
     * output, as each provider counts them); once an answer brings the
     * total to it, its calls run and the loop stops. 0: none. */
    long max_total_tokens;
    /* Skills: each added to the system prompt after `system`, under a
     * heading "## Skill: NAME"; every call of the loop carries their names
     * in its record's `skills` (journaled). Copied; names unique and not
     * empty (TG_EINVAL). A resumed loop keeps the journaled ones. */
    const tg_loop_skill *skills;
    size_t nskills;
    /* An in-process model instead of HTTP (NULL: HTTP to base_url, which
     * may then be NULL). The conversation, the journal and a resume are
     * the same as over HTTP, in the provider's format; the loop's record
     * says it ran in-process, and a resume needs a model_fn again. The
     * HTTP options (key, timeouts, retries) do not apply. */
    tg_loop_model_fn model_fn;
    void *model_ud; /* model_fn's first argument */
} tg_loop_options;

/* Why a loop stopped (tg_loop_stop_reason). */
typedef enum tg_loop_stop {
    TG_LOOP_RUNNING = 0,
    TG_LOOP_ANSWERED = 1,       /* the model answered without tool calls */
    TG_LOOP_MAX_ITERATIONS = 2, /* max_iterations requests were made */
    TG_LOOP_TOOL_BUDGET = 3,    /* max_tool_calls calls were made */
    TG_LOOP_STOP_TOOL = 4,      /* a tool of stop_tools succeeded */
    TG_LOOP_CANCELED = 5,       /* tg_loop_cancel */
    TG_LOOP_FAILED = 6,         /* a request failed for good (tg_error) */
    TG_LOOP_TIME_BUDGET = 7,    /* max_time_ms ran out */
    TG_LOOP_TOKEN_BUDGET = 8    /* max_total_tokens were spent */
} tg_loop_stop;

/* Static name of a stop reason ("answered", "max_iterations",
 * "tool_budget", "stop_tool", "canceled", "failed", "time_budget",
 * "token_budget", "running"). */
const char *tg_loop_stop_name(int stop);

/* What the loop reports, on the thread running it; any may be NULL. The
 * call, result and turn pointers are borrowed for the callback. */
typedef struct tg_loop_events {
    /* Text of the model's turn (text[0..len), not NUL-terminated): the
     * whole text of a whole answer, each piece of a streamed one. */
    void (*text)(void *ud, int iteration, const char *text, size_t len);
    void (*call_started)(void *ud, int iteration, const tg_call *call);
    void (*call_finished)(void *ud, int iteration, const tg_call *call,
                          const tg_result *result);
    /* Iteration `iteration` (1-based) ended: its calls have their results
     * and are in the conversation. */
    void (*iteration_done)(void *ud, int iteration, size_t ncalls);
    /* A request failed (`why`: "HTTP 429", "connection dropped: ...") and is
     * sent again, attempt `attempt` (2...), after delay_ms. */
    void (*retry)(void *ud, int attempt, long delay_ms, const char *why);
    /* The prompt factory: how the results of `turn` (every call has one)
     * enter the next request. Sets *out to JSON text in the provider's
     * wire format (`format`: "openai-chat", "openai-responses",
     * "anthropic", "gemini"): an array of messages/items that are appended
     * to the conversation, or one object appended as one message. *out is
     * allocated with malloc (the loop frees it). Returns 0, or a negative
     * TG_E code (err filled) that fails the loop. NULL: the runtime's
     * rendering (tg_turn_render), spooled outputs as their handles. */
    int (*results)(void *ud, const tg_turn *turn, const char *format,
                   char **out, tg_error *err);
} tg_loop_events;

/* A new loop over `rt` (borrowed: it must outlive the loop; the loop
 * drives it with tg_runtime_submit/step, so no other turn runs on it while
 * the loop runs). `events` is copied (NULL: none). TG_EINVAL naming a
 * missing or bad option (provider, base_url, model), TG_ENOMEM. *out is
 * the caller's (tg_loop_free). */
int tg_loop_new(tg_runtime *rt, const tg_loop_options *options,
                const tg_loop_events *events, void *ud, tg_loop **out,
                tg_error *err);
/* Frees the loop (the API key is wiped), not its runtime. NULL is a
 * no-op. */
void tg_loop_free(tg_loop *loop);

/* Durability: when the runtime's journal is on, the loop records itself
 * there (toolgate.h, "loops") - its settings and prompt, then per
 * iteration the model's answer before any of its calls' results, and the
 * results - and the journal keeps the calls of iteration N under the
 * caller scope "<loop id>/<N>". A loop killed at any point is resumed:
 *
 * A loop made again from the journal of `rt` where loop `loop_id` stopped:
 * one cut short (its process died), failed or canceled; a loop that ended
 * otherwise is not resumed (TG_EEXIST), nor one whose process still runs.
 * `options` (may be NULL) gives what is not journaled (the API key, retry
 * settings) and may change the rest; its NULL strings and zero limits are
 * the journaled ones. The conversation is rebuilt and the loop started:
 * step it, or tg_loop_run with a NULL prompt. When its last answer's calls
 * have no results yet, the first step runs them: a call that ran is
 * answered from the journal - one the dead process left running as an
 * error INTERRUPTED (execution "started"), unless its tool is idempotent
 * (the idempotentHint annotation of a configured tool or a trusted MCP
 * source), which is run again - and only calls that never started run
 * now: at most once. TG_EINVAL when the journal is off, TG_ENOTFOUND for
 * no such loop. *out is the caller's (tg_loop_free). */
int tg_loop_resume(tg_runtime *rt, const char *loop_id,
                   const tg_loop_options *options, const tg_loop_events *events,
                   void *ud, tg_loop **out, tg_error *err);
/* Loop `loop_id` of the journal at `journal_path` as tg_loop_transcript
 * gives it, rebuilt from the journal, "stop" its status there ("running"
 * while it runs or was cut short), plus "answer" and "steps" (each
 * {"iteration", "kind", "at"}). *out is the caller's (tg_free).
 * TG_ENOTFOUND for no such loop. */
int tg_loop_show(const char *journal_path, const char *loop_id, char **out,
                 tg_error *err);

/* Sets the user prompt (copied) and starts the conversation; once, before
 * the first step. TG_EINVAL when called twice. */
int tg_loop_start(tg_loop *loop, const char *prompt, tg_error *err);
/* Runs one iteration: one model request (retried as needed), then every
 * call of its answer through the runtime, their results added to the
 * conversation. Returns 1 when the loop goes on, 0 when it stopped
 * (tg_loop_stop_reason says why; a failure of the request is
 * TG_LOOP_FAILED and err is filled too), or a negative TG_E code when it
 * cannot go on (also TG_LOOP_FAILED). */
int tg_loop_step(tg_loop *loop, tg_error *err);
/* tg_loop_start (not for a resumed loop: prompt NULL) then tg_loop_step
 * until it stops. Returns 0 when the loop
 * stopped for any reason but a failure (look at tg_loop_stop_reason), else
 * the negative TG_E code (err filled). */
int tg_loop_run(tg_loop *loop, const char *prompt, tg_error *err);
/* Stops the loop as soon as it can: the request in flight is abandoned,
 * running calls end canceled (by "user"), the conversation keeps every
 * result. Async-signal-safe (it only sets a flag: the loop sees it within
 * 100 ms) and callable from any thread. */
void tg_loop_cancel(tg_loop *loop);

/* Why the loop stopped; TG_LOOP_RUNNING while it goes on. */
tg_loop_stop tg_loop_stop_reason(const tg_loop *loop);
/* The model's last text (its answer once the loop answered), "" when none;
 * borrowed until the next step or tg_loop_free. */
const char *tg_loop_answer(const tg_loop *loop);
/* The loop's id ("loop_" and 16 hex digits), borrowed while it lives. */
const char *tg_loop_id(const tg_loop *loop);
/* The number of iterations (model requests answered) so far. */
int tg_loop_iteration(const tg_loop *loop);
/* The number of tool calls run so far. */
long tg_loop_tool_calls(const tg_loop *loop);
/* The tokens the model's answers reported so far (0 when the provider
 * reports none). */
long tg_loop_tokens(const tg_loop *loop);
/* The conversation as JSON in the provider's format: {"loop_id",
 * "provider", "model", "iterations", "stop", "tokens", and the provider's own
 * members: "messages" (openai: the system prompt its first message;
 * anthropic: with "system"), "instructions" and "input"
 * (openai-responses), "systemInstruction" and "contents" (gemini)}. No
 * key or header is in it. Caller frees with tg_free; NULL on out of
 * memory. */
char *tg_loop_transcript(const tg_loop *loop);

#ifdef __cplusplus
}
#endif
#pragma GCC visibility pop
#endif /* TOOLGATE_LOOP_H */
