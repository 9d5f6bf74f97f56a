/* SPDX-License-Identifier: MIT */
/*
 * pin.c - pinning of remote tool definitions (pin.h): the definition and
 * its checksum, the verdict on each tool of a served set against the
 * pinned set (names looked up in hash tables: a server may list 10,000
 * tools), the reason a held tool gives (which members changed and the
 * first JSON pointer where they differ), and the line diff for
 * `mcp accept`.
 */
#include "pin.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "hashmap.h"
#include "jcs.h"

/* The members of a tool object that make its definition, sorted as JCS
 * sorts them. */
static const char *const members[] = {"annotations",  "description",
                                      "inputSchema",  "name",
                                      "outputSchema", "title"};
#define N_MEMBERS (sizeof members / sizeof members[0])
#define DIFF_CONTEXT 3
/* The most cells of the common-subsequence table (4 bytes each) between
 * the common head and tail of two definitions; past it the middle is
 * shown as removed, then added. */
#define DIFF_MAX_CELLS 4000000

static int oom(tg_error *err)
{
    return tg__error_set(err, TG_ENOMEM, "out of memory");
}

/* The object of the definition members of tool (new ref), NULL on OOM. */
static json_t *definition_object(const json_t *tool, int shape)
{
    json_t *o = json_object(); /* new ref */
    for (size_t i = 0; o != NULL && i < N_MEMBERS; i++) {
        json_t *v = json_object_get(tool, members[i]); /* borrowed */
        if (v == NULL || (shape && strcmp(members[i], "name") == 0))
            continue;
        if (json_object_set(o, members[i], v) != 0) {
            json_decref(o);
            o = NULL;
        }
    }
    return o;
}

/* JCS text and checksum of obj. */
static int canon(const json_t *obj, char **text, char checksum[TG_CHECKSUM_MAX],
                 tg_error *err)
{
    tg__buf b;
    char hex[65];
    tg__buf_init(&b, 0);
    int rc = tg__jcs_write(obj, &b);
    if (rc != 0) {
        tg__buf_cleanup(&b);
        return rc == TG_ENOMEM ? oom(err)
                               : tg__error_set(err, rc,
                                               "a tool definition has no "
                                               "canonical form (a number "
                                               "JSON cannot hold)");
    }
    const char *s = tg__buf_cstr(&b);
    if (tg__sha256_hex(s, b.len, hex) != 0) {
        tg__buf_cleanup(&b);
        return tg__error_set(err, TG_EINTERNAL, "SHA-256 failed");
    }
    snprintf(checksum, TG_CHECKSUM_MAX, "sha256:%s", hex);
    if (text != NULL && (*text = tg__buf_take(&b)) == NULL)
        return oom(err);
    tg__buf_cleanup(&b);
    return 0;
}

int tg__pin_definition(const json_t *tool, int shape, char **text,
                       char checksum[TG_CHECKSUM_MAX], tg_error *err)
{
    if (text != NULL)
        *text = NULL;
    if (!json_is_object(tool) || !json_is_string(json_object_get(tool, "name")))
        return tg__error_set(err, TG_EINVAL,
                             "a tool definition must be an object with a "
                             "string \"name\"");
    json_t *o = definition_object(tool, shape); /* new ref */
    if (o == NULL)
        return oom(err);
    int rc = canon(o, text, checksum, err);
    json_decref(o);
    return rc;
}

/* The shape checksum of a pinned definition's JCS text; "" when it is
 * not a JSON object (then nothing matches it). */
static int shape_of_text(const char *def, char checksum[TG_CHECKSUM_MAX],
                         tg_error *err)
{
    checksum[0] = '\0';
    json_t *v = def ? json_loads(def, 0, NULL) : NULL; /* new ref */
    if (!json_is_object(v)) {
        json_decref(v);
        return 0;
    }
    json_object_del(v, "name");
    int rc = canon(v, NULL, checksum, err);
    json_decref(v);
    return rc;
}

/* Appends to p the pointer of the first place where a and b differ (they
 * must differ). */
