/* SPDX-License-Identifier: MIT */
/*
 * jsonrpc.h - JSON-RPC 2.0 framing for MCP: reading one message or a batch
 * from bytes, within limits, into classified messages (request,
 * notification, result response, error response, or invalid with the exact
 * error response to send), and writing messages as compact JSON.
 *
 * Reading keeps the text as text: the message is parsed once into a flat
 * token tape (core/jtape.h; strict RFC 8259 with jansson's rules, duplicate
 * keys refused), the nesting depth is checked on the tape before anything
 * builds a tree, and params, results and ids are handed out as slices of
 * the caller's text, so a tools/call's arguments reach the runtime and an
 * id reaches the response without being decoded and encoded again. Writing
 * splices JSON text the caller already has (a result, an id) verbatim.
 *
 * What the reader answers, and with which code (JSON-RPC 2.0 section 5.1):
 *   - text that is not JSON (bad syntax, invalid UTF-8, a duplicate key, an
 *     integer outside int64): -32700 "Parse error", no id;
 *   - text over max_bytes, nested deeper than max_depth, an empty batch, a
 *     batch where batches are off or one of more than max_batch members:
 *     -32600 "Invalid Request", no id (the whole text is answered once);
 *   - a member that is not a valid message: -32600 with its id when the id
 *     is readable (a string or an integer), else none.
 * An error response whose id could not be read carries no "id" member:
 * 2025-11-25 and 2026-07-28 make it optional and no MCP schema allows
 * null (2025-06-18's requires an id there: no answer can satisfy it).
 * Not thread-safe per batch; batches are independent.
 */
#ifndef TG_MCP_JSONRPC_H
#define TG_MCP_JSONRPC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "jtape.h"

/* JSON-RPC 2.0 error codes. */
#define TG_RPC_PARSE_ERROR -32700
#define TG_RPC_INVALID_REQUEST -32600
#define TG_RPC_METHOD_NOT_FOUND -32601
#define TG_RPC_INVALID_PARAMS -32602
#define TG_RPC_INTERNAL_ERROR -32603

#define TG_RPC_DEFAULT_MAX_BYTES (4u << 20)
#define TG_RPC_DEFAULT_MAX_DEPTH 128u
#define TG_RPC_DEFAULT_MAX_BATCH 1024u

/* What the reader accepts. Zero fields take the defaults above. */
typedef struct tg__rpc_limits {
    size_t max_bytes;   /* longest text */
    unsigned max_depth; /* most nested objects and arrays (the message's own
                           object counts 1, a batch array 1 more); at most
                           TG_JTAPE_MAX_DEPTH */
    size_t max_batch;   /* most members of a batch */
    bool batches;       /* batch arrays accepted (2025-03-26 only; later
                           versions answer one with -32600) */
} tg__rpc_limits;

typedef enum tg__rpc_kind {
    TG_RPC_INVALID = 0,  /* answer with fail_code/fail_message (and id) */
    TG_RPC_REQUEST,      /* method and id */
    TG_RPC_NOTIFICATION, /* method, no id */
    TG_RPC_RESULT,       /* a response with "result" */
    TG_RPC_ERROR         /* a response with "error" */
} tg__rpc_kind;

typedef enum tg__rpc_id_kind {
    TG_RPC_ID_NONE = 0,
    TG_RPC_ID_STRING,
    TG_RPC_ID_INT
} tg__rpc_id_kind;

/* A JSON-RPC id. Read from a message, `json` is the id exactly as written
 * there (a string with its quotes and escapes, an integer's digits: echoed
 * verbatim, so its type and value survive whatever its size), `str` its
 * value as text (a string decoded, an integer in decimal; NUL-terminated,
 * never holding U+0000), `num` an integer's value. Built in code (ids of
 * the requests a server or client sends), set kind and num, or kind and
 * str/str_len, and leave json NULL: writers then encode it. */
typedef struct tg__rpc_id {
    tg__rpc_id_kind kind;
    const char *json;
    size_t json_len;
    const char *str;
    size_t str_len;
    long long num;
} tg__rpc_id;

/* One message of a text. Pointers are into the caller's text or the
 * batch's storage: valid while both live. */
typedef struct tg__rpc_msg {
    tg__rpc_kind kind;
    tg__rpc_id id; /* NONE for notifications, and for invalid messages and
                     error responses without a readable id */
    /* REQUEST, NOTIFICATION: the method, decoded, NUL-terminated (never
     * holding U+0000) */
    const char *method;
    size_t method_len;
    /* REQUEST, NOTIFICATION: the params object's text; NULL when absent */
    const char *params;
    size_t params_len;
    /* RESULT: the result's text (any JSON value); ERROR: the error object's
     * text, its code (error_code) and message (decoded, NUL-terminated) */
    const char *result;
    size_t result_len;
    long long error_code;
    const char *error_message;
    /* INVALID: the code (-32600) and message of the answer */
    int fail_code;
    char fail_message[256];
    size_t tok;        /* the message object's token in the tape (internal) */
    size_t params_tok; /* its params object's token, when params (internal) */
} tg__rpc_msg;

#define TG_RPC_INLINE_TOKENS 96

/* A read text: its messages in order, or a failure of the whole text.
 * Caller-owned storage (a stack variable is fine); tg__rpc_read fills it,
 * tg__rpc_batch_cleanup frees what it allocated. */
