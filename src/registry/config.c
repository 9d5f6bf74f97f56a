/* SPDX-License-Identifier: MIT */
/*
 * config.c - the configuration of docs/configuration.md: the embedded defaults,
 * loading toolgate.json (every key checked for type and range, every error
 * naming the key), the command line's setters and a deep copy for runtimes.
 *
 * A load is all or nothing: it is applied to a copy that replaces the
 * caller's configuration only when every key was valid, so a bad file never
 * leaves a half-loaded configuration behind.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "builtin.h"
#include "config_keys.h"
#include "error.h"
#include "jint.h"
#include "schema.h"
#include "source_config.h"
#include "tool.h"

#define JOURNAL_DEFAULT ".toolgate/journal.db"
#define SPOOL_DEFAULT ".toolgate/artifacts"
#define MAX_TIMEOUT_MS INT64_C(86400000)
#define MAX_CONFIG_BYTES (16u << 20)
#define MAX_HMAC_KEY_BYTES (64u << 10)
#define MAX_NUMBER INT64_C(9007199254740991) /* 2^53 - 1: exact in a double */

/* The state of one load: where the text came from (for messages) and the
 * absolute directory relative paths are resolved against. */
typedef struct loadctx {
    const char *source; /* file name, or NULL for text without a file */
    const char *base;   /* absolute */
    tg_error *err;
} loadctx;

/* ------------------------------------------------------------- paths */

/* An absolute, lexically tidied path: `path` when absolute, else base/path.
 * Only "." components and repeated slashes are removed: ".." is kept, since
 * collapsing it lexically is wrong across symbolic links. */
static char *path_join(const char *base, const char *path)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    if (path[0] != '/' && tg__buf_puts(&b, base) != 0)
        goto fail;
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 0)
            break;
        if (!(n == 1 && p[0] == '.')) {
            if (b.len == 0 || b.data[b.len - 1] != '/') {
                if (tg__buf_puts(&b, "/") != 0)
                    goto fail;
            }
            if (tg__buf_append(&b, p, n) != 0)
                goto fail;
        }
        p += n;
    }
    if (b.len == 0 && tg__buf_puts(&b, "/") != 0)
        goto fail;
    return tg__buf_take(&b);
fail:
    tg__buf_cleanup(&b);
    return NULL;
}

/* The real path of an existing directory, or NULL with errno set (ENOTDIR
 * when it exists but is not a directory). */
static char *real_dir(const char *path)
{
    char *real = realpath(path, NULL);
    if (real == NULL)
        return NULL;
    struct stat st;
    if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(real);
        errno = ENOTDIR;
        return NULL;
    }
    return real;
}

/* `path` made absolute against the current directory (tidied like
 * path_join), or NULL with errno set. */
static char *abs_path(const char *path)
{
    char *cwd = path[0] == '/' ? NULL : real_dir(".");
    if (path[0] != '/' && cwd == NULL)
        return NULL;
    char *p = path_join(cwd ? cwd : "/", path);
    free(cwd);
    if (p == NULL)
        errno = ENOMEM;
    return p;
}

/* True when `path` is the default that follows `workspace`, so it moves with
 * the workspace when that changes. */
static bool is_derived(const char *path, const char *workspace, const char *rel)
{
    if (path == NULL)
        return false;
    char *d = path_join(workspace, rel);
    bool same = d != NULL && strcmp(d, path) == 0;
    free(d);
    return same;
}

/* Replaces cfg->workspace with `real` (taken), moving the journal and spool
 * that were still at their workspace-derived defaults along with it. */
static int workspace_take(tg_config *cfg, char *real)
{
    char *journal = NULL, *spool = NULL;
    if (is_derived(cfg->journal, cfg->workspace, JOURNAL_DEFAULT) &&
        (journal = path_join(real, JOURNAL_DEFAULT)) == NULL)
        goto fail;
    if (is_derived(cfg->spool_dir, cfg->workspace, SPOOL_DEFAULT) &&
        (spool = path_join(real, SPOOL_DEFAULT)) == NULL)
        goto fail;
    free(cfg->workspace);
    cfg->workspace = real;
    if (journal) {
        free(cfg->journal);
        cfg->journal = journal;
    }
    if (spool) {
        free(cfg->spool_dir);
        cfg->spool_dir = spool;
    }
    return 0;
fail:
    free(journal);
    free(real);
    return TG_ENOMEM;
}

/* ---------------------------------------------------------- lifecycle */

/* Every built-in tool but those a configuration must name
 * (TG__BUILTIN_OPT_IN), in TG__BUILTIN_MAP's order (new ref; NULL: OOM). */
static json_t *default_builtins(void)
{
#define BUILTIN_FLAGS(name, flags, schema, core, description) flags,
    static const char *const names[] = {TG__BUILTIN_MAP(TG__BUILTIN_NAME)};
    static const unsigned flags[] = {TG__BUILTIN_MAP(BUILTIN_FLAGS)};
#undef BUILTIN_FLAGS
    json_t *list = json_array(); /* new ref */
    for (size_t i = 0; list != NULL && i < sizeof names / sizeof names[0]; i++)
        if (!(flags[i] & TG__BUILTIN_OPT_IN) &&
            json_array_append_new(list, json_string(names[i])) != 0) {
            json_decref(list);
            list = NULL;
        }
    return list;
}

