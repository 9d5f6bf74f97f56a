/* SPDX-License-Identifier: MIT */
/*
 * regex.c - `pattern` and `patternProperties` through PCRE2, made to behave
 * like ECMA-262 (the dialect JSON Schema names) where the two differ:
 *   - \d, \w, \b are ASCII in ECMA-262: PCRE2 in UTF mode without UCP agrees;
 *   - \s is Unicode white space in ECMA-262 but ASCII in that PCRE2 mode: it
 *     is rewritten to the explicit ECMA set (\S inside a class stays ASCII);
 *   - `.` stops at every ECMA line terminator (\n \r U+2028 U+2029);
 *   - `$` matches only at the very end (PCRE2_DOLLAR_ENDONLY);
 *   - `[]` matches nothing and `[^]` anything (PCRE2_ALLOW_EMPTY_CLASS);
 *   - \uXXXX and \u{X...} escapes (PCRE2_ALT_BSUX, PCRE2_EXTRA_ALT_BSUX);
 *   - `[` inside a class is a literal, not the start of a POSIX class.
 *
 * Matching never hangs: every regex carries a match context with match,
 * depth and heap limits (hit: TG_ELIMIT). Thread safety: a compiled regex
 * and its match context are read-only after compile and shared by
 * concurrent validations. Match data is per call: borrowed from a small
 * pool in the compiled schema (a slot taken with an atomic exchange, given
 * back at the end of the call, so no two calls ever share one), or, when
 * every slot is taken, carved out of an arena in the call's own context
 * (tg__rx_scratch). Either way the JIT path allocates nothing.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct tg__regex {
    pcre2_code *code;
    pcre2_match_context *mctx;
    int jit;
};

/* ECMA-262 WhiteSpace and LineTerminator, as the inside of a class. */
static const char ecma_space[] =
    "\\t\\n\\x0b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f"
    "\\u205f\\u3000\\ufeff";

/* ECMA-262 long General_Category names; PCRE2 10.42 knows the short
 * ones only. */
static const char *const gc_names[][2] = {
    {"Letter", "L"},
    {"Cased_Letter", "L&"},
    {"Uppercase_Letter", "Lu"},
    {"Lowercase_Letter", "Ll"},
    {"Titlecase_Letter", "Lt"},
    {"Modifier_Letter", "Lm"},
    {"Other_Letter", "Lo"},
    {"Mark", "M"},
    {"Combining_Mark", "M"},
    {"Nonspacing_Mark", "Mn"},
    {"Spacing_Mark", "Mc"},
    {"Enclosing_Mark", "Me"},
    {"Number", "N"},
    {"Decimal_Number", "Nd"},
    {"digit", "Nd"},
    {"Letter_Number", "Nl"},
    {"Other_Number", "No"},
    {"Punctuation", "P"},
    {"punct", "P"},
    {"Connector_Punctuation", "Pc"},
    {"Dash_Punctuation", "Pd"},
    {"Open_Punctuation", "Ps"},
    {"Close_Punctuation", "Pe"},
    {"Initial_Punctuation", "Pi"},
    {"Final_Punctuation", "Pf"},
    {"Other_Punctuation", "Po"},
    {"Symbol", "S"},
    {"Math_Symbol", "Sm"},
    {"Currency_Symbol", "Sc"},
    {"Modifier_Symbol", "Sk"},
    {"Other_Symbol", "So"},
    {"Separator", "Z"},
    {"Space_Separator", "Zs"},
    {"Line_Separator", "Zl"},
    {"Paragraph_Separator", "Zp"},
    {"Other", "C"},
    {"Control", "Cc"},
    {"cntrl", "Cc"},
    {"Format", "Cf"},
    {"Surrogate", "Cs"},
    {"Private_Use", "Co"},
    {"Unassigned", "Cn"},
};

/* Appends the PCRE2 spelling of the property name p[0..n) of \p{...}. */
static int put_property(const char *p, size_t n, tg__buf *out)
{
    /* "General_Category=X" and "gc=X" name X; "Script=X" and "sc=X" the
     * script X, as PCRE2 writes it bare; Script_Extensions as "scx:". */
    const char *eq = memchr(p, '=', n);
    if (eq != NULL) {
        size_t kl = (size_t)(eq - p);
        const char *v = eq + 1;
        size_t vl = n - kl - 1;
        if ((kl == 16 && memcmp(p, "General_Category", 16) == 0) ||
            (kl == 2 && memcmp(p, "gc", 2) == 0))
            return put_property(v, vl, out);
        if ((kl == 17 && memcmp(p, "Script_Extensions", 17) == 0) ||
            (kl == 3 && memcmp(p, "scx", 3) == 0)) {
            int rc = tg__buf_puts(out, "scx:");
            return rc ? rc : tg__buf_append(out, v, vl);
        }
        if ((kl == 6 && memcmp(p, "Script", 6) == 0) ||
            (kl == 2 && memcmp(p, "sc", 2) == 0))
            return tg__buf_append(out, v, vl);
    }
    for (size_t k = 0; k < sizeof gc_names / sizeof gc_names[0]; k++)
        if (strlen(gc_names[k][0]) == n && memcmp(gc_names[k][0], p, n) == 0)
            return tg__buf_puts(out, gc_names[k][1]);
    return tg__buf_append(out, p, n);
}

