/* SPDX-License-Identifier: MIT */
/* cmd_mcp.c - `toolgate mcp list|tools|accept`: the MCP servers of the
 * configuration (tool sources), started and asked for their tools:
 *   list [--json]       each source's state, protocol, server, tools, what
 *                       their pins hold and what sanitizing found
 *   tools SOURCE        the tool definitions as the server sent them
 *   accept TOOL [--dry-run]
 *                       the diff of a held tool's definition, then accepts
 *                       it (its pin becomes the served definition) */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char mcp_usage[] =
    "usage: toolgate mcp list [--json] [--config FILE]\n"
    "       toolgate mcp tools SOURCE [--config FILE]\n"
    "       toolgate mcp accept TOOL [--dry-run] [--config FILE]\n"
    "\n"
    "The MCP servers of the configuration (\"tools\" entries with \"mcp\"),\n"
    "each started and listed: list shows their state, protocol version,\n"
    "server, tools (enabled, held by their pin, or disabled, with why) and\n"
    "what was stripped from the definitions; tools prints a server's tool\n"
    "definitions as it sent them; accept shows how a held tool's definition\n"
    "differs from its pin and accepts it (--dry-run: only shows).\n";

/* The sources' JSON array (new ref), every one started and waited for. */
static int sources(tg_runtime *rt, json_t **out, tg_error *err)
{
    char *text = NULL;
    int rc = tg_runtime_sources_wait(rt, 0, err);
    if (rc == 0)
        rc = tg_runtime_sources(rt, &text, err);
    if (rc != 0)
        return rc;
    *out = json_loads(text, 0, NULL);
    tg_free(text);
    return *out ? 0 : TG_ENOMEM;
}

static void print_list(const json_t *a)
{
    size_t i;
    json_t *s; /* borrowed */
    json_array_foreach(a, i, s)
    {
        const json_t *server = json_object_get(s, "server");
        printf("%s  %s  %s  protocol %s  server %s %s  pin %s%s\n",
               json_string_value(json_object_get(s, "name")),
               json_string_value(json_object_get(s, "transport")),
               json_string_value(json_object_get(s, "state")),
               json_string_value(json_object_get(s, "protocol"))
                   ? json_string_value(json_object_get(s, "protocol"))
                   : "-",
               json_string_value(json_object_get(server, "name"))
                   ? json_string_value(json_object_get(server, "name"))
                   : "-",
               json_string_value(json_object_get(server, "version"))
                   ? json_string_value(json_object_get(server, "version"))
                   : "",
               json_string_value(json_object_get(s, "pin")),
               json_is_true(json_object_get(s, "trusted")) ? "  trusted" : "");
        const char *e = json_string_value(json_object_get(s, "error"));
        if (e != NULL) {
            fputs("  error: ", stdout);
            cli_put_safe(stdout, e, strlen(e), 0);
            fputc('\n', stdout);
        }
        size_t k;
        json_t *t; /* borrowed */
        json_array_foreach(json_object_get(s, "tools"), k, t)
        {
            printf("  %-40s %-8s",
                   json_string_value(json_object_get(t, "name")),
                   json_string_value(json_object_get(t, "state")));
            const char *pin = json_string_value(json_object_get(t, "pin"));
            if (pin != NULL)
                printf("  pin %s", pin);
            const json_t *flags = json_object_get(t, "flags");
            if (json_array_size(flags) > 0) {
                char *f = json_dumps(flags, JSON_COMPACT);
                fputs("  flagged ", stdout);
                if (f != NULL)
                    cli_put_safe(stdout, f, strlen(f), 0);
                free(f);
            }
            const char *why = json_string_value(json_object_get(t, "reason"));
            if (why != NULL) {
                fputs("\n      ", stdout);
                cli_put_safe(stdout, why, strlen(why), 0);
            }
            fputc('\n', stdout);
        }
    }
}

/* The runtime of the configuration (the journal kept: it holds the
 * pins). */
static int open_runtime(const char *config, tg_config **cfg, tg_runtime **rt)
{
    int status = cli_load_config(config, cfg);
    if (status != EXIT_DONE)
        return status;
    tg_error err = {0};
    int rc = tg_runtime_new(*cfg, rt, &err);
    if (rc != 0) {
        cli_error("%s", err.message);
        return cli_exit_for(rc);
    }
    return EXIT_DONE;
}

int cmd_mcp(int argc, char **argv)
{
    enum { O_CONFIG = 256, O_JSON, O_DRY, O_HELP };
    static const struct option longopts[] = {
        {"config", required_argument, NULL, O_CONFIG},
        {"json", no_argument, NULL, O_JSON},
        {"dry-run", no_argument, NULL, O_DRY},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0}};
    const char *config = NULL;
    int as_json = 0, dry = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_CONFIG:
            config = optarg;
            break;
        case O_JSON:
            as_json = 1;
            break;
        case O_DRY:
            dry = 1;
            break;
        case O_HELP:
            fputs(mcp_usage, stdout);
            return EXIT_DONE;
        default:
            cli_error("mcp: unknown or incomplete option '%s'",
                      argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    const char *sub = optind < argc ? argv[optind] : NULL;
    const char *arg = optind + 1 < argc ? argv[optind + 1] : NULL;
    int want = sub && strcmp(sub, "list") == 0 ? 1 : 2;
    if (sub == NULL ||
        (strcmp(sub, "list") != 0 && strcmp(sub, "tools") != 0 &&
         strcmp(sub, "accept") != 0) ||
        argc - optind != want) {
        cli_error("mcp: expected list, tools SOURCE or accept TOOL (see "
                  "toolgate mcp --help)");
        return EXIT_USAGE;
    }
    tg_config *cfg = NULL;
    tg_runtime *rt = NULL;
    tg_error err = {0};
    json_t *a = NULL;
    char *diff = NULL;
    int status = open_runtime(config, &cfg, &rt);
    if (status != EXIT_DONE)
        goto done;
    int rc = 0;
    if (strcmp(sub, "accept") == 0) {
        rc = tg_runtime_source_accept(rt, arg, !dry, &diff, &err);
        if (rc == 0) {
            cli_put_safe(stdout, diff, strlen(diff), TG_TERMINAL_KEEP_LINES);
            printf("%s %s\n", dry ? "would accept" : "accepted", arg);
        }
    } else if ((rc = sources(rt, &a, &err)) == 0 && strcmp(sub, "list") == 0) {
        if (as_json) {
            char *t = json_dumps(a, JSON_COMPACT);
            rc = t ? cli_put_json(t) : TG_ENOMEM;
            free(t);
        } else {
            print_list(a);
        }
    } else if (rc == 0) {
        size_t i;
        json_t *s, *found = NULL; /* borrowed */
        json_array_foreach(a, i, s)
        {
            if (strcmp(json_string_value(json_object_get(s, "name")), arg) == 0)
                found = s;
        }
        if (found == NULL) {
            cli_error("mcp tools: no MCP source named '%s'", arg);
            status = EXIT_USAGE;
            goto done;
        }
        json_t *defs = json_object_get(found, "definitions"); /* borrowed */
        char *t = defs ? json_dumps(defs, JSON_COMPACT) : strdup("[]");
        rc = t ? cli_put_json(t) : TG_ENOMEM;
        free(t);
    }
    if (rc != 0) {
        cli_error("%s", err.message[0] ? err.message : "out of memory");
        status = cli_exit_for(rc);
    }
done:
    tg_free(diff);
    json_decref(a);
    tg_runtime_free(rt);
    tg_config_free(cfg);
    return status;
}
