/* SPDX-License-Identifier: MIT */
/*
 * record.c - construction, destruction, getters and JSON form of the call and
 * result records of record.h.
 */
#include "record.h"
#include "bad_bytes.h"
#include "repair.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "quote.h"
#include "json_out.h"
#include "timeutil.h"
#include "utf8.h"
#include "zalloc.h"

/* ------------------------------------------------------------ names */

const char *tg_outcome_name(int outcome)
{
    switch (outcome) {
    case TG_OUTCOME_SUCCESS:
        return "success";
    case TG_OUTCOME_CANCELED:
        return "canceled";
    case TG_OUTCOME_TIMEOUT:
        return "timeout";
    case TG_OUTCOME_DENIED:
        return "denied";
    default:
        return "error";
    }
}

tg_outcome tg_outcome_from_name(const char *name)
{
    static const tg_outcome all[] = {TG_OUTCOME_SUCCESS, TG_OUTCOME_ERROR,
                                     TG_OUTCOME_CANCELED, TG_OUTCOME_TIMEOUT,
                                     TG_OUTCOME_DENIED};
    for (size_t i = 0; name && i < sizeof all / sizeof all[0]; i++)
        if (strcmp(name, tg_outcome_name(all[i])) == 0)
            return all[i];
    return TG_OUTCOME_ERROR;
}

const char *tg_execution_name(int execution)
{
    switch (execution) {
    case TG_EXECUTION_STARTED:
        return "started";
    case TG_EXECUTION_FINISHED:
        return "finished";
    default:
        return "not_started";
    }
}

static tg_execution execution_from_name(const char *name)
{
    if (name && strcmp(name, "started") == 0)
        return TG_EXECUTION_STARTED;
    if (name && strcmp(name, "finished") == 0)
        return TG_EXECUTION_FINISHED;
    return TG_EXECUTION_NOT_STARTED;
}

int tg__strset(char **field, const char *value)
{
    char *copy = NULL;
    if (value != NULL && (copy = strdup(value)) == NULL)
        return TG_ENOMEM;
    free(*field);
    *field = copy;
    return 0;
}

/* ------------------------------------------------------------ calls */

/* A copy of s in the same allocation as a record: the record's strings
 * follow the struct (one allocation per record). */
static char *tail_copy(char **w, const char *s, size_t n)
{
    char *d = *w;
    memcpy(d, s, n);
    d[n] = '\0';
    *w = d + n + 1;
    return d;
}

tg_call *tg__call_new(const char *id, const char *tool, const char *format)
{
    if (id == NULL)
        id = "";
    if (tool == NULL)
        tool = "";
    size_t il = strlen(id), tl = strlen(tool);
    tg_call *call = calloc(1, sizeof *call + il + tl + 2);
    if (call == NULL)
        return NULL;
    char *w = (char *)(call + 1);
    call->id = tail_copy(&w, id, il);
    call->tool = tail_copy(&w, tool, tl);
    call->format = format ? format : "toolgate";
    call->inline_output = true;
    call->created_at = call->updated_at = tg__now_ms();
    return call;
}

static int raw_copy(tg_call *call, const char *text, size_t len);
static int only_space(const char *s, size_t len);

/* The record, its id and tool, then the arguments' text and tape in one
 * allocation (the tape therefore owns no memory of its own), when text is
 * one JSON object; NULL with *rc set (TG_EPARSE, TG_ENOMEM, TG_ELIMIT)
 * otherwise. With dump_form, only text exactly as jansson's compact dump
 * writes it is taken (else *rc is TG_EPARSE). */
static tg_call *call_block(const char *id, const char *tool, const char *format,
                           const char *text, size_t len, int dump_form, int *rc)
{
    size_t il = strlen(id), tl = strlen(tool);
    tg__jtape tape;
    void *block = NULL;
    *rc = TG_EPARSE;
    if (text != NULL && !only_space(text, len))
        block = tg__jtape_parse_head(text, len, sizeof(tg_call) + il + tl + 2,
                                     &tape, NULL, rc);
    if (block != NULL &&
        (tape.tok[0].kind != TG_JT_OBJECT || memchr(text, '\0', len) != NULL ||
         (dump_form && !tg__jtape_is_dump_form(&tape)))) {
        free(block);
        return NULL; /* *rc is still TG_EPARSE */
    }
    if (block == NULL)
        return NULL;
    tg_call *call = block;
    memset(call, 0, sizeof *call);
    char *w = (char *)(call + 1);
    call->id = tail_copy(&w, id, il);
    call->tool = tail_copy(&w, tool, tl);
    call->format = format ? format : "toolgate";
    call->inline_output = true;
    call->created_at = call->updated_at = tg__now_ms();
    call->args_tape = tape;
    call->args_text = tape.text;
    call->args_len = len;
    return call;
}

tg_call *tg__call_new_args(const char *id, const char *tool, const char *format,
                           const char *text, size_t len)
{
    int rc;
    if (id == NULL)
        id = "";
    if (tool == NULL)
        tool = "";
    tg_call *call = call_block(id, tool, format, text, len, 0, &rc);
    if (call != NULL) {
        call->args_raw_is_text = true;
        return call;
    }
    /* Blank, malformed or not an object: the general path sets the
     * pre-error with the parser's message. */
    if (rc == TG_ENOMEM)
        return NULL;
    call = tg__call_new(id, tool, format);
    if (call != NULL && tg__call_set_args_text(call, text, len) != 0) {
        tg__call_free(call);
        return NULL;
    }
    return call;
}

