/* SPDX-License-Identifier: MIT */
/*
 * anthropic.c - the Anthropic Messages API wire format (spec/formats.md,
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

#include "error.h"

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

/* Adds content[i], a tool_use block (borrowed), as a call. Returns 0 or
 * TG_ENOMEM. */
static int add_tool_use(tg_turn *turn, const json_t *block, size_t i)
{
    char genid[48];
    const char *id = json_string_value(json_object_get(block, "id"));
    const char *name = json_string_value(json_object_get(block, "name"));
    int missing_id = id == NULL || *id == '\0';
    if (missing_id) {
        snprintf(genid, sizeof genid, "missing-id-%zu", i);
        id = genid;
    }
    tg_call *call = tg__call_new(id, name, FORMAT_NAME);
    if (call == NULL)
        return TG_ENOMEM;

    int rc;
    const json_t *input = json_object_get(block, "input"); /* borrowed */
    if (input == NULL || json_is_null(input)) {
        /* The API always sends input; a hand-written or proxied turn for a
         * tool without parameters may leave it out. */
        json_t *empty = json_object(); /* new ref */
        rc = empty ? tg__call_set_args(call, empty) : TG_ENOMEM;
        json_decref(empty);
    } else {
        /* Anything but an object is MALFORMED_ARGUMENTS, set by the setter. */
        rc = tg__call_set_args(call, (json_t *)input);
    }
    if (rc != 0)
        goto fail;

    /* A malformed call outranks malformed arguments: it says more. */
    if (missing_id)
        rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                    "content[%zu] (tool_use) has no id (a "
                                    "non-empty string); it was given the id "
                                    "'%s'",
                                    i, genid);
    else if (name == NULL || *name == '\0')
        rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                    "tool_use '%s' has no name", id);
    if (rc != 0)
        goto fail;
    return tg__turn_add_call(turn, call);
fail:
    tg__call_free(call);
    return rc;
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

/* ------------------------------------------------------------ rendering */

/* Image types the Messages API accepts in an image block; others are
 * described in text rather than sent to be rejected. */
static int image_type_ok(const char *mime)
{
    static const char *const ok[] = {"image/jpeg", "image/png", "image/gif",
                                     "image/webp"};
    for (size_t i = 0; mime != NULL && i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(mime, ok[i]) == 0)
            return 1;
    return 0;
}

static int is_image_block(const json_t *b)
{
    return str_is(json_object_get(b, "type"), "image") &&
           json_is_string(json_object_get(b, "data")) &&
           image_type_ok(json_string_value(json_object_get(b, "mimeType")));
}

/* The API refuses empty text blocks, so they are left out. */
static int is_empty_text(const json_t *b)
{
    const json_t *t = json_object_get(b, "text"); /* borrowed */
    return str_is(json_object_get(b, "type"), "text") && json_is_string(t) &&
           json_string_length(t) == 0;
}

static int put_string(tg_buf *out, const json_t *s)
{
    return tg__format_json_string(out, json_string_value(s),
                                  json_string_length(s));
}

static int put_text_block(tg_buf *out, const char *text, size_t len)
{
    static const char open[] = "{\"type\":\"text\",\"text\":";
    int rc = tg__buf_append(out, open, sizeof open - 1);
    if (rc == 0)
        rc = tg__format_json_string(out, text, len);
    return rc == 0 ? tg__buf_append(out, "}", 1) : rc;
}

/* One MCP content block (borrowed) as an Anthropic block: text and image
 * pass through, everything else becomes a text block describing it. */
static int put_block(tg_buf *out, const json_t *b, tg_buf *scratch)
{
    if (is_image_block(b)) {
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
    return rc == 0 ? put_text_block(out, tg__buf_cstr(scratch), scratch->len)
                   : rc;
}

/* The tool_result's content: an array of blocks when the result has
 * content blocks (on failure the payload's text comes first, so the model
 * learns why), else the payload's text. */
static int put_content(tg_buf *out, const tg_result *r, tg_buf *scratch)
{
    size_t n = json_array_size(r->content), shown = 0;
    for (size_t i = 0; i < n; i++)
        shown += !is_empty_text(json_array_get(r->content, i));
    int failed = r->outcome != TG_OUTCOME_SUCCESS;
    int rc;
    if (shown == 0) {
        if (json_is_string(tg__result_payload(r)))
            return put_string(out, tg__result_payload(r));
        scratch->len = 0;
        if ((rc = tg__format_payload_text(r, scratch)) != 0)
            return rc;
        return tg__format_json_string(out, tg__buf_cstr(scratch), scratch->len);
    }
    if ((rc = tg__buf_append(out, "[", 1)) != 0)
        return rc;
    int first = 1;
    if (failed) {
        scratch->len = 0;
        if ((rc = tg__format_payload_text(r, scratch)) != 0 ||
            (rc = put_text_block(out, tg__buf_cstr(scratch), scratch->len)) !=
                0)
            return rc;
        first = 0;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *b = json_array_get(r->content, i); /* borrowed */
        if (is_empty_text(b))
            continue;
        if ((!first && (rc = tg__buf_append(out, ",", 1)) != 0) ||
            (rc = put_block(out, b, scratch)) != 0)
            return rc;
        first = 0;
    }
    return tg__buf_append(out, "]", 1);
}

static int render(const tg_turn *turn, tg_buf *out, tg_error *err)
{
    static const char open[] = "{\"type\":\"tool_result\",\"tool_use_id\":";
    static const char content[] = ",\"content\":";
    tg_buf scratch; /* payload text and block descriptions, reused */
    tg__buf_init(&scratch, 0);
    int rc = tg__buf_puts(out, "{\"role\":\"user\",\"content\":[");
    for (size_t i = 0; rc == 0 && i < turn->n; i++) {
        const tg_result *r = turn->results[i];
        const char *id = turn->calls[i]->id;
        if ((i > 0 && (rc = tg__buf_append(out, ",", 1)) != 0) ||
            (rc = tg__buf_append(out, open, sizeof open - 1)) != 0 ||
            (rc = tg__format_json_string(out, id, strlen(id))) != 0 ||
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
static int render_tools(const json_t *tools, tg_buf *out, tg_error *err)
{
    return tg__format_render_tool_list(tools, tool_def, NULL, FORMAT_NAME, out,
                                       err);
}

const tg_format tg__format_anthropic = {
    .name = FORMAT_NAME,
    .detect = detect,
    .parse = parse,
    .parse_text = NULL,
    .parse_fast = NULL,
    .render = render,
    .render_tools = render_tools,
};
