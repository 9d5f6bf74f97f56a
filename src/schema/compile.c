/* SPDX-License-Identifier: MIT */
/*
 * compile.c - a schema document to the node graph of internal.h.
 *
 * Two passes. The index pass walks every subschema of a document (through
 * the keywords that hold subschemas in its draft, never through enum or
 * const values) and records, per subschema, its base URI, draft,
 * vocabularies, schema resource and JSON pointer, and registers every
 * resource ($id), $anchor and $dynamicAnchor under its absolute URI.
 * Documents named by $ref or $schema are loaded on demand from the
 * caller's bundle, the remotes directories or the built-in metaschemas
 * (internal.h, tg__metaschemas) and indexed the same way.
 *
 * The build pass then turns subschemas into nodes from a work list: a
 * node is created (and memoised per JSON value) the first time something
 * refers to it, and filled later, so $ref cycles become pointer cycles and
 * deep reference chains do not deepen the C stack. Every keyword's value is
 * checked on the way; a bad one fails with TG_ESCHEMA and the JSON pointer
 * of the keyword.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hashmap.h"
#include "internal.h"

#define MAX_META_DEPTH 8

typedef struct dynref {
    char *name;
    const json_t *json;
} dynref;

/* What the index pass knows about one subschema. */
typedef struct loc {
    const json_t *json; /* borrowed from a document the compiler holds */
    char *base;         /* absolute base URI, without fragment */
    char *path;         /* JSON pointer in its document */
    const char *doc;    /* the document's URL ("" for the root document) */
    tg_schema_draft draft;
    unsigned vocab;
    const json_t *resource; /* the root of its schema resource */
    tg__node *node;         /* once built */
    dynref *dyn;            /* resources: their $dynamicAnchors */
    size_t ndyn;
} loc;

typedef struct comp {
    tg_schema *s;
    const tg_schema_options *opt;
    const json_t *bundle;
    tg_error *err;
    tg__hmap locs; /* a subschema's json_t (the bytes of the pointer, which
                     is loc->json) -> its loc (owned) */
    tg__hmap uris; /* absolute URI (a copy, owned) -> its json_t (borrowed) */
    json_t **docs; /* documents loaded from remotes (owned) */
    size_t ndocs, capdocs;
    char **docnames;
    const json_t **pending;
    size_t npending, cappending;
    int meta_depth;
} comp;

/* ------------------------------------------------------------------ maps */

static size_t ptr_hash(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    return (size_t)h;
}

static loc *loc_get(const comp *C, const json_t *j)
{
    tg__hentry *e = tg__hmap_find(&C->locs, &j, sizeof j, ptr_hash(j));
    return e ? e->val.ptr : NULL;
}

/* Registers l under its json value; when that value has a loc already, the
 * first stays and *out is it (1). 0 when added, TG_ENOMEM. */
static int loc_put(comp *C, loc *l, loc **out)
{
    tg__hentry *e;
    int rc =
        tg__hmap_put(&C->locs, &l->json, sizeof l->json, ptr_hash(l->json), &e);
    if (rc < 0)
        return TG_ENOMEM;
    if (rc == 0)
        e->val.ptr = l;
    *out = e->val.ptr;
    return rc;
}

static const json_t *uri_get(const comp *C, const char *key)
{
    tg__hentry *e = tg__hmap_find_str(&C->uris, key);
    return e ? e->val.cptr : NULL;
}

/* Registers key -> j; the first registration of a URI wins. */
static int uri_put(comp *C, const char *key, const json_t *j)
{
    size_t len;
    uint64_t h = tg__hash_str(key, &len);
    if (tg__hmap_find(&C->uris, key, len, h) != NULL)
        return 0;
    char *dup = strdup(key);
    tg__hentry *e;
    if (dup == NULL || tg__hmap_put(&C->uris, dup, len, h, &e) < 0) {
        free(dup);
        return TG_ENOMEM;
    }
    e->val.cptr = j;
    return 0;
}

/* --------------------------------------------------------------- errors */

static int oom(comp *C)
{
    return tg__error_set(C->err, TG_ENOMEM, "out of memory compiling a schema");
}

/* The value of string v as a C string, NULL when v is not a string or
 * holds U+0000: for the strings that name something (URIs, anchors,
 * types, formats), where U+0000 cannot be part of a name and a C string
 * would silently stop at it. */
static const char *cstr(const json_t *v)
{
    const char *s = json_string_value(v);
    return s != NULL && strlen(s) == json_string_length(v) ? s : NULL;
}

/* The JSON pointer of keyword kw (may be NULL) of the subschema at l. */
static void pointer_of(const loc *l, const char *kw, char *out, size_t cap)
{
    const char *path = l ? l->path : "";
    const char *doc = l && l->doc && l->doc[0] ? l->doc : NULL;
    size_t n = 0;
    if (doc != NULL)
        n = (size_t)snprintf(out, cap, "%s#", doc);
    if (n >= cap)
        n = cap - 1;
    n += (size_t)snprintf(out + n, cap - n, "%s", path);
    if (n >= cap)
        n = cap - 1;
    if (kw == NULL)
        return;
    if (n + 1 < cap)
        out[n++] = '/';
    for (; *kw && n + 2 < cap; kw++) {
        if (*kw == '~' || *kw == '/') {
            out[n++] = '~';
            out[n++] = *kw == '~' ? '0' : '1';
        } else {
            out[n++] = *kw;
        }
    }
    out[n] = '\0';
}

static int bad(comp *C, const loc *l, const char *kw, const char *fmt, ...)
    TG__PRINTF(4, 5);

