/* SPDX-License-Identifier: MIT */
/*
 * test_loop_model.c - the agent loop with an in-process model
 * (tg_loop_options.model_fn, toolgate_loop.h) over a real runtime (an
 * in-process tool that counts its runs) and, for durability, a real SQLite
 * journal: what each request carries (its tools, every result matched by
 * id, in the provider's format), whole and streamed answers, Anthropic's
 * shape, a model that fails or answers garbage, and a loop whose model
 * failed resumed with an in-process model again without running a tool
 * twice (and refused without one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "toolgate_loop.h"

#define MAX_REQ 8

/* A scripted model: answer k to request k, what each request carried. */
struct model {
    const char *const *answers;
    size_t nanswers;
    int fail_at; /* 1-based request that fails (0: none) */
    char *requests[MAX_REQ];
    size_t nreq;
};

static int model_fn(void *ud, const char *request, size_t len, char **answer,
                    size_t *answer_len, tg_error *err)
{
    struct model *m = ud;
    assert_int_equal(strlen(request), len);
    if (m->nreq < MAX_REQ)
        m->requests[m->nreq] = strdup(request);
    size_t k = m->nreq++;
    if (m->fail_at > 0 && (size_t)m->fail_at == k + 1) {
        if (err != NULL)
            snprintf(err->message, sizeof err->message,
                     "the model is out to lunch");
        return TG_EIO;
    }
    assert_true(k < m->nanswers);
    *answer = strdup(m->answers[k]);
    *answer_len = strlen(m->answers[k]);
    return 0;
}

static void model_clear(struct model *m)
{
    for (size_t i = 0; i < m->nreq && i < MAX_REQ; i++)
        free(m->requests[i]);
    m->nreq = 0;
}

/* Chat Completions answers */
#define CALL(id, n)                                                            \
    "{\"id\":\"" id "\",\"type\":\"function\",\"function\":{\"name\":"         \
    "\"count\",\"arguments\":\"{\\\"n\\\":" #n "}\"}}"
#define CALLS(...)                                                             \
    "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","          \
    "\"content\":\"looking\",\"tool_calls\":[" __VA_ARGS__                     \
    "]},\"finish_reason\":\"tool_calls\"}]}"
#define ANSWER                                                                 \
    "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","          \
    "\"content\":\"the end\"},\"finish_reason\":\"stop\"}]}"

static int runs; /* the tool's runs */

static int count(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    (void)args;
    (void)len;
    (void)ud;
    runs++;
    char out[64];
    int n = snprintf(out, sizeof out, "{\"run\":%d}", runs);
    return tg_handler_set_json(ctx, out, (size_t)n, NULL);
}

struct fx {
    tg_config *cfg;
    tg_runtime *rt;
    char dir[64];
};

