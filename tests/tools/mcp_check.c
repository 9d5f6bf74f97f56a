/* SPDX-License-Identifier: MIT */
/*
 * mcp_check.c - checks MCP messages against the MCP schema of their
 * protocol version, with toolgate's own JSON Schema validator (public API
 * only), for every test of what an MCP server or client sends.
 *
 * Usage: mcp_check [--data DIR] FILE|-
 * FILE holds JSON Lines, one message a line:
 *   {"version":"2025-11-25","answers":"tools/call","message":{...}}
 * `answers` is the method of the request a response answers (required for
 * responses; absent for requests and notifications). Each message is
 * checked against its envelope (JSONRPCRequest, JSONRPCNotification, the
 * result response or the error response of that version) and against the
 * definition of its kind: the result type of the answered method
 * (tools/call -> CallToolResult, tools/list -> ListToolsResult, initialize
 * -> InitializeResult, server/discover -> DiscoverResult, tasks/get ->
 * GetTaskResult, ...), the notification or request type of its method, the
 * specific error type of a code the version defines (-32022 ->
 * UnsupportedProtocolVersionError, ...). A method the version has no
 * definition for is a failure, except the results of the 2026-07-28 tasks
 * extension, which no schema defines: those are checked as Result (the
 * resultType every 2026-07-28 result carries).
 *
 * The schemas are DIR/mcp/schema-<version>.json; DIR is --data, else
 * $TG_TEST_DATA_DIR, else ../shared/data beside the source tree. Exit 0
 * when every message is valid; else each failure is printed (line,
 * definition, violations) and the exit status is 1; 2 for usage errors and
 * unreadable files or schemas.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate.h"

#define MAX_CACHED 64

typedef struct compiled {
    char version[16];
    char def[64];
    tg_schema *schema;
} compiled;

typedef struct checker {
    const char *data_dir;
    compiled cache[MAX_CACHED];
    size_t ncache;
    char *texts[8]; /* schema texts by version slot */
    char text_versions[8][16];
    size_t ntexts;
    int failures;
} checker;

static char *read_all(FILE *f, size_t *len)
{
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *grown = realloc(buf, cap * 2 + 1);
            if (grown == NULL) {
                free(buf);
                return NULL;
            }
            buf = grown;
            cap *= 2;
        }
    }
    if (buf != NULL) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

/* The schema text of a version (cached), or NULL. */
static const char *schema_text(checker *c, const char *version)
{
    for (size_t i = 0; i < c->ntexts; i++)
        if (strcmp(c->text_versions[i], version) == 0)
            return c->texts[i];
    if (c->ntexts == 8 || strlen(version) >= 16)
        return NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/mcp/schema-%s.json", c->data_dir, version);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t len;
    char *text = read_all(f, &len);
    fclose(f);
    if (text == NULL)
        return NULL;
    snprintf(c->text_versions[c->ntexts], 16, "%s", version);
    c->texts[c->ntexts++] = text;
    return text;
}

/* The compiled schema of definition `def` of `version` (cached): the whole
 * schema document with a root "$ref" to the definition, so every other
 * definition resolves as in the document. NULL with a message printed. */
static tg_schema *definition(checker *c, const char *version, const char *def)
{
    for (size_t i = 0; i < c->ncache; i++)
        if (strcmp(c->cache[i].version, version) == 0 &&
            strcmp(c->cache[i].def, def) == 0)
            return c->cache[i].schema;
    const char *text = schema_text(c, version);
    if (text == NULL) {
        fprintf(stderr, "mcp_check: no schema for version '%s' under %s/mcp\n",
                version, c->data_dir);
        return NULL;
    }
    const char *brace = strchr(text, '{');
    int draft7 = strstr(text, "\"definitions\"") != NULL &&
                 strstr(text, "\"$defs\"") == NULL;
    if (brace == NULL || c->ncache == MAX_CACHED)
        return NULL;
    size_t len = strlen(brace + 1) + strlen(def) + 64;
    char *wrapped = malloc(len);
    if (wrapped == NULL)
        return NULL;
    int n = snprintf(wrapped, len, "{\"$ref\":\"#/%s/%s\",%s",
                     draft7 ? "definitions" : "$defs", def, brace + 1);
    tg_error err;
    memset(&err, 0, sizeof err);
    tg_schema *s = NULL;
    tg_schema_options opts = {
        draft7 ? TG_SCHEMA_DRAFT_7 : TG_SCHEMA_DRAFT_2020_12, 0, NULL, 0};
    int rc = tg_schema_compile(wrapped, (size_t)n, &opts, &s, &err);
    free(wrapped);
    if (rc != 0) {
        fprintf(stderr, "mcp_check: %s of %s: %s\n", def, version, err.message);
        return NULL;
    }
    compiled *e = &c->cache[c->ncache++];
    snprintf(e->version, sizeof e->version, "%s", version);
    snprintf(e->def, sizeof e->def, "%s", def);
    e->schema = s;
    return s;
}

/* Whether the version's schema has definition `def` (text search of its
 * key, enough for these generated documents). */
