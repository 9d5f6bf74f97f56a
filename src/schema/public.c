/* SPDX-License-Identifier: MIT */
/*
 * public.c - the public face of the schema layer (tg_schema_compile,
 * tg_schema_validate, tg_schema_free in toolgate.h) and the internal entry
 * points that are not the evaluator itself: validation of a jansson value
 * (written as text and read into a tape, so one evaluator serves both) and
 * the type lookup argument repair uses. Schema and instance texts may hold
 * U+0000 in strings and keys (TG_JTAPE_ALLOW_NUL): every comparison of the
 * layer goes by length, unlike a call's arguments, which keep jansson's
 * default refusal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Tokens kept on the stack when validating a small instance. */
#define STACK_TOKENS 256

int tg__schema_read(const char *text, size_t len, json_t **out,
                    tg__jtape_error *jerr)
{
    *out = NULL;
    tg__jtape t;
    int rc = tg__jtape_parse(text, len, TG_JTAPE_ALLOW_NUL, &t, jerr);
    if (rc != 0)
        return rc;
    *out = tg__jtape_to_json(&t, 0); /* new ref */
    tg__jtape_free(&t);
    return *out != NULL ? 0 : TG_ENOMEM;
}

int tg_schema_compile(const char *text, size_t len,
                      const tg_schema_options *options, tg_schema **out,
                      tg_error *err)
{
    *out = NULL;
    tg__jtape_error jerr;
    json_t *doc = NULL; /* new ref */
    /* U+0000 in strings is JSON like any other character; every string
     * comparison of the schema layer goes by length. */
    int rc = tg__schema_read(text, len, &doc, &jerr);
    if (rc == TG_EPARSE)
        return tg__error_at(err, TG_EPARSE, jerr.line, jerr.column,
                            "the schema is not JSON: line %d, column %d: %s",
                            jerr.line, jerr.column, jerr.text);
    if (rc == TG_ELIMIT)
        return tg__error_set(err, TG_ELIMIT, "the schema is 4 GiB or more");
    if (rc != 0)
        return tg__error_set(err, TG_ENOMEM, "out of memory reading a schema");
    rc = tg__schema_compile(doc, options, out, err);
    json_decref(doc);
    return rc;
}

/* A JSON string as json_dumps(JSON_COMPACT) writes it: '"', '\\' and
 * control characters escaped (short forms where they exist, else \u00XX),
 * everything else as is. */
static int put_jstr(tg__buf *b, const char *s)
{
    int rc = tg__buf_append(b, "\"", 1);
    size_t run = 0, i = 0;
    for (; rc == 0 && s[i] != '\0'; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        rc = tg__buf_append(b, s + run, i - run);
        run = i + 1;
        const char *e = c == '"'    ? "\\\""
                        : c == '\\' ? "\\\\"
                        : c == '\b' ? "\\b"
                        : c == '\f' ? "\\f"
                        : c == '\n' ? "\\n"
                        : c == '\r' ? "\\r"
                        : c == '\t' ? "\\t"
                                    : NULL;
        if (rc == 0)
            rc = e ? tg__buf_puts(b, e) : tg__buf_printf(b, "\\u%04X", c);
    }
    if (rc == 0)
        rc = tg__buf_append(b, s + run, i - run);
    return rc ? rc : tg__buf_append(b, "\"", 1);
}

/* The violations as JSON Lines. Written here rather than with json_pack
 * and json_dumps: jansson 2.14's dump ignores a failed write of an object
 * key, so running out of memory there gives a line without its key
 * instead of an error. */
static int put_lines(const tg__schema_report *r, char **out)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < r->n; k++) {
        rc = tg__buf_puts(&b, "{\"path\":");
        if (rc == 0)
            rc = put_jstr(&b, r->v[k].path);
        if (rc == 0)
            rc = tg__buf_puts(&b, ",\"keyword\":");
        if (rc == 0)
            rc = put_jstr(&b, r->v[k].keyword);
        if (rc == 0)
            rc = tg__buf_puts(&b, ",\"message\":");
        if (rc == 0)
            rc = put_jstr(&b, r->v[k].message);
        if (rc == 0)
            rc = tg__buf_puts(&b, "}\n");
    }
    if (rc == 0)
        *out = tg__buf_take(&b);
    else
        tg__buf_cleanup(&b);
    return rc == 0 && *out != NULL ? 0 : TG_ENOMEM;
}

