/* SPDX-License-Identifier: MIT */
/*
 * test_hooks.c - before and after hooks (src/exec/hooks.c) with real hook
 * scripts written to a temporary directory and run as real subprocesses:
 * allow, deny, cancel, a valid and an invalid rewrite of the arguments, a
 * chain of hooks, a crash, a non-zero exit, a timeout (sleep 90 under a
 * short deadline ends fast, its group killed), nonsense answers, a flood
 * of output, redaction and failure of after hooks, cancellation while a
 * hook runs, and what a hook gets on stdin. Every decision must be in the
 * result's `decisions`.
 *
 * Time: bounds are tg_test_ms() (scaled by TG_TEST_TIME_SCALE); a hook
 * deadline that a working hook must beat is sized from what one call with
 * a hook costs here and now (hook_cost_ms, measured first); where a test
 * shows that something ends early, the deadline it would otherwise hit is
 * 60 s; cancellations wait until the hooks they stop are running.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "record.h"
#include "runtime.h"
#include "tg_test_exec.h"
#include "toolgate.h"
#include "turn.h"

/* ------------------------------------------------------------ harness */

typedef struct env {
    char dir[PATH_MAX]; /* first: tg_test_dir_setup makes it */
} env;

static int setup(void **state)
{
    return tg_test_dir_setup(state, sizeof(env), "tg_hooks_");
}

static int teardown(void **state)
{
    return tg_test_dir_teardown(state);
}

/* Writes an executable shell script e->dir/name with the given body. */
static void script(const env *e, const char *name, const char *body)
{
    assert_int_equal(tg_test_write_script(e->dir, name, body), 0);
}

/* A file of e->dir as a string (caller frees), NULL when absent. */
static char *slurp(const env *e, const char *name)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", e->dir, name);
    return tg_test_read_file(path, NULL);
}

#define ECHO_TOOL                                                              \
    "{\"name\": \"echo\", \"command\": [\"/bin/echo\", \"-n\", \"{text}\"],"   \
    " \"input_schema\": {\"type\": \"object\", \"properties\": {\"text\": "    \
    "{\"type\": \"string\", \"maxLength\": 40}}, \"required\": [\"text\"]}}"
/* A tool that fails with its secret on stderr (EXIT_STATUS). */
#define FAIL_TOOL                                                              \
    "{\"name\": \"fail\", \"command\": [\"/bin/sh\", \"-c\", "                 \
    "\"echo SECRET 42 >&2; exit 2\"]}"

/* A tool that prints its secret and hangs past its deadline: the timeout
 * carries what it printed. */
#define HANG_TOOL                                                              \
    "{\"name\": \"hang\", \"command\": [\"/bin/sh\", \"-c\", "                 \
    "\"echo SECRET 42; exec sleep 30\"], \"timeout_ms\": 1000}"

/* The echo tool plus the given "hooks" object (JSON text, or NULL). */
static tg_runtime *make_rt(const env *e, const char *limits, const char *hooks)
{
    char text[8192];
    snprintf(text, sizeof text,
             "{\"workspace\": \"%s\", \"journal\": null, \"builtin_tools\": "
             "[], \"limits\": {%s}, \"tools\": [" ECHO_TOOL ", " FAIL_TOOL
             ", " HANG_TOOL "]%s%s}",
             e->dir, limits ? limits : "", hooks ? ", \"hooks\": " : "",
             hooks ? hooks : "");
    return tg_test_runtime(text, e->dir);
}

/* The result's payload (a new reference). */
static json_t *payload(const tg_turn *t, size_t i)
{
    json_t *p = json_loads(tg_result_payload_json(tg_test_res(t, i)), 0, NULL);
    assert_non_null(p);
    return p;
}

static void expect_outcome(const tg_turn *t, size_t i, tg_outcome o)
{
    const tg_result *r = tg_test_res(t, i);
    if (tg_result_outcome(r) != o)
        fail_msg("call %zu: %s, expected %s: %s", i,
                 tg_outcome_name(tg_result_outcome(r)), tg_outcome_name(o),
                 tg_result_payload_json(r));
}

/* The denied reason (or the canceled reason) of call i, borrowed from p. */
static const char *why(json_t *p)
{
    json_t *d = json_object_get(p, "denied");
    if (d == NULL)
        d = json_object_get(p, "canceled");
    const char *s = json_string_value(json_object_get(d, "reason"));
    assert_non_null(s);
    return s;
}

static void expect_contains(const char *hay, const char *needle)
{
    if (hay == NULL || strstr(hay, needle) == NULL)
        fail_msg("'%s' not in '%s'", needle, hay ? hay : "(null)");
}

/* decisions.hooks[k] of result i (borrowed from the result). */
static const json_t *hook_entry(const tg_turn *t, size_t i, size_t k)
{
    const tg_result *r = tg_test_res(t, i);
    json_t *list = json_object_get(r->decisions, "hooks");
    if (!json_is_array(list) || k >= json_array_size(list))
        fail_msg("call %zu has no hook decision %zu", i, k);
    return json_array_get(list, k);
}

