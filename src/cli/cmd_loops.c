/* SPDX-License-Identifier: MIT */
/*
 * cmd_loops.c - the agent loops of the journal (toolgate.h, "loops"):
 * `toolgate history --loops` lists them, `toolgate history --loop ID`
 * shows one - each iteration's answer and the calls it made with their
 * outcomes - and `toolgate show LOOP_ID` prints a loop's transcript, its
 * conversation in the provider's format rebuilt from the journal.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "toolgate_loop.h"

static const char loops_usage[] =
    "usage: toolgate history --loops [--limit N] [--json] [--config FILE]\n"
    "       toolgate history --loop ID [--json] [--config FILE]\n"
    "\n"
    "--loops lists the agent loops of the journal, newest first (default\n"
    "20): id, status (running, cut short, or how it stopped), iterations,\n"
    "provider and model. --loop ID shows one loop: each iteration's answer\n"
    "and the calls it made, with their outcomes. `toolgate show ID` prints\n"
    "its transcript.\n";

/* Prints the first line of text (at most width bytes) made safe. */
static void put_head(const char *text, int width)
{
    size_t n = text != NULL ? strcspn(text, "\n") : 0;
    if (n > (size_t)width)
        n = (size_t)width;
    if (text != NULL)
        cli_put_safe(stdout, text, n, 0);
}

/* The status shown: "cut short" for a running loop whose process died. */
static const char *status_of(const json_t *loop)
{
    const char *st = json_string_value(json_object_get(loop, "status"));
    if (st != NULL && strcmp(st, "running") == 0 &&
        !json_is_true(json_object_get(loop, "owner_alive")))
        return "cut short";
    return st != NULL ? st : "?";
}

static void print_loop_row(const json_t *loop)
{
    const json_t *m = json_object_get(loop, "meta");
    cli_put_field(stdout, json_string_value(json_object_get(loop, "loop_id")),
                  22);
    fputs("  ", stdout);
    cli_put_field(stdout, status_of(loop), 14);
    printf("  %5lld  ",
           (long long)json_integer_value(json_object_get(loop, "iterations")));
    cli_put_field(stdout, json_string_value(json_object_get(m, "provider")),
                  16);
    fputs("  ", stdout);
    cli_put_field(stdout, json_string_value(json_object_get(m, "model")), 20);
    fputs("  ", stdout);
    put_head(json_string_value(json_object_get(m, "prompt")), 40);
    putchar('\n');
}

static int list_loops(tg_loop_store *ls, long long limit, int as_json)
{
    char *text = NULL;
    tg_error err = {0};
    int rc = tg_loop_store_list(ls, (size_t)limit, &text, &err);
    if (rc != 0) {
        cli_error("%s", err.message);
        return cli_exit_for(rc);
    }
    json_t *rows = json_loads(text, 0, NULL); /* new ref */
    if (!as_json && json_array_size(rows) > 0)
        printf("%-22s  %-14s  %5s  %-16s  %-20s  %s\n", "LOOP", "STATUS",
               "ITER", "PROVIDER", "MODEL", "PROMPT");
    if (as_json) {
        size_t i;
        json_t *row;
        json_array_foreach(rows, i, row)
        {
            char *line = json_dumps(row, JSON_COMPACT);
            if (line != NULL)
                cli_put_json(line);
            free(line);
        }
    } else {
        size_t i;
        json_t *row;
        json_array_foreach(rows, i, row) print_loop_row(row);
    }
    json_decref(rows);
    tg_free(text);
    return EXIT_DONE;
}

/* The journal's records of the calls of iteration `it` of loop `id`,
 * oldest first, with the reruns of idempotent calls after them (new ref
 * array, NULL on failure with the message printed). */
