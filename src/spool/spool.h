/* SPDX-License-Identifier: MIT */
/*
 * spool.h - the artifact store (the spool) and the artifact tools.
 *
 * Tool output larger than the inline limit streams into a content-addressed
 * store in one directory: each artifact is a file named by the first 24 hex
 * digits of the SHA-256 of its bytes ("art_" + 24 hex), committed atomically
 * (write, fsync, rename, fsync of the directory), listed in a small SQLite
 * index (size, lines, media type, sha256, preview, created / last-used time,
 * pins, and whether it was evicted). The same output twice is stored once.
 *
 * Layout of the spool directory (created 0700 when missing):
 *   index.db            the SQLite index (WAL)
 *   tmp/                files being written (a writer holds flock on its own)
 *   ab/art_ab...        one artifact: the shard is the id's first two digits
 *
 * The readers behind the artifact tools and `toolgate artifact` (byte range,
 * line range, head, tail, grep with PCRE2 JIT, stat) take an id that is
 * checked strictly (art_ + exactly 24 lowercase hex digits) before anything
 * touches the file system; an unknown id, a malformed one and an evicted one
 * each give their own clear error, never another artifact's bytes.
 *
 * Thread safety: one tg_spool may be shared by threads (the loop thread that
 * feeds writers and the worker threads that run artifact tools): its index
 * is guarded by a mutex inside it. A writer is used by one thread at a time.
 * Several processes may share one spool directory (SQLite locking, unique
 * temporary files, no-replace renames).
 */
#ifndef TG_SPOOL_SPOOL_H
#define TG_SPOOL_SPOOL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "toolgate.h"

#define TG_SPOOL_ID_LEN 28 /* "art_" + 24 hex */

/* ------------------------------------------------------------------ store */

/* tg__spool_open flags. */
enum {
    /* do not create the directory when it is missing: the spool is then
     * empty (every id is unknown); for readers such as the CLI */
    TG__SPOOL_NO_CREATE = 1u
};

/* Opens (and creates, mode 0700, unless TG__SPOOL_NO_CREATE) the spool in
 * `dir`. max_bytes caps the total size of the stored artifacts (0: no cap);
 * past it the least recently used unpinned artifacts are evicted, at open
 * and after every commit. Temporary files left by dead writers are removed.
 * *out is the caller's (tg__spool_free). TG_EIO when the directory or its
 * index cannot be opened, TG_EINVAL for a NULL or empty dir. */
int tg__spool_open(const char *dir, uint64_t max_bytes, unsigned flags,
                   tg_spool **out, tg_error *err);
/* Closes the index and frees the spool. NULL: no-op. Writers still open on
 * it must have been finished or aborted. */
void tg__spool_free(tg_spool *sp);

/* 1 when `id` is exactly "art_" followed by 24 lowercase hex digits. Every
 * operation below checks ids with it before using them. */
int tg__spool_id_valid(const char *id);

/* What the index knows of an id. */
typedef enum tg__spool_state {
    TG_SPOOL_UNKNOWN = -1, /* never stored here (or a malformed id) */
    TG_SPOOL_STORED = 0,
    TG_SPOOL_EVICTED = 1, /* removed to keep the spool under max_bytes */
    TG_SPOOL_RELEASED = 2 /* removed when its journal rows were pruned */
} tg__spool_state;

/* The state of `id`; TG_SPOOL_UNKNOWN for a malformed or unknown id (and
 * when the index cannot be read). */
tg__spool_state tg__spool_state_of(tg_spool *sp, const char *id);

/* Adds one pin to a stored artifact: pinned artifacts are never evicted.
 * The journal pins the artifact of each result row that names it. */
int tg__spool_pin(tg_spool *sp, const char *id, tg_error *err);
/* Drops one pin (the journal's retention pruned a row naming the artifact).
 * When no pin is left the artifact is removed at once and its id answers
 * "released" afterwards. TG_ENOTFOUND when the id is not stored. */
int tg__spool_release(tg_spool *sp, const char *id, tg_error *err);
/* Evicts least recently used unpinned artifacts until the stored bytes are
 * at most max_bytes (no-op when max_bytes is 0). `keep` (may be NULL) is
 * never evicted: the artifact just committed. *evicted (may be NULL) gets
 * the number removed. */
int tg__spool_evict(tg_spool *sp, const char *keep, size_t *evicted,
                    tg_error *err);
/* Every artifact the index knows, newest first, as a JSON array (new ref)
 * of {"id","bytes","lines","sha256","media_type","created_at",
 * "last_used_at","pins","state"} ("stored", "evicted", "released"). */
