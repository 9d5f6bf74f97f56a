/* SPDX-License-Identifier: MIT */
/*
 * cmd_validate.c - `toolgate validate SCHEMA_FILE [INSTANCE_FILE|-]`: JSON
 * against a JSON Schema (docs/guide.md). One instance: nothing and exit 0
 * when valid, one {"path","keyword","message"} line per violation and exit
 * 1 when not. --lines: JSON Lines instances, `true` or `false` per line,
 * exit 0. A schema that is not JSON or not a schema exits 2.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char validate_usage[] =
    "usage: toolgate validate [OPTIONS] SCHEMA_FILE [INSTANCE_FILE|-]\n"
    "\n"
    "Validates JSON (default: stdin) against a JSON Schema. Prints nothing\n"
    "and exits 0 when valid; prints one JSON line per violation\n"
    "({\"path\",\"keyword\",\"message\"}) and exits 1 when not.\n"
    "\n"
    "  --lines                 the input is JSON Lines: print true or false\n"
    "                          per line (blank lines are skipped), exit 0\n"
    "  --draft 2020-12|2019-09|7  draft of a schema without $schema\n"
    "                          (default 2020-12)\n"
    "  --format-assert         check `format` instead of treating it as an\n"
    "                          annotation\n"
    "  --remote PREFIX=DIR     read $refs to URLs under PREFIX from files in\n"
    "                          DIR (repeatable; nothing is fetched). The\n"
    "                          metaschemas of the three drafts and their\n"
    "                          vocabularies are built in\n"
    "\n"
    "exit status: 0 valid (or --lines), 1 invalid, 2 usage error or a\n"
    "schema that is not JSON or not a schema, 4 internal failure.\n";

#define MAX_REMOTES 32

/* Validates each line of text; prints true/false per non-blank line. */
static int validate_lines(const tg_schema *schema, const char *name, char *text,
                          size_t len)
{
    size_t lineno = 0;
    char *p = text, *end = text + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        lineno++;
        size_t k = 0;
        while (k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r'))
            k++;
        if (k < n) {
            tg_error err = {0};
            int rc = tg_schema_validate(schema, p, n, NULL, &err);
            if (rc < 0 && rc != TG_EPARSE && rc != TG_ELIMIT) {
                cli_error("%s:%zu: %s", name, lineno, err.message);
                return cli_exit_for(rc);
            }
            /* A line that is not JSON, or hits a limit, is not valid; say
             * why on stderr and keep one answer per line on stdout. */
            if (rc < 0)
                cli_error("%s:%zu: %s", name, lineno, err.message);
            fputs(rc == 1 ? "true\n" : "false\n", stdout);
        }
        p += n + (nl != NULL);
    }
    return EXIT_DONE;
}

int cmd_validate(int argc, char **argv)
{
    enum { O_LINES = 256, O_DRAFT, O_FORMAT, O_REMOTE, O_CONFIG, O_HELP };
    static const struct option longopts[] = {
        {"lines", no_argument, NULL, O_LINES},
        {"draft", required_argument, NULL, O_DRAFT},
        {"format-assert", no_argument, NULL, O_FORMAT},
        {"remote", required_argument, NULL, O_REMOTE},
        {"config", required_argument, NULL, O_CONFIG},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0}};
    tg_schema_options opts = {TG_SCHEMA_DRAFT_2020_12, 0, NULL, 0};
    tg_schema_remote remotes[MAX_REMOTES];
    char *remote_text[MAX_REMOTES];
    size_t nremotes = 0;
    int lines = 0, c, status = EXIT_USAGE;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_LINES:
            lines = 1;
            break;
        case O_DRAFT:
            if (strcmp(optarg, "2020-12") == 0)
                opts.draft = TG_SCHEMA_DRAFT_2020_12;
            else if (strcmp(optarg, "2019-09") == 0)
                opts.draft = TG_SCHEMA_DRAFT_2019_09;
            else if (strcmp(optarg, "7") == 0 || strcmp(optarg, "07") == 0)
                opts.draft = TG_SCHEMA_DRAFT_7;
            else {
                cli_error("validate: --draft '%s': expected 2020-12, "
                          "2019-09 or 7",
                          optarg);
                goto done;
            }
            break;
        case O_FORMAT:
            opts.format_assert = 1;
            break;
        case O_REMOTE: {
            char *eq = strchr(optarg, '=');
            if (eq == NULL || eq == optarg || eq[1] == '\0') {
                cli_error("validate: --remote '%s': expected "
                          "URL_PREFIX=DIR",
                          optarg);
                goto done;
            }
            if (nremotes == MAX_REMOTES) {
                cli_error("validate: at most %d --remote options", MAX_REMOTES);
                goto done;
            }
            char *copy = strdup(optarg);
            if (copy == NULL) {
                status = EXIT_INTERNAL;
                goto done;
            }
            copy[eq - optarg] = '\0';
            remote_text[nremotes] = copy;
            remotes[nremotes].prefix = copy;
            remotes[nremotes].dir = copy + (eq - optarg) + 1;
            nremotes++;
            break;
        }
        case O_CONFIG:
            break; /* validation needs no configuration */
        case O_HELP:
            fputs(validate_usage, stdout);
            status = EXIT_DONE;
            goto done;
        default:
            cli_error("validate: unknown or incomplete option '%s'",
                      argv[optind - 1]);
            goto done;
        }
    }
    if (optind >= argc || argc - optind > 2) {
        cli_error(optind >= argc ? "validate: no schema file given"
                                 : "validate: unexpected argument '%s'",
                  argv[argc - 1]);
        goto done;
    }
    opts.remotes = remotes;
    opts.nremotes = nremotes;
    const char *schema_path = argv[optind];
    const char *instance_path = optind + 1 < argc ? argv[optind + 1] : "-";

    char *schema_text = NULL, *instance = NULL;
    size_t schema_len = 0, instance_len = 0;
    if ((status = cli_read_all(schema_path, CLI_MAX_INPUT, &schema_text,
                               &schema_len)) != EXIT_DONE)
        goto done;
    tg_schema *schema = NULL;
    tg_error err = {0};
    int rc = tg_schema_compile(schema_text, schema_len, &opts, &schema, &err);
    free(schema_text);
    if (rc != 0) {
        cli_error("%s: %s", schema_path, err.message);
        /* Not JSON, not a schema or an unresolvable $ref: the user's
         * input is wrong (docs/guide.md: exit 2). */
        status = rc == TG_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        goto done;
    }
    if ((status = cli_read_all(instance_path, CLI_MAX_INPUT, &instance,
                               &instance_len)) != EXIT_DONE) {
        tg_schema_free(schema);
        goto done;
    }
    const char *name = strcmp(instance_path, "-") == 0 ? "-" : instance_path;
    if (lines) {
        status = validate_lines(schema, name, instance, instance_len);
    } else {
        char *violations = NULL;
        rc = tg_schema_validate(schema, instance, instance_len, &violations,
                                &err);
        if (rc == 1)
            status = EXIT_DONE;
        else if (rc == 0) {
            cli_put_safe(stdout, violations, strlen(violations),
                         TG_TERMINAL_JSON);
            status = EXIT_STRICT;
        } else {
            cli_error("%s: %s", name, err.message);
            status = rc == TG_ELIMIT ? EXIT_STRICT : cli_exit_for(rc);
        }
        tg_free(violations);
    }
    free(instance);
    tg_schema_free(schema);
done:
    for (size_t i = 0; i < nremotes; i++)
        free(remote_text[i]);
    return status;
}
