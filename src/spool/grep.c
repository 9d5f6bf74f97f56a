/* SPDX-License-Identifier: MIT */
/*
 * grep.c - artifact_grep: the lines of an artifact that match a PCRE2
 * pattern, with line numbers and context, like grep -n.
 *
 * Speed comes from not matching line by line: the file is read in 4 MiB
 * blocks cut at a newline, and PCRE2's JIT searches a whole block at once
 * (multiline mode, so ^ and $ still mean line start and end); the line of
 * each match is then found with memrchr/memchr, and line numbers are
 * counted (SSE2) only up to the matches. A match that runs past its line's
 * end (a pattern such as a\s+b can cross a newline), and every match of a
 * pattern with lookaround, is confirmed on its line alone, so the answer
 * is what line-by-line matching gives. Patterns whose meaning depends on
 * the subject's bounds (\A, \z, \G, verbs) run line by line throughout.
 *
 * PCRE2's match limit bounds the work: over a block it only means "search
 * this stretch line by line" (a big block can legitimately need many
 * steps); on one line it is a catastrophic pattern, and a clear error.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "error.h"

#define GREP_BLOCK ((size_t)4 << 20)     /* bytes searched per JIT call */
#define GREP_MAX_LINE ((size_t)16 << 20) /* longer lines are split */
#define LINE_MATCH_LIMIT 10000000        /* PCRE2 steps per line */
#define BLOCK_MATCH_LIMIT 20000000       /* per block search */
#define DEPTH_LIMIT 10000
#define HEAP_LIMIT_KIB 65536
#define LINE_MODE_STRETCH (256 * 1024) /* bytes run per line after a limit */
#define CONTEXT_WINDOW (256 * 1024)    /* bytes read for context lines */

typedef struct grepctx {
    const tg__spool_grep_opts *o;
    const spool_meta *m;
    tg_error *err;
    int fd;
    pcre2_code *re;
    pcre2_match_data *md;
    pcre2_match_context *mblock, *mline;
    bool jit;
    bool line_mode; /* every line alone */
    bool confirm;   /* every block match re-checked on its line */
    uint64_t max;
    size_t line_cap, result_cap, shown;
    json_t *matches; /* new ref */
    uint64_t count;
    bool truncated, stop;
    /* line numbers: line_at is the line of buf[counted] */
    size_t counted;
    uint64_t line_at;
    /* A line longer than GREP_MAX_LINE is searched in pieces, one block
     * each: `carried` says the line the block starts with already matched
     * in an earlier piece (it is not counted twice); `piece_matched` that
     * this block's last line matched. */
    bool carried, piece_matched;
    bool block_split; /* the block ends inside a line */
    bool mid_line;    /* the block starts inside a line */
    size_t block_len;
    uint64_t base; /* file offset of the block */
    /* Context lines are shown once, as grep does: before-lines stop at the
     * last line already shown; the previous match's after-lines stop
     * short of a match that follows closely. */
    uint64_t last_shown;
    json_t *prev_after; /* borrowed: the previous match's "after" */
} grepctx;

/* Matches s[0..n) from `start`. The ends of the subject are the ends of
 * a line, except where a line longer than GREP_MAX_LINE was cut into
 * pieces: a piece that starts inside the line is not at its start (no ^
 * there), one that stops inside it not at its end (no $). `from` and `to`
 * are the subject's offsets in the block. */
static int match(grepctx *g, const char *s, size_t n, size_t start, size_t from,
                 size_t to, pcre2_match_context *mc)
{
    uint32_t opts = 0;
    if (from == 0 && g->mid_line)
        opts |= PCRE2_NOTBOL;
    if (to == g->block_len && g->block_split)
        opts |= PCRE2_NOTEOL;
    if (g->jit)
        return pcre2_jit_match(g->re, (PCRE2_SPTR)s, n, start, opts, g->md, mc);
    return pcre2_match(g->re, (PCRE2_SPTR)s, n, start,
                       opts | PCRE2_NO_UTF_CHECK, g->md, mc);
}