tg_config *tg_config_new(void)
{
    tg_config *cfg = calloc(1, sizeof *cfg);
    if (cfg == NULL)
        return NULL;
    /* A process whose working directory is gone has no workspace to give;
     * that is reported as NULL like out of memory, the only other failure. */
    cfg->workspace = real_dir(".");
    if (cfg->workspace == NULL)
        goto fail;
    cfg->journal = path_join(cfg->workspace, JOURNAL_DEFAULT);
    cfg->spool_dir = path_join(cfg->workspace, SPOOL_DEFAULT);
    cfg->inline_max_bytes = 16384;
    cfg->spool_max_bytes = 0;
    cfg->envelope = true;
    cfg->timeout_ms = 30000;
    cfg->parallel = 8;
    cfg->max_args_bytes = 1048576;
    cfg->max_output_bytes = INT64_C(1073741824);
    cfg->kill_grace_ms = 2000;
    cfg->max_validation_steps = (int64_t)TG_SCHEMA_DEFAULT_STEPS;
    cfg->serve_task_after_ms = 1000;
    cfg->builtin_tools = default_builtins();
    /* what a file without "policy" gets too: changes need a person */
    cfg->policy = json_pack(
        "{s:s, s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}]}", "default", "allow",
        "rules", "tool", "write_file", "decision", "ask", "reason",
        "write_file changes files in the workspace", "tool", "shell",
        "decision", "ask", "reason", "shell runs any command");
    /* sandbox: bubblewrap where it works; rlimits documented in README.md */
    cfg->sandbox_mode = TG__SANDBOX_AUTO;
    cfg->sandbox_idle_ms = 60000;
    cfg->rlimit_cpu_s = 600;
    cfg->rlimit_as_mb = 0;
    cfg->rlimit_nofile = 1024;
    cfg->rlimit_nproc = 512;
    cfg->rlimit_fsize_mb = 1024;
    cfg->tools = json_array();
    if (!cfg->journal || !cfg->spool_dir || !cfg->builtin_tools ||
        !cfg->tools || !cfg->policy)
        goto fail;
    return cfg;
fail:
    tg_config_free(cfg);
    return NULL;
}

void tg_config_free(tg_config *cfg)
{
    if (cfg == NULL)
        return;
    free(cfg->workspace);
    free(cfg->cwd);
    free(cfg->journal);
    free(cfg->spool_dir);
    json_decref(cfg->builtin_tools);
    json_decref(cfg->tools);
    json_decref(cfg->policy);
    json_decref(cfg->hooks);
    free(cfg->sandbox_bwrap);
    json_decref(cfg->sandbox_hide);
    free(cfg->file);
    free(cfg->hmac_key_file);
    if (cfg->hmac_key) {
        /* the key is a secret: do not leave it in freed memory */
        memset(cfg->hmac_key, 0, cfg->hmac_key_len);
        free(cfg->hmac_key);
    }
    free(cfg);
}

static int dup_str(char **dst, const char *src)
{
    *dst = NULL;
    if (src == NULL)
        return 0;
    *dst = strdup(src);
    return *dst ? 0 : TG_ENOMEM;
}

static int dup_json(json_t **dst, const json_t *src)
{
    *dst = NULL;
    if (src == NULL)
        return 0;
    *dst = json_deep_copy(src); /* new ref */
    return *dst ? 0 : TG_ENOMEM;
}

tg_config *tg__config_copy(const tg_config *cfg)
{
    tg_config *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    *c = *cfg;
    c->workspace = c->cwd = c->journal = c->spool_dir = NULL;
    c->builtin_tools = c->tools = c->policy = c->hooks = NULL;
    c->sandbox_bwrap = NULL;
    c->sandbox_hide = NULL;
    c->hmac_key = NULL;
    c->hmac_key_len = 0;
    c->file = c->hmac_key_file = NULL;
    if (dup_str(&c->workspace, cfg->workspace) || dup_str(&c->cwd, cfg->cwd) ||
        dup_str(&c->journal, cfg->journal) ||
        dup_str(&c->spool_dir, cfg->spool_dir) ||
        dup_json(&c->builtin_tools, cfg->builtin_tools) ||
        dup_json(&c->tools, cfg->tools) || dup_json(&c->policy, cfg->policy) ||
        dup_json(&c->hooks, cfg->hooks) ||
        dup_str(&c->sandbox_bwrap, cfg->sandbox_bwrap) ||
        dup_json(&c->sandbox_hide, cfg->sandbox_hide) ||
        dup_str(&c->file, cfg->file) ||
        dup_str(&c->hmac_key_file, cfg->hmac_key_file))
        goto fail;
    if (cfg->hmac_key) {
        c->hmac_key = malloc(cfg->hmac_key_len);
        if (c->hmac_key == NULL)
            goto fail;
        memcpy(c->hmac_key, cfg->hmac_key, cfg->hmac_key_len);
        c->hmac_key_len = cfg->hmac_key_len;
    }
    return c;
fail:
    tg_config_free(c);
    return NULL;
}

/* ------------------------------------------------------------ messages */

static int bad(loadctx *lc, const char *pointer, const char *fmt, ...)
    TG__PRINTF(3, 4);

/* A TG_ECONFIG error "SOURCE: message" with the JSON pointer of the key. */
static int bad(loadctx *lc, const char *pointer, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (lc->source)
        tg__error_set(lc->err, TG_ECONFIG, "%s: %s", lc->source, msg);
    else
        tg__error_set(lc->err, TG_ECONFIG, "%s", msg);
    tg__error_pointer(lc->err, pointer);
    return TG_ECONFIG;
}

static int unknown_key(loadctx *lc, const char *pointer, const char *prefix,
                       const char *key)
{
    tg__error_set(lc->err, TG_ECONFIG, "unknown key '%s%s' in %s", prefix, key,
                  lc->source ? lc->source : "the configuration");
    tg__error_pointer(lc->err, pointer);
    return TG_ECONFIG;
}

/* What a value is, for "got ..." in messages. */
static const char *describe(const json_t *v, char *buf, size_t size)
{
    switch (json_typeof(v)) {
    case JSON_INTEGER:
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    case JSON_REAL:
        snprintf(buf, size, "%g", json_real_value(v));
        return buf;
    case JSON_STRING:
        return "a string";
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_TRUE:
        return "true";
    case JSON_FALSE:
        return "false";
    default:
        return "null";
    }
}

/* Checks that every member of object `obj` is a key config_keys.c lists for
 * `section`. `prefix` is the dotted key of obj plus "." ("" at the top). */
static int check_keys(loadctx *lc, const json_t *obj, const char *pointer,
                      const char *prefix, const char *section)
{
    const char *key;
    json_t *v; /* borrowed */
    json_object_foreach((json_t *)obj, key, v)
    {
        if (!tg__config_key_known(section, key)) {
            char ptr[256];
            snprintf(ptr, sizeof ptr, "%s/%s", pointer, key);
            return unknown_key(lc, ptr, prefix, key);
        }
    }
    return 0;
}