static size_t hook_count(const tg_turn *t, size_t i)
{
    const tg_result *r = tg_test_res(t, i);
    return json_array_size(json_object_get(r->decisions, "hooks"));
}

static const char *entry_str(const json_t *e, const char *key)
{
    return json_string_value(json_object_get(e, key));
}

/* One echo call with `args` in a runtime with the "hooks" object `hooks`;
 * fails unless the turn ends within max_ms (callers pass a scaled bound).
 * The turn, run; its runtime in *rt. */
static tg_turn *run_echo(const env *e, const char *hooks, const char *args,
                         double max_ms, tg_runtime **rt)
{
    *rt = make_rt(e, "", hooks);
    tg_turn *t = tg__turn_new("toolgate");
    tg_test_add(t, "c", "echo", args);
    double t0 = tg_test_now_ms();
    tg_test_run(*rt, t);
    double took = tg_test_now_ms() - t0;
    if (took >= max_ms)
        fail_msg("the turn took %.0f ms, not under %.0f", took, max_ms);
    return t;
}

/* What one echo call through a before hook costs here and now, in ms.
 * Hook deadlines that a working hook must beat are sized from it. */
static long hook_cost_ms(const env *e)
{
    script(e, "cost", "cat >/dev/null; echo '{\"decision\":\"allow\"}'");
    tg_runtime *rt = make_rt(e, "", "{\"before\": [[\"./cost\"]]}");
    long cost = tg_test_call_cost_ms(rt, "echo", "{\"text\":\"x\"}",
                                     "one call through a hook");
    tg_runtime_free(rt);
    return cost;
}

/* A hook deadline a working hook beats with room: 5x a call through a
 * hook, at least a scaled `floor` ms. */
static long hook_budget(const env *e, long floor)
{
    long b = 5 * hook_cost_ms(e);
    return b > tg_test_ms(floor) ? b : tg_test_ms(floor);
}

/* msg names the `stage` hook ./name and says `needle`. */
static void expect_hook_said(const char *msg, const char *stage,
                             const char *name, const char *needle)
{
    char head[96];
    snprintf(head, sizeof head, "%s hook './%s' ", stage, name);
    expect_contains(msg, head);
    expect_contains(msg, needle);
}

/* ------------------------------------------------------------ before */

static void test_allow_deny_cancel(void **state)
{
    env *e = *state;
    script(e, "allow", "cat >/dev/null; echo '{\"decision\":\"allow\"}'");
    script(e, "deny_said",
           "cat >/dev/null\n"
           "echo '{\"decision\":\"deny\",\"reason\":\"no echo today\"}'");
    /* Decides by the tool's argument: the hook reads the call record. */
    script(e, "judge",
           "in=$(cat)\n"
           "case \"$in\" in\n"
           "  *'\"text\":\"bad\"'*) echo '{\"decision\":\"deny\","
           "\"reason\":\"bad text\"}' ;;\n"
           "  *'\"text\":\"stop\"'*) echo '{\"decision\":\"cancel\","
           "\"reason\":\"stopped by the judge\"}' ;;\n"
           "  *) echo '{\"decision\":\"allow\",\"reason\":\"fine\"}' ;;\n"
           "esac");
    tg_runtime *rt =
        make_rt(e, "", "{\"before\": [[\"./allow\"], [\"./judge\"]]}");
    tg_turn *t = tg__turn_new("toolgate");
    tg_test_add(t, "ok", "echo", "{\"text\":\"good\"}");
    tg_test_add(t, "no", "echo", "{\"text\":\"bad\"}");
    tg_test_add(t, "halt", "echo", "{\"text\":\"stop\"}");
    tg_test_add(t, "schema", "echo", "{\"text\":5}"); /* refused before hooks */
    tg_test_run(rt, t);

    expect_outcome(t, 0, TG_OUTCOME_SUCCESS);
    assert_string_equal(tg_result_payload_json(tg_test_res(t, 0)), "\"good\"");
    assert_int_equal(hook_count(t, 0), 2);
    const json_t *h = hook_entry(t, 0, 0);
    assert_string_equal(entry_str(h, "hook"), "./allow");
    assert_string_equal(entry_str(h, "stage"), "before");
    assert_string_equal(entry_str(h, "decision"), "allow");
    expect_contains(entry_str(h, "reason"), "allowed by before hook");
    assert_null(json_object_get(h, "failed"));
    h = hook_entry(t, 0, 1);
    assert_string_equal(entry_str(h, "hook"), "./judge");
    assert_string_equal(entry_str(h, "reason"), "fine");

    expect_outcome(t, 1, TG_OUTCOME_DENIED);
    json_t *p = payload(t, 1);
    assert_string_equal(why(p), "bad text");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(p, "denied"), "tool")),
                        "echo");
    json_decref(p);
    assert_int_equal(tg_result_execution(tg_test_res(t, 1)),
                     TG_EXECUTION_NOT_STARTED);
    assert_string_equal(entry_str(hook_entry(t, 1, 1), "decision"), "deny");

    expect_outcome(t, 2, TG_OUTCOME_CANCELED);
    p = payload(t, 2);
    assert_string_equal(why(p), "stopped by the judge");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(p, "canceled"), "by")),
                        "policy");
    json_decref(p);
    assert_int_equal(tg_result_execution(tg_test_res(t, 2)),
                     TG_EXECUTION_NOT_STARTED);
    assert_string_equal(entry_str(hook_entry(t, 2, 1), "decision"), "cancel");

    /* The checks come first: a call they refuse meets no hook. */
    expect_outcome(t, 3, TG_OUTCOME_ERROR);
    assert_string_equal(tg_result_error_code(tg_test_res(t, 3)),
                        "INVALID_ARGUMENTS");
    assert_int_equal(hook_count(t, 3), 0);
    tg_turn_free(t);
    tg_runtime_free(rt);

    /* The first deny ends the chain: the hook after it never runs. */
    script(e, "mark", "touch marked; echo '{\"decision\":\"allow\"}'");
    rt = make_rt(e, "", "{\"before\": [[\"./deny_said\"], [\"./mark\"]]}");
    t = tg__turn_new("toolgate");
    tg_test_add(t, "a", "echo", "{\"text\":\"x\"}");
    tg_test_run(rt, t);
    expect_outcome(t, 0, TG_OUTCOME_DENIED);
    p = payload(t, 0);
    assert_string_equal(why(p), "no echo today");
    json_decref(p);
    assert_int_equal(hook_count(t, 0), 1);
    char *marked = slurp(e, "marked");
    assert_null(marked);
    tg_turn_free(t);
    tg_runtime_free(rt);
}

