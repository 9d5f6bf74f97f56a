/* SPDX-License-Identifier: MIT */
/*
 * loop.c - the agent loop (toolgate_loop.h): each iteration sends the
 * conversation to the model (retried within a budget), runs every call of
 * its answer through the runtime as one submitted turn, and adds the
 * results the prompt factory makes of them to the conversation; it stops
 * when the model answers without calls, or at a limit, a stop tool or a
 * cancel. The conversation is one JSON object in the provider's shape, so
 * a transcript is the request without the tools, and a journal of the
 * loop (later) can record it per iteration under the loop's id.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "loop_int.h"

#define MAX_ANSWER_BYTES ((size_t)64 * 1024 * 1024)

const char *tg_loop_stop_name(int stop)
{
    static const char *const names[] = {
        "running",  "answered", "max_iterations", "tool_budget", "stop_tool",
        "canceled", "failed",   "time_budget",    "token_budget"};
    return stop >= 0 && stop <= TG_LOOP_TOKEN_BUDGET ? names[stop] : "failed";
}

static char *dup_or_null(const char *s, int *bad)
{
    if (s == NULL)
        return NULL;
    char *d = strdup(s);
    if (d == NULL)
        *bad = 1;
    return d;
}

static void wipe_free(char *s)
{
    if (s != NULL) {
        memset(s, 0, strlen(s));
        free(s);
    }
}

int tg_loop_new(tg_runtime *rt, const tg_loop_options *options,
                const tg_loop_events *events, void *ud, tg_loop **out,
                tg_error *err)
{
    *out = NULL;
    if (rt == NULL || options == NULL)
        return tg__loop_fail(err, TG_EINVAL, "tg_loop_new: no runtime");
    const tg__provider *prov = tg__provider_find(options->provider);
    if (prov == NULL)
        return tg__loop_fail(err, TG_EINVAL,
                             "unknown provider '%s' (openai, "
                             "openai-responses, anthropic, gemini)",
                             options->provider ? options->provider : "");
    if (options->model_fn == NULL &&
        (options->base_url == NULL || options->base_url[0] == '\0'))
        return tg__loop_fail(err, TG_EINVAL, "no base URL");
    if (options->model == NULL || options->model[0] == '\0')
        return tg__loop_fail(err, TG_EINVAL, "no model");
    if (options->max_iterations < 0 || options->max_tool_calls < 0 ||
        options->max_attempts < 0 || options->retry_budget_ms < 0 ||
        options->request_timeout_ms < 0 || options->retry_base_ms < 0 ||
        options->max_time_ms < 0 || options->max_total_tokens < 0)
        return tg__loop_fail(err, TG_EINVAL, "a negative limit");
    tg_loop *l = calloc(1, sizeof *l);
    if (l == NULL)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    int bad = 0;
    l->rt = rt;
    l->prov = prov;
    l->opt = *options;
    l->base_url = dup_or_null(options->base_url ? options->base_url : "", &bad);
    l->model = dup_or_null(options->model, &bad);
    l->api_key = dup_or_null(options->api_key, &bad);
    int src = tg__loop_skills(l, options, &l->system, err);
    if (src != 0) {
        tg_loop_free(l);
        return src;
    }
    l->opt.provider = prov->name;
    l->opt.base_url = l->base_url;
    l->opt.model = l->model;
    l->opt.api_key = NULL; /* only l->api_key holds it */
    l->opt.system = l->system;
    if (l->opt.max_iterations == 0)
        l->opt.max_iterations = 20;
    if (l->opt.request_timeout_ms == 0)
        l->opt.request_timeout_ms = 600000;
    if (l->opt.max_attempts == 0)
        l->opt.max_attempts = 5;
    if (l->opt.retry_budget_ms == 0)
        l->opt.retry_budget_ms = 120000;
    if (l->opt.retry_base_ms == 0)
        l->opt.retry_base_ms = 500;
    if (options->nstop_tools > 0) {
        l->stop_tools = calloc(options->nstop_tools, sizeof(char *));
        bad |= l->stop_tools == NULL;
        for (size_t i = 0; !bad && i < options->nstop_tools; i++)
            l->stop_tools[i] = dup_or_null(options->stop_tools[i], &bad);
    }
    l->opt.stop_tools = NULL;
    l->opt.skills = NULL;
    l->opt.nskills = 0;
    if (events != NULL)
        l->ev = *events;
    l->ud = ud;
    if (bad)
        l->url = NULL;
    else if (options->model_fn != NULL)
        l->url = strdup("(in-process model)"); /* what messages name */
    else
        l->url = prov->url(l->base_url, l->model, options->stream);
    l->answer = strdup("");
    l->conv = json_object(); /* new ref */
    if (bad || l->url == NULL || l->answer == NULL || l->conv == NULL) {
        tg_loop_free(l);
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    }
    unsigned char r[12];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        /* No entropy source: the clock still tells loops apart. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        memcpy(r, &ts, sizeof r < sizeof ts ? sizeof r : sizeof ts);
    }
    static const char hex[] = "0123456789abcdef";
    memcpy(l->id, "loop_", 5);
    for (int i = 0; i < 8; i++) {
        l->id[5 + 2 * i] = hex[r[i] >> 4];
        l->id[6 + 2 * i] = hex[r[i] & 15];
    }
    l->id[21] = '\0';
    memcpy(&l->rnd, r + 8, sizeof l->rnd);
    int rc =
        tg__http_init(&l->http, rt, &l->cancel, options->model_fn == NULL, err);
    if (rc != 0) {
        tg_loop_free(l);
        return rc;
    }
    *out = l;
    return 0;
}

void tg_loop_free(tg_loop *l)
{
    if (l == NULL)
        return;
    if (l->store != NULL)
        (void)tg__loop_journal_flush(l, NULL); /* best effort */
    free(l->deferred);
    tg__http_cleanup(&l->http);
    wipe_free(l->api_key);
    free(l->base_url);
    free(l->model);
    free(l->system);
    for (size_t i = 0; i < l->nskills; i++)
        free(l->skill_names[i]);
    free(l->skill_names);
    free(l->url);
    free(l->answer);
    if (l->stop_tools != NULL)
        for (size_t i = 0; i < l->opt.nstop_tools; i++)
            free(l->stop_tools[i]);
    free(l->stop_tools);
    json_decref(l->conv);
    json_decref(l->tools);
    json_decref(l->idempotent);
    json_decref(l->pending_answer);
    tg__reqtext_cleanup(&l->req);
    free(l); /* l->store is the runtime's */
}

