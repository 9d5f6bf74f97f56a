/* SPDX-License-Identifier: MIT */
/*
 * gemini.c - the Gemini generateContent wire format (docs/formats.md,
 * "gemini"): reads the functionCall parts of a generateContent response
 * (candidates[0].content), of one model content, or of the last model content
 * of a contents array (only the calls no later functionResponse answers), and
 * renders results as the user content of functionResponse parts the model
 * expects next.
 *
 * Ids. Newer models send functionCall.id; older ones do not, and then the
 * call gets the deterministic id "gemini-<h>-<k>": h is the first 8 hex
 * digits of the SHA-256 of the whole input document written as compact JSON
 * (jansson's JSON_COMPACT, members in input order, so whitespace does not
 * matter but every other byte of the turn does), k the call's position among
 * the functionCall parts of its content. The same document always gives the
 * same ids, so a re-delivered turn is recognised by the journal; a different
 * turn (a new response, a longer conversation) gives different ones. Such a
 * call carries meta {"id_generated":true}, and the renderer then leaves "id"
 * out of its functionResponse: the model never saw that id.
 *
 * A problem confined to one call (functionCall not an object, no name, args
 * that are not an object) never fails the parse: the call carries a pre-run
 * error (MALFORMED_CALL or MALFORMED_ARGUMENTS) and the other calls still run.
 */
/* SHA256_Init/Update/Final, deprecated in OpenSSL 3, as checksum.c uses
 * them: a context on the stack, no allocation, no provider fetch. */
#define OPENSSL_SUPPRESS_DEPRECATED

#include "format.h"

#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bad_bytes.h"
#include "calls.h"
#include "error.h"
#include "jcs.h"
#include "json_fast.h"

#define FORMAT_NAME "gemini"
#define ID_GENERATED "id_generated"
#define EXPECTED_SHAPE                                                         \
    "expected a Gemini generateContent response (with candidates), a model "   \
    "content (with parts), or a contents array"

static int str_is(const json_t *v, const char *s)
{
    const char *t = json_string_value(v);
    return t != NULL && strcmp(t, s) == 0;
}

/* The id a functionCall or functionResponse (borrowed) carries, or NULL
 * when it has none: an empty id is no id. */
static const char *wire_id(const json_t *fc)
{
    const char *id = json_string_value(json_object_get(fc, "id"));
    return id != NULL && *id != '\0' ? id : NULL;
}

/* Scores: "candidates" and "parts" are Gemini's alone and outrank every
 * other format's shape. */
static int detect(const json_t *doc)
{
    if (json_is_object(doc)) {
        const json_t *cand = json_object_get(doc, "candidates"); /* borrowed */
        if (cand != NULL)
            return json_is_array(cand) ? 6 : 1;
        const json_t *parts = json_object_get(doc, "parts"); /* borrowed */
        if (parts == NULL)
            return 0;
        if (!json_is_array(parts))
            return 1;
        const json_t *role = json_object_get(doc, "role"); /* borrowed */
        /* A user content is Gemini's too; parse says it is not the model's. */
        return role == NULL || str_is(role, "model") ? 6 : 2;
    }
    if (json_is_array(doc)) {
        size_t n = json_array_size(doc);
        if (n == 0)
            return 0;
        for (size_t i = 0; i < n; i++)
            if (!json_is_array(
                    json_object_get(json_array_get(doc, i), "parts")))
                return 0;
        return 6;
    }
    return 0;
}

/* ------------------------------------------------------------ ids */

static int hash_cb(const char *buffer, size_t size, void *data)
{
    return SHA256_Update(data, buffer, size) == 1 ? 0 : -1;
}

/* The SHA-256 of the JCS form of doc, for a document jansson cannot write
 * because a string value is not UTF-8 - format.h, tg__format_load - which
 * JCS writes as it is; TG_ENOMEM for one it can (it ran out of memory).
 * U+0000 and keys that are not UTF-8 do not make it fail (bad_bytes.h): it
 * writes the same text every time, and that text is hashed. */
