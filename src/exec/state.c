/* SPDX-License-Identifier: MIT */
/*
 * state.c - where toolgate's own files lie against the workspace, and what
 * keeps tools away from them (state.h).
 *
 * Every path is judged by what it resolves to, never by its text: a
 * configured path is walked component by component, a symbolic link among
 * its components that lies in the workspace is refused (tools write there:
 * a link swapped between two runs would hand the next one a journal of the
 * tool's making), and the rest is placed by its real path, or by the real
 * path its missing components will have once created (the journal and the
 * spool create their directories when they open, after this).
 */
#include "state.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "policy.h"

/* The workspace's directory that is toolgate's whatever the configuration
 * says (the defaults put the journal and the spool there). */
#define RESERVED_DIR ".toolgate"

/* ------------------------------------------------------------ lists */

/* Appends a copy of s to a NULL-ended list (once). */
static int list_add(char ***list, size_t *n, const char *s)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*list)[i], s) == 0)
            return 0;
    char **a = realloc(*list, (*n + 2) * sizeof *a);
    if (a == NULL)
        return TG_ENOMEM;
    *list = a;
    a[*n + 1] = NULL;
    if ((a[*n] = strdup(s)) == NULL)
        return TG_ENOMEM;
    (*n)++;
    return 0;
}

static void list_free(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

/* Drops the entries that lie strictly beneath another entry: whatever
 * covers a directory covers them. */
static void list_prune_nested(char **list, size_t *n)
{
    /* Judged on the whole list first, then compacted: an entry is freed
     * only once nothing compares with it any more. */
    for (size_t i = 0; i < *n; i++)
        for (size_t j = 0; j < *n; j++)
            if (j != i && list[j] != NULL && list[j][0] != '\0' &&
                strcmp(list[i], list[j]) != 0 &&
                tg__path_under(list[i], list[j])) {
                list[i][0] = '\0'; /* marked: beneath list[j] */
                break;
            }
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        if (list[i][0] == '\0')
            free(list[i]);
        else
            list[k++] = list[i];
    }
    list[k] = NULL;
    *n = k;
}

void tg__state_cleanup(tg__state *st)
{
    list_free(st->hide, st->nhide);
    list_free(st->mask, st->nmask);
    list_free(st->pin, st->npin);
    list_free(st->refuse, st->nrefuse);
    memset(st, 0, sizeof *st);
}

int tg__state_hidden(const tg__state *st, const char *path, int or_equal)
{
    for (size_t i = 0; i < st->nhide; i++)
        if (tg__path_under(path, st->hide[i]) &&
            (or_equal || strcmp(path, st->hide[i]) != 0))
            return 1;
    return 0;
}

/* ------------------------------------------------------------ placing */

/* The real path `path` (absolute) has, or will have once its missing
 * components are created, into out (TG__POLICY_PATH_MAX bytes). Fails with
 * TG_ECONFIG when one of its components is a symbolic link lying in the
 * workspace `ws`. `what` names the file for messages, `pointer` the key. */
static int place(const char *ws, const char *path, const char *what,
                 const char *pointer, char *out, tg_error *err)
{
    char prefix[TG__POLICY_PATH_MAX], parent[TG__POLICY_PATH_MAX];
    size_t len = strlen(path);
    if (len >= sizeof prefix)
        return tg__error_set(err, TG_ECONFIG, "%s %.200s...: path too long",
                             what, path);
    for (size_t i = 1; i <= len; i++) {
        if ((path[i] != '/' && path[i] != '\0') || path[i - 1] == '/')
            continue;
        memcpy(prefix, path, i);
        prefix[i] = '\0';
        struct stat st;
        if (lstat(prefix, &st) != 0)
            break; /* the rest does not exist yet: it is created plain */
        if (!S_ISLNK(st.st_mode))
            continue;
        /* The directory the link lies in decides who could change it. */
        size_t k = i;
        while (k > 1 && prefix[k - 1] != '/')
            k--;
        memcpy(parent, prefix, k);
        parent[k] = '\0';
        if (tg__policy_resolve(NULL, parent, out, NULL) == 0 &&
            tg__path_under(out, ws)) {
            int rc = tg__error_set(
                err, TG_ECONFIG,
                "%s %s is reached through the symbolic link %s inside the "
                "workspace, which a tool could point elsewhere; name it by "
                "its real path",
                what, path, prefix);
            if (pointer != NULL)
                tg__error_pointer(err, pointer);
            return rc;
        }
    }
    tg_error why = {0};
    int rc = tg__policy_resolve(NULL, path, out, &why);
    if (rc != 0) {
        rc = tg__error_set(err, TG_ECONFIG, "%s: %s", what, why.message);
        if (pointer != NULL)
            tg__error_pointer(err, pointer);
    }
    return rc;
}

/* A directory (`dir`) or file of toolgate's strictly inside the workspace:
 * hidden or masked, refused to the file tools, and every directory between
 * the workspace and it pinned. */
static int add_inside(tg__state *st, const char *ws, const char *path, int dir)
{
    char a[TG__POLICY_PATH_MAX];
    size_t wl = strlen(ws), len = strlen(path);
    int rc = 0;
    for (size_t i = wl + 1; rc == 0 && i < len; i++) {
        if (path[i] != '/')
            continue;
        memcpy(a, path, i);
        a[i] = '\0';
        rc = list_add(&st->pin, &st->npin, a);
    }
    if (rc == 0)
        rc = dir ? list_add(&st->hide, &st->nhide, path)
                 : list_add(&st->mask, &st->nmask, path);
    if (rc == 0)
        rc = list_add(&st->refuse, &st->nrefuse, path);
    return rc;
}

