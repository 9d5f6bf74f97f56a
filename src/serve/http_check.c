/* SPDX-License-Identifier: MIT */
/*
 * http_check.c - the pure checks of the Streamable HTTP transport: header
 * values read as untrusted text (see http_check.h). Every reader walks its
 * input once, bounded by its length; nothing allocates.
 */
#include "http_check.h"
#include "hex.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <string.h>
#include <sys/random.h>

/* ------------------------------------------------------------ helpers */

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* Whether s starts with the lowercase ASCII `prefix`, case-insensitively. */
static bool starts_ci(const char *s, const char *prefix)
{
    for (; *prefix != '\0'; s++, prefix++)
        if (lower((unsigned char)*s) != *prefix)
            return false;
    return true;
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static bool is_ows(int c)
{
    return c == ' ' || c == '\t';
}

/* Skips ":<digits>" (1 to 5 digits, at most 65535) at *p; true when the
 * text ends there (a port or nothing). */
static bool port_then_end(const char *p)
{
    if (*p == '\0')
        return true;
    if (*p != ':')
        return false;
    p++;
    unsigned long v = 0;
    int n = 0;
    for (; is_digit((unsigned char)*p); p++) {
        v = v * 10 + (unsigned long)(*p - '0');
        if (++n > 5)
            return false;
    }
    return n > 0 && v <= 65535 && *p == '\0';
}

/* The length of the loopback host name at s (localhost, 127.a.b.c, [::1]),
 * or 0. */
static size_t loopback_name(const char *s)
{
    if (starts_ci(s, "localhost"))
        return 9;
    if (strncmp(s, "[::1]", 5) == 0)
        return 5;
    if (strncmp(s, "127.", 4) != 0)
        return 0;
    const char *p = s + 4;
    for (int part = 0; part < 3; part++) {
        unsigned v = 0;
        int n = 0;
        for (; is_digit((unsigned char)*p); p++) {
            v = v * 10 + (unsigned)(*p - '0');
            if (++n > 3)
                return 0;
        }
        if (n == 0 || v > 255)
            return 0;
        if (part < 2) {
            if (*p != '.')
                return 0;
            p++;
        }
    }
    return (size_t)(p - s);
}

/* ------------------------------------------------------------ versions */

http_version http_version_of(const char *value)
{
    static const struct {
        const char *name;
        http_version v;
    } known[] = {{"2025-03-26", HTTP_V_2025_03_26},
                 {"2025-06-18", HTTP_V_2025_06_18},
                 {"2025-11-25", HTTP_V_2025_11_25},
                 {"2026-07-28", HTTP_V_2026_07_28}};
    if (value == NULL)
        return HTTP_V_NONE;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(value, known[i].name) == 0)
            return known[i].v;
    return HTTP_V_UNKNOWN;
}

const char *http_versions_json(void)
{
    return "[\"2025-06-18\",\"2025-11-25\",\"2026-07-28\"]";
}

/* ------------------------------------------------------------ origin, host */

/* Compares origins ignoring ASCII case and one trailing '/' on each. */
static bool origin_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 0 && a[la - 1] == '/')
        la--;
    if (lb > 0 && b[lb - 1] == '/')
        lb--;
    if (la != lb)
        return false;
    for (size_t i = 0; i < la; i++)
        if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
            return false;
    return true;
}

bool http_origin_allowed(const char *origin, const char *const *allowed,
                         size_t n)
{
    if (origin == NULL)
        return false;
    for (size_t i = 0; i < n; i++)
        if (allowed[i] != NULL && origin_equal(origin, allowed[i]))
            return true;
    const char *p;
    if (starts_ci(origin, "http://"))
        p = origin + 7;
    else if (starts_ci(origin, "https://"))
        p = origin + 8;
    else
        return false;
    size_t host = loopback_name(p);
    return host > 0 && port_then_end(p + host);
}

bool http_host_loopback(const char *host)
{
    if (host == NULL)
        return false;
    size_t n = loopback_name(host);
    return n > 0 && port_then_end(host + n);
}

/* ------------------------------------------------------------ media types */

/* Reads the media range at *pp up to the next ',' (outside quotes): sets
 * type and len to its type and subtype (trimmed), and q_zero when a q
 * parameter is 0 (0, 0.0, 0.00, 0.000); advances *pp past the ','. */
