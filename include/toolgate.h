/* SPDX-License-Identifier: MIT */
/*
 * toolgate.h - the one public header of toolgate.
 *
 * toolgate parses the tool calls a language model emitted (in the wire format
 * of its provider), checks them, runs them concurrently under deadlines,
 * classifies every result into exactly one of five outcomes, records calls and
 * results in a SQLite journal, and renders the results back into the caller's
 * wire format.
 *
 * Conventions of this API:
 *   - Functions that can fail return 0 or a negative TG_E* code and fill the
 *     caller-provided tg_error (which may be NULL).
 *   - Handles are opaque. _new/_free pairs own heap objects; _free(NULL) is a
 *     no-op. Strings returned as `char *` are owned by the caller and released
 *     with tg_free(); `const char *` getters return borrowed pointers whose
 *     lifetime is stated on each function.
 *   - JSON crosses this API as UTF-8 text; no dependency's types appear here.
 *   - The contracts refer to files of the repository: docs/records.md (call
 *     and result records, outcomes), docs/formats.md (wire formats),
 *     docs/configuration.md (toolgate.json), docs/journal.md (the journal's
 *     tables), docs/design.md (the architecture), README.md.
 *
 * Threads (what the code does; nothing else is promised):
 *   - Any thread, at any time: tg_strerror, tg_err_name, tg_free,
 *     tg_terminal_text, tg_outcome_name, tg_outcome_from_name,
 *     tg_execution_name, tg_format_renders, tg_loop_stop_name (no state).
 *   - A runtime is driven by one thread at a time, called its loop thread:
 *     the thread that runs its turns (tg_runtime_run_turn, or
 *     tg_runtime_submit with tg_runtime_step / tg_runtime_flush). Every
 *     tg_runtime_* function but tg_runtime_cancel is called there, never
 *     by two threads at once; the thread may change between calls. One
 *     runtime cannot be driven by several threads at once; several
 *     runtimes, each on its own thread, run side by side (they share only
 *     libuv's process-wide thread pool).
 *   - tg_runtime_cancel may be called from any thread while the runtime
 *     lives (not during or after tg_runtime_free): it queues the request
 *     under a mutex and wakes the loop (uv_async_send). It allocates, so it
 *     is not async-signal-safe: for signals, tg_runtime_cancel_on_signal.
 *   - Callbacks of a runtime (tg_events, tg_turn_ops, the approver, the
 *     asker, the elicitation handler) run on its loop thread. In-process
 *     tool handlers run on libuv's thread pool (process-wide,
 *     UV_THREADPOOL_SIZE threads, 4 by default), several at once, calls of
 *     the same tool included: a handler and its user_data must allow that.
 *     TG_TOOL_INLINE handlers run on the loop thread. The tg_handler_*
 *     functions are called by the handler, on its thread, during the call.
 *   - tg_ask_answer, tg_elicit_answer and the tg_ask_* / tg_elicit_*
 *     getters: any thread, until the answer.
 *   - A configuration, a turn (with its calls and results), a stream, a
 *     task store and a loop store: one thread at a time. The getters of a
 *     call or result fill caches on first use (checksum, payload text,
 *     content), so two threads reading one at once race. While a turn runs
 *     or is submitted the runtime uses it: read it from the callbacks, and
 *     after tg_runtime_run_turn returns or `done` fired. tg_runtime_new
 *     copies the configuration, which may then change or be freed.
 *   - A compiled schema may be validated by several threads at once; a
 *     spool handle may be used by several threads at once.
 *   - The functions that take a journal's path rather than a handle
 *     (tg_journal_history, _show, _stats, _verify, tg_loop_show) open a
 *     connection of their own: any thread, at the same time too.
 *   - A loop (toolgate_loop.h): one thread at a time; tg_loop_cancel from
 *     any thread or a signal handler.
 *   - Process-wide effects: tg_runtime_run_turn blocks SIGPIPE in its
 *     thread while it runs (tg_runtime_step does not: the caller ignores
 *     it); a runtime with a stdio MCP source sets SIGPIPE to ignored when
 *     its disposition was the default; tg_runtime_cancel_on_signal watches
 *     the signal while turns run.
 */
#ifndef TOOLGATE_H
#define TOOLGATE_H

#include <stddef.h>
#include <stdint.h>
#pragma GCC visibility push(default)

