/* SPDX-License-Identifier: MIT */
/*
 * test_ask.c - a policy `ask` answered asynchronously (tg_runtime_set_ask,
 * tg_ask_answer) through the public API, with real command tools (the
 * fixture sleep_ms, found through $TG_FIXTURES): a call waiting for its
 * answer holds no parallel slot while another call of its turn starts and
 * runs; YES from another thread runs it and is bound to its checksum;
 * ALWAYS covers the tool; NO denies it saying who said no; a waiting call
 * canceled by id or by a cancel signal ends canceled and not started, and
 * its answer afterwards, even after the runtime is freed, is harmless; the
 * asker takes precedence over the synchronous approver; the answer's detail
 * is recorded in decisions.policy.
 *
 * Time: no verdict depends on speed. Threads wait for what they need (an
 * ask arriving, a call starting) up to a scaled 30 s, and only that
 * bound failing fails a test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg_test_exec.h"
#include "toolgate.h"

/* ------------------------------------------------------------ harness */

typedef tg_test_fx_env env;

static int setup(void **state)
{
    return tg_test_fx_setup(state, "tg_ask_");
}

static int teardown(void **state)
{
    return tg_test_dir_teardown(state);
}

/* Two command tools, both `sleep_ms {ms}`: the policy asks about `danger`
 * and allows `sleep`. `parallel` is the parallel limit. */
static tg_runtime *make_rt(const env *e, int parallel)
{
    char text[4 * PATH_MAX + 1024];
    snprintf(text, sizeof text,
             "{\"workspace\": \"%s\", \"journal\": null, \"builtin_tools\": "
             "[], \"sandbox\": {\"mode\": \"off\"}, \"spool\": null,"
             " \"limits\": {\"parallel\": %d}, \"tools\": ["
             "{\"name\": \"danger\", \"command\": [\"%s/sleep_ms\", "
             "\"{ms}\"]},"
             "{\"name\": \"sleep\", \"command\": [\"%s/sleep_ms\", \"{ms}\"]}],"
             " \"policy\": {\"default\": \"allow\", \"rules\": ["
             "{\"tool\": \"danger\", \"decision\": \"ask\","
             " \"reason\": \"danger needs a person\"}]}}",
             e->dir, parallel, e->fx, e->fx);
    return tg_test_runtime(text, e->dir);
}

/* What the asker saw, and a sequence of events across threads. */
typedef struct asker {
    tg_runtime *rt;
    atomic_int asked;
    _Atomic(tg_ask *) ask;    /* the latest ask, until a thread answers it */
    _Atomic(tg_ask *) all[8]; /* every ask not answered in the callback */
    char id[64], tool[64], reason[128], ask_id[64];
    /* answer in the callback itself (answer_now) or leave it to a thread */
    int answer_now;
    tg_approval answer;
    const char *detail;
    /* order of events: b started, the answer given, a started */
    atomic_int seq;
    atomic_int b_started, answered, a_started;
} asker;

static void on_ask(void *ud, tg_ask *ask, const tg_call *call,
                   const char *reason)
{
    asker *a = ud;
    snprintf(a->id, sizeof a->id, "%s", tg_call_id(call));
    snprintf(a->tool, sizeof a->tool, "%s", tg_call_tool(call));
    snprintf(a->reason, sizeof a->reason, "%s", reason);
    snprintf(a->ask_id, sizeof a->ask_id, "%s", tg_ask_call_id(ask));
    int n = atomic_load(&a->asked);
    if (a->answer_now) {
        assert_int_equal(tg_ask_answer(ask, a->answer, a->detail, NULL), 0);
    } else {
        if (n < 8)
            atomic_store(&a->all[n], ask);
        atomic_store(&a->ask, ask);
    }
    atomic_fetch_add(&a->asked, 1);
}

static void on_started(void *ud, const tg_call *call)
{
    asker *a = ud;
    int s = atomic_fetch_add(&a->seq, 1) + 1;
    if (strcmp(tg_call_id(call), "b") == 0)
        atomic_store(&a->b_started, s);
    else
        atomic_store(&a->a_started, s);
}

static const tg_events events = {.started = on_started};

