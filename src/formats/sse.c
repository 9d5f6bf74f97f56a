/* SPDX-License-Identifier: MIT */
/*
 * sse.c - the incremental Server-Sent Events reader of sse.h, following the
 * WHATWG "interpreting an event stream" steps: lines end at CRLF, LF or CR;
 * an empty line dispatches the event; a line starting with ':' is a comment;
 * "field: value" (one leading space of the value dropped) sets data (lines
 * joined with LF), event (the type), id (kept across events, ignored when
 * it holds a NUL) or retry (the reconnection time, for live readers; a
 * value that is not all digits is ignored); other fields do not matter.
 *
 * Once discarding (tg__sse_discard), data past the kept bytes and line bytes
 * past the kept line are dropped instead of failing, at the same points
 * whatever the chunking.
 *
 * Chunking never changes what comes out: a line inside one chunk is read in
 * place, a line split across chunks is gathered in r->line first, a CR at a
 * chunk's end remembers to swallow an LF that starts the next one, and a
 * byte order mark split across chunks is held back until it is decided.
 * Every limit is checked on the line as a whole, so a too-long line fails
 * the same way whether it arrived in one piece or in many.
 */
#include "sse.h"

#include <string.h>

#include "error.h"

/* Room for a field name and its colon and space beyond the data cap. */
#define LINE_SLACK 16

static const unsigned char bom_bytes[3] = {0xEF, 0xBB, 0xBF};

void tg__sse_init(tg__sse *r, size_t max_data)
{
    memset(r, 0, sizeof *r);
    r->max_data = max_data ? max_data : TG_SSE_DEFAULT_MAX_DATA;
    r->retry_ms = -1;
    tg__buf_init(&r->line, 0);
    tg__buf_init(&r->type, 0);
    tg__buf_init(&r->data, 0);
    tg__buf_init(&r->id, 0);
}

void tg__sse_cleanup(tg__sse *r)
{
    tg__buf_cleanup(&r->line);
    tg__buf_cleanup(&r->type);
    tg__buf_cleanup(&r->data);
    tg__buf_cleanup(&r->id);
}

static size_t line_max(const tg__sse *r)
{
    size_t max = r->discarding ? r->keep : r->max_data;
    return max > SIZE_MAX - LINE_SLACK ? SIZE_MAX : max + LINE_SLACK;
}

/* Records a failure so later calls repeat it; returns code. */
static int fail(tg__sse *r, int code)
{
    r->failed = code;
    if (r->error.code == 0)
        r->error.code = code;
    return code;
}

static int limit_error(tg__sse *r)
{
    tg__error_set(&r->error, TG_ELIMIT,
                  "line %llu of the event stream: an event's data (or one "
                  "line) passes the limit of %zu bytes",
                  (unsigned long long)r->lines + 1, r->max_data);
    return fail(r, TG_ELIMIT);
}

static int oom(tg__sse *r)
{
    tg__error_set(&r->error, TG_ENOMEM,
                  "out of memory reading line %llu of "
                  "the event stream",
                  (unsigned long long)r->lines + 1);
    return fail(r, TG_ENOMEM);
}

static int set_buf(tg__buf *b, const char *p, size_t n)
{
    b->len = 0;
    int rc = tg__buf_append(b, p, n);
    return rc;
}

static int dispatch(tg__sse *r, int at_end, tg__sse_fn fn, void *ud)
{
    if (r->data_lines == 0) {
        r->type.len = 0;
        return 0;
    }
    /* The data buffer ends with the LF its last line added (the
     * discarding reader adds none). */
    if (!r->discarding) {
        r->data.len--;
        r->data.data[r->data.len] = '\0';
    }
    tg__sse_event ev;
    ev.type = r->type.len ? tg__buf_cstr(&r->type) : "message";
    ev.type_len = r->type.len ? r->type.len : 7;
    ev.data = tg__buf_cstr(&r->data);
    ev.data_len = r->data.len;
    ev.id = tg__buf_cstr(&r->id);
    ev.id_len = r->id.len;
    ev.number = ++r->events;
    ev.line = r->lines;
    ev.data_lines = r->data_lines;
    ev.data_first_line = r->data_first_line;
    ev.data_last_line = r->data_last_line;
    ev.at_end = at_end;
    ev.clipped = r->clipped;
    int rc = fn(ud, &ev, &r->error);
    r->data.len = 0;
    r->type.len = 0;
    r->data_lines = 0;
    r->clipped = 0;
    if (rc != 0) {
        if (r->error.code == 0)
            tg__error_set(&r->error, rc,
                          "event %llu of the event stream "
                          "failed",
                          (unsigned long long)ev.number);
        return fail(r, rc);
    }
    return 0;
}

