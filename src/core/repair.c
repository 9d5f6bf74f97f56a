/* SPDX-License-Identifier: MIT */
/*
 * repair.c - opt-in repair of argument text a model got slightly wrong
 * (limits.repair; repair.h). Only text that does not parse as a JSON object
 * is touched, and only by the three mechanical fixes models most often
 * need: a Markdown code fence around the JSON, trailing commas, and an
 * object cut short (a stream or a token limit ended it). Anything still not
 * an object afterwards stays MALFORMED_ARGUMENTS.
 */
#include "repair.h"

#include <stdlib.h>
#include <string.h>

#include "jtape.h"

#define MAX_NEST 512 /* deeper text is not repaired */

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The body of the first ``` fence in text (language tag skipped), or
 * NULL. An unclosed fence runs to the end of the text. */
static const char *fence_body(const char *text, size_t len, size_t *blen)
{
    const char *open = NULL;
    for (size_t i = 0; i + 3 <= len; i++)
        if (memcmp(text + i, "```", 3) == 0) {
            open = text + i;
            break;
        }
    if (open == NULL)
        return NULL;
    const char *end = text + len;
    const char *p = open + 3;
    while (p < end && *p != '\n' && *p != '{' && *p != '[')
        p++; /* the info string: json, JSON, javascript ... */
    const char *close = NULL;
    for (const char *q = p; q + 3 <= end; q++)
        if (memcmp(q, "```", 3) == 0) {
            close = q;
            break;
        }
    *blen = (size_t)((close ? close : end) - p);
    return p;
}

/* Copies text to out without commas that only precede a closing bracket
 * (outside strings). Sets *changed when one was dropped. */
static int drop_trailing_commas(const char *text, size_t len, tg_buf *out,
                                int *changed)
{
    int in_str = 0, esc = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_str) {
            if (esc)
                esc = 0;
            else if (c == '\\')
                esc = 1;
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == ',') {
            size_t j = i + 1;
            while (j < len && is_space(text[j]))
                j++;
            if (j < len && (text[j] == '}' || text[j] == ']')) {
                *changed = 1;
                continue;
            }
        }
        int rc = tg__buf_append(out, &c, 1);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Appends what closes a truncated object: the open string, a value for a
 * dangling key, and the brackets still open. Sets *changed when anything
 * was added or cut. Returns 0, 1 when it cannot tell how (deep nesting, not
 * an object), or TG_ENOMEM. */
static int close_truncated(tg_buf *b, int *changed)
{
    char stack[MAX_NEST];
    size_t depth = 0;
    int in_str = 0, esc = 0, key = 0; /* key: the last string is a key */
    char prev = 0; /* the last significant byte outside strings */
    size_t start = 0;
    while (start < b->len && is_space(b->data[start]))
        start++;
    if (start == b->len || b->data[start] != '{')
        return 1;
    for (size_t i = start; i < b->len; i++) {
        char c = b->data[i];
        if (in_str) {
            if (esc)
                esc = 0;
            else if (c == '\\')
                esc = 1;
            else if (c == '"') {
                in_str = 0;
                prev = '"';
            }
            continue;
        }
        if (is_space(c))
            continue;
        if (c == '"') {
            in_str = 1;
            key = depth > 0 && stack[depth - 1] == '}' &&
                  (prev == '{' || prev == ',');
        } else if (c == '{' || c == '[') {
            if (depth == MAX_NEST)
                return 1;
            stack[depth++] = c == '{' ? '}' : ']';
        } else if (c == '}' || c == ']') {
            if (depth == 0 || stack[depth - 1] != c)
                return 1; /* not a prefix of a document */
            depth--;
        }
        if (c != '"')
            prev = c;
    }
    if (depth == 0 && !in_str)
        return 1; /* not truncated: something else is wrong */
    int rc = 0;
    if (in_str) {
        if (esc)
            b->len--; /* a lone backslash cannot end the string */
        rc = tg__buf_append(b, "\"", 1);
        prev = '"';
    }
    /* What the text ends with decides what is missing before the closers:
     * a value after a key or ':', nothing after ',' (the comma goes). */
    while (rc == 0 && b->len > 0 && is_space(b->data[b->len - 1]))
        b->len--;
    if (rc == 0 && prev == '"' && key)
        rc = tg__buf_append(b, ":null", 5);
    else if (rc == 0 && prev == ':')
        rc = tg__buf_append(b, "null", 4);
    else if (rc == 0 && prev == ',')
        b->len--;
    else if (prev == '-' || prev == '.' || prev == 'e' || prev == 'E' ||
             prev == '+')
        return 1; /* a number cut mid-way: no honest completion */
    while (rc == 0 && depth > 0)
        rc = tg__buf_append(b, &stack[--depth], 1);
    *changed = 1;
    return rc;
}

static int is_object_text(const char *text, size_t len)
{
    tg_jtape tape;
    if (tg__jtape_parse(text, len, 0, &tape, NULL) != 0)
        return 0;
    int ok = tape.tok[0].kind == TG_JT_OBJECT;
    tg__jtape_free(&tape);
    return ok;
}

int tg__repair_args_text(const char *text, size_t len, tg_buf *out,
                         unsigned *done)
{
    *done = 0;
    out->len = 0;
    if (text == NULL)
        return 0;
    size_t blen = len;
    const char *body = fence_body(text, len, &blen);
    if (body != NULL)
        *done |= TG_REPAIR_FENCE;
    else
        body = text;
    int changed = 0;
    int rc = drop_trailing_commas(body, blen, out, &changed);
    if (rc != 0)
        return rc;
    if (changed)
        *done |= TG_REPAIR_TRAILING_COMMAS;
    if (*done != 0 && is_object_text(out->data, out->len))
        return 1;
    changed = 0;
    rc = close_truncated(out, &changed);
    if (rc < 0)
        return rc;
    if (rc == 0 && changed)
        *done |= TG_REPAIR_CLOSED;
    if (*done != 0 && is_object_text(out->data, out->len))
        return 1;
    *done = 0;
    return 0;
}

const char *tg__repair_name(unsigned bit)
{
    switch (bit) {
    case TG_REPAIR_FENCE:
        return "stripped a Markdown code fence";
    case TG_REPAIR_TRAILING_COMMAS:
        return "dropped trailing commas";
    case TG_REPAIR_CLOSED:
        return "closed a truncated object";
    case TG_REPAIR_COERCED:
        return "coerced strings to the types the schema wants";
    default:
        return "unknown repair";
    }
}