typedef struct tg__rpc_batch {
    tg__rpc_msg *msgs; /* n messages (msgs == &one for a single message) */
    size_t n;
    bool is_batch; /* the text was a batch array */
    /* Whole-text failure (n == 0): -32700 or -32600 and its message,
     * answered once with no id; 0 when the text was read. */
    int fail_code;
    char fail_message[256];
    /* internal */
    tg__rpc_msg one;
    tg__jtape tape;
    tg__buf strings; /* decoded methods, ids and messages */
    char strings_inline[128];
    tg__jtok tokens[TG_RPC_INLINE_TOKENS];
    struct tg__rpc_span {
        uint32_t start, end;
    } * span, spans_inline[TG_RPC_INLINE_TOKENS]; /* containers' text */
} tg__rpc_batch;

/* Reads text[0..len) (which must stay unchanged while the batch is used;
 * the batch itself must not be copied or moved: it points into itself)
 * into b under limits (NULL: defaults, batches off). Returns 0 with b
 * filled - whole-text failures and invalid members are answers, not
 * errors - or TG_ENOMEM (b is then cleaned up). Call
 * tg__rpc_batch_cleanup(b) after either. */
int tg__rpc_read(tg__rpc_batch *b, const char *text, size_t len,
                 const tg__rpc_limits *limits);
/* Frees what tg__rpc_read allocated; b may be read again afterwards. */
void tg__rpc_batch_cleanup(tg__rpc_batch *b);

/* A value inside a message: its text, its tape token and kind (TG_JT_*). */
typedef struct tg__rpc_value {
    const char *json;
    size_t len;
    int kind; /* tg__jkind: TG_JT_OBJECT, TG_JT_STRING, ... */
    size_t tok;
} tg__rpc_value;

/* Finds params.path[0].path[1]...path[n-1] of message m (n >= 1, each step
 * a member of an object): 1 with *out set, 0 when absent (or when a step is
 * not an object). */
int tg__rpc_params_find(const tg__rpc_batch *b, const tg__rpc_msg *m,
                        const char *const *path, size_t n, tg__rpc_value *out);
/* The result of a result response m (its text, token, kind): 1, or 0
 * when m is not one. */
int tg__rpc_result_value(const tg__rpc_batch *b, const tg__rpc_msg *m,
                         tg__rpc_value *out);
/* Finds obj.path[0].path[1]...path[n-1] (each step a member of an
 * object) inside a value of the batch: 1 with *out set, 0 when absent. */
int tg__rpc_value_find(const tg__rpc_batch *b, const tg__rpc_value *obj,
                       const char *const *path, size_t n, tg__rpc_value *out);
/* The elements of an array value one at a time: *cursor starts at 0;
 * returns 1 with *out set to the next element, 0 after the last (or when
 * `array` is not an array). */
int tg__rpc_array_next(const tg__rpc_batch *b, const tg__rpc_value *array,
                       size_t *cursor, tg__rpc_value *out);
/* Appends the decoded bytes of a string value (v->kind TG_JT_STRING) to
 * out. Returns 0, TG_EINVAL when v is not a string, TG_ENOMEM, TG_ELIMIT. */
int tg__rpc_value_string(const tg__rpc_batch *b, const tg__rpc_value *v,
                         tg__buf *out);
/* v as a jansson value (new reference), the same json_loadb builds, or NULL
 * on out of memory. */
json_t *tg__rpc_value_json(const tg__rpc_batch *b, const tg__rpc_value *v);
/* m's params as a jansson object (new reference): built from the tape
 * without parsing again; an empty object when m has none; NULL on out of
 * memory. */
json_t *tg__rpc_params_json(const tg__rpc_batch *b, const tg__rpc_msg *m);

/* Writers. Each appends one message as compact JSON (no newline) and
 * returns 0, TG_ENOMEM or TG_ELIMIT (out then holds part of it). Text
 * arguments (result, params, data) are JSON the caller vouches for and are
 * spliced verbatim; strings (method, message) are escaped. An id of kind
 * NONE is left out. */

/* {"jsonrpc":"2.0","id":ID,"result":RESULT} */
int tg__rpc_write_result(tg__buf *out, const tg__rpc_id *id, const char *result,
                         size_t result_len);
/* The same in two halves, for a result written straight into out between
 * them: {"jsonrpc":"2.0","id":ID,"result": ... and the closing }. */
int tg__rpc_write_result_open(tg__buf *out, const tg__rpc_id *id);
int tg__rpc_write_close(tg__buf *out);
/* {"jsonrpc":"2.0","id":ID,"error":{"code":CODE,"message":MSG,"data":DATA}}
 * (data left out when NULL). */
int tg__rpc_write_error(tg__buf *out, const tg__rpc_id *id, long long code,
                        const char *message, const char *data, size_t data_len);
/* The answer to an invalid message (kind TG_RPC_INVALID): its error with
 * its id when readable. */
int tg__rpc_write_invalid(tg__buf *out, const tg__rpc_msg *m);
/* The answer to a text that failed whole (b->fail_code != 0). */
int tg__rpc_write_failure(tg__buf *out, const tg__rpc_batch *b);
/* {"jsonrpc":"2.0","method":METHOD,"params":PARAMS} (params left out when
 * NULL). */
int tg__rpc_write_notification(tg__buf *out, const char *method,
                               const char *params, size_t params_len);
/* {"jsonrpc":"2.0","id":ID,"method":METHOD,"params":PARAMS}. */
int tg__rpc_write_request(tg__buf *out, const tg__rpc_id *id,
                          const char *method, const char *params,
                          size_t params_len);
/* Appends the id alone as JSON (nothing for NONE). */
int tg__rpc_write_id(tg__buf *out, const tg__rpc_id *id);

#endif
