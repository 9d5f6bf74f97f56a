/* SPDX-License-Identifier: MIT */
/*
 * registry.h - the set of tools a runtime knows, looked up by name in O(1).
 * Owns its tools. Built from a configuration (its "tools" entries and the
 * named built-in tools) plus tools registered in C.
 */
#ifndef TG_REGISTRY_REGISTRY_H
#define TG_REGISTRY_REGISTRY_H

#include <stddef.h>

#include "config.h"
#include "tool.h"

typedef struct tg__registry tg__registry;

/* An empty registry; NULL on OOM. */
tg__registry *tg__registry_new(void);
void tg__registry_free(tg__registry *reg);
/* Adds a tool (ownership taken, also on failure). TG_EEXIST when the name is
 * taken. */
int tg__registry_add(tg__registry *reg, tg__tool *tool_take, tg_error *err);
/* The tool named `name`, or NULL. Borrowed, valid while reg lives. */
const tg__tool *tg__registry_find(const tg__registry *reg, const char *name);
size_t tg__registry_count(const tg__registry *reg);
/* A number that changes whenever a tool is added or removed (a changed
 * tool is removed and added again): who keeps a list made from the
 * registry compares it to know the list is stale. */
unsigned long tg__registry_generation(const tg__registry *reg);
/* Takes the tool named `name` out of the registry (lookups and the list no
 * longer see it) but keeps it alive until the registry is freed: calls
 * still running borrow it. Returns the tool (still the registry's), or
 * NULL when there is none. */
tg__tool *tg__registry_remove(tg__registry *reg, const char *name);
/* The i-th tool in registration order (borrowed). */
const tg__tool *tg__registry_at(const tg__registry *reg, size_t i);
/* Adds the config's tools and its built-in tools. */
int tg__registry_load(tg__registry *reg, const tg_config *cfg, tg_error *err);

#endif
