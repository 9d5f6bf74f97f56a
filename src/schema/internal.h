/* SPDX-License-Identifier: MIT */
/*
 * internal.h - the compiled form of a JSON Schema, shared by the files of
 * src/schema/ and by nothing else. compile.c turns a schema document into a
 * graph of nodes (one per subschema, $refs already resolved to node
 * pointers, cycles allowed); validate.c walks that graph over an instance's
 * token tape. Each node holds a compact array of checks, one per keyword
 * (or per group of keywords evaluated together, such as everything an
 * object's members are checked against), in the order they run.
 */
#ifndef TG_SCHEMA_INTERNAL_H
#define TG_SCHEMA_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "jtape.h"
#include "schema.h"

/* ------------------------------------------------------------- vocabulary */

/* Vocabularies a schema resource uses (its metaschema's $vocabulary). */
#define TG__VOC_CORE 1u
#define TG__VOC_APPLICATOR 2u
#define TG__VOC_UNEVALUATED 4u
#define TG__VOC_VALIDATION 8u
#define TG__VOC_FORMAT_ASSERTION 16u
#define TG__VOC_CONTENT 32u
#define TG__VOC_METADATA 64u
#define TG__VOC_DEFAULT                                                        \
    (TG__VOC_CORE | TG__VOC_APPLICATOR | TG__VOC_UNEVALUATED |                 \
     TG__VOC_VALIDATION | TG__VOC_CONTENT | TG__VOC_METADATA)

/* ---------------------------------------------------------------- numbers */

/* A number of the schema or the instance: an int64 when it is one, else a
 * double. d always holds the (possibly rounded) value as a double. */
typedef struct tg__num {
    int is_int;
    int64_t i;
    double d;
} tg__num;

/* d without its fraction (like trunc(), without needing libm). */
double tg__num_trunc(double d);
/* <0, 0, >0 as a is below, equal to or above b, exactly. */
int tg__num_cmp(const tg__num *a, const tg__num *b);
/* Whether the decimal text x[0..xlen) is a multiple of the decimal text
 * m[0..mlen) (m > 0): exact for up to 36 significant digits, else through
 * doubles. */
int tg__num_multiple(const char *x, size_t xlen, const char *m, size_t mlen);
/* The shortest decimal text that reads back as d ("0.1", not
 * "0.10000000000000001"). out must hold 32 bytes. */
void tg__num_format(double d, char *out, size_t cap);

/* ----------------------------------------------------------------- regexes */

typedef struct tg__regex tg__regex;

/* Match data a compiled schema lends to validation calls: a call takes a
 * free slot with an atomic exchange and gives it back at its end, so
 * concurrent calls never share one; when all are taken the call makes its
 * own (tg__rx_scratch's arena). */
#define TG__RX_POOL 4
typedef struct tg__rx_pool {
    atomic_int busy[TG__RX_POOL];
    void *md[TG__RX_POOL]; /* pcre2_match_data_8 * */
} tg__rx_pool;

int tg__rx_pool_init(tg__rx_pool *pool);
void tg__rx_pool_cleanup(tg__rx_pool *pool);

/* Scratch a validation call brings for regex matching: match data from the
 * schema's pool, else out of `arena` (no heap allocation on the JIT path),
 * taken the first time a pattern runs. */
typedef struct tg__rx_scratch {
    tg__rx_pool *pool;
    int slot; /* the pool slot held, or -1 */
    void *gc; /* pcre2_general_context_8 * */
    void *md; /* pcre2_match_data_8 * */
    size_t used;
    _Alignas(16) unsigned char arena[1024];
} tg__rx_scratch;

/* Compiles an ECMA-262 pattern (UTF-8, pat[0..len)). Returns 0, TG_ENOMEM,
 * or TG_ESCHEMA with the reason in why[cap]. */
int tg__regex_compile(const char *pat, size_t len, tg__regex **out, char *why,
                      size_t cap);
/* 1 when the pattern matches somewhere in s[0..len) (valid UTF-8), 0 when
 * not, TG_ELIMIT when a match limit was hit, TG_ENOMEM. */
int tg__regex_match(const tg__regex *re, const char *s, size_t len,
                    tg__rx_scratch *scratch);
void tg__regex_free(tg__regex *re);
void tg__rx_scratch_init(tg__rx_scratch *scratch, tg__rx_pool *pool);
void tg__rx_scratch_cleanup(tg__rx_scratch *scratch);

/* ----------------------------------------------------------------- formats */

