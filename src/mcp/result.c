/* SPDX-License-Identifier: MIT */
/*
 * result.c - the MCP results that depend on toolgate's records
 * (result.h): a call's CallToolResult per version over the shared writer
 * of src/formats/mcp_result.c, the error answer of an unknown tool, and
 * the tool list's pages with their opaque cursors.
 */
#include "result.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "format.h"
#include "hex.h"
#include "json_out.h"
#include "record.h"

int tg__mcp_call_tool_result(tg__buf *out, const tg_result *r,
                             tg__mcp_version v, unsigned flags,
                             const char *meta_members)
{
    const tg__mcp_traits *t = tg__mcp_traits_of(v);
    if (t == NULL || !t->spoken)
        return TG_EINVAL;
    unsigned ctr = t->result_type ? TG_MCP_CTR_RESULT_TYPE : 0;
    if (flags & TG_MCP_RESULT_OUTPUT_SCHEMA)
        ctr |= t->structured_any ? TG_MCP_CTR_STRUCTURED_ANY
                                 : TG_MCP_CTR_STRUCTURED;
    if (flags & TG_MCP_RESULT_DECLARED)
        ctr |= TG_MCP_CTR_DECLARED;
    /* payload texts and messages: on the stack while they fit */
    char text_mem[512], scratch_mem[256];
    tg__buf text, scratch;
    tg__buf_init_with(&text, text_mem, sizeof text_mem, 0);
    tg__buf_init_with(&scratch, scratch_mem, sizeof scratch_mem, 0);
    int rc = tg__format_mcp_call_tool_result(out, r, ctr, meta_members, &text,
                                             &scratch);
    tg__buf_cleanup(&text);
    tg__buf_cleanup(&scratch);
    return rc;
}

int tg__mcp_result_rpc_error(const tg_result *r)
{
    const char *code = tg__result_code(r);
    return code != NULL && strcmp(code, "UNKNOWN_TOOL") == 0
               ? TG_RPC_INVALID_PARAMS
               : 0;
}

int tg__mcp_write_result_error(tg__buf *out, const tg__rpc_id *id,
                               const tg_result *r)
{
    int code = tg__mcp_result_rpc_error(r);
    if (code == 0)
        return TG_EINVAL;
    /* The message the MCP specification's example uses. */
    char msg[TG_TOOL_NAME_MAX + 32];
    size_t n = strlen(r->tool);
    if (n > TG_TOOL_NAME_MAX)
        n = TG_TOOL_NAME_MAX;
    memcpy(msg, "Unknown tool: ", 14);
    memcpy(msg + 14, r->tool, n);
    msg[14 + n] = '\0';
    return tg__rpc_write_error(out, id, code, msg, NULL, 0);
}

/* ------------------------------------------------------------ tools/list */

typedef struct tool_entry {
    char *name; /* the name, NUL-terminated */
    size_t name_len;
    char *json; /* the definition, compact */
    size_t len;
    bool has_execution; /* the definition says how it executes */
    bool has_output;    /* the definition has an outputSchema */
} tool_entry;

struct tg__mcp_tools {
    tool_entry *t;
    size_t n;
};

static int cmp_names(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c != 0 ? c : (an > bn) - (an < bn);
}

static int by_name(const void *pa, const void *pb)
{
    const tool_entry *a = pa, *b = pb;
    return cmp_names(a->name, a->name_len, b->name, b->name_len);
}

void tg__mcp_tools_free(tg__mcp_tools *tools)
{
    if (tools == NULL)
        return;
    for (size_t i = 0; i < tools->n; i++) {
        free(tools->t[i].name);
        free(tools->t[i].json);
    }
    free(tools->t);
    free(tools);
}

size_t tg__mcp_tools_count(const tg__mcp_tools *tools)
{
    return tools != NULL ? tools->n : 0;
}

