/* SPDX-License-Identifier: MIT */
/*
 * record.h - the call record and the result record (docs/records.md) as C
 * structs, their constructors for each outcome's payload convention, and
 * their JSON form (used by the native format and the journal).
 *
 * Ownership: every pointer field is owned by its record; json_t fields hold
 * one reference each. A record's id and tool live in the record's own
 * allocation: they are set by the constructor and never replaced (only
 * shortened in place, by tg__call_check_names, when over their limit).
 * Records are plain data, not thread-safe.
 *
 * Arguments are kept as JSON text and its tape (jtape.h), not as a jansson
 * object: the text is what handlers receive, the tape gives the checksum,
 * and tg__call_args builds the jansson object only for those that need one
 * (command templates, call records).
 */
#ifndef TG_CORE_RECORD_H
#define TG_CORE_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "checksum.h"
#include "jtape.h"
#include "toolgate.h"

struct tg_call {
    char *id;   /* in the record's allocation */
    char *tool; /* in the record's allocation */
    /* The arguments: JSON text of an object (NUL-terminated, args_len
     * bytes, inside the tape's allocation) and its tape; args_text is NULL
     * when the arguments did not decode to an object. Set them only through
     * tg__call_set_args* below. */
    const char *args_text;
    size_t args_len;
    tg__jtape args_tape;
    json_t *args_dom;   /* the object, built on first use; see tg__call_args */
    char *args_raw_own; /* the wire's string when it is not args_text */
    bool args_raw_is_text; /* the wire's string is args_text itself */
    char *checksum_in;     /* checksum the call arrived with, NULL when none */
    char *caller_id;       /* NULL for system-initiated calls */
    json_t *context;       /* object {cwd, env, name, ...} or NULL */
    json_t *skills;        /* array of strings or NULL */
    const char *format;    /* static format name */
    size_t index;
    int64_t created_at, updated_at, completed_at; /* epoch ms, 0 = unset */
    bool inline_output; /* docs/records.md `inline`, default true */
    bool from_artifact_tool;
    unsigned repaired; /* TG_REPAIR_* (repair.h) done to its arguments */
    /* Format-specific extras kept for rendering (JSON-RPC id, progress
     * token, item ids): an object or NULL. Read it with tg__call_meta: a
     * fast path may leave it as compact JSON text in meta_text (one
     * allocation instead of several), built into `meta` on first use. */
    json_t *meta;
    char *meta_text;
    /* A problem found while parsing: the call ends with this error without
     * running. code is static ("MALFORMED_ARGUMENTS"), message owned. */
    const char *pre_error_code;
    char *pre_error_message;
    /* The arguments' MALFORMED_ARGUMENTS is final: limits.repair leaves
     * them alone. Set when the stream ended inside them (the stream's
     * word on a cut wins) and when they hold bytes no tool gets. */
    bool args_unrepairable;
    /* The arguments value a setter was given when it held bad strings
     * (U+0000, an unpaired surrogate, invalid UTF-8; only a document read
     * with tg__format_load has them, or an object made in code), new ref,
     * or NULL: the document's parser checks with it that every bad string
     * of the document was in some call's arguments, then drops it
     * (format.h); other readers (a stream, whose events are checked
     * against where arguments go; the fenced format) leave it to the
     * call. */
    json_t *bad_args_src;
    /* Set by tg_turn_cancel_all: the call ends canceled without running.
     * by is static ("user", "policy", "system"), reason owned. */
    const char *pre_cancel_by;
    char *pre_cancel_reason;
    /* lazily computed cache (see tg_call_checksum) */
    char checksum[TG_CHECKSUM_MAX];
    const unsigned char *hmac_key; /* borrowed from the runtime, may be NULL */
    size_t hmac_key_len;
};

struct tg_result {
    char *id;   /* in the record's allocation */
    char *tool; /* in the record's allocation */
    tg_outcome outcome;
    tg_execution execution;
    /* The payload: read it with tg__result_payload. NULL only for a result
     * made from its payload's text (tg__result_success_text), until that
     * builds it. */
    json_t *payload_dom;
    json_t *content;  /* array of content blocks or NULL */
    json_t *artifact; /* object or NULL */
    /* What the gate decided about the call, recorded with the result (new
     * ref, object or NULL): {"policy":{"decision","rule","reason",
     * "approved_by"}, "hooks":[{"hook","stage","decision","reason"}],
     * "sandbox":"bubblewrap"|"rlimits"|"none", "output_schema":"valid"
     * (a success whose payload is the tool's JSON, checked against its
     * output_schema by src/exec/shape.c: tg_result_structured)}; members
     * absent when that stage did not run. */
    json_t *decisions;
    double duration_ms;
    int exit_status; /* -1 when none */
    int64_t completed_at;
    bool replayed;
    /* The payload holds what a tool produced (it ran, and the trust
     * envelope is on): renderers for models wrap its text in the envelope
     * (src/formats/envelope.c). Not part of the record. */
    bool untrusted;
    unsigned repaired; /* TG_REPAIR_*: taken from the call when made */
    /* caches for the borrowed-string getters */
    char *payload_json_cache;
    bool payload_json_inline; /* the cache is in the record's allocation */
    char *data_json_cache;
    char *content_json_cache;
    char *message_cache;
};

