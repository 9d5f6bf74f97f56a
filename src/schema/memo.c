/* SPDX-License-Identifier: MIT */
/*
 * memo.c - what keeps validation polynomial: a node's verdict at an
 * instance location is computed once per call and then remembered.
 *
 * Without it a schema graph in which a node is reachable along two paths
 * (a $ref target used twice, a recursive oneOf whose branches both descend
 * into the same children) evaluates that node at the same location once
 * per path, and the paths multiply with every level: 28 levels of
 * `oneOf: [{..., children: {$ref: node}}, {..., children: {$ref: node}}]`
 * are 2^28 evaluations. With it each (node, location, scope) is evaluated
 * at most once, so the work is bounded by nodes x tokens x scopes.
 *
 * Only nodes with more than one way in are remembered (tg__memo_plan): in
 * the tree a schema is without references every (node, location) is met
 * once anyway, so plain schemas pay nothing.
 *
 * A verdict depends on more than (node, location) in two cases, and both
 * are part of what is remembered rather than excluded:
 *   - the dynamic scope, for nodes from which a $dynamicRef or
 *     $recursiveRef that resolves through it is reachable (`dynamic`):
 *     the chain of schema resources entered is interned to an id that is
 *     part of the key (other nodes use 0, as their verdict cannot
 *     depend on it);
 *   - annotations (unevaluatedProperties/unevaluatedItems): a node
 *     evaluated for its annotations keeps, beside its verdict, the set of
 *     members or items it evaluated there, which is merged into the
 *     caller's set on reuse. An entry without that set serves only
 *     callers that collect none.
 * A failure remembered from an evaluation without a report does not stand
 * in for one that must report its violations (those are computed once,
 * then remembered as reported: the same violation is not listed twice).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ------------------------------------------------------------------ plan */

/* Calls fn on every node a check of n applies (its children in the graph;
 * a $dynamicRef's static target only). */
static void each_child(const tg__node *n, void (*fn)(void *, tg__node *),
                       void *ud)
{
#define VISIT(x)                                                               \
    do {                                                                       \
        if ((x) != NULL)                                                       \
            fn(ud, (x));                                                       \
    } while (0)
    for (uint32_t q = 0; q < n->nchecks; q++) {
        const tg__check *ck = &n->checks[q];
        switch (ck->kind) {
        case TG__CK_REF:
        case TG__CK_PROPNAMES:
        case TG__CK_NOT:
        case TG__CK_UNEVAL_ITEMS:
        case TG__CK_UNEVAL_PROPS:
            VISIT(ck->u.node);
            break;
        case TG__CK_DYNREF:
        case TG__CK_RECREF:
            VISIT(ck->u.dref.target);
            break;
        case TG__CK_ALLOF:
        case TG__CK_ANYOF:
        case TG__CK_ONEOF:
            for (uint32_t k = 0; k < ck->u.nodes.n; k++)
                VISIT(ck->u.nodes.v[k]);
            break;
        case TG__CK_IF:
            VISIT(ck->u.cond.if_);
            VISIT(ck->u.cond.then_);
            VISIT(ck->u.cond.else_);
            break;
        case TG__CK_ITEMS:
            for (uint32_t k = 0; k < ck->u.items.nprefix; k++)
                VISIT(ck->u.items.prefix[k]);
            VISIT(ck->u.items.rest);
            break;
        case TG__CK_CONTAINS:
            VISIT(ck->u.contains.node);
            break;
        case TG__CK_OBJECT: {
            const tg__objcheck *o = ck->u.obj;
            for (uint32_t k = 0; k < o->nnames; k++) {
                VISIT(o->names[k].prop);
                VISIT(o->names[k].dep_schema);
            }
            for (uint32_t k = 0; k < o->npats; k++)
                VISIT(o->pats[k].node);
            VISIT(o->additional);
            break;
        }
        default:
            break;
        }
    }
#undef VISIT
}

/* Whether n itself holds a reference that resolves through the dynamic
 * scope (a $dynamicRef to a $dynamicAnchor of its name, a $recursiveRef
 * to a resource with "$recursiveAnchor": true). */
static int scope_reader(const tg__node *n)
{
    for (uint32_t q = 0; q < n->nchecks; q++) {
        const tg__check *ck = &n->checks[q];
        if ((ck->kind == TG__CK_DYNREF && ck->u.dref.anchor != NULL) ||
            (ck->kind == TG__CK_RECREF && ck->u.dref.target->recursive_anchor))
            return 1;
    }
    return 0;
}

