/* SPDX-License-Identifier: MIT */
/*
 * template.c - expanding a command tool's argv and stdin templates with a
 * call's arguments (template.h). No shell ever sees the result: an argument
 * becomes exactly one argv element whatever it contains (";", "$(...)",
 * backticks, newlines, "--opt=x"), which is what keeps command tools safe
 * from injection.
 *
 * A placeholder is "{NAME}" or "{NAME?}" where NAME is "*" or made of
 * letters, digits, '_', '.' and '-'. Anything else in braces is literal
 * text, so an awk program like "{ print $1 }" or JSON in a stdin template is
 * left alone.
 *
 * One argv element is still not enough when it begins with '-': the program
 * reads it as an option ("-odata.txt" makes sort write over data.txt,
 * "--output=x", "-e…" to grep, "-la" to ls). So a placeholder's value that
 * begins with '-' is refused unless a literal "--" comes before the
 * placeholder in the template (after "--" getopt and its kin take every
 * element as an operand) or the tool names the placeholder in its
 * "option_args". The rule looks at the text the value becomes, so it holds
 * for numbers too: -5 is "-5", which is an option to tail, grep, ls and
 * kill, and a real's exponent brings letters ("-1e-7" is grep's "-1 -e -7").
 * Only whole-element placeholders are substituted, so a value can never be
 * the start of an element like "--file={path}"; "{*}" is an object and the
 * stdin template is no argv at all.
 */
#include "template.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "jcs.h"

typedef struct placeholder {
    const char *name; /* not NUL-terminated */
    size_t len;
    bool optional;
} placeholder;

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

/* Whether s[0..n) is exactly one placeholder. */
static bool parse_placeholder(const char *s, size_t n, placeholder *ph)
{
    if (n < 3 || s[0] != '{' || s[n - 1] != '}')
        return false;
    const char *name = s + 1;
    size_t len = n - 2;
    bool optional = false;
    if (len > 1 && name[len - 1] == '?') {
        optional = true;
        len--;
    }
    if (!(len == 1 && name[0] == '*')) {
        for (size_t i = 0; i < len; i++) {
            if (!name_char(name[i]))
                return false;
        }
    }
    ph->name = name;
    ph->len = len;
    ph->optional = optional;
    return true;
}

/* ------------------------------------------------------ compact JSON */

static int put_string(tg__buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    int rc = tg__buf_puts(b, "\"");
    size_t run = 0; /* start of the bytes copied as they are */
    for (size_t i = 0; i < n && rc == 0; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        rc = tg__buf_append(b, s + run, i - run);
        char esc[7] = {'\\', 0, 0, 0, 0, 0, 0};
        switch (c) {
        case '"':
            esc[1] = '"';
            break;
        case '\\':
            esc[1] = '\\';
            break;
        case '\b':
            esc[1] = 'b';
            break;
        case '\f':
            esc[1] = 'f';
            break;
        case '\n':
            esc[1] = 'n';
            break;
        case '\r':
            esc[1] = 'r';
            break;
        case '\t':
            esc[1] = 't';
            break;
        default:
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
        }
        if (rc == 0)
            rc = tg__buf_puts(b, esc);
        run = i + 1;
    }
    if (rc == 0)
        rc = tg__buf_append(b, s + run, n - run);
    if (rc == 0)
        rc = tg__buf_puts(b, "\"");
    return rc;
}

/* Compact JSON in the value's own member order, numbers in their shortest
 * round-trip form (jansson's own dump writes 0.1 as 0.10000000000000001). */
static int put_json(tg__buf *b, const json_t *v)
{
    int rc = 0;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *m; /* borrowed */
        bool first = true;
        rc = tg__buf_puts(b, "{");
        json_object_foreach((json_t *)v, key, m)
        {
            if (rc == 0 && !first)
                rc = tg__buf_puts(b, ",");
            first = false;
            if (rc == 0)
                rc = put_string(b, key, strlen(key));
            if (rc == 0)
                rc = tg__buf_puts(b, ":");
            if (rc == 0)
                rc = put_json(b, m);
            if (rc)
                break;
        }
        return rc ? rc : tg__buf_puts(b, "}");
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *m; /* borrowed */
        rc = tg__buf_puts(b, "[");
        json_array_foreach(v, i, m)
        {
            if (rc == 0 && i > 0)
                rc = tg__buf_puts(b, ",");
            if (rc == 0)
                rc = put_json(b, m);
            if (rc)
                break;
        }
        return rc ? rc : tg__buf_puts(b, "]");
    }
    case JSON_STRING:
        return put_string(b, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return tg__buf_printf(b, "%" JSON_INTEGER_FORMAT,
                              json_integer_value(v));
    case JSON_REAL: {
        char num[40];
        int n = tg__jcs_number(json_real_value(v), num, sizeof num);
        return n < 0 ? tg__buf_puts(b, "null")
                     : tg__buf_append(b, num, (size_t)n);
    }
    case JSON_TRUE:
        return tg__buf_puts(b, "true");
    case JSON_FALSE:
        return tg__buf_puts(b, "false");
    default:
        return tg__buf_puts(b, "null");
    }
}

