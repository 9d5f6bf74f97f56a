/* SPDX-License-Identifier: MIT */
/*
 * cmd_agent.c - `toolgate agent`: runs the agent loop (toolgate_loop.h)
 * against a model API with the configured tools: the final answer on
 * stdout, the iterations, calls and retries on stderr, the conversation
 * in the provider's format with --transcript. SIGINT cancels the running
 * calls, records their results and ends the loop cleanly; a second SIGINT
 * kills.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "toolgate_loop.h"

static const char agent_usage[] =
    "usage: toolgate agent --provider P --base-url URL --model NAME "
    "[OPTIONS] PROMPT|-\n"
    "       toolgate agent --resume LOOP_ID [OPTIONS]\n"
    "\n"
    "Runs an agent loop: sends PROMPT (or stdin with -) to the model with\n"
    "the configured tools, runs the tool calls it answers with, sends the\n"
    "results back, until it answers without calling a tool. The answer goes\n"
    "to stdout; iterations, calls and retries to stderr.\n"
    "\n"
    "  --provider P          openai (Chat Completions: URL/chat/completions,\n"
    "                        any compatible server), openai-responses\n"
    "                        (URL/responses), anthropic (URL/v1/messages),\n"
    "                        gemini (URL/v1beta/models/NAME:generateContent)\n"
    "  --base-url URL        e.g. http://127.0.0.1:8080/v1 (openai),\n"
    "                        https://api.anthropic.com (anthropic)\n"
    "  --model NAME          the model\n"
    "  --api-key-env VAR     the API key's variable (default OPENAI_API_KEY,\n"
    "                        ANTHROPIC_API_KEY or GEMINI_API_KEY; unset: no\n"
    "                        key is sent)\n"
    "  --api-key-file F      read the API key from F instead\n"
    "  --system TEXT|@FILE   the system prompt\n"
    "  --skill NAME=FILE     add FILE to the system prompt as skill NAME\n"
    "                        (repeatable); every call records the names\n"
    "  --max-iterations N    model requests at most (default 20)\n"
    "  --max-tool-calls N    tool calls at most over the loop (default: no "
    "limit)\n"
    "  --max-time MS         wall-clock budget of the loop: a request in\n"
    "                        flight is abandoned, running calls canceled\n"
    "  --max-total-tokens N  token budget: the tokens the model's answers\n"
    "                        report; the loop stops once they reach N\n"
    "  --stop-tool NAME      stop once a call of NAME succeeds (repeatable)\n"
    "  --resume LOOP_ID      go on with a loop of the journal that was cut\n"
    "                        short (killed), failed or was canceled: calls\n"
    "                        that ran are answered from the journal, never\n"
    "                        run again; provider, URL, model, prompt and\n"
    "                        limits are the journaled ones unless given\n"
    "  --transcript FILE     write the conversation (provider's format, "
    "JSON)\n"
    "  --timeout MS          default deadline of each tool call\n"
    "  --request-timeout MS  deadline of one model request (default 600000)\n"
    "  --max-attempts N      tries per model request, retries included "
    "(default 5)\n"
    "  --retry-budget MS     most time spent waiting to retry (default "
    "120000)\n"
    "  --stream              ask for a streamed answer: each tool starts as\n"
    "                        soon as its call is complete\n"
    "  --approve             answer every 'ask' of the policy with yes\n"
    "  --no-journal          do not record calls and results\n"
    "  --quiet               no progress on stderr\n"
    "  --progress            the live view (the model's text as it streams,\n"
    "                        per iteration) even when stderr is no terminal\n"
    "  --config FILE         configuration file\n"
    "\n"
    "exit status: 0 answered (or a --stop-tool succeeded), 1 stopped by a\n"
    "limit or interrupted (the last text, if any, is printed), 2 usage,\n"
    "3 configuration, 4 internal failure, 5 the model API failed (its\n"
    "message is quoted).\n";

enum { EXIT_MODEL = 5 };

typedef struct agent_opts {
    const char *provider, *base_url, *model, *key_env, *key_file, *system;
    const char *transcript, *config, *prompt, *resume;
    long long max_iterations, max_tool_calls, timeout_ms, request_timeout_ms;
    long long max_attempts, retry_budget_ms, max_time_ms, max_total_tokens;
    const char **stop_tools;
    size_t nstop_tools;
    const char **skills; /* NAME=FILE */
    size_t nskills;
    int approve, no_journal, quiet, stream, live;
} agent_opts;

