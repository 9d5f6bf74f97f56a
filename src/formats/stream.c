/* SPDX-License-Identifier: MIT */
/*
 * stream.c - streamed model turns: the public tg_stream_* reader. Bytes go
 * through the SSE reader (sse.c); each event's data is one JSON object of
 * the provider's stream, and this file assembles tool calls from them:
 *
 *   openai-chat       chat.completion.chunk objects; choices[0].delta.
 *                     tool_calls[k] pieces joined by their index (id, type
 *                     and name arrive once, arguments in pieces). A call
 *                     closes when a higher index starts, at a finish_reason,
 *                     or at data: [DONE].
 *   openai-responses  response.output_item.added (a function_call item)
 *                     opens a call, response.function_call_arguments.delta
 *                     adds to it, .done (whose whole arguments string wins)
 *                     or response.output_item.done closes it.
 *   anthropic         content_block_start with a tool_use block opens,
 *                     content_block_delta input_json_delta.partial_json adds,
 *                     content_block_stop (or message_stop) closes.
 *   gemini            each event a GenerateContentResponse whose
 *                     candidates[0].content.parts hold whole functionCall
 *                     objects: a call closes as it arrives.
 *
 * A closed call is built exactly as the provider's whole-document parser
 * builds it (the same ids for missing ones, the same errors, the same
 * argument setters), so a stream and the response it adds up to give the
 * same call records. Calls still open when the input ends carry
 * MALFORMED_ARGUMENTS, so the rest of the turn still runs.
 *
 * The arguments of one call are capped like an event's data (the reader's
 * max_data): memory follows the configuration, not the input. A call over
 * the cap ends with ARGUMENTS_TOO_LARGE; its further pieces are counted,
 * not kept.
 */
/* SHA256_Init/Update/Final, deprecated in OpenSSL 3, as checksum.c and
 * gemini.c use them: a context in the stream, no allocation. */
#define OPENSSL_SUPPRESS_DEPRECATED

#include "stream.h"

#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "format.h"
#include "json_fast.h"
#include "sse.h"

enum provider { P_NONE, P_CHAT, P_RESP, P_ANTH, P_GEMINI, P_COUNT };

static const char *const provider_names[P_COUNT] = {
    NULL, "openai-chat", "openai-responses", "anthropic", "gemini"};

#define NO_KEY (-1LL)

/* A call whose arguments are still arriving. */
typedef struct pending {
    long long key;   /* tool call index, block index or output_index */
    char *item_id;   /* Responses: the item's own id, NULL when none */
    char *id;        /* NULL until the wire sends it */
    char *name;      /* NULL until the wire sends it */
    char *type;      /* Chat: the tool call type when sent */
    tg_buf args;     /* the joined pieces, at most the stream's cap */
    size_t received; /* argument bytes received, kept or not */
    int has_args;    /* an arguments string (or piece) arrived */
    int final_args;  /* args hold the provider's whole string (.done) */
    json_t *input;   /* an arguments object sent whole (new ref) or NULL */
} pending;

struct tg_stream {
    tg_sse sse;
    int provider;
    int fixed; /* the caller named the provider */
    int fed;   /* bytes were fed: the cap is fixed */
    int finished;
    int slow;       /* the fast paths are off (tests compare the two) */
    size_t max;     /* cap of one event's data and one call's arguments */
    tg_turn *turn;  /* closed calls, in closing order; NULL once handed */
    size_t next;    /* the next call tg_stream_next_call hands out */
    pending **open; /* calls still open, in opening order */
    size_t nopen, capopen;
    size_t *ids; /* hash set of closed ids: turn index + 1, 0 empty */
    size_t idcap;
    SHA256_CTX hash;     /* Gemini: the events so far, for made-up ids */
    char api_error[200]; /* the first error the provider streamed, or "" */
    tg_jcur cur;         /* the fast paths' cursor (its scratch is kept) */
    tg_buf arena;        /* strings a fast path read from the current event */
};

/* ------------------------------------------------------------ helpers */

static int is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
            return 0;
    return 1;
}

static const char *str_member(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static int str_is(const char *s, const char *want)
{
    return s != NULL && strcmp(s, want) == 0;
}

/* An integer member as long long, or NO_KEY when absent or not one. */
static long long int_member(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key); /* borrowed */
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return NO_KEY;
    return (long long)json_integer_value(v);
}

static int nomem(tg_error *err)
{
    return tg__error_set(err, TG_ENOMEM, "out of memory reading the stream");
}

static void pending_free(pending *p)
{
    if (p == NULL)
        return;
    free(p->item_id);
    free(p->id);
    free(p->name);
    free(p->type);
    tg__buf_cleanup(&p->args);
    json_decref(p->input);
    free(p);
}

static pending *open_call(tg_stream *s, long long key)
{
    if (s->nopen == s->capopen) {
        size_t cap = s->capopen ? s->capopen * 2 : 8;
        pending **o = realloc(s->open, cap * sizeof *o);
        if (o == NULL)
            return NULL;
        s->open = o;
        s->capopen = cap;
    }
    pending *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->key = key;
    tg__buf_init(&p->args, s->max);
    s->open[s->nopen++] = p;
    return p;
}

/* The open call with key (and, when item_id is given, that item id):
 * searched from the newest, which is nearly always the one. */
static pending *find_open(tg_stream *s, long long key, const char *item_id)
{
    for (size_t i = s->nopen; i-- > 0;) {
        pending *p = s->open[i];
        if (item_id != NULL ? str_is(p->item_id, item_id) : p->key == key)
            return p;
    }
    return NULL;
}

/* Adds a piece of the arguments; past the cap the bytes are counted only. */
static int add_args(pending *p, const char *piece, size_t n)
{
    p->has_args = 1;
    p->received += n;
    if (p->args.truncated)
        return 0;
    int rc = tg__buf_append(&p->args, piece, n);
    return rc == TG_ELIMIT ? 0 : rc;
}

/* Replaces the arguments with the provider's whole string. */
static int set_final_args(pending *p, const char *text, size_t n)
{
    p->args.len = 0;
    p->args.truncated = false;
    p->received = 0;
    p->final_args = 1;
    return add_args(p, text, n);
}

/* Copies s into *field unless the field is set already or s is empty. */
static int set_once(char **field, const char *s)
{
    if (*field != NULL || s == NULL || *s == '\0')
        return 0;
    return tg__strset(field, s);
}

/* ------------------------------------------------------------ closed ids */

