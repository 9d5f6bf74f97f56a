/* SPDX-License-Identifier: MIT */
/*
 * mcp_result.c - the MCP CallToolResult of one result record, written
 * straight into a buffer: the one writer behind `toolgate run --to mcp`
 * (mcp.c) and the MCP server's tools/call answers (src/mcp/result.c), so
 * both show a model the same text.
 *
 * The object is written byte for byte as jansson's compact dump of the
 * equivalent object would be, without building it: building and dumping
 * cost more than the parse of a large batch. Its members, in this order:
 *   "content"            the result's content blocks (a command tool's
 *                        mcp-content), else one text block with the text
 *                        every other format renders for the result;
 *   "structuredContent"  the payload convention of an outcome other than
 *                        success ({"error":{…}}, {"timeout":{…}}, …), and
 *                        a success's payload when the caller asks for it;
 *   "isError"            true for every outcome but success;
 *   "_meta"              {"io.toolgate/result":{"outcome","execution",
 *                        "durationMs","callId"}} plus the caller's members;
 *   "resultType"         "complete", when the caller asks for it.
 * The _meta key follows MCP's naming rule for _meta keys: a reverse-DNS
 * prefix that is not reserved for MCP, then a name.
 */
#include "format.h"
#include "utf8.h"

#include <math.h>
#include <string.h>

/* Appends the text s[0..n) as one JSON string. A tool's text may hold
 * bytes that are not UTF-8 (after a lossy conversion); each becomes U+FFFD
 * itself, not its escape, as when the text went through a jansson string. */
static int put_text(tg__buf *out, const char *s, size_t n, tg__buf *scratch)
{
    const unsigned char *u = (const unsigned char *)s;
    if (tg__utf8_valid(u, n))
        return tg__json_string(out, s, n);
    scratch->len = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n;) {
        size_t seq = u[i] < 0x80 ? 1 : tg__utf8_seq(u + i, n - i);
        rc = seq > 0 ? tg__buf_append(scratch, s + i, seq)
                     : tg__buf_append(scratch, "\xEF\xBF\xBD", 3);
        i += seq > 0 ? seq : 1;
    }
    return rc != 0 ? rc
                   : tg__json_string(out, tg__buf_cstr(scratch), scratch->len);
}

/* For tg__format_put_blocks: a block as it is. */
static int put_block(tg__buf *out, const json_t *b, tg__buf *scratch)
{
    (void)scratch;
    return tg__json_dump(b, out);
}

/* ,{"type":"resource_link",...} naming the artifact a spooled result's
 * output went to (toolgate://artifacts/<id>, the server's resources/read
 * returns it), so clients that show resources can open it; nothing for a
 * result without one. */
static int put_artifact_link(tg__buf *out, const tg_result *r)
{
    /* the id is the spool's own (art_ and hex digits): no escaping */
    const char *id =
        json_string_value(json_object_get(r->artifact, "id")); /* borrowed */
    if (id == NULL)
        return 0;
    const char *mt =
        json_string_value(json_object_get(r->artifact, "media_type"));
    json_t *bytes = json_object_get(r->artifact, "bytes"); /* borrowed */
    int rc = tg__buf_printf(out,
                            ",{\"type\":\"resource_link\",\"uri\":"
                            "\"toolgate://artifacts/%s\",\"name\":\"%s\"",
                            id, id);
    if (rc == 0 && mt != NULL) {
        rc = tg__buf_puts(out, ",\"mimeType\":");
        if (rc == 0)
            rc = tg__json_dump(json_object_get(r->artifact, "media_type"), out);
    }
    if (rc == 0 && json_is_integer(bytes))
        rc = tg__buf_printf(out, ",\"size\":%" JSON_INTEGER_FORMAT,
                            json_integer_value(bytes));
    return rc != 0 ? rc : tg__buf_append(out, "}", 1);
}

/* The "content" of a CallToolResult: the result's blocks, else one text
 * block holding the payload's text (and a link to its artifact when the
 * output was spooled). */
static int put_content(tg__buf *out, const tg_result *r, tg__buf *text,
                       tg__buf *scratch)
{
    static const char open[] = "[{\"type\":\"text\",\"text\":";
    const char *known = r->payload_json_cache;
    const json_t *p; /* borrowed */
    int rc;
    if (json_is_array(r->content)) {
        /* the blocks as they are; around them the trust envelope's tags
         * as text blocks when untrusted (tg__format_put_blocks) */
        rc = r->untrusted
                 ? tg__format_put_blocks(out, r, put_block,
                                         tg__format_put_text_block, scratch)
                 : tg__json_dump(r->content, out);
        if (rc != 1)
            return rc;
    }
    if ((rc = tg__buf_append(out, open, sizeof open - 1)) != 0)
        return rc;
    if (r->untrusted || tg__result_output_part(r) != NULL) {
        /* a tool's output (in the trust envelope when untrusted), or what
         * a failed command printed, as text */
        text->len = 0;
        if ((rc = tg__format_payload_text(r, text)) == 0)
            rc = put_text(out, tg__buf_cstr(text), text->len, scratch);
    } else if (known != NULL && known[0] != '"') {
        /* The payload's compact text is the text the model reads. */
        rc = put_text(out, known, strlen(known), scratch);
    } else if ((p = tg__result_payload(r)) == NULL)
        rc = TG_ENOMEM;
    else if (json_is_string(p))
        rc =
            put_text(out, json_string_value(p), json_string_length(p), scratch);
    else {
        text->len = 0;
        if ((rc = tg__format_payload_text(r, text)) == 0)
            rc = put_text(out, tg__buf_cstr(text), text->len, scratch);
    }
    if (rc == 0)
        rc = tg__buf_append(out, "}", 1);
    if (rc == 0)
        rc = put_artifact_link(out, r);
    return rc != 0 ? rc : tg__buf_append(out, "]", 1);
}