static int get_int(loadctx *lc, const json_t *v, const char *key,
                   const char *pointer, int64_t lo, int64_t hi, int64_t *out)
{
    /* an integer as JSON Schema counts one: 1e3 is 1000 */
    int64_t n;
    if (!tg__json_int(v, &n) || n < lo || n > hi) {
        char d[64];
        return bad(lc, pointer,
                   "%s must be an integer from %" PRId64 " to %" PRId64
                   ", got %s",
                   key, lo, hi, describe(v, d, sizeof d));
    }
    *out = n;
    return 0;
}

static int need_type(loadctx *lc, const json_t *v, json_type type,
                     const char *key, const char *pointer, const char *what)
{
    if (json_typeof(v) == type)
        return 0;
    char d[64];
    return bad(lc, pointer, "%s must be %s, got %s", key, what,
               describe(v, d, sizeof d));
}

/* An absolute path from a string member, resolved against the base dir. */
static int get_path(loadctx *lc, const json_t *v, const char *key,
                    const char *pointer, char **out)
{
    int rc = need_type(lc, v, JSON_STRING, key, pointer, "a path (string)");
    if (rc)
        return rc;
    const char *s = json_string_value(v);
    if (s[0] == '\0')
        return bad(lc, pointer, "%s must not be empty", key);
    char *p = path_join(lc->base, s);
    if (p == NULL)
        return tg__error_set(lc->err, TG_ENOMEM, "out of memory");
    free(*out);
    *out = p;
    return 0;
}

/* ------------------------------------------------------------- sections */

static int load_workspace(tg_config *cfg, loadctx *lc, const json_t *v)
{
    int rc = need_type(lc, v, JSON_STRING, "workspace", "/workspace",
                       "a directory (string)");
    if (rc)
        return rc;
    if (json_string_value(v)[0] == '\0')
        return bad(lc, "/workspace", "workspace must not be empty");
    char *joined = path_join(lc->base, json_string_value(v));
    if (joined == NULL)
        return tg__error_set(lc->err, TG_ENOMEM, "out of memory");
    char *real = real_dir(joined);
    if (real == NULL) {
        int e = errno;
        rc = bad(lc, "/workspace", "workspace '%s' is not a directory: %s",
                 joined, strerror(e));
        free(joined);
        return rc;
    }
    free(joined);
    if (workspace_take(cfg, real) != 0)
        return tg__error_set(lc->err, TG_ENOMEM, "out of memory");
    return 0;
}

static int load_journal(tg_config *cfg, loadctx *lc, const json_t *v)
{
    if (json_is_null(v) || json_is_false(v)) {
        free(cfg->journal);
        cfg->journal = NULL;
        return 0;
    }
    if (json_is_true(v)) {
        char *d = path_join(cfg->workspace, JOURNAL_DEFAULT);
        if (d == NULL)
            return tg__error_set(lc->err, TG_ENOMEM, "out of memory");
        free(cfg->journal);
        cfg->journal = d;
        return 0;
    }
    if (json_is_string(v))
        return get_path(lc, v, "journal", "/journal", &cfg->journal);
    if (!json_is_object(v)) {
        char d[64];
        return bad(lc, "/journal",
                   "journal must be a path, an object, false or null, got %s",
                   describe(v, d, sizeof d));
    }
    int rc = check_keys(lc, v, "/journal", "journal.", "journal");
    if (rc)
        return rc;
    /* Every setting is checked before any is stored, so a bad file leaves
     * the configuration as it was. */
    json_t *sync = json_object_get(v, "sync"); /* borrowed */
    if (sync && !(json_is_string(sync) &&
                  (strcmp(json_string_value(sync), "normal") == 0 ||
                   strcmp(json_string_value(sync), "full") == 0))) {
        char d[64];
        return bad(lc, "/journal/sync",
                   "journal.sync must be \"normal\" or \"full\", got %s",
                   json_is_string(sync) ? json_string_value(sync)
                                        : describe(sync, d, sizeof d));
    }
    json_t *commit = json_object_get(v, "commit"); /* borrowed */
    if (commit && !(json_is_string(commit) &&
                    (strcmp(json_string_value(commit), "background") == 0 ||
                     strcmp(json_string_value(commit), "inline") == 0))) {
        char d[64];
        return bad(lc, "/journal/commit",
                   "journal.commit must be \"background\" or \"inline\", "
                   "got %s",
                   json_is_string(commit) ? json_string_value(commit)
                                          : describe(commit, d, sizeof d));
    }
    int64_t keep_days = cfg->journal_keep_days;
    int64_t max_rows = cfg->journal_max_rows;
    json_t *m = json_object_get(v, "keep_days"); /* borrowed */
    if (m && (rc = get_int(lc, m, "journal.keep_days", "/journal/keep_days", 0,
                           36500, &keep_days)))
        return rc;
    m = json_object_get(v, "max_rows"); /* borrowed */
    if (m && (rc = get_int(lc, m, "journal.max_rows", "/journal/max_rows", 0,
                           MAX_NUMBER, &max_rows)))
        return rc;
    json_t *path = json_object_get(v, "path"); /* borrowed */
    if (path == NULL || json_is_null(path) || json_is_false(path)) {
        /* {"sync": ...} alone keeps the path in force; an explicit null or
         * false path turns the journal off like "journal": null does */
        if (path != NULL) {
            free(cfg->journal);
            cfg->journal = NULL;
        }
    } else if ((rc = get_path(lc, path, "journal.path", "/journal/path",
                              &cfg->journal)) != 0) {
        return rc;
    }
    if (sync != NULL)
        cfg->journal_sync_full = strcmp(json_string_value(sync), "full") == 0;
    if (commit != NULL)
        cfg->journal_commit_inline =
            strcmp(json_string_value(commit), "inline") == 0;
    cfg->journal_keep_days = keep_days;
    cfg->journal_max_rows = max_rows;
    return 0;
}

