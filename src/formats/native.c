/* SPDX-License-Identifier: MIT */
/*
 * native.c - toolgate's own wire format (docs/formats.md, "toolgate"): JSON
 * Lines of call records in, JSON Lines of result records out
 * (docs/records.md). One document holding a single record, or an array of
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

/* ------------------------------------------------------------ fast lines
 * Most lines are the plain record {"id":"...","tool":"...","args":{...}}
 * (members in any order, args an object, a JSON string, or absent). Such a
 * line is read with the cursor, without a jansson document; any other line
 * (more members, a numeric id, duplicate keys, arguments not in compact
 * form, anything unusual) takes the document path, which fills the call
 * exactly as before and reports every error. */

/* Scratch kept across the lines of one parse. */
typedef struct line_reader {
    tg__jcur c;
    tg__buf id, tool, args; /* args: the decoded string form */
} line_reader;

/* Reads the line s[0..n) as a plain record: 0 with *out set (the caller
 * owns it), TG_JCUR_BAIL when the line is not one, or TG_ENOMEM. */
static int fast_line(line_reader *lr, const char *s, size_t n, tg_call **out)
{
    tg__jcur *c = &lr->c;
    const char *k, *span = NULL;
    size_t kn, span_len = 0;
    int first = 1, m = -1, rc = 0, seen_id = 0, seen_tool = 0, seen_args = 0;
    int args_string = 0;
    *out = NULL;
    /* The cursor keeps its scratch from line to line. */
    c->p = (const unsigned char *)s;
    c->end = c->p + n;
    c->depth = 0;
    if (tg__jcur_take(c, '{') != 0)
        return TG_JCUR_BAIL;
    while (rc == 0 && (m = tg__jcur_member(c, &first, &k, &kn)) == 1) {
        if (tg__jcur_key_is(k, kn, "id")) {
            rc = tg__jcur_string_once(c, &lr->id, &seen_id);
        } else if (tg__jcur_key_is(k, kn, "tool")) {
            rc = tg__jcur_string_once(c, &lr->tool, &seen_tool);
        } else if (tg__jcur_key_is(k, kn, "args") && !seen_args) {
            int next = tg__jcur_peek(c);
            if (next == '{') {
                span = (const char *)c->p;
                rc = tg__jcur_skip_any(c);
                span_len = (size_t)((const char *)c->p - span);
                seen_args = 1;
            } else if (next == '"') {
                rc = tg__jcur_string_once(c, &lr->args, &seen_args);
                args_string = 1;
            } else
                rc = TG_JCUR_BAIL;
        } else
            rc = TG_JCUR_BAIL;
    }
    if (rc != 0)
        return rc;
    if (m != 0 || tg__jcur_end(c) != 0 || !seen_id || !seen_tool ||
        lr->id.len == 0)
        return TG_JCUR_BAIL;
    const char *id = tg__buf_cstr(&lr->id), *tool = tg__buf_cstr(&lr->tool);
    if (args_string) {
        /* As tg__call_from_json: tg__call_set_args_text on the string. */
        *out = tg__call_new_args(id, tool, FORMAT_NAME, lr->args.data,
                                 lr->args.len);
        return *out != NULL ? 0 : TG_ENOMEM;
    }
    /* Absent arguments are {} (tg__call_set_args_value). */
    if (!seen_args) {
        span = "{}";
        span_len = 2;
    }
    rc = tg__call_new_args_object(id, tool, FORMAT_NAME, span, span_len, out);
    return rc == 1 ? TG_JCUR_BAIL : rc;
}

/* The document path for one line: parse it, then tg__call_from_json. */
static int slow_line(tg_turn *turn, const char *s, size_t n,
                     const char *source_name, long line, tg_error *err)
{
    json_error_t jerr;
    bool bad;
    json_t *obj = tg__format_load(s, n, &jerr, &bad); /* new ref */
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
    size_t from = turn->n;
    int rc = add_record(turn, obj, &e);
    if (rc == 0 && bad) {
        /* Bytes no tool gets: the call's own failure when they are in its
         * arguments, the line's when they are anywhere else. */
        char what[TG_BAD_WHAT_MAX];
        tg__buf where;
        tg__buf_init(&where, 0);
        rc = tg__format_bad_strings_placed(obj, turn, from, &where, what);
        if (rc == 1)
            rc = tg__format_bad_strings_error(&e, NULL, tg__buf_cstr(&where),
                                              what);
        tg__buf_cleanup(&where);
    }
    json_decref(obj);
    if (rc == TG_ENOMEM)
        return tg__error_set(err, rc, "%s:%ld: out of memory", source_name,
                             line);
    if (rc != 0) {
        tg__error_pointer(err, e.pointer);
        return tg__error_at(err, rc, line, 1, "%s:%ld: call record: %s",
                            source_name, line, e.message);
    }
    return 0;
}

static int parse_text(tg_turn *turn, const char *text, size_t len,
                      const char *source_name, tg_error *err)
{
    line_reader lr;
    long line = 0;
    size_t i = 0;
    int rc = 0;
    tg__jcur_init(&lr.c, NULL, 0);
    tg__buf_init(&lr.id, 0);
    tg__buf_init(&lr.tool, 0);
    tg__buf_init(&lr.args, 0);
    while (rc == 0 && i < len) {
        line++;
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        const char *s = text + i;
        size_t n = end - i;
        i = end + 1;
        if (blank(s, n))
            continue;
        tg_call *call = NULL;
        rc = fast_line(&lr, s, n, &call);
        if (rc == 0) {
            if ((rc = tg__turn_add_call(turn, call)) != 0)
                rc = tg__error_set(err, rc, "%s:%ld: out of memory",
                                   source_name, line);
        } else if (rc == TG_JCUR_BAIL)
            rc = slow_line(turn, s, n, source_name, line, err);
        else
            rc = tg__error_set(err, rc, "%s:%ld: out of memory", source_name,
                               line);
    }
    tg__buf_cleanup(&lr.id);
    tg__buf_cleanup(&lr.tool);
    tg__buf_cleanup(&lr.args);
    tg__jcur_cleanup(&lr.c);
    return rc;
}

/* ------------------------------------------------------------ rendering
 * Result records are written directly by tg__result_write (the record's
 * one writer), without building a jansson object per result; the gate's
 * decisions stay in the journal. */

static int render(const tg_turn *turn, tg__buf *out, tg_error *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < turn->n; i++) {
        rc = tg__result_write(turn->results[i], 0, NULL, out);
        if (rc == 0)
            rc = tg__buf_append(out, "\n", 1);
    }
    if (rc != 0)
        return tg__error_set(err, rc, "cannot render %s results: %s",
                             FORMAT_NAME, tg_strerror(rc));
    return 0;
}

/* Tool definitions: JSON Lines of {"name","description","input_schema"}. */
static int render_tools(const json_t *tools, tg__buf *out, tg_error *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < json_array_size(tools); i++) {
        json_t *line = tg__format_tool_object(json_array_get(tools, i), NULL,
                                              "input_schema"); /* new ref */
        rc = line ? tg__json_dump(line, out) : TG_EINVAL;
        if (rc == 0)
            rc = tg__buf_puts(out, "\n");
        json_decref(line);
    }
    if (rc != 0)
        return tg__error_set(err, rc, "cannot render the tool definitions: %s",
                             tg_strerror(rc));
    return 0;
}

const tg__format tg__format_native = {
    .name = FORMAT_NAME,
    .detect = detect,
    .parse = parse,
    .parse_text = parse_text,
    .parse_fast = NULL,
    .render = render,
    .render_tools = render_tools,
};
