/* SPDX-License-Identifier: MIT */
/*
 * remote_sources.c - the MCP servers behind a runtime (remote.h): made from
 * the configuration's source entries or added on a live runtime
 * (tg_runtime_add_source), each with its connection (src/remote/rsource.h)
 * started eagerly, or lazily when a turn first names its prefix; listed
 * with their state and tools (tg_runtime_sources); closed with the
 * runtime. A stdio server gets what a command tool gets of the runtime:
 * the allowlisted environment plus its own env and env_pass
 * (tg__proc_env_tool), its own process group, the workspace as its cwd.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "pin.h"
#include "process.h"
#include "remote.h"
#include "runtime.h"
#include "timeutil.h"

/* ------------------------------------------------------------ making */

/* "NAME=value" of each name set in toolgate's environment, taken now (a
 * server sees its own env_pass names only). NULL-terminated; NULL on OOM. */
static char **pass_values(const json_t *names)
{
    size_t n = json_array_size(names), k = 0;
    char **env = calloc(n + 1, sizeof *env);
    if (env == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const char *name = json_string_value(json_array_get(names, i));
        const char *v = name ? getenv(name) : NULL;
        if (v == NULL)
            continue;
        size_t len = strlen(name) + strlen(v) + 2;
        if ((env[k] = malloc(len)) == NULL)
            goto fail;
        snprintf(env[k++], len, "%s=%s", name, v);
    }
    return env;
fail:
    for (size_t i = 0; i < k; i++)
        free(env[i]);
    free(env);
    return NULL;
}

/* A file:// URI of an absolute path, bytes outside the unreserved set and
 * '/' percent-encoded; caller frees. */
static char *file_uri(const char *path)
{
    size_t len = strlen(path);
    char *u = malloc(3 * len + 8);
    if (u == NULL)
        return NULL;
    size_t o = 0;
    memcpy(u, "file://", 7);
    o = 7;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || strchr("-._~/", *p) != NULL) {
            u[o++] = (char)*p;
        } else {
            snprintf(u + o, 4, "%%%02X", *p);
            o += 3;
        }
    }
    u[o] = '\0';
    return u;
}

/* The roots the server may ask for: the configured ones (relative paths
 * under the workspace), else the workspace. *uris owned, n of them. */
static int make_roots(const tg_runtime *rt, const tg__source_cfg *c,
                      tg__rroot **roots, char ***uris, size_t *n)
{
    size_t k = c->roots ? json_array_size(c->roots) : 1;
    *n = 0;
    *roots = calloc(k, sizeof **roots);
    *uris = calloc(k, sizeof **uris);
    if (*roots == NULL || *uris == NULL)
        return TG_ENOMEM;
    for (size_t i = 0; i < k; i++) {
        const char *r = c->roots
                            ? json_string_value(json_array_get(c->roots, i))
                            : rt->cfg->workspace;
        char *u;
        if (strncmp(r, "file://", 7) == 0) {
            u = strdup(r);
        } else if (r[0] == '/') {
            u = file_uri(r);
        } else {
            size_t len = strlen(rt->cfg->workspace) + strlen(r) + 2;
            char *p = malloc(len);
            if (p == NULL)
                return TG_ENOMEM;
            snprintf(p, len, "%s/%s", rt->cfg->workspace, r);
            u = file_uri(p);
            free(p);
        }
        if (u == NULL)
            return TG_ENOMEM;
        (*uris)[i] = u;
        (*roots)[i].uri = u;
        (*n)++;
    }
    return 0;
}

static void free_strs(char **v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++)
        free(v[i]);
    free(v);
}

static void on_state(void *ud)
{
    (void)ud; /* the loops that wait for sources look at the state */
}

/* The argv that runs a stdio server (argv, its cwd and environment) in
 * the command tools' bubblewrap sandbox (sandbox.c: namespaces, the root
 * read-only, the workspace read-write, toolgate's own files hidden, the
 * network unless "network"), when the source is sandboxed and bubblewrap
 * works here: a new array of borrowed strings (free() it; *path holds the
 * resolved program), else NULL with *level saying how it runs. The
 * per-call process limit's hand-shake (--info-fd/--block-fd) is left out:
 * the server is one long-lived process group, not a call. */
