/* SPDX-License-Identifier: MIT */
/*
 * cmd_doctor.c - `toolgate doctor [--json]`: what protection the tools'
 * subprocesses run under here (bubblewrap and user namespaces, network
 * isolation, the process limit and the rlimits, the environment allowlist),
 * whether the journal, the spool and the workspace are writable, and what
 * keeps tools from toolgate's own files. A
 * report, not a check: it exits 0 whatever it finds (3 for a configuration
 * that cannot be loaded).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char doctor_usage[] =
    "usage: toolgate doctor [--json] [--config FILE]\n"
    "\n"
    "Reports what protects the tools' subprocesses here: bubblewrap (found,\n"
    "working, its version) and user namespaces, network isolation, the\n"
    "process limit, the rlimits, the environment allowlist and the\n"
    "variables withheld as secrets (names only), whether the journal, the\n"
    "spool directory and the workspace are writable, what keeps tools from\n"
    "toolgate's own files and which tools nothing does (those outside the\n"
    "sandbox), and each command tool's sandbox. --json prints one JSON\n"
    "object.\n";

int cmd_doctor(int argc, char **argv)
{
    enum { O_JSON = 256, O_CONFIG, O_HELP };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, O_JSON},
        {"config", required_argument, NULL, O_CONFIG},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0}};
    const char *config = NULL;
    int json = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_JSON:
            json = 1;
            break;
        case O_CONFIG:
            config = optarg;
            break;
        case O_HELP:
            fputs(doctor_usage, stdout);
            return EXIT_DONE;
        default:
            cli_error("doctor: unknown or incomplete option '%s'",
                      argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_error("doctor: unexpected argument '%s'", argv[optind]);
        return EXIT_USAGE;
    }
    tg_config *cfg = NULL;
    int status = cli_load_config(config, &cfg);
    if (status != EXIT_DONE)
        return status;
    tg_runtime *rt = NULL;
    tg_error err = {0};
    char *out = NULL;
    int rc = tg_runtime_new(cfg, &rt, &err);
    if (rc == TG_EJOURNAL) {
        /* An unwritable journal is one of the findings: say it, and
         * report the rest without it. */
        cli_error("doctor: the journal cannot be opened: %s", err.message);
        tg_config_set_journal(cfg, NULL, NULL);
        rc = tg_runtime_new(cfg, &rt, &err);
    }
    if (rc == 0)
        rc = tg_runtime_doctor(rt, json, &out, &err);
    if (rc != 0) {
        cli_error("%s", err.message);
        status = cli_exit_for(rc);
    } else {
        /* The text report is already safe (its fields were escaped as it
         * was made); the escape changes nothing in safe text, and keeps a
         * report from another library build honest too. */
        if (json)
            cli_put_json(out);
        else
            cli_put_safe(stdout, out, strlen(out), TG_TERMINAL_KEEP_LINES);
    }
    tg_free(out);
    tg_runtime_free(rt);
    tg_config_free(cfg);
    return status;
}
