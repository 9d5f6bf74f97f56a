/* SPDX-License-Identifier: MIT */
/*
 * cmd_version.c - `toolgate version [--json]` and `toolgate --version`:
 * toolgate's version, then the run-time versions of the libraries it runs
 * with, as the library reports them (tg_versions_json).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char version_usage[] =
    "usage: toolgate version [--json]\n"
    "       toolgate --version\n"
    "\n"
    "Prints toolgate's version, then one line per library it runs with\n"
    "(jansson, libuv, SQLite, OpenSSL, PCRE2, libcurl, libmicrohttpd): the\n"
    "version that is loaded, from the library itself. --json prints one\n"
    "JSON object of the same names and versions.\n";

int cmd_version(int argc, char **argv)
{
    int as_json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            as_json = 1;
        } else if (strcmp(argv[i], "--help") == 0) {
            fputs(version_usage, stdout);
            return EXIT_DONE;
        } else {
            cli_error("version: unknown option or argument '%s'", argv[i]);
            return EXIT_USAGE;
        }
    }
    char *text = NULL;
    tg_error err = {0};
    int rc = tg_versions_json(&text, &err);
    if (rc != 0) {
        cli_error("version: %s", err.message);
        return cli_exit_for(rc);
    }
    json_t *v = json_loads(text, 0, NULL); /* new ref */
    tg_free(text);
    text = NULL;
    if (v == NULL)
        goto oom;
    if (as_json) {
        text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (text == NULL)
            goto oom;
        cli_put_json(text);
    } else {
        /* "toolgate 0.1.0", then each library indented under it. */
        const char *name;
        json_t *ver; /* borrowed */
        json_object_foreach(v, name, ver)
        {
            const char *indent = strcmp(name, "toolgate") == 0 ? "" : "  ";
            printf("%s%s %s\n", indent, name, json_string_value(ver));
        }
    }
    free(text);
    json_decref(v);
    return EXIT_DONE;
oom:
    json_decref(v);
    cli_error("version: out of memory");
    return EXIT_INTERNAL;
}