static void test_input_and_environment(void **state)
{
    env *e = *state;
    script(e, "spy",
           "cat >\"before.json\"; echo \"$TOOLGATE_HOOK_STAGE $(pwd)\" "
           ">before.env\necho '{\"decision\":\"allow\"}'");
    script(e, "aspy",
           "cat >\"after.json\"; echo \"$TOOLGATE_HOOK_STAGE\" >after.env");
    tg_runtime *rt = make_rt(
        e, "", "{\"before\": [[\"./spy\"]], \"after\": [[\"./aspy\"]]}");
    tg_turn *t = tg__turn_new("toolgate");
    tg_test_add(t, "c1", "echo", "{\"text\":\"hi\"}");
    tg_test_run(rt, t);
    expect_outcome(t, 0, TG_OUTCOME_SUCCESS);
    assert_string_equal(tg_result_payload_json(tg_test_res(t, 0)), "\"hi\"");

    char *in = slurp(e, "before.json");
    assert_non_null(in);
    json_t *call = json_loads(in, 0, NULL);
    assert_non_null(call);
    assert_string_equal(entry_str(call, "id"), "c1");
    assert_string_equal(entry_str(call, "tool"), "echo");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(call, "args"), "text")),
                        "hi");
    expect_contains(entry_str(call, "checksum"), "sha256:");
    json_decref(call);
    free(in);
    char *envs = slurp(e, "before.env");
    char expect[PATH_MAX + 32];
    snprintf(expect, sizeof expect, "before %s\n", e->dir);
    assert_string_equal(envs, expect);
    free(envs);

    in = slurp(e, "after.json");
    assert_non_null(in);
    json_t *doc = json_loads(in, 0, NULL);
    assert_non_null(doc);
    assert_string_equal(entry_str(json_object_get(doc, "call"), "id"), "c1");
    json_t *r = json_object_get(doc, "result");
    assert_string_equal(entry_str(r, "outcome"), "success");
    assert_string_equal(entry_str(r, "payload"), "hi");
    json_decref(doc);
    free(in);
    envs = slurp(e, "after.env");
    assert_string_equal(envs, "after\n");
    free(envs);
    /* An after hook that says nothing keeps the result. */
    assert_int_equal(hook_count(t, 0), 2);
    assert_string_equal(entry_str(hook_entry(t, 0, 1), "decision"), "keep");
    assert_string_equal(entry_str(hook_entry(t, 0, 1), "stage"), "after");
    tg_turn_free(t);
    tg_runtime_free(rt);
}

