/* SPDX-License-Identifier: MIT */
/*
 * format.c - the `format` checks, used only when formats are asserted
 * (options.format_assert or the format-assertion vocabulary); otherwise
 * `format` is an annotation and nothing here runs. Each checker reads the
 * grammar its RFC gives: date-time, date, time, duration (RFC 3339), email
 * (RFC 5321, without comments), hostname (RFC 1123), ipv4/ipv6 (RFC 2673 /
 * RFC 4291), uri and uri-reference (RFC 3986), iri (RFC 3987, non-ASCII
 * allowed where RFC 3986 allows unreserved characters), uri-template (RFC
 * 6570, level 4 syntax), uuid (RFC 4122), regex (ECMA-262, through
 * regex.c), json-pointer (RFC 6901) and relative-json-pointer. idn-hostname
 * and idn-email accept non-ASCII labels without the IDNA2008 tables.
 * Strings come with their length and may hold U+0000, which no format
 * allows but json-pointer (RFC 6901 lets a reference token hold it) and
 * the pointer part of relative-json-pointer.
 */
#include <string.h>

#include "internal.h"

static const char *const names[] = {
    [TG__FMT_DATE_TIME] = "date-time",
    [TG__FMT_DATE] = "date",
    [TG__FMT_TIME] = "time",
    [TG__FMT_DURATION] = "duration",
    [TG__FMT_EMAIL] = "email",
    [TG__FMT_IDN_EMAIL] = "idn-email",
    [TG__FMT_HOSTNAME] = "hostname",
    [TG__FMT_IDN_HOSTNAME] = "idn-hostname",
    [TG__FMT_IPV4] = "ipv4",
    [TG__FMT_IPV6] = "ipv6",
    [TG__FMT_URI] = "uri",
    [TG__FMT_URI_REFERENCE] = "uri-reference",
    [TG__FMT_IRI] = "iri",
    [TG__FMT_IRI_REFERENCE] = "iri-reference",
    [TG__FMT_URI_TEMPLATE] = "uri-template",
    [TG__FMT_UUID] = "uuid",
    [TG__FMT_REGEX] = "regex",
    [TG__FMT_JSON_POINTER] = "json-pointer",
    [TG__FMT_RELATIVE_JSON_POINTER] = "relative-json-pointer",
};

int tg__format_id(const char *name)
{
    for (int k = 1; k < (int)(sizeof names / sizeof names[0]); k++)
        if (strcmp(names[k], name) == 0)
            return k;
    return TG__FMT_NONE;
}

const char *tg__format_name(int fmt)
{
    if (fmt <= 0 || fmt >= (int)(sizeof names / sizeof names[0]))
        return "format";
    return names[fmt];
}

static int digit(char c)
{
    return c >= '0' && c <= '9';
}

