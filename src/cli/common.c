/* SPDX-License-Identifier: MIT */
/*
 * common.c - helpers every command uses: error printing, exit statuses,
 * reading input with a size cap, loading the configuration, integer options.
 */
#include "cli.h"

#include <getopt.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cli_error(const char *fmt, ...)
{
    va_list ap;
    fputs("toolgate: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void cli_print_turn_warnings(const char *name, const tg_turn *turn)
{
    for (size_t i = 0; i < tg_turn_warning_count(turn); i++)
        cli_error("%s: warning: %s", name, tg_turn_warning(turn, i));
}

int cli_exit_for(int code)
{
    switch (code) {
    case 0:
        return EXIT_DONE;
    case TG_EPARSE:
    case TG_EFORMAT:
    case TG_EINVAL:
    case TG_ENOTFOUND:
        return EXIT_USAGE;
    case TG_ECONFIG:
    case TG_ESCHEMA:
    case TG_EEXIST:
        return EXIT_CONFIG;
    default:
        return EXIT_INTERNAL;
    }
}

int cli_read_all(const char *path, size_t limit, char **out, size_t *out_len)
{
    int from_stdin = path == NULL || strcmp(path, "-") == 0;
    const char *name = from_stdin ? "<stdin>" : path;
    FILE *f = from_stdin ? stdin : fopen(path, "rb");
    if (f == NULL) {
        cli_error("cannot read %s: %s", name, strerror(errno));
        return EXIT_USAGE;
    }
    size_t cap = 64 * 1024, len = 0;
    char *buf = malloc(cap + 1);
    int status = EXIT_DONE;
    while (buf != NULL) {
        if (len == cap) {
            if (cap >= limit) {
                cli_error("%s is larger than %zu bytes", name, limit);
                status = EXIT_USAGE;
                break;
            }
            size_t ncap = cap * 2 > limit ? limit : cap * 2;
            char *grown = realloc(buf, ncap + 1);
            if (grown == NULL)
                break;
            buf = grown;
            cap = ncap;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f)) {
                cli_error("cannot read %s: %s", name, strerror(errno));
                status = EXIT_USAGE;
            }
            break;
        }
    }
    if (!from_stdin)
        fclose(f);
    if (buf == NULL) {
        cli_error("out of memory reading %s", name);
        return EXIT_INTERNAL;
    }
    if (status != EXIT_DONE) {
        free(buf);
        return status;
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    return EXIT_DONE;
}

int cli_load_config(const char *path, tg_config **out)
{
    tg_config *cfg = tg_config_new();
    if (cfg == NULL) {
        cli_error("out of memory");
        return EXIT_INTERNAL;
    }
    if (path == NULL)
        path = getenv("TOOLGATE_CONFIG");
    if ((path == NULL || *path == '\0') && access("toolgate.json", F_OK) == 0)
        path = "toolgate.json";
    if (path != NULL && *path != '\0') {
        tg_error err = {0};
        int rc = tg_config_load_file(cfg, path, &err);
        if (rc != 0) {
            cli_error("%s", err.message);
            tg_config_free(cfg);
            return rc == TG_ENOMEM ? EXIT_INTERNAL : EXIT_CONFIG;
        }
    }
    *out = cfg;
    return EXIT_DONE;
}

int cli_parse_int(const char *opt, const char *text, long long min,
                  long long max, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min || v > max) {
        cli_error("%s takes a whole number from %lld to %lld, got '%s'", opt,
                  min, max, text);
        return EXIT_USAGE;
    }
    *out = v;
    return EXIT_DONE;
}

int cli_query_options(const char *cmd, const char *usage, int argc, char **argv,
                      tg_history_query *q, long long *limit, int *as_json,
                      const char **config)
{
    enum {
        O_TOOL = 256,
        O_OUTCOME,
        O_CALLER,
        O_SINCE,
        O_LIMIT,
        O_JSON,
        O_CONFIG,
        O_HELP
    };
    static const struct option with_limit[] = {
        {"tool", required_argument, NULL, O_TOOL},
        {"outcome", required_argument, NULL, O_OUTCOME},
        {"caller", required_argument, NULL, O_CALLER},
        {"since", required_argument, NULL, O_SINCE},
        {"json", no_argument, NULL, O_JSON},
        {"config", required_argument, NULL, O_CONFIG},
        {"help", no_argument, NULL, O_HELP},
        {"limit", required_argument, NULL, O_LIMIT},
        {NULL, 0, NULL, 0}};
    static const struct option without_limit[] = {
        {"tool", required_argument, NULL, O_TOOL},
        {"outcome", required_argument, NULL, O_OUTCOME},
        {"caller", required_argument, NULL, O_CALLER},
        {"since", required_argument, NULL, O_SINCE},
        {"json", no_argument, NULL, O_JSON},
        {"config", required_argument, NULL, O_CONFIG},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0}};
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", limit ? with_limit : without_limit,
                            NULL)) != -1) {
        switch (c) {
        case O_TOOL:
            q->tool = optarg;
            break;
        case O_OUTCOME:
            q->outcome = optarg;
            break;
        case O_CALLER:
            q->caller = optarg;
            break;
        case O_SINCE:
            q->since = optarg;
            break;
        case O_LIMIT:
            if (cli_parse_int("--limit", optarg, 1, 100000, limit))
                return EXIT_USAGE;
            break;
        case O_JSON:
            *as_json = 1;
            break;
        case O_CONFIG:
            *config = optarg;
            break;
        case O_HELP:
            fputs(usage, stdout);
            return -1;
        default:
            cli_error("%s: unknown or incomplete option '%s'", cmd,
                      argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_error("%s: unexpected argument '%s'", cmd, argv[optind]);
        return EXIT_USAGE;
    }
    if (q->outcome && strcmp(tg_outcome_name(tg_outcome_from_name(q->outcome)),
                             q->outcome) != 0) {
        cli_error("--outcome must be success, error, canceled, timeout or "
                  "denied, got '%s'",
                  q->outcome);
        return EXIT_USAGE;
    }
    return EXIT_DONE;
}

void cli_print_records(const json_t *rows, int as_json,
                       void (*print_row)(const json_t *rec))
{
    size_t i;
    const json_t *rec; /* borrowed */
    json_array_foreach(rows, i, rec)
    {
        if (as_json) {
            char *line = json_dumps(rec, JSON_COMPACT);
            if (line != NULL)
                puts(line);
            free(line);
        } else {
            print_row(rec);
        }
    }
}