static bool contains(const char *p, size_t n, const char *needle)
{
    return memmem(p, n, needle, strlen(needle)) != NULL;
}

static int compile(grepctx *g, tg__spool_grep_opts const *o)
{
    uint32_t opts = PCRE2_MULTILINE;
    if (!g->m->binary)
        opts |= PCRE2_UTF; /* text artifacts are valid UTF-8 throughout */
    if (o->ignore_case)
        opts |= PCRE2_CASELESS;
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    if (cc == NULL)
        return tg__error_set(g->err, TG_ENOMEM, "out of memory");
    /* lines end at \n whatever PCRE2's build default is */
    pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    int code;
    PCRE2_SIZE off;
    g->re = pcre2_compile((PCRE2_SPTR)o->pattern, o->pattern_len, opts, &code,
                          &off, cc);
    pcre2_compile_context_free(cc);
    if (g->re == NULL) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof msg);
        return tg__error_set(g->err, TG_EINVAL,
                             "invalid pattern at offset %zu: %s", (size_t)off,
                             (const char *)msg);
    }
    g->jit = pcre2_jit_compile(g->re, PCRE2_JIT_COMPLETE) == 0;
    g->md = pcre2_match_data_create_from_pattern(g->re, NULL);
    g->mblock = pcre2_match_context_create(NULL);
    g->mline = pcre2_match_context_create(NULL);
    if (g->md == NULL || g->mblock == NULL || g->mline == NULL)
        return tg__error_set(g->err, TG_ENOMEM, "out of memory");
    pcre2_set_match_limit(g->mblock, BLOCK_MATCH_LIMIT);
    pcre2_set_match_limit(g->mline, LINE_MATCH_LIMIT);
    pcre2_set_depth_limit(g->mblock, DEPTH_LIMIT);
    pcre2_set_depth_limit(g->mline, DEPTH_LIMIT);
    pcre2_set_heap_limit(g->mblock, HEAP_LIMIT_KIB);
    pcre2_set_heap_limit(g->mline, HEAP_LIMIT_KIB);
    const char *p = o->pattern;
    size_t n = o->pattern_len;
    g->line_mode = contains(p, n, "\\A") || contains(p, n, "\\z") ||
                   contains(p, n, "\\Z") || contains(p, n, "\\G") ||
                   contains(p, n, "(*");
    g->confirm = contains(p, n, "(?=") || contains(p, n, "(?!") ||
                 contains(p, n, "(?<=") || contains(p, n, "(?<!") ||
                 contains(p, n, "\\K");
    return 0;
}

static bool is_limit(int rc)
{
    return rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
           rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT;
}

/* The line number of buf[ls], counting newlines from the last count. */
static uint64_t line_of(grepctx *g, const char *buf, size_t ls)
{
    g->line_at += tg__spool_count_nl(buf + g->counted, ls - g->counted);
    g->counted = ls;
    return g->line_at;
}

/* The line number of buf[at] for an error message. Count-only scans do
 * not number lines as they go, so the file before the block is counted
 * now: errors are rare, scans are not. */
static uint64_t error_line(grepctx *g, const char *buf, size_t at)
{
    if (!g->o->count_only)
        return line_of(g, buf, at);
    uint64_t line = 1 + tg__spool_count_nl(buf, at);
    char *tmp = malloc(GREP_BLOCK);
    for (uint64_t off = 0; tmp != NULL && off < g->base;) {
        size_t n =
            g->base - off < GREP_BLOCK ? (size_t)(g->base - off) : GREP_BLOCK;
        ssize_t r = tg__spool_pread_full(g->fd, tmp, n, off);
        if (r <= 0)
            break;
        line += tg__spool_count_nl(tmp, (size_t)r);
        off += (uint64_t)r;
    }
    free(tmp);
    return line;
}