static int has_def(checker *c, const char *version, const char *def)
{
    const char *text = schema_text(c, version);
    char key[96];
    snprintf(key, sizeof key, "\"%s\": {", def);
    return text != NULL && strstr(text, key) != NULL;
}

/* Validates v against def; prints and counts a failure. */
static void check(checker *c, long line, const char *version, const char *def,
                  const json_t *v)
{
    tg_schema *s = definition(c, version, def);
    if (s == NULL) {
        printf("line %ld: %s (%s): cannot load this definition\n", line, def,
               version);
        c->failures++;
        return;
    }
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    char *violations = NULL;
    tg_error err;
    memset(&err, 0, sizeof err);
    int rc = text ? tg_schema_validate(s, text, strlen(text), &violations, &err)
                  : TG_ENOMEM;
    if (rc != 1) {
        printf("line %ld: %s (%s): %s\n", line, def, version,
               rc == 0 ? "invalid" : err.message);
        if (violations != NULL)
            printf("%s", violations);
        c->failures++;
    }
    tg_free(violations);
    free(text);
}

static void fail(checker *c, long line, const char *what, const char *arg)
{
    printf("line %ld: %s%s\n", line, what, arg ? arg : "");
    c->failures++;
}

/* The result definition of a response answering `method`; NULL when the
 * version has none (reported by the caller). */
static const char *result_def(checker *c, const char *version,
                              const char *method, const json_t *result)
{
    static const struct {
        const char *method, *def;
    } map[] = {
        {"initialize", "InitializeResult"},
        {"ping", "EmptyResult"},
        {"logging/setLevel", "EmptyResult"},
        {"tools/list", "ListToolsResult"},
        {"tools/call", "CallToolResult"},
        {"resources/list", "ListResourcesResult"},
        {"resources/read", "ReadResourceResult"},
        {"resources/templates/list", "ListResourceTemplatesResult"},
        {"resources/subscribe", "EmptyResult"},
        {"resources/unsubscribe", "EmptyResult"},
        {"prompts/list", "ListPromptsResult"},
        {"prompts/get", "GetPromptResult"},
        {"completion/complete", "CompleteResult"},
        {"server/discover", "DiscoverResult"},
        {"subscriptions/listen", "SubscriptionsListenResult"},
        {"tasks/get", "GetTaskResult"},
        {"tasks/result", "GetTaskPayloadResult"},
        {"tasks/list", "ListTasksResult"},
        {"tasks/cancel", "CancelTaskResult"},
        /* results a client sends to a server's requests */
        {"elicitation/create", "ElicitResult"},
        {"roots/list", "ListRootsResult"},
        {"sampling/createMessage", "CreateMessageResult"},
    };
    const char *rt = json_string_value(json_object_get(result, "resultType"));
    int is2026 = strcmp(version, "2026-07-28") == 0;
    if (rt != NULL && strcmp(rt, "input_required") == 0)
        return "InputRequiredResult";
    if (strncmp(method, "tasks/", 6) == 0 && is2026)
        return "Result"; /* the tasks extension has no schema */
    if (rt != NULL && strcmp(rt, "task") == 0 && is2026)
        return "Result";
    if (!is2026 && strcmp(method, "tools/call") == 0 &&
        json_object_get(result, "task") != NULL)
        return "CreateTaskResult";
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i].method, method) == 0)
            return has_def(c, version, map[i].def) ? map[i].def : NULL;
    return NULL;
}

/* The definition of a notification or request by method, NULL when none. */
static const char *method_def(checker *c, const char *version,
                              const char *method, int request)
{
    static const struct {
        const char *method, *def;
        int request;
    } map[] = {
        {"notifications/progress", "ProgressNotification", 0},
        {"notifications/message", "LoggingMessageNotification", 0},
        {"notifications/cancelled", "CancelledNotification", 0},
        {"notifications/initialized", "InitializedNotification", 0},
        {"notifications/tools/list_changed", "ToolListChangedNotification", 0},
        {"notifications/resources/list_changed",
         "ResourceListChangedNotification", 0},
        {"notifications/resources/updated", "ResourceUpdatedNotification", 0},
        {"notifications/prompts/list_changed", "PromptListChangedNotification",
         0},
        {"notifications/tasks/status", "TaskStatusNotification", 0},
        {"notifications/elicitation/complete",
         "ElicitationCompleteNotification", 0},
        {"notifications/subscriptions/acknowledged",
         "SubscriptionsAcknowledgedNotification", 0},
        {"notifications/roots/list_changed", "RootsListChangedNotification", 0},
        {"elicitation/create", "ElicitRequest", 1},
        {"roots/list", "ListRootsRequest", 1},
        {"sampling/createMessage", "CreateMessageRequest", 1},
        {"ping", "PingRequest", 1},
        {"initialize", "InitializeRequest", 1},
        {"tools/call", "CallToolRequest", 1},
        {"tools/list", "ListToolsRequest", 1},
        {"server/discover", "DiscoverRequest", 1},
        {"tasks/get", "GetTaskRequest", 1},
        {"tasks/cancel", "CancelTaskRequest", 1},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].request == request && strcmp(map[i].method, method) == 0)
            return has_def(c, version, map[i].def) ? map[i].def : NULL;
    return NULL;
}

