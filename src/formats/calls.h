/* SPDX-License-Identifier: MIT */
/*
 * calls.h - one function per provider that turns a tool call, as the
 * provider's wire format carries it, into a call record. The provider's
 * whole-document parser defines it (openai_chat.c, openai_responses.c,
 * anthropic.c, gemini.c) and its stream reader (stream_<provider>.c) calls
 * it too, so a call gets the same id, the same arguments and the same
 * errors whether it came in one document or in pieces.
 *
 * Each builder takes the call's parts (strings borrowed; NULL or "" when
 * the wire had none) and a setter for its arguments, and returns 0 with a
 * new call in *out (the caller owns it), or TG_ENOMEM. A problem confined
 * to the call becomes its pre-error, never a failure: the setter's
 * (MALFORMED_ARGUMENTS, ...) first, then the builder's MALFORMED_CALL (no
 * id, no name, ...), which outranks it because it says more.
 */
#ifndef TG_FORMATS_CALLS_H
#define TG_FORMATS_CALLS_H

#include <stdbool.h>
#include <stddef.h>

#include "record.h"

/* Sets the arguments of the call being built from src, the setter's own
 * description of them. A problem with them becomes the call's pre-error;
 * returns 0 or TG_ENOMEM. */
typedef int (*tg__args_setter)(tg_call *call, const void *src);

/* The setters of arguments sent as one JSON value: src is the json_t
 * (borrowed), NULL when the wire left it out. Absent or null stands for {}
 * (a function without parameters) in both - the one place that rule is
 * written (with record.c's tg__call_set_args_value). The OpenAI formats'
 * (tg__args_from_string_value): a string is the arguments' JSON text,
 * anything else is set as is. Anthropic's and Gemini's
 * (tg__args_from_object_value): anything but an object, a string too, is
 * MALFORMED_ARGUMENTS. */
int tg__args_from_string_value(tg_call *call, const void *value);
int tg__args_from_object_value(tg_call *call, const void *value);

/* OpenAI Chat Completions: tool_calls[pos]. */
typedef struct tg__chat_wire {
    size_t pos;           /* its index: in a made-up id and in messages */
    bool not_object;      /* tool_calls[pos] is not an object */
    const char *id;       /* made up as "missing-id-<pos>" when none */
    const char *type;     /* NULL: not sent; else must be "function" */
    bool type_not_string; /* type is there but not a string */
    bool no_function;     /* "function" is not an object */
    const char *name;     /* function.name */
    tg__args_setter set_args;
    const void *args; /* the setter's src */
} tg__chat_wire;
int tg__openai_chat_call(const tg__chat_wire *w, tg_call **out);

/* OpenAI Responses: a function_call item at output position pos. */
typedef struct tg__responses_wire {
    size_t pos;          /* in a made-up id and in messages */
    const char *call_id; /* the call's id; "missing-call-id-<pos>" when none */
    const char *item_id; /* the item's own id, kept in meta; NULL: none */
    const char *name;
    tg__args_setter set_args;
    const void *args;
} tg__responses_wire;
int tg__openai_responses_call(const tg__responses_wire *w, tg_call **out);

/* Anthropic: a tool_use block at content position pos. */
typedef struct tg__anthropic_wire {
    size_t pos; /* in a made-up id and in messages */
    const char *id;
    const char *name;
    tg__args_setter set_args;
    const void *args;
} tg__anthropic_wire;
int tg__anthropic_call(const tg__anthropic_wire *w, tg_call **out);

/* Gemini: parts[part].functionCall. A call without an id gets the one
 * make_id writes into out (size bytes) - from the document, or from the
 * stream's events - and meta {"id_generated":true}: the renderer leaves a
 * made-up id out, the model never saw it. make_id returns 0 or TG_ENOMEM. */
typedef struct tg__gemini_wire {
    size_t part;     /* in messages */
    bool not_object; /* the functionCall is not an object */
    const char *id;
    const char *name;
    int (*make_id)(void *ctx, char *out, size_t size);
    void *id_ctx;
    tg__args_setter set_args;
    const void *args;
} tg__gemini_wire;
int tg__gemini_call(const tg__gemini_wire *w, tg_call **out);

#endif
