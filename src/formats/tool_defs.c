/* SPDX-License-Identifier: MIT */
/*
 * tool_defs.c - the shared part of every format's tool definitions: one
 * definition from the neutral {"name","description","input_schema",...}
 * object, and the list around them. Each format says only its shape.
 */
#include "error.h"
#include "format.h"

json_t *tg__format_tool_object(const json_t *t, const json_t *head,
                               const char *schema_key)
{
    const json_t *name = json_object_get(t, "name");           /* borrowed */
    const json_t *desc = json_object_get(t, "description");    /* borrowed */
    const json_t *schema = json_object_get(t, "input_schema"); /* borrowed */
    if (!json_is_string(name))
        return NULL;
    json_t *o = head ? json_copy((json_t *)head) : json_object(); /* new ref */
    if (o == NULL || json_object_set(o, "name", (json_t *)name) != 0 ||
        (json_is_string(desc) &&
         json_object_set(o, "description", (json_t *)desc) != 0) ||
        json_object_set_new(o, schema_key,
                            json_is_object(schema)
                                ? json_incref((json_t *)schema)
                                : json_pack("{s:s}", "type", "object")) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int tg__format_render_tool_list(const json_t *tools,
                                json_t *(*one)(const json_t *t),
                                const char *wrap_key, const char *format_name,
                                tg__buf *out, tg_error *err)
{
    if (!json_is_array(tools))
        return tg__error_set(err, TG_EINVAL,
                             "tool definitions must be an array");
    json_t *arr = json_array(); /* new ref */
    int rc = arr ? 0 : TG_ENOMEM;
    for (size_t i = 0; rc == 0 && i < json_array_size(tools); i++) {
        const json_t *t = json_array_get(tools, i); /* borrowed */
        if (!json_is_string(json_object_get(t, "name"))) {
            json_decref(arr);
            return tg__error_set(err, TG_EINVAL,
                                 "tool definition %zu has no name", i);
        }
        if (json_array_append_new(arr, one(t)) != 0)
            rc = TG_ENOMEM;
    }
    json_t *doc = arr; /* new ref */
    if (rc == 0 && wrap_key != NULL) {
        doc = json_pack("{s:o}", wrap_key, arr); /* reference of arr taken */
        arr = NULL;
        if (doc == NULL)
            rc = TG_ENOMEM;
    }
    if (rc == 0)
        rc = tg__json_dump(doc, out);
    if (rc == 0)
        rc = tg__buf_puts(out, "\n");
    json_decref(doc == arr ? arr : doc);
    if (doc != arr)
        json_decref(arr);
    if (rc != 0)
        return tg__error_set(err, rc, "cannot render %s tool definitions: %s",
                             format_name, tg_strerror(rc));
    return 0;
}
