/* SPDX-License-Identifier: MIT */
/*
 * content.c - MCP-style content blocks (text, image, audio, resource_link,
 * resource) described in plain text, for renderers whose target has no block
 * of that kind: a model reading an anthropic tool_result or a gemini
 * functionResponse should still learn that an image or a file was produced,
 * and what it was, without the base64 bytes flooding its context.
 */
#include "format.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static const char *str_member(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* Bytes a base64 text of len characters decodes to (padding aware). The
 * description reports the size the tool produced, not the encoding's. */
static size_t base64_bytes(const char *s, size_t len)
{
    size_t pad = 0;
    while (len > 0 && pad < 2 && s[len - 1] == '=') {
        len--;
        pad++;
    }
    return len / 4 * 3 + (len % 4 > 1 ? len % 4 - 1 : 0);
}

/* "[KIND: MIME, N bytes; not shown: this format cannot carry WHAT]" for a
 * block carrying base64 `member`: the model learns what was produced, and
 * that its absence is the format's, not the tool's. */
static int describe_binary(const json_t *block, const char *kind,
                           const char *what, const char *member, tg__buf *out)
{
    const json_t *data = json_object_get(block, member); /* borrowed */
    const char *mime = str_member(block, "mimeType");
    if (!json_is_string(data))
        return tg__buf_printf(out, "[%s: %s]", kind,
                              mime ? mime : "unknown type");
    return tg__buf_printf(
        out, "[%s: %s, %zu bytes; not shown: this format cannot carry %s]",
        kind, mime ? mime : "unknown type",
        base64_bytes(json_string_value(data), json_string_length(data)), what);
}

int tg__format_image_type_ok(const char *mime)
{
    static const char *const ok[] = {"image/jpeg", "image/png", "image/gif",
                                     "image/webp"};
    for (size_t i = 0; mime != NULL && i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(mime, ok[i]) == 0)
            return 1;
    return 0;
}

int tg__format_is_image_block(const json_t *b)
{
    return json_is_string(json_object_get(b, "data")) &&
           strcmp(str_member(b, "type") ? str_member(b, "type") : "",
                  "image") == 0 &&
           tg__format_image_type_ok(str_member(b, "mimeType"));
}

int tg__format_is_empty_text(const json_t *b)
{
    const json_t *t = json_object_get(b, "text"); /* borrowed */
    const char *type = str_member(b, "type");
    return type != NULL && strcmp(type, "text") == 0 && json_is_string(t) &&
           json_string_length(t) == 0;
}

int tg__format_block_text(const json_t *block, tg__buf *out)
{
    const char *type = str_member(block, "type");
    if (type == NULL)
        return tg__buf_puts(out, "[content block without a type]");
    if (strcmp(type, "text") == 0) {
        const json_t *text = json_object_get(block, "text"); /* borrowed */
        if (!json_is_string(text))
            return tg__buf_puts(out, "[text content block without text]");
        return tg__buf_append(out, json_string_value(text),
                              json_string_length(text));
    }
    if (strcmp(type, "image") == 0)
        return describe_binary(block, type, "images", "data", out);
    if (strcmp(type, "audio") == 0)
        return describe_binary(block, type, "audio", "data", out);
    if (strcmp(type, "resource_link") == 0) {
        const char *uri = str_member(block, "uri");
        const char *name = str_member(block, "name");
        const char *mime = str_member(block, "mimeType");
        int rc =
            tg__buf_printf(out, "[resource link: %s", uri ? uri : "(no uri)");
        if (rc == 0 && name != NULL)
            rc = tg__buf_printf(out, " \"%s\"", name);
        if (rc == 0 && mime != NULL)
            rc = tg__buf_printf(out, " (%s)", mime);
        return rc == 0 ? tg__buf_puts(out, "]") : rc;
    }
    if (strcmp(type, "resource") == 0) {
        /* An embedded resource: its text is what the model needs. */
        const json_t *res = json_object_get(block, "resource"); /* borrowed */
        const char *uri = str_member(res, "uri");
        const json_t *text = json_object_get(res, "text"); /* borrowed */
        if (json_is_string(text)) {
            int rc =
                tg__buf_printf(out, "[resource %s]\n", uri ? uri : "(no uri)");
            return rc == 0 ? tg__buf_append(out, json_string_value(text),
                                            json_string_length(text))
                           : rc;
        }
        char kind[300];
        snprintf(kind, sizeof kind, "resource %.256s", uri ? uri : "(no uri)");
        return describe_binary(res, kind, "binary resources", "blob", out);
    }
    return tg__buf_printf(out, "[%.64s content block]", type);
}

int tg__format_content_text(const json_t *content, tg__buf *out)
{
    int rc = 0;
    size_t start = out->len;
    for (size_t i = 0; rc == 0 && i < json_array_size(content); i++) {
        size_t mark = out->len;
        if (mark > start)
            rc = tg__buf_append(out, "\n", 1);
        size_t before = out->len;
        if (rc == 0)
            rc = tg__format_block_text(json_array_get(content, i), out);
        /* An empty text block adds nothing, not even a separator. */
        if (rc == 0 && out->len == before && out->len > mark) {
            out->len = mark;
            out->data[mark] = '\0';
        }
    }
    return rc;
}

int tg__format_put_typed_text(tg__buf *out, const char *type, const char *text,
                              size_t len)
{
    int rc = tg__buf_puts(out, "{\"type\":");
    if (rc == 0)
        rc = tg__json_string(out, type, strlen(type));
    if (rc == 0)
        rc = tg__buf_puts(out, ",\"text\":");
    if (rc == 0)
        rc = tg__json_string(out, text, len);
    return rc == 0 ? tg__buf_append(out, "}", 1) : rc;
}

int tg__format_put_text_block(tg__buf *out, const char *text, size_t len)
{
    return tg__format_put_typed_text(out, "text", text, len);
}

int tg__format_put_blocks(tg__buf *out, const tg_result *r,
                          tg__format_block_fn block, tg__format_text_fn text,
                          tg__buf *scratch)
{
    size_t n = json_array_size(r->content), shown = 0;
    for (size_t i = 0; i < n; i++)
        shown += !tg__format_is_empty_text(json_array_get(r->content, i));
    if (shown == 0)
        return 1;
    bool wrap = r->untrusted && r->outcome == TG_OUTCOME_SUCCESS;
    tg__buf tail;
    tg__buf_init(&tail, 0);
    int rc = tg__buf_append(out, "[", 1);
    bool first = true;
    if (rc == 0 && (wrap || r->outcome != TG_OUTCOME_SUCCESS)) {
        /* the envelope's opening tag, or why the call failed (itself in
         * the envelope when untrusted) */
        scratch->len = 0;
        rc = wrap ? tg__envelope_blocks(r, r->content, scratch, &tail)
                  : tg__format_payload_text(r, scratch);
        if (rc == 0)
            rc = text(out, tg__buf_cstr(scratch), scratch->len);
        first = false;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const json_t *b = json_array_get(r->content, i); /* borrowed */
        if (tg__format_is_empty_text(b))
            continue;
        if (!first)
            rc = tg__buf_append(out, ",", 1);
        if (rc == 0)
            rc = block(out, b, scratch);
        first = false;
    }
    if (rc == 0 && wrap && (rc = tg__buf_append(out, ",", 1)) == 0)
        rc = text(out, tg__buf_cstr(&tail), tail.len);
    tg__buf_cleanup(&tail);
    return rc != 0 ? rc : tg__buf_append(out, "]", 1);
}