static int bad(comp *C, const loc *l, const char *kw, const char *fmt, ...)
{
    char why[320], ptr[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    pointer_of(l, kw, ptr, sizeof ptr);
    tg__error_set(C->err, TG_ESCHEMA, "invalid schema at '%s': %s", ptr, why);
    tg__error_pointer(C->err, ptr);
    return TG_ESCHEMA;
}

/* ------------------------------------------------------------ keywords */

/* Which keywords hold subschemas, per draft. */
enum { K_ONE, K_ARRAY, K_MAP, K_ITEMS };

typedef struct subkw {
    const char *name;
    int shape;
    unsigned drafts; /* bit 1 << tg_schema_draft */
} subkw;

#define D2020 (1u << TG_SCHEMA_DRAFT_2020_12)
#define D2019 (1u << TG_SCHEMA_DRAFT_2019_09)
#define D7 (1u << TG_SCHEMA_DRAFT_7)
#define DALL (D2020 | D2019 | D7)

static const subkw subkws[] = {
    {"additionalProperties", K_ONE, DALL},
    {"propertyNames", K_ONE, DALL},
    {"not", K_ONE, DALL},
    {"if", K_ONE, DALL},
    {"then", K_ONE, DALL},
    {"else", K_ONE, DALL},
    {"contains", K_ONE, DALL},
    {"unevaluatedProperties", K_ONE, D2020 | D2019},
    {"unevaluatedItems", K_ONE, D2020 | D2019},
    {"additionalItems", K_ONE, D2019 | D7},
    {"items", K_ONE, D2020},
    {"items", K_ITEMS, D2019 | D7},
    {"contentSchema", K_ONE, D2020 | D2019},
    {"allOf", K_ARRAY, DALL},
    {"anyOf", K_ARRAY, DALL},
    {"oneOf", K_ARRAY, DALL},
    {"prefixItems", K_ARRAY, D2020},
    {"properties", K_MAP, DALL},
    {"patternProperties", K_MAP, DALL},
    {"$defs", K_MAP, D2020 | D2019},
    {"definitions", K_MAP, DALL},
    {"dependentSchemas", K_MAP, D2020 | D2019},
    {"dependencies", K_MAP, DALL},
};

/* ------------------------------------------------------------ documents */

static int walk(comp *C, const json_t *j, const char *base,
                tg_schema_draft draft, unsigned vocab, const json_t *resource,
                tg__buf *path, const char *doc);

/* The draft and vocabularies a `$schema` URI stands for. */
static int meta_of(comp *C, const char *uri, tg_schema_draft *draft,
                   unsigned *vocab);

static int keep_doc(comp *C, json_t *doc, const char *name)
{
    if (C->ndocs == C->capdocs) {
        size_t cap = C->capdocs ? C->capdocs * 2 : 8;
        json_t **d = realloc(C->docs, cap * sizeof *d);
        if (d == NULL)
            return TG_ENOMEM;
        C->docs = d;
        char **nm = realloc(C->docnames, cap * sizeof *nm);
        if (nm == NULL)
            return TG_ENOMEM;
        C->docnames = nm;
        C->capdocs = cap;
    }
    char *dup = strdup(name);
    if (dup == NULL)
        return TG_ENOMEM;
    C->docs[C->ndocs] = doc;
    C->docnames[C->ndocs++] = dup;
    return 0;
}

/* Indexes document `doc` (kept alive by the caller or C->docs) under url. */
static int add_document(comp *C, const json_t *doc, const char *url,
                        tg_schema_draft draft, unsigned vocab)
{
    int rc = uri_put(C, url, doc);
    if (rc != 0)
        return oom(C);
    const char *name = "";
    for (size_t k = 0; k < C->ndocs; k++)
        if (C->docs[k] == doc)
            name = C->docnames[k];
    tg__buf path;
    tg__buf_init(&path, 0);
    rc = walk(C, doc, url, draft, vocab, doc, &path, name);
    tg__buf_cleanup(&path);
    return rc;
}

/* The file at path, whole, into out: 0, TG_ENOTFOUND when it cannot be
 * read, TG_ENOMEM. With plain system calls: stdio's allocations would make
 * out of memory look like a missing file. */
static int read_file(const char *path, tg__buf *out)
{
    int fd;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return TG_ENOTFOUND;
    int rc = 0;
    for (;;) {
        if ((rc = tg__buf_reserve(out, 16384)) != 0)
            break;
        ssize_t n = read(fd, out->data + out->len, out->cap - out->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = TG_ENOTFOUND;
            break;
        }
        if (n == 0)
            break;
        out->len += (size_t)n;
        out->data[out->len] = '\0';
    }
    close(fd);
    return rc;
}

/* The built-in metaschema of absolute URL abs, parsed, into *out (new
 * reference; NULL when abs names none). Parsed per compile, when a schema
 * names it: a program that never refers to one pays nothing, and nothing
 * is shared between compiles. 0, TG_ENOMEM, or TG_EINTERNAL when the
 * embedded text is not JSON (a broken build). */
static int builtin_document(comp *C, const char *abs, json_t **out)
{
    *out = NULL;
    for (size_t k = 0; k < tg__nmetaschemas; k++) {
        const tg__metaschema *m = &tg__metaschemas[k];
        if (strcmp(m->url, abs) != 0)
            continue;
        tg__jtape_error jerr;
        int rc = tg__schema_read(m->text, m->len, out, &jerr);
        if (rc == TG_ENOMEM)
            return oom(C);
        if (rc != 0)
            return tg__error_set(C->err, TG_EINTERNAL,
                                 "built-in metaschema '%s' is not JSON", abs);
        return 0;
    }
    return 0;
}

/* Finds the document of absolute URL abs in the bundle, the remotes or the
 * built-in metaschemas (in that order: a caller may bring its own copy)
 * and indexes it; 0 (found or not: the caller looks it up), or an
 * error. */
static int load_document(comp *C, const char *abs, tg_schema_draft draft,
                         unsigned vocab)
{
    if (uri_get(C, abs) != NULL)
        return 0;
    json_t *doc = NULL; /* new ref */
    if (C->bundle != NULL) {
        const json_t *b = json_object_get(C->bundle, abs); /* borrowed */
        if (b != NULL) {
            doc = json_incref((json_t *)b);
        } else {
            /* Bundles may key metaschemas with their "#". */
            tg__buf k;
            tg__buf_init(&k, 0);
            if (tg__buf_printf(&k, "%s#", abs) != 0) {
                tg__buf_cleanup(&k);
                return oom(C);
            }
            b = json_object_get(C->bundle, tg__buf_cstr(&k));
            tg__buf_cleanup(&k);
            if (b != NULL)
                doc = json_incref((json_t *)b);
        }
    }
    for (size_t r = 0; doc == NULL && C->opt && r < C->opt->nremotes; r++) {
        const tg_schema_remote *rem = &C->opt->remotes[r];
        size_t pl = strlen(rem->prefix);
        if (strncmp(abs, rem->prefix, pl) != 0)
            continue;
        const char *rest = abs + pl;
        /* Only plain relative paths under the directory. */
        if (strstr(rest, "..") != NULL || strchr(rest, '?') != NULL ||
            rest[0] == '/')
            continue;
        tg__buf file;
        tg__buf_init(&file, 0);
        int brc = rest[0] ? tg__buf_printf(&file, "%s/%s", rem->dir, rest)
                          : tg__buf_puts(&file, rem->dir);
        if (brc != 0) {
            tg__buf_cleanup(&file);
            return oom(C);
        }
        tg__buf text;
        tg__buf_init(&text, 0);
        int frc = read_file(tg__buf_cstr(&file), &text);
        tg__buf_cleanup(&file);
        /* A file that is not JSON is as good as none. */
        if (frc == 0) {
            tg__jtape_error jerr;
            frc = tg__schema_read(tg__buf_cstr(&text), text.len, &doc, &jerr);
        }
        tg__buf_cleanup(&text);
        if (frc == TG_ENOMEM)
            return oom(C);
    }
    if (doc == NULL) {
        int rc = builtin_document(C, abs, &doc);
        if (rc != 0)
            return rc;
    }
    if (doc == NULL)
        return 0;
    if (keep_doc(C, doc, abs) != 0) {
        json_decref(doc);
        return oom(C);
    }
    return add_document(C, doc, abs, draft, vocab);
}

/* ------------------------------------------------------------- index pass */

static int add_loc(comp *C, const json_t *j, const char *base,
                   tg_schema_draft draft, unsigned vocab,
                   const json_t *resource, tg__buf *path, const char *doc,
                   loc **out)
{
    loc *l = calloc(1, sizeof *l);
    if (l == NULL)
        return oom(C);
    l->json = j;
    l->base = strdup(base);
    l->path = strdup(path->len ? path->data : "");
    l->doc = doc;
    l->draft = draft;
    l->vocab = vocab;
    l->resource = resource;
    /* A value reached twice keeps its first location (rc 1). */
    loc *kept = NULL;
    int rc = l->base && l->path ? loc_put(C, l, &kept) : TG_ENOMEM;
    if (rc != 0) {
        free(l->base);
        free(l->path);
        free(l);
        if (rc < 0)
            return oom(C);
    }
    if (out)
        *out = kept;
    return 0;
}

/* Appends "/" and seg[0..n) escaped as a JSON pointer segment (U+0000 as
 * tg__schema_show writes it: the path is for messages). */
static int push_seg(tg__buf *path, const char *seg, size_t n)
{
    int rc = tg__buf_append(path, "/", 1);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (seg[i] == '~')
            rc = tg__buf_puts(path, "~0");
        else if (seg[i] == '/')
            rc = tg__buf_puts(path, "~1");
        else
            rc = tg__schema_show(seg + i, 1, path);
    }
    return rc;
}

static int walk_child(comp *C, const json_t *v, const char *base,
                      tg_schema_draft draft, unsigned vocab,
                      const json_t *resource, tg__buf *path, const char *doc,
                      const char *seg1, const char *seg2, size_t seg2len)
{
    size_t mark = path->len;
    int rc = push_seg(path, seg1, strlen(seg1));
    if (rc == 0 && seg2 != NULL)
        rc = push_seg(path, seg2, seg2len);
    if (rc != 0)
        return oom(C);
    rc = walk(C, v, base, draft, vocab, resource, path, doc);
    path->len = mark;
    if (path->data)
        path->data[mark] = '\0';
    return rc;
}

static int anchor_uri(comp *C, const char *base, const char *name,
                      const json_t *j)
{
    tg__buf u;
    tg__buf_init(&u, 0);
    int rc = tg__buf_printf(&u, "%s#%s", base, name);
    if (rc == 0)
        rc = uri_put(C, tg__buf_cstr(&u), j);
    tg__buf_cleanup(&u);
    return rc ? oom(C) : 0;
}

