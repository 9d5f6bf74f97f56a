/* SPDX-License-Identifier: MIT */
/*
 * builtin.h - the built-in file tools (read_file, list_dir, grep), in-process
 * handlers confined to the workspace: every path is resolved beneath it
 * (openat2 RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), so "..", absolute paths
 * elsewhere and symlinks that lead outside are refused.
 */
#ifndef TG_REGISTRY_BUILTIN_H
#define TG_REGISTRY_BUILTIN_H

#include "registry.h"

/* Adds the built-in tool `name` to reg. TG_ENOTFOUND (with the known names in
 * the message) when there is no such built-in. */
int tg__builtin_add(tg_registry *reg, const char *name, tg_error *err);

#endif