static int hex(char c)
{
    return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* n digits at s as a number, -1 when not all digits. */
static int num(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!digit(s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* ------------------------------------------------------------ RFC 3339 */

static int leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int date_ok(const char *s, size_t n)
{
    if (n != 10 || s[4] != '-' || s[7] != '-')
        return 0;
    int y = num(s, 4), m = num(s + 5, 2), d = num(s + 8, 2);
    if (y < 0 || m < 1 || m > 12 || d < 1)
        return 0;
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int max = days[m - 1] + (m == 2 && leap(y));
    return d <= max;
}

/* full-time: HH:MM:SS[.frac](Z|+HH:MM|-HH:MM); leap seconds only at
 * 23:59:60 UTC. */
static int time_ok(const char *s, size_t n)
{
    if (n < 9 || s[2] != ':' || s[5] != ':')
        return 0;
    int h = num(s, 2), mi = num(s + 3, 2), se = num(s + 6, 2);
    if (h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 60)
        return 0;
    size_t i = 8;
    if (i < n && s[i] == '.') {
        i++;
        size_t st = i;
        while (i < n && digit(s[i]))
            i++;
        if (i == st)
            return 0;
    }
    if (i >= n)
        return 0;
    int oh = 0, om = 0;
    if (s[i] == 'Z' || s[i] == 'z') {
        if (i + 1 != n)
            return 0;
    } else if (s[i] == '+' || s[i] == '-') {
        if (n - i != 6 || s[i + 3] != ':')
            return 0;
        oh = num(s + i + 1, 2);
        om = num(s + i + 4, 2);
        if (oh < 0 || oh > 23 || om < 0 || om > 59)
            return 0;
        if (s[i] == '-') {
            oh = -oh;
            om = -om;
        }
    } else {
        return 0;
    }
    if (se == 60) {
        int utc = ((h * 60 + mi - (oh * 60 + om)) % 1440 + 1440) % 1440;
        if (utc != 23 * 60 + 59)
            return 0;
    }
    return 1;
}

static int date_time_ok(const char *s, size_t n)
{
    if (n < 11 || (s[10] != 'T' && s[10] != 't'))
        return 0;
    return date_ok(s, 10) && time_ok(s + 11, n - 11);
}

/* P(nY)(nM)(nD)(T(nH)(nM)(nS)) or PnW, with the units in order and at
 * least one of them; T needs a time unit after it. */
static int duration_ok(const char *s, size_t n)
{
    if (n < 2 || s[0] != 'P')
        return 0;
    size_t i = 1;
    const char *date_units = "YMD", *time_units = "HMS";
    int any = 0, in_time = 0, last = -1, week = 0;
    while (i < n) {
        if (s[i] == 'T') {
            if (in_time)
                return 0;
            in_time = 1;
            last = -1;
            i++;
            if (i >= n)
                return 0;
            continue;
        }
        size_t st = i;
        while (i < n && digit(s[i]))
            i++;
        if (i == st || i >= n)
            return 0;
        char u = s[i++];
        if (u == 'W' && !in_time) {
            if (any || i != n)
                return 0;
            week = 1;
            any = 1;
            continue;
        }
        const char *units = in_time ? time_units : date_units;
        const char *p = strchr(units, u);
        /* Units follow each other without gaps: Y then M then D, H then
         * M then S (RFC 3339 appendix A). */
        if (p == NULL || u == '\0' ||
            (last >= 0 && (int)(p - units) != last + 1))
            return 0;
        last = (int)(p - units);
        any = 1;
    }
    (void)week;
    return any && s[n - 1] != 'T';
}

/* ---------------------------------------------------------- hosts, IPs */

static int ipv4_ok(const char *s, size_t n)
{
    size_t i = 0;
    for (int part = 0; part < 4; part++) {
        if (part > 0) {
            if (i >= n || s[i] != '.')
                return 0;
            i++;
        }
        size_t st = i;
        int v = 0;
        while (i < n && digit(s[i]) && i - st < 4)
            v = v * 10 + (s[i++] - '0');
        size_t len = i - st;
        if (len == 0 || len > 3 || v > 255 || (len > 1 && s[st] == '0'))
            return 0;
    }
    return i == n;
}

static int ipv6_ok(const char *s, size_t n)
{
    int groups = 0, dbl = 0;
    size_t i = 0;
    if (n >= 2 && s[0] == ':' && s[1] == ':') {
        dbl = 1;
        i = 2;
        if (i == n)
            return 1;
    } else if (n > 0 && s[0] == ':') {
        return 0;
    }
    while (i < n) {
        size_t st = i;
        while (i < n && hex(s[i]))
            i++;
        size_t len = i - st;
        if (i < n && s[i] == '.') {
            /* An embedded IPv4 address ends the address. */
            if (!ipv4_ok(s + st, n - st))
                return 0;
            groups += 2;
            i = n;
            break;
        }
        if (len == 0 || len > 4)
            return 0;
        groups++;
        if (i == n)
            break;
        if (s[i] != ':')
            return 0;
        i++;
        if (i < n && s[i] == ':') {
            if (dbl)
                return 0;
            dbl = 1;
            i++;
            if (i == n)
                break;
        } else if (i == n) {
            return 0; /* a trailing single ':' */
        }
    }
    return dbl ? groups < 8 : groups == 8;
}

/* One hostname label: letters, digits, hyphens (and, for IDN, anything
 * non-ASCII), 1 to 63 bytes, no hyphen at either end. */
static int label_ok(const char *s, size_t n, int idn)
{
    if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(alpha((char)c) || digit((char)c) || c == '-' ||
              (idn && c >= 0x80)))
            return 0;
    }
    /* "xn--" labels are A-labels; "--" in positions 3-4 is reserved for
     * them. */
    if (n >= 4 && s[2] == '-' && s[3] == '-' &&
        !((s[0] == 'x' || s[0] == 'X') && (s[1] == 'n' || s[1] == 'N')))
        return 0;
    return 1;
}

static int hostname_ok(const char *s, size_t n, int idn)
{
    if (n == 0 || n > 253)
        return 0;
    size_t st = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (!label_ok(s + st, i - st, idn))
                return 0;
            st = i + 1;
        }
    }
    return 1;
}

