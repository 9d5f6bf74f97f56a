/* SPDX-License-Identifier: MIT */
/*
 * context_env.c - the variables a call's context.env may not set, in one
 * table, and the judgement of a call's context.env against it and against
 * its tool's "context_env" (context_env.h).
 *
 * The table refuses what lets a caller choose code the tool runs or files it
 * trusts: the dynamic loader's and the C library's variables, the program
 * search path, the directories programs find their start-up files, plugins
 * and caches in (HOME, XDG_*), the temporary directory, shells' start-up and
 * parsing variables, interpreters' start-up options and module paths,
 * compilers' and build tools' programs and flags, variables naming a
 * command to run (EDITOR, PAGER, *ASKPASS), variables that carry a
 * program's options (TAR_OPTIONS), configurations that can run commands or
 * pick credentials (KUBECONFIG, AWS_CONFIG_FILE), git's variables, the
 * module paths of common libraries, and TLS trust and proxies. It leaves
 * what callers legitimately set: a locale, a time zone, TERM, NO_COLOR,
 * COLUMNS, an application's own settings (RUST_LOG, NODE_ENV, DEBUG). A
 * locale or time zone is judged by its value: one that names a file
 * (LANG=./x, TZ=/ws/zone, TZ=../../x) is refused, since the C library would
 * parse a file of the caller's choosing.
 *
 * Names are compared without regard to case: programs read http_proxy and
 * HTTP_PROXY alike, npm folds npm_config_* and Python's proxy lookup folds
 * case, so refusing one spelling and not the other would leave a hole.
 *
 * Sources looked at (read, not copied): glibc's list of variables removed
 * for set-user-ID programs (unsecvars.h), sudo's env_reset and env_check
 * tables, and the documented start-up variables of bash, Python, Node, Perl,
 * Ruby, the JVM, git, GNU tar and make.
 */
#include "context_env.h"

#include <fnmatch.h>
#include <string.h>

#include "error.h"

/* What a refused variable does, as the reason says it. */
enum what {
    W_LOADER,
    W_PATH,
    W_HOME,
    W_TMP,
    W_SHELL,
    W_INTERP,
    W_BUILD,
    W_RUNS,
    W_OPTIONS,
    W_CONFIG,
    W_GIT,
    W_PLUGIN,
    W_TRUST,
    W_LOCALE, /* refused only when the value names a file */
    W_TZ      /* refused only when the value leaves the zone database */
};

static const char *const reasons[] = {
    [W_LOADER] = "the dynamic loader and the C library read it: it can load "
                 "code into any program or have it read files the caller "
                 "chose",
    [W_PATH] = "it chooses which program a command name runs",
    [W_HOME] = "programs find their start-up files, plugins and caches "
               "through it (.bashrc, .gitconfig, Python's user "
               "site-packages)",
    [W_TMP] = "programs keep files there that they read back or run; tools "
              "have a private /tmp",
    [W_SHELL] = "a shell reads it: it runs commands at start-up or changes "
                "how command lines are read",
    [W_INTERP] = "an interpreter reads it at start-up: it can load code or "
                 "add options",
    [W_BUILD] = "compilers and build or package tools read it: it names "
                "programs to run, their flags, or where code comes from",
    [W_RUNS] = "programs run the command it names",
    [W_OPTIONS] = "a program takes extra options from it",
    [W_CONFIG] = "a program reads configuration or credentials through it, "
                 "and such configuration can run commands",
    [W_GIT] = "git reads it: it can run commands (GIT_SSH_COMMAND, "
              "GIT_CONFIG_*, GIT_EXTERNAL_DIFF) or point git at another "
              "repository",
    [W_PLUGIN] = "a library loads modules or parses files from where it "
                 "points",
    [W_TRUST] = "it changes which certificates or proxies a program trusts, "
                "or has it write its TLS keys to a file",
    [W_LOCALE] = "a locale with '/' is a path: the C library would load "
                 "locale files the caller chose",
    [W_TZ] = "a time zone that is an absolute path or holds '..' names a "
             "file outside the time zone database",
};

/* The table. README.md ("Sandbox", context.env) lists every pattern; the
 * unit test holds the two together. */
