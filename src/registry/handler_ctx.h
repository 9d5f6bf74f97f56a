/* SPDX-License-Identifier: MIT */
/*
 * handler_ctx.h - what an in-process handler tool reports through: the
 * inside of the public tg_handler_ctx, which the tg_handler_* functions of
 * include/toolgate.h fill (handler_ctx.c). It is the handler tools' own
 * interface, so it lives with the tool definitions in the registry, below
 * the exec layer: the built-in tools (builtin/) and any embedder's handler
 * use it without reaching up into exec, and exec's handler source
 * (src/exec/handler.c) makes the context, runs the handler and turns what
 * it reported into a result.
 *
 * Threading: a context is used by one handler on one thread (the loop or a
 * pool worker); only `canceled` is set from the loop thread while a pool
 * handler runs (atomic).
 */
#ifndef TG_REGISTRY_HANDLER_CTX_H
#define TG_REGISTRY_HANDLER_CTX_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "toolgate.h"

/* The handler context (public type tg_handler_ctx). */
struct tg_handler_ctx {
    const tg_call *call;
    const char *cwd;
    const char *workspace;
    const char *const *state; /* tg_handler_state_paths */
    tg__buf out;
    json_t *json; /* the set_json value when its text is not kept (new
                     ref), or NULL */
    /* The set_json text when it is json's compact form already (it becomes
     * the result's payload text): json_small, or the heap when longer;
     * NULL when none. */
    char *json_text;
    size_t json_text_len;
    char json_small[128];
    bool failed;
    bool denied; /* tg_handler_deny: fail_message is the reason */
    char fail_code[64];
    char *fail_message;
    atomic_int canceled;
};

/* Makes c ready for one call: call, cwd, workspace and state (the paths
 * tg_handler_state_paths returns, NULL-terminated) are borrowed and must
 * outlive the handler; text output is capped at out_cap bytes (0: no
 * cap). */
void tg__handler_ctx_init(tg_handler_ctx *c, const tg_call *call,
                          const char *cwd, const char *workspace,
                          const char *const *state, size_t out_cap);
/* Frees what the handler left in c (its output, JSON, failure message). */
void tg__handler_ctx_cleanup(tg_handler_ctx *c);

#endif
