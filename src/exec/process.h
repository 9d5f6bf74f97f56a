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
 * The child also sets the sandbox's resource limits (setrlimit) and can hand
 * up to four extra descriptors to the program as its fds 3 to 6
 * (bubblewrap's --info-fd and --block-fd, see sandbox.c; a warm sandbox's
 * socket and helper, warm.c).
 */
#ifndef TG_EXEC_PROCESS_H
#define TG_EXEC_PROCESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

/* What went wrong in the child before the program ran. */
enum {
    TG__SPAWN_STAGE_NONE = 0,
    TG__SPAWN_STAGE_CHDIR = 1,
    TG__SPAWN_STAGE_EXEC = 2,
    TG__SPAWN_STAGE_SETUP = 3
};

/* A resource limit the child sets (soft and hard) before exec. */
typedef struct tg__rlimit {
    int resource; /* RLIMIT_* */
    rlim_t value;
} tg__rlimit;

typedef struct tg__spawn {
    const char *path;          /* resolved program (tg__proc_resolve) */
    char *const *argv;         /* NULL-terminated */
    char *const *envp;         /* NULL-terminated */
    const char *cwd;           /* NULL: the parent's */
    int fd_in, fd_out, fd_err; /* become the child's 0, 1, 2 */
} tg__spawn;

/* What a sandboxed child is given too (tg__proc_spawn_ex). */
typedef struct tg__spawn_extra {
    const tg__rlimit *limits; /* nlimits limits, set in order */
    size_t nlimits;
    int nkeep;   /* 0 to 4: keep[i] becomes the child's fd 3 + i */
    int keep[4]; /* (inherited across exec, unlike every other fd) */
} tg__spawn_extra;

/* Starts the process. Returns 0 with *pid set once the program runs; on a
 * failure before exec returns -1 with *stage (TG__SPAWN_STAGE_*) and *errnum
 * (an errno value) describing it, the child already reaped. */
int tg__proc_spawn(const tg__spawn *sp, pid_t *pid, int *stage, int *errnum);
/* The same with resource limits and descriptors handed on (x may be NULL). */
int tg__proc_spawn_ex(const tg__spawn *sp, const tg__spawn_extra *x, pid_t *pid,
                      int *stage, int *errnum);
/* The same, and *pidfd gets a pidfd of the started child (O_CLOEXEC, the
 * caller's to close) made by the spawn itself, or -1 when the kernel gave
 * none (before Linux 5.2, or built with TG_SPAWN_FORK) or the spawn
 * failed. */
int tg__proc_spawn_pidfd(const tg__spawn *sp, const tg__spawn_extra *x,
                         pid_t *pid, int *pidfd, int *stage, int *errnum);

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

/* A command tool's environment (the sandbox's allowlist): `base` (the
 * allowlisted variables, "NAME=value", NULL-terminated, borrowed), then the
 * entries of `pass` (captured "NAME=value", may be NULL) whose name is in
 * `pass_names` (array of names, may be NULL), then `tool_env`, then
 * `ctx_env` (objects name -> string, may be NULL), each overriding the ones
 * before. A ctx_env name that looks like a secret (tg__env_secret_name) is
 * dropped unless the tool lists it in tool_env or pass_names. *out is a new
 * array freed by free(*owned) (or `base` itself with *owned NULL when
 * nothing was added). Returns 0 or ENOMEM. */
int tg__proc_env_tool(char **base, char **pass, const json_t *pass_names,
                      const json_t *tool_env, const json_t *ctx_env,
                      char ***out, void **owned);

/* True when an environment variable's name looks like it holds a secret:
 * it contains KEY, TOKEN, SECRET, PASSWORD, PASSWD or CREDENTIAL, in any
 * case. */
bool tg__env_secret_name(const char *name);

/* The value of NAME in an environment array, or NULL. */
const char *tg__proc_getenv(char *const *envp, const char *name);

/* Writes the name of a signal ("SIGKILL" for 9, "SIGRTMIN+2", "signal 99"
 * when unknown) into out[32] and returns out. */
const char *tg__signal_name(int signum, char out[32]);

#endif
