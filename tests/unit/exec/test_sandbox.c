/* SPDX-License-Identifier: MIT */
/*
 * test_sandbox.c - the sandbox of command tools (src/exec/sandbox.c) with
 * real bubblewrap and real subprocesses: the configuration's sandbox keys,
 * the environment allowlist and secret scrubbing, resource limits and the
 * descriptors a child is handed, and, through a runtime, what a tool can
 * and cannot do inside: argv stays literal, nothing outside the workspace
 * is writable, /tmp is private, no network (unless the tool asks), no
 * secret from the environment, TERM then KILL at the deadline reaching the
 * command inside, a daemon dying with its call, a fork bomb ending at the
 * process limit, the decisions recorded, toolgate's own files (journal,
 * spool, configuration) hidden and pinned, the placements refused where
 * they cannot be, and the fallbacks (mode "off", no bubblewrap, mode
 * "bubblewrap" where it cannot run).
 *
 * The tests that need bubblewrap skip, saying why, where it cannot make
 * namespaces.
 *
 * Time: deadlines that a sandboxed command must beat are sized from what
 * one sandboxed call costs here and now (sandbox_cost_ms, measured first),
 * at least a scaled floor (tg_test_ms); waits for processes to go are
 * scaled bounds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "process.h"
#include "record.h"
#include "runtime.h"
#include "sandbox.h"
#include "tg_test_exec.h"
#include "toolgate.h"
#include "turn.h"
#include "warm.h"

/* ------------------------------------------------------------ harness */

/* The sandbox mode the attacks run in: TG_SANDBOX_TEST_MODE "warm" (the
 * ctest unit_test_sandbox_warm) or cold (unless told: warm is the default
 * where it works, so cold is named), and the decision a call in
 * bubblewrap records in it. */
static int test_mode = TG__SANDBOX_COLD;
static const char *bw_name = "bubblewrap";

typedef struct env {
    char dir[256]; /* first: tg_test_dir_setup makes it */
    char ws[264];  /* the workspace, dir/ws */
} env;

static int setup(void **state)
{
    if (tg_test_dir_setup(state, sizeof(env), "tg_sbx_") != 0)
        return -1;
    env *e = *state;
    snprintf(e->ws, sizeof e->ws, "%s/ws", e->dir);
    return mkdir(e->ws, 0755);
}

static int teardown(void **state)
{
    return tg_test_dir_teardown(state);
}

/* Whether bubblewrap can make the namespaces the sandbox uses here; the
 * reason it cannot into why[]. */
static int bwrap_works(char *why, size_t cap)
{
    int rc = system("bwrap --unshare-user --unshare-pid --unshare-net "
                    "--ro-bind / / --dev /dev --proc /proc true "
                    ">/dev/null 2>&1");
    if (rc == 0)
        return 1;
    snprintf(why, cap,
             "bubblewrap cannot make user, PID and network namespaces here "
             "(status %d)",
             rc);
    return 0;
}

#define NEED_BWRAP()                                                           \
    do {                                                                       \
        char why_[256];                                                        \
        if (!bwrap_works(why_, sizeof why_)) {                                 \
            printf("SKIP %s: %s\n", __func__, why_);                           \
            skip();                                                            \
        }                                                                      \
    } while (0)

/* A configuration: workspace e->ws, no journal, the given top-level members
 * (may be ""), and the tools. */
static tg_config *make_cfg(const env *e, const char *members, const char *tools)
{
    char text[16384];
    snprintf(text, sizeof text,
             "{\"workspace\": \"%s\", \"journal\": null, %s%s"
             "\"tools\": [%s]}",
             e->ws, members ? members : "", members && *members ? ", " : "",
             tools ? tools : "");
    tg_config *cfg = tg_test_config(text, e->dir);
    /* a configuration that names no mode runs in the test's */
    if (cfg != NULL && cfg->sandbox_mode == TG__SANDBOX_AUTO &&
        strstr(text, "\"mode\"") == NULL &&
        strstr(text, "\"bwrap\"") == NULL) /* (auto's fallback is tested) */
        cfg->sandbox_mode = test_mode;
    return cfg;
}

static tg_runtime *make_rt(const env *e, const char *members, const char *tools)
{
    tg_runtime *rt = tg_test_runtime_of(make_cfg(e, members, tools));
    tg_runtime_set_approve(rt, 1);
    return rt;
}

/* Adds a shell call whose command is `cmd` (made a JSON string here). */
static void add_shell(tg_turn *t, const char *id, const char *cmd)
{
    json_t *a = json_pack("{s:s}", "command", cmd); /* new ref */
    char *text = json_dumps(a, JSON_COMPACT);
    tg_test_add(t, id, "shell", text);
    free(text);
    json_decref(a);
}

/* The text payload of a successful result (JSON string), or fails. */
static const char *out_of(const tg_turn *t, size_t i)
{
    const tg_result *r = tg_test_res(t, i);
    if (tg_result_outcome(r) != TG_OUTCOME_SUCCESS)
        fail_msg("call %zu: %s %s", i, tg_outcome_name(tg_result_outcome(r)),
                 tg_result_payload_json(r));
    json_t *p = json_loads(tg_result_payload_json(r), JSON_DECODE_ANY,
                           NULL); /* new ref */
    assert_true(json_is_string(p));
    static char buf[8192]; /* one test at a time */
    snprintf(buf, sizeof buf, "%s", json_string_value(p));
    json_decref(p);
    return buf;
}

static const char *decision(const tg_turn *t, size_t i)
{
    const tg_result *r = tg_test_res(t, i);
    assert_non_null(r->decisions);
    return json_string_value(json_object_get(r->decisions, "sandbox"));
}

/* Processes whose command line contains `needle` (zombies have none). */
static int count_procs(const char *needle)
{
    DIR *d = opendir("/proc");
    assert_non_null(d);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        char path[300], buf[4096];
        snprintf(path, sizeof path, "/proc/%s/cmdline", de->d_name);
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            continue;
        ssize_t len = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (len <= 0)
            continue;
        for (ssize_t k = 0; k < len; k++)
            if (buf[k] == '\0')
                buf[k] = ' ';
        buf[len] = '\0';
        if (strstr(buf, needle) != NULL)
            n++;
    }
    closedir(d);
    return n;
}

/* ------------------------------------------------------- configuration */

