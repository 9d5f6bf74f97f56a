/* SPDX-License-Identifier: MIT */
/*
 * builtin.c - the built-in file tools as in-process handlers, and loading a
 * registry from a configuration.
 *
 * Each handler is a thin wrapper: it decodes the arguments, runs the tool's
 * core (read_file.c, list_dir.c, grep.c) and reports through the public
 * handler API (tg_handler_write / set_json / fail). That API is the handler
 * tools' own interface and lives beside the tool definitions
 * (registry/handler_ctx.c), so the built-ins stay below the exec layer that
 * runs them: they are tools of its handler source, and never call into it.
 * tg__registry_load is here rather than in registry.c because it is the
 * one function that needs every built-in's definition.
 */
#include "builtin.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "source_config.h"
#include "workspace.h"

/* Text a built-in may produce: read_file's 16 MiB cap plus its notes, and
 * far more than grep's 10,000 shown lines or a 100,000-entry listing. */
#define OUT_LIMIT (32u << 20)

typedef int (*core_fn)(tg__fsrun *run, const json_t *args, tg__buf *out,
                       tg_error *err);

typedef struct builtin_def {
    const char *name;
    unsigned flags; /* TG__BUILTIN_* */
    const char *schema;
    core_fn core;
    const char *description;
} builtin_def;

static int ctx_canceled(const void *ud)
{
    return tg_handler_canceled(ud);
}

static int run_core(tg_handler_ctx *ctx, const char *args_json, size_t args_len,
                    core_fn core, bool json_out)
{
    tg_error err = {0};
    tg__buf out;
    tg__buf_init(&out, OUT_LIMIT);
    tg__fsrun run = {.workspace = tg_handler_workspace(ctx),
                     .cwd = tg_handler_cwd(ctx),
                     .canceled = ctx_canceled,
                     .cancel_ud = ctx,
                     .state = tg_handler_state_paths(ctx)};
    /* JSON_ALLOW_NUL: a NUL byte in a path is refused by name, not as a
     * parse error */
    json_error_t jerr;
    json_t *args =
        json_loadb(args_json, args_len, JSON_ALLOW_NUL, &jerr); /* new ref */
    int rc;
    if (args == NULL) {
        tg_handler_fail(ctx, TG__FS_BADARGS, jerr.text, NULL);
        rc = -1;
        goto fail;
    }
    if (core(&run, args, &out, &err) != 0) {
        /* a path that leads out, or into toolgate's own files, is the
         * confinement refusing the call */
        if (run.errcode != NULL && (strcmp(run.errcode, TG__FS_OUTSIDE) == 0 ||
                                    strcmp(run.errcode, TG__FS_STATE) == 0))
            tg_handler_deny(ctx, err.message, NULL);
        else
            tg_handler_fail(ctx, run.errcode ? run.errcode : "TOOL_FAILED",
                            err.message, NULL);
        rc = -1;
        goto fail;
    }
    /* past the output cap the runtime records OUTPUT_LIMIT itself */
    if (json_out)
        tg_handler_set_json(ctx, tg__buf_cstr(&out), out.len, NULL);
    else
        tg_handler_write(ctx, tg__buf_cstr(&out), out.len, NULL);
    rc = 0;
fail:
    json_decref(args);
    tg__buf_cleanup(&out);
    return rc;
}

/* The one handler of every built-in; user_data is its builtin_def. */
static int builtin_handler(tg_handler_ctx *ctx, const char *args_json,
                           size_t args_len, void *user_data)
{
    const builtin_def *b = user_data;
    return run_core(ctx, args_json, args_len, b->core,
                    (b->flags & TG__BUILTIN_JSON_OUT) != 0);
}

#define BUILTIN_DEF(name, flags, schema, core, description)                    \
    {#name, flags, schema, core, description},
static const builtin_def builtins[] = {TG__BUILTIN_MAP(BUILTIN_DEF)};
#undef BUILTIN_DEF

int tg__builtin_add(tg__registry *reg, const char *name, tg_error *err)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        const builtin_def *b = &builtins[i];
        if (strcmp(b->name, name) != 0)
            continue;
        if (b->flags & TG__BUILTIN_COMMAND)
            return tg__shell_add(reg, err); /* the one command built-in */
        tg__tool *tool = NULL;
        /* The file tools are not TG_TOOL_INLINE: they do file I/O, so they
         * run on workers. echo, the one inline built-in, has its own
         * handler (echo.c). */
        bool inl = (b->flags & TG__BUILTIN_INLINE) != 0;
        int rc = tg__tool_new_handler(b->name, b->description, b->schema,
                                      inl ? tg__echo_handler : builtin_handler,
                                      inl ? NULL : (void *)b,
                                      inl ? TG_TOOL_INLINE : 0, &tool, err);
        if (rc)
            return rc;
        int writes = (b->flags & TG__BUILTIN_WRITES) != 0;
        /* echo has no effect at all: the same call twice is the same */
        tool->annotations = json_pack(
            "{sbsbsbsb}", "readOnlyHint", !writes, "destructiveHint", writes,
            "idempotentHint", writes || inl, "openWorldHint", 0); /* new ref */
        if (tool->annotations == NULL) {
            tg__tool_free(tool);
            return tg__error_set(err, TG_ENOMEM, "out of memory");
        }
        return tg__registry_add(reg, tool, err);
    }
    return tg__error_set(err, TG_ENOTFOUND,
                         "no built-in tool named '%s' (known: %s)", name,
                         TG__BUILTIN_NAMES);
}

int tg__registry_load(tg__registry *reg, const tg_config *cfg, tg_error *err)
{
    int rc;
    size_t i;
    json_t *v; /* borrowed */
    json_array_foreach(cfg->tools, i, v)
    {
        char key[32];
        snprintf(key, sizeof key, "tools[%zu]", i);
        tg__tool *tool = NULL;
        if (tg__source_entry(v))
            continue; /* an MCP server: the runtime makes its source */
        if ((rc = tg__tool_from_config(v, key, &tool, err)) ||
            (rc = tg__registry_add(reg, tool, err)))
            return rc;
    }
    json_array_foreach(cfg->builtin_tools, i, v)
    {
        if ((rc = tg__builtin_add(reg, json_string_value(v), err)))
            return rc;
    }
    return 0;
}
