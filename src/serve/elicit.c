/* SPDX-License-Identifier: MIT */
/*
 * elicit.c - a gateway forwards its sources' elicitations to its own
 * client. When an MCP server behind toolgate asks its user for input while
 * running a call (tg_runtime_set_elicit), the question goes to the client
 * that made the call, as an elicitation/create request on the call's own
 * stream (else its session's), and the client's ElicitResult goes back
 * upstream (tg_elicit_answer, which checks accepted content against the
 * requestedSchema: content that does not match is declined, the server
 * never sees it). Declined instead, with the reason in the call's
 * decisions.elicitation:
 *   - a client that declared no elicitation capability, or not the mode
 *     asked (form, url; 2025-06-18 has form only);
 *   - a 2026-07-28 client (its questions travel in an InputRequiredResult
 *     that ends the request; a running upstream call cannot wait for the
 *     retry yet);
 *   - a call that runs as a task (its request was answered already).
 * A question not answered when its request ends (the call finished, was
 * canceled, the client went away) is answered cancel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "tasks.h"

/* A question sent to the client for a source. */
struct srv_elicit {
    struct srv_elicit *next;
    json_t *id;    /* the elicitation/create request's id (new ref) */
    tg_elicit *el; /* answered when the client answers, or the req ends */
};

static void decline(tg_elicit *el, const char *why)
{
    char detail[300];
    snprintf(detail, sizeof detail, "declined by toolgate serve: %.260s", why);
    (void)tg_elicit_answer(el, TG_ELICIT_DECLINE, NULL, detail, NULL);
}

/* Why the client of r cannot be asked `el`, or NULL when it can. */
static const char *cannot_ask(const srv_req *r, const tg_elicit *el)
{
    const json_t *caps = json_object_get(r->caps, "elicitation");
    if (!json_is_object(caps))
        return "the MCP client declared no elicitation capability";
    if (r->version == TG_MCP_V2026_07_28)
        return "a 2026-07-28 client is asked by an InputRequiredResult, "
               "which a running upstream call cannot wait for yet";
    bool url = strcmp(tg_elicit_mode(el), "url") == 0;
    /* {} means form (the modes came with 2025-11-25) */
    bool has_form =
        json_object_size(caps) == 0 || json_object_get(caps, "form") != NULL;
    if (url && (r->version == TG_MCP_V2025_06_18 ||
                json_object_get(caps, "url") == NULL))
        return "the MCP client cannot take url elicitations";
    if (!url && !has_form)
        return "the MCP client cannot take form elicitations";
    return NULL;
}

static void on_elicit(void *ud, tg_elicit *el)
{
    tg__srv *srv = ud;
    srv_req *r = srv_req_by_call(srv, tg_elicit_call_id(el));
    if (r == NULL) {
        decline(el, srv_task_req_by_call(srv, tg_elicit_call_id(el)) != NULL
                        ? "the call runs as a task: its request was "
                          "answered, so no question can go with it"
                        : "no MCP client request is waiting for this call");
        return;
    }
    const char *why = cannot_ask(r, el);
    if (why != NULL) {
        decline(el, why);
        return;
    }
    json_t *params = json_loads(tg_elicit_params(el), 0, NULL); /* new ref */
    if (r->version == TG_MCP_V2025_06_18)
        json_object_del(params, "mode"); /* not in that version's shape */
    else
        json_object_set_new(params, "mode", json_string(tg_elicit_mode(el)));
    char id[48];
    snprintf(id, sizeof id, "tg-elicit-%llu",
             (unsigned long long)++srv->nrequests);
    json_t *msg =
        json_pack("{s:s,s:s,s:s,s:o}", "jsonrpc", "2.0", "id", id, "method",
                  "elicitation/create", "params", params); /* new ref */
    char *text = msg != NULL ? json_dumps(msg, JSON_COMPACT) : NULL;
    json_decref(msg);
    struct srv_elicit *e = calloc(1, sizeof *e);
    int sent = text != NULL && e != NULL && (e->id = json_string(id)) != NULL
                   ? srv_req_send_request(r, text)
                   : -1;
    free(text);
    if (sent != 0) {
        if (e != NULL)
            json_decref(e->id);
        free(e);
        decline(el, "the MCP client could not be reached");
        return;
    }
    e->el = el;
    e->next = r->elicits;
    r->elicits = e;
}

/* The client's answer (result, or an error) goes upstream. */
static void forward(tg_elicit *el, const json_t *result, bool is_error)
{
    if (is_error) {
        decline(el, "the MCP client answered the question with an error");
        return;
    }
    const char *action = json_string_value(json_object_get(result, "action"));
    if (action != NULL && strcmp(action, "accept") == 0) {
        const json_t *content = json_object_get(result, "content");
        char *text = content != NULL
                         ? json_dumps(content, JSON_COMPACT | JSON_ENCODE_ANY)
                         : NULL;
        tg_error err;
        int rc = tg_elicit_answer(el, TG_ELICIT_ACCEPT, text,
                                  "accepted by the MCP client's user", &err);
        free(text);
        if (rc != 0) {
            char why[400];
            snprintf(why, sizeof why, "the MCP client's answer: %.360s",
                     err.message);
            decline(el, why);
        }
        return;
    }
    if (action != NULL && strcmp(action, "decline") == 0) {
        (void)tg_elicit_answer(el, TG_ELICIT_DECLINE, NULL,
                               "declined by the MCP client's user", NULL);
        return;
    }
    if (action != NULL && strcmp(action, "cancel") == 0) {
        (void)tg_elicit_answer(el, TG_ELICIT_CANCEL, NULL,
                               "canceled by the MCP client's user", NULL);
        return;
    }
    decline(el, "the MCP client's answer was not an ElicitResult");
}

bool srv_elicit_response(srv_session *s, const json_t *id, const json_t *result,
                         bool is_error)
{
    if (id == NULL)
        return false;
    for (srv_req *r = s->reqs; r != NULL; r = r->snext)
        for (struct srv_elicit **pp = &r->elicits; *pp != NULL;
             pp = &(*pp)->next)
            if (json_equal((*pp)->id, id)) {
                struct srv_elicit *e = *pp;
                *pp = e->next;
                forward(e->el, result, is_error);
                json_decref(e->id);
                free(e);
                srv_kick(s->srv); /* the runtime takes the answer */
                return true;
            }
    return false;
}

void srv_elicits_drop(srv_req *r)
{
    while (r->elicits != NULL) {
        struct srv_elicit *e = r->elicits;
        r->elicits = e->next;
        (void)tg_elicit_answer(e->el, TG_ELICIT_CANCEL, NULL,
                               "the MCP client's request ended before its "
                               "answer",
                               NULL);
        json_decref(e->id);
        free(e);
    }
}

void srv_elicits_init(tg__srv *srv)
{
    tg_runtime_set_elicit(srv->rt, on_elicit, srv);
}
