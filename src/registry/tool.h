/* SPDX-License-Identifier: MIT */
/*
 * tool.h - a tool definition: name, description, input schema, annotations,
 * and how it runs (an in-process handler or a command with argv and stdin
 * templates). Built from toolgate.json entries or registered in C.
 */
#ifndef TG_REGISTRY_TOOL_H
#define TG_REGISTRY_TOOL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "toolgate.h"

typedef enum tg__tool_kind {
    TG_TOOL_KIND_HANDLER = 0, /* in-process C function */
    TG_TOOL_KIND_COMMAND = 1, /* subprocess from an argv template */
    TG_TOOL_KIND_REMOTE = 2   /* a tool of an MCP server (src/remote/) */
} tg__tool_kind;

/* Whether a tool may be called (remote tools; every other tool is
 * enabled): a held or disabled tool is left out of tool lists and its
 * calls end `denied` with its off_reason. */
typedef enum tg__tool_state {
    TG_TOOL_ENABLED = 0,
    TG_TOOL_HELD,    /* its definition changed (or is new under strict
                        pinning): waits for `toolgate mcp accept` */
    TG_TOOL_DISABLED /* unusable: an invalid schema, a name collision, ... */
} tg__tool_state;

/* What a tool's output is ("output" in toolgate.json): text (the default),
 * one JSON value, or a JSON array of MCP content blocks. */
typedef enum tg__tool_output {
    TG_TOOL_OUTPUT_TEXT = 0,
    TG_TOOL_OUTPUT_JSON = 1,
    TG_TOOL_OUTPUT_CONTENT = 2 /* "mcp-content" */
} tg__tool_output;

typedef struct tg__tool {
    char *name;
    char *title;          /* human-readable name, or NULL */
    char *description;    /* "" when none */
    json_t *input_schema; /* object (new ref); {"type":"object"} by default */
    tg_schema *schema;    /* input_schema compiled at registration (owned) */
    json_t *annotations;  /* object (new ref) or NULL */
    tg__tool_output output;
    /* "output_schema": what a success's JSON must be (new ref), compiled
     * at registration like the input schema (owned); NULL when none. A
     * tool with one has TG_TOOL_OUTPUT_JSON. */
    json_t *output_schema;
    tg_schema *out_schema;
    tg__tool_kind kind;
    /* handler tools */
    tg_handler_fn fn;
    void *user_data;
    unsigned flags; /* TG_TOOL_INLINE, ... */
    /* command tools */
    json_t *argv;       /* array of strings, the argv template (new ref) */
    json_t *stdin_tpl;  /* string template or NULL (new ref) */
    json_t *env;        /* object name -> string or NULL (new ref) */
    int64_t timeout_ms; /* 0: the runtime's default */
    /* "ok_exit": the exit statuses that are success (bit n of word n / 64);
     * when has_ok_exit is false only 0 is */
    bool has_ok_exit;
    uint64_t ok_exit[4];
    /* the sandbox (src/exec/sandbox.c) */
    json_t *env_pass; /* array of names passed from the runtime's environment
                         (secret-looking ones too), or NULL (new ref) */
    bool network;     /* "network": true keeps the host's network */
    bool unsandboxed; /* "sandbox": false: no bubblewrap, no rlimits */
    int sandbox_mode; /* "sandbox": {"mode": ...}: TG__SANDBOX_WARM or
                         _COLD (config.h); 0: the runtime's */
    /* hostile callers (template.c, context_env.c) */
    json_t *option_args;   /* array of placeholder names whose values may
                              begin with '-', or NULL (new ref) */
    json_t *ctx_env_allow; /* "context_env": arrays of name patterns the */
    json_t *ctx_env_deny;  /* context may / may not set, or NULL (new refs) */
    /* remote tools (exec/remote_sources.c): the source that serves it
     * (a tg__rsrc of the exec layer, borrowed: it outlives its tools), the
     * server's own name for it, and whether it may be called */
    void *remote;
    char *remote_name;
    tg__tool_state state;
    char *off_reason; /* HELD, DISABLED: why (for the denied call) */
} tg__tool;

/* A TG_ECONFIG error "KEY.MEMBER<text>" (text from fmt: " must be ...",
 * "[0] must ...", ": ...") with the JSON pointer derived from the key
 * ("tools[2].mcp" -> "/tools/2/mcp/member"). member may be NULL. Returns
 * TG_ECONFIG. Used by every "tools" entry's checks (tool.c,
 * source_config.c). */
int tg__config_bad(tg_error *err, const char *key, const char *member,
                   const char *fmt, ...) TG__PRINTF(4, 5);

/* ^[A-Za-z0-9_.-]{1,128}$: the names every provider's tool format
 * accepts. */
bool tg__tool_name_valid(const char *s);

/* Whether a command tool that exited with `status` (0-255) succeeded: the
 * statuses of its "ok_exit", else 0 alone. */
bool tg__tool_exit_ok(const tg__tool *tool, int status);

/* Frees a tool and everything it owns; NULL is a no-op. */
void tg__tool_free(tg__tool *tool);

/* Builds a tool from a toolgate.json "tools" entry (borrowed). `key` names
 * the entry in errors ("tools[2]"). Fails with TG_ECONFIG naming the bad
 * member ("tools[2].command must be a non-empty array of strings"). */
int tg__tool_from_config(const json_t *entry, const char *key, tg__tool **out,
                         tg_error *err);

/* A handler tool; strings copied, schema_json parsed (NULL: any object).
 * Fails with TG_ESCHEMA when the schema is not a JSON object. */
int tg__tool_new_handler(const char *name, const char *description,
                         const char *schema_json, tg_handler_fn fn,
                         void *user_data, unsigned flags, tg__tool **out,
                         tg_error *err);

#endif