static void config_keys(void **state)
{
    env *e = *state;
    tg_config *cfg = make_cfg(e, "", "");
    assert_int_equal(cfg->sandbox_mode, test_mode); /* the test's mode */
    assert_int_equal(cfg->rlimit_cpu_s, 600);
    assert_int_equal(cfg->rlimit_as_mb, 0);
    assert_int_equal(cfg->rlimit_nofile, 1024);
    assert_int_equal(cfg->rlimit_nproc, 512);
    assert_int_equal(cfg->rlimit_fsize_mb, 1024);
    tg_config_free(cfg);

    cfg = make_cfg(e,
                   "\"sandbox\": {\"mode\": \"off\", \"bwrap\": \"bin/bw\", "
                   "\"hide\": [\"~/.x\"], \"rlimits\": {\"cpu_s\": 5, "
                   "\"as_mb\": 2048, \"nofile\": 64, \"nproc\": 0, "
                   "\"fsize_mb\": 1}}",
                   "{\"name\": \"t\", \"command\": [\"/bin/true\"], "
                   "\"network\": true, \"sandbox\": false, \"env_pass\": "
                   "[\"GH_TOKEN\"]}");
    assert_int_equal(cfg->sandbox_mode, TG__SANDBOX_OFF);
    char want[PATH_MAX + 16];
    snprintf(want, sizeof want, "%s/bin/bw", e->dir);
    assert_string_equal(cfg->sandbox_bwrap, want);
    assert_int_equal(json_array_size(cfg->sandbox_hide), 1);
    assert_int_equal(cfg->rlimit_cpu_s, 5);
    assert_int_equal(cfg->rlimit_as_mb, 2048);
    assert_int_equal(cfg->rlimit_nofile, 64);
    assert_int_equal(cfg->rlimit_nproc, 0);
    assert_int_equal(cfg->rlimit_fsize_mb, 1);
    tg_config *copy = tg__config_copy(cfg);
    assert_string_equal(copy->sandbox_bwrap, want);
    assert_int_equal(copy->rlimit_nofile, 64);
    tg_config_free(copy);
    tg_config_free(cfg);

    static const struct {
        const char *text, *message, *pointer;
    } bad[] = {
        {"{\"sandbox\": 1}", "sandbox must be an object", "/sandbox"},
        {"{\"sandbox\": {\"mode\": \"on\"}}",
         "sandbox.mode must be \"auto\", \"bubblewrap\", \"warm\", "
         "\"cold\" or \"off\", got on",
         "/sandbox/mode"},
        {"{\"sandbox\": {\"net\": true}}", "unknown key 'sandbox.net'",
         "/sandbox/net"},
        {"{\"sandbox\": {\"bwrap\": \"\"}}", "sandbox.bwrap must not be empty",
         "/sandbox/bwrap"},
        {"{\"sandbox\": {\"hide\": [\"relative\"]}}",
         "sandbox.hide must be an array", "/sandbox/hide"},
        {"{\"sandbox\": {\"rlimits\": {\"nproc\": -1}}}",
         "sandbox.rlimits.nproc must be an integer from 0 to 4194304",
         "/sandbox/rlimits/nproc"},
        {"{\"sandbox\": {\"rlimits\": {\"stack\": 1}}}",
         "unknown key 'sandbox.rlimits.stack'", "/sandbox/rlimits/stack"},
        {"{\"tools\": [{\"name\": \"t\", \"command\": [\"x\"], \"network\": "
         "1}]}",
         "tools[0].network must be true or false", "/tools/0/network"},
        {"{\"tools\": [{\"name\": \"t\", \"command\": [\"x\"], \"sandbox\": "
         "\"no\"}]}",
         "tools[0].sandbox must be true or false", "/tools/0/sandbox"},
        {"{\"tools\": [{\"name\": \"t\", \"command\": [\"x\"], \"env_pass\": "
         "[\"A=B\"]}]}",
         "tools[0].env_pass[0] must be an environment variable name",
         "/tools/0/env_pass"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cfg = tg_config_new();
        tg_error err = {0};
        int rc =
            tg_config_load(cfg, bad[i].text, strlen(bad[i].text), e->dir, &err);
        if (rc != TG_ECONFIG || strstr(err.message, bad[i].message) == NULL ||
            strcmp(err.pointer, bad[i].pointer) != 0)
            fail_msg("case %zu: rc %d '%s' at '%s'", i, rc, err.message,
                     err.pointer);
        /* a bad file leaves the configuration as it was */
        assert_int_equal(cfg->sandbox_mode, TG__SANDBOX_AUTO);
        assert_int_equal(cfg->rlimit_nproc, 512);
        tg_config_free(cfg);
    }
}

/* --------------------------------------------------------- environment */

static void secret_names(void **state)
{
    (void)state;
    const char *secret[] = {"MY_API_KEY",  "GITHUB_TOKEN", "aws_secret_access",
                            "DB_PASSWORD", "PASSWD",       "GOOGLE_CREDENTIALS",
                            "ssh_key"};
    const char *plain[] = {"PATH", "HOME", "LANG", "TERM", "EDITOR", "PWD"};
    for (size_t i = 0; i < sizeof secret / sizeof secret[0]; i++)
        assert_true(tg__env_secret_name(secret[i]));
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        assert_false(tg__env_secret_name(plain[i]));
}

static void tool_env(void **state)
{
    (void)state;
    char *base[] = {"PATH=/bin", "HOME=/h", NULL};
    char *pass[] = {"GH_TOKEN=ghp", "OTHER_KEY=o", "LC_ALL=C", NULL};
    json_t *names = json_pack("[ss]", "GH_TOKEN", "LC_ALL"); /* new ref */
    json_t *tool = json_pack("{s:s, s:s}", "HOME", "/tool", "DEPLOY_KEY",
                             "k"); /* new ref */
    json_t *ctx =
        json_pack("{s:s, s:s, s:s, s:s}", "MY_API_KEY", "canary", "DEPLOY_KEY",
                  "ctx", "MODE", "fast", "GH_TOKEN", "ctx-token"); /* new ref */
    char **out = NULL;
    void *owned = NULL;
    /* nothing added: the base itself */
    assert_int_equal(
        tg__proc_env_tool(base, pass, NULL, NULL, NULL, &out, &owned), 0);
    assert_ptr_equal(out, base);
    assert_null(owned);
    assert_int_equal(
        tg__proc_env_tool(base, pass, names, tool, ctx, &out, &owned), 0);
    assert_string_equal(tg__proc_getenv(out, "PATH"), "/bin");
    assert_string_equal(tg__proc_getenv(out, "HOME"), "/tool");
    assert_string_equal(tg__proc_getenv(out, "LC_ALL"), "C");
    assert_string_equal(tg__proc_getenv(out, "MODE"), "fast");
    /* listed by the tool (env_pass or env): the context may set it */
    assert_string_equal(tg__proc_getenv(out, "GH_TOKEN"), "ctx-token");
    assert_string_equal(tg__proc_getenv(out, "DEPLOY_KEY"), "ctx");
    /* not listed: a secret-looking name never passes */
    assert_null(tg__proc_getenv(out, "MY_API_KEY"));
    assert_null(tg__proc_getenv(out, "OTHER_KEY"));
    size_t n = 0;
    while (out[n])
        n++;
    assert_int_equal(n, 6); /* PATH HOME GH_TOKEN LC_ALL DEPLOY_KEY MODE */
    free(owned);
    json_decref(names);
    json_decref(tool);
    json_decref(ctx);
}

/* ------------------------------------------------------- spawn extras */

static void limits_and_kept_fds(void **state)
{
    (void)state;
    int out[2], extra[2];
    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    assert_int_equal(pipe2(extra, O_CLOEXEC), 0);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    char *argv[] = {"/bin/sh", "-c",
                    "ulimit -n; ulimit -c; ulimit -f; echo via3 >&3", NULL};
    char *envp[] = {"PATH=/bin:/usr/bin", NULL};
    tg__rlimit lim[] = {
        {RLIMIT_NOFILE, 77}, {RLIMIT_CORE, 0}, {RLIMIT_FSIZE, 1024 * 512}};
    tg__spawn sp = {argv[0], argv, envp, NULL, devnull, out[1], devnull};
    tg__spawn_extra x = {lim, 3, 1, {extra[1], -1}};
    pid_t pid;
    int stage, errnum;
    assert_int_equal(tg__proc_spawn_ex(&sp, &x, &pid, &stage, &errnum), 0);
    close(out[1]);
    close(extra[1]);
    char buf[256] = {0}, buf3[64] = {0};
    size_t len = 0;
    ssize_t n;
    while ((n = read(out[0], buf + len, sizeof buf - 1 - len)) > 0)
        len += (size_t)n;
    assert_true(read(extra[0], buf3, sizeof buf3 - 1) > 0);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* ulimit -f counts 512-byte blocks */
    assert_string_equal(buf, "77\n0\n1024\n");
    assert_string_equal(buf3, "via3\n");
    close(out[0]);
    close(extra[0]);
    close(devnull);
}

/* ------------------------------------------------------- in bubblewrap */

/* printf reads no options after its format, so {c} may begin with '-'
 * (option_args); it must still arrive as one literal element. */
#define ARGV_TOOL                                                              \
    "{\"name\": \"argv\", \"command\": [\"/usr/bin/printf\", \"[%s]\\\\n\", "  \
    "\"{a}\", \"{b}\", \"{c}\"], \"option_args\": [\"c\"]}"

static void argv_stays_literal(void **state)
{
    NEED_BWRAP();
    env *e = *state;
    tg_runtime *rt = make_rt(e, "", ARGV_TOOL);
    tg_turn *t = tg__turn_new("toolgate");
    tg_test_add(
        t, "a1", "argv",
        "{\"a\": \"; rm -rf x\", \"b\": \"$(touch pwned) `touch pwned2`\", "
        "\"c\": \"--option=1\\nsecond line\"}");
    tg_test_run(rt, t);
    assert_string_equal(out_of(t, 0), "[; rm -rf x]\n[$(touch pwned) `touch "
                                      "pwned2`]\n[--option=1\nsecond line]\n");
    assert_string_equal(decision(t, 0), bw_name);
    struct stat st;
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/pwned", e->ws);
    assert_int_not_equal(stat(p, &st), 0);
    tg_turn_free(t);
    tg_runtime_free(rt);
}

static void files_outside_are_read_only(void **state)
{
    NEED_BWRAP();
    env *e = *state;
    char outside[PATH_MAX + 16], cmd[4 * PATH_MAX];
    /* outside the workspace and outside /tmp (which is the sandbox's own) */
    snprintf(outside, sizeof outside, "/var/tmp/tg_sbx_%ld.txt",
             (long)getpid());
    /* Calls at once in one warm sandbox share its /tmp (README, "The warm
     * sandbox"): there the guarantee is for calls one after another. */
    tg_runtime *rt = make_rt(e,
                             test_mode == TG__SANDBOX_WARM
                                 ? "\"builtin_tools\": [\"shell\"], "
                                   "\"limits\": {\"parallel\": 1}"
                                 : "\"builtin_tools\": [\"shell\"]",
                             "");
    tg_turn *t = tg__turn_new("toolgate");
    snprintf(cmd, sizeof cmd,
             "echo x > %s 2>/dev/null && echo wrote-outside; "
             "touch /usr/tg_sbx_pwned 2>/dev/null && echo wrote-usr; "
             "echo in > inside.txt && echo wrote-inside; "
             "echo t > /tmp/tg_sbx_tmp && echo wrote-tmp; pwd",
             outside);
    add_shell(t, "s1", cmd);
    add_shell(t, "s2", "cat /tmp/tg_sbx_tmp 2>/dev/null || echo fresh-tmp");
    /* the test's own directory, beside the workspace, is hidden under the
     * sandbox's /tmp: a write there lands in that tmpfs only */
    snprintf(cmd, sizeof cmd, "echo x > %s/beside.txt && echo private", e->dir);
    add_shell(t, "s3", cmd);
    tg_test_run(rt, t);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "wrote-inside\nwrote-tmp\n%s\n", e->ws);
    assert_string_equal(out_of(t, 0), want);
    /* each call has a /tmp of its own */
    assert_string_equal(out_of(t, 1), "fresh-tmp\n");
    assert_string_equal(out_of(t, 2), "private\n");
    struct stat st;
    char beside[PATH_MAX + 16];
    snprintf(beside, sizeof beside, "%s/beside.txt", e->dir);
    assert_int_not_equal(stat(beside, &st), 0);
    assert_int_not_equal(stat(outside, &st), 0);
    assert_int_not_equal(stat("/usr/tg_sbx_pwned", &st), 0);
    assert_int_not_equal(stat("/tmp/tg_sbx_tmp", &st), 0);
    snprintf(outside, sizeof outside, "%s/inside.txt", e->ws);
    assert_int_equal(stat(outside, &st), 0);
    tg_turn_free(t);
    tg_runtime_free(rt);
}