/* ,"structuredContent":PAYLOAD when the result carries one: the payload of
 * every outcome but success (an object: the payload convention) unless its
 * tool declares an outputSchema, and a success's payload when flags ask
 * for it. */
static int put_structured(tg__buf *out, const tg_result *r, unsigned flags)
{
    static const char key[] = ",\"structuredContent\":";
    const char *known = r->payload_json_cache;
    const json_t *p = NULL; /* borrowed */
    int want;
    if (r->outcome != TG_OUTCOME_SUCCESS)
        want = !(flags & TG_MCP_CTR_DECLARED);
    else if (tg__result_content_payload(r))
        want = 0; /* {"content":[…]} of content blocks: they are the content */
    else if (flags & TG_MCP_CTR_STRUCTURED_ANY)
        want = 1;
    else if (flags & TG_MCP_CTR_STRUCTURED)
        want = known != NULL ? known[0] == '{'
                             : json_is_object(p = tg__result_payload(r));
    else
        want = 0;
    if (!want)
        return 0;
    int rc = tg__buf_append(out, key, sizeof key - 1);
    if (rc != 0)
        return rc;
    if (known != NULL)
        return tg__buf_puts(out, known);
    if (p == NULL && (p = tg__result_payload(r)) == NULL)
        return TG_ENOMEM;
    /* Before 2026-07-28 structuredContent is an object: every outcome's
     * payload but a success's is one, and a success's is written only
     * when it is one (TG_MCP_CTR_STRUCTURED) or any value may be. */
    return tg__json_dump(p, out);
}

int tg__format_mcp_call_tool_result(tg__buf *out, const tg_result *r,
                                    unsigned flags, const char *meta_members,
                                    tg__buf *text, tg__buf *scratch)
{
    static const char open[] = "{\"content\":";
    static const char ok[] = ",\"isError\":false";
    static const char failed[] = ",\"isError\":true";
    static const char meta[] = ",\"_meta\":{";
    static const char head[] = "\"io.toolgate/result\":{\"outcome\":\"";
    static const char exec[] = "\",\"execution\":\"";
    static const char dur[] = "\",\"durationMs\":";
    static const char call_id[] = ",\"callId\":";
    static const char complete[] = ",\"resultType\":\"complete\"}";
    int rc;
    if ((rc = tg__buf_append(out, open, sizeof open - 1)) != 0 ||
        (rc = put_content(out, r, text, scratch)) != 0 ||
        (rc = put_structured(out, r, flags)) != 0)
        return rc;
    int success = r->outcome == TG_OUTCOME_SUCCESS;
    double ms =
        isfinite(r->duration_ms) && r->duration_ms > 0 ? r->duration_ms : 0;
    if ((rc = tg__buf_append(out, success ? ok : failed,
                             success ? sizeof ok - 1 : sizeof failed - 1)) !=
            0 ||
        (rc = tg__buf_append(out, meta, sizeof meta - 1)) != 0)
        return rc;
    if (meta_members != NULL && meta_members[0] != '\0' &&
        ((rc = tg__buf_puts(out, meta_members)) != 0 ||
         (rc = tg__buf_append(out, ",", 1)) != 0))
        return rc;
    if ((rc = tg__buf_append(out, head, sizeof head - 1)) != 0 ||
        (rc = tg__buf_puts(out, tg_outcome_name(r->outcome))) != 0 ||
        (rc = tg__buf_append(out, exec, sizeof exec - 1)) != 0 ||
        (rc = tg__buf_puts(out, tg_execution_name(r->execution))) != 0 ||
        (rc = tg__buf_append(out, dur, sizeof dur - 1)) != 0 ||
        (rc = tg__json_ms(out, ms)) != 0 ||
        (rc = tg__buf_append(out, call_id, sizeof call_id - 1)) != 0 ||
        (rc = tg__json_string(out, r->id, strlen(r->id))) != 0 ||
        (rc = tg__buf_append(out, "}}", 2)) != 0)
        return rc;
    if (flags & TG_MCP_CTR_RESULT_TYPE)
        return tg__buf_append(out, complete, sizeof complete - 1);
    return tg__buf_append(out, "}", 1);
}
