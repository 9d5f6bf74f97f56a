/* SPDX-License-Identifier: MIT */
/*
 * fuzz_content.c - libFuzzer target for the MCP content validator
 * (src/formats/content_check.c), which reads what a tool with "output":
 * "mcp-content" printed. Whatever the bytes, it answers without crashing:
 * either an array whose every block can be described as text, or an error
 * with a message and a JSON pointer. Every base64 text it accepts is
 * canonical: OpenSSL decodes it and encodes the bytes back to the same
 * text. And the first string of the input, taken as base64, gets the same
 * verdict from the validator's check and from that round trip.
 */
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "format.h"

/* 1 when s[0..len) is base64 that OpenSSL decodes and encodes back to
 * exactly s (the canonical form), else 0. */
static int round_trips(const char *s, size_t len)
{
    if (len % 4 != 0 || len > 1 << 16)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '\n' || s[i] == '\r' || s[i] == ' ' || s[i] == '\t' ||
            s[i] == '\0')
            return 0; /* EVP_DecodeBlock skips white space; we do not */
    unsigned char *bin = malloc(len / 4 * 3 + 1);
    char *back = malloc(len + 1);
    int ok = 0;
    if (bin != NULL && back != NULL) {
        int n = EVP_DecodeBlock(bin, (const unsigned char *)s, (int)len);
        if (n >= 0) {
            size_t pad = 0;
            while (pad < 2 && pad < len && s[len - 1 - pad] == '=')
                pad++;
            int m = EVP_EncodeBlock((unsigned char *)back, bin, n - (int)pad);
            ok = m == (int)len && memcmp(back, s, len) == 0;
        }
    }
    free(bin);
    free(back);
    return ok;
}

static void check_base64(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key); /* borrowed */
    if (json_is_string(v) &&
        !round_trips(json_string_value(v), json_string_length(v)))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *blocks = NULL; /* new ref */
    tg_error e = {0};
    int rc = tg__content_parse((const char *)data, size, &blocks, &e);
    if (rc == 0) {
        tg__buf out;
        tg__buf_init(&out, 0);
        if (!json_is_array(blocks) ||
            tg__format_content_text(blocks, &out) != 0)
            abort();
        size_t i;
        json_t *b; /* borrowed */
        json_array_foreach(blocks, i, b)
        {
            /* only the members the block's type defines: others are left
             * as they are (the schema allows them) */
            const char *t = json_string_value(json_object_get(b, "type"));
            if (strcmp(t, "image") == 0 || strcmp(t, "audio") == 0)
                check_base64(b, "data");
            else if (strcmp(t, "resource") == 0)
                check_base64(json_object_get(b, "resource"), "blob");
        }
        tg__buf_cleanup(&out);
        json_decref(blocks);
    } else if (rc == TG_EPARSE) {
        if (e.message[0] == '\0' ||
            (e.pointer[0] != '\0' && e.pointer[0] != '/'))
            abort();
    } else if (rc != TG_ENOMEM) {
        abort();
    }
    /* the base64 check alone, on the bytes up to the first NUL or quote */
    size_t n = 0;
    while (n < size && n < 4096 && data[n] != '"' && data[n] != '\0')
        n++;
    size_t bad;
    if (tg__content_base64_check((const char *)data, n, &bad) !=
        round_trips((const char *)data, n))
        abort();
    return 0;
}
