/* SPDX-License-Identifier: MIT */
/*
 * sandbox.h - the sandbox every command tool (and `shell`) runs in, decided
 * once per runtime (sandbox.c):
 *   - bubblewrap: a user, PID, IPC, UTS and (unless the tool says "network":
 *     true) network namespace; the root file system read-only, the workspace
 *     read-write, a private /tmp, /run and the credential directories of
 *     sandbox.hide masked, toolgate's own files hidden (state.h), no
 * capabilities, a new session, dead with its parent. The processes are limited
 * in number per call (RLIMIT_NPROC in the call's own user namespace, or as root
 * the PID namespace's pid_max);
 *   - rlimits: where bubblewrap cannot run (said once, loudly) or with
 *     sandbox.mode "off": the resource limits only;
 *   - none: a tool with "sandbox": false.
 * The environment is allowlisted in every case (tg__proc_env_tool).
 *
 * Threading: a tg__sandbox is written by tg__sandbox_init and the doctor on
 * the runtime's thread and only read afterwards, also by the spawning pool
 * threads (tg__sandbox_handshake).
 */
#ifndef TG_EXEC_SANDBOX_H
#define TG_EXEC_SANDBOX_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"
#include "process.h"
#include "registry.h"
#include "state.h"

/* How one call's process is confined (the result's decisions.sandbox). */
typedef enum tg__sbx_level {
    TG__SBX_NONE = 0, /* "none" */
    TG__SBX_RLIMITS,  /* "rlimits" */
    TG__SBX_BWRAP,    /* "bubblewrap": one per call (cold) */
    TG__SBX_WARM      /* "bubblewrap-warm": a warm sandbox (warm.h) */
} tg__sbx_level;

/* Whether sandbox.mode "auto" and "bubblewrap" use the warm sandbox. */
#define TG__SANDBOX_WARM_DEFAULT 1

#define TG__SBX_MAX_LIMITS 6

typedef struct tg__sandbox {
    int mode;             /* TG__SANDBOX_* of the configuration */
    bool needed;          /* some tool of the registry runs sandboxed */
    bool probed;          /* bubblewrap was tried (tg__sandbox_probe) */
    bool bwrap_ok;        /* ...and works: calls run in it */
    bool root;            /* euid 0: the kernel does not count RLIMIT_NPROC */
    bool pidmax;          /* root on Linux >= 6.14: pid_max per PID namespace
                             (cleared when the probe could not set it) */
    char bwrap[PATH_MAX]; /* the program, "" when not found */
    char version[64];     /* "bubblewrap 0.8.0" */
    char error[512];      /* why bubblewrap is not used, "" */
    char nproc_note[384]; /* how the process limit is enforced */
    char pidmax_why[160]; /* why pid_max is not set per namespace, "" */
    tg__rlimit limits[TG__SBX_MAX_LIMITS]; /* set in every sandboxed child */
    size_t nlimits;
    rlim_t nproc; /* sandbox.rlimits.nproc, 0: none */
    /* bubblewrap options after the workspace's bind (the masked paths of
     * sandbox.hide, then from post[state_from] on what keeps toolgate's
     * own files from tools, state.h): owned strings, NULL-ended */
    char **post;
    size_t npost;
    size_t state_from;
    bool hide_run;         /* /run exists: a tmpfs covers it */
    char *warning;         /* said once by the embedder (tg_runtime_warning) */
    struct tg__warm *warm; /* the warm sandboxes (warm.h); NULL: none */
    char warm_error[256];  /* why there are none, "" */
} tg__sandbox;

/* Fills sb from the configuration: the limits, bubblewrap's options, and,
 * when a tool of reg runs sandboxed and the mode is not "off", the probe.
 * `state` (may be NULL: none) is toolgate's own files, hidden, masked and
 * pinned as state.h says; what it names must exist by now (the journal and
 * the spool are open). `envp` is the allowlisted environment tools get
 * (bubblewrap is looked up in its PATH unless sandbox.bwrap names it; "~/"
 * of sandbox.hide is its HOME). Fails with TG_ECONFIG when sandbox.mode is
 * "bubblewrap" and it cannot run, TG_ENOMEM. */
