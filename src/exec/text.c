/* SPDX-License-Identifier: MIT */
/*
 * text.c - small helpers of the exec layer: tool output as a JSON string
 * (invalid UTF-8 replaced, since a tool may print anything), error results
 * with unbounded messages, the arguments text handed to handlers, and the
 * directory a call runs in.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "text.h"

/* Length of the well-formed UTF-8 sequence at s (Unicode 15, table 3-7), or
 * 0 when it is ill-formed; then *bad is the length of its maximal subpart,
 * which is replaced by one U+FFFD (the practice Unicode recommends). */
static size_t utf8_seq(const unsigned char *s, size_t n, size_t *bad)
{
    unsigned c = s[0], lo = 0x80, hi = 0xBF;
    size_t need;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        need = 1;
    else if (c == 0xE0) {
        need = 2;
        lo = 0xA0;
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
        need = 2;
    else if (c == 0xED) {
        need = 2;
        hi = 0x9F;
    } else if (c == 0xF0) {
        need = 3;
        lo = 0x90;
    } else if (c >= 0xF1 && c <= 0xF3)
        need = 3;
    else if (c == 0xF4) {
        need = 3;
        hi = 0x8F;
    } else {
        *bad = 1;
        return 0;
    }
    for (size_t i = 1; i <= need; i++) {
        unsigned l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
        if (i >= n || s[i] < l || s[i] > h) {
            *bad = i;
            return 0;
        }
    }
    return need + 1;
}

json_t *tg__json_text(const char *data, size_t len)
{
    const unsigned char *s = (const unsigned char *)data;
    size_t i = 0, bad = 0;
    if (len == 0)
        return json_string("");
    while (i < len) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = utf8_seq(s + i, len - i, &bad);
        if (k == 0)
            break;
        i += k;
    }
    if (i == len)
        return json_stringn_nocheck(data, len);
    /* Copy with replacements, starting from the first bad byte. */
    tg__buf b;
    tg__buf_init(&b, 0);
    if (tg__buf_append(&b, data, i) != 0)
        goto oom;
    while (i < len) {
        size_t k = utf8_seq(s + i, len - i, &bad);
        if (k == 0) {
            if (tg__buf_append(&b, "\xEF\xBF\xBD", 3) != 0)
                goto oom;
            i += bad;
        } else {
            if (tg__buf_append(&b, data + i, k) != 0)
                goto oom;
            i += k;
        }
    }
    json_t *j = json_stringn_nocheck(b.data, b.len); /* new ref */
    tg__buf_cleanup(&b);
    return j;
oom:
    tg__buf_cleanup(&b);
    return NULL;
}

tg_result *tg__fail(const tg_call *call, tg_execution execution,
                    const char *code, json_t *details_take, const char *fmt,
                    ...)
{
    char small[512], *big = NULL;
    const char *msg = small;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        n = 0;
        small[0] = '\0';
    } else if ((size_t)n >= sizeof small) {
        big = malloc((size_t)n + 1);
        if (big == NULL) {
            json_decref(details_take);
            return NULL;
        }
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        msg = big;
    }
    json_t *e = json_object(); /* new ref */
    int bad = e == NULL;
    if (!bad) {
        bad |= json_object_set_new(e, "message", tg__json_text(msg, (size_t)n));
        bad |= json_object_set_new(e, "code", json_string(code));
        if (details_take != NULL)
            bad |= json_object_set(e, "details", details_take);
    }
    free(big);
    json_decref(details_take);
    if (bad) {
        json_decref(e);
        return NULL;
    }
    json_t *payload = json_pack("{s:o}", "error", e); /* new ref */
    return tg__result_new(call, TG_OUTCOME_ERROR, execution, payload);
}

const char *tg__call_args_text(const tg_call *call, size_t *len)
{
    /* The wire's own text of an object is valid JSON of that object: it is
     * handed over as it came, without encoding it again. */
    *len = call->args_len;
    return call->args_text;
}

int tg__call_cwd(const tg_config *cfg, const tg_call *call, const char **cwd,
                 char **owned)
{
    const char *base = cfg->cwd ? cfg->cwd : cfg->workspace;
    const json_t *c = call->context ? json_object_get(call->context, "cwd")
                                    : NULL; /* borrowed */
    const char *s = json_string_value(c);
    *owned = NULL;
    *cwd = base;
    if (s == NULL || *s == '\0')
        return 0;
    if (s[0] == '/' || base == NULL) {
        *cwd = s;
        return 0;
    }
    size_t bl = strlen(base), sl = strlen(s);
    char *j = malloc(bl + sl + 2);
    if (j == NULL)
        return TG_ENOMEM;
    memcpy(j, base, bl);
    j[bl] = '/';
    memcpy(j + bl + 1, s, sl + 1);
    *owned = j;
    *cwd = j;
    return 0;
}
