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
 * from the first item that differs.
 */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
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
    free(r->text);
    free(r->frame);
    free(r->tools_text);
    memset(r, 0, sizeof *r);
}

/* After running out of memory: what was kept may be half an item, so it
 * all goes but the tools' text (made once, when the loop started). */
static void start_afresh(tg__reqtext *r)
{
    char *tools = r->tools_text;
    const json_t *mark = r->tools_mark;
    r->tools_text = NULL;
    tg__reqtext_cleanup(r);
    r->tools_text = tools;
    r->tools_mark = mark;
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
    void *const arrays[] = {&r->items, &r->ends};
    const size_t sizes[] = {sizeof *r->items, sizeof *r->ends};
    if (tg__grow(size, 16, &r->items_cap, 2, arrays, sizes) != 0)
        return TG_ENOMEM;
    for (size_t i = keep; i < size; i++) {
        json_t *item = json_array_get(list, i); /* borrowed */
        if ((i > 0 && put(",", 1, r) != 0) ||
            json_dump_callback(item, put, r, JSON_COMPACT | JSON_ENCODE_ANY) !=
                0)
            return TG_ENOMEM;
        r->items[i] = json_incref(item);
        r->ends[i] = r->len;
        r->n = i + 1;
    }
    return 0;
}

int tg__reqtext_items(tg__reqtext *r, const json_t *list, size_t from,
                      const char **text, size_t *len)
{
    if (sync_list(r, list) != 0) {
        start_afresh(r);
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
        start_afresh(r);
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
