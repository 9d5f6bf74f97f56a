/* SPDX-License-Identifier: MIT */
/*
 * cmd_serve.c - `toolgate serve`: the configured tools as an MCP server,
 * over stdio (--stdio) or Streamable HTTP (--http HOST:PORT), every call
 * through the gate (schema, policy, sandbox, deadline, spool, journal).
 * SIGTERM and SIGINT stop it gracefully: nothing new is taken, running
 * calls get --grace MS to end before they are canceled, every request is
 * answered, and the journal is closed. A face over the public API
 * (toolgate_serve.h), as a C program embedding the server would be.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "toolgate_serve.h"

static const char serve_usage[] =
    "usage: toolgate serve (--stdio | --http HOST:PORT) [options]\n"
    "\n"
    "Serves the configured tools over the Model Context Protocol\n"
    "(2025-06-18, 2025-11-25, 2026-07-28): tools/list, tools/call through\n"
    "the whole gate, progress and log notifications, cancellation, the\n"
    "spooled artifacts as resources.\n"
    "\n"
    "  --stdio              newline-delimited JSON-RPC on stdin/stdout\n"
    "  --http HOST:PORT     Streamable HTTP on http://HOST:PORT/mcp (port 0:\n"
    "                       any free port; the URL is printed on stderr)\n"
    "  --token-file F       HTTP: require Authorization: Bearer <F's text>\n"
    "  --allow-origin O     HTTP: also allow this Origin (repeatable)\n"
    "  --config FILE        configuration (default: ./toolgate.json)\n"
    "  --caller ID          caller id of the calls (default: mcp-client)\n"
    "  --parallel N         calls at once, shared by every client\n"
    "  --timeout MS         default per-call deadline\n"
    "  --no-journal         do not journal calls and results\n"
    "  --grace MS           on SIGTERM, running calls get MS to end (5000)\n"
    "  --trace FILE         append every message sent to FILE (JSON Lines)\n";

typedef struct serve_opts {
    int stdio;
    const char *http, *token_file, *config, *caller, *trace;
    const char *origins[16];
    int norigins;
    long long parallel, timeout, grace;
    int no_journal;
} serve_opts;

static int parse(int argc, char **argv, serve_opts *o)
{
    enum {
        O_STDIO = 256,
        O_HTTP,
        O_TOKEN,
        O_ORIGIN,
        O_CONFIG,
        O_CALLER,
        O_PARALLEL,
        O_TIMEOUT,
        O_NOJOURNAL,
        O_GRACE,
        O_TRACE,
        O_HELP
    };
    static const struct option longopts[] = {
        {"stdio", no_argument, NULL, O_STDIO},
        {"http", required_argument, NULL, O_HTTP},
        {"token-file", required_argument, NULL, O_TOKEN},
        {"allow-origin", required_argument, NULL, O_ORIGIN},
        {"config", required_argument, NULL, O_CONFIG},
        {"caller", required_argument, NULL, O_CALLER},
        {"parallel", required_argument, NULL, O_PARALLEL},
        {"timeout", required_argument, NULL, O_TIMEOUT},
        {"no-journal", no_argument, NULL, O_NOJOURNAL},
        {"grace", required_argument, NULL, O_GRACE},
        {"trace", required_argument, NULL, O_TRACE},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0}};
    int c, rc;
    opterr = 0;
    optind = 1;
    o->grace = 5000;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_STDIO:
            o->stdio = 1;
            break;
        case O_HTTP:
            o->http = optarg;
            break;
        case O_TOKEN:
            o->token_file = optarg;
            break;
        case O_ORIGIN:
            if (o->norigins == 16) {
                cli_error("serve: at most 16 --allow-origin");
                return EXIT_USAGE;
            }
            o->origins[o->norigins++] = optarg;
            break;
        case O_CONFIG:
            o->config = optarg;
            break;
        case O_CALLER:
            o->caller = optarg;
            break;
        case O_PARALLEL:
            if ((rc = cli_parse_int("--parallel", optarg, 1, 1024,
                                    &o->parallel)) != 0)
                return rc;
            break;
        case O_TIMEOUT:
            if ((rc = cli_parse_int("--timeout", optarg, 1, 86400000,
                                    &o->timeout)) != 0)
                return rc;
            break;
        case O_NOJOURNAL:
            o->no_journal = 1;
            break;
        case O_GRACE:
            if ((rc = cli_parse_int("--grace", optarg, 0, 3600000,
                                    &o->grace)) != 0)
                return rc;
            break;
        case O_TRACE:
            o->trace = optarg;
            break;
        case O_HELP:
            fputs(serve_usage, stdout);
            return -1;
        default:
            cli_error("serve: unknown or incomplete option '%s'",
                      argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_error("serve: unexpected argument '%s'", argv[optind]);
        return EXIT_USAGE;
    }
    if (o->stdio == (o->http != NULL)) {
        cli_error("serve: give one of --stdio and --http HOST:PORT");
        return EXIT_USAGE;
    }
    if (o->stdio && (o->token_file || o->norigins)) {
        cli_error("serve: --token-file and --allow-origin are for --http");
        return EXIT_USAGE;
    }
    return 0;
}

/* Splits "HOST:PORT" or "[V6]:PORT" into host (size bytes) and *port. */
static int parse_listen(const char *listen, char *host, size_t size, int *port)
{
    const char *colon, *h0 = listen, *h1;
    if (listen[0] == '[') {
        h0 = listen + 1;
        h1 = strchr(h0, ']');
        colon = h1 != NULL && h1[1] == ':' ? h1 + 1 : NULL;
    } else {
        colon = strrchr(listen, ':');
        h1 = colon;
    }
    char *end = NULL;
    long p = -1;
    if (colon != NULL && colon[1] >= '0' && colon[1] <= '9') {
        errno = 0;
        p = strtol(colon + 1, &end, 10);
        if (errno != 0 || *end != '\0')
            p = -1;
    }
    size_t n = colon != NULL ? (size_t)(h1 - h0) : 0;
    if (colon == NULL || p < 0 || p > 65535 || n == 0 || n >= size) {
        cli_error("serve: --http wants HOST:PORT (127.0.0.1:8080, [::1]:0), "
                  "not '%.64s'",
                  listen);
        return EXIT_USAGE;
    }
    memcpy(host, h0, n);
    host[n] = '\0';
    *port = (int)p;
    return 0;
}