static size_t hash_str(const char *s)
{
    size_t h = (size_t)14695981039346656037ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * (size_t)1099511628211ULL;
    return h;
}

/* Whether id was closed before; records it (turn index idx) when not.
 * Returns 1 duplicate, 0 new, TG_ENOMEM. */
static int remember_id(tg_stream *s, const char *id, size_t idx)
{
    if ((s->turn->n + 1) * 2 > s->idcap) {
        size_t cap = s->idcap ? s->idcap * 2 : 64;
        size_t *t = calloc(cap, sizeof *t);
        if (t == NULL)
            return TG_ENOMEM;
        for (size_t i = 0; i < s->idcap; i++) {
            if (s->ids[i] == 0)
                continue;
            size_t h = hash_str(s->turn->calls[s->ids[i] - 1]->id) & (cap - 1);
            while (t[h] != 0)
                h = (h + 1) & (cap - 1);
            t[h] = s->ids[i];
        }
        free(s->ids);
        s->ids = t;
        s->idcap = cap;
    }
    size_t h = hash_str(id) & (s->idcap - 1);
    while (s->ids[h] != 0) {
        if (strcmp(s->turn->calls[s->ids[h] - 1]->id, id) == 0)
            return 1;
        h = (h + 1) & (s->idcap - 1);
    }
    s->ids[h] = idx + 1;
    return 0;
}

/* Whether a call with this id has closed already. */
static int id_closed(const tg_stream *s, const char *id)
{
    if (id == NULL || s->idcap == 0)
        return 0;
    size_t h = hash_str(id) & (s->idcap - 1);
    while (s->ids[h] != 0) {
        if (strcmp(s->turn->calls[s->ids[h] - 1]->id, id) == 0)
            return 1;
        h = (h + 1) & (s->idcap - 1);
    }
    return 0;
}

/* Appends a finished call to the turn (ownership taken), checking it the
 * way tg__turn_check_calls does: its names held to their limits, and
 * marked the way tg__turn_mark_duplicates would when its id was seen
 * before. */
static int add_call(tg_stream *s, tg_call *call)
{
    size_t idx = s->turn->n;
    int rc = tg__turn_add_call(s->turn, call);
    if (rc != 0 || (rc = tg__call_check_names(call)) != 0)
        return rc;
    int dup = remember_id(s, call->id, idx);
    if (dup < 0)
        return dup;
    if (dup == 1)
        return tg__call_set_pre_error(call, "DUPLICATE_CALL_ID",
                                      "call id '%s' appears more than once "
                                      "in this turn",
                                      call->id);
    return 0;
}

/* ------------------------------------------------------------ building calls
 */

/* Sets arguments carried as one JSON string (Chat, Responses), or sent
 * whole as an object, or absent: as the whole-document parsers do. */
static int set_string_args(tg_call *call, pending *p)
{
    if (p->has_args)
        return tg__call_set_args_text(call, tg__buf_cstr(&p->args),
                                      p->args.len);
    if (p->input != NULL && !json_is_null(p->input))
        return tg__call_set_args(call, p->input);
    json_t *empty = json_object(); /* new ref */
    int rc = empty ? tg__call_set_args(call, empty) : TG_ENOMEM;
    json_decref(empty);
    return rc;
}

/* Anthropic: the joined partial_json pieces stand for the block's input
 * object, which the whole message carries as an object; so the call gets
 * the object (no raw string), as the message's parser would give it. */
static int set_object_args(tg_call *call, pending *p)
{
    if (is_blank(tg__buf_cstr(&p->args), p->args.len)) {
        if (p->input != NULL && !json_is_null(p->input))
            return tg__call_set_args(call, p->input);
        json_t *empty = json_object(); /* new ref */
        int rc = empty ? tg__call_set_args(call, empty) : TG_ENOMEM;
        json_decref(empty);
        return rc;
    }
    json_t *obj = tg__json_fast_load(p->args.data, p->args.len, 1); /* new */
    if (obj == NULL) {
        json_error_t jerr;
        obj = json_loadb(p->args.data, p->args.len, JSON_REJECT_DUPLICATES,
                         &jerr);
        if (obj == NULL && json_error_code(&jerr) == json_error_out_of_memory)
            return TG_ENOMEM;
    }
    int rc;
    if (json_is_object(obj))
        rc = tg__call_set_args(call, obj);
    else /* the text setter owns the message for what does not decode */
        rc = tg__call_set_args_text(call, p->args.data, p->args.len);
    json_decref(obj);
    return rc;
}

/* Turns p into a call and appends it. `closed`: the provider closed its
 * arguments (else the stream ended inside them). Frees p. */
static int close_pending(tg_stream *s, pending *p, int closed)
{
    char genid[64];
    const char *fmt = provider_names[s->provider];
    const char *id = p->id;
    size_t pos = p->key >= 0 ? (size_t)p->key : s->turn->n;
    int missing_id = id == NULL;
    if (missing_id) {
        snprintf(genid, sizeof genid,
                 s->provider == P_RESP ? "missing-call-id-%zu"
                                       : "missing-id-%zu",
                 pos);
        id = genid;
    }
    int rc = TG_ENOMEM;
    tg_call *call = tg__call_new(id, p->name, fmt);
    if (call == NULL)
        goto fail;
    if (s->provider == P_RESP && p->item_id != NULL) {
        call->meta = json_pack("{s:s}", "item_id", p->item_id); /* new ref */
        if (call->meta == NULL)
            goto fail;
    }

    if (p->args.truncated)
        rc = tg__call_set_pre_error(call, "ARGUMENTS_TOO_LARGE",
                                    "arguments of call '%s' pass the stream's "
                                    "limit of %zu bytes (%zu bytes received)",
                                    id, s->max, p->received);
    else if (!closed) {
        /* Keep what arrived for diagnostics; the error is the stream's. */
        rc = tg__call_set_args_text(call, tg__buf_cstr(&p->args), p->args.len);
        if (rc == 0)
            rc = tg__call_set_pre_error(
                call, "MALFORMED_ARGUMENTS",
                "the stream ended inside the arguments of call %s (%zu "
                "bytes received)%s%.200s",
                id, p->received,
                s->api_error[0] ? "; the stream carried an error: " : "",
                s->api_error);
    } else if (s->provider == P_ANTH)
        rc = set_object_args(call, p);
    else
        rc = set_string_args(call, p);
    if (rc != 0)
        goto fail;

    /* A malformed call outranks malformed arguments: it says more. The
     * messages are the whole-document parsers'. */
    if (missing_id) {
        if (s->provider == P_RESP)
            rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                        "function_call item %zu has no "
                                        "call_id (a non-empty string); it "
                                        "was given the id '%s'",
                                        pos, genid);
        else if (s->provider == P_ANTH)
            rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                        "content[%zu] (tool_use) has no id (a "
                                        "non-empty string); it was given the "
                                        "id '%s'",
                                        pos, genid);
        else
            rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                        "tool_calls[%zu] has no id (a "
                                        "non-empty string); it was given the "
                                        "id '%s'",
                                        pos, genid);
    } else if (s->provider == P_CHAT && p->type != NULL &&
               strcmp(p->type, "function") != 0)
        rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                    "tool call '%s' has type '%.64s'; only "
                                    "\"function\" tool calls are supported",
                                    id, p->type);
    else if (p->name == NULL) {
        if (s->provider == P_RESP)
            rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                        "function_call '%s' has no name", id);
        else if (s->provider == P_ANTH)
            rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                        "tool_use '%s' has no name", id);
        else
            rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                        "tool call '%s' has no function.name",
                                        id);
    }
    if (rc != 0)
        goto fail;
    pending_free(p);
    return add_call(s, call);
