/* SPDX-License-Identifier: MIT */
/*
 * fuzz_args.c - libFuzzer target for the arguments string of a call: the
 * JSON tape parser (jtape.c) against jansson, the canonical form written
 * from the tape against the one written from jansson's value, and the call
 * record built on them (tg__call_set_args_text, its checksum, its JSON).
 * Invariants:
 *   - the tape accepts exactly what json_loadb(JSON_DECODE_ANY |
 *     JSON_REJECT_DUPLICATES) accepts; when both refuse, the error text,
 *     line and column are jansson's;
 *   - the jansson value built from the tape equals jansson's (same types,
 *     same member order), and JCS of the tape is byte for byte JCS of
 *     jansson's value;
 *   - arguments that decode are an object whose text decodes to an equal
 *     object with the same checksum; arguments that do not decode leave a
 *     MALFORMED_ARGUMENTS pre-error and no checksum;
 *   - the fast JSON reader of the formats accepts nothing jansson rejects
 *     and reads what it accepts to the same value;
 *   - the repair of limits.repair (repair.c), on arguments that do not
 *     decode, either gives text jansson reads as an object, with the
 *     repairs named, or gives up with none named;
 *   - read with TG_JTAPE_BAD_STRINGS | TG_JTAPE_DUPLICATE_KEYS, the tape
 *     takes whatever json_loadb(JSON_DECODE_ANY) takes, to the same value
 *     and with no bad token, and what it takes beyond holds a bad token;
 *     an object read so sets a call's arguments only when it has none,
 *     else fails the call for good (MALFORMED_ARGUMENTS, final, kept);
 *   - repair never completes cut text: of an input that is a JSON object,
 *     no proper prefix that is not itself a JSON value is repaired into
 *     arguments - nor is it once wrapped in a Markdown code fence - and
 *     every such prefix past the opening brace is reported as cut; the
 *     whole object, fenced, repairs to itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bad_bytes.h"
#include "jcs.h"
#include "format.h"
#include "json_fast.h"
#include "jtape.h"
#include "record.h"
#include "repair.h"

static void die(const char *what)
{
    fprintf(stderr, "fuzz_args: %s\n", what);
    abort();
}

/* The tape against jansson: acceptance, errors, values, JCS. */
static void check_tape(const char *text, size_t size)
{
    json_error_t jerr;
    tg__jtape tape;
    tg__jtape_error terr;
    json_t *ref =
        json_loadb(text, size, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
                   &jerr); /* new ref */
    int rc = tg__jtape_parse(text, size, 0, &tape, &terr);
    if (rc == TG_ENOMEM || (ref == NULL && jerr.text[0] == '\0') ||
        (ref == NULL && json_error_code(&jerr) == json_error_out_of_memory)) {
        json_decref(ref);
        tg__jtape_free(&tape);
        return; /* out of memory on either side: nothing to compare */
    }
    if ((rc == 0) != (ref != NULL)) {
        fprintf(stderr, "tape %s (%s), jansson %s (%s)\n",
                rc == 0 ? "accepts" : "refuses", rc ? terr.text : "",
                ref ? "accepts" : "refuses", ref ? "" : jerr.text);
        die("acceptance differs from jansson");
    }
    if (rc != 0) {
        if (strcmp(terr.text, jerr.text) != 0 || terr.line != jerr.line ||
            terr.column != jerr.column) {
            fprintf(stderr, "tape: %s at %d:%d\njansson: %s at %d:%d\n",
                    terr.text, terr.line, terr.column, jerr.text, jerr.line,
                    jerr.column);
            die("error differs from jansson");
        }
        return;
    }
    json_t *built = tg__jtape_to_json(&tape, 0); /* new ref */
    if (built != NULL) {
        char *a = json_dumps(built, JSON_COMPACT | JSON_ENCODE_ANY);
        char *b = json_dumps(ref, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!json_equal(built, ref) || (a && b && strcmp(a, b) != 0))
            die("value built from the tape differs from jansson's");
        free(a);
        free(b);
    }
    tg__buf x, y;
    tg__buf_init(&x, 0);
    tg__buf_init(&y, 0);
    int rx = tg__jcs_write_tape(&tape, &x);
    int ry = tg__jcs_write(ref, &y);
    if (rx == 0 && ry == 0 &&
        (x.len != y.len || memcmp(x.data, y.data, x.len) != 0)) {
        fprintf(stderr, "tape JCS: %s\nDOM JCS:  %s\n", tg__buf_cstr(&x),
                tg__buf_cstr(&y));
        die("JCS of the tape differs from JCS of the value");
    }
    if ((rx == 0) != (ry == 0) && rx != TG_ENOMEM && ry != TG_ENOMEM)
        die("JCS fails on one side only");
    tg__buf_cleanup(&x);
    tg__buf_cleanup(&y);
    json_decref(built);
    json_decref(ref);
    tg__jtape_free(&tape);
}

