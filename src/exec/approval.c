/* SPDX-License-Identifier: MIT */
/*
 * approval.c - answering a policy's `ask`. An operator approves one call
 * (bound to its checksum: the same tool with the same arguments is not asked
 * again during this runtime, changed arguments are) or every call of a tool
 * for the rest of the session; either for the call's caller only. --approve
 * answers yes to everything; without an approver the call is denied by the
 * caller (check.c). The answers of the synchronous approver and of an
 * asynchronous ask (ask.c) are kept alike.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "runtime.h"

struct tg__approvals {
    char **keys; /* "caller\ntool\n<checksum>" (once) or "caller\ntool\n*"
                    (always) */
    size_t n, cap;
};

void tg__approvals_free(tg__approvals *a)
{
    if (a == NULL)
        return;
    for (size_t i = 0; i < a->n; i++)
        free(a->keys[i]);
    free(a->keys);
    free(a);
}

/* "caller\ntool\nrest" in a new string, NULL on out of memory: an
 * approval holds for the caller it was given to (one MCP client's user
 * approves for that client, not for every client of the server). */
static char *make_key(const tg_call *call, const char *rest)
{
    const char *who = call->caller_id != NULL ? call->caller_id : "";
    size_t wl = strlen(who), tl = strlen(call->tool), rl = strlen(rest);
    char *k = malloc(wl + tl + rl + 3);
    if (k == NULL)
        return NULL;
    memcpy(k, who, wl);
    k[wl] = '\n';
    memcpy(k + wl + 1, call->tool, tl);
    k[wl + 1 + tl] = '\n';
    memcpy(k + wl + tl + 2, rest, rl + 1);
    return k;
}

static bool has_key(const tg__approvals *a, const tg_call *call,
                    const char *rest)
{
    char *k = a != NULL ? make_key(call, rest) : NULL;
    bool found = false;
    for (size_t i = 0; k != NULL && i < a->n && !found; i++)
        found = strcmp(a->keys[i], k) == 0;
    free(k); /* out of memory: not found, so asked again */
    return found;
}

static int remember(tg_runtime *rt, const tg_call *call, const char *rest)
{
    if (rt->approvals == NULL &&
        (rt->approvals = calloc(1, sizeof *rt->approvals)) == NULL)
        return TG_ENOMEM;
    tg__approvals *a = rt->approvals;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 8;
        char **k = realloc(a->keys, cap * sizeof *k);
        if (k == NULL)
            return TG_ENOMEM;
        a->keys = k;
        a->cap = cap;
    }
    if ((a->keys[a->n] = make_key(call, rest)) == NULL)
        return TG_ENOMEM;
    a->n++;
    return 0;
}

int tg__approval_ask(tg_runtime *rt, const tg_call *call, const char *reason,
                     bool prompt, const char **approved_by)
{
    *approved_by = NULL;
    if (rt->approve) {
        *approved_by = "--approve";
        return 1;
    }
    const char *sum = tg_call_checksum((tg_call *)call);
    if (sum == NULL)
        return TG_ENOMEM;
    if (has_key(rt->approvals, call, "*")) {
        *approved_by = "operator (always, this session)";
        return 1;
    }
    if (has_key(rt->approvals, call, sum)) {
        *approved_by = "operator (these arguments, earlier)";
        return 1;
    }
    if (!prompt || rt->approver == NULL)
        return 0;
    tg_approval a = rt->approver(rt->approver_ud, call, reason);
    if (tg__approval_keep(rt, call, a, approved_by) != 0)
        return TG_ENOMEM;
    return *approved_by != NULL;
}

int tg__approval_keep(tg_runtime *rt, const tg_call *call, tg_approval answer,
                      const char **approved_by)
{
    *approved_by = NULL;
    if (answer == TG_APPROVAL_ALWAYS) {
        *approved_by = "operator (always, this session)";
        return remember(rt, call, "*");
    }
    if (answer == TG_APPROVAL_YES) {
        const char *sum = tg_call_checksum((tg_call *)call);
        if (sum == NULL)
            return TG_ENOMEM;
        *approved_by = "operator";
        return remember(rt, call, sum);
    }
    return 0;
}

void tg_runtime_set_approver(tg_runtime *rt, tg_approve_fn fn, void *ud)
{
    if (rt == NULL)
        return;
    rt->approver = fn;
    rt->approver_ud = ud;
}
