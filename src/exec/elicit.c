/* SPDX-License-Identifier: MIT */
/*
 * elicit.c - an elicitation a tool source raised while running a call (an
 * MCP server asking its user for input), put to the runtime's elicitation
 * handler (tg_runtime_set_elicit) and answered later from any thread
 * (tg_elicit_answer). A tg_elicit is a handoff (handoff.c), like an ask:
 * held by the runtime until its answer was taken on the loop (or the
 * runtime is freed) and by the handler until it answers.
 *
 * The call keeps running while it waits (its slot, its deadline). The
 * source holds the elicitation from the sink's `elicit` until the answer
 * comes through its callback, or until it lets go (elicit_drop) because
 * its call ends: it then answers the server itself, and a later answer is
 * accepted and ignored. When the runtime is freed first, the source is
 * answered "cancel" on the spot.
 *
 * Every elicitation is recorded in the call's decisions.elicitation, one
 * entry each: {"source", "mode", "action" (accept, decline, cancel),
 * "detail" (who answered, or why toolgate did), "fields" (accept: the
 * names of the values given)}. The values themselves are not recorded:
 * what a user types into a form may be a secret.
 *
 * Accepted content is checked here, on the answering thread, against the
 * form's requestedSchema (compiled when the elicitation is made), so no
 * face can send a server what it did not ask for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "runtime.h"
#include "schema.h"

struct tg_elicit {
    tg__handoff h; /* first: the runtime's and the handler's holds */
    /* what it asks (immutable; any thread) */
    char *call_id, *source, *mode, *message, *schema_text, *params;
    tg_schema *schema; /* the compiled requestedSchema, or NULL */
    /* the answer (under h.mu, set by tg_elicit_answer) */
    tg_elicit_action action;
    char *content; /* ACCEPT of a form: compact JSON of an object */
    char *detail;
    /* loop thread only: the source's while it holds the elicitation */
    tg__job *job;
    void (*answered)(void *ud, tg_elicit *el, const char *result, size_t len);
    void *aud;
    json_t *entry; /* its entry in job->decisions.elicitation (borrowed) */
};

static const char *const action_names[] = {"accept", "decline", "cancel"};

static void el_destroy(tg__handoff *h)
{
    tg_elicit *el = (tg_elicit *)h;
    free(el->call_id);
    free(el->source);
    free(el->mode);
    free(el->message);
    free(el->schema_text);
    free(el->params);
    tg_schema_free(el->schema);
    free(el->content);
    free(el->detail);
    free(el);
}

void tg_runtime_set_elicit(tg_runtime *rt, tg_elicit_fn fn, void *ud)
{
    if (rt == NULL)
        return;
    rt->elicit_fn = fn;
    rt->elicit_ud = ud;
}

/* ------------------------------------------------------------ decisions */

/* A new entry {"source", "mode"} appended to job's decisions.elicitation
 * (borrowed: the array holds it), NULL on out of memory. */
static json_t *new_entry(tg__job *job, const char *source, const char *mode)
{
    if (job->decisions == NULL && (job->decisions = json_object()) == NULL)
        return NULL;
    json_t *arr = json_object_get(job->decisions, "elicitation"); /* borrowed */
    if (!json_is_array(arr)) {
        arr = json_array();
        if (arr == NULL ||
            json_object_set_new(job->decisions, "elicitation", arr) != 0)
            return NULL;
    }
    json_t *e = json_pack("{s:s, s:s}", "source", source != NULL ? source : "",
                          "mode", mode); /* new ref */
    if (e == NULL || json_array_append_new(arr, e) != 0)
        return NULL;
    return e;
}

/* Sets the entry's outcome: action, detail (may be NULL), and for an
 * accepted form the names of the fields in content (JSON text, or NULL). */
static void settle(json_t *entry, const char *action, const char *detail,
                   const char *content)
{
    if (entry == NULL)
        return;
    json_object_set_new(entry, "action", json_string(action));
    if (detail != NULL)
        json_object_set_new(entry, "detail", json_string(detail));
    json_t *c =
        content != NULL ? json_loads(content, 0, NULL) : NULL; /* new ref */
    if (json_is_object(c)) {
        json_t *names = json_array(); /* new ref */
        const char *k;
        json_t *v;
        json_object_foreach(c, k, v)
        {
            json_array_append_new(names, json_string(k));
        }
        json_object_set_new(entry, "fields", names);
    }
    json_decref(c);
}

/* ------------------------------------------------------------ the loop */