static void no_network_unless_asked(void **state)
{
    NEED_BWRAP();
    env *e = *state;
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(ls, 16), 0);
    socklen_t alen = sizeof a;
    assert_int_equal(getsockname(ls, (struct sockaddr *)&a, &alen), 0);
    char tools[1024];
    const char *connect = "exec 3<>/dev/tcp/127.0.0.1/$0 && echo connected";
    snprintf(tools, sizeof tools,
             "{\"name\": \"net\", \"command\": [\"/bin/bash\", \"-c\", \"%s\", "
             "\"{port}\"], \"network\": true},"
             "{\"name\": \"nonet\", \"command\": [\"/bin/bash\", \"-c\", "
             "\"%s\", \"{port}\"]}",
             connect, connect);
    tg_runtime *rt = make_rt(e, "", tools);
    tg_turn *t = tg__turn_new("toolgate");
    char args[64];
    snprintf(args, sizeof args, "{\"port\": \"%d\"}", ntohs(a.sin_port));
    tg_test_add(t, "n1", "net", args);
    tg_test_add(t, "n2", "nonet", args);
    tg_test_run(rt, t);
    assert_string_equal(out_of(t, 0), "connected\n");
    assert_int_equal(tg_result_outcome(tg_test_res(t, 1)), TG_OUTCOME_ERROR);
    assert_non_null(strstr(tg_test_printed(tg_test_res(t, 1), "stderr"),
                           "Connection refused"));
    close(ls);
    tg_turn_free(t);
    tg_runtime_free(rt);
}