static int walk(comp *C, const json_t *j, const char *base,
                tg_schema_draft draft, unsigned vocab, const json_t *resource,
                tg__buf *path, const char *doc)
{
    if (loc_get(C, j) != NULL)
        return 0;
    /* Values that are not schemas get a location too, so the build pass
     * can say where the bad one is. */
    if (!json_is_object(j))
        return add_loc(C, j, base, draft, vocab, resource, path, doc, NULL);
    const json_t *sch = json_object_get(j, "$schema"); /* borrowed */
    const json_t *idv = json_object_get(j, "$id");     /* borrowed */
    int is_root = path->len == 0;
    int rc;
    /* Where this subschema is, for refusing its keywords. */
    loc here = {.path = path->len ? path->data : "", .doc = doc};
    if (json_is_string(sch) && (is_root || json_is_string(idv))) {
        rc = cstr(sch) ? meta_of(C, cstr(sch), &draft, &vocab) : TG_ESCHEMA;
        if (rc == TG_ESCHEMA)
            return bad(C, &here, "$schema", "unknown metaschema '%s'",
                       json_string_value(sch));
        if (rc != 0)
            return rc;
    }
    /* URIs and anchor names cannot hold U+0000. */
    static const char *const names[] = {"$id", "$anchor", "$dynamicAnchor"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const json_t *nv = json_object_get(j, names[k]); /* borrowed */
        if (json_is_string(nv) && cstr(nv) == NULL)
            return bad(C, &here, names[k], "must not contain U+0000");
    }
    tg__buf nb;
    tg__buf_init(&nb, 0);
    const char *cur = base;
    /* In draft 7 a $ref makes its siblings, $id included, ignored. */
    if (json_is_string(idv) &&
        !(draft == TG_SCHEMA_DRAFT_7 && json_object_get(j, "$ref") != NULL)) {
        const char *id = json_string_value(idv);
        if (id[0] == '#') {
            /* draft 7: "$id": "#name" is a plain-name anchor. */
            if (draft == TG_SCHEMA_DRAFT_7 && id[1] != '\0' &&
                (rc = anchor_uri(C, base, id + 1, j)) != 0)
                goto out;
        } else {
            if (tg__uri_resolve(base, id, &nb) != 0) {
                rc = oom(C);
                goto out;
            }
            char *h = strchr(nb.data, '#');
            if (h != NULL) {
                *h = '\0';
                nb.len = (size_t)(h - nb.data);
            }
            cur = nb.data;
            resource = j;
            if ((rc = uri_put(C, cur, j)) != 0) {
                rc = oom(C);
                goto out;
            }
        }
    }
    loc *l;
    if ((rc = add_loc(C, j, cur, draft, vocab, resource, path, doc, &l)) != 0)
        goto out;
    const json_t *anc = json_object_get(j, "$anchor"); /* borrowed */
    if (draft != TG_SCHEMA_DRAFT_7 && json_is_string(anc) &&
        (rc = anchor_uri(C, cur, cstr(anc), j)) != 0)
        goto out;
    const json_t *dyn = json_object_get(j, "$dynamicAnchor"); /* borrowed */
    if (draft == TG_SCHEMA_DRAFT_2020_12 && json_is_string(dyn)) {
        const char *name = json_string_value(dyn);
        if ((rc = anchor_uri(C, cur, name, j)) != 0)
            goto out;
        loc *rl = loc_get(C, resource);
        if (rl != NULL) {
            dynref *d = realloc(rl->dyn, (rl->ndyn + 1) * sizeof *d);
            if (d == NULL) {
                rc = oom(C);
                goto out;
            }
            rl->dyn = d;
            d[rl->ndyn].name = strdup(name);
            d[rl->ndyn].json = j;
            if (d[rl->ndyn++].name == NULL) {
                rc = oom(C);
                goto out;
            }
        }
    }
    unsigned dbit = 1u << draft;
    for (size_t k = 0; k < sizeof subkws / sizeof subkws[0]; k++) {
        const subkw *kw = &subkws[k];
        if (!(kw->drafts & dbit))
            continue;
        const json_t *v = json_object_get(j, kw->name); /* borrowed */
        if (v == NULL)
            continue;
        if (kw->shape == K_ONE || (kw->shape == K_ITEMS && !json_is_array(v))) {
            rc = walk_child(C, v, cur, draft, vocab, resource, path, doc,
                            kw->name, NULL, 0);
        } else if (kw->shape == K_ARRAY || kw->shape == K_ITEMS) {
            size_t idx;
            const json_t *e; /* borrowed */
            json_array_foreach(v, idx, e)
            {
                char num[24];
                snprintf(num, sizeof num, "%zu", idx);
                rc = walk_child(C, e, cur, draft, vocab, resource, path, doc,
                                kw->name, num, strlen(num));
                if (rc != 0)
                    break;
            }
        } else if (json_is_object(v)) {
            const char *key;
            size_t klen;
            const json_t *e; /* borrowed */
            json_object_keylen_foreach((json_t *)v, key, klen, e)
            {
                rc = walk_child(C, e, cur, draft, vocab, resource, path, doc,
                                kw->name, key, klen);
                if (rc != 0)
                    break;
            }
        }
        if (rc != 0)
            goto out;
    }
out:
    tg__buf_cleanup(&nb);
    return rc;
}

/* The metaschema URI without an empty fragment. */
static int same_uri(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 0 && a[la - 1] == '#')
        la--;
    return la == lb && memcmp(a, b, la) == 0;
}

static unsigned vocab_bit(const char *uri)
{
    static const struct {
        const char *suffix;
        unsigned bit;
    } map[] = {
        {"/vocab/core", TG__VOC_CORE},
        {"/vocab/applicator", TG__VOC_APPLICATOR},
        {"/vocab/unevaluated", TG__VOC_UNEVALUATED},
        {"/vocab/validation", TG__VOC_VALIDATION},
        {"/vocab/format-assertion", TG__VOC_FORMAT_ASSERTION},
        {"/vocab/content", TG__VOC_CONTENT},
        {"/vocab/meta-data", TG__VOC_METADATA},
    };
    if (strncmp(uri, "https://json-schema.org/draft/", 30) != 0)
        return 0;
    size_t n = strlen(uri);
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++) {
        size_t m = strlen(map[k].suffix);
        if (n >= m && strcmp(uri + n - m, map[k].suffix) == 0)
            return map[k].bit;
    }
    return 0;
}

static int meta_of(comp *C, const char *uri, tg_schema_draft *draft,
                   unsigned *vocab)
{
    if (same_uri(uri, "https://json-schema.org/draft/2020-12/schema")) {
        *draft = TG_SCHEMA_DRAFT_2020_12;
        *vocab = TG__VOC_DEFAULT;
        return 0;
    }
    if (same_uri(uri, "https://json-schema.org/draft/2019-09/schema")) {
        *draft = TG_SCHEMA_DRAFT_2019_09;
        *vocab = TG__VOC_DEFAULT;
        return 0;
    }
    /* Drafts 4 and 6 validate close enough to 7 for the keywords they
     * share; they are read as 7. */
    if (same_uri(uri, "http://json-schema.org/draft-07/schema") ||
        same_uri(uri, "https://json-schema.org/draft-07/schema") ||
        same_uri(uri, "http://json-schema.org/draft-06/schema") ||
        same_uri(uri, "http://json-schema.org/draft-04/schema")) {
        *draft = TG_SCHEMA_DRAFT_7;
        *vocab = TG__VOC_DEFAULT;
        return 0;
    }
    /* A custom metaschema: its own $schema says the draft, its
     * $vocabulary the vocabularies. */
    if (C->meta_depth >= MAX_META_DEPTH)
        return TG_ESCHEMA;
    tg__buf abs;
    tg__buf_init(&abs, 0);
    if (tg__buf_puts(&abs, uri) != 0) {
        tg__buf_cleanup(&abs);
        return oom(C);
    }
    char *h = strchr(abs.data, '#');
    if (h != NULL)
        *h = '\0';
    C->meta_depth++;
    int rc = load_document(C, abs.data, *draft, *vocab);
    C->meta_depth--;
    const json_t *m = rc == 0 ? uri_get(C, abs.data) : NULL; /* borrowed */
    tg__buf_cleanup(&abs);
    if (rc != 0)
        return rc;
    if (!json_is_object(m))
        return TG_ESCHEMA;
    loc *ml = loc_get(C, m);
    if (ml != NULL)
        *draft = ml->draft;
    const json_t *voc = json_object_get(m, "$vocabulary"); /* borrowed */
    if (json_is_object(voc)) {
        unsigned v = 0;
        const char *key;
        size_t klen;
        const json_t *val; /* borrowed */
        json_object_keylen_foreach((json_t *)voc, key, klen, val)
        {
            if (strlen(key) == klen)
                v |= vocab_bit(key);
        }
        /* 2019-09 has no separate unevaluated vocabulary: those keywords
         * are the applicator's. */
        if (*draft == TG_SCHEMA_DRAFT_2019_09 && (v & TG__VOC_APPLICATOR))
            v |= TG__VOC_UNEVALUATED;
        *vocab = v;
    } else if (ml != NULL) {
        *vocab = ml->vocab;
    }
    return 0;
}