/* A lock-free atomic store is async-signal-safe; a locked one is not. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2,
               "tg_loop_cancel needs a lock-free int");

void tg_loop_cancel(tg_loop *l)
{
    if (l != NULL)
        l->cancel = 1;
}

tg_loop_stop tg_loop_stop_reason(const tg_loop *l)
{
    return l->stop;
}

const char *tg_loop_answer(const tg_loop *l)
{
    return l->answer;
}

const char *tg_loop_id(const tg_loop *l)
{
    return l->id;
}

int tg_loop_iteration(const tg_loop *l)
{
    return l->iteration;
}

long tg_loop_tool_calls(const tg_loop *l)
{
    return l->tool_calls;
}

long tg_loop_tokens(const tg_loop *l)
{
    return l->tokens;
}

static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Why the loop was cut short: the time budget, or tg_loop_cancel. */
static tg_loop_stop cut_reason(const tg_loop *l)
{
    return l->cancel == TG__CANCEL_BUDGET ? TG_LOOP_TIME_BUDGET
                                          : TG_LOOP_CANCELED;
}

int tg_loop_start(tg_loop *l, const char *prompt, tg_error *err)
{
    if (l->started)
        return tg__loop_fail(err, TG_EINVAL, "the loop was started already");
    if (prompt == NULL)
        return tg__loop_fail(err, TG_EINVAL, "no prompt");
    int rc = l->prov->start(l->conv, l->system, prompt, err);
    if (rc != 0)
        return rc;
    char *text = NULL;
    rc = tg_runtime_tools(l->rt, l->prov->format, &text, err);
    if (rc == 0)
        rc = tg__reqtext_tools(&l->req, text, &l->tools, err);
    tg_free(text);
    if (rc != 0)
        return rc;
    if (!l->resumed && (rc = tg__loop_journal_begin(l, prompt, err)) != 0)
        return rc;
    l->started_ms = mono_ms();
    if (l->opt.max_time_ms > 0)
        l->http.deadline_ms = l->started_ms + l->opt.max_time_ms;
    l->started = 1;
    return 0;
}