fail:
    tg__call_free(call);
    pending_free(p);
    return rc;
}

/* Closes open call i (removing it from the open list, keeping the order). */
static int close_at(tg_stream *s, size_t i, int closed)
{
    pending *p = s->open[i];
    memmove(s->open + i, s->open + i + 1, (s->nopen - i - 1) * sizeof *s->open);
    s->nopen--;
    return close_pending(s, p, closed);
}

static int close_one(tg_stream *s, pending *p)
{
    for (size_t i = s->nopen; i-- > 0;)
        if (s->open[i] == p)
            return close_at(s, i, 1);
    return 0;
}

/* Closes every open call (below key `below` unless it is NO_KEY), oldest
 * first. */
static int close_all(tg_stream *s, long long below)
{
    size_t i = 0;
    while (i < s->nopen) {
        if (below != NO_KEY && s->open[i]->key >= below) {
            i++;
            continue;
        }
        int rc = close_at(s, i, 1);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------ providers */

/* Which provider's stream an event belongs to, from its own shape. */
static int classify(const json_t *doc)
{
    const char *type = str_member(doc, "type");
    if (type != NULL) {
        if (strncmp(type, "response.", 9) == 0)
            return P_RESP;
        static const char *const anth[] = {"message_start",
                                           "message_delta",
                                           "message_stop",
                                           "content_block_start",
                                           "content_block_delta",
                                           "content_block_stop",
                                           "ping"};
        for (size_t i = 0; i < sizeof anth / sizeof anth[0]; i++)
            if (strcmp(type, anth[i]) == 0)
                return P_ANTH;
    }
    if (str_is(str_member(doc, "object"), "chat.completion.chunk") ||
        json_is_array(json_object_get(doc, "choices")))
        return P_CHAT;
    if (json_object_get(doc, "candidates") != NULL ||
        json_object_get(doc, "promptFeedback") != NULL ||
        json_object_get(doc, "usageMetadata") != NULL)
        return P_GEMINI;
    return P_NONE;
}

/* Whose stream an event cut short belongs to, from its type and the
 * start of its data (the members classify reads come first in every
 * provider's events). */
static int sniff(const tg_sse_event *ev)
{
    static const struct {
        const char *needle;
        int provider;
    } marks[] = {
        {"\"type\":\"response.", P_RESP},
        {"\"type\":\"message_", P_ANTH},
        {"\"type\":\"content_block_", P_ANTH},
        {"\"chat.completion.chunk\"", P_CHAT},
        {"\"candidates\"", P_GEMINI},
    };
    if (strncmp(ev->type, "response.", 9) == 0)
        return P_RESP;
    if (strncmp(ev->type, "message_", 8) == 0 ||
        strncmp(ev->type, "content_block_", 14) == 0)
        return P_ANTH;
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (memmem(ev->data, ev->data_len, marks[i].needle,
                   strlen(marks[i].needle)) != NULL)
            return marks[i].provider;
    return P_NONE;
}

/* One tool_calls[j] piece of a Chat Completions delta for index k: id,
 * type and name as sent (NULL when not), the arguments piece as a string
 * (args, n) or, when a proxy sent it whole, as a value (args_value). */
static int chat_piece(tg_stream *s, long long k, const char *id,
                      const char *type, const char *name, const char *args,
                      size_t n, const json_t *args_value)
{
    int rc;
    if (id != NULL && *id == '\0')
        id = NULL;
    pending *p = find_open(s, k, NULL);
    /* An index reused by a new id: some servers number every call 0. The
     * old call is complete. */
    if (p != NULL && id != NULL && p->id != NULL && strcmp(p->id, id) != 0) {
        if ((rc = close_one(s, p)) != 0)
            return rc;
        p = NULL;
    }
    if (p == NULL) {
        /* A higher index starting closes the calls before it. */
        if ((rc = close_all(s, k)) != 0)
            return rc;
        if ((p = open_call(s, k)) == NULL)
            return TG_ENOMEM;
    }
    if (set_once(&p->id, id) != 0 || set_once(&p->type, type) != 0 ||
        set_once(&p->name, name) != 0)
        return TG_ENOMEM;
    if (args != NULL)
        return add_args(p, args, n);
    if (args_value != NULL && !json_is_null(args_value) && p->input == NULL &&
        !p->has_args)
        p->input = json_incref((json_t *)args_value);
    return 0;
}

static int chat_event(tg_stream *s, const json_t *doc)
{
    const json_t *choices = json_object_get(doc, "choices"); /* borrowed */
    size_t n = json_array_size(choices);
    int rc;
    for (size_t c = 0; c < n; c++) {
        const json_t *ch = json_array_get(choices, c); /* borrowed */
        long long ci = int_member(ch, "index");
        if (ci != 0 && !(ci == NO_KEY && c == 0))
            continue; /* only the first choice is the turn (n > 1 aside) */
        const json_t *tcs =
            json_object_get(json_object_get(ch, "delta"), "tool_calls");
        for (size_t j = 0; j < json_array_size(tcs); j++) {
            const json_t *tc = json_array_get(tcs, j); /* borrowed */
            if (!json_is_object(tc))
                continue;
            long long k = int_member(tc, "index");
            const json_t *fn = json_object_get(tc, "function"); /* borrowed */
            const json_t *args = json_object_get(fn, "arguments"); /* b. */
            rc = chat_piece(s, k == NO_KEY ? (long long)j : k,
                            str_member(tc, "id"), str_member(tc, "type"),
                            str_member(fn, "name"), json_string_value(args),
                            json_string_length(args), args);
            if (rc != 0)
                return rc;
        }
        const json_t *fr = json_object_get(ch, "finish_reason"); /* b. */
        if (fr != NULL && !json_is_null(fr) && (rc = close_all(s, NO_KEY)) != 0)
            return rc;
    }
    return 0;
}

/* The open Responses call an event names by item_id, else output_index. */
static pending *resp_find(tg_stream *s, const json_t *doc, const char *item_id)
{
    if (item_id != NULL)
        return find_open(s, NO_KEY, item_id);
    long long oi = int_member(doc, "output_index");
    return oi == NO_KEY ? NULL : find_open(s, oi, NULL);
}

/* Fills p from a function_call item (borrowed). */
static int resp_fill(pending *p, const json_t *item, int whole)
{
    if (set_once(&p->item_id, str_member(item, "id")) != 0 ||
        set_once(&p->id, str_member(item, "call_id")) != 0 ||
        set_once(&p->name, str_member(item, "name")) != 0)
        return TG_ENOMEM;
    const json_t *args = json_object_get(item, "arguments"); /* borrowed */
    if (json_is_string(args)) {
        /* At output_item.done the item's string is the whole arguments. */
        if (whole && !p->final_args)
            return set_final_args(p, json_string_value(args),
                                  json_string_length(args));
        if (!whole && json_string_length(args) > 0)
            return add_args(p, json_string_value(args),
                            json_string_length(args));
    } else if (args != NULL && !json_is_null(args) && p->input == NULL &&
               !p->has_args)
        p->input = json_incref((json_t *)args);
    return 0;
}

static int resp_event(tg_stream *s, const json_t *doc)
{
    const char *type = str_member(doc, "type");
    const char *item_id = str_member(doc, "item_id");
    const json_t *item = json_object_get(doc, "item"); /* borrowed */
    pending *p;
    if (str_is(type, "response.output_item.added")) {
        if (!str_is(str_member(item, "type"), "function_call"))
            return 0;
        if ((p = open_call(s, int_member(doc, "output_index"))) == NULL)
            return TG_ENOMEM;
        return resp_fill(p, item, 0);
    }
    if (str_is(type, "response.function_call_arguments.delta")) {
        const json_t *d = json_object_get(doc, "delta"); /* borrowed */
        if ((p = resp_find(s, doc, item_id)) == NULL || !json_is_string(d))
            return 0;
        return add_args(p, json_string_value(d), json_string_length(d));
    }
    if (str_is(type, "response.function_call_arguments.done")) {
        const json_t *a = json_object_get(doc, "arguments"); /* borrowed */
        if ((p = resp_find(s, doc, item_id)) == NULL)
            return 0;
        int rc = json_is_string(a) ? set_final_args(p, json_string_value(a),
                                                    json_string_length(a))
                                   : 0;
        return rc != 0 ? rc : close_one(s, p);
    }
    if (str_is(type, "response.output_item.done")) {
        if (!str_is(str_member(item, "type"), "function_call"))
            return 0;
        p = resp_find(s, doc, str_member(item, "id"));
        if (p == NULL) {
            /* Its arguments' .done closed it already; else the item was
             * never announced and is whole here. */
            if (id_closed(s, str_member(item, "call_id")))
                return 0;
            if ((p = open_call(s, int_member(doc, "output_index"))) == NULL)
                return TG_ENOMEM;
        }
        int rc = resp_fill(p, item, 1);
        return rc != 0 ? rc : close_one(s, p);
    }
    return 0;
}

static int anth_event(tg_stream *s, const json_t *doc)
{
    const char *type = str_member(doc, "type");
    long long index = int_member(doc, "index");
    pending *p;
    if (str_is(type, "content_block_start")) {
        const json_t *cb = json_object_get(doc, "content_block"); /* b. */
        if (!str_is(str_member(cb, "type"), "tool_use"))
            return 0;
        if ((p = open_call(s, index)) == NULL)
            return TG_ENOMEM;
        if (set_once(&p->id, str_member(cb, "id")) != 0 ||
            set_once(&p->name, str_member(cb, "name")) != 0)
            return TG_ENOMEM;
        const json_t *input = json_object_get(cb, "input"); /* borrowed */
        if (input != NULL)
            p->input = json_incref((json_t *)input);
        return 0;
    }
    if (str_is(type, "content_block_delta")) {
        const json_t *d = json_object_get(doc, "delta");       /* borrowed */
        const json_t *pj = json_object_get(d, "partial_json"); /* borrowed */
        if (!str_is(str_member(d, "type"), "input_json_delta") ||
            !json_is_string(pj) || (p = find_open(s, index, NULL)) == NULL)
            return 0;
        return add_args(p, json_string_value(pj), json_string_length(pj));
    }
    if (str_is(type, "content_block_stop")) {
        p = find_open(s, index, NULL);
        return p == NULL ? 0 : close_one(s, p);
    }
    if (str_is(type, "message_stop"))
        return close_all(s, NO_KEY);
    return 0;
}

/* The deterministic id of records.md for a Gemini call without one,
 * "gemini-<h>-<k>" as gemini.c writes it (k the call's position in the
 * turn), with h the first 8 hex digits of the SHA-256 of the stream's
 * events up to this one: a stream has no single document to hash, so the
 * hash differs from that of the response it adds up to, but the same
 * transcript always gives the same ids and another turn (another
 * responseId, other text) other ones. */
static int gemini_id(tg_stream *s, char *out, size_t size)
{
    SHA256_CTX st = s->hash;
    unsigned char d[SHA256_DIGEST_LENGTH];
    if (SHA256_Final(d, &st) != 1)
        return TG_ENOMEM;
    snprintf(out, size, "gemini-%02x%02x%02x%02x-%zu", d[0], d[1], d[2], d[3],
             s->turn->n);
    return 0;
}

/* parts[i].functionCall (borrowed) as a call, as gemini.c builds it. */
static int gemini_call(tg_stream *s, const json_t *fc, size_t i)
{
    char genid[64];
    const char *id = str_member(fc, "id");
    const char *name = str_member(fc, "name");
    int rc, made_up = id == NULL || *id == '\0';
    if (made_up) {
        if ((rc = gemini_id(s, genid, sizeof genid)) != 0)
            return rc;
        id = genid;
    }
    tg_call *call = tg__call_new(id, name, "gemini");
    if (call == NULL)
        return TG_ENOMEM;
    rc = TG_ENOMEM;
    /* The renderer leaves a made-up id out: the model never saw it. */
    if (made_up && (call->meta = json_pack("{s:b}", "id_generated", 1)) == NULL)
        goto fail;
    const json_t *args = json_object_get(fc, "args"); /* borrowed */
    if (args == NULL || json_is_null(args)) {
        json_t *empty = json_object(); /* new ref */
        rc = empty ? tg__call_set_args(call, empty) : TG_ENOMEM;
        json_decref(empty);
    } else
        rc = tg__call_set_args(call, (json_t *)args);
    if (rc != 0)
        goto fail;
    if (!json_is_object(fc))
        rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                    "parts[%zu].functionCall is not an object",
                                    i);
    else if (name == NULL || *name == '\0')
        rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                    "functionCall '%s' has no name", id);
    if (rc != 0)
        goto fail;
    return add_call(s, call);
fail:
    tg__call_free(call);
    return rc;
}

