/* SPDX-License-Identifier: MIT */
/*
 * text.h - small helpers shared by the exec layer and its tool sources
 * (text.c): tool output as a JSON string, error results with unbounded
 * messages, the arguments text handed to handlers, the directory a call
 * runs in.
 */
#ifndef TG_EXEC_TEXT_H
#define TG_EXEC_TEXT_H

#include <jansson.h>
#include <stddef.h>

#include "config.h"
#include "record.h"

/* A JSON string of len bytes of text, invalid UTF-8 replaced by U+FFFD.
 * New reference, NULL on out of memory. */
json_t *tg__json_text(const char *data, size_t len);
/* An error result whose message is formatted without a length limit and
 * made valid UTF-8 (tool output may be anything). details taken. NULL on
 * out of memory. */
tg_result *tg__fail(const tg_call *call, tg_execution execution,
                    const char *code, json_t *details_take, const char *fmt,
                    ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* The arguments text a handler receives (borrowed from the call). */
const char *tg__call_args_text(const tg_call *call, size_t *len);
/* The directory a call runs in: context "cwd" (relative to cfg's cwd or
 * the workspace), else cfg's cwd, else the workspace. *cwd is borrowed
 * (config or call) or, when *owned is set, a new string to free. Returns 0
 * or TG_ENOMEM. */
int tg__call_cwd(const tg_config *cfg, const tg_call *call, const char **cwd,
                 char **owned);

#endif