int tg__spool_list(tg_spool *sp, json_t **out, tg_error *err);

/* ----------------------------------------------------------------- writer */

typedef struct tg__spool_writer tg__spool_writer;

/* What a finished writer produced: either the output stayed inline (its
 * bytes in inline_data) or it was committed as an artifact. */
typedef struct tg__spool_outcome {
    bool spooled;      /* true: `artifact` is set; false: inline_data */
    bool limited;      /* max_bytes of the writer was reached */
    uint64_t bytes;    /* bytes kept (inline or in the artifact) */
    char *inline_data; /* NUL-terminated, inline_len bytes; caller's */
    size_t inline_len;
    /* {"id","bytes","lines","sha256","media_type","preview"} (docs/records.md),
     * new ref, the caller's */
    json_t *artifact;
} tg__spool_outcome;

/* Frees what an outcome holds; the struct is zeroed. */
void tg__spool_outcome_cleanup(tg__spool_outcome *o);

/* A writer for one output stream. Up to inline_max bytes stay in memory;
 * past that, everything (the buffered bytes and all that follows) goes to a
 * temporary file in the spool as it arrives, hashed and counted on the way;
 * memory stays bounded (inline_max, then at most 4 MiB of write buffers and
 * a few KiB) whatever the size. Up to 8 MiB of output the caller's write()
 * calls write the file; past that a thread of the writer does (and starts
 * the kernel's writeback every 8 MiB, so the final fsync is short), and a
 * write blocks only while all four 1 MiB buffers wait for the disk (the
 * disk is slower than the tool). If that thread cannot start, the caller
 * keeps writing the file itself. *out is the caller's: finish or abort
 * it. */
int tg__spool_writer_new(tg_spool *sp, size_t inline_max,
                         tg__spool_writer **out, tg_error *err);
/* The most bytes the writer keeps (limits.max_output_bytes; 0: no limit).
 * Call before the first write. */
void tg__spool_writer_set_max_bytes(tg__spool_writer *w, uint64_t max_bytes);
/* force: commit an artifact even when the output fits inline (a call with
 * `inline: false`). */
void tg__spool_writer_set_force(tg__spool_writer *w, bool force);
/* Appends len bytes. Returns 0; TG_ELIMIT when the bytes go past max_bytes
 * (what fits is kept, the rest dropped, and every later write returns
 * TG_ELIMIT too: the caller stops the tool and reports OUTPUT_LIMIT; the
 * output so far is still committed by finish); TG_EIO (err names the spool,
 * the error and how many bytes were written) when the file system fails
 * (ENOSPC, EIO, ...): the partial file is removed at once and every later
 * write and the finish return the same error; TG_ENOMEM. */
int tg__spool_writer_write(tg__spool_writer *w, const void *data, size_t len,
                           tg_error *err);
/* Bytes accepted so far (for a progress line). */
uint64_t tg__spool_writer_bytes(const tg__spool_writer *w);
/* Ends the stream and frees the writer, whatever the result. Text output
 * that fits inline (and no force) comes back in o->inline_data; binary
 * output (a NUL byte, invalid UTF-8) is always committed, never pasted;
 * otherwise the file is fsynced, renamed to its content address (when that
 * artifact is already stored, the temporary file is dropped: same output stored
 * once), the directory fsynced, the index updated, then older artifacts evicted
 * past max_bytes, and o->artifact describes it. On failure nothing is left
 * in the spool and *o is empty. */
int tg__spool_writer_finish(tg__spool_writer *w, tg__spool_outcome *o,
                            tg_error *err);
/* Drops the output (a canceled call) and frees the writer: the partial file
 * is removed. NULL: no-op. */
void tg__spool_writer_abort(tg__spool_writer *w);

/* The short text a model gets instead of a spooled output: id, size in
 * bytes and lines, media type, the preview, and which artifact tools to
 * call with the id. `artifact` is an outcome's artifact object (borrowed).
 * *text is the caller's (free). */
int tg__spool_handle_text(const json_t *artifact, char **text);

/* ---------------------------------------------------------------- readers */

/* Result of a text read (lines, head, tail, a byte range). */
typedef struct tg__spool_text {
    tg__buf text;         /* the bytes read (capped) */
    uint64_t offset;      /* byte offset of text[0] in the artifact */
    uint64_t first_line;  /* 1-based line of text[0] (0 for a byte read) */
    uint64_t last_line;   /* line of the last byte (0 when empty) */
    uint64_t total_bytes; /* of the artifact */
    uint64_t total_lines;
    bool truncated; /* the cap cut the answer short */
    bool binary;    /* the artifact is binary */
} tg__spool_text;

