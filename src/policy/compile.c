/* SPDX-License-Identifier: MIT */
/*
 * compile.c - turns the `policy` object of toolgate.json into a tg__policy:
 * every key checked (unknown keys are errors, so a typo never silently
 * widens a policy), regexes compiled once with PCRE2 (JIT when available,
 * match limits always), a summary and a reason per rule written once so a
 * decision formats nothing, and the rule index built (index.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "jint.h"

/* Match limits of a `matches` regex: backtracking ends in TG_ELIMIT, never
 * a hang (a catastrophic pattern from a config must not stall decisions). */
#define RX_MATCH_LIMIT 200000
#define RX_DEPTH_LIMIT 10000
#define RX_HEAP_LIMIT_KIB 8192

/* Where in the config a value is: "policy.rules[3].args.path" and
 * "/policy/rules/3/args/path". */
struct where {
    char name[256];
    char ptr[256];
};

static void where_key(struct where *dst, const struct where *src,
                      const char *key)
{
    /* Cut names are fine in messages: the return values are ignored on
     * purpose (and read, so the compiler knows). */
    if (snprintf(dst->name, sizeof dst->name, "%s.%s", src->name, key) < 0)
        dst->name[0] = '\0';
    /* RFC 6901: "~" is written "~0", "/" is "~1". */
    int w = snprintf(dst->ptr, sizeof dst->ptr, "%s/", src->ptr);
    size_t n = w < 0 ? 0 : (size_t)w;
    for (const char *k = key; *k != '\0' && n + 3 < sizeof dst->ptr; k++) {
        if (*k == '~' || *k == '/') {
            dst->ptr[n++] = '~';
            dst->ptr[n++] = *k == '~' ? '0' : '1';
        } else
            dst->ptr[n++] = *k;
    }
    if (n >= sizeof dst->ptr)
        n = sizeof dst->ptr - 1;
    dst->ptr[n] = '\0';
}

static void where_index(struct where *dst, const struct where *src, size_t i)
{
    if (snprintf(dst->name, sizeof dst->name, "%s[%zu]", src->name, i) < 0)
        dst->name[0] = '\0';
    if (snprintf(dst->ptr, sizeof dst->ptr, "%s/%zu", src->ptr, i) < 0)
        dst->ptr[0] = '\0';
}

static int bad(tg_error *err, const struct where *w, const char *fmt, ...)
    TG__PRINTF(3, 4);
static int bad(tg_error *err, const struct where *w, const char *fmt, ...)
{
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    tg__error_set(err, TG_ECONFIG, "%s %s", w->name, what);
    tg__error_pointer(err, w->ptr);
    return TG_ECONFIG;
}

static int oom(tg_error *err)
{
    return tg__error_set(err, TG_ENOMEM, "out of memory compiling the policy");
}

/* A string value without NUL bytes (a NUL would cut the C string the
 * matchers see and make the rule test something else than it says). */
static int get_string(const json_t *v, const struct where *w, const char **out,
                      tg_error *err)
{
    if (!json_is_string(v))
        return bad(err, w, "must be a string");
    if (strlen(json_string_value(v)) != json_string_length(v))
        return bad(err, w, "must not contain a NUL byte");
    *out = json_string_value(v);
    return 0;
}

static int get_decision(const json_t *v, const struct where *w,
                        tg__policy_decision *out, tg_error *err)
{
    const char *s = NULL;
    int rc = get_string(v, w, &s, err);
    if (rc != 0)
        return bad(err, w, "must be \"allow\", \"deny\" or \"ask\"");
    if (strcmp(s, "allow") == 0)
        *out = TG_POLICY_ALLOW;
    else if (strcmp(s, "deny") == 0)
        *out = TG_POLICY_DENY;
    else if (strcmp(s, "ask") == 0)
        *out = TG_POLICY_ASK;
    else
        return bad(err, w, "must be \"allow\", \"deny\" or \"ask\", not \"%s\"",
                   s);
    return 0;
}

