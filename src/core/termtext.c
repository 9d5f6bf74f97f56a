/* SPDX-License-Identifier: MIT */
/*
 * termtext.c - the terminal escaping of termtext.h, and the public
 * tg_terminal_text over it. Plain runs (printable ASCII and harmless UTF-8)
 * are found first and copied whole; only the characters a terminal would
 * act on are written out one by one.
 */
#include "termtext.h"

#include <stdint.h>
#include <stdlib.h>

#include "toolgate.h"
#include "utf8.h"

/* The code point of the valid UTF-8 sequence s[0..len) (len from
 * tg__utf8_seq). */
static uint32_t decode(const unsigned char *s, size_t len)
{
    if (len == 2)
        return (uint32_t)(s[0] & 0x1F) << 6 | (s[1] & 0x3F);
    if (len == 3)
        return (uint32_t)(s[0] & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 |
               (s[2] & 0x3F);
    return (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 |
           (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
}

/* Code points above ASCII that a terminal acts on: the C1 controls and the
 * bidirectional embeddings, overrides and isolates. */
static int acted_on(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/* Whether the ASCII byte c passes unchanged. */
static int plain_ascii(unsigned char c, unsigned flags)
{
    if (c >= 0x20 && c < 0x7F)
        return 1;
    if (c == '\n' || c == '\t')
        return (flags & (TG__TERM_KEEP_LINES | TG__TERM_JSON)) != 0;
    return 0;
}

size_t tg__term_plain_prefix(const char *text, size_t n, unsigned flags)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            if (!plain_ascii(s[i], flags))
                return i;
            i++;
            continue;
        }
        size_t len = tg__utf8_seq(s + i, n - i);
        if (len == 0 || acted_on(decode(s + i, len)))
            return i;
        i += len;
    }
    return n;
}

static int put_hex(tg__buf *out, const char *fmt, unsigned v)
{
    return tg__buf_printf(out, fmt, v);
}

int tg__term_escape(tg__buf *out, const char *text, size_t n, unsigned flags)
{
    const unsigned char *s = (const unsigned char *)text;
    bool json = (flags & TG__TERM_JSON) != 0;
    size_t i = 0;
    int rc = 0;
    while (i < n && rc == 0) {
        size_t plain = tg__term_plain_prefix(text + i, n - i, flags);
        if (plain > 0) {
            rc = tg__buf_append(out, text + i, plain);
            i += plain;
            continue;
        }
        unsigned char c = s[i];
        if (c < 0x80) {
            /* a C0 control (not newline or tab kept) or DEL */
            if (json)
                rc = c == 0x7F ? tg__buf_puts(out, "\\u007f")
                               : tg__buf_puts(out, " ");
            else if (c == '\n')
                rc = tg__buf_puts(out, "\\n");
            else if (c == '\r')
                rc = tg__buf_puts(out, "\\r");
            else if (c == '\t')
                rc = tg__buf_puts(out, "\\t");
            else
                rc = put_hex(out, "\\x%02x", c);
            i++;
            continue;
        }
        size_t len = tg__utf8_seq(s + i, n - i);
        if (len == 0) {
            rc = json ? tg__buf_puts(out, "\\ufffd")
                      : put_hex(out, "\\x%02x", c);
            i++;
            continue;
        }
        rc = put_hex(out, "\\u%04x", (unsigned)decode(s + i, len));
        i += len;
    }
    return rc;
}

char *tg_terminal_text(const char *text, size_t len, unsigned flags)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    if (text == NULL)
        len = 0;
    /* the common case, nothing to escape, is one copy */
    if (tg__buf_reserve(&b, len + 1) != 0 ||
        tg__term_escape(&b, text, len, flags) != 0) {
        tg__buf_cleanup(&b);
        return NULL;
    }
    return tg__buf_take(&b);
}