/* Ends the source's hold with `result` (an ElicitResult's JSON text). */
static void answer_source(tg_elicit *el, const char *result)
{
    void (*cb)(void *, tg_elicit *, const char *, size_t) = el->answered;
    void *ud = el->aud;
    el->job = NULL;
    el->answered = NULL;
    el->entry = NULL;
    if (cb != NULL)
        cb(ud, el, result, strlen(result));
}

static void el_apply(tg_runtime *rt, tg__handoff *h)
{
    (void)rt;
    tg_elicit *el = (tg_elicit *)h;
    if (el->job == NULL)
        return; /* the source let go: its call ended */
    const char *action = action_names[el->action];
    settle(el->entry, action, el->detail, el->content);
    json_t *content = el->content != NULL ? json_loads(el->content, 0, NULL)
                                          : NULL; /* new ref */
    json_t *r = json_pack("{s:s, s:o*}", "action", action, "content",
                          content); /* new ref */
    char *text = r != NULL ? json_dumps(r, JSON_COMPACT) : NULL;
    json_decref(r);
    /* out of memory: the server is told cancel, which needs no memory */
    answer_source(el, text != NULL ? text : "{\"action\":\"cancel\"}");
    free(text);
}

static void el_detach(tg_runtime *rt, tg__handoff *h)
{
    (void)rt;
    tg_elicit *el = (tg_elicit *)h;
    if (el->job == NULL)
        return;
    settle(el->entry, "cancel", "the runtime was freed before an answer", NULL);
    answer_source(el, "{\"action\":\"cancel\"}");
}

static const tg__handoff_ops el_ops = {el_apply, el_detach, el_destroy};

/* Reads the request's params into el (mode, message, schema, params
 * without _meta). 0, TG_EINVAL with why, TG_ENOMEM. */
static int read_params(tg_elicit *el, const char *params, size_t len,
                       const char **why)
{
    json_t *p =
        json_loadb(params, len, JSON_REJECT_DUPLICATES, NULL); /* new ref */
    int rc = TG_EINVAL;
    if (!json_is_object(p)) {
        *why = "its params are not a JSON object";
        goto done;
    }
    json_t *mode = json_object_get(p, "mode");          /* borrowed */
    json_t *msg = json_object_get(p, "message");        /* borrowed */
    json_t *rs = json_object_get(p, "requestedSchema"); /* borrowed */
    const char *m = json_is_string(mode) ? json_string_value(mode) : "form";
    if (strcmp(m, "form") != 0 && strcmp(m, "url") != 0) {
        *why = "its mode is neither form nor url";
        goto done;
    }
    if (strcmp(m, "form") == 0 && !json_is_object(rs)) {
        *why = "a form without a requestedSchema object";
        goto done;
    }
    if (strcmp(m, "url") == 0 && !json_is_string(json_object_get(p, "url"))) {
        *why = "a url elicitation without a url";
        goto done;
    }
    if (strcmp(m, "form") == 0) {
        tg_error e;
        int c = tg__schema_compile(rs, NULL, &el->schema, &e);
        if (c == TG_ENOMEM) {
            rc = c;
            goto done;
        }
        if (c != 0) {
            *why = "its requestedSchema is not a JSON Schema toolgate can "
                   "check answers against";
            goto done;
        }
    }
    json_object_del(p, "_meta");
    rc = TG_ENOMEM;
    el->mode = strdup(m);
    el->message = strdup(json_is_string(msg) ? json_string_value(msg) : "");
    el->schema_text = json_is_object(rs) ? json_dumps(rs, JSON_COMPACT) : NULL;
    el->params = json_dumps(p, JSON_COMPACT);
    if (el->mode != NULL && el->message != NULL && el->params != NULL &&
        (el->schema_text != NULL || !json_is_object(rs)))
        rc = 0;
done:
    json_decref(p);
    return rc;
}

