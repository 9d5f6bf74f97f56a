/* SPDX-License-Identifier: MIT */
/*
 * cmd_artifact.c - `toolgate artifact list | read | grep | head | tail |
 * stat | store`: the spooled outputs in the spool directory of the
 * configuration (spool.dir), read with the same operations the artifact
 * tools give a model; `store` spools a file (or stdin) by hand, as a tool's
 * output would be. Only `store` creates the spool when it is missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char artifact_usage[] =
    "usage: toolgate artifact list [--json]\n"
    "       toolgate artifact read ID [--offset B] [--length B]\n"
    "       toolgate artifact grep ID PATTERN [--max N] [--context N]\n"
    "                              [--ignore-case] [--count] [--json]\n"
    "       toolgate artifact head ID [N]\n"
    "       toolgate artifact tail ID [N]\n"
    "       toolgate artifact stat ID\n"
    "       toolgate artifact store [FILE|-]\n"
    "\n"
    "Reads the spooled tool outputs (artifacts) of spool.dir: list them\n"
    "(newest first), print a byte range (default: all of it), the lines\n"
    "matching a PCRE2 pattern (LINE:text, context lines as LINE-text),\n"
    "the first or last N lines (default 10), or size, lines and sha256;\n"
    "store spools FILE (default stdin) and prints the artifact as JSON.\n"
    "Every subcommand takes --config FILE.\n";

#define READ_CHUNK ((size_t)1 << 20)

typedef struct artopts {
    const char *config;
    long long offset, length, max, context;
    int have_length, ignore_case, count, json;
} artopts;

/* Options of every subcommand; positional arguments are left in
 * argv[optind..argc). Returns EXIT_DONE, EXIT_USAGE, or -1 after --help. */
static int parse(const char *sub, int argc, char **argv, artopts *o)
{
    enum {
        O_CONFIG = 256,
        O_OFFSET,
        O_LENGTH,
        O_MAX,
        O_CONTEXT,
        O_ICASE,
        O_COUNT,
        O_JSON,
        O_HELP
    };
    static const struct option longopts[] = {
        {"config", required_argument, NULL, O_CONFIG},
        {"offset", required_argument, NULL, O_OFFSET},
        {"length", required_argument, NULL, O_LENGTH},
        {"max", required_argument, NULL, O_MAX},
        {"context", required_argument, NULL, O_CONTEXT},
        {"ignore-case", no_argument, NULL, O_ICASE},
        {"count", no_argument, NULL, O_COUNT},
        {"json", no_argument, NULL, O_JSON},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0}};
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "i", longopts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case O_CONFIG:
            o->config = optarg;
            break;
        case O_OFFSET:
            bad = cli_parse_int("--offset", optarg, 0, INT64_MAX, &o->offset);
            break;
        case O_LENGTH:
            bad = cli_parse_int("--length", optarg, 0, INT64_MAX, &o->length);
            o->have_length = 1;
            break;
        case O_MAX:
            bad = cli_parse_int("--max", optarg, 1, 1000000, &o->max);
            break;
        case O_CONTEXT:
            bad = cli_parse_int("--context", optarg, 0, 100, &o->context);
            break;
        case 'i':
        case O_ICASE:
            o->ignore_case = 1;
            break;
        case O_COUNT:
            o->count = 1;
            break;
        case O_JSON:
            o->json = 1;
            break;
        case O_HELP:
            fputs(artifact_usage, stdout);
            return -1;
        default:
            cli_error("artifact %s: unknown or incomplete option '%s'", sub,
                      argv[optind - 1]);
            return EXIT_USAGE;
        }
        if (bad)
            return EXIT_USAGE;
    }
    return EXIT_DONE;
}

static int open_spool(const char *config, unsigned flags, tg_spool **sp)
{
    tg_config *cfg = NULL;
    int status = cli_load_config(config, &cfg);
    if (status != EXIT_DONE)
        return status;
    if (tg_config_spool_dir(cfg) == NULL) {
        tg_config_free(cfg);
        cli_error("the spool is off in this configuration (\"spool\": null); "
                  "there are no artifacts");
        return EXIT_CONFIG;
    }
    tg_error err = {0};
    int rc = tg_spool_open(tg_config_spool_dir(cfg), flags, sp, &err);
    tg_config_free(cfg);
    if (rc != 0) {
        cli_error("%s", err.message);
        return cli_exit_for(rc);
    }
    return EXIT_DONE;
}

static int fail(int rc, const tg_error *err)
{
    cli_error("%s", err->message);
    /* a pattern over the match limit is the input's fault, not ours */
    return rc == TG_ELIMIT ? EXIT_USAGE : cli_exit_for(rc);
}