static int jcs_hash(const json_t *doc, unsigned char md[SHA256_DIGEST_LENGTH])
{
    if (!tg__bad_bytes_unwritable(doc))
        return TG_ENOMEM;
    tg__buf b;
    SHA256_CTX ctx;
    tg__buf_init(&b, 0);
    int rc = tg__jcs_write(doc, &b);
    if (rc == 0 &&
        (SHA256_Init(&ctx) != 1 || SHA256_Update(&ctx, b.data, b.len) != 1 ||
         SHA256_Final(md, &ctx) != 1))
        rc = TG_ENOMEM;
    tg__buf_cleanup(&b);
    return rc;
}

/* The first 8 hex digits of the SHA-256 of doc's compact JSON, streamed
 * into the digest (a large turn is not written out a second time). Returns
 * 0 or TG_ENOMEM (jansson's dump allocates for its loop check). */
static int doc_hash(const json_t *doc, char out[9])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256_CTX ctx;
    if (SHA256_Init(&ctx) != 1)
        return TG_ENOMEM;
    if (json_dump_callback(doc, hash_cb, &ctx,
                           JSON_COMPACT | JSON_ENCODE_ANY) != 0) {
        int rc = jcs_hash(doc, md);
        if (rc != 0)
            return rc;
    } else if (SHA256_Final(md, &ctx) != 1)
        return TG_ENOMEM;
    for (size_t i = 0; i < 4; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[8] = '\0';
    return 0;
}

int tg__gemini_call(const tg__gemini_wire *w, tg_call **out)
{
    char genid[48];
    const char *id = w->id;
    int rc, made_up = id == NULL || *id == '\0';
    *out = NULL;
    if (made_up) {
        if ((rc = w->make_id(w->id_ctx, genid, sizeof genid)) != 0)
            return rc;
        id = genid;
    }
    tg_call *call = tg__call_new(id, w->name, FORMAT_NAME);
    if (call == NULL)
        return TG_ENOMEM;
    rc = TG_ENOMEM;
    if (made_up && (call->meta = json_pack("{s:b}", ID_GENERATED, 1)) == NULL)
        goto fail;
    /* Gemini leaves args out for a function without parameters. */
    if ((rc = w->set_args(call, w->args)) != 0)
        goto fail;

    /* A malformed call outranks malformed arguments: it says more. */
    if (w->not_object)
        rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                    "parts[%zu].functionCall is not an object",
                                    w->part);
    else if (w->name == NULL || *w->name == '\0')
        rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                    "functionCall '%s' has no name", call->id);
    if (rc != 0)
        goto fail;
    *out = call;
    return 0;
fail:
    tg__call_free(call);
    return rc;
}

typedef struct parse_ctx {
    const json_t *doc; /* borrowed: the whole input, hashed for ids */
    char hash[9];      /* "" until the first call without an id needs it */
    size_t k;          /* the position of the call being added */
} parse_ctx;

/* The id of the ctx->k-th call of a content that has none (see the top of
 * the file). */
static int doc_call_id(void *ud, char *out, size_t size)
{
    parse_ctx *ctx = ud;
    int rc;
    if (ctx->hash[0] == '\0' && (rc = doc_hash(ctx->doc, ctx->hash)) != 0)
        return rc;
    snprintf(out, size, "gemini-%s-%zu", ctx->hash, ctx->k);
    return 0;
}

/* Adds parts[i].functionCall (borrowed), the k-th call of its content, as a
 * call. Returns 0 or TG_ENOMEM. */
static int add_function_call(tg_turn *turn, const json_t *fc, size_t i,
                             size_t k, parse_ctx *ctx)
{
    ctx->k = k;
    tg__gemini_wire w = {
        .part = i,
        .not_object = !json_is_object(fc),
        .id = wire_id(fc),
        .name = json_string_value(json_object_get(fc, "name")),
        .make_id = doc_call_id,
        .id_ctx = ctx,
        .set_args = tg__args_from_object_value,
        .args = json_object_get(fc, "args"), /* borrowed */
    };
    tg_call *call;
    int rc = tg__gemini_call(&w, &call);
    return rc != 0 ? rc : tg__turn_add_call(turn, call);
}

