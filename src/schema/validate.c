/* SPDX-License-Identifier: MIT */
/*
 * validate.c - the evaluator: a compiled node graph over an instance's token
 * tape. Nothing is allocated on the verdict-only path (report NULL) unless
 * the schema needs it: escaped strings and keys decode into stack buffers,
 * the instance path and the dynamic scope are linked frames on the C stack,
 * regex match data comes from the call's scratch arena.
 *
 * Annotations for unevaluatedProperties/unevaluatedItems are collected only
 * under a node that has one of them: such a node evaluates its in-place
 * applicators with a bit set over the instance's members (or elements), and
 * every keyword that evaluates a member marks it. Branches that may fail
 * without failing their parent (anyOf, oneOf, if, contains) mark into a
 * set of their own that is merged only when they pass.
 *
 * The dynamic scope ($dynamicRef, $recursiveRef) is the chain of schema
 * resources entered on the way to a node, kept as frames on the C stack;
 * for schemas that have such references each frame also carries the
 * chain's interned id, which memoization keys on (memo.c).
 *
 * Cost: nodes with more than one way in remember their verdict per
 * instance location (memo.c) once a validation has taken its first chunk
 * of steps, and every evaluation spends from the call's step budget,
 * checked against it in chunks (the stop flag is read at each chunk), so
 * no schema and instance can keep a thread busy for longer than the budget
 * allows. Scopes are interned from the start (a frame pushed before
 * memoization starts is still on the stack after).
 *
 * Violations go to the report when there is one; subschemas whose failure
 * is not itself an error (the branches of anyOf/oneOf, not, if, contains,
 * propertyNames) run without a report and leave a one-line summary instead.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Nested evaluations before giving up with TG_ELIMIT: deeper than any
 * instance the tape accepts (2048 levels) with room for $ref hops, and
 * shallow enough for the C stack. */
#define MAX_DEPTH 4096

/* Steps taken from the budget at a time: the stop flag is read once per
 * chunk (a few microseconds of work). */
#define CHUNK 4096

typedef struct ipath {
    const struct ipath *up;
    size_t key; /* token index of the member's key, or SIZE_MAX */
    size_t idx; /* array index when key is SIZE_MAX */
} ipath;

typedef struct scope {
    const struct scope *up;
    const tg__node *res;
    uint32_t id; /* the chain's id for memoization (0 when not needed) */
} scope;

typedef struct ann {
    uint64_t *bits;
    size_t n;
    uint64_t inl[2];
} ann;

typedef struct vctx {
    const tg__jtape *t;
    tg__schema_report *report;
    tg_error *err;
    unsigned depth;
    /* the budget: `left` in the current chunk, `rest` beyond it */
    uint64_t left, rest;
    tg__schema_budget *budget;
    int memo_on; /* verdicts are remembered (see tg__schema_budget.memo) */
    int dyn;     /* scopes are interned (the schema is `dynamic`) */
    tg__memo memo;
    tg__rx_scratch rx;
    /* Decoded escaped keys: one buffer per call rather than one per stack
     * frame, so deep recursion stays cheap; a key is decoded again after
     * any recursion that may have reused it. */
    tg__buf kb;
    char kstore[256];
} vctx;

static int eval(vctx *c, const tg__node *n, size_t i, const ipath *p,
                const scope *sc, ann *a);

/* ------------------------------------------------------------ annotations */

static int ann_init(vctx *c, ann *a, size_t n)
{
    a->n = n;
    if (n <= 128) {
        a->bits = a->inl;
        a->inl[0] = a->inl[1] = 0;
        return 0;
    }
    a->bits = calloc((n + 63) / 64, sizeof *a->bits);
    if (a->bits == NULL)
        return tg__error_set(c->err, TG_ENOMEM, "out of memory validating");
    return 0;
}

static void ann_free(ann *a)
{
    if (a->bits != a->inl)
        free(a->bits);
}

static inline void ann_set(ann *a, size_t k)
{
    if (a != NULL && k < a->n)
        a->bits[k >> 6] |= (uint64_t)1 << (k & 63);
}

static inline int ann_get(const ann *a, size_t k)
{
    return (a->bits[k >> 6] >> (k & 63)) & 1;
}

static void ann_merge(ann *dst, const ann *src)
{
    for (size_t k = 0; k < (src->n + 63) / 64; k++)
        dst->bits[k] |= src->bits[k];
}

/* ---------------------------------------------------------------- values */

static unsigned kind_of(const tg__jtape *t, size_t i)
{
    unsigned k = t->tok[i].kind;
    return k == TG_JT_KEY ? TG_JT_STRING : k;
}

/* A string's decoded bytes: the text itself when it has no escapes, else
 * decoded into a stack buffer. */
typedef struct sview {
    const char *p;
    size_t n;
    int heap;
    tg__buf b;
    char store[192];
} sview;

static int sview_get(vctx *c, size_t i, sview *v)
{
    const tg__jtok *tok = &c->t->tok[i];
    v->heap = 0;
    if (!(tok->flags & TG_JT_ESCAPED)) {
        v->p = c->t->text + tok->a;
        v->n = tok->b;
        return 0;
    }
    v->heap = 1;
    tg__buf_init_with(&v->b, v->store, sizeof v->store, 0);
    if (tg__jtape_decode(c->t, tok, &v->b) != 0) {
        tg__buf_cleanup(&v->b);
        v->heap = 0;
        return tg__error_set(c->err, TG_ENOMEM, "out of memory validating");
    }
    v->p = tg__buf_cstr(&v->b);
    v->n = v->b.len;
    return 0;
}

static void sview_done(sview *v)
{
    if (v->heap)
        tg__buf_cleanup(&v->b);
}

/* Length in code points. */
static size_t cp_len(const tg__jtape *t, size_t i)
{
    const tg__jtok *tok = &t->tok[i];
    size_t n = 0;
    if (!(tok->flags & TG_JT_ESCAPED)) {
        const unsigned char *s = (const unsigned char *)t->text + tok->a;
        for (uint32_t k = 0; k < tok->b; k++)
            n += (s[k] & 0xC0) != 0x80;
        return n;
    }
    tg__jstr_iter it;
    tg__jstr_iter_init(&it, t, tok);
    int ch;
    while ((ch = tg__jstr_iter_next(&it)) >= 0)
        n += (ch & 0xC0) != 0x80;
    return n;
}

static int is_integer(const tg__num *x)
{
    return x->is_int || (isfinite(x->d) && x->d == tg__num_trunc(x->d));
}