enum {
    TG__FMT_NONE = 0,
    TG__FMT_DATE_TIME,
    TG__FMT_DATE,
    TG__FMT_TIME,
    TG__FMT_DURATION,
    TG__FMT_EMAIL,
    TG__FMT_IDN_EMAIL,
    TG__FMT_HOSTNAME,
    TG__FMT_IDN_HOSTNAME,
    TG__FMT_IPV4,
    TG__FMT_IPV6,
    TG__FMT_URI,
    TG__FMT_URI_REFERENCE,
    TG__FMT_IRI,
    TG__FMT_IRI_REFERENCE,
    TG__FMT_URI_TEMPLATE,
    TG__FMT_UUID,
    TG__FMT_REGEX,
    TG__FMT_JSON_POINTER,
    TG__FMT_RELATIVE_JSON_POINTER
};

/* The TG__FMT_* of a format name, TG__FMT_NONE for unknown names. */
int tg__format_id(const char *name);
/* The name of a TG__FMT_* ("date-time"). */
const char *tg__format_name(int fmt);
/* 1 when s[0..len) (valid UTF-8) is in the format, 0 when not. */
int tg__format_check(int fmt, const char *s, size_t len);

/* ---------------------------------------------------------------- equality */

/* JSON equality of two tape values (1 == 1.0; objects regardless of member
 * order): 1 equal, 0 not, TG_ENOMEM. */
int tg__jequal(const tg__jtape *ta, size_t ia, const tg__jtape *tb, size_t ib);
/* A hash consistent with tg__jequal. */
uint64_t tg__jhash(const tg__jtape *t, size_t i);
/* The index of the token after the value at i. */
static inline size_t tg__jskip(const tg__jtape *t, size_t i)
{
    unsigned k = t->tok[i].kind;
    return (k == TG_JT_OBJECT || k == TG_JT_ARRAY) ? t->tok[i].a : i + 1;
}
/* The number token at i as a tg__num; TG_ENOMEM or 0. */
int tg__jnum(const tg__jtape *t, size_t i, tg__num *out);

/* --------------------------------------------------------------------- URIs */

/* Resolves ref against the absolute URI base (RFC 3986 section 5.2), into
 * out (appended). Returns 0 or a tg__buf error. */
int tg__uri_resolve(const char *base, const char *ref, tg__buf *out);
/* Whether s starts with a URI scheme ("http:", "urn:"). */
int tg__uri_has_scheme(const char *s);
/* Decodes %XX escapes of s[0..len) into out (appended); -1 for a bad
 * escape. */
int tg__uri_pct_decode(const char *s, size_t len, tg__buf *out);

/* ------------------------------------------------------------ metaschemas */

/* A built-in metaschema: the JSON Schema metaschemas of drafts 2020-12,
 * 2019-09 and 7 and the vocabulary metaschemas of 2020-12 and 2019-09,
 * generated at build time from Debian's python3-jsonschema
 * (embed_metaschemas.cmake) into metaschemas.c of the build directory.
 * `url` is what a $ref or $schema names it by, without a fragment; `text`
 * its JSON text, NUL-ended, static. compile.c parses one only when a
 * schema being compiled refers to it, after the caller's documents and
 * remotes. */
typedef struct tg__metaschema {
    const char *url;
    const char *text;
    size_t len;
} tg__metaschema;
extern const tg__metaschema tg__metaschemas[];
extern const size_t tg__nmetaschemas;

/* ------------------------------------------------------------ compiled form */

typedef struct tg__node tg__node;

enum tg__check_kind {
    TG__CK_REF = 1,      /* u.node: $ref */
    TG__CK_DYNREF,       /* u.dref: $dynamicRef */
    TG__CK_RECREF,       /* u.dref: $recursiveRef */
    TG__CK_TYPE,         /* u.types */
    TG__CK_ENUM,         /* u.val: the enum array's tape */
    TG__CK_CONST,        /* u.val: the value's tape */
    TG__CK_MINIMUM,      /* u.num */
    TG__CK_MAXIMUM,      /* u.num */
    TG__CK_XMINIMUM,     /* u.num */
    TG__CK_XMAXIMUM,     /* u.num */
    TG__CK_MULTIPLE,     /* u.num, text */
    TG__CK_MINLENGTH,    /* u.count */
    TG__CK_MAXLENGTH,    /* u.count */
    TG__CK_PATTERN,      /* u.pat */
    TG__CK_FORMAT,       /* u.fmt */
    TG__CK_MINITEMS,     /* u.count */
    TG__CK_MAXITEMS,     /* u.count */
    TG__CK_UNIQUE,       /* no argument */
    TG__CK_MINPROPS,     /* u.count */
    TG__CK_MAXPROPS,     /* u.count */
    TG__CK_OBJECT,       /* u.obj: properties, patternProperties,
                            additionalProperties, required,
                            dependentRequired, dependentSchemas */
    TG__CK_PROPNAMES,    /* u.node */
    TG__CK_ITEMS,        /* u.items: prefixItems/items/additionalItems */
    TG__CK_CONTAINS,     /* u.contains */
    TG__CK_ALLOF,        /* u.nodes */
    TG__CK_ANYOF,        /* u.nodes */
    TG__CK_ONEOF,        /* u.nodes */
    TG__CK_NOT,          /* u.node */
    TG__CK_IF,           /* u.cond */
    TG__CK_UNEVAL_ITEMS, /* u.node */
    TG__CK_UNEVAL_PROPS  /* u.node */
};