static int first_difference(const json_t *a, const json_t *b, tg__buf *p)
{
    if (json_is_object(a) && json_is_object(b)) {
        const char *k;
        json_t *va; /* borrowed */
        json_object_foreach((json_t *)a, k, va)
        {
            json_t *vb = json_object_get(b, k); /* borrowed */
            if (vb == NULL)
                return tg__buf_put_pointer_token(p, k, strlen(k));
            if (!json_equal(va, vb)) {
                int rc = tg__buf_put_pointer_token(p, k, strlen(k));
                return rc ? rc : first_difference(va, vb, p);
            }
        }
        json_object_foreach((json_t *)b, k, va)
        {
            if (json_object_get(a, k) == NULL)
                return tg__buf_put_pointer_token(p, k, strlen(k));
        }
        return 0;
    }
    if (json_is_array(a) && json_is_array(b)) {
        size_t na = json_array_size(a), nb = json_array_size(b);
        for (size_t i = 0; i < na || i < nb; i++) {
            json_t *va = json_array_get(a, i), *vb = json_array_get(b, i);
            if (va != NULL && vb != NULL && json_equal(va, vb))
                continue;
            int rc = tg__buf_printf(p, "/%zu", i);
            return rc || va == NULL || vb == NULL ? rc
                                                  : first_difference(va, vb, p);
        }
    }
    return 0;
}

/* "the definition of T changed since it was pinned (OLD -> NEW): MEMBERS;
 * first difference at POINTER". */
static char *change_reason(const char *tool, const char *pinned_def,
                           const char *pinned_sum, const json_t *served_obj,
                           const char *served_sum)
{
    tg__buf b, p;
    tg__buf_init(&b, 0);
    tg__buf_init(&p, 0);
    json_t *old =
        json_loads(pinned_def ? pinned_def : "{}", 0, NULL); /* new ref */
    int rc = tg__buf_printf(&b,
                            "the definition of '%s' changed since it was "
                            "pinned (%.19s... -> %.19s...)",
                            tool, pinned_sum, served_sum);
    if (json_is_object(old)) {
        const char *sep = ": ";
        for (size_t i = 0; rc == 0 && i < N_MEMBERS; i++) {
            json_t *a = json_object_get(old, members[i]);
            json_t *c = json_object_get(served_obj, members[i]);
            if ((a == NULL) != (c == NULL) ||
                (a != NULL && !json_equal(a, c))) {
                rc = tg__buf_printf(&b, "%s%s%s", sep, members[i],
                                    a == NULL   ? " added"
                                    : c == NULL ? " removed"
                                                : "");
                sep = ", ";
            }
        }
        if (rc == 0 && (rc = first_difference(old, served_obj, &p)) == 0 &&
            p.len > 0)
            rc = tg__buf_printf(&b, "; first difference at %s",
                                tg__buf_cstr(&p));
    }
    rc |= tg__buf_puts(&b, "; accept it with 'toolgate mcp accept'");
    json_decref(old);
    tg__buf_cleanup(&p);
    if (rc != 0) {
        tg__buf_cleanup(&b);
        return NULL;
    }
    return tg__buf_take(&b);
}

static char *dup_or_null(const char *s, int *nomem)
{
    if (s == NULL)
        return NULL;
    char *d = strdup(s);
    if (d == NULL)
        *nomem = 1;
    return d;
}