static int gemini_event(tg_stream *s, const json_t *doc)
{
    const json_t *cand =
        json_array_get(json_object_get(doc, "candidates"), 0); /* borrowed */
    const json_t *parts =
        json_object_get(json_object_get(cand, "content"), "parts"); /* b. */
    for (size_t i = 0; i < json_array_size(parts); i++) {
        const json_t *fc =
            json_object_get(json_array_get(parts, i), "functionCall");
        /* borrowed; text, thought and code parts are not calls */
        if (fc == NULL)
            continue;
        int rc = gemini_call(s, fc, i);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------ fast paths */

/* Nearly every event of a stream is one small piece: a Chat Completions
 * chunk, an Anthropic content_block_delta, a Responses delta. These are
 * read with the JSON cursor (json_fast.h) instead of building a document
 * per event, which was most of the cost of a stream. A fast path only
 * gathers what it reads into s->arena; it acts (through the same functions
 * as the document path) only once the whole event was read, so when it
 * gives up (FAST_BAIL: anything unusual, a duplicate key, JSON that is not
 * plainly valid, an event kind it does not handle) nothing has happened and
 * the document path reads the event instead, owning every rule and every
 * message. */
#define FAST_BAIL 1
#define FAST_MAX 8 /* tool call pieces one chunk may hold on the fast path */

typedef struct span {
    size_t off, len; /* in s->arena, NUL-terminated there */
    int seen;        /* the key was there (maybe null) */
    int set;         /* ... with a string value */
} span;

typedef struct fast_tc {
    long long k; /* tool call index; NO_KEY: a finish_reason marker */
    span id, type, name, args;
} fast_tc;

static int key_is(const char *k, size_t kn, const char *want)
{
    return kn == strlen(want) && memcmp(k, want, kn) == 0;
}

static void cur_reset(tg_jcur *c, const char *text, size_t len)
{
    /* Keeps the scratch buffer across events. */
    c->p = (const unsigned char *)text;
    c->end = c->p + len;
    c->depth = 0;
}

/* A string member (or null: not set) into the arena; a second one is a
 * duplicate key. */
static int fast_str(tg_stream *s, span *sp)
{
    const char *str;
    size_t n;
    if (sp->seen)
        return FAST_BAIL;
    sp->seen = 1;
    if (tg__jcur_peek(&s->cur) == 'n')
        return tg__jcur_skip(&s->cur) == 0 ? 0 : FAST_BAIL;
    if (tg__jcur_string(&s->cur, &str, &n) != 0)
        return FAST_BAIL;
    sp->off = s->arena.len;
    sp->len = n;
    sp->set = 1;
    if (tg__buf_append(&s->arena, str, n) != 0 ||
        tg__buf_append(&s->arena, "", 1) != 0)
        return TG_ENOMEM;
    return 0;
}

static const char *span_str(tg_stream *s, const span *sp)
{
    return sp->set ? s->arena.data + sp->off : NULL;
}

static int span_is(tg_stream *s, const span *sp, const char *want)
{
    return sp->set && strcmp(s->arena.data + sp->off, want) == 0;
}

/* A small non-negative integer member (what int_member reads); anything
 * else gives up. */
static int fast_uint(tg_stream *s, long long *out, int *seen)
{
    tg_jcur *c = &s->cur;
    int ch = tg__jcur_peek(c);
    if (*seen || ch < '0' || ch > '9')
        return FAST_BAIL;
    *seen = 1;
    const unsigned char *p = c->p;
    long long v = 0;
    if (*p == '0')
        p++;
    else
        for (int digits = 0; p < c->end && *p >= '0' && *p <= '9'; p++) {
            if (++digits > 15)
                return FAST_BAIL;
            v = v * 10 + (*p - '0');
        }
    if (p < c->end &&
        (*p == '.' || *p == 'e' || *p == 'E' || (*p >= '0' && *p <= '9')))
        return FAST_BAIL;
    c->p = p;
    *out = v;
    return 0;
}

static int skip_value(tg_stream *s)
{
    return tg__jcur_skip(&s->cur) == 0 ? 0 : FAST_BAIL;
}

/* A member whose value is an object or null; *is_obj says which. */
static int object_or_null(tg_stream *s, int *seen, int *is_obj)
{
    if (*seen)
        return FAST_BAIL;
    *seen = 1;
    int ch = tg__jcur_peek(&s->cur);
    *is_obj = ch == '{';
    if (ch == 'n')
        return skip_value(s);
    return *is_obj ? (s->cur.p++, 0) : FAST_BAIL;
}

/* tool_calls[j]: {index, id, type, function: {name, arguments}}. */
static int fast_tool_call(tg_stream *s, fast_tc *tc, size_t j)
{
    const char *k;
    size_t kn;
    int first = 1, m, rc = 0, seen_index = 0, seen_fn = 0, is_obj;
    memset(tc, 0, sizeof *tc);
    if (tg__jcur_take(&s->cur, '{') != 0)
        return FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(&s->cur, &first, &k, &kn)) == 1) {
        if (key_is(k, kn, "index"))
            rc = fast_uint(s, &tc->k, &seen_index);
        else if (key_is(k, kn, "id"))
            rc = fast_str(s, &tc->id);
        else if (key_is(k, kn, "type"))
            rc = fast_str(s, &tc->type);
        else if (key_is(k, kn, "function")) {
            if ((rc = object_or_null(s, &seen_fn, &is_obj)) != 0 || !is_obj)
                continue;
            int ffirst = 1, fm;
            while (rc == 0 &&
                   (fm = tg__jcur_member(&s->cur, &ffirst, &k, &kn)) == 1) {
                if (key_is(k, kn, "name"))
                    rc = fast_str(s, &tc->name);
                else if (key_is(k, kn, "arguments")) {
                    int ch = tg__jcur_peek(&s->cur);
                    /* Arguments sent whole as an object: the document
                     * path keeps the value. */
                    rc = ch == '"' || ch == 'n' ? fast_str(s, &tc->args)
                                                : FAST_BAIL;
                } else
                    rc = skip_value(s);
            }
            if (rc == 0 && fm != 0)
                rc = FAST_BAIL;
        } else
            rc = skip_value(s);
    }
    if (rc != 0)
        return rc;
    if (m != 0)
        return FAST_BAIL;
    if (!seen_index)
        tc->k = (long long)j;
    return 0;
}

