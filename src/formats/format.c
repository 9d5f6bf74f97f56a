/* SPDX-License-Identifier: MIT */
/*
 * format.c - the table of wire formats, format detection, and the public
 * tg_turn_parse / tg_turn_render. Each format file only knows its own shapes;
 * this file decides which one a document is in, turns parser failures into
 * messages that name the input, the line and the column, and owns the helpers
 * every renderer shares (payload text; JSON text itself is written with
 * core/json_out.h).
 */
#include "format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json_fast.h"
#include "stream.h"

/* Detection order breaks ties: the first format with the highest score wins. */
static const tg__format *const formats[] = {
    &tg__format_openai_chat,      &tg__format_native,
    &tg__format_anthropic,        &tg__format_gemini,
    &tg__format_openai_responses, &tg__format_mcp,
    &tg__format_fenced,
};
#define NFORMATS (sizeof formats / sizeof formats[0])

#define EXPECTED_TURN                                                          \
    "expected an OpenAI Chat Completions response, an assistant message, a "   \
    "messages array, or toolgate JSON Lines (one call record per line)"

int tg__format_error(tg_error *err, const char *pointer, const char *fmt,
                     const char *arg)
{
    tg__error_pointer(err, pointer);
    return tg__error_set(err, TG_EFORMAT, fmt, arg);
}

const tg__format *tg__format_find(const char *name)
{
    if (name == NULL)
        return NULL;
    /* the first byte rules most of them out without a call */
    for (size_t i = 0; i < NFORMATS; i++)
        if (formats[i]->name[0] == name[0] &&
            strcmp(formats[i]->name, name) == 0)
            return formats[i];
    return NULL;
}

int tg__format_json_oom(const json_error_t *jerr)
{
    return json_error_code(jerr) == json_error_out_of_memory ||
           jerr->text[0] == '\0';
}

/* ------------------------------------------------------------ rendering
 * helpers */

/* One stream of a failed command's output: on a line of its own, under a
 * label when both streams are shown. A member that is not a string (a hook
 * rewrote the payload) is not shown. */
static int put_stream(tg__buf *out, const json_t *text, const char *label)
{
    if (json_string_length(text) == 0)
        return 0;
    int rc = out->len > 0 && out->data[out->len - 1] != '\n'
                 ? tg__buf_append(out, "\n", 1)
                 : 0;
    if (rc == 0 && label != NULL)
        rc = tg__buf_puts(out, label);
    return rc != 0 ? rc
                   : tg__buf_append(out, json_string_value(text),
                                    json_string_length(text));
}

/* The text a model reads of a command that ran and did not succeed: what
 * happened (the error's message, or the deadline that passed), then what
 * it printed: its output, or the artifact handle of an output that was
 * spooled; stdout and stderr both, labelled, when it wrote to both. */
static int output_text(const tg_result *result, const json_t *part,
                       tg__buf *out)
{
    const json_t *p = tg__result_payload(result); /* borrowed */
    int rc;
    if (result->outcome == TG_OUTCOME_TIMEOUT)
        rc = tg__buf_printf(
            out, "timed out after %" JSON_INTEGER_FORMAT " ms and was stopped",
            json_integer_value(json_object_get(part, "durationMs")));
    else {
        const char *msg = json_string_value(
            json_object_get(json_object_get(p, "error"), "message"));
        rc = tg__buf_puts(out, msg != NULL ? msg : "the command failed");
    }
    const json_t *so = json_object_get(part, "stdout"); /* borrowed */
    const json_t *se = json_object_get(part, "stderr"); /* borrowed */
    bool both = json_string_length(so) > 0 && json_string_length(se) > 0;
    if (rc == 0)
        rc = put_stream(out, so, both ? "[stdout]\n" : NULL);
    if (rc == 0)
        rc = put_stream(out, se, both ? "[stderr]\n" : NULL);
    return rc;
}

bool tg__result_content_payload(const tg_result *r)
{
    /* a structured value is the payload even when it holds the blocks */
    if (r->outcome != TG_OUTCOME_SUCCESS || !json_is_array(r->content) ||
        tg_result_structured(r))
        return false;
    const json_t *p = tg__result_payload(r); /* borrowed */
    const json_t *c = json_object_get(p, "content");
    return json_object_size(p) == 1 &&
           (c == r->content || json_equal(c, r->content));
}

