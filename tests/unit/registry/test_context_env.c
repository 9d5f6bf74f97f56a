/* SPDX-License-Identifier: MIT */
/*
 * test_context_env.c - which variables a call's context.env may set: the
 * loader's, shells', interpreters' and tools' start-up and search variables
 * are refused (in any case of their names), what callers legitimately set
 * passes, locales and time zones are judged by value, names that are not
 * plain names, NUL bytes and shell function values are refused whatever the
 * tool says, a tool's context_env.allow widens and its deny narrows the set
 * (deny winning), the reason names each variable and how to allow it, and
 * README.md lists every pattern of the table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context_env.h"
#include "tg_test.h"
#include "tg_json_test.h"

/* Judges ctx (JSON text) with the tool's allow and deny (JSON arrays or
 * NULL); returns the check's code, the reason in why_out[size]. */
static int judge(const char *ctx, const char *allow, const char *deny,
                 char *why_out, size_t size)
{
    json_t *c = tg_test_json(ctx);                  /* new ref */
    json_t *a = allow ? tg_test_json(allow) : NULL; /* new ref */
    json_t *d = deny ? tg_test_json(deny) : NULL;   /* new ref */
    tg__buf why;
    tg__buf_init(&why, 0);
    int rc = tg__context_env_check(c, a, d, &why);
    snprintf(why_out, size, "%s", tg__buf_cstr(&why));
    if (rc == 0 && why.len != 0)
        fail_msg("%s: passed with a reason '%s'", ctx, tg__buf_cstr(&why));
    tg__buf_cleanup(&why);
    json_decref(c);
    json_decref(a);
    json_decref(d);
    return rc;
}

/* Judges {"NAME": value} (value is JSON); returns the check's code. */
static int judge_one(const char *name, const char *value, const char *allow,
                     const char *deny, char *why, size_t size)
{
    json_t *c = json_object(); /* new ref */
    if (json_object_set_new(c, name, tg_test_json(value)) != 0)
        fail_msg("cannot set %s", name);
    char *text = json_dumps(c, 0);
    int rc = judge(text, allow, deny, why, size);
    free(text);
    json_decref(c);
    return rc;
}

/* {"NAME": value} must be refused, the reason saying so. */
static void refused(const char *name, const char *value, const char *allow,
                    const char *deny)
{
    char why[2048];
    int rc = judge_one(name, value, allow, deny, why, sizeof why);
    if (rc != 1)
        fail_msg("%s=%s was not refused (rc %d)", name, value, rc);
    if (strncmp(why, "context.env may not set ", 24) != 0)
        fail_msg("%s: reason '%s'", name, why);
}

static void passes(const char *name, const char *value, const char *allow,
                   const char *deny)
{
    char why[2048];
    if (judge_one(name, value, allow, deny, why, sizeof why) != 0)
        fail_msg("%s=%s was refused: %s", name, value, why);
}

