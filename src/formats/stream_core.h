/* SPDX-License-Identifier: MIT */
/*
 * stream_core.h - what the stream reader's core (stream.c, with the fast
 * paths' readers in stream_fast.c) shares with its four provider files
 * (stream_openai_chat.c, stream_openai_responses.c, stream_anthropic.c,
 * stream_gemini.c): the reader's state, the calls whose arguments are still
 * arriving, and the one rule by which they complete.
 *
 * Calls in any order. A provider may write several calls at once: deltas
 * of tool_calls[0] and [1] alternating (Chat Completions), of two
 * output_index values (Responses), of two content blocks (Anthropic). So
 * every call is gathered under its own key - the tool call index, the
 * output_index, the block index - from its first event to its last,
 * whatever comes between, and
 *
 *   - it completes when the stream says it is done: content_block_stop or
 *     message_stop (Anthropic); response.function_call_arguments.done,
 *     response.output_item.done or response.completed (Responses); a
 *     finish_reason or data: [DONE], or its index taken by a call with
 *     another id (Chat Completions); on arrival (Gemini, whose calls are
 *     whole in their event). Chat Completions has no event that ends one
 *     call, so there a call also completes early: once its arguments
 *     close as exactly one JSON object (with an id and a name) and the
 *     stream has moved on - a piece for another index, or an event with
 *     no piece. Bytes after a closed object can only be white space or
 *     make it malformed, never another valid value, so the call is the
 *     one the model meant;
 *   - a complete call is handed out by tg_stream_next_call and never
 *     changes after: pieces for it that come later (a model writing on, a
 *     server going back to it, a delta after its block stopped) are
 *     ignored - white space silently, anything else reported in a warning
 *     of the turn naming the call and the bytes. The complete calls stay
 *     under their keys to be recognised;
 *   - when the input ends first, a call whose arguments close as one JSON
 *     value is complete (nothing else for its index followed), and one
 *     whose arguments do not was cut: MALFORMED_ARGUMENTS, what arrived
 *     kept - however many were open;
 *   - the finished turn holds the calls in the order the model wrote them
 *     (by key; calls under the same key in the order they started; calls
 *     without a key last), whatever order they completed in, so results
 *     are rendered in that order too. tg_stream_next_call hands them out in
 *     the order they completed, and the pointers stay the turn's.
 *
 * The end is the end: after data: [DONE] (any provider), message_stop
 * (Anthropic) or response.completed / .failed / .incomplete (Responses)
 * every event is ignored, counted, and reported in a warning of the turn.
 * And a stream that yields no call must be an answer: it carried text or
 * reached a stop (finish_reason, stop_reason, finishReason, an end event),
 * without an error - else tg_stream_finish fails saying why.
 */
#ifndef TG_FORMATS_STREAM_CORE_H
#define TG_FORMATS_STREAM_CORE_H

/* SHA256_CTX, deprecated in OpenSSL 3, as checksum.c and gemini.c use it:
 * a context in the stream, no allocation. */
#define OPENSSL_SUPPRESS_DEPRECATED

#include <jansson.h>
#include <openssl/sha.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "buf.h"
#include "calls.h"
#include "hashmap.h"
#include "json_fast.h"
#include "sse.h"
#include "stream.h"

/* The providers, in the order of their names' table (stream.c). */
enum {
    TG__SP_NONE,
    TG__SP_CHAT,
    TG__SP_RESP,
    TG__SP_ANTH,
    TG__SP_GEMINI,
    TG__SP_COUNT
};

/* No key: the event named none (or not a non-negative integer). */
#define TG__NO_KEY (-1LL)

/* What the Chat early rule (stream_openai_chat.c) saw of a call's
 * arguments so far. */
enum {
    TG__SCAN_BEFORE, /* only white space */
    TG__SCAN_IN,     /* inside the object the first '{' opened */
    TG__SCAN_CLOSED, /* that object closed, white space after it */
    TG__SCAN_NEVER   /* they cannot close as exactly one clean object */
};