/* The payload's text as it is, without the envelope. */
static int payload_text(const tg_result *result, tg__buf *out)
{
    /* content blocks: their text, and what cannot be shown described */
    if (tg__result_content_payload(result))
        return tg__format_content_text(result->content, out);
    /* a command that failed: what happened, then what it printed */
    const json_t *part = tg__result_output_part(result); /* borrowed */
    if (part != NULL)
        return output_text(result, part, out);
    /* A handler's JSON text that was its compact form already; a JSON
     * string's text is its value, decoded. */
    const char *text = result->payload_json_cache;
    if (text != NULL && text[0] != '"')
        return tg__buf_puts(out, text);
    const json_t *p = tg__result_payload(result); /* borrowed */
    if (p == NULL)
        return TG_ENOMEM;
    if (json_is_string(p))
        return tg__buf_append(out, json_string_value(p), json_string_length(p));
    return tg__json_dump(p, out);
}

int tg__format_payload_text(const tg_result *result, tg__buf *out)
{
    if (!result->untrusted)
        return payload_text(result, out);
    if (tg__result_output_part(result) == NULL &&
        !tg__result_content_payload(result)) {
        /* known compact text, or a string payload, is enveloped as it is */
        const char *known = result->payload_json_cache;
        if (known != NULL && known[0] != '"')
            return tg__envelope_put(result, known, strlen(known), out);
        const json_t *p = tg__result_payload(result); /* borrowed */
        if (p == NULL)
            return TG_ENOMEM;
        if (json_is_string(p))
            return tg__envelope_put(result, json_string_value(p),
                                    json_string_length(p), out);
    }
    char stack[1024];
    tg__buf inner;
    tg__buf_init_with(&inner, stack, sizeof stack, 0);
    int rc = payload_text(result, &inner);
    if (rc == 0)
        rc = tg__envelope_put(result, tg__buf_cstr(&inner), inner.len, out);
    tg__buf_cleanup(&inner);
    return rc;
}

int tg__format_payload_json_string(const tg_result *result, tg__buf *out,
                                   tg__buf *scratch)
{
    const char *known = result->payload_json_cache;
    if (result->untrusted) {
        scratch->len = 0;
        int rc = tg__format_payload_text(result, scratch);
        return rc != 0
                   ? rc
                   : tg__json_string(out, tg__buf_cstr(scratch), scratch->len);
    }
    if (tg__result_output_part(result) == NULL &&
        !tg__result_content_payload(result)) {
        if (known != NULL && known[0] != '"') /* compact text, known already */
            return tg__json_string(out, known, strlen(known));
        const json_t *p = tg__result_payload(result); /* borrowed */
        if (p == NULL)
            return TG_ENOMEM;
        if (json_is_string(p)) /* the tool's text, escaped once, no copy */
            return tg__json_string(out, json_string_value(p),
                                   json_string_length(p));
    }
    scratch->len = 0;
    int rc = payload_text(result, scratch);
    return rc != 0 ? rc
                   : tg__json_string(out, tg__buf_cstr(scratch), scratch->len);
}

/* ------------------------------------------------------------ detection */

/* Appends to d a short description of v's shape for "saw ..." messages:
 * the kind, and for objects their first keys. */
static void describe(const json_t *v, tg__buf *d, int depth)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (json_object_size(v) == 0) {
            tg__buf_puts(d, "an empty object");
            break;
        }
        tg__buf_puts(d, "an object with keys ");
        const char *key;
        const json_t *val; /* borrowed */
        size_t shown = 0;
        json_object_foreach((json_t *)v, key, val)
        {
            if (shown == 8) {
                tg__buf_puts(d, ", ...");
                break;
            }
            tg__buf_printf(d, "%s%.40s", shown ? ", " : "", key);
            shown++;
        }
        break;
    }
    case JSON_ARRAY:
        if (json_array_size(v) == 0) {
            tg__buf_puts(d, "an empty array");
            break;
        }
        tg__buf_printf(d, "an array of %zu element%s", json_array_size(v),
                       json_array_size(v) == 1 ? "" : "s");
        if (depth == 0) {
            tg__buf_puts(d, ", the first ");
            describe(json_array_get(v, 0), d, depth + 1);
        }
        break;
    case JSON_STRING:
        tg__buf_puts(d, "a string");
        break;
    case JSON_INTEGER:
    case JSON_REAL:
        tg__buf_puts(d, "a number");
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        tg__buf_puts(d, "a boolean");
        break;
    default:
        tg__buf_puts(d, "null");
    }
}

