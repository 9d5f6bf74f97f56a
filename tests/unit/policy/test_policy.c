/* SPDX-License-Identifier: MIT */
/*
 * test_policy.c - the policy engine (src/policy): every key's error with its
 * message and JSON pointer, first-match order, tool and caller globs, the
 * MCP annotation defaults, each argument condition, `under` against "..",
 * absolute paths, a sibling prefix, symlinks leading out (also dangling), a
 * NUL byte; reasons and the explanation; concurrent decisions on one policy;
 * and the issue's check against a reference implementation (policy_ref.h)
 * over random rule sets and calls: 10^6 random rule sets with one random
 * call each in a plain build (~20 s), 10^5 under ASan (TG_POLICY_RANDOM_CALLS
 * and TG_POLICY_CALLS_PER_SET override; TG_POLICY_SEED replays a failure),
 * on real files (symlinks in and out) in a temp dir.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "policy_ref.h"

#if defined(__SANITIZE_ADDRESS__)
#define TG_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TG_TEST_ASAN 1
#endif
#endif

static json_t *load(const char *text)
{
    json_error_t jerr;
    json_t *v =
        json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr); /* new ref */
    if (v == NULL)
        fail_msg("bad test JSON: %s: %s", jerr.text, text);
    return v;
}

static tg__policy *compile_ok(const char *text)
{
    json_t *j = load(text); /* new ref */
    tg__policy *p = NULL;
    tg_error err = {0};
    int rc = tg__policy_compile(j, &p, &err);
    json_decref(j);
    if (rc != 0)
        fail_msg("compile failed: %s (%s): %s", err.message, err.pointer, text);
    return p;
}

/* The deciding rule index for tool/caller/args (JSON text or NULL). */
static long decide_full(const tg__policy *p, const char *tool,
                        const char *caller, const char *ann, const char *args,
                        const char *ws, const char *cwd, tg__policy_decision *d,
                        const char **reason)
{
    json_t *a = ann ? load(ann) : NULL;   /* new ref */
    json_t *g = args ? load(args) : NULL; /* new ref */
    tg__policy_input in = {tool, caller, a, g, ws, cwd};
    tg__policy_verdict v;
    tg_error err = {0};
    int rc = tg__policy_decide(p, &in, &v, NULL, &err);
    if (rc != 0)
        fail_msg("decide failed: %s", err.message);
    /* The explained path must reach the same verdict. */
    tg__buf b;
    tg__buf_init(&b, 0);
    tg__policy_verdict v2;
    rc = tg__policy_decide(p, &in, &v2, &b, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(v2.rule, v.rule);
    assert_int_equal(v2.decision, v.decision);
    tg__buf_cleanup(&b);
    json_decref(a);
    json_decref(g);
    if (d)
        *d = v.decision;
    if (reason)
        *reason = v.reason;
    return v.rule;
}

static long decide(const tg__policy *p, const char *tool, const char *caller,
                   const char *args)
{
    return decide_full(p, tool, caller, NULL, args, "/", NULL, NULL, NULL);
}

/* ------------------------------------------------------------ compile */

struct bad_case {
    const char *policy;
    const char *pointer;
    const char *message;
};

static const struct bad_case bad_cases[] = {
    {"[]", "/policy", "policy must be an object"},
    {"{\"defualt\":\"allow\"}", "/policy/defualt", "is not a known key"},
    {"{\"default\":\"maybe\"}", "/policy/default",
     "policy.default must be \"allow\", \"deny\" or \"ask\", not \"maybe\""},
    {"{\"default\":1}", "/policy/default", "must be \"allow\""},
    {"{\"rules\":{}}", "/policy/rules", "policy.rules must be an array"},
    {"{\"rules\":[1]}", "/policy/rules/0", "policy.rules[0] must be an object"},
    {"{\"rules\":[{\"decision\":\"allow\"},{\"tool\":\"x\"}]}",
     "/policy/rules/1/decision", "policy.rules[1].decision is required"},
    {"{\"rules\":[{\"decision\":\"yes\"}]}", "/policy/rules/0/decision",
     "not \"yes\""},
    {"{\"rules\":[{\"decision\":\"allow\",\"tool\":3}]}",
     "/policy/rules/0/tool", "policy.rules[0].tool must be a string"},
    {"{\"rules\":[{\"decision\":\"allow\",\"tool\":\"a\\u0000b\"}]}",
     "/policy/rules/0/tool", "must not contain a NUL byte"},
    {"{\"rules\":[{\"decision\":\"allow\",\"caller\":[]}]}",
     "/policy/rules/0/caller", "policy.rules[0].caller must be a string"},
    {"{\"rules\":[{\"decision\":\"allow\",\"reason\":false}]}",
     "/policy/rules/0/reason", "policy.rules[0].reason must be a string"},
    {"{\"rules\":[{\"decision\":\"allow\",\"when\":1}]}",
     "/policy/rules/0/when", "policy.rules[0].when is not a known key"},
    {"{\"rules\":[{\"decision\":\"allow\",\"annotations\":[]}]}",
     "/policy/rules/0/annotations", "must be an object"},
    {"{\"rules\":[{\"decision\":\"allow\",\"annotations\":{\"readOnly\":"
     "true}}]}",
     "/policy/rules/0/annotations/readOnly", "is not a known annotation"},
    {"{\"rules\":[{\"decision\":\"allow\",\"annotations\":{"
     "\"destructiveHint\":1}}]}",
     "/policy/rules/0/annotations/destructiveHint",
     "policy.rules[0].annotations.destructiveHint must be true or false"},
    {"{\"rules\":[{\"decision\":\"allow\",\"args\":[]}]}",
     "/policy/rules/0/args", "policy.rules[0].args must be an object"},
    {"{\"rules\":[{\"decision\":\"allow\",\"args\":{\"p\":1}}]}",
     "/policy/rules/0/args/p", "policy.rules[0].args.p must be an object"},
    {"{\"rules\":[{\"decision\":\"allow\",\"args\":{\"p\":{}}}]}",
     "/policy/rules/0/args/p", "must be an object with one of"},
    {"{\"rules\":[{\"decision\":\"allow\",\"args\":{\"p\":{\"eq\":1}}}]}",
     "/policy/rules/0/args/p/eq",
     "policy.rules[0].args.p.eq is not a known condition"},
    {"{\"rules\":[{\"decision\":\"allow\",\"args\":{\"p\":{\"one_of\":1}}}]}",
     "/policy/rules/0/args/p/one_of", "must be a non-empty array"},
    {"{\"rules\":[{\"decision\":\"allow\",\"args\":{\"p\":{\"one_of\":[]}}}]}",
     "/policy/rules/0/args/p/one_of", "must be a non-empty array"},
    {"{\"rules\":[{\"decision\":\"allow\",\"args\":{\"p\":{\"matches\":1}}}]}",
     "/policy/rules/0/args/p/matches", "must be a string"},
    {"{\"rules\":[{\"decision\":\"allow\",\"args\":{\"p\":{\"matches\":"
     "\"a(\"}}}]}",
     "/policy/rules/0/args/p/matches",
     "policy.rules[0].args.p.matches is not a valid regex"},
    {"{\"rules\":[{\"decision\":\"allow\"},{\"decision\":\"deny\",\"args\":"
     "{\"path\":{\"under\":5}}}]}",
     "/policy/rules/1/args/path/under",
     "policy.rules[1].args.path.under must be a string"},
    {"{\"rules\":[{\"decision\":\"allow\",\"args\":{\"p\":{\"under\":\"\"}}}]}",
     "/policy/rules/0/args/p/under", "must not be empty"},
    {"{\"rules\":[{\"decision\":\"allow\",\"args\":{\"p\":{\"max_length\":"
     "-1}}}]}",
     "/policy/rules/0/args/p/max_length", "must be a non-negative integer"},
    {"{\"rules\":[{\"decision\":\"allow\",\"args\":{\"p\":{\"max_length\":"
     "1.5}}}]}",
     "/policy/rules/0/args/p/max_length", "must be a non-negative integer"},
    {"{\"rules\":[{\"decision\":\"allow\",\"args\":{\"a/b~c\":{\"x\":1}}}]}",
     "/policy/rules/0/args/a~1b~0c/x", "policy.rules[0].args.a/b~c.x"},
    {"{\"rules\":[{\"decision\":\"allow\",\"args\":{\"p\":{\"equals\":1,"
     "\"max_length\":\"3\"}}}]}",
     "/policy/rules/0/args/p/max_length", "non-negative integer"},
};

static void test_compile_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        json_t *j = load(bad_cases[i].policy); /* new ref */
        tg__policy *p = (tg__policy *)1;
        tg_error err = {0};
        int rc = tg__policy_compile(j, &p, &err);
        json_decref(j);
        if (rc != TG_ECONFIG || p != NULL ||
            strcmp(err.pointer, bad_cases[i].pointer) != 0 ||
            strstr(err.message, bad_cases[i].message) == NULL)
            fail_msg("case %zu %s: rc %d pointer '%s' message '%s'", i,
                     bad_cases[i].policy, rc, err.pointer, err.message);
    }
}