/* choices[c].delta: only tool_calls matter. */
static int fast_delta(tg_stream *s, fast_tc *tcs, size_t *n)
{
    const char *k;
    size_t kn;
    int first = 1, m, rc = 0, seen = 0;
    while (rc == 0 && (m = tg__jcur_member(&s->cur, &first, &k, &kn)) == 1) {
        if (!key_is(k, kn, "tool_calls")) {
            rc = skip_value(s);
            continue;
        }
        if (seen++)
            return FAST_BAIL;
        if (tg__jcur_peek(&s->cur) == 'n') {
            rc = skip_value(s);
            continue;
        }
        if (tg__jcur_take(&s->cur, '[') != 0)
            return FAST_BAIL;
        int efirst = 1, e;
        size_t j = 0;
        while (rc == 0 && (e = tg__jcur_element(&s->cur, &efirst)) == 1) {
            if (*n == FAST_MAX)
                return FAST_BAIL;
            rc = fast_tool_call(s, &tcs[(*n)++], j++);
        }
        if (rc == 0 && e != 0)
            return FAST_BAIL;
    }
    return rc != 0 ? rc : m == 0 ? 0 : FAST_BAIL;
}

static int fast_choices(tg_stream *s, fast_tc *tcs, size_t *n)
{
    const char *k;
    size_t kn;
    int efirst = 1, e, rc = 0;
    if (tg__jcur_take(&s->cur, '[') != 0)
        return FAST_BAIL;
    for (size_t c = 0; rc == 0 && (e = tg__jcur_element(&s->cur, &efirst)) == 1;
         c++) {
        int first = 1, m, seen_index = 0, seen_delta = 0, seen_fr = 0;
        int is_obj, finish = 0;
        long long ci = NO_KEY;
        size_t start = *n;
        if (tg__jcur_take(&s->cur, '{') != 0)
            return FAST_BAIL;
        while (rc == 0 &&
               (m = tg__jcur_member(&s->cur, &first, &k, &kn)) == 1) {
            if (key_is(k, kn, "index"))
                rc = fast_uint(s, &ci, &seen_index);
            else if (key_is(k, kn, "delta")) {
                if ((rc = object_or_null(s, &seen_delta, &is_obj)) == 0 &&
                    is_obj)
                    rc = fast_delta(s, tcs, n);
            } else if (key_is(k, kn, "finish_reason")) {
                if (seen_fr++)
                    return FAST_BAIL;
                finish = tg__jcur_peek(&s->cur) != 'n';
                rc = skip_value(s);
            } else
                rc = skip_value(s);
        }
        if (rc != 0)
            return rc;
        if (m != 0)
            return FAST_BAIL;
        if (ci != 0 && !(ci == NO_KEY && c == 0))
            *n = start; /* not the turn's choice */
        else if (finish) {
            if (*n == FAST_MAX)
                return FAST_BAIL;
            memset(&tcs[*n], 0, sizeof tcs[*n]);
            tcs[(*n)++].k = NO_KEY;
        }
    }
    return rc != 0 ? rc : e == 0 ? 0 : FAST_BAIL;
}

