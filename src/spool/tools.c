/* SPDX-License-Identifier: MIT */
/*
 * tools.c - the artifact tools a model calls to read spooled outputs:
 * artifact_read (a byte or a line range), artifact_head, artifact_tail,
 * artifact_grep and artifact_stat. Their definitions carry JSON Schemas
 * whose `artifact` property lists the ids the model may name; their
 * execution checks the arguments again (the executor is also reached
 * without the schema, by the fuzzer and by callers of the library), maps
 * every failure to an error code a model can act on, and caps each answer
 * at 64 KiB of text so an artifact tool's result never needs spooling.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "jint.h"

#define TOOL_CAP (64 * 1024) /* bytes of text in one answer */
#define READ_DEFAULT 16384   /* bytes of artifact_read by default */
#define LINES_DEFAULT 100    /* lines of artifact_read by default */
#define HEAD_DEFAULT 20      /* lines of head / tail by default */
#define LINES_MAX 5000       /* lines in one answer */
#define CONTEXT_MAX 20       /* context lines on each side */
#define MATCHES_DEFAULT 50
#define MATCHES_MAX 1000
/* The largest offset or line number: 2^53, exact as a double, so the
 * schema's maximum and this code compare the same number. */
#define BIG_MAX 9007199254740992LL

static const char *const tool_names[] = {"artifact_read", "artifact_head",
                                         "artifact_tail", "artifact_grep",
                                         "artifact_stat"};

int tg__spool_is_tool(const char *name)
{
    if (name == NULL)
        return 0;
    for (size_t i = 0; i < sizeof tool_names / sizeof tool_names[0]; i++)
        if (strcmp(name, tool_names[i]) == 0)
            return 1;
    return 0;
}

static json_t *int_prop(long long min, long long max, const char *desc)
{
    json_t *p = json_pack("{s:s, s:I, s:s}", "type", "integer", "minimum",
                          (json_int_t)min, "description", desc); /* new ref */
    if (p && max > 0 && json_object_set_new(p, "maximum", json_integer(max))) {
        json_decref(p);
        return NULL;
    }
    return p;
}

/* {"type":"object","properties":{"artifact":…, more…},"required":[…],
 * "additionalProperties":false}; `more` is stolen. */
static json_t *schema(const json_t *ids, json_t *more, bool need_pattern)
{
    json_t *s = NULL; /* new ref */
    json_t *art = json_pack(
        "{s:s, s:O, s:s}", "type", "string", "enum", ids, "description",
        "id of the artifact (art_ followed by 24 hex digits), as given in a "
        "spooled tool result"); /* new ref */
    if (art == NULL || more == NULL ||
        json_object_set_new(more, "artifact", art) != 0) {
        if (art && more == NULL)
            json_decref(art);
        goto done;
    }
    art = NULL;
    s = json_pack("{s:s, s:O, s:[s], s:b}", "type", "object", "properties",
                  more, "required", "artifact", "additionalProperties", 0);
    if (s && need_pattern &&
        json_array_append_new(json_object_get(s, "required"),
                              json_string("pattern"))) {
        json_decref(s);
        s = NULL;
    }
done:
    json_decref(more);
    return s;
}

static json_t *def(const char *name, const char *desc, json_t *input_schema)
{
    if (input_schema == NULL)
        return NULL;
    return json_pack("{s:s, s:s, s:o}", "name", name, "description", desc,
                     "input_schema", input_schema);
}