/* Waits (from any thread) until flag is set; fails the test after a scaled
 * 30 s, saying what it waited for. */
static void wait_for(atomic_int *flag, const char *what)
{
    double end = tg_test_now_ms() + (double)tg_test_ms(30000);
    while (atomic_load(flag) == 0) {
        if (tg_test_now_ms() > end)
            fail_msg("%s did not happen within %ld ms", what,
                     tg_test_ms(30000));
        tg_test_sleep_ms(2);
    }
}

/* Takes the ask waiting for an answer, waiting for it to arrive. */
static tg_ask *take_ask(asker *a)
{
    double end = tg_test_now_ms() + (double)tg_test_ms(30000);
    tg_ask *ask;
    while ((ask = atomic_exchange(&a->ask, NULL)) == NULL) {
        if (tg_test_now_ms() > end)
            fail_msg("no ask within %ld ms", tg_test_ms(30000));
        tg_test_sleep_ms(2);
    }
    return ask;
}

/* A thread that answers the ask once call b started. */
static void *answer_after_b(void *p)
{
    asker *a = p;
    tg_ask *ask = take_ask(a);
    wait_for(&a->b_started, "call b starting while a waits for its answer");
    atomic_store(&a->answered, atomic_fetch_add(&a->seq, 1) + 1);
    assert_int_equal(tg_ask_answer(ask, a->answer, a->detail, NULL), 0);
    return NULL;
}

/* A thread that answers the ask when it arrives. */
static void *answer_when_asked(void *p)
{
    asker *a = p;
    assert_int_equal(tg_ask_answer(take_ask(a), a->answer, a->detail, NULL), 0);
    return NULL;
}

/* A turn of toolgate-format calls: id, tool, args, ... NULL. */
static tg_turn *turn_of(const char *id, ...)
{
    tg_turn *t = tg__turn_new("toolgate");
    va_list ap;
    va_start(ap, id);
    for (const char *i = id; i != NULL; i = va_arg(ap, const char *)) {
        const char *tool = va_arg(ap, const char *);
        const char *args = va_arg(ap, const char *);
        tg_test_add(t, i, tool, args);
    }
    va_end(ap);
    return t;
}

/* member (a JSON pointer-ish path of object keys, '/'-separated) of the
 * result's record, as compact JSON text (caller frees), or NULL. */
static char *record_part(const tg_result *r, const char *path)
{
    char *rec = tg_result_to_json(r);
    json_t *j = json_loads(rec, 0, NULL); /* new ref */
    tg_free(rec);
    assert_non_null(j);
    json_t *at = j; /* borrowed */
    char key[64];
    for (const char *p = path; at != NULL && *p;) {
        size_t n = strcspn(p, "/");
        snprintf(key, sizeof key, "%.*s", (int)n, p);
        at = json_object_get(at, key);
        p += n + (p[n] == '/');
    }
    char *text =
        at ? json_dumps(at, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)
           : NULL;
    json_decref(j);
    return text;
}

static void expect_part(const tg_result *r, const char *path, const char *want)
{
    char *got = record_part(r, path);
    if (got == NULL || strcmp(got, want) != 0)
        fail_msg("%s: %s, expected %s", path, got ? got : "(none)", want);
    free(got);
}

/* ------------------------------------------------------------ tests */

/* parallel 1: a (danger) waits for its answer while b (sleep) takes the one
 * slot and starts; the answer comes only after b started, from another
 * thread, and then a runs. The synchronous approver would have held b
 * until a was answered. */
