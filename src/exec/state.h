/* SPDX-License-Identifier: MIT */
/*
 * state.h - toolgate's own files against its tools (state.c). The journal
 * (with its -wal, -shm and -journal companions), the artifact store, the
 * configuration file and the HMAC key are toolgate's; nothing a tool does
 * may change, move, replace or remove them, nor read what other calls
 * left in them. Decided once per runtime, before the journal is opened:
 *   - where each lies against the workspace. Inside it, the journal and the
 *     spool need directories of their own (toolgate hides them whole from
 *     sandboxed tools; a journal directly in the workspace, or a spool that
 *     is the workspace or holds it, is a configuration error, since no
 *     sandbox can keep a tool from creating the files SQLite would read
 *     beside a journal). The workspace's .toolgate is always toolgate's
 *     (made here when missing, so that no tool can prepare one for a later
 *     run);
 *   - that no path to them passes through a symbolic link inside the
 *     workspace (a tool could point it elsewhere before the next run);
 *   - what the sandbox does (sandbox.c): hidden directories (an empty
 *     read-only tmpfs over each: a mount point cannot be renamed or
 *     removed), masked files (/dev/null over each), and the directories
 *     between the workspace and them bound onto themselves so that they
 *     cannot be renamed either;
 *   - what the built-in file tools refuse (by device and inode: see
 *     registry/builtin/workspace.c).
 *
 * Threading: written by tg__state_init on the runtime's thread, only read
 * afterwards (also by handler threads).
 */
#ifndef TG_EXEC_STATE_H
#define TG_EXEC_STATE_H

#include <stddef.h>

#include "config.h"

typedef struct tg__state {
    /* Each list is absolute real paths, owned, NULL-ended (never NULL once
     * initialised). */
    char **hide;   /* directories no sandboxed tool sees into */
    char **mask;   /* files masked in the sandbox (those that exist) */
    char **pin;    /* directories between the workspace and a hidden
                      directory or a masked file, parents first */
    char **refuse; /* the hidden directories and masked files inside the
                      workspace: what the built-in file tools refuse */
    size_t nhide, nmask, npin, nrefuse;
} tg__state;

/* Places toolgate's files of cfg (see above) into st. Fails with
 * TG_ECONFIG (err names the file, the key in err's pointer) for a journal
 * directly in the workspace, a spool that is the workspace or holds it, or
 * a path through a symlink inside the workspace; TG_ENOMEM. On failure st
 * holds nothing to clean up. */
int tg__state_init(tg__state *st, const tg_config *cfg, tg_error *err);
/* Frees the lists; st is left zeroed (a zeroed st is fine to clean up). */
void tg__state_cleanup(tg__state *st);

/* 1 when `path` lies strictly beneath one of st's hidden directories (or
 * is one, with `or_equal`). */
int tg__state_hidden(const tg__state *st, const char *path, int or_equal);

#endif