static void fx_runtime(struct fx *f, int journal)
{
    char conf[256];
    tg_error err = {0};
    snprintf(conf, sizeof conf,
             "{\"builtin_tools\":[],\"spool\":null,\"journal\":%s%s%s}",
             journal ? "\"" : "", journal ? f->dir : "null",
             journal ? "/j.db\"" : "");
    f->cfg = tg_config_new();
    assert_int_equal(tg_config_load(f->cfg, conf, strlen(conf), NULL, &err), 0);
    assert_int_equal(tg_runtime_new(f->cfg, &f->rt, &err), 0);
    assert_int_equal(
        tg_runtime_register(f->rt, "count", "counts its runs",
                            "{\"type\":\"object\",\"properties\":{\"n\":"
                            "{\"type\":\"integer\"}}}",
                            count, NULL, TG_TOOL_INLINE, &err),
        0);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/tg_loop_model_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    runs = 0;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char cmd[128];
    tg_runtime_free(f->rt);
    tg_config_free(f->cfg);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static tg_loop *new_loop(struct fx *f, struct model *m, tg_loop_options *o)
{
    o->provider = o->provider ? o->provider : "openai";
    o->model = "local";
    o->model_fn = model_fn;
    o->model_ud = m;
    tg_loop *l = NULL;
    tg_error err = {0};
    assert_int_equal(tg_loop_new(f->rt, o, NULL, NULL, &l, &err), 0);
    return l;
}

static void test_whole(void **state)
{
    struct fx *f = *state;
    fx_runtime(f, 0);
    static const char *const answers[] = {
        CALLS(CALL("c1", 1) "," CALL("c2", 2)), CALLS(CALL("c3", 3)), ANSWER};
    struct model m = {.answers = answers, .nanswers = 3};
    tg_loop_options o = {.system = "sys"}; /* no base_url: in-process */
    tg_loop *l = new_loop(f, &m, &o);
    tg_error err = {0};
    assert_int_equal(tg_loop_run(l, "go", &err), 0);
    assert_int_equal(tg_loop_stop_reason(l), TG_LOOP_ANSWERED);
    assert_string_equal(tg_loop_answer(l), "the end");
    assert_int_equal(tg_loop_iteration(l), 3);
    assert_int_equal(runs, 3);
    assert_int_equal((int)m.nreq, 3);
    /* the request as it would be POSTed: model, system prompt, tools */
    assert_non_null(strstr(m.requests[0], "\"model\":\"local\""));
    assert_non_null(strstr(m.requests[0], "\"role\":\"system\""));
    assert_non_null(strstr(m.requests[0], "\"name\":\"count\""));
    assert_null(strstr(m.requests[0], "\"stream\""));
    /* every result, by id, after the assistant turn that called it */
    const char *a = strstr(m.requests[1], "\"tool_calls\"");
    const char *r1 = strstr(m.requests[1], "\"tool_call_id\":\"c1\"");
    assert_non_null(a);
    assert_non_null(r1);
    assert_true(a < r1);
    assert_non_null(strstr(m.requests[1], "\"tool_call_id\":\"c2\""));
    assert_non_null(strstr(m.requests[2], "\"tool_call_id\":\"c3\""));
    assert_non_null(strstr(m.requests[2], "\"tool_call_id\":\"c1\""));
    char *t = tg_loop_transcript(l);
    assert_non_null(strstr(t, "\"stop\":\"answered\""));
    tg_free(t);
    tg_loop_free(l);
    model_clear(&m);
}

static void test_streamed(void **state)
{
    struct fx *f = *state;
    fx_runtime(f, 0);
#define CHUNK(d) "data: {\"choices\":[{\"index\":0,\"delta\":" d "}]}\n\n"
    static const char *const answers[] = {
        CHUNK("{\"role\":\"assistant\",\"content\":\"hm\"}")
            CHUNK("{\"tool_calls\":[{\"index\":0,\"id\":\"s1\",\"type\":"
                  "\"function\",\"function\":{\"name\":\"count\",\"arguments\":"
                  "\"{\\\"n\\\":1}\"}}]}") "data: [DONE]\n\n",
        ANSWER /* a whole answer to a streamed request is read so */};
    struct model m = {.answers = answers, .nanswers = 2};
    tg_loop_options o = {.stream = 1};
    tg_loop *l = new_loop(f, &m, &o);
    tg_error err = {0};
    assert_int_equal(tg_loop_run(l, "go", &err), 0);
    assert_int_equal(tg_loop_stop_reason(l), TG_LOOP_ANSWERED);
    assert_string_equal(tg_loop_answer(l), "the end");
    assert_int_equal(runs, 1);
    assert_non_null(strstr(m.requests[0], "\"stream\":true"));
    assert_non_null(strstr(m.requests[1], "\"tool_call_id\":\"s1\""));
    assert_non_null(strstr(m.requests[1], "\"content\":\"hm\""));
    tg_loop_free(l);
    model_clear(&m);
}

static void test_anthropic(void **state)
{
    struct fx *f = *state;
    fx_runtime(f, 0);
    static const char *const answers[] = {
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":"
        "\"t1\",\"name\":\"count\",\"input\":{\"n\":1}},{\"type\":"
        "\"tool_use\",\"id\":\"t2\",\"name\":\"count\",\"input\":{\"n\":2}}],"
        "\"stop_reason\":\"tool_use\"}",
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":"
        "\"done\"}],\"stop_reason\":\"end_turn\"}"};
    struct model m = {.answers = answers, .nanswers = 2};
    tg_loop_options o = {.provider = "anthropic"};
    tg_loop *l = new_loop(f, &m, &o);
    tg_error err = {0};
    assert_int_equal(tg_loop_run(l, "go", &err), 0);
    assert_string_equal(tg_loop_answer(l), "done");
    assert_int_equal(runs, 2);
    assert_non_null(strstr(m.requests[0], "\"max_tokens\":4096"));
    /* one user message of tool_result blocks */
    assert_non_null(strstr(m.requests[1], "\"tool_use_id\":\"t1\""));
    assert_non_null(strstr(m.requests[1], "\"tool_use_id\":\"t2\""));
    tg_loop_free(l);
    model_clear(&m);
}

static void test_model_fails(void **state)
{
    struct fx *f = *state;
    fx_runtime(f, 0);
    static const char *const answers[] = {CALLS(CALL("c1", 1)), "not json"};
    struct model m = {.answers = answers, .nanswers = 2, .fail_at = 1};
    tg_loop_options o = {0};
    tg_loop *l = new_loop(f, &m, &o);
    tg_error err = {0};
    assert_int_equal(tg_loop_run(l, "go", &err), TG_EIO);
    assert_int_equal(tg_loop_stop_reason(l), TG_LOOP_FAILED);
    assert_non_null(strstr(err.message, "out to lunch"));
    assert_int_equal(runs, 0);
    tg_loop_free(l);
    model_clear(&m);
    /* garbage: a parse error, after the first iteration's calls ran */
    m.fail_at = 0;
    o = (tg_loop_options){0};
    l = new_loop(f, &m, &o);
    memset(&err, 0, sizeof err);
    assert_int_equal(tg_loop_run(l, "go", &err), TG_EPARSE);
    assert_int_equal(tg_loop_stop_reason(l), TG_LOOP_FAILED);
    assert_int_equal(runs, 1);
    tg_loop_free(l);
    model_clear(&m);
}

static void test_resume(void **state)
{
    struct fx *f = *state;
    fx_runtime(f, 1);
    /* the model fails at its second request, after two calls ran */
    static const char *const answers[] = {
        CALLS(CALL("c1", 1) "," CALL("c2", 2)), ANSWER};
    struct model m = {.answers = answers, .nanswers = 2, .fail_at = 2};
    tg_loop_options o = {0};
    tg_loop *l = new_loop(f, &m, &o);
    tg_error err = {0};
    assert_int_equal(tg_loop_run(l, "go", &err), TG_EIO);
    assert_int_equal(runs, 2);
    char id[32];
    snprintf(id, sizeof id, "%s", tg_loop_id(l));
    tg_loop_free(l);
    model_clear(&m);
    /* without a model: refused, saying why */
    tg_loop *r = NULL;
    memset(&err, 0, sizeof err);
    assert_int_equal(tg_loop_resume(f->rt, id, NULL, NULL, NULL, &r, &err),
                     TG_EINVAL);
    assert_non_null(strstr(err.message, "in-process"));
    assert_null(r);
    /* with one: the results come from the journal, no tool runs again */
    static const char *const rest[] = {ANSWER};
    struct model m2 = {.answers = rest, .nanswers = 1};
    tg_loop_options o2 = {.model_fn = model_fn, .model_ud = &m2};
    memset(&err, 0, sizeof err);
    assert_int_equal(tg_loop_resume(f->rt, id, &o2, NULL, NULL, &r, &err), 0);
    assert_int_equal(tg_loop_run(r, NULL, &err), 0);
    assert_int_equal(tg_loop_stop_reason(r), TG_LOOP_ANSWERED);
    assert_string_equal(tg_loop_answer(r), "the end");
    assert_int_equal(runs, 2);
    assert_int_equal((int)m2.nreq, 1);
    assert_non_null(strstr(m2.requests[0], "\"tool_call_id\":\"c1\""));
    assert_non_null(strstr(m2.requests[0], "\"tool_call_id\":\"c2\""));
    assert_non_null(strstr(m2.requests[0], "{\\\"run\\\":1}"));
    tg_loop_free(r);
    model_clear(&m2);
    /* the journal has the whole loop: answered, two iterations */
    char path[128], *shown = NULL;
    snprintf(path, sizeof path, "%s/j.db", f->dir);
    int src = tg_loop_show(path, id, &shown, &err);
    if (src != 0)
        fprintf(stderr, "%s\n", err.message);
    assert_int_equal(src, 0);
    assert_non_null(strstr(shown, "\"stop\":\"answered\""));
    assert_non_null(strstr(shown, "\"iterations\":2"));
    tg_free(shown);
}

static void test_bad_options(void **state)
{
    struct fx *f = *state;
    fx_runtime(f, 0);
    tg_loop_options o = {.provider = "openai", .model = "m"};
    tg_loop *l = NULL;
    tg_error err = {0};
    /* neither a base URL nor a model function */
    assert_int_equal(tg_loop_new(f->rt, &o, NULL, NULL, &l, &err), TG_EINVAL);
    assert_null(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streamed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_anthropic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_model_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