static int load_spool(tg_config *cfg, loadctx *lc, const json_t *v)
{
    if (json_is_null(v) || json_is_false(v)) {
        /* no spool: output stays in memory up to limits.max_output_bytes */
        free(cfg->spool_dir);
        cfg->spool_dir = NULL;
        return 0;
    }
    int rc = need_type(lc, v, JSON_OBJECT, "spool", "/spool",
                       "an object, null or false");
    if (rc || (rc = check_keys(lc, v, "/spool", "spool.", "spool")))
        return rc;
    json_t *m = json_object_get(v, "dir"); /* borrowed */
    if (m && (rc = get_path(lc, m, "spool.dir", "/spool/dir", &cfg->spool_dir)))
        return rc;
    int64_t n;
    m = json_object_get(v, "inline_max_bytes"); /* borrowed */
    if (m) {
        if ((rc = get_int(lc, m, "spool.inline_max_bytes",
                          "/spool/inline_max_bytes", 0, INT64_C(1073741824),
                          &n)))
            return rc;
        cfg->inline_max_bytes = n;
    }
    /* max_bytes caps the spool's size (least recently used go first) */
    m = json_object_get(v, "max_bytes"); /* borrowed */
    if (m) {
        if ((rc = get_int(lc, m, "spool.max_bytes", "/spool/max_bytes", 1,
                          MAX_NUMBER, &n)))
            return rc;
        cfg->spool_max_bytes = n;
    }
    return 0;
}

static int load_serve(tg_config *cfg, loadctx *lc, const json_t *v)
{
    int rc = need_type(lc, v, JSON_OBJECT, "serve", "/serve", "an object");
    if (rc || (rc = check_keys(lc, v, "/serve", "serve.", "serve")))
        return rc;
    int64_t n;
    json_t *m = json_object_get(v, "task_after_ms"); /* borrowed */
    if (m) {
        if ((rc = get_int(lc, m, "serve.task_after_ms", "/serve/task_after_ms",
                          0, 3600000, &n)))
            return rc;
        cfg->serve_task_after_ms = n;
    }
    return 0;
}

static int load_limits(tg_config *cfg, loadctx *lc, const json_t *v)
{
    int rc = need_type(lc, v, JSON_OBJECT, "limits", "/limits", "an object");
    if (rc || (rc = check_keys(lc, v, "/limits", "limits.", "limits")))
        return rc;
    int64_t n;
    json_t *m = json_object_get(v, "timeout_ms"); /* borrowed */
    if (m) {
        if ((rc = get_int(lc, m, "limits.timeout_ms", "/limits/timeout_ms", 1,
                          MAX_TIMEOUT_MS, &n)))
            return rc;
        cfg->timeout_ms = n;
    }
    m = json_object_get(v, "parallel"); /* borrowed */
    if (m) {
        if ((rc = get_int(lc, m, "limits.parallel", "/limits/parallel", 1, 1024,
                          &n)))
            return rc;
        cfg->parallel = (int)n;
    }
    m = json_object_get(v, "max_args_bytes"); /* borrowed */
    if (m) {
        if ((rc =
                 get_int(lc, m, "limits.max_args_bytes",
                         "/limits/max_args_bytes", 1, INT64_C(1073741824), &n)))
            return rc;
        cfg->max_args_bytes = n;
    }
    m = json_object_get(v, "max_output_bytes"); /* borrowed */
    if (m) {
        if ((rc = get_int(lc, m, "limits.max_output_bytes",
                          "/limits/max_output_bytes", 1, MAX_NUMBER, &n)))
            return rc;
        cfg->max_output_bytes = n;
    }
    m = json_object_get(v, "kill_grace_ms"); /* borrowed */
    if (m) {
        if ((rc = get_int(lc, m, "limits.kill_grace_ms",
                          "/limits/kill_grace_ms", 0, 600000, &n)))
            return rc;
        cfg->kill_grace_ms = n;
    }
    /* max_validation_steps: the cost of one call's schema check */
    m = json_object_get(v, "max_validation_steps"); /* borrowed */
    if (m) {
        if ((rc =
                 get_int(lc, m, "limits.max_validation_steps",
                         "/limits/max_validation_steps", 1000, MAX_NUMBER, &n)))
            return rc;
        cfg->max_validation_steps = n;
    }
    /* repair: opt-in fixing of arguments (src/core/repair.c, coerce.c) */
    m = json_object_get(v, "repair"); /* borrowed */
    if (m && !json_is_boolean(m)) {
        char d[64];
        return bad(lc, "/limits/repair",
                   "limits.repair must be true or false, got %s",
                   describe(m, d, sizeof d));
    }
    cfg->repair = json_is_true(m);
    return 0;
}

static int load_builtins(tg_config *cfg, loadctx *lc, const json_t *v)
{
    int rc = need_type(lc, v, JSON_ARRAY, "builtin_tools", "/builtin_tools",
                       "an array of built-in tool names");
    if (rc)
        return rc;
    size_t i;
    json_t *name; /* borrowed */
    json_array_foreach(v, i, name)
    {
        char ptr[64];
        snprintf(ptr, sizeof ptr, "/builtin_tools/%zu", i);
        if (!json_is_string(name)) {
            char d[64];
            return bad(lc, ptr, "builtin_tools[%zu] must be a string, got %s",
                       i, describe(name, d, sizeof d));
        }
        if (!tg__builtin_known(json_string_value(name)))
            return bad(lc, ptr,
                       "builtin_tools[%zu]: unknown built-in tool '%s' "
                       "(known: %s)",
                       i, json_string_value(name), TG__BUILTIN_NAMES);
        for (size_t j = 0; j < i; j++) {
            if (json_equal(json_array_get(v, j), name))
                return bad(lc, ptr, "builtin_tools[%zu]: '%s' is listed twice",
                           i, json_string_value(name));
        }
    }
    json_t *copy = json_deep_copy(v); /* new ref */
    if (copy == NULL)
        return tg__error_set(lc->err, TG_ENOMEM, "out of memory");
    json_decref(cfg->builtin_tools);
    cfg->builtin_tools = copy;
    return 0;
}

/* Prefixes the message a lower layer left in err with the source name. */
static void prefix_source(loadctx *lc)
{
    if (lc->err == NULL || lc->source == NULL)
        return;
    char *m = lc->err->message;
    size_t size = sizeof lc->err->message;
    size_t plen = strlen(lc->source) + 2; /* "SOURCE: " */
    if (plen >= size)
        return;
    size_t mlen = strnlen(m, size - 1);
    if (mlen > size - 1 - plen)
        mlen = size - 1 - plen;
    memmove(m + plen, m, mlen);
    memcpy(m, lc->source, plen - 2);
    memcpy(m + plen - 2, ": ", 2);
    m[plen + mlen] = '\0';
}