static void secrets_stay_out(void **state)
{
    NEED_BWRAP();
    env *e = *state;
    setenv("TG_SBX_API_KEY", "canary-1", 1);
    setenv("TG_SBX_PASS_TOKEN", "canary-2", 1);
    tg_runtime *rt = make_rt(
        e, "\"builtin_tools\": [\"shell\"]",
        "{\"name\": \"envs\", \"command\": [\"/usr/bin/env\"], \"env_pass\": "
        "[\"TG_SBX_PASS_TOKEN\"], \"env\": {\"TG_SBX_SET\": \"set\"}}");
    unsetenv("TG_SBX_API_KEY");
    unsetenv("TG_SBX_PASS_TOKEN");
    tg_turn *t = tg__turn_new("toolgate");
    add_shell(t, "s1",
              "echo \"[$TG_SBX_API_KEY][$TG_SBX_PASS_TOKEN][$CTX_SECRET_KEY]"
              "[$CTX_PLAIN]\"; env | cut -d= -f1 | sort | tr '\\n' ' '");
    t->calls[0]->context = json_pack("{s:{s:s, s:s}}", "env", "CTX_SECRET_KEY",
                                     "c1", "CTX_PLAIN", "p");
    tg_test_add(t, "e1", "envs", "{}");
    tg_test_run(rt, t);
    /* a warm call gets a TMPDIR of its own */
    assert_string_equal(out_of(t, 0),
                        test_mode == TG__SANDBOX_WARM
                            ? "[][][][p]\nCTX_PLAIN HOME LANG PATH PWD SHLVL "
                              "TERM TMPDIR _ "
                            : "[][][][p]\nCTX_PLAIN HOME LANG PATH "
                              "PWD SHLVL TERM _ ");
    const char *o = out_of(t, 1);
    assert_non_null(strstr(o, "TG_SBX_PASS_TOKEN=canary-2\n"));
    assert_non_null(strstr(o, "TG_SBX_SET=set\n"));
    assert_null(strstr(o, "canary-1"));
    tg_turn_free(t);
    tg_runtime_free(rt);
}

/* What one sandboxed call (`true` in the shell tool, in bubblewrap) costs
 * here and now, in ms. */
static long sandbox_cost_ms(const env *e)
{
    tg_runtime *rt = make_rt(e, "\"builtin_tools\": [\"shell\"]", "");
    long cost = tg_test_call_cost_ms(rt, "shell", "{\"command\":\"true\"}",
                                     "one sandboxed call");
    tg_runtime_free(rt);
    return cost;
}

/* A deadline that a sandboxed command beats with room: k times a sandboxed
 * call, at least a scaled `floor` ms. */
static long sandbox_budget(const env *e, long k, long floor)
{
    long b = k * sandbox_cost_ms(e);
    return b > tg_test_ms(floor) ? b : tg_test_ms(floor);
}

/* The marker sleeps below end with this run's tag (its PID, 7 digits), so
 * the machine-wide count of count_procs finds this run's processes and
 * never those of another run beside it (a second checkout, CI). */
static const char *run_tag(void)
{
    static char tag[12];
    if (tag[0] == '\0')
        snprintf(tag, sizeof tag, "%07d", (int)(getpid() % 10000000));
    return tag;
}

/* The marker "sleep 90.471<digit><tag>" in *out. */
static const char *marker(char *out, size_t n, char digit)
{
    snprintf(out, n, "sleep 90.471%c%s", digit, run_tag());
    return out;
}

/* `cmd` with each "@N" replaced by this run's marker N (one digit), in
 * *out. */
static const char *with_markers(char *out, size_t n, const char *cmd)
{
    size_t k = 0;
    for (const char *c = cmd; *c != '\0' && k + 1 < n; c++) {
        if (c[0] == '@' && c[1] >= '0' && c[1] <= '9') {
            char m[64];
            k += (size_t)snprintf(out + k, n - k, "%s",
                                  marker(m, sizeof m, c[1]));
            c++;
        } else {
            out[k++] = *c;
        }
    }
    out[k < n ? k : n - 1] = '\0';
    return out;
}

/* Waits until no process has any of this run's markers `digits` in its
 * command line, a scaled 5 s at most; the count left. */
static int procs_gone(const char *digits)
{
    double end = tg_test_now_ms() + (double)tg_test_ms(5000);
    int n;
    do {
        n = 0;
        for (const char *d = digits; *d != '\0'; d++) {
            char m[64];
            n += count_procs(marker(m, sizeof m, *d));
        }
    } while (n > 0 && tg_test_now_ms() < end && usleep(20000) == 0);
    return n;
}

/* The deadline must find g1's trap set and d2 done: 5x a sandboxed call.
 * The grace is 60 s: only TERM reaching the command ends g1 sooner. */
static void deadline_reaches_inside(void **state)
{
    NEED_BWRAP();
    env *e = *state;
    long budget = sandbox_budget(e, 5, 800);
    char members[160];
    snprintf(
        members, sizeof members,
        "\"builtin_tools\": [\"shell\"], \"limits\": {\"timeout_ms\": %ld, "
        "\"kill_grace_ms\": 60000}",
        budget);
    tg_runtime *rt = make_rt(e, members, "");
    tg_turn *t = tg__turn_new("toolgate");
    /* TERM reaches the command: it leaves a note and exits. */
    char cmd[256];
    add_shell(t, "g1",
              with_markers(cmd, sizeof cmd,
                           "trap 'echo term > got_term; exit 3' TERM; @1 & "
                           "wait"));
    /* A daemon of its own session dies with the call. */
    add_shell(t, "d1",
              with_markers(cmd, sizeof cmd,
                           "setsid @2 </dev/null >/dev/null 2>&1 & @3"));
    /* Leaving a daemon behind and exiting at once: it dies too. */
    add_shell(t, "d2",
              with_markers(cmd, sizeof cmd,
                           "setsid @4 </dev/null >/dev/null 2>&1 & echo left"));
    double t0 = tg_test_now_ms();
    tg_test_run(rt, t);
    double took = tg_test_now_ms() - t0;
    assert_int_equal(tg_result_outcome(tg_test_res(t, 0)), TG_OUTCOME_TIMEOUT);
    assert_int_equal(tg_result_outcome(tg_test_res(t, 1)), TG_OUTCOME_TIMEOUT);
    assert_string_equal(out_of(t, 2), "left\n");
    /* the trap ran long before the 60 s grace ran out */
    assert_true(took < (double)(budget + tg_test_ms(10000)));
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/got_term", e->ws);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(procs_gone("1234"), 0);
    tg_turn_free(t);
    tg_runtime_free(rt);
}

