/* SPDX-License-Identifier: MIT */
/*
 * answer.c - a whole answer read once: when tg_turn_parse read a Chat
 * Completions response on its plain path, it says where the message lies
 * (tg_turn_message_span) and that the text is valid JSON, so the message
 * joins the conversation as its text (tg__reqtext_add: not built with
 * jansson, nor written again for the next request), and what the loop
 * needs besides - the message's text and the usage's token counts - is
 * read here from the text without building it. Every other answer is read
 * with jansson as before (loop.c).
 */
#include <stdlib.h>
#include <string.h>

#include "json_scan.h"
#include "loop_int.h"

/* One member of the object whose '{' is s[*i - 1] or earlier: returns 1
 * with the key's bytes (k, kn: no escapes in it) and the value's span
 * [*v, *i), 0 at the closing '}' (*i after it), -1 for anything this
 * reader leaves to jansson (a key with an escape). */
static int member(const char *s, size_t n, size_t *i, const char **k,
                  size_t *kn, size_t *v)
{
    size_t p = tg__json_ws(s, n, *i);
    if (p < n && s[p] == ',')
        p = tg__json_ws(s, n, p + 1);
    if (p >= n)
        return -1;
    if (s[p] == '}') {
        *i = p + 1;
        return 0;
    }
    if (s[p] != '"')
        return -1;
    size_t q = p + 1;
    while (q < n && s[q] != '"' && s[q] != '\\')
        q++;
    if (q >= n || s[q] != '"')
        return -1;
    *k = s + p + 1;
    *kn = q - p - 1;
    q = tg__json_ws(s, n, q + 1);
    if (q >= n || s[q] != ':')
        return -1;
    *v = tg__json_ws(s, n, q + 1);
    *i = tg__json_value_end(s, n, *v);
    return *i > *v ? 1 : -1;
}

static int key_is(const char *k, size_t kn, const char *want)
{
    return strlen(want) == kn && memcmp(k, want, kn) == 0;
}

/* The string value s[v, end) as a malloc'd string: its bytes when it has
 * no escape, else as jansson decodes it; "" for a value of another type.
 * NULL on out of memory or a string jansson would not take. */
static char *string_value(const char *s, size_t v, size_t end)
{
    if (s[v] != '"')
        return strdup("");
    if (memchr(s + v, '\\', end - v) == NULL) {
        char *t = malloc(end - v - 1);
        if (t != NULL) {
            memcpy(t, s + v + 1, end - v - 2);
            t[end - v - 2] = '\0';
        }
        return t;
    }
    json_t *j = json_loadb(s + v, end - v, JSON_DECODE_ANY, NULL);
    char *t = json_is_string(j) ? strdup(json_string_value(j)) : NULL;
    json_decref(j);
    return t;
}

/* The usage object's members tg__usage_update reads, the last of each
 * name (as jansson keeps it) - an integer's value, else none. */
static const char *const usage_names[] = {
    "total_tokens",  "totalTokenCount",     "prompt_tokens",
    "input_tokens",  "promptTokenCount",    "completion_tokens",
    "output_tokens", "candidatesTokenCount"};
#define NUSAGE (sizeof usage_names / sizeof usage_names[0])

/* Reads the usage object at s[v] into u; 0, or -1 to leave it to jansson. */
static int read_usage(const char *s, size_t n, size_t v, tg__usage *u)
{
    long val[NUSAGE] = {0};
    int has[NUSAGE] = {0};
    if (s[v] != '{')
        return 0; /* not an object: no tokens */
    size_t i = v + 1, at;
    const char *k;
    size_t kn;
    int m;
    while ((m = member(s, n, &i, &k, &kn, &at)) == 1) {
        for (size_t j = 0; j < NUSAGE; j++) {
            if (!key_is(k, kn, usage_names[j]))
                continue;
            has[j] = 0; /* a later member of the name replaces it */
            size_t p = at + (s[at] == '-');
            while (p < i && s[p] >= '0' && s[p] <= '9')
                p++;
            if (p != i || p == at + (s[at] == '-'))
                break; /* not an integer */
            if (i - at > 18)
                return -1; /* large: jansson's reading decides */
            val[j] = strtol(s + at, NULL, 10);
            has[j] = 1;
        }
    }
    if (m != 0)
        return -1;
    long *slot[NUSAGE] = {&u->total, &u->total,  &u->input,  &u->input,
                          &u->input, &u->output, &u->output, &u->output};
    for (size_t j = 0; j < NUSAGE; j++)
        if (has[j] && val[j] > *slot[j])
            *slot[j] = val[j];
    return 0;
}

int tg__answer_fast(tg__reqtext *r, const tg__provider *prov, json_t *list,
                    const char *raw, size_t len, const tg_turn *turn,
                    char **text, long *tokens, tg_error *err)
{
    size_t off, mlen;
    *text = NULL;
    *tokens = 0;
    if (prov != &tg__provider_openai_chat ||
        !tg_turn_message_span(turn, &off, &mlen) || off + mlen > len ||
        raw[off] != '{')
        return 0;
    /* the message's content, the last of the name */
    const char *k;
    size_t kn, v, i = off + 1, end = off + mlen;
    size_t cv = 0, cend = 0;
    int m;
    while ((m = member(raw, end, &i, &k, &kn, &v)) == 1)
        if (key_is(k, kn, "content")) {
            cv = v;
            cend = i;
        }
    if (m != 0 || i != end)
        return 0;
    /* the response's usage, the last of the name */
    tg__usage u = {0};
    size_t uv = 0;
    int has_usage = 0;
    i = tg__json_ws(raw, len, 0);
    if (i >= len || raw[i] != '{')
        return 0;
    i++;
    while ((m = member(raw, len, &i, &k, &kn, &v)) == 1)
        if (key_is(k, kn, "usage")) {
            uv = v;
            has_usage = 1;
        }
    if (m != 0 || (has_usage && read_usage(raw, len, uv, &u) != 0))
        return 0;
    char *t = cend > cv ? string_value(raw, cv, cend) : strdup("");
    if (t == NULL)
        return 0; /* out of memory, or jansson's reading decides */
    int rc = tg__reqtext_add(r, list, raw + off, mlen, err);
    if (rc != 0) {
        free(t);
        return rc;
    }
    *text = t;
    *tokens = tg__usage_tokens(&u);
    return 1;
}
