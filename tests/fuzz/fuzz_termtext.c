/* SPDX-License-Identifier: MIT */
/*
 * fuzz_termtext.c - libFuzzer target for the terminal escaping of
 * termtext.c (tg_terminal_text). The first byte picks the flags, the rest
 * is the text. Whatever the text: the output holds no byte a terminal acts
 * on (C0 but kept newlines and tabs, DEL, C1, the bidirectional controls,
 * invalid UTF-8); escaping it again changes nothing; and with
 * TG_TERMINAL_JSON, text that is a JSON document comes out as the same
 * JSON value.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate.h"
#include "utf8.h"

static void check_inert(const char *s, unsigned flags)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (c < 0x80) {
            int kept = (c == '\n' || c == '\t') && flags != 0;
            if ((c < 0x20 && !kept) || c == 0x7F)
                abort();
            i++;
            continue;
        }
        size_t len = tg__utf8_seq(p + i, n - i);
        if (len == 0)
            abort(); /* invalid UTF-8 came through */
        if (c == 0xC2 && p[i + 1] <= 0x9F)
            abort(); /* a C1 control */
        if (c == 0xE2 &&
            ((p[i + 1] == 0x80 && p[i + 2] >= 0xAA && p[i + 2] <= 0xAE) ||
             (p[i + 1] == 0x81 && p[i + 2] >= 0xA6 && p[i + 2] <= 0xA9)))
            abort(); /* a bidirectional control */
        i += len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned flags = data[0] & 3u;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    char *out = tg_terminal_text(text, len, flags);
    if (out == NULL)
        return 0; /* out of memory */
    check_inert(out, flags);
    char *again = tg_terminal_text(out, strlen(out), flags);
    if (again != NULL && strcmp(again, out) != 0)
        abort();
    tg_free(again);
    if (flags & TG_TERMINAL_JSON) {
        json_error_t e;
        json_t *before = json_loadb(text, len, JSON_DECODE_ANY, &e);
        if (before != NULL) {
            json_t *after = json_loads(out, JSON_DECODE_ANY, &e);
            if (after == NULL || !json_equal(before, after))
                abort();
            json_decref(after);
        }
        json_decref(before);
    }
    tg_free(out);
    return 0;
}