static void test_rewrite(void **state)
{
    env *e = *state;
    script(e, "rewrite",
           "cat >/dev/null; echo '{\"decision\":\"allow\",\"reason\":"
           "\"softened\",\"args\":{\"text\":\"rewritten\"}}'");
    /* The second hook sees the call as the first left it. */
    script(e, "check",
           "if grep -q '\"text\":\"rewritten\"'; then echo "
           "'{\"decision\":\"allow\"}'; else echo '{\"decision\":\"deny\","
           "\"reason\":\"saw the old args\"}'; fi");
    script(e, "bad_rewrite",
           "cat >/dev/null; echo '{\"decision\":\"allow\",\"args\":"
           "{\"text\":5}}'");
    script(e, "long_rewrite",
           "cat >/dev/null; echo '{\"decision\":\"allow\",\"args\":"
           "{\"text\":\"0123456789012345678901234567890123456789X\"}}'");
    script(e, "args_array",
           "cat >/dev/null; echo '{\"decision\":\"allow\",\"args\":[1]}'");
    tg_runtime *rt =
        make_rt(e, "", "{\"before\": [[\"./rewrite\"], [\"./check\"]]}");
    tg_turn *t = tg__turn_new("toolgate");
    tg_test_add(t, "r", "echo", "{\"text\":\"rm -rf /\"}");
    const char *before = NULL;
    char sum0[TG_CHECKSUM_MAX];
    before = tg_call_checksum(tg_turn_call(t, 0));
    snprintf(sum0, sizeof sum0, "%s", before);
    tg_test_run(rt, t);
    expect_outcome(t, 0, TG_OUTCOME_SUCCESS);
    assert_string_equal(tg_result_payload_json(tg_test_res(t, 0)),
                        "\"rewritten\"");
    const tg_call *c = tg_turn_call(t, 0);
    assert_string_equal(tg_call_args_json(c), "{\"text\":\"rewritten\"}");
    /* Re-checksummed: the checksum is that of the new arguments. */
    assert_string_not_equal(tg_call_checksum(c), sum0);
    tg_call *fresh = tg__call_new("x", "echo", "toolgate");
    const char *fresh_args = "{\"text\":\"rewritten\"}";
    assert_int_equal(
        tg__call_set_args_text(fresh, fresh_args, strlen(fresh_args)), 0);
    assert_string_equal(tg_call_checksum(c), tg_call_checksum(fresh));
    tg__call_free(fresh);
    const json_t *h = hook_entry(t, 0, 0);
    assert_true(json_is_true(json_object_get(h, "rewrote")));
    assert_string_equal(entry_str(h, "previous_checksum"), sum0);
    assert_string_equal(entry_str(h, "reason"), "softened");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(h, "args"), "text")),
        "rewritten");
    assert_string_equal(entry_str(hook_entry(t, 0, 1), "decision"), "allow");
    tg_turn_free(t);
    tg_runtime_free(rt);

    /* Rewrites the schema refuses, or that are not objects, deny, and the
     * call keeps what the model sent. */
    const char *bad[] = {"./bad_rewrite", "./long_rewrite", "./args_array"};
    const char *needle[] = {"schema of tool 'echo'", "at most 40 characters",
                            "\"args\" that are not an object"};
    for (size_t i = 0; i < 3; i++) {
        char hooks[256];
        snprintf(hooks, sizeof hooks, "{\"before\": [[\"%s\"]]}", bad[i]);
        rt = make_rt(e, "", hooks);
        t = tg__turn_new("toolgate");
        tg_test_add(t, "b", "echo", "{\"text\":\"orig\"}");
        tg_test_run(rt, t);
        expect_outcome(t, 0, TG_OUTCOME_DENIED);
        json_t *p = payload(t, 0);
        char name[64];
        snprintf(name, sizeof name, "before hook '%s'", bad[i]);
        expect_contains(why(p), name);
        expect_contains(why(p), needle[i]);
        json_decref(p);
        assert_string_equal(tg_call_args_json(tg_turn_call(t, 0)),
                            "{\"text\":\"orig\"}");
        h = hook_entry(t, 0, 0);
        assert_string_equal(entry_str(h, "decision"), "deny");
        assert_true(json_is_true(json_object_get(h, "failed")));
        tg_turn_free(t);
        tg_runtime_free(rt);
    }
}

/* A hook that answers without reading a large input (the pipe fills, the
 * write fails with EPIPE) is judged by its answer; SIGPIPE never reaches
 * the process. */
static void test_unread_input(void **state)
{
    env *e = *state;
    script(e, "quick", "echo '{\"decision\":\"deny\",\"reason\":\"quick\"}'");
    script(e, "aquick",
           "echo '{\"payload\":{\"error\":{\"message\":\"short\","
           "\"code\":\"X\"}}}'");
    char *args = tg_test_fill("{\"pad\":\"", 'x', 300000, "\"}");
    assert_non_null(args);
    for (int stage = 0; stage < 2; stage++) {
        tg_runtime *rt = make_rt(e, "",
                                 stage == 0 ? "{\"before\": [[\"./quick\"]]}"
                                            : "{\"after\": [[\"./aquick\"]]}");
        tg_turn *t = tg__turn_new("toolgate");
        tg_test_add(t, "big", "fail", args);
        tg_test_run(rt, t);
        if (stage == 0) {
            expect_outcome(t, 0, TG_OUTCOME_DENIED);
            json_t *p = payload(t, 0);
            assert_string_equal(why(p), "quick");
            json_decref(p);
        } else {
            expect_outcome(t, 0, TG_OUTCOME_ERROR);
            assert_string_equal(tg_result_error_message(tg_test_res(t, 0)),
                                "short");
        }
        tg_turn_free(t);
        tg_runtime_free(rt);
    }
    free(args);
}