static const struct refused {
    const char *pattern;
    enum what what;
} table[] = {
    /* the dynamic loader and the C library (glibc's unsecure list and
     * more): LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT, iconv modules, tunables,
     * malloc tracing to a file, resolver and locale files */
    {"LD_*", W_LOADER},
    {"DYLD_*", W_LOADER},
    {"GCONV_PATH", W_LOADER},
    {"GETCONF_DIR", W_LOADER},
    {"GLIBC_TUNABLES", W_LOADER},
    {"MALLOC_*", W_LOADER},
    {"LOCPATH", W_LOADER},
    {"NLSPATH", W_LOADER},
    {"HOSTALIASES", W_LOADER},
    {"LOCALDOMAIN", W_LOADER},
    {"RES_OPTIONS", W_LOADER},
    {"RESOLV_HOST_CONF", W_LOADER},
    {"NIS_PATH", W_LOADER},
    {"TZDIR", W_LOADER},
    /* search paths and start-up directories */
    {"PATH", W_PATH},
    {"HOME", W_HOME},
    {"XDG_*", W_HOME},
    {"TMPDIR", W_TMP},
    {"TMP", W_TMP},
    {"TEMP", W_TMP},
    {"TEMPDIR", W_TMP},
    /* shells: start-up files, exported functions, options, prompts that
     * expand commands, word splitting, cd and glob behaviour, zsh's dot
     * directory */
    {"BASH_ENV", W_SHELL},
    {"ENV", W_SHELL},
    {"BASH_FUNC_*", W_SHELL},
    {"SHELLOPTS", W_SHELL},
    {"BASHOPTS", W_SHELL},
    {"PS0", W_SHELL},
    {"PS1", W_SHELL},
    {"PS2", W_SHELL},
    {"PS3", W_SHELL},
    {"PS4", W_SHELL},
    {"PROMPT_COMMAND", W_SHELL},
    {"IFS", W_SHELL},
    {"CDPATH", W_SHELL},
    {"GLOBIGNORE", W_SHELL},
    {"EXECIGNORE", W_SHELL},
    {"BASH_XTRACEFD", W_SHELL},
    {"BASH_LOADABLES_PATH", W_SHELL},
    {"INPUTRC", W_SHELL},
    {"HISTFILE", W_SHELL},
    {"FPATH", W_SHELL},
    {"ZDOTDIR", W_SHELL},
    {"NULLCMD", W_SHELL},
    {"READNULLCMD", W_SHELL},
    {"TMPPREFIX", W_SHELL},
    /* interpreters and language runtimes */
    {"PYTHON*", W_INTERP},
    {"NODE_OPTIONS", W_INTERP},
    {"NODE_PATH", W_INTERP},
    {"NODE_REPL_EXTERNAL_MODULE", W_INTERP},
    {"PERL*", W_INTERP},
    {"RUBY*", W_INTERP},
    {"GEM_HOME", W_INTERP},
    {"GEM_PATH", W_INTERP},
    {"BUNDLE_*", W_INTERP},
    {"JAVA_TOOL_OPTIONS", W_INTERP},
    {"_JAVA_OPTIONS", W_INTERP},
    {"JDK_JAVA_OPTIONS", W_INTERP},
    {"JAVA_OPTS", W_INTERP},
    {"JAVA_HOME", W_INTERP},
    {"CLASSPATH", W_INTERP},
    {"LUA_*", W_INTERP},
    {"TCLLIBPATH", W_INTERP},
    {"R_LIBS*", W_INTERP},
    {"R_PROFILE*", W_INTERP},
    {"R_ENVIRON*", W_INTERP},
    {"PHPRC", W_INTERP},
    {"PHP_INI_SCAN_DIR", W_INTERP},
    {"ERL_*", W_INTERP},
    {"DOTNET_*", W_INTERP},
    {"COMPLUS_*", W_INTERP},
    {"CORECLR_*", W_INTERP},
    {"GUILE_*", W_INTERP},
    {"EMACSLOADPATH", W_INTERP},
    {"JULIA_*", W_INTERP},
    /* compilers, build and package tools */
    {"CC", W_BUILD},
    {"CXX", W_BUILD},
    {"CPP", W_BUILD},
    {"LD", W_BUILD},
    {"AR", W_BUILD},
    {"AS", W_BUILD},
    {"CFLAGS", W_BUILD},
    {"CXXFLAGS", W_BUILD},
    {"CPPFLAGS", W_BUILD},
    {"LDFLAGS", W_BUILD},
    {"MAKEFLAGS", W_BUILD},
    {"MFLAGS", W_BUILD},
    {"GNUMAKEFLAGS", W_BUILD},
    {"MAKEFILES", W_BUILD},
    {"GCC_EXEC_PREFIX", W_BUILD},
    {"COMPILER_PATH", W_BUILD},
    {"LIBRARY_PATH", W_BUILD},
    {"CPATH", W_BUILD},
    {"C_INCLUDE_PATH", W_BUILD},
    {"CPLUS_INCLUDE_PATH", W_BUILD},
    {"CMAKE_*", W_BUILD},
    {"GOFLAGS", W_BUILD},
    {"GOENV", W_BUILD},
    {"GOTOOLCHAIN", W_BUILD},
    {"GOPROXY", W_BUILD},
    {"GOPATH", W_BUILD},
    {"CGO_*", W_BUILD},
    {"RUSTC*", W_BUILD},
    {"RUSTDOC*", W_BUILD},
    {"RUSTFLAGS", W_BUILD},
    {"CARGO_*", W_BUILD},
    {"PIP_*", W_BUILD},
    {"NPM_CONFIG_*", W_BUILD},
    /* a command to run */
    {"SHELL", W_RUNS},
    {"*EDITOR", W_RUNS},
    {"VISUAL", W_RUNS},
    {"*PAGER", W_RUNS},
    {"LESSOPEN", W_RUNS},
    {"LESSCLOSE", W_RUNS},
    {"BROWSER", W_RUNS},
    {"*ASKPASS", W_RUNS},
    {"*_RSH", W_RUNS},
    {"RSYNC_CONNECT_PROG", W_RUNS},
    /* options from the environment (tar's can run a command) */
    {"TAR_OPTIONS", W_OPTIONS},
    {"GREP_OPTIONS", W_OPTIONS},
    {"GZIP", W_OPTIONS},
    {"BZIP", W_OPTIONS},
    {"BZIP2", W_OPTIONS},
    {"XZ_OPT", W_OPTIONS},
    {"XZ_DEFAULTS", W_OPTIONS},
    {"MANOPT", W_OPTIONS},
    /* configuration and credentials */
    {"KUBECONFIG", W_CONFIG},
    {"DOCKER_CONFIG", W_CONFIG},
    {"DOCKER_HOST", W_CONFIG},
    {"AWS_CONFIG_FILE", W_CONFIG},
    {"AWS_SHARED_CREDENTIALS_FILE", W_CONFIG},
    {"AWS_PROFILE", W_CONFIG},
    {"CLOUDSDK_CONFIG", W_CONFIG},
    {"GOOGLE_APPLICATION_CREDENTIALS", W_CONFIG},
    {"AZURE_CONFIG_DIR", W_CONFIG},
    {"PSQLRC", W_CONFIG},
    {"PGSERVICEFILE", W_CONFIG},
    {"CURL_HOME", W_CONFIG},
    {"WGETRC", W_CONFIG},
    {"GNUPGHOME", W_CONFIG},
    {"KRB5*", W_CONFIG},
    {"SSH_AUTH_SOCK", W_CONFIG},
    /* git */
    {"GIT_*", W_GIT},
    /* libraries' modules and data files */
    {"TERMINFO", W_PLUGIN},
    {"TERMINFO_DIRS", W_PLUGIN},
    {"TERMCAP", W_PLUGIN},
    {"MAGIC", W_PLUGIN},
    {"OPENSSL_*", W_PLUGIN},
    {"GIO_EXTRA_MODULES", W_PLUGIN},
    {"GIO_MODULE_DIR", W_PLUGIN},
    {"GTK_MODULES", W_PLUGIN},
    {"GTK_PATH", W_PLUGIN},
    {"GTK_EXE_PREFIX", W_PLUGIN},
    {"GDK_PIXBUF_MODULE_FILE", W_PLUGIN},
    {"QT_PLUGIN_PATH", W_PLUGIN},
    {"QT_QPA_PLATFORM_PLUGIN_PATH", W_PLUGIN},
    {"GST_PLUGIN_*", W_PLUGIN},
    {"GI_TYPELIB_PATH", W_PLUGIN},
    {"LIBGL_DRIVERS_PATH", W_PLUGIN},
    {"LIBVA_DRIVERS_PATH", W_PLUGIN},
    {"__EGL_VENDOR_LIBRARY_*", W_PLUGIN},
    {"VK_*", W_PLUGIN},
    {"SASL_PATH", W_PLUGIN},
    /* TLS trust, key logs, proxies */
    {"SSL_CERT_*", W_TRUST},
    {"CURL_CA_BUNDLE", W_TRUST},
    {"REQUESTS_CA_BUNDLE", W_TRUST},
    {"NODE_EXTRA_CA_CERTS", W_TRUST},
    {"NODE_TLS_REJECT_UNAUTHORIZED", W_TRUST},
    {"SSLKEYLOGFILE", W_TRUST},
    {"*_PROXY", W_TRUST},
    /* judged by value */
    {"LANG", W_LOCALE},
    {"LANGUAGE", W_LOCALE},
    {"LC_*", W_LOCALE},
    {"TZ", W_TZ},
};

