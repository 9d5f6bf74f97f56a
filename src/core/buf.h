/* SPDX-License-Identifier: MIT */
/*
 * buf.h - a growable byte buffer with a hard cap. Every buffer that holds
 * input or tool output is one of these, so memory is bounded by
 * configuration, never by what a model or a tool sends.
 */
#ifndef TG_CORE_BUF_H
#define TG_CORE_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct tg__buf {
    char *data; /* NUL-terminated when len > 0 or after tg__buf_cstr */
    size_t len;
    size_t cap;     /* allocated bytes */
    size_t limit;   /* most bytes it may hold; 0 = SIZE_MAX */
    bool truncated; /* an append was cut at the limit */
    bool external;  /* data is the caller's storage (tg__buf_init_with) */
} tg__buf;

/* Prepares an empty buffer that will hold at most `limit` bytes (0: no cap). */
void tg__buf_init(tg__buf *b, size_t limit);
/* Like tg__buf_init, but the bytes start in the caller's `storage` of `size`
 * bytes (a stack array on hot paths: no allocation while the contents fit)
 * and move to the heap only when they outgrow it. The storage must outlive
 * the buffer's use; tg__buf_cleanup and tg__buf_take never free it. */
void tg__buf_init_with(tg__buf *b, char *storage, size_t size, size_t limit);
/* Frees the bytes; the buffer is empty and reusable afterwards. */
void tg__buf_cleanup(tg__buf *b);
/* tg__buf_append's general case (growing, the limit, nothing to append):
 * the same contract. */
int tg__buf_append_grow(tg__buf *b, const void *p, size_t n);
/* Appends n bytes. Past the limit, appends what fits, sets truncated and
 * returns TG_ELIMIT; TG_ENOMEM on allocation failure; else 0. Inline: the
 * usual append fits the room it has (a literal's memcpy is then a move). */
static inline int tg__buf_append(tg__buf *b, const void *p, size_t n)
{
    if (n > 0 && n < b->cap - b->len && n <= b->limit - b->len) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
        return 0;
    }
    return tg__buf_append_grow(b, p, n);
}
/* Appends a NUL-terminated string. */
int tg__buf_puts(tg__buf *b, const char *s);
/* Appends formatted text. */
int tg__buf_printf(tg__buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Ensures room for n more bytes; TG_ENOMEM or TG_ELIMIT on failure. */
int tg__buf_reserve(tg__buf *b, size_t n);
/* The contents as a NUL-terminated string (never NULL; borrowed). */
const char *tg__buf_cstr(tg__buf *b);
/* Hands the bytes to the caller (free with free()), NUL-terminated; the
 * buffer is left empty. NULL on out of memory. */
char *tg__buf_take(tg__buf *b);
/* Appends "/" and key[0..len) as a JSON pointer's reference token (RFC
 * 6901: '~' as "~0", '/' as "~1"). Returns 0, TG_ENOMEM or TG_ELIMIT. */
int tg__buf_put_pointer_token(tg__buf *b, const char *key, size_t len);

#endif