typedef struct plan {
    uint32_t *indeg; /* ways into each node */
    uint32_t *first; /* CSR of the parents: first[id]..first[id + 1] */
    uint32_t *fill;
    uint32_t *parent;
    const tg__node *from;
} plan;

static void count_in(void *ud, tg__node *child)
{
    plan *P = ud;
    P->indeg[child->id]++;
}

static void add_parent(void *ud, tg__node *child)
{
    plan *P = ud;
    P->parent[P->fill[child->id]++] = P->from->id;
}

int tg__memo_plan(tg_schema *s)
{
    size_t n = s->nnodes;
    plan P = {0};
    int rc = TG_ENOMEM;
    for (size_t k = 0; k < n; k++)
        s->nodes[k]->id = (uint32_t)k;
    P.indeg = calloc(n + 1, sizeof *P.indeg);
    P.first = calloc(n + 1, sizeof *P.first);
    P.fill = calloc(n + 1, sizeof *P.fill);
    if (P.indeg == NULL || P.first == NULL || P.fill == NULL)
        goto done;
    for (size_t k = 0; k < n; k++)
        each_child(s->nodes[k], count_in, &P);
    size_t edges = 0;
    for (size_t k = 0; k < n; k++) {
        P.first[k] = (uint32_t)edges;
        P.fill[k] = (uint32_t)edges;
        edges += P.indeg[k];
    }
    P.first[n] = (uint32_t)edges;
    P.parent = malloc((edges + 1) * sizeof *P.parent);
    if (P.parent == NULL)
        goto done;
    for (size_t k = 0; k < n; k++) {
        P.from = s->nodes[k];
        each_child(s->nodes[k], add_parent, &P);
    }
    /* More than one way in: two references, or the validation's entry
     * and a reference to the root. The targets a dynamic reference may
     * take at run time are not edges of the graph: all are remembered. */
    if (s->root != NULL)
        P.indeg[s->root->id]++;
    for (size_t k = 0; k < n; k++)
        s->nodes[k]->memo = P.indeg[k] > 1 || s->nodes[k]->recursive_anchor;
    for (size_t k = 0; k < n; k++)
        for (uint32_t d = 0; d < s->nodes[k]->ndyn; d++)
            s->nodes[k]->dyn[d].node->memo = 1;
    /* `dynamic` flows from the nodes that read the scope to every node
     * from which they are reachable: a walk up the parent edges, with
     * P.fill reused as the work list. */
    uint32_t *work = P.fill, nwork = 0;
    s->dynamic = 0;
    for (size_t k = 0; k < n; k++)
        if (scope_reader(s->nodes[k])) {
            s->nodes[k]->dynamic = 1;
            work[nwork++] = (uint32_t)k;
            s->dynamic = 1;
        }
    while (nwork > 0) {
        uint32_t k = work[--nwork];
        for (uint32_t e = P.first[k]; e < P.first[k + 1]; e++) {
            tg__node *up = s->nodes[P.parent[e]];
            if (!up->dynamic) {
                up->dynamic = 1;
                work[nwork++] = up->id;
            }
        }
    }
    rc = 0;
done:
    free(P.indeg);
    free(P.first);
    free(P.fill);
    free(P.parent);
    return rc;
}

/* ----------------------------------------------------------------- table */

static inline uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return h;
}

static inline uint64_t key_hash(const tg__node *node, uint32_t at,
                                uint32_t scope)
{
    return mix((uint64_t)(uintptr_t)node ^
               ((uint64_t)at << 32 | scope) * UINT64_C(0x9e3779b97f4a7c15));
}

void tg__memo_cleanup(tg__memo *m)
{
    if (m->slot != m->inl)
        free(m->slot);
    if (m->slot != NULL)
        free(m->words);
    free(m->sslot);
    m->slot = NULL;
    m->sslot = NULL;
}

/* The slot of the key, or the free slot where it belongs. */
static tg__memo_ent *probe(tg__memo_ent *slot, uint32_t cap,
                           const tg__node *node, uint32_t at, uint32_t scope)
{
    uint32_t mask = cap - 1;
    uint32_t k = (uint32_t)key_hash(node, at, scope) & mask;
    while (slot[k].node != NULL &&
           (slot[k].node != node || slot[k].at != at || slot[k].scope != scope))
        k = (k + 1) & mask;
    return &slot[k];
}