/* ------------------------------------------------------------- references */

static tg__node *new_node(comp *C, loc *l);

/* The node of subschema j, created (and queued for building) on first
 * use. Subschemas the index pass did not reach (a $ref into an unknown
 * keyword) are indexed now, with the base of `near`. */
static int get_node(comp *C, const json_t *j, const loc *near, tg__node **out)
{
    loc *l = loc_get(C, j);
    if (l == NULL) {
        tg__buf path;
        tg__buf_init(&path, 0);
        int rc = tg__buf_puts(&path, near->path);
        if (rc == 0)
            rc = walk(C, j, near->base, near->draft, near->vocab,
                      near->resource, &path, near->doc);
        tg__buf_cleanup(&path);
        if (rc != 0)
            return rc == TG_ENOMEM ? oom(C) : rc;
        l = loc_get(C, j);
        if (l == NULL)
            return bad(C, near, NULL,
                       "a $ref names something that is not a "
                       "schema");
    }
    if (l->node == NULL && new_node(C, l) == NULL)
        return oom(C);
    *out = l->node;
    return 0;
}

static tg__node *new_node(comp *C, loc *l)
{
    tg_schema *s = C->s;
    if (s->nnodes == s->capnodes) {
        size_t cap = s->capnodes ? s->capnodes * 2 : 32;
        tg__node **n = realloc(s->nodes, cap * sizeof *n);
        if (n == NULL)
            return NULL;
        s->nodes = n;
        s->capnodes = cap;
    }
    if (C->npending == C->cappending) {
        size_t cap = C->cappending ? C->cappending * 2 : 32;
        const json_t **p = realloc(C->pending, cap * sizeof *p);
        if (p == NULL)
            return NULL;
        C->pending = p;
        C->cappending = cap;
    }
    tg__node *n = calloc(1, sizeof *n);
    if (n == NULL)
        return NULL;
    s->nodes[s->nnodes++] = n;
    C->pending[C->npending++] = l->json;
    l->node = n;
    n->resource = n;
    if (l->resource != l->json) {
        loc *rl = loc_get(C, l->resource);
        if (rl != NULL) {
            if (rl->node == NULL && new_node(C, rl) == NULL)
                return NULL;
            n->resource = rl->node;
        }
    }
    return n;
}

/* Walks JSON pointer ptr[0..len) (already percent-decoded, so it may hold
 * U+0000) from j: the target in *out (NULL when there is none). Returns 0
 * or TG_ENOMEM. */
static int follow_pointer(const json_t *j, const char *ptr, size_t len,
                          const json_t **out)
{
    tg__buf seg;
    tg__buf_init(&seg, 0);
    int rc = 0;
    const char *p = ptr, *end = ptr + len;
    while (j != NULL && p < end && *p == '/') {
        p++;
        seg.len = 0;
        while (p < end && *p != '/') {
            char c = *p++;
            if (c == '~' && p < end && (*p == '0' || *p == '1'))
                c = *p++ == '0' ? '~' : '/';
            if ((rc = tg__buf_append(&seg, &c, 1)) != 0)
                break;
        }
        if (rc != 0)
            break;
        const char *s = tg__buf_cstr(&seg);
        if (json_is_object(j)) {
            j = json_object_getn(j, s, seg.len);
        } else if (json_is_array(j)) {
            size_t ix = 0, k = 0;
            if (seg.len == 0 || seg.len > 18 || (seg.len > 1 && s[0] == '0')) {
                j = NULL;
                break;
            }
            while (k < seg.len && s[k] >= '0' && s[k] <= '9')
                ix = ix * 10 + (size_t)(s[k++] - '0');
            j = k == seg.len ? json_array_get(j, ix) : NULL;
        } else {
            j = NULL;
        }
    }
    tg__buf_cleanup(&seg);
    *out = rc == 0 && p == end ? j : NULL;
    return rc;
}

/* Resolves reference `ref` of the subschema at l: its target's JSON value,
 * node in *out, its JSON value in *tjson (may be NULL), and in *name_out
 * (may be NULL) a copy of the fragment when it is a plain name. */
static int resolve_ref(comp *C, const loc *l, const char *kw, const char *ref,
                       tg__node **out, char **name_out, const json_t **tjson)
{
    tg__buf u, key, dec;
    tg__buf_init(&u, 0);
    tg__buf_init(&key, 0);
    tg__buf_init(&dec, 0);
    int rc;
    if (name_out)
        *name_out = NULL;
    if (tg__uri_resolve(l->base, ref, &u) != 0) {
        rc = oom(C);
        goto out;
    }
    char *h = strchr(u.data, '#');
    const char *frag = "";
    if (h != NULL) {
        *h = '\0';
        frag = h + 1;
    }
    const char *abs = u.data;
    const json_t *doc = uri_get(C, abs); /* borrowed */
    if (doc == NULL) {
        if ((rc = load_document(C, abs, l->draft, l->vocab)) != 0)
            goto out;
        doc = uri_get(C, abs);
    }
    const json_t *t = NULL; /* borrowed */
    if (doc != NULL) {
        if (frag[0] == '\0') {
            t = doc;
        } else if (frag[0] == '/') {
            /* A bad %-escape names nothing; memory running out is not
             * that. */
            int drc = tg__uri_pct_decode(frag, strlen(frag), &dec);
            if (drc == 0)
                drc = follow_pointer(doc, tg__buf_cstr(&dec), dec.len, &t);
            if (drc == TG_ENOMEM || drc == TG_ELIMIT) {
                rc = oom(C);
                goto out;
            }
        } else {
            if (tg__buf_printf(&key, "%s#%s", abs, frag) != 0) {
                rc = oom(C);
                goto out;
            }
            t = uri_get(C, key.data);
            if (t != NULL && name_out != NULL &&
                (*name_out = strdup(frag)) == NULL) {
                rc = oom(C);
                goto out;
            }
        }
    }
    if (t == NULL) {
        char ptr[256];
        pointer_of(l, kw, ptr, sizeof ptr);
        rc = tg__error_set(C->err, TG_ENOTFOUND,
                           "cannot resolve %s '%s' at '%s'", kw, ref, ptr);
        tg__error_pointer(C->err, ptr);
        goto out;
    }
    /* A pointer target is indexed relative to the document it is in. */
    loc near = *l;
    if (frag[0] == '/') {
        loc *dl = loc_get(C, doc);
        if (dl != NULL)
            near = *dl;
        near.path = (char *)(dec.data ? dec.data : "");
    }
    rc = get_node(C, t, &near, out);
    if (tjson != NULL)
        *tjson = t;
out:
    if (rc != 0 && name_out != NULL) {
        free(*name_out);
        *name_out = NULL;
    }
    tg__buf_cleanup(&u);
    tg__buf_cleanup(&key);
    tg__buf_cleanup(&dec);
    return rc;
}