/* The specific error definition of a code the version defines (a whole
 * response), or NULL. */
static const char *error_def(checker *c, const char *version, json_int_t code)
{
    const char *def = NULL;
    if (code == -32020)
        def = "HeaderMismatchError";
    else if (code == -32021)
        def = "MissingRequiredClientCapabilityError";
    else if (code == -32022)
        def = "UnsupportedProtocolVersionError";
    else if (code == -32042)
        def = "URLElicitationRequiredError";
    return def != NULL && has_def(c, version, def) ? def : NULL;
}

static void check_line(checker *c, long line, const char *text, size_t len)
{
    json_error_t jerr;
    json_t *doc = json_loadb(text, len, 0, &jerr); /* new ref */
    if (doc == NULL) {
        fail(c, line, "not JSON: ", jerr.text);
        return;
    }
    const char *version = json_string_value(json_object_get(doc, "version"));
    const char *answers = json_string_value(json_object_get(doc, "answers"));
    const json_t *msg = json_object_get(doc, "message"); /* borrowed */
    if (version == NULL || !json_is_object(msg)) {
        fail(c, line, "expected {\"version\",\"answers\"?,\"message\":{...}}",
             NULL);
        json_decref(doc);
        return;
    }
    if (schema_text(c, version) == NULL) {
        fail(c, line, "no schema for version ", version);
        json_decref(doc);
        return;
    }
    int v0618 = strcmp(version, "2025-06-18") == 0;
    const json_t *method = json_object_get(msg, "method"); /* borrowed */
    const json_t *result = json_object_get(msg, "result"); /* borrowed */
    const json_t *error = json_object_get(msg, "error");   /* borrowed */
    if (method != NULL) {
        int request = json_object_get(msg, "id") != NULL;
        check(c, line, version,
              request ? "JSONRPCRequest" : "JSONRPCNotification", msg);
        const char *m = json_string_value(method);
        const char *def = m ? method_def(c, version, m, request) : NULL;
        if (def != NULL)
            check(c, line, version, def, msg);
        else if (!request || strncmp(m ? m : "", "notifications/", 14) == 0)
            fail(c, line, "no notification definition for method ",
                 m ? m : "(not a string)");
    } else if (result != NULL) {
        check(c, line, version,
              v0618 ? "JSONRPCResponse" : "JSONRPCResultResponse", msg);
        const char *def =
            answers ? result_def(c, version, answers, result) : NULL;
        if (answers == NULL)
            fail(c, line, "a response needs \"answers\" (the method)", NULL);
        else if (def == NULL)
            fail(c, line, "no result definition for method ", answers);
        else
            check(c, line, version, def, result);
    } else if (error != NULL) {
        check(c, line, version, v0618 ? "JSONRPCError" : "JSONRPCErrorResponse",
              msg);
        const char *def = error_def(
            c, version, json_integer_value(json_object_get(error, "code")));
        if (def != NULL)
            check(c, line, version, def, msg);
    } else
        fail(c, line, "neither a request, a notification nor a response", NULL);
    json_decref(doc);
}

int main(int argc, char **argv)
{
    checker c;
    memset(&c, 0, sizeof c);
    int arg = 1;
    if (argc > 2 && strcmp(argv[1], "--data") == 0) {
        c.data_dir = argv[2];
        arg = 3;
    }
    if (arg != argc - 1) {
        fprintf(stderr, "usage: mcp_check [--data DIR] FILE|-\n");
        return 2;
    }
    char fallback[4096];
    if (c.data_dir == NULL) {
        c.data_dir = getenv("TG_TEST_DATA_DIR");
        if (c.data_dir == NULL || *c.data_dir == '\0') {
            snprintf(fallback, sizeof fallback, "%s/../shared/data",
                     TG_MCP_CHECK_SOURCE_DIR);
            c.data_dir = fallback;
        }
    }
    FILE *f = strcmp(argv[arg], "-") == 0 ? stdin : fopen(argv[arg], "rb");
    if (f == NULL) {
        perror(argv[arg]);
        return 2;
    }
    size_t len;
    char *text = read_all(f, &len);
    if (f != stdin)
        fclose(f);
    if (text == NULL) {
        fprintf(stderr, "mcp_check: cannot read %s\n", argv[arg]);
        return 2;
    }
    long line = 0, checked = 0;
    for (char *p = text; p < text + len;) {
        char *nl = memchr(p, '\n', (size_t)(text + len - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
        line++;
        size_t lead = strspn(p, " \t\r");
        if (lead < n) {
            check_line(&c, line, p, n);
            checked++;
        }
        p += n + 1;
    }
    free(text);
    for (size_t i = 0; i < c.ncache; i++)
        tg_schema_free(c.cache[i].schema);
    for (size_t i = 0; i < c.ntexts; i++)
        free(c.texts[i]);
    if (c.failures > 0) {
        printf("mcp_check: %d failure(s) in %ld message(s)\n", c.failures,
               checked);
        return 1;
    }
    return 0;
}