/* One name an object check knows: a key of properties, a required name, a
 * key or value of dependentRequired, a key of dependentSchemas. */
typedef struct tg__name {
    char *s; /* decoded, NUL-ended; may hold U+0000 itself: len ends it */
    uint32_t len;
    tg__node *prop;       /* properties[s], or NULL */
    tg__node *dep_schema; /* dependentSchemas[s], or NULL */
    uint32_t *dep_req;    /* dependentRequired[s] as name indices */
    uint32_t ndep_req;
} tg__name;

typedef struct tg__patprop {
    tg__regex *re;
    char *src; /* for messages (tg__schema_show) */
    tg__node *node;
} tg__patprop;

typedef struct tg__objcheck {
    tg__name *names; /* sorted by (len, bytes) for binary search */
    uint32_t nnames;
    uint32_t *required; /* name indices, in the schema's order */
    uint32_t nrequired;
    uint32_t *deps; /* names with dependentRequired or dependentSchemas */
    uint32_t ndeps;
    tg__patprop *pats;
    uint32_t npats;
    tg__node *additional; /* additionalProperties, or NULL */
    int has_props;        /* properties or patternProperties present */
} tg__objcheck;

typedef struct tg__check {
    uint8_t kind; /* enum tg__check_kind */
    union {
        unsigned types; /* TG_SCHEMA_T_* bits */
        uint64_t count;
        int fmt;
        tg__num num;
        struct {
            tg__num n;
            char *text; /* shortest decimal text of multipleOf */
        } mult;
        struct {
            tg__regex *re;
            char *src; /* for messages (tg__schema_show) */
        } pat;
        tg__node *node;
        struct {
            tg__node **v;
            uint32_t n;
        } nodes;
        tg__jtape *val;
        struct {
            tg__node *if_, *then_, *else_;
        } cond;
        struct {
            tg__node **prefix;
            uint32_t nprefix;
            tg__node *rest; /* NULL: the elements past the prefix are free */
        } items;
        struct {
            tg__node *node;
            uint64_t min, max; /* max UINT64_MAX: none */
            int mark;          /* its matches count as evaluated (2020-12) */
        } contains;
        tg__objcheck *obj;
        struct {
            tg__node *target; /* static resolution */
            char *anchor;     /* $dynamicRef: the dynamic anchor, or NULL */
        } dref;
    } u;
} tg__check;

/* A dynamic anchor of a schema resource. */
typedef struct tg__dynanchor {
    char *name;
    tg__node *node;
} tg__dynanchor;

#define TG__NODE_TRUE 0
#define TG__NODE_FALSE 1
#define TG__NODE_OBJECT 2

struct tg__node {
    tg__check *checks;
    uint32_t nchecks;
    uint8_t kind;             /* TG__NODE_* */
    uint8_t uneval;           /* 1: unevaluatedProperties, 2: ...Items */
    uint8_t recursive_anchor; /* "$recursiveAnchor": true (2019-09) */
    /* memo.c's plan: `memo` when the node can be reached along more than
     * one path (its verdict at an instance location is remembered for the
     * call); `dynamic` when a $dynamicRef or $recursiveRef that resolves
     * through the dynamic scope is reachable from it (the scope is then
     * part of what is remembered). */
    uint8_t memo;
    uint8_t dynamic;
    uint32_t id;        /* its index in tg_schema.nodes */
    tg__node *resource; /* the schema resource it belongs to */
    tg__dynanchor *dyn; /* resources: their $dynamicAnchors */
    uint32_t ndyn;
    unsigned types; /* the "type" keyword's bits, 0 when none */
};

struct tg_schema {
    tg__node *root;
    tg__node **nodes; /* every node, for freeing */
    size_t nnodes, capnodes;
    int dynamic; /* some node is `dynamic`: validation interns scopes */
    /* The one part of a compiled schema that calls change: match data on
     * loan, under atomics (see tg__rx_pool). */
    tg__rx_pool rxpool;
};

/* Writes a jansson value as compact JSON text that the tape reads back
 * (with TG_JTAPE_ALLOW_NUL: U+0000 is written "\u0000", in keys too) to the
 * same value (reals in their shortest round-trip form, so "0.1" stays
 * "0.1"). TG_ELIMIT past the tape's nesting limit, TG_ENOMEM. */
int tg__schema_json_text(const json_t *v, tg__buf *out);