int tg_schema_validate(const tg_schema *schema, const char *text, size_t len,
                       char **violations, tg_error *err)
{
    if (violations != NULL)
        *violations = NULL;
    if (schema == NULL || (text == NULL && len > 0))
        return tg__error_set(err, TG_EINVAL, "no schema or no instance");
    tg__jtok store[STACK_TOKENS];
    tg__jtape tape;
    tg__jtape_error jerr;
    int rc = tg__jtape_parse_in_flags(text, len, TG_JTAPE_ALLOW_NUL, store,
                                      STACK_TOKENS, &tape, &jerr);
    if (rc == TG_EPARSE)
        return tg__error_at(err, TG_EPARSE, jerr.line, jerr.column,
                            "the instance is not JSON: line %d, column %d: %s",
                            jerr.line, jerr.column, jerr.text);
    if (rc != 0)
        return tg__error_set(err, rc, "cannot read the instance: %s",
                             tg_strerror(rc));
    tg__schema_report report;
    memset(&report, 0, sizeof report);
    rc = tg__schema_validate_tape(schema, &tape, 0, violations ? &report : NULL,
                                  err);
    if (rc == 0 && violations != NULL && put_lines(&report, violations) != 0)
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
    tg__schema_report_cleanup(&report);
    tg__jtape_free(&tape);
    return rc;
}

void tg_schema_free(tg_schema *schema)
{
    tg__schema_destroy(schema);
}

/* ----------------------------------------------------- jansson values */

static int put_string(const char *s, size_t n, tg__buf *out)
{
    int rc = tg__buf_append(out, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        rc = tg__buf_append(out, s + run, i - run);
        run = i + 1;
        if (rc == 0)
            rc = c == '"'    ? tg__buf_puts(out, "\\\"")
                 : c == '\\' ? tg__buf_puts(out, "\\\\")
                             : tg__buf_printf(out, "\\u%04x", c);
    }
    if (rc == 0)
        rc = tg__buf_append(out, s + run, n - run);
    if (rc == 0)
        rc = tg__buf_append(out, "\"", 1);
    return rc;
}

static int put_json(const json_t *v, tg__buf *out, int depth)
{
    if (depth > TG_JTAPE_MAX_DEPTH)
        return TG_ELIMIT;
    int rc = 0;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        rc = tg__buf_append(out, "{", 1);
        const char *key;
        size_t klen;
        const json_t *val; /* borrowed */
        int first = 1;
        json_object_keylen_foreach((json_t *)v, key, klen, val)
        {
            if (rc == 0 && !first)
                rc = tg__buf_append(out, ",", 1);
            first = 0;
            if (rc == 0)
                rc = put_string(key, klen, out);
            if (rc == 0)
                rc = tg__buf_append(out, ":", 1);
            if (rc == 0)
                rc = put_json(val, out, depth + 1);
            if (rc != 0)
                break;
        }
        return rc ? rc : tg__buf_append(out, "}", 1);
    }
    case JSON_ARRAY: {
        rc = tg__buf_append(out, "[", 1);
        for (size_t k = 0; rc == 0 && k < json_array_size(v); k++) {
            if (k > 0)
                rc = tg__buf_append(out, ",", 1);
            if (rc == 0)
                rc = put_json(json_array_get(v, k), out, depth + 1);
        }
        return rc ? rc : tg__buf_append(out, "]", 1);
    }
    case JSON_STRING:
        return put_string(json_string_value(v), json_string_length(v), out);
    case JSON_INTEGER:
        return tg__buf_printf(out, "%lld", (long long)json_integer_value(v));
    case JSON_REAL: {
        char num[40];
        tg__num_format(json_real_value(v), num, sizeof num);
        /* Keep it a real for the tape ("1" would read as an integer; the
         * value is the same either way, the kind is kept for fidelity). */
        if (strpbrk(num, ".eEn") == NULL)
            return tg__buf_printf(out, "%s.0", num);
        return tg__buf_puts(out, num);
    }
    case JSON_TRUE:
        return tg__buf_puts(out, "true");
    case JSON_FALSE:
        return tg__buf_puts(out, "false");
    default:
        return tg__buf_puts(out, "null");
    }
}

