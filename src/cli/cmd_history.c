/* SPDX-License-Identifier: MIT */
/*
 * cmd_history.c - `toolgate history` (the journal, newest first, as a table
 * or JSON Lines) and `toolgate show ID` (one call and its matched result).
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char history_usage[] =
    "usage: toolgate history [--tool T] [--outcome O] [--caller C]\n"
    "                        [--since TIME] [--limit N] [--json]\n"
    "\n"
    "       toolgate history --loops | --loop ID [--json]\n"
    "\n"
    "Lists journaled results, newest first (default 20). TIME is RFC 3339 or\n"
    "Unix seconds/milliseconds. --json prints result records as JSON Lines,\n"
    "each with its call under \"call\". --loops lists the agent loops;\n"
    "--loop ID shows one, iteration by iteration, with its calls.\n";

static const char show_usage[] =
    "usage: toolgate show ID [--config FILE]\n"
    "\n"
    "Prints the newest journaled call with this id and its matched result;\n"
    "for the id of an agent loop (loop_...), the loop's transcript.\n";

int cli_journal_path(const char *config, char **out)
{
    tg_config *cfg = NULL;
    int status = cli_load_config(config, &cfg);
    if (status != EXIT_DONE)
        return status;
    const char *path = tg_config_journal(cfg);
    if (path == NULL) {
        cli_error("the journal is off in this configuration");
        tg_config_free(cfg);
        return EXIT_CONFIG;
    }
    *out = strdup(path);
    tg_config_free(cfg);
    return *out ? EXIT_DONE : EXIT_INTERNAL;
}

static void print_row(const json_t *rec) /* borrowed */
{
    const json_t *call = json_object_get(rec, "call"); /* borrowed */
    /* Every cell may hold what a caller sent: each is made safe for the
     * terminal (a call id with ESC or CR in it cannot fake a row). */
    cli_put_field(stdout,
                  json_string_value(json_object_get(rec, "completed_at")), 24);
    fputs("  ", stdout);
    cli_put_field(stdout, json_string_value(json_object_get(rec, "id")), 28);
    fputs("  ", stdout);
    cli_put_field(stdout, json_string_value(json_object_get(rec, "tool")), 16);
    fputs("  ", stdout);
    cli_put_field(stdout, json_string_value(json_object_get(rec, "outcome")),
                  8);
    printf("  %9.1f ms  ",
           json_number_value(json_object_get(rec, "duration_ms")));
    cli_put_field(stdout, json_string_value(json_object_get(call, "caller_id")),
                  0);
    putchar('\n');
}

int cmd_history(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--loops") == 0 || strcmp(argv[i], "--loop") == 0 ||
            strncmp(argv[i], "--loop=", 7) == 0)
            return cli_history_loops(argc, argv);
    tg_history_query q = {0};
    const char *config = NULL;
    int as_json = 0;
    long long limit = 20;
    int opt = cli_query_options("history", history_usage, argc, argv, &q,
                                &limit, &as_json, &config);
    if (opt != EXIT_DONE)
        return opt < 0 ? EXIT_DONE : opt;
    q.limit = (int)limit;
    char *path = NULL, *text = NULL;
    int status = cli_journal_path(config, &path);
    if (status != EXIT_DONE)
        return status;
    tg_error err = {0};
    int rc = tg_journal_history(path, &q, &text, &err);
    if (rc != 0) {
        cli_error("%s", err.message);
        status = cli_exit_for(rc);
        goto done;
    }
    json_error_t jerr;
    json_t *rows = json_loads(text, 0, &jerr); /* new ref */
    if (!json_is_array(rows)) {
        cli_error("the journal returned unreadable history");
        json_decref(rows);
        status = EXIT_INTERNAL;
        goto done;
    }
    if (!as_json && json_array_size(rows) > 0)
        printf("%-24s  %-28s  %-16s  %-8s  %12s  %s\n", "COMPLETED", "ID",
               "TOOL", "OUTCOME", "DURATION", "CALLER");
    cli_print_records(text, rows, as_json, print_row);
    json_decref(rows);
done:
    tg_free(text);
    free(path);
    return status;
}

int cmd_show(int argc, char **argv)
{
    enum { O_CONFIG = 256, O_HELP };
    static const struct option longopts[] = {
        {"config", required_argument, NULL, O_CONFIG},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0}};
    const char *config = NULL;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_CONFIG:
            config = optarg;
            break;
        case O_HELP:
            fputs(show_usage, stdout);
            return EXIT_DONE;
        default:
            cli_error("show: unknown or incomplete option '%s'",
                      argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc) {
        cli_error(
            "show takes exactly one call id (try 'toolgate show --help')");
        return EXIT_USAGE;
    }
    char *path = NULL, *text = NULL;
    int status = cli_journal_path(config, &path);
    if (status != EXIT_DONE)
        return status;
    tg_error err = {0};
    int rc = tg_journal_show(path, argv[optind], &text, &err);
    if (rc == TG_ENOTFOUND && strncmp(argv[optind], "loop_", 5) == 0) {
        status = cli_show_loop(path, argv[optind]);
    } else if (rc != 0) {
        cli_error("%s", err.message);
        status = rc == TG_ENOTFOUND ? EXIT_USAGE : cli_exit_for(rc);
    } else {
        cli_print_pretty(text);
    }
    tg_free(text);
    free(path);
    return status;
}
