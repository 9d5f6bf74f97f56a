/* SPDX-License-Identifier: MIT */
/*
 * bench_schema.c - JSON Schema validations per second on realistic tool
 * schemas (bench/schemas/: the MCP filesystem server's tools, a 7-field
 * grep tool, a nested order with arrays and $refs), from JSON text to
 * verdict, against Ajv (peer_schema.mjs: schema compiled once, JSON.parse +
 * validate per instance) in the same run. Goal: >= 1.5x Ajv.
 * Usage: bench_schema [N] [PEER_DIR]
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "toolgate.h"

#define ROUNDS 5

static const char *const cases[] = {"fs_read_text_file", "fs_search_files",
                                    "fs_edit_file", "grep_7_fields",
                                    "nested_refs"};
#define NCASES (sizeof cases / sizeof cases[0])

/* Median ns per validation of `text` against `schema`, or -1. */
static double measure(const tg_schema *schema, const char *text, long n)
{
    double samples[ROUNDS];
    size_t len = strlen(text);
    for (int r = -1; r < ROUNDS; r++) {
        long valid = 0;
        double t0 = bench_now();
        for (long i = 0; i < n; i++)
            valid += tg_schema_validate(schema, text, len, NULL, NULL) == 1;
        double dt = bench_now() - t0;
        if (valid != n)
            return -1;
        if (r >= 0)
            samples[r] = dt * 1e9 / (double)n;
    }
    return bench_median(samples, ROUNDS);
}

#define ALTERNATIONS 3

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
    const char *dir = argc > 2 ? argv[2] : "bench";
    tg_schema *schemas[NCASES] = {NULL};
    char *instances[NCASES] = {NULL};
    double ours[NCASES][ALTERNATIONS], peer[NCASES][ALTERNATIONS];
    char cmd[4096];
    size_t cl = (size_t)snprintf(cmd, sizeof cmd, "node %s/peer_schema.mjs %ld",
                                 dir, n);
    int failed = 0;
    for (size_t i = 0; i < NCASES; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/schemas/%s.json", dir, cases[i]);
        cl += (size_t)snprintf(cmd + cl, sizeof cmd - cl, " %s", path);
        json_error_t jerr;
        json_t *doc = json_load_file(path, 0, &jerr); /* new ref */
        char *schema_text =
            json_dumps(json_object_get(doc, "schema"), JSON_COMPACT);
        instances[i] =
            json_dumps(json_object_get(doc, "instance"), JSON_COMPACT);
        tg_error err = {0};
        if (schema_text == NULL || instances[i] == NULL ||
            tg_schema_compile(schema_text, strlen(schema_text), NULL,
                              &schemas[i], &err) != 0) {
            fprintf(stderr, "%s: %s\n", path, doc ? err.message : jerr.text);
            failed = 1;
        }
        free(schema_text);
        json_decref(doc);
    }
    /* Ajv and toolgate take turns, so a busy spell of the machine weighs
     * on both; each case's ratio is the median of the turns' ratios. */
    for (int a = 0; !failed && a < ALTERNATIONS; a++) {
        FILE *p = popen(cmd, "r");
        char line[1024];
        for (size_t i = 0; i < NCASES; i++) {
            peer[i][a] = -1;
            if (p && fgets(line, sizeof line, p)) {
                const char *at = strstr(line, "\"ns_per_validation\":");
                peer[i][a] = at ? strtod(at + 20, NULL) : -1;
            }
        }
        if (p == NULL || pclose(p) != 0)
            failed = 1;
        for (size_t i = 0; i < NCASES; i++) {
            ours[i][a] = measure(schemas[i], instances[i], n);
            if (ours[i][a] < 0 || peer[i][a] <= 0) {
                fprintf(stderr, "%s: no measurement\n", cases[i]);
                failed = 1;
            }
        }
    }
    printf("bench_schema: %ld validations per case, JSON text to verdict, "
           "median of %d rounds, %d alternations with Ajv\n",
           n, ROUNDS, ALTERNATIONS);
    printf("  %-20s %12s %12s %8s  %s\n", "schema", "toolgate ns", "ajv ns",
           "ratio", "per alternation");
    double lo = 1e9;
    for (size_t i = 0; !failed && i < NCASES; i++) {
        double ratio[ALTERNATIONS];
        char per[128];
        size_t pl = 0;
        for (int a = 0; a < ALTERNATIONS; a++) {
            ratio[a] = peer[i][a] / ours[i][a];
            pl += (size_t)snprintf(per + pl, sizeof per - pl, "%s%.2fx",
                                   a ? " " : "", ratio[a]);
        }
        double r = bench_median(ratio, ALTERNATIONS);
        if (r < lo)
            lo = r;
        printf("  %-20s %12.0f %12.0f %7.2fx  %s (goal >= 1.5)\n", cases[i],
               bench_median(ours[i], ALTERNATIONS),
               bench_median(peer[i], ALTERNATIONS), r, per);
    }
    if (!failed)
        printf("  lowest ratio %.2fx\n", lo);
    for (size_t i = 0; i < NCASES; i++) {
        tg_schema_free(schemas[i]);
        free(instances[i]);
    }
    return failed;
}
