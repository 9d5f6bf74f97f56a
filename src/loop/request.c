/* SPDX-License-Identifier: MIT */
/*
 * request.c - a request's body text without serializing the whole
 * conversation again for every request (which made a loop O(n²) in its
 * length): the items of the conversation's list never change once added,
 * so the JSON text of each is kept from the request that first sent it,
 * and a request is the provider's body with the list replaced by a marker
 * string, serialized once for the loop (the model, the tool definitions,
 * the system prompt: they do not change while it runs, and the tools'
 * definitions with their schemas were most of what every request
 * serialized again), the marker then replaced by the kept text. The kept items
 * are held (new refs) and compared by identity before each request: a list that
 * was changed below what is kept (nothing in the loop does) is serialized again
 * from the first item that differs. Items can also come as text
 * (tg__reqtext_add: rendered results, an answer's message): the list then
 * holds a placeholder and only the text kept here says what the item is,
 * until a transcript asks for the items themselves (tg__reqtext_resolved).
 */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "json_scan.h"
#include "loop_int.h"

/* The marker: control characters, so jansson writes it escaped, and no
 * string of the body can hold the quote-delimited form searched for (a
 * quote within a JSON string is always written \"). */
#define MARK "\x01toolgate:conversation\x01"
#define MARK_JSON "\"\\u0001toolgate:conversation\\u0001\""
/* The tool definitions' marker, as a one-item list in the serialized
 * frame. */
#define TOOLS_MARK "\x01toolgate:tools\x01"
#define TOOLS_MARK_JSON "[\"\\u0001toolgate:tools\\u0001\"]"

void tg__reqtext_cleanup(tg__reqtext *r)
{
    for (size_t i = 0; i < r->n; i++)
        json_decref(r->items[i]);
    free(r->items);
    free(r->ends);
    free(r->lazy);
    free(r->text);
    free(r->frame);
    free(r->tools_text);
    memset(r, 0, sizeof *r);
}

/* After running out of memory: the text may end in half an item; what
 * is kept ends after the last whole one (the items added as text have no
 * other copy: they stay). */
static void drop_partial(tg__reqtext *r)
{
    r->len = r->n > 0 ? r->ends[r->n - 1] : 0;
}