int tg__elicit_raise(void *ctx, const tg__elicit_req *req, tg_elicit **out)
{
    tg__job *job = ctx;
    tg_runtime *rt = job->run->rt;
    *out = NULL;
    /* the mode for the record, before anything else can fail */
    json_t *p = json_loadb(req->params, req->len, 0, NULL); /* new ref */
    const char *mode = json_string_value(json_object_get(p, "mode"));
    json_t *entry = new_entry(job, req->source,
                              mode != NULL && strcmp(mode, "url") == 0
                                  ? "url"
                                  : "form"); /* borrowed */
    json_decref(p);
    if (rt->elicit_fn == NULL) {
        settle(entry, "decline",
               "declined by toolgate: no elicitation handler is set (no "
               "client to ask)",
               NULL);
        return TG_ENOTFOUND;
    }
    tg_elicit *el = calloc(1, sizeof *el);
    if (el == NULL)
        return TG_ENOMEM;
    const char *why = NULL;
    int rc = read_params(el, req->params, req->len, &why);
    if (rc == 0 &&
        ((el->call_id = strdup(job->call->id)) == NULL ||
         (el->source = strdup(req->source ? req->source : "")) == NULL))
        rc = TG_ENOMEM;
    if (rc == 0 && tg__handoff_init(rt, &el->h, &el_ops) != 0)
        rc = TG_ENOMEM;
    if (rc != 0) {
        if (rc == TG_EINVAL) {
            char detail[200];
            snprintf(detail, sizeof detail, "declined by toolgate: %s", why);
            settle(entry, "decline", detail, NULL);
        }
        el_destroy(&el->h); /* never a handoff: no mutex to destroy */
        return rc;
    }
    el->job = job;
    el->answered = req->answered;
    el->aud = req->ud;
    el->entry = entry;
    *out = el;
    /* Last: the handler may answer before it returns. */
    rt->elicit_fn(rt->elicit_ud, el);
    return 0;
}

void tg__elicit_drop(void *ctx, tg_elicit *el, const char *action)
{
    (void)ctx;
    if (el == NULL || el->job == NULL)
        return;
    settle(el->entry, action,
           "the call ended before the elicitation was answered", NULL);
    el->job = NULL;
    el->answered = NULL;
    el->entry = NULL;
}

/* ------------------------------------------------------------ answers */

int tg_elicit_answer(tg_elicit *el, tg_elicit_action action,
                     const char *content_json, const char *detail,
                     tg_error *err)
{
    tg_error ignored;
    if (err == NULL)
        err = &ignored;
    tg__error_clear(err);
    if (el == NULL ||
        (action != TG_ELICIT_ACCEPT && action != TG_ELICIT_DECLINE &&
         action != TG_ELICIT_CANCEL))
        return tg__error_set(err, TG_EINVAL,
                             "tg_elicit_answer: no elicitation, or an action "
                             "out of range");
    char *content = NULL, *copy = NULL;
    if (action == TG_ELICIT_ACCEPT && strcmp(el->mode, "form") == 0) {
        json_error_t je;
        json_t *c = json_loads(content_json != NULL ? content_json : "{}",
                               JSON_REJECT_DUPLICATES, &je); /* new ref */
        if (!json_is_object(c)) {
            json_decref(c);
            return tg__error_set(err, TG_EINVAL,
                                 "the content of an accepted elicitation "
                                 "must be a JSON object");
        }
        tg__schema_report rep = {0};
        int v = tg__schema_validate_json(el->schema, c, &rep, err);
        if (v == 0) {
            char *why = tg__schema_report_message(&rep);
            tg__error_set(err, TG_EINVAL,
                          "the content does not match the requestedSchema: %s",
                          why != NULL ? why : "invalid");
            free(why);
        }
        tg__schema_report_cleanup(&rep);
        if (v != 1) {
            json_decref(c);
            return v == 0 ? TG_EINVAL : err->code != 0 ? err->code : TG_ENOMEM;
        }
        content = json_dumps(c, JSON_COMPACT);
        json_decref(c);
        if (content == NULL)
            return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    if (detail != NULL && (copy = tg__detail_copy(detail)) == NULL) {
        free(content);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    if (tg__handoff_claim(&el->h) != 0) {
        free(content);
        free(copy);
        return tg__error_set(err, TG_EINVAL,
                             "the elicitation was answered already");
    }
    el->action = action;
    el->content = content;
    el->detail = copy;
    tg__handoff_post(&el->h);
    return 0;
}

const char *tg_elicit_call_id(const tg_elicit *el)
{
    return el != NULL ? el->call_id : NULL;
}

const char *tg_elicit_source(const tg_elicit *el)
{
    return el != NULL ? el->source : NULL;
}

const char *tg_elicit_mode(const tg_elicit *el)
{
    return el != NULL ? el->mode : NULL;
}

const char *tg_elicit_message(const tg_elicit *el)
{
    return el != NULL ? el->message : NULL;
}

const char *tg_elicit_schema(const tg_elicit *el)
{
    return el != NULL ? el->schema_text : NULL;
}

const char *tg_elicit_params(const tg_elicit *el)
{
    return el != NULL ? el->params : NULL;
}