static void test_waiting_call_holds_up_nothing(void **state)
{
    env *e = *state;
    tg_runtime *rt = make_rt(e, 1);
    asker a = {.rt = rt,
               .answer = TG_APPROVAL_YES,
               .detail = "approved by the test's user"};
    tg_runtime_set_ask(rt, on_ask, &a);
    tg_runtime_set_events(rt, &events, &a);
    tg_turn *t = turn_of("a", "danger", "{\"ms\": 0}", "b", "sleep",
                         "{\"ms\": 100}", NULL);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, answer_after_b, &a), 0);
    tg_test_run(rt, t);
    pthread_join(th, NULL);
    assert_int_equal(atomic_load(&a.asked), 1);
    assert_string_equal(a.id, "a");
    assert_string_equal(a.ask_id, "a");
    assert_string_equal(a.tool, "danger");
    assert_string_equal(a.reason, "danger needs a person");
    /* b started before the answer, a after it */
    assert_true(atomic_load(&a.b_started) < atomic_load(&a.answered));
    assert_true(atomic_load(&a.answered) < atomic_load(&a.a_started));
    const tg_result *ra = tg_test_res(t, 0);
    assert_int_equal(tg_result_outcome(ra), TG_OUTCOME_SUCCESS);
    expect_part(ra, "decisions/policy",
                "{\"approved_by\":\"operator\",\"decision\":"
                "\"ask\",\"detail\":\"approved by the test's user\","
                "\"reason\":\"danger needs a person\",\"rule\":0}");
    assert_int_equal(tg_result_outcome(tg_test_res(t, 1)), TG_OUTCOME_SUCCESS);
    tg_turn_free(t);
    tg_runtime_free(rt);
}

/* NO (answered in the callback itself) denies the call, saying the operator
 * said no and who; the detail is cut and made valid UTF-8. */
static void test_no_denies_naming_who(void **state)
{
    env *e = *state;
    tg_runtime *rt = make_rt(e, 4);
    asker a = {.rt = rt,
               .answer_now = 1,
               .answer = TG_APPROVAL_NO,
               .detail = "declined by the test's user"};
    tg_runtime_set_ask(rt, on_ask, &a);
    tg_turn *t = turn_of("a", "danger", "{\"ms\": 0}", "b", "sleep",
                         "{\"ms\": 0}", NULL);
    tg_test_run(rt, t);
    const tg_result *r = tg_test_res(t, 0);
    assert_int_equal(tg_result_outcome(r), TG_OUTCOME_DENIED);
    assert_int_equal(tg_result_execution(r), TG_EXECUTION_NOT_STARTED);
    expect_part(r, "payload/denied/reason",
                "\"approval needed (danger needs a person) and the answer "
                "was no: declined by the test's user\"");
    expect_part(r, "decisions",
                "{\"policy\":{\"decision\":\"ask\",\"detail\":\"declined by "
                "the test's user\",\"reason\":\"danger needs a person\","
                "\"rule\":0}}");
    assert_int_equal(tg_result_outcome(tg_test_res(t, 1)), TG_OUTCOME_SUCCESS);
    tg_turn_free(t);

    /* a long detail with a bad byte: cut at 1,024 bytes, U+FFFD for it */
    char detail[3000];
    memset(detail, 'x', sizeof detail - 1);
    detail[sizeof detail - 1] = '\0';
    detail[3] = (char)0xff;
    a.detail = detail;
    t = turn_of("c", "danger", "{\"ms\": 1}", NULL);
    tg_test_run(rt, t);
    char *got = record_part(tg_test_res(t, 0), "decisions/policy/detail");
    assert_non_null(got);
    assert_int_equal(strlen(got), 1024 + 2 + 2); /* quotes, 3-byte U+FFFD */
    assert_memory_equal(got, "\"xxx\xef\xbf\xbdxxx", 10);
    free(got);
    tg_turn_free(t);
    tg_runtime_free(rt);
}

/* Sets a as rt's asker and runs a turn of one call, "a" of danger
 * {"ms": 0}, while thread(arg) runs beside it; returns the turn. */
static tg_turn *run_with(tg_runtime *rt, asker *a, void *(*thread)(void *),
                         void *arg)
{
    tg_runtime_set_ask(rt, on_ask, a);
    tg_turn *t = turn_of("a", "danger", "{\"ms\": 0}", NULL);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, thread, arg), 0);
    tg_test_run(rt, t);
    pthread_join(th, NULL);
    return t;
}

/* run_with, the call answered with a->answer from another thread: it
 * succeeds, approved_by `approved_by` (JSON text). */
static void run_answered(tg_runtime *rt, asker *a, const char *approved_by)
{
    tg_turn *t = run_with(rt, a, answer_when_asked, a);
    assert_int_equal(tg_result_outcome(tg_test_res(t, 0)), TG_OUTCOME_SUCCESS);
    expect_part(tg_test_res(t, 0), "decisions/policy/approved_by", approved_by);
    tg_turn_free(t);
}

