/* SPDX-License-Identifier: MIT */
/*
 * pin.h - pinning of remote tool definitions: the checksum of a tool's
 * definition, the comparison of the tool set a server serves now with the
 * set pinned in the journal, and the diff a user reads before accepting a
 * change (`toolgate mcp accept`).
 *
 * A definition is the JCS text (RFC 8785) of exactly these members of an
 * MCP tool object, those present: name, title, description, inputSchema,
 * outputSchema, annotations. Anything else a server adds (_meta, icons,
 * execution hints) is not pinned. Its checksum is "sha256:<64 hex>" of
 * that text. The same without "name" is the definition's shape, which
 * finds a tool served under a new name.
 *
 * Pure functions over plain data: the journal I/O (reading the pins,
 * recording them) belongs to the journal layer (journal.h, tg__journal_pin_*)
 * and the wiring, which passes the pinned set in and acts on the verdicts.
 */
#ifndef TG_REMOTE_PIN_H
#define TG_REMOTE_PIN_H

#include <jansson.h>
#include <stddef.h>

#include "checksum.h"
#include "error.h"

/* A pinned tool: a definition the user has (or trust on first use has)
 * accepted. Strings borrowed from the caller for the call. */
typedef struct tg__pin_entry {
    const char *tool;       /* the server's name for it (unprefixed) */
    const char *checksum;   /* "sha256:<hex>" of definition */
    const char *definition; /* its JCS text */
} tg__pin_entry;

typedef enum tg__pin_kind {
    TG_PIN_SAME,    /* served as pinned */
    TG_PIN_NEW,     /* not pinned: allowed (pin it), or held under strict */
    TG_PIN_CHANGED, /* pinned, served with another definition: held */
    TG_PIN_RENAMED, /* not pinned under this name, but a pinned tool that is
                       no longer served had the same definition: held */
    TG_PIN_REMOVED  /* pinned, no longer served */
} tg__pin_kind;

/* The verdict on one tool. Strings are owned by the verdict array
 * (tg__pin_verdicts_free). */
typedef struct tg__pin_verdict {
    tg__pin_kind kind;
    char *tool;       /* the served name; for REMOVED the pinned name */
    int held;         /* 1: disabled until the user accepts */
    char *checksum;   /* of the served definition; NULL for REMOVED */
    char *definition; /* the served definition's JCS text; NULL for REMOVED */
    char *pinned_checksum; /* CHANGED, REMOVED: the pinned one; RENAMED: the
                              pinned definition under the old name */
    char *other;           /* RENAMED: the old name; REMOVED: the new name when
                              its definition moved there; else NULL */
    char *reason;          /* held, REMOVED: what happened, for the user and for
                              a denied call's message; else NULL */
} tg__pin_verdict;

/* The definition of `tool` (an MCP tool object, borrowed): its JCS text
 * (*text, caller frees with free()) and checksum; with shape set, the same
 * without "name" (the definition's shape). TG_EINVAL when tool is not an
 * object with a string "name", TG_ENOMEM. */
int tg__pin_definition(const json_t *tool, int shape, char **text,
                       char checksum[TG_CHECKSUM_MAX], tg_error *err);

/* Compares the tools a server serves now (`served`: a JSON array of MCP tool
 * objects, borrowed) with its pins (pinned[0..n_pinned)). One verdict per
 * served tool, in served order, then one per pinned tool no longer served,
 * in pinned order; *out is the caller's (tg__pin_verdicts_free). A new tool
 * is held when `strict` is set and the server is known (it has pins), never
 * on first contact (trust on first use). A served tool without a string
 * "name", or a name served twice, fails with TG_EINVAL naming it (the
 * wiring refuses such a tool list before it gets here). */
int tg__pin_compare(const tg__pin_entry *pinned, size_t n_pinned,
                    const json_t *served, int strict, tg__pin_verdict **out,
                    size_t *n_out, tg_error *err);
void tg__pin_verdicts_free(tg__pin_verdict *v, size_t n);
const char *tg__pin_kind_name(tg__pin_kind kind);

/* A line diff of two definitions (JCS texts) for `mcp accept`: each
 * pretty-printed (two-space indent, one member or element a line, every
 * token as JCS wrote it), then hunks of changed lines with three lines of
 * context, "- " for the pinned side, "+ " for the served one, "  " for
 * context, "@@ line N @@" before each hunk. old_def NULL (a new tool):
 * every line added. *out is the caller's (free()); "" when they are equal.
 * The lines between the common head and tail are compared through a table
 * of at most 4 M cells (16 MB); past that they show as removed, then
 * added. */
int tg__pin_diff(const char *old_def, const char *new_def, char **out,
                 tg_error *err);

#endif
