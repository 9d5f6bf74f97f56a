/* SPDX-License-Identifier: MIT */
/*
 * warm.h - the runtime's side of the warm sandbox (warm.c): one bubblewrap
 * per profile kept running with toolgate-sandboxd inside (src/sandboxd/),
 * which runs each call as a fork + exec under a per-call reaper. A profile
 * is what differs between sandboxes of one runtime: the tool's "network"
 * and the call's caller id (calls of different callers never share one);
 * the workspace, sandbox.hide and toolgate's own files are the runtime's.
 *
 * Threading: the pool is shared by the spawning threads (a mutex); a
 * call's control socket belongs to its call.
 */
#ifndef TG_EXEC_WARM_H
#define TG_EXEC_WARM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "process.h"

typedef struct tg__warm tg__warm;
typedef struct tg__warm_helper tg__warm_helper;
struct tg__sandbox;
struct tg_config;
struct tg__watchdog;

/* A new pool whose sandboxes end after idle_ms unused, or NULL (out of
 * memory, or the helper cannot be put in a memfd: *why says). Free with
 * tg__warm_free, which ends every sandbox it holds. */
tg__warm *tg__warm_new(int64_t idle_ms, char *why, size_t whylen);
void tg__warm_free(tg__warm *w);

/* How many sandboxes the pool holds now (the doctor, tests). */
size_t tg__warm_count(tg__warm *w);

/* One call to run in a warm sandbox (all borrowed). */
typedef struct tg__warm_call {
    const char *path; /* resolved program, seen the same inside */
    char *const *argv;
    char *const *envp;
    const char *cwd; /* under the workspace */
    int fd_in, fd_out, fd_err;
    const tg__rlimit *limits;
    size_t nlimits;
    bool network;
    const char *caller; /* NULL: none */
} tg__warm_call;

/* Sends the call to its profile's sandbox (any thread; starts the sandbox
 * when there is none or it died). Returns 0 with *ctl (the call's control
 * socket, the caller's to close) and *h (a reference released with
 * tg__warm_release once the call is over): whether the command could
 * start is read later (tg__warm_read_exit). Returns -2 with why[] when the
 * sandbox could not be made or reached (*stage and *errnum unused). */
int tg__warm_spawn(const struct tg__sandbox *sb, const struct tg_config *cfg,
                   const struct tg__watchdog *watch, const tg__warm_call *wc,
                   int *ctl, tg__warm_helper **h, int *stage, int *errnum,
                   char *why, size_t whylen);
void tg__warm_release(const struct tg__sandbox *sb, tg__warm_helper *h);

/* Takes h out of the pool (any thread; h stays the caller's reference, to
 * release): the next call of its profile starts a new sandbox. For a call
 * whose reaper went away under it: the sandbox may be ending (its helper
 * killed: the kernel tears the namespace down for a while before the
 * helper's exit shows, and a call sent meanwhile would be lost), or a
 * call of the profile killed that reaper. */
void tg__warm_forget(const struct tg__sandbox *sb, tg__warm_helper *h);

/* Asks the call's reaper to send signo to the command's process group, or
 * with SIGKILL to end everything the call started. */
void tg__warm_signal(int ctl, int signo);

/* Reads the call's end from ctl (non-blocking): 1 with *status (a wait
 * status) when it exited, 2 with *stage and *errnum (TG__SPAWN_STAGE_*)
 * when the command could not start inside, 0 when the sandbox ended first
 * (the call was interrupted), -1 when nothing is there yet. */
int tg__warm_read_exit(int ctl, int *status, int *stage, int *errnum);

#endif