static int grow(tg__memo *m)
{
    uint32_t cap = m->cap * 2;
    tg__memo_ent *slot = calloc(cap, sizeof *slot);
    if (slot == NULL)
        return TG_ENOMEM;
    for (uint32_t k = 0; k < m->cap; k++)
        if (m->slot[k].node != NULL)
            *probe(slot, cap, m->slot[k].node, m->slot[k].at,
                   m->slot[k].scope) = m->slot[k];
    if (m->slot != m->inl)
        free(m->slot);
    m->slot = slot;
    m->cap = cap;
    return 0;
}

tg__memo_ent *tg__memo_get(tg__memo *m, const tg__node *node, uint32_t at,
                           uint32_t scope, int *fresh)
{
    if (m->slot == NULL) {
        memset(m->inl, 0, sizeof m->inl);
        m->slot = m->inl;
        m->cap = TG__MEMO_INLINE;
        m->n = 0;
        m->words = NULL;
        m->nwords = m->capwords = 0;
    }
    tg__memo_ent *e = probe(m->slot, m->cap, node, at, scope);
    if (e->node != NULL) {
        *fresh = 0;
        return e;
    }
    if (m->n >= TG__MEMO_MAX)
        return NULL;
    /* At most half full, so probes stay short and always end. */
    if (2 * (m->n + 1) > m->cap) {
        if (grow(m) != 0)
            return NULL;
        e = probe(m->slot, m->cap, node, at, scope);
    }
    m->n++;
    e->node = node;
    e->at = at;
    e->scope = scope;
    e->bits = TG__MEMO_NO_BITS;
    e->state = TG__MEMO_BUSY;
    *fresh = 1;
    return e;
}

/* Doubles the scope table (rehashing); on failure it stays as it was. */
static void grow_scopes(tg__memo *m)
{
    uint32_t cap = m->scap ? m->scap * 2 : 64;
    tg__memo_scope *s = calloc(cap, sizeof *s);
    if (s == NULL)
        return;
    for (uint32_t k = 0; k < m->scap; k++) {
        const tg__memo_scope *o = &m->sslot[k];
        if (o->res == NULL)
            continue;
        uint32_t j = (uint32_t)key_hash(o->res, o->up, 0) & (cap - 1);
        while (s[j].res != NULL)
            j = (j + 1) & (cap - 1);
        s[j] = *o;
    }
    free(m->sslot);
    m->sslot = s;
    m->scap = cap;
}

uint32_t tg__memo_scope_id(tg__memo *m, uint32_t up, const tg__node *res)
{
    if (up == TG__MEMO_NO_SCOPE)
        return TG__MEMO_NO_SCOPE;
    if (m->sslot == NULL)
        m->scap = m->sn = 0;
    if (2 * (m->sn + 1) > m->scap && m->sn < TG__MEMO_MAX_SCOPES)
        grow_scopes(m);
    if (m->scap == 0)
        return TG__MEMO_NO_SCOPE;
    uint32_t mask = m->scap - 1;
    uint32_t j = (uint32_t)key_hash(res, up, 0) & mask;
    while (m->sslot[j].res != NULL &&
           (m->sslot[j].res != res || m->sslot[j].up != up))
        j = (j + 1) & mask;
    if (m->sslot[j].res != NULL)
        return m->sslot[j].id;
    /* Kept at most half full (the probe above always ends). */
    if (2 * (m->sn + 1) > m->scap)
        return TG__MEMO_NO_SCOPE;
    m->sslot[j].res = res;
    m->sslot[j].up = up;
    m->sslot[j].id = ++m->sn; /* 1, 2, ...: 0 is the empty chain */
    return m->sslot[j].id;
}

void tg__memo_keep_bits(tg__memo *m, tg__memo_ent *e, const uint64_t *words,
                        uint32_t n)
{
    if (n > TG__MEMO_MAX_WORDS - m->nwords)
        return;
    if (m->nwords + n > m->capwords) {
        uint32_t cap = m->capwords ? m->capwords : 64;
        while (cap < m->nwords + n)
            cap *= 2;
        uint64_t *w = realloc(m->words, (size_t)cap * sizeof *w);
        if (w == NULL)
            return;
        m->words = w;
        m->capwords = cap;
    }
    if (n > 0) /* an empty object or array has no words (and maybe none) */
        memcpy(m->words + m->nwords, words, (size_t)n * sizeof *words);
    e->bits = m->nwords;
    m->nwords += n;
}
