/* SPDX-License-Identifier: MIT */
/*
 * fuzz_time.c - libFuzzer target for the RFC 3339 parser (tg__time_parse):
 * whatever it accepts formats back to a timestamp that parses to the same
 * milliseconds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "timeutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[128];
    if (size >= sizeof text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int64_t ms;
    if (tg__time_parse(text, &ms) != 0)
        return 0;
    char out[TG_TIME_MAX];
    tg__time_format(ms, out);
    int64_t again;
    if (tg__time_parse(out, &again) != 0 || again != ms)
        abort();
    return 0;
}