/* The Chat early rule's view of a call's arguments: how far it read them,
 * and what it saw. */
typedef struct tg__close_scan {
    size_t at;           /* argument bytes read */
    size_t depth;        /* open objects and arrays */
    unsigned char state; /* TG__SCAN_* */
    bool in_str, esc;    /* inside a string; after its backslash */
} tg__close_scan;

/* A call under its key: open while its arguments arrive, then complete
 * (done), kept to recognise pieces that come after. */
typedef struct tg__pending {
    long long key;   /* tool call index, output_index or block index */
    uint64_t seq;    /* the order in which the calls started */
    char *item_id;   /* Responses: the item's own id, NULL when none */
    char *id;        /* NULL until the wire sends it */
    char *name;      /* NULL until the wire sends it */
    char *type;      /* Chat: the tool call type when sent */
    tg__buf args;    /* the joined pieces, at most the stream's cap */
    size_t received; /* argument bytes received, kept or not */
    int has_args;    /* an arguments string (or piece) arrived */
    int final_args;  /* args hold the provider's whole string (.done) */
    json_t *input;   /* an arguments value sent whole (new ref) or NULL */
    tg__close_scan scan;
    tg_call *done;      /* the call it completed as (the turn's), or NULL */
    size_t late_pieces; /* pieces ignored because they came after that */
    size_t late_bytes;  /* ... their argument bytes */
    uint64_t late_line; /* ... the line the first of them began on */
} tg__pending;

/* A complete call and its place in the model's order. */
typedef struct tg__placed {
    tg_call *call; /* the turn's */
    long long key;
    uint64_t seq;
    bool handed; /* tg_stream_next_call handed it out */
} tg__placed;

/* What a provider's argument setter (calls.h) gets from the core. */
typedef struct tg__stream_args {
    const tg_stream *s;
    tg__pending *p;
    bool complete; /* else the input ended inside the arguments */
} tg__stream_args;

/* A provider's part of the reader. */
typedef struct tg__stream_provider {
    /* Reads one event (doc borrowed) of the provider's stream. Returns 0 or
     * TG_ENOMEM. */
    int (*event)(tg_stream *s, const json_t *doc);
    /* The fast path (stream_fast.c) for its most frequent events, or NULL:
     * reads s->cur; returns 0, TG__FAST_BAIL (nothing happened: the
     * document path reads the event) or TG_ENOMEM. */
    int (*fast)(tg_stream *s);
    /* Builds the call of a->p (which the caller frees) through the
     * provider's builder (calls.h); a->complete says whether it completed.
     * Returns 0 with *out set, or TG_ENOMEM. NULL for a provider whose
     * calls arrive whole and never stay open (Gemini). */
    int (*build)(const tg__stream_args *a, tg_call **out);
    /* An arguments value sent whole (no pieces) completes a call whose
     * input ended: Chat and Responses (a proxy's object). Not Anthropic,
     * whose block start always carries an input before the pieces. */
    bool whole_value_completes;
} tg__stream_provider;

extern const tg__stream_provider tg__stream_openai_chat;
extern const tg__stream_provider tg__stream_openai_responses;
extern const tg__stream_provider tg__stream_anthropic;
extern const tg__stream_provider tg__stream_gemini;