/* A before hook that misbehaves denies, and the reason says how. */
static void test_failures_deny(void **state)
{
    env *e = *state;
    static const struct {
        const char *name, *body, *needle;
    } cases[] = {
        {"crash", "kill -SEGV $$", "killed by signal 11 (SIGSEGV)"},
        {"exit3", "echo 'no database' >&2; exit 3",
         "exited with status 3: no database"},
        {"prose", "echo 'sure, go ahead'", "answered what is not JSON"},
        {"array", "echo '[\"allow\"]'", "JSON that is not an object"},
        {"maybe", "echo '{\"decision\":\"maybe\"}'",
         "unknown decision 'maybe'"},
        {"nodecision", "echo '{\"reason\":\"x\"}'", "no \"decision\""},
        {"silent", "cat >/dev/null", "answered nothing"},
        {"badreason", "echo '{\"decision\":\"allow\",\"reason\":7}'",
         "\"reason\" that is not a string"},
        {"twice", "echo '{\"decision\":\"allow\",\"decision\":\"deny\"}'",
         "not JSON"},
        {"flood", "yes '{\"decision\":\"allow\"}'", "answered more than"},
        {"missing/hook", "", "could not start"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].body[0] != '\0')
            script(e, cases[i].name, cases[i].body);
        /* A 60 s deadline: a hook that hung would show in the bound. */
        char hooks[256];
        snprintf(hooks, sizeof hooks,
                 "{\"timeout_ms\": 60000, \"before\": [[\"./%s\"]]}",
                 cases[i].name);
        tg_runtime *rt;
        tg_turn *t = run_echo(e, hooks, "{\"text\":\"x\"}",
                              (double)tg_test_ms(10000), &rt);
        expect_outcome(t, 0, TG_OUTCOME_DENIED);
        json_t *p = payload(t, 0);
        expect_hook_said(why(p), "before", cases[i].name, cases[i].needle);
        json_decref(p);
        const json_t *h = hook_entry(t, 0, 0);
        assert_true(json_is_true(json_object_get(h, "failed")));
        assert_string_equal(entry_str(h, "decision"), "deny");
        tg_turn_free(t);
        tg_runtime_free(rt);
    }
}

static void test_timeout_kills_group(void **state)
{
    env *e = *state;
    /* The hook's child records its pid and sleeps 90 s; the hook's own
     * deadline must find the pid written. */
    long budget = hook_budget(e, 200);
    script(e, "slow", "sleep 90 & echo $! >slow.pid; wait");
    char hooks[256], said[96];
    snprintf(hooks, sizeof hooks,
             "{\"timeout_ms\": 60000, \"before\": "
             "[{\"command\": [\"./slow\"], \"timeout_ms\": %ld}]}",
             budget);
    tg_runtime *rt;
    tg_turn *t = run_echo(e, hooks, "{\"text\":\"x\"}",
                          (double)(budget + tg_test_ms(5000)), &rt);
    expect_outcome(t, 0, TG_OUTCOME_DENIED);
    json_t *p = payload(t, 0);
    snprintf(said, sizeof said, "before hook './slow' timed out after %ld ms",
             budget);
    expect_contains(why(p), said);
    json_decref(p);
    char *pidtext = slurp(e, "slow.pid");
    assert_non_null(pidtext);
    long pid = strtol(pidtext, NULL, 10);
    free(pidtext);
    assert_true(pid > 1);
    assert_true(tg_test_dead_within(pid, tg_test_ms(1000)));
    tg_turn_free(t);
    tg_runtime_free(rt);
}

/* ------------------------------------------------------------ after */

