/* SPDX-License-Identifier: MIT */
/*
 * jtape.c - the JSON tape of jtape.h: a strict parser that records tokens
 * instead of building values, the jansson value of a tape on demand, and
 * decoding of string tokens.
 *
 * Why: a call's arguments used to be a jansson object built at parse time,
 * about 25 allocations for a typical 7-member object, most of a call's
 * parse time and nearly all of its free time, while the pipeline itself
 * only needs the text (handed to the tool) and a canonical form (for the
 * checksum). The tape is one allocation.
 *
 * Acceptance and errors follow jansson 2.14's json_loadb(JSON_DECODE_ANY |
 * JSON_REJECT_DUPLICATES) exactly, including which error is reported first
 * and its position: the lexer below reads the text in the order jansson's
 * does, and every check happens at the point jansson makes it. In
 * particular:
 *   - jansson validates a UTF-8 sequence when it reads its first byte, in or
 *     out of strings, and reports "unable to decode byte 0x..";
 *   - a string is lexed whole (escape syntax, control characters) before
 *     surrogate escapes are checked, and "\u0000" is refused by the parser
 *     after the string (as a key: "NUL byte in object key not supported"),
 *     unless the caller opted in with TG_JTAPE_ALLOW_NUL;
 *   - the message carries the current token's text as "near '...'" when it
 *     is at most 20 bytes, nothing when longer, and "near end of file" when
 *     the token is empty;
 *   - depth counts values: a value nested in 2048 containers is refused.
 * The fuzz target fuzz_args compares acceptance, message, line and column
 * with jansson on every input.
 */
#include "jtape.h"
#include "hex.h"
#include "utf8.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate.h"

/* Lexer tokens, jansson's numbering. */
#define T_INVALID (-1)
#define T_EOF 0
#define T_STRING 256
#define T_INTEGER 257
#define T_REAL 258
#define T_TRUE 259
#define T_FALSE 260
#define T_NULL 261

#define SMALL_TOKENS 128
#define LINEAR_DUP_MEMBERS 16 /* members compared one by one; more: hashed */
#define ERR_TEXT 160          /* jansson's JSON_ERROR_TEXT_LENGTH */

typedef struct parser {
    const unsigned char *s;
    size_t len;
    size_t pos;   /* bytes consumed, as jansson's stream position */
    size_t start; /* first byte of the current token: its text is
                     s[start..pos), jansson's saved_text */
    int token;
    bool allow_nul; /* TG_JTAPE_ALLOW_NUL */
    bool bad_ok;    /* TG_JTAPE_BAD_STRINGS */
    bool dup_ok;    /* TG_JTAPE_DUPLICATE_KEYS */
    /* the current string token */
    size_t str_off, str_len;
    unsigned str_flags; /* TG_JT_ESCAPED; TG_JT_BAD (bad_ok only) */
    bool str_nul;
    /* tokens */
    tg__jtok *tok;
    size_t n, cap;
    bool tok_heap; /* tok was allocated (else it is small or the caller's) */
    tg__jtok small[SMALL_TOKENS];
    /* hashed keys of objects with many members: pairs (key token + 1,
     * object token), 0 = empty slot */
    uint32_t *keys;
    size_t nkeys, kcap;
    /* the error */
    tg__jtape_error *err;
    bool utf8_error; /* the error is a decoding error: no "near" context */
    /* NUL bytes jansson never sees (see lex): their offsets */
    bool unfetched; /* the last token ended by putting a byte back */
    size_t *nuls;
    size_t nnuls, nulcap;
    size_t nul_small[4];
} parser;

/* ------------------------------------------------------------ errors */

/* jansson's utf8_check_first: 0 for bytes that do not start a character. */
static int utf8_first(unsigned char u)
{
    if (u < 0x80)
        return 1;
    if (u <= 0xC1)
        return 0;
    if (u <= 0xDF)
        return 2;
    if (u <= 0xEF)
        return 3;
    if (u <= 0xF4)
        return 4;
    return 0;
}

/* Reports an error at the parser's position with the current token's text
 * as context, as jansson's error_set does. Returns TG_EPARSE. */