/* The fork loop has a deadline far beyond its work (60 s; it takes a
 * second or so); the bomb's turn one it cannot outlive, which the other
 * call of that turn beats with room: 10x a sandboxed call, at least a
 * scaled 3 s. */
static void fork_bomb_ends_at_the_limit(void **state)
{
    NEED_BWRAP();
    env *e = *state;
    tg_runtime *rt = make_rt(
        e,
        "\"builtin_tools\": [\"shell\"], \"limits\": {\"timeout_ms\": 60000, "
        "\"kill_grace_ms\": 200}, \"sandbox\": {\"rlimits\": {\"nproc\": 40}}",
        "");
    tg_turn *t = tg__turn_new("toolgate");
    /* A loop, not a bomb: it reports how many children it got (perl's fork
     * fails at once where bash's retries). */
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "perl -e 'for (1..600) { my $p = fork; last unless defined $p; "
             "if (!$p) { exec \"sleep\", \"90.4715%s\" } $n++ } print $n+0'",
             run_tag());
    add_shell(t, "f1", cmd);
    tg_test_run(rt, t);
    /* The loop met the limit: at most 300 processes as root (the floor of
     * the PID namespace's pid_max) or 40 (RLIMIT_NPROC in its namespace),
     * bash and bubblewrap's PID 1 included. */
    long n = strtol(out_of(t, 0), NULL, 10);
    /* A warm sandbox's limit is its own (its calls share it): as root
     * pid_max holds nproc + 316 numbers (they wrap to 300), the helper and
     * the reaper among them; else nproc + parallel + 2. */
    if (geteuid() == 0 && test_mode == TG__SANDBOX_WARM)
        assert_true(n >= 200 && n <= 40 + 316);
    else if (test_mode == TG__SANDBOX_WARM)
        assert_true(n >= 30 && n <= 40 + 8 + 2);
    else if (geteuid() == 0)
        assert_true(n >= 200 && n <= 300);
    else
        assert_true(n >= 30 && n <= 40);
    assert_int_equal(procs_gone("5"), 0);
    tg_turn_free(t);
    tg_runtime_free(rt);

    long budget = sandbox_budget(e, 10, 3000);
    char members[200];
    snprintf(
        members, sizeof members,
        "\"builtin_tools\": [\"shell\"], \"limits\": {\"timeout_ms\": %ld, "
        "\"kill_grace_ms\": 200}, \"sandbox\": {\"rlimits\": "
        "{\"nproc\": 40}}",
        budget);
    rt = make_rt(e, members, "");
    t = tg__turn_new("toolgate");
    add_shell(t, "b1",
              with_markers(cmd, sizeof cmd, "b(){ b|b& }; b 2>/dev/null; @6"));
    add_shell(t, "ok", "echo fine");
    tg_test_run(rt, t);
    /* The bomb ends at its deadline, the turn completes. */
    assert_int_equal(tg_result_outcome(tg_test_res(t, 0)), TG_OUTCOME_TIMEOUT);
    assert_string_equal(out_of(t, 1), "fine\n");
    assert_int_equal(procs_gone("56"), 0);
    tg_turn_free(t);
    tg_runtime_free(rt);
}

static void exits_and_failures(void **state)
{
    NEED_BWRAP();
    env *e = *state;
    tg_runtime *rt = make_rt(
        e, "\"builtin_tools\": [\"shell\"]",
        "{\"name\": \"missing\", \"command\": [\"/nonexistent/program\"]},"
        "{\"name\": \"plain\", \"command\": [\"/bin/echo\", \"plain\"], "
        "\"sandbox\": false},"
        "{\"name\": \"rel\", \"command\": [\"./hello.sh\"]}");
    /* a program named relative to the call's cwd (the workspace) */
    assert_int_equal(
        tg_test_write_script(e->ws, "hello.sh", "echo hello from $0"), 0);
    tg_turn *t = tg__turn_new("toolgate");
    add_shell(t, "k1", "kill -9 $$");
    add_shell(t, "x1", "echo oops >&2; exit 7");
    tg_test_add(t, "m1", "missing", "{}");
    tg_test_add(t, "p1", "plain", "{}");
    add_shell(t, "c1", "pwd");
    t->calls[4]->context = json_pack("{s:s}", "cwd", "no/such/dir");
    add_shell(t, "l1", "ulimit -n; ulimit -c; ulimit -t");
    tg_test_add(t, "r1", "rel", "{}");
    tg_test_run(rt, t);
    assert_string_equal(tg_result_error_code(tg_test_res(t, 0)),
                        "KILLED_BY_SIGNAL");
    assert_string_equal(tg_result_error_message(tg_test_res(t, 0)),
                        "command was killed by signal 9 (SIGKILL)");
    assert_string_equal(tg_result_error_code(tg_test_res(t, 1)), "EXIT_STATUS");
    assert_int_equal(tg_result_exit_status(tg_test_res(t, 1)), 7);
    assert_string_equal(tg_result_error_message(tg_test_res(t, 1)),
                        "command exited with status 7");
    assert_string_equal(tg_test_printed(tg_test_res(t, 1), "stderr"), "oops\n");
    assert_string_equal(tg_result_error_code(tg_test_res(t, 2)), "TOOL_FAILED");
    assert_int_equal(tg_result_execution(tg_test_res(t, 2)),
                     TG_EXECUTION_NOT_STARTED);
    assert_string_equal(out_of(t, 3), "plain\n");
    assert_string_equal(decision(t, 3), "none");
    assert_string_equal(tg_result_error_code(tg_test_res(t, 4)), "TOOL_FAILED");
    assert_non_null(strstr(tg_result_error_message(tg_test_res(t, 4)),
                           "cannot change to directory"));
    assert_string_equal(out_of(t, 5), "1024\n0\n600\n");
    assert_string_equal(out_of(t, 6), "hello from ./hello.sh\n");
    for (size_t i = 0; i < 6; i++)
        if (i != 3)
            assert_string_equal(decision(t, i), bw_name);
    tg_turn_free(t);
    tg_runtime_free(rt);
}

/* Writes text to e->ws/rel. */
static void put_ws(const env *e, const char *rel, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", e->ws, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* The strings of a JSON array member of the doctor's toolgate_files,
 * joined by spaces. */
static const char *own_files(const char *doc, const char *key)
{
    static char buf[4096];
    json_t *d = json_loads(doc, 0, NULL); /* new ref */
    assert_non_null(d);
    json_t *a = json_object_get(json_object_get(d, "toolgate_files"),
                                key); /* borrowed */
    assert_true(json_is_array(a));
    size_t i, n = 0;
    json_t *v; /* borrowed */
    buf[0] = '\0';
    json_array_foreach(a, i, v)
    {
        const char *s = json_is_string(v)
                            ? json_string_value(v)
                            : json_string_value(json_object_get(v, "name"));
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? " " : "", s);
    }
    json_decref(d);
    return buf;
}