/* Syntax PCRE2 accepts but ECMA-262 does not: inline flag groups
 * ("(?i)"), comments ("(?#"), Python's "(?P", and the escape "\\a". */
static const char *not_ecma(const char *p, size_t n)
{
    int in_class = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\\') {
            if (i + 1 < n && p[i + 1] == 'a')
                return "\\a is not an ECMA-262 escape";
            i++;
            continue;
        }
        if (in_class) {
            in_class = p[i] != ']';
            continue;
        }
        if (p[i] == '[') {
            in_class = 1;
            if (i + 1 < n && p[i + 1] == ']')
                i++;
            continue;
        }
        if (p[i] != '(' || i + 2 >= n || p[i + 1] != '?')
            continue;
        char c = p[i + 2];
        if (c == '#' || c == 'P')
            return "(?# and (?P groups are not ECMA-262";
        if ((c >= 'a' && c <= 'z') || c == '-' || c == '^') {
            size_t k = i + 2;
            while (k < n &&
                   ((p[k] >= 'a' && p[k] <= 'z') || p[k] == '-' || p[k] == '^'))
                k++;
            if (k < n && p[k] == ')')
                return "inline flag groups such as (?i) are not ECMA-262";
        }
    }
    return NULL;
}

/* The PCRE2 spelling of an ECMA-262 pattern. */
static int translate(const char *p, size_t n, tg__buf *out)
{
    int rc = 0;
    int in_class = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char c = p[i];
        if (c == '\\' && i + 1 < n) {
            char e = p[++i];
            if (e == 's')
                rc = in_class ? tg__buf_puts(out, ecma_space)
                              : tg__buf_printf(out, "[%s]", ecma_space);
            else if (e == 'S' && !in_class)
                rc = tg__buf_printf(out, "[^%s]", ecma_space);
            else if (e == 'v')
                rc = tg__buf_puts(out, "\\x0b"); /* PCRE2: a class */
            else if ((e == 'p' || e == 'P') && i + 1 < n && p[i + 1] == '{' &&
                     memchr(p + i + 2, '}', n - i - 2) != NULL) {
                const char *name = p + i + 2;
                size_t nl =
                    (size_t)((const char *)memchr(name, '}', n - i - 2) - name);
                char head[3] = {'\\', e, '{'};
                rc = tg__buf_append(out, head, 3);
                if (rc == 0)
                    rc = put_property(name, nl, out);
                if (rc == 0)
                    rc = tg__buf_append(out, "}", 1);
                i += 2 + nl;
            } else {
                char two[2] = {'\\', e};
                rc = tg__buf_append(out, two, 2);
            }
            continue;
        }
        if (in_class) {
            if (c == ']')
                in_class = 0;
            rc = c == '[' ? tg__buf_puts(out, "\\[")
                          : tg__buf_append(out, &c, 1);
            continue;
        }
        if (c == '[') {
            in_class = 1;
            rc = tg__buf_append(out, &c, 1);
            if (rc == 0 && i + 1 < n && p[i + 1] == '^')
                rc = tg__buf_append(out, &p[++i], 1);
            /* A ']' right after '[' or '[^' closes an empty class in
             * ECMA-262, as PCRE2_ALLOW_EMPTY_CLASS reads it too. */
            if (rc == 0 && i + 1 < n && p[i + 1] == ']') {
                rc = tg__buf_append(out, &p[++i], 1);
                in_class = 0;
            }
            continue;
        }
        if (c == '.')
            rc = tg__buf_puts(out, "[^\\n\\r\\u2028\\u2029]");
        else
            rc = tg__buf_append(out, &c, 1);
    }
    return rc;
}

