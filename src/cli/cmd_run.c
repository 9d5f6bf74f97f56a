/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c - `toolgate run [FILE|-]`: parse a model turn, run every call
 * through the runtime, print the results in the requested wire format.
 * stdout carries the rendered results and nothing else; stderr the live
 * status on a terminal and errors.
 */
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "approve_prompt.h"
#include "cli.h"
#include "progress.h"

static const char run_usage[] =
    "usage: toolgate run [OPTIONS] [FILE|-]\n"
    "\n"
    "Executes the tool calls in a model turn (FILE, or stdin) and prints the\n"
    "results in the turn's wire format.\n"
    "\n"
    "  --from FORMAT        auto (default), openai-chat, openai-responses,\n"
    "                       anthropic, gemini, mcp, toolgate, fenced\n"
    "  --to FORMAT          output format (default: the input's)\n"
    "  --caller ID          caller id of calls that carry none\n"
    "  --cwd DIR            working directory of the calls\n"
    "  --timeout MS         default per-call deadline\n"
    "  --parallel N         calls running at once\n"
    "  --strict             exit 1 when some outcome is not success\n"
    "  --cancel-unanswered  answer every call canceled (by system) without\n"
    "                       running it: repairs a conversation left with\n"
    "                       dangling calls\n"
    "  --no-journal         do not record calls and results\n"
    "  --approve            answer every 'ask' of the policy with yes\n"
    "                       (else the operator is asked on the terminal;\n"
    "                       with no terminal an 'ask' is denied, saying so)\n"
    "  --hmac-key-file F    checksums are HMAC-SHA256 with the key in F\n"
    "  --verbose            stream the calls' output to stderr (escaped,\n"
    "                       each line tagged with its call id)\n"
    "  --config FILE        configuration file\n";

typedef struct run_opts {
    const char *from, *to, *caller, *cwd, *config, *hmac_key_file, *input;
    long long timeout_ms, parallel;
    bool strict, no_journal, approve, verbose, cancel_unanswered;
} run_opts;

static int parse_opts(int argc, char **argv, run_opts *o)
{
    enum {
        O_FROM = 256,
        O_TO,
        O_CALLER,
        O_CWD,
        O_TIMEOUT,
        O_PARALLEL,
        O_STRICT,
        O_NOJOURNAL,
        O_APPROVE,
        O_HMAC,
        O_VERBOSE,
        O_CONFIG,
        O_HELP,
        O_CANCEL_UNANSWERED
    };
    static const struct option longopts[] = {
        {"from", required_argument, NULL, O_FROM},
        {"to", required_argument, NULL, O_TO},
        {"caller", required_argument, NULL, O_CALLER},
        {"cwd", required_argument, NULL, O_CWD},
        {"timeout", required_argument, NULL, O_TIMEOUT},
        {"parallel", required_argument, NULL, O_PARALLEL},
        {"strict", no_argument, NULL, O_STRICT},
        {"no-journal", no_argument, NULL, O_NOJOURNAL},
        {"approve", no_argument, NULL, O_APPROVE},
        {"hmac-key-file", required_argument, NULL, O_HMAC},
        {"verbose", no_argument, NULL, O_VERBOSE},
        {"config", required_argument, NULL, O_CONFIG},
        {"help", no_argument, NULL, O_HELP},
        {"cancel-unanswered", no_argument, NULL, O_CANCEL_UNANSWERED},
        {NULL, 0, NULL, 0}};
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_FROM:
            o->from = optarg;
            break;
        case O_TO:
            o->to = optarg;
            break;
        case O_CALLER:
            o->caller = optarg;
            break;
        case O_CWD:
            o->cwd = optarg;
            break;
        case O_TIMEOUT:
            if (cli_parse_int("--timeout", optarg, 1, 86400000, &o->timeout_ms))
                return EXIT_USAGE;
            break;
        case O_PARALLEL:
            if (cli_parse_int("--parallel", optarg, 1, 1024, &o->parallel))
                return EXIT_USAGE;
            break;
        case O_STRICT:
            o->strict = true;
            break;
        case O_NOJOURNAL:
            o->no_journal = true;
            break;
        case O_APPROVE:
            o->approve = true;
            break;
        case O_HMAC:
            o->hmac_key_file = optarg;
            break;
        case O_VERBOSE:
            o->verbose = true;
            break;
        case O_CANCEL_UNANSWERED:
            o->cancel_unanswered = true;
            break;
        case O_CONFIG:
            o->config = optarg;
            break;
        case O_HELP:
            fputs(run_usage, stdout);
            exit(EXIT_DONE);
        default:
            cli_error("run: unknown or incomplete option '%s' (try 'toolgate "
                      "run --help')",
                      argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind < argc)
        o->input = argv[optind++];
    if (optind < argc) {
        cli_error("run: one input file at most, got '%s' too", argv[optind]);
        return EXIT_USAGE;
    }
    return EXIT_DONE;
}

/* Applies the command line over the configuration. */
static int apply_opts(const run_opts *o, tg_config *cfg)
{
    tg_error err = {0};
    int rc = 0;
    if (o->timeout_ms)
        rc = tg_config_set_timeout_ms(cfg, o->timeout_ms, &err);
    if (rc == 0 && o->parallel)
        rc = tg_config_set_parallel(cfg, (int)o->parallel, &err);
    if (rc == 0 && o->no_journal)
        rc = tg_config_set_journal(cfg, NULL, &err);
    if (rc == 0 && o->cwd)
        rc = tg_config_set_cwd(cfg, o->cwd, &err);
    if (rc == 0 && o->hmac_key_file)
        rc = tg_config_set_hmac_key_file(cfg, o->hmac_key_file, &err);
    if (rc != 0) {
        cli_error("%s", err.message);
        return rc == TG_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
    }
    return EXIT_DONE;
}

