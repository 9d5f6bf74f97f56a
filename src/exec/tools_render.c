/* SPDX-License-Identifier: MIT */
/*
 * tools_render.c - tg_runtime_tools: the registered tools' definitions in a
 * wire format's shape. The registry's tools become one neutral array of
 * {"name","description","input_schema","annotations"?}, and the format's
 * render_tools (src/formats) gives it its shape, so every format's tool
 * definitions live next to the rest of that format. tg_runtime_tools_for
 * leaves out what the policy denies a caller whatever the arguments.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "format.h"
#include "policy.h"
#include "runtime.h"

/* The neutral definition of one tool; new ref, NULL on OOM. */
static json_t *neutral(const tg__tool *t)
{
    json_t *o = json_pack(
        "{s:s, s:s, s:o}", "name", t->name, "description",
        t->description ? t->description : "", "input_schema",
        t->input_schema ? json_incref(t->input_schema)
                        : json_pack("{s:s}", "type", "object")); /* new ref */
    if (o != NULL &&
        ((t->annotations != NULL &&
          json_object_set(o, "annotations", t->annotations) != 0) ||
         (t->title != NULL &&
          json_object_set_new(o, "title", json_string(t->title)) != 0) ||
         (t->output_schema != NULL &&
          json_object_set(o, "output_schema", t->output_schema) != 0))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The most artifact ids offered in a definition: the newest. */
#define MAX_OFFERED_IDS 200

/* The ids the artifact tools may read now (stored artifacts, newest first;
 * artifact tools' own results are never spooled, so none is theirs): a new
 * array in *out, empty when the spool cannot be listed. Returns 0 or
 * TG_ENOMEM. */
static int offered_ids(tg_runtime *rt, json_t **out)
{
    json_t *list = NULL; /* new ref */
    tg_error e = {0};
    if ((*out = json_array()) == NULL)
        return TG_ENOMEM;
    if (tg__spool_list(rt->spool, &list, &e) != 0)
        return e.code == TG_ENOMEM ? TG_ENOMEM : 0; /* listed without */
    size_t i;
    json_t *a; /* borrowed */
    int rc = 0;
    json_array_foreach(list, i, a)
    {
        if (rc != 0 || json_array_size(*out) == MAX_OFFERED_IDS)
            break;
        const char *state = json_string_value(json_object_get(a, "state"));
        if (state != NULL && strcmp(state, "stored") == 0 &&
            json_array_append(*out, json_object_get(a, "id")) != 0)
            rc = TG_ENOMEM;
    }
    json_decref(list);
    return rc;
}

/* Sets ids (borrowed) as the `enum` of the definition's `artifact`
 * property: what the model may name. An empty enum would make the tool
 * uncallable: then any id is shown as allowed, and the spool answers for
 * unknown ones. */
static int offer_ids(json_t *def, json_t *ids)
{
    if (json_array_size(ids) == 0)
        return 0;
    json_t *schema = json_deep_copy(json_object_get(def, "input_schema"));
    json_t *prop = json_object_get(json_object_get(schema, "properties"),
                                   "artifact"); /* borrowed */
    if (schema == NULL ||
        (prop != NULL && json_object_set(prop, "enum", ids) != 0)) {
        json_decref(schema);
        return TG_ENOMEM;
    }
    return json_object_set_new(def, "input_schema", schema) == 0 ? 0
                                                                 : TG_ENOMEM;
}

/* Whether the policy leaves some call of t to caller: 1, 0, or TG_E*. */
static int visible(tg_runtime *rt, const tg__tool *t, const char *caller,
                   tg_error *err)
{
    if (rt->policy == NULL)
        return 1;
    tg__policy_input in = {
        .tool = t->name, .caller = caller, .annotations = t->annotations};
    return tg__policy_reachable(rt->policy, &in, err);
}

void tg__tools_cache_clear(tg_runtime *rt)
{
    size_t n = sizeof rt->tools_cache / sizeof rt->tools_cache[0];
    for (size_t i = 0; i < n; i++) {
        free(rt->tools_cache[i].text);
        rt->tools_cache[i].text = NULL;
        rt->tools_cache[i].fmt = NULL;
    }
    json_decref(rt->tools_ids);
    rt->tools_ids = NULL;
}

/* The cached text for fmt (borrowed), NULL when none is valid; drops the
 * cache when the tools or the offered ids (borrowed) changed since it was
 * made. */
static const char *cache_get(tg_runtime *rt, const tg__format *fmt, json_t *ids)
{
    unsigned long gen = tg__registry_generation(rt->reg);
    bool same_ids = ids == NULL ? rt->tools_ids == NULL
                                : json_equal(ids, rt->tools_ids) != 0;
    if (gen != rt->tools_gen || !same_ids) {
        tg__tools_cache_clear(rt);
        rt->tools_gen = gen;
        rt->tools_ids = json_incref(ids);
        return NULL;
    }
    size_t n = sizeof rt->tools_cache / sizeof rt->tools_cache[0];
    for (size_t i = 0; i < n; i++)
        if (rt->tools_cache[i].fmt == fmt)
            return rt->tools_cache[i].text;
    return NULL;
}

/* Keeps a copy of text for fmt in a free slot (none free, or no memory:
 * not kept; the next call renders again). */
static void cache_put(tg_runtime *rt, const tg__format *fmt, const char *text)
{
    size_t n = sizeof rt->tools_cache / sizeof rt->tools_cache[0];
    for (size_t i = 0; i < n; i++)
        if (rt->tools_cache[i].fmt == NULL) {
            if ((rt->tools_cache[i].text = strdup(text)) != NULL)
                rt->tools_cache[i].fmt = fmt;
            return;
        }
}

/* tg_runtime_tools, for `caller` when for_caller (NULL: no caller). */
static int render_for(tg_runtime *rt, const char *format, bool for_caller,
                      const char *caller, char **out, tg_error *err)
{
    if (rt == NULL || out == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_runtime_tools needs a runtime and out");
    *out = NULL;
    if (format == NULL)
        format = "mcp";
    const tg__format *fmt = tg__format_find(format);
    if (fmt == NULL || fmt->render_tools == NULL)
        return tg__error_set(err, TG_EFORMAT,
                             "cannot list tools in format '%s' (supported: "
                             "mcp, openai-chat, openai-responses, anthropic, "
                             "gemini, toolgate)",
                             format);
    json_t *tools = json_array(); /* new ref */
    json_t *ids = NULL;           /* new ref: listed once, for all five */
    int rc = tools ? 0 : TG_ENOMEM;
    if (rc == 0 && rt->spool != NULL)
        rc = offered_ids(rt, &ids);
    /* The whole list depends only on the registry and the offered ids:
     * made once per generation, ids and format. */
    bool cacheable = !for_caller && rc == 0;
    const char *hit = cacheable ? cache_get(rt, fmt, ids) : NULL;
    if (hit != NULL) {
        json_decref(tools);
        json_decref(ids);
        return (*out = strdup(hit)) != NULL
                   ? 0
                   : tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    size_t n = tg__registry_count(rt->reg);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const tg__tool *t = tg__registry_at(rt->reg, i);
        if (t->state != TG_TOOL_ENABLED)
            continue; /* held or disabled: not offered (remote_tools.c) */
        if (for_caller) {
            int v = visible(rt, t, caller, err);
            if (v < 0) {
                rc = v;
                break;
            }
            if (v == 0)
                continue;
        }
        json_t *def = neutral(t); /* new ref */
        if (def != NULL && ids != NULL && tg__spool_is_tool(t->name) &&
            offer_ids(def, ids) != 0) {
            json_decref(def);
            def = NULL;
        }
        if (json_array_append_new(tools, def))
            rc = TG_ENOMEM;
    }
    tg__buf b;
    tg__buf_init(&b, 0);
    if (rc == 0)
        rc = fmt->render_tools(tools, &b, err);
    else if (rc == TG_ENOMEM)
        tg__error_set(err, rc, "out of memory");
    json_decref(tools);
    json_decref(ids);
    if (rc == 0 && (*out = tg__buf_take(&b)) == NULL)
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
    tg__buf_cleanup(&b);
    if (rc == 0 && cacheable)
        cache_put(rt, fmt, *out);
    return rc;
}

int tg_runtime_tools(tg_runtime *rt, const char *format, char **out,
                     tg_error *err)
{
    return render_for(rt, format, false, NULL, out, err);
}

int tg_runtime_tools_for(tg_runtime *rt, const char *format, const char *caller,
                         char **out, tg_error *err)
{
    return render_for(rt, format, true, caller, out, err);
}

unsigned long tg_runtime_tools_generation(const tg_runtime *rt)
{
    return rt != NULL ? tg__registry_generation(rt->reg) : 0;
}
