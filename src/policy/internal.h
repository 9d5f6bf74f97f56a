/* SPDX-License-Identifier: MIT */
/*
 * internal.h - the compiled policy as the files of src/policy/ share it:
 * rules and their conditions (compile.c builds them, match.c tests them),
 * the rule index (index.c) and path resolution for `under` (path.c).
 */
#ifndef TG_POLICY_INTERNAL_H
#define TG_POLICY_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "hashmap.h"
#include "policy.h"

/* Longest literal glob prefix the index keys on; a longer prefix is cut
 * (still a necessary condition, so still correct). */
#define TG__POLICY_PREFIX_MAX 64

enum {
    TG__PAT_NONE = 0, /* no condition */
    TG__PAT_EXACT,    /* no glob metacharacter: strcmp */
    TG__PAT_PREFIX,   /* "literal*": a prefix test */
    TG__PAT_GLOB      /* anything else: fnmatch(3) */
};

enum {
    TG__OP_EQUALS = 0,
    TG__OP_ONE_OF,
    TG__OP_MATCHES,
    TG__OP_UNDER,
    TG__OP_MAX_LENGTH
};

enum {
    TG__HINT_READ_ONLY,
    TG__HINT_DESTRUCTIVE,
    TG__HINT_IDEMPOTENT,
    TG__HINT_OPEN_WORLD,
    TG__HINT_COUNT
};

struct tg__pcond {
    int op;
    json_t *value;  /* equals / one_of: own deep copy (new ref) */
    pcre2_code *re; /* matches */
    pcre2_match_context *mctx;
    char *text;        /* matches: the pattern; under: the path */
    size_t max_length; /* max_length, in code points */
};

struct tg__parg {
    char *name;
    size_t ncond;
    struct tg__pcond *cond;
};

struct tg__pattern {
    int kind;      /* TG__PAT_* */
    char *text;    /* NULL when kind is NONE */
    size_t prefix; /* bytes of literal prefix (EXACT: all, PREFIX: before *) */
    size_t suffix; /* GLOB: bytes of literal text after the last
                      metacharacter, which every match must end with */
};

struct tg__rule {
    struct tg__pattern tool, caller;
    signed char hint[TG__HINT_COUNT]; /* -1: not tested, else 0/1 */
    size_t nargs;
    struct tg__parg *args;
    tg__policy_decision decision;
    char *summary; /* "tool 'write_file', args.path under './out'" */
    char *reason;  /* the rule's reason, or one naming the rule */
};

/* The rules one key of the index names, in file order; the index's tables
 * (core/hashmap.h) map a byte string to one of these, which holds the
 * key's bytes. Read-only once built. */
struct tg__plist {
    uint32_t *idx;
    size_t n, cap;
    char key[]; /* the table's key, NUL-terminated */
};

struct tg__policy {
    tg__policy_decision dflt;
    bool reads_args; /* some rule has argument conditions */
    char *default_reason;
    size_t nrules;
    struct tg__rule *rules;
    /* The index: rules by exact tool name, rules by literal prefix of a glob
     * tool, and rules every tool is a candidate for (no tool, or a glob with
     * no literal prefix). prefix_lens has bit L-1 set when some prefix is L
     * bytes long, so a decision probes only lengths that exist. */
    tg__hmap exact, prefix;
    uint32_t *always;
    size_t nalways;
    uint64_t prefix_lens;
    /* Globs with no literal prefix but a literal suffix ("*_file") sit in a
     * third table under their suffix, stored reversed so a decision hashes
     * the name once from its end; suffix_lens as prefix_lens. */
    tg__hmap suffix;
    uint64_t suffix_lens;
};

/* index.c: appends rule to the list of key (keylen bytes) in table t.
 * Returns 0 or TG_ENOMEM. */
int tg__ptab_add(tg__hmap *t, const char *key, size_t keylen, uint32_t rule);
/* The list of key, whose FNV-1a hash (tg__hash_bytes) is hash; NULL when
 * no rule has that key. Borrowed from t, which is read-only by then. */
static inline const struct tg__plist *
tg__ptab_get(const tg__hmap *t, const char *key, size_t keylen, uint64_t hash)
{
    const tg__hentry *e = tg__hmap_find(t, key, keylen, hash);
    return e ? e->val.ptr : NULL;
}
/* Frees every list of t and t's slots. */
void tg__ptab_free(tg__hmap *t);
/* Builds p's index from its rules. Returns 0 or TG_ENOMEM. */
int tg__policy_index(tg__policy *p);

/* match.c: per-decision state and the condition tests. */
struct tg__pctx {
    const tg__policy_input *in;
    pcre2_match_data *md; /* created on the first regex test, per decision */
    char ws[TG__POLICY_PATH_MAX];  /* resolved workspace, "" until needed */
    char cwd[TG__POLICY_PATH_MAX]; /* resolved cwd, "" until needed */
    tg__buf *explain;
};
void tg__pctx_cleanup(struct tg__pctx *c);
bool tg__pattern_match(const struct tg__pattern *p, const char *s);
/* 1: the rule's conditions hold, 0: they do not, < 0: TG_E* (err filled).
 * check_tool: also test the tool pattern (the index did not). */
int tg__rule_match(struct tg__pctx *c, const struct tg__rule *r,
                   bool check_tool, tg_error *err);
/* JSON equality with numbers by value (1 == 1.0). */
bool tg__pjson_equal(const json_t *a, const json_t *b);
/* Number of code points of a valid UTF-8 string. */
size_t tg__utf8_count(const char *s, size_t n);

#endif
