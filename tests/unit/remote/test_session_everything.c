/* SPDX-License-Identifier: MIT */
/*
 * test_session_everything.c - the MCP client session (session.h) over the
 * stdio transport against software nobody here wrote, pinned in
 * tests/interop/package-lock.json and installed by `make interop-deps`:
 * @modelcontextprotocol/server-everything in its stdio mode - version
 * negotiation against an SDK server, its tool list (many tools, more after
 * a list change once the client's capabilities are known), echo, a
 * long-running operation with progress, a deadline, tools that fail,
 * images and structured content, the roots it asks for (answered with the
 * configured root only), an elicitation answered later by the owner - and
 * @modelcontextprotocol/server-filesystem, which replaces its directories
 * with the client's roots. Skips (77) when the npm packages are not
 * installed, except under CI=true.
 */
#include "session_harness.h"

typedef struct env {
    char dir[TG_TEST_DIR_MIN];
    char bin[1024];
    char home[4096];
    char path[4096];
    const char *envp[3];
    const char *argv[3];
} env;

static int setup(void **state)
{
    if (tg_test_dir_setup(state, sizeof(env), "tg-reverything-") != 0)
        return -1;
    env *e = *state;
    tg_test_source_path(
        e->bin, sizeof e->bin,
        "tests/interop/node_modules/.bin/mcp-server-everything");
    h_env(e->home, e->path, e->envp, e->dir);
    e->argv[0] = e->bin;
    e->argv[1] = "stdio";
    e->argv[2] = NULL;
    return 0;
}

static int teardown(void **state)
{
    return tg_test_dir_teardown(state);
}

static bool changed(harness *h, void *arg)
{
    (void)arg;
    return h->nchanged > 0;
}

static bool log_has(harness *h, void *arg)
{
    return strstr(h->server_logs, arg) != NULL;
}

static bool elicited(harness *h, void *arg)
{
    (void)arg;
    return h->nelicit > 0;
}

static void test_everything(void **state)
{
    env *e = *state;
    harness h;
    h_init(&h);
    char root[256];
    snprintf(root, sizeof root, "file://%s", e->dir);
    const tg__rroot roots[] = {{.uri = root, .name = "work"}};
    tg__rsession_opts o = {.roots = roots, .nroots = 1};
    h_connect(&h, &o, e->argv, e->envp);
    /* The SDK server does not speak 2026-07-28: server/discover is refused
     * and initialize settles on the newest it has. */
    assert_int_equal(tg__rsession_version(h.s), TG_MCP_V2025_11_25);
    assert_non_null(strstr(tg__rsession_server_info(h.s), "everything"));
    assert_non_null(strstr(tg__rsession_capabilities(h.s), "listChanged"));

    /* It asks for the roots once initialized and says how many it got. */
    assert_true(h_run_until(&h, log_has, "1 root(s)", 20000));
    /* Tools that depend on the client's capabilities come with a list
     * change. */
    h_run_until(&h, changed, NULL, 5000);
    assert_true(h.nchanged >= 1);

    h_list(&h);
    assert_non_null(h.list);
    assert_true(h.list->n >= 10);
    const tg__rtool *echo = h_tool(&h, "echo");
    assert_non_null(echo);
    assert_non_null(echo->description);
    assert_non_null(strstr(echo->input_schema, "message"));
    const tg__rtool *lro = h_tool(&h, "trigger-long-running-operation");
    assert_non_null(lro);
    assert_non_null(lro->title);
    assert_non_null(lro->annotations);
    assert_non_null(strstr(lro->annotations, "readOnlyHint"));
    assert_non_null(h_tool(&h, "trigger-elicitation-request"));
    assert_non_null(h_tool(&h, "get-roots-list"));
    const tg__rtool *structured = h_tool(&h, "get-structured-content");
    assert_non_null(structured);
    assert_non_null(structured->output_schema);

    rec_call c = {0};
    h_call_wait(&h, &c, "echo", "{\"message\":\"hello from toolgate\"}", false);
    assert_int_equal(c.status, TG_RCALL_RESULT);
    assert_false(c.is_error);
    assert_non_null(strstr(c.result, "Echo: hello from toolgate"));
    rec_cleanup(&c);

    h_call_wait(&h, &c, "trigger-long-running-operation",
                "{\"duration\":1,\"steps\":4}", true);
    assert_int_equal(c.status, TG_RCALL_RESULT);
    assert_int_equal(c.nprogress, 4);
    assert_true(c.last_progress == 4 && c.last_total == 4);
    assert_non_null(strstr(c.result, "Long running operation completed"));
    rec_cleanup(&c);

    /* Bad arguments: a tool error (isError) or a JSON-RPC error, never a
     * result that passes for success. */
    h_call_wait(&h, &c, "get-sum", "{\"a\":\"one\",\"b\":2}", false);
    assert_true((c.status == TG_RCALL_RESULT && c.is_error) ||
                c.status == TG_RCALL_RPC_ERROR);
    rec_cleanup(&c);
    h_call_wait(&h, &c, "no-such-tool", "{}", false);
    assert_true((c.status == TG_RCALL_RESULT && c.is_error) ||
                c.status == TG_RCALL_RPC_ERROR);
    rec_cleanup(&c);

    /* Content blocks and structured content pass through as sent. */
    h_call_wait(&h, &c, "get-tiny-image", "{}", false);
    assert_int_equal(c.status, TG_RCALL_RESULT);
    assert_non_null(strstr(c.result, "\"type\":\"image\""));
    assert_non_null(strstr(c.result, "\"mimeType\":\"image/png\""));
    rec_cleanup(&c);
    h_call_wait(&h, &c, "get-structured-content", "{\"location\":\"New York\"}",
                false);
    assert_int_equal(c.status, TG_RCALL_RESULT);
    assert_non_null(strstr(c.result, "\"structuredContent\""));
    rec_cleanup(&c);

    /* The roots it was given are the configured one, not "/". */
    h_call_wait(&h, &c, "get-roots-list", "{}", false);
    assert_int_equal(c.status, TG_RCALL_RESULT);
    assert_non_null(strstr(c.result, e->dir));
    rec_cleanup(&c);

    /* An elicitation answered later, by the owner. */
    uint64_t eid =
        h_call(&h, &c, "trigger-elicitation-request", "{}", 0, false);
    assert_true(h_run_until(&h, elicited, NULL, 20000));
    assert_non_null(strstr(h.elicit_params, "requestedSchema"));
    /* related to its call: by the call's stream (HTTP), or as the only
     * call in flight (stdio) */
    assert_int_equal(h.elicit_call, eid);
    const char *answer =
        "{\"action\":\"accept\",\"content\":{\"name\":\"Ada Lovelace\","
        "\"check\":true}}";
    tg_error err;
    assert_int_equal(tg__rsession_elicit_reply(h.s, h.elicit_ticket, answer,
                                               strlen(answer), &err),
                     0);
    assert_int_equal(tg__rsession_elicit_reply(h.s, h.elicit_ticket, answer,
                                               strlen(answer), &err),
                     TG_ENOTFOUND);
    assert_true(h_run_until(&h, h_call_done, &c, 20000));
    assert_int_equal(c.status, TG_RCALL_RESULT);
    assert_non_null(strstr(c.result, "Ada Lovelace"));
    rec_cleanup(&c);

    /* A call cut short by its deadline. */
    h_call(&h, &c, "trigger-long-running-operation",
           "{\"duration\":30,\"steps\":3}", (unsigned)tg_test_ms(500), true);
    assert_true(h_run_until(&h, h_call_done, &c, 10000));
    assert_int_equal(c.status, TG_RCALL_TIMEOUT);
    rec_cleanup(&c);

    h_finish(&h);
    assert_int_equal(h.nclosed, 1);
    assert_int_equal(h.closed_err.code, 0);
}

