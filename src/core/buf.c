/* SPDX-License-Identifier: MIT */
/* buf.c - the capped growable byte buffer of buf.h. */
#include "buf.h"

#include "toolgate.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tg__buf_init(tg__buf *b, size_t limit)
{
    memset(b, 0, sizeof *b);
    b->limit = limit ? limit : SIZE_MAX - 1;
}

void tg__buf_init_with(tg__buf *b, char *storage, size_t size, size_t limit)
{
    tg__buf_init(b, limit);
    if (storage != NULL && size > 0) {
        b->data = storage;
        b->cap = size;
        b->external = true;
        storage[0] = '\0';
    }
}

void tg__buf_cleanup(tg__buf *b)
{
    if (!b->external)
        free(b->data);
    b->external = false;
    b->data = NULL;
    b->len = b->cap = 0;
    b->truncated = false;
}

static int grow(tg__buf *b, size_t need)
{
    /* need counts the terminating NUL */
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    char *p;
    if (b->external) {
        /* Leave the caller's storage for the heap, keeping the contents. */
        if ((p = malloc(cap)) == NULL)
            return TG_ENOMEM;
        memcpy(p, b->data, b->len + 1);
        b->external = false;
    } else if ((p = realloc(b->data, cap)) == NULL)
        return TG_ENOMEM;
    b->data = p;
    b->cap = cap;
    return 0;
}

int tg__buf_reserve(tg__buf *b, size_t n)
{
    if (n > b->limit - b->len)
        return TG_ELIMIT;
    return grow(b, b->len + n + 1);
}

int tg__buf_append_grow(tg__buf *b, const void *p, size_t n)
{
    int rc = 0;
    size_t room = b->limit - b->len;
    if (n > room) {
        n = room;
        b->truncated = true;
        rc = TG_ELIMIT;
    }
    if (grow(b, b->len + n + 1) != 0)
        return TG_ENOMEM;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return rc;
}

int tg__buf_puts(tg__buf *b, const char *s)
{
    return tg__buf_append(b, s, strlen(s));
}

int tg__buf_printf(tg__buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return TG_EINVAL;
    if ((size_t)n < sizeof small)
        return tg__buf_append(b, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (big == NULL)
        return TG_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int rc = tg__buf_append(b, big, (size_t)n);
    free(big);
    return rc;
}

const char *tg__buf_cstr(tg__buf *b)
{
    if (b->data == NULL)
        return "";
    return b->data;
}

char *tg__buf_take(tg__buf *b)
{
    if (b->external) {
        char *copy = malloc(b->len + 1);
        if (copy == NULL)
            return NULL;
        memcpy(copy, b->data, b->len);
        copy[b->len] = '\0';
        tg__buf_init(b, b->limit);
        return copy;
    }
    if (b->data == NULL && grow(b, 1) != 0)
        return NULL;
    b->data[b->len] = '\0';
    char *p = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

int tg__buf_put_pointer_token(tg__buf *b, const char *key, size_t len)
{
    int rc = tg__buf_append(b, "/", 1);
    for (size_t i = 0, from = 0; rc == 0 && i <= len; i++) {
        if (i < len && key[i] != '~' && key[i] != '/')
            continue;
        rc = tg__buf_append(b, key + from, i - from);
        if (rc == 0 && i < len)
            rc = tg__buf_append(b, key[i] == '~' ? "~0" : "~1", 2);
        from = i + 1;
    }
    return rc;
}
