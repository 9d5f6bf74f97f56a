/* SPDX-License-Identifier: MIT */
/*
 * context_env.h - which variables a call's context.env may set. The caller
 * of a call is untrusted: a variable that the dynamic loader, a shell, an
 * interpreter or a tool reads at start-up would let it run code of its
 * choosing inside the tool (LD_PRELOAD, BASH_ENV, PATH, PYTHONPATH,
 * NODE_OPTIONS, GIT_CONFIG_*, ...). One table in context_env.c names them;
 * a command tool's "context_env" {"allow": [...], "deny": [...]} widens or
 * narrows it. The tool's own "env" (trusted configuration) is not judged.
 */
#ifndef TG_REGISTRY_CONTEXT_ENV_H
#define TG_REGISTRY_CONTEXT_ENV_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/* Judges every member of ctx_env (an object name -> value, borrowed; NULL or
 * not an object: nothing to judge) for a tool whose "context_env" lists
 * `allow` and `deny` (arrays of patterns, borrowed, may be NULL). Returns 0
 * when all may be set; 1 when some may not, with `why` holding the reason
 * for a `denied` result (the variables, what each one does, how a tool can
 * allow one); TG_ENOMEM. Non-string values are not judged (they are never
 * set). A name is refused when it matches `deny`, or the table and not
 * `allow`; a name that is not a plain variable name, a value holding a NUL
 * byte and a value that is a shell function definition are refused
 * whatever the tool says. */
int tg__context_env_check(const json_t *ctx_env, const json_t *allow,
                          const json_t *deny, tg__buf *why);

/* Whether `pattern` may appear in "context_env": letters, digits, '_' and
 * '*' (any run of characters), at least one character. */
bool tg__env_pattern_valid(const char *pattern);

/* Whether name matches pattern, '*' matching any run and letters compared
 * without regard to case (programs read http_proxy and HTTP_PROXY,
 * npm_config_x and NPM_CONFIG_X alike). */
bool tg__env_pattern_match(const char *pattern, const char *name);

/* The i-th pattern of the table of refused variables, NULL past its end
 * (for the tests that check the README lists every one). Static. */
const char *tg__context_env_refused_at(size_t i);

#endif