static int type_ok(vctx *c, unsigned types, unsigned kind, size_t i, int *err)
{
    switch (kind) {
    case TG_JT_NULL:
        return (types & TG_SCHEMA_T_NULL) != 0;
    case TG_JT_TRUE:
    case TG_JT_FALSE:
        return (types & TG_SCHEMA_T_BOOLEAN) != 0;
    case TG_JT_OBJECT:
        return (types & TG_SCHEMA_T_OBJECT) != 0;
    case TG_JT_ARRAY:
        return (types & TG_SCHEMA_T_ARRAY) != 0;
    case TG_JT_STRING:
        return (types & TG_SCHEMA_T_STRING) != 0;
    default:
        if (types & TG_SCHEMA_T_NUMBER)
            return 1;
        if (types & TG_SCHEMA_T_INTEGER) {
            tg__num x;
            if (tg__jnum(c->t, i, &x) != 0) {
                *err = tg__error_set(c->err, TG_ENOMEM, "out of memory");
                return 0;
            }
            return is_integer(&x);
        }
        return 0;
    }
}

/* ----------------------------------------------------------- violations */

/* A short rendering of the instance value at i for messages. */
static const char *describe(vctx *c, size_t i, char *buf, size_t cap)
{
    const tg__jtok *tok = &c->t->tok[i];
    switch (kind_of(c->t, i)) {
    case TG_JT_OBJECT:
        return "an object";
    case TG_JT_ARRAY:
        return "an array";
    case TG_JT_TRUE:
        return "true";
    case TG_JT_FALSE:
        return "false";
    case TG_JT_NULL:
        return "null";
    case TG_JT_NUMBER:
        snprintf(buf, cap, "%.*s", (int)(tok->b < 40 ? tok->b : 40),
                 c->t->text + tok->a);
        return buf;
    default: {
        size_t n = tok->b;
        const unsigned char *s = (const unsigned char *)c->t->text + tok->a;
        int cut = 0;
        if (n > 40) {
            n = 40;
            while (n > 0 && (s[n] & 0xC0) == 0x80)
                n--;
            cut = 1;
        }
        snprintf(buf, cap, "\"%.*s%s\"", (int)n, (const char *)s,
                 cut ? "..." : "");
        return buf;
    }
    }
}

/* The instance path as a JSON pointer; a key's U+0000 is written as
 * tg__schema_show writes it (the path is a C string). */
static int put_path(vctx *c, const ipath *p, tg__buf *b)
{
    if (p == NULL)
        return 0;
    int rc = put_path(c, p->up, b);
    if (rc == 0)
        rc = tg__buf_append(b, "/", 1);
    if (rc != 0)
        return rc;
    if (p->key == SIZE_MAX)
        return tg__buf_printf(b, "%zu", p->idx);
    tg__jstr_iter it;
    tg__jstr_iter_init(&it, c->t, &c->t->tok[p->key]);
    int ch;
    while (rc == 0 && (ch = tg__jstr_iter_next(&it)) >= 0) {
        if (ch == '~')
            rc = tg__buf_puts(b, "~0");
        else if (ch == '/')
            rc = tg__buf_puts(b, "~1");
        else {
            char x = (char)ch;
            rc = tg__schema_show(&x, 1, b);
        }
    }
    return rc;
}

#define SUBJ 1   /* "/path must ..." ("value must ..." at the root) */
#define NOSUBJ 0 /* "/path: missing ..." ("missing ..." at the root) */

static int vio(vctx *c, const ipath *p, const char *kw, int subj,
               const char *fmt, ...) TG__PRINTF(5, 6);

static int vio(vctx *c, const ipath *p, const char *kw, int subj,
               const char *fmt, ...)
{
    tg__schema_report *r = c->report;
    size_t max = r->max ? r->max : 100;
    if (r->n >= max) {
        r->truncated = 1;
        return 0;
    }
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    tg__buf path, msg;
    tg__buf_init(&path, 0);
    tg__buf_init(&msg, 0);
    char *ps = NULL, *ms = NULL, *ks = NULL;
    int rc = put_path(c, p, &path);
    if (rc == 0 && path.len > 0)
        rc = tg__buf_printf(&msg, "%s%s", tg__buf_cstr(&path),
                            subj ? " " : ": ");
    else if (rc == 0 && subj)
        rc = tg__buf_puts(&msg, "value ");
    if (rc == 0)
        rc = tg__buf_puts(&msg, text);
    if (rc == 0 && r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        tg__schema_violation *v = realloc(r->v, cap * sizeof *v);
        if (v == NULL)
            rc = TG_ENOMEM;
        else {
            r->v = v;
            r->cap = cap;
        }
    }
    /* The same violation found along another path through the schema
     * (before memoization starts, or by subschemas that differ only
     * elsewhere) is listed once. */
    for (size_t k = 0; rc == 0 && k < r->n; k++)
        if (strcmp(r->v[k].keyword, kw) == 0 &&
            strcmp(r->v[k].message, tg__buf_cstr(&msg)) == 0 &&
            strcmp(r->v[k].path, tg__buf_cstr(&path)) == 0) {
            tg__buf_cleanup(&path);
            tg__buf_cleanup(&msg);
            return 0;
        }
    if (rc == 0) {
        ps = tg__buf_take(&path);
        ms = tg__buf_take(&msg);
        ks = strdup(kw);
        if (ps == NULL || ms == NULL || ks == NULL)
            rc = TG_ENOMEM;
    }
    if (rc != 0) {
        free(ps);
        free(ms);
        free(ks);
        tg__buf_cleanup(&path);
        tg__buf_cleanup(&msg);
        return tg__error_set(c->err, TG_ENOMEM, "out of memory reporting");
    }
    r->v[r->n].path = ps;
    r->v[r->n].keyword = ks;
    r->v[r->n].message = ms;
    r->n++;
    return 0;
}

static const char *type_names(unsigned t, char *buf, size_t cap)
{
    static const struct {
        unsigned bit;
        const char *name;
    } m[] = {
        {TG_SCHEMA_T_OBJECT, "an object"}, {TG_SCHEMA_T_ARRAY, "an array"},
        {TG_SCHEMA_T_STRING, "a string"},  {TG_SCHEMA_T_INTEGER, "an integer"},
        {TG_SCHEMA_T_NUMBER, "a number"},  {TG_SCHEMA_T_BOOLEAN, "a boolean"},
        {TG_SCHEMA_T_NULL, "null"}};
    size_t n = 0, total = 0, seen = 0;
    for (size_t k = 0; k < 7; k++)
        total += (t & m[k].bit) != 0;
    buf[0] = '\0';
    for (size_t k = 0; k < 7; k++) {
        if (!(t & m[k].bit))
            continue;
        const char *sep = seen == 0 ? "" : seen + 1 == total ? " or " : ", ";
        n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%s", sep,
                              m[k].name);
        if (n >= cap)
            break;
        seen++;
    }
    return buf;
}

/* ----------------------------------------------------------- helpers */

