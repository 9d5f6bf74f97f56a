/* SPDX-License-Identifier: MIT */
/*
 * test_remote_source.c - MCP servers as a tool source of the runtime
 * (exec/remote_*.c) through the public API, against real servers:
 * `toolgate serve --stdio` with the echo built-in, and the fixture server
 * mcp_tools (tests/fixtures). A source added to a live runtime starts
 * lazily at the first turn naming its prefix; tg_runtime_sources shows its
 * state, protocol, server and tools; tg_runtime_sources_wait starts every
 * source; a crashed server is restarted (after its backoff) by the next
 * call; a removed source's tools are gone and its server ends; a list
 * change registers the new tool for the next turn; progress extends a
 * deadline up to max_timeout_ms, and only then; no descriptor is left
 * open once the runtime is freed; a submitted turn naming a source's tool
 * before the source listed its tools waits for the list.
 */
#include <dirent.h>
#include <poll.h>
#include "tg_test_exec.h"

/* How many descriptors the process has open. */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int n = 0;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

static int setup(void **state)
{
    return tg_test_fx_setup(state, "tg_rsrc");
}

/* The runtime of a workspace in env's directory, journal off. */
static tg_runtime *runtime(const tg_test_fx_env *env)
{
    char text[PATH_MAX + 200];
    snprintf(text, sizeof text,
             "{\"workspace\":\"%s\",\"journal\":null,\"builtin_tools\":[],"
             "\"envelope\":false,\"limits\":{\"timeout_ms\":%ld}}",
             env->dir, 20000 * tg_test_time_scale());
    return tg_test_runtime(text, NULL);
}

/* The sources as JSON (new ref). */
static json_t *sources(tg_runtime *rt)
{
    char *text = NULL;
    tg_error err = {0};
    assert_int_equal(tg_runtime_sources(rt, &text, &err), 0);
    json_t *a = json_loads(text, 0, NULL);
    tg_free(text);
    assert_non_null(a);
    return a;
}

/* One call of tool with args on rt; the outcome, and the payload's JSON
 * text in *payload (the caller frees). */
static tg_outcome call(tg_runtime *rt, const char *tool, const char *args,
                       char **payload)
{
    tg_turn *t = tg__turn_new("toolgate");
    assert_non_null(t);
    tg_test_add(t, "c1", tool, args);
    tg_test_run(rt, t);
    const tg_result *r = tg_test_res(t, 0);
    tg_outcome o = tg_result_outcome(r);
    if (payload != NULL)
        *payload = strdup(tg_result_payload_json(r));
    tg_turn_free(t);
    return o;
}

