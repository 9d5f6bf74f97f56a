/* SPDX-License-Identifier: MIT */
/*
 * fuzz_policy.c - libFuzzer target for the policy engine (src/policy). The
 * input is two JSON texts one after the other: a `policy` object and a call
 * {"tool","caller","annotations","args"}. Compiling must never crash, and a
 * failure must be TG_ECONFIG with a message and a pointer into /policy (or
 * TG_ENOMEM). A compiled policy decides the call with the index, and again
 * explained (linear); both verdicts must equal the reference implementation
 * of tests/unit/policy/policy_ref.h. The workspace does not exist, so
 * `under` is lexical there; inputs whose `under` paths are absolute or hold
 * ".." reach the real file system, where the reference's lexical fold and
 * the engine's kernel-like walk may rightly differ (a symlink followed by
 * ".."), so for those only the two engine paths are compared with each
 * other (test_policy.c checks ".." and symlinks on a tree of its own).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/policy/policy.h"
#include "../unit/policy/policy_ref.h"
#include "toolgate.h"

#define WS "/nonexistent-tg-fuzz/ws"

/* True when some string under v could lead `under` out of the lexical
 * world: absolute, or holding "..". */
static bool touches_fs(const json_t *v)
{
    if (json_is_string(v))
        return json_string_value(v)[0] == '/' ||
               strstr(json_string_value(v), "..") != NULL;
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            if (touches_fs(json_array_get(v, i)))
                return true;
        return false;
    }
    if (json_is_object(v)) {
        const char *k;
        json_t *m; /* borrowed */
        json_object_foreach((json_t *)v, k, m)
        {
            if (touches_fs(m))
                return true;
        }
    }
    return false;
}

static const char *str_member(const json_t *o, const char *key,
                              const char *dflt)
{
    const json_t *v = json_object_get(o, key); /* borrowed */
    if (json_is_string(v) &&
        strlen(json_string_value(v)) == json_string_length(v))
        return json_string_value(v);
    return dflt;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *pol = json_loadb((const char *)data, size,
                             JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK,
                             &jerr); /* new ref */
    if (pol == NULL)
        return 0;
    size_t used = (size_t)jerr.position;
    json_t *call = used < size ? json_loadb((const char *)data + used,
                                            size - used, JSON_DECODE_ANY, &jerr)
                               : NULL; /* new ref */
    tg__policy *p = NULL;
    tg_error err = {0};
    int rc = tg__policy_compile(pol, &p, &err);
    if (rc != 0) {
        if (err.message[0] == '\0' || p != NULL)
            abort();
        if (rc != TG_ENOMEM &&
            (rc != TG_ECONFIG || strncmp(err.pointer, "/policy", 7) != 0))
            abort();
        goto done;
    }
    const char *tool = str_member(call, "tool", "t");
    const char *caller = str_member(call, "caller", NULL);
    const json_t *ann = json_object_get(call, "annotations"); /* borrowed */
    const json_t *args = json_object_get(call, "args");       /* borrowed */
    tg__policy_input in = {tool, caller, ann, args, WS, NULL};
    tg__policy_verdict v, v2;
    tg_error err2 = {0};
    rc = tg__policy_decide(p, &in, &v, NULL, &err);
    tg__buf b;
    tg__buf_init(&b, 1 << 20);
    int rc2 = tg__policy_decide(p, &in, &v2, &b, &err2);
    tg__buf_cleanup(&b);
    if (rc != rc2 ||
        (rc == 0 && (v.rule != v2.rule || v.decision != v2.decision ||
                     v.reason != v2.reason)))
        abort(); /* the index and the linear walk disagree */
    if (rc != 0) {
        if (err.message[0] == '\0')
            abort();
        goto done;
    }
    if (v.reason == NULL || v.rule >= (long)tg__policy_rule_count(p))
        abort();
    if (!touches_fs(pol) && !touches_fs(args)) {
        const char *want_d;
        long want = ref_decide(pol, tool, caller, ann, args, WS, WS, &want_d);
        if (want == -2 || v.rule != want ||
            strcmp(tg__policy_decision_name(v.decision), want_d) != 0)
            abort(); /* the engine and the reference disagree */
    }
done:
    tg__policy_free(p);
    json_decref(call);
    json_decref(pol);
    return 0;
}
