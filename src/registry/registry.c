/* SPDX-License-Identifier: MIT */
/*
 * registry.c - the tools a runtime knows: an array in registration order
 * (the order `toolgate tools` lists them in) and a hash table over their
 * names (core/hashmap.h) for O(1) lookup of every call's tool.
 *
 * tg__registry_load lives in builtin/builtin.c, beside the built-in handlers
 * it adds: those call the exec layer's tg_handler_*, and keeping them out of
 * this file lets the registry be linked (and unit-tested) on its own.
 */
#include "registry.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "hashmap.h"

struct tg__registry {
    tg__tool **tools; /* registration order */
    size_t count, cap;
    tg__hmap by_name; /* tool name (the tool's own) -> the tool */
    /* removed tools, kept until the registry is freed */
    tg__tool **gone;
    size_t ngone, capgone;
    unsigned long generation; /* changes with every add and remove */
};

tg__registry *tg__registry_new(void)
{
    return calloc(1, sizeof(tg__registry));
}

void tg__registry_free(tg__registry *reg)
{
    if (reg == NULL)
        return;
    for (size_t i = 0; i < reg->count; i++)
        tg__tool_free(reg->tools[i]);
    free(reg->tools);
    for (size_t i = 0; i < reg->ngone; i++)
        tg__tool_free(reg->gone[i]);
    free(reg->gone);
    tg__hmap_cleanup(&reg->by_name);
    free(reg);
}

const tg__tool *tg__registry_find(const tg__registry *reg, const char *name)
{
    if (name == NULL)
        return NULL;
    tg__hentry *e = tg__hmap_find_str(&reg->by_name, name);
    return e ? e->val.ptr : NULL;
}

int tg__registry_add(tg__registry *reg, tg__tool *tool_take, tg_error *err)
{
    int rc;
    if (reg->count == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 16;
        tg__tool **tools = realloc(reg->tools, cap * sizeof *tools);
        if (tools == NULL) {
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
            goto fail;
        }
        reg->tools = tools;
        reg->cap = cap;
    }
    tg__hentry *e;
    rc = tg__hmap_put_str(&reg->by_name, tool_take->name, &e);
    if (rc == 1) {
        rc = tg__error_set(err, TG_EEXIST,
                           "a tool named '%s' is already registered",
                           tool_take->name);
        goto fail;
    }
    if (rc != 0) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto fail;
    }
    e->val.ptr = tool_take;
    reg->tools[reg->count++] = tool_take;
    reg->generation++;
    return 0;
fail:
    tg__tool_free(tool_take);
    return rc;
}

size_t tg__registry_count(const tg__registry *reg)
{
    return reg->count;
}

const tg__tool *tg__registry_at(const tg__registry *reg, size_t i)
{
    return i < reg->count ? reg->tools[i] : NULL;
}

tg__tool *tg__registry_remove(tg__registry *reg, const char *name)
{
    tg__hentry *e = name ? tg__hmap_find_str(&reg->by_name, name) : NULL;
    if (e == NULL)
        return NULL;
    tg__tool *t = e->val.ptr;
    if (reg->ngone == reg->capgone) {
        size_t cap = reg->capgone ? reg->capgone * 2 : 8;
        tg__tool **g = realloc(reg->gone, cap * sizeof *g);
        if (g == NULL)
            return NULL;
        reg->gone = g;
        reg->capgone = cap;
    }
    tg__hmap_remove(&reg->by_name, e);
    for (size_t i = 0; i < reg->count; i++)
        if (reg->tools[i] == t) {
            memmove(&reg->tools[i], &reg->tools[i + 1],
                    (reg->count - i - 1) * sizeof *reg->tools);
            reg->count--;
            break;
        }
    reg->gone[reg->ngone++] = t;
    reg->generation++;
    return t;
}

unsigned long tg__registry_generation(const tg__registry *reg)
{
    return reg->generation;
}