json_t *tg__spool_tool_defs(const char *const *ids, size_t n)
{
    json_t *enm = json_array();  /* new ref */
    json_t *defs = json_array(); /* new ref */
    if (enm == NULL || defs == NULL)
        goto fail;
    for (size_t i = 0; i < n; i++)
        if (tg__spool_id_valid(ids[i]) &&
            json_array_append_new(enm, json_string(ids[i])) != 0)
            goto fail;
    json_t *d[5] = {NULL}; /* new refs */
    d[0] = def(
        "artifact_read",
        "Read part of a spooled tool output (an artifact): a byte range "
        "(offset, length) or a line range (line, lines). Text comes back as "
        "text, binary as base64. Answers are capped at 64 KiB.",
        schema(enm,
               json_pack(
                   "{s:o, s:o, s:o, s:o}", "offset",
                   int_prop(0, BIG_MAX, "byte offset to start at"), "length",
                   int_prop(1, TOOL_CAP, "bytes to read (default 16384)"),
                   "line", int_prop(1, BIG_MAX, "first line to read (1-based)"),
                   "lines",
                   int_prop(1, LINES_MAX,
                            "number of lines to read (default 100)")),
               false));
    d[1] = def("artifact_head",
               "The first lines of a spooled tool output (an artifact).",
               schema(enm,
                      json_pack("{s:o}", "lines",
                                int_prop(1, LINES_MAX,
                                         "number of lines (default 20)")),
                      false));
    d[2] = def("artifact_tail",
               "The last lines of a spooled tool output (an artifact).",
               schema(enm,
                      json_pack("{s:o}", "lines",
                                int_prop(1, LINES_MAX,
                                         "number of lines (default 20)")),
                      false));
    d[3] = def(
        "artifact_grep",
        "Search a spooled tool output (an artifact) for lines matching a "
        "regular expression (PCRE2 syntax), like grep -n: line numbers, "
        "byte offsets and optional context lines.",
        schema(enm,
               json_pack(
                   "{s:{s:s, s:s}, s:{s:s, s:s}, s:o, s:o, s:o, s:o, "
                   "s:{s:s, s:s}}",
                   "pattern", "type", "string", "description",
                   "PCRE2 regular expression, matched against each line",
                   "ignore_case", "type", "boolean", "description",
                   "match case-insensitively", "context",
                   int_prop(0, CONTEXT_MAX,
                            "lines of context before and after each match"),
                   "before",
                   int_prop(0, CONTEXT_MAX, "lines of context before"), "after",
                   int_prop(0, CONTEXT_MAX, "lines of context after"),
                   "max_matches",
                   int_prop(1, MATCHES_MAX,
                            "most matching lines to return (default 50)"),
                   "count_only", "type", "boolean", "description",
                   "only count the matching lines"),
               true));
    d[4] = def("artifact_stat",
               "Size in bytes and lines, media type and SHA-256 of a spooled "
               "tool output (an artifact).",
               schema(enm, json_object(), false));
    for (int i = 0; i < 5; i++) {
        if (d[i] == NULL || json_array_append_new(defs, d[i]) != 0) {
            for (int k = i + 1; k < 5; k++) /* d[i] is gone either way */
                json_decref(d[k]);
            goto fail;
        }
    }
    json_decref(enm);
    return defs;
fail:
    json_decref(enm);
    json_decref(defs);
    return NULL;
}

/* ------------------------------------------------------------ execution */

typedef struct toolrun {
    const json_t *args; /* borrowed */
    const char **code;
    tg_error *err;
} toolrun;

static int bad_args(toolrun *t, const char *fmt, const char *a)
{
    *t->code = "INVALID_ARGUMENTS";
    return tg__error_set(t->err, TG_EINVAL, fmt, a);
}

/* Only `keys` may appear. */
static int check_keys(toolrun *t, const char *tool, const char *const *keys)
{
    const char *k;
    json_t *v; /* borrowed */
    json_object_foreach((json_t *)t->args, k, v)
    {
        (void)v;
        bool ok = false;
        for (size_t i = 0; keys[i]; i++)
            ok = ok || strcmp(k, keys[i]) == 0;
        if (!ok) {
            *t->code = "INVALID_ARGUMENTS";
            return tg__error_set(t->err, TG_EINVAL,
                                 "%s: unknown argument '%.64s'", tool, k);
        }
    }
    return 0;
}

/* An optional integer argument in [min, max]; *present says it was given. */
static int get_int(toolrun *t, const char *key, long long min, long long max,
                   long long dflt, long long *out, bool *present)
{
    const json_t *v = json_object_get(t->args, key); /* borrowed */
    *out = dflt;
    if (present)
        *present = v != NULL;
    if (v == NULL)
        return 0;
    /* JSON Schema's "integer" is any number with no fraction: 2e3 and
     * 2.0 are integers too, as the tool's schema says */
    int64_t n;
    if (!tg__json_int(v, &n) || n < min || n > max) {
        *t->code = "INVALID_ARGUMENTS";
        return tg__error_set(t->err, TG_EINVAL,
                             "'%s' must be a whole number from %lld to %lld",
                             key, min, max);
    }
    *out = n;
    return 0;
}

