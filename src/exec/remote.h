/* SPDX-License-Identifier: MIT */
/*
 * remote.h - MCP servers behind the runtime, inside the exec layer:
 * remote_sources.c keeps one tg__rsrc per configured server (its
 * connection, src/remote/rsource.h, and what its tool lists made of the
 * registry: prefixed, sanitized, pinned), remote_call.c is the tool
 * source that runs a remote tool's calls through the server's session.
 * The connection itself lives below exec (src/remote/); what needs the
 * registry, the journal's pins and the output path lives here.
 */
#ifndef TG_EXEC_REMOTE_H
#define TG_EXEC_REMOTE_H

#include <jansson.h>
#include <stdbool.h>

#include "record.h"
#include "rsource.h"
#include "source.h"
#include "source_config.h"

typedef struct tg_runtime tg_runtime;

/* One MCP server behind the runtime. */
typedef struct tg__rsrc {
    tg_runtime *rt;
    tg__source_cfg *cfg;
    tg__rsource *rs;
    char *prefix;     /* name + separator */
    json_t *tools;    /* what the last list made: [{name, remote, state,
                         reason?, flags?}] (new ref) */
    json_t *defs;     /* the last list's definitions as served (new ref) */
    json_t *mem_pins; /* journal off: {remote name: checksum} (new ref) */
    bool removed;     /* tg_runtime_remove_source: closed, tools gone */
    /* the server's serverInfo as decisions.source shows it, kept while its
     * text (the session's) stays the same (remote_call.c) */
    char *server_text;   /* owned */
    json_t *server;      /* new ref, shared by the decisions (never changed) */
    const char *sandbox; /* how a stdio server runs: "bubblewrap", "none";
                            NULL for HTTP (static) */
    struct tg__rcall *calls; /* its calls sent (remote_call.c's list) */
    struct tg__rsrc *next;
} tg__rsrc;

/* The sources of rt's configuration ("tools" entries with "mcp"), each
 * made (eager ones started). TG_ECONFIG (a token_env that is not set),
 * TG_ENOMEM. Called once the runtime's loop and journal exist. */
int tg__rsrcs_init(tg_runtime *rt, tg_error *err);
/* Closes every session (their servers' process groups are ended) so that
 * the loop can finish them; tg__rsrcs_free after the loop ran. */
void tg__rsrcs_close(tg_runtime *rt);
void tg__rsrcs_free(tg_runtime *rt);
/* Before a turn's checks: starts the sources that the turn's calls name
 * by prefix and whose tools are not known yet, and runs the loop until
 * each is ready or failed (or timeout_ms passed; 0: the sources' own
 * connect deadlines; < 0: starts them without waiting, for a turn admitted
 * from inside the loop). */
void tg__rsrcs_prepare(tg_runtime *rt, tg_call *const *calls, size_t n,
                       int64_t timeout_ms);
/* The source whose prefix `tool` has, or NULL. */
tg__rsrc *tg__rsrcs_for(const tg_runtime *rt, const char *tool);

/* remote_tools.c: a server's tool list (taken) made registry entries
 * (the rsource's `listed`; ud: the tg__rsrc), replacing the last list's. */
void tg__rsrc_listed(void *ud, tg__rtool_list *list);
/* The registry entries of the definitions defs (taken: a JSON array of
 * MCP tool objects), judged against the pins now (also after an accept). */
void tg__rsrc_apply(tg__rsrc *src, json_t *defs);
/* Takes the source's tools out of the registry (tg_runtime_remove_source). */
void tg__rsrc_unregister(tg__rsrc *src);

/* remote_call.c: the rsource's `elicit` (ud: the tg__rsrc): the server
 * asks its user for input while running call `call` of session s; it goes
 * to the runtime's elicitation handler through the call's sink. 0 when it
 * will be answered (tg__rsession_elicit_reply), else it is declined (no
 * such call, no handler, a malformed request). */
int tg__rcall_elicit(void *ud, tg__rsession *s, uint64_t ticket, uint64_t call,
                     const char *params, size_t len);

/* The tool source of remote tools (remote_call.c, sources.c). */
extern const tg__source_ops tg__remote_source;

#endif
