/* SPDX-License-Identifier: MIT */
/*
 * main.c - the `toolgate` command: dispatches to one file per command.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: toolgate COMMAND [OPTIONS]\n"
    "\n"
    "Runs the tool calls a language model emitted, safely and concurrently,\n"
    "and renders the results back in the model's wire format.\n"
    "\n"
    "commands:\n"
    "  run [FILE|-]     execute the tool calls of a model turn, print results\n"
    "  tools            print the configured tools' definitions\n"
    "  history          list journaled calls and results, newest first\n"
    "  show ID          print one journaled call and its result\n"
    "  stats            per tool: calls, outcomes, p50/p95/max duration\n"
    "  journal verify   check the journal's hash chain: names the first row\n"
    "                   changed, removed or inserted\n"
    "  validate SCHEMA [FILE|-]  validate JSON against a JSON Schema\n"
    "  policy check [CALL.json|-]  which policy rule decides each call, and "
    "why\n"
    "  artifact list|read|grep|head|tail  read spooled tool outputs\n"
    "  doctor           what protects the tools' subprocesses here\n"
    "  mcp              the MCP servers behind toolgate: list, tools, accept\n"
    "  agent PROMPT     run an agent loop against a model API with the tools\n"
    "  version          print the versions of toolgate and its libraries\n"
    "\n"
    "Every command takes --config FILE (default: $TOOLGATE_CONFIG, else\n"
    "./toolgate.json when present, else the embedded defaults) and --help.\n"
    "exit status: 0 done, 1 --strict and some call failed, 2 usage or\n"
    "unreadable input, 3 invalid configuration, 4 internal failure.\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return EXIT_DONE;
    }
    if (strcmp(cmd, "--version") == 0)
        return cmd_version(argc - 1, argv + 1);
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } commands[] = {{"run", cmd_run},         {"tools", cmd_tools},
                    {"history", cmd_history}, {"show", cmd_show},
                    {"stats", cmd_stats},     {"validate", cmd_validate},
                    {"policy", cmd_policy},   {"artifact", cmd_artifact},
                    {"doctor", cmd_doctor},   {"serve", cmd_serve},
                    {"journal", cmd_journal}, {"mcp", cmd_mcp},
                    {"agent", cmd_agent},     {"version", cmd_version}};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    cli_error("unknown command '%s' (try 'toolgate --help')", cmd);
    return EXIT_USAGE;
}
