/* SPDX-License-Identifier: MIT */
/*
 * client_openai.c - OpenAI Chat Completions as a model API (POST
 * BASE/chat/completions, Authorization: Bearer KEY), the API every
 * compatible server speaks (vLLM, llama.cpp's server, Ollama,
 * OpenRouter). The conversation is "messages": the system prompt first,
 * then the user prompt, then each assistant message as the model sent it
 * and its "tool" messages.
 */
#include <stdlib.h>
#include <string.h>

#include "loop_int.h"

static int start(json_t *conv, const char *system, const char *prompt,
                 tg_error *err)
{
    json_t *msgs = json_array(); /* new ref */
    if (msgs == NULL || json_object_set_new(conv, "messages", msgs) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    if (system != NULL &&
        json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "system",
                                              "content", system)) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    if (json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "user",
                                              "content", prompt)) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    return 0;
}

static char *url(const char *base_url, const char *model, int stream)
{
    return tg__url_join(base_url, "/chat/completions");
}

/* Bearer authentication, shared with the Responses API's client. */
static int headers(struct curl_slist **h, const char *key, tg_error *err)
{
    int rc = tg__header_add(h, "Content-Type", "application/json", err);
    if (rc == 0 && key != NULL && key[0] != '\0') {
        size_t n = strlen(key) + 8;
        char *v = malloc(n);
        if (v == NULL)
            return tg__loop_fail(err, TG_ENOMEM, "out of memory");
        memcpy(v, "Bearer ", 7);
        memcpy(v + 7, key, n - 7);
        rc = tg__header_add(h, "Authorization", v, err);
        memset(v, 0, n);
        free(v);
    }
    return rc;
}