static char **sandboxed_argv(tg_runtime *rt, const tg__source_cfg *c,
                             char *const *argv, char *const *envp,
                             const char *cwd, char *path, size_t pathlen,
                             tg__sbx_level *level)
{
    *level = TG__SBX_NONE;
    if (!c->sandbox || rt->cfg->sandbox_mode == TG__SANDBOX_OFF)
        return NULL;
    tg__sandbox_probe(&rt->sandbox, rt->cfg, rt->base_env);
    /* a server lives as long as its session: its own bubblewrap (cold) */
    tg__tool shape = {.kind = TG_TOOL_KIND_COMMAND,
                      .network = c->network,
                      .sandbox_mode = TG__SANDBOX_COLD};
    /* a program that is not there is said plainly by the plain spawn */
    if (tg__sandbox_level(&rt->sandbox, &shape) != TG__SBX_BWRAP ||
        tg__proc_resolve(argv[0], tg__proc_getenv(envp, "PATH"), cwd, path,
                         pathlen) != 0 ||
        access(path, X_OK) != 0)
        return NULL;
    char **a = tg__sandbox_argv(&rt->sandbox, rt->cfg, &shape, cwd, path, argv);
    size_t n = 0;
    for (size_t i = 0; a != NULL && a[i] != NULL; i++) {
        if ((strcmp(a[i], "--info-fd") == 0 ||
             strcmp(a[i], "--block-fd") == 0) &&
            a[i + 1] != NULL) {
            i++; /* and its descriptor */
            continue;
        }
        a[n++] = a[i];
    }
    if (a != NULL) {
        a[n] = NULL;
        *level = TG__SBX_BWRAP;
    }
    return a;
}

/* Makes src->rs from src->cfg. */
static int make_connection(tg_runtime *rt, tg__rsrc *src, tg_error *err)
{
    const tg__source_cfg *c = src->cfg;
    tg__rroot *roots = NULL;
    char **uris = NULL, **argv = NULL, **envp = NULL, **pass = NULL;
    char **headers = NULL, **boxed = NULL;
    char path[PATH_MAX];
    void *env_owned = NULL;
    size_t nroots = 0, nargv = 0, nheaders = 0;
    tg__rhttp_opts http = {0};
    int rc = make_roots(rt, c, &roots, &uris, &nroots);
    if (rc != 0)
        goto oom;
    tg__rsource_opts o = {
        .loop = &rt->loop,
        .name = c->name,
        .roots = roots,
        .nroots = nroots,
        .connect_ms = (unsigned)c->connect_ms,
        .max_tools = TG__SOURCE_MAX_TOOLS, /* past mcp.max_tools: disabled */
    };
    if (c->command != NULL) {
        nargv = json_array_size(c->command);
        if ((argv = calloc(nargv + 1, sizeof *argv)) == NULL)
            goto oom;
        for (size_t i = 0; i < nargv; i++)
            argv[i] = (char *)json_string_value(json_array_get(c->command, i));
        if ((pass = pass_values(c->env_pass)) == NULL ||
            tg__proc_env_tool(rt->base_env, pass, c->env_pass, c->env, NULL,
                              &envp, &env_owned) != 0)
            goto oom;
        o.envp = (const char *const *)envp;
        o.cwd = c->cwd         ? c->cwd
                : rt->cfg->cwd ? rt->cfg->cwd
                               : rt->cfg->workspace;
        tg__sbx_level level;
        boxed =
            sandboxed_argv(rt, c, argv, envp, o.cwd, path, sizeof path, &level);
        o.argv = (const char *const *)(boxed ? boxed : argv);
        src->sandbox = tg__sandbox_level_name(level);
    } else {
        const char *token = NULL;
        if (c->token_env != NULL && (token = getenv(c->token_env)) == NULL) {
            rc = tg__error_set(err, TG_ECONFIG,
                               "MCP source '%s': mcp.token_env names %s, "
                               "which is not set",
                               c->name, c->token_env);
            goto done;
        }
        nheaders = json_object_size(c->headers);
        if (nheaders > 0 &&
            (headers = calloc(nheaders, sizeof *headers)) == NULL)
            goto oom;
        size_t i = 0;
        const char *k;
        json_t *v; /* borrowed */
        json_object_foreach(c->headers, k, v)
        {
            size_t len = strlen(k) + json_string_length(v) + 3;
            if ((headers[i] = malloc(len)) == NULL)
                goto oom;
            snprintf(headers[i++], len, "%s: %s", k, json_string_value(v));
        }
        http.url = c->url;
        http.headers = (const char *const *)headers;
        http.n_headers = nheaders;
        http.bearer_token = token;
        o.http = &http;
    }
    static const tg__rsource_cbs cbs = {tg__rsrc_listed, on_state, NULL,
                                        tg__rcall_elicit};
    rc = tg__rsource_new(&o, &cbs, src, &src->rs, err);
    goto done;
oom:
    rc = tg__error_set(err, TG_ENOMEM, "out of memory");
done:
    free(roots);
    free_strs(uris, nroots);
    free(boxed);
    free(argv);
    free(env_owned); /* envp is it, or the runtime's base_env */
    for (size_t i = 0; pass != NULL && pass[i] != NULL; i++)
        free(pass[i]);
    free(pass);
    free_strs(headers, nheaders);
    return rc;
}