static int email_ok(const char *s, size_t n, int idn)
{
    const char *at = NULL;
    for (size_t i = n; i > 0; i--)
        if (s[i - 1] == '@') {
            at = s + i - 1;
            break;
        }
    if (at == NULL)
        return 0;
    size_t ll = (size_t)(at - s), dl = n - ll - 1;
    if (ll == 0 || ll > 64 || dl == 0)
        return 0;
    if (s[0] == '"') {
        if (ll < 2 || s[ll - 1] != '"')
            return 0;
        /* qtextSMTP and quoted-pairSMTP: printable ASCII (and, for
         * idn-email, non-ASCII); no control characters, U+0000 included. */
        for (size_t i = 1; i + 1 < ll; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c < 0x20 || c == 0x7f || (!idn && c >= 0x80))
                return 0;
            if (c == '\\') {
                i++;
                c = (unsigned char)s[i];
                if (i + 1 >= ll || c < 0x20 || c == 0x7f || (!idn && c >= 0x80))
                    return 0;
                continue;
            }
            if (c == '"')
                return 0;
        }
    } else {
        static const char atext[] = "!#$%&'*+-/=?^_`{|}~";
        if (s[0] == '.' || s[ll - 1] == '.')
            return 0;
        for (size_t i = 0; i < ll; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == '.') {
                if (s[i + 1] == '.')
                    return 0;
                continue;
            }
            if (!(alpha((char)c) || digit((char)c) || strchr(atext, c) ||
                  (idn && c >= 0x80)) ||
                c == '\0')
                return 0;
        }
    }
    const char *d = at + 1;
    if (d[0] == '[') {
        if (d[dl - 1] != ']')
            return 0;
        if (dl > 6 && memcmp(d + 1, "IPv6:", 5) == 0)
            return ipv6_ok(d + 6, dl - 7);
        return ipv4_ok(d + 1, dl - 2);
    }
    return hostname_ok(d, dl, idn);
}

/* ---------------------------------------------------------------- URIs */

static int unreserved(unsigned char c, int iri)
{
    return alpha((char)c) || digit((char)c) || c == '-' || c == '.' ||
           c == '_' || c == '~' || (iri && c >= 0x80);
}

static int subdelim(char c)
{
    return c != '\0' && strchr("!$&'()*+,;=", c) != NULL;
}

/* Characters of a component: unreserved, sub-delims, pct-encoded and the
 * extra ones given. */
static int chars_ok(const char *s, size_t n, const char *extra, int iri)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            if (i + 2 >= n)
                return 0;
            if (!hex(s[i + 1]) || !hex(s[i + 2]))
                return 0;
            i += 2;
            continue;
        }
        if (unreserved(c, iri) || subdelim((char)c) ||
            (c != '\0' && strchr(extra, c) != NULL))
            continue;
        return 0;
    }
    return 1;
}

