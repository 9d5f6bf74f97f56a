/* SPDX-License-Identifier: MIT */
/*
 * methods.c - the MCP requests a tools server answers at once: initialize
 * (version negotiation), ping, logging/setLevel, server/discover
 * (2026-07-28), tools/list (deterministic order, pages of 100 or more),
 * resources/list and resources/read (the caller's spooled artifacts as
 * toolgate://artifacts/<id>), and empty prompt and template lists so that
 * clients that list everything get an answer. tools/call goes to call.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "tasks.h"

#define PAGE 100
#define TTL_MS 60000
#define RESOURCES_SCAN 10000 /* the caller's results resources/list reads */
#define ARTIFACT_URI "toolgate://artifacts/"
#define SERVER_NAME "toolgate"

enum {
    RPC_METHOD_NOT_FOUND = -32601,
    RPC_INVALID_PARAMS = -32602,
    RPC_INTERNAL = -32603,
    MCP_RESOURCE_NOT_FOUND = -32002
};

static const char *const levels[] = {"debug",   "info",     "notice",
                                     "warning", "error",    "critical",
                                     "alert",   "emergency"};

int srv_log_level_parse(const char *name)
{
    for (int i = 0; name != NULL && i < 8; i++)
        if (strcmp(name, levels[i]) == 0)
            return i;
    return -1;
}

const char *srv_log_level_name(int level)
{
    return level >= 0 && level < 8 ? levels[level] : "info";
}

static void reply(srv_ctx *c, json_t *result_take)
{
    srv_send_result(c->srv, c->out, c->version, c->method, c->id, result_take);
}

void srv_reply(srv_ctx *c, json_t *result_take)
{
    reply(c, result_take);
}

static void fail(srv_ctx *c, int code, const char *fmt, const char *arg)
{
    char m[512];
    snprintf(m, sizeof m, fmt, arg != NULL ? arg : "");
    if (c->version == TG_MCP_V2026_07_28 && code == RPC_METHOD_NOT_FOUND)
        c->ans->http_status = 404;
    srv_send_error(c->srv, c->out, c->version, c->method, c->id, code, m, NULL);
}

/* Cache hints of a 2026-07-28 list or read result. */
static void cache_hints(srv_ctx *c, json_t *result, const char *scope)
{
    if (c->version != TG_MCP_V2026_07_28)
        return;
    json_object_set_new(result, "ttlMs", json_integer(TTL_MS));
    json_object_set_new(result, "cacheScope", json_string(scope));
}

static json_t *capabilities(const srv_ctx *c)
{
    /* prompts: prompts/list answers (an empty list), so it is declared;
     * the tool list changes only when MCP servers behind it change theirs */
    json_t *caps =
        json_pack("{s:{s:b},s:{},s:{}}", "tools", "listChanged",
                  (int)c->srv->tools_may_change, "logging", "prompts");
    if (c->srv->spool_dir != NULL)
        json_object_set_new(caps, "resources", json_object());
    if (c->version == TG_MCP_V2026_07_28)
        json_object_del(caps, "logging"); /* per request there */
    srv_tasks_capabilities(c, caps);
    return caps;
}

static void m_initialize(srv_ctx *c)
{
    const char *want =
        json_string_value(json_object_get(srv_params(c), "protocolVersion"));
    int v = srv_version_parse(want);
    /* A version this server speaks through initialize is answered as
     * asked; any other gets the newest one (the client decides). */
    if (v < 0 || v == TG_MCP_V2026_07_28)
        v = TG_MCP_VERSION_LATEST_INITIALIZE;
    srv_session *s = c->s;
    s->version = (tg__mcp_version)v;
    s->initialized = true;
    json_decref(s->client_caps);
    json_decref(s->client_info);
    s->client_caps =
        json_incref(json_object_get(srv_params(c), "capabilities"));
    s->client_info = json_incref(json_object_get(srv_params(c), "clientInfo"));
    c->version = s->version;
    c->ans->initialized = true;
    json_t *r = json_pack(
        "{s:s,s:o,s:{s:s,s:s,s:s},s:s}", "protocolVersion",
        tg__mcp_version_name(s->version), "capabilities", capabilities(c),
        "serverInfo", "name", SERVER_NAME, "title",
        "toolgate - every tool call through the gate", "version",
        TOOLGATE_VERSION_STRING, "instructions",
        "Tools run through toolgate: arguments are checked against each "
        "tool's schema and a permission policy, every call is journaled, "
        "and large output is returned as an artifact handle that the "
        "artifact_* tools read.");
    reply(c, r);
}