static int request(const json_t *conv, const json_t *tools, const char *model,
                   int max_tokens, json_t **out, tg_error *err)
{
    /* A shallow copy: the request shares the conversation's messages and
     * the tool definitions (it is serialized, never changed below its own
     * members), so a request costs no copy of a conversation that grows. */
    json_t *body = json_copy((json_t *)conv); /* new ref */
    if (body == NULL || json_object_set_new(body, "model", json_string(model)))
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
    const json_t *choice =
        json_array_get(json_object_get(resp, "choices"), 0); /* borrowed */
    json_t *msg = json_object_get(choice, "message");        /* borrowed */
    if (!json_is_object(msg))
        return tg__loop_fail(err, TG_EFORMAT,
                             "the response has no choices[0].message");
    if (json_array_append(list, msg) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    const json_t *content = json_object_get(msg, "content"); /* borrowed */
    *text = strdup(json_is_string(content) ? json_string_value(content) : "");
    return *text != NULL ? 0 : tg__loop_fail(err, TG_ENOMEM, "out of memory");
}

/* chat.completion.chunk: choices[0].delta.content. */
static const char *stream_event(const json_t *ev, json_t **extra)
{
    const json_t *delta = json_object_get(
        json_array_get(json_object_get(ev, "choices"), 0), "delta");
    const json_t *c = json_object_get(delta, "content"); /* borrowed */
    return json_is_string(c) ? json_string_value(c) : NULL;
}

static int stream_answer(json_t *list, const char *text, const tg_turn *turn,
                         const json_t *extra, tg_error *err)
{
    json_t *msg = json_pack("{s:s, s:o}", "role", "assistant", "content",
                            text[0] != '\0' ? json_string(text)
                                            : json_null()); /* new ref */
    json_t *calls = json_array();                           /* new ref */
    for (size_t i = 0;
         msg != NULL && calls != NULL && i < tg_turn_call_count(turn); i++) {
        const tg_call *c = tg_turn_call(turn, i);
        if (json_array_append_new(
                calls, json_pack("{s:s, s:s, s:{s:s, s:s}}", "id",
                                 tg_call_id(c), "type", "function", "function",
                                 "name", tg_call_tool(c), "arguments",
                                 tg__loop_args_text(c))) != 0)
            goto fail;
    }
    if (msg == NULL || calls == NULL)
        goto fail;
    if (json_array_size(calls) > 0 &&
        json_object_set(msg, "tool_calls", calls) != 0)
        goto fail;
    json_decref(calls);
    if (json_array_append_new(list, msg) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    return 0;
fail:
    json_decref(calls);
    json_decref(msg);
    return tg__loop_fail(err, TG_ENOMEM, "out of memory");
}

const tg__provider tg__provider_openai_chat = {
    .name = "openai",
    .format = "openai-chat",
    .list_key = "messages",
    .key_env = "OPENAI_API_KEY",
    .start = start,
    .url = url,
    .headers = headers,
    .request = request,
    .answer = answer,
    .stream_event = stream_event,
    .stream_answer = stream_answer,
};

/* ------------------------------------------------- the Responses API */

/* OpenAI Responses (POST BASE/responses): the system prompt is
 * "instructions", the conversation "input": the user message, then every
 * output item of each response (messages, reasoning, function_call) and
 * the function_call_output items answering the calls. */

static int r_start(json_t *conv, const char *system, const char *prompt,
                   tg_error *err)
{
    return tg__conv_start(conv, "input", "instructions", system, prompt, err);
}

static char *r_url(const char *base_url, const char *model, int stream)
{
    return tg__url_join(base_url, "/responses");
}

static int r_answer(json_t *list, const json_t *resp, char **text,
                    tg_error *err)
{
    const json_t *output = json_object_get(resp, "output"); /* borrowed */
    if (!json_is_array(output))
        return tg__loop_fail(err, TG_EFORMAT, "the response has no output");
    size_t i;
    const json_t *item; /* borrowed */
    *text = NULL;
    json_array_foreach(output, i, item)
    {
        if (json_array_append_new(list, json_deep_copy(item)) != 0)
            return tg__loop_fail(err, TG_ENOMEM, "out of memory");
        const json_t *type = json_object_get(item, "type"); /* borrowed */
        if (json_is_string(type) &&
            strcmp(json_string_value(type), "message") == 0 &&
            tg__text_append(text, json_object_get(item, "content"),
                            "output_text", "text") != 0)
            return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    }
    if (*text == NULL && (*text = strdup("")) == NULL)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    return 0;
}

/* response.output_text.delta events carry the text; response.completed
 * the whole output, kept to stand for the turn. */
static const char *r_stream_event(const json_t *ev, json_t **extra)
{
    const json_t *type = json_object_get(ev, "type"); /* borrowed */
    if (!json_is_string(type))
        return NULL;
    const char *t = json_string_value(type);
    if (strcmp(t, "response.output_text.delta") == 0) {
        const json_t *d = json_object_get(ev, "delta"); /* borrowed */
        return json_is_string(d) ? json_string_value(d) : NULL;
    }
    if (strcmp(t, "response.completed") == 0) {
        json_t *out = json_object_get(json_object_get(ev, "response"),
                                      "output"); /* borrowed */
        if (json_is_array(out)) {
            json_decref(*extra);
            *extra = json_deep_copy(out); /* new ref */
        }
    }
    return NULL;
}

static int r_stream_answer(json_t *list, const char *text, const tg_turn *turn,
                           const json_t *extra, tg_error *err)
{
    if (json_array_size(extra) > 0) {
        if (json_array_extend(list, (json_t *)extra) != 0)
            return tg__loop_fail(err, TG_ENOMEM, "out of memory");
        return 0;
    }
    /* No response.completed: the items rebuilt from what streamed. */
    if (text[0] != '\0' &&
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:[{s:s, s:s}]}", "type", "message",
                            "role", "assistant", "content", "type",
                            "output_text", "text", text)) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    for (size_t i = 0; i < tg_turn_call_count(turn); i++) {
        const tg_call *c = tg_turn_call(turn, i);
        if (json_array_append_new(
                list,
                json_pack("{s:s, s:s, s:s, s:s}", "type", "function_call",
                          "call_id", tg_call_id(c), "name", tg_call_tool(c),
                          "arguments", tg__loop_args_text(c))) != 0)
            return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    }
    return 0;
}

const tg__provider tg__provider_openai_responses = {
    .name = "openai-responses",
    .format = "openai-responses",
    .list_key = "input",
    .key_env = "OPENAI_API_KEY",
    .start = r_start,
    .url = r_url,
    .headers = headers,
    .request = request,
    .answer = r_answer,
    .stream_event = r_stream_event,
    .stream_answer = r_stream_answer,
};
