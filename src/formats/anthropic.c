/* SPDX-License-Identifier: MIT */
/*
 * anthropic.c - the Anthropic Messages API wire format (docs/formats.md,
 * "anthropic"): reads the "tool_use" content blocks of a Messages API
 * response or an assistant message, or of the last assistant message of a
 * messages array (only the blocks no later "tool_result" block answers), and
 * renders results as the one user message of "tool_result" blocks the model
 * expects next.
 *
 * Only client tools are read: "server_tool_use" and "mcp_tool_use" blocks
 * are run by Anthropic's side and answered there, so they are not calls.
 * A problem confined to one tool_use block (no id, no name, an input that is
 * not an object) never fails the parse: the call carries a pre-run error
 * (MALFORMED_CALL or MALFORMED_ARGUMENTS) and the other calls still run.
 */
#include "format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "error.h"
#include "json_fast.h"

#define FORMAT_NAME "anthropic"
#define EXPECTED_SHAPE                                                         \
    "expected an Anthropic Messages API response or assistant message "        \
    "(content blocks of type \"tool_use\"), or a messages array"

static int str_is(const json_t *v, const char *s)
{
    const char *t = json_string_value(v);
    return t != NULL && strcmp(t, s) == 0;
}

static int has_role(const json_t *msg, const char *role)
{
    return str_is(json_object_get(msg, "role"), role);
}

/* Whether content (borrowed) is an array holding a block of `type`. */
static int has_block(const json_t *content, const char *type)
{
    size_t n = json_array_size(content);
    for (size_t i = 0; i < n; i++)
        if (str_is(json_object_get(json_array_get(content, i), "type"), type))
            return 1;
    return 0;
}

/* Scores: a "tool_use" block (or a Messages API response's stop_reason) is
 * Anthropic's alone and outranks every other format's shape; a bare
 * assistant message with content blocks could also be an OpenAI message
 * with content parts, so it scores below openai-chat's 2. */
static int detect(const json_t *doc)
{
    if (json_is_object(doc)) {
        const json_t *content = json_object_get(doc, "content"); /* borrowed */
        const json_t *role = json_object_get(doc, "role");       /* borrowed */
        if (!json_is_array(content))
            return 0;
        if (role != NULL && !has_role(doc, "assistant"))
            return 0;
        if (has_block(content, "tool_use"))
            return 6;
        if (str_is(json_object_get(doc, "type"), "message") &&
            json_object_get(doc, "stop_reason") != NULL)
            return 6;
        return role != NULL ? 1 : 0;
    }
    if (json_is_array(doc)) {
        size_t n = json_array_size(doc);
        int blocks = 0;
        for (size_t i = 0; i < n; i++) {
            const json_t *m = json_array_get(doc, i); /* borrowed */
            if (!json_is_string(json_object_get(m, "role")))
                return 0;
            const json_t *c = json_object_get(m, "content"); /* borrowed */
            if (!blocks && json_is_array(c))
                blocks =
                    has_block(c, "tool_use") || has_block(c, "tool_result");
        }
        return blocks ? 6 : 0;
    }
    return 0;
}

int tg__anthropic_call(const tg__anthropic_wire *w, tg_call **out)
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
    if (missing_id)
        rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                    "content[%zu] (tool_use) has no id (a "
                                    "non-empty string); it was given the id "
                                    "'%s'",
                                    w->pos, genid);
    else if (w->name == NULL || *w->name == '\0')
        rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                    "tool_use '%s' has no name", id);
    if (rc != 0)
        goto fail;
    *out = call;
    return 0;
fail:
    tg__call_free(call);
    return rc;
}

/* Adds content[i], a tool_use block (borrowed), as a call. Returns 0 or
 * TG_ENOMEM. */
static int add_tool_use(tg_turn *turn, const json_t *block, size_t i)
{
    tg__anthropic_wire w = {
        .pos = i,
        .id = json_string_value(json_object_get(block, "id")),
        .name = json_string_value(json_object_get(block, "name")),
        /* The API always sends input; a hand-written or proxied turn for a
         * tool without parameters may leave it out. */
        .set_args = tg__args_from_object_value,
        .args = json_object_get(block, "input"), /* borrowed */
    };
    tg_call *call;
    int rc = tg__anthropic_call(&w, &call);
    return rc != 0 ? rc : tg__turn_add_call(turn, call);
}

/* Adds the tool_use blocks of an assistant message (borrowed) that `ans`
 * does not list. pointer names the message for errors. */
