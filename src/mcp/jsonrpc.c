/* SPDX-License-Identifier: MIT */
/*
 * jsonrpc.c - reading and writing JSON-RPC 2.0 messages (jsonrpc.h): the
 * text is parsed once into a token tape, its depth checked on the tape,
 * each message classified by its members, and ids, params and results
 * handed out as slices of the text. Writers splice the caller's JSON text
 * and escape only strings.
 */
#include "jsonrpc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "toolgate.h"

/* The members of one message object, found in one walk. */
typedef struct members {
    const tg__jtok *jsonrpc, *method, *id, *params, *result, *error;
} members;

static const char *kind_name(const tg__jtok *t)
{
    switch (t->kind) {
    case TG_JT_OBJECT:
        return "an object";
    case TG_JT_ARRAY:
        return "an array";
    case TG_JT_STRING:
        return "a string";
    case TG_JT_NUMBER:
        return t->flags & TG_JT_REAL ? "a fractional number" : "an integer";
    case TG_JT_TRUE:
    case TG_JT_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

/* Whether the key token k is the n bytes of `want` (escapes decoded). */
static bool key_isn(const tg__jtape *t, const tg__jtok *k, const char *want,
                    size_t n)
{
    if (!(k->flags & TG_JT_ESCAPED))
        return k->b == n && memcmp(t->text + k->a, want, n) == 0;
    tg__jstr_iter it;
    tg__jstr_iter_init(&it, t, k);
    for (size_t i = 0; i < n; i++)
        if (tg__jstr_iter_next(&it) != (unsigned char)want[i])
            return false;
    return tg__jstr_iter_next(&it) == -1;
}

/* key_isn with a string literal: its length is known when compiling. */
#define key_is(t, k, lit) key_isn(t, k, "" lit, sizeof lit - 1)

/* Where each container of the text starts and ends, from the tape: the
 * tokens are in document order and only white space and punctuation lie
 * between two of them, so a container opens at the first bracket after the
 * token before it, and closes at the first closing bracket after the last
 * token inside it (or after the containers inside it that close there).
 * Fills b->span for every container token (indexed by token). Returns 0 or
 * TG_ENOMEM. */
static int find_spans(tg__rpc_batch *b)
{
    const tg__jtape *t = &b->tape;
    if (t->n <= TG_RPC_INLINE_TOKENS)
        b->span = b->spans_inline;
    else if ((b->span = malloc(t->n * sizeof *b->span)) == NULL)
        return TG_ENOMEM;
    uint32_t open[TG_JTAPE_MAX_DEPTH];
    size_t nopen = 0, pos = 0;
    const char *s = t->text;
    for (size_t k = 0; k <= t->n; k++) {
        /* close the containers that end before token k */
        while (nopen > 0 && (k == t->n || t->tok[open[nopen - 1]].a <= k)) {
            while (pos < t->len && s[pos] != '}' && s[pos] != ']')
                pos++;
            b->span[open[--nopen]].end = (uint32_t)++pos;
        }
        if (k == t->n)
            break;
        const tg__jtok *v = &t->tok[k];
        if (v->kind == TG_JT_OBJECT || v->kind == TG_JT_ARRAY) {
            while (pos < t->len && s[pos] != '{' && s[pos] != '[')
                pos++;
            b->span[k].start = (uint32_t)pos++;
            if (nopen == TG_JTAPE_MAX_DEPTH)
                return 0; /* cannot happen: the tape's depth is bounded */
            open[nopen++] = (uint32_t)k;
        } else
            pos = (size_t)v->a + v->b +
                  (v->kind == TG_JT_STRING || v->kind == TG_JT_KEY);
    }
    return 0;
}

/* The text of the value at token i: a scalar's bytes (a string with its
 * quotes), a container from its bracket to its closing one. */
static void value_text(const tg__rpc_batch *b, size_t i, const char **s,
                       size_t *n)
{
    const tg__jtape *t = &b->tape;
    const tg__jtok *v = &t->tok[i];
    if (v->kind == TG_JT_OBJECT || v->kind == TG_JT_ARRAY) {
        *s = t->text + b->span[i].start;
        *n = b->span[i].end - b->span[i].start;
    } else if (v->kind == TG_JT_STRING) {
        *s = t->text + v->a - 1;
        *n = (size_t)v->b + 2;
    } else {
        *s = t->text + v->a;
        *n = v->b;
    }
}

/* Collects the members of the object at token i (a duplicate cannot occur:
 * the tape refuses them). */
static void read_members(const tg__jtape *t, size_t i, members *m)
{
    memset(m, 0, sizeof *m);
    size_t end = t->tok[i].a;
    for (size_t k = i + 1; k < end;) {
        const tg__jtok *key = &t->tok[k];
        const tg__jtok *val = &t->tok[k + 1];
        if (key_is(t, key, "jsonrpc"))
            m->jsonrpc = val;
        else if (key_is(t, key, "method"))
            m->method = val;
        else if (key_is(t, key, "id"))
            m->id = val;
        else if (key_is(t, key, "params"))
            m->params = val;
        else if (key_is(t, key, "result"))
            m->result = val;
        else if (key_is(t, key, "error"))
            m->error = val;
        k = (val->kind == TG_JT_OBJECT || val->kind == TG_JT_ARRAY) ? val->a
                                                                    : k + 2;
    }
}

/* Appends the decoded string token to the batch's strings, NUL-ended;
 * *off is where it starts. Returns 0, 1 when it holds U+0000, or
 * TG_ENOMEM. */
static int keep_string(tg__rpc_batch *b, const tg__jtok *tok, size_t *off,
                       size_t *len)
{
    *off = b->strings.len;
    int rc = tg__jtape_decode(&b->tape, tok, &b->strings);
    if (rc != 0)
        return TG_ENOMEM;
    *len = b->strings.len - *off;
    if ((rc = tg__buf_append(&b->strings, "", 1)) != 0)
        return TG_ENOMEM;
    return memchr(b->strings.data + *off, '\0', *len) != NULL ? 1 : 0;
}

/* Offsets into b->strings held until the strings stop moving. */
typedef struct pending {
    size_t method, id, message;
    bool has_method, has_id_str, has_message;
} pending;

static void fail_msg(tg__rpc_msg *m, int code, const char *fmt, const char *a,
                     const char *b2)
{
    m->kind = TG_RPC_INVALID;
    m->fail_code = code;
    snprintf(m->fail_message, sizeof m->fail_message, fmt, a, b2);
}

/* Reads the id token into m->id; returns 0 (not readable: id stays NONE),
 * 1 (read), or TG_ENOMEM. */
static int read_id(tg__rpc_batch *b, const tg__jtok *id, tg__rpc_msg *m,
                   pending *p)
{
    size_t tok = (size_t)(id - b->tape.tok);
    if (id->kind == TG_JT_STRING) {
        size_t len;
        int rc = keep_string(b, id, &p->id, &len);
        if (rc < 0)
            return rc;
        if (rc == 1)
            return 0; /* U+0000: not an id toolgate echoes */
        p->has_id_str = true;
        m->id.kind = TG_RPC_ID_STRING;
        m->id.str_len = len;
        value_text(b, tok, &m->id.json, &m->id.json_len);
        return 1;
    }
    if (id->kind == TG_JT_NUMBER && !(id->flags & TG_JT_REAL)) {
        int64_t iv;
        double dv;
        if (tg__jtape_number(&b->tape, id, &iv, &dv) != 1)
            return 0;
        m->id.kind = TG_RPC_ID_INT;
        m->id.num = iv;
        m->id.json = b->tape.text + id->a;
        m->id.json_len = id->b;
        /* the decimal text: the digits as written ("-0" stays) */
        p->id = b->strings.len;
        if (tg__buf_append(&b->strings, m->id.json, m->id.json_len) != 0 ||
            tg__buf_append(&b->strings, "", 1) != 0)
            return TG_ENOMEM;
        p->has_id_str = true;
        m->id.str_len = m->id.json_len;
        return 1;
    }
    return 0;
}

#define INVALID "Invalid Request: "

/* Classifies the member at token i into m. */
static int classify(tg__rpc_batch *b, size_t i, const char *where,
                    tg__rpc_msg *m, pending *p)
{
    const tg__jtape *t = &b->tape;
    const tg__jtok *v = &t->tok[i];
    members mb;
    memset(m, 0, sizeof *m);
    memset(p, 0, sizeof *p);
    m->tok = i;
    if (v->kind != TG_JT_OBJECT) {
        fail_msg(m, TG_RPC_INVALID_REQUEST,
                 INVALID "the %s is %s, not a JSON-RPC message object", where,
                 kind_name(v));
        return 0;
    }
    read_members(t, i, &mb);
    int rc = 0;
    if (mb.id != NULL && (rc = read_id(b, mb.id, m, p)) < 0)
        return rc;
    bool id_ok = rc == 1;

    if (mb.jsonrpc == NULL || mb.jsonrpc->kind != TG_JT_STRING ||
        mb.jsonrpc->b != 3 || (mb.jsonrpc->flags & TG_JT_ESCAPED) ||
        memcmp(t->text + mb.jsonrpc->a, "2.0", 3) != 0) {
        /* "\u0032.0" is "2.0" too */
        if (mb.jsonrpc == NULL || mb.jsonrpc->kind != TG_JT_STRING ||
            !key_is(t, mb.jsonrpc, "2.0")) {
            fail_msg(m, TG_RPC_INVALID_REQUEST,
                     INVALID "the %s has no \"jsonrpc\":\"2.0\" member%s",
                     where, "");
            return 0;
        }
    }
    if (mb.method == NULL && (mb.result != NULL || mb.error != NULL)) {
        /* a response */
        if (mb.result != NULL && mb.error != NULL) {
            fail_msg(m, TG_RPC_INVALID_REQUEST,
                     INVALID "the %s has both \"result\" and \"error\"%s",
                     where, "");
            return 0;
        }
        if (mb.result != NULL) {
            if (!id_ok) {
                fail_msg(m, TG_RPC_INVALID_REQUEST,
                         INVALID "the result response in the %s has %s id; "
                                 "expected a string or an integer",
                         where, mb.id == NULL ? "no" : "an unusable");
                return 0;
            }
            m->kind = TG_RPC_RESULT;
            value_text(b, (size_t)(mb.result - t->tok), &m->result,
                       &m->result_len);
            return 0;
        }
        /* an error response: its id may be absent or null (the request's
         * could not be read) */
        const tg__jtok *code = NULL, *msg = NULL;
        if (mb.error->kind == TG_JT_OBJECT) {
            size_t e = (size_t)(mb.error - t->tok), end = mb.error->a;
            for (size_t k = e + 1; k < end;) {
                const tg__jtok *key = &t->tok[k], *val = &t->tok[k + 1];
                if (key_is(t, key, "code"))
                    code = val;
                else if (key_is(t, key, "message"))
                    msg = val;
                k = (val->kind == TG_JT_OBJECT || val->kind == TG_JT_ARRAY)
                        ? val->a
                        : k + 2;
            }
        }
        int64_t iv = 0;
        double dv;
        if (code == NULL || code->kind != TG_JT_NUMBER ||
            (code->flags & TG_JT_REAL) ||
            tg__jtape_number(t, code, &iv, &dv) != 1 || msg == NULL ||
            msg->kind != TG_JT_STRING ||
            (mb.id != NULL && !id_ok && mb.id->kind != TG_JT_NULL)) {
            fail_msg(m, TG_RPC_INVALID_REQUEST,
                     INVALID "the error response in the %s needs an error "
                             "object with an integer code and a string "
                             "message, and a string or integer id%s",
                     where, "");
            return 0;
        }
        size_t len;
        if ((rc = keep_string(b, msg, &p->message, &len)) < 0)
            return rc;
        p->has_message = true;
        m->kind = TG_RPC_ERROR;
        m->error_code = iv;
        value_text(b, (size_t)(mb.error - t->tok), &m->result, &m->result_len);
        return 0;
    }
    if (mb.method == NULL || mb.method->kind != TG_JT_STRING) {
        fail_msg(m, TG_RPC_INVALID_REQUEST,
                 INVALID "the %s has no method (a string)%s", where, "");
        return 0;
    }
    if (mb.id != NULL && !id_ok) {
        fail_msg(m, TG_RPC_INVALID_REQUEST,
                 INVALID "the id of the %s is %s; expected a string or an "
                         "integer",
                 where,
                 mb.id->kind == TG_JT_STRING ? "a string holding U+0000"
                                             : kind_name(mb.id));
        return 0;
    }
    if (mb.params != NULL && mb.params->kind != TG_JT_OBJECT) {
        fail_msg(m, TG_RPC_INVALID_REQUEST,
                 INVALID "the params of the %s are %s; expected an object",
                 where, kind_name(mb.params));
        return 0;
    }
    size_t mlen;
    if ((rc = keep_string(b, mb.method, &p->method, &mlen)) < 0)
        return rc;
    if (rc == 1) {
        fail_msg(m, TG_RPC_INVALID_REQUEST,
                 INVALID "the method of the %s holds U+0000%s", where, "");
        return 0;
    }
    p->has_method = true;
    m->method_len = mlen;
    m->kind = id_ok ? TG_RPC_REQUEST : TG_RPC_NOTIFICATION;
    if (mb.params != NULL) {
        m->params_tok = (size_t)(mb.params - t->tok);
        value_text(b, m->params_tok, &m->params, &m->params_len);
    }
    return 0;
}

/* The deepest nesting of containers in the tape, counting stops past
 * `limit` (returns limit + 1 then). */
static unsigned tape_depth(const tg__jtape *t, unsigned limit)
{
    uint32_t ends[TG_JTAPE_MAX_DEPTH + 1];
    unsigned depth = 0, max = 0;
    for (size_t i = 0; i < t->n; i++) {
        while (depth > 0 && ends[depth - 1] <= i)
            depth--;
        const tg__jtok *k = &t->tok[i];
        if (k->kind == TG_JT_OBJECT || k->kind == TG_JT_ARRAY) {
            if (depth == limit || depth == TG_JTAPE_MAX_DEPTH)
                return depth + 1;
            ends[depth++] = k->a;
            if (depth > max)
                max = depth;
        }
    }
    return max;
}

static void fail_whole(tg__rpc_batch *b, int code, const char *fmt,
                       unsigned long long a, unsigned long long c)
{
    b->fail_code = code;
    snprintf(b->fail_message, sizeof b->fail_message, fmt, a, c);
}

/* Points the messages' strings into b->strings, which no longer moves. */
static void fix_strings(tg__rpc_batch *b, const pending *p, tg__rpc_msg *m)
{
    const char *base = b->strings.data;
    if (p->has_method)
        m->method = base + p->method;
    if (p->has_id_str)
        m->id.str = base + p->id;
    if (p->has_message)
        m->error_message = base + p->message;
}

void tg__rpc_batch_cleanup(tg__rpc_batch *b)
{
    if (b->msgs != NULL && b->msgs != &b->one)
        free(b->msgs);
    b->msgs = NULL;
    b->n = 0;
    if (b->span != NULL && b->span != b->spans_inline)
        free(b->span);
    b->span = NULL;
    tg__jtape_free(&b->tape);
    tg__buf_cleanup(&b->strings);
}

int tg__rpc_read(tg__rpc_batch *b, const char *text, size_t len,
                 const tg__rpc_limits *limits)
{
    tg__rpc_limits lim = {0, 0, 0, false};
    if (limits != NULL)
        lim = *limits;
    if (lim.max_bytes == 0)
        lim.max_bytes = TG_RPC_DEFAULT_MAX_BYTES;
    if (lim.max_depth == 0)
        lim.max_depth = TG_RPC_DEFAULT_MAX_DEPTH;
    if (lim.max_depth > TG_JTAPE_MAX_DEPTH)
        lim.max_depth = TG_JTAPE_MAX_DEPTH;
    if (lim.max_batch == 0)
        lim.max_batch = TG_RPC_DEFAULT_MAX_BATCH;

    b->msgs = NULL;
    b->n = 0;
    b->is_batch = false;
    b->fail_code = 0;
    b->fail_message[0] = '\0';
    b->span = NULL;
    memset(&b->tape, 0, sizeof b->tape);
    tg__buf_init_with(&b->strings, b->strings_inline, sizeof b->strings_inline,
                      0);

    if (len > lim.max_bytes) {
        fail_whole(b, TG_RPC_INVALID_REQUEST,
                   INVALID "the message of %llu bytes is over the limit of "
                           "%llu bytes",
                   (unsigned long long)len, (unsigned long long)lim.max_bytes);
        return 0;
    }
    tg__jtape_error jerr;
    int rc = tg__jtape_parse_in_flags(text, len, TG_JTAPE_ALLOW_NUL, b->tokens,
                                      TG_RPC_INLINE_TOKENS, &b->tape, &jerr);
    if (rc == TG_ENOMEM || (rc != 0 && jerr.oom)) {
        tg__rpc_batch_cleanup(b);
        return TG_ENOMEM;
    }
    if (rc != 0 && strncmp(jerr.text, "maximum parsing depth", 21) == 0) {
        fail_whole(b, TG_RPC_INVALID_REQUEST,
                   INVALID "the message is nested more than %llu deep%.0llu",
                   lim.max_depth, 0);
        return 0;
    }
    if (rc != 0) {
        b->fail_code = TG_RPC_PARSE_ERROR;
        snprintf(b->fail_message, sizeof b->fail_message,
                 "Parse error: %s at line %d, column %d", jerr.text, jerr.line,
                 jerr.column);
        return 0;
    }
    /* the depth is at most the number of tokens: a short message needs
     * no walk */
    if (b->tape.n > lim.max_depth &&
        tape_depth(&b->tape, lim.max_depth) > lim.max_depth) {
        fail_whole(b, TG_RPC_INVALID_REQUEST,
                   INVALID "the message is nested more than %llu deep%.0llu",
                   lim.max_depth, 0);
        return 0;
    }
    if (find_spans(b) != 0)
        goto oom;
    const tg__jtok *root = &b->tape.tok[0];
    pending one;
    if (root->kind != TG_JT_ARRAY) {
        b->msgs = &b->one;
        b->n = 1;
        if ((rc = classify(b, 0, "message", &b->one, &one)) != 0)
            goto oom;
        fix_strings(b, &one, &b->one);
        return 0;
    }
    b->is_batch = true;
    if (root->b == 0) {
        fail_whole(b, TG_RPC_INVALID_REQUEST,
                   INVALID "the batch is empty%.0llu%.0llu", 0, 0);
        return 0;
    }
    if (!lim.batches) {
        fail_whole(b, TG_RPC_INVALID_REQUEST,
                   INVALID "batches are not supported by this protocol "
                           "version (a batch of %llu messages)%.0llu",
                   root->b, 0);
        return 0;
    }
    if (root->b > lim.max_batch) {
        fail_whole(b, TG_RPC_INVALID_REQUEST,
                   INVALID "the batch has %llu messages, over the limit of "
                           "%llu",
                   root->b, (unsigned long long)lim.max_batch);
        return 0;
    }
    pending *pend = calloc(root->b, sizeof *pend);
    b->msgs = calloc(root->b, sizeof *b->msgs);
    if (pend == NULL || b->msgs == NULL) {
        free(pend);
        goto oom;
    }
    size_t k = 1;
    for (size_t j = 0; j < root->b; j++) {
        char where[48];
        snprintf(where, sizeof where, "batch element %zu", j);
        if ((rc = classify(b, k, where, &b->msgs[j], &pend[j])) != 0) {
            free(pend);
            goto oom;
        }
        b->n++;
        const tg__jtok *e = &b->tape.tok[k];
        k = (e->kind == TG_JT_OBJECT || e->kind == TG_JT_ARRAY) ? e->a : k + 1;
    }
    for (size_t j = 0; j < b->n; j++)
        fix_strings(b, &pend[j], &b->msgs[j]);
    free(pend);
    return 0;
oom:
    tg__rpc_batch_cleanup(b);
    return TG_ENOMEM;
}

/* ------------------------------------------------------------ values */

/* The token after the value at token i (containers are skipped whole). */
static size_t after_value(const tg__jtape *t, size_t i)
{
    const tg__jtok *v = &t->tok[i];
    return (v->kind == TG_JT_OBJECT || v->kind == TG_JT_ARRAY) ? v->a : i + 1;
}

/* The value of member `key` of the object at token obj, 0 when absent or
 * when obj is not an object (token 0 is never a member's value). */
static size_t member(const tg__jtape *t, size_t obj, const char *key)
{
    if (t->tok[obj].kind != TG_JT_OBJECT)
        return 0;
    size_t end = t->tok[obj].a, n = strlen(key);
    for (size_t k = obj + 1; k < end; k = after_value(t, k + 1))
        if (key_isn(t, &t->tok[k], key, n))
            return k + 1;
    return 0;
}

/* Follows path[0..n) from the object at token obj into out. */
static int find_path(const tg__rpc_batch *b, size_t obj,
                     const char *const *path, size_t n, tg__rpc_value *out)
{
    for (size_t s = 0; s < n; s++)
        if ((obj = member(&b->tape, obj, path[s])) == 0)
            return 0;
    out->tok = obj;
    out->kind = b->tape.tok[obj].kind;
    value_text(b, obj, &out->json, &out->len);
    return 1;
}

int tg__rpc_params_find(const tg__rpc_batch *b, const tg__rpc_msg *m,
                        const char *const *path, size_t n, tg__rpc_value *out)
{
    if (m->params == NULL || n == 0)
        return 0;
    return find_path(b, m->params_tok, path, n, out);
}

int tg__rpc_result_value(const tg__rpc_batch *b, const tg__rpc_msg *m,
                         tg__rpc_value *out)
{
    if (m->kind != TG_RPC_RESULT)
        return 0;
    size_t tok = member(&b->tape, m->tok, "result");
    if (tok == 0)
        return 0;
    out->tok = tok;
    out->kind = b->tape.tok[tok].kind;
    value_text(b, tok, &out->json, &out->len);
    return 1;
}

int tg__rpc_value_find(const tg__rpc_batch *b, const tg__rpc_value *obj,
                       const char *const *path, size_t n, tg__rpc_value *out)
{
    return find_path(b, obj->tok, path, n, out);
}

int tg__rpc_array_next(const tg__rpc_batch *b, const tg__rpc_value *array,
                       size_t *cursor, tg__rpc_value *out)
{
    const tg__jtape *t = &b->tape;
    if (t->tok[array->tok].kind != TG_JT_ARRAY)
        return 0;
    size_t i = *cursor == 0 ? array->tok + 1 : *cursor;
    if (i >= t->tok[array->tok].a)
        return 0;
    out->tok = i;
    out->kind = t->tok[i].kind;
    value_text(b, i, &out->json, &out->len);
    *cursor = after_value(t, i);
    return 1;
}

int tg__rpc_value_string(const tg__rpc_batch *b, const tg__rpc_value *v,
                         tg__buf *out)
{
    if (v->kind != TG_JT_STRING)
        return TG_EINVAL;
    return tg__jtape_decode(&b->tape, &b->tape.tok[v->tok], out);
}

json_t *tg__rpc_value_json(const tg__rpc_batch *b, const tg__rpc_value *v)
{
    return tg__jtape_to_json(&b->tape, v->tok);
}

json_t *tg__rpc_params_json(const tg__rpc_batch *b, const tg__rpc_msg *m)
{
    return m->params != NULL ? tg__jtape_to_json(&b->tape, m->params_tok)
                             : json_object();
}

/* ------------------------------------------------------------ writers */

#define PUT(lit) tg__buf_append(out, lit, sizeof lit - 1)

int tg__rpc_write_id(tg__buf *out, const tg__rpc_id *id)
{
    switch (id != NULL ? id->kind : TG_RPC_ID_NONE) {
    case TG_RPC_ID_STRING:
        if (id->json != NULL)
            return tg__buf_append(out, id->json, id->json_len);
        return tg__json_string(out, id->str != NULL ? id->str : "",
                               id->str_len);
    case TG_RPC_ID_INT:
        if (id->json != NULL)
            return tg__buf_append(out, id->json, id->json_len);
        return tg__json_integer(out, id->num);
    default:
        return 0;
    }
}

/* {"jsonrpc":"2.0" and ,"id":ID when there is one */
static int put_head(tg__buf *out, const tg__rpc_id *id)
{
    int rc = PUT("{\"jsonrpc\":\"2.0\"");
    if (rc == 0 && id != NULL && id->kind != TG_RPC_ID_NONE &&
        (rc = PUT(",\"id\":")) == 0)
        rc = tg__rpc_write_id(out, id);
    return rc;
}

int tg__rpc_write_result_open(tg__buf *out, const tg__rpc_id *id)
{
    int rc = put_head(out, id);
    return rc != 0 ? rc : PUT(",\"result\":");
}

int tg__rpc_write_close(tg__buf *out)
{
    return tg__buf_append(out, "}", 1);
}

int tg__rpc_write_result(tg__buf *out, const tg__rpc_id *id, const char *result,
                         size_t result_len)
{
    int rc = tg__rpc_write_result_open(out, id);
    if (rc == 0)
        rc = tg__buf_append(out, result, result_len);
    return rc != 0 ? rc : tg__rpc_write_close(out);
}

int tg__rpc_write_error(tg__buf *out, const tg__rpc_id *id, long long code,
                        const char *message, const char *data, size_t data_len)
{
    int rc;
    if ((rc = put_head(out, id)) != 0 ||
        (rc = PUT(",\"error\":{\"code\":")) != 0 ||
        (rc = tg__json_integer(out, code)) != 0 ||
        (rc = PUT(",\"message\":")) != 0 ||
        (rc = tg__json_string(out, message, strlen(message))) != 0)
        return rc;
    if (data != NULL && ((rc = PUT(",\"data\":")) != 0 ||
                         (rc = tg__buf_append(out, data, data_len)) != 0))
        return rc;
    return PUT("}}");
}

int tg__rpc_write_invalid(tg__buf *out, const tg__rpc_msg *m)
{
    return tg__rpc_write_error(out, &m->id, m->fail_code, m->fail_message, NULL,
                               0);
}

int tg__rpc_write_failure(tg__buf *out, const tg__rpc_batch *b)
{
    return tg__rpc_write_error(out, NULL, b->fail_code, b->fail_message, NULL,
                               0);
}

int tg__rpc_write_notification(tg__buf *out, const char *method,
                               const char *params, size_t params_len)
{
    return tg__rpc_write_request(out, NULL, method, params, params_len);
}

int tg__rpc_write_request(tg__buf *out, const tg__rpc_id *id,
                          const char *method, const char *params,
                          size_t params_len)
{
    int rc;
    if ((rc = put_head(out, id)) != 0 || (rc = PUT(",\"method\":")) != 0 ||
        (rc = tg__json_string(out, method, strlen(method))) != 0)
        return rc;
    if (params != NULL && ((rc = PUT(",\"params\":")) != 0 ||
                           (rc = tg__buf_append(out, params, params_len)) != 0))
        return rc;
    return PUT("}");
}