static bool any_failed(const tg_turn *turn)
{
    for (size_t i = 0; i < tg_turn_call_count(turn); i++) {
        const tg_result *r = tg_turn_result(turn, i);
        if (r == NULL || !tg_result_succeeded(r))
            return true;
    }
    return false;
}

int cmd_run(int argc, char **argv)
{
    run_opts o = {0};
    int status = parse_opts(argc, argv, &o);
    if (status != EXIT_DONE)
        return status;

    tg_config *cfg = NULL;
    tg_turn *turn = NULL;
    tg_runtime *rt = NULL;
    progress *prog = NULL;
    approve_prompt *prompt = NULL;
    char *text = NULL, *out = NULL;
    size_t len = 0, out_len = 0;
    tg_error err = {0};
    int rc;

    if (o.to != NULL && !tg_format_renders(o.to)) {
        cli_error("--to %s: not a format results can be rendered in "
                  "(see 'toolgate run --help')",
                  o.to);
        status = EXIT_USAGE;
        goto done;
    }
    if ((status = cli_load_config(o.config, &cfg)) != EXIT_DONE)
        goto done;
    if ((status = apply_opts(&o, cfg)) != EXIT_DONE)
        goto done;
    if ((status = cli_read_all(o.input, CLI_MAX_INPUT, &text, &len)) !=
        EXIT_DONE)
        goto done;
    const char *name =
        o.input && strcmp(o.input, "-") != 0 ? o.input : "<stdin>";
    rc = tg_turn_parse(text, len, o.from, name, &turn, &err);
    if (rc != 0) {
        cli_error("%s", err.message);
        status = cli_exit_for(rc);
        goto done;
    }
    free(text);
    text = NULL;
    cli_print_turn_warnings(name, turn);
    if (o.to == NULL && !tg_format_renders(tg_turn_format(turn))) {
        cli_error("%s is an input format only; choose an output format with "
                  "--to",
                  tg_turn_format(turn));
        status = EXIT_USAGE;
        goto done;
    }
    if (o.cancel_unanswered &&
        tg_turn_cancel_all(turn, "system",
                           "this call was never answered; the conversation "
                           "was repaired (--cancel-unanswered)",
                           &err) != 0) {
        cli_error("%s", err.message);
        status = EXIT_INTERNAL;
        goto done;
    }
    if (o.caller && (rc = tg_turn_set_caller(turn, o.caller, &err)) != 0) {
        cli_error("--caller: %s", err.message);
        status = cli_exit_for(rc); /* too long: a usage error */
        goto done;
    }
    if (o.verbose)
        fprintf(stderr, "toolgate: %zu call(s) in %s format\n",
                tg_turn_call_count(turn), tg_turn_format(turn));

    rc = tg_runtime_new(cfg, &rt, &err);
    if (rc != 0) {
        cli_error("%s", err.message);
        status = cli_exit_for(rc);
        goto done;
    }
    /* Once per run, loudly: the sandbox is not in force (sandbox.c). */
    if (tg_runtime_warning(rt) != NULL) {
        const char *w = tg_runtime_warning(rt);
        fputs("toolgate: ", stderr);
        cli_put_safe(stderr, w, strlen(w), TG_TERMINAL_KEEP_LINES);
        fputc('\n', stderr);
    }
    tg_runtime_set_approve(rt, o.approve);
    if (!o.approve && (prompt = approve_prompt_open()) != NULL)
        tg_runtime_set_approver(rt, approve_prompt_ask, prompt);
    bool tty = isatty(STDERR_FILENO);
    if (tty || o.verbose) {
        prog = progress_new(stderr, tty, o.verbose, tg_turn_call_count(turn));
        if (prog != NULL)
            tg_runtime_set_events(rt, &progress_events, prog);
    }
    if (tg_runtime_cancel_on_signal(rt, SIGINT, &err) != 0 ||
        tg_runtime_cancel_on_signal(rt, SIGTERM, &err) != 0) {
        cli_error("%s", err.message);
        status = EXIT_INTERNAL;
        goto done;
    }
    rc = tg_runtime_run_turn(rt, turn, &err);
    progress_clear(prog);
    if (rc != 0) {
        /* Results that are not durable are not printed (docs/design.md). */
        cli_error("%s", err.message);
        status = EXIT_INTERNAL;
        goto done;
    }
    rc = tg_turn_render(turn, o.to, &out, &out_len, &err);
    if (rc != 0) {
        cli_error("%s", err.message);
        status = cli_exit_for(rc);
        goto done;
    }
    /* Every format renders JSON: written as the same JSON value with
     * nothing a terminal acts on, for stdout may be one. */
    if (cli_put_safe(stdout, out, out_len, TG_TERMINAL_JSON) != 0 ||
        fflush(stdout) != 0) {
        cli_error("cannot write the results to stdout");
        status = EXIT_INTERNAL;
        goto done;
    }
    status = o.strict && any_failed(turn) ? EXIT_STRICT : EXIT_DONE;
done:
    tg_free(out);
    free(text);
    tg_runtime_free(rt);
    approve_prompt_close(prompt);
    progress_free(prog);
    tg_turn_free(turn);
    tg_config_free(cfg);
    return status;
}