/* Runs call `id` of danger with args: it succeeds without asking anyone,
 * approved_by `approved_by` (JSON text). */
static void run_not_asked(tg_runtime *rt, asker *a, const char *id,
                          const char *args, const char *approved_by)
{
    int asked = atomic_load(&a->asked);
    tg_turn *t = turn_of(id, "danger", args, NULL);
    tg_test_run(rt, t);
    assert_int_equal(tg_result_outcome(tg_test_res(t, 0)), TG_OUTCOME_SUCCESS);
    expect_part(tg_test_res(t, 0), "decisions/policy/approved_by", approved_by);
    assert_int_equal(atomic_load(&a->asked), asked);
    tg_turn_free(t);
}

/* ALWAYS (from another thread) covers every later call of the tool. */
static void test_always_covers_the_tool(void **state)
{
    env *e = *state;
    tg_runtime *rt = make_rt(e, 4);
    asker a = {.rt = rt, .answer = TG_APPROVAL_ALWAYS};
    run_answered(rt, &a, "\"operator (always, this session)\"");
    /* other arguments: not asked */
    run_not_asked(rt, &a, "a2", "{\"ms\": 1}",
                  "\"operator (always, this session)\"");
    tg_runtime_free(rt);
}

/* YES approves these arguments (the checksum), not others. */
static void test_yes_is_bound_to_checksum(void **state)
{
    env *e = *state;
    tg_runtime *rt = make_rt(e, 4);
    asker a = {.rt = rt, .answer = TG_APPROVAL_YES};
    run_answered(rt, &a, "\"operator\"");
    /* the same arguments (another id): not asked again */
    run_not_asked(rt, &a, "a2", "{\"ms\": 0}",
                  "\"operator (these arguments, earlier)\"");
    /* other arguments: asked, and this time the answer is no */
    a.answer_now = 1;
    a.answer = TG_APPROVAL_NO;
    tg_turn *t = turn_of("b2", "danger", "{\"ms\": 1}", NULL);
    tg_test_run(rt, t);
    assert_int_equal(atomic_load(&a.asked), 2);
    assert_int_equal(tg_result_outcome(tg_test_res(t, 0)), TG_OUTCOME_DENIED);
    expect_part(tg_test_res(t, 0), "payload/denied/reason",
                "\"approval needed (danger needs a person) and the operator "
                "said no\"");
    tg_turn_free(t);
    tg_runtime_free(rt);
}

/* A thread that cancels call "a" once it waits for its answer (or, with
 * signum, raises that signal), keeping the ask unanswered in *late. */
typedef struct canceller {
    asker *a;
    int signum;
    tg_ask *late;
} canceller;

static void *cancel_when_asked(void *p)
{
    canceller *c = p;
    c->late = take_ask(c->a);
    if (c->signum != 0)
        raise(c->signum);
    else
        assert_int_equal(
            tg_runtime_cancel(c->a->rt, "a", "user", "no longer wanted", NULL),
            0);
    return NULL;
}

static void expect_canceled(const tg_result *r, const char *by,
                            const char *reason)
{
    char want[256];
    assert_int_equal(tg_result_outcome(r), TG_OUTCOME_CANCELED);
    assert_int_equal(tg_result_execution(r), TG_EXECUTION_NOT_STARTED);
    snprintf(want, sizeof want, "{\"by\":\"%s\",\"reason\":\"%s\"}", by,
             reason);
    expect_part(r, "payload/canceled", want);
    /* the verdict it waited on is kept */
    expect_part(r, "decisions",
                "{\"policy\":{\"decision\":\"ask\",\"reason\":\"danger needs "
                "a person\",\"rule\":0}}");
}

/* Canceled by id while it waits: canceled, not started; b runs on. The
 * answer afterwards is accepted and ignored: YES approved nothing, so the
 * same arguments are asked about again. */
