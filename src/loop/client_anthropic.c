/* SPDX-License-Identifier: MIT */
/*
 * client_anthropic.c - Anthropic Messages as a model API (POST
 * BASE/v1/messages, x-api-key and anthropic-version headers). The system
 * prompt is "system"; the conversation "messages": the user prompt, each
 * assistant message's content blocks as the model sent them (text,
 * thinking, tool_use), and the user message of tool_result blocks that
 * answers them.
 */
#include <stdlib.h>
#include <string.h>

#include "loop_int.h"

#define ANTHROPIC_VERSION "2023-06-01"

static int start(json_t *conv, const char *system, const char *prompt,
                 tg_error *err)
{
    return tg__conv_start(conv, "messages", "system", system, prompt, err);
}

static char *url(const char *base_url, const char *model, int stream)
{
    return tg__url_join(base_url, "/v1/messages");
}

static int headers(struct curl_slist **h, const char *key, tg_error *err)
{
    int rc = tg__header_add(h, "Content-Type", "application/json", err);
    if (rc == 0)
        rc = tg__header_add(h, "anthropic-version", ANTHROPIC_VERSION, err);
    if (rc == 0 && key != NULL && key[0] != '\0')
        rc = tg__header_add(h, "x-api-key", key, err);
    return rc;
}

static int request(const json_t *conv, const json_t *tools, const char *model,
                   int max_tokens, json_t **out, tg_error *err)
{
    /* A shallow copy: the request shares the conversation's messages and
     * the tool definitions (it is serialized, never changed below its own
     * members), so a request costs no copy of a conversation that grows. */
    json_t *body = json_copy((json_t *)conv); /* new ref */
    if (body == NULL ||
        json_object_set_new(body, "model", json_string(model)) != 0 ||
        json_object_set_new(body, "max_tokens",
                            json_integer(max_tokens > 0 ? max_tokens : 4096)))
        goto fail;
    if (json_array_size(tools) > 0 &&
        json_object_set(body, "tools", (json_t *)tools) != 0)
        goto fail;
    *out = body;
    return 0;
fail:
    json_decref(body);
    return tg__loop_fail(err, TG_ENOMEM, "out of memory building a request");
}

static int answer(json_t *list, const json_t *resp, char **text, tg_error *err)
{
    json_t *content = json_object_get(resp, "content"); /* borrowed */
    if (!json_is_array(content))
        return tg__loop_fail(err, TG_EFORMAT, "the response has no content");
    if (json_array_append_new(list, json_pack("{s:s, s:O}", "role", "assistant",
                                              "content", content)) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    *text = NULL;
    if (tg__text_append(text, content, "text", "text") != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    return 0;
}

/* The block of `extra` (the thinking blocks so far) streamed at `index`
 * (borrowed), or NULL. */
static json_t *block_at(json_t *extra, const json_t *index)
{
    size_t i;
    json_t *b;
    json_array_foreach(extra, i, b)
    {
        if (json_equal(json_object_get(b, "_index"), index))
            return b;
    }
    return NULL;
}

/* Keeps the thinking of a streamed answer in *extra (an array of blocks,
 * each with its stream "_index"): thinking blocks (their thinking_delta
 * text and signature_delta) and redacted_thinking blocks, which the API
 * wants back, unchanged and first, in the assistant turn of a tool use. */
static void keep_thinking(const json_t *ev, json_t **extra)
{
    const char *type = json_string_value(json_object_get(ev, "type"));
    const json_t *index = json_object_get(ev, "index"); /* borrowed */
    if (type == NULL || index == NULL)
        return;
    if (strcmp(type, "content_block_start") == 0) {
        const json_t *b = json_object_get(ev, "content_block"); /* borrowed */
        const char *bt = json_string_value(json_object_get(b, "type"));
        if (bt == NULL || (strcmp(bt, "thinking") != 0 &&
                           strcmp(bt, "redacted_thinking") != 0))
            return;
        if (*extra == NULL && (*extra = json_array()) == NULL)
            return;
        json_t *copy = json_deep_copy(b); /* new ref */
        if (copy != NULL)
            json_object_set(copy, "_index", (json_t *)index);
        json_array_append_new(*extra, copy);
        return;
    }
    json_t *b = strcmp(type, "content_block_delta") == 0
                    ? block_at(*extra, index)
                    : NULL; /* borrowed */
    const json_t *d = json_object_get(ev, "delta");
    const char *dt = json_string_value(json_object_get(d, "type"));
    if (b == NULL || dt == NULL)
        return;
    if (strcmp(dt, "thinking_delta") == 0) {
        const char *had = json_string_value(json_object_get(b, "thinking"));
        const char *more = json_string_value(json_object_get(d, "thinking"));
        size_t n1 = had ? strlen(had) : 0, n2 = more ? strlen(more) : 0;
        char *joined = malloc(n1 + n2 + 1);
        if (joined == NULL)
            return;
        memcpy(joined, had ? had : "", n1);
        memcpy(joined + n1, more ? more : "", n2 + 1);
        json_object_set_new(b, "thinking", json_string(joined));
        free(joined);
    } else if (strcmp(dt, "signature_delta") == 0) {
        json_object_set(b, "signature", json_object_get(d, "signature"));
    }
}

/* content_block_delta events of type text_delta carry the text; the
 * thinking is kept for the turn. */
static const char *stream_event(const json_t *ev, json_t **extra)
{
    keep_thinking(ev, extra);
    const json_t *d = json_object_get(ev, "delta");  /* borrowed */
    const json_t *type = json_object_get(d, "type"); /* borrowed */
    const json_t *t = json_object_get(d, "text");    /* borrowed */
    if (json_is_string(type) &&
        strcmp(json_string_value(type), "text_delta") == 0 && json_is_string(t))
        return json_string_value(t);
    return NULL;
}

static int stream_answer(json_t *list, const char *text, const tg_turn *turn,
                         const json_t *extra, tg_error *err)
{
    json_t *content = json_array(); /* new ref */
    if (content == NULL)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    int bad = 0;
    size_t i;
    const json_t *b;
    json_array_foreach(extra, i, b)
    {
        json_t *copy = json_deep_copy(b); /* new ref */
        bad |= copy == NULL || json_object_del(copy, "_index") != 0 ||
               json_array_append_new(content, copy) != 0;
    }
    bad = bad || (text[0] != '\0' &&
                  json_array_append_new(content,
                                        json_pack("{s:s, s:s}", "type", "text",
                                                  "text", text)) != 0);
    for (i = 0; !bad && i < tg_turn_call_count(turn); i++) {
        const tg_call *c = tg_turn_call(turn, i);
        bad =
            json_array_append_new(
                content, json_pack("{s:s, s:s, s:s, s:o}", "type", "tool_use",
                                   "id", tg_call_id(c), "name", tg_call_tool(c),
                                   "input", tg__loop_args_value(c))) != 0;
    }
    if (bad) {
        json_decref(content);
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    }
    if (json_array_append_new(list, json_pack("{s:s, s:o}", "role", "assistant",
                                              "content", content)) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    return 0;
}

const tg__provider tg__provider_anthropic = {
    .name = "anthropic",
    .format = "anthropic",
    .list_key = "messages",
    .key_env = "ANTHROPIC_API_KEY",
    .start = start,
    .url = url,
    .headers = headers,
    .request = request,
    .answer = answer,
    .stream_event = stream_event,
    .stream_answer = stream_answer,
};
