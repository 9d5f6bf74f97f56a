/* SPDX-License-Identifier: MIT */
/*
 * json_walk.h - the one traversal of a jansson value into JSON text, shared
 * by the writers that differ only in how they spell its leaves and order an
 * object's members: json_out.c's compact dump (jansson's spelling, members
 * in insertion order) and jcs.c's RFC 8785 canonical form (members sorted
 * by their keys' UTF-16 code units, ECMAScript's numbers and escapes). The
 * sorting's scratch stack is here too: jcs.c's tape writer sorts with it.
 */
#ifndef TG_CORE_JSON_WALK_H
#define TG_CORE_JSON_WALK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/* How a writer spells what the walk meets. Each leaf writer appends to out
 * and returns 0, TG_ENOMEM, TG_ELIMIT or its own error (passed on). */
typedef struct tg__json_style {
    int (*string)(tg__buf *out, const char *s, size_t len);
    int (*integer)(tg__buf *out, json_int_t v);
    int (*real)(tg__buf *out, const json_t *v); /* v is a JSON_REAL */
    bool sorted;   /* members by their keys' UTF-16 code units (JCS) */
    int max_depth; /* a container nested this deep (the top one is 0)... */
    int too_deep;  /* ...stops the walk with this code */
} tg__json_style;

/* Appends `value` (borrowed) as compact JSON text spelled by `style`.
 * Returns 0, the first error of a leaf writer or of the buffer, TG_ENOMEM
 * (the sorting's scratch), or style->too_deep; what was appended before a
 * failure stays. */
int tg__json_walk(const json_t *value, tg__buf *out,
                  const tg__json_style *style);

/* An object member being sorted. The tape writer (jcs.c) also keeps where
 * its value's token is and where an escaped key was decoded to. */
typedef struct tg__jmember {
    const char *key;
    size_t len;
    json_t *value; /* borrowed */
    size_t vidx;   /* tapes: the value's token */
    size_t koff;   /* tapes: the decoded key's offset */
    bool decoded;  /* tapes: the key had escapes */
} tg__jmember;

#define TG_JMEMBERS_SMALL 32

/* The members of every open object of one walk, on one stack-like array
 * (`m`), addressed by index: it may move while outer objects still use
 * their slice of it. Starts in `small`; tg__jmembers_cleanup frees. */
typedef struct tg__jmembers {
    tg__jmember *m;
    size_t used, cap;
    tg__jmember small[TG_JMEMBERS_SMALL];
} tg__jmembers;

/* Prepares an empty stack (no allocation). */
void tg__jmembers_init(tg__jmembers *s);
/* Makes room for n more members. 0 or TG_ENOMEM. */
int tg__jmembers_reserve(tg__jmembers *s, size_t n);
/* Frees what the stack allocated. */
void tg__jmembers_cleanup(tg__jmembers *s);
/* Sorts m[0..n) by the keys' UTF-16 code units (RFC 8785 3.2.3). */
void tg__jmembers_sort(tg__jmember *m, size_t n);

#endif
