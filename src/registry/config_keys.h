/* SPDX-License-Identifier: MIT */
/*
 * config_keys.h - the one table of the keys toolgate.json may hold: every
 * object of the configuration whose members are checked (a section), and
 * each member's type, default and a one-line description. The loaders
 * (config.c, tool.c, source_config.c) accept a member only when this table
 * lists it, and docs/configuration.md's reference is printed from it
 * (tests/tools/config_reference.c), so the reference and what is accepted
 * cannot drift apart (tests/cli/test_docs_config_reference.sh).
 */
#ifndef TG_REGISTRY_CONFIG_KEYS_H
#define TG_REGISTRY_CONFIG_KEYS_H

#include <stdbool.h>

/* One object of the configuration whose members are checked. `id` is its
 * path with "[]" for the entries of an array ("tools[].mcp"); `text` one
 * paragraph for the reference. */
typedef struct tg__config_section {
    const char *id;
    const char *text;
} tg__config_section;

/* One member of a section. */
typedef struct tg__config_key {
    const char *section; /* a tg__config_section id */
    const char *name;
    const char *type;  /* what the value is, as the reference shows it */
    const char *deflt; /* the default, "" when there is none */
    const char *text;  /* one line: what it does */
} tg__config_key;

/* The sections, in the reference's order, ended by an entry whose id is
 * NULL. Static data, never freed. */
extern const tg__config_section tg__config_sections[];

/* Every key, grouped by section in the sections' order, ended by an entry
 * whose section is NULL. Static data, never freed. */
extern const tg__config_key tg__config_keys[];

/* True when `name` is a member the table lists for section `id`. */
bool tg__config_key_known(const char *id, const char *name);

#endif