/* --------------------------------------------------------- one request */

static int sse_submit(void *ud, tg_turn *turn, tg_error *err);
static void sse_text(void *ud, const char *text, size_t len);

/* One request to the in-process model (tg_loop_options.model_fn): its
 * answer in reply->body, or, streamed (sse not NULL), fed to a fresh *sse
 * unless it is a whole JSON answer (kept in reply->body, as a server that
 * answers a streamed request whole). */
static int ask_in_process(tg_loop *l, const char *text, size_t text_len,
                          tg__lsse **sse, tg__http_reply *reply, tg_error *err)
{
    char *answer = NULL;
    size_t len = 0;
    tg_error merr = {0};
    int rc =
        l->opt.model_fn(l->opt.model_ud, text, text_len, &answer, &len, &merr);
    if (rc == 0 && answer == NULL)
        rc = tg__loop_fail(&merr, TG_EINVAL, "no answer");
    if (rc != 0) {
        free(answer);
        return tg__loop_fail(err, rc < 0 ? rc : TG_EINTERNAL, "%s %s: %s",
                             l->prov->name, l->url,
                             merr.message[0] ? merr.message : "failed");
    }
    size_t i = 0;
    while (i < len && (answer[i] == ' ' || answer[i] == '\n' ||
                       answer[i] == '\r' || answer[i] == '\t'))
        i++;
    if (sse != NULL && (i == len || answer[i] != '{')) {
        static const tg__lsse_ops sse_ops = {sse_text, sse_submit};
        if (*sse == NULL &&
            (rc = tg__lsse_new(l->prov, &sse_ops, l, sse, err)) != 0) {
            free(answer);
            return rc;
        }
        int failed = tg__lsse_feed(*sse, answer, len);
        free(answer);
        if (failed != 0) {
            const tg_error *e = tg__lsse_error(*sse);
            return tg__loop_fail(err, e != NULL ? e->code : TG_EPARSE,
                                 "%s %s: the streamed answer: %s",
                                 l->prov->name, l->url,
                                 e != NULL ? e->message : "unreadable");
        }
        return 0;
    }
    reply->body = answer;
    reply->len = len;
    return 0;
}

/* Sends the conversation until an answer (2xx) comes, retrying what is
 * worth it within the budget. A whole answer: *raw is its text (malloc'd,
 * not read yet: whole_answer). Streamed (sse not NULL): the events go to
 * *sse as they come (its calls start then); a stream that dropped is sent
 * again, in a fresh *sse, only while no call was handed over. */
