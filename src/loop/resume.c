/* SPDX-License-Identifier: MIT */
/*
 * resume.c - a loop made again from the journal (tg_loop_resume,
 * tg_loop_show): the conversation is its start (the journaled settings
 * and prompt) and the items every recorded step added. An iteration whose
 * answer was recorded but not its results was cut short while its calls
 * ran; its calls are submitted again, one turn each, in the iteration's
 * caller scope, so the journal answers every call that ran (a call the
 * dead process left running ended INTERRUPTED, execution started, and the
 * model decides) and only calls that never started run now: at most once.
 * A tool marked idempotent (its idempotentHint annotation: the config's,
 * or a trusted MCP source's) is run again instead of answered
 * INTERRUPTED, in a caller scope of its own ("<scope>/rerun<k>").
 *
 * A streamed answer starts its calls before it is complete, so it can die
 * before its answer is recorded: the calls the journal holds under the
 * next iteration's scope then make the answer (their ids, tools and
 * arguments; the text is lost), and the iteration goes on as above.
 */
#include <stdio.h>
#include <string.h>

#include "loop_int.h"

#define HISTORY_MAX 10000

/* The journal's records of the calls in caller scope `scope`, oldest first
 * (a new ref array in *out). */
static int scope_records(const char *journal, const char *scope, json_t **out,
                         tg_error *err)
{
    char *text = NULL;
    tg_history_query q = {.caller = scope, .limit = HISTORY_MAX};
    int rc = tg_journal_history(journal, &q, &text, err);
    if (rc != 0)
        return rc;
    json_t *newest = json_loads(text, 0, NULL); /* new ref */
    tg_free(text);
    json_t *list = json_array(); /* new ref */
    if (!json_is_array(newest) || list == NULL) {
        json_decref(newest);
        json_decref(list);
        return tg__loop_fail(err, TG_EINTERNAL,
                             "the journal's history is not a JSON array");
    }
    for (size_t i = json_array_size(newest); i-- > 0;)
        if (json_array_append(list, json_array_get(newest, i)) != 0) {
            json_decref(newest);
            json_decref(list);
            return tg__loop_fail(err, TG_ENOMEM, "out of memory");
        }
    json_decref(newest);
    *out = list;
    return 0;
}

/* The error code of the result in record `rec` (borrowed), or NULL. */
static const char *record_code(const json_t *rec)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(rec, "payload"), "error"), "code"));
}

/* The record of call `id` among `records` (borrowed), or NULL. */
static const json_t *record_of(const json_t *records, const char *id)
{
    size_t i;
    json_t *rec;
    json_array_foreach(records, i, rec)
    {
        const char *rid = json_string_value(
            json_object_get(json_object_get(rec, "call"), "id"));
        if (rid != NULL && strcmp(rid, id) == 0)
            return rec;
    }
    return NULL;
}

/* The names of the runtime's tools marked idempotent (new ref object, names
 * as keys). */
static int idempotent_tools(tg_loop *l, tg_error *err)
{
    char *text = NULL;
    int rc = tg_runtime_tools(l->rt, "mcp", &text, err);
    if (rc != 0)
        return rc;
    json_t *defs = json_loads(text, 0, NULL); /* new ref */
    tg_free(text);
    json_t *tools = json_is_array(defs) ? defs : json_object_get(defs, "tools");
    l->idempotent = json_object(); /* new ref */
    if (l->idempotent == NULL) {
        json_decref(defs);
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    }
    size_t i;
    json_t *t;
    json_array_foreach(tools, i, t)
    {
        const char *name = json_string_value(json_object_get(t, "name"));
        if (name != NULL &&
            json_is_true(json_object_get(json_object_get(t, "annotations"),
                                         "idempotentHint")))
            json_object_set_new(l->idempotent, name, json_true());
    }
    json_decref(defs);
    return 0;
}

/* The answer items of the iteration that awaits its results, as a whole
 * answer of the provider's format that tg_turn_parse reads (malloc'd
 * text). */