/* ------------------------------------------------------------ build pass */

typedef struct checks {
    tg__check v[40];
    uint32_t n;
} checks;

static tg__check *add(checks *cs, unsigned kind)
{
    tg__check *c = &cs->v[cs->n++];
    memset(c, 0, sizeof *c);
    c->kind = (uint8_t)kind;
    return c;
}

/* A non-negative integer keyword (2.0 counts). */
static int count_of(comp *C, const loc *l, const char *kw, const json_t *v,
                    uint64_t *out)
{
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return 0;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d >= 0 && d == (double)(uint64_t)d && d < 1.8e19) {
            *out = (uint64_t)d;
            return 0;
        }
    }
    return bad(C, l, kw, "must be a non-negative integer");
}

static int num_of(comp *C, const loc *l, const char *kw, const json_t *v,
                  tg__num *out)
{
    if (json_is_integer(v)) {
        out->is_int = 1;
        out->i = json_integer_value(v);
        out->d = (double)out->i;
        return 0;
    }
    if (json_is_real(v)) {
        out->is_int = 0;
        out->i = 0;
        out->d = json_real_value(v);
        return 0;
    }
    return bad(C, l, kw, "must be a number");
}

static unsigned type_bit(const char *s)
{
    if (s == NULL)
        return 0;
    static const struct {
        const char *name;
        unsigned bit;
    } m[] = {{"null", TG_SCHEMA_T_NULL},      {"boolean", TG_SCHEMA_T_BOOLEAN},
             {"object", TG_SCHEMA_T_OBJECT},  {"array", TG_SCHEMA_T_ARRAY},
             {"number", TG_SCHEMA_T_NUMBER},  {"string", TG_SCHEMA_T_STRING},
             {"integer", TG_SCHEMA_T_INTEGER}};
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++)
        if (strcmp(s, m[k].name) == 0)
            return m[k].bit;
    return 0;
}

static int value_tape(comp *C, const json_t *v, tg__jtape **out)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    int rc = tg__schema_json_text(v, &b);
    tg__jtape *t = NULL;
    if (rc == 0) {
        t = calloc(1, sizeof *t);
        if (t == NULL)
            rc = TG_ENOMEM;
    }
    if (rc == 0)
        rc = tg__jtape_parse(b.data, b.len, TG_JTAPE_COPY | TG_JTAPE_ALLOW_NUL,
                             t, NULL);
    tg__buf_cleanup(&b);
    if (rc != 0) {
        free(t);
        return rc == TG_ENOMEM ? oom(C) : rc;
    }
    *out = t;
    return 0;
}

