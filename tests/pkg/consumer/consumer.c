/* SPDX-License-Identifier: MIT */
/*
 * consumer.c - a program built against an installed toolgate (tests/pkg/
 * install.sh builds it with find_package(toolgate) and with pkg-config):
 * both public headers compile, the library it runs with has the version
 * it was compiled against, and a turn runs through a registered C tool.
 * Prints "consumer: VERSION call_1 success {"n":42}" and exits 0, or says
 * what failed and exits 1.
 */
#include <stdio.h>
#include <string.h>

#include <toolgate.h>
#include <toolgate_loop.h>

static int answer(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    (void)args;
    (void)len;
    (void)ud;
    return tg_handler_set_json(ctx, "{\"n\":42}", 8, NULL);
}

int main(void)
{
    const char *config = "{\"journal\": null, \"builtin_tools\": []}";
    const char *turn_text =
        "{\"id\":\"call_1\",\"tool\":\"answer\",\"args\":{}}\n";
    tg_error err = {0};
    tg_config *cfg = tg_config_new();
    tg_runtime *rt = NULL;
    tg_turn *turn = NULL;
    int status = 1;
    if (strcmp(tg_version(), TOOLGATE_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: runs with %s, compiled against %s\n",
                tg_version(), TOOLGATE_VERSION_STRING);
        goto fail;
    }
    if (cfg == NULL ||
        tg_config_load(cfg, config, strlen(config), ".", &err) != 0 ||
        tg_runtime_new(cfg, &rt, &err) != 0 ||
        tg_runtime_register(rt, "answer", "the answer", "{\"type\":\"object\"}",
                            answer, NULL, 0, &err) != 0 ||
        tg_turn_parse(turn_text, strlen(turn_text), "toolgate", NULL, &turn,
                      &err) != 0 ||
        tg_runtime_run_turn(rt, turn, &err) != 0) {
        fprintf(stderr, "consumer: %s: %s\n", tg_err_name(err.code),
                err.message);
        goto fail;
    }
    const tg_result *r = tg_turn_result(turn, 0);
    printf("consumer: %s %s %s %s\n", tg_version(), tg_result_id(r),
           tg_outcome_name(tg_result_outcome(r)), tg_result_data_json(r));
    status = tg_loop_stop_name(0) != NULL ? 0 : 1;
fail:
    tg_turn_free(turn);
    tg_runtime_free(rt);
    tg_config_free(cfg);
    return status;
}
