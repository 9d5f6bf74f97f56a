/* SPDX-License-Identifier: MIT */
/*
 * decide.c - one decision: the candidate rules of the tool name gathered
 * from the index (index.c) and walked merged in rule order, each tested
 * (match.c) until one holds; or, to explain a decision, every rule top to
 * bottom with what each condition saw.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* A candidate list of the index being merged. tool_checked: the list's key
 * proves the tool pattern already (the exact-name table). */
struct cursor {
    const uint32_t *idx;
    size_t n, at;
    bool tool_checked;
};

/* 2 + one per prefix length and one per suffix length (at most
 * TG__POLICY_PREFIX_MAX each). */
#define MAX_CURSORS (2 * TG__POLICY_PREFIX_MAX + 2)

static void verdict(const tg__policy *p, long rule, tg__policy_verdict *out)
{
    out->rule = rule;
    out->decision = rule < 0 ? p->dflt : p->rules[rule].decision;
    out->reason = rule < 0 ? p->default_reason : p->rules[rule].reason;
}

static int decide_indexed(const tg__policy *p, struct tg__pctx *c,
                          tg__policy_verdict *out, tg_error *err)
{
    struct cursor cur[MAX_CURSORS];
    size_t ncur = 0;
    const char *tool = c->in->tool;
    uint64_t h = TG__HASH_INIT;
    size_t len = 0;
    const struct tg__plist *s;
    /* One pass over the name: the FNV-1a hash of each prefix is the running
     * hash, probed only at lengths some glob's prefix has. */
    for (; tool[len] != '\0'; len++) {
        h = tg__hash_step(h, (unsigned char)tool[len]);
        if (len < TG__POLICY_PREFIX_MAX && (p->prefix_lens >> len & 1) != 0 &&
            (s = tg__ptab_get(&p->prefix, tool, len + 1, h)) != NULL)
            cur[ncur++] = (struct cursor){s->idx, s->n, 0, false};
    }
    if (p->suffix_lens != 0) {
        /* The same from the end, over the name reversed (as the keys). */
        char rev[TG__POLICY_PREFIX_MAX];
        uint64_t hs = TG__HASH_INIT;
        for (size_t j = 0; j < len && j < TG__POLICY_PREFIX_MAX; j++) {
            rev[j] = tool[len - 1 - j];
            hs = tg__hash_step(hs, (unsigned char)rev[j]);
            if ((p->suffix_lens >> j & 1) != 0 &&
                (s = tg__ptab_get(&p->suffix, rev, j + 1, hs)) != NULL)
                cur[ncur++] = (struct cursor){s->idx, s->n, 0, false};
        }
    }
    if ((s = tg__ptab_get(&p->exact, tool, len, h)) != NULL)
        cur[ncur++] = (struct cursor){s->idx, s->n, 0, true};
    if (p->nalways > 0)
        cur[ncur++] = (struct cursor){p->always, p->nalways, 0, false};
    for (;;) {
        /* The next rule in file order over all lists: each is sorted, and
         * a rule sits in exactly one list. */
        size_t best = ncur;
        uint32_t bi = UINT32_MAX;
        for (size_t i = 0; i < ncur; i++)
            if (cur[i].at < cur[i].n && cur[i].idx[cur[i].at] < bi) {
                bi = cur[i].idx[cur[i].at];
                best = i;
            }
        if (best == ncur)
            break;
        cur[best].at++;
        int rc = tg__rule_match(c, &p->rules[bi], !cur[best].tool_checked, err);
        if (rc < 0)
            return rc;
        if (rc > 0) {
            verdict(p, (long)bi, out);
            return 0;
        }
    }
    verdict(p, -1, out);
    return 0;
}

static int decide_explained(const tg__policy *p, struct tg__pctx *c,
                            tg__policy_verdict *out, tg_error *err)
{
    tg__buf *b = c->explain;
    tg__buf_printf(b, "call: tool '%s', caller %s%s%s\n", c->in->tool,
                   c->in->caller ? "'" : "",
                   c->in->caller ? c->in->caller : "(none)",
                   c->in->caller ? "'" : "");
    tg__buf_printf(b,
                   "rules are read top to bottom; the first whose every "
                   "condition holds decides (%zu rules, default %s)\n",
                   p->nrules, tg__policy_decision_name(p->dflt));
    for (size_t i = 0; i < p->nrules; i++) {
        const struct tg__rule *r = &p->rules[i];
        tg__buf_printf(b, "rule %zu (%s) -> %s\n", i, r->summary,
                       tg__policy_decision_name(r->decision));
        int rc = tg__rule_match(c, r, true, err);
        if (rc < 0) {
            tg__buf_printf(b, "  cannot be evaluated: %s\n",
                           err ? err->message : "error");
            return rc;
        }
        if (rc == 0) {
            tg__buf_puts(b, "  does not apply\n");
            continue;
        }
        tg__buf_printf(b, "  every condition holds: rule %zu decides: %s", i,
                       tg__policy_decision_name(r->decision));
        if (i + 1 < p->nrules)
            tg__buf_printf(b, " (rules %zu..%zu are not checked)", i + 1,
                           p->nrules - 1);
        tg__buf_printf(b, "\nreason: %s\n", r->reason);
        verdict(p, (long)i, out);
        return 0;
    }
    tg__buf_printf(b, "no rule applies: the default decides: %s\nreason: %s\n",
                   tg__policy_decision_name(p->dflt), p->default_reason);
    verdict(p, -1, out);
    return 0;
}

int tg__policy_decide(const tg__policy *p, const tg__policy_input *in,
                      tg__policy_verdict *out, tg__buf *explain, tg_error *err)
{
    if (in == NULL || in->tool == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "a policy decision needs a tool "
                             "name");
    struct tg__pctx c;
    c.in = in;
    c.md = NULL;
    c.ws[0] = '\0';
    c.cwd[0] = '\0';
    c.explain = explain;
    int rc = explain ? decide_explained(p, &c, out, err)
                     : decide_indexed(p, &c, out, err);
    tg__pctx_cleanup(&c);
    return rc;
}

int tg__policy_reachable(const tg__policy *p, const tg__policy_input *in,
                         tg_error *err)
{
    if (in == NULL || in->tool == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "a policy decision needs a tool name");
    tg__policy_input no_args = *in;
    no_args.args = NULL;
    struct tg__pctx c = {.in = &no_args};
    int rc = p->dflt != TG_POLICY_DENY;
    for (size_t i = 0; i < p->nrules; i++) {
        /* the rule without its argument conditions: does it apply to the
         * tool and the caller at all? */
        struct tg__rule r = p->rules[i];
        bool conditional = r.nargs > 0;
        r.nargs = 0;
        int m = tg__rule_match(&c, &r, true, err);
        if (m < 0) {
            rc = m;
            break;
        }
        if (m == 0)
            continue;
        if (r.decision != TG_POLICY_DENY) {
            rc = 1;
            break;
        }
        if (!conditional) {
            rc = 0; /* denied whatever the arguments */
            break;
        }
    }
    tg__pctx_cleanup(&c);
    return rc;
}
