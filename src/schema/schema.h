/* SPDX-License-Identifier: MIT */
/*
 * schema.h - JSON Schema: compile a schema once (at tool registration),
 * validate many instances against it. Drafts 2020-12 (default), 2019-09
 * and 7, chosen by `$schema`. The public face is tg_schema_compile /
 * tg_schema_validate in toolgate.h; the pipeline uses the entry points
 * here, which validate a call's arguments straight from their token tape
 * (src/core/jtape.h) without building a jansson value.
 *
 * A violation names where in the instance (a JSON pointer), which keyword
 * failed and a sentence a model can act on ("/text must be a string, got
 * 42"). Validation never hangs and its cost is bounded: a subschema's
 * verdict at an instance location is computed once per call (memo.c), so
 * the work grows polynomially with schema and instance whatever their
 * shape; every call spends from a budget of steps (keyword evaluations)
 * and can be stopped from another thread; regular expressions run under
 * PCRE2 match, depth and heap limits; recursion is bounded, cyclic $refs
 * terminate. Hitting a limit is TG_ELIMIT, not a verdict.
 */
#ifndef TG_SCHEMA_SCHEMA_H
#define TG_SCHEMA_SCHEMA_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "jtape.h"
#include "toolgate.h"

/* Compiles `doc` (borrowed; the compiled schema keeps what it needs).
 * options may be NULL (the defaults of toolgate.h). Errors as
 * tg_schema_compile: TG_ESCHEMA with err->pointer at the bad keyword,
 * TG_ENOTFOUND for an unresolvable $ref, TG_ENOMEM. */
int tg__schema_compile(const json_t *doc, const tg_schema_options *options,
                       tg_schema **out, tg_error *err);

/* Like tg__schema_compile, with more documents that `$ref` and `$schema`
 * may name: `documents` (borrowed, may be NULL; it must outlive the call
 * only) maps absolute URLs to schemas, a bundle such as the metaschemas
 * and their vocabularies. It is searched before options->remotes. */
int tg__schema_compile_docs(const json_t *doc, const tg_schema_options *options,
                            const json_t *documents, tg_schema **out,
                            tg_error *err);

/* One violation; strings owned by the report. */
typedef struct tg__schema_violation {
    char *path;    /* JSON pointer into the instance; "" is the instance */
    char *keyword; /* the failing keyword: "type", "required", ... */
    char *message; /* one sentence, starting with the path when not "" */
} tg__schema_violation;

/* Violations collected by a validation. Zero-initialise; `max` caps how
 * many are kept (0: 100); `truncated` is set when more were found. */
typedef struct tg__schema_report {
    tg__schema_violation *v;
    size_t n, cap, max;
    int truncated;
} tg__schema_report;

void tg__schema_report_cleanup(tg__schema_report *report);
/* The violations' messages joined with "; " (caller frees with free()),
 * NULL on out of memory or when there are none. */
char *tg__schema_report_message(const tg__schema_report *report);
/* [{"path","keyword","message"}, ...]: new reference, NULL on out of
 * memory. */
json_t *tg__schema_report_details(const tg__schema_report *report);

/* What validations may spend: `steps` keyword evaluations (each subschema
 * entered, each keyword run, a memoized verdict reused, and long strings
 * matched or measured by the 64 bytes). Validations given the same budget
 * spend from it in turn (the verdict and then the report of one call).
 * When it runs out the validation ends with TG_ELIMIT and `exhausted` is
 * set. When `stop` is not NULL it is read every few thousand steps: once
 * it holds a non-zero value the validation ends with TG_ECANCELED (so a
 * thread running a long validation answers a cancel at once). `memo` says
 * when verdicts start to be remembered (memo.c): TG_SCHEMA_MEMO_LAZY once
 * the validation has taken a few thousand steps (real arguments take
 * fewer, and so never pay for it; a costly shape is polynomial from then
 * on), _ALWAYS from the start, _OFF never (tests compare the three). */
enum { TG_SCHEMA_MEMO_LAZY = 0, TG_SCHEMA_MEMO_ALWAYS, TG_SCHEMA_MEMO_OFF };
typedef struct tg__schema_budget {
    uint64_t steps;
    uint64_t limit; /* the steps it was made with, for messages */
    int exhausted;
    const atomic_int *stop;
    int memo; /* TG_SCHEMA_MEMO_* */
} tg__schema_budget;

/* Far above what a real tool schema costs over arguments of the default
 * size limit (1 MiB; see README.md, limits.max_validation_steps), and
 * about 0.1 s of a core (8-10 ns a step). */
#define TG_SCHEMA_DEFAULT_STEPS UINT64_C(10000000)

/* A budget of `steps` (0: TG_SCHEMA_DEFAULT_STEPS), stopped by *stop when
 * that is not NULL (borrowed: it must outlive the validations). */
void tg__schema_budget_init(tg__schema_budget *budget, uint64_t steps,
                            const atomic_int *stop);

/* Validates the value at tape->tok[index] (the whole document: 0). report
 * may be NULL when only the verdict is wanted (the fast path: nothing is
 * allocated then for plain schemas). budget may be NULL (a fresh default
 * budget). Returns 1 valid, 0 invalid (the violations appended to report),
 * TG_ELIMIT (err says which limit: budget->exhausted tells the step budget
 * from the others), TG_ECANCELED (budget->stop) or TG_ENOMEM. Thread-safe:
 * concurrent validations may share the compiled schema, not a budget. */
int tg__schema_validate_tape_in(const tg_schema *schema, const tg__jtape *tape,
                                size_t index, tg__schema_report *report,
                                tg__schema_budget *budget, tg_error *err);
/* tg__schema_validate_tape_in with a fresh default budget. */
int tg__schema_validate_tape(const tg_schema *schema, const tg__jtape *tape,
                             size_t index, tg__schema_report *report,
                             tg_error *err);
/* The same for a jansson value (borrowed). */
int tg__schema_validate_json_in(const tg_schema *schema, const json_t *instance,
                                tg__schema_report *report,
                                tg__schema_budget *budget, tg_error *err);
int tg__schema_validate_json(const tg_schema *schema, const json_t *instance,
                             tg__schema_report *report, tg_error *err);

/* Whether the compiled schema, at its root, requires a type the instance
 * may be coerced to: for argument repair (limits.repair), the JSON type
 * names the schema at `pointer` (a JSON pointer into the instance, resolved
 * through properties/items, not through applicators) allows as a bit set
 * of TG_SCHEMA_T_*; 0 when unknown or unconstrained. */
#define TG_SCHEMA_T_NULL 1u
#define TG_SCHEMA_T_BOOLEAN 2u
#define TG_SCHEMA_T_OBJECT 4u
#define TG_SCHEMA_T_ARRAY 8u
#define TG_SCHEMA_T_NUMBER 16u
#define TG_SCHEMA_T_STRING 32u
#define TG_SCHEMA_T_INTEGER 64u
unsigned tg__schema_types_at(const tg_schema *schema, const char *pointer);

#endif
