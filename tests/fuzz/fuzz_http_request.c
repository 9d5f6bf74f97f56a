/* SPDX-License-Identifier: MIT */
/*
 * fuzz_http_request.c - libFuzzer target for the pure request checks of
 * the Streamable HTTP transport (src/serve/http_check.c). The input is cut
 * at NUL bytes into header values: Origin, Host, Accept, Content-Type,
 * Authorization, MCP-Protocol-Version, Last-Event-ID, a session id and an
 * allowed origin; every check reads its value. Besides crashes, leaks and
 * undefined behaviour, it aborts when a check contradicts itself: a
 * Last-Event-ID read back differently from its canonical form, an origin
 * allowed that is neither the allowed one nor loopback-shaped, a bearer
 * value accepted for a token it does not carry, a session id accepted
 * that is not 32 lowercase hex digits.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_check.h"

#define FIELDS 9

/* ASCII case-insensitive equality with one trailing '/' ignored on each
 * side: what an allowed origin is matched by. */
static bool same_origin(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    la -= la > 0 && a[la - 1] == '/';
    lb -= lb > 0 && b[lb - 1] == '/';
    return la == lb && strncasecmp(a, b, la) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    const char *field[FIELDS];
    size_t at = 0;
    for (int i = 0; i < FIELDS; i++) {
        if (at > size) {
            field[i] = "";
            continue;
        }
        field[i] = text + at;
        at += strlen(text + at) + 1;
    }
    const char *allowed = field[8];

    if (http_origin_allowed(field[0], &allowed, 1) &&
        !http_origin_allowed(field[0], NULL, 0) &&
        !same_origin(field[0], allowed))
        abort();
    if (http_origin_allowed(field[0], NULL, 0) &&
        strstr(field[0], "://") == NULL)
        abort();
    if (http_host_loopback(field[1]) && strchr(field[1], '/') != NULL)
        abort();

    bool json, sse;
    http_accept_parse(field[2], &json, &sse);
    if ((json && strcasestr(field[2], "application/json") == NULL) ||
        (sse && strcasestr(field[2], "text/event-stream") == NULL))
        abort();
    if (http_content_type_json(field[3]) &&
        strcasestr(field[3], "application/json") == NULL)
        abort();

    unsigned char want[32];
    http_token_digest("t0ken", 5, want);
    if (http_bearer_ok(field[4], want) && strstr(field[4], "t0ken") == NULL)
        abort();

    http_version v = http_version_of(field[5]);
    if (v == HTTP_V_NONE)
        abort(); /* field[5] is never NULL */

    uint64_t stream, seq;
    if (http_event_id_parse(field[6], &stream, &seq)) {
        char back[64];
        snprintf(back, sizeof back, "%" PRIu64 "-%" PRIu64, stream, seq);
        if (strcmp(back, field[6]) != 0)
            abort();
    }
    if (http_session_id_valid(field[7])) {
        if (strlen(field[7]) != HTTP_SESSION_ID_LEN)
            abort();
        for (const char *p = field[7]; *p; p++)
            if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                abort();
    }
    free(text);
    return 0;
}
