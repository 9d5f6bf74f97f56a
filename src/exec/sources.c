/* SPDX-License-Identifier: MIT */
/*
 * sources.c - the table of tool sources: the one place that maps a tool to
 * the source that runs its calls (source.h). A new kind of tool source
 * fills a tg__source_ops in its own file and is added here; nothing else
 * in the scheduler changes. (Not source.c: the interface header stays a
 * leaf that a source below exec includes without reaching this table.)
 */
#include "source.h"

/* The sources, each defined by its own file. */
extern const tg__source_ops tg__command_source;        /* command.c */
extern const tg__source_ops tg__handler_pool_source;   /* handler.c */
extern const tg__source_ops tg__handler_inline_source; /* handler.c */
extern const tg__source_ops tg__remote_source;         /* remote_call.c */

const tg__source_ops *tg__source_of(const tg__tool *tool)
{
    switch (tool->kind) {
    case TG_TOOL_KIND_COMMAND:
        return &tg__command_source;
    case TG_TOOL_KIND_REMOTE:
        return &tg__remote_source;
    case TG_TOOL_KIND_HANDLER:
    default:
        /* a handler that never blocks runs on the loop thread */
        return (tool->flags & TG_TOOL_INLINE) ? &tg__handler_inline_source
                                              : &tg__handler_pool_source;
    }
}