static void m_discover(srv_ctx *c)
{
    json_t *r =
        json_pack("{s:o,s:o}", "supportedVersions",
                  json_pack("[sss]", "2026-07-28", "2025-11-25", "2025-06-18"),
                  "capabilities", capabilities(c));
    cache_hints(c, r, "public");
    reply(c, r);
}

static void m_set_level(srv_ctx *c)
{
    int lvl = srv_log_level_parse(
        json_string_value(json_object_get(srv_params(c), "level")));
    if (lvl < 0) {
        fail(c, RPC_INVALID_PARAMS,
             "Invalid params: level must be one of debug, info, notice, "
             "warning, error, critical, alert, emergency%s",
             NULL);
        return;
    }
    c->s->log_level = lvl;
    reply(c, json_object());
}

/* Lets go of lists made before the runtime's tools last changed. */
static void tools_fresh(tg__srv *srv)
{
    unsigned long gen = tg_runtime_tools_generation(srv->rt);
    if (gen != srv->tools_gen) {
        srv_tools_free(srv);
        srv->tools_gen = gen;
    }
}

const tg__mcp_tools *srv_tools(tg__srv *srv)
{
    tools_fresh(srv);
    if (srv->tools != NULL)
        return srv->tools;
    char *text = NULL;
    if (tg_runtime_tools(srv->rt, "mcp", &text, NULL) != 0)
        return NULL;
    (void)tg__mcp_tools_new(text, strlen(text), &srv->tools, NULL);
    tg_free(text);
    return srv->tools;
}

struct srv_caller_tools {
    struct srv_caller_tools *next;
    tg__mcp_tools *tools;
    char caller[]; /* "" for none */
};

const tg__mcp_tools *srv_tools_for(tg__srv *srv, const char *caller)
{
    const char *key = caller != NULL ? caller : "";
    tools_fresh(srv);
    for (struct srv_caller_tools *t = srv->caller_tools; t != NULL; t = t->next)
        if (strcmp(t->caller, key) == 0)
            return t->tools;
    size_t kl = strlen(key);
    struct srv_caller_tools *t = calloc(1, sizeof *t + kl + 1);
    char *text = NULL;
    if (t == NULL ||
        tg_runtime_tools_for(srv->rt, "mcp", caller, &text, NULL) != 0 ||
        tg__mcp_tools_new(text, strlen(text), &t->tools, NULL) != 0) {
        tg_free(text);
        free(t);
        return NULL;
    }
    tg_free(text);
    memcpy(t->caller, key, kl + 1);
    t->next = srv->caller_tools;
    srv->caller_tools = t;
    return t->tools;
}

void srv_tools_free(tg__srv *srv)
{
    tg__mcp_tools_free(srv->tools);
    srv->tools = NULL;
    while (srv->caller_tools != NULL) {
        struct srv_caller_tools *t = srv->caller_tools;
        srv->caller_tools = t->next;
        tg__mcp_tools_free(t->tools);
        free(t);
    }
}

/* A page of `list` from the cursor (the index of its first item, as
 * text), `key` the member to put it in. */
static void page(srv_ctx *c, const json_t *list, const char *key,
                 const char *scope)
{
    size_t from = 0, n = json_array_size(list);
    const json_t *cur = json_object_get(srv_params(c), "cursor");
    if (cur != NULL) {
        const char *t = json_string_value(cur);
        char *end = NULL;
        unsigned long long v = t != NULL ? strtoull(t, &end, 10) : 0;
        if (t == NULL || end == t || *end != '\0' || v > n) {
            fail(c, RPC_INVALID_PARAMS, "Invalid params: unknown cursor%s",
                 NULL);
            return;
        }
        from = (size_t)v;
    }
    json_t *items = json_array();
    for (size_t i = from; i < n && i < from + PAGE; i++)
        json_array_append(items, json_array_get(list, i));
    json_t *r = json_pack("{s:o}", key, items);
    if (from + PAGE < n) {
        char next[32];
        snprintf(next, sizeof next, "%zu", from + PAGE);
        json_object_set_new(r, "nextCursor", json_string(next));
    }
    cache_hints(c, r, scope);
    reply(c, r);
}