static int ask_model(tg_loop *l, tg__lsse **sse, char **raw, size_t *raw_len,
                     tg_error *err)
{
    char *text = NULL;
    size_t text_len = 0;
    struct curl_slist *headers = NULL;
    tg__http_reply reply = {0};
    int rc = tg__reqtext_build(&l->req, l->prov, l->conv, l->tools, l->model,
                               l->opt.max_tokens, sse != NULL, &text, &text_len,
                               err);
    if (rc != 0)
        goto out;
    rc = l->prov->headers(&headers, l->api_key, err);
    if (rc != 0)
        goto out;
    if (l->opt.model_fn != NULL) {
        rc = ask_in_process(l, text, text_len, sse, &reply, err);
        if (rc != 0)
            goto out;
        if (reply.body == NULL)
            goto out; /* the events went to *sse */
        goto whole;
    }
    long waited = 0;
    for (int attempt = 1;; attempt++) {
        tg__http_reply_cleanup(&reply);
        if (sse != NULL && *sse == NULL) {
            static const tg__lsse_ops sse_ops = {sse_text, sse_submit};
            rc = tg__lsse_new(l->prov, &sse_ops, l, sse, err);
            if (rc != 0)
                goto out;
        }
        rc = tg__http_post(&l->http, l->url, headers, text, text_len,
                           l->opt.request_timeout_ms, MAX_ANSWER_BYTES,
                           sse != NULL ? tg__lsse_feed : NULL,
                           sse != NULL ? *sse : NULL, &reply, err);
        if (rc != 0)
            goto out;
        if (reply.data_failed) {
            const tg_error *e = tg__lsse_error(*sse);
            rc = tg__loop_fail(err, e != NULL ? e->code : TG_EINTERNAL,
                               "%s %s: the streamed answer: %s", l->prov->name,
                               l->url, e != NULL ? e->message : "unreadable");
            goto out;
        }
        long status = reply.status;
        if (sse != NULL && status == 0 && reply.curl_code != CURLE_OK) {
            /* Was the answer a 2xx stream that dropped? */
            curl_easy_getinfo(l->http.easy, CURLINFO_RESPONSE_CODE, &status);
            if (status >= 200 && status < 300 && tg__lsse_handed(*sse) > 0)
                break; /* calls run: finish with what came */
        }
        if (reply.status >= 200 && reply.status < 300)
            break;
        char why[400], msg[320];
        if (sse != NULL && status >= 200 && status < 300) {
            snprintf(why, sizeof why, "the stream dropped: %s", reply.curl_msg);
            tg__lsse_free(*sse); /* nothing ran: start afresh */
            *sse = NULL;
        } else if (reply.status != 0) {
            tg__provider_error(reply.body, reply.len, msg, sizeof msg);
            snprintf(why, sizeof why, "HTTP %ld: %s", reply.status, msg);
        } else {
            snprintf(why, sizeof why, "connection failed: %s", reply.curl_msg);
        }
        if (!tg__retry_worth(reply.status, reply.curl_code)) {
            rc = tg__loop_fail(err, reply.status != 0 ? TG_EINVAL : TG_EIO,
                               "%s %s: %s", l->prov->name, l->url, why);
            goto out;
        }
        l->rnd = l->rnd * 1103515245u + 12345u;
        long delay = tg__retry_delay(attempt + 1, l->opt.retry_base_ms,
                                     tg__retry_server_ms(&reply), l->rnd >> 8);
        if (attempt >= l->opt.max_attempts ||
            waited + delay > l->opt.retry_budget_ms) {
            rc = tg__loop_fail(err, TG_EIO,
                               "%s %s: gave up after %d attempt%s (retry "
                               "budget: %d attempts, %ld ms of waiting): %s",
                               l->prov->name, l->url, attempt,
                               attempt == 1 ? "" : "s", l->opt.max_attempts,
                               l->opt.retry_budget_ms, why);
            goto out;
        }
        if (l->ev.retry != NULL)
            l->ev.retry(l->ud, attempt + 1, delay, why);
        waited += delay;
        if (tg__http_wait(&l->http, delay) != 0) {
            rc = tg__loop_fail(err, TG_ECANCELED,
                               "canceled while waiting to retry");
            goto out;
        }
    }
    if (sse != NULL && (reply.len == 0 || tg__lsse_handed(*sse) > 0))
        goto out; /* the events went to *sse */
    /* else a server that answered a streamed request whole: read it so */
whole:
    *raw = reply.body;
    *raw_len = reply.len;
    reply.body = NULL;
out:
    tg__http_reply_cleanup(&reply);
    curl_slist_free_all(headers);
    free(text);
    return rc;
}

/* ------------------------------------------------------------ the calls */

static void on_started(void *ud, const tg_call *call)
{
    tg_loop *l = ud;
    if (l->ev.call_started != NULL)
        l->ev.call_started(l->ud, l->iteration, call);
}