static int pattern_init(struct tg__pattern *p, const char *text, tg_error *err)
{
    p->text = strdup(text);
    if (p->text == NULL)
        return oom(err);
    size_t n = strcspn(text, "*?[\\");
    if (text[n] == '\0')
        p->kind = TG__PAT_EXACT;
    else if (text[n] == '*' && text[n + 1] == '\0')
        p->kind = TG__PAT_PREFIX;
    else
        p->kind = TG__PAT_GLOB;
    p->prefix = n;
    if (p->kind == TG__PAT_GLOB) {
        /* After the last metacharacter every byte is literal (a "]" outside
         * a bracket is literal too), so a name must end with them: a cheap
         * reject before fnmatch. */
        size_t len = strlen(text), i = len;
        while (i > 0 && strchr("*?[]\\", text[i - 1]) == NULL)
            i--;
        p->suffix = len - i;
    }
    return 0;
}

static const char *const hint_names[TG__HINT_COUNT] = {
    "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"};

static int compile_hints(struct tg__rule *r, const json_t *obj,
                         const struct where *w, tg_error *err)
{
    if (!json_is_object(obj))
        return bad(err, w, "must be an object");
    const char *key;
    const json_t *v; /* borrowed */
    json_object_foreach((json_t *)obj, key, v)
    {
        struct where kw;
        where_key(&kw, w, key);
        int h = 0;
        while (h < TG__HINT_COUNT && strcmp(hint_names[h], key) != 0)
            h++;
        if (h == TG__HINT_COUNT)
            return bad(err, &kw,
                       "is not a known annotation (readOnlyHint, "
                       "destructiveHint, idempotentHint, openWorldHint)");
        if (!json_is_boolean(v))
            return bad(err, &kw, "must be true or false");
        r->hint[h] = (signed char)json_is_true(v);
    }
    return 0;
}

static int compile_regex(struct tg__pcond *c, const char *pattern,
                         const struct where *w, tg_error *err)
{
    int code;
    PCRE2_SIZE off;
    c->re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF,
                          &code, &off, NULL);
    if (c->re == NULL) {
        if (code == PCRE2_ERROR_HEAP_FAILED)
            return oom(err);
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(code, msg, sizeof msg);
        return bad(err, w, "is not a valid regex: %s at offset %zu",
                   (const char *)msg, (size_t)off);
    }
    /* No JIT (an old CPU, a hardened kernel): the interpreter is correct,
     * only slower. */
    (void)pcre2_jit_compile(c->re, PCRE2_JIT_COMPLETE);
    c->mctx = pcre2_match_context_create(NULL);
    if (c->mctx == NULL)
        return oom(err);
    pcre2_set_match_limit(c->mctx, RX_MATCH_LIMIT);
    pcre2_set_depth_limit(c->mctx, RX_DEPTH_LIMIT);
    pcre2_set_heap_limit(c->mctx, RX_HEAP_LIMIT_KIB);
    return 0;
}

