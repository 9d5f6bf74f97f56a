/* SPDX-License-Identifier: MIT */
/*
 * source_config.c - a "tools" entry that is an MCP server behind toolgate
 * (source_config.h): every member of "mcp" checked and named when wrong,
 * defaults filled in.
 */
#include "source_config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config_keys.h"
#include "tool.h"

/* Fails with TG_ECONFIG: "tools[2].mcp.pin must be ..." with the JSON
 * pointer "/tools/2/mcp/pin"; member "mcp.X" names a member of "mcp",
 * "mcp" or a top-level name the entry's own; text from fmt after it
 * ("must be ...", "[0] must be ..."). */
static int bad(tg_error *err, const char *key, const char *member,
               const char *fmt, ...) TG__PRINTF(4, 5);
static int bad(tg_error *err, const char *key, const char *member,
               const char *fmt, ...)
{
    char text[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    char k[64];
    if (member != NULL && strncmp(member, "mcp.", 4) == 0) {
        snprintf(k, sizeof k, "%s.mcp", key);
        key = k;
        member += 4;
    }
    return tg__config_bad(err, key, member, "%s%s", text[0] == '[' ? "" : " ",
                          text);
}

bool tg__source_entry(const json_t *entry)
{
    return json_is_object(entry) && json_object_get(entry, "mcp") != NULL;
}

void tg__source_cfg_free(tg__source_cfg *c)
{
    if (c == NULL)
        return;
    free(c->name);
    free(c->sep);
    json_decref(c->command);
    json_decref(c->env);
    free(c->cwd);
    json_decref(c->env_pass);
    free(c->url);
    json_decref(c->headers);
    free(c->token_env);
    json_decref(c->roots);
    free(c);
}

static int dup(char **dst, const char *s)
{
    return (*dst = strdup(s)) != NULL ? 0 : TG_ENOMEM;
}

/* A name of an environment variable: [A-Za-z_][A-Za-z0-9_]*. */
static bool env_name(const char *s)
{
    if (*s == '\0' || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/* An object whose members are strings (names valid for env when
 * `names_env`); NULL v passes. */
static int string_object(const json_t *v, bool names_env, tg_error *err,
                         const char *key, const char *member)
{
    if (v == NULL)
        return 0;
    if (!json_is_object(v))
        return bad(err, key, member, "must be an object of strings");
    const char *k;
    json_t *s; /* borrowed */
    json_object_foreach((json_t *)v, k, s)
    {
        if (!json_is_string(s))
            return bad(err, key, member, "'%s' must be a string", k);
        if (names_env && !env_name(k))
            return bad(err, key, member,
                       "'%s' is not an environment variable name", k);
    }
    return 0;
}

static int get_ms(const json_t *mcp, const char *name, int64_t max,
                  int64_t *out, tg_error *err, const char *key)
{
    const json_t *v = json_object_get(mcp, name); /* borrowed */
    if (v == NULL)
        return 0;
    char member[40];
    snprintf(member, sizeof member, "mcp.%s", name);
    if (!json_is_integer(v) || json_integer_value(v) < 1 ||
        json_integer_value(v) > max)
        return bad(err, key, member, "must be an integer from 1 to %lld",
                   (long long)max);
    *out = json_integer_value(v);
    return 0;
}

static int get_bool(const json_t *mcp, const char *name, bool *out,
                    tg_error *err, const char *key)
{
    const json_t *v = json_object_get(mcp, name); /* borrowed */
    if (v == NULL)
        return 0;
    if (!json_is_boolean(v)) {
        char member[40];
        snprintf(member, sizeof member, "mcp.%s", name);
        return bad(err, key, member, "must be true or false");
    }
    *out = json_is_true(v);
    return 0;
}

/* The stdio members: command, env, cwd, env_pass, network, sandbox. */
static int stdio_members(const json_t *mcp, tg__source_cfg *c, tg_error *err,
                         const char *key)
{
    const json_t *cmd = json_object_get(mcp, "command"); /* borrowed */
    size_t i;
    json_t *v; /* borrowed */
    if (!json_is_array(cmd) || json_array_size(cmd) == 0)
        return bad(err, key, "mcp.command",
                   "must be a non-empty array of strings (the server's "
                   "argv, run without a shell)");
    json_array_foreach(cmd, i, v)
    {
        if (!json_is_string(v) || json_string_length(v) == 0 ||
            strlen(json_string_value(v)) != json_string_length(v))
            return bad(err, key, "mcp.command",
                       "[%zu] must be a non-empty string without NUL", i);
    }
    c->command = json_deep_copy(cmd);
    int rc =
        string_object(json_object_get(mcp, "env"), true, err, key, "mcp.env");
    if (rc)
        return rc;
    if ((v = json_object_get(mcp, "env")) && !(c->env = json_deep_copy(v)))
        return TG_ENOMEM;
    if ((v = json_object_get(mcp, "cwd"))) {
        if (!json_is_string(v) || json_string_value(v)[0] != '/')
            return bad(err, key, "mcp.cwd", "must be an absolute path");
        if (dup(&c->cwd, json_string_value(v)))
            return TG_ENOMEM;
    }
    if ((v = json_object_get(mcp, "env_pass"))) {
        json_t *n; /* borrowed */
        if (!json_is_array(v))
            return bad(err, key, "mcp.env_pass",
                       "must be an array of environment variable names");
        json_array_foreach(v, i, n)
        {
            if (!json_is_string(n) || !env_name(json_string_value(n)))
                return bad(err, key, "mcp.env_pass",
                           "[%zu] must be an environment variable name", i);
        }
        if ((c->env_pass = json_deep_copy(v)) == NULL)
            return TG_ENOMEM;
    }
    if ((rc = get_bool(mcp, "network", &c->network, err, key)) ||
        (rc = get_bool(mcp, "sandbox", &c->sandbox, err, key)))
        return rc;
    return c->command ? 0 : TG_ENOMEM;
}

/* The HTTP members: url, headers, token_env. */
static int http_members(const json_t *mcp, tg__source_cfg *c, tg_error *err,
                        const char *key)
{
    const json_t *v = json_object_get(mcp, "url"); /* borrowed */
    const char *u = json_string_value(v);
    if (u == NULL ||
        (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0))
        return bad(err, key, "mcp.url", "must be an http:// or https:// URL");
    if (dup(&c->url, u))
        return TG_ENOMEM;
    int rc = string_object(json_object_get(mcp, "headers"), false, err, key,
                           "mcp.headers");
    if (rc)
        return rc;
    if ((v = json_object_get(mcp, "headers")) &&
        !(c->headers = json_deep_copy(v)))
        return TG_ENOMEM;
    if ((v = json_object_get(mcp, "token_env"))) {
        if (!json_is_string(v) || !env_name(json_string_value(v)))
            return bad(err, key, "mcp.token_env",
                       "must be the name of an environment variable");
        if (dup(&c->token_env, json_string_value(v)))
            return TG_ENOMEM;
    }
    return 0;
}

/* A root must name a directory other than "/" without "." or ".." (the
 * session checks the URI again once it is made). */
static int check_roots(const json_t *v, tg__source_cfg *c, tg_error *err,
                       const char *key)
{
    size_t i;
    json_t *r; /* borrowed */
    if (!json_is_array(v) || json_array_size(v) == 0)
        return bad(err, key, "mcp.roots",
                   "must be a non-empty array of paths or file:// URIs");
    json_array_foreach(v, i, r)
    {
        const char *s = json_string_value(r);
        if (s == NULL || *s == '\0')
            return bad(err, key, "mcp.roots", "[%zu] must be a path", i);
        const char *p = strncmp(s, "file://", 7) == 0 ? s + 7 : s;
        if (strncmp(s, "file:", 5) != 0 && strstr(s, "://") != NULL)
            return bad(err, key, "mcp.roots",
                       "[%zu] '%s' must be a path or a file:// URI", i, s);
        size_t n = strlen(p);
        while (n > 0 && p[n - 1] == '/')
            n--;
        if (n == 0)
            return bad(err, key, "mcp.roots",
                       "[%zu] must not be '/': a server would take the "
                       "whole file system as its own",
                       i);
        for (const char *q = p; *q;) {
            const char *e = strchr(q, '/');
            size_t len = e ? (size_t)(e - q) : strlen(q);
            if ((len == 1 && q[0] == '.') ||
                (len == 2 && q[0] == '.' && q[1] == '.'))
                return bad(err, key, "mcp.roots",
                           "[%zu] '%s' must not have a '.' or '..' segment", i,
                           s);
            q += len + (e != NULL);
        }
    }
    return (c->roots = json_deep_copy(v)) ? 0 : TG_ENOMEM;
}

static int options(const json_t *mcp, tg__source_cfg *c, tg_error *err,
                   const char *key)
{
    const json_t *v;
    int rc;
    if ((v = json_object_get(mcp, "separator"))) {
        const char *s = json_string_value(v);
        if (s == NULL || *s == '\0' || strlen(s) > 8 || !tg__tool_name_valid(s))
            return bad(err, key, "mcp.separator",
                       "must be 1 to 8 letters, digits, '_', '.' or '-'");
        free(c->sep);
        c->sep = NULL;
        if (dup(&c->sep, s))
            return TG_ENOMEM;
    }
    if ((rc = get_bool(mcp, "trusted", &c->trusted, err, key)))
        return rc;
    if ((v = json_object_get(mcp, "pin"))) {
        const char *s = json_string_value(v);
        if (s && strcmp(s, "on") == 0)
            c->pin = TG__PIN_ON;
        else if (s && strcmp(s, "strict") == 0)
            c->pin = TG__PIN_STRICT;
        else if (s && strcmp(s, "off") == 0)
            c->pin = TG__PIN_OFF;
        else
            return bad(err, key, "mcp.pin",
                       "must be \"on\" (the default), \"strict\" or \"off\"");
    }
    if ((v = json_object_get(mcp, "start"))) {
        const char *s = json_string_value(v);
        if (s && strcmp(s, "lazy") == 0)
            c->eager = false;
        else if (s && strcmp(s, "eager") == 0)
            c->eager = true;
        else
            return bad(err, key, "mcp.start",
                       "must be \"lazy\" (the default: at the first call) or "
                       "\"eager\" (when the runtime starts)");
    }
    if ((v = json_object_get(mcp, "roots")) &&
        (rc = check_roots(v, c, err, key)))
        return rc;
    const int64_t day = 86400000;
    if ((rc = get_ms(mcp, "timeout_ms", day, &c->timeout_ms, err, key)) ||
        (rc = get_ms(mcp, "max_timeout_ms", day, &c->max_timeout_ms, err,
                     key)) ||
        (rc = get_ms(mcp, "connect_ms", 600000, &c->connect_ms, err, key)) ||
        (rc = get_ms(mcp, "max_tools", TG__SOURCE_MAX_TOOLS, &c->max_tools, err,
                     key)))
        return rc;
    if (c->max_timeout_ms > 0 && c->timeout_ms > c->max_timeout_ms)
        return bad(err, key, "mcp.max_timeout_ms",
                   "must not be less than mcp.timeout_ms");
    return 0;
}

int tg__source_cfg_parse(const json_t *entry, const char *key,
                         tg__source_cfg **out, tg_error *err)
{
    static const char *const stdio_only[] = {"env",     "cwd",     "env_pass",
                                             "network", "sandbox", NULL};
    static const char *const http_only[] = {"headers", "token_env", NULL};
    *out = NULL;
    const char *k;
    json_t *v; /* borrowed */
    json_object_foreach((json_t *)entry, k, v)
    {
        if (!tg__config_key_known("tools[] (MCP source)", k))
            return bad(err, key, k,
                       "is not a member of an MCP source (it has \"name\" "
                       "and \"mcp\")");
    }
    const json_t *mcp = json_object_get(entry, "mcp"); /* borrowed */
    if (!json_is_object(mcp))
        return bad(err, key, "mcp", "must be an object");
    json_object_foreach((json_t *)mcp, k, v)
    {
        if (!tg__config_key_known("tools[].mcp", k))
            return bad(err, key, "mcp", "has an unknown member '%s'", k);
    }
    const json_t *name = json_object_get(entry, "name"); /* borrowed */
    if (!json_is_string(name) || !tg__tool_name_valid(json_string_value(name)))
        return bad(err, key, "name",
                   "must be a string of 1 to 128 letters, digits, '_', '.' "
                   "or '-'");
    bool has_cmd = json_object_get(mcp, "command") != NULL;
    bool has_url = json_object_get(mcp, "url") != NULL;
    if (has_cmd == has_url)
        return bad(err, key, "mcp",
                   "needs exactly one of \"command\" (a server run over "
                   "stdio) and \"url\" (Streamable HTTP)");
    const char *const *wrong = has_cmd ? http_only : stdio_only;
    for (size_t i = 0; wrong[i]; i++)
        if (json_object_get(mcp, wrong[i]) != NULL)
            return bad(err, key, "mcp",
                       "has \"%s\", which only a server %s has", wrong[i],
                       has_cmd ? "reached over HTTP" : "run over stdio");
    tg__source_cfg *c = calloc(1, sizeof *c);
    if (c == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    c->pin = TG__PIN_ON;
    c->network = true;
    c->sandbox = true;
    c->connect_ms = TG__SOURCE_DEFAULT_CONNECT_MS;
    c->max_tools = TG__SOURCE_DEFAULT_MAX_TOOLS;
    int rc = dup(&c->name, json_string_value(name));
    if (rc == 0)
        rc = dup(&c->sep, TG__SOURCE_DEFAULT_SEP);
    if (rc == 0)
        rc = has_cmd ? stdio_members(mcp, c, err, key)
                     : http_members(mcp, c, err, key);
    if (rc == 0)
        rc = options(mcp, c, err, key);
    if (rc != 0) {
        tg__source_cfg_free(c);
        if (rc == TG_ENOMEM)
            return tg__error_set(err, TG_ENOMEM, "out of memory");
        return rc;
    }
    *out = c;
    return 0;
}