static void on_finished(void *ud, const tg_call *call, const tg_result *r)
{
    tg_loop *l = ud;
    for (size_t i = 0; l->stop_tools != NULL && i < l->opt.nstop_tools; i++)
        if (tg_result_succeeded(r) &&
            strcmp(tg_result_tool(r), l->stop_tools[i]) == 0)
            l->stop_tool_hit = 1;
    if (l->ev.call_finished != NULL)
        l->ev.call_finished(l->ud, l->iteration, call, r);
}

static void on_done(void *ud, tg_turn *turn, int status, const tg_error *err)
{
    tg_loop *l = ud;
    l->open_turns--;
    if (status != 0)
        l->turn_failed = 1;
}

static const tg_turn_ops turn_ops = {on_started, NULL, on_finished, on_done};

void tg__loop_scope(const tg_loop *l, int iteration, char *buf, size_t n)
{
    /* The journal keys calls by id within a caller scope, so a model that
     * numbers its calls afresh in every answer (call_0, ...) gets each call
     * run, while the same call of the same iteration, sent again by a
     * resumed loop, is answered from the journal. */
    snprintf(buf, n, "%s/%d", l->id, iteration);
}

int tg__loop_submit(tg_loop *l, tg_turn *turn, const char *scope, tg_error *err)
{
    char own[64];
    if (scope == NULL) {
        tg__loop_scope(l, l->iteration, own, sizeof own);
        scope = own;
    }
    int rc = tg_turn_set_caller(turn, scope, err);
    if (rc == 0 && l->nskills > 0)
        rc = tg_turn_set_skills(turn, (const char *const *)l->skill_names,
                                l->nskills, err);
    if (rc == 0)
        rc = tg_runtime_submit(l->rt, turn, &turn_ops, l, err);
    if (rc == 0)
        l->open_turns++;
    return rc;
}

static int sse_submit(void *ud, tg_turn *turn, tg_error *err)
{
    tg_loop *l = ud;
    int rc = tg__loop_submit(l, turn, NULL, err);
    if (rc == 0)
        tg_runtime_flush(l->rt); /* the tool starts now */
    return rc;
}

static void sse_text(void *ud, const char *text, size_t len)
{
    tg_loop *l = ud;
    if (l->ev.text != NULL)
        l->ev.text(l->ud, l->iteration, text, len);
}

/* The results of `turn` (every call has one) merged into *acc, as the
 * prompt factory makes them. */
static int merge_results(tg_loop *l, const tg_turn *turn, json_t **acc,
                         tg_error *err)
{
    char *results = NULL;
    int rc = l->ev.results(l->ud, turn, l->prov->format, &results, err);
    if (rc == 0 && results == NULL)
        rc =
            tg__loop_fail(err, TG_EINVAL, "the prompt factory gave no results");
    if (rc == 0)
        rc = tg__results_merge(acc, results, err);
    free(results);
    return rc;
}

/* The results of turns[0..n) as the runtime renders them, added to list
 * as text (tg__reqtext_add: not parsed, nor written again for the next
 * request) when each turn's results are an array of messages or there is
 * one turn; else (Anthropic's and Gemini's one message per turn, of
 * several turns) merged as JSON into one message. */
static int add_rendered(tg_loop *l, json_t *list, tg_turn *const *turns,
                        size_t n, tg_error *err)
{
    char *one = NULL, **texts = n > 1 ? calloc(n, sizeof *texts) : &one;
    size_t one_len = 0, *lens = n > 1 ? calloc(n, sizeof *lens) : &one_len;
    int rc = texts != NULL && lens != NULL
                 ? 0
                 : tg__loop_fail(err, TG_ENOMEM, "out of memory");
    int arrays = 1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc =
            tg_turn_render(turns[i], l->prov->format, &texts[i], &lens[i], err);
        size_t k = 0;
        while (rc == 0 && k < lens[i] &&
               (texts[i][k] == ' ' || texts[i][k] == '\n'))
            k++;
        if (rc == 0 && (k == lens[i] || texts[i][k] != '['))
            arrays = 0;
    }
    if (rc == 0 && (n == 1 || arrays)) {
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = tg__reqtext_add(&l->req, list, texts[i], lens[i], err);
    } else if (rc == 0) {
        json_t *acc = NULL;
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = tg__results_merge(&acc, texts[i], err);
        if (rc == 0 && acc != NULL)
            rc = tg__conv_add(list, acc, err);
        json_decref(acc);
    }
    for (size_t i = 0; texts != NULL && i < n; i++)
        tg_free(texts[i]);
    if (n > 1) {
        free(texts);
        free(lens);
    }
    return rc;
}