static int node_list(comp *C, const loc *l, const char *kw, const json_t *v,
                     tg__node ***out, uint32_t *n)
{
    if (!json_is_array(v) || json_array_size(v) == 0)
        return bad(C, l, kw, "must be a non-empty array of schemas");
    size_t cnt = json_array_size(v);
    tg__node **arr = calloc(cnt, sizeof *arr);
    if (arr == NULL)
        return oom(C);
    *out = arr; /* owned by the check from here, even on failure */
    *n = (uint32_t)cnt;
    for (size_t k = 0; k < cnt; k++) {
        int rc = get_node(C, json_array_get(v, k), l, &arr[k]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    const tg__name *x = a, *y = b;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return memcmp(x->s, y->s, x->len);
}

/* Names are bytes with a length: a property name may hold U+0000. */
static int name_index(const tg__objcheck *o, const char *s, size_t len)
{
    tg__name key = {.s = (char *)s, .len = (uint32_t)len};
    const tg__name *f =
        bsearch(&key, o->names, o->nnames, sizeof key, cmp_name);
    return f ? (int)(f - o->names) : -1;
}

static int add_name(tg__objcheck *o, uint32_t *cap, const char *s, size_t len)
{
    if (len >= UINT32_MAX)
        return TG_ENOMEM;
    for (uint32_t k = 0; k < o->nnames; k++)
        if (o->names[k].len == len && memcmp(o->names[k].s, s, len) == 0)
            return 0;
    if (o->nnames == *cap) {
        uint32_t c = *cap ? *cap * 2 : 8;
        tg__name *n = realloc(o->names, c * sizeof *n);
        if (n == NULL)
            return TG_ENOMEM;
        o->names = n;
        *cap = c;
    }
    tg__name *nm = &o->names[o->nnames];
    memset(nm, 0, sizeof *nm);
    nm->s = malloc(len + 1);
    if (nm->s == NULL)
        return TG_ENOMEM;
    memcpy(nm->s, s, len);
    nm->s[len] = '\0';
    nm->len = (uint32_t)len;
    o->nnames++;
    return 0;
}

static void obj_free(tg__objcheck *o)
{
    if (o == NULL)
        return;
    for (uint32_t k = 0; k < o->nnames; k++) {
        free(o->names[k].s);
        free(o->names[k].dep_req);
    }
    free(o->names);
    free(o->required);
    free(o->deps);
    for (uint32_t k = 0; k < o->npats; k++) {
        tg__regex_free(o->pats[k].re);
        free(o->pats[k].src);
    }
    free(o->pats);
    free(o);
}

/* properties, patternProperties, additionalProperties, required,
 * dependentRequired, dependentSchemas (and draft 7 dependencies) as one
 * check, so an object's members are walked once. */
static int build_object(comp *C, const json_t *j, const loc *l, checks *cs)
{
    int app = (l->vocab & TG__VOC_APPLICATOR) != 0;
    int val = (l->vocab & TG__VOC_VALIDATION) != 0;
    int d7 = l->draft == TG_SCHEMA_DRAFT_7;
    const json_t *props = app ? json_object_get(j, "properties") : NULL;
    const json_t *pats = app ? json_object_get(j, "patternProperties") : NULL;
    const json_t *addl =
        app ? json_object_get(j, "additionalProperties") : NULL;
    const json_t *req = val ? json_object_get(j, "required") : NULL;
    const json_t *dreq =
        val && !d7 ? json_object_get(j, "dependentRequired") : NULL;
    const json_t *dsch =
        app && !d7 ? json_object_get(j, "dependentSchemas") : NULL;
    /* draft 7's dependencies; later drafts split it in two, and it is
     * still read there for compatibility (when both spellings are absent
     * it costs nothing). */
    const json_t *deps = json_object_get(j, "dependencies");
    if (!app || !val)
        deps = NULL;
    if (!props && !pats && !addl && !req && !dreq && !dsch && !deps)
        return 0;
    const char *key;
    size_t klen;
    const json_t *v; /* borrowed */
    size_t idx;
    if (props && !json_is_object(props))
        return bad(C, l, "properties", "must be an object of schemas");
    if (pats && !json_is_object(pats))
        return bad(C, l, "patternProperties", "must be an object of schemas");
    if (req) {
        if (!json_is_array(req))
            return bad(C, l, "required", "must be an array of strings");
        json_array_foreach(req, idx, v)
        {
            if (!json_is_string(v))
                return bad(C, l, "required", "must be an array of strings");
        }
    }
    if (dreq && !json_is_object(dreq))
        return bad(C, l, "dependentRequired",
                   "must be an object of string arrays");
    if (dsch && !json_is_object(dsch))
        return bad(C, l, "dependentSchemas", "must be an object of schemas");
    if (deps && !json_is_object(deps))
        return bad(C, l, "dependencies",
                   "must be an object of schemas or string arrays");
    tg__objcheck *o = calloc(1, sizeof *o);
    if (o == NULL)
        return oom(C);
    tg__check *ck = add(cs, TG__CK_OBJECT);
    ck->u.obj = o; /* freed with the node from here */
    uint32_t cap = 0;
    int rc = 0;
#define NAME(s, n)                                                             \
    do {                                                                       \
        if (add_name(o, &cap, (s), (n)) != 0)                                  \
            return oom(C);                                                     \
    } while (0)
#define SNAME(v) NAME(json_string_value(v), json_string_length(v))
    if (props)
        json_object_keylen_foreach((json_t *)props, key, klen, v)
            NAME(key, klen);
    if (req)
        json_array_foreach(req, idx, v) SNAME(v);
    const json_t *dr[2] = {dreq, deps};
    for (int w = 0; w < 2; w++) {
        if (dr[w] == NULL)
            continue;
        json_object_keylen_foreach((json_t *)dr[w], key, klen, v)
        {
            NAME(key, klen);
            if (json_is_array(v)) {
                size_t i2;
                const json_t *e; /* borrowed */
                json_array_foreach(v, i2, e)
                {
                    if (!json_is_string(e))
                        return bad(C, l,
                                   w ? "dependencies" : "dependentRequired",
                                   "must list property names as strings");
                    SNAME(e);
                }
            } else if (w == 0 || !(json_is_object(v) || json_is_boolean(v))) {
                return bad(C, l, w ? "dependencies" : "dependentRequired",
                           "each value must be an array of property names");
            }
        }
    }
    if (dsch)
        json_object_keylen_foreach((json_t *)dsch, key, klen, v)
            NAME(key, klen);
#undef SNAME
#undef NAME
    if (o->nnames > 0)
        qsort(o->names, o->nnames, sizeof *o->names, cmp_name);
    o->has_props = props != NULL || pats != NULL;
    if (props) {
        json_object_keylen_foreach((json_t *)props, key, klen, v)
        {
            tg__name *nm = &o->names[name_index(o, key, klen)];
            if ((rc = get_node(C, v, l, &nm->prop)) != 0)
                return rc;
        }
    }
    if (req) {
        o->required = calloc(json_array_size(req) + 1, sizeof *o->required);
        if (o->required == NULL)
            return oom(C);
        json_array_foreach(req, idx, v) o->required[o->nrequired++] =
            (uint32_t)name_index(o, json_string_value(v),
                                 json_string_length(v));
    }
    for (int w = 0; w < 2; w++) {
        if (dr[w] == NULL)
            continue;
        json_object_keylen_foreach((json_t *)dr[w], key, klen, v)
        {
            tg__name *nm = &o->names[name_index(o, key, klen)];
            if (json_is_array(v)) {
                free(nm->dep_req);
                nm->ndep_req = 0;
                nm->dep_req = calloc(json_array_size(v) + 1, sizeof(uint32_t));
                if (nm->dep_req == NULL)
                    return oom(C);
                size_t i2;
                const json_t *e; /* borrowed */
                json_array_foreach(v, i2, e) nm->dep_req[nm->ndep_req++] =
                    (uint32_t)name_index(o, json_string_value(e),
                                         json_string_length(e));
            } else if ((rc = get_node(C, v, l, &nm->dep_schema)) != 0) {
                return rc;
            }
        }
    }
    if (dsch) {
        json_object_keylen_foreach((json_t *)dsch, key, klen, v)
        {
            tg__name *nm = &o->names[name_index(o, key, klen)];
            if ((rc = get_node(C, v, l, &nm->dep_schema)) != 0)
                return rc;
        }
    }
    o->deps = calloc(o->nnames + 1, sizeof *o->deps);
    if (o->deps == NULL)
        return oom(C);
    for (uint32_t k = 0; k < o->nnames; k++)
        if (o->names[k].ndep_req > 0 || o->names[k].dep_schema != NULL)
            o->deps[o->ndeps++] = k;
    if (pats) {
        o->pats = calloc(json_object_size(pats) + 1, sizeof *o->pats);
        if (o->pats == NULL)
            return oom(C);
        json_object_keylen_foreach((json_t *)pats, key, klen, v)
        {
            tg__patprop *pp = &o->pats[o->npats++];
            char why[160] = "";
            pp->src = tg__schema_show_dup(key, klen);
            if (pp->src == NULL)
                return oom(C);
            rc = tg__regex_compile(key, klen, &pp->re, why, sizeof why);
            if (rc == TG_ESCHEMA) {
                loc sub = *l;
                char sp[256];
                pointer_of(l, "patternProperties", sp, sizeof sp);
                sub.path = sp;
                sub.doc = NULL;
                return bad(C, &sub, pp->src, "the pattern does not compile: %s",
                           why);
            }
            if (rc != 0)
                return oom(C);
            if ((rc = get_node(C, v, l, &pp->node)) != 0)
                return rc;
        }
    }
    if (addl && (rc = get_node(C, addl, l, &o->additional)) != 0)
        return rc;
    return 0;
}

static int build_items(comp *C, const json_t *j, const loc *l, checks *cs)
{
    if (!(l->vocab & TG__VOC_APPLICATOR))
        return 0;
    const json_t *prefix, *rest; /* borrowed */
    const char *pkw, *rkw;
    if (l->draft == TG_SCHEMA_DRAFT_2020_12) {
        prefix = json_object_get(j, "prefixItems");
        rest = json_object_get(j, "items");
        pkw = "prefixItems";
        rkw = "items";
        if (rest && json_is_array(rest))
            return bad(C, l, "items",
                       "must be a schema (2020-12 spells the array form "
                       "prefixItems)");
    } else {
        const json_t *items = json_object_get(j, "items");
        if (json_is_array(items)) {
            prefix = items;
            rest = json_object_get(j, "additionalItems");
            pkw = "items";
            rkw = "additionalItems";
        } else {
            prefix = NULL;
            rest = items;
            pkw = "items";
            rkw = "items";
        }
    }
    if (!prefix && !rest)
        return 0;
    tg__check *ck = add(cs, TG__CK_ITEMS);
    int rc;
    if (prefix) {
        if (!json_is_array(prefix))
            return bad(C, l, pkw, "must be an array of schemas");
        size_t n = json_array_size(prefix);
        ck->u.items.prefix = calloc(n + 1, sizeof(tg__node *));
        if (ck->u.items.prefix == NULL)
            return oom(C);
        for (size_t k = 0; k < n; k++) {
            if ((rc = get_node(C, json_array_get(prefix, k), l,
                               &ck->u.items.prefix[k])) != 0)
                return rc;
            ck->u.items.nprefix++;
        }
    }
    if (rest && (rc = get_node(C, rest, l, &ck->u.items.rest)) != 0)
        return rc;
    (void)rkw;
    return 0;
}

static int build_validation(comp *C, const json_t *j, const loc *l, tg__node *n,
                            checks *cs)
{
    const json_t *v; /* borrowed */
    int rc;
    if ((v = json_object_get(j, "type")) != NULL) {
        unsigned bits = 0;
        if (json_is_string(v)) {
            bits = type_bit(cstr(v));
            if (bits == 0)
                return bad(C, l, "type", "unknown type '%s'",
                           json_string_value(v));
        } else if (json_is_array(v)) {
            size_t k;
            const json_t *e; /* borrowed */
            json_array_foreach(v, k, e)
            {
                unsigned b = type_bit(cstr(e));
                if (b == 0)
                    return bad(C, l, "type",
                               "must list type names (null, boolean, object, "
                               "array, number, string, integer)");
                bits |= b;
            }
        } else {
            return bad(C, l, "type",
                       "must be a type name or an array of type names");
        }
        add(cs, TG__CK_TYPE)->u.types = bits;
        n->types = bits;
    }
    if ((v = json_object_get(j, "enum")) != NULL) {
        if (!json_is_array(v))
            return bad(C, l, "enum", "must be an array");
        tg__check *ck = add(cs, TG__CK_ENUM);
        if ((rc = value_tape(C, v, &ck->u.val)) != 0)
            return rc == TG_ELIMIT ? bad(C, l, "enum", "is nested too deep")
                                   : rc;
    }
    if ((v = json_object_get(j, "const")) != NULL) {
        tg__check *ck = add(cs, TG__CK_CONST);
        if ((rc = value_tape(C, v, &ck->u.val)) != 0)
            return rc == TG_ELIMIT ? bad(C, l, "const", "is nested too deep")
                                   : rc;
    }
    if ((v = json_object_get(j, "multipleOf")) != NULL) {
        tg__check *ck = add(cs, TG__CK_MULTIPLE);
        if ((rc = num_of(C, l, "multipleOf", v, &ck->u.mult.n)) != 0)
            return rc;
        if (ck->u.mult.n.d <= 0)
            return bad(C, l, "multipleOf", "must be greater than 0");
        char txt[40];
        if (ck->u.mult.n.is_int)
            snprintf(txt, sizeof txt, "%lld", (long long)ck->u.mult.n.i);
        else
            tg__num_format(ck->u.mult.n.d, txt, sizeof txt);
        if ((ck->u.mult.text = strdup(txt)) == NULL)
            return oom(C);
    }
    static const struct {
        const char *kw;
        unsigned kind;
    } nums[] = {{"maximum", TG__CK_MAXIMUM},
                {"exclusiveMaximum", TG__CK_XMAXIMUM},
                {"minimum", TG__CK_MINIMUM},
                {"exclusiveMinimum", TG__CK_XMINIMUM}};
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
        if ((v = json_object_get(j, nums[k].kw)) == NULL)
            continue;
        tg__check *ck = add(cs, nums[k].kind);
        if ((rc = num_of(C, l, nums[k].kw, v, &ck->u.num)) != 0)
            return rc;
    }
    static const struct {
        const char *kw;
        unsigned kind;
    } counts[] = {
        {"maxLength", TG__CK_MAXLENGTH},    {"minLength", TG__CK_MINLENGTH},
        {"maxItems", TG__CK_MAXITEMS},      {"minItems", TG__CK_MINITEMS},
        {"maxProperties", TG__CK_MAXPROPS}, {"minProperties", TG__CK_MINPROPS}};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        if ((v = json_object_get(j, counts[k].kw)) == NULL)
            continue;
        tg__check *ck = add(cs, counts[k].kind);
        if ((rc = count_of(C, l, counts[k].kw, v, &ck->u.count)) != 0)
            return rc;
    }
    if ((v = json_object_get(j, "pattern")) != NULL) {
        if (!json_is_string(v))
            return bad(C, l, "pattern", "must be a string");
        tg__check *ck = add(cs, TG__CK_PATTERN);
        char why[160] = "";
        ck->u.pat.src =
            tg__schema_show_dup(json_string_value(v), json_string_length(v));
        if (ck->u.pat.src == NULL)
            return oom(C);
        rc = tg__regex_compile(json_string_value(v), json_string_length(v),
                               &ck->u.pat.re, why, sizeof why);
        if (rc == TG_ESCHEMA)
            return bad(C, l, "pattern", "the pattern does not compile: %s",
                       why);
        if (rc != 0)
            return oom(C);
    }
    if ((v = json_object_get(j, "uniqueItems")) != NULL) {
        if (!json_is_boolean(v))
            return bad(C, l, "uniqueItems", "must be a boolean");
        if (json_is_true(v))
            add(cs, TG__CK_UNIQUE);
    }
    return 0;
}