/* ------------------------------------------------------------ values */

/* The JSON pointer "/name" with '~' and '/' escaped (RFC 6901). */
static void set_pointer(tg_error *err, const char *name, size_t len)
{
    if (err == NULL)
        return;
    char ptr[sizeof err->pointer];
    size_t o = 0;
    ptr[o++] = '/';
    for (size_t i = 0; i < len && o + 3 < sizeof ptr; i++) {
        if (name[i] == '~' || name[i] == '/') {
            ptr[o++] = '~';
            ptr[o++] = name[i] == '~' ? '0' : '1';
        } else {
            ptr[o++] = name[i];
        }
    }
    ptr[o] = '\0';
    tg__error_pointer(err, ptr);
}

/* The argument a placeholder names: the whole object for "*", NULL when it
 * is absent or null. */
static const json_t *lookup(const json_t *args, const placeholder *ph,
                            char *name, size_t size)
{
    snprintf(name, size, "%.*s", (int)ph->len, ph->name);
    if (ph->len == 1 && ph->name[0] == '*')
        return args;
    const json_t *v = json_object_get(args, name); /* borrowed */
    return json_is_null(v) ? NULL : v;
}

/* Appends a value as a template writes it: strings as they are, every other
 * value as compact JSON. */
static int put_value(tg__buf *b, const json_t *v)
{
    if (json_is_string(v))
        return tg__buf_append(b, json_string_value(v), json_string_length(v));
    return put_json(b, v);
}

static int missing(tg_error *err, const placeholder *ph, const char *where)
{
    tg__error_set(err, TG_EINVAL, "missing argument '%.*s' (needed by %s)",
                  (int)ph->len, ph->name, where);
    set_pointer(err, ph->name, ph->len);
    return TG_EINVAL;
}

/* Whether `names` (array of strings, may be NULL) holds name. */
static bool listed(const json_t *names, const char *name)
{
    size_t i;
    json_t *v; /* borrowed */
    json_array_foreach(names, i, v)
    {
        const char *s = json_string_value(v);
        if (s != NULL && strcmp(s, name) == 0)
            return true;
    }
    return false;
}

/* The option rule's refusal of placeholder `name` in a command running
 * `prog`. The value is not quoted: it is the caller's, and the message may
 * reach a terminal. */
static int option_refused(tg_error *err, const placeholder *ph,
                          const char *name, const char *prog)
{
    tg__error_set(err, TG_EINVAL,
                  "argument '%s' begins with '-', so '%.100s' would read it "
                  "as an option; refused (pass a value that does not begin "
                  "with '-', a path as './-name'; to allow it, the tool's "
                  "command can put \"--\" before {%s}, or its "
                  "\"option_args\" can list \"%s\")",
                  name, prog, name, name);
    set_pointer(err, ph->name, ph->len);
    return TG_EINVAL;
}

/* --------------------------------------------------------------- argv */

void tg__argv_free(char **argv)
{
    if (argv == NULL)
        return;
    for (char **p = argv; *p; p++)
        free(*p);
    free(argv);
}

bool tg__argv_has_placeholder(const json_t *tpl, const char *name)
{
    size_t i, len = strlen(name);
    json_t *el; /* borrowed */
    json_array_foreach(tpl, i, el)
    {
        placeholder ph;
        if (json_is_string(el) &&
            parse_placeholder(json_string_value(el), json_string_length(el),
                              &ph) &&
            ph.len == len && memcmp(ph.name, name, len) == 0)
            return true;
    }
    return false;
}

