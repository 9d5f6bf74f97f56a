/* SPDX-License-Identifier: MIT */
/*
 * cli.h - what the command files of the `toolgate` binary share: exit
 * statuses (docs/guide.md), reading input, loading the configuration, and the
 * command entry points. The CLI uses only the public header toolgate.h.
 */
#ifndef TG_CLI_H
#define TG_CLI_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

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

/* Prints "toolgate: <message>" to stderr, the whole message made safe for
 * a terminal (tg_terminal_text: control characters, C1, bidirectional
 * controls and invalid UTF-8 shown as escapes, newlines too), whatever ids,
 * names, paths or tool output it quotes. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Writes text[0..len) to f through tg_terminal_text with `flags`
 * (TG_TERMINAL_KEEP_LINES, TG_TERMINAL_JSON), in pieces: any size, bounded
 * memory. Every print of text that a caller, a tool or the journal
 * supplied goes through this or cli_put_field. Returns 0, or -1 when
 * writing failed or memory ran out. */
int cli_put_safe(FILE *f, const char *text, size_t len, unsigned flags);
/* Prints JSON text and a newline on stdout through cli_put_safe with
 * TG_TERMINAL_JSON: the same JSON value, with DEL, C1 and bidirectional
 * controls as \u escapes. Returns 0 or -1. */
int cli_put_json(const char *json);
/* Prints s (NULL: "-") made safe for a terminal (no newlines kept),
 * left-aligned and padded with spaces to `width` bytes: a table cell. */
void cli_put_field(FILE *f, const char *s, int width);
/* The same, cut to `width` bytes ("..." at the end) when longer: a cell of a
 * line that must stay one line on the screen (the live progress block). */
void cli_put_cell(FILE *f, const char *s, int width);

/* Prints each warning of a parsed turn (what reading it ignored: events
 * after the end of a stream, pieces for a call already complete) as
 * "toolgate: NAME: warning: ..." on stderr; name names the input. */
void cli_print_turn_warnings(const char *name, const tg_turn *turn);
/* Maps a library error code to the exit status of docs/guide.md: bad input
 * (TG_EPARSE, TG_EFORMAT, TG_EINVAL, TG_ENOTFOUND, and TG_ELIMIT, a limit
 * the input passed) is 2, configuration 3, the rest 4. */
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

/* Prints each record of a JSON array from the library: with as_json as
 * JSON Lines, each record's text as the library wrote it (`text`, the
 * array's compact JSON: numbers keep the library's form, times to the
 * microsecond); else through print_row (a table row of the parsed record
 * in rows, borrowed; the caller printed the header). */
void cli_print_records(const char *text, const json_t *rows, int as_json,
                       void (*print_row)(const json_t *rec));
/* Prints compact JSON text from the library indented by two spaces, as
 * json_dumps(JSON_INDENT(2)) lays it out, but with every token as the
 * library wrote it (jansson would write each real with 17 digits). */
void cli_print_pretty(const char *text);

int cmd_run(int argc, char **argv);
int cmd_tools(int argc, char **argv);
/* The journal path of the configuration (config NULL: the default one) in
 * *out (malloc'd); EXIT_CONFIG with a message when the journal is off. */
int cli_journal_path(const char *config, char **out);
/* `toolgate history --loops` / `--loop ID` (cmd_loops.c). */
int cli_history_loops(int argc, char **argv);
/* Prints the transcript of loop `id` of the journal at path (`toolgate
 * show LOOP_ID`); an exit status. */
int cli_show_loop(const char *path, const char *id);
int cmd_history(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_artifact(int argc, char **argv);
int cmd_journal(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_version(int argc, char **argv);

#endif