static char *printf_dup(int *nomem, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static char *printf_dup(int *nomem, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n < 0 ? NULL : malloc((size_t)n + 1);
    if (s == NULL) {
        *nomem = 1;
        return NULL;
    }
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void tg__pin_verdicts_free(tg__pin_verdict *v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++) {
        free(v[i].tool);
        free(v[i].checksum);
        free(v[i].definition);
        free(v[i].pinned_checksum);
        free(v[i].other);
        free(v[i].reason);
    }
    free(v);
}

const char *tg__pin_kind_name(tg__pin_kind kind)
{
    switch (kind) {
    case TG_PIN_SAME:
        return "pinned";
    case TG_PIN_NEW:
        return "new";
    case TG_PIN_CHANGED:
        return "changed";
    case TG_PIN_RENAMED:
        return "renamed";
    case TG_PIN_REMOVED:
        return "removed";
    }
    return "?";
}

int tg__pin_compare(const tg__pin_entry *pinned, size_t n_pinned,
                    const json_t *served, int strict, tg__pin_verdict **out,
                    size_t *n_out, tg_error *err)
{
    tg__hmap by_name = {0}, served_names = {0}, by_shape = {0};
    size_t n_served = json_array_size(served);
    tg__pin_verdict *v = NULL;
    /* seen[i]: pinned[i] is served; renamed_to[i]: the verdict of the
     * tool that carries its definition now, SIZE_MAX none */
    unsigned char *seen = NULL;
    size_t *renamed_to = NULL;
    char(*shapes)[TG_CHECKSUM_MAX] = NULL; /* of removed pinned tools */
    size_t n = 0;
    int rc = 0, nomem = 0;
    *out = NULL;
    *n_out = 0;
    if (!json_is_array(served))
        return tg__error_set(err, TG_EINVAL,
                             "the served tools are not an "
                             "array");
    if ((v = calloc(n_served + n_pinned + 1, sizeof *v)) == NULL ||
        (seen = calloc(n_pinned + 1, 1)) == NULL ||
        (renamed_to = malloc((n_pinned + 1) * sizeof *renamed_to)) == NULL ||
        (shapes = calloc(n_pinned + 1, sizeof *shapes)) == NULL ||
        tg__hmap_reserve(&by_name, n_pinned) != 0 ||
        tg__hmap_reserve(&served_names, n_served) != 0) {
        rc = oom(err);
        goto fail;
    }
    for (size_t i = 0; i < n_pinned; i++) {
        tg__hentry *e;
        renamed_to[i] = SIZE_MAX;
        if (tg__hmap_put_str(&by_name, pinned[i].tool, &e) != 0) {
            rc = oom(err);
            goto fail;
        }
        e->val.idx = i;
    }
    /* The served tools: same, changed, or new for now. */
    for (size_t i = 0; i < n_served; i++) {
        const json_t *tool = json_array_get(served, i); /* borrowed */
        const char *name = json_string_value(json_object_get(tool, "name"));
        char sum[TG_CHECKSUM_MAX];
        tg__hentry *e;
        if (name == NULL) {
            rc = tg__error_set(err, TG_EINVAL,
                               "served tool %zu has no string \"name\"", i);
            goto fail;
        }
        if (tg__hmap_find_str(&served_names, name) != NULL) {
            rc = tg__error_set(err, TG_EINVAL, "tool '%s' is served twice",
                               name);
            goto fail;
        }
        if (tg__hmap_put_str(&served_names, name, &e) != 0) {
            rc = oom(err);
            goto fail;
        }
        tg__pin_verdict *x = &v[n++];
        if ((rc = tg__pin_definition(tool, 0, &x->definition, sum, err)) != 0)
            goto fail;
        x->tool = dup_or_null(name, &nomem);
        x->checksum = dup_or_null(sum, &nomem);
        tg__hentry *p = tg__hmap_find_str(&by_name, name);
        if (p == NULL) {
            x->kind = TG_PIN_NEW;
            continue;
        }
        const tg__pin_entry *pin = &pinned[p->val.idx];
        seen[p->val.idx] = 1;
        if (pin->checksum != NULL && strcmp(pin->checksum, sum) == 0) {
            x->kind = TG_PIN_SAME;
            continue;
        }
        json_t *obj = definition_object(tool, 0); /* new ref */
        x->kind = TG_PIN_CHANGED;
        x->held = 1;
        x->pinned_checksum = dup_or_null(pin->checksum, &nomem);
        if (obj == NULL ||
            (x->reason = change_reason(name, pin->definition,
                                       pin->checksum ? pin->checksum : "?", obj,
                                       sum)) == NULL)
            nomem = 1;
        json_decref(obj);
        if (nomem) {
            rc = oom(err);
            goto fail;
        }
    }
    /* Pinned tools no longer served, by the shape of their definition. */
    for (size_t i = 0; i < n_pinned; i++) {
        tg__hentry *e;
        if (seen[i])
            continue;
        if ((rc = shape_of_text(pinned[i].definition, shapes[i], err)) != 0)
            goto fail;
        /* Two removed tools of one shape: the first takes a rename. */
        if (shapes[i][0] == '\0' ||
            tg__hmap_find_str(&by_shape, shapes[i]) != NULL)
            continue;
        if (tg__hmap_put_str(&by_shape, shapes[i], &e) != 0) {
            rc = oom(err);
            goto fail;
        }
        e->val.idx = i;
    }
    size_t served_count = n;
    for (size_t i = 0; i < served_count; i++) {
        tg__pin_verdict *x = &v[i];
        if (x->kind != TG_PIN_NEW)
            continue;
        char shape[TG_CHECKSUM_MAX];
        const json_t *tool = json_array_get(served, i);
        if ((rc = tg__pin_definition(tool, 1, NULL, shape, err)) != 0)
            goto fail;
        tg__hentry *e = tg__hmap_find_str(&by_shape, shape);
        if (e != NULL && renamed_to[e->val.idx] == SIZE_MAX) {
            const tg__pin_entry *old = &pinned[e->val.idx];
            renamed_to[e->val.idx] = i;
            x->kind = TG_PIN_RENAMED;
            x->held = 1;
            x->other = dup_or_null(old->tool, &nomem);
            x->pinned_checksum = dup_or_null(old->checksum, &nomem);
            x->reason = printf_dup(&nomem,
                                   "'%s' is served with the definition "
                                   "pinned as '%s', which is no longer "
                                   "served: a rename; accept it with "
                                   "'toolgate mcp accept'",
                                   x->tool, old->tool);
        } else if (strict && n_pinned > 0) {
            x->held = 1;
            x->reason = printf_dup(&nomem,
                                   "'%s' is new on a server whose tools are "
                                   "pinned, and pinning is strict: accept "
                                   "it with 'toolgate mcp accept'",
                                   x->tool);
        }
        if (nomem) {
            rc = oom(err);
            goto fail;
        }
    }
    for (size_t i = 0; i < n_pinned; i++) {
        if (seen[i])
            continue;
        tg__pin_verdict *x = &v[n++];
        x->kind = TG_PIN_REMOVED;
        x->tool = dup_or_null(pinned[i].tool, &nomem);
        x->pinned_checksum = dup_or_null(pinned[i].checksum, &nomem);
        if (renamed_to[i] != SIZE_MAX) {
            x->other = dup_or_null(v[renamed_to[i]].tool, &nomem);
            x->reason = printf_dup(&nomem,
                                   "'%s' is no longer served; its definition "
                                   "is served as '%s'",
                                   pinned[i].tool, x->other ? x->other : "?");
        } else {
            x->reason =
                printf_dup(&nomem, "'%s' is no longer served", pinned[i].tool);
        }
        if (nomem) {
            rc = oom(err);
            goto fail;
        }
    }
    if (nomem) {
        rc = oom(err);
        goto fail;
    }
    *out = v;
    *n_out = n;
    v = NULL;
fail:
    tg__pin_verdicts_free(v, n);
    free(seen);
    free(renamed_to);
    free(shapes);
    tg__hmap_cleanup(&by_name);
    tg__hmap_cleanup(&served_names);
    tg__hmap_cleanup(&by_shape);
    return rc;
}

/* ------------------------------------------------------------ diff */

/* Appends the JCS text s pretty-printed: a newline and two spaces per level
 * after each '{', '[' and ',' and before each '}' and ']' (an empty object
 * or array stays "{}" / "[]"), a space after each ':'. Strings are copied
 * as they are (JCS escapes every control character). */
static int pretty(const char *s, tg__buf *b)
{
    int depth = 0, rc = 0, in_string = 0;
    for (const char *c = s; *c && rc == 0; c++) {
        if (in_string) {
            rc = tg__buf_append(b, c, 1);
            if (*c == '\\' && c[1] != '\0')
                rc |= tg__buf_append(b, ++c, 1);
            else if (*c == '"')
                in_string = 0;
            continue;
        }
        switch (*c) {
        case '"':
            in_string = 1;
            rc = tg__buf_append(b, c, 1);
            break;
        case '{':
        case '[':
            if (c[1] == (*c == '{' ? '}' : ']')) {
                rc = tg__buf_append(b, c, 2);
                c++;
                break;
            }
            depth++;
            rc = tg__buf_printf(b, "%c\n%*s", *c, 2 * depth, "");
            break;
        case '}':
        case ']':
            depth--;
            rc = tg__buf_printf(b, "\n%*s%c", 2 * (depth > 0 ? depth : 0), "",
                                *c);
            break;
        case ',':
            rc = tg__buf_printf(b, ",\n%*s", 2 * depth, "");
            break;
        case ':':
            rc = tg__buf_puts(b, ": ");
            break;
        default:
            rc = tg__buf_append(b, c, 1);
        }
    }
    return rc;
}

struct lines {
    char *text; /* the pretty text, NULs at line ends */
    char **line;
    size_t n;
};

static int split(const char *def, struct lines *l)
{
    tg__buf b;
    memset(l, 0, sizeof *l);
    if (def == NULL)
        return 0;
    tg__buf_init(&b, 0);
    if (pretty(def, &b) != 0 || (l->text = tg__buf_take(&b)) == NULL) {
        tg__buf_cleanup(&b);
        return TG_ENOMEM;
    }
    size_t n = 1;
    for (const char *c = l->text; *c; c++)
        n += *c == '\n';
    if ((l->line = malloc(n * sizeof *l->line)) == NULL)
        return TG_ENOMEM;
    char *c = l->text;
    l->line[l->n++] = c;
    for (; *c; c++)
        if (*c == '\n') {
            *c = '\0';
            l->line[l->n++] = c + 1;
        }
    return 0;
}

static void lines_free(struct lines *l)
{
    free(l->text);
    free(l->line);
}

/* The edit script between a and b: ops[k] is ' ' (a line of both), '-'
 * (a only) or '+' (b only). The common head and tail are matched first;
 * the rest through the table of longest common subsequences, or, when
 * that table would pass DIFF_MAX_CELLS, as all removed then all added. */
static int edit_script(const struct lines *a, const struct lines *b, char **ops,
                       size_t *n_ops)
{
    size_t head = 0, tail = 0, k = 0;
    while (head < a->n && head < b->n &&
           strcmp(a->line[head], b->line[head]) == 0)
        head++;
    while (tail < a->n - head && tail < b->n - head &&
           strcmp(a->line[a->n - 1 - tail], b->line[b->n - 1 - tail]) == 0)
        tail++;
    size_t na = a->n - head - tail, nb = b->n - head - tail;
    char *o = malloc(a->n + b->n + 1);
    if (o == NULL)
        return TG_ENOMEM;
    memset(o, ' ', head);
    k = head;
    unsigned *t = NULL;
    size_t w = nb + 1;
    if (na > 0 && nb > 0 && (na + 1) * w <= DIFF_MAX_CELLS) {
        if ((t = calloc((na + 1) * w, sizeof *t)) == NULL) {
            free(o);
            return TG_ENOMEM;
        }
        char *const *la = a->line + head, *const *lb = b->line + head;
        for (size_t i = na; i-- > 0;)
            for (size_t j = nb; j-- > 0;)
                t[i * w + j] = strcmp(la[i], lb[j]) == 0
                                   ? t[(i + 1) * w + j + 1] + 1
                               : t[(i + 1) * w + j] >= t[i * w + j + 1]
                                   ? t[(i + 1) * w + j]
                                   : t[i * w + j + 1];
        size_t i = 0, j = 0;
        while (i < na || j < nb) {
            if (i < na && j < nb && strcmp(la[i], lb[j]) == 0) {
                o[k++] = ' ';
                i++;
                j++;
            } else if (i < na &&
                       (j == nb || t[(i + 1) * w + j] >= t[i * w + j + 1])) {
                /* removed lines before added ones, as diff(1) shows */
                o[k++] = '-';
                i++;
            } else {
                o[k++] = '+';
                j++;
            }
        }
        free(t);
    } else {
        memset(o + k, '-', na);
        k += na;
        memset(o + k, '+', nb);
        k += nb;
    }
    memset(o + k, ' ', tail);
    k += tail;
    *ops = o;
    *n_ops = k;
    return 0;
}

/* Writes the changed lines of the script with DIFF_CONTEXT lines of
 * context around each, in hunks. */
static int write_hunks(const struct lines *a, const struct lines *b,
                       const char *ops, size_t n_ops, tg__buf *out)
{
    unsigned char *shown = calloc(n_ops + 1, 1);
    int rc = 0;
    if (shown == NULL)
        return TG_ENOMEM;
    for (size_t k = 0; k < n_ops; k++) {
        if (ops[k] == ' ')
            continue;
        size_t from = k > DIFF_CONTEXT ? k - DIFF_CONTEXT : 0;
        size_t to = k + DIFF_CONTEXT < n_ops ? k + DIFF_CONTEXT : n_ops - 1;
        memset(shown + from, 1, to - from + 1);
    }
    size_t i = 0, j = 0;
    for (size_t k = 0; k < n_ops && rc == 0; k++) {
        if (shown[k] && (k == 0 || !shown[k - 1]))
            rc = tg__buf_printf(out, "@@ line %zu @@\n", j + 1);
        if (rc == 0 && shown[k])
            rc = tg__buf_printf(out, "%c %s\n", ops[k],
                                ops[k] == '+' ? b->line[j] : a->line[i]);
        i += ops[k] != '+';
        j += ops[k] != '-';
    }
    free(shown);
    return rc;
}

int tg__pin_diff(const char *old_def, const char *new_def, char **out,
                 tg_error *err)
{
    struct lines a = {0}, b = {0};
    char *ops = NULL;
    size_t n_ops = 0;
    tg__buf text;
    int rc;
    *out = NULL;
    tg__buf_init(&text, 0);
    if ((rc = split(old_def, &a)) != 0 ||
        (rc = split(new_def ? new_def : "", &b)) != 0)
        goto done;
    if (new_def == NULL)
        b.n = 0;
    if ((rc = edit_script(&a, &b, &ops, &n_ops)) == 0) {
        rc = write_hunks(&a, &b, ops, n_ops, &text);
    }
    if (rc == 0 && (*out = tg__buf_take(&text)) == NULL)
        rc = TG_ENOMEM;
done:
    free(ops);
    lines_free(&a);
    lines_free(&b);
    tg__buf_cleanup(&text);
    return rc == 0 ? 0 : oom(err);
}