/* The enum/const value list for messages, cut to a readable length. */
static const char *value_text(const tg__jtape *v, char *buf, size_t cap)
{
    size_t n = v->len;
    if (n + 1 <= cap) {
        memcpy(buf, v->text, n);
        buf[n] = '\0';
    } else {
        size_t k = cap - 4;
        while (k > 0 && ((unsigned char)v->text[k] & 0xC0) == 0x80)
            k--;
        memcpy(buf, v->text, k);
        memcpy(buf + k, "...", 4);
    }
    return buf;
}

static int unique_items(vctx *c, size_t i, size_t *dup_a, size_t *dup_b)
{
    const tg__jtok *tok = &c->t->tok[i];
    size_t n = tok->b;
    if (n < 2)
        return 1;
    /* Hash every item, sort the hashes, compare only colliding items. */
    struct hi {
        uint64_t h;
        size_t idx, tok;
    } small[16], *v = small;
    if (n > 16) {
        v = malloc(n * sizeof *v);
        if (v == NULL)
            return tg__error_set(c->err, TG_ENOMEM, "out of memory");
    }
    size_t k = 0;
    for (size_t j = i + 1; j < tok->a; j = tg__jskip(c->t, j), k++) {
        v[k].h = tg__jhash(c->t, j);
        v[k].idx = k;
        v[k].tok = j;
    }
    /* Insertion sort for short arrays, qsort-free shell sort otherwise:
     * no comparator context needed. */
    for (size_t gap = n / 2; gap > 0; gap /= 2)
        for (size_t x = gap; x < n; x++) {
            struct hi t = v[x];
            size_t y = x;
            while (y >= gap &&
                   (v[y - gap].h > t.h ||
                    (v[y - gap].h == t.h && v[y - gap].idx > t.idx))) {
                v[y] = v[y - gap];
                y -= gap;
            }
            v[y] = t;
        }
    int rc = 1;
    for (size_t x = 0; x < n && rc == 1; x++)
        for (size_t y = x + 1; y < n && v[y].h == v[x].h; y++) {
            int e = tg__jequal(c->t, v[x].tok, c->t, v[y].tok);
            if (e < 0) {
                rc = tg__error_set(c->err, TG_ENOMEM, "out of memory");
                break;
            }
            if (e) {
                *dup_a = v[x].idx < v[y].idx ? v[x].idx : v[y].idx;
                *dup_b = v[x].idx < v[y].idx ? v[y].idx : v[x].idx;
                rc = 0;
                break;
            }
        }
    if (v != small)
        free(v);
    return rc;
}

static int cmp_key(const tg__name *nm, const char *s, size_t n)
{
    if (nm->len != n)
        return nm->len < n ? -1 : 1;
    return memcmp(nm->s, s, n);
}