static int load_tools(tg_config *cfg, loadctx *lc, const json_t *v)
{
    int rc = need_type(lc, v, JSON_ARRAY, "tools", "/tools",
                       "an array of tool definitions");
    if (rc)
        return rc;
    size_t i;
    json_t *entry; /* borrowed */
    json_array_foreach(v, i, entry)
    {
        char key[32];
        snprintf(key, sizeof key, "tools[%zu]", i);
        if (tg__source_entry(entry)) {
            /* an MCP server behind toolgate, whose tools come later */
            tg__source_cfg *src = NULL;
            rc = tg__source_cfg_parse(entry, key, &src, lc->err);
            tg__source_cfg_free(src);
        } else {
            tg__tool *tool = NULL;
            rc = tg__tool_from_config(entry, key, &tool, lc->err);
            tg__tool_free(tool);
        }
        if (rc) {
            prefix_source(lc);
            return rc;
        }
        /* names were validated above, so entry["name"] is a string */
        const char *name = json_string_value(json_object_get(entry, "name"));
        for (size_t j = 0; j < i; j++) {
            const char *other = json_string_value(
                json_object_get(json_array_get(v, j), "name"));
            if (strcmp(name, other) == 0) {
                char ptr[64];
                snprintf(ptr, sizeof ptr, "/tools/%zu/name", i);
                return bad(lc, ptr,
                           "tools[%zu].name '%s' is already used by tools[%zu]",
                           i, name, j);
            }
        }
    }
    json_t *copy = json_deep_copy(v); /* new ref */
    if (copy == NULL)
        return tg__error_set(lc->err, TG_ENOMEM, "out of memory");
    json_decref(cfg->tools);
    cfg->tools = copy;
    return 0;
}

static bool is_decision(const json_t *v)
{
    const char *s = json_string_value(v);
    return s && (strcmp(s, "allow") == 0 || strcmp(s, "deny") == 0 ||
                 strcmp(s, "ask") == 0);
}

/* The policy's outline (default, rules[].decision); the matching fields of
 * each rule are the policy engine's to check. */
static int load_policy(tg_config *cfg, loadctx *lc, const json_t *v)
{
    int rc = 0;
    if (!json_is_null(v)) {
        rc = need_type(lc, v, JSON_OBJECT, "policy", "/policy", "an object");
        if (rc || (rc = check_keys(lc, v, "/policy", "policy.", "policy")))
            return rc;
        json_t *d = json_object_get(v, "default"); /* borrowed */
        if (d && !is_decision(d))
            return bad(lc, "/policy/default",
                       "policy.default must be \"allow\", \"deny\" or \"ask\"");
        json_t *rules = json_object_get(v, "rules"); /* borrowed */
        if (rules && (rc = need_type(lc, rules, JSON_ARRAY, "policy.rules",
                                     "/policy/rules", "an array of rules")))
            return rc;
        size_t i;
        json_t *rule; /* borrowed */
        json_array_foreach(rules, i, rule)
        {
            char ptr[64];
            snprintf(ptr, sizeof ptr, "/policy/rules/%zu", i);
            if (!json_is_object(rule))
                return bad(lc, ptr, "policy.rules[%zu] must be an object", i);
            char prefix[48];
            snprintf(prefix, sizeof prefix, "policy.rules[%zu].", i);
            if ((rc = check_keys(lc, rule, ptr, prefix, "policy.rules[]")))
                return rc;
            if (!is_decision(json_object_get(rule, "decision")))
                return bad(lc, ptr,
                           "policy.rules[%zu].decision must be \"allow\", "
                           "\"deny\" or \"ask\"",
                           i);
        }
    }
    json_t *copy = NULL; /* new ref */
    if (!json_is_null(v) && (copy = json_deep_copy(v)) == NULL)
        return tg__error_set(lc->err, TG_ENOMEM, "out of memory");
    json_decref(cfg->policy);
    cfg->policy = copy;
    return 0;
}

/* A hook's command: a non-empty array of strings whose first is not "". */
static int check_command(loadctx *lc, const json_t *argv, const char *key,
                         const char *pointer)
{
    bool ok = json_is_array(argv) && json_array_size(argv) > 0;
    for (size_t j = 0; ok && j < json_array_size(argv); j++)
        ok = json_is_string(json_array_get(argv, j));
    ok = ok && json_string_value(json_array_get(argv, 0))[0];
    if (!ok)
        return bad(lc, pointer,
                   "%s must be a command: a non-empty array of strings", key);
    return 0;
}

/* One entry of hooks.before / hooks.after: a command (argv array), or
 * {"command": argv, "timeout_ms": N} (hooks.c reads both forms). */
static int check_hook(loadctx *lc, const json_t *entry, const char *list,
                      size_t i)
{
    char key[64], ptr[64], prefix[72];
    snprintf(key, sizeof key, "hooks.%s[%zu]", list, i);
    snprintf(ptr, sizeof ptr, "/hooks/%s/%zu", list, i);
    if (!json_is_object(entry))
        return check_command(lc, entry, key, ptr);
    snprintf(prefix, sizeof prefix, "%s.", key);
    int rc = check_keys(lc, entry, ptr, prefix, "hooks.before[]");
    if (rc)
        return rc;
    char k2[96], p2[96];
    snprintf(k2, sizeof k2, "%s.command", key);
    snprintf(p2, sizeof p2, "%s/command", ptr);
    json_t *cmd = json_object_get(entry, "command"); /* borrowed */
    if (cmd == NULL)
        return bad(lc, ptr, "%s needs a \"command\"", key);
    if ((rc = check_command(lc, cmd, k2, p2)))
        return rc;
    json_t *t = json_object_get(entry, "timeout_ms"); /* borrowed */
    int64_t n;
    snprintf(k2, sizeof k2, "%s.timeout_ms", key);
    snprintf(p2, sizeof p2, "%s/timeout_ms", ptr);
    if (t && (rc = get_int(lc, t, k2, p2, 1, MAX_TIMEOUT_MS, &n)))
        return rc;
    return 0;
}

/* hooks: {"before": [hook, ...], "after": [hook, ...], "timeout_ms": N},
 * a hook being a command (argv array) or {"command", "timeout_ms"}. Kept as
 * written; src/exec/hooks.c reads it. */