/* Adds the functionCall parts of a content (borrowed); the k-th is skipped
 * when answered[k] is set (answered may be NULL). pointer names the content
 * for errors. */
static int parse_content(tg_turn *turn, const json_t *content,
                         const char *pointer, const unsigned char *answered,
                         parse_ctx *ctx, tg_error *err)
{
    const json_t *parts = json_object_get(content, "parts"); /* borrowed */
    if (parts == NULL || json_is_null(parts))
        return 0; /* e.g. a candidate stopped before it said anything */
    if (!json_is_array(parts)) {
        char ptr[128];
        snprintf(ptr, sizeof ptr, "%s/parts", pointer);
        return tg__format_error(
            err, ptr, "%s/parts is not an array; " EXPECTED_SHAPE, pointer);
    }
    size_t n = json_array_size(parts), k = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *fc =
            json_object_get(json_array_get(parts, i), "functionCall");
        /* borrowed; text, thought and code parts are not calls */
        if (fc == NULL)
            continue;
        if (answered == NULL || !answered[k]) {
            int rc = add_function_call(turn, fc, i, k, ctx);
            if (rc != 0)
                return tg__error_set(err, rc, "out of memory");
        }
        k++;
    }
    return 0;
}

/* ------------------------------------------------------------ contents
 * arrays: which calls are answered */

/* A sorted multiset of strings (borrowed from the document) from which
 * matches are taken one at a time: the first call named "x" takes the first
 * response named "x", the second the second, and so on. */
