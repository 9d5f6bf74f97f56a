/* SPDX-License-Identifier: MIT */
/*
 * format.h - the interface every wire format implements: detect a document's
 * shape, parse it into a turn, render a turn's results, render tool
 * definitions. One file per format; format.c holds the table, detection and
 * the public tg_turn_parse / tg_turn_render.
 */
#ifndef TG_FORMATS_FORMAT_H
#define TG_FORMATS_FORMAT_H

#include <jansson.h>
#include <stdbool.h>

#include "bad_bytes.h"
#include "buf.h"
#include "json_out.h"
#include "turn.h"

typedef struct tg__format {
    const char *name;
    /* Confidence (0 = not this format, higher = surer) that the parsed
     * document `doc` (borrowed) is in this format. NULL for formats that are
     * never detected from one document. */
    int (*detect)(const json_t *doc);
    /* Fills turn from doc (borrowed). Per-call problems become pre-errors of
     * that call; a document of the wrong shape fails with TG_EFORMAT and a
     * message saying what was seen and what was expected. */
    int (*parse)(tg_turn *turn, const json_t *doc, tg_error *err);
    /* For formats read from text rather than one document (JSON Lines):
     * when non-NULL it is used instead of parse. source_name is for errors. */
    int (*parse_text)(tg_turn *turn, const char *text, size_t len,
                      const char *source_name, tg_error *err);
    /* Optional fast path: reads the format's most common shape straight
     * from the text, without building the document. Only for shapes that
     * detection scores highest for this format, and it must fill the turn
     * exactly as detect+parse would. Returns 1 when it did, 0 when the text
     * is not that plain shape (the caller discards the turn and takes the
     * document path, which also reports every error), or TG_ENOMEM. */
    int (*parse_fast)(tg_turn *turn, const char *text, size_t len);
    /* Appends the rendered results of turn (every call has a result). NULL
     * for input-only formats (fenced). */
    int (*render)(const tg_turn *turn, tg__buf *out, tg_error *err);
    /* Appends tool definitions in this format's shape. `tools` (borrowed) is
     * an array of {"name","description","input_schema","annotations"?}
     * objects. NULL for formats without tool definitions. */
    int (*render_tools)(const json_t *tools, tg__buf *out, tg_error *err);
} tg__format;

/* Fails with TG_EFORMAT: sets err's JSON pointer and a message from fmt
 * with one string argument. Returns TG_EFORMAT. */
int tg__format_error(tg_error *err, const char *pointer, const char *fmt,
                     const char *arg);

/* A set of ids borrowed from a document: the calls a later message already
 * answers. A messages array may hold thousands of calls and answers, so the
 * set is sorted once and searched in O(log n). */
typedef struct tg__idset {
    const char **ids; /* borrowed strings; the array is the caller's */
    size_t n;
} tg__idset;
/* Sorts the set for tg__idset_has. */
void tg__idset_sort(tg__idset *set);
/* 1 when id is in the sorted set (NULL set, empty set or NULL id: 0). */
int tg__idset_has(const tg__idset *set, const char *id);

/* One tool definition in a format's shape, from a neutral one `t`
 * (borrowed, see render_tools): the members of `head` (borrowed, may be
 * NULL) first, then "name", "description" when it is a string, and the input
 * schema under `schema_key` ({"type":"object"} when there is none). New ref;
 * NULL on out of memory or when t has no string name. */
json_t *tg__format_tool_object(const json_t *t, const json_t *head,
                               const char *schema_key);

/* The render_tools every format shares: maps each neutral definition with
 * `one` (returns a new ref, NULL on failure), collects them in an array,
 * wrapped as {wrap_key: array} when wrap_key is not NULL, and appends it as
 * one line of compact JSON. format_name is for errors. */
int tg__format_render_tool_list(const json_t *tools,
                                json_t *(*one)(const json_t *t),
                                const char *wrap_key, const char *format_name,
                                tg__buf *out, tg_error *err);

/* The format named `name`, or NULL. */
const tg__format *tg__format_find(const char *name);

/* Format implementations. */
extern const tg__format tg__format_openai_chat;
extern const tg__format tg__format_native;
extern const tg__format tg__format_openai_responses;
extern const tg__format tg__format_mcp;
extern const tg__format tg__format_fenced;
extern const tg__format tg__format_anthropic;
extern const tg__format tg__format_gemini;