static void test_after_redaction(void **state)
{
    env *e = *state;
    script(e, "redact",
           "if grep -q SECRET; then echo '{\"payload\":\"[redacted]\","
           "\"reason\":\"a secret\"}'; else echo '{}'; fi");
    script(e, "fix_error",
           "cat >/dev/null; echo '{\"payload\":{\"error\":{\"message\":"
           "\"hidden\",\"code\":\"EXIT_STATUS\"}}}'");
    tg_runtime *rt = make_rt(e, "", "{\"after\": [[\"./redact\"]]}");
    tg_turn *t = tg__turn_new("toolgate");
    tg_test_add(t, "s", "echo", "{\"text\":\"the SECRET is 42\"}");
    tg_test_add(t, "p", "echo", "{\"text\":\"public\"}");
    tg_test_run(rt, t);
    expect_outcome(t, 0, TG_OUTCOME_SUCCESS);
    assert_string_equal(tg_result_payload_json(tg_test_res(t, 0)),
                        "\"[redacted]\"");
    assert_int_equal(tg_result_exit_status(tg_test_res(t, 0)), 0);
    assert_int_equal(tg_result_execution(tg_test_res(t, 0)),
                     TG_EXECUTION_FINISHED);
    const json_t *h = hook_entry(t, 0, 0);
    assert_string_equal(entry_str(h, "decision"), "replace");
    assert_string_equal(entry_str(h, "stage"), "after");
    assert_string_equal(entry_str(h, "reason"), "a secret");
    char *all = tg_result_to_json(tg_test_res(t, 0));
    assert_null(strstr(all, "SECRET"));
    free(all);
    expect_outcome(t, 1, TG_OUTCOME_SUCCESS);
    assert_string_equal(tg_result_payload_json(tg_test_res(t, 1)),
                        "\"public\"");
    assert_string_equal(entry_str(hook_entry(t, 1, 0), "decision"), "keep");
    tg_turn_free(t);
    tg_runtime_free(rt);

    /* An error result's payload may be replaced by another error, and
     * only by one: anything else would break the payload convention. */
    rt = make_rt(e, "", "{\"after\": [[\"./fix_error\"]]}");
    tg_turn *t2 = tg__turn_new("toolgate");
    tg_test_add(t2, "x", "fail", "{}");
    tg_test_run(rt, t2);
    expect_outcome(t2, 0, TG_OUTCOME_ERROR);
    assert_string_equal(tg_result_error_message(tg_test_res(t2, 0)), "hidden");
    assert_int_equal(tg_result_exit_status(tg_test_res(t2, 0)), 2);
    tg_turn_free(t2);
    tg_runtime_free(rt);
    rt = make_rt(e, "", "{\"after\": [[\"./redact\"]]}");
    t2 = tg__turn_new("toolgate");
    tg_test_add(t2, "x", "fail", "{}");
    tg_test_run(rt, t2);
    expect_outcome(t2, 0, TG_OUTCOME_ERROR);
    assert_string_equal(tg_result_error_code(tg_test_res(t2, 0)),
                        "HOOK_FAILED");
    expect_contains(tg_result_error_message(tg_test_res(t2, 0)),
                    "not {\"error\":{\"message\",\"code\"}}");
    all = tg_result_to_json(tg_test_res(t2, 0));
    assert_null(strstr(all, "SECRET"));
    free(all);
    tg_turn_free(t2);
    tg_runtime_free(rt);
}

/* A timeout that carries what the command printed is reviewed too, and
 * its payload may be replaced only by another timeout payload. */
static void test_after_reviews_timeout_output(void **state)
{
    env *e = *state;
    script(e, "fix_timeout",
           "cat >/dev/null; echo '{\"payload\":{\"timeout\":{\"durationMs\""
           ":1000}},\"reason\":\"a secret\"}'");
    script(e, "redact",
           "if grep -q SECRET; then echo '{\"payload\":\"[redacted]\"}'; "
           "else echo '{}'; fi");
    const char *hooks[] = {"{\"after\": [[\"./fix_timeout\"]]}",
                           "{\"after\": [[\"./redact\"]]}"};
    for (size_t i = 0; i < 2; i++) {
        tg_runtime *rt = make_rt(e, "", hooks[i]);
        tg_turn *t = tg__turn_new("toolgate");
        tg_test_add(t, "h", "hang", "{}");
        tg_test_run(rt, t);
        const tg_result *r = tg_test_res(t, 0);
        const json_t *h = hook_entry(t, 0, 0);
        if (i == 0) {
            expect_outcome(t, 0, TG_OUTCOME_TIMEOUT);
            assert_string_equal(tg_result_payload_json(r),
                                "{\"timeout\":{\"durationMs\":1000}}");
            assert_string_equal(entry_str(h, "decision"), "replace");
        } else {
            expect_outcome(t, 0, TG_OUTCOME_ERROR);
            assert_string_equal(tg_result_error_code(r), "HOOK_FAILED");
            expect_contains(tg_result_error_message(r),
                            "not {\"timeout\":{\"durationMs\"}}");
            assert_string_equal(entry_str(h, "decision"), "fail");
        }
        assert_int_equal(tg_result_execution(r), TG_EXECUTION_STARTED);
        char *all = tg_result_to_json(r);
        assert_null(strstr(all, "SECRET"));
        free(all);
        tg_turn_free(t);
        tg_runtime_free(rt);
    }
}