/* toolgate's own files are out of a sandboxed tool's reach: the journal's
 * directory (nested, so the directory above it is pinned) and the spool are
 * empty and read-only inside, none of them nor what leads to them can be
 * renamed or removed, the configuration file (loaded from the workspace)
 * is masked, and the rest of the workspace stays the tool's. */
static void own_files_hidden(void **state)
{
    NEED_BWRAP();
    env *e = *state;
    char text[4 * PATH_MAX], cfgpath[PATH_MAX];
    snprintf(text, sizeof text,
             "{\"workspace\": \".\", \"journal\": \"a/.tg/j.db\", "
             "\"spool\": {\"dir\": \"spool\"}, \"builtin_tools\": "
             "[\"shell\"]}\n");
    put_ws(e, "toolgate.json", text);
    snprintf(cfgpath, sizeof cfgpath, "%s/a", e->ws);
    assert_int_equal(mkdir(cfgpath, 0755), 0);
    put_ws(e, "a/user.txt", "the user's\n");
    snprintf(cfgpath, sizeof cfgpath, "%s/toolgate.json", e->ws);
    tg_config *cfg = tg_config_new();
    tg_error err = {0};
    assert_int_equal(tg_config_load_file(cfg, cfgpath, &err), 0);
    tg_runtime *rt = NULL;
    assert_int_equal(tg_runtime_new(cfg, &rt, &err), 0);
    tg_config_free(cfg);
    tg_runtime_set_approve(rt, 1);
    tg_turn *t = tg__turn_new("toolgate");
    add_shell(t, "j1",
              "ls -A a/.tg spool | grep -c . ; cat a/.tg/j.db || echo no-j; "
              "cat toolgate.json || echo no-read-config; "
              "echo junk >> a/.tg/j.db || echo no-write; "
              "echo ok > a/.tg/other || echo no-beside; "
              "echo ok > spool/other || echo no-spool; "
              "echo x > toolgate.json || echo no-config; "
              "mv a/.tg a/.tg2 || echo no-move; mv a b || echo no-move-up; "
              "mv spool s2 || echo no-move-spool; "
              "rm -rf a/.tg spool toolgate.json 2>/dev/null || echo no-rm; "
              "echo more >> a/user.txt && echo user-writable");
    tg_test_run(rt, t);
    /* ls prints the two names of what it lists, nothing in them */
    assert_string_equal(out_of(t, 0), "2\nno-j\nno-read-config\nno-write\n"
                                      "no-beside\nno-spool\n"
                                      "no-config\nno-move\nno-move-up\n"
                                      "no-move-spool\nno-rm\nuser-writable\n");
    tg_turn_free(t);
    char jpath[PATH_MAX + 16];
    struct stat st;
    snprintf(jpath, sizeof jpath, "%s/a/.tg/j.db", e->ws);
    assert_int_equal(stat(jpath, &st), 0);
    assert_true(st.st_size > 0);
    assert_int_equal(stat(cfgpath, &st), 0);
    assert_int_equal(st.st_size, (off_t)strlen(text));
    char *doc = NULL;
    assert_int_equal(tg_runtime_doctor(rt, 1, &doc, &err), 0);
    char want[4 * PATH_MAX];
    snprintf(want, sizeof want, "%s/a/.tg %s/spool %s/.toolgate", e->ws, e->ws,
             e->ws);
    assert_string_equal(own_files(doc, "hidden"), want);
    snprintf(want, sizeof want, "%s/a", e->ws);
    assert_string_equal(own_files(doc, "pinned"), want);
    assert_string_equal(own_files(doc, "masked"), cfgpath);
    assert_string_equal(own_files(doc, "exposed_to"), "");
    tg_free(doc);
    tg_runtime_free(rt);
}

/* Where toolgate's files cannot be kept from tools the runtime does not
 * start, naming the file: a journal directly in the workspace, a spool that
 * is the workspace or holds it, a path through a symlink in the workspace.
 * Tools outside the sandbox are named by the doctor. */
