/* SPDX-License-Identifier: MIT */
/*
 * source_config.h - an entry of "tools" that is a tool source, an MCP
 * server behind toolgate (source_config.c): {"name": "fs", "mcp": {...}}.
 * Validated when the configuration loads (every bad member named) and read
 * again by the runtime when it makes the source (exec/remote_sources.c).
 * The README's "MCP servers as tool sources" is the reference.
 */
#ifndef TG_REGISTRY_SOURCE_CONFIG_H
#define TG_REGISTRY_SOURCE_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define TG__SOURCE_DEFAULT_SEP "__"
#define TG__SOURCE_DEFAULT_MAX_TOOLS 1000
#define TG__SOURCE_MAX_TOOLS 10000
#define TG__SOURCE_DEFAULT_CONNECT_MS 30000

typedef enum tg__pin_mode {
    TG__PIN_OFF = 0,
    TG__PIN_ON,    /* changed and renamed definitions are held */
    TG__PIN_STRICT /* ...and new tools of a server that has pins */
} tg__pin_mode;

/* A source entry, parsed. Strings and JSON owned (tg__source_cfg_free). */
typedef struct tg__source_cfg {
    char *name;
    char *sep;    /* "separator": between the name and the server's tool */
    bool trusted; /* the server's annotations are believed */
    tg__pin_mode pin;
    bool eager; /* "start": "eager" (else "lazy") */
    /* stdio */
    json_t *command;  /* array of strings (new ref), NULL for http */
    json_t *env;      /* object of strings or NULL (new ref) */
    char *cwd;        /* NULL: the workspace */
    json_t *env_pass; /* array of names or NULL (new ref) */
    bool network;     /* "network" (default true: servers talk to
                         services) */
    bool sandbox;     /* "sandbox" (default true) */
    /* Streamable HTTP */
    char *url;
    json_t *headers; /* object name -> string or NULL (new ref) */
    char *token_env; /* the variable holding the bearer token, or NULL */
    /* both */
    json_t *roots;          /* array of strings as written, or NULL: the
                               workspace (new ref) */
    int64_t timeout_ms;     /* a call's deadline; 0: limits.timeout_ms */
    int64_t max_timeout_ms; /* how far progress may push it; 0: no further
                               than timeout_ms */
    int64_t connect_ms;
    int64_t max_tools;
} tg__source_cfg;

/* Whether a "tools" entry is a source (an object with "mcp"). */
bool tg__source_entry(const json_t *entry);
/* Parses a source entry (borrowed); `key` names it in errors
 * ("tools[2]"). TG_ECONFIG naming the bad member, TG_ENOMEM. *out is the
 * caller's (tg__source_cfg_free). */
int tg__source_cfg_parse(const json_t *entry, const char *key,
                         tg__source_cfg **out, tg_error *err);
void tg__source_cfg_free(tg__source_cfg *c);

#endif