int tg__argv_expand(const json_t *tpl, const json_t *args,
                    const json_t *option_args, char ***argv_out,
                    const char **keyword, tg_error *err)
{
    int rc = 0;
    size_t n = json_array_size(tpl), k = 0;
    char **argv = calloc(n + 1, sizeof *argv);
    const char *why = "required";
    bool operands = false; /* a literal "--" came before */
    tg__buf b;
    tg__buf_init(&b, 0);
    *argv_out = NULL;
    if (argv == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    json_t *empty = NULL; /* new ref */
    if (!json_is_object(args)) {
        /* no arguments at all: every placeholder is absent */
        if ((empty = json_object()) == NULL) {
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
            goto fail;
        }
        args = empty;
    }

    for (size_t i = 0; i < n; i++) {
        json_t *el = json_array_get(tpl, i); /* borrowed */
        if (!json_is_string(el)) {
            rc = tg__error_set(err, TG_EINVAL,
                               "argv template element %zu is not a string", i);
            goto fail;
        }
        const char *s = json_string_value(el);
        placeholder ph;
        if (!parse_placeholder(s, json_string_length(el), &ph)) {
            if ((argv[k] = strdup(s)) == NULL) {
                rc = tg__error_set(err, TG_ENOMEM, "out of memory");
                goto fail;
            }
            k++;
            operands = operands || strcmp(s, "--") == 0;
            continue;
        }
        char name[256];
        const json_t *v = lookup(args, &ph, name, sizeof name); /* borrowed */
        if (v == NULL) {
            if (ph.optional)
                continue;
            rc = missing(err, &ph, "the command line");
            goto fail;
        }
        if (json_is_string(v) &&
            strlen(json_string_value(v)) != json_string_length(v)) {
            /* execve would cut the element at the NUL: refuse instead */
            rc = tg__error_set(err, TG_EINVAL,
                               "argument '%s' contains a NUL byte and cannot "
                               "be a command-line argument",
                               name);
            set_pointer(err, ph.name, ph.len);
            why = "nul";
            goto fail;
        }
        b.len = 0;
        if ((rc = put_value(&b, v)) != 0) {
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
            goto fail;
        }
        if (b.len > 0 && b.data[0] == '-' && !operands &&
            !listed(option_args, name)) {
            rc = option_refused(err, &ph, name,
                                json_string_value(json_array_get(tpl, 0)));
            why = "option";
            goto fail;
        }
        if ((argv[k] = tg__buf_take(&b)) == NULL) {
            rc = tg__error_set(err, TG_ENOMEM, "out of memory");
            goto fail;
        }
        k++;
    }
    json_decref(empty);
    *argv_out = argv;
    return 0;
fail:
    if (keyword != NULL)
        *keyword = why;
    json_decref(empty);
    tg__buf_cleanup(&b);
    tg__argv_free(argv);
    return rc;
}

/* -------------------------------------------------------------- stdin */

int tg__stdin_expand(const char *tpl, const json_t *args, tg__buf *out,
                     tg_error *err)
{
    int rc = 0;
    json_t *empty = NULL; /* new ref */
    if (!json_is_object(args)) {
        if ((empty = json_object()) == NULL)
            return tg__error_set(err, TG_ENOMEM, "out of memory");
        args = empty;
    }
    const char *p = tpl;
    while (*p) {
        const char *open = strchr(p, '{');
        if (open == NULL) {
            rc = tg__buf_puts(out, p);
            break;
        }
        const char *close = strchr(open + 1, '}');
        placeholder ph;
        if (close == NULL) {
            rc = tg__buf_puts(out, p);
            break;
        }
        /* the innermost "{...}" starting at the last '{' before close */
        const char *inner = open;
        for (const char *q = open + 1; q < close; q++) {
            if (*q == '{')
                inner = q;
        }
        if ((rc = tg__buf_append(out, p, (size_t)(inner - p))) != 0)
            break;
        if (!parse_placeholder(inner, (size_t)(close - inner) + 1, &ph)) {
            rc = tg__buf_append(out, inner, (size_t)(close - inner) + 1);
            p = close + 1;
            if (rc)
                break;
            continue;
        }
        char name[256];
        const json_t *v = lookup(args, &ph, name, sizeof name); /* borrowed */
        if (v == NULL) {
            if (!ph.optional) {
                rc = missing(err, &ph, "the standard input");
                goto fail;
            }
        } else if ((rc = put_value(out, v)) != 0) {
            break;
        }
        p = close + 1;
    }
    if (rc == TG_ELIMIT) {
        rc = tg__error_set(err, TG_ELIMIT,
                           "the standard input exceeds its limit of %zu bytes",
                           out->limit);
    } else if (rc) {
        rc = tg__error_set(err, TG_ENOMEM, "out of memory");
    }
fail:
    json_decref(empty);
    return rc;
}