static const tg__format *detect(const json_t *doc)
{
    const tg__format *best = NULL;
    int best_score = 0;
    for (size_t i = 0; i < NFORMATS; i++) {
        if (formats[i]->detect == NULL)
            continue;
        int s = formats[i]->detect(doc);
        if (s > best_score) {
            best_score = s;
            best = formats[i];
        }
    }
    return best;
}

static int only_space(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
            return 0;
    return 1;
}

/* Whether the first non-blank line of text is a JSON object with a "tool"
 * member: the text is then read as toolgate JSON Lines even though it is not
 * one document. 1 yes, 0 no, or TG_ENOMEM. */
static int looks_like_json_lines(const char *text, size_t len)
{
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        if (!only_space(text + i, end - i)) {
            json_error_t jerr;
            bool bad;
            json_t *first =
                tg__format_load(text + i, end - i, &jerr, &bad); /* new ref */
            if (first == NULL && tg__format_json_oom(&jerr))
                return TG_ENOMEM;
            int yes =
                json_is_object(first) && json_object_get(first, "tool") != NULL;
            json_decref(first);
            return yes;
        }
        i = end + 1;
    }
    return 0;
}

/* Re-prefixes a parser's message with the input's name, keeping the code,
 * the JSON pointer and the position. */
static int prefix_error(tg_error *err, int rc, const char *source_name)
{
    if (err == NULL)
        return rc;
    char msg[sizeof err->message];
    memcpy(msg, err->message, sizeof msg);
    msg[sizeof msg - 1] = '\0';
    return tg__error_set(err, rc, "%s: %s", source_name, msg);
}

/* A document read with bad strings: refused when one is outside the
 * arguments of the calls parsed from it. */
static int bad_strings_placed(const json_t *doc, tg_turn *turn,
                              const char *source_name, tg_error *err)
{
    char what[TG_BAD_WHAT_MAX];
    tg__buf where;
    tg__buf_init(&where, 0);
    int rc = tg__format_bad_strings_placed(doc, turn, 0, &where, what);
    if (rc == 1)
        rc = tg__format_bad_strings_error(err, source_name,
                                          tg__buf_cstr(&where), what);
    else if (rc != 0)
        rc = tg__error_set(err, rc, "%s: out of memory", source_name);
    tg__buf_cleanup(&where);
    return rc;
}

static int parse_doc(const tg__format *fmt, tg_turn *turn, const json_t *doc,
                     const char *source_name, tg_error *err)
{
    int rc = fmt->parse(turn, doc, err);
    if (rc != 0 && rc != TG_ENOMEM)
        return prefix_error(err, rc, source_name);
    if (rc == TG_ENOMEM)
        return tg__error_set(err, TG_ENOMEM, "%s: out of memory", source_name);
    return 0;
}