int tg__mcp_tools_new(const char *json, size_t len, tg__mcp_tools **out,
                      tg_error *err)
{
    json_error_t jerr;
    *out = NULL;
    json_t *doc =
        json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr); /* new ref */
    json_t *list = json_is_array(doc) ? doc : NULL;           /* borrowed */
    if (json_is_object(doc))
        list = json_object_get(doc, "tools");
    if (doc == NULL && tg__format_json_oom(&jerr))
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    if (!json_is_array(list)) {
        json_decref(doc);
        return tg__error_set(err, TG_EPARSE,
                             "tool definitions: expected {\"tools\":[...]} "
                             "or an array of MCP tool definitions");
    }
    tg__mcp_tools *tools = calloc(1, sizeof *tools);
    size_t n = json_array_size(list);
    int rc = 0;
    if (tools == NULL ||
        (n > 0 && (tools->t = calloc(n, sizeof *tools->t)) == NULL)) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *def = json_array_get(list, i);       /* borrowed */
        const json_t *name = json_object_get(def, "name"); /* borrowed */
        if (!json_is_string(name)) {
            rc = tg__error_set(err, TG_EPARSE,
                               "tool definitions: element %zu has no string "
                               "name",
                               i);
            goto fail;
        }
        tool_entry *e = &tools->t[tools->n];
        tg__buf b;
        tg__buf_init(&b, 0);
        e->name_len = json_string_length(name);
        e->has_execution = json_object_get(def, "execution") != NULL;
        e->has_output = json_object_get(def, "outputSchema") != NULL;
        e->name = malloc(e->name_len + 1);
        if (e->name != NULL)
            memcpy(e->name, json_string_value(name), e->name_len + 1);
        if (e->name == NULL || tg__json_dump(def, &b) != 0 ||
            (e->len = b.len, e->json = tg__buf_take(&b)) == NULL) {
            tg__buf_cleanup(&b);
            free(e->name);
            e->name = NULL;
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
            goto fail;
        }
        tools->n++;
    }
    if (tools->n > 1)
        qsort(tools->t, tools->n, sizeof *tools->t, by_name);
    for (size_t i = 1; i < tools->n; i++)
        if (by_name(&tools->t[i - 1], &tools->t[i]) == 0) {
            char shown[TG__SHOWN_ID_SIZE];
            rc = tg__error_set(
                err, TG_EPARSE, "tool definitions: two tools are named '%s'",
                tg__text_show(tools->t[i].name, shown, sizeof shown));
            goto fail;
        }
    json_decref(doc);
    *out = tools;
    return 0;
fail:
    json_decref(doc);
    tg__mcp_tools_free(tools);
    return rc;
}

/* The index of the first tool whose name sorts after `name` (nlen
 * bytes). */
