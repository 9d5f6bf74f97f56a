/* SPDX-License-Identifier: MIT */
/*
 * json_fast.h - a fast reader for JSON that is plainly valid (json_fast.c):
 * a builder of jansson values, and a cursor that walks a document without
 * building it, for parsers that need a few members out of a large document.
 *
 * Neither ever judges input. Both give up (return NULL or -1) on anything
 * that is not plainly valid JSON, and on anything jansson might treat
 * differently (see json_fast.c); the caller then uses jansson, whose answer
 * and error position are authoritative. Whatever they do accept, jansson
 * accepts with the same values.
 */
#ifndef TG_FORMATS_JSON_FAST_H
#define TG_FORMATS_JSON_FAST_H

#include <jansson.h>
#include <stddef.h>
#include <string.h>

#include "buf.h"

/* A new reference equal to what json_loadb(text, len, JSON_DECODE_ANY, plus
 * JSON_REJECT_DUPLICATES when reject_duplicates) returns - same types, same
 * member order - or NULL when the text is not plainly valid or memory ran
 * out. */
json_t *tg__json_fast_load(const char *text, size_t len, int reject_duplicates);

/* A cursor over text. Strings it returns point into the text when they have
 * no escapes, else into its scratch buffer: valid until the next string is
 * read. Free the scratch with tg__jcur_cleanup. */
typedef struct tg__jcur {
    const unsigned char *p, *end;
    int depth;
    char *scratch;
    size_t scratch_len, scratch_cap;
} tg__jcur;

void tg__jcur_init(tg__jcur *c, const char *text, size_t len);
void tg__jcur_cleanup(tg__jcur *c);
/* Skips white space; the next byte, or -1 at the end. */
int tg__jcur_peek(tg__jcur *c);
/* Consumes byte ch after white space. Returns 0, or -1 when it is not next. */
int tg__jcur_take(tg__jcur *c, int ch);
/* Reads a string value (white space, then "..."). Returns 0 or -1. */
int tg__jcur_string(tg__jcur *c, const char **s, size_t *n);
/* Reads a string value into b (a heap buffer, not one made with
 * tg__buf_init_with), replacing its contents: a string decoded in the
 * scratch buffer changes places with b's bytes instead of being copied.
 * Returns 0, -1 when it is not a string the reader accepts, or TG_ENOMEM. */
int tg__jcur_string_into(tg__jcur *c, tg__buf *b);
/* Validates and skips one value of any kind. Returns 0 or -1. */
int tg__jcur_skip(tg__jcur *c);
/* Member iteration, after the '{' was taken and *first set to 1: returns 1
 * with the member's key (the cursor then at its value), 0 after the closing
 * '}', -1 on anything else. */
int tg__jcur_member(tg__jcur *c, int *first, const char **key, size_t *klen);
/* Element iteration, after the '[' was taken and *first set to 1: returns 1
 * with the cursor at the next element, 0 after the closing ']', -1 else. */
int tg__jcur_element(tg__jcur *c, int *first);
/* 0 when only white space is left, else -1. */
int tg__jcur_end(tg__jcur *c);

/* For format fast paths (format.h, parse_fast), which give up on anything
 * but the plain shape they read: TG_JCUR_BAIL is their "not mine, take the
 * document path" answer, beside 0 and TG_ENOMEM. */
#define TG_JCUR_BAIL 1

/* Whether the key k[0..kn) is `want`. */
int tg__jcur_key_is(const char *k, size_t kn, const char *want);
/* The same for a string literal, its length known when compiling. */
#define TG_JCUR_KEY_IS(k, kn, lit)                                             \
    ((kn) == sizeof(lit) - 1 && memcmp((k), (lit), sizeof(lit) - 1) == 0)
/* Reads a string member into b (as tg__jcur_string_into) unless *seen says
 * the key came before (a duplicate key); sets *seen. Returns 0,
 * TG_JCUR_BAIL (duplicate, or not a plain string) or TG_ENOMEM. */
int tg__jcur_string_once(tg__jcur *c, tg__buf *b, int *seen);
/* Skips the value of a member the fast path does not read: a scalar is
 * skipped (0); an object or array, which a document of another format (or
 * an unusual one) may hold there, is not read at all: TG_JCUR_BAIL, so a
 * fast path never walks a large part of a document it will not take. */
int tg__jcur_skip_scalar(tg__jcur *c);
/* A string member a fast path keeps while it reads on: it points into the
 * text when it had no escapes, else into `copy` (the cursor's scratch is
 * reused by the next string). Zero it, then tg__buf_init(&copy, 0); free
 * with tg__buf_cleanup(&copy). */
typedef struct tg__jcur_str {
    const char *s;
    size_t n;
    int seen;
    tg__buf copy;
} tg__jcur_str;
/* Reads a string member into f unless f->seen says the key came before (a
 * duplicate): 0, TG_JCUR_BAIL or TG_ENOMEM. */
int tg__jcur_str_read(tg__jcur *c, tg__jcur_str *f);

/* The shape of choices[0].message (OpenAI) and candidates[0].content
 * (Gemini): an array whose first element is an object; that object's member
 * `key` is read by read(c, ctx) (with the cursor at its value), once - a
 * duplicate key, a missing key or an empty array is TG_JCUR_BAIL - its
 * other members and the other elements are only checked. Returns 0,
 * TG_JCUR_BAIL, or what read returned. */
int tg__jcur_first_element_member(tg__jcur *c, const char *key,
                                  int (*read)(tg__jcur *c, void *ctx),
                                  void *ctx);

/* Skips any value: 0, or TG_JCUR_BAIL when it is not plainly valid. */
int tg__jcur_skip_any(tg__jcur *c);

#endif