static int load_hooks(tg_config *cfg, loadctx *lc, const json_t *v)
{
    static const char *const lists[] = {"before", "after"};
    int rc = 0;
    if (!json_is_null(v)) {
        rc = need_type(lc, v, JSON_OBJECT, "hooks", "/hooks", "an object");
        if (rc || (rc = check_keys(lc, v, "/hooks", "hooks.", "hooks")))
            return rc;
        int64_t n;
        json_t *t = json_object_get(v, "timeout_ms"); /* borrowed */
        if (t && (rc = get_int(lc, t, "hooks.timeout_ms", "/hooks/timeout_ms",
                               1, MAX_TIMEOUT_MS, &n)))
            return rc;
        for (size_t k = 0; k < 2; k++) {
            json_t *list = json_object_get(v, lists[k]); /* borrowed */
            if (list == NULL)
                continue;
            char key[32], ptr[64];
            snprintf(key, sizeof key, "hooks.%s", lists[k]);
            snprintf(ptr, sizeof ptr, "/hooks/%s", lists[k]);
            if ((rc = need_type(lc, list, JSON_ARRAY, key, ptr,
                                "an array of commands")))
                return rc;
            size_t i;
            json_t *entry; /* borrowed */
            json_array_foreach(list, i, entry)
            {
                if ((rc = check_hook(lc, entry, lists[k], i)))
                    return rc;
            }
        }
    }
    json_t *copy = NULL; /* new ref */
    if (!json_is_null(v) && (copy = json_deep_copy(v)) == NULL)
        return tg__error_set(lc->err, TG_ENOMEM, "out of memory");
    json_decref(cfg->hooks);
    cfg->hooks = copy;
    return 0;
}

/* sandbox: {"mode": "auto"|"bubblewrap"|"off", "bwrap": PATH, "hide":
 * [PATH, ...], "rlimits": {"cpu_s", "as_mb", "nofile", "nproc",
 * "fsize_mb"}} (src/exec/sandbox.c applies it; 0 leaves a limit alone).
 * Every value is checked before any is stored. */
static int load_sandbox(tg_config *cfg, loadctx *lc, const json_t *v)
{
    static const char *const rkeys[] = {"cpu_s", "as_mb",    "nofile",
                                        "nproc", "fsize_mb", NULL};
    static const int64_t rmax[] = {INT64_C(31536000), INT64_C(1) << 30,
                                   INT64_C(1048576), INT64_C(4194304),
                                   INT64_C(1) << 30};
    int rc = need_type(lc, v, JSON_OBJECT, "sandbox", "/sandbox", "an object");
    if (rc || (rc = check_keys(lc, v, "/sandbox", "sandbox.", "sandbox")))
        return rc;
    int mode = cfg->sandbox_mode;
    json_t *m = json_object_get(v, "mode"); /* borrowed */
    if (m) {
        const char *s = json_string_value(m);
        if (s && strcmp(s, "auto") == 0)
            mode = TG__SANDBOX_AUTO;
        else if (s && strcmp(s, "bubblewrap") == 0)
            mode = TG__SANDBOX_BWRAP;
        else if (s && strcmp(s, "off") == 0)
            mode = TG__SANDBOX_OFF;
        else if (s && strcmp(s, "warm") == 0)
            mode = TG__SANDBOX_WARM;
        else if (s && strcmp(s, "cold") == 0)
            mode = TG__SANDBOX_COLD;
        else {
            char d[64];
            return bad(lc, "/sandbox/mode",
                       "sandbox.mode must be \"auto\", \"bubblewrap\", "
                       "\"warm\", \"cold\" or \"off\", got %s",
                       s ? s : describe(m, d, sizeof d));
        }
    }
    int64_t idle = cfg->sandbox_idle_ms;
    m = json_object_get(v, "idle_ms"); /* borrowed */
    if (m && (rc = get_int(lc, m, "sandbox.idle_ms", "/sandbox/idle_ms", 1,
                           INT64_C(86400000), &idle)))
        return rc;
    char *bwrap = NULL;
    m = json_object_get(v, "bwrap"); /* borrowed */
    if (m) {
        if ((rc = need_type(lc, m, JSON_STRING, "sandbox.bwrap",
                            "/sandbox/bwrap", "a program (string)")))
            return rc;
        const char *s = json_string_value(m);
        if (s[0] == '\0')
            return bad(lc, "/sandbox/bwrap", "sandbox.bwrap must not be empty");
        /* a bare name is looked up in PATH, a path is relative to the file */
        bwrap = strchr(s, '/') ? path_join(lc->base, s) : strdup(s);
        if (bwrap == NULL)
            return tg__error_set(lc->err, TG_ENOMEM, "out of memory");
    }
    json_t *hide = json_object_get(v, "hide"); /* borrowed */
    if (hide) {
        bool ok = json_is_array(hide) && json_array_size(hide) <= 64;
        size_t i;
        json_t *p; /* borrowed */
        json_array_foreach(hide, i, p)
        {
            const char *s = json_string_value(p);
            if (!ok || s == NULL || !(s[0] == '/' || strncmp(s, "~/", 2) == 0))
                ok = false;
        }
        if (!ok) {
            free(bwrap);
            return bad(lc, "/sandbox/hide",
                       "sandbox.hide must be an array of at most 64 paths, "
                       "each absolute or starting with \"~/\"");
        }
    }
    int64_t lim[5] = {cfg->rlimit_cpu_s, cfg->rlimit_as_mb, cfg->rlimit_nofile,
                      cfg->rlimit_nproc, cfg->rlimit_fsize_mb};
    json_t *r = json_object_get(v, "rlimits"); /* borrowed */
    if (r) {
        if ((rc = need_type(lc, r, JSON_OBJECT, "sandbox.rlimits",
                            "/sandbox/rlimits", "an object")) ||
            (rc = check_keys(lc, r, "/sandbox/rlimits", "sandbox.rlimits.",
                             "sandbox.rlimits"))) {
            free(bwrap);
            return rc;
        }
        for (size_t i = 0; rkeys[i]; i++) {
            json_t *x = json_object_get(r, rkeys[i]); /* borrowed */
            char key[64], ptr[64];
            snprintf(key, sizeof key, "sandbox.rlimits.%s", rkeys[i]);
            snprintf(ptr, sizeof ptr, "/sandbox/rlimits/%s", rkeys[i]);
            if (x && (rc = get_int(lc, x, key, ptr, 0, rmax[i], &lim[i]))) {
                free(bwrap);
                return rc;
            }
        }
    }
    json_t *hcopy = NULL; /* new ref */
    if (hide && (hcopy = json_deep_copy(hide)) == NULL) {
        free(bwrap);
        return tg__error_set(lc->err, TG_ENOMEM, "out of memory");
    }
    cfg->sandbox_mode = mode;
    cfg->sandbox_idle_ms = idle;
    if (bwrap) {
        free(cfg->sandbox_bwrap);
        cfg->sandbox_bwrap = bwrap;
    }
    if (hcopy) {
        json_decref(cfg->sandbox_hide);
        cfg->sandbox_hide = hcopy;
    }
    cfg->rlimit_cpu_s = lim[0];
    cfg->rlimit_as_mb = lim[1];
    cfg->rlimit_nofile = lim[2];
    cfg->rlimit_nproc = lim[3];
    cfg->rlimit_fsize_mb = lim[4];
    return 0;
}