static void test_absent_policy(void **state)
{
    (void)state;
    tg__policy *p = NULL;
    tg_error err = {0};
    assert_int_equal(tg__policy_compile(NULL, &p, &err), 0);
    assert_int_equal(tg__policy_rule_count(p), 0);
    assert_int_equal(tg__policy_default(p), TG_POLICY_ALLOW);
    tg__policy_decision d;
    const char *reason;
    assert_int_equal(
        decide_full(p, "shell", NULL, NULL, NULL, "/", NULL, &d, &reason), -1);
    assert_int_equal(d, TG_POLICY_ALLOW);
    assert_non_null(strstr(reason, "no policy rule matched"));
    tg__policy_free(p);
    json_t *null = json_null(); /* new ref */
    assert_int_equal(tg__policy_compile(null, &p, &err), 0);
    json_decref(null);
    assert_int_equal(tg__policy_default(p), TG_POLICY_ALLOW);
    tg__policy_free(p);
    tg__policy_free(NULL);

    p = compile_ok("{\"default\":\"deny\"}");
    assert_int_equal(
        decide_full(p, "x", NULL, NULL, NULL, "/", NULL, &d, &reason), -1);
    assert_int_equal(d, TG_POLICY_DENY);
    assert_string_equal(reason, "no policy rule matched; the default denies "
                                "it");
    tg__policy_free(p);
}

/* ---------------------------------------------------------- matching */

static void test_first_match_order(void **state)
{
    (void)state;
    /* The spec's example, plus rules an index could reorder: an exact
     * name after a glob, a no-tool rule between them. */
    tg__policy *p = compile_ok(
        "{\"default\":\"deny\",\"rules\":["
        "{\"tool\":\"shell\",\"decision\":\"ask\"},"
        "{\"tool\":\"write_*\",\"caller\":\"guest\",\"decision\":\"deny\"},"
        "{\"caller\":\"root\",\"decision\":\"allow\"},"
        "{\"tool\":\"write_file\",\"decision\":\"allow\"},"
        "{\"tool\":\"*\",\"caller\":\"guest\",\"decision\":\"deny\","
        "\"reason\":\"guests may not call tools\"},"
        "{\"tool\":\"read_file\",\"decision\":\"allow\"},"
        "{\"tool\":\"shell\",\"decision\":\"allow\"}]}");
    tg__policy_decision d;
    const char *reason;
    assert_int_equal(decide(p, "shell", NULL, NULL), 0);
    assert_int_equal(decide(p, "shell", "root", NULL), 0);
    assert_int_equal(decide(p, "write_file", "guest", NULL), 1);
    assert_int_equal(decide(p, "write_file", "root", NULL), 2);
    assert_int_equal(decide(p, "list_dir", "root", NULL), 2);
    assert_int_equal(decide(p, "write_file", NULL, NULL), 3);
    assert_int_equal(decide_full(p, "read_file", "guest", NULL, NULL, "/", NULL,
                                 &d, &reason),
                     4);
    assert_int_equal(d, TG_POLICY_DENY);
    assert_string_equal(reason, "guests may not call tools");
    assert_int_equal(decide(p, "read_file", "user", NULL), 5);
    assert_int_equal(
        decide_full(p, "list_dir", "user", NULL, NULL, "/", NULL, &d, NULL),
        -1);
    assert_int_equal(d, TG_POLICY_DENY);
    tg__policy_free(p);
}