static void test_cancel_by_id_while_waiting(void **state)
{
    env *e = *state;
    tg_runtime *rt = make_rt(e, 4);
    asker a = {.rt = rt};
    tg_runtime_set_ask(rt, on_ask, &a);
    tg_turn *t = turn_of("a", "danger", "{\"ms\": 0}", "b", "sleep",
                         "{\"ms\": 0}", NULL);
    canceller c = {.a = &a};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, cancel_when_asked, &c), 0);
    tg_test_run(rt, t);
    pthread_join(th, NULL);
    expect_canceled(tg_test_res(t, 0), "user", "no longer wanted");
    assert_int_equal(tg_result_outcome(tg_test_res(t, 1)), TG_OUTCOME_SUCCESS);
    tg_turn_free(t);
    /* the late answer, from this thread, after the turn (and its call) are
     * gone: harmless */
    assert_int_equal(tg_ask_answer(c.late, TG_APPROVAL_YES, "too late", NULL),
                     0);
    a.answer_now = 1;
    a.answer = TG_APPROVAL_NO;
    t = turn_of("a", "danger", "{\"ms\": 0}", NULL);
    tg_test_run(rt, t);
    assert_int_equal(atomic_load(&a.asked), 2);
    assert_int_equal(tg_result_outcome(tg_test_res(t, 0)), TG_OUTCOME_DENIED);
    tg_turn_free(t);
    tg_runtime_free(rt);
}

/* A cancel signal cancels a waiting call as it does a queued one; its ask
 * is answered only after the runtime was freed. */
static void test_signal_cancels_and_answer_after_free(void **state)
{
    env *e = *state;
    tg_runtime *rt = make_rt(e, 4);
    tg_error err = {0};
    assert_int_equal(tg_runtime_cancel_on_signal(rt, SIGUSR1, &err), 0);
    asker a = {.rt = rt};
    canceller c = {.a = &a, .signum = SIGUSR1};
    tg_turn *t = run_with(rt, &a, cancel_when_asked, &c);
    expect_canceled(tg_test_res(t, 0), "user", "interrupted by SIGUSR1");
    tg_turn_free(t);
    tg_runtime_free(rt);
    assert_int_equal(tg_ask_answer(c.late, TG_APPROVAL_ALWAYS, NULL, NULL), 0);
}

/* tg_runtime_cancel(NULL) reaches a waiting call too. */
static void *cancel_all_when_asked(void *p)
{
    asker *a = p;
    tg_ask *ask = take_ask(a);
    assert_int_equal(
        tg_runtime_cancel(a->rt, NULL, "system", "shutting down", NULL), 0);
    /* answered at once, racing the cancel: whichever the loop takes first
     * decides, and neither way leaks or touches freed memory */
    assert_int_equal(tg_ask_answer(ask, TG_APPROVAL_NO, NULL, NULL), 0);
    return NULL;
}

static void test_cancel_all_while_waiting(void **state)
{
    env *e = *state;
    tg_runtime *rt = make_rt(e, 4);
    asker a = {.rt = rt};
    tg_turn *t = run_with(rt, &a, cancel_all_when_asked, &a);
    const tg_result *r = tg_test_res(t, 0);
    /* the cancel is queued before the answer: it wins */
    expect_canceled(r, "system", "shutting down");
    tg_turn_free(t);
    tg_runtime_free(rt);
}

static int approver_calls;

static tg_approval approver(void *ud, const tg_call *call, const char *reason)
{
    (void)ud;
    (void)call;
    (void)reason;
    approver_calls++;
    return TG_APPROVAL_YES;
}

/* The asker is asked instead of the approver; --approve asks nobody; bad
 * answers leave the ask the caller's. */
static void test_precedence_and_bad_answers(void **state)
{
    env *e = *state;
    tg_runtime *rt = make_rt(e, 4);
    asker a = {.rt = rt, .answer = TG_APPROVAL_YES};
    tg_runtime_set_approver(rt, approver, NULL);
    assert_int_equal(tg_ask_answer(NULL, TG_APPROVAL_YES, NULL, NULL),
                     TG_EINVAL);
    assert_null(tg_ask_call_id(NULL));
    run_answered(rt, &a, "\"operator\"");
    assert_int_equal(approver_calls, 0);
    /* without the asker, the approver again */
    tg_runtime_set_ask(rt, NULL, NULL);
    tg_turn *t = turn_of("b", "danger", "{\"ms\": 1}", NULL);
    tg_test_run(rt, t);
    assert_int_equal(approver_calls, 1);
    assert_int_equal(tg_result_outcome(tg_test_res(t, 0)), TG_OUTCOME_SUCCESS);
    tg_turn_free(t);
    /* --approve: nobody is asked */
    tg_runtime_set_ask(rt, on_ask, &a);
    tg_runtime_set_approve(rt, 1);
    run_not_asked(rt, &a, "c", "{\"ms\": 2}", "\"--approve\"");
    tg_runtime_free(rt);
}