/* Applies every section of root to cfg, workspace first so the defaults
 * that follow it move before the other paths are read. */
static int apply(tg_config *cfg, loadctx *lc, const json_t *root)
{
    int rc = check_keys(lc, root, "", "", "");
    if (rc)
        return rc;
    json_t *v; /* borrowed */
    if ((v = json_object_get(root, "workspace")) &&
        (rc = load_workspace(cfg, lc, v)))
        return rc;
    if ((v = json_object_get(root, "journal")) &&
        (rc = load_journal(cfg, lc, v)))
        return rc;
    if ((v = json_object_get(root, "spool")) && (rc = load_spool(cfg, lc, v)))
        return rc;
    if ((v = json_object_get(root, "envelope")) != NULL) {
        if (!json_is_boolean(v))
            return bad(lc, "/envelope", "envelope must be true or false");
        cfg->envelope = json_is_true(v);
    }
    if ((v = json_object_get(root, "limits")) && (rc = load_limits(cfg, lc, v)))
        return rc;
    if ((v = json_object_get(root, "serve")) && (rc = load_serve(cfg, lc, v)))
        return rc;
    if ((v = json_object_get(root, "builtin_tools")) &&
        (rc = load_builtins(cfg, lc, v)))
        return rc;
    if ((v = json_object_get(root, "tools")) && (rc = load_tools(cfg, lc, v)))
        return rc;
    if ((v = json_object_get(root, "policy")) && (rc = load_policy(cfg, lc, v)))
        return rc;
    if ((v = json_object_get(root, "hooks")) && (rc = load_hooks(cfg, lc, v)))
        return rc;
    if ((v = json_object_get(root, "sandbox")) &&
        (rc = load_sandbox(cfg, lc, v)))
        return rc;
    /* A tool may not shadow an enabled built-in: one name, one tool. */
    size_t i;
    json_t *entry; /* borrowed */
    json_array_foreach(cfg->tools, i, entry)
    {
        const char *name = json_string_value(json_object_get(entry, "name"));
        size_t j;
        json_t *b; /* borrowed */
        json_array_foreach(cfg->builtin_tools, j, b)
        {
            if (strcmp(name, json_string_value(b)) == 0) {
                char ptr[64];
                snprintf(ptr, sizeof ptr, "/tools/%zu/name", i);
                return bad(lc, ptr,
                           "tools[%zu].name '%s' is the name of a built-in "
                           "tool; rename it or drop '%s' from builtin_tools",
                           i, name, name);
            }
        }
    }
    return 0;
}

static int load(tg_config *cfg, const char *text, size_t len,
                const char *base_dir, const char *source, tg_error *err)
{
    int rc;
    char *base = NULL;
    json_t *root = NULL; /* new ref */
    tg_config *tmp = NULL;
    loadctx lc = {.source = source, .err = err};

    base = real_dir(base_dir ? base_dir : ".");
    if (base == NULL) {
        rc = tg__error_set(err, TG_ECONFIG,
                           "cannot use '%s' as the configuration's base "
                           "directory: %s",
                           base_dir ? base_dir : ".", strerror(errno));
        goto fail;
    }
    lc.base = base;

    json_error_t jerr;
    root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        rc = tg__error_at(err, TG_ECONFIG, jerr.line, jerr.column,
                          "%s:%d:%d: %s", source ? source : "configuration",
                          jerr.line, jerr.column, jerr.text);
        goto fail;
    }
    if (!json_is_object(root)) {
        rc = bad(&lc, "", "the configuration must be a JSON object");
        goto fail;
    }
    tmp = tg__config_copy(cfg);
    if (tmp == NULL) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto fail;
    }
    rc = apply(tmp, &lc, root);
    if (rc)
        goto fail;
    /* commit: cfg takes tmp's contents, tmp takes the old ones to free */
    tg_config old = *cfg;
    *cfg = *tmp;
    *tmp = old;
fail:
    tg_config_free(tmp);
    json_decref(root);
    free(base);
    return rc;
}

int tg_config_load(tg_config *cfg, const char *text, size_t len,
                   const char *base_dir, tg_error *err)
{
    return load(cfg, text, len, base_dir, NULL, err);
}

/* Reads a whole file of at most `max` bytes into *out (NUL-terminated). */
static int read_file(const char *path, size_t max, char **out, size_t *len)
{
    int rc = 0;
    tg__buf b;
    tg__buf_init(&b, max);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -errno;
    errno = 0;
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if ((rc = tg__buf_append(&b, chunk, n)) != 0) {
            rc = rc == TG_ELIMIT ? -EFBIG : -ENOMEM;
            goto fail;
        }
    }
    if (ferror(f)) {
        rc = errno ? -errno : -EIO; /* EISDIR for a directory */
        goto fail;
    }
    fclose(f);
    *len = b.len;
    *out = tg__buf_take(&b);
    return *out ? 0 : -ENOMEM;
fail:
    fclose(f);
    if (b.data)
        memset(b.data, 0, b.len); /* may be a key */
    tg__buf_cleanup(&b);
    return rc;
}