int tg__schema_json_text(const json_t *v, tg__buf *out)
{
    return put_json(v, out, 0);
}

int tg__schema_validate_json(const tg_schema *schema, const json_t *instance,
                             tg__schema_report *report, tg_error *err)
{
    return tg__schema_validate_json_in(schema, instance, report, NULL, err);
}

int tg__schema_validate_json_in(const tg_schema *schema, const json_t *instance,
                                tg__schema_report *report,
                                tg__schema_budget *budget, tg_error *err)
{
    tg__buf b;
    char store[1024];
    tg__buf_init_with(&b, store, sizeof store, 0);
    int rc = tg__schema_json_text(instance, &b);
    if (rc != 0) {
        tg__buf_cleanup(&b);
        if (rc == TG_ELIMIT)
            return tg__error_set(err, TG_ELIMIT,
                                 "the instance is nested too deep");
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    tg__jtok toks[STACK_TOKENS];
    tg__jtape tape;
    tg__jtape_error jerr;
    rc = tg__jtape_parse_in_flags(tg__buf_cstr(&b), b.len, TG_JTAPE_ALLOW_NUL,
                                  toks, STACK_TOKENS, &tape, &jerr);
    if (rc != 0) {
        tg__buf_cleanup(&b);
        return tg__error_set(err, rc, "cannot read the instance: %s",
                             rc == TG_EPARSE ? jerr.text : tg_strerror(rc));
    }
    rc = tg__schema_validate_tape_in(schema, &tape, 0, report, budget, err);
    tg__jtape_free(&tape);
    tg__buf_cleanup(&b);
    return rc;
}

/* ------------------------------------------------------ types for repair */

/* Follows a node's $ref (when it has nothing else to say about types). */
static const tg__node *settle(const tg__node *n)
{
    for (int hops = 0; n != NULL && hops < 32; hops++) {
        if (n->kind != TG__NODE_OBJECT || n->types != 0)
            return n;
        const tg__node *next = NULL;
        for (uint32_t k = 0; k < n->nchecks; k++)
            if (n->checks[k].kind == TG__CK_REF)
                next = n->checks[k].u.node;
        if (next == NULL)
            return n;
        n = next;
    }
    return n;
}

unsigned tg__schema_types_at(const tg_schema *schema, const char *pointer)
{
    if (schema == NULL || pointer == NULL)
        return 0;
    const tg__node *n = settle(schema->root);
    const char *p = pointer;
    char seg[256];
    while (n != NULL && *p == '/') {
        p++;
        size_t k = 0;
        while (*p && *p != '/') {
            char c = *p++;
            if (c == '~' && (*p == '0' || *p == '1'))
                c = *p++ == '0' ? '~' : '/';
            if (k + 1 >= sizeof seg)
                return 0;
            seg[k++] = c;
        }
        seg[k] = '\0';
        const tg__node *next = NULL;
        for (uint32_t q = 0; q < n->nchecks && next == NULL; q++) {
            const tg__check *ck = &n->checks[q];
            if (ck->kind == TG__CK_OBJECT) {
                const tg__objcheck *o = ck->u.obj;
                for (uint32_t x = 0; x < o->nnames; x++)
                    if (o->names[x].len == k &&
                        memcmp(o->names[x].s, seg, k) == 0)
                        next = o->names[x].prop;
                if (next == NULL)
                    next = o->additional;
            } else if (ck->kind == TG__CK_ITEMS) {
                char *end;
                unsigned long long ix = strtoull(seg, &end, 10);
                if (*end != '\0' || k == 0)
                    return 0;
                next = ix < ck->u.items.nprefix ? ck->u.items.prefix[ix]
                                                : ck->u.items.rest;
            }
        }
        n = settle(next);
    }
    if (n == NULL || *p != '\0' || n->kind != TG__NODE_OBJECT)
        return 0;
    return n->types;
}