void tg__spool_text_cleanup(tg__spool_text *t);

/* Each reader validates the id first: TG_EINVAL for a malformed id,
 * TG_ENOTFOUND for an unknown, evicted or released id (the message says
 * which; tg__spool_state_of tells them apart), TG_EIO for a damaged file. */

/* `length` bytes from `offset` (length capped at `cap`); an offset past the
 * end gives an empty text. */
int tg__spool_read_bytes(tg_spool *sp, const char *id, uint64_t offset,
                         size_t length, size_t cap, tg__spool_text *out,
                         tg_error *err);
/* `count` lines from 1-based line `first`, at most `cap` bytes. The line
 * is found through the checkpoints taken while writing (the newline count
 * at every MiB), so only about a MiB is scanned whatever the line. */
int tg__spool_read_lines(tg_spool *sp, const char *id, uint64_t first,
                         uint64_t count, size_t cap, tg__spool_text *out,
                         tg_error *err);
/* The first n lines. */
int tg__spool_head(tg_spool *sp, const char *id, uint64_t n, size_t cap,
                   tg__spool_text *out, tg_error *err);
/* The last n lines, read backwards from the end (never the whole file). */
int tg__spool_tail(tg_spool *sp, const char *id, uint64_t n, size_t cap,
                   tg__spool_text *out, tg_error *err);
/* {"id","bytes","lines","sha256","media_type","preview","created_at",
 * "last_used_at","pins"} of a stored artifact (new ref). */
int tg__spool_stat(tg_spool *sp, const char *id, json_t **out, tg_error *err);

typedef struct tg__spool_grep_opts {
    const char *pattern; /* PCRE2, UTF-8 */
    size_t pattern_len;
    bool ignore_case;
    bool count_only;      /* count matching lines, return no lines */
    unsigned before;      /* context lines before each match (<= 100) */
    unsigned after;       /* context lines after (<= 100) */
    uint64_t max_matches; /* 0: 100 */
    size_t line_cap;      /* bytes shown per line (0: 512) */
    size_t result_cap;    /* bytes of text in the answer (0: 64 KiB) */
} tg__spool_grep_opts;

/* Matching lines with their 1-based numbers, like grep -n: {"artifact",
 * "pattern","matches":[{"line","offset" (of the match),"text","before":
 * [{"line","text"}],"after":[...]}],"count" (matches listed),"truncated"
 * (more matched than max_matches or result_cap allowed)} (new ref); a
 * context line is listed once, as grep shows it once. With count_only:
 * {"artifact","pattern","count"} counting every matching line. Lines are
 * matched one by one in semantics, but the search runs PCRE2 JIT over
 * multi-MiB buffers. TG_EINVAL for an invalid pattern (the PCRE2 message
 * and offset), TG_ELIMIT when a line needs more than the PCRE2 match limit
 * (a catastrophic pattern such as (a+)+$). Lines over 16 MiB are searched
 * in 16 MiB pieces (a match across a cut is missed). */
int tg__spool_grep(tg_spool *sp, const char *id, const tg__spool_grep_opts *o,
                   json_t **out, tg_error *err);

/* ---------------------------------------------------------- artifact tools */

/* 1 when `name` is one of the artifact tools. */
int tg__spool_is_tool(const char *name);

/* The five tool definitions (artifact_read, artifact_head, artifact_tail,
 * artifact_grep, artifact_stat) as a JSON array (new ref) of {"name",
 * "description","input_schema"}: JSON Schemas (draft 2020-12) whose
 * `artifact` property is an enum of the n ids (those of results that did
 * not come from an artifact tool). NULL on out of memory. */
json_t *tg__spool_tool_defs(const char *const *ids, size_t n);

/* Runs one artifact tool: `tool` its name, args_json its arguments (an
 * object). When `allowed` is not NULL the artifact must be one of its n
 * ids. Returns 0 with *payload the result (JSON text, caller's free), or a
 * TG_E* code with *code an UPPER_SNAKE error code (static string:
 * INVALID_ARGUMENTS, UNKNOWN_TOOL, ARTIFACT_NOT_ALLOWED, INVALID_ARTIFACT_ID,
 * ARTIFACT_NOT_FOUND, ARTIFACT_EVICTED, INVALID_PATTERN, PATTERN_TOO_COMPLEX,
 * TOOL_FAILED) and err->message what went wrong. Results are capped at
 * 64 KiB of text: never spooled again. */
int tg__spool_tool_exec(tg_spool *sp, const char *tool, const char *args_json,
                        size_t args_len, const char *const *allowed, size_t n,
                        char **payload, const char **code, tg_error *err);

#endif
