/* SPDX-License-Identifier: MIT */
/* turn.c - the turn container of turn.h and its public getters. */
#include "turn.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "quote.h"
#include "hashmap.h"
#include "zalloc.h"

tg_turn *tg__turn_new(const char *format)
{
    tg_turn *t = tg__zalloc(sizeof *t);
    if (t != NULL)
        t->format = format;
    return t;
}

void tg_turn_free(tg_turn *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->n; i++) {
        tg__call_free(t->calls[i]);
        tg__result_free(t->results[i]);
    }
    free(t->calls);
    free(t->results);
    for (size_t i = 0; i < t->nwarnings; i++)
        free(t->warnings[i]);
    free(t->warnings);
    json_decref(t->source);
    free(t);
}

int tg__turn_add_call(tg_turn *t, tg_call *call)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        tg_call **c = realloc(t->calls, cap * sizeof *c);
        if (c == NULL) {
            tg__call_free(call);
            return TG_ENOMEM;
        }
        t->calls = c;
        tg_result **r = realloc(t->results, cap * sizeof *r);
        if (r == NULL) {
            tg__call_free(call);
            return TG_ENOMEM;
        }
        t->results = r;
        t->cap = cap;
    }
    call->index = t->n;
    t->calls[t->n] = call;
    t->results[t->n] = NULL;
    t->n++;
    return 0;
}

int tg__turn_set_result(tg_turn *t, size_t i, tg_result *r)
{
    if (i >= t->n) {
        tg__result_free(r);
        return TG_EINVAL;
    }
    tg__result_free(t->results[i]);
    t->results[i] = r;
    return 0;
}

static void mark_duplicate(tg_call *call)
{
    tg__call_set_pre_error(call, "DUPLICATE_CALL_ID",
                           "call id '%s' appears more than once in this "
                           "turn",
                           call->id);
}

void tg__turn_mark_duplicates(tg_turn *t)
{
    if (t->n < 2)
        return;
    /* One pass over a table of first occurrences: linear in the number of
     * calls (a sort of the ids cost a quarter of a microsecond per call in
     * a turn of 10,000). */
    tg__hmap first = {0};
    int rc = tg__hmap_reserve(&first, t->n);
    for (size_t i = 0; rc == 0 && i < t->n; i++) {
        tg__hentry *e;
        /* reserved: only an id of 4 GiB could fail here */
        rc = tg__hmap_put_str(&first, t->calls[i]->id, &e);
        if (rc == 1) {
            mark_duplicate(t->calls[i]); /* a later occurrence */
            rc = 0;
        }
    }
    tg__hmap_cleanup(&first);
    if (rc == 0)
        return;
    /* Without the table, still never let a duplicate pass: quadratic scan
     * (marking a call again changes nothing). */
    for (size_t i = 1; i < t->n; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(t->calls[i]->id, t->calls[j]->id) == 0) {
                mark_duplicate(t->calls[i]);
                break;
            }
}

void tg__turn_check_calls(tg_turn *t)
{
    /* A pre-error is set even when its message cannot be (out of memory):
     * the call still ends MALFORMED_CALL, so the return is not needed. The
     * names first: a cut id is what duplicates are found among. */
    for (size_t i = 0; i < t->n; i++)
        (void)tg__call_check_names(t->calls[i]);
    tg__turn_mark_duplicates(t);
}

const char *tg_turn_format(const tg_turn *t)
{
    return t->format;
}
int tg_turn_message_span(const tg_turn *t, size_t *off, size_t *len)
{
    if (t == NULL || t->msg_len == 0)
        return 0;
    *off = t->msg_off;
    *len = t->msg_len;
    return 1;
}

size_t tg_turn_call_count(const tg_turn *t)
{
    return t->n;
}

const tg_call *tg_turn_call(const tg_turn *t, size_t i)
{
    return i < t->n ? t->calls[i] : NULL;
}

const tg_result *tg_turn_result(const tg_turn *t, size_t i)
{
    return i < t->n ? t->results[i] : NULL;
}

int tg_turn_set_caller(tg_turn *t, const char *caller_id, tg_error *err)
{
    if (caller_id != NULL &&
        strnlen(caller_id, TG_CALLER_ID_MAX + 1) > TG_CALLER_ID_MAX) {
        tg__quote_buf q;
        return tg__error_set(err, TG_EINVAL,
                             "caller id '%s' is longer than the limit of %d "
                             "bytes",
                             tg__quote(&q, caller_id), TG_CALLER_ID_MAX);
    }
    for (size_t i = 0; i < t->n; i++)
        if (t->calls[i]->caller_id == NULL &&
            tg__strset(&t->calls[i]->caller_id, caller_id) != 0)
            return tg__error_set(err, TG_ENOMEM, "out of memory");
    return 0;
}

int tg_turn_set_skills(tg_turn *t, const char *const *names, size_t n,
                       tg_error *err)
{
    if (t == NULL || (n > 0 && names == NULL))
        return tg__error_set(err, TG_EINVAL, "tg_turn_set_skills: no turn");
    for (size_t k = 0; k < n; k++)
        if (names[k] == NULL || names[k][0] == '\0')
            return tg__error_set(err, TG_EINVAL,
                                 "tg_turn_set_skills: skill %zu has no name",
                                 k + 1);
    for (size_t i = 0; i < t->n; i++) {
        if (t->calls[i]->skills != NULL)
            continue;
        json_t *a = json_array(); /* new ref */
        for (size_t k = 0; a != NULL && k < n; k++)
            if (json_array_append_new(a, json_string(names[k])) != 0) {
                json_decref(a);
                a = NULL;
            }
        if (a == NULL)
            return tg__error_set(err, TG_ENOMEM, "out of memory");
        t->calls[i]->skills = a;
    }
    return 0;
}

int tg_turn_cancel_all(tg_turn *t, const char *by, const char *reason,
                       tg_error *err)
{
    static const char *const kinds[] = {"user", "policy", "system"};
    const char *kind = NULL;
    for (size_t i = 0; by != NULL && i < 3; i++)
        if (strcmp(by, kinds[i]) == 0)
            kind = kinds[i];
    if (t == NULL || kind == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_turn_cancel_all needs a turn and by = user, "
                             "policy or system");
    for (size_t i = 0; i < t->n; i++) {
        if (t->results[i] != NULL)
            continue;
        if (tg__strset(&t->calls[i]->pre_cancel_reason,
                       reason ? reason : "canceled") != 0)
            return tg__error_set(err, TG_ENOMEM, "out of memory");
        t->calls[i]->pre_cancel_by = kind;
    }
    return 0;
}

int tg__turn_add_warning(tg_turn *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
    char **w =
        msg ? realloc(t->warnings, (t->nwarnings + 1) * sizeof *w) : NULL;
    if (w == NULL) {
        free(msg);
        return TG_ENOMEM;
    }
    t->warnings = w;
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->warnings[t->nwarnings++] = msg;
    return 0;
}

size_t tg_turn_warning_count(const tg_turn *t)
{
    return t != NULL ? t->nwarnings : 0;
}

const char *tg_turn_warning(const tg_turn *t, size_t i)
{
    return t != NULL && i < t->nwarnings ? t->warnings[i] : NULL;
}