static int fast_chat(tg_stream *s)
{
    fast_tc tcs[FAST_MAX];
    size_t n = 0;
    const char *k;
    size_t kn;
    int first = 1, m, rc = 0, seen = 0;
    if (tg__jcur_take(&s->cur, '{') != 0)
        return FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(&s->cur, &first, &k, &kn)) == 1) {
        if (key_is(k, kn, "choices"))
            rc = seen++ ? FAST_BAIL : fast_choices(s, tcs, &n);
        /* Members by which another provider's event would be told. */
        else if (key_is(k, kn, "type") || key_is(k, kn, "candidates") ||
                 key_is(k, kn, "promptFeedback") ||
                 key_is(k, kn, "usageMetadata"))
            return FAST_BAIL;
        else
            rc = skip_value(s);
    }
    if (rc != 0)
        return rc;
    if (m != 0 || !seen || tg__jcur_end(&s->cur) != 0)
        return FAST_BAIL;
    for (size_t i = 0; i < n; i++) {
        fast_tc *t = &tcs[i];
        if (t->k == NO_KEY)
            rc = close_all(s, NO_KEY);
        else
            rc = chat_piece(s, t->k, span_str(s, &t->id), span_str(s, &t->type),
                            span_str(s, &t->name), span_str(s, &t->args),
                            t->args.len, NULL);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Anthropic content_block_delta; every other event gives up. */
static int fast_anth(tg_stream *s)
{
    span type = {0}, dtype = {0}, pj = {0};
    long long index = NO_KEY;
    const char *k;
    size_t kn;
    int first = 1, m, rc = 0, seen_index = 0, seen_delta = 0, is_obj;
    if (tg__jcur_take(&s->cur, '{') != 0)
        return FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(&s->cur, &first, &k, &kn)) == 1) {
        if (key_is(k, kn, "type"))
            rc = fast_str(s, &type);
        else if (key_is(k, kn, "index"))
            rc = fast_uint(s, &index, &seen_index);
        else if (key_is(k, kn, "delta")) {
            if ((rc = object_or_null(s, &seen_delta, &is_obj)) != 0 || !is_obj)
                continue;
            int dfirst = 1, dm;
            while (rc == 0 &&
                   (dm = tg__jcur_member(&s->cur, &dfirst, &k, &kn)) == 1) {
                if (key_is(k, kn, "type"))
                    rc = fast_str(s, &dtype);
                else if (key_is(k, kn, "partial_json"))
                    rc = fast_str(s, &pj);
                else
                    rc = skip_value(s);
            }
            if (rc == 0 && dm != 0)
                rc = FAST_BAIL;
        } else
            rc = skip_value(s);
    }
    if (rc != 0)
        return rc;
    if (m != 0 || tg__jcur_end(&s->cur) != 0 ||
        !span_is(s, &type, "content_block_delta"))
        return FAST_BAIL;
    pending *p;
    if (!span_is(s, &dtype, "input_json_delta") || !pj.set ||
        (p = find_open(s, index, NULL)) == NULL)
        return 0;
    return add_args(p, span_str(s, &pj), pj.len);
}

