/* SPDX-License-Identifier: MIT */
/*
 * test_elicit.c - an MCP server behind the runtime asks its user for input
 * while it runs a call (exec/elicit.c, through the public API), against
 * the fixture server mcp_tools (its `elicit` tool: a form asking for a
 * required "name" and an "age" >= 0; its result says what came back):
 * without a handler the question is declined; a handler answering from
 * another thread sends the content upstream; content that does not match
 * the requestedSchema is refused (the elicitation stays the handler's);
 * a call whose deadline passes while the question waits ends, and the
 * late answer is accepted and ignored; a runtime freed with a question
 * unanswered lets go of it, and the answer after that too. Every call's
 * decisions.elicitation says what happened, without the values.
 */
#include <poll.h>
#include <pthread.h>

#include "tg_test_exec.h"
/* after: it needs cmocka */
#include "tg_json_test.h"

static int setup(void **state)
{
    return tg_test_fx_setup(state, "tg_elicit");
}

/* A runtime with the fixture as its source "fx", calls' deadline ms. */
static tg_runtime *fixture(const tg_test_fx_env *env, long ms)
{
    char text[PATH_MAX * 2 + 300];
    snprintf(text, sizeof text,
             "{\"workspace\":\"%s\",\"journal\":null,\"builtin_tools\":[],"
             "\"envelope\":false,\"limits\":{\"timeout_ms\":%ld},"
             "\"tools\":[{\"name\":\"fx\",\"mcp\":{\"command\":"
             "[\"%s/mcp_tools\"]}}]}",
             env->dir, ms, env->fx);
    tg_runtime *rt = tg_test_runtime(text, NULL);
    tg_error err = {0};
    assert_int_equal(tg_runtime_sources_wait(rt, 0, &err), 0);
    return rt;
}

/* What a handler saw and did. */
typedef struct seen {
    int n;
    tg_elicit *el; /* kept: answered later */
    char call_id[64], source[32], mode[16], message[64];
    char schema[512], params[1024];
    const char *content; /* answer from a thread with this, or keep */
    pthread_t thread;
    bool threaded;
} seen;

static void *answer_later(void *arg)
{
    seen *s = arg;
    tg_error err;
    if (tg_elicit_answer(s->el, TG_ELICIT_ACCEPT, s->content,
                         "accepted by a test thread", &err) != 0)
        fail_msg("tg_elicit_answer: %s", err.message);
    return NULL;
}

static void on_elicit(void *ud, tg_elicit *el)
{
    seen *s = ud;
    s->n++;
    s->el = el;
    snprintf(s->call_id, sizeof s->call_id, "%s", tg_elicit_call_id(el));
    snprintf(s->source, sizeof s->source, "%s", tg_elicit_source(el));
    snprintf(s->mode, sizeof s->mode, "%s", tg_elicit_mode(el));
    snprintf(s->message, sizeof s->message, "%s", tg_elicit_message(el));
    snprintf(s->schema, sizeof s->schema, "%s", tg_elicit_schema(el));
    snprintf(s->params, sizeof s->params, "%s", tg_elicit_params(el));
    if (s->content != NULL) {
        assert_int_equal(pthread_create(&s->thread, NULL, answer_later, s), 0);
        s->threaded = true;
    }
}

/* One call of fx__elicit; its payload and decisions.elicitation[0] as
 * JSON (new refs). */
static tg_outcome call(tg_runtime *rt, json_t **payload, json_t **decision)
{
    tg_turn *t = tg__turn_new("toolgate");
    assert_non_null(t);
    tg_test_add(t, "c1", "fx__elicit", "{}");
    tg_test_run(rt, t);
    const tg_result *r = tg_test_res(t, 0);
    tg_outcome o = tg_result_outcome(r);
    *payload = tg_test_json(tg_result_payload_json(r));
    char *rec = tg_result_to_json(r);
    json_t *j = tg_test_json(rec); /* new ref */
    tg_free(rec);
    json_t *el = json_object_get(json_object_get(j, "decisions"),
                                 "elicitation"); /* borrowed */
    assert_int_equal(json_array_size(el), 1);
    *decision = json_incref(json_array_get(el, 0));
    json_decref(j);
    tg_turn_free(t);
    return o;
}