int tg__call_new_args_object(const char *id, const char *tool,
                             const char *format, const char *text, size_t len,
                             tg_call **out)
{
    int rc;
    *out =
        call_block(id ? id : "", tool ? tool : "", format, text, len, 1, &rc);
    return *out != NULL ? 0 : rc == TG_ENOMEM ? TG_ENOMEM : 1;
}

/* Forgets the arguments (text, tape, object, raw string) and the checksum
 * computed from them. */
static inline void args_clear(tg_call *call)
{
    json_decref(call->args_dom);
    call->args_dom = NULL;
    tg__jtape_free(&call->args_tape);
    call->args_text = NULL;
    call->args_len = 0;
    free(call->args_raw_own);
    call->args_raw_own = NULL;
    call->args_raw_is_text = false;
    call->checksum[0] = '\0';
    call->args_unrepairable = false;
    json_decref(call->bad_args_src);
    call->bad_args_src = NULL;
}

void tg__call_free(tg_call *call)
{
    if (call == NULL)
        return;
    args_clear(call);
    free(call->checksum_in);
    free(call->caller_id);
    json_decref(call->context);
    json_decref(call->skills);
    json_decref(call->meta);
    free(call->meta_text);
    free(call->pre_error_message);
    free(call->pre_cancel_reason);
    free(call);
}

json_t *tg__call_meta(const tg_call *call)
{
    if (call->meta == NULL && call->meta_text != NULL) {
        /* A cache: the call is logically unchanged (see tg__call_args). */
        tg_call *m = (tg_call *)call;
        json_error_t jerr;
        m->meta = json_loads(call->meta_text, 0, &jerr); /* new ref */
        if (m->meta != NULL) {
            free(m->meta_text);
            m->meta_text = NULL;
        }
    }
    return call->meta;
}

void tg__call_clear_pre_error(tg_call *call)
{
    call->pre_error_code = NULL;
    free(call->pre_error_message);
    call->pre_error_message = NULL;
}

int tg__call_set_pre_error(tg_call *call, const char *code, const char *fmt,
                           ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    call->pre_error_code = code;
    return tg__strset(&call->pre_error_message, msg);
}

/* Whether s is longer than max bytes; when it is, *q holds its quotation
 * (a copy, with its size) and s is cut to at most max bytes. */
static bool too_long(char *s, size_t max, tg__quote_buf *q)
{
    if (s == NULL || strnlen(s, max + 1) <= max)
        return false;
    size_t n = strlen(s);
    (void)tg__quoten(q, s, n);
    s[tg__utf8_cut(s, n, max)] = '\0';
    return true;
}

int tg__call_check_names(tg_call *call)
{
    tg__quote_buf qi, qt, qc;
    /* Every field is cut; the message names the first that was too long. */
    bool id = too_long(call->id, TG_CALL_ID_MAX, &qi);
    bool tool = too_long(call->tool, TG_TOOL_NAME_MAX, &qt);
    bool caller = too_long(call->caller_id, TG_CALLER_ID_MAX, &qc);
    if (id)
        return tg__call_set_pre_error(call, "MALFORMED_CALL",
                                      "call id '%s' is longer than the limit "
                                      "of %d bytes",
                                      qi.text, TG_CALL_ID_MAX);
    if (tool)
        return tg__call_set_pre_error(call, "MALFORMED_CALL",
                                      "tool name '%s' of call '%s' is longer "
                                      "than the limit of %d bytes",
                                      qt.text, call->id, TG_TOOL_NAME_MAX);
    if (caller)
        return tg__call_set_pre_error(call, "MALFORMED_CALL",
                                      "caller id '%s' of call '%s' is longer "
                                      "than the limit of %d bytes",
                                      qc.text, call->id, TG_CALLER_ID_MAX);
    return 0;
}

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