static void test_after_failure_withholds(void **state)
{
    env *e = *state;
    /* The failing hooks must fail before the deadline; the slow one is
     * stopped by it, long before its 90 s. */
    long budget = hook_budget(e, 300);
    char timed_out[64];
    snprintf(timed_out, sizeof timed_out, "timed out after %ld ms", budget);
    const struct {
        const char *name, *body, *needle;
    } cases[] = {
        /* stderr that echoes the input is not quoted */
        {"afail", "cat >&2; exit 1", "exited with status 1;"},
        /* nor is output around a parse error */
        {"aprose", "cat; echo 'no'", "not JSON (line 1, column"},
        {"aslow", "sleep 90", timed_out},
    };
    for (size_t i = 0; i < 3; i++) {
        script(e, cases[i].name, cases[i].body);
        char hooks[256];
        snprintf(hooks, sizeof hooks,
                 "{\"timeout_ms\": %ld, \"after\": [[\"./%s\"], "
                 "[\"./never\"]]}",
                 budget, cases[i].name);
        tg_runtime *rt;
        tg_turn *t = run_echo(e, hooks, "{\"text\":\"SECRET 42\"}",
                              (double)(budget + tg_test_ms(5000)), &rt);
        expect_outcome(t, 0, TG_OUTCOME_ERROR);
        const tg_result *r = tg_test_res(t, 0);
        assert_string_equal(tg_result_error_code(r), "HOOK_FAILED");
        expect_hook_said(tg_result_error_message(r), "after", cases[i].name,
                         cases[i].needle);
        /* The tool ran; what it said is not shown. */
        assert_int_equal(tg_result_execution(r), TG_EXECUTION_FINISHED);
        assert_int_equal(tg_result_exit_status(r), 0);
        char *all = tg_result_to_json(r);
        assert_null(strstr(all, "SECRET"));
        free(all);
        /* The failing hook ends the chain ("./never" does not exist and
         * would have said so). */
        assert_int_equal(hook_count(t, 0), 1);
        const json_t *h = hook_entry(t, 0, 0);
        assert_string_equal(entry_str(h, "decision"), "fail");
        assert_true(json_is_true(json_object_get(h, "failed")));
        tg_turn_free(t);
        tg_runtime_free(rt);
    }
}

/* ------------------------------------------------------------ handlers */

static int h_secret(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    (void)args;
    (void)len;
    (void)ud;
    return tg_handler_set_json(ctx, "{\"token\":\"SECRET\"}", 18, NULL);
}

/* Inline and pool handlers pass the same hooks; the slots come back. */
static void test_handlers_and_slots(void **state)
{
    env *e = *state;
    script(e, "allow", "echo '{\"decision\":\"allow\"}'");
    script(e, "redact",
           "cat >/dev/null; echo '{\"payload\":{\"token\":\"***\"}}'");
    tg_runtime *rt =
        make_rt(e, "\"parallel\": 3",
                "{\"before\": [[\"./allow\"]], \"after\": [[\"./redact\"]]}");
    tg_error err = {0};
    assert_int_equal(tg_runtime_register(rt, "sec_inline", "", NULL, h_secret,
                                         NULL, TG_TOOL_INLINE, &err),
                     0);
    assert_int_equal(
        tg_runtime_register(rt, "sec_pool", "", NULL, h_secret, NULL, 0, &err),
        0);
    for (int round = 0; round < 2; round++) {
        tg_turn *t = tg__turn_new("toolgate");
        char id[32];
        for (int i = 0; i < 12; i++) {
            snprintf(id, sizeof id, "c%d", i);
            tg_test_add(t, id,
                        i % 3 == 0   ? "sec_inline"
                        : i % 3 == 1 ? "sec_pool"
                                     : "echo",
                        "{\"text\":\"t\"}");
        }
        tg_test_run(rt, t);
        for (size_t i = 0; i < 12; i++) {
            expect_outcome(t, i, TG_OUTCOME_SUCCESS);
            if (i % 3 != 2)
                assert_string_equal(tg_result_payload_json(tg_test_res(t, i)),
                                    "{\"token\":\"***\"}");
            assert_int_equal(hook_count(t, i), 2);
        }
        assert_int_equal(rt->running, 0);
        assert_null(rt->run_head);
        tg_turn_free(t);
    }
    tg_runtime_free(rt);
}

/* ------------------------------------------------------------ cancel */

/* The number of lines in e->dir/name (0 when it is absent). */
static int count_lines(const env *e, const char *name)
{
    char *text = slurp(e, name);
    int n = 0;
    for (const char *p = text; p != NULL && *p != '\0'; p++)
        n += *p == '\n';
    free(text);
    return n;
}

/* Cancels call a, then call b, once both their hooks have written their
 * pids to `pidfile` (a scaled 30 s at most). */
typedef struct canceller {
    tg_runtime *rt;
    const env *e;
    const char *pidfile;
} canceller;

static void *cancel_main(void *arg)
{
    canceller *c = arg;
    double end = tg_test_now_ms() + (double)tg_test_ms(30000);
    while (count_lines(c->e, c->pidfile) < 2 && tg_test_now_ms() < end)
        tg_test_sleep_ms(5);
    tg_runtime_cancel(c->rt, "a", "user", "changed my mind", NULL);
    tg_runtime_cancel(c->rt, "b", "user", "changed my mind", NULL);
    return NULL;
}

