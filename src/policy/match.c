/* SPDX-License-Identifier: MIT */
/*
 * match.c - the conditions of a rule tested against one call: tool and
 * caller patterns (strcmp, a prefix test or fnmatch(3)), annotations with
 * the MCP defaults, and the argument conditions. The state a decision needs
 * (PCRE2 match data, the resolved workspace and cwd) lives in its own
 * tg__pctx, never in the policy, which is what makes concurrent decisions
 * on one policy safe. With an explain buffer every test also says what it
 * saw, for `toolgate policy check`.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* MCP's defaults for hints a tool does not give (ToolAnnotations): not
 * read-only, destructive, not idempotent, open world. */
static const bool hint_default[TG__HINT_COUNT] = {false, true, false, true};
static const char *const hint_names[TG__HINT_COUNT] = {
    "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"};

bool tg__pattern_match(const struct tg__pattern *p, const char *s)
{
    switch (p->kind) {
    case TG__PAT_NONE:
        return true;
    case TG__PAT_EXACT:
        return strcmp(p->text, s) == 0;
    case TG__PAT_PREFIX:
        return strncmp(p->text, s, p->prefix) == 0;
    default:
        if (p->suffix > 0) {
            size_t n = strlen(s), tl = strlen(p->text);
            if (n < p->suffix ||
                memcmp(s + n - p->suffix, p->text + tl - p->suffix,
                       p->suffix) != 0)
                return false;
        }
        return fnmatch(p->text, s, 0) == 0;
    }
}

size_t tg__utf8_count(const char *s, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += ((unsigned char)s[i] & 0xC0) != 0x80;
    return count;
}

static bool num_equal(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b))
        return json_integer_value(a) == json_integer_value(b);
    if (json_is_real(a) && json_is_real(b))
        return json_real_value(a) == json_real_value(b);
    const json_t *i = json_is_integer(a) ? a : b; /* borrowed */
    const json_t *r = json_is_integer(a) ? b : a; /* borrowed */
    double d = json_real_value(r);
    /* Equal only when the real is integral and the integer is exactly it:
     * converting the integer to double would round past 2^53. */
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        return false;
    json_int_t t = (json_int_t)d; /* in range: truncation is defined */
    return (double)t == d && t == json_integer_value(i);
}

bool tg__pjson_equal(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return num_equal(a, b);
    if (json_typeof(a) != json_typeof(b))
        return false;
    switch (json_typeof(a)) {
    case JSON_STRING:
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b),
                      json_string_length(a)) == 0;
    case JSON_ARRAY:
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!tg__pjson_equal(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    case JSON_OBJECT: {
        if (json_object_size(a) != json_object_size(b))
            return false;
        const char *k;
        const json_t *v; /* borrowed */
        json_object_foreach((json_t *)a, k, v)
        {
            const json_t *w = json_object_get(b, k); /* borrowed */
            if (w == NULL || !tg__pjson_equal(v, w))
                return false;
        }
        return true;
    }
    default: /* true, false, null: the type is the value */
        return true;
    }
}

void tg__pctx_cleanup(struct tg__pctx *c)
{
    pcre2_match_data_free(c->md);
    c->md = NULL;
}

/* The workspace and cwd, resolved once per decision and only when an
 * `under` condition needs them. */
static int resolve_bases(struct tg__pctx *c, tg_error *err)
{
    if (c->ws[0] != '\0')
        return 0;
    const char *ws = c->in->workspace ? c->in->workspace : ".";
    char here[TG__POLICY_PATH_MAX];
    const char *base = NULL;
    if (ws[0] != '/') {
        if (getcwd(here, sizeof here) == NULL)
            return tg__error_set(err, TG_EINVAL,
                                 "cannot resolve the workspace: no cwd");
        base = here;
    }
    int rc = tg__policy_resolve(base, ws, c->ws, err);
    if (rc == 0)
        rc = tg__policy_resolve(c->ws, c->in->cwd ? c->in->cwd : ".", c->cwd,
                                err);
    if (rc != 0)
        c->ws[0] = '\0';
    return rc;
}

static void say_value(tg__buf *b, const json_t *v)
{
    char *js = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (js != NULL && strlen(js) > 80)
        tg__buf_printf(b, "%.77s...", js);
    else
        tg__buf_puts(b, js ? js : "?");
    free(js);
}

static int regex_test(struct tg__pctx *c, const struct tg__pcond *k,
                      const json_t *v, tg_error *err)
{
    if (c->md == NULL && (c->md = pcre2_match_data_create(1, NULL)) == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory matching a regex");
    int rc = pcre2_match(k->re, (PCRE2_SPTR)json_string_value(v),
                         json_string_length(v), 0, 0, c->md, k->mctx);
    if (rc >= 0) /* 0: matched, ovector too small for the groups */
        return 1;
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
        rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT)
        return tg__error_set(err, TG_ELIMIT,
                             "regex /%.100s/ hit its match limit", k->text);
    PCRE2_UCHAR msg[160];
    pcre2_get_error_message(rc, msg, sizeof msg);
    return tg__error_set(err, TG_EINVAL, "regex /%.100s/ cannot match: %s",
                         k->text, (const char *)msg);
}