static int authority_ok(const char *s, size_t n, int iri)
{
    size_t i = 0;
    const char *at = memchr(s, '@', n);
    if (at != NULL) {
        if (!chars_ok(s, (size_t)(at - s), ":", iri))
            return 0;
        i = (size_t)(at - s) + 1;
    }
    const char *h = s + i;
    size_t hl = n - i;
    if (hl > 0 && h[0] == '[') {
        const char *e = memchr(h, ']', hl);
        if (e == NULL)
            return 0;
        size_t il = (size_t)(e - h) - 1;
        if (il > 0 && (h[1] == 'v' || h[1] == 'V')) {
            /* IPvFuture: "v" 1*HEXDIG "." 1*(unreserved / sub-delims / ":") */
            size_t k = 2;
            while (k <= il && hex(h[k]))
                k++;
            if (k == 2 || k > il || h[k] != '.' || k + 1 > il)
                return 0;
            if (!chars_ok(h + k + 1, il - k, ":", 0))
                return 0;
        } else if (!ipv6_ok(h + 1, il)) {
            return 0;
        }
        h = e + 1;
        hl = n - (size_t)(h - s);
        if (hl > 0 && h[0] != ':')
            return 0;
    } else {
        const char *colon = memchr(h, ':', hl);
        size_t host = colon ? (size_t)(colon - h) : hl;
        if (!chars_ok(h, host, "", iri))
            return 0;
        h += host;
        hl -= host;
    }
    if (hl > 0) { /* ":port" */
        for (size_t k = 1; k < hl; k++)
            if (!digit(h[k]))
                return 0;
    }
    return 1;
}

static int uri_ok(const char *s, size_t n, int need_scheme, int iri)
{
    size_t i = 0;
    int scheme = 0;
    if (n > 0 && alpha(s[0])) {
        size_t k = 1;
        while (k < n && (alpha(s[k]) || digit(s[k]) || s[k] == '+' ||
                         s[k] == '-' || s[k] == '.'))
            k++;
        if (k < n && s[k] == ':') {
            scheme = 1;
            i = k + 1;
        }
    }
    if (need_scheme && !scheme)
        return 0;
    size_t end = n;
    const char *hash = memchr(s + i, '#', n - i);
    if (hash != NULL) {
        end = (size_t)(hash - s);
        if (!chars_ok(hash + 1, n - end - 1, ":@/?", iri))
            return 0;
    }
    const char *q = memchr(s + i, '?', end - i);
    size_t pend = q ? (size_t)(q - s) : end;
    if (q != NULL && !chars_ok(q + 1, end - pend - 1, ":@/?", iri))
        return 0;
    if (pend - i >= 2 && s[i] == '/' && s[i + 1] == '/') {
        size_t a = i + 2, k = a;
        while (k < pend && s[k] != '/')
            k++;
        if (!authority_ok(s + a, k - a, iri))
            return 0;
        i = k;
    } else if (!scheme) {
        /* A relative path's first segment has no ':'. */
        size_t k = i;
        while (k < pend && s[k] != '/') {
            if (s[k] == ':')
                return 0;
            k++;
        }
    }
    return chars_ok(s + i, pend - i, ":@/", iri);
}

/* RFC 6570: literals and {expressions} of an optional operator and a
 * comma-separated list of varspecs (varname, then ":" max-length 1-9999 or
 * "*"). */
static int varspec_ok(const char *s, size_t n)
{
    size_t i = 0;
    int prev_dot = 1; /* a name starts with no '.', has no ".." */
    while (i < n && s[i] != ':' && s[i] != '*') {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            if (i + 2 >= n || !hex(s[i + 1]) || !hex(s[i + 2]))
                return 0;
            i += 3;
            prev_dot = 0;
            continue;
        }
        if (c == '.') {
            if (prev_dot)
                return 0;
            prev_dot = 1;
        } else if (alpha((char)c) || digit((char)c) || c == '_') {
            prev_dot = 0;
        } else {
            return 0;
        }
        i++;
    }
    if (i == 0 || prev_dot)
        return 0;
    if (i == n)
        return 1;
    if (s[i] == '*')
        return i + 1 == n;
    /* ":" max-length: 1 to 4 digits, no leading zero. */
    size_t st = ++i;
    while (i < n && digit(s[i]))
        i++;
    return i == n && i > st && i - st <= 4 && s[st] != '0';
}

