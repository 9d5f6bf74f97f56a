/* SPDX-License-Identifier: MIT */
/* jint.c - the integer reading of jint.h. */
#include "jint.h"

bool tg__json_int(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return true;
    }
    if (!json_is_real(v))
        return false;
    double d = json_real_value(v);
    /* 2^63 is exact as a double; the range check comes first so the
     * conversion is defined (NaN fails both comparisons). */
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        return false;
    int64_t i = (int64_t)d;
    if ((double)i != d)
        return false;
    *out = i;
    return true;
}
