/* SPDX-License-Identifier: MIT */
/*
 * openai_chat.c - the OpenAI Chat Completions wire format (docs/formats.md,
 * "openai-chat"): reads the tool calls of a whole response, of one assistant
 * message, or of a messages array (only the calls no later "tool" message
 * answers), and renders results as the "tool" messages the model expects
 * next.
 *
 * A problem confined to one tool call (no id, no name, a type other than
 * "function", arguments that are not an object) never fails the parse: the
 * call carries a pre-run error (MALFORMED_CALL or MALFORMED_ARGUMENTS) and
 * the other calls of the turn still run.
 */
#include "format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "error.h"
#include "json_fast.h"

#define FORMAT_NAME "openai-chat"
#define EXPECTED_SHAPE                                                         \
    "expected an OpenAI Chat Completions response (with choices), an "         \
    "assistant message, or a messages array"

static int has_role(const json_t *msg, const char *role)
{
    const char *r = json_string_value(json_object_get(msg, "role"));
    return r != NULL && strcmp(r, role) == 0;
}

static int detect(const json_t *doc)
{
    if (json_is_object(doc)) {
        if (json_object_get(doc, "choices") != NULL) {
            const json_t *msg = json_object_get(
                json_array_get(json_object_get(doc, "choices"), 0),
                "message"); /* borrowed */
            if (!json_is_object(msg))
                return 1;
            return json_object_get(msg, "tool_calls") ? 3 : 2;
        }
        if (has_role(doc, "assistant"))
            return json_object_get(doc, "tool_calls") ? 3 : 2;
        if (json_object_get(doc, "role") == NULL &&
            json_is_array(json_object_get(doc, "tool_calls")))
            return 1;
        return 0;
    }
    if (json_is_array(doc)) {
        size_t n = json_array_size(doc);
        /* An empty conversation has no calls; it is still this shape. */
        if (n == 0)
            return 1;
        for (size_t i = 0; i < n; i++) {
            const json_t *m = json_array_get(doc, i); /* borrowed */
            if (!json_is_string(json_object_get(m, "role")))
                return 0;
        }
        return 2;
    }
    return 0;
}

int tg__openai_chat_call(const tg__chat_wire *w, tg_call **out)
{
    char genid[48];
    const char *id = w->id;
    int missing_id = id == NULL || *id == '\0';
    *out = NULL;
    if (missing_id) {
        snprintf(genid, sizeof genid, "missing-id-%zu", w->pos);
        id = genid;
    }
    tg_call *call = tg__call_new(id, w->name, FORMAT_NAME);
    if (call == NULL)
        return TG_ENOMEM;
    int rc = w->set_args(call, w->args);
    if (rc != 0)
        goto fail;

    /* A malformed call outranks malformed arguments: it says more. */
    if (w->not_object)
        rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                    "tool_calls[%zu] is not an object", w->pos);
    else if (missing_id)
        rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                    "tool_calls[%zu] has no id (a non-empty "
                                    "string); it was given the id '%s'",
                                    w->pos, genid);
    else if (w->type_not_string ||
             (w->type != NULL && strcmp(w->type, "function") != 0))
        rc = tg__call_set_pre_error(
            call, "MALFORMED_CALL",
            "tool call '%s' has type '%.64s'; only \"function\" tool calls "
            "are supported",
            id, w->type_not_string ? "(not a string)" : w->type);
    else if (w->no_function)
        rc =
            tg__call_set_pre_error(call, "MALFORMED_CALL",
                                   "tool call '%s' has no function object", id);
    else if (w->name == NULL || *w->name == '\0')
        rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                    "tool call '%s' has no function.name", id);
    if (rc != 0)
        goto fail;
    *out = call;
    return 0;
fail:
    tg__call_free(call);
    return rc;
}

/* Adds tool_calls[i] (borrowed) as a call. Returns 0 or TG_ENOMEM. */
static int add_tool_call(tg_turn *turn, const json_t *tc, size_t i)
{
    const json_t *fn = json_object_get(tc, "function"); /* borrowed */
    const json_t *type = json_object_get(tc, "type");   /* borrowed */
    tg__chat_wire w = {
        .pos = i,
        .not_object = !json_is_object(tc),
        .id = json_string_value(json_object_get(tc, "id")),
        .type = json_string_value(type),
        .type_not_string =
            type != NULL && !json_is_null(type) && !json_is_string(type),
        .no_function = !json_is_object(fn),
        .name = json_string_value(json_object_get(fn, "name")),
        /* Proxies sometimes send the object itself instead of its string. */
        .set_args = tg__args_from_string_value,
        .args = json_object_get(fn, "arguments"), /* borrowed */
    };
    tg_call *call;
    int rc = tg__openai_chat_call(&w, &call);
    return rc != 0 ? rc : tg__turn_add_call(turn, call);
}