static int match_fail(grepctx *g, int rc, uint64_t line)
{
    if (is_limit(rc))
        return tg__error_set(
            g->err, TG_ELIMIT,
            "the pattern is too expensive on line %llu (PCRE2: match limit "
            "of %d steps reached); simplify it, e.g. avoid nested "
            "quantifiers such as (a+)+",
            (unsigned long long)line, LINE_MATCH_LIMIT);
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(rc, msg, sizeof msg);
    return tg__error_set(g->err, TG_EINTERNAL, "PCRE2 match failed: %s",
                         (const char *)msg);
}

/* Appends the shown form of a line to b: whole when short, else a window
 * of line_cap bytes around `focus` with ellipses. */
static int show_line(grepctx *g, tg__buf *b, const char *s, size_t n,
                     size_t focus, bool cut_before, bool cut_after)
{
    if (n > 0 && s[n - 1] == '\r')
        n--;
    size_t from = 0, len = n;
    if (n > g->line_cap) {
        from = focus > g->line_cap / 4 ? focus - g->line_cap / 4 : 0;
        if (from > n - g->line_cap)
            from = n - g->line_cap;
        while (from > 0 && from < n && ((unsigned char)s[from] & 0xC0) == 0x80)
            from++;
        len = n - from < g->line_cap ? n - from : g->line_cap;
        len = tg__spool_utf8_cut(s + from, len);
        cut_before = cut_before || from > 0;
        cut_after = cut_after || from + len < n;
    }
    int rc = cut_before ? tg__buf_append(b, "\xe2\x80\xa6", 3) : 0;
    rc = rc ? rc : tg__spool_append_sanitized(b, s + from, len);
    if (cut_after)
        rc = rc ? rc : tg__buf_append(b, "\xe2\x80\xa6", 3);
    return rc;
}

static json_t *line_json(grepctx *g, uint64_t line, const char *s, size_t n,
                         bool cut_before, bool cut_after) /* new ref */
{
    tg__buf b;
    tg__buf_init(&b, 0);
    json_t *o = NULL;
    if (show_line(g, &b, s, n, 0, cut_before, cut_after) == 0) {
        o = json_pack("{s:I, s:s%}", "line", (json_int_t)line, "text",
                      b.len ? b.data : "", b.len);
        g->shown += b.len;
    }
    tg__buf_cleanup(&b);
    return o;
}

/* Context before the line starting at file offset `off` (line `line`). */
static int context_before(grepctx *g, uint64_t off, uint64_t line, json_t *arr)
{
    unsigned want = g->o->before;
    if (want == 0 || off == 0)
        return 0;
    size_t n = off < CONTEXT_WINDOW ? (size_t)off : CONTEXT_WINDOW;
    char *buf = malloc(n);
    if (buf == NULL)
        return tg__error_set(g->err, TG_ENOMEM, "out of memory");
    ssize_t r = tg__spool_pread_full(g->fd, buf, n, off - n);
    int rc = 0;
    if (r != (ssize_t)n) {
        rc = tg__error_set(g->err, TG_EIO, "cannot read artifact %s", g->m->id);
        goto done;
    }
    /* buf ends with the newline of the line before */
    size_t end = n - 1;
    json_t *tmp = json_array(); /* new ref */
    for (unsigned k = 1;
         k <= want && line > k && line - k > g->last_shown && tmp; k++) {
        const char *nl = end ? memrchr(buf, '\n', end) : NULL;
        size_t start = nl ? (size_t)(nl - buf) + 1 : 0;
        bool partial = nl == NULL && off - n > 0;
        json_t *l = line_json(g, line - k, buf + start, end - start, partial,
                              false); /* new ref */
        if (l == NULL || json_array_insert_new(tmp, 0, l) != 0) {
            json_decref(tmp);
            tmp = NULL;
            break;
        }
        if (nl == NULL)
            break;
        end = (size_t)(nl - buf);
    }
    if (tmp == NULL || json_array_extend(arr, tmp) != 0)
        rc = tg__error_set(g->err, TG_ENOMEM, "out of memory");
    json_decref(tmp);
done:
    free(buf);
    return rc;
}

