/* SPDX-License-Identifier: MIT */
/*
 * test_suite.c - the official JSON Schema Test Suite against the validator:
 * every test of tests/{draft2020-12,draft2019-09,draft7}/ (every .json file,
 * the required ones; optional/ is reported, not required), with refRemote's
 * http://localhost:1234/ mapped to the suite's remotes/. The metaschemas
 * (and the 2019-09/2020-12 vocabulary metaschemas) that tests $ref or name
 * in a custom metaschema are the validator's built-in ones: no document is
 * given besides the remotes, so the suite checks those too.
 *
 * Each test runs through both entry points and all must agree with the
 * expected verdict: the tape one over the test file's own text (numbers as
 * written), with and without a report (a report has violations exactly
 * when the instance is invalid), and the jansson one over the loaded value.
 *
 * Environment: TG_TEST_DATA_DIR (set by ctest) locates the suite under
 * json-schema-test-suite/ (tg_test_data_path; without it the test reports
 * itself skipped, and fails under CI=true).
 * Prints, per draft, "draft2020-12: P/T required tests pass" and, with
 * formats asserted, "format (asserted): P/T".
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "schema.h"
#include "tg_test.h"

typedef struct env {
    char suite[1024];
    tg_schema_remote remote;
    char remotes_dir[1100];
} env;

typedef struct tally {
    int pass, total, failed;
} tally;

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf != NULL) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

static int setup_env(void **state)
{
    env *e = calloc(1, sizeof *e);
    assert_non_null(e);
    tg_test_data_path(e->suite, sizeof e->suite, "json-schema-test-suite");
    snprintf(e->remotes_dir, sizeof e->remotes_dir, "%s/remotes", e->suite);
    e->remote.prefix = "http://localhost:1234/";
    e->remote.dir = e->remotes_dir;
    *state = e;
    return 0;
}

static int teardown_env(void **state)
{
    env *e = *state;
    free(e);
    return 0;
}

/* The value token of member `key` of the object at tape index i, or 0. */
static size_t member(const tg__jtape *t, size_t i, const char *key)
{
    size_t n = strlen(key);
    for (size_t k = i + 1; k < t->tok[i].a; k = tg__jskip(t, k + 1))
        if (t->tok[k].b == n && memcmp(t->text + t->tok[k].a, key, n) == 0)
            return k + 1;
    return 0;
}

/* The index of element `idx` of the array at i. */
static size_t element(const tg__jtape *t, size_t i, size_t idx)
{
    size_t k = i + 1;
    while (idx-- > 0)
        k = tg__jskip(t, k);
    return k;
}

/* Runs one test through every entry point; returns 1 when all agree with
 * the expected verdict. */