int tg__sandbox_init(tg__sandbox *sb, const tg_config *cfg,
                     const tg__registry *reg, const tg__state *state,
                     char *const *envp, tg_error *err);
/* Runs the probe now if it has not run (the doctor). */
void tg__sandbox_probe(tg__sandbox *sb, const tg_config *cfg,
                       char *const *envp);
void tg__sandbox_cleanup(tg__sandbox *sb);

/* How `tool` runs. */
tg__sbx_level tg__sandbox_level(const tg__sandbox *sb, const tg__tool *tool);
/* True when `tool` (NULL: the runtime's default) runs in a warm sandbox
 * where bubblewrap works; *why (may be NULL) says why, a static or sb's
 * string. */
bool tg__sandbox_warm_wanted(const tg__sandbox *sb, const tg__tool *tool,
                             const char **why);
/* True when a warm sandbox can run `prog` (resolved) in `cwd` (NULL: the
 * workspace): both are seen there as the host sees them (the cwd in the
 * workspace, the program not under the private /tmp or /run unless in the
 * workspace). Else the call gets a bubblewrap of its own (cold), which
 * binds them. */
bool tg__sandbox_warm_fits(const tg_config *cfg, const char *cwd,
                           const char *prog);
/* "bubblewrap", "bubblewrap-warm", "rlimits" or "none". */
const char *tg__sandbox_level_name(tg__sbx_level level);

/* The argv that runs `prog` (resolved) with argv[1..] in bubblewrap for a
 * call in `cwd`, with its --info-fd 3 and --block-fd 4: a new array of
 * borrowed strings (sb, cfg, cwd, prog and argv must outlive it; the path
 * of a program's npm package tree, bound beside a program under /tmp, is
 * kept in the array's own allocation), freed with free(). NULL on out of
 * memory. */
char **tg__sandbox_argv(const tg__sandbox *sb, const tg_config *cfg,
                        const tg__tool *tool, const char *cwd, const char *prog,
                        char *const *argv);

/* The argv of the bubblewrap of a warm sandbox (warm.c): the same
 * namespaces and mounts as a call's, the workspace its cwd, `prog` run as
 * the namespace's PID 1 with argv[1..]; --info-fd 3, --block-fd 4. Freed
 * with free(); NULL on out of memory. */
char **tg__sandbox_warm_argv(const tg__sandbox *sb, const tg_config *cfg,
                             bool network, const char *prog, char *const *argv);

/* The limits of a child at `level` into out[TG__SBX_MAX_LIMITS + 1]; returns
 * their number. Without bubblewrap RLIMIT_NPROC counts every process of the
 * user, so it is set to the processes running now plus nproc. */
size_t tg__sandbox_limits(const tg__sandbox *sb, tg__sbx_level level,
                          tg__rlimit *out);

/* On the spawning thread, right after bubblewrap started: reads the
 * sandbox's first process from info_fd, limits its processes (prlimit
 * RLIMIT_NPROC in its user namespace, or as root the PID namespace's
 * pid_max), then lets it run by writing to block_fd (a socket). Sets
 * *inner (0 when bubblewrap failed before making it: it exits with its own
 * message) and *inner_pidfd (-1 when unknown). Returns 0, or -1 with why[]
 * filled when the limit could not be set: the caller kills the sandbox. */
int tg__sandbox_handshake(const tg__sandbox *sb, int info_fd, int block_fd,
                          pid_t *inner, int *inner_pidfd, char *why,
                          size_t whylen);
/* The same with the process limit `nproc` instead of sb's (a warm
 * sandbox's, shared by its calls). */
int tg__sandbox_handshake_n(const tg__sandbox *sb, rlim_t nproc, int info_fd,
                            int block_fd, pid_t *inner, int *inner_pidfd,
                            char *why, size_t whylen);

#endif