static void own_files_placement(void **state)
{
    env *e = *state;
    static const struct {
        const char *members;
        const char *message;
    } bad[] = {
        {"\"journal\": \"ws/j.db\"", "lies directly in the workspace"},
        {"\"journal\": \"ws/sub/../j.db\"", "lies directly in the workspace"},
        {"\"spool\": {\"dir\": \"ws\"}", "is the workspace"},
        {"\"spool\": {\"dir\": \".\"}", "or holds it"},
        {"\"journal\": \"ws/link/j.db\"", "through the symbolic link"},
        {"\"spool\": {\"dir\": \"ws/link/x\"}", "through the symbolic link"},
    };
    char sub[PATH_MAX], link[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/sub", e->ws);
    snprintf(link, sizeof link, "%s/link", e->ws);
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_int_equal(symlink("sub", link), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"workspace\": \"ws\", \"builtin_tools\": [], %s}",
                 bad[i].members);
        tg_config *cfg = tg_test_config(text, e->dir);
        tg_runtime *rt = NULL;
        tg_error err = {0};
        assert_int_equal(tg_runtime_new(cfg, &rt, &err), TG_ECONFIG);
        assert_null(rt);
        if (strstr(err.message, bad[i].message) == NULL)
            fail_msg("%s: '%s' not in '%s'", bad[i].members, bad[i].message,
                     err.message);
        tg_config_free(cfg);
    }
    /* A symlink outside the workspace is the operator's: followed. */
    char out[PATH_MAX], text[2048];
    snprintf(out, sizeof out, "%s/outside", e->dir);
    assert_int_equal(mkdir(out, 0755), 0);
    snprintf(link, sizeof link, "%s/outlink", e->dir);
    assert_int_equal(symlink("outside", link), 0);
    snprintf(text, sizeof text,
             "{\"workspace\": \"ws\", \"journal\": \"outlink/j.db\", "
             "\"builtin_tools\": [\"shell\"], \"tools\": [{\"name\": \"raw\", "
             "\"command\": [\"/bin/true\"], \"sandbox\": false}]}");
    tg_runtime *rt = tg_test_runtime_of(tg_test_config(text, e->dir));
    char *doc = NULL;
    tg_error err = {0};
    assert_int_equal(tg_runtime_doctor(rt, 1, &doc, &err), 0);
    assert_string_equal(own_files(doc, "exposed_to"), "raw");
    tg_free(doc);
    assert_int_equal(tg_runtime_doctor(rt, 0, &doc, &err), 0);
    assert_non_null(strstr(doc, "raw (none): outside the sandbox, each could "
                                "change, move or remove the journal"));
    tg_free(doc);
    tg_runtime_free(rt);
    snprintf(out, sizeof out, "%s/outside/j.db", e->dir);
    struct stat st;
    assert_int_equal(stat(out, &st), 0);
    /* With the journal and the spool off the workspace's .toolgate is made
     * all the same (no tool can prepare one for a later run). */
    snprintf(out, sizeof out, "%s/ws2", e->dir);
    assert_int_equal(mkdir(out, 0755), 0);
    rt = tg_test_runtime_of(tg_test_config(
        "{\"workspace\": \"ws2\", \"journal\": null, \"spool\": null}",
        e->dir));
    tg_runtime_free(rt);
    snprintf(out, sizeof out, "%s/ws2/.toolgate", e->dir);
    assert_int_equal(lstat(out, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0700);
}

/* ------------------------------------------------------- fallbacks */

static void mode_off_and_no_bwrap(void **state)
{
    env *e = *state;
    setenv("TG_SBX_API_KEY", "canary-3", 1);
    /* mode "off": no bubblewrap, still the limits and the allowlist */
    tg_runtime *rt = make_rt(e,
                             "\"builtin_tools\": [\"shell\"], \"sandbox\": "
                             "{\"mode\": \"off\"}",
                             "");
    assert_null(tg_runtime_warning(rt));
    tg_turn *t = tg__turn_new("toolgate");
    add_shell(t, "o1", "echo \"[$TG_SBX_API_KEY]\"; ulimit -n; echo $$");
    tg_test_run(rt, t);
    const char *o = out_of(t, 0);
    assert_int_equal(strncmp(o, "[]\n1024\n", 8), 0);
    /* not PID 3 of a namespace of its own */
    assert_true(strtol(o + 8, NULL, 10) > 3);
    assert_string_equal(decision(t, 0), "rlimits");
    tg_turn_free(t);
    char *doc = NULL;
    tg_error err = {0};
    assert_int_equal(tg_runtime_doctor(rt, 1, &doc, &err), 0);
    json_t *d = json_loads(doc, 0, NULL); /* new ref */
    assert_non_null(d);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(d, "sandbox"), "in_force")),
                        "rlimits");
    /* the secret's name is reported withheld, its value nowhere */
    assert_non_null(strstr(doc, "\"TG_SBX_API_KEY\""));
    assert_null(strstr(doc, "canary-3"));
    json_decref(d);
    tg_free(doc);
    tg_runtime_free(rt);

    /* auto without a working bubblewrap: said once, rlimits in force */
    rt = make_rt(e,
                 "\"builtin_tools\": [\"shell\"], \"sandbox\": {\"bwrap\": "
                 "\"/nonexistent/bwrap\"}",
                 "");
    const char *w = tg_runtime_warning(rt);
    assert_non_null(w);
    assert_non_null(strstr(w, "the sandbox is NOT in force"));
    assert_non_null(strstr(w, "/nonexistent/bwrap"));
    t = tg__turn_new("toolgate");
    add_shell(t, "a1", "echo \"[$TG_SBX_API_KEY]\"");
    tg_test_run(rt, t);
    assert_string_equal(out_of(t, 0), "[]\n");
    assert_string_equal(decision(t, 0), "rlimits");
    tg_turn_free(t);
    assert_int_equal(tg_runtime_doctor(rt, 0, &doc, &err), 0);
    assert_non_null(strstr(doc, "NOT IN USE: /nonexistent/bwrap"));
    tg_free(doc);
    tg_runtime_free(rt);
    unsetenv("TG_SBX_API_KEY");

    /* mode "bubblewrap" where it cannot run: the runtime does not start */
    tg_config *cfg = make_cfg(e,
                              "\"builtin_tools\": [\"shell\"], \"sandbox\": "
                              "{\"mode\": \"bubblewrap\", \"bwrap\": "
                              "\"/bin/false\"}",
                              "");
    rt = NULL;
    assert_int_equal(tg_runtime_new(cfg, &rt, &err), TG_ECONFIG);
    assert_null(rt);
    assert_non_null(strstr(err.message, "sandbox.mode is \"bubblewrap\""));
    assert_string_equal(err.pointer, "/sandbox/mode");
    tg_config_free(cfg);
}

static void doctor_and_shell_tool(void **state)
{
    NEED_BWRAP();
    env *e = *state;
    tg_runtime *rt = make_rt(e, "\"builtin_tools\": [\"shell\"]", ARGV_TOOL);
    assert_null(tg_runtime_warning(rt));
    char *doc = NULL;
    tg_error err = {0};
    assert_int_equal(tg_runtime_doctor(rt, 1, &doc, &err), 0);
    json_t *d = json_loads(doc, 0, NULL); /* new ref */
    assert_non_null(d);
    json_t *s = json_object_get(d, "sandbox"); /* borrowed */
    assert_string_equal(json_string_value(json_object_get(s, "in_force")),
                        bw_name);
    assert_true(json_is_true(
        json_object_get(json_object_get(s, "bubblewrap"), "works")));
    assert_int_equal(strncmp(json_string_value(json_object_get(
                                 json_object_get(s, "bubblewrap"), "version")),
                             "bubblewrap ", 11),
                     0);
    assert_true(json_is_true(json_object_get(s, "network_isolated")));
    assert_int_equal(json_array_size(json_object_get(d, "tools")), 2);
    json_decref(d);
    tg_free(doc);
    assert_int_equal(tg_runtime_doctor(rt, 0, &doc, &err), 0);
    assert_non_null(strstr(doc, "): working\n"));
    tg_free(doc);
    /* shell is a command tool with the annotations of a destructive one */
    char *tools = NULL;
    assert_int_equal(tg_runtime_tools(rt, "mcp", &tools, &err), 0);
    json_t *l = json_loads(tools, 0, NULL);                      /* new ref */
    json_t *sh = json_array_get(json_object_get(l, "tools"), 1); /* borrowed */
    assert_string_equal(json_string_value(json_object_get(sh, "name")),
                        "shell");
    assert_true(json_is_true(json_object_get(json_object_get(sh, "annotations"),
                                             "destructiveHint")));
    json_decref(l);
    tg_free(tools);
    const tg__tool *tool = tg__registry_find(rt->reg, "shell");
    assert_non_null(tool);
    assert_int_equal(tool->kind, TG_TOOL_KIND_COMMAND);
    assert_string_equal(json_string_value(json_array_get(tool->argv, 0)),
                        "/bin/bash");
    tg_runtime_free(rt);
}

/* An npm-installed program under /tmp (where the sandbox mounts an empty
 * file system) is seen with its package tree: the outermost node_modules
 * above its real file, read-only; a program elsewhere under /tmp alone. */