/* Context after the line ending (its newline) at file offset `nl_off`. */
static int context_after(grepctx *g, uint64_t nl_off, uint64_t line,
                         json_t *arr)
{
    unsigned want = g->o->after;
    uint64_t from = nl_off + 1;
    if (want == 0 || from >= g->m->bytes)
        return 0;
    uint64_t left = g->m->bytes - from;
    size_t n = left < CONTEXT_WINDOW ? (size_t)left : CONTEXT_WINDOW;
    char *buf = malloc(n);
    if (buf == NULL)
        return tg__error_set(g->err, TG_ENOMEM, "out of memory");
    int rc = 0;
    ssize_t r = tg__spool_pread_full(g->fd, buf, n, from);
    if (r != (ssize_t)n) {
        rc = tg__error_set(g->err, TG_EIO, "cannot read artifact %s", g->m->id);
        goto done;
    }
    size_t p = 0;
    for (unsigned k = 1; k <= want && p < n; k++) {
        const char *nl = memchr(buf + p, '\n', n - p);
        size_t e = nl ? (size_t)(nl - buf) : n;
        bool partial = nl == NULL && from + n < g->m->bytes;
        json_t *l = line_json(g, line + k, buf + p, e - p, false,
                              partial); /* new ref */
        if (l == NULL || json_array_append_new(arr, l) != 0) {
            rc = tg__error_set(g->err, TG_ENOMEM, "out of memory");
            goto done;
        }
        if (nl == NULL)
            break;
        p = e + 1;
    }
done:
    free(buf);
    return rc;
}

/* A matching line buf[ls..le) of the block at file offset base, the match
 * starting at ms. */
static int record(grepctx *g, const char *buf, uint64_t base, size_t ls,
                  size_t le, size_t ms)
{
    if (le == g->block_len)
        g->piece_matched = true;
    if (g->o->count_only) {
        g->count++;
        return 0;
    }
    if (g->count == g->max || g->shown >= g->result_cap) {
        g->truncated = true;
        g->stop = true;
        return 0;
    }
    uint64_t line = line_of(g, buf, ls);
    tg__buf b;
    tg__buf_init(&b, 0);
    json_t *before = json_array(), *after = json_array(); /* new ref */
    json_t *o = NULL;                                     /* new ref */
    /* this line may be among the previous match's after-lines */
    size_t na;
    while (g->prev_after && (na = json_array_size(g->prev_after)) > 0 &&
           (uint64_t)json_integer_value(json_object_get(
               json_array_get(g->prev_after, na - 1), "line")) >= line)
        json_array_remove(g->prev_after, na - 1);
    int rc = show_line(g, &b, buf + ls, le - ls, ms - ls, false,
                       le == g->block_len && g->block_split);
    if (rc == 0 && before && after)
        rc = context_before(g, base + ls, line, before);
    else if (rc == 0)
        rc = TG_ENOMEM;
    if (rc == 0)
        rc = context_after(g, base + le, line, after);
    if (rc == 0) {
        g->shown += b.len;
        o = json_pack("{s:I, s:I, s:s%}", "line", (json_int_t)line, "offset",
                      (json_int_t)(base + ms), "text", b.len ? b.data : "",
                      b.len);
        if (o == NULL ||
            (g->o->before && json_object_set(o, "before", before)) ||
            (g->o->after && json_object_set(o, "after", after)) ||
            json_array_append(g->matches, o) != 0)
            rc = TG_ENOMEM;
    }
    if (rc == TG_ENOMEM)
        rc = tg__error_set(g->err, TG_ENOMEM, "out of memory");
    json_decref(o);
    json_decref(before);
    json_decref(after);
    tg__buf_cleanup(&b);
    if (rc == 0) {
        g->count++;
        g->prev_after = g->o->after ? after : NULL; /* held by g->matches */
        g->last_shown = line + json_array_size(after);
    }
    return rc;
}