static json_t *iteration_calls(const char *path, const char *id, long long it)
{
    json_t *all = json_array(); /* new ref */
    for (int k = 0; all != NULL; k++) {
        char scope[192];
        if (k == 0)
            snprintf(scope, sizeof scope, "%s/%lld", id, it);
        else
            snprintf(scope, sizeof scope, "%s/%lld/rerun%d", id, it, k);
        tg_history_query q = {.caller = scope, .limit = 100000};
        char *text = NULL;
        tg_error err = {0};
        if (tg_journal_history(path, &q, &text, &err) != 0) {
            cli_error("%s", err.message);
            json_decref(all);
            return NULL;
        }
        json_t *rows = json_loads(text, 0, NULL); /* new ref */
        tg_free(text);
        size_t n = json_array_size(rows);
        for (size_t i = n; i-- > 0;)
            json_array_append(all, json_array_get(rows, i));
        json_decref(rows);
        if (n == 0 && k > 0)
            break;
    }
    return all;
}

static void print_call(const json_t *rec)
{
    const json_t *call = json_object_get(rec, "call");
    fputs("    ", stdout);
    cli_put_field(stdout, json_string_value(json_object_get(rec, "id")), 24);
    fputs("  ", stdout);
    cli_put_field(stdout, json_string_value(json_object_get(rec, "tool")), 16);
    fputs("  ", stdout);
    cli_put_field(stdout, json_string_value(json_object_get(rec, "outcome")),
                  8);
    printf("  %9.1f ms",
           json_number_value(json_object_get(rec, "duration_ms")));
    const char *code = json_string_value(json_object_get(
        json_object_get(json_object_get(rec, "payload"), "error"), "code"));
    if (code != NULL) {
        fputs("  ", stdout);
        cli_put_field(stdout, code, 0);
    }
    if (json_is_true(json_object_get(rec, "replayed")))
        fputs("  (replayed)", stdout);
    const char *caller = json_string_value(json_object_get(call, "caller_id"));
    if (caller != NULL && strstr(caller, "/rerun") != NULL)
        fputs("  (run again: idempotent)", stdout);
    putchar('\n');
}

static int show_one(tg_loop_store *ls, const char *path, const char *id,
                    int as_json)
{
    char *text = NULL;
    tg_error err = {0};
    int rc = tg_loop_store_get(ls, id, &text, &err);
    if (rc != 0) {
        cli_error("%s", err.message);
        return rc == TG_ENOTFOUND ? EXIT_USAGE : cli_exit_for(rc);
    }
    json_t *loop = json_loads(text, 0, NULL); /* new ref */
    tg_free(text);
    int status = EXIT_DONE;
    json_t *calls = json_object(); /* new ref: iteration -> records */
    long long n = json_integer_value(json_object_get(loop, "iterations"));
    for (long long it = 1; calls != NULL && it <= n; it++) {
        json_t *recs = iteration_calls(path, id, it);
        if (recs == NULL) {
            status = EXIT_INTERNAL;
            goto done;
        }
        char key[24];
        snprintf(key, sizeof key, "%lld", it);
        json_object_set_new(calls, key, recs);
    }
    if (loop == NULL || calls == NULL) {
        cli_error("out of memory");
        status = EXIT_INTERNAL;
        goto done;
    }
    if (as_json) {
        json_object_set(loop, "calls", calls);
        char *out = json_dumps(loop, JSON_COMPACT);
        if (out != NULL)
            cli_put_json(out);
        free(out);
        goto done;
    }
    const json_t *m = json_object_get(loop, "meta");
    fputs("loop ", stdout);
    cli_put_field(stdout, id, 0);
    fputs("  ", stdout);
    cli_put_field(stdout, json_string_value(json_object_get(m, "provider")), 0);
    fputs(" ", stdout);
    cli_put_field(stdout, json_string_value(json_object_get(m, "model")), 0);
    printf("  status: %s  iterations: %lld\nprompt: ", status_of(loop), n);
    put_head(json_string_value(json_object_get(m, "prompt")), 200);
    putchar('\n');
    size_t i;
    json_t *step;
    json_array_foreach(json_object_get(loop, "steps"), i, step)
    {
        const char *kind = json_string_value(json_object_get(step, "kind"));
        long long it = json_integer_value(json_object_get(step, "iteration"));
        const json_t *body = json_object_get(step, "body");
        if (kind != NULL && strcmp(kind, "answer") == 0) {
            printf("iteration %lld: answer", it);
            const char *t = json_string_value(json_object_get(body, "text"));
            if (t != NULL && t[0] != '\0') {
                fputs(": ", stdout);
                put_head(t, 60);
            }
            if (json_is_true(json_object_get(body, "from_calls")))
                fputs(" (made again from its journaled calls)", stdout);
            putchar('\n');
            char key[24];
            snprintf(key, sizeof key, "%lld", it);
            size_t k;
            json_t *rec;
            json_array_foreach(json_object_get(calls, key), k, rec)
                print_call(rec);
        } else if (kind != NULL && strcmp(kind, "results") == 0) {
            printf(
                "iteration %lld: %lld result%s sent back\n", it,
                (long long)json_integer_value(json_object_get(body, "calls")),
                json_integer_value(json_object_get(body, "calls")) == 1 ? ""
                                                                        : "s");
        }
    }
    const char *answer = json_string_value(json_object_get(loop, "answer"));
    if (answer != NULL && answer[0] != '\0') {
        fputs("answer: ", stdout);
        cli_put_safe(stdout, answer, strlen(answer), TG_TERMINAL_KEEP_LINES);
        putchar('\n');
    }
done:
    json_decref(calls);
    json_decref(loop);
    return status;
}