typedef struct keyset {
    const char **keys;
    size_t *taken; /* per key; only the first of each run of equal keys
                      counts how many of the run are taken */
    size_t n;
} keyset;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Takes one unused occurrence of key; 1 when there was one. */
static int keyset_take(keyset *ks, const char *key)
{
    if (key == NULL)
        return 0;
    size_t lo = 0, hi = ks->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(ks->keys[mid], key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t next = lo + (lo < ks->n ? ks->taken[lo] : 0);
    if (next >= ks->n || strcmp(ks->keys[next], key) != 0)
        return 0;
    ks->taken[lo]++;
    return 1;
}

/* Collects the functionResponse parts of contents[first..]: those with an
 * id into ids, the others (by name) into names. With NULL sets it only
 * counts. */
static void collect_responses(const json_t *doc, size_t first, keyset *ids,
                              keyset *names)
{
    for (size_t i = first; i < json_array_size(doc); i++) {
        const json_t *parts =
            json_object_get(json_array_get(doc, i), "parts"); /* borrowed */
        for (size_t j = 0; j < json_array_size(parts); j++) {
            const json_t *fr =
                json_object_get(json_array_get(parts, j), "functionResponse");
            /* borrowed */
            const char *id = wire_id(fr);
            const char *name = json_string_value(json_object_get(fr, "name"));
            keyset *ks = id != NULL ? ids : names;
            if (id == NULL && name == NULL)
                continue;
            if (ks->keys != NULL)
                ks->keys[ks->n] = id != NULL ? id : name;
            ks->n++;
        }
    }
}

static int keyset_alloc(keyset *ks)
{
    if (ks->n == 0)
        return 0;
    ks->keys = malloc(ks->n * sizeof *ks->keys);
    ks->taken = calloc(ks->n, sizeof *ks->taken);
    ks->n = 0; /* refilled by the second collect_responses */
    return ks->keys != NULL && ks->taken != NULL ? 0 : TG_ENOMEM;
}

/* Sets answered[k] for each functionCall part of `content` (borrowed) that
 * a functionResponse of contents[first..] answers: by id when the response
 * has one, else by name, in order. */
static int find_answered(const json_t *doc, size_t first, const json_t *content,
                         unsigned char *answered, size_t ncalls)
{
    keyset ids = {NULL, NULL, 0}, names = {NULL, NULL, 0};
    collect_responses(doc, first, &ids, &names);
    int rc = 0;
    if ((rc = keyset_alloc(&ids)) != 0 || (rc = keyset_alloc(&names)) != 0)
        goto done;
    if (ids.keys == NULL && names.keys == NULL)
        goto done;
    collect_responses(doc, first, &ids, &names);
    if (ids.n > 0)
        qsort(ids.keys, ids.n, sizeof *ids.keys, cmp_str);
    if (names.n > 0)
        qsort(names.keys, names.n, sizeof *names.keys, cmp_str);

    const json_t *parts = json_object_get(content, "parts"); /* borrowed */
    size_t k = 0;
    /* Ids first: a response naming its call's id answers exactly that one,
     * whatever the order. */
    for (size_t i = 0; i < json_array_size(parts) && k < ncalls; i++) {
        const json_t *fc = json_object_get(json_array_get(parts, i),
                                           "functionCall"); /* borrowed */
        if (fc != NULL)
            answered[k++] = (unsigned char)keyset_take(&ids, wire_id(fc));
    }
    /* Then the responses without an id, by name in order. A call that had
     * an id counts too: a client that drops ids still answered it, and
     * running a tool twice repeats its effects. */
    k = 0;
    for (size_t i = 0; i < json_array_size(parts) && k < ncalls; i++) {
        const json_t *fc = json_object_get(json_array_get(parts, i),
                                           "functionCall"); /* borrowed */
        if (fc == NULL)
            continue;
        if (!answered[k])
            answered[k] = (unsigned char)keyset_take(
                &names, json_string_value(json_object_get(fc, "name")));
        k++;
    }
done:
    free(ids.keys);
    free(ids.taken);
    free(names.keys);
    free(names.taken);
    return rc;
}

static int parse_contents(tg_turn *turn, const json_t *doc, parse_ctx *ctx,
                          tg_error *err)
{
    size_t n = json_array_size(doc);
    size_t last = n; /* index of the last model content, n when none */
    for (size_t i = 0; i < n; i++) {
        const json_t *c = json_array_get(doc, i); /* borrowed */
        if (!json_is_object(c)) {
            char ptr[32];
            snprintf(ptr, sizeof ptr, "/%zu", i);
            tg__error_pointer(err, ptr);
            return tg__error_set(err, TG_EFORMAT,
                                 "contents[%zu] is not a content (an object "
                                 "with parts); " EXPECTED_SHAPE,
                                 i);
        }
        if (str_is(json_object_get(c, "role"), "model"))
            last = i;
    }
    if (last == n)
        return 0; /* the model has not asked for anything yet */

    const json_t *content = json_array_get(doc, last);       /* borrowed */
    const json_t *parts = json_object_get(content, "parts"); /* borrowed */
    size_t ncalls = 0;
    for (size_t i = 0; i < json_array_size(parts); i++)
        ncalls +=
            json_object_get(json_array_get(parts, i), "functionCall") != NULL;
    unsigned char *answered = NULL;
    if (ncalls > 0 && last + 1 < n) {
        answered = calloc(ncalls, 1);
        if (answered == NULL ||
            find_answered(doc, last + 1, content, answered, ncalls) != 0) {
            free(answered);
            return tg__error_set(err, TG_ENOMEM, "out of memory");
        }
    }
    char ptr[32];
    snprintf(ptr, sizeof ptr, "/%zu", last);
    int rc = parse_content(turn, content, ptr, answered, ctx, err);
    free(answered);
    return rc;
}

static int parse(tg_turn *turn, const json_t *doc, tg_error *err)
{
    parse_ctx ctx = {.doc = doc, .hash = ""};
    if (json_is_array(doc))
        return parse_contents(turn, doc, &ctx, err);
    if (!json_is_object(doc))
        return tg__format_error(err, "",
                                "the document is not an object or an array; %s",
                                EXPECTED_SHAPE);
    const json_t *cands = json_object_get(doc, "candidates"); /* borrowed */
    if (cands != NULL) {
        if (!json_is_array(cands) || json_array_size(cands) == 0)
            return tg__format_error(err, "/candidates",
                                    "a response without candidates; %s",
                                    "expected candidates[0].content");
        const json_t *content =
            json_object_get(json_array_get(cands, 0), "content"); /* borrowed */
        if (content == NULL || json_is_null(content))
            return 0; /* stopped (safety, length) before any content */
        if (!json_is_object(content))
            return tg__format_error(
                err, "/candidates/0/content",
                "candidates[0].content is not an object; %s", EXPECTED_SHAPE);
        return parse_content(turn, content, "/candidates/0/content", NULL, &ctx,
                             err);
    }
    const json_t *role = json_object_get(doc, "role"); /* borrowed */
    /* A model content may come without parts (it stopped first). */
    if (json_object_get(doc, "parts") != NULL || str_is(role, "model")) {
        if (role != NULL && !str_is(role, "model"))
            return tg__format_error(err, "/role",
                                    "a content with role '%.64s'; expected the "
                                    "model's content",
                                    json_is_string(role)
                                        ? json_string_value(role)
                                        : "(not a string)");
        return parse_content(turn, doc, "", NULL, &ctx, err);
    }
    const json_t *e = json_object_get(doc, "error"); /* borrowed */
    if (json_is_object(e)) {
        /* What the API answers instead of a response: say so plainly. */
        const char *msg = json_string_value(json_object_get(e, "message"));
        return tg__format_error(err, "/error",
                                "the document is a Gemini API error (%.200s), "
                                "not a response",
                                msg ? msg : "no message");
    }
    const json_t *fb = json_object_get(doc, "promptFeedback"); /* borrowed */
    if (json_is_object(fb)) {
        const char *why = json_string_value(json_object_get(fb, "blockReason"));
        return tg__format_error(err, "/promptFeedback",
                                "a response without candidates (the prompt was "
                                "blocked: %.64s)",
                                why ? why : "no reason given");
    }
    return tg__format_error(err, "",
                            "an object with neither candidates nor parts; %s",
                            EXPECTED_SHAPE);
}

/* ------------------------------------------------------------ fast path */

/* The fast path reads the shape of nearly every large turn - a
 * generateContent response whose candidates[0].content holds functionCall
 * parts, each with a name and arguments in compact form - straight from the
 * text, without building the document. Anything else (a malformed call,
 * duplicate keys on the path it reads, a contents array, arguments with
 * white space) makes it give up (FAST_BAIL), and the document path, which
 * handles every shape and reports every error, runs instead.
 *
 * A call without an id gets the id the document path gives it, from the
 * hash of the document's compact JSON: the document is then built once,
 * exactly as the document path builds it, to be hashed. Such turns are
 * small in practice (the models that omit ids answer a few calls). */
#define FAST_BAIL TG_JCUR_BAIL
/* tg__jcur_key_is for a literal: its length is known when compiling (the
 * strlen was a visible share of reading a large turn). */
typedef struct fast_ctx {
    tg__jcur c;
    const char *text; /* the whole input, hashed for generated ids */
    size_t len;
    char hash[9];     /* "" until a call without an id needs it */
    tg__buf id, name; /* copies: the cursor's scratch is reused */
    size_t k;         /* functionCall parts read so far */
} fast_ctx;

/* The document's hash, as doc_hash computes it for the document path. */
static int fast_hash(fast_ctx *fx)
{
    json_error_t jerr;
    json_t *doc = tg__json_fast_load(fx->text, fx->len, 0); /* new ref */
    if (doc == NULL)
        doc = json_loadb(fx->text, fx->len, JSON_DECODE_ANY, &jerr);
    if (doc == NULL)
        return tg__format_json_oom(&jerr) ? TG_ENOMEM : FAST_BAIL;
    int rc = doc_hash(doc, fx->hash);
    json_decref(doc);
    return rc;
}

/* The value of a part's functionCall: adds it as the k-th call. */
static int fast_function_call(fast_ctx *fx, tg_turn *turn)
{
    tg__jcur *c = &fx->c;
    const char *key, *args = "{}";
    size_t kn, args_len = 2;
    int first = 1, m = -1, rc = 0, has_id = 0, has_name = 0, has_args = 0;
    if (tg__jcur_take(c, '{') != 0)
        return FAST_BAIL; /* MALFORMED_CALL */
    while (rc == 0 && (m = tg__jcur_member(c, &first, &key, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(key, kn, "id"))
            rc = tg__jcur_string_once(c, &fx->id, &has_id);
        else if (TG_JCUR_KEY_IS(key, kn, "name"))
            rc = tg__jcur_string_once(c, &fx->name, &has_name);
        else if (TG_JCUR_KEY_IS(key, kn, "args")) {
            int next = tg__jcur_peek(c);
            if (has_args || (next != '{' && next != 'n'))
                return FAST_BAIL; /* MALFORMED_ARGUMENTS */
            has_args = 1;
            const char *start = (const char *)c->p;
            rc = next == '{' ? tg__jcur_skip_any(c) : tg__jcur_skip_scalar(c);
            if (next == '{') { /* "null" means none, as absent */
                args = start;
                args_len = (size_t)((const char *)c->p - start);
            }
        } else
            rc = tg__jcur_skip_any(c);
    }
    if (rc != 0)
        return rc;
    if (m != 0 || !has_name || fx->name.len == 0)
        return FAST_BAIL; /* MALFORMED_CALL */
    char genid[48];
    const char *id = has_id && fx->id.len > 0 ? tg__buf_cstr(&fx->id) : NULL;
    if (id == NULL) {
        if (fx->hash[0] == '\0' && (rc = fast_hash(fx)) != 0)
            return rc;
        snprintf(genid, sizeof genid, "gemini-%s-%zu", fx->hash, fx->k);
    }
    fx->k++;
    tg_call *call = NULL;
    rc = tg__call_new_args_object(id ? id : genid, tg__buf_cstr(&fx->name),
                                  FORMAT_NAME, args, args_len, &call);
    if (rc != 0)
        return rc == 1 ? FAST_BAIL : rc;
    if (id == NULL &&
        (call->meta = json_pack("{s:b}", ID_GENERATED, 1)) == NULL) {
        tg__call_free(call);
        return TG_ENOMEM;
    }
    return tg__turn_add_call(turn, call);
}

/* The value of candidates[0].content.parts. */
static int fast_parts(fast_ctx *fx, tg_turn *turn)
{
    tg__jcur *c = &fx->c;
    const char *key;
    size_t kn;
    int first = 1, e = -1, rc = 0;
    if (tg__jcur_take(c, '[') != 0)
        return FAST_BAIL;
    while (rc == 0 && (e = tg__jcur_element(c, &first)) == 1) {
        if (tg__jcur_peek(c) != '{') {
            rc = tg__jcur_skip_any(c); /* not a part the parser reads */
            continue;
        }
        int mfirst = 1, m = -1, seen = 0;
        c->p++;
        while (rc == 0 && (m = tg__jcur_member(c, &mfirst, &key, &kn)) == 1) {
            if (TG_JCUR_KEY_IS(key, kn, "functionCall")) {
                rc = seen ? FAST_BAIL : fast_function_call(fx, turn);
                seen = 1;
            } else /* text, thought, thoughtSignature, ... */
                rc = tg__jcur_skip_any(c);
        }
        if (rc == 0 && m != 0)
            rc = FAST_BAIL;
    }
    return rc != 0 ? rc : e == 0 ? 0 : FAST_BAIL;
}

/* The value of candidates[0].content (its role is not read: the document
 * path does not read it either). */
static int fast_content(fast_ctx *fx, tg_turn *turn)
{
    tg__jcur *c = &fx->c;
    const char *key;
    size_t kn;
    int first = 1, m = -1, rc = 0, seen = 0;
    if (tg__jcur_take(c, '{') != 0)
        return FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(c, &first, &key, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(key, kn, "parts")) {
            rc = seen ? FAST_BAIL : fast_parts(fx, turn);
            seen = 1;
        } else
            rc = tg__jcur_skip_any(c);
    }
    return rc != 0 ? rc : m == 0 && seen ? 0 : FAST_BAIL;
}

typedef struct fast_content_args {
    fast_ctx *fx;
    tg_turn *turn;
} fast_content_args;

static int read_content(tg__jcur *c, void *ctx)
{
    (void)c; /* fx->c */
    fast_content_args *a = ctx;
    return fast_content(a->fx, a->turn);
}

/* candidates[0].content; the other candidates and members (finishReason,
 * index, safetyRatings, ...) are only checked, and a first candidate
 * without content (a stopped one) is left to the document path. */
static int fast_candidates(fast_ctx *fx, tg_turn *turn)
{
    fast_content_args a = {fx, turn};
    return tg__jcur_first_element_member(&fx->c, "content", read_content, &a);
}

static int parse_fast(tg_turn *turn, const char *text, size_t len)
{
    fast_ctx fx;
    const char *key;
    size_t kn;
    int first = 1, m = -1, rc = 0, seen = 0;
    memset(&fx, 0, sizeof fx);
    tg__jcur_init(&fx.c, text, len);
    fx.text = text;
    fx.len = len;
    tg__buf_init(&fx.id, 0);
    tg__buf_init(&fx.name, 0);
    if (tg__jcur_take(&fx.c, '{') != 0)
        rc = FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(&fx.c, &first, &key, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(key, kn, "candidates")) {
            rc = seen ? FAST_BAIL : fast_candidates(&fx, turn);
            seen = 1;
        } else if (TG_JCUR_KEY_IS(key, kn, "usageMetadata") ||
                   TG_JCUR_KEY_IS(key, kn, "promptFeedback"))
            rc = tg__jcur_skip_any(&fx.c);
        else /* other formats' members (choices, content, ...) end it */
            rc = tg__jcur_skip_scalar(&fx.c);
    }
    if (rc == 0 && (m != 0 || !seen || tg__jcur_end(&fx.c) != 0))
        rc = FAST_BAIL;
    tg__buf_cleanup(&fx.id);
    tg__buf_cleanup(&fx.name);
    tg__jcur_cleanup(&fx.c);
    if (rc == FAST_BAIL)
        return 0;
    return rc < 0 ? rc : 1;
}

