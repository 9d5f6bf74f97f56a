/* SPDX-License-Identifier: MIT */
/*
 * cmd_stats.c - `toolgate stats`: per tool, the journaled calls, each
 * outcome, the replays, and p50/p95/max duration, as a table or JSON Lines;
 * the same filters as `history` (--tool, --outcome, --caller, --since).
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char stats_usage[] =
    "usage: toolgate stats [--tool T] [--outcome O] [--caller C]\n"
    "                      [--since TIME] [--json] [--config FILE]\n"
    "\n"
    "Per tool: journaled calls, each outcome, replays, and the p50, p95 and\n"
    "max duration in ms (nearest rank, over the calls that ran; replayed\n"
    "results are counted, not timed). TIME is RFC 3339 or Unix\n"
    "seconds/milliseconds. --json prints one JSON object per tool.\n";

static json_int_t num(const json_t *o, const char *key) /* borrowed */
{
    return json_integer_value(json_object_get(o, key));
}

static void print_ms(const json_t *dur, const char *key) /* borrowed */
{
    const json_t *v = json_object_get(dur, key); /* borrowed */
    if (json_is_number(v))
        printf("  %9.1f", json_number_value(v));
    else
        printf("  %9s", "-");
}

static void print_row(const json_t *rec) /* borrowed */
{
    const json_t *oc = json_object_get(rec, "outcomes");     /* borrowed */
    const json_t *dur = json_object_get(rec, "duration_ms"); /* borrowed */
    /* a tool name is what callers sent: made safe for the terminal */
    cli_put_field(stdout, json_string_value(json_object_get(rec, "tool")), 20);
    printf("  %8" JSON_INTEGER_FORMAT "  %8" JSON_INTEGER_FORMAT
           "  %6" JSON_INTEGER_FORMAT "  %8" JSON_INTEGER_FORMAT
           "  %7" JSON_INTEGER_FORMAT "  %6" JSON_INTEGER_FORMAT
           "  %8" JSON_INTEGER_FORMAT,
           num(rec, "calls"), num(oc, "success"), num(oc, "error"),
           num(oc, "canceled"), num(oc, "timeout"), num(oc, "denied"),
           num(rec, "replayed"));
    print_ms(dur, "p50");
    print_ms(dur, "p95");
    print_ms(dur, "max");
    putchar('\n');
}

int cmd_stats(int argc, char **argv)
{
    tg_history_query q = {0};
    const char *config = NULL;
    int as_json = 0;
    int opt = cli_query_options("stats", stats_usage, argc, argv, &q, NULL,
                                &as_json, &config);
    if (opt != EXIT_DONE)
        return opt < 0 ? EXIT_DONE : opt;
    tg_config *cfg = NULL;
    char *text = NULL;
    int status = cli_load_config(config, &cfg);
    if (status != EXIT_DONE)
        return status;
    const char *path = tg_config_journal(cfg);
    if (path == NULL) {
        cli_error("the journal is off in this configuration");
        tg_config_free(cfg);
        return EXIT_CONFIG;
    }
    tg_error err = {0};
    int rc = tg_journal_stats(path, &q, &text, &err);
    if (rc != 0) {
        cli_error("%s", err.message);
        status = cli_exit_for(rc);
        goto done;
    }
    json_error_t jerr;
    json_t *rows = json_loads(text, 0, &jerr); /* new ref */
    if (!json_is_array(rows)) {
        cli_error("the journal returned unreadable statistics");
        json_decref(rows);
        status = EXIT_INTERNAL;
        goto done;
    }
    if (!as_json && json_array_size(rows) > 0)
        printf("%-20s  %8s  %8s  %6s  %8s  %7s  %6s  %8s  %9s  %9s  %9s\n",
               "TOOL", "CALLS", "SUCCESS", "ERROR", "CANCELED", "TIMEOUT",
               "DENIED", "REPLAYED", "P50 ms", "P95 ms", "MAX ms");
    cli_print_records(text, rows, as_json, print_row);
    json_decref(rows);
done:
    tg_free(text);
    tg_config_free(cfg);
    return status;
}
