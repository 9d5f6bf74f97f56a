/* SPDX-License-Identifier: MIT */
/*
 * shape.h - a tool's successful result made what the tool declares
 * (shape.c): its "output" ("json", "mcp-content") and "output_schema".
 * The scheduler passes every result a source reports through it.
 */
#ifndef TG_EXEC_SHAPE_H
#define TG_EXEC_SHAPE_H

#include "record.h"
#include "source.h"

/* Calls done(ctx, r') with r (taken; NULL: out of memory) shaped: a
 * success of a tool with a declared output is parsed as JSON and checked
 * against its output schema, or read as MCP content blocks; anything else
 * passes unchanged. Calls done at once, or later from the loop thread when
 * a costly schema check went to the thread pool (call and tool must live
 * until then). */
void tg__shape(const tg__source_env *env, const tg_call *call,
               const tg__tool *tool, tg_result *r,
               void (*done)(void *ctx, tg_result *r), void *ctx);

#endif