#ifdef __cplusplus
extern "C" {
#endif

#define TOOLGATE_VERSION_MAJOR 0
#define TOOLGATE_VERSION_MINOR 1
#define TOOLGATE_VERSION_PATCH 0
#define TOOLGATE_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------ errors */

/* Every error code: X(NAME, value, description). Library functions return the
 * negative value; tg_strerror() and tg_err_name() are generated from it. */
#define TG_ERRNO_MAP(X)                                                        \
    X(TG_EINVAL, -1, "invalid argument")                                       \
    X(TG_ENOMEM, -2, "out of memory")                                          \
    X(TG_EPARSE, -3, "unreadable input")                                       \
    X(TG_EFORMAT, -4, "unsupported or unrecognised format")                    \
    X(TG_ECONFIG, -5, "invalid configuration")                                 \
    X(TG_EIO, -6, "input/output error")                                        \
    X(TG_EJOURNAL, -7, "journal failure")                                      \
    X(TG_ENOTFOUND, -8, "not found")                                           \
    X(TG_EEXIST, -9, "already exists")                                         \
    X(TG_ESCHEMA, -10, "invalid schema")                                       \
    X(TG_ESPAWN, -11, "cannot start process")                                  \
    X(TG_ECANCELED, -12, "canceled")                                           \
    X(TG_ELIMIT, -13, "limit exceeded")                                        \
    X(TG_EINTERNAL, -14, "internal error")                                     \
    X(TG_EPERM, -15, "permission denied")

enum tg_errno {
#define TG__ERRNO_ENUM(name, value, text) name = value,
    TG_ERRNO_MAP(TG__ERRNO_ENUM)
#undef TG__ERRNO_ENUM
        TG_OK = 0
};

/* A failure report filled by the library: the code, a message with context,
 * and, when the failure is about a place in some input, its location. */
typedef struct tg_error {
    int code;          /* 0 or a TG_E* value */
    char message[512]; /* human-readable, names file/line/column or key */
    char pointer[256]; /* JSON pointer of the bad input, "" when none */
    long line, column; /* 1-based position in the input, 0 when unknown */
} tg_error;

/* Static text describing `code` ("invalid argument"); never NULL. */
const char *tg_strerror(int code);
/* Static name of `code` ("TG_EINVAL"); "TG_EUNKNOWN" for unknown values. */
const char *tg_err_name(int code);
/* Releases memory the library handed to the caller (strings returned as
 * `char *`). NULL is a no-op. */
void tg_free(void *p);

/* The version of the library this program runs with ("0.1.0"), which may
 * differ from the TOOLGATE_VERSION_STRING it was compiled against (the same
 * SONAME: an older or newer 0.y.z). Static text; never NULL; any thread. */
const char *tg_version(void);
/* The runtime versions of toolgate and of the libraries it runs with, as one
 * JSON object: {"toolgate":"0.1.0","jansson":"2.14","libuv":"1.44.2",
 * "sqlite":"3.40.1","openssl":"3.0.17","pcre2":"10.42","libcurl":"7.88.1",
 * "libmicrohttpd":"0.9.75"}
 * (each from the library's own version function, not from the headers it
 * was built with). *out is the caller's, released with tg_free(). Returns 0
 * or TG_EINVAL (out NULL) or TG_ENOMEM. Any thread. */
int tg_versions_json(char **out, tg_error *err);

/* ----------------------------------------------------------- terminal text */

/* Flags of tg_terminal_text. */
#define TG_TERMINAL_KEEP_LINES 1u /* newlines and tabs pass as they are */
#define TG_TERMINAL_JSON 2u       /* the text is JSON: escapes are JSON's */

/* text[0..len) made safe to print on a terminal, for anything a caller or a
 * tool supplied (ids, tool names, paths, reasons, a tool's output): C0
 * controls become \n, \r, \t or \xNN (ESC is \x1b), DEL \x7f, the C1
 * controls U+0080-U+009F and the bidirectional controls U+202A-U+202E and
 * U+2066-U+2069 \uXXXX, a byte that is not valid UTF-8 \xNN; the rest
 * (printable text, valid UTF-8) stays as it is. TG_TERMINAL_KEEP_LINES
 * keeps newlines and tabs. TG_TERMINAL_JSON takes JSON text and gives the
 * same JSON value: DEL, C1 and the bidirectional controls as JSON \u
 * escapes, invalid bytes as \ufffd. Returns a new NUL-terminated string
 * the caller frees with tg_free(), or NULL on out of memory. Thread-safe. */
char *tg_terminal_text(const char *text, size_t len, unsigned flags);

/* ---------------------------------------------------------------- outcomes */

/* The five outcomes of a tool call. Values are fixed (stable ABI, stored in
 * the journal); a value read from outside that is not listed counts as
 * TG_OUTCOME_ERROR. */
typedef enum tg_outcome {
    TG_OUTCOME_SUCCESS = 0,
    TG_OUTCOME_ERROR = 1,
    TG_OUTCOME_CANCELED = 2,
    TG_OUTCOME_TIMEOUT = 3,
    TG_OUTCOME_DENIED = 4
} tg_outcome;

/* How far a call got: refused before running, ran without ending cleanly
 * (side effects may have happened), or ran to its end. */
typedef enum tg_execution {
    TG_EXECUTION_NOT_STARTED = 0,
    TG_EXECUTION_STARTED = 1,
    TG_EXECUTION_FINISHED = 2
} tg_execution;

/* Static name of an outcome ("success", ...); unknown values give "error". */
const char *tg_outcome_name(int outcome);
/* Parses an outcome name; returns TG_OUTCOME_ERROR for unknown names. */
tg_outcome tg_outcome_from_name(const char *name);
/* Static name of an execution state ("not_started", "started", "finished"). */
const char *tg_execution_name(int execution);

/* ------------------------------------------------------------ call records */

typedef struct tg_call tg_call;
typedef struct tg_result tg_result;

/* Borrowed getters of a call; pointers stay valid while the call (or the turn
 * that owns it) lives. */
const char *tg_call_id(const tg_call *call);   /* as the wire carried it */
const char *tg_call_tool(const tg_call *call); /* the tool's name */
/* The arguments as JSON text of an object, or NULL when they did not decode
 * to an object. When the wire carried them as a string this is that string
 * as it came (valid JSON, not serialised again: white space and escapes as
 * the model wrote them; a blank string gives "{}"); when it carried an
 * object, its compact JSON. Valid while the call lives. */
const char *tg_call_args_json(const tg_call *call);
/* The arguments as the wire carried them when that was a string, else NULL. */
const char *tg_call_args_raw(const tg_call *call);
/* The call's checksum ("sha256:<hex>" or "hmac-sha256:<hex>"), computed on
 * first use; NULL when the arguments are malformed. */
const char *tg_call_checksum(const tg_call *call);
/* The caller id (tg_turn_set_caller, a call record's "caller_id"), NULL
 * when none. */
const char *tg_call_caller_id(const tg_call *call);
/* The wire format the call came in (static string: "openai-chat", ...). */
const char *tg_call_format(const tg_call *call);
/* The call's 0-based position in its turn. */
size_t tg_call_index(const tg_call *call);
/* The whole call record as JSON text (docs/records.md); caller frees with
 * tg_free. NULL on out of memory. */
char *tg_call_to_json(const tg_call *call);

/* Borrowed getters of a result; valid while the result (or its turn) lives. */
const char *tg_result_id(const tg_result *result);   /* its call's id */
const char *tg_result_tool(const tg_result *result); /* its call's tool */
tg_outcome tg_result_outcome(const tg_result *result);
tg_execution tg_result_execution(const tg_result *result);
/* 1 when the outcome is success, else 0. */
int tg_result_succeeded(const tg_result *result);
/* 1 for every outcome but success. */
int tg_result_is_error(const tg_result *result);
/* The payload as compact JSON text (the conventions of docs/records.md),
 * made on first use; NULL on out of memory. */
const char *tg_result_payload_json(const tg_result *result);
/* The payload when the outcome is success, else NULL. */
const char *tg_result_data_json(const tg_result *result);
/* The error message of an error outcome (or the reason of denied/canceled,
 * the budget of a timeout, as text), NULL on success. */
const char *tg_result_error_message(const tg_result *result);
/* The error code ("UNKNOWN_TOOL", ...) of an error outcome, else NULL. */
const char *tg_result_error_code(const tg_result *result);
/* How long the tool ran, in milliseconds, as the monotonic clock measured
 * it (nanosecond resolution); 0 when it never ran. JSON texts (records,
 * history, statistics) give it rounded to the microsecond. */
double tg_result_duration_ms(const tg_result *result);
/* The exit status of a command tool, or -1 when there is none. */
int tg_result_exit_status(const tg_result *result);
/* 1 when the result was returned from the journal instead of running. */
int tg_result_replayed(const tg_result *result);
/* The whole result record as JSON text (its decisions included, its
 * duration_ms in milliseconds to the microsecond); caller frees with
 * tg_free. NULL on out of memory, or when the record has no JSON form (an
 * id or tool that is not UTF-8, a duration that is not a number). */
char *tg_result_to_json(const tg_result *result);

/* ------------------------------------------- structured and media results */

/* 1 when the result is a success whose payload is the JSON its tool
 * declared with an output_schema, checked against that schema (the payload
 * is then an object: MCP's structuredContent); else 0. The check is
 * recorded in the result's decisions ("output_schema": "valid"), so a
 * result read back from the journal (replayed) says the same. */
int tg_result_structured(const tg_result *result);
/* The MCP content blocks of the result as compact JSON text (an array),
 * borrowed until the result is freed; NULL when it has none. A tool with
 * "output": "mcp-content" has them on success (the payload is then
 * {"content": the same array}). Not thread-safe on first use (a cache). */
const char *tg_result_content_json(const tg_result *result);

/* ----------------------------------------------------------------- formats */

/* Wire format names (docs/formats.md): "openai-chat", "openai-responses",
 * "anthropic", "gemini", "mcp" and "toolgate" are read and rendered;
 * "fenced" (tool calls in an assistant's fenced code blocks) is read only,
 * when named (auto never picks it). "auto" detects the format by shape.
 * Each of the first four is also read as a streamed (Server-Sent Events)
 * turn, with tg_turn_parse or tg_stream_*. */

/* 1 when `name` is a format results can be rendered in, else 0. Lets a caller
 * refuse a bad output format before any tool runs. */
int tg_format_renders(const char *name);

/* A model turn: the calls parsed from one document and, once run, one result
 * per call in call order. */
typedef struct tg_turn tg_turn;

/* Parses `len` bytes of `text` in wire format `format` ("auto" or NULL to
 * detect). `source_name` names the input in error messages ("-" for stdin).
 * On success *out holds a new turn the caller frees with tg_turn_free().
 * Unreadable input fails with TG_EPARSE (line/column filled); an unknown
 * shape with TG_EFORMAT; input past a limit (an event stream's line or
 * event over 64 MiB) with TG_ELIMIT. A call whose id or tool name is over
 * its limit (256 bytes) does not fail the parse: it ends MALFORMED_CALL. Bad
 * arguments of one call do not fail the parse: that call carries a pre-run
 * error and ends with an error result. */
int tg_turn_parse(const char *text, size_t len, const char *format,
                  const char *source_name, tg_turn **out, tg_error *err);
/* Frees the turn, its calls and results. NULL is a no-op. Not while the
 * runtime runs it (after tg_runtime_run_turn returned, or in `done`). */
void tg_turn_free(tg_turn *turn);
/* The detected or given format of the turn (static string). */
const char *tg_turn_format(const tg_turn *turn);
/* Where the model's message lies in the text tg_turn_parse read, so a
 * caller that keeps the message (an agent loop adding it to its
 * conversation) needs no parse of its own: text[*off, *off + *len) is
 * the JSON object of the message. Known for a whole OpenAI Chat
 * Completions response (choices[0].message) with tool calls of the plain
 * shape nearly every response has; then the whole text was read as valid
 * JSON, every string valid UTF-8 without U+0000, and the message holds no
 * duplicate key on the path read (its tool_calls). Returns 1 with *off
 * and *len set, else 0 (other formats and shapes, streamed turns, turns
 * not made by tg_turn_parse). */
int tg_turn_message_span(const tg_turn *turn, size_t *off, size_t *len);
/* What reading the turn ignored, one message per thing, for the caller to
 * show (the CLI prints each on stderr): of a streamed turn, events after
 * the end of the stream ("N events after the end of the stream (data:
 * [DONE] on line L) were ignored, ..."), and pieces for a call that came
 * after it was complete ("call ID was complete when N more pieces for it
 * arrived (B bytes of arguments, ...): ignored, ..."). Whole documents
 * give none. The count, and the i-th message (borrowed, valid while the
 * turn lives; NULL when out of range): printable ASCII, a call id from the
 * input shown with its other bytes as '?' and cut at 68 bytes. */
size_t tg_turn_warning_count(const tg_turn *turn);
const char *tg_turn_warning(const tg_turn *turn, size_t i);
size_t tg_turn_call_count(const tg_turn *turn);
/* The i-th call (borrowed, valid while the turn lives); NULL when out of range.
 */
const tg_call *tg_turn_call(const tg_turn *turn, size_t i);
/* The result of the i-th call, or NULL when it has not ended yet. */
const tg_result *tg_turn_result(const tg_turn *turn, size_t i);
/* Makes every call of the turn that has no result end canceled, by `by`
 * ("user", "policy" or "system") with `reason` (copied), without running,
 * when the turn is run: its result is journaled and rendered like any other.
 * The repair for a conversation with dangling calls (--cancel-unanswered).
 * TG_EINVAL for another `by`. */
int tg_turn_cancel_all(tg_turn *turn, const char *by, const char *reason,
                       tg_error *err);
/* Sets the caller id of every call that has none (copied). TG_EINVAL for
 * an id over its limit (256 bytes), TG_ENOMEM. */
int tg_turn_set_caller(tg_turn *turn, const char *caller_id, tg_error *err);
/* Sets the skills of every call that has none: the names (copied) of the
 * prompt modules the model had when it made the turn (the turn-level
 * attribution of the call record, `skills`, journaled with the call).
 * TG_EINVAL for a NULL or empty name. */
int tg_turn_set_skills(tg_turn *turn, const char *const *names, size_t n,
                       tg_error *err);
/* Renders the turn's results in `format` (NULL: the turn's own format). Every
 * call must have a result. On success *out is new text the caller frees with
 * tg_free(), *out_len its length. */
int tg_turn_render(const tg_turn *turn, const char *format, char **out,
                   size_t *out_len, tg_error *err);

/* --------------------------------------------------------------- streaming */

/* An incremental reader of a streamed model turn: the Server-Sent Events
 * transcript of OpenAI Chat Completions (chat.completion.chunk deltas joined
 * by tool call index), the OpenAI Responses API (response.* events),
 * Anthropic Messages (content_block_* events) or Gemini
 * streamGenerateContent (?alt=sse). Bytes go in as they arrive, in any
 * chunking; the pieces of several calls may come in any order, each joining
 * its own call (by tool call index, output_index or block index). Each call
 * comes out the moment it is complete, so a tool can start before the model
 * has finished its turn, and a call that came out never changes: pieces
 * for it that arrive later are ignored and reported (tg_turn_warning). The
 * end of the stream is the end: what follows it is ignored and reported.
 * The same bytes give the same calls whatever the chunking, taken as they
 * come or not. One thread at a time. */
typedef struct tg_stream tg_stream;

/* A new stream reader for `format`: "auto" (or NULL: the provider is told
 * from the first event that names it), "openai-chat", "openai-responses",
 * "anthropic" or "gemini". Fails with TG_EFORMAT for another name. */
int tg_stream_new(const char *format, tg_stream **out, tg_error *err);
/* Sets the most bytes one event's data, and one call's arguments, may hold
 * (0: the default, 64 MiB): an event over it fails the stream (TG_ELIMIT),
 * a call whose arguments pass it ends with ARGUMENTS_TOO_LARGE. Call before
 * the first feed. Returns 0, or TG_EINVAL (err filled) for a NULL stream
 * or once bytes were fed. */
int tg_stream_set_max_event_bytes(tg_stream *s, size_t max_bytes,
                                  tg_error *err);
/* Reads len bytes of the stream. Returns 0, or an error that ends the
 * stream (every later feed and finish returns it): TG_EPARSE for an event
 * whose data is not one JSON object - the data of several events joined
 * because the blank lines between them are missing too, the message names
 * the line (the input's last event cut short is not one: it is dropped) -
 * TG_EFORMAT for an event of another provider than the one named or first
 * seen, or of the provider's kind but a bad shape (tool_calls that is not
 * an array, a tool call that is not an object, a partial_json or an
 * arguments delta that is not a string), TG_ELIMIT for an event over the
 * cap, TG_ENOMEM. After the end of the stream (data: [DONE] in any
 * stream, message_stop, response.completed / .failed / .incomplete;
 * Gemini's stream has none) feeding goes on without error, but nothing is
 * read: the events are only counted (tg_stream_ignored_events) and kept a
 * few bytes each, so nothing that follows can fail the stream. */
int tg_stream_feed(tg_stream *s, const char *bytes, size_t len, tg_error *err);
/* 1 once the stream's end event was read (see tg_stream_feed), else 0: a
 * caller may stop feeding and finish. */
int tg_stream_ended(const tg_stream *s);
/* How many events were fed after the end and ignored so far (a [DONE] or
 * a keep-alive not counted); tg_stream_finish reports them in a warning of
 * the turn. */
size_t tg_stream_ignored_events(const tg_stream *s);
/* The next complete call (in the order they completed), or NULL when none
 * is waiting. A call completes at content_block_stop or message_stop
 * (Anthropic), response.function_call_arguments.done,
 * response.output_item.done or response.completed (Responses), on arrival
 * (Gemini), and in Chat Completions, which has no event that ends one call,
 * at a finish_reason, data: [DONE], its index taken by a call with another
 * id - or early: once it has an id and a name and its arguments close as
 * exactly one JSON object, as soon as the stream moves on (a piece for
 * another index, or an event with no piece). Bytes after a closed object
 * can only be white space or make it malformed, never another valid
 * value, so the call is the one the model meant. A call that came out
 * never changes (but its index: tg_stream_finish puts the calls in the
 * model's order): pieces for it that arrive later are ignored - white space
 * silently, anything else (a model writing on, a server going back to the
 * call, a delta after its block stopped) reported in a warning of the turn
 * naming the call and the bytes (tg_turn_warning), where the whole
 * response would have made the call MALFORMED_ARGUMENTS. A call that cannot
 * run (no name, arguments that are not an object, an id a call handed out
 * before had) still comes out, carrying the error it will end with. The
 * pointer is borrowed: valid until tg_stream_free, or, once
 * tg_stream_finish handed the calls to a turn, while that turn lives. */
const tg_call *tg_stream_next_call(tg_stream *s);
/* The provider's format name ("anthropic", ...), static; NULL while "auto"
 * has not seen an event that tells. */
const char *tg_stream_format(const tg_stream *s);
/* Ends the stream (the input ended: a last event without its closing blank
 * line is read). A call the stream never said was complete is complete when
 * its arguments close as one JSON value, else it was cut: the error
 * MALFORMED_ARGUMENTS "the stream ended inside the arguments of call ID (N
 * bytes received)". On success *out is a new turn, freed with
 * tg_turn_free(), holding every call in the order the model wrote them (by
 * index; calls without one last), whatever order they completed in, so
 * results render in that order; of calls sharing an id that were not
 * handed out, the first written runs and the others are DUPLICATE_CALL_ID;
 * its warnings (tg_turn_warning) say what was ignored. The turn's format
 * is the provider's whole-document format, so tg_turn_render answers in
 * it. Fails with the stream's error; with TG_EFORMAT when "auto" saw no
 * event of a known provider, or when the stream gave no call and is not an
 * answer either - it carried an error (an overloaded server, a failed
 * response), or neither text nor a stop (finish_reason, stop_reason,
 * finishReason, an end event) arrived: nothing but lifecycle or unknown
 * events, or cut before the model said anything; or with TG_EINVAL when
 * called twice. A stream with text and no call is an answer: a turn
 * without calls. */
int tg_stream_finish(tg_stream *s, tg_turn **out, tg_error *err);
/* Frees the reader (and the calls it did not hand to a turn). NULL: no-op. */
void tg_stream_free(tg_stream *s);

/* ----------------------------------------------------------- configuration */

typedef struct tg_config tg_config;

/* A configuration holding the embedded defaults (docs/configuration.md),
 * its workspace the current directory. NULL on out of memory (or when the
 * current directory is gone). The caller's: tg_config_free. */
tg_config *tg_config_new(void);
/* Frees the configuration. NULL is a no-op. A runtime made from it keeps
 * its own copy. */
void tg_config_free(tg_config *cfg);
/* Loads toolgate.json text over the current settings. Relative paths are
 * resolved against `base_dir` (NULL: the current directory). Fails with
 * TG_ECONFIG naming the key. */
int tg_config_load(tg_config *cfg, const char *text, size_t len,
                   const char *base_dir, tg_error *err);
/* Reads and loads a configuration file (at most 16 MiB); relative paths in
 * it are resolved against its directory. TG_ECONFIG naming the file when
 * it cannot be read, else as tg_config_load. */
int tg_config_load_file(tg_config *cfg, const char *path, tg_error *err);
/* Setters for the command line's overrides. Each returns 0, or a negative
 * code with err (may be NULL) filled and the configuration unchanged;
 * paths are copied, made absolute against the current directory.
 * TG_EINVAL for a NULL cfg. */
/* The default deadline of a call, 1 to 86,400,000 ms (else TG_EINVAL). */
int tg_config_set_timeout_ms(tg_config *cfg, int64_t ms, tg_error *err);
/* How many calls run at once, 1 to 1,024 (else TG_EINVAL). */
int tg_config_set_parallel(tg_config *cfg, int n, tg_error *err);
/* The journal's file; NULL turns the journal off. TG_EINVAL for "", or the
 * code of the failure to make the path absolute. */
int tg_config_set_journal(tg_config *cfg, const char *path, tg_error *err);
/* The workspace: an existing directory (its real path is kept); the
 * journal and spool still at their defaults move with it. TG_ECONFIG
 * naming the directory and why, TG_ENOMEM. */
int tg_config_set_workspace(tg_config *cfg, const char *dir, tg_error *err);
/* The directory calls run in (NULL: the workspace): an existing directory,
 * as for tg_config_set_workspace. */
int tg_config_set_cwd(tg_config *cfg, const char *dir, tg_error *err);
/* Reads an HMAC key file (at most 64 KiB; a trailing newline is not part of
 * the key); checksums become hmac-sha256. TG_ECONFIG naming the file when
 * it cannot be read or is empty, TG_ENOMEM. */
int tg_config_set_hmac_key_file(tg_config *cfg, const char *path,
                                tg_error *err);
/* The HMAC key read by tg_config_set_hmac_key_file (borrowed, valid while
 * cfg lives and until the next call that sets it) and its length in *len;
 * NULL and 0 when there is none. For tg_journal_verify. */
const unsigned char *tg_config_hmac_key(const tg_config *cfg, size_t *len);
/* The journal path in force (borrowed, valid while cfg lives), NULL when off.
 */
const char *tg_config_journal(const tg_config *cfg);

/* ------------------------------------------------------------ JSON Schema */

/* Drafts of JSON Schema. A schema's `$schema` decides; the option applies
 * to schemas without one. */
typedef enum tg_schema_draft {
    TG_SCHEMA_DRAFT_2020_12 = 0, /* the default */
    TG_SCHEMA_DRAFT_2019_09 = 1,
    TG_SCHEMA_DRAFT_7 = 2
} tg_schema_draft;

/* Where `$ref`s to absolute URLs are read from: a URL starting with
 * `prefix` is read from `dir` plus the rest of the URL. Nothing is ever
 * fetched from the network; other absolute URLs fail to resolve. */
typedef struct tg_schema_remote {
    const char *prefix; /* e.g. "http://localhost:1234/" */
    const char *dir;    /* e.g. "tests/remotes" */
} tg_schema_remote;

typedef struct tg_schema_options {
    tg_schema_draft draft; /* for schemas without $schema */
    int format_assert;     /* 1: `format` is asserted, not an annotation */
    const tg_schema_remote *remotes; /* borrowed during compile; may be NULL */
    size_t nremotes;
} tg_schema_options;

typedef struct tg_schema tg_schema;

/* Compiles the JSON Schema in text[0..len) (options may be NULL: 2020-12,
 * format as annotation, no remotes). Fails with TG_EPARSE when the text is
 * not JSON (err names line and column), TG_ESCHEMA when it is not a valid
 * schema (err->pointer is the JSON pointer of the bad keyword, the message
 * says why), TG_ENOTFOUND when a $ref cannot be resolved. *out is the
 * caller's: free with tg_schema_free. The metaschemas of drafts 2020-12,
 * 2019-09 and 7 and the vocabulary metaschemas of 2020-12 and 2019-09 are
 * built in: a $ref to one resolves with no remotes (a remote of the same
 * URL is used instead). */
int tg_schema_compile(const char *text, size_t len,
                      const tg_schema_options *options, tg_schema **out,
                      tg_error *err);
/* Validates the JSON instance in text[0..len). Returns 1 when valid, 0 when
 * invalid, a TG_E* code when it cannot tell (TG_EPARSE: not JSON; TG_ELIMIT:
 * a regular expression hit its match limit, nesting went too deep, or the
 * validation needed more than 10,000,000 steps (keyword evaluations; it
 * takes polynomial time in the schema and the instance, whatever their
 * shape); TG_ENOMEM). When violations is not NULL and the instance is invalid,
 * *violations is JSON Lines, one {"path","keyword","message"} per violation
 * ("path" a JSON pointer into the instance), owned by the caller (tg_free);
 * else it is set to NULL. */
int tg_schema_validate(const tg_schema *schema, const char *text, size_t len,
                       char **violations, tg_error *err);
/* Frees a compiled schema (not while another thread validates with it).
 * NULL is a no-op. */
void tg_schema_free(tg_schema *schema);

/* ----------------------------------------------------------------- runtime */

typedef struct tg_runtime tg_runtime;

/* The context an in-process handler runs with. Valid only during the call. */
typedef struct tg_handler_ctx tg_handler_ctx;

/* An in-process tool. Receives the arguments as JSON text (an object). It
 * reports output with tg_handler_write() (text, streamed as chunks) or
 * tg_handler_set_json() (a JSON result), and returns 0; or reports failure
 * with tg_handler_fail() and returns -1. Runs on a worker thread unless the
 * tool was registered with TG_TOOL_INLINE. */
typedef int (*tg_handler_fn)(tg_handler_ctx *ctx, const char *args_json,
                             size_t args_len, void *user_data);

/* The tg_handler_* functions are called by the handler during its call, on
 * its thread; each returns 0 or a negative code with err (may be NULL)
 * filled, TG_EINVAL for a NULL ctx. */
/* Appends text output (copied). TG_ELIMIT past the output cap
 * (limits.max_output_bytes: what fits is kept, and the call ends
 * OUTPUT_LIMIT), TG_ENOMEM. */
int tg_handler_write(tg_handler_ctx *ctx, const char *data, size_t len,
                     tg_error *err);
/* Sets the result to a JSON value given as text (copied, validated as
 * jansson would: duplicate keys and U+0000 are refused). TG_EINVAL with
 * the line and column of what is not JSON (the result stays unset),
 * TG_ENOMEM. */
int tg_handler_set_json(tg_handler_ctx *ctx, const char *json, size_t len,
                        tg_error *err);
/* Records a failure: `code` UPPER_SNAKE (NULL or another form:
 * "TOOL_FAILED"), `message` (copied, may be NULL). TG_ENOMEM. */
int tg_handler_fail(tg_handler_ctx *ctx, const char *code, const char *message,
                    tg_error *err);
/* Refuses the call: it ends `denied` ({"denied":{"tool","reason"}}, execution
 * not_started) instead of running. For a tool that finds, before doing
 * anything, that the call is not allowed (a path leading outside the
 * workspace). `reason` is copied. The handler returns -1 after it.
 * TG_ENOMEM. */
int tg_handler_deny(tg_handler_ctx *ctx, const char *reason, tg_error *err);
/* 1 once the call was canceled or its deadline passed; handlers that loop
 * should poll it and return. An atomic read: any thread. */
int tg_handler_canceled(const tg_handler_ctx *ctx);
/* The call being run (borrowed, valid during the handler). */
const tg_call *tg_handler_call(const tg_handler_ctx *ctx);
/* The directory the call runs in (borrowed). */
const char *tg_handler_cwd(const tg_handler_ctx *ctx);
/* The workspace root (borrowed). */
const char *tg_handler_workspace(const tg_handler_ctx *ctx);
/* toolgate's own files and directories inside the workspace (the journal's
 * directory, the spool, the workspace's .toolgate, the configuration file):
 * absolute real paths, NULL-ended, never NULL (borrowed, valid during the
 * handler). The built-in file tools refuse every path that resolves into
 * one of them (compared by device and inode, so "x/../.toolgate" and
 * symlinks do not pass); an in-process tool that touches files should
 * refuse them too, with tg_handler_deny(). */
const char *const *tg_handler_state_paths(const tg_handler_ctx *ctx);

/* Registration flags of in-process tools. */
enum {
    TG_TOOL_INLINE = 1 /* non-blocking handler: run on the loop thread */
};

/* Events of the runtime, delivered on the loop thread. Any may be NULL. The
 * call and result pointers are borrowed for the duration of the callback. */
typedef struct tg_events {
    void (*accepted)(void *ud, const tg_call *call);
    void (*started)(void *ud, const tg_call *call);
    /* stream: 1 stdout, 2 stderr, 3 progress an MCP server reported for a
     * call to one of its tools (notifications/progress): one line
     * "progress P[/T][: MESSAGE]\n", P and T its numbers as sent. */
    void (*output)(void *ud, const tg_call *call, int stream, const char *data,
                   size_t len);
    void (*finished)(void *ud, const tg_call *call, const tg_result *result);
} tg_events;

/* A runtime built from `cfg` (copied; cfg may be freed afterwards): its tools,
 * limits, journal (opened and recovered here) and event loop. *out is the
 * caller's (tg_runtime_free); on failure it is NULL and err says what
 * could not be made (the journal, a tool, the loop), e.g. TG_EJOURNAL,
 * TG_ENOMEM. */
int tg_runtime_new(const tg_config *cfg, tg_runtime **out, tg_error *err);
/* Cancels what still runs (submitted turns too: their calls end canceled
 * by "system" and every `done` fires before it returns), waits for it,
 * closes the journal, frees. NULL is a no-op. On the loop thread, not from
 * a callback, with no tg_runtime_cancel running on another thread. */
void tg_runtime_free(tg_runtime *rt);
/* Registers an in-process tool. `schema_json` is its input JSON Schema (NULL:
 * any object). Fails with TG_EEXIST when the name is taken. */
int tg_runtime_register(tg_runtime *rt, const char *name,
                        const char *description, const char *schema_json,
                        tg_handler_fn fn, void *user_data, unsigned flags,
                        tg_error *err);
/* Sets the event callbacks (copied; NULL: none) and their user data.
 * Loop thread, between turns. */
void tg_runtime_set_events(tg_runtime *rt, const tg_events *events, void *ud);
/* With approve set, every call the policy answers `ask` runs (as an operator
 * saying yes would let it); otherwise such a call ends `denied` with a
 * reason saying approval was needed and how to grant it. Off by default.
 * Between turns. */
void tg_runtime_set_approve(tg_runtime *rt, int approve);
/* An operator's answer to a policy `ask`. */
typedef enum tg_approval {
    TG_APPROVAL_NO = 0,    /* the call ends denied */
    TG_APPROVAL_YES = 1,   /* this call; the same tool and arguments (same
                              checksum) are not asked again by this runtime */
    TG_APPROVAL_ALWAYS = 2 /* every call of this tool, for the runtime's life */
} tg_approval;
/* Asks an operator about `call` (borrowed, valid during the call); `reason`
 * is the deciding rule's. Runs on the thread of tg_runtime_run_turn before
 * any call of the turn starts, so it may block on a terminal. */
typedef tg_approval (*tg_approve_fn)(void *ud, const tg_call *call,
                                     const char *reason);
/* Sets the approver consulted for each `ask` not already answered (by
 * --approve or an earlier approval); NULL removes it. Without one, such a
 * call ends `denied` with a reason saying how to grant it. */
void tg_runtime_set_approver(tg_runtime *rt, tg_approve_fn fn, void *ud);
/* A policy `ask` put to a person asynchronously (an MCP client's user,
 * a chat, a web page): made by the runtime, handed to the asker, freed by
 * tg_ask_answer. */
typedef struct tg_ask tg_ask;
/* Called on the loop thread (the thread of tg_runtime_run_turn) for each
 * `ask` not already answered (by tg_runtime_set_approve, by an earlier YES
 * for the same tool and arguments, or by an ALWAYS for the tool). `call`
 * (valid during the callback; its id stays in tg_ask_call_id) is what is
 * asked about, `reason` the deciding rule's (borrowed for the callback).
 * The callback must not block: it sends the question and returns. The call
 * then waits for tg_ask_answer holding no parallel slot, while the other
 * calls of the turn are checked, started and finished. The asker owns
 * `ask` from now on and must answer it exactly once, also when the call
 * ended meanwhile (canceled: by id, by cancel-all, by a cancel signal, by
 * the turn failing) or the runtime was freed: the answer is what frees it. */
typedef void (*tg_ask_fn)(void *ud, tg_ask *ask, const tg_call *call,
                          const char *reason);
/* Sets the asynchronous asker; NULL removes it. While one is set it is asked
 * instead of the synchronous approver (tg_runtime_set_approver). Loop
 * thread only, between turns. */
void tg_runtime_set_ask(tg_runtime *rt, tg_ask_fn fn, void *ud);
/* Answers `ask`, from any thread (the answer is queued to the loop, like
 * tg_runtime_cancel): YES runs the call and approves the same tool with the
 * same arguments (same checksum) for the runtime's life, ALWAYS every call
 * of the tool, NO ends it `denied` ("approval needed (<reason>) and the
 * answer was no: <detail>", or without a detail "... and the operator said
 * no"). `detail` (copied, may be NULL; cut at 1,024 bytes, invalid UTF-8
 * replaced) names who answered and how ("approved by the MCP client's
 * user", "the MCP client cannot ask its user") and goes into the result's
 * decisions.policy.detail. The checks after the policy (command
 * templates) run once the answer is in; then the call starts or queues.
 * Returns 0: the ask is freed (never touch it again). When the call ended
 * before the answer arrived, or the runtime was freed, the answer is
 * accepted and ignored. TG_EINVAL (answer not a tg_approval, ask NULL) and
 * TG_ENOMEM (copying `detail`) leave the ask unanswered and the caller's;
 * err (may be NULL) says which. */
int tg_ask_answer(tg_ask *ask, tg_approval answer, const char *detail,
                  tg_error *err);
/* The id of the call `ask` is about: the ask's own copy, valid until
 * tg_ask_answer, from any thread. */
const char *tg_ask_call_id(const tg_ask *ask);
/* An elicitation: a tool source asks its user for input while it runs a
 * call - an MCP server's elicitation/create request (2025-06-18,
 * 2025-11-25), or under 2026-07-28 an elicitation/create among the
 * inputRequests of the call's InputRequiredResult. Made by the runtime,
 * handed to the elicitation handler, freed by tg_elicit_answer. */
typedef struct tg_elicit tg_elicit;
/* Called on the loop thread for each elicitation a source raised while
 * running a call (the call is still running: it waits for the answer,
 * holding its slot and its deadline). The callback must not block: it
 * puts the question to someone and returns. The handler owns `el` from
 * now on and must answer it exactly once (tg_elicit_answer), also when the
 * call ended meanwhile (its deadline, a cancel, the server went away) or
 * the runtime was freed: the answer is what frees it. An elicitation the
 * runtime cannot relate to one call (README.md, "MCP servers as tool
 * sources") is declined without the handler. */
typedef void (*tg_elicit_fn)(void *ud, tg_elicit *el);
/* Sets the elicitation handler; NULL removes it. Without one every
 * elicitation is declined (and recorded so in the call's decisions).
 * Loop thread only, between turns. */
void tg_runtime_set_elicit(tg_runtime *rt, tg_elicit_fn fn, void *ud);
/* How the user answered an elicitation (an MCP ElicitResult's action). */
typedef enum tg_elicit_action {
    TG_ELICIT_ACCEPT = 0, /* with content: the requested values */
    TG_ELICIT_DECLINE = 1,
    TG_ELICIT_CANCEL = 2
} tg_elicit_action;
/* Answers `el`, from any thread (the answer is queued to the loop, like
 * tg_ask_answer, and goes to the source there). ACCEPT takes
 * `content_json`, the JSON text of an object; for a form elicitation it is
 * checked against the requestedSchema first (NULL: {}); the other actions
 * ignore it. `detail` (copied, may be NULL; cut at 1,024 bytes) says who
 * answered and how, for the call's decisions.elicitation (the content
 * itself is never recorded: it may be a secret). Returns 0: el is freed
 * (never touch it again); when the call ended before the answer arrived,
 * or the runtime was freed, the answer is accepted and ignored. TG_EINVAL
 * (el NULL, an action out of range, content that is not a JSON object or
 * does not match the requestedSchema: err says where), TG_ENOMEM: el stays
 * unanswered and the caller's (answer it again, e.g. DECLINE). err may be
 * NULL. */
int tg_elicit_answer(tg_elicit *el, tg_elicit_action action,
                     const char *content_json, const char *detail,
                     tg_error *err);
/* What `el` asks, each the elicitation's own copy, valid until
 * tg_elicit_answer, readable from any thread:
 *   call_id  the id of the call that raised it;
 *   source   the name of the tool source (the MCP server's entry);
 *   mode     "form" or "url" (a version without modes: "form");
 *   message  the server's message to the user ("" when none);
 *   schema   the requestedSchema's JSON text (a form), or NULL;
 *   params   the request's whole params as JSON text, without its _meta
 *            (what a gateway forwards: url and elicitationId too). */
const char *tg_elicit_call_id(const tg_elicit *el);
const char *tg_elicit_source(const tg_elicit *el);
const char *tg_elicit_mode(const tg_elicit *el);
const char *tg_elicit_message(const tg_elicit *el);
const char *tg_elicit_schema(const tg_elicit *el);
const char *tg_elicit_params(const tg_elicit *el);
/* Runs every call of `turn` (concurrently, up to the parallel limit) until
 * each has a result; returns 0 then, whatever the outcomes. Fails only when
 * the runtime itself fails (TG_EJOURNAL, TG_ENOMEM): calls without a result
 * then have none. */
int tg_runtime_run_turn(tg_runtime *rt, tg_turn *turn, tg_error *err);
/* Cancels running or queued calls: the one with `call_id`, or every call when
 * call_id is NULL; the calls end with outcome canceled, by `by` ("user",
 * "policy", "system"; NULL: "user") with `reason` (NULL: "canceled"), all
 * copied. Any thread (see Threads; not from a signal handler). A cancel
 * while no turn runs is dropped, not kept for the next turn. Returns 0,
 * or TG_EINVAL (rt NULL) or TG_ENOMEM with err (may be NULL) filled. */
int tg_runtime_cancel(tg_runtime *rt, const char *call_id, const char *by,
                      const char *reason, tg_error *err);
/* While tg_runtime_run_turn runs, delivery of signal `signum` (e.g. SIGINT)
 * cancels every running and queued call (outcome canceled, by "user") instead
 * of its default action; the turn still ends with one result per call. A
 * second delivery during the same turn skips the kill grace period.
 * TG_EINVAL for a signal that cannot be caught, TG_ELIMIT past 8 signals. */
int tg_runtime_cancel_on_signal(tg_runtime *rt, int signum, tg_error *err);
/* ------------------------------------------------- a long-lived runtime */

/* A runtime that serves: turns submitted one after another (an MCP
 * server's tools/call requests, each a turn of one call, from many
 * clients) run side by side, each reporting to callbacks of its own, while
 * the caller's event loop drives the runtime's (tg_runtime_fd,
 * tg_runtime_timeout, tg_runtime_step). Everything below is called on one
 * thread, the loop thread, except tg_runtime_cancel (any thread). */

/* What one submitted turn reports, each on the loop thread, from inside
 * tg_runtime_step (or tg_runtime_free); any may be NULL. The call and
 * result pointers are borrowed for the callback; the turn's results stay
 * in the turn. `finished` comes once the result is durable (journaled).
 * `done` comes exactly once, last: status 0 when every call of the turn
 * has its result, else the failure that ended it (TG_EJOURNAL, TG_ENOMEM:
 * calls without a result then have none). After `done` the runtime no
 * longer touches the turn: the callback may free it. The runtime-wide
 * events (tg_runtime_set_events) fire as well. */
typedef struct tg_turn_ops {
    void (*started)(void *ud, const tg_call *call);
    /* stream: 1 stdout, 2 stderr, 3 progress an MCP server reported for a
     * call to one of its tools (notifications/progress): one line
     * "progress P[/T][: MESSAGE]\n", P and T its numbers as sent. */
    void (*output)(void *ud, const tg_call *call, int stream, const char *data,
                   size_t len);
    void (*finished)(void *ud, const tg_call *call, const tg_result *result);
    void (*done)(void *ud, tg_turn *turn, int status, const tg_error *err);
} tg_turn_ops;

/* A turn of one call made from its parts, for a caller that receives calls
 * one at a time: `id` (copied; the journal keys calls by it, and a call
 * whose id and checksum it already holds is answered from it, so make it
 * unique per call), the tool's name, the arguments as JSON text (NULL or
 * empty: {}) and the wire format the call came in (a format name, for the
 * record: "mcp", "openai-chat", ...). Arguments that are not one JSON
 * object, an id or a name over its limit, do not fail: the call carries a
 * pre-run error and ends with an error result, as tg_turn_parse would
 * make it. *out is the caller's (tg_turn_free). TG_EINVAL for a NULL id or
 * tool or an unknown format, TG_ENOMEM. */
int tg_turn_new_call(const char *format, const char *id, const char *tool,
                     const char *args_json, size_t args_len, tg_turn **out,
                     tg_error *err);

/* Submits `turn` (borrowed until ops->done) to run beside the turns
 * already submitted: its calls are journaled, checked and started, up to
 * the runtime's parallel limit shared by every turn, during the next
 * tg_runtime_step (calls submitted before one step are journaled in one
 * transaction). `ops` is copied. Returns 0, TG_EINVAL while
 * tg_runtime_run_turn runs on this runtime or for a turn already
 * submitted, or the failure that broke the runtime (TG_EJOURNAL once the
 * journal failed). Loop thread only. */
int tg_runtime_submit(tg_runtime *rt, tg_turn *turn, const tg_turn_ops *ops,
                      void *ud, tg_error *err);
/* The number of submitted turns that have not reported `done`. Loop
 * thread. */
size_t tg_runtime_pending(const tg_runtime *rt);
/* A descriptor that becomes readable when the runtime has work (a tool's
 * output, a process that exited, a thread-pool job that ended, a cancel):
 * poll it for reading with the caller's own loop, and call tg_runtime_step
 * when it is ready or when tg_runtime_timeout has passed. Owned by the
 * runtime; valid until tg_runtime_free. */
int tg_runtime_fd(const tg_runtime *rt);
/* How long the caller's loop may wait before the next tg_runtime_step, in
 * milliseconds: 0 to step now, -1 for as long as tg_runtime_fd stays
 * quiet. */
int tg_runtime_timeout(const tg_runtime *rt);
/* Does whatever the runtime can do now without blocking: journals and
 * checks the turns submitted since the last step, starts calls, reads
 * output, ends what ended, and commits results; the callbacks fire from
 * here. Returns the number of submitted turns still pending. The caller
 * ignores or blocks SIGPIPE (writing a tool's stdin after the tool exited
 * raises it; tg_runtime_run_turn blocks it itself, a step does not, to
 * stay cheap). */
size_t tg_runtime_step(tg_runtime *rt);
/* The part of tg_runtime_step that needs no look at tg_runtime_fd: journals
 * and checks the turns submitted since the last step, starts their calls,
 * and commits the results that are already there (an inline handler's);
 * their callbacks fire from here. For a caller whose own loop polls
 * tg_runtime_fd, right after it submitted: it saves the system call that
 * a step spends asking the descriptor, which the caller's loop asks
 * anyway. Returns the number of submitted turns still pending. */
size_t tg_runtime_flush(tg_runtime *rt);

/* Which rule of the runtime's policy decides `call`, and why: one JSON
 * object {"id","tool","decision","rule" (-1: the default),"reason",
 * "explanation" (each rule's conditions as checked, top to bottom),
 * "known_tool"} in *out, the caller's (tg_free). A call the policy cannot
 * judge is a deny, as in the pipeline. */
int tg_runtime_policy_check(tg_runtime *rt, const tg_call *call, char **out,
                            tg_error *err);
/* The path of the journal the runtime records its calls in (borrowed,
 * valid while rt lives), NULL when the journal is off. */
const char *tg_runtime_journal(const tg_runtime *rt);
/* The directory of the spool the runtime keeps its artifacts in (borrowed,
 * valid while rt lives), NULL when the spool is off. Any thread. */
const char *tg_runtime_spool_dir(const tg_runtime *rt);
/* The configuration's serve.task_after_ms: how long an MCP server over rt
 * (toolgate_serve.h) lets a tools/call that may become a task run before
 * it does (1000 unless configured). Any thread. */
int64_t tg_runtime_serve_task_after_ms(const tg_runtime *rt);
/* The tool definitions in `format`'s shape (NULL: "mcp"; docs/formats.md)
 * as JSON text in *out, the caller's (tg_free). TG_EFORMAT for a format
 * without tool definitions ("fenced", an unknown name), TG_ENOMEM. */
int tg_runtime_tools(tg_runtime *rt, const char *format, char **out,
                     tg_error *err);
/* The same, for what `caller` may see: a tool the runtime's policy denies
 * to that caller whatever the arguments is left out (one it asks about, or
 * denies only for some arguments, stays). A server lists tools with it, so
 * a client is not offered what it can never run. Caller frees *out. */
int tg_runtime_tools_for(tg_runtime *rt, const char *format, const char *caller,
                         char **out, tg_error *err);
/* A number that changes whenever the runtime's tools change (a tool
 * registered; an MCP source's tools listed, re-listed, held, accepted or
 * removed): a caller that keeps lists of tg_runtime_tools compares it to
 * know when to make them again. */
unsigned long tg_runtime_tools_generation(const tg_runtime *rt);

/* ------------------------------------------------------ MCP servers */
/* MCP servers behind the runtime ("tool sources"): their tools register as
 * <source><separator><tool> (separator "__" by default) and every call to
 * them goes through the gate like any other (README.md, "MCP servers as
 * tool sources"). All of these run on the thread that runs the runtime's turns,
 * between turns (not from inside a callback). */

/* Adds a source to a live runtime. entry_json is one "tools" entry of
 * toolgate.json that is a source: {"name": "fs", "mcp": {"command": [...]}}
 * or {"name": "docs", "mcp": {"url": "https://...", ...}}. An "eager"
 * source starts now; a lazy one at the first turn naming its prefix.
 * Returns 0; TG_ECONFIG naming the bad member (or a token_env that is not
 * set), TG_EEXIST when a source of that name is there, TG_ENOMEM. */
int tg_runtime_add_source(tg_runtime *rt, const char *entry_json,
                          tg_error *err);
/* Removes source `name`: its tools leave the registry (later calls to them
 * are unknown tools), its session closes (calls in flight end error
 * INTERRUPTED), its server's process group is ended. TG_ENOTFOUND when
 * there is no such source. */
int tg_runtime_remove_source(tg_runtime *rt, const char *name, tg_error *err);
/* The sources as one JSON array in *json_out (the caller's, tg_free): each
 * {"name", "transport" ("stdio"|"http"), "state" ("idle", "starting",
 * "ready", "failed", "closed", "removed"), "protocol" (the negotiated
 * version, absent before the first connection), "server" (its
 * serverInfo), "error" (why it failed, when it did), "prefix", "trusted",
 * "pin", "starts", "sandbox"? (how a stdio server runs), "tools": [{"name",
 * "remote", "state" ("enabled"|"held"|"disabled"), "reason"?, "flags"?
 * (what sanitizing found: [{"pointer", "found", "stripped", "key"}]),
 * "pin"? ("pinned", "new", "changed", "renamed": the served definition
 * against the pin; absent with pinning off), "checksum"? (the served
 * definition's)}], "definitions": the tool definitions as the server sent
 * them}. */
int tg_runtime_sources(tg_runtime *rt, char **json_out, tg_error *err);
/* Starts every source that is not running and runs the runtime's loop
 * until each is ready or failed, or timeout_ms passed (0: only the
 * sources' own connect deadlines bound it). Returns 0 (look at
 * tg_runtime_sources for each one's state), TG_EINVAL while turns run. */
int tg_runtime_sources_wait(tg_runtime *rt, int64_t timeout_ms, tg_error *err);
/* Accepts what an MCP server serves now for `tool` (its prefixed name,
 * "fs__write_file") where its pin holds it: a changed definition, a
 * rename, a new tool under strict pinning. *diff_out (the caller's,
 * tg_free) is the line diff of the pinned and the served definitions
 * ("- " pinned, "+ " served). With apply 0 nothing changes (a look); else
 * the served definition becomes the pin (in the journal, or for the
 * runtime's life when the journal is off) and the tool is enabled. The
 * source is started and waited for when it is not ready. TG_ENOTFOUND when
 * no source serves such a tool or nothing waits for it. */
int tg_runtime_source_accept(tg_runtime *rt, const char *tool, int apply,
                             char **diff_out, tg_error *err);

/* ----------------------------------------------------------------- journal */

/* A query over the journal, newest first. NULL/0 fields do not filter. */
typedef struct tg_history_query {
    const char *tool;
    const char *outcome;
    const char *caller;
    const char *since; /* RFC 3339 or Unix seconds/milliseconds */
    int limit;         /* 0: 20 */
} tg_history_query;

/* The journal's results matching `q` as a JSON array of result records (each
 * with its call under "call"); caller frees *out. */
int tg_journal_history(const char *journal_path, const tg_history_query *q,
                       char **out, tg_error *err);
/* One call and its matched result as a JSON object {"call":…,"result":…};
 * TG_ENOTFOUND when there is no such id. Caller frees *out. */
int tg_journal_show(const char *journal_path, const char *call_id, char **out,
                    tg_error *err);
/* Per-tool statistics of the results matching `q` (its limit is ignored) as
 * a JSON array sorted by tool: {"tool", "calls", "outcomes": {"success",
 * "error", "canceled", "timeout", "denied"}, "replayed", "duration_ms":
 * {"p50", "p95", "max"} or null}. Durations are nearest-rank percentiles
 * over the calls that ran (replayed results are counted, not timed), in
 * milliseconds to the microsecond, as in the records. Caller frees *out. */
int tg_journal_stats(const char *journal_path, const tg_history_query *q,
                     char **out, tg_error *err);

/* Checks the journal's hash chain: every result row carries a link,
 * HMAC-SHA-256 (with hmac_key) or SHA-256 (hmac_key NULL) of the link before
 * it and of every column of the row and of its call's row. *out (caller
 * frees) is a JSON object: {"ok": true, "journal", "rows", "first_seq",
 * "last_seq", "head" (the last link, hex), "mac" and "key_id" (what the
 * newest rows were chained with: "sha256" and "", or "hmac-sha256" and the
 * key's id), "pruned" (rows
 * retention deleted), "before_chain" (rows older than the chain)}, or the
 * first bad row: {"ok": false, "problem": "changed" | "removed" |
 * "inserted" | "unverifiable", "seq", "call_rowid", "id", "tool",
 * "message", "rows_verified", "journal"}. Returns 0 when the check ran,
 * whatever it found; TG_ENOTFOUND when there is no journal at the path
 * (nothing is created), TG_EJOURNAL when it cannot be read. Opening it
 * migrates an older journal and recovers calls left running, as any
 * command does. */
int tg_journal_verify(const char *journal_path, const unsigned char *hmac_key,
                      size_t hmac_key_len, char **out, tg_error *err);

/* A turn of one call and its result made again from their journal record
 * (`record`: len bytes of JSON {"call": …, "result": …}, what
 * tg_journal_show gives; "result" null: the call has none yet), in wire
 * format `format`, so that a journaled result renders again as the live
 * one did (an MCP task's answer after a restart). *out is the caller's
 * (tg_turn_free). TG_EINVAL for an unknown format, TG_EPARSE naming the
 * bad member, TG_ENOMEM. */
int tg_turn_from_record(const char *format, const char *record, size_t len,
                        tg_turn **out, tg_error *err);

/* ------------------------------------------------------------------- tasks */

/* Durable tasks: a call a client started and comes back for by an id it
 * was given (an MCP server's long calls), kept in a table of the journal's
 * file beside the calls, so that a task and its answer outlive the process
 * that ran it. The store does not run anything: the caller submits the
 * call, records the task, and ends it with its answer. A store is one
 * connection of its own to the file; one thread at a time. */
typedef struct tg_task_store tg_task_store;

/* Opens the task store of the journal at `journal_path` (created when
 * absent, and recovered like the runtime's journal: calls left running by
 * a dead process get their INTERRUPTED result); NULL: a store in memory
 * that lasts as long as the handle. *out is the caller's
 * (tg_task_store_free). TG_EJOURNAL naming the file. */
int tg_task_store_open(const char *journal_path, tg_task_store **out,
                       tg_error *err);
/* Closes and frees the store. NULL is a no-op. */
void tg_task_store_free(tg_task_store *ts);
/* Records task `task_id` (1 to 128 bytes; make it unguessable: it is the
 * only key a client holds) of `caller` on the call with id `call_id`:
 * status "working", owned by this process, expiring `ttl_ms` after now
 * (negative: never); `meta_json` (NULL, or a JSON object) is kept with it
 * for the caller. Committed when it returns. TG_EEXIST for an id taken,
 * TG_EINVAL for a missing or bad argument. */
int tg_task_create(tg_task_store *ts, const char *task_id, const char *caller,
                   const char *call_id, int64_t ttl_ms, const char *meta_json,
                   tg_error *err);
/* Ends task `task_id` while it is working, once: its `status` (any name
 * but "working"; the caller's vocabulary), a status message (may be NULL)
 * and its answer (JSON text, may be NULL). Committed when it returns.
 * TG_EEXIST when it is not working (ended before - the first end wins -
 * expired or unknown). */
int tg_task_finish(tg_task_store *ts, const char *task_id, const char *status,
                   const char *message, const char *answer_json, tg_error *err);
/* Task `task_id` of `caller` as one JSON object {"taskId", "callId",
 * "caller", "status", "statusMessage", "createdAt", "updatedAt" (epoch
 * ms), "ttlMs" (null: none), "meta", "answer" (null until ended),
 * "ownerAlive" (while working: whether the process that recorded it still
 * runs), "call" (while working: the call's journal record as
 * tg_journal_show gives it, null when the journal has no row for it yet;
 * else null)} in *out, the caller's (tg_free). Expired tasks are deleted
 * first. TG_ENOTFOUND when there is no such task of that caller (another
 * caller's task is as unknown as one that never was). */
int tg_task_get(tg_task_store *ts, const char *task_id, const char *caller,
                char **out, tg_error *err);
/* The tasks of `caller` in the order they were recorded, after task
 * `after` (NULL: from the first), at most `limit` (0: 100; at most 1,000)
 * as a JSON array of the objects tg_task_get gives, without "call", in
 * *out, the caller's. TG_ENOTFOUND when `after` is not a task of the
 * caller (any more). */
int tg_task_list(tg_task_store *ts, const char *caller, const char *after,
                 size_t limit, char **out, tg_error *err);

/* ------------------------------------------------------------------- loops */

/* Durable agent loops (toolgate_loop.h): each loop's start (its settings
 * and prompt) and every step of it (the model's answer of an iteration,
 * the results that went back, the end), kept in tables of the journal's
 * file beside the calls the loop ran, so a loop killed at any point is
 * resumed from its last durable step and read back by `toolgate history
 * --loop`. A store is one connection of its own to the file; one thread
 * at a time. */
typedef struct tg_loop_store tg_loop_store;

/* Opens the loop store of the journal at `journal_path` (created when
 * absent, recovered like the runtime's journal). *out is the caller's
 * (tg_loop_store_free). TG_EINVAL for a NULL path, TG_EJOURNAL naming the
 * file. */
int tg_loop_store_open(const char *journal_path, tg_loop_store **out,
                       tg_error *err);
/* Closes and frees the store. NULL is a no-op. */
void tg_loop_store_free(tg_loop_store *ls);
/* The loop store on the runtime's own journal connection, so that a loop's
 * steps and the calls it runs are written by one connection (each commit
 * of a second connection makes the other read its pages again): in *out,
 * borrowed (the runtime's: never tg_loop_store_free it; valid while rt
 * lives), made at the first call; *out is NULL when the journal is off.
 * Same thread as the runtime. */
int tg_runtime_loop_store(tg_runtime *rt, tg_loop_store **out, tg_error *err);
/* Records loop `loop_id` (1 to 128 bytes) as running, owned by this
 * process, with `meta_json` (a JSON object: what resuming it needs).
 * Committed when it returns. TG_EEXIST for an id taken, TG_EINVAL for a
 * missing or bad argument. */
int tg_loop_store_begin(tg_loop_store *ls, const char *loop_id,
                        const char *meta_json, tg_error *err);
/* Takes loop `loop_id` over for this process (a resume): it becomes
 * running again, owned by this process. A loop is taken over when it is
 * "running" and the process that owned it died, or when it ended "failed"
 * or "canceled". TG_ENOTFOUND for no such loop, TG_EEXIST while the
 * process that owns it still runs, or when it ended otherwise. */
int tg_loop_store_adopt(tg_loop_store *ls, const char *loop_id, tg_error *err);
/* Records step `kind` ("answer", "results", ...: the loop's vocabulary) of
 * iteration `iteration` (>= 1) of the loop, `body_json` (JSON text),
 * committed when it returns. TG_EEXIST when that iteration has that step
 * already, TG_ENOTFOUND for no such loop. */
int tg_loop_store_step(tg_loop_store *ls, const char *loop_id, int iteration,
                       const char *kind, const char *body_json, tg_error *err);
/* One step for tg_loop_store_steps (strings borrowed). */
typedef struct tg_loop_step_rec {
    int iteration;
    const char *kind;
    const char *body_json;
} tg_loop_step_rec;
/* Records steps[0..n) of the loop, in order, as tg_loop_store_step does
 * each, in one transaction: all committed when it returns, or none
 * (TG_EEXIST, TG_ENOTFOUND, TG_EINVAL as there). n 0: nothing. */
int tg_loop_store_steps(tg_loop_store *ls, const char *loop_id,
                        const tg_loop_step_rec *steps, size_t n, tg_error *err);
/* Ends the loop with `status` (the stop reason's name, not "running") and
 * its answer (may be NULL). Committed when it returns. */
int tg_loop_store_end(tg_loop_store *ls, const char *loop_id,
                      const char *status, const char *answer, tg_error *err);
/* Loop `loop_id` as one JSON object {"loop_id", "status" ("running", or
 * how it stopped), "answer", "created_at", "updated_at" (epoch ms),
 * "iterations" (the highest iteration with a step), "meta", "owner_alive"
 * (while running: whether the process that runs it is alive), "steps":
 * [{"iteration", "kind", "at", "body"}, ...] in the order recorded} in
 * *out, the caller's (tg_free). TG_ENOTFOUND when there is no such loop. */
int tg_loop_store_get(tg_loop_store *ls, const char *loop_id, char **out,
                      tg_error *err);
/* The newest loops, at most `limit` (0: 20), as a JSON array of the
 * objects tg_loop_store_get gives without "steps", in *out, the
 * caller's. */
int tg_loop_store_list(tg_loop_store *ls, size_t limit, char **out,
                       tg_error *err);

/* --------------------------------------------------------------- artifacts */

/* The spool: the store of artifacts, tool outputs too large to paste into a
 * prompt (spool.dir in toolgate.json). Artifact ids are "art_" followed by
 * 24 lowercase hex digits (the start of the SHA-256 of the bytes). A spool
 * handle may be shared by threads. */
typedef struct tg_spool tg_spool;

/* tg_spool_open flags. */
#define TG_SPOOL_NO_CREATE 1u /* a missing directory is an empty spool */

/* The spool directory in force (spool.dir, absolute; borrowed, valid while
 * cfg lives); NULL when the spool is off ("spool": null). */
const char *tg_config_spool_dir(const tg_config *cfg);
/* Opens the spool in `dir` (created 0700 unless TG_SPOOL_NO_CREATE). *out
 * is the caller's (tg_spool_free). TG_EIO when it cannot be opened. */
int tg_spool_open(const char *dir, unsigned flags, tg_spool **out,
                  tg_error *err);
/* Closes and frees the spool. NULL is a no-op. */
void tg_spool_free(tg_spool *sp);

/* Stores everything read from file descriptor `fd` (to its end) as an
 * artifact, streamed through the spool's writer: bounded memory, SHA-256,
 * line count, text or binary, committed atomically; the same bytes are
 * stored once. *out is the artifact as a JSON object {"id","bytes","lines",
 * "sha256","media_type","preview"}, the caller's. TG_EIO when reading fd
 * or writing the spool fails (nothing is left behind). */
int tg_artifact_store(tg_spool *sp, int fd, char **out, tg_error *err);

/* Every reader below fails with TG_EINVAL for a malformed id and with
 * TG_ENOTFOUND for an id that is not stored; the message tells an unknown
 * id from an evicted one (removed to keep the spool under spool.max_bytes,
 * or with its journal rows). */

/* The artifacts the spool knows, newest first, as a JSON array of {"id",
 * "bytes","lines","sha256","media_type","created_at","last_used_at","pins",
 * "state"} ("stored", "evicted" or "released"). Caller frees *out. */
int tg_artifact_list(tg_spool *sp, char **out, tg_error *err);
/* One artifact as a JSON object {"id","bytes","lines","sha256",
 * "media_type","preview","created_at","last_used_at","pins"}. Caller frees
 * *out. */
int tg_artifact_stat(tg_spool *sp, const char *id, char **out, tg_error *err);
/* The raw bytes [offset, offset + length) of an artifact (length capped at
 * 16 MiB; fewer at the end, none past it) in *out (NUL-terminated, *out_len
 * bytes, the caller's). */
int tg_artifact_read(tg_spool *sp, const char *id, uint64_t offset,
                     size_t length, char **out, size_t *out_len, tg_error *err);
/* The first `lines` lines (at most 16 MiB of text) in *out, the caller's. */
int tg_artifact_head(tg_spool *sp, const char *id, uint64_t lines, char **out,
                     size_t *out_len, tg_error *err);
/* The last `lines` lines (at most 16 MiB), read backwards from the end. */
int tg_artifact_tail(tg_spool *sp, const char *id, uint64_t lines, char **out,
                     size_t *out_len, tg_error *err);

/* Options of tg_artifact_grep; zeroes give the defaults. */
typedef struct tg_artifact_grep_options {
    int max_matches; /* 0: 100 */
    int before;      /* context lines before each match */
    int after;       /* context lines after each match */
    int ignore_case;
    int count_only; /* count every matching line, list none */
} tg_artifact_grep_options;

/* The lines of an artifact matching the PCRE2 `pattern`, as a JSON object
 * {"artifact","pattern","matches":[{"line","offset","text","before",
 * "after"}],"count","truncated"} (with count_only: {"artifact","pattern",
 * "count"}). TG_EINVAL for an invalid pattern (PCRE2's message and offset),
 * TG_ELIMIT when the pattern hits the PCRE2 match limit on some line.
 * Caller frees *out. */
int tg_artifact_grep(tg_spool *sp, const char *id, const char *pattern,
                     const tg_artifact_grep_options *options, char **out,
                     tg_error *err);

/* ----------------------------------------------------------------- sandbox */

/* Command tools and `shell` run in a sandbox (README.md, "Sandbox"):
 * bubblewrap where it works (the file system read-only but the workspace, a
 * private /tmp, no network unless a tool says "network": true, a PID
 * namespace killed as a whole), with resource limits and an allowlisted
 * environment; where bubblewrap cannot run, the limits and the allowlist
 * only. */

/* What the embedder should tell its operator once, or NULL: today, that the
 * sandbox is not in force (bubblewrap cannot run here, in sandbox.mode
 * "auto"), or that the number of processes cannot be limited (root on an
 * old kernel). One or more lines without a trailing newline; borrowed,
 * valid while rt lives. The library prints nothing itself. */
const char *tg_runtime_warning(const tg_runtime *rt);
/* What protection subprocesses run under (`toolgate doctor`): bubblewrap
 * found and working (its version) or why not, user namespaces, network
 * isolation, the process limit, the rlimits, the environment allowlist and
 * the variables withheld as secrets (names only), whether the journal, the
 * spool directory and the workspace are writable, and each command tool's
 * sandbox. Runs bubblewrap once if the runtime has not. With `json` set
 * *out is one JSON object, else lines of text for a person; either way the
 * caller's (tg_free). Returns 0 or TG_ENOMEM. */
int tg_runtime_doctor(tg_runtime *rt, int json, char **out, tg_error *err);

#ifdef __cplusplus
}
#endif
#pragma GCC visibility pop
#endif /* TOOLGATE_H */