static const char *text_of(const json_t *payload)
{
    return json_string_value(json_object_get(
        json_array_get(json_object_get(payload, "content"), 0), "text"));
}

static const char *str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static void no_handler(void **state)
{
    tg_test_fx_env *env = *state;
    tg_runtime *rt = fixture(env, 20000 * tg_test_time_scale());
    json_t *p, *d;
    assert_int_equal(call(rt, &p, &d), TG_OUTCOME_SUCCESS);
    assert_string_equal(text_of(p), "action=decline content=none");
    assert_string_equal(str(d, "action"), "decline");
    assert_string_equal(str(d, "source"), "fx");
    assert_non_null(strstr(str(d, "detail"), "no elicitation handler"));
    json_decref(p);
    json_decref(d);
    tg_runtime_free(rt);
}

static void answered_from_a_thread(void **state)
{
    tg_test_fx_env *env = *state;
    tg_runtime *rt = fixture(env, 20000 * tg_test_time_scale());
    seen s = {.content = "{\"name\":\"Ada\",\"age\":36}"};
    tg_runtime_set_elicit(rt, on_elicit, &s);
    json_t *p, *d;
    assert_int_equal(call(rt, &p, &d), TG_OUTCOME_SUCCESS);
    assert_true(s.threaded);
    pthread_join(s.thread, NULL);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.call_id, "c1");
    assert_string_equal(s.source, "fx");
    assert_string_equal(s.mode, "form");
    assert_string_equal(s.message, "Who are you?");
    assert_non_null(strstr(s.schema, "\"required\":[\"name\"]"));
    assert_non_null(strstr(s.params, "\"requestedSchema\""));
    assert_string_equal(text_of(p),
                        "action=accept content={\"name\":\"Ada\",\"age\":36}");
    assert_string_equal(str(d, "action"), "accept");
    assert_string_equal(str(d, "detail"), "accepted by a test thread");
    json_t *fields = json_object_get(d, "fields"); /* borrowed */
    assert_int_equal(json_array_size(fields), 2);
    char *dt = json_dumps(d, 0);
    assert_null(strstr(dt, "Ada")); /* the values are not recorded */
    free(dt);
    json_decref(p);
    json_decref(d);
    tg_runtime_free(rt);
}

/* A handler that refuses what does not match, then declines. */
static void on_elicit_bad(void *ud, tg_elicit *el)
{
    seen *s = ud;
    s->n++;
    tg_error err;
    assert_int_equal(
        tg_elicit_answer(el, TG_ELICIT_ACCEPT, "{\"age\":-1}", NULL, &err),
        TG_EINVAL);
    assert_non_null(strstr(err.message, "requestedSchema"));
    assert_int_equal(tg_elicit_answer(el, TG_ELICIT_ACCEPT, "[1]", NULL, &err),
                     TG_EINVAL);
    assert_int_equal(
        tg_elicit_answer(el, (tg_elicit_action)7, NULL, NULL, &err), TG_EINVAL);
    assert_int_equal(tg_elicit_answer(el, TG_ELICIT_DECLINE, NULL,
                                      "the form was wrong", NULL),
                     0);
}

static void content_against_schema(void **state)
{
    tg_test_fx_env *env = *state;
    tg_runtime *rt = fixture(env, 20000 * tg_test_time_scale());
    seen s = {0};
    tg_runtime_set_elicit(rt, on_elicit_bad, &s);
    json_t *p, *d;
    assert_int_equal(call(rt, &p, &d), TG_OUTCOME_SUCCESS);
    assert_int_equal(s.n, 1);
    assert_string_equal(text_of(p), "action=decline content=none");
    assert_string_equal(str(d, "action"), "decline");
    assert_string_equal(str(d, "detail"), "the form was wrong");
    json_decref(p);
    json_decref(d);
    tg_runtime_free(rt);
}

