/* SPDX-License-Identifier: MIT */
/*
 * tg_json_test.h - test JSON for the cmocka tests (include after cmocka.h):
 * text that must parse into a jansson value, or the test fails naming it.
 * Header-only.
 */
#ifndef TG_JSON_TEST_H
#define TG_JSON_TEST_H

#include <jansson.h>

/* text parsed (any JSON value; "\u0000" allowed, as arguments from a model
 * may carry it); a new reference the caller releases. Fails the test when
 * the text is not JSON. */
static inline json_t *tg_test_json(const char *text)
{
    json_error_t jerr;
    json_t *v =
        json_loads(text, JSON_ALLOW_NUL | JSON_DECODE_ANY, &jerr); /* new ref */
    if (v == NULL)
        fail_msg("bad test JSON %s: %s", text, jerr.text);
    return v;
}

#endif