static void after_calls(tg_loop *l, size_t ncalls);

int tg__loop_finish_calls(tg_loop *l, tg_turn *const *turns, size_t n,
                          size_t ncalls, tg_error *err)
{
    (void)tg__runtime_drain(&l->http);
    if (l->open_turns != 0 || l->turn_failed)
        return tg__loop_fail(err, TG_EINTERNAL,
                             "the runtime failed while running the calls of "
                             "iteration %d",
                             l->iteration);
    json_t *list = json_object_get(l->conv, l->prov->list_key); /* borrowed */
    size_t from = json_array_size(list);
    int rc = 0;
    if (l->ev.results == NULL && n > 0) {
        rc = add_rendered(l, list, turns, n, err);
    } else {
        json_t *acc = NULL;
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = merge_results(l, turns[i], &acc, err);
        if (rc == 0 && acc != NULL)
            rc = tg__conv_add(list, acc, err);
        json_decref(acc);
    }
    if (rc == 0 && l->store != NULL) {
        json_t *extra = json_pack("{s:I}", "calls", (json_int_t)ncalls);
        rc = extra != NULL
                 ? tg__loop_journal_step(l, "results", from, extra, err)
                 : tg__loop_fail(err, TG_ENOMEM, "out of memory");
        json_decref(extra);
    }
    if (rc == 0) {
        l->pending = 0;
        after_calls(l, ncalls);
    }
    return rc;
}

static int fail_loop(tg_loop *l, int rc)
{
    l->stop = rc == TG_ECANCELED ? cut_reason(l) : TG_LOOP_FAILED;
    return rc == TG_ECANCELED ? 0 : rc;
}

/* After the calls of an iteration: the event, then whether to stop. */
static void after_calls(tg_loop *l, size_t ncalls)
{
    l->tool_calls += (long)ncalls;
    if (l->ev.iteration_done != NULL)
        l->ev.iteration_done(l->ud, l->iteration, ncalls);
    if (l->cancel)
        l->stop = cut_reason(l);
    else if (l->stop_tool_hit)
        l->stop = TG_LOOP_STOP_TOOL;
    else if (l->opt.max_tool_calls > 0 &&
             l->tool_calls >= l->opt.max_tool_calls)
        l->stop = TG_LOOP_TOOL_BUDGET;
    else if (l->opt.max_total_tokens > 0 &&
             l->tokens >= l->opt.max_total_tokens)
        l->stop = TG_LOOP_TOKEN_BUDGET;
    else if (l->iteration >= l->opt.max_iterations)
        l->stop = TG_LOOP_MAX_ITERATIONS;
}

static int answered(tg_loop *l)
{
    l->stop = TG_LOOP_ANSWERED;
    if (l->ev.iteration_done != NULL)
        l->ev.iteration_done(l->ud, l->iteration, 0);
    return 0;
}

/* Records the model's answer (the conversation's items from `from` on, and
 * its text) before any of its calls' results: what a resume rebuilds the
 * iteration from. */
static int record_answer(tg_loop *l, size_t from, long tokens, tg_error *err)
{
    l->tokens += tokens;
    if (l->store == NULL)
        return 0; /* the journal is off: nothing to build */
    json_t *extra = json_pack("{s:s,s:I}", "text", l->answer, "tokens",
                              (json_int_t)tokens); /* new ref */
    int rc = extra != NULL
                 ? tg__loop_journal_step(l, "answer", from, extra, err)
                 : tg__loop_fail(err, TG_ENOMEM, "out of memory");
    json_decref(extra);
    return rc;
}