/* A new call with id and tool copied (NULL id or tool become ""), format a
 * static string. Defaults: inline true, created_at now. NULL on OOM. */
tg_call *tg__call_new(const char *id, const char *tool, const char *format);
void tg__call_free(tg_call *call);
/* tg__call_new followed by tg__call_set_args_text, in one allocation when
 * the text is an object (the common case). NULL on out of memory. */
tg_call *tg__call_new_args(const char *id, const char *tool, const char *format,
                           const char *text, size_t len);
/* For fast paths of formats whose arguments arrive as a JSON object: a
 * call whose arguments are text[0..len), the object's text as it stood in
 * the wire document, in one allocation. Fills the call exactly as
 * tg__call_set_args with the decoded object would, so it only takes text in
 * jansson's compact form (no white space, no reals, escapes as jansson
 * writes them, no duplicate keys). Returns 0 with *out set (the caller owns
 * it), 1 when the text is not in that form (the caller takes its general
 * path), or TG_ENOMEM. */
int tg__call_new_args_object(const char *id, const char *tool,
                             const char *format, const char *text, size_t len,
                             tg_call **out);
/* Sets the arguments from an object (borrowed, a reference is taken; the
 * text becomes its compact JSON). A non-object sets the MALFORMED_ARGUMENTS
 * pre-error, and so does an object holding bytes no tool gets, as
 * bad_bytes.h says: it is kept in bad_args_src. Returns 0 or TG_ENOMEM. */
int tg__call_set_args(tg_call *call, json_t *args);
/* Sets the arguments from the wire's string form (copied; it is then both
 * the raw string and, when it decodes to an object, the arguments text).
 * A blank string stands for {}. Text that does not decode to an object sets
 * MALFORMED_ARGUMENTS with the parser's message, line and column (jansson's
 * for the same text); so does text holding a NUL byte anywhere (where the
 * parser lets it pass too: after a number), and that error is final
 * (args_unrepairable). No jansson value is built. Returns 0 or TG_ENOMEM. */
int tg__call_set_args_text(tg_call *call, const char *text, size_t len);
/* Records the wire's string form (copied; NULL allowed) without decoding it:
 * for loaders that restore a stored call whose arguments are set apart.
 * Returns 0 or TG_ENOMEM. */
int tg__call_set_args_raw(tg_call *call, const char *raw);
/* Gives dst the same arguments as src (text, tape, raw string; copies).
 * Returns 0 or TG_ENOMEM. */
int tg__call_copy_args(tg_call *dst, const tg_call *src);
/* The arguments as a jansson object (borrowed, valid while the call lives
 * and its arguments are not set again), built from the text on first use.
 * NULL when the arguments did not decode (args_text NULL) or memory ran
 * out building them. Not thread-safe: the first use fills a cache. */
json_t *tg__call_args(const tg_call *call);
/* Sets the arguments from the wire's JSON value (borrowed) as the OpenAI
 * formats send them: a string is decoded (tg__call_set_args_text), absent
 * or null means {} (a function without parameters), anything else is set as
 * is (an object, or MALFORMED_ARGUMENTS). A string holding bytes no tool
 * gets is kept in bad_args_src, as tg__call_set_args keeps an object.
 * Returns 0 or TG_ENOMEM. */
int tg__call_set_args_value(tg_call *call, const json_t *args);
/* The call's meta object (borrowed; NULL when it has none, or when
 * building it from meta_text ran out of memory). */
json_t *tg__call_meta(const tg_call *call);

/* The longest call id, tool name and caller id a call may carry, in bytes.
 * Providers and MCP name tools in at most 64 to 128 characters and make
 * ids of a few dozen; 256 leaves room for every one of them (and for any
 * name the registry takes, 128 at most) while keeping what a hostile caller
 * can make toolgate print, journal and echo small. */
#define TG_CALL_ID_MAX 256
#define TG_TOOL_NAME_MAX 256
#define TG_CALLER_ID_MAX 256

/* Holds the call's id, tool name and caller id to the limits above: one that
 * is longer gives the call a MALFORMED_CALL pre-error ("tool name
 * 'abc…(104857600 bytes)' of call 'c1' is longer than the limit of 256
 * bytes") and is cut to the limit at a UTF-8 character boundary, so neither
 * the journal nor a message nor a terminal ever sees more of it. Returns 0
 * or TG_ENOMEM. */