/* ------------------------------------------------------------ rendering */

static int id_generated(const tg_call *call)
{
    return json_is_true(json_object_get(tg__call_meta(call), ID_GENERATED));
}

/* The payload as compact JSON: its text when the result knows it, a string
 * escaped straight from its value (as jansson writes it), else dumped. */
static int put_payload(tg__buf *out, const tg_result *r, tg__buf *scratch)
{
    if (tg__result_output_part(r) != NULL) {
        /* what a failed command printed is read as text, like its output
         * (in the trust envelope when untrusted) */
        scratch->len = 0;
        int rc = tg__format_payload_text(r, scratch);
        return rc != 0
                   ? rc
                   : tg__json_string(out, tg__buf_cstr(scratch), scratch->len);
    }
    if (r->untrusted &&
        (r->payload_json_cache == NULL || r->payload_json_cache[0] == '"')) {
        /* A tool's text output goes in the trust envelope; structured
         * output stays the object Gemini's response expects. */
        const json_t *p = tg__result_payload(r); /* borrowed */
        if (p == NULL)
            return TG_ENOMEM;
        if (json_is_string(p)) {
            scratch->len = 0;
            int rc = tg__format_payload_text(r, scratch);
            return rc != 0 ? rc
                           : tg__json_string(out, tg__buf_cstr(scratch),
                                             scratch->len);
        }
    }
    if (r->payload_json_cache != NULL)
        return tg__buf_puts(out, r->payload_json_cache);
    const json_t *p = tg__result_payload(r); /* borrowed */
    if (p == NULL)
        return TG_ENOMEM;
    if (json_is_string(p))
        return tg__json_string(out, json_string_value(p),
                               json_string_length(p));
    return tg__json_dump(p, out);
}

