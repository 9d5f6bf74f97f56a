/* SPDX-License-Identifier: MIT */
/* cmd_tools.c - `toolgate tools [--to FORMAT]`: the configured tools'
 * definitions in a wire format's shape (default mcp), the tools of the MCP
 * servers behind toolgate included (each started and listed first). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char tools_usage[] =
    "usage: toolgate tools [--to FORMAT] [--config FILE]\n"
    "\n"
    "Prints the configured tools' definitions: mcp (default, a tools/list\n"
    "result), openai-chat, openai-responses, anthropic, gemini, toolgate.\n";

int cmd_tools(int argc, char **argv)
{
    enum { O_TO = 256, O_CONFIG, O_HELP };
    static const struct option longopts[] = {
        {"to", required_argument, NULL, O_TO},
        {"config", required_argument, NULL, O_CONFIG},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0}};
    const char *to = NULL, *config = NULL;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_TO:
            to = optarg;
            break;
        case O_CONFIG:
            config = optarg;
            break;
        case O_HELP:
            fputs(tools_usage, stdout);
            return EXIT_DONE;
        default:
            cli_error("tools: unknown or incomplete option '%s'",
                      argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_error("tools: unexpected argument '%s'", argv[optind]);
        return EXIT_USAGE;
    }
    tg_config *cfg = NULL;
    int status = cli_load_config(config, &cfg);
    if (status != EXIT_DONE)
        return status;
    /* Listing tools needs the journal only for the pins of MCP servers. */
    tg_config *with_journal = NULL;
    if (cli_load_config(config, &with_journal) != EXIT_DONE) {
        tg_config_free(cfg);
        return EXIT_CONFIG;
    }
    tg_config_set_journal(cfg, NULL, NULL);
    tg_runtime *rt = NULL;
    tg_error err = {0};
    char *out = NULL;
    int rc = tg_runtime_new(cfg, &rt, &err);
    if (rc == 0 && (rc = tg_runtime_sources(rt, &out, &err)) == 0 &&
        strcmp(out, "[]") != 0) {
        tg_runtime_free(rt);
        rt = NULL;
        rc = tg_runtime_new(with_journal, &rt, &err);
    }
    tg_free(out);
    out = NULL;
    tg_config_free(with_journal);
    /* MCP servers behind toolgate are asked for their tools first */
    if (rc == 0)
        rc = tg_runtime_sources_wait(rt, 0, &err);
    if (rc == 0)
        rc = tg_runtime_tools(rt, to, &out, &err);
    if (rc != 0) {
        cli_error("%s", err.message);
        status = cli_exit_for(rc);
    } else {
        cli_put_safe(stdout, out, strlen(out), TG_TERMINAL_JSON);
    }
    tg_free(out);
    tg_runtime_free(rt);
    tg_config_free(cfg);
    return status;
}
