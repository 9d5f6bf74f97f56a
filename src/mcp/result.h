/* SPDX-License-Identifier: MIT */
/*
 * result.h - the MCP results a server sends that depend on toolgate's
 * records, per protocol version: the CallToolResult of a tool call's
 * result, the JSON-RPC error that answers a call refused before it ran
 * (an unknown tool), and the pages of a tools/list result.
 *
 * Everything is written as compact JSON straight into a tg__buf; the
 * CallToolResult is written by the same code `toolgate run --to mcp` uses
 * (src/formats/mcp_result.c), so the text a model reads is the text every
 * other format renders.
 */
#ifndef TG_MCP_RESULT_H
#define TG_MCP_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "jsonrpc.h"
#include "toolgate.h"
#include "version.h"

/* tg__mcp_call_tool_result flags. */
/* The tool declares an outputSchema: a success's payload is also the
 * structuredContent - when it is an object, or whatever JSON value it is
 * under versions whose structuredContent may be any value (2026-07-28). */
#define TG_MCP_RESULT_OUTPUT_SCHEMA 1u
/* The tool declares an outputSchema, whatever the outcome: one other than
 * success carries no structuredContent, which would not be an instance of
 * that schema (clients check it: the TypeScript SDK's Client refuses such
 * a result). */
#define TG_MCP_RESULT_DECLARED 2u

/* Appends the CallToolResult of r (borrowed) under version v as one compact
 * JSON object (the result member of the response):
 *   content            the result's content blocks, or one text block
 *                      with the text every other format renders;
 *   structuredContent  the payload convention of every outcome but success
 *                      ({"error":{...}}, {"timeout":{...}}, {"canceled":
 *                      {...}}, {"denied":{...}}) but with
 *                      TG_MCP_RESULT_DECLARED; a success's payload with
 *                      TG_MCP_RESULT_OUTPUT_SCHEMA (see above);
 *   isError            true for every outcome but success, else false;
 *   _meta              meta_members first (JSON text of members, e.g.
 *                      "\"io.modelcontextprotocol/serverInfo\":{...}", or
 *                      NULL), then "io.toolgate/result": {"outcome",
 *                      "execution", "durationMs", "callId"};
 *   resultType         "complete", under versions whose results carry one.
 * Returns 0, TG_EINVAL (v not spoken), TG_ENOMEM or TG_ELIMIT. */
int tg__mcp_call_tool_result(tg__buf *out, const tg_result *r,
                             tg__mcp_version v, unsigned flags,
                             const char *meta_members);

/* The JSON-RPC error code that answers result r instead of a
 * CallToolResult: -32602 for a call of an unknown tool (UNKNOWN_TOOL, as
 * the MCP specification asks), 0 for every other result (answered with a
 * CallToolResult, isError for failures). */
int tg__mcp_result_rpc_error(const tg_result *r);
/* Appends the whole error response for such a result (response to `id`):
 * {"jsonrpc":"2.0","id":ID,"error":{"code":-32602,"message":"Unknown tool:
 * NAME"}}. Returns 0, TG_EINVAL (r is answered with a result), TG_ENOMEM
 * or TG_ELIMIT. */
int tg__mcp_write_result_error(tg__buf *out, const tg__rpc_id *id,
                               const tg_result *r);

/* ------------------------------------------------------------ tools/list */

/* The tool list a server pages through: the definitions sorted by name
 * (bytes compared), each kept as compact JSON text, so a page is copied,
 * never built. Immutable once made: pages of one list may be written from
 * several threads. */
typedef struct tg__mcp_tools tg__mcp_tools;

/* A tool list from the MCP tool definitions text of tg_runtime_tools(rt,
 * "mcp", ...): {"tools":[...]} or the array alone (borrowed). Returns 0
 * with *out set (free with tg__mcp_tools_free), TG_EPARSE (not that shape:
 * err says why; a definition without a string name, or two of one name,
 * is refused too) or TG_ENOMEM. */
int tg__mcp_tools_new(const char *json, size_t len, tg__mcp_tools **out,
                      tg_error *err);
void tg__mcp_tools_free(tg__mcp_tools *tools);
/* The number of tools. */
size_t tg__mcp_tools_count(const tg__mcp_tools *tools);
/* Whether the list has a tool named `name` (NUL-terminated; NULL: no).
 * tools may be NULL (an empty list). */
bool tg__mcp_tools_has(const tg__mcp_tools *tools, const char *name);
/* Whether the list has a tool named `name` whose definition has an
 * outputSchema (tools and name as for tg__mcp_tools_has). */
bool tg__mcp_tools_declares_output(const tg__mcp_tools *tools,
                                   const char *name);

#define TG_MCP_TOOLS_PAGE_DEFAULT 500

/* How pages are cut and what they say about caching. */
typedef struct tg__mcp_page_opts {
    size_t page_size; /* tools a page holds; 0: TG_MCP_TOOLS_PAGE_DEFAULT */
    /* 2026-07-28 (cacheable list results): how long the client may reuse
     * the list (ttlMs, >= 0) and whether shared caches may ("public") or
     * only the same authorization context ("private", the default: the
     * artifact tools' definitions name the caller's artifacts). */
    int64_t ttl_ms;
    bool cache_public;
    /* Versions whose tasks are core (2025-11-25): what each tool says in
     * execution.taskSupport ("optional", "required"), a definition that
     * has an execution member of its own keeping it; NULL: nothing (the
     * tools cannot run as tasks). */
    const char *task_support;
} tg__mcp_page_opts;

/* Appends the ListToolsResult page that `cursor` (cursor_len bytes; NULL
 * for the first page) asks for under version v: {"tools":[...] (with
 * execution.taskSupport as opts say, see above), "nextCursor"?, then
 * "ttlMs","cacheScope","resultType" where v has them,
 * "_meta":{meta_members} when meta_members is not NULL}. The cursor is
 * opaque to clients: it names the last tool of the page before, so paging
 * stays in order when the list changes between pages. Returns 0,
 * TG_EINVAL for a cursor this server did not make (answer -32602), or
 * TG_ENOMEM / TG_ELIMIT. opts may be NULL (defaults). */
int tg__mcp_tools_page(tg__buf *out, const tg__mcp_tools *tools,
                       tg__mcp_version v, const char *cursor, size_t cursor_len,
                       const tg__mcp_page_opts *opts, const char *meta_members);

#endif
