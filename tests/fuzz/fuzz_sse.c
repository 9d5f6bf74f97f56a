/* SPDX-License-Identifier: MIT */
/*
 * fuzz_sse.c - libFuzzer target for the Server-Sent Events reader (sse.c).
 * The first bytes choose how the rest is cut: byte 0 holds the number of
 * chunk sizes that follow (low 3 bits) and whether a small data cap comes
 * after them (bit 3); each size byte b is a chunk of b + 1 bytes (cycling),
 * the cap byte c a cap of c + 1 bytes. The rest is the stream, read once
 * whole and once in those chunks; after an event whose data is [DONE] the
 * reader discards (keeping 8 bytes an event), as the stream reader does
 * after the end of a stream. The events (type, id, data, at_end, clipped,
 * number, line, where the data lines were) and the outcome must be
 * identical. Besides crashes, leaks and undefined behaviour, it aborts on
 * a difference, on an error reported without a message, on an event whose
 * data passes the cap (the kept bytes, discarding), and on data lines
 * placed impossibly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "sse.h"

#define KEEP 8 /* bytes an event keeps once discarding */

typedef struct log_ctx {
    tg__buf log;
    size_t max;
    tg__sse *reader;
    int discarding;
} log_ctx;

static int on_event(void *ud, const tg__sse_event *ev, tg_error *err)
{
    (void)err;
    log_ctx *c = ud;
    if (ev->data_len > (c->discarding ? KEEP : c->max) ||
        ev->data[ev->data_len] != '\0' || ev->type[ev->type_len] != '\0' ||
        ev->id[ev->id_len] != '\0' || (ev->clipped && !c->discarding) ||
        ev->data_lines == 0 || ev->data_first_line > ev->data_last_line ||
        ev->data_last_line > ev->line ||
        ev->data_last_line - ev->data_first_line + 1 < ev->data_lines)
        abort();
    /* Lengths first, so the log is unambiguous whatever the bytes. */
    tg__buf_printf(&c->log, "%zu %zu %zu %d %d %llu %llu %llu-%llu/%llu|",
                   ev->type_len, ev->id_len, ev->data_len, ev->at_end,
                   ev->clipped, (unsigned long long)ev->number,
                   (unsigned long long)ev->line,
                   (unsigned long long)ev->data_first_line,
                   (unsigned long long)ev->data_last_line,
                   (unsigned long long)ev->data_lines);
    if (!c->discarding && ev->data_len == 6 &&
        memcmp(ev->data, "[DONE]", 6) == 0) {
        tg__sse_discard(c->reader, KEEP);
        c->discarding = 1;
    }
    tg__buf_append(&c->log, ev->type, ev->type_len);
    tg__buf_append(&c->log, ev->id, ev->id_len);
    tg__buf_append(&c->log, ev->data, ev->data_len);
    return 0;
}

/* Reads text in chunks (sizes cycle; nsizes 0: whole); returns the log
 * with the outcome appended (caller frees). */
static char *read_all(const uint8_t *text, size_t len, const size_t *sizes,
                      size_t nsizes, size_t max, size_t *log_len)
{
    tg__sse r;
    tg_error err;
    log_ctx c;
    tg__buf_init(&c.log, 0);
    c.max = max ? max : TG_SSE_DEFAULT_MAX_DATA;
    c.reader = &r;
    c.discarding = 0;
    tg__sse_init(&r, max);
    int rc = 0;
    size_t off = 0, k = 0;
    while (rc == 0 && off < len) {
        size_t n = nsizes ? sizes[k++ % nsizes] : len - off;
        if (n > len - off)
            n = len - off;
        rc = tg__sse_feed(&r, (const char *)text + off, n, on_event, &c, &err);
        off += n;
    }
    if (rc == 0)
        rc = tg__sse_finish(&r, on_event, &c, &err);
    if (rc != 0 && (err.code != rc || err.message[0] == '\0'))
        abort();
    tg__sse_cleanup(&r);
    tg__buf_printf(&c.log, "rc=%d", rc);
    *log_len = c.log.len;
    return tg__buf_take(&c.log);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t nsizes = data[0] & 7, sizes[7], max = 0, at = 1;
    int capped = (data[0] & 8) != 0;
    if (size < 1 + nsizes + (size_t)capped)
        return 0;
    for (size_t i = 0; i < nsizes; i++)
        sizes[i] = (size_t)data[at++] + 1;
    if (capped)
        max = (size_t)data[at++] + 1;
    size_t wl, cl;
    char *whole = read_all(data + at, size - at, NULL, 0, max, &wl);
    char *chunked = read_all(data + at, size - at, sizes, nsizes, max, &cl);
    if (whole == NULL || chunked == NULL || wl != cl ||
        memcmp(whole, chunked, wl) != 0)
        abort();
    free(whole);
    free(chunked);
    return 0;
}