static int fail(parser *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int fail(parser *p, const char *fmt, ...)
{
    tg__jtape_error *e = p->err;
    if (e == NULL)
        return TG_EPARSE;
    char msg[ERR_TEXT - 32]; /* room for the context after it */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *saved = (const char *)p->s + p->start;
    size_t slen = p->pos - p->start;
    if (slen > 0 && saved[0] != '\0') {
        if (slen <= 20) {
            /* jansson prints the saved text with %s */
            const char *nul = memchr(saved, '\0', slen);
            int shown = (int)(nul ? (size_t)(nul - saved) : slen);
            snprintf(e->text, sizeof e->text, "%s near '%.*s'", msg, shown,
                     saved);
        } else
            snprintf(e->text, sizeof e->text, "%s", msg);
    } else if (p->utf8_error)
        snprintf(e->text, sizeof e->text, "%s", msg);
    else
        snprintf(e->text, sizeof e->text, "%s near end of file", msg);
    /* Line and column of the position: lines counted by '\n', columns in
     * characters (bytes that start one) since the last '\n'; the NUL bytes
     * jansson skipped count for neither. */
    int line = 1, col = 0;
    size_t k = 0;
    for (size_t i = 0; i < p->pos; i++) {
        if (k < p->nnuls && p->nuls[k] == i) {
            k++;
            continue;
        }
        if (p->s[i] == '\n') {
            line++;
            col = 0;
        } else if (utf8_first(p->s[i]))
            col++;
    }
    e->line = line;
    e->column = col;
    e->position = p->pos - k;
    e->oom = 0;
    return TG_EPARSE;
}

static int oom(parser *p)
{
    if (p->err != NULL) {
        memset(p->err, 0, sizeof *p->err);
        p->err->oom = 1;
        snprintf(p->err->text, sizeof p->err->text, "out of memory");
        p->err->line = -1;
        p->err->column = -1;
    }
    return TG_ENOMEM;
}

/* ------------------------------------------------------------ UTF-8 */

/* jansson reads a byte >= 0x80 by decoding its whole sequence first. */
static int bad_utf8(parser *p)
{
    p->utf8_error = true;
    return fail(p, "unable to decode byte 0x%x", p->s[p->pos]);
}

#define FETCH_ERROR (-2)

/* Reads one character's first byte as jansson's stream_get does: the byte,
 * -1 at the end, or FETCH_ERROR with the error set. */
static inline int fetch(parser *p)
{
    if (p->pos >= p->len)
        return -1;
    unsigned char c = p->s[p->pos];
    if (c >= 0x80 && tg__utf8_seq(p->s + p->pos, p->len - p->pos) == 0) {
        bad_utf8(p);
        return FETCH_ERROR;
    }
    p->pos++;
    return c;
}

static void unfetch(parser *p, int c)
{
    p->unfetched = c >= 0;
    if (c >= 0)
        p->pos--;
}

/* Records that jansson skips the NUL byte at the position (see lex). */
static int skip_nul(parser *p)
{
    if (p->nnuls == p->nulcap) {
        size_t cap = p->nulcap * 2;
        size_t *n = p->nuls == p->nul_small ? malloc(cap * sizeof *n)
                                            : realloc(p->nuls, cap * sizeof *n);
        if (n == NULL)
            return oom(p);
        if (p->nuls == p->nul_small)
            memcpy(n, p->nul_small, sizeof p->nul_small);
        p->nuls = n;
        p->nulcap = cap;
    }
    p->nuls[p->nnuls++] = p->pos++;
    return 0;
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}
static bool is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static long hex4(const unsigned char *p)
{
    return (long)tg__hex_value(p[0]) << 12 | (long)tg__hex_value(p[1]) << 8 |
           (long)tg__hex_value(p[2]) << 4 | (long)tg__hex_value(p[3]);
}

/* ------------------------------------------------------------ strings */

/* Bit 7 of each byte of the result is set when that byte of the 8 at q is
 * not a plain string byte (below 0x20, '"', '\\', or 0x80 and above). Bytes
 * above the first such byte may be flagged falsely (borrows of the
 * zero-byte test of "Bit Twiddling Hacks"); the lowest flagged one is
 * always right. */
static inline uint64_t stops8(const unsigned char *q)
{
    const uint64_t ones = 0x0101010101010101ULL;
    uint64_t w;
    memcpy(&w, q, 8);
    uint64_t qq = w ^ (ones * '"');
    uint64_t bs = w ^ (ones * '\\');
    return (((w - ones * 0x20) & ~w) | ((qq - ones) & ~qq) |
            ((bs - ones) & ~bs) | w) &
           0x8080808080808080ULL;
}

/* The second pass jansson makes over a string with escapes, once it was
 * lexed whole: surrogate pairs, and "\u0000" (remembered in str_nul). An
 * unpaired surrogate is an error, or with bad_ok marks the string bad (the
 * escape after a high one is then looked at on its own). */
static int check_escapes(parser *p)
{
    const unsigned char *q = p->s + p->str_off;
    const unsigned char *end = q + p->str_len;
    while (q < end) {
        if (*q != '\\') {
            q++;
            continue;
        }
        if (q[1] != 'u') {
            q += 2;
            continue;
        }
        long v = hex4(q + 2);
        q += 6;
        if (v >= 0xD800 && v <= 0xDBFF) {
            if (end - q >= 6 && q[0] == '\\' && q[1] == 'u') {
                long v2 = hex4(q + 2);
                if (v2 >= 0xDC00 && v2 <= 0xDFFF)
                    q += 6;
                else if (!p->bad_ok)
                    return fail(p, "invalid Unicode '\\u%04lX\\u%04lX'", v, v2);
                else
                    p->str_flags |= TG_JT_BAD;
            } else if (!p->bad_ok)
                return fail(p, "invalid Unicode '\\u%04lX'", v);
            else
                p->str_flags |= TG_JT_BAD;
        } else if (v >= 0xDC00 && v <= 0xDFFF) {
            if (!p->bad_ok)
                return fail(p, "invalid Unicode '\\u%04lX'", v);
            p->str_flags |= TG_JT_BAD;
        } else if (v == 0)
            p->str_nul = true;
    }
    return 0;
}

/* Lexes a string whose opening quote has been consumed. */
static int lex_string(parser *p)
{
    const unsigned char *s = p->s;
    size_t len = p->len;
    p->str_off = p->pos;
    p->str_flags = 0;
    p->str_nul = false;
    for (;;) {
        while (len - p->pos >= 8) {
            uint64_t hit = stops8(s + p->pos);
            if (hit == 0) {
                p->pos += 8;
                continue;
            }
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            p->pos += (size_t)__builtin_ctzll(hit) >> 3;
#endif
            break;
        }
        while (p->pos < len && s[p->pos] >= 0x20 && s[p->pos] < 0x80 &&
               s[p->pos] != '"' && s[p->pos] != '\\')
            p->pos++;
        if (p->pos >= len)
            return fail(p, "premature end of input");
        unsigned char c = s[p->pos];
        if (c == '"')
            break;
        if (c < 0x20) {
            if (c == '\n')
                return fail(p, "unexpected newline");
            return fail(p, "control character 0x%x", c);
        }
        if (c >= 0x80) {
            size_t k = tg__utf8_seq(s + p->pos, len - p->pos);
            if (k == 0) {
                if (!p->bad_ok)
                    return bad_utf8(p);
                p->str_flags |= TG_JT_BAD; /* a byte at a time */
                k = 1;
            }
            p->pos += k;
            continue;
        }
        /* a backslash */
        p->pos++;
        p->str_flags |= TG_JT_ESCAPED;
        int e = fetch(p);
        if (e == FETCH_ERROR)
            return TG_EPARSE;
        if (e == 'u') {
            for (int i = 0; i < 4; i++) {
                int h = fetch(p);
                if (h == FETCH_ERROR)
                    return TG_EPARSE;
                if (tg__hex_value(h) < 0)
                    return fail(p, "invalid escape");
            }
        } else if (e < 0 || strchr("\"\\/bfnrt", e) == NULL || e == 0)
            return fail(p, "invalid escape");
    }
    p->str_len = p->pos - p->str_off;
    p->pos++; /* the closing quote */
    p->token = T_STRING;
    return p->str_flags & TG_JT_ESCAPED ? check_escapes(p) : 0;
}

/* ------------------------------------------------------------ numbers */

/* Whether the integer text s[0..n) ('-' and digits) is beyond int64_t;
 * *neg tells which way. */
static bool int_overflows(const unsigned char *s, size_t n, bool *neg)
{
    *neg = n > 0 && s[0] == '-';
    size_t d = n - (*neg ? 1 : 0);
    if (d < 19)
        return false;
    if (d > 19)
        return true;
    const char *lim = *neg ? "9223372036854775808" : "9223372036854775807";
    return memcmp(s + (*neg ? 1 : 0), lim, 19) > 0;
}

/* strtod of a number token the way jansson's jsonp_strtod does it: the
 * '.' replaced by the locale's decimal point. Sets *overflow when the
 * value is out of range for a double. Returns 0, or -1 when a long token
 * could not be copied for want of memory. */
static int read_real(const char *s, size_t n, double *out, bool *overflow)
{
    char small[64];
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (buf == NULL)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    const struct lconv *lc = localeconv();
    if (lc != NULL && lc->decimal_point != NULL &&
        lc->decimal_point[0] != '.') {
        char *dot = strchr(buf, '.');
        if (dot != NULL)
            *dot = lc->decimal_point[0];
    }
    errno = 0;
    double v = strtod(buf, NULL);
    *overflow = (v == HUGE_VAL || v == -HUGE_VAL) && errno == ERANGE;
    *out = v;
    if (buf != small)
        free(buf);
    return 0;
}

/* Whether a real token can overflow a double at all: only when its
 * integer digits plus a positive exponent reach 308. */
static bool real_may_overflow(const unsigned char *s, size_t n)
{
    size_t i = s[0] == '-' ? 1 : 0, idigits = 0;
    while (i < n && is_digit(s[i]))
        i++, idigits++;
    while (i < n && s[i] != 'e' && s[i] != 'E')
        i++;
    long ex = 0;
    if (i < n) {
        i++;
        bool neg = s[i] == '-';
        if (s[i] == '+' || s[i] == '-')
            i++;
        for (; i < n; i++) {
            ex = ex * 10 + (s[i] - '0');
            if (ex > 100000)
                break;
        }
        if (neg)
            ex = 0;
    }
    return (long)idigits + ex >= 300;
}

/* Lexes a number whose first byte ('-' or a digit) has been consumed, as
 * jansson's lex_scan_number. */
static int lex_number(parser *p, int c)
{
    p->token = T_INVALID;
    if (c == '-' && (c = fetch(p)) == FETCH_ERROR)
        return TG_EPARSE;
    if (c == '0') {
        if ((c = fetch(p)) == FETCH_ERROR)
            return TG_EPARSE;
        if (is_digit(c)) {
            unfetch(p, c);
            return 0;
        }
    } else if (is_digit(c)) {
        do
            c = fetch(p);
        while (is_digit(c));
        if (c == FETCH_ERROR)
            return TG_EPARSE;
    } else {
        unfetch(p, c);
        return 0;
    }
    if (c != '.' && c != 'e' && c != 'E') {
        unfetch(p, c);
        bool neg;
        if (int_overflows(p->s + p->start, p->pos - p->start, &neg))
            return fail(p,
                        neg ? "too big negative integer" : "too big integer");
        p->token = T_INTEGER;
        return 0;
    }
    if (c == '.') {
        if ((c = fetch(p)) == FETCH_ERROR)
            return TG_EPARSE;
        if (!is_digit(c)) {
            unfetch(p, c);
            return 0;
        }
        do
            c = fetch(p);
        while (is_digit(c));
        if (c == FETCH_ERROR)
            return TG_EPARSE;
    }
    if (c == 'e' || c == 'E') {
        if ((c = fetch(p)) == FETCH_ERROR)
            return TG_EPARSE;
        if ((c == '+' || c == '-') && (c = fetch(p)) == FETCH_ERROR)
            return TG_EPARSE;
        if (!is_digit(c)) {
            unfetch(p, c);
            return 0;
        }
        do
            c = fetch(p);
        while (is_digit(c));
        if (c == FETCH_ERROR)
            return TG_EPARSE;
    }
    unfetch(p, c);
    const unsigned char *t = p->s + p->start;
    size_t n = p->pos - p->start;
    if (real_may_overflow(t, n)) {
        bool over;
        double v;
        if (read_real((const char *)t, n, &v, &over) != 0)
            return oom(p);
        if (over)
            return fail(p, "real number overflow");
    }
    p->token = T_REAL;
    return 0;
}

/* ------------------------------------------------------------ lexer */

/* The tokens other than punctuation; lex's slow half. */
static int lex_other(parser *p)
{
    const unsigned char *s = p->s;
    int c = s[p->pos];
    if (c >= 0x80) {
        size_t k = tg__utf8_seq(s + p->pos, p->len - p->pos);
        if (k == 0)
            return bad_utf8(p);
        p->pos += k; /* the whole character is the token's text */
        p->token = T_INVALID;
        return 0;
    }
    p->pos++;
    if (c == '"')
        return lex_string(p);
    if (is_digit(c) || c == '-')
        return lex_number(p, c);
    if (is_alpha(c)) {
        do
            c = fetch(p);
        while (is_alpha(c));
        if (c == FETCH_ERROR)
            return TG_EPARSE;
        unfetch(p, c);
        size_t n = p->pos - p->start;
        const unsigned char *w = s + p->start;
        if (n == 4 && memcmp(w, "true", 4) == 0)
            p->token = T_TRUE;
        else if (n == 5 && memcmp(w, "false", 5) == 0)
            p->token = T_FALSE;
        else if (n == 4 && memcmp(w, "null", 4) == 0)
            p->token = T_NULL;
        else
            p->token = T_INVALID;
        return 0;
    }
    p->token = T_INVALID;
    return 0;
}

/* Reads the next token into p->token, as jansson's lex_scan. Returns 0, or
 * TG_EPARSE with the error set (the lexer's own errors). White space and
 * punctuation are handled inline: they are half of all tokens. */
static inline int lex(parser *p)
{
    const unsigned char *s = p->s;
    /* jansson's stream keeps a byte put back in a buffer that a NUL byte
     * marks empty: a NUL right after a number or a word is put back and
     * then never read again, as if it were not there. */
    if (p->unfetched) {
        p->unfetched = false;
        if (p->pos < p->len && s[p->pos] == '\0' && skip_nul(p) != 0)
            return TG_ENOMEM;
    }
    while (p->pos < p->len && (s[p->pos] == ' ' || s[p->pos] == '\n' ||
                               s[p->pos] == '\t' || s[p->pos] == '\r'))
        p->pos++;
    p->start = p->pos;
    if (p->pos >= p->len) {
        p->token = T_EOF;
        return 0;
    }
    int c = s[p->pos];
    switch (c) {
    case '{':
    case '}':
    case '[':
    case ']':
    case ':':
    case ',':
        p->pos++;
        p->token = c;
        return 0;
    default:
        return lex_other(p);
    }
}

/* ------------------------------------------------------------ tokens */

static int grow_tokens(parser *p)
{
    size_t cap = p->cap * 2;
    tg__jtok *t;
    if (!p->tok_heap) {
        if ((t = malloc(cap * sizeof *t)) != NULL)
            memcpy(t, p->tok, p->n * sizeof *t);
    } else
        t = realloc(p->tok, cap * sizeof *t);
    if (t == NULL)
        return oom(p);
    p->tok = t;
    p->tok_heap = true;
    p->cap = cap;
    return 0;
}

static inline int emit(parser *p, unsigned kind, unsigned flags, size_t a,
                       size_t b)
{
    if (p->n == p->cap && grow_tokens(p) != 0)
        return TG_ENOMEM;
    tg__jtok *t = &p->tok[p->n++];
    t->kind = (uint8_t)kind;
    t->flags = (uint8_t)flags;
    t->a = (uint32_t)a;
    t->b = (uint32_t)b;
    return 0;
}

/* ------------------------------------------------------------ strings */

void tg__jstr_iter_init(tg__jstr_iter *it, const tg__jtape *tape,
                        const tg__jtok *tok)
{
    it->p = (const unsigned char *)tape->text + tok->a;
    it->end = it->p + tok->b;
    it->npend = it->ipend = 0;
}

static int utf8_put(long cp, unsigned char u[4])
{
    if (cp < 0x80) {
        u[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        u[0] = (unsigned char)(0xC0 | (cp >> 6));
        u[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        u[0] = (unsigned char)(0xE0 | (cp >> 12));
        u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    u[0] = (unsigned char)(0xF0 | (cp >> 18));
    u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    u[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

int tg__jstr_iter_next(tg__jstr_iter *it)
{
    if (it->ipend < it->npend)
        return it->pend[it->ipend++];
    if (it->p >= it->end)
        return -1;
    unsigned char c = *it->p++;
    if (c != '\\')
        return c;
    /* The tape holds only strings whose escapes are valid. */
    c = *it->p++;
    switch (c) {
    case 'b':
        return '\b';
    case 'f':
        return '\f';
    case 'n':
        return '\n';
    case 'r':
        return '\r';
    case 't':
        return '\t';
    case 'u':
        break;
    default:
        return c; /* '"', '\\', '/' */
    }
    long cp = hex4(it->p);
    it->p += 4;
    /* A high surrogate pairs with a low one after it; one left unpaired
     * (a TG_JT_BAD string) is written as its own three bytes. */
    if (cp >= 0xD800 && cp <= 0xDBFF && it->end - it->p >= 6 &&
        it->p[0] == '\\' && it->p[1] == 'u') {
        long lo = hex4(it->p + 2);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            it->p += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
    }
    it->npend = utf8_put(cp, it->pend);
    it->ipend = 1;
    return it->pend[0];
}

int tg__jtape_decode(const tg__jtape *tape, const tg__jtok *tok, tg__buf *out)
{
    const char *s = tape->text + tok->a;
    if (!(tok->flags & TG_JT_ESCAPED))
        return tg__buf_append(out, s, tok->b);
    /* Decoded text is never longer than its escaped form. */
    int rc = tg__buf_reserve(out, tok->b);
    if (rc != 0)
        return rc;
    tg__jstr_iter it;
    tg__jstr_iter_init(&it, tape, tok);
    char *w = out->data + out->len;
    int c;
    while ((c = tg__jstr_iter_next(&it)) >= 0)
        *w++ = (char)c;
    out->len = (size_t)(w - out->data);
    out->data[out->len] = '\0';
    return 0;
}

/* Whether keys x and y decode to the same bytes. */
static bool key_equal(const tg__jtape *t, const tg__jtok *x, const tg__jtok *y)
{
    if (!((x->flags | y->flags) & TG_JT_ESCAPED))
        return x->b == y->b &&
               memcmp(t->text + x->a, t->text + y->a, x->b) == 0;
    tg__jstr_iter a, b;
    tg__jstr_iter_init(&a, t, x);
    tg__jstr_iter_init(&b, t, y);
    int ca, cb;
    do {
        ca = tg__jstr_iter_next(&a);
        cb = tg__jstr_iter_next(&b);
    } while (ca == cb && ca >= 0);
    return ca == cb;
}

static uint32_t key_hash(const tg__jtape *t, const tg__jtok *k, uint32_t obj)
{
    uint32_t h = 2166136261u ^ obj; /* FNV-1a, salted by the object */
    tg__jstr_iter it;
    tg__jstr_iter_init(&it, t, k);
    int c;
    while ((c = tg__jstr_iter_next(&it)) >= 0)
        h = (h ^ (uint32_t)c) * 16777619u;
    return h;
}

/* ------------------------------------------------------------ duplicates */

/* Inserts key token k of object obj into the hash of keys; returns 1 when
 * an equal key of the same object is there already, 0 when inserted,
 * TG_ENOMEM. */
static int key_insert(parser *p, const tg__jtape *view, uint32_t k,
                      uint32_t obj)
{
    if (2 * (p->nkeys + 1) > p->kcap) {
        size_t cap = p->kcap ? p->kcap * 2 : 64;
        uint32_t *t = calloc(cap, 2 * sizeof *t);
        if (t == NULL)
            return TG_ENOMEM;
        for (size_t i = 0; i < p->kcap; i++) {
            if (p->keys[2 * i] == 0)
                continue;
            uint32_t kk = p->keys[2 * i] - 1, oo = p->keys[2 * i + 1];
            size_t j = key_hash(view, &p->tok[kk], oo) & (cap - 1);
            while (t[2 * j] != 0)
                j = (j + 1) & (cap - 1);
            t[2 * j] = kk + 1;
            t[2 * j + 1] = oo;
        }
        free(p->keys);
        p->keys = t;
        p->kcap = cap;
    }
    size_t j = key_hash(view, &p->tok[k], obj) & (p->kcap - 1);
    while (p->keys[2 * j] != 0) {
        if (p->keys[2 * j + 1] == obj &&
            key_equal(view, &p->tok[p->keys[2 * j] - 1], &p->tok[k]))
            return 1;
        j = (j + 1) & (p->kcap - 1);
    }
    p->keys[2 * j] = k + 1;
    p->keys[2 * j + 1] = obj;
    p->nkeys++;
    return 0;
}

/* Index of the token after the value at index i (the tape so far). */
static size_t skip(const parser *p, size_t i)
{
    unsigned kind = p->tok[i].kind;
    return kind == TG_JT_OBJECT || kind == TG_JT_ARRAY ? p->tok[i].a : i + 1;
}

/* Whether the key just emitted (the last token) repeats a key of object
 * obj, which has `members` members before it. 1 yes, 0 no, TG_ENOMEM. */
static int duplicate(parser *p, uint32_t obj, size_t members)
{
    tg__jtape view = {p->tok, p->n, (const char *)p->s, p->len, NULL};
    uint32_t k = (uint32_t)(p->n - 1);
    if (members < LINEAR_DUP_MEMBERS) {
        const tg__jtok *nk = &p->tok[k];
        size_t i = obj + 1;
        for (size_t m = 0; m < members; m++) {
            const tg__jtok *ok = &p->tok[i];
            /* Keys without escapes differ unless their bytes do not. */
            if ((ok->flags | nk->flags) & TG_JT_ESCAPED) {
                if (key_equal(&view, ok, nk))
                    return 1;
            } else if (ok->b == nk->b && p->s[ok->a] == p->s[nk->a] &&
                       memcmp(p->s + ok->a, p->s + nk->a, nk->b) == 0)
                return 1;
            i = skip(p, i + 1);
        }
        return 0;
    }
    if (members == LINEAR_DUP_MEMBERS) {
        /* The object outgrew linear search: hash the keys so far. */
        size_t i = obj + 1;
        for (size_t m = 0; m < members; m++) {
            int rc = key_insert(p, &view, (uint32_t)i, obj);
            if (rc < 0)
                return rc;
            i = skip(p, i + 1);
        }
    }
    return key_insert(p, &view, k, obj);
}

/* ------------------------------------------------------------ parser */

/* Parses the whole text into p->tok, as jansson's parse_json over
 * parse_value, parse_object and parse_array, without recursion. */
static int parse(parser *p)
{
    uint32_t open[TG_JTAPE_MAX_DEPTH]; /* token index of each open container */
    size_t nopen = 0;
    int depth = 0, rc;
    if ((rc = lex(p)) != 0)
        return rc;
    for (;;) {
        /* value: the current token starts a value */
        if (++depth > TG_JTAPE_MAX_DEPTH)
            return fail(p, "maximum parsing depth reached");
        switch (p->token) {
        case T_STRING:
            if (p->str_nul && !p->allow_nul) {
                if (!p->bad_ok)
                    return fail(p, "\\u0000 is not allowed without "
                                   "JSON_ALLOW_NUL");
                p->str_flags |= TG_JT_BAD;
            }
            rc = emit(p, TG_JT_STRING, p->str_flags, p->str_off, p->str_len);
            break;
        case T_INTEGER:
        case T_REAL:
            rc = emit(p, TG_JT_NUMBER, p->token == T_REAL ? TG_JT_REAL : 0,
                      p->start, p->pos - p->start);
            break;
        case T_TRUE:
            rc = emit(p, TG_JT_TRUE, 0, p->start, 4);
            break;
        case T_FALSE:
            rc = emit(p, TG_JT_FALSE, 0, p->start, 5);
            break;
        case T_NULL:
            rc = emit(p, TG_JT_NULL, 0, p->start, 4);
            break;
        case '{':
        case '[': {
            bool obj = p->token == '{';
            open[nopen++] = (uint32_t)p->n;
            if ((rc = emit(p, obj ? TG_JT_OBJECT : TG_JT_ARRAY, 0, 0, 0)) !=
                    0 ||
                (rc = lex(p)) != 0)
                return rc;
            if (p->token == (obj ? '}' : ']')) {
                p->tok[open[--nopen]].a = (uint32_t)p->n;
                break; /* an empty container is a whole value */
            }
            if (!obj) {
                if (p->token == T_EOF)
                    return fail(p, "']' expected");
                continue; /* the first element */
            }
            goto key;
        }
        case T_INVALID:
            return fail(p, "invalid token");
        default:
            return fail(p, "unexpected token");
        }
        if (rc != 0)
            return rc;
    after_value:
        /* a value ended */
        depth--;
        if (nopen == 0) {
            if ((rc = lex(p)) != 0)
                return rc;
            if (p->token != T_EOF)
                return fail(p, "end of file expected");
            return 0;
        }
        {
            tg__jtok *c = &p->tok[open[nopen - 1]];
            bool obj = c->kind == TG_JT_OBJECT;
            c->b++;
            if ((rc = lex(p)) != 0)
                return rc;
            if (p->token == ',') {
                if ((rc = lex(p)) != 0)
                    return rc;
                if (obj)
                    goto key;
                if (p->token == T_EOF)
                    return fail(p, "']' expected");
                continue;
            }
            if (p->token != (obj ? '}' : ']'))
                return fail(p, obj ? "'}' expected" : "']' expected");
            p->tok[open[--nopen]].a = (uint32_t)p->n;
            goto after_value;
        }
    key:
        /* the current token should be a member's key */
        if (p->token != T_STRING)
            return fail(p, "string or '}' expected");
        if (p->str_nul && !p->allow_nul) {
            if (!p->bad_ok)
                return fail(p, "NUL byte in object key not supported");
            p->str_flags |= TG_JT_BAD;
        }
        {
            uint32_t obj = open[nopen - 1];
            if ((rc = emit(p, TG_JT_KEY, p->str_flags, p->str_off,
                           p->str_len)) != 0)
                return rc;
            if (!p->dup_ok) {
                if ((rc = duplicate(p, obj, p->tok[obj].b)) < 0)
                    return oom(p);
                if (rc == 1)
                    return fail(p, "duplicate object key");
            }
        }
        if ((rc = lex(p)) != 0)
            return rc;
        if (p->token != ':')
            return fail(p, "':' expected");
        if ((rc = lex(p)) != 0)
            return rc;
    }
}

/* Bytes a copied text takes at the start of a tape's allocation: the text,
 * its NUL, and padding that aligns the tokens after it. */
static size_t text_room(size_t len)
{
    size_t align = _Alignof(tg__jtok);
    return (len + 1 + align - 1) / align * align;
}

/* The parse shared by the entry points below: tokens in p->tok (the
 * parser's own storage or the caller's, or the heap when they outgrew it). */
static int parse_text(parser *p, const char *text, size_t len, unsigned flags,
                      tg__jtok *storage, size_t cap, tg__jtape_error *err)
{
    if (err != NULL)
        memset(err, 0, sizeof *err);
    p->s = (const unsigned char *)(text ? text : "");
    p->len = text ? len : 0;
    p->pos = p->start = 0;
    p->token = T_INVALID;
    p->allow_nul = (flags & TG_JTAPE_ALLOW_NUL) != 0;
    p->bad_ok = (flags & TG_JTAPE_BAD_STRINGS) != 0;
    p->dup_ok = (flags & TG_JTAPE_DUPLICATE_KEYS) != 0;
    p->tok = storage;
    p->tok_heap = false;
    p->n = 0;
    p->cap = cap;
    p->keys = NULL;
    p->nkeys = p->kcap = 0;
    p->err = err;
    p->utf8_error = false;
    p->unfetched = false;
    p->nuls = p->nul_small;
    p->nnuls = 0;
    p->nulcap = sizeof p->nul_small / sizeof p->nul_small[0];
    if (len >= UINT32_MAX) {
        if (err != NULL)
            snprintf(err->text, sizeof err->text, "JSON text of 4 GiB or more");
        return TG_ELIMIT;
    }
    int rc = parse(p);
    free(p->keys);
    if (p->nuls != p->nul_small)
        free(p->nuls);
    return rc;
}

/* Moves a finished parse into one allocation: `head` bytes for the
 * caller, then (with copy) the text, then the tokens. */
static int finish(parser *p, bool copy, size_t head, tg__jtape *out)
{
    size_t tbytes = p->n * sizeof(tg__jtok);
    size_t toff = head + (copy ? text_room(p->len) : 0);
    char *mem = malloc(toff + tbytes);
    if (mem == NULL)
        return oom(p);
    memcpy(mem + toff, p->tok, tbytes);
    out->tok = (const tg__jtok *)(void *)(mem + toff);
    out->n = p->n;
    out->len = p->len;
    out->mem = mem;
    if (copy) {
        memcpy(mem + head, p->s, p->len);
        mem[head + p->len] = '\0';
        out->text = mem + head;
    } else
        out->text = (const char *)p->s;
    return 0;
}

int tg__jtape_parse(const char *text, size_t len, unsigned flags,
                    tg__jtape *out, tg__jtape_error *err)
{
    parser p;
    memset(out, 0, sizeof *out);
    int rc = parse_text(&p, text, len, flags, p.small, SMALL_TOKENS, err);
    /* With a copy, the text comes first, then the tokens, aligned. */
    if (rc == 0)
        rc = finish(&p, (flags & TG_JTAPE_COPY) != 0, 0, out);
    if (p.tok_heap)
        free(p.tok);
    return rc;
}

int tg__jtape_parse_in(const char *text, size_t len, tg__jtok *storage,
                       size_t cap, tg__jtape *out, tg__jtape_error *err)
{
    return tg__jtape_parse_in_flags(text, len, 0, storage, cap, out, err);
}

int tg__jtape_parse_in_flags(const char *text, size_t len, unsigned flags,
                             tg__jtok *storage, size_t cap, tg__jtape *out,
                             tg__jtape_error *err)
{
    parser p;
    memset(out, 0, sizeof *out);
    if (storage == NULL || cap == 0) {
        storage = p.small;
        cap = SMALL_TOKENS;
    }
    int rc = parse_text(&p, text, len, flags & TG_JTAPE_ALLOW_NUL, storage, cap,
                        err);
    if (rc == 0 && !p.tok_heap && storage != p.small) {
        out->tok = storage;
        out->n = p.n;
        out->text = (const char *)p.s;
        out->len = p.len;
        return 0;
    }
    if (rc == 0)
        rc = finish(&p, false, 0, out);
    if (p.tok_heap)
        free(p.tok);
    return rc;
}

void *tg__jtape_parse_head(const char *text, size_t len, size_t head,
                           tg__jtape *out, tg__jtape_error *err, int *rc_out)
{
    parser p;
    memset(out, 0, sizeof *out);
    size_t align = _Alignof(max_align_t);
    head = (head + align - 1) / align * align;
    int rc = parse_text(&p, text, len, 0, p.small, SMALL_TOKENS, err);
    if (rc == 0)
        rc = finish(&p, true, head, out);
    if (p.tok_heap)
        free(p.tok);
    *rc_out = rc;
    if (rc != 0)
        return NULL;
    void *block = out->mem;
    out->mem = NULL; /* the caller owns the block */
    return block;
}

int tg__jtape_copy(tg__jtape *dst, const tg__jtape *src)
{
    memset(dst, 0, sizeof *dst);
    if (src->tok == NULL)
        return 0;
    size_t toff = text_room(src->len);
    size_t tbytes = src->n * sizeof(tg__jtok);
    char *mem = malloc(toff + tbytes);
    if (mem == NULL)
        return TG_ENOMEM;
    memcpy(mem, src->text, src->len);
    mem[src->len] = '\0';
    memcpy(mem + toff, src->tok, tbytes);
    dst->tok = (const tg__jtok *)(void *)(mem + toff);
    dst->n = src->n;
    dst->text = mem;
    dst->len = src->len;
    dst->mem = mem;
    return 0;
}

void tg__jtape_free(tg__jtape *tape)
{
    if (tape == NULL)
        return;
    free(tape->mem);
    memset(tape, 0, sizeof *tape);
}

/* ------------------------------------------------------------ dump form */

/* Whether the escaped string at s[0..n) is written as jansson's dump writes
 * its value: escapes only for '"', '\\' and control characters, short ones
 * where they exist, else \u00XX in capitals. */
static bool dump_string_form(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\')
            continue;
        unsigned char e = s[++i];
        if (e == '/')
            return false;
        if (e != 'u') {
            continue; /* '"', '\\', b, f, n, r, t: the short forms */
        }
        long v = hex4(s + i + 1);
        if (v >= 0x20 || v == '\b' || v == '\f' || v == '\n' || v == '\r' ||
            v == '\t')
            return false;
        for (int k = 1; k <= 4; k++)
            if (s[i + k] >= 'a' && s[i + k] <= 'f')
                return false;
        i += 4;
    }
    return true;
}

/* Checks the value at token *i written from text position *pos on; moves
 * both past it. */
static bool dump_form_at(const tg__jtape *t, size_t *i, size_t *pos)
{
    const tg__jtok *k = &t->tok[*i];
    const unsigned char *s = (const unsigned char *)t->text;
    size_t p = *pos;
    switch (k->kind) {
    case TG_JT_OBJECT:
    case TG_JT_ARRAY: {
        bool obj = k->kind == TG_JT_OBJECT;
        size_t j = *i + 1;
        if (p >= t->len || s[p++] != (obj ? '{' : '['))
            return false;
        for (uint32_t m = 0; m < k->b; m++) {
            if (m > 0 && (p >= t->len || s[p++] != ','))
                return false;
            if (obj) {
                const tg__jtok *key = &t->tok[j++];
                if (key->a != p + 1 || !dump_string_form(s + key->a, key->b))
                    return false;
                p = key->a + key->b + 1;
                if (p >= t->len || s[p++] != ':')
                    return false;
            }
            if (!dump_form_at(t, &j, &p))
                return false;
        }
        if (p >= t->len || s[p++] != (obj ? '}' : ']'))
            return false;
        *i = k->a;
        *pos = p;
        return true;
    }
    case TG_JT_STRING:
        if (k->a != p + 1 || !dump_string_form(s + k->a, k->b))
            return false;
        *pos = k->a + k->b + 1;
        break;
    case TG_JT_NUMBER:
        /* Reals print with %.17g; an integer prints as written but -0. */
        if (k->a != p || (k->flags & TG_JT_REAL) ||
            (k->b == 2 && s[p] == '-' && s[p + 1] == '0'))
            return false;
        *pos = p + k->b;
        break;
    default:
        if (k->a != p)
            return false;
        *pos = p + k->b;
        break;
    }
    *i += 1;
    return true;
}

bool tg__jtape_is_dump_form(const tg__jtape *tape)
{
    size_t i = 0, pos = 0;
    if (tape == NULL || tape->n == 0)
        return false;
    return dump_form_at(tape, &i, &pos) && pos == tape->len;
}

/* ------------------------------------------------------------ values */

int tg__jtape_number(const tg__jtape *tape, const tg__jtok *tok, int64_t *iv,
                     double *dv)
{
    const char *s = tape->text + tok->a;
    if (tok->flags & TG_JT_REAL) {
        bool over;
        return read_real(s, tok->b, dv, &over) == 0 ? 2 : -1;
    }
    /* Digits checked by the parser to fit: accumulate negatively so that
     * INT64_MIN needs no special case. */
    size_t i = s[0] == '-' ? 1 : 0;
    int64_t v = 0;
    for (; i < tok->b; i++)
        v = v * 10 - (s[i] - '0');
    *iv = s[0] == '-' ? v : -v;
    return 1;
}

/* Builds the value at token i; *next receives the index after it. */
static json_t *build(const tg__jtape *t, size_t i, size_t *next, tg__buf *tmp)
{
    const tg__jtok *k = &t->tok[i];
    switch (k->kind) {
    case TG_JT_OBJECT: {
        json_t *o = json_object(); /* new ref */
        size_t j = i + 1;
        if (o == NULL)
            return NULL;
        for (uint32_t m = 0; m < k->b; m++) {
            const tg__jtok *key = &t->tok[j];
            const char *kp = t->text + key->a;
            size_t kl = key->b;
            char *kcopy = NULL;
            if (key->flags & TG_JT_ESCAPED) {
                tmp->len = 0;
                if (tg__jtape_decode(t, key, tmp) != 0 ||
                    (kcopy = malloc(tmp->len + 1)) == NULL) {
                    json_decref(o);
                    return NULL;
                }
                memcpy(kcopy, tmp->data, tmp->len + 1);
                kp = kcopy;
                kl = tmp->len;
            }
            json_t *v = build(t, j + 1, &j, tmp); /* new ref */
            int bad = v == NULL || json_object_setn_new_nocheck(o, kp, kl, v);
            free(kcopy);
            if (bad) {
                json_decref(o);
                return NULL;
            }
        }
        *next = k->a;
        return o;
    }
    case TG_JT_ARRAY: {
        json_t *a = json_array(); /* new ref */
        size_t j = i + 1;
        if (a == NULL)
            return NULL;
        for (uint32_t m = 0; m < k->b; m++) {
            json_t *v = build(t, j, &j, tmp); /* new ref */
            if (v == NULL || json_array_append_new(a, v) != 0) {
                json_decref(a);
                return NULL;
            }
        }
        *next = k->a;
        return a;
    }
    case TG_JT_STRING:
        *next = i + 1;
        if (!(k->flags & TG_JT_ESCAPED))
            return json_stringn_nocheck(t->text + k->a, k->b);
        tmp->len = 0;
        if (tg__jtape_decode(t, k, tmp) != 0)
            return NULL;
        return json_stringn_nocheck(tmp->data, tmp->len);
    case TG_JT_NUMBER: {
        int64_t iv;
        double dv;
        *next = i + 1;
        switch (tg__jtape_number(t, k, &iv, &dv)) {
        case 1:
            return json_integer((json_int_t)iv);
        case 2:
            return json_real(dv);
        default:
            return NULL;
        }
    }
    case TG_JT_TRUE:
        *next = i + 1;
        return json_true();
    case TG_JT_FALSE:
        *next = i + 1;
        return json_false();
    default:
        *next = i + 1;
        return json_null();
    }
}

json_t *tg__jtape_to_json(const tg__jtape *tape, size_t i)
{
    char small[256];
    tg__buf tmp;
    size_t next;
    if (tape == NULL || i >= tape->n)
        return NULL;
    tg__buf_init_with(&tmp, small, sizeof small, 0);
    json_t *v = build(tape, i, &next, &tmp); /* new ref */
    tg__buf_cleanup(&tmp);
    return v;
}