static void serve_as_source(void **state)
{
    tg_test_fx_env *env = *state;
    const char *tg = getenv("TOOLGATE");
    assert_non_null(tg);
    /* what a first runtime opens for the process's life (libuv's signal
     * pipe) is not the source's */
    tg_runtime_free(runtime(env));
    int fds = open_fds();
    tg_runtime *rt = runtime(env);
    char entry[PATH_MAX * 3];
    tg_error err = {0};
    /* the server needs a configuration with echo: give it one */
    char cfgpath[PATH_MAX + 16];
    snprintf(cfgpath, sizeof cfgpath, "%s/inner.json", env->dir);
    FILE *f = fopen(cfgpath, "w");
    assert_non_null(f);
    /* its spool off: toolgate's own files are hidden from a sandboxed
     * server */
    fputs("{\"builtin_tools\":[\"echo\"],\"journal\":null,\"spool\":null,"
          "\"envelope\":false}",
          f);
    fclose(f);
    snprintf(entry, sizeof entry,
             "{\"name\":\"tg\",\"mcp\":{\"command\":[\"%s\",\"serve\","
             "\"--stdio\",\"--config\",\"%s\"]}}",
             tg, cfgpath);
    assert_int_equal(tg_runtime_add_source(rt, entry, &err), 0);
    assert_int_equal(tg_runtime_add_source(rt, entry, &err), TG_EEXIST);
    assert_int_equal(
        tg_runtime_add_source(rt, "{\"name\":\"x\",\"mcp\":{}}", &err),
        TG_ECONFIG);
    assert_non_null(strstr(err.message, "needs exactly one of"));
    assert_int_equal(tg_runtime_add_source(rt, "[", &err), TG_ECONFIG);

    json_t *s = sources(rt);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(s, 0), "state")),
        "idle");
    json_decref(s);

    /* lazy: the first call naming the prefix starts it */
    char *p = NULL;
    assert_int_equal(call(rt, "tg__echo", "{\"text\":\"hi\"}", &p),
                     TG_OUTCOME_SUCCESS);
    assert_string_equal(p,
                        "{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}");
    free(p);
    s = sources(rt);
    json_t *s0 = json_array_get(s, 0); /* borrowed */
    assert_string_equal(json_string_value(json_object_get(s0, "state")),
                        "ready");
    assert_string_equal(json_string_value(json_object_get(s0, "transport")),
                        "stdio");
    assert_non_null(json_string_value(json_object_get(s0, "protocol")));
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(s0, "server"), "name")),
                        "toolgate");
    bool found = false;
    size_t i;
    json_t *t; /* borrowed */
    json_array_foreach(json_object_get(s0, "tools"), i, t)
    {
        if (strcmp(json_string_value(json_object_get(t, "name")), "tg__echo") ==
            0) {
            found = true;
            assert_string_equal(json_string_value(json_object_get(t, "state")),
                                "enabled");
            assert_string_equal(json_string_value(json_object_get(t, "remote")),
                                "echo");
        }
    }
    assert_true(found);
    json_decref(s);

    /* its tools are the runtime's */
    char *defs = NULL;
    assert_int_equal(tg_runtime_tools(rt, "mcp", &defs, &err), 0);
    assert_non_null(strstr(defs, "\"tg__echo\""));
    tg_free(defs);

    /* removed: its tools are gone */
    assert_int_equal(tg_runtime_remove_source(rt, "tg", &err), 0);
    assert_int_equal(tg_runtime_remove_source(rt, "tg", &err), TG_ENOTFOUND);
    assert_int_equal(call(rt, "tg__echo", "{\"text\":\"hi\"}", &p),
                     TG_OUTCOME_ERROR);
    assert_non_null(strstr(p, "UNKNOWN_TOOL"));
    free(p);
    s = sources(rt);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(s, 0), "state")),
        "removed");
    json_decref(s);
    tg_runtime_free(rt);
    assert_int_equal(open_fds(), fds);
}

static void restart_after_crash(void **state)
{
    tg_test_fx_env *env = *state;
    tg_runtime *rt = runtime(env);
    char entry[PATH_MAX + 100];
    snprintf(entry, sizeof entry,
             "{\"name\":\"fx\",\"mcp\":{\"command\":[\"%s/mcp_tools\"],"
             "\"start\":\"eager\"}}",
             env->fx);
    tg_error err = {0};
    assert_int_equal(tg_runtime_add_source(rt, entry, &err), 0);
    assert_int_equal(tg_runtime_sources_wait(rt, 0, &err), 0);
    json_t *s = sources(rt);
    json_t *s0 = json_array_get(s, 0); /* borrowed */
    assert_string_equal(json_string_value(json_object_get(s0, "state")),
                        "ready");
    assert_int_equal(json_integer_value(json_object_get(s0, "starts")), 1);
    /* the disabled tool says why */
    size_t i;
    json_t *t; /* borrowed */
    json_array_foreach(json_object_get(s0, "tools"), i, t)
    {
        if (strcmp(json_string_value(json_object_get(t, "remote")),
                   "bad_schema") == 0)
            assert_string_equal(json_string_value(json_object_get(t, "state")),
                                "disabled");
    }
    json_decref(s);

    char *p = NULL;
    assert_int_equal(call(rt, "fx__crash", "{}", &p), TG_OUTCOME_ERROR);
    assert_non_null(strstr(p, "INTERRUPTED"));
    free(p);
    s = sources(rt);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(s, 0), "state")),
        "failed");
    json_decref(s);
    /* the next call restarts it (after the backoff) and goes through */
    assert_int_equal(call(rt, "fx__greet", "{\"name\":\"again\"}", &p),
                     TG_OUTCOME_SUCCESS);
    assert_non_null(strstr(p, "hello again"));
    free(p);
    s = sources(rt);
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(s, 0), "starts")), 2);
    json_decref(s);
    tg_runtime_free(rt);
}

/* A server that cannot start: calls end SOURCE_UNAVAILABLE, said why. */
static void cannot_start(void **state)
{
    tg_test_fx_env *env = *state;
    tg_runtime *rt = runtime(env);
    tg_error err = {0};
    assert_int_equal(
        tg_runtime_add_source(
            rt,
            "{\"name\":\"no\",\"mcp\":{\"command\":[\"/nonexistent/srv\"]}}",
            &err),
        0);
    char *p = NULL;
    assert_int_equal(call(rt, "no__x", "{}", &p), TG_OUTCOME_ERROR);
    assert_non_null(strstr(p, "SOURCE_UNAVAILABLE"));
    assert_non_null(strstr(p, "/nonexistent/srv"));
    free(p);
    tg_runtime_free(rt);
}

