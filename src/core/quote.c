/* SPDX-License-Identifier: MIT */
/* quote.c - the bounded quotations of quote.h. */
#include "quote.h"

#include <stdio.h>
#include <string.h>

#include "utf8.h"

const char *tg__quoten(tg__quote_buf *q, const char *s, size_t n)
{
    if (s == NULL)
        n = 0;
    const char *nul = n > 0 ? memchr(s, '\0', n) : NULL;
    size_t shown = nul != NULL ? (size_t)(nul - s) : n;
    size_t keep = tg__utf8_cut(s, shown, TG_QUOTE_MAX);
    if (keep > 0)
        memcpy(q->text, s, keep);
    q->text[keep] = '\0';
    if (keep < n)
        snprintf(q->text + keep, sizeof q->text - keep,
                 "\xE2\x80\xA6(%zu bytes)", n);
    return q->text;
}

const char *tg__quote(tg__quote_buf *q, const char *s)
{
    if (s == NULL)
        return "";
    size_t n = strnlen(s, TG_QUOTE_MAX + 1);
    if (n <= TG_QUOTE_MAX)
        return s;
    return tg__quoten(q, s, strlen(s));
}
