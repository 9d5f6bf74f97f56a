/* SPDX-License-Identifier: MIT */
/*
 * test_config.c - the configuration: embedded defaults, loading
 * toolgate.json text and files (every bad key named, with its JSON pointer),
 * paths relative to the config's directory, tool validation at load time,
 * the command line's setters, the HMAC key file and the deep copy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

/* ----------------------------------------------------------- helpers */

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void rm_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh temporary directory, as a real path (caller frees, rm_tree). */
static char *tmp_dir(void)
{
    char tmpl[] = "/tmp/tg_config_XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char *real = realpath(tmpl, NULL);
    assert_non_null(real);
    return real;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", a, b);
    return p;
}

static int load(tg_config *cfg, const char *text, const char *base,
                tg_error *err)
{
    memset(err, 0, sizeof *err);
    return tg_config_load(cfg, text, strlen(text), base, err);
}

/* ---------------------------------------------------------- defaults */

static void defaults(void **state)
{
    (void)state;
    tg_config *cfg = tg_config_new();
    assert_non_null(cfg);
    char *cwd = realpath(".", NULL);
    assert_non_null(cwd);
    assert_string_equal(cfg->workspace, cwd);
    char *journal = join(cwd, ".toolgate/journal.db");
    char *spool = join(cwd, ".toolgate/artifacts");
    assert_string_equal(cfg->journal, journal);
    assert_string_equal(tg_config_journal(cfg), journal);
    assert_string_equal(cfg->spool_dir, spool);
    assert_null(cfg->cwd);
    assert_int_equal(cfg->inline_max_bytes, 16384);
    assert_int_equal(cfg->timeout_ms, 30000);
    assert_int_equal(cfg->parallel, 8);
    assert_int_equal(cfg->max_args_bytes, 1048576);
    assert_int_equal(cfg->max_output_bytes, 1073741824);
    assert_int_equal(cfg->kill_grace_ms, 2000);
    assert_int_equal(cfg->serve_task_after_ms, 1000);
    /* journal.sync normal, nothing pruned */
    assert_false(cfg->journal_sync_full);
    assert_int_equal(cfg->journal_keep_days, 0);
    assert_int_equal(cfg->journal_max_rows, 0);
    const char *const names[] = {"read_file", "list_dir", "grep", "write_file",
                                 "shell"};
    assert_int_equal(json_array_size(cfg->builtin_tools), 5);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(
            json_string_value(json_array_get(cfg->builtin_tools, i)), names[i]);
    assert_true(json_is_array(cfg->tools));
    assert_int_equal(json_array_size(cfg->tools), 0);
    /* the read-only tools allowed, write_file and shell asked about */
    char *policy = json_dumps(cfg->policy, JSON_COMPACT);
    assert_string_equal(
        policy, "{\"default\":\"allow\",\"rules\":[{\"tool\":\"write_file\","
                "\"decision\":\"ask\",\"reason\":\"write_file changes files in "
                "the workspace\"},{\"tool\":\"shell\",\"decision\":\"ask\","
                "\"reason\":\"shell runs any command\"}]}");
    free(policy);
    assert_true(cfg->envelope);
    assert_int_equal(cfg->spool_max_bytes, 0);
    assert_null(cfg->hooks);
    assert_null(cfg->hmac_key);
    free(journal);
    free(spool);
    free(cwd);
    tg_config_free(cfg);
    tg_config_free(NULL);
}

/* --------------------------------------------------- a whole config */

