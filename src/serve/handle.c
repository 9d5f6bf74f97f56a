/* SPDX-License-Identifier: MIT */
/*
 * handle.c - the way in for every message a client sends (srv_handle):
 * size and nesting limits, JSON-RPC 2.0 (one message: no protocol version
 * served has batches), which protocol version the message speaks - the
 * session's, negotiated by initialize, or under 2026-07-28 the one its
 * `_meta` names, checked against the HTTP headers in the order the
 * specification gives - and then its method (methods.c) or, for a
 * notification, what it asks (initialized, cancelled).
 */
#include <string.h>

#include "server.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_LOG "io.modelcontextprotocol/logLevel"

/* 2026-07-28's own error codes (src/mcp/version.c has them all). */
enum { MCP_HEADER_MISMATCH = -32020, MCP_UNSUPPORTED_VERSION = -32022 };

static const char *str_member(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* Whether header value h (NULL: absent) is want, leaving out the optional
 * whitespace (spaces, tabs) HTTP allows around a field value. */
static bool header_is(const char *h, const char *want)
{
    if (h == NULL)
        return false;
    while (*h == ' ' || *h == '\t')
        h++;
    size_t n = strlen(h);
    while (n > 0 && (h[n - 1] == ' ' || h[n - 1] == '\t'))
        n--;
    return n == strlen(want) && memcmp(h, want, n) == 0;
}

/* An error for the whole message, before its method: on HTTP with
 * `status`. */
static void reject(srv_ctx *c, int status, int code, const char *msg,
                   json_t *data_take)
{
    srv_send_error(c->srv, c->out, c->version, c->method, c->id, code, msg,
                   data_take);
    c->ans->http_status = status;
}

/* 2026-07-28's checks of a request whose _meta names a version: the
 * headers against the body (HTTP), the required _meta members, the
 * version. Returns 0 when the request may go on. */
static int check_modern(srv_ctx *c, const json_t *meta,
                        const srv_http_info *http)
{
    const char *v = str_member(meta, META_VERSION);
    if (http != NULL && http->protocol_version == NULL) {
        reject(c, 400, MCP_HEADER_MISMATCH,
               "Header mismatch: the MCP-Protocol-Version header is missing",
               NULL);
        return -1;
    }
    if (v == NULL || !json_is_object(json_object_get(meta, META_CAPS))) {
        reject(c, 400, TG_RPC_INVALID_PARAMS,
               "Invalid params: _meta needs "
               "\"" META_VERSION "\" (a string) and "
               "\"" META_CAPS "\" (an object)",
               NULL);
        return -1;
    }
    if (http != NULL && strcmp(http->protocol_version, v) != 0) {
        reject(c, 400, MCP_HEADER_MISMATCH,
               "Header mismatch: the MCP-Protocol-Version header does not "
               "match the request's _meta protocol version",
               NULL);
        return -1;
    }
    if (srv_version_parse(v) != TG_MCP_V2026_07_28) {
        json_t *data = json_pack("{s:o,s:s}", "supported",
                                 json_loads(tg__mcp_supported_json(), 0, NULL),
                                 "requested", v);
        reject(c, 400, MCP_UNSUPPORTED_VERSION, "Unsupported protocol version",
               data);
        return -1;
    }
    if (http != NULL) {
        const char *name = NULL;
        if (strcmp(c->method, "tools/call") == 0)
            name = str_member(srv_params(c), "name");
        else if (strcmp(c->method, "resources/read") == 0)
            name = str_member(srv_params(c), "uri");
        else if (strcmp(c->method, "tasks/get") == 0 ||
                 strcmp(c->method, "tasks/update") == 0 ||
                 strcmp(c->method, "tasks/cancel") == 0)
            name = str_member(srv_params(c), "taskId");
        if (!header_is(http->mcp_method, c->method)) {
            reject(c, 400, MCP_HEADER_MISMATCH,
                   "Header mismatch: the Mcp-Method header does not match "
                   "the request's method",
                   NULL);
            return -1;
        }
        if (name != NULL && !header_is(http->mcp_name, name)) {
            reject(c, 400, MCP_HEADER_MISMATCH,
                   "Header mismatch: the Mcp-Name header does not match the "
                   "request's name",
                   NULL);
            return -1;
        }
    }
    const char *lvl = str_member(meta, META_LOG);
    if (lvl != NULL && (c->log_level = srv_log_level_parse(lvl)) < 0) {
        reject(c, 400, TG_RPC_INVALID_PARAMS,
               "Invalid params: unknown log level in _meta", NULL);
        return -1;
    }
    return 0;
}

/* A notification of the client. */
static void notification(srv_ctx *c)
{
    if (strcmp(c->method, "notifications/initialized") == 0) {
        srv_warn_session(c->srv, c->s);
        return;
    }
    if (strcmp(c->method, "notifications/cancelled") == 0) {
        const json_t *rid = json_object_get(srv_params(c), "requestId");
        srv_req *r = rid != NULL ? srv_req_find(c->s, rid) : NULL;
        const char *why = str_member(srv_params(c), "reason");
        if (r != NULL)
            srv_req_cancel(c->srv, r,
                           why != NULL ? why
                                       : "canceled by the "
                                         "client");
    }
    /* Others (progress of the client, roots changes) need nothing. */
}

/* The id of a message as a JSON value (new ref), NULL when it has none. */
static json_t *id_value(const tg__rpc_msg *m)
{
    if (m->id.kind == TG_RPC_ID_INT)
        return json_integer(m->id.num);
    if (m->id.kind == TG_RPC_ID_STRING)
        return json_stringn(m->id.str, m->id.str_len);
    return NULL;
}

const json_t *srv_params(srv_ctx *c)
{
    if (!c->params_made) {
        c->params_made = true;
        if (c->rpc != NULL && c->msg != NULL && c->msg->params != NULL)
            c->params_json = tg__rpc_params_json(c->rpc, c->msg);
    }
    return c->params_json;
}

bool srv_param_find(const srv_ctx *c, const char *const *path, size_t n,
                    tg__rpc_value *out)
{
    return c->rpc != NULL && c->msg != NULL &&
           tg__rpc_params_find(c->rpc, c->msg, path, n, out) == 1;
}

void srv_handle(tg__srv *srv, srv_session *s, const char *body, size_t len,
                srv_out *out, const srv_http_info *http, srv_answer *ans)
{
    memset(ans, 0, sizeof *ans);
    ans->http_status = 202;
    srv_ctx c = {.srv = srv, .s = s, .out = out, .ans = ans, .log_level = -1};
    c.version = s->initialized ? s->version : TG_MCP_VERSION_LATEST_INITIALIZE;
    tg__rpc_limits lim = {.max_bytes = srv->max_message,
                          .max_depth = (unsigned)srv->max_depth,
                          .batches = false};
    tg__rpc_batch b;
    json_t *id = NULL; /* new ref */
    int rc = tg__rpc_read(&b, body, len, &lim);
    if (rc != 0 || b.fail_code != 0) {
        reject(&c, len > srv->max_message ? 413 : 400,
               rc != 0 ? TG_RPC_INTERNAL_ERROR : b.fail_code,
               rc != 0 ? "Internal error: out of memory" : b.fail_message,
               NULL);
        goto done;
    }
    const tg__rpc_msg *m = &b.msgs[0];
    c.id = id = id_value(m);
    if (m->kind == TG_RPC_INVALID) {
        reject(&c, 400, m->fail_code, m->fail_message, NULL);
        goto done;
    }
    if (m->kind == TG_RPC_RESULT || m->kind == TG_RPC_ERROR) {
        /* A response of the client: to a request this server sent. */
        json_t *result =
            m->kind == TG_RPC_RESULT
                ? json_loadb(m->result, m->result_len, JSON_DECODE_ANY, NULL)
                : NULL;
        srv_client_response(srv, s, id, result, m->kind == TG_RPC_ERROR);
        json_decref(result);
        goto done;
    }
    c.method = m->method;
    c.rpc = &b;
    c.msg = m;
    static const char *const version_path[] = {"_meta", META_VERSION};
    tg__rpc_value vv;
    bool modern =
        srv_param_find(&c, version_path, 2, &vv) ||
        (http != NULL && http->protocol_version != NULL &&
         srv_version_parse(http->protocol_version) == TG_MCP_V2026_07_28);
    if (modern) {
        const json_t *meta = json_object_get(srv_params(&c), "_meta");
        c.version = TG_MCP_V2026_07_28;
        if (c.id == NULL) {
            notification(&c);
            goto done;
        }
        if (check_modern(&c, meta, http) != 0)
            goto done;
        c.caps = json_object_get(meta, META_CAPS);
    } else if (c.id == NULL) {
        notification(&c);
        goto done;
    } else if (!s->initialized && strcmp(c.method, "initialize") != 0 &&
               strcmp(c.method, "ping") != 0) {
        reject(&c, 400, TG_RPC_INVALID_REQUEST,
               "Invalid Request: the session is not initialized (send "
               "initialize first, or name the protocol version in _meta)",
               NULL);
        goto done;
    } else {
        c.log_level = s->log_level;
        c.caps = s->client_caps;
    }
    ans->http_status = 200;
    if (srv_method(&c) == 1)
        ans->pending++;
done:
    json_decref(c.params_json);
    json_decref(id);
    tg__rpc_batch_cleanup(&b);
}
