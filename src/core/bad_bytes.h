/* SPDX-License-Identifier: MIT */
/*
 * bad_bytes.h - strings that hold bytes no tool gets: U+0000 (a C string
 * ends there, so a tool would see less than the model wrote) and bytes that
 * are not UTF-8, among them the three bytes an unpaired UTF-16 surrogate
 * escape decodes to (jtape.h, TG_JTAPE_BAD_STRINGS). JSON read strictly
 * never holds them; a model turn read with tg__format_load may, and then
 * only the calls whose arguments hold them fail (MALFORMED_ARGUMENTS).
 * This file finds them in a string and in a jansson value, and says what
 * and where they are.
 */
#ifndef TG_CORE_BAD_BYTES_H
#define TG_CORE_BAD_BYTES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

#define TG_BAD_WHAT_MAX 48 /* room for tg__bad_bytes' description */

/* Whether s[0..n) holds U+0000 or bytes that are not UTF-8. Returns 1 with
 * *at the offset of the first such byte and what[TG_BAD_WHAT_MAX] saying
 * what is there ("U+0000 (NUL)", "an unpaired surrogate \uD800", "the byte
 * 0xFF, which is not UTF-8"); else 0. at and what may be NULL. */
int tg__bad_bytes(const char *s, size_t n, size_t *at, char *what);

/* Whether a key of v (borrowed) or of a value in it holds bytes no tool
 * gets: 1 or 0. For writing v as text, since jansson 2.14's dump ignores a
 * key it cannot write (the text then goes on without it, and may still
 * parse) while it refuses such a string. Cheap for the keys of text read
 * strictly: a pass over their bytes, most of them ASCII. */
int tg__bad_bytes_in_keys(const json_t *v);
/* Whether jansson's dump of v fails, whatever memory it has: a string
 * value of v is not UTF-8 (it writes U+0000 as an escape, and passes over
 * keys). 1 or 0. */
int tg__bad_bytes_unwritable(const json_t *v);

/* Appends s[0..n) to out with each run of bytes no tool gets, as
 * tg__bad_bytes finds them, replaced by U+FFFD: text that is valid UTF-8
 * and a C string, for keeping such a string where text goes (the journal's
 * args_raw). Returns 0, TG_ENOMEM or TG_ELIMIT. */
int tg__bad_bytes_replace(const char *s, size_t n, tg__buf *out);

/* One step of the path from a value's root to a node: a member's key
 * (key != NULL, klen bytes, borrowed from the value) or an array index. */
typedef struct tg__jseg {
    const char *key;
    size_t klen;
    size_t index;
} tg__jseg;

/* A walk's say about a node before it looks inside: 1 passes over the
 * node and everything in it, 0 looks. path[0..depth) leads to it. */
typedef int (*tg__bad_pass)(const json_t *node, const tg__jseg *path,
                            size_t depth, void *ctx);

/* The first key or string of v (borrowed), in document order, that holds
 * bytes no tool gets, skipping the nodes pass (may be NULL) passes over.
 * Returns 1 and writes into where (a buffer of the caller's, replaced; may
 * be NULL) "the string at /a/0" or "the key at /a/b" - the JSON pointer of
 * the string or the key, its own bad bytes shown as \u escapes; "the
 * string" when v is that string - and into what[TG_BAD_WHAT_MAX] (may be
 * NULL) what it holds, as tg__bad_bytes; 0 when there is none; TG_ENOMEM,
 * or TG_ELIMIT from where. */
int tg__bad_bytes_find(const json_t *v, tg__bad_pass pass, void *ctx,
                       tg__buf *where, char *what);

#endif
