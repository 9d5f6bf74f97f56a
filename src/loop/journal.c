/* SPDX-License-Identifier: MIT */
/*
 * journal.c - a loop's record in the runtime's journal (toolgate.h,
 * "loops"): its start (id, settings, prompt), then per iteration the
 * model's answer - recorded before any of its calls' results - and the
 * results that went back, each the items it added to the conversation, and
 * how it ended. An iteration's results step is committed with the next
 * answer (one transaction an iteration), or when the loop ends. The calls
 * themselves are the runtime's to journal, under the iteration's caller scope.
 * With the journal off nothing is recorded and the loop cannot be resumed.
 */
#include <stdlib.h>
#include <string.h>

#include "loop_int.h"

/* The settings a resume needs, beside the prompt (new ref, NULL on out of
 * memory). The key is never in it. */
static json_t *meta(const tg_loop *l, const char *prompt)
{
    json_t *stops = json_array(); /* new ref */
    for (size_t i = 0; stops != NULL && i < l->opt.nstop_tools; i++)
        if (json_array_append_new(stops, json_string(l->stop_tools[i])) != 0) {
            json_decref(stops);
            stops = NULL;
        }
    json_t *skills = json_array(); /* new ref */
    for (size_t i = 0; skills != NULL && i < l->nskills; i++)
        if (json_array_append_new(skills, json_string(l->skill_names[i]))) {
            json_decref(skills);
            skills = NULL;
        }
    if (stops == NULL || skills == NULL) {
        json_decref(stops);
        json_decref(skills);
        return NULL;
    }
    return json_pack(
        "{s:s,s:s,s:s,s:s?,s:s,s:i,s:I,s:o,s:i,s:b,s:I,s:o,s:b}", "provider",
        l->prov->name, "base_url", l->base_url, "model", l->model, "system",
        l->system, "prompt", prompt, "max_iterations", l->opt.max_iterations,
        "max_tool_calls", (json_int_t)l->opt.max_tool_calls, "stop_tools",
        stops, "max_tokens", l->opt.max_tokens, "stream", l->opt.stream != 0,
        "max_total_tokens", (json_int_t)l->opt.max_total_tokens, "skills",
        skills, "in_process", l->opt.model_fn != NULL); /* new ref */
}

int tg__loop_journal_begin(tg_loop *l, const char *prompt, tg_error *err)
{
    /* The runtime's connection: the loop's steps and its calls' rows are
     * written by one connection (the runtime's store; never freed here). */
    int rc = tg_runtime_loop_store(l->rt, &l->store, err);
    if (rc != 0 || l->store == NULL)
        return rc;               /* NULL: the journal is off */
    json_t *m = meta(l, prompt); /* new ref */
    char *text = m != NULL ? json_dumps(m, JSON_COMPACT) : NULL;
    json_decref(m);
    rc = text != NULL ? tg_loop_store_begin(l->store, l->id, text, err)
                      : tg__loop_fail(err, TG_ENOMEM, "out of memory");
    free(text);
    return rc;
}

int tg__loop_journal_step(tg_loop *l, const char *kind, size_t from,
                          const json_t *extra, tg_error *err)
{
    if (l->store == NULL)
        return 0;
    /* {<extra's members>,"items":[...]}: the items' text is what the next
     * request sends of them (request.c), serialized once for both. */
    json_t *list = json_object_get(l->conv, l->prov->list_key); /* borrowed */
    const char *items;
    size_t n;
    if (tg__reqtext_items(&l->req, list, from, &items, &n) != 0)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    char *head = extra != NULL ? json_dumps(extra, JSON_COMPACT) : strdup("{}");
    size_t hlen = head != NULL ? strlen(head) : 0;
    /* head is "{...}": its closing brace makes way for the items */
    char *text = hlen >= 2 ? malloc(hlen + n + 12) : NULL;
    if (text == NULL) {
        free(head);
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    }
    size_t k = hlen - 1;
    memcpy(text, head, k);
    if (k > 1)
        text[k++] = ',';
    memcpy(text + k, "\"items\":[", 9);
    k += 9;
    memcpy(text + k, items, n);
    k += n;
    memcpy(text + k, "]}", 3);
    free(head);
    if (strcmp(kind, "results") == 0) {
        /* Kept until the next step: the next answer's commit takes it
         * along (one transaction an iteration, not two). Until then the
         * runtime's journal holds the results themselves, committed before
         * they were reported, and a resume answers the calls from it. */
        int rc = tg__loop_journal_flush(l, err);
        if (rc != 0) {
            free(text);
            return rc;
        }
        l->deferred = text;
        l->deferred_iteration = l->iteration;
        return 0;
    }
    tg_loop_step_rec steps[2];
    size_t nsteps = 0;
    if (l->deferred != NULL)
        steps[nsteps++] =
            (tg_loop_step_rec){l->deferred_iteration, "results", l->deferred};
    steps[nsteps++] = (tg_loop_step_rec){l->iteration, kind, text};
    int rc = tg_loop_store_steps(l->store, l->id, steps, nsteps, err);
    free(text);
    free(l->deferred);
    l->deferred = NULL;
    return rc;
}

int tg__loop_journal_flush(tg_loop *l, tg_error *err)
{
    if (l->deferred == NULL)
        return 0;
    int rc = tg_loop_store_step(l->store, l->id, l->deferred_iteration,
                                "results", l->deferred, err);
    free(l->deferred);
    l->deferred = NULL;
    return rc;
}

void tg__loop_journal_end(tg_loop *l)
{
    if (l->store == NULL || l->stop == TG_LOOP_RUNNING)
        return;
    /* Best effort: the loop has stopped either way, and a record left
     * "running" only lets a resume look at it again (and a resume answers
     * calls whose results step is missing from the journal). */
    (void)tg__loop_journal_flush(l, NULL);
    (void)tg_loop_store_end(l->store, l->id, tg_loop_stop_name(l->stop),
                            l->answer, NULL);
}