/* The tape taking bad strings and duplicate keys, against jansson reading a
 * document; an object it reads, as a call's arguments. */
static void check_lenient(const char *text, size_t size)
{
    json_error_t jerr;
    tg__jtape tape;
    json_t *ref = json_loadb(text, size, JSON_DECODE_ANY, &jerr); /* new ref */
    int rc = tg__jtape_parse(text, size,
                             TG_JTAPE_BAD_STRINGS | TG_JTAPE_DUPLICATE_KEYS,
                             &tape, NULL);
    if (rc == TG_ENOMEM || (ref == NULL && tg__format_json_oom(&jerr)))
        goto done;
    if (ref != NULL && rc != 0)
        die("the lenient tape refuses what jansson reads");
    if (rc != 0)
        goto done;
    size_t nbad = 0;
    for (size_t i = 0; i < tape.n; i++)
        nbad += (tape.tok[i].flags & TG_JT_BAD) != 0;
    if (ref == NULL && nbad == 0)
        die("the lenient tape takes what jansson refuses, without a bad "
            "string");
    json_t *v = tg__jtape_to_json(&tape, 0); /* new ref */
    if (v == NULL)
        goto done;
    if (ref != NULL && (nbad != 0 || !json_equal(v, ref)))
        die("the lenient tape reads a document differently");
    if (json_is_object(v)) {
        tg_call *call = tg__call_new("call_fuzz", "fuzz_tool", "anthropic");
        if (call != NULL && tg__call_set_args(call, v) == 0) {
            int found = tg__bad_bytes_find(v, NULL, NULL, NULL, NULL);
            if (found == 1 &&
                (call->args_text != NULL || !call->args_unrepairable ||
                 call->bad_args_src != v || call->pre_error_code == NULL ||
                 strcmp(call->pre_error_code, "MALFORMED_ARGUMENTS") != 0))
                die("arguments with bad strings did not fail for good");
            if (found == 0 && call->args_text != NULL &&
                tg__bad_bytes(call->args_text, call->args_len, NULL, NULL))
                die("arguments hold bytes no tool gets");
        }
        tg__call_free(call);
    }
    json_decref(v);
done:
    json_decref(ref);
    tg__jtape_free(&tape);
}