static void full_config(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    tg_config *cfg = tg_config_new();
    tg_error err;
    const char *text =
        "{\"workspace\": \".\", \"journal\": \".toolgate/journal.db\","
        " \"spool\": {\"dir\": \".toolgate/artifacts\", \"inline_max_bytes\": "
        "4096, \"max_bytes\": 1000000},"
        " \"limits\": {\"timeout_ms\": 1000, \"parallel\": 3, "
        "\"max_args_bytes\": 2048, \"max_output_bytes\": 99999, "
        "\"kill_grace_ms\": 0, \"repair\": false},"
        " \"serve\": {\"task_after_ms\": 0},"
        " \"builtin_tools\": [\"grep\"],"
        " \"tools\": ["
        "  {\"name\": \"echo\", \"description\": \"Echo text\", "
        "\"input_schema\": {\"type\": \"object\", \"properties\": {\"text\": "
        "{\"type\": \"string\"}}, \"required\": [\"text\"]},"
        "   \"command\": [\"/bin/echo\", \"{text}\"], \"timeout_ms\": 2000, "
        "\"annotations\": {\"readOnlyHint\": true}},"
        "  {\"name\": \"count_bytes\", \"command\": [\"wc\", \"-c\"], "
        "\"stdin\": \"{text}\", \"env\": {\"LC_ALL\": \"C\"}}"
        " ],"
        " \"policy\": {\"default\": \"allow\", \"rules\": ["
        "  {\"tool\": \"shell\", \"decision\": \"ask\"},"
        "  {\"tool\": \"*\", \"caller\": \"guest\", \"decision\": \"deny\", "
        "\"reason\": \"guests may not call tools\"}]},"
        " \"hooks\": {\"before\": [[\"./hooks/check\"]], \"after\": []}}";
    assert_int_equal(load(cfg, text, dir, &err), 0);
    assert_string_equal(cfg->workspace, dir);
    char *journal = join(dir, ".toolgate/journal.db");
    char *spool = join(dir, ".toolgate/artifacts");
    assert_string_equal(cfg->journal, journal);
    assert_string_equal(cfg->spool_dir, spool);
    assert_int_equal(cfg->inline_max_bytes, 4096);
    assert_int_equal(cfg->timeout_ms, 1000);
    assert_int_equal(cfg->parallel, 3);
    assert_int_equal(cfg->max_args_bytes, 2048);
    assert_int_equal(cfg->max_output_bytes, 99999);
    assert_int_equal(cfg->kill_grace_ms, 0);
    assert_int_equal(cfg->serve_task_after_ms, 0);
    assert_int_equal(json_array_size(cfg->builtin_tools), 1);
    assert_int_equal(json_array_size(cfg->tools), 2);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(cfg->tools, 1), "name")),
                        "count_bytes");
    assert_true(json_is_object(cfg->policy));
    assert_true(json_is_object(cfg->hooks));
    free(journal);
    free(spool);
    tg_config_free(cfg);
    rm_tree(dir);
    free(dir);
}

/* ------------------------------------------------- one bad key each */

typedef struct bad_case {
    const char *text;
    const char *message; /* a substring of err.message */
    const char *pointer;
} bad_case;