int tg__regex_compile(const char *pat, size_t len, tg__regex **out, char *why,
                      size_t cap)
{
    *out = NULL;
    tg__buf b;
    char store[256];
    tg__buf_init_with(&b, store, sizeof store, 0);
    pcre2_compile_context *cc = NULL;
    tg__regex *re = NULL;
    const char *no = not_ecma(pat, len);
    if (no != NULL) {
        if (why != NULL && cap > 0)
            snprintf(why, cap, "%s", no);
        return TG_ESCHEMA;
    }
    int rc = translate(pat, len, &b);
    if (rc != 0)
        goto fail;
    rc = TG_ENOMEM;
    cc = pcre2_compile_context_create(NULL);
    re = calloc(1, sizeof *re);
    if (cc == NULL || re == NULL)
        goto fail;
    pcre2_set_compile_extra_options(cc, PCRE2_EXTRA_ALT_BSUX);
    /* Nesting of the pattern itself is bounded so compiling cannot take
     * the stack. */
    pcre2_set_parens_nest_limit(cc, 200);
    int ecode;
    PCRE2_SIZE eoff;
    re->code = pcre2_compile((PCRE2_SPTR)tg__buf_cstr(&b), b.len,
                             PCRE2_UTF | PCRE2_ALT_BSUX | PCRE2_DOLLAR_ENDONLY |
                                 PCRE2_ALLOW_EMPTY_CLASS,
                             &ecode, &eoff, cc);
    if (re->code == NULL) {
        /* Compiling reports a failed allocation as a compile error of its
         * own ("failed to allocate heap memory"), not as NOMEMORY. */
        if (ecode == PCRE2_ERROR_NOMEMORY || ecode == PCRE2_ERROR_HEAP_FAILED)
            goto fail;
        char msg[160];
        pcre2_get_error_message(ecode, (PCRE2_UCHAR *)msg, sizeof msg);
        if (why != NULL && cap > 0)
            snprintf(why, cap, "%s", msg);
        rc = TG_ESCHEMA;
        goto fail;
    }
    re->jit = pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE) == 0;
    re->mctx = pcre2_match_context_create(NULL);
    if (re->mctx == NULL)
        goto fail;
    pcre2_set_match_limit(re->mctx, 1000000);
    pcre2_set_depth_limit(re->mctx, 10000);
    pcre2_set_heap_limit(re->mctx, 20000); /* KiB */
    pcre2_compile_context_free(cc);
    tg__buf_cleanup(&b);
    *out = re;
    return 0;
fail:
    pcre2_compile_context_free(cc);
    tg__regex_free(re);
    tg__buf_cleanup(&b);
    return rc;
}

void tg__regex_free(tg__regex *re)
{
    if (re == NULL)
        return;
    pcre2_code_free(re->code);
    pcre2_match_context_free(re->mctx);
    free(re);
}

/* The arena allocator of a call's match data: bump allocation in the
 * scratch, the heap beyond it (the interpreter's backtracking frames). */
static void *arena_malloc(PCRE2_SIZE size, void *data)
{
    tg__rx_scratch *s = data;
    size_t need = (size + 15) & ~(size_t)15;
    if (need <= sizeof s->arena - s->used) {
        void *p = s->arena + s->used;
        s->used += need;
        return p;
    }
    return malloc(size);
}

static void arena_free(void *p, void *data)
{
    tg__rx_scratch *s = data;
    uintptr_t a = (uintptr_t)p, lo = (uintptr_t)s->arena;
    if (a >= lo && a < lo + sizeof s->arena)
        return;
    free(p);
}

int tg__rx_pool_init(tg__rx_pool *pool)
{
    for (int k = 0; k < TG__RX_POOL; k++) {
        atomic_init(&pool->busy[k], 0);
        pool->md[k] = pcre2_match_data_create(1, NULL);
        if (pool->md[k] == NULL)
            return TG_ENOMEM;
    }
    return 0;
}

void tg__rx_pool_cleanup(tg__rx_pool *pool)
{
    for (int k = 0; k < TG__RX_POOL; k++) {
        pcre2_match_data_free(pool->md[k]);
        pool->md[k] = NULL;
    }
}

void tg__rx_scratch_init(tg__rx_scratch *scratch, tg__rx_pool *pool)
{
    scratch->pool = pool;
    scratch->slot = -1;
    scratch->gc = NULL;
    scratch->md = NULL;
    scratch->used = 0;
}

void tg__rx_scratch_cleanup(tg__rx_scratch *scratch)
{
    if (scratch->slot >= 0) {
        atomic_store_explicit(&scratch->pool->busy[scratch->slot], 0,
                              memory_order_release);
    } else {
        pcre2_match_data_free(scratch->md);
        pcre2_general_context_free(scratch->gc);
    }
    tg__rx_scratch_init(scratch, scratch->pool);
}

int tg__regex_match(const tg__regex *re, const char *s, size_t len,
                    tg__rx_scratch *scratch)
{
    for (int k = 0;
         scratch->md == NULL && scratch->pool != NULL && k < TG__RX_POOL; k++) {
        if (scratch->pool->md[k] != NULL &&
            atomic_exchange_explicit(&scratch->pool->busy[k], 1,
                                     memory_order_acquire) == 0) {
            scratch->md = scratch->pool->md[k];
            scratch->slot = k;
        }
    }
    if (scratch->md == NULL) {
        if (scratch->gc == NULL)
            scratch->gc =
                pcre2_general_context_create(arena_malloc, arena_free, scratch);
        if (scratch->gc == NULL)
            return TG_ENOMEM;
        scratch->md = pcre2_match_data_create(1, scratch->gc);
        if (scratch->md == NULL)
            return TG_ENOMEM;
    }
    int rc;
    if (re->jit)
        rc = pcre2_jit_match(re->code, (PCRE2_SPTR)s, len, 0, 0, scratch->md,
                             re->mctx);
    else
        rc = pcre2_match(re->code, (PCRE2_SPTR)s, len, 0, PCRE2_NO_UTF_CHECK,
                         scratch->md, re->mctx);
    if (rc >= 0)
        return 1;
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc == PCRE2_ERROR_NOMEMORY)
        return TG_ENOMEM;
    return TG_ELIMIT; /* match, depth, heap or JIT stack limit */
}
