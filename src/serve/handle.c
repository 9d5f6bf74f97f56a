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

/* JSON-RPC and MCP error codes (notes: spec "3.2 Error codes"). */
enum {
    RPC_PARSE = -32700,
    RPC_INVALID_REQUEST = -32600,
    RPC_METHOD_NOT_FOUND = -32601,
    RPC_INVALID_PARAMS = -32602,
    MCP_HEADER_MISMATCH = -32020,
    MCP_UNSUPPORTED_VERSION = -32022
};

/* How deep text nests ([ and { outside strings), stopping past `max`. */
static int nesting(const char *p, size_t len, int max)
{
    int depth = 0, deepest = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        char ch = p[i];
        if (in_str) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_str = false;
        } else if (ch == '"') {
            in_str = true;
        } else if (ch == '[' || ch == '{') {
            if (++depth > deepest && (deepest = depth) > max)
                return deepest;
        } else if (ch == ']' || ch == '}') {
            depth--;
        }
    }
    return deepest;
}

static const char *str_member(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
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

/* The supported versions as a JSON array (new ref). */
static json_t *supported(void)
{
    return json_pack("[sss]", "2026-07-28", "2025-11-25", "2025-06-18");
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
        reject(c, 400, RPC_INVALID_PARAMS,
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
    if (srv_version_parse(v) != SRV_V2026) {
        json_t *data =
            json_pack("{s:o,s:s}", "supported", supported(), "requested", v);
        reject(c, 400, MCP_UNSUPPORTED_VERSION, "Unsupported protocol version",
               data);
        return -1;
    }
    if (http != NULL) {
        const char *name = NULL;
        if (strcmp(c->method, "tools/call") == 0)
            name = str_member(c->params, "name");
        else if (strcmp(c->method, "resources/read") == 0)
            name = str_member(c->params, "uri");
        if (http->mcp_method == NULL ||
            strcmp(http->mcp_method, c->method) != 0) {
            reject(c, 400, MCP_HEADER_MISMATCH,
                   "Header mismatch: the Mcp-Method header does not match "
                   "the request's method",
                   NULL);
            return -1;
        }
        if (name != NULL &&
            (http->mcp_name == NULL || strcmp(http->mcp_name, name) != 0)) {
            reject(c, 400, MCP_HEADER_MISMATCH,
                   "Header mismatch: the Mcp-Name header does not match the "
                   "request's name",
                   NULL);
            return -1;
        }
    }
    const char *lvl = str_member(meta, META_LOG);
    if (lvl != NULL && (c->log_level = srv_log_level_parse(lvl)) < 0) {
        reject(c, 400, RPC_INVALID_PARAMS,
               "Invalid params: unknown log level in _meta", NULL);
        return -1;
    }
    return 0;
}

/* A notification of the client. */
static void notification(srv_ctx *c)
{
    if (strcmp(c->method, "notifications/initialized") == 0)
        return;
    if (strcmp(c->method, "notifications/cancelled") == 0) {
        const json_t *rid = json_object_get(c->params, "requestId");
        srv_req *r = rid != NULL ? srv_req_find(c->s, rid) : NULL;
        const char *why = str_member(c->params, "reason");
        if (r != NULL)
            srv_req_cancel(c->srv, r,
                           why != NULL ? why
                                       : "canceled by the "
                                         "client");
    }
    /* Others (progress of the client, roots changes) need nothing. */
}

void srv_handle(tg_srv *srv, srv_session *s, const char *body, size_t len,
                srv_out *out, const srv_http_info *http, srv_answer *ans)
{
    memset(ans, 0, sizeof *ans);
    ans->http_status = 202;
    srv_ctx c = {.srv = srv, .s = s, .out = out, .ans = ans, .log_level = -1};
    c.version = s->initialized ? s->version : SRV_V_INIT_LATEST;
    json_t *msg = NULL; /* new ref */
    if (len > srv->max_message) {
        reject(&c, 413, RPC_INVALID_REQUEST,
               "Invalid Request: the message is larger than the limit", NULL);
        return;
    }
    if (nesting(body, len, srv->max_depth) > srv->max_depth) {
        reject(&c, 400, RPC_PARSE, "Parse error: the message nests too deep",
               NULL);
        return;
    }
    json_error_t jerr;
    msg = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    if (msg == NULL) {
        char m[256];
        snprintf(m, sizeof m, "Parse error: %s", jerr.text);
        reject(&c, 400, RPC_PARSE, m, NULL);
        return;
    }
    if (json_is_array(msg)) {
        reject(&c, 400, RPC_INVALID_REQUEST,
               "Invalid Request: JSON-RPC batches are not supported by the "
               "MCP versions served (2025-06-18 and later)",
               NULL);
        goto done;
    }
    const json_t *idv = json_object_get(msg, "id");
    if (json_is_string(idv) || json_is_integer(idv))
        c.id = idv;
    const char *jv = str_member(msg, "jsonrpc");
    const json_t *mv = json_object_get(msg, "method");
    if (!json_is_object(msg) || jv == NULL || strcmp(jv, "2.0") != 0) {
        reject(&c, 400, RPC_INVALID_REQUEST,
               "Invalid Request: not a JSON-RPC 2.0 message "
               "(\"jsonrpc\":\"2.0\" missing)",
               NULL);
        goto done;
    }
    if (mv == NULL) {
        /* A response of the client: to a request this server sent. */
        goto done;
    }
    if (!json_is_string(mv)) {
        reject(&c, 400, RPC_INVALID_REQUEST,
               "Invalid Request: method must be a string", NULL);
        goto done;
    }
    c.method = json_string_value(mv);
    c.params = json_object_get(msg, "params");
    if (c.params != NULL && !json_is_object(c.params)) {
        reject(&c, 400, RPC_INVALID_REQUEST,
               "Invalid Request: params must be an object", NULL);
        goto done;
    }
    if (idv != NULL && c.id == NULL) {
        reject(&c, 400, RPC_INVALID_REQUEST,
               "Invalid Request: the id must be a string or an integer", NULL);
        goto done;
    }
    const json_t *meta = json_object_get(c.params, "_meta");
    bool modern = json_object_get(meta, META_VERSION) != NULL ||
                  (http != NULL && http->protocol_version != NULL &&
                   srv_version_parse(http->protocol_version) == SRV_V2026);
    if (modern) {
        c.version = SRV_V2026;
        if (c.id == NULL) {
            notification(&c);
            goto done;
        }
        if (check_modern(&c, meta, http) != 0)
            goto done;
    } else if (c.id == NULL) {
        notification(&c);
        goto done;
    } else if (!s->initialized && strcmp(c.method, "initialize") != 0 &&
               strcmp(c.method, "ping") != 0) {
        reject(&c, 400, RPC_INVALID_REQUEST,
               "Invalid Request: the session is not initialized (send "
               "initialize first, or name the protocol version in _meta)",
               NULL);
        goto done;
    } else {
        c.log_level = s->log_level;
    }
    ans->http_status = 200;
    if (srv_method(&c) == 1)
        ans->pending++;
done:
    json_decref(msg);
}
