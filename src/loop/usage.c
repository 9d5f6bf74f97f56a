/* SPDX-License-Identifier: MIT */
/*
 * usage.c - the tokens a model answer cost, as each provider reports them,
 * whole or streamed: OpenAI Chat Completions' usage (the last chunk of a
 * stream, asked for with stream_options.include_usage), the Responses
 * API's usage (the response.completed event's response), Anthropic's
 * usage (input in message_start, output counted up in message_delta),
 * Gemini's usageMetadata (in every chunk, counted up). Counts only grow,
 * so the largest seen of each is the answer's.
 */
#include "loop_int.h"

static void keep_max(long *have, const json_t *v)
{
    if (json_is_integer(v) && json_integer_value(v) > *have)
        *have = (long)json_integer_value(v);
}

void tg__usage_update(tg__usage *u, const json_t *obj)
{
    const json_t *x = json_object_get(obj, "usage"); /* borrowed */
    if (!json_is_object(x))
        x = json_object_get(json_object_get(obj, "response"), "usage");
    if (!json_is_object(x))
        x = json_object_get(json_object_get(obj, "message"), "usage");
    if (!json_is_object(x))
        x = json_object_get(obj, "usageMetadata");
    if (!json_is_object(x))
        return;
    keep_max(&u->total, json_object_get(x, "total_tokens"));
    keep_max(&u->total, json_object_get(x, "totalTokenCount"));
    keep_max(&u->input, json_object_get(x, "prompt_tokens"));
    keep_max(&u->input, json_object_get(x, "input_tokens"));
    keep_max(&u->input, json_object_get(x, "promptTokenCount"));
    keep_max(&u->output, json_object_get(x, "completion_tokens"));
    keep_max(&u->output, json_object_get(x, "output_tokens"));
    keep_max(&u->output, json_object_get(x, "candidatesTokenCount"));
}

long tg__usage_tokens(const tg__usage *u)
{
    long sum = u->input + u->output;
    return u->total > sum ? u->total : sum;
}