/* Adds the tool calls of an assistant message (borrowed) that `ans` does not
 * list. pointer names the message for errors. */
static int parse_message(tg_turn *turn, const json_t *msg, const char *pointer,
                         const tg__idset *ans, tg_error *err)
{
    const json_t *tcs = json_object_get(msg, "tool_calls"); /* borrowed */
    if (tcs == NULL || json_is_null(tcs))
        return 0; /* a plain text answer: a turn without calls */
    if (!json_is_array(tcs)) {
        char ptr[128];
        snprintf(ptr, sizeof ptr, "%s/tool_calls", pointer);
        return tg__format_error(
            err, ptr, "%s/tool_calls is not an array; " EXPECTED_SHAPE,
            pointer);
    }
    size_t n = json_array_size(tcs);
    for (size_t i = 0; i < n; i++) {
        const json_t *tc = json_array_get(tcs, i); /* borrowed */
        if (tg__idset_has(ans, json_string_value(json_object_get(tc, "id"))))
            continue;
        int rc = add_tool_call(turn, tc, i);
        if (rc != 0)
            return tg__error_set(err, rc, "out of memory");
    }
    return 0;
}

static int parse_messages(tg_turn *turn, const json_t *doc, tg_error *err)
{
    size_t n = json_array_size(doc);
    size_t last = n;  /* index of the last assistant message, n when none */
    size_t tools = 0; /* "tool" messages after it */
    for (size_t i = 0; i < n; i++) {
        const json_t *m = json_array_get(doc, i); /* borrowed */
        if (!json_is_object(m) || !json_is_string(json_object_get(m, "role"))) {
            char ptr[32];
            snprintf(ptr, sizeof ptr, "/%zu", i);
            tg__error_pointer(err, ptr);
            return tg__error_set(err, TG_EFORMAT,
                                 "messages[%zu] is not a message (an object "
                                 "with a role); " EXPECTED_SHAPE,
                                 i);
        }
        if (has_role(m, "assistant")) {
            last = i;
            tools = 0;
        } else
            tools += has_role(m, "tool");
    }
    if (last == n)
        return 0; /* nothing has been asked of the tools yet */

    tg__idset ans = {NULL, 0};
    if (tools > 0) {
        ans.ids = malloc(tools * sizeof *ans.ids);
        if (ans.ids == NULL)
            return tg__error_set(err, TG_ENOMEM, "out of memory");
        for (size_t i = last + 1; i < n; i++) {
            const json_t *m = json_array_get(doc, i); /* borrowed */
            const char *id =
                json_string_value(json_object_get(m, "tool_call_id"));
            if (has_role(m, "tool") && id != NULL)
                ans.ids[ans.n++] = id;
        }
        tg__idset_sort(&ans);
    }
    char ptr[32];
    snprintf(ptr, sizeof ptr, "/%zu", last);
    int rc = parse_message(turn, json_array_get(doc, last), ptr, &ans, err);
    free(ans.ids);
    return rc;
}

static int parse(tg_turn *turn, const json_t *doc, tg_error *err)
{
    if (json_is_array(doc))
        return parse_messages(turn, doc, err);
    if (!json_is_object(doc))
        return tg__format_error(err, "",
                                "the document is not an object or an "
                                "array; %s",
                                EXPECTED_SHAPE);
    const json_t *choices = json_object_get(doc, "choices"); /* borrowed */
    if (choices != NULL) {
        if (!json_is_array(choices) || json_array_size(choices) == 0)
            return tg__format_error(err, "/choices",
                                    "a response without choices; %s",
                                    "expected choices[0].message");
        const json_t *msg = json_object_get(json_array_get(choices, 0),
                                            "message"); /* borrowed */
        if (!json_is_object(msg))
            return tg__format_error(err, "/choices/0/message",
                                    "choices[0] has no message object; %s",
                                    "expected choices[0].message");
        return parse_message(turn, msg, "/choices/0/message", NULL, err);
    }
    const json_t *role = json_object_get(doc, "role"); /* borrowed */
    if (role != NULL && !has_role(doc, "assistant"))
        return tg__format_error(err, "/role",
                                "a message with role '%.64s'; expected an "
                                "assistant message",
                                json_is_string(role) ? json_string_value(role)
                                                     : "(not a string)");
    if (role == NULL && json_object_get(doc, "tool_calls") == NULL)
        return tg__format_error(err, "",
                                "an object with neither choices, role nor "
                                "tool_calls; %s",
                                EXPECTED_SHAPE);
    return parse_message(turn, doc, "", NULL, err);
}

