/* SPDX-License-Identifier: MIT */
/*
 * tool.c - tool definitions: validating a toolgate.json "tools" entry into a
 * command tool (every error names the member, "tools[2].command ..."), and
 * building in-process handler tools registered from C.
 */
#include "tool.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_keys.h"
#include "context_env.h"
#include "error.h"
#include "jint.h"
#include "schema.h"
#include "template.h"

#define MAX_NAME 128
#define MAX_TIMEOUT_MS INT64_C(86400000)

void tg__tool_free(tg__tool *tool)
{
    if (tool == NULL)
        return;
    free(tool->name);
    free(tool->title);
    free(tool->description);
    json_decref(tool->output_schema);
    tg_schema_free(tool->out_schema);
    json_decref(tool->input_schema);
    tg_schema_free(tool->schema);
    json_decref(tool->annotations);
    json_decref(tool->argv);
    json_decref(tool->stdin_tpl);
    json_decref(tool->env);
    json_decref(tool->env_pass);
    json_decref(tool->option_args);
    json_decref(tool->ctx_env_allow);
    json_decref(tool->ctx_env_deny);
    free(tool->remote_name);
    free(tool->off_reason);
    free(tool);
}

/* ^[A-Za-z0-9_.-]{1,128}$: the names every provider's tool format accepts. */
bool tg__tool_name_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > MAX_NAME)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