static int get_bool(toolrun *t, const char *key, bool *out)
{
    const json_t *v = json_object_get(t->args, key); /* borrowed */
    *out = false;
    if (v == NULL)
        return 0;
    if (!json_is_boolean(v))
        return bad_args(t, "'%s' must be true or false", key);
    *out = json_is_true(v);
    return 0;
}

/* Maps a reader's failure to the tool's error code. */
static int op_fail(tg_spool *sp, const char *id, int rc, toolrun *t)
{
    switch (rc) {
    case TG_ENOTFOUND: {
        tg__spool_state s = tg__spool_state_of(sp, id);
        *t->code = s == TG_SPOOL_EVICTED || s == TG_SPOOL_RELEASED
                       ? "ARTIFACT_EVICTED"
                       : "ARTIFACT_NOT_FOUND";
        break;
    }
    case TG_EINVAL:
        *t->code = "INVALID_PATTERN"; /* ids were checked before */
        break;
    case TG_ELIMIT:
        *t->code = "PATTERN_TOO_COMPLEX";
        break;
    default:
        *t->code = "TOOL_FAILED";
    }
    return rc;
}

/* Text of a reader as valid UTF-8 (binary bytes become U+FFFD; a cut
 * character at either end is dropped). */
static json_t *text_json(const tg__spool_text *r, size_t *skipped) /* new */
{
    const char *s = r->text.len ? r->text.data : "";
    size_t n = r->text.len, lead = 0;
    if (!r->binary) {
        while (lead < n && lead < 3 && ((unsigned char)s[lead] & 0xC0) == 0x80)
            lead++;
        n = lead + tg__spool_utf8_cut(s + lead, n - lead);
        if (skipped)
            *skipped = lead;
        return json_stringn(s + lead, n - lead);
    }
    if (skipped)
        *skipped = 0;
    tg__buf b;
    tg__buf_init(&b, 0);
    json_t *v = tg__spool_append_sanitized(&b, s, n) == 0
                    ? json_stringn(b.len ? b.data : "", b.len)
                    : NULL; /* new ref */
    tg__buf_cleanup(&b);
    return v;
}

static json_t *lines_json(const char *id, const tg__spool_text *r) /* new */
{
    json_t *o = json_pack(
        "{s:s, s:I, s:I, s:I, s:o, s:b, s:b}", "artifact", id, "first_line",
        (json_int_t)(r->text.len ? r->first_line : 0), "last_line",
        (json_int_t)r->last_line, "total_lines", (json_int_t)r->total_lines,
        "text", text_json(r, NULL), "truncated", r->truncated, "eof",
        r->offset + r->text.len >= r->total_bytes);
    return o;
}

static char *base64(const char *s, size_t n)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((n + 2) / 3 * 4 + 1);
    if (out == NULL)
        return NULL;
    size_t o = 0, i = 0;
    const unsigned char *u = (const unsigned char *)s;
    for (; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)u[i] << 16 | (uint32_t)u[i + 1] << 8 | u[i + 2];
        out[o++] = tab[v >> 18];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = tab[(v >> 6) & 63];
        out[o++] = tab[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)u[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)u[i + 1] << 8;
        out[o++] = tab[v >> 18];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        out[o++] = '=';
    }
    out[o] = '\0';
    return out;
}