/* ------------------------------------------------------------ fast path */

/* The fast path reads the shape of nearly every real turn - a whole
 * response whose tool calls each have an id, type "function" (or none), and
 * a function with a name and string arguments - straight from the text,
 * without building the document (most of the parse time of a large turn
 * went into building and freeing it). Anything else, including duplicate
 * keys on the path it reads, makes it give up (FAST_BAIL), and the document
 * path, which handles every shape and reports every error, runs instead. */
#define FAST_BAIL TG_JCUR_BAIL

typedef struct fast_call {
    tg__buf id, type, name, args; /* copies: the cursor's scratch is reused */
    int has_id, has_type, has_fn, has_name, has_args;
} fast_call;

static int fast_function(tg__jcur *c, fast_call *fc)
{
    const char *k;
    size_t kn;
    int first = 1, m = -1, rc = 0;
    if (tg__jcur_take(c, '{') != 0)
        return FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(c, &first, &k, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(k, kn, "name"))
            rc = tg__jcur_string_once(c, &fc->name, &fc->has_name);
        else if (TG_JCUR_KEY_IS(k, kn, "arguments"))
            rc = tg__jcur_string_once(c, &fc->args, &fc->has_args);
        else
            rc = tg__jcur_skip_any(c);
    }
    return rc != 0 ? rc : m == 0 ? 0 : FAST_BAIL;
}

static int fast_tool_call(tg__jcur *c, fast_call *fc, tg_turn *turn)
{
    const char *k;
    size_t kn;
    int first = 1, m = -1, rc = 0;
    if (tg__jcur_take(c, '{') != 0)
        return FAST_BAIL;
    fc->has_id = fc->has_type = fc->has_fn = fc->has_name = fc->has_args = 0;
    while (rc == 0 && (m = tg__jcur_member(c, &first, &k, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(k, kn, "id"))
            rc = tg__jcur_string_once(c, &fc->id, &fc->has_id);
        else if (TG_JCUR_KEY_IS(k, kn, "type"))
            rc = tg__jcur_string_once(c, &fc->type, &fc->has_type);
        else if (TG_JCUR_KEY_IS(k, kn, "function")) {
            rc = fc->has_fn ? FAST_BAIL : fast_function(c, fc);
            fc->has_fn = 1;
        } else
            rc = tg__jcur_skip_any(c);
    }
    if (rc != 0)
        return rc;
    if (m != 0 || !fc->has_id || fc->id.len == 0 || !fc->has_fn ||
        !fc->has_name || fc->name.len == 0 || !fc->has_args ||
        (fc->has_type &&
         !TG_JCUR_KEY_IS(fc->type.data, fc->type.len, "function")))
        return FAST_BAIL;
    /* The record and its arguments in one allocation. */
    tg_call *call = tg__call_new_args(fc->id.data, fc->name.data, FORMAT_NAME,
                                      tg__buf_cstr(&fc->args), fc->args.len);
    if (call == NULL)
        return TG_ENOMEM;
    return tg__turn_add_call(turn, call);
}

/* The value of choices[0].message; sets *done when its tool_calls array
 * was read. */
static int fast_message(tg__jcur *c, fast_call *fc, tg_turn *turn, int *done)
{
    const char *k;
    size_t kn;
    int first = 1, m = -1, rc = 0;
    if (tg__jcur_take(c, '{') != 0)
        return FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(c, &first, &k, &kn)) == 1) {
        if (!TG_JCUR_KEY_IS(k, kn, "tool_calls")) {
            rc = tg__jcur_skip_any(c);
            continue;
        }
        int efirst = 1, e = -1;
        if (*done || tg__jcur_take(c, '[') != 0)
            return FAST_BAIL;
        while (rc == 0 && (e = tg__jcur_element(c, &efirst)) == 1)
            rc = fast_tool_call(c, fc, turn);
        if (rc == 0 && e != 0)
            rc = FAST_BAIL;
        *done = 1;
    }
    return rc != 0 ? rc : m == 0 ? 0 : FAST_BAIL;
}

typedef struct fast_message_args {
    fast_call *fc;
    tg_turn *turn;
    int *done;
    const char *text; /* the document: where the message lies in it */
} fast_message_args;

static int read_message(tg__jcur *c, void *ctx)
{
    fast_message_args *a = ctx;
    if (tg__jcur_peek(c) < 0)
        return FAST_BAIL;
    const char *start = (const char *)c->p;
    int rc = fast_message(c, a->fc, a->turn, a->done);
    if (rc == 0) { /* tg_turn_message_span */
        a->turn->msg_off = (size_t)(start - a->text);
        a->turn->msg_len = (size_t)((const char *)c->p - start);
    }
    return rc;
}