static int build_ref(comp *C, const json_t *j, const loc *l, checks *cs,
                     const char *kw, unsigned kind)
{
    const json_t *v = json_object_get(j, kw); /* borrowed */
    if (v == NULL)
        return 0;
    if (!json_is_string(v))
        return bad(C, l, kw, "must be a URI reference (a string)");
    if (cstr(v) == NULL)
        return bad(C, l, kw, "must not contain U+0000");
    tg__check *ck = add(cs, kind);
    char *name = NULL;
    tg__node *t = NULL;
    const json_t *tj = NULL; /* borrowed */
    int rc = resolve_ref(C, l, kw, json_string_value(v), &t,
                         kind == TG__CK_DYNREF ? &name : NULL, &tj);
    if (rc != 0)
        return rc;
    if (kind == TG__CK_REF) {
        ck->u.node = t;
        return 0;
    }
    ck->u.dref.target = t;
    /* Dynamic only when the static target is a $dynamicAnchor of that
     * name; otherwise $dynamicRef is a plain $ref. */
    if (name != NULL) {
        const json_t *da = json_object_get(tj, "$dynamicAnchor"); /* borrowed */
        if (cstr(da) != NULL && strcmp(cstr(da), name) == 0)
            ck->u.dref.anchor = name;
        else
            free(name);
    }
    return 0;
}

static int build_one(comp *C, const json_t *j, const loc *l, checks *cs,
                     const char *kw, unsigned kind)
{
    const json_t *v = json_object_get(j, kw); /* borrowed */
    if (v == NULL)
        return 0;
    tg__check *ck = add(cs, kind);
    return get_node(C, v, l, &ck->u.node);
}

static void check_free(tg__check *c)
{
    switch (c->kind) {
    case TG__CK_ENUM:
    case TG__CK_CONST:
        if (c->u.val) {
            tg__jtape_free(c->u.val);
            free(c->u.val);
        }
        break;
    case TG__CK_MULTIPLE:
        free(c->u.mult.text);
        break;
    case TG__CK_PATTERN:
        tg__regex_free(c->u.pat.re);
        free(c->u.pat.src);
        break;
    case TG__CK_ALLOF:
    case TG__CK_ANYOF:
    case TG__CK_ONEOF:
        free(c->u.nodes.v);
        break;
    case TG__CK_ITEMS:
        free(c->u.items.prefix);
        break;
    case TG__CK_OBJECT:
        obj_free(c->u.obj);
        break;
    case TG__CK_DYNREF:
    case TG__CK_RECREF:
        free(c->u.dref.anchor);
        break;
    default:
        break;
    }
}