#define NTABLE (sizeof table / sizeof table[0])
#define MAX_LISTED 8

const char *tg__context_env_refused_at(size_t i)
{
    return i < NTABLE ? table[i].pattern : NULL;
}

static bool name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
}

bool tg__env_pattern_valid(const char *pattern)
{
    if (pattern == NULL || pattern[0] == '\0')
        return false;
    for (const char *p = pattern; *p; p++)
        if (*p != '*' && !name_char(*p, false))
            return false;
    return true;
}

bool tg__env_pattern_match(const char *pattern, const char *name)
{
    /* Patterns hold only name characters and '*' (tg__env_pattern_valid,
     * and the table), so fnmatch sees no other special character. */
    return fnmatch(pattern, name, FNM_CASEFOLD) == 0;
}

/* A plain variable name: a letter or '_', then letters, digits and '_'.
 * Anything else is no variable a caller needs, and bash reads some such
 * names ("BASH_FUNC_ls%%") as function definitions. */
static bool plain_name(const char *name)
{
    if (!name_char(name[0], true))
        return false;
    for (const char *p = name + 1; *p; p++)
        if (!name_char(*p, false))
            return false;
    return true;
}

static bool matches_any(const json_t *patterns, const char *name)
{
    size_t i;
    json_t *p; /* borrowed */
    json_array_foreach(patterns, i, p)
    {
        const char *s = json_string_value(p);
        if (s != NULL && tg__env_pattern_match(s, name))
            return true;
    }
    return false;
}