/* The _meta members of every 2026-07-28 result: who answers. */
static const char server_info_member[] =
    "\"io.modelcontextprotocol/serverInfo\":{\"name\":\"" SERVER_NAME
    "\",\"version\":\"" TOOLGATE_VERSION_STRING "\"}";

const char *srv_meta_members(tg__mcp_version v)
{
    return v == TG_MCP_V2026_07_28 ? server_info_member : NULL;
}

static void m_tools_list(srv_ctx *c)
{
    /* a client is offered only what its caller may run */
    const tg__mcp_tools *tools =
        srv_tools_for(c->srv, srv_session_caller(c->s));
    if (tools == NULL) {
        fail(c, RPC_INTERNAL, "Internal error: cannot list the tools%s", NULL);
        return;
    }
    const char *cur =
        json_string_value(json_object_get(srv_params(c), "cursor"));
    if (json_object_get(srv_params(c), "cursor") != NULL && cur == NULL) {
        fail(c, RPC_INVALID_PARAMS, "Invalid params: unknown cursor%s", NULL);
        return;
    }
    tg__buf page;
    tg__buf_init(&page, 0);
    /* Every tool on one page unless there are very many: clients that read
     * one page see them all. */
    tg__mcp_page_opts opts = {
        .page_size = 0, .ttl_ms = TTL_MS, .task_support = SRV_TASK_SUPPORT};
    int rc = tg__mcp_tools_page(&page, tools, c->version, cur,
                                cur != NULL ? strlen(cur) : 0, &opts,
                                srv_meta_members(c->version));
    if (rc == TG_EINVAL)
        fail(c, RPC_INVALID_PARAMS, "Invalid params: unknown cursor%s", NULL);
    else if (rc != 0)
        fail(c, RPC_INTERNAL, "Internal error: out of memory%s", NULL);
    else
        srv_send_result_text(c->srv, c->out, c->version, c->method, c->id,
                             page.data, page.len);
    tg__buf_cleanup(&page);
}

static void m_empty_list(srv_ctx *c, const char *key)
{
    json_t *empty = json_array();
    page(c, empty, key, "public");
    json_decref(empty);
}

/* ------------------------------------------------------------ artifacts */

static tg_spool *open_spool(srv_ctx *c)
{
    tg_spool *sp = NULL;
    if (c->srv->spool_dir == NULL ||
        tg_spool_open(c->srv->spool_dir, TG_SPOOL_NO_CREATE, &sp, NULL) != 0)
        return NULL;
    return sp;
}

/* The artifacts the caller's calls produced, as an object whose keys are
 * their ids (new ref), from the caller's most recent results in the
 * journal; NULL when there is no journal to tell (every artifact is then
 * the one caller's). */
static json_t *caller_artifacts(srv_ctx *c)
{
    if (c->srv->journal == NULL)
        return NULL;
    tg_history_query q = {.caller = srv_session_caller(c->s),
                          .limit = RESOURCES_SCAN};
    char *text = NULL;
    json_t *ids = json_object();
    if (tg_journal_history(c->srv->journal, &q, &text, NULL) == 0) {
        json_t *rows = json_loads(text, 0, NULL); /* new ref */
        size_t i;
        json_t *row; /* borrowed */
        json_array_foreach(rows, i, row)
        {
            const char *id = json_string_value(
                json_object_get(json_object_get(row, "artifact"), "id"));
            if (id != NULL)
                json_object_set_new(ids, id, json_true());
        }
        json_decref(rows);
    }
    tg_free(text);
    return ids;
}

static void m_resources_list(srv_ctx *c)
{
    json_t *mine = caller_artifacts(c); /* new ref, or NULL: all */
    tg_spool *sp = open_spool(c);
    char *text = NULL;
    json_t *list = json_array(), *arts = NULL;
    if (sp != NULL && tg_artifact_list(sp, &text, NULL) == 0)
        arts = json_loads(text, 0, NULL);
    tg_free(text);
    tg_spool_free(sp);
    size_t i;
    json_t *a;
    json_array_foreach(arts, i, a)
    {
        const char *id = json_string_value(json_object_get(a, "id"));
        const char *state = json_string_value(json_object_get(a, "state"));
        if (id == NULL || (state != NULL && strcmp(state, "stored") != 0) ||
            (mine != NULL && json_object_get(mine, id) == NULL))
            continue;
        char uri[128];
        snprintf(uri, sizeof uri, ARTIFACT_URI "%s", id);
        json_array_append_new(
            list,
            json_pack("{s:s,s:s,s:s,s:O?}", "uri", uri, "name", id, "mimeType",
                      json_string_value(json_object_get(a, "media_type"))
                          ? json_string_value(json_object_get(a, "media_type"))
                          : "application/octet-stream",
                      "size", json_object_get(a, "bytes")));
    }
    json_decref(arts);
    json_decref(mine);
    page(c, list, "resources", "private");
    json_decref(list);
}