static const bad_case bad_cases[] = {
    {"{\"limits\":{\"parallel\":0}}",
     "limits.parallel must be an integer from 1 to 1024, got 0",
     "/limits/parallel"},
    {"{\"limits\":{\"parallel\":1025}}", "limits.parallel", "/limits/parallel"},
    {"{\"limits\":{\"parallel\":\"8\"}}",
     "limits.parallel must be an integer from 1 to 1024, got a string",
     "/limits/parallel"},
    {"{\"limits\":{\"timeout_ms\":0}}",
     "limits.timeout_ms must be an integer from 1 to 86400000, got 0",
     "/limits/timeout_ms"},
    {"{\"limits\":{\"timeout_ms\":86400001}}", "limits.timeout_ms",
     "/limits/timeout_ms"},
    {"{\"limits\":{\"timeout_ms\":1.5}}", "got 1.5", "/limits/timeout_ms"},
    {"{\"limits\":{\"max_args_bytes\":0}}", "limits.max_args_bytes",
     "/limits/max_args_bytes"},
    {"{\"limits\":{\"max_output_bytes\":-1}}", "limits.max_output_bytes",
     "/limits/max_output_bytes"},
    {"{\"limits\":{\"kill_grace_ms\":-1}}", "limits.kill_grace_ms",
     "/limits/kill_grace_ms"},
    {"{\"limits\":{\"repair\":\"yes\"}}", "limits.repair must be true or false",
     "/limits/repair"},
    {"{\"limits\":{\"retries\":3}}", "unknown key 'limits.retries'",
     "/limits/retries"},
    {"{\"limits\":[]}", "limits must be an object, got an array", "/limits"},
    {"{\"serve\":{\"task_after_ms\":-1}}",
     "serve.task_after_ms must be an integer from 0 to 3600000, got -1",
     "/serve/task_after_ms"},
    {"{\"serve\":{\"task_after_ms\":3600001}}", "serve.task_after_ms",
     "/serve/task_after_ms"},
    {"{\"serve\":{\"task_after_ms\":\"1000\"}}",
     "serve.task_after_ms must be an integer from 0 to 3600000, got a string",
     "/serve/task_after_ms"},
    {"{\"serve\":{\"task_after_ms\":0.5}}", "got 0.5", "/serve/task_after_ms"},
    {"{\"serve\":{\"task_after\":5}}", "unknown key 'serve.task_after'",
     "/serve/task_after"},
    {"{\"serve\":true}", "serve must be an object", "/serve"},
    {"{\"spool\":{\"inline_max_bytes\":-1}}", "spool.inline_max_bytes",
     "/spool/inline_max_bytes"},
    {"{\"spool\":{\"max_bytes\":0}}", "spool.max_bytes", "/spool/max_bytes"},
    {"{\"spool\":{\"dir\":5}}", "spool.dir must be a path (string), got 5",
     "/spool/dir"},
    {"{\"spool\":{\"dir\":\"\"}}", "spool.dir must not be empty", "/spool/dir"},
    {"{\"spool\":3}", "spool must be an object, null or false, got 3",
     "/spool"},
    {"{\"envelope\":\"yes\"}", "envelope must be true or false", "/envelope"},
    {"{\"spool\":{\"path\":\"x\"}}", "unknown key 'spool.path'", "/spool/path"},
    {"{\"journal\":5}", "journal must be a path, an object, false or null",
     "/journal"},
    {"{\"journal\":\"\"}", "journal must not be empty", "/journal"},
    {"{\"journal\":{\"sync\":\"sometimes\"}}",
     "journal.sync must be \"normal\" or \"full\", got sometimes",
     "/journal/sync"},
    {"{\"journal\":{\"keep_days\":-1}}", "journal.keep_days",
     "/journal/keep_days"},
    {"{\"journal\":{\"max_rows\":\"many\"}}", "journal.max_rows",
     "/journal/max_rows"},
    {"{\"journal\":{\"path\":7}}", "journal.path must be a path (string)",
     "/journal/path"},
    {"{\"journal\":{\"wal\":true}}", "unknown key 'journal.wal'",
     "/journal/wal"},
    {"{\"workspace\":5}", "workspace must be a directory (string), got 5",
     "/workspace"},
    {"{\"workspace\":\"/nonexistent/toolgate/ws\"}",
     "workspace '/nonexistent/toolgate/ws' is not a directory", "/workspace"},
    {"{\"builtin_tools\":\"read_file\"}", "builtin_tools must be an array",
     "/builtin_tools"},
    {"{\"builtin_tools\":[1]}", "builtin_tools[0] must be a string",
     "/builtin_tools/0"},
    {"{\"builtin_tools\":[\"grep\",\"bash\"]}",
     "builtin_tools[1]: unknown built-in tool 'bash' (known: read_file, "
     "list_dir, grep, write_file, shell, echo)",
     "/builtin_tools/1"},
    {"{\"builtin_tools\":[\"grep\",\"grep\"]}",
     "builtin_tools[1]: 'grep' is listed twice", "/builtin_tools/1"},
    {"{\"tools\":{}}", "tools must be an array", "/tools"},
    {"{\"tools\":[{\"name\":\"a\",\"command\":[\"x\"]},{\"name\":\"b\","
     "\"command\":[\"y\"]},{\"name\":\"c\",\"command\":\"ls -l\"}]}",
     "tools[2].command must be a non-empty array of strings",
     "/tools/2/command"},
    {"{\"tools\":[{\"name\":\"a\",\"command\":[\"x\"]},"
     "{\"name\":\"a\",\"command\":[\"y\"]}]}",
     "tools[1].name 'a' is already used by tools[0]", "/tools/1/name"},
    {"{\"tools\":[{\"name\":\"grep\",\"command\":[\"grep\"]}]}",
     "tools[0].name 'grep' is the name of a built-in tool", "/tools/0/name"},
    {"{\"tools\":[{\"name\":\"fs\",\"mcp\":{\"command\":[]}}]}",
     "tools[0].mcp.command must be a non-empty array of strings",
     "/tools/0/mcp/command"},
    {"{\"policy\":[]}", "policy must be an object", "/policy"},
    {"{\"policy\":{\"default\":\"maybe\"}}",
     "policy.default must be \"allow\", \"deny\" or \"ask\"",
     "/policy/default"},
    {"{\"policy\":{\"rules\":[{\"tool\":\"x\"}]}}",
     "policy.rules[0].decision must be", "/policy/rules/0"},
    {"{\"policy\":{\"rules\":{}}}", "policy.rules must be an array",
     "/policy/rules"},
    {"{\"policy\":{\"mode\":\"strict\"}}", "unknown key 'policy.mode'",
     "/policy/mode"},
    {"{\"hooks\":{\"before\":\"./check\"}}", "hooks.before must be an array",
     "/hooks/before"},
    {"{\"hooks\":{\"after\":[[]]}}", "hooks.after[0] must be a command",
     "/hooks/after/0"},
    {"{\"hooks\":{\"during\":[]}}", "unknown key 'hooks.during'",
     "/hooks/during"},
    {"{\"workspaces\":\".\"}", "unknown key 'workspaces' in the configuration",
     "/workspaces"},
    {"[]", "the configuration must be a JSON object", ""},
};