static void npm_program_tree(void **state)
{
    (void)state;
    char dir[] = "/tmp/tg_sbx_npm_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char pkg[PATH_MAX], bin[PATH_MAX], js[PATH_MAX], link[PATH_MAX],
        lone[PATH_MAX], nm[PATH_MAX];
    snprintf(nm, sizeof nm, "%s/node_modules", dir);
    snprintf(pkg, sizeof pkg, "%s/node_modules/pkg", dir);
    snprintf(bin, sizeof bin, "%s/node_modules/.bin", dir);
    snprintf(js, sizeof js, "%s/node_modules/pkg/main.js", dir);
    snprintf(link, sizeof link, "%s/node_modules/.bin/tool", dir);
    snprintf(lone, sizeof lone, "%s/lone", dir);
    assert_int_equal(mkdir(nm, 0700), 0);
    assert_int_equal(mkdir(pkg, 0700), 0);
    assert_int_equal(mkdir(bin, 0700), 0);
    FILE *f = fopen(js, "w");
    assert_non_null(f);
    fclose(f);
    f = fopen(lone, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(symlink("../pkg/main.js", link), 0);
    static tg__sandbox sb;
    snprintf(sb.bwrap, sizeof sb.bwrap, "/usr/bin/bwrap");
    tg_config cfg = {.workspace = (char *)"/srv/ws"};
    char *const argv[] = {link, NULL};
    char **a = tg__sandbox_argv(&sb, &cfg, NULL, "/srv/ws", link, argv);
    assert_non_null(a);
    int tree = 0, self = 0;
    for (size_t i = 0; a[i] != NULL; i++)
        if (strcmp(a[i], "--ro-bind-try") == 0 && a[i + 1] != NULL) {
            tree += strcmp(a[i + 1], nm) == 0;
            self += strcmp(a[i + 1], link) == 0;
        }
    assert_int_equal(tree, 1);
    assert_int_equal(self, 1);
    free(a);
    char *const argv2[] = {lone, NULL};
    a = tg__sandbox_argv(&sb, &cfg, NULL, "/srv/ws", lone, argv2);
    assert_non_null(a);
    tree = self = 0;
    for (size_t i = 0; a[i] != NULL; i++)
        if (strcmp(a[i], "--ro-bind-try") == 0 && a[i + 1] != NULL) {
            tree += strstr(a[i + 1], "node_modules") != NULL;
            self += strcmp(a[i + 1], lone) == 0;
        }
    assert_int_equal(tree, 0);
    assert_int_equal(self, 1);
    free(a);
    unlink(link);
    unlink(js);
    unlink(lone);
    rmdir(bin);
    rmdir(pkg);
    rmdir(nm);
    rmdir(dir);
}

/* Warm sandboxes are one per profile: another caller gets its own, a tool
 * with the network its own; unused for sandbox.idle_ms they end; a call
 * whose cwd is outside the workspace runs cold. */
static void warm_profiles_and_idle(void **state)
{
    NEED_BWRAP();
    env *e = *state;
    /* Long enough that no sandbox idles out between the calls below, each
     * of which may start one (seconds on a loaded machine), scaled. */
    long idle_ms = 1500 * tg_test_time_scale();
    char cfg[160];
    snprintf(cfg, sizeof cfg,
             "\"builtin_tools\": [\"shell\"], \"sandbox\": {\"mode\": "
             "\"warm\", \"idle_ms\": %ld}",
             idle_ms);
    tg_runtime *rt =
        make_rt(e, cfg,
                "{\"name\": \"net\", \"command\": [\"/bin/echo\", \"net\"], "
                "\"network\": true}");
    tg__warm *w = rt->sandbox.warm;
    assert_non_null(w);
    assert_int_equal(tg__warm_count(w), 0);
    tg_turn *t = tg__turn_new("toolgate");
    add_shell(t, "a", "echo one");
    tg_test_run(rt, t);
    assert_string_equal(out_of(t, 0), "one\n");
    assert_string_equal(decision(t, 0), "bubblewrap-warm");
    assert_int_equal(tg__warm_count(w), 1);
    tg_turn_free(t);
    /* the same profile again: the same sandbox */
    t = tg__turn_new("toolgate");
    add_shell(t, "b", "echo two");
    tg_test_run(rt, t);
    assert_int_equal(tg__warm_count(w), 1);
    tg_turn_free(t);
    /* another caller, then the network: one sandbox each */
    t = tg__turn_new("toolgate");
    add_shell(t, "c", "echo three");
    assert_int_equal(tg_turn_set_caller(t, "someone-else", NULL), 0);
    tg_test_run(rt, t);
    assert_string_equal(out_of(t, 0), "three\n");
    assert_int_equal(tg__warm_count(w), 2);
    tg_turn_free(t);
    t = tg__turn_new("toolgate");
    tg_test_add(t, "n", "net", "{}");
    tg_test_run(rt, t);
    assert_string_equal(out_of(t, 0), "net\n");
    assert_int_equal(tg__warm_count(w), 3);
    tg_turn_free(t);
    /* idle for idle_ms: all end (waited for at most 30x that) */
    long waited = 0, bound = 30 * idle_ms;
    while (tg__warm_count(w) > 0 && waited < bound) {
        usleep(50 * 1000);
        waited += 50;
    }
    assert_int_equal(tg__warm_count(w), 0);
    /* and the next call starts one again */
    t = tg__turn_new("toolgate");
    add_shell(t, "d", "echo four");
    tg_test_run(rt, t);
    assert_string_equal(out_of(t, 0), "four\n");
    assert_int_equal(tg__warm_count(w), 1);
    tg_turn_free(t);
    tg_runtime_free(rt);
}

int main(void)
{
    const char *m = getenv("TG_SANDBOX_TEST_MODE");
    if (m != NULL && strcmp(m, "warm") == 0) {
        test_mode = TG__SANDBOX_WARM;
        bw_name = "bubblewrap-warm";
    }
    printf("sandbox mode: %s\n", bw_name);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(config_keys, setup, teardown),
        cmocka_unit_test(secret_names),
        cmocka_unit_test(npm_program_tree),
        cmocka_unit_test(tool_env),
        cmocka_unit_test(limits_and_kept_fds),
        cmocka_unit_test_setup_teardown(argv_stays_literal, setup, teardown),
        cmocka_unit_test_setup_teardown(files_outside_are_read_only, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(no_network_unless_asked, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(secrets_stay_out, setup, teardown),
        cmocka_unit_test_setup_teardown(deadline_reaches_inside, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(fork_bomb_ends_at_the_limit, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(exits_and_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(own_files_hidden, setup, teardown),
        cmocka_unit_test_setup_teardown(own_files_placement, setup, teardown),
        cmocka_unit_test_setup_teardown(mode_off_and_no_bwrap, setup, teardown),
        cmocka_unit_test_setup_teardown(doctor_and_shell_tool, setup, teardown),
        cmocka_unit_test_setup_teardown(warm_profiles_and_idle, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