static int place_journal(tg__state *st, const char *ws, const char *journal,
                         tg_error *err)
{
    char real[TG__POLICY_PATH_MAX], dir[TG__POLICY_PATH_MAX];
    int rc = place(ws, journal, "journal", "/journal", real, err);
    if (rc != 0)
        return rc;
    snprintf(dir, sizeof dir, "%s", real);
    char *slash = strrchr(dir, '/');
    if (slash != NULL)
        slash[slash == dir ? 1 : 0] = '\0';
    if (strcmp(dir, ws) == 0) {
        rc = tg__error_set(
            err, TG_ECONFIG,
            "journal %s lies directly in the workspace %s: no sandbox can keep "
            "a tool from creating the files SQLite reads beside it "
            "(%s-journal, %s-wal); give it a directory of its own, such as "
            "%s/" RESERVED_DIR "/journal.db",
            journal, ws, real, real, ws);
        tg__error_pointer(err, "/journal");
        return rc;
    }
    if (tg__path_under(dir, ws))
        return add_inside(st, ws, dir, 1);
    /* Outside the workspace tools cannot write it; masked, they cannot
     * read other calls' arguments and results in it either. */
    static const char *const sfx[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        char p[TG__POLICY_PATH_MAX + 8];
        snprintf(p, sizeof p, "%s%s", real, sfx[i]);
        if ((rc = list_add(&st->mask, &st->nmask, p)) != 0)
            return rc;
    }
    return 0;
}

static int place_spool(tg__state *st, const char *ws, const char *spool,
                       tg_error *err)
{
    char real[TG__POLICY_PATH_MAX];
    int rc = place(ws, spool, "spool.dir", "/spool/dir", real, err);
    if (rc != 0)
        return rc;
    if (tg__path_under(ws, real)) {
        rc = tg__error_set(err, TG_ECONFIG,
                           "spool.dir %s is the workspace %s or holds it: "
                           "tools could write into the artifact store; give "
                           "it a directory of its own, such as %s/" RESERVED_DIR
                           "/artifacts",
                           spool, ws, ws);
        tg__error_pointer(err, "/spool/dir");
        return rc;
    }
    if (tg__path_under(real, ws))
        return add_inside(st, ws, real, 1);
    return list_add(&st->hide, &st->nhide, real);
}

/* The configuration file or the HMAC key: masked wherever it lies. */
static int place_file(tg__state *st, const char *ws, const char *file,
                      const char *what, tg_error *err)
{
    char real[TG__POLICY_PATH_MAX];
    int rc = place(ws, file, what, NULL, real, err);
    if (rc != 0)
        return rc;
    if (tg__path_under(real, ws) && strcmp(real, ws) != 0)
        return add_inside(st, ws, real, 0);
    return list_add(&st->mask, &st->nmask, real);
}

int tg__state_init(tg__state *st, const tg_config *cfg, tg_error *err)
{
    memset(st, 0, sizeof *st);
    const char *ws = cfg->workspace;
    int rc = TG_ENOMEM;
    st->hide = calloc(1, sizeof *st->hide);
    st->mask = calloc(1, sizeof *st->mask);
    st->pin = calloc(1, sizeof *st->pin);
    st->refuse = calloc(1, sizeof *st->refuse);
    if (!st->hide || !st->mask || !st->pin || !st->refuse)
        goto fail;
    if (cfg->journal != NULL &&
        (rc = place_journal(st, ws, cfg->journal, err)) != 0)
        goto fail;
    if (cfg->spool_dir != NULL &&
        (rc = place_spool(st, ws, cfg->spool_dir, err)) != 0)
        goto fail;
    /* The workspace's .toolgate is made when missing: with the journal and
     * the spool off, a tool could otherwise prepare one, a database in it,
     * for a later run to open. (A symlink there is left to the run that
     * uses it: place() refuses it then.) */
    char reserved[TG__POLICY_PATH_MAX];
    struct stat s;
    int n = snprintf(reserved, sizeof reserved, "%s/" RESERVED_DIR, ws);
    if (n > 0 && (size_t)n < sizeof reserved) {
        /* (not made in a read-only workspace: tools cannot either) */
        bool have = lstat(reserved, &s) == 0;
        if (!have && errno == ENOENT && mkdir(reserved, 0700) == 0)
            have = lstat(reserved, &s) == 0;
        if (have && S_ISDIR(s.st_mode) &&
            (rc = add_inside(st, ws, reserved, 1)) != 0)
            goto fail;
    }
    if (cfg->file != NULL &&
        (rc = place_file(st, ws, cfg->file, "the configuration file", err)) !=
            0)
        goto fail;
    if (cfg->hmac_key_file != NULL &&
        (rc = place_file(st, ws, cfg->hmac_key_file, "the HMAC key file",
                         err)) != 0)
        goto fail;
    list_prune_nested(st->hide, &st->nhide);
    list_prune_nested(st->refuse, &st->nrefuse);
    return 0;
fail:
    if (rc == TG_ENOMEM) /* the lists' allocations say nothing themselves */
        tg__error_set(err, TG_ENOMEM, "out of memory");
    tg__state_cleanup(st);
    return rc;
}