/* One functionResponse part: {"output":PAYLOAD} on success, else
 * {"error":PAYLOAD} (the outcome's payload as JSON, not as text, except
 * what a failed command printed: that is a text, see put_payload). Gemini has
 * no content blocks in a function response, so a result's blocks are added
 * as "content", their text description. */
static int put_response(tg__buf *out, const tg_call *call, const tg_result *r,
                        tg__buf *scratch)
{
    static const char open[] = "{\"functionResponse\":{\"name\":";
    const char *name = call->tool ? call->tool : "";
    int rc;
    if ((rc = tg__buf_append(out, open, sizeof open - 1)) != 0 ||
        (rc = tg__json_string(out, name, strlen(name))) != 0)
        return rc;
    if (!id_generated(call) &&
        ((rc = tg__buf_puts(out, ",\"id\":")) != 0 ||
         (rc = tg__json_string(out, call->id, strlen(call->id))) != 0))
        return rc;
    if ((rc = tg__buf_puts(out, r->outcome == TG_OUTCOME_SUCCESS
                                    ? ",\"response\":{\"output\":"
                                    : ",\"response\":{\"error\":")) != 0)
        return rc;
    /* a tool's content blocks ("output": "mcp-content") are its output:
     * their text, and what Gemini cannot carry described */
    if (tg__result_content_payload(r))
        return (rc = tg__format_payload_json_string(r, out, scratch)) != 0
                   ? rc
                   : tg__buf_puts(out, "}}}");
    if ((rc = put_payload(out, r, scratch)) != 0)
        return rc;
    if (json_array_size(r->content) > 0) {
        scratch->len = 0;
        if ((rc = tg__format_content_text(r->content, scratch)) != 0 ||
            (rc = tg__buf_puts(out, ",\"content\":")) != 0 ||
            (rc = tg__json_string(out, tg__buf_cstr(scratch), scratch->len)) !=
                0)
            return rc;
    }
    return tg__buf_puts(out, "}}}");
}