static void test_globs(void **state)
{
    (void)state;
    tg__policy *p = compile_ok(
        "{\"rules\":["
        "{\"tool\":\"fs_?ead\",\"decision\":\"deny\"},"
        "{\"tool\":\"db_[rw]*\",\"decision\":\"deny\"},"
        "{\"tool\":\"*_admin\",\"decision\":\"deny\"},"
        "{\"tool\":\"lit\\\\*\",\"decision\":\"deny\"},"
        "{\"tool\":\"fs_*\",\"caller\":\"agent-*\",\"decision\":\"ask\"},"
        "{\"tool\":\"fs_*\",\"decision\":\"allow\"}]}");
    assert_int_equal(decide(p, "fs_read", NULL, NULL), 0);
    assert_int_equal(decide(p, "fs_xead", NULL, NULL), 0);
    assert_int_equal(decide(p, "fs_reads", "agent-1", NULL), 4);
    assert_int_equal(decide(p, "fs_reads", "agent", NULL), 5);
    assert_int_equal(decide(p, "fs_", NULL, NULL), 5);
    assert_int_equal(decide(p, "db_read", NULL, NULL), 1);
    assert_int_equal(decide(p, "db_xread", NULL, NULL), -1);
    assert_int_equal(decide(p, "user_admin", NULL, NULL), 2);
    assert_int_equal(decide(p, "lit*", NULL, NULL), 3);
    assert_int_equal(decide(p, "litx", NULL, NULL), -1);
    assert_int_equal(decide(p, "", NULL, NULL), -1);
    tg__policy_free(p);
}

static void test_annotation_defaults(void **state)
{
    (void)state;
    tg__policy *p = compile_ok(
        "{\"default\":\"ask\",\"rules\":["
        "{\"annotations\":{\"readOnlyHint\":true},\"decision\":\"allow\"},"
        "{\"annotations\":{\"destructiveHint\":false,\"idempotentHint\":"
        "true},\"decision\":\"allow\"},"
        "{\"annotations\":{\"openWorldHint\":true,\"destructiveHint\":true},"
        "\"decision\":\"deny\"}]}");
    /* No annotations: not read-only, destructive, open world -> rule 2. */
    assert_int_equal(
        decide_full(p, "t", NULL, NULL, NULL, "/", NULL, NULL, NULL), 2);
    assert_int_equal(
        decide_full(p, "t", NULL, "{}", NULL, "/", NULL, NULL, NULL), 2);
    assert_int_equal(decide_full(p, "t", NULL, "{\"readOnlyHint\":true}", NULL,
                                 "/", NULL, NULL, NULL),
                     0);
    /* destructiveHint false alone is not enough: idempotentHint defaults
     * to false. */
    assert_int_equal(decide_full(p, "t", NULL, "{\"destructiveHint\":false}",
                                 NULL, "/", NULL, NULL, NULL),
                     -1);
    assert_int_equal(decide_full(p, "t", NULL,
                                 "{\"destructiveHint\":false,"
                                 "\"idempotentHint\":true}",
                                 NULL, "/", NULL, NULL, NULL),
                     1);
    assert_int_equal(decide_full(p, "t", NULL, "{\"openWorldHint\":false}",
                                 NULL, "/", NULL, NULL, NULL),
                     -1);
    /* A hint that is not a boolean counts as absent. */
    assert_int_equal(decide_full(p, "t", NULL, "{\"readOnlyHint\":\"yes\"}",
                                 NULL, "/", NULL, NULL, NULL),
                     2);
    tg__policy_free(p);
}