static int parse_message(tg_turn *turn, const json_t *msg, const char *pointer,
                         const tg__idset *ans, tg_error *err)
{
    const json_t *content = json_object_get(msg, "content"); /* borrowed */
    if (json_is_string(content))
        return 0; /* a plain text answer: a turn without calls */
    if (!json_is_array(content)) {
        char ptr[128];
        snprintf(ptr, sizeof ptr, "%s/content", pointer);
        tg__error_pointer(err, ptr);
        return tg__error_set(err, TG_EFORMAT,
                             "%s/content is %s; expected an array of content "
                             "blocks or a string",
                             pointer,
                             content == NULL ? "missing" : "not an array");
    }
    size_t n = json_array_size(content);
    for (size_t i = 0; i < n; i++) {
        const json_t *b = json_array_get(content, i); /* borrowed */
        /* Text, thinking, server tool and other blocks are not calls. */
        if (!str_is(json_object_get(b, "type"), "tool_use"))
            continue;
        if (tg__idset_has(ans, json_string_value(json_object_get(b, "id"))))
            continue;
        int rc = add_tool_use(turn, b, i);
        if (rc != 0)
            return tg__error_set(err, rc, "out of memory");
    }
    return 0;
}

/* Counts the tool_use_ids of "tool_result" blocks in messages[first..];
 * stores them (borrowed) in ids when it is not NULL. */
static size_t count_results(const json_t *doc, size_t first, const char **ids)
{
    size_t cnt = 0;
    for (size_t i = first; i < json_array_size(doc); i++) {
        const json_t *c =
            json_object_get(json_array_get(doc, i), "content"); /* borrowed */
        for (size_t j = 0; j < json_array_size(c); j++) {
            const json_t *b = json_array_get(c, j); /* borrowed */
            const char *id =
                json_string_value(json_object_get(b, "tool_use_id"));
            if (!str_is(json_object_get(b, "type"), "tool_result") ||
                id == NULL)
                continue;
            if (ids != NULL)
                ids[cnt] = id;
            cnt++;
        }
    }
    return cnt;
}

static int parse_messages(tg_turn *turn, const json_t *doc, tg_error *err)
{
    size_t n = json_array_size(doc);
    size_t last = n; /* index of the last assistant message, n when none */
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
        if (has_role(m, "assistant"))
            last = i;
    }
    if (last == n)
        return 0; /* nothing has been asked of the tools yet */

    /* Anthropic wants the results in the very next user message, but a
     * result anywhere later still answers its call: running the tool again
     * would repeat its effects. */
    tg__idset ans = {NULL, count_results(doc, last + 1, NULL)};
    if (ans.n > 0) {
        ans.ids = malloc(ans.n * sizeof *ans.ids);
        if (ans.ids == NULL)
            return tg__error_set(err, TG_ENOMEM, "out of memory");
        count_results(doc, last + 1, ans.ids);
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
                                "the document is not an object or an array; %s",
                                EXPECTED_SHAPE);
    const json_t *type = json_object_get(doc, "type"); /* borrowed */
    if (str_is(type, "error")) {
        /* What the API answers instead of a message: say so plainly. */
        const json_t *e = json_object_get(doc, "error"); /* borrowed */
        const char *msg = json_string_value(json_object_get(e, "message"));
        tg__error_pointer(err, "/error");
        return tg__error_set(
            err, TG_EFORMAT,
            "the document is an Anthropic API error (%.64s: %.200s), not a "
            "message",
            json_string_value(json_object_get(e, "type"))
                ? json_string_value(json_object_get(e, "type"))
                : "error",
            msg ? msg : "no message");
    }
    if (type != NULL && !str_is(type, "message"))
        return tg__format_error(
            err, "/type", "an object of type '%.64s'; expected a message",
            json_is_string(type) ? json_string_value(type) : "(not a string)");
    const json_t *role = json_object_get(doc, "role"); /* borrowed */
    if (role != NULL && !has_role(doc, "assistant"))
        return tg__format_error(err, "/role",
                                "a message with role '%.64s'; expected an "
                                "assistant message",
                                json_is_string(role) ? json_string_value(role)
                                                     : "(not a string)");
    if (json_object_get(doc, "content") == NULL)
        return tg__format_error(err, "", "an object without content; %s",
                                EXPECTED_SHAPE);
    return parse_message(turn, doc, "", NULL, err);
}

/* ------------------------------------------------------------ fast path */

/* The fast path reads the shape of nearly every real turn - a Messages API
 * response whose tool_use blocks each have an id, a name and an input
 * object in compact form (as the API sends it) - straight from the text,
 * without building the document (most of the parse time of a large turn
 * went into building and freeing it). Anything else, including duplicate
 * keys on the path it reads, makes it give up (FAST_BAIL), and the document
 * path, which handles every shape and reports every error, runs instead.
 * Messages arrays always take the document path. */
