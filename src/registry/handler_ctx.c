/* SPDX-License-Identifier: MIT */
/*
 * handler_ctx.c - the public handler API (tg_handler_write, _set_json,
 * _fail, _deny, _canceled and the getters): what an in-process handler
 * tool reports through while it runs. It is below the exec layer, beside
 * the tool definitions, so the built-in tools (builtin/) and the artifact
 * tools use it without depending on the runtime that runs them; exec's
 * handler source (src/exec/handler.c) reads the context once the handler
 * returned.
 */
#include "handler_ctx.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "jtape.h"
#include "record.h"

int tg_handler_write(tg_handler_ctx *ctx, const char *data, size_t len,
                     tg_error *err)
{
    if (ctx == NULL || (data == NULL && len > 0))
        return tg__error_set(err, TG_EINVAL,
                             "tg_handler_write needs a context and data");
    int rc = tg__buf_append(&ctx->out, data, len);
    if (rc == TG_ELIMIT)
        return tg__error_set(err, rc,
                             "the output is over its cap of %zu bytes: "
                             "what fits was kept",
                             ctx->out.limit);
    if (rc != 0)
        return tg__error_set(err, rc, "out of memory");
    return 0;
}

static void json_text_clear(tg_handler_ctx *c)
{
    if (c->json_text != c->json_small)
        free(c->json_text);
    c->json_text = NULL;
    c->json_text_len = 0;
}

int tg_handler_set_json(tg_handler_ctx *ctx, const char *json, size_t len,
                        tg_error *err)
{
    if (ctx == NULL || json == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_handler_set_json needs a context and JSON");
    /* The tape parser accepts what jansson does, several times faster for
     * the small documents handlers return, and with their tokens on the
     * stack. A text that is its value's compact form already is kept as
     * the payload, and no jansson value is built: rendering needs the text,
     * not the value. */
    tg__jtok small[32];
    tg__jtape tape;
    tg__jtape_error jerr; /* filled only for a caller who reads it */
    int rc = tg__jtape_parse_in(json, len, small, 32, &tape,
                                err != NULL ? &jerr : NULL);
    if (rc == TG_ENOMEM)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    if (rc != 0)
        return err == NULL
                   ? TG_EINVAL
                   : tg__error_at(err, TG_EINVAL, jerr.line, jerr.column,
                                  "the result is not JSON: line %d, "
                                  "column %d: %s",
                                  jerr.line, jerr.column, jerr.text);
    json_t *v = NULL; /* new ref */
    char *t = NULL;
    if (tg__jtape_is_dump_form(&tape))
        t = len < sizeof ctx->json_small ? ctx->json_small : malloc(len + 1);
    if (t == NULL)
        v = tg__jtape_to_json(&tape, 0);
    tg__jtape_free(&tape);
    if (t == NULL && v == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    json_decref(ctx->json);
    ctx->json = v;
    json_text_clear(ctx);
    if (t != NULL) {
        memcpy(t, json, len);
        t[len] = '\0';
        ctx->json_text = t;
        ctx->json_text_len = len;
    }
    return 0;
}

/* Error codes are UPPER_SNAKE; anything else becomes TOOL_FAILED so the
 * payload convention holds whatever a handler passes. */
static bool upper_snake(const char *s)
{
    if (s == NULL || *s < 'A' || *s > 'Z')
        return false;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

int tg_handler_fail(tg_handler_ctx *ctx, const char *code, const char *message,
                    tg_error *err)
{
    if (ctx == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_handler_fail needs a context");
    ctx->failed = true;
    const char *c = upper_snake(code) && strlen(code) < sizeof ctx->fail_code
                        ? code
                        : "TOOL_FAILED";
    memcpy(ctx->fail_code, c, strlen(c) + 1);
    if (tg__strset(&ctx->fail_message, message) != 0)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    return 0;
}

int tg_handler_deny(tg_handler_ctx *ctx, const char *reason, tg_error *err)
{
    if (ctx == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_handler_deny needs a context");
    ctx->denied = true;
    if (tg__strset(&ctx->fail_message, reason) != 0)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    return 0;
}

int tg_handler_canceled(const tg_handler_ctx *ctx)
{
    return ctx != NULL &&
           atomic_load_explicit(&((tg_handler_ctx *)ctx)->canceled,
                                memory_order_relaxed) != 0;
}

const tg_call *tg_handler_call(const tg_handler_ctx *ctx)
{
    return ctx ? ctx->call : NULL;
}

const char *tg_handler_cwd(const tg_handler_ctx *ctx)
{
    return ctx ? ctx->cwd : NULL;
}

const char *tg_handler_workspace(const tg_handler_ctx *ctx)
{
    return ctx ? ctx->workspace : NULL;
}

const char *const *tg_handler_state_paths(const tg_handler_ctx *ctx)
{
    static const char *const none[] = {NULL};
    return ctx && ctx->state ? ctx->state : none;
}

/* ------------------------------------------------------------ lifecycle */

void tg__handler_ctx_init(tg_handler_ctx *c, const tg_call *call,
                          const char *cwd, const char *workspace,
                          const char *const *state, size_t out_cap)
{
    c->call = call;
    c->cwd = cwd;
    c->workspace = workspace;
    c->state = state;
    tg__buf_init(&c->out, out_cap);
    c->json = NULL;
    c->json_text = NULL;
    c->json_text_len = 0;
    c->failed = false;
    c->denied = false;
    c->fail_code[0] = '\0';
    c->fail_message = NULL;
    atomic_init(&c->canceled, 0);
}

void tg__handler_ctx_cleanup(tg_handler_ctx *c)
{
    tg__buf_cleanup(&c->out);
    json_decref(c->json);
    c->json = NULL;
    json_text_clear(c);
    free(c->fail_message);
    c->fail_message = NULL;
}