static int render(const tg_turn *turn, tg__buf *out, tg_error *err)
{
    tg__buf scratch; /* content descriptions, reused */
    tg__buf_init(&scratch, 0);
    int rc = tg__buf_puts(out, "{\"role\":\"user\",\"parts\":[");
    for (size_t i = 0; rc == 0 && i < turn->n; i++) {
        if (i > 0 && (rc = tg__buf_append(out, ",", 1)) != 0)
            break;
        rc = put_response(out, turn->calls[i], turn->results[i], &scratch);
    }
    if (rc == 0)
        rc = tg__buf_puts(out, "]}\n");
    tg__buf_cleanup(&scratch);
    if (rc != 0)
        return tg__error_set(err, rc, "cannot render %s results: %s",
                             FORMAT_NAME, tg_strerror(rc));
    return 0;
}

static json_t *tool_def(const json_t *t)
{
    return tg__format_tool_object(t, NULL, "parametersJsonSchema");
}

/* Tool definitions: {"functionDeclarations":[{"name","description",
 * "parametersJsonSchema"}]}. */
static int render_tools(const json_t *tools, tg__buf *out, tg_error *err)
{
    return tg__format_render_tool_list(tools, tool_def, "functionDeclarations",
                                       FORMAT_NAME, out, err);
}

const tg__format tg__format_gemini = {
    .name = FORMAT_NAME,
    .detect = detect,
    .parse = parse,
    .parse_text = NULL,
    .parse_fast = parse_fast,
    .render = render,
    .render_tools = render_tools,
};