static int build(comp *C, tg__node *n, const json_t *j, loc *l)
{
    if (json_is_boolean(j)) {
        n->kind = json_is_true(j) ? TG__NODE_TRUE : TG__NODE_FALSE;
        return 0;
    }
    if (!json_is_object(j))
        return bad(C, l, NULL, "a schema must be an object or a boolean");
    n->kind = TG__NODE_OBJECT;
    checks cs;
    cs.n = 0;
    int rc = 0;
    unsigned voc = l->vocab;
    tg_schema_draft d = l->draft;
    if (l->resource == j && l->ndyn > 0) {
        n->dyn = calloc(l->ndyn, sizeof *n->dyn);
        if (n->dyn == NULL)
            return oom(C);
        for (size_t k = 0; k < l->ndyn; k++) {
            n->dyn[k].name = strdup(l->dyn[k].name);
            if (n->dyn[k].name == NULL)
                return oom(C);
            n->ndyn++;
            if ((rc = get_node(C, l->dyn[k].json, l, &n->dyn[k].node)) != 0)
                return rc;
        }
    }
    if (d == TG_SCHEMA_DRAFT_2019_09)
        n->recursive_anchor =
            json_is_true(json_object_get(j, "$recursiveAnchor"));
    /* Definitions are built even when nothing refers to them, so a bad
     * one fails the compile where it is written. */
    static const char *const defs[] = {"$defs", "definitions"};
    for (size_t k = 0; k < 2; k++) {
        const json_t *dv = json_object_get(j, defs[k]); /* borrowed */
        if (dv == NULL || (k == 0 && d == TG_SCHEMA_DRAFT_7))
            continue;
        if (!json_is_object(dv)) {
            rc = bad(C, l, defs[k], "must be an object of schemas");
            goto done;
        }
        const char *key;
        const json_t *v; /* borrowed */
        tg__node *unused;
        json_object_foreach((json_t *)dv, key, v)
        {
            if ((rc = get_node(C, v, l, &unused)) != 0)
                goto done;
        }
    }
    if (d == TG_SCHEMA_DRAFT_7 && json_object_get(j, "$ref") != NULL) {
        rc = build_ref(C, j, l, &cs, "$ref", TG__CK_REF);
        goto done;
    }
    if (voc & TG__VOC_VALIDATION) {
        if ((rc = build_validation(C, j, l, n, &cs)) != 0)
            goto done;
    }
    const json_t *fmt = json_object_get(j, "format"); /* borrowed */
    if (fmt != NULL && !json_is_string(fmt)) {
        rc = bad(C, l, "format", "must be a string");
        goto done;
    }
    if (fmt != NULL && ((C->opt && C->opt->format_assert) ||
                        (voc & TG__VOC_FORMAT_ASSERTION))) {
        /* A name holding U+0000 is no format anyone knows. */
        int id = cstr(fmt) ? tg__format_id(cstr(fmt)) : TG__FMT_NONE;
        if (id != TG__FMT_NONE)
            add(&cs, TG__CK_FORMAT)->u.fmt = id;
    }
    if ((rc = build_object(C, j, l, &cs)) != 0)
        goto done;
    if (voc & TG__VOC_APPLICATOR) {
        if ((rc = build_one(C, j, l, &cs, "propertyNames", TG__CK_PROPNAMES)))
            goto done;
        if ((rc = build_items(C, j, l, &cs)) != 0)
            goto done;
        const json_t *con = json_object_get(j, "contains"); /* borrowed */
        if (con != NULL) {
            tg__check *ck = add(&cs, TG__CK_CONTAINS);
            ck->u.contains.min = 1;
            ck->u.contains.max = UINT64_MAX;
            ck->u.contains.mark = d == TG_SCHEMA_DRAFT_2020_12;
            if ((rc = get_node(C, con, l, &ck->u.contains.node)) != 0)
                goto done;
            const json_t *v; /* borrowed */
            if (d != TG_SCHEMA_DRAFT_7 && (voc & TG__VOC_VALIDATION)) {
                if ((v = json_object_get(j, "minContains")) != NULL &&
                    (rc = count_of(C, l, "minContains", v,
                                   &ck->u.contains.min)) != 0)
                    goto done;
                if ((v = json_object_get(j, "maxContains")) != NULL &&
                    (rc = count_of(C, l, "maxContains", v,
                                   &ck->u.contains.max)) != 0)
                    goto done;
            }
        }
    }
    if ((rc = build_ref(C, j, l, &cs, "$ref", TG__CK_REF)) != 0)
        goto done;
    if (d == TG_SCHEMA_DRAFT_2020_12 &&
        (rc = build_ref(C, j, l, &cs, "$dynamicRef", TG__CK_DYNREF)) != 0)
        goto done;
    if (d == TG_SCHEMA_DRAFT_2019_09 &&
        (rc = build_ref(C, j, l, &cs, "$recursiveRef", TG__CK_RECREF)) != 0)
        goto done;
    if (voc & TG__VOC_APPLICATOR) {
        static const struct {
            const char *kw;
            unsigned kind;
        } lists[] = {{"allOf", TG__CK_ALLOF},
                     {"anyOf", TG__CK_ANYOF},
                     {"oneOf", TG__CK_ONEOF}};
        for (size_t k = 0; k < 3; k++) {
            const json_t *v = json_object_get(j, lists[k].kw); /* borrowed */
            if (v == NULL)
                continue;
            tg__check *ck = add(&cs, lists[k].kind);
            if ((rc = node_list(C, l, lists[k].kw, v, &ck->u.nodes.v,
                                &ck->u.nodes.n)) != 0)
                goto done;
        }
        if ((rc = build_one(C, j, l, &cs, "not", TG__CK_NOT)) != 0)
            goto done;
        const json_t *iff = json_object_get(j, "if"); /* borrowed */
        if (iff != NULL) {
            tg__check *ck = add(&cs, TG__CK_IF);
            const json_t *th = json_object_get(j, "then"); /* borrowed */
            const json_t *el = json_object_get(j, "else"); /* borrowed */
            if ((rc = get_node(C, iff, l, &ck->u.cond.if_)) != 0 ||
                (th && (rc = get_node(C, th, l, &ck->u.cond.then_)) != 0) ||
                (el && (rc = get_node(C, el, l, &ck->u.cond.else_)) != 0))
                goto done;
        }
    }
    if (d != TG_SCHEMA_DRAFT_7 && (voc & TG__VOC_UNEVALUATED)) {
        if (json_object_get(j, "unevaluatedItems") != NULL) {
            if ((rc = build_one(C, j, l, &cs, "unevaluatedItems",
                                TG__CK_UNEVAL_ITEMS)) != 0)
                goto done;
            n->uneval |= 2;
        }
        if (json_object_get(j, "unevaluatedProperties") != NULL) {
            if ((rc = build_one(C, j, l, &cs, "unevaluatedProperties",
                                TG__CK_UNEVAL_PROPS)) != 0)
                goto done;
            n->uneval |= 1;
        }
    }
done:
    /* The checks move to the node even on failure, so destroy frees what
     * they own. */
    if (cs.n > 0) {
        n->checks = malloc(cs.n * sizeof *n->checks);
        if (n->checks == NULL) {
            for (uint32_t k = 0; k < cs.n; k++)
                check_free(&cs.v[k]);
            return oom(C);
        }
        memcpy(n->checks, cs.v, cs.n * sizeof *n->checks);
        n->nchecks = cs.n;
    }
    return rc;
}

/* ------------------------------------------------------------- lifetime */

void tg__schema_destroy(tg_schema *s)
{
    if (s == NULL)
        return;
    for (size_t k = 0; k < s->nnodes; k++) {
        tg__node *n = s->nodes[k];
        for (uint32_t c = 0; c < n->nchecks; c++)
            check_free(&n->checks[c]);
        free(n->checks);
        for (uint32_t d = 0; d < n->ndyn; d++)
            free(n->dyn[d].name);
        free(n->dyn);
        free(n);
    }
    free(s->nodes);
    tg__rx_pool_cleanup(&s->rxpool);
    free(s);
}

static void comp_cleanup(comp *C)
{
    size_t pos = 0;
    tg__hentry *e;
    while ((e = tg__hmap_next(&C->locs, &pos)) != NULL) {
        loc *l = e->val.ptr;
        free(l->base);
        free(l->path);
        for (size_t d = 0; d < l->ndyn; d++)
            free(l->dyn[d].name);
        free(l->dyn);
        free(l);
    }
    tg__hmap_cleanup(&C->locs);
    for (pos = 0; (e = tg__hmap_next(&C->uris, &pos)) != NULL;)
        free((void *)e->key); /* the copy uri_put made */
    tg__hmap_cleanup(&C->uris);
    for (size_t k = 0; k < C->ndocs; k++) {
        json_decref(C->docs[k]);
        free(C->docnames[k]);
    }
    free(C->docs);
    free(C->docnames);
    free(C->pending);
}

/* The base URI of a root document without $id: resolvable, so relative
 * $ids under it work, and in a domain that cannot exist. */
#define DEFAULT_BASE "https://toolgate.invalid/schema.json"

int tg__schema_compile_docs(const json_t *doc, const tg_schema_options *options,
                            const json_t *documents, tg_schema **out,
                            tg_error *err)
{
    *out = NULL;
    comp C;
    memset(&C, 0, sizeof C);
    C.opt = options;
    C.bundle = json_is_object(documents) ? documents : NULL;
    C.err = err;
    int rc;
    C.s = calloc(1, sizeof *C.s);
    if (C.s == NULL || tg__rx_pool_init(&C.s->rxpool) != 0) {
        rc = oom(&C);
        goto fail;
    }
    tg_schema_draft draft = options ? options->draft : TG_SCHEMA_DRAFT_2020_12;
    if ((unsigned)draft > TG_SCHEMA_DRAFT_7)
        draft = TG_SCHEMA_DRAFT_2020_12;
    if ((rc = add_document(&C, doc, DEFAULT_BASE, draft, TG__VOC_DEFAULT)) != 0)
        goto fail;
    loc *rl = loc_get(&C, doc);
    if (rl == NULL) {
        rc = bad(&C, NULL, NULL, "a schema must be an object or a boolean");
        goto fail;
    }
    if ((rc = get_node(&C, doc, rl, &C.s->root)) != 0)
        goto fail;
    while (C.npending > 0) {
        const json_t *j = C.pending[--C.npending];
        loc *l = loc_get(&C, j);
        if ((rc = build(&C, l->node, j, l)) != 0)
            goto fail;
    }
    if (tg__memo_plan(C.s) != 0) {
        rc = oom(&C);
        goto fail;
    }
    comp_cleanup(&C);
    *out = C.s;
    return 0;
fail:
    comp_cleanup(&C);
    tg__schema_destroy(C.s);
    return rc;
}

int tg__schema_compile(const json_t *doc, const tg_schema_options *options,
                       tg_schema **out, tg_error *err)
{
    return tg__schema_compile_docs(doc, options, NULL, out, err);
}