int cli_history_loops(int argc, char **argv)
{
    enum { O_LOOP = 256, O_LOOPS, O_LIMIT, O_JSON, O_CONFIG, O_HELP };
    static const struct option longopts[] = {
        {"loop", required_argument, NULL, O_LOOP},
        {"loops", no_argument, NULL, O_LOOPS},
        {"limit", required_argument, NULL, O_LIMIT},
        {"json", no_argument, NULL, O_JSON},
        {"config", required_argument, NULL, O_CONFIG},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0}};
    const char *config = NULL, *id = NULL;
    int c, as_json = 0;
    long long limit = 20;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_LOOP:
            id = optarg;
            break;
        case O_LOOPS:
            break;
        case O_LIMIT:
            if (cli_parse_int("--limit", optarg, 1, 1000, &limit))
                return EXIT_USAGE;
            break;
        case O_JSON:
            as_json = 1;
            break;
        case O_CONFIG:
            config = optarg;
            break;
        case O_HELP:
            fputs(loops_usage, stdout);
            return EXIT_DONE;
        default:
            cli_error("history: unknown or incomplete option '%s' beside "
                      "--loop/--loops (try 'toolgate history --loops --help')",
                      argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_error("history: unexpected argument '%s'", argv[optind]);
        return EXIT_USAGE;
    }
    char *path = NULL;
    int status = cli_journal_path(config, &path);
    if (status != EXIT_DONE)
        return status;
    tg_loop_store *ls = NULL;
    tg_error err = {0};
    int rc = tg_loop_store_open(path, &ls, &err);
    if (rc != 0) {
        cli_error("%s", err.message);
        status = cli_exit_for(rc);
    } else {
        status = id != NULL ? show_one(ls, path, id, as_json)
                            : list_loops(ls, limit, as_json);
    }
    tg_loop_store_free(ls);
    free(path);
    return status;
}

int cli_show_loop(const char *path, const char *id)
{
    char *text = NULL;
    tg_error err = {0};
    int rc = tg_loop_show(path, id, &text, &err);
    if (rc != 0) {
        cli_error("%s", err.message);
        return rc == TG_ENOTFOUND ? EXIT_USAGE : cli_exit_for(rc);
    }
    cli_print_pretty(text);
    tg_free(text);
    return EXIT_DONE;
}
