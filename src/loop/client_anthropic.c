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
    json_t *body = json_deep_copy(conv); /* new ref */
    if (body == NULL ||
        json_object_set_new(body, "model", json_string(model)) != 0 ||
        json_object_set_new(body, "max_tokens",
                            json_integer(max_tokens > 0 ? max_tokens : 4096)))
        goto fail;
    if (json_array_size(tools) > 0 &&
        json_object_set_new(body, "tools", json_deep_copy(tools)) != 0)
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

/* content_block_delta events of type text_delta carry the text. */
static const char *stream_event(const json_t *ev, json_t **extra)
{
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
    int bad =
        text[0] != '\0' &&
        json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text",
                                                 "text", text)) != 0;
    for (size_t i = 0; !bad && i < tg_turn_call_count(turn); i++) {
        const tg_call *c = tg_turn_call(turn, i);
        bad =
            json_array_append_new(
                content, json_pack("{s:s, s:s, s:s, s:o}", "type", "tool_use",
                                   "id", tg_call_id(c), "name", tg_call_tool(c),
                                   "input", tg__loop_args_value(c))) != 0;
    }
    if (bad ||
        json_array_append_new(list, json_pack("{s:s, s:o}", "role", "assistant",
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
