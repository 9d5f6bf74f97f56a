/* SPDX-License-Identifier: MIT */
/*
 * elicit.c - a gateway forwards its sources' elicitations to its own
 * client. When an MCP server behind toolgate asks its user for input while
 * running a call (tg_runtime_set_elicit), the question goes to the client
 * that made the call, and the client's answer goes back upstream
 * (tg_elicit_answer, which checks accepted content against the
 * requestedSchema: content that does not match is declined, the server
 * never sees it). How the question travels depends on the client's
 * version and on whether the call runs as a task:
 *   - 2025-06-18 / 2025-11-25: an elicitation/create request on the call's
 *     own stream (else its session's); the client's response is the
 *     answer.
 *   - 2025-11-25, a task: the same request carrying the related task goes
 *     to the session that made the task and with every tasks/result that
 *     waits for it (tasks.c, as for a policy ask); the task shows
 *     input_required until the answer, from any session of the caller.
 *   - 2026-07-28 (no server-to-client requests): the call is parked - it
 *     keeps running upstream, its deadline counting - and its request is
 *     answered with an InputRequiredResult: the question among its
 *     inputRequests (under the key "tg-elicit-N") and a requestState that
 *     names the park (a fresh 128-bit name under the HMAC of approve.c's
 *     states, bound to the caller, tool and arguments). The client's retry
 *     (the same call with inputResponses and that state) re-attaches to the
 *     parked call: its answers go upstream, a question it did not answer is
 *     asked again, and the retry is answered with the call's result or the
 *     next question. A state is good for one retry: the park it names ends
 *     then (a reused, forged or expired state is -32602). A parked call
 *     waits for its retry until the call's own deadline (the runtime ends
 *     it: timeout) or SRV_STATE_TTL_MS (10 minutes, when the state expires;
 *     the call is then canceled, upstream with notifications/cancelled,
 *     and its question answered cancel), whichever comes first; an end that
 *     comes while no request is attached is kept for the retry until the
 *     state expires.
 *     A policy approval's requestState and a parked call's are distinct:
 *     the approval's runs a new call (which may then park), a parked
 *     call's re-attaches to a call that was approved already (an
 *     inputResponses toolgate_approval beside it is ignored).
 *   - 2026-07-28, a task (io.modelcontextprotocol/tasks): the task shows
 *     input_required and tasks/get carries the question in inputRequests;
 *     tasks/update's inputResponses answer it.
 * Declined instead, with the reason in the call's decisions.elicitation:
 * a client that declared no elicitation capability, or not the mode asked
 * (form, url; 2025-06-18 has form only). A question not answered when its
 * call ends (it finished, was canceled, the client went away) is answered
 * cancel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "tasks.h"

/* A question sent to the client for a source. */
struct srv_elicit {
    struct srv_elicit *next;
    json_t *id;     /* the request's id, the inputRequests key (new ref) */
    json_t *params; /* the elicitation/create params sent (new ref) */
    tg_elicit *el;  /* answered when the client answers, or the req ends */
};

/* A 2026-07-28 call waiting for its client's retry. */
struct srv_park {
    struct srv_park *prev, *next; /* in srv->parks */
    srv_req *r;
    uv_timer_t *timer; /* the state's expiry */
    char name[SRV_PARK_LEN + 1];
    bool done;    /* the call ended: status and err kept for the retry */
    bool expired; /* no retry came: the call was canceled */
    int status;
    tg_error err;
};

static void decline(tg_elicit *el, const char *why)
{
    char detail[300];
    snprintf(detail, sizeof detail, "declined by toolgate serve: %.260s", why);
    (void)tg_elicit_answer(el, TG_ELICIT_DECLINE, NULL, detail, NULL);
}

static void elicit_free(struct srv_elicit *e)
{
    json_decref(e->id);
    json_decref(e->params);
    free(e);
}