static int run_read(tg_spool *sp, const char *id, toolrun *t, json_t **out)
{
    static const char *const keys[] = {"artifact", "offset", "length",
                                       "line",     "lines",  NULL};
    long long offset, length, line, lines;
    bool has_off, has_len, has_line, has_lines;
    int rc;
    if ((rc = check_keys(t, "artifact_read", keys)) ||
        (rc = get_int(t, "offset", 0, BIG_MAX, 0, &offset, &has_off)) ||
        (rc = get_int(t, "length", 1, TOOL_CAP, READ_DEFAULT, &length,
                      &has_len)) ||
        (rc = get_int(t, "line", 1, BIG_MAX, 1, &line, &has_line)) ||
        (rc = get_int(t, "lines", 1, LINES_MAX, LINES_DEFAULT, &lines,
                      &has_lines)))
        return rc;
    if ((has_off || has_len) && (has_line || has_lines))
        return bad_args(t, "%s",
                        "give a byte range (offset, length) or a line range "
                        "(line, lines), not both");
    tg__spool_text r;
    if (has_off || has_len) {
        rc = tg__spool_read_bytes(sp, id, (uint64_t)offset, (size_t)length,
                                  TOOL_CAP, &r, t->err);
        if (rc)
            return op_fail(sp, id, rc, t);
        json_t *o = json_pack("{s:s, s:I, s:b}", "artifact", id, "total_bytes",
                              (json_int_t)r.total_bytes, "eof",
                              r.offset + r.text.len >= r.total_bytes);
        size_t skip = 0;
        json_t *body = NULL; /* new ref */
        if (r.binary) {
            char *b64 = base64(r.text.data ? r.text.data : "", r.text.len);
            body = b64 ? json_string(b64) : NULL;
            free(b64);
        } else {
            body = text_json(&r, &skip);
        }
        size_t shown =
            r.binary ? r.text.len : (body ? json_string_length(body) : 0);
        if (o == NULL || body == NULL ||
            json_object_set_new(o, r.binary ? "base64" : "text", body) ||
            json_object_set_new(o, "offset",
                                json_integer((json_int_t)(r.offset + skip))) ||
            json_object_set_new(o, "length", json_integer((json_int_t)shown))) {
            if (o == NULL || body == NULL)
                json_decref(body);
            json_decref(o);
            tg__spool_text_cleanup(&r);
            *t->code = "TOOL_FAILED";
            return tg__error_set(t->err, TG_ENOMEM, "out of memory");
        }
        tg__spool_text_cleanup(&r);
        *out = o;
        return 0;
    }
    rc = tg__spool_read_lines(sp, id, (uint64_t)line, (uint64_t)lines, TOOL_CAP,
                              &r, t->err);
    if (rc)
        return op_fail(sp, id, rc, t);
    *out = lines_json(id, &r);
    tg__spool_text_cleanup(&r);
    return 0;
}

static int run_ends(tg_spool *sp, const char *id, bool tail, toolrun *t,
                    json_t **out)
{
    static const char *const keys[] = {"artifact", "lines", NULL};
    long long lines;
    int rc;
    if ((rc = check_keys(t, tail ? "artifact_tail" : "artifact_head", keys)) ||
        (rc = get_int(t, "lines", 1, LINES_MAX, HEAD_DEFAULT, &lines, NULL)))
        return rc;
    tg__spool_text r;
    rc = tail ? tg__spool_tail(sp, id, (uint64_t)lines, TOOL_CAP, &r, t->err)
              : tg__spool_head(sp, id, (uint64_t)lines, TOOL_CAP, &r, t->err);
    if (rc)
        return op_fail(sp, id, rc, t);
    *out = lines_json(id, &r);
    tg__spool_text_cleanup(&r);
    return 0;
}

static int run_grep(tg_spool *sp, const char *id, toolrun *t, json_t **out)
{
    static const char *const keys[] = {
        "artifact", "pattern",     "ignore_case", "context", "before",
        "after",    "max_matches", "count_only",  NULL};
    long long context, before, after, max;
    bool has_before, has_after;
    tg__spool_grep_opts o = {0};
    int rc;
    if ((rc = check_keys(t, "artifact_grep", keys)) ||
        (rc = get_int(t, "context", 0, CONTEXT_MAX, 0, &context, NULL)) ||
        (rc = get_int(t, "before", 0, CONTEXT_MAX, 0, &before, &has_before)) ||
        (rc = get_int(t, "after", 0, CONTEXT_MAX, 0, &after, &has_after)) ||
        (rc = get_int(t, "max_matches", 1, MATCHES_MAX, MATCHES_DEFAULT, &max,
                      NULL)) ||
        (rc = get_bool(t, "ignore_case", &o.ignore_case)) ||
        (rc = get_bool(t, "count_only", &o.count_only)))
        return rc;
    const json_t *pattern = json_object_get(t->args, "pattern"); /* borrowed */
    if (!json_is_string(pattern))
        return bad_args(t, "%s", "artifact_grep needs 'pattern' (a string)");
    o.pattern = json_string_value(pattern);
    o.pattern_len = json_string_length(pattern);
    o.before = (unsigned)(has_before ? before : context);
    o.after = (unsigned)(has_after ? after : context);
    o.max_matches = (uint64_t)max;
    o.result_cap = TOOL_CAP;
    rc = tg__spool_grep(sp, id, &o, out, t->err);
    return rc ? op_fail(sp, id, rc, t) : 0;
}