/* The fast reader of the formats: never more lenient than jansson. */
static void check_fast(const char *text, size_t size, const tg_call *call)
{
    json_t *fast = tg__json_fast_load(text, size, 1); /* new ref */
    if (fast == NULL)
        return;
    json_error_t jerr;
    json_t *slow =
        json_loadb(text, size, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
                   &jerr); /* new ref */
    char *a = json_dumps(fast, JSON_COMPACT | JSON_ENCODE_ANY);
    char *b = slow ? json_dumps(slow, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    if (slow == NULL || (a && b && strcmp(a, b) != 0))
        die("fast reader differs from jansson");
    json_t *args = tg__call_args(call); /* borrowed */
    if (json_is_object(fast) && args != NULL && !json_equal(fast, args))
        die("call arguments differ from the fast reader's value");
    free(a);
    free(b);
    json_decref(slow);
    json_decref(fast);
}

static void check_repair(const char *text, size_t size)
{
    tg__buf out;
    unsigned done = 0;
    tg__buf_init(&out, 0);
    int rc = tg__repair_args_text(text, size, &out, &done, NULL);
    if (rc == 1) {
        json_error_t jerr;
        json_t *v = json_loadb(out.data, out.len, JSON_REJECT_DUPLICATES,
                               &jerr); /* new ref */
        if (done == 0 || (v == NULL && !tg__format_json_oom(&jerr)) ||
            (v != NULL && !json_is_object(v)))
            die("a repair gave no object, or named nothing");
        json_decref(v);
    } else if (rc == 0 && done != 0)
        die("a failed repair named repairs");
    tg__buf_cleanup(&out);
}

/* Whether text[0..n) is one JSON value by itself. */
static int is_value(const char *text, size_t n)
{
    tg__jtape tape;
    int rc = tg__jtape_parse(text, n, 0, &tape, NULL);
    tg__jtape_free(&tape);
    return rc == 0;
}

/* Repair of text[0..n), which was cut: never arguments, reported as cut
 * once the opening brace is in. */
static void check_cut_prefix(const char *text, size_t n, size_t brace,
                             tg__buf *out)
{
    unsigned done = 0;
    tg__repair_cut cut;
    int rc = tg__repair_args_text(text, n, out, &done, &cut);
    if (rc == 1) {
        fprintf(stderr, "cut at %zu of '%.*s' repaired into '%s'\n", n, (int)n,
                text, tg__buf_cstr(out));
        die("repair completed cut text");
    }
    if (rc == 0 && n > brace && cut.inside == NULL) {
        fprintf(stderr, "cut at %zu: '%.*s'\n", n, (int)n, text);
        die("cut text not reported as cut");
    }
}

/* The prefixes of an input that is a JSON object (all of them when it is
 * short, else a spread), bare and fenced. */
static void check_prefixes(const char *text, size_t size)
{
    static const char open[] = "```json\n", close[] = "\n```";
    if (size > 1 << 16 || !is_value(text, size))
        return;
    size_t brace = 0;
    while (brace < size && strchr(" \t\r\n", text[brace]) != NULL &&
           text[brace] != '\0')
        brace++;
    if (brace == size || text[brace] != '{')
        return; /* not an object */
    size_t step = size <= 512 ? 1 : size / 256;
    tg__buf out, fenced;
    tg__buf_init(&out, 0);
    tg__buf_init(&fenced, 0);
    if (tg__buf_append(&fenced, open, sizeof open - 1) != 0 ||
        tg__buf_append(&fenced, text, size) != 0 ||
        tg__buf_append(&fenced, close, sizeof close - 1) != 0)
        goto done;
    for (size_t n = 0; n < size; n += step) {
        if (is_value(text, n))
            continue; /* {} followed by white space, say */
        check_cut_prefix(text, n, brace, &out);
        check_cut_prefix(fenced.data, sizeof open - 1 + n,
                         sizeof open - 1 + brace, &out);
    }
    /* The fenced whole, cut inside its closing fence, is cut too. */
    for (size_t k = 0; k < sizeof close - 1; k++)
        check_cut_prefix(fenced.data, sizeof open - 1 + size + k,
                         sizeof open - 1 + brace, &out);
    /* The whole object, fenced, repairs to itself (without the white
     * space around it). */
    size_t end = size;
    while (text[end - 1] != '}')
        end--;
    unsigned done = 0;
    int rc = tg__repair_args_text(fenced.data, fenced.len, &out, &done, NULL);
    if (rc == 0 ||
        (rc == 1 && (done != TG_REPAIR_FENCE || out.len != end - brace ||
                     memcmp(out.data, text + brace, out.len) != 0)))
        die("a fenced object does not repair to itself");
done:
    tg__buf_cleanup(&out);
    tg__buf_cleanup(&fenced);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    check_tape(text, size);
    check_lenient(text, size);
    check_prefixes(text, size);
    tg_call *call = tg__call_new("call_fuzz", "fuzz_tool", "toolgate");
    tg_call *again = NULL;
    if (call == NULL)
        return 0;
    if (tg__call_set_args_text(call, text, size) != 0)
        goto done;
    check_fast(text, size, call);
    if (call->args_text == NULL) {
        check_repair(text, size);
        if (call->pre_error_code == NULL ||
            strcmp(call->pre_error_code, "MALFORMED_ARGUMENTS") != 0 ||
            tg_call_checksum(call) != NULL || tg__call_args(call) != NULL)
            die("undecodable arguments without MALFORMED_ARGUMENTS");
        goto done;
    }
    if (call->pre_error_code != NULL)
        die("decoded arguments with a pre-error");
    const char *sum = tg_call_checksum(call);
    if (sum == NULL)
        goto done; /* out of memory */
    if (strncmp(sum, "sha256:", 7) != 0 || strlen(sum) != 7 + 64)
        die("malformed checksum");
    json_t *args = tg__call_args(call); /* borrowed */
    if (args == NULL)
        goto done; /* out of memory */
    if (!json_is_object(args))
        die("arguments are not an object");
    /* The checksum of the jansson value is the checksum of the tape. */
    char dom_sum[TG_CHECKSUM_MAX];
    if (tg__checksum_compute(call->tool, args, NULL, 0, dom_sum) == 0 &&
        strcmp(dom_sum, sum) != 0)
        die("checksum of the value differs from the tape's");
    const char *json = tg_call_args_json(call);
    if (json == NULL || strlen(json) != call->args_len)
        die("arguments text missing");
    /* Re-reading the compact form gives the same arguments and checksum:
     * the checksum does not depend on how the wire spelled them. */
    char *compact = json_dumps(args, JSON_COMPACT);
    again = tg__call_new("call_fuzz", "fuzz_tool", "toolgate");
    if (compact == NULL || again == NULL ||
        tg__call_set_args_text(again, compact, strlen(compact)) != 0) {
        free(compact);
        goto done;
    }
    free(compact);
    json_t *again_args = tg__call_args(again); /* borrowed */
    if (again->args_text == NULL ||
        (again_args != NULL && !json_equal(again_args, args)))
        die("compact form reads back differently");
    const char *sum2 = tg_call_checksum(again);
    if (sum2 != NULL && strcmp(sum, sum2) != 0)
        die("checksum depends on the spelling");
    char *rec = tg_call_to_json(call);
    tg_free(rec);
done:
    tg__call_free(again);
    tg__call_free(call);
    return 0;
}
