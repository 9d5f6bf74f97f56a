/* SPDX-License-Identifier: MIT */
/*
 * hashmap.c - the hash table of hashmap.h: linear probing in a power-of-two
 * array of slots kept at most half full, so a miss ends within a few slots;
 * growth doubles the array and re-places every entry by its stored hash
 * (no key is hashed again); deletion shifts the entries after the hole back
 * toward their home slots, so no probe ever has to step over tombstones.
 */
#include "hashmap.h"

#include <stdlib.h>
#include <string.h>

#include "toolgate.h"

#define MIN_SLOTS 16

uint64_t tg__hash_bytes(const void *key, size_t len)
{
    const unsigned char *p = key;
    uint64_t h = TG__HASH_INIT;
    for (size_t i = 0; i < len; i++)
        h = tg__hash_step(h, p[i]);
    return h;
}

uint64_t tg__hash_str(const char *s, size_t *len)
{
    uint64_t h = TG__HASH_INIT;
    const char *p = s;
    for (; *p != '\0'; p++)
        h = tg__hash_step(h, (unsigned char)*p);
    *len = (size_t)(p - s);
    return h;
}

void tg__hmap_cleanup(tg__hmap *m)
{
    free(m->slot);
    m->slot = NULL;
    m->mask = 0;
    m->count = 0;
}

/* Moves every entry into a new array of n slots (a power of two). */
static int rehash(tg__hmap *m, size_t n)
{
    tg__hentry *s = calloc(n, sizeof *s);
    if (s == NULL)
        return TG_ENOMEM;
    for (size_t i = 0; m->slot != NULL && i <= m->mask; i++) {
        if (m->slot[i].key == NULL)
            continue;
        size_t j = m->slot[i].hash & (n - 1);
        while (s[j].key != NULL)
            j = (j + 1) & (n - 1);
        s[j] = m->slot[i];
    }
    free(m->slot);
    m->slot = s;
    m->mask = n - 1;
    return 0;
}

int tg__hmap_reserve(tg__hmap *m, size_t n)
{
    size_t have = m->slot != NULL ? m->mask + 1 : 0;
    if (n > SIZE_MAX / 4 / sizeof(tg__hentry))
        return TG_ENOMEM;
    size_t want = MIN_SLOTS;
    while (want < 2 * n)
        want *= 2;
    return want <= have ? 0 : rehash(m, want);
}

int tg__hmap_put(tg__hmap *m, const void *key, size_t len, uint64_t hash,
                 tg__hentry **out)
{
    if (len > UINT32_MAX)
        return TG_ELIMIT;
    if (m->slot == NULL || (m->count + 1) * 2 > m->mask + 1) {
        /* Growing for a key that is there already would fail for nothing
         * when memory is short: look first. */
        tg__hentry *e = tg__hmap_find(m, key, len, hash);
        if (e != NULL) {
            *out = e;
            return 1;
        }
        if (rehash(m, m->slot != NULL ? (m->mask + 1) * 2 : MIN_SLOTS) != 0)
            return TG_ENOMEM;
    }
    uint32_t h = (uint32_t)hash;
    size_t i = h & m->mask;
    for (; m->slot[i].key != NULL; i = (i + 1) & m->mask)
        if (m->slot[i].hash == h && m->slot[i].len == len &&
            memcmp(m->slot[i].key, key, len) == 0) {
            *out = &m->slot[i];
            return 1;
        }
    tg__hentry *e = &m->slot[i];
    e->key = key;
    e->len = (uint32_t)len;
    e->hash = h;
    memset(&e->val, 0, sizeof e->val);
    m->count++;
    *out = e;
    return 0;
}

void tg__hmap_remove(tg__hmap *m, tg__hentry *e)
{
    size_t hole = (size_t)(e - m->slot);
    size_t j = hole;
    m->count--;
    for (;;) {
        j = (j + 1) & m->mask;
        tg__hentry *x = &m->slot[j];
        if (x->key == NULL)
            break;
        /* x may fill the hole unless its home slot lies cyclically in
         * (hole, j]: then a probe for it starts after the hole. */
        size_t home = x->hash & m->mask;
        size_t dist_home = (j - home) & m->mask;
        size_t dist_hole = (j - hole) & m->mask;
        if (dist_home >= dist_hole) {
            m->slot[hole] = *x;
            hole = j;
        }
    }
    memset(&m->slot[hole], 0, sizeof m->slot[hole]);
}

tg__hentry *tg__hmap_next(const tg__hmap *m, size_t *pos)
{
    for (size_t i = *pos; m->slot != NULL && i <= m->mask; i++)
        if (m->slot[i].key != NULL) {
            *pos = i + 1;
            return &m->slot[i];
        }
    if (m->slot != NULL)
        *pos = m->mask + 1;
    return NULL;
}