static int run_stat(tg_spool *sp, const char *id, toolrun *t, json_t **out)
{
    static const char *const keys[] = {"artifact", NULL};
    int rc = check_keys(t, "artifact_stat", keys);
    if (rc)
        return rc;
    json_t *s = NULL; /* new ref */
    if ((rc = tg__spool_stat(sp, id, &s, t->err)) != 0)
        return op_fail(sp, id, rc, t);
    /* the preview is already in the handle the model saw */
    json_object_del(s, "preview");
    json_object_del(s, "pins");
    json_object_del(s, "last_used_at");
    json_t *id_v = json_object_get(s, "id"); /* borrowed */
    if (json_object_set(s, "artifact", id_v) == 0)
        json_object_del(s, "id");
    *out = s;
    return 0;
}

int tg__spool_tool_exec(tg_spool *sp, const char *tool, const char *args_json,
                        size_t args_len, const char *const *allowed, size_t n,
                        char **payload, const char **code, tg_error *err)
{
    const char *unused = NULL;
    *payload = NULL;
    if (code == NULL)
        code = &unused;
    *code = NULL;
    toolrun t = {.code = code, .err = err};
    if (!tg__spool_is_tool(tool)) {
        *code = "UNKNOWN_TOOL";
        return tg__error_set(err, TG_EINVAL, "no artifact tool named '%.64s'",
                             tool ? tool : "(null)");
    }
    json_error_t jerr;
    json_t *args = json_loadb(args_json ? args_json : "", args_len,
                              JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
                              &jerr); /* new ref */
    json_t *res = NULL;               /* new ref */
    int rc;
    if (!json_is_object(args)) {
        *code = "INVALID_ARGUMENTS";
        rc = tg__error_set(err, TG_EINVAL,
                           "%s: the arguments must be a JSON object%s%s", tool,
                           args ? "" : ": ", args ? "" : jerr.text);
        goto done;
    }
    t.args = args;
    const json_t *art = json_object_get(args, "artifact"); /* borrowed */
    if (!json_is_string(art)) {
        rc = bad_args(&t, "%s needs 'artifact' (an artifact id string)", tool);
        goto done;
    }
    const char *id = json_string_value(art);
    if (!tg__spool_id_valid(id) || strlen(id) != json_string_length(art)) {
        *code = "INVALID_ARTIFACT_ID";
        rc = tg__error_set(err, TG_EINVAL,
                           "malformed artifact id: expected art_ followed by "
                           "24 lowercase hex digits");
        goto done;
    }
    if (allowed != NULL) {
        bool ok = false;
        for (size_t i = 0; i < n && !ok; i++)
            ok = allowed[i] && strcmp(allowed[i], id) == 0;
        if (!ok) {
            *code = "ARTIFACT_NOT_ALLOWED";
            rc = tg__error_set(err, TG_EINVAL,
                               "artifact %s is not one this call may read "
                               "(only spooled results of other tools are)",
                               id);
            goto done;
        }
    }
    if (strcmp(tool, "artifact_read") == 0)
        rc = run_read(sp, id, &t, &res);
    else if (strcmp(tool, "artifact_head") == 0)
        rc = run_ends(sp, id, false, &t, &res);
    else if (strcmp(tool, "artifact_tail") == 0)
        rc = run_ends(sp, id, true, &t, &res);
    else if (strcmp(tool, "artifact_grep") == 0)
        rc = run_grep(sp, id, &t, &res);
    else
        rc = run_stat(sp, id, &t, &res);
    if (rc == 0 && res == NULL) {
        *code = "TOOL_FAILED";
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    if (rc == 0) {
        *payload = json_dumps(res, JSON_COMPACT);
        if (*payload == NULL) {
            *code = "TOOL_FAILED";
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
        }
    }
done:
    json_decref(res);
    json_decref(args);
    return rc;
}
