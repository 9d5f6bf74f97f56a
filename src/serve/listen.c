/* SPDX-License-Identifier: MIT */
/*
 * listen.c - subscriptions/listen, 2026-07-28's replacement of the GET
 * stream: a request that stays open, first answered with
 * notifications/subscriptions/acknowledged naming what the server will
 * deliver of what was asked, then carrying those notifications (each
 * tagged with the subscription's id, the request's id) until the client
 * ends it (closing its HTTP stream, or notifications/cancelled on stdio)
 * or the server does (notifications/cancelled for it, then its final
 * result). A `toolsListChanged` subscription fires when the runtime's
 * tools change (an MCP source behind the server re-listed its tools:
 * srv_tools_announce); prompts and resources change nothing here and are
 * not acknowledged.
 */
#include <stdlib.h>
#include <string.h>

#include "server.h"

#define META_SUB "io.modelcontextprotocol/subscriptionId"

int srv_listen_start(srv_ctx *c)
{
    const json_t *want = json_object_get(srv_params(c), "notifications");
    if (want != NULL && !json_is_object(want)) {
        srv_send_error(c->srv, c->out, c->version, c->method, c->id,
                       TG_RPC_INVALID_PARAMS,
                       "Invalid params: notifications must be an object", NULL);
        return 0;
    }
    srv_req *r = calloc(1, sizeof *r);
    json_t *honoured = json_object();
    if (r == NULL || honoured == NULL) {
        free(r);
        json_decref(honoured);
        srv_send_error(c->srv, c->out, c->version, c->method, c->id,
                       TG_RPC_INTERNAL_ERROR, "Internal error: out of memory",
                       NULL);
        return 0;
    }
    if (json_is_true(json_object_get(want, "toolsListChanged"))) {
        json_object_set_new(honoured, "toolsListChanged", json_true());
        r->tools_sub = true;
    }
    r->srv = c->srv;
    r->version = c->version;
    r->listen = true;
    r->retry_answer = -1;
    r->id = json_incref((json_t *)c->id);
    r->s = c->s;
    srv_session_hold(c->s);
    r->out = c->out;
    srv_out_ref(c->out);
    srv_req_link(r);
    c->srv->live++;
    c->ans->streams = true;
    srv_send_json(
        c->srv, c->out, c->version, NULL, SRV_MSG_NOTIFICATION,
        json_pack("{s:s,s:s,s:{s:{s:O},s:o}}", "jsonrpc", "2.0", "method",
                  "notifications/subscriptions/acknowledged", "params", "_meta",
                  META_SUB, r->id, "notifications", honoured));
    return 1;
}

void srv_listen_end(srv_req *r, bool by_server)
{
    tg__srv *srv = r->srv;
    if (by_server) {
        srv_send_json(srv, r->out, r->version, NULL, SRV_MSG_NOTIFICATION,
                      json_pack("{s:s,s:s,s:{s:O,s:s}}", "jsonrpc", "2.0",
                                "method", "notifications/cancelled", "params",
                                "requestId", r->id, "reason",
                                "the server is shutting down"));
        srv_send_result(srv, r->out, r->version, "subscriptions/listen", r->id,
                        json_pack("{s:{s:O}}", "_meta", META_SUB, r->id));
    }
    srv_req_free(r);
    srv_check_stopped(srv);
}

void srv_listen_end_all(tg__srv *srv)
{
    for (srv_session *s = srv->sessions; s != NULL; s = s->next)
        for (srv_req *r = s->reqs, *next; r != NULL; r = next) {
            next = r->snext;
            if (r->listen)
                srv_listen_end(r, true);
        }
}

void srv_tools_announce(tg__srv *srv)
{
    unsigned long gen = tg_runtime_tools_generation(srv->rt);
    if (gen == srv->announced_gen)
        return;
    srv->announced_gen = gen;
    for (srv_session *s = srv->sessions; s != NULL; s = s->next) {
        if (s->ended)
            continue;
        if (s->initialized && s->version != TG_MCP_V2026_07_28 &&
            s->notify != NULL)
            srv_send_json(srv, s->notify, s->version, NULL,
                          SRV_MSG_NOTIFICATION,
                          json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method",
                                    "notifications/tools/list_changed"));
        for (srv_req *r = s->reqs; r != NULL; r = r->snext)
            if (r->listen && r->tools_sub)
                srv_send_json(
                    srv, r->out, r->version, NULL, SRV_MSG_NOTIFICATION,
                    json_pack("{s:s,s:s,s:{s:{s:O}}}", "jsonrpc", "2.0",
                              "method", "notifications/tools/list_changed",
                              "params", "_meta", META_SUB, r->id));
    }
}