static int do_list(tg_spool *sp, const artopts *o)
{
    tg_error err = {0};
    char *text = NULL;
    int rc = tg_artifact_list(sp, &text, &err);
    if (rc != 0)
        return fail(rc, &err);
    json_error_t jerr;
    json_t *rows = json_loads(text, 0, &jerr); /* new ref */
    tg_free(text);
    if (!json_is_array(rows)) {
        json_decref(rows);
        cli_error("the spool returned an unreadable list");
        return EXIT_INTERNAL;
    }
    size_t i;
    json_t *row; /* borrowed */
    if (!o->json && json_array_size(rows) > 0)
        printf("%-28s  %12s  %10s  %-8s  %-24s  %s\n", "ID", "BYTES", "LINES",
               "STATE", "CREATED", "MEDIA TYPE");
    json_array_foreach(rows, i, row)
    {
        if (o->json) {
            char *line = json_dumps(row, JSON_COMPACT);
            if (line)
                cli_put_json(line);
            free(line);
            continue;
        }
        cli_put_field(stdout, json_string_value(json_object_get(row, "id")),
                      28);
        printf("  %12lld  %10lld  ",
               (long long)json_integer_value(json_object_get(row, "bytes")),
               (long long)json_integer_value(json_object_get(row, "lines")));
        cli_put_field(stdout, json_string_value(json_object_get(row, "state")),
                      8);
        fputs("  ", stdout);
        cli_put_field(
            stdout, json_string_value(json_object_get(row, "created_at")), 24);
        fputs("  ", stdout);
        cli_put_field(stdout,
                      json_string_value(json_object_get(row, "media_type")), 0);
        putchar('\n');
    }
    json_decref(rows);
    return EXIT_DONE;
}

/* Prints the range in 1 MiB reads: any size, bounded memory. */
static int do_read(tg_spool *sp, const char *id, const artopts *o)
{
    uint64_t off = (uint64_t)o->offset;
    uint64_t left = o->have_length ? (uint64_t)o->length : UINT64_MAX;
    while (left > 0) {
        size_t want = left < READ_CHUNK ? (size_t)left : READ_CHUNK;
        char *buf = NULL;
        size_t n = 0;
        tg_error err = {0};
        int rc = tg_artifact_read(sp, id, off, want, &buf, &n, &err);
        if (rc != 0)
            return fail(rc, &err);
        if (n > 0 && fwrite(buf, 1, n, stdout) != n) {
            tg_free(buf);
            cli_error("cannot write to stdout");
            return EXIT_INTERNAL;
        }
        tg_free(buf);
        if (n < want)
            break; /* the end of the artifact */
        off += n;
        left -= n;
    }
    return EXIT_DONE;
}

/* Prints an artifact's text (a tool's output): byte for byte into a pipe
 * or a file, and made safe (tg_terminal_text, newlines and tabs kept) on a
 * terminal, where escape sequences in it would act. */
static void put_text(const char *s, size_t n)
{
    if (isatty(STDOUT_FILENO))
        cli_put_safe(stdout, s, n, TG_TERMINAL_KEEP_LINES);
    else
        fwrite(s, 1, n, stdout);
}

/* One line of grep's answer: NUMBER, the separator, the text. */
static void put_line(long long line, char sep, const json_t *text)
{
    printf("%lld%c", line, sep);
    put_text(json_string_value(text), json_string_length(text));
    putchar('\n');
}

/* Prints context lines as grep does: LINE-text. */
static void print_lines(const json_t *arr, long long *last) /* borrowed */
{
    size_t i;
    json_t *l; /* borrowed */
    json_array_foreach(arr, i, l)
    {
        *last = (long long)json_integer_value(json_object_get(l, "line"));
        put_line(*last, '-', json_object_get(l, "text"));
    }
}

static int do_grep(tg_spool *sp, const char *id, const char *pattern,
                   const artopts *o)
{
    tg_artifact_grep_options g = {
        .max_matches = o->max ? (int)o->max : 1000,
        .before = (int)o->context,
        .after = (int)o->context,
        .ignore_case = o->ignore_case,
        .count_only = o->count,
    };
    tg_error err = {0};
    char *text = NULL;
    int rc = tg_artifact_grep(sp, id, pattern, &g, &text, &err);
    if (rc != 0)
        return fail(rc, &err);
    if (o->json) {
        cli_put_json(text);
        tg_free(text);
        return EXIT_DONE;
    }
    json_error_t jerr;
    json_t *res = json_loads(text, 0, &jerr); /* new ref */
    tg_free(text);
    if (res == NULL) {
        cli_error("grep returned unreadable output");
        return EXIT_INTERNAL;
    }
    if (o->count) {
        printf("%lld\n",
               (long long)json_integer_value(json_object_get(res, "count")));
        json_decref(res);
        return EXIT_DONE;
    }
    size_t i;
    json_t *m; /* borrowed */
    long long last = 0;
    json_array_foreach(json_object_get(res, "matches"), i, m)
    {
        const json_t *before = json_object_get(m, "before"); /* borrowed */
        long long line =
            (long long)json_integer_value(json_object_get(m, "line"));
        long long first = json_array_size(before) > 0
                              ? (long long)json_integer_value(json_object_get(
                                    json_array_get(before, 0), "line"))
                              : line;
        /* groups that do not touch are separated, as grep does */
        if (o->context > 0 && i > 0 && first > last + 1)
            puts("--");
        print_lines(before, &last);
        put_line(line, ':', json_object_get(m, "text"));
        last = line;
        print_lines(json_object_get(m, "after"), &last);
    }
    if (json_is_true(json_object_get(res, "truncated")))
        cli_error("grep: stopped after %lld matching lines (--max)",
                  (long long)json_integer_value(json_object_get(res, "count")));
    json_decref(res);
    return EXIT_DONE;
}