struct tg_stream {
    tg__sse sse;
    int provider; /* TG__SP_* */
    int fixed;    /* the caller named the provider */
    int fed;      /* bytes were fed: the cap is fixed */
    int finished;
    int slow;           /* the fast paths are off (tests compare the two) */
    int no_early;       /* Chat's early rule is off (tests compare) */
    size_t max;         /* cap of one event's data and one call's arguments */
    tg_turn *turn;      /* complete calls, in completion order until finish
                           puts them in the model's; NULL once handed */
    tg__placed *placed; /* per call of turn, in the same order */
    size_t capplaced;
    size_t next;         /* the next call tg_stream_next_call hands out */
    tg__pending **keyed; /* calls open and complete, by (key, seq) */
    size_t nkeyed, capkeyed;
    size_t nopen;           /* how many of them are open */
    tg__pending *last;      /* Chat: the open call the last piece went to */
    uint64_t seq;           /* calls started so far */
    uint64_t ev_first_line; /* the first data line of the event being read */
    /* What the stream said so far, for a turn without calls (finish). */
    bool said;    /* text, a call's piece, a block: the model said something */
    bool stopped; /* a stop reason or an end event arrived */
    /* The end (tg__stream_end) and what came after it. */
    bool ended;
    const char *end_event; /* static: what ended it */
    uint64_t end_line;
    uint64_t ignored_events, ignored_line; /* after the end; the first's */
    size_t late_calls;   /* complete calls that pieces came after */
    char bad[200];       /* a provider's word on an event of a bad shape */
    tg__hmap ids;        /* complete calls by id (the first's): turn index */
    bool repeated_ids;   /* two complete calls share an id */
    SHA256_CTX hash;     /* Gemini: the events so far, for made-up ids */
    char api_error[200]; /* the first error the provider streamed, or "" */
    tg__jcur cur;        /* the fast paths' cursor (its scratch is kept) */
    tg__buf arena;       /* strings a fast path read from the current event */
};

/* ------------------------------------------------------------ the core */

/* Opens a call under key (TG__NO_KEY allowed) after the calls already
 * under it. NULL on out of memory. */
tg__pending *tg__stream_open(tg_stream *s, long long key);
/* The newest call under key, open or complete (p->done), or NULL. */
tg__pending *tg__stream_find(tg_stream *s, long long key);
/* The Responses call whose item id is item_id, open or complete (looked
 * for under key first, when it is not TG__NO_KEY), or NULL. */
tg__pending *tg__stream_find_item(tg_stream *s, const char *item_id,
                                  long long key);
/* The stream said p is done: its call is built and appended, and p kept
 * as complete (nothing when it is complete already). Returns 0 or
 * TG_ENOMEM. */
int tg__stream_complete(tg_stream *s, tg__pending *p);
/* Chat's early rule: p's call is built and appended, as complete, only
 * when it comes out without an error (a call that would not run is left
 * open, for the end to decide; the scan remembers). Returns 0 or
 * TG_ENOMEM. */
int tg__stream_complete_clean(tg_stream *s, tg__pending *p);
/* The stream said every open call is done. Returns 0 or TG_ENOMEM. */
int tg__stream_complete_all(tg_stream *s);
/* Appends a call that arrived whole (ownership taken, also on failure).
 * Returns 0 or TG_ENOMEM. */
int tg__stream_add_whole(tg_stream *s, tg_call *call);
/* Whether a call with this id has completed. */
int tg__stream_id_complete(const tg_stream *s, const char *id);
/* A piece for complete call p arrived: ignored, and, unless it is only
 * white space and `other` (it carries another name or type than the call
 * has) is false, counted for the warning finish gives. */
void tg__stream_late(tg_stream *s, tg__pending *p, const char *piece, size_t n,
                     bool other);
/* A piece of arguments for p (NULL: for no call this stream knows,
 * ignored): added while p is open, late (tg__stream_late) once it is
 * complete. Returns 0 or TG_ENOMEM. */
int tg__stream_piece(tg_stream *s, tg__pending *p, const char *piece, size_t n);
/* The provider's end event arrived (`what`, static, names it): what
 * follows is ignored. */
void tg__stream_end(tg_stream *s, const char *what);
/* An event of the provider's stream has a bad shape: the message (the
 * event's number and line are added) is kept; returns TG_EFORMAT. */