/* Reads a schema document from text[0..len) into *out (new reference):
 * through the tape with TG_JTAPE_ALLOW_NUL, which accepts what jansson's
 * json_loadb(JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL)
 * accepts and refuses the rest with jansson's message, line and column,
 * except that keys may hold U+0000 too; then tg__jtape_to_json. Unlike
 * json_loadb it tells a failed allocation from bad JSON (jansson's lexer
 * reports one as an invalid token). Returns 0, TG_EPARSE (jerr filled),
 * TG_ELIMIT (4 GiB or more) or TG_ENOMEM. */
int tg__schema_read(const char *text, size_t len, json_t **out,
                    tg__jtape_error *jerr);

/* Strings of schemas and instances may hold U+0000 (they are compared by
 * length); messages, paths and pattern sources are C strings, so there it
 * is written as the six characters \u0000. tg__schema_show appends
 * s[0..n) so written to out (0 or a tg__buf error); tg__schema_show_dup
 * returns it as a new string (free()), NULL on out of memory. */
int tg__schema_show(const char *s, size_t n, tg__buf *out);
char *tg__schema_show_dup(const char *s, size_t n);

/* ------------------------------------------------------------ memoization */

/* Marks the nodes of a compiled schema `memo` and `dynamic` (see tg__node)
 * and sets s->dynamic. Called once, at the end of compiling. Returns 0 or
 * TG_ENOMEM. */
int tg__memo_plan(tg_schema *s);

/* What a validation call remembers (memo.c): the verdict of a `memo` node
 * at an instance location (a token index) under a dynamic scope (an id
 * that tg__memo_scope_id interns; 0 for nodes that are not `dynamic`),
 * with the annotations the node produced there when they were collected.
 * Per call, never shared; bounded (TG__MEMO_MAX entries,
 * TG__MEMO_MAX_WORDS annotation words, TG__MEMO_MAX_SCOPES scopes): past a
 * bound nothing more is remembered and evaluation goes on without, so only
 * time grows, under the call's step budget. */
enum {
    TG__MEMO_BUSY = 0, /* being evaluated: an in-place cycle meets itself */
    TG__MEMO_VALID,    /* passed */
    TG__MEMO_INVALID,  /* failed, evaluated without a report */
    TG__MEMO_REPORTED  /* failed, its violations are in the report */
};
#define TG__MEMO_NO_BITS UINT32_MAX
#define TG__MEMO_NO_SCOPE UINT32_MAX /* a scope past the bound */
#define TG__MEMO_INLINE 32
#define TG__MEMO_MAX (1u << 17)
#define TG__MEMO_MAX_WORDS (1u << 19)
#define TG__MEMO_MAX_SCOPES (1u << 16)

typedef struct tg__memo_ent {
    const tg__node *node; /* NULL: a free slot */
    uint32_t at;          /* the instance's token index */
    uint32_t scope;
    uint32_t bits; /* first annotation word, or TG__MEMO_NO_BITS */
    uint8_t state; /* TG__MEMO_* */
} tg__memo_ent;

typedef struct tg__memo_scope {
    const tg__node *res; /* NULL: a free slot */
    uint32_t up, id;
} tg__memo_scope;

typedef struct tg__memo {
    tg__memo_ent *slot; /* open addressing; NULL until first used */
    uint32_t cap, n;
    uint64_t *words; /* annotation bits of the entries that have them */
    uint32_t nwords, capwords;
    tg__memo_scope *sslot;
    uint32_t scap, sn;
    tg__memo_ent inl[TG__MEMO_INLINE];
} tg__memo;

/* A memo is ready for use once `slot` and `sslot` are NULL (the rest is
 * set on first use, so a validation that never needs it pays two
 * stores); tg__memo_cleanup frees it, and is needed only when one of the
 * two is not NULL any more. */
void tg__memo_cleanup(tg__memo *m);
/* The entry of (node, at, scope): the existing one (*fresh 0), or a new
 * one in state BUSY (*fresh 1); NULL when the table is full or out of
 * memory (then evaluate without remembering). The pointer is valid until
 * the next tg__memo_get. */
tg__memo_ent *tg__memo_get(tg__memo *m, const tg__node *node, uint32_t at,
                           uint32_t scope, int *fresh);
/* The id of the scope `up` (0: none) extended by the resource res; ids
 * are equal exactly when the chains of resources are.
 * TG__MEMO_NO_SCOPE past the bound, when up is, or out of memory. */
uint32_t tg__memo_scope_id(tg__memo *m, uint32_t up, const tg__node *res);
/* Keeps words[0..n) as e's annotations (e->bits), or leaves e->bits
 * TG__MEMO_NO_BITS past the bound or out of memory. */
void tg__memo_keep_bits(tg__memo *m, tg__memo_ent *e, const uint64_t *words,
                        uint32_t n);

/* Frees a compiled schema's nodes (compile.c). */
void tg__schema_destroy(tg_schema *s);

#endif
