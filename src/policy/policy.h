/* SPDX-License-Identifier: MIT */
/*
 * policy.h - the permission policy engine (issue 6; `policy` of toolgate.json,
 * docs/configuration.md): rules read top to bottom, the first whose every
 * condition holds decides allow / deny / ask, none: the default. A rule may
 * test the tool name (glob), the caller id (string or glob), the tool's MCP
 * annotations (absent hints take the MCP defaults: readOnlyHint false,
 * destructiveHint true, idempotentHint false, openWorldHint true) and the
 * call's arguments (equals, one_of, matches a regex, under a path,
 * max_length).
 *
 * Details the config syntax leaves open, decided here:
 *   - `tool` and `caller` are fnmatch(3) globs (no flags); a string without
 *     * ? [ \ is compared as is. A call without a caller fails every rule
 *     that names one.
 *   - An annotation hint that is absent or not a boolean takes the default.
 *   - One argument may carry several operators ({"matches": .., "max_length":
 *     ..}): all must hold. An absent argument meets no condition.
 *   - `matches` searches (unanchored; anchor with ^ and $) with PCRE2 in UTF
 *     mode, with match limits; `max_length` counts code points; `matches`,
 *     `under` and `max_length` never hold for a non-string.
 *   - `under` resolves both paths like the kernel walks them (path.c).
 *
 * A compiled policy is immutable: any number of threads may call
 * tg__policy_decide on one policy at once. Every decision keeps its mutable
 * state (PCRE2 match data, resolved paths, the candidate cursors of the
 * rule index) in its own stack frame or in allocations it frees itself; the
 * PCRE2 codes and match contexts in the policy are only read.
 */
#ifndef TG_POLICY_POLICY_H
#define TG_POLICY_POLICY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "toolgate.h"

typedef enum tg__policy_decision {
    TG_POLICY_ALLOW = 0,
    TG_POLICY_DENY = 1,
    TG_POLICY_ASK = 2
} tg__policy_decision;

typedef struct tg__policy tg__policy;

/* What a decision looks at. Every pointer is borrowed for the call. */
typedef struct tg__policy_input {
    const char *tool;          /* the tool's name; required */
    const char *caller;        /* caller id; NULL: none (caller rules fail) */
    const json_t *annotations; /* the tool's MCP annotations object or NULL */
    const json_t *args;        /* the call's arguments object or NULL */
    const char *workspace;     /* `under` rule paths are relative to it;
                                  relative: to the process's cwd. NULL: "." */
    const char *cwd;           /* relative argument paths are relative to it;
                                  relative: to the workspace. NULL: the
                                  workspace */
} tg__policy_input;

typedef struct tg__policy_verdict {
    tg__policy_decision decision;
    long rule; /* index of the deciding rule, -1 for the default */
    /* The rule's "reason", else a text naming the rule ("policy rule 3
     * (tool 'write_file', args.path under './out') denies it"), or for the
     * default one naming the default. Borrowed from the policy: valid while
     * it lives. */
    const char *reason;
} tg__policy_verdict;

/* Compiles the `policy` member of toolgate.json. `policy` is borrowed (the
 * compiled policy keeps copies of what it needs); NULL or JSON null is the
 * absent policy: default allow, no rules (the caller picks its own defaults
 * before that if it wants others). Unknown keys, wrong types, bad regexes,
 * bad decisions fail with TG_ECONFIG, a message naming the key
 * ("policy.rules[3].args.path.under must be a string") and err->pointer set
 * ("/policy/rules/3/args/path/under"); TG_ENOMEM on allocation failure. On
 * success *out is a new policy the caller frees with tg__policy_free. */
int tg__policy_compile(const json_t *policy, tg__policy **out, tg_error *err);
/* Frees a compiled policy; NULL is a no-op. */
void tg__policy_free(tg__policy *policy);

/* Number of rules; the default decision. */
size_t tg__policy_rule_count(const tg__policy *policy);
tg__policy_decision tg__policy_default(const tg__policy *policy);
/* Whether any rule has argument conditions: when none has, a decision
 * reads no arguments (tg__policy_input.args may be NULL). */
bool tg__policy_reads_args(const tg__policy *policy);

/* Decides one call. Returns 0 with *out filled, or a negative TG_E* code
 * (err filled) when the call cannot be judged: TG_EINVAL for a NULL tool,
 * an `under` path argument holding a NUL byte or a path that cannot be
 * resolved (symlink loop, permission, too long), TG_ELIMIT when a regex hits
 * its match limit, TG_ENOMEM. A caller must treat any error as a deny: a
 * rule that cannot be evaluated is never skipped silently, since skipping a
 * deny rule would let a later allow rule decide.
 *
 * When explain is not NULL the rules are checked one by one, top to bottom,
 * without the index, and a text saying which conditions of which rules held
 * or failed and why the first match decides is appended to it (for
 * `toolgate policy check`); the verdict is the same as without it. The
 * text is best effort: when memory runs out while it is written it may be
 * cut short; the verdict stays exact.
 *
 * Thread-safe: concurrent calls on one policy are allowed (see above). */
int tg__policy_decide(const tg__policy *policy, const tg__policy_input *in,
                      tg__policy_verdict *out, tg__buf *explain, tg_error *err);

/* "allow", "deny" or "ask" (static). */
const char *tg__policy_decision_name(tg__policy_decision d);
/* Whether some call of in->tool by in->caller could be allowed or asked
 * about, whatever its arguments (in->args is not read): the rules are read
 * top to bottom as a decision reads them, and a rule with argument
 * conditions may or may not apply - one that allows or asks makes the tool
 * reachable, one that denies is passed. Returns 1 (reachable), 0 (every
 * call is denied: a server leaves the tool out of the caller's list), or
 * a TG_E* code with err filled. */
int tg__policy_reachable(const tg__policy *policy, const tg__policy_input *in,
                         tg_error *err);

/* Longest path tg__policy_resolve resolves (bytes, with the NUL). */
#define TG__POLICY_PATH_MAX 4096

/* path.c (also used by the exec layer to place toolgate's own files):
 * `path` resolved the way the kernel walks it: relative paths from `base`
 * (absolute and already resolved, ignored for absolute paths); ".", "..",
 * "//" folded; each existing component's symlink followed (realpath of the
 * existing prefix), the missing rest appended lexically. out holds
 * TG__POLICY_PATH_MAX bytes. 0 or TG_EINVAL / TG_ELIMIT. */
int tg__policy_resolve(const char *base, const char *path, char *out,
                       tg_error *err);
/* 1 when resolved path `p` is `root` or beneath it ("/srv/ws2" is not
 * beneath "/srv/ws"). */
bool tg__path_under(const char *p, const char *root);

#endif
