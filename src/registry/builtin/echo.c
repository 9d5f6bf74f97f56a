/* SPDX-License-Identifier: MIT */
/*
 * echo.c - the echo built-in: `echo {text}` returns its text unchanged.
 *
 * It is the tool benchmarks measure (the runtime's own cost per call, with
 * no tool work to hide it), so it is as cheap as an in-process tool can be:
 * an inline handler (TG_TOOL_INLINE, on the loop thread, no timer, no pool
 * hop) that reads its one argument from the arguments' token tape with the
 * tokens on the stack, and hands the string's bytes to tg_handler_write
 * straight from the arguments text when it holds no escape. The schema check
 * has already made the arguments an object with a string `text` and nothing
 * else, so nothing here validates them again; a handler called without the
 * check (a C program calling it directly) still gets a clear failure.
 */
#include <stdbool.h>
#include <string.h>

#include "buf.h"
#include "builtin.h"
#include "handler_ctx.h"
#include "jtape.h"
#include "record.h"

const char tg__echo_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"text\":{\"type\":\"string\",\"description\":\"The text to return\"}},"
    "\"required\":[\"text\"],\"additionalProperties\":false}";

/* The index of the value of member `key` of the object at tok[0], or 0. */
static size_t member(const tg__jtape *t, const char *key)
{
    size_t klen = strlen(key);
    if (t->n == 0 || t->tok[0].kind != TG_JT_OBJECT)
        return 0;
    for (size_t i = 1; i < t->n && i < t->tok[0].a;) {
        const tg__jtok *k = &t->tok[i];
        if (k->kind == TG_JT_KEY && !(k->flags & TG_JT_ESCAPED) &&
            k->b == klen && memcmp(t->text + k->a, key, klen) == 0)
            return i + 1;
        /* step over the key and its value (a container skips to its end) */
        const tg__jtok *v = &t->tok[i + 1];
        i = v->kind == TG_JT_OBJECT || v->kind == TG_JT_ARRAY ? v->a : i + 2;
    }
    return 0;
}

int tg__echo_handler(tg_handler_ctx *ctx, const char *args_json,
                     size_t args_len, void *user_data)
{
    (void)user_data;
    tg__jtok small[8]; /* {"text": "..."} is 3 tokens */
    tg__jtape tape;
    /* The call's record has the tape of these very bytes already (the
     * runtime hands the record's text over): no second parse. */
    const tg_call *call = ctx != NULL ? ctx->call : NULL;
    bool own = !(call != NULL && call->args_text == args_json &&
                 call->args_tape.text == args_json &&
                 call->args_tape.len == args_len && call->args_tape.n > 0);
    if (!own) {
        tape = call->args_tape;
        tape.mem = NULL; /* the record's: not ours to free */
    } else if (tg__jtape_parse_in(args_json, args_len, small, 8, &tape, NULL) !=
               0) {
        tg_handler_fail(ctx, "INVALID_ARGUMENTS",
                        "the arguments are not a JSON object", NULL);
        return -1;
    }
    int rc = 0;
    size_t v = member(&tape, "text");
    if (v == 0 || tape.tok[v].kind != TG_JT_STRING) {
        tg_handler_fail(ctx, "INVALID_ARGUMENTS",
                        "echo takes {\"text\": STRING}", NULL);
        rc = -1;
    } else if (tape.tok[v].b == 0) {
        /* no output would be a null payload: the empty text is "" */
        if (tg_handler_set_json(ctx, "\"\"", 2, NULL) != 0)
            rc = -1;
    } else if (!(tape.tok[v].flags & TG_JT_ESCAPED)) {
        /* the bytes as written are the string */
        if (tg_handler_write(ctx, tape.text + tape.tok[v].a, tape.tok[v].b,
                             NULL))
            rc = -1;
    } else {
        char storage[512];
        tg__buf text;
        tg__buf_init_with(&text, storage, sizeof storage, 0);
        if (tg__jtape_decode(&tape, &tape.tok[v], &text) != 0 ||
            tg_handler_write(ctx, tg__buf_cstr(&text), text.len, NULL) != 0)
            rc = -1;
        tg__buf_cleanup(&text);
    }
    if (own)
        tg__jtape_free(&tape);
    return rc;
}
