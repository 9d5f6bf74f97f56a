/* SPDX-License-Identifier: MIT */
/*
 * jtape.h - JSON text kept as text, with a "tape" of its tokens: a flat
 * array in document order, one allocation per document. It is how a call
 * holds its arguments: the checksum (JCS) and the handlers read the tape and
 * the text, and a jansson value is built only when something asks for one.
 *
 * The parser is strict RFC 8259 with jansson's rules, so that it accepts
 * exactly what json_loadb(JSON_DECODE_ANY | JSON_REJECT_DUPLICATES) accepts:
 * UTF-8 validated (no overlongs, no surrogates, nothing above U+10FFFF), no
 * "\u0000" (in keys or values; TG_JTAPE_ALLOW_NUL lifts that), no lone
 * surrogate escapes, no duplicate keys (compared after decoding escapes),
 * integers within int64_t, reals that do not overflow a double, nesting at
 * most 2048 values deep. On failure it reports jansson's message, line and
 * column for the same text.
 */
#ifndef TG_CORE_JTAPE_H
#define TG_CORE_JTAPE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define TG_JTAPE_MAX_DEPTH 2048 /* jansson's JSON_PARSER_MAX_DEPTH */

typedef enum tg__jkind {
    TG_JT_OBJECT = 1,
    TG_JT_ARRAY,
    TG_JT_KEY, /* a member name; its value is the next token */
    TG_JT_STRING,
    TG_JT_NUMBER,
    TG_JT_TRUE,
    TG_JT_FALSE,
    TG_JT_NULL
} tg__jkind;

/* Token flags. */
#define TG_JT_ESCAPED 1u /* key or string: has backslash escapes */
#define TG_JT_REAL 2u    /* number: has a fraction or an exponent */
/* key or string: holds what no JSON string carries to a tool - "\u0000",
 * an unpaired surrogate escape, bytes that are not UTF-8 - taken only with
 * TG_JTAPE_BAD_STRINGS */
#define TG_JT_BAD 4u

typedef struct tg__jtok {
    uint8_t kind;  /* tg__jkind */
    uint8_t flags; /* TG_JT_* */
    /* Scalars: byte offset of the token in the text (strings and keys:
     * after the opening quote). Containers: index of the token after the
     * container, so a container is skipped with i = tok[i].a. */
    uint32_t a;
    /* Scalars: length in bytes (strings and keys: without the quotes, as
     * written, escapes undecoded). Containers: number of members (objects)
     * or elements (arrays). */
    uint32_t b;
} tg__jtok;

typedef struct tg__jtape {
    const tg__jtok *tok; /* tok[0] is the document's value */
    size_t n;            /* number of tokens */
    const char *text;    /* the text the offsets point into */
    size_t len;
    void *mem; /* the one allocation (the copied text first, then tokens) */
} tg__jtape;

/* Where and why a text was refused: jansson's json_error_t fields for the
 * same text (text as jansson words it, with its "near '...'" context). */
typedef struct tg__jtape_error {
    int line;        /* 1-based */
    int column;      /* 1-based count of characters on the line, as jansson */
    size_t position; /* bytes read before the error */
    int oom;         /* 1 when parsing failed for want of memory */
    char text[160];
} tg__jtape_error;

/* Copy the text into the tape's allocation (NUL-ended, at its start);
 * tape->text then points there and the caller's text may go away. */
#define TG_JTAPE_COPY 1u
/* Accept "\u0000" in strings and in keys, which the parser refuses by
 * default as jansson does (jansson's JSON_ALLOW_NUL covers strings only;
 * the tape keeps lengths, so keys may hold U+0000 too). For texts whose
 * strings are only ever read with their lengths (tg__jtape_decode,
 * tg__jstr_iter), such as JSON Schema documents and instances; a call's
 * arguments keep the default. Everything else is checked as without it. */
#define TG_JTAPE_ALLOW_NUL 2u

/* Accept strings and keys that hold "\u0000", an unpaired surrogate escape
 * ("\uD800" alone, "\uDC00" alone, a low one before a high one) or bytes
 * that are not UTF-8, flagging their tokens TG_JT_BAD: for reading a whole
 * model turn in which one call's arguments hold them, so that the call
 * alone fails. Decoded, such a string holds U+0000 as a 0 byte, an
 * unpaired surrogate as its three bytes (ED A0 80 for \uD800) and other
 * bytes as they are: never valid UTF-8 without NUL, so the strings stay
 * recognisable in a jansson value too (tg__bad_bytes). Everything else is
 * checked as without it; the error of a text refused anyway is jansson's
 * for the text with those strings made good. */