/* Why the client of r cannot be asked `el`, or NULL when it can. */
static const char *cannot_ask(const srv_req *r, const tg_elicit *el)
{
    const json_t *caps = json_object_get(r->caps, "elicitation");
    if (!json_is_object(caps))
        return "the MCP client declared no elicitation capability";
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

/* The question `el` for r's client: its id and its params in that
 * version's shape. NULL on out of memory. */
static struct srv_elicit *elicit_new(tg__srv *srv, const srv_req *r,
                                     tg_elicit *el)
{
    struct srv_elicit *e = calloc(1, sizeof *e);
    if (e == NULL)
        return NULL;
    e->params = json_loads(tg_elicit_params(el), 0, NULL); /* new ref */
    char id[48];
    snprintf(id, sizeof id, "tg-elicit-%llu",
             (unsigned long long)++srv->nrequests);
    e->id = json_string(id);
    if (e->params == NULL || e->id == NULL) {
        elicit_free(e);
        return NULL;
    }
    if (r->version == TG_MCP_V2025_06_18)
        json_object_del(e->params, "mode"); /* not in that version's shape */
    else
        json_object_set_new(e->params, "mode", json_string(tg_elicit_mode(el)));
    if (r->detached && r->version == TG_MCP_V2025_11_25)
        /* a task's question names its task */
        json_object_set_new(e->params, "_meta",
                            json_pack("{s:{s:s}}",
                                      "io.modelcontextprotocol/related-task",
                                      "taskId", srv_task_id(r)));
    e->el = el;
    return e;
}

/* The elicitation/create request of e (caller frees), or NULL. */
static char *request_text(const struct srv_elicit *e)
{
    json_t *msg =
        json_pack("{s:s,s:O,s:s,s:O}", "jsonrpc", "2.0", "id", e->id, "method",
                  "elicitation/create", "params", e->params); /* new ref */
    char *text = msg != NULL ? json_dumps(msg, JSON_COMPACT) : NULL;
    json_decref(msg);
    return text;
}

static void elicits_append(srv_req *r, struct srv_elicit *e)
{
    struct srv_elicit **pp = &r->elicits;
    while (*pp != NULL)
        pp = &(*pp)->next;
    e->next = NULL;
    *pp = e;
}

/* Answers every question of r `action` with `detail`. */
static void elicits_end(srv_req *r, tg_elicit_action action, const char *detail)
{
    while (r->elicits != NULL) {
        struct srv_elicit *e = r->elicits;
        r->elicits = e->next;
        (void)tg_elicit_answer(e->el, action, NULL, detail, NULL);
        elicit_free(e);
    }
}

/* ------------------------------------------------------------ parking */

static struct srv_park *parked_by_call(tg__srv *srv, const char *call_id)
{
    for (struct srv_park *p = srv->parks; p != NULL; p = p->next)
        if (strcmp(p->r->call_id, call_id) == 0)
            return p;
    return NULL;
}

static void close_free(uv_handle_t *h)
{
    free(h);
}

void srv_park_free(srv_req *r)
{
    struct srv_park *p = r->park;
    if (p == NULL)
        return;
    tg__srv *srv = r->srv;
    if (p->prev != NULL)
        p->prev->next = p->next;
    else
        srv->parks = p->next;
    if (p->next != NULL)
        p->next->prev = p->prev;
    if (p->timer != NULL)
        uv_close((uv_handle_t *)p->timer, close_free);
    r->park = NULL;
    free(p);
}

/* No retry came before the state expired: the call is canceled (its
 * source tells its server) and its questions answered cancel; an end kept
 * for the retry is dropped. */
static void park_expire(struct srv_park *p, const char *why)
{
    srv_req *r = p->r;
    tg__srv *srv = r->srv;
    if (p->done) {
        srv_req_free(r);
        srv_check_stopped(srv);
        return;
    }
    p->expired = true;
    elicits_end(r, TG_ELICIT_CANCEL, why);
    /* (queued: the call ends on a later runtime step, freeing r) */
    (void)tg_runtime_cancel(srv->rt, r->call_id, "system", why, NULL);
    srv_kick(srv);
}

static void on_park_timer(uv_timer_t *h)
{
    park_expire(h->data, "no retry of the MCP client came before its "
                         "requestState expired");
}

/* Parks r - it leaves its session's and stream's lists and waits for the
 * retry - and answers its request with an InputRequiredResult carrying its
 * pending questions and a state naming the park. When the answer cannot
 * be made or sent, the questions are answered cancel and the call is
 * canceled. */
static void park(srv_req *r)
{
    tg__srv *srv = r->srv;
    struct srv_park *p = calloc(1, sizeof *p);
    json_t *inputs = srv_elicits_input_requests(r); /* new ref */
    long long expiry = srv_wall_ms() + SRV_STATE_TTL_MS;
    char state[192];
    json_t *res = NULL; /* new ref */
    if (p != NULL && inputs != NULL &&
        (p->timer = malloc(sizeof *p->timer)) != NULL) {
        srv_random_hex(p->name, SRV_PARK_LEN / 2);
        srv_state_make(r, p->name, expiry, state, sizeof state);
        res = json_pack("{s:s,s:O,s:s}", "resultType", "input_required",
                        "inputRequests", inputs, "requestState", state);
    }
    json_decref(inputs);
    if (res == NULL) {
        if (p != NULL)
            free(p->timer);
        free(p);
        elicits_end(r, TG_ELICIT_CANCEL,
                    "canceled by toolgate serve: out of memory");
        srv_req_cancel(srv, r, "out of memory");
        return;
    }
    /* Parked before the answer goes: neither its stream closing (which
     * the answer may do at once) nor its session ending cancels the call
     * now, and nothing more goes on that stream. */
    srv_req_detach(r);
    r->answered = true;
    p->r = r;
    r->park = p;
    p->next = srv->parks;
    if (p->next != NULL)
        p->next->prev = p;
    srv->parks = p;
    uv_timer_init(srv_loop(srv), p->timer);
    p->timer->data = p;
    uv_timer_start(p->timer, on_park_timer, SRV_STATE_TTL_MS, 0);
    if (srv_send_result(srv, r->out, r->version, "tools/call", r->id, res) != 0)
        /* no one got the state: no retry can come */
        park_expire(p, "the MCP client could not be reached");
}

bool srv_park_done(srv_req *r, int status, const tg_error *err)
{
    struct srv_park *p = r->park;
    if (p == NULL)
        return false;
    tg__srv *srv = r->srv;
    if (p->expired || srv->stopping) {
        srv_req_free(r);
        return true;
    }
    elicits_end(r, TG_ELICIT_CANCEL,
                "the call ended before the MCP client's retry");
    p->done = true;
    p->status = status;
    if (err != NULL)
        p->err = *err;
    return true;
}

void srv_parks_stop(tg__srv *srv)
{
    for (struct srv_park *p = srv->parks, *next; p != NULL; p = next) {
        next = p->next;
        park_expire(p, "the server is shutting down");
    }
}

int srv_park_resume(srv_ctx *c, const srv_req *fresh)
{
    tg__srv *srv = c->srv;
    struct srv_park *p = srv->parks;
    while (p != NULL && (p->expired || strcmp(p->name, fresh->retry_park) != 0))
        p = p->next;
    if (p == NULL)
        return -1;
    srv_req *r = p->r;
    bool done = p->done;
    int status = p->status;
    tg_error err = p->err;
    srv_park_free(r); /* one retry for one state */
    /* attached to the retry's request */
    json_decref(r->id);
    r->id = json_incref((json_t *)c->id);
    srv_out_unref(r->out);
    r->out = c->out;
    srv_out_ref(c->out);
    srv_session_release(r->s);
    r->s = c->s;
    srv_session_hold(c->s);
    json_decref(r->caps);
    r->caps = json_incref(fresh->caps);
    r->log_level = c->log_level;
    json_decref(r->progress_token);
    const json_t *token = json_object_get(
        json_object_get(srv_params(c), "_meta"), "progressToken");
    r->progress_token = json_is_string(token) || json_is_integer(token)
                            ? json_incref((json_t *)token)
                            : NULL;
    r->progress_sent = 0;
    r->progress_relayed = false;
    r->detached = false;
    r->answered = false;
    r->silent = false;
    srv_req_link(r);
    if (done) {
        srv_req_end(r, status, &err);
        return 0;
    }
    const json_t *inputs = json_object_get(srv_params(c), "inputResponses");
    srv_elicits_take(r, inputs);
    if (r->elicits != NULL) {
        park(r); /* what it did not answer, or a question since */
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ asking */

static void on_elicit(void *ud, tg_elicit *el)
{
    tg__srv *srv = ud;
    const char *call_id = tg_elicit_call_id(el);
    srv_req *r = srv_req_by_call(srv, call_id);
    struct srv_park *p = r == NULL ? parked_by_call(srv, call_id) : NULL;
    if (p != NULL && !p->done && !p->expired)
        r = p->r;
    if (r == NULL)
        r = srv_task_req_by_call(srv, call_id);
    if (r == NULL || r->silent) {
        decline(el, r != NULL ? "the MCP client canceled the call"
                              : "no MCP client request is waiting for this "
                                "call");
        return;
    }
    const char *why = cannot_ask(r, el);
    if (why != NULL) {
        decline(el, why);
        return;
    }
    struct srv_elicit *e = elicit_new(srv, r, el);
    if (e == NULL) {
        decline(el, "out of memory");
        return;
    }
    if (r->version == TG_MCP_V2026_07_28) {
        /* No server requests in 2026-07-28: a task shows the question
         * (tasks/get), a parked call asks it with the retry's answer, a
         * running request is answered with it. */
        elicits_append(r, e);
        if (!r->detached)
            park(r);
        return;
    }
    char *text = request_text(e);
    int sent = -1;
    if (text != NULL)
        sent =
            r->detached ? srv_task_ask(r, text) : srv_req_send_request(r, text);
    free(text);
    if (sent != 0) {
        elicit_free(e);
        decline(el, "the MCP client could not be reached");
        return;
    }
    elicits_append(r, e);
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

/* Takes r's question `id` (unlinked; the caller answers and frees it), or
 * NULL. */
static struct srv_elicit *elicit_take(srv_req *r, const json_t *id)
{
    for (struct srv_elicit **pp = &r->elicits; *pp != NULL; pp = &(*pp)->next)
        if (json_equal((*pp)->id, id)) {
            struct srv_elicit *e = *pp;
            *pp = e->next;
            return e;
        }
    return NULL;
}

bool srv_elicit_response(srv_session *s, const json_t *id, const json_t *result,
                         bool is_error)
{
    if (id == NULL)
        return false;
    struct srv_elicit *e = NULL;
    for (srv_req *r = s->reqs; r != NULL && e == NULL; r = r->snext)
        e = elicit_take(r, id);
    if (e == NULL) {
        /* a task's question: answered by a session of its caller */
        srv_req *r = srv_task_req_by_ask(s->srv, id);
        if (r != NULL &&
            strcmp(srv_session_caller(r->s), srv_session_caller(s)) == 0)
            e = elicit_take(r, id);
    }
    if (e == NULL)
        return false;
    forward(e->el, result, is_error);
    elicit_free(e);
    srv_kick(s->srv); /* the runtime takes the answer */
    return true;
}

bool srv_elicits_has(const srv_req *r, const json_t *id)
{
    for (const struct srv_elicit *e = r->elicits; e != NULL; e = e->next)
        if (json_equal(e->id, id))
            return true;
    return false;
}

json_t *srv_elicits_input_requests(const srv_req *r)
{
    json_t *inputs = json_object(); /* new ref */
    for (const struct srv_elicit *e = r->elicits; e != NULL && inputs != NULL;
         e = e->next)
        if (json_object_set_new(inputs, json_string_value(e->id),
                                json_pack("{s:s,s:O}", "method",
                                          "elicitation/create", "params",
                                          e->params)) != 0) {
            json_decref(inputs);
            inputs = NULL;
        }
    return inputs;
}

void srv_elicits_take(srv_req *r, const json_t *inputs)
{
    const char *key;
    const json_t *answer;
    bool any = false;
    json_object_foreach((json_t *)inputs, key, answer)
    {
        json_t *id = json_string(key); /* new ref */
        struct srv_elicit *e = id != NULL ? elicit_take(r, id) : NULL;
        json_decref(id);
        if (e == NULL)
            continue; /* no question of ours: ignored */
        forward(e->el, answer, false);
        elicit_free(e);
        any = true;
    }
    if (any)
        srv_kick(r->srv); /* the runtime takes the answers */
}

void srv_elicits_drop(srv_req *r)
{
    elicits_end(r, TG_ELICIT_CANCEL,
                "the MCP client's request ended before its answer");
}

void srv_elicits_init(tg__srv *srv)
{
    tg_runtime_set_elicit(srv->rt, on_elicit, srv);
}