static void media_range(const char **pp, const char **type, size_t *len,
                        bool *q_zero)
{
    const char *p = *pp;
    while (is_ows((unsigned char)*p))
        p++;
    *type = p;
    while (*p != '\0' && *p != ',' && *p != ';' && !is_ows((unsigned char)*p))
        p++;
    *len = (size_t)(p - *type);
    *q_zero = false;
    /* Parameters: ; name=value, the value a token or a quoted string. */
    while (*p != '\0' && *p != ',') {
        if (*p != ';') {
            p++;
            continue;
        }
        p++;
        while (is_ows((unsigned char)*p))
            p++;
        bool is_q = (*p == 'q' || *p == 'Q') && p[1] == '=';
        while (*p != '\0' && *p != '=' && *p != ',' && *p != ';')
            p++;
        if (*p != '=')
            continue;
        p++;
        if (*p == '"') {
            for (p++; *p != '\0' && *p != '"'; p++)
                if (*p == '\\' && p[1] != '\0')
                    p++;
            if (*p == '"')
                p++;
            continue;
        }
        const char *v = p;
        while (*p != '\0' && *p != ',' && *p != ';' &&
               !is_ows((unsigned char)*p))
            p++;
        if (is_q && v < p && *v == '0') {
            const char *d = v + 1;
            if (d < p && *d == '.')
                for (d++; d < p && *d == '0'; d++)
                    ;
            if (d == p)
                *q_zero = true;
        }
    }
    if (*p == ',')
        p++;
    *pp = p;
}

static bool type_is(const char *type, size_t len, const char *want)
{
    size_t n = strlen(want);
    if (len != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)type[i]) != want[i])
            return false;
    return true;
}

void http_accept_parse(const char *accept, bool *json, bool *sse)
{
    *json = false;
    *sse = false;
    if (accept == NULL)
        return;
    const char *p = accept;
    while (*p != '\0') {
        const char *type;
        size_t len;
        bool q_zero;
        media_range(&p, &type, &len, &q_zero);
        if (q_zero)
            continue;
        if (type_is(type, len, "application/json"))
            *json = true;
        else if (type_is(type, len, "text/event-stream"))
            *sse = true;
    }
}

bool http_content_type_json(const char *type)
{
    if (type == NULL)
        return false;
    const char *p = type;
    while (is_ows((unsigned char)*p))
        p++;
    if (!starts_ci(p, "application/json"))
        return false;
    p += 16;
    while (is_ows((unsigned char)*p))
        p++;
    return *p == '\0' || *p == ';';
}

/* ------------------------------------------------------------ token */

void http_token_digest(const char *token, size_t len, unsigned char want[32])
{
    SHA256((const unsigned char *)token, len, want);
}

bool http_bearer_ok(const char *authorization, const unsigned char want[32])
{
    if (authorization == NULL || !starts_ci(authorization, "bearer"))
        return false;
    const char *p = authorization + 6;
    if (!is_ows((unsigned char)*p))
        return false;
    while (is_ows((unsigned char)*p))
        p++;
    size_t len = strlen(p);
    while (len > 0 && is_ows((unsigned char)p[len - 1]))
        len--;
    unsigned char got[32];
    SHA256((const unsigned char *)p, len, got);
    return len > 0 && CRYPTO_memcmp(got, want, sizeof got) == 0;
}

/* ------------------------------------------------------------ event ids */

/* Reads a decimal number of 1 to 19 digits without leading zeros at *pp. */
static bool decimal(const char **pp, uint64_t *out)
{
    const char *p = *pp;
    uint64_t v = 0;
    int n = 0;
    for (; is_digit((unsigned char)*p); p++) {
        if (++n > 19)
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (n == 0 || (n > 1 && **pp == '0'))
        return false;
    *pp = p;
    *out = v;
    return true;
}

bool http_event_id_parse(const char *value, uint64_t *stream, uint64_t *seq)
{
    if (value == NULL)
        return false;
    const char *p = value;
    if (!decimal(&p, stream) || *p != '-')
        return false;
    p++;
    return decimal(&p, seq) && *p == '\0';
}

/* ------------------------------------------------------------ session ids */

int http_session_id_new(char *id)
{
    unsigned char rnd[HTTP_SESSION_ID_LEN / 2];
    size_t got = 0;
    while (got < sizeof rnd) {
        ssize_t n = getrandom(rnd + got, sizeof rnd - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    tg__hex_encode(rnd, sizeof rnd, id);
    return 0;
}

bool http_session_id_valid(const char *id)
{
    if (id == NULL)
        return false;
    size_t i = 0;
    for (; id[i] != '\0'; i++)
        if (i >= HTTP_SESSION_ID_LEN ||
            !(is_digit((unsigned char)id[i]) || (id[i] >= 'a' && id[i] <= 'f')))
            return false;
    return i == HTTP_SESSION_ID_LEN;
}