static void bad_keys(void **state)
{
    (void)state;
    tg_config *cfg = tg_config_new();
    assert_non_null(cfg);
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_case *c = &bad_cases[i];
        tg_error err;
        int rc = load(cfg, c->text, NULL, &err);
        if (rc != TG_ECONFIG || strstr(err.message, c->message) == NULL ||
            strcmp(err.pointer, c->pointer) != 0)
            fail_msg("case %zu %s: rc %d message '%s' pointer '%s'", i, c->text,
                     rc, err.message, err.pointer);
        assert_int_equal(err.code, TG_ECONFIG);
    }
    tg_config_free(cfg);
}

static void syntax_error(void **state)
{
    (void)state;
    tg_config *cfg = tg_config_new();
    tg_error err;
    assert_int_equal(load(cfg, "{\n  \"limits\": {,}\n}", NULL, &err),
                     TG_ECONFIG);
    assert_int_equal(err.line, 2);
    assert_true(err.column > 0);
    assert_non_null(strstr(err.message, "configuration:2:"));
    /* duplicate keys are an error, not a silent last-one-wins */
    assert_int_equal(load(cfg, "{\"limits\":{},\"limits\":{}}", NULL, &err),
                     TG_ECONFIG);
    assert_non_null(strstr(err.message, "duplicate"));
    tg_config_free(cfg);
}

/* A failed load changes nothing, even keys before the bad one. */
static void load_is_atomic(void **state)
{
    (void)state;
    tg_config *cfg = tg_config_new();
    tg_error err;
    assert_int_equal(load(cfg,
                          "{\"journal\":null,\"limits\":{\"parallel\":2,"
                          "\"timeout_ms\":0}}",
                          NULL, &err),
                     TG_ECONFIG);
    assert_int_equal(cfg->parallel, 8);
    assert_non_null(cfg->journal);
    /* and a good load over it applies */
    assert_int_equal(load(cfg, "{\"limits\":{\"parallel\":2}}", NULL, &err), 0);
    assert_int_equal(cfg->parallel, 2);
    assert_int_equal(cfg->timeout_ms, 30000);
    /* a second load layers over the first */
    assert_int_equal(load(cfg, "{\"limits\":{\"timeout_ms\":5}}", NULL, &err),
                     0);
    assert_int_equal(cfg->parallel, 2);
    assert_int_equal(cfg->timeout_ms, 5);
    tg_config_free(cfg);
}

