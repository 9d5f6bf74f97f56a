/* SPDX-License-Identifier: MIT */
/*
 * cmd_serve.c - `toolgate serve`: the configured tools as an MCP server,
 * over stdio (--stdio) or Streamable HTTP (--http HOST:PORT), every call
 * through the gate (schema, policy, sandbox, deadline, spool, journal).
 * SIGTERM and SIGINT stop it gracefully: nothing new is taken, running
 * calls get --grace MS to end before they are canceled, every request is
 * answered, and the journal is closed.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#ifdef TG_HAVE_HTTP
#include "http_transport.h"
#else
typedef struct srv_http srv_http;
#endif
#include "serve.h"
#include "stdio_transport.h"

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

typedef struct serve_state {
    tg__srv *srv;
    srv_http *http;
    int64_t grace;
    uv_signal_t sigs[2];
} serve_state;

static void on_signal(uv_signal_t *h, int signum)
{
    serve_state *st = h->data;
    (void)signum;
#ifdef TG_HAVE_HTTP
    if (st->http != NULL)
        srv_http_stop_accepting(st->http);
#endif
    srv_stop(st->srv, st->grace);
}

/* The signal watchers must not keep the loop alive once the server is
 * done. */
static void on_stopped(tg__srv *srv, void *ud)
{
    serve_state *st = ud;
    (void)srv;
    for (int i = 0; i < 2; i++)
        uv_close((uv_handle_t *)&st->sigs[i], NULL);
#ifdef TG_HAVE_HTTP
    if (st->http != NULL)
        srv_http_close(st->http);
#endif
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
    tg_config *cfg = NULL;
    tg_runtime *rt = NULL;
    if ((status = make_runtime(&o, &cfg, &rt)) != EXIT_DONE) {
        tg_config_free(cfg);
        return status;
    }
    /* Writing to a client that went away must not kill the server. */
    signal(SIGPIPE, SIG_IGN);
    tg_error err = {0};
    srv_options so = {.caller = o.caller,
                      .trace = o.trace,
                      .spool_dir = tg_config_spool_dir(cfg),
                      .journal = tg_config_journal(cfg)};
    serve_state st = {.grace = o.grace};
    srv_stdio *sio = NULL;
    st.srv = srv_new(rt, &so, &err);
    if (st.srv == NULL) {
        cli_error("serve: %s", err.message);
        status = EXIT_INTERNAL;
        goto out;
    }
    if (o.stdio) {
        sio = srv_stdio_start(st.srv, o.caller, o.grace, &err);
        if (sio == NULL)
            status = EXIT_INTERNAL;
    } else {
#ifdef TG_HAVE_HTTP
        srv_http_options ho = {.listen = o.http,
                               .token_file = o.token_file,
                               .origins = o.origins,
                               .norigins = o.norigins,
                               .caller = o.caller,
                               .grace_ms = o.grace};
        if (srv_http_start(st.srv, &ho, &st.http, &err) != 0)
            status = err.code == TG_EINVAL ? EXIT_USAGE : EXIT_INTERNAL;
#else
        snprintf(err.message, sizeof err.message, "--http is not built yet");
        status = EXIT_USAGE;
#endif
    }
    if (status != EXIT_DONE) {
        cli_error("serve: %s", err.message);
        goto out;
    }
    int signums[2] = {SIGTERM, SIGINT};
    for (int i = 0; i < 2; i++) {
        uv_signal_init(srv_loop(st.srv), &st.sigs[i]);
        st.sigs[i].data = &st;
        uv_signal_start(&st.sigs[i], on_signal, signums[i]);
    }
    srv_on_stopped(st.srv, on_stopped, &st);
    srv_run(st.srv);
out:
    srv_stdio_free(sio);
    srv_free(st.srv);
#ifdef TG_HAVE_HTTP
    srv_http_free(st.http);
#endif
    tg_runtime_free(rt);
    tg_config_free(cfg);
    return status;
}
