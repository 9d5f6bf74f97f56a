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

typedef struct tg__watchdog {
    int fd;         /* the watchdog's socket, -1: none */
    pid_t pid;      /* the watchdog, -1: none */
    int32_t *slots; /* running tool groups, shared with the watchdog */
} tg__watchdog;

/* Forks the watchdog. Returns 0, or TG_ENOMEM / TG_EIO / TG_ESPAWN with err
 * filled (w is then stopped). */
int tg__watchdog_start(tg__watchdog *w, tg_error *err);
/* Records a tool group that started, or is done (any thread, lock-free).
 * A watchdog that is not running ignores them. */
void tg__watchdog_add(const tg__watchdog *w, pid_t pgid);
void tg__watchdog_remove(const tg__watchdog *w, pid_t pgid);
/* Ends the watchdog once no group is held; safe on one never started. */
void tg__watchdog_stop(tg__watchdog *w);

#endif
