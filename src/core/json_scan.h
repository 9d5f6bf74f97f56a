/* SPDX-License-Identifier: MIT */
/*
 * json_scan.h - stepping over JSON text without reading it: white space, a
 * string, a whole value. For text known to be valid JSON (toolgate's own,
 * or text a parser already accepted), where only where things end is
 * wanted: the agent loop cuts a conversation's kept items and an answer's
 * message out of their text with these. Nothing is validated; on text
 * that is not JSON they still stay within the n bytes given.
 */
#ifndef TG_CORE_JSON_SCAN_H
#define TG_CORE_JSON_SCAN_H

#include <stddef.h>

/* The index of the first byte at or after s[i] that is not JSON
 * whitespace (n when none is). */
size_t tg__json_ws(const char *s, size_t n, size_t i);

/* Where the JSON value starting at s[i] ends (the index after it), in
 * text known to be valid JSON: strings and nesting followed, nothing
 * checked. 0 when it does not end within n. */
size_t tg__json_value_end(const char *s, size_t n, size_t i);

/* The same for the string whose opening quote is s[i]: the index after
 * its closing quote, 0 when it does not close within n. */
size_t tg__json_string_end(const char *s, size_t n, size_t i);

#endif
