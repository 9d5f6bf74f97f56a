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

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
    const char *dir = argc > 2 ? argv[2] : "bench";
    double ours[NCASES], peer[NCASES];
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
        char *instance =
            json_dumps(json_object_get(doc, "instance"), JSON_COMPACT);
        tg_schema *schema = NULL;
        tg_error err = {0};
        ours[i] = -1;
        if (schema_text == NULL || instance == NULL ||
            tg_schema_compile(schema_text, strlen(schema_text), NULL, &schema,
                              &err) != 0)
            fprintf(stderr, "%s: %s\n", path, doc ? err.message : jerr.text);
        else if ((ours[i] = measure(schema, instance, n)) < 0)
            fprintf(stderr, "%s: the instance does not validate\n", path);
        failed |= ours[i] < 0;
        tg_schema_free(schema);
        free(schema_text);
        free(instance);
        json_decref(doc);
    }
    FILE *p = popen(cmd, "r");
    char line[1024];
    for (size_t i = 0; i < NCASES; i++) {
        peer[i] = -1;
        if (p && fgets(line, sizeof line, p)) {
            const char *at = strstr(line, "\"ns_per_validation\":");
            peer[i] = at ? strtod(at + 20, NULL) : -1;
        }
    }
    if (p)
        pclose(p);
    printf("bench_schema: %ld validations per case, JSON text to verdict, "
           "median of %d rounds\n",
           n, ROUNDS);
    printf("  %-20s %14s %14s %8s\n", "schema", "toolgate ns", "ajv ns",
           "ratio");
    double lo = 1e9;
    for (size_t i = 0; i < NCASES; i++) {
        double ratio = peer[i] > 0 && ours[i] > 0 ? peer[i] / ours[i] : -1;
        if (ratio < lo)
            lo = ratio;
        printf("  %-20s %14.0f %14.0f %7.2fx (goal >= 1.5)\n", cases[i],
               ours[i], peer[i], ratio);
    }
    printf("  lowest ratio %.2fx\n", lo);
    return failed;
}