static int under_test(struct tg__pctx *c, const struct tg__pcond *k,
                      const char *name, const json_t *v, tg_error *err)
{
    if (strlen(json_string_value(v)) != json_string_length(v))
        return tg__error_set(
            err, TG_EINVAL, "argument '%s' holds a NUL byte: not a path", name);
    int rc = resolve_bases(c, err);
    if (rc != 0)
        return rc;
    char root[TG__POLICY_PATH_MAX], arg[TG__POLICY_PATH_MAX];
    if ((rc = tg__policy_resolve(c->ws, k->text, root, err)) != 0 ||
        (rc = tg__policy_resolve(c->cwd, json_string_value(v), arg, err)) != 0)
        return rc;
    bool under = tg__path_under(arg, root);
    if (c->explain)
        tg__buf_printf(c->explain, " (resolves to %s, %s %s)", arg,
                       under ? "at or beneath" : "not beneath", root);
    return under;
}

/* One condition on the argument `name` (v: its value, NULL if absent). */
static int cond_test(struct tg__pctx *c, const struct tg__pcond *k,
                     const char *name, const json_t *v, tg_error *err)
{
    if (v == NULL)
        return 0;
    switch (k->op) {
    case TG__OP_EQUALS:
        return tg__pjson_equal(v, k->value);
    case TG__OP_ONE_OF:
        for (size_t i = 0; i < json_array_size(k->value); i++)
            if (tg__pjson_equal(v, json_array_get(k->value, i)))
                return 1;
        return 0;
    case TG__OP_MATCHES:
        return json_is_string(v) ? regex_test(c, k, v, err) : 0;
    case TG__OP_UNDER:
        return json_is_string(v) ? under_test(c, k, name, v, err) : 0;
    default:
        return json_is_string(v) &&
               tg__utf8_count(json_string_value(v), json_string_length(v)) <=
                   k->max_length;
    }
}

static const char *const op_names[] = {"equals", "one_of", "matches", "under",
                                       "max_length"};

static void say_cond(tg__buf *b, const struct tg__pcond *k)
{
    tg__buf_printf(b, "%s ", op_names[k->op]);
    switch (k->op) {
    case TG__OP_EQUALS:
    case TG__OP_ONE_OF:
        say_value(b, k->value);
        break;
    case TG__OP_MATCHES:
        tg__buf_printf(b, "/%s/", k->text);
        break;
    case TG__OP_UNDER:
        tg__buf_printf(b, "'%s'", k->text);
        break;
    default:
        tg__buf_printf(b, "%zu", k->max_length);
    }
}

static bool pattern_explain(tg__buf *b, const char *what,
                            const struct tg__pattern *p, const char *s)
{
    if (p->kind == TG__PAT_NONE)
        return true;
    bool ok = s != NULL && tg__pattern_match(p, s);
    if (s == NULL)
        tg__buf_printf(b,
                       "    %s: the call has none, rule wants '%s': "
                       "fails\n",
                       what, p->text);
    else
        tg__buf_printf(b, "    %s '%s' %s '%s': %s\n", what, s,
                       ok ? "matches" : "does not match", p->text,
                       ok ? "holds" : "fails");
    return ok;
}

int tg__rule_match(struct tg__pctx *c, const struct tg__rule *r,
                   bool check_tool, tg_error *err)
{
    const tg__policy_input *in = c->in;
    tg__buf *b = c->explain;
    if (b != NULL) {
        if (!pattern_explain(b, "tool", &r->tool, in->tool) ||
            !pattern_explain(b, "caller", &r->caller, in->caller))
            return 0;
    } else {
        if (check_tool && !tg__pattern_match(&r->tool, in->tool))
            return 0;
        if (r->caller.kind != TG__PAT_NONE &&
            (in->caller == NULL || !tg__pattern_match(&r->caller, in->caller)))
            return 0;
    }
    for (int h = 0; h < TG__HINT_COUNT; h++) {
        if (r->hint[h] < 0)
            continue;
        const json_t *v = json_is_object(in->annotations)
                              ? json_object_get(in->annotations, hint_names[h])
                              : NULL; /* borrowed */
        bool given = json_is_boolean(v);
        bool have = given ? json_is_true(v) : hint_default[h];
        bool ok = have == (bool)r->hint[h];
        if (b != NULL)
            tg__buf_printf(
                b, "    %s is %s%s, rule wants %s: %s\n", hint_names[h],
                have ? "true" : "false", given ? "" : " (MCP default)",
                r->hint[h] ? "true" : "false", ok ? "holds" : "fails");
        if (!ok)
            return 0;
    }
    for (size_t i = 0; i < r->nargs; i++) {
        const struct tg__parg *a = &r->args[i];
        const json_t *v = json_is_object(in->args)
                              ? json_object_get(in->args, a->name)
                              : NULL; /* borrowed */
        for (size_t j = 0; j < a->ncond; j++) {
            if (b != NULL) {
                tg__buf_printf(b, "    args.%s ", a->name);
                if (v == NULL)
                    tg__buf_puts(b, "(absent)");
                else
                    say_value(b, v);
                tg__buf_puts(b, " ");
                say_cond(b, &a->cond[j]);
            }
            int rc = cond_test(c, &a->cond[j], a->name, v, err);
            if (b != NULL)
                tg__buf_printf(b, ": %s\n",
                               rc > 0    ? "holds"
                               : rc == 0 ? (v == NULL ? "fails (an absent "
                                                        "argument meets no "
                                                        "condition)"
                                                      : "fails")
                                         : "cannot be evaluated");
            if (rc <= 0)
                return rc;
        }
    }
    return 1;
}
