/* SPDX-License-Identifier: MIT */
/*
 * uri.c - the URI arithmetic of `$id` and `$ref`: reference resolution and
 * dot-segment removal as RFC 3986 section 5.2 spells them (for http, file
 * and urn/tag URIs alike), and the percent-decoding of fragments that hold
 * JSON pointers.
 */
#include <string.h>

#include "hex.h"
#include "internal.h"

typedef struct part {
    const char *p;
    size_t n;
    int set; /* the component is present (possibly empty) */
} part;

typedef struct uri {
    part scheme, auth, path, query, frag;
} uri;

static int is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int tg__uri_has_scheme(const char *s)
{
    if (!is_alpha(s[0]))
        return 0;
    size_t i = 1;
    while (is_alpha(s[i]) || (s[i] >= '0' && s[i] <= '9') || s[i] == '+' ||
           s[i] == '-' || s[i] == '.')
        i++;
    return s[i] == ':';
}

static void parse(const char *s, uri *u)
{
    memset(u, 0, sizeof *u);
    size_t n = strlen(s), i = 0;
    if (tg__uri_has_scheme(s)) {
        const char *c = strchr(s, ':');
        u->scheme = (part){s, (size_t)(c - s), 1};
        i = (size_t)(c - s) + 1;
    }
    if (i + 1 < n + 1 && s[i] == '/' && s[i + 1] == '/') {
        size_t j = i + 2;
        while (j < n && s[j] != '/' && s[j] != '?' && s[j] != '#')
            j++;
        u->auth = (part){s + i + 2, j - i - 2, 1};
        i = j;
    }
    size_t j = i;
    while (j < n && s[j] != '?' && s[j] != '#')
        j++;
    u->path = (part){s + i, j - i, 1};
    i = j;
    if (i < n && s[i] == '?') {
        j = i + 1;
        while (j < n && s[j] != '#')
            j++;
        u->query = (part){s + i + 1, j - i - 1, 1};
        i = j;
    }
    if (i < n && s[i] == '#')
        u->frag = (part){s + i + 1, n - i - 1, 1};
}

/* RFC 3986 5.2.4: appends path p with its dot segments removed. */
static int remove_dots(const char *p, size_t n, tg__buf *out)
{
    size_t start = out->len;
    size_t i = 0;
    while (i < n) {
        const char *r = p + i;
        size_t left = n - i;
        if (left >= 3 && memcmp(r, "../", 3) == 0) {
            i += 3;
        } else if (left >= 2 && memcmp(r, "./", 2) == 0) {
            i += 2;
        } else if (left >= 3 && memcmp(r, "/./", 3) == 0) {
            i += 2;
        } else if (left == 2 && memcmp(r, "/.", 2) == 0) {
            /* A final "/." becomes "/". */
            int rc = tg__buf_append(out, "/", 1);
            if (rc != 0)
                return rc;
            i += 2;
        } else if ((left >= 4 && memcmp(r, "/../", 4) == 0) ||
                   (left == 3 && memcmp(r, "/..", 3) == 0)) {
            /* Drop the last segment written. */
            size_t k = out->len;
            while (k > start && out->data[k - 1] != '/')
                k--;
            if (k > start)
                k--;
            out->len = k;
            if (left == 3) {
                int rc = tg__buf_append(out, "/", 1);
                if (rc != 0)
                    return rc;
                i += 3;
            } else {
                i += 3; /* leaves "/..." */
            }
        } else if ((left == 1 && r[0] == '.') ||
                   (left == 2 && memcmp(r, "..", 2) == 0)) {
            i = n;
        } else {
            size_t k = 1;
            while (k < left && r[k] != '/')
                k++;
            if (r[0] != '/') {
                k = 0;
                while (k < left && r[k] != '/')
                    k++;
            }
            int rc = tg__buf_append(out, r, k);
            if (rc != 0)
                return rc;
            i += k;
        }
    }
    if (out->data != NULL)
        out->data[out->len] = '\0';
    return 0;
}

static int put(tg__buf *b, const char *pre, const part *x)
{
    if (!x->set)
        return 0;
    int rc = tg__buf_puts(b, pre);
    return rc ? rc : tg__buf_append(b, x->p, x->n);
}

int tg__uri_resolve(const char *base, const char *ref, tg__buf *out)
{
    uri B, R;
    parse(base, &B);
    parse(ref, &R);
    part auth, query;
    const part *scheme;
    int rc = 0;
    tg__buf path;
    char store[256];
    tg__buf_init_with(&path, store, sizeof store, 0);
    if (R.scheme.set) {
        scheme = &R.scheme;
        auth = R.auth;
        rc = remove_dots(R.path.p, R.path.n, &path);
        query = R.query;
    } else {
        scheme = &B.scheme;
        if (R.auth.set) {
            auth = R.auth;
            rc = remove_dots(R.path.p, R.path.n, &path);
            query = R.query;
        } else {
            auth = B.auth;
            if (R.path.n == 0) {
                rc = tg__buf_append(&path, B.path.p, B.path.n);
                query = R.query.set ? R.query : B.query;
            } else {
                query = R.query;
                if (R.path.p[0] == '/') {
                    rc = remove_dots(R.path.p, R.path.n, &path);
                } else {
                    /* Merge (5.2.3), then remove dots. */
                    tg__buf m;
                    char mstore[256];
                    tg__buf_init_with(&m, mstore, sizeof mstore, 0);
                    if (B.auth.set && B.path.n == 0) {
                        rc = tg__buf_append(&m, "/", 1);
                    } else {
                        size_t k = B.path.n;
                        while (k > 0 && B.path.p[k - 1] != '/')
                            k--;
                        rc = tg__buf_append(&m, B.path.p, k);
                    }
                    if (rc == 0)
                        rc = tg__buf_append(&m, R.path.p, R.path.n);
                    if (rc == 0)
                        rc = remove_dots(m.data, m.len, &path);
                    tg__buf_cleanup(&m);
                }
            }
        }
    }
    if (rc == 0 && scheme->set) {
        rc = tg__buf_append(out, scheme->p, scheme->n);
        if (rc == 0)
            rc = tg__buf_append(out, ":", 1);
    }
    if (rc == 0)
        rc = put(out, "//", &auth);
    if (rc == 0)
        rc = tg__buf_append(out, path.data ? path.data : "", path.len);
    if (rc == 0)
        rc = put(out, "?", &query);
    if (rc == 0)
        rc = put(out, "#", &R.frag);
    if (rc == 0)
        tg__buf_cstr(out);
    tg__buf_cleanup(&path);
    return rc;
}

int tg__uri_pct_decode(const char *s, size_t len, tg__buf *out)
{
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= len)
                return -1;
            int h = tg__hex_value((unsigned char)s[i + 1]),
                l = tg__hex_value((unsigned char)s[i + 2]);
            if (h < 0 || l < 0)
                return -1;
            c = (char)(h * 16 + l);
            i += 2;
        }
        int rc = tg__buf_append(out, &c, 1);
        if (rc != 0)
            return rc;
    }
    tg__buf_cstr(out);
    return 0;
}
