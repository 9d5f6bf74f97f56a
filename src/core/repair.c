/* SPDX-License-Identifier: MIT */
/*
 * repair.c - opt-in repair of argument text a model got slightly wrong
 * (limits.repair; repair.h). Only text that does not parse as a JSON object
 * is touched, and only by the two mechanical fixes models most often need:
 * a Markdown code fence around the JSON, and trailing commas. Anything
 * still not an object afterwards stays MALFORMED_ARGUMENTS.
 *
 * Text that ends before its value closes was cut (a stream or a token
 * limit ended it) and is never completed: a string, a number or a literal
 * cut mid-way has no honest ending, and a closed-up object would run a tool
 * with arguments the model never finished writing (half a file's content,
 * 12 for 1234). Such text is reported as cut, with where it ends, and stays
 * MALFORMED_ARGUMENTS. The repairs only ever drop bytes (a fence, commas),
 * never add any, so no prefix of a document that does not close by itself
 * becomes one.
 */
#include "repair.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "jtape.h"

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t skip_space(const char *t, size_t len, size_t i)
{
    while (i < len && is_space(t[i]))
        i++;
    return i;
}

/* A byte of a bare token: a number or a literal (true, false, null). */
static bool is_bare(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c == '-' || c == '+' || c == '.';
}

/* Where the JSON starts: after the opening line of a Markdown code fence
 * when the text is fenced (``` first, or after prose), else at the first
 * byte that is not white space. Text that starts as JSON does (an object,
 * an array, a string) is not fenced: a ``` in it is inside one of its
 * strings. */
static size_t json_start(const char *t, size_t len, bool *fenced)
{
    size_t i = skip_space(t, len, 0);
    *fenced = false;
    if (i < len && (t[i] == '{' || t[i] == '[' || t[i] == '"'))
        return i;
    const char *f = len - i >= 3 ? memmem(t + i, len - i, "```", 3) : NULL;
    if (f == NULL)
        return i;
    size_t p = (size_t)(f - t) + 3;
    while (p < len && t[p] != '\n' && t[p] != '{' && t[p] != '[')
        p++; /* the info string: json, JSON, javascript ... */
    *fenced = true;
    return skip_space(t, len, p);
}

enum { SCAN_CLOSED, SCAN_CUT, SCAN_NOT_JSON };

/* Follows the object or array at t[i] (strings, escapes and brackets; what
 * is between them is left to the parser) to where it closes: SCAN_CLOSED
 * with *end after its last byte, SCAN_CUT when the text ends first (*inside
 * names what was open at the end), SCAN_NOT_JSON when a bracket does not
 * match or nesting passes the parser's limit. */
static int scan_value(const char *t, size_t len, size_t i, size_t *end,
                      const char **inside)
{
    uint8_t is_obj[TG_JTAPE_MAX_DEPTH / 8] = {0}; /* a bit per open level */
    size_t depth = 0;
    bool in_str = false, esc = false, key = false;
    char prev = 0; /* the last byte outside strings that is not space */
    for (; i < len; i++) {
        char c = t[i];
        if (in_str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"') {
                in_str = false;
                prev = '"';
            }
            continue;
        }
        if (is_space(c))
            continue;
        if (c == '"') {
            in_str = true;
            key = depth > 0 &&
                  (is_obj[(depth - 1) / 8] >> ((depth - 1) % 8) & 1) &&
                  (prev == '{' || prev == ',');
        } else if (c == '{' || c == '[') {
            if (depth == TG_JTAPE_MAX_DEPTH)
                return SCAN_NOT_JSON;
            uint8_t bit = (uint8_t)(1u << (depth % 8));
            if (c == '{')
                is_obj[depth / 8] |= bit;
            else
                is_obj[depth / 8] &= (uint8_t)~bit;
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0)
                return SCAN_NOT_JSON;
            bool obj = is_obj[(depth - 1) / 8] >> ((depth - 1) % 8) & 1;
            if (obj != (c == '}'))
                return SCAN_NOT_JSON;
            if (--depth == 0) {
                *end = i + 1;
                return SCAN_CLOSED;
            }
        }
        prev = c;
    }
    if (in_str)
        *inside = key ? "a key" : "a string";
    else if (len > 0 && is_bare(t[len - 1]) && is_bare(prev)) {
        /* the text ends on a bare token: find where it starts */
        size_t s = len;
        while (s > 0 && is_bare(t[s - 1]))
            s--;
        *inside = (t[s] >= '0' && t[s] <= '9') || t[s] == '-' ? "a number"
                                                              : "a literal";
    } else
        *inside = is_obj[(depth - 1) / 8] >> ((depth - 1) % 8) & 1 ? "an object"
                                                                   : "an array";
    return SCAN_CUT;
}

/* Line and column (1-based, columns in characters) of the end of text. */
static void end_position(const char *t, size_t len, tg__repair_cut *cut)
{
    int line = 1, col = 1;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c == '\n') {
            line++;
            col = 1;
        } else if ((c & 0xC0) != 0x80)
            col++;
    }
    cut->line = line;
    cut->column = col;
}

/* Copies text to out without commas that only precede a closing bracket
 * (outside strings). Sets *changed when one was dropped. */
static int drop_trailing_commas(const char *text, size_t len, tg__buf *out,
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
            size_t j = skip_space(text, len, i + 1);
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

static int is_object_text(const char *text, size_t len)
{
    tg__jtape tape;
    if (tg__jtape_parse(text, len, 0, &tape, NULL) != 0)
        return 0;
    int ok = tape.tok[0].kind == TG_JT_OBJECT;
    tg__jtape_free(&tape);
    return ok;
}

int tg__repair_args_text(const char *text, size_t len, tg__buf *out,
                         unsigned *done, tg__repair_cut *cut)
{
    *done = 0;
    out->len = 0;
    if (cut != NULL)
        memset(cut, 0, sizeof *cut);
    if (text == NULL)
        return 0;
    bool fenced;
    size_t start = json_start(text, len, &fenced), end = 0;
    const char *inside = NULL;
    if (start >= len || (text[start] != '{' && text[start] != '['))
        return 0;
    int scan = scan_value(text, len, start, &end, &inside);
    if (scan == SCAN_NOT_JSON)
        return 0;
    size_t after = scan == SCAN_CLOSED ? skip_space(text, len, end) : len;
    if (scan == SCAN_CLOSED && fenced && len - after < 3 &&
        memcmp(text + after, "```", len - after) == 0)
        inside = "a Markdown code fence"; /* it never closed */
    if (inside != NULL) {
        if (cut != NULL) {
            cut->inside = inside;
            end_position(text, len, cut);
        }
        return 0;
    }
    /* After the value: the closing fence (and whatever prose follows it),
     * or nothing but white space. */
    if (fenced ? len - after < 3 || memcmp(text + after, "```", 3) != 0
               : after != len)
        return 0;
    int changed = 0;
    int rc = drop_trailing_commas(text + start, end - start, out, &changed);
    if (rc != 0)
        return rc;
    *done = (fenced ? TG_REPAIR_FENCE : 0u) |
            (changed ? TG_REPAIR_TRAILING_COMMAS : 0u);
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