#define FAST_BAIL TG_JCUR_BAIL

/* Whether the key k[0..kn) is the string literal lit (no strlen per test:
 * every member of every block is tested against several keys). */
/* Top-level members of other formats (choices and tool_calls: openai-chat;
 * candidates and parts: gemini, the only one that can score 6 too; output:
 * openai-responses; method and jsonrpc: mcp; tool: toolgate). A message has
 * none of them; the fast path gives up on them rather than judge which
 * format wins. */
static int foreign_key(const char *k, size_t kn)
{
    static const char *const keys[] = {
        "choices", "tool_calls", "candidates", "parts",
        "output",  "method",     "jsonrpc",    "tool",
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (tg__jcur_key_is(k, kn, keys[i]))
            return 1;
    return 0;
}

/* Members of a response that hold objects the fast path does not read. */
static int message_container(const char *k, size_t kn)
{
    return TG_JCUR_KEY_IS(k, kn, "usage") ||
           TG_JCUR_KEY_IS(k, kn, "container") ||
           TG_JCUR_KEY_IS(k, kn, "context_management");
}

typedef struct fast_block {
    tg__jcur_str id, name;
    const char *input; /* the input's text, in the document */
    size_t input_len;
    int has_type, is_tool_use, has_input;
    tg__buf names; /* id and name, each NUL-terminated */
} fast_block;

/* Reads a string member that is only compared with `want`; sets *seen and
 * *is. 0 or FAST_BAIL. */
static int fast_str_is(tg__jcur *c, const char *want, int *seen, int *is)
{
    const char *s;
    size_t n;
    if (*seen || tg__jcur_string(c, &s, &n) != 0)
        return FAST_BAIL;
    *seen = 1;
    *is = n == strlen(want) && memcmp(s, want, n) == 0;
    return 0;
}

/* Adds the tool_use block just read as a call, as add_tool_use does for a
 * plain block. */
static int fast_add_call(fast_block *b, tg_turn *turn)
{
    /* An input left out or null stands for {} (see add_tool_use). */
    const char *input = b->has_input ? b->input : "{}";
    size_t input_len = b->has_input ? b->input_len : 2;
    b->names.len = 0;
    if (tg__buf_reserve(&b->names, b->id.n + b->name.n + 2) != 0)
        return TG_ENOMEM;
    char *id = b->names.data, *name = id + b->id.n + 1;
    memcpy(id, b->id.s, b->id.n);
    id[b->id.n] = '\0';
    memcpy(name, b->name.s, b->name.n);
    name[b->name.n] = '\0';
    tg_call *call = NULL;
    int rc = tg__call_new_args_object(id, name, FORMAT_NAME, input, input_len,
                                      &call);
    if (rc != 0)
        return rc == 1 ? FAST_BAIL : rc; /* not compact: the general path */
    return tg__turn_add_call(turn, call);
}

/* Deepest nesting of an input object the fast path takes (as the JSON
 * cursor's), far below jansson's limit for the whole document. */
#define FAST_MAX_DEPTH 512

/* The end of the object starting at p (a '{'): brackets are matched outside
 * strings, and nothing else is judged; whoever takes the span validates it
 * (a valid object ends at the one bracket the scan finds). NULL when it
 * does not end within the text or nests deeper than FAST_MAX_DEPTH. */
static const char *object_end(const char *p, const char *end)
{
    int depth = 0;
    while (p < end) {
        char ch = *p++;
        if (ch == '"') {
            for (;;) {
                const char *q = memchr(p, '"', (size_t)(end - p));
                if (q == NULL)
                    return NULL;
                const char *bs = q; /* the backslashes before the quote */
                while (bs > p && bs[-1] == '\\')
                    bs--;
                p = q + 1;
                if (((q - bs) & 1) == 0)
                    break; /* not escaped: the string ends */
            }
        } else if (ch == '{' || ch == '[') {
            if (++depth > FAST_MAX_DEPTH)
                return NULL;
        } else if (ch == '}' || ch == ']') {
            if (--depth == 0)
                return p;
        }
    }
    return NULL;
}

/* Checks that text[0..len), an input span found by object_end, is one
 * plainly valid value: 0 or FAST_BAIL. */
static int fast_validate(const char *text, size_t len)
{
    tg__jcur sub;
    tg__jcur_init(&sub, text, len);
    int rc =
        tg__jcur_skip(&sub) == 0 && tg__jcur_end(&sub) == 0 ? 0 : FAST_BAIL;
    tg__jcur_cleanup(&sub);
    return rc;
}

/* Reads a block's input. An object is only delimited here (object_end):
 * the arguments reader that takes a tool_use block's input validates it
 * anyway, so reading it twice would be wasted; other blocks' inputs are
 * validated with fast_validate. Other values are read and validated. */
static int fast_input(tg__jcur *c, fast_block *b)
{
    int next = tg__jcur_peek(c);
    const char *start = (const char *)c->p;
    if (next == '{') {
        const char *end = object_end(start, (const char *)c->end);
        if (end == NULL)
            return FAST_BAIL;
        c->p = (const unsigned char *)end;
        b->has_input = 1;
        b->input = start;
        b->input_len = (size_t)(end - start);
        return 0;
    }
    if (tg__jcur_skip(c) != 0)
        return FAST_BAIL;
    if (next == 'n') {
        b->has_input = 2; /* null: {} on a tool_use block */
        b->input = "{}";
        b->input_len = 2;
    } else
        b->has_input = 3; /* not an object */
    return 0;
}

/* One content block: a tool_use block becomes a call, other blocks are
 * passed over. Sets *tool_use when it was a tool_use block. */
static int fast_block_read(tg__jcur *c, fast_block *b, tg_turn *turn,
                           int *tool_use)
{
    const char *k;
    size_t kn;
    int first = 1, m = -1, rc = 0;
    if (tg__jcur_take(c, '{') != 0)
        return FAST_BAIL;
    b->id.seen = b->name.seen = 0;
    b->has_type = b->is_tool_use = b->has_input = 0;
    while (rc == 0 && (m = tg__jcur_member(c, &first, &k, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(k, kn, "type"))
            rc = fast_str_is(c, "tool_use", &b->has_type, &b->is_tool_use);
        else if (TG_JCUR_KEY_IS(k, kn, "id"))
            rc = tg__jcur_str_read(c, &b->id);
        else if (TG_JCUR_KEY_IS(k, kn, "name"))
            rc = tg__jcur_str_read(c, &b->name);
        else if (TG_JCUR_KEY_IS(k, kn, "input")) {
            if (b->has_input)
                return FAST_BAIL;
            rc = fast_input(c, b);
        } else
            rc = tg__jcur_skip_any(c);
    }
    if (rc != 0)
        return rc;
    if (m != 0)
        return FAST_BAIL;
    /* Blocks of other types (or none) are not calls, as in parse_message;
     * an input object the scan passed over is validated here. */
    if (!b->is_tool_use)
        return b->has_input == 1 ? fast_validate(b->input, b->input_len) : 0;
    *tool_use = 1;
    if (!b->id.seen || b->id.n == 0 || !b->name.seen || b->name.n == 0 ||
        b->has_input == 3)
        return FAST_BAIL; /* per-call problems: the document path says them */
    return fast_add_call(b, turn);
}

static int fast_content(tg__jcur *c, fast_block *b, tg_turn *turn,
                        int *tool_use)
{
    int first = 1, e = -1, rc = 0;
    if (tg__jcur_take(c, '[') != 0)
        return FAST_BAIL;
    while (rc == 0 && (e = tg__jcur_element(c, &first)) == 1)
        rc = fast_block_read(c, b, turn, tool_use);
    return rc != 0 ? rc : e == 0 ? 0 : FAST_BAIL;
}

static int parse_fast(tg_turn *turn, const char *text, size_t len)
{
    tg__jcur c;
    fast_block b;
    const char *k;
    size_t kn;
    int first = 1, m = -1, rc = 0, has_content = 0, tool_use = 0;
    int has_type = 0, is_message = 0, has_role = 0, is_assistant = 0;
    int has_stop = 0;
    tg__jcur_init(&c, text, len);
    memset(&b, 0, sizeof b);
    tg__buf_init(&b.id.copy, 0);
    tg__buf_init(&b.name.copy, 0);
    tg__buf_init(&b.names, 0);
    if (tg__jcur_take(&c, '{') != 0)
        rc = FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(&c, &first, &k, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(k, kn, "content")) {
            rc =
                has_content ? FAST_BAIL : fast_content(&c, &b, turn, &tool_use);
            has_content = 1;
        } else if (TG_JCUR_KEY_IS(k, kn, "type"))
            rc = fast_str_is(&c, "message", &has_type, &is_message);
        else if (TG_JCUR_KEY_IS(k, kn, "role"))
            rc = fast_str_is(&c, "assistant", &has_role, &is_assistant);
        else if (TG_JCUR_KEY_IS(k, kn, "stop_reason")) {
            rc = tg__jcur_skip_scalar(&c);
            has_stop = 1;
        } else if (foreign_key(k, kn))
            rc = FAST_BAIL;
        else if (message_container(k, kn))
            rc = tg__jcur_skip_any(&c);
        else /* other formats' members end it (see foreign_key) */
            rc = tg__jcur_skip_scalar(&c);
    }
    /* What parse accepts (type message or none, role assistant or none,
     * content an array), and only what detection scores 6: a tool_use
     * block, or a message with a stop_reason. */
    if (rc == 0 && (m != 0 || tg__jcur_end(&c) != 0 || !has_content ||
                    (has_type && !is_message) || (has_role && !is_assistant) ||
                    !(tool_use || (is_message && has_stop))))
        rc = FAST_BAIL;
    tg__buf_cleanup(&b.id.copy);
    tg__buf_cleanup(&b.name.copy);
    tg__buf_cleanup(&b.names);
    tg__jcur_cleanup(&c);
    if (rc == FAST_BAIL)
        return 0;
    return rc < 0 ? rc : 1;
}

/* ------------------------------------------------------------ rendering */

static int put_string(tg__buf *out, const json_t *s)
{
    return tg__json_string(out, json_string_value(s), json_string_length(s));
}

/* One MCP content block (borrowed) as an Anthropic block: text and image
 * pass through, everything else becomes a text block describing it. */
static int put_block(tg__buf *out, const json_t *b, tg__buf *scratch)
{
    if (tg__format_is_image_block(b)) {
        static const char open[] =
            "{\"type\":\"image\",\"source\":{\"type\":\"base64\","
            "\"media_type\":";
        int rc = tg__buf_append(out, open, sizeof open - 1);
        if (rc == 0)
            rc = put_string(out, json_object_get(b, "mimeType"));
        if (rc == 0)
            rc = tg__buf_puts(out, ",\"data\":");
        if (rc == 0)
            rc = put_string(out, json_object_get(b, "data"));
        return rc == 0 ? tg__buf_append(out, "}}", 2) : rc;
    }
    scratch->len = 0;
    int rc = tg__format_block_text(b, scratch);
    return rc == 0 ? tg__format_put_text_block(out, tg__buf_cstr(scratch),
                                               scratch->len)
                   : rc;
}

/* The tool_result's content: an array of blocks when the result has
 * content blocks (tg__format_put_blocks: on failure the payload's text comes
 * first, so the model learns why; an untrusted success is enveloped), else
 * the payload's text. */
static int put_content(tg__buf *out, const tg_result *r, tg__buf *scratch)
{
    int rc = tg__format_put_blocks(out, r, put_block, tg__format_put_text_block,
                                   scratch);
    return rc == 1 ? tg__format_payload_json_string(r, out, scratch) : rc;
}

static int render(const tg_turn *turn, tg__buf *out, tg_error *err)
{
    static const char open[] = "{\"type\":\"tool_result\",\"tool_use_id\":";
    static const char content[] = ",\"content\":";
    tg__buf scratch; /* payload text and block descriptions, reused */
    tg__buf_init(&scratch, 0);
    int rc = tg__buf_puts(out, "{\"role\":\"user\",\"content\":[");
    for (size_t i = 0; rc == 0 && i < turn->n; i++) {
        const tg_result *r = turn->results[i];
        const char *id = turn->calls[i]->id;
        if ((i > 0 && (rc = tg__buf_append(out, ",", 1)) != 0) ||
            (rc = tg__buf_append(out, open, sizeof open - 1)) != 0 ||
            (rc = tg__json_string(out, id, strlen(id))) != 0 ||
            (rc = tg__buf_append(out, content, sizeof content - 1)) != 0 ||
            (rc = put_content(out, r, &scratch)) != 0)
            break;
        rc = tg__buf_puts(out, r->outcome == TG_OUTCOME_SUCCESS
                                   ? ",\"is_error\":false}"
                                   : ",\"is_error\":true}");
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
    return tg__format_tool_object(t, NULL, "input_schema");
}

/* Tool definitions: [{"name","description","input_schema"}]. */
static int render_tools(const json_t *tools, tg__buf *out, tg_error *err)
{
    return tg__format_render_tool_list(tools, tool_def, NULL, FORMAT_NAME, out,
                                       err);
}

const tg__format tg__format_anthropic = {
    .name = FORMAT_NAME,
    .detect = detect,
    .parse = parse,
    .parse_text = NULL,
    .parse_fast = parse_fast,
    .render = render,
    .render_tools = render_tools,
};