/* A Responses event other than the four that open and close calls: an
 * arguments delta, or one of the many that carry text, reasoning or
 * progress and no call. */
static int fast_resp(tg_stream *s)
{
    span type = {0}, item_id = {0}, delta = {0};
    long long oi = NO_KEY;
    const char *k;
    size_t kn;
    int first = 1, m, rc = 0, seen_oi = 0;
    if (tg__jcur_take(&s->cur, '{') != 0)
        return FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(&s->cur, &first, &k, &kn)) == 1) {
        if (key_is(k, kn, "type"))
            rc = fast_str(s, &type);
        else if (key_is(k, kn, "item_id"))
            rc = fast_str(s, &item_id);
        else if (key_is(k, kn, "output_index"))
            rc = fast_uint(s, &oi, &seen_oi);
        else if (key_is(k, kn, "delta")) {
            /* Not a string: the document path ignores it too. */
            if (delta.seen)
                rc = FAST_BAIL;
            else if (tg__jcur_peek(&s->cur) == '"')
                rc = fast_str(s, &delta);
            else {
                delta.seen = 1;
                rc = skip_value(s);
            }
        } else
            rc = skip_value(s);
    }
    if (rc != 0)
        return rc;
    const char *t = span_str(s, &type);
    if (m != 0 || tg__jcur_end(&s->cur) != 0 || t == NULL ||
        strncmp(t, "response.", 9) != 0 ||
        strcmp(t, "response.output_item.added") == 0 ||
        strcmp(t, "response.output_item.done") == 0 ||
        strcmp(t, "response.function_call_arguments.done") == 0 ||
        strcmp(t, "response.failed") == 0)
        return FAST_BAIL;
    if (strcmp(t, "response.function_call_arguments.delta") != 0 || !delta.set)
        return 0;
    const char *iid = span_str(s, &item_id);
    pending *p = iid != NULL    ? find_open(s, NO_KEY, iid)
                 : oi == NO_KEY ? NULL
                                : find_open(s, oi, NULL);
    return p == NULL ? 0 : add_args(p, span_str(s, &delta), delta.len);
}

/* 0 when the event was read, FAST_BAIL when the document path must read
 * it, or TG_ENOMEM. */
static int fast_event(tg_stream *s, const tg_sse_event *ev)
{
    if (s->slow)
        return FAST_BAIL;
    cur_reset(&s->cur, ev->data, ev->data_len);
    s->arena.len = 0;
    switch (s->provider) {
    case P_CHAT:
        return fast_chat(s);
    case P_ANTH:
        return fast_anth(s);
    case P_RESP:
        return fast_resp(s);
    default:
        return FAST_BAIL;
    }
}

/* ------------------------------------------------------------ events */

/* Keeps the message of the first error event the provider streamed (an
 * overloaded server, say): it tells why a stream ended early. The shapes:
 * {"error":{"message"}} (Chat Completions, Gemini, Anthropic's
 * {"type":"error","error":{...}}), {"type":"error","message"} and
 * response.failed's response.error (Responses). */
static void note_api_error(tg_stream *s, const json_t *doc)
{
    if (s->api_error[0] != '\0')
        return;
    const char *type = str_member(doc, "type");
    const char *msg = str_member(json_object_get(doc, "error"), "message");
    if (msg == NULL && str_is(type, "error"))
        msg = str_member(doc, "message");
    if (msg == NULL && str_is(type, "response.failed"))
        msg = str_member(
            json_object_get(json_object_get(doc, "response"), "error"),
            "message");
    if (msg != NULL)
        snprintf(s->api_error, sizeof s->api_error, "%s",
                 *msg ? msg : "(no message)");
}

static int on_event(void *ud, const tg_sse_event *ev, tg_error *err)
{
    tg_stream *s = ud;
    if (s->provider == P_NONE || s->provider == P_GEMINI) {
        SHA256_Update(&s->hash, ev->data, ev->data_len);
        SHA256_Update(&s->hash, "\n\n", 2);
    }
    if (is_blank(ev->data, ev->data_len))
        return 0; /* a keep-alive */
    int rc, kind;
    if (ev->data_len == 6 && memcmp(ev->data, "[DONE]", 6) == 0) {
        /* Chat Completions' end: every call is complete. */
        if (s->provider != P_NONE && (rc = close_all(s, NO_KEY)) != 0)
            return rc == TG_ENOMEM ? nomem(err) : rc;
        return 0;
    }
    if ((rc = fast_event(s, ev)) != FAST_BAIL)
        return rc == TG_ENOMEM ? nomem(err) : rc;
    json_error_t jerr;
    json_t *doc = tg__json_fast_load(ev->data, ev->data_len, 0); /* new ref */
    if (doc == NULL) {
        doc = json_loadb(ev->data, ev->data_len, JSON_DECODE_ANY, &jerr);
        if (doc == NULL && tg__format_json_oom(&jerr))
            return nomem(err);
    }
    if (!json_is_object(doc)) {
        json_decref(doc);
        /* The input ended inside its last event: the stream was cut, not
         * garbled, and what came before still counts. When nothing came
         * before, what the cut event began with still tells whose it is. */
        if (ev->at_end) {
            if (s->provider == P_NONE && (kind = sniff(ev)) != P_NONE) {
                s->provider = kind;
                s->turn->format = provider_names[kind];
            }
            return 0;
        }
        if (doc == NULL)
            return tg__error_at(err, TG_EPARSE, (long)ev->line, jerr.column,
                                "event %llu (ending on line %llu) of the "
                                "stream: its data is not JSON: %s at column "
                                "%d; expected one JSON object per event",
                                (unsigned long long)ev->number,
                                (unsigned long long)ev->line, jerr.text,
                                jerr.column);
        return tg__error_at(err, TG_EPARSE, (long)ev->line, 0,
                            "event %llu (ending on line %llu) of the stream: "
                            "its data is JSON but not an object; expected "
                            "one JSON object per event",
                            (unsigned long long)ev->number,
                            (unsigned long long)ev->line);
    }
    note_api_error(s, doc);
    kind = classify(doc);
    if (s->provider == P_NONE) {
        if (kind == P_NONE) {
            json_decref(doc); /* not telling yet (an error event, say) */
            return 0;
        }
        s->provider = kind;
        s->turn->format = provider_names[kind];
    } else if (kind != P_NONE && kind != s->provider) {
        json_decref(doc);
        return tg__error_at(err, TG_EFORMAT, (long)ev->line, 0,
                            "event %llu (ending on line %llu) of the stream "
                            "is in the %s stream format, but the stream is %s "
                            "(%s)",
                            (unsigned long long)ev->number,
                            (unsigned long long)ev->line, provider_names[kind],
                            provider_names[s->provider],
                            s->fixed ? "as named" : "by its first events");
    }
    switch (s->provider) {
    case P_CHAT:
        rc = chat_event(s, doc);
        break;
    case P_RESP:
        rc = resp_event(s, doc);
        break;
    case P_ANTH:
        rc = anth_event(s, doc);
        break;
    default:
        rc = gemini_event(s, doc);
    }
    json_decref(doc);
    return rc == TG_ENOMEM ? nomem(err) : rc;
}

