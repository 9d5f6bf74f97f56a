/* SPDX-License-Identifier: MIT */
/*
 * stream_fast.c - the readers the stream's fast paths share (see
 * stream_core.h, "fast paths", which holds the smallest inline): string
 * members gathered into the event's arena, small integers. Each gives up
 * (TG__FAST_BAIL) on anything but the plain case, a duplicate key included,
 * and the document path then reads the event.
 */
#include "stream_core.h"

#include <string.h>

int tg__stream_fast_str(tg_stream *s, tg__span *sp)
{
    const char *str;
    size_t n;
    if (sp->seen)
        return TG__FAST_BAIL;
    sp->seen = 1;
    if (tg__jcur_peek(&s->cur) == 'n')
        return tg__jcur_skip(&s->cur) == 0 ? 0 : TG__FAST_BAIL;
    if (tg__jcur_string(&s->cur, &str, &n) != 0)
        return TG__FAST_BAIL;
    sp->off = s->arena.len;
    sp->len = n;
    sp->set = 1;
    if (tg__buf_append(&s->arena, str, n) != 0 ||
        tg__buf_append(&s->arena, "", 1) != 0)
        return TG_ENOMEM;
    return 0;
}

int tg__stream_fast_uint(tg_stream *s, long long *out, int *seen)
{
    tg__jcur *c = &s->cur;
    int ch = tg__jcur_peek(c);
    if (*seen || ch < '0' || ch > '9')
        return TG__FAST_BAIL;
    *seen = 1;
    const unsigned char *p = c->p;
    long long v = 0;
    if (*p == '0')
        p++;
    else
        for (int digits = 0; p < c->end && *p >= '0' && *p <= '9'; p++) {
            if (++digits > 15)
                return TG__FAST_BAIL;
            v = v * 10 + (*p - '0');
        }
    if (p < c->end &&
        (*p == '.' || *p == 'e' || *p == 'E' || (*p >= '0' && *p <= '9')))
        return TG__FAST_BAIL;
    c->p = p;
    *out = v;
    return 0;
}
