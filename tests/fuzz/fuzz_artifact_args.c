/* SPDX-License-Identifier: MIT */
/*
 * fuzz_artifact_args.c - libFuzzer target for the arguments of the artifact
 * tools, executed against a small real spool (a text artifact of 2,000
 * lines with some UTF-8, a binary one, an empty one, one without a final
 * newline, and one released, whose id must answer "evicted").
 *
 * Input: the first byte picks the tool (artifact_read, _head, _tail, _grep,
 * _stat, or an unknown name); the rest is the arguments' JSON text, in
 * which "@0" .. "@4" stand for the fixture's ids (so the fuzzer need not
 * guess SHA-256 prefixes). Each input runs twice: with any id allowed, and
 * with only the text artifact allowed.
 * Invariants:
 *   - success gives a JSON object whose "artifact" is the id asked for, with
 *     at most 64 KiB of text (or base64 of at most 64 KiB of bytes);
 *   - failure gives no payload, one of the documented error codes and a
 *     message; an id that is not stored never succeeds; the released id
 *     fails with ARTIFACT_EVICTED; with the allow-list, only the text
 *     artifact can succeed;
 *   - the tool definitions' JSON Schemas agree with the executor: arguments
 *     the executor accepts are valid against the tool's schema, and
 *     arguments valid against it are never INVALID_ARGUMENTS (but for a byte
 *     range and a line range given together, which the schema allows);
 *   - nothing crashes, leaks, or outlives the match limits.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "spool.h"
#include "tg_test.h"

static const char *const tools[] = {"artifact_read", "artifact_head",
                                    "artifact_tail", "artifact_grep",
                                    "artifact_stat", "artifact_nope"};
static const char *const codes[] = {
    "INVALID_ARGUMENTS",   "UNKNOWN_TOOL",        "ARTIFACT_NOT_ALLOWED",
    "INVALID_ARTIFACT_ID", "ARTIFACT_NOT_FOUND",  "ARTIFACT_EVICTED",
    "INVALID_PATTERN",     "PATTERN_TOO_COMPLEX", "TOOL_FAILED"};

/* The fixture: made once per process, removed at exit. */
static tg_spool *sp;
static char root[64];
static char ids[5][TG_SPOOL_ID_LEN + 1];
static tg_schema *schemas[5]; /* input schemas of tools[0..4] */

static void die(const char *what)
{
    fprintf(stderr, "fuzz_artifact_args: %s\n", what);
    abort();
}

static void cleanup(void)
{
    for (int i = 0; i < 5; i++)
        tg_schema_free(schemas[i]);
    tg__spool_free(sp);
    sp = NULL;
    tg_test_rmtree(root);
}

static void put(int k, const char *data, size_t len)
{
    tg__spool_writer *w = NULL;
    tg__spool_outcome o;
    tg_error err = {0};
    if (tg__spool_writer_new(sp, 0, &w, &err) != 0)
        die(err.message);
    tg__spool_writer_set_force(w, true);
    if (tg__spool_writer_write(w, data, len, &err) != 0 ||
        tg__spool_writer_finish(w, &o, &err) != 0)
        die(err.message);
    snprintf(ids[k], sizeof ids[k], "%s",
             json_string_value(json_object_get(o.artifact, "id")));
    tg__spool_outcome_cleanup(&o);
}

static void fixture(void)
{
    if (sp != NULL)
        return;
    snprintf(root, sizeof root, "/tmp/tg-fuzz-artifact-XXXXXX");
    if (mkdtemp(root) == NULL)
        die("mkdtemp");
    char dir[96];
    snprintf(dir, sizeof dir, "%s/spool", root);
    tg_error err = {0};
    if (tg__spool_open(dir, 0, 0, &sp, &err) != 0)
        die(err.message);
    atexit(cleanup);
    tg__buf b;
    tg__buf_init(&b, 0);
    for (int i = 1; i <= 2000; i++)
        tg__buf_printf(&b, "line %d: alpha beta gamma%s\n", i,
                       i % 100 == 0 ? " \xc3\xbc"
                                      "n\xc3\xaf"
                                      "c\xc3\xb6"
                                      "d\xc3\xa9 \xe2\x82\xac"
                                    : "");
    put(0, b.data, b.len);
    tg__buf_cleanup(&b);
    unsigned char bin[1024];
    for (int i = 0; i < 1024; i++)
        bin[i] = (unsigned char)i;
    put(1, (const char *)bin, sizeof bin);
    put(2, "", 0);
    put(3, "a\nb\nc", 5);
    put(4, "gone\n", 5);
    if (tg__spool_release(sp, ids[4], &err) != 0)
        die(err.message);
    const char *all[5] = {ids[0], ids[1], ids[2], ids[3], ids[4]};
    json_t *defs = tg__spool_tool_defs(all, 5); /* new ref */
    for (int i = 0; i < 5; i++) {
        json_t *d = json_array_get(defs, (size_t)i); /* borrowed */
        if (strcmp(json_string_value(json_object_get(d, "name")), tools[i]))
            die("tool definitions out of order");
        char *text = json_dumps(json_object_get(d, "input_schema"), 0);
        if (text == NULL ||
            tg_schema_compile(text, strlen(text), NULL, &schemas[i], &err))
            die("a tool's input schema does not compile");
        free(text);
    }
    json_decref(defs);
}

