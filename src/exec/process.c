/* SPDX-License-Identifier: MIT */
/*
 * process.c - spawning a command tool's process (process.h).
 *
 * The child is made with vfork(): the parent thread is suspended until the
 * child has exec'd (or failed), which makes a spawn cost about what
 * posix_spawn costs, and is safe because the child writes nothing but its
 * own stack frames and the kernel state of the new process. Signals are
 * blocked across the vfork so no handler of the parent can run in the child;
 * the child resets every disposition to the default before it unblocks them.
 * Define TG_SPAWN_FORK to use fork() instead (the child code is the same).
 */
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* The kernel's struct sigaction for rt_sigaction (x86-64, arm64 and the
 * other architectures of the generic layout), and the highest signal. */
struct kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    unsigned long mask;
};
#define TG__MAX_SIGNAL 64

typedef struct child_report {
    int stage;
    int err;
} child_report;

/* In the child: tells the parent what failed, then exits. */
static void __attribute__((noreturn)) child_fail(int fd, int stage, int err)
{
    child_report r = {stage, err};
    ssize_t n;
    do {
        n = write(fd, &r, sizeof r);
    } while (n < 0 && errno == EINTR);
    _exit(127);
}

/* In the child, between vfork and exec: async-signal-safe calls only, no
 * allocation, no writes to memory shared with the parent. */
static void __attribute__((noreturn))
child_main(const tg__spawn *sp, int errfd, pid_t parent)
{
    /* Own process group, so the whole tree can be signalled at once. */
    if (setpgid(0, 0) != 0)
        child_fail(errfd, TG__SPAWN_STAGE_SETUP, errno);
    /* Die with the runtime even when it is SIGKILLed... */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        child_fail(errfd, TG__SPAWN_STAGE_SETUP, errno);
    /* ...including when it died before the line above ran. */
    if (getppid() != parent)
        _exit(127);

    /* Default dispositions: exec resets caught signals by itself, but not
     * ignored ones, and a handler must not run here before exec. This goes
     * through the raw system call because glibc's sigaction refuses the two
     * signals it reserves (32 and 33), and a parent that inherited them
     * ignored would hand that on to every tool. */
    for (int s = 1; s <= TG__MAX_SIGNAL; s++) {
        struct kernel_sigaction cur;
        if (s == SIGKILL || s == SIGSTOP)
            continue;
        if (syscall(SYS_rt_sigaction, s, NULL, &cur, sizeof cur.mask) == 0 &&
            cur.handler != SIG_DFL) {
            struct kernel_sigaction dfl = {SIG_DFL, 0, NULL, 0};
            (void)syscall(SYS_rt_sigaction, s, &dfl, NULL, sizeof dfl.mask);
        }
    }

    if (dup2(sp->fd_in, 0) < 0 || dup2(sp->fd_out, 1) < 0 ||
        dup2(sp->fd_err, 2) < 0)
        child_fail(errfd, TG__SPAWN_STAGE_SETUP, errno);
    /* Descriptors the host opened without O_CLOEXEC stay out of the tool.
     * Failure (old kernel) is not fatal. */
    (void)close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);

    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    if (sp->cwd != NULL && chdir(sp->cwd) != 0)
        child_fail(errfd, TG__SPAWN_STAGE_CHDIR, errno);
    execve(sp->path, sp->argv, sp->envp);
    child_fail(errfd, TG__SPAWN_STAGE_EXEC, errno);
}

/* The fork itself, apart so that nothing the parent reads afterwards lives
 * in a frame the vfork child runs on (the child never returns here). */
static pid_t __attribute__((noinline))
start_child(const tg__spawn *s, int errfd, pid_t parent)
{
#ifdef TG_SPAWN_FORK
    pid_t pid = fork();
#else
    pid_t pid = vfork();
#endif
    if (pid == 0)
        child_main(s, errfd, parent);
    return pid;
}

/* Moves fd above 2 so the child's dup2 calls cannot clobber one another.
 * Returns the fd to use and sets *tmp when a copy was made. */
static int high_fd(int fd, int *tmp)
{
    *tmp = -1;
    if (fd > 2)
        return fd;
    int c = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (c >= 0)
        *tmp = c;
    return c;
}

int tg__proc_spawn(const tg__spawn *sp, pid_t *pid_out, int *stage, int *errnum)
{
    tg__spawn s = *sp;
    int tin, tout, terr, ep[2];
    s.fd_in = high_fd(sp->fd_in, &tin);
    s.fd_out = high_fd(sp->fd_out, &tout);
    s.fd_err = high_fd(sp->fd_err, &terr);
    *stage = TG__SPAWN_STAGE_SETUP;
    *errnum = 0;
    int rc = -1;
    if (s.fd_in < 0 || s.fd_out < 0 || s.fd_err < 0) {
        *errnum = errno;
        goto out;
    }
    if (pipe2(ep, O_CLOEXEC) != 0) {
        *errnum = errno;
        goto out;
    }

    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = start_child(&s, ep[1], getpid());
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(ep[1]);
    if (pid < 0) {
        close(ep[0]);
        *errnum = saved;
        goto out;
    }
#ifdef TG_SPAWN_FORK
    /* Also from this side, so the group exists before we may signal it
     * (the child may not have run yet). EACCES once it has exec'd. With
     * vfork the child has done it before we get here. */
    (void)setpgid(pid, pid);
#endif

    child_report r;
    ssize_t n;
    do {
        n = read(ep[0], &r, sizeof r);
    } while (n < 0 && errno == EINTR);
    close(ep[0]);
    if (n == (ssize_t)sizeof r) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        *stage = r.stage;
        *errnum = r.err;
        goto out;
    }
    *pid_out = pid;
    *stage = TG__SPAWN_STAGE_NONE;
    rc = 0;