static char *answer_as_response(const tg_loop *l, const json_t *items)
{
    json_t *resp = NULL; /* new ref */
    json_t *first = json_array_get(items, 0);
    if (strcmp(l->prov->format, "openai-chat") == 0)
        resp = json_pack("{s:[{s:O}]}", "choices", "message", first);
    else if (strcmp(l->prov->format, "openai-responses") == 0)
        resp = json_pack("{s:O}", "output", items);
    else if (strcmp(l->prov->format, "gemini") == 0)
        resp = json_pack("{s:[{s:O}]}", "candidates", "content", first);
    else
        resp = json_incref(first); /* Anthropic: the message is the answer */
    char *text = resp != NULL ? json_dumps(resp, JSON_COMPACT) : NULL;
    json_decref(resp);
    return text;
}

/* The caller scope a call of iteration `scope` runs in: the iteration's,
 * unless the journal answered it INTERRUPTED there and its tool is
 * idempotent: then the first "<scope>/rerun<k>" where it was not
 * interrupted (where it ran to its end, it is answered from there). */
static int call_scope(tg_loop *l, const char *journal, const char *scope,
                      const json_t *records, const tg_call *call, char *buf,
                      size_t n, tg_error *err)
{
    snprintf(buf, n, "%s", scope);
    const json_t *rec = record_of(records, tg_call_id(call));
    const char *code = rec != NULL ? record_code(rec) : NULL;
    if (code == NULL || strcmp(code, "INTERRUPTED") != 0 ||
        json_object_get(l->idempotent, tg_call_tool(call)) == NULL)
        return 0;
    for (int k = 1;; k++) {
        snprintf(buf, n, "%s/rerun%d", scope, k);
        json_t *again = NULL;
        int rc = scope_records(journal, buf, &again, err);
        if (rc != 0)
            return rc;
        const json_t *r = record_of(again, tg_call_id(call));
        const char *c = r != NULL ? record_code(r) : NULL;
        int interrupted = c != NULL && strcmp(c, "INTERRUPTED") == 0;
        json_decref(again);
        if (!interrupted)
            return 0;
    }
}

