/* SPDX-License-Identifier: MIT */
/*
 * native.c - toolgate's own wire format (spec/formats.md, "toolgate"): JSON
 * Lines of call records in, JSON Lines of result records out
 * (spec/records.md). One document holding a single record, or an array of
 * records, is read too, so a one-line file and a pretty-printed record work.
 *
 * Unlike provider formats, a record without an id or a tool is not a call at
 * all: the parse fails with TG_EPARSE naming the line and the field.
 */
#include "format.h"

#include <stdio.h>
#include <string.h>

#include "error.h"
#include "json_fast.h"

#define FORMAT_NAME "toolgate"

static int is_record(const json_t *v)
{
    return json_is_object(v) && json_object_get(v, "tool") != NULL;
}

static int detect(const json_t *doc)
{
    if (json_is_object(doc))
        return is_record(doc) && json_object_get(doc, "id") != NULL ? 2 : 0;
    if (!json_is_array(doc) || json_array_size(doc) == 0)
        return 0;
    for (size_t i = 0; i < json_array_size(doc); i++)
        if (!is_record(json_array_get(doc, i)))
            return 0;
    return 2;
}

/* Adds the call of record obj (borrowed). On failure err says why; the
 * caller adds where. */
static int add_record(tg_turn *turn, const json_t *obj, tg_error *err)
{
    tg_call *call = NULL;
    int rc = tg__call_from_json(obj, FORMAT_NAME, &call, err);
    if (rc != 0)
        return rc;
    if ((rc = tg__turn_add_call(turn, call)) != 0)
        return tg__error_set(err, rc, "out of memory");
    return 0;
}

static int parse(tg_turn *turn, const json_t *doc, tg_error *err)
{
    if (json_is_object(doc)) {
        tg_error e = {0};
        int rc = add_record(turn, doc, &e);
        if (rc == TG_ENOMEM)
            return tg__error_set(err, rc, "out of memory");
        if (rc != 0) {
            tg__error_pointer(err, e.pointer);
            return tg__error_set(err, rc, "call record: %s", e.message);
        }
        return 0;
    }
    if (!json_is_array(doc)) {
        tg__error_pointer(err, "");
        return tg__error_set(err, TG_EFORMAT,
                             "expected a call record (an object with id and "
                             "tool) or an array of them");
    }
    for (size_t i = 0; i < json_array_size(doc); i++) {
        tg_error e = {0};
        int rc = add_record(turn, json_array_get(doc, i), &e);
        if (rc == TG_ENOMEM)
            return tg__error_set(err, rc, "out of memory");
        if (rc != 0) {
            char ptr[sizeof e.pointer + 32];
            snprintf(ptr, sizeof ptr, "/%zu%s", i, e.pointer);
            tg__error_pointer(err, ptr);
            return tg__error_set(err, rc, "call record %zu: %s", i, e.message);
        }
    }
    return 0;
}

static int blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return 0;
    return 1;
}

static int parse_text(tg_turn *turn, const char *text, size_t len,
                      const char *source_name, tg_error *err)
{
    long line = 0;
    size_t i = 0;
    while (i < len) {
        line++;
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        const char *s = text + i;
        size_t n = end - i;
        i = end + 1;
        if (blank(s, n))
            continue;
        json_error_t jerr;
        json_t *obj = tg__json_fast_load(s, n, 0); /* new ref */
        if (obj == NULL)
            obj = json_loadb(s, n, JSON_DECODE_ANY, &jerr);
        if (obj == NULL) {
            if (tg__format_json_oom(&jerr))
                return tg__error_set(err, TG_ENOMEM, "%s:%ld: out of memory",
                                     source_name, line);
            return tg__error_at(err, TG_EPARSE, line, jerr.column,
                                "%s:%ld:%d: %s; expected one call record (a "
                                "JSON object) per line",
                                source_name, line, jerr.column, jerr.text);
        }
        tg_error e = {0};
        int rc = add_record(turn, obj, &e);
        json_decref(obj);
        if (rc == TG_ENOMEM)
            return tg__error_set(err, rc, "%s:%ld: out of memory", source_name,
                                 line);
        if (rc != 0) {
            tg__error_pointer(err, e.pointer);
            return tg__error_at(err, rc, line, 1, "%s:%ld: call record: %s",
                                source_name, line, e.message);
        }
    }
    return 0;
}

static int render(const tg_turn *turn, tg_buf *out, tg_error *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < turn->n; i++) {
        json_t *o = tg__result_to_json(turn->results[i]); /* new ref */
        if (o == NULL) {
            rc = TG_ENOMEM;
            break;
        }
        rc = tg__format_dump(o, out);
        json_decref(o);
        if (rc == 0)
            rc = tg__buf_append(out, "\n", 1);
    }
    if (rc != 0)
        return tg__error_set(err, rc, "cannot render %s results: %s",
                             FORMAT_NAME, tg_strerror(rc));
    return 0;
}

/* Tool definitions: JSON Lines of {"name","description","input_schema"}. */
static int render_tools(const json_t *tools, tg_buf *out, tg_error *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < json_array_size(tools); i++) {
        json_t *line = tg__format_tool_object(json_array_get(tools, i), NULL,
                                              "input_schema"); /* new ref */
        rc = line ? tg__format_dump(line, out) : TG_EINVAL;
        if (rc == 0)
            rc = tg__buf_puts(out, "\n");
        json_decref(line);
    }
    if (rc != 0)
        return tg__error_set(err, rc, "cannot render the tool definitions: %s",
                             tg_strerror(rc));
    return 0;
}

const tg_format tg__format_native = {
    .name = FORMAT_NAME,
    .detect = detect,
    .parse = parse,
    .parse_text = parse_text,
    .parse_fast = NULL,
    .render = render,
    .render_tools = render_tools,
};