static bool stderr_seen(harness *h, void *arg)
{
    return h->nstderr >= *(int *)arg;
}

/* server-filesystem replaces the directories it was started with by the
 * client's roots: it must get the configured root, and only that. */
static void test_filesystem_roots(void **state)
{
    env *e = *state;
    char bin[1024], started[600], rootdir[600], uri[700], file[700];
    tg_test_source_path(
        bin, sizeof bin,
        "tests/interop/node_modules/.bin/mcp-server-filesystem");
    snprintf(started, sizeof started, "%s/started", e->dir);
    snprintf(rootdir, sizeof rootdir, "%s/root", e->dir);
    assert_int_equal(mkdir(started, 0700), 0);
    assert_int_equal(mkdir(rootdir, 0700), 0);
    snprintf(file, sizeof file, "%s/inside.txt", rootdir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("inside the root\n", f);
    fclose(f);
    snprintf(uri, sizeof uri, "file://%s", rootdir);
    const char *argv[] = {bin, started, NULL};
    harness h;
    h_init(&h);
    const tg__rroot roots[] = {{.uri = uri, .name = "root"}};
    tg__rsession_opts o = {.roots = roots, .nroots = 1};
    h_connect(&h, &o, argv, e->envp);
    /* it logs on stderr once it has taken the roots */
    int lines = 2;
    h_run_until(&h, stderr_seen, &lines, 5000);
    rec_call c = {0};
    h_call_wait(&h, &c, "list_allowed_directories", "{}", false);
    assert_int_equal(c.status, TG_RCALL_RESULT);
    assert_non_null(strstr(c.result, rootdir));
    assert_null(strstr(c.result, started));
    rec_cleanup(&c);
    char args[800];
    snprintf(args, sizeof args, "{\"path\":\"%s\"}", file);
    h_call_wait(&h, &c, "read_text_file", args, false);
    assert_int_equal(c.status, TG_RCALL_RESULT);
    assert_false(c.is_error);
    assert_non_null(strstr(c.result, "inside the root"));
    rec_cleanup(&c);
    /* outside the root: refused by the server */
    h_call_wait(&h, &c, "list_directory", "{\"path\":\"/\"}", false);
    assert_true((c.status == TG_RCALL_RESULT && c.is_error) ||
                c.status == TG_RCALL_RPC_ERROR);
    rec_cleanup(&c);
    h_finish(&h);
    assert_int_equal(h.nclosed, 1);
}

int main(void)
{
    char bin[1024];
    tg_test_source_path(
        bin, sizeof bin,
        "tests/interop/node_modules/.bin/mcp-server-everything");
    if (access(bin, X_OK) != 0) {
        if (tg_test_in_ci()) {
            fprintf(stderr, "FAIL: %s is missing (run: make interop-deps)\n",
                    bin);
            return 1;
        }
        printf("SKIP: the interop npm packages are not installed (run: make "
               "interop-deps)\n");
        return TG_TEST_SKIP;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_everything, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filesystem_roots, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