/* "Resource not found", its data naming the URI as the specification's
 * examples do (uri NULL: the request had none). */
static void not_found(srv_ctx *c, int code, const char *uri)
{
    char m[512];
    snprintf(m, sizeof m, "Resource not found: %s", uri ? uri : "(no uri)");
    srv_send_error(c->srv, c->out, c->version, c->method, c->id, code, m,
                   uri != NULL ? json_pack("{s:s}", "uri", uri) : NULL);
}

static void m_resources_read(srv_ctx *c)
{
    const char *uri = json_string_value(json_object_get(srv_params(c), "uri"));
    int nf = c->version == TG_MCP_V2026_07_28 ? RPC_INVALID_PARAMS
                                              : MCP_RESOURCE_NOT_FOUND;
    if (uri == NULL || strncmp(uri, ARTIFACT_URI, strlen(ARTIFACT_URI)) != 0) {
        not_found(c, nf, uri);
        return;
    }
    const char *id = uri + strlen(ARTIFACT_URI);
    json_t *mine = caller_artifacts(c); /* new ref, or NULL: all */
    bool theirs = mine != NULL && json_object_get(mine, id) == NULL;
    json_decref(mine);
    if (theirs) {
        /* another caller's output: not even its existence is told */
        fail(c, nf, "Resource not found: %s", uri);
        return;
    }
    tg_spool *sp = open_spool(c);
    char *stat = NULL, *data = NULL;
    size_t n = 0;
    if (sp == NULL || tg_artifact_stat(sp, id, &stat, NULL) != 0 ||
        tg_artifact_read(sp, id, 0, (size_t)16 << 20, &data, &n, NULL) != 0) {
        tg_spool_free(sp);
        tg_free(stat);
        not_found(c, nf, uri);
        return;
    }
    tg_spool_free(sp);
    json_t *st = json_loads(stat, 0, NULL);
    tg_free(stat);
    const char *mt = json_string_value(json_object_get(st, "media_type"));
    json_t *text = json_stringn(data, n); /* NULL when not UTF-8 */
    tg_free(data);
    json_t *content =
        json_pack("{s:s,s:s}", "uri", uri, "mimeType", mt ? mt : "text/plain");
    json_decref(st);
    if (text == NULL) {
        json_decref(content);
        fail(c, RPC_INTERNAL,
             "artifact %s is binary: read it with the artifact_read tool", id);
        return;
    }
    json_object_set_new(content, "text", text);
    json_t *r = json_pack("{s:[o]}", "contents", content);
    cache_hints(c, r, "private");
    reply(c, r);
}

/* ------------------------------------------------------------ dispatch */

int srv_method(srv_ctx *c)
{
    const char *m = c->method;
    bool modern = c->version == TG_MCP_V2026_07_28;
    if (strcmp(m, "tools/call") == 0)
        return srv_call_start(c);
    if (srv_tasks_method(c))
        return 0;
    if (strcmp(m, "tools/list") == 0)
        m_tools_list(c);
    else if (!modern && strcmp(m, "initialize") == 0)
        m_initialize(c);
    else if (!modern && strcmp(m, "ping") == 0)
        reply(c, json_object());
    else if (!modern && strcmp(m, "logging/setLevel") == 0)
        m_set_level(c);
    else if (modern && strcmp(m, "subscriptions/listen") == 0)
        return srv_listen_start(c);
    else if (modern && strcmp(m, "server/discover") == 0)
        m_discover(c);
    else if (strcmp(m, "resources/list") == 0)
        m_resources_list(c);
    else if (strcmp(m, "resources/read") == 0)
        m_resources_read(c);
    else if (strcmp(m, "resources/templates/list") == 0)
        m_empty_list(c, "resourceTemplates");
    else if (strcmp(m, "prompts/list") == 0)
        m_empty_list(c, "prompts");
    else
        fail(c, RPC_METHOD_NOT_FOUND, "Method not found: %s", m);
    return 0;
}