/* The question waits past the call's deadline: the call ends, the server
 * is answered cancel, and the handler's late answer is ignored. */
static void deadline_while_waiting(void **state)
{
    tg_test_fx_env *env = *state;
    tg_runtime *rt = fixture(env, 300 * tg_test_time_scale());
    seen s = {0}; /* keeps the question */
    tg_runtime_set_elicit(rt, on_elicit, &s);
    json_t *p, *d;
    assert_int_equal(call(rt, &p, &d), TG_OUTCOME_TIMEOUT);
    assert_int_equal(s.n, 1);
    assert_string_equal(str(d, "action"), "cancel");
    assert_non_null(strstr(str(d, "detail"), "the call ended"));
    tg_error err;
    assert_int_equal(tg_elicit_answer(s.el, TG_ELICIT_ACCEPT,
                                      "{\"name\":\"late\"}", NULL, &err),
                     0);
    json_decref(p);
    json_decref(d);
    /* the session is still fine: the next question is declined at once */
    tg_runtime_set_elicit(rt, NULL, NULL);
    assert_int_equal(call(rt, &p, &d), TG_OUTCOME_SUCCESS);
    assert_string_equal(text_of(p), "action=decline content=none");
    json_decref(p);
    json_decref(d);
    tg_runtime_free(rt);
}

static int n_done;
static void on_done(void *ud, tg_turn *turn, int status, const tg_error *err)
{
    (void)ud;
    (void)turn;
    (void)status;
    (void)err;
    n_done++;
}

/* The runtime is freed while the question waits: it lets go of it (the
 * server is answered cancel, the call ends canceled), and the handler's
 * answer afterwards is accepted and frees it. */
static void freed_while_waiting(void **state)
{
    tg_test_fx_env *env = *state;
    tg_runtime *rt = fixture(env, 20000 * tg_test_time_scale());
    seen s = {0};
    tg_runtime_set_elicit(rt, on_elicit, &s);
    tg_turn *t = NULL;
    tg_error err = {0};
    assert_int_equal(
        tg_turn_new_call("toolgate", "c9", "fx__elicit", "{}", 2, &t, &err), 0);
    tg_turn_ops ops = {.done = on_done};
    n_done = 0;
    assert_int_equal(tg_runtime_submit(rt, t, &ops, NULL, &err), 0);
    double until = tg_test_now_ms() + (double)tg_test_ms(20000);
    while (s.n == 0 && tg_test_now_ms() < until) {
        struct pollfd pfd = {.fd = tg_runtime_fd(rt), .events = POLLIN};
        (void)poll(&pfd, 1, 20);
        tg_runtime_step(rt);
    }
    assert_int_equal(s.n, 1);
    tg_runtime_free(rt);
    assert_int_equal(n_done, 1);
    assert_int_equal(tg_result_outcome(tg_turn_result(t, 0)),
                     TG_OUTCOME_CANCELED);
    tg_turn_free(t);
    assert_int_equal(
        tg_elicit_answer(s.el, TG_ELICIT_DECLINE, NULL, NULL, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(no_handler, setup,
                                        tg_test_dir_teardown),
        cmocka_unit_test_setup_teardown(answered_from_a_thread, setup,
                                        tg_test_dir_teardown),
        cmocka_unit_test_setup_teardown(content_against_schema, setup,
                                        tg_test_dir_teardown),
        cmocka_unit_test_setup_teardown(deadline_while_waiting, setup,
                                        tg_test_dir_teardown),
        cmocka_unit_test_setup_teardown(freed_while_waiting, setup,
                                        tg_test_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
