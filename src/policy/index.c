/* SPDX-License-Identifier: MIT */
/*
 * index.c - the rule index that keeps a decision from testing every rule:
 * rules whose tool is an exact name sit in a hash table under that name,
 * rules whose tool is a glob with a literal prefix ("fs_*", "db_[rw]*") sit
 * in a second table under the prefix, globs with no literal prefix but a
 * literal suffix ("*_file", "?hell") in a third under the suffix, and the
 * rest (no tool condition, or a glob like "*" or "[rw]*") in one list every
 * call sees. A decision gathers the lists its tool name can hit - the exact
 * name, each prefix and suffix length some glob has - and walks them merged
 * in rule order, so the
 * first rule that holds is still the first in the file. Built once at
 * compile time; read-only afterwards, hence safe to share between threads.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int tg__ptab_add(tg__hmap *t, const char *key, size_t keylen, uint32_t rule)
{
    uint64_t h = tg__hash_bytes(key, keylen);
    tg__hentry *e = tg__hmap_find(t, key, keylen, h);
    struct tg__plist *l = e ? e->val.ptr : NULL;
    if (l == NULL) {
        /* The list holds the key's bytes, which the table points at. */
        if ((l = calloc(1, sizeof *l + keylen + 1)) == NULL)
            return TG_ENOMEM;
        memcpy(l->key, key, keylen);
        if (tg__hmap_put(t, l->key, keylen, h, &e) < 0) {
            free(l);
            return TG_ENOMEM;
        }
        e->val.ptr = l;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        uint32_t *idx = realloc(l->idx, cap * sizeof *idx);
        if (idx == NULL)
            return TG_ENOMEM;
        l->idx = idx;
        l->cap = cap;
    }
    /* Rules are added in file order, so every list stays sorted. */
    l->idx[l->n++] = rule;
    return 0;
}

void tg__ptab_free(tg__hmap *t)
{
    size_t pos = 0;
    tg__hentry *e;
    while ((e = tg__hmap_next(t, &pos)) != NULL) {
        struct tg__plist *l = e->val.ptr;
        free(l->idx);
        free(l);
    }
    tg__hmap_cleanup(t);
}

int tg__policy_index(tg__policy *p)
{
    p->always = malloc((p->nrules + 1) * sizeof *p->always);
    if (p->always == NULL)
        return TG_ENOMEM;
    for (size_t i = 0; i < p->nrules; i++) {
        const struct tg__pattern *t = &p->rules[i].tool;
        int rc = 0;
        if (t->kind == TG__PAT_EXACT)
            rc = tg__ptab_add(&p->exact, t->text, t->prefix, (uint32_t)i);
        else if (t->kind != TG__PAT_NONE && t->prefix > 0) {
            size_t n = t->prefix < TG__POLICY_PREFIX_MAX
                           ? t->prefix
                           : TG__POLICY_PREFIX_MAX;
            rc = tg__ptab_add(&p->prefix, t->text, n, (uint32_t)i);
            p->prefix_lens |= UINT64_C(1) << (n - 1);
        } else if (t->kind == TG__PAT_GLOB && t->suffix > 0) {
            size_t n = t->suffix < TG__POLICY_PREFIX_MAX
                           ? t->suffix
                           : TG__POLICY_PREFIX_MAX;
            char rev[TG__POLICY_PREFIX_MAX];
            size_t tl = strlen(t->text);
            for (size_t j = 0; j < n; j++)
                rev[j] = t->text[tl - 1 - j];
            rc = tg__ptab_add(&p->suffix, rev, n, (uint32_t)i);
            p->suffix_lens |= UINT64_C(1) << (n - 1);
        } else
            p->always[p->nalways++] = (uint32_t)i;
        if (rc != 0)
            return rc;
    }
    return 0;
}
