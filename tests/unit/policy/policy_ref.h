/* SPDX-License-Identifier: MIT */
/*
 * policy_ref.h - a reference implementation of the policy's first-match
 * semantics, written to be obviously right rather than fast: it reads the
 * policy JSON as it stands (no compile step, no index), tests every rule top
 * to bottom with fnmatch(3) for every pattern, compares numbers as long
 * double, resolves `under` paths the way spec'd in the issue (lexical fold,
 * then realpath(3) of the longest existing ancestor and the rest appended),
 * and stops at the first rule that holds. The engine must agree with it on
 * every input; test_policy.c and tests/fuzz/fuzz_policy.c compare the two.
 * Header-only. Assumes the policy compiled (it does not re-validate).
 */
#ifndef TG_POLICY_REF_H
#define TG_POLICY_REF_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fnmatch.h>
#include <jansson.h>
#include <limits.h>
#include <pcre2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool ref_equal(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b)) {
        /* long double holds every int64 and every double exactly */
        long double x = json_is_integer(a) ? (long double)json_integer_value(a)
                                           : (long double)json_real_value(a);
        long double y = json_is_integer(b) ? (long double)json_integer_value(b)
                                           : (long double)json_real_value(b);
        return x == y;
    }
    if (json_is_string(a) && json_is_string(b))
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b),
                      json_string_length(a)) == 0;
    if (json_is_array(a) && json_is_array(b)) {
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!ref_equal(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    if (json_is_object(a) && json_is_object(b)) {
        if (json_object_size(a) != json_object_size(b))
            return false;
        const char *k;
        json_t *v; /* borrowed */
        json_object_foreach((json_t *)a, k, v)
        {
            json_t *w = json_object_get(b, k); /* borrowed */
            if (w == NULL || !ref_equal(v, w))
                return false;
        }
        return true;
    }
    return json_typeof(a) == json_typeof(b) && !json_is_number(a) &&
           !json_is_string(a) && !json_is_array(a) && !json_is_object(a);
}

/* Code points by decoding each sequence by its lead byte. */
static size_t ref_codepoints(const char *s, size_t n)
{
    size_t count = 0, i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        i += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        count++;
    }
    return count;
}

/* Lexical fold of an absolute path into out (components in place). */
static void ref_fold(const char *in, char *out, size_t size)
{
    char *comp[512];
    size_t n = 0;
    char tmp[8192];
    snprintf(tmp, sizeof tmp, "%s", in);
    for (char *save = NULL, *c = strtok_r(tmp, "/", &save); c != NULL;
         c = strtok_r(NULL, "/", &save)) {
        if (strcmp(c, ".") == 0)
            continue;
        if (strcmp(c, "..") == 0) {
            if (n > 0)
                n--;
            continue;
        }
        if (n < 512)
            comp[n++] = c;
    }
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, size - len, "/%s", comp[i]);
    if (n == 0)
        snprintf(out, size, "/");
}

/* realpath of the longest existing ancestor, then the rest. */
static void ref_resolve(const char *base, const char *path, char *out,
                        size_t size)
{
    char joined[8192], folded[8192], prefix[8192], real[PATH_MAX];
    if (path[0] == '/')
        snprintf(joined, sizeof joined, "%s", path);
    else
        snprintf(joined, sizeof joined, "%s/%s", base, path);
    ref_fold(joined, folded, sizeof folded);
    size_t cut = strlen(folded);
    for (;;) {
        snprintf(prefix, sizeof prefix, "%.*s", (int)cut, folded);
        if (cut == 0)
            snprintf(prefix, sizeof prefix, "/");
        if (realpath(prefix, real) != NULL)
            break;
        while (cut > 0 && folded[cut - 1] != '/')
            cut--;
        if (cut > 0)
            cut--;
    }
    const char *restp = folded + cut;
    if (strcmp(real, "/") == 0 && restp[0] == '/')
        snprintf(out, size, "%s", restp);
    else
        snprintf(out, size, "%s%s", real, restp);
}

