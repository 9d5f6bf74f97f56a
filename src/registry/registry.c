/* SPDX-License-Identifier: MIT */
/*
 * registry.c - the tools a runtime knows: an array in registration order
 * (the order `toolgate tools` lists them in) and an open-addressing hash
 * table over their names (FNV-1a, linear probing) for O(1) lookup of every
 * call's tool.
 *
 * tg__registry_load lives in builtin/builtin.c, beside the built-in handlers
 * it adds: those call the exec layer's tg_handler_*, and keeping them out of
 * this file lets the registry be linked (and unit-tested) on its own.
 */
#include "registry.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

struct tg_registry {
    tg_tool **tools; /* registration order */
    size_t count, cap;
    size_t *slots; /* index into tools + 1; 0 = empty */
    size_t nslots; /* a power of two, at least twice count */
};

static uint64_t fnv1a(const char *s)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= UINT64_C(1099511628211);
    }
    return h;
}

tg_registry *tg__registry_new(void)
{
    return calloc(1, sizeof(tg_registry));
}

void tg__registry_free(tg_registry *reg)
{
    if (reg == NULL)
        return;
    for (size_t i = 0; i < reg->count; i++)
        tg__tool_free(reg->tools[i]);
    free(reg->tools);
    free(reg->slots);
    free(reg);
}

/* The slot holding `name`, or the empty slot where it would go. */
static size_t probe(const tg_registry *reg, const char *name)
{
    size_t mask = reg->nslots - 1;
    size_t i = (size_t)fnv1a(name) & mask;
    while (reg->slots[i] != 0 &&
           strcmp(reg->tools[reg->slots[i] - 1]->name, name) != 0)
        i = (i + 1) & mask;
    return i;
}

static int rehash(tg_registry *reg, size_t nslots)
{
    size_t *slots = calloc(nslots, sizeof *slots);
    if (slots == NULL)
        return TG_ENOMEM;
    free(reg->slots);
    reg->slots = slots;
    reg->nslots = nslots;
    for (size_t i = 0; i < reg->count; i++)
        reg->slots[probe(reg, reg->tools[i]->name)] = i + 1;
    return 0;
}

const tg_tool *tg__registry_find(const tg_registry *reg, const char *name)
{
    if (reg->nslots == 0 || name == NULL)
        return NULL;
    size_t s = reg->slots[probe(reg, name)];
    return s ? reg->tools[s - 1] : NULL;
}

int tg__registry_add(tg_registry *reg, tg_tool *tool_take, tg_error *err)
{
    int rc;
    if (tg__registry_find(reg, tool_take->name) != NULL) {
        rc = tg__error_set(err, TG_EEXIST,
                           "a tool named '%s' is already registered",
                           tool_take->name);
        goto fail;
    }
    if (reg->count == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 16;
        tg_tool **tools = realloc(reg->tools, cap * sizeof *tools);
        if (tools == NULL) {
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
            goto fail;
        }
        reg->tools = tools;
        reg->cap = cap;
    }
    /* keep the load factor at most 1/2 so probes stay short */
    if ((reg->count + 1) * 2 > reg->nslots &&
        rehash(reg, reg->nslots ? reg->nslots * 2 : 32) != 0) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto fail;
    }
    reg->tools[reg->count] = tool_take;
    reg->slots[probe(reg, tool_take->name)] = reg->count + 1;
    reg->count++;
    return 0;
fail:
    tg__tool_free(tool_take);
    return rc;
}

size_t tg__registry_count(const tg_registry *reg)
{
    return reg->count;
}

const tg_tool *tg__registry_at(const tg_registry *reg, size_t i)
{
    return i < reg->count ? reg->tools[i] : NULL;
}