/* The fixture as an eager source of a fresh runtime with extra options
 * (JSON members, may be ""). */
static tg_runtime *fixture(const tg_test_fx_env *env, const char *extra)
{
    tg_runtime *rt = runtime(env);
    char entry[PATH_MAX + 300];
    snprintf(entry, sizeof entry,
             "{\"name\":\"fx\",\"mcp\":{\"command\":[\"%s/mcp_tools\"]%s}}",
             env->fx, extra);
    tg_error err = {0};
    if (tg_runtime_add_source(rt, entry, &err) != 0)
        fail_msg("%s", err.message);
    assert_int_equal(tg_runtime_sources_wait(rt, 0, &err), 0);
    return rt;
}

static void list_changed(void **state)
{
    tg_test_fx_env *env = *state;
    int fds = open_fds();
    tg_runtime *rt = fixture(env, "");
    char *p = NULL;
    assert_int_equal(call(rt, "fx__grown", "{}", &p), TG_OUTCOME_ERROR);
    assert_non_null(strstr(p, "UNKNOWN_TOOL"));
    free(p);
    assert_int_equal(call(rt, "fx__grow", "{}", NULL), TG_OUTCOME_SUCCESS);
    /* the list change is read before (or while) the next turn is checked */
    assert_int_equal(call(rt, "fx__grown", "{}", &p), TG_OUTCOME_SUCCESS);
    assert_non_null(strstr(p, "I am new"));
    free(p);
    tg_runtime_free(rt);
    assert_int_equal(open_fds(), fds);
}

/* 6 x scale steps of 100 ms under a deadline of 300 ms x scale (the work
 * twice the deadline): the deadline passes without max_timeout_ms; with
 * it, each progress notification gives the call its whole deadline again
 * (3 steps' worth) and it ends. */
static void progress_extends(void **state)
{
    tg_test_fx_env *env = *state;
    long scale = tg_test_time_scale();
    char extra[200];
    snprintf(extra, sizeof extra, ",\"timeout_ms\":%ld", 300 * scale);
    tg_runtime *rt = fixture(env, extra);
    char *p = NULL;
    char args[64];
    snprintf(args, sizeof args, "{\"n\":%ld}", 6 * scale);
    assert_int_equal(call(rt, "fx__steps", args, &p), TG_OUTCOME_TIMEOUT);
    free(p);
    tg_runtime_free(rt);
    snprintf(extra, sizeof extra, ",\"timeout_ms\":%ld,\"max_timeout_ms\":%ld",
             300 * scale, 20000 * scale);
    rt = fixture(env, extra);
    assert_int_equal(call(rt, "fx__steps", args, &p), TG_OUTCOME_SUCCESS);
    assert_non_null(strstr(p, "done"));
    free(p);
    tg_runtime_free(rt);
}

/* What a submitted turn saw: its one result, and whether it is done. */
typedef struct submitted {
    tg_turn *turn;
    int done;
} submitted;

static void on_submitted_done(void *ud, tg_turn *t, int status,
                              const tg_error *err)
{
    (void)t;
    (void)err;
    assert_int_equal(status, 0);
    ((submitted *)ud)->done = 1;
}

/* Submits one call of tool (id `id`) to rt, served like a server would. */
static void submit_one(tg_runtime *rt, submitted *s, const char *id,
                       const char *tool, const char *args)
{
    static const tg_turn_ops ops = {NULL, NULL, NULL, on_submitted_done};
    tg_error err = {0};
    memset(s, 0, sizeof *s);
    assert_int_equal(
        tg_turn_new_call("mcp", id, tool, args, strlen(args), &s->turn, &err),
        0);
    assert_int_equal(tg_runtime_submit(rt, s->turn, &ops, s, &err), 0);
}

/* Steps rt from a poll loop until s is done, or for `ms` when ms > 0 and
 * s is not done by then. */
static void drive(tg_runtime *rt, submitted *s, long ms)
{
    long scale = tg_test_time_scale();
    double end = tg_test_now_ms() + (double)(ms > 0 ? ms : 60000 * scale);
    while (!s->done) {
        (void)tg_runtime_step(rt);
        if (tg_test_now_ms() > end) {
            if (ms > 0)
                return;
            fail_msg("the submitted turn did not end in time");
        }
        struct pollfd p = {.fd = tg_runtime_fd(rt), .events = POLLIN};
        int t = tg_runtime_timeout(rt);
        (void)poll(&p, 1, t < 0 || t > 50 ? 50 : t);
    }
}

