/* SPDX-License-Identifier: MIT */
/*
 * doctor.c - tg_runtime_doctor and tg_runtime_warning: what protection the
 * runtime's subprocesses run under, for `toolgate doctor` (one JSON object
 * or lines for a person) and for the warning an embedder prints once. Only
 * names of environment variables are reported, never values. The lines for
 * a person are safe for a terminal: every path, name and message in them
 * (a tool's name, bubblewrap's error, a directory named with an escape
 * sequence) goes through tg__term_escape.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandboxd_proto.h"
#include "buf.h"
#include "error.h"
#include "runtime.h"
#include "termtext.h"

extern char **environ;

const char *tg_runtime_warning(const tg_runtime *rt)
{
    return rt != NULL ? rt->sandbox.warning : NULL;
}

/* Whether this process may make a user namespace (a child tries). */
static bool userns_works(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
    if (pid < 0)
        return false;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return false;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* A directory that exists and is writable, or would be created in one. */
static const char *dir_state(const char *path)
{
    struct stat st;
    if (path == NULL)
        return "off";
    if (stat(path, &st) == 0)
        return S_ISDIR(st.st_mode) && access(path, W_OK | X_OK) == 0
                   ? "writable"
                   : "NOT WRITABLE";
    char *p = strdup(path);
    if (p == NULL)
        return "unknown";
    const char *state = "NOT WRITABLE";
    char *slash;
    while ((slash = strrchr(p, '/')) != NULL) {
        if (slash == p)
            slash[1] = '\0';
        else
            *slash = '\0';
        if (stat(p, &st) == 0) {
            if (S_ISDIR(st.st_mode) && access(p, W_OK | X_OK) == 0)
                state = "writable (created on first use)";
            break;
        }
        if (slash == p)
            break;
    }
    free(p);
    return state;
}

/* True when some tool passes `name` on by its env_pass. */
static bool passed(const tg_runtime *rt, const char *name, size_t len)
{
    for (size_t i = 0; i < tg__registry_count(rt->reg); i++) {
        const tg__tool *t = tg__registry_at(rt->reg, i);
        size_t j;
        json_t *v; /* borrowed */
        json_array_foreach(t->env_pass, j, v)
        {
            const char *s = json_string_value(v);
            if (strlen(s) == len && memcmp(s, name, len) == 0)
                return true;
        }
    }
    return false;
}

static int add(json_t *o, const char *key, json_t *v_take)
{
    return v_take == NULL || json_object_set_new(o, key, v_take) != 0
               ? TG_ENOMEM
               : 0;
}

static json_t *str_or_null(const char *s)
{
    return s != NULL && s[0] != '\0' ? json_string(s) : json_null();
}

static const char *mode_name(int mode)
{
    return mode == TG__SANDBOX_BWRAP  ? "bubblewrap"
           : mode == TG__SANDBOX_OFF  ? "off"
           : mode == TG__SANDBOX_WARM ? "warm"
           : mode == TG__SANDBOX_COLD ? "cold"
                                      : "auto";
}

/* Why `tool` runs at `level` (a static or sb's string). */
static const char *level_why(const tg__sandbox *sb, const tg__tool *t,
                             tg__sbx_level level)
{
    const char *why = NULL;
    if (t->unsandboxed)
        return "the tool says \"sandbox\": false";
    if (sb->mode == TG__SANDBOX_OFF)
        return "sandbox.mode is \"off\"";
    if (level < TG__SBX_BWRAP)
        return "bubblewrap cannot run here";
    (void)tg__sandbox_warm_wanted(sb, t, &why);
    return why;
}

/* The report as JSON (new ref), NULL on out of memory. */
static json_t *report(tg_runtime *rt)
{
    tg__sandbox *sb = &rt->sandbox;
    const tg_config *cfg = rt->cfg;
    tg__sbx_level level = tg__sandbox_level(sb, NULL);
    bool bw = level >= TG__SBX_BWRAP;
    json_t *r = json_object();     /* new ref */
    json_t *s = json_object();     /* new ref */
    json_t *hidden = json_array(); /* new ref */
    json_t *own = json_pack("{s:[], s:[], s:[], s:[], s:[]}", "hidden",
                            "masked", "pinned", "refused_to_file_tools",
                            "exposed_to"); /* new ref */
    json_t *withheld = json_array();       /* new ref */
    json_t *tools = json_array();          /* new ref */
    json_t *net_tools = json_array();      /* new ref */
    json_t *allow = json_array();          /* new ref */
    int rc = r && s && hidden && own && withheld && tools && net_tools && allow
                 ? 0
                 : TG_ENOMEM;
    /* sandbox.hide's masks, then (from state_from) toolgate's own files */
    for (size_t i = 0; rc == 0 && i < sb->npost; i++) {
        bool mine = i >= sb->state_from;
        const char *what = NULL;
        const char *p = NULL;
        if (strcmp(sb->post[i], "--tmpfs") == 0 && i + 1 < sb->npost)
            what = "hidden", p = sb->post[i + 1];
        else if (strcmp(sb->post[i], "--ro-bind") == 0 && i + 2 < sb->npost)
            what = "masked", p = sb->post[i + 2];
        else if (strcmp(sb->post[i], "--bind") == 0 && i + 1 < sb->npost)
            what = "pinned", p = sb->post[i + 1];
        if (p == NULL || (mine && !bw))
            continue;
        rc = json_array_append_new(mine ? json_object_get(own, what) : hidden,
                                   json_string(p));
    }
    for (size_t i = 0; rc == 0 && rt->state.refuse[i] != NULL; i++)
        rc =
            json_array_append_new(json_object_get(own, "refused_to_file_tools"),
                                  json_string(rt->state.refuse[i]));
    for (size_t i = 0; rc == 0 && i < tg__registry_count(rt->reg); i++) {
        const tg__tool *t = tg__registry_at(rt->reg, i);
        if (t->kind != TG_TOOL_KIND_COMMAND)
            continue;
        tg__sbx_level l = tg__sandbox_level(sb, t);
        bool net = l < TG__SBX_BWRAP || t->network;
        rc = json_array_append_new(
            tools, json_pack("{s:s, s:s, s:s, s:b}", "name", t->name, "sandbox",
                             tg__sandbox_level_name(l), "why",
                             level_why(sb, t, l), "network", net));
        if (rc == 0 && net)
            rc = json_array_append_new(net_tools, json_string(t->name));
        /* outside bubblewrap a tool reaches whatever this user can */
        if (rc == 0 && l < TG__SBX_BWRAP)
            rc = json_array_append_new(json_object_get(own, "exposed_to"),
                                       json_pack("{s:s, s:s}", "name", t->name,
                                                 "sandbox",
                                                 tg__sandbox_level_name(l)));
    }
    for (size_t i = 0; rc == 0 && rt->base_env[i]; i++)
        rc = json_array_append_new(
            allow,
            json_stringn(rt->base_env[i], strcspn(rt->base_env[i], "=")));
    for (size_t i = 0; rc == 0 && environ && environ[i]; i++) {
        size_t n = strcspn(environ[i], "=");
        char name[256];
        if (n == 0 || n >= sizeof name)
            continue;
        memcpy(name, environ[i], n);
        name[n] = '\0';
        if (tg__env_secret_name(name) && !passed(rt, name, n))
            rc = json_array_append_new(withheld, json_string(name));
    }
    bool userns = sb->bwrap_ok || userns_works();
    int landlock = tg_sbd_landlock_abi();
    if (rc == 0)
        rc = add(s, "mode", json_string(mode_name(sb->mode))) ||
             add(s, "in_force", json_string(tg__sandbox_level_name(level))) ||
             add(s, "bubblewrap",
                 json_pack("{s:o, s:o, s:b, s:o}", "path",
                           str_or_null(sb->bwrap), "version",
                           str_or_null(sb->version), "works", sb->bwrap_ok,
                           "error", str_or_null(sb->error))) ||
             add(s, "user_namespaces", json_boolean(userns)) ||
             add(s, "network_isolated", json_boolean(bw)) ||
             add(s, "tools_with_network", json_incref(net_tools)) ||
             add(s, "pid_namespace", json_boolean(bw)) ||
             add(s, "processes", json_string(sb->nproc_note)) ||
             add(s, "landlock_abi", json_integer(landlock)) ||
             add(s, "warm_calls_scoped",
                 json_boolean(landlock >= TG_SBD_LANDLOCK_SCOPED_ABI)) ||
             add(s, "hidden", json_incref(hidden));
    if (rc == 0)
        rc = add(r, "sandbox", json_incref(s)) ||
             add(r, "rlimits",
                 json_pack("{s:I, s:I, s:I, s:I, s:I, s:i}", "cpu_s",
                           (json_int_t)cfg->rlimit_cpu_s, "as_mb",
                           (json_int_t)cfg->rlimit_as_mb, "nofile",
                           (json_int_t)cfg->rlimit_nofile, "nproc",
                           (json_int_t)cfg->rlimit_nproc, "fsize_mb",
                           (json_int_t)cfg->rlimit_fsize_mb, "core", 0)) ||
             add(r, "environment",
                 json_pack("{s:O, s:O}", "allowlist", allow, "withheld",
                           withheld)) ||
             add(r, "journal",
                 cfg->journal ? json_pack("{s:s, s:b}", "path", cfg->journal,
                                          "open", rt->journal != NULL)
                              : json_null()) ||
             add(r, "spool",
                 json_pack("{s:s, s:s}", "dir", cfg->spool_dir, "state",
                           dir_state(cfg->spool_dir))) ||
             add(r, "workspace",
                 json_pack("{s:s, s:s}", "path", cfg->workspace, "state",
                           dir_state(cfg->workspace))) ||
             add(r, "toolgate_files", json_incref(own)) ||
             add(r, "tools", json_incref(tools)) ||
             add(r, "warning", str_or_null(sb->warning));
    json_decref(s);
    json_decref(hidden);
    json_decref(own);
    json_decref(withheld);
    json_decref(tools);
    json_decref(net_tools);
    json_decref(allow);
    if (rc != 0) {
        json_decref(r);
        return NULL;
    }
    return r;
}

/* Appends s (NULL: "?") made safe for a terminal: a field of the report
 * that came from outside (a path, a name, a program's message). */
static void put(tg__buf *b, const char *s)
{
    if (s == NULL)
        s = "?";
    (void)tg__term_escape(b, s, strlen(s), 0);
}

/* "%-16s" of a row's label, then its value made safe, then `tail`. */
static void row(tg__buf *b, const char *label, const char *value,
                const char *tail)
{
    (void)tg__buf_printf(b, "%-16s", label);
    put(b, value);
    (void)tg__buf_puts(b, tail);
}

/* The strings of a JSON array joined by sep, or `none`. */
static void join(tg__buf *b, const json_t *arr, const char *sep,
                 const char *none)
{
    size_t i;
    json_t *v; /* borrowed */
    if (json_array_size(arr) == 0) {
        (void)tg__buf_puts(b, none);
        return;
    }
    json_array_foreach((json_t *)arr, i, v)
    {
        if (i)
            (void)tg__buf_puts(b, sep);
        put(b, json_string_value(v));
    }
}

static void limit_text(tg__buf *b, const char *what, json_int_t v,
                       const char *unit)
{
    if (v == 0)
        (void)tg__buf_printf(b, "%s unlimited", what);
    else
        (void)tg__buf_printf(b, "%s %lld%s", what, (long long)v, unit);
}

/* The lines about toolgate's own files: what keeps tools from them, and
 * which tools nothing does. */
static void own_files_text(tg__buf *b, const json_t *own, bool isolated)
{
    const json_t *exposed = json_object_get(own, "exposed_to"); /* borrowed */
    (void)tg__buf_printf(b, "%-16s", "toolgate files");
    if (isolated) {
        (void)tg__buf_puts(b, "hidden from sandboxed tools: ");
        join(b, json_object_get(own, "hidden"), " ", "nothing");
        (void)tg__buf_puts(b, "; masked: ");
        join(b, json_object_get(own, "masked"), " ", "nothing");
        (void)tg__buf_puts(b, "; ");
    } else {
        (void)tg__buf_puts(b, "NOT HIDDEN: no tool runs in the sandbox; ");
    }
    (void)tg__buf_puts(b, "the file tools refuse ");
    join(b, json_object_get(own, "refused_to_file_tools"), " ", "nothing");
    (void)tg__buf_printf(b, "\n%-16s", "exposed to");
    size_t i;
    json_t *t; /* borrowed */
    if (json_array_size(exposed) == 0)
        (void)tg__buf_puts(b, "no tool: every command tool runs in the "
                              "sandbox\n");
    json_array_foreach((json_t *)exposed, i, t)
    {
        (void)tg__buf_printf(b, "%s%s (%s)", i ? ", " : "",
                             json_string_value(json_object_get(t, "name")),
                             json_string_value(json_object_get(t, "sandbox")));
    }
    if (json_array_size(exposed) > 0)
        (void)tg__buf_puts(b, ": outside the sandbox, each could change, "
                              "move or remove the journal and the spool\n");
}

/* Lines for a person, from the report. */
static char *render_text(const json_t *r)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    const json_t *s = json_object_get(r, "sandbox");     /* borrowed */
    const json_t *bw = json_object_get(s, "bubblewrap"); /* borrowed */
    const char *in_force = json_string_value(json_object_get(s, "in_force"));
    const char *path = json_string_value(json_object_get(bw, "path"));
    const char *version = json_string_value(json_object_get(bw, "version"));
    const char *error = json_string_value(json_object_get(bw, "error"));
    bool isolated = json_is_true(json_object_get(s, "network_isolated"));
    (void)tg__buf_printf(&b, "%-16s%s (sandbox.mode %s)\n", "sandbox", in_force,
                         json_string_value(json_object_get(s, "mode")));
    if (json_is_true(json_object_get(bw, "works"))) {
        row(&b, "bubblewrap", version, " (");
        put(&b, path);
        (void)tg__buf_puts(&b, "): working\n");
    } else {
        (void)tg__buf_printf(&b, "%-16sNOT IN USE: ", "bubblewrap");
        put(&b, error ? error : "not tried");
        (void)tg__buf_puts(&b, "\n");
    }
    (void)tg__buf_printf(
        &b, "%-16s%s\n", "user namespaces",
        json_is_true(json_object_get(s, "user_namespaces")) ? "yes" : "NO");
    (void)tg__buf_printf(&b, "%-16s%s", "network",
                         isolated ? "isolated (a network namespace of its "
                                    "own); not isolated for: "
                                  : "NOT ISOLATED for: ");
    join(&b, json_object_get(s, "tools_with_network"), ", ", "no tool");
    (void)tg__buf_puts(&b, "\n");
    (void)tg__buf_printf(&b, "%-16s%s\n", "pid namespace",
                         isolated ? "yes: a call and all it started end "
                                    "together"
                                  : "no: the process group is killed");
    (void)tg__buf_printf(&b, "%-16s%s\n", "processes",
                         json_string_value(json_object_get(s, "processes")));
    int landlock = (int)json_integer_value(json_object_get(s, "landlock_abi"));
    bool warm = strstr(in_force, "warm") != NULL; /* else: own namespaces */
    if (warm && json_is_true(json_object_get(s, "warm_calls_scoped")))
        (void)tg__buf_printf(&b,
                             "%-16seach a Landlock domain of its own (ABI "
                             "%d): no ptrace, signal or abstract socket "
                             "reaches another call or the helper\n",
                             "warm calls", landlock);
    else if (warm)
        (void)tg__buf_printf(&b,
                             "%-16sNOT SCOPED from each other while they "
                             "run (Landlock ABI %d; scoping needs %d, Linux "
                             "6.12): sandbox.mode \"cold\" isolates them\n",
                             "warm calls", landlock,
                             TG_SBD_LANDLOCK_SCOPED_ABI);
    if (isolated) {
        (void)tg__buf_printf(&b,
                             "%-16s/ read-only, the workspace read-write, "
                             "private /tmp, /run hidden\n",
                             "file system");
        (void)tg__buf_printf(&b, "%-16s", "hidden");
        join(&b, json_object_get(s, "hidden"), " ", "nothing");
        (void)tg__buf_puts(&b, "\n");
    } else {
        (void)tg__buf_printf(&b,
                             "%-16sNOT CONFINED: tools write wherever "
                             "this user can\n",
                             "file system");
    }
    const json_t *rl = json_object_get(r, "rlimits"); /* borrowed */
    (void)tg__buf_printf(&b, "%-16s", "rlimits");
    limit_text(&b, "cpu", json_integer_value(json_object_get(rl, "cpu_s")),
               " s");
    limit_text(&b, ", address space",
               json_integer_value(json_object_get(rl, "as_mb")), " MiB");
    limit_text(&b, ", open files",
               json_integer_value(json_object_get(rl, "nofile")), "");
    limit_text(&b, ", processes",
               json_integer_value(json_object_get(rl, "nproc")), "");
    limit_text(&b, ", file size",
               json_integer_value(json_object_get(rl, "fsize_mb")), " MiB");
    (void)tg__buf_printf(&b, ", core dumps off%s\n",
                         strcmp(in_force, "none") == 0 ? " (NOT APPLIED)" : "");
    const json_t *env = json_object_get(r, "environment"); /* borrowed */
    (void)tg__buf_printf(&b, "%-16s", "environment");
    join(&b, json_object_get(env, "allowlist"), " ", "nothing");
    (void)tg__buf_puts(&b, " + each tool's env and env_pass; withheld as "
                           "secrets: ");
    join(&b, json_object_get(env, "withheld"), " ", "none here");
    (void)tg__buf_puts(&b, "\n");
    const json_t *j = json_object_get(r, "journal"); /* borrowed */
    if (json_is_object(j))
        row(&b, "journal", json_string_value(json_object_get(j, "path")),
            json_is_true(json_object_get(j, "open")) ? " (open, writable)\n"
                                                     : " (NOT OPEN)\n");
    else
        (void)tg__buf_printf(&b, "%-16soff\n", "journal");
    const json_t *sp = json_object_get(r, "spool"); /* borrowed */
    row(&b, "spool", json_string_value(json_object_get(sp, "dir")), " (");
    (void)tg__buf_printf(&b, "%s)\n",
                         json_string_value(json_object_get(sp, "state")));
    const json_t *ws = json_object_get(r, "workspace"); /* borrowed */
    row(&b, "workspace", json_string_value(json_object_get(ws, "path")), " (");
    (void)tg__buf_printf(&b, "%s)\n",
                         json_string_value(json_object_get(ws, "state")));
    own_files_text(&b, json_object_get(r, "toolgate_files"), isolated);
    (void)tg__buf_printf(&b, "%-16s", "command tools");
    const json_t *tools = json_object_get(r, "tools"); /* borrowed */
    size_t i;
    json_t *t; /* borrowed */
    if (json_array_size(tools) == 0)
        (void)tg__buf_puts(&b, "none");
    json_array_foreach((json_t *)tools, i, t)
    {
        if (i)
            (void)tg__buf_puts(&b, ", ");
        put(&b, json_string_value(json_object_get(t, "name")));
        (void)tg__buf_printf(
            &b, ": %s%s (", json_string_value(json_object_get(t, "sandbox")),
            json_is_true(json_object_get(t, "network")) ? " + network" : "");
        put(&b, json_string_value(json_object_get(t, "why")));
        (void)tg__buf_puts(&b, ")");
    }
    (void)tg__buf_puts(&b, "\n");
    const char *w = json_string_value(json_object_get(r, "warning"));
    if (w != NULL) {
        (void)tg__buf_puts(&b, "\n");
        (void)tg__term_escape(&b, w, strlen(w), TG__TERM_KEEP_LINES);
        (void)tg__buf_puts(&b, "\n");
    }
    return tg__buf_take(&b);
}

int tg_runtime_doctor(tg_runtime *rt, int json, char **out, tg_error *err)
{
    if (rt == NULL || out == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_runtime_doctor needs a runtime and out");
    *out = NULL;
    /* Even without a sandboxed tool, the doctor says what would happen. */
    tg__sandbox_probe(&rt->sandbox, rt->cfg, rt->base_env);
    json_t *r = report(rt); /* new ref */
    if (r != NULL) {
        *out = json ? json_dumps(r, JSON_COMPACT) : render_text(r);
        json_decref(r);
    }
    if (*out == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    return 0;
}
