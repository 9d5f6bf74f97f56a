/* SPDX-License-Identifier: MIT */
/*
 * retry.c - when a failed model request is sent again, and after how long:
 * rate limits (429, honouring the server's Retry-After or retry-after-ms),
 * overloaded or failing servers (500, 502, 503, 504, 529), timeouts and
 * dropped connections, with exponential backoff and jitter so that many
 * clients do not come back at once.
 */
#include <ctype.h>
#include <stdlib.h>

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
