/* SPDX-License-Identifier: MIT */
/*
 * public.c - the artifact functions of toolgate.h (tg_spool_*,
 * tg_artifact_*): the same readers the artifact tools use, with JSON and
 * text crossing the API as malloc'd strings. `toolgate artifact` is built on
 * these alone.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

#define PUBLIC_CAP ((size_t)16 << 20)   /* bytes of one read, head or tail */
#define STORE_CHUNK ((size_t)256 << 10) /* bytes per read() of a store */

int tg_spool_open(const char *dir, unsigned flags, tg_spool **out,
                  tg_error *err)
{
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_spool_open needs out");
    return tg__spool_open(
        dir, 0, (flags & TG_SPOOL_NO_CREATE) ? TG__SPOOL_NO_CREATE : 0, out,
        err);
}

void tg_spool_free(tg_spool *sp)
{
    tg__spool_free(sp);
}

static int dump(json_t *v, char **out, tg_error *err) /* v: stolen */
{
    *out = json_dumps(v, JSON_COMPACT);
    json_decref(v);
    return *out ? 0 : tg__error_set(err, TG_ENOMEM, "out of memory");
}

int tg_artifact_list(tg_spool *sp, char **out, tg_error *err)
{
    json_t *arr = NULL; /* new ref */
    if (sp == NULL || out == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_artifact_list needs a spool");
    *out = NULL;
    int rc = tg__spool_list(sp, &arr, err);
    return rc ? rc : dump(arr, out, err);
}

int tg_artifact_stat(tg_spool *sp, const char *id, char **out, tg_error *err)
{
    json_t *s = NULL; /* new ref */
    if (sp == NULL || out == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_artifact_stat needs a spool");
    *out = NULL;
    int rc = tg__spool_stat(sp, id, &s, err);
    return rc ? rc : dump(s, out, err);
}

int tg_artifact_store(tg_spool *sp, int fd, char **out, tg_error *err)
{
    if (sp == NULL || out == NULL || fd < 0)
        return tg__error_set(err, TG_EINVAL,
                             "tg_artifact_store needs a spool and a file");
    *out = NULL;
    tg__spool_writer *w = NULL;
    int rc = tg__spool_writer_new(sp, 0, &w, err);
    if (rc)
        return rc;
    tg__spool_writer_set_force(w, true);
    char *buf = malloc(STORE_CHUNK);
    if (buf == NULL) {
        tg__spool_writer_abort(w);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }
    for (;;) {
        ssize_t n = read(fd, buf, STORE_CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = tg__error_set(err, TG_EIO, "cannot read the input: %s",
                               strerror(errno));
            break;
        }
        if (n == 0 ||
            (rc = tg__spool_writer_write(w, buf, (size_t)n, err)) != 0)
            break;
    }
    free(buf);
    if (rc != 0) {
        tg__spool_writer_abort(w);
        return rc;
    }
    tg__spool_outcome o;
    if ((rc = tg__spool_writer_finish(w, &o, err)) != 0)
        return rc;
    json_t *art = json_incref(o.artifact); /* new ref */
    tg__spool_outcome_cleanup(&o);
    return dump(art, out, err);
}

/* Hands a reader's bytes to the caller, NUL-terminated. */
static int give(tg__spool_text *t, char **out, size_t *out_len, tg_error *err)
{
    size_t n = t->text.len;
    *out = n ? tg__buf_take(&t->text) : strdup("");
    tg__spool_text_cleanup(t);
    if (*out == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    if (out_len)
        *out_len = n;
    return 0;
}

int tg_artifact_read(tg_spool *sp, const char *id, uint64_t offset,
                     size_t length, char **out, size_t *out_len, tg_error *err)
{
    tg__spool_text t;
    if (sp == NULL || out == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_artifact_read needs a spool");
    *out = NULL;
    int rc = tg__spool_read_bytes(sp, id, offset, length, PUBLIC_CAP, &t, err);
    return rc ? rc : give(&t, out, out_len, err);
}

int tg_artifact_head(tg_spool *sp, const char *id, uint64_t lines, char **out,
                     size_t *out_len, tg_error *err)
{
    tg__spool_text t;
    if (sp == NULL || out == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_artifact_head needs a spool");
    *out = NULL;
    int rc = tg__spool_head(sp, id, lines, PUBLIC_CAP, &t, err);
    return rc ? rc : give(&t, out, out_len, err);
}

int tg_artifact_tail(tg_spool *sp, const char *id, uint64_t lines, char **out,
                     size_t *out_len, tg_error *err)
{
    tg__spool_text t;
    if (sp == NULL || out == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_artifact_tail needs a spool");
    *out = NULL;
    int rc = tg__spool_tail(sp, id, lines, PUBLIC_CAP, &t, err);
    return rc ? rc : give(&t, out, out_len, err);
}

int tg_artifact_grep(tg_spool *sp, const char *id, const char *pattern,
                     const tg_artifact_grep_options *options, char **out,
                     tg_error *err)
{
    if (sp == NULL || out == NULL || pattern == NULL)
        return tg__error_set(err, TG_EINVAL,
                             "tg_artifact_grep needs a spool and a pattern");
    *out = NULL;
    tg_artifact_grep_options none = {0};
    const tg_artifact_grep_options *op = options ? options : &none;
    if (op->max_matches < 0 || op->before < 0 || op->after < 0)
        return tg__error_set(err, TG_EINVAL,
                             "grep options must not be negative");
    tg__spool_grep_opts o = {
        .pattern = pattern,
        .pattern_len = strlen(pattern),
        .ignore_case = op->ignore_case != 0,
        .count_only = op->count_only != 0,
        .before = (unsigned)op->before,
        .after = (unsigned)op->after,
        .max_matches = (uint64_t)op->max_matches,
        .line_cap = 4096,
        .result_cap = PUBLIC_CAP,
    };
    json_t *res = NULL; /* new ref */
    int rc = tg__spool_grep(sp, id, &o, &res, err);
    return rc ? rc : dump(res, out, err);
}