/* A whole answer raw[0..raw_len): its calls run as one turn. It is read
 * once where it can be (tg__answer_fast), else with jansson. */
static int whole_answer(tg_loop *l, const char *raw, size_t raw_len,
                        tg_error *err)
{
    char *text = NULL;
    tg_turn *turn = NULL;
    json_t *resp = NULL;
    long tokens = 0;
    json_t *list = json_object_get(l->conv, l->prov->list_key); /* borrowed */
    size_t from = json_array_size(list);
    tg_error perr = {0};
    int prc = tg_turn_parse(raw, raw_len, l->prov->format, "the model's answer",
                            &turn, &perr);
    int rc = prc == 0 ? tg__answer_fast(&l->req, l->prov, list, raw, raw_len,
                                        turn, &text, &tokens, err)
                      : 0;
    if (rc < 0)
        goto out;
    if (rc == 0) {
        json_error_t jerr;
        resp = json_loadb(raw, raw_len, 0, &jerr); /* new ref */
        if (!json_is_object(resp)) {
            rc = tg__loop_fail(err, TG_EPARSE,
                               "%s %s: the answer is not a JSON object: %s",
                               l->prov->name, l->url, jerr.text);
            goto out;
        }
        l->answer_came = 1;
        if ((rc = l->prov->answer(list, resp, &text, err)) != 0)
            goto out;
        tg__usage u = {0};
        tg__usage_update(&u, resp);
        tokens = tg__usage_tokens(&u);
    }
    l->answer_came = 1;
    free(l->answer);
    l->answer = text;
    text = NULL;
    if ((rc = record_answer(l, from, tokens, err)) != 0)
        goto out;
    if (l->ev.text != NULL && l->answer[0] != '\0')
        l->ev.text(l->ud, l->iteration, l->answer, strlen(l->answer));
    if (prc != 0) {
        if (err != NULL)
            *err = perr;
        rc = prc;
        goto out;
    }
    size_t ncalls = tg_turn_call_count(turn);
    if (ncalls == 0) {
        rc = answered(l);
        goto out;
    }
    rc = tg__loop_submit(l, turn, NULL, err);
    if (rc == 0)
        rc = tg__loop_finish_calls(l, &turn, 1, ncalls, err);
out:
    json_decref(resp);
    tg_turn_free(turn);
    free(text);
    return rc;
}

static int step_whole(tg_loop *l, tg_error *err)
{
    char *raw = NULL;
    size_t raw_len = 0;
    int rc = ask_model(l, NULL, &raw, &raw_len, err);
    if (rc == 0)
        rc = whole_answer(l, raw, raw_len, err);
    free(raw);
    return rc;
}

/* One iteration with a streamed answer: each call runs as a turn of its
 * own from the moment it is complete; the results go in the model's
 * order. */