static void test_arg_conditions(void **state)
{
    (void)state;
    tg__policy *p = compile_ok(
        "{\"rules\":["
        "{\"args\":{\"n\":{\"equals\":1}},\"decision\":\"deny\"},"
        "{\"args\":{\"o\":{\"equals\":{\"a\":[1,{\"b\":null}],\"c\":\"x\"}}},"
        "\"decision\":\"deny\"},"
        "{\"args\":{\"mode\":{\"one_of\":[\"r\",\"rw\",2.5]}},"
        "\"decision\":\"deny\"},"
        "{\"args\":{\"q\":{\"matches\":\"^[a-z]+$\"}},\"decision\":\"deny\"},"
        "{\"args\":{\"s\":{\"max_length\":3}},\"decision\":\"deny\"},"
        "{\"args\":{\"both\":{\"matches\":\"x\",\"max_length\":2}},"
        "\"decision\":\"deny\"},"
        "{\"args\":{\"big\":{\"equals\":9007199254740993}},"
        "\"decision\":\"deny\"}]}");
    assert_int_equal(decide(p, "t", NULL, "{\"n\":1}"), 0);
    assert_int_equal(decide(p, "t", NULL, "{\"n\":1.0}"), 0);
    assert_int_equal(decide(p, "t", NULL, "{\"n\":1.5}"), -1);
    assert_int_equal(decide(p, "t", NULL, "{\"n\":\"1\"}"), -1);
    assert_int_equal(decide(p, "t", NULL, "{\"n\":true}"), -1);
    assert_int_equal(decide(p, "t", NULL, "{\"N\":1}"), -1);
    assert_int_equal(decide(p, "t", NULL, NULL), -1);
    assert_int_equal(
        decide(p, "t", NULL, "{\"o\":{\"c\":\"x\",\"a\":[1.0,{\"b\":null}]}}"),
        1);
    assert_int_equal(
        decide(p, "t", NULL, "{\"o\":{\"c\":\"x\",\"a\":[{\"b\":null},1]}}"),
        -1);
    assert_int_equal(decide(p, "t", NULL, "{\"o\":{\"c\":\"x\"}}"), -1);
    assert_int_equal(decide(p, "t", NULL, "{\"mode\":\"rw\"}"), 2);
    assert_int_equal(decide(p, "t", NULL, "{\"mode\":2.5}"), 2);
    assert_int_equal(decide(p, "t", NULL, "{\"mode\":\"w\"}"), -1);
    assert_int_equal(decide(p, "t", NULL, "{\"q\":\"abc\"}"), 3);
    assert_int_equal(decide(p, "t", NULL, "{\"q\":\"ab1\"}"), -1);
    assert_int_equal(decide(p, "t", NULL, "{\"q\":[\"abc\"]}"), -1);
    assert_int_equal(decide(p, "t", NULL, "{\"q\":5}"), -1);
    /* Code points, not bytes: "héé" is 5 bytes, 3 code points. */
    assert_int_equal(decide(p, "t", NULL, "{\"s\":\"h\\u00e9\\u00e9\"}"), 4);
    assert_int_equal(decide(p, "t", NULL, "{\"s\":\"\\ud83d\\ude00ab\"}"), 4);
    assert_int_equal(decide(p, "t", NULL, "{\"s\":\"abcd\"}"), -1);
    assert_int_equal(decide(p, "t", NULL, "{\"s\":123}"), -1);
    assert_int_equal(decide(p, "t", NULL, "{\"both\":\"xy\"}"), 5);
    assert_int_equal(decide(p, "t", NULL, "{\"both\":\"xyz\"}"), -1);
    assert_int_equal(decide(p, "t", NULL, "{\"both\":\"ab\"}"), -1);
    /* 2^53 + 1 is not the double 2^53. */
    assert_int_equal(decide(p, "t", NULL, "{\"big\":9007199254740993}"), 6);
    assert_int_equal(decide(p, "t", NULL, "{\"big\":9007199254740992.0}"), -1);
    tg__policy_free(p);
}

static void test_regex_limit(void **state)
{
    (void)state;
    tg__policy *p = compile_ok("{\"rules\":[{\"args\":{\"s\":{\"matches\":"
                               "\"^(a+)+$\"}},\"decision\":\"deny\"}]}");
    json_t *args = json_object(); /* new ref */
    char s[64];
    memset(s, 'a', 40);
    s[40] = 'b';
    s[41] = '\0';
    json_object_set_new(args, "s", json_string(s));
    tg__policy_input in = {"t", NULL, NULL, args, "/", NULL};
    tg__policy_verdict v;
    tg_error err = {0};
    assert_int_equal(tg__policy_decide(p, &in, &v, NULL, &err), TG_ELIMIT);
    assert_non_null(strstr(err.message, "match limit"));
    json_decref(args);
    tg__policy_free(p);
}

/* --------------------------------------------------------------- under */

struct tree {
    char root[256]; /* temp dir */
    char ws[300];   /* root/ws, the workspace */
};

static void mk(const struct tree *t, const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", t->root, rel);
    assert_int_equal(mkdir(path, 0700), 0);
}

static void ln(const struct tree *t, const char *target, const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", t->root, rel);
    assert_int_equal(symlink(target, path), 0);
}

/* root/{ws/{out/{sub,link_in->..},out2,link_out->../outside,
 * dangling->ROOT/outside/new,loop->loop},ws2,outside} */
static void tree_make(struct tree *t)
{
    snprintf(t->root, sizeof t->root, "%s/tgpolicy.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(t->root));
    snprintf(t->ws, sizeof t->ws, "%s/ws", t->root);
    mk(t, "ws");
    mk(t, "ws/out");
    mk(t, "ws/out/sub");
    mk(t, "ws/out2");
    mk(t, "ws2");
    mk(t, "outside");
    ln(t, "..", "ws/out/link_in");
    ln(t, "../outside", "ws/link_out");
    char target[512];
    snprintf(target, sizeof target, "%s/outside/new", t->root);
    ln(t, target, "ws/dangling");
    ln(t, "loop", "ws/loop");
}

static void tree_remove(struct tree *t)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->root);
    assert_int_equal(system(cmd), 0);
}

static long under_decide(const tg__policy *p, const struct tree *t,
                         const char *cwd, const char *path)
{
    json_t *args = json_object(); /* new ref */
    json_object_set_new(args, "path", json_string(path));
    char *text = json_dumps(args, JSON_COMPACT);
    long r =
        decide_full(p, "write_file", NULL, NULL, text, t->ws, cwd, NULL, NULL);
    free(text);
    json_decref(args);
    return r;
}

