/* SPDX-License-Identifier: MIT */
/*
 * json_scan.c - stepping over JSON text (json_scan.h): white space, a
 * string by its unescaped closing quote, a value by its nesting.
 */
#include "json_scan.h"

#include <string.h>

size_t tg__json_ws(const char *s, size_t n, size_t i)
{
    while (i < n &&
           (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
        i++;
    return i;
}

size_t tg__json_string_end(const char *s, size_t n, size_t i)
{
    size_t p = i + 1;
    for (;;) {
        const char *q = p < n ? memchr(s + p, '"', n - p) : NULL;
        if (q == NULL)
            return 0;
        size_t k = (size_t)(q - s), b = k;
        while (b > i + 1 && s[b - 1] == '\\')
            b--;
        if (((k - b) & 1) == 0) /* not escaped */
            return k + 1;
        p = k + 1;
    }
}

size_t tg__json_value_end(const char *s, size_t n, size_t i)
{
    int depth = 0;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '"') {
            size_t e = tg__json_string_end(s, n, i);
            if (e == 0)
                return 0;
            if (depth == 0)
                return e; /* a string */
            i = e - 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0)
                return i; /* a scalar's end: the container closes */
            if (--depth == 0)
                return i + 1;
        } else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' ||
                                  c == '\r' || c == '\t')) {
            return i; /* a scalar's end */
        }
    }
    return depth == 0 ? n : 0;
}