int tg__stream_bad_event(tg_stream *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Adds a piece of p's arguments; past the cap the bytes are counted only.
 * Returns 0 or TG_ENOMEM. */
int tg__stream_add_args(tg__pending *p, const char *piece, size_t n);
/* Replaces p's arguments with the provider's whole string. */
int tg__stream_set_final_args(tg__pending *p, const char *text, size_t n);
/* Copies str into *field unless the field is set already or str is NULL or
 * empty. Returns 0 or TG_ENOMEM. */
int tg__stream_set_once(char **field, const char *str);

/* The stream's part of every streamed call's arguments: past the cap,
 * ARGUMENTS_TOO_LARGE; cut by the end of the input, MALFORMED_ARGUMENTS
 * with what arrived kept. Returns 1 when it set them, 0 when the provider's
 * own rule applies, or TG_ENOMEM. */
int tg__stream_args_unusable(tg_call *call, const tg__stream_args *a);
/* The argument setter (calls.h, src a tg__stream_args) of the providers
 * whose arguments are one JSON string sent in pieces (Chat, Responses): the
 * stream's part first, then the joined pieces as that string - or a value
 * a proxy sent whole (never a string), or none: as in a whole response. */
int tg__stream_string_args(tg_call *call, const void *src);
/* Whether the n bytes at s are only JSON white space. */
int tg__stream_blank(const char *s, size_t n);
/* A string member of o (borrowed), or NULL. */
const char *tg__stream_str(const json_t *o, const char *key);
/* An integer member as long long, TG__NO_KEY when absent or not a
 * non-negative integer. */
long long tg__stream_int(const json_t *o, const char *key);

/* ------------------------------------------------------------ fast paths
 *
 * Nearly every event of a stream is one small piece: a Chat Completions
 * chunk, an Anthropic content_block_delta, a Responses delta. A provider's
 * fast path reads it with the JSON cursor (json_fast.h) instead of building
 * a document, gathering what it reads into s->arena; it acts (through the
 * same core functions as the document path) only once the whole event was
 * read, so when it gives up (TG__FAST_BAIL: anything unusual, a duplicate
 * key, JSON that is not plainly valid, an event kind it does not handle)
 * nothing has happened and the document path reads the event instead,
 * owning every rule and every message. The readers (stream_fast.c): */

#define TG__FAST_BAIL 1

/* A string member read into the arena. */
typedef struct tg__span {
    size_t off, len; /* in s->arena, NUL-terminated there */
    int seen;        /* the key was there (maybe null) */
    int set;         /* ... with a string value */
} tg__span;

/* A string member (or null: not set) into the arena; a second one is a
 * duplicate key. 0, TG__FAST_BAIL or TG_ENOMEM. */
int tg__stream_fast_str(tg_stream *s, tg__span *sp);
/* A small non-negative integer member (what tg__stream_int reads); a second
 * one, or anything else, gives up. */
int tg__stream_fast_uint(tg_stream *s, long long *out, int *seen);

/* The span's string (borrowed from the arena), NULL when not set. Inline,
 * as the next three: they run for every member of every event. */
static inline const char *tg__stream_span_str(tg_stream *s, const tg__span *sp)
{
    return sp->set ? s->arena.data + sp->off : NULL;
}

/* Whether the span is set to want. */
static inline int tg__stream_span_is(tg_stream *s, const tg__span *sp,
                                     const char *want)
{
    return sp->set && strcmp(s->arena.data + sp->off, want) == 0;
}

/* Skips a value: 0 or TG__FAST_BAIL. */
static inline int tg__stream_fast_skip(tg_stream *s)
{
    return tg__jcur_skip(&s->cur) == 0 ? 0 : TG__FAST_BAIL;
}

/* A member whose value is an object (entered) or null (skipped); *is_obj
 * says which. A second one gives up. */
static inline int tg__stream_fast_object_or_null(tg_stream *s, int *seen,
                                                 int *is_obj)
{
    if (*seen)
        return TG__FAST_BAIL;
    *seen = 1;
    int ch = tg__jcur_peek(&s->cur);
    *is_obj = ch == '{';
    if (ch == 'n')
        return tg__stream_fast_skip(s);
    return *is_obj ? (s->cur.p++, 0) : TG__FAST_BAIL;
}

#endif