/* Helpers shared by renderers: the text a model sees for a result's payload
 * (the string itself when the payload is a string, else compact JSON), in
 * the trust envelope when result->untrusted. Appends to out. */
int tg__format_payload_text(const tg_result *result, tg__buf *out);
/* Appends text (len bytes, what a tool produced) inside the trust envelope
 * of result r (envelope.c): delimiters naming the tool and call id, saying
 * it is data and not instructions, with a nonce from the text's hash.
 * Returns 0, TG_ENOMEM, TG_ELIMIT or TG_EINTERNAL. */
int tg__envelope_put(const tg_result *r, const char *text, size_t len,
                     tg__buf *out);
/* The trust envelope of content blocks (borrowed array) of r: the opening
 * tag (no newline) appended to head, the closing tag to tail, the nonce
 * over the blocks' compact JSON; each goes in a text block of its own
 * before and after the blocks. Returns 0, TG_ENOMEM or TG_ELIMIT. */
int tg__envelope_blocks(const tg_result *r, const json_t *content,
                        tg__buf *head, tg__buf *tail);
/* Whether r's payload is the content convention of a tool with "output":
 * "mcp-content": a success, not a structured one, whose payload is
 * {"content": BLOCKS} and whose content is those BLOCKS. Renderers then
 * draw from the blocks (described as text where the format has no such
 * block), never from the payload. A structured result may carry blocks
 * beside its value (a remote tool's): only MCP's renderer shows them. */
bool tg__result_content_payload(const tg_result *r);
/* The same text (enveloped when the result is untrusted) appended as one
 * JSON string literal: a payload's known
 * compact text or a string payload is escaped straight into out; anything
 * else is written to scratch (a buffer of the caller's, reused) first.
 * Returns 0, TG_ENOMEM or TG_ELIMIT. */
int tg__format_payload_json_string(const tg_result *result, tg__buf *out,
                                   tg__buf *scratch);

/* Whether a failed json_load* ran out of memory: jansson reports some
 * allocation failures with json_error_out_of_memory and others by leaving
 * the error unset (empty text). */
int tg__format_json_oom(const json_error_t *jerr);

/* Model turns whose calls' arguments hold bytes no tool gets: bad_strings.c,
 * core/bad_bytes.h). tg__format_load reads text[0..len) as json_loadb(
 * JSON_DECODE_ANY) does (new ref, or NULL with jerr filled; out of memory as
 * tg__format_json_oom says), and, when jansson refuses it only for strings
 * holding U+0000, an unpaired surrogate or bytes that are not UTF-8, reads
 * it anyway with those strings as their bytes and sets *bad.
 * A parser given such a document (*bad) calls tg__format_bad_strings_placed
 * once it added the document's calls, turn->calls[from..]: 0 when every bad
 * string lies in the arguments of one of them (each of those ends
 * MALFORMED_ARGUMENTS), 1 when one lies elsewhere - `where` (a buffer of the
 * caller's, replaced) says where and what[TG_BAD_WHAT_MAX] what it holds,
 * and the document is to be refused - or TG_ENOMEM. It drops the calls'
 * bad_args_src. tg__format_stream_bad_strings does the same for event
 * `number` (borrowed) of a stream, ending on `line`, against where the
 * providers' events carry arguments: 0, or TG_EPARSE or TG_ENOMEM with err
 * filled. */
json_t *tg__format_load(const char *text, size_t len, json_error_t *jerr,
                        bool *bad);
int tg__format_bad_strings_placed(const json_t *doc, tg_turn *turn, size_t from,
                                  tg__buf *where, char *what);
int tg__format_stream_bad_strings(const json_t *event,
                                  unsigned long long number,
                                  unsigned long long line, tg_error *err);
/* The message of a document refused for a bad string outside arguments:
 * TG_EPARSE, "PREFIX: WHERE holds WHAT, outside any call's arguments ..."
 * (prefix may be NULL). */
int tg__format_bad_strings_error(tg_error *err, const char *prefix,
                                 const char *where, const char *what);

/* For targets without a kind of content block (content.c): appends a text
 * description of one MCP content block (borrowed): a text block's text, an
 * embedded text resource's text under its URI, and for images, audio, links
 * and blobs a bracketed line naming the kind, the media type and the decoded
 * size - never the bytes. tg__format_content_text describes every block of
 * an array, one after another separated by newlines. Return 0, TG_ENOMEM or
 * TG_ELIMIT. */