int tg__loop_run_pending(tg_loop *l, tg_error *err)
{
    const char *journal = tg_runtime_journal(l->rt);
    char scope[64], own[96];
    tg__loop_scope(l, l->iteration, scope, sizeof scope);
    tg_turn *whole = NULL, **turns = NULL;
    json_t *records = NULL;
    size_t ncalls = 0;
    char *text = answer_as_response(l, l->pending_answer);
    int rc = text != NULL ? 0 : tg__loop_fail(err, TG_ENOMEM, "out of memory");
    if (rc == 0)
        rc = tg_turn_parse(text, strlen(text), l->prov->format,
                           "the journaled answer", &whole, err);
    if (rc == 0 && journal != NULL)
        rc = scope_records(journal, scope, &records, err);
    if (rc != 0)
        goto out;
    ncalls = tg_turn_call_count(whole);
    if (ncalls == 0) {
        l->pending = 0;
        l->stop = TG_LOOP_ANSWERED;
        goto out;
    }
    if ((turns = calloc(ncalls, sizeof *turns)) == NULL) {
        rc = tg__loop_fail(err, TG_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; rc == 0 && i < ncalls; i++) {
        const tg_call *c = tg_turn_call(whole, i);
        const char *args = tg__loop_args_text(c);
        rc = tg_turn_new_call(l->prov->format, tg_call_id(c), tg_call_tool(c),
                              args, strlen(args), &turns[i], err);
        if (rc == 0)
            rc =
                call_scope(l, journal, scope, records, c, own, sizeof own, err);
        if (rc == 0)
            rc = tg__loop_submit(l, turns[i], own, err);
    }
    if (rc == 0)
        rc = tg__loop_finish_calls(l, turns, ncalls, ncalls, err);
out:
    if (rc != 0)
        (void)tg__runtime_drain(&l->http);
    for (size_t i = 0; turns != NULL && i < ncalls; i++)
        tg_turn_free(turns[i]);
    free(turns);
    tg_turn_free(whole);
    json_decref(records);
    free(text);
    return rc;
}

/* ------------------------------------------------------------- rebuild */

/* Adds the items of every step of `loop` (the store's object, borrowed) to
 * the conversation of l, and the counts and the answer they carry. */
static int apply_steps(tg_loop *l, const json_t *loop, tg_error *err)
{
    json_t *list = json_object_get(l->conv, l->prov->list_key); /* borrowed */
    size_t i;
    json_t *step;
    json_array_foreach(json_object_get(loop, "steps"), i, step)
    {
        const char *kind = json_string_value(json_object_get(step, "kind"));
        const json_t *body = json_object_get(step, "body");
        json_t *items = json_object_get(body, "items");
        if (kind == NULL || !json_is_array(items) ||
            json_array_extend(list, items) != 0)
            return tg__loop_fail(err, TG_EPARSE,
                                 "loop %s: step %zu of the journal is "
                                 "unreadable",
                                 l->id, i + 1);
        l->iteration =
            (int)json_integer_value(json_object_get(step, "iteration"));
        if (strcmp(kind, "answer") == 0) {
            const char *t = json_string_value(json_object_get(body, "text"));
            char *a = strdup(t != NULL ? t : "");
            if (a == NULL)
                return tg__loop_fail(err, TG_ENOMEM, "out of memory");
            free(l->answer);
            l->answer = a;
            json_decref(l->pending_answer);
            l->pending_answer = json_incref(items);
            l->pending = 1;
            l->tokens +=
                (long)json_integer_value(json_object_get(body, "tokens"));
        } else if (strcmp(kind, "results") == 0) {
            l->tool_calls +=
                (long)json_integer_value(json_object_get(body, "calls"));
            l->pending = 0;
        }
    }
    return 0;
}

/* A streamed iteration that died before its answer was recorded: the calls
 * the journal holds under its scope make the answer, recorded now. */
static int answer_from_calls(tg_loop *l, tg_error *err)
{
    const char *journal = tg_runtime_journal(l->rt);
    char scope[64];
    tg__loop_scope(l, l->iteration + 1, scope, sizeof scope);
    json_t *records = NULL, *calls = NULL, *resp = NULL; /* new refs */
    char *text = NULL;
    tg_turn *turn = NULL;
    int rc = scope_records(journal, scope, &records, err);
    if (rc != 0 || json_array_size(records) == 0)
        goto out;
    calls = json_array();
    size_t i;
    json_t *rec;
    json_array_foreach(records, i, rec)
    {
        const json_t *c = json_object_get(rec, "call");
        /* the arguments as the model sent them, else as decoded */
        const char *raw = json_string_value(json_object_get(c, "args_raw"));
        json_t *args = json_object_get(c, "args");
        char *a = raw != NULL            ? strdup(raw)
                  : json_is_object(args) ? json_dumps(args, JSON_COMPACT)
                                         : strdup("{}");
        json_t *tc = json_pack("{s:O?,s:s,s:{s:O?,s:s?}}", "id",
                               json_object_get(c, "id"), "type", "function",
                               "function", "name", json_object_get(c, "tool"),
                               "arguments", a); /* new ref */
        free(a);
        if (calls == NULL || tc == NULL || json_array_append_new(calls, tc)) {
            rc = tg__loop_fail(err, TG_ENOMEM, "out of memory");
            goto out;
        }
    }
    resp = json_pack("{s:[{s:{s:s,s:O}}]}", "choices", "message", "role",
                     "assistant", "tool_calls", calls);
    text = resp != NULL ? json_dumps(resp, JSON_COMPACT) : NULL;
    if (text == NULL) {
        rc = tg__loop_fail(err, TG_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = tg_turn_parse(text, strlen(text), "openai-chat",
                            "the journaled calls", &turn, err)) != 0)
        goto out;
    json_t *list = json_object_get(l->conv, l->prov->list_key); /* borrowed */
    size_t from = json_array_size(list);
    if ((rc = l->prov->stream_answer(list, "", turn, NULL, err)) != 0)
        goto out;
    l->iteration++;
    free(l->answer);
    if ((l->answer = strdup("")) == NULL) {
        rc = tg__loop_fail(err, TG_ENOMEM, "out of memory");
        goto out;
    }
    json_t *extra = json_pack("{s:s,s:b}", "text", "", "from_calls", 1);
    rc = extra != NULL ? tg__loop_journal_step(l, "answer", from, extra, err)
                       : tg__loop_fail(err, TG_ENOMEM, "out of memory");
    json_decref(extra);
    if (rc != 0)
        goto out;
    json_decref(l->pending_answer);
    l->pending_answer = json_array(); /* new ref */
    for (size_t k = from; k < json_array_size(list); k++)
        json_array_append(l->pending_answer, json_array_get(list, k));
    l->pending = 1;
out:
    tg_turn_free(turn);
    free(text);
    json_decref(resp);
    json_decref(calls);
    json_decref(records);
    return rc;
}

/* Options for the loop from the journaled settings `m` (borrowed) where
 * `given` leaves them unset; strings borrowed from m or given. */
static tg_loop_options merged_options(const tg_loop_options *given,
                                      const json_t *m, const char **stops,
                                      size_t *nstops)
{
    tg_loop_options o = given != NULL ? *given : (tg_loop_options){0};
#define STR(field, key)                                                        \
    if (o.field == NULL)                                                       \
    o.field = json_string_value(json_object_get(m, key))
    STR(provider, "provider");
    STR(base_url, "base_url");
    STR(model, "model");
    STR(system, "system");
#undef STR
    if (o.max_iterations == 0)
        o.max_iterations =
            (int)json_integer_value(json_object_get(m, "max_iterations"));
    if (o.max_tool_calls == 0)
        o.max_tool_calls =
            (long)json_integer_value(json_object_get(m, "max_tool_calls"));
    if (o.max_total_tokens == 0)
        o.max_total_tokens =
            (long)json_integer_value(json_object_get(m, "max_total_tokens"));
    if (o.max_tokens == 0)
        o.max_tokens =
            (int)json_integer_value(json_object_get(m, "max_tokens"));
    if (given == NULL || given->stream == 0)
        o.stream = json_is_true(json_object_get(m, "stream"));
    if (o.nstop_tools == 0) {
        const json_t *st = json_object_get(m, "stop_tools");
        *nstops = 0;
        for (size_t i = 0; i < json_array_size(st) && i < 64; i++)
            if (json_is_string(json_array_get(st, i)))
                stops[(*nstops)++] = json_string_value(json_array_get(st, i));
        o.stop_tools = stops;
        o.nstop_tools = *nstops;
    }
    return o;
}

int tg_loop_resume(tg_runtime *rt, const char *loop_id,
                   const tg_loop_options *options, const tg_loop_events *events,
                   void *ud, tg_loop **out, tg_error *err)
{
    *out = NULL;
    const char *journal = rt != NULL ? tg_runtime_journal(rt) : NULL;
    if (journal == NULL)
        return tg__loop_fail(err, TG_EINVAL,
                             "the journal is off: a loop is resumed from the "
                             "journal it was recorded in");
    if (loop_id == NULL || strlen(loop_id) >= sizeof((tg_loop *)0)->id)
        return tg__loop_fail(err, TG_ENOTFOUND, "no loop '%s' in %s",
                             loop_id ? loop_id : "", journal);
    tg_loop_store *store = NULL;
    tg_loop *l = NULL;
    char *text = NULL;
    json_t *loop = NULL;                             /* new ref */
    int rc = tg_runtime_loop_store(rt, &store, err); /* borrowed */
    if (rc == 0)
        rc = tg_loop_store_get(store, loop_id, &text, err);
    if (rc != 0)
        goto fail;
    loop = json_loads(text, 0, NULL);
    const json_t *m = json_object_get(loop, "meta");
    if (json_is_true(json_object_get(m, "in_process")) &&
        (options == NULL || options->model_fn == NULL)) {
        rc = tg__loop_fail(err, TG_EINVAL,
                           "loop %s ran with an in-process model: resume it "
                           "with one (tg_loop_options.model_fn)",
                           loop_id);
        goto fail;
    }
    if ((rc = tg_loop_store_adopt(store, loop_id, err)) != 0)
        goto fail;
    const char *prompt = json_string_value(json_object_get(m, "prompt"));
    if (prompt == NULL) {
        rc = tg__loop_fail(err, TG_EPARSE,
                           "loop %s: its start in the journal is unreadable",
                           loop_id);
        goto fail;
    }
    const char *stops[64];
    size_t nstops = 0;
    tg_loop_options o = merged_options(options, m, stops, &nstops);
    if (o.nskills > 0) {
        rc = tg__loop_fail(err, TG_EINVAL,
                           "a resumed loop keeps the skills it was started "
                           "with");
        goto fail;
    }
    if ((rc = tg_loop_new(rt, &o, events, ud, &l, err)) != 0 ||
        (rc = tg__loop_skill_names(l, json_object_get(m, "skills"), err)) != 0)
        goto fail;
    snprintf(l->id, sizeof l->id, "%s", loop_id);
    l->resumed = 1;
    l->store = store;
    if ((rc = tg_loop_start(l, prompt, err)) != 0 ||
        (rc = apply_steps(l, loop, err)) != 0 ||
        (rc = idempotent_tools(l, err)) != 0)
        goto fail;
    if (!l->pending && (rc = answer_from_calls(l, err)) != 0)
        goto fail;
    json_decref(loop);
    tg_free(text);
    *out = l;
    return 0;
fail:
    json_decref(loop);
    tg_free(text);
    tg_loop_free(l); /* the store is the runtime's */
    return rc;
}

int tg_loop_show(const char *journal_path, const char *loop_id, char **out,
                 tg_error *err)
{
    *out = NULL;
    tg_loop_store *store = NULL;
    char *text = NULL;
    json_t *loop = NULL, *conv = NULL; /* new refs */
    int rc = tg_loop_store_open(journal_path, &store, err);
    if (rc == 0)
        rc = tg_loop_store_get(store, loop_id, &text, err);
    if (rc != 0)
        goto out;
    loop = json_loads(text, 0, NULL);
    const json_t *m = json_object_get(loop, "meta");
    const char *prompt = json_string_value(json_object_get(m, "prompt"));
    const char *model = json_string_value(json_object_get(m, "model"));
    const tg__provider *prov =
        tg__provider_find(json_string_value(json_object_get(m, "provider")));
    if (prov == NULL || prompt == NULL || model == NULL) {
        rc = tg__loop_fail(err, TG_EPARSE,
                           "loop %s: its start in the journal is unreadable",
                           loop_id);
        goto out;
    }
    conv = json_object();
    if (conv == NULL) {
        rc = tg__loop_fail(err, TG_ENOMEM, "out of memory");
        goto out;
    }
    rc = prov->start(conv, json_string_value(json_object_get(m, "system")),
                     prompt, err);
    json_t *list = json_object_get(conv, prov->list_key); /* borrowed */
    json_t *steps = json_array();                         /* new ref */
    long tokens = 0;
    size_t i;
    json_t *step;
    json_array_foreach(json_object_get(loop, "steps"), i, step)
    {
        if (rc != 0)
            break;
        json_t *items = json_object_get(json_object_get(step, "body"), "items");
        tokens += (long)json_integer_value(
            json_object_get(json_object_get(step, "body"), "tokens"));
        if (steps == NULL || !json_is_array(items) ||
            json_array_extend(list, items) != 0 ||
            json_array_append_new(
                steps, json_pack("{s:O,s:O,s:O}", "iteration",
                                 json_object_get(step, "iteration"), "kind",
                                 json_object_get(step, "kind"), "at",
                                 json_object_get(step, "at"))) != 0)
            rc = tg__loop_fail(err, TG_EPARSE,
                               "loop %s: step %zu of the journal is "
                               "unreadable",
                               loop_id, i + 1);
    }
    if (rc == 0 &&
        (json_object_set_new(conv, "steps", steps) != 0 ||
         json_object_set(conv, "answer", json_object_get(loop, "answer"))))
        rc = tg__loop_fail(err, TG_ENOMEM, "out of memory");
    else if (rc != 0)
        json_decref(steps);
    if (rc == 0) {
        *out = tg__loop_transcript_json(
            conv, loop_id, prov->name, model,
            (int)json_integer_value(json_object_get(loop, "iterations")),
            json_string_value(json_object_get(loop, "status")), tokens);
        if (*out == NULL)
            rc = tg__loop_fail(err, TG_ENOMEM, "out of memory");
    }
out:
    json_decref(conv);
    json_decref(loop);
    tg_free(text);
    tg_loop_store_free(store);
    return rc;
}
