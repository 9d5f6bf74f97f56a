/* SPDX-License-Identifier: MIT */
/*
 * client_gemini.c - Gemini as a model API (POST
 * BASE/v1beta/models/MODEL:generateContent, x-goog-api-key header). The
 * system prompt is "systemInstruction"; the conversation "contents": the
 * user prompt, each model content as the model sent it (text,
 * functionCall parts, thought signatures kept), and the user content of
 * functionResponse parts that answers it. The tools go as one Tool
 * object of functionDeclarations.
 */
#include <stdlib.h>
#include <string.h>

#include "loop_int.h"

static int start(json_t *conv, const char *system, const char *prompt,
                 tg_error *err)
{
    json_t *contents = json_array(); /* new ref */
    if (contents == NULL ||
        json_object_set_new(conv, "contents", contents) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    if (system != NULL && json_object_set_new(conv, "systemInstruction",
                                              json_pack("{s:[{s:s}]}", "parts",
                                                        "text", system)) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    if (json_array_append_new(contents,
                              json_pack("{s:s, s:[{s:s}]}", "role", "user",
                                        "parts", "text", prompt)) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    return 0;
}

static char *url(const char *base_url, const char *model, int stream)
{
    static const char head[] = "/v1beta/models/";
    const char *tail =
        stream ? ":streamGenerateContent?alt=sse" : ":generateContent";
    size_t n = strlen(model);
    size_t t = strlen(tail);
    char *path = malloc(sizeof head + n + t);
    if (path == NULL)
        return NULL;
    memcpy(path, head, sizeof head - 1);
    memcpy(path + sizeof head - 1, model, n);
    memcpy(path + sizeof head - 1 + n, tail, t + 1);
    char *u = tg__url_join(base_url, path);
    free(path);
    return u;
}

static int headers(struct curl_slist **h, const char *key, tg_error *err)
{
    int rc = tg__header_add(h, "Content-Type", "application/json", err);
    if (rc == 0 && key != NULL && key[0] != '\0')
        rc = tg__header_add(h, "x-goog-api-key", key, err);
    return rc;
}

static int request(const json_t *conv, const json_t *tools, const char *model,
                   int max_tokens, json_t **out, tg_error *err)
{
    /* A shallow copy: the request shares the conversation's messages and
     * the tool definitions (it is serialized, never changed below its own
     * members), so a request costs no copy of a conversation that grows. */
    json_t *body = json_copy((json_t *)conv); /* new ref */
    if (body == NULL)
        goto fail;
    /* tg_runtime_tools renders gemini as one Tool object. */
    const json_t *decl =
        json_object_get(tools, "functionDeclarations"); /* borrowed */
    if (json_array_size(decl) > 0 &&
        json_object_set_new(body, "tools", json_pack("[O]", (json_t *)tools)) !=
            0)
        goto fail;
    *out = body;
    return 0;
fail:
    json_decref(body);
    return tg__loop_fail(err, TG_ENOMEM, "out of memory building a request");
}

static int answer(json_t *list, const json_t *resp, char **text, tg_error *err)
{
    const json_t *cand =
        json_array_get(json_object_get(resp, "candidates"), 0); /* borrowed */
    const json_t *content = json_object_get(cand, "content");   /* borrowed */
    if (!json_is_object(content))
        return tg__loop_fail(err, TG_EFORMAT,
                             "the response has no candidates[0].content");
    json_t *c = json_deep_copy(content); /* new ref */
    if (c == NULL || json_object_set_new(c, "role", json_string("model"))) {
        json_decref(c);
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    }
    if (json_array_append_new(list, c) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    *text = NULL;
    if (tg__text_append(text, json_object_get(content, "parts"), NULL,
                        "text") != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    return 0;
}

/* Each event is a GenerateContentResponse: its parts are kept (the turn
 * is their sum, thought signatures included), their text is the delta. */
static const char *stream_event(const json_t *ev, json_t **extra)
{
    const json_t *parts = json_object_get(
        json_object_get(json_array_get(json_object_get(ev, "candidates"), 0),
                        "content"),
        "parts"); /* borrowed */
    if (!json_is_array(parts))
        return NULL;
    if (*extra == NULL)
        *extra = json_array(); /* new ref */
    const char *text = NULL;
    size_t i;
    json_t *part; /* borrowed */
    json_array_foreach(parts, i, part)
    {
        if (*extra != NULL)
            json_array_append(*extra, part);
        const json_t *t = json_object_get(part, "text"); /* borrowed */
        if (json_is_string(t) &&
            !json_is_true(json_object_get(part, "thought")))
            text = json_string_value(t); /* one text part per event */
    }
    return text;
}

static int stream_answer(json_t *list, const char *text, const tg_turn *turn,
                         const json_t *extra, tg_error *err)
{
    json_t *parts =
        extra != NULL ? json_deep_copy(extra) : json_array(); /* new ref */
    if (parts == NULL ||
        json_array_append_new(list, json_pack("{s:s, s:o}", "role", "model",
                                              "parts", parts)) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    return 0;
}

const tg__provider tg__provider_gemini = {
    .name = "gemini",
    .format = "gemini",
    .list_key = "contents",
    .key_env = "GEMINI_API_KEY",
    .start = start,
    .url = url,
    .headers = headers,
    .request = request,
    .answer = answer,
    .stream_event = stream_event,
    .stream_answer = stream_answer,
};