int tg_config_load_file(tg_config *cfg, const char *path, tg_error *err)
{
    char *text = NULL, *dir = NULL;
    size_t len = 0;
    int rc = read_file(path, MAX_CONFIG_BYTES, &text, &len);
    if (rc != 0) {
        return tg__error_set(err, rc == -ENOMEM ? TG_ENOMEM : TG_ECONFIG,
                             "cannot read config %s: %s", path,
                             rc == -EFBIG ? "larger than 16 MiB"
                                          : strerror(-rc));
    }
    /* relative paths inside the file are relative to the file itself */
    dir = strdup(path);
    if (dir == NULL) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto fail;
    }
    char *slash = strrchr(dir, '/');
    if (slash == NULL) {
        dir[0] = '.';
        dir[1] = '\0';
    } else if (slash == dir) {
        dir[1] = '\0';
    } else {
        *slash = '\0';
    }
    rc = load(cfg, text, len, dir, path, err);
    if (rc == 0) {
        /* kept so that tools can be kept away from it */
        char *file = abs_path(path);
        if (file == NULL) {
            rc = tg__error_set(err, tg__errno_to_tg(errno), "config %s: %s",
                               path, strerror(errno));
            goto fail;
        }
        free(cfg->file);
        cfg->file = file;
    }
fail:
    free(dir);
    free(text);
    return rc;
}

/* ------------------------------------------------------------- setters */

int tg_config_set_timeout_ms(tg_config *cfg, int64_t ms, tg_error *err)
{
    if (cfg == NULL)
        return tg__error_set(err, TG_EINVAL, "no configuration");
    if (ms < 1 || ms > MAX_TIMEOUT_MS)
        return tg__error_set(err, TG_EINVAL,
                             "timeout_ms must be 1 to %lld, got %lld",
                             (long long)MAX_TIMEOUT_MS, (long long)ms);
    cfg->timeout_ms = ms;
    return 0;
}

int tg_config_set_parallel(tg_config *cfg, int n, tg_error *err)
{
    if (cfg == NULL)
        return tg__error_set(err, TG_EINVAL, "no configuration");
    if (n < 1 || n > 1024)
        return tg__error_set(err, TG_EINVAL,
                             "parallel must be 1 to 1024, got %d", n);
    cfg->parallel = n;
    return 0;
}

int tg_config_set_journal(tg_config *cfg, const char *path, tg_error *err)
{
    if (cfg == NULL)
        return tg__error_set(err, TG_EINVAL, "no configuration");
    char *p = NULL;
    if (path != NULL) {
        if (path[0] == '\0')
            return tg__error_set(err, TG_EINVAL,
                                 "the journal path must not be empty");
        if ((p = abs_path(path)) == NULL) {
            int e = errno;
            return tg__error_set(err, tg__errno_to_tg(e), "journal %s: %s",
                                 path, strerror(e));
        }
    }
    free(cfg->journal);
    cfg->journal = p;
    return 0;
}

/* Sets *out to the real path of directory `dir` (the caller's) for setting
 * `what`. Returns 0, TG_ECONFIG naming the directory and why, TG_ENOMEM. */
static int set_dir(const char *what, const char *dir, char **out, tg_error *err)
{
    if (dir[0] == '\0')
        return tg__error_set(err, TG_ECONFIG, "%s must not be empty", what);
    if ((*out = real_dir(dir)) != NULL)
        return 0;
    int e = errno;
    if (e == ENOMEM)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    return tg__error_set(err, TG_ECONFIG, "%s '%s' is not a directory: %s",
                         what, dir, strerror(e));
}

int tg_config_set_workspace(tg_config *cfg, const char *dir, tg_error *err)
{
    if (cfg == NULL)
        return tg__error_set(err, TG_EINVAL, "no configuration");
    if (dir == NULL)
        return tg__error_set(err, TG_ECONFIG, "workspace must not be NULL");
    char *real = NULL;
    int rc = set_dir("workspace", dir, &real, err);
    if (rc != 0)
        return rc;
    if (workspace_take(cfg, real) != 0)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    return 0;
}

int tg_config_set_cwd(tg_config *cfg, const char *dir, tg_error *err)
{
    if (cfg == NULL)
        return tg__error_set(err, TG_EINVAL, "no configuration");
    char *real = NULL;
    int rc = dir != NULL ? set_dir("cwd", dir, &real, err) : 0;
    if (rc != 0)
        return rc;
    free(cfg->cwd);
    cfg->cwd = real;
    return 0;
}

int tg_config_set_hmac_key_file(tg_config *cfg, const char *path, tg_error *err)
{
    char *key = NULL;
    size_t len = 0;
    int rc = read_file(path, MAX_HMAC_KEY_BYTES, &key, &len);
    if (rc != 0) {
        return tg__error_set(err, rc == -ENOMEM ? TG_ENOMEM : TG_ECONFIG,
                             "cannot read HMAC key file %s: %s", path,
                             rc == -EFBIG ? "larger than 64 KiB"
                                          : strerror(-rc));
    }
    /* `echo secret > key` leaves a newline that is not part of the key */
    if (len > 0 && key[len - 1] == '\n')
        len--;
    if (len > 0 && key[len - 1] == '\r')
        len--;
    if (len == 0) {
        free(key);
        return tg__error_set(err, TG_ECONFIG, "HMAC key file %s is empty",
                             path);
    }
    char *file = abs_path(path);
    if (file == NULL) {
        memset(key, 0, len);
        free(key);
        return tg__error_set(err, tg__errno_to_tg(errno),
                             "HMAC key file %s: %s", path, strerror(errno));
    }
    free(cfg->hmac_key_file);
    cfg->hmac_key_file = file;
    if (cfg->hmac_key) {
        memset(cfg->hmac_key, 0, cfg->hmac_key_len);
        free(cfg->hmac_key);
    }
    cfg->hmac_key = (unsigned char *)key;
    cfg->hmac_key_len = len;
    return 0;
}

const unsigned char *tg_config_hmac_key(const tg_config *cfg, size_t *len)
{
    *len = cfg != NULL && cfg->hmac_key != NULL ? cfg->hmac_key_len : 0;
    return *len > 0 ? cfg->hmac_key : NULL;
}

const char *tg_config_journal(const tg_config *cfg)
{
    return cfg->journal;
}

const char *tg_config_spool_dir(const tg_config *cfg)
{
    return cfg ? cfg->spool_dir : NULL;
}