/* One operator of an argument's condition object. */
static int compile_op(struct tg__pcond *c, const char *op, const json_t *v,
                      const struct where *w, tg_error *err)
{
    const char *s = NULL;
    int rc;
    if (strcmp(op, "equals") == 0) {
        c->op = TG__OP_EQUALS;
    } else if (strcmp(op, "one_of") == 0) {
        c->op = TG__OP_ONE_OF;
        if (!json_is_array(v) || json_array_size(v) == 0)
            return bad(err, w, "must be a non-empty array");
    } else if (strcmp(op, "matches") == 0) {
        c->op = TG__OP_MATCHES;
        if ((rc = get_string(v, w, &s, err)) != 0)
            return rc;
        if ((c->text = strdup(s)) == NULL)
            return oom(err);
        return compile_regex(c, s, w, err);
    } else if (strcmp(op, "under") == 0) {
        c->op = TG__OP_UNDER;
        if ((rc = get_string(v, w, &s, err)) != 0)
            return rc;
        if (*s == '\0')
            return bad(err, w,
                       "must not be empty (use \".\" for the "
                       "workspace)");
        if (strlen(s) >= TG__POLICY_PATH_MAX)
            return bad(err, w, "is too long");
        if ((c->text = strdup(s)) == NULL)
            return oom(err);
        return 0;
    } else if (strcmp(op, "max_length") == 0) {
        c->op = TG__OP_MAX_LENGTH;
        int64_t n;
        if (!tg__json_int(v, &n) || n < 0)
            return bad(err, w, "must be a non-negative integer");
        c->max_length = (size_t)n;
        return 0;
    } else {
        return bad(err, w,
                   "is not a known condition (equals, one_of, matches, "
                   "under, max_length)");
    }
    /* equals, one_of: a private copy, so the config may change or go away
     * and concurrent decisions never touch a shared refcount. */
    c->value = json_deep_copy(v);
    if (c->value == NULL)
        return oom(err);
    return 0;
}