int tg__format_block_text(const json_t *block, tg__buf *out);
int tg__format_content_text(const json_t *content, tg__buf *out);
/* Image media types model APIs take in an image block (JPEG, PNG, GIF,
 * WebP): 1 or 0. tg__format_is_image_block: an image block with base64
 * data of such a type. tg__format_is_empty_text: a text block with "" (the
 * APIs refuse empty text blocks, so they are left out). */
int tg__format_image_type_ok(const char *mime);
int tg__format_is_image_block(const json_t *b);
int tg__format_is_empty_text(const json_t *b);
/* The result's content blocks as a JSON array in a format's shape: each
 * block (borrowed) written by `block`, empty text blocks left out; before
 * them a text (written by `text`) saying why a failure failed, or, for an
 * untrusted success, the trust envelope's tags as texts around them
 * (tg__envelope_blocks). Returns 0; 1 with nothing written when no block
 * would be shown (the caller renders the payload's text instead);
 * TG_ENOMEM or TG_ELIMIT. scratch is the caller's. */
/* {"type":TYPE,"text":TEXT} appended to out (TYPE "text" for the second:
 * MCP's and Anthropic's text block); 0, TG_ENOMEM or TG_ELIMIT. */
int tg__format_put_typed_text(tg__buf *out, const char *type, const char *text,
                              size_t len);
int tg__format_put_text_block(tg__buf *out, const char *text, size_t len);
typedef int (*tg__format_block_fn)(tg__buf *out, const json_t *block,
                                   tg__buf *scratch);
typedef int (*tg__format_text_fn)(tg__buf *out, const char *text, size_t len);
int tg__format_put_blocks(tg__buf *out, const tg_result *r,
                          tg__format_block_fn block, tg__format_text_fn text,
                          tg__buf *scratch);

/* content_check.c: a tool's `"output": "mcp-content"` read as MCP content
 * blocks. tg__content_parse parses text[0..len) as JSON (duplicate keys,
 * NUL and bad UTF-8 refused) and checks it with tg__content_check: an array
 * of text, image, audio, resource_link and resource blocks, every required
 * member there with its type, base64 that decodes, annotations and _meta of
 * their shapes. Returns 0 with *out the array (new ref); TG_EPARSE with e's
 * message naming the block index and what is wrong and e->pointer the JSON
 * pointer of it ("/2/data"); or TG_ENOMEM. tg__content_check does the same
 * on a value (borrowed). tg__content_base64_check: 1 when s[0..len) is
 * standard base64 with canonical padding, else 0 with *bad_at the offset of
 * the first bad character (len when the length is not a multiple of 4). */
int tg__content_parse(const char *text, size_t len, json_t **out, tg_error *e);
int tg__content_check(const json_t *content, tg_error *e);
int tg__content_base64_check(const char *s, size_t len, size_t *bad_at);

/* The MCP CallToolResult of result r (mcp_result.c says what it holds), as
 * one compact JSON object appended to out. flags: TG_MCP_CTR_STRUCTURED
 * puts a success's payload in structuredContent too when it is an object,
 * TG_MCP_CTR_STRUCTURED_ANY whatever JSON value it is (2026-07-28 allows
 * any), TG_MCP_CTR_RESULT_TYPE adds "resultType":"complete" (2026-07-28),
 * TG_MCP_CTR_DECLARED says the tool declares an outputSchema: an outcome
 * other than success then carries no structuredContent (its payload
 * convention is no instance of that schema, and clients check it).
 * meta_members (may be NULL) is JSON text of members ("k":v,...) placed
 * first in _meta. text and scratch are the caller's buffers, reused.
 * Returns 0, TG_ENOMEM or TG_ELIMIT. */
#define TG_MCP_CTR_STRUCTURED 1u
#define TG_MCP_CTR_STRUCTURED_ANY 2u
#define TG_MCP_CTR_RESULT_TYPE 4u
#define TG_MCP_CTR_DECLARED 8u
int tg__format_mcp_call_tool_result(tg__buf *out, const tg_result *r,
                                    unsigned flags, const char *meta_members,
                                    tg__buf *text, tg__buf *scratch);

#endif
