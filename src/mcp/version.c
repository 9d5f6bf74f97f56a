/* SPDX-License-Identifier: MIT */
/*
 * version.c - the table of MCP protocol versions and their traits
 * (version.h), read from each version's specification: its changelog,
 * basic/index (error codes), the transports page and its schema.json.
 */
#include "version.h"

#include <string.h>

static const tg__mcp_traits table[] = {
    {
        .version = TG_MCP_V2025_03_26,
        .name = "2025-03-26",
        .spoken = false,
        .initialize = true,
        .sessions = true,
        .batches = true,
        .ping = true,
        .set_level = true,
        .get_stream = true,
        .resumable = true,
        .error_id_optional = false,
        .input = TG_MCP_INPUT_ELICITATION,
        .err_resource_not_found = -32002,
    },
    {
        .version = TG_MCP_V2025_06_18,
        .name = "2025-06-18",
        .spoken = true,
        .initialize = true,
        .sessions = true,
        .batches = false, /* removed by 2025-06-18 */
        .ping = true,
        .set_level = true,
        .get_stream = true,
        .resumable = true,
        .error_id_optional = false,
        .input = TG_MCP_INPUT_ELICITATION,
        .err_resource_not_found = -32002,
    },
    {
        .version = TG_MCP_V2025_11_25,
        .name = "2025-11-25",
        .spoken = true,
        .initialize = true,
        .sessions = true,
        .ping = true,
        .set_level = true,
        .get_stream = true,
        .resumable = true,
        .error_id_optional = true,
        .tasks = TG_MCP_TASKS_CORE,
        .input = TG_MCP_INPUT_ELICITATION,
        .err_resource_not_found = -32002,
        .err_url_elicitation_required = -32042,
    },
    {
        .version = TG_MCP_V2026_07_28,
        .name = "2026-07-28",
        .spoken = true,
        .result_type = true,
        .discover = true,
        .request_meta = true,
        .subscriptions_listen = true,
        .method_headers = true,
        .cancel_on_disconnect = true,
        .cacheable_lists = true,
        .structured_any = true,
        .error_id_optional = true,
        .tasks = TG_MCP_TASKS_EXTENSION,
        .input = TG_MCP_INPUT_REQUIRED_RESULT,
        .err_header_mismatch = -32020,
        .err_missing_client_capability = -32021,
        .err_unsupported_protocol_version = -32022,
        .err_resource_not_found = -32602,
    },
};

#define NVERSIONS (sizeof table / sizeof table[0])

tg__mcp_version tg__mcp_version_from_name(const char *name, size_t len)
{
    if (name == NULL || len != 10)
        return TG_MCP_VERSION_UNKNOWN;
    for (size_t i = 0; i < NVERSIONS; i++)
        if (memcmp(table[i].name, name, 10) == 0)
            return table[i].version;
    return TG_MCP_VERSION_UNKNOWN;
}

const tg__mcp_traits *tg__mcp_traits_of(tg__mcp_version v)
{
    for (size_t i = 0; i < NVERSIONS; i++)
        if (table[i].version == v)
            return &table[i];
    return NULL;
}

const char *tg__mcp_version_name(tg__mcp_version v)
{
    const tg__mcp_traits *t = tg__mcp_traits_of(v);
    return t != NULL ? t->name : NULL;
}

bool tg__mcp_version_spoken(tg__mcp_version v)
{
    const tg__mcp_traits *t = tg__mcp_traits_of(v);
    return t != NULL && t->spoken;
}

bool tg__mcp_version_header_ok(const char *name, size_t len)
{
    return tg__mcp_version_from_name(name, len) != TG_MCP_VERSION_UNKNOWN;
}

tg__mcp_version tg__mcp_negotiate_initialize(const char *requested, size_t len)
{
    const tg__mcp_traits *t =
        tg__mcp_traits_of(tg__mcp_version_from_name(requested, len));
    if (t != NULL && t->spoken && t->initialize)
        return t->version;
    return TG_MCP_VERSION_LATEST_INITIALIZE;
}

const char *tg__mcp_supported_json(void)
{
    return "[\"2025-06-18\",\"2025-11-25\",\"2026-07-28\"]";
}
