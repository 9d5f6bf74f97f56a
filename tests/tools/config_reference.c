/* SPDX-License-Identifier: MIT */
/*
 * config_reference.c - prints the configuration reference of
 * docs/configuration.md (the part between its "generated" markers) from the
 * table the loaders validate against (src/registry/config_keys.c).
 * tests/cli/test_docs_config_reference.sh compares its output with the
 * document; scripts/gen-config-reference writes it there.
 *
 * Usage: config_reference   (the markdown on stdout, exit 0)
 */
#include <stdio.h>
#include <string.h>

#include "config_keys.h"

/* The dotted path a key is written as: "tools[].mcp.url". A section's id
 * may end with a note in parentheses ("tools[] (MCP source)"): not part of
 * the path. */
static void print_path(const char *section, const char *name)
{
    const char *note = strstr(section, " (");
    size_t n = note ? (size_t)(note - section) : strlen(section);
    if (n > 0)
        printf("`%.*s.%s`", (int)n, section, name);
    else
        printf("`%s`", name);
}

int main(void)
{
    printf("<!-- BEGIN config reference: generated from "
           "src/registry/config_keys.c by scripts/gen-config-reference; "
           "do not edit -->\n");
    for (const tg__config_section *s = tg__config_sections; s->id; s++) {
        if (s->id[0] == '\0')
            printf("\n### The top level\n");
        else
            printf("\n### `%s`\n", s->id);
        printf("%s\n\n| key | value | default | what it does |\n"
               "|---|---|---|---|\n",
               s->text);
        size_t n = 0;
        for (const tg__config_key *k = tg__config_keys; k->section; k++) {
            if (strcmp(k->section, s->id) != 0)
                continue;
            printf("| ");
            print_path(k->section, k->name);
            printf(" | %s | %s | %s |\n", k->type, k->deflt[0] ? k->deflt : "-",
                   k->text);
            n++;
        }
        if (n == 0) {
            fprintf(stderr, "config_reference: section '%s' has no keys\n",
                    s->id);
            return 1;
        }
    }
    /* a key whose section is not in the list would be accepted and never
     * documented */
    for (const tg__config_key *k = tg__config_keys; k->section; k++) {
        const tg__config_section *s = tg__config_sections;
        while (s->id && strcmp(s->id, k->section) != 0)
            s++;
        if (s->id == NULL) {
            fprintf(stderr,
                    "config_reference: key '%s' is in section '%s', which "
                    "is not in tg__config_sections\n",
                    k->name, k->section);
            return 1;
        }
    }
    printf("\n<!-- END config reference -->\n");
    return 0;
}