static int check_one(const tg_schema *s, const json_t *data,
                     const tg__jtape *ft, size_t ftok, int expect, char *why,
                     size_t cap)
{
    tg_error err;
    memset(&err, 0, sizeof err);
    tg__jtape own;
    memset(&own, 0, sizeof own);
    const tg__jtape *tape = ft;
    size_t at = ftok;
    if (ft == NULL) {
        tg__buf b;
        tg__buf_init(&b, 0);
        int rc = tg__schema_json_text(data, &b);
        if (rc == 0)
            rc = tg__jtape_parse(
                b.data, b.len, TG_JTAPE_COPY | TG_JTAPE_ALLOW_NUL, &own, NULL);
        tg__buf_cleanup(&b);
        if (rc != 0) {
            snprintf(why, cap, "instance not representable (%d)", rc);
            return 0;
        }
        tape = &own;
        at = 0;
    }
    int quiet = tg__schema_validate_tape(s, tape, at, NULL, &err);
    tg__schema_report rep;
    memset(&rep, 0, sizeof rep);
    int loud = tg__schema_validate_tape(s, tape, at, &rep, &err);
    tg__schema_report rep2;
    memset(&rep2, 0, sizeof rep2);
    int viaj = tg__schema_validate_json(s, data, &rep2, &err);
    /* Memoized from the first step on, as a costly validation is after its
     * first few thousand steps: the same verdict and violations. */
    tg__schema_budget memo;
    tg__schema_budget_init(&memo, 0, NULL);
    memo.memo = TG_SCHEMA_MEMO_ALWAYS;
    tg__schema_report rep3;
    memset(&rep3, 0, sizeof rep3);
    int memo_q = tg__schema_validate_tape_in(s, tape, at, NULL, &memo, &err);
    int memo_r = tg__schema_validate_tape_in(s, tape, at, &rep3, &memo, &err);
    int ok = quiet == expect && loud == expect && viaj == expect &&
             memo_q == expect && memo_r == expect &&
             (expect ? rep.n == 0 : rep.n > 0) && rep.n == rep2.n &&
             rep3.n == rep.n;
    if (!ok) {
        char *msg = tg__schema_report_message(&rep);
        snprintf(why, cap,
                 "expected %s; tape %d, tape+report %d (%zu violations), "
                 "jansson %d (%zu), memoized %d/%d (%zu)%s%s%s%s",
                 expect ? "valid" : "invalid", quiet, loud, rep.n, viaj, rep2.n,
                 memo_q, memo_r, rep3.n, msg ? ": " : "", msg ? msg : "",
                 err.code ? " / error: " : "", err.code ? err.message : "");
        free(msg);
    }
    tg__schema_report_cleanup(&rep);
    tg__schema_report_cleanup(&rep2);
    tg__schema_report_cleanup(&rep3);
    tg__jtape_free(&own);
    return ok;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_file(const env *e, const char *dir, const char *file,
                     tg_schema_draft draft, int format_assert, tally *t,
                     int verbose)
{
    char path[2400];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    size_t len = 0;
    char *text = read_file(path, &len);
    assert_non_null(text);
    json_error_t jerr;
    json_t *groups = json_loadb(text, len, JSON_ALLOW_NUL, &jerr); /* new ref */
    if (groups == NULL) {
        /* optional/bignum.json holds integers past int64, which jansson
         * (and so the pipeline) refuses to read at all. */
        printf("  note: %s/%s cannot be read by jansson (%s); its tests are "
               "not counted\n",
               dir, file, jerr.text);
        free(text);
        assert_true(strstr(dir, "optional") != NULL);
        return;
    }
    /* The file's own text as a tape: instances exactly as written (U+0000
     * included, as the schema layer reads instances). */
    tg__jtape ft;
    int have_tape =
        tg__jtape_parse(text, len, TG_JTAPE_ALLOW_NUL, &ft, NULL) == 0;
    tg_schema_options opt;
    memset(&opt, 0, sizeof opt);
    opt.draft = draft;
    opt.format_assert = format_assert;
    opt.remotes = &e->remote;
    opt.nremotes = 1;
    size_t gi;
    json_t *g; /* borrowed */
    json_array_foreach(groups, gi, g)
    {
        const char *gdesc =
            json_string_value(json_object_get(g, "description"));
        json_t *tests = json_object_get(g, "tests"); /* borrowed */
        tg_schema *s = NULL;
        tg_error err;
        memset(&err, 0, sizeof err);
        int crc =
            tg__schema_compile(json_object_get(g, "schema"), &opt, &s, &err);
        size_t ti;
        json_t *tc; /* borrowed */
        json_array_foreach(tests, ti, tc)
        {
            const char *tdesc =
                json_string_value(json_object_get(tc, "description"));
            int expect = json_is_true(json_object_get(tc, "valid"));
            t->total++;
            char msg[1024] = "";
            int ok = 0;
            if (crc != 0) {
                snprintf(msg, sizeof msg, "compile failed: %s", err.message);
            } else {
                size_t tok = 0;
                if (have_tape) {
                    size_t gt = element(&ft, 0, gi);
                    size_t tt = element(&ft, member(&ft, gt, "tests"), ti);
                    tok = member(&ft, tt, "data");
                }
                ok = check_one(s, json_object_get(tc, "data"),
                               have_tape ? &ft : NULL, tok, expect, msg,
                               sizeof msg);
            }
            if (ok) {
                t->pass++;
            } else {
                t->failed++;
                if (verbose)
                    printf("  FAIL %s | %s | %s: %s\n", file, gdesc, tdesc,
                           msg);
            }
        }
        tg_schema_free(s);
    }
    if (have_tape)
        tg__jtape_free(&ft);
    json_decref(groups);
    free(text);
}

static void run_dir(const env *e, const char *dir, tg_schema_draft draft,
                    int format_assert, tally *t, int verbose)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        fail_msg("cannot open %s", dir);
    char *names[256];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < 256) {
        size_t l = strlen(de->d_name);
        if (l > 5 && strcmp(de->d_name + l - 5, ".json") == 0)
            names[n++] = strdup(de->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof names[0], cmp_str);
    for (size_t k = 0; k < n; k++) {
        run_file(e, dir, names[k], draft, format_assert, t, verbose);
        free(names[k]);
    }
}

static const char *const draft_dirs[] = {"draft2020-12", "draft2019-09",
                                         "draft7"};

static void required(void **state, tg_schema_draft draft)
{
    env *e = *state;
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/tests/%s", e->suite, draft_dirs[draft]);
    tally t = {0, 0, 0};
    run_dir(e, dir, draft, 0, &t, 1);
    printf("%s: %d/%d required tests pass\n", draft_dirs[draft], t.pass,
           t.total);
    /* Optional tests and asserted formats: reported, not required. */
    tally o = {0, 0, 0}, f = {0, 0, 0};
    snprintf(dir, sizeof dir, "%s/tests/%s/optional", e->suite,
             draft_dirs[draft]);
    run_dir(e, dir, draft, 0, &o, getenv("TG_SUITE_VERBOSE") != NULL);
    snprintf(dir, sizeof dir, "%s/tests/%s/optional/format", e->suite,
             draft_dirs[draft]);
    run_dir(e, dir, draft, 1, &f, getenv("TG_SUITE_VERBOSE") != NULL);
    printf("%s: optional (not format): %d/%d\n", draft_dirs[draft], o.pass,
           o.total);
    printf("%s: format (asserted): %d/%d\n", draft_dirs[draft], f.pass,
           f.total);
    fflush(stdout);
    assert_int_equal(t.failed, 0);
}

static void test_draft2020_12(void **state)
{
    required(state, TG_SCHEMA_DRAFT_2020_12);
}

static void test_draft2019_09(void **state)
{
    required(state, TG_SCHEMA_DRAFT_2019_09);
}

static void test_draft7(void **state)
{
    required(state, TG_SCHEMA_DRAFT_7);
}

int main(void)
{
    char suite[1024];
    tg_test_data_path(suite, sizeof suite, "json-schema-test-suite/tests");
    if (!tg_test_have_data(suite, "the JSON Schema Test Suite"))
        return tg_test_exit(0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_draft2020_12),
        cmocka_unit_test(test_draft2019_09),
        cmocka_unit_test(test_draft7),
    };
    return tg_test_exit(cmocka_run_group_tests(tests, setup_env, teardown_env));
}
