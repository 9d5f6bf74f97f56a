/* SPDX-License-Identifier: MIT */
/*
 * termtext.h - text made safe to show on a terminal. A call id, a tool name,
 * a path, a reason or a tool's output may hold characters a terminal acts
 * on rather than shows: ESC starts a control sequence that recolours,
 * clears the screen, moves the cursor or sets the window title; CR, BS and
 * LF overwrite or fake lines; BEL rings; the C1 controls U+0080-U+009F are
 * CSI, OSC and friends to terminals that honour them; and the bidirectional
 * overrides and isolates reorder what the eye reads. tg__term_escape shows
 * each such character as visible text instead, so what reaches the terminal
 * is what was sent, readable and inert.
 */
#ifndef TG_CORE_TERMTEXT_H
#define TG_CORE_TERMTEXT_H

#include <stddef.h>

#include "buf.h"

/* Flags of tg__term_escape; the same values as toolgate.h's
 * TG_TERMINAL_KEEP_LINES and TG_TERMINAL_JSON. */
#define TG__TERM_KEEP_LINES 1u /* newline and tab pass as they are */
#define TG__TERM_JSON 2u       /* the text is JSON: see below */

/* Appends s[0..n) to out, escaped for a terminal:
 *   - C0 controls (U+0000-U+001F) as \n, \r, \t or \xNN (ESC is \x1b),
 *     except newline and tab with TG__TERM_KEEP_LINES;
 *   - DEL as \x7f;
 *   - C1 controls U+0080-U+009F, and the bidirectional controls
 *     U+202A-U+202E (embeddings, overrides) and U+2066-U+2069 (isolates),
 *     as \uXXXX;
 *   - each byte that is not part of valid UTF-8 as \xNN;
 *   - everything else (printable ASCII, valid UTF-8, backslashes) as it is.
 * With TG__TERM_JSON the text is taken to be JSON text, whose strings
 * hold no raw C0 control: newline and tab (white space between tokens)
 * pass, CR and any other C0 byte become a space (white space too), and
 * DEL, C1 and the bidirectional controls, which JSON lets a string hold
 * raw, become JSON escapes (\u007f, \u009b, \u202e), invalid bytes
 * \ufffd: the same JSON value, with nothing a terminal acts on.
 * Returns 0, TG_ENOMEM or TG_ELIMIT (out's cap). */
int tg__term_escape(tg__buf *out, const char *s, size_t n, unsigned flags);

/* The length of the longest prefix of s[0..n) that tg__term_escape would
 * copy unchanged under `flags` (n when all of it). Lets a writer send the
 * plain runs of a large text straight through. */
size_t tg__term_plain_prefix(const char *s, size_t n, unsigned flags);

#endif