/* An answer that is not a tg_approval is refused and the ask stays the
 * caller's to answer properly. */
static void *answer_badly_then_well(void *p)
{
    asker *a = p;
    tg_ask *ask = take_ask(a);
    tg_error err = {0};
    assert_int_equal(tg_ask_answer(ask, (tg_approval)7, "?", &err), TG_EINVAL);
    assert_string_equal(err.message, "7 is not an answer (TG_APPROVAL_NO, "
                                     "_YES or _ALWAYS)");
    assert_string_equal(tg_ask_call_id(ask), "a");
    assert_int_equal(tg_ask_answer(ask, TG_APPROVAL_YES, NULL, NULL), 0);
    return NULL;
}

static void test_bad_answer_keeps_the_ask(void **state)
{
    env *e = *state;
    tg_runtime *rt = make_rt(e, 4);
    asker a = {.rt = rt};
    tg_turn *t = run_with(rt, &a, answer_badly_then_well, &a);
    assert_int_equal(tg_result_outcome(tg_test_res(t, 0)), TG_OUTCOME_SUCCESS);
    expect_part(tg_test_res(t, 0), "decisions/policy/approved_by",
                "\"operator\"");
    tg_turn_free(t);
    tg_runtime_free(rt);
}

/* Answers two asks in the reverse order of the calls: YES to the second,
 * then NO to the first. */
static void *answer_two_backwards(void *p)
{
    asker *a = p;
    double end = tg_test_now_ms() + (double)tg_test_ms(30000);
    while (atomic_load(&a->asked) < 2) {
        if (tg_test_now_ms() > end)
            fail_msg("two asks did not arrive within %ld ms",
                     tg_test_ms(30000));
        tg_test_sleep_ms(2);
    }
    assert_string_equal(tg_ask_call_id(atomic_load(&a->all[1])), "y");
    assert_int_equal(tg_ask_answer(atomic_load(&a->all[1]), TG_APPROVAL_YES,
                                   "second first", NULL),
                     0);
    assert_int_equal(tg_ask_answer(atomic_load(&a->all[0]), TG_APPROVAL_NO,
                                   "first last", NULL),
                     0);
    return NULL;
}

/* Two calls wait at once, each for its own answer, in whatever order the
 * answers come. */
static void test_two_asks_answered_out_of_order(void **state)
{
    env *e = *state;
    tg_runtime *rt = make_rt(e, 4);
    asker a = {.rt = rt};
    tg_runtime_set_ask(rt, on_ask, &a);
    tg_turn *t = turn_of("x", "danger", "{\"ms\": 0}", "y", "danger",
                         "{\"ms\": 1}", NULL);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, answer_two_backwards, &a), 0);
    tg_test_run(rt, t);
    pthread_join(th, NULL);
    assert_int_equal(tg_result_outcome(tg_test_res(t, 0)), TG_OUTCOME_DENIED);
    expect_part(tg_test_res(t, 0), "decisions/policy/detail", "\"first last\"");
    assert_int_equal(tg_result_outcome(tg_test_res(t, 1)), TG_OUTCOME_SUCCESS);
    expect_part(tg_test_res(t, 1), "decisions/policy/detail",
                "\"second first\"");
    tg_turn_free(t);
    tg_runtime_free(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_waiting_call_holds_up_nothing,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_denies_naming_who, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_always_covers_the_tool, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_yes_is_bound_to_checksum, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cancel_by_id_while_waiting, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_signal_cancels_and_answer_after_free, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_all_while_waiting, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_precedence_and_bad_answers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bad_answer_keeps_the_ask, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_two_asks_answered_out_of_order,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