static int compile_args(struct tg__rule *r, const json_t *obj,
                        const struct where *w, tg_error *err)
{
    if (!json_is_object(obj))
        return bad(err, w, "must be an object");
    r->args = calloc(json_object_size(obj) + 1, sizeof *r->args);
    if (r->args == NULL)
        return oom(err);
    const char *key;
    const json_t *cobj; /* borrowed */
    json_object_foreach((json_t *)obj, key, cobj)
    {
        struct where aw;
        where_key(&aw, w, key);
        struct tg__parg *a = &r->args[r->nargs++];
        if ((a->name = strdup(key)) == NULL)
            return oom(err);
        if (!json_is_object(cobj) || json_object_size(cobj) == 0)
            return bad(err, &aw,
                       "must be an object with one of equals, one_of, "
                       "matches, under, max_length");
        a->cond = calloc(json_object_size(cobj), sizeof *a->cond);
        if (a->cond == NULL)
            return oom(err);
        const char *op;
        const json_t *v; /* borrowed */
        json_object_foreach((json_t *)cobj, op, v)
        {
            struct where ow;
            where_key(&ow, &aw, op);
            int rc = compile_op(&a->cond[a->ncond++], op, v, &ow, err);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

/* "tool 'write_file', caller 'guest', readOnlyHint true, args.path under
 * './out'": what a reason or an explanation calls the rule. */
static int write_summary(struct tg__rule *r, tg_error *err)
{
    tg__buf b;
    tg__buf_init(&b, 4096);
    /* A summary cut at the cap (TG_ELIMIT) is still a fine name for the
     * rule; an allocation failure is not. */
    bool nomem = false;
    const char *sep = "";
    if (r->tool.kind != TG__PAT_NONE) {
        nomem |= tg__buf_printf(&b, "tool '%s'", r->tool.text) == TG_ENOMEM;
        sep = ", ";
    }
    if (r->caller.kind != TG__PAT_NONE) {
        nomem |= tg__buf_printf(&b, "%scaller '%s'", sep, r->caller.text) ==
                 TG_ENOMEM;
        sep = ", ";
    }
    for (int h = 0; h < TG__HINT_COUNT; h++)
        if (r->hint[h] >= 0) {
            nomem |= tg__buf_printf(&b, "%s%s %s", sep, hint_names[h],
                                    r->hint[h] ? "true" : "false") == TG_ENOMEM;
            sep = ", ";
        }
    for (size_t i = 0; i < r->nargs; i++)
        for (size_t j = 0; j < r->args[i].ncond; j++) {
            const struct tg__pcond *c = &r->args[i].cond[j];
            int rc = tg__buf_printf(&b, "%sargs.%s ", sep, r->args[i].name);
            sep = ", ";
            char *js = NULL;
            switch (c->op) {
            case TG__OP_EQUALS:
            case TG__OP_ONE_OF:
                js = json_dumps(c->value, JSON_COMPACT | JSON_ENCODE_ANY);
                nomem |= js == NULL;
                if (rc == 0)
                    rc = tg__buf_printf(&b, "%s %s",
                                        c->op == TG__OP_EQUALS ? "equals"
                                                               : "one_of",
                                        js ? js : "?");
                free(js);
                break;
            case TG__OP_MATCHES:
                if (rc == 0)
                    rc = tg__buf_printf(&b, "matches /%s/", c->text);
                break;
            case TG__OP_UNDER:
                if (rc == 0)
                    rc = tg__buf_printf(&b, "under '%s'", c->text);
                break;
            default:
                if (rc == 0)
                    rc = tg__buf_printf(&b, "max_length %zu", c->max_length);
                break;
            }
            nomem |= rc == TG_ENOMEM;
        }
    if (*sep == '\0')
        nomem |= tg__buf_puts(&b, "any call") == TG_ENOMEM;
    if (nomem) {
        tg__buf_cleanup(&b);
        return oom(err);
    }
    r->summary = tg__buf_take(&b);
    return r->summary ? 0 : oom(err);
}

static const char *const verbs[] = {"allows it", "denies it",
                                    "asks for approval"};

static int compile_rule(struct tg__rule *r, size_t index, const json_t *obj,
                        const struct where *w, tg_error *err)
{
    for (int h = 0; h < TG__HINT_COUNT; h++)
        r->hint[h] = -1;
    if (!json_is_object(obj))
        return bad(err, w, "must be an object");
    const char *key, *s = NULL, *reason = NULL;
    const json_t *v; /* borrowed */
    bool have_decision = false;
    int rc;
    json_object_foreach((json_t *)obj, key, v)
    {
        struct where kw;
        where_key(&kw, w, key);
        if (strcmp(key, "tool") == 0 || strcmp(key, "caller") == 0) {
            if ((rc = get_string(v, &kw, &s, err)) != 0)
                return rc;
            if ((rc = pattern_init(key[0] == 't' ? &r->tool : &r->caller, s,
                                   err)) != 0)
                return rc;
        } else if (strcmp(key, "annotations") == 0) {
            if ((rc = compile_hints(r, v, &kw, err)) != 0)
                return rc;
        } else if (strcmp(key, "args") == 0) {
            if ((rc = compile_args(r, v, &kw, err)) != 0)
                return rc;
        } else if (strcmp(key, "decision") == 0) {
            if ((rc = get_decision(v, &kw, &r->decision, err)) != 0)
                return rc;
            have_decision = true;
        } else if (strcmp(key, "reason") == 0) {
            if ((rc = get_string(v, &kw, &reason, err)) != 0)
                return rc;
        } else {
            return bad(err, &kw,
                       "is not a known key (tool, caller, annotations, args, "
                       "decision, reason)");
        }
    }
    if (!have_decision) {
        struct where dw;
        where_key(&dw, w, "decision");
        return bad(err, &dw, "is required (\"allow\", \"deny\" or \"ask\")");
    }
    if ((rc = write_summary(r, err)) != 0)
        return rc;
    tg__buf b;
    tg__buf_init(&b, 0);
    if (reason != NULL)
        rc = tg__buf_puts(&b, reason);
    else
        rc = tg__buf_printf(&b, "policy rule %zu (%s) %s", index, r->summary,
                            verbs[r->decision]);
    if (rc != 0) {
        tg__buf_cleanup(&b);
        return oom(err);
    }
    r->reason = tg__buf_take(&b);
    return r->reason ? 0 : oom(err);
}

static void rule_cleanup(struct tg__rule *r)
{
    free(r->tool.text);
    free(r->caller.text);
    for (size_t i = 0; i < r->nargs; i++) {
        struct tg__parg *a = &r->args[i];
        for (size_t j = 0; j < a->ncond; j++) {
            json_decref(a->cond[j].value);
            pcre2_code_free(a->cond[j].re);
            pcre2_match_context_free(a->cond[j].mctx);
            free(a->cond[j].text);
        }
        free(a->cond);
        free(a->name);
    }
    free(r->args);
    free(r->summary);
    free(r->reason);
}

void tg__policy_free(tg__policy *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->nrules; i++)
        rule_cleanup(&p->rules[i]);
    free(p->rules);
    free(p->default_reason);
    tg__ptab_free(&p->exact);
    tg__ptab_free(&p->prefix);
    tg__ptab_free(&p->suffix);
    free(p->always);
    free(p);
}

int tg__policy_compile(const json_t *policy, tg__policy **out, tg_error *err)
{
    *out = NULL;
    int rc;
    tg__policy *p = calloc(1, sizeof *p);
    if (p == NULL)
        return oom(err);
    p->dflt = TG_POLICY_ALLOW;
    struct where w = {"policy", "/policy"};
    const json_t *rules = NULL; /* borrowed */
    if (policy != NULL && !json_is_null(policy)) {
        if (!json_is_object(policy)) {
            rc = bad(err, &w, "must be an object");
            goto fail;
        }
        const char *key;
        const json_t *v; /* borrowed */
        json_object_foreach((json_t *)policy, key, v)
        {
            struct where kw;
            where_key(&kw, &w, key);
            if (strcmp(key, "default") == 0) {
                if ((rc = get_decision(v, &kw, &p->dflt, err)) != 0)
                    goto fail;
            } else if (strcmp(key, "rules") == 0) {
                if (!json_is_array(v)) {
                    rc = bad(err, &kw, "must be an array");
                    goto fail;
                }
                rules = v;
            } else {
                rc = bad(err, &kw, "is not a known key (default, rules)");
                goto fail;
            }
        }
    }
    if (rules != NULL && json_array_size(rules) > 0) {
        if (json_array_size(rules) > UINT32_MAX / 2) {
            rc = tg__error_set(err, TG_ECONFIG,
                               "policy.rules has too many "
                               "rules");
            goto fail;
        }
        p->rules = calloc(json_array_size(rules), sizeof *p->rules);
        if (p->rules == NULL) {
            rc = oom(err);
            goto fail;
        }
        struct where rw;
        where_key(&rw, &w, "rules");
        for (size_t i = 0; i < json_array_size(rules); i++) {
            struct where iw;
            where_index(&iw, &rw, i);
            p->nrules = i + 1;
            rc = compile_rule(&p->rules[i], i, json_array_get(rules, i), &iw,
                              err);
            if (rc != 0)
                goto fail;
        }
    }
    tg__buf b;
    tg__buf_init(&b, 0);
    if (tg__buf_printf(&b, "no policy rule matched; the default %s",
                       verbs[p->dflt]) != 0 ||
        (p->default_reason = tg__buf_take(&b)) == NULL) {
        tg__buf_cleanup(&b);
        rc = oom(err);
        goto fail;
    }
    if ((rc = tg__policy_index(p)) != 0) {
        oom(err);
        goto fail;
    }
    for (size_t i = 0; i < p->nrules; i++)
        p->reads_args = p->reads_args || p->rules[i].nargs > 0;
    *out = p;
    return 0;
fail:
    tg__policy_free(p);
    return rc;
}

size_t tg__policy_rule_count(const tg__policy *p)
{
    return p->nrules;
}

bool tg__policy_reads_args(const tg__policy *p)
{
    return p->reads_args;
}

tg__policy_decision tg__policy_default(const tg__policy *p)
{
    return p->dflt;
}

const char *tg__policy_decision_name(tg__policy_decision d)
{
    switch (d) {
    case TG_POLICY_ALLOW:
        return "allow";
    case TG_POLICY_DENY:
        return "deny";
    default:
        return "ask";
    }
}
