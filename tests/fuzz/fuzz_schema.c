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
 *     {"path","keyword","message"} objects; a valid one yields none.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

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
