/* SPDX-License-Identifier: MIT */
/*
 * fenced.c - legacy fenced blocks (docs/formats.md, "Legacy fenced blocks"):
 * plain assistant text from a model without native tool calling, in which
 * Markdown code fences are the calls. Input only, and only when named
 * (--from fenced): any Markdown answer has fences, so detection never
 * guesses it.
 *
 * The accepted input is the whole text; a JSON string holding the text, or
 * a message object whose "content" is a string, is read the same way.
 *
 * Fences follow CommonMark: a line of at least three backticks or tildes,
 * indented by at most three spaces, opens a block that the next fence line of
 * the same character and at least the same length closes; the opening
 * fence's indentation is removed from the body lines. Each block becomes a
 * call by its info string (the text after the opening fence, trimmed):
 *
 *   tool_call         the body is a JSON object {"tool":NAME,"args":ARGS}
 *                     ("name" and "arguments" are accepted for "tool" and
 *                     "args"); ARGS is an object or a string holding one,
 *                     absent means {}; a body that is not JSON is
 *                     MALFORMED_ARGUMENTS, one without a tool MALFORMED_CALL
 *   bash, sh, shell   tool = the info string, args = {"command": BODY}
 *   any other info string matching ^[A-Za-z_][A-Za-z0-9_.-]*$
 *                     tool = the info string, args = {"code": BODY}
 *   json, no info string, anything else
 *                     not a call (an example, not an action)
 *
 * BODY is the block's lines joined by "\n", without the final newline. Calls
 * are numbered in order of appearance: ids "fenced-0", "fenced-1", ...; the
 * 1-based line of the opening fence is kept in call->meta as {"line":N}. A
 * block that is never closed (the text ended inside it, as a cut-off answer
 * does) still becomes its call, with a MALFORMED_CALL pre-error so a
 * truncated command never runs.
 */
#include "format.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "error.h"

#define FORMAT_NAME "fenced"
#define EXPECTED_SHAPE                                                         \
    "expected plain assistant text with fenced blocks, a JSON string "         \
    "holding it, or a message object whose content is a string"

typedef struct fence {
    char ch;          /* '`' or '~' */
    size_t run;       /* length of the opening fence */
    size_t indent;    /* spaces before it, removed from body lines */
    const char *info; /* trimmed info string, in the text */
    size_t info_len;
    size_t line; /* 1-based line of the opening fence */
} fence;

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* Whether line [s, s+n) is a fence line: sets ch, run, indent, and the
 * trimmed rest of the line in *rest / *rest_len. */
static int fence_line(const char *s, size_t n, fence *f, const char **rest,
                      size_t *rest_len)
{
    size_t i = 0;
    while (i < n && i < 4 && s[i] == ' ')
        i++;
    if (i > 3 || i >= n || (s[i] != '`' && s[i] != '~'))
        return 0;
    char ch = s[i];
    size_t start = i;
    while (i < n && s[i] == ch)
        i++;
    if (i - start < 3)
        return 0;
    f->ch = ch;
    f->run = i - start;
    f->indent = start;
    while (i < n && is_space(s[i]))
        i++;
    size_t end = n;
    while (end > i && is_space(s[end - 1]))
        end--;
    *rest = s + i;
    *rest_len = end - i;
    return 1;
}

static int word_is(const char *s, size_t n, const char *w)
{
    return n == strlen(w) && strncasecmp(s, w, n) == 0;
}