/* ------------------------------------------------------------- paths */

static void relative_paths(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char *ws = join(dir, "ws");
    assert_int_equal(mkdir(ws, 0700), 0);
    tg_config *cfg = tg_config_new();
    tg_error err;

    /* the workspace moves the journal and spool that follow it */
    assert_int_equal(load(cfg, "{\"workspace\":\"ws\"}", dir, &err), 0);
    assert_string_equal(cfg->workspace, ws);
    char *j = join(ws, ".toolgate/journal.db");
    char *s = join(ws, ".toolgate/artifacts");
    assert_string_equal(cfg->journal, j);
    assert_string_equal(cfg->spool_dir, s);
    free(j);
    free(s);

    /* explicit relative paths are relative to the base dir, not to the
     * workspace */
    assert_int_equal(load(cfg,
                          "{\"workspace\":\"./ws/\",\"journal\":\"j/./x.db\","
                          "\"spool\":{\"dir\":\"art//\"}}",
                          dir, &err),
                     0);
    j = join(dir, "j/x.db");
    s = join(dir, "art");
    assert_string_equal(cfg->journal, j);
    assert_string_equal(cfg->spool_dir, s);
    free(j);
    free(s);
    /* ... and stay where they are when the workspace changes later */
    assert_int_equal(load(cfg, "{\"workspace\":\".\"}", dir, &err), 0);
    assert_string_equal(cfg->workspace, dir);
    j = join(dir, "j/x.db");
    assert_string_equal(cfg->journal, j);
    free(j);

    /* absolute paths are kept */
    assert_int_equal(load(cfg, "{\"journal\":\"/var/tmp/tg.db\"}", dir, &err),
                     0);
    assert_string_equal(cfg->journal, "/var/tmp/tg.db");

    /* a workspace that is a file */
    char *file = join(dir, "plain");
    write_file(file, "x");
    assert_int_equal(load(cfg, "{\"workspace\":\"plain\"}", dir, &err),
                     TG_ECONFIG);
    assert_non_null(strstr(err.message, "is not a directory"));
    free(file);

    /* a base dir that does not exist */
    assert_int_equal(load(cfg, "{}", "/nonexistent/toolgate", &err),
                     TG_ECONFIG);

    tg_config_free(cfg);
    rm_tree(dir);
    free(ws);
    free(dir);
}

static void journal_forms(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    tg_config *cfg = tg_config_new();
    tg_error err;
    assert_int_equal(load(cfg, "{\"journal\":null}", dir, &err), 0);
    assert_null(tg_config_journal(cfg));
    assert_int_equal(load(cfg, "{\"journal\":true}", dir, &err), 0);
    assert_non_null(strstr(tg_config_journal(cfg), ".toolgate/journal.db"));
    assert_int_equal(load(cfg, "{\"journal\":false}", dir, &err), 0);
    assert_null(tg_config_journal(cfg));
    assert_int_equal(load(cfg,
                          "{\"journal\":{\"path\":\"h.db\",\"sync\":\"full\","
                          "\"keep_days\":30,\"max_rows\":1000000}}",
                          dir, &err),
                     0);
    char *h = join(dir, "h.db");
    assert_string_equal(tg_config_journal(cfg), h);
    assert_true(cfg->journal_sync_full);
    assert_int_equal(cfg->journal_keep_days, 30);
    assert_int_equal(cfg->journal_max_rows, 1000000);
    /* the settings travel with a copy (the runtime keeps one) */
    tg_config *copy = tg__config_copy(cfg);
    assert_non_null(copy);
    assert_true(copy->journal_sync_full);
    assert_int_equal(copy->journal_max_rows, 1000000);
    tg_config_free(copy);
    /* the string form changes the path only */
    assert_int_equal(load(cfg, "{\"journal\":\"h.db\"}", dir, &err), 0);
    assert_true(cfg->journal_sync_full);
    assert_int_equal(cfg->journal_keep_days, 30);
    /* an object without a path keeps the path in force */
    assert_int_equal(
        load(cfg, "{\"journal\":{\"sync\":\"normal\"}}", dir, &err), 0);
    assert_string_equal(tg_config_journal(cfg), h);
    assert_false(cfg->journal_sync_full);
    assert_int_equal(cfg->journal_keep_days, 30);
    /* a bad member stores none of the others */
    assert_int_equal(load(cfg,
                          "{\"journal\":{\"sync\":\"full\","
                          "\"max_rows\":-5}}",
                          dir, &err),
                     TG_ECONFIG);
    assert_false(cfg->journal_sync_full);
    assert_int_equal(cfg->journal_max_rows, 1000000);
    assert_int_equal(load(cfg, "{\"journal\":{\"path\":null}}", dir, &err), 0);
    assert_null(tg_config_journal(cfg));
    free(h);
    tg_config_free(cfg);
    rm_tree(dir);
    free(dir);
}