int tg_turn_parse(const char *text, size_t len, const char *format,
                  const char *source_name, tg_turn **out, tg_error *err)
{
    tg_turn *turn = NULL;
    json_t *doc = NULL; /* new ref */
    const tg__format *fmt = NULL;
    int rc;

    tg__error_clear(err);
    if (out == NULL || (text == NULL && len > 0))
        return tg__error_set(err, TG_EINVAL, "tg_turn_parse: no input or out");
    *out = NULL;
    if (source_name == NULL)
        source_name = "-";
    int autodetect = format == NULL || strcmp(format, "auto") == 0;
    if (!autodetect && (fmt = tg__format_find(format)) == NULL)
        return tg__error_set(err, TG_EFORMAT,
                             "unknown input format '%s'; expected auto, "
                             "openai-chat or toolgate",
                             format);
    /* Editors on some systems start UTF-8 files with a byte order mark. */
    size_t bom = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
        bom = 3;
    }
    if (len == 0 || only_space(text, len))
        return tg__error_set(err, TG_EPARSE,
                             "%s: empty input; expected a model turn",
                             source_name);

    /* A streamed turn (a Server-Sent Events transcript) goes through the
     * stream reader, which gives the provider's whole-document format. */
    if (tg__stream_looks_like_sse(text, len)) {
        rc = tg__stream_parse_text(text, len, format, &turn, err);
        if (rc == TG_ENOMEM)
            return tg__error_set(err, rc, "%s: out of memory", source_name);
        if (rc != 0)
            return prefix_error(err, rc, source_name);
        goto done;
    }

    /* The fast paths first: they read the common shapes without building
     * the document, and step aside for everything else. */
    for (size_t i = 0; i < NFORMATS; i++) {
        const tg__format *f = formats[i];
        if (f->parse_fast == NULL || (fmt != NULL && f != fmt))
            continue;
        if ((turn = tg__turn_new(f->name)) == NULL)
            goto oom;
        rc = f->parse_fast(turn, text, len);
        if (rc == 1) {
            fmt = f;
            turn->msg_off += bom; /* in the text as given */
            goto done;
        }
        tg_turn_free(turn);
        turn = NULL;
        if (rc < 0)
            goto oom;
    }

    json_error_t jerr;
    bool bad;
    doc = tg__format_load(text, len, &jerr, &bad);
    if (doc == NULL) {
        if (tg__format_json_oom(&jerr))
            goto oom;
        /* Several documents, one per line: JSON Lines, when the format says
         * so or the first line is a call record. The failed whole-document
         * parse cost one line: jansson stops at the second document. */
        int lines = autodetect ? looks_like_json_lines(text, len) : 0;
        if (lines == TG_ENOMEM)
            goto oom;
        if ((fmt != NULL && fmt->parse_text != NULL) || lines == 1) {
            if (fmt == NULL)
                fmt = &tg__format_native;
            if ((turn = tg__turn_new(fmt->name)) == NULL)
                goto oom;
            rc = fmt->parse_text(turn, text, len, source_name, err);
            if (rc != 0)
                goto fail;
            goto done;
        }
        rc = tg__error_at(err, TG_EPARSE, jerr.line, jerr.column,
                          "%s:%d:%d: %s; expected JSON", source_name, jerr.line,
                          jerr.column, jerr.text);
        goto fail;
    }
    if (autodetect && (fmt = detect(doc)) == NULL) {
        tg__buf d;
        tg__buf_init(&d, 200);
        describe(doc, &d, 0);
        rc = tg__error_set(err, TG_EFORMAT,
                           "%s: not a supported turn: saw %s; " EXPECTED_TURN,
                           source_name, tg__buf_cstr(&d));
        tg__buf_cleanup(&d);
        goto fail;
    }
    if ((turn = tg__turn_new(fmt->name)) == NULL)
        goto oom;
    if ((rc = parse_doc(fmt, turn, doc, source_name, err)) != 0 ||
        (bad && (rc = bad_strings_placed(doc, turn, source_name, err)) != 0))
        goto fail;
    /* Neither renderer of this table reads the source document, so it is
     * released here rather than kept in turn->source. */
    json_decref(doc);
    doc = NULL;
done:
    tg__turn_check_calls(turn);
    *out = turn;
    return 0;
oom:
    rc = tg__error_set(err, TG_ENOMEM, "%s: out of memory", source_name);
fail:
    json_decref(doc);
    tg_turn_free(turn);
    return rc;
}

