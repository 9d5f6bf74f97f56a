/* SPDX-License-Identifier: MIT */
/*
 * embed.c - toolgate as a library: register an in-process tool, run the tool
 * calls of an OpenAI Chat Completions message through the runtime, print the
 * tool messages to send back to the model, and inspect each result.
 *
 *   cc embed.c $(pkg-config --cflags --libs toolgate) -o embed   (installed)
 *   build/examples/c/embed                                      (in the tree)
 */
#include <stdio.h>
#include <string.h>

#include "toolgate.h"

/* A tool: adds two numbers. Arguments arrive as a JSON object's text. */
static int add(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    (void)ud;
    double a = 0, b = 0;
    const char *pa = strstr(args, "\"a\":"), *pb = strstr(args, "\"b\":");
    (void)len;
    if (pa == NULL || pb == NULL || sscanf(pa + 4, "%lf", &a) != 1 ||
        sscanf(pb + 4, "%lf", &b) != 1)
        return tg_handler_fail(ctx, "BAD_INPUT", "a and b must be numbers",
                               NULL);
    char out[64];
    int n = snprintf(out, sizeof out, "{\"sum\":%g}", a + b);
    return tg_handler_set_json(ctx, out, (size_t)n, NULL);
}

int main(void)
{
    const char *message =
        "{\"role\":\"assistant\",\"tool_calls\":["
        "{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":"
        "\"add\",\"arguments\":\"{\\\"a\\\":2,\\\"b\\\":40}\"}},"
        "{\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":"
        "\"add\",\"arguments\":\"{\\\"a\\\":\\\"two\\\"}\"}},"
        "{\"id\":\"call_3\",\"type\":\"function\",\"function\":{\"name\":"
        "\"launch_rockets\",\"arguments\":\"{}\"}}]}";
    tg_error err = {0};
    tg_config *cfg = tg_config_new();
    tg_runtime *rt = NULL;
    tg_turn *turn = NULL;
    char *out = NULL;
    size_t out_len = 0;
    int status = 1;

    tg_config_set_journal(cfg, NULL,
                          NULL); /* keep this example side-effect free */
    if (tg_runtime_new(cfg, &rt, &err) != 0 ||
        tg_runtime_register(
            rt, "add", "Add two numbers",
            "{\"type\":\"object\",\"properties\":{\"a\":{"
            "\"type\":\"number\"},\"b\":{\"type\":\"number\"}}}",
            add, NULL, TG_TOOL_INLINE, &err) != 0 ||
        tg_turn_parse(message, strlen(message), "auto", "example", &turn,
                      &err) != 0 ||
        tg_runtime_run_turn(rt, turn, &err) != 0 ||
        tg_turn_render(turn, NULL, &out, &out_len, &err) != 0) {
        fprintf(stderr, "toolgate: %s\n", err.message);
        goto done;
    }
    fwrite(out, 1, out_len, stdout);
    for (size_t i = 0; i < tg_turn_call_count(turn); i++) {
        const tg_result *r = tg_turn_result(turn, i);
        printf("%s %s: %s %s\n", tg_result_id(r), tg_result_tool(r),
               tg_outcome_name(tg_result_outcome(r)),
               tg_result_succeeded(r) ? tg_result_data_json(r)
                                      : tg_result_error_message(r));
    }
    status = 0;
done:
    tg_free(out);
    tg_turn_free(turn);
    tg_runtime_free(rt);
    tg_config_free(cfg);
    return status;
}