static void test_cancel_while_hook_runs(void **state)
{
    env *e = *state;
    script(e, "slow", "sleep 90 & echo $! >>$TOOLGATE_HOOK_STAGE.pid; wait");
    for (int stage = 0; stage < 2; stage++) {
        /* Without the cancel the hooks would run out their 60 s. */
        tg_runtime *rt = make_rt(e, "",
                                 stage == 0 ? "{\"timeout_ms\": 60000, "
                                              "\"before\": [[\"./slow\"]]}"
                                            : "{\"timeout_ms\": 60000, "
                                              "\"after\": [[\"./slow\"]]}");
        tg_turn *t = tg__turn_new("toolgate");
        tg_test_add(t, "a", "echo", "{\"text\":\"SECRET\"}");
        tg_test_add(t, "b", "echo", "{\"text\":\"other\"}");
        const char *pidfile = stage == 0 ? "before.pid" : "after.pid";
        canceller c = {rt, e, pidfile};
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, cancel_main, &c), 0);
        double t0 = tg_test_now_ms();
        tg_test_run(rt, t);
        pthread_join(th, NULL);
        assert_true(tg_test_now_ms() - t0 < (double)tg_test_ms(10000));
        for (size_t i = 0; i < 2; i++) {
            expect_outcome(t, i, TG_OUTCOME_CANCELED);
            json_t *p = payload(t, i);
            assert_string_equal(why(p), "changed my mind");
            assert_string_equal(json_string_value(json_object_get(
                                    json_object_get(p, "canceled"), "by")),
                                "user");
            json_decref(p);
            assert_int_equal(tg_result_execution(tg_test_res(t, i)),
                             stage == 0 ? TG_EXECUTION_NOT_STARTED
                                        : TG_EXECUTION_FINISHED);
            char *all = tg_result_to_json(tg_test_res(t, i));
            assert_null(strstr(all, "SECRET"));
            free(all);
        }
        tg_turn_free(t);
        /* The runtime ends with the hooks it stopped. */
        tg_runtime_free(rt);
        char *pidtext = slurp(e, pidfile);
        assert_non_null(pidtext);
        char *at = pidtext;
        for (int k = 0; k < 2; k++) {
            long pid = strtol(at, &at, 10);
            assert_true(pid > 1);
            assert_true(tg_test_dead_within(pid, tg_test_ms(1000)));
        }
        free(pidtext);
    }
}

/* ------------------------------------------------------------ config */

static void test_config_forms(void **state)
{
    env *e = *state;
    static const struct {
        const char *hooks, *message, *pointer;
    } bad[] = {
        {"{\"before\": [{\"command\": []}]}",
         "hooks.before[0].command must be a command",
         "/hooks/before/0/command"},
        {"{\"after\": [{\"cmd\": [\"x\"]}]}",
         "unknown key 'hooks.after[0].cmd'", "/hooks/after/0/cmd"},
        {"{\"before\": [{\"timeout_ms\": 5}]}",
         "hooks.before[0] needs a \"command\"", "/hooks/before/0"},
        {"{\"before\": [{\"command\": [\"x\"], \"timeout_ms\": 0}]}",
         "hooks.before[0].timeout_ms must be an integer",
         "/hooks/before/0/timeout_ms"},
        {"{\"timeout_ms\": \"5s\"}", "hooks.timeout_ms must be an integer",
         "/hooks/timeout_ms"},
        {"{\"before\": [[\"\"]]}", "hooks.before[0] must be a command",
         "/hooks/before/0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "{\"hooks\": %s}", bad[i].hooks);
        tg_config *cfg = tg_config_new();
        tg_error err = {0};
        assert_int_equal(tg_config_load(cfg, text, strlen(text), e->dir, &err),
                         TG_ECONFIG);
        expect_contains(err.message, bad[i].message);
        assert_string_equal(err.pointer, bad[i].pointer);
        tg_config_free(cfg);
    }
    /* Both forms together, with a default deadline. */
    const char *good = "{\"hooks\": {\"timeout_ms\": 1000, \"before\": "
                       "[[\"a\", \"-x\"], {\"command\": [\"b\"]}, {\"command\":"
                       " [\"c\"], \"timeout_ms\": 20}], \"after\": []}}";
    tg_config *cfg = tg_config_new();
    tg_error err = {0};
    assert_int_equal(tg_config_load(cfg, good, strlen(good), e->dir, &err), 0);
    tg_config_free(cfg);
}

int main(void)
{
    /* A test binary may be started with SIGPIPE ignored or not: the hooks
     * must not depend on it. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_allow_deny_cancel, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_input_and_environment, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rewrite, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unread_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failures_deny, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_kills_group, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_after_redaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_after_reviews_timeout_output,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_after_failure_withholds, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_handlers_and_slots, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cancel_while_hook_runs, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_config_forms, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
