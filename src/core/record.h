/* SPDX-License-Identifier: MIT */
/*
 * record.h - the call record and the result record (spec/records.md) as C
 * structs, their constructors for each outcome's payload convention, and
 * their JSON form (used by the native format and the journal).
 *
 * Ownership: every pointer field is owned by its record; json_t fields hold
 * one reference each. Records are plain data, not thread-safe.
 */
#ifndef TG_CORE_RECORD_H
#define TG_CORE_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "checksum.h"
#include "toolgate.h"

struct tg_call {
    char *id;
    char *tool;
    json_t *args;        /* object; NULL when the arguments did not decode */
    char *args_raw;      /* the wire's string form, NULL when it sent an object */
    char *checksum_in;   /* checksum the call arrived with, NULL when none */
    char *caller_id;     /* NULL for system-initiated calls */
    json_t *context;     /* object {cwd, env, name, ...} or NULL */
    json_t *skills;      /* array of strings or NULL */
    const char *format;  /* static format name */
    size_t index;
    int64_t created_at, updated_at, completed_at; /* epoch ms, 0 = unset */
    bool inline_output;  /* records.md `inline`, default true */
    bool from_artifact_tool;
    json_t *meta;        /* format-specific extras kept for rendering (JSON-RPC
                            id, progress token, item ids), object or NULL */
    /* A problem found while parsing: the call ends with this error without
     * running. code is static ("MALFORMED_ARGUMENTS"), message owned. */
    const char *pre_error_code;
    char *pre_error_message;
    /* lazily computed caches (see tg_call_args_json / tg_call_checksum) */
    char *args_json_cache;
    char checksum[TG_CHECKSUM_MAX];
    const unsigned char *hmac_key; /* borrowed from the runtime, may be NULL */
    size_t hmac_key_len;
};

struct tg_result {
    char *id;
    char *tool;
    tg_outcome outcome;
    tg_execution execution;
    json_t *payload;   /* never NULL */
    json_t *content;   /* array of content blocks or NULL */
    json_t *artifact;  /* object or NULL */
    double duration_ms;
    int exit_status;   /* -1 when none */
    int64_t completed_at;
    bool replayed;
    /* caches for the borrowed-string getters */
    char *payload_json_cache;
    char *data_json_cache;
    char *message_cache;
};

/* A new call with id and tool copied (NULL id or tool become ""), format a
 * static string. Defaults: inline true, created_at now. NULL on OOM. */
tg_call *tg__call_new(const char *id, const char *tool, const char *format);
void tg__call_free(tg_call *call);
/* Sets the arguments from an object (borrowed, a reference is taken). A
 * non-object sets the MALFORMED_ARGUMENTS pre-error. Returns 0 or TG_ENOMEM. */
int tg__call_set_args(tg_call *call, json_t *args);
/* Sets the arguments from the wire's string form (copied into args_raw).
 * Text that does not decode to an object sets MALFORMED_ARGUMENTS with the
 * parser's line/column in the message. Returns 0 or TG_ENOMEM. */
int tg__call_set_args_text(tg_call *call, const char *text, size_t len);
/* Marks the call as failing before it runs (code static, message copied). */
int tg__call_set_pre_error(tg_call *call, const char *code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Replaces a string field (copied; NULL allowed). Returns 0 or TG_ENOMEM. */
int tg__strset(char **field, const char *value);
/* The call as a JSON object (records.md); new reference, NULL on OOM. */
json_t *tg__call_to_json(const tg_call *call);
/* A call from its JSON record (borrowed); args may be an object or a string.
 * Fails with TG_EPARSE naming the bad field in err. */
int tg__call_from_json(const json_t *obj, const char *format, tg_call **out,
                       tg_error *err);
/* The serialized size of the arguments in bytes (args_raw length when the
 * wire sent a string). */
size_t tg__call_args_size(const tg_call *call);

/* Results. Each constructor copies id/tool from the call, sets completed_at
 * to now, and returns NULL only on out of memory. */
tg_result *tg__result_new(const tg_call *call, tg_outcome outcome,
                          tg_execution execution, json_t *payload_take);
/* success: payload is any JSON value (reference taken). */
tg_result *tg__result_success(const tg_call *call, json_t *payload_take);
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
/* The result as a JSON object (records.md); new reference, NULL on OOM. */
json_t *tg__result_to_json(const tg_result *result);
/* A result from its JSON record (borrowed). Unknown outcome names become
 * error (forward compatibility). */
int tg__result_from_json(const json_t *obj, tg_result **out, tg_error *err);
/* The error code of an error payload (borrowed from the payload), or NULL. */
const char *tg__result_code(const tg_result *result);

#endif