/* choices[0].message, which must hold tool_calls; the other choices are
 * only checked. */
static int fast_choices(tg__jcur *c, fast_call *fc, tg_turn *turn, int *done,
                        const char *text)
{
    fast_message_args a = {fc, turn, done, text};
    int rc = tg__jcur_first_element_member(c, "message", read_message, &a);
    return rc == 0 && !*done ? FAST_BAIL : rc;
}

/* The other members of a Chat Completions response (OpenAI's, and the
 * compatible providers'). Any other top-level member leaves the document
 * to detection: it may be another format's (an MCP request's "method"). */
static int known_member(const char *k, size_t kn)
{
    static const char *const known[] = {
        "id",           "object",   "created",
        "model",        "usage",    "system_fingerprint",
        "service_tier", "provider", "citations"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (tg__jcur_key_is(k, kn, known[i]))
            return 1;
    return 0;
}

static int parse_fast(tg_turn *turn, const char *text, size_t len)
{
    tg__jcur c;
    fast_call fc;
    const char *k;
    size_t kn;
    int first = 1, m = -1, rc = 0, done = 0, seen = 0;
    tg__jcur_init(&c, text, len);
    memset(&fc, 0, sizeof fc);
    tg__buf_init(&fc.id, 0);
    tg__buf_init(&fc.type, 0);
    tg__buf_init(&fc.name, 0);
    tg__buf_init(&fc.args, 0);
    if (tg__jcur_take(&c, '{') != 0)
        rc = FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(&c, &first, &k, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(k, kn, "choices")) {
            rc = seen ? FAST_BAIL : fast_choices(&c, &fc, turn, &done, text);
            seen = 1;
        } else if (known_member(k, kn))
            rc = tg__jcur_skip_any(&c);
        else /* other formats' members (method, output, ...) end it */
            rc = FAST_BAIL;
    }
    if (rc == 0 && (m != 0 || !done || tg__jcur_end(&c) != 0))
        rc = FAST_BAIL;
    tg__buf_cleanup(&fc.id);
    tg__buf_cleanup(&fc.type);
    tg__buf_cleanup(&fc.name);
    tg__buf_cleanup(&fc.args);
    tg__jcur_cleanup(&c);
    if (rc == FAST_BAIL)
        return 0;
    return rc < 0 ? rc : 1;
}

static int render(const tg_turn *turn, tg__buf *out, tg_error *err)
{
    static const char open[] = "{\"role\":\"tool\",\"tool_call_id\":";
    static const char content[] = ",\"content\":";
    tg__buf text; /* the payload text of non-string payloads, reused */
    tg__buf_init(&text, 0);
    int rc = tg__buf_append(out, "[", 1);
    for (size_t i = 0; rc == 0 && i < turn->n; i++) {
        const tg_result *r = turn->results[i];
        const char *id = turn->calls[i]->id;
        if ((i > 0 && (rc = tg__buf_append(out, ",", 1)) != 0) ||
            (rc = tg__buf_append(out, open, sizeof open - 1)) != 0 ||
            (rc = tg__json_string(out, id, strlen(id))) != 0 ||
            (rc = tg__buf_append(out, content, sizeof content - 1)) != 0)
            break;
        rc = tg__format_payload_json_string(r, out, &text);
        if (rc == 0)
            rc = tg__buf_append(out, "}", 1);
    }
    if (rc == 0)
        rc = tg__buf_append(out, "]\n", 2);
    tg__buf_cleanup(&text);
    if (rc != 0)
        return tg__error_set(err, rc, "cannot render %s results: %s",
                             FORMAT_NAME, tg_strerror(rc));
    return 0;
}

static json_t *tool_def(const json_t *t)
{
    json_t *fn = tg__format_tool_object(t, NULL, "parameters"); /* new ref */
    return fn ? json_pack("{s:s, s:o}", "type", "function", "function", fn)
              : NULL;
}

/* Tool definitions: the Chat Completions `tools` array. */
static int render_tools(const json_t *tools, tg__buf *out, tg_error *err)
{
    return tg__format_render_tool_list(tools, tool_def, NULL, FORMAT_NAME, out,
                                       err);
}

const tg__format tg__format_openai_chat = {
    .name = FORMAT_NAME,
    .detect = detect,
    .parse = parse,
    .parse_text = NULL,
    .parse_fast = parse_fast,
    .render = render,
    .render_tools = render_tools,
};
