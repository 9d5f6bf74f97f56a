/* SPDX-License-Identifier: MIT */
/*
 * cmd_policy.c - `toolgate policy check [CALL.json|-]`: which rule of the
 * configured policy decides each call of the input (any turn format; a
 * toolgate call record is the plainest), and why. Prints one JSON line per
 * call ({"id","tool","decision","rule","reason","explanation","known_tool"};
 * `jq -r .explanation` prints the explanation as text). Runs nothing.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char policy_usage[] =
    "usage: toolgate policy check [--caller ID] [--config FILE] "
    "[CALL.json|-]\n"
    "\n"
    "Says which rule of the configured policy decides each call of the\n"
    "input and why, without running anything: one JSON line per call\n"
    "({\"id\",\"tool\",\"decision\",\"rule\",\"reason\",\"explanation\"});\n"
    "rule -1 is the default. The input is any turn format.\n";

int cmd_policy(int argc, char **argv)
{
    enum { O_CALLER = 256, O_CONFIG, O_HELP };
    static const struct option longopts[] = {
        {"caller", required_argument, NULL, O_CALLER},
        {"config", required_argument, NULL, O_CONFIG},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0}};
    const char *config = NULL, *caller = NULL;
    int c;
    if (argc < 2 || strcmp(argv[1], "check") != 0) {
        if (argc >= 2 && strcmp(argv[1], "--help") == 0) {
            fputs(policy_usage, stdout);
            return EXIT_DONE;
        }
        cli_error("policy: expected 'policy check [CALL.json|-]'");
        return EXIT_USAGE;
    }
    argc--;
    argv++;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_CALLER:
            caller = optarg;
            break;
        case O_CONFIG:
            config = optarg;
            break;
        case O_HELP:
            fputs(policy_usage, stdout);
            return EXIT_DONE;
        default:
            cli_error("policy check: unknown or incomplete option '%s'",
                      argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (argc - optind > 1) {
        cli_error("policy check: unexpected argument '%s'", argv[optind + 1]);
        return EXIT_USAGE;
    }
    const char *path = optind < argc ? argv[optind] : "-";
    char *text = NULL;
    size_t len = 0;
    int status = cli_read_all(path, CLI_MAX_INPUT, &text, &len);
    if (status != EXIT_DONE)
        return status;
    tg_config *cfg = NULL;
    tg_runtime *rt = NULL;
    tg_turn *turn = NULL;
    tg_error err = {0};
    if ((status = cli_load_config(config, &cfg)) != EXIT_DONE)
        goto done;
    tg_config_set_journal(cfg, NULL, NULL); /* a check records nothing */
    int rc = tg_turn_parse(text, len, "auto", path, &turn, &err);
    if (rc == 0) {
        cli_print_turn_warnings(strcmp(path, "-") ? path : "<stdin>", turn);
        rc = tg_runtime_new(cfg, &rt, &err);
    }
    if (rc == 0 && caller != NULL)
        rc = tg_turn_set_caller(turn, caller, &err);
    for (size_t i = 0; rc == 0 && i < tg_turn_call_count(turn); i++) {
        char *out = NULL;
        rc = tg_runtime_policy_check(rt, tg_turn_call(turn, i), &out, &err);
        if (rc != 0)
            break;
        cli_put_json(out);
        tg_free(out);
    }
    if (rc != 0) {
        cli_error("%s", err.message);
        status = cli_exit_for(rc);
    }
done:
    tg_turn_free(turn);
    tg_runtime_free(rt);
    tg_config_free(cfg);
    free(text);
    return status;
}