int tg__reqtext_tools(tg__reqtext *r, const char *text, json_t **tools,
                      tg_error *err)
{
    *tools = NULL;
    const char *p = text;
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
        p++;
    if (*p != '[') {
        json_error_t jerr;
        *tools = json_loads(text, 0, &jerr); /* new ref */
        return *tools != NULL
                   ? 0
                   : tg__loop_fail(err, TG_EINTERNAL,
                                   "the runtime's tool definitions are not "
                                   "JSON: %s",
                                   jerr.text);
    }
    const char *q = p + 1;
    while (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t')
        q++;
    free(r->tools_text);
    r->tools_text = NULL;
    if (*q == ']')             /* none */
        *tools = json_array(); /* new ref */
    else if ((r->tools_text = strdup(p)) != NULL)
        *tools = json_pack("[s]", TOOLS_MARK); /* new ref */
    r->tools_mark = *tools;
    return *tools != NULL ? 0 : tg__loop_fail(err, TG_ENOMEM, "out of memory");
}

/* frame with the tools' marker replaced by r->tools_text (malloc'd; frame
 * freed), or frame itself when it has no marker; NULL on out of memory. */
static char *splice_tools(tg__reqtext *r, char *frame)
{
    char *at = r->tools_text != NULL ? strstr(frame, TOOLS_MARK_JSON) : NULL;
    if (at == NULL)
        return frame;
    size_t head = (size_t)(at - frame), mark = sizeof TOOLS_MARK_JSON - 1;
    size_t tools = strlen(r->tools_text), tail = strlen(at + mark);
    char *out = malloc(head + tools + tail + 1);
    if (out != NULL) {
        memcpy(out, frame, head);
        memcpy(out + head, r->tools_text, tools);
        memcpy(out + head + tools, at + mark, tail + 1);
    }
    free(frame);
    return out;
}

static int put(const char *data, size_t n, void *ud)
{
    tg__reqtext *r = ud;
    void *const text[] = {&r->text};
    static const size_t size[] = {1};
    if (tg__grow(r->len + n + 1, 4096, &r->cap, 1, text, size) != 0)
        return -1;
    memcpy(r->text + r->len, data, n);
    r->len += n;
    return 0;
}

/* Room for `need` kept items. 0 or -1. */
static int grow_items(tg__reqtext *r, size_t need)
{
    void *const arrays[] = {&r->items, &r->ends, &r->lazy};
    const size_t sizes[] = {sizeof *r->items, sizeof *r->ends, sizeof *r->lazy};
    return tg__grow(need, 16, &r->items_cap, 3, arrays, sizes);
}

/* Brings the kept text up to `list`: items compared by identity, the first
 * that differs and all after it serialized. */
static int sync_list(tg__reqtext *r, const json_t *list)
{
    size_t size = json_array_size(list), keep = 0;
    while (keep < r->n && keep < size &&
           r->items[keep] == json_array_get(list, keep))
        keep++;
    for (size_t i = keep; i < r->n; i++)
        json_decref(r->items[i]);
    r->n = keep;
    r->len = keep > 0 ? r->ends[keep - 1] : 0;
    if (grow_items(r, size) != 0)
        return TG_ENOMEM;
    for (size_t i = keep; i < size; i++) {
        json_t *item = json_array_get(list, i); /* borrowed */
        if ((i > 0 && put(",", 1, r) != 0) ||
            json_dump_callback(item, put, r, JSON_COMPACT | JSON_ENCODE_ANY) !=
                0)
            return TG_ENOMEM;
        r->items[i] = json_incref(item);
        r->ends[i] = r->len;
        r->lazy[i] = 0;
        r->n = i + 1;
    }
    return 0;
}

int tg__reqtext_items(tg__reqtext *r, const json_t *list, size_t from,
                      const char **text, size_t *len)
{
    if (sync_list(r, list) != 0) {
        drop_partial(r);
        return TG_ENOMEM;
    }
    size_t at = from == 0 ? 0 : from <= r->n ? r->ends[from - 1] + 1 : r->len;
    if (at > r->len)
        at = r->len; /* from is the list's size: nothing */
    *text = r->text != NULL ? r->text + at : "";
    *len = r->len - at;
    return 0;
}

/* Makes r's frame: the body of a request with the list replaced by a
 * marker, serialized, and where the marker stands. */
static int make_frame(tg__reqtext *r, const tg__provider *prov,
                      const json_t *conv, const json_t *tools,
                      const char *model, int max_tokens, int stream,
                      tg_error *err)
{
    json_t *shell = NULL, *body = NULL; /* new refs */
    char *frame = NULL;
    int rc = 0;
    shell = json_copy((json_t *)conv); /* new ref: shallow */
    if (shell == NULL ||
        json_object_set_new(shell, prov->list_key, json_string(MARK)) != 0) {
        rc = tg__loop_fail(err, TG_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = prov->request(shell, tools, model, max_tokens, &body, err)) != 0)
        goto out;
    /* Gemini streams from another URL; the others are asked in the body. */
    if (stream && strcmp(prov->name, "gemini") != 0 &&
        json_object_set_new(body, "stream", json_true()) != 0)
        rc = tg__loop_fail(err, TG_ENOMEM, "out of memory");
    /* Chat Completions streams its usage only when asked */
    if (rc == 0 && stream && prov == &tg__provider_openai_chat &&
        json_object_set_new(body, "stream_options",
                            json_pack("{s:b}", "include_usage", 1)) != 0)
        rc = tg__loop_fail(err, TG_ENOMEM, "out of memory");
    if (rc != 0)
        goto out;
    frame = json_dumps(body, JSON_COMPACT);
    if (frame != NULL && tools == r->tools_mark)
        frame = splice_tools(r, frame);
    if (frame == NULL) {
        rc = tg__loop_fail(err, TG_ENOMEM, "out of memory");
        goto out;
    }
    /* "<list_key>":<marker>, the member of the body: never text within a
     * string, where the marker's quote would be written \" (see MARK).
     * The first such member is the conversation's (the request's first
     * members are the conversation's; its tools come after). */
    size_t klen = strlen(prov->list_key);
    char *at = frame;
    for (;;) {
        at = strstr(at, MARK_JSON);
        if (at == NULL || (at - frame >= (ptrdiff_t)klen + 3 && at[-1] == ':' &&
                           at[-2] == '"' &&
                           memcmp(at - 2 - klen, prov->list_key, klen) == 0 &&
                           at[-3 - klen] == '"'))
            break;
        at++;
    }
    if (at == NULL) {
        rc = tg__loop_fail(err, TG_EINTERNAL,
                           "the request has no conversation list");
        goto out;
    }
    free(r->frame);
    r->frame = frame;
    r->head = (size_t)(at - frame);
    r->tail = r->head + sizeof MARK_JSON - 1;
    r->frame_tools = tools;
    r->frame_stream = stream;
    frame = NULL;
out:
    free(frame);
    json_decref(body);
    json_decref(shell);
    return rc;
}

int tg__reqtext_build(tg__reqtext *r, const tg__provider *prov,
                      const json_t *conv, const json_t *tools,
                      const char *model, int max_tokens, int stream, char **out,
                      size_t *out_len, tg_error *err)
{
    *out = NULL;
    const json_t *list = json_object_get(conv, prov->list_key); /* borrowed */
    if (!json_is_array(list))
        return tg__loop_fail(err, TG_EINTERNAL,
                             "the conversation has no \"%s\" list",
                             prov->list_key);
    if (sync_list(r, list) != 0) {
        drop_partial(r);
        return tg__loop_fail(err, TG_ENOMEM,
                             "out of memory building a "
                             "request");
    }
    int rc;
    if ((r->frame == NULL || r->frame_tools != tools ||
         r->frame_stream != stream) &&
        (rc = make_frame(r, prov, conv, tools, model, max_tokens, stream,
                         err)) != 0)
        return rc;
    size_t head = r->head, tail = strlen(r->frame + r->tail);
    size_t n = head + 1 + r->len + 1 + tail;
    char *text = malloc(n + 1);
    if (text == NULL)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    memcpy(text, r->frame, head);
    text[head] = '[';
    if (r->len > 0)
        memcpy(text + head + 1, r->text, r->len);
    text[head + 1 + r->len] = ']';
    memcpy(text + head + 2 + r->len, r->frame + r->tail, tail + 1);
    *out = text;
    *out_len = n;
    return 0;
}

/* Makes room for n more bytes of text (and a NUL). 0 or -1. */
static int reserve(tg__reqtext *r, size_t n)
{
    void *const text[] = {&r->text};
    static const size_t size[] = {1};
    return tg__grow(r->len + n + 1, 4096, &r->cap, 1, text, size);
}

/* Appends s[0..n) (JSON text) without the white space between its
 * tokens: the compact form jansson writes. 0 or -1. */
static int put_compact(tg__reqtext *r, const char *s, size_t n)
{
    if (reserve(r, n) != 0)
        return -1;
    char *o = r->text + r->len;
    size_t i = 0;
    while (i < n) {
        char c = s[i];
        if (c == '"') { /* a string, as it is */
            size_t e = tg__json_string_end(s, n, i);
            if (e == 0)
                e = n;
            memcpy(o, s + i, e - i);
            o += e - i;
            i = e;
            continue;
        }
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
            *o++ = c;
        i++;
    }
    r->len = (size_t)(o - r->text);
    return 0;
}

/* Appends one item of text s[0..n) to list (a placeholder) and to r. */
static int add_item(tg__reqtext *r, json_t *list, const char *s, size_t n)
{
    size_t before = r->len;
    json_t *ph = json_object(); /* new ref: stands for the text */
    if (ph == NULL || grow_items(r, r->n + 1) != 0 ||
        (r->n > 0 && put(",", 1, r) != 0) || put_compact(r, s, n) != 0 ||
        json_array_append(list, ph) != 0) {
        r->len = before;
        json_decref(ph);
        return TG_ENOMEM;
    }
    r->items[r->n] = ph; /* the list's reference and this one */
    r->ends[r->n] = r->len;
    r->lazy[r->n] = 1;
    r->n++;
    return 0;
}

int tg__reqtext_add(tg__reqtext *r, json_t *list, const char *text, size_t len,
                    tg_error *err)
{
    if (sync_list(r, list) != 0) {
        drop_partial(r);
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    }
    size_t i = tg__json_ws(text, len, 0);
    int array = i < len && text[i] == '[';
    if (array)
        i = tg__json_ws(text, len, i + 1);
    if (array && i < len && text[i] == ']') {
        i = tg__json_ws(text, len, i + 1); /* [] */
    } else {
        for (;;) {
            size_t end = i < len ? tg__json_value_end(text, len, i) : 0;
            if (end <= i)
                break;
            if (add_item(r, list, text + i, end - i) != 0)
                return tg__loop_fail(err, TG_ENOMEM, "out of memory");
            i = tg__json_ws(text, len, end);
            if (!array)
                break;
            if (i < len && text[i] == ',') {
                i = tg__json_ws(text, len, i + 1);
                continue;
            }
            if (i < len && text[i] == ']')
                i = tg__json_ws(text, len, i + 1);
            else
                i = len + 1; /* not closed */
            break;
        }
    }
    if (i != len)
        return tg__loop_fail(err, TG_EINTERNAL,
                             "items to add are not one JSON value");
    return 0;
}

json_t *tg__reqtext_resolved(const tg__reqtext *r, const json_t *conv,
                             const char *list_key)
{
    size_t lazy = 0;
    for (size_t i = 0; i < r->n; i++)
        lazy += r->lazy[i];
    if (lazy == 0)
        return json_incref((json_t *)conv);
    const json_t *list = json_object_get(conv, list_key); /* borrowed */
    json_t *copy = json_copy((json_t *)conv);             /* new ref */
    json_t *items = json_array();                         /* new ref */
    int bad = copy == NULL || items == NULL;
    for (size_t i = 0; !bad && i < json_array_size(list); i++) {
        json_t *item = json_array_get(list, i); /* borrowed */
        if (i < r->n && r->lazy[i] && r->items[i] == item) {
            size_t at = i == 0 ? 0 : r->ends[i - 1] + 1;
            json_t *v = json_loadb(r->text + at, r->ends[i] - at,
                                   JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
            bad = json_array_append_new(items, v) != 0;
        } else {
            bad = json_array_append(items, item) != 0;
        }
    }
    if (bad) {
        json_decref(items);
        json_decref(copy);
        return NULL;
    }
    /* json_object_set_new takes items, also when it fails */
    if (json_object_set_new(copy, list_key, items) != 0) {
        json_decref(copy);
        return NULL;
    }
    return copy;
}
