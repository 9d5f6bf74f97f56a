/* SPDX-License-Identifier: MIT */
/*
 * handle.c - what a model sees of a spooled output: the preview (the first
 * and last few lines, each cut to a readable width; binary output is never
 * pasted, only named) and the handle text around it, which says how big the
 * output is and which artifact tools read the rest.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREVIEW_LINES 5   /* first lines, and last lines */
#define PREVIEW_WIDTH 160 /* bytes shown of one line */

/* Appends one line of a preview, cut to PREVIEW_WIDTH; `lead_cut` when the
 * line's start is not known (it began before the bytes kept), `tail_cut`
 * when its end is not. */
static int add_line(tg__buf *b, const char *s, size_t n, bool lead_cut,
                    bool tail_cut)
{
    int rc = 0;
    if (b->len > 0)
        rc = tg__buf_append(b, "\n", 1);
    if (lead_cut) {
        /* keep the end of the line: skip to a character boundary */
        if (n > PREVIEW_WIDTH) {
            s += n - PREVIEW_WIDTH;
            n = PREVIEW_WIDTH;
        }
        while (n > 0 && ((unsigned char)*s & 0xC0) == 0x80) {
            s++;
            n--;
        }
        rc = rc ? rc : tg__buf_append(b, "\xe2\x80\xa6", 3);
    }
    if (n > PREVIEW_WIDTH) {
        n = tg__spool_utf8_cut(s, PREVIEW_WIDTH);
        tail_cut = true;
    } else if (tail_cut) {
        n = tg__spool_utf8_cut(s, n); /* the kept bytes may end mid-char */
    }
    if (n > 0 && s[n - 1] == '\r')
        n--; /* CRLF output: the CR is noise in a preview */
    rc = rc ? rc : tg__spool_append_sanitized(b, s, n);
    if (tail_cut)
        rc = rc ? rc : tg__buf_append(b, "\xe2\x80\xa6", 3);
    return rc;
}

char *tg__spool_preview(const char *head, size_t head_len, const char *tail,
                        size_t tail_len, uint64_t total, uint64_t lines,
                        bool binary)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    if (binary) {
        if (tg__buf_printf(&b, "binary, %llu bytes", (unsigned long long)total))
            goto oom;
        return tg__buf_take(&b);
    }
    uint64_t want_first = lines < PREVIEW_LINES ? lines : PREVIEW_LINES;
    uint64_t want_last =
        lines - want_first < PREVIEW_LINES ? lines - want_first : PREVIEW_LINES;
    /* First lines, from the head bytes. */
    uint64_t shown_first = 0;
    const char *p = head, *end = head + head_len;
    while (shown_first < want_first && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        bool cut = nl == NULL && head_len < total;
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (add_line(&b, p, n, false, cut))
            goto oom;
        shown_first++;
        if (nl == NULL)
            break;
        p = nl + 1;
    }
    uint64_t omitted = lines - shown_first - want_last;
    if (omitted > 0 &&
        tg__buf_printf(&b, "%s[%llu line%s omitted]", b.len ? "\n" : "",
                       (unsigned long long)omitted, omitted == 1 ? "" : "s"))
        goto oom;
    if (want_last == 0)
        goto out;
    /* Last lines, from the tail bytes: find where each of them starts. */
    size_t n = tail_len;
    if (n > 0 && tail[n - 1] == '\n')
        n--; /* the final newline ends the last line */
    const char *starts[PREVIEW_LINES];
    size_t lens[PREVIEW_LINES];
    bool lead_cut[PREVIEW_LINES];
    uint64_t got = 0;
    size_t stop = n;
    while (got < want_last) {
        const char *nl = stop ? memrchr(tail, '\n', stop) : NULL;
        size_t from = nl ? (size_t)(nl - tail) + 1 : 0;
        starts[got] = tail + from;
        lens[got] = stop - from;
        /* a line running into the start of the kept bytes began earlier
         * unless the kept bytes are the whole output */
        lead_cut[got] = nl == NULL && tail_len < total;
        got++;
        if (nl == NULL)
            break;
        stop = (size_t)(nl - tail);
    }
    for (uint64_t k = got; k > 0; k--)
        if (add_line(&b, starts[k - 1], lens[k - 1], lead_cut[k - 1], false))
            goto oom;
out:
    return b.len ? tg__buf_take(&b) : strdup("");
oom:
    tg__buf_cleanup(&b);
    return NULL;
}

int tg__spool_handle_text(const json_t *artifact, char **text)
{
    *text = NULL;
    const char *id = json_string_value(json_object_get(artifact, "id"));
    const char *mt = json_string_value(json_object_get(artifact, "media_type"));
    const char *preview =
        json_string_value(json_object_get(artifact, "preview"));
    json_int_t bytes = json_integer_value(json_object_get(artifact, "bytes"));
    json_int_t lines = json_integer_value(json_object_get(artifact, "lines"));
    if (id == NULL || mt == NULL)
        return TG_EINVAL;
    tg__buf b;
    tg__buf_init(&b, 0);
    int rc;
    if (strcmp(mt, SPOOL_MEDIA_BINARY) == 0) {
        rc = tg__buf_printf(
            &b,
            "[binary output saved as artifact %s: %lld bytes, %s; not shown]\n"
            "Read bytes (base64) with artifact_read "
            "{\"artifact\":\"%s\",\"offset\":0,\"length\":4096}; search it "
            "with artifact_grep {\"artifact\":\"%s\",\"pattern\":\"...\"}; "
            "size and sha256 with artifact_stat {\"artifact\":\"%s\"}.",
            id, (long long)bytes, mt, id, id, id);
    } else {
        rc = tg__buf_printf(
            &b,
            "[output saved as artifact %s: %lld bytes, %lld line%s, %s; shown "
            "here as a preview]\n"
            "Preview (first and last lines):\n%s\n"
            "Read more with artifact_head or artifact_tail "
            "{\"artifact\":\"%s\",\"lines\":50}, artifact_read "
            "{\"artifact\":\"%s\",\"line\":100,\"lines\":50} (or "
            "\"offset\"/\"length\" in bytes), artifact_grep "
            "{\"artifact\":\"%s\",\"pattern\":\"regex\",\"context\":2}, "
            "artifact_stat {\"artifact\":\"%s\"}.",
            id, (long long)bytes, (long long)lines, lines == 1 ? "" : "s", mt,
            preview ? preview : "", id, id, id, id);
    }
    if (rc != 0) {
        tg__buf_cleanup(&b);
        return TG_ENOMEM;
    }
    *text = tg__buf_take(&b);
    return *text ? 0 : TG_ENOMEM;
}