/* The arguments with "@0".."@4" replaced by the fixture's ids. */
static char *expand(const char *s, size_t n, size_t *out_len)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '@' && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '4') {
            tg__buf_puts(&b, ids[s[i + 1] - '0']);
            i++;
        } else {
            tg__buf_append(&b, s + i, 1);
        }
    }
    *out_len = b.len;
    return tg__buf_take(&b);
}

static bool known_code(const char *code)
{
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (code && strcmp(code, codes[i]) == 0)
            return true;
    return false;
}

static void run(const char *tool, const char *args, size_t len,
                const char *const *allowed, size_t n)
{
    char *payload = NULL;
    const char *code = NULL;
    tg_error err = {0};
    int rc = tg__spool_tool_exec(sp, tool, args, len, allowed, n, &payload,
                                 &code, &err);
    json_error_t jerr;
    json_t *a = json_loadb(args, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
                           &jerr); /* new ref */
    const char *asked = json_string_value(json_object_get(a, "artifact"));
    int which = -1;
    for (int k = 0; asked && k < 5; k++)
        if (strcmp(asked, ids[k]) == 0 &&
            strlen(asked) == json_string_length(json_object_get(a, "artifact")))
            which = k;
    if (rc == 0) {
        json_t *p = json_loads(payload, 0, &jerr); /* new ref */
        if (!json_is_object(p)) {
            fprintf(stderr, "%s %.*s -> %s\n", tool, (int)len, args, payload);
            die("success without a JSON object");
        }
        if (which < 0 || which == 4)
            die("success for an id that is not stored");
        if (allowed != NULL && which != 0)
            die("success for an id not allowed");
        if (strcmp(json_string_value(json_object_get(p, "artifact")),
                   ids[which]) != 0)
            die("answer names another artifact");
        const json_t *text = json_object_get(p, "text");  /* borrowed */
        const json_t *b64 = json_object_get(p, "base64"); /* borrowed */
        if (json_string_length(text) > 3 * 64 * 1024 ||
            json_string_length(b64) > (64 * 1024 + 2) / 3 * 4)
            die("answer over the cap");
        json_decref(p);
        free(payload);
    } else {
        if (payload != NULL)
            die("failure with a payload");
        if (!known_code(code) || err.message[0] == '\0')
            die("failure without a documented code and a message");
        if (which == 4 && strcmp(code, "ARTIFACT_EVICTED") != 0 &&
            strcmp(code, "INVALID_ARGUMENTS") != 0 &&
            strcmp(code, "ARTIFACT_NOT_ALLOWED") != 0 &&
            strcmp(code, "UNKNOWN_TOOL") != 0)
            die("a released id does not answer ARTIFACT_EVICTED");
    }
    /* the schema and the executor agree (with every id allowed) */
    int t = -1;
    for (int k = 0; k < 5; k++)
        if (strcmp(tool, tools[k]) == 0)
            t = k;
    if (t >= 0 && allowed == NULL) {
        int valid = tg_schema_validate(schemas[t], args, len, NULL, &err);
        if (rc == 0 && valid == 0)
            die("the executor accepts arguments its schema refuses");
        bool both = json_object_get(a, "line") || json_object_get(a, "lines");
        both = both &&
               (json_object_get(a, "offset") || json_object_get(a, "length"));
        if (valid == 1 && rc != 0 && strcmp(code, "INVALID_ARGUMENTS") == 0 &&
            !both) {
            fprintf(stderr, "%s %.*s: %s\n", tool, (int)len, args, err.message);
            die("the schema accepts arguments the executor refuses");
        }
    }
    json_decref(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    fixture();
    const char *tool = tools[data[0] % 6];
    size_t len = 0;
    char *args = expand((const char *)data + 1, size - 1, &len);
    if (args == NULL)
        return 0;
    run(tool, args, len, NULL, 0);
    const char *allowed[] = {ids[0]};
    run(tool, args, len, allowed, 1);
    free(args);
    return 0;
}