int tg_turn_render(const tg_turn *turn, const char *format, char **out,
                   size_t *out_len, tg_error *err)
{
    if (turn == NULL || out == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_turn_render: no turn or out");
    *out = NULL;
    if (out_len)
        *out_len = 0;
    if (format == NULL || strcmp(format, "auto") == 0)
        format = turn->format;
    const tg__format *fmt = tg__format_find(format);
    if (fmt == NULL || fmt->render == NULL) {
        /* Name the formats that can render, from the table itself. */
        tg__buf names;
        tg__buf_init(&names, 512);
        for (size_t i = 0; i < NFORMATS; i++)
            if (formats[i]->render != NULL)
                tg__buf_printf(&names, "%s%s", names.len ? ", " : "",
                               formats[i]->name);
        int rc = fmt != NULL ? tg__error_set(err, TG_EFORMAT,
                                             "%s is an input format; choose "
                                             "--to (one of %s)",
                                             fmt->name, tg__buf_cstr(&names))
                             : tg__error_set(err, TG_EFORMAT,
                                             "unknown output format '%s'; "
                                             "expected one of %s",
                                             format ? format : "(none)",
                                             tg__buf_cstr(&names));
        tg__buf_cleanup(&names);
        return rc;
    }
    for (size_t i = 0; i < turn->n; i++)
        if (turn->results[i] == NULL)
            return tg__error_set(err, TG_EINVAL,
                                 "call %zu (id '%s') has no result to render",
                                 i, turn->calls[i]->id);
    tg__buf b;
    tg__buf_init(&b, 0);
    int rc = fmt->render(turn, &b, err);
    if (rc == 0 && b.len > 0 && b.data[b.len - 1] != '\n')
        rc = tg__buf_append(&b, "\n", 1);
    if (rc != 0) {
        tg__buf_cleanup(&b);
        if (rc == TG_ENOMEM)
            return tg__error_set(err, TG_ENOMEM, "out of memory rendering %s",
                                 fmt->name);
        return rc;
    }
    size_t n = b.len;
    char *s = tg__buf_take(&b);
    if (s == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory rendering %s",
                             fmt->name);
    *out = s;
    if (out_len)
        *out_len = n;
    return 0;
}

int tg_turn_new_call(const char *format, const char *id, const char *tool,
                     const char *args_json, size_t args_len, tg_turn **out,
                     tg_error *err)
{
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_turn_new_call: out is NULL");
    *out = NULL;
    if (id == NULL || tool == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_turn_new_call needs an id and a tool name");
    const tg__format *fmt = format != NULL ? tg__format_find(format) : NULL;
    if (fmt == NULL)
        return tg__error_set(err, TG_EINVAL, "unknown format '%s'",
                             format != NULL ? format : "(null)");
    if (args_json == NULL || args_len == 0) {
        args_json = "{}";
        args_len = 2;
    }
    tg_turn *turn = tg__turn_new(fmt->name);
    tg_call *call = NULL;
    if (turn == NULL)
        goto oom;
    /* The arguments came as an object: the fast path keeps its text when
     * it is in compact form, the general one decodes it. Neither records a
     * string form, as there was none. */
    int rc = tg__call_new_args_object(id, tool, fmt->name, args_json, args_len,
                                      &call);
    if (rc < 0)
        goto oom;
    if (rc == 1) {
        if ((call = tg__call_new(id, tool, fmt->name)) == NULL)
            goto oom;
        json_error_t jerr;
        json_t *v = json_loadb(args_json, args_len,
                               JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
                               &jerr); /* new ref */
        if (json_is_object(v))
            rc = tg__call_set_args(call, v);
        else if (v == NULL && tg__format_json_oom(&jerr))
            rc = TG_ENOMEM;
        else
            rc = tg__call_set_pre_error(
                call, "MALFORMED_ARGUMENTS",
                v != NULL ? "arguments of call '%s' are not a JSON object"
                          : "arguments of call '%s' are not valid JSON: %s",
                id, v != NULL ? "" : jerr.text);
        json_decref(v);
        if (rc != 0)
            goto oom;
    }
    rc = tg__turn_add_call(turn, call);
    call = NULL; /* the turn took it, also on failure */
    if (rc != 0)
        goto oom;
    tg__turn_check_calls(turn);
    *out = turn;
    return 0;
oom:
    tg__call_free(call);
    tg_turn_free(turn);
    return tg__error_set(err, TG_ENOMEM, "out of memory");
}
