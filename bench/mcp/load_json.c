/* SPDX-License-Identifier: MIT */
/*
 * load_json.c - the MCP load client's minimal JSON scan (no JSON library
 * on the hot path): the top-level members of one JSON-RPC message (id,
 * method, result, error) as spans into it, values skipped as far as that
 * needs (brackets, strings, scalar characters), nothing decoded.
 */
#include <stdlib.h>
#include <string.h>

#include "load.h"

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* The end of the string starting at p (on its opening quote), or NULL. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/* The end of the JSON value starting at p, or NULL when it is not one
 * (checked as far as skipping needs: brackets, strings, scalar chars). */
static const char *skip_value(const char *p, const char *end)
{
    int depth = 0;
    do {
        p = skip_ws(p, end);
        if (p >= end)
            return NULL;
        if (*p == '"') {
            if ((p = skip_string(p, end)) == NULL)
                return NULL;
        } else if (*p == '{' || *p == '[') {
            if (++depth > 512)
                return NULL;
            p++;
        } else if (*p == '}' || *p == ']') {
            if (depth == 0)
                return NULL;
            depth--;
            p++;
        } else if (*p == ',' || *p == ':') {
            if (depth == 0)
                return NULL;
            p++;
        } else {
            const char *s = p;
            while (p < end && strchr("+-.0123456789eEtrufalsn", *p) != NULL)
                p++;
            if (p == s)
                return NULL;
        }
    } while (depth > 0);
    return p;
}

static int key_is(const char *k, const char *kend, const char *name)
{
    size_t n = strlen(name);
    return (size_t)(kend - k) == n + 2 && memcmp(k + 1, name, n) == 0;
}

/* Fills m from the JSON object s[0..n): 0, or -1 when it is not one. */
int scan_message(const char *s, size_t n, struct msg *m)
{
    const char *p = s, *end = s + n;
    memset(m, 0, sizeof *m);
    p = skip_ws(p, end);
    if (p >= end || *p != '{')
        return -1;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}')
        return skip_ws(p + 1, end) == end ? 0 : -1;
    for (;;) {
        if (p >= end || *p != '"')
            return -1;
        const char *k = p, *kend = skip_string(p, end);
        if (kend == NULL)
            return -1;
        p = skip_ws(kend, end);
        if (p >= end || *p != ':')
            return -1;
        const char *v = skip_ws(p + 1, end), *vend = skip_value(v, end);
        if (vend == NULL)
            return -1;
        if (key_is(k, kend, "id")) {
            char *e;
            m->id = strtoll(v, &e, 10);
            m->has_id = e == vend;
            if (!m->has_id)
                m->id = -1;
        } else if (key_is(k, kend, "method")) {
            m->has_method = 1;
        } else if (key_is(k, kend, "result")) {
            m->has_result = 1;
            m->result = v;
            m->result_len = (size_t)(vend - v);
        } else if (key_is(k, kend, "error")) {
            m->has_error = 1;
            m->error = v;
            m->error_len = (size_t)(vend - v);
        }
        p = skip_ws(vend, end);
        if (p < end && *p == ',') {
            p = skip_ws(p + 1, end);
            continue;
        }
        if (p < end && *p == '}')
            return skip_ws(p + 1, end) == end ? 0 : -1;
        return -1;
    }
}

/* Whether span[0..n) holds needle. */
int span_has(const char *span, size_t n, const char *needle)
{
    return memmem(span, n, needle, strlen(needle)) != NULL;
}
