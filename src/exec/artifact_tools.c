/* SPDX-License-Identifier: MIT */
/*
 * artifact_tools.c - the artifact tools a model reads spooled output with
 * (artifact_read, artifact_head, artifact_tail, artifact_grep,
 * artifact_stat; src/spool/tools.c does the work), registered as
 * thread-pool handlers when the runtime has a spool: a grep over a GiB must
 * not hold up the loop. Their calls are marked from_artifact_tool by the
 * checks, so their results are never spooled again. They only read the
 * spool, so they are added to the registry directly, below the runtime.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact_tools.h"
#include "error.h"
#include "record.h"
#include "tool.h"

static int run_artifact_tool(tg_handler_ctx *ctx, const char *args_json,
                             size_t args_len, void *ud)
{
    tg_spool *spool = ud;
    const tg_call *call = tg_handler_call(ctx);
    char *payload = NULL;
    const char *code = NULL;
    tg_error err = {0};
    int rc = tg__spool_tool_exec(spool, call->tool, args_json, args_len, NULL,
                                 0, &payload, &code, &err);
    if (rc != 0) {
        tg_handler_fail(ctx, code ? code : "TOOL_FAILED", err.message, NULL);
        return -1;
    }
    rc = tg_handler_set_json(ctx, payload, strlen(payload), NULL);
    free(payload);
    return rc == 0 ? 0 : -1;
}

/* A configured tool (tools[i]) that has the name of an artifact tool: the
 * error names its key, as every configuration error does. 0 when the name
 * is free or was not taken by the configuration (tg_runtime_register then
 * says so). */
static int name_taken(const tg__registry *reg, const tg_config *cfg,
                      const char *name, tg_error *err)
{
    if (tg__registry_find(reg, name) == NULL)
        return 0;
    size_t i;
    json_t *t; /* borrowed */
    json_array_foreach(cfg->tools, i, t)
    {
        const char *n = json_string_value(json_object_get(t, "name"));
        if (n == NULL || strcmp(n, name) != 0)
            continue;
        tg__error_set(err, TG_ECONFIG,
                      "tools[%zu].name: a tool named '%s' is already "
                      "registered (a built-in tool: the artifact tools come "
                      "with the spool; rename the tool, or turn the spool "
                      "off with \"spool\": null)",
                      i, name);
        char ptr[64];
        snprintf(ptr, sizeof ptr, "/tools/%zu/name", i);
        tg__error_pointer(err, ptr);
        return TG_ECONFIG;
    }
    return 0;
}

int tg__artifact_tools_add(tg__registry *reg, const tg_config *cfg,
                           tg_spool *spool, tg_error *err)
{
    json_t *defs = tg__spool_tool_defs(NULL, 0); /* new ref */
    if (defs == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    int rc = 0;
    size_t i;
    json_t *d; /* borrowed */
    json_array_foreach(defs, i, d)
    {
        json_t *schema = json_object_get(d, "input_schema"); /* borrowed */
        /* the enum of ids is the listing's (tools_render.c): any stored id
         * is accepted here, and checked by the spool */
        json_t *props = json_object_get(schema, "properties"); /* borrowed */
        json_t *art = json_object_get(props, "artifact");      /* borrowed */
        json_object_del(art, "enum");
        char *text = json_dumps(schema, JSON_COMPACT);
        if (text == NULL) {
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
            break;
        }
        const char *name = json_string_value(json_object_get(d, "name"));
        if ((rc = name_taken(reg, cfg, name, err)) != 0) {
            free(text);
            break;
        }
        tg__tool *tool = NULL;
        rc = tg__tool_new_handler(
            name, json_string_value(json_object_get(d, "description")), text,
            run_artifact_tool, spool, 0, &tool, err);
        free(text);
        if (rc != 0 || (rc = tg__registry_add(reg, tool, err)) != 0)
            break;
    }
    json_decref(defs);
    return rc;
}
