/* SPDX-License-Identifier: MIT */
/*
 * conversation.c - the pieces every model client shares: the provider
 * table's lookup, URLs and headers, the text of an answer, the tool
 * results joining the conversation, and the provider's message in an
 * error answer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop_int.h"

int tg__loop_fail(tg_error *err, int code, const char *fmt, ...)
{
    if (err == NULL)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->code = code;
    err->pointer[0] = '\0';
    err->line = err->column = 0;
    return code;
}

int tg__conv_start(json_t *conv, const char *list_key, const char *system_key,
                   const char *system, const char *prompt, tg_error *err)
{
    json_t *list = json_array(); /* new ref */
    if (list == NULL || json_object_set_new(conv, list_key, list) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    if (system != NULL &&
        json_object_set_new(conv, system_key, json_string(system)) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    if (json_array_append_new(list, json_pack("{s:s, s:s}", "role", "user",
                                              "content", prompt)) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    return 0;
}

const tg__provider *tg__provider_find(const char *name)
{
    static const tg__provider *const all[] = {
        &tg__provider_openai_chat, &tg__provider_openai_responses,
        &tg__provider_anthropic, &tg__provider_gemini};
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

char *tg__url_join(const char *base_url, const char *tail)
{
    size_t n = strlen(base_url);
    while (n > 0 && base_url[n - 1] == '/')
        n--;
    size_t t = strlen(tail);
    char *s = malloc(n + t + 1);
    if (s == NULL)
        return NULL;
    memcpy(s, base_url, n);
    memcpy(s + n, tail, t + 1);
    return s;
}

int tg__header_add(struct curl_slist **headers, const char *name,
                   const char *value, tg_error *err)
{
    size_t n = strlen(name) + strlen(value) + 3;
    char *line = malloc(n);
    if (line == NULL)
        goto fail;
    snprintf(line, n, "%s: %s", name, value);
    struct curl_slist *h = curl_slist_append(*headers, line);
    /* The line may hold an API key: wipe our copy (curl keeps its own). */
    memset(line, 0, n);
    free(line);
    if (h == NULL)
        goto fail;
    *headers = h;
    return 0;
fail:
    return tg__loop_fail(err, TG_ENOMEM, "out of memory adding header %s",
                         name);
}

int tg__text_append(char **text, const json_t *array, const char *type,
                    const char *key)
{
    size_t i;
    const json_t *item; /* borrowed */
    size_t have = *text != NULL ? strlen(*text) : 0;
    if (*text == NULL) {
        *text = calloc(1, 1);
        if (*text == NULL)
            return TG_ENOMEM;
    }
    if (!json_is_array(array))
        return 0;
    json_array_foreach(array, i, item)
    {
        if (type != NULL &&
            !json_is_string(json_object_get(item, "type"))) /* borrowed */
            continue;
        if (type != NULL &&
            strcmp(json_string_value(json_object_get(item, "type")), type))
            continue;
        if (json_is_true(json_object_get(item, "thought")))
            continue;
        const json_t *t = json_object_get(item, key); /* borrowed */
        if (!json_is_string(t))
            continue;
        size_t n = json_string_length(t);
        char *grown = realloc(*text, have + n + 1);
        if (grown == NULL)
            return TG_ENOMEM;
        memcpy(grown + have, json_string_value(t), n);
        have += n;
        grown[have] = '\0';
        *text = grown;
    }
    return 0;
}

json_t *tg__loop_args_value(const tg_call *call)
{
    const char *a = tg_call_args_json(call);
    json_t *v = a != NULL ? json_loads(a, 0, NULL) : NULL; /* new ref */
    if (!json_is_object(v)) {
        json_decref(v);
        v = json_object();
    }
    return v;
}

const char *tg__loop_args_text(const tg_call *call)
{
    if (tg_call_args_raw(call) != NULL)
        return tg_call_args_raw(call);
    return tg_call_args_json(call) != NULL ? tg_call_args_json(call) : "{}";
}

int tg__results_merge(json_t **acc, const char *json, tg_error *err)
{
    json_error_t jerr;
    json_t *v = json_loads(json, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
                           &jerr); /* new ref */
    if (v == NULL)
        return tg__loop_fail(err, TG_EPARSE,
                             "the tool results are not JSON: %s (line %d)",
                             jerr.text, jerr.line);
    int rc = 0;
    if (!json_is_array(v) && !json_is_object(v)) {
        rc = tg__loop_fail(err, TG_EFORMAT,
                           "the tool results are neither an array of "
                           "messages nor one message");
    } else if (*acc == NULL) {
        *acc = v;
        return 0;
    } else if (json_is_array(v) && json_is_array(*acc)) {
        rc = json_array_extend(*acc, v) != 0 ? TG_ENOMEM : 0;
    } else if (json_is_object(v) && json_is_object(*acc)) {
        const char *key =
            json_is_array(json_object_get(v, "parts")) ? "parts" : "content";
        json_t *mine = json_object_get(*acc, key); /* borrowed */
        json_t *theirs = json_object_get(v, key);  /* borrowed */
        if (!json_is_array(mine) || !json_is_array(theirs))
            rc = tg__loop_fail(err, TG_EFORMAT,
                               "two result messages without a \"%s\" "
                               "array cannot be joined",
                               key);
        else
            rc = json_array_extend(mine, theirs) != 0 ? TG_ENOMEM : 0;
    } else {
        rc = tg__loop_fail(err, TG_EFORMAT,
                           "results of one turn came as an array and as a "
                           "message");
    }
    json_decref(v);
    if (rc == TG_ENOMEM)
        tg__loop_fail(err, rc, "out of memory joining the tool results");
    return rc;
}

int tg__conv_add(json_t *list, json_t *acc, tg_error *err)
{
    int bad = json_is_array(acc) ? json_array_extend(list, acc)
                                 : json_array_append(list, acc);
    return bad ? tg__loop_fail(err, TG_ENOMEM,
                               "out of memory adding the tool results")
               : 0;
}

int tg__conv_add_results(json_t *list, const char *json, tg_error *err)
{
    json_t *acc = NULL;
    int rc = tg__results_merge(&acc, json, err);
    if (rc == 0)
        rc = tg__conv_add(list, acc, err);
    json_decref(acc);
    return rc;
}

void tg__provider_error(const char *body, size_t len, char *buf, size_t n)
{
    json_t *v = json_loadb(body != NULL ? body : "", body != NULL ? len : 0, 0,
                           NULL);                    /* new ref */
    const json_t *e = json_object_get(v, "error");   /* borrowed */
    const json_t *m = json_object_get(e, "message"); /* borrowed */
    if (!json_is_string(m))
        m = json_is_string(e) ? e : json_object_get(v, "message");
    if (json_is_string(m)) {
        snprintf(buf, n, "%s", json_string_value(m));
    } else {
        size_t k = body != NULL ? len : 0;
        if (k > 300)
            k = 300;
        if (k == 0)
            snprintf(buf, n, "(empty body)");
        else
            snprintf(buf, n, "%.*s", (int)k, body);
    }
    json_decref(v);
    /* Whatever the server sent is shown on a terminal by the CLI: keep it
     * one line of printable bytes. */
    for (char *p = buf; *p != '\0'; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
}
