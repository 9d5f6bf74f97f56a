/* SPDX-License-Identifier: MIT */
/*
 * tools_render.c - tg_runtime_tools: the registered tools' definitions in
 * the shape a wire format expects: an MCP tools/list result, the
 * OpenAI Chat Completions `tools` array, or toolgate's own JSON Lines.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "runtime.h"

static json_t *schema_of(const tg_tool *t)
{
    return t->input_schema ? json_incref(t->input_schema)
                           : json_pack("{s:s}", "type", "object");
}

static json_t *tool_mcp(const tg_tool *t)
{
    json_t *o = json_pack("{s:s, s:s, s:o}", "name", t->name, "description",
                          t->description ? t->description : "", "inputSchema",
                          schema_of(t)); /* new ref */
    if (o != NULL && t->annotations != NULL &&
        json_object_set(o, "annotations", t->annotations) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *tool_openai(const tg_tool *t)
{
    return json_pack("{s:s, s:{s:s, s:s, s:o}}", "type", "function", "function",
                     "name", t->name, "description",
                     t->description ? t->description : "", "parameters",
                     schema_of(t)); /* new ref */
}

static json_t *tool_native(const tg_tool *t)
{
    return json_pack("{s:s, s:s, s:o}", "name", t->name, "description",
                     t->description ? t->description : "", "input_schema",
                     schema_of(t)); /* new ref */
}

/* Appends v (reference taken) as one line. */
static int put_line(tg_buf *b, json_t *v)
{
    if (v == NULL)
        return TG_ENOMEM;
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(v);
    if (s == NULL)
        return TG_ENOMEM;
    int rc = tg__buf_puts(b, s);
    free(s);
    if (rc == 0)
        rc = tg__buf_puts(b, "\n");
    return rc;
}

int tg_runtime_tools(tg_runtime *rt, const char *format, char **out,
                     tg_error *err)
{
    if (rt == NULL || out == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_runtime_tools needs a runtime and out");
    *out = NULL;
    if (format == NULL)
        format = "mcp";
    enum { MCP, OPENAI, NATIVE } kind;
    if (strcmp(format, "mcp") == 0)
        kind = MCP;
    else if (strcmp(format, "openai-chat") == 0)
        kind = OPENAI;
    else if (strcmp(format, "toolgate") == 0)
        kind = NATIVE;
    else
        return tg__error_set(err, TG_EFORMAT,
                             "cannot list tools in format '%s' (supported: "
                             "mcp, openai-chat, toolgate)",
                             format);
    size_t n = tg__registry_count(rt->reg);
    tg_buf b;
    tg__buf_init(&b, 0);
    json_t *arr = kind == NATIVE ? NULL : json_array(); /* new ref */
    int rc = 0;
    if (kind != NATIVE && arr == NULL)
        rc = TG_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const tg_tool *t = tg__registry_at(rt->reg, i);
        if (kind == NATIVE)
            rc = put_line(&b, tool_native(t));
        else if (json_array_append_new(arr, kind == MCP ? tool_mcp(t)
                                                        : tool_openai(t)) != 0)
            rc = TG_ENOMEM;
    }
    if (rc == 0 && kind == MCP)
        rc = put_line(&b, json_pack("{s:o}", "tools", arr));
    else if (rc == 0 && kind == OPENAI)
        rc = put_line(&b, arr);
    else
        json_decref(arr);
    if (rc != 0) {
        tg__buf_cleanup(&b);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    *out = tg__buf_take(&b);
    if (*out == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    return 0;
}
