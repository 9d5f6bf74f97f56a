/* SPDX-License-Identifier: MIT */
/*
 * http_check.h - the pure checks of the Streamable HTTP transport
 * (http.c): what an incoming request's headers say, read without the
 * server - Origin and Host (DNS rebinding), Accept, Content-Type, the
 * bearer token, MCP-Protocol-Version, Last-Event-ID - and the session ids
 * it mints. No state, no allocation, thread-safe; every input is text from
 * the network (any bytes, NUL-terminated) and is never trusted. Factored
 * out so fuzz_http_request.c reaches them directly.
 */
#ifndef TG_SERVE_HTTP_CHECK_H
#define TG_SERVE_HTTP_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The MCP-Protocol-Version header values toolgate accepts. */
typedef enum http_version {
    HTTP_V_NONE = 0, /* no header */
    HTTP_V_UNKNOWN,  /* a value no version has: 400 */
    HTTP_V_2025_03_26,
    HTTP_V_2025_06_18,
    HTTP_V_2025_11_25,
    HTTP_V_2026_07_28
} http_version;

/* The version a MCP-Protocol-Version header value names (exactly, case
 * and all); HTTP_V_NONE for NULL. */
http_version http_version_of(const char *value);
/* The versions toolgate speaks as a JSON array text (static), for the
 * data.supported of the error that answers an unknown header value. */
const char *http_versions_json(void);

/* Whether `origin` (an Origin header value) is a loopback origin - scheme
 * http or https, host localhost, 127.0.0.1 or [::1], any port, nothing
 * after - or equals one of the n `allowed` origins (ASCII case-insensitive,
 * a trailing '/' on either side ignored). "null" and anything malformed are
 * not allowed. */
bool http_origin_allowed(const char *origin, const char *const *allowed,
                         size_t n);
/* Whether `host` (a Host header value) names the loopback interface:
 * localhost, an address of 127.0.0.0/8, or [::1], each with an optional
 * port. */
bool http_host_loopback(const char *host);

/* What an Accept header value lists: application/json and
 * text/event-stream, each by its exact type (parameters allowed, q=0
 * meaning "not acceptable"); wildcards are not counted, as the MCP spec
 * asks clients to list both. NULL lists nothing. */
void http_accept_parse(const char *accept, bool *json, bool *sse);
/* Whether a Content-Type value is application/json (any parameters). */
bool http_content_type_json(const char *type);

/* Whether an Authorization header value is "Bearer <token>" for the token
 * whose SHA-256 is `want` (32 bytes): the scheme case-insensitive, the
 * comparison of digests in constant time (CRYPTO_memcmp), so neither the
 * token's bytes nor its length leak through timing. */
bool http_bearer_ok(const char *authorization, const unsigned char want[32]);
/* want = SHA-256 of the token (len bytes), for http_bearer_ok. */
void http_token_digest(const char *token, size_t len, unsigned char want[32]);

/* Reads a Last-Event-ID value "<stream>-<seq>" (decimal, no sign, no
 * leading zeros but "0", at most 19 digits each) into *stream and *seq.
 * Returns false for anything else. */
bool http_event_id_parse(const char *value, uint64_t *stream, uint64_t *seq);

/* The length of a session id: 32 lowercase hex digits (128 bits). */
#define HTTP_SESSION_ID_LEN 32
/* Fills id (HTTP_SESSION_ID_LEN + 1 bytes) with a new session id from the
 * kernel's CSPRNG (getrandom). Returns 0, or -1 when no random bytes could
 * be had. */
int http_session_id_new(char *id);
/* Whether `id` has a session id's shape (so a lookup can be skipped). */
bool http_session_id_valid(const char *id);

#endif