int tg__call_check_names(tg_call *call);

/* Forgets a pre-error (after limits.repair fixed what caused it). */
void tg__call_clear_pre_error(tg_call *call);
/* Marks the call as failing before it runs (code static, message copied). */
int tg__call_set_pre_error(tg_call *call, const char *code, const char *fmt,
                           ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Replaces a string field (copied; NULL allowed). Returns 0 or TG_ENOMEM. */
int tg__strset(char **field, const char *value);
/* The call as a JSON object (docs/records.md); new reference, NULL on OOM. */
json_t *tg__call_to_json(const tg_call *call);
/* A call from its JSON record (borrowed); args may be an object or a string.
 * Fails with TG_EPARSE naming the bad field in err. */
int tg__call_from_json(const json_t *obj, const char *format, tg_call **out,
                       tg_error *err);
/* The serialized size of the arguments in bytes (the raw string's length
 * when the wire sent a string). */
size_t tg__call_args_size(const tg_call *call);

/* Results. Each constructor copies id/tool from the call, sets completed_at
 * to now, and returns NULL only on out of memory. */
tg_result *tg__result_new(const tg_call *call, tg_outcome outcome,
                          tg_execution execution, json_t *payload_take);
/* success: payload is any JSON value (reference taken). */
tg_result *tg__result_success(const tg_call *call, json_t *payload_take);
/* success, from the payload's text when it is exactly what json_dumps
 * (JSON_COMPACT | JSON_ENCODE_ANY) writes for its value
 * (tg__jtape_is_dump_form): text[0..len) is copied into the record and is what
 * tg_result_payload_json returns; no jansson value is built until
 * tg__result_payload asks for it (most results are only rendered, and rendering
 * needs the text). NULL on out of memory. */
tg_result *tg__result_success_text(const tg_call *call, const char *text,
                                   size_t len);
/* The payload as a jansson value (borrowed, valid while the result lives):
 * built from the text on first use for results made from text. NULL only
 * when memory ran out building it. Not thread-safe: the first use fills a
 * cache. */
json_t *tg__result_payload(const tg_result *result);
/* error: {"error":{"message","code","type"?,"details"?}}; details taken. */
tg_result *tg__result_error(const tg_call *call, tg_execution execution,
                            const char *code, json_t *details_take,
                            const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* canceled: {"canceled":{"reason","by"}}. */
tg_result *tg__result_canceled(const tg_call *call, tg_execution execution,
                               const char *by, const char *reason);
/* timeout: {"timeout":{"durationMs":budget_ms}}, execution started. */
tg_result *tg__result_timeout(const tg_call *call, int64_t budget_ms);
/* denied: {"denied":{"tool","reason"}}, execution not_started. */
tg_result *tg__result_denied(const tg_call *call, const char *reason);
void tg__result_free(tg_result *result);
/* tg__result_write flags: also the gate's decisions (the journal and the
 * record API show them; the native wire format does not). */
#define TG__RECORD_DECISIONS 1u
/* Appends the result record (docs/records.md) as compact JSON text: id, tool,
 * outcome, execution, payload, content, artifact, duration_ms (in ms to
 * the microsecond, tg__json_ms), exit_status, completed_at; then replayed,
 * decisions (with TG__RECORD_DECISIONS) and repaired when set; then
 * "call": `call` (borrowed) when it is not NULL, as the journal's history
 * gives each result. Strings and values are written as jansson's compact
 * dump writes them. Returns 0, TG_EINVAL (an id or tool that is not UTF-8,
 * a duration that is not a number), TG_ENOMEM or TG_ELIMIT; out may hold
 * part of the record then. */
int tg__result_write(const tg_result *result, unsigned flags,
                     const json_t *call, tg__buf *out);
/* The `repaired` list of a result record (docs/records.md): one description per
 * TG_REPAIR_* bit, a new array; NULL on out of memory. And back: the bits
 * of such a list (unknown entries are ignored). */
json_t *tg__repaired_to_json(unsigned repaired);
unsigned tg__repaired_from_json(const json_t *list);
/* A result from its JSON record (borrowed). Unknown outcome names become
 * error (forward compatibility). */
int tg__result_from_json(const json_t *obj, tg_result **out, tg_error *err);
/* The error code of an error payload (borrowed from the payload), or NULL. */
const char *tg__result_code(const tg_result *result);
/* Where the payload of a command that ran and did not succeed holds what
 * it printed (docs/records.md): the error's `details` of EXIT_STATUS,
 * KILLED_BY_SIGNAL and OUTPUT_LIMIT (members exit_status or signal,
 * stdout, stderr, stdout_artifact, stderr_artifact), or the `timeout`
 * object when it has stdout or stderr. Borrowed from the payload; NULL for
 * every other result (successes included: their payload is the output). */
const json_t *tg__result_output_part(const tg_result *result);

#endif