static void test_under(void **state)
{
    (void)state;
    struct tree t;
    tree_make(&t);
    tg__policy *p = compile_ok(
        "{\"default\":\"deny\",\"rules\":["
        "{\"tool\":\"write_file\",\"args\":{\"path\":{\"under\":\"./out\"}},"
        "\"decision\":\"allow\"},"
        "{\"tool\":\"write_file\",\"args\":{\"path\":{\"under\":\".\"}},"
        "\"decision\":\"ask\"}]}");
    char abs[600];
    assert_int_equal(under_decide(p, &t, NULL, "out/new.txt"), 0);
    assert_int_equal(under_decide(p, &t, NULL, "out"), 0);
    assert_int_equal(under_decide(p, &t, NULL, "./out/./sub//x"), 0);
    assert_int_equal(under_decide(p, &t, NULL, "out/sub/../y"), 0);
    assert_int_equal(under_decide(p, &t, NULL, "missing/../out/z"), 0);
    /* ".." leaving out, then the workspace. */
    assert_int_equal(under_decide(p, &t, NULL, "out/../out2/x"), 1);
    assert_int_equal(under_decide(p, &t, NULL, "out/sub/../../x"), 1);
    assert_int_equal(under_decide(p, &t, NULL, "../outside/x"), -1);
    assert_int_equal(under_decide(p, &t, NULL, "../../../../../../etc/x"), -1);
    /* Sibling prefix: "ws2" is not under "ws", "out2" not under "out". */
    assert_int_equal(under_decide(p, &t, NULL, "out2"), 1);
    assert_int_equal(under_decide(p, &t, NULL, "../ws2/x"), -1);
    snprintf(abs, sizeof abs, "%s/ws2/x", t.root);
    assert_int_equal(under_decide(p, &t, NULL, abs), -1);
    /* Absolute paths. */
    snprintf(abs, sizeof abs, "%s/out/x", t.ws);
    assert_int_equal(under_decide(p, &t, NULL, abs), 0);
    assert_int_equal(under_decide(p, &t, NULL, "/etc/passwd"), -1);
    assert_int_equal(under_decide(p, &t, NULL, "/"), -1);
    /* Symlinks leading out, into, dangling out, and a loop. */
    assert_int_equal(under_decide(p, &t, NULL, "link_out/x"), -1);
    assert_int_equal(under_decide(p, &t, NULL, "link_out"), -1);
    assert_int_equal(under_decide(p, &t, NULL, "out/link_in/out2/x"), 1);
    assert_int_equal(under_decide(p, &t, NULL, "out/link_in/out/x"), 0);
    assert_int_equal(under_decide(p, &t, NULL, "dangling"), -1);
    assert_int_equal(under_decide(p, &t, NULL, "dangling/x"), -1);
    /* The kernel walks link_in/.. from the link's target (ws), not
     * lexically (out). */
    assert_int_equal(under_decide(p, &t, NULL, "out/link_in/../x"), -1);
    /* Relative to the cwd; a relative cwd is relative to the workspace. */
    assert_int_equal(under_decide(p, &t, "out", "x"), 0);
    assert_int_equal(under_decide(p, &t, "out", "../out2"), 1);
    assert_int_equal(under_decide(p, &t, "out/sub", "../../../ws2"), -1);
    /* Non-strings never match. */
    assert_int_equal(decide_full(p, "write_file", NULL, NULL,
                                 "{\"path\":[\"out\"]}", t.ws, NULL, NULL,
                                 NULL),
                     -1);

    /* A loop and a NUL byte: errors, never skipped. */
    json_t *args = json_object(); /* new ref */
    json_object_set_new(args, "path", json_string("loop/x"));
    tg__policy_input in = {"write_file", NULL, NULL, args, t.ws, NULL};
    tg__policy_verdict v;
    tg_error err = {0};
    assert_int_equal(tg__policy_decide(p, &in, &v, NULL, &err), TG_EINVAL);
    assert_non_null(strstr(err.message, "too many symlinks"));
    json_object_set_new(args, "path", json_stringn("out/a\0../../x", 13));
    assert_int_equal(tg__policy_decide(p, &in, &v, NULL, &err), TG_EINVAL);
    assert_non_null(strstr(err.message, "NUL byte"));
    json_decref(args);
    tg__policy_free(p);

    /* A rule path through a symlink is resolved too, and an absolute rule
     * path is taken as is. */
    p = compile_ok("{\"rules\":[{\"args\":{\"path\":{\"under\":"
                   "\"link_out\"}},\"decision\":\"deny\"}]}");
    snprintf(abs, sizeof abs, "%s/outside/secret", t.root);
    assert_int_equal(under_decide(p, &t, NULL, abs), 0);
    assert_int_equal(under_decide(p, &t, NULL, "../outside"), 0);
    assert_int_equal(under_decide(p, &t, NULL, "out"), -1);
    tg__policy_free(p);
    p = compile_ok("{\"rules\":[{\"args\":{\"path\":{\"under\":\"/\"}},"
                   "\"decision\":\"deny\"}]}");
    assert_int_equal(under_decide(p, &t, NULL, "anything"), 0);
    tg__policy_free(p);
    tree_remove(&t);
}

/* ---------------------------------------------------- reasons, explain */

