/* SPDX-License-Identifier: MIT */
/*
 * watchdog.h - the runtime's watchdog (watchdog.c): a forked process that
 * kills every tool group still running when the runtime ends, even by
 * SIGKILL. The runtime starts and stops it; whatever spawns a tool group
 * (the command source, hooks) records the group while it runs.
 */
#ifndef TG_EXEC_WATCHDOG_H
#define TG_EXEC_WATCHDOG_H

#include <stdint.h>
#include <sys/types.h>

#include "error.h"

typedef struct tg__watchdog_proc tg__watchdog_proc;

typedef struct tg__watchdog {
    int32_t *slots;          /* running tool groups, shared with the watchdog */
    tg__watchdog_proc *proc; /* the process, forked with the first group */
} tg__watchdog;

/* Makes the table (w zeroed before: a runtime's calloc). The process itself
 * is forked before the first tool group is spawned, so a runtime that only
 * runs in-process tools has none. Returns 0, or TG_ENOMEM with err filled
 * (w is then stopped). */
int tg__watchdog_start(tg__watchdog *w, tg_error *err);
/* Records a tool group that started, or is done (any thread, lock-free once
 * the watchdog runs). The first add forks the watchdog; when that fork
 * fails, groups are not recorded (their leaders still die with toolgate:
 * PR_SET_PDEATHSIG) and no later add tries again. */
void tg__watchdog_add(const tg__watchdog *w, pid_t pgid);
/* Forks the watchdog if it does not run yet (once, any thread): callers
 * spawning a tool group call it first, so that no group is ever running
 * before a watchdog exists to kill it if toolgate dies. */
void tg__watchdog_ready(const tg__watchdog *w);
void tg__watchdog_remove(const tg__watchdog *w, pid_t pgid);
/* Ends the watchdog once no group is held; safe on one never started or
 * zeroed. */
void tg__watchdog_stop(tg__watchdog *w);

#endif