/* ^[A-Za-z_][A-Za-z0-9_.-]*$ */
static int tool_like(const char *s, size_t n)
{
    if (n == 0 || !((s[0] >= 'A' && s[0] <= 'Z') ||
                    (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
        return 0;
    for (size_t i = 1; i < n; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

/* The "tool" (or "name") member of a tool_call block's document. */
static const json_t *block_tool(const json_t *doc)
{
    const json_t *tool = json_object_get(doc, "tool"); /* borrowed */
    return tool != NULL ? tool : json_object_get(doc, "name");
}

/* Sets the arguments of a ```tool_call block from its decoded body (doc,
 * borrowed; NULL when it did not decode, jerr saying why). Returns 0 or
 * TG_ENOMEM; problems become pre-errors. */
static int tool_call_block(tg_call *call, const json_t *doc,
                           const json_error_t *jerr)
{
    /* Text that does not decode is MALFORMED_ARGUMENTS, as an arguments
     * string that does not decode is in the other formats: the block is
     * this format's serialized arguments (and jansson reports some
     * allocation failures as syntax errors, which that code already
     * covers). */
    if (doc == NULL)
        return tg__call_set_pre_error(
            call, "MALFORMED_ARGUMENTS",
            "the tool_call block of call '%s' is not a JSON object "
            "{\"tool\":...,\"args\":...}: %s at line %d, column %d of the "
            "block",
            call->id, jerr->text, jerr->line, jerr->column);
    const json_t *tool = block_tool(doc);              /* borrowed */
    const json_t *args = json_object_get(doc, "args"); /* borrowed */
    if (args == NULL)
        args = json_object_get(doc, "arguments");
    int rc;
    if (json_is_string(args))
        rc = tg__call_set_args_text(call, json_string_value(args),
                                    json_string_length(args));
    else if (args == NULL || json_is_null(args)) {
        json_t *empty = json_object(); /* new ref */
        rc = empty ? tg__call_set_args(call, empty) : TG_ENOMEM;
        json_decref(empty);
    } else
        rc = tg__call_set_args(call, (json_t *)args);
    if (rc != 0)
        return rc;
    if (!json_is_object(doc))
        return tg__call_set_pre_error(call, "MALFORMED_CALL",
                                      "the tool_call block of call '%s' is "
                                      "not a JSON object "
                                      "{\"tool\":...,\"args\":...}",
                                      call->id);
    if (!json_is_string(tool) || json_string_length(tool) == 0)
        return tg__call_set_pre_error(call, "MALFORMED_CALL",
                                      "the tool_call block of call '%s' has "
                                      "no \"tool\" (a non-empty string)",
                                      call->id);
    return 0;
}

/* Sets {"command"|"code": body} for a block named after its tool. */
static int code_block(tg_call *call, const char *info, size_t info_len,
                      const char *body, size_t len)
{
    int shell = word_is(info, info_len, "bash") ||
                word_is(info, info_len, "sh") ||
                word_is(info, info_len, "shell");
    json_t *s = json_stringn(body, len); /* new ref */
    if (s == NULL) {
        /* json_stringn fails on invalid UTF-8 (or memory). */
        json_t *empty = json_object(); /* new ref */
        int rc = empty ? tg__call_set_args(call, empty) : TG_ENOMEM;
        json_decref(empty);
        return rc != 0 ? rc
                       : tg__call_set_pre_error(
                             call, "MALFORMED_ARGUMENTS",
                             "the block of call '%s' is not valid UTF-8 text",
                             call->id);
    }
    json_t *args =
        json_pack("{s:o}", shell ? "command" : "code", s); /* new ref */
    int rc = args ? tg__call_set_args(call, args) : TG_ENOMEM;
    json_decref(args);
    return rc;
}

/* Adds the call of a closed (or, when !closed, cut-off) block. body is the
 * joined body text. Returns 0 or TG_ENOMEM. */
static int add_block(tg_turn *turn, const fence *f, int closed,
                     const tg__buf *body)
{
    const char *info = f->info;
    size_t info_len = f->info_len;
    int is_tool_call = word_is(info, info_len, "tool_call");
    if (!is_tool_call &&
        (word_is(info, info_len, "json") || !tool_like(info, info_len)))
        return 0;
    char id[48];
    snprintf(id, sizeof id, "fenced-%zu", turn->n);
    const char *text = body->len ? body->data : "";
    json_error_t jerr;
    json_t *doc = NULL; /* new ref */
    if (is_tool_call) {
        /* The tool name is in the body; the call is made with it. */
        doc = json_loadb(text, body->len, JSON_REJECT_DUPLICATES, &jerr);
        if (doc == NULL && tg__format_json_oom(&jerr))
            return TG_ENOMEM;
    }
    tg__buf tool; /* the tool name as a C string */
    tg__buf_init(&tool, 0);
    int rc = 0;
    if (is_tool_call) {
        const json_t *t = block_tool(doc); /* borrowed */
        if (json_is_string(t))
            rc = tg__buf_append(&tool, json_string_value(t),
                                json_string_length(t));
    } else
        rc = tg__buf_append(&tool, info, info_len);
    tg_call *call =
        rc == 0 ? tg__call_new(id, tg__buf_cstr(&tool), FORMAT_NAME) : NULL;
    tg__buf_cleanup(&tool);
    if (call == NULL) {
        json_decref(doc);
        return TG_ENOMEM;
    }
    rc = is_tool_call ? tool_call_block(call, doc, &jerr)
                      : code_block(call, info, info_len, text, body->len);
    json_decref(doc);
    if (rc == 0) {
        json_t *meta =
            json_pack("{s:I}", "line", (json_int_t)f->line); /* new ref */
        if (meta == NULL)
            rc = TG_ENOMEM;
        call->meta = meta;
    }
    if (rc == 0 && !closed)
        rc = tg__call_set_pre_error(
            call, "MALFORMED_CALL",
            "the %.*s block opened at line %zu is not closed: the text ended "
            "inside it, so it may be cut off and is not run",
            (int)(info_len > 64 ? 64 : info_len), info, f->line);
    if (rc != 0) {
        tg__call_free(call);
        return rc;
    }
    return tg__turn_add_call(turn, call);
}

static int parse_text(tg_turn *turn, const char *text, size_t len,
                      const char *source_name, tg_error *err)
{
    (void)source_name; /* plain text has no parse errors to name it in */
    tg__buf body;
    tg__buf_init(&body, 0);
    fence open = {0};
    int in_fence = 0, rc = 0;
    size_t pos = 0, line = 0;
    while (rc == 0 && pos < len) {
        const char *s = text + pos;
        const char *nl = memchr(s, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - s) : len - pos;
        pos += n + (nl != NULL);
        line++;
        fence f;
        const char *rest;
        size_t rest_len;
        int is_fence = fence_line(s, n, &f, &rest, &rest_len);
        if (!in_fence) {
            /* A backtick fence's info string cannot hold a backtick
             * (CommonMark): ```a`b``` is inline code, not a fence. */
            if (is_fence &&
                !(f.ch == '`' && memchr(rest, '`', rest_len) != NULL)) {
                open = f;
                open.info = rest;
                open.info_len = rest_len;
                open.line = line;
                in_fence = 1;
                body.len = 0;
            }
            continue;
        }
        if (is_fence && f.ch == open.ch && f.run >= open.run && rest_len == 0) {
            /* body holds each line followed by "\n"; drop the last one */
            if (body.len > 0)
                body.len--;
            rc = add_block(turn, &open, 1, &body);
            in_fence = 0;
            continue;
        }
        size_t strip = 0;
        while (strip < open.indent && strip < n && s[strip] == ' ')
            strip++;
        size_t end = n;
        if (end > strip && s[end - 1] == '\r')
            end--;
        if ((rc = tg__buf_append(&body, s + strip, end - strip)) == 0)
            rc = tg__buf_append(&body, "\n", 1);
    }
    if (rc == 0 && in_fence) {
        if (body.len > 0)
            body.len--;
        rc = add_block(turn, &open, 0, &body);
    }
    tg__buf_cleanup(&body);
    if (rc != 0)
        return tg__error_set(err, rc, "out of memory");
    return 0;
}

static int parse(tg_turn *turn, const json_t *doc, tg_error *err)
{
    const json_t *text = doc; /* borrowed */
    if (json_is_object(doc)) {
        const char *role = json_string_value(json_object_get(doc, "role"));
        text = json_object_get(doc, "content");
        if (!json_is_string(text) ||
            (role != NULL && strcmp(role, "assistant") != 0)) {
            tg__error_pointer(err, json_is_string(text) ? "/role" : "/content");
            return tg__error_set(err, TG_EFORMAT,
                                 "an object that is not an assistant message "
                                 "with string content; " EXPECTED_SHAPE);
        }
    }
    if (json_is_string(text))
        return parse_text(turn, json_string_value(text),
                          json_string_length(text), NULL, err);
    if (json_is_array(doc)) {
        tg__error_pointer(err, "");
        return tg__error_set(err, TG_EFORMAT, "an array; " EXPECTED_SHAPE);
    }
    /* A number, a boolean or null: text that happens to be JSON, and holds
     * no fence. */
    return 0;
}

const tg__format tg__format_fenced = {
    .name = FORMAT_NAME,
    .detect = NULL,
    .parse = parse,
    .parse_text = parse_text,
    .parse_fast = NULL,
    .render = NULL,
    .render_tools = NULL,
};