#define TG_JTAPE_BAD_STRINGS 4u
/* Accept duplicate keys, as json_loadb without JSON_REJECT_DUPLICATES: the
 * tape keeps every member, and tg__jtape_to_json gives the last value of a
 * key in the place of its first, as jansson does. */
#define TG_JTAPE_DUPLICATE_KEYS 8u

/* Parses text[0..len) (one JSON value of any kind, white space around it).
 * Fills *out (free with tg__jtape_free) and returns 0; on bad JSON returns
 * TG_EPARSE with err filled, on allocation failure TG_ENOMEM (err->oom set),
 * for texts of 4 GiB or more TG_ELIMIT. err may be NULL. */
int tg__jtape_parse(const char *text, size_t len, unsigned flags,
                    tg__jtape *out, tg__jtape_error *err);

/* Like tg__jtape_parse without a copy of the text, but the tokens go to
 * the caller's storage[cap] when they fit (then tape->mem is NULL and
 * nothing is allocated; tg__jtape_free is still correct to call). For
 * short-lived tapes of small documents. */
int tg__jtape_parse_in(const char *text, size_t len, tg__jtok *storage,
                       size_t cap, tg__jtape *out, tg__jtape_error *err);
/* tg__jtape_parse_in with flags: TG_JTAPE_ALLOW_NUL (TG_JTAPE_COPY is
 * ignored: the tape points into text). */
int tg__jtape_parse_in_flags(const char *text, size_t len, unsigned flags,
                             tg__jtok *storage, size_t cap, tg__jtape *out,
                             tg__jtape_error *err);

/* Like tg__jtape_parse with TG_JTAPE_COPY, in an allocation that starts
 * with `head` bytes for the caller (a record that holds the tape): returns
 * that allocation (free it with free(), never with tg__jtape_free: the
 * tape's mem is NULL), or NULL with *rc set (TG_EPARSE and err filled,
 * TG_ENOMEM, TG_ELIMIT). The text and tokens follow the head, aligned. */
void *tg__jtape_parse_head(const char *text, size_t len, size_t head,
                           tg__jtape *out, tg__jtape_error *err, int *rc);

/* A copy of src with its own allocation holding the text and the tokens
 * (whatever src's text lives in). Returns 0 or TG_ENOMEM. */
int tg__jtape_copy(tg__jtape *dst, const tg__jtape *src);

/* Frees the tape's allocation; the struct is zeroed. NULL is a no-op. */
void tg__jtape_free(tg__jtape *tape);

/* The jansson value of the token at index i and its children (new
 * reference), equal to what json_loadb returns for the same text: same
 * types (integer or real), same strings, same member order. NULL on out of
 * memory. */
json_t *tg__jtape_to_json(const tg__jtape *tape, size_t i);

/* Whether the text is exactly what json_dumps(JSON_COMPACT |
 * JSON_ENCODE_ANY) writes for its value: no white space, escapes as jansson
 * writes them, no reals, no "-0". Lets a caller keep a text it was given
 * instead of encoding the value again. */
bool tg__jtape_is_dump_form(const tg__jtape *tape);

/* Decoded bytes of a key or string token, one at a time, for comparing and
 * copying strings with escapes without allocating. */
typedef struct tg__jstr_iter {
    const unsigned char *p, *end;
    unsigned char pend[4]; /* bytes of a decoded escape not yet returned */
    int npend, ipend;
} tg__jstr_iter;

void tg__jstr_iter_init(tg__jstr_iter *it, const tg__jtape *tape,
                        const tg__jtok *tok);
/* The next decoded byte, or -1 at the end of the string. */
int tg__jstr_iter_next(tg__jstr_iter *it);

/* Appends the decoded bytes of a key or string token to out; returns 0,
 * TG_ENOMEM or TG_ELIMIT. */
int tg__jtape_decode(const tg__jtape *tape, const tg__jtok *tok, tg__buf *out);

/* The number token as jansson reads it: an integer (returns 1, *iv) or a
 * real (returns 2, *dv); -1 when memory ran out copying a long real. The
 * tape only holds numbers that read without overflow. */
int tg__jtape_number(const tg__jtape *tape, const tg__jtok *tok, int64_t *iv,
                     double *dv);

#endif
