/* SPDX-License-Identifier: MIT */
/*
 * fuzz_model_reply.c - libFuzzer target for what the agent loop reads of a
 * model server's reply besides the answer itself: header lines
 * (Retry-After, retry-after-ms, OpenAI's and Anthropic's rate-limit
 * headers), an error body (Gemini's RetryInfo, the provider's message) and
 * the tokens an answer or a stream event reports. The input is header
 * lines, a blank line, then the body. Whatever comes, the delay is -1 or
 * within a day, the counts are not negative, and the message fits.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loop_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    tg__http_reply r = {.retry_after_ms = -1, .status = 429};
    tg__ratelimit_clear(&r);
    char *body = strstr(text, "\n\n");
    size_t head_len = body != NULL ? (size_t)(body - text) : size;
    for (char *line = text; line < text + head_len;) {
        char *nl = memchr(line, '\n', (size_t)(text + head_len - line));
        size_t n = nl != NULL ? (size_t)(nl - line) : strlen(line);
        char one[256];
        if (n < sizeof one) {
            memcpy(one, line, n);
            one[n] = '\0';
            if (!tg__ratelimit_header(&r, one, 1764315000LL) &&
                strncmp(one, "retry-after:", 12) == 0)
                r.retry_after_ms = tg__retry_after_parse(one + 12, 0);
        }
        line += n + 1;
    }
    if (body != NULL) {
        r.body = body + 2;
        r.len = strlen(r.body);
    }
    long ms = tg__retry_server_ms(&r);
    if (ms < -1 || (r.retry_after_ms < 0 && ms > 86400000L))
        abort();
    for (int k = 0; k < 4; k++)
        if (r.rl_reset_ms[k] < -1 || r.rl_remaining[k] < -1)
            abort();
    char msg[320];
    tg__provider_error(r.body, r.len, msg, sizeof msg);
    if (strlen(msg) >= sizeof msg)
        abort();
    json_t *v = r.body != NULL ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    tg__usage u = {0};
    tg__usage_update(&u, v);
    if (u.input < 0 || u.output < 0 || u.total < 0 || tg__usage_tokens(&u) < 0)
        abort();
    json_decref(v);
    free(text);
    return 0;
}
