/* SPDX-License-Identifier: MIT */
/*
 * common.c - helpers every command uses: error printing, exit statuses,
 * reading input with a size cap, loading the configuration, integer options.
 */
#include "cli.h"

#include <getopt.h>

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The bytes cli_put_safe escapes at a time. */
#define SAFE_PIECE ((size_t)64 * 1024)

int cli_put_safe(FILE *f, const char *text, size_t len, unsigned flags)
{
    size_t at = 0;
    while (at < len) {
        size_t n = len - at;
        if (n > SAFE_PIECE) {
            /* Never split a UTF-8 character between two pieces: each would
             * show its half as invalid bytes. */
            n = SAFE_PIECE;
            while (n > SAFE_PIECE - 3 &&
                   ((unsigned char)text[at + n] & 0xC0) == 0x80)
                n--;
        }
        char *safe = tg_terminal_text(text + at, n, flags);
        if (safe == NULL)
            return -1;
        size_t sl = strlen(safe);
        int bad = fwrite(safe, 1, sl, f) != sl;
        tg_free(safe);
        if (bad)
            return -1;
        at += n;
    }
    return 0;
}

int cli_put_json(const char *json)
{
    if (cli_put_safe(stdout, json, strlen(json), TG_TERMINAL_JSON) != 0)
        return -1;
    return putchar('\n') == EOF ? -1 : 0;
}

/* cli_put_field, and with cut set cli_put_cell. */
static void put_field(FILE *f, const char *s, int width, bool cut)
{
    char *safe = tg_terminal_text(s ? s : "-", s ? strlen(s) : 1, 0);
    const char *shown = safe ? safe : "?";
    size_t n = strlen(shown);
    if (cut && width > 3 && n > (size_t)width) {
        /* room for "..." and no UTF-8 character cut in two */
        n = (size_t)width - 3;
        while (n > 0 && ((unsigned char)shown[n] & 0xC0) == 0x80)
            n--;
        fwrite(shown, 1, n, f);
        fputs("...", f);
        n += 3;
    } else {
        fputs(shown, f);
    }
    tg_free(safe);
    for (; n < (size_t)(width > 0 ? width : 0); n++)
        fputc(' ', f);
}

void cli_put_field(FILE *f, const char *s, int width)
{
    put_field(f, s, width, false);
}

void cli_put_cell(FILE *f, const char *s, int width)
{
    put_field(f, s, width, true);
}

void cli_error(const char *fmt, ...)
{
    char small[1024], *msg = small;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0, small[0] = '\0';
    if ((size_t)n >= sizeof small && (msg = malloc((size_t)n + 1)) != NULL) {
        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    if (msg == NULL) { /* out of memory: the start of it */
        msg = small;
        n = (int)strlen(small);
    }
    fputs("toolgate: ", stderr);
    if (cli_put_safe(stderr, msg, (size_t)n, 0) != 0)
        fputs("(a message that could not be shown)", stderr);
    fputc('\n', stderr);
    if (msg != small)
        free(msg);
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
    /* A limit passed is the input's size or shape (an event stream line
     * over 64 MiB, JSON nested too deep), never toolgate running out. */
    case TG_ELIMIT:
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

/* Prints each element of the JSON array `text` (the library's compact
 * text) on a line of its own, byte for byte: jansson would write every
 * real again with 17 significant digits. Each element is an object; its
 * end is where jansson stops reading it. */
static void print_lines(const char *lib_text)
{
    /* DEL, C1 and bidirectional controls as \u escapes: the same JSON */
    char *text = tg_terminal_text(lib_text, strlen(lib_text), TG_TERMINAL_JSON);
    if (text == NULL)
        return;
    size_t len = strlen(text), i = 0;
    while (i < len && text[i] != '[')
        i++;
    for (i++; i < len;) {
        while (i < len && strchr(" \t\r\n,", text[i]) != NULL)
            i++;
        if (i >= len || text[i] == ']')
            break;
        json_error_t jerr;
        json_t *v = json_loadb(text + i, len - i, JSON_DISABLE_EOF_CHECK,
                               &jerr); /* new ref */
        if (v == NULL || jerr.position <= 0)
            break; /* cannot happen: the caller parsed the whole text */
        json_decref(v);
        fwrite(text + i, 1, (size_t)jerr.position, stdout);
        putchar('\n');
        i += (size_t)jerr.position;
    }
    tg_free(text);
}

void cli_print_records(const char *text, const json_t *rows, int as_json,
                       void (*print_row)(const json_t *rec))
{
    if (as_json) {
        print_lines(text);
        return;
    }
    size_t i;
    const json_t *rec; /* borrowed */
    json_array_foreach(rows, i, rec)
    {
        print_row(rec);
    }
}

static void indent(int depth)
{
    putchar('\n');
    for (int k = 0; k < depth; k++)
        fputs("  ", stdout);
}

void cli_print_pretty(const char *lib_text)
{
    /* DEL, C1 and bidirectional controls as \u escapes: the same JSON */
    char *text = tg_terminal_text(lib_text, strlen(lib_text), TG_TERMINAL_JSON);
    if (text == NULL)
        return;
    int depth = 0;
    for (const char *p = text; *p != '\0'; p++) {
        char c = *p;
        switch (c) {
        case '"': /* a string, escapes and all, as it is */
            putchar(c);
            for (p++; *p != '\0' && *p != '"'; p++) {
                putchar(*p);
                if (*p == '\\' && p[1] != '\0')
                    putchar(*++p);
            }
            if (*p == '\0')
                goto done;
            putchar('"');
            break;
        case '{':
        case '[':
            putchar(c);
            if (p[1] == (c == '{' ? '}' : ']')) {
                putchar(*++p); /* {} and [] stay on their line */
                break;
            }
            indent(++depth);
            break;
        case '}':
        case ']':
            indent(--depth);
            putchar(c);
            break;
        case ',':
            putchar(c);
            indent(depth);
            break;
        case ':':
            fputs(": ", stdout);
            break;
        default:
            putchar(c);
            break;
        }
    }
    putchar('\n');
done:
    tg_free(text);
}
