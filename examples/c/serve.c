/* SPDX-License-Identifier: MIT */
/*
 * serve.c - toolgate's MCP server inside a C program: a C function
 * registered as a tool on a runtime, offered to MCP clients (Claude
 * Desktop, an IDE, an agent built on an MCP SDK) over stdio, or over
 * Streamable HTTP with --http PORT (0: any free port). Every call goes
 * through the gate: the arguments are checked against the tool's JSON
 * Schema before the function runs, the policy decides, the result is
 * rendered for the client. SIGTERM or SIGINT stops it gracefully; so does
 * the end of stdin over stdio.
 *
 *   cc serve.c $(pkg-config --cflags --libs toolgate) -o serve   (installed)
 *   build/examples/c/serve [--http PORT]                          (in the tree)
 *
 * Over HTTP it prints "serving MCP on URL" on stderr once it listens.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate.h"
#include "toolgate_serve.h"

/* The tool: count, sum, smallest and largest of a list of numbers. The
 * gate has checked the arguments against the schema below, so they are
 * {"numbers": [n, ...]} with at least one number. */
static const char stats_schema[] =
    "{\"type\":\"object\",\"required\":[\"numbers\"],"
    "\"properties\":{\"numbers\":{\"type\":\"array\",\"minItems\":1,"
    "\"items\":{\"type\":\"number\"}}},\"additionalProperties\":false}";

static int stats(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    (void)ud;
    char *text = malloc(len + 1), *p, *end;
    if (text == NULL)
        return tg_handler_fail(ctx, "NO_MEMORY", "out of memory", NULL);
    memcpy(text, args, len);
    text[len] = '\0';
    p = strstr(text, "\"numbers\"");
    p = p != NULL ? strchr(p, '[') : NULL;
    double sum = 0, min = 0, max = 0;
    long n = 0;
    while (p != NULL && *p != ']') {
        double x = strtod(p + 1, &end); /* p: '[' or ',' before a number */
        if (end == p + 1)
            break;
        min = n == 0 || x < min ? x : min;
        max = n == 0 || x > max ? x : max;
        sum += x;
        n++;
        p = end + strspn(end, " \t\r\n");
    }
    free(text);
    if (n == 0)
        return tg_handler_fail(ctx, "BAD_INPUT", "numbers: no number given",
                               NULL);
    char out[160];
    int w = snprintf(out, sizeof out,
                     "{\"count\":%ld,\"sum\":%.15g,"
                     "\"min\":%.15g,\"max\":%.15g}",
                     n, sum, min, max);
    return tg_handler_set_json(ctx, out, (size_t)w, NULL);
}

int main(int argc, char **argv)
{
    long port = -1; /* -1: stdio */
    if (argc == 3 && strcmp(argv[1], "--http") == 0) {
        char *end;
        port = strtol(argv[2], &end, 10);
        if (*end != '\0' || port < 0 || port > 65535)
            port = -2;
    }
    if (port == -2 || (argc != 1 && port < 0)) {
        fprintf(stderr, "usage: serve [--http PORT]\n");
        return 2;
    }
    /* Only this program's tool is served: no built-in tools, and neither
     * journal nor spool, so that the example leaves no files behind. */
    static const char config[] =
        "{\"builtin_tools\":[],\"journal\":null,\"spool\":null}";
    tg_error err = {0};
    tg_config *cfg = tg_config_new();
    tg_runtime *rt = NULL;
    tg_server *srv = NULL;
    int status = 1;
    if (cfg == NULL) {
        fprintf(stderr, "serve: out of memory\n");
        return 1;
    }
    if (tg_config_load(cfg, config, strlen(config), NULL, &err) != 0 ||
        tg_runtime_new(cfg, &rt, &err) != 0 ||
        tg_runtime_register(
            rt, "stats", "Count, sum, smallest and largest of numbers",
            stats_schema, stats, NULL, TG_TOOL_INLINE, &err) != 0 ||
        tg_server_new(rt, NULL, &srv, &err) != 0 ||
        tg_server_stop_on_signal(srv, SIGTERM, &err) != 0 ||
        tg_server_stop_on_signal(srv, SIGINT, &err) != 0)
        goto fail;
    /* A client that went away must not kill the server. */
    signal(SIGPIPE, SIG_IGN);
    if (port >= 0) {
        if (tg_server_listen_http(srv, "127.0.0.1", (int)port, &err) != 0)
            goto fail;
        fprintf(stderr, "serve: serving MCP on %s\n", tg_server_url(srv));
        if (tg_server_run(srv, &err) != 0)
            goto fail;
    } else if (tg_server_run_stdio(srv, 0, 1, &err) != 0) {
        goto fail;
    }
    status = 0;
    goto done;
fail:
    fprintf(stderr, "serve: %s\n", err.message);
done:
    tg_server_free(srv);
    tg_runtime_free(rt);
    tg_config_free(cfg);
    return status;
}
