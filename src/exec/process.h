/* SPDX-License-Identifier: MIT */
/*
 * process.h - starting a subprocess the way toolgate needs and libuv's
 * uv_spawn cannot: in its own process group, with PR_SET_PDEATHSIG so it
 * dies with the runtime even when the runtime is SIGKILLed, default signal
 * dispositions, an empty signal mask, an explicit environment and cwd, and
 * the program looked up in the child's PATH (not the parent's).
 *
 * Everything that allocates happens before the fork; the child only makes
 * async-signal-safe system calls, so spawning is safe in a threaded process.
 */
#ifndef TG_EXEC_PROCESS_H
#define TG_EXEC_PROCESS_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

/* What went wrong in the child before the program ran. */
enum {
    TG__SPAWN_STAGE_NONE = 0,
    TG__SPAWN_STAGE_CHDIR = 1,
    TG__SPAWN_STAGE_EXEC = 2,
    TG__SPAWN_STAGE_SETUP = 3
};

typedef struct tg__spawn {
    const char *path;          /* resolved program (tg__proc_resolve) */
    char *const *argv;         /* NULL-terminated */
    char *const *envp;         /* NULL-terminated */
    const char *cwd;           /* NULL: the parent's */
    int fd_in, fd_out, fd_err; /* become the child's 0, 1, 2 */
} tg__spawn;

/* Starts the process. Returns 0 with *pid set once the program runs; on a
 * failure before exec returns -1 with *stage (TG__SPAWN_STAGE_*) and *errnum
 * (an errno value) describing it, the child already reaped. */
int tg__proc_spawn(const tg__spawn *sp, pid_t *pid, int *stage, int *errnum);

/* Resolves argv0 the way execvp would, with PATH `path_env` (NULL: a default)
 * and relative PATH entries taken from `cwd`: a name with a '/' is used as
 * is; else the first executable regular file in PATH. Writes the path into
 * out[outsz]. Returns 0 or an errno value (ENOENT, EACCES, ENAMETOOLONG). */
int tg__proc_resolve(const char *argv0, const char *path_env, const char *cwd,
                     char *out, size_t outsz);

/* Builds the child's environment: `base` ("NAME=value", NULL-terminated,
 * borrowed) overridden by `tool_env` then `ctx_env` (objects name -> string,
 * borrowed, may be NULL; other values and names with '=' are skipped). When
 * both objects are empty, *out is `base` itself and *owned NULL; else *out is
 * a new array freed by free(*owned). Returns 0 or ENOMEM. */
int tg__proc_env(char **base, const json_t *tool_env, const json_t *ctx_env,
                 char ***out, void **owned);

/* The value of NAME in an environment array, or NULL. */
const char *tg__proc_getenv(char *const *envp, const char *name);

/* Writes the name of a signal ("SIGKILL" for 9, "SIGRTMIN+2", "signal 99"
 * when unknown) into out[32] and returns out. */
const char *tg__signal_name(int signum, char out[32]);

#endif
