/* SPDX-License-Identifier: MIT */
/*
 * hashmap.h - the one hash table of toolgate: keys are byte strings (a tool
 * name, a call id, a URI, a policy glob's literal prefix, a pointer's own
 * bytes), values a pointer or an index. Open addressing with linear probing
 * at a load of at most 1/2, and backward-shift deletion (no tombstones), so
 * every probe ends at the first empty slot.
 *
 * The caller hashes the key - tg__hash_bytes or tg__hash_str (64-bit
 * FNV-1a), the same hash a byte at a time with tg__hash_step (the policy
 * index hashes every prefix of a name in one pass), or a mix of its own
 * for keys that are pointers - and owns the key's bytes: the table keeps
 * the pointer, which must stay valid and unchanged while its entry lives
 * (the caller may point it at other storage holding the same bytes).
 *
 * Operations that allocate fail with TG_ENOMEM and leave the table as it
 * was. A table is not safe to change from two threads; readers of a table
 * nobody changes any more may share it.
 */
#ifndef TG_CORE_HASHMAP_H
#define TG_CORE_HASHMAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* 64-bit FNV-1a: the starting value and one byte's step. */
#define TG__HASH_INIT UINT64_C(0xcbf29ce484222325)
static inline uint64_t tg__hash_step(uint64_t h, unsigned char c)
{
    return (h ^ c) * UINT64_C(0x100000001b3);
}

/* FNV-1a of len bytes. */
uint64_t tg__hash_bytes(const void *key, size_t len);
/* FNV-1a of a NUL-terminated string; *len gets its length (one pass). */
uint64_t tg__hash_str(const char *s, size_t *len);

/* One slot. Empty while key is NULL. */
typedef struct tg__hentry {
    const void *key; /* the caller's bytes */
    uint32_t len;    /* of the key, in bytes */
    uint32_t hash;   /* the low 32 bits of the key's hash */
    union {
        void *ptr;
        const void *cptr; /* for values the table's user only reads */
        size_t idx;
    } val; /* the caller's: zero in a new entry */
} tg__hentry;

/* A table; all zero (= {0}) is an empty table. */
typedef struct tg__hmap {
    tg__hentry *slot; /* NULL while empty and never grown */
    size_t mask;      /* slots - 1 */
    size_t count;     /* entries */
} tg__hmap;

/* Frees the slots (never the keys or values); the table is empty and
 * usable again. */
void tg__hmap_cleanup(tg__hmap *m);

/* Makes room for n entries in all, so that inserting up to that many
 * allocates nothing. Returns 0 or TG_ENOMEM. */
int tg__hmap_reserve(tg__hmap *m, size_t n);

/* The entry of the key (len bytes, hash its hash), or NULL. The entry
 * stays valid until the table is next changed. Inline: it is the hot path
 * of every user (a policy decision probes several tables). */
static inline tg__hentry *tg__hmap_find(const tg__hmap *m, const void *key,
                                        size_t len, uint64_t hash)
{
    if (m->slot == NULL || len > UINT32_MAX)
        return NULL;
    uint32_t h = (uint32_t)hash;
    for (size_t i = h & m->mask;; i = (i + 1) & m->mask) {
        tg__hentry *e = &m->slot[i];
        if (e->key == NULL)
            return NULL;
        if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0)
            return e;
    }
}

/* Finds or adds the key. Returns 1 with *out its existing entry; 0 with
 * *out a new entry (key stored, val zero, for the caller to fill); or
 * TG_ENOMEM (TG_ELIMIT for a key of 4 GiB or more) with the table
 * unchanged. *out stays valid until the table is next changed. */
int tg__hmap_put(tg__hmap *m, const void *key, size_t len, uint64_t hash,
                 tg__hentry **out);

/* Removes the entry e (from tg__hmap_find or tg__hmap_put). Other entries
 * may move: pointers to entries are invalid afterwards. Never allocates. */
void tg__hmap_remove(tg__hmap *m, tg__hentry *e);

/* Iteration in slot order: start with *pos = 0; each call returns the next
 * entry, or NULL at the end. The table must not change meanwhile. */
tg__hentry *tg__hmap_next(const tg__hmap *m, size_t *pos);

/* tg__hmap_find and tg__hmap_put for a NUL-terminated key. */
static inline tg__hentry *tg__hmap_find_str(const tg__hmap *m, const char *key)
{
    size_t len;
    uint64_t h = tg__hash_str(key, &len);
    return tg__hmap_find(m, key, len, h);
}
static inline int tg__hmap_put_str(tg__hmap *m, const char *key,
                                   tg__hentry **out)
{
    size_t len;
    uint64_t h = tg__hash_str(key, &len);
    return tg__hmap_put(m, key, len, h, out);
}

#endif