static void test_reasons_and_explain(void **state)
{
    (void)state;
    tg__policy *p = compile_ok(
        "{\"default\":\"ask\",\"rules\":["
        "{\"tool\":\"shell\",\"decision\":\"ask\"},"
        "{\"tool\":\"x\",\"decision\":\"allow\"},"
        "{\"tool\":\"y\",\"decision\":\"allow\"},"
        "{\"tool\":\"write_file\",\"args\":{\"path\":{\"under\":\"./out\"}},"
        "\"decision\":\"deny\"},"
        "{\"tool\":\"*\",\"caller\":\"guest\",\"annotations\":"
        "{\"readOnlyHint\":false},\"args\":{\"n\":{\"max_length\":2},"
        "\"q\":{\"matches\":\"^a\"}},\"decision\":\"allow\"}]}");
    tg__policy_decision d;
    const char *reason;
    struct tree t;
    tree_make(&t);
    assert_int_equal(decide_full(p, "write_file", NULL, NULL,
                                 "{\"path\":\"out/f\"}", t.ws, NULL, &d,
                                 &reason),
                     3);
    assert_string_equal(reason, "policy rule 3 (tool 'write_file', args.path "
                                "under './out') denies it");
    assert_int_equal(decide(p, "shell", NULL, NULL), 0);
    /* The explanation: each rule, each condition seen, the decider. */
    json_t *args = load("{\"path\":\"out2/f\",\"n\":\"ab\",\"q\":\"abc\"}");
    tg__policy_input in = {"write_file", "guest", NULL, args, t.ws, NULL};
    tg__policy_verdict v;
    tg_error err = {0};
    tg__buf b;
    tg__buf_init(&b, 0);
    assert_int_equal(tg__policy_decide(p, &in, &v, &b, &err), 0);
    assert_int_equal(v.rule, 4);
    assert_int_equal(v.decision, TG_POLICY_ALLOW);
    const char *text = tg__buf_cstr(&b);
    static const char *const want[] = {
        "rule 0 (tool 'shell') -> ask",
        "tool 'write_file' does not match 'shell': fails",
        "args.path \"out2/f\" under './out' (resolves to ",
        "not beneath ",
        "readOnlyHint is false (MCP default), rule wants false: holds",
        "args.n \"ab\" max_length 2: holds",
        "args.q \"abc\" matches /^a/: holds",
        "every condition holds: rule 4 decides: allow",
        "reason: policy rule 4 (tool '*', caller 'guest', readOnlyHint "
        "false, args.n max_length 2, args.q matches /^a/) allows it"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (strstr(text, want[i]) == NULL)
            fail_msg("explanation lacks '%s':\n%s", want[i], text);
    tg__buf_cleanup(&b);
    tg__buf_init(&b, 0);
    in.tool = "zzz";
    in.caller = NULL;
    assert_int_equal(tg__policy_decide(p, &in, &v, &b, &err), 0);
    assert_int_equal(v.rule, -1);
    assert_non_null(strstr(tg__buf_cstr(&b), "caller: the call has none"));
    assert_non_null(strstr(tg__buf_cstr(&b), "no rule applies: the default "
                                             "decides: ask"));
    tg__buf_cleanup(&b);
    json_decref(args);
    in.tool = NULL;
    assert_int_equal(tg__policy_decide(p, &in, &v, NULL, &err), TG_EINVAL);
    tg__policy_free(p);
    tree_remove(&t);
}

/* ------------------------------------------------------------ threads */

struct thread_arg {
    const tg__policy *p;
    const char *ws;
    int mismatches;
};

static void *thread_main(void *opaque)
{
    struct thread_arg *a = opaque;
    json_t *args = json_object(); /* new ref */
    for (int i = 0; i < 2000; i++) {
        char tool[32], q[32];
        snprintf(tool, sizeof tool, "tool_%d", i % 50);
        snprintf(q, sizeof q, "%s%d", i % 3 ? "abc" : "x", i);
        json_object_set_new(args, "q", json_string(q));
        json_object_set_new(args, "path", json_string(i % 2 ? "a" : "../b"));
        tg__policy_input in = {tool, NULL, NULL, args, a->ws, NULL};
        tg__policy_verdict v;
        if (tg__policy_decide(a->p, &in, &v, NULL, NULL) != 0) {
            a->mismatches++;
            continue;
        }
        /* tool_N for N < 25 with q matching ^abc and path inside: rule N. */
        long want = (i % 50) < 25 && i % 3 && i % 2 ? i % 50 : -1;
        a->mismatches += v.rule != want;
    }
    json_decref(args);
    return NULL;
}

static void test_concurrent(void **state)
{
    (void)state;
    tg__buf b;
    tg__buf_init(&b, 0);
    tg__buf_puts(&b, "{\"default\":\"deny\",\"rules\":[");
    for (int i = 0; i < 25; i++)
        tg__buf_printf(&b,
                       "%s{\"tool\":\"tool_%d\",\"args\":{\"q\":{\"matches\":"
                       "\"^abc\"},\"path\":{\"under\":\".\"}},"
                       "\"decision\":\"allow\"}",
                       i ? "," : "", i);
    tg__buf_puts(&b, "]}");
    tg__policy *p = compile_ok(tg__buf_cstr(&b));
    tg__buf_cleanup(&b);
    struct thread_arg a[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (struct thread_arg){p, "/tmp", 0};
        assert_int_equal(pthread_create(&th[i], NULL, thread_main, &a[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(a[i].mismatches, 0);
    }
    tg__policy_free(p);
}

/* ------------------------------------------------- against a reference */

/* xorshift64*: reproducible from the seed printed on failure. */
static uint64_t rnd_state;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state >> 12;
    rnd_state ^= rnd_state << 25;
    rnd_state ^= rnd_state >> 27;
    return rnd_state * UINT64_C(2685821657736338717);
}
static size_t pick(size_t n)
{
    return (size_t)(rnd() % n);
}

static const char *const rule_tools[] = {
    "read_file", "write_file",  "shell",    "*",           "read_*",
    "*_file",    "?hell",       "[rw]*",    "write_f*",    "sh*l",
    "a\\*",      "list_dir",    "[!r]*",    "write_file*", "*a\\*",
    "*]x",       "[a-z]*_file", "*[_]file", "*\\]x",       "a*\\*"};
static const char *const call_tools[] = {
    "read_file", "write_file", "shell", "shellx", "rm",  "a*",
    "list_dir",  "write_fil",  "ax",    "x]x",    "ba*", "a]x"};
static const char *const rule_callers[] = {"guest", "g*", "admin", "*"};
static const char *const call_callers[] = {NULL, "guest", "admin", "gadmin"};
static const char *const values[] = {"\"out/a.txt\"",
                                     "1",
                                     "1.0",
                                     "2",
                                     "\"1\"",
                                     "null",
                                     "true",
                                     "false",
                                     "[1,2]",
                                     "[1.0,2]",
                                     "{\"a\":1}",
                                     "{\"a\":1.0}",
                                     "\"h\\u00e9llo\"",
                                     "\"abc\"",
                                     "\"\"",
                                     "9007199254740993",
                                     "9007199254740992.0",
                                     "\"out\"",
                                     "\"../outside/x\"",
                                     "\"link_out/x\""};
static const char *const paths[] = {"out/a.txt",
                                    "out",
                                    "out/../out2/x",
                                    "../outside/x",
                                    "link_out/x",
                                    "out/link_in/out2",
                                    "/etc/passwd",
                                    "out2/y",
                                    "./out/./sub//z",
                                    "missing/../out/q",
                                    "out/sub/../../../outside",
                                    "",
                                    ".",
                                    "@ABS@"};
static const char *const unders[] = {
    ".", "out", "./out", "out2", "out/sub", "/", "link_out", "../outside"};
static const char *const regexes[] = {"^out/", "a",  "^h.llo$",
                                      "\\d",   "^$", "l{2}"};
static const char *const arg_names[] = {"path", "n", "mode"};

static json_t *rnd_value(void)
{
    json_error_t jerr;
    return json_loads(values[pick(sizeof values / sizeof values[0])],
                      JSON_DECODE_ANY, &jerr); /* new ref */
}

static json_t *rnd_policy(const char *abs)
{
    json_t *pol = json_object();  /* new ref */
    json_t *rules = json_array(); /* new ref */
    static const char *const dec[] = {"allow", "deny", "ask"};
    if (rnd() & 1)
        json_object_set_new(pol, "default", json_string(dec[pick(3)]));
    size_t n = pick(7);
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_object(); /* new ref */
        if (pick(5) != 0)
            json_object_set_new(
                r, "tool",
                json_string(rule_tools[pick(sizeof rule_tools /
                                            sizeof rule_tools[0])]));
        if (pick(4) == 0)
            json_object_set_new(r, "caller",
                                json_string(rule_callers[pick(4)]));
        if (pick(4) == 0) {
            json_t *a = json_object(); /* new ref */
            for (int h = 0; h < 4; h++)
                if (rnd() & 1)
                    json_object_set_new(a, ref_hints[h],
                                        json_boolean(rnd() & 1));
            json_object_set_new(r, "annotations", a);
        }
        size_t na = pick(3);
        if (na > 0) {
            json_t *args = json_object(); /* new ref */
            for (size_t k = 0; k < na; k++) {
                json_t *c = json_object(); /* new ref */
                size_t nc = 1 + pick(2);
                for (size_t m = 0; m < nc; m++) {
                    switch (pick(5)) {
                    case 0:
                        json_object_set_new(c, "equals", rnd_value());
                        break;
                    case 1: {
                        json_t *o = json_array(); /* new ref */
                        size_t no = 1 + pick(3);
                        for (size_t q = 0; q < no; q++)
                            json_array_append_new(o, rnd_value());
                        json_object_set_new(c, "one_of", o);
                        break;
                    }
                    case 2:
                        json_object_set_new(
                            c, "matches",
                            json_string(regexes[pick(sizeof regexes /
                                                     sizeof regexes[0])]));
                        break;
                    case 3: {
                        const char *u =
                            unders[pick(sizeof unders / sizeof unders[0])];
                        json_object_set_new(c, "under", json_string(u));
                        break;
                    }
                    default:
                        json_object_set_new(c, "max_length",
                                            json_integer((json_int_t)pick(7)));
                    }
                }
                json_object_set_new(args, arg_names[pick(3)], c);
            }
            json_object_set_new(r, "args", args);
        }
        json_object_set_new(r, "decision", json_string(dec[pick(3)]));
        json_array_append_new(rules, r);
    }
    (void)abs;
    json_object_set_new(pol, "rules", rules);
    return pol;
}

static json_t *rnd_args(const char *abs)
{
    json_t *a = json_object(); /* new ref */
    for (int k = 0; k < 3; k++) {
        if (pick(3) == 0)
            continue;
        if (k == 0 && (rnd() & 1)) {
            const char *pth = paths[pick(sizeof paths / sizeof paths[0])];
            json_object_set_new(
                a, "path", json_string(strcmp(pth, "@ABS@") == 0 ? abs : pth));
        } else
            json_object_set_new(a, arg_names[k], rnd_value());
    }
    return a;
}

static json_t *rnd_annotations(void)
{
    if (pick(3) == 0)
        return NULL;
    json_t *a = json_object(); /* new ref */
    for (int h = 0; h < 4; h++)
        if (pick(3) == 0)
            json_object_set_new(a, ref_hints[h], json_boolean(rnd() & 1));
        else if (pick(8) == 0)
            json_object_set_new(a, ref_hints[h], json_string("yes"));
    return a;
}

static void test_against_reference(void **state)
{
    (void)state;
#ifdef TG_TEST_ASAN
    long calls = 100000;
#else
    long calls = 1000000;
#endif
    const char *env = getenv("TG_POLICY_RANDOM_CALLS");
    if (env != NULL && *env != '\0')
        calls = strtol(env, NULL, 10);
    const char *seed_env = getenv("TG_POLICY_SEED");
    uint64_t seed = seed_env ? strtoull(seed_env, NULL, 10)
                             : (uint64_t)time(NULL) * 2654435761u + 1;
    rnd_state = seed ? seed : 1;
    struct tree t;
    tree_make(&t);
    char ws_real[PATH_MAX], out_real[PATH_MAX + 8], abs[600];
    assert_non_null(realpath(t.ws, ws_real));
    snprintf(out_real, sizeof out_real, "%s/out", ws_real);
    snprintf(abs, sizeof abs, "%s/out/abs", t.ws);
    /* A fresh rule set per call by default, as the issue counts them;
     * several calls per set make a quicker, wider pass over calls. */
    long per_set = 1;
    const char *per_env = getenv("TG_POLICY_CALLS_PER_SET");
    if (per_env != NULL && strtol(per_env, NULL, 10) > 0)
        per_set = strtol(per_env, NULL, 10);
    long sets = 0, mismatches = 0, decided_by_rule = 0, errors = 0;
    for (long i = 0; i < calls; i += per_set, sets++) {
        json_t *pol = rnd_policy(abs); /* new ref */
        tg__policy *p = NULL;
        tg_error err = {0};
        if (tg__policy_compile(pol, &p, &err) != 0)
            fail_msg("random policy did not compile: %s", err.message);
        for (long k = 0; k < per_set; k++) {
            json_t *args = rnd_args(abs);    /* new ref */
            json_t *ann = rnd_annotations(); /* new ref */
            const char *tool =
                call_tools[pick(sizeof call_tools / sizeof call_tools[0])];
            const char *caller = call_callers[pick(4)];
            bool in_out = pick(4) == 0;
            tg__policy_input in = {tool, caller, ann,
                                   args, t.ws,   in_out ? "out" : NULL};
            tg__policy_verdict v;
            int rc = tg__policy_decide(p, &in, &v, NULL, &err);
            const char *want_d;
            long want = ref_decide(pol, tool, caller, ann, args, ws_real,
                                   in_out ? out_real : ws_real, &want_d);
            if (rc != 0 || want == -2) {
                errors++;
                if ((rc != 0) != (want == -2)) {
                    char *pt = json_dumps(pol, JSON_COMPACT);
                    fail_msg("seed %llu: engine rc %d (%s), reference %ld: "
                             "%s",
                             (unsigned long long)seed, rc, err.message, want,
                             pt);
                }
            } else if (v.rule != want ||
                       strcmp(tg__policy_decision_name(v.decision), want_d) !=
                           0) {
                mismatches++;
                char *pt = json_dumps(pol, JSON_COMPACT);
                char *at = json_dumps(args, JSON_COMPACT);
                fail_msg("seed %llu: engine rule %ld, reference %ld (%s)\n"
                         "policy %s\ntool %s caller %s args %s cwd %s",
                         (unsigned long long)seed, v.rule, want, want_d, pt,
                         tool, caller ? caller : "(none)", at,
                         in_out ? "out" : "-");
            }
            decided_by_rule += v.rule >= 0;
            json_decref(args);
            json_decref(ann);
        }
        tg__policy_free(p);
        json_decref(pol);
    }
    print_message("reference check: %ld calls over %ld random rule sets, "
                  "%ld decided by a rule, %ld errors (both agree), "
                  "%ld mismatches (seed %llu)\n",
                  sets * per_set, sets, decided_by_rule, errors, mismatches,
                  (unsigned long long)seed);
    /* The random sets must exercise both outcomes, or the check says
     * little. */
    assert_true(decided_by_rule > sets * per_set / 10);
    assert_true(decided_by_rule < sets * per_set * 9 / 10);
    tree_remove(&t);
}

static int reachable(const tg__policy *p, const char *tool, const char *caller,
                     const char *annotations)
{
    json_t *a = annotations ? load(annotations) : NULL;
    tg__policy_input in = {.tool = tool, .caller = caller, .annotations = a};
    tg_error err = {0};
    int rc = tg__policy_reachable(p, &in, &err);
    json_decref(a);
    return rc;
}

/* A tool some call of which may run is listed; one every call of which is
 * denied is not - read as a decision reads, a rule with argument
 * conditions may or may not apply. */
static void test_reachable(void **state)
{
    (void)state;
    tg__policy *p = compile_ok(
        "{\"default\":\"allow\",\"rules\":["
        "{\"tool\":\"rm\",\"decision\":\"deny\"},"
        "{\"tool\":\"write_*\",\"caller\":\"guest\",\"decision\":\"deny\"},"
        "{\"tool\":\"fetch\",\"args\":{\"url\":{\"matches\":\"^http:\"}},"
        "\"decision\":\"deny\"},"
        "{\"tool\":\"edit\",\"args\":{\"path\":{\"matches\":\"^/tmp/\"}},"
        "\"decision\":\"allow\"},"
        "{\"tool\":\"edit\",\"decision\":\"deny\"},"
        "{\"tool\":\"shell\",\"decision\":\"ask\"},"
        "{\"tool\":\"shell\",\"decision\":\"deny\"},"
        "{\"annotations\":{\"destructiveHint\":true},\"caller\":\"guest\","
        "\"decision\":\"deny\"}]}");
    assert_int_equal(reachable(p, "rm", "alice", NULL), 0);
    assert_int_equal(reachable(p, "write_file", "guest", NULL), 0);
    assert_int_equal(reachable(p, "write_file", "alice", NULL), 1);
    assert_int_equal(reachable(p, "write_file", NULL, NULL), 1);
    /* denied for some arguments only: listed */
    assert_int_equal(reachable(p, "fetch", "alice", NULL), 1);
    /* allowed for some arguments before a deny of the rest: listed */
    assert_int_equal(reachable(p, "edit", "alice", NULL), 1);
    /* asked about first */
    assert_int_equal(reachable(p, "shell", "alice", NULL), 1);
    /* by annotation: MCP's default destructiveHint is true */
    assert_int_equal(reachable(p, "other", "guest", NULL), 0);
    assert_int_equal(
        reachable(p, "other", "guest", "{\"destructiveHint\":false}"), 1);
    tg__policy_free(p);
    /* default deny: reachable only through a rule that may allow or ask */
    p = compile_ok("{\"default\":\"deny\",\"rules\":["
                   "{\"tool\":\"a\",\"args\":{\"n\":{\"equals\":1}},"
                   "\"decision\":\"deny\"},"
                   "{\"tool\":\"b\",\"args\":{\"n\":{\"equals\":1}},"
                   "\"decision\":\"allow\"}]}");
    assert_int_equal(reachable(p, "a", NULL, NULL), 0);
    assert_int_equal(reachable(p, "b", NULL, NULL), 1);
    assert_int_equal(reachable(p, "c", NULL, NULL), 0);
    tg__policy_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_absent_policy),
        cmocka_unit_test(test_first_match_order),
        cmocka_unit_test(test_globs),
        cmocka_unit_test(test_annotation_defaults),
        cmocka_unit_test(test_arg_conditions),
        cmocka_unit_test(test_regex_limit),
        cmocka_unit_test(test_under),
        cmocka_unit_test(test_reasons_and_explain),
        cmocka_unit_test(test_concurrent),
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_reachable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
