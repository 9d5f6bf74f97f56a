/* SPDX-License-Identifier: MIT */
/*
 * report.c - the violations a validation collects (schema.h), and the two
 * shapes they leave in: one sentence for the model and a details array for
 * the INVALID_ARGUMENTS error result; and how a string that may hold
 * U+0000 is written into them.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"

int tg__schema_show(const char *s, size_t n, tg__buf *out)
{
    int rc = 0;
    size_t run = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (s[i] != '\0')
            continue;
        rc = tg__buf_append(out, s + run, i - run);
        if (rc == 0)
            rc = tg__buf_puts(out, "\\u0000");
        run = i + 1;
    }
    return rc ? rc : tg__buf_append(out, s + run, n - run);
}

char *tg__schema_show_dup(const char *s, size_t n)
{
    tg__buf b;
    tg__buf_init(&b, 0);
    if (tg__schema_show(s, n, &b) != 0) {
        tg__buf_cleanup(&b);
        return NULL;
    }
    return tg__buf_take(&b);
}

void tg__schema_report_cleanup(tg__schema_report *report)
{
    if (report == NULL)
        return;
    for (size_t i = 0; i < report->n; i++) {
        free(report->v[i].path);
        free(report->v[i].keyword);
        free(report->v[i].message);
    }
    free(report->v);
    report->v = NULL;
    report->n = report->cap = 0;
    report->truncated = 0;
}

char *tg__schema_report_message(const tg__schema_report *report)
{
    if (report == NULL || report->n == 0)
        return NULL;
    tg__buf b;
    tg__buf_init(&b, 0);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < report->n; i++) {
        if (i > 0)
            rc = tg__buf_puts(&b, "; ");
        if (rc == 0)
            rc = tg__buf_puts(&b, report->v[i].message);
    }
    if (rc == 0 && report->truncated)
        rc = tg__buf_puts(&b, "; and more");
    if (rc != 0) {
        tg__buf_cleanup(&b);
        return NULL;
    }
    return tg__buf_take(&b);
}

json_t *tg__schema_report_details(const tg__schema_report *report)
{
    json_t *arr = json_array(); /* new ref */
    for (size_t i = 0; arr != NULL && report != NULL && i < report->n; i++) {
        const tg__schema_violation *v = &report->v[i];
        json_t *o = json_pack("{s:s, s:s, s:s}", "path", v->path, "keyword",
                              v->keyword, "message", v->message); /* new ref */
        if (o == NULL || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}