static int step_streamed(tg_loop *l, tg_error *err)
{
    tg__lsse *sse = NULL;
    tg_turn *whole = NULL, **turns = NULL;
    char *raw = NULL;
    size_t raw_len = 0;
    int rc = ask_model(l, &sse, &raw, &raw_len, err);
    if (rc == 0 && raw != NULL) {
        rc = whole_answer(l, raw, raw_len, err);
        goto out;
    }
    /* Canceled while calls of the stream run: they end canceled, and the
     * turn as far as it came is kept with their results. */
    if (rc == TG_ECANCELED && sse != NULL && tg__lsse_handed(sse) > 0)
        rc = 0;
    l->answer_came = rc == 0;
    if (rc == 0)
        rc = tg__lsse_finish(sse, &whole, err);
    if (rc != 0) {
        /* What was handed over still ends (canceled when so asked). */
        (void)tg__runtime_drain(&l->http);
        goto out;
    }
    char *text = strdup(tg__lsse_text(sse));
    if (text == NULL) {
        rc = tg__loop_fail(err, TG_ENOMEM, "out of memory");
        goto out;
    }
    free(l->answer);
    l->answer = text;
    json_t *list = json_object_get(l->conv, l->prov->list_key); /* borrowed */
    size_t from = json_array_size(list);
    rc = l->prov->stream_answer(list, l->answer, whole, tg__lsse_extra(sse),
                                err);
    if (rc == 0)
        rc = record_answer(l, from, tg__lsse_tokens(sse), err);
    if (rc != 0)
        goto out;
    size_t ncalls = tg_turn_call_count(whole);
    if (ncalls == 0) {
        rc = answered(l);
        goto out;
    }
    turns = calloc(ncalls, sizeof *turns);
    if (turns == NULL) {
        rc = tg__loop_fail(err, TG_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < ncalls; i++)
        turns[i] = tg__lsse_turn_for(sse, tg_call_id(tg_turn_call(whole, i)));
    rc = tg__loop_finish_calls(l, turns, ncalls, ncalls, err);
out:
    if (rc != 0)
        (void)tg__runtime_drain(&l->http);
    free(raw);
    free(turns);
    tg_turn_free(whole);
    tg__lsse_free(sse);
    return rc;
}

int tg_loop_step(tg_loop *l, tg_error *err)
{
    if (!l->started)
        return tg__loop_fail(err, TG_EINVAL, "the loop was not started");
    if (l->stop != TG_LOOP_RUNNING)
        return 0;
    if (!l->cancel && l->http.deadline_ms > 0 &&
        mono_ms() >= l->http.deadline_ms)
        l->cancel = TG__CANCEL_BUDGET;
    if (l->cancel) {
        l->stop = cut_reason(l);
        tg__loop_journal_end(l);
        return 0;
    }
    l->stop_tool_hit = 0;
    l->turn_failed = 0;
    int rc;
    if (l->pending) {
        /* a resumed loop: the last answer's calls first */
        l->answer_came = 1;
        rc = tg__loop_run_pending(l, err);
    } else {
        l->iteration++;
        l->answer_came = 0;
        rc = l->opt.stream ? step_streamed(l, err) : step_whole(l, err);
    }
    if (rc != 0) {
        if (!l->answer_came)
            l->iteration--; /* no answer came for it */
        rc = fail_loop(l, rc);
    }
    tg__loop_journal_end(l);
    return rc != 0 ? rc : l->stop == TG_LOOP_RUNNING ? 1 : 0;
}

int tg_loop_run(tg_loop *l, const char *prompt, tg_error *err)
{
    int rc = l->resumed ? 0 : tg_loop_start(l, prompt, err);
    if (rc != 0) {
        l->stop = TG_LOOP_FAILED;
        return rc;
    }
    while ((rc = tg_loop_step(l, err)) == 1)
        ;
    return rc < 0 ? rc : 0;
}

char *tg__loop_transcript_json(const json_t *conv, const char *id,
                               const char *provider, const char *model,
                               int iterations, const char *stop, long tokens)
{
    json_t *t = json_deep_copy(conv); /* new ref */
    if (t == NULL || json_object_set_new(t, "loop_id", json_string(id)) != 0 ||
        json_object_set_new(t, "provider", json_string(provider)) ||
        json_object_set_new(t, "model", json_string(model)) != 0 ||
        json_object_set_new(t, "iterations", json_integer(iterations)) ||
        json_object_set_new(t, "stop", json_string(stop)) != 0 ||
        json_object_set_new(t, "tokens", json_integer(tokens)) != 0) {
        json_decref(t);
        return NULL;
    }
    char *s = json_dumps(t, JSON_COMPACT);
    json_decref(t);
    return s;
}

char *tg_loop_transcript(const tg_loop *l)
{
    /* the items kept as text (tg__reqtext_add) as JSON again */
    json_t *conv = tg__reqtext_resolved(&l->req, l->conv, l->prov->list_key);
    char *t = conv != NULL
                  ? tg__loop_transcript_json(
                        conv, l->id, l->prov->name, l->model, l->iteration,
                        tg_loop_stop_name(l->stop), l->tokens)
                  : NULL;
    json_decref(conv);
    return t;
}