static const char *tape_kind(const tg__jtape *t)
{
    switch (t->tok[0].kind) {
    case TG_JT_OBJECT:
        return "an object";
    case TG_JT_ARRAY:
        return "an array";
    case TG_JT_STRING:
        return "a string";
    case TG_JT_NUMBER:
        return "a number";
    case TG_JT_TRUE:
    case TG_JT_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

static int not_an_object(tg_call *call, const char *kind)
{
    return tg__call_set_pre_error(
        call, "MALFORMED_ARGUMENTS",
        "arguments of call '%s' must be a JSON object, got %s", call->id, kind);
}

/* Appends compact JSON of v to a tg__buf (json_dump_callback's sink). */
static int dump_cb(const char *buffer, size_t size, void *data)
{
    return tg__buf_append(data, buffer, size) == 0 ? 0 : -1;
}

/* Keeps text as the call's raw string, with bytes no tool gets replaced
 * (bad_bytes.h): the raw string is text, in the journal too. */
static int raw_copy_bad(tg_call *call, const char *text, size_t len)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    int rc = tg__bad_bytes_replace(text, len, &b);
    char *raw = rc == 0 ? tg__buf_take(&b) : NULL;
    tg__buf_cleanup(&b);
    if (raw == NULL)
        return TG_ENOMEM;
    free(call->args_raw_own);
    call->args_raw_own = raw;
    call->args_raw_is_text = false;
    return 0;
}

static int raw_copy(tg_call *call, const char *text, size_t len)
{
    char *raw = malloc(len + 1);
    if (raw == NULL)
        return TG_ENOMEM;
    memcpy(raw, text, len);
    raw[len] = '\0';
    free(call->args_raw_own);
    call->args_raw_own = raw;
    call->args_raw_is_text = false;
    return 0;
}

/* MALFORMED_ARGUMENTS, final, for argument text[0..len), which holds bytes
 * no tool gets; the raw string keeps the text with U+FFFD in their
 * place. Returns 0 or TG_ENOMEM. */
static int bad_text(tg_call *call, const char *text, size_t len)
{
    char what[TG_BAD_WHAT_MAX];
    size_t at = 0;
    tg__bad_bytes(text, len, &at, what);
    if (raw_copy_bad(call, text, len) != 0)
        return TG_ENOMEM;
    call->args_unrepairable = true;
    return tg__call_set_pre_error(call, "MALFORMED_ARGUMENTS",
                                  "arguments of call '%s' hold %s at byte "
                                  "%zu of the arguments string; no tool gets "
                                  "such bytes",
                                  call->id, what, at);
}

/* Whether arguments (an object or a string, borrowed) that did not decode
 * hold bytes no tool gets: then the call's MALFORMED_ARGUMENTS says what
 * and where (a string's, tg__call_set_args_text said already), is final,
 * and the value is kept for the document's check (record.h, bad_args_src).
 * Returns 1 when they do, 0 when they do not, TG_ENOMEM. */
static int bad_args(tg_call *call, json_t *args)
{
    if (json_is_string(args)) {
        if (!call->args_unrepairable) /* set by bad_text */
            return 0;
    } else {
        char what[TG_BAD_WHAT_MAX];
        tg__buf where;
        tg__buf_init(&where, 0);
        int rc = tg__bad_bytes_find(args, NULL, NULL, &where, what);
        if (rc == 1)
            rc = tg__call_set_pre_error(call, "MALFORMED_ARGUMENTS",
                                        "arguments of call '%s' hold %s in "
                                        "%s; no tool gets such bytes",
                                        call->id, what, tg__buf_cstr(&where))
                     ? TG_ENOMEM
                     : 1;
        tg__buf_cleanup(&where);
        if (rc != 1)
            return rc;
        call->args_unrepairable = true;
    }
    json_decref(call->bad_args_src);
    call->bad_args_src = json_incref(args);
    return 1;
}

int tg__call_set_args(tg_call *call, json_t *args)
{
    args_clear(call);
    if (args == NULL || !json_is_object(args))
        return not_an_object(call, args ? json_kind(args) : "nothing");
    char stack[1024];
    tg__buf text;
    tg__jtape_error e = {0};
    tg__buf_init_with(&text, stack, sizeof stack, 0);
    /* jansson refuses to write a string that is not UTF-8 (but passes
     * over such a key: looked for first); it writes U+0000, which the tape
     * then refuses. */
    int rc = tg__bad_bytes_in_keys(args) ? TG_EPARSE
             : json_dump_callback(args, dump_cb, &text, JSON_COMPACT) != 0
                 ? TG_ENOMEM
                 : tg__jtape_parse(text.data, text.len, TG_JTAPE_COPY,
                                   &call->args_tape, &e);
    tg__buf_cleanup(&text);
    if (rc != 0) {
        int bad = bad_args(call, args);
        if (bad != 0)
            return bad < 0 ? bad : 0;
    }
    if (rc == TG_ENOMEM)
        return rc;
    if (rc != 0)
        /* An object made in code can hold what JSON text may not carry
         * through a parser (nesting beyond 2048). */
        return tg__call_set_pre_error(
            call, "MALFORMED_ARGUMENTS",
            "arguments of call '%s' cannot be represented: %s", call->id,
            e.text);
    call->args_text = call->args_tape.text;
    call->args_len = call->args_tape.len;
    call->args_dom = json_incref(args);
    return 0;
}

static int only_space(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
            return 0;
    return 1;
}

int tg__call_set_args_text(tg_call *call, const char *text, size_t len)
{
    tg__jtape_error e;
    int rc;
    args_clear(call);
    if (text == NULL)
        text = "";
    /* Providers send "" for functions without parameters. */
    if (only_space(text, len)) {
        if ((rc = raw_copy(call, text, len)) != 0 ||
            (rc = tg__jtape_parse("{}", 2, TG_JTAPE_COPY, &call->args_tape,
                                  NULL)) != 0)
            return TG_ENOMEM;
        call->args_text = call->args_tape.text;
        call->args_len = 2;
        return 0;
    }
    /* A NUL byte would end the text as a C string, for the tool too: even
     * where jansson (and so the tape) lets it pass, after a number. */
    if (memchr(text, '\0', len) != NULL)
        return bad_text(call, text, len);
    /* The tape's allocation keeps the text: it is both the raw string and
     * the arguments text. */
    rc = tg__jtape_parse(text, len, TG_JTAPE_COPY, &call->args_tape, &e);
    if (rc == TG_ENOMEM)
        return rc;
    if (rc != 0 && tg__bad_bytes(text, len, NULL, NULL))
        return bad_text(call, text, len); /* rather than "unable to decode" */
    if (rc != 0) {
        if (raw_copy(call, text, len) != 0)
            return TG_ENOMEM;
        return tg__call_set_pre_error(
            call, "MALFORMED_ARGUMENTS",
            "arguments of call '%s' are not valid JSON: %s at line %d, "
            "column %d of the arguments string",
            call->id, e.text, e.line, e.column);
    }
    if (call->args_tape.tok[0].kind != TG_JT_OBJECT) {
        const char *kind = tape_kind(&call->args_tape);
        tg__jtape_free(&call->args_tape);
        if (raw_copy(call, text, len) != 0)
            return TG_ENOMEM;
        return not_an_object(call, kind);
    }
    call->args_text = call->args_tape.text;
    call->args_len = len;
    call->args_raw_is_text = true;
    return 0;
}

int tg__call_set_args_raw(tg_call *call, const char *raw)
{
    if (raw == NULL) {
        free(call->args_raw_own);
        call->args_raw_own = NULL;
        call->args_raw_is_text = false;
        return 0;
    }
    return raw_copy(call, raw, strlen(raw));
}

int tg__call_copy_args(tg_call *dst, const tg_call *src)
{
    args_clear(dst);
    if (tg__jtape_copy(&dst->args_tape, &src->args_tape) != 0 ||
        tg__strset(&dst->args_raw_own, src->args_raw_own) != 0) {
        args_clear(dst);
        return TG_ENOMEM;
    }
    dst->args_text = src->args_text ? dst->args_tape.text : NULL;
    dst->args_len = src->args_len;
    dst->args_raw_is_text = src->args_raw_is_text;
    return 0;
}

json_t *tg__call_args(const tg_call *call)
{
    tg_call *c = (tg_call *)call; /* cache only; see record.h */
    if (c->args_text == NULL)
        return NULL;
    if (c->args_dom == NULL)
        c->args_dom = tg__jtape_to_json(&c->args_tape, 0);
    return c->args_dom;
}

int tg__call_set_args_value(tg_call *call, const json_t *args)
{
    if (json_is_string(args)) {
        int rc = tg__call_set_args_text(call, json_string_value(args),
                                        json_string_length(args));
        /* Text that did not decode: its bytes may be why. */
        if (rc == 0 && call->args_text == NULL &&
            (rc = bad_args(call, (json_t *)args)) == 1)
            rc = 0;
        return rc;
    }
    if (args == NULL || json_is_null(args)) {
        json_t *empty = json_object(); /* new ref */
        int rc = empty ? tg__call_set_args(call, empty) : TG_ENOMEM;
        json_decref(empty);
        return rc;
    }
    return tg__call_set_args(call, (json_t *)args);
}

size_t tg__call_args_size(const tg_call *call)
{
    if (call->args_raw_own != NULL)
        return strlen(call->args_raw_own);
    return call->args_len;
}

const char *tg_call_id(const tg_call *call)
{
    return call->id;
}
const char *tg_call_tool(const tg_call *call)
{
    return call->tool;
}
const char *tg_call_caller_id(const tg_call *call)
{
    return call->caller_id;
}
const char *tg_call_format(const tg_call *call)
{
    return call->format;
}
size_t tg_call_index(const tg_call *call)
{
    return call->index;
}

const char *tg_call_args_raw(const tg_call *call)
{
    return call->args_raw_is_text ? call->args_text : call->args_raw_own;
}

const char *tg_call_args_json(const tg_call *call)
{
    /* The wire's own text when it sent a string: valid JSON of the same
     * object, not serialised again. */
    return call->args_text;
}

const char *tg_call_checksum(const tg_call *call)
{
    tg_call *c = (tg_call *)call; /* cache only; see record.h */
    if (c->args_text == NULL)
        return NULL;
    if (c->checksum[0] == '\0' &&
        tg__checksum_compute_tape(c->tool, &c->args_tape, c->hmac_key,
                                  c->hmac_key_len, c->checksum) != 0) {
        c->checksum[0] = '\0';
        return NULL;
    }
    return c->checksum;
}

static int set_time(json_t *obj, const char *key, int64_t ms)
{
    if (ms == 0)
        return json_object_set_new(obj, key, json_null());
    char buf[TG_TIME_MAX];
    tg__time_format(ms, buf);
    return json_object_set_new(obj, key, json_string(buf));
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

json_t *tg__call_to_json(const tg_call *call)
{
    json_t *o = json_object(); /* new ref */
    if (o == NULL)
        return NULL;
    const char *sum = tg_call_checksum(call);
    json_t *args = tg__call_args(call); /* borrowed */
    int bad = call->args_text != NULL && (args == NULL || sum == NULL);
    bad |= json_object_set_new(o, "id", json_string(call->id));
    bad |= json_object_set_new(o, "tool", json_string(call->tool));
    bad |=
        json_object_set_new(o, "args", args ? json_incref(args) : json_null());
    bad |=
        json_object_set_new(o, "args_raw", str_or_null(tg_call_args_raw(call)));
    bad |= json_object_set_new(o, "checksum", str_or_null(sum));
    bad |= json_object_set_new(o, "caller_id", str_or_null(call->caller_id));
    bad |= json_object_set_new(o, "context",
                               call->context ? json_incref(call->context)
                                             : json_object());
    bad |= json_object_set_new(
        o, "skills", call->skills ? json_incref(call->skills) : json_array());
    bad |= json_object_set_new(o, "format", json_string(call->format));
    bad |=
        json_object_set_new(o, "index", json_integer((json_int_t)call->index));
    bad |= set_time(o, "created_at", call->created_at);
    bad |= set_time(o, "updated_at", call->updated_at);
    bad |= set_time(o, "completed_at", call->completed_at);
    bad |= json_object_set_new(o, "inline", json_boolean(call->inline_output));
    bad |= json_object_set_new(o, "from_artifact_tool",
                               json_boolean(call->from_artifact_tool));
    json_t *meta = tg__call_meta(call); /* borrowed */
    if (call->meta_text != NULL && meta == NULL)
        bad = 1; /* out of memory */
    if (meta)
        bad |= json_object_set_new(o, "meta", json_incref(meta));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *tg_call_to_json(const tg_call *call)
{
    json_t *o = tg__call_to_json(call); /* new ref */
    if (o == NULL)
        return NULL;
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static int field_error(tg_error *err, const char *field, const char *want)
{
    char ptr[128];
    snprintf(ptr, sizeof ptr, "/%s", field);
    tg__error_pointer(err, ptr);
    return tg__error_set(err, TG_EPARSE, "field '%s' must be %s", field, want);
}

/* Reads an optional string member; 0 when absent or null. */
static int opt_string(const json_t *obj, const char *key, const char **out,
                      tg_error *err)
{
    const json_t *v = json_object_get(obj, key); /* borrowed */
    *out = NULL;
    if (v == NULL || json_is_null(v))
        return 0;
    if (json_is_integer(v) && strcmp(key, "id") == 0)
        return 0; /* numeric ids handled by the caller */
    if (!json_is_string(v))
        return field_error(err, key, "a string");
    *out = json_string_value(v);
    return 0;
}

static int opt_time(const json_t *obj, const char *key, int64_t *out,
                    tg_error *err)
{
    const json_t *v = json_object_get(obj, key); /* borrowed */
    if (v == NULL || json_is_null(v))
        return 0;
    if (tg__time_from_json(v, out) != 0)
        return field_error(err, key,
                           "an RFC 3339 time or Unix seconds/milliseconds");
    return 0;
}

int tg__call_from_json(const json_t *obj, const char *format, tg_call **out,
                       tg_error *err)
{
    *out = NULL;
    if (!json_is_object(obj))
        return tg__error_set(err, TG_EPARSE, "a call record must be an object");
    const char *id, *tool, *caller, *sum;
    int rc;
    if ((rc = opt_string(obj, "id", &id, err)) != 0 ||
        (rc = opt_string(obj, "tool", &tool, err)) != 0 ||
        (rc = opt_string(obj, "caller_id", &caller, err)) != 0 ||
        (rc = opt_string(obj, "checksum", &sum, err)) != 0)
        return rc;
    char idbuf[32];
    const json_t *idv = json_object_get(obj, "id"); /* borrowed */
    if (id == NULL && json_is_integer(idv)) {
        snprintf(idbuf, sizeof idbuf, "%" JSON_INTEGER_FORMAT,
                 json_integer_value(idv));
        id = idbuf;
    }
    if (id == NULL || *id == '\0')
        return field_error(err, "id", "a non-empty string");
    if (tool == NULL)
        return field_error(err, "tool", "a string (the tool name)");
    tg_call *call = tg__call_new(id, tool, format);
    if (call == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    const json_t *args = json_object_get(obj, "args"); /* borrowed */
    if (args == NULL)
        args = json_object_get(obj, "arguments");
    const json_t *raw = json_object_get(obj, "args_raw"); /* borrowed */
    if (raw != NULL && !json_is_null(raw) && !json_is_string(raw)) {
        tg__call_free(call);
        return field_error(err, "args_raw", "a string or null");
    }
    rc = 0;
    if ((args == NULL || json_is_null(args)) && json_is_string(raw))
        /* The record of a call whose string did not decode (tg__call_to_json
         * writes args null): decoding the raw text again restores the same
         * MALFORMED_ARGUMENTS error instead of a misleading "got null". */
        rc = tg__call_set_args_text(call, json_string_value(raw),
                                    json_string_length(raw));
    else
        rc = tg__call_set_args_value(call, args);
    /* Keep the wire's string form across a to_json/from_json round trip. */
    if (rc == 0 && tg_call_args_raw(call) == NULL && json_is_string(raw))
        rc = tg__call_set_args_raw(call, json_string_value(raw));
    if (rc == 0)
        rc = tg__strset(&call->caller_id, caller);
    if (rc == 0)
        rc = tg__strset(&call->checksum_in, sum);
    if (rc != 0) {
        tg__call_free(call);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    const json_t *ctx = json_object_get(obj, "context"); /* borrowed */
    if (ctx != NULL && !json_is_null(ctx)) {
        if (!json_is_object(ctx)) {
            tg__call_free(call);
            return field_error(err, "context", "an object");
        }
        call->context = json_incref((json_t *)ctx);
    }
    const json_t *skills = json_object_get(obj, "skills"); /* borrowed */
    if (skills != NULL && !json_is_null(skills)) {
        if (!json_is_array(skills)) {
            tg__call_free(call);
            return field_error(err, "skills", "an array of strings");
        }
        call->skills = json_incref((json_t *)skills);
    }
    const json_t *inl = json_object_get(obj, "inline"); /* borrowed */
    if (json_is_boolean(inl))
        call->inline_output = json_is_true(inl);
    call->from_artifact_tool =
        json_is_true(json_object_get(obj, "from_artifact_tool"));
    if ((rc = opt_time(obj, "created_at", &call->created_at, err)) != 0 ||
        (rc = opt_time(obj, "updated_at", &call->updated_at, err)) != 0 ||
        (rc = opt_time(obj, "completed_at", &call->completed_at, err)) != 0) {
        tg__call_free(call);
        return rc;
    }
    const json_t *meta = json_object_get(obj, "meta"); /* borrowed */
    if (json_is_object(meta))
        call->meta = json_incref((json_t *)meta);
    const json_t *idx = json_object_get(obj, "index"); /* borrowed */
    if (json_is_integer(idx) && json_integer_value(idx) >= 0)
        call->index = (size_t)json_integer_value(idx);
    *out = call;
    return 0;
}

/* ------------------------------------------------------------ results */

/* A result whose allocation also holds its id, its tool and, when given,
 * the compact text of its payload. */
static tg_result *result_alloc(const tg_call *call, tg_outcome outcome,
                               tg_execution execution, json_t *payload_take,
                               const char *text, size_t text_len)
{
    size_t il = strlen(call->id), tl = strlen(call->tool);
    size_t extra = il + tl + 2 + (text ? text_len + 1 : 0);
    tg_result *r = payload_take || text ? tg__zalloc(sizeof *r + extra) : NULL;
    if (r == NULL) {
        json_decref(payload_take);
        return NULL;
    }
    /* The result outlives its call (the caller may free the turn's calls
     * first): it keeps its own copies, in its own allocation. */
    char *w = (char *)(r + 1);
    r->id = tail_copy(&w, call->id, il);
    r->tool = tail_copy(&w, call->tool, tl);
    if (text != NULL) {
        r->payload_json_cache = tail_copy(&w, text, text_len);
        r->payload_json_inline = true;
    }
    r->outcome = outcome;
    r->execution = execution;
    r->repaired = call->repaired;
    r->payload_dom = payload_take;
    r->exit_status = -1;
    r->completed_at = tg__now_ms();
    return r;
}

tg_result *tg__result_new(const tg_call *call, tg_outcome outcome,
                          tg_execution execution, json_t *payload_take)
{
    return result_alloc(call, outcome, execution, payload_take, NULL, 0);
}

tg_result *tg__result_success_text(const tg_call *call, const char *text,
                                   size_t len)
{
    if (text == NULL)
        return NULL;
    return result_alloc(call, TG_OUTCOME_SUCCESS, TG_EXECUTION_FINISHED, NULL,
                        text, len);
}

json_t *tg__result_payload(const tg_result *r)
{
    tg_result *m = (tg_result *)r; /* cache only; see record.h */
    if (m->payload_dom == NULL && m->payload_json_cache != NULL) {
        tg__jtok small[64];
        tg__jtape t;
        if (tg__jtape_parse_in(m->payload_json_cache,
                               strlen(m->payload_json_cache), small, 64, &t,
                               NULL) == 0) {
            m->payload_dom = tg__jtape_to_json(&t, 0); /* new ref */
            tg__jtape_free(&t);
        }
    }
    return m->payload_dom;
}

tg_result *tg__result_success(const tg_call *call, json_t *payload_take)
{
    return tg__result_new(call, TG_OUTCOME_SUCCESS, TG_EXECUTION_FINISHED,
                          payload_take);
}

tg_result *tg__result_error(const tg_call *call, tg_execution execution,
                            const char *code, json_t *details_take,
                            const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *e = json_pack("{s:s, s:s}", "message", msg, "code",
                          code ? code : "INTERNAL"); /* new ref */
    if (e != NULL && details_take != NULL &&
        json_object_set(e, "details", details_take) != 0) {
        json_decref(e); /* out of memory: no error without its details */
        e = NULL;
    }
    json_decref(details_take);
    json_t *payload = e ? json_pack("{s:o}", "error", e) : NULL; /* new ref */
    return tg__result_new(call, TG_OUTCOME_ERROR, execution, payload);
}

tg_result *tg__result_canceled(const tg_call *call, tg_execution execution,
                               const char *by, const char *reason)
{
    json_t *p = json_pack("{s:{s:s, s:s}}", "canceled", "reason",
                          reason ? reason : "canceled", "by",
                          by ? by : "user"); /* new ref */
    return tg__result_new(call, TG_OUTCOME_CANCELED, execution, p);
}

tg_result *tg__result_timeout(const tg_call *call, int64_t budget_ms)
{
    json_t *p = json_pack("{s:{s:I}}", "timeout", "durationMs",
                          (json_int_t)budget_ms); /* new ref */
    return tg__result_new(call, TG_OUTCOME_TIMEOUT, TG_EXECUTION_STARTED, p);
}

tg_result *tg__result_denied(const tg_call *call, const char *reason)
{
    json_t *p = json_pack("{s:{s:s, s:s}}", "denied", "tool", call->tool,
                          "reason", reason ? reason : "denied"); /* new ref */
    return tg__result_new(call, TG_OUTCOME_DENIED, TG_EXECUTION_NOT_STARTED, p);
}

void tg__result_free(tg_result *r)
{
    if (r == NULL)
        return;
    json_decref(r->payload_dom);
    json_decref(r->content);
    json_decref(r->artifact);
    json_decref(r->decisions);
    if (!r->payload_json_inline)
        free(r->payload_json_cache);
    free(r->data_json_cache);
    free(r->content_json_cache);
    free(r->message_cache);
    free(r);
}

const char *tg__result_code(const tg_result *r)
{
    if (r->outcome != TG_OUTCOME_ERROR)
        return NULL;
    return json_string_value(json_object_get(
        json_object_get(tg__result_payload(r), "error"), "code"));
}

const json_t *tg__result_output_part(const tg_result *r)
{
    const json_t *inner; /* borrowed */
    if (r->outcome == TG_OUTCOME_TIMEOUT) {
        inner = json_object_get(tg__result_payload(r), "timeout");
        return json_object_get(inner, "stdout") ||
                       json_object_get(inner, "stderr")
                   ? inner
                   : NULL;
    }
    const char *code = tg__result_code(r);
    /* a command that failed, or whose output failed its declaration
     * (src/exec/shape.c): what it printed is shown with the message */
    static const char *const shown[] = {"EXIT_STATUS",  "KILLED_BY_SIGNAL",
                                        "OUTPUT_LIMIT", "MALFORMED_OUTPUT",
                                        "BAD_CONTENT",  "INVALID_OUTPUT"};
    bool any = false;
    for (size_t i = 0; code != NULL && !any && i < sizeof shown / sizeof *shown;
         i++)
        any = strcmp(code, shown[i]) == 0;
    if (!any)
        return NULL;
    inner = json_object_get(json_object_get(tg__result_payload(r), "error"),
                            "details");
    return json_is_object(inner) ? inner : NULL;
}

const char *tg_result_id(const tg_result *r)
{
    return r->id;
}
const char *tg_result_tool(const tg_result *r)
{
    return r->tool;
}
tg_outcome tg_result_outcome(const tg_result *r)
{
    return r->outcome;
}
tg_execution tg_result_execution(const tg_result *r)
{
    return r->execution;
}
int tg_result_succeeded(const tg_result *r)
{
    return r->outcome == TG_OUTCOME_SUCCESS;
}
int tg_result_is_error(const tg_result *r)
{
    return r->outcome != TG_OUTCOME_SUCCESS;
}
double tg_result_duration_ms(const tg_result *r)
{
    return r->duration_ms;
}
int tg_result_exit_status(const tg_result *r)
{
    return r->exit_status;
}
int tg_result_replayed(const tg_result *r)
{
    return r->replayed;
}
int tg_result_structured(const tg_result *r)
{
    return r != NULL && r->outcome == TG_OUTCOME_SUCCESS &&
           json_is_string(json_object_get(r->decisions, "output_schema"));
}
const char *tg_result_content_json(const tg_result *r)
{
    if (r == NULL || !json_is_array(r->content))
        return NULL;
    if (r->content_json_cache == NULL)
        ((tg_result *)r)->content_json_cache = tg__json_dumps(r->content);
    return r->content_json_cache;
}
const char *tg_result_error_code(const tg_result *r)
{
    return tg__result_code(r);
}

const char *tg_result_payload_json(const tg_result *r)
{
    tg_result *m = (tg_result *)r; /* cache only */
    if (m->payload_json_cache == NULL && r->payload_dom != NULL)
        m->payload_json_cache = tg__json_dumps(r->payload_dom);
    return m->payload_json_cache;
}

const char *tg_result_data_json(const tg_result *r)
{
    if (r->outcome != TG_OUTCOME_SUCCESS)
        return NULL;
    return tg_result_payload_json(r);
}

const char *tg_result_error_message(const tg_result *r)
{
    tg_result *m = (tg_result *)r; /* cache only */
    const json_t *inner;           /* borrowed */
    char buf[128];
    const char *text = NULL;
    switch (r->outcome) {
    case TG_OUTCOME_SUCCESS:
        return NULL;
    case TG_OUTCOME_ERROR:
        inner = json_object_get(tg__result_payload(r), "error");
        text = json_string_value(json_object_get(inner, "message"));
        break;
    case TG_OUTCOME_CANCELED:
        inner = json_object_get(tg__result_payload(r), "canceled");
        text = json_string_value(json_object_get(inner, "reason"));
        break;
    case TG_OUTCOME_DENIED:
        inner = json_object_get(tg__result_payload(r), "denied");
        text = json_string_value(json_object_get(inner, "reason"));
        break;
    case TG_OUTCOME_TIMEOUT:
        inner = json_object_get(tg__result_payload(r), "timeout");
        snprintf(buf, sizeof buf, "timed out after %" JSON_INTEGER_FORMAT " ms",
                 json_integer_value(json_object_get(inner, "durationMs")));
        text = buf;
        break;
    }
    if (text == NULL)
        text = tg_outcome_name(r->outcome);
    if (m->message_cache == NULL || strcmp(m->message_cache, text) != 0) {
        free(m->message_cache);
        m->message_cache = strdup(text);
    }
    return m->message_cache;
}

#define PUT(out, lit) tg__buf_append((out), (lit), sizeof(lit) - 1)

/* Whether s is valid UTF-8, as a JSON string must be. */
static int utf8_ok(const char *s)
{
    return tg__utf8_valid((const unsigned char *)s, strlen(s));
}

/* "<name>":<value> with a comma before it, value written by jansson. */
static int put_member(tg__buf *out, const char *name, const json_t *v)
{
    int rc;
    if ((rc = tg__buf_puts(out, name)) != 0)
        return rc;
    return v ? tg__json_dump(v, out) : PUT(out, "null");
}

static int put_payload(const tg_result *r, tg__buf *out)
{
    const json_t *p = r->payload_dom; /* borrowed */
    if (p == NULL) {
        /* A result made from its payload's text, which is the compact form
         * (tg__result_success_text). */
        const char *known = r->payload_json_cache;
        return known ? tg__buf_puts(out, known) : TG_ENOMEM;
    }
    if (json_is_string(p)) /* the tool's text, escaped once, no copy */
        return tg__json_string(out, json_string_value(p),
                               json_string_length(p));
    return tg__json_dump(p, out);
}

int tg__result_write(const tg_result *r, unsigned flags, const json_t *call,
                     tg__buf *out)
{
    /* An id or tool that is not UTF-8 (a record built in code from bytes no
     * parser checked) has no JSON string: refuse rather than alter it. */
    if (!utf8_ok(r->id) || !utf8_ok(r->tool))
        return TG_EINVAL;
    const char *outcome = tg_outcome_name(r->outcome);
    const char *execution = tg_execution_name(r->execution);
    char when[TG_TIME_MAX], num[16];
    int wn = tg__time_format(r->completed_at, when);
    int rc;
    if ((rc = PUT(out, "{\"id\":")) != 0 ||
        (rc = tg__json_string(out, r->id, strlen(r->id))) != 0 ||
        (rc = PUT(out, ",\"tool\":")) != 0 ||
        (rc = tg__json_string(out, r->tool, strlen(r->tool))) != 0 ||
        (rc = PUT(out, ",\"outcome\":")) != 0 ||
        (rc = tg__json_string(out, outcome, strlen(outcome))) != 0 ||
        (rc = PUT(out, ",\"execution\":")) != 0 ||
        (rc = tg__json_string(out, execution, strlen(execution))) != 0 ||
        (rc = PUT(out, ",\"payload\":")) != 0 ||
        (rc = put_payload(r, out)) != 0 ||
        (rc = put_member(out, ",\"content\":", r->content)) != 0 ||
        (rc = put_member(out, ",\"artifact\":", r->artifact)) != 0 ||
        (rc = PUT(out, ",\"duration_ms\":")) != 0 ||
        (rc = tg__json_ms(out, r->duration_ms)) != 0 ||
        (rc = PUT(out, ",\"exit_status\":")) != 0)
        return rc;
    if (r->exit_status >= 0) {
        int k = snprintf(num, sizeof num, "%d", r->exit_status);
        rc = tg__buf_append(out, num, (size_t)k);
    } else
        rc = PUT(out, "null");
    if (rc != 0 || (rc = PUT(out, ",\"completed_at\":")) != 0 ||
        (rc = tg__json_string(out, when, (size_t)wn)) != 0)
        return rc;
    if (r->replayed && (rc = PUT(out, ",\"replayed\":true")) != 0)
        return rc;
    if ((flags & TG__RECORD_DECISIONS) && r->decisions != NULL &&
        (rc = put_member(out, ",\"decisions\":", r->decisions)) != 0)
        return rc;
    if (r->repaired != 0) {
        json_t *list = tg__repaired_to_json(r->repaired); /* new ref */
        rc = list == NULL ? TG_ENOMEM : put_member(out, ",\"repaired\":", list);
        json_decref(list);
        if (rc != 0)
            return rc;
    }
    if (call != NULL && (rc = put_member(out, ",\"call\":", call)) != 0)
        return rc;
    return PUT(out, "}");
}

json_t *tg__repaired_to_json(unsigned repaired)
{
    json_t *list = json_array(); /* new ref */
    for (unsigned bit = 1; list != NULL && bit <= TG_REPAIR_COERCED; bit <<= 1)
        if ((repaired & bit) &&
            json_array_append_new(list, json_string(tg__repair_name(bit))) !=
                0) {
            json_decref(list);
            return NULL;
        }
    return list;
}

unsigned tg__repaired_from_json(const json_t *list)
{
    unsigned bits = 0;
    for (size_t i = 0; i < json_array_size(list); i++) {
        const char *s = json_string_value(json_array_get(list, i));
        for (unsigned bit = 1; s != NULL && bit <= TG_REPAIR_COERCED; bit <<= 1)
            if (strcmp(s, tg__repair_name(bit)) == 0)
                bits |= bit;
    }
    return bits;
}

char *tg_result_to_json(const tg_result *r)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    if (tg__result_write(r, TG__RECORD_DECISIONS, NULL, &b) != 0) {
        tg__buf_cleanup(&b);
        return NULL;
    }
    return tg__buf_take(&b);
}

int tg__result_from_json(const json_t *obj, tg_result **out, tg_error *err)
{
    *out = NULL;
    const char *id = json_string_value(json_object_get(obj, "id"));
    const char *tool = json_string_value(json_object_get(obj, "tool"));
    const json_t *payload = json_object_get(obj, "payload"); /* borrowed */
    if (id == NULL || tool == NULL || payload == NULL)
        return tg__error_set(err, TG_EPARSE,
                             "a result record needs id, tool and payload");
    tg_call probe = {.id = (char *)id, .tool = (char *)tool};
    tg_result *r = tg__result_new(&probe,
                                  tg_outcome_from_name(json_string_value(
                                      json_object_get(obj, "outcome"))),
                                  execution_from_name(json_string_value(
                                      json_object_get(obj, "execution"))),
                                  json_incref((json_t *)payload));
    if (r == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    const json_t *v; /* borrowed */
    if ((v = json_object_get(obj, "content")) && json_is_array(v))
        r->content = json_incref((json_t *)v);
    if ((v = json_object_get(obj, "artifact")) && json_is_object(v))
        r->artifact = json_incref((json_t *)v);
    if ((v = json_object_get(obj, "decisions")) && json_is_object(v))
        r->decisions = json_incref((json_t *)v);
    r->duration_ms = json_number_value(json_object_get(obj, "duration_ms"));
    if ((v = json_object_get(obj, "exit_status")) && json_is_integer(v))
        r->exit_status = (int)json_integer_value(v);
    if ((v = json_object_get(obj, "completed_at")))
        tg__time_from_json(v, &r->completed_at);
    r->replayed = json_is_true(json_object_get(obj, "replayed"));
    r->repaired = tg__repaired_from_json(json_object_get(obj, "repaired"));
    *out = r;
    return 0;
}