/* ------------------------------------------------------------ public API */

static int provider_from_name(const char *format)
{
    if (format == NULL || strcmp(format, "auto") == 0)
        return P_NONE;
    for (int p = 1; p < P_COUNT; p++)
        if (strcmp(format, provider_names[p]) == 0)
            return p;
    return -1;
}

int tg_stream_new(const char *format, tg_stream **out, tg_error *err)
{
    tg__error_clear(err);
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_stream_new: no out");
    *out = NULL;
    int p = provider_from_name(format);
    if (p < 0)
        return tg__error_set(err, TG_EFORMAT,
                             "format '%s' has no streamed form; expected "
                             "auto, openai-chat, openai-responses, anthropic "
                             "or gemini",
                             format);
    tg_stream *s = calloc(1, sizeof *s);
    if (s == NULL || (s->turn = tg__turn_new(provider_names[p])) == NULL) {
        free(s);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    s->provider = p;
    s->fixed = p != P_NONE;
    s->max = TG_SSE_DEFAULT_MAX_DATA;
    tg__sse_init(&s->sse, s->max);
    SHA256_Init(&s->hash);
    tg__jcur_init(&s->cur, NULL, 0);
    tg__buf_init(&s->arena, 0);
    *out = s;
    return 0;
}

int tg_stream_set_max_event_bytes(tg_stream *s, size_t max_bytes)
{
    if (s == NULL || s->fed)
        return TG_EINVAL;
    s->max = max_bytes ? max_bytes : TG_SSE_DEFAULT_MAX_DATA;
    s->sse.max_data = s->max;
    return 0;
}

void tg__stream_no_fast_paths(tg_stream *s)
{
    s->slow = 1;
}

int tg_stream_feed(tg_stream *s, const char *bytes, size_t len, tg_error *err)
{
    if (s == NULL || (bytes == NULL && len > 0))
        return tg__error_set(err, TG_EINVAL, "tg_stream_feed: no stream");
    if (s->finished)
        return tg__error_set(err, TG_EINVAL, "the stream was finished");
    s->fed = 1;
    return tg__sse_feed(&s->sse, bytes, len, on_event, s, err);
}

const tg_call *tg_stream_next_call(tg_stream *s)
{
    if (s == NULL || s->turn == NULL || s->next >= s->turn->n)
        return NULL;
    return s->turn->calls[s->next++];
}

const char *tg_stream_format(const tg_stream *s)
{
    return s ? provider_names[s->provider] : NULL;
}

int tg_stream_finish(tg_stream *s, tg_turn **out, tg_error *err)
{
    if (s == NULL || out == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_stream_finish: no stream");
    *out = NULL;
    if (s->finished)
        return tg__error_set(err, TG_EINVAL, "the stream was finished");
    s->finished = 1;
    int rc = tg__sse_finish(&s->sse, on_event, s, err);
    if (rc != 0)
        return rc;
    if (s->provider == P_NONE)
        return tg__error_set(
            err, TG_EFORMAT,
            "the stream has no event of a known provider "
            "(%llu event%s%s%.200s); expected the SSE "
            "stream of OpenAI Chat Completions, the OpenAI "
            "Responses API, Anthropic Messages or Gemini",
            (unsigned long long)s->sse.events, s->sse.events == 1 ? "" : "s",
            s->api_error[0] ? "; it carried an error: " : "", s->api_error);
    /* What is still open never closed: the input ended inside it. */
    while (s->nopen > 0)
        if ((rc = close_at(s, 0, 0)) != 0)
            return nomem(err);
    *out = s->turn;
    s->turn = NULL;
    return 0;
}

void tg_stream_free(tg_stream *s)
{
    if (s == NULL)
        return;
    tg__sse_cleanup(&s->sse);
    tg__jcur_cleanup(&s->cur);
    tg__buf_cleanup(&s->arena);
    for (size_t i = 0; i < s->nopen; i++)
        pending_free(s->open[i]);
    free(s->open);
    free(s->ids);
    tg_turn_free(s->turn);
    free(s);
}

/* ------------------------------------------------------------ whole text */

int tg__stream_looks_like_sse(const char *text, size_t len)
{
    /* Decided by the first line that is not blank, read no further: a whole
     * JSON document is usually one long line. */
    size_t line = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '\n' || c == '\r') {
            line = i + 1;
            continue;
        }
        if (c == ' ' || c == '\t')
            continue;
        const char *l = text + line;
        size_t n = len - line;
        return (n >= 5 && memcmp(l, "data:", 5) == 0) ||
               (n >= 6 && memcmp(l, "event:", 6) == 0) || l[0] == ':';
    }
    return 0;
}

int tg__stream_parse_text(const char *text, size_t len, const char *format,
                          tg_turn **out, tg_error *err)
{
    tg_stream *s = NULL;
    *out = NULL;
    int rc = tg_stream_new(format, &s, err);
    if (rc == 0)
        rc = tg_stream_feed(s, text, len, err);
    if (rc == 0)
        rc = tg_stream_finish(s, out, err);
    tg_stream_free(s);
    return rc;
}
