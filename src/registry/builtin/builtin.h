/* SPDX-License-Identifier: MIT */
/*
 * builtin.h - the built-in file tools (read_file, list_dir, grep, write_file),
 * in-process handlers confined to the workspace: every path is resolved
 * beneath it (openat2 RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), so "..",
 * absolute paths elsewhere, symlinks that lead outside and toolgate's own
 * files (tg_handler_state_paths) are refused. And `shell`, the one built-in
 * that is a command tool (bash in the sandbox of src/exec/sandbox.c).
 */
#ifndef TG_REGISTRY_BUILTIN_H
#define TG_REGISTRY_BUILTIN_H

#include <string.h>

#include "registry.h"

/* Every built-in tool, once, in the order the embedded defaults register
 * them: X(name, flags, input schema, core, description). The file tools are
 * in-process handlers over a core of read_file.c, list_dir.c, grep.c or
 * write_file.c; shell (TG__BUILTIN_COMMAND) is a command tool, defined
 * whole in shell.c; echo (TG__BUILTIN_INLINE) is a handler of its own on the
 * loop thread (echo.c), and only a configuration that names it gets it
 * (TG__BUILTIN_OPT_IN). Only builtin.c expands the schema and core columns,
 * so this list names them without linking them. */
#define TG__BUILTIN_MAP(X)                                                     \
    X(read_file, 0, tg__read_file_schema, tg__read_file_run,                   \
      "Read a text file in the workspace. Returns its content, or the lines "  \
      "from offset_line on (at most max_lines, at most max_bytes bytes).")     \
    X(list_dir, TG__BUILTIN_JSON_OUT, tg__list_dir_schema, tg__list_dir_run,   \
      "List a directory in the workspace: a JSON array of "                    \
      "{name, type (file|dir|symlink|other), size} sorted by name.")           \
    X(grep, 0, tg__grep_schema, tg__grep_run,                                  \
      "Search files in the workspace for lines matching a regular expression " \
      "(PCRE2). Returns lines as path:LINE:text.")                             \
    X(write_file, TG__BUILTIN_JSON_OUT | TG__BUILTIN_WRITES,                   \
      tg__write_file_schema, tg__write_file_run,                               \
      "Write a file in the workspace (its directory must exist), replacing "   \
      "its content atomically. Returns {path, bytes}.")                        \
    X(shell, TG__BUILTIN_COMMAND, NULL, NULL, NULL)                            \
    X(echo, TG__BUILTIN_INLINE | TG__BUILTIN_OPT_IN, tg__echo_schema, NULL,    \
      "Return the given text unchanged.")

/* Flags of TG__BUILTIN_MAP. WRITES: it changes files, so it is not
 * read-only, is destructive, and is idempotent (the same content twice
 * leaves the same file). */
#define TG__BUILTIN_JSON_OUT 1u /* the output is a JSON value, not text */
#define TG__BUILTIN_WRITES 2u
#define TG__BUILTIN_COMMAND 4u /* a command tool (shell.c), not a handler */
/* an in-process handler that never blocks (echo.c): TG_TOOL_INLINE */
#define TG__BUILTIN_INLINE 8u
/* not among the embedded defaults' builtin_tools: only when named */
#define TG__BUILTIN_OPT_IN 16u

/* The names as a list of C string initializers:
 * {TG__BUILTIN_MAP(TG__BUILTIN_NAME)}. */
#define TG__BUILTIN_NAME(name, flags, schema, core, description) #name,

/* The names joined by ", " for messages (a string literal plus 2: the
 * first name's ", " is skipped). */
#define TG__BUILTIN_LISTED(name, flags, schema, core, description) ", " #name
#define TG__BUILTIN_NAMES (&(TG__BUILTIN_MAP(TG__BUILTIN_LISTED))[2])

/* 1 when `name` is a built-in tool. Inline so that configuration checks do
 * not link the handlers and their file tools' cores. */
static inline int tg__builtin_known(const char *name)
{
    static const char *const names[] = {TG__BUILTIN_MAP(TG__BUILTIN_NAME)};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

/* Adds the built-in tool `name` to reg. TG_ENOTFOUND (with the known names in
 * the message) when there is no such built-in. */
int tg__builtin_add(tg__registry *reg, const char *name, tg_error *err);

/* echo.c: the `echo` built-in's input schema and its handler, which
 * returns the argument `text` as the result's text. */
extern const char tg__echo_schema[];
int tg__echo_handler(tg_handler_ctx *ctx, const char *args_json,
                     size_t args_len, void *user_data);

/* shell.c: adds the `shell` built-in, a command tool running
 * `/bin/bash -c -- {command}` (sandboxed like every command tool). */
int tg__shell_add(tg__registry *reg, tg_error *err);

#endif
