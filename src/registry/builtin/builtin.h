/* SPDX-License-Identifier: MIT */
/*
 * builtin.h - the built-in file tools (read_file, list_dir, grep, write_file),
 * in-process handlers confined to the workspace: every path is resolved
 * beneath it
 * (openat2 RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), so "..", absolute paths
 * elsewhere and symlinks that lead outside are refused. And `shell`, the one
 * built-in that is a command tool (bash in the sandbox of src/exec/sandbox.c).
 */
#ifndef TG_REGISTRY_BUILTIN_H
#define TG_REGISTRY_BUILTIN_H

#include <string.h>

#include "registry.h"

/* The names of the built-in tools, for messages. */
#define TG__BUILTIN_NAMES "read_file, list_dir, grep, write_file, shell"

/* 1 when `name` is a built-in tool. Inline so that configuration checks do
 * not link the handlers (which need the exec layer's tg_handler_*). */
static inline int tg__builtin_known(const char *name)
{
    return strcmp(name, "read_file") == 0 || strcmp(name, "list_dir") == 0 ||
           strcmp(name, "grep") == 0 || strcmp(name, "write_file") == 0 ||
           strcmp(name, "shell") == 0;
}

/* Adds the built-in tool `name` to reg. TG_ENOTFOUND (with the known names in
 * the message) when there is no such built-in. */
int tg__builtin_add(tg_registry *reg, const char *name, tg_error *err);

/* shell.c: adds the `shell` built-in, a command tool running
 * `/bin/bash -c -- {command}` (sandboxed like every command tool). */
int tg__shell_add(tg_registry *reg, tg_error *err);

#endif