static void rsrc_free(tg__rsrc *src)
{
    if (src == NULL)
        return;
    tg__rsource_free(src->rs);
    tg__source_cfg_free(src->cfg);
    free(src->prefix);
    json_decref(src->tools);
    json_decref(src->defs);
    json_decref(src->mem_pins);
    json_decref(src->server);
    free(src->server_text);
    free(src);
}

/* A source from a parsed entry (taken), linked into rt and started when
 * eager. */
static int add_source(tg_runtime *rt, tg__source_cfg *cfg, tg_error *err)
{
    for (tg__rsrc *s = rt->sources; s != NULL; s = s->next)
        if (!s->removed && strcmp(s->cfg->name, cfg->name) == 0) {
            int rc = tg__error_set(err, TG_EEXIST,
                                   "an MCP source named '%s' is already there",
                                   cfg->name);
            tg__source_cfg_free(cfg);
            return rc;
        }
    tg__rsrc *src = calloc(1, sizeof *src);
    if (src == NULL) {
        tg__source_cfg_free(cfg);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    src->rt = rt;
    src->cfg = cfg;
    size_t len = strlen(cfg->name) + strlen(cfg->sep) + 1;
    src->prefix = malloc(len);
    src->tools = json_array();
    src->mem_pins = json_object();
    if (src->prefix == NULL || src->tools == NULL || src->mem_pins == NULL) {
        rsrc_free(src);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    snprintf(src->prefix, len, "%s%s", cfg->name, cfg->sep);
    int rc = make_connection(rt, src, err);
    if (rc != 0) {
        rsrc_free(src);
        return rc;
    }
    src->next = rt->sources;
    rt->sources = src;
    if (cfg->eager)
        tg__rsource_start(src->rs);
    return 0;
}

int tg__rsrcs_init(tg_runtime *rt, tg_error *err)
{
    size_t i;
    json_t *entry; /* borrowed */
    json_array_foreach(rt->cfg->tools, i, entry)
    {
        if (!tg__source_entry(entry))
            continue;
        char key[32];
        snprintf(key, sizeof key, "tools[%zu]", i);
        tg__source_cfg *c = NULL;
        int rc = tg__source_cfg_parse(entry, key, &c, err);
        if (rc == 0)
            rc = add_source(rt, c, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

void tg__rsrcs_close(tg_runtime *rt)
{
    for (tg__rsrc *s = rt->sources; s != NULL; s = s->next)
        tg__rsource_close(s->rs);
}

void tg__rsrcs_free(tg_runtime *rt)
{
    tg__rsrc *s = rt->sources;
    while (s != NULL) {
        tg__rsrc *next = s->next;
        rsrc_free(s);
        s = next;
    }
    rt->sources = NULL;
}

tg__rsrc *tg__rsrcs_for(const tg_runtime *rt, const char *tool)
{
    for (tg__rsrc *s = rt->sources; s != NULL && tool != NULL; s = s->next)
        if (!s->removed && strncmp(tool, s->prefix, strlen(s->prefix)) == 0)
            return s;
    return NULL;
}

/* ------------------------------------------------------------ waiting */

/* Runs the loop while a source (only: that one; NULL: every one) is
 * starting or listing its tools, for at most timeout_ms (0: no bound but
 * the sources' own). */
static void wait_sources(tg_runtime *rt, const tg__rsrc *only,
                         int64_t timeout_ms)
{
    uint64_t end =
        timeout_ms > 0 ? tg__mono_ns() + (uint64_t)timeout_ms * 1000000u : 0;
    for (;;) {
        bool starting = false;
        for (tg__rsrc *s = rt->sources; s != NULL; s = s->next)
            if ((only == NULL || s == only) && !s->removed &&
                (tg__rsource_state_of(s->rs) == TG__RS_STARTING ||
                 tg__rsource_listing(s->rs)))
                starting = true;
        if (!starting || (end != 0 && tg__mono_ns() >= end))
            return;
        uv_run(&rt->loop, UV_RUN_ONCE);
    }
}

void tg__rsrcs_prepare(tg_runtime *rt, tg_call *const *calls, size_t n,
                       int64_t timeout_ms)
{
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        const char *name = calls[i]->tool;
        if (name == NULL || tg__registry_find(rt->reg, name) != NULL)
            continue;
        tg__rsrc *s = tg__rsrcs_for(rt, name);
        if (s == NULL)
            continue;
        tg__rsource_state st = tg__rsource_state_of(s->rs);
        if (st == TG__RS_IDLE || st == TG__RS_FAILED) {
            tg__rsource_start(s->rs);
            any = true;
        } else if (st == TG__RS_STARTING || tg__rsource_listing(s->rs)) {
            any = true; /* its tools are being (re)listed */
        }
    }
    if (any && timeout_ms >= 0)
        wait_sources(rt, NULL, timeout_ms);
}

/* ------------------------------------------------------------ public */

int tg_runtime_add_source(tg_runtime *rt, const char *entry_json, tg_error *err)
{
    if (rt == NULL || entry_json == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_runtime_add_source needs a runtime and an "
                             "entry");
    json_error_t je;
    json_t *e = json_loads(entry_json, JSON_REJECT_DUPLICATES, &je); /* new */
    if (e == NULL)
        return tg__error_set(err, TG_ECONFIG,
                             "the source entry is not JSON: %s (at %d)",
                             je.text, je.position);
    int rc;
    tg__source_cfg *c = NULL;
    if (!tg__source_entry(e))
        rc = tg__error_set(err, TG_ECONFIG,
                           "a source entry is an object with \"name\" and "
                           "\"mcp\"");
    else if ((rc = tg__source_cfg_parse(e, "source", &c, err)) == 0)
        rc = add_source(rt, c, err);
    json_decref(e);
    return rc;
}

int tg_runtime_remove_source(tg_runtime *rt, const char *name, tg_error *err)
{
    if (rt == NULL || name == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_runtime_remove_source needs a runtime and a "
                             "name");
    for (tg__rsrc *s = rt->sources; s != NULL; s = s->next) {
        if (s->removed || strcmp(s->cfg->name, name) != 0)
            continue;
        /* its calls in flight end INTERRUPTED when the session closes; the
         * struct stays until the runtime is freed (tools borrow it) */
        tg__rsrc_unregister(s);
        s->removed = true;
        tg__rsource_close(s->rs);
        return 0;
    }
    return tg__error_set(err, TG_ENOTFOUND, "no MCP source named '%s'", name);
}

int tg_runtime_sources_wait(tg_runtime *rt, int64_t timeout_ms, tg_error *err)
{
    if (rt == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_runtime_sources_wait needs a runtime");
    if (rt->current != NULL || rt->nruns > 0)
        return tg__error_set(err, TG_EINVAL,
                             "tg_runtime_sources_wait cannot run while turns "
                             "run on this runtime");
    for (tg__rsrc *s = rt->sources; s != NULL; s = s->next)
        if (!s->removed)
            tg__rsource_start(s->rs);
    wait_sources(rt, NULL, timeout_ms);
    return 0;
}

/* One source as tg_runtime_sources shows it; new ref. */
static json_t *source_json(const tg__rsrc *s)
{
    tg__rsource_state st = tg__rsource_state_of(s->rs);
    const tg_error *e = tg__rsource_error(s->rs);
    json_t *info = json_loads(tg__rsource_server_info(s->rs), 0, NULL);
    static const char *const pins[] = {"off", "on", "strict"};
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s?, s:o, s:s, s:b, s:s, s:I, s:O}", "name",
        s->cfg->name, "transport", tg__rsource_transport(s->rs), "state",
        s->removed ? "removed" : tg__rsource_state_name(st), "protocol",
        tg__rsource_protocol(s->rs), "server", info ? info : json_object(),
        "prefix", s->prefix, "trusted", s->cfg->trusted, "pin",
        pins[s->cfg->pin], "starts", (json_int_t)tg__rsource_starts(s->rs),
        "tools", s->tools); /* new ref */
    if (o != NULL && s->sandbox != NULL)
        json_object_set_new(o, "sandbox", json_string(s->sandbox));
    if (o != NULL && e->code != 0 && st != TG__RS_READY)
        json_object_set_new(o, "error", json_string(e->message));
    if (o != NULL && s->defs != NULL)
        json_object_set(o, "definitions", s->defs);
    return o;
}

int tg_runtime_sources(tg_runtime *rt, char **json_out, tg_error *err)
{
    if (rt == NULL || json_out == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_runtime_sources needs a runtime and out");
    *json_out = NULL;
    json_t *a = json_array(); /* new ref */
    int rc = a ? 0 : TG_ENOMEM;
    /* in configuration order: the list is newest first */
    size_t n = 0;
    for (tg__rsrc *s = rt->sources; s != NULL; s = s->next)
        n++;
    for (size_t i = n; rc == 0 && i > 0; i--) {
        tg__rsrc *s = rt->sources;
        for (size_t k = 1; k < i; k++)
            s = s->next;
        if (json_array_append_new(a, source_json(s)) != 0)
            rc = TG_ENOMEM;
    }
    if (rc == 0 && (*json_out = json_dumps(a, JSON_COMPACT)) == NULL)
        rc = TG_ENOMEM;
    json_decref(a);
    return rc ? tg__error_set(err, rc, "out of memory") : 0;
}

/* What waits for `remote` of src: the pinned and the served definitions
 * (JCS texts, *old NULL for a tool never accepted) and the served
 * checksum. Strings are the caller's. TG_ENOTFOUND when nothing waits. */
static int waiting(tg__rsrc *src, const char *remote, char **old, char **cur,
                   char **checksum, tg_error *err)
{
    *old = *cur = *checksum = NULL;
    tg__journal *j = src->rt->journal;
    if (j != NULL) {
        tg__pin_row *rows = NULL;
        size_t n = 0;
        int rc = tg__journal_pins_read(j, src->cfg->name, &rows, &n, err);
        if (rc != 0)
            return rc;
        rc = tg__error_set(err, TG_ENOTFOUND,
                           "nothing waits to be accepted for tool '%s%s'",
                           src->prefix, remote);
        for (size_t i = 0; i < n; i++) {
            if (strcmp(rows[i].tool, remote) != 0 ||
                rows[i].pending_definition == NULL)
                continue;
            *old = rows[i].definition ? strdup(rows[i].definition) : NULL;
            *cur = strdup(rows[i].pending_definition);
            *checksum = strdup(rows[i].pending_checksum);
            rc = *cur && *checksum
                     ? 0
                     : tg__error_set(err, TG_ENOMEM, "out of memory");
        }
        tg__journal_pins_free(rows, n);
        return rc;
    }
    /* journal off: the pins of this runtime's life */
    size_t i;
    json_t *d; /* borrowed */
    json_array_foreach(src->defs, i, d)
    {
        if (strcmp(json_string_value(json_object_get(d, "name")), remote) != 0)
            continue;
        char sum[TG_CHECKSUM_MAX];
        int rc = tg__pin_definition(d, 0, cur, sum, err);
        if (rc != 0)
            return rc;
        json_t *p = json_object_get(src->mem_pins, remote); /* borrowed */
        const char *pinned = json_string_value(json_object_get(p, "checksum"));
        if (pinned != NULL && strcmp(pinned, sum) == 0) {
            free(*cur);
            *cur = NULL;
            break;
        }
        const char *pd = json_string_value(json_object_get(p, "definition"));
        *old = pd ? strdup(pd) : NULL;
        *checksum = strdup(sum);
        return 0;
    }
    return tg__error_set(err, TG_ENOTFOUND,
                         "nothing waits to be accepted for tool '%s%s'",
                         src->prefix, remote);
}

int tg_runtime_source_accept(tg_runtime *rt, const char *tool, int apply,
                             char **diff_out, tg_error *err)
{
    if (rt == NULL || tool == NULL || diff_out == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_runtime_source_accept needs a runtime, a "
                             "tool and out");
    *diff_out = NULL;
    tg__rsrc *src = tg__rsrcs_for(rt, tool);
    if (src == NULL)
        return tg__error_set(err, TG_ENOTFOUND,
                             "no MCP source serves tools named like '%s'",
                             tool);
    if (tg__rsource_state_of(src->rs) != TG__RS_READY) {
        if (rt->current != NULL || rt->nruns > 0)
            return tg__error_set(err, TG_EINVAL, "MCP source '%s' is not ready",
                                 src->cfg->name);
        tg__rsource_start(src->rs);
        wait_sources(rt, src, 0);
    }
    const char *remote = tool + strlen(src->prefix);
    char *old = NULL, *cur = NULL, *sum = NULL;
    int rc = waiting(src, remote, &old, &cur, &sum, err);
    if (rc == 0)
        rc = tg__pin_diff(old, cur, diff_out, err);
    if (rc == 0 && apply) {
        if (rt->journal != NULL)
            rc = tg__journal_pin_accept(rt->journal, src->cfg->name, remote,
                                        sum, err);
        else if (json_object_set_new(src->mem_pins, remote,
                                     json_pack("{s:s, s:s}", "checksum", sum,
                                               "definition", cur)) != 0)
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        if (rc == 0 && src->defs != NULL)
            tg__rsrc_apply(src, json_incref(src->defs));
    }
    if (rc != 0) {
        free(*diff_out);
        *diff_out = NULL;
    }
    free(old);
    free(cur);
    free(sum);
    return rc;
}