static tg_loop *the_loop; /* for the SIGINT handler only */

static void on_sigint(int sig)
{
    (void)sig;
    tg_loop_cancel(the_loop);
}

/* Appends arg (borrowed from argv) to the list of a repeatable option. */
static int append_arg(const char ***list, size_t *n, const char *arg)
{
    const char **grown = realloc(*list, (*n + 1) * sizeof(char *));
    if (grown == NULL) {
        cli_error("out of memory");
        return EXIT_INTERNAL;
    }
    *list = grown;
    grown[(*n)++] = arg;
    return EXIT_DONE;
}

static int parse_opts(int argc, char **argv, agent_opts *o)
{
    enum {
        O_PROVIDER = 256,
        O_BASE_URL,
        O_MODEL,
        O_KEY_ENV,
        O_KEY_FILE,
        O_SYSTEM,
        O_MAX_ITER,
        O_MAX_CALLS,
        O_STOP_TOOL,
        O_TRANSCRIPT,
        O_TIMEOUT,
        O_REQ_TIMEOUT,
        O_ATTEMPTS,
        O_BUDGET,
        O_APPROVE,
        O_STREAM,
        O_NOJOURNAL,
        O_QUIET,
        O_CONFIG,
        O_RESUME,
        O_MAX_TIME,
        O_MAX_TOKENS,
        O_SKILL,
        O_PROGRESS,
        O_HELP
    };
    static const struct option longopts[] = {
        {"provider", required_argument, NULL, O_PROVIDER},
        {"base-url", required_argument, NULL, O_BASE_URL},
        {"model", required_argument, NULL, O_MODEL},
        {"api-key-env", required_argument, NULL, O_KEY_ENV},
        {"api-key-file", required_argument, NULL, O_KEY_FILE},
        {"system", required_argument, NULL, O_SYSTEM},
        {"max-iterations", required_argument, NULL, O_MAX_ITER},
        {"max-tool-calls", required_argument, NULL, O_MAX_CALLS},
        {"stop-tool", required_argument, NULL, O_STOP_TOOL},
        {"transcript", required_argument, NULL, O_TRANSCRIPT},
        {"timeout", required_argument, NULL, O_TIMEOUT},
        {"request-timeout", required_argument, NULL, O_REQ_TIMEOUT},
        {"max-attempts", required_argument, NULL, O_ATTEMPTS},
        {"retry-budget", required_argument, NULL, O_BUDGET},
        {"approve", no_argument, NULL, O_APPROVE},
        {"stream", no_argument, NULL, O_STREAM},
        {"no-journal", no_argument, NULL, O_NOJOURNAL},
        {"quiet", no_argument, NULL, O_QUIET},
        {"config", required_argument, NULL, O_CONFIG},
        {"resume", required_argument, NULL, O_RESUME},
        {"max-time", required_argument, NULL, O_MAX_TIME},
        {"max-total-tokens", required_argument, NULL, O_MAX_TOKENS},
        {"skill", required_argument, NULL, O_SKILL},
        {"progress", no_argument, NULL, O_PROGRESS},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0}};
    int c, st = EXIT_DONE;
    opterr = 0;
    optind = 1;
    while (st == EXIT_DONE &&
           (c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_PROVIDER:
            o->provider = optarg;
            break;
        case O_BASE_URL:
            o->base_url = optarg;
            break;
        case O_MODEL:
            o->model = optarg;
            break;
        case O_KEY_ENV:
            o->key_env = optarg;
            break;
        case O_KEY_FILE:
            o->key_file = optarg;
            break;
        case O_SYSTEM:
            o->system = optarg;
            break;
        case O_MAX_ITER:
            st = cli_parse_int("--max-iterations", optarg, 1, 1000000,
                               &o->max_iterations);
            break;
        case O_MAX_CALLS:
            st = cli_parse_int("--max-tool-calls", optarg, 1, 1000000000,
                               &o->max_tool_calls);
            break;
        case O_SKILL:
            st = append_arg(&o->skills, &o->nskills, optarg);
            break;
        case O_STOP_TOOL:
            st = append_arg(&o->stop_tools, &o->nstop_tools, optarg);
            break;
        case O_TRANSCRIPT:
            o->transcript = optarg;
            break;
        case O_TIMEOUT:
            st =
                cli_parse_int("--timeout", optarg, 1, 86400000, &o->timeout_ms);
            break;
        case O_REQ_TIMEOUT:
            st = cli_parse_int("--request-timeout", optarg, 1, 86400000LL,
                               &o->request_timeout_ms);
            break;
        case O_ATTEMPTS:
            st = cli_parse_int("--max-attempts", optarg, 1, 1000,
                               &o->max_attempts);
            break;
        case O_BUDGET:
            st = cli_parse_int("--retry-budget", optarg, 1, 86400000LL,
                               &o->retry_budget_ms);
            break;
        case O_APPROVE:
            o->approve = 1;
            break;
        case O_STREAM:
            o->stream = 1;
            break;
        case O_NOJOURNAL:
            o->no_journal = 1;
            break;
        case O_QUIET:
            o->quiet = 1;
            break;
        case O_PROGRESS:
            o->live = 1;
            break;
        case O_CONFIG:
            o->config = optarg;
            break;
        case O_RESUME:
            o->resume = optarg;
            break;
        case O_MAX_TIME:
            st = cli_parse_int("--max-time", optarg, 1, 86400000LL * 365,
                               &o->max_time_ms);
            break;
        case O_MAX_TOKENS:
            st = cli_parse_int("--max-total-tokens", optarg, 1, 1000000000000LL,
                               &o->max_total_tokens);
            break;
        case O_HELP:
            fputs(agent_usage, stdout);
            return -1;
        default:
            cli_error("agent: unknown or incomplete option '%s' (try "
                      "'toolgate agent --help')",
                      argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (st != EXIT_DONE)
        return st;
    if (optind < argc)
        o->prompt = argv[optind++];
    if (optind < argc) {
        cli_error("agent: one prompt at most (quote it), got '%s' too",
                  argv[optind]);
        return EXIT_USAGE;
    }
    if (o->resume != NULL && o->prompt != NULL) {
        cli_error("agent: --resume goes on with the loop's own prompt; give "
                  "no PROMPT");
        return EXIT_USAGE;
    }
    const char *missing = o->resume != NULL     ? NULL
                          : o->provider == NULL ? "--provider"
                          : o->base_url == NULL ? "--base-url"
                          : o->model == NULL    ? "--model"
                          : o->prompt == NULL   ? "a PROMPT (or - for stdin)"
                                                : NULL;
    if (missing != NULL) {
        cli_error("agent: %s is needed (try 'toolgate agent --help')", missing);
        return EXIT_USAGE;
    }
    if (o->key_env != NULL && o->key_file != NULL) {
        cli_error("agent: --api-key-env and --api-key-file exclude each "
                  "other");
        return EXIT_USAGE;
    }
    return EXIT_DONE;
}

/* Reads the API key: --api-key-file (its first line), --api-key-env (must
 * be set), else the provider's variable when set; *key NULL: none. The key
 * is never printed. */
static int read_key(const agent_opts *o, const char *provider, char **key)
{
    *key = NULL;
    if (o->key_file != NULL) {
        char *text = NULL;
        size_t len = 0;
        int st = cli_read_all(o->key_file, 64 * 1024, &text, &len);
        if (st != EXIT_DONE)
            return st;
        text[strcspn(text, "\r\n")] = '\0';
        if (text[0] == '\0') {
            free(text);
            cli_error("--api-key-file %s: the file holds no key", o->key_file);
            return EXIT_USAGE;
        }
        *key = text;
        return EXIT_DONE;
    }
    const char *var = o->key_env;
    if (var == NULL)
        var = strcmp(provider, "anthropic") == 0 ? "ANTHROPIC_API_KEY"
              : strcmp(provider, "gemini") == 0  ? "GEMINI_API_KEY"
                                                 : "OPENAI_API_KEY";
    const char *v = getenv(var);
    if (v == NULL || v[0] == '\0') {
        if (o->key_env != NULL) {
            cli_error("--api-key-env %s: the variable is not set", var);
            return EXIT_USAGE;
        }
        return EXIT_DONE; /* a local server needs none */
    }
    *key = strdup(v);
    if (*key == NULL) {
        cli_error("out of memory");
        return EXIT_INTERNAL;
    }
    return EXIT_DONE;
}

/* ------------------------------------------------------------ progress */

/* What stderr shows: one line per event, or (on a terminal, or with
 * --progress) a live view that adds the model's text as it streams, under
 * a heading per iteration. Everything from the model or a tool is escaped
 * for the terminal. */
typedef struct view {
    int live;
    int shown;   /* the iteration whose heading is out */
    int in_text; /* the cursor is after streamed text */
} view;

static void say(const char *prefix, const char *text)
{
    fputs(prefix, stderr);
    cli_put_safe(stderr, text, strlen(text), 0);
}

static void heading(view *v, int iteration)
{
    if (v->in_text) {
        fputc('\n', stderr);
        v->in_text = 0;
    }
    if (v->live && v->shown != iteration) {
        fprintf(stderr, "--- iteration %d\n", iteration);
        v->shown = iteration;
    }
}

static void ev_text(void *ud, int iteration, const char *text, size_t len)
{
    view *v = ud;
    if (!v->live)
        return;
    heading(v, iteration);
    cli_put_safe(stderr, text, len, TG_TERMINAL_KEEP_LINES);
    v->in_text = len > 0 && text[len - 1] != '\n';
    fflush(stderr);
}

static void ev_started(void *ud, int iteration, const tg_call *call)
{
    heading(ud, iteration);
    say("toolgate: agent: call ", tg_call_id(call));
    say(" ", tg_call_tool(call));
    fputs(" started\n", stderr);
}

static void ev_finished(void *ud, int iteration, const tg_call *call,
                        const tg_result *r)
{
    heading(ud, iteration);
    say("toolgate: agent: call ", tg_call_id(call));
    say(" ", tg_call_tool(call));
    fprintf(stderr, ": %s (%.1f ms)", tg_outcome_name(tg_result_outcome(r)),
            tg_result_duration_ms(r));
    if (tg_result_error_code(r) != NULL)
        say(" ", tg_result_error_code(r));
    fputc('\n', stderr);
}

static void ev_iteration(void *ud, int iteration, size_t ncalls)
{
    heading(ud, iteration);
    fprintf(stderr, "toolgate: agent: iteration %d: %zu call%s\n", iteration,
            ncalls, ncalls == 1 ? "" : "s");
}

static void ev_retry(void *ud, int attempt, long delay_ms, const char *why)
{
    heading(ud, ((view *)ud)->shown);
    fprintf(stderr, "toolgate: agent: attempt %d in %ld ms after ", attempt,
            delay_ms);
    cli_put_safe(stderr, why, strlen(why), 0);
    fputc('\n', stderr);
}

static int write_transcript(const char *path, const tg_loop *loop)
{
    char *t = tg_loop_transcript(loop);
    FILE *f = t != NULL ? fopen(path, "w") : NULL;
    int ok = f != NULL && fputs(t, f) >= 0 && fputc('\n', f) != EOF;
    if (f != NULL && fclose(f) != 0)
        ok = 0;
    if (!ok)
        cli_error("cannot write the transcript %s: %s", path,
                  t == NULL ? "out of memory" : strerror(errno));
    tg_free(t);
    return ok ? EXIT_DONE : EXIT_INTERNAL;
}

/* With --resume and no --provider: the journaled loop's provider in
 * *provider (malloc'd), for the default variable of its key. */
static int resumed_provider(tg_runtime *rt, const agent_opts *o,
                            char **provider)
{
    *provider = NULL;
    if (o->resume == NULL || o->provider != NULL)
        return EXIT_DONE;
    const char *journal = tg_runtime_journal(rt);
    if (journal == NULL) {
        cli_error("agent: --resume: the journal is off (a loop is resumed "
                  "from the journal it was recorded in)");
        return EXIT_USAGE;
    }
    char *text = NULL;
    tg_error err = {0};
    int rc = tg_loop_show(journal, o->resume, &text, &err);
    if (rc != 0) {
        cli_error("agent: --resume: %s", err.message);
        return rc == TG_ENOTFOUND ? EXIT_USAGE : cli_exit_for(rc);
    }
    json_t *loop = json_loads(text, 0, NULL); /* new ref */
    tg_free(text);
    const char *name = json_string_value(json_object_get(loop, "provider"));
    char *p = name != NULL ? strdup(name) : NULL;
    json_decref(loop);
    if (p == NULL) {
        cli_error("agent: --resume: the loop names no provider");
        return EXIT_INTERNAL;
    }
    *provider = p;
    return EXIT_DONE;
}

/* --resume of a loop that ended for good (its process may have died
 * before it printed the answer): the answer on stdout and the exit status
 * of its end, as the run that ended it would have given. -1 when the loop
 * did not end (it runs elsewhere). */
static int ended_loop(tg_runtime *rt, const char *id)
{
    char *text = NULL;
    if (tg_loop_show(tg_runtime_journal(rt), id, &text, NULL) != 0)
        return -1;
    json_t *loop = json_loads(text, 0, NULL); /* new ref */
    tg_free(text);
    const char *stop = json_string_value(json_object_get(loop, "stop"));
    const char *answer = json_string_value(json_object_get(loop, "answer"));
    int status = -1;
    if (stop != NULL && strcmp(stop, "running") != 0) {
        fprintf(stderr, "toolgate: agent: loop %s had ended (%s)\n", id, stop);
        if (answer != NULL && answer[0] != '\0') {
            cli_put_safe(stdout, answer, strlen(answer),
                         TG_TERMINAL_KEEP_LINES);
            fputc('\n', stdout);
        }
        status = strcmp(stop, "answered") == 0 || strcmp(stop, "stop_tool") == 0
                     ? EXIT_DONE
                     : EXIT_STRICT;
    }
    json_decref(loop);
    return status;
}

/* The skills of --skill NAME=FILE (each file read whole) in *out (n of
 * them; names and texts malloc'd, free_skills frees). */
static int load_skills(const agent_opts *o, tg_loop_skill **out)
{
    *out = o->nskills > 0 ? calloc(o->nskills, sizeof **out) : NULL;
    if (o->nskills > 0 && *out == NULL) {
        cli_error("out of memory");
        return EXIT_INTERNAL;
    }
    for (size_t i = 0; i < o->nskills; i++) {
        const char *eq = strchr(o->skills[i], '=');
        if (eq == NULL || eq == o->skills[i] || eq[1] == '\0') {
            cli_error("agent: --skill wants NAME=FILE, not '%s'", o->skills[i]);
            return EXIT_USAGE;
        }
        char *name = strndup(o->skills[i], (size_t)(eq - o->skills[i]));
        if (name == NULL) {
            cli_error("out of memory");
            return EXIT_INTERNAL;
        }
        (*out)[i].name = name;
        for (size_t j = 0; j < i; j++)
            if (strcmp((*out)[j].name, name) == 0) {
                cli_error("agent: --skill %s is given twice", name);
                return EXIT_USAGE;
            }
        char *text = NULL;
        size_t len;
        int st = cli_read_all(eq + 1, CLI_MAX_INPUT, &text, &len);
        if (st != EXIT_DONE)
            return st == EXIT_INTERNAL ? st : EXIT_USAGE;
        (*out)[i].text = text;
    }
    return EXIT_DONE;
}

static void free_skills(tg_loop_skill *k, size_t n)
{
    for (size_t i = 0; k != NULL && i < n; i++) {
        free((char *)k[i].name);
        free((char *)k[i].text);
    }
    free(k);
}

static int load_system(const char *arg, char **out)
{
    *out = NULL;
    if (arg == NULL)
        return EXIT_DONE;
    if (arg[0] == '@') {
        size_t len;
        return cli_read_all(arg + 1, CLI_MAX_INPUT, out, &len);
    }
    *out = strdup(arg);
    return *out != NULL ? EXIT_DONE : EXIT_INTERNAL;
}

int cmd_agent(int argc, char **argv)
{
    agent_opts o = {0};
    int status = parse_opts(argc, argv, &o);
    if (status != EXIT_DONE) {
        free(o.stop_tools);
        return status < 0 ? EXIT_DONE : status;
    }
    tg_config *cfg = NULL;
    tg_runtime *rt = NULL;
    tg_loop *loop = NULL;
    char *key = NULL, *system = NULL, *prompt = NULL;
    tg_loop_skill *skills = NULL;
    tg_error err = {0};
    if ((status = load_system(o.system, &system)) != EXIT_DONE ||
        (status = load_skills(&o, &skills)) != EXIT_DONE)
        goto done;
    if (o.prompt == NULL) {
        /* --resume: the journaled prompt */
    } else if (strcmp(o.prompt, "-") == 0) {
        size_t len;
        if ((status = cli_read_all("-", CLI_MAX_INPUT, &prompt, &len)) !=
            EXIT_DONE)
            goto done;
    } else if ((prompt = strdup(o.prompt)) == NULL) {
        status = EXIT_INTERNAL;
        goto done;
    }
    if ((status = cli_load_config(o.config, &cfg)) != EXIT_DONE)
        goto done;
    int rc = 0;
    if (o.timeout_ms)
        rc = tg_config_set_timeout_ms(cfg, o.timeout_ms, &err);
    if (rc == 0 && o.no_journal)
        rc = tg_config_set_journal(cfg, NULL, &err);
    if (rc == 0)
        rc = tg_runtime_new(cfg, &rt, &err);
    if (rc != 0) {
        cli_error("%s", err.message);
        status = cli_exit_for(rc);
        goto done;
    }
    if (tg_runtime_warning(rt) != NULL && !o.quiet) {
        const char *w = tg_runtime_warning(rt);
        say("toolgate: ", w);
        fputc('\n', stderr);
    }
    tg_runtime_set_approve(rt, o.approve);
    char *provider = NULL;
    if ((status = resumed_provider(rt, &o, &provider)) != EXIT_DONE)
        goto done;
    status = read_key(&o, provider != NULL ? provider : o.provider, &key);
    free(provider);
    if (status != EXIT_DONE)
        goto done;
    tg_loop_options lo = {
        .provider = o.provider,
        .base_url = o.base_url,
        .model = o.model,
        .api_key = key,
        .system = system,
        .max_iterations = (int)o.max_iterations,
        .max_tool_calls = (long)o.max_tool_calls,
        .stop_tools = o.stop_tools,
        .nstop_tools = o.nstop_tools,
        .request_timeout_ms = (long)o.request_timeout_ms,
        .max_attempts = (int)o.max_attempts,
        .retry_budget_ms = (long)o.retry_budget_ms,
        .stream = o.stream,
        .max_time_ms = (long)o.max_time_ms,
        .max_total_tokens = (long)o.max_total_tokens,
        .skills = skills,
        .nskills = o.nskills,
    };
    static const tg_loop_events progress = {
        .text = ev_text,
        .call_started = ev_started,
        .call_finished = ev_finished,
        .iteration_done = ev_iteration,
        .retry = ev_retry,
    };
    view v = {.live = o.live || (!o.quiet && isatty(STDERR_FILENO))};
    rc =
        o.resume != NULL
            ? tg_loop_resume(rt, o.resume, &lo, o.quiet ? NULL : &progress, &v,
                             &loop, &err)
            : tg_loop_new(rt, &lo, o.quiet ? NULL : &progress, &v, &loop, &err);
    if (key != NULL) {
        memset(key, 0, strlen(key)); /* the loop holds its own copy */
        free(key);
        key = NULL;
    }
    if (rc == TG_EEXIST && o.resume != NULL &&
        (status = ended_loop(rt, o.resume)) >= 0)
        goto done;
    if (rc != 0) {
        cli_error("agent: %s", err.message);
        status =
            rc == TG_EJOURNAL || rc == TG_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        goto done;
    }
    if (!o.quiet && tg_runtime_journal(rt) != NULL)
        fprintf(stderr, "toolgate: agent: loop %s%s\n", tg_loop_id(loop),
                o.resume != NULL ? " resumed" : "");
    the_loop = loop;
    struct sigaction sa = {0};
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESETHAND; /* a second SIGINT kills */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a tool's stdin closed early */
    rc = tg_loop_run(loop, prompt, &err);
    signal(SIGINT, SIG_DFL);
    tg_loop_stop stop = tg_loop_stop_reason(loop);
    if (o.transcript != NULL &&
        (status = write_transcript(o.transcript, loop)) != EXIT_DONE)
        goto done;
    const char *answer = tg_loop_answer(loop);
    if (rc != 0) {
        cli_error("agent: %s", err.message);
        if (tg_runtime_journal(rt) != NULL)
            cli_error("agent: go on later with: toolgate agent --resume %s",
                      tg_loop_id(loop));
        status = rc == TG_ENOMEM || rc == TG_EINTERNAL || rc == TG_EJOURNAL
                     ? EXIT_INTERNAL
                     : EXIT_MODEL;
        goto done;
    }
    if (answer[0] != '\0') {
        cli_put_safe(stdout, answer, strlen(answer), TG_TERMINAL_KEEP_LINES);
        fputc('\n', stdout);
    }
    if (fflush(stdout) != 0) {
        cli_error("cannot write the answer to stdout");
        status = EXIT_INTERNAL;
        goto done;
    }
    if (stop == TG_LOOP_ANSWERED || stop == TG_LOOP_STOP_TOOL) {
        status = EXIT_DONE;
    } else {
        cli_error(
            "agent: stopped without an answer: %s after %d "
            "iteration%s, %ld tool call%s and %ld tokens",
            tg_loop_stop_name(stop), tg_loop_iteration(loop),
            tg_loop_iteration(loop) == 1 ? "" : "s", tg_loop_tool_calls(loop),
            tg_loop_tool_calls(loop) == 1 ? "" : "s", tg_loop_tokens(loop));
        status = EXIT_STRICT;
    }
done:
    the_loop = NULL;
    tg_loop_free(loop);
    tg_runtime_free(rt);
    tg_config_free(cfg);
    if (key != NULL)
        memset(key, 0, strlen(key));
    free(key);
    free(system);
    free(prompt);
    free(o.stop_tools);
    free_skills(skills, o.nskills);
    free(o.skills);
    return status;
}
