/* SPDX-License-Identifier: MIT */
/*
 * retry.c - when a failed model request is sent again, and after how long:
 * rate limits (429, honouring the server's Retry-After or retry-after-ms),
 * overloaded or failing servers (500, 502, 503, 504, 529), timeouts and
 * dropped connections, with exponential backoff and jitter so that many
 * clients do not come back at once. The server's word on when to come back
 * wins: Retry-After, the providers' rate-limit headers, Gemini's RetryInfo.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "loop_int.h"

#define RETRY_CAP_MS 60000L

int tg__retry_worth(long status, int curl_code)
{
    if (status != 0)
        return status == 408 || status == 429 || status == 500 ||
               status == 502 || status == 503 || status == 504 || status == 529;
    switch ((CURLcode)curl_code) {
    case CURLE_OK:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_OUT_OF_MEMORY:
    case CURLE_FILESIZE_EXCEEDED:
    case CURLE_WRITE_ERROR:
        return 0;
    default:
        return 1; /* the connection dropped, the server went quiet, ... */
    }
}

long tg__retry_delay(int attempt, long base_ms, long retry_after_ms,
                     unsigned rnd)
{
    if (retry_after_ms >= 0)
        return retry_after_ms;
    long d = base_ms > 0 ? base_ms : 1;
    for (int i = 2; i < attempt && d < RETRY_CAP_MS; i++)
        d *= 2;
    if (d > RETRY_CAP_MS)
        d = RETRY_CAP_MS;
    long half = d / 2;
    return half + (long)(rnd % (unsigned long)(d - half + 1));
}

long tg__retry_after_parse(const char *value, long long now_s)
{
    if (value == NULL)
        return -1;
    while (*value == ' ' || *value == '\t')
        value++;
    if (isdigit((unsigned char)*value)) {
        char *end;
        double s = strtod(value, &end);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
            end++;
        if (*end != '\0' || s < 0 || s > 86400.0)
            return -1;
        return (long)(s * 1000.0 + 0.5);
    }
    time_t t = curl_getdate(value, NULL);
    if (t < 0)
        return -1;
    long long d = (long long)t - now_s;
    return d <= 0 ? 0 : d > 86400 ? -1 : (long)(d * 1000);
}

/* A Go-style duration ("1s", "6m0s", "1h2m3.5s", "20ms") in ms; -1 when
 * unreadable or over a day. */
static long duration_ms(const char *v)
{
    double total = 0;
    int parts = 0;
    while (*v == ' ' || *v == '\t')
        v++;
    while (*v != '\0' && *v != '\r' && *v != '\n') {
        char *end;
        double x = strtod(v, &end);
        if (end == v || x < 0)
            return -1;
        v = end;
        double unit = strncmp(v, "ms", 2) == 0 ? 1
                      : *v == 'h'              ? 3600000
                      : *v == 'm'              ? 60000
                      : *v == 's'              ? 1000
                                               : -1;
        if (unit < 0)
            return -1;
        v += unit == 1 ? 2 : 1;
        total += x * unit;
        parts++;
    }
    return parts > 0 && total <= 86400000.0 ? (long)(total + 0.5) : -1;
}

/* An RFC 3339 time ("2026-11-28T07:30:00Z", fractions and offsets as
 * written) as ms from now_s, 0 when past; -1 when unreadable. */
static long rfc3339_ms(const char *v, long long now_s)
{
    struct tm tm = {0};
    while (*v == ' ')
        v++;
    const char *end = strptime(v, "%Y-%m-%dT%H:%M:%S", &tm);
    if (end == NULL)
        return -1;
    double frac = 0;
    if (*end == '.') {
        char *e;
        frac = strtod(end, &e);
        end = e;
    }
    long off = 0;
    if (*end == '+' || *end == '-') {
        int hh, mm;
        if (sscanf(end + 1, "%2d:%2d", &hh, &mm) != 2)
            return -1;
        off = (*end == '-' ? -1 : 1) * (hh * 3600L + mm * 60L);
    } else if (*end != 'Z' && *end != 'z') {
        return -1;
    }
    long long t = (long long)timegm(&tm) - off;
    double d = ((double)(t - now_s) + frac) * 1000.0;
    return d <= 0 ? 0 : d > 86400000.0 ? -1 : (long)(d + 0.5);
}

void tg__ratelimit_clear(tg__http_reply *r)
{
    for (int i = 0; i < 4; i++)
        r->rl_remaining[i] = r->rl_reset_ms[i] = -1;
}

int tg__ratelimit_header(tg__http_reply *r, const char *line, long long now_s)
{
    static const char *const kinds[] = {"requests", "tokens", "input-tokens",
                                        "output-tokens"};
    const char *rest;
    int anthropic;
    if (strncasecmp(line, "x-ratelimit-", 12) == 0) {
        rest = line + 12;
        anthropic = 0;
    } else if (strncasecmp(line, "anthropic-ratelimit-", 20) == 0) {
        rest = line + 20;
        anthropic = 1;
    } else {
        return 0;
    }
    /* OpenAI: remaining-KIND / reset-KIND; Anthropic: KIND-remaining /
     * KIND-reset */
    for (int k = 0; k < 4; k++) {
        size_t kl = strlen(kinds[k]);
        for (int reset = 0; reset < 2; reset++) {
            const char *what = reset ? "reset" : "remaining";
            size_t wl = strlen(what);
            char name[48];
            if (anthropic)
                snprintf(name, sizeof name, "%s-%s:", kinds[k], what);
            else
                snprintf(name, sizeof name, "%s-%s:", what, kinds[k]);
            if (strncasecmp(rest, name, kl + wl + 2) != 0)
                continue;
            const char *v = rest + kl + wl + 2;
            if (reset) {
                r->rl_reset_ms[k] =
                    anthropic ? rfc3339_ms(v, now_s) : duration_ms(v);
            } else {
                char *end;
                long n = strtol(v, &end, 10);
                r->rl_remaining[k] = end != v && n >= 0 ? n : -1;
            }
            return 1;
        }
    }
    return 0;
}

/* Gemini's google.rpc.RetryInfo in an error body: error.details[] with
 * "retryDelay": "38s" (ms, -1 when none). */
static long retry_info_ms(const char *body, size_t len)
{
    if (body == NULL || len == 0)
        return -1;
    json_t *v = json_loadb(body, len, 0, NULL); /* new ref */
    long ms = -1;
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(json_object_get(v, "error"), "details"),
                       i, d)
    {
        const char *delay = json_string_value(json_object_get(d, "retryDelay"));
        if (delay != NULL && (ms = duration_ms(delay)) >= 0)
            break;
    }
    json_decref(v);
    return ms;
}

long tg__retry_server_ms(const tg__http_reply *r)
{
    if (r->retry_after_ms >= 0)
        return r->retry_after_ms;
    long exhausted = -1, soonest = -1;
    for (int k = 0; k < 4; k++) {
        long t = r->rl_reset_ms[k];
        if (t < 0)
            continue;
        if (r->rl_remaining[k] == 0 && t > exhausted)
            exhausted = t;
        if (soonest < 0 || t < soonest)
            soonest = t;
    }
    if (exhausted >= 0)
        return exhausted;
    if (soonest >= 0 && r->status == 429)
        return soonest;
    return r->status == 429 ? retry_info_ms(r->body, r->len) : -1;
}