out:
    if (tin >= 0)
        close(tin);
    if (tout >= 0)
        close(tout);
    if (terr >= 0)
        close(terr);
    return rc;
}

int tg__proc_resolve(const char *argv0, const char *path_env, const char *cwd,
                     char *out, size_t outsz)
{
    if (argv0 == NULL || argv0[0] == '\0')
        return ENOENT;
    if (strchr(argv0, '/') != NULL) {
        if (strlen(argv0) >= outsz)
            return ENAMETOOLONG;
        memcpy(out, argv0, strlen(argv0) + 1);
        return 0;
    }
    if (path_env == NULL)
        path_env = "/usr/local/bin:/usr/bin:/bin";
    int err = ENOENT;
    const char *p = path_env;
    for (;;) {
        const char *end = strchrnul(p, ':');
        int dlen = (int)(end - p), n;
        /* Empty and relative entries name directories under the child's
         * cwd, as they would for execvp run there. */
        if (dlen == 0)
            n = snprintf(out, outsz, "%s/%s", cwd ? cwd : ".", argv0);
        else if (p[0] != '/' && cwd != NULL)
            n = snprintf(out, outsz, "%s/%.*s/%s", cwd, dlen, p, argv0);
        else
            n = snprintf(out, outsz, "%.*s/%s", dlen, p, argv0);
        if (n > 0 && (size_t)n < outsz) {
            struct stat st;
            if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
                if (faccessat(AT_FDCWD, out, X_OK, AT_EACCESS) == 0)
                    return 0;
                err = EACCES;
            }
        } else if (err == ENOENT) {
            err = ENAMETOOLONG;
        }
        if (*end == '\0')
            break;
        p = end + 1;
    }
    return err;
}

const char *tg__proc_getenv(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; envp && envp[i]; i++)
        if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
            return envp[i] + n + 1;
    return NULL;
}

static bool valid_name(const char *k)
{
    return k[0] != '\0' && strchr(k, '=') == NULL;
}

/* Bytes needed for the "k=v" entries of obj. */
static size_t env_bytes(const json_t *obj, size_t *count)
{
    const char *k;
    const json_t *v; /* borrowed */
    size_t total = 0;
    *count = 0;
    if (obj == NULL || !json_is_object(obj))
        return 0;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (!json_is_string(v) || !valid_name(k))
            continue;
        total += strlen(k) + 1 + strlen(json_string_value(v)) + 1;
        (*count)++;
    }
    return total;
}

static bool same_name(const char *entry, const char *k, size_t klen)
{
    return strncmp(entry, k, klen) == 0 && entry[klen] == '=';
}

/* Adds obj's entries to env[*n], replacing entries among the first `upto`
 * with the same name. */
static void env_merge(char **env, size_t *n, size_t upto, const json_t *obj,
                      char **store)
{
    const char *k;
    const json_t *v; /* borrowed */
    if (obj == NULL || !json_is_object(obj))
        return;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (!json_is_string(v) || !valid_name(k))
            continue;
        size_t kl = strlen(k), vl = strlen(json_string_value(v));
        char *e = *store;
        memcpy(e, k, kl);
        e[kl] = '=';
        memcpy(e + kl + 1, json_string_value(v), vl + 1);
        *store += kl + vl + 2;
        size_t i;
        for (i = 0; i < upto; i++)
            if (same_name(env[i], k, kl))
                break;
        if (i < upto)
            env[i] = e;
        else
            env[(*n)++] = e;
    }
}

int tg__proc_env(char **base, const json_t *tool_env, const json_t *ctx_env,
                 char ***out, void **owned)
{
    size_t nt, nc, nb = 0;
    size_t bytes = env_bytes(tool_env, &nt) + env_bytes(ctx_env, &nc);
    *owned = NULL;
    if (nt == 0 && nc == 0) {
        *out = base;
        return 0;
    }
    while (base && base[nb])
        nb++;
    size_t slots = nb + nt + nc + 1;
    char **env = malloc(slots * sizeof *env + bytes);
    if (env == NULL)
        return ENOMEM;
    char *store = (char *)(env + slots);
    size_t n = nb;
    for (size_t i = 0; i < nb; i++)
        env[i] = base[i];
    env_merge(env, &n, nb, tool_env, &store);
    /* The context's names are unique among themselves: compare them with
     * the base and the tool's entries only, which keeps this linear. */
    env_merge(env, &n, n, ctx_env, &store);
    env[n] = NULL;
    *out = env;
    *owned = env;
    return 0;
}

const char *tg__signal_name(int signum, char out[32])
{
    const char *abbrev = sigabbrev_np(signum);
    if (abbrev != NULL)
        snprintf(out, 32, "SIG%s", abbrev);
    else if (signum >= SIGRTMIN && signum <= SIGRTMAX)
        snprintf(out, 32, "SIGRTMIN+%d", signum - SIGRTMIN);
    else
        snprintf(out, 32, "signal %d", signum);
    return out;
}
