/* SPDX-License-Identifier: MIT */
/* turn.c - the turn container of turn.h and its public getters. */
#include "turn.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

tg_turn *tg__turn_new(const char *format)
{
    tg_turn *t = calloc(1, sizeof *t);
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

typedef struct id_key {
    const char *id;
    size_t index;
} id_key;

static int id_key_cmp(const void *a, const void *b)
{
    const id_key *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    if (c != 0)
        return c;
    return (x->index > y->index) - (x->index < y->index);
}

void tg__turn_mark_duplicates(tg_turn *t)
{
    if (t->n < 2)
        return;
    /* Sorting (id, index) pairs finds duplicates in O(n log n) and keeps the
     * first occurrence first, so only the later ones are marked. */
    id_key *k = malloc(t->n * sizeof *k);
    if (k == NULL) {
        /* Without memory, still never let a duplicate pass: quadratic scan. */
        for (size_t i = 1; i < t->n; i++)
            for (size_t j = 0; j < i; j++)
                if (strcmp(t->calls[i]->id, t->calls[j]->id) == 0) {
                    tg__call_set_pre_error(t->calls[i], "DUPLICATE_CALL_ID",
                                           "call id '%s' appears more than "
                                           "once in this turn",
                                           t->calls[i]->id);
                    break;
                }
        return;
    }
    for (size_t i = 0; i < t->n; i++)
        k[i] = (id_key){t->calls[i]->id, i};
    qsort(k, t->n, sizeof *k, id_key_cmp);
    for (size_t i = 1; i < t->n; i++)
        if (strcmp(k[i].id, k[i - 1].id) == 0)
            tg__call_set_pre_error(t->calls[k[i].index], "DUPLICATE_CALL_ID",
                                   "call id '%s' appears more than once in "
                                   "this turn",
                                   k[i].id);
    free(k);
}

const char *tg_turn_format(const tg_turn *t) { return t->format; }
size_t tg_turn_call_count(const tg_turn *t) { return t->n; }

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
    for (size_t i = 0; i < t->n; i++)
        if (t->calls[i]->caller_id == NULL &&
            tg__strset(&t->calls[i]->caller_id, caller_id) != 0)
            return tg__error_set(err, TG_ENOMEM, "out of memory");
    return 0;
}