/* -------------------------------------------------------------- files */

static void load_file(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char *sub = join(dir, "conf");
    assert_int_equal(mkdir(sub, 0700), 0);
    char *path = join(sub, "toolgate.json");
    tg_config *cfg = tg_config_new();
    tg_error err = {0};

    write_file(path, "{\"journal\": \"state/journal.db\",\n"
                     " \"limits\": {\"parallel\": 4}}\n");
    assert_int_equal(tg_config_load_file(cfg, path, &err), 0);
    char *j = join(sub, "state/journal.db");
    assert_string_equal(cfg->journal, j);
    assert_int_equal(cfg->parallel, 4);
    free(j);

    /* syntax errors name FILE:LINE:COLUMN */
    write_file(path, "{\"limits\": {\"parallel\": 4},\n\n  oops}\n");
    assert_int_equal(tg_config_load_file(cfg, path, &err), TG_ECONFIG);
    char want[PATH_MAX + 16];
    snprintf(want, sizeof want, "%s:3:", path);
    assert_non_null(strstr(err.message, want));
    assert_int_equal(err.line, 3);

    /* an unknown key names the file */
    write_file(path, "{\"limit\": {}}");
    memset(&err, 0, sizeof err);
    assert_int_equal(tg_config_load_file(cfg, path, &err), TG_ECONFIG);
    snprintf(want, sizeof want, "unknown key 'limit' in %s", path);
    assert_string_equal(err.message, want);
    assert_string_equal(err.pointer, "/limit");

    /* other errors are prefixed with it */
    write_file(path, "{\"limits\": {\"parallel\": 0}}");
    assert_int_equal(tg_config_load_file(cfg, path, &err), TG_ECONFIG);
    snprintf(want, sizeof want, "%s: limits.parallel must be", path);
    assert_non_null(strstr(err.message, want));
    write_file(path, "{\"tools\": [{\"name\": \"x\", \"command\": []}]}");
    assert_int_equal(tg_config_load_file(cfg, path, &err), TG_ECONFIG);
    snprintf(want, sizeof want, "%s: tools[0].command must be", path);
    assert_non_null(strstr(err.message, want));
    assert_string_equal(err.pointer, "/tools/0/command");

    /* a missing file */
    char *missing = join(dir, "nope.json");
    assert_int_equal(tg_config_load_file(cfg, missing, &err), TG_ECONFIG);
    snprintf(want, sizeof want, "cannot read config %s: No such file", missing);
    assert_non_null(strstr(err.message, want));
    /* a directory */
    assert_int_equal(tg_config_load_file(cfg, dir, &err), TG_ECONFIG);
    free(missing);

    assert_int_equal(cfg->parallel, 4);
    tg_config_free(cfg);
    rm_tree(dir);
    free(path);
    free(sub);
    free(dir);
}