int tg__config_bad(tg_error *err, const char *key, const char *member,
                   const char *fmt, ...)
{
    if (err == NULL)
        return TG_ECONFIG;
    char text[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    tg__error_set(err, TG_ECONFIG, "%s%s%s%s", key, member ? "." : "",
                  member ? member : "", text);
    char ptr[200];
    size_t o = 0;
    ptr[o++] = '/';
    for (const char *p = key; *p && o + 1 < sizeof ptr; p++) {
        if (*p == '[' || *p == '.')
            ptr[o++] = '/';
        else if (*p != ']')
            ptr[o++] = *p;
    }
    ptr[o] = '\0';
    snprintf(err->pointer, sizeof err->pointer, "%s%s%s", ptr,
             member ? "/" : "", member ? member : "");
    return TG_ECONFIG;
}

static int set_str(char **dst, const char *s, tg_error *err)
{
    *dst = strdup(s);
    if (*dst == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    return 0;
}

/* The sandbox members of a command tool: "network" and "sandbox" (booleans)
 * and "env_pass" (names of the runtime's environment variables to pass). */
static int sandbox_members(const json_t *entry, const char *key, tg__tool *t,
                           tg_error *err)
{
    json_t *v = json_object_get(entry, "network"); /* borrowed */
    if (v && !json_is_boolean(v))
        return tg__config_bad(err, key, "network", " must be true or false");
    t->network = json_is_true(v);
    v = json_object_get(entry, "sandbox"); /* borrowed */
    if (v && json_is_object(v)) {
        /* {"mode": "warm" | "cold"}: how bubblewrap runs this tool */
        const char *m = json_string_value(json_object_get(v, "mode"));
        if (json_object_size(v) != 1 || m == NULL ||
            (strcmp(m, "warm") != 0 && strcmp(m, "cold") != 0))
            return tg__config_bad(err, key, "sandbox",
                                  " must be true, false or {\"mode\": "
                                  "\"warm\"} or {\"mode\": \"cold\"}");
        t->sandbox_mode =
            strcmp(m, "warm") == 0 ? TG__SANDBOX_WARM : TG__SANDBOX_COLD;
        v = NULL;
    }
    if (v && !json_is_boolean(v))
        return tg__config_bad(
            err, key, "sandbox",
            " must be true or false (false runs the tool without "
            "bubblewrap and rlimits), or {\"mode\": \"warm\"|\"cold\"}");
    t->unsandboxed = json_is_false(v);
    v = json_object_get(entry, "env_pass"); /* borrowed */
    if (v == NULL)
        return 0;
    if (!json_is_array(v))
        return tg__config_bad(
            err, key, "env_pass",
            " must be an array of environment variable names");
    size_t i;
    json_t *name; /* borrowed */
    json_array_foreach(v, i, name)
    {
        const char *s = json_string_value(name);
        if (s == NULL || s[0] == '\0' || strchr(s, '=') != NULL)
            return tg__config_bad(err, key, "env_pass",
                                  "[%zu] must be an environment variable name",
                                  i);
        for (size_t j = 0; j < i; j++)
            if (json_equal(json_array_get(v, j), name))
                return tg__config_bad(err, key, "env_pass",
                                      "[%zu]: '%s' is listed twice", i, s);
    }
    if ((t->env_pass = json_deep_copy(v)) == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    return 0;
}

bool tg__tool_exit_ok(const tg__tool *tool, int status)
{
    if (status < 0 || status > 255)
        return false;
    if (!tool->has_ok_exit)
        return status == 0;
    return (tool->ok_exit[status / 64] >> (status % 64)) & 1u;
}

/* An exit status of "ok_exit": an integer from 0 to 255, or -1. */
static int exit_status_value(const json_t *v)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        json_integer_value(v) > 255)
        return -1;
    return (int)json_integer_value(v);
}

/* "ok_exit": the exit statuses that count as success, as a list
 * ([0, 1]) or a range ({"min": 0, "max": 1}), each status 0 to 255. */
static int ok_exit_member(const json_t *entry, const char *key, tg__tool *t,
                          tg_error *err)
{
    static const char forms[] =
        " must be a list of exit statuses such as [0, 1] or a range such as "
        "{\"min\": 0, \"max\": 1}";
    const json_t *v = json_object_get(entry, "ok_exit"); /* borrowed */
    if (v == NULL)
        return 0;
    int lo, hi;
    if (json_is_array(v)) {
        if (json_array_size(v) == 0)
            return tg__config_bad(
                err, key, "ok_exit",
                " must list at least one exit status (0 to 255)");
        size_t i;
        const json_t *s; /* borrowed */
        json_array_foreach(v, i, s)
        {
            int st = exit_status_value(s);
            if (st < 0)
                return tg__config_bad(
                    err, key, "ok_exit",
                    "[%zu] must be an exit status, an integer from 0 "
                    "to 255",
                    i);
            t->ok_exit[st / 64] |= UINT64_C(1) << (st % 64);
        }
        t->has_ok_exit = true;
        return 0;
    }
    if (!json_is_object(v))
        return tg__config_bad(err, key, "ok_exit", "%s", forms);
    const char *k;
    const json_t *m; /* borrowed */
    json_object_foreach((json_t *)v, k, m)
    {
        if (!tg__config_key_known("tools[].ok_exit", k))
            return tg__config_bad(err, key, "ok_exit",
                                  ": unknown key '%s' (a range has \"min\" and "
                                  "\"max\")",
                                  k);
    }
    if (!json_object_get(v, "min") || !json_object_get(v, "max"))
        return tg__config_bad(err, key, "ok_exit",
                              " range needs both \"min\" and \"max\"");
    char range[160]; /* "tools[2].ok_exit": min and max are its members */
    snprintf(range, sizeof range, "%s.ok_exit", key);
    if ((lo = exit_status_value(json_object_get(v, "min"))) < 0)
        return tg__config_bad(
            err, range, "min",
            " must be an exit status, an integer from 0 to 255");
    if ((hi = exit_status_value(json_object_get(v, "max"))) < 0)
        return tg__config_bad(
            err, range, "max",
            " must be an exit status, an integer from 0 to 255");
    if (lo > hi)
        return tg__config_bad(err, key, "ok_exit",
                              ".min (%d) must not be greater than max (%d)", lo,
                              hi);
    for (int st = lo; st <= hi; st++)
        t->ok_exit[st / 64] |= UINT64_C(1) << (st % 64);
    t->has_ok_exit = true;
    return 0;
}

/* "option_args": the names of placeholders of the command whose values may
 * begin with '-' (template.c, the option rule). */
static int option_args_member(const json_t *entry, const char *key, tg__tool *t,
                              tg_error *err)
{
    json_t *v = json_object_get(entry, "option_args"); /* borrowed */
    if (v == NULL)
        return 0;
    if (!json_is_array(v))
        return tg__config_bad(
            err, key, "option_args",
            " must be an array of names of the command's placeholders "
            "whose values may begin with '-'");
    size_t i;
    json_t *name; /* borrowed */
    json_array_foreach(v, i, name)
    {
        const char *s = json_string_value(name);
        if (s == NULL)
            return tg__config_bad(err, key, "option_args",
                                  "[%zu] must be the name of a placeholder", i);
        if (!tg__argv_has_placeholder(t->argv, s))
            return tg__config_bad(
                err, key, "option_args",
                "[%zu]: '%.64s' is not a placeholder of the command "
                "(an element \"{%.64s}\" or \"{%.64s?}\")",
                i, s, s, s);
        for (size_t j = 0; j < i; j++)
            if (json_equal(json_array_get(v, j), name))
                return tg__config_bad(err, key, "option_args",
                                      "[%zu]: '%.64s' is listed twice", i, s);
    }
    if ((t->option_args = json_deep_copy(v)) == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    return 0;
}

/* One list of "context_env" (`which` is "allow" or "deny"): patterns of
 * variable names, copied into *out. */
static int ctx_env_list(const json_t *ce, const char *ckey, const char *which,
                        json_t **out, tg_error *err)
{
    json_t *v = json_object_get(ce, which); /* borrowed */
    if (v == NULL)
        return 0;
    if (!json_is_array(v))
        return tg__config_bad(
            err, ckey, which,
            " must be an array of variable names or patterns with "
            "'*'");
    size_t i;
    json_t *p; /* borrowed */
    json_array_foreach(v, i, p)
    {
        if (!tg__env_pattern_valid(json_string_value(p)))
            return tg__config_bad(
                err, ckey, which,
                "[%zu] must be a variable name or a pattern: letters, "
                "digits, '_' and '*'",
                i);
    }
    if ((*out = json_deep_copy(v)) == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    return 0;
}

/* "context_env": {"allow": [...], "deny": [...]}, which variables a call's
 * context.env may set besides / beyond the table of context_env.c. */
static int context_env_member(const json_t *entry, const char *key, tg__tool *t,
                              tg_error *err)
{
    json_t *ce = json_object_get(entry, "context_env"); /* borrowed */
    if (ce == NULL)
        return 0;
    if (!json_is_object(ce))
        return tg__config_bad(
            err, key, "context_env",
            " must be an object with \"allow\" and/or \"deny\" "
            "(arrays of variable names or patterns with '*')");
    char ckey[160];
    snprintf(ckey, sizeof ckey, "%s.context_env", key);
    const char *k;
    json_t *v; /* borrowed */
    json_object_foreach(ce, k, v)
    {
        if (!tg__config_key_known("tools[].context_env", k))
            return tg__config_bad(
                err, ckey, NULL,
                ": unknown key '%.64s' (it takes \"allow\" and "
                "\"deny\")",
                k);
    }
    int rc = ctx_env_list(ce, ckey, "allow", &t->ctx_env_allow, err);
    return rc ? rc : ctx_env_list(ce, ckey, "deny", &t->ctx_env_deny, err);
}

/* Parses the members of a command tool that are not name/description. */
static int command_members(const json_t *entry, const char *key, tg__tool *t,
                           tg_error *err)
{
    json_t *v = json_object_get(entry, "command"); /* borrowed */
    bool ok = json_is_array(v) && json_array_size(v) > 0;
    for (size_t i = 0; ok && i < json_array_size(v); i++)
        ok = json_is_string(json_array_get(v, i));
    if (!ok)
        return tg__config_bad(err, key, "command",
                              " must be a non-empty array of strings");
    const char *prog = json_string_value(json_array_get(v, 0));
    if (prog[0] == '\0')
        return tg__config_bad(err, key, "command",
                              "[0] must name the program to run, not be empty");
    /* The model must not choose which program runs: argv[0] is literal. */
    size_t plen = strlen(prog);
    if (plen >= 3 && prog[0] == '{' && prog[plen - 1] == '}')
        return tg__config_bad(err, key, "command",
                              "[0] must name the program literally, not be a "
                              "placeholder like '%s'",
                              prog);
    if ((t->argv = json_deep_copy(v)) == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");

    v = json_object_get(entry, "stdin"); /* borrowed */
    if (v) {
        if (!json_is_string(v))
            return tg__config_bad(err, key, "stdin",
                                  " must be a string template");
        if ((t->stdin_tpl = json_deep_copy(v)) == NULL)
            return tg__error_set(err, TG_ENOMEM, "out of memory");
    }

    v = json_object_get(entry, "env"); /* borrowed */
    if (v) {
        if (!json_is_object(v))
            return tg__config_bad(
                err, key, "env", " must be an object of strings (name: value)");
        const char *name;
        json_t *val; /* borrowed */
        json_object_foreach(v, name, val)
        {
            if (name[0] == '\0' || strchr(name, '=') != NULL)
                return tg__config_bad(
                    err, key, "env",
                    ": '%s' is not a valid environment variable name", name);
            if (!json_is_string(val))
                return tg__config_bad(err, key, "env",
                                      ": the value of '%s' must be a string",
                                      name);
        }
        if ((t->env = json_deep_copy(v)) == NULL)
            return tg__error_set(err, TG_ENOMEM, "out of memory");
    }

    v = json_object_get(entry, "timeout_ms"); /* borrowed */
    if (v) {
        int64_t ms;
        if (!tg__json_int(v, &ms) || ms < 1 || ms > MAX_TIMEOUT_MS)
            return tg__config_bad(err, key, "timeout_ms",
                                  " must be an integer from 1 to 86400000");
        t->timeout_ms = ms;
    }
    int rc = ok_exit_member(entry, key, t, err);
    if (rc == 0)
        rc = option_args_member(entry, key, t, err);
    if (rc == 0)
        rc = context_env_member(entry, key, t, err);
    return rc ? rc : sandbox_members(entry, key, t, err);
}

/* Compiles t->input_schema into t->schema, once, at registration: a
 * schema that is not a valid JSON Schema keeps the tool out. Returns 0,
 * TG_ENOMEM, or the compiler's code with its error in *e (e->pointer: the
 * bad keyword within the schema). */
static int compile_schema(tg__tool *t, tg_error *e)
{
    memset(e, 0, sizeof *e);
    return tg__schema_compile(t->input_schema, NULL, &t->schema, e);
}

/* A schema member ("input_schema", "output_schema") of a tool entry that
 * did not compile: the TG_ECONFIG error naming it, its pointer going on to
 * the bad keyword within the schema; out of memory as itself. */
static int schema_error(tg_error *err, const char *key, const char *member,
                        int rc, const tg_error *se)
{
    if (rc == TG_ENOMEM)
        return tg__error_set(err, rc, "out of memory");
    rc = tg__config_bad(err, key, member, " is not a valid JSON Schema%s%s: %s",
                        se->pointer[0] ? " at " : "", se->pointer, se->message);
    if (err != NULL) {
        size_t pl = strlen(err->pointer);
        snprintf(err->pointer + pl, sizeof err->pointer - pl, "%s",
                 se->pointer);
    }
    return rc;
}

/* A schema whose "type", when given, must be "object". */
static bool object_typed(const json_t *schema)
{
    const json_t *type = json_object_get(schema, "type"); /* borrowed */
    return json_is_object(schema) &&
           (type == NULL || (json_is_string(type) &&
                             strcmp(json_string_value(type), "object") == 0));
}

/* "title", "output" and "output_schema": how the tool is shown and what
 * its output is. An output schema makes the output JSON (stdout parsed as
 * one JSON value) and must describe an object, as MCP's structuredContent
 * is one. */
static int output_members(const json_t *entry, const char *key, tg__tool *t,
                          tg_error *err)
{
    const json_t *v = json_object_get(entry, "title"); /* borrowed */
    if (v != NULL && !json_is_string(v))
        return tg__config_bad(err, key, "title", " must be a string");
    if (v != NULL && set_str(&t->title, json_string_value(v), err) != 0)
        return TG_ENOMEM;
    v = json_object_get(entry, "output"); /* borrowed */
    const char *o = json_string_value(v);
    if (v == NULL || (o != NULL && strcmp(o, "text") == 0))
        t->output = TG_TOOL_OUTPUT_TEXT;
    else if (o != NULL && strcmp(o, "json") == 0)
        t->output = TG_TOOL_OUTPUT_JSON;
    else if (o != NULL && strcmp(o, "mcp-content") == 0)
        t->output = TG_TOOL_OUTPUT_CONTENT;
    else
        return tg__config_bad(
            err, key, "output",
            " must be \"text\" (the default: stdout is the result), "
            "\"json\" (stdout is one JSON value) or \"mcp-content\" "
            "(stdout is a JSON array of MCP content blocks)");
    v = json_object_get(entry, "output_schema"); /* borrowed */
    if (v == NULL)
        return 0;
    if (!object_typed(v))
        return tg__config_bad(err, key, "output_schema",
                              " must be a JSON Schema object whose \"type\" is "
                              "\"object\" (a structured result is an object)");
    if (t->output != TG_TOOL_OUTPUT_JSON && json_object_get(entry, "output"))
        return tg__config_bad(
            err, key, "output",
            " must be \"json\" (or left out) when the tool has an "
            "output_schema: its stdout is the JSON the schema checks");
    t->output = TG_TOOL_OUTPUT_JSON;
    if ((t->output_schema = json_deep_copy(v)) == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    tg_error se = {0};
    int rc = tg__schema_compile(t->output_schema, NULL, &t->out_schema, &se);
    return rc != 0 ? schema_error(err, key, "output_schema", rc, &se) : 0;
}

int tg__tool_from_config(const json_t *entry, const char *key, tg__tool **out,
                         tg_error *err)
{
    int rc;
    tg__tool *t = NULL;
    *out = NULL;

    if (!json_is_object(entry))
        return tg__config_bad(err, key, NULL, " must be an object");
    const char *k;
    json_t *v; /* borrowed */
    json_object_foreach((json_t *)entry, k, v)
    {
        /* "mcp" makes the entry a source (source_config.c); said below */
        if (!tg__config_key_known("tools[]", k) &&
            !tg__config_key_known("tools[] (MCP source)", k)) {
            tg__config_bad(err, key, k, "%s", "");
            /* the wording of unknown keys at the top level */
            return tg__error_set(err, TG_ECONFIG, "unknown key '%s' in %s", k,
                                 key);
        }
    }

    t = calloc(1, sizeof *t);
    if (t == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    t->kind = TG_TOOL_KIND_COMMAND;

    v = json_object_get(entry, "name"); /* borrowed */
    if (!json_is_string(v) || !tg__tool_name_valid(json_string_value(v))) {
        rc = tg__config_bad(
            err, key, "name",
            " must be a string of 1 to 128 letters, digits, '_', '.' "
            "or '-'");
        goto fail;
    }
    if ((rc = set_str(&t->name, json_string_value(v), err)))
        goto fail;

    v = json_object_get(entry, "description"); /* borrowed */
    if (v && !json_is_string(v)) {
        rc = tg__config_bad(err, key, "description", " must be a string");
        goto fail;
    }
    if ((rc = set_str(&t->description, v ? json_string_value(v) : "", err)))
        goto fail;

    v = json_object_get(entry, "input_schema"); /* borrowed */
    if (v) {
        if (!object_typed(v)) {
            rc = tg__config_bad(
                err, key, "input_schema",
                " must be a JSON Schema object whose \"type\" is "
                "\"object\" (arguments are always an object)");
            goto fail;
        }
        t->input_schema = json_deep_copy(v); /* new ref */
    } else {
        t->input_schema = json_pack("{ss}", "type", "object"); /* new ref */
    }
    if (t->input_schema == NULL) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto fail;
    }
    tg_error se;
    if ((rc = compile_schema(t, &se)) != 0) {
        rc = schema_error(err, key, "input_schema", rc, &se);
        goto fail;
    }
    if ((rc = output_members(entry, key, t, err)) != 0)
        goto fail;

    v = json_object_get(entry, "annotations"); /* borrowed */
    if (v) {
        if (!json_is_object(v)) {
            rc = tg__config_bad(err, key, "annotations", " must be an object");
            goto fail;
        }
        if ((t->annotations = json_deep_copy(v)) == NULL) {
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
            goto fail;
        }
    }

    json_t *cmd = json_object_get(entry, "command"); /* borrowed */
    json_t *mcp = json_object_get(entry, "mcp");     /* borrowed */
    if (cmd && mcp) {
        rc = tg__config_bad(
            err, key, NULL,
            " has both \"command\" and \"mcp\": a tool runs one way");
        goto fail;
    }
    if (mcp) {
        if (!json_is_object(mcp))
            rc = tg__config_bad(err, key, "mcp", " must be an object");
        else
            rc = tg__config_bad(
                err, key, NULL,
                " is an MCP server (a tool source): the runtime makes "
                "its tools (source_config.h)");
        goto fail;
    }
    if (cmd == NULL) {
        rc = tg__config_bad(err, key, NULL,
                            " needs a \"command\" (an argv array)");
        goto fail;
    }
    if ((rc = command_members(entry, key, t, err)))
        goto fail;
    *out = t;
    return 0;
fail:
    tg__tool_free(t);
    return rc;
}

int tg__tool_new_handler(const char *name, const char *description,
                         const char *schema_json, tg_handler_fn fn,
                         void *user_data, unsigned flags, tg__tool **out,
                         tg_error *err)
{
    int rc;
    *out = NULL;
    if (name == NULL || !tg__tool_name_valid(name))
        return tg__error_set(err, TG_EINVAL,
                             "tool name '%s' must be 1 to 128 letters, digits, "
                             "'_', '.' or '-'",
                             name ? name : "(null)");
    if (fn == NULL)
        return tg__error_set(err, TG_EINVAL, "tool '%s' has no handler", name);
    tg__tool *t = calloc(1, sizeof *t);
    if (t == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    t->kind = TG_TOOL_KIND_HANDLER;
    t->fn = fn;
    t->user_data = user_data;
    t->flags = flags;
    if ((rc = set_str(&t->name, name, err)) ||
        (rc = set_str(&t->description, description ? description : "", err)))
        goto fail;
    if (schema_json == NULL) {
        t->input_schema = json_pack("{ss}", "type", "object"); /* new ref */
        if (t->input_schema == NULL) {
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
            goto fail;
        }
    } else {
        json_error_t jerr;
        t->input_schema = json_loads(schema_json, JSON_REJECT_DUPLICATES,
                                     &jerr); /* new ref */
        if (t->input_schema == NULL) {
            rc = tg__error_at(err, TG_ESCHEMA, jerr.line, jerr.column,
                              "schema of tool '%s' is not JSON: %d:%d: %s",
                              name, jerr.line, jerr.column, jerr.text);
            goto fail;
        }
        if (!json_is_object(t->input_schema)) {
            rc = tg__error_set(err, TG_ESCHEMA,
                               "schema of tool '%s' must be a JSON object",
                               name);
            goto fail;
        }
    }
    tg_error se;
    if ((rc = compile_schema(t, &se)) != 0) {
        rc = rc == TG_ENOMEM
                 ? tg__error_set(err, rc, "out of memory")
                 : tg__error_set(err, TG_ESCHEMA,
                                 "the schema of tool '%s' is not a valid JSON "
                                 "Schema%s%s: %s",
                                 name, se.pointer[0] ? " at " : "", se.pointer,
                                 se.message);
        tg__error_pointer(err, se.pointer);
        goto fail;
    }
    *out = t;
    return 0;
fail:
    tg__tool_free(t);
    return rc;
}