/* Lines of buf[pos..stop) matched one by one. */
static int lines_alone(grepctx *g, const char *buf, size_t blen, uint64_t base,
                       size_t pos, size_t stop)
{
    while (pos < stop && !g->stop) {
        const char *nl = memchr(buf + pos, '\n', blen - pos);
        size_t le = nl ? (size_t)(nl - buf) : blen;
        int rc = match(g, buf + pos, le - pos, 0, pos, le, g->mline);
        if (rc >= 0) {
            size_t ms = pos + pcre2_get_ovector_pointer(g->md)[0];
            if (!(g->carried && pos == 0) &&
                (rc = record(g, buf, base, pos, le, ms)) != 0)
                return rc;
        } else if (rc != PCRE2_ERROR_NOMATCH) {
            return match_fail(g, rc, error_line(g, buf, pos));
        }
        pos = le + 1;
    }
    return 0;
}

/* Searches one block: whole lines (or a piece of a giant line). */
static int search_block(grepctx *g, const char *buf, size_t blen, uint64_t base)
{
    size_t pos = 0;
    g->counted = 0;
    g->piece_matched = false;
    if (g->line_mode)
        return lines_alone(g, buf, blen, base, 0, blen);
    while (pos < blen && !g->stop) {
        int rc = match(g, buf, blen, pos, 0, blen, g->mblock);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (is_limit(rc)) {
            /* too many steps for the whole stretch: take the next part
             * line by line (which has its own, per-line, limit) */
            size_t stop =
                pos + LINE_MODE_STRETCH < blen ? pos + LINE_MODE_STRETCH : blen;
            const char *nl = memchr(buf + stop, '\n', blen - stop);
            stop = nl ? (size_t)(nl - buf) + 1 : blen;
            rc = lines_alone(g, buf, blen, base, pos, stop);
            if (rc)
                return rc;
            pos = stop;
            continue;
        }
        if (rc < 0)
            return match_fail(g, rc, error_line(g, buf, pos));
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(g->md);
        size_t ms = ov[0], me = ov[1];
        if (ms >= blen && (blen == 0 || buf[blen - 1] == '\n'))
            break; /* the empty "line" after a final newline */
        const char *prev = ms > pos ? memrchr(buf + pos, '\n', ms - pos) : NULL;
        size_t ls = prev ? (size_t)(prev - buf) + 1 : pos;
        const char *nl = memchr(buf + ms, '\n', blen - ms);
        size_t le = nl ? (size_t)(nl - buf) : blen;
        bool ok = true;
        if (me > le || g->confirm) {
            rc = match(g, buf + ls, le - ls, 0, ls, le, g->mline);
            if (rc < 0 && rc != PCRE2_ERROR_NOMATCH)
                return match_fail(g, rc, error_line(g, buf, ls));
            ok = rc >= 0;
            if (ok)
                ms = ls + pcre2_get_ovector_pointer(g->md)[0];
        }
        if (ok && !(g->carried && ls == 0) &&
            (rc = record(g, buf, base, ls, le, ms)) != 0)
            return rc;
        if (le >= blen)
            break;
        pos = le + 1;
    }
    return 0;
}