static bool ref_under(const char *p, const char *root)
{
    if (strcmp(root, "/") == 0)
        return true;
    size_t n = strlen(root);
    return strncmp(p, root, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* -1: no match, 1: match, -2: the reference cannot tell (regex limit). */
static int ref_cond(const char *op, const json_t *want, const json_t *v,
                    const char *ws, const char *cwd)
{
    if (v == NULL)
        return -1;
    if (strcmp(op, "equals") == 0)
        return ref_equal(v, want) ? 1 : -1;
    if (strcmp(op, "one_of") == 0) {
        for (size_t i = 0; i < json_array_size(want); i++)
            if (ref_equal(v, json_array_get(want, i)))
                return 1;
        return -1;
    }
    if (!json_is_string(v))
        return -1;
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (strcmp(op, "max_length") == 0)
        return ref_codepoints(s, n) <= (size_t)json_integer_value(want) ? 1
                                                                        : -1;
    if (strcmp(op, "matches") == 0) {
        int code;
        PCRE2_SIZE off;
        pcre2_code *re =
            pcre2_compile((PCRE2_SPTR)json_string_value(want),
                          PCRE2_ZERO_TERMINATED, PCRE2_UTF, &code, &off, NULL);
        if (re == NULL)
            return -2;
        pcre2_match_data *md = pcre2_match_data_create(1, NULL);
        int rc = pcre2_match(re, (PCRE2_SPTR)s, n, 0, 0, md, NULL);
        pcre2_match_data_free(md);
        pcre2_code_free(re);
        return rc >= 0 ? 1 : rc == PCRE2_ERROR_NOMATCH ? -1 : -2;
    }
    /* under */
    if (strlen(s) != n)
        return -2;
    char root[8192], arg[8192];
    ref_resolve(ws, json_string_value(want), root, sizeof root);
    ref_resolve(cwd, s, arg, sizeof arg);
    return ref_under(arg, root) ? 1 : -1;
}

static const char *const ref_hints[4] = {"readOnlyHint", "destructiveHint",
                                         "idempotentHint", "openWorldHint"};

/* The deciding rule's index, -1 for the default, -2 when it cannot tell.
 * ws and cwd: absolute resolved paths. *decision: "allow"/"deny"/"ask". */
static long ref_decide(const json_t *policy, const char *tool,
                       const char *caller, const json_t *ann,
                       const json_t *args, const char *ws, const char *cwd,
                       const char **decision)
{
    const json_t *d = json_object_get(policy, "default"); /* borrowed */
    *decision = d ? json_string_value(d) : "allow";
    const json_t *rules = json_object_get(policy, "rules"); /* borrowed */
    for (size_t i = 0; i < json_array_size(rules); i++) {
        const json_t *r = json_array_get(rules, i);          /* borrowed */
        const json_t *t = json_object_get(r, "tool");        /* borrowed */
        const json_t *c = json_object_get(r, "caller");      /* borrowed */
        const json_t *a = json_object_get(r, "annotations"); /* borrowed */
        const json_t *g = json_object_get(r, "args");        /* borrowed */
        if (t && fnmatch(json_string_value(t), tool, 0) != 0)
            continue;
        if (c &&
            (caller == NULL || fnmatch(json_string_value(c), caller, 0) != 0))
            continue;
        bool ok = true;
        for (int h = 0; ok && h < 4; h++) {
            const json_t *want = json_object_get(a, ref_hints[h]);
            if (want == NULL)
                continue;
            const json_t *have = json_object_get(ann, ref_hints[h]);
            bool hv =
                json_is_boolean(have) ? json_is_true(have) : (h == 1 || h == 3);
            ok = hv == json_is_true(want);
        }
        const char *name, *op;
        const json_t *conds, *want; /* borrowed */
        json_object_foreach((json_t *)g, name, conds)
        {
            if (!ok)
                break;
            const json_t *v = json_object_get(args, name); /* borrowed */
            json_object_foreach((json_t *)conds, op, want)
            {
                int rc = ref_cond(op, want, v, ws, cwd);
                if (rc == -2)
                    return -2;
                if (rc < 0) {
                    ok = false;
                    break;
                }
            }
        }
        if (ok) {
            *decision = json_string_value(json_object_get(r, "decision"));
            return (long)i;
        }
    }
    return -1;
}

#endif