/* The payload of s's result, with its outcome checked. */
static const char *submitted_payload(const submitted *s, tg_outcome want)
{
    const tg_result *r = tg_turn_result(s->turn, 0);
    assert_non_null(r);
    assert_int_equal(tg_result_outcome(r), want);
    return tg_result_payload_json(r);
}

/* A turn submitted (as toolgate serve does) naming a tool of a source that
 * has not listed its tools yet waits for the list, then is checked like
 * any other call; one canceled meanwhile ends canceled, not started; one
 * whose source fails to start ends SOURCE_UNAVAILABLE saying why. */
static void submitted_waits(void **state)
{
    tg_test_fx_env *env = *state;
    long scale = tg_test_time_scale();
    tg_runtime *rt = runtime(env);
    tg_error err = {0};
    char entry[PATH_MAX + 200];
    snprintf(entry, sizeof entry,
             "{\"name\":\"fx\",\"mcp\":{\"command\":[\"%s/mcp_tools\"]}}",
             env->fx);
    assert_int_equal(tg_runtime_add_source(rt, entry, &err), 0);
    submitted a;
    submit_one(rt, &a, "a1", "fx__greet", "{\"name\":\"live\"}");
    drive(rt, &a, 0);
    assert_non_null(
        strstr(submitted_payload(&a, TG_OUTCOME_SUCCESS), "hello live"));
    tg_turn_free(a.turn);

    /* a server that never answers initialize: the call waits (connect_ms
     * at its maximum, 10 minutes, whatever the scale) until it is canceled
     * by id */
    snprintf(entry, sizeof entry,
             "{\"name\":\"mute\",\"mcp\":{\"command\":[\"%s/sleep_ms\","
             "\"600000\"],\"connect_ms\":600000}}",
             env->fx);
    assert_int_equal(tg_runtime_add_source(rt, entry, &err), 0);
    submitted b;
    submit_one(rt, &b, "b1", "mute__x", "{}");
    drive(rt, &b, 200);
    assert_false(b.done);
    assert_int_equal(tg_runtime_cancel(rt, "b1", "user", "enough", NULL), 0);
    drive(rt, &b, 0);
    const tg_result *r = tg_turn_result(b.turn, 0);
    assert_int_equal(tg_result_outcome(r), TG_OUTCOME_CANCELED);
    assert_int_equal(tg_result_execution(r), TG_EXECUTION_NOT_STARTED);
    tg_turn_free(b.turn);

    /* one whose negotiation's deadline passes: the wait ends with it */
    snprintf(entry, sizeof entry,
             "{\"name\":\"late\",\"mcp\":{\"command\":[\"%s/sleep_ms\","
             "\"600000\"],\"connect_ms\":%ld}}",
             env->fx, 300 * scale);
    assert_int_equal(tg_runtime_add_source(rt, entry, &err), 0);
    submitted c;
    submit_one(rt, &c, "c1", "late__x", "{}");
    drive(rt, &c, 0);
    const char *p = submitted_payload(&c, TG_OUTCOME_ERROR);
    assert_non_null(strstr(p, "SOURCE_UNAVAILABLE"));
    assert_non_null(strstr(p, "failed"));
    tg_turn_free(c.turn);

    /* freed while a turn waits for a source: it ends, canceled */
    submitted d;
    submit_one(rt, &d, "d1", "mute__y", "{}");
    drive(rt, &d, 100);
    assert_false(d.done);
    tg_runtime_free(rt);
    assert_true(d.done);
    r = tg_turn_result(d.turn, 0);
    assert_non_null(r);
    assert_int_equal(tg_result_outcome(r), TG_OUTCOME_CANCELED);
    tg_turn_free(d.turn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(serve_as_source, setup,
                                        tg_test_dir_teardown),
        cmocka_unit_test_setup_teardown(restart_after_crash, setup,
                                        tg_test_dir_teardown),
        cmocka_unit_test_setup_teardown(cannot_start, setup,
                                        tg_test_dir_teardown),
        cmocka_unit_test_setup_teardown(list_changed, setup,
                                        tg_test_dir_teardown),
        cmocka_unit_test_setup_teardown(progress_extends, setup,
                                        tg_test_dir_teardown),
        cmocka_unit_test_setup_teardown(submitted_waits, setup,
                                        tg_test_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