static int make_runtime(const serve_opts *o, tg_config **cfgp, tg_runtime **rtp)
{
    tg_error err = {0};
    int status = cli_load_config(o->config, cfgp);
    if (status != EXIT_DONE)
        return status;
    tg_config *cfg = *cfgp;
    int rc = 0;
    if (o->parallel)
        rc = tg_config_set_parallel(cfg, (int)o->parallel, &err);
    if (rc == 0 && o->timeout)
        rc = tg_config_set_timeout_ms(cfg, o->timeout, &err);
    if (rc == 0 && o->no_journal)
        rc = tg_config_set_journal(cfg, NULL, &err);
    if (rc == 0)
        rc = tg_runtime_new(cfg, rtp, &err);
    if (rc != 0) {
        cli_error("serve: %s", err.message);
        return cli_exit_for(rc);
    }
    if (tg_runtime_warning(*rtp) != NULL)
        cli_error("warning: %s", tg_runtime_warning(*rtp));
    /* A gateway offers its MCP servers' tools from the first tools/list:
     * every source is started and waited for first (one that fails is
     * listed failed by `toolgate mcp list`; its tools are not offered). */
    if ((rc = tg_runtime_sources_wait(*rtp, 0, &err)) != 0) {
        cli_error("serve: %s", err.message);
        return cli_exit_for(rc);
    }
    return EXIT_DONE;
}

int cmd_serve(int argc, char **argv)
{
    serve_opts o;
    memset(&o, 0, sizeof o);
    int status = parse(argc, argv, &o);
    if (status != 0)
        return status < 0 ? EXIT_DONE : status;
    char host[256];
    int port = 0;
    if (o.http != NULL &&
        (status = parse_listen(o.http, host, sizeof host, &port)) != 0)
        return status;
    tg_config *cfg = NULL;
    tg_runtime *rt = NULL;
    if ((status = make_runtime(&o, &cfg, &rt)) != EXIT_DONE) {
        tg_config_free(cfg);
        return status;
    }
    /* Writing to a client that went away must not kill the server. */
    signal(SIGPIPE, SIG_IGN);
    tg_error err = {0};
    tg_server_options so = {.caller = o.caller,
                            .trace = o.trace,
                            .grace_ms = o.grace > 0 ? (long)o.grace : -1,
                            .http_token_file = o.token_file,
                            .allow_origins = o.origins,
                            .nallow_origins = (size_t)o.norigins};
    tg_server *srv = NULL;
    int rc = tg_server_new(rt, &so, &srv, &err);
    if (rc == 0 && o.http != NULL) {
        if ((rc = tg_server_listen_http(srv, host, port, &err)) != 0)
            cli_error("serve: --http %s: %s", o.http, err.message);
        else
            fprintf(stderr, "toolgate: serving MCP on %s\n",
                    tg_server_url(srv));
    } else if (rc != 0) {
        cli_error("serve: %s", err.message);
    }
    if (rc == 0 && ((rc = tg_server_stop_on_signal(srv, SIGTERM, &err)) != 0 ||
                    (rc = tg_server_stop_on_signal(srv, SIGINT, &err)) != 0))
        cli_error("serve: %s", err.message);
    if (rc == 0 && (rc = o.stdio ? tg_server_run_stdio(srv, 0, 1, &err)
                                 : tg_server_run(srv, &err)) != 0)
        cli_error("serve: %s", err.message);
    if (rc != 0)
        status = rc == TG_EINVAL ? EXIT_USAGE : EXIT_INTERNAL;
    tg_server_free(srv);
    tg_runtime_free(rt);
    tg_config_free(cfg);
    return status;
}
