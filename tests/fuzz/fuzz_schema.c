/* SPDX-License-Identifier: MIT */
/*
 * fuzz_schema.c - libFuzzer target for the JSON Schema compiler and
 * validator over (schema, instance) pairs. Input: the schema on the first
 * line, the instance on the rest. Each schema is compiled as 2020-12 with
 * formats as annotations and as draft 7 with formats asserted.
 * Invariants:
 *   - compile either succeeds or fails with TG_EPARSE, TG_ESCHEMA,
 *     TG_ENOTFOUND (never a crash, a hang or a leak), and a TG_ESCHEMA
 *     error names a JSON pointer;
 *   - validation ends with 1, 0, TG_EPARSE or TG_ELIMIT, the same with and
 *     without collecting violations;
 *   - an invalid instance yields at least one violation, as JSON Lines of
 *     {"path","keyword","message"} objects; a valid one yields none;
 *   - memoization changes nothing but the cost: the verdict with verdicts
 *     remembered from the first step, and with a report, is the one
 *     without memoization (when that one ends within its budget), and a
 *     memoized report lists no more violations than the plain one;
 *   - a small step budget ends in TG_ELIMIT with `exhausted` set, or in
 *     the verdict the default budget gives; a stop flag already set ends
 *     the validation with TG_ECANCELED within its first chunk of steps.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jtape.h"
#include "schema.h"
#include "toolgate.h"

static void die(const char *what)
{
    fprintf(stderr, "fuzz_schema: %s\n", what);
    abort();
}

static void check_lines(const char *lines)
{
    const char *p = lines;
    int n = 0;
    while (*p) {
        const char *nl = strchr(p, '\n');
        if (nl == NULL)
            die("violations do not end with a newline");
        json_error_t jerr;
        json_t *o = json_loadb(p, (size_t)(nl - p), 0, &jerr); /* new ref */
        if (!json_is_object(o) || !json_is_string(json_object_get(o, "path")) ||
            !json_is_string(json_object_get(o, "keyword")) ||
            !json_is_string(json_object_get(o, "message")))
            die("a violation line is not {path, keyword, message}");
        json_decref(o);
        n++;
        p = nl + 1;
    }
    if (n == 0)
        die("an invalid instance without violations");
}

/* One validation of the tape with memoization `memo` and `steps` steps;
 * *nviol the violations when `report`. */
static int run(const tg_schema *s, const tg__jtape *t, int memo, uint64_t steps,
               int report, const atomic_int *stop, tg__schema_budget *b,
               size_t *nviol)
{
    tg__schema_budget_init(b, steps, stop);
    b->memo = memo;
    tg__schema_report rep;
    memset(&rep, 0, sizeof rep);
    tg_error err;
    memset(&err, 0, sizeof err);
    int rc =
        tg__schema_validate_tape_in(s, t, 0, report ? &rep : NULL, b, &err);
    if ((rc == TG_ELIMIT) != (b->exhausted || err.code == TG_ELIMIT))
        die("TG_ELIMIT without its error");
    if (b->exhausted && rc != TG_ELIMIT)
        die("an exhausted budget that did not end in TG_ELIMIT");
    *nviol = rep.n;
    tg__schema_report_cleanup(&rep);
    return rc;
}

/* The cost invariants over the instance (verdict `want` from the public
 * entry point). */
static void costs(const tg_schema *s, const char *inst, size_t ilen, int want)
{
    tg__jtape t;
    if (tg__jtape_parse(inst, ilen, TG_JTAPE_ALLOW_NUL, &t, NULL) != 0)
        return;
    tg__schema_budget b;
    size_t n_memo = 0, n_plain = 0, n = 0;
    int memo = run(s, &t, TG_SCHEMA_MEMO_ALWAYS, 0, 0, NULL, &b, &n);
    int memo_r = run(s, &t, TG_SCHEMA_MEMO_ALWAYS, 0, 1, NULL, &b, &n_memo);
    int plain = run(s, &t, TG_SCHEMA_MEMO_OFF, 200000, 0, NULL, &b, &n);
    int plain_r = run(s, &t, TG_SCHEMA_MEMO_OFF, 200000, 1, NULL, &b, &n_plain);
    if (want >= 0 && (memo != want || memo_r != want))
        die("the memoized verdict differs");
    if (plain >= 0 && plain != want)
        die("the plain verdict differs");
    if (plain_r >= 0 && memo_r >= 0 && n_memo > n_plain)
        die("a memoized report lists more violations");
    int small = run(s, &t, TG_SCHEMA_MEMO_LAZY, 1000, 0, NULL, &b, &n);
    if (small != TG_ELIMIT && small != want)
        die("a small budget changed the verdict");
    atomic_int stop;
    atomic_init(&stop, 1);
    int stopped = run(s, &t, TG_SCHEMA_MEMO_LAZY, 0, 1, &stop, &b, &n);
    if (stopped != TG_ECANCELED && stopped != want && stopped != TG_ELIMIT)
        die("a stopped validation gave something else");
    if (stopped == TG_ECANCELED && b.limit - b.steps > 4096 + 4096)
        die("a stopped validation went on past its first chunk");
    tg__jtape_free(&t);
}

static void one(const char *schema, size_t slen, const char *inst, size_t ilen,
                const tg_schema_options *opt)
{
    tg_schema *s = NULL;
    tg_error err;
    memset(&err, 0, sizeof err);
    int rc = tg_schema_compile(schema, slen, opt, &s, &err);
    if (rc != 0) {
        if (rc != TG_EPARSE && rc != TG_ESCHEMA && rc != TG_ENOTFOUND &&
            rc != TG_ENOMEM)
            die("unexpected compile error");
        if (s != NULL)
            die("a failed compile returned a schema");
        if (rc == TG_ESCHEMA && err.pointer[0] != '\0' && err.pointer[0] != '/')
            die("TG_ESCHEMA without a JSON pointer");
        return;
    }
    int quiet = tg_schema_validate(s, inst, ilen, NULL, &err);
    char *lines = NULL;
    int loud = tg_schema_validate(s, inst, ilen, &lines, &err);
    if (quiet != loud)
        die("verdict differs with and without violations");
    if (loud < 0 && loud != TG_EPARSE && loud != TG_ELIMIT && loud != TG_ENOMEM)
        die("unexpected validation error");
    if (loud == 0) {
        if (lines == NULL)
            die("invalid without violations");
        check_lines(lines);
    } else if (lines != NULL) {
        die("violations for a valid instance");
    }
    if (loud == 0 || loud == 1)
        costs(s, inst, ilen, loud);
    tg_free(lines);
    tg_schema_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nl = memchr(text, '\n', size);
    size_t slen = nl ? (size_t)(nl - text) : size;
    const char *inst = nl ? nl + 1 : "";
    size_t ilen = nl ? size - slen - 1 : 0;
    tg_schema_options opt;
    memset(&opt, 0, sizeof opt);
    one(text, slen, inst, ilen, &opt);
    opt.draft = TG_SCHEMA_DRAFT_7;
    opt.format_assert = 1;
    one(text, slen, inst, ilen, &opt);
    return 0;
}