/* --------------------------------------------------------- tool names */

static void tools_and_builtins(void **state)
{
    (void)state;
    tg_config *cfg = tg_config_new();
    tg_error err;
    /* a tool may take a built-in's name once that built-in is off */
    assert_int_equal(load(cfg,
                          "{\"builtin_tools\":[],\"tools\":[{\"name\":"
                          "\"grep\",\"command\":[\"grep\",\"-rn\",\"{p}\"]}]}",
                          NULL, &err),
                     0);
    assert_int_equal(json_array_size(cfg->tools), 1);
    /* turning it back on in a later load clashes */
    assert_int_equal(load(cfg, "{\"builtin_tools\":[\"grep\"]}", NULL, &err),
                     TG_ECONFIG);
    assert_non_null(strstr(err.message, "built-in"));
    /* a later "tools" replaces the earlier list */
    assert_int_equal(load(cfg,
                          "{\"builtin_tools\":[\"grep\"],\"tools\":[{\"name\":"
                          "\"echo\",\"command\":[\"echo\"]}]}",
                          NULL, &err),
                     0);
    assert_int_equal(json_array_size(cfg->tools), 1);
    tg_config_free(cfg);
}

/* ------------------------------------------------------------ setters */

static void setters(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    tg_config *cfg = tg_config_new();

    /* err is optional; when given it says what was wrong */
    tg_error err = {0};
    assert_int_equal(tg_config_set_timeout_ms(cfg, 0, NULL), TG_EINVAL);
    assert_int_equal(tg_config_set_timeout_ms(cfg, 86400001, &err), TG_EINVAL);
    assert_int_equal(err.code, TG_EINVAL);
    assert_string_equal(err.message,
                        "timeout_ms must be 1 to 86400000, got 86400001");
    assert_int_equal(tg_config_set_timeout_ms(cfg, 1500, NULL), 0);
    assert_int_equal(cfg->timeout_ms, 1500);
    assert_int_equal(tg_config_set_parallel(cfg, 0, NULL), TG_EINVAL);
    assert_int_equal(tg_config_set_parallel(cfg, 1025, &err), TG_EINVAL);
    assert_string_equal(err.message, "parallel must be 1 to 1024, got 1025");
    assert_int_equal(tg_config_set_parallel(cfg, 1, NULL), 0);
    assert_int_equal(cfg->parallel, 1);

    assert_int_equal(tg_config_set_journal(cfg, NULL, NULL), 0);
    assert_null(tg_config_journal(cfg));
    assert_int_equal(tg_config_set_journal(cfg, "", &err), TG_EINVAL);
    assert_string_equal(err.message, "the journal path must not be empty");
    assert_int_equal(tg_config_set_journal(cfg, "rel/j.db", NULL), 0);
    char *cwd = realpath(".", NULL);
    char *j = join(cwd, "rel/j.db");
    assert_string_equal(tg_config_journal(cfg), j);
    free(j);

    char *file = join(dir, "f");
    write_file(file, "");
    assert_int_equal(tg_config_set_workspace(cfg, file, NULL), TG_ECONFIG);
    assert_int_equal(tg_config_set_workspace(cfg, "/nonexistent/x", &err),
                     TG_ECONFIG);
    assert_string_equal(err.message, "workspace '/nonexistent/x' is not a "
                                     "directory: No such file or directory");
    assert_int_equal(tg_config_set_workspace(cfg, "", &err), TG_ECONFIG);
    assert_string_equal(err.message, "workspace must not be empty");
    assert_string_equal(cfg->workspace, cwd);
    /* the journal was set explicitly: it stays; the spool follows */
    assert_int_equal(tg_config_set_workspace(cfg, dir, NULL), 0);
    assert_string_equal(cfg->workspace, dir);
    char *s = join(dir, ".toolgate/artifacts");
    assert_string_equal(cfg->spool_dir, s);
    assert_non_null(strstr(cfg->journal, "rel/j.db"));
    free(s);

    assert_int_equal(tg_config_set_cwd(cfg, file, &err), TG_ECONFIG);
    assert_non_null(strstr(err.message, "is not a directory: Not a directory"));
    assert_int_equal(tg_config_set_timeout_ms(NULL, 1, &err), TG_EINVAL);
    assert_int_equal(tg_config_set_cwd(cfg, dir, NULL), 0);
    assert_string_equal(cfg->cwd, dir);
    assert_int_equal(tg_config_set_cwd(cfg, NULL, NULL), 0);
    assert_null(cfg->cwd);

    free(file);
    free(cwd);
    tg_config_free(cfg);
    rm_tree(dir);
    free(dir);
}