static size_t first_after(const tg__mcp_tools *tools, const char *name,
                          size_t nlen)
{
    size_t lo = 0, hi = tools->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_names(tools->t[mid].name, tools->t[mid].name_len, name, nlen) <=
            0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The entry of the tool named `name`, or NULL. */
static const tool_entry *find(const tg__mcp_tools *tools, const char *name)
{
    if (tools == NULL || name == NULL)
        return NULL;
    size_t nlen = strlen(name), i = first_after(tools, name, nlen);
    return i > 0 && cmp_names(tools->t[i - 1].name, tools->t[i - 1].name_len,
                              name, nlen) == 0
               ? &tools->t[i - 1]
               : NULL;
}

bool tg__mcp_tools_has(const tg__mcp_tools *tools, const char *name)
{
    return find(tools, name) != NULL;
}

bool tg__mcp_tools_declares_output(const tg__mcp_tools *tools, const char *name)
{
    const tool_entry *e = find(tools, name);
    return e != NULL && e->has_output;
}

/* Appends tool e's definition, with execution.taskSupport when `support`
 * is not NULL and it has no execution of its own. */
static int put_tool(tg__buf *out, const tool_entry *e, const char *support)
{
    if (support == NULL || e->has_execution)
        return tg__buf_append(out, e->json, e->len);
    /* a definition is an object: its closing brace is its last byte */
    int rc = tg__buf_append(out, e->json, e->len - 1);
    if (rc == 0)
        rc = tg__buf_puts(out, e->len > 2 ? ",\"execution\":{\"taskSupport\":"
                                          : "\"execution\":{\"taskSupport\":");
    if (rc == 0)
        rc = tg__json_string(out, support, strlen(support));
    return rc != 0 ? rc : tg__buf_puts(out, "}}");
}

/* Cursors: "t1." and the hex of the name of the last tool of the page
 * before. */
#define CURSOR_PREFIX "t1."

static int put_cursor(tg__buf *out, const tool_entry *last)
{
    static const char digits[] = "0123456789abcdef";
    int rc = tg__buf_puts(out, ",\"nextCursor\":\"" CURSOR_PREFIX);
    for (size_t i = 0; rc == 0 && i < last->name_len; i++) {
        unsigned char c = (unsigned char)last->name[i];
        char two[2] = {digits[c >> 4], digits[c & 15]};
        rc = tg__buf_append(out, two, 2);
    }
    return rc != 0 ? rc : tg__buf_append(out, "\"", 1);
}

/* The index of the first tool after the one the cursor names, or -1 when
 * the cursor is not one of ours. */
static long long cursor_start(const tg__mcp_tools *tools, const char *cursor,
                              size_t n)
{
    size_t plen = sizeof CURSOR_PREFIX - 1;
    if (n < plen || memcmp(cursor, CURSOR_PREFIX, plen) != 0 ||
        (n - plen) % 2 != 0 || (n - plen) / 2 > TG_TOOL_NAME_MAX)
        return -1;
    char name[TG_TOOL_NAME_MAX];
    size_t nlen = (n - plen) / 2;
    for (size_t i = 0; i < nlen; i++) {
        int hi = tg__hex_value(cursor[plen + 2 * i]);
        int lo = tg__hex_value(cursor[plen + 2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        name[i] = (char)(hi << 4 | lo);
    }
    return (long long)first_after(tools, name, nlen);
}

int tg__mcp_tools_page(tg__buf *out, const tg__mcp_tools *tools,
                       tg__mcp_version v, const char *cursor, size_t cursor_len,
                       const tg__mcp_page_opts *opts, const char *meta_members)
{
    const tg__mcp_traits *t = tg__mcp_traits_of(v);
    if (t == NULL || !t->spoken)
        return TG_EINVAL;
    tg__mcp_page_opts o = {0, 0, false, NULL};
    if (opts != NULL)
        o = *opts;
    if (o.page_size == 0)
        o.page_size = TG_MCP_TOOLS_PAGE_DEFAULT;
    size_t start = 0;
    if (cursor != NULL) {
        long long s = cursor_start(tools, cursor, cursor_len);
        if (s < 0)
            return TG_EINVAL;
        start = (size_t)s;
    }
    size_t end =
        tools->n - start > o.page_size ? start + o.page_size : tools->n;
    const char *support = t->tasks == TG_MCP_TASKS_CORE ? o.task_support : NULL;
    int rc = tg__buf_puts(out, "{\"tools\":[");
    for (size_t i = start; rc == 0 && i < end; i++) {
        if (i > start)
            rc = tg__buf_append(out, ",", 1);
        if (rc == 0)
            rc = put_tool(out, &tools->t[i], support);
    }
    if (rc == 0)
        rc = tg__buf_append(out, "]", 1);
    if (rc == 0 && end < tools->n)
        rc = put_cursor(out, &tools->t[end - 1]);
    if (rc == 0 && t->cacheable_lists &&
        (rc = tg__buf_puts(out, ",\"ttlMs\":")) == 0 &&
        (rc = tg__json_integer(out, o.ttl_ms > 0 ? o.ttl_ms : 0)) == 0)
        rc = tg__buf_puts(out, o.cache_public ? ",\"cacheScope\":\"public\""
                                              : ",\"cacheScope\":\"private\"");
    if (rc == 0 && t->result_type)
        rc = tg__buf_puts(out, ",\"resultType\":\"complete\"");
    if (rc == 0 && meta_members != NULL &&
        (rc = tg__buf_puts(out, ",\"_meta\":{")) == 0 &&
        (rc = tg__buf_puts(out, meta_members)) == 0)
        rc = tg__buf_append(out, "}", 1);
    return rc != 0 ? rc : tg__buf_append(out, "}", 1);
}