/* Whether a value of a W_LOCALE or W_TZ entry is refused. */
static bool value_refused(enum what what, const char *value)
{
    if (what == W_LOCALE)
        return strchr(value, '/') != NULL;
    /* TZ: "Europe/Paris" is a name inside the zone database; ":/x", "/x"
     * and anything with ".." leave it. */
    const char *v = value[0] == ':' ? value + 1 : value;
    return v[0] == '/' || strstr(v, "..") != NULL;
}

/* Why the table refuses name=value, or NULL. */
static const char *table_refusal(const char *name, const char *value)
{
    for (size_t i = 0; i < NTABLE; i++) {
        if (!tg__env_pattern_match(table[i].pattern, name))
            continue;
        enum what w = table[i].what;
        if ((w == W_LOCALE || w == W_TZ) && !value_refused(w, value))
            return NULL;
        return reasons[w];
    }
    return NULL;
}

/* Appends a caller's name for a message: at most 64 characters, anything
 * but a name character shown as '?' (it may reach a terminal). */
static int put_name(tg__buf *b, const char *name)
{
    char shown[68];
    size_t n = 0;
    for (; name[n] && n < 64; n++)
        shown[n] = name_char(name[n], false) ? name[n] : '?';
    if (name[n]) {
        memcpy(shown + n, "...", 3);
        n += 3;
    }
    return tg__buf_append(b, shown, n);
}

int tg__context_env_check(const json_t *ctx_env, const json_t *allow,
                          const json_t *deny, tg__buf *why)
{
    if (ctx_env == NULL || !json_is_object(ctx_env))
        return 0;
    size_t refused = 0;
    bool allowable = false; /* a tool's allow could let one through */
    const char *first_allowable = NULL;
    const char *name;
    json_t *v; /* borrowed */
    int rc = 0;
    json_object_foreach((json_t *)ctx_env, name, v)
    {
        if (!json_is_string(v))
            continue;
        const char *value = json_string_value(v);
        const char *reason = NULL;
        bool can_allow = false;
        if (!plain_name(name))
            reason = "not a plain variable name (letters, digits and '_', "
                     "not starting with a digit); bash reads some such names "
                     "as function definitions";
        else if (strlen(value) != json_string_length(v))
            reason = "its value holds a NUL byte";
        else if (strncmp(value, "() {", 4) == 0)
            reason = "a value beginning with '() {' is a shell function "
                     "definition to older shells";
        else if (deny != NULL && matches_any(deny, name))
            reason = "this tool's context_env.deny refuses it";
        else if (allow == NULL || !matches_any(allow, name))
            can_allow = (reason = table_refusal(name, value)) != NULL;
        if (reason == NULL)
            continue;
        if (can_allow && first_allowable == NULL)
            first_allowable = name;
        allowable = allowable || can_allow;
        if (refused++ >= MAX_LISTED)
            continue;
        if (refused == 1)
            rc = tg__buf_puts(why, "context.env may not set ");
        else
            rc = tg__buf_puts(why, "; ");
        if (rc == 0)
            rc = put_name(why, name);
        if (rc == 0)
            rc = tg__buf_printf(why, " (%s)", reason);
        if (rc != 0)
            return TG_ENOMEM;
    }
    if (refused == 0)
        return 0;
    if (refused > MAX_LISTED)
        rc = tg__buf_printf(why, "; and %zu more", refused - MAX_LISTED);
    if (rc == 0)
        rc = tg__buf_puts(why, ". Refused: leave them out of the call's "
                               "context");
    if (rc == 0 && allowable) {
        rc = tg__buf_puts(why, "; a command tool's configuration can allow "
                               "a variable with \"context_env\": "
                               "{\"allow\": [\"");
        if (rc == 0)
            rc = put_name(why, first_allowable);
        if (rc == 0)
            rc = tg__buf_puts(why, "\"]}");
    }
    return rc == 0 ? 1 : TG_ENOMEM;
}
