/* SPDX-License-Identifier: MIT */
/*
 * version.h - the MCP protocol versions toolgate knows, what each one has
 * that a server or a client must act on (its traits), its error codes, and
 * the initialize negotiation. Shared by the MCP server face (src/serve/)
 * and the MCP client (src/remote/); plain data, no state, thread-safe.
 *
 * 2025-03-26 is known only as a value of the MCP-Protocol-Version HTTP
 * header, which clients still send: it is never negotiated or spoken.
 */
#ifndef TG_MCP_VERSION_H
#define TG_MCP_VERSION_H

#include <stdbool.h>
#include <stddef.h>

typedef enum tg__mcp_version {
    TG_MCP_VERSION_UNKNOWN = 0,
    TG_MCP_V2025_03_26, /* header value only */
    TG_MCP_V2025_06_18,
    TG_MCP_V2025_11_25,
    TG_MCP_V2026_07_28
} tg__mcp_version;

/* The newest version spoken, and the newest of the initialize family (what
 * an initialize request asking for an unknown version is answered with). */
#define TG_MCP_VERSION_LATEST TG_MCP_V2026_07_28
#define TG_MCP_VERSION_LATEST_INITIALIZE TG_MCP_V2025_11_25

/* How a version does tasks. */
typedef enum tg__mcp_tasks {
    TG_MCP_TASKS_NONE = 0,
    /* 2025-11-25: the `tasks` capability; tools/call with params.task
     * returns a CreateTaskResult; tasks/get, tasks/result (blocks until
     * done), tasks/list, tasks/cancel; notifications/tasks/status. */
    TG_MCP_TASKS_CORE,
    /* 2026-07-28: the io.modelcontextprotocol/tasks extension: a result
     * with resultType "task" may come unasked; tasks/get polls (it carries
     * the result), tasks/update gives input, tasks/cancel; no tasks/list,
     * no tasks/result. */
    TG_MCP_TASKS_EXTENSION
} tg__mcp_tasks;

/* How a server asks the client's user for input during a request. */
typedef enum tg__mcp_input {
    /* a server-to-client request, elicitation/create, on the request's
     * stream; the client answers it with a response */
    TG_MCP_INPUT_ELICITATION = 1,
    /* the request ends with an InputRequiredResult (resultType
     * "input_required", inputRequests); the client retries the request
     * with params.inputResponses (multi round-trip requests, MRTR) */
    TG_MCP_INPUT_REQUIRED_RESULT
} tg__mcp_input;

/* What a version has. Codes are 0 where the version has no such error. */
typedef struct tg__mcp_traits {
    tg__mcp_version version;
    const char *name;  /* "2025-11-25" */
    bool spoken;       /* negotiated and spoken (not a header value only) */
    bool initialize;   /* initialize / notifications/initialized handshake */
    bool sessions;     /* Mcp-Session-Id on Streamable HTTP */
    bool batches;      /* JSON-RPC batch arrays allowed */
    bool ping;         /* the ping request */
    bool set_level;    /* logging/setLevel; else the level comes per
                          request in _meta io.modelcontextprotocol/logLevel
                          and a request without it gets no log messages */
    bool result_type;  /* every result carries resultType ("complete") */
    bool discover;     /* server/discover */
    bool request_meta; /* version, client capabilities and client info in
                          each request's _meta (no initialize) */
    bool get_stream;   /* HTTP GET opens the server-to-client SSE stream */
    bool subscriptions_listen; /* subscriptions/listen replaces GET and
                                  resources/subscribe */
    bool method_headers;       /* Mcp-Method / Mcp-Name HTTP headers, checked
                                  against the body (HeaderMismatch) */
    bool resumable;            /* SSE event ids and Last-Event-ID */
    bool cancel_on_disconnect; /* a closed response stream cancels the
                                  request; else only notifications/cancelled */
    bool cacheable_lists; /* ttlMs and cacheScope on list results (required) */
    bool structured_any;  /* structuredContent may be any JSON value (else an
                             object) */
    bool error_id_optional; /* an error response may omit the id when the
                               request's could not be read; 2025-06-18's
                               schema requires one (and none allows null) */
    tg__mcp_tasks tasks;
    tg__mcp_input input;
    int err_header_mismatch;              /* -32020 (2026-07-28) */
    int err_missing_client_capability;    /* -32021 (2026-07-28) */
    int err_unsupported_protocol_version; /* -32022 (2026-07-28) */
    int err_resource_not_found;           /* -32002; -32602 in 2026-07-28 */
    int err_url_elicitation_required;     /* -32042 (2025-11-25) */
} tg__mcp_traits;

/* The version named `name` (exactly, e.g. "2025-06-18"), or
 * TG_MCP_VERSION_UNKNOWN. len is the name's length (names from a header or
 * a JSON string need not be NUL-terminated). */
tg__mcp_version tg__mcp_version_from_name(const char *name, size_t len);
/* The name of v (static), or NULL for TG_MCP_VERSION_UNKNOWN and values out
 * of range. */
const char *tg__mcp_version_name(tg__mcp_version v);
/* The traits of v (static), or NULL for TG_MCP_VERSION_UNKNOWN and values
 * out of range. */
const tg__mcp_traits *tg__mcp_traits_of(tg__mcp_version v);
/* Whether v is spoken (negotiated, answered in); 2025-03-26 is not. */
bool tg__mcp_version_spoken(tg__mcp_version v);
/* Whether `name` is a valid MCP-Protocol-Version header value: every known
 * version, 2025-03-26 included. */
bool tg__mcp_version_header_ok(const char *name, size_t len);

/* The initialize negotiation (2025-06-18 and 2025-11-25): the version a
 * server answers an initialize request asking for `requested` (len bytes,
 * may be NULL) with - the version itself when it is spoken and has
 * initialize, else the newest initialize-family version. Never UNKNOWN. */
tg__mcp_version tg__mcp_negotiate_initialize(const char *requested, size_t len);

/* The spoken versions, oldest first, as a JSON array text
 * ("[\"2025-06-18\",\"2025-11-25\",\"2026-07-28\"]", static): the
 * supportedVersions of server/discover and the data.supported of
 * UnsupportedProtocolVersionError. */
const char *tg__mcp_supported_json(void);

#endif
