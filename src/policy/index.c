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

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = TG__FNV_INIT;
    for (size_t i = 0; i < n; i++)
        h = tg__fnv_step(h, (unsigned char)s[i]);
    return h;
}

static int grow(struct tg__ptab *t)
{
    size_t n = t->slot ? (t->mask + 1) * 2 : 16;
    struct tg__ptab_slot *s = calloc(n, sizeof *s);
    if (s == NULL)
        return TG_ENOMEM;
    for (size_t i = 0; t->slot && i <= t->mask; i++) {
        if (t->slot[i].key == NULL)
            continue;
        size_t j = (size_t)t->slot[i].hash & (n - 1);
        while (s[j].key != NULL)
            j = (j + 1) & (n - 1);
        s[j] = t->slot[i];
    }
    free(t->slot);
    t->slot = s;
    t->mask = n - 1;
    return 0;
}

const struct tg__ptab_slot *tg__ptab_get(const struct tg__ptab *t,
                                         const char *key, size_t keylen,
                                         uint64_t hash)
{
    if (t->slot == NULL)
        return NULL;
    for (size_t j = (size_t)hash & t->mask;; j = (j + 1) & t->mask) {
        const struct tg__ptab_slot *s = &t->slot[j];
        if (s->key == NULL)
            return NULL;
        if (s->hash == hash && s->keylen == keylen &&
            memcmp(s->key, key, keylen) == 0)
            return s;
    }
}

int tg__ptab_add(struct tg__ptab *t, const char *key, size_t keylen,
                 uint32_t rule)
{
    /* Load at most 1/2: probes stay short on the hot path. */
    if ((t->slot == NULL || (t->used + 1) * 2 > t->mask + 1) && grow(t) != 0)
        return TG_ENOMEM;
    uint64_t h = hash_bytes(key, keylen);
    size_t j = (size_t)h & t->mask;
    while (t->slot[j].key != NULL &&
           !(t->slot[j].hash == h && t->slot[j].keylen == keylen &&
             memcmp(t->slot[j].key, key, keylen) == 0))
        j = (j + 1) & t->mask;
    struct tg__ptab_slot *s = &t->slot[j];
    if (s->key == NULL) {
        if ((s->key = malloc(keylen + 1)) == NULL)
            return TG_ENOMEM;
        memcpy(s->key, key, keylen);
        s->key[keylen] = '\0';
        s->keylen = keylen;
        s->hash = h;
        t->used++;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4;
        uint32_t *idx = realloc(s->idx, cap * sizeof *idx);
        if (idx == NULL)
            return TG_ENOMEM;
        s->idx = idx;
        s->cap = cap;
    }
    /* Rules are added in file order, so every list stays sorted. */
    s->idx[s->n++] = rule;
    return 0;
}

void tg__ptab_free(struct tg__ptab *t)
{
    for (size_t i = 0; t->slot && i <= t->mask; i++) {
        free(t->slot[i].key);
        free(t->slot[i].idx);
    }
    free(t->slot);
    memset(t, 0, sizeof *t);
}

int tg__policy_index(tg_policy *p)
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
