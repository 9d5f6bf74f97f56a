/* SPDX-License-Identifier: MIT */
/*
 * cmd_journal.c - `toolgate journal verify`: checks the journal's hash
 * chain (tg_journal_verify) and prints OK with the row count and the head
 * link, or the first row that was changed, removed or inserted, and exits
 * 1 then.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: toolgate journal verify [--journal PATH] [--hmac-key-file F]\n"
    "                               [--config FILE] [--json]\n"
    "\n"
    "Checks the journal's hash chain: each result row's link against its\n"
    "content and the link before it. Prints OK with the number of rows and\n"
    "the last link (record it elsewhere: rows cut off the end leave no\n"
    "trace otherwise), or names the first row that was changed, removed or\n"
    "inserted and exits 1. A journal chained with an HMAC key needs the same\n"
    "--hmac-key-file. --journal defaults to the configuration's journal.\n"
    "--json prints the library's report as one JSON object.\n";

int cmd_journal(int argc, char **argv)
{
    enum { O_JOURNAL = 256, O_KEY, O_CONFIG, O_JSON, O_HELP };
    static const struct option longopts[] = {
        {"journal", required_argument, NULL, O_JOURNAL},
        {"hmac-key-file", required_argument, NULL, O_KEY},
        {"config", required_argument, NULL, O_CONFIG},
        {"json", no_argument, NULL, O_JSON},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0}};
    const char *journal = NULL, *key_file = NULL, *config = NULL;
    int as_json = 0, c;
    if (argc >= 2 && strcmp(argv[1], "--help") == 0) {
        fputs(usage, stdout);
        return EXIT_DONE;
    }
    if (argc < 2 || strcmp(argv[1], "verify") != 0) {
        cli_error("journal: expected 'verify' (try 'toolgate journal "
                  "--help')");
        return EXIT_USAGE;
    }
    argc--;
    argv++;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_JOURNAL:
            journal = optarg;
            break;
        case O_KEY:
            key_file = optarg;
            break;
        case O_CONFIG:
            config = optarg;
            break;
        case O_JSON:
            as_json = 1;
            break;
        case O_HELP:
            fputs(usage, stdout);
            return EXIT_DONE;
        default:
            cli_error("journal verify: unknown or incomplete option '%s'",
                      argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind != argc) {
        cli_error("journal verify takes no operands (try 'toolgate journal "
                  "--help')");
        return EXIT_USAGE;
    }
    tg_config *cfg = NULL;
    tg_error err = {0};
    char *text = NULL;
    json_t *report = NULL;
    int status = cli_load_config(config, &cfg);
    if (status != EXIT_DONE)
        return status;
    if (key_file != NULL &&
        tg_config_set_hmac_key_file(cfg, key_file, &err) != 0) {
        cli_error("%s", err.message);
        status = EXIT_CONFIG;
        goto done;
    }
    if (journal == NULL)
        journal = tg_config_journal(cfg);
    if (journal == NULL) {
        cli_error("the journal is off in this configuration; name one with "
                  "--journal");
        status = EXIT_CONFIG;
        goto done;
    }
    size_t key_len = 0;
    const unsigned char *key = tg_config_hmac_key(cfg, &key_len);
    int rc = tg_journal_verify(journal, key, key_len, &text, &err);
    if (rc != 0) {
        cli_error("%s", err.message);
        status = rc == TG_ENOTFOUND ? EXIT_USAGE : cli_exit_for(rc);
        goto done;
    }
    report = json_loads(text, 0, NULL); /* new ref */
    if (!json_is_object(report)) {
        cli_error("the journal returned an unreadable report");
        status = EXIT_INTERNAL;
        goto done;
    }
    int ok = json_is_true(json_object_get(report, "ok"));
    if (as_json) {
        cli_put_json(text);
    } else if (ok) {
        const char *mac = json_string_value(json_object_get(report, "mac"));
        const char *key_id =
            json_string_value(json_object_get(report, "key_id"));
        fputs("journal ", stdout);
        cli_put_safe(stdout, journal, strlen(journal), 0);
        printf(": OK, %lld result rows chained",
               (long long)json_integer_value(json_object_get(report, "rows")));
        json_int_t first =
            json_integer_value(json_object_get(report, "first_seq"));
        if (first > 0)
            printf(" (seq %lld to %lld)", (long long)first,
                   (long long)json_integer_value(
                       json_object_get(report, "last_seq")));
        printf(", %s%s%s; head %s\n", mac ? mac : "?",
               key_id && *key_id ? " key id " : "", key_id ? key_id : "",
               json_string_value(json_object_get(report, "head")));
        json_int_t pruned =
            json_integer_value(json_object_get(report, "pruned"));
        json_int_t before =
            json_integer_value(json_object_get(report, "before_chain"));
        if (pruned > 0)
            printf("%lld rows before them were deleted by retention\n",
                   (long long)pruned);
        if (before > 0)
            printf("%lld rows were written before the journal had a chain "
                   "and are not covered\n",
                   (long long)before);
    } else {
        const char *problem =
            json_string_value(json_object_get(report, "problem"));
        const char *msg = json_string_value(json_object_get(report, "message"));
        const char *id = json_string_value(json_object_get(report, "id"));
        fputs("journal ", stdout);
        cli_put_safe(stdout, journal, strlen(journal), 0);
        printf(": FAILED: row %s", problem ? problem : "?");
        if (id != NULL) {
            fputs(": call id '", stdout);
            cli_put_safe(stdout, id, strlen(id), 0);
            putchar('\'');
        }
        fputs(": ", stdout);
        if (msg != NULL)
            cli_put_safe(stdout, msg, strlen(msg), 0);
        putchar('\n');
    }
    status = ok ? EXIT_DONE : EXIT_STRICT;
done:
    json_decref(report);
    tg_free(text);
    tg_config_free(cfg);
    return status;
}