static int field_is(const char *name, size_t n, const char *want, size_t wn)
{
    return n == wn && memcmp(name, want, n) == 0;
}

/* The retry field: all ASCII digits sets the reconnection time, anything
 * else (empty included) is ignored. */
static void set_retry(tg__sse *r, const char *v, size_t n)
{
    uint64_t ms = 0;
    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return;
        ms = ms * 10 + (uint64_t)(v[i] - '0');
        if (ms > UINT32_MAX)
            ms = UINT32_MAX; /* saturate: no overflow however long */
    }
    r->retry_ms = (int64_t)ms;
}

/* Adds a data line's value to the event, the discarding reader's way:
 * the LF that joins it to the line before goes first (so the data has no
 * LF of its own to drop), and what passes r->keep is dropped, noted in
 * r->clipped. Out of line: the reader's hot path stays as small. */
static int __attribute__((noinline))
add_data_clipped(tg__sse *r, const char *v, size_t vlen, int clipped)
{
    size_t room = r->keep > r->data.len ? r->keep - r->data.len : 0;
    int rc = 0;
    if (r->data_lines > 1) {
        if (room == 0)
            clipped = 1;
        else {
            rc = tg__buf_append(&r->data, "\n", 1);
            room--;
        }
    }
    size_t take = vlen < room ? vlen : room;
    if (rc == 0)
        rc = tg__buf_append(&r->data, v, take);
    if (clipped || take < vlen)
        r->clipped = 1;
    return rc;
}

/* Interprets one line (without its line end). */
static int process_line(tg__sse *r, const char *p, size_t n, tg__sse_fn fn,
                        void *ud)
{
    int clipped = 0;
    if (n > line_max(r)) {
        if (!r->discarding)
            return limit_error(r);
        n = line_max(r);
        clipped = 1;
    }
    if (r->line_clipped) { /* gathered and cut (discarding) */
        clipped = 1;
        r->line_clipped = 0;
    }
    r->lines++;
    if (n == 0)
        return dispatch(r, 0, fn, ud);
    if (p[0] == ':')
        return 0;
    const char *colon = memchr(p, ':', n);
    size_t nlen = colon ? (size_t)(colon - p) : n;
    const char *v = colon ? colon + 1 : p + n;
    size_t vlen = (size_t)(p + n - v);
    if (vlen > 0 && v[0] == ' ') {
        v++;
        vlen--;
    }
    int rc = 0;
    if (field_is(p, nlen, "data", 4)) {
        if (r->data_lines++ == 0)
            r->data_first_line = r->lines;
        r->data_last_line = r->lines;
        if (r->discarding)
            rc = add_data_clipped(r, v, vlen, clipped);
        else if (vlen > r->max_data - r->data.len ||
                 r->data.len > r->max_data) {
            r->lines--; /* the message names this line */
            return limit_error(r);
        } else if ((rc = tg__buf_reserve(&r->data, vlen + 1)) == 0) {
            memcpy(r->data.data + r->data.len, v, vlen);
            r->data.len += vlen;
            r->data.data[r->data.len++] = '\n';
            r->data.data[r->data.len] = '\0';
        }
    } else if (field_is(p, nlen, "event", 5))
        rc = set_buf(&r->type, v, vlen);
    else if (field_is(p, nlen, "id", 2)) {
        if (memchr(v, '\0', vlen) == NULL)
            rc = set_buf(&r->id, v, vlen);
    } else if (field_is(p, nlen, "retry", 5))
        set_retry(r, v, vlen);
    /* Unknown fields: nothing to do. */
    if (rc == TG_ENOMEM)
        return oom(r);
    return rc == 0 ? 0 : limit_error(r);
}

/* The first CR or LF in [p, end), or NULL. Two memchr passes (vectorised
 * in libc) beat a byte loop; *lf caches the next LF of the chunk (*lf_known
 * set, NULL when there is none), so CR-only input is not rescanned to its
 * end for every line. */
