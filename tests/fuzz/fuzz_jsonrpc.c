/* SPDX-License-Identifier: MIT */
/*
 * fuzz_jsonrpc.c - libFuzzer target for the JSON-RPC reader and writers
 * (src/mcp/jsonrpc.c). Byte 0 chooses the limits: bit 0 batches on, bits
 * 1-3 a small depth limit (0: the default), bits 4-5 a small byte limit;
 * the rest is the text. Besides crashes, leaks and undefined behaviour, it
 * aborts when the reader's verdict breaks its contract: a whole-text
 * failure with messages, or with a code other than -32700/-32600; an
 * invalid member without a -32600 message; a request without a method or
 * an id; slices (params, result, id) outside the text; a written answer or
 * echo that is not JSON jansson reads back with the same id; a value found
 * in params whose text is not exactly that value.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"

static void check_slice(const char *text, size_t len, const char *s, size_t n)
{
    if (s != NULL && (s < text || s + n > text + len || n == 0))
        abort();
}

/* The written message must be JSON with the same id as given. */
static void check_written(const tg__buf *out, const tg__rpc_id *id)
{
    json_error_t jerr;
    json_t *v = json_loadb(out->data, out->len, 0, &jerr); /* new ref */
    if (v == NULL)
        abort();
    const json_t *got = json_object_get(v, "id"); /* borrowed */
    if (id == NULL || id->kind == TG_RPC_ID_NONE) {
        if (got != NULL)
            abort();
    } else if (id->kind == TG_RPC_ID_INT) {
        if (!json_is_integer(got) || json_integer_value(got) != id->num)
            abort();
    } else if (!json_is_string(got) || json_string_length(got) != id->str_len ||
               memcmp(json_string_value(got), id->str, id->str_len) != 0)
        abort();
    json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    tg__rpc_limits lim = {0, 0, 0, (data[0] & 1) != 0};
    unsigned depth = (data[0] >> 1) & 7;
    unsigned bytes = (data[0] >> 4) & 3;
    if (depth != 0)
        lim.max_depth = depth;
    if (bytes != 0)
        lim.max_bytes = (size_t)bytes * 64;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    tg__rpc_batch b;
    if (tg__rpc_read(&b, text, len, &lim) != 0) {
        tg__rpc_batch_cleanup(&b);
        return 0;
    }
    tg__buf out;
    tg__buf_init(&out, 0);
    if (b.fail_code != 0) {
        if (b.n != 0 || (b.fail_code != TG_RPC_PARSE_ERROR &&
                         b.fail_code != TG_RPC_INVALID_REQUEST))
            abort();
        if (tg__rpc_write_failure(&out, &b) != 0)
            abort();
        check_written(&out, NULL);
    }
    for (size_t i = 0; i < b.n; i++) {
        const tg__rpc_msg *m = &b.msgs[i];
        out.len = 0;
        check_slice(text, len, m->params, m->params_len);
        check_slice(text, len, m->result, m->result_len);
        check_slice(text, len, m->id.json, m->id.json_len);
        switch (m->kind) {
        case TG_RPC_INVALID:
            if (m->fail_code != TG_RPC_INVALID_REQUEST ||
                m->fail_message[0] == '\0' ||
                tg__rpc_write_invalid(&out, m) != 0)
                abort();
            check_written(&out, &m->id);
            break;
        case TG_RPC_REQUEST:
        case TG_RPC_NOTIFICATION:
            if (m->method == NULL || strlen(m->method) != m->method_len ||
                (m->kind == TG_RPC_REQUEST) != (m->id.kind != TG_RPC_ID_NONE))
                abort();
            if (m->kind == TG_RPC_REQUEST) {
                if (tg__rpc_write_result(&out, &m->id, "{}", 2) != 0)
                    abort();
                check_written(&out, &m->id);
            }
            if (m->params != NULL) {
                /* each member of params found, its text exactly its value */
                json_t *p = tg__rpc_params_json(&b, m); /* new ref */
                const char *key;
                json_t *val;
                json_object_foreach(p, key, val)
                {
                    const char *path[] = {key};
                    tg__rpc_value v;
                    if (strlen(key) != 0 &&
                        memchr(key, '\0', strlen(key)) == NULL &&
                        tg__rpc_params_find(&b, m, path, 1, &v) == 1) {
                        check_slice(text, len, v.json, v.len);
                        /* read alone (keys may hold U+0000, which
                         * jansson refuses: the tape's reader) */
                        tg__jtape alone;
                        if (tg__jtape_parse(v.json, v.len, TG_JTAPE_ALLOW_NUL,
                                            &alone, NULL) != 0)
                            abort();
                        json_t *again = tg__jtape_to_json(&alone, 0);
                        /* compared as dumped: json_equal looks keys up
                         * as C strings, which U+0000 cuts */
                        char *x =
                            json_dumps(again, JSON_COMPACT | JSON_ENCODE_ANY);
                        char *y =
                            json_dumps(val, JSON_COMPACT | JSON_ENCODE_ANY);
                        if (x == NULL || y == NULL || strcmp(x, y) != 0)
                            abort();
                        free(x);
                        free(y);
                        json_decref(again);
                        tg__jtape_free(&alone);
                    }
                }
                json_decref(p);
            }
            break;
        case TG_RPC_RESULT:
            if (m->id.kind == TG_RPC_ID_NONE || m->result == NULL)
                abort();
            break;
        case TG_RPC_ERROR:
            if (m->error_message == NULL)
                abort();
            break;
        default:
            abort();
        }
    }
    tg__buf_cleanup(&out);
    tg__rpc_batch_cleanup(&b);
    return 0;
}