static int template_ok(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c == '{') {
            const char *e = memchr(s + i + 1, '}', n - i - 1);
            if (e == NULL)
                return 0;
            const char *x = s + i + 1;
            size_t xl = (size_t)(e - x);
            if (xl > 0 && x[0] != '\0' &&
                strchr("+#./;?&=,!@|", x[0]) != NULL) {
                x++;
                xl--;
            }
            if (xl == 0)
                return 0;
            size_t st = 0;
            for (size_t k = 0; k <= xl; k++) {
                if (k == xl || x[k] == ',') {
                    if (!varspec_ok(x + st, k - st))
                        return 0;
                    st = k + 1;
                }
            }
            i = (size_t)(e - s) + 1;
            continue;
        }
        /* Literals: any character but CTL, SP, DQUOTE, "%" (unless
         * pct-encoded), "<", ">", "\\", "^", "`", "{", "|", "}". */
        if (c <= 0x20 || c == 0x7f || strchr("\"<>\\^`{|}", c) != NULL)
            return 0;
        if (c == '%') {
            if (i + 2 >= n || !hex(s[i + 1]) || !hex(s[i + 2]))
                return 0;
            i += 3;
            continue;
        }
        i++;
    }
    return 1;
}

static int uuid_ok(const char *s, size_t n)
{
    if (n != 36)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return 0;
        } else if (!hex(s[i])) {
            return 0;
        }
    }
    return 1;
}

static int pointer_ok(const char *s, size_t n)
{
    if (n > 0 && s[0] != '/')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '~' && (i + 1 >= n || (s[i + 1] != '0' && s[i + 1] != '1')))
            return 0;
    return 1;
}

static int rel_pointer_ok(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && digit(s[i]))
        i++;
    if (i == 0 || (i > 1 && s[0] == '0'))
        return 0;
    if (i == n)
        return 1;
    if (s[i] == '#')
        return i + 1 == n;
    /* An index adjustment (+N / -N) may follow the prefix. */
    if (s[i] == '+' || s[i] == '-') {
        size_t st = ++i;
        while (i < n && digit(s[i]))
            i++;
        if (i == st || (i - st > 1 && s[st] == '0'))
            return 0;
        if (i == n)
            return 1;
        if (s[i] == '#')
            return i + 1 == n;
    }
    return pointer_ok(s + i, n - i);
}

static int regex_ok(const char *s, size_t n)
{
    tg__regex *re = NULL;
    int rc = tg__regex_compile(s, n, &re, NULL, 0);
    tg__regex_free(re);
    return rc == 0;
}

int tg__format_check(int fmt, const char *s, size_t n)
{
    switch (fmt) {
    case TG__FMT_DATE_TIME:
        return date_time_ok(s, n);
    case TG__FMT_DATE:
        return date_ok(s, n);
    case TG__FMT_TIME:
        return time_ok(s, n);
    case TG__FMT_DURATION:
        return duration_ok(s, n);
    case TG__FMT_EMAIL:
        return email_ok(s, n, 0);
    case TG__FMT_IDN_EMAIL:
        return email_ok(s, n, 1);
    case TG__FMT_HOSTNAME:
        return hostname_ok(s, n, 0);
    case TG__FMT_IDN_HOSTNAME:
        return hostname_ok(s, n, 1);
    case TG__FMT_IPV4:
        return ipv4_ok(s, n);
    case TG__FMT_IPV6:
        return ipv6_ok(s, n);
    case TG__FMT_URI:
        return uri_ok(s, n, 1, 0);
    case TG__FMT_URI_REFERENCE:
        return uri_ok(s, n, 0, 0);
    case TG__FMT_IRI:
        return uri_ok(s, n, 1, 1);
    case TG__FMT_IRI_REFERENCE:
        return uri_ok(s, n, 0, 1);
    case TG__FMT_URI_TEMPLATE:
        return template_ok(s, n);
    case TG__FMT_UUID:
        return uuid_ok(s, n);
    case TG__FMT_REGEX:
        return regex_ok(s, n);
    case TG__FMT_JSON_POINTER:
        return pointer_ok(s, n);
    case TG__FMT_RELATIVE_JSON_POINTER:
        return rel_pointer_ok(s, n);
    default:
        return 1;
    }
}
