/* SPDX-License-Identifier: MIT */
/*
 * coerce.c - the schema-driven part of limits.repair: a string that holds a
 * number or a boolean, where the schema wants a number, an integer or a
 * boolean, becomes that value ("42" -> 42, "true" -> true). Models quote
 * scalars often; this fixes exactly that and nothing else, and only where a
 * `type` violation points.
 */
#include "runtime.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

/* The value at JSON pointer `ptr` in root (borrowed), with its container
 * and the key or index that holds it; NULL when the pointer leads nowhere
 * or at the root itself. */
static json_t *pointer_get(json_t *root, const char *ptr, json_t **parent,
                           char *key, size_t key_size, size_t *index)
{
    json_t *cur = root; /* borrowed */
    *parent = NULL;
    if (ptr[0] != '/')
        return NULL;
    const char *p = ptr;
    while (*p == '/' && cur != NULL) {
        p++;
        size_t n = 0;
        while (*p != '\0' && *p != '/') {
            char c = *p++;
            if (c == '~' && (*p == '0' || *p == '1'))
                c = *p++ == '0' ? '~' : '/';
            if (n + 1 >= key_size)
                return NULL;
            key[n++] = c;
        }
        key[n] = '\0';
        *parent = cur;
        if (json_is_object(cur)) {
            cur = json_object_get(cur, key);
        } else if (json_is_array(cur)) {
            char *end;
            errno = 0;
            unsigned long long i = strtoull(key, &end, 10);
            if (n == 0 || *end != '\0' || errno != 0 || key[0] == '-')
                return NULL;
            *index = (size_t)i;
            cur = json_array_get(cur, *index);
        } else {
            return NULL;
        }
    }
    return cur;
}

/* The value a quoted scalar stands for, when the schema allows that type:
 * a new reference, or NULL. */
static json_t *unquote(const char *s, unsigned want)
{
    if ((want & TG_SCHEMA_T_BOOLEAN) &&
        (strcmp(s, "true") == 0 || strcmp(s, "false") == 0))
        return json_boolean(s[0] == 't');
    if (!(want & (TG_SCHEMA_T_NUMBER | TG_SCHEMA_T_INTEGER)))
        return NULL;
    /* JSON number syntax only: no hex, no "inf", no leading '+' or space. */
    json_error_t jerr;
    json_t *v = json_loads(s, JSON_DECODE_ANY, &jerr); /* new ref */
    if (v == NULL || !json_is_number(v)) {
        json_decref(v);
        return NULL;
    }
    if (json_is_real(v) && (want & TG_SCHEMA_T_INTEGER) &&
        !(want & TG_SCHEMA_T_NUMBER)) {
        double d = json_real_value(v);
        json_decref(v);
        if (d != floor(d) || fabs(d) > 9007199254740992.0)
            return NULL;
        return json_integer((json_int_t)d);
    }
    return v;
}

int tg__coerce_args(const tg_schema *schema, const tg__schema_report *report,
                    const json_t *args, json_t **out)
{
    *out = NULL;
    json_t *copy = NULL; /* new ref, made on the first change */
    for (size_t i = 0; i < report->n; i++) {
        const tg__schema_violation *v = &report->v[i];
        if (strcmp(v->keyword, "type") != 0 || v->path[0] == '\0')
            continue;
        unsigned want = tg__schema_types_at(schema, v->path);
        if (want == 0 || (want & TG_SCHEMA_T_STRING))
            continue;
        if (copy == NULL && (copy = json_deep_copy(args)) == NULL)
            return TG_ENOMEM;
        json_t *parent; /* borrowed */
        char key[256];
        size_t index = 0;
        json_t *cur = pointer_get(copy, v->path, &parent, key, sizeof key,
                                  &index); /* borrowed */
        if (!json_is_string(cur) ||
            memchr(json_string_value(cur), '\0', json_string_length(cur)))
            continue;
        json_t *val = unquote(json_string_value(cur), want); /* new ref */
        if (val == NULL)
            continue;
        int rc = json_is_object(parent)
                     ? json_object_set_new(parent, key, val)
                     : json_array_set_new(parent, index, val);
        if (rc != 0) {
            json_decref(copy);
            return TG_ENOMEM;
        }
        *out = copy; /* at least one change */
    }
    if (*out == NULL)
        json_decref(copy);
    return *out != NULL;
}
