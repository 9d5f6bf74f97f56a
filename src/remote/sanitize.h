/* SPDX-License-Identifier: MIT */
/*
 * sanitize.h - what a remote tool definition may not hide from the user
 * who reads it and show to the model that reads it: invisible and control
 * characters, bidirectional overrides, and HTML comments, in the title, the
 * description and every string inside inputSchema, outputSchema and
 * annotations (the descriptions of properties nested in a schema are where
 * they hide). They are found, stripped, and listed with the JSON pointer of
 * each string for `toolgate mcp list`.
 *
 * What is stripped (TG_SANITIZE_* says which kind was found):
 * - CONTROL: C0 controls U+0000-U+001F but tab and line feed, DEL, C1
 *   controls U+0080-U+009F (a carriage return goes too: it hides what came
 *   before it on a terminal);
 * - INVISIBLE: zero-width and invisible format characters U+200B-U+200F
 *   (U+200E/F are bidi marks too), U+2060-U+2064, U+FEFF, the soft hyphen
 *   U+00AD, U+180E, U+061C (Arabic letter mark);
 * - BIDI: embeddings, overrides and isolates U+202A-U+202E, U+2066-U+2069;
 * - TAG: tag characters U+E0000-U+E007F (text in them is invisible and
 *   models read it);
 * - VARIATION: variation selectors, except one U+FE0E or U+FE0F right after
 *   a character that is not a selector (text or emoji presentation, as in
 *   "❤️"): U+FE00-U+FE0D, U+E0100-U+E01EF and any selector after another
 *   one go, since runs of them carry hidden bytes ("emoji smuggling");
 * - HTML_COMMENT: "<!--" up to and including the next "-->" (to the end of
 *   the string when none follows).
 * Object member names (schema property names) are checked and flagged
 * (stripped 0) but never changed: renaming a property would change what the
 * tool accepts, and two names could become one.
 */
#ifndef TG_REMOTE_SANITIZE_H
#define TG_REMOTE_SANITIZE_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"

enum {
    TG_SANITIZE_CONTROL = 1u << 0,
    TG_SANITIZE_INVISIBLE = 1u << 1,
    TG_SANITIZE_BIDI = 1u << 2,
    TG_SANITIZE_TAG = 1u << 3,
    TG_SANITIZE_VARIATION = 1u << 4,
    TG_SANITIZE_HTML_COMMENT = 1u << 5
};

/* One string that held something of the above. */
typedef struct tg__sanitize_flag {
    char *pointer;  /* JSON pointer of the string in the tool object (of
                       the member, for a member name) */
    unsigned found; /* TG_SANITIZE_* bits */
    int stripped;   /* 1: the clean definition has it stripped; 0: a member
                       name, flagged only */
    int is_key;     /* 1: the member name at `pointer`, not its value */
} tg__sanitize_flag;

/* Cleans s[0..len) (UTF-8): *out is the text without what is listed above
 * (caller frees with free(); NUL-terminated, *out_len its length), *found
 * the kinds found (0: *out equals s). TG_ENOMEM. */
int tg__sanitize_text(const char *s, size_t len, char **out, size_t *out_len,
                      unsigned *found);

/* Cleans a tool definition (an MCP tool object, borrowed): *clean is a new
 * reference to a copy with the strings of title, description,
 * inputSchema, outputSchema and annotations cleaned (every other member
 * copied as it is); *flags (caller frees with tg__sanitize_flags_free) the
 * strings that held something, in document order, *n_flags how many.
 * TG_EINVAL when tool is not an object, TG_ENOMEM. */
int tg__sanitize_tool(const json_t *tool, json_t **clean,
                      tg__sanitize_flag **flags, size_t *n_flags,
                      tg_error *err);
void tg__sanitize_flags_free(tg__sanitize_flag *flags, size_t n);

/* The flags as a JSON array (new ref, NULL on out of memory) for `mcp
 * list`: [{"pointer": "/description", "found": ["invisible",
 * "html-comment"], "stripped": true, "key": false}, ...]. */
json_t *tg__sanitize_flags_json(const tg__sanitize_flag *flags, size_t n);
/* The name of one TG_SANITIZE_* bit ("control", "invisible", "bidi", "tag",
 * "variation-selector", "html-comment"). */
const char *tg__sanitize_kind_name(unsigned bit);

#endif