static int scan(grepctx *g)
{
    size_t cap = GREP_BLOCK, have = 0;
    char *buf = malloc(cap);
    if (buf == NULL)
        return tg__error_set(g->err, TG_ENOMEM, "out of memory");
    uint64_t off = 0; /* file offset of buf[0] */
    bool split_before = false;
    g->line_at = 1;
    int rc = 0;
    while (!g->stop) {
        ssize_t r = 0;
        if (off + have < g->m->bytes && have < cap) {
            r = tg__spool_pread_full(g->fd, buf + have, cap - have, off + have);
            if (r < 0) {
                rc =
                    tg__error_set(g->err, TG_EIO, "cannot read artifact %s: %s",
                                  g->m->id, strerror((int)-r));
                break;
            }
            have += (size_t)r;
        }
        bool eof = off + have >= g->m->bytes || (r == 0 && have < cap);
        if (have == 0)
            break;
        size_t blen = have;
        g->block_split = false;
        if (!eof) {
            const char *nl = memrchr(buf, '\n', have);
            if (nl != NULL) {
                blen = (size_t)(nl - buf) + 1;
            } else if (cap < GREP_MAX_LINE) {
                char *grown = realloc(buf, cap * 2);
                if (grown == NULL) {
                    rc = tg__error_set(g->err, TG_ENOMEM, "out of memory");
                    break;
                }
                buf = grown;
                cap *= 2;
                continue;
            } else {
                /* a line longer than GREP_MAX_LINE: search it in pieces,
                 * each cut at a character boundary */
                blen = g->m->binary ? have : tg__spool_utf8_cut(buf, have);
                if (blen == 0)
                    blen = have;
                g->block_split = true;
            }
        }
        g->block_len = blen;
        g->base = off;
        g->mid_line = split_before;
        if ((rc = search_block(g, buf, blen, off)) != 0)
            break;
        /* a split block is one piece of one line */
        g->carried = g->block_split && (g->carried || g->piece_matched);
        split_before = g->block_split;
        if (!g->o->count_only)
            g->line_at +=
                tg__spool_count_nl(buf + g->counted, blen - g->counted);
        memmove(buf, buf + blen, have - blen);
        have -= blen;
        off += blen;
        if (eof && have == 0)
            break;
    }
    free(buf);
    return rc;
}

int tg__spool_grep(tg_spool *sp, const char *id, const tg__spool_grep_opts *o,
                   json_t **out, tg_error *err)
{
    *out = NULL;
    if (o == NULL || o->pattern == NULL)
        return tg__error_set(err, TG_EINVAL, "grep needs a pattern");
    if (o->before > 100 || o->after > 100)
        return tg__error_set(err, TG_EINVAL,
                             "context is at most 100 lines on each side");
    spool_meta m;
    grepctx g = {.o = o, .m = &m, .err = err, .fd = -1};
    g.max = o->max_matches ? o->max_matches : 100;
    g.line_cap = o->line_cap ? o->line_cap : 512;
    g.result_cap = o->result_cap ? o->result_cap : 64 * 1024;
    int rc;
    g.fd = tg__spool_open_artifact(sp, id, &m, err);
    if (g.fd < 0)
        return g.fd;
    if ((rc = compile(&g, o)) != 0)
        goto done;
    if (!o->count_only && (g.matches = json_array()) == NULL) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = scan(&g)) != 0)
        goto done;
    /* the pattern as text any JSON reader takes (no NUL, valid UTF-8) */
    tg__buf shown;
    tg__buf_init(&shown, 0);
    json_t *res = NULL; /* new ref */
    if (tg__spool_append_sanitized(&shown, o->pattern, o->pattern_len) == 0)
        res = json_pack("{s:s, s:s%, s:I}", "artifact", m.id, "pattern",
                        shown.len ? shown.data : "", shown.len, "count",
                        (json_int_t)g.count);
    tg__buf_cleanup(&shown);
    if (res != NULL && !o->count_only &&
        (json_object_set(res, "matches", g.matches) ||
         json_object_set_new(res, "truncated", json_boolean(g.truncated)))) {
        json_decref(res);
        res = NULL;
    }
    if (res == NULL) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        goto done;
    }
    *out = res;
done:
    json_decref(g.matches);
    pcre2_match_data_free(g.md);
    pcre2_match_context_free(g.mblock);
    pcre2_match_context_free(g.mline);
    pcre2_code_free(g.re);
    close(g.fd);
    tg__spool_meta_cleanup(&m);
    return rc;
}
