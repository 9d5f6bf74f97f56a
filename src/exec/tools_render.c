/* SPDX-License-Identifier: MIT */
/*
 * tools_render.c - tg_runtime_tools: the registered tools' definitions in a
 * wire format's shape. The registry's tools become one neutral array of
 * {"name","description","input_schema","annotations"?}, and the format's
 * render_tools (src/formats) gives it its shape, so every format's tool
 * definitions live next to the rest of that format.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "format.h"
#include "runtime.h"

/* The neutral definition of one tool; new ref, NULL on OOM. */
static json_t *neutral(const tg_tool *t)
{
    json_t *o = json_pack(
        "{s:s, s:s, s:o}", "name", t->name, "description",
        t->description ? t->description : "", "input_schema",
        t->input_schema ? json_incref(t->input_schema)
                        : json_pack("{s:s}", "type", "object")); /* new ref */
    if (o != NULL && t->annotations != NULL &&
        json_object_set(o, "annotations", t->annotations) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
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
    const tg_format *fmt = tg__format_find(format);
    if (fmt == NULL || fmt->render_tools == NULL)
        return tg__error_set(err, TG_EFORMAT,
                             "cannot list tools in format '%s' (supported: "
                             "mcp, openai-chat, openai-responses, anthropic, "
                             "gemini, toolgate)",
                             format);
    json_t *tools = json_array(); /* new ref */
    int rc = tools ? 0 : TG_ENOMEM;
    size_t n = tg__registry_count(rt->reg);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (json_array_append_new(tools, neutral(tg__registry_at(rt->reg, i))))
            rc = TG_ENOMEM;
    tg_buf b;
    tg__buf_init(&b, 0);
    if (rc == 0)
        rc = fmt->render_tools(tools, &b, err);
    else
        tg__error_set(err, rc, "out of memory");
    json_decref(tools);
    if (rc == 0 && (*out = tg__buf_take(&b)) == NULL)
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
    tg__buf_cleanup(&b);
    return rc;
}
