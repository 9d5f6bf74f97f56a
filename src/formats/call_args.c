/* SPDX-License-Identifier: MIT */
/*
 * call_args.c - the argument setters of calls.h that the providers' call
 * builders share: arguments sent as one JSON value, a string of JSON text
 * (the OpenAI formats) or an object (Anthropic, Gemini).
 */
#include "calls.h"

int tg__args_from_string_value(tg_call *call, const void *value)
{
    return tg__call_set_args_value(call, value);
}

int tg__args_from_object_value(tg_call *call, const void *value)
{
    const json_t *v = value; /* borrowed */
    /* A string is not an object here: the setter says so. */
    if (json_is_string(v))
        return tg__call_set_args(call, (json_t *)v);
    return tg__call_set_args_value(call, v);
}