static const char *find_eol(const char *p, const char *end, const char **lf,
                            int *lf_known)
{
    if (!*lf_known || (*lf != NULL && *lf < p)) {
        *lf = memchr(p, '\n', (size_t)(end - p));
        *lf_known = 1;
    }
    const char *stop = *lf ? *lf : end;
    const char *cr = memchr(p, '\r', (size_t)(stop - p));
    return cr ? cr : *lf;
}

/* Adds n bytes to the line gathered across chunks: past the line cap a
 * failure (TG_ELIMIT), or, discarding, the bytes dropped. Returns 0 or the
 * failure's code (recorded). */
static int gather(tg__sse *r, const char *p, size_t n)
{
    size_t max = line_max(r);
    if (n > max - r->line.len || r->line.len > max) {
        if (!r->discarding)
            return limit_error(r);
        n = r->line.len < max ? max - r->line.len : 0;
        r->line_clipped = 1;
    }
    return tg__buf_append(&r->line, p, n) == 0 ? 0 : oom(r);
}

static int feed_bytes(tg__sse *r, const char *p, size_t n, tg__sse_fn fn,
                      void *ud)
{
    const char *end = p + n;
    int rc;
    if (r->cr && p < end) {
        r->cr = 0;
        if (*p == '\n')
            p++;
    }
    const char *lf = NULL;
    int lf_known = 0;
    while (p < end) {
        const char *eol = find_eol(p, end, &lf, &lf_known);
        if (eol == NULL) {
            /* An unfinished line: keep it for the next chunk. */
            if (gather(r, p, (size_t)(end - p)) != 0)
                return r->failed;
            return 0;
        }
        size_t len = (size_t)(eol - p);
        if (r->line.len == 0)
            rc = process_line(r, p, len, fn, ud);
        else if (gather(r, p, len) != 0)
            rc = r->failed;
        else {
            rc = process_line(r, r->line.data, r->line.len, fn, ud);
            r->line.len = 0;
        }
        if (rc != 0)
            return rc;
        p = eol + 1;
        if (*eol == '\r') {
            if (p == end)
                r->cr = 1;
            else if (*p == '\n')
                p++;
        }
    }
    return 0;
}

static int report(tg__sse *r, int rc, tg_error *err)
{
    if (rc != 0 && err != NULL)
        *err = r->error;
    return rc;
}

int tg__sse_feed(tg__sse *r, const char *bytes, size_t len, tg__sse_fn fn,
                 void *ud, tg_error *err)
{
    if (r->failed)
        return report(r, r->failed, err);
    if (r->finished)
        return tg__error_set(err, TG_EINVAL,
                             "the event stream was already finished");
    const unsigned char *u = (const unsigned char *)bytes;
    /* A byte order mark may start the stream, possibly split. */
    while (!r->started && len > 0) {
        if (*u == bom_bytes[r->bom_len]) {
            r->bom[r->bom_len++] = *u++;
            len--;
            if (r->bom_len == 3) {
                r->started = 1;
                r->bom_len = 0;
            }
            continue;
        }
        r->started = 1;
        if (r->bom_len > 0) {
            size_t held = r->bom_len;
            r->bom_len = 0;
            int rc = feed_bytes(r, (const char *)r->bom, held, fn, ud);
            if (rc != 0)
                return report(r, rc, err);
        }
    }
    return report(r, feed_bytes(r, (const char *)u, len, fn, ud), err);
}

int tg__sse_finish(tg__sse *r, tg__sse_fn fn, void *ud, tg_error *err)
{
    if (r->failed)
        return report(r, r->failed, err);
    if (r->finished)
        return tg__error_set(err, TG_EINVAL,
                             "the event stream was already finished");
    r->finished = 1;
    int rc = 0;
    if (!r->started && r->bom_len > 0) {
        size_t held = r->bom_len;
        r->started = 1;
        r->bom_len = 0;
        rc = feed_bytes(r, (const char *)r->bom, held, fn, ud);
    }
    if (rc == 0 && r->line.len > 0) {
        rc = process_line(r, r->line.data, r->line.len, fn, ud);
        r->line.len = 0;
    }
    if (rc == 0)
        rc = dispatch(r, 1, fn, ud);
    return report(r, rc, err);
}

void tg__sse_discard(tg__sse *r, size_t keep)
{
    r->discarding = 1;
    r->keep = keep ? keep : 1;
}