static int name_lookup(const tg__objcheck *o, const char *s, size_t n)
{
    size_t lo = 0, hi = o->nnames;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int r = cmp_key(&o->names[mid], s, n);
        if (r == 0)
            return (int)mid;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* The target of $dynamicRef / $recursiveRef in the current dynamic scope. */
static const tg__node *dyn_target(const tg__check *ck, const scope *sc)
{
    const tg__node *t = ck->u.dref.target;
    if (ck->kind == TG__CK_DYNREF) {
        if (ck->u.dref.anchor == NULL)
            return t;
        /* The outermost resource in scope with that dynamic anchor. */
        const tg__node *found = NULL;
        for (const scope *s = sc; s != NULL; s = s->up)
            for (uint32_t k = 0; k < s->res->ndyn; k++)
                if (strcmp(s->res->dyn[k].name, ck->u.dref.anchor) == 0) {
                    found = s->res->dyn[k].node;
                    break;
                }
        return found ? found : t;
    }
    /* $recursiveRef: from the innermost scope outwards while resources
     * carry "$recursiveAnchor": true, the last of them. */
    if (!t->recursive_anchor)
        return t;
    const tg__node *found = t;
    for (const scope *s = sc; s != NULL; s = s->up) {
        if (!s->res->recursive_anchor)
            break;
        found = s->res;
    }
    return found;
}

/* ------------------------------------------------------------- evaluator */

/* The frames on the recursion path (eval, eval_checks and the applicator
 * helpers) keep few locals: anything with a buffer (messages, decoded
 * strings) lives in a leaf function that returns before recursing, so a
 * deep instance or a long $ref chain costs little stack per level. The
 * applicator helpers are not inlined into eval_checks, so a level holds
 * the frame of the one helper on its path, not of all of them (MAX_DEPTH
 * levels of the worst path fit in 3 MiB of stack in a release build). */

#define NOINLINE __attribute__((noinline))

static int oom_err(vctx *c)
{
    return tg__error_set(c->err, TG_ENOMEM, "out of memory validating");
}

/* The budget past the current chunk: the stop flag, then the next chunk,
 * or the end of the budget. */
static NOINLINE int refill(vctx *c, uint64_t k)
{
    tg__schema_budget *b = c->budget;
    if (b->stop != NULL &&
        atomic_load_explicit(b->stop, memory_order_relaxed) != 0)
        return tg__error_set(c->err, TG_ECANCELED, "validation was canceled");
    /* Past the first chunk the validation is not a cheap one: from here
     * on verdicts are remembered. */
    c->memo_on = b->memo != TG_SCHEMA_MEMO_OFF;
    uint64_t have = c->left + c->rest;
    if (have < k) {
        c->left = c->rest = 0;
        b->exhausted = 1;
        return tg__error_set(c->err, TG_ELIMIT,
                             "validation needs more than %llu steps "
                             "(keyword evaluations)",
                             (unsigned long long)b->limit);
    }
    have -= k;
    c->left = have < CHUNK ? have : CHUNK;
    c->rest = have - c->left;
    return 0;
}

/* Spends k steps: 0, or TG_ELIMIT / TG_ECANCELED with c->err filled. */
static inline int spend(vctx *c, uint64_t k)
{
    if (c->left >= k) {
        c->left -= k;
        return 0;
    }
    return refill(c, k);
}

/* The decoded bytes of key token k (valid until the next call). */
static int key_view(vctx *c, size_t k, const char **s, size_t *n)
{
    const tg__jtok *tok = &c->t->tok[k];
    if (!(tok->flags & TG_JT_ESCAPED)) {
        *s = c->t->text + tok->a;
        *n = tok->b;
        return 0;
    }
    c->kb.len = 0;
    if (tg__jtape_decode(c->t, tok, &c->kb) != 0)
        return oom_err(c);
    *s = tg__buf_cstr(&c->kb);
    *n = c->kb.len;
    return 0;
}

static int put_path(vctx *c, const ipath *p, tg__buf *b);

/* A regex that failed to give a verdict: its match limits (TG_ELIMIT, with
 * the pattern and where in the instance) or memory. */
static NOINLINE int regex_limit(vctx *c, int r, const char *src, const ipath *p)
{
    if (r != TG_ELIMIT)
        return oom_err(c);
    char store[128];
    tg__buf path;
    tg__buf_init_with(&path, store, sizeof store, 256);
    (void)put_path(c, p, &path);
    tg__error_set(c->err, TG_ELIMIT,
                  "the pattern '%s' hit the regex match limit on %s%s%s "
                  "(it backtracks without end on that text)",
                  src, path.len ? "the value at '" : "the whole value",
                  tg__buf_cstr(&path), path.len ? "'" : "");
    tg__buf_cleanup(&path);
    return TG_ELIMIT;
}

/* The checks that do not recurse; 1 pass, 0 fail (reported), <0 error. */
static NOINLINE int leaf_check(vctx *c, const tg__check *ck, size_t i,
                               const ipath *p, unsigned kind)
{
    const tg__jtape *t = c->t;
    const tg__jtok *tok = &t->tok[i];
    char b1[64], b2[160];
    int rc;
#define LEAF_FAIL(kw, subj, ...)                                               \
    do {                                                                       \
        if (c->report == NULL)                                                 \
            return 0;                                                          \
        rc = vio(c, p, kw, subj, __VA_ARGS__);                                 \
        return rc < 0 ? rc : 0;                                                \
    } while (0)
    switch (ck->kind) {
    case TG__CK_TYPE: {
        int err = 0;
        if (type_ok(c, ck->u.types, kind, i, &err))
            return 1;
        if (err < 0)
            return err;
        LEAF_FAIL("type", SUBJ, "must be %s, got %s",
                  type_names(ck->u.types, b2, sizeof b2),
                  describe(c, i, b1, sizeof b1));
    }
    case TG__CK_ENUM: {
        const tg__jtape *v = ck->u.val;
        for (size_t j = 1; j < v->tok[0].a; j = tg__jskip(v, j)) {
            int e = tg__jequal(t, i, v, j);
            if (e < 0)
                return oom_err(c);
            if (e)
                return 1;
        }
        LEAF_FAIL("enum", SUBJ, "must be one of %s, got %s",
                  value_text(v, b2, sizeof b2), describe(c, i, b1, sizeof b1));
    }
    case TG__CK_CONST: {
        int e = tg__jequal(t, i, ck->u.val, 0);
        if (e < 0)
            return oom_err(c);
        if (e)
            return 1;
        LEAF_FAIL("const", SUBJ, "must be %s, got %s",
                  value_text(ck->u.val, b2, sizeof b2),
                  describe(c, i, b1, sizeof b1));
    }
    case TG__CK_MINIMUM:
    case TG__CK_MAXIMUM:
    case TG__CK_XMINIMUM:
    case TG__CK_XMAXIMUM: {
        if (kind != TG_JT_NUMBER)
            return 1;
        tg__num x;
        if (tg__jnum(t, i, &x) != 0)
            return oom_err(c);
        int r = tg__num_cmp(&x, &ck->u.num);
        static const char *const ops[] = {">=", "<=", ">", "<"};
        static const char *const kws[] = {
            "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
        int w = ck->kind - TG__CK_MINIMUM;
        int bad = w == 0 ? r < 0 : w == 1 ? r > 0 : w == 2 ? r <= 0 : r >= 0;
        if (!bad)
            return 1;
        char lim[40];
        if (ck->u.num.is_int)
            snprintf(lim, sizeof lim, "%lld", (long long)ck->u.num.i);
        else
            tg__num_format(ck->u.num.d, lim, sizeof lim);
        LEAF_FAIL(kws[w], SUBJ, "must be %s %s, got %s", ops[w], lim,
                  describe(c, i, b1, sizeof b1));
    }
    case TG__CK_MULTIPLE:
        if (kind != TG_JT_NUMBER ||
            tg__num_multiple(t->text + tok->a, tok->b, ck->u.mult.text,
                             strlen(ck->u.mult.text)))
            return 1;
        LEAF_FAIL("multipleOf", SUBJ, "must be a multiple of %s, got %s",
                  ck->u.mult.text, describe(c, i, b1, sizeof b1));
    case TG__CK_MINLENGTH:
    case TG__CK_MAXLENGTH: {
        if (kind != TG_JT_STRING)
            return 1;
        /* Bytes bound code points from above: no counting when the byte
         * length already decides. */
        if (ck->kind == TG__CK_MAXLENGTH && tok->b <= ck->u.count)
            return 1;
        if ((rc = spend(c, tok->b >> 6)) != 0)
            return rc;
        size_t len = cp_len(t, i);
        if (ck->kind == TG__CK_MINLENGTH && len < ck->u.count)
            LEAF_FAIL("minLength", SUBJ,
                      "must be at least %llu characters long, got %zu",
                      (unsigned long long)ck->u.count, len);
        if (ck->kind == TG__CK_MAXLENGTH && len > ck->u.count)
            LEAF_FAIL("maxLength", SUBJ,
                      "must be at most %llu characters long, got %zu",
                      (unsigned long long)ck->u.count, len);
        return 1;
    }
    case TG__CK_PATTERN:
    case TG__CK_FORMAT: {
        if (kind != TG_JT_STRING)
            return 1;
        if ((rc = spend(c, tok->b >> 6)) != 0)
            return rc;
        sview s;
        if ((rc = sview_get(c, i, &s)) != 0)
            return rc;
        int r = ck->kind == TG__CK_FORMAT
                    ? tg__format_check(ck->u.fmt, s.p, s.n)
                    : tg__regex_match(ck->u.pat.re, s.p, s.n, &c->rx);
        sview_done(&s);
        if (r < 0)
            return regex_limit(c, r, ck->u.pat.src, p);
        if (r == 1)
            return 1;
        if (ck->kind == TG__CK_FORMAT)
            LEAF_FAIL("format", SUBJ, "must be a valid %s, got %s",
                      tg__format_name(ck->u.fmt),
                      describe(c, i, b1, sizeof b1));
        LEAF_FAIL("pattern", SUBJ, "must match the pattern %s, got %s",
                  ck->u.pat.src, describe(c, i, b1, sizeof b1));
    }
    case TG__CK_MINITEMS:
        if (kind != TG_JT_ARRAY || tok->b >= ck->u.count)
            return 1;
        LEAF_FAIL("minItems", SUBJ, "must have at least %llu items, got %u",
                  (unsigned long long)ck->u.count, tok->b);
    case TG__CK_MAXITEMS:
        if (kind != TG_JT_ARRAY || tok->b <= ck->u.count)
            return 1;
        LEAF_FAIL("maxItems", SUBJ, "must have at most %llu items, got %u",
                  (unsigned long long)ck->u.count, tok->b);
    case TG__CK_MINPROPS:
        if (kind != TG_JT_OBJECT || tok->b >= ck->u.count)
            return 1;
        LEAF_FAIL("minProperties", SUBJ,
                  "must have at least %llu properties, got %u",
                  (unsigned long long)ck->u.count, tok->b);
    case TG__CK_MAXPROPS:
        if (kind != TG_JT_OBJECT || tok->b <= ck->u.count)
            return 1;
        LEAF_FAIL("maxProperties", SUBJ,
                  "must have at most %llu properties, got %u",
                  (unsigned long long)ck->u.count, tok->b);
    case TG__CK_UNIQUE: {
        if (kind != TG_JT_ARRAY)
            return 1;
        if ((rc = spend(c, tok->b >> 4)) != 0)
            return rc;
        size_t x = 0, y = 0;
        int r = unique_items(c, i, &x, &y);
        if (r != 0)
            return r;
        LEAF_FAIL("uniqueItems", SUBJ,
                  "must not contain duplicate items (items %zu and %zu are "
                  "equal)",
                  x, y);
    }
    default:
        return 1;
    }
#undef LEAF_FAIL
}

/* A summary violation for a subschema that ran without a report. */
static NOINLINE int summary(vctx *c, const ipath *p, const tg__check *ck,
                            size_t i, uint64_t a, uint64_t b)
{
    if (c->report == NULL)
        return 0;
    char b1[64];
    int rc;
    switch (ck->kind) {
    case TG__CK_ANYOF:
        rc = vio(c, p, "anyOf", SUBJ,
                 "must match at least one of the %u schemas in anyOf, "
                 "matched none",
                 ck->u.nodes.n);
        break;
    case TG__CK_ONEOF:
        rc = vio(c, p, "oneOf", SUBJ,
                 "must match exactly one of the %u schemas in oneOf, "
                 "matched %s%llu",
                 ck->u.nodes.n, b ? "at least " : "", (unsigned long long)a);
        break;
    case TG__CK_NOT:
        rc = vio(c, p, "not", SUBJ, "must not match the schema in 'not'");
        break;
    case TG__CK_PROPNAMES:
        rc = vio(c, p, "propertyNames", NOSUBJ,
                 "property name %s does not match the propertyNames schema",
                 describe(c, i, b1, sizeof b1));
        break;
    case TG__CK_CONTAINS:
        if (a < ck->u.contains.min)
            rc = vio(c, p, ck->u.contains.min == 1 ? "contains" : "minContains",
                     SUBJ,
                     "must contain at least %llu item%s matching the contains "
                     "schema, got %llu",
                     (unsigned long long)ck->u.contains.min,
                     ck->u.contains.min == 1 ? "" : "s", (unsigned long long)a);
        else
            rc = vio(c, p, "maxContains", SUBJ,
                     "must contain at most %llu item%s matching the contains "
                     "schema, got %s%llu",
                     (unsigned long long)ck->u.contains.max,
                     ck->u.contains.max == 1 ? "" : "s", b ? "at least " : "",
                     (unsigned long long)a);
        break;
    default: {
        /* A property refused by additionalProperties or
         * unevaluatedProperties: false (i is its key). */
        const char *s = NULL;
        size_t n = 0;
        if ((rc = key_view(c, i, &s, &n)) != 0)
            return rc;
        char store[96];
        tg__buf name;
        tg__buf_init_with(&name, store, sizeof store, 0);
        if (tg__schema_show(s, n, &name) != 0) {
            tg__buf_cleanup(&name);
            return oom_err(c);
        }
        rc = vio(c, p,
                 ck->kind == TG__CK_UNEVAL_PROPS ? "unevaluatedProperties"
                                                 : "additionalProperties",
                 NOSUBJ, "property '%s' is not allowed", tg__buf_cstr(&name));
        tg__buf_cleanup(&name);
        break;
    }
    }
    return rc < 0 ? rc : 0;
}

/* Folds a subschema's result into *valid; returns <0 to stop with an
 * error, 1 to stop (invalid, no report), 0 to go on. */
static inline int fold(vctx *c, int r, int *valid, int *rc)
{
    if (r < 0) {
        *rc = r;
        return 1;
    }
    if (r == 0) {
        *valid = 0;
        if (c->report == NULL)
            return 1;
    }
    return 0;
}

/* Runs n without a report (its failure is summarised by the caller). */
static inline int quiet(vctx *c, const tg__node *n, size_t i, const ipath *p,
                        const scope *sc, ann *a)
{
    tg__schema_report *saved = c->report;
    c->report = NULL;
    int r = eval(c, n, i, p, sc, a);
    c->report = saved;
    return r;
}

#define FOUND(x) ((found[(x) >> 6] >> ((x)&63)) & 1)

/* A name for a message (U+0000 shown); NULL on out of memory. */
static const char *shown(const tg__name *nm, tg__buf *b)
{
    b->len = 0;
    if (tg__schema_show(nm->s, nm->len, b) != 0)
        return NULL;
    return tg__buf_cstr(b);
}

/* required and dependentRequired, once the members were seen. */
static NOINLINE int object_required(vctx *c, const tg__objcheck *o,
                                    const uint64_t *found, const ipath *p)
{
    int valid = 1, rc = 0;
    char s1[96], s2[96];
    tg__buf b1, b2;
    tg__buf_init_with(&b1, s1, sizeof s1, 0);
    tg__buf_init_with(&b2, s2, sizeof s2, 0);
    for (uint32_t r = 0; r < o->nrequired; r++) {
        uint32_t x = o->required[r];
        if (FOUND(x))
            continue;
        valid = 0;
        if (c->report == NULL)
            goto done;
        const char *name = shown(&o->names[x], &b1);
        rc = name == NULL ? oom_err(c)
                          : vio(c, p, "required", NOSUBJ,
                                "missing required property '%s'", name);
        if (rc < 0)
            goto done;
    }
    for (uint32_t d = 0; d < o->ndeps; d++) {
        const tg__name *nm = &o->names[o->deps[d]];
        if (!FOUND(o->deps[d]))
            continue;
        for (uint32_t q = 0; q < nm->ndep_req; q++) {
            uint32_t y = nm->dep_req[q];
            if (FOUND(y))
                continue;
            valid = 0;
            if (c->report == NULL)
                goto done;
            const char *need = shown(&o->names[y], &b1);
            const char *have = shown(nm, &b2);
            rc = need == NULL || have == NULL
                     ? oom_err(c)
                     : vio(c, p, "dependentRequired", NOSUBJ,
                           "property '%s' is required when '%s' is present",
                           need, have);
            if (rc < 0)
                goto done;
        }
    }
done:
    tg__buf_cleanup(&b1);
    tg__buf_cleanup(&b2);
    return rc < 0 ? rc : valid;
}

/* Which names and patterns member key k matches: the name index (or -1)
 * and, in *pat_bits, the first 64 patterns that match. */
static int member_match(vctx *c, const tg__objcheck *o, size_t k,
                        const ipath *kp, int *idx, uint64_t *pat_bits)
{
    const char *s = NULL;
    size_t n = 0;
    /* each pattern over a long key: by its length (eval_object paid for
     * the member and one step per pattern) */
    int rc =
        o->npats > 0 ? spend(c, (uint64_t)o->npats * (c->t->tok[k].b >> 6)) : 0;
    if (rc != 0 || (rc = key_view(c, k, &s, &n)) != 0)
        return rc;
    *idx = o->nnames > 0 ? name_lookup(o, s, n) : -1;
    *pat_bits = 0;
    for (uint32_t q = 0; q < o->npats && q < 64; q++) {
        int r = tg__regex_match(o->pats[q].re, s, n, &c->rx);
        if (r < 0)
            return regex_limit(c, r, o->pats[q].src, kp);
        if (r)
            *pat_bits |= (uint64_t)1 << q;
    }
    return 0;
}

/* Patterns past the 64th: matched one by one (rare). */
static int pattern_match(vctx *c, const tg__objcheck *o, size_t k,
                         const ipath *kp, uint32_t q)
{
    const char *s = NULL;
    size_t n = 0;
    int rc = key_view(c, k, &s, &n);
    if (rc != 0)
        return rc;
    int r = tg__regex_match(o->pats[q].re, s, n, &c->rx);
    return r < 0 ? regex_limit(c, r, o->pats[q].src, kp) : r;
}

/* The member checks of an object: one pass over its members. */
static NOINLINE int eval_object(vctx *c, const tg__objcheck *o, size_t i,
                                const ipath *p, const scope *sc, ann *la)
{
    const tg__jtape *t = c->t;
    /* a step per member (a name lookup) and per pattern matched on it */
    int valid = 1, rc = spend(c, (uint64_t)t->tok[i].b * (1 + o->npats));
    if (rc != 0)
        return rc;
    uint64_t small[4] = {0, 0, 0, 0}, *found = small;
    if (o->nnames > 256) {
        found = calloc((o->nnames + 63) / 64, sizeof *found);
        if (found == NULL)
            return oom_err(c);
    }
    size_t m = 0;
    for (size_t k = i + 1; k < t->tok[i].a; k = tg__jskip(t, k + 1), m++) {
        ipath kp = {p, k, 0};
        int idx;
        uint64_t pats;
        if ((rc = member_match(c, o, k, &kp, &idx, &pats)) != 0)
            goto done;
        int matched = 0;
        if (idx >= 0) {
            found[idx >> 6] |= (uint64_t)1 << (idx & 63);
            if (o->names[idx].prop != NULL) {
                matched = 1;
                ann_set(la, m);
                if (fold(c, eval(c, o->names[idx].prop, k + 1, &kp, sc, NULL),
                         &valid, &rc))
                    goto done;
            }
        }
        for (uint32_t q = 0; q < o->npats; q++) {
            int r = q < 64 ? (int)((pats >> q) & 1)
                           : pattern_match(c, o, k, &kp, q);
            if (r < 0) {
                rc = r;
                goto done;
            }
            if (r == 0)
                continue;
            matched = 1;
            ann_set(la, m);
            if (fold(c, eval(c, o->pats[q].node, k + 1, &kp, sc, NULL), &valid,
                     &rc))
                goto done;
        }
        if (!matched && o->additional != NULL) {
            ann_set(la, m);
            int r = o->additional->kind == TG__NODE_FALSE
                        ? summary(c, p, &(tg__check){.kind = TG__CK_OBJECT}, k,
                                  0, 0)
                        : eval(c, o->additional, k + 1, &kp, sc, NULL);
            if (fold(c, r, &valid, &rc))
                goto done;
        }
    }
    if (o->nrequired > 0 || o->ndeps > 0) {
        if (fold(c, object_required(c, o, found, p), &valid, &rc))
            goto done;
        for (uint32_t d = 0; d < o->ndeps; d++) {
            const tg__name *nm = &o->names[o->deps[d]];
            if (nm->dep_schema != NULL && FOUND(o->deps[d]) &&
                fold(c, eval(c, nm->dep_schema, i, p, sc, la), &valid, &rc))
                goto done;
        }
    }
done:
    if (found != small)
        free(found);
    return rc < 0 ? rc : valid;
}

#undef FOUND

static NOINLINE int eval_items(vctx *c, const tg__check *ck, size_t i,
                               const ipath *p, const scope *sc, ann *la)
{
    const tg__jtape *t = c->t;
    int valid = 1, rc = 0;
    size_t idx = 0;
    for (size_t j = i + 1; j < t->tok[i].a; j = tg__jskip(t, j), idx++) {
        const tg__node *en = idx < ck->u.items.nprefix ? ck->u.items.prefix[idx]
                                                       : ck->u.items.rest;
        if (en == NULL)
            break;
        ann_set(la, idx);
        ipath ip = {p, SIZE_MAX, idx};
        if (fold(c, eval(c, en, j, &ip, sc, NULL), &valid, &rc))
            break;
    }
    return rc < 0 ? rc : valid;
}

static NOINLINE int eval_contains(vctx *c, const tg__check *ck, size_t i,
                                  const ipath *p, const scope *sc, ann *la)
{
    const tg__jtape *t = c->t;
    uint64_t cnt = 0;
    size_t idx = 0;
    int need_all = la != NULL && ck->u.contains.mark;
    for (size_t j = i + 1; j < t->tok[i].a; j = tg__jskip(t, j), idx++) {
        ipath ip = {p, SIZE_MAX, idx};
        int r = quiet(c, ck->u.contains.node, j, &ip, sc, NULL);
        if (r < 0)
            return r;
        if (r == 1) {
            cnt++;
            if (need_all)
                ann_set(la, idx);
            else if (cnt > ck->u.contains.max ||
                     (ck->u.contains.max == UINT64_MAX &&
                      cnt >= ck->u.contains.min))
                break;
        }
    }
    if (cnt >= ck->u.contains.min && cnt <= ck->u.contains.max)
        return 1;
    return summary(c, p, ck, i, cnt, !need_all);
}

static NOINLINE int eval_xof(vctx *c, const tg__check *ck, size_t i,
                             const ipath *p, const scope *sc, ann *la)
{
    uint32_t hits = 0;
    int one = ck->kind == TG__CK_ONEOF;
    for (uint32_t k = 0; k < ck->u.nodes.n; k++) {
        int r;
        if (la != NULL) {
            ann sub;
            if ((r = ann_init(c, &sub, la->n)) != 0)
                return r;
            r = quiet(c, ck->u.nodes.v[k], i, p, sc, &sub);
            if (r == 1 && (!one || hits == 0))
                ann_merge(la, &sub);
            ann_free(&sub);
        } else {
            r = quiet(c, ck->u.nodes.v[k], i, p, sc, NULL);
        }
        if (r < 0)
            return r;
        hits += r == 1;
        /* Without annotations to collect the verdict is known. */
        if (la == NULL && ((!one && hits == 1) || (one && hits == 2)))
            break;
    }
    if (one ? hits == 1 : hits > 0)
        return 1;
    return summary(c, p, ck, i, hits, hits > 1 && la == NULL);
}

static NOINLINE int eval_if(vctx *c, const tg__check *ck, size_t i,
                            const ipath *p, const scope *sc, ann *la)
{
    int r;
    if (la != NULL) {
        ann sub;
        if ((r = ann_init(c, &sub, la->n)) != 0)
            return r;
        r = quiet(c, ck->u.cond.if_, i, p, sc, &sub);
        if (r == 1)
            ann_merge(la, &sub);
        ann_free(&sub);
    } else {
        r = quiet(c, ck->u.cond.if_, i, p, sc, NULL);
    }
    if (r < 0)
        return r;
    const tg__node *next = r == 1 ? ck->u.cond.then_ : ck->u.cond.else_;
    return next != NULL ? eval(c, next, i, p, sc, la) : 1;
}

static NOINLINE int eval_uneval(vctx *c, const tg__check *ck, size_t i,
                                const ipath *p, const scope *sc, ann *la)
{
    const tg__jtape *t = c->t;
    int props = ck->kind == TG__CK_UNEVAL_PROPS;
    int valid = 1, rc = 0;
    size_t m = 0;
    for (size_t k = i + 1; k < t->tok[i].a; m++) {
        size_t v = props ? k + 1 : k;
        size_t next = tg__jskip(t, v);
        if (!ann_get(la, m)) {
            int r;
            if (props && ck->u.node->kind == TG__NODE_FALSE) {
                r = summary(c, p, ck, k, 0, 0);
            } else {
                ipath ip = {p, props ? k : SIZE_MAX, m};
                r = eval(c, ck->u.node, v, &ip, sc, NULL);
            }
            if (r == 1)
                ann_set(la, m);
            if (fold(c, r, &valid, &rc))
                break;
        }
        k = next;
    }
    return rc < 0 ? rc : valid;
}

static NOINLINE int eval_propnames(vctx *c, const tg__check *ck, size_t i,
                                   const ipath *p, const scope *sc)
{
    const tg__jtape *t = c->t;
    int valid = 1, rc = 0;
    for (size_t k = i + 1; k < t->tok[i].a; k = tg__jskip(t, k + 1)) {
        int r = quiet(c, ck->u.node, k, p, sc, NULL);
        if (r == 0)
            r = summary(c, p, ck, k, 0, 0);
        if (fold(c, r, &valid, &rc))
            break;
    }
    return rc < 0 ? rc : valid;
}

static inline unsigned type_bit_of(unsigned kind)
{
    switch (kind) {
    case TG_JT_NULL:
        return TG_SCHEMA_T_NULL;
    case TG_JT_TRUE:
    case TG_JT_FALSE:
        return TG_SCHEMA_T_BOOLEAN;
    case TG_JT_OBJECT:
        return TG_SCHEMA_T_OBJECT;
    case TG_JT_ARRAY:
        return TG_SCHEMA_T_ARRAY;
    case TG_JT_STRING:
        return TG_SCHEMA_T_STRING;
    default:
        return TG_SCHEMA_T_NUMBER;
    }
}

static int eval_checks(vctx *c, const tg__node *n, size_t i, const ipath *p,
                       const scope *sc, ann *la)
{
    unsigned kind = kind_of(c->t, i);
    int valid = 1;
    /* the node entered and each of its keywords */
    int rc = spend(c, 1 + (uint64_t)n->nchecks);
    if (rc != 0)
        return rc;
    for (uint32_t q = 0; q < n->nchecks; q++) {
        const tg__check *ck = &n->checks[q];
        int r;
        switch (ck->kind) {
        case TG__CK_OBJECT:
            r = kind == TG_JT_OBJECT ? eval_object(c, ck->u.obj, i, p, sc, la)
                                     : 1;
            break;
        case TG__CK_PROPNAMES:
            r = kind == TG_JT_OBJECT ? eval_propnames(c, ck, i, p, sc) : 1;
            break;
        case TG__CK_ITEMS:
            r = kind == TG_JT_ARRAY ? eval_items(c, ck, i, p, sc, la) : 1;
            break;
        case TG__CK_CONTAINS:
            r = kind == TG_JT_ARRAY ? eval_contains(c, ck, i, p, sc, la) : 1;
            break;
        case TG__CK_ALLOF:
            r = 1;
            for (uint32_t k = 0; k < ck->u.nodes.n; k++)
                if (fold(c, eval(c, ck->u.nodes.v[k], i, p, sc, la), &valid,
                         &rc))
                    goto done;
            break;
        case TG__CK_ANYOF:
        case TG__CK_ONEOF:
            r = eval_xof(c, ck, i, p, sc, la);
            break;
        case TG__CK_NOT:
            r = quiet(c, ck->u.node, i, p, sc, NULL);
            if (r >= 0)
                r = r == 1 ? summary(c, p, ck, i, 0, 0) : 1;
            break;
        case TG__CK_IF:
            r = eval_if(c, ck, i, p, sc, la);
            break;
        case TG__CK_REF:
            r = eval(c, ck->u.node, i, p, sc, la);
            break;
        case TG__CK_DYNREF:
        case TG__CK_RECREF:
            r = eval(c, dyn_target(ck, sc), i, p, sc, la);
            break;
        case TG__CK_UNEVAL_ITEMS:
            r = kind == TG_JT_ARRAY && la != NULL
                    ? eval_uneval(c, ck, i, p, sc, la)
                    : 1;
            break;
        case TG__CK_UNEVAL_PROPS:
            r = kind == TG_JT_OBJECT && la != NULL
                    ? eval_uneval(c, ck, i, p, sc, la)
                    : 1;
            break;
        case TG__CK_TYPE:
            /* The common case inline: the type matches and is not
             * "integer" alone (which needs the number read). */
            if (kind != TG_JT_NUMBER && type_bit_of(kind) & ck->u.types) {
                r = 1;
                break;
            }
            r = leaf_check(c, ck, i, p, kind);
            break;
        default:
            r = leaf_check(c, ck, i, p, kind);
            break;
        }
        if (fold(c, r, &valid, &rc))
            break;
    }
done:
    return rc < 0 ? rc : valid;
}

/* A node with unevaluated* over an instance of the kind it applies to:
 * its checks see only its own annotations (a fresh set), merged into the
 * caller's when it passes. */
static NOINLINE int eval_annotated(vctx *c, const tg__node *n, size_t i,
                                   const ipath *p, const scope *sc, ann *a)
{
    ann local;
    int rc = ann_init(c, &local, c->t->tok[i].b);
    if (rc != 0)
        return rc;
    rc = eval_checks(c, n, i, p, sc, &local);
    if (rc == 1 && a != NULL)
        ann_merge(a, &local);
    ann_free(&local);
    return rc;
}

static NOINLINE int deny(vctx *c, const ipath *p)
{
    if (c->report == NULL)
        return 0;
    int rc = vio(c, p, "false", SUBJ, "is not allowed here");
    return rc < 0 ? rc : 0;
}

static NOINLINE int too_deep(vctx *c)
{
    return tg__error_set(c->err, TG_ELIMIT,
                         "validation nested more than %d schemas deep (a $ref "
                         "cycle that never reaches the instance?)",
                         MAX_DEPTH);
}

/* A node's own evaluation (memoized or not). */
static inline int eval_node(vctx *c, const tg__node *n, size_t i,
                            const ipath *p, const scope *sc, ann *a)
{
    unsigned kind = c->t->tok[i].kind;
    if (n->uneval && (((n->uneval & 1) && kind == TG_JT_OBJECT) ||
                      ((n->uneval & 2) && kind == TG_JT_ARRAY)))
        return eval_annotated(c, n, i, p, sc, a);
    return eval_checks(c, n, i, p, sc, a);
}

/* A `memo` node: its verdict at i (under the scope when it is `dynamic`)
 * is computed once and then reused, with the annotations it produced when
 * the caller collects them (see memo.c for when an entry may stand in). */
static NOINLINE int eval_memo(vctx *c, const tg__node *n, size_t i,
                              const ipath *p, const scope *sc, ann *a)
{
    uint32_t sid = n->dynamic ? sc->id : 0;
    int fresh = 0;
    tg__memo_ent *e = sid == TG__MEMO_NO_SCOPE || i >= UINT32_MAX
                          ? NULL
                          : tg__memo_get(&c->memo, n, (uint32_t)i, sid, &fresh);
    if (e == NULL || (!fresh && e->state == TG__MEMO_BUSY))
        return eval_node(c, n, i, p, sc, a);
    if (!fresh && (c->report == NULL || e->state != TG__MEMO_INVALID) &&
        (a == NULL || e->bits != TG__MEMO_NO_BITS)) {
        int rc = spend(c, 1);
        if (rc != 0)
            return rc;
        if (a != NULL)
            for (size_t k = 0; k < (a->n + 63) / 64; k++)
                a->bits[k] |= c->memo.words[e->bits + k];
        return e->state == TG__MEMO_VALID;
    }
    e->state = TG__MEMO_BUSY;
    ann local;
    int rc = a == NULL ? 0 : ann_init(c, &local, a->n);
    if (rc != 0)
        return rc;
    rc = eval_node(c, n, i, p, sc, a == NULL ? NULL : &local);
    if (rc >= 0) {
        /* the table may have grown meanwhile: the entry is found again */
        e = tg__memo_get(&c->memo, n, (uint32_t)i, sid, &fresh);
        e->state = rc == 1             ? TG__MEMO_VALID
                   : c->report != NULL ? TG__MEMO_REPORTED
                                       : TG__MEMO_INVALID;
        if (a != NULL) {
            tg__memo_keep_bits(&c->memo, e, local.bits,
                               (uint32_t)((a->n + 63) / 64));
            ann_merge(a, &local);
        }
    }
    if (a != NULL)
        ann_free(&local);
    return rc;
}

static int eval(vctx *c, const tg__node *n, size_t i, const ipath *p,
                const scope *sc, ann *a)
{
    int rc;
    if (n->kind != TG__NODE_OBJECT) {
        if ((rc = spend(c, 1)) != 0)
            return rc;
        return n->kind == TG__NODE_TRUE ? 1 : deny(c, p);
    }
    if (c->depth >= MAX_DEPTH)
        return too_deep(c);
    c->depth++;
    scope fr;
    if (sc == NULL || sc->res != n->resource) {
        fr.up = sc;
        fr.res = n->resource;
        /* read only for `dynamic` nodes, which make c->dyn set */
        if (c->dyn)
            fr.id = tg__memo_scope_id(&c->memo, sc ? sc->id : 0, n->resource);
        sc = &fr;
    }
    if (c->memo_on && n->memo)
        rc = eval_memo(c, n, i, p, sc, a);
    else
        rc = eval_node(c, n, i, p, sc, a);
    c->depth--;
    return rc;
}

void tg__schema_budget_init(tg__schema_budget *budget, uint64_t steps,
                            const atomic_int *stop)
{
    budget->steps = budget->limit = steps ? steps : TG_SCHEMA_DEFAULT_STEPS;
    budget->exhausted = 0;
    budget->stop = stop;
    budget->memo = TG_SCHEMA_MEMO_LAZY;
}

int tg__schema_validate_tape_in(const tg_schema *schema, const tg__jtape *tape,
                                size_t index, tg__schema_report *report,
                                tg__schema_budget *budget, tg_error *err)
{
    tg__schema_budget fresh;
    if (budget == NULL) {
        fresh.steps = fresh.limit = TG_SCHEMA_DEFAULT_STEPS;
        fresh.exhausted = 0;
        fresh.memo = TG_SCHEMA_MEMO_LAZY;
        fresh.stop = NULL;
        budget = &fresh;
    }
    vctx c;
    c.t = tape;
    c.report = report;
    c.err = err;
    c.depth = 0;
    c.budget = budget;
    c.left = budget->steps < CHUNK ? budget->steps : CHUNK;
    c.rest = budget->steps - c.left;
    c.memo_on = budget->memo == TG_SCHEMA_MEMO_ALWAYS;
    c.dyn = budget->memo != TG_SCHEMA_MEMO_OFF && schema->dynamic;
    c.memo.slot = NULL;
    c.memo.sslot = NULL;
    /* The pool is the compiled schema's only mutable part; it is used
     * through atomics only. */
    tg__rx_scratch_init(&c.rx, (tg__rx_pool *)&schema->rxpool);
    tg__buf_init_with(&c.kb, c.kstore, sizeof c.kstore, 0);
    int rc = eval(&c, schema->root, index, NULL, NULL, NULL);
    budget->steps = c.left + c.rest;
    if (c.memo.slot != NULL || c.memo.sslot != NULL)
        tg__memo_cleanup(&c.memo);
    tg__rx_scratch_cleanup(&c.rx);
    tg__buf_cleanup(&c.kb);
    return rc;
}

int tg__schema_validate_tape(const tg_schema *schema, const tg__jtape *tape,
                             size_t index, tg__schema_report *report,
                             tg_error *err)
{
    return tg__schema_validate_tape_in(schema, tape, index, report, NULL, err);
}
