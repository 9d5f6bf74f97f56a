/* SPDX-License-Identifier: MIT */
/*
 * content_check.c - reading what a tool with `"output": "mcp-content"`
 * printed: one JSON array of MCP content blocks (schema 2025-11-25,
 * ContentBlock), checked block by block before anything renders it.
 *
 * Each block is a text {type,text}, an image or audio {type,data,mimeType}
 * with `data` in standard base64, a resource_link {type,uri,name,...} or an
 * embedded resource {type,resource:{uri, text | blob, mimeType?}}; any of
 * them may carry `annotations` (audience, priority, lastModified) and
 * `_meta` (an object). Members the schema does not name are left as they
 * are (the schema allows them). The first thing wrong is reported with the
 * block's index, a JSON pointer to the member and what is wrong, so a tool
 * author can fix the tool from one message; renderers may then rely on the
 * shapes (a string where a string must be, base64 that decodes).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "format.h"
#include "jtape.h"

/* Fills e (code TG_EPARSE, pointer) and returns TG_EPARSE. */
static int wrong(tg_error *e, const char *pointer, const char *fmt, ...)
    TG__PRINTF(3, 4);
static int wrong(tg_error *e, const char *pointer, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tg__error_set(e, TG_EPARSE, "%s", msg);
    tg__error_pointer(e, pointer);
    return TG_EPARSE;
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

int tg__content_base64_check(const char *s, size_t len, size_t *bad_at)
{
    size_t pad = 0;
    *bad_at = 0;
    if (len % 4 != 0) {
        *bad_at = len;
        return 0;
    }
    while (pad < 2 && pad < len && s[len - 1 - pad] == '=')
        pad++;
    for (size_t i = 0; i < len - pad; i++)
        if (b64_value((unsigned char)s[i]) < 0) {
            *bad_at = i;
            return 0;
        }
    /* The bits the padding leaves over must be zero (canonical form), so
     * that every accepted text decodes to exactly one byte string. */
    if (pad > 0) {
        int last = b64_value((unsigned char)s[len - pad - 1]);
        if ((pad == 1 && (last & 3) != 0) || (pad == 2 && (last & 15) != 0)) {
            *bad_at = len - pad - 1;
            return 0;
        }
    }
    return 1;
}

/* Member `key` of o must be a string (when `need`, it must be there). */
static int string_member(const json_t *o, const char *key, bool need,
                         const char *at, tg_error *e)
{
    const json_t *v = json_object_get(o, key); /* borrowed */
    char ptr[96];
    snprintf(ptr, sizeof ptr, "%s/%s", at, key);
    if (v == NULL)
        return need ? wrong(e, ptr, "%s: missing \"%s\"", at, key) : 0;
    if (!json_is_string(v))
        return wrong(e, ptr, "%s: \"%s\" must be a string", at, key);
    return 0;
}

/* A base64 member: a string of standard base64 (required). */
static int base64_member(const json_t *o, const char *key, const char *at,
                         tg_error *e)
{
    int rc = string_member(o, key, true, at, e);
    if (rc != 0)
        return rc;
    const json_t *v = json_object_get(o, key); /* borrowed */
    size_t bad_at;
    char ptr[96];
    snprintf(ptr, sizeof ptr, "%s/%s", at, key);
    if (!tg__content_base64_check(json_string_value(v), json_string_length(v),
                                  &bad_at)) {
        if (bad_at == json_string_length(v))
            return wrong(e, ptr,
                         "%s: \"%s\" is not base64: its length (%zu) is not a "
                         "multiple of 4",
                         at, key, json_string_length(v));
        return wrong(e, ptr,
                     "%s: \"%s\" is not base64: bad character at offset %zu "
                     "(standard alphabet A-Z a-z 0-9 + /, '=' padding)",
                     at, key, bad_at);
    }
    return 0;
}

/* A media type: a non-empty string with a '/' ("image/png"). */
static int mime_member(const json_t *o, bool need, const char *at, tg_error *e)
{
    int rc = string_member(o, "mimeType", need, at, e);
    const char *m = json_string_value(json_object_get(o, "mimeType"));
    if (rc == 0 && m != NULL && (m[0] == '/' || strchr(m, '/') == NULL)) {
        char ptr[96];
        snprintf(ptr, sizeof ptr, "%s/mimeType", at);
        return wrong(e, ptr,
                     "%s: \"mimeType\" must be a media type such as "
                     "\"image/png\", not \"%.40s\"",
                     at, m);
    }
    return rc;
}

/* "annotations" (audience, priority, lastModified) and "_meta". */
static int common_members(const json_t *b, const char *at, tg_error *e)
{
    char ptr[96];
    const json_t *meta = json_object_get(b, "_meta"); /* borrowed */
    if (meta != NULL && !json_is_object(meta)) {
        snprintf(ptr, sizeof ptr, "%s/_meta", at);
        return wrong(e, ptr, "%s: \"_meta\" must be an object", at);
    }
    const json_t *a = json_object_get(b, "annotations"); /* borrowed */
    if (a == NULL)
        return 0;
    snprintf(ptr, sizeof ptr, "%s/annotations", at);
    if (!json_is_object(a))
        return wrong(e, ptr, "%s: \"annotations\" must be an object", at);
    const json_t *aud = json_object_get(a, "audience"); /* borrowed */
    if (aud != NULL) {
        bool ok = json_is_array(aud);
        for (size_t i = 0; ok && i < json_array_size(aud); i++) {
            const char *r = json_string_value(json_array_get(aud, i));
            ok = r != NULL &&
                 (strcmp(r, "user") == 0 || strcmp(r, "assistant") == 0);
        }
        if (!ok)
            return wrong(e, ptr,
                         "%s: \"annotations\".\"audience\" must be an array "
                         "of \"user\" and \"assistant\"",
                         at);
    }
    const json_t *pri = json_object_get(a, "priority"); /* borrowed */
    if (pri != NULL && (!json_is_number(pri) || json_number_value(pri) < 0 ||
                        json_number_value(pri) > 1))
        return wrong(e, ptr,
                     "%s: \"annotations\".\"priority\" must be a number from "
                     "0 to 1",
                     at);
    const json_t *lm = json_object_get(a, "lastModified"); /* borrowed */
    if (lm != NULL && !json_is_string(lm))
        return wrong(e, ptr,
                     "%s: \"annotations\".\"lastModified\" must be a string "
                     "(ISO 8601)",
                     at);
    return 0;
}

/* A URI member: a non-empty string. */
static int uri_member(const json_t *o, const char *at, tg_error *e)
{
    int rc = string_member(o, "uri", true, at, e);
    if (rc == 0 && json_string_length(json_object_get(o, "uri")) == 0) {
        char ptr[96];
        snprintf(ptr, sizeof ptr, "%s/uri", at);
        return wrong(e, ptr, "%s: \"uri\" must not be empty", at);
    }
    return rc;
}

static int resource_link(const json_t *b, const char *at, tg_error *e)
{
    int rc;
    if ((rc = uri_member(b, at, e)) != 0 ||
        (rc = string_member(b, "name", true, at, e)) != 0 ||
        (rc = string_member(b, "title", false, at, e)) != 0 ||
        (rc = string_member(b, "description", false, at, e)) != 0 ||
        (rc = mime_member(b, false, at, e)) != 0)
        return rc;
    const json_t *size = json_object_get(b, "size"); /* borrowed */
    if (size != NULL &&
        (!json_is_integer(size) || json_integer_value(size) < 0)) {
        char ptr[96];
        snprintf(ptr, sizeof ptr, "%s/size", at);
        return wrong(e, ptr,
                     "%s: \"size\" must be a whole number of bytes (>= 0)", at);
    }
    const json_t *icons = json_object_get(b, "icons"); /* borrowed */
    if (icons != NULL && !json_is_array(icons)) {
        char ptr[96];
        snprintf(ptr, sizeof ptr, "%s/icons", at);
        return wrong(e, ptr, "%s: \"icons\" must be an array", at);
    }
    return 0;
}

static int embedded_resource(const json_t *b, const char *at, tg_error *e)
{
    const json_t *res = json_object_get(b, "resource"); /* borrowed */
    char rat[64];
    snprintf(rat, sizeof rat, "%s/resource", at);
    if (res == NULL)
        return wrong(e, rat, "%s: missing \"resource\"", at);
    if (!json_is_object(res))
        return wrong(e, rat,
                     "%s: \"resource\" must be an object {uri, text or blob, "
                     "mimeType?}",
                     at);
    int rc;
    if ((rc = uri_member(res, rat, e)) != 0 ||
        (rc = mime_member(res, false, rat, e)) != 0)
        return rc;
    const json_t *meta = json_object_get(res, "_meta"); /* borrowed */
    if (meta != NULL && !json_is_object(meta))
        return wrong(e, rat, "%s: \"_meta\" must be an object", rat);
    bool text = json_object_get(res, "text") != NULL;
    bool blob = json_object_get(res, "blob") != NULL;
    if (text == blob)
        return wrong(e, rat,
                     "%s: a resource holds exactly one of \"text\" and "
                     "\"blob\" (base64)",
                     rat);
    return text ? string_member(res, "text", true, rat, e)
                : base64_member(res, "blob", rat, e);
}

/* One block (borrowed) at index i. */
static int check_block(const json_t *b, size_t i, tg_error *e)
{
    char at[32];
    snprintf(at, sizeof at, "/%zu", i);
    if (!json_is_object(b))
        return wrong(e, at, "/%zu: a content block must be an object", i);
    const json_t *type = json_object_get(b, "type"); /* borrowed */
    char tptr[40];
    snprintf(tptr, sizeof tptr, "/%zu/type", i);
    if (!json_is_string(type))
        return wrong(e, tptr,
                     "/%zu: missing \"type\" (text, image, audio, "
                     "resource_link or resource)",
                     i);
    const char *t = json_string_value(type);
    int rc = common_members(b, at, e);
    if (rc != 0)
        return rc;
    if (strcmp(t, "text") == 0)
        return string_member(b, "text", true, at, e);
    if (strcmp(t, "image") == 0 || strcmp(t, "audio") == 0) {
        if ((rc = base64_member(b, "data", at, e)) != 0)
            return rc;
        return mime_member(b, true, at, e);
    }
    if (strcmp(t, "resource_link") == 0)
        return resource_link(b, at, e);
    if (strcmp(t, "resource") == 0)
        return embedded_resource(b, at, e);
    return wrong(e, tptr,
                 "/%zu: unknown content type \"%.40s\" (text, image, audio, "
                 "resource_link or resource)",
                 i, t);
}

int tg__content_check(const json_t *content, tg_error *e)
{
    if (!json_is_array(content))
        return wrong(e, "",
                     "the output must be a JSON array of MCP content blocks, "
                     "not %s",
                     json_is_object(content)   ? "an object"
                     : json_is_string(content) ? "a string"
                                               : "a scalar");
    for (size_t i = 0; i < json_array_size(content); i++) {
        int rc = check_block(json_array_get(content, i), i, e);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int tg__content_parse(const char *text, size_t len, json_t **out, tg_error *e)
{
    /* the token tape reads as json_loadb(JSON_REJECT_DUPLICATES |
     * JSON_DECODE_ANY) does, errors worded alike, in a fraction of its
     * instructions; the blocks are then built from it */
    tg__jtape_error jerr;
    tg__jtok st[128];
    tg__jtape t;
    *out = NULL;
    int prc = tg__jtape_parse_in(text, len, st, 128, &t, &jerr);
    if (prc == TG_ENOMEM || (prc != 0 && jerr.oom))
        return tg__error_set(e, TG_ENOMEM, "out of memory");
    if (prc == TG_ELIMIT)
        return wrong(e, "", "the output is not JSON: 4 GiB or more");
    if (prc != 0)
        return wrong(e, "", "the output is not JSON: %s at line %d, column %d",
                     jerr.text, jerr.line, jerr.column);
    json_t *v = tg__jtape_to_json(&t, 0); /* new ref */
    tg__jtape_free(&t);
    if (v == NULL)
        return tg__error_set(e, TG_ENOMEM, "out of memory");
    int rc = tg__content_check(v, e);
    if (rc != 0) {
        json_decref(v);
        return rc;
    }
    *out = v;
    return 0;
}