static void takeovers_refused(void **state)
{
    (void)state;
    /* the examples and the classes they stand for */
    static const char *const names[] = {
        /* the dynamic loader and the C library */
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "LD_DEBUG_OUTPUT",
        "DYLD_INSERT_LIBRARIES",
        "GCONV_PATH",
        "GLIBC_TUNABLES",
        "MALLOC_TRACE",
        "LOCPATH",
        "NLSPATH",
        "HOSTALIASES",
        "RES_OPTIONS",
        "TZDIR",
        /* search paths and start-up directories */
        "PATH",
        "HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_DIRS",
        "TMPDIR",
        /* shells */
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PS1",
        "PROMPT_COMMAND",
        "IFS",
        "CDPATH",
        "GLOBIGNORE",
        "ZDOTDIR",
        "BASH_LOADABLES_PATH",
        /* interpreters */
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONWARNINGS",
        "PYTHONUSERBASE",
        "NODE_OPTIONS",
        "NODE_PATH",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "PERL5DB",
        "PERLIO_DEBUG",
        "RUBYOPT",
        "RUBYLIB",
        "GEM_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "CLASSPATH",
        "JAVA_HOME",
        "LUA_INIT",
        "LUA_PATH",
        "PHPRC",
        "ERL_FLAGS",
        "DOTNET_STARTUP_HOOKS",
        "COMPlus_EnableDiagnostics",
        "CORECLR_PROFILER_PATH",
        "R_PROFILE_USER",
        "JULIA_LOAD_PATH",
        /* build tools */
        "CC",
        "CFLAGS",
        "LDFLAGS",
        "MAKEFLAGS",
        "MAKEFILES",
        "GOFLAGS",
        "RUSTC_WRAPPER",
        "RUSTFLAGS",
        "CARGO_HOME",
        "PIP_INDEX_URL",
        "npm_config_script_shell",
        "NPM_CONFIG_NODE_OPTIONS",
        "CMAKE_C_COMPILER_LAUNCHER",
        /* commands to run, options, configuration */
        "SHELL",
        "EDITOR",
        "GIT_EDITOR",
        "VISUAL",
        "PAGER",
        "MANPAGER",
        "LESSOPEN",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "RSYNC_RSH",
        "TAR_OPTIONS",
        "GREP_OPTIONS",
        "KUBECONFIG",
        "AWS_CONFIG_FILE",
        "DOCKER_CONFIG",
        "PSQLRC",
        "CURL_HOME",
        "KRB5_CONFIG",
        /* git */
        "GIT_SSH_COMMAND",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_KEY_0",
        "GIT_EXEC_PATH",
        "GIT_DIR",
        "GIT_TEMPLATE_DIR",
        "GIT_EXTERNAL_DIFF",
        "GIT_AUTHOR_NAME",
        /* libraries' modules */
        "OPENSSL_CONF",
        "OPENSSL_ENGINES",
        "GIO_EXTRA_MODULES",
        "GTK_MODULES",
        "QT_PLUGIN_PATH",
        "VK_LAYER_PATH",
        "TERMINFO",
        "SASL_PATH",
        /* trust and proxies */
        "SSL_CERT_FILE",
        "CURL_CA_BUNDLE",
        "NODE_TLS_REJECT_UNAUTHORIZED",
        "SSLKEYLOGFILE",
        "HTTPS_PROXY",
        "http_proxy",
        "ALL_PROXY",
        /* case does not matter */
        "ld_preload",
        "Path",
        "pythonpath",
        "Bash_Env",
        "git_dir",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        refused(names[i], "\"/ws/evil\"", NULL, NULL);
    /* whatever the value, empty included */
    refused("LD_PRELOAD", "\"\"", NULL, NULL);
    refused("PATH", "\"/usr/bin:/bin\"", NULL, NULL);
}

static void legitimate_ones_pass(void **state)
{
    (void)state;
    static const char *const ok[][2] = {
        {"TERM", "\"xterm-256color\""},
        {"NO_COLOR", "\"1\""},
        {"COLUMNS", "\"120\""},
        {"RUST_LOG", "\"debug\""},
        {"NODE_ENV", "\"production\""},
        {"DEBUG", "\"*\""},
        {"CI", "\"true\""},
        {"USER", "\"ann\""},
        {"MY_APP_MODE", "\"/ws/anything/../at/all\""},
        {"LANG", "\"C.UTF-8\""},
        {"LC_ALL", "\"en_US.UTF-8\""},
        {"LC_MESSAGES", "\"de_DE.UTF-8@euro\""},
        {"LANGUAGE", "\"de:en_GB:en\""},
        {"TZ", "\"Europe/Paris\""},
        {"TZ", "\":America/New_York\""},
        {"TZ", "\"UTC0\""},
        {"TZ", "\"EST5EDT,M3.2.0,M11.1.0\""},
        /* prefixes of refused names are other names */
        {"LDX", "\"1\""},
        {"PATHS", "\"1\""},
        {"MY_PATH", "\"/x\""},
        {"GITHUB_REF", "\"main\""},
        {"ENVIRONMENT", "\"prod\""},
        {"HOMEPAGE", "\"x\""},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        passes(ok[i][0], ok[i][1], NULL, NULL);
    /* values that are no strings are never set, so never judged */
    passes("LD_PRELOAD", "1", NULL, NULL);
    passes("PATH", "null", NULL, NULL);
    char why[256];
    assert_int_equal(judge("{}", NULL, NULL, why, sizeof why), 0);
    /* a context without env, or an env that is no object */
    tg__buf b;
    tg__buf_init(&b, 0);
    assert_int_equal(tg__context_env_check(NULL, NULL, NULL, &b), 0);
    json_t *arr = tg_test_json("[\"LD_PRELOAD\"]"); /* new ref */
    assert_int_equal(tg__context_env_check(arr, NULL, NULL, &b), 0);
    assert_int_equal(b.len, 0);
    json_decref(arr);
    tg__buf_cleanup(&b);
}

static void judged_by_value(void **state)
{
    (void)state;
    /* a locale with '/' is a path the C library would load */
    refused("LANG", "\"./evil\"", NULL, NULL);
    refused("LC_ALL", "\"/ws/locale\"", NULL, NULL);
    refused("LC_CTYPE", "\"ws/x\"", NULL, NULL);
    refused("LANGUAGE", "\"en:../../ws/x\"", NULL, NULL);
    /* a time zone outside the zone database */
    refused("TZ", "\"/ws/zone\"", NULL, NULL);
    refused("TZ", "\":/ws/zone\"", NULL, NULL);
    refused("TZ", "\"../../../ws/zone\"", NULL, NULL);
    refused("TZ", "\"Europe/../../../ws/zone\"", NULL, NULL);
    /* a tool may allow them as they come */
    passes("LANG", "\"./evil\"", "[\"LANG\"]", NULL);
    passes("TZ", "\"/ws/zone\"", "[\"TZ\"]", NULL);
}

static void never_allowed(void **state)
{
    (void)state;
    /* exported bash functions and other names that are no plain names */
    const char *everything = "[\"*\"]";
    refused("BASH_FUNC_ls%%", "\"() { echo pwned; }\"", everything, NULL);
    refused("BASH_FUNC_ls()", "\"() { echo pwned; }\"", everything, NULL);
    refused("A=B", "\"c\"", everything, NULL);
    refused("1ABC", "\"c\"", everything, NULL);
    refused("A B", "\"c\"", everything, NULL);
    refused("A\nB", "\"c\"", everything, NULL);
    refused("", "\"c\"", everything, NULL);
    refused("A-B", "\"c\"", everything, NULL);
    /* a NUL byte, and a function definition under any name */
    refused("MY_VAR", "\"a\\u0000b\"", everything, NULL);
    refused("MY_VAR", "\"() { :; }; touch /tmp/pwned\"", everything, NULL);
    /* but the rest of what "*" allows passes */
    passes("LD_PRELOAD", "\"/ws/x.so\"", everything, NULL);
    passes("MY_VAR", "\"(not a function)\"", everything, NULL);
    /* the name shown in the reason is tamed: it may reach a terminal */
    char why[512];
    assert_int_equal(
        judge("{\"A\\u001b[2JB\": \"c\"}", NULL, NULL, why, sizeof why), 1);
    assert_null(strchr(why, '\x1b'));
    assert_non_null(strstr(why, "A??2JB"));
    char big[300];
    memset(big, 'N', 200);
    big[0] = '{';
    big[1] = '"';
    snprintf(big + 200, sizeof big - 200, "%%\": \"x\"}");
    assert_int_equal(judge(big, NULL, NULL, why, sizeof why), 1);
    assert_non_null(strstr(why, "NNN..."));
}

static void tool_widens_and_narrows(void **state)
{
    (void)state;
    /* allow: exactly what it names */
    passes("PYTHONUNBUFFERED", "\"1\"", "[\"PYTHONUNBUFFERED\"]", NULL);
    refused("PYTHONPATH", "\"/ws\"", "[\"PYTHONUNBUFFERED\"]", NULL);
    const char *ident = "[\"GIT_AUTHOR_*\", \"GIT_COMMITTER_*\"]";
    passes("GIT_AUTHOR_NAME", "\"Ann\"", ident, NULL);
    passes("git_committer_email", "\"a@b\"", ident, NULL);
    refused("GIT_DIR", "\"/ws/.x\"", ident, NULL);
    refused("GIT_SSH_COMMAND", "\"touch pwned\"", ident, NULL);
    /* deny: anything it names, the table's passes included */
    passes("TERM", "\"dumb\"", NULL, "[\"MY_*\"]");
    refused("MY_THING", "\"x\"", NULL, "[\"MY_*\"]");
    refused("TERM", "\"dumb\"", NULL, "[\"*\"]");
    refused("LANG", "\"C\"", "[\"*\"]", "[\"LANG\"]");
    /* deny wins over allow */
    refused("X", "\"1\"", "[\"X\"]", "[\"X\"]");
    refused("LD_PRELOAD", "\"/ws/x.so\"", "[\"LD_*\"]", "[\"LD_PRELOAD\"]");
    passes("LD_BIND_NOW", "\"1\"", "[\"LD_*\"]", "[\"LD_PRELOAD\"]");
}

static void reasons(void **state)
{
    (void)state;
    char why[4096];
    assert_int_equal(
        judge("{\"LD_PRELOAD\": \"/ws/evil.so\"}", NULL, NULL, why, sizeof why),
        1);
    assert_string_equal(
        why, "context.env may not set LD_PRELOAD (the dynamic loader and the "
             "C library read it: it can load code into any program or have it "
             "read files the caller chose). Refused: leave them out of the "
             "call's context; a command tool's configuration can allow a "
             "variable with \"context_env\": {\"allow\": [\"LD_PRELOAD\"]}");
    /* several at once, each with what it does; what is fine is not named */
    assert_int_equal(judge("{\"TERM\": \"dumb\", \"PATH\": \"/ws\", "
                           "\"BASH_ENV\": \"/ws/rc\"}",
                           NULL, NULL, why, sizeof why),
                     1);
    assert_non_null(strstr(why, "PATH (it chooses which program a command "
                                "name runs)"));
    assert_non_null(strstr(why, "; BASH_ENV (a shell reads it"));
    assert_null(strstr(why, "TERM"));
    /* the tool's deny says so; nothing to allow */
    assert_int_equal(
        judge("{\"MY_X\": \"1\"}", NULL, "[\"MY_*\"]", why, sizeof why), 1);
    assert_string_equal(why, "context.env may not set MY_X (this tool's "
                             "context_env.deny refuses it). Refused: leave "
                             "them out of the call's context");
    /* past eight, a count */
    assert_int_equal(
        judge(
            "{\"LD_A\": \"\", \"LD_B\": \"\", \"LD_C\": \"\", \"LD_D\": \"\", "
            "\"LD_E\": \"\", \"LD_F\": \"\", \"LD_G\": \"\", \"LD_H\": \"\", "
            "\"LD_I\": \"\", \"LD_J\": \"\", \"OK\": \"\"}",
            NULL, NULL, why, sizeof why),
        1);
    assert_non_null(strstr(why, "LD_H ("));
    assert_null(strstr(why, "LD_I"));
    assert_non_null(strstr(why, "; and 2 more. Refused"));
}

static void patterns(void **state)
{
    (void)state;
    assert_true(tg__env_pattern_valid("PATH"));
    assert_true(tg__env_pattern_valid("*"));
    assert_true(tg__env_pattern_valid("GIT_*_NAME"));
    assert_true(tg__env_pattern_valid("_x9"));
    assert_false(tg__env_pattern_valid(NULL));
    assert_false(tg__env_pattern_valid(""));
    assert_false(tg__env_pattern_valid("A=B"));
    assert_false(tg__env_pattern_valid("GIT_?"));
    assert_false(tg__env_pattern_valid("[A]"));
    assert_false(tg__env_pattern_valid("A B"));
    assert_true(tg__env_pattern_match("LD_*", "LD_PRELOAD"));
    assert_true(tg__env_pattern_match("LD_*", "ld_preload"));
    assert_true(tg__env_pattern_match("LD_*", "LD_"));
    assert_false(tg__env_pattern_match("LD_*", "LD"));
    assert_false(tg__env_pattern_match("LD_*", "OLD_X"));
    assert_true(tg__env_pattern_match("*_PROXY", "https_proxy"));
    assert_true(tg__env_pattern_match("*PAGER", "PAGER"));
    assert_true(tg__env_pattern_match("GIT_*_NAME", "GIT_AUTHOR_NAME"));
    assert_false(tg__env_pattern_match("GIT_*_NAME", "GIT_AUTHOR_EMAIL"));
    assert_true(tg__env_pattern_match("PATH", "path"));
    assert_false(tg__env_pattern_match("PATH", "PATHS"));
    /* the table's patterns are patterns */
    for (size_t i = 0; tg__context_env_refused_at(i) != NULL; i++)
        assert_true(tg__env_pattern_valid(tg__context_env_refused_at(i)));
}

/* README.md documents the table: every pattern appears there in
 * backquotes, so the two cannot drift apart. */
static void readme_lists_the_table(void **state)
{
    (void)state;
    char path[PATH_MAX];
    tg_test_source_path(path, sizeof path, "README.md");
    char *readme = tg_test_read_file(path, NULL);
    if (readme == NULL)
        fail_msg("cannot read %s", path);
    size_t n = 0;
    for (size_t i = 0; tg__context_env_refused_at(i) != NULL; i++, n++) {
        char quoted[128];
        snprintf(quoted, sizeof quoted, "`%s`", tg__context_env_refused_at(i));
        if (strstr(readme, quoted) == NULL)
            fail_msg("README.md does not list %s", quoted);
    }
    assert_true(n > 100);
    free(readme);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(takeovers_refused),
        cmocka_unit_test(legitimate_ones_pass),
        cmocka_unit_test(judged_by_value),
        cmocka_unit_test(never_allowed),
        cmocka_unit_test(tool_widens_and_narrows),
        cmocka_unit_test(reasons),
        cmocka_unit_test(patterns),
        cmocka_unit_test(readme_lists_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