static int do_ends(tg_spool *sp, const char *id, const char *count, int tail)
{
    long long n = 10;
    if (count && cli_parse_int(tail ? "tail" : "head", count, 0, INT64_MAX,
                               &n) != EXIT_DONE)
        return EXIT_USAGE;
    tg_error err = {0};
    char *text = NULL;
    size_t len = 0;
    int rc = tail ? tg_artifact_tail(sp, id, (uint64_t)n, &text, &len, &err)
                  : tg_artifact_head(sp, id, (uint64_t)n, &text, &len, &err);
    if (rc != 0)
        return fail(rc, &err);
    put_text(text, len);
    tg_free(text);
    return EXIT_DONE;
}

static int do_store(tg_spool *sp, const char *path)
{
    int from_stdin = path == NULL || strcmp(path, "-") == 0;
    int fd = from_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cli_error("cannot read %s: %s", path, strerror(errno));
        return EXIT_USAGE;
    }
    tg_error err = {0};
    char *text = NULL;
    int rc = tg_artifact_store(sp, fd, &text, &err);
    if (!from_stdin)
        close(fd);
    if (rc != 0)
        return fail(rc, &err);
    cli_put_json(text);
    tg_free(text);
    return EXIT_DONE;
}

static int do_stat(tg_spool *sp, const char *id)
{
    tg_error err = {0};
    char *text = NULL;
    int rc = tg_artifact_stat(sp, id, &text, &err);
    if (rc != 0)
        return fail(rc, &err);
    cli_put_json(text);
    tg_free(text);
    return EXIT_DONE;
}

int cmd_artifact(int argc, char **argv)
{
    if (argc < 2) {
        fputs(artifact_usage, stderr);
        return EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        fputs(artifact_usage, stdout);
        return EXIT_DONE;
    }
    static const struct {
        const char *name;
        int min, max; /* positional arguments */
    } subs[] = {{"list", 0, 0}, {"read", 1, 1}, {"grep", 2, 2}, {"head", 1, 2},
                {"tail", 1, 2}, {"stat", 1, 1}, {"store", 0, 1}};
    size_t k = 0, nsubs = sizeof subs / sizeof subs[0];
    while (k < nsubs && strcmp(sub, subs[k].name) != 0)
        k++;
    if (k == nsubs) {
        cli_error("artifact: unknown subcommand '%s' (list, read, grep, "
                  "head, tail, stat, store)",
                  sub);
        return EXIT_USAGE;
    }
    artopts o = {0};
    int status = parse(sub, argc - 1, argv + 1, &o);
    if (status != EXIT_DONE)
        return status < 0 ? EXIT_DONE : status;
    char **pos = argv + 1 + optind;
    int npos = argc - 1 - optind;
    if (npos < subs[k].min || npos > subs[k].max) {
        cli_error("artifact %s: expected %s (try 'toolgate artifact --help')",
                  sub,
                  k == 0             ? "no arguments"
                  : k == 6           ? "at most one file"
                  : k == 2           ? "an artifact id and a pattern"
                  : k == 3 || k == 4 ? "an artifact id and an optional count"
                                     : "an artifact id");
        return EXIT_USAGE;
    }
    tg_spool *sp = NULL;
    /* readers never create the spool: a missing one is empty */
    unsigned flags = k == 6 ? 0 : TG_SPOOL_NO_CREATE;
    if ((status = open_spool(o.config, flags, &sp)) != EXIT_DONE)
        return status;
    switch (k) {
    case 0:
        status = do_list(sp, &o);
        break;
    case 1:
        status = do_read(sp, pos[0], &o);
        break;
    case 2:
        status = do_grep(sp, pos[0], pos[1], &o);
        break;
    case 3:
    case 4:
        status = do_ends(sp, pos[0], npos > 1 ? pos[1] : NULL, k == 4);
        break;
    case 5:
        status = do_stat(sp, pos[0]);
        break;
    default:
        status = do_store(sp, npos > 0 ? pos[0] : NULL);
    }
    tg_spool_free(sp);
    if (fflush(stdout) != 0 && status == EXIT_DONE) {
        cli_error("cannot write to stdout");
        status = EXIT_INTERNAL;
    }
    return status;
}
