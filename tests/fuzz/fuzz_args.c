/* SPDX-License-Identifier: MIT */
/*
 * fuzz_args.c - libFuzzer target for the arguments string of a call
 * (tg__call_set_args_text), its checksum (JCS + SHA-256) and its JSON record.
 * Invariants: arguments that decode are an object whose compact JSON decodes
 * to an equal object with the same checksum; arguments that do not decode
 * leave a MALFORMED_ARGUMENTS pre-error and no checksum; the fast JSON reader
 * (which the openai-chat parser uses for arguments) accepts nothing jansson
 * rejects and reads what it accepts to the same value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_fast.h"
#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_call *call = tg__call_new("call_fuzz", "fuzz_tool", "toolgate");
    tg_call *again = NULL;
    if (call == NULL)
        return 0;
    if (tg__call_set_args_text(call, (const char *)data, size) != 0)
        goto done;
    json_t *fast =
        tg__json_fast_load((const char *)data, size, 1); /* new ref */
    if (fast != NULL) {
        json_error_t jerr;
        json_t *slow = json_loadb((const char *)data, size,
                                  JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
                                  &jerr); /* new ref */
        char *a = json_dumps(fast, JSON_COMPACT | JSON_ENCODE_ANY);
        char *b =
            slow ? json_dumps(slow, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        if (slow == NULL || (a && b && strcmp(a, b) != 0))
            abort();
        if (json_is_object(fast) && !json_equal(fast, call->args))
            abort();
        free(a);
        free(b);
        json_decref(slow);
        json_decref(fast);
    }
    if (call->args == NULL) {
        if (call->pre_error_code == NULL ||
            strcmp(call->pre_error_code, "MALFORMED_ARGUMENTS") != 0 ||
            tg_call_checksum(call) != NULL)
            abort();
        goto done;
    }
    if (!json_is_object(call->args) || call->pre_error_code != NULL)
        abort();
    const char *sum = tg_call_checksum(call);
    if (sum == NULL)
        goto done; /* out of memory */
    if (strncmp(sum, "sha256:", 7) != 0 || strlen(sum) != 7 + 64)
        abort();
    const char *compact = tg_call_args_json(call);
    if (compact == NULL)
        goto done;
    /* Re-reading the compact form gives the same arguments and checksum:
     * the checksum does not depend on how the wire spelled them. */
    again = tg__call_new("call_fuzz", "fuzz_tool", "toolgate");
    if (again == NULL ||
        tg__call_set_args_text(again, compact, strlen(compact)) != 0)
        goto done;
    if (again->args == NULL || !json_equal(again->args, call->args))
        abort();
    const char *sum2 = tg_call_checksum(again);
    if (sum2 != NULL && strcmp(sum, sum2) != 0)
        abort();
    char *rec = tg_call_to_json(call);
    tg_free(rec);
done:
    tg__call_free(again);
    tg__call_free(call);
    return 0;
}