static void hmac_key_file(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char *key = join(dir, "key");
    tg_config *cfg = tg_config_new();
    tg_error err = {0};

    write_file(key, "s3cret\n");
    assert_int_equal(tg_config_set_hmac_key_file(cfg, key, &err), 0);
    assert_int_equal(cfg->hmac_key_len, 6);
    assert_memory_equal(cfg->hmac_key, "s3cret", 6);
    /* inner bytes, including NUL and newlines, belong to the key */
    FILE *f = fopen(key, "wb");
    fwrite("a\0b\nc", 1, 5, f);
    fclose(f);
    assert_int_equal(tg_config_set_hmac_key_file(cfg, key, &err), 0);
    assert_int_equal(cfg->hmac_key_len, 5);
    assert_memory_equal(cfg->hmac_key, "a\0b\nc", 5);

    write_file(key, "\n");
    assert_int_equal(tg_config_set_hmac_key_file(cfg, key, &err), TG_ECONFIG);
    assert_non_null(strstr(err.message, "is empty"));
    assert_int_equal(cfg->hmac_key_len, 5); /* unchanged */
    char *missing = join(dir, "none");
    assert_int_equal(tg_config_set_hmac_key_file(cfg, missing, &err),
                     TG_ECONFIG);
    assert_non_null(strstr(err.message, missing));

    free(missing);
    free(key);
    tg_config_free(cfg);
    rm_tree(dir);
    free(dir);
}

static void deep_copy(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char *key = join(dir, "key");
    write_file(key, "k");
    tg_config *cfg = tg_config_new();
    tg_error err;
    assert_int_equal(
        load(cfg,
             "{\"tools\":[{\"name\":\"e\",\"command\":[\"echo\"]}],"
             "\"policy\":{\"default\":\"deny\"},"
             "\"hooks\":{\"after\":[]}}",
             NULL, &err),
        0);
    assert_int_equal(tg_config_set_hmac_key_file(cfg, key, &err), 0);
    assert_int_equal(tg_config_set_cwd(cfg, dir, NULL), 0);
    tg_config *copy = tg__config_copy(cfg);
    assert_non_null(copy);
    assert_ptr_not_equal(copy->workspace, cfg->workspace);
    assert_string_equal(copy->workspace, cfg->workspace);
    assert_string_equal(copy->cwd, dir);
    assert_ptr_not_equal(copy->tools, cfg->tools);
    assert_true(json_equal(copy->tools, cfg->tools));
    assert_true(json_equal(copy->policy, cfg->policy));
    assert_true(json_equal(copy->hooks, cfg->hooks));
    assert_int_equal(copy->hmac_key_len, 1);
    assert_memory_equal(copy->hmac_key, "k", 1);
    /* the copy outlives the original */
    tg_config_free(cfg);
    assert_int_equal(json_array_size(copy->tools), 1);
    tg_config_free(copy);
    free(key);
    rm_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),           cmocka_unit_test(full_config),
        cmocka_unit_test(bad_keys),           cmocka_unit_test(syntax_error),
        cmocka_unit_test(load_is_atomic),     cmocka_unit_test(relative_paths),
        cmocka_unit_test(journal_forms),      cmocka_unit_test(load_file),
        cmocka_unit_test(tools_and_builtins), cmocka_unit_test(setters),
        cmocka_unit_test(hmac_key_file),      cmocka_unit_test(deep_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
