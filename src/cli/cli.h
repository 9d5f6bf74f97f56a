/* SPDX-License-Identifier: MIT */
/*
 * cli.h - what the command files of the `toolgate` binary share: exit
 * statuses (spec/cli.md), reading input, loading the configuration, and the
 * command entry points. The CLI uses only the public header toolgate.h.
 */
#ifndef TG_CLI_H
#define TG_CLI_H

#include <jansson.h>
#include <stddef.h>

#include "toolgate.h"

enum {
    EXIT_DONE = 0,    /* every call got a result */
    EXIT_STRICT = 1,  /* --strict: some outcome was not success */
    EXIT_USAGE = 2,   /* usage error or unreadable input */
    EXIT_CONFIG = 3,  /* invalid configuration */
    EXIT_INTERNAL = 4 /* journal unwritable, out of memory */
};

/* The most input `run` reads (bytes); larger input is a usage error. */
#define CLI_MAX_INPUT ((size_t)512 * 1024 * 1024)

/* Prints "toolgate: <message>" to stderr. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Prints each warning of a parsed turn (what reading it ignored: events
 * after the end of a stream, pieces for a call already complete) as
 * "toolgate: NAME: warning: ..." on stderr; name names the input. */
void cli_print_turn_warnings(const char *name, const tg_turn *turn);
/* Maps a library error code to the exit status of spec/cli.md. */
int cli_exit_for(int code);
/* Reads a whole file ("-" or NULL: stdin) up to `limit` bytes into a new
 * NUL-terminated buffer (caller frees). Returns 0, or an exit status after
 * printing why. */
int cli_read_all(const char *path, size_t limit, char **out, size_t *out_len);
/* Builds the configuration: --config FILE, else $TOOLGATE_CONFIG, else
 * ./toolgate.json when present, else the embedded defaults. Returns 0 or an
 * exit status after printing why. */
int cli_load_config(const char *path, tg_config **out);
/* Parses a decimal integer option value in [min, max]; returns 0 or
 * EXIT_USAGE after printing which option was wrong. */
int cli_parse_int(const char *opt, const char *text, long long min,
                  long long max, long long *out);

/* The options `history` and `stats` share: --tool, --outcome, --caller,
 * --since, --json, --config, --help, and --limit N when limit is not NULL
 * (default left as given). `cmd` names the command in errors; usage is
 * printed for --help. Returns EXIT_DONE, EXIT_USAGE after saying why, or
 * -1 when --help was printed (the caller returns EXIT_DONE). */
int cli_query_options(const char *cmd, const char *usage, int argc, char **argv,
                      tg_history_query *q, long long *limit, int *as_json,
                      const char **config);

/* Prints each record of rows (a JSON array, borrowed): as a compact JSON
 * line with as_json, else through print_row (a table row; the caller
 * printed the header). */
void cli_print_records(const json_t *rows, int as_json,
                       void (*print_row)(const json_t *rec));

int cmd_run(int argc, char **argv);
int cmd_tools(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_artifact(int argc, char **argv);

#endif
